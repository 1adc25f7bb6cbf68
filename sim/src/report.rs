//! What an experiment prints (EVALUATION.md "What every experiment prints"): per configuration,
//! policy and bin — jobs, median and mean k/k_max, how the answers ended (met, empty, missed),
//! how much input reached them (against the k_max schedule's), the estimation error at map
//! close (mean, median, p80, p90; an empty answer's apart) and per phase at three moments —
//! beside the Dart paper's figure where it has one.
//!
//! The size bins and `all` count the jobs with k_max ≥ 1, the paper's population (it computes
//! k/k_max for every job, so none of its jobs had k_max = 0); `none-fits` (k_max = 0) is
//! reported apart and `every` counts both. The paper's figures sit beside the former.

use serde::Serialize;
use yard_appmaster::policy::PolicyKind;
use yard_workload::SizeBin;

use crate::config::Model;
use crate::engine::{JobResult, Moment, Outcome, Phase, label};

mod markdown;
pub(crate) use markdown::{
    ESTIMATION, FIGURES, GUARD_FIGURES, estimation_table, guard_note, in_estimation_table,
    paper_cells, paper_table, percent_columns, uncapped_line,
};
pub use markdown::{LEGEND, markdown, no_tasks_note};

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
    /// The three outcomes ([`Outcome`]); they sum to 1.
    pub missed_fraction: f64,
    pub empty_fraction: f64,
    pub met_fraction: f64,
    /// The mean over the row's jobs of the input fraction whose records reached the answer,
    /// after every cut (maps not run, reduce input sampled).
    pub mean_processed_fraction: f64,
    /// The mean over the row's jobs with k_max ≥ 1 of processed bytes over the bytes the
    /// k_max schedule reads; `null` when no job has k_max ≥ 1.
    pub data_vs_oracle: Option<f64>,
    /// The mean over the row's jobs whose byte oracle reads something of processed bytes over
    /// the byte oracle's (`oracle::byte_max`: the most input any schedule of whole maps reads
    /// by D), capped at 1 per job; `null` when no job's oracle reads anything. Where the oracle
    /// is only an upper bound the job's figure is below its true one, never above.
    pub bytes_vs_oracle: Option<f64>,
    /// The share of those jobs whose byte oracle is exact (the rest: a proven upper bound).
    pub bytes_oracle_exact_fraction: Option<f64>,
    /// `bytes_vs_oracle` over those of the jobs whose byte oracle is exact: no bound pulls it
    /// down, but the jobs it leaves out (mostly those of more than `BYTE_EXACT_MAX_MAPS`
    /// maps) are not a random sample, so it stands beside `bytes_vs_oracle`, not for it.
    pub bytes_vs_exact_oracle: Option<f64>,
    /// |T − T̂| / T of the estimate at map close, over the answers from some input (k ≥ 1,
    /// processed fraction > 0).
    pub mean_estimation_error: Option<f64>,
    pub median_estimation_error: Option<f64>,
    pub p80_estimation_error: Option<f64>,
    pub p90_estimation_error: Option<f64>,
    /// `p80_estimation_error` of the uncapped estimate (Dart eq. (1)'s parts summed, before
    /// `dart`'s `forecast_cut` caps the total at D under its guard), over the same answers.
    pub p80_estimation_error_uncapped: Option<f64>,
    /// `p80_estimation_error` over the answers whose estimate the cap left alone (it ended
    /// before D), and their share of the answers with an estimate.
    pub p80_estimation_error_under_d: Option<f64>,
    pub under_d_share: Option<f64>,
    /// `p80_estimation_error` of the estimate the map close carried, before any re-sent after
    /// it (`dart`'s `reforecast_after_kill`), over the same answers: the error no later
    /// knowledge of the job's own kills helped.
    pub p80_close_estimation_error: Option<f64>,
    /// The floor's error `|T − T̂_floor| / T` (`crate::floor`: the completion's median over
    /// redraws of the reduces' noise, all else as it ran) over the same jobs as the estimation
    /// error: what no estimate at map close can avoid on this model.
    pub mean_floor_error: Option<f64>,
    pub median_floor_error: Option<f64>,
    pub p80_floor_error: Option<f64>,
    /// The same error for answers from no input (k = 0 or processed fraction 0): apart, as
    /// it measures nothing (the estimate is of a job that reads nothing).
    pub empty_estimation_error: Stats,
    /// Per phase, at each moment, over the answers from some input.
    pub estimation: Estimation,
    /// Seconds before the deadline the row's runs were guarded at (the deadline guard:
    /// yard's, beyond the paper); `null` for a row without the guard (its policy's name has
    /// no `+guard`).
    pub guard_seconds: Option<f64>,
    /// The share of the row's jobs where the guard fired (the job had not finished
    /// `guard_seconds` before its deadline); `null` without the guard.
    pub guard_fired_fraction: Option<f64>,
    /// What the guard cost: the mean over the row's jobs of the processed fraction of the same
    /// job run without the guard less this run's (0 where the guard did not fire, so the runs
    /// are the same). The unguarded twin's answer may have come late: this is what arriving
    /// by D cost in input, not a loss against a met deadline. `null` without the guard.
    pub guard_cost: Option<f64>,
    /// The share of the row's jobs that missed their deadline without the guard and met it
    /// with it (an answer by D from some input); `null` without the guard.
    pub guard_rescued_fraction: Option<f64>,
}

