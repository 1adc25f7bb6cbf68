//! Shared scans, live (CIRCUMFLEX §2.2, seed 004): jobs over one dataset read each block once.
//!
//! A job submitted with `sharedScan` asks the rm who scans its dataset
//! (`POST /ws/v1/yard/mapreduce/scans/{dataset}`). The first to ask hosts the scan; the others
//! attach to the host's master and ride its scan. The host drives
//! [`yard_cluster::scans::CyclicScan`]: each map it hands a runner reads one block once and runs
//! the map function of every job attached when the read starts, writing each job's partitions
//! apart (`Work::ScanMap`); a job that joined mid-cycle gets the blocks it missed after the
//! wrap-around. Once a job has every block, the host runs that job's reduces in its own
//! containers and hands the answer to the job's master, which reports it to the rm as its
//! application's answer. The host hands the dataset back to the rm, then ends, once no job
//! rides its scan.
//!
//! The scan walks the blocks in an order drawn once per scan (seeded), so the blocks any job
//! gets by a given time, an arc of that order, are a simple random sample of the dataset.
//! A job with a deadline (submitted under `dart`) keeps it by yard's scan-deadline rule, not
//! Dart's estimator: it stops riding once the time left is under its guard plus two reads'
//! time, and its reduces run at once on the blocks read for it; its answer is approximate, with
//! its processed fraction and bounds. Every other job reads every block (an exact answer).
//!
//! What it leaves out: a read that fails is read again; a map output that a reducer cannot
//! fetch fails that job (its blocks are not read again for it). The host's `maxContainers`
//! caps the scan; a rider's own is not used.
//!
//! Who calls: the host's task routes take its job's token, as every master's (`Gate`); the
//! rider routes (`/mr/scan/attach`, `/mr/scan/riders/{n}`) take the scan's credential, which
//! the rm hands the host and every job it sends to ride (riders are other applications'
//! masters: the host's job token is not theirs).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use axum::Json;
use axum::extract::{Path, State as AxumState};
use axum::routing::{get, post};
use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split};
use yard_appmaster::policy::{PolicyKind, Rng};
use yard_cluster::scans::CyclicScan;
use yard_wire::deadline::Deadline;
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, Allocated, Resource, ResourceRequest, TaskCounts,
};

use super::nodemanager::start_runner;
use super::rm::RmClient;
use super::state::{MapInput, log_line, now_ms};
use super::umbilical::{Gate, gate};
use super::{
    ALLOCATE_EVERY, LONG_POLL, MAX_TASK_FAILURES, Spec, against_deadline, app_spec, delete_outputs,
    plan_maps, serve_and_register, with_job,
};
use crate::{Done, Order, OutputRef, Outputs, Reply, TaskSpec, Work};

/// A job attached to the scan.
struct Rider {
    application: String,
    app: AppSpec,
    reduces: u32,
    /// When its answer is due (ms since the epoch), and its guard: it stops riding in time.
    deadline: Option<Deadline>,
    guard_s: f64,
    /// It stopped riding before it had every block (its deadline came): later reads skip it.
    cut: bool,
    /// The first block read for it: where it joined the cycle.
    joined_at: Option<usize>,
    /// Blocks read for it, in the order they were read.
    read: Vec<usize>,
    outputs: Vec<OutputRef>,
    stats: Vec<(Split, MapStats)>,
    /// Reduces not yet handed to a runner.
    to_reduce: VecDeque<u32>,
    partials: Vec<ReducePartial>,
    reduces_done: u32,
    failures: u32,
    /// Its answer (the application's `answer`), or why it has none.
    outcome: Option<Result<Value, String>>,
}

/// What an attempt does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Task {
    /// A read at this position of the scan's order.
    Read(usize),
    Reduce {
        rider: usize,
        reduce: u32,
    },
}

struct Attempt {
    task: Task,
    /// A read's riders, in the order of its task's `riders`.
    riders: Vec<usize>,
    container: String,
}

struct Container {
    /// The node's http address (`http://host:port`).
    http: String,
    released: bool,
    /// The attempt running in it.
    running: Option<String>,
}

