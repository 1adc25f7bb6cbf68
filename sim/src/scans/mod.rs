//! Shared scans (seed 004 §4, Figs. 5–6): CIRCUMFLEX against FLEX and BATCH on the same
//! arrivals, through the policy code of `yard_cluster::scans`; and the same three on a SWIM trace
//! whose input paths name the datasets its jobs share, with the bytes each policy reads.
//!
//! **Model.** The paper's (§4): the map phase only, `S` map slots, each job a scan of one
//! dataset, a fluid allocation layer (the malleable schedule is recomputed on every arrival and
//! followed exactly until the next, §4 "computed new schedules … upon each new arrival"). Not
//! yard's discrete-event shared cluster (`shared.rs`): no tasks, locality, reduces or failures.
//!
//! **The seed's experiment** (§4; digest §4): 1000 arrivals of a Poisson process over
//! `T` = 100 min (the arrival times of a Poisson process given its count: sorted uniform draws);
//! `D` = 20 datasets whose popularity is Zipf-like `p_i ∝ i^(−θ1)` and whose sizes Zipf-like
//! `∝ r^(−θ2)` (θ = 1 Zipf, 0 uniform, as the paper states it; digest [AMB]); popularity and
//! size tied by the κ scheme (datasets by decreasing popularity — increasing for the negative
//! side — the `t`-th takes a size rank drawn from `[1, min(κ+t−1, D)]` minus those taken;
//! κ = 1, 6, 11, 16 and D: nine levels, 0 perfectly negative, 4 random, 8 perfectly
//! positive); sizes scaled so the unshared map work is `ρ·T·S` with ρ = 0.9, S = 100, f = 1;
//! BATCH's window W = 2 min. Each job's minimum is 1 slot and its maximum S ([INF]: the paper
//! does not give them). The default run is Fig. 5's θ1 = θ2 = 1 at every correlation level.
//!
//! **Deadlines** (yard's addition, issue 20 item 5; [`run_deadlines`]): the seed's mix with a
//! share of the jobs, drawn per job from the seed, carrying a Dart deadline (seed 001) of
//! arrival + slack × the job's time alone, the slack uniform in `[lo, hi]`; FLEX, CIRCUMFLEX and
//! CIRCUMFLEX-EDF on the same jobs. A deadline job not done by its deadline answers from the
//! fraction of its dataset scanned for it and leaves.
//!
//! **A trace** (yard's addition): every distinct input path is a dataset, every job a scan of
//! its path's dataset; a dataset's size is the largest input any of its jobs records ([INF]:
//! SWIM samples differ in size per job, and a shared scan reads the whole dataset), a job with
//! no path its own dataset of its own input. A map slot reads [`SLOT_BYTES_PER_S`].

//!
//! **Where.** This file holds the setup and one run of the three policies on a workload
//! ([`run_policy`]); `workload.rs` draws the seed's arrivals and datasets and reads a trace's,
//! `figures.rs` runs Figs. 5–6, the θ grid and a trace into [`ScansReport`]'s rows,
//! `deadlines.rs` the deadline variant, and `report.rs` writes the tables and plots.

mod deadlines;
mod figures;
mod report;
mod workload;

use serde::Serialize;
use yard_cluster::scans::{
    self, Completion, Dataset, Metric, Planner, PlannerConfig, Policy, ScanJob, ScanStats,
};

/// The model, as every output's header states it.
pub const MODEL: &str = "the paper's fluid map-phase model (seed 004 §4: S map slots, each job one scan of its dataset, the malleable schedule recomputed on every arrival and followed exactly until the next), not yard's discrete-event shared cluster";

/// A map slot's scan rate on a trace, bytes per second ([INF]: 64 MiB/s, one HDFS block of
/// 128 MiB in 2 s; only the trace's times depend on it, not its bytes read).
pub(crate) const SLOT_BYTES_PER_S: f64 = 64.0 * 1024.0 * 1024.0;

/// The policies in the tables' order.
pub(crate) const POLICIES: [&str; 3] = ["flex", "circumflex", "batch"];

/// The deadline variant's policies, in its tables' order.
pub(crate) const DEADLINE_POLICIES: [&str; 3] = ["flex", "circumflex", "circumflex-edf"];

/// The experiment's settings (defaults: the paper's §4 base case).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScansSetup {
    pub seed: u64,
    pub seeds: u64,
    /// Arrivals per run (§4: 1000).
    pub arrivals: usize,
    /// `D` (§4: 20).
    pub datasets: usize,
    /// `S` (§4: 100).
    pub slots: u32,
    /// `T`, seconds (§4: 100 min).
    pub horizon_s: f64,
    /// ρ (§4: 0.9).
    pub rho: f64,
    /// f (§4: 1).
    pub scan_fraction: f64,
    /// BATCH's W, seconds (§4: 2 min).
    pub window_s: f64,
    /// `M_j`, every job's maximum slots ([INF]: the paper gives none; default S).
    pub max_slots: u32,
    pub theta1: f64,
    pub theta2: f64,
    /// Correlation levels, 0 (perfectly negative) to 8 (perfectly positive).
    pub levels: Vec<u8>,
    pub metrics: Vec<Metric>,
}

