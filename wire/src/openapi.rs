//! The OpenAPI schemas of the client views and of a nodemanager's registration and heartbeat
//! (feature `openapi`), generated from the types with utoipa, so `rm/openapi.json` cannot
//! drift from what the rm serializes and reads: `rm/tests/openapi.rs` checks that the
//! committed document carries exactly these (and writes them in with `YARD_BLESS=1`). The
//! document is OpenAPI 3.0 and utoipa writes 3.1, so [`component_schemas`] spells nullability
//! the 3.0 way (`nullable`) and a serde-flattened struct as one object; it adds what utoipa
//! cannot take from a constant (the load sample's ranges).

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use crate::limits;
use crate::protocol::{NodeHeartbeat, RegisterNode};
use crate::telemetry::{
    MAX_CORES, MAX_LOAD, MAX_MEMORY_BYTES, MAX_PROCESSES, MAX_RATE_BYTES_PER_S,
    MAX_TREE_CPU_PERCENT, MAX_VIRTUAL_BYTES,
};
use crate::views::{
    AppReply, AppStateView, AppsReply, ClusterInfoReply, ClusterMetricsReply, NodeReply,
    NodesReply, YardAppReply,
};

/// The rm's replies built from `views`, and the nodemanagers' registration and heartbeat;
/// utoipa adds every type they contain. A new wire type the rm reads or serves (the replies
/// still built with `json!`, the allocate protocol, a MapReduce job): derive `ToSchema` on it
/// behind the feature as these do, name it here, point the document's path at it, and run
/// `YARD_BLESS=1 cargo test -p yard-rm --test openapi`.
#[derive(OpenApi)]
#[openapi(components(schemas(
    RegisterNode,
    NodeHeartbeat,
    AppsReply,
    AppReply,
    YardAppReply,
    AppStateView,
    NodesReply,
    NodeReply,
    ClusterMetricsReply,
    ClusterInfoReply
)))]
struct Views;

/// Every view's and request's schema and every schema they refer to, by type name, as
/// OpenAPI 3.0 spells it.
pub fn component_schemas() -> Map<String, Value> {
    let schemas = Views::openapi()
        .components
        .map(|c| c.schemas)
        .unwrap_or_default();
    let schemas: Map<String, Value> = schemas
        .into_iter()
        .map(|(name, schema)| {
            let schema = serde_json::to_value(schema).expect("a schema is JSON");
            (name, nullable_as_30(schema))
        })
        .collect();
    let mut schemas: Map<String, Value> = schemas
        .iter()
        .map(|(name, schema)| (name.clone(), flattened(schema, &schemas)))
        .collect();
    for (schema, field, max) in telemetry_ranges() {
        let Some(Value::Object(property)) = schemas
            .get_mut(schema)
            .and_then(|s| s.pointer_mut(&format!("/properties/{field}")))
        else {
            panic!("{schema}.{field} has no schema");
        };
        property.insert("minimum".into(), json!(0));
        property.insert("maximum".into(), max);
    }
    // And the lists and names a sample carries (`limits`).
    if let Some(Value::Object(containers)) = schemas
        .get_mut("NodeTelemetry")
        .and_then(|s| s.pointer_mut("/properties/containers"))
    {
        containers.insert("maxItems".into(), json!(limits::MAX_LIST));
    }
    if let Some(Value::Object(id)) = schemas
        .get_mut("ContainerUsage")
        .and_then(|s| s.pointer_mut("/properties/containerId"))
    {
        id.extend(name_schema());
    }
    schemas
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
        let schemas = component_schemas();
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
        let schemas = component_schemas();
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
