//! ARIA's evaluation of the cluster policies (seed 000 §IV): its synthetic Facebook workload
//! (Table I, `workloads::facebook_synthetic`) on one cluster of 64 nodes with a map and a
//! reduce slot each, under EDF, MinEDF and MinEDF-WC, the mean inter-arrival time swept; the
//! digest's metrics 1–5 (papers/aria.md §1.7) beside Table II's simulated values and the
//! claims Figs. 1–2 make.
//!
//! yard's model of ARIA's cluster: 64 nodes × 2 containers, every task in a container of its
//! own (`PolicyConfig::one_task_per_container`, ARIA's slots), masters running `full` (ARIA's
//! jobs read all their input). yard's containers are not typed: a node's two may run two maps,
//! where ARIA's have one map and one reduce slot. Deadlines are ARIA's: `U[1, 2]·T_J`, `T_J` the
//! job alone on the whole cluster. Each run is a seed: the same jobs (tasks and arrival
//! order) at every inter-arrival time, their gaps scaled.

use serde::Serialize;
use yard_appmaster::policy::{PolicyKind, Seconds};
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;

use crate::engine::Experiment;
use crate::report::Outcomes;
use crate::shared::{self, DeadlineFactor, SharedJob, SharedResult};
use crate::table::{Cell, Column, Field, Printable, Row, Table, Unit};
use crate::workloads::{self, WorkloadOptions};

/// What to run.
#[derive(Debug, Clone)]
pub struct AriaSetup {
    /// Jobs per run (Table I's 1000).
    pub jobs: usize,
    /// Mean inter-arrival times swept, seconds.
    pub interarrivals: Vec<Seconds>,
    /// Runs (seeds `experiment.seed`, +1, …) per point; every figure is their mean.
    pub runs: u64,
    pub rm_policies: Vec<RmPolicy>,
    pub experiment: Experiment,
}

impl AriaSetup {
    /// ARIA's: 1000 jobs, EDF, MinEDF and MinEDF-WC, 64 × 2 containers a task each, the
    /// inter-arrival from high load to low.
    pub fn aria(base: &Experiment) -> AriaSetup {
        let mut experiment = base.clone();
        experiment.cluster.nodes = 64;
        experiment.cluster.containers_per_node = 2;
        experiment.policy.one_task_per_container = true;
        AriaSetup {
            jobs: 1000,
            interarrivals: vec![100.0, 200.0, 400.0, 800.0, 1600.0],
            runs: 3,
            rm_policies: vec![RmPolicy::Edf, RmPolicy::MinEdf, RmPolicy::MinEdfWc],
            experiment,
        }
    }
}

/// One (cluster policy, inter-arrival) point, each figure the mean over the runs. The names
/// are the issue's `--json` fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AriaRow {
    pub rm_policy: String,
    pub mean_interarrival_s: f64,
    /// The jobs' task-seconds over the cluster's container-seconds while they arrive: above
    /// 1, work arrives faster than the cluster can do it.
    pub offered_load: f64,
    pub jobs: usize,
    /// ARIA's metric 2.
    pub missed_fraction: f64,
    /// ARIA's metric 1: Σ over missed jobs of (completion − D)/D (a fraction; ×100 for %).
    pub relative_deadline_exceeded: f64,
    /// ARIA's metric 3: from arrival to completion, seconds.
    pub mean_completion_s: f64,
    /// ARIA's metrics 4 and 5 (MinEDF-WC only; 0 elsewhere): containers granted beyond a
    /// job's quota in its map and in its reduce stage, and above-quota map tasks killed.
    pub extra_map_tasks: f64,
    pub extra_reduce_tasks: f64,
    pub killed_map_tasks: f64,
    /// Jobs that never completed (the day's limit), per run; counted as missed.
    pub unanswered: f64,
}

/// Table II's simulated values (seed 000; the testbed's are within 10 % of them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperRow {
    pub rm_policy: &'static str,
    pub relative_deadline_exceeded: f64,
    pub missed_fraction: f64,
    pub mean_completion_s: f64,
    pub extra_map_tasks: Option<f64>,
    pub extra_reduce_tasks: Option<f64>,
    pub killed_map_tasks: Option<f64>,
}