/// Mean, median and 80th percentile of a set of errors, and how many there were.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub jobs: usize,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub p80: Option<f64>,
}

impl Stats {
    fn of(mut values: Vec<f64>) -> Stats {
        values.sort_by(f64::total_cmp);
        Stats {
            jobs: values.len(),
            mean: mean(&values),
            median: median(&values),
            p80: percentile(&values, 0.8),
        }
    }
}

/// The estimation error of each phase (Dart Table 3, Fig. 12b–d). A phase already over at
/// the moment ([`Moment::measures`]) has no jobs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseErrors {
    pub map: Stats,
    pub shuffle: Stats,
    pub reduce: Stats,
    pub total: Stats,
}

impl PhaseErrors {
    pub fn get(&self, phase: Phase) -> &Stats {
        match phase {
            Phase::Map => &self.map,
            Phase::Shuffle => &self.shuffle,
            Phase::Reduce => &self.reduce,
            Phase::Total => &self.total,
        }
    }
}

/// [`PhaseErrors`] at each [`Moment`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimation {
    pub start: PhaseErrors,
    pub map_close: PhaseErrors,
    pub first_reduce: PhaseErrors,
}

impl Estimation {
    pub fn get(&self, moment: Moment) -> &PhaseErrors {
        match moment {
            Moment::Start => &self.start,
            Moment::MapClose => &self.map_close,
            Moment::FirstReduce => &self.first_reduce,
        }
    }

    fn of(results: &[&JobResult]) -> Estimation {
        let at = |moment: Moment| {
            let phase = |phase: Phase| {
                Stats::of(
                    results
                        .iter()
                        .filter(|r| !r.from_nothing())
                        .filter_map(|r| r.phase_error(moment, phase))
                        .collect(),
                )
            };
            PhaseErrors {
                map: phase(Phase::Map),
                shuffle: phase(Phase::Shuffle),
                reduce: phase(Phase::Reduce),
                total: phase(Phase::Total),
            }
        };
        Estimation {
            start: at(Moment::Start),
            map_close: at(Moment::MapClose),
            first_reduce: at(Moment::FirstReduce),
        }
    }
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

/// A paper figure next to the matching simulated value: without the guard (the paper's
/// algorithms have none), and with it where the run had it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    #[serde(flatten)]
    pub figure: PaperFigure,
    /// The yard policy whose rows the figure is set beside: the paper's Dart is set beside
    /// both `dart-paper` (its algorithm as printed) and `dart` (yard's, with extensions),
    /// every other policy beside its own.
    pub yard_policy: &'static str,
    /// The same for a relative figure's other policy.
    pub yard_versus: Option<&'static str>,
    pub simulated: Option<f64>,
    pub difference: Option<f64>,
    /// The same figure from the `+guard` rows (both policies guarded, for a relative figure).
    pub guarded: Option<f64>,
}

