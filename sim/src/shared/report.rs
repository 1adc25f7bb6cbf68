//! A shared day's report: its rows per cluster policy, task policy and size bin, the days
//! run for it, and its Markdown.

use serde::Serialize;
use yard_appmaster::policy::PolicyKind;
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_workload::SizeBin;

use super::{DayStats, DeadlineFactor, SharedJob, SharedResult, each_day, simulate_day};
use crate::engine::Experiment;
use crate::experiment::quietly;
use crate::report::Outcomes;
use crate::table::{Column, Field, Printable, Row, Table, Unit};

/// One row of a shared day's report: a cluster policy and a task policy over a set of jobs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedRow {
    pub rm_policy: String,
    pub policy: String,
    /// `all`, or a size bin.
    pub bin: String,
    #[serde(flatten)]
    pub outcomes: Outcomes,
    /// Containers taken back from the row's jobs.
    pub preempted_containers: u64,
}

/// The rows of one (cluster policy, task policy) day: every job, then each size bin.
pub fn rows(rm: RmPolicy, policy: PolicyKind, results: &[SharedResult]) -> Vec<SharedRow> {
    let row = |bin: &str, of: &[&SharedResult]| SharedRow {
        rm_policy: rm.name().to_owned(),
        policy: policy.name().to_owned(),
        bin: bin.to_owned(),
        outcomes: Outcomes::of(of.iter().map(|r| &r.result)),
        preempted_containers: of.iter().map(|r| u64::from(r.preempted)).sum(),
    };
    let all: Vec<&SharedResult> = results.iter().collect();
    let mut out = vec![row("all", &all)];
    for bin in SizeBin::ALL {
        let of: Vec<&SharedResult> = results.iter().filter(|r| r.result.bin == bin).collect();
        if !of.is_empty() {
            out.push(row(bin.name(), &of));
        }
    }
    out
}

/// With capacity queues, one row per queue (`bin`: `queue NAME`) over its jobs: job `i` of
/// `jobs` ran in the `i mod N`-th queue.
fn queue_rows(
    rm: RmPolicy,
    policy: PolicyKind,
    jobs: &[SharedJob],
    results: &[SharedResult],
    exp: &Experiment,
) -> Vec<SharedRow> {
    let Some(file) = exp.cluster.queues.as_ref().filter(|f| !f.queue.is_empty()) else {
        return Vec::new();
    };
    let n = file.queue.len();
    let index: std::collections::BTreeMap<&str, usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.job.id.as_str(), i))
        .collect();
    file.queue
        .iter()
        .enumerate()
        .map(|(k, q)| {
            let of: Vec<&SharedResult> = results
                .iter()
                .filter(|r| index.get(r.result.job.as_str()).is_some_and(|i| i % n == k))
                .collect();
            SharedRow {
                rm_policy: rm.name().to_owned(),
                policy: policy.name().to_owned(),
                bin: format!("queue {}", q.name),
                outcomes: Outcomes::of(of.iter().map(|r| &r.result)),
                preempted_containers: of.iter().map(|r| u64::from(r.preempted)).sum(),
            }
        })
        .collect()
}

/// A shared day's report: every (cluster policy, task policy) pair on the same jobs.
#[derive(Debug, Clone, Serialize)]
pub struct SharedReport {
    pub seed: u64,
    pub jobs: usize,
    pub nodes: u32,
    /// The simulator's racks are all of this size (`--topology`: its racks' mean, rounded up).
    pub nodes_per_rack: u32,
    pub containers_per_node: u32,
    pub deadline_factor: DeadlineFactor,
    pub time_scale: f64,
    /// Every task its own container (`PolicyConfig::one_task_per_container`), or reused.
    pub one_task_per_container: bool,
    pub model: crate::config::Model,
    /// Per pair: `all`, then each size bin.
    pub rows: Vec<SharedRow>,
    /// Per pair, what the day cost and did.
    pub days: Vec<DayRow>,
}

/// One pair's day.
#[derive(Debug, Clone, Serialize)]
pub struct DayRow {
    pub rm_policy: String,
    pub policy: String,
    #[serde(flatten)]
    pub stats: DayStats,
}