pub(crate) const TABLE_II: [PaperRow; 3] = [
    PaperRow {
        rm_policy: "edf",
        relative_deadline_exceeded: 0.8379,
        missed_fraction: 0.20,
        mean_completion_s: 1360.0,
        extra_map_tasks: None,
        extra_reduce_tasks: None,
        killed_map_tasks: None,
    },
    PaperRow {
        rm_policy: "minedf",
        relative_deadline_exceeded: 0.6973,
        missed_fraction: 0.17,
        mean_completion_s: 1110.0,
        extra_map_tasks: None,
        extra_reduce_tasks: None,
        killed_map_tasks: None,
    },
    PaperRow {
        rm_policy: "minedf-wc",
        relative_deadline_exceeded: 0.4687,
        missed_fraction: 0.10,
        mean_completion_s: 1240.0,
        extra_map_tasks: Some(336.0),
        extra_reduce_tasks: Some(89.0),
        killed_map_tasks: Some(3.94),
    },
];

/// One of Fig. 1's claims at one inter-arrival time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    pub claim: &'static str,
    pub mean_interarrival_s: f64,
    /// `None` when a policy it compares was not run.
    pub holds: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AriaReport {
    pub seed: u64,
    pub runs: u64,
    pub rows: Vec<AriaRow>,
    pub paper: Vec<PaperRow>,
    pub claims: Vec<Claim>,
}

/// Runs the experiment; `progress(done, total)` after each day.
pub fn run(setup: &AriaSetup, progress: &(dyn Fn(u64, u64) + Sync)) -> AriaReport {
    let exp = &setup.experiment;
    let per_run = (setup.interarrivals.len() * setup.rm_policies.len()) as u64;
    let total = setup.runs * per_run;
    // Per run, per (inter-arrival, rm policy): the day's results and stats.
    let mut points: Vec<Vec<(f64, f64, PointSum)>> = Vec::new();
    for r in 0..setup.runs {
        let mut run_exp = exp.clone();
        run_exp.seed = exp.seed.wrapping_add(r);
        let options = WorkloadOptions {
            seed: run_exp.seed,
            ..WorkloadOptions::default()
        }
        .with_model(&run_exp.model);
        // Arrivals at unit mean gap, scaled below: the same jobs at every load.
        let jobs = workloads::facebook_synthetic(setup.jobs, 1.0, &options);
        let base = shared::prepare(jobs, &run_exp, DeadlineFactor::ARIA, 1.0);
        let work: f64 = base.iter().map(|j| j.job.task_seconds()).sum();
        let slots = f64::from(exp.cluster.nodes * exp.cluster.containers_per_node.max(1));
        let day = |ia: f64, rm: RmPolicy| {
            let jobs: Vec<SharedJob> = base
                .iter()
                .map(|j| SharedJob {
                    arrival: j.arrival * ia,
                    ..j.clone()
                })
                .collect();
            let (results, stats) = shared::simulate_day(&jobs, rm, PolicyKind::Full, &run_exp);
            PointSum::of(&results, &stats)
        };
        // The runs follow one another: the days before this run's are done.
        let before = r * per_run;
        let days = shared::each_day(&setup.interarrivals, &setup.rm_policies, day, &|d, _| {
            progress(before + d, total)
        });
        points.push(
            days.into_iter()
                .map(|((ia, _), sum)| {
                    let span = ia * (setup.jobs.max(1) as f64);
                    (ia, work / (span * slots), sum)
                })
                .collect(),
        );
    }
    let mut rows = Vec::new();
    let per_point = setup.interarrivals.len() * setup.rm_policies.len();
    for i in 0..per_point {
        let (ia, rm) = (
            setup.interarrivals[i / setup.rm_policies.len()],
            setup.rm_policies[i % setup.rm_policies.len()],
        );
        let runs: Vec<&(f64, f64, PointSum)> = points.iter().map(|p| &p[i]).collect();
        let mean = |f: &dyn Fn(&PointSum) -> f64| {
            runs.iter().map(|(_, _, s)| f(s)).sum::<f64>() / runs.len().max(1) as f64
        };
        rows.push(AriaRow {
            rm_policy: rm.name().to_owned(),
            mean_interarrival_s: ia,
            offered_load: runs.iter().map(|(_, l, _)| l).sum::<f64>() / runs.len().max(1) as f64,
            jobs: setup.jobs,
            missed_fraction: mean(&|s| s.missed),
            relative_deadline_exceeded: mean(&|s| s.exceeded),
            mean_completion_s: mean(&|s| s.completion),
            extra_map_tasks: mean(&|s| s.extra_map),
            extra_reduce_tasks: mean(&|s| s.extra_reduce),
            killed_map_tasks: mean(&|s| s.killed_map),
            unanswered: mean(&|s| s.unanswered),
        });
    }
    let claims = claims(&rows, &setup.interarrivals);
    AriaReport {
        seed: exp.seed,
        runs: setup.runs,
        rows,
        paper: TABLE_II.to_vec(),
        claims,
    }
}

/// One day's metrics.
#[derive(Debug, Clone, Copy)]
struct PointSum {
    missed: f64,
    exceeded: f64,
    completion: f64,
    extra_map: f64,
    extra_reduce: f64,
    killed_map: f64,
    unanswered: f64,
}

