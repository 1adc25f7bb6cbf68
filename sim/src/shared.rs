//! The shared cluster: many jobs, one cluster, one cluster policy — the rm's own
//! [`Scheduler`] (`yard_cluster::scheduler`, the rm's pure half), driven on the virtual clock
//! as the live rm drives it, with each job's master running its task policy in the engine's
//! [`Run`], as in the isolated experiments.
//!
//! Jobs arrive at their submit times (scaled by the setup's `time_scale`). On arrival the
//! master registers with the rm as a live one does: its deadline, its task counts and ARIA's
//! profile of it (`yard_appmaster::policy::aria_profile` of the job's sampled profile, as the
//! rm reads the profile store). Its deadline is drawn as ARIA draws one (seed 000 §IV-A): `U[lo, hi]·T_J`, `T_J`
//! the job's completion alone on the whole cluster ([`crate::engine::alone`]).
//!
//! The rm's cadence: a master's ask (its wanted containers not held, with node-local asks for
//! its next maps' replicas, as YARN's ResourceRequests) and its releases reach the rm when they
//! change, the rm answers at once (as the isolated engine's rm does), progress goes with every
//! master heartbeat, and the rm ticks (quotas recomputed on the time left, promised releases
//! that did not come reclaimed) once a heartbeat. A master that just gave a container back
//! asks for more only at its next heartbeat (else a container it will not take could go back
//! and forth forever at one instant). A master holding no container does not tick: it has
//! nothing to report or judge until its next grant.
//!
//! Containers are used as the experiment's `PolicyConfig::one_task_per_container` says: by
//! default as yard's live master uses them (a container runs the job's tasks one after
//! another until the master releases it, so the cluster policy acts when jobs release, finish
//! or are preempted); with it, as YARN's MapReduce does and ARIA's slots are (every task its
//! own container, so the policy hands out every container anew as a task ends).
//!
//! Masters' own containers are modelled when the cluster says so
//! (`ClusterConfig::master_share`, as `yard replay` does to predict a live cluster): on
//! arrival the master asks the rm for a container of its own at the masters' priority, within
//! the masters' share, and starts only once granted — its deadline running meanwhile, so it
//! starts with what is left of it, as a live master does — and holds it until it answers.
//! Without it every container runs a task and masters start on arrival. Start-up costs, as a
//! live cluster has them (`ClusterConfig::master_startup_s`, `task_startup_s`): a master starts
//! that long after its container is granted, and every task attempt runs that much longer
//! ([`with_task_startup`]). Not modelled: separate map and reduce slots (a container runs
//! either).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;
use yard_appmaster::policy::{PolicyKind, Seconds};
use yard_cluster::policy::JobModel;
use yard_cluster::scheduler::{
    AppId, Ask, Assignment, ClusterPolicy as RmPolicy, MASTER_PRIORITY, NodeId, Place, RackId,
    Resources, SchedEvent, Scheduler,
};
use yard_wire::deadline::Deadline;

use crate::engine::{Experiment, JobResult, Plan, Run, SharedSide, mix, unit};
use crate::experiment::{par_map, quietly};
use crate::job::SimJob;
use crate::load::Hog;

/// A hog that is off and stays off.
const NO_HOG: Hog = Hog {
    on: false,
    next: f64::INFINITY,
};
use crate::overload::{LoadSetup, LoadSide, LoadStats};

/// Every task container's size: one vcore, 1 GiB (nodes hold `containers_per_node` of them).
const TASK: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

/// The deadline a master gets when it starts at or past its deadline: it answers at once.
const MIN_DEADLINE: Seconds = 1e-3;

/// The priority of task asks (masters' is `yard_cluster::scheduler::MASTER_PRIORITY`, 0).
const TASK_PRIORITY: u32 = 1;