impl Default for ScansSetup {
    fn default() -> ScansSetup {
        ScansSetup {
            seed: 1,
            seeds: 3,
            arrivals: 1000,
            datasets: 20,
            slots: 100,
            horizon_s: 6000.0,
            rho: 0.9,
            scan_fraction: 1.0,
            window_s: Policy::BATCH_WINDOW_S,
            max_slots: 100,
            theta1: 1.0,
            theta2: 1.0,
            levels: (0..=8).collect(),
            metrics: Metric::PAPER.to_vec(),
        }
    }
}

/// One policy's run under one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct RunResult {
    pub mean_response_s: f64,
    pub max_response_s: f64,
    pub mean_stretch: f64,
    pub max_stretch: f64,
    pub work_s: f64,
    pub bytes_read: f64,
    /// §4: per dataset the most jobs one scan served at once, averaged over the datasets used.
    pub avg_max_sharing: f64,
}

impl RunResult {
    /// The value of `metric`.
    pub fn value(&self, metric: Metric) -> f64 {
        match metric {
            Metric::AvgResponse => self.mean_response_s,
            Metric::MaxResponse => self.max_response_s,
            Metric::AvgStretch => self.mean_stretch,
            Metric::MaxStretch => self.max_stretch,
        }
    }
}

pub fn policy(name: &str, window_s: f64) -> Policy {
    match name {
        "circumflex" => Policy::Circumflex,
        "circumflex-edf" => Policy::CircumflexEdf,
        "batch" => Policy::Batch { window_s },
        _ => Policy::Flex,
    }
}

/// Every one of [`POLICIES`] on the same jobs, in that order.
fn run_all(
    datasets: &[Dataset],
    jobs: &[ScanJob],
    metric: Metric,
    setup: &ScansSetup,
) -> Result<[RunResult; 3], String> {
    let run = |name| {
        run_policy(
            datasets,
            jobs,
            policy(name, setup.window_s),
            metric,
            setup.slots,
            setup.scan_fraction,
        )
    };
    Ok([run(POLICIES[0])?, run(POLICIES[1])?, run(POLICIES[2])?])
}

/// Runs `policy` optimising `metric` over `jobs` (by arrival) on `slots` slots.
pub(crate) fn run_policy(
    datasets: &[Dataset],
    jobs: &[ScanJob],
    policy: Policy,
    metric: Metric,
    slots: u32,
    scan_fraction: f64,
) -> Result<RunResult, String> {
    let config = PlannerConfig {
        slots,
        metric,
        policy,
        scan_fraction,
    };
    let (done, stats) = answers(datasets, jobs, config)?;
    let n = done.len().max(1) as f64;
    let index: std::collections::HashMap<u64, &ScanJob> = jobs.iter().map(|j| (j.id, j)).collect();
    let stretches: Vec<f64> = done
        .iter()
        .map(|c| {
            let j = index[&c.job];
            // W_j: the job alone on min(M_j, S) slots (App. A.2).
            c.response_s() / scans::isolated_s(j, &datasets[j.dataset], slots).max(1e-3)
        })
        .collect();
    let used: Vec<usize> = stats
        .max_sharing
        .iter()
        .copied()
        .filter(|&m| m > 0)
        .collect();
    Ok(RunResult {
        mean_response_s: done.iter().map(|c| c.response_s()).sum::<f64>() / n,
        max_response_s: done.iter().map(|c| c.response_s()).fold(0.0, f64::max),
        mean_stretch: stretches.iter().sum::<f64>() / n,
        max_stretch: stretches.iter().copied().fold(0.0, f64::max),
        work_s: stats.work_s,
        bytes_read: stats.bytes_read,
        avg_max_sharing: used.iter().sum::<usize>() as f64 / used.len().max(1) as f64,
    })
}

/// Every job of `jobs` (by arrival) through a planner to its answer, and what it did.
fn answers(
    datasets: &[Dataset],
    jobs: &[ScanJob],
    config: PlannerConfig,
) -> Result<(Vec<Completion>, ScanStats), String> {
    let mut planner = Planner::new(config, datasets.to_vec())?;
    let mut done = Vec::with_capacity(jobs.len());
    for &job in jobs {
        done.extend(planner.arrive(job)?);
    }
    done.extend(planner.advance(f64::INFINITY));
    if done.len() != jobs.len() {
        return Err(format!(
            "{} of {} jobs did not finish under {}",
            jobs.len() - done.len(),
            jobs.len(),
            config.policy.name()
        ));
    }
    Ok((done, planner.stats().clone()))
}

/// The name of a correlation level's workload.
pub fn workload_name(setup: &ScansSetup, level: u8) -> String {
    format!(
        "theta1={} theta2={} corr={level}",
        setup.theta1, setup.theta2
    )
}

/// The §4 setup both tables open with.
fn setup_line(s: &ScansSetup) -> String {
    format!(
        "{} arrivals over {} min, D = {} datasets, θ1 = {}, θ2 = {}, S = {} map slots, ρ = {}, f = {}",
        s.arrivals,
        s.horizon_s / 60.0,
        s.datasets,
        s.theta1,
        s.theta2,
        s.slots,
        s.rho,
        s.scan_fraction
    )
}

pub use deadlines::{DeadlineReport, DeadlineRow, Deadlines, deadline_markdown, run_deadlines};
pub use figures::{Row, ScansReport, run, run_grid, run_trace};
pub use report::{grid_markdown, markdown, write_plots};
pub use workload::{kappa, workload};

#[cfg(test)]
mod tests;
