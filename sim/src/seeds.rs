//! One experiment over several seeds: every row's figures as their mean across the seeds
//! with their spread, so that no figure rests on one seed's draws (issue 15 item 6).
//!
//! A seed fixes every draw: the jobs' task durations and reduce laws, their profiles, the
//! slow nodes and the failures. Seeds `S, S + 1, …` are run one after another on the same
//! trace; a row (configuration, policy, bin) is in the result when some seed has it, and its
//! statistics are over the seeds that have it.

use std::fmt::Write as _;

use serde::Serialize;

use crate::config::Model;
use crate::engine::{Moment, Phase};
use crate::report::{self, Comparison, Report, Row};
use crate::table::{Cell, Column, Printable, Table, Unit};

/// The mean of a figure over seeds and how far the seeds spread around it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Seeds with a value (a row can lack a figure: no estimate, no job with k_max ≥ 1).
    pub seeds: usize,
    pub mean: Option<f64>,
    /// The sample standard deviation over the seeds (n − 1); 0 with one seed.
    pub sd: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let n = values.len();
        let mean = (n > 0).then(|| values.iter().sum::<f64>() / n as f64);
        let sd = mean.map(|m| match n {
            1 => 0.0,
            _ => (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt(),
        });
        Spread {
            seeds: n,
            mean,
            sd,
            min: values.iter().copied().reduce(f64::min),
            max: values.iter().copied().reduce(f64::max),
        }
    }
}

/// The figures of a row that are averaged over seeds: every column of the tables
/// ([`report::metric`] names).
pub(crate) const METRICS: &[&str] = &[
    "jobs",
    "median_deviation",
    "mean_deviation",
    "missed_fraction",
    "empty_fraction",
    "met_fraction",
    "mean_processed_fraction",
    "data_vs_oracle",
    "bytes_vs_oracle",
    "bytes_oracle_exact_fraction",
    "bytes_vs_exact_oracle",
    "mean_estimation_error",
    "median_estimation_error",
    "p80_estimation_error",
    "p90_estimation_error",
    "p80_estimation_error_uncapped",
    "p80_estimation_error_under_d",
    "under_d_share",
    "p80_close_estimation_error",
    "median_floor_error",
    "p80_floor_error",
    "empty_estimation_error",
    "empty_estimation_error_median",
    "empty_estimation_error_p80",
    "guard_fired_fraction",
    "guard_cost",
    "guard_rescued_fraction",
];

/// A row over seeds: each metric of [`METRICS`], and each phase's error at each moment
/// (`<moment>.<phase>.<mean|median|p80>`), as a [`Spread`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedsRow {
    pub config: String,
    pub policy: String,
    pub bin: String,
    /// Seeds whose run had this row.
    pub seeds: usize,
    pub metrics: Vec<(String, Spread)>,
}

impl SeedsRow {
    pub fn get(&self, metric: &str) -> Option<&Spread> {
        self.metrics
            .iter()
            .find(|(m, _)| m == metric)
            .map(|(_, s)| s)
    }
}

/// A paper figure beside its simulated value's spread over seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedsComparison {
    #[serde(flatten)]
    pub figure: report::PaperFigure,
    pub yard_policy: &'static str,
    pub yard_versus: Option<&'static str>,
    pub simulated: Spread,
    /// The mean's difference from the paper's figure.
    pub difference: Option<f64>,
    pub guarded: Spread,
}

/// Everything `yard sim --seeds N --json` prints (N > 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedsReport {
    pub seeds: Vec<u64>,
    pub jobs: usize,
    /// Trace jobs with no tasks, not scheduled or scored (`Report::no_task_jobs`).
    pub no_task_jobs: usize,
    pub population: &'static str,
    pub guard: f64,
    pub model: Model,
    pub rows: Vec<SeedsRow>,
    pub paper: Vec<SeedsComparison>,
    /// Each seed's own report.
    pub runs: Vec<Report>,
}

