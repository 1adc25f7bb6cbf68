//! A replay's report: the `yard sim` kind of table for the live jobs beside the simulator's
//! prediction for the same jobs ([`Row`]), their difference in points, and each job live
//! beside simulated ([`JobRow`]); as JSON or through the simulator's table writer.

use serde::Serialize;
use yard_sim::engine::{MEASURABLE, Moment, Outcome};
use yard_sim::shared::{SharedJob, SharedResult};
use yard_sim::table::{self, Cell, Column, Field, Printable, Table, Unit};

use super::ReplayArgs;
use super::live::LiveResult;
use super::predict::Startup;

/// Median, p80 and mean of an error over some jobs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct ErrorStats {
    jobs: usize,
    median: f64,
    p80: f64,
    mean: f64,
}

impl ErrorStats {
    /// `None` for no values; p80 by the nearest rank (the smallest value with at least 80 %
    /// of the values at or below it).
    fn of(xs: &[f64]) -> Option<ErrorStats> {
        if xs.is_empty() {
            return None;
        }
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = ((0.8 * v.len() as f64).ceil() as usize).clamp(1, v.len());
        Some(ErrorStats {
            jobs: v.len(),
            median: median(&v),
            p80: v[rank - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Row {
    source: &'static str,
    policy: String,
    rm_policy: String,
    jobs: usize,
    missed_fraction: f64,
    empty_fraction: f64,
    met_fraction: f64,
    mean_processed_fraction: f64,
    /// Live: the median over jobs answered both live and simulated of |live − simulated job
    /// time| / simulated job time (job time: from submission to answer); sim: 0.
    median_deviation: Option<f64>,
    /// |T − T̂| / T at map close over the jobs both sides measured it for (the same jobs
    /// live and simulated); `None` when there are none.
    estimation_error: Option<ErrorStats>,
    /// The jobs this side measured an estimation error for, of either side or not.
    estimation_error_jobs: usize,
    mean_k_over_k_max: Option<f64>,
    /// Jobs that never answered (failed, killed, still running at `--patience` or at Ctrl-C):
    /// missed.
    unanswered: usize,
}

#[derive(Debug, Serialize)]
pub(super) struct Report {
    seed: u64,
    jobs: usize,
    time_scale: f64,
    /// The share of the cluster masters may hold together, live and simulated.
    master_share: f64,
    /// The start-up costs the simulation gave masters and tasks.
    startup: Startup,
    rows: Vec<Row>,
    /// Each job live and simulated, in submission order: where the two part.
    per_job: Vec<JobRow>,
    /// What was replayed on what, the text's first line (the JSON says it in its own keys).
    #[serde(skip)]
    setup: String,
}

/// One job of the replay, live beside simulated.
#[derive(Debug, Serialize)]
pub(super) struct JobRow {
    id: String,
    maps: u32,
    reduces: u32,
    /// Seconds after the replay's start.
    arrival_s: f64,
    /// Relative to the submission (U[lo, hi]·T_J).
    deadline_s: f64,
    /// T_J: the job alone on the whole simulated cluster.
    alone_s: f64,
    live: JobSide,
    sim: JobSide,
}

#[derive(Debug, Serialize)]
pub(super) struct JobSide {
    /// met, empty or missed; `None`: never answered.
    outcome: Option<&'static str>,
    /// From submission to answer.
    completion_s: Option<f64>,
    /// From submission to the master's start (the simulator's: its wait for room).
    master_start_s: Option<f64>,
    k: u32,
    processed_fraction: f64,
    /// |T − T̂| / T at map close (T: from the job's start to its answer, on the master's
    /// clock; the simulator's the same).
    estimation_error: Option<f64>,
    /// T̂ and T, seconds from the job's start (live: its job phase's, after any task sampler).
    estimate_at_close_s: Option<f64>,
    job_s: Option<f64>,
    /// When the map phase closed, from the job's start.
    map_closed_at_s: Option<f64>,
    /// Live only: the guard fired; the task sampler ran before the job proper.
    #[serde(skip_serializing_if = "Option::is_none")]
    guard_fired: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_sampler_ran: Option<bool>,
}

pub(super) fn report(
    args: &ReplayArgs,
    nodes: u32,
    seed: u64,
    prepared: &[SharedJob],
    sim: &[SharedResult],
    live: &[LiveResult],
    (master_share, startup): (f64, Startup),
) -> Report {
    let n = prepared.len();
    let frac = |c: usize| c as f64 / n.max(1) as f64;
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    // Simulated results are sorted by arrival; find each job's by id.
    let sim_of = |id: &str| sim.iter().find(|r| r.result.job == id);
    let sim_outcomes: Vec<Option<Outcome>> = prepared
        .iter()
        .map(|j| sim_of(&j.job.id).map(|r| r.result.outcome()))
        .collect();
    let count = |o: Outcome| sim_outcomes.iter().filter(|x| **x == Some(o)).count();
    // The shared day leaves k_max unset: the oracle's, on the planned task times.
    let containers = args.containers as usize * nodes as usize;
    let sim_ratios: Vec<f64> = prepared
        .iter()
        .filter_map(|j| {
            let r = sim_of(&j.job.id)?;
            let k_max = yard_sim::oracle::k_max(&j.job.truth, &vec![1.0; containers], j.deadline);
            (k_max > 0).then(|| f64::from(r.result.k) / f64::from(k_max))
        })
        .collect();
    // The estimation error over the same jobs on both sides: those both measured it for and
    // both answered from some input (an answer from none is scored apart, as the simulator's
    // report does: its "estimate" is of a job that read nothing).
    let live_of = |id: &str| live.iter().find(|r| r.id == id);
    let (paired_live, paired_sim): (Vec<f64>, Vec<f64>) = prepared
        .iter()
        .filter_map(|j| {
            let l = live_of(&j.job.id).filter(|l| l.processed_fraction > 0.0)?;
            let s = sim_of(&j.job.id).filter(|s| !s.result.from_nothing())?;
            Some((l.estimation_error?, s.result.estimation_error()?))
        })
        .unzip();
    let sim_row = Row {
        source: "sim",
        policy: args.policy.name().into(),
        rm_policy: args.scheduler.name().into(),
        jobs: n,
        // A job the day never answered is missed (`Outcome::Missed`).
        missed_fraction: frac(n - count(Outcome::Met) - count(Outcome::Empty)),
        empty_fraction: frac(count(Outcome::Empty)),
        met_fraction: frac(count(Outcome::Met)),
        mean_processed_fraction: sim.iter().map(|r| r.result.processed_fraction).sum::<f64>()
            / n.max(1) as f64,
        median_deviation: Some(0.0),
        estimation_error: ErrorStats::of(&paired_sim),
        estimation_error_jobs: sim
            .iter()
            .filter(|r| r.result.estimation_error().is_some())
            .count(),
        mean_k_over_k_max: mean(&sim_ratios),
        unanswered: sim
            .iter()
            .filter(|r| !r.result.completion.is_finite())
            .count()
            + (n - sim.len()),
    };
    let live_count = |o: &str| {
        live.iter()
            .filter(|r| r.outcome.as_deref() == Some(o))
            .count()
    };
    let mut deviations: Vec<f64> = live
        .iter()
        .filter_map(|r| {
            let t = r.completion?;
            let s = sim_of(&r.id)?.result.completion;
            (s.is_finite() && s >= MEASURABLE).then(|| (t - s).abs() / s)
        })
        .collect();
    deviations.sort_by(f64::total_cmp);
    let live_ratios: Vec<f64> = live
        .iter()
        .filter_map(|r| {
            let k_max = r.k_max.filter(|&k| k > 0)?;
            Some(f64::from(r.k) / f64::from(k_max))
        })
        .collect();
    let live_row = Row {
        source: "live",
        policy: args.policy.name().into(),
        rm_policy: args.scheduler.name().into(),
        jobs: n,
        missed_fraction: frac(n - live_count("met") - live_count("empty")),
        empty_fraction: frac(live_count("empty")),
        met_fraction: frac(live_count("met")),
        mean_processed_fraction: live.iter().map(|r| r.processed_fraction).sum::<f64>()
            / n.max(1) as f64,
        median_deviation: (!deviations.is_empty()).then(|| median(&deviations)),
        estimation_error: ErrorStats::of(&paired_live),
        estimation_error_jobs: live.iter().filter(|r| r.estimation_error.is_some()).count(),
        mean_k_over_k_max: mean(&live_ratios),
        unanswered: live.iter().filter(|r| r.outcome.is_none()).count(),
    };
    let per_job = prepared
        .iter()
        .zip(live)
        .map(|(j, l)| {
            let s = sim_of(&j.job.id);
            JobRow {
                id: j.job.id.clone(),
                maps: j.job.maps(),
                reduces: j.job.reduces(),
                arrival_s: j.arrival,
                deadline_s: j.deadline,
                alone_s: j.alone,
                live: JobSide {
                    outcome: match l.outcome.as_deref() {
                        Some("met") => Some("met"),
                        Some("empty") => Some("empty"),
                        Some(_) => Some("missed"),
                        None => None,
                    },
                    completion_s: l.completion,
                    master_start_s: l.master_start,
                    k: l.k,
                    processed_fraction: l.processed_fraction,
                    estimation_error: l.estimation_error,
                    estimate_at_close_s: l.estimate_at_close,
                    job_s: l.job_seconds,
                    map_closed_at_s: l.map_closed_at,
                    guard_fired: Some(l.guard_fired),
                    task_sampler_ran: Some(l.task_sampler_ran),
                },
                sim: JobSide {
                    outcome: s.map(|r| r.result.outcome().name()),
                    completion_s: s.map(|r| r.result.completion).filter(|c| c.is_finite()),
                    master_start_s: s.map(|r| r.master_wait),
                    k: s.map_or(0, |r| r.result.k),
                    processed_fraction: s.map_or(0.0, |r| r.result.processed_fraction),
                    estimation_error: s.and_then(|r| r.result.estimation_error()),
                    estimate_at_close_s: s
                        .and_then(|r| r.result.estimate(Moment::MapClose))
                        .map(|e| e.total),
                    job_s: s.and_then(|r| r.result.phases).map(|p| p.total),
                    map_closed_at_s: None,
                    guard_fired: None,
                    task_sampler_ran: None,
                },
            }
        })
        .collect();
    Report {
        seed,
        jobs: n,
        time_scale: args.time_scale,
        master_share,
        startup,
        rows: vec![live_row, sim_row],
        per_job,
        setup: format!(
            "{}: the first {n} jobs, times × {}, seed {seed}, on {nodes} × {} containers, masters in containers of their own within {master_share} of them ({} cluster policy, {} task policy); deadlines U[{}, {}]·T_J",
            args.trace.display(),
            super::time_scale_text(args.time_scale),
            args.containers,
            args.scheduler.name(),
            args.policy.name(),
            args.deadline_factor.lo,
            args.deadline_factor.hi,
        ),
    }
}

/// The median of sorted, non-empty `xs` (the mean of the middle two for an even count).
pub(super) fn median(xs: &[f64]) -> f64 {
    let m = xs.len() / 2;
    match xs.len() % 2 {
        1 => xs[m],
        _ => (xs[m - 1] + xs[m]) / 2.0,
    }
}

impl table::Row for Row {
    fn fields() -> Vec<Field<Row>> {
        let pct = |h: &str| Column::new(h, Unit::Percent(1));
        vec![
            (Column::text("source"), |x| x.source.into()),
            (Column::new("jobs", Unit::Count), |x| x.jobs.into()),
            (pct("missed %"), |x| x.missed_fraction.into()),
            (pct("empty %"), |x| x.empty_fraction.into()),
            (pct("met %"), |x| x.met_fraction.into()),
            (pct("processed %"), |x| x.mean_processed_fraction.into()),
            (pct("k/k_max %"), |x| x.mean_k_over_k_max.into()),
            (pct("median deviation %"), |x| x.median_deviation.into()),
            (
                pct("estimation error % median / p80 / mean (jobs)"),
                |x| match x.estimation_error {
                    Some(e) => format!(
                        "{} ({} of {})",
                        Cell::Joined(vec![e.median.into(), e.p80.into(), e.mean.into()])
                            .in_unit(Unit::Percent(1)),
                        e.jobs,
                        x.estimation_error_jobs
                    )
                    .into(),
                    None => format!("– (0 of {})", x.estimation_error_jobs).into(),
                },
            ),
            (Column::new("unanswered", Unit::Count), |x| {
                x.unanswered.into()
            }),
        ]
    }
}

/// The text: what was replayed, the start-up costs, the rows and their difference, the legend.
impl Printable for Report {
    fn text(&self) -> String {
        markdown(self)
    }
}

fn markdown(r: &Report) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(t, "{}\n", r.setup);
    let s = &r.startup;
    let _ = writeln!(
        t,
        "The simulated masters start up in {:.3} s and tasks launch in {:.3} s ({}).\n",
        s.master_s, s.task_s, s.source
    );
    let mut table = Table::rows(&r.rows);
    if let [live, sim] = r.rows.as_slice() {
        // The live row less the simulated one, in points; counts have no difference here.
        let diff = |a: f64, b: f64| Cell::Text(Unit::Points(1).format(a - b));
        table.row(vec![
            "live − sim".into(),
            Cell::Blank,
            diff(live.missed_fraction, sim.missed_fraction),
            diff(live.empty_fraction, sim.empty_fraction),
            diff(live.met_fraction, sim.met_fraction),
            diff(live.mean_processed_fraction, sim.mean_processed_fraction),
            match (live.mean_k_over_k_max, sim.mean_k_over_k_max) {
                (Some(a), Some(b)) => diff(a, b),
                _ => Cell::Missing,
            },
            Cell::Blank,
            match (live.estimation_error, sim.estimation_error) {
                (Some(l), Some(s)) => Cell::Joined(vec![
                    diff(l.median, s.median),
                    diff(l.p80, s.p80),
                    diff(l.mean, s.mean),
                ]),
                _ => Cell::Missing,
            },
            Cell::Blank,
        ]);
    }
    t += &table.markdown();
    let _ = writeln!(
        t,
        "\nmissed: answered after D, or never; empty: by D from no input; met: by D from some input. k_max: live, on the task times the cluster measured. Median deviation: the median over jobs of |live − simulated job time| / simulated (job time: submission to answer). Estimation error: |T − T̂| / T at map close (T from the job's start, after any task sampler, to its answer), over the jobs both sides measured it for and answered from some input (n of m: m, the jobs this side measured it for). Start-up costs, measured: medians over the live jobs that answered (a master: from its process's start to its job phase's, the task sampler's runs left out; a task: its job's median from a container freed to its next task's process); unmeasured: no live job measured it, 0."
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::predict::experiment;
    use crate::replay::tests::{args, jobs, trace};
    use yard_appmaster::policy::PolicyKind;
    use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
    use yard_sim::shared;

    #[test]
    fn error_stats_give_median_p80_and_mean() {
        assert_eq!(ErrorStats::of(&[]), None);
        let e = ErrorStats::of(&[0.5, 0.1, 0.3, 0.2, 0.4]).unwrap();
        assert_eq!(e.jobs, 5);
        assert!((e.median - 0.3).abs() < 1e-12);
        // Nearest rank: 4 of 5 values at or below it.
        assert!((e.p80 - 0.4).abs() < 1e-12);
        assert!((e.mean - 0.3).abs() < 1e-12);
        assert_eq!(ErrorStats::of(&[7.0]).unwrap().p80, 7.0);
    }

    #[test]
    fn the_report_measures_the_estimation_error_over_the_same_jobs_live_and_simulated() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let (prepared, _) = jobs(&w, 8, 1.0 / 60.0);
        let exp = experiment(2, 2, 100, 3, 0.0, 0.5);
        let (sim, _) = shared::simulate_day(&prepared, RmPolicy::Fifo, PolicyKind::Dart, &exp);
        let sim_error = |id: &str| {
            sim.iter()
                .find(|r| r.result.job == id)
                .and_then(|r| r.result.estimation_error())
        };
        let from_input = |id: &str| {
            sim.iter()
                .any(|r| r.result.job == id && !r.result.from_nothing())
        };
        let measured: Vec<&SharedJob> = prepared
            .iter()
            .filter(|j| sim_error(&j.job.id).is_some() && from_input(&j.job.id))
            .collect();
        assert!(measured.len() >= 2, "{} simulated errors", measured.len());
        // Live: every job answered met from half its input but the second simulated-measured
        // one, empty; an error for the first two simulated-measured jobs, and one for a job
        // the simulator has none for (if any): only the first is paired (the second answered
        // from no input live).
        let unmeasured = prepared.iter().find(|j| sim_error(&j.job.id).is_none());
        let live: Vec<LiveResult> = prepared
            .iter()
            .map(|j| {
                let empty = j.job.id == measured[1].job.id;
                LiveResult {
                    id: j.job.id.clone(),
                    outcome: Some(if empty { "empty" } else { "met" }.into()),
                    processed_fraction: if empty { 0.0 } else { 0.5 },
                    k: 1,
                    estimation_error: (j.job.id == measured[0].job.id
                        || empty
                        || unmeasured.is_some_and(|u| u.job.id == j.job.id))
                    .then_some(2.0),
                    ..LiveResult::default()
                }
            })
            .collect();
        let startup = Startup {
            master_s: 0.0,
            task_s: 0.0,
            source: "flag".into(),
        };
        let r = report(&args(&[]), 2, 3, &prepared, &sim, &live, (0.5, startup));
        let [l, s] = r.rows.as_slice() else {
            panic!("two rows")
        };
        let le = l.estimation_error.unwrap();
        let se = s.estimation_error.unwrap();
        assert_eq!((le.jobs, se.jobs), (1, 1));
        assert_eq!(le.median, 2.0);
        let want = sim_error(&measured[0].job.id).unwrap();
        assert_eq!((se.median, se.p80, se.mean), (want, want, want));
        assert_eq!(
            l.estimation_error_jobs,
            2 + usize::from(unmeasured.is_some())
        );
        assert!(s.estimation_error_jobs >= measured.len());
        assert_eq!(l.empty_fraction, 1.0 / prepared.len() as f64);
        // Per job, both sides' errors side by side.
        let row = r
            .per_job
            .iter()
            .find(|j| j.id == measured[0].job.id)
            .unwrap();
        assert_eq!(row.live.estimation_error, Some(2.0));
        assert_eq!(row.sim.estimation_error, Some(want));
        // The table shows median / p80 / mean and the jobs paired.
        let table = r.text();
        assert!(table.contains("200.0 / 200.0 / 200.0 (1 of"), "{table}");
        // Its first line says what ran on what, from the flags.
        assert!(
            table.starts_with("t.tsv: the first 8 jobs, times × 1, seed 3, on 2 × 4 containers, masters in containers of their own within 0.5 of them (fifo cluster policy, dart task policy); deadlines U[1, 2]·T_J\n\nThe simulated"),
            "{table}"
        );
    }

    /// The whole table as it printed before the simulator's reports shared one writer: every
    /// cell kind (percent, none, the error triple, the live − sim row's blanks and points).
    #[test]
    fn the_table_prints_every_cell_as_it_always_has() {
        let row = |source, missed, k: Option<f64>, e: Option<ErrorStats>| Row {
            source,
            policy: "dart".into(),
            rm_policy: "fifo".into(),
            jobs: 4,
            missed_fraction: missed,
            empty_fraction: 0.25,
            met_fraction: 0.75 - missed,
            mean_processed_fraction: 0.5,
            median_deviation: k.map(|_| 0.125),
            estimation_error: e,
            estimation_error_jobs: 3,
            mean_k_over_k_max: k,
            unanswered: 1,
        };
        let e = ErrorStats {
            jobs: 2,
            median: 0.1,
            p80: 0.2,
            mean: 0.15,
        };
        let r = Report {
            seed: 3,
            jobs: 4,
            time_scale: 1.0 / 60.0,
            master_share: 0.5,
            startup: Startup {
                master_s: 1.5,
                task_s: 0.25,
                source: "measured".into(),
            },
            rows: vec![
                row("live", 0.25, Some(0.8), Some(e)),
                row("sim", 0.0, None, None),
            ],
            per_job: Vec::new(),
            setup: "t.tsv: the first 4 jobs".into(),
        };
        let text = r.printed(false, "## replay\n\n").unwrap();
        let table = "| source | jobs | missed % | empty % | met % | processed % | k/k_max % | median deviation % | estimation error % median / p80 / mean (jobs) | unanswered |\n\
                     |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n\
                     | live | 4 | 25.0 | 25.0 | 50.0 | 50.0 | 80.0 | 12.5 | 10.0 / 20.0 / 15.0 (2 of 3) | 1 |\n\
                     | sim | 4 | 0.0 | 25.0 | 75.0 | 50.0 | – | – | – (0 of 3) | 1 |\n\
                     | live − sim | | +25.0 | +0.0 | -25.0 | +0.0 | – | | – | |\n";
        assert!(text.contains(table), "{text}");
        assert!(
            text.starts_with("## replay\n\nt.tsv: the first 4 jobs\n\nThe simulated masters start up in 1.500 s and tasks launch in 0.250 s (measured).\n\n| source"),
            "{text}"
        );
    }
}
