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

use std::fmt::Write as _;

use rand::{RngExt, SeedableRng};
use serde::Serialize;
use yard_appmaster::policy::Rng;
use yard_cluster::scans::{
    self, Completion, Dataset, Metric, Outcome, Planner, PlannerConfig, Policy, ScanJob, ScanStats,
};

use crate::experiment::par_map;
use crate::table::{Cell, Column, Field, Table, Unit};

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

/// κ for a correlation level (digest §4): levels 0–3 negative with κ = 1, 6, 11, 16; 4 random
/// (κ = D); 5–8 positive with κ = 16, 11, 6, 1. `(κ, positive)`.
pub fn kappa(level: u8, datasets: usize) -> (usize, bool) {
    match level {
        0..=3 => (1 + 5 * usize::from(level), false),
        4 => (datasets, true),
        _ => (1 + 5 * usize::from(8 - level.min(8)), true),
    }
}

/// One run's datasets and jobs for the seed's experiment.
pub fn workload(setup: &ScansSetup, level: u8, seed: u64) -> (Vec<Dataset>, Vec<ScanJob>) {
    let d = setup.datasets.max(1);
    let mut rng = Rng::seed_from_u64(seed ^ (0x5eed_0004 + u64::from(level) * 0x9e37_79b9));
    // Popularity of dataset i (0 = most popular): ∝ (i+1)^−θ1.
    let pop: Vec<f64> = (0..d)
        .map(|i| ((i + 1) as f64).powf(-setup.theta1))
        .collect();
    // Size of the r-th largest (0-based): ∝ (r+1)^−θ2.
    let size_of_rank: Vec<f64> = (0..d)
        .map(|r| ((r + 1) as f64).powf(-setup.theta2))
        .collect();
    // The κ scheme: size ranks for datasets taken by decreasing (positive) or increasing
    // (negative) popularity.
    let (k, positive) = kappa(level, d);
    let mut rank = vec![usize::MAX; d];
    let mut taken = vec![false; d];
    for t in 0..d {
        let i = if positive { t } else { d - 1 - t };
        let hi = (k + t).min(d); // ranks 1..=hi, i.e. 0..hi
        let free: Vec<usize> = (0..hi).filter(|&r| !taken[r]).collect();
        let r = free[rng.random_range(0..free.len())];
        taken[r] = true;
        rank[i] = r;
    }
    let raw: Vec<f64> = (0..d).map(|i| size_of_rank[rank[i]]).collect();
    // Arrivals: a Poisson process's times given their count, and each one's dataset by
    // popularity.
    let total_pop: f64 = pop.iter().sum();
    let mut times: Vec<f64> = (0..setup.arrivals)
        .map(|_| rng.random::<f64>() * setup.horizon_s)
        .collect();
    times.sort_by(f64::total_cmp);
    let picks: Vec<usize> = times
        .iter()
        .map(|_| {
            let mut u = rng.random::<f64>() * total_pop;
            for (i, &p) in pop.iter().enumerate() {
                if u < p {
                    return i;
                }
                u -= p;
            }
            d - 1
        })
        .collect();
    // Scale the sizes: unshared map work = ρ·T·S.
    let unshared: f64 = picks.iter().map(|&i| raw[i]).sum();
    let scale = match unshared > 0.0 {
        true => setup.rho * setup.horizon_s * f64::from(setup.slots) / unshared,
        false => 1.0,
    };
    let datasets = raw
        .iter()
        .map(|&r| Dataset {
            scan_s: r * scale,
            bytes: r * scale * SLOT_BYTES_PER_S,
        })
        .collect();
    let jobs = times
        .iter()
        .zip(&picks)
        .enumerate()
        .map(|(n, (&t, &i))| ScanJob {
            id: n as u64,
            dataset: i,
            arrival_s: t,
            min_slots: 1,
            max_slots: setup.max_slots.clamp(1, setup.slots),
            weight: 1.0,
            deadline_s: None,
        })
        .collect();
    (datasets, jobs)
}

