//! The master's state: the policy's job, the containers and attempts, and what every event
//! from the tasks and the rm does to them. Handlers hold the lock only to feed an event.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rand::SeedableRng as _;
use serde_json::{Value, json};
use tokio::sync::Notify;
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split};
use yard_appmaster::policy::{
    AttemptId, Container, ContainerId, Decision, Estimate, Event, JobSpec, Location, MapId,
    MapSpec, NodeId, PolicyConfig, PolicyKind, Profile, Profiler, Progress, RackId, RecoveredMap,
    ReduceId, Rng, RunObserver, TaskPolicy, TaskRef,
};
use yard_wire::protocol::{
    AllocateReply, Allocated, ContainerEnd, JobProgress, Resource, ResourceRequest,
};

use super::MAX_TASK_FAILURES;
use super::recovery::{KeptMap, Recovered};
use crate::{BlockRef, Done, Order, OutputRef, Outputs, Reply, TaskSpec, Work};

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// One map's input, as the master plans it.
#[derive(Debug, Clone)]
pub(super) struct MapInput {
    pub(super) split: Split,
    pub(super) block: Option<BlockRef>,
    /// Where its replicas live, for the policy and for locality asks.
    pub(super) at: Vec<Location>,
    pub(super) nodes: Vec<String>,
}

/// A container granted to the job.
pub(super) struct Held {
    pub(super) id: ContainerId,
    pub(super) node: String,
    pub(super) http: String,
    /// Its runner asked for work, and the policy was told of the container.
    pub(super) offered: bool,
    pub(super) released: bool,
    pub(super) orders: VecDeque<Order>,
}

/// An attempt the policy launched.
pub(super) struct Live {
    pub(super) task: TaskRef,
    pub(super) container: String,
    pub(super) ended: bool,
}

/// One run of a policy over a list of maps: the job proper, or the task sampler before it.
pub(super) struct Job {
    pub(super) phase: u32,
    pub(super) sampler: bool,
    pub(super) policy: Box<dyn TaskPolicy + Send>,
    pub(super) observer: RunObserver,
    pub(super) rng: Rng,
    pub(super) started: Instant,
    pub(super) deadline: f64,
    pub(super) maps: Vec<MapInput>,
    pub(super) population: Population,
    pub(super) launched: Vec<bool>,
    pub(super) want: u32,
    pub(super) attempts: HashMap<AttemptId, Live>,
    /// Every map output listed for the reducers, in the order they finished. A lost output's
    /// entry stays (reducers read the list by position); its re-run's output is listed anew.
    pub(super) outputs: Vec<OutputRef>,
    /// Each finished map's current output: its index in `outputs`. A lost output leaves.
    pub(super) output_at: HashMap<MapId, usize>,
    /// Reduces whose latest attempt has all its input (it reported `ready`) or finished: they
    /// need no map output any more.
    pub(super) inputs_in: HashSet<ReduceId>,
    pub(super) stats: Vec<(Split, MapStats)>,
    pub(super) partials: Vec<ReducePartial>,
    pub(super) keep: HashMap<ReduceId, u64>,
    /// Failed attempts per task: a runner's failure report, a container that ended under the
    /// attempt, or (for a map) a lost output. `MAX_TASK_FAILURES` of them fail the job.
    pub(super) failures: HashMap<TaskRef, u32>,
    /// Why the job cannot go on. Once set, the policy hears nothing more, no attempt starts
    /// and every task's report is answered with `kill`: the master is failing the job.
    pub(super) fatal: Option<String>,
    /// Maps an earlier master attempt finished, taken back at the start (never launched).
    pub(super) recovered: u32,
    /// Reduce attempts the deadline guard told to emit what they have (`CutReduce`).
    pub(super) cut: HashSet<AttemptId>,
    /// When the map phase closed, and the estimate then.
    pub(super) closed: Option<(f64, Option<Estimate>)>,
    /// The policy's latest `Reforecast` after the close (when, and the estimate): the one in
    /// force at the answer.
    pub(super) reforecast: Option<(f64, Estimate)>,
    pub(super) finished: Option<(Progress, f64)>,
    /// Each map's first output as it was listed: (seconds from the phase's start, its split's
    /// bytes), in finishing order: the input read over time.
    pub(super) read: Vec<(f64, u64)>,
    /// When the policy asked to hear `Event::Wake` (`Decision::WakeAt`), on `now()`'s clock.
    pub(super) wake_at: Option<f64>,
    /// The task sampler's map launches the job profiler (`observer`) hears only when their
    /// process starts, `warm_launch` earlier (`Phase::warm_launch`).
    pub(super) unstarted: HashMap<AttemptId, Decision>,
    pub(super) warm_launch: Option<f64>,
}

impl Job {
    pub(super) fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    pub(super) fn live(&self, a: AttemptId) -> Option<&Live> {
        self.attempts.get(&a).filter(|l| !l.ended)
    }

    /// No further map output will come: the map phase is closed, every map in `k` is done,
    /// and no map waits to run again (a failed one, or one whose output was lost).
    pub(super) fn outputs_complete(&self) -> bool {
        let p = self.policy.progress();
        self.closed.is_some()
            && p.maps_done >= p.k
            && p.restarts_waiting == 0
            && !self
                .attempts
                .values()
                .any(|l| !l.ended && matches!(l.task, TaskRef::Map(_)))
    }
}

pub(super) struct State {
    pub(super) url: String,
    pub(super) application: String,
    pub(super) app: AppSpec,
    pub(super) reduces: u32,
    pub(super) seed: u64,
    pub(super) capability: Resource,
    pub(super) job: Option<Job>,
    pub(super) phases: u32,
    pub(super) containers: HashMap<String, Held>,
    pub(super) by_id: HashMap<ContainerId, String>,
    pub(super) next_container: u64,
    pub(super) releases: Vec<String>,
    pub(super) locations: HashMap<String, Location>,
    /// Each node's rack, by name: rack asks name racks.
    pub(super) rack_of: HashMap<String, String>,
    /// Nodes that ran tasks: their shuffle data is deleted at the end.
    pub(super) used_nodes: BTreeSet<String>,
    /// When each container's last attempt ended (done or failed), until the next one starts.
    pub(super) freed_at: HashMap<String, Instant>,
    /// Seconds from a container becoming free to its next task process starting.
    pub(super) overheads: Vec<f64>,
    pub(super) stopping: bool,
    /// The policy was fed since the last long-poll look: waiters must look again.
    pub(super) fed: bool,
    /// The policy decided something since this was last cleared: a progress report that
    /// leaves it false changed nothing a waiter looks at (`umbilical::progress`).
    pub(super) decided: bool,
    /// This master's attempt (the rm's `APP_ATTEMPT`): part of every output name, so a
    /// re-run never writes over an output an earlier attempt left.
    pub(super) master_attempt: u32,
    /// Recovery entries for a next attempt, not yet sent to the rm (`recovery::send_kept`).
    pub(super) unsent: BTreeMap<String, Value>,
    /// The least time every map of a built-in app takes (`--map-min-seconds`).
    pub(super) map_min_seconds: f64,
    /// The progress the last allocate call sent the rm.
    pub(super) progress_sent: f64,
    /// Fault injection: the map of this split hangs (`--hang-split`).
    pub(super) hang_split: Option<u32>,
    /// At most this many task containers held at once (`--max-containers`): the asks never
    /// go past it, and a grant beyond it goes straight back.
    pub(super) max_containers: Option<u32>,
    /// The task containers the cluster could hold at once beside this master, from the rm's
    /// node list at the start (`task_slots`): the policy's allotment without
    /// `--max-containers`.
    pub(super) cluster_slots: Option<u32>,
    /// The most task containers held (not released) at once so far.
    pub(super) peak_containers: u32,
    /// The job kind's type: from the store, or typed by this run's probes (`typing.rs`).
    pub(super) typing: yard_appmaster::typing::Typing,
    /// What `GET /metrics` serves (`metrics.rs`).
    pub(super) metrics: super::metrics::MasterMetrics,
    /// This run's launches and grants, measured (`costs.rs`).
    pub(super) costs: super::costs::CostClock,
    /// Wakes the allocate loop at once: more containers are wanted, some go back, or the
    /// master stops (otherwise it calls the rm every `ALLOCATE_EVERY`).
    pub(super) call_rm: Arc<Notify>,
    /// Wakes `run_phase` when the policy finishes (else it would look only at its next tick).
    pub(super) phase_finished: Arc<Notify>,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Notify,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) fn attempt_name(phase: u32, a: AttemptId) -> String {
    format!("{phase}-{}", a.0)
}

