//! The OpenAPI schemas of this crate's types that cross the rm's REST API (feature `openapi`,
//! which only the rm's tests turn on): the MapReduce job a client submits
//! ([`MapReduceJob`], with its shipped files), `-reducer aggregate`'s answer
//! ([`AggregateAnswer`]) and ARIA's job profile a master may register (`yard-cluster`'s
//! `aria::Profile`, as `JobProfile`). Each is derived with utoipa from the type itself, so the
//! document cannot drift from what serde reads; `yard-wire`, which assembles the document, is
//! below this crate and cannot name them, so they reach it as [`bodies`] (`rm/tests/openapi.rs`
//! passes them to `yard_wire::openapi::document`).
//!
//! What the attributes cannot say from a constant is added here as keywords, from the same
//! constants the checks use ([`MapReduceJob::validate`]): a number out of these ranges is the
//! rm's 400 naming the field. Rules across fields (`maps` for `synthetic` only, `output` not
//! with `sharedScan`, …) are the field descriptions' to say and the server's to refuse.

use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use yard_cluster::aria;
use yard_wire::openapi::Bodies;

use crate::apps::aggregate::AggregateAnswer;
use crate::policy::PolicyKind;
use crate::submission::{
    APPS, MAX_ATTEMPTS, MAX_CONTAINERS, MAX_EACH, MAX_MORE_INPUTS, MAX_REDUCES, MapReduceJob,
};

/// The schemas, and what the rm holds their fields to.
pub fn bodies() -> Bodies {
    let mut schemas = Vec::new();
    named::<MapReduceJob>(&mut schemas);
    named::<aria::Profile>(&mut schemas);
    named::<AggregateAnswer>(&mut schemas);
    Bodies {
        schemas,
        constraints: constraints(),
    }
}

/// `T`'s schema and every schema it refers to.
fn named<T: ToSchema>(out: &mut Vec<(String, RefOr<Schema>)>) {
    out.push((T::name().into_owned(), T::schema()));
    T::schemas(out);
}

/// `app`: one of [`APPS`].
pub(crate) fn app() -> Schema {
    enumerated(&APPS, None, "The built-in application")
}

/// `policy`: a [`PolicyKind`] by its name, `dart` when absent.
pub(crate) fn policy() -> Schema {
    let names: Vec<&str> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
    enumerated(
        &names,
        Some(PolicyKind::Dart.name()),
        "The task policy: Dart (yard's), the paper's Dart and its variants, LATE, full (every \
         map, the exact answer), ARIA or pre-selected sampling",
    )
}

/// A string, one of `names`.
fn enumerated(names: &[&str], default: Option<&str>, description: &str) -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some(names.iter().copied()))
            .default(default.map(Value::from))
            .description(Some(description))
            .build(),
    )
}