/// A job ready for the shared cluster: its arrival, `T_J` and drawn deadline.
#[derive(Debug, Clone)]
pub struct SharedJob {
    pub job: SimJob,
    /// Seconds after the day's start (the trace's submit time, scaled).
    pub arrival: Seconds,
    /// ARIA's `T_J`: the job alone on the whole cluster.
    pub alone: Seconds,
    /// Relative to its arrival.
    pub deadline: Seconds,
}

/// ARIA's deadline draw, `U[lo, hi]·T_J`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeadlineFactor {
    pub lo: f64,
    pub hi: f64,
}

impl DeadlineFactor {
    /// ARIA's (seed 000 §IV-A): between once and twice the job's time alone.
    pub const ARIA: DeadlineFactor = DeadlineFactor { lo: 1.0, hi: 2.0 };

    /// `"1,2"` (or one number for a fixed factor): positive, finite, `lo ≤ hi`.
    pub fn parse(s: &str) -> Result<DeadlineFactor, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let number = |p: &str| match p.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => Err(format!(
                "expected a deadline factor above 0 (LO,HI, or one number), found {p:?}"
            )),
        };
        let (lo, hi) = match parts.as_slice() {
            [one] => (number(one)?, number(one)?),
            [lo, hi] => (number(lo)?, number(hi)?),
            _ => return Err(format!("expected LO,HI (e.g. 1,2), found {s:?}")),
        };
        if lo > hi {
            return Err(format!(
                "the deadline factor's low end {lo} is above its high end {hi}"
            ));
        }
        Ok(DeadlineFactor { lo, hi })
    }
}

/// Prepares jobs for the shared cluster: arrivals scaled by `time_scale` (below 1 packs them
/// closer: more load), each job's `T_J` simulated (spread over the machine's cores) and its
/// deadline drawn from the experiment's seed and the job's place in the day.
pub fn prepare(
    jobs: Vec<SimJob>,
    exp: &Experiment,
    factor: DeadlineFactor,
    time_scale: f64,
) -> Vec<SharedJob> {
    let alone_times = par_map(&jobs, |i, job| alone_here(job, exp, i), &quietly);
    let first = jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
    jobs.into_iter()
        .zip(alone_times)
        .enumerate()
        .map(|(i, (job, t_j))| {
            let u = unit(mix(exp.seed, 0x0DEA_D11E, i as u64, 0));
            let deadline = (factor.lo + u * (factor.hi - factor.lo)) * t_j;
            SharedJob {
                arrival: (job.submit - first).max(0.0) * time_scale,
                alone: t_j,
                deadline,
                job,
            }
        })
        .collect()
}

/// ARIA's `T_J` on the shared cluster: the job alone on it under FIFO, reading all its input
/// (`full`), no slow nodes or failures, its containers used as the experiment says — the
/// same mechanics as the day it is then part of, so that a job alone meets a deadline of
/// `1·T_J`. (The isolated engine's [`crate::engine::alone`] reuses containers and answers grants at once.)
fn alone_here(job: &SimJob, exp: &Experiment, index: usize) -> Seconds {
    let mut ideal = exp.clone();
    ideal.guard = 0.0;
    ideal.cluster.slow_nodes = 0;
    ideal.cluster.failure_rate = 0.0;
    let plans = [Plan::whole_cluster(&ideal)];
    let one = [SharedJob {
        job: job.clone(),
        arrival: 0.0,
        // Only the day's limit reads it here: the job's serial task time bounds its time
        // alone (`DAY_LIMIT` is a hundred times that), without simulating it twice.
        alone: job.task_seconds(),
        deadline: f64::INFINITY,
    }];
    let one = with_task_startup(&one, ideal.cluster.task_startup_s);
    let mut day = Day::new(&one, &plans, RmPolicy::Fifo, PolicyKind::Full, &ideal);
    day.index_base = index as u64;
    day.go();
    day.results[0]
        .as_ref()
        .map_or(f64::INFINITY, |r| r.result.completion)
}