struct Scan {
    url: String,
    application: String,
    master_attempt: u32,
    map_min_seconds: f64,
    seed: u64,
    capability: Resource,
    max_containers: u32,
    maps: Vec<MapInput>,
    /// The scan's order: position `p` of the cyclic scan reads block `order[p]`.
    order: Vec<usize>,
    population: Population,
    cyclic: CyclicScan,
    riders: Vec<Rider>,
    containers: HashMap<String, Container>,
    attempts: HashMap<String, Attempt>,
    next_attempt: u64,
    releases: Vec<String>,
    /// Completed reads of each block, the bytes and seconds they took.
    reads: Vec<u32>,
    bytes_read: u64,
    read_seconds: f64,
    read_failures: HashMap<usize, u32>,
    used_nodes: BTreeSet<String>,
    /// No job may attach any more: the host is ending.
    closing: bool,
}

struct Shared {
    state: Mutex<Scan>,
    changed: Notify,
}

impl Shared {
    /// Runs `f` on the state without waking anyone: a look, or a change no waiter awaits.
    fn look<T>(&self, f: impl FnOnce(&mut Scan) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Runs `f` on the state, then wakes every long-poll and the allocate loop: whatever
    /// changed may answer one. (A look must not: waiters would wake each other for ever.)
    fn with<T>(&self, f: impl FnOnce(&mut Scan) -> T) -> T {
        let out = self.look(f);
        self.changed.notify_waiters();
        out
    }

    /// The first `Some` that `f` gives, re-asked whenever the state changes, or `None` after
    /// [`LONG_POLL`] (the caller asks again). A `Some` may have changed the state (a read
    /// handed out): the others look again.
    async fn long_poll<T>(&self, mut f: impl FnMut(&mut Scan) -> Option<T>) -> Option<T> {
        let give_up = tokio::time::Instant::now() + LONG_POLL;
        loop {
            let changed = self.changed.notified();
            if let Some(answer) = self.look(&mut f) {
                self.changed.notify_waiters();
                return Some(answer);
            }
            if tokio::time::timeout_at(give_up, changed).await.is_err() {
                return None;
            }
        }
    }
}

impl Scan {
    /// A scan of `maps` in `order` (positions to blocks), hosted at `url` by `application`'s
    /// master; as many containers as blocks unless capped.
    fn new(url: String, application: &str, maps: Vec<MapInput>, order: Vec<usize>) -> Scan {
        let blocks = maps.len();
        Scan {
            url,
            application: application.to_owned(),
            master_attempt: 1,
            map_min_seconds: 0.0,
            seed: 1,
            capability: Resource {
                memory_mb: 256,
                vcores: 1,
            },
            max_containers: blocks as u32,
            order,
            cyclic: CyclicScan::new(blocks),
            reads: vec![0; blocks],
            population: Population {
                maps: blocks as u32,
                bytes: maps.iter().map(|m| m.split.bytes).sum(),
            },
            maps,
            riders: Vec::new(),
            containers: HashMap::new(),
            attempts: HashMap::new(),
            next_attempt: 0,
            releases: Vec::new(),
            bytes_read: 0,
            read_seconds: 0.0,
            read_failures: HashMap::new(),
            used_nodes: BTreeSet::new(),
            closing: false,
        }
    }

    fn attach(&mut self, body: Attach) -> Option<usize> {
        if self.closing {
            return None;
        }
        let id = self.riders.len();
        let application = body.application;
        self.riders.push(Rider {
            application: application.clone(),
            app: body.app,
            reduces: body.reduces.max(1),
            deadline: body.deadline_ms,
            guard_s: body.guard_seconds.clamp(0.0, 3_600.0),
            cut: false,
            joined_at: None,
            read: Vec::new(),
            outputs: Vec::new(),
            stats: Vec::new(),
            to_reduce: VecDeque::new(),
            partials: Vec::new(),
            reduces_done: 0,
            failures: 0,
            outcome: None,
        });
        self.cyclic.attach(id as u64);
        log_line(&format!(
            "{application} rides the scan ({} jobs so far)",
            self.riders.len()
        ));
        Some(id)
    }

    fn task_spec(&self, attempt: &str, app: AppSpec, reduces: u32, work: Work) -> TaskSpec {
        TaskSpec {
            master: self.url.clone(),
            application: self.application.clone(),
            attempt: attempt.to_owned(),
            app,
            reduces,
            seed: self.seed,
            map_min_seconds: self.map_min_seconds,
            hang: false,
            work,
        }
    }

    /// A rider's output of block `block`'s `n`-th read: one flat name per read and rider.
    fn output_name(&self, block: usize, n: u64, rider: usize) -> String {
        format!("scan-{}-{block}-{n}-{rider}", self.master_attempt)
    }

