//! Task policies: how a MapReduce master spends its containers. Each is a deterministic state
//! machine — `handle(now, event, rng, out)` appends decisions — with no IO, no clock and no
//! global randomness, so the live master and the simulator run the very same code.
//!
//! The contract between a policy and its adapter (the live master or the simulator):
//! - `JobStarted` comes first, once. Times are seconds on any clock, non-decreasing.
//! - A granted container is the job's until the policy releases it. When an attempt finishes,
//!   fails or is killed, its container is free again and the policy decides on it in the same
//!   call (launch something else, or `Release`). A lost container takes its attempt with it.
//! - Every attempt the policy launches ends in exactly one of `TaskFinished`, `TaskFailed`,
//!   a `Kill` decision, or `ContainerLost`.
//! - `ReduceInputReady` says a reduce has all its map partitions; the policy may answer with
//!   `SampleReduceInput` before the reduce function runs (Dart Alg. 5). The adapter sends it
//!   only once no map output is still to come: every map counted in `k` is done and
//!   `Progress::restarts_waiting` is 0 (a restarted map's output counts).
//! - `MapOutputLost` says a finished map's output is gone and a reduce still needs it; the map
//!   leaves `k` and is restarted or dropped as a failed map is. A map counted in `k` at
//!   `Finish` has an output that was not reported lost after it finished.
//! - `WakeAt(t)` asks for one `Wake` at `t` (or just after), on the same clock; a later
//!   `WakeAt` replaces the earlier one. It is the policy's timer: under a deadline guard `dart`
//!   keeps its own moments with it, beside the adapter's `Guard` and `Deadline`.

mod aria;
mod core;
mod dart;
pub mod estimate;
pub mod profiler;
mod ps;
mod running;
#[cfg(test)]
mod testing;

use std::fmt;
use std::str::FromStr;

pub use estimate::{Estimate, Estimator};
pub use profiler::{Profiler, RunObserver, RunRecord};

pub use self::core::{Progress, stratified_order};
pub use aria::{Aria, aria_profile};
pub use dart::{Dart, Extensions};
pub use ps::PreselectedSampling;

/// Seconds, as f64: policies do arithmetic on times (Dart's estimates), never compare clocks.
pub type Seconds = f64;

/// The RNG a caller owns and hands to the policy: a named algorithm, so a seed means the same
/// draws on every platform and rand release.
pub type Rng = rand::rngs::ChaCha8Rng;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident($t:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);
    };
}

id!(
    /// A map task: an index into `JobSpec::maps`.
    MapId(u32)
);
id!(
    /// A reduce task, `0..JobSpec::reduces`.
    ReduceId(u32)
);
id!(
    /// A container the resource manager granted to the job.
    ContainerId(u64)
);
id!(NodeId(u32));
id!(RackId(u32));
id!(
    /// One run of a task, numbered by the policy. Speculative copies are further attempts.
    AttemptId(u32)
);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskRef {
    Map(MapId),
    Reduce(ReduceId),
}

/// Where something is in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    pub node: NodeId,
    pub rack: RackId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Container {
    pub id: ContainerId,
    pub at: Location,
}

/// How close a map's input is to the container it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Locality {
    NodeLocal,
    RackLocal,
    Remote,
}

/// One map task: its input split and where the split's replicas live.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSpec {
    pub bytes: u64,
    pub replicas: Vec<Location>,
}

/// `f(d) = a·d^b·e`: reduce time against reduce input (Dart eq. 9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerLaw {
    pub a: f64,
    pub b: f64,
    /// The standard deviation of `ln e` around `a·d^b`, from the fit's residuals: how much
    /// reduces of one input size differ (0: not known, or none).
    pub spread: f64,
}

/// What an earlier run of the same recurring job left behind (Dart eq. 13).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviousRun {
    /// Map outputs that reached the answer in that run (`k_i`).
    pub k: u32,
    /// The largest reduce input of that run, bytes (`d_{k_i}`).
    pub max_reduce_input: f64,
}

/// The job profile of Dart §5.1, from the task sampler and the job profiler: how long maps take,
/// how big their partitions are, how fast the shuffle goes and how reduce time grows with input.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `T_l^a`: a node-local map's duration.
    pub map_local: Seconds,
    /// `T_r^a`: a rack-local or remote map's duration.
    pub map_remote: Seconds,
    /// The shortest node-local map the task sampler (or an earlier run) timed, on the same
    /// footing as `map_local` (a map of the job's mean input); `None` where no single map was
    /// timed. `dart`'s `lone_map` launches a first map on it when the estimate says none fits.
    pub map_shortest: Option<Seconds>,
    /// σ of ln(map duration) around its mean that earlier runs of the job kind measured on
    /// their node-local maps; `None` until measured (`dart` then assumes
    /// `PolicyConfig::map_spread`).
    pub map_spread: Option<f64>,
    /// `p`: bytes one map sends to one reducer.
    pub partition_bytes: f64,
    /// Bytes per second the job's shuffle moves, until measured (eq. 5).
    pub shuffle_bandwidth: f64,
    pub reduce_time: PowerLaw,
    /// Earlier runs, oldest first; empty for a job's first run.
    pub previous_runs: Vec<PreviousRun>,
}

