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
//!
//! A job kind whose type (seed 002 eq. 1–2: CPU- or IO-bound, map and reduce part each) is not
//! in the store is typed by its first finished map and reduce as the job runs (`typing.rs`);
//! the type rides every allocate request once known, and the job's answer and status show it.
//!
//! Every body the master sends the rm is the type the rm reads it into, and every reply is
//! read as the type the rm answers with (`rm::RmClient::app_call`): `yard_wire`'s
//! `AllocateRequest` (with its `JobProgress`), `Unregister`, `MasterAnswer`, `RecoveryEntries`,
//! `JoinScan`, `OutputCommit`, and the rm's own `MasterRegistration`. Within the answer, the
//! job's line is `yard_wire::answer::AnswerJob`; the application's answer beside it stays a
//! JSON object, its shape the application's (`yard_appmaster::apps`), as is a shared scan's
//! report, which its host master writes.

mod costs;
mod metrics;
mod nodemanager;
mod output;
pub(crate) use output::CommitReply;
mod recovery;
mod rm;
mod scan;
mod state;
mod typing;
mod umbilical;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use serde_json::Value;
use tokio::sync::Notify;
use yard_appmaster::apps::{
    AppSpec, MapStats, Population, ReducePartial, Split, SyntheticTask, streaming,
};
use yard_appmaster::policy::{
    Estimate, Event, Location, NodeId, PolicyKind, PowerLaw, Profile, Progress, RackId, Rng,
};
use yard_appmaster::submission::{JOB_ENV, MapReduceJob, synthetic_kind};
use yard_profiles::ProfileStore;
use yard_rm::rest::MasterRegistration;
use yard_wire::answer::{
    AnswerJob, DeadlineTimes, InputRead, JobTypeView, LiveCostsView, Measured, Overheads,
    RunFigures,
};
use yard_wire::deadline::{Deadline, DeadlineOutcome};
use yard_wire::limits;
use yard_wire::protocol::{Dataset, MasterAnswer, Resource, Unregister};
use yard_wire::replies::{MasterRegistered, Unregistered};
use yard_wire::views::YardAppReply;

use crate::{BlockRef, Order};
use recovery::{read_kept, recoverable};
use rm::{RmClient, allocate_loop};
use state::{MapInput, Phase, Shared, State, log_line, now_ms};
use typing::{job_type_view, save_types};
use umbilical::{Gate, umbilical, with};

/// How often the master calls the rm, and ticks the policy (straggler detection).
const ALLOCATE_EVERY: Duration = Duration::from_millis(100);
const TICK_EVERY: Duration = Duration::from_millis(500);
/// How long a long-poll (a runner's `next`, a reducer's `outputs`) waits before answering
/// "nothing yet".
const LONG_POLL: Duration = Duration::from_secs(5);
/// A task that fails this often fails the job (Hadoop's `mapreduce.map.maxattempts` and
/// `mapreduce.reduce.maxattempts`, which a job may set: `mapMaxAttempts`,
/// `reduceMaxAttempts`): a deterministic failure (bad input, a bug) must not be retried for
/// ever.
const MAX_TASK_FAILURES: u32 = 4;

/// `yard mr-master`'s command line (`yard_appmaster::submission::master_args` writes it): only
/// the deadline, which the rm sets on its clock and is not part of the job. The job itself is
/// not parsed back from flags: the master reads it as submitted, typed, from [`JOB_ENV`]
/// ([`Spec::read`]).
#[derive(Args)]
pub struct MasterArgs {
    /// When the answer is due, ms since the Unix epoch; none: as late as it takes.
    #[arg(long = "deadline-ms")]
    deadline: Option<Deadline>,
}

/// What this master runs: the job as submitted and its deadline, each from its one source.
pub(crate) struct Spec {
    job: MapReduceJob,
    deadline: Option<Deadline>,
}

impl Spec {
    /// The job from `json`, the value of [`JOB_ENV`] (`None`: unset), checked as the rm
    /// checked it.
    fn read(args: MasterArgs, json: Option<&str>) -> Result<Spec> {
        let json = json.ok_or_else(|| {
            anyhow!("{JOB_ENV} is not set: `yard mr-master` runs in a container the rm starts, with the job in its environment (use `yard submit wordcount …`)")
        })?;
        let job: MapReduceJob =
            serde_json::from_str(json).with_context(|| format!("{JOB_ENV} is not a job"))?;
        job.validate()
            .map_err(|e| anyhow!("{JOB_ENV}: the job is not one the rm accepts: {e}"))?;
        Ok(Spec {
            job,
            deadline: args.deadline,
        })
    }

    /// The deadline a shared scan holds the job to: none under `full`, the exact answer.
    fn deadline_unless_full(&self) -> Option<Deadline> {
        self.deadline
            .filter(|_| self.job.policy != PolicyKind::Full)
    }
}

/// Maps the task sampler runs (Dart §5.1).
const SAMPLE_MAPS: u32 = 3;

pub use yard_appmaster::submission::DEFAULT_GUARD_SECONDS;