/// One run of a policy: the task sampler or the job proper.
pub(super) struct Phase {
    pub(super) policy: PolicyKind,
    pub(super) maps: Vec<MapInput>,
    /// The whole job's input (the sampler's maps are a sample of it).
    pub(super) population: Population,
    pub(super) profile: Profile,
    /// Seconds from the phase's start.
    pub(super) deadline: f64,
    pub(super) sampler: bool,
    /// Maps of `maps` an earlier master attempt finished (the job proper only).
    pub(super) recovered: Vec<Recovered>,
    /// The deadline guard: it fires this many seconds before `deadline` (`None`: no guard).
    pub(super) guard: Option<f64>,
    /// How long before `deadline` the last reduces are cut (`PolicyConfig::answer_cost`):
    /// this cluster's measured cut p99 (`costs.rs`).
    pub(super) answer_cost: f64,
    /// The task sampler: a map is timed from its process's start plus this (the cluster's
    /// measured launch p50), not from the launch decision. Its maps are the first tasks in
    /// fresh containers, whose cold launches would inflate the profile's map time. `None`
    /// (no launch measured yet): from the launch decision, as every other run's maps.
    pub(super) warm_launch: Option<f64>,
}

impl State {
    /// A master's state before its first phase. A synthetic job has as many reduces as it
    /// has recorded reduce times; any other has `reduces` (at least one).
    pub(super) fn new(
        url: String,
        application: String,
        app: AppSpec,
        reduces: u32,
        seed: u64,
        capability: Resource,
        (locations, rack_of): (HashMap<String, Location>, HashMap<String, String>),
    ) -> State {
        let reduces = match &app {
            AppSpec::Synthetic { reduce_seconds, .. } => reduce_seconds.len() as u32,
            _ => reduces.max(1),
        };
        State {
            url,
            application,
            app,
            reduces,
            seed,
            capability,
            job: None,
            phases: 0,
            containers: HashMap::new(),
            by_id: HashMap::new(),
            next_container: 0,
            releases: Vec::new(),
            locations,
            rack_of,
            used_nodes: BTreeSet::new(),
            freed_at: HashMap::new(),
            overheads: Vec::new(),
            stopping: false,
            fed: false,
            decided: false,
            master_attempt: 1,
            unsent: BTreeMap::new(),
            map_min_seconds: 0.0,
            progress_sent: 0.0,
            hang_split: None,
            max_containers: None,
            cluster_slots: None,
            peak_containers: 0,
            typing: Default::default(),
            metrics: super::metrics::MasterMetrics::new(),
            costs: Default::default(),
            call_rm: Arc::new(Notify::new()),
            phase_finished: Arc::new(Notify::new()),
        }
    }

    /// What the policy is told it may hold at once: the smaller of `--max-containers` and the
    /// cluster's task slots; `None` when neither is known.
    pub(super) fn allotment(&self) -> Option<u32> {
        match (self.max_containers, self.cluster_slots) {
            (Some(cap), Some(slots)) => Some(cap.min(slots)),
            (cap, slots) => cap.or(slots),
        }
    }

    /// Starts a phase: a fresh policy gets `JobStarted`, and containers still held (granted
    /// after the last phase finished) are offered to it when their runners next ask.
    pub(super) fn start_phase(&mut self, phase: Phase) {
        let Phase {
            policy: kind,
            maps,
            population,
            profile,
            deadline,
            sampler,
            recovered,
            guard,
            answer_cost,
            warm_launch,
        } = phase;
        let spec = JobSpec {
            deadline,
            maps: maps
                .iter()
                .map(|m| MapSpec {
                    bytes: m.split.bytes,
                    replicas: m.at.clone(),
                })
                .collect(),
            reduces: self.reduces,
            profile,
            // The cap on containers held (`maxContainers`) is what the cluster promises at
            // most, and so are the task slots the cluster has beside this master: the
            // estimate runs the reduces in waves of the smaller (eq. 9), as the simulator's
            // policy is told its cluster's containers. `yard replay` sets the cap to the
            // cluster's.
            allotment: self.allotment(),
            recovered: recovered
                .iter()
                .map(|r| RecoveredMap {
                    map: r.map,
                    output_bytes: r.output_bytes,
                })
                .collect(),
        };
        self.phases += 1;
        let mut launched = vec![false; maps.len()];
        // An earlier attempt's outputs are listed for the reducers from the start.
        let (mut outputs, mut output_at, mut stats) = (Vec::new(), HashMap::new(), Vec::new());
        for r in &recovered {
            launched[r.map.0 as usize] = true;
            output_at.insert(r.map, outputs.len());
            outputs.push(r.output.clone());
            stats.extend(r.stats.clone().map(|st| (r.output.split, st)));
            self.used_nodes.insert(r.output.node.clone());
        }
        if !recovered.is_empty() {
            log_line(&format!(
                "recovered {} finished maps of an earlier attempt",
                recovered.len()
            ));
        }
        self.job = Some(Job {
            phase: self.phases,
            sampler,
            policy: kind.build(PolicyConfig {
                guarded: guard.is_some(),
                answer_cost,
                dart_extensions: Some(yard_appmaster::policy::Extensions::LIVE),
                ..PolicyConfig::default()
            }),
            observer: RunObserver::new(),
            rng: Rng::seed_from_u64(self.seed),
            started: Instant::now(),
            deadline,
            maps,
            population,
            launched,
            want: 0,
            attempts: HashMap::new(),
            outputs,
            output_at,
            inputs_in: HashSet::new(),
            stats,
            partials: Vec::new(),
            keep: HashMap::new(),
            failures: HashMap::new(),
            fatal: None,
            recovered: recovered.len() as u32,
            cut: HashSet::new(),
            closed: None,
            reforecast: None,
            finished: None,
            read: Vec::new(),
            wake_at: None,
            unstarted: HashMap::new(),
            warm_launch: warm_launch.filter(|w| w.is_finite() && *w >= 0.0),
        });
        self.costs.phase_started();
        if let Some(job) = &self.job {
            self.metrics.phase_started(job.policy.name());
        }
        self.feed(Event::JobStarted(spec));
        // Containers left over from an earlier phase are offered again.
        for held in self.containers.values_mut().filter(|h| !h.released) {
            held.offered = false;
        }
    }

    /// The current job's attempt named `name`, if it is of the current phase (and the job is
    /// not failing: then no attempt counts any more).
    pub(super) fn attempt(&self, name: &str) -> Option<AttemptId> {
        let (phase, a) = name.split_once('-')?;
        let job = self.job.as_ref().filter(|j| j.fatal.is_none())?;
        (phase.parse::<u32>().ok()? == job.phase).then_some(AttemptId(a.parse().ok()?))
    }

    /// Feeds the policy one event and carries out what it decides. Nothing once the job is
    /// failing: a restart the policy would approve must not run.
    pub(super) fn feed(&mut self, event: Event) {
        let Some(job) = self.job.as_mut().filter(|j| j.fatal.is_none()) else {
            return;
        };
        self.fed = true;
        let now = job.now();
        job.observer.event(now, &event);
        let mut out = Vec::new();
        job.policy.handle(now, event, &mut job.rng, &mut out);
        self.decided |= !out.is_empty();
        if let (true, Some(_)) = (job.sampler, job.warm_launch) {
            // The sampler's maps are timed from their process's start (`started`).
            let (maps, rest): (Vec<Decision>, Vec<Decision>) = out
                .iter()
                .cloned()
                .partition(|d| matches!(d, Decision::LaunchMap { .. }));
            for d in maps {
                if let Decision::LaunchMap { attempt, .. } = d {
                    job.unstarted.insert(attempt, d);
                }
            }
            job.observer.decisions(now, &rest);
        } else {
            job.observer.decisions(now, &out);
        }
        for decision in out {
            self.carry_out(decision, now);
        }
    }