/// A trace's datasets and jobs (module doc): one dataset per input path. Errors name what to fix.
pub(crate) fn trace_workload(
    w: &yard_workload::Workload,
    max_slots: u32,
) -> Result<(Vec<Dataset>, Vec<ScanJob>, usize), String> {
    if w.jobs.is_empty() {
        return Err("the trace has no jobs".into());
    }
    let mut paths: Vec<(String, u64)> = Vec::new();
    let mut datasets: Vec<u64> = Vec::new();
    let mut of_job = Vec::with_capacity(w.jobs.len());
    for job in &w.jobs {
        let bytes = job.input_bytes();
        match &job.input_path {
            Some(p) => match paths.iter().position(|(q, _)| q == p) {
                Some(i) => {
                    let d = paths[i].1 as usize;
                    datasets[d] = datasets[d].max(bytes);
                    of_job.push(d);
                }
                None => {
                    paths.push((p.clone(), datasets.len() as u64));
                    of_job.push(datasets.len());
                    datasets.push(bytes);
                }
            },
            None => {
                of_job.push(datasets.len());
                datasets.push(bytes);
            }
        }
    }
    if paths.is_empty() {
        return Err(
            "the trace names no input paths: shared scans need SWIM's withInputPaths columns (7 to 9 columns, the 7th the input path)"
                .into(),
        );
    }
    let first = w.jobs.iter().map(|j| j.submit_ms).min().unwrap_or(0);
    let mut jobs: Vec<ScanJob> = w
        .jobs
        .iter()
        .zip(&of_job)
        .enumerate()
        .map(|(n, (j, &d))| ScanJob {
            id: n as u64,
            dataset: d,
            arrival_s: (j.submit_ms - first) as f64 / 1000.0,
            min_slots: 1,
            max_slots,
            weight: 1.0,
            deadline_s: None,
        })
        .collect();
    jobs.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let datasets = datasets
        .into_iter()
        .map(|b| {
            // A job reading nothing still takes a moment (no zero stretch denominators).
            let b = (b as f64).max(1.0);
            Dataset {
                scan_s: b / SLOT_BYTES_PER_S,
                bytes: b,
            }
        })
        .collect();
    Ok((datasets, jobs, paths.len()))
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

/// One row: a policy under a metric on a workload, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub policy: String,
    pub workload: String,
    pub metric: String,
    /// The mean response time of the run optimising `metric`, seconds (mean over seeds).
    pub mean_response_s: f64,
    /// The metric's value (mean over seeds): seconds for response times, a ratio for stretch.
    pub value: f64,
    pub value_sd: f64,
    /// The metric's value over FLEX's on the same arrivals (the paper's ratio), mean over seeds.
    pub ratio_to_flex: f64,
    pub ratio_sd: f64,
    /// Map work over FLEX's (Fig. 5b).
    pub work_ratio: f64,
    /// CIRCUMFLEX: the average max concurrent subjobs per dataset; BATCH: the average max batch.
    pub avg_max_sharing: f64,
    /// Bytes read (mean over seeds): with `--trace`, the figure the issue asks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_read: Option<f64>,
    /// What the paper prints for this point, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper: Option<String>,
}

/// The experiment's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScansReport {
    pub seed: u64,
    pub seeds: u64,
    pub model: String,
    pub setup: ScansSetup,
    /// With a trace: its name, jobs and input paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    pub rows: Vec<Row>,
}

/// The paper's figure for CIRCUMFLEX or BATCH over FLEX at θ1 = θ2 = 1 (Fig. 5a, §4).
fn paper(policy: &str, metric: Metric, level: u8, fig5: bool) -> Option<String> {
    if policy == "flex" {
        return None;
    }
    let circ = policy == "circumflex";
    Some(match (metric, fig5, level) {
        (Metric::AvgResponse, true, 0) if circ => "0.81".into(),
        (Metric::AvgResponse, true, 8) if circ => "0.47".into(),
        (Metric::AvgResponse, true, _) if circ => "0.47–0.81".into(),
        (Metric::AvgResponse, true, 0) => "1.48".into(),
        (Metric::AvgResponse, true, 8) => "1.11".into(),
        (Metric::AvgResponse, true, _) => "1.11–1.48".into(),
        (Metric::AvgResponse, false, _) if circ => "≤ 0.98 (Fig. 6a)".into(),
        (Metric::AvgResponse, false, _) => "≥ 0.97 (Fig. 6a)".into(),
        _ if circ => "< 1, no figure printed".into(),
        _ => "> 1, no figure printed".into(),
    })
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    (m, v.sqrt())
}

