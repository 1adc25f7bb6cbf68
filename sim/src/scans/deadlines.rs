//! The deadline variant (yard's addition, issue 20 item 5): a share of the jobs with a Dart
//! deadline, FLEX, CIRCUMFLEX and CIRCUMFLEX-EDF on the same jobs, and its table.

use std::fmt::Write as _;

use rand::{RngExt, SeedableRng};
use serde::Serialize;
use yard_appmaster::policy::Rng;
use yard_cluster::scans::{self, Completion, Dataset, Metric, Outcome, PlannerConfig, ScanJob};

use super::figures::tasks;
use super::workload::workload;
use super::{DEADLINE_POLICIES, MODEL, ScansSetup, answers, policy, setup_line, workload_name};
use crate::experiment::par_map;
use crate::table::{Column, Field, Printable, Row, Table, Unit};

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

impl Row for DeadlineRow {
    fn fields() -> Vec<Field<DeadlineRow>> {
        // Every column left, as this table has always printed.
        let fixed = |h: &str, d: usize| Column::new(h, Unit::Fixed(d)).left();
        let count = |h: &str| Column::new(h, Unit::Count).left();
        vec![
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
        ]
    }
}

impl Printable for DeadlineReport {
    fn text(&self) -> String {
        deadline_markdown(self)
    }
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
        let rows = r.rows.iter().filter(|x| x.metric == metric.name());
        let table = Table::rows(rows);
        let _ = writeln!(t, "{}", table.markdown());
    }
    t
}
