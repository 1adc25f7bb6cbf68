//! The overload experiment (issue 17 item 5; seed 002, digest `../shared/papers/classifier.md`):
//! the same jobs on the same shared cluster, meeting the same background hogs (`crate::load`),
//! once with the rm's overload classifier (`yard_cluster::classifier`) filtering placements and once
//! without; what each run overloaded, slowed, relaunched, missed and got done.
//!
//! The paper has no numbers (digest §3): these goals are the issue's — the classifier cuts
//! overloaded-node-seconds by at least half, with at most 5 % of throughput lost and no more
//! missed deadlines — and the figures are yard's own.
//!
//! What each figure is:
//! - **overloaded-node-seconds**: every 5 s (when Linux updates its load average) each node
//!   whose load the operator's rule calls overloaded counts 5 s; from the first arrival to the
//!   last answer. The hogs alone never overload a node (`crate::load`), so all of it comes of
//!   tasks placed on busy nodes.
//! - **mean task slowdown**: over the task attempts that ran their whole work and succeeded,
//!   their time over their work at full speed where they ran (locality included): 1 when no
//!   node was ever contended under them.
//! - **relaunched tasks**: attempts launched for a task launched before — a master's
//!   speculative copy of a straggler, or a task run again after a kill, a failure or a
//!   preemption. No node fails here and memory never runs out (`crate::load`), so what the
//!   overloads cause shows as the masters' reaction to slow tasks: Dart's and LATE's copies and
//!   restarts (`full` and ARIA never speculate). Attempts the masters killed are beside it.
//! - **missed / empty**: the shared cluster's outcomes (an answer by D from no input is
//!   `empty`, not met).
//! - **throughput**: distinct tasks done (maps and reduces that finished) over the span from
//!   the first arrival to the last answer.
//!
//! Jobs' types: each task's demand is typed by its own bytes over its time at full speed
//! ([`crate::load::Demand::of`]); the rm hears a job's map and reduce types from the first map
//! and reduce of it that finish, through `yard_appmaster::typing::Probe::bound` on their
//! measured input, output and time against the node's disk rate (the live master's code). A
//! reduce's output is its input times the trace's output over shuffle bytes (1 when the trace
//! does not say).

use std::collections::BTreeMap;

use serde::Serialize;
use yard_appmaster::policy::{AttemptId, Seconds};
use yard_cluster::classifier::{ClassifierConfig, OverloadRule, Variant as ClassifierVariant};
use yard_cluster::ids::Bound;
use yard_cluster::scheduler::Placement;

use yard_appmaster::policy::PolicyKind;
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_workload::Workload;

use crate::engine::Experiment;
use crate::experiment::quietly;
use crate::job::SimJob;
use crate::load::{Hog, LoadConfig, Node};
use crate::report::Outcomes;
use crate::shared::{DeadlineFactor, SharedJob, SharedResult, each_day, simulate_loaded_day};
use crate::table::{Cell, Column, Field, Printable, Table, Unit};

/// What a day with the node load model needs beside its jobs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadSetup {
    pub load: LoadConfig,
    /// The rule overload is counted by, with the classifier or without (the classifier's own).
    pub rule: OverloadRule,
    /// The rm's overload classifier; `None`: off (the nodes' loads and the jobs' types still
    /// reach the rm, which ignores them).
    pub classifier: Option<ClassifierConfig>,
    /// Where the rm puts a task when no classifier chooses (`Pack`: its default).
    pub placement: Placement,
    /// Per job (in the day's order), its reduces' output over their input.
    pub reduce_output_ratio: Vec<f64>,
    /// Hand-made hogs instead of drawn ones: per node its CPU and IO hog, each switching at
    /// most once (`load::Node::scripted`). `None`: drawn from the seed.
    pub scripted_hogs: Option<Vec<[Hog; 2]>>,
}