/// The jobs as their tasks run when every task attempt takes `startup` seconds beyond its
/// work (`ClusterConfig::task_startup_s`): each map that much longer, each reduce that much
/// longer on its whole share of the output (the truth's reduce law has no constant term, so
/// the cost rides on the reduce's noise: a reduce cut to part of its input pays part of it,
/// one of no input none). The policy's profile is left alone: a live master is not told its
/// launches' cost either. Borrowed as they are when `startup` is 0.
fn with_task_startup(jobs: &[SharedJob], startup: Seconds) -> Cow<'_, [SharedJob]> {
    if startup <= 0.0 {
        return Cow::Borrowed(jobs);
    }
    let mut jobs = jobs.to_vec();
    for t in jobs.iter_mut().map(|j| &mut j.job.truth) {
        for m in &mut t.maps {
            m.duration += startup;
        }
        let output = t.maps.iter().map(|m| m.output_bytes).sum();
        for (r, d) in t.reduce_inputs(output).into_iter().enumerate() {
            let work = t.reduce_time.at(d as f64);
            if work > 0.0 {
                t.reduce_noise[r] += startup / work;
            }
        }
    }
    Cow::Owned(jobs)
}

/// One job's end on the shared cluster.
#[derive(Debug, Clone)]
pub struct SharedResult {
    /// Seconds after the day's start.
    pub arrival: Seconds,
    /// ARIA's `T_J`.
    pub alone: Seconds,
    /// The run as the isolated experiments report one: completion and deadline from its
    /// arrival, k, processed fraction, outcome.
    pub result: JobResult,
    /// Its containers the cluster policy took back.
    pub preempted: u32,
    /// From its arrival to its master's container (its start-up not counted, as a live
    /// master's start is its process's): 0 unless masters hold containers
    /// (`ClusterConfig::master_share`) and it waited for one.
    pub master_wait: Seconds,
}

impl SharedResult {
    /// ARIA's relative deadline exceeded for this job (seed 000 §IV-A, metric 1):
    /// `(T_compl − T_ar − D) / D` when it missed, else 0.
    pub fn deadline_exceeded(&self) -> f64 {
        crate::report::deadline_exceeded(&self.result)
    }
}

/// What a day on the shared cluster cost and did, beyond its jobs' ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DayStats {
    /// Events the cluster policy handled.
    pub rm_events: u64,
    /// Events the jobs' task policies handled.
    pub policy_events: u64,
    /// Containers MinEDF-WC lent beyond quotas, and took back (ARIA's metrics 4 and 5).
    pub spare_allocations: u64,
    pub spare_kills: u64,
    /// Of them, to (and of) jobs in their map stage.
    pub spare_map_allocations: u64,
    pub spare_map_kills: u64,
    /// Virtual seconds from the first arrival to the last answer.
    pub span: Seconds,
}

/// A day gives up this many times the time its jobs would take one after another, each alone
/// on the whole cluster (plus an hour) after the last arrival: far beyond any schedule that
/// serves every job, so only a policy that never answers meets it (its jobs end unanswered).
const DAY_LIMIT: f64 = 100.0;

/// What wakes the day up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    /// The rm's tick.
    Tick,
    /// Job `i` arrives.
    Arrival(usize),
    /// Job `i`'s next event is due.
    Job(usize),
    /// Job `i`'s master asks again (its heartbeat after it gave a container back).
    Ask(usize),
    /// Job `i`'s master has started up (`ClusterConfig::master_startup_s`).
    Started(usize),
    /// The node load model: Linux's 5-second load-average update (and the overload count).
    LoadTick,
    /// The node load model: every node sends its load to the rm.
    NodeBeat,
    /// The node load model: a hog on node `n` switches.
    Hog(u32),
}

/// Runs one day: `jobs` on the experiment's cluster under cluster policy `rm` with every
/// job's master running `policy`.
pub fn simulate_day(
    jobs: &[SharedJob],
    rm: RmPolicy,
    policy: PolicyKind,
    exp: &Experiment,
) -> (Vec<SharedResult>, DayStats) {
    let (results, stats, _) = simulate(jobs, rm, policy, exp, None);
    (results, stats)
}

