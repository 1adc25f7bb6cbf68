//! The discrete-event engine: one job, one deadline configuration, one policy, on a virtual
//! clock. It turns the job's truth into the events of the task-policy interface and carries out
//! the policy's decisions; it decides nothing a policy decides.
//!
//! Runs are isolated — the job holds its δ·MRA containers on a cluster of its own — because the
//! paper's metrics are per job (δ and μ are per job). Everything random is a pure function of
//! the experiment seed and *what* it is for (job, map, attempt number), never of the order
//! events happen in, so every policy meets the same slow nodes and the same failures.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use yard_appmaster::policy::{
    AttemptId, Container, ContainerId, Decision, Estimate, Event, JobSpec, Locality, Location,
    MapId, MapSpec, NodeId, PolicyConfig, PolicyKind, RackId, ReduceId, Rng, Seconds, TaskPolicy,
};
use yard_workload::SizeBin;

use crate::config::{ClusterConfig, DeadlineConfig, Model, ProgressModel, RATE_SEGMENTS};
use crate::floor::{self, RanReduce};
use crate::job::SimJob;
use crate::oracle;

/// What every run of an experiment shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub cluster: ClusterConfig,
    pub policy: PolicyConfig,
    pub seed: u64,
    /// The deadline guard (yard's, beyond the paper): seconds before the deadline at which
    /// every policy but `full` hears `Event::Guard`, and at the deadline `Event::Deadline`,
    /// as the live master sends them (`run_phase`); `dart` takes it as a floor and asks for
    /// its own moments (`Decision::WakeAt`, answered with `Event::Wake`). 0: no guard (the
    /// paper's algorithms).
    pub guard: Seconds,
    /// How harsh the simulator is. The engine applies `progress`; `durations` and
    /// `profiles` are the workload's (`WorkloadOptions::with_model`), kept here so that the
    /// report says what its jobs were built with.
    pub model: Model,
}

impl Default for Experiment {
    /// The paper's cluster and tuning, seed 1, no guard, the default model.
    fn default() -> Self {
        Experiment {
            cluster: ClusterConfig::default(),
            policy: PolicyConfig::default(),
            seed: 1,
            guard: 0.0,
            model: Model::default(),
        }
    }
}

/// The live master's default guard (`yard_appmaster_live::master::DEFAULT_GUARD_SECONDS`,
/// which this crate does not depend on; `tests/sim_cli.rs` checks they agree): time for the
/// reduces to hear the cut and answer.
pub const DEFAULT_GUARD_SECONDS: Seconds = 1.0;

impl Experiment {
    /// How long before the deadline a run of `kind` is guarded, if it is: the guard is on, the
    /// policy is not `full` (whose contract is the exact answer, however late), and there is a
    /// deadline to hold.
    pub fn guard_for(&self, kind: PolicyKind, deadline: Seconds) -> Option<Seconds> {
        // The live master's rule: at most a quarter of the time the job has.
        (self.guard > 0.0 && kind != PolicyKind::Full && deadline.is_finite())
            .then(|| yard_appmaster::policy::guard_margin(self.guard, deadline))
    }

    /// The reference runs' world (MDT, `T_J`): no guard, no slow nodes, no failures.
    fn ideal(&self) -> Experiment {
        let mut ideal = self.unguarded();
        ideal.cluster.slow_nodes = 0;
        ideal.cluster.failure_rate = 0.0;
        ideal
    }

    /// This experiment without the guard.
    pub fn unguarded(&self) -> Experiment {
        Experiment {
            guard: 0.0,
            ..self.clone()
        }
    }
}

/// A job under one deadline configuration: its containers, deadline and the oracle's k_max,
/// shared by every policy run on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub config: DeadlineConfig,
    pub containers: u32,
    /// Nodes of the job's cluster: the paper's, or whole copies of it to hold the containers.
    pub nodes: u32,
    /// Which nodes are slow (stragglers), the same pattern in every copy of the paper's cluster.
    pub slow: Vec<bool>,
    pub mdt: Seconds,
    pub deadline: Seconds,
    pub k_max: u32,
    /// The share of the job's input the k_max schedule reads (its maps' bytes over all input
    /// bytes; by map count when the job records no bytes, as `Progress::processed_fraction`
    /// counts). 0 when k_max is 0.
    pub k_max_fraction: f64,
    /// The byte oracle's share of the job's input (`oracle::byte_max` over all input bytes;
    /// by map count when the job records no bytes): the most any schedule of whole maps reads
    /// by the deadline when `byte_max_exact`, else a proven upper bound on it.
    pub byte_max_fraction: f64,
    pub byte_max_exact: bool,
}

impl Plan {
    /// The plan for `job` under `config`, given its MDT ([`mdt`]).
    pub fn new(job: &SimJob, config: DeadlineConfig, exp: &Experiment, mdt: Seconds) -> Plan {
        let mut plan = Plan::bare(job, config, exp);
        plan.mdt = mdt;
        plan.deadline = config.mu * mdt;
        let speeds = plan.oracle_speeds(exp);
        let best = oracle::k_max_schedule(&job.truth, &speeds, plan.deadline);
        plan.k_max = best.k;
        let input: u64 = job.truth.maps.iter().map(|m| m.input_bytes).sum();
        plan.k_max_fraction = match input {
            0 => f64::from(best.k) / f64::from(job.maps().max(1)),
            all => best.input_bytes(&job.truth) as f64 / all as f64,
        };
        // With no bytes recorded the processed fraction counts maps: so does the oracle.
        let counted;
        let truth = match input {
            0 => {
                let mut t = job.truth.clone();
                t.maps.iter_mut().for_each(|m| m.input_bytes = 1);
                counted = t;
                &counted
            }
            _ => &job.truth,
        };
        let bytes = oracle::byte_max(truth, &speeds, plan.deadline, &best);
        let all: u64 = truth.maps.iter().map(|m| m.input_bytes).sum();
        plan.byte_max_fraction = bytes.bytes as f64 / all.max(1) as f64;
        plan.byte_max_exact = bytes.exact;
        plan
    }

    /// Containers and cluster only: no deadline (infinite), no k_max.
    fn bare(job: &SimJob, config: DeadlineConfig, exp: &Experiment) -> Plan {
        let c = &exp.cluster;
        let containers = config.containers(job.mra());
        let base = c.nodes.max(1);
        let scale = containers
            .div_ceil(base * c.containers_per_node.max(1))
            .max(1);
        let nodes = base * scale;
        let pattern = slow_nodes(c, exp.seed);
        Plan {
            config,
            containers,
            nodes,
            slow: (0..nodes).map(|n| pattern[(n % base) as usize]).collect(),
            mdt: f64::INFINITY,
            deadline: f64::INFINITY,
            k_max: 0,
            k_max_fraction: 0.0,
            byte_max_fraction: 0.0,
            byte_max_exact: true,
        }
    }

    /// The experiment's whole cluster, as it is (no copies), for one job: no deadline, no
    /// k_max. The shared cluster's jobs run on it (`crate::shared`), and ARIA's `T_J` is a job's
    /// completion on it alone ([`alone`]).
    pub fn whole_cluster(exp: &Experiment) -> Plan {
        let c = &exp.cluster;
        let nodes = c.nodes.max(1);
        Plan {
            config: DeadlineConfig::SHARED,
            containers: nodes * c.containers_per_node.max(1),
            nodes,
            slow: slow_nodes(c, exp.seed),
            mdt: f64::INFINITY,
            deadline: f64::INFINITY,
            k_max: 0,
            k_max_fraction: 0.0,
            byte_max_fraction: 0.0,
            byte_max_exact: true,
        }
    }

    /// The oracle places tasks as it likes: on normal nodes while they have room, then on slow.
    fn oracle_speeds(&self, exp: &Experiment) -> Vec<f64> {
        let per_node = exp.cluster.containers_per_node.max(1);
        let normal = self.slow.iter().filter(|s| !**s).count() as u32 * per_node;
        (0..self.containers)
            .map(|i| {
                if i < normal {
                    1.0
                } else {
                    exp.cluster.slowdown
                }
            })
            .collect()
    }

    fn location(&self, node: u32, cluster: &ClusterConfig) -> Location {
        Location {
            node: NodeId(node),
            rack: RackId(node / cluster.nodes_per_rack.max(1)),
        }
    }
}

/// MDT (EVALUATION.md): the job's completion under MRA processing all its input — simulated,
/// as `full` on MRA containers with no slow nodes and no failures, so it counts the same
/// locality and shuffle the runs will meet.
pub fn mdt(job: &SimJob, exp: &Experiment, job_index: u64) -> Seconds {
    let ideal = exp.ideal();
    let mra = DeadlineConfig {
        name: "MRA",
        delta: 1.0,
        mu: f64::INFINITY,
    };
    let plan = Plan::bare(job, mra, &ideal);
    simulate(job, &plan, PolicyKind::Full, &ideal, job_index).completion
}