/// What to assume before anything was measured; the task sampler replaces it on a first run.
fn default_profile() -> Profile {
    Profile {
        map_local: 1.0,
        map_remote: 1.5,
        map_shortest: None,
        map_spread: None,
        partition_bytes: 1e6,
        shuffle_bandwidth: 50e6,
        reduce_time: PowerLaw {
            a: 1e-7,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    }
}

/// The job's application, its synthetic tasks filled in with the defaults a job leaves out.
fn app_spec(job: &MapReduceJob) -> Result<AppSpec> {
    let synthetic = job.app == "synthetic";
    let reduce_seconds = |reduces: u32| match &job.reduce_seconds_each {
        Some(each) => each.clone(),
        None => vec![job.reduce_seconds.unwrap_or(1.0); reduces as usize],
    };
    let map_output_bytes = job.map_output_bytes.unwrap_or(1 << 16);
    if synthetic && let Some(trace) = &job.trace {
        let (maps, reduce_seconds) = crate::synthetic::from_trace(
            std::path::Path::new(trace),
            job.trace_job.as_deref().unwrap_or("0"),
            job.time_scale.unwrap_or(1.0),
        )?;
        return Ok(AppSpec::Synthetic {
            maps,
            reduce_seconds,
        });
    }
    if synthetic && let Some(each) = &job.map_seconds_each {
        let bytes = |list: &Option<Vec<u64>>, i: usize, default: u64| {
            list.as_ref()
                .map_or(default, |l| l.get(i).copied().unwrap_or(default))
        };
        anyhow::ensure!(
            [&job.map_input_bytes_each, &job.map_output_bytes_each]
                .iter()
                .all(|l| l.as_ref().is_none_or(|l| l.len() == each.len())),
            "mapInputBytesEach and mapOutputBytesEach take one entry per map ({})",
            each.len()
        );
        let maps = each
            .iter()
            .enumerate()
            .map(|(i, &seconds)| SyntheticTask {
                seconds,
                input_bytes: bytes(&job.map_input_bytes_each, i, 1 << 20),
                output_bytes: bytes(&job.map_output_bytes_each, i, map_output_bytes),
            })
            .collect();
        return Ok(AppSpec::Synthetic {
            maps,
            reduce_seconds: reduce_seconds(job.reduces.max(1)),
        });
    }
    if synthetic {
        let maps = job.maps.unwrap_or(0);
        anyhow::ensure!(maps > 0, "a synthetic job needs maps");
        return Ok(AppSpec::Synthetic {
            maps: vec![
                SyntheticTask {
                    seconds: job.map_seconds.unwrap_or(1.0),
                    input_bytes: 1 << 20,
                    output_bytes: map_output_bytes,
                };
                maps as usize
            ],
            reduce_seconds: reduce_seconds(job.reduces),
        });
    }
    let mut app = AppSpec::parse(&job.app, &job.param_list()).map_err(|e| anyhow!("{e}"))?;
    if let AppSpec::Streaming { files, .. } = &mut app {
        files.clone_from(&job.files);
    }
    Ok(app)
}

/// Where each streaming map's lines end (LineRecordReader's rule, `streaming::owned_lines`):
/// by split index, whether its block is its dataset's first, and the blocks after it in its
/// dataset (at most `LINE_BLOCKS_CAP`) that its last line may run into.
fn line_splits(maps: &[MapInput]) -> HashMap<u32, crate::Lines> {
    let blocks: Vec<(u32, &BlockRef)> = maps
        .iter()
        .filter_map(|m| m.block.as_ref().map(|b| (m.split.index, b)))
        .collect();
    let mut out = HashMap::new();
    for (i, (index, block)) in blocks.iter().enumerate() {
        let same = |j: usize| {
            blocks
                .get(j)
                .is_some_and(|(_, b)| b.dataset == block.dataset)
        };
        let first = i == 0 || !same(i - 1);
        let after: Vec<BlockRef> = (i + 1..)
            .take_while(|&j| same(j))
            .take(streaming::LINE_BLOCKS_CAP)
            .map(|j| blocks[j].1.clone())
            .collect();
        let more = same(i + 1 + after.len());
        out.insert(*index, crate::Lines { first, after, more });
    }
    out
}

/// Every map of the job, with the racks of the nodes holding its block.
async fn plan_maps(rm: &RmClient, job: &MapReduceJob, app: &AppSpec) -> Result<Vec<MapInput>> {
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
    let names = job.inputs();
    if names.is_empty() {
        bail!("the job names no input: the dataset to read");
    }
    // Several inputs (Hadoop's repeated -input): one map per block of each, in order.
    let mut maps = Vec::new();
    for name in names {
        let dataset: Dataset = serde_json::from_value(
            rm.call(
                reqwest::Method::GET,
                &format!("/ws/v1/yard/datasets/{name}"),
                None,
            )
            .await?,
        )
        .with_context(|| format!("the rm's dataset {name}"))?;
        for b in &dataset.blocks {
            maps.push(MapInput {
                split: Split {
                    index: maps.len() as u32,
                    bytes: b.bytes,
                },
                block: Some(BlockRef {
                    dataset: name.to_owned(),
                    block: b.block.clone(),
                    replicas: b.nodes.clone(),
                    sha256: b.sha256.clone(),
                }),
                at: Vec::new(),
                nodes: b.nodes.clone(),
            });
        }
    }
    Ok(maps)
}

/// The task containers of `task`'s size the rm's running nodes (`GET /ws/v1/cluster/nodes`)
/// hold at once, each node by its `totalResource` (the fewer of its memory's and its cores'),
/// less one for this master's own container (yard's masters ask one core and no more memory
/// than a task). An upper bound on what the job is granted: other jobs may hold some. `None`
/// when no node says its resources.
pub(crate) fn task_slots(nodes: &Value, task: Resource) -> Option<u32> {
    let mut slots: Option<u64> = None;
    for n in nodes["nodes"]["node"].as_array().into_iter().flatten() {
        if n["state"].as_str().is_some_and(|s| s != "RUNNING") {
            continue;
        }
        let total = &n["totalResource"];
        let (Some(memory), Some(vcores)) = (total["memory"].as_u64(), total["vCores"].as_u64())
        else {
            continue;
        };
        let fit = (memory / task.memory_mb.max(1)).min(vcores / u64::from(task.vcores.max(1)));
        slots = Some(slots.unwrap_or(0).saturating_add(fit));
    }
    slots.map(|s| u32::try_from(s.saturating_sub(1)).unwrap_or(u32::MAX))
}

/// Node and rack numbers for the policy, each node's rack by name (for rack asks), and the
/// task slots (`task_slots`), from the rm's node list.
async fn locations(
    rm: &RmClient,
    task: Resource,
) -> Result<(
    HashMap<String, Location>,
    HashMap<String, String>,
    Option<u32>,
)> {
    let nodes = rm
        .call(reqwest::Method::GET, "/ws/v1/cluster/nodes", None)
        .await?;
    let slots = task_slots(&nodes, task);
    let mut racks: BTreeMap<String, u32> = BTreeMap::new();
    let (mut out, mut rack_of) = (HashMap::new(), HashMap::new());
    for (i, n) in nodes["nodes"]["node"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = n["rack"].as_str().unwrap_or("default-rack").to_owned();
        let next = racks.len() as u32;
        let rack = *racks.entry(name.clone()).or_insert(next);
        if let Some(id) = n["id"].as_str() {
            rack_of.insert(id.to_owned(), name);
            out.insert(
                id.to_owned(),
                Location {
                    node: NodeId(i as u32),
                    rack: RackId(rack),
                },
            );
        }
    }
    Ok((out, rack_of, slots))
}

/// What a finished phase leaves.
struct Outcome {
    progress: Progress,
    finished_at: f64,
    closed: Option<(f64, Option<Estimate>)>,
    reforecast: Option<(f64, Estimate)>,
    stats: Vec<(Split, MapStats)>,
    partials: Vec<ReducePartial>,
    /// The output dataset's accepted parts (`output`), by name.
    parts: BTreeMap<String, yard_wire::protocol::BlockReplicas>,
    population: Population,
    record: yard_appmaster::policy::RunRecord,
    /// The policy's deadline at the end (`Job::deadline`; `None`: none).
    deadline: Option<f64>,
    /// The job's deadline at the end (it may have moved while it ran; `None`: none, or the
    /// task sampler's phase).
    due: Option<Deadline>,
    /// Seconds from a container becoming free to its next task process starting.
    overheads: Vec<f64>,
    /// Maps an earlier master attempt finished, taken back.
    recovered: u32,
    /// The job's type (`typing::job_type_view`), set by `job` once this run's types are
    /// stored (the store's may win).
    job_type: Option<JobTypeView>,
    /// The most task containers this master held at once so far (`State::peak_containers`).
    peak_containers: u32,
    /// When the policy finished (its `Finish`): the answer path starts here.
    finished: Instant,
    /// The input read over time (`Job::read`).
    read: Vec<(f64, u64)>,
}

/// Runs one policy over its maps to its `Finish`. With a guard, at `deadline − guard` the
/// policy hears `Event::Guard` (it stops the maps and cuts the reduces), and at the deadline
/// (the policy's, which keeps the measured answer path for the answer's upload, `costs.rs`) `Event::Deadline`: it
/// finishes with what has arrived, reduces that have not answered abandoned.
///
/// The job proper's deadline (`Phase::basis`) may move while it runs (`PUT …/deadline`; the rm
/// says it in each allocate reply): the policy then hears `Event::DeadlineChanged` and the
/// guard and the deadline (`Job::deadline`, the one copy) move with it. The task sampler has
/// no basis: it answers no deadline.
async fn run_phase(shared: &Arc<Shared>, phase: Phase) -> Result<Outcome> {
    let mut basis = phase.basis;
    let guard_seconds = phase.guard;
    // No guard without a deadline: it waits for one (`PUT …/deadline` may give one).
    let margin_for = |deadline: Option<f64>| {
        deadline
            .zip(guard_seconds)
            .map(|(d, g)| yard_appmaster::policy::guard_margin(g, d))
    };
    // Woken when the policy finishes: the answer goes at once, not at the next tick.
    let finished = with(shared, |s| {
        s.start_phase(phase);
        s.phase_finished.clone()
    });
    let started = tokio::time::Instant::now();
    // The clamp keeps `Duration` in range (a policy's moment is any f64); it is no deadline.
    let at = |seconds: f64| started + Duration::from_secs_f64(seconds.clamp(0.0, 1e9));
    let mut tick = tokio::time::interval(TICK_EVERY);
    loop {
        let (guarded, asked, deadline) = with(shared, |s| {
            s.job.as_ref().map_or((false, None, None), |j| {
                (j.policy.progress().guarded, j.wake_at, j.deadline)
            })
        });
        // The guard's moment, then the deadline's; none without a guard (or a deadline).
        let wake = deadline
            .zip(margin_for(deadline))
            .map(|(d, margin)| if guarded { at(d) } else { at(d - margin) });
        // The policy's own moment (`Decision::WakeAt`); any change may bring a new one.
        let wake = match (wake, asked.map(at)) {
            (Some(w), Some(a)) => Some(w.min(a)),
            (w, a) => w.or(a),
        };
        let sleep = async {
            match wake {
                Some(wake) => tokio::time::sleep_until(wake).await,
                None => std::future::pending().await,
            }
        };
        let ticked = tokio::select! {
            _ = tick.tick() => true,
            _ = sleep => false,
            _ = finished.notified() => false,
            _ = shared.changed.notified() => false,
        };
        let mut s = shared.lock();
        if let Some(fatal) = s.job.as_ref().and_then(|j| j.fatal.clone()) {
            bail!(fatal);
        }
        // A deadline set or moved (none is taken away: the rm only sets one).
        if let Some(b) = basis.as_mut()
            && let Some(heard) = s.deadline
            && Some(heard) != b.deadline
            && let Some(job) = s.job.as_mut()
            && job.finished.is_none()
        {
            b.deadline = Some(heard);
            // `costs::policy_deadline` of a deadline that is there.
            let moved = heard.seconds_from(b.at_ms, b.margin);
            log_line(&format!(
                "{:.3} s: the deadline moved: the policy's is {moved:.3} s (was {})",
                job.now(),
                seconds_or_none(job.deadline)
            ));
            job.deadline = Some(moved);
            s.feed(Event::DeadlineChanged(moved));
        }
        if let Some(job) = s.job.as_mut()
            && job.finished.is_none()
            && job.wake_at.is_some_and(|a| job.now() >= a)
        {
            job.wake_at = None;
            s.feed(Event::Wake);
        }
        if let Some(job) = s.job.as_mut()
            && let Some(deadline) = job.deadline
            && let Some(margin) = margin_for(job.deadline)
            && job.finished.is_none()
        {
            let now = job.now();
            if !job.policy.progress().guarded && now >= deadline - margin {
                log_line(&format!(
                    "{now:.3} s: the deadline guard fires ({margin:.1} s before the deadline): maps stop, reduces answer from what they have"
                ));
                s.feed(Event::Guard);
            } else if job.policy.progress().guarded && now >= deadline {
                let p = job.policy.progress();
                log_line(&format!(
                    "{now:.3} s: the deadline: {} reduces have not answered; the answer goes without them",
                    p.reduces - p.reduces_done
                ));
                s.feed(Event::Deadline);
            }
        }
        if let Some(job) = s.job.as_ref()
            && let Some((progress, finished_at)) = job.finished
        {
            // The metrics keep the phase's last figures once its job is gone.
            s.metrics.refresh(&s);
            let job = s.job.take().expect("the job");
            let overheads = std::mem::take(&mut s.overheads);
            return Ok(Outcome {
                overheads,
                progress,
                finished_at,
                closed: job.closed,
                reforecast: job.reforecast,
                stats: job.stats,
                partials: job.partials,
                parts: job.output.parts,
                population: job.population,
                record: job.observer.record(),
                deadline: job.deadline,
                due: basis.and_then(|b| b.deadline),
                recovered: job.recovered,
                job_type: None,
                peak_containers: s.peak_containers,
                finished: job.started + Duration::from_secs_f64(finished_at.max(0.0)),
                read: job.read,
            });
        }
        if ticked {
            s.feed(Event::Tick);
        }
        drop(s);
        shared.changed.notify_waiters();
    }
}

/// `9.700 s`, or `none`: a policy deadline for the log.
fn seconds_or_none(seconds: Option<f64>) -> String {
    seconds.map_or("none".into(), |s| format!("{s:.3} s"))
}

/// Runs inside the master container the rm started.
pub fn master(args: MasterArgs) -> Result<()> {
    let spec = Spec::read(args, std::env::var(JOB_ENV).ok().as_deref())?;
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
        .block_on(run(spec, rm, application, profiles))
}

async fn run(
    spec: Spec,
    rm_url: String,
    application: String,
    profiles: Option<PathBuf>,
) -> Result<()> {
    let started_ms = now_ms();
    let rm = Arc::new(RmClient::new(&rm_url, &application));
    let figures = std::sync::OnceLock::new();
    let outcome = match spec.job.shared_scan {
        true => scan::job(&spec, &rm, &application, started_ms).await,
        false => job(&spec, &rm, &application, profiles, started_ms, &figures).await,
    };
    // The rm keeps this master's last figures and serves them in its place: the process ends
    // now, likely before Prometheus has found it (a short job's is never scraped otherwise).
    if let Some(shared) = figures.get() {
        let text = {
            let state = shared.lock();
            state.metrics.scrape(&state)
        };
        if let Err(e) = rm.leave_final_figures(text).await {
            log_line(&format!(
                "cannot leave the final metrics with the rm: {e:#}"
            ));
        }
    }
    // Why it failed goes to the application's diagnostics (YARN's FinishApplicationMaster).
    let (succeeded, diagnostics) = match &outcome {
        Ok(()) => (true, String::new()),
        Err(e) => {
            log_line(&format!("the job failed: {e:#}"));
            (
                false,
                limits::cut(&format!("{e:#}"), limits::MAX_DIAGNOSTICS_CHARS),
            )
        }
    };
    let unregister = Unregister {
        succeeded,
        diagnostics,
    };
    if let Err(e) = rm
        .app_call::<Unregistered>(reqwest::Method::POST, "unregister", &unregister)
        .await
    {
        // The job's own error (if any) is the one worth reporting.
        log_line(&format!("cannot unregister: {e:#}"));
    }
    outcome
}

async fn job(
    spec: &Spec,
    rm: &Arc<RmClient>,
    application: &str,
    profiles: Option<PathBuf>,
    started_ms: i64,
    figures: &std::sync::OnceLock<Arc<Shared>>,
) -> Result<()> {
    let guard = Gate::from_env()?;
    let app = app_spec(&spec.job)?;
    // A recurring job is the same application over the same (growing) dataset: its profile
    // is kept per application, parameters and input (`AppSpec::job_kind`).
    // A synthetic job may name its own kind (`yard replay`: every trace job its own history).
    let kind = match (&spec.job.input, &app) {
        (None, AppSpec::Synthetic { .. }) => synthetic_kind(&spec.job.param_list())
            .ok_or_else(|| anyhow!("params.kind: letters, digits, '-', '_', '.'"))?,
        _ => app.job_kind(spec.job.reduces, &spec.job.inputs()),
    };
    let exe = std::env::current_exe()
        .context("cannot find the yard binary for the task runners")?
        .display()
        .to_string();
    let task = Resource {
        memory_mb: spec.job.memory_mb,
        vcores: 1,
    };
    let (locations, rack_of, cluster_slots) = locations(rm, task).await?;
    let mut maps = plan_maps(rm, &spec.job, &app).await?;
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
        state: Mutex::new(State::new(
            url.clone(),
            application.to_owned(),
            app.clone(),
            spec.job.reduces,
            spec.job.seed,
            task,
            (locations, rack_of),
        )),
        changed: Notify::new(),
    });
    let _ = figures.set(shared.clone());
    with(&shared, |s| {
        s.master_attempt = std::env::var("APP_ATTEMPT")
            .ok()
            .and_then(|a| a.parse().ok())
            .unwrap_or(1);
        s.map_min_seconds = spec.job.map_min_seconds.clamp(0.0, 86_400.0);
        s.hang_split = spec.job.hang_split;
        s.max_containers = spec.job.max_containers;
        s.max_attempts = (
            spec.job.map_max_attempts.unwrap_or(MAX_TASK_FAILURES),
            spec.job.reduce_max_attempts.unwrap_or(MAX_TASK_FAILURES),
        );
        if matches!(app, AppSpec::Streaming { .. }) {
            s.lines = line_splits(&maps);
        }
        s.cluster_slots = cluster_slots;
        s.deadline = spec.deadline;
    });
    log_line(&format!(
        "task slots: {} on the cluster beside this master, --max-containers {}: the policy's allotment {}",
        cluster_slots.map_or("unknown".into(), |s| s.to_string()),
        spec.job
            .max_containers
            .map_or("not set".into(), |c| c.to_string()),
        with(&shared, |s| s.allotment()).map_or("none".into(), |a| a.to_string()),
    ));
    serve_and_register(
        rm,
        listener,
        umbilical(shared.clone(), guard),
        maps.len(),
        with(&shared, |s| s.reduces),
        &kind,
    )
    .await?;
    log_line(&format!(
        "registered {application}: {} over {} maps under {}, umbilical {url}",
        app.name(),
        maps.len(),
        spec.job.policy
    ));
    // What an earlier attempt of this master kept: its finished maps.
    let kept = read_kept(rm).await;

    let store = match &profiles {
        Some(path) => Some(ProfileStore::open(path).await?),
        None => {
            log_line("YARD_PROFILES is not set: no profile is read or stored");
            None
        }
    };
    let stored = match &store {
        Some(store) => store.load(&kind).await?,
        None => Default::default(),
    };
    // This cluster's costs as earlier masters measured them: the answer's margin comes from
    // them. The cluster is the rm's address, as this master was given it.
    let cluster = rm.rm.base().to_owned();
    let stored_costs = match &store {
        Some(store) => store.load_costs(&cluster).await?,
        None => Default::default(),
    };
    let live_costs = costs::LiveCosts::of(&stored_costs);
    let finish_margin = live_costs.finish_margin();
    // A cut reduce hears of its cut at its next report (every 50 ms), emits its partial
    // answer and reports it: the last reduces are cut that long (the measured p99; before any
    // cut, its delivery and the answer path's p99) before D.
    let cut_lead = live_costs.cut_lead();
    // The task sampler's maps are timed from their process's start plus a launch as this
    // cluster measured it (its median: most launches are into a warm container); from their
    // launch decision while it has measured none.
    let warm_launch = live_costs.launch.map(|l| l.p50);
    log_line(&format!(
        "live costs on {cluster}: {}; the answer's margin {finish_margin:.3} s, the cut's lead \
         {cut_lead:.3} s",
        live_costs.describe()
    ));
    // A kind typed before is typed from its first task on; an untyped part gets its probe.
    with(&shared, |s| {
        s.typing = yard_appmaster::typing::Typing::new(stored.job_type);
    });
    log_line(&format!(
        "job type of {kind:?}: {}",
        stored.job_type.describe()
    ));
    // The rm is called from here on: a kind typed before is typed in its first request.
    let allocator = tokio::spawn(allocate_loop(shared.clone(), rm.clone(), exe));
    // The task sampler runs once per kind: runs alone (a `full` run, say) give reduce samples
    // all of one size, from which f(d) cannot be fitted.
    let cold = stored.sampled.is_empty();
    let estimates = !matches!(spec.job.policy, PolicyKind::Full);
    // The whole input is the population, for the task sampler's reduces too: its maps are a
    // sample of it.
    let population = Population {
        maps: maps.len() as u32,
        bytes: maps.iter().map(|m| m.split.bytes).sum(),
    };
    let mut sampled = false;
    // When the job proper's policy finished: its answer path is measured from it (a
    // sample-only run answers no deadline: its path is not one).
    let mut finished = None;
    // The answer path's steps, for the log.
    let mut steps: Vec<(&str, Instant)> = Vec::new();
    if spec.job.sample_only || (cold && estimates) {
        // Dart §5.1, the task sampler: a few maps chosen at random, reduces at geometric sizes.
        let mut rng = Rng::seed_from_u64(spec.job.seed ^ 0x5A3B);
        let mut sample = maps.clone();
        sample.shuffle(&mut rng);
        sample.truncate(SAMPLE_MAPS.max(1) as usize);
        let sampler = Phase {
            policy: PolicyKind::Full,
            maps: sample,
            population,
            profile: default_profile(),
            basis: None,
            sampler: true,
            recovered: Vec::new(),
            guard: None,
            answer_cost: cut_lead,
            warm_launch,
        };
        let outcome = run_phase(&shared, sampler).await;
        save_types(&shared, store.as_ref(), &kind).await;
        let outcome = outcome?;
        if let Some(store) = &store {
            // Its reduce samples are the sampler's; the rest (map durations, partition size,
            // shuffle bandwidth) is a run like any other.
            let mut record = outcome.record.clone();
            store.add_samples(&kind, &record.reduce_samples).await?;
            record.reduce_samples.clear();
            store.add_run(&kind, now_ms(), &record).await?;
        }
        log_line(&format!(
            "task sampler: {:?} in {:.2} s",
            outcome.record, outcome.finished_at
        ));
        sampled = true;
    }
    let result = if spec.job.sample_only {
        // A sample-only run's answer says only that it sampled (`{"app", "sampled": true}`).
        let mut sampled = serde_json::Map::new();
        sampled.insert("app".into(), app.name().into());
        sampled.insert("sampled".into(), true.into());
        MasterAnswer {
            processed_fraction: 0.0,
            answer: Value::Object(sampled),
        }
    } else {
        // What the sampler just stored, if it ran; else what was loaded above.
        let stored = match &store {
            Some(store) if sampled => store.load(&kind).await?,
            _ => stored,
        };
        let profile = stored.profiler(default_profile()).profile();
        let phase_start_ms = now_ms();
        let basis = costs::DeadlineBasis {
            deadline: spec.deadline,
            at_ms: phase_start_ms,
            margin: finish_margin,
        };
        let recovered = recoverable(&kept, &maps);
        // The job proper's tasks write the output; the grant first, so none waits for it.
        if spec.job.output.is_some() {
            output::grant(rm, &shared).await?;
        }
        let job = Phase {
            policy: spec.job.policy,
            maps,
            population,
            profile,
            basis: Some(basis),
            sampler: false,
            recovered,
            // The guard holds a deadline, one given while the job runs too (without one it
            // waits for one); `full`'s contract is the exact answer, however late.
            guard: (spec.job.policy != PolicyKind::Full && spec.job.guard_seconds > 0.0)
                .then_some(spec.job.guard_seconds),
            answer_cost: cut_lead,
            warm_launch,
        };
        let outcome = run_phase(&shared, job).await;
        save_types(&shared, store.as_ref(), &kind).await;
        let mut outcome = outcome?;
        finished = Some(outcome.finished);
        steps.push(("types stored", Instant::now()));
        outcome.job_type = Some(with(&shared, |s| job_type_view(&s.typing)));
        if let Some(store) = &store {
            store.add_run(&kind, now_ms(), &outcome.record).await?;
        }
        steps.push(("run stored", Instant::now()));
        // This run's launches and grants with the stored costs; its answer path is measured
        // only once the answer is in.
        let known = with(&shared, |s| s.costs.with_stored(&stored_costs));
        let mut result = answer(
            spec,
            &app,
            &kind,
            &outcome,
            sampled,
            (started_ms, phase_start_ms),
            costs::LiveCosts::of(&known).view(finish_margin, cut_lead),
        );
        // Hadoop's job commit: the accepted parts become the dataset, and the answer names it.
        if let Some(dataset) = &spec.job.output {
            let parts = std::mem::take(&mut outcome.parts);
            // A map-only job's parts are its maps' (those read), else its reduces'.
            let tasks = match &app {
                AppSpec::Streaming { reducer: None, .. } => outcome.population.maps,
                _ => with(&shared, |s| s.reduces),
            };
            let fraction = outcome.progress.processed_fraction();
            let view = output::commit_job(rm, dataset, parts, tasks, fraction).await?;
            steps.push(("output committed", Instant::now()));
            if let Some(answer) = result.answer.as_object_mut() {
                answer.insert(
                    "outputDataset".into(),
                    serde_json::to_value(view).context("the output's view is JSON")?,
                );
            }
        }
        result
    };
    steps.push(("answer built", Instant::now()));
    rm.app_call::<YardAppReply>(reqwest::Method::PUT, "result", &result)
        .await?;
    let accepted = Instant::now();
    steps.push(("the rm accepted it", accepted));
    if let Some(finished) = finished {
        let mut from = finished;
        let each: Vec<String> = steps
            .iter()
            .map(|&(what, at)| {
                let took = at.saturating_duration_since(from).as_secs_f64();
                from = at;
                format!("{what} +{took:.3} s")
            })
            .collect();
        log_line(&format!(
            "answer path {:.3} s: {}",
            accepted.saturating_duration_since(finished).as_secs_f64(),
            each.join(", ")
        ));
    }
    let measured = with(&shared, |s| {
        if let Some(finished) = finished {
            s.costs.answered(finished, accepted);
        }
        std::mem::take(&mut s.costs.measured)
    });
    log_line(&format!(
        "live costs measured by this master: {}",
        costs::LiveCosts::of(&measured).describe()
    ));
    if let Some(store) = &store
        && let Err(e) = store.add_costs(&cluster, now_ms(), &measured).await
    {
        // The answer is in: the costs are for the next master, not worth failing this job.
        log_line(&format!("cannot store the live costs: {e:#}"));
    }
    // The runners go, and the job's map outputs with them.
    let nodes = with(&shared, |s| {
        s.stopping = true;
        for held in s.containers.values_mut() {
            held.orders = VecDeque::from([Order::Exit]);
            held.released = true;
        }
        let all: Vec<String> = s.containers.keys().cloned().collect();
        s.releases.extend(all);
        s.call_rm.notify_one();
        s.used_nodes.clone()
    });
    let _ = allocator.await;
    delete_outputs(rm, application, nodes).await;
    Ok(())
}