/// One (level, metric, seed): the three policies' results, or why not.
type TaskResult = Result<[RunResult; 3], String>;

/// Per seed and policy, the result, for one (workload, metric).
type SeedRuns = Vec<[RunResult; 3]>;

fn rows_of(
    workload: &str,
    metric: Metric,
    cells: &SeedRuns,
    paper_of: impl Fn(&str) -> Option<String>,
    bytes: bool,
) -> Vec<Row> {
    POLICIES
        .iter()
        .enumerate()
        .map(|(p, name)| {
            let values: Vec<f64> = cells.iter().map(|c| c[p].value(metric)).collect();
            let ratios: Vec<f64> = cells
                .iter()
                .map(|c| c[p].value(metric) / c[0].value(metric))
                .collect();
            let works: Vec<f64> = cells.iter().map(|c| c[p].work_s / c[0].work_s).collect();
            let (value, value_sd) = mean_sd(&values);
            let (ratio, ratio_sd) = mean_sd(&ratios);
            // The mean over the seeds of one figure of this policy's runs.
            let mean_of = |f: fn(&RunResult) -> f64| {
                mean_sd(&cells.iter().map(|c| f(&c[p])).collect::<Vec<_>>()).0
            };
            Row {
                policy: (*name).to_owned(),
                workload: workload.to_owned(),
                metric: metric.name().to_owned(),
                mean_response_s: mean_of(|r| r.mean_response_s),
                value,
                value_sd,
                ratio_to_flex: ratio,
                ratio_sd,
                work_ratio: mean_sd(&works).0,
                avg_max_sharing: mean_of(|r| r.avg_max_sharing),
                bytes_read: bytes.then(|| mean_of(|r| r.bytes_read)),
                paper: paper_of(name),
            }
        })
        .collect()
}

/// The name of a correlation level's workload.
pub fn workload_name(setup: &ScansSetup, level: u8) -> String {
    format!(
        "theta1={} theta2={} corr={level}",
        setup.theta1, setup.theta2
    )
}

/// Every (level, metric, seed) of `setup`, in that nesting.
fn tasks(setup: &ScansSetup) -> Vec<(u8, Metric, u64)> {
    setup
        .levels
        .iter()
        .flat_map(|&l| {
            setup.metrics.iter().flat_map(move |&m| {
                (0..setup.seeds).map(move |s| (l, m, setup.seed.wrapping_add(s)))
            })
        })
        .collect()
}

