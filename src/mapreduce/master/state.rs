//! The master's state: the policy's job, the containers and attempts, and what every event
//! from the tasks and the rm does to them. Handlers hold the lock only to feed an event.

use super::*;

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
    pub(super) outputs: Vec<OutputRef>,
    pub(super) output_of: HashSet<MapId>,
    pub(super) stats: Vec<(Split, MapStats)>,
    pub(super) partials: Vec<ReducePartial>,
    pub(super) keep: HashMap<ReduceId, u64>,
    pub(super) failures: HashMap<TaskRef, u32>,
    /// Why the job cannot go on.
    pub(super) fatal: Option<String>,
    /// When the map phase closed, and the estimate then.
    pub(super) closed: Option<(f64, Option<Estimate>)>,
    pub(super) finished: Option<(Progress, f64)>,
}

impl Job {
    pub(super) fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    pub(super) fn live(&self, a: AttemptId) -> Option<&Live> {
        self.attempts.get(&a).filter(|l| !l.ended)
    }

    /// No further map output will come.
    pub(super) fn outputs_complete(&self) -> bool {
        let p = self.policy.progress();
        self.closed.is_some()
            && p.maps_done >= p.k
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
    /// Nodes that ran tasks: their shuffle data is deleted at the end.
    pub(super) used_nodes: BTreeSet<String>,
    /// When each container's last attempt ended (done or failed), until the next one starts.
    pub(super) freed_at: HashMap<String, Instant>,
    /// Seconds from a container becoming free to its next task process starting.
    pub(super) overheads: Vec<f64>,
    pub(super) stopping: bool,
    /// The policy was fed since the last long-poll look: waiters must look again.
    pub(super) fed: bool,
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

impl State {
    /// The current job's attempt named `name`, if it is of the current phase.
    pub(super) fn attempt(&self, name: &str) -> Option<AttemptId> {
        let (phase, a) = name.split_once('-')?;
        let job = self.job.as_ref()?;
        (phase.parse::<u32>().ok()? == job.phase).then_some(AttemptId(a.parse().ok()?))
    }

    /// Feeds the policy one event and carries out what it decides.
    pub(super) fn feed(&mut self, event: Event) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        self.fed = true;
        let now = job.now();
        job.observer.event(now, &event);
        let mut out = Vec::new();
        job.policy.handle(now, event, &mut job.rng, &mut out);
        job.observer.decisions(now, &out);
        for decision in out {
            self.carry_out(decision, now);
        }
    }

    pub(super) fn carry_out(&mut self, decision: Decision, now: f64) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        match decision {
            Decision::Want(n) => job.want = n,
            Decision::LaunchMap {
                attempt,
                map,
                container,
                ..
            } => {
                let input = job.maps[map.0 as usize].clone();
                job.launched[map.0 as usize] = true;
                let work = Work::Map {
                    split: input.split,
                    output: format!("{}-{}", job.phase, input.split.index),
                    block: input.block,
                };
                self.launch(TaskRef::Map(map), attempt, container, work);
            }
            Decision::LaunchReduce {
                attempt,
                reduce,
                container,
            } => {
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
                }
            }
            Decision::MarkLocalOnly(_) => {}
            Decision::CloseMapPhase { k, estimate } => {
                tracing_line(&format!(
                    "{now:.3} s: map phase closed at k = {k} of {}, estimate {:.3} s, deadline {:.3} s",
                    job.maps.len(),
                    estimate.map_or(f64::NAN, |e| e.total),
                    job.deadline
                ));
                job.closed = Some((now, estimate));
            }
            Decision::Kill(a) => {
                if let Some(live) = job.attempts.get_mut(&a) {
                    live.ended = true;
                }
            }
            Decision::Finish(progress) => {
                tracing_line(&format!(
                    "{now:.3} s: finished, {:.1} % of the input",
                    100.0 * progress.processed_fraction()
                ));
                job.finished = Some((progress, now));
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
            work,
        };
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
        let Some(held) = self.containers.get_mut(container) else {
            return Some(Order::Exit);
        };
        if held.released {
            return Some(Order::Exit);
        }
        if !held.offered && self.job.is_some() {
            held.offered = true;
            let at = self.locations.get(&held.node).copied().unwrap_or(Location {
                node: NodeId(u32::MAX),
                rack: RackId(u32::MAX),
            });
            let id = held.id;
            self.feed(Event::ContainerGranted(Container { id, at }));
        }
        self.containers.get_mut(container)?.orders.pop_front()
    }