    /// A runner asks for work: a finished rider's reduce first (its answer is nearest), then
    /// the scan's next read; nothing once no job needs anything (the container goes back).
    fn next_order(&mut self, container: &str) -> Option<Order> {
        let Some(held) = self.containers.get(container) else {
            return Some(Order::Exit);
        };
        if held.released || self.closing {
            return Some(Order::Exit);
        }
        let name = format!("scan-{}", self.next_attempt);
        let (task, riders, spec) = if let Some((rider, reduce)) = self.pending_reduce() {
            let r = &self.riders[rider];
            let work = Work::Reduce {
                reduce,
                population: self.population,
            };
            let spec = self.task_spec(&name, r.app.clone(), r.reduces, work);
            (Task::Reduce { rider, reduce }, Vec::new(), spec)
        } else if let Some((position, riders)) = self.cyclic.next_block() {
            let block = self.order[position];
            let riders: Vec<usize> = riders.into_iter().map(|r| r as usize).collect();
            let input = &self.maps[block];
            let work = Work::ScanMap {
                split: input.split,
                block: input.block.clone()?,
                riders: riders
                    .iter()
                    .map(|&r| crate::ScanRider {
                        app: self.riders[r].app.clone(),
                        reduces: self.riders[r].reduces,
                        output: self.output_name(block, self.next_attempt, r),
                    })
                    .collect(),
            };
            let first = &self.riders[riders[0]];
            let spec = self.task_spec(&name, first.app.clone(), first.reduces, work);
            (Task::Read(position), riders, spec)
        } else if self.idle() {
            self.release(container);
            return Some(Order::Exit);
        } else {
            return None;
        };
        self.next_attempt += 1;
        let held = self.containers.get_mut(container)?;
        held.running = Some(name.clone());
        self.used_nodes.insert(held.http.clone());
        self.attempts.insert(
            name,
            Attempt {
                task,
                riders,
                container: container.to_owned(),
            },
        );
        Some(Order::Run {
            task: Box::new(spec),
        })
    }

    /// Yard's scan-deadline rule: a job with a deadline stops riding once the time left is
    /// under its guard plus two reads' time (the mean read so far; a second before any), and
    /// its reduces run at once on the blocks read for it. Whether any job stopped.
    fn cut_due(&mut self, now_ms: i64) -> bool {
        let reads: u32 = self.reads.iter().sum();
        let read_s = match reads {
            0 => 1.0,
            n => self.read_seconds / f64::from(n),
        };
        let mut any = false;
        for (id, r) in self.riders.iter_mut().enumerate() {
            let Some(deadline) = r.deadline else {
                continue;
            };
            let reducing = !r.to_reduce.is_empty() || r.reduces_done > 0;
            if r.cut || r.outcome.is_some() || reducing || r.read.len() == self.maps.len() {
                continue;
            }
            let left_s = (deadline.epoch_ms() - now_ms) as f64 / 1000.0;
            if left_s > r.guard_s + 2.0 * read_s {
                continue;
            }
            log_line(&format!(
                "{}: {left_s:.1} s to its deadline: it stops riding with {} of {} blocks; its reduces run",
                r.application,
                r.read.len(),
                self.maps.len()
            ));
            r.cut = true;
            r.to_reduce = (0..r.reduces).collect();
            self.cyclic.detach(id as u64);
            any = true;
        }
        any
    }

    fn pending_reduce(&mut self) -> Option<(usize, u32)> {
        let (rider, r) = self
            .riders
            .iter_mut()
            .enumerate()
            .find(|(_, r)| r.outcome.is_none() && !r.to_reduce.is_empty())?;
        Some((rider, r.to_reduce.pop_front()?))
    }

    /// No read waits and no reduce waits or runs: a container has nothing to do.
    fn idle(&self) -> bool {
        self.cyclic.waiting() == 0
            && self.riders.iter().all(|r| r.to_reduce.is_empty())
            && self.attempts.is_empty()
    }

    /// Every job attached has its answer (or failed): nothing keeps the scan going.
    fn all_answered(&self) -> bool {
        self.riders.iter().all(|r| r.outcome.is_some())
    }

    fn release(&mut self, container: &str) {
        if let Some(held) = self.containers.get_mut(container)
            && !held.released
        {
            held.released = true;
            self.releases.push(container.to_owned());
        }
    }

    /// The attempt `name` ended, well or not: its container is free again.
    fn end(&mut self, name: &str) -> Option<Attempt> {
        let attempt = self.attempts.remove(name)?;
        if let Some(held) = self.containers.get_mut(&attempt.container) {
            held.running = None;
        }
        Some(attempt)
    }