/// Every moment × phase × statistic of the per-phase table, as [`report::metric`] names.
fn phase_metrics() -> Vec<String> {
    let mut out = Vec::new();
    for m in Moment::ALL {
        for p in Phase::ALL {
            for stat in ["mean", "median", "p80"] {
                out.push(format!("{}.{}.{stat}", m.name(), p.name()));
            }
        }
    }
    out
}

type Key = (String, String, String);

fn key(r: &Row) -> Key {
    (r.config.clone(), r.policy.clone(), r.bin.clone())
}

/// The rows of every seed's report, each once, in the order the reports give them: a row
/// only some seed has goes after the row that precedes it in that seed's report.
fn union_of_rows(reports: &[Report]) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for report in reports {
        let mut at = 0;
        for row in &report.rows {
            let k = key(row);
            match keys.iter().position(|x| *x == k) {
                Some(i) => at = i + 1,
                None => {
                    keys.insert(at, k);
                    at += 1;
                }
            }
        }
    }
    keys
}

/// The reports of one experiment run on several seeds, summed up row by row.
pub fn across(reports: Vec<Report>) -> SeedsReport {
    let phases = phase_metrics();
    let names: Vec<&str> = METRICS
        .iter()
        .copied()
        .chain(phases.iter().map(String::as_str))
        .collect();
    let rows = union_of_rows(&reports)
        .into_iter()
        .map(|k| {
            let of_seeds: Vec<&Row> = reports
                .iter()
                .filter_map(|r| r.rows.iter().find(|row| key(row) == k))
                .collect();
            let metrics = names
                .iter()
                .map(|&name| {
                    let values: Vec<f64> = of_seeds
                        .iter()
                        .filter_map(|row| report::metric(row, name))
                        .collect();
                    (name.to_owned(), Spread::of(&values))
                })
                .collect();
            SeedsRow {
                config: k.0,
                policy: k.1,
                bin: k.2,
                seeds: of_seeds.len(),
                metrics,
            }
        })
        .collect();
    let mut paper: Vec<SeedsComparison> = Vec::new();
    for c in reports.iter().flat_map(|r| &r.paper) {
        let same = |x: &Comparison| {
            x.figure == c.figure && x.yard_policy == c.yard_policy && x.yard_versus == c.yard_versus
        };
        if paper.iter().any(|p| {
            p.figure == c.figure && p.yard_policy == c.yard_policy && p.yard_versus == c.yard_versus
        }) {
            continue;
        }
        let all: Vec<&Comparison> = reports
            .iter()
            .flat_map(|r| r.paper.iter().filter(|x| same(x)))
            .collect();
        let simulated = Spread::of(&all.iter().filter_map(|x| x.simulated).collect::<Vec<_>>());
        let guarded = Spread::of(&all.iter().filter_map(|x| x.guarded).collect::<Vec<_>>());
        paper.push(SeedsComparison {
            figure: c.figure,
            yard_policy: c.yard_policy,
            yard_versus: c.yard_versus,
            simulated,
            difference: simulated.mean.map(|m| m - c.figure.value),
            guarded,
        });
    }
    SeedsReport {
        seeds: reports.iter().map(|r| r.seed).collect(),
        jobs: reports.first().map_or(0, |r| r.jobs),
        no_task_jobs: reports.first().map_or(0, |r| r.no_task_jobs),
        population: report::POPULATION,
        guard: reports.first().map_or(0.0, |r| r.guard),
        model: reports.first().map_or_else(Model::default, |r| r.model),
        rows,
        paper,
        runs: reports,
    }
}

/// A figure's `mean ± sd` over the seeds, `–` with no value.
fn spread(s: Option<&Spread>) -> Cell {
    match s.and_then(|s| s.mean.zip(s.sd)) {
        Some((mean, sd)) => Cell::Spread(mean, sd),
        None => Cell::Missing,
    }
}

/// The empty answers' errors, one column each (the one-seed table's one cell of three).
const EMPTY_FIGURES: [(&str, &str); 3] = [
    ("empty answers' mean est. err %", "empty_estimation_error"),
    (
        "empty answers' median est. err %",
        "empty_estimation_error_median",
    ),
    (
        "empty answers' p80 est. err %",
        "empty_estimation_error_p80",
    ),
];

