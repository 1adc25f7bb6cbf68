//! A task's part of its job's output dataset (`-output`), on the task's side: ask the master
//! whether this attempt may write (Hadoop's `canCommit`), place the part's replicas by the
//! rule `yard data put` uses, upload them to the nodemanagers with the output's upload grant,
//! and report what was written. The master's side is `master::output`.

use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use yard_cluster::placement::{Holder, place};
use yard_wire::outputs::{OutputGrant, OutputNode};
use yard_wire::protocol::{BlockReplicas, sha256_hex};

use yard_appmaster::apps::part::part_lines;
use yard_appmaster::apps::{AppSpec, ReducePartial, Split};

use crate::master::CommitReply;
use crate::{KILLED_EXIT, TaskSpec, job_token};

/// Replicas of each part, HDFS's default `dfs.replication` (capped at the node count), as
/// `yard data put` writes.
pub(crate) const REPLICATION: usize = 3;

/// Where a job's parts go: the output dataset, its upload grant, the nodes that may hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PartTarget {
    pub dataset: String,
    pub token: String,
    pub nodes: Vec<OutputNode>,
}

impl From<OutputGrant> for PartTarget {
    fn from(g: OutputGrant) -> PartTarget {
        PartTarget {
            dataset: g.dataset,
            token: g.token,
            nodes: g.nodes,
        }
    }
}

/// The nodes of part `task`'s replicas, first replica first: HDFS's rule over the nodes,
/// started at the task's turn so that parts written by separate tasks spread.
pub(crate) fn replicas(nodes: &[OutputNode], task: usize) -> Result<Vec<String>> {
    if nodes.is_empty() {
        bail!("the rm named no running node to write the output to");
    }
    let turn = task % nodes.len();
    let holders: Vec<Holder> = nodes[turn..]
        .iter()
        .chain(&nodes[..turn])
        .map(|n| Holder {
            node: n.node.clone(),
            rack: n.rack.clone(),
        })
        .collect();
    let placed = place(&holders, &[0], REPLICATION)?;
    Ok(placed[0].iter().map(|&i| holders[i].node.clone()).collect())
}

