//! The paper's figures (Figs. 5–6: each policy at every correlation level, over seeds), the
//! θ1 × θ2 grid, and a trace: the runs and the rows of [`ScansReport`] they make.

use serde::Serialize;
use yard_cluster::scans::Metric;

use super::workload::{trace_workload, workload};
use super::{MODEL, POLICIES, RunResult, SLOT_BYTES_PER_S, ScansSetup, run_all, workload_name};
use crate::experiment::par_map;

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

/// Every (level, metric, seed) of `setup`, in that nesting.
pub(super) fn tasks(setup: &ScansSetup) -> Vec<(u8, Metric, u64)> {
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