/// Runs the seed's experiment: every level × metric × seed, the three policies on the same
/// arrivals, on threads; `progress(done, total)` after each (level, metric, seed).
pub fn run(
    setup: &ScansSetup,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<ScansReport, String> {
    let tasks = tasks(setup);
    let results: Vec<TaskResult> = par_map(
        &tasks,
        |_, &(level, metric, seed)| {
            let (datasets, jobs) = workload(setup, level, seed);
            run_all(&datasets, &jobs, metric, setup)
        },
        progress,
    );
    let fig5 = setup.theta1 == 1.0 && setup.theta2 == 1.0;
    let mut rows = Vec::new();
    for &level in &setup.levels {
        for &metric in &setup.metrics {
            let mut cells: SeedRuns = Vec::new();
            for (i, t) in tasks.iter().enumerate() {
                if t.0 == level && t.1 == metric {
                    cells.push(results[i].clone()?);
                }
            }
            rows.extend(rows_of(
                &workload_name(setup, level),
                metric,
                &cells,
                |p| paper(p, metric, level, fig5),
                false,
            ));
        }
    }
    Ok(ScansReport::of(setup, rows))
}

impl ScansReport {
    /// The report of `rows` run on the seed's mix under `setup`.
    fn of(setup: &ScansSetup, rows: Vec<Row>) -> ScansReport {
        ScansReport {
            seed: setup.seed,
            seeds: setup.seeds,
            model: MODEL.to_owned(),
            setup: setup.clone(),
            trace: None,
            rows,
        }
    }
}

/// The three policies on a trace's jobs (one run per metric: nothing is drawn), with the bytes
/// each reads.
pub fn run_trace(
    setup: &ScansSetup,
    name: &str,
    w: &yard_workload::Workload,
) -> Result<ScansReport, String> {
    let (datasets, jobs, paths) = trace_workload(w, setup.max_slots.clamp(1, setup.slots))?;
    let mut rows = Vec::new();
    let workload = format!("trace {name}");
    for &metric in &setup.metrics {
        let cells = vec![run_all(&datasets, &jobs, metric, setup)?];
        rows.extend(rows_of(&workload, metric, &cells, |_| None, true));
    }
    Ok(ScansReport {
        seed: setup.seed,
        seeds: 1,
        model: MODEL.to_owned(),
        setup: setup.clone(),
        trace: Some(format!(
            "{name}: {} jobs over {paths} input paths ({} datasets with the jobs without a path); a map slot reads {} MiB/s",
            jobs.len(),
            datasets.len(),
            SLOT_BYTES_PER_S / (1024.0 * 1024.0)
        )),
        rows,
    })
}

/// The tables, beside the paper's figures.
pub fn markdown(r: &ScansReport) -> String {
    let mut t = String::new();
    let s = &r.setup;
    let _ = writeln!(t, "Model: {}.\n", r.model);
    match &r.trace {
        Some(trace) => {
            let _ = writeln!(
                t,
                "Trace {trace}; S = {} map slots, f = {}, BATCH W = {} s.\n",
                s.slots, s.scan_fraction, s.window_s
            );
        }
        None => {
            let seeds = match r.seeds {
                1 => format!("seed {}", r.seed),
                n => format!("seeds {}–{} (mean ± sd)", r.seed, r.seed + n - 1),
            };
            let _ = writeln!(
                t,
                "{}, BATCH W = {} s; {seeds}. Correlation 0 = perfectly negative, 4 = random, 8 = perfectly positive (seed 004 §4). Paper: Fig. 5a (θ1 = θ2 = 1, average response time); its Figs. 6b/6c print no numbers for stretch.\n",
                setup_line(s),
                s.window_s
            );
        }
    }
    for &metric in &s.metrics {
        let _ = writeln!(t, "### {}\n", metric.name());
        let bytes = r.trace.is_some();
        // The seed 004 tables have always aligned every column left.
        let fixed = |h: &str, d: usize| Column::new(h, Unit::Fixed(d)).left();
        let paper = || Column::text("paper").missing("—");
        let mut columns = vec![
            Column::text("workload"),
            fixed("flex", 2),
            fixed("circumflex", 2),
            fixed("ratio", 2),
            paper(),
            fixed("batch", 2),
            fixed("ratio", 2),
            paper(),
            fixed("work ratio C / B", 2),
            fixed("max sharing C / B", 1),
            fixed("mean response s F / C / B", 1),
        ];
        if bytes {
            columns.push(
                Column::new("bytes read F / C / B", Unit::Gib)
                    .left()
                    .missing("—"),
            );
            columns.push(
                Column::new("bytes cut C / B", Unit::PercentSign(0))
                    .left()
                    .missing("—"),
            );
        }
        let mut table = Table::new(columns);
        let mut workloads: Vec<&str> = Vec::new();
        for row in r.rows.iter().filter(|x| x.metric == metric.name()) {
            if !workloads.contains(&row.workload.as_str()) {
                workloads.push(&row.workload);
            }
        }
        for w in workloads {
            let get = |p: &str| {
                r.rows
                    .iter()
                    .find(|x| x.metric == metric.name() && x.workload == w && x.policy == p)
            };
            let (Some(f), Some(c), Some(b)) = (get("flex"), get("circumflex"), get("batch")) else {
                continue;
            };
            let v = |x: &Row| match r.seeds {
                1 => Cell::Num(x.value),
                _ => Cell::Spread(x.value, x.value_sd),
            };
            let ratio = |x: &Row| match r.seeds {
                1 => Cell::Num(x.ratio_to_flex),
                _ => Cell::Spread(x.ratio_to_flex, x.ratio_sd),
            };
            let paper = |x: &Row| x.paper.clone().map_or(Cell::Missing, Cell::Text);
            let three =
                |g: fn(&Row) -> f64| Cell::Joined(vec![g(f).into(), g(c).into(), g(b).into()]);
            let mut cells = vec![
                w.into(),
                v(f),
                v(c),
                ratio(c),
                paper(c),
                v(b),
                ratio(b),
                paper(b),
                Cell::Joined(vec![c.work_ratio.into(), b.work_ratio.into()]),
                Cell::Joined(vec![c.avg_max_sharing.into(), b.avg_max_sharing.into()]),
                three(|x| x.mean_response_s),
            ];
            if bytes {
                match (f.bytes_read, c.bytes_read, b.bytes_read) {
                    (Some(fb), Some(cb), Some(bb)) => {
                        let cut = |x: f64| match fb > 0.0 {
                            true => Cell::Num(1.0 - x / fb),
                            false => Cell::Missing,
                        };
                        cells.push(Cell::Joined(vec![fb.into(), cb.into(), bb.into()]));
                        cells.push(Cell::Joined(vec![cut(cb), cut(bb)]));
                    }
                    _ => cells.extend([Cell::Missing, Cell::Missing]),
                }
            }
            table.row(cells);
        }
        let _ = writeln!(t, "{}", table.markdown());
    }
    if r.trace.is_none() && s.metrics.contains(&Metric::AvgResponse) {
        let ratios: Vec<f64> = r
            .rows
            .iter()
            .filter(|x| x.policy == "circumflex" && x.metric == Metric::AvgResponse.name())
            .map(|x| x.ratio_to_flex)
            .collect();
        if !ratios.is_empty() {
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(0.0, f64::max);
            let _ = writeln!(
                t,
                "CIRCUMFLEX / FLEX, average response time: {lo:.2}–{hi:.2} over the levels (paper, Fig. 5a: 0.47–0.81; issue 20's goal: ≤ 0.8 on the seed's mix)."
            );
        }
    }
    t
}

/// The deadline variant's settings (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Deadlines {
    /// The share of the jobs that carry a deadline, each drawn alone.
    pub share: f64,
    /// The slack's bounds: deadline = arrival + U[lo, hi] × the job's time alone.
    pub slack_lo: f64,
    pub slack_hi: f64,
}

