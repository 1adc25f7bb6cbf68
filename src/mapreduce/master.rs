//! `yard mr-master`: a MapReduce job's application master, a thin adapter around a task policy.
//!
//! Everything the job does is a policy decision: the master turns what happens (a runner
//! ready in a granted container, a task's progress, success or death, shuffle bytes, a reduce's
//! input complete, a container lost, a tick) into the policy's events, and carries out its
//! decisions (ask for containers, hand a runner a task, kill an attempt, sample a reduce's
//! input, release a container). State lives behind one mutex; handlers hold it only to feed
//! an event, never across IO.
//!
//! A job kind the profile store knows nothing about first runs the task sampler (Dart §5.1):
//! a few maps and reduces at geometric input sizes under `full`, whose run is stored; the job
//! proper then starts with that profile, its deadline shortened by the time the sampler took.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use axum::Json;
use axum::extract::{Path, State as AxumState};
use axum::routing::{get, post};
use clap::Args;
use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split, SyntheticTask};
use yard_appmaster::policy::{
    AttemptId, Container, ContainerId, Decision, Estimate, Event, JobSpec, Location, MapId,
    MapSpec, NodeId, PolicyConfig, PolicyKind, PowerLaw, Profile, Profiler, Progress, RackId,
    ReduceId, Rng, RunObserver, TaskPolicy, TaskRef,
};
use yard_profiles::ProfileStore;
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, Allocated, Dataset, Resource, ResourceRequest, StartContainer,
};

use super::{BlockRef, Done, Order, OutputRef, Outputs, Reply, TaskSpec, Work};

/// How often the master calls the rm, and ticks the policy (straggler detection).
const ALLOCATE_EVERY: Duration = Duration::from_millis(100);
const TICK_EVERY: Duration = Duration::from_millis(500);
/// How long a long-poll (a runner's `next`, a reducer's `outputs`) waits before answering
/// "nothing yet".
const LONG_POLL: Duration = Duration::from_secs(5);
/// Time the master keeps for itself after the job: answer, store, unregister.
const FINISH_MARGIN: f64 = 0.3;
/// A task that fails this often fails the job (Hadoop's `mapreduce.map.maxattempts`): a
/// deterministic failure (bad input, a bug) must not be retried for ever.
const MAX_TASK_FAILURES: u32 = 4;

#[derive(Args)]
pub(crate) struct MasterArgs {
    /// The built-in application: wordcount, grep, topk, index, synthetic.
    #[arg(long)]
    app: String,
    /// An application parameter, key=value (repeat): pattern=… for grep, field=…, k=… for topk.
    #[arg(long = "param")]
    params: Vec<String>,
    /// The dataset to read (not for synthetic).
    #[arg(long)]
    input: Option<String>,
    #[arg(long, default_value = "dart")]
    policy: PolicyKind,
    #[arg(long, default_value_t = 2)]
    reduces: u32,
    /// When the answer is due, ms since the Unix epoch; none: as late as it takes.
    #[arg(long)]
    deadline_ms: Option<i64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Each task container's memory.
    #[arg(long, default_value_t = 256)]
    memory_mb: u64,
    /// Only run the task sampler (Dart §5.1) and store what it measured.
    #[arg(long)]
    sample_only: bool,
    /// Maps the task sampler runs.
    #[arg(long, default_value_t = 3)]
    sample_maps: u32,
    /// Synthetic jobs: how many maps, how long each runs, what each writes, how long a reduce runs.
    #[arg(long, default_value_t = 0)]
    maps: u32,
    #[arg(long, default_value_t = 1.0)]
    map_seconds: f64,
    #[arg(long, default_value_t = 1 << 16)]
    map_output_bytes: u64,
    #[arg(long, default_value_t = 1.0)]
    reduce_seconds: f64,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// One map's input, as the master plans it.
#[derive(Debug, Clone)]
struct MapInput {
    split: Split,
    block: Option<BlockRef>,
    /// Where its replicas live, for the policy and for locality asks.
    at: Vec<Location>,
    nodes: Vec<String>,
}

/// A container granted to the job.
struct Held {
    id: ContainerId,
    node: String,
    http: String,
    /// Its runner asked for work, and the policy was told of the container.
    offered: bool,
    released: bool,
    orders: VecDeque<Order>,
}

/// An attempt the policy launched.
struct Live {
    task: TaskRef,
    container: String,
    ended: bool,
}

/// One run of a policy over a list of maps: the job proper, or the task sampler before it.
struct Job {
    phase: u32,
    sampler: bool,
    policy: Box<dyn TaskPolicy + Send>,
    observer: RunObserver,
    rng: Rng,
    started: Instant,
    deadline: f64,
    maps: Vec<MapInput>,
    population: Population,
    launched: Vec<bool>,
    want: u32,
    attempts: HashMap<AttemptId, Live>,
    outputs: Vec<OutputRef>,
    output_of: HashSet<MapId>,
    stats: Vec<(Split, MapStats)>,
    partials: Vec<ReducePartial>,
    keep: HashMap<ReduceId, u64>,
    failures: HashMap<TaskRef, u32>,
    /// Why the job cannot go on.
    fatal: Option<String>,
    /// When the map phase closed, and the estimate then.
    closed: Option<(f64, Option<Estimate>)>,
    finished: Option<(Progress, f64)>,
}

impl Job {
    fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn live(&self, a: AttemptId) -> Option<&Live> {
        self.attempts.get(&a).filter(|l| !l.ended)
    }