/// Runs every pair of `rm_policies` × `policies` on `jobs` (each pair a day of its own, the
/// pairs spread over the machine's cores) and reports them in that order.
pub fn run_days(
    jobs: &[SharedJob],
    rm_policies: &[RmPolicy],
    policies: &[PolicyKind],
    exp: &Experiment,
    factor: DeadlineFactor,
    time_scale: f64,
) -> SharedReport {
    let days = each_day(
        rm_policies,
        policies,
        |rm, p| simulate_day(jobs, rm, p, exp),
        &quietly,
    );
    let mut report = SharedReport {
        seed: exp.seed,
        jobs: jobs.len(),
        nodes: exp.cluster.nodes,
        nodes_per_rack: exp.cluster.nodes_per_rack,
        containers_per_node: exp.cluster.containers_per_node,
        deadline_factor: factor,
        time_scale,
        one_task_per_container: exp.policy.one_task_per_container,
        model: exp.model,
        rows: Vec::new(),
        days: Vec::new(),
    };
    for ((rm, p), (results, stats)) in days {
        report.rows.extend(rows(rm, p, &results));
        report.rows.extend(queue_rows(rm, p, jobs, &results, exp));
        report.days.push(DayRow {
            rm_policy: rm.name().to_owned(),
            policy: p.name().to_owned(),
            stats,
        });
    }
    report
}

/// The report as markdown: what was run, the rows, and each day's counts.
pub fn markdown(r: &SharedReport) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "seed {}, {} jobs on one cluster of {} × {} containers ({}), deadlines U[{}, {}]·T_J (T_J: the job alone on the whole cluster), arrivals × {}; {}\n",
        r.seed,
        r.jobs,
        r.nodes,
        r.containers_per_node,
        match r.one_task_per_container {
            true => "a container per task",
            false => "containers reused across a job's tasks",
        },
        r.deadline_factor.lo,
        r.deadline_factor.hi,
        r.time_scale,
        r.model.describe()
    );
    t += &Table::rows(&r.rows).markdown();
    let _ = writeln!(
        t,
        "\nmissed: answered after D; empty: by D from no input (not a met deadline); met: by D from some input. Relative deadline exceeded: ARIA's sum over missed jobs of (completion − D)/D, over the jobs that answered (median exceeded: the median of (completion − D)/D over them); unanswered: jobs still running when the day gave up.\n"
    );
    t += &Table::rows(&r.days).markdown();
    t
}

impl Row for SharedRow {
    fn fields() -> Vec<Field<SharedRow>> {
        let pct = |h: &str| Column::new(h, Unit::Percent(1));
        vec![
            (Column::text("rm policy"), |x| x.rm_policy.as_str().into()),
            (Column::text("policy"), |x| x.policy.as_str().into()),
            (Column::text("bin"), |x| x.bin.as_str().into()),
            (Column::new("jobs", Unit::Count), |x| x.outcomes.jobs.into()),
            (pct("missed %"), |x| x.outcomes.missed_fraction.into()),
            (pct("empty %"), |x| x.outcomes.empty_fraction.into()),
            (pct("met %"), |x| x.outcomes.met_fraction.into()),
            (pct("processed %"), |x| {
                x.outcomes.mean_processed_fraction.into()
            }),
            (Column::new("mean completion s", Unit::Fixed(1)), |x| {
                x.outcomes.mean_completion_s.into()
            }),
            (pct("relative deadline exceeded %"), |x| {
                x.outcomes.relative_deadline_exceeded.into()
            }),
            (pct("median exceeded %"), |x| {
                x.outcomes.median_deadline_exceeded.into()
            }),
            (Column::new("unanswered", Unit::Count), |x| {
                x.outcomes.unanswered.into()
            }),
            (Column::new("preempted containers", Unit::Count), |x| {
                x.preempted_containers.into()
            }),
        ]
    }
}

impl Row for DayRow {
    fn fields() -> Vec<Field<DayRow>> {
        let count = |h: &str| Column::new(h, Unit::Count);
        vec![
            (Column::text("rm policy"), |d| d.rm_policy.as_str().into()),
            (Column::text("policy"), |d| d.policy.as_str().into()),
            (count("spare allocations"), |d| {
                d.stats.spare_allocations.into()
            }),
            (count("spare kills"), |d| d.stats.spare_kills.into()),
            (count("rm events"), |d| d.stats.rm_events.into()),
            (count("policy events"), |d| d.stats.policy_events.into()),
            (Column::new("virtual span s", Unit::Fixed(0)), |d| {
                d.stats.span.into()
            }),
        ]
    }
}

impl Printable for SharedReport {
    fn text(&self) -> String {
        markdown(self)
    }
}
