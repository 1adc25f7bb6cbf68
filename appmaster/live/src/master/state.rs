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
    AttemptId, ContainerId, Decision, Estimate, Event, JobSpec, Location, MapId, MapSpec,
    PolicyConfig, PolicyKind, Profile, Progress, RecoveredMap, ReduceId, Rng, RunObserver,
    TaskPolicy, TaskRef,
};
use yard_wire::deadline::Deadline;
use yard_wire::protocol::{JobPhase, JobProgress, Resource};

use super::costs::DeadlineBasis;
use super::recovery::Recovered;
use crate::{BlockRef, Order, OutputRef, Reply, TaskSpec, Work};

mod containers;
mod umbilical;

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
    /// The policy's deadline, seconds from the phase's start (`JobSpec::deadline`, and every
    /// `DeadlineChanged` since); `None`: the job has none.
    pub(super) deadline: Option<f64>,
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
    /// The output committer's record of this phase (`super::output`).
    pub(super) output: super::output::Commits,
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
    /// Where the job proper's tasks write their parts of the output dataset (`-output`).
    pub(super) output: Option<crate::output::PartTarget>,
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
    /// Attempts a map and a reduce may take before the job fails (`MAX_TASK_FAILURES`, or
    /// the job's `mapMaxAttempts`, `reduceMaxAttempts`).
    pub(super) max_attempts: (u32, u32),
    /// A streaming job's maps: where their lines end (`line_splits`), by split index.
    pub(super) lines: HashMap<u32, crate::Lines>,
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
    /// The job's deadline as the rm last said it (`AllocateReply::deadline`), from the one it
    /// was launched with: someone may move it while the job runs (`PUT …/deadline`).
    pub(super) deadline: Option<Deadline>,
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
    /// What the policy's deadline is worked out from, and follows when the job's moves
    /// (`None`: the task sampler, which answers no deadline): [`Phase::deadline`].
    pub(super) basis: Option<DeadlineBasis>,
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

impl Phase {
    /// The policy's deadline, seconds from the phase's start: its basis's, or none (the task
    /// sampler's, or a job without a deadline).
    pub(super) fn deadline(&self) -> Option<f64> {
        self.basis.and_then(|b| b.seconds())
    }
}

impl State {
    /// A master's state before its first phase. A synthetic job has as many reduces as it
    /// has recorded reduce times; a map-only (streaming) job none; any other has `reduces`
    /// (at least one).
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
            // Hadoop's `-reducer NONE`: the maps' output is the job's; no reduce starts.
            app if app.map_only() => 0,
            _ => reduces.max(1),
        };
        State {
            output: None,
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
            max_attempts: (super::MAX_TASK_FAILURES, super::MAX_TASK_FAILURES),
            lines: HashMap::new(),
            max_containers: None,
            cluster_slots: None,
            peak_containers: 0,
            typing: Default::default(),
            metrics: super::metrics::MasterMetrics::new(),
            costs: Default::default(),
            call_rm: Arc::new(Notify::new()),
            phase_finished: Arc::new(Notify::new()),
            deadline: None,
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
        let deadline = phase.deadline();
        let Phase {
            policy: kind,
            maps,
            population,
            profile,
            basis: _,
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
                // An aggregate's intervals need the blocks read to be a random sample.
                random_map_order: self.app.is_aggregate(),
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
            output: Default::default(),
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
                    lines: self.lines.get(&input.split.index).cloned(),
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
                    "{now:.3} s: map phase closed at k = {k} of {} ({} done; {}), estimate {:.3} s ({parts}), deadline {}",
                    job.maps.len(),
                    p.maps_done,
                    match p.guarded {
                        true => "by the deadline guard",
                        false => "by the policy",
                    },
                    estimate.map_or(f64::NAN, |e| e.total),
                    super::seconds_or_none(job.deadline)
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
            writes_output: self.output.is_some(),
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

    /// How far the job is, for the rm (sent with every allocate).
    pub(super) fn job_progress(&self) -> Option<JobProgress> {
        let job = self.job.as_ref()?;
        let now = job.now();
        let p = job.policy.progress();
        Some(JobProgress {
            phase: if job.sampler {
                JobPhase::Sampling
            } else {
                JobPhase::Running
            },
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
pub(super) mod tests;
