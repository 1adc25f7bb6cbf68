//! What an experiment prints (EVALUATION.md "What every experiment prints"): per configuration,
//! policy and size bin — jobs, median and mean k/k_max, the share of missed deadlines, mean and
//! 90th-percentile estimation error — beside the Dart paper's figure where it has one.

use std::fmt::Write as _;

use serde::Serialize;
use yard_appmaster::policy::PolicyKind;
use yard_workload::SizeBin;

use crate::engine::JobResult;

/// One line of the table. Rows with no value for a metric (no job could fit a map, no
/// estimate was made) carry `null` there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub config: String,
    pub policy: String,
    pub bin: String,
    pub jobs: usize,
    pub median_deviation: Option<f64>,
    pub mean_deviation: Option<f64>,
    pub missed_fraction: f64,
    pub mean_estimation_error: Option<f64>,
    pub p90_estimation_error: Option<f64>,
}

/// A figure the Dart paper reports, for the experiment it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperFigure {
    pub experiment: &'static str,
    pub config: &'static str,
    pub policy: &'static str,
    pub bin: &'static str,
    pub metric: &'static str,
    /// Set for a relative figure: the policy it is relative to, and whether it is the
    /// reduction `1 − ours / theirs` (else the increase `ours / theirs − 1`).
    pub versus: Option<&'static str>,
    pub reduction: bool,
    pub value: f64,
    pub source: &'static str,
}

/// A paper figure next to the matching simulated value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    #[serde(flatten)]
    pub figure: PaperFigure,
    pub simulated: Option<f64>,
    pub difference: Option<f64>,
}

/// Everything `yard sim --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub seed: u64,
    pub jobs: usize,
    pub rows: Vec<Row>,
    pub paper: Vec<Comparison>,
}

const fn fig(
    experiment: &'static str,
    config: &'static str,
    policy: &'static str,
    bin: &'static str,
    metric: &'static str,
    value: f64,
    source: &'static str,
) -> PaperFigure {
    PaperFigure {
        experiment,
        config,
        policy,
        bin,
        metric,
        versus: None,
        reduction: false,
        value,
        source,
    }
}

/// How a relative figure compares two policies.
enum Change {
    /// `1 − ours / theirs`.
    Reduction(f64),
    /// `ours / theirs − 1`.
    Increase(f64),
}

/// A relative figure: `policy`'s `metric` against `versus`'s.
const fn rel(
    experiment: &'static str,
    config: &'static str,
    policy: &'static str,
    versus: &'static str,
    metric: &'static str,
    change: Change,
    source: &'static str,
) -> PaperFigure {
    let (reduction, value) = match change {
        Change::Reduction(v) => (true, v),
        Change::Increase(v) => (false, v),
    };
    PaperFigure {
        experiment,
        config,
        policy,
        bin: "all",
        metric,
        versus: Some(versus),
        reduction,
        value,
        source,
    }
}

