//! What a master keeps at the rm for its next attempt, and how that attempt takes it back
//! (Hadoop's MapReduce recovery; Hadoop keeps a job history file in HDFS, yard keeps entries
//! at the rm, `PUT /ws/v1/yard/apps/{id}/recovery`).
//!
//! One entry per map of the job proper (never the task sampler's): where its finished output
//! is, or that the output was lost. An attempt that starts over takes back every finished map
//! whose input is still the same block; their outputs stay on the nodemanagers (a node keeps
//! an application's map outputs until the application's master deletes them at its end). An
//! output that is gone after all is found out as any lost output is: a reducer cannot fetch
//! it, and the map runs again.

use std::collections::BTreeMap;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use yard_appmaster::apps::MapStats;
use yard_appmaster::policy::MapId;
use yard_wire::protocol::RecoveryEntries;
use yard_wire::replies::Recovery;

use super::rm::RmClient;
use super::state::{MapInput, Shared, log_line};
use crate::OutputRef;

/// The most entries sent to the rm in one call.
const KEEP_BATCH: usize = 1_000;

/// One map's entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct KeptMap {
    pub(super) split: u32,
    /// The split's input, and its block: an entry counts only for the same input.
    pub(super) bytes: u64,
    pub(super) block: Option<String>,
    /// Where the output is; `None`: it was lost after the map finished.
    pub(super) output: Option<OutputRef>,
    pub(super) output_bytes: u64,
    #[serde(default)]
    pub(super) stats: Option<MapStats>,
}

impl KeptMap {
    pub(super) fn key(&self) -> String {
        format!("map-{}", self.split)
    }
}

/// A finished map an earlier attempt left, as the next phase takes it back.
#[derive(Debug, Clone)]
pub(super) struct Recovered {
    pub(super) map: MapId,
    pub(super) output: OutputRef,
    pub(super) output_bytes: u64,
    pub(super) stats: Option<MapStats>,
}

/// The maps of `maps` that `entries` (the rm's, by key) say are finished with their output in
/// place, for the same input. Entries that do not parse or do not match are passed over:
/// those maps run again.
pub(super) fn recoverable(
    entries: &serde_json::Map<String, Value>,
    maps: &[MapInput],
) -> Vec<Recovered> {
    let mut out: Vec<Recovered> = entries
        .values()
        .filter_map(|v| serde_json::from_value::<KeptMap>(v.clone()).ok())
        .filter_map(|k| {
            let i = maps.iter().position(|m| m.split.index == k.split)?;
            let input = &maps[i];
            let same_input = input.split.bytes == k.bytes
                && input.block.as_ref().map(|b| &b.block) == k.block.as_ref();
            Some(Recovered {
                map: MapId(i as u32),
                output: k.output.filter(|_| same_input)?,
                output_bytes: k.output_bytes,
                stats: k.stats,
            })
        })
        .collect();
    out.sort_by_key(|r| r.map);
    out.dedup_by_key(|r| r.map);
    out
}

/// What earlier attempts kept, read once at start. Nothing on a first attempt; an rm that
/// cannot say is logged and the job starts over.
pub(super) async fn read_kept(rm: &RmClient) -> serde_json::Map<String, Value> {
    let attempt = std::env::var("APP_ATTEMPT")
        .ok()
        .and_then(|a| a.parse::<u32>().ok());
    if attempt.unwrap_or(1) <= 1 {
        return Default::default();
    }
    let path = format!("/ws/v1/yard/apps/{}/recovery", rm.application);
    let kept = rm
        .call(reqwest::Method::GET, &path, None)
        .await
        .and_then(|v| {
            serde_json::from_value::<Recovery>(v)
                .context("the rm's recovery entries are unreadable")
        });
    match kept {
        Ok(recovery) => recovery.entries.into_iter().collect(),
        Err(e) => {
            log_line(&format!(
                "cannot read what earlier attempts kept, starting over: {e:#}"
            ));
            Default::default()
        }
    }
}

/// Sends the entries not yet sent (a batch at a time). A failed call keeps them for the next
/// one unless a newer entry of the same map came meanwhile; an entry the rm refuses (4xx, or
/// its cap reached) is dropped with a log line: it only costs a re-run after a crash.
pub(super) async fn send_kept(shared: &Shared, rm: &RmClient) {
    let batch: BTreeMap<String, Value> = {
        let mut s = shared.lock();
        let keys: Vec<String> = s.unsent.keys().take(KEEP_BATCH).cloned().collect();
        keys.into_iter()
            .filter_map(|k| s.unsent.remove_entry(&k))
            .collect()
    };
    if batch.is_empty() {
        return;
    }
    let path = format!("/ws/v1/yard/apps/{}/recovery", rm.application);
    let entries = RecoveryEntries { entries: batch };
    match rm.call_status(reqwest::Method::PUT, &path, &entries).await {
        Ok((status, _)) if status.is_success() => {}
        Ok((status, reply)) if status.is_client_error() || status.as_u16() == 507 => {
            log_line(&format!(
                "the rm refused {} recovery entries ({status}: {reply}); those maps would run again after a crash",
                entries.entries.len()
            ));
        }
        failed => {
            if let Err(e) = &failed {
                log_line(&format!("cannot keep recovery entries yet: {e:#}"));
            }
            let mut s = shared.lock();
            for (k, v) in entries.entries {
                s.unsent.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use yard_appmaster::apps::Split;

    use super::*;
    use crate::BlockRef;

    fn map(index: u32, bytes: u64, block: Option<&str>) -> MapInput {
        MapInput {
            split: Split { index, bytes },
            block: block.map(|b| BlockRef {
                dataset: "d".into(),
                block: b.into(),
                replicas: vec![],
                sha256: None,
            }),
            at: vec![],
            nodes: vec![],
        }
    }

    fn kept(split: u32, bytes: u64, block: Option<&str>, at: Option<&str>) -> (String, Value) {
        let k = KeptMap {
            split,
            bytes,
            block: block.map(Into::into),
            output: at.map(|node| OutputRef {
                split: Split {
                    index: split,
                    bytes,
                },
                node: node.into(),
                output: format!("1.1-{split}"),
            }),
            output_bytes: 7,
            stats: None,
        };
        (k.key(), serde_json::to_value(k).unwrap())
    }

    #[test]
    fn only_finished_maps_of_the_same_input_with_an_output_are_taken_back() {
        let maps = [
            map(0, 10, Some("b0")),
            map(1, 10, Some("b1")),
            map(2, 10, Some("b2")),
            map(3, 10, None),
        ];
        let entries: serde_json::Map<String, Value> = [
            kept(0, 10, Some("b0"), Some("http://n1")),
            kept(1, 10, Some("b1"), None), // lost after it finished
            kept(2, 10, Some("b2-rewritten"), Some("http://n1")), // the dataset changed
            kept(3, 11, None, Some("http://n2")), // another size
            kept(9, 10, None, Some("http://n2")), // no such split
            ("map-x".into(), json!({"garbage": true})),
        ]
        .into_iter()
        .collect();
        let back = recoverable(&entries, &maps);
        assert_eq!(back.len(), 1, "{back:?}");
        assert_eq!(
            (
                back[0].map,
                back[0].output.node.as_str(),
                back[0].output_bytes
            ),
            (MapId(0), "http://n1", 7)
        );
    }
}