/// Everything `yard sim --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub seed: u64,
    pub jobs: usize,
    /// Which jobs each bin counts ([`POPULATION`]).
    pub population: &'static str,
    /// Seconds before the deadline the `+guard` rows were guarded at; 0 when no run was.
    pub guard: f64,
    /// Trace jobs with no tasks (a Rumen job killed before any ran): counted here, never
    /// scheduled or scored (a job with nothing to run has no deadline to meet or miss). `jobs`
    /// leaves them out.
    pub no_task_jobs: usize,
    /// How harsh the simulator was: progress reports, the task duration law, profiles.
    pub model: Model,
    pub rows: Vec<Row>,
    pub paper: Vec<Comparison>,
}

/// What the bins count, as `--json` says it.
pub(crate) const POPULATION: &str = "small, medium, large, all: jobs with k_max >= 1 (the paper's \
    population), beside which the paper's figures sit; one-map, two-plus: those of one map and \
    of two or more; partial: 0 < k_max < maps; none-fits: k_max = 0, reported apart; every: all \
    jobs";

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
    // The paper's "meets 96.5 % of deadlines" is 1 − missed; yard's met leaves out the
    // answers from no input, which the paper does not mention.
    fig("deadlines", "all", "dart", "all", "met_fraction", 0.965, "§6.2 Fig. 8a (1 − missed)"),
    fig("deadlines", "all", "ps", "all", "met_fraction", 0.942, "§6.2 Fig. 8a (1 − missed)"),
    fig("deadlines", C12, "dart", "all", "mean_deviation", 0.884, "§6.3"),
    rel("deadlines", C12, "dart", "ps", "mean_deviation", Change::Increase(0.138), "§6.3 (\"about 13.8 % more data\")"),
    fig("deadlines", C12, "dart", "small", "mean_deviation", 0.852, "§6.3 Fig. 11"),
    fig("deadlines", C12, "dart", "large", "mean_deviation", 0.951, "§6.3 Fig. 11"),
    fig("deadlines", C12, "ps", "small", "mean_deviation", 0.892, "§6.3 Fig. 11"),
    fig("deadlines", C12, "ps", "large", "mean_deviation", 0.737, "§6.3 Fig. 11"),
    rel("estimation", "all", "dart", "aria", "mean_estimation_error", Change::Reduction(0.558), "§6.4 Fig. 12a"),
    fig("estimation", "all", "dart", "all", "p80_estimation_error", 0.148, "§6.4 Fig. 12a"),
    fig("estimation", "all", "aria", "all", "p80_estimation_error", 0.332, "§6.4 Fig. 12a"),
    rel("estimation", "C1", "dart", "aria", "map_close.map.mean", Change::Reduction(0.677), "§6.4 Fig. 12b"),
    rel("estimation", "C3", "dart", "aria", "map_close.map.mean", Change::Reduction(0.654), "§6.4 Fig. 12b"),
    // Table 3's periods as yard's moments: job start is in MS–SS, map close in SS–ME (the
    // paper's map phase ends with its last map; Dart closes it earlier), the first reduce's
    // end in RS–RE.
    fig("estimation", "all", "dart", "all", "start.map.mean", 0.1171, "§6.4 Table 3 (MS–SS)"),
    fig("estimation", "all", "dart", "all", "start.reduce.mean", 0.1548, "§6.4 Table 3 (MS–SS)"),
    fig("estimation", "all", "dart", "all", "map_close.map.mean", 0.0453, "§6.4 Table 3 (SS–ME)"),
    fig("estimation", "all", "dart", "all", "map_close.shuffle.mean", 0.1984, "§6.4 Table 3 (SS–ME)"),
    fig("estimation", "all", "dart", "all", "map_close.reduce.mean", 0.1276, "§6.4 Table 3 (SS–ME)"),
    fig("estimation", "all", "dart", "all", "first_reduce.reduce.mean", 0.0593, "§6.4 Table 3 (RS–RE)"),
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