impl Printable for SeedsReport {
    fn text(&self) -> String {
        markdown(self)
    }
}

/// The tables of [`report::markdown`], every figure as `mean ± sd` over the seeds.
pub fn markdown(report: &SeedsReport) -> String {
    let mut t = String::new();
    let seeds: Vec<String> = report.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        t,
        "seeds {} ({} runs), {} jobs{}, {}; every figure is `mean ± sd` over the seeds (the sample standard deviation; `--json` has each seed's report, and min and max)\n",
        seeds.join(", "),
        seeds.len(),
        report.jobs,
        report::no_tasks_note(report.no_task_jobs),
        report::guard_note(report.guard)
    );
    let figures: Vec<&str> = report::FIGURES
        .iter()
        .chain(&EMPTY_FIGURES)
        .chain(&report::GUARD_FIGURES)
        .map(|&(_, m)| m)
        .collect();
    let keys = ["config", "policy", "bin"].map(Column::text);
    let mut table = Table::new(
        keys.into_iter()
            .chain([
                Column::new("seeds", Unit::Count),
                Column::new("jobs", Unit::Count),
            ])
            .chain(report::percent_columns(&report::FIGURES))
            .chain(report::percent_columns(&EMPTY_FIGURES))
            .chain(report::percent_columns(&report::GUARD_FIGURES))
            .collect(),
    );
    for r in &report.rows {
        let mut cells: Vec<Cell> = vec![
            r.config.as_str().into(),
            r.policy.as_str().into(),
            r.bin.as_str().into(),
            r.seeds.into(),
            spread(r.get("jobs")),
        ];
        cells.extend(figures.iter().map(|&m| spread(r.get(m))));
        table.row(cells);
    }
    t += &table.markdown();
    let _ = writeln!(t, "\n{}", report::LEGEND);
    t += &report::uncapped_line(report.rows.iter().map(|r| {
        let at = |m: &str| {
            r.get(m)
                .filter(|s| s.mean.is_some())
                .map(|s| spread(Some(s)).in_unit(Unit::Percent(1)))
        };
        (
            r.config.as_str(),
            r.policy.as_str(),
            r.bin.as_str(),
            at("p80_estimation_error"),
            at("p80_estimation_error_uncapped"),
            at("p80_estimation_error_under_d"),
            at("under_d_share"),
            at("p80_close_estimation_error"),
        )
    }));
    let shown: Vec<&SeedsRow> = report
        .rows
        .iter()
        .filter(|r| report::in_estimation_table(&r.config, &r.bin))
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(
            t,
            "\nEstimation error by phase, over answers from some input (jobs with k_max ≥ 1), `mean ± sd / median / p80` %, each the mean over the seeds (sd: of the mean); moments and phases as in the one-seed table.\n"
        );
        let mut table = report::estimation_table();
        for r in shown {
            let mut cells: Vec<Cell> = vec![
                r.config.as_str().into(),
                r.policy.as_str().into(),
                r.bin.as_str().into(),
            ];
            for &(_, moment, phase) in &report::ESTIMATION {
                let at = |stat: &str| r.get(&format!("{}.{}.{stat}", moment.name(), phase.name()));
                let mean = at("mean");
                let of_mean = |s: Option<&Spread>| Cell::from(s.and_then(|s| s.mean));
                cells.push(match mean.and_then(|s| s.mean) {
                    None => Cell::Missing,
                    Some(_) => Cell::Joined(vec![
                        spread(mean),
                        of_mean(at("median")),
                        of_mean(at("p80")),
                    ]),
                });
            }
            table.row(cells);
        }
        t += &table.markdown();
    }
    if !report.paper.is_empty() {
        let mut table = report::paper_table();
        for c in &report.paper {
            let mut cells = report::paper_cells(&c.figure, c.yard_policy, c.yard_versus).to_vec();
            cells.extend([
                spread(Some(&c.simulated)),
                c.difference.into(),
                match c.guarded.seeds {
                    0 => Cell::Missing,
                    _ => spread(Some(&c.guarded)),
                },
                c.figure.source.into(),
            ]);
            table.row(cells);
        }
        let _ = write!(t, "\n{}", table.markdown());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::JobResult;
    use yard_appmaster::policy::PolicyKind;

    #[test]
    fn spread_is_the_mean_and_sample_deviation_over_seeds() {
        let s = Spread::of(&[0.1, 0.2, 0.3]);
        assert_eq!(s.seeds, 3);
        assert!((s.mean.unwrap() - 0.2).abs() < 1e-12);
        assert!((s.sd.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!((s.min, s.max), (Some(0.1), Some(0.3)));
        assert_eq!(Spread::of(&[0.5]).sd, Some(0.0));
        assert_eq!(Spread::of(&[]).mean, None);
    }

    fn report(seed: u64, missed: &[(PolicyKind, &'static str, bool)]) -> Report {
        let results: Vec<JobResult> = missed
            .iter()
            .map(|&(policy, config, late)| JobResult {
                job: "j".into(),
                config,
                policy,
                bin: yard_workload::SizeBin::Small,
                maps: 10,
                k: 5,
                k_max: 5,
                k_max_fraction: 0.5,
                byte_max_fraction: 0.5,
                byte_max_exact: true,
                deadline: 100.0,
                completion: if late { 120.0 } else { 80.0 },
                estimates: [None; 3],
                reforecast: None,
                phases: None,
                processed_fraction: 0.5,
                events: 1,
                guard: 0.0,
                guard_fired: false,
                lone_map: false,
                unguarded: None,
                floor: None,
            })
            .collect();
        let rows = report::rows(&results, &["C1", "C2"], &[PolicyKind::Dart]);
        Report {
            seed,
            jobs: results.len(),
            population: report::POPULATION,
            no_task_jobs: 0,
            guard: 0.0,
            model: Model::default(),
            paper: report::compare(&rows, "deadlines", &["C1", "C2"]),
            rows,
        }
    }

    #[test]
    fn rows_are_averaged_over_the_seeds_that_have_them() {
        let dart = PolicyKind::Dart;
        // Seed 1: one C2 job, met. Seed 2: a C1 job, late, and the C2 job, met.
        let one = report(1, &[(dart, "C2", false)]);
        let two = report(2, &[(dart, "C1", true), (dart, "C2", false)]);
        let r = across(vec![one, two]);
        assert_eq!(r.seeds, [1, 2]);
        let order: Vec<(&str, &str, usize)> = r
            .rows
            .iter()
            .filter(|x| x.bin == "all")
            .map(|x| (x.config.as_str(), x.policy.as_str(), x.seeds))
            .collect();
        // C1 only in seed 2, placed where seed 2 has it: before C2.
        assert_eq!(
            order,
            [("C1", "dart", 1), ("C2", "dart", 2), ("all", "dart", 2)]
        );
        let all = r
            .rows
            .iter()
            .find(|x| x.config == "all" && x.bin == "all")
            .unwrap();
        // Missed over all configurations: 0 in seed 1, 1/2 in seed 2.
        let missed = all.get("missed_fraction").unwrap();
        assert_eq!((missed.seeds, missed.mean), (2, Some(0.25)));
        assert!((missed.sd.unwrap() - 0.5f64.sqrt() / 2.0).abs() < 1e-12);
        let fig = r
            .paper
            .iter()
            .find(|c| c.figure.metric == "missed_fraction" && c.yard_policy == "dart")
            .unwrap();
        assert_eq!(fig.simulated.mean, Some(0.25));
        assert_eq!(fig.guarded.seeds, 0);
        let table = markdown(&r);
        assert!(table.starts_with("seeds 1, 2 (2 runs)"), "{table}");
        assert!(
            table.contains(
                "| all | dart | all | 2 | 2 ± 1 | 100.0 ± 0.0 | 100.0 ± 0.0 | 25.0 ± 35.4 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| all dart all | missed_fraction | 3.5 | 25.0 ± 35.4 | +21.5 | – |"),
            "{table}"
        );
        assert_eq!(r.runs.len(), 2);
    }
}