/// Every figure of the Dart paper's evaluation that one of yard's rows can be set beside
/// (papers/dart.md §4). "all" configurations means every configuration run (the paper's
/// missed-deadline figures are over C1–C3); its deviation figures are over C1 and C2 only,
/// and sit beside yard's "C1+C2" rows.
#[rustfmt::skip]
pub const PAPER: &[PaperFigure] = &[
    fig("deadlines", "all", "dart", "all", "missed_fraction", 0.035, "§6.2 Fig. 8a"),
    fig("deadlines", "all", "ps", "all", "missed_fraction", 0.058, "§6.2 Fig. 8a"),
    fig("deadlines", C12, "dart", "all", "mean_deviation", 0.884, "§6.3"),
    rel("deadlines", C12, "dart", "ps", "mean_deviation", Change::Increase(0.138), "§6.3 (\"about 13.8 % more data\")"),
    fig("deadlines", C12, "dart", "small", "mean_deviation", 0.852, "§6.3 Fig. 11"),
    fig("deadlines", C12, "dart", "large", "mean_deviation", 0.951, "§6.3 Fig. 11"),
    fig("deadlines", C12, "ps", "small", "mean_deviation", 0.892, "§6.3 Fig. 11"),
    fig("deadlines", C12, "ps", "large", "mean_deviation", 0.737, "§6.3 Fig. 11"),
    rel("estimation", "all", "dart", "aria", "mean_estimation_error", Change::Reduction(0.558), "§6.4 Fig. 12a"),
    rel("skew", "all", "dart", "d-wost", "missed_fraction", Change::Reduction(0.583), "§6.6 Fig. 15a (inverted index; PageRank 65.1 %)"),
    rel("skew", "all", "dart", "d-wost", "mean_deviation", Change::Increase(0.195), "§6.6 Fig. 15b (inverted index; PageRank 10.6 %)"),
    fig("stragglers", "C1", "late", "small", "missed_fraction", 0.229, "§6.5 Table 5"),
    fig("stragglers", "C1", "late", "medium", "missed_fraction", 0.130, "§6.5 Table 5"),
    fig("stragglers", "C1", "late", "large", "missed_fraction", 0.103, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wor", "small", "missed_fraction", 0.141, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wor", "medium", "missed_fraction", 0.095, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wor", "large", "missed_fraction", 0.087, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wmr", "small", "missed_fraction", 0.076, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wmr", "medium", "missed_fraction", 0.059, "§6.5 Table 5"),
    fig("stragglers", "C1", "d-wmr", "large", "missed_fraction", 0.042, "§6.5 Table 5"),
    fig("stragglers", "C1", "dart", "small", "missed_fraction", 0.074, "§6.5 Table 5"),
    fig("stragglers", "C1", "dart", "medium", "missed_fraction", 0.056, "§6.5 Table 5"),
    fig("stragglers", "C1", "dart", "large", "missed_fraction", 0.038, "§6.5 Table 5"),
    fig("stragglers", "C2", "late", "small", "missed_fraction", 0.108, "§6.5 Table 5"),
    fig("stragglers", "C2", "late", "medium", "missed_fraction", 0.074, "§6.5 Table 5"),
    fig("stragglers", "C2", "late", "large", "missed_fraction", 0.052, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wor", "small", "missed_fraction", 0.125, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wor", "medium", "missed_fraction", 0.148, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wor", "large", "missed_fraction", 0.117, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wmr", "small", "missed_fraction", 0.047, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wmr", "medium", "missed_fraction", 0.043, "§6.5 Table 5"),
    fig("stragglers", "C2", "d-wmr", "large", "missed_fraction", 0.031, "§6.5 Table 5"),
    fig("stragglers", "C2", "dart", "small", "missed_fraction", 0.038, "§6.5 Table 5"),
    fig("stragglers", "C2", "dart", "medium", "missed_fraction", 0.035, "§6.5 Table 5"),
    fig("stragglers", "C2", "dart", "large", "missed_fraction", 0.025, "§6.5 Table 5"),
];

/// The scope of the paper's deviation figures (§6.3: C1 and C2 together).
const C12: &str = "C1+C2";

/// Which of a scope's jobs a row counts: a size bin, every job, or the jobs grouped by what
/// their deadline leaves to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slice {
    Size(SizeBin),
    All,
    /// 0 < k_max < maps: some but not all of the input can be read by the deadline. Only here
    /// can k/k_max tell policies apart: where all input fits, reading it all scores 100 %.
    Partial,
    /// k_max = 0: no schedule reads a single map by the deadline, so k/k_max is undefined and
    /// every policy misses or answers from nothing.
    NoneFits,
}

impl Slice {
    const ALL: [Slice; 6] = [
        Slice::Size(SizeBin::Small),
        Slice::Size(SizeBin::Medium),
        Slice::Size(SizeBin::Large),
        Slice::All,
        Slice::Partial,
        Slice::NoneFits,
    ];

    fn name(self) -> &'static str {
        match self {
            Slice::Size(bin) => bin.name(),
            Slice::All => "all",
            Slice::Partial => "partial",
            Slice::NoneFits => "none-fits",
        }
    }

    fn holds(self, r: &JobResult) -> bool {
        match self {
            Slice::Size(bin) => r.bin == bin,
            Slice::All => true,
            Slice::Partial => r.k_max > 0 && r.k_max < r.maps,
            Slice::NoneFits => r.k_max == 0,
        }
    }
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn row(config: &str, policy: &str, bin: &str, results: &[&JobResult]) -> Row {
    let mut deviations: Vec<f64> = results.iter().filter_map(|r| r.deviation()).collect();
    let mut errors: Vec<f64> = results
        .iter()
        .filter_map(|r| r.estimation_error())
        .collect();
    deviations.sort_by(f64::total_cmp);
    errors.sort_by(f64::total_cmp);
    let missed = results.iter().filter(|r| r.missed()).count();
    Row {
        config: config.to_owned(),
        policy: policy.to_owned(),
        bin: bin.to_owned(),
        jobs: results.len(),
        median_deviation: median(&deviations),
        mean_deviation: mean(&deviations),
        missed_fraction: if results.is_empty() {
            0.0
        } else {
            missed as f64 / results.len() as f64
        },
        mean_estimation_error: mean(&errors),
        p90_estimation_error: percentile(&errors, 0.9),
    }
}

/// Rows per configuration (in `configs` order; then "C1+C2" when both run beside another, as
/// the paper's §6.3 pools them; then "all" when there are several), policy (in `policies`
/// order) and bin: small, medium, large, all, then "partial" (0 < k_max < maps) and
/// "none-fits" (k_max = 0), which cut the same jobs by what their deadline leaves to read.
/// Empty bins are left out.
pub fn rows(results: &[JobResult], configs: &[&str], policies: &[PolicyKind]) -> Vec<Row> {
    let mut scopes: Vec<(&str, Vec<&str>)> = configs.iter().map(|&c| (c, vec![c])).collect();
    let has = |name: &str| configs.iter().any(|c| c.eq_ignore_ascii_case(name));
    if configs.len() > 2 && has("C1") && has("C2") {
        scopes.push((C12, vec!["C1", "C2"]));
    }
    if configs.len() > 1 {
        scopes.push(("all", configs.to_vec()));
    }
    let mut out = Vec::new();
    for (scope, members) in scopes {
        for &policy in policies {
            for slice in Slice::ALL {
                let matching: Vec<&JobResult> = results
                    .iter()
                    .filter(|r| members.contains(&r.config) && r.policy == policy)
                    .filter(|r| slice.holds(r))
                    .collect();
                if matching.is_empty() {
                    continue;
                }
                out.push(row(scope, policy.name(), slice.name(), &matching));
            }
        }
    }
    out
}

/// The paper's figures for `experiment` that have a matching row, with the difference.
pub fn compare(rows: &[Row], experiment: &str, configs: &[&str]) -> Vec<Comparison> {
    // With one configuration, the paper's "all configurations" figures sit beside it; with
    // exactly C1 and C2, "all" is the paper's C1+C2.
    let lone = (configs.len() == 1).then(|| configs[0]);
    let just_c12 = configs.len() == 2 && configs.contains(&"C1") && configs.contains(&"C2");
    PAPER
        .iter()
        .filter(|f| f.experiment == experiment)
        .filter_map(|f| {
            let config = match f.config {
                "all" => lone.unwrap_or("all"),
                C12 if just_c12 => "all",
                other => other,
            };
            let find = |policy: &str| {
                rows.iter()
                    .find(|r| r.config == config && r.policy == policy && r.bin == f.bin)
            };
            let value = |row: &Row| match f.metric {
                "missed_fraction" => Some(row.missed_fraction),
                "mean_deviation" => row.mean_deviation,
                "median_deviation" => row.median_deviation,
                "mean_estimation_error" => row.mean_estimation_error,
                _ => None,
            };
            let ours = value(find(f.policy)?);
            let simulated = match f.versus {
                None => ours,
                Some(versus) => {
                    let theirs = value(find(versus)?).filter(|t| *t > 0.0);
                    ours.zip(theirs).map(|(o, t)| {
                        if f.reduction {
                            1.0 - o / t
                        } else {
                            o / t - 1.0
                        }
                    })
                }
            };
            Some(Comparison {
                figure: *f,
                simulated,
                difference: simulated.map(|s| s - f.value),
            })
        })
        .collect()
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), |v| format!("{:.1}", v * 100.0))
}