/// What a day with the node load model measured, beside its jobs' ends.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct LoadStats {
    pub overloaded_node_seconds: f64,
    /// Of them, on a node running a task placed there while a hog that is still on was on:
    /// what placing tasks elsewhere could have spared. The rest came of hogs that switched on
    /// under tasks already running, or of a load average still falling after a hog stopped.
    pub overloaded_placed_on_hog: f64,
    /// Overloaded-node-seconds in each minute of the day (from its start).
    pub overloaded_per_minute: Vec<f64>,
    /// Node-seconds that no placement of the tasks running at each moment could have kept
    /// under the rule ([`unavoidable`]), counted like overload, every 5 s.
    pub unavoidable_node_seconds: f64,
    /// Node-seconds with a hog on (counted like overload, every 5 s).
    pub hogged_node_seconds: f64,
    /// Σ time / work at full speed, over the attempts that ran their whole work.
    pub slowdown_sum: f64,
    pub slowdown_tasks: u64,
    /// Attempts that began running on a node; of them IO-bound, and on a node with a hog on.
    pub tasks_begun: u64,
    pub io_tasks_begun: u64,
    pub began_on_hogged: u64,
    /// Distinct maps and reduces that finished.
    pub tasks_done: u64,
    pub relaunched_tasks: u64,
    pub killed_tasks: u64,
    /// Seconds attempts spent running on nodes (all of them, however they ended).
    pub busy_seconds: f64,
    /// Jobs typed from their probes: `[map, reduce]` × `[cpu, io]`.
    pub typed: [[u64; 2]; 2],
    /// From the first arrival to the last answer.
    pub span: Seconds,
    /// The cluster's task containers.
    pub containers: u32,
    /// The classifier's placements labelled `[good, bad]` by the rule (0 without it).
    pub labelled: [u64; 2],
}

impl LoadStats {
    pub fn mean_task_slowdown(&self) -> Option<f64> {
        (self.slowdown_tasks > 0).then(|| self.slowdown_sum / self.slowdown_tasks as f64)
    }

    pub fn throughput(&self) -> f64 {
        match self.span > 0.0 {
            true => self.tasks_done as f64 / self.span,
            false => 0.0,
        }
    }

    /// The share of container time spent running tasks.
    pub fn busy_fraction(&self) -> f64 {
        let capacity = self.span * f64::from(self.containers);
        match capacity > 0.0 {
            true => self.busy_seconds / capacity,
            false => 0.0,
        }
    }
}

/// How many nodes must be over their cores, at the least, to hold the tasks running on `nodes`
/// now with their hogs as they are: a node of `c` cores whose hogs keep `h` processes runnable
/// takes `c − h` tasks without going over and at most its containers (`c`, one per core) in
/// all, so the tasks beyond Σ(c − h) need nodes over their cores, the most hogged first. An
/// oracle's bound, not a policy: it moves running tasks freely, knows every hog now, and reads
/// processes runnable where the rule reads their 1-minute average. Summed over a day without
/// any variant, it says how much of that day's overload was placement's to avoid at all.
pub(crate) fn unavoidable<T: PartialEq + Copy>(nodes: &[Node<T>]) -> u32 {
    let mut tasks = 0u64;
    let mut room = 0u64;
    let mut extra: Vec<u64> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let cores = u64::from(n.config().cores);
        let running = n.tasks().count() as u64;
        let hogs = (n.runnable() - running).min(cores);
        tasks += running;
        room += cores - hogs;
        extra.push(hogs);
    }
    let mut over = tasks.saturating_sub(room);
    extra.sort_unstable_by(|a, b| b.cmp(a));
    let mut count = 0;
    for e in extra {
        if over == 0 || e == 0 {
            break;
        }
        over = over.saturating_sub(e);
        count += 1;
    }
    count
}

/// A task running on a node, as the day's load side knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Running {
    pub node: u32,
    pub map: bool,
    pub input: u64,
    pub output: u64,
    pub work: Seconds,
    /// The speed it was last rated at.
    pub speed: f64,
    /// When it began, seconds into the day.
    pub began: Seconds,
}