/// The ranges [`MapReduceJob::validate`] (and the shipped files' and a profile's checks) hold
/// each field to, and the job's defaults, by schema and property.
fn constraints() -> Vec<(&'static str, &'static str, Value)> {
    let range = |min: f64, max: f64| json!({ "minimum": min, "maximum": max });
    let at_least_one = |max: u32| json!({ "minimum": 1, "maximum": max });
    let list = |max: usize| json!({ "minItems": 1, "maxItems": max });
    let job = "MapReduceJob";
    // What a job that leaves a field out gets: the defaults serde fills in.
    let d = MapReduceJob::new("wordcount", None);
    let mut all = vec![
        (job, "reduces", at_least_one(MAX_REDUCES)),
        (job, "reduces", json!({ "default": d.reduces })),
        // No default `seed`: the rm draws one for a job that leaves it out.
        (
            job,
            "memoryMb",
            json!({ "minimum": 1, "default": d.memory_mb }),
        ),
        (job, "sampleOnly", json!({ "default": d.sample_only })),
        (job, "sharedScan", json!({ "default": d.shared_scan })),
        (job, "guardSeconds", range(0.0, 3_600.0)),
        (job, "guardSeconds", json!({ "default": d.guard_seconds })),
        (job, "mapMinSeconds", range(0.0, 86_400.0)),
        (
            job,
            "mapMinSeconds",
            json!({ "default": d.map_min_seconds }),
        ),
        (job, "mapSeconds", range(0.0, 86_400.0)),
        (job, "reduceSeconds", range(0.0, 86_400.0)),
        (job, "maps", json!({ "minimum": 1 })),
        (job, "mapMaxAttempts", at_least_one(MAX_ATTEMPTS)),
        (job, "reduceMaxAttempts", at_least_one(MAX_ATTEMPTS)),
        (job, "maxContainers", at_least_one(MAX_CONTAINERS)),
        (job, "moreInputs", json!({ "maxItems": MAX_MORE_INPUTS })),
        (
            job,
            "output",
            json!({ "minLength": 1, "maxLength": 200, "pattern": "^[A-Za-z0-9_.-]{1,200}$" }),
        ),
        (
            "ShippedFile",
            "name",
            json!({ "minLength": 1, "maxLength": 255, "pattern": "^[^/]+$" }),
        ),
        ("AggregateAnswer", "processedFraction", range(0.0, 1.0)),
    ];
    for each in [
        "mapSecondsEach",
        "mapInputBytesEach",
        "mapOutputBytesEach",
        "reduceSecondsEach",
    ] {
        all.push((job, each, list(MAX_EACH)));
    }
    all.push((
        "Durations",
        "avg",
        json!({ "minimum": 0, "maximum": aria::MAX_SECONDS }),
    ));
    all.push((
        "Durations",
        "max",
        json!({ "minimum": 0, "maximum": aria::MAX_SECONDS }),
    ));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::streaming::ShippedFile;

    fn schemas() -> serde_json::Map<String, Value> {
        yard_wire::openapi::component_schemas(bodies())
    }

    #[test]
    fn the_job_schema_is_the_types_with_the_checks_ranges() {
        let all = schemas();
        let job = &all["MapReduceJob"];
        assert_eq!(job["required"], json!(["app"]), "{job}");
        assert_eq!(job["additionalProperties"], json!(false));
        let app = &job["properties"]["app"]["enum"];
        assert_eq!(app, &json!(APPS));
        let policies = job["properties"]["policy"]["enum"].as_array().unwrap();
        assert_eq!(policies.len(), PolicyKind::ALL.len());
        assert_eq!(job["properties"]["reduces"]["maximum"], json!(MAX_REDUCES));
        assert_eq!(job["properties"]["reduces"]["default"], json!(2));
        assert_eq!(job["properties"]["policy"]["default"], json!("dart"));
        // Every field serde reads is in the schema, and nothing else.
        let full = serde_json::to_value(MapReduceJob {
            input: Some("b".into()),
            more_inputs: vec!["c".into()],
            files: vec![ShippedFile::new("f", b"x", false)],
            map_max_attempts: Some(1),
            reduce_max_attempts: Some(1),
            params: [("k".to_owned(), "v".to_owned())].into(),
            sample_only: true,
            maps: Some(1),
            map_seconds: Some(1.0),
            map_output_bytes: Some(1),
            reduce_seconds: Some(1.0),
            map_seconds_each: Some(vec![1.0]),
            map_input_bytes_each: Some(vec![1]),
            map_output_bytes_each: Some(vec![1]),
            reduce_seconds_each: Some(vec![1.0]),
            trace: Some("t".into()),
            trace_job: Some("0".into()),
            time_scale: Some(1.0),
            hang_split: Some(0),
            max_containers: Some(1),
            shared_scan: true,
            output: Some("o".into()),
            ..MapReduceJob::new("wordcount", None)
        })
        .unwrap();
        let mut sent: Vec<&String> = full.as_object().unwrap().keys().collect();
        let mut documented: Vec<&String> = job["properties"].as_object().unwrap().keys().collect();
        sent.sort();
        documented.sort();
        assert_eq!(sent, documented);
    }

    #[test]
    fn aria_profile_and_the_aggregate_answer_are_documented_from_their_types() {
        let all = schemas();
        assert_eq!(all["JobProfile"]["required"], json!(["map"]));
        assert_eq!(
            all["Durations"]["properties"]["avg"]["maximum"],
            json!(aria::MAX_SECONDS)
        );
        let aggregate = &all["Aggregate"];
        assert_eq!(
            aggregate["properties"]["type"]["$ref"],
            json!("#/components/schemas/AggregateType")
        );
        assert!(all.contains_key("AggregateKind"), "{:?}", all.keys());
        assert!(all.contains_key("AggregateAnswer"));
        // A type alias (`aria::Seconds`) is its type, not a schema of its own.
        for primitive in ["f64", "Seconds", "u32", "String"] {
            assert!(!all.contains_key(primitive), "{primitive}");
        }
    }
}