/// The Markdown table, then the paper's figures beside the simulated ones.
pub fn markdown(report: &Report) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "seed {}, {} jobs\n", report.seed, report.jobs);
    let _ = writeln!(
        t,
        "| config | policy | bin | jobs | median k/k_max % | mean k/k_max % | missed % | mean est. err % | p90 est. err % |"
    );
    let _ = writeln!(t, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    for r in &report.rows {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.config,
            r.policy,
            r.bin,
            r.jobs,
            pct(r.median_deviation),
            pct(r.mean_deviation),
            pct(Some(r.missed_fraction)),
            pct(r.mean_estimation_error),
            pct(r.p90_estimation_error)
        );
    }
    let has = |slice: Slice| report.rows.iter().any(|r| r.bin == slice.name());
    if has(Slice::Partial) || has(Slice::NoneFits) {
        let _ = writeln!(
            t,
            "\n`partial`: jobs whose deadline admits some but not all of their maps (0 < k_max < maps), \
             the only jobs where k/k_max tells policies apart. `none-fits`: jobs where no schedule \
             reads a map in time (k_max = 0). Both cut the same jobs as the size bins."
        );
    }
    if !report.paper.is_empty() {
        let _ = writeln!(
            t,
            "\n| beside the paper | metric | paper % | yard % | difference (points) | source |"
        );
        let _ = writeln!(t, "|---|---|---:|---:|---:|---|");
        for c in &report.paper {
            let f = &c.figure;
            let metric = match f.versus {
                None => f.metric.to_owned(),
                Some(v) => {
                    let how = if f.reduction { "reduction" } else { "increase" };
                    format!("{} {how} vs {v}", f.metric)
                }
            };
            let _ = writeln!(
                t,
                "| {} {} {} | {} | {:.1} | {} | {} | {} |",
                f.config,
                f.policy,
                f.bin,
                metric,
                f.value * 100.0,
                pct(c.simulated),
                c.difference
                    .map_or("–".to_owned(), |d| format!("{:+.1}", d * 100.0)),
                f.source
            );
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(
        config: &'static str,
        policy: PolicyKind,
        bin: SizeBin,
        k: u32,
        k_max: u32,
        missed: bool,
        est: f64,
    ) -> JobResult {
        JobResult {
            job: "j".into(),
            config,
            policy,
            bin,
            maps: 10,
            k,
            k_max,
            deadline: 100.0,
            completion: if missed { 120.0 } else { 80.0 },
            estimate: Some(est),
            processed_fraction: 1.0,
            events: 1,
        }
    }

    #[test]
    fn statistics_by_hand() {
        assert_eq!(median(&[1.0, 2.0, 10.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.9), Some(9.0));
        assert_eq!(percentile(&[5.0], 0.9), Some(5.0));
        assert_eq!(percentile(&[], 0.9), None);
    }

    #[test]
    fn rows_by_config_policy_and_bin_with_the_paper_beside() {
        let results = vec![
            result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 80.0),
            result("C1", PolicyKind::Dart, SizeBin::Large, 10, 10, true, 60.0),
            result("C2", PolicyKind::Dart, SizeBin::Small, 5, 10, false, 88.0),
        ];
        let rows = rows(&results, &["C1", "C2"], &[PolicyKind::Dart]);
        let names: Vec<String> = rows
            .iter()
            .map(|r| format!("{} {}", r.config, r.bin))
            .collect();
        assert_eq!(
            names,
            [
                "C1 small",
                "C1 large",
                "C1 all",
                "C2 small",
                "C2 all",
                "all small",
                "all large",
                "all all"
            ]
        );
        let all = rows.last().unwrap();
        assert_eq!(all.jobs, 3);
        assert_eq!(all.median_deviation, Some(0.8));
        assert!((all.mean_deviation.unwrap() - 2.3 / 3.0).abs() < 1e-12);
        assert!((all.missed_fraction - 1.0 / 3.0).abs() < 1e-12);
        // |80 − 80| / 80, |120 − 60| / 120, |80 − 88| / 80 → 0, 0.5, 0.1.
        assert!((all.mean_estimation_error.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(all.p90_estimation_error, Some(0.5));
        let c = compare(&rows, "deadlines", &["C1", "C2"]);
        let missed = c
            .iter()
            .find(|c| c.figure.metric == "missed_fraction" && c.figure.policy == "dart")
            .unwrap();
        assert_eq!(missed.simulated, Some(1.0 / 3.0));
        assert!((missed.difference.unwrap() - (1.0 / 3.0 - 0.035)).abs() < 1e-12);
        let table = markdown(&Report {
            seed: 1,
            jobs: 3,
            rows,
            paper: c,
        });
        assert!(
            table.contains("| all | dart | all | 3 | 80.0 | 76.7 | 33.3 | 20.0 | 50.0 |"),
            "{table}"
        );
    }

    #[test]
    fn partial_and_none_fits_cut_jobs_by_what_their_deadline_leaves_to_read() {
        let results = vec![
            result("C2", PolicyKind::Dart, SizeBin::Small, 4, 5, false, 80.0), // partial
            result("C2", PolicyKind::Dart, SizeBin::Large, 10, 10, false, 80.0), // all fits
            result("C2", PolicyKind::Dart, SizeBin::Small, 1, 0, true, 80.0),  // nothing fits
            result("C2", PolicyKind::Dart, SizeBin::Medium, 9, 9, true, 80.0), // partial, late
        ];
        let rows = rows(&results, &["C2"], &[PolicyKind::Dart]);
        let by_bin = |bin: &str| rows.iter().find(|r| r.bin == bin).unwrap();
        let partial = by_bin("partial");
        assert_eq!(partial.jobs, 2);
        assert_eq!(partial.median_deviation, Some(0.9));
        assert_eq!(partial.missed_fraction, 0.5);
        let none = by_bin("none-fits");
        assert_eq!((none.jobs, none.median_deviation), (1, None));
        assert_eq!(none.missed_fraction, 1.0);
        assert_eq!(
            by_bin("all").jobs,
            4,
            "the cuts leave the other bins as they were"
        );
        let table = markdown(&Report {
            seed: 1,
            jobs: 4,
            rows,
            paper: Vec::new(),
        });
        assert!(
            table.contains("| C2 | dart | partial | 2 | 90.0 |"),
            "{table}"
        );
        assert!(
            table.contains("`none-fits`: jobs where no schedule"),
            "{table}"
        );
    }

    #[test]
    fn the_papers_deviation_figures_sit_beside_c1_and_c2_pooled_not_beside_c3() {
        // §6.3 pools C1 and C2; a C3 job (k/k_max = 1) must not lift the figure.
        let results = vec![
            result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 80.0),
            result("C2", PolicyKind::Dart, SizeBin::Small, 6, 10, false, 80.0),
            result("C3", PolicyKind::Dart, SizeBin::Small, 10, 10, false, 80.0),
        ];
        let configs = ["C1", "C2", "C3"];
        let all_three = rows(&results, &configs, &[PolicyKind::Dart]);
        let scopes: Vec<&str> = all_three.iter().map(|r| r.config.as_str()).collect();
        assert_eq!(
            scopes,
            [
                "C1", "C1", "C2", "C2", "C3", "C3", "C1+C2", "C1+C2", "all", "all"
            ]
        );
        let c = compare(&all_three, "deadlines", &configs);
        let deviation = c
            .iter()
            .find(|c| c.figure.metric == "mean_deviation" && c.figure.bin == "all")
            .unwrap();
        assert_eq!(deviation.figure.config, "C1+C2");
        assert!((deviation.simulated.unwrap() - 0.7).abs() < 1e-12);
        // With exactly C1 and C2, "all" is the pool.
        let two = rows(&results[..2], &["C1", "C2"], &[PolicyKind::Dart]);
        let c = compare(&two, "deadlines", &["C1", "C2"]);
        let deviation = c
            .iter()
            .find(|c| c.figure.metric == "mean_deviation" && c.figure.bin == "all")
            .unwrap();
        assert!((deviation.simulated.unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn relative_figures_compare_two_policies() {
        let results = vec![
            result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 88.0), // error 0.1
            result("C1", PolicyKind::Aria, SizeBin::Small, 8, 10, false, 64.0), // error 0.2
        ];
        let rows = rows(&results, &["C1"], &[PolicyKind::Dart, PolicyKind::Aria]);
        let c = compare(&rows, "estimation", &["C1"]);
        assert_eq!(c.len(), 1);
        assert!(
            (c[0].simulated.unwrap() - 0.5).abs() < 1e-12,
            "1 − 0.1 / 0.2"
        );
        let table = markdown(&Report {
            seed: 1,
            jobs: 1,
            rows,
            paper: c,
        });
        assert!(
            table.contains("mean_estimation_error reduction vs aria | 55.8 | 50.0 | -5.8 |"),
            "{table}"
        );
    }
}