    /// No further map output will come.
    fn outputs_complete(&self) -> bool {
        let p = self.policy.progress();
        self.closed.is_some()
            && p.maps_done >= p.k
            && !self
                .attempts
                .values()
                .any(|l| !l.ended && matches!(l.task, TaskRef::Map(_)))
    }
}

struct State {
    url: String,
    application: String,
    app: AppSpec,
    reduces: u32,
    seed: u64,
    capability: Resource,
    job: Option<Job>,
    phases: u32,
    containers: HashMap<String, Held>,
    by_id: HashMap<ContainerId, String>,
    next_container: u64,
    releases: Vec<String>,
    locations: HashMap<String, Location>,
    /// Nodes that ran tasks: their shuffle data is deleted at the end.
    used_nodes: BTreeSet<String>,
    /// When each container's last attempt ended (done or failed), until the next one starts.
    freed_at: HashMap<String, Instant>,
    /// Seconds from a container becoming free to its next task process starting.
    overheads: Vec<f64>,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn attempt_name(phase: u32, a: AttemptId) -> String {
    format!("{phase}-{}", a.0)
}

impl State {
    /// The current job's attempt named `name`, if it is of the current phase.
    fn attempt(&self, name: &str) -> Option<AttemptId> {
        let (phase, a) = name.split_once('-')?;
        let job = self.job.as_ref()?;
        (phase.parse::<u32>().ok()? == job.phase).then_some(AttemptId(a.parse().ok()?))
    }

    /// Feeds the policy one event and carries out what it decides.
    fn feed(&mut self, event: Event) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        let now = job.now();
        job.observer.event(now, &event);
        let mut out = Vec::new();
        job.policy.handle(now, event, &mut job.rng, &mut out);
        job.observer.decisions(now, &out);
        for decision in out {
            self.carry_out(decision, now);
        }
    }

