//! The master's Prometheus metrics (`GET /metrics` on its umbilical, beside `/status`, text
//! format 0.0.4): the task policy's decisions as a counter by decision, the bytes reducers
//! shuffled, and, read from the job at scrape time, its maps and reduces by state, the
//! policy's current estimate, the deadline, the time elapsed and the fraction processed.
//!
//! One [`Registry`] per master, kept in the master's state (so the figures are read under the
//! same lock the umbilical feeds the policy under). Labels are bounded: the policy's name
//! (the task sampler runs under `full` before the job proper), the phase, the decision, a
//! task's state. Never the job's, application's or a container's id: the rm's targets tell
//! Prometheus which master a scrape came from (its address).

use prometheus::{
    Encoder, GaugeVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};
use yard_appmaster::policy::{Decision, TaskRef};

use super::state::State;

/// The content type of the Prometheus text format.
pub(super) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The `decision` label: what a task policy decided.
pub(super) const DECISIONS: [&str; 8] = [
    "launch",
    "speculate",
    "kill",
    "close_map_phase",
    "cut_reduce",
    "sample_reduce_input",
    "release",
    "finish",
];

/// A task's state, the `state` label of maps and reduces: `dropped` maps are those the policy
/// will not run (Dart's early map-phase close).
const TASK_STATES: [&str; 4] = ["pending", "running", "done", "dropped"];

pub(super) struct MasterMetrics {
    registry: Registry,
    decisions: IntCounterVec,
    shuffle_bytes: IntCounter,
    maps: IntGaugeVec,
    reduces: IntGaugeVec,
    estimate: GaugeVec,
    deadline: GaugeVec,
    elapsed: GaugeVec,
    processed: GaugeVec,
    containers: IntGauge,
    info: IntGaugeVec,
}