    fn done(&mut self, name: &str, done: Done) -> Reply {
        let Some(attempt) = self.end(name) else {
            return kill();
        };
        let node = self
            .containers
            .get(&attempt.container)
            .map(|h| h.http.clone())
            .unwrap_or_default();
        match attempt.task {
            Task::Read(position) => {
                let block = self.order[position];
                let split = self.maps[block].split;
                let n: u64 = name.trim_start_matches("scan-").parse().unwrap_or_default();
                self.reads[block] += 1;
                if let Some(m) = &done.measured {
                    self.bytes_read += m.input_bytes;
                    self.read_seconds += m.seconds;
                }
                for (i, &r) in attempt.riders.iter().enumerate() {
                    let output = self.output_name(block, n, r);
                    let rider = &mut self.riders[r];
                    if rider.cut {
                        continue; // its reduces run on what it had when it stopped
                    }
                    rider.joined_at.get_or_insert(block);
                    rider.read.push(block);
                    rider.outputs.push(OutputRef {
                        split,
                        node: node.clone(),
                        output,
                    });
                    if let Some(stats) = done.riders.get(i) {
                        rider.stats.push((split, stats.clone()));
                    }
                }
                for r in self.cyclic.block_done(position) {
                    let rider = &mut self.riders[r as usize];
                    log_line(&format!(
                        "{} has every block ({} read for it, from block {}): its {} reduces run",
                        rider.application,
                        rider.read.len(),
                        rider.joined_at.unwrap_or(0),
                        rider.reduces
                    ));
                    rider.to_reduce = (0..rider.reduces).collect();
                }
            }
            Task::Reduce { rider, .. } => {
                let r = &mut self.riders[rider];
                r.partials.extend(done.partial);
                r.reduces_done += 1;
                if r.reduces_done == r.reduces && r.outcome.is_none() {
                    let answer = r.app.answer(self.population, &r.stats, &r.partials);
                    r.outcome = Some(Ok(answer));
                }
            }
        }
        Reply::default()
    }

    /// An attempt failed (its task's report, or its container ended under it).
    fn failed(&mut self, name: &str, reason: &str) {
        let Some(attempt) = self.end(name) else {
            return;
        };
        log_line(&format!("{name} ({:?}) failed: {reason}", attempt.task));
        match attempt.task {
            Task::Read(position) => {
                self.cyclic.abandon(position);
                let block = self.order[position];
                let failures = self.read_failures.entry(block).or_default();
                *failures += 1;
                if *failures >= MAX_TASK_FAILURES {
                    let why = format!(
                        "block {block} could not be read {MAX_TASK_FAILURES} times; the last: {reason}"
                    );
                    for r in attempt.riders {
                        self.fail(r, &why);
                    }
                }
            }
            Task::Reduce { rider, reduce } => {
                let r = &mut self.riders[rider];
                r.failures += 1;
                if r.failures >= MAX_TASK_FAILURES {
                    self.fail(
                        rider,
                        &format!("its reduce {reduce} failed {MAX_TASK_FAILURES} times; the last: {reason}"),
                    );
                } else {
                    r.to_reduce.push_back(reduce);
                }
            }
        }
    }

    fn fail(&mut self, rider: usize, why: &str) {
        let r = &mut self.riders[rider];
        if r.outcome.is_none() {
            log_line(&format!("{} fails: {why}", r.application));
            r.outcome = Some(Err(why.to_owned()));
            r.to_reduce.clear();
            self.cyclic.detach(rider as u64);
        }
    }

    /// A rider's view, for its master: how far it is, and its answer once there is one.
    fn rider_view(&self, rider: usize) -> Value {
        let r = &self.riders[rider];
        json!({
            "blocks": self.maps.len(),
            "blocksRead": r.read.len(),
            "processedFraction": r.read.len() as f64 / self.maps.len().max(1) as f64,
            "cutByDeadline": r.cut,
            "reducesDone": r.reduces_done,
            "answer": match &r.outcome {
                Some(Ok(answer)) => answer.clone(),
                _ => Value::Null,
            },
            "error": match &r.outcome {
                Some(Err(why)) => json!(why),
                _ => Value::Null,
            },
            "scan": self.scan_view(rider),
        })
    }

    /// The scan as one rider saw it: where it joined, what was read for it and for all.
    fn scan_view(&self, rider: usize) -> Value {
        let r = &self.riders[rider];
        json!({
            "host": self.application,
            "jobs": self.riders.len(),
            "joinedAtBlock": r.joined_at,
            "blocksReadForIt": r.read,
            "scanOrder": self.order,
            // Every read the host made so far, for every job: each block once per cycle.
            "blockReads": self.reads,
            "bytesRead": self.bytes_read,
        })
    }

