//! The rm's OpenAPI document (feature `openapi`), generated: every operation from the table in
//! [`paths`] (which route, its parameters, which wire type it reads and which it answers with,
//! by type, not by name), and every component schema from the wire types with utoipa, so
//! `rm/openapi.json` cannot drift from what the rm serializes and reads: `rm/tests/openapi.rs`
//! checks that the committed document is exactly [`document`] (and writes it with
//! `YARD_BLESS=1`), and `rm/tests/rest.rs` that its paths are the router's.
//!
//! Types of the crates above this one, which it cannot name (they depend on it), come in as
//! [`Bodies`]: their crates derive the schemas behind their own `openapi` feature and list
//! them (`yard_appmaster::openapi::bodies`: the MapReduce job, `MapReduceJob`, with ARIA's
//! `JobProfile` and `-reducer aggregate`'s `AggregateAnswer`), and the rm's test passes them
//! to [`document`]. That is the smallest design that derives them from the real types: moving
//! the job into `wire` would pull its checks, its policies' names and its applications' into
//! the message crate, and `wire` building them by hand is what `bodies.json` was.
//!
//! Still by hand, in `openapi/bodies.json` and the table, the request bodies the rm reads into
//! types of its own (`yard-rm`, which derives no schema: utoipa is not in its build), each
//! parsed by hand for Hadoop's sake or with checks of its own: Hadoop's submission
//! (`Submission`: its `am-container-spec` and tags take several shapes), a MapReduce
//! submission's envelope (`MapReduceSubmission`: `deadlineMs` or `deadlineInMs`, around the
//! generated `MapReduceJob`), `PUT …/state` (`NewState`), a master's registration (in the
//! table: `yard_rm::rest::MasterRegistration`, its `profile` the generated `JobProfile`) and
//! `auth/tokens`. The document is OpenAPI 3.0 and utoipa writes 3.1, so
//! [`component_schemas`] spells nullability the 3.0 way (`nullable`) and a serde-flattened
//! struct as one object; it adds what utoipa cannot take from a constant (the ranges of
//! `limits` and of a load sample).

use serde_json::{Map, Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::limits;
use crate::telemetry::{
    MAX_CORES, MAX_LOAD, MAX_MEMORY_BYTES, MAX_PROCESSES, MAX_RATE_BYTES_PER_S,
    MAX_TREE_CPU_PERCENT, MAX_VIRTUAL_BYTES,
};

mod paths;

/// The schemas of types defined in crates above `wire`, generated there: each type's utoipa
/// schema (and those it refers to), and what the rm holds their fields to that utoipa cannot
/// take from a constant (`(schema, property, keywords)`, as [`constraints`]).
#[derive(Default)]
pub struct Bodies {
    pub schemas: Vec<(String, RefOr<Schema>)>,
    pub constraints: Vec<(&'static str, &'static str, Value)>,
}

/// The rm's OpenAPI 3.0 document: what `rm/openapi.json` holds and `GET
/// /ws/v1/yard/openapi.json` serves, with `bodies` from the crates above this one.
pub fn document(bodies: Bodies) -> Value {
    let mut schemas = component_schemas(bodies);
    let bodies: Map<String, Value> =
        serde_json::from_str(include_str!("openapi/bodies.json")).expect("bodies.json is JSON");
    for (name, schema) in bodies {
        let twice = schemas.insert(name.clone(), schema).is_some();
        assert!(!twice, "{name} is both generated and in bodies.json");
    }
    let mut paths = Map::new();
    for op in paths::operations() {
        let item = paths.entry(op.path).or_insert_with(|| json!({}));
        let twice = item
            .as_object_mut()
            .and_then(|ops| ops.insert(op.method.into(), Value::Object(op.operation)))
            .is_some();
        assert!(!twice, "{} {} is in the table twice", op.method, op.path);
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "yard resource manager",
            "version": env!("CARGO_PKG_VERSION"),
            "description": description(),
        },
        "paths": paths,
        "components": {
            "responses": refusals(),
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A yard token: `yard auth token` prints the caller's.",
                }
            },
        },
        "security": [{ "bearer": [] }],
    })
}

