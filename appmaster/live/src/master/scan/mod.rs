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
//! its processed fraction and bounds. A deadline moved, or given to a job that had none, while
//! it rides (`PUT …/deadline`) reaches the host through the job's master (each rider's poll
//! carries it; the host hears its own from the rm) and the rule works to it from then on.
//! Every other job reads every block (an exact answer).
//!
//! What it leaves out: a read that fails is read again; a map output that a reducer cannot
//! fetch fails that job (its blocks are not read again for it). The host's `maxContainers`
//! caps the scan; a rider's own is not used.
//!
//! Who calls: the host's task routes take its job's token, as every master's (`Gate`); the
//! rider routes (`/mr/scan/attach`, `/mr/scan/riders/{n}`) take the scan's credential, which
//! the rm hands the host and every job it sends to ride (riders are other applications'
//! masters: the host's job token is not theirs).

//!
//! Where: this file holds the scan's state (`Scan`, its riders, attempts and containers) and
//! the host's and a rider's runs (`job`); `state.rs` is what the scan does with each
//! happening (a container granted, a task asking for work, a map done), `routes.rs` the
//! host's task and rider routes over it.

mod routes;
mod state;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Notify;
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split};
use yard_appmaster::policy::{PolicyKind, Rng};
use yard_cluster::scans::CyclicScan;
use yard_wire::answer::{AnswerJob, ScanFigures};
use yard_wire::deadline::Deadline;
use yard_wire::jobs::ScanJoined;
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, JoinScan, MasterAnswer, Resource, TaskCounts,
};
use yard_wire::views::YardAppReply;

use super::nodemanager::start_runner;
use super::rm::RmClient;
use super::state::{MapInput, log_line, now_ms};
use super::umbilical::Gate;
use super::{
    ALLOCATE_EVERY, LONG_POLL, Spec, against_deadline, app_spec, delete_outputs, plan_maps,
    serve_and_register, with_job,
};
use crate::OutputRef;
use routes::router;

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

/// A job's ask to ride the scan (`POST /mr/scan/attach`), as its master sends it.
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