/// ARIA's `T_J` (seed 000 §IV-A): the job's completion given all the cluster's resources,
/// alone on it — simulated as `full` on the whole cluster, with no slow nodes and no failures,
/// like [`mdt`].
pub fn alone(job: &SimJob, exp: &Experiment, job_index: u64) -> Seconds {
    let ideal = exp.ideal();
    let plan = Plan::whole_cluster(&ideal);
    simulate(job, &plan, PolicyKind::Full, &ideal, job_index).completion
}

/// Which of the paper's cluster nodes are slow: a seeded choice, the same for every job.
fn slow_nodes(c: &ClusterConfig, seed: u64) -> Vec<bool> {
    let n = c.nodes.max(1) as usize;
    let mut order: Vec<(u64, usize)> = (0..n)
        .map(|i| (mix(seed, 0x5105, i as u64, 0), i))
        .collect();
    order.sort_unstable();
    let mut slow = vec![false; n];
    for &(_, i) in order.iter().take(c.slow_nodes as usize) {
        slow[i] = true;
    }
    slow
}

/// splitmix64 over the experiment seed and what a draw is for: order-independent randomness.
pub(crate) fn mix(seed: u64, what: u64, a: u64, b: u64) -> u64 {
    let mut z =
        seed ^ what.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ a.rotate_left(21) ^ b.rotate_left(42);
    for _ in 0..2 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
    }
    z
}

pub(crate) fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// How a job's answer ended: exactly one of three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Answered by `D` from the output of k ≥ 1 maps, with some input in it.
    Met,
    /// Answered by `D` from no input: k = 0, or every byte cut (processed fraction 0). Not a
    /// met deadline: the user got nothing.
    Empty,
    /// Answered after `D` (or never).
    Missed,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Met, Outcome::Empty, Outcome::Missed];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Met => "met",
            Outcome::Empty => "empty",
            Outcome::Missed => "missed",
        }
    }
}

/// The moments the report measures an estimate at (Dart Table 3's periods, as instants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Moment {
    /// Once the job's first containers were granted and the policy acted on them (t = 0).
    Start,
    /// When the policy closed the map phase (the estimate `CloseMapPhase` carries).
    MapClose,
    /// When the first reduce finished (just before the policy hears of it). Map and shuffle
    /// are over by then: only the reduce phase and the total are measured.
    FirstReduce,
}

impl Moment {
    pub const ALL: [Moment; 3] = [Moment::Start, Moment::MapClose, Moment::FirstReduce];

    pub fn name(self) -> &'static str {
        match self {
            Moment::Start => "start",
            Moment::MapClose => "map_close",
            Moment::FirstReduce => "first_reduce",
        }
    }

    /// Whether `phase` is still ahead (or under way) at this moment, so that an estimate of
    /// it means something.
    pub fn measures(self, phase: Phase) -> bool {
        self != Moment::FirstReduce || matches!(phase, Phase::Reduce | Phase::Total)
    }
}

/// A part of an `Estimate`, and the same part of the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// When the map phase ends, from the job's start (`T_M`).
    Map,
    /// The shuffle left after the map phase ends (`T_NS`).
    Shuffle,
    /// The reduce phase (`T_R`): from the end of the shuffle to the answer.
    Reduce,
    /// The job's completion (`T_J`).
    Total,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Map, Phase::Shuffle, Phase::Reduce, Phase::Total];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Map => "map",
            Phase::Shuffle => "shuffle",
            Phase::Reduce => "reduce",
            Phase::Total => "total",
        }
    }

    pub fn of(self, e: &Estimate) -> Seconds {
        match self {
            Phase::Map => e.map,
            Phase::Shuffle => e.shuffle,
            Phase::Reduce => e.reduce,
            Phase::Total => e.total,
        }
    }
}

/// The shortest true phase whose relative estimation error is measured: 1 ms, the resolution
/// of Hadoop's job history, where the paper's phase times come from. A shorter phase is 0 there;
/// in the simulator it is typically the last map output's transfer after the maps (or the
/// engine's rounding of event times up to the microsecond), and an error relative to 1 µs
/// (|640 s − 1 µs| / 1 µs = 6.4·10⁸) says nothing about the estimator.
pub const MEASURABLE: Seconds = 1e-3;

/// One run's outcome: what EVALUATION.md's tables are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub job: String,
    pub config: &'static str,
    pub policy: PolicyKind,
    pub bin: SizeBin,
    pub maps: u32,
    pub k: u32,
    pub k_max: u32,
    /// The share of the input the k_max schedule reads (`Plan::k_max_fraction`).
    pub k_max_fraction: f64,
    /// The byte oracle's share of the input and whether it is exact (`Plan::byte_max_fraction`).
    pub byte_max_fraction: f64,
    pub byte_max_exact: bool,
    pub deadline: Seconds,
    /// From the job's start to its `Finish`; infinite if the policy never finished.
    pub completion: Seconds,
    /// The policy's estimate at each [`Moment`] (indexed as `Moment::ALL`), from the job's
    /// start; `None` where the moment never came or the policy made none.
    pub estimates: [Option<Estimate>; 3],
    /// The policy's last `Reforecast` after the map close (`dart`'s `reforecast_after_kill`),
    /// before its answer; `None` where it sent none.
    pub reforecast: Option<Estimate>,
    /// The true phases, as the engine saw them, in an `Estimate`'s terms: `map` when the
    /// map phase ended (closed, and no map attempt running), `shuffle` from then until the
    /// last counted output crossed the link, `reduce` from then to the answer, `total` the
    /// completion. `None` if the policy never finished.
    pub phases: Option<Estimate>,
    /// Input bytes whose records reached the answer over all input bytes, after every cut
    /// (maps not run, reduce input sampled): `Progress::processed_fraction`.
    pub processed_fraction: f64,
    /// Events the engine handed to the policy.
    pub events: u64,
    /// Seconds before the deadline the run was guarded at; 0 when it was not (no guard, or
    /// `full`).
    pub guard: Seconds,
    /// The guard fired (`Progress::guarded`): the job had not finished `guard` seconds before
    /// its deadline.
    pub guard_fired: bool,
    /// The run launched a map on its best case (`dart`'s `lone_map`, guarded runs only): it
    /// left its unguarded twin's path before any guard fired.
    pub lone_map: bool,
    /// For a guarded run, the same job, configuration and policy without the guard: what the
    /// guard's cost and benefit are measured against. Set by `experiment::run_job`.
    pub unguarded: Option<Unguarded>,
    /// The floor estimate of the completion (`crate::floor`): the median completion over
    /// redraws of the reduces' noise, all else as it ran. `None` if the job never finished or
    /// ran on a shared cluster.
    pub floor: Option<Seconds>,
}

/// What the unguarded twin of a guarded run ended with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unguarded {
    pub processed_fraction: f64,
    pub outcome: Outcome,
}

/// A row's label for `policy`, with or without the guard: `dart`, `dart+guard`.
pub fn label(policy: PolicyKind, guarded: bool) -> String {
    match guarded {
        true => format!("{}+guard", policy.name()),
        false => policy.name().to_owned(),
    }
}

impl JobResult {
    /// The row label of the run: the policy's name, with `+guard` when it was guarded.
    pub fn label(&self) -> String {
        label(self.policy, self.guard > 0.0)
    }

    /// The unguarded twin of a guarded run whose guard never fired and that never launched a
    /// map on its best case: until then, a guarded run is event for event the unguarded one.
    pub fn as_unguarded(&self) -> JobResult {
        debug_assert!(!self.guard_fired && !self.lone_map);
        JobResult {
            guard: 0.0,
            unguarded: None,
            ..self.clone()
        }
    }

    /// The processed fraction the guard cost this job: its unguarded twin's less this run's
    /// (0 when the guard did not fire; negative where the guard let more in). `None` for a run
    /// without the guard or without a twin.
    pub fn guard_cost(&self) -> Option<f64> {
        let twin = self.unguarded?;
        Some(twin.processed_fraction - self.processed_fraction)
    }

    /// The guard turned a missed deadline into a met one (an answer by D from some input).
    /// `None` for a run without the guard or without a twin.
    pub fn guard_rescued(&self) -> Option<bool> {
        let twin = self.unguarded?;
        Some(twin.outcome == Outcome::Missed && self.outcome() == Outcome::Met)
    }