/// The document's description: the rules every route keeps, with `limits`' ranges.
fn description() -> String {
    use limits::*;
    format!(
        "Hadoop-compatible client routes under /ws/v1/cluster (Hadoop's paths and JSON field names) and yard's own protocols under /ws/v1/yard. Every refusal is a 4xx saying what to fix: on Hadoop's routes (/ws/v1/cluster…) in YARN's {{\"RemoteException\": {{\"exception\", \"message\", \"javaClassName\"}}}} shape plus yard's \"detail\", on yard's own as {{\"error\", \"detail\"}}. Answers are JSON only: a request whose Accept header takes no JSON gets a 406 (YARN would answer XML). Every route but GET /ws/v1/cluster/info, GET /ws/v1/yard/health and this document needs `Authorization: Bearer <token>` (401 without a valid one, 403 for a caller that does not own what it acts on: a user its applications and datasets, a master its own application's current attempt, a node itself, an admin everything). Routes that change state answer only after the change is committed; 503 when it cannot be. Numbers out of their documented range are 400 naming the field: node memoryMb 1..={NODE_MAX_MEMORY_MB}, vcores 1..={NODE_MAX_VCORES}; container memoryMb 1..={CONTAINER_MAX_MEMORY_MB}, vcores 1..={CONTAINER_MAX_VCORES}; numContainers 0..={MAX_CONTAINERS_PER_ASK}; at most {MAX_LIST} asks, releases or listed containers; names 1..={MAX_NAME_LEN} printable ASCII; deadlineMs (and a submission's deadline-ms, or its deadline= tag) 1..={MAX_TIME_MS}, and a submission's deadline after the rm's clock; a registering master's maps and reduces 0..=10000000, profile durations 0..=315360000 s."
    )
}

/// The two shapes of a refusal (`rm/src/rest/mod.rs`'s `ApiError` and `remote_exception`).
fn refusals() -> Value {
    json!({
        "Error": {
            "description": "What to fix",
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["error", "detail"],
                "properties": { "error": { "type": "string" }, "detail": {} },
            } } },
        },
        "RemoteException": {
            "description": "What to fix, in YARN's shape (Hadoop's routes)",
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["RemoteException"],
                "properties": { "RemoteException": {
                    "type": "object",
                    "required": ["exception", "message", "javaClassName"],
                    "properties": {
                        "exception": {
                            "type": "string",
                            "description": "BadRequestException (400), AuthenticationException (401), ForbiddenException (403), NotFoundException (404), WebApplicationException (other)",
                        },
                        "message": { "type": "string" },
                        "javaClassName": { "type": "string" },
                        "detail": {
                            "description": "yard's: what to fix, machine-readable (e.g. {\"field\": ...})",
                        },
                    },
                } },
            } } },
        },
    })
}

/// Every view's and request's schema and every schema they refer to, by type name, as
/// OpenAPI 3.0 spells it, with `bodies`'.
pub fn component_schemas(bodies: Bodies) -> Map<String, Value> {
    // What the table's operations read and answer, and every type those contain.
    let schemas: Map<String, Value> = paths::operations()
        .into_iter()
        .flat_map(|op| op.schemas)
        .chain(bodies.schemas)
        .map(|(name, schema)| {
            let schema = serde_json::to_value(schema).expect("a schema is JSON");
            (name, nullable_as_30(schema))
        })
        .collect();
    let mut schemas: Map<String, Value> = schemas
        .iter()
        .map(|(name, schema)| (name.clone(), flattened(schema, &schemas)))
        .collect();
    let above = bodies
        .constraints
        .into_iter()
        .map(|(schema, field, keywords)| match keywords {
            Value::Object(keywords) => (schema, field, keywords),
            other => panic!("{schema}.{field}: keywords are an object, not {other}"),
        });
    for (schema, field, keywords) in constraints().into_iter().chain(above) {
        let Some(Value::Object(property)) = schemas
            .get_mut(schema)
            .and_then(|s| s.pointer_mut(&format!("/properties/{field}")))
        else {
            panic!("{schema}.{field} has no schema");
        };
        property.extend(keywords);
    }
    schemas
}