    fn carry_out(&mut self, decision: Decision, now: f64) {
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

    fn launch(&mut self, task: TaskRef, attempt: AttemptId, container: ContainerId, work: Work) {
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
    fn next_order(&mut self, container: &str) -> Option<Order> {
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

    fn progress(&mut self, name: &str, progress: f64) -> Reply {
        match self.attempt(name) {
            Some(attempt) if self.job.as_ref().is_some_and(|j| j.live(attempt).is_some()) => {
                self.feed(Event::TaskProgress { attempt, progress });
                Reply::default()
            }
            _ => kill(),
        }
    }

    fn done(&mut self, name: &str, done: Done) -> Reply {
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

    fn failed(&mut self, name: &str, reason: &str) {
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
    fn started(&mut self, name: &str) -> Reply {
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

    fn outputs(&self, name: &str, from: usize) -> Option<Outputs> {
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

    fn shuffled(&mut self, name: &str, bytes: u64) -> Reply {
        match self.attempt(name) {
            Some(a) if self.job.as_ref().is_some_and(|j| j.live(a).is_some()) => {
                self.feed(Event::ShuffleBytes(bytes));
                Reply::default()
            }
            _ => kill(),
        }
    }

    fn ready(&mut self, name: &str, bytes: u64) -> Reply {
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
    fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
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
    fn start_failed(&mut self, container: &str) {
        if let Some(held) = self.containers.remove(container) {
            self.by_id.remove(&held.id);
            self.releases.push(container.to_owned());
        }
    }

    /// YARN's asks: `*` for every container wanted and not held, and node and rack asks for
    /// where unlaunched maps' replicas are (a grant there makes a node-local map possible).
    fn asks(&self) -> Vec<ResourceRequest> {
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

    fn status(&self) -> Value {
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

fn kill() -> Reply {
    Reply {
        kill: true,
        keep_bytes: None,
    }
}

fn tracing_line(line: &str) {
    eprintln!("master: {line}");
}

// ---------------------------------------------------------------------------------------------
// The umbilical: the routes tasks and runners call, and the tracking URL's status.

type St = AxumState<Arc<Shared>>;

/// Runs `f` on the state, then wakes every long-poll: whatever changed may answer one.
fn with<T>(shared: &Shared, f: impl FnOnce(&mut State) -> T) -> T {
    let out = f(&mut shared.lock());
    shared.changed.notify_waiters();
    out
}

async fn next(AxumState(shared): St, Path(container): Path<String>) -> Json<Order> {
    let give_up = tokio::time::Instant::now() + LONG_POLL;
    loop {
        let changed = shared.changed.notified();
        if let Some(order) = with(&shared, |s| s.next_order(&container)) {
            return Json(order);
        }
        if tokio::time::timeout_at(give_up, changed).await.is_err() {
            return Json(Order::Wait);
        }
    }
}

#[derive(Deserialize)]
struct ProgressBody {
    progress: f64,
}

async fn progress(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<ProgressBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.progress(&attempt, body.progress)))
}

async fn started(AxumState(shared): St, Path(attempt): Path<String>) -> Json<Reply> {
    Json(with(&shared, |s| s.started(&attempt)))
}

async fn done(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Done>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.done(&attempt, body)))
}

#[derive(Deserialize)]
struct FailedBody {
    reason: String,
}

async fn failed(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FailedBody>,
) -> Json<Reply> {
    with(&shared, |s| s.failed(&attempt, &body.reason));
    Json(Reply::default())
}

#[derive(Deserialize)]
struct FromBody {
    from: usize,
}

async fn outputs(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FromBody>,
) -> Json<Outputs> {
    let give_up = tokio::time::Instant::now() + LONG_POLL;
    loop {
        let changed = shared.changed.notified();
        if let Some(outputs) = shared.lock().outputs(&attempt, body.from) {
            return Json(outputs);
        }
        if tokio::time::timeout_at(give_up, changed).await.is_err() {
            return Json(Outputs {
                outputs: Vec::new(),
                complete: false,
                kill: false,
            });
        }
    }
}

#[derive(Deserialize)]
struct BytesBody {
    bytes: u64,
}

async fn shuffled(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<BytesBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.shuffled(&attempt, body.bytes)))
}

async fn ready(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<BytesBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.ready(&attempt, body.bytes)))
}

async fn status(AxumState(shared): St) -> Json<Value> {
    Json(shared.lock().status())
}

fn umbilical(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/status", get(status))
        .route("/mr/runners/{container}/next", post(next))
        .route("/mr/attempts/{attempt}/started", post(started))
        .route("/mr/attempts/{attempt}/progress", post(progress))
        .route("/mr/attempts/{attempt}/done", post(done))
        .route("/mr/attempts/{attempt}/failed", post(failed))
        .route("/mr/attempts/{attempt}/outputs", post(outputs))
        .route("/mr/attempts/{attempt}/shuffled", post(shuffled))
        .route("/mr/attempts/{attempt}/ready", post(ready))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .with_state(shared)
}

// ---------------------------------------------------------------------------------------------
// The rm and the nodemanagers.

struct RmClient {
    http: reqwest::Client,
    base: String,
    application: String,
}

impl RmClient {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach {url}"))?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("{url} answered {status}: {value}");
        }
        Ok(value)
    }

    async fn app_call(&self, method: reqwest::Method, what: &str, body: Value) -> Result<Value> {
        let path = format!("/ws/v1/yard/apps/{}/{what}", self.application);
        self.call(method, &path, Some(body)).await
    }
}

/// Starts a runner in a granted container.
async fn start_runner(
    http: &reqwest::Client,
    exe: &str,
    master: &str,
    c: &Allocated,
) -> Result<()> {
    let start = StartContainer {
        token: Some(c.token.clone()),
        command: vec![
            exe.to_owned(),
            "mr-runner".into(),
            "--master".into(),
            master.to_owned(),
            "--container".into(),
            c.container_id.clone(),
        ],
        env: Default::default(),
    };
    let url = format!("{}/ws/v1/node/containers", c.node_http_address);
    let response = http.post(&url).json(&start).send().await?;
    if !response.status().is_success() {
        bail!(
            "{url} answered {}: {}",
            response.status(),
            response.text().await.unwrap_or_default()
        );
    }
    Ok(())
}

/// Calls the rm every `ALLOCATE_EVERY` (at once when something changed) until stopping.
async fn allocate_loop(shared: Arc<Shared>, rm: Arc<RmClient>, exe: String) {
    let mut unreachable_since: Option<Instant> = None;
    loop {
        let changed = shared.changed.notified();
        let (request, stopping) = {
            let mut s = shared.lock();
            let progress = s
                .job
                .as_ref()
                .map_or(if s.stopping { 1.0 } else { 0.0 }, |j| {
                    let p = j.policy.progress();
                    f64::from(p.maps_done) / f64::from(p.maps.max(1))
                });
            let request = AllocateRequest {
                application_id: s.application.clone(),
                asks: s.asks(),
                releases: std::mem::take(&mut s.releases),
                progress: progress.clamp(0.0, 1.0),
            };
            (request, s.stopping)
        };
        let releases = request.releases.clone();
        match rm
            .app_call(reqwest::Method::POST, "allocate", json!(request))
            .await
            .and_then(|v| serde_json::from_value::<AllocateReply>(v).map_err(Into::into))
        {
            Ok(reply) => {
                unreachable_since = None;
                let fresh = with(&shared, |s| s.allocated(reply));
                for c in fresh {
                    let (shared, rm, exe) = (shared.clone(), rm.clone(), exe.clone());
                    tokio::spawn(async move {
                        let master = shared.lock().url.clone();
                        if let Err(e) = start_runner(&rm.http, &exe, &master, &c).await {
                            tracing_line(&format!(
                                "container {} could not start: {e:#}",
                                c.container_id
                            ));
                            with(&shared, |s| s.start_failed(&c.container_id));
                        }
                    });
                }
            }
            Err(e) => {
                shared.lock().releases.extend(releases);
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(60) {
                    tracing_line(&format!("the rm stays unreachable: {e:#}"));
                }
            }
        }
        if stopping {
            return;
        }
        let _ = tokio::time::timeout(ALLOCATE_EVERY, changed).await;
        tokio::time::sleep(Duration::from_millis(5)).await; // batch a burst of changes
    }
}

// ---------------------------------------------------------------------------------------------
// The job.

/// What to assume before anything was measured; the task sampler replaces it on a first run.
fn default_profile() -> Profile {
    Profile {
        map_local: 1.0,
        map_remote: 1.5,
        partition_bytes: 1e6,
        shuffle_bandwidth: 50e6,
        reduce_time: PowerLaw { a: 1e-7, b: 1.0 },
        previous_runs: Vec::new(),
    }
}

fn app_spec(args: &MasterArgs) -> Result<AppSpec> {
    if args.app == "synthetic" {
        anyhow::ensure!(args.maps > 0, "a synthetic job needs --maps");
        return Ok(AppSpec::Synthetic {
            maps: vec![
                SyntheticTask {
                    seconds: args.map_seconds,
                    input_bytes: 1 << 20,
                    output_bytes: args.map_output_bytes,
                };
                args.maps as usize
            ],
            reduce_seconds: vec![args.reduce_seconds; args.reduces as usize],
        });
    }
    AppSpec::parse(&args.app, &args.params).map_err(|e| anyhow!("{e}"))
}

/// Every map of the job, with the racks of the nodes holding its block.
async fn plan_maps(rm: &RmClient, args: &MasterArgs, app: &AppSpec) -> Result<Vec<MapInput>> {
    if let AppSpec::Synthetic { maps, .. } = app {
        return Ok(maps
            .iter()
            .enumerate()
            .map(|(i, m)| MapInput {
                split: Split {
                    index: i as u32,
                    bytes: m.input_bytes,
                },
                block: None,
                at: Vec::new(),
                nodes: Vec::new(),
            })
            .collect());
    }
    let name = args
        .input
        .as_deref()
        .ok_or_else(|| anyhow!("--input names the dataset to read"))?;
    let dataset: Dataset = serde_json::from_value(
        rm.call(
            reqwest::Method::GET,
            &format!("/ws/v1/yard/datasets/{name}"),
            None,
        )
        .await?,
    )
    .context("the rm's dataset")?;
    Ok(dataset
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| MapInput {
            split: Split {
                index: i as u32,
                bytes: b.bytes,
            },
            block: Some(BlockRef {
                dataset: name.to_owned(),
                block: b.block.clone(),
                replicas: b.nodes.clone(),
            }),
            at: Vec::new(),
            nodes: b.nodes.clone(),
        })
        .collect())
}

/// Node and rack numbers for the policy, from the rm's node list.
async fn locations(rm: &RmClient) -> Result<HashMap<String, Location>> {
    let nodes = rm
        .call(reqwest::Method::GET, "/ws/v1/cluster/nodes", None)
        .await?;
    let mut racks: BTreeMap<String, u32> = BTreeMap::new();
    let mut out = HashMap::new();
    for (i, n) in nodes["nodes"]["node"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let rack = n["rack"].as_str().unwrap_or("default-rack").to_owned();
        let next = racks.len() as u32;
        let rack = *racks.entry(rack).or_insert(next);
        if let Some(id) = n["id"].as_str() {
            out.insert(
                id.to_owned(),
                Location {
                    node: NodeId(i as u32),
                    rack: RackId(rack),
                },
            );
        }
    }
    Ok(out)
}

/// What a finished phase leaves.
struct Outcome {
    progress: Progress,
    finished_at: f64,
    closed: Option<(f64, Option<Estimate>)>,
    stats: Vec<(Split, MapStats)>,
    partials: Vec<ReducePartial>,
    population: Population,
    record: yard_appmaster::policy::RunRecord,
    deadline: f64,
    /// Seconds from a container becoming free to its next task process starting.
    overheads: Vec<f64>,
}

/// One run of a policy: the task sampler or the job proper.
struct Phase {
    policy: PolicyKind,
    maps: Vec<MapInput>,
    /// The whole job's input (the sampler's maps are a sample of it).
    population: Population,
    profile: Profile,
    /// Seconds from the phase's start.
    deadline: f64,
    sampler: bool,
}

/// Runs one policy over its maps to its `Finish`.
async fn run_phase(shared: &Arc<Shared>, phase: Phase) -> Result<Outcome> {
    let Phase {
        policy: kind,
        maps,
        population,
        profile,
        deadline,
        sampler,
    } = phase;
    with(shared, |s| {
        let spec = JobSpec {
            deadline,
            maps: maps
                .iter()
                .map(|m| MapSpec {
                    bytes: m.split.bytes,
                    replicas: m.at.clone(),
                })
                .collect(),
            reduces: s.reduces,
            profile,
            allotment: None,
        };
        s.phases += 1;
        let launched = vec![false; maps.len()];
        s.job = Some(Job {
            phase: s.phases,
            sampler,
            policy: kind.build(PolicyConfig::default()),
            observer: RunObserver::new(),
            rng: Rng::seed_from_u64(s.seed),
            started: Instant::now(),
            deadline,
            maps,
            population,
            launched,
            want: 0,
            attempts: HashMap::new(),
            outputs: Vec::new(),
            output_of: HashSet::new(),
            stats: Vec::new(),
            partials: Vec::new(),
            keep: HashMap::new(),
            failures: HashMap::new(),
            fatal: None,
            closed: None,
            finished: None,
        });
        s.feed(Event::JobStarted(spec));
        // Containers left over from an earlier phase are offered again.
        let ids: Vec<String> = s
            .containers
            .iter()
            .filter(|(_, h)| !h.released)
            .map(|(n, _)| n.clone())
            .collect();
        for name in ids {
            if let Some(h) = s.containers.get_mut(&name) {
                h.offered = false;
            }
        }
    });
    let mut tick = tokio::time::interval(TICK_EVERY);
    loop {
        tick.tick().await;
        let mut s = shared.lock();
        if let Some(fatal) = s.job.as_ref().and_then(|j| j.fatal.clone()) {
            bail!(fatal);
        }
        if let Some(job) = s.job.as_ref()
            && let Some((progress, finished_at)) = job.finished
        {
            let job = s.job.take().expect("the job");
            let overheads = std::mem::take(&mut s.overheads);
            return Ok(Outcome {
                overheads,
                progress,
                finished_at,
                closed: job.closed,
                stats: job.stats,
                partials: job.partials,
                population: job.population,
                record: job.observer.record(),
                deadline: job.deadline,
            });
        }
        s.feed(Event::Tick);
        drop(s);
        shared.changed.notify_waiters();
    }
}

/// Runs inside the master container the rm started.
pub(crate) fn master(args: MasterArgs) -> Result<()> {
    let env = |name: &str| {
        std::env::var(name).with_context(|| {
            format!("{name} is not set: `yard mr-master` runs in a container the rm starts (use `yard submit wordcount …`)")
        })
    };
    let (rm, application) = (env("YARD_RM")?, env("APPLICATION_ID")?);
    let profiles = std::env::var_os("YARD_PROFILES").map(PathBuf::from);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(run(args, rm, application, profiles))
}

async fn run(
    args: MasterArgs,
    rm_url: String,
    application: String,
    profiles: Option<PathBuf>,
) -> Result<()> {
    let started_ms = now_ms();
    let rm = Arc::new(RmClient {
        http: reqwest::Client::new(),
        base: rm_url,
        application: application.clone(),
    });
    let outcome = job(&args, &rm, &application, profiles, started_ms).await;
    let succeeded = match &outcome {
        Ok(()) => true,
        Err(e) => {
            tracing_line(&format!("the job failed: {e:#}"));
            false
        }
    };
    rm.app_call(
        reqwest::Method::POST,
        "unregister",
        json!({ "succeeded": succeeded }),
    )
    .await?;
    outcome
}

async fn job(
    args: &MasterArgs,
    rm: &Arc<RmClient>,
    application: &str,
    profiles: Option<PathBuf>,
    started_ms: i64,
) -> Result<()> {
    let app = app_spec(args)?;
    // A recurring job is the same application over the same (growing) dataset: its profile
    // is kept per application, parameters and input.
    let kind = match &args.input {
        Some(input) => format!("{}@{input}", app.kind()),
        None => app.kind(),
    };
    let exe = std::env::current_exe()
        .context("cannot find the yard binary for the task runners")?
        .display()
        .to_string();
    let locations = locations(rm).await?;
    let mut maps = plan_maps(rm, args, &app).await?;
    for m in &mut maps {
        m.at = m
            .nodes
            .iter()
            .filter_map(|n| locations.get(n).copied())
            .collect();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the master's umbilical port")?;
    let url = format!("http://{}", listener.local_addr()?);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            url: url.clone(),
            application: application.to_owned(),
            app: app.clone(),
            reduces: args.reduces.max(1),
            seed: args.seed,
            capability: Resource {
                memory_mb: args.memory_mb,
                vcores: 1,
            },
            job: None,
            phases: 0,
            containers: HashMap::new(),
            by_id: HashMap::new(),
            next_container: 0,
            releases: Vec::new(),
            locations,
            used_nodes: BTreeSet::new(),
            freed_at: HashMap::new(),
            overheads: Vec::new(),
            stopping: false,
        }),
        changed: Notify::new(),
    });
    tokio::spawn({
        let router = umbilical(shared.clone());
        // Small request/response pairs back to back: Nagle's algorithm would hold a reply's
        // last segment for the peer's delayed ACK (40 ms a round on Linux).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        async move { axum::serve(listener, router).await }
    });
    rm.app_call(
        reqwest::Method::POST,
        "register",
        json!({ "trackingUrl": format!("{url}/status") }),
    )
    .await?;
    tracing_line(&format!(
        "registered {application}: {} over {} maps under {}, umbilical {url}",
        app.name(),
        maps.len(),
        args.policy
    ));
    let allocator = tokio::spawn(allocate_loop(shared.clone(), rm.clone(), exe));

    let store = match &profiles {
        Some(path) => Some(ProfileStore::open(path).await?),
        None => {
            tracing_line("YARD_PROFILES is not set: no profile is read or stored");
            None
        }
    };
    let stored = match &store {
        Some(store) => store.load(&kind).await?,
        None => Default::default(),
    };
    // The task sampler runs once per kind: runs alone (a `full` run, say) give reduce samples
    // all of one size, from which f(d) cannot be fitted.
    let cold = stored.sampled.is_empty();
    let estimates = !matches!(args.policy, PolicyKind::Full);
    // The whole input is the population, for the task sampler's reduces too: its maps are a
    // sample of it.
    let population = Population {
        maps: maps.len() as u32,
        bytes: maps.iter().map(|m| m.split.bytes).sum(),
    };
    let mut sampled = false;
    if args.sample_only || (cold && estimates) {
        // Dart §5.1, the task sampler: a few maps chosen at random, reduces at geometric sizes.
        let mut rng = Rng::seed_from_u64(args.seed ^ 0x5A3B);
        let mut sample = maps.clone();
        sample.shuffle(&mut rng);
        sample.truncate(args.sample_maps.max(1) as usize);
        let sampler = Phase {
            policy: PolicyKind::Full,
            maps: sample,
            population,
            profile: default_profile(),
            deadline: 1e9,
            sampler: true,
        };
        let outcome = run_phase(&shared, sampler).await?;
        if let Some(store) = &store {
            // Its reduce samples are the sampler's; the rest (map durations, partition size,
            // shuffle bandwidth) is a run like any other.
            let mut record = outcome.record.clone();
            store.add_samples(&kind, &record.reduce_samples).await?;
            record.reduce_samples.clear();
            store.add_run(&kind, now_ms(), &record).await?;
        }
        tracing_line(&format!(
            "task sampler: {:?} in {:.2} s",
            outcome.record, outcome.finished_at
        ));
        sampled = true;
    }
    let result = if args.sample_only {
        json!({
            "processedFraction": 0.0,
            "answer": { "app": app.name(), "sampled": true },
        })
    } else {
        let stored = match &store {
            Some(store) => store.load(&kind).await?,
            None => Default::default(),
        };
        let profile = stored.profiler(default_profile()).profile();
        let deadline = args.deadline_ms.map_or(1e9, |d| {
            ((d - now_ms()) as f64 / 1000.0 - FINISH_MARGIN).max(0.001)
        });
        let phase_start_ms = now_ms();
        let job = Phase {
            policy: args.policy,
            maps,
            population,
            profile,
            deadline,
            sampler: false,
        };
        let outcome = run_phase(&shared, job).await?;
        if let Some(store) = &store {
            store.add_run(&kind, now_ms(), &outcome.record).await?;
        }
        answer(
            args,
            &app,
            &kind,
            &outcome,
            sampled,
            started_ms,
            phase_start_ms,
        )
    };
    rm.app_call(reqwest::Method::PUT, "result", result).await?;
    // The runners go, and the job's map outputs with them.
    let nodes = with(&shared, |s| {
        s.stopping = true;
        for held in s.containers.values_mut() {
            held.orders = VecDeque::from([Order::Exit]);
            held.released = true;
        }
        let all: Vec<String> = s.containers.keys().cloned().collect();
        s.releases.extend(all);
        s.used_nodes.clone()
    });
    let _ = allocator.await;
    for node in nodes {
        let url = format!("{node}/ws/v1/node/shuffle/{application}");
        if let Err(e) = rm.http.delete(&url).send().await {
            tracing_line(&format!("cannot delete the map outputs at {url}: {e}"));
        }
    }
    Ok(())
}