/// The shared day's node load model: every node's state, the tasks on them, and what was
/// counted.
pub(crate) struct LoadSide {
    pub setup: LoadSetup,
    pub nodes: Vec<Node<(usize, AttemptId)>>,
    pub running: BTreeMap<(usize, AttemptId), Running>,
    /// Per job, its map and reduce types as told to the rm.
    pub typed: Vec<[Option<Bound>; 2]>,
    pub stats: LoadStats,
}

/// How a day places tasks: the reference without any of it, the paper's classifier, yard's
/// classifier, or spreading with no classifier (the baseline that tells learning from
/// spreading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// No classifier; the rm's default placement, the first node with room (packing).
    Off,
    /// Seed 002's classifier as the digest reads it (`yard_cluster::classifier::Variant::Paper`).
    Paper,
    /// yard's classifier (`yard_cluster::classifier::Variant::Yard`).
    Yard,
    /// No classifier; each task on the node with the fewest containers per core
    /// (`yard_cluster::scheduler::Placement::Spread`): no load read, nothing learned.
    Spread,
}

impl Variant {
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Off => "off",
            Variant::Paper => "paper",
            Variant::Yard => "yard",
            Variant::Spread => "spread",
        }
    }

    /// Whether the rm runs a classifier.
    pub fn classifier(&self) -> bool {
        matches!(self, Variant::Paper | Variant::Yard)
    }

    /// `paper`, `yard` or `spread` (`off`, the reference, always runs).
    pub fn parse(s: &str) -> Result<Variant, String> {
        match s {
            "paper" => Ok(Variant::Paper),
            "yard" => Ok(Variant::Yard),
            "spread" => Ok(Variant::Spread),
            _ => Err(format!(
                "unknown variant {s:?}: use paper (seed 002's classifier), yard (yard's \
                 classifier) or spread (no classifier, each task on the emptiest node); the \
                 run without any, off, always runs"
            )),
        }
    }

    /// The day's load setup for this variant (`config`: the classifier's settings).
    fn classifier_config(&self, config: ClassifierConfig) -> Option<ClassifierConfig> {
        let variant = match self {
            Variant::Paper => ClassifierVariant::Paper,
            Variant::Yard => ClassifierVariant::Yard,
            Variant::Off | Variant::Spread => return None,
        };
        Some(ClassifierConfig { variant, ..config })
    }
}

/// What to run: the same jobs under each cluster policy and task policy, without any variant
/// and with each of `variants`.
#[derive(Debug, Clone)]
pub struct OverloadSetup {
    /// The cluster (nodes, containers per node), how masters use containers, the seed.
    pub experiment: Experiment,
    pub load: LoadConfig,
    /// The classifier's settings (its `variant` is each day's); its rule counts overload in
    /// every run.
    pub classifier: ClassifierConfig,
    pub rm_policies: Vec<RmPolicy>,
    pub policies: Vec<PolicyKind>,
    /// Run beside the reference (`Variant::Off`, always run first); `[Paper]` by default.
    pub variants: Vec<Variant>,
}

