//! Hadoop SLS topology files (`nodes.json`): concatenated `{"rack", "nodes": [{"node", …}]}`
//! objects, read the way SLS's `SLSUtils.parseNodesFromNodeFile` reads them.
//!
//! A node entry without `node` is skipped: Hadoop's own `nodes.json` ends with an empty `{}`,
//! which SLS would turn into a host literally named `null`. The skipped entries are counted, and
//! a file whose entries are *all* nameless (or that names no node at all) is an error.

use serde::Deserialize;

use crate::error::{Position, TraceError};
use crate::json::for_each_object;
use crate::{Format, Workload};

#[derive(Deserialize)]
struct Rack {
    rack: String,
    nodes: Vec<NodeEntry>,
}

#[derive(Deserialize)]
struct NodeEntry {
    node: Option<String>,
    #[serde(rename = "memory-mb")]
    memory_mb: Option<u64>,
    vcores: Option<u32>,
    /// SLS's `YarnClientUtils.buildNodeLabelsFromStr` input, e.g. `a, b(exclusive=false)`.
    labels: Option<String>,
}

pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Workload, TraceError> {
    let mut workload = Workload::new(Format::Topology);
    let (mut named, mut skipped) = (0usize, 0usize);
    for_each_object::<Rack, _>(file, bytes, |entry, object| {
        let topology = &mut workload.topology;
        for (i, n) in entry.nodes.into_iter().enumerate() {
            let Some(name) = n.node else {
                skipped += 1;
                continue;
            };
            let fail = |problem: String| {
                TraceError::new(file, object.position(), problem).field(format!("nodes[{i}].node"))
            };
            if name.is_empty() {
                return Err(fail("expected a node name, found \"\"".into()));
            }
            // `intern` never moves a placed node, so a second rack has to be caught here.
            if let Some(rack) = topology.find(&name).and_then(|id| topology.node(id).rack) {
                let first = topology.rack_name(rack);
                if first != entry.rack {
                    return Err(fail(format!(
                        "node `{name}` is listed in rack `{}` and earlier in rack `{first}`",
                        entry.rack
                    )));
                }
            }
            named += 1;
            let id = topology.intern(Some(&entry.rack), &name);
            // A node listed twice is one node; later entries fill in or override its details.
            let node = topology.node_mut(id);
            node.memory_mb = n.memory_mb.or(node.memory_mb);
            node.vcores = n.vcores.or(node.vcores);
            for label in n.labels.iter().flat_map(|l| l.split(',')).map(str::trim) {
                if !label.is_empty() && !node.labels.iter().any(|l| l == label) {
                    node.labels.push(label.to_owned());
                }
            }
        }
        Ok(())
    })?;
    if skipped > 0 && named > 0 {
        workload.notes.push(format!(
            "skipped {skipped} node entries without a `node` name (SLS would name such a host `null`)"
        ));
    }
    if named == 0 {
        return Err(TraceError::new(
            file,
            Position::File,
            format!(
                "expected at least one node with a `node` name, found {skipped} nameless node entries"
            ),
        ));
    }
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Workload, TraceError> {
        parse("t.json", text.as_bytes())
    }

    #[test]
    fn reads_racks_nodes_resources_and_labels() {
        let w = read(
            r#"{"rack": "r1", "nodes": [{"node": "a", "memory-mb": 2048, "vcores": 6},
                                        {"node": "b", "labels": "x, y(exclusive=false),"}]}
               {"rack": "r2", "nodes": [{"node": "c"}, {}]}"#,
        )
        .unwrap();
        let t = &w.topology;
        assert_eq!(w.format, Format::Topology);
        assert!(w.jobs.is_empty());
        assert_eq!(t.racks, ["r1", "r2"]);
        assert_eq!(t.nodes.len(), 3, "the empty entry is skipped");
        let a = t.node(t.find("a").unwrap());
        assert_eq!((a.memory_mb, a.vcores), (Some(2048), Some(6)));
        let b = t.node(t.find("b").unwrap());
        assert_eq!(b.labels, ["x", "y(exclusive=false)"]);
        assert_eq!(
            t.rack_name(t.node(t.find("c").unwrap()).rack.unwrap()),
            "r2"
        );
    }

    #[test]
    fn a_repeated_node_is_one_node_and_a_repeated_rack_one_rack() {
        let w = read(
            r#"{"rack": "r1", "nodes": [{"node": "a", "labels": "x"}]}
               {"rack": "r1", "nodes": [{"node": "a", "vcores": 4, "labels": "x,z"}, {"node": "b"}]}"#,
        )
        .unwrap();
        let t = &w.topology;
        assert_eq!((t.racks.len(), t.nodes.len()), (1, 2));
        let a = t.node(t.find("a").unwrap());
        assert_eq!(
            (a.vcores, a.labels.clone()),
            (Some(4), vec!["x".into(), "z".into()])
        );
    }

    #[test]
    fn a_node_in_two_racks_is_an_error_naming_both() {
        let e = read(
            "{\"rack\": \"r1\", \"nodes\": [{\"node\": \"a\"}]}\n\
             {\"rack\": \"r2\", \"nodes\": [{\"node\": \"b\"}, {\"node\": \"a\"}]}",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("nodes[1].node"));
        assert_eq!(e.at, Position::Line(2));
        let msg = e.to_string();
        assert!(
            msg.contains("`r1`") && msg.contains("`r2`") && msg.contains("`a`"),
            "{msg}"
        );
    }

    #[test]
    fn only_nameless_entries_is_an_error() {
        let e = read(r#"{"rack": "r1", "nodes": [{}, {"vcores": 2}]}"#).unwrap_err();
        assert!(e.to_string().contains("found 2 nameless"), "{e}");
        assert!(read(r#"{"rack": "r1", "nodes": []}"#).is_err());
    }

    #[test]
    fn bad_values_name_the_field() {
        let e = read(r#"{"rack": "r1", "nodes": [{"node": "a", "memory-mb": -5}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("nodes[0].memory-mb"), "{e}");
        let e = read(r#"{"rack": "r1", "nodes": [{"node": "a", "labels": ["x"]}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("nodes[0].labels"), "{e}");
        let e = read(r#"{"rack": "r1", "nodes": [{"node": ""}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("nodes[0].node"), "{e}");
        let e = read(r#"{"nodes": []}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `rack`"), "{e}");
    }
}