/// Mean and quantiles of the scheduling overheads, in milliseconds.
fn overhead_summary(seconds: &[f64]) -> Value {
    if seconds.is_empty() {
        return Value::Null;
    }
    let mut ms: Vec<f64> = seconds.iter().map(|s| s * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    json!({
        "tasks": ms.len(),
        "mean": ms.iter().sum::<f64>() / ms.len() as f64,
        "p50": at(0.5),
        "p99": at(0.99),
        "max": at(1.0),
    })
}

/// The result the rm keeps: the application's answer with the job's metadata.
fn answer(
    args: &MasterArgs,
    app: &AppSpec,
    kind: &str,
    outcome: &Outcome,
    sampled: bool,
    started_ms: i64,
    phase_start_ms: i64,
) -> Value {
    let p = outcome.progress;
    let mut answer = app.answer(outcome.population, &outcome.stats, &outcome.partials);
    let finished_ms = phase_start_ms + (outcome.finished_at * 1000.0) as i64;
    let job = json!({
        "policy": args.policy.name(),
        "kind": kind,
        "k": p.k,
        "maps": p.maps,
        "processedFraction": p.processed_fraction(),
        "estimateAtClose": outcome.closed.and_then(|(_, e)| e).map(|e| e.total),
        "mapPhaseClosedAt": outcome.closed.map(|(t, _)| t),
        "completionSeconds": (finished_ms - started_ms) as f64 / 1000.0,
        "jobSeconds": outcome.finished_at,
        "deadlineSeconds": args.deadline_ms.map(|d| (d - started_ms) as f64 / 1000.0),
        "deadlineMet": args.deadline_ms.map(|d| finished_ms <= d),
        "policyDeadline": outcome.deadline,
        "taskSamplerRan": sampled,
        "schedulingOverheadMs": overhead_summary(&outcome.overheads),
    });
    if let Some(object) = answer.as_object_mut() {
        object.insert("job".into(), job);
    }
    json!({ "processedFraction": p.processed_fraction(), "answer": answer })
}