/// Which of a scope's jobs a row counts: a size bin or all of the paper's population (k_max ≥
/// 1), the jobs grouped by what their deadline leaves to read, or every job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slice {
    /// Jobs of this size with k_max ≥ 1.
    Size(SizeBin),
    /// Every job with k_max ≥ 1: the paper's population.
    All,
    /// Jobs of one map with k_max ≥ 1: all or nothing (issue 29's single-map goals).
    OneMap,
    /// Jobs of two or more maps with k_max ≥ 1: where an answer can be partial (issue 29's
    /// main goals; `--min-maps 2` keeps only these jobs).
    TwoPlus,
    /// 0 < k_max < maps: some but not all of the input can be read by the deadline. Only here
    /// can k/k_max tell policies apart: where all input fits, reading it all scores 100 %.
    Partial,
    /// k_max = 0: no schedule reads a single map by the deadline, so k/k_max is undefined and
    /// every policy misses or answers from nothing. Apart from the paper's population.
    NoneFits,
    /// Every job, k_max = 0 or not.
    Every,
}

impl Slice {
    const ALL: [Slice; 9] = [
        Slice::Size(SizeBin::Small),
        Slice::Size(SizeBin::Medium),
        Slice::Size(SizeBin::Large),
        Slice::All,
        Slice::OneMap,
        Slice::TwoPlus,
        Slice::Partial,
        Slice::NoneFits,
        Slice::Every,
    ];

    fn name(self) -> &'static str {
        match self {
            Slice::Size(bin) => bin.name(),
            Slice::All => "all",
            Slice::OneMap => "one-map",
            Slice::TwoPlus => "two-plus",
            Slice::Partial => "partial",
            Slice::NoneFits => "none-fits",
            Slice::Every => "every",
        }
    }

    fn holds(self, r: &JobResult) -> bool {
        match self {
            Slice::Size(bin) => r.k_max > 0 && r.bin == bin,
            Slice::All => r.k_max > 0,
            Slice::OneMap => r.k_max > 0 && r.maps == 1,
            Slice::TwoPlus => r.k_max > 0 && r.maps >= 2,
            Slice::Partial => r.k_max > 0 && r.k_max < r.maps,
            Slice::NoneFits => r.k_max == 0,
            Slice::Every => true,
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

/// How a set of jobs ended — the shares of the three [`Outcome`]s, the input that reached the
/// answers, the time the answered took and how far the late ones overran — computed once for
/// every experiment's rows (each keeps the fields its `--json` promises; the shared day's rows
/// are these fields, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcomes {
    pub jobs: usize,
    /// The three outcomes' shares; they sum to 1 (0 each over no jobs).
    pub missed_fraction: f64,
    pub empty_fraction: f64,
    pub met_fraction: f64,
    /// Input bytes whose records reached the answer over all input bytes, per job, averaged;
    /// 0 over no jobs.
    pub mean_processed_fraction: f64,
    /// From arrival to answer, seconds (ARIA's metric 3), over the jobs that answered; `None`
    /// when none did.
    pub mean_completion_s: Option<f64>,
    /// ARIA's metric 1: Σ over missed jobs that answered of (completion − D) / D.
    pub relative_deadline_exceeded: f64,
    /// The middle (upper median) of `(completion − D) / D` over the missed jobs that answered:
    /// ARIA's sum above is dominated by a few jobs of tiny `D` that queued long (a trace's jobs
    /// of a millisecond alone).
    pub median_deadline_exceeded: Option<f64>,
    /// Jobs that never answered (the day's limit): missed, and apart from the sum above.
    pub unanswered: usize,
}

impl Outcomes {
    pub fn of<'a>(results: impl IntoIterator<Item = &'a JobResult>) -> Outcomes {
        let results: Vec<&JobResult> = results.into_iter().collect();
        let n = results.len();
        let share = |o: Outcome| {
            results.iter().filter(|r| r.outcome() == o).count() as f64 / n.max(1) as f64
        };
        let answered: Vec<f64> = results
            .iter()
            .map(|r| r.completion)
            .filter(|c| c.is_finite())
            .collect();
        // Over every job, as ARIA sums it (a job on time adds 0).
        let relative_deadline_exceeded = results
            .iter()
            .map(|r| deadline_exceeded(r))
            .filter(|x| x.is_finite())
            .sum();
        let mut exceeded: Vec<f64> = results
            .iter()
            .filter(|r| r.missed())
            .map(|r| deadline_exceeded(r))
            .filter(|x| x.is_finite())
            .collect();
        exceeded.sort_by(f64::total_cmp);
        Outcomes {
            jobs: n,
            missed_fraction: share(Outcome::Missed),
            empty_fraction: share(Outcome::Empty),
            met_fraction: share(Outcome::Met),
            mean_processed_fraction: results.iter().map(|r| r.processed_fraction).sum::<f64>()
                / n.max(1) as f64,
            mean_completion_s: (!answered.is_empty())
                .then(|| answered.iter().sum::<f64>() / answered.len() as f64),
            unanswered: n - answered.len(),
            relative_deadline_exceeded,
            median_deadline_exceeded: (!exceeded.is_empty()).then(|| exceeded[exceeded.len() / 2]),
        }
    }
}

