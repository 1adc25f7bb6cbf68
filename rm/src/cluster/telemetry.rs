//! Nodes' load: the last [`TELEMETRY_HISTORY`] samples of each node, what the overload
//! classifier reads of a sample ([`node_load`]), and the classifier's verdicts on nodes and on
//! the applications it keeps waiting.

use std::collections::VecDeque;

use yard_wire::protocol::Resource;
use yard_wire::telemetry::NodeTelemetry;

use yard_cluster::classifier::{LoadSource, NodeLoad, NodeOverload};

use super::Cluster;

/// How many load samples the rm keeps per node: a minute at the nodemanagers' default
/// heartbeat of 1 s, enough to see a trend beside the load averages; older samples drop out.
pub const TELEMETRY_HISTORY: usize = 60;

/// A node's last [`TELEMETRY_HISTORY`] load samples with the time the rm received each (ms
/// since the epoch), oldest first, in the order they arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryRing {
    samples: VecDeque<(i64, NodeTelemetry)>,
}

impl TelemetryRing {
    /// Adds the newest sample, dropping the oldest beyond [`TELEMETRY_HISTORY`].
    pub fn push(&mut self, at_ms: i64, sample: NodeTelemetry) {
        if self.samples.len() == TELEMETRY_HISTORY {
            self.samples.pop_front();
        }
        self.samples.push_back((at_ms, sample));
    }

    /// Oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (i64, &NodeTelemetry)> + '_ {
        self.samples.iter().map(|(at, t)| (*at, t))
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The newest sample.
    pub fn last(&self) -> Option<(i64, &NodeTelemetry)> {
        self.samples.back().map(|(at, t)| (*at, t))
    }
}

/// What the overload classifier reads of a node's sample, by the rule's load source; `None`
/// before the node's first sample (an older nodemanager reports no memory total).
///
/// `host`: the machine's 1-minute load average and CPU over its logical CPUs, its free memory,
/// and its disks' read+write rate over the node's disk rate. `own`: the nodemanager's process
/// tree — the cores it keeps busy stand for the load average (a tree has none of its own),
/// over the vcores the node offers; its resident memory against the memory the node offers;
/// its disk IO over the disk rate. Nodemanagers sharing a host read the same host load, so
/// `own` is what tells them apart.
pub fn node_load(t: &NodeTelemetry, source: LoadSource, offered: Resource) -> Option<NodeLoad> {
    if t.memory_total_bytes == 0 {
        return None;
    }
    let disk = |bytes_per_s: f64| {
        if t.disk_io_rate_bytes_per_s > 0.0 {
            bytes_per_s / t.disk_io_rate_bytes_per_s
        } else {
            0.0
        }
    };
    Some(match source {
        LoadSource::Host => NodeLoad {
            cores: if t.cores > 0 { t.cores } else { offered.vcores },
            load_1m: t.load_1m,
            cpu: (t.cpu_percent / 100.0).clamp(0.0, 1.0),
            memory_free: 1.0 - t.memory_used_bytes as f64 / t.memory_total_bytes as f64,
            disk: disk(t.disk_read_bytes_per_s + t.disk_write_bytes_per_s),
        },
        LoadSource::Own => {
            let cores = offered.vcores.max(1);
            let busy = t.own.cpu_percent / 100.0;
            let offered_bytes = (offered.memory_mb as f64 * 1048576.0).max(1.0);
            NodeLoad {
                cores,
                load_1m: busy,
                cpu: (busy / f64::from(cores)).clamp(0.0, 1.0),
                memory_free: (1.0 - t.own.rss_bytes as f64 / offered_bytes).max(0.0),
                disk: disk(t.own.read_bytes_per_s + t.own.write_bytes_per_s),
            }
        }
    })
}

impl Cluster {
    /// A node's recent load samples with the time the rm received each (ms since the epoch),
    /// oldest first; at most [`TELEMETRY_HISTORY`]. Empty for an unknown node, or one that has
    /// sent none since the rm started (the store's last sample excepted).
    pub fn telemetry_history(&self, node_id: &str) -> impl Iterator<Item = (i64, &NodeTelemetry)> {
        self.telemetry_history
            .get(node_id)
            .into_iter()
            .flat_map(TelemetryRing::iter)
    }