    fn status(&self) -> Value {
        json!({
            "sharedScan": true,
            "application": self.application,
            "blocks": self.maps.len(),
            "blockReads": self.reads,
            "bytesRead": self.bytes_read,
            "closing": self.closing,
            "jobs": self.riders.iter().map(|r| json!({
                "application": r.application,
                "blocksRead": r.read.len(),
                "reducesDone": r.reduces_done,
                "answered": r.outcome.is_some(),
            })).collect::<Vec<_>>(),
        })
    }

    fn held(&self) -> u32 {
        self.containers.values().filter(|h| !h.released).count() as u32
    }

    /// The next allocate call: a container for every read or reduce that could start now,
    /// up to the cap, and the host's own job's progress.
    fn allocate_request(&mut self) -> AllocateRequest {
        let waiting = self.cyclic.waiting() as u32
            + self
                .riders
                .iter()
                .map(|r| r.to_reduce.len() as u32)
                .sum::<u32>();
        let busy = self.attempts.len() as u32;
        let want = (waiting + busy).min(self.max_containers);
        let outstanding = want.saturating_sub(self.held());
        let own = &self.riders[0];
        let total = self.maps.len().max(1) as u32;
        AllocateRequest {
            application_id: self.application.clone(),
            asks: vec![ResourceRequest {
                priority: 1,
                resource_name: "*".into(),
                capability: self.capability,
                num_containers: outstanding,
                relax_locality: true,
            }],
            releases: std::mem::take(&mut self.releases),
            progress: f64::from(own.read.len() as u32) / f64::from(total),
            tasks: Some(TaskCounts {
                maps_done: own.read.len() as u32,
                maps_to_run: total,
                reduces_done: own.reduces_done,
            }),
            job_type: None,
            job: None,
        }
    }

    fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
        for status in reply.completed {
            let Some(held) = self.containers.remove(&status.container_id) else {
                continue;
            };
            if let Some(name) = held.running {
                let why = format!(
                    "its container {} ended ({:?})",
                    status.container_id, status.end
                );
                self.failed(&name, &why);
            }
        }
        let mut fresh = reply.allocated;
        let room = self.max_containers.saturating_sub(self.held()) as usize;
        for extra in fresh.split_off(room.min(fresh.len())) {
            self.releases.push(extra.container_id);
        }
        for c in &fresh {
            self.containers.insert(
                c.container_id.clone(),
                Container {
                    http: c.node_http_address.clone(),
                    released: false,
                    running: None,
                },
            );
        }
        fresh
    }
}

fn kill() -> Reply {
    Reply {
        kill: true,
        ..Reply::default()
    }
}

type St = AxumState<Arc<Shared>>;

async fn next(AxumState(shared): St, Path(container): Path<String>) -> Json<Order> {
    let order = shared.long_poll(|s| s.next_order(&container)).await;
    Json(order.unwrap_or(Order::Wait))
}

async fn started() -> Json<Reply> {
    Json(Reply::default())
}

async fn progress(AxumState(shared): St, Path(attempt): Path<String>) -> Json<Reply> {
    let live = shared.look(|s| s.attempts.contains_key(&attempt));
    Json(if live { Reply::default() } else { kill() })
}

async fn done(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Done>,
) -> Json<Reply> {
    Json(shared.with(|s| s.done(&attempt, body)))
}

#[derive(Deserialize)]
struct Failed {
    reason: String,
}

async fn failed(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Failed>,
) -> Json<Reply> {
    shared.with(|s| s.failed(&attempt, &body.reason));
    Json(Reply::default())
}

#[derive(Deserialize)]
struct FromBody {
    from: usize,
}

/// A reduce runs once its job has every block: its outputs are all listed at once.
async fn outputs(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FromBody>,
) -> Json<Outputs> {
    Json(shared.look(|s| {
        match s.attempts.get(&attempt).map(|a| a.task) {
            Some(Task::Reduce { rider, .. }) if s.riders[rider].outcome.is_none() => Outputs {
                outputs: s.riders[rider]
                    .outputs
                    .iter()
                    .skip(body.from)
                    .cloned()
                    .collect(),
                complete: true,
                kill: false,
            },
            _ => Outputs {
                outputs: Vec::new(),
                complete: true,
                kill: true,
            },
        }
    }))
}

/// `shuffled` and `ready`: a reduce on a shared scan keeps all its input.
async fn noted() -> Json<Reply> {
    Json(Reply::default())
}