impl Deadlines {
    /// Half the jobs, slack U[1, 3]: from Dart's ideal deadline (μ = 1, its C3; the time alone
    /// here is on all the job may hold) to three times it.
    pub const DEFAULT: Deadlines = Deadlines {
        share: 0.5,
        slack_lo: 1.0,
        slack_hi: 3.0,
    };

    /// Gives deadlines to `jobs` with draws of their own (the workload's draws unchanged).
    pub fn assign(&self, jobs: &mut [ScanJob], datasets: &[Dataset], slots: u32, seed: u64) {
        let mut rng = Rng::seed_from_u64(seed ^ 0xdead_1e05);
        for j in jobs {
            let (carries, u) = (rng.random::<f64>() < self.share, rng.random::<f64>());
            let slack = self.slack_lo + u * (self.slack_hi - self.slack_lo);
            j.deadline_s = carries
                .then(|| j.arrival_s + slack * scans::isolated_s(j, &datasets[j.dataset], slots));
        }
    }
}

/// One run's answers, split by whether the job had a deadline (additive over runs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tally {
    deadline_jobs: usize,
    full: usize,
    partial: usize,
    empty: usize,
    processed: f64,
    other_jobs: usize,
    other_response_s: f64,
}

impl Tally {
    fn of(done: &[Completion]) -> Tally {
        let mut t = Tally::default();
        for c in done {
            match c.outcome() {
                None => {
                    t.other_jobs += 1;
                    t.other_response_s += c.response_s();
                    continue;
                }
                Some(Outcome::Full) => t.full += 1,
                Some(Outcome::Partial) => t.partial += 1,
                Some(Outcome::Empty) => t.empty += 1,
            }
            t.deadline_jobs += 1;
            t.processed += c.processed;
        }
        t
    }

