//! `rm/openapi.json` cannot drift from the wire's types: the schemas of every client view
//! (`yard_wire::views`, and what they contain) are generated from the types with utoipa
//! (`yard_wire::openapi`), and the committed document must carry exactly those, under the
//! types' names, with nothing left of the hand-written ones they replaced (`YARD_BLESS=1`
//! writes the generated ones in, the rest of the file as it was). The rest of the
//! document (paths, the request bodies not yet typed in `wire`) is still kept by hand;
//! schemathesis (`tests/schemathesis.rs`) holds it to what the server does.

use std::path::Path;

use serde_json::{Map, Value};

fn document() -> Value {
    serde_json::from_str(yard_rm::rest::OPENAPI).expect("the OpenAPI document is JSON")
}

#[test]
fn the_documents_component_schemas_are_the_ones_generated_from_the_wire_types() {
    let doc = document();
    let documented = doc["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    let generated = yard_wire::openapi::component_schemas();
    let stale: Vec<&String> = generated
        .iter()
        .filter(|(name, schema)| documented.get(*name) != Some(*schema))
        .map(|(name, _)| name)
        .collect();
    if !stale.is_empty() && std::env::var("YARD_BLESS").is_ok_and(|v| v == "1") {
        bless(&generated);
        return;
    }
    assert!(
        stale.is_empty(),
        "rm/openapi.json's schemas for {stale:?} are not the types': \
         `YARD_BLESS=1 cargo test -p yard-rm --test openapi` writes them in"
    );
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

/// Writes each generated schema into `rm/openapi.json` where the schema of that name is (a new
/// one after the others), leaving every other line as it is: the file is kept by hand around
/// them, in its own key order (serde_json's `Value` would sort every key of it).
fn bless(generated: &Map<String, Value>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let open = lines
        .iter()
        .position(|l| l == "    \"schemas\": {")
        .expect("components.schemas, two levels in");
    let end_of = |lines: &[String], from: usize, indent: &str| {
        from + lines[from..]
            .iter()
            .position(|l| {
                l.strip_prefix(indent)
                    .is_some_and(|r| r == "}" || r == "},")
            })
            .expect("the object's end")
    };
    for (name, schema) in generated {
        let pretty = serde_json::to_string_pretty(schema).unwrap();
        let mut block: Vec<String> = pretty.lines().map(|l| format!("      {l}")).collect();
        let head = format!("      {}: {{", serde_json::to_string(name).unwrap());
        block[0] = head.clone();
        let close = end_of(&lines, open + 1, "    ");
        match lines[open..close].iter().position(|l| *l == head) {
            Some(at) => {
                let (start, end) = (open + at, end_of(&lines, open + at + 1, "      "));
                if lines[end].ends_with(',') {
                    block.last_mut().unwrap().push(',');
                }
                lines.splice(start..=end, block);
            }
            None => {
                lines[close - 1].push(',');
                lines.splice(close..close, block);
            }
        }
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}