    /// The overload classifier's verdict on a node and the counts behind it; `None` when the
    /// classifier is off or the node unknown.
    pub fn node_overload(&self, node_id: &str) -> Option<NodeOverload> {
        let idx = self.node_index.get(node_id)?;
        Some(self.scheduler.overload()?.node(*idx))
    }

    /// Why the application's tasks are waiting, when the overload classifier refused every
    /// node with room for them in the last pass: one line for its diagnostics.
    pub fn refusal(&self, id: &str) -> Option<String> {
        let app = self.app_index.iter().find(|(_, a)| a.as_str() == id)?.0;
        let r = self.scheduler.refusal(*app)?;
        let nodes: Vec<String> = r
            .nodes
            .iter()
            .map(|(n, p)| {
                let name = self.node_names.get(n).map_or("?", String::as_str);
                format!("{name} (P(good) {p:.2})")
            })
            .collect();
        let more = r.refused.saturating_sub(r.nodes.len());
        Some(format!(
            "waiting: the overload classifier refuses every node with room for a task: {}{}",
            nodes.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classifier_reads_the_host_or_the_nodemanagers_own_tree() {
        use yard_wire::telemetry::ProcessTreeUsage;
        let offered = Resource {
            memory_mb: 1024,
            vcores: 4,
        };
        assert_eq!(
            node_load(&NodeTelemetry::default(), LoadSource::Host, offered),
            None,
            "no sample yet"
        );
        let t = NodeTelemetry {
            cpu_percent: 50.0,
            load_1m: 3.0,
            memory_total_bytes: 1000,
            memory_used_bytes: 750,
            disk_read_bytes_per_s: 30.0,
            disk_write_bytes_per_s: 20.0,
            cores: 8,
            disk_io_rate_bytes_per_s: 100.0,
            own: ProcessTreeUsage {
                cpu_percent: 200.0,
                rss_bytes: 256 << 20,
                read_bytes_per_s: 10.0,
                write_bytes_per_s: 0.0,
                processes: 5,
            },
            ..NodeTelemetry::default()
        };
        let host = node_load(&t, LoadSource::Host, offered).unwrap();
        assert_eq!(
            (
                host.cores,
                host.load_1m,
                host.cpu,
                host.memory_free,
                host.disk
            ),
            (8, 3.0, 0.5, 0.25, 0.5)
        );
        // Own: two cores busy of the 4 offered, a quarter of the offered memory resident.
        let own = node_load(&t, LoadSource::Own, offered).unwrap();
        assert_eq!(
            (own.cores, own.load_1m, own.cpu, own.memory_free, own.disk),
            (4, 2.0, 0.5, 0.75, 0.1)
        );
        // An older nodemanager reports no cores: the offered vcores stand in.
        let old = NodeTelemetry { cores: 0, ..t };
        assert_eq!(node_load(&old, LoadSource::Host, offered).unwrap().cores, 4);
    }

    #[test]
    fn the_telemetry_ring_keeps_the_newest_samples_oldest_first() {
        let sample = |load| NodeTelemetry {
            load_1m: load,
            ..NodeTelemetry::default()
        };
        let mut ring = TelemetryRing::default();
        assert!(ring.is_empty() && ring.last().is_none());
        for i in 0..(TELEMETRY_HISTORY as i64 + 25) {
            ring.push(1_000 + i, sample(i as f64));
            assert_eq!(ring.len(), (i as usize + 1).min(TELEMETRY_HISTORY));
        }
        let times: Vec<i64> = ring.iter().map(|(at, _)| at).collect();
        let first = 1_000 + 25;
        assert_eq!(
            times,
            (first..first + TELEMETRY_HISTORY as i64).collect::<Vec<_>>()
        );
        assert!(ring.iter().all(|(at, t)| t.load_1m == (at - 1_000) as f64));
        assert_eq!(ring.last().map(|(at, _)| at), times.last().copied());
    }
}