/// A rider's poll for its answer (`POST /mr/scan/riders/{n}`): the deadline its master holds
/// now, from its own calls to the rm, so that one moved or given while it rides reaches the
/// host (`None`: none, or a `full` job, which keeps no deadline).
#[derive(Deserialize, serde::Serialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RiderPoll {
    #[serde(default)]
    deadline_ms: Option<Deadline>,
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
    let kind = app.job_kind(spec.job.reduces, &[&dataset]);
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
    // The job as it rides: a deadline only under `dart` (`full` is the exact answer), also
    // one moved or given while it rides.
    let follows = spec.job.policy != PolicyKind::Full;
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
    let (view, deadline) = loop {
        tries += 1;
        let join = JoinScan { url: url.clone() };
        let who: ScanJoined = serde_json::from_value(
            rm.call(
                reqwest::Method::POST,
                &format!("/ws/v1/yard/mapreduce/scans/{dataset}"),
                Some(serde_json::to_value(&join).context("a join is JSON")?),
            )
            .await?,
        )
        .context("the rm's scan registry answered no scan")?;
        let token = who.token;
        if who.hosting {
            // The rm hands the same credential to every job it sends to ride this scan.
            let _ = guard.scan.set(token);
            log_line(&format!(
                "{application} hosts the shared scan of {dataset} ({} blocks)",
                population.maps
            ));
            break host(&shared, rm, &dataset, me, spec.deadline, follows).await?;
        }
        let host_url = who.scan.url;
        match ride(rm, &host_url, &token, &me, spec.deadline, follows).await {
            Ok(ridden) => break ridden,
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
    let result = result(
        (&kind, spec.job.seed),
        view,
        (started_ms, deadline),
        follows,
    );
    rm.app_call::<YardAppReply>(reqwest::Method::PUT, "result", &result)
        .await?;
    Ok(())
}

/// Rides the scan at `host`: attaches, then waits for the answer, calling the rm meanwhile
/// (a master that goes silent is taken for dead) with how many blocks were read for it. The
/// rm's replies carry the job's deadline as it holds it now: one that moved (or was given)
/// ends the wait at once and goes to the host with the next poll, when the job `follows`
/// deadlines. Its view, and its deadline at the end.
async fn ride(
    rm: &RmClient,
    host: &str,
    token: &str,
    me: &Attach,
    mut deadline: Option<Deadline>,
    follows: bool,
) -> Result<(Value, Option<Deadline>)> {
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
    let mut last = Value::Null;
    // The rm hears from this master once a `RIDER_REPORT_EVERY`, however fast the host's
    // views come, and at once with the answer.
    let mut reported_at = Instant::now();
    loop {
        let poll = RiderPoll {
            deadline_ms: deadline.filter(|_| follows),
        };
        let asking = http
            .post(format!("{host}/mr/scan/riders/{rider}"))
            .bearer_auth(token)
            .json(&poll)
            .send();
        tokio::pin!(asking);
        // While the host holds the poll (up to `LONG_POLL`), the rm hears from this master
        // every second.
        let view = loop {
            let due = RIDER_REPORT_EVERY.saturating_sub(reported_at.elapsed());
            tokio::select! {
                answer = &mut asking => break Some(answer.and_then(|r| r.error_for_status())),
                () = tokio::time::sleep(due) => {
                    reported_at = Instant::now();
                    let now = report(rm, application, &last, false).await;
                    if now.is_some() && now != deadline {
                        deadline = now;
                        if follows {
                            break None; // asked again at once, with the new deadline
                        }
                    }
                }
            }
        };
        let Some(view) = view else { continue };
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
        if answered || reported_at.elapsed() >= RIDER_REPORT_EVERY {
            reported_at = Instant::now();
            let now = report(rm, application, &view, answered).await;
            if now.is_some() {
                deadline = now;
            }
        }
        if answered {
            return Ok((view, deadline));
        }
        last = view;
    }
}

/// How often a rider's master calls the rm while the host holds its poll.
const RIDER_REPORT_EVERY: Duration = Duration::from_secs(1);

/// A rider's call to the rm (`allocate`, no asks): its progress from the host's latest view of
/// it (`Null` before any). The deadline the rm holds now, if the call went through.
async fn report(
    rm: &RmClient,
    application: &str,
    view: &Value,
    answered: bool,
) -> Option<Deadline> {
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
    match rm
        .app_call::<AllocateReply>(reqwest::Method::POST, "allocate", &request)
        .await
    {
        Ok(reply) => reply.deadline,
        Err(e) => {
            log_line(&format!("allocate: {e:#}"));
            None
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
    mut deadline: Option<Deadline>,
    follows: bool,
) -> Result<(Value, Option<Deadline>)> {
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
        let reply = rm
            .app_call::<AllocateReply>(reqwest::Method::POST, "allocate", &request)
            .await;
        // The own job's deadline as the rm holds it now: moved or given while it rides.
        if let Some(now) = reply.as_ref().ok().and_then(|r| r.deadline)
            && deadline != Some(now)
        {
            deadline = Some(now);
            if follows {
                shared.with(|s| s.move_deadline(0, now));
            }
        }
        match reply {
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
        .app_call::<AllocateReply>(reqwest::Method::POST, "allocate", &last)
        .await;
    delete_outputs(rm, &application, nodes).await;
    log_line(&format!(
        "the shared scan of {dataset} ends: {}",
        shared.look(|s| s.status())
    ));
    Ok((view, deadline))
}

/// The result the rm keeps for a job on a shared scan: its answer with the job's metadata as a
/// Dart job's (`answer`) and how the scan served it. Its policy is `full` (every block, the
/// exact answer) or, for a job that `follows` deadlines and has one, `scan-deadline` (yard's
/// rule, `Scan::cut_due`). `view` is the host's report of the job (`ScanState::rider_view`),
/// which may come from another master over HTTP: read by key, its `scan` passed on as the
/// host wrote it. Judged against the deadline as the rm held it at the end (it may have moved).
fn result(
    (kind, seed): (&str, u64),
    view: Value,
    (started_ms, deadline): (i64, Option<Deadline>),
    follows: bool,
) -> MasterAnswer {
    let finished_ms = now_ms();
    let fraction = view["processedFraction"].as_f64().unwrap_or(0.0);
    let job = AnswerJob {
        policy: match deadline.filter(|_| follows) {
            Some(_) => "scan-deadline".into(),
            None => PolicyKind::Full.name().into(),
        },
        kind: kind.into(),
        seed: Some(seed),
        k: view["blocksRead"].as_u64().unwrap_or(0),
        maps: view["blocks"].as_u64().unwrap_or(0),
        processed_fraction: fraction,
        times: against_deadline(deadline, started_ms, finished_ms, fraction),
        run: None,
        scan: Some(ScanFigures {
            cut_by_deadline: view["cutByDeadline"].as_bool().unwrap_or(false),
            shared_scan: view["scan"].clone(),
        }),
    };
    with_job(view["answer"].clone(), &job, fraction)
}

#[cfg(test)]
mod tests;