    /// The job finished after its deadline (its answer came late).
    pub fn missed(&self) -> bool {
        self.completion > self.deadline + 1e-9
    }

    /// The answer was built from no input: no map reached it, or every byte was cut.
    pub fn from_nothing(&self) -> bool {
        self.k == 0 || self.processed_fraction <= 0.0
    }

    /// Met, empty or missed: exactly one.
    pub fn outcome(&self) -> Outcome {
        if self.missed() {
            Outcome::Missed
        } else if self.from_nothing() {
            Outcome::Empty
        } else {
            Outcome::Met
        }
    }

    /// k / k_max; `None` when no map could fit (k_max = 0).
    pub fn deviation(&self) -> Option<f64> {
        (self.k_max > 0).then(|| f64::from(self.k) / f64::from(self.k_max))
    }

    /// Processed input over the input the k_max schedule reads; `None` when k_max = 0.
    pub fn data_vs_oracle(&self) -> Option<f64> {
        (self.k_max > 0 && self.k_max_fraction > 0.0)
            .then(|| self.processed_fraction / self.k_max_fraction)
    }

    /// Processed input over the byte oracle's (`Plan::byte_max_fraction`), capped at 1 (a late
    /// answer may have read more than any schedule could by D); `None` when the oracle reads
    /// nothing. Below the true share where the oracle is only a bound, never above it.
    pub fn bytes_vs_oracle(&self) -> Option<f64> {
        (self.byte_max_fraction > 0.0)
            .then(|| (self.processed_fraction / self.byte_max_fraction).min(1.0))
    }

    /// The policy's estimate at `moment`.
    pub fn estimate(&self, moment: Moment) -> Option<Estimate> {
        let i = Moment::ALL.iter().position(|m| *m == moment)?;
        self.estimates[i]
    }

    /// `|T − T̂| / T` for one phase of the estimate made at `moment`, T the true phase. `None`
    /// when there was no estimate, the job never finished, the phase was over at that moment
    /// ([`Moment::measures`]), or the true phase took less than [`MEASURABLE`] (a map-only
    /// job's shuffle and reduce take none: the relative error of nothing is undefined).
    pub fn phase_error(&self, moment: Moment, phase: Phase) -> Option<f64> {
        if !moment.measures(phase) {
            return None;
        }
        let truth = phase.of(self.phases.as_ref()?);
        let estimate = phase.of(&self.estimate(moment)?);
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// The estimate in force when the job answered: the last `Reforecast` after the map
    /// close, else the close's own. Only where the close carried one, so that a re-sent
    /// estimate scores the same jobs as the close's would.
    pub fn estimate_in_force(&self) -> Option<Estimate> {
        let close = self.estimate(Moment::MapClose)?;
        Some(self.reforecast.unwrap_or(close))
    }

    /// |T − T̂| / T of the estimate in force at the answer (EVALUATION.md's estimation error
    /// at map close, re-sent after the close when `k` changed and the policy says so:
    /// `reforecast_after_kill`; without a `Reforecast`, the close's).
    pub fn estimation_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let estimate = self.estimate_in_force()?.total;
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// [`JobResult::estimation_error`] of the estimate's uncapped total
    /// ([`Estimate::uncapped`]: Dart eq. (1)'s parts summed, before `forecast_cut`'s cap at D):
    /// how far the profile was off, not how early the guard answered.
    pub fn uncapped_estimation_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let estimate = self.estimate_in_force()?.uncapped();
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// [`JobResult::estimation_error`] of an estimate the cap at D left alone (its total is
    /// eq. (1)'s sum of the parts): the jobs whose forecast ended before D, where neither the
    /// cap nor the guard's cut it foresaw decides the error.
    pub fn under_d_estimation_error(&self) -> Option<f64> {
        let e = self.estimate_in_force()?;
        (e.total >= e.uncapped())
            .then(|| self.estimation_error())
            .flatten()
    }

    /// |T − T̂_floor| / T of the floor estimate (`crate::floor`): the error no estimate made
    /// at map close can avoid on this model, as it cannot know the reduces' noise draws.
    /// `None` where the floor is, or where the job's true time is under [`MEASURABLE`].
    pub fn floor_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let floor = self.floor?;
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - floor).abs() / truth)
    }

    /// |T − T̂| / T of the estimate the map close carried, whatever came after it.
    pub fn close_estimation_error(&self) -> Option<f64> {
        self.phase_error(Moment::MapClose, Phase::Total)
    }
}

/// Runs `job` under `plan` with a fresh policy of `kind`. `job_index` keys the run's faults.
pub fn simulate(
    job: &SimJob,
    plan: &Plan,
    kind: PolicyKind,
    exp: &Experiment,
    job_index: u64,
) -> JobResult {
    run(job, plan, kind, exp, job_index, None)
}

/// `simulate`, also returning every decision the policy made, with its time.
pub fn trace(
    job: &SimJob,
    plan: &Plan,
    kind: PolicyKind,
    exp: &Experiment,
    job_index: u64,
) -> (JobResult, Vec<(Seconds, Decision)>) {
    let mut log = Vec::new();
    let result = run(job, plan, kind, exp, job_index, Some(&mut log));
    (result, log)
}

fn run(
    job: &SimJob,
    plan: &Plan,
    kind: PolicyKind,
    exp: &Experiment,
    job_index: u64,
    log: Option<&mut Vec<(Seconds, Decision)>>,
) -> JobResult {
    let mut run = Run::new(job, std::borrow::Cow::Borrowed(plan), exp, job_index, kind);
    run.log = log;
    run.go();
    run.result()
}