#[derive(Deserialize)]
struct FetchFailure {
    output: String,
    node: String,
    #[serde(default)]
    reason: String,
}

async fn fetch_failure(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FetchFailure>,
) -> Json<Reply> {
    shared.with(|s| {
        if let Some(Task::Reduce { rider, .. }) = s.attempts.get(&attempt).map(|a| a.task) {
            let why = format!(
                "the scan's output {} on {} could not be fetched: {}",
                body.output, body.node, body.reason
            );
            s.fail(rider, &why);
        }
    });
    Json(kill())
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Attach {
    application: String,
    app: AppSpec,
    reduces: u32,
    #[serde(default)]
    deadline_ms: Option<Deadline>,
    #[serde(default)]
    guard_seconds: f64,
}

/// A job attaches: 200 with its rider number, or 409 when the host no longer takes jobs.
async fn attach(AxumState(shared): St, Json(body): Json<Attach>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let rider = shared.with(|s| s.attach(body));
    match rider {
        Some(rider) => Json(json!({ "rider": rider })).into_response(),
        None => (
            axum::http::StatusCode::CONFLICT,
            Json(json!({ "error": "this scan is ending: ask the rm who scans the dataset now" })),
        )
            .into_response(),
    }
}

/// A rider's master waits here for its answer: its view once it has one (or after a while).
async fn rider(AxumState(shared): St, Path(rider): Path<usize>) -> Json<Value> {
    let answered = shared
        .long_poll(|s| {
            let r = s.riders.get(rider)?;
            r.outcome.as_ref().map(|_| s.rider_view(rider))
        })
        .await;
    Json(answered.unwrap_or_else(|| {
        shared.look(|s| {
            if rider < s.riders.len() {
                s.rider_view(rider)
            } else {
                json!({ "error": format!("no job {rider} rides this scan") })
            }
        })
    }))
}

async fn status(AxumState(shared): St) -> Json<Value> {
    Json(shared.look(|s| s.status()))
}

fn router(shared: Arc<Shared>, guard: Arc<Gate>) -> axum::Router {
    axum::Router::new()
        .route("/status", get(status))
        // Scraped like any master's; a scan host exports no figures of its own yet.
        .route("/metrics", get(|| async { "" }))
        .route("/mr/runners/{container}/next", post(next))
        .route("/mr/attempts/{attempt}/started", post(started))
        .route("/mr/attempts/{attempt}/progress", post(progress))
        .route("/mr/attempts/{attempt}/done", post(done))
        .route("/mr/attempts/{attempt}/failed", post(failed))
        .route("/mr/attempts/{attempt}/outputs", post(outputs))
        .route("/mr/attempts/{attempt}/shuffled", post(noted))
        .route("/mr/attempts/{attempt}/ready", post(noted))
        .route("/mr/attempts/{attempt}/fetch-failure", post(fetch_failure))
        .route("/mr/scan/attach", post(attach))
        .route("/mr/scan/riders/{rider}", post(rider))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .layer(axum::middleware::from_fn_with_state(guard, gate))
        .with_state(shared)
}

/// A shared-scan job's master: hosts its dataset's scan or rides the one running, and
/// reports its answer to the rm.
pub(super) async fn job(
    spec: &Spec,
    rm: &Arc<RmClient>,
    application: &str,
    started_ms: i64,
) -> Result<()> {
    let guard = Gate::from_env()?;
    let app = app_spec(&spec.job)?;
    let dataset = spec.job.input.clone().ok_or_else(|| {
        anyhow!("a sharedScan job needs an input: the dataset whose scan to share")
    })?;
    let kind = format!("{}@{dataset}", app.kind());
    let maps = plan_maps(rm, &spec.job, &app).await?;
    anyhow::ensure!(!maps.is_empty(), "dataset {dataset} has no blocks");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the master's umbilical port")?;
    let url = format!("http://{}", listener.local_addr()?);
    let mut order: Vec<usize> = (0..maps.len()).collect();
    order.shuffle(&mut Rng::seed_from_u64(spec.job.seed ^ 0x5CA7));
    let mut scan = Scan::new(url.clone(), application, maps, order);
    scan.master_attempt = std::env::var("APP_ATTEMPT")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    scan.map_min_seconds = spec.job.map_min_seconds.clamp(0.0, 86_400.0);
    scan.seed = spec.job.seed;
    scan.capability.memory_mb = spec.job.memory_mb;
    if let Some(cap) = spec.job.max_containers {
        scan.max_containers = cap;
    }
    let population = scan.population;
    let shared = Arc::new(Shared {
        state: Mutex::new(scan),
        changed: Notify::new(),
    });
    let blocks = population.maps as usize;
    serve_and_register(
        rm,
        listener,
        router(shared.clone(), guard.clone()),
        blocks,
        spec.job.reduces,
        &kind,
    )
    .await?;
    // The job as it rides: a deadline only under `dart` (`full` is the exact answer).
    let me = Attach {
        application: application.to_owned(),
        app: app.clone(),
        reduces: spec.job.reduces,
        deadline_ms: spec.deadline_unless_full(),
        guard_seconds: spec.job.guard_seconds,
    };
    // Who scans the dataset: this master, or the host it attaches to. A host that is ending
    // refuses (409); by then it has handed the dataset back, so asking again finds another.
    let mut tries = 0;
    let view = loop {
        tries += 1;
        let who = rm
            .call(
                reqwest::Method::POST,
                &format!("/ws/v1/yard/mapreduce/scans/{dataset}"),
                Some(json!({ "url": url })),
            )
            .await?;
        let token = who["token"]
            .as_str()
            .ok_or_else(|| anyhow!("the rm's scan registry gave no scan credential: {who}"))?
            .to_owned();
        if who["hosting"] == json!(true) {
            // The rm hands the same credential to every job it sends to ride this scan.
            let _ = guard.scan.set(token);
            log_line(&format!(
                "{application} hosts the shared scan of {dataset} ({} blocks)",
                population.maps
            ));
            break host(&shared, rm, &dataset, me).await?;
        }
        let host_url = who["url"].as_str().unwrap_or_default().to_owned();
        match ride(rm, &host_url, &token, &me).await {
            Ok(view) => break view,
            Err(e) if tries < 20 => {
                log_line(&format!(
                    "cannot ride the scan at {host_url}: {e:#}; asking again"
                ));
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(e),
        }
    };
    if let Some(why) = view["error"].as_str() {
        bail!("the shared scan gave no answer: {why}");
    }
    let result = result(spec, &kind, view, started_ms);
    rm.app_call(reqwest::Method::PUT, "result", result).await?;
    Ok(())
}

/// Rides the scan at `host`: attaches, then waits for the answer, calling the rm meanwhile
/// (a master that goes silent is taken for dead) with how many blocks were read for it.
async fn ride(rm: &RmClient, host: &str, token: &str, me: &Attach) -> Result<Value> {
    let (http, application) = (rm.http(), &me.application);
    let attached = http
        .post(format!("{host}/mr/scan/attach"))
        .bearer_auth(token)
        .json(me)
        .send()
        .await?
        .error_for_status()?
        .json::<Value>()
        .await?;
    let rider = attached["rider"]
        .as_u64()
        .ok_or_else(|| anyhow!("the host answered {attached} to the attach"))?;
    log_line(&format!(
        "{application} rides the shared scan at {host} as job {rider}"
    ));
    let mut unreachable_since: Option<Instant> = None;
    loop {
        let view = http
            .post(format!("{host}/mr/scan/riders/{rider}"))
            .bearer_auth(token)
            .send()
            .await
            .and_then(|r| r.error_for_status());
        let view = match view {
            Ok(r) => r.json::<Value>().await?,
            Err(e) => {
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(30) {
                    bail!("the scan's host at {host} is gone: {e}");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        unreachable_since = None;
        let answered = !view["answer"].is_null() || !view["error"].is_null();
        let (read, blocks) = (
            view["blocksRead"].as_u64().unwrap_or(0) as u32,
            view["blocks"].as_u64().unwrap_or(1).max(1) as u32,
        );
        let request = AllocateRequest {
            application_id: application.to_owned(),
            asks: Vec::new(),
            releases: Vec::new(),
            // Once answered the job is done, whatever share of the blocks it read.
            progress: if answered {
                1.0
            } else {
                f64::from(read) / f64::from(blocks)
            },
            tasks: Some(TaskCounts {
                maps_done: read,
                maps_to_run: blocks,
                reduces_done: view["reducesDone"].as_u64().unwrap_or(0) as u32,
            }),
            job_type: None,
            job: None,
        };
        if let Err(e) = rm
            .app_call(reqwest::Method::POST, "allocate", json!(request))
            .await
        {
            log_line(&format!("allocate: {e:#}"));
        }
        if answered {
            return Ok(view);
        }
    }
}

/// Hosts the scan, its own job its first rider, until no job rides it; returns the own
/// job's view once the scan has ended.
async fn host(
    shared: &Arc<Shared>,
    rm: &Arc<RmClient>,
    dataset: &str,
    me: Attach,
) -> Result<Value> {
    let application = me.application.clone();
    shared.with(|s| s.attach(me));
    let exe = std::env::current_exe()
        .context("cannot find the yard binary for the task runners")?
        .display()
        .to_string();
    let url = shared.look(|s| s.url.clone());
    let mut own_answered = false;
    loop {
        let changed = shared.changed.notified();
        if shared.look(|s| s.cut_due(now_ms())) {
            shared.changed.notify_waiters();
        }
        let request = shared.look(|s| s.allocate_request());
        let releases = request.releases.clone();
        match rm
            .app_call(reqwest::Method::POST, "allocate", json!(request))
            .await
            .and_then(|v| serde_json::from_value::<AllocateReply>(v).map_err(Into::into))
        {
            Ok(reply) if reply.allocated.is_empty() && reply.completed.is_empty() => {}
            Ok(reply) => {
                for c in shared.with(|s| s.allocated(reply)) {
                    let (shared, rm, exe, url) =
                        (shared.clone(), rm.clone(), exe.clone(), url.clone());
                    tokio::spawn(async move {
                        if let Err(e) = start_runner(rm.http(), &exe, &url, &c).await {
                            log_line(&format!(
                                "container {} could not start: {e:#}",
                                c.container_id
                            ));
                            shared.with(|s| {
                                s.containers.remove(&c.container_id);
                                s.releases.push(c.container_id.clone());
                            });
                        }
                    });
                }
            }
            Err(e) => {
                log_line(&format!("allocate: {e:#}"));
                shared.look(|s| s.releases.extend(releases));
            }
        }
        // The own job's answer goes to the rm as soon as it is there; the app runs on while
        // other jobs ride.
        if !own_answered && shared.look(|s| s.riders[0].outcome.is_some()) {
            own_answered = true;
            log_line("this job has its answer; the scan goes on while other jobs ride it");
        }
        if shared.look(|s| s.all_answered() && s.idle()) {
            // Hand the dataset back first, then refuse: a job that attached in between is
            // served before the end.
            if let Err(e) = rm
                .call(
                    reqwest::Method::DELETE,
                    &format!("/ws/v1/yard/mapreduce/scans/{dataset}"),
                    None,
                )
                .await
            {
                log_line(&format!("cannot hand the scan of {dataset} back: {e:#}"));
            }
            let ended = shared.with(|s| {
                s.closing = s.all_answered() && s.idle();
                s.closing
            });
            if ended {
                break;
            }
        }
        let _ = tokio::time::timeout(ALLOCATE_EVERY, changed).await;
    }
    let (view, nodes, releases) = shared.with(|s| {
        let all: Vec<String> = s.containers.keys().cloned().collect();
        s.releases.extend(all);
        (
            s.rider_view(0),
            s.used_nodes.clone(),
            std::mem::take(&mut s.releases),
        )
    });
    let last = AllocateRequest {
        releases,
        ..shared.look(|s| s.allocate_request())
    };
    let _ = rm
        .app_call(reqwest::Method::POST, "allocate", json!(last))
        .await;
    delete_outputs(rm, &application, nodes).await;
    log_line(&format!(
        "the shared scan of {dataset} ends: {}",
        shared.look(|s| s.status())
    ));
    Ok(view)
}

/// The result the rm keeps for a job on a shared scan: its answer with the job's metadata as a
/// Dart job's (`answer`) and how the scan served it. Its policy is `full` (every block, the
/// exact answer) or, with a deadline, `scan-deadline` (yard's rule, `Scan::cut_due`).
fn result(spec: &Spec, kind: &str, view: Value, started_ms: i64) -> Value {
    let finished_ms = now_ms();
    let fraction = view["processedFraction"].as_f64().unwrap_or(0.0);
    let deadline_ms = spec.deadline_unless_full();
    let job = json!({
        "policy": if deadline_ms.is_some() { "scan-deadline" } else { PolicyKind::Full.name() },
        "kind": kind,
        "k": view["blocksRead"],
        "maps": view["blocks"],
        "processedFraction": fraction,
        "cutByDeadline": view["cutByDeadline"],
        "sharedScan": view["scan"],
    });
    let times = against_deadline(spec.deadline, started_ms, finished_ms, fraction);
    with_job(view["answer"].clone(), job, times, fraction)
}

#[cfg(test)]
mod tests;