impl Profile {
    /// `T_l^a` for a node-local map, else `T_r^a` (rack-local counts as remote, as in eq. 2).
    pub fn map_duration(&self, locality: Locality) -> Seconds {
        match locality {
            Locality::NodeLocal => self.map_local,
            Locality::RackLocal | Locality::Remote => self.map_remote,
        }
    }
}

/// Everything a policy knows when the job starts.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// `D`, seconds after the job's start; `None`: the job has no deadline (a live job
    /// submitted without one, the simulator's runs of a job alone). Each policy says what it
    /// does without one: `full` ignores `D` anyway; Dart's approach stage reads every map, its
    /// revise stage only speculates (LATE's stragglers, with an unbounded window: eq. 11), Alg.
    /// 5 samples nothing and its guard never fires; ARIA asks for the fewest slots (one per
    /// phase: any allocation finishes by no deadline); PS reads every map. Someone may give a
    /// running job a deadline (`Event::DeadlineChanged`); none takes one away.
    pub deadline: Option<Seconds>,
    pub maps: Vec<MapSpec>,
    pub reduces: u32,
    pub profile: Profile,
    /// The containers the cluster promised the job, where the policy is told (ARIA and PS
    /// plan with it); `None` leaves the policy to ask for what it wants.
    pub allotment: Option<u32>,
    /// Maps an earlier attempt of the job's master finished, whose outputs are still in
    /// place (Hadoop's MapReduce recovery): done when the job starts, counted in `k`, never
    /// launched. Empty on a first attempt.
    pub recovered: Vec<RecoveredMap>,
}

/// A map finished by an earlier attempt of the job's master.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecoveredMap {
    pub map: MapId,
    /// Its whole output (all partitions), as that attempt reported it.
    pub output_bytes: u64,
}

/// What happens to a job, as its master hears of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    JobStarted(JobSpec),
    ContainerGranted(Container),
    ContainerLost(ContainerId),
    /// How far an attempt is, in [0, 1] (Hadoop's progress score).
    TaskProgress {
        attempt: AttemptId,
        progress: f64,
    },
    /// The attempt succeeded. For a map, `output_bytes` is its whole output (all partitions).
    TaskFinished {
        attempt: AttemptId,
        output_bytes: u64,
    },
    TaskFailed(AttemptId),
    /// Bytes the shuffle moved since the last such event (`V_p` grows by this).
    ShuffleBytes(u64),
    /// A reduce has received every partition it will get: `bytes` of input.
    ReduceInputReady {
        reduce: ReduceId,
        bytes: u64,
    },
    /// A finished map's output is gone while some reduce still needs it: its node was lost, or
    /// a reducer could not fetch it (Hadoop's fetch-failure notification). The map leaves `k`
    /// and runs again where the policy approves the restart (the test a failed map's restart
    /// passes); otherwise it stays dropped. No effect on a map that is not finished.
    MapOutputLost(MapId),
    /// A periodic tick (the master's heartbeat): straggler detection runs here.
    Tick,
    /// The deadline guard (yard's, beyond the paper): the time left only covers the reduces
    /// and the answer. Every policy then kills every map attempt (their maps leave `k`),
    /// drops restarts, closes the map phase and tells each running reduce to emit what it has
    /// folded in (`CutReduce`); reduces not started still run on the containers that frees.
    Guard,
    /// The time the policy asked for with `Decision::WakeAt` has come.
    Wake,
    /// The deadline (less the time to deliver the answer): every attempt still running is
    /// killed, every reduce not finished is abandoned (its keys are not in the answer:
    /// `Progress::reduces_abandoned`), and the job finishes with what it has.
    Deadline,
    /// `D` is now this many seconds after the job's start (`JobSpec::deadline`'s clock): its
    /// deadline was set or moved while it ran (a bare `Seconds`: a job without a deadline may
    /// be given one, but none is taken away — yard's `PUT …/deadline` only sets one) (YARN's application timeout update; yard's `PUT
    /// …/deadline`). Every policy works to the new `D` from now on: `dart`'s approach stage
    /// launches while the estimate fits it and its last moment moves with it. What is done
    /// stays done: a closed map phase stays closed and a guard that fired stays fired. ARIA
    /// and PS keep the plan they made at the start, as their papers plan once, at submission.
    DeadlineChanged(Seconds),
}