impl MasterMetrics {
    pub(super) fn new() -> MasterMetrics {
        let registry = Registry::new();
        let reg = |c: Box<dyn prometheus::core::Collector>| {
            registry
                .register(c)
                .expect("metric names are unique and valid");
        };
        let int_gauges = |name: &str, help: &str, labels: &[&str]| {
            let g = IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let gauges = |name: &str, help: &str| {
            let g = GaugeVec::new(Opts::new(name, help), &["policy"]).expect("a valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let decisions = IntCounterVec::new(
            Opts::new(
                "yard_mr_master_decisions_total",
                "Decisions of the master's task policy, by policy and decision (launch: a map or reduce attempt; speculate: a speculative copy of a running map)",
            ),
            &["policy", "decision"],
        )
        .expect("a valid metric");
        reg(Box::new(decisions.clone()));
        let shuffle_bytes = IntCounter::new(
            "yard_mr_master_shuffle_bytes_total",
            "Map output bytes the job's reducers reported fetched",
        )
        .expect("a valid metric");
        reg(Box::new(shuffle_bytes.clone()));
        let containers = IntGauge::new(
            "yard_mr_master_containers",
            "Task containers the master holds",
        )
        .expect("a valid metric");
        reg(Box::new(containers.clone()));
        MasterMetrics {
            decisions,
            shuffle_bytes,
            maps: int_gauges(
                "yard_mr_master_maps",
                "The job's maps by state (dropped: the policy closed the map phase without them)",
                &["policy", "state"],
            ),
            reduces: int_gauges(
                "yard_mr_master_reduces",
                "The job's reduces by state",
                &["policy", "state"],
            ),
            estimate: gauges(
                "yard_mr_master_estimate_seconds",
                "The task policy's current estimate of the job's time from its start (absent while it makes none)",
            ),
            deadline: gauges(
                "yard_mr_master_deadline_seconds",
                "The deadline the task policy works to, seconds from the job's start",
            ),
            elapsed: gauges(
                "yard_mr_master_elapsed_seconds",
                "Seconds since the job (or the task sampler) started",
            ),
            processed: gauges(
                "yard_mr_master_processed_ratio",
                "The share of the job's input its finished maps processed",
            ),
            containers,
            info: int_gauges(
                "yard_mr_master_info",
                "The task policy running (1), and whether it is the task sampler or the job",
                &["policy", "phase"],
            ),
            registry,
        }
    }

    /// A phase starts under `policy`: its decisions start at 0, so none appears late.
    pub(super) fn phase_started(&self, policy: &str) {
        for decision in DECISIONS {
            self.decisions.with_label_values(&[policy, decision]);
        }
    }

    /// Counts one decision of `policy`'s.
    pub(super) fn decided(&self, policy: &str, decision: &Decision) {
        let label = match decision {
            Decision::LaunchMap {
                speculative: true, ..
            } => "speculate",
            Decision::LaunchMap { .. } | Decision::LaunchReduce { .. } => "launch",
            Decision::Kill(_) => "kill",
            Decision::CloseMapPhase { .. } => "close_map_phase",
            Decision::Reforecast { .. } => "reforecast",
            Decision::CutReduce { .. } => "cut_reduce",
            Decision::SampleReduceInput { .. } => "sample_reduce_input",
            Decision::Release(_) => "release",
            Decision::Finish(_) => "finish",
            // Bookkeeping, not a decision an operator watches.
            Decision::Want(_) | Decision::MarkLocalOnly(_) | Decision::WakeAt(_) => return,
        };
        self.decisions.with_label_values(&[policy, label]).inc();
    }

    pub(super) fn shuffled(&self, bytes: u64) {
        self.shuffle_bytes.inc_by(bytes);
    }

    /// Reads the job's state into the gauges, then every metric in the text format.
    pub(super) fn scrape(&self, state: &State) -> String {
        self.refresh(state);
        let mut out = Vec::new();
        if let Err(e) = prometheus::TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            super::state::log_line(&format!("cannot encode the metrics: {e}"));
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// Reads the job's state into the gauges (also as a phase ends, before its job is gone).
    pub(super) fn refresh(&self, state: &State) {
        self.containers
            .set(state.containers.values().filter(|h| !h.released).count() as i64);
        // Between phases, and once the job is over, the last phase's figures stay: a scrape
        // after the end (the rm lists a finished master for a while) sees how it ended.
        if let Some(job) = &state.job {
            for g in [&self.maps, &self.reduces, &self.info] {
                g.reset();
            }
            for g in [
                &self.estimate,
                &self.deadline,
                &self.elapsed,
                &self.processed,
            ] {
                g.reset();
            }
            let policy = job.policy.name();
            let now = job.now();
            let p = job.policy.progress();
            let (mut maps_running, mut reduces_running) = (
                std::collections::HashSet::new(),
                std::collections::HashSet::new(),
            );
            for live in job.attempts.values().filter(|l| !l.ended) {
                match live.task {
                    TaskRef::Map(m) => maps_running.insert(m.0),
                    TaskRef::Reduce(r) => reduces_running.insert(r.0),
                };
            }
            let maps_running = (maps_running.len() as u32).min(p.maps.saturating_sub(p.maps_done));
            // Closed: what is neither in `k` nor waiting to run again is never run.
            let dropped = if p.map_phase_closed {
                p.maps.saturating_sub(p.k + p.restarts_waiting)
            } else {
                0
            };
            let maps = [
                p.maps.saturating_sub(p.maps_done + maps_running + dropped),
                maps_running,
                p.maps_done,
                dropped,
            ];
            let reduces_running =
                (reduces_running.len() as u32).min(p.reduces.saturating_sub(p.reduces_done));
            let reduces = [
                p.reduces.saturating_sub(p.reduces_done + reduces_running),
                reduces_running,
                p.reduces_done,
                0,
            ];
            for (i, state) in TASK_STATES.into_iter().enumerate() {
                self.maps
                    .with_label_values(&[policy, state])
                    .set(i64::from(maps[i]));
                if state != "dropped" {
                    self.reduces
                        .with_label_values(&[policy, state])
                        .set(i64::from(reduces[i]));
                }
            }
            if let Some(e) = job
                .policy
                .estimate(now)
                .map(|e| e.total)
                .filter(|e| e.is_finite() && *e >= 0.0)
            {
                self.estimate.with_label_values(&[policy]).set(e);
            }
            // A job without a deadline has no series (not a far number).
            if let Some(deadline) = job.deadline.filter(|d| d.is_finite()) {
                self.deadline.with_label_values(&[policy]).set(deadline);
            }
            self.elapsed.with_label_values(&[policy]).set(now.max(0.0));
            self.processed
                .with_label_values(&[policy])
                .set(p.processed_fraction());
            let phase = if job.sampler { "sampling" } else { "job" };
            self.info.with_label_values(&[policy, phase]).set(1);
        }
    }
}