    pub(super) fn carry_out(&mut self, decision: Decision, now: f64) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        self.metrics.decided(job.policy.name(), &decision);
        match decision {
            Decision::Want(n) => {
                job.want = n;
                let held = self
                    .containers
                    .values()
                    .filter(|h| h.offered && !h.released)
                    .count() as u32;
                if self.costs.wanted(n, held, Instant::now()) {
                    self.call_rm.notify_one();
                }
            }
            Decision::WakeAt(at) => job.wake_at = Some(at),
            Decision::LaunchMap {
                attempt,
                map,
                container,
                ..
            } => {
                let input = job.maps[map.0 as usize].clone();
                if job.attempts.len() < 6 {
                    // The first launches, for the log: when the maps began.
                    log_line(&format!("{now:.3} s: map {} launched", map.0));
                }
                job.launched[map.0 as usize] = true;
                let work = Work::Map {
                    split: input.split,
                    output: output_name(self.master_attempt, job.phase, input.split),
                    block: input.block,
                };
                self.launch(TaskRef::Map(map), attempt, container, work);
            }
            Decision::LaunchReduce {
                attempt,
                reduce,
                container,
            } => {
                log_line(&format!("{now:.3} s: reduce {} launched", reduce.0));
                job.inputs_in.remove(&reduce);
                let work = Work::Reduce {
                    reduce: reduce.0,
                    population: job.population,
                };
                self.launch(TaskRef::Reduce(reduce), attempt, container, work);
            }
            Decision::SampleReduceInput { reduce, keep_bytes } => {
                job.keep.insert(reduce, keep_bytes);
            }
            Decision::Release(c) => {
                if let Some(name) = self.by_id.remove(&c)
                    && let Some(held) = self.containers.get_mut(&name)
                {
                    held.released = true;
                    held.orders = VecDeque::from([Order::Exit]);
                    self.releases.push(name);
                    self.call_rm.notify_one();
                }
            }
            Decision::MarkLocalOnly(_) => {}
            Decision::CloseMapPhase { k, estimate } => {
                let p = job.policy.progress();
                // The policy's estimate now, by part (eq. 1): where the time left goes.
                let parts = job.policy.estimate(now).map_or("none".into(), |e| {
                    format!(
                        "maps end {:.3} s, shuffle {:.3} s, reduce {:.3} s",
                        e.map, e.shuffle, e.reduce
                    )
                });
                log_line(&format!(
                    "{now:.3} s: map phase closed at k = {k} of {} ({} done; {}), estimate {:.3} s ({parts}), deadline {:.3} s",
                    job.maps.len(),
                    p.maps_done,
                    match p.guarded {
                        true => "by the deadline guard",
                        false => "by the policy",
                    },
                    estimate.map_or(f64::NAN, |e| e.total),
                    job.deadline
                ));
                job.closed = Some((now, estimate));
            }
            Decision::Reforecast { k, estimate } => {
                log_line(&format!(
                    "{now:.3} s: k is now {k}: estimate {:.3} s (maps end {:.3} s, shuffle {:.3} s, reduce {:.3} s)",
                    estimate.total, estimate.map, estimate.shuffle, estimate.reduce
                ));
                job.reforecast = Some((now, estimate));
            }
            Decision::Kill(a) => {
                if let Some(live) = job.attempts.get_mut(&a) {
                    live.ended = true;
                }
            }
            Decision::CutReduce { attempt, reduce } => {
                log_line(&format!(
                    "{now:.3} s: the deadline guard cuts reduce {}: it answers from what it has",
                    reduce.0
                ));
                self.costs
                    .cut(attempt_name(job.phase, attempt), Instant::now());
                job.cut.insert(attempt);
            }
            Decision::Finish(progress) => {
                log_line(&format!(
                    "{now:.3} s: finished, {:.1} % of the input",
                    100.0 * progress.processed_fraction()
                ));
                job.finished = Some((progress, now));
                self.phase_finished.notify_one();
            }
        }
    }

    pub(super) fn launch(
        &mut self,
        task: TaskRef,
        attempt: AttemptId,
        container: ContainerId,
        work: Work,
    ) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        let Some(name) = self.by_id.get(&container) else {
            return;
        };
        let spec = TaskSpec {
            master: self.url.clone(),
            application: self.application.clone(),
            attempt: attempt_name(job.phase, attempt),
            app: self.app.clone(),
            reduces: self.reduces,
            seed: self.seed,
            map_min_seconds: self.map_min_seconds,
            hang: matches!(&work, Work::Map { split, .. } if Some(split.index) == self.hang_split),
            work,
        };
        self.costs
            .launched(attempt_name(job.phase, attempt), Instant::now());
        job.attempts.insert(
            attempt,
            Live {
                task,
                container: name.clone(),
                ended: false,
            },
        );
        if let Some(held) = self.containers.get_mut(name) {
            self.used_nodes.insert(held.http.clone());
            held.orders.push_back(Order::Run {
                task: Box::new(spec),
            });
        }
    }

    /// A runner asks for work: the first time, the policy hears of its container.
    pub(super) fn next_order(&mut self, container: &str) -> Option<Order> {
        let failing = self.job.as_ref().is_some_and(|j| j.fatal.is_some());
        let Some(held) = self.containers.get_mut(container) else {
            return Some(Order::Exit);
        };
        if held.released || failing {
            return Some(Order::Exit);
        }
        if !held.offered && self.job.is_some() {
            held.offered = true;
            let at = self.locations.get(&held.node).copied().unwrap_or(Location {
                node: NodeId(u32::MAX),
                rack: RackId(u32::MAX),
            });
            let id = held.id;
            if let Some(job) = self.job.as_ref().filter(|j| j.attempts.len() < 6) {
                // The first containers, for the log: when the maps could begin.
                log_line(&format!("{:.3} s: container {} offered", job.now(), id.0));
            }
            self.costs.granted(id, Instant::now());
            self.feed(Event::ContainerGranted(Container { id, at }));
        }
        self.containers.get_mut(container)?.orders.pop_front()
    }

    pub(super) fn progress(&mut self, name: &str, progress: f64) -> Reply {
        if let Some(attempt) = self.attempt(name)
            && self.job.as_ref().is_some_and(|j| j.live(attempt).is_some())
        {
            self.feed(Event::TaskProgress { attempt, progress });
        }
        self.standing(name)
    }

    /// What attempt `name` is to be told now, without feeding the policy (a long-poll asks
    /// again at every change): to stop (killed, or not of this job), to answer (cut), or
    /// nothing.
    pub(super) fn standing(&self, name: &str) -> Reply {
        match self.attempt(name) {
            Some(attempt) if self.job.as_ref().is_some_and(|j| j.live(attempt).is_some()) => {
                Reply {
                    cut: self.job.as_ref().is_some_and(|j| j.cut.contains(&attempt)),
                    ..Reply::default()
                }
            }
            _ => kill(),
        }
    }

    pub(super) fn done(&mut self, name: &str, done: Done) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(job) = self.job.as_mut() else {
            return kill();
        };
        let Some(live) = job.attempts.get_mut(&attempt).filter(|l| !l.ended) else {
            return kill();
        };
        live.ended = true;
        self.freed_at.insert(live.container.clone(), Instant::now());
        self.costs.reported(name, Instant::now());
        match live.task {
            TaskRef::Map(map) => {
                let node = self
                    .containers
                    .get(&live.container)
                    .map(|h| h.http.clone())
                    .unwrap_or_default();
                let input = &job.maps[map.0 as usize];
                let split = input.split;
                if !job.output_at.contains_key(&map) {
                    let output = OutputRef {
                        split,
                        node,
                        output: output_name(self.master_attempt, job.phase, split),
                    };
                    if !job.sampler {
                        let kept = KeptMap {
                            split: split.index,
                            bytes: split.bytes,
                            block: input.block.as_ref().map(|b| b.block.clone()),
                            output: Some(output.clone()),
                            output_bytes: done.output_bytes,
                            stats: done.stats.clone(),
                        };
                        self.unsent.insert(kept.key(), json!(kept));
                    }
                    job.output_at.insert(map, job.outputs.len());
                    job.outputs.push(output);
                    job.read
                        .push((job.started.elapsed().as_secs_f64(), split.bytes));
                    if let Some(stats) = done.stats {
                        job.stats.push((split, stats));
                    }
                }
            }
            TaskRef::Reduce(reduce) => {
                job.inputs_in.insert(reduce);
                job.partials.extend(done.partial)
            }
        }
        let task = live.task;
        if let Some(measured) = &done.measured {
            self.probe(task, measured);
        }
        self.feed(Event::TaskFinished {
            attempt,
            output_bytes: done.output_bytes,
        });
        Reply::default()
    }

    pub(super) fn failed(&mut self, name: &str, reason: &str) {
        let Some(attempt) = self.attempt(name) else {
            return;
        };
        let Some(live) = self
            .job
            .as_mut()
            .and_then(|j| j.attempts.get_mut(&attempt))
            .filter(|l| !l.ended)
        else {
            return;
        };
        live.ended = true;
        let task = live.task;
        self.freed_at.insert(live.container.clone(), Instant::now());
        log_line(&format!("attempt {name} failed: {reason}"));
        if self.count_failure(task, reason) {
            self.feed(Event::TaskFailed(attempt));
        }
    }

    /// Counts a failed attempt of `task` (Hadoop's `maxattempts`): at the
    /// `MAX_TASK_FAILURES`th the job fails, with this failure as its diagnostic, before the
    /// policy can restart the task again. Returns whether the job goes on.
    pub(super) fn count_failure(&mut self, task: TaskRef, reason: &str) -> bool {
        let Some(job) = self.job.as_mut().filter(|j| j.fatal.is_none()) else {
            return false;
        };
        let failures = job.failures.entry(task).or_default();
        *failures += 1;
        if *failures < MAX_TASK_FAILURES {
            return true;
        }
        let what = match task {
            TaskRef::Map(m) => {
                format!("map {} (split {})", m.0, job.maps[m.0 as usize].split.index)
            }
            TaskRef::Reduce(r) => format!("reduce {}", r.0),
        };
        let fatal = format!(
            "{what} failed {failures} times (the limit is {MAX_TASK_FAILURES}), the last: {reason} \
             (see the task's log in its container)"
        );
        log_line(&format!("the job fails: {fatal}"));
        job.fatal = Some(fatal);
        false
    }

    /// A finished map's output is gone (its node was lost, or a reducer could not fetch it
    /// from there): unless every reduce already has its input, it counts as a failure of the
    /// map, is no longer listed as current, and the policy hears `MapOutputLost` — it re-runs
    /// the map or drops it. Reducers are told the outputs are complete only once the re-run
    /// is done (or the map dropped). A map whose output is not the current one is ignored.
    pub(super) fn output_lost(&mut self, map: MapId, why: &str) {
        let reduces = self.reduces as usize;
        let Some(job) = self.job.as_mut() else {
            return;
        };
        let Some(&i) = job.output_at.get(&map) else {
            return;
        };
        if job.inputs_in.len() >= reduces {
            return; // no reduce needs it
        }
        job.output_at.remove(&map);
        let lost = job.outputs[i].clone();
        if !job.sampler {
            let input = &job.maps[map.0 as usize];
            let kept = KeptMap {
                split: lost.split.index,
                bytes: lost.split.bytes,
                block: input.block.as_ref().map(|b| b.block.clone()),
                output: None,
                output_bytes: 0,
                stats: None,
            };
            self.unsent.insert(kept.key(), json!(kept));
        }
        // Its map's statistics go with it; a re-run reports them again.
        job.stats
            .retain(|(split, _)| split.index != lost.split.index);
        log_line(&format!(
            "{:.3} s: the output of map {} at {} is lost ({why}); it runs again if the policy approves",
            job.now(),
            map.0,
            lost.node
        ));
        if self.count_failure(
            TaskRef::Map(map),
            &format!("its output at {} was lost: {why}", lost.node),
        ) {
            self.feed(Event::MapOutputLost(map));
        }
    }

    /// Every current map output on the nodemanager `node` (`http://host:port`) is lost.
    pub(super) fn node_lost(&mut self, node: &str, why: &str) {
        let Some(job) = self.job.as_ref() else {
            return;
        };
        let mut there: Vec<MapId> = job
            .output_at
            .iter()
            .filter(|&(_, &i)| job.outputs[i].node == node)
            .map(|(&m, _)| m)
            .collect();
        there.sort_unstable();
        for map in there {
            self.output_lost(map, why);
        }
    }

    /// A reducer could not fetch `output` from `node` (after its retries): Hadoop's
    /// fetch-failure notification. If that is the map's current output, it is lost; the
    /// reducer then waits for the re-run's output (or for the list to complete without it).
    pub(super) fn fetch_failed(
        &mut self,
        name: &str,
        output: &str,
        node: &str,
        reason: &str,
    ) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(job) = self.job.as_ref() else {
            return kill();
        };
        let Some(TaskRef::Reduce(reduce)) = job.live(attempt).map(|l| l.task) else {
            return kill();
        };
        let current = job
            .output_at
            .iter()
            .find(|&(_, &i)| job.outputs[i].output == output && job.outputs[i].node == node)
            .map(|(&m, _)| m);
        match current {
            Some(map) => self.output_lost(
                map,
                &format!("reduce {} could not fetch it: {reason}", reduce.0),
            ),
            None => log_line(&format!(
                "reduce {} could not fetch {output} from {node} ({reason}): not a current output, ignored",
                reduce.0
            )),
        }
        Reply::default()
    }

    /// A task process started: the scheduling overhead of its container, if it was freed by
    /// an earlier attempt (a fresh container's first task counts the runner's start instead).
    pub(super) fn started(&mut self, name: &str) -> Reply {
        let Some(container) = self
            .attempt(name)
            .and_then(|a| self.job.as_ref()?.live(a))
            .map(|l| l.container.clone())
        else {
            return kill();
        };
        if let Some(freed) = self.freed_at.remove(&container) {
            self.overheads.push(freed.elapsed().as_secs_f64());
        }
        self.costs.started(name, Instant::now());
        let attempt = self.attempt(name);
        if let Some(job) = self.job.as_mut()
            && let Some(launch) = attempt.and_then(|a| job.unstarted.remove(&a))
        {
            // Only differences of the observer's times count: before the phase's start is fine.
            let at = job.now() - job.warm_launch.unwrap_or(0.0);
            job.observer.decisions(at, &[launch]);
        }
        Reply::default()
    }

    pub(super) fn outputs(&self, name: &str, from: usize) -> Option<Outputs> {
        let attempt = self.attempt(name);
        let job = self.job.as_ref()?;
        if attempt.and_then(|a| job.live(a)).is_none() {
            return Some(Outputs {
                outputs: Vec::new(),
                complete: true,
                kill: true,
            });
        }
        let complete = job.outputs_complete();
        let new = job.outputs.get(from..).unwrap_or_default();
        (complete || !new.is_empty()).then(|| Outputs {
            outputs: new.to_vec(),
            complete,
            kill: false,
        })
    }

    /// A reduce fetched `bytes` of map output, in `seconds` when it timed them (the profile's
    /// bandwidth: `RunObserver::fetched`).
    pub(super) fn shuffled(&mut self, name: &str, bytes: u64, seconds: Option<f64>) -> Reply {
        match self.attempt(name) {
            Some(a) if self.job.as_ref().is_some_and(|j| j.live(a).is_some()) => {
                if let (Some(seconds), Some(job)) = (seconds, self.job.as_mut()) {
                    job.observer.fetched(bytes, seconds);
                }
                self.feed(Event::ShuffleBytes(bytes));
                self.metrics.shuffled(bytes);
                Reply::default()
            }
            _ => kill(),
        }
    }

    pub(super) fn ready(&mut self, name: &str, bytes: u64) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(TaskRef::Reduce(reduce)) = self
            .job
            .as_ref()
            .and_then(|j| j.live(attempt))
            .map(|l| l.task)
        else {
            return kill();
        };
        self.feed(Event::ReduceInputReady { reduce, bytes });
        let Some(job) = self.job.as_mut() else {
            return kill();
        };
        job.inputs_in.insert(reduce);
        let keep = if job.sampler {
            // The task sampler's reduces take geometric shares of their input, so that
            // f(d) = a·d^b can be fitted (Dart §5.1, eq. 9).
            let sizes = Profiler::sample_sizes(bytes as f64, self.reduces.max(1) as usize);
            let keep = sizes[reduce.0 as usize % sizes.len()].round() as u64;
            let now = job.now();
            job.observer.decisions(
                now,
                &[Decision::SampleReduceInput {
                    reduce,
                    keep_bytes: keep,
                }],
            );
            keep
        } else {
            job.keep.remove(&reduce).unwrap_or(bytes)
        };
        log_line(&format!(
            "{:.3} s: reduce {} has {bytes} bytes, keeps {keep}",
            job.now(),
            reduce.0
        ));
        Reply {
            keep_bytes: Some(keep),
            cut: job.cut.contains(&attempt),
            ..Reply::default()
        }
    }

    /// The rm's reply: new containers (their runners are started by the caller), and ended
    /// ones: a container the policy held ends with whatever ran in it, and that attempt counts
    /// as failed. A container that ended `LOST` means its node is gone, and with it the map
    /// outputs there: they are re-run where a reduce still needs them.
    pub(super) fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
        let mut lost_nodes = BTreeSet::new();
        for status in reply.completed {
            let Some(held) = self.containers.remove(&status.container_id) else {
                continue;
            };
            self.by_id.remove(&held.id);
            if status.end == ContainerEnd::Lost {
                lost_nodes.insert(held.http.clone());
            }
            if !held.released && held.offered {
                // The attempt in it went with it (the policy contract): its reports count no more.
                let mut ended = Vec::new();
                if let Some(job) = self.job.as_mut() {
                    for live in job.attempts.values_mut() {
                        if live.container == status.container_id && !live.ended {
                            live.ended = true;
                            ended.push(live.task);
                        }
                    }
                }
                let reason = match status.exit_code {
                    Some(code) => format!(
                        "its container {} ended ({:?}, exit code {code})",
                        status.container_id, status.end
                    ),
                    None => format!(
                        "its container {} ended ({:?})",
                        status.container_id, status.end
                    ),
                };
                let mut going = true;
                for task in ended {
                    log_line(&format!("{task:?}: {reason}"));
                    // A preemption is the cluster's choice, not the task's failure (YARN does
                    // not count it toward the attempt limit either): it runs again.
                    if status.end != ContainerEnd::Preempted {
                        going &= self.count_failure(task, &reason);
                    }
                }
                if going {
                    self.feed(Event::ContainerLost(held.id));
                }
            }
        }
        for node in lost_nodes {
            self.node_lost(&node, "its node was lost");
        }
        let mut fresh = reply.allocated;
        // The cap: a grant beyond it (asks cross grants in flight) goes back unused.
        if let Some(cap) = self.max_containers {
            let held = self.held_containers() as usize;
            let room = (cap as usize).saturating_sub(held);
            if fresh.len() > room {
                for extra in fresh.split_off(room) {
                    log_line(&format!(
                        "container {} goes back: {cap} task containers at most (maxContainers)",
                        extra.container_id
                    ));
                    self.releases.push(extra.container_id);
                }
            }
        }
        for c in &fresh {
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.by_id.insert(id, c.container_id.clone());
            self.containers.insert(
                c.container_id.clone(),
                Held {
                    id,
                    node: c.node_id.clone(),
                    http: c.node_http_address.clone(),
                    offered: false,
                    released: false,
                    orders: VecDeque::new(),
                },
            );
        }
        self.peak_containers = self.peak_containers.max(self.held_containers());
        fresh
    }

    /// Task containers held and not released.
    pub(super) fn held_containers(&self) -> u32 {
        self.containers.values().filter(|h| !h.released).count() as u32
    }

    /// A container that could not start goes back.
    pub(super) fn start_failed(&mut self, container: &str) {
        if let Some(held) = self.containers.remove(container) {
            self.by_id.remove(&held.id);
            self.releases.push(container.to_owned());
        }
    }

    /// The progress an allocate call reports: the job proper's maps done over its maps (the
    /// task sampler's are not the job's); between phases and after the job, what was last
    /// sent, 1 once stopping (it read 0 from the job's end to the stop).
    pub(super) fn progress_for_rm(&mut self) -> f64 {
        let progress = match self.job.as_ref() {
            Some(j) if !j.sampler => {
                let p = j.policy.progress();
                f64::from(p.maps_done) / f64::from(p.maps.max(1))
            }
            _ if self.stopping => 1.0,
            _ => self.progress_sent,
        };
        self.progress_sent = progress.clamp(0.0, 1.0);
        self.progress_sent
    }

    /// YARN's asks: `*` for every container wanted and not held, and node and rack asks for
    /// where unlaunched maps' replicas are (a grant there makes a node-local map possible).
    pub(super) fn asks(&self) -> Vec<ResourceRequest> {
        let want = self.job.as_ref().map_or(0, |j| j.want);
        let want = self.max_containers.map_or(want, |cap| want.min(cap));
        let held = self.held_containers();
        let outstanding = want.saturating_sub(held);
        // Each unlaunched map counts once at every node and every rack holding its block.
        let mut nodes: BTreeMap<String, u32> = BTreeMap::new();
        let mut racks: BTreeMap<String, u32> = BTreeMap::new();
        if let Some(job) = self.job.as_ref().filter(|j| j.closed.is_none()) {
            for (m, input) in job.maps.iter().enumerate() {
                if job.launched[m] {
                    continue;
                }
                let mut its_racks = BTreeSet::new();
                for node in &input.nodes {
                    *nodes.entry(node.clone()).or_default() += 1;
                    its_racks.extend(self.rack_of.get(node));
                }
                for rack in its_racks {
                    *racks.entry(rack.clone()).or_default() += 1;
                }
            }
        }
        let ask = |resource_name: String, n: u32| ResourceRequest {
            priority: 1,
            resource_name,
            capability: self.capability,
            num_containers: n.min(outstanding),
            relax_locality: true,
        };
        let mut asks: Vec<ResourceRequest> = nodes
            .into_iter()
            .chain(racks)
            .map(|(name, n)| ask(name, n))
            .collect();
        asks.push(ask("*".into(), outstanding));
        asks
    }

    /// How far the job is, for the rm (sent with every allocate).
    pub(super) fn job_progress(&self) -> Option<JobProgress> {
        let job = self.job.as_ref()?;
        let now = job.now();
        let p = job.policy.progress();
        Some(JobProgress {
            phase: if job.sampler { "sampling" } else { "running" }.into(),
            policy: job.policy.name().into(),
            maps: p.maps,
            maps_launched: job.launched.iter().filter(|l| **l).count() as u32,
            maps_done: p.maps_done,
            k: p.k,
            map_phase_closed: p.map_phase_closed,
            reduces: p.reduces,
            reduces_done: p.reduces_done,
            processed_bytes: p.processed_bytes,
            input_bytes: p.input_bytes,
            guarded: p.guarded,
            elapsed_seconds: now.max(0.0),
            estimate_seconds: job
                .policy
                .estimate(now)
                .map(|e| e.total)
                .filter(|e| e.is_finite() && *e >= 0.0),
        })
    }

    /// The master's own status page (its tracking URL): the job's progress, its deadline and
    /// what the master holds.
    pub(super) fn status(&self) -> Value {
        let (Some(job), Some(progress)) = (&self.job, self.job_progress()) else {
            return json!({ "phase": "starting" });
        };
        let mut status = json!(progress);
        status["deadline"] = json!(job.deadline);
        status["containers"] = json!(self.containers.values().filter(|h| !h.released).count());
        status["jobType"] = json!(self.typing.known().describe());
        status
    }
}