impl Run<'_> {
    /// What the run came to (finished or not).
    pub(crate) fn result(&self) -> JobResult {
        let run = self;
        let job = run.job;
        let plan = &*run.plan;
        let kind = run.kind;
        let progress = run.policy.progress();
        let completion = run.finished.unwrap_or(f64::INFINITY);
        let phases = run.finished.map(|total| {
            let map_end = run.map_end.unwrap_or(total).min(total);
            let shuffle_end = run.shuffle_end.unwrap_or(total).clamp(map_end, total);
            Estimate {
                map: map_end,
                shuffle: shuffle_end - map_end,
                reduce: total - shuffle_end,
                total,
            }
        });
        JobResult {
            job: job.id.clone(),
            config: plan.config.name,
            policy: kind,
            bin: SizeBin::of_tasks(job.tasks()),
            maps: job.maps(),
            k: progress.k,
            k_max: plan.k_max,
            k_max_fraction: plan.k_max_fraction,
            byte_max_fraction: plan.byte_max_fraction,
            byte_max_exact: plan.byte_max_exact,
            deadline: plan.deadline,
            completion,
            estimates: [run.at_start, run.estimate, run.at_first_reduce],
            reforecast: run.reforecast,
            phases,
            processed_fraction: progress.processed_fraction(),
            events: run.events,
            guard: run.guard.unwrap_or(0.0),
            guard_fired: progress.guarded,
            lone_map: progress.lone_map,
            unguarded: None,
            floor: run.floor(),
        }
    }

    /// The floor estimate of this run's completion (`crate::floor`), its noise redrawn from an
    /// RNG keyed by the seed and the job; a reduce that started within two heartbeats of
    /// another's end is taken to have waited for its container.
    fn floor(&self) -> Option<Seconds> {
        let completion = self.finished?;
        if self.shared.is_some() {
            return None;
        }
        let t = &self.job.truth;
        Some(floor::estimate(
            completion,
            &self.ran_reduces,
            t.reduce_noise_sigma,
            self.exp.model.durations,
            2.0 * self.exp.cluster.heartbeat,
            mix(self.exp.seed, 0xF1_00_12, self.index, 0),
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Tick,
    MapEnd(AttemptId, bool),
    ReduceEnd(AttemptId, bool),
    Shuffled(u64),
    /// The deadline guard (`Event::Guard`) and the deadline itself (`Event::Deadline`).
    Guard,
    Deadline,
    /// A reduce the guard cut answers, having folded in this many bytes.
    ReduceCut(AttemptId, u64),
    /// The time the policy asked for (`Decision::WakeAt`), as its `f64` bits.
    Wake(u64),
}

/// The event queue, in (time in µs, sequence number) order — the order one heap of every
/// event would pop them in — kept as three queues so the heap holds task ends only: a job's
/// shuffle link is a FIFO, so its `Shuffled` events come in time order and wait in a plain
/// queue, and there is at most one tick pending. An event that would break a queue's order
/// goes to the heap instead, so the order never depends on that reasoning.
#[derive(Default)]
struct Queue {
    seq: u64,
    heap: BinaryHeap<Reverse<(u128, Ev)>>,
    fifo: VecDeque<(u128, Ev)>,
    tick: Option<u128>,
}

impl Queue {
    /// Schedules `ev` at `t` seconds, rounded up to the microsecond: the engine is never
    /// faster than the oracle's sums.
    fn push(&mut self, t: Seconds, ev: Ev) {
        self.seq += 1;
        let key = u128::from(event_us(t)) << 64 | u128::from(self.seq);
        match ev {
            Ev::Tick if self.tick.is_none() => self.tick = Some(key),
            Ev::Shuffled(_) if self.fifo.back().is_none_or(|&(k, _)| k < key) => {
                self.fifo.push_back((key, ev));
            }
            _ => self.heap.push(Reverse((key, ev))),
        }
    }

    /// Schedules `ev` at `t` seconds rounded *down* to the microsecond, after every other event
    /// of that microsecond (`rank` orders such events among themselves): the guard and the
    /// deadline, which must not come after the instant they stand for.
    fn push_last(&mut self, t: Seconds, rank: u64, ev: Ev) {
        let us = (t.max(0.0) * 1e6).floor() as u64;
        let key = u128::from(us) << 64 | u128::from(u64::MAX - 8 + rank.min(8));
        self.heap.push(Reverse((key, ev)));
    }

    /// The time of the next event in µs, if any.
    fn peek(&self) -> Option<u64> {
        let heap = self.heap.peek().map_or(u128::MAX, |Reverse((k, _))| *k);
        let fifo = self.fifo.front().map_or(u128::MAX, |(k, _)| *k);
        let key = heap.min(fifo).min(self.tick.unwrap_or(u128::MAX));
        (key != u128::MAX).then_some((key >> 64) as u64)
    }

    /// The next event and its time in µs.
    fn pop(&mut self) -> Option<(u64, Ev)> {
        let heap = self.heap.peek().map_or(u128::MAX, |Reverse((k, _))| *k);
        let fifo = self.fifo.front().map_or(u128::MAX, |(k, _)| *k);
        let tick = self.tick.unwrap_or(u128::MAX);
        let (key, ev) = if tick < heap && tick < fifo {
            (self.tick.take()?, Ev::Tick)
        } else if fifo < heap {
            self.fifo.pop_front()?
        } else {
            self.heap.pop()?.0
        };
        Some(((key >> 64) as u64, ev))
    }
}

#[derive(Clone, Copy)]
struct Live {
    node: u32,
    /// The engine's id of its container.
    container: u64,
    started: Seconds,
    /// Its work: seconds at full speed (a reduce's is infinite until it has its input).
    duration: Seconds,
    /// The share of full speed it runs at since `rated_at`, having done `work_at` seconds of
    /// work by then (1, `started` and 0 unless a node load model re-rated it: `Run::rerate`).
    speed: f64,
    rated_at: Seconds,
    work_at: Seconds,
    /// The work after which its end event comes (`duration`, or where it fails), whether it
    /// succeeds there, and the µs that event is queued at: an end event at another time is
    /// stale (the attempt was re-rated since).
    target: Seconds,
    ok: bool,
    end_us: u64,
    map: Option<MapId>,
    /// A reduce's input after Alg. 5's sampling (0 until it has its input).
    kept: u64,
    /// A reduce's index (0 for a map).
    reduce: u32,
    /// The guard cut this reduce: it answers at once (`Ev::ReduceCut`) and gets no input.
    cut: bool,
    /// What the attempt is, hashed with the seed: keys its speed curve and report noise.
    key: u64,
}

impl Live {
    /// The share of its work the attempt has done at `now` (an attempt of no duration is
    /// done): the share of its run, or, when its speed varies, of the work its speeds so far
    /// did.
    fn done(&self, now: Seconds, progress: &ProgressModel) -> f64 {
        let t = match self.duration {
            d if d > 0.0 => (self.worked(now) / d).clamp(0.0, 1.0),
            _ => return 1.0,
        };
        match progress.rate_spread {
            0.0 => t,
            spread => varying(self.key, spread, t),
        }
    }

    /// Seconds of work done by `now`: its time since it started, unless it was re-rated.
    fn worked(&self, now: Seconds) -> Seconds {
        match self.speed == 1.0 && self.work_at == 0.0 {
            true => now - self.started,
            false => self.work_at + (now - self.rated_at) * self.speed,
        }
    }

    /// An attempt starting at `now` on `node`, running at full speed.
    fn new(node: u32, container: u64, now: Seconds, duration: Seconds, map: Option<MapId>) -> Live {
        Live {
            node,
            container,
            started: now,
            duration,
            speed: 1.0,
            rated_at: now,
            work_at: 0.0,
            target: duration,
            ok: true,
            end_us: u64::MAX,
            map,
            kept: 0,
            reduce: 0,
            cut: false,
            key: 0,
        }
    }

    /// What the attempt reports at `now`: its share done, with the model's noise.
    fn report(&self, now: Seconds, progress: &ProgressModel) -> f64 {
        let done = self.done(now, progress);
        match progress.report_noise {
            0.0 => done,
            sd => {
                let z = normal(mix(self.key, 0x7E_90_27, (now * 1e6) as u64, 0));
                (done + sd * z).clamp(0.0, 1.0)
            }
        }
    }
}

/// The µs an event due at `t` seconds is queued at: rounded up, so the engine is never faster
/// than the oracle's sums.
fn event_us(t: Seconds) -> u64 {
    (t * 1e6).ceil() as u64
}

/// A standard normal draw from 64 random bits (Box–Muller on their two halves).
fn normal(x: u64) -> f64 {
    let u1 = ((x >> 32) as f64 + 0.5) / 4_294_967_296.0;
    let u2 = ((x & 0xFFFF_FFFF) as f64) / 4_294_967_296.0;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The share of its work done after the share `t` of its run by a task whose speed in each
/// of `RATE_SEGMENTS` equal parts of its run is a mean-one log-normal factor of spread
/// `spread`, drawn from `key`: 0 at 0, 1 at 1, rising at each part's speed.
fn varying(key: u64, spread: f64, t: f64) -> f64 {
    let mut rates = [0.0; RATE_SEGMENTS];
    for (i, r) in rates.iter_mut().enumerate() {
        let z = normal(mix(key, 0x5_9EED, i as u64, 0));
        *r = (spread * z - spread * spread / 2.0).exp();
    }
    let total: f64 = rates.iter().sum();
    let x = t * RATE_SEGMENTS as f64;
    let whole = (x.floor() as usize).min(RATE_SEGMENTS);
    let mut work: f64 = rates[..whole].iter().sum();
    if whole < RATE_SEGMENTS {
        work += rates[whole] * (x - whole as f64);
    }
    (work / total).clamp(0.0, 1.0)
}

/// Live attempts, map and reduce, in a table indexed by attempt id (policies number attempts
/// from 0, so the table stays as small as the run's attempts), and the live map attempts in
/// id order for progress reports: the order a tick reports in without a tree.
#[derive(Default)]
struct Attempts {
    table: Vec<Option<Live>>,
    /// Map attempts as launched; an entry whose attempt has ended is dropped at the next
    /// tick. Launches come in id order, so this stays sorted; `unsorted` says one did not.
    maps: Vec<AttemptId>,
    unsorted: bool,
}

impl Attempts {
    fn insert(&mut self, a: AttemptId, live: Live) {
        let i = a.0 as usize;
        if i >= self.table.len() {
            self.table.resize(i + 1, None);
        }
        self.table[i] = Some(live);
        if live.map.is_some() {
            // `<=`: an id used again would otherwise be listed twice.
            if self.maps.last().is_some_and(|last| a <= *last) {
                self.unsorted = true;
            }
            self.maps.push(a);
        }
    }

    fn get(&self, a: AttemptId) -> Option<&Live> {
        self.table.get(a.0 as usize)?.as_ref()
    }

    fn get_mut(&mut self, a: AttemptId) -> Option<&mut Live> {
        self.table.get_mut(a.0 as usize)?.as_mut()
    }

    fn remove(&mut self, a: AttemptId) -> Option<Live> {
        self.table.get_mut(a.0 as usize)?.take()
    }

    /// Appends every live map attempt's progress report at `now` to `reports`, in id order
    /// (what a `BTreeMap` by id would iterate), dropping ended attempts from the list in the
    /// same pass.
    fn progress(
        &mut self,
        now: Seconds,
        model: &ProgressModel,
        reports: &mut Vec<(AttemptId, f64)>,
    ) {
        if self.unsorted {
            self.maps.sort_unstable();
            self.maps.dedup();
            self.unsorted = false;
        }
        let table = &self.table;
        self.maps.retain(|&a| match table[a.0 as usize] {
            Some(l) if l.map.is_some() => {
                reports.push((a, l.report(now, model)));
                true
            }
            _ => false,
        });
    }
}

/// The lowest unlaunched map at or after any index, in amortised near-O(1): `next[m]` points
/// at or before the first unlaunched map from `m` on (itself while `m` is unlaunched), with
/// paths halved as they are walked. A grant looks at the first few unlaunched maps, and maps
/// launch out of order (node-local first), so scanning a `launched` flag per map would cost
/// up to O(M) per grant.
struct Unlaunched {
    next: Vec<u32>,
}

impl Unlaunched {
    fn new(maps: usize) -> Self {
        Unlaunched {
            next: (0..=maps as u32).collect(),
        }
    }

    fn launch(&mut self, m: usize) {
        if self.next[m] == m as u32 {
            self.next[m] = m as u32 + 1;
        }
    }

    /// The first unlaunched map at or after `m`; the map count when there is none.
    fn from(&mut self, m: usize) -> usize {
        let mut i = m;
        while self.next[i] as usize != i {
            let up = self.next[i] as usize;
            self.next[i] = self.next[up];
            i = up;
        }
        i
    }
}

pub(crate) struct Run<'a> {
    log: Option<&'a mut Vec<(Seconds, Decision)>>,
    job: &'a SimJob,
    /// Borrowed, or the job's own when the shared day starts its master late (a shorter
    /// deadline).
    plan: std::borrow::Cow<'a, Plan>,
    exp: &'a Experiment,
    index: u64,
    kind: PolicyKind,
    policy: Box<dyn TaskPolicy>,
    /// On a shared cluster (`crate::shared`), where containers come from and go back to; `None`
    /// on a cluster of the job's own.
    pub(crate) shared: Option<SharedSide>,
    /// Distinct maps and reduces done: what the master tells the rm (`SchedEvent::Progress`).
    pub(crate) maps_finished: u32,
    pub(crate) reduces_finished: u32,
    /// Attempts launched for a task that had been launched before (a speculative copy, or a
    /// run again after a kill, a failure or a preemption), and attempts the policy killed.
    pub(crate) relaunched: u32,
    pub(crate) killed: u32,
    /// Launches per reduce (`reduce_attempts_of` counts the ones that got their input).
    reduce_launches: Vec<u32>,
    /// Past it the run gives up (`HORIZON_DEADLINES`).
    horizon: Seconds,
    /// On a shared cluster, no tick is queued while the job holds no container.
    tick_paused: bool,
    /// The policy's latest `WakeAt`, as `f64` bits (earlier ones are stale).
    wake: Option<u64>,
    /// Seconds before the deadline the guard fires, if this run is guarded.
    guard: Option<Seconds>,
    rng: Rng,
    now: Seconds,
    queue: Queue,
    /// Free container capacity per node, and the node of every container by id (the engine
    /// numbers them from 0; `NOT_HELD` once released), and how many are held.
    free: Vec<u32>,
    held: Vec<u32>,
    holding: u32,
    next_container: u64,
    /// When the job last released a container on each node: the rm does not hand the job a
    /// node it just gave back within a heartbeat (else release and grant could loop forever).
    released_at: Vec<Seconds>,
    /// Nodes to grant on, in turn (stale entries are skipped), and nodes the job released,
    /// in release order, waiting out their heartbeat before they join `ready` again: a grant
    /// costs O(1) even on a cluster of tens of thousands of nodes.
    ready: VecDeque<u32>,
    cooling: VecDeque<(Seconds, u32)>,
    /// Maps not launched yet: grants go where the lowest ones' replicas are, as the master's
    /// node-local asks would have them.
    unlaunched: Unlaunched,
    want: u32,
    /// Live attempts; a tick reports on the running maps only, in id order.
    live: Attempts,
    /// The tick's progress reports, kept to reuse the buffer.
    reports: Vec<(AttemptId, f64)>,
    /// Attempts so far per map and per reduce: faults are keyed by (task, n-th attempt).
    attempts_of: Vec<u32>,
    reduce_attempts_of: Vec<u32>,
    map_done: Vec<bool>,
    maps_running: u32,
    closed: bool,
    link_free_at: Seconds,
    in_flight: u64,
    /// Output bytes of the maps done (each counted once), and the reduces' inputs from them
    /// (`JobTruth::reduce_inputs`), computed once per total.
    output_done: u64,
    reduce_inputs: (u64, Vec<u64>),
    /// Reduces launched and waiting for their input, in launch order.
    waiting: Vec<(AttemptId, ReduceId)>,
    /// Reduces given their input (some may have ended), in that order, and when they next
    /// report their progress.
    reducing: Vec<AttemptId>,
    next_reduce_report: Seconds,
    /// Input bytes a reduce keeps after Alg. 5's sampling, per reduce, if the policy said.
    kept: Vec<Option<u64>>,
    /// The policy's estimates at the report's moments: after the grants at t = 0, at map
    /// close, and when the first reduce finished.
    at_start: Option<Estimate>,
    estimate: Option<Estimate>,
    /// The last `Reforecast` after the close.
    reforecast: Option<Estimate>,
    at_first_reduce: Option<Estimate>,
    first_reduce_done: bool,
    /// Reduce attempts that ran their whole input to their end, for the floor estimate
    /// (`crate::floor`); kept on a cluster of the job's own only.
    ran_reduces: Vec<RanReduce>,
    /// The true phase ends: when the map phase last became over (closed, no map attempt
    /// running), and when, after that, the link last drained.
    map_end: Option<Seconds>,
    shuffle_end: Option<Seconds>,
    finished: Option<Seconds>,
    events: u64,
    out: Vec<Decision>,
}

/// A run's side of a shared cluster: containers the rm granted and took back, by the rm's ids.
#[derive(Debug, Default)]
pub(crate) struct SharedSide {
    /// Granted by the rm and not yet handed to the policy: (rm's container id, node).
    pub(crate) granted: VecDeque<(u64, u32)>,
    /// The rm's id of every container the policy was handed, by the engine's container id.
    pub(crate) rm_ids: Vec<u64>,
    /// Containers to give back to the rm (released by the policy, not wanted, or preempted),
    /// since the shared driver last took them.
    pub(crate) released: Vec<u64>,
    /// With a node load model (`crate::overload`): tasks that began and ended running on
    /// their nodes since the shared driver last took them; `None` when nobody listens.
    pub(crate) notes: Option<Vec<Note>>,
}

/// A task's life on its node, as the node load model needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Note {
    /// It started running its work: a map at its launch, a reduce when its input came (a
    /// reduce waiting for its shuffle is not working its node). `output` is a map's; `work`
    /// its seconds at full speed where it runs.
    Began {
        attempt: AttemptId,
        node: u32,
        map: bool,
        input: u64,
        output: Option<u64>,
        work: Seconds,
    },
    /// It stopped: `finished` when it ran its whole work and succeeded (not failed, killed,
    /// preempted or cut by the guard); `elapsed` since it began.
    Ended {
        attempt: AttemptId,
        node: u32,
        finished: bool,
        elapsed: Seconds,
    },
}

/// `Run::held` of a container the job no longer holds.
const NOT_HELD: u32 = u32::MAX;

/// Running reduces report their progress this many times per deadline (at most once a tick).
/// Maps report on every tick; a reduce may run for hours, and a report per tick would be most
/// of a day's events.
const REDUCE_REPORTS_PER_DEADLINE: f64 = 20.0;

/// How many of the next unlaunched maps a grant looks at for a node-local place.
const LOCALITY_LOOKAHEAD: usize = 16;

/// Give up on a policy that has not finished after this many deadlines (a policy bug, reported
/// as an infinite completion rather than a hang).
const HORIZON_DEADLINES: f64 = 1000.0;

impl<'a> Run<'a> {
    pub(crate) fn new(
        job: &'a SimJob,
        plan: std::borrow::Cow<'a, Plan>,
        exp: &'a Experiment,
        index: u64,
        kind: PolicyKind,
    ) -> Self {
        use rand::SeedableRng;
        Run {
            log: None,
            job,
            exp,
            index,
            kind,
            policy: kind.build(yard_appmaster::policy::PolicyConfig {
                guarded: exp.guard > 0.0,
                ..exp.policy.clone()
            }),
            shared: None,
            maps_finished: 0,
            reduces_finished: 0,
            relaunched: 0,
            killed: 0,
            reduce_launches: vec![0; job.reduces() as usize],
            horizon: f64::INFINITY,
            tick_paused: false,
            wake: None,
            guard: exp.guard_for(kind, plan.deadline),
            rng: Rng::seed_from_u64(mix(exp.seed, 0x4E6, index, 0)),
            now: 0.0,
            queue: Queue::default(),
            free: vec![exp.cluster.containers_per_node.max(1); plan.nodes as usize],
            held: Vec::new(),
            holding: 0,
            next_container: 0,
            released_at: vec![f64::NEG_INFINITY; plan.nodes as usize],
            ready: (0..plan.nodes).collect(),
            cooling: VecDeque::new(),
            unlaunched: Unlaunched::new(job.truth.maps.len()),
            want: 0,
            live: Attempts::default(),
            reports: Vec::new(),
            attempts_of: vec![0; job.truth.maps.len()],
            reduce_attempts_of: vec![0; job.reduces() as usize],
            map_done: vec![false; job.truth.maps.len()],
            maps_running: 0,
            closed: false,
            link_free_at: 0.0,
            in_flight: 0,
            output_done: 0,
            reduce_inputs: (0, Vec::new()),
            waiting: Vec::new(),
            reducing: Vec::new(),
            next_reduce_report: 0.0,
            kept: vec![None; job.reduces() as usize],
            at_start: None,
            estimate: None,
            reforecast: None,
            at_first_reduce: None,
            first_reduce_done: false,
            ran_reduces: Vec::new(),
            map_end: None,
            shuffle_end: None,
            finished: None,
            events: 0,
            out: Vec::new(),
            // Last: everything above reads it first.
            plan,
        }
    }

    fn spec(&self) -> JobSpec {
        JobSpec {
            deadline: self.plan.deadline,
            maps: self
                .job
                .truth
                .maps
                .iter()
                .enumerate()
                .map(|(m, t)| MapSpec {
                    bytes: t.input_bytes,
                    // On a scaled cluster, map m's replicas sit on copy m mod scale of the
                    // paper's nodes, so data spreads as evenly as containers do.
                    replicas: self
                        .replica_nodes(m)
                        .map(|n| self.plan.location(n, &self.exp.cluster))
                        .collect(),
                })
                .collect(),
            reduces: self.job.reduces(),
            profile: self.job.profile.clone(),
            allotment: Some(self.plan.containers),
            recovered: Vec::new(),
        }
    }

    fn at(&mut self, t: Seconds, ev: Ev) {
        self.queue.push(t, ev);
    }

    fn go(&mut self) {
        self.start();
        while self.step() {}
    }

    /// Starts the job: `JobStarted`, the first grants, the first tick, the guard.
    pub(crate) fn start(&mut self) {
        let spec = self.spec();
        self.call(Event::JobStarted(spec));
        self.settle();
        self.at_start = self.policy.estimate(self.now);
        self.at(self.exp.cluster.heartbeat, Ev::Tick);
        if let Some(guard) = self.guard {
            // As the live master: the guard at D − guard (at once when D is shorter), the
            // deadline at D; each after whatever else happens in its microsecond.
            let deadline = self.plan.deadline;
            self.queue.push_last(deadline - guard, 0, Ev::Guard);
            self.queue.push_last(deadline, 1, Ev::Deadline);
        }
        let scale = if self.plan.deadline.is_finite() {
            self.plan.deadline
        } else {
            self.plan.mdt
        };
        self.horizon = if scale.is_finite() {
            HORIZON_DEADLINES * scale.max(1.0)
        } else {
            f64::INFINITY // the MDT run itself: `full` always finishes
        };
    }

    /// When the run's next event is due, µs from its start; `None` once it has finished or
    /// has nothing left to do.
    pub(crate) fn next_event_us(&self) -> Option<u64> {
        self.finished.is_none().then(|| self.queue.peek()).flatten()
    }

    /// Lets the run wait as long as it must: on a shared cluster a job may queue behind
    /// others for longer than any multiple of its deadline (the day has a limit of its own).
    pub(crate) fn without_horizon(&mut self) {
        self.horizon = f64::INFINITY;
    }

    /// Whether the run has finished (its policy said `Finish`).
    pub(crate) fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    /// Handles the next event; `false` when there is none to handle (finished, nothing left,
    /// or past the horizon).
    pub(crate) fn step(&mut self) -> bool {
        let Some((t, ev)) = self.queue.pop() else {
            return false;
        };
        if self.finished.is_some() {
            return false;
        }
        self.now = t as f64 / 1e6;
        if self.now > self.horizon {
            return false;
        }
        {
            match ev {
                // Re-rated since it was queued (`rerate`): the attempt ends at another time.
                Ev::MapEnd(a, _) | Ev::ReduceEnd(a, _)
                    if self.live.get(a).is_some_and(|l| l.end_us != t) => {}
                Ev::Tick => self.tick(),
                Ev::MapEnd(a, ok) => self.map_end(a, ok),
                Ev::ReduceEnd(a, ok) => {
                    if ok {
                        self.ran_whole(a);
                    }
                    self.reduce_end(a, ok.then_some(0))
                }
                Ev::ReduceCut(a, folded) => self.reduce_end(a, Some(folded)),
                Ev::Guard => self.call(Event::Guard),
                Ev::Wake(at) => {
                    // Only the latest `WakeAt` counts.
                    if self.wake == Some(at) {
                        self.wake = None;
                        self.call(Event::Wake);
                    }
                }
                Ev::Deadline => self.call(Event::Deadline),
                Ev::Shuffled(bytes) => {
                    self.in_flight -= bytes;
                    self.call(Event::ShuffleBytes(bytes));
                }
            }
            self.settle();
        }
        true
    }

    /// Carries on until nothing is left to do at this instant: reduces whose input is complete
    /// get it, and wanted containers are granted (each may lead the policy to want more).
    fn settle(&mut self) {
        loop {
            let before = self.events;
            self.feed_reduces();
            self.grant();
            if self.events == before || self.finished.is_some() {
                break;
            }
        }
        self.phase_ends();
    }

    /// Notes when the map phase and the shuffle become over: the latest time each did, should
    /// a restarted map reopen them.
    fn phase_ends(&mut self) {
        let maps_over = self.closed && self.maps_running == 0;
        match (maps_over, self.map_end.is_some()) {
            (true, false) => self.map_end = Some(self.now),
            (false, true) => self.map_end = None,
            _ => {}
        }
        let drained = maps_over && self.in_flight == 0;
        match (drained, self.shuffle_end.is_some()) {
            (true, false) => self.shuffle_end = Some(self.now),
            (false, true) => self.shuffle_end = None,
            _ => {}
        }
    }

    /// Notes a reduce attempt that ran its whole input to its end now, for the floor
    /// estimate: when it got its input, its seconds and its noise factor. Not on a shared
    /// cluster, where a task's start-up cost rides on the noise and a node load model re-rates
    /// attempts (`crate::shared`).
    fn ran_whole(&mut self, a: AttemptId) {
        if self.shared.is_some() {
            return;
        }
        let Some(l) = self
            .live
            .get(a)
            .filter(|l| !l.cut && l.duration.is_finite())
        else {
            return;
        };
        let noise = self.job.truth.reduce_noise[l.reduce as usize];
        self.ran_reduces.push(RanReduce {
            start: l.started,
            seconds: self.now - l.started,
            noise,
        });
    }

    /// A reduce attempt ends: finished (having folded in `folded` bytes, reported as its
    /// output as the task runner reports a cut reduce's; 0 for a whole one) or failed.
    fn reduce_end(&mut self, a: AttemptId, folded: Option<u64>) {
        if self.end_as(a, folded.is_some()).is_none() {
            return; // killed, or ended already
        }
        if folded.is_some() {
            self.reduces_finished = (self.reduces_finished + 1).min(self.job.reduces());
        }
        if folded.is_some() && !self.first_reduce_done {
            self.first_reduce_done = true;
            self.at_first_reduce = self.policy.estimate(self.now);
        }
        let event = match folded {
            Some(output_bytes) => Event::TaskFinished {
                attempt: a,
                output_bytes,
            },
            None => Event::TaskFailed(a),
        };
        self.call(event);
    }

    fn map_end(&mut self, a: AttemptId, ok: bool) {
        let Some(live) = self.end_as(a, ok) else {
            return;
        };
        self.maps_running -= 1;
        let m = live.map.expect("a map attempt").0 as usize;
        if !ok {
            self.call(Event::TaskFailed(a));
            return;
        }
        let output = self.job.truth.maps[m].output_bytes;
        if !self.map_done[m] {
            self.map_done[m] = true;
            self.maps_finished += 1;
            self.output_done += output;
            if self.job.reduces() > 0 && output > 0 {
                // The output queues for the job's shuffle link (FIFO at its bottleneck bandwidth).
                let start = self.link_free_at.max(self.now);
                self.link_free_at = start + output as f64 / self.job.truth.shuffle_bandwidth;
                self.in_flight += output;
                self.at(self.link_free_at, Ev::Shuffled(output));
            }
        }
        self.call(Event::TaskFinished {
            attempt: a,
            output_bytes: output,
        });
    }

    fn tick(&mut self) {
        if self.shared.is_some() && self.holding == 0 {
            // On a shared cluster, a master holding no container has nothing to report or
            // judge: its heartbeat pauses until the next grant (`granted_at`), so a day with
            // thousands of queued jobs does not spend its events on their idle ticks.
            self.tick_paused = true;
            return;
        }
        // Progress of running maps (what straggler detection reads), taken first: the policy's
        // answers may launch or end attempts. Reduces report less often.
        let mut reports = std::mem::take(&mut self.reports);
        reports.clear();
        self.live
            .progress(self.now, &self.exp.model.progress, &mut reports);
        for &(attempt, progress) in &reports {
            self.call(Event::TaskProgress { attempt, progress });
        }
        self.reports = reports;
        if self.now >= self.next_reduce_report && !self.reducing.is_empty() {
            self.report_reduces();
            let every = self.plan.deadline / REDUCE_REPORTS_PER_DEADLINE;
            self.next_reduce_report = self.now + every.max(self.exp.cluster.heartbeat);
        }
        self.call(Event::Tick);
        if self.finished.is_none() {
            self.at(self.now + self.exp.cluster.heartbeat, Ev::Tick);
        }
    }

    /// Reports the progress of every reduce running its function, in the order their input
    /// came, dropping ended ones from the list.
    fn report_reduces(&mut self) {
        let mut running = std::mem::take(&mut self.reducing);
        running.retain(|&a| self.live.get(a).is_some_and(|l| !l.cut));
        for &attempt in &running {
            let Some(l) = self.live.get(attempt).copied() else {
                continue; // ended by the policy's answer to an earlier report
            };
            // An instant reduce, reported before its end event, is done.
            let progress = l.report(self.now, &self.exp.model.progress);
            self.call(Event::TaskProgress { attempt, progress });
        }
        running.append(&mut self.reducing);
        self.reducing = running;
    }

    /// Hands reduces their input once every counted map is done and the link has drained.
    fn feed_reduces(&mut self) {
        if !self.closed || self.maps_running > 0 || self.in_flight > 0 || self.waiting.is_empty() {
            return;
        }
        for (a, r) in std::mem::take(&mut self.waiting) {
            let Some(cut) = self.live.get(a).map(|l| l.cut) else {
                continue; // killed
            };
            if self.reduce_inputs.1.is_empty() || self.reduce_inputs.0 != self.output_done {
                let inputs = self.job.truth.reduce_inputs(self.output_done);
                self.reduce_inputs = (self.output_done, inputs);
            }
            let bytes = self.reduce_inputs.1[r.0 as usize];
            self.call(Event::ReduceInputReady { reduce: r, bytes });
            let kept = self
                .kept
                .get_mut(r.0 as usize)
                .and_then(Option::take)
                .unwrap_or(bytes);
            let Some(live) = self.live.get(a).copied() else {
                continue;
            };
            if cut {
                // Cut by the guard while its input was on its way: it has its input now, and
                // answers at once having folded none of it in (as a synthetic reduce does live).
                self.queue.push(self.now, Ev::ReduceCut(a, 0));
                continue;
            }
            let speed = self.speed(live.node);
            let duration = self.job.truth.reduce_seconds(r.0, kept as f64) * speed;
            let nth = self.reduce_attempts_of[r.0 as usize];
            self.reduce_attempts_of[r.0 as usize] += 1;
            let task = u64::from(r.0) << 16 | u64::from(nth);
            let (target, ok) = match self.failure(0x0FA1_12ED, task, duration) {
                Some(t) => (t, false),
                None => (duration, true),
            };
            let key = mix(self.exp.seed, 0xC0_12F, self.index, task);
            let end = self.now + target;
            let now = self.now;
            if let Some(l) = self.live.get_mut(a) {
                l.started = now;
                l.rated_at = now;
                l.duration = duration;
                l.target = target;
                l.ok = ok;
                l.end_us = event_us(end);
                l.kept = kept;
                l.reduce = r.0;
                l.key = key;
            }
            self.at(end, Ev::ReduceEnd(a, ok));
            self.reducing.push(a);
            let node = live.node;
            self.note(|| Note::Began {
                attempt: a,
                node,
                map: false,
                input: kept,
                output: None,
                work: duration,
            });
        }
    }

    fn speed(&self, node: u32) -> f64 {
        if self.plan.slow[node as usize] {
            self.exp.cluster.slowdown
        } else {
            1.0
        }
    }

    /// Whether (and when into its run) an attempt fails: a pure function of what it is.
    fn failure(&self, what: u64, n: u64, duration: Seconds) -> Option<Seconds> {
        let rate = self.exp.cluster.failure_rate;
        if rate <= 0.0 {
            return None;
        }
        let x = mix(self.exp.seed, what, self.index, n);
        (unit(x) < rate).then(|| duration * unit(mix(x, 1, 2, 3)))
    }

    /// Grants containers up to what the policy wants (at most its allotment) as soon as there is
    /// room — the rm answers pending asks at once, not on the next heartbeat — on a node holding
    /// an unlaunched map's input where one has room (the master asks node-local first), else on
    /// the next node with room.
    fn grant(&mut self) {
        if self.shared.is_some() {
            return self.take_granted();
        }
        while self.holding < self.want.min(self.plan.containers) {
            let Some(node) = self.local_node().or_else(|| self.any_node()) else {
                return;
            };
            self.free[node as usize] -= 1;
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.held.push(node);
            self.holding += 1;
            let at = self.plan.location(node, &self.exp.cluster);
            self.call(Event::ContainerGranted(Container { id, at }));
        }
    }

    /// On a shared cluster: hands the policy what the rm granted, while it wants more; what
    /// it does not want goes back.
    fn take_granted(&mut self) {
        while self.holding < self.want {
            let Some((rm_id, node)) = self.shared.as_mut().and_then(|s| s.granted.pop_front())
            else {
                return;
            };
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.held.push(node);
            self.holding += 1;
            if let Some(s) = self.shared.as_mut() {
                s.rm_ids.push(rm_id);
            }
            let at = self.plan.location(node, &self.exp.cluster);
            self.call(Event::ContainerGranted(Container { id, at }));
        }
        if let Some(s) = self.shared.as_mut() {
            let extra = s.granted.drain(..).map(|(rm_id, _)| rm_id);
            s.released.extend(extra);
        }
    }

    /// On a shared cluster: the rm took back the container it knows as `rm_id` (MinEDF-WC's
    /// preemption). Its attempt ends with it (`ContainerLost`: the policy runs the task again
    /// where it still wants it), and the container goes back to the rm.
    pub(crate) fn preempt(&mut self, now: Seconds, rm_id: u64) {
        self.now = self.now.max(now);
        let Some(shared) = self.shared.as_mut() else {
            return;
        };
        let Some(c) = shared.rm_ids.iter().rposition(|&id| id == rm_id) else {
            return;
        };
        if self.held[c] == NOT_HELD {
            return; // given back already: the release is on its way
        }
        shared.released.push(rm_id);
        self.held[c] = NOT_HELD;
        self.holding -= 1;
        let on_it = self.live.table.iter().enumerate().find_map(|(a, l)| {
            l.as_ref()
                .filter(|l| l.container == c as u64)
                .map(|_| AttemptId(a as u32))
        });
        if let Some(a) = on_it
            && let Some(l) = self.end(a)
            && l.map.is_some()
        {
            self.maps_running -= 1;
        }
        self.call(Event::ContainerLost(ContainerId(c as u64)));
        self.settle();
    }

    /// On a shared cluster: the rm granted containers (`SharedSide::granted`) at `now`; the
    /// policy takes what it wants.
    pub(crate) fn granted_at(&mut self, now: Seconds) {
        self.now = self.now.max(now);
        if std::mem::take(&mut self.tick_paused) {
            // The heartbeat resumes on its grid, at the next beat.
            let beat = self.exp.cluster.heartbeat;
            self.at(((self.now / beat).floor() + 1.0) * beat, Ev::Tick);
        }
        self.settle();
    }

    /// The first unlaunched maps' replica nodes (up to [`LOCALITY_LOOKAHEAD`] maps), while the
    /// map phase is open: where its asks would like containers.
    pub(crate) fn wanted_nodes(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.closed {
            return;
        }
        let maps = self.job.truth.maps.len();
        let mut m = self.unlaunched.from(0);
        for _ in 0..LOCALITY_LOOKAHEAD {
            if m >= maps {
                break;
            }
            out.extend(self.replica_nodes(m));
            m = self.unlaunched.from(m + 1);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Containers wanted and not held: what the master asks the rm for.
    pub(crate) fn outstanding(&self) -> u32 {
        self.want.saturating_sub(self.holding)
    }

    fn has_room(&self, node: u32) -> bool {
        self.free[node as usize] > 0
            && self.released_at[node as usize] + self.exp.cluster.heartbeat <= self.now
    }

    /// A node with room holding the input of one of the next few unlaunched maps.
    fn local_node(&mut self) -> Option<u32> {
        let maps = self.job.truth.maps.len();
        let mut m = self.unlaunched.from(0);
        for _ in 0..LOCALITY_LOOKAHEAD {
            if m >= maps {
                break;
            }
            if let Some(n) = self.replica_nodes(m).find(|&n| self.has_room(n)) {
                return Some(n);
            }
            m = self.unlaunched.from(m + 1);
        }
        None
    }

    fn any_node(&mut self) -> Option<u32> {
        let heartbeat = self.exp.cluster.heartbeat;
        while let Some(&(released, n)) = self.cooling.front() {
            if released + heartbeat > self.now {
                break;
            }
            self.cooling.pop_front();
            self.ready.push_back(n);
        }
        while let Some(n) = self.ready.pop_front() {
            if self.has_room(n) {
                if self.free[n as usize] > 1 {
                    self.ready.push_back(n); // room for more after this grant: its turn comes again
                }
                return Some(n);
            }
        }
        None
    }

    /// Map `m`'s replica nodes on this job's cluster (see `spec`).
    fn replica_nodes(&self, m: usize) -> impl Iterator<Item = u32> + use<'a> {
        let base = self.exp.cluster.nodes.max(1);
        let scale = self.plan.nodes / base;
        self.job.truth.maps[m]
            .replicas
            .iter()
            .map(move |&n| n % base + base * (m as u32 % scale))
    }

    /// Attempt `a` ends (killed, preempted or lost).
    fn end(&mut self, a: AttemptId) -> Option<Live> {
        self.end_as(a, false)
    }

    /// Attempt `a` ends, having run its whole work and succeeded when `finished`.
    fn end_as(&mut self, a: AttemptId, finished: bool) -> Option<Live> {
        let l = self.live.remove(a)?;
        if l.duration.is_finite() {
            let elapsed = self.now - l.started;
            self.note(|| Note::Ended {
                attempt: a,
                node: l.node,
                finished: finished && !l.cut,
                elapsed,
            });
        }
        Some(l)
    }

    /// Tells a node load model, if one listens, what a task did.
    fn note(&mut self, note: impl FnOnce() -> Note) {
        if let Some(notes) = self.shared.as_mut().and_then(|s| s.notes.as_mut()) {
            notes.push(note());
        }
    }

    /// On a shared cluster with a node load model: attempt `a`'s node now runs it at `speed`
    /// (0–1] of its full speed. Its work done so far stands; what is left runs at the new
    /// speed, so its end moves (the event queued before is then stale, see `step`).
    pub(crate) fn rerate(&mut self, now: Seconds, a: AttemptId, speed: f64) {
        self.now = self.now.max(now);
        let now = self.now;
        let Some(l) = self.live.get_mut(a) else {
            return;
        };
        if l.speed == speed || !l.duration.is_finite() || l.cut || speed <= 0.0 {
            return;
        }
        l.work_at = l.worked(now);
        l.rated_at = now;
        l.speed = speed;
        let end = now + (l.target - l.work_at).max(0.0) / speed;
        l.end_us = event_us(end);
        let ev = match l.map {
            Some(_) => Ev::MapEnd(a, l.ok),
            None => Ev::ReduceEnd(a, l.ok),
        };
        self.at(end, ev);
    }

    fn call(&mut self, event: Event) {
        self.events += 1;
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        self.policy.handle(self.now, event, &mut self.rng, &mut out);
        for d in &out {
            self.apply(d);
        }
        if let Some(log) = self.log.as_mut() {
            log.extend(out.iter().map(|d| (self.now, d.clone())));
        }
        self.out = out;
    }

    fn apply(&mut self, d: &Decision) {
        match *d {
            Decision::Want(n) => self.want = n,
            Decision::WakeAt(at) => {
                // After the rest of its instant (rounded down: never after the moment), before
                // the deadline of that instant.
                self.wake = Some(at.to_bits());
                self.queue
                    .push_last(at.max(self.now), 0, Ev::Wake(at.to_bits()));
            }
            Decision::LaunchMap {
                attempt,
                map,
                container,
                locality,
                ..
            } => {
                let node = self.held[container.0 as usize];
                let m = map.0 as usize;
                self.unlaunched.launch(m);
                let factor = match locality {
                    Locality::NodeLocal => 1.0,
                    Locality::RackLocal => self.exp.cluster.rack_local_factor,
                    Locality::Remote => self.exp.cluster.remote_factor,
                };
                let truth = &self.job.truth.maps[m];
                let (input, output) = (truth.input_bytes, truth.output_bytes);
                let duration = truth.duration * factor * self.speed(node);
                let nth = self.attempts_of[m];
                self.attempts_of[m] += 1;
                if nth > 0 {
                    self.relaunched += 1;
                }
                let task = (m as u64) << 16 | u64::from(nth);
                let key = mix(self.exp.seed, 0xC0_12E, self.index, task);
                let (target, ok) = match self.failure(0x0FA1_13A9, task, duration) {
                    Some(t) => (t, false),
                    None => (duration, true),
                };
                let end = self.now + target;
                self.at(end, Ev::MapEnd(attempt, ok));
                self.maps_running += 1;
                let mut live = Live::new(node, container.0, self.now, duration, Some(map));
                live.target = target;
                live.ok = ok;
                live.end_us = event_us(end);
                live.key = key;
                self.live.insert(attempt, live);
                self.note(|| Note::Began {
                    attempt,
                    node,
                    map: true,
                    input,
                    output: Some(output),
                    work: duration,
                });
            }
            Decision::LaunchReduce {
                attempt,
                reduce,
                container,
            } => {
                let node = self.held[container.0 as usize];
                if let Some(n) = self.reduce_launches.get_mut(reduce.0 as usize) {
                    if *n > 0 {
                        self.relaunched += 1;
                    }
                    *n += 1;
                }
                // Its key is set with its input.
                let live = Live::new(node, container.0, self.now, f64::INFINITY, None);
                self.live.insert(attempt, live);
                self.waiting.push((attempt, reduce));
            }
            Decision::SampleReduceInput { reduce, keep_bytes } => {
                if let Some(kept) = self.kept.get_mut(reduce.0 as usize) {
                    *kept = Some(keep_bytes);
                }
            }
            Decision::Release(c) => {
                let node = self
                    .held
                    .get_mut(c.0 as usize)
                    .map(|n| std::mem::replace(n, NOT_HELD));
                if let Some(node) = node.filter(|&n| n != NOT_HELD) {
                    self.holding -= 1;
                    if let Some(s) = self.shared.as_mut() {
                        s.released.push(s.rm_ids[c.0 as usize]);
                        return;
                    }
                    self.free[node as usize] += 1;
                    self.released_at[node as usize] = self.now;
                    self.cooling.push_back((self.now, node));
                }
            }
            Decision::MarkLocalOnly(_) => {}
            // The guard cut a reduce: running its function, it answers now from what it has
            // folded in, its share done × the input it kept; still waiting for its input, it
            // answers from none of it once the input has come (`feed_reduces`), as the task
            // runner's synthetic reduce does live. In this model all of a reduce's work is
            // after its input.
            Decision::CutReduce { attempt, .. } => {
                let now = self.now;
                if let Some(l) = self.live.get_mut(attempt).filter(|l| !l.cut) {
                    l.cut = true;
                    if l.duration.is_finite() {
                        let done = l.done(now, &self.exp.model.progress);
                        let folded = (l.kept as f64 * done).floor() as u64;
                        self.queue.push(now, Ev::ReduceCut(attempt, folded));
                    }
                }
            }
            Decision::CloseMapPhase { estimate, .. } => {
                self.closed = true;
                self.estimate = estimate;
            }
            Decision::Reforecast { estimate, .. } => {
                if self.finished.is_none() {
                    self.reforecast = Some(estimate);
                }
            }
            Decision::Kill(a) => {
                if let Some(l) = self.end(a) {
                    self.killed += 1;
                    if l.map.is_some() {
                        self.maps_running -= 1;
                    }
                }
            }
            Decision::Finish(_) => self.finished = Some(self.now),
        }
    }
}

#[cfg(test)]
mod tests;