impl PointSum {
    fn of(results: &[SharedResult], stats: &shared::DayStats) -> PointSum {
        let o = Outcomes::of(results.iter().map(|r| &r.result));
        PointSum {
            missed: o.missed_fraction,
            exceeded: o.relative_deadline_exceeded,
            // ARIA's mean over no answered job: 0.
            completion: o.mean_completion_s.unwrap_or(0.0),
            extra_map: stats.spare_map_allocations as f64,
            extra_reduce: (stats.spare_allocations - stats.spare_map_allocations) as f64,
            killed_map: stats.spare_map_kills as f64,
            unanswered: o.unanswered as f64,
        }
    }
}

/// Fig. 1's claims at every inter-arrival time.
fn claims(rows: &[AriaRow], interarrivals: &[f64]) -> Vec<Claim> {
    let mut out = Vec::new();
    for &ia in interarrivals {
        let at = |rm: &str| {
            rows.iter()
                .find(|r| r.rm_policy == rm && r.mean_interarrival_s == ia)
        };
        let (edf, minedf, wc) = (at("edf"), at("minedf"), at("minedf-wc"));
        let mut claim = |claim: &'static str, holds: Option<bool>| {
            out.push(Claim {
                claim,
                mean_interarrival_s: ia,
                holds,
            })
        };
        claim(
            "MinEDF and MinEDF-WC exceed deadlines less than EDF (Fig. 1 left)",
            edf.zip(minedf).zip(wc).map(|((e, m), w)| {
                m.relative_deadline_exceeded < e.relative_deadline_exceeded
                    && w.relative_deadline_exceeded < e.relative_deadline_exceeded
            }),
        );
        claim(
            "MinEDF-WC misses the fewest deadlines (Fig. 1 center)",
            edf.zip(minedf).zip(wc).map(|((e, m), w)| {
                w.missed_fraction <= e.missed_fraction && w.missed_fraction <= m.missed_fraction
            }),
        );
        claim(
            "MinEDF-WC completes jobs soonest on average (Fig. 1 right)",
            edf.zip(minedf).zip(wc).map(|((e, m), w)| {
                w.mean_completion_s <= e.mean_completion_s
                    && w.mean_completion_s <= m.mean_completion_s
            }),
        );
    }
    out
}

/// The report as markdown: the rows, Table II beside, the claims.
pub fn markdown(r: &AriaReport) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "seed {} (+{} runs, each figure their mean): ARIA's Facebook workload, {} jobs per run, 64 × 2 containers a task each, masters running `full`, deadlines U[1, 2]·T_J\n",
        r.seed,
        r.runs.saturating_sub(1),
        r.rows.first().map_or(0, |x| x.jobs)
    );
    t += &Table::rows(&r.rows).markdown();
    let _ = write!(
        t,
        "\nTable II (ARIA's simulation; its inter-arrival time is not given):\n\n{}",
        Table::rows(&r.paper).markdown()
    );
    let _ = write!(
        t,
        "\nFig. 1's claims:\n\n{}",
        Table::rows(&r.claims).markdown()
    );
    t
}

impl Row for AriaRow {
    fn fields() -> Vec<Field<AriaRow>> {
        vec![
            (Column::text("rm policy"), |x| x.rm_policy.as_str().into()),
            (Column::new("mean inter-arrival s", Unit::Plain), |x| {
                x.mean_interarrival_s.into()
            }),
            (Column::new("offered load", Unit::Fixed(2)), |x| {
                x.offered_load.into()
            }),
            (Column::new("missed %", Unit::Percent(1)), |x| {
                x.missed_fraction.into()
            }),
            (
                Column::new("relative deadline exceeded %", Unit::Percent(1)),
                |x| x.relative_deadline_exceeded.into(),
            ),
            (Column::new("mean completion s", Unit::Fixed(0)), |x| {
                x.mean_completion_s.into()
            }),
            (Column::new("extra map tasks", Unit::Fixed(1)), |x| {
                x.extra_map_tasks.into()
            }),
            (Column::new("extra reduce tasks", Unit::Fixed(1)), |x| {
                x.extra_reduce_tasks.into()
            }),
            (Column::new("map tasks killed", Unit::Fixed(2)), |x| {
                x.killed_map_tasks.into()
            }),
            (Column::new("unanswered", Unit::Fixed(1)), |x| {
                x.unanswered.into()
            }),
        ]
    }
}