/// Serves the master's routes on `listener`, then registers at the rm with the job's tasks and
/// kind: the rm's deadline policies size its quota by them (and by the kind's profile).
async fn serve_and_register(
    rm: &RmClient,
    listener: tokio::net::TcpListener,
    router: axum::Router,
    maps: usize,
    reduces: u32,
    kind: &str,
) -> Result<()> {
    let url = format!("http://{}", listener.local_addr()?);
    // Small request/response pairs back to back: Nagle's algorithm would hold a reply's last
    // segment for the peer's delayed ACK (40 ms a round on Linux).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    let body = MasterRegistration {
        tracking_url: Some(format!("{url}/status")),
        maps: Some(u32::try_from(maps).context("more maps than a job may have")?),
        reduces: Some(reduces),
        job_kind: Some(kind.to_owned()),
        profile: None,
    };
    rm.app_call::<MasterRegistered>(reqwest::Method::POST, "register", &body)
        .await?;
    Ok(())
}

/// The job's map outputs go from every node that ran its tasks.
async fn delete_outputs(rm: &RmClient, application: &str, nodes: BTreeSet<String>) {
    let token = crate::job_token();
    for node in nodes {
        let url = format!("{node}/ws/v1/node/shuffle/{application}");
        let mut request = rm.http().delete(&url);
        if let Some(token) = &token {
            request = request.bearer_auth(token);
        }
        if let Err(e) = request.send().await {
            log_line(&format!("cannot delete the map outputs at {url}: {e}"));
        }
    }
}

