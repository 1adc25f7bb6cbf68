//! `rm/openapi.json` cannot drift from the wire's types: the schemas of every client view
//! (`yard_wire::views`, and what they contain) are generated from the types with utoipa
//! (`yard_wire::openapi`), and the committed document must carry exactly those, under the
//! types' names, with nothing left of the hand-written ones they replaced. The rest of the
//! document (paths, the request bodies not yet typed in `wire`) is still kept by hand;
//! schemathesis (`tests/schemathesis.rs`) holds it to what the server does.

use serde_json::Value;

fn document() -> Value {
    serde_json::from_str(yard_rm::rest::OPENAPI).expect("the OpenAPI document is JSON")
}

#[test]
fn the_documents_component_schemas_are_the_ones_generated_from_the_wire_types() {
    let doc = document();
    let documented = doc["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    let mut stale = Vec::new();
    for (name, generated) in yard_wire::openapi::component_schemas() {
        if documented.get(&name) != Some(&generated) {
            stale.push(format!(
                "{name}: put this in rm/openapi.json's components.schemas:\n{}",
                serde_json::to_string_pretty(&generated).unwrap()
            ));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n\n"));
    // The hand-written schemas the generated ones replaced are gone, so nothing refers to them.
    for gone in [
        "App",
        "Node",
        "YardApp",
        "Quota",
        "NodeOverload",
        "YardLoadPoint",
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