/// What the policy wants done.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The number of containers the job wants to hold now (asks and releases follow from it).
    Want(u32),
    LaunchMap {
        attempt: AttemptId,
        map: MapId,
        container: ContainerId,
        locality: Locality,
        /// A speculative copy of a map that is already running (Dart Alg. 3, LATE).
        speculative: bool,
    },
    LaunchReduce {
        attempt: AttemptId,
        reduce: ReduceId,
        container: ContainerId,
    },
    /// Dart Alg. 5: sample the reduce's input uniformly down to `keep_bytes` before reducing.
    SampleReduceInput {
        reduce: ReduceId,
        keep_bytes: u64,
    },
    Release(ContainerId),
    /// Dart Alg. 1: this map may from now on run only on a node-local container.
    MarkLocalOnly(MapId),
    /// No more maps will be launched (Dart's map phase termination, or all maps launched);
    /// unlaunched maps are dropped. `estimate` is the policy's `T_J` at this moment.
    CloseMapPhase {
        k: u32,
        estimate: Option<Estimate>,
    },
    /// After `CloseMapPhase`, `k` changed (a straggler or a failed map left it, a restart came
    /// back): the policy's `T_J` now, which replaces the close's as the job's estimate (`dart`'s
    /// `reforecast_after_kill`; no other policy sends it). The estimate at close stays what it
    /// was; the latest one is in force at the answer.
    Reforecast {
        k: u32,
        estimate: Estimate,
    },
    /// Stop this attempt; its container is free (no further event comes for it).
    Kill(AttemptId),
    /// Under the guard: this running reduce attempt emits its partial answer over the input
    /// it has folded in so far, now, and reports it as `TaskFinished` with `output_bytes` the
    /// input it folded in.
    CutReduce {
        attempt: AttemptId,
        reduce: ReduceId,
    },
    /// Send `Event::Wake` at this time (on the caller's clock, as `now`), after whatever else
    /// happens at that instant; a later `WakeAt` replaces an earlier one. `dart` asks so under a
    /// guard, to stop its maps and cut its reduces at moments of its own estimate.
    WakeAt(Seconds),
    Finish(Progress),
}

/// How long before a deadline `deadline` seconds after the job's start the deadline guard
/// fires: `guard` seconds, but never more than a quarter of the time the job has (a 1 s
/// margin would stop a 0.6 s job before it began). The live master and the simulator both use
/// it.
pub fn guard_margin(guard: Seconds, deadline: Seconds) -> Seconds {
    guard.max(0.0).min(0.25 * deadline.max(0.0))
}