/// The experiments' day loop on the shared cluster (a shared day's report, the rm-policies and
/// overload experiments): a day per pair of `a` × `b` — the cluster policy and what else the
/// experiment varies — each `day(a, b)` on every core ([`par_map`]), returned beside its pair,
/// `a` major (the order every report lists its days in); `progress(done, total)` after each.
pub(crate) fn each_day<A: Copy + Sync, B: Copy + Sync, R: Send>(
    a: &[A],
    b: &[B],
    day: impl Fn(A, B) -> R + Sync,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Vec<((A, B), R)> {
    let pairs: Vec<(A, B)> = a
        .iter()
        .flat_map(|&x| b.iter().map(move |&y| (x, y)))
        .collect();
    let results = par_map(&pairs, |_, &(x, y)| day(x, y), progress);
    pairs.into_iter().zip(results).collect()
}

/// [`simulate_day`] with the node load model of the overload experiment (`crate::load`):
/// background hogs on every node, tasks slowed by their node's load, each node's load sent to
/// the rm every heartbeat, each job typed by its first finished map and reduce; with the rm's
/// overload classifier when `setup.classifier` says.
pub(crate) fn simulate_loaded_day(
    jobs: &[SharedJob],
    rm: RmPolicy,
    policy: PolicyKind,
    exp: &Experiment,
    setup: &LoadSetup,
) -> (Vec<SharedResult>, DayStats, LoadStats) {
    let (results, stats, load) = simulate(jobs, rm, policy, exp, Some(setup));
    (results, stats, load.unwrap_or_default())
}

fn simulate(
    jobs: &[SharedJob],
    rm: RmPolicy,
    policy: PolicyKind,
    exp: &Experiment,
    load: Option<&LoadSetup>,
) -> (Vec<SharedResult>, DayStats, Option<LoadStats>) {
    let plans: Vec<Plan> = jobs
        .iter()
        .map(|j| {
            let mut plan = Plan::whole_cluster(exp);
            plan.mdt = j.alone;
            plan.deadline = j.deadline;
            plan
        })
        .collect();
    let jobs = with_task_startup(jobs, exp.cluster.task_startup_s);
    let mut day = Day::new(&jobs, &plans, rm, policy, exp);
    if let Some(setup) = load {
        day.with_load(setup);
    }
    day.go();
    let spare = day.sched.spare_counts();
    day.stats.spare_allocations = spare.spare_allocations;
    day.stats.spare_kills = spare.spare_kills;
    day.stats.spare_map_allocations = spare.spare_map_allocations;
    day.stats.spare_map_kills = spare.spare_map_kills;
    let labelled = day.sched.overload().map(|c| c.model().class_counts());
    let load = day.load.take().map(|mut l| {
        l.stats.span = day.stats.span;
        l.stats.containers = day.sched_containers;
        l.stats.labelled = labelled.unwrap_or_default();
        l.stats
    });
    let mut results: Vec<SharedResult> = day.results.into_iter().flatten().collect();
    results.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    (results, day.stats, load)
}

/// A master's standing ask at the rm.
#[derive(Debug, Default, Clone, PartialEq)]
struct Asked {
    any: u32,
    nodes: Vec<u32>,
}

struct Day<'a> {
    exp: &'a Experiment,
    jobs: &'a [SharedJob],
    plans: &'a [Plan],
    policy: PolicyKind,
    sched: Scheduler,
    runs: Vec<Option<Run<'a>>>,
    results: Vec<Option<SharedResult>>,
    /// (µs, sequence, what): the day's next wake-ups.
    queue: BinaryHeap<Reverse<(u64, u64, Wake)>>,
    seq: u64,
    /// The time each job's queued `Wake::Job` stands for (older entries are stale).
    due: Vec<Option<u64>>,
    asked: Vec<Asked>,
    /// (maps, reduces) done, as last told to the rm.
    told: Vec<(u32, u32)>,
    /// When each job last gave a container back (µs).
    released_at: Vec<Option<u64>>,
    /// A `Wake::Ask` is queued for the job.
    ask_due: Vec<bool>,
    preempted: Vec<u32>,
    /// Jobs to bring the rm up to date with.
    dirty: Vec<usize>,
    /// Grants that reached a job already gone: back to the rm.
    orphans: Vec<(AppId, u64)>,
    nodes_buf: Vec<u32>,
    now_us: u64,
    heartbeat_us: u64,
    /// Job `i` draws its randomness as the `index_base + i`-th job (a job alone draws as it
    /// does in its day).
    index_base: u64,
    /// The day gives up here: [`DAY_LIMIT`].
    limit_us: u64,
    active: usize,
    arrived: usize,
    stats: DayStats,
    /// The node load model, when the day has one (the overload experiment).
    load: Option<LoadSide>,
    /// Task containers the cluster holds.
    sched_containers: u32,
    /// When each job's master started (µs): its run's clock starts there. Its arrival, unless
    /// masters hold containers and it waited for one, or masters take time to start up.
    origin_us: Vec<u64>,
}