    fn add(&mut self, o: &Tally) {
        self.deadline_jobs += o.deadline_jobs;
        self.full += o.full;
        self.partial += o.partial;
        self.empty += o.empty;
        self.processed += o.processed;
        self.other_jobs += o.other_jobs;
        self.other_response_s += o.other_response_s;
    }

    fn row(&self, policy: &str, workload: &str, metric: Metric) -> DeadlineRow {
        // 0/0 = NaN (JSON null) when there are no such jobs.
        let of_deadline = |x: f64| x / self.deadline_jobs as f64;
        DeadlineRow {
            policy: policy.to_owned(),
            workload: workload.to_owned(),
            metric: metric.name().to_owned(),
            deadline_jobs: self.deadline_jobs,
            full_by_deadline_fraction: of_deadline(self.full as f64),
            partial_fraction: of_deadline(self.partial as f64),
            empty_fraction: of_deadline(self.empty as f64),
            mean_processed_fraction: of_deadline(self.processed),
            other_jobs: self.other_jobs,
            other_mean_response_s: self.other_response_s / self.other_jobs as f64,
        }
    }
}

/// One row of the deadline variant: a policy on a workload (a correlation level, or
/// `all levels`), pooled over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeadlineRow {
    pub policy: String,
    pub workload: String,
    pub metric: String,
    /// The jobs with a deadline, over the seeds: the next four figures are over them (NaN, JSON
    /// null, when there are none).
    pub deadline_jobs: usize,
    /// Whole answers by the deadline.
    pub full_by_deadline_fraction: f64,
    /// Answers at the deadline from a fraction `0 < f < 1` (met, approximately, in Dart's terms).
    pub partial_fraction: f64,
    /// Answers at the deadline from nothing (not met).
    pub empty_fraction: f64,
    /// The fraction of its dataset scanned for a job when it answered (1 when whole).
    pub mean_processed_fraction: f64,
    /// The jobs without a deadline, over the seeds (the next figure NaN, JSON null, without).
    pub other_jobs: usize,
    /// Their mean response time, seconds: what deadline-first costs them.
    pub other_mean_response_s: f64,
}

/// The deadline variant's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeadlineReport {
    pub seed: u64,
    pub seeds: u64,
    pub model: String,
    pub setup: ScansSetup,
    pub deadlines: Deadlines,
    pub rows: Vec<DeadlineRow>,
}

/// The name of the rows pooled over every correlation level.
pub(crate) const ALL_LEVELS: &str = "all levels";

