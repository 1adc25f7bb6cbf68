//! Rumen topology files: what Rumen's `TopologyBuilder` writes beside a job trace, one
//! `LoggedNetworkTopology` tree per file,
//! `{"name": "<root>", "children": [{"name": RACK, "children": [{"name": HOST, "children": null}]}]}`.
//!
//! Rumen builds the tree from `ParsedHost` (`/rack/host`): the root, its racks, their hosts,
//! every leaf at the same depth. yard reads that, and a root whose children are hosts (no
//! racks). A host with children of its own (a deeper hierarchy) is refused, naming where.

use serde::Deserialize;

use crate::error::{Position, TraceError};
use crate::json::for_each_object;
use crate::{Format, Workload};

/// One level of the tree: `children` is `null` (or absent, or empty) at a host.
#[derive(Deserialize)]
struct Tree {
    name: Option<String>,
    #[serde(default)]
    children: Option<Vec<Tree>>,
}

impl Tree {
    fn is_leaf(&self) -> bool {
        self.children.as_ref().is_none_or(Vec::is_empty)
    }
}

pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Workload, TraceError> {
    let mut workload = Workload::new(Format::RumenTopology);
    for_each_object::<Tree, _>(file, bytes, |root, object| {
        let fail = |field: String, problem: String| {
            TraceError::new(file, object.position(), problem).field(field)
        };
        let name = |t: &Tree, field: &str| match t.name.as_deref() {
            Some(n) if !n.is_empty() => Ok(n.to_owned()),
            _ => Err(fail(
                format!("{field}.name"),
                "expected a name, found none".into(),
            )),
        };
        let topology = &mut workload.topology;
        for (i, child) in root.children.iter().flatten().enumerate() {
            let at = format!("children[{i}]");
            if child.is_leaf() {
                // A host straight under the root: no rack.
                topology.intern(None, &name(child, &at)?);
                continue;
            }
            let rack = name(child, &at)?;
            for (j, host) in child.children.iter().flatten().enumerate() {
                let at = format!("{at}.children[{j}]");
                let host_name = name(host, &at)?;
                if !host.is_leaf() {
                    return Err(fail(
                        format!("{at}.children"),
                        format!(
                            "expected host `{host_name}` in rack `{rack}` to be a leaf (Rumen's \
                             root → rack → host), found children under it"
                        ),
                    ));
                }
                if let Some(first) = topology
                    .find(&host_name)
                    .and_then(|id| topology.node(id).rack)
                    .map(|r| topology.rack_name(r).to_owned())
                    .filter(|first| *first != rack)
                {
                    return Err(fail(
                        at,
                        format!(
                            "host `{host_name}` is in rack `{rack}` and earlier in rack `{first}`"
                        ),
                    ));
                }
                topology.intern(Some(&rack), &host_name);
            }
        }
        Ok(())
    })?;
    if workload.topology.nodes.is_empty() {
        return Err(TraceError::new(
            file,
            Position::File,
            "expected at least one host (a leaf of the tree under its root), found none",
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
    fn reads_racks_and_their_hosts_as_rumen_writes_them() {
        let w = read(
            r#"{
              "name" : "<root>",
              "children" : [ {
                "name" : "194.6.129",
                "children" : [ { "name" : "cluster1040.example.com", "children" : null },
                               { "name" : "cluster1041.example.com", "children" : null } ]
              }, {
                "name" : "194.6.130",
                "children" : [ { "name" : "cluster1100.example.com", "children" : null } ]
              } ]
            }"#,
        )
        .unwrap();
        let t = &w.topology;
        assert_eq!(w.format, Format::RumenTopology);
        assert!(w.jobs.is_empty());
        assert_eq!(t.racks, ["194.6.129", "194.6.130"]);
        assert_eq!(t.nodes.len(), 3);
        let host = t.node(t.find("cluster1100.example.com").unwrap());
        assert_eq!(t.rack_name(host.rack.unwrap()), "194.6.130");
    }

    #[test]
    fn hosts_straight_under_the_root_have_no_rack() {
        let w = read(
            r#"{"name": "<root>", "children": [{"name": "a"}, {"name": "b", "children": []}]}"#,
        )
        .unwrap();
        assert!(w.topology.racks.is_empty());
        assert_eq!(w.topology.nodes.len(), 2);
        assert!(w.topology.nodes.iter().all(|n| n.rack.is_none()));
    }

    #[test]
    fn what_yard_does_not_read_is_named_with_where() {
        let deeper = read(
            r#"{"name": "<root>", "children": [{"name": "dc1", "children": [{"name": "r1",
                "children": [{"name": "h1", "children": null}]}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            deeper.contains("children[0].children[0].children")
                && deeper.contains("`r1` in rack `dc1` to be a leaf"),
            "{deeper}"
        );
        let nameless = read(
            r#"{"name": "<root>", "children": [{"name": "r", "children": [{"children": null}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            nameless.contains("children[0].children[0].name")
                && nameless.contains("expected a name"),
            "{nameless}"
        );
        let twice = read(
            r#"{"name": "<root>", "children": [{"name": "r1", "children": [{"name": "h"}]},
                                              {"name": "r2", "children": [{"name": "h"}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            twice.contains("`h` is in rack `r2` and earlier in rack `r1`"),
            "{twice}"
        );
        let empty = read(r#"{"name": "<root>", "children": null}"#)
            .unwrap_err()
            .to_string();
        assert!(empty.contains("at least one host"), "{empty}");
        let not_a_tree = read(r#"{"name": "<root>", "children": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(not_a_tree.contains("children"), "{not_a_tree}");
    }
}