/// The directory a map's partitions go to, under its container's shuffle directory: unique
/// per master attempt, phase and split.
pub(super) fn output_name(master_attempt: u32, phase: u32, split: Split) -> String {
    format!("{master_attempt}.{phase}-{}", split.index)
}

pub(super) fn kill() -> Reply {
    Reply {
        kill: true,
        ..Reply::default()
    }
}

/// One line of the master's log: its container's stderr, which the nodemanager keeps.
pub(super) fn log_line(line: &str) {
    eprintln!("master: {line}");
}

#[cfg(test)]
pub(super) mod tests {
    use yard_appmaster::policy::PowerLaw;
    use yard_wire::protocol::{ContainerStatus, JobType, TaskBound};
    use yard_wire::token::ContainerToken;

    use super::super::recovery::recoverable;
    use super::super::typing::job_type_json;
    use super::*;

    /// Three nodes in two racks; three maps, each on two of them.
    /// A profile of 1 s maps, 10-byte partitions and a linear reduce of 1 ms per byte.
    fn test_profile() -> Profile {
        Profile {
            map_local: 1.0,
            map_remote: 1.0,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 10.0,
            shuffle_bandwidth: 1e6,
            reduce_time: PowerLaw {
                a: 1e-3,
                b: 1.0,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        }
    }

    pub(in crate::master) fn state() -> State {
        state_recovering(|_| Vec::new())
    }

    /// [`state`] for a master attempt that takes back `recovered(maps)`.
    fn state_recovering(recovered: impl FnOnce(&[MapInput]) -> Vec<Recovered>) -> State {
        let nodes = [("a:1", 0, "r1"), ("b:1", 1, "r1"), ("c:1", 2, "r2")];
        let locations = nodes
            .iter()
            .map(|(n, i, r)| {
                let rack = RackId(u32::from(*r == "r2"));
                (
                    n.to_string(),
                    Location {
                        node: NodeId(*i),
                        rack,
                    },
                )
            })
            .collect();
        let racks = nodes
            .iter()
            .map(|(n, _, r)| (n.to_string(), r.to_string()))
            .collect();
        let app = AppSpec::parse("wordcount", &[]).unwrap();
        let capability = Resource {
            memory_mb: 256,
            vcores: 1,
        };
        let mut s = State::new(
            "http://m".into(),
            "application_1_0001".into(),
            app,
            1,
            7,
            capability,
            (locations, racks),
        );
        let on = |names: &[&str], s: &State| MapInput {
            split: Split {
                index: 0,
                bytes: 100,
            },
            block: None,
            at: names.iter().map(|n| s.locations[*n]).collect(),
            nodes: names.iter().map(|n| n.to_string()).collect(),
        };
        let mut maps = vec![
            on(&["a:1", "b:1"], &s),
            on(&["b:1", "c:1"], &s),
            on(&["a:1", "c:1"], &s),
        ];
        for (i, m) in maps.iter_mut().enumerate() {
            m.split.index = i as u32;
        }
        let recovered = recovered(&maps);
        s.start_phase(Phase {
            policy: PolicyKind::Full,
            maps,
            population: Population {
                maps: 3,
                bytes: 300,
            },
            profile: test_profile(),
            deadline: 100.0,
            sampler: false,
            recovered,
            guard: None,
            answer_cost: 0.25,
            warm_launch: None,
        });
        s
    }

    pub(in crate::master) fn granted(id: &str, node: &str) -> Allocated {
        Allocated {
            container_id: id.into(),
            node_id: node.into(),
            node_http_address: format!("http://{node}"),
            resource: Resource {
                memory_mb: 256,
                vcores: 1,
            },
            priority: 1,
            token: ContainerToken {
                container_id: id.into(),
                node_id: node.into(),
                memory_mb: 256,
                vcores: 1,
                expires_ms: 0,
                signature: String::new(),
            },
        }
    }

    fn counts(asks: &[ResourceRequest]) -> BTreeMap<String, u32> {
        asks.iter()
            .map(|a| (a.resource_name.clone(), a.num_containers))
            .collect()
    }

    #[test]
    fn asks_name_every_node_and_rack_holding_an_unlaunched_map() {
        let s = state();
        let want = s.job.as_ref().unwrap().want;
        assert!(want >= 3, "full wants a container per map: {want}");
        let asks = counts(&s.asks());
        assert_eq!(asks["*"], want);
        assert_eq!((asks["a:1"], asks["b:1"], asks["c:1"]), (2, 2, 2));
        // A map on a and b counts once for r1.
        assert_eq!((asks["r1"], asks["r2"]), (3, 2));
    }

    #[test]
    fn the_policy_is_told_the_container_cap_or_the_clusters_task_slots_as_its_allotment() {
        // ARIA sizes its want by the allotment (`min(N, allotment)`): told the cap or the
        // cluster's task slots, it wants no more than the fewer; untold, what its deadline
        // needs.
        let want = |cap: Option<u32>, slots: Option<u32>| {
            let mut s = state();
            s.max_containers = cap;
            s.cluster_slots = slots;
            let job = s.job.as_ref().unwrap();
            let phase = Phase {
                policy: PolicyKind::Aria,
                maps: job.maps.clone(),
                population: job.population,
                profile: test_profile(),
                // Three maps of a second by 1.5 s: a container each.
                deadline: 1.5,
                sampler: false,
                recovered: Vec::new(),
                guard: None,
                answer_cost: 0.25,
                warm_launch: None,
            };
            s.start_phase(phase);
            s.job.as_ref().unwrap().want
        };
        assert!(want(None, None) > 1, "{}", want(None, None));
        assert_eq!(want(Some(1), None), 1);
        // No cap: the cluster's one task slot (the demo at scale) is the allotment.
        assert_eq!(want(None, Some(1)), 1);
        assert_eq!(want(Some(1), Some(5)), 1);
        assert_eq!(want(Some(4), Some(2)), 2);
    }

    #[test]
    fn max_containers_caps_the_asks_and_sends_an_over_grant_back() {
        let mut s = state();
        s.max_containers = Some(2);
        assert!(s.job.as_ref().unwrap().want > 2);
        let asks = counts(&s.asks());
        assert!(asks.values().all(|&n| n <= 2), "{asks:?}");
        assert_eq!(asks["*"], 2);
        // Three granted (asks crossed grants in flight): the third goes straight back.
        let fresh = s.allocated(AllocateReply {
            allocated: vec![
                granted("c1", "a:1"),
                granted("c2", "b:1"),
                granted("c3", "c:1"),
            ],
            completed: Vec::new(),
        });
        let ids: Vec<&str> = fresh.iter().map(|c| c.container_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2"]);
        assert_eq!(s.releases, ["c3"]);
        assert_eq!((s.held_containers(), s.peak_containers), (2, 2));
        assert_eq!(counts(&s.asks())["*"], 0, "nothing more while 2 are held");
    }

    #[test]
    fn a_runner_gets_a_local_map_then_its_output_is_listed_for_the_reducers() {
        let mut s = state();
        let fresh = s.allocated(AllocateReply {
            allocated: vec![granted("c1", "c:1")],
            completed: Vec::new(),
        });
        assert_eq!(fresh.len(), 1);
        // The policy hears of the container only when its runner asks: then a map runs there.
        let Some(Order::Run { task }) = s.next_order("c1") else {
            panic!("a task for the runner");
        };
        let Work::Map { split, output, .. } = &task.work else {
            panic!("a map first");
        };
        assert!(
            matches!(split.index, 1 | 2),
            "a map with a replica on c: {split:?}"
        );
        assert!(
            s.asks()
                .iter()
                .all(|a| a.resource_name != "c:1" || a.num_containers == 1)
        );
        assert_eq!(
            s.outputs(&task.attempt, 0).map(|o| o.outputs.len()),
            None,
            "nothing yet"
        );
        assert!(!s.started(&task.attempt).kill);
        let done = done(30);
        assert!(!s.done(&task.attempt, done.clone()).kill);
        // A second report of the same attempt is told to stop, and counts nothing.
        assert!(s.done(&task.attempt, done).kill);
        let job = s.job.as_ref().unwrap();
        assert_eq!(job.outputs.len(), 1);
        assert_eq!(job.outputs[0].node, "http://c:1");
        assert_eq!(&job.outputs[0].output, output);
        assert_eq!(job.policy.progress().maps_done, 1);
    }

    #[test]
    fn the_task_samplers_maps_are_timed_from_their_process_start_plus_a_warm_launch() {
        let done = done(30);
        // A cold launch takes longer than this whole test: a map timed from its launch
        // decision would take less than `WARM`, one timed from its start `WARM` and more.
        const WARM: f64 = 1000.0;
        // A cluster that has measured no launch: the sampler's maps are timed from their
        // launch decision, as every other run's.
        for (sampler, warm) in [(false, Some(WARM)), (true, Some(WARM)), (true, None)] {
            let from_start = sampler && warm.is_some();
            let mut s = state();
            let job = s.job.as_mut().unwrap();
            job.sampler = sampler;
            job.warm_launch = warm;
            s.allocated(AllocateReply {
                allocated: vec![granted("c1", "c:1")],
                completed: Vec::new(),
            });
            let Some(Order::Run { task }) = s.next_order("c1") else {
                panic!("a task for the runner");
            };
            let job = s.job.as_ref().unwrap();
            assert_eq!(job.unstarted.len(), usize::from(from_start));
            assert!(!s.started(&task.attempt).kill);
            assert!(s.job.as_ref().unwrap().unstarted.is_empty());
            assert!(!s.done(&task.attempt, done.clone()).kill);
            let took = s.job.as_ref().unwrap().observer.record().map_local;
            let took = took.expect("a node-local map was timed");
            match from_start {
                true => assert!((WARM..WARM + 60.0).contains(&took), "{took}"),
                false => assert!(took < WARM, "{took}"),
            }
        }
    }

    /// The entries attempt 1 would have kept at the rm, as the rm hands them back.
    fn kept_entries(s: &State) -> serde_json::Map<String, Value> {
        s.unsent
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    #[test]
    fn a_second_master_attempt_lists_the_first_ones_outputs_and_runs_only_the_other_maps() {
        let mut first = state();
        first.allocated(AllocateReply {
            allocated: vec![granted("c1", "c:1")],
            completed: Vec::new(),
        });
        let Some(Order::Run { task }) = first.next_order("c1") else {
            panic!("a task for the runner");
        };
        let Work::Map { split, output, .. } = task.work.clone() else {
            panic!("a map first");
        };
        assert_eq!(
            output,
            format!("1.1-{}", split.index),
            "named for attempt and phase"
        );
        assert!(
            kept_entries(&first).is_empty(),
            "nothing to keep before a map is done"
        );
        assert!(!first.done(&task.attempt, done(30)).kill);
        let kept = kept_entries(&first);
        assert_eq!(kept.len(), 1, "{kept:?}");

        // The master dies; its next attempt starts from what the rm kept.
        let mut second = state_recovering(|maps| recoverable(&kept, maps));
        second.master_attempt = 2;
        let job = second.job.as_ref().unwrap();
        assert_eq!(job.recovered, 1);
        assert_eq!(
            (
                job.outputs.len(),
                job.outputs[0].node.as_str(),
                job.outputs[0].output.as_str()
            ),
            (1, "http://c:1", output.as_str()),
            "listed for the reducers from the start"
        );
        let p = job.policy.progress();
        assert_eq!((p.k, p.maps_done), (1, 1));
        // Containers on every node: only the two other maps run, under new output names.
        second.allocated(AllocateReply {
            allocated: vec![
                granted("d1", "a:1"),
                granted("d2", "b:1"),
                granted("d3", "c:1"),
            ],
            completed: Vec::new(),
        });
        let mut ran = Vec::new();
        for c in ["d1", "d2", "d3"] {
            if let Some(Order::Run { task }) = second.next_order(c)
                && let Work::Map { split, output, .. } = &task.work
            {
                assert!(output.starts_with("2."), "{output}");
                ran.push(split.index);
            }
        }
        ran.sort_unstable();
        let mut others: Vec<u32> = (0..3).filter(|&i| i != split.index).collect();
        others.sort_unstable();
        assert_eq!(ran, others);
    }

    #[test]
    fn a_lost_output_is_kept_as_lost_so_a_next_attempt_runs_its_map_again() {
        let mut s = state();
        let task = granted_task(&mut s, "c1", "c:1");
        assert!(!s.done(&task.attempt, done(30)).kill);
        s.node_lost("http://c:1", "its node was lost");
        let kept = kept_entries(&s);
        assert_eq!(kept.len(), 1, "the same key, now saying lost: {kept:?}");
        let back = state_recovering(|maps| recoverable(&kept, maps));
        assert_eq!(back.job.as_ref().unwrap().recovered, 0);
    }

    #[test]
    fn a_container_that_ends_under_a_task_is_lost_to_the_policy() {
        let mut s = state();
        let task = granted_task(&mut s, "c1", "a:1");
        s.allocated(AllocateReply {
            allocated: Vec::new(),
            completed: vec![ContainerStatus {
                container_id: "c1".into(),
                end: yard_wire::protocol::ContainerEnd::Lost,
                exit_code: None,
            }],
        });
        // The attempt went with it: its reports are refused, and the map waits for another
        // container.
        assert!(s.progress(&task.attempt, 0.5).kill);
        assert!(s.containers.is_empty());
        assert_eq!(s.job.as_ref().unwrap().policy.progress().maps_done, 0);
        assert!(counts(&s.asks())["*"] >= 3);
    }

    /// Container `id` on `node` granted to `s`, and the task its runner is given first.
    pub(in crate::master) fn granted_task(s: &mut State, id: &str, node: &str) -> Box<TaskSpec> {
        s.allocated(AllocateReply {
            allocated: vec![granted(id, node)],
            completed: Vec::new(),
        });
        run_order(s.next_order(id))
    }

    fn run_order(order: Option<Order>) -> Box<TaskSpec> {
        match order {
            Some(Order::Run { task }) => task,
            other => panic!("a task to run: {other:?}"),
        }
    }

    fn done(bytes: u64) -> Done {
        Done {
            output_bytes: bytes,
            stats: None,
            partial: None,
            riders: Vec::new(),
            measured: None,
        }
    }

    pub(in crate::master) fn ended(
        container: &str,
        end: ContainerEnd,
        exit_code: Option<i32>,
    ) -> AllocateReply {
        AllocateReply {
            allocated: Vec::new(),
            completed: vec![ContainerStatus {
                container_id: container.into(),
                end,
                exit_code,
            }],
        }
    }

    #[test]
    fn the_progress_sent_to_the_rm_never_goes_back_when_the_job_ends() {
        let mut s = state();
        assert_eq!(s.progress_for_rm(), 0.0);
        s.allocated(AllocateReply {
            allocated: vec![granted("c1", "a:1")],
            completed: Vec::new(),
        });
        for i in 1..=3u32 {
            let task = run_order(s.next_order("c1"));
            assert!(matches!(task.work, Work::Map { .. }), "map {i}");
            s.done(&task.attempt, done(10));
            assert_eq!(s.progress_for_rm(), f64::from(i) / 3.0);
        }
        // `run_phase` takes the finished job: until the master stops, the rm still hears 1.
        s.job = None;
        assert_eq!(s.progress_for_rm(), 1.0);
    }

    #[test]
    fn a_task_that_failed_four_times_is_not_run_again_and_fails_the_job_at_once() {
        // Testers saw tasks fail 13–32 times: the cap was noticed only at the next tick, and
        // meanwhile the policy restarted the task, which failed again within milliseconds.
        let mut s = state();
        s.allocated(AllocateReply {
            allocated: vec![granted("c1", "a:1")],
            completed: Vec::new(),
        });
        let mut order = s.next_order("c1");
        let mut map = None;
        for _ in 0..MAX_TASK_FAILURES {
            let task = run_order(order);
            let Work::Map { split, .. } = task.work else {
                panic!("a map");
            };
            assert!(map.is_none_or(|m| m == split.index), "the same map again");
            map = Some(split.index);
            s.failed(&task.attempt, "exit code 1");
            order = s.next_order("c1");
        }
        assert!(
            matches!(order, Some(Order::Exit)),
            "no fifth attempt: {order:?}"
        );
        let job = s.job.as_ref().unwrap();
        let fatal = job.fatal.clone().expect("the job fails");
        assert!(fatal.contains("failed 4 times"), "{fatal}");
        assert!(fatal.contains("exit code 1"), "{fatal}");
        assert_eq!(
            job.failures.values().copied().max(),
            Some(MAX_TASK_FAILURES)
        );
    }

    #[test]
    fn preempted_attempts_run_again_without_counting_toward_the_limit() {
        let mut s = state();
        for round in 0..6 {
            let c = format!("p{round}");
            s.allocated(AllocateReply {
                allocated: vec![granted(&c, "a:1")],
                completed: Vec::new(),
            });
            let Some(Order::Run { .. }) = s.next_order(&c) else {
                panic!("round {round}: a task for the runner");
            };
            s.allocated(ended(&c, ContainerEnd::Preempted, None));
            let job = s.job.as_ref().unwrap();
            assert!(job.fatal.is_none(), "round {round}: {:?}", job.fatal);
            assert!(job.failures.is_empty(), "round {round}: {:?}", job.failures);
        }
    }

    #[test]
    fn attempts_lost_with_their_containers_count_toward_the_limit() {
        let mut s = state();
        let mut maps = BTreeSet::new();
        for i in 0..MAX_TASK_FAILURES {
            let c = format!("c{i}");
            assert!(s.job.as_ref().unwrap().fatal.is_none());
            s.allocated(AllocateReply {
                allocated: vec![granted(&c, "a:1")],
                completed: Vec::new(),
            });
            let task = run_order(s.next_order(&c));
            let Work::Map { split, .. } = task.work else {
                panic!("a map");
            };
            maps.insert(split.index);
            // The container dies under the attempt (the nodemanager killed it, say).
            s.allocated(ended(&c, ContainerEnd::Exited, Some(137)));
        }
        assert_eq!(maps.len(), 1, "the lost map restarts first: {maps:?}");
        let fatal = s
            .job
            .as_ref()
            .unwrap()
            .fatal
            .clone()
            .expect("the job fails");
        assert!(fatal.contains("failed 4 times"), "{fatal}");
        assert!(fatal.contains("exit code 137"), "{fatal}");
    }

    /// Runs the three maps, one per node (map 0 on a, 1 on b, 2 on c), to their end: the
    /// reduce then runs on a's container, b's and c's are handed back. Returns the reduce's
    /// attempt name.
    fn maps_done(s: &mut State) -> String {
        s.allocated(AllocateReply {
            allocated: vec![
                granted("c1", "a:1"),
                granted("c2", "b:1"),
                granted("c3", "c:1"),
            ],
            completed: Vec::new(),
        });
        let tasks: Vec<_> = ["c1", "c2", "c3"]
            .iter()
            .map(|c| run_order(s.next_order(c)))
            .collect();
        for task in &tasks {
            assert!(!s.done(&task.attempt, done(30)).kill);
        }
        let job = s.job.as_ref().unwrap();
        let at: Vec<_> = job
            .outputs
            .iter()
            .map(|o| (o.split.index, o.node.as_str()))
            .collect();
        assert_eq!(
            at,
            [(0, "http://a:1"), (1, "http://b:1"), (2, "http://c:1")]
        );
        let reduce = run_order(s.next_order("c1"));
        assert!(matches!(reduce.work, Work::Reduce { .. }));
        assert!(s.outputs(&reduce.attempt, 0).unwrap().complete);
        reduce.attempt
    }

    fn rerun_until_complete(s: &mut State, reduce: &str, container: &str, node: &str) -> u32 {
        s.allocated(AllocateReply {
            allocated: vec![granted(container, node)],
            completed: Vec::new(),
        });
        let task = run_order(s.next_order(container));
        let Work::Map { split, .. } = task.work else {
            panic!("the lost map runs again");
        };
        assert!(
            s.outputs(reduce, 3).is_none(),
            "nothing listed before the re-run is done"
        );
        assert!(!s.done(&task.attempt, done(30)).kill);
        let listed = s.outputs(reduce, 3).expect("the re-run's output");
        assert!(listed.complete);
        assert_eq!(listed.outputs.len(), 1);
        assert_eq!(listed.outputs[0].split.index, split.index);
        assert_eq!(listed.outputs[0].node, format!("http://{node}"));
        split.index
    }

    #[test]
    fn a_lost_node_reruns_exactly_the_finished_maps_whose_outputs_were_there() {
        let mut s = state();
        let reduce = maps_done(&mut s);
        // Node b is lost: the rm completes its container (handed back, not yet ended) LOST.
        s.allocated(ended("c2", ContainerEnd::Lost, None));
        let job = s.job.as_ref().unwrap();
        let p = job.policy.progress();
        assert_eq!((p.k, p.maps_done, p.restarts_waiting), (2, 2, 1));
        let mut current: Vec<_> = job.output_at.keys().map(|m| m.0).collect();
        current.sort_unstable();
        assert_eq!(current, [0, 2]);
        // The reducer is not told the outputs are complete: the lost one is still to come.
        let listed = s.outputs(&reduce, 0).unwrap();
        assert!(!listed.complete);
        assert!(counts(&s.asks())["*"] >= 1, "a container for the re-run");
        assert_eq!(rerun_until_complete(&mut s, &reduce, "c4", "c:1"), 1);
        let p = s.job.as_ref().unwrap().policy.progress();
        assert_eq!((p.k, p.maps_done, p.restarts_waiting), (3, 3, 0));
    }

    #[test]
    fn a_reducer_that_cannot_fetch_an_output_has_its_map_run_again() {
        let mut s = state();
        let reduce = maps_done(&mut s);
        let refused = "connection refused";
        assert!(!s.fetch_failed(&reduce, "1.1-2", "http://c:1", refused).kill);
        let job = s.job.as_ref().unwrap();
        assert_eq!(job.policy.progress().restarts_waiting, 1);
        assert_eq!(job.failures[&TaskRef::Map(MapId(2))], 1);
        // The same report again (another fetch of the stale entry) changes nothing.
        assert!(!s.fetch_failed(&reduce, "1.1-2", "http://c:1", refused).kill);
        assert_eq!(s.job.as_ref().unwrap().failures[&TaskRef::Map(MapId(2))], 1);
        // Only a live reduce attempt may report.
        assert!(s.fetch_failed("1-0", "1-0", "http://a:1", refused).kill);
        assert!(s.fetch_failed("9-9", "1-0", "http://a:1", refused).kill);
        assert_eq!(rerun_until_complete(&mut s, &reduce, "c4", "b:1"), 2);
    }

    #[test]
    fn a_lost_output_no_reduce_still_needs_is_not_run_again() {
        let mut s = state();
        let reduce = maps_done(&mut s);
        assert!(!s.ready(&reduce, 90).kill);
        s.allocated(ended("c2", ContainerEnd::Lost, None));
        let p = s.job.as_ref().unwrap().policy.progress();
        assert_eq!((p.k, p.maps_done, p.restarts_waiting), (3, 3, 0));
    }

    fn measured(input: u64, output: u64, seconds: f64, rate: Option<&str>) -> Done {
        Done {
            measured: Some(crate::Measured {
                input_bytes: input,
                output_bytes: output,
                seconds,
                disk_rate_env: rate.map(str::to_owned),
            }),
            ..done(output)
        }
    }

    const MB: u64 = 1_000_000;

    #[test]
    fn the_first_finished_map_and_reduce_type_an_untyped_kind_and_every_allocate_carries_it() {
        use yard_appmaster::typing::{Part, RateSource};
        let mut s = state();
        assert_eq!(s.allocate_request().job_type, None, "unknown until typed");
        s.allocated(AllocateReply {
            allocated: vec![
                granted("c1", "a:1"),
                granted("c2", "b:1"),
                granted("c3", "c:1"),
            ],
            completed: Vec::new(),
        });
        let maps: Vec<_> = ["c1", "c2", "c3"]
            .iter()
            .map(|c| run_order(s.next_order(c)))
            .collect();
        // A task that did not measure itself (an older task binary) is no probe.
        assert!(!s.done(&maps[2].attempt, done(30)).kill);
        assert_eq!(s.allocate_request().job_type, None);
        // The first that did: 64 + 64 MB in 2 s on a 50 MB/s disk, IO-bound.
        let io = measured(64 * MB, 64 * MB, 2.0, Some("50000000"));
        assert!(!s.done(&maps[1].attempt, io).kill);
        let io_map = JobType {
            map: Some(TaskBound::Io),
            reduce: None,
        };
        assert_eq!(s.allocate_request().job_type, Some(io_map));
        // A later map, however CPU-bound, is no probe.
        let cpu = measured(MB, 0, 100.0, Some("50000000"));
        assert!(!s.done(&maps[0].attempt, cpu).kill);
        assert_eq!(s.allocate_request().job_type, Some(io_map));
        // Nothing waited for the probe: every map ran beside it.
        assert_eq!(s.job.as_ref().unwrap().policy.progress().maps_done, 3);
        // The reduce's node gave no usable rate: typed against the default, and it says so.
        let reduce = ["c1", "c2", "c3"]
            .iter()
            .find_map(|c| match s.next_order(c) {
                Some(Order::Run { task }) => Some(task),
                _ => None,
            })
            .expect("the reduce runs in one of the containers");
        assert!(matches!(reduce.work, Work::Reduce { .. }));
        let r = measured(8 * MB, 1_000, 8.0, Some("fast"));
        assert!(!s.done(&reduce.attempt, r).kill);
        assert_eq!(
            s.allocate_request().job_type,
            Some(JobType {
                map: Some(TaskBound::Io),
                reduce: Some(TaskBound::Cpu),
            })
        );
        let unsaved = s.typing.take_unsaved();
        assert_eq!(
            unsaved.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
            [Part::Map, Part::Reduce]
        );
        assert_eq!(unsaved[0].1.disk_rate, 50e6);
        assert_eq!(unsaved[1].1.rate_source, RateSource::Default);
        let shown = job_type_json(&s.typing);
        assert_eq!(shown["map"]["bound"], "io");
        assert_eq!(shown["map"]["fromStore"], false);
        assert_eq!(shown["reduce"]["diskRateSource"], "default");
        assert!(
            shown["summary"].as_str().unwrap().starts_with(
                "map: io-bound (q = 64 MB/s against a 50 MB/s disk); reduce: cpu-bound"
            ),
            "{shown}"
        );
        assert_eq!(s.status()["jobType"], shown["summary"]);
    }

    #[test]
    fn a_kind_typed_in_the_store_is_typed_from_its_first_allocate_and_has_no_probes() {
        use yard_appmaster::typing::{KindType, PartType, Probe, Typing};
        let mut s = state();
        let stored = PartType::of(
            Probe {
                input_bytes: 64e6,
                output_bytes: 32e6,
                seconds: 8.0,
            },
            Some(50e6),
            1,
        )
        .unwrap();
        s.typing = Typing::new(KindType {
            map: Some(stored),
            reduce: None,
        });
        let cpu_map = JobType {
            map: Some(TaskBound::Cpu),
            reduce: None,
        };
        assert_eq!(s.allocate_request().job_type, Some(cpu_map));
        s.allocated(AllocateReply {
            allocated: vec![granted("c1", "a:1")],
            completed: Vec::new(),
        });
        let map = run_order(s.next_order("c1"));
        let io = measured(64 * MB, 64 * MB, 1.0, Some("50000000"));
        assert!(!s.done(&map.attempt, io).kill);
        assert_eq!(s.allocate_request().job_type, Some(cpu_map), "kept");
        assert!(s.typing.take_unsaved().is_empty(), "nothing new to store");
        assert_eq!(job_type_json(&s.typing)["map"]["fromStore"], true);
    }

    /// The series of one scrape, `name{labels}` → value.
    fn scrape(s: &State) -> BTreeMap<String, f64> {
        let text = s.metrics.scrape(s);
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').unwrap();
                (series.to_owned(), value.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn the_metrics_count_the_policys_decisions_and_read_the_job_at_scrape_time() {
        let mut s = state();
        let before = scrape(&s);
        for decision in super::super::metrics::DECISIONS {
            let series = format!(
                "yard_mr_master_decisions_total{{decision=\"{decision}\",policy=\"full\"}}"
            );
            assert_eq!(before.get(&series), Some(&0.0), "{series} in {before:#?}");
        }
        assert_eq!(
            before["yard_mr_master_maps{policy=\"full\",state=\"pending\"}"],
            3.0
        );
        assert_eq!(
            before["yard_mr_master_deadline_seconds{policy=\"full\"}"],
            100.0
        );
        assert_eq!(
            before["yard_mr_master_info{phase=\"job\",policy=\"full\"}"],
            1.0
        );
        let task = granted_task(&mut s, "c1", "c:1");
        assert!(!s.started(&task.attempt).kill);
        let running = scrape(&s);
        assert_eq!(
            running["yard_mr_master_decisions_total{decision=\"launch\",policy=\"full\"}"],
            1.0
        );
        assert_eq!(
            running["yard_mr_master_maps{policy=\"full\",state=\"running\"}"],
            1.0
        );
        assert_eq!(running["yard_mr_master_containers"], 1.0);
        let done = done(30);
        assert!(!s.done(&task.attempt, done).kill);
        let after = scrape(&s);
        let maps = |state: &str| {
            after[&format!("yard_mr_master_maps{{policy=\"full\",state=\"{state}\"}}")]
        };
        assert_eq!(
            (
                maps("pending"),
                maps("running"),
                maps("done"),
                maps("dropped")
            ),
            (1.0, 1.0, 1.0, 0.0),
            "the freed container runs the next map at once"
        );
        assert_eq!(
            after["yard_mr_master_decisions_total{decision=\"launch\",policy=\"full\"}"],
            2.0
        );
        assert_eq!(
            after["yard_mr_master_reduces{policy=\"full\",state=\"pending\"}"],
            1.0
        );
        assert!(after["yard_mr_master_processed_ratio{policy=\"full\"}"] > 0.0);
        // No label names the job, its application or a container.
        let text = s.metrics.scrape(&s);
        for id in ["application_1_0001", "c1", "0001"] {
            assert!(!text.contains(&format!("\"{id}\"")), "{id} in\n{text}");
        }
        for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
            assert!(line.starts_with("# TYPE yard_mr_master_"), "{line}");
        }
    }
}