/// The deadline variant: every level × metric × seed of `setup`, [`DEADLINE_POLICIES`] on the
/// same jobs with the same deadlines; rows per level and over all levels, pooled over the seeds.
pub fn run_deadlines(
    setup: &ScansSetup,
    deadlines: &Deadlines,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<DeadlineReport, String> {
    let tasks = tasks(setup);
    let results: Vec<Result<[Tally; 3], String>> = par_map(
        &tasks,
        |_, &(level, metric, seed)| {
            let (datasets, mut jobs) = workload(setup, level, seed);
            deadlines.assign(&mut jobs, &datasets, setup.slots, seed ^ u64::from(level));
            let mut out = [Tally::default(); 3];
            for (t, name) in out.iter_mut().zip(DEADLINE_POLICIES) {
                let config = PlannerConfig {
                    slots: setup.slots,
                    metric,
                    policy: policy(name, setup.window_s),
                    scan_fraction: setup.scan_fraction,
                };
                *t = Tally::of(&answers(&datasets, &jobs, config)?.0);
            }
            Ok(out)
        },
        progress,
    );
    let mut rows = Vec::new();
    for &metric in &setup.metrics {
        let mut all = [Tally::default(); 3];
        for &level in &setup.levels {
            let mut sum = [Tally::default(); 3];
            for (t, r) in tasks.iter().zip(&results) {
                if (t.0, t.1) == (level, metric) {
                    let r = r.clone()?;
                    for p in 0..3 {
                        sum[p].add(&r[p]);
                        all[p].add(&r[p]);
                    }
                }
            }
            let w = workload_name(setup, level);
            rows.extend((0..3).map(|p| sum[p].row(DEADLINE_POLICIES[p], &w, metric)));
        }
        rows.extend((0..3).map(|p| all[p].row(DEADLINE_POLICIES[p], ALL_LEVELS, metric)));
    }
    Ok(DeadlineReport {
        seed: setup.seed,
        seeds: setup.seeds,
        model: MODEL.to_owned(),
        setup: setup.clone(),
        deadlines: *deadlines,
        rows,
    })
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

/// The deadline variant's table, saying which jobs each figure is over.
pub fn deadline_markdown(r: &DeadlineReport) -> String {
    let (s, d) = (&r.setup, &r.deadlines);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Model: {}.
",
        r.model
    );
    let _ = writeln!(
        t,
        "{}, M_j = {}; seeds {}–{}. Deadlines: each job with probability {}, at arrival + U[{}, {}] × its time alone (its scan on min(M_j, S) slots); a job not done by its deadline answers from the fraction of its dataset scanned for it and leaves (Dart). FLEX, CIRCUMFLEX (the paper's order) and CIRCUMFLEX-EDF (deadline jobs' chains first where that costs no deadline the paper's plan meets, re-checked at every re-plan) on the same jobs and deadlines.\n",
        setup_line(s),
        s.max_slots,
        r.seed,
        r.seed + r.seeds.max(1) - 1,
        d.share,
        d.slack_lo,
        d.slack_hi
    );
    let _ = writeln!(
        t,
        "Full / partial / empty / processed: over the deadline jobs of all the seeds together (partial: answered at the deadline from 0 < f < 1, met in Dart's terms; empty: f = 0, not met). Other response: the mean response time of the jobs without a deadline.\n"
    );
    for &metric in &s.metrics {
        let _ = writeln!(t, "### {}\n", metric.name());
        // Every column left, as this table has always printed.
        let fixed = |h: &str, d: usize| Column::new(h, Unit::Fixed(d)).left();
        let count = |h: &str| Column::new(h, Unit::Count).left();
        let fields: &[Field<&DeadlineRow>] = &[
            (Column::text("workload"), |x| x.workload.as_str().into()),
            (Column::text("policy"), |x| x.policy.as_str().into()),
            (count("deadline jobs"), |x| x.deadline_jobs.into()),
            (fixed("full by deadline", 3), |x| {
                x.full_by_deadline_fraction.into()
            }),
            (fixed("partial", 3), |x| x.partial_fraction.into()),
            (fixed("empty", 3), |x| x.empty_fraction.into()),
            (fixed("mean processed fraction", 3), |x| {
                x.mean_processed_fraction.into()
            }),
            (count("other jobs"), |x| x.other_jobs.into()),
            (fixed("other mean response s", 1), |x| {
                x.other_mean_response_s.into()
            }),
        ];
        let rows = r.rows.iter().filter(|x| x.metric == metric.name());
        let table = Table::of(fields, rows);
        let _ = writeln!(t, "{}", table.markdown());
    }
    t
}

/// Fig. 6's 25 settings: θ1, θ2 ∈ {0, .25, .5, .75, 1}.
pub(crate) const GRID_THETAS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Fig. 6: every (θ1, θ2) of [`GRID_THETAS`] at every level of `setup`, the rows of all of them
/// in one report (`setup`'s own θs are ignored).
pub fn run_grid(
    setup: &ScansSetup,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<ScansReport, String> {
    let n = (GRID_THETAS.len() * GRID_THETAS.len()) as u64;
    let mut rows = Vec::new();
    let mut i = 0;
    for &theta1 in &GRID_THETAS {
        for &theta2 in &GRID_THETAS {
            let s = ScansSetup {
                theta1,
                theta2,
                ..setup.clone()
            };
            let r = run(&s, &|done, total| progress(i * total + done, n * total))?;
            rows.extend(r.rows);
            i += 1;
        }
    }
    Ok(ScansReport::of(setup, rows))
}

/// Fig. 6's summary of a grid report: per metric and (θ1, θ2), the min / median / max over the
/// correlation levels of CIRCUMFLEX's and BATCH's ratios to FLEX.
pub fn grid_markdown(r: &ScansReport) -> String {
    let mut t = String::new();
    let s = &r.setup;
    let _ = writeln!(t, "Model: {}.\n", r.model);
    let _ = writeln!(
        t,
        "Fig. 6: θ1, θ2 ∈ {{0, .25, .5, .75, 1}}, correlation levels {:?}, {} arrivals, S = {}, ρ = {}, W = {} s, M_j = {}; seeds {}–{}. Each cell: min / median / max over the levels of the ratio to FLEX (each a mean over the seeds).\n",
        s.levels,
        s.arrivals,
        s.slots,
        s.rho,
        s.window_s,
        s.max_slots,
        r.seed,
        r.seed + r.seeds.max(1) - 1
    );
    let stats = |xs: &mut Vec<f64>| -> (f64, f64, f64) {
        xs.sort_by(f64::total_cmp);
        match xs.len() {
            0 => (f64::NAN, f64::NAN, f64::NAN),
            n => (xs[0], xs[n / 2], xs[n - 1]),
        }
    };
    for &metric in &s.metrics {
        let _ = writeln!(t, "### {}\n", metric.name());
        let mut table = Table::new(vec![
            Column::new("θ1", Unit::Plain).left(),
            Column::new("θ2", Unit::Plain).left(),
            Column::new("circumflex / flex", Unit::Fixed(2)).left(),
            Column::new("batch / flex", Unit::Fixed(2)).left(),
        ]);
        let (mut worst_c, mut best_b) = (f64::NEG_INFINITY, f64::INFINITY);
        for &theta1 in &GRID_THETAS {
            for &theta2 in &GRID_THETAS {
                let prefix = format!("theta1={theta1} theta2={theta2} corr=");
                let of = |p: &str| -> Vec<f64> {
                    r.rows
                        .iter()
                        .filter(|x| {
                            x.policy == p
                                && x.metric == metric.name()
                                && x.workload.starts_with(&prefix)
                        })
                        .map(|x| x.ratio_to_flex)
                        .collect()
                };
                let (c0, c1, c2) = stats(&mut of("circumflex"));
                let (b0, b1, b2) = stats(&mut of("batch"));
                worst_c = worst_c.max(c2);
                best_b = best_b.min(b0);
                table.row(vec![
                    theta1.into(),
                    theta2.into(),
                    Cell::Joined(vec![c0.into(), c1.into(), c2.into()]),
                    Cell::Joined(vec![b0.into(), b1.into(), b2.into()]),
                ]);
            }
        }
        let _ = writeln!(t, "{}", table.markdown());
        let paper = match metric {
            Metric::AvgResponse => {
                " (paper, Fig. 6a: worst CIRCUMFLEX .98, best BATCH .97; CIRCUMFLEX always below 1)"
            }
            _ => {
                " (paper, Figs. 6b/6c: no numbers; CIRCUMFLEX always much better than FLEX, BATCH never nearly as good)"
            }
        };
        let _ = writeln!(
            t,
            "Worst CIRCUMFLEX / FLEX {worst_c:.2}, best BATCH / FLEX {best_b:.2}{paper}.\n"
        );
    }
    t
}

/// SVG: per metric, each policy's ratio to FLEX against the correlation level.
pub fn write_plots(dir: &std::path::Path, r: &ScansReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if r.trace.is_some() {
        return Ok(());
    }
    for &metric in &r.setup.metrics {
        let series: Vec<(String, Vec<(f64, f64)>)> = POLICIES
            .iter()
            .map(|&p| {
                let points = r
                    .setup
                    .levels
                    .iter()
                    .filter_map(|&l| {
                        let w = workload_name(&r.setup, l);
                        r.rows
                            .iter()
                            .find(|x| x.policy == p && x.metric == metric.name() && x.workload == w)
                            .map(|x| (f64::from(l), x.ratio_to_flex))
                    })
                    .collect();
                (p.to_owned(), points)
            })
            .collect();
        crate::plot::timeline(
            &dir.join(format!("shared-scans-{}.svg", metric.name())),
            &format!(
                "{}: ratio to FLEX (θ1 = {}, θ2 = {})",
                metric.name(),
                r.setup.theta1,
                r.setup.theta2
            ),
            "correlation level (0 negative, 4 random, 8 positive)",
            "ratio to FLEX",
            &series,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