/// Tuning shared by every policy; `Default` is the papers' values.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyConfig {
    /// §5.3 EWMA factor for map durations.
    pub ewma_alpha: f64,
    /// Alg. 4's StragglingsThreshold as a fraction of `T_m^a` (§6.5: 80 %).
    pub straggler_threshold: f64,
    /// LATE's rule: a straggler's progress rate is below this fraction of the phase's typical
    /// rate (`1 / T_m^a`).
    pub straggler_rate: f64,
    /// An attempt is judged only after running this fraction of `T_m^a` (too early, and every
    /// task looks slow).
    pub straggler_min_age: f64,
    /// LATE's SpeculativeCap: at most this fraction of held containers run copies.
    pub speculative_cap: f64,
    /// The fraction of a reduce's input Alg. 5 keeps when no time is left (a case the paper
    /// does not cover); with `dart`'s `sample_floor`, the least it ever keeps.
    pub min_reduce_sample: f64,
    /// How sure Alg. 5 wants to be that a wave of reduces, each sized to `D`, ends by `D`
    /// given the spread of reduce times the profile measured (`dart`'s `reduce_confidence`;
    /// the paper, and `dart-paper`, size to the average reduce, which ends after `D` about half
    /// the time).
    pub reduce_confidence: f64,
    /// The spread (σ of the log) of a job's map durations around their mean, which `dart`'s
    /// forecast (`wave_end`, `fifo_shuffle`) assumes until three of the job's maps have
    /// finished and their own spread is measured. The profile's sample runs do not give one;
    /// 0.3 is the simulator's `task_spread`, the spread of map times within a Rumen job.
    pub map_spread: f64,
    /// Every attempt in a container of its own, given back to the rm when the attempt ends
    /// (YARN's MapReduce: the rm's cluster policy hands out the next one). Off (yard's live
    /// master, Tez's reuse): a container runs the job's tasks one after another until the
    /// policy releases it.
    pub one_task_per_container: bool,
    /// The run has a deadline guard (`Event::Guard` will come, once the job has a deadline):
    /// `dart`'s `lone_map` launches a map on its best case only then, since the guard is what
    /// stops waiting for it by `D`.
    /// Without one (`dart` as the paper is measured) a map that runs long would be a miss.
    pub guarded: bool,
    /// Seconds a cut reduce needs to emit its partial answer and report it (`CutReduce`): the
    /// live master's answer path; 0 in the simulator, where a cut answers at once. `dart`'s
    /// `last_moment` cuts its last reduces this long before `D`.
    pub answer_cost: Seconds,
    /// `dart`'s extensions when not its own ([`Extensions::YARD`]): an ablation (`yard sim
    /// --dart-without`). Other policies ignore it.
    pub dart_extensions: Option<Extensions>,
    /// `dart` (and its variants, `late`, `full`) launch maps in a random order drawn from the
    /// caller's RNG, stratified by position (`core::stratified_order`: any prefix spreads over
    /// the input), locality first within it (`Core::randomise_map_order`), instead of block
    /// order: an aggregate job's intervals assume the blocks read are a random sample
    /// (`apps::aggregate`). ARIA and PS ignore it (PS draws its sample at random already).
    pub random_map_order: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            ewma_alpha: 0.8,
            straggler_threshold: 0.8,
            straggler_rate: 0.5,
            straggler_min_age: 0.5,
            speculative_cap: 0.1,
            min_reduce_sample: 0.01,
            reduce_confidence: 0.95,
            map_spread: 0.3,
            one_task_per_container: false,
            guarded: false,
            answer_cost: 0.0,
            dart_extensions: None,
            random_map_order: false,
        }
    }
}

/// A task policy. See the module documentation for the event contract.
pub trait TaskPolicy {
    /// The policy's name as `PolicyKind` spells it.
    fn name(&self) -> &'static str;

    /// Takes one event at time `now` and appends the decisions it leads to.
    fn handle(&mut self, now: Seconds, event: Event, rng: &mut Rng, out: &mut Vec<Decision>);

    /// The policy's current estimate of the job's completion (from job start), if it makes one.
    fn estimate(&self, now: Seconds) -> Option<Estimate>;

    /// Where the job stands.
    fn progress(&self) -> Progress;
}

/// Every policy yard can run a job with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// yard's Dart: the paper's algorithm with every yard extension (`dart/mod.rs` lists them).
    Dart,
    /// The paper's Dart: Algorithms 1–5 and eq. 1–13 with none of yard's extensions.
    DartPaper,
    /// The paper's Dart without the revise stage (no Alg. 3–5).
    DartWithoutRevise,
    /// The paper's Dart with map revising only (Alg. 3–4, no Alg. 5).
    DartMapReviseOnly,
    /// The paper's Dart without skew handling (eq. 8 instead of eq. 13).
    DartWithoutSkew,
    /// Dart's approach stage with LATE's speculation instead of Dart's revise stage.
    Late,
    /// Process all input, ignoring the deadline: the exact answer, for comparison.
    Full,
    /// ARIA (Verma et al.): containers from its bounds model to finish all input by D.
    Aria,
    /// Pre-selected sampling: a sample fraction fixed before the job from a linear model.
    Ps,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 9] = [
        PolicyKind::Dart,
        PolicyKind::DartPaper,
        PolicyKind::DartWithoutRevise,
        PolicyKind::DartMapReviseOnly,
        PolicyKind::DartWithoutSkew,
        PolicyKind::Late,
        PolicyKind::Full,
        PolicyKind::Aria,
        PolicyKind::Ps,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Dart => "dart",
            PolicyKind::DartPaper => "dart-paper",
            PolicyKind::DartWithoutRevise => "d-wor",
            PolicyKind::DartMapReviseOnly => "d-wmr",
            PolicyKind::DartWithoutSkew => "d-wost",
            PolicyKind::Late => "late",
            PolicyKind::Full => "full",
            PolicyKind::Aria => "aria",
            PolicyKind::Ps => "ps",
        }
    }

    pub fn build(self, config: PolicyConfig) -> Box<dyn TaskPolicy + Send> {
        match self {
            PolicyKind::Aria => Box::new(Aria::new(config)),
            PolicyKind::Ps => Box::new(PreselectedSampling::new(config)),
            dart => Box::new(Dart::new(dart, config)),
        }
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = PolicyKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown policy {s:?}; expected one of {}", names.join(", "))
            })
    }
}