/// What the rm holds a request's fields to (`limits`, the handlers' checks: out of range is a
/// 400 naming the field) that utoipa cannot take from a constant, by schema and property.
fn constraints() -> Vec<(&'static str, &'static str, Map<String, Value>)> {
    let keywords = |v: Value| match v {
        Value::Object(map) => map,
        _ => unreachable!("keywords are an object"),
    };
    let mut all: Vec<_> = telemetry_ranges()
        .into_iter()
        .map(|(schema, field, max)| {
            (
                schema,
                field,
                keywords(json!({"minimum": 0, "maximum": max})),
            )
        })
        .collect();
    let list = || keywords(json!({ "maxItems": limits::MAX_LIST }));
    all.extend([
        ("NodeTelemetry", "containers", list()),
        ("ContainerUsage", "containerId", name_schema()),
        ("RegisterNode", "nodeId", name_schema()),
        ("RegisterNode", "rack", name_schema()),
        ("RegisterNode", "containers", list()),
        ("NodeHeartbeat", "running", list()),
        ("NodeHeartbeat", "completed", list()),
        ("AllocateRequest", "asks", list()),
        ("AllocateRequest", "releases", list()),
        (
            "AllocateRequest",
            "progress",
            keywords(json!({"minimum": 0, "maximum": 1})),
        ),
        (
            "SetDeadline",
            "deadlineMs",
            keywords(json!({"minimum": 1, "maximum": limits::MAX_TIME_MS})),
        ),
        (
            "MasterAnswer",
            "processedFraction",
            keywords(json!({"minimum": 0, "maximum": 1})),
        ),
        (
            "RecoveryEntries",
            "entries",
            keywords(json!({"additionalProperties": {"type": "object"}})),
        ),
        (
            "JoinScan",
            "url",
            keywords(json!({"maxLength": 200, "pattern": "^https?://"})),
        ),
        (
            "ResourceRequest",
            "numContainers",
            keywords(json!({"maximum": limits::MAX_CONTAINERS_PER_ASK})),
        ),
    ]);
    all
}

/// What `limits::check_name` takes, as a schema.
fn name_schema() -> Map<String, Value> {
    let Value::Object(name) = json!({"minLength": 1, "maxLength": limits::MAX_NAME_LEN,
        "pattern": "^[!-~]+$"})
    else {
        unreachable!()
    };
    name
}

/// The range of every number in a load sample, from the constants `NodeTelemetry::check`
/// holds a heartbeat to (the rm answers 400 outside them); utoipa takes only literals.
fn telemetry_ranges() -> Vec<(&'static str, &'static str, Value)> {
    let rate = json!(MAX_RATE_BYTES_PER_S);
    let mut ranges = vec![
        ("NodeTelemetry", "cpuPercent", json!(100.0)),
        ("NodeTelemetry", "memoryTotalBytes", json!(MAX_MEMORY_BYTES)),
        ("NodeTelemetry", "swapUsedBytes", json!(MAX_MEMORY_BYTES)),
        ("NodeTelemetry", "cores", json!(MAX_CORES)),
        ("ContainerUsage", "virtualBytes", json!(MAX_VIRTUAL_BYTES)),
        ("ProcessTreeUsage", "processes", json!(MAX_PROCESSES)),
    ];
    for load in ["load1m", "load5m", "load15m"] {
        ranges.push(("NodeTelemetry", load, json!(MAX_LOAD)));
    }
    for field in [
        "diskReadBytesPerS",
        "diskWriteBytesPerS",
        "netRxBytesPerS",
        "netTxBytesPerS",
        "diskIoRateBytesPerS",
    ] {
        ranges.push(("NodeTelemetry", field, rate.clone()));
    }
    for tree in ["ContainerUsage", "ProcessTreeUsage"] {
        ranges.push((tree, "cpuPercent", json!(MAX_TREE_CPU_PERCENT)));
        ranges.push((tree, "rssBytes", json!(MAX_MEMORY_BYTES)));
        ranges.push((tree, "readBytesPerS", rate.clone()));
        ranges.push((tree, "writeBytesPerS", rate.clone()));
    }
    ranges
}

/// A struct with `#[serde(flatten)]` fields, which utoipa writes as `allOf` of the parts, as
/// the one object serde writes: every part's properties in one. A part that refuses unknown
/// fields would otherwise refuse its siblings', and a flattened `Option` (`nullable`) is its
/// fields or none of them, so its fields are not required.
fn flattened(schema: &Value, schemas: &Map<String, Value>) -> Value {
    let Some(Value::Array(parts)) = schema
        .get("allOf")
        .filter(|_| schema.get("nullable").is_none())
    else {
        return schema.clone();
    };
    let (mut properties, mut required) = (Map::new(), Vec::new());
    for part in parts {
        let optional = part.get("nullable") == Some(&Value::Bool(true));
        let part = part.pointer("/allOf/0").unwrap_or(part);
        let part = match part.get("$ref").and_then(Value::as_str) {
            Some(r) => &schemas[r.trim_start_matches("#/components/schemas/")],
            None => part,
        };
        let part = flattened(part, schemas);
        if let Some(Value::Object(p)) = part.get("properties") {
            properties.extend(p.clone());
        }
        if let (false, Some(Value::Array(r))) = (optional, part.get("required")) {
            required.extend(r.iter().cloned());
        }
    }
    let mut out = Map::new();
    if let Some(d) = schema.get("description") {
        out.insert("description".into(), d.clone());
    }
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(properties));
    out.insert("required".into(), Value::Array(required));
    Value::Object(out)
}