impl<'a> Day<'a> {
    fn new(
        jobs: &'a [SharedJob],
        plans: &'a [Plan],
        rm: RmPolicy,
        policy: PolicyKind,
        exp: &'a Experiment,
    ) -> Day<'a> {
        let n = jobs.len();
        let c = &exp.cluster;
        let mut day = Day {
            exp,
            jobs,
            plans,
            policy,
            sched: {
                let s = match c.master_share {
                    Some(share) => Scheduler::new(rm).with_master_share(share),
                    None => Scheduler::new(rm),
                };
                match &c.queues {
                    // Checked when read (`yard sim --queues`); a file this day cannot take
                    // runs as one queue rather than stop the other days.
                    Some(file) => match file.clone().into_queues(rm) {
                        Ok(queues) => s.with_queues(queues),
                        Err(_) => s,
                    },
                    None => s,
                }
            },
            runs: (0..n).map(|_| None).collect(),
            results: vec![None; n],
            queue: BinaryHeap::new(),
            seq: 0,
            due: vec![None; n],
            asked: vec![Asked::default(); n],
            told: vec![(0, 0); n],
            released_at: vec![None; n],
            ask_due: vec![false; n],
            preempted: vec![0; n],
            dirty: Vec::new(),
            orphans: Vec::new(),
            nodes_buf: Vec::new(),
            now_us: 0,
            heartbeat_us: (c.heartbeat * 1e6).round().max(1.0) as u64,
            index_base: 0,
            limit_us: {
                let last = jobs.iter().map(|j| j.arrival).fold(0.0, f64::max);
                let serial: Seconds = jobs.iter().map(|j| j.alone).filter(|t| t.is_finite()).sum();
                us(last + DAY_LIMIT * (serial + 3600.0))
            },
            active: 0,
            arrived: 0,
            stats: DayStats::default(),
            load: None,
            sched_containers: c.nodes.max(1) * c.containers_per_node.max(1),
            origin_us: jobs.iter().map(|j| us(j.arrival)).collect(),
        };
        let per_node = c.containers_per_node.max(1);
        for node in 0..c.nodes.max(1) {
            day.rm(SchedEvent::NodeAdded {
                node: NodeId(node),
                rack: RackId(node / c.nodes_per_rack.max(1)),
                capacity: Resources::new(TASK.memory_mb * u64::from(per_node), per_node),
                running: Vec::new(),
            });
        }
        for (i, j) in jobs.iter().enumerate() {
            day.wake(us(j.arrival), Wake::Arrival(i));
        }
        day.wake(day.heartbeat_us, Wake::Tick);
        day
    }

    fn wake(&mut self, at_us: u64, what: Wake) {
        self.seq += 1;
        self.queue.push(Reverse((at_us, self.seq, what)));
    }

    fn go(&mut self) {
        while let Some(Reverse((t, _, what))) = self.queue.pop() {
            if t > self.limit_us {
                break;
            }
            self.now_us = t;
            match what {
                Wake::Arrival(i) => self.arrive(i),
                Wake::Job(i) if self.due[i] == Some(t) => {
                    self.due[i] = None;
                    let going = self.runs[i].as_mut().is_some_and(|r| r.step());
                    match going {
                        true => self.dirty.push(i),
                        false => self.finish(i),
                    }
                }
                Wake::Job(_) => {} // stale
                Wake::Ask(i) => {
                    self.ask_due[i] = false;
                    self.dirty.push(i);
                }
                Wake::Started(i) => self.start_master(i),
                Wake::Tick => {
                    self.rm(SchedEvent::Tick);
                    if self.going() {
                        self.wake(t + self.heartbeat_us, Wake::Tick);
                    }
                }
                Wake::LoadTick => self.load_tick(),
                Wake::NodeBeat => self.node_beat(),
                Wake::Hog(n) => self.switch_hogs(n),
            }
            self.settle();
        }
        // Past the limit (a policy that never answers): the rest end unanswered.
        for i in 0..self.runs.len() {
            self.finish(i);
        }
    }

    /// Jobs are still to come or running.
    fn going(&self) -> bool {
        self.active > 0 || self.arrived < self.jobs.len()
    }

    /// Brings the rm up to date with every job that changed, and the queue with their next
    /// events, until nothing changes.
    fn settle(&mut self) {
        loop {
            if let Some(i) = self.dirty.pop() {
                self.sync(i);
            } else if let Some((app, c)) = self.orphans.pop() {
                self.rm(SchedEvent::Release {
                    app,
                    container: yard_cluster::scheduler::ContainerId(c),
                });
            } else {
                break;
            }
        }
    }

    /// Seconds since job `i` arrived.
    fn local(&self, i: usize) -> Seconds {
        (self.now_us.saturating_sub(self.origin_us[i])) as f64 / 1e6
    }

    fn arrive(&mut self, i: usize) {
        self.arrived += 1;
        self.active += 1;
        let j = &self.jobs[i];
        let app = AppId(i as u64);
        let (queue, user) = match &self.exp.cluster.queues {
            Some(file) if !file.queue.is_empty() => (
                file.queue[i % file.queue.len()].name.clone(),
                format!("job{i}"),
            ),
            _ => ("default".into(), String::new()),
        };
        self.rm(SchedEvent::AppAdded {
            app,
            queue,
            user,
            weight: 1.0,
        });
        let deadline_ms = ((j.arrival + j.deadline) * 1e3).round() as i64;
        self.rm(SchedEvent::Deadline {
            app,
            deadline: j
                .deadline
                .is_finite()
                .then_some(Deadline::from_epoch_ms(deadline_ms)),
        });
        let (maps, reduces) = (j.job.maps(), j.job.reduces());
        self.rm(SchedEvent::Model {
            app,
            model: Some(JobModel {
                maps,
                reduces,
                profile: yard_appmaster::policy::aria_profile(&j.job.profile, maps, reduces),
            }),
        });
        match self.exp.cluster.master_share {
            Some(_) => self.rm(SchedEvent::Asks {
                app,
                asks: vec![Ask {
                    priority: MASTER_PRIORITY,
                    place: Place::Any,
                    size: TASK,
                    count: 1,
                    relax_locality: true,
                }],
            }),
            None => self.master_granted(i),
        }
    }

    /// Job `i`'s master has its container (or none to wait for): it starts once it has
    /// started up.
    fn master_granted(&mut self, i: usize) {
        match self.exp.cluster.master_startup_s {
            s if s > 0.0 => self.wake(self.now_us + us(s), Wake::Started(i)),
            _ => self.start_master(i),
        }
    }

    /// Job `i`'s master starts now, with what is left of its deadline.
    fn start_master(&mut self, i: usize) {
        let j = &self.jobs[i];
        let index = self.index_base + i as u64;
        self.origin_us[i] = self.now_us;
        let waited = self.local_since_arrival(i);
        let plan = match waited > 0.0 {
            false => std::borrow::Cow::Borrowed(&self.plans[i]),
            true => {
                let mut plan = self.plans[i].clone();
                // A master that starts past its deadline answers at once, as a live one does.
                plan.deadline = (plan.deadline - waited).max(MIN_DEADLINE);
                std::borrow::Cow::Owned(plan)
            }
        };
        let mut run = Run::new(&j.job, plan, self.exp, index, self.policy);
        run.shared = Some(SharedSide {
            notes: self.load.as_ref().map(|_| Vec::new()),
            ..SharedSide::default()
        });
        run.start();
        run.without_horizon();
        self.runs[i] = Some(run);
        self.dirty.push(i);
    }

    /// Seconds from job `i`'s arrival to its master's start.
    fn local_since_arrival(&self, i: usize) -> Seconds {
        (self.origin_us[i].saturating_sub(us(self.jobs[i].arrival))) as f64 / 1e6
    }

    /// Tells the rm what job `i`'s master would: its ask, its releases, its progress; then
    /// queues its next event.
    fn sync(&mut self, i: usize) {
        self.take_notes(i);
        let Some(run) = self.runs[i].as_mut() else {
            return;
        };
        if run.is_finished() {
            return self.finish(i);
        }
        let app = AppId(i as u64);
        let released = run
            .shared
            .as_mut()
            .map(|s| std::mem::take(&mut s.released))
            .unwrap_or_default();
        // The ask first, so that a container given back below does not come back to it: a
        // master that gives one back asks for more only at its next heartbeat (else a
        // container it will not take could go back and forth at one instant forever).
        let mut any = run.outstanding();
        let cooling = !released.is_empty() || self.released_at[i] == Some(self.now_us);
        let mut ask_later = false;
        if cooling && any > self.asked[i].any {
            any = self.asked[i].any;
            ask_later = !std::mem::replace(&mut self.ask_due[i], true);
        }
        let mut nodes = std::mem::take(&mut self.nodes_buf);
        nodes.clear();
        if any > 0 {
            run.wanted_nodes(&mut nodes);
        }
        let done = (run.maps_finished, run.reduces_finished);
        let next = run.next_event_us();
        if ask_later {
            self.wake(self.now_us + self.heartbeat_us, Wake::Ask(i));
        }
        if self.asked[i].any != any || self.asked[i].nodes != nodes {
            let mut asks: Vec<Ask> = self.asked[i]
                .nodes
                .iter()
                .filter(|n| nodes.binary_search(n).is_err())
                .map(|&n| task_ask(Place::Node(NodeId(n)), 0))
                .collect();
            asks.extend(nodes.iter().map(|&n| task_ask(Place::Node(NodeId(n)), 1)));
            asks.push(task_ask(Place::Any, any));
            self.asked[i] = Asked {
                any,
                nodes: nodes.clone(),
            };
            self.rm(SchedEvent::Asks { app, asks });
        }
        self.nodes_buf = nodes;
        if !released.is_empty() {
            self.released_at[i] = Some(self.now_us);
        }
        for c in released {
            self.rm(SchedEvent::Release {
                app,
                container: yard_cluster::scheduler::ContainerId(c),
            });
        }
        if self.told[i] != done {
            self.told[i] = done;
            self.rm(SchedEvent::Progress {
                app,
                maps_done: done.0,
                reduces_done: done.1,
            });
        }
        // Nothing queued: it waits for a grant (its heartbeat paused), or for nothing (the
        // day's end finds it unanswered).
        if let Some(local_us) = next {
            let at = self.origin_us[i] + local_us;
            if self.due[i] != Some(at) {
                self.due[i] = Some(at);
                self.wake(at, Wake::Job(i));
            }
        }
    }

    /// Job `i` has answered (or given up): its result, and its containers back to the rm.
    fn finish(&mut self, i: usize) {
        self.take_notes(i);
        self.leave_nodes(i);
        let Some(run) = self.runs[i].take() else {
            return;
        };
        if let Some(l) = self.load.as_mut() {
            l.stats.tasks_done += u64::from(run.maps_finished) + u64::from(run.reduces_finished);
            l.stats.relaunched_tasks += u64::from(run.relaunched);
            l.stats.killed_tasks += u64::from(run.killed);
        }
        self.active -= 1;
        self.due[i] = None;
        let mut result = run.result();
        // From the arrival, against the deadline drawn for it, whenever its master started.
        let started = self.local_since_arrival(i);
        result.completion += started;
        let startup = us(self.exp.cluster.master_startup_s) as f64 / 1e6;
        let master_wait = (started - startup).max(0.0);
        result.deadline = self.plans[i].deadline;
        self.stats.policy_events += result.events;
        let j = &self.jobs[i];
        let end = j.arrival + result.completion;
        self.results[i] = Some(SharedResult {
            arrival: j.arrival,
            alone: j.alone,
            result,
            preempted: self.preempted[i],
            master_wait,
        });
        if end.is_finite() {
            self.stats.span = self.stats.span.max(end);
        }
        self.rm(SchedEvent::AppRemoved(AppId(i as u64)));
    }

    /// Hands the rm one event now and carries out what it decides.
    fn rm(&mut self, event: SchedEvent) {
        self.stats.rm_events += 1;
        let mut out = Vec::new();
        let now_ms = (self.now_us / 1000) as i64;
        self.sched.handle_at(now_ms, event, &mut out);
        for a in out {
            match a {
                Assignment::Allocate { app, priority, .. } if priority == MASTER_PRIORITY => {
                    let i = app.0 as usize;
                    // Held until the job answers (the rm frees it with the app).
                    if self.runs[i].is_none() && self.results[i].is_none() {
                        self.master_granted(i);
                    }
                }
                Assignment::Allocate {
                    app,
                    container,
                    node,
                    ..
                } => {
                    let i = app.0 as usize;
                    let local = self.local(i);
                    match self.runs.get_mut(i).and_then(Option::as_mut) {
                        Some(run) => {
                            self.asked[i].any = self.asked[i].any.saturating_sub(1);
                            if let Some(s) = run.shared.as_mut() {
                                s.granted.push_back((container.0, node.0));
                            }
                            run.granted_at(local);
                            self.dirty.push(i);
                        }
                        None => self.orphans.push((app, container.0)),
                    }
                }
                Assignment::Preempt { app, container } => {
                    let i = app.0 as usize;
                    let local = self.local(i);
                    if let Some(run) = self.runs.get_mut(i).and_then(Option::as_mut) {
                        self.preempted[i] += 1;
                        run.preempt(local, container.0);
                        self.dirty.push(i);
                    }
                }
                // Quotas show in the rm's API; no node is lost or rejoins here.
                Assignment::Quota { .. }
                | Assignment::Lost { .. }
                | Assignment::Recovered { .. } => {}
            }
        }
    }
}

fn task_ask(place: Place, count: u32) -> Ask {
    Ask {
        priority: TASK_PRIORITY,
        place,
        size: TASK,
        count,
        relax_locality: true,
    }
}

/// Seconds to whole µs (the engine's resolution), rounded up as the engine rounds events.
fn us(t: Seconds) -> u64 {
    (t.max(0.0) * 1e6).ceil() as u64
}

mod load_side;
mod report;
pub use report::{DayRow, SharedReport, SharedRow, markdown, rows, run_days};

#[cfg(test)]
mod tests;