fn post<T: DeserializeOwned>(
    http: &reqwest::blocking::Client,
    url: &str,
    body: &impl Serialize,
) -> Result<T> {
    let mut request = http.post(url).json(body);
    if let Some(token) = job_token() {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .with_context(|| format!("cannot reach {url}"))?;
    let status = response.status();
    if !status.is_success() {
        bail!(
            "{url} answered {status}: {}",
            response.text().unwrap_or_default()
        );
    }
    response
        .json()
        .with_context(|| format!("{url} answered something unreadable"))
}

/// Hadoop's `canCommit`: whether this attempt (`base`, its umbilical URL) writes a part, and
/// which and where; `None` when the job has no output (or another attempt's part is in). It
/// waits while another attempt of its task writes; one the master ended stops here.
pub(crate) fn may_write(
    http: &reqwest::blocking::Client,
    base: &str,
) -> Result<Option<(String, PartTarget)>> {
    loop {
        let reply: CommitReply = post(http, &format!("{base}/commit"), &serde_json::json!({}))?;
        if reply.kill {
            eprintln!("task: the master ended this attempt: stopping");
            std::process::exit(KILLED_EXIT);
        }
        if !reply.wait {
            return Ok(reply.part.zip(reply.target));
        }
        // Another attempt writes this part; the master kills this one, or lets it write
        // once that one is over (the progress thread hears a kill meanwhile).
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Writes `bytes` as part `part` of the output to its replicas' nodes (`task` picks them),
/// then tells the master (`base`) what was written.
pub(crate) fn write_part(
    http: &reqwest::blocking::Client,
    base: &str,
    (part, target): (String, PartTarget),
    task: u32,
    bytes: &[u8],
) -> Result<BlockReplicas> {
    let nodes = replicas(&target.nodes, task as usize)?;
    for node in &nodes {
        let url = format!("http://{node}/ws/v1/node/blocks/{}/{part}", target.dataset);
        let response = http
            .put(&url)
            .bearer_auth(&target.token)
            .body(bytes.to_vec())
            .send()
            .with_context(|| format!("writing {part} to {node}"))?;
        let status = response.status();
        if !status.is_success() {
            bail!(
                "{node} refused output part {part}: {status} {}",
                response.text().unwrap_or_default()
            );
        }
    }
    let written = BlockReplicas {
        block: part,
        bytes: bytes.len() as u64,
        nodes,
        sha256: Some(sha256_hex(bytes)),
    };
    let kept: serde_json::Value = post(http, &format!("{base}/part"), &written)?;
    if kept["kill"] == true {
        std::process::exit(KILLED_EXIT);
    }
    eprintln!(
        "task: wrote {} ({} bytes) to {}",
        written.block,
        written.bytes,
        written.nodes.join(", ")
    );
    Ok(written)
}

/// A reduce's part, written if the job has an output: a streaming reducer's stdout as it
/// wrote it, a built-in app's keys and counts over the partitions it folded (the first
/// `partial.kept` of `kept`, in the order folded; `apps::part`).
pub(crate) fn reduce_part(
    http: &reqwest::blocking::Client,
    base: &str,
    spec: &TaskSpec,
    reduce: u32,
    reducer_stdout: Option<Vec<u8>>,
    kept: &[(Split, &[u8])],
    partial: &ReducePartial,
) -> Result<()> {
    if !spec.writes_output || matches!(spec.app, AppSpec::Synthetic { .. }) {
        return Ok(());
    }
    let Some(to) = may_write(http, base)? else {
        return Ok(());
    };
    let bytes = match (&spec.app, reducer_stdout) {
        (AppSpec::Streaming { .. }, Some(stdout)) => stdout,
        // `-reducer aggregate` runs no command: its part is Hadoop's aggregate text, the
        // reducer's rows' lines (at most `OUTPUT_CAP` of them, as the answer's).
        (AppSpec::Streaming { .. }, None) if spec.app.is_aggregate() => partial
            .aggregates
            .iter()
            .flat_map(|r| [r.line.as_bytes(), b"\n"])
            .flatten()
            .copied()
            .collect(),
        // A map-only job's reduces have nothing to write: its maps write the parts.
        (AppSpec::Streaming { .. }, None) => return Ok(()),
        _ => {
            let folded = &kept[..(partial.kept as usize).min(kept.len())];
            part_lines(folded).with_context(|| format!("reduce {reduce}'s output part"))?
        }
    };
    write_part(http, base, to, reduce, &bytes)
        .with_context(|| format!("reduce {reduce}'s output part"))?;
    Ok(())
}

/// A map-only job's map writes its mapper's stdout as its part (`part-m-NNNNN`, the split's
/// number), if the job has an output.
pub(crate) fn map_part(
    http: &reqwest::blocking::Client,
    spec: &TaskSpec,
    split: u32,
    stdout: &[u8],
) -> Result<()> {
    if !spec.writes_output {
        return Ok(());
    }
    let base = format!("{}/mr/attempts/{}", spec.master, spec.attempt);
    if let Some(to) = may_write(http, &base)? {
        write_part(http, &base, to, split, stdout)
            .with_context(|| format!("map {split}'s output part"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Vec<OutputNode> {
        (0..n)
            .map(|i| OutputNode {
                node: format!("n{i}:1"),
                rack: format!("/r{}", i % 2),
            })
            .collect()
    }

    #[test]
    fn parts_spread_over_the_nodes_with_distinct_replicas() {
        let all = nodes(4);
        let firsts: Vec<String> = (0..4)
            .map(|t| replicas(&all, t).unwrap()[0].clone())
            .collect();
        let mut distinct = firsts.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            4,
            "each task's first replica on its own node: {firsts:?}"
        );
        for t in 0..8 {
            let r = replicas(&all, t).unwrap();
            assert_eq!(r.len(), REPLICATION);
            let mut d = r.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), r.len(), "{r:?}");
        }
        assert_eq!(
            replicas(&nodes(2), 5).unwrap().len(),
            2,
            "capped at the nodes"
        );
        assert!(replicas(&[], 0).is_err());
    }
}