/// 3.1's `"type": [T, "null"]` as `"type": T, "nullable": true`, and `oneOf: [{"type":
/// "null"}, S]` as S, nullable (a `$ref` wrapped in `allOf`: 3.0 ignores a `$ref`'s siblings).
fn nullable_as_30(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return match schema {
            Value::Array(items) => Value::Array(items.into_iter().map(nullable_as_30).collect()),
            other => other,
        };
    };
    if let Some(Value::Array(types)) = map.get("type")
        && types.len() == 2
        && types.contains(&json!("null"))
    {
        let other = types.iter().find(|t| **t != json!("null")).cloned();
        map.insert("type".into(), other.unwrap_or(Value::Null));
        map.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(Value::Array(one_of)) = map.get("oneOf")
        && one_of.len() == 2
        && one_of.contains(&json!({"type": "null"}))
    {
        let other = one_of
            .iter()
            .find(|s| **s != json!({"type": "null"}))
            .cloned()
            .unwrap_or(Value::Null);
        map.remove("oneOf");
        match other {
            // Only the `$ref` inside: 3.0 ignores its siblings (a description) there.
            Value::Object(mut inner) if inner.contains_key("$ref") => {
                let reference = inner.remove("$ref").unwrap_or(Value::Null);
                for (k, v) in inner {
                    map.entry(k).or_insert(v);
                }
                map.insert("allOf".into(), json!([{ "$ref": reference }]));
            }
            Value::Object(inner) => {
                for (k, v) in inner {
                    map.entry(k).or_insert(v);
                }
            }
            _ => {}
        }
        map.insert("nullable".into(), Value::Bool(true));
    }
    // 3.0 has no `propertyNames` (a map's keys are strings anyway).
    map.remove("propertyNames");
    // A doc comment's intra-doc links read as plain code in a description.
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.replace("[`", "`").replace("`]", "`");
    }
    Value::Object(
        map.into_iter()
            .map(|(k, v)| (k, nullable_as_30(v)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_is_spelled_the_3_0_way() {
        assert_eq!(
            nullable_as_30(json!({"type": ["integer", "null"], "format": "int64"})),
            json!({"type": "integer", "format": "int64", "nullable": true})
        );
        assert_eq!(
            nullable_as_30(json!({"properties": {"q": {"oneOf": [{"type": "null"},
                {"$ref": "#/components/schemas/QuotaView"}], "description": "d"}}})),
            json!({"properties": {"q": {"allOf": [{"$ref": "#/components/schemas/QuotaView"}],
                "description": "d", "nullable": true}}})
        );
    }

    #[test]
    fn a_flattened_struct_is_one_object_and_a_flattened_option_is_optional() {
        let schemas = component_schemas(Bodies::default());
        let load = &schemas["YardLoad"];
        assert!(load["properties"]["cpuPercent"].is_object(), "{load}");
        assert!(load["properties"]["sampledAt"].is_object(), "{load}");
        assert!(
            load["required"]
                .as_array()
                .unwrap()
                .contains(&json!("cpuPercent"))
        );
        assert!(load.get("additionalProperties").is_none(), "{load}");
        let overload = &schemas["OverloadView"];
        assert!(overload["properties"]["pGood"].is_object(), "{overload}");
        assert_eq!(overload["required"], json!(["classifier", "verdict"]));
    }

    #[test]
    fn every_view_and_what_it_contains_has_a_schema() {
        let schemas = component_schemas(Bodies::default());
        for name in [
            "AppView",
            "NodeView",
            "ClusterMetrics",
            "ClusterInfo",
            "NodeTelemetry",
        ] {
            assert!(schemas.contains_key(name), "{name} in {:?}", schemas.keys());
        }
        let text = serde_json::to_string(&schemas).unwrap();
        assert!(!text.contains("\"null\""), "3.1's null type left: {text}");
    }
}