/// One day: a cluster policy and a task policy, with or without the classifier. The issue's
/// `--json` fields first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverloadRow {
    pub rm_policy: String,
    pub policy: String,
    /// Whether the rm ran a classifier (the paper's or yard's).
    pub classifier: bool,
    /// How tasks were placed: `off`, `paper`, `yard` or `spread` ([`Variant`]).
    pub variant: Variant,
    pub jobs: usize,
    pub overloaded_node_seconds: f64,
    /// Of them, on nodes running a task placed under a hog still on (see [`LoadStats`]).
    pub overloaded_placed_on_hog: f64,
    /// That part's share: in the run without any variant, the ceiling of what a filter on
    /// the nodes' state at placement could spare (not of spreading, which changes which nodes
    /// are full when a hog comes on later). `None` when nothing was overloaded.
    pub placement_avoidable_share: Option<f64>,
    /// Overloaded-node-seconds no placement of the tasks running at each moment could have
    /// avoided ([`unavoidable`]); in the run without any variant, 1 − this over its overload
    /// is the most any placement rule could cut (an oracle's ceiling).
    pub unavoidable_node_seconds: f64,
    /// `None` when no task ran its whole work.
    pub mean_task_slowdown: Option<f64>,
    pub relaunched_tasks: u64,
    pub missed_fraction: f64,
    /// Answered by D from no input (not a met deadline), and met, beside `missed`.
    pub empty_fraction: f64,
    pub met_fraction: f64,
    pub throughput_tasks_per_s: f64,
    /// Attempts the masters killed.
    pub killed_tasks: u64,
    /// Distinct maps and reduces that finished, and the span they finished in.
    pub tasks_done: u64,
    pub span_s: f64,
    /// From arrival to answer, over the jobs that answered.
    pub mean_completion_s: Option<f64>,
    /// Jobs still running when the day gave up.
    pub unanswered: usize,
    /// The share of container time spent running tasks.
    pub busy_fraction: f64,
    /// Node-seconds with a hog on (the same in both runs until the shorter day ends).
    pub hogged_node_seconds: f64,
    /// Of the attempts that began running, those on a node with a hog on, and those IO-bound.
    pub began_on_hogged_fraction: f64,
    pub io_bound_fraction: f64,
    /// Jobs whose first finished map / reduce typed them IO-bound, of those typed.
    pub io_typed_maps: u64,
    pub cpu_typed_maps: u64,
    pub io_typed_reduces: u64,
    pub cpu_typed_reduces: u64,
    /// The classifier's placements labelled good and bad by the rule (0 without it).
    pub labelled_good: u64,
    pub labelled_bad: u64,
    /// Overloaded-node-seconds in each minute from the day's start (for the plot).
    #[serde(skip)]
    pub overloaded_per_minute: Vec<f64>,
}

/// One cluster policy and task policy's goals on one seed: the classifier's run against the
/// run without it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Goals {
    pub rm_policy: String,
    pub policy: String,
    /// The variant judged against the run without any.
    pub variant: Variant,
    /// The run without any: the share of its overload on nodes running a task placed under a
    /// hog still on (see [`OverloadRow::placement_avoidable_share`]).
    pub placement_avoidable_share: Option<f64>,
    /// The oracle's ceiling on the cut: 1 − the run without any variant's unavoidable
    /// overloaded-node-seconds over its overloaded-node-seconds ([`unavoidable`]).
    pub oracle_ceiling: Option<f64>,
    /// 1 − overloaded-node-seconds with / without (goal ≥ 0.5); `None` when the run without
    /// the classifier overloaded nothing.
    pub overload_cut: Option<f64>,
    pub overload_cut_holds: Option<bool>,
    /// 1 − throughput with / without (goal ≤ 0.05).
    pub throughput_loss: f64,
    pub throughput_holds: bool,
    /// Missed fraction with less without (goal ≤ 0).
    pub missed_change: f64,
    /// The same for deadlines not met from some input (missed, or answered from none: a
    /// guarded Dart never misses, it answers empty instead).
    pub not_met_change: f64,
    /// Neither more missed nor fewer met.
    pub deadlines_hold: bool,
}

/// The goals.
pub(crate) const GOAL_OVERLOAD_CUT: f64 = 0.5;
pub(crate) const GOAL_THROUGHPUT_LOSS: f64 = 0.05;

/// One seed's experiment.
#[derive(Debug, Clone, Serialize)]
pub struct OverloadReport {
    pub seed: u64,
    pub rows: Vec<OverloadRow>,
    pub goals: Vec<Goals>,
    pub jobs: usize,
    pub nodes: u32,
    pub containers_per_node: u32,
    pub one_task_per_container: bool,
    pub deadline_factor: DeadlineFactor,
    pub time_scale: f64,
    pub load: LoadConfig,
    /// The overload rule in words, and the classifier's settings.
    pub rule: String,
    pub classifier: ClassifierConfig,
    pub model: crate::config::Model,
}

/// The experiment's seeds as the command prints them: `--json`, one seed's report alone or
/// the seeds' in a list; the text, [`markdown`] of them all on `workload`.
#[derive(Debug, Clone)]
pub struct OverloadReports {
    pub reports: Vec<OverloadReport>,
    /// The workload in words, for the text's header.
    pub workload: String,
}