impl Row for PaperRow {
    fn fields() -> Vec<Field<PaperRow>> {
        // ARIA prints no figure for the policies that lend no containers.
        let na = |h: &str| Column::new(h, Unit::Plain).missing("NA");
        vec![
            (Column::text("rm policy"), |p| p.rm_policy.into()),
            (Column::new("missed %", Unit::Percent(0)), |p| {
                p.missed_fraction.into()
            }),
            (
                Column::new("relative deadline exceeded %", Unit::Percent(2)),
                |p| p.relative_deadline_exceeded.into(),
            ),
            (Column::new("mean completion s", Unit::Fixed(0)), |p| {
                p.mean_completion_s.into()
            }),
            (na("extra map tasks"), |p| p.extra_map_tasks.into()),
            (na("extra reduce tasks"), |p| p.extra_reduce_tasks.into()),
            (na("map tasks killed"), |p| p.killed_map_tasks.into()),
        ]
    }
}

impl Row for Claim {
    fn fields() -> Vec<Field<Claim>> {
        vec![
            (Column::new("mean inter-arrival s", Unit::Plain), |c| {
                c.mean_interarrival_s.into()
            }),
            (Column::text("claim"), |c| c.claim.into()),
            (Column::text("holds"), |c| match c.holds {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => Cell::Missing,
            }),
        ]
    }
}

impl Printable for AriaReport {
    fn text(&self) -> String {
        markdown(self)
    }
}

/// Writes one SVG per metric against the mean inter-arrival time, a line per cluster policy:
/// `rm-policies-<metric>.svg` in `dir`.
pub fn write_plots(dir: &std::path::Path, r: &AriaReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    type Metric = (&'static str, &'static str, fn(&AriaRow) -> f64);
    let metrics: [Metric; 6] = [
        ("missed", "missed deadlines (%)", |x| {
            100.0 * x.missed_fraction
        }),
        ("relative-exceeded", "relative deadline exceeded (%)", |x| {
            100.0 * x.relative_deadline_exceeded
        }),
        ("completion", "mean completion (s)", |x| x.mean_completion_s),
        ("extra-map", "extra map tasks", |x| x.extra_map_tasks),
        ("extra-reduce", "extra reduce tasks", |x| {
            x.extra_reduce_tasks
        }),
        ("killed", "map tasks killed", |x| x.killed_map_tasks),
    ];
    let mut policies: Vec<&str> = Vec::new();
    for x in &r.rows {
        if !policies.contains(&x.rm_policy.as_str()) {
            policies.push(&x.rm_policy);
        }
    }
    for (name, label, f) in metrics {
        let series: Vec<(String, Vec<(f64, f64)>)> = policies
            .iter()
            .map(|p| {
                let points = r
                    .rows
                    .iter()
                    .filter(|x| x.rm_policy == *p)
                    .map(|x| (x.mean_interarrival_s, f(x)))
                    .collect();
                (p.to_string(), points)
            })
            .collect();
        crate::plot::lines(
            &dir.join(format!("rm-policies-{name}.svg")),
            &format!("ARIA's Facebook workload: {label}"),
            "mean inter-arrival time (s)",
            label,
            &series,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rm: &str, ia: f64, missed: f64, exceeded: f64, completion: f64) -> AriaRow {
        AriaRow {
            rm_policy: rm.into(),
            mean_interarrival_s: ia,
            offered_load: 0.5,
            jobs: 10,
            missed_fraction: missed,
            relative_deadline_exceeded: exceeded,
            mean_completion_s: completion,
            extra_map_tasks: 0.0,
            extra_reduce_tasks: 0.0,
            killed_map_tasks: 0.0,
            unanswered: 0.0,
        }
    }

    #[test]
    fn fig_1s_claims_are_judged_at_each_load() {
        let rows = [
            row("edf", 100.0, 0.2, 0.8, 1300.0),
            row("minedf", 100.0, 0.17, 0.7, 1100.0),
            row("minedf-wc", 100.0, 0.1, 0.5, 1200.0),
            row("edf", 200.0, 0.1, 0.3, 900.0),
            row("minedf", 200.0, 0.1, 0.4, 950.0),
            row("minedf-wc", 200.0, 0.1, 0.2, 800.0),
        ];
        let holds: Vec<Option<bool>> = claims(&rows, &[100.0, 200.0, 300.0])
            .iter()
            .map(|c| c.holds)
            .collect();
        assert_eq!(
            holds,
            [
                // Table II's shape: both MinEDFs exceed less, WC misses fewest, MinEDF is
                // quickest.
                Some(true),
                Some(true),
                Some(false),
                // MinEDF exceeds more than EDF; WC ties on misses (fewest, with the others).
                Some(false),
                Some(true),
                Some(true),
                // Nothing ran at 300.
                None,
                None,
                None,
            ]
        );
    }
}
