//! `rm/openapi.json` is generated: the committed document must be exactly
//! `yard_wire::openapi::document` — its operations from the wire's path table, its schemas
//! from the wire types with utoipa, the MapReduce job's from the appmaster's
//! (`yard_appmaster::openapi::bodies`), and the rm's own request bodies from
//! `wire/src/openapi/bodies.json`. `YARD_BLESS=1 cargo test -p yard-rm --test openapi`
//! writes it. That its paths are the router's is `rest.rs`'s
//! `the_openapi_document_lists_exactly_the_routes_served`; that the server answers as it says,
//! schemathesis's (`tests/schemathesis.rs`).

use std::path::Path;

use serde_json::Value;

fn document() -> Value {
    serde_json::from_str(yard_rm::rest::OPENAPI).expect("the OpenAPI document is JSON")
}

#[test]
fn the_committed_document_is_the_one_generated_from_the_wire_types() {
    let generated = yard_wire::openapi::document(yard_appmaster::openapi::bodies());
    let committed = document();
    if committed != generated && std::env::var("YARD_BLESS").is_ok_and(|v| v == "1") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
        let text = serde_json::to_string_pretty(&generated).expect("the document is JSON");
        std::fs::write(&path, text + "\n").expect("rm/openapi.json is writable");
        return;
    }
    let stale: Vec<String> = differences(&committed, &generated, "");
    assert!(
        stale.is_empty(),
        "rm/openapi.json is not the document generated from the wire types at {stale:?}: \
         `YARD_BLESS=1 cargo test -p yard-rm --test openapi` writes it"
    );
}

/// Where two documents differ, as JSON pointers (the first few).
fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    match (a.get(k), b.get(k)) {
                        (Some(x), Some(y)) => differences(x, y, &here),
                        _ => vec![here],
                    }
                })
                .take(10)
                .collect()
        }
        _ if a == b => vec![],
        _ => vec![at.to_owned()],
    }
}

/// The views' schemas are the types', and none of the hand-written ones they replaced is left.
#[test]
fn the_views_are_generated_and_the_schemas_they_replaced_are_gone() {
    let doc = document();
    let documented = doc["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    for (name, schema) in yard_wire::openapi::component_schemas(yard_appmaster::openapi::bodies()) {
        assert_eq!(documented.get(&name), Some(&schema), "{name}");
    }
    for gone in [
        "App",
        "Node",
        "YardApp",
        "Quota",
        "NodeOverload",
        "YardLoadPoint",
        "SchedulerInfoReply",
        "MapReduceJobView",
        "MapReduceAnswer",
        "MapReduceJobSpec",
    ] {
        assert!(documented.get(gone).is_none(), "{gone} is still documented");
    }
}

/// Every `$ref` in the document names something it has (a renamed schema leaves none behind).
#[test]
fn every_reference_names_a_documented_schema() {
    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let doc = document();
    let mut found = Vec::new();
    refs(&doc, &mut found);
    for r in found {
        let target = r.strip_prefix('#').and_then(|pointer| doc.pointer(pointer));
        assert!(target.is_some_and(Value::is_object), "{r} names nothing");
    }
}

/// Every operation that answers 2xx with JSON names a schema for it, not a bare object: the
/// replies are typed.
#[test]
fn every_json_reply_has_a_schema_of_its_own() {
    let doc = document();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for (status, reply) in op["responses"].as_object().unwrap() {
                let Some(schema) = reply.pointer("/content/application~1json/schema") else {
                    continue;
                };
                if !status.starts_with('2') || path == "/ws/v1/yard/openapi.json" {
                    continue;
                }
                let named = schema.get("$ref").is_some() || schema.pointer("/items/$ref").is_some();
                assert!(named, "{method} {path} {status}: {schema}");
            }
        }
    }
}