/// Mean and quantiles of the scheduling overheads, in milliseconds; `None` without any.
fn overhead_summary(seconds: &[f64]) -> Option<Overheads> {
    if seconds.is_empty() {
        return None;
    }
    let mut ms: Vec<f64> = seconds.iter().map(|s| s * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    Some(Overheads {
        tasks: ms.len() as u64,
        mean: ms.iter().sum::<f64>() / ms.len() as f64,
        p50: at(0.5),
        p99: at(0.99),
        max: at(1.0),
    })
}

/// The result the rm keeps: the application's answer with the job's metadata.
fn answer(
    spec: &Spec,
    app: &AppSpec,
    kind: &str,
    outcome: &Outcome,
    sampled: bool,
    (started_ms, phase_start_ms): (i64, i64),
    live_costs: LiveCostsView,
) -> MasterAnswer {
    let p = outcome.progress;
    let answer = app.answer(outcome.population, &outcome.stats, &outcome.partials);
    let finished_ms = phase_start_ms + (outcome.finished_at * 1000.0) as i64;
    let closed = outcome.closed.and_then(|(_, e)| e);
    let run = RunFigures {
        estimate_at_close: closed.map(|e| e.total),
        // Dart eq. (1)'s T_J from the close's parts, before `forecast_cut`'s cap at D.
        estimate_at_close_uncapped: closed.map(|e| e.uncapped()),
        map_phase_closed_at: outcome.closed.map(|(t, _)| t),
        // The estimate in force at the answer: the latest `Reforecast`'s, else the close's.
        estimate_at_end: outcome
            .reforecast
            .map(|(_, e)| e.total)
            .or(closed.map(|e| e.total)),
        reforecast_at: outcome.reforecast.map(|(t, _)| t),
        job_seconds: outcome.finished_at,
        policy_deadline: outcome.deadline,
        task_sampler_ran: sampled,
        recovered_maps: outcome.recovered,
        guard_fired: p.guarded,
        reduces_abandoned: p.reduces_abandoned,
        reduce_input_bytes: p.reduce_input_bytes,
        reduce_kept_bytes: p.reduce_kept_bytes,
        scheduling_overhead_ms: overhead_summary(&outcome.overheads),
        // This cluster's measured costs (`costs.rs`), seconds, and the margin this run kept.
        live_costs,
        // The input read over time, from the master's start (as `completionSeconds`).
        input_read: input_read(
            &outcome.read,
            (phase_start_ms - started_ms) as f64 / 1000.0,
            outcome.population.bytes,
        ),
        job_type: outcome.job_type.clone(),
        max_containers: spec.job.max_containers,
        peak_containers: outcome.peak_containers,
        // What this run measured; `yard replay` times k_max by it.
        measured: Measured {
            map_local_seconds: outcome.record.map_local,
            map_remote_seconds: outcome.record.map_remote,
            reduce_samples: outcome.record.reduce_samples.clone(),
        },
    };
    let fraction = p.processed_fraction();
    let job = AnswerJob {
        policy: spec.job.policy.name().into(),
        kind: kind.into(),
        seed: Some(spec.job.seed),
        k: p.k.into(),
        maps: p.maps.into(),
        processed_fraction: fraction,
        times: against_deadline(outcome.due, started_ms, finished_ms, fraction),
        run: Some(run),
        scan: None,
    };
    with_job(answer, &job, fraction)
}

/// At most this many points of `inputRead`'s curve.
const INPUT_READ_POINTS: usize = 1000;

/// The input read over time: a point per map output as it was listed (past
/// [`INPUT_READ_POINTS`] maps, every n-th and the last: between points the curve reads low,
/// never high), beside all the input's bytes.
fn input_read(read: &[(f64, u64)], offset: f64, input_bytes: u64) -> InputRead {
    let every = read.len().div_ceil(INPUT_READ_POINTS).max(1);
    let mut total = 0u64;
    let mut at = Vec::new();
    for (i, &(seconds, bytes)) in read.iter().enumerate() {
        total = total.saturating_add(bytes);
        if (i + 1) % every == 0 || i + 1 == read.len() {
            at.push((offset + seconds, total));
        }
    }
    InputRead { input_bytes, at }
}

/// A job's times against its deadline, as every answer carries them; its `outcome` by the
/// rule the rm judges the answer by too (`DeadlineOutcome::of_answer`), on the master's clock.
fn against_deadline(
    deadline: Option<Deadline>,
    started_ms: i64,
    finished_ms: i64,
    fraction: f64,
) -> DeadlineTimes {
    let deadline_ms = deadline.map(Deadline::epoch_ms);
    DeadlineTimes {
        completion_seconds: (finished_ms - started_ms) as f64 / 1000.0,
        deadline_seconds: deadline_ms.map(|d| (d - started_ms) as f64 / 1000.0),
        deadline_met: deadline_ms.map(|d| finished_ms <= d),
        outcome: deadline_ms.map(|d| DeadlineOutcome::of_answer(d, finished_ms, fraction)),
    }
}

/// The result the rm keeps: the application's `answer` (its own JSON object, whose shape is
/// the application's) with the job's line under `job`, and the processed fraction.
fn with_job(mut answer: Value, job: &AnswerJob, fraction: f64) -> MasterAnswer {
    if let Some(object) = answer.as_object_mut() {
        object.insert(
            "job".into(),
            serde_json::to_value(job).expect("a job line is JSON: its keys are strings"),
        );
    }
    MasterAnswer {
        processed_fraction: fraction,
        answer,
    }
}

#[cfg(test)]
mod tests;