/// ARIA's relative deadline exceeded for one job (seed 000 §IV-A, metric 1): `(T_compl − T_ar −
/// D) / D` when it missed, else 0 (completion and deadline count from its arrival).
pub(crate) fn deadline_exceeded(r: &JobResult) -> f64 {
    match r.missed() {
        true => (r.completion - r.deadline) / r.deadline.max(f64::MIN_POSITIVE),
        false => 0.0,
    }
}

fn row(config: &str, policy: &str, bin: &str, results: &[&JobResult]) -> Row {
    let guarded = results.first().is_some_and(|r| r.guard > 0.0);
    let over_twins = |f: &dyn Fn(&JobResult) -> Option<f64>| {
        let v: Vec<f64> = results.iter().filter_map(|r| f(r)).collect();
        if guarded { mean(&v) } else { None }
    };
    let mut deviations: Vec<f64> = results.iter().filter_map(|r| r.deviation()).collect();
    let (nothing, something): (Vec<&JobResult>, Vec<&JobResult>) =
        results.iter().partition(|r| r.from_nothing());
    // Each error over the answers from some input, sorted; the floor over the jobs the
    // estimation error is over.
    let sorted = |f: fn(&JobResult) -> Option<f64>| {
        let mut v: Vec<f64> = something.iter().filter_map(|r| f(r)).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let errors = sorted(JobResult::estimation_error);
    let uncapped = sorted(JobResult::uncapped_estimation_error);
    let under_d = sorted(JobResult::under_d_estimation_error);
    let at_close = sorted(|r| r.estimation_error().and(r.close_estimation_error()));
    let floors = sorted(|r| r.estimation_error().and(r.floor_error()));
    deviations.sort_by(f64::total_cmp);
    let outcomes = Outcomes::of(results.iter().copied());
    let vs_oracle: Vec<f64> = results.iter().filter_map(|r| r.data_vs_oracle()).collect();
    let with_bytes: Vec<&&JobResult> = results
        .iter()
        .filter(|r| r.byte_max_fraction > 0.0)
        .collect();
    let bytes_vs: Vec<f64> = with_bytes
        .iter()
        .filter_map(|r| r.bytes_vs_oracle())
        .collect();
    let exact = with_bytes.iter().filter(|r| r.byte_max_exact).count();
    let bytes_vs_exact: Vec<f64> = with_bytes
        .iter()
        .filter(|r| r.byte_max_exact)
        .filter_map(|r| r.bytes_vs_oracle())
        .collect();
    Row {
        config: config.to_owned(),
        policy: policy.to_owned(),
        bin: bin.to_owned(),
        jobs: results.len(),
        median_deviation: median(&deviations),
        mean_deviation: mean(&deviations),
        missed_fraction: outcomes.missed_fraction,
        empty_fraction: outcomes.empty_fraction,
        met_fraction: outcomes.met_fraction,
        mean_processed_fraction: outcomes.mean_processed_fraction,
        data_vs_oracle: mean(&vs_oracle),
        bytes_vs_oracle: mean(&bytes_vs),
        bytes_oracle_exact_fraction: (!with_bytes.is_empty())
            .then(|| exact as f64 / with_bytes.len() as f64),
        bytes_vs_exact_oracle: mean(&bytes_vs_exact),
        mean_estimation_error: mean(&errors),
        median_estimation_error: median(&errors),
        p80_estimation_error: percentile(&errors, 0.8),
        p90_estimation_error: percentile(&errors, 0.9),
        p80_estimation_error_uncapped: percentile(&uncapped, 0.8),
        p80_estimation_error_under_d: percentile(&under_d, 0.8),
        under_d_share: (!errors.is_empty()).then(|| under_d.len() as f64 / errors.len() as f64),
        p80_close_estimation_error: percentile(&at_close, 0.8),
        mean_floor_error: mean(&floors),
        median_floor_error: median(&floors),
        p80_floor_error: percentile(&floors, 0.8),
        empty_estimation_error: Stats::of(
            nothing
                .iter()
                .filter_map(|r| r.estimation_error())
                .collect(),
        ),
        estimation: Estimation::of(&something),
        guard_seconds: results.first().filter(|_| guarded).map(|r| r.guard),
        guard_fired_fraction: guarded.then(|| share_where(results, |r| r.guard_fired)),
        guard_cost: over_twins(&JobResult::guard_cost),
        guard_rescued_fraction: over_twins(&|r| r.guard_rescued().map(f64::from)),
    }
}

fn share_where(results: &[&JobResult], f: impl Fn(&JobResult) -> bool) -> f64 {
    match results.len() {
        0 => 0.0,
        n => results.iter().filter(|r| f(r)).count() as f64 / n as f64,
    }
}

/// Rows per configuration (in `configs` order; then "C1+C2" when both run beside another, as
/// the paper's §6.3 pools them; then "all" when there are several), policy (in `policies`
/// order) and bin: small, medium, large and all over the jobs with k_max ≥ 1 (the paper's
/// population), "one-map" and "two-plus" (its jobs of one map, and of two or more), then
/// "partial" (0 < k_max < maps) and "none-fits" (k_max = 0), which cut the
/// jobs by what their deadline leaves to read, then "every" (all jobs). Empty bins are left
/// out. A policy run with the deadline guard has its `+guard` rows after its own.
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
            for guarded in [false, true] {
                let label = label(policy, guarded);
                for slice in Slice::ALL {
                    let matching: Vec<&JobResult> = results
                        .iter()
                        .filter(|r| members.contains(&r.config) && r.policy == policy)
                        .filter(|r| (r.guard > 0.0) == guarded && slice.holds(r))
                        .collect();
                    if matching.is_empty() {
                        continue;
                    }
                    out.push(row(scope, &label, slice.name(), &matching));
                }
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
        .flat_map(|f| {
            let config = match f.config {
                "all" => lone.unwrap_or("all"),
                C12 if just_c12 => "all",
                other => other,
            };
            let find = |policy: &str| {
                rows.iter()
                    .find(|r| r.config == config && r.policy == policy && r.bin == f.bin)
            };
            let value = |row: &Row| metric(row, f.metric);
            let versions = yard_versions(f.policy)
                .into_iter()
                .flat_map(move |p| versus_versions(f.versus).into_iter().map(move |v| (p, v)));
            let comparisons: Vec<Comparison> = versions
                .filter_map(|(policy, versus)| {
                    let figure = |suffix: &str| {
                        let ours = value(find(&format!("{policy}{suffix}"))?);
                        match versus {
                            None => ours,
                            Some(versus) => {
                                let theirs =
                                    value(find(&format!("{versus}{suffix}"))?).filter(|t| *t > 0.0);
                                ours.zip(theirs).map(|(o, t)| {
                                    if f.reduction {
                                        1.0 - o / t
                                    } else {
                                        o / t - 1.0
                                    }
                                })
                            }
                        }
                    };
                    find(policy)?;
                    let simulated = figure("");
                    Some(Comparison {
                        figure: *f,
                        yard_policy: policy,
                        yard_versus: versus,
                        simulated,
                        difference: simulated.map(|s| s - f.value),
                        guarded: figure("+guard"),
                    })
                })
                .collect();
            comparisons
        })
        .collect()
}

/// The yard policies a paper figure of `policy` sits beside: its Dart beside both Darts.
fn yard_versions(policy: &'static str) -> Vec<&'static str> {
    match policy {
        "dart" => vec!["dart-paper", "dart"],
        other => vec![other],
    }
}

/// [`yard_versions`] of a relative figure's other policy (none for an absolute figure).
fn versus_versions(versus: Option<&'static str>) -> Vec<Option<&'static str>> {
    match versus {
        None => vec![None],
        Some(v) => yard_versions(v).into_iter().map(Some).collect(),
    }
}

/// A row's value of a metric by name: a field of [`Row`], or `<moment>.<phase>.<stat>` of its
/// estimation errors (`map_close.shuffle.median`).
pub fn metric(row: &Row, name: &str) -> Option<f64> {
    match name {
        "missed_fraction" => Some(row.missed_fraction),
        "empty_fraction" => Some(row.empty_fraction),
        "met_fraction" => Some(row.met_fraction),
        "mean_processed_fraction" => Some(row.mean_processed_fraction),
        "data_vs_oracle" => row.data_vs_oracle,
        "bytes_vs_oracle" => row.bytes_vs_oracle,
        "bytes_oracle_exact_fraction" => row.bytes_oracle_exact_fraction,
        "bytes_vs_exact_oracle" => row.bytes_vs_exact_oracle,
        "mean_deviation" => row.mean_deviation,
        "median_deviation" => row.median_deviation,
        "mean_estimation_error" => row.mean_estimation_error,
        "median_estimation_error" => row.median_estimation_error,
        "p80_estimation_error" => row.p80_estimation_error,
        "p90_estimation_error" => row.p90_estimation_error,
        "p80_estimation_error_uncapped" => row.p80_estimation_error_uncapped,
        "p80_estimation_error_under_d" => row.p80_estimation_error_under_d,
        "under_d_share" => row.under_d_share,
        "p80_close_estimation_error" => row.p80_close_estimation_error,
        "mean_floor_error" => row.mean_floor_error,
        "median_floor_error" => row.median_floor_error,
        "p80_floor_error" => row.p80_floor_error,
        "jobs" => Some(row.jobs as f64),
        "empty_estimation_error" => row.empty_estimation_error.mean,
        "empty_estimation_error_median" => row.empty_estimation_error.median,
        "empty_estimation_error_p80" => row.empty_estimation_error.p80,
        "guard_fired_fraction" => row.guard_fired_fraction,
        "guard_cost" => row.guard_cost,
        "guard_rescued_fraction" => row.guard_rescued_fraction,
        _ => {
            let mut parts = name.split('.');
            let (moment, phase, stat) = (parts.next()?, parts.next()?, parts.next()?);
            let moment = Moment::ALL.into_iter().find(|m| m.name() == moment)?;
            let phase = Phase::ALL.into_iter().find(|p| p.name() == phase)?;
            let stats = row.estimation.get(moment).get(phase);
            match stat {
                "mean" => stats.mean,
                "median" => stats.median,
                "p80" => stats.p80,
                _ => None,
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