    pub(super) fn progress(&mut self, name: &str, progress: f64) -> Reply {
        match self.attempt(name) {
            Some(attempt) if self.job.as_ref().is_some_and(|j| j.live(attempt).is_some()) => {
                self.feed(Event::TaskProgress { attempt, progress });
                Reply::default()
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
        match live.task {
            TaskRef::Map(map) => {
                let node = self
                    .containers
                    .get(&live.container)
                    .map(|h| h.http.clone())
                    .unwrap_or_default();
                let split = job.maps[map.0 as usize].split;
                if job.output_of.insert(map) {
                    job.outputs.push(OutputRef {
                        split,
                        node,
                        output: format!("{}-{}", job.phase, split.index),
                    });
                    if let Some(stats) = done.stats {
                        job.stats.push((split, stats));
                    }
                }
            }
            TaskRef::Reduce(_) => job.partials.extend(done.partial),
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
        tracing_line(&format!("attempt {name} failed: {reason}"));
        if let Some(job) = self.job.as_mut() {
            let failures = job.failures.entry(task).or_default();
            *failures += 1;
            if *failures >= MAX_TASK_FAILURES {
                job.fatal = Some(format!(
                    "{task:?} failed {failures} times, the last: {reason} (see the task's log in its container)"
                ));
            }
        }
        self.feed(Event::TaskFailed(attempt));
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

    pub(super) fn shuffled(&mut self, name: &str, bytes: u64) -> Reply {
        match self.attempt(name) {
            Some(a) if self.job.as_ref().is_some_and(|j| j.live(a).is_some()) => {
                self.feed(Event::ShuffleBytes(bytes));
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
        tracing_line(&format!(
            "{:.3} s: reduce {} has {bytes} bytes, keeps {keep}",
            job.now(),
            reduce.0
        ));
        Reply {
            kill: false,
            keep_bytes: Some(keep),
        }
    }

    /// The rm's reply: new containers (their runners are started by the caller), and ended
    /// ones: a container the policy held ends with whatever ran in it.
    pub(super) fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
        for status in reply.completed {
            let Some(held) = self.containers.remove(&status.container_id) else {
                continue;
            };
            self.by_id.remove(&held.id);
            if !held.released && held.offered {
                self.feed(Event::ContainerLost(held.id));
            }
        }
        for c in &reply.allocated {
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
        reply.allocated
    }

    /// A container that could not start goes back.
    pub(super) fn start_failed(&mut self, container: &str) {
        if let Some(held) = self.containers.remove(container) {
            self.by_id.remove(&held.id);
            self.releases.push(container.to_owned());
        }
    }

    /// YARN's asks: `*` for every container wanted and not held, and node and rack asks for
    /// where unlaunched maps' replicas are (a grant there makes a node-local map possible).
    pub(super) fn asks(&self) -> Vec<ResourceRequest> {
        let want = self.job.as_ref().map_or(0, |j| j.want);
        let held = self.containers.values().filter(|h| !h.released).count() as u32;
        let outstanding = want.saturating_sub(held);
        // Rack asks are left out: with `*` relaxing locality, a node ask already draws the
        // container to the node, and yard's racks are few.
        let mut nodes: BTreeMap<String, u32> = BTreeMap::new();
        if let Some(job) = self.job.as_ref().filter(|j| j.closed.is_none()) {
            for (m, input) in job.maps.iter().enumerate() {
                if !job.launched[m] {
                    for node in &input.nodes {
                        *nodes.entry(node.clone()).or_default() += 1;
                    }
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
        let mut asks: Vec<ResourceRequest> =
            nodes.into_iter().map(|(name, n)| ask(name, n)).collect();
        asks.push(ask("*".into(), outstanding));
        asks
    }

    pub(super) fn status(&self) -> Value {
        let Some(job) = &self.job else {
            return json!({ "phase": "starting" });
        };
        let now = job.now();
        let p = job.policy.progress();
        let launched = job.launched.iter().filter(|l| **l).count();
        json!({
            "phase": if job.sampler { "sampling" } else { "running" },
            "policy": job.policy.name(),
            "elapsed": now,
            "deadline": job.deadline,
            "estimate": job.policy.estimate(now).map(|e| e.total),
            "maps": job.maps.len(),
            "mapsLaunched": launched,
            "mapsDone": p.maps_done,
            "k": p.k,
            "mapPhaseClosed": p.map_phase_closed,
            "reduces": p.reduces,
            "reducesDone": p.reduces_done,
            "containers": self.containers.values().filter(|h| !h.released).count(),
        })
    }
}

pub(super) fn kill() -> Reply {
    Reply {
        kill: true,
        keep_bytes: None,
    }
}

pub(super) fn tracing_line(line: &str) {
    eprintln!("master: {line}");
}
