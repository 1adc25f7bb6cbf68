//! The cluster over the last hour, for the web UI's overview chart: what Hadoop's cluster
//! metrics say (allocated memory and vcores against the running nodes', containers, running
//! and pending applications, running nodes), one point per [`HISTORY_STEP_MS`] kept
//! [`HISTORY_SPAN_MS`]: a ring of at most 361 points, in memory only (a restarted rm starts a
//! new history; a gap in the points shows where it was down). Each point is the most of each
//! figure over the rm's ticks in its step, not one tick's reading: a job that ran between two
//! readings ten seconds apart would not show at all. The step still open is the last point.

use std::collections::VecDeque;

use yard_wire::replies::{ClusterHistory, HistoryPoint};

use super::Cluster;

/// One point per step: 360 to the hour.
pub const HISTORY_STEP_MS: i64 = 10_000;
/// Points older than this go.
pub const HISTORY_SPAN_MS: i64 = 3_600_000;

/// The closed points, oldest first, each at least [`HISTORY_STEP_MS`] after the one before,
/// and the open one (the current step's most so far).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    points: VecDeque<HistoryPoint>,
    open: Option<HistoryPoint>,
}

impl History {
    /// Takes `p` into the open step while it is less than a step after the step's start
    /// (each figure the larger of the two); else closes that step and opens one at `p`. A
    /// reading from before the open step's start (a clock set back) adds nothing.
    pub fn record(&mut self, p: HistoryPoint) {
        match &mut self.open {
            Some(o) if p.at_ms < o.at_ms => return,
            Some(o) if p.at_ms - o.at_ms < HISTORY_STEP_MS => {
                o.allocated_mb = o.allocated_mb.max(p.allocated_mb);
                o.total_mb = o.total_mb.max(p.total_mb);
                o.allocated_virtual_cores =
                    o.allocated_virtual_cores.max(p.allocated_virtual_cores);
                o.total_virtual_cores = o.total_virtual_cores.max(p.total_virtual_cores);
                o.containers_allocated = o.containers_allocated.max(p.containers_allocated);
                o.apps_running = o.apps_running.max(p.apps_running);
                o.apps_pending = o.apps_pending.max(p.apps_pending);
                o.active_nodes = o.active_nodes.max(p.active_nodes);
                return;
            }
            _ => {}
        }
        if let Some(closed) = self.open.replace(p) {
            self.points.push_back(closed);
        }
        while self
            .points
            .front()
            .is_some_and(|first| p.at_ms - first.at_ms > HISTORY_SPAN_MS)
        {
            self.points.pop_front();
        }
    }

    /// The points, as the route answers them: the closed ones, then the open step's.
    pub fn view(&self) -> ClusterHistory {
        ClusterHistory {
            step_ms: HISTORY_STEP_MS,
            span_ms: HISTORY_SPAN_MS,
            points: self.points.iter().chain(&self.open).copied().collect(),
        }
    }
}

impl Cluster {
    /// Records the cluster as it stands at `now_ms` (the tick calls this; most calls keep
    /// nothing, a step not having passed).
    pub(super) fn sample_history(&mut self, now_ms: i64) {
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

    #[test]
    fn a_point_is_the_most_of_its_step_so_a_short_job_between_readings_shows() {
        let mut h = History::default();
        h.record(at(0));
        // A job runs from 2 s to 6 s; the readings at 0 and 10 s see nothing of it.
        h.record(HistoryPoint {
            apps_running: 1,
            allocated_mb: 1024,
            ..at(3_000)
        });
        h.record(at(7_000));
        let open = h.view().points;
        assert_eq!(open.len(), 1, "the step is still open, and shown");
        assert_eq!(
            (open[0].at_ms, open[0].apps_running, open[0].allocated_mb),
            (0, 1, 1024)
        );
        h.record(at(10_000));
        let points = h.view().points;
        assert_eq!(times(&h), [0, 10_000]);
        assert_eq!((points[0].apps_running, points[1].apps_running), (1, 0));
    }
}
