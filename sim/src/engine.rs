//! The discrete-event engine: one job, one deadline configuration, one policy, on a virtual
//! clock. It turns the job's truth into the events of the task-policy interface and carries out
//! the policy's decisions; it decides nothing a policy decides.
//!
//! Runs are isolated — the job holds its δ·MRA containers on a cluster of its own — because the
//! paper's metrics are per job (δ and μ are per job). Everything random is a pure function of
//! the experiment seed and *what* it is for (job, map, attempt number), never of the order
//! events happen in, so every policy meets the same slow nodes and the same failures.

use std::collections::VecDeque;

use yard_appmaster::policy::{
    AttemptId, Decision, Estimate, Event, JobSpec, Location, MapSpec, NodeId, PolicyConfig,
    PolicyKind, RackId, ReduceId, Rng, Seconds, TaskPolicy,
};
use yard_workload::SizeBin;

use crate::config::{ClusterConfig, DeadlineConfig, Model};
use crate::floor::{self, RanReduce};
use crate::job::SimJob;
use crate::oracle;

mod attempts;
mod containers;
mod decisions;
mod queue;

pub use crate::result::{JobResult, MEASURABLE, Moment, Outcome, Phase, Unguarded, label};
use attempts::{Attempts, Live, Unlaunched};
use queue::{Ev, Queue, event_us};

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
            // A plan without a deadline (`Plan::bare`, `Plan::whole_cluster`: the MDT and
            // `T_J` runs) keeps an infinite one for its own arithmetic; the policy is told none.
            deadline: Some(self.plan.deadline).filter(|d| d.is_finite()),
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
}

#[cfg(test)]
mod tests;