impl Serialize for OverloadReports {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        // Through a `serde_json::Value`, as `--json` has always printed it (its keys sorted).
        match self.reports.as_slice() {
            [one] => serde_json::to_value(one),
            all => serde_json::to_value(all),
        }
        .map_err(S::Error::custom)?
        .serialize(s)
    }
}

impl Printable for OverloadReports {
    fn text(&self) -> String {
        markdown(&self.reports, &self.workload)
    }
}

/// Each job's reduces' output over their input: the trace job's output over its shuffle bytes
/// where it records both (matched by id), else 1.
pub fn reduce_output_ratios(jobs: &[SimJob], trace: Option<&Workload>) -> Vec<f64> {
    let recorded: BTreeMap<&str, f64> = trace
        .map(|w| {
            w.jobs
                .iter()
                .filter_map(|j| match (j.shuffle_bytes, j.output_bytes) {
                    (Some(s), Some(o)) if s > 0 => Some((j.id.as_str(), o as f64 / s as f64)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    jobs.iter()
        .map(|j| recorded.get(j.id.as_str()).copied().unwrap_or(1.0))
        .collect()
}

/// Runs every (cluster policy, task policy) day on `jobs` without and with the classifier,
/// the days spread over the machine's cores.
pub fn run(
    setup: &OverloadSetup,
    jobs: &[SharedJob],
    ratios: &[f64],
    factor: DeadlineFactor,
    time_scale: f64,
) -> OverloadReport {
    let exp = &setup.experiment;
    let mut variants = vec![Variant::Off];
    for &v in &setup.variants {
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    let pairs: Vec<(RmPolicy, PolicyKind)> = setup
        .rm_policies
        .iter()
        .flat_map(|&rm| setup.policies.iter().map(move |&p| (rm, p)))
        .collect();
    let day = |(rm, policy): (RmPolicy, PolicyKind), variant: Variant| {
        let load = LoadSetup {
            load: setup.load,
            rule: setup.classifier.rule,
            classifier: variant.classifier_config(setup.classifier),
            placement: match variant {
                Variant::Spread => Placement::Spread,
                _ => Placement::Pack,
            },
            reduce_output_ratio: ratios.to_vec(),
            scripted_hogs: None,
        };
        let (results, _, stats) = simulate_loaded_day(jobs, rm, policy, exp, &load);
        row(rm, policy, variant, &results, &stats)
    };
    let rows: Vec<OverloadRow> = each_day(&pairs, &variants, day, &quietly)
        .into_iter()
        .map(|(_, row)| row)
        .collect();
    let mut goals = Vec::new();
    for day in rows.chunks(variants.len()) {
        if let [off, others @ ..] = day {
            goals.extend(others.iter().map(|on| judge(off, on)));
        }
    }
    OverloadReport {
        seed: exp.seed,
        rows,
        goals,
        jobs: jobs.len(),
        nodes: exp.cluster.nodes,
        containers_per_node: exp.cluster.containers_per_node,
        one_task_per_container: exp.policy.one_task_per_container,
        deadline_factor: factor,
        time_scale,
        load: setup.load,
        rule: setup.classifier.rule.describe(),
        classifier: setup.classifier,
        model: exp.model,
    }
}

fn row(
    rm: RmPolicy,
    policy: PolicyKind,
    variant: Variant,
    results: &[SharedResult],
    s: &LoadStats,
) -> OverloadRow {
    let o = Outcomes::of(results.iter().map(|r| &r.result));
    let of_begun = |x: u64| match s.tasks_begun {
        0 => 0.0,
        b => x as f64 / b as f64,
    };
    OverloadRow {
        rm_policy: rm.name().to_owned(),
        policy: policy.name().to_owned(),
        classifier: variant.classifier(),
        variant,
        jobs: o.jobs,
        overloaded_node_seconds: s.overloaded_node_seconds,
        overloaded_placed_on_hog: s.overloaded_placed_on_hog,
        placement_avoidable_share: (s.overloaded_node_seconds > 0.0)
            .then(|| s.overloaded_placed_on_hog / s.overloaded_node_seconds),
        unavoidable_node_seconds: s.unavoidable_node_seconds,
        mean_task_slowdown: s.mean_task_slowdown(),
        relaunched_tasks: s.relaunched_tasks,
        missed_fraction: o.missed_fraction,
        empty_fraction: o.empty_fraction,
        met_fraction: o.met_fraction,
        throughput_tasks_per_s: s.throughput(),
        killed_tasks: s.killed_tasks,
        tasks_done: s.tasks_done,
        span_s: s.span,
        mean_completion_s: o.mean_completion_s,
        unanswered: o.unanswered,
        busy_fraction: s.busy_fraction(),
        hogged_node_seconds: s.hogged_node_seconds,
        began_on_hogged_fraction: of_begun(s.began_on_hogged),
        io_bound_fraction: of_begun(s.io_tasks_begun),
        cpu_typed_maps: s.typed[0][0],
        io_typed_maps: s.typed[0][1],
        cpu_typed_reduces: s.typed[1][0],
        io_typed_reduces: s.typed[1][1],
        labelled_good: s.labelled[0],
        labelled_bad: s.labelled[1],
        overloaded_per_minute: s.overloaded_per_minute.clone(),
    }
}

/// The goals of a variant's run (`on`) against the run without any (`off`).
pub fn judge(off: &OverloadRow, on: &OverloadRow) -> Goals {
    let overload_cut = (off.overloaded_node_seconds > 0.0)
        .then(|| 1.0 - on.overloaded_node_seconds / off.overloaded_node_seconds);
    let throughput_loss = match off.throughput_tasks_per_s > 0.0 {
        true => 1.0 - on.throughput_tasks_per_s / off.throughput_tasks_per_s,
        false => 0.0,
    };
    let missed_change = on.missed_fraction - off.missed_fraction;
    let not_met_change = (1.0 - on.met_fraction) - (1.0 - off.met_fraction);
    Goals {
        rm_policy: off.rm_policy.clone(),
        policy: off.policy.clone(),
        variant: on.variant,
        placement_avoidable_share: off.placement_avoidable_share,
        oracle_ceiling: (off.overloaded_node_seconds > 0.0)
            .then(|| (1.0 - off.unavoidable_node_seconds / off.overloaded_node_seconds).max(0.0)),
        overload_cut,
        overload_cut_holds: overload_cut.map(|c| c >= GOAL_OVERLOAD_CUT),
        throughput_loss,
        throughput_holds: throughput_loss <= GOAL_THROUGHPUT_LOSS,
        missed_change,
        not_met_change,
        deadlines_hold: missed_change <= 1e-12 && not_met_change <= 1e-12,
    }
}

/// The reports (one per seed) as markdown: what ran, every seed's rows, and the goals per
/// seed and over the seeds.
pub fn markdown(reports: &[OverloadReport], workload: &str) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let Some(first) = reports.first() else {
        return t;
    };
    let seeds: Vec<String> = reports.iter().map(|r| r.seed.to_string()).collect();
    let _ = writeln!(
        t,
        "{workload}, seeds {}: {} jobs on one cluster of {} × {} containers ({}), deadlines U[{}, {}]·T_J, arrivals × {}; {}.\n\nLoad model: {}. Overload rule: {}. Each day on the same jobs and hogs without any variant (off: the first node with room) and with each of {}: paper = seed 002's classifier, yard = yard's classifier (the load projected with the task, at-max apart from above-max, labels over the next minute), spread = no classifier, each task on the emptiest node (classifiers: utility {}, {} labels before they refuse, labels from {} ms after a placement, a probe after {} ms of refusals).\n",
        seeds.join(", "),
        first.jobs,
        first.nodes,
        first.containers_per_node,
        match first.one_task_per_container {
            true => "a container per task",
            false => "containers reused across a job's tasks",
        },
        first.deadline_factor.lo,
        first.deadline_factor.hi,
        first.time_scale,
        first.model.describe(),
        first.load.describe(),
        first.rule,
        first
            .rows
            .iter()
            .filter(|r| r.variant != Variant::Off)
            .map(|r| r.variant.name())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", "),
        first.classifier.utility.name(),
        first.classifier.min_samples,
        first.classifier.settle_ms,
        first.classifier.explore_after_ms,
    );
    let pct = |h: &str| Column::new(h, Unit::Percent(1));
    let rows: &[Field<(u64, &OverloadRow)>] = &[
        (Column::new("seed", Unit::Count), |(seed, _)| (*seed).into()),
        (Column::text("rm policy"), |(_, x)| {
            x.rm_policy.as_str().into()
        }),
        (Column::text("policy"), |(_, x)| x.policy.as_str().into()),
        (Column::text("variant"), |(_, x)| x.variant.name().into()),
        (
            Column::new("overloaded node-s", Unit::Fixed(0)),
            |(_, x)| x.overloaded_node_seconds.into(),
        ),
        (
            Column::new("of them under a hog placed onto", Unit::Fixed(0)),
            |(_, x)| x.overloaded_placed_on_hog.into(),
        ),
        (
            Column::new("mean task slowdown", Unit::Fixed(3)),
            |(_, x)| x.mean_task_slowdown.into(),
        ),
        (Column::new("relaunched tasks", Unit::Count), |(_, x)| {
            x.relaunched_tasks.into()
        }),
        (Column::new("killed", Unit::Count), |(_, x)| {
            x.killed_tasks.into()
        }),
        (pct("missed %"), |(_, x)| x.missed_fraction.into()),
        (pct("empty %"), |(_, x)| x.empty_fraction.into()),
        (pct("met %"), |(_, x)| x.met_fraction.into()),
        (
            Column::new("throughput tasks/s", Unit::Fixed(4)),
            |(_, x)| x.throughput_tasks_per_s.into(),
        ),
        (Column::new("span s", Unit::Fixed(0)), |(_, x)| {
            x.span_s.into()
        }),
        (pct("busy %"), |(_, x)| x.busy_fraction.into()),
        (pct("tasks begun on hogged nodes %"), |(_, x)| {
            x.began_on_hogged_fraction.into()
        }),
        (pct("IO-bound tasks %"), |(_, x)| x.io_bound_fraction.into()),
    ];
    let each = reports
        .iter()
        .flat_map(|r| r.rows.iter().map(move |row| (r.seed, row)));
    let table = Table::of(rows, each);
    t += &table.markdown();
    let _ = writeln!(
        t,
        "\nOverloaded node-s: every 5 s, each node the rule calls overloaded counts 5 s (the hogs alone never overload a node); under a hog placed onto: of them, on a node running a task placed there while a hog still on was on (the rest: hogs that came on under running tasks, or the load average falling after a hog). Slowdown: a finished attempt's time over its work at full speed. Relaunched: attempts of a task launched before (speculative copies, re-runs after kills); killed: attempts the masters killed. Missed: answered after D; empty: by D from no input (not met). Throughput: maps and reduces finished over the span (first arrival to last answer).\n"
    );
    let _ = writeln!(
        t,
        "Goals (issue 17): the classifier cuts overloaded-node-seconds by ≥ {:.0} %, loses ≤ {:.0} % of throughput, and misses no more deadlines — judged here as no more missed and no fewer met from some input (a guarded Dart never misses: it answers from no input instead).\n",
        100.0 * GOAL_OVERLOAD_CUT,
        100.0 * GOAL_THROUGHPUT_LOSS
    );
    let share = Unit::PercentSign(1);
    let mut table = Table::new(vec![
        Column::text("rm policy"),
        Column::text("policy"),
        Column::text("variant"),
        Column::text("seed").right(),
        Column::text(format!(
            "overload cut (goal ≥ {:.0} %)",
            100.0 * GOAL_OVERLOAD_CUT
        ))
        .right(),
        Column::new(
            "placement-avoidable share without (a filter's ceiling)",
            share,
        ),
        Column::new("oracle's ceiling", share),
        Column::text(format!(
            "throughput loss (goal ≤ {:.0} %)",
            100.0 * GOAL_THROUGHPUT_LOSS
        ))
        .right(),
        Column::new("missed, points", Unit::Points(1)),
        Column::new("not met, points", Unit::Points(1)),
        Column::text("deadlines (goal: neither more)"),
    ]);
    let verdict = |ok: bool| if ok { "holds" } else { "fails" };
    let pairs = first.goals.len();
    for g in 0..pairs {
        let per_seed: Vec<&Goals> = reports.iter().filter_map(|r| r.goals.get(g)).collect();
        for (r, goal) in reports.iter().zip(&per_seed) {
            table.row(vec![
                goal.rm_policy.as_str().into(),
                goal.policy.as_str().into(),
                goal.variant.name().into(),
                r.seed.to_string().into(),
                match (goal.overload_cut, goal.overload_cut_holds) {
                    (Some(c), Some(ok)) => format!("{} {}", share.format(c), verdict(ok)),
                    _ => "– (nothing overloaded without it)".to_owned(),
                }
                .into(),
                goal.placement_avoidable_share.into(),
                goal.oracle_ceiling.into(),
                format!(
                    "{} {}",
                    share.format(goal.throughput_loss),
                    verdict(goal.throughput_holds)
                )
                .into(),
                goal.missed_change.into(),
                goal.not_met_change.into(),
                verdict(goal.deadlines_hold).into(),
            ]);
        }
        let n = per_seed.len();
        let mean = |f: &dyn Fn(&Goals) -> Option<f64>| {
            let v: Vec<f64> = per_seed.iter().filter_map(|g| f(g)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let held = |f: &dyn Fn(&Goals) -> bool| per_seed.iter().filter(|g| f(g)).count();
        let share_or_dash = |x: Option<f64>| Cell::from(x).in_unit(share);
        if let Some(goal) = per_seed.first() {
            table.row(vec![
                goal.rm_policy.as_str().into(),
                goal.policy.as_str().into(),
                goal.variant.name().into(),
                format!("mean of {n}").into(),
                format!(
                    "{} (holds on {} of {n})",
                    share_or_dash(mean(&|g| g.overload_cut)),
                    held(&|g| g.overload_cut_holds == Some(true))
                )
                .into(),
                mean(&|g| g.placement_avoidable_share).into(),
                mean(&|g| g.oracle_ceiling).into(),
                format!(
                    "{} (holds on {} of {n})",
                    share_or_dash(mean(&|g| Some(g.throughput_loss))),
                    held(&|g| g.throughput_holds)
                )
                .into(),
                mean(&|g| Some(g.missed_change)).unwrap_or(0.0).into(),
                mean(&|g| Some(g.not_met_change)).unwrap_or(0.0).into(),
                format!("holds on {} of {n}", held(&|g| g.deadlines_hold)).into(),
            ]);
        }
    }
    t += &table.markdown();
    t
}

/// Writes `overload.svg` into `dir`: overloaded-node-seconds per minute over the day, every
/// run of `report` (one seed) on one chart.
pub fn write_plot(dir: &std::path::Path, report: &OverloadReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let series: Vec<(String, Vec<(f64, f64)>)> = report
        .rows
        .iter()
        .map(|r| {
            let name = match r.variant {
                Variant::Off => format!("{} + {}, classifier off", r.rm_policy, r.policy),
                Variant::Spread => format!("{} + {}, spread, no classifier", r.rm_policy, r.policy),
                v => format!(
                    "{} + {}, classifier on ({})",
                    r.rm_policy,
                    r.policy,
                    v.name()
                ),
            };
            let points = r
                .overloaded_per_minute
                .iter()
                .enumerate()
                .map(|(m, &s)| (m as f64, s))
                .collect();
            (name, points)
        })
        .collect();
    crate::plot::timeline(
        &dir.join("overload.svg"),
        &format!(
            "Overloaded node-seconds per minute (seed {}, {} nodes)",
            report.seed, report.nodes
        ),
        "minute of the day",
        "overloaded node-seconds",
        &series,
    )
}

#[cfg(test)]
mod tests;
