//! The cluster over the last hour, for the web UI's overview chart: what Hadoop's cluster
//! metrics say (allocated memory and vcores against the running nodes', containers, running
//! and pending applications, running nodes), sampled on the rm's tick at most once every
//! [`HISTORY_STEP_MS`] and kept [`HISTORY_SPAN_MS`]: a ring of at most 361 points, in memory
//! only (a restarted rm starts a new history; a gap in the points shows where it was down).

use std::collections::VecDeque;

use yard_wire::replies::{ClusterHistory, HistoryPoint};

use super::Cluster;

/// At most one point this often: 360 to the hour.
pub const HISTORY_STEP_MS: i64 = 10_000;
/// Points older than this go.
pub const HISTORY_SPAN_MS: i64 = 3_600_000;

/// The points, oldest first, each at least [`HISTORY_STEP_MS`] after the one before.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    points: VecDeque<HistoryPoint>,
}

impl History {
    /// Keeps `p` unless it comes less than a step after the last point (or before it: a
    /// clock set back adds nothing until it passes the last point again).
    pub fn record(&mut self, p: HistoryPoint) {
        if self
            .points
            .back()
            .is_some_and(|last| p.at_ms - last.at_ms < HISTORY_STEP_MS)
        {
            return;
        }
        self.points.push_back(p);
        while self
            .points
            .front()
            .is_some_and(|first| p.at_ms - first.at_ms > HISTORY_SPAN_MS)
        {
            self.points.pop_front();
        }
    }

    /// The points, as the route answers them.
    pub fn view(&self) -> ClusterHistory {
        ClusterHistory {
            step_ms: HISTORY_STEP_MS,
            span_ms: HISTORY_SPAN_MS,
            points: self.points.iter().copied().collect(),
        }
    }
}

impl Cluster {
    /// Records the cluster as it stands at `now_ms` (the tick calls this; most calls keep
    /// nothing, a step not having passed).
    pub(super) fn sample_history(&mut self, now_ms: i64) {
        if self
            .history
            .points
            .back()
            .is_some_and(|last| now_ms - last.at_ms < HISTORY_STEP_MS)
        {
            return;
        }
        let m = self.metrics();
        self.history.record(HistoryPoint {
            at_ms: now_ms,
            allocated_mb: m.allocated_mb,
            total_mb: m.total_mb,
            allocated_virtual_cores: m.allocated_vcores,
            total_virtual_cores: m.total_vcores,
            containers_allocated: m.containers_allocated as u64,
            apps_running: m.apps_running as u64,
            apps_pending: m.apps_pending as u64,
            active_nodes: m.active_nodes as u64,
        });
    }

    /// The cluster over the last hour (`GET /ws/v1/yard/history`).
    pub fn history(&self) -> ClusterHistory {
        self.history.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at_ms: i64) -> HistoryPoint {
        HistoryPoint {
            at_ms,
            allocated_mb: 0,
            total_mb: 0,
            allocated_virtual_cores: 0,
            total_virtual_cores: 0,
            containers_allocated: 0,
            apps_running: 0,
            apps_pending: 0,
            active_nodes: 0,
        }
    }

    fn times(h: &History) -> Vec<i64> {
        h.view().points.iter().map(|p| p.at_ms).collect()
    }

    #[test]
    fn one_point_a_step_and_an_hour_of_them() {
        let mut h = History::default();
        for t in [0, 4_000, 9_999, 10_000, 15_000, 20_500, 5_000] {
            h.record(at(t));
        }
        assert_eq!(times(&h), [0, 10_000, 20_500]);
        // A tick a second for two hours: the last hour's points, a step apart.
        let mut h = History::default();
        for s in 0..=7_200 {
            h.record(at(s * 1_000));
        }
        let kept = times(&h);
        assert_eq!(kept.len(), 361);
        assert_eq!((kept[0], kept[360]), (3_600_000, 7_200_000));
        assert!(kept.windows(2).all(|w| w[1] - w[0] == HISTORY_STEP_MS));
    }
}
