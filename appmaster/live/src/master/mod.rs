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

mod costs;
mod metrics;
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
use serde_json::{Value, json};
use tokio::sync::Notify;
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split, SyntheticTask};
use yard_appmaster::policy::{
    Estimate, Event, Location, NodeId, PolicyKind, PowerLaw, Profile, Progress, RackId, Rng,
};
use yard_appmaster::submission::synthetic_kind;
use yard_profiles::ProfileStore;
use yard_wire::deadline::DeadlineOutcome;
use yard_wire::limits;
use yard_wire::protocol::{Dataset, Resource};

use crate::{BlockRef, Order};
use recovery::{read_kept, recoverable};
use rm::{RmClient, allocate_loop};
use state::{MapInput, Phase, Shared, State, log_line, now_ms};
use typing::{job_type_json, save_types};
use umbilical::{Gate, umbilical, with};

/// How often the master calls the rm, and ticks the policy (straggler detection).
const ALLOCATE_EVERY: Duration = Duration::from_millis(100);
const TICK_EVERY: Duration = Duration::from_millis(500);
/// How long a long-poll (a runner's `next`, a reducer's `outputs`) waits before answering
/// "nothing yet".
const LONG_POLL: Duration = Duration::from_secs(5);
/// A task that fails this often fails the job (Hadoop's `mapreduce.map.maxattempts`): a
/// deterministic failure (bad input, a bug) must not be retried for ever.
const MAX_TASK_FAILURES: u32 = 4;

#[derive(Args)]
pub struct MasterArgs {
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
    /// Synthetic jobs: each map's seconds (comma-separated), instead of `--maps` and
    /// `--map-seconds`; each map's split bytes and output bytes (default 1 MiB and
    /// `--map-output-bytes`); each reduce's seconds, instead of `--reduce-seconds`.
    #[arg(long, value_delimiter = ',')]
    map_seconds_each: Vec<f64>,
    #[arg(long, value_delimiter = ',')]
    map_input_bytes_each: Vec<u64>,
    #[arg(long, value_delimiter = ',')]
    map_output_bytes_each: Vec<u64>,
    #[arg(long, value_delimiter = ',')]
    reduce_seconds_each: Vec<f64>,
    /// Synthetic jobs: replay this trace's job instead (Rumen records task durations).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The trace's job: its id, or its index in the file.
    #[arg(long, default_value = "0")]
    job: String,
    /// Multiplies the trace's durations.
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Every map of a built-in app takes at least this many seconds.
    #[arg(long, default_value_t = 0.0)]
    map_min_seconds: f64,
    /// The deadline guard fires this many seconds before the deadline (0: no guard). With
    /// `dart` it is a floor: `dart` stops its maps at the last moment its estimate leaves for
    /// the answer, and at this floor stops only what will no longer end in time.
    #[arg(long, default_value_t = DEFAULT_GUARD_SECONDS)]
    guard_seconds: f64,
    /// Fault injection: the map of this split hangs until it is killed.
    #[arg(long, hide = true)]
    hang_split: Option<u32>,
    /// At most this many task containers held at once (the job's `maxContainers`); none: as
    /// many as the policy wants.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_containers: Option<u32>,
    /// Share one scan of `--input` with the other shared-scan jobs over it (`scan.rs`).
    #[arg(long)]
    shared_scan: bool,
}

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

fn app_spec(args: &MasterArgs) -> Result<AppSpec> {
    if args.app == "synthetic"
        && let Some(trace) = &args.trace
    {
        let (maps, reduce_seconds) =
            crate::synthetic::from_trace(trace, &args.job, args.time_scale)?;
        return Ok(AppSpec::Synthetic {
            maps,
            reduce_seconds,
        });
    }
    if args.app == "synthetic" && !args.map_seconds_each.is_empty() {
        let each = &args.map_seconds_each;
        let bytes = |list: &[u64], i: usize, default: u64| match list.is_empty() {
            true => default,
            false => list.get(i).copied().unwrap_or(default),
        };
        anyhow::ensure!(
            [&args.map_input_bytes_each, &args.map_output_bytes_each]
                .iter()
                .all(|l| l.is_empty() || l.len() == each.len()),
            "--map-input-bytes-each and --map-output-bytes-each take one entry per map ({})",
            each.len()
        );
        let maps = each
            .iter()
            .enumerate()
            .map(|(i, &seconds)| SyntheticTask {
                seconds,
                input_bytes: bytes(&args.map_input_bytes_each, i, 1 << 20),
                output_bytes: bytes(&args.map_output_bytes_each, i, args.map_output_bytes),
            })
            .collect();
        let reduce_seconds = match args.reduce_seconds_each.is_empty() {
            true => vec![args.reduce_seconds; args.reduces.max(1) as usize],
            false => args.reduce_seconds_each.clone(),
        };
        return Ok(AppSpec::Synthetic {
            maps,
            reduce_seconds,
        });
    }
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
            reduce_seconds: match args.reduce_seconds_each.is_empty() {
                true => vec![args.reduce_seconds; args.reduces as usize],
                false => args.reduce_seconds_each.clone(),
            },
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
                sha256: b.sha256.clone(),
            }),
            at: Vec::new(),
            nodes: b.nodes.clone(),
        })
        .collect())
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
    population: Population,
    record: yard_appmaster::policy::RunRecord,
    deadline: f64,
    /// Seconds from a container becoming free to its next task process starting.
    overheads: Vec<f64>,
    /// Maps an earlier master attempt finished, taken back.
    recovered: u32,
    /// The job's type (`typing::job_type_json`), set by `job` once this run's types are
    /// stored (the store's may win).
    job_type: Value,
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
async fn run_phase(shared: &Arc<Shared>, phase: Phase) -> Result<Outcome> {
    let deadline = phase.deadline;
    let guard = phase
        .guard
        .map(|g| yard_appmaster::policy::guard_margin(g, deadline));
    // Woken when the policy finishes: the answer goes at once, not at the next tick.
    let finished = with(shared, |s| {
        s.start_phase(phase);
        s.phase_finished.clone()
    });
    let started = tokio::time::Instant::now();
    let at = |seconds: f64| started + Duration::from_secs_f64(seconds.clamp(0.0, 1e9));
    let mut tick = tokio::time::interval(TICK_EVERY);
    loop {
        let (guarded, asked) = with(shared, |s| {
            s.job
                .as_ref()
                .map_or((false, None), |j| (j.policy.progress().guarded, j.wake_at))
        });
        let wake = match guard {
            Some(margin) if !guarded => at(deadline - margin),
            Some(_) => at(deadline),
            None => at(1e9),
        };
        // The policy's own moment (`Decision::WakeAt`); any change may bring a new one.
        let wake = asked.map_or(wake, |a| wake.min(at(a)));
        let ticked = tokio::select! {
            _ = tick.tick() => true,
            _ = tokio::time::sleep_until(wake) => false,
            _ = finished.notified() => false,
            _ = shared.changed.notified() => false,
        };
        let mut s = shared.lock();
        if let Some(fatal) = s.job.as_ref().and_then(|j| j.fatal.clone()) {
            bail!(fatal);
        }
        if let Some(job) = s.job.as_mut()
            && job.finished.is_none()
            && job.wake_at.is_some_and(|a| job.now() >= a)
        {
            job.wake_at = None;
            s.feed(Event::Wake);
        }
        if let (Some(margin), Some(job)) = (guard, s.job.as_mut())
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
                population: job.population,
                record: job.observer.record(),
                deadline: job.deadline,
                recovered: job.recovered,
                job_type: Value::Null,
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

/// Runs inside the master container the rm started.
pub fn master(args: MasterArgs) -> Result<()> {
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
    let rm = Arc::new(RmClient::new(&rm_url, &application));
    let figures = std::sync::OnceLock::new();
    let outcome = match args.shared_scan {
        true => scan::job(&args, &rm, &application, started_ms).await,
        false => job(&args, &rm, &application, profiles, started_ms, &figures).await,
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
    if let Err(e) = rm
        .app_call(
            reqwest::Method::POST,
            "unregister",
            json!({ "succeeded": succeeded, "diagnostics": diagnostics }),
        )
        .await
    {
        // The job's own error (if any) is the one worth reporting.
        log_line(&format!("cannot unregister: {e:#}"));
    }
    outcome
}

async fn job(
    args: &MasterArgs,
    rm: &Arc<RmClient>,
    application: &str,
    profiles: Option<PathBuf>,
    started_ms: i64,
    figures: &std::sync::OnceLock<Arc<Shared>>,
) -> Result<()> {
    let guard = Gate::from_env()?;
    let app = app_spec(args)?;
    // A recurring job is the same application over the same (growing) dataset: its profile
    // is kept per application, parameters and input.
    // A synthetic job may name its own kind (`yard replay`: every trace job its own history).
    let kind = match (&args.input, &app) {
        (Some(input), _) => format!("{}@{input}", app.kind()),
        (None, AppSpec::Synthetic { .. }) => synthetic_kind(&args.params)
            .ok_or_else(|| anyhow!("--param kind=NAME: letters, digits, '-', '_', '.'"))?,
        (None, _) => app.kind(),
    };
    let exe = std::env::current_exe()
        .context("cannot find the yard binary for the task runners")?
        .display()
        .to_string();
    let task = Resource {
        memory_mb: args.memory_mb,
        vcores: 1,
    };
    let (locations, rack_of, cluster_slots) = locations(rm, task).await?;
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
        state: Mutex::new(State::new(
            url.clone(),
            application.to_owned(),
            app.clone(),
            args.reduces,
            args.seed,
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
        s.map_min_seconds = args.map_min_seconds.clamp(0.0, 86_400.0);
        s.hang_split = args.hang_split;
        s.max_containers = args.max_containers;
        s.cluster_slots = cluster_slots;
    });
    log_line(&format!(
        "task slots: {} on the cluster beside this master, --max-containers {}: the policy's allotment {}",
        cluster_slots.map_or("unknown".into(), |s| s.to_string()),
        args.max_containers
            .map_or("not set".into(), |c| c.to_string()),
        with(&shared, |s| s.allotment()).map_or("none".into(), |a| a.to_string()),
    ));
    serve_and_register(
        rm,
        listener,
        umbilical(shared.clone(), guard),
        maps.len(),
        args.reduces,
        &kind,
    )
    .await?;
    log_line(&format!(
        "registered {application}: {} over {} maps under {}, umbilical {url}",
        app.name(),
        maps.len(),
        args.policy
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
    let estimates = !matches!(args.policy, PolicyKind::Full);
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
    let result = if args.sample_only {
        json!({
            "processedFraction": 0.0,
            "answer": { "app": app.name(), "sampled": true },
        })
    } else {
        // What the sampler just stored, if it ran; else what was loaded above.
        let stored = match &store {
            Some(store) if sampled => store.load(&kind).await?,
            _ => stored,
        };
        let profile = stored.profiler(default_profile()).profile();
        let deadline = costs::policy_deadline(args.deadline_ms, now_ms(), finish_margin);
        let phase_start_ms = now_ms();
        let recovered = recoverable(&kept, &maps);
        let job = Phase {
            policy: args.policy,
            maps,
            population,
            profile,
            deadline,
            sampler: false,
            recovered,
            // The guard holds a deadline; `full`'s contract is the exact answer, however late.
            guard: (args.deadline_ms.is_some()
                && args.policy != PolicyKind::Full
                && args.guard_seconds > 0.0)
                .then_some(args.guard_seconds),
            answer_cost: cut_lead,
            warm_launch,
        };
        let outcome = run_phase(&shared, job).await;
        save_types(&shared, store.as_ref(), &kind).await;
        let mut outcome = outcome?;
        finished = Some(outcome.finished);
        steps.push(("types stored", Instant::now()));
        outcome.job_type = with(&shared, |s| job_type_json(&s.typing));
        if let Some(store) = &store {
            store.add_run(&kind, now_ms(), &outcome.record).await?;
        }
        steps.push(("run stored", Instant::now()));
        // This run's launches and grants with the stored costs; its answer path is measured
        // only once the answer is in.
        let known = with(&shared, |s| s.costs.with_stored(&stored_costs));
        answer(
            args,
            &app,
            &kind,
            &outcome,
            sampled,
            (started_ms, phase_start_ms),
            costs::LiveCosts::of(&known).json(finish_margin, cut_lead),
        )
    };
    steps.push(("answer built", Instant::now()));
    rm.app_call(reqwest::Method::PUT, "result", result).await?;
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
    let body = json!({
        "trackingUrl": format!("{url}/status"),
        "maps": maps,
        "reduces": reduces,
        "jobKind": kind,
    });
    rm.app_call(reqwest::Method::POST, "register", body).await?;
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
    (started_ms, phase_start_ms): (i64, i64),
    live_costs: Value,
) -> Value {
    let p = outcome.progress;
    let answer = app.answer(outcome.population, &outcome.stats, &outcome.partials);
    let finished_ms = phase_start_ms + (outcome.finished_at * 1000.0) as i64;
    let job = json!({
        "policy": args.policy.name(),
        "kind": kind,
        "k": p.k,
        "maps": p.maps,
        "processedFraction": p.processed_fraction(),
        "estimateAtClose": outcome.closed.and_then(|(_, e)| e).map(|e| e.total),
        // Dart eq. (1)'s T_J from the close's parts, before `forecast_cut`'s cap at D.
        "estimateAtCloseUncapped": outcome.closed.and_then(|(_, e)| e).map(|e| e.uncapped()),
        "mapPhaseClosedAt": outcome.closed.map(|(t, _)| t),
        // The estimate in force at the answer: the latest `Reforecast`'s, else the close's.
        "estimateAtEnd": outcome
            .reforecast
            .map(|(_, e)| e.total)
            .or(outcome.closed.and_then(|(_, e)| e).map(|e| e.total)),
        "reforecastAt": outcome.reforecast.map(|(t, _)| t),
        "jobSeconds": outcome.finished_at,
        "policyDeadline": outcome.deadline,
        "taskSamplerRan": sampled,
        "recoveredMaps": outcome.recovered,
        "guardFired": p.guarded,
        "reducesAbandoned": p.reduces_abandoned,
        "schedulingOverheadMs": overhead_summary(&outcome.overheads),
        // This cluster's measured costs (`costs.rs`), seconds, and the margin this run kept.
        "liveCosts": live_costs,
        // The input read over time, from the master's start (as `completionSeconds`).
        "inputRead": input_read(
            &outcome.read,
            (phase_start_ms - started_ms) as f64 / 1000.0,
            outcome.population.bytes,
        ),
        "jobType": outcome.job_type,
        // The cap on task containers held at once (`maxContainers`), and the most it held.
        "maxContainers": args.max_containers,
        "peakContainers": outcome.peak_containers,
        // What this run measured (the job profiler's record): mean map seconds node-local
        // and not, and every reduce's (input bytes, seconds); `yard replay` times k_max by it.
        "measured": {
            "mapLocalSeconds": outcome.record.map_local,
            "mapRemoteSeconds": outcome.record.map_remote,
            "reduceSamples": outcome.record.reduce_samples,
        },
    });
    let times = against_deadline(
        args.deadline_ms,
        started_ms,
        finished_ms,
        p.processed_fraction(),
    );
    with_job(answer, job, times, p.processed_fraction())
}

/// At most this many points of `inputRead`'s curve.
const INPUT_READ_POINTS: usize = 1000;

/// The input read over time: `[seconds from the master's start, bytes read by then]`, a point
/// per map output as it was listed (past [`INPUT_READ_POINTS`] maps, every n-th and the last:
/// between points the curve reads low, never high), beside all the input's bytes.
fn input_read(read: &[(f64, u64)], offset: f64, input_bytes: u64) -> Value {
    let every = read.len().div_ceil(INPUT_READ_POINTS).max(1);
    let mut total = 0u64;
    let mut at = Vec::new();
    for (i, &(seconds, bytes)) in read.iter().enumerate() {
        total = total.saturating_add(bytes);
        if (i + 1) % every == 0 || i + 1 == read.len() {
            at.push(json!([offset + seconds, total]));
        }
    }
    json!({ "inputBytes": input_bytes, "at": at })
}

/// The bytes an `inputRead` curve had read by `seconds` (from the master's start).
pub fn read_by(input_read: &Value, seconds: f64) -> Option<u64> {
    let mut last = 0;
    for point in input_read["at"].as_array()? {
        let (t, bytes) = (point[0].as_f64()?, point[1].as_u64()?);
        if t > seconds {
            break;
        }
        last = bytes;
    }
    Some(last)
}

/// A job's times against its deadline, as every answer carries them; its `outcome` by the
/// rule the rm judges the answer by too (`DeadlineOutcome::of_answer`), on the master's clock.
fn against_deadline(
    deadline_ms: Option<i64>,
    started_ms: i64,
    finished_ms: i64,
    fraction: f64,
) -> serde_json::Map<String, Value> {
    let outcome = deadline_ms.map(|d| DeadlineOutcome::of_answer(d, finished_ms, fraction));
    let mut times = serde_json::Map::new();
    times.insert(
        "completionSeconds".into(),
        json!((finished_ms - started_ms) as f64 / 1000.0),
    );
    times.insert(
        "deadlineSeconds".into(),
        json!(deadline_ms.map(|d| (d - started_ms) as f64 / 1000.0)),
    );
    times.insert(
        "deadlineMet".into(),
        json!(deadline_ms.map(|d| finished_ms <= d)),
    );
    times.insert("outcome".into(), json!(outcome));
    times
}

/// The result the rm keeps: the application's `answer` with the job's metadata (`job` and its
/// `times`) under `job`, and the processed fraction.
fn with_job(
    mut answer: Value,
    mut job: Value,
    times: serde_json::Map<String, Value>,
    fraction: f64,
) -> Value {
    if let Some(job) = job.as_object_mut() {
        job.extend(times);
    }
    if let Some(object) = answer.as_object_mut() {
        object.insert("job".into(), job);
    }
    json!({ "processedFraction": fraction, "answer": answer })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_slots_are_what_the_running_nodes_hold_less_the_masters_container() {
        let node = |state: &str, memory: u64, vcores: u64| {
            json!({ "id": "n:1", "state": state,
                    "totalResource": { "memory": memory, "vCores": vcores } })
        };
        let nodes = |list: Vec<Value>| json!({ "nodes": { "node": list } });
        let task = Resource {
            memory_mb: 256,
            vcores: 1,
        };
        // The demo at scale: one node of two one-core containers, one of them the master's.
        assert_eq!(
            task_slots(&nodes(vec![node("RUNNING", 1024, 2)]), task),
            Some(1)
        );
        // The default demo: three such nodes, five task slots.
        let three = vec![node("RUNNING", 1024, 2); 3];
        assert_eq!(task_slots(&nodes(three), task), Some(5));
        // Memory binds where it is the fewer; a lost node holds nothing.
        let mixed = vec![node("RUNNING", 512, 8), node("LOST", 4096, 4)];
        assert_eq!(task_slots(&nodes(mixed), task), Some(1));
        // Nothing said of resources: no allotment, not zero.
        assert_eq!(
            task_slots(&json!({ "nodes": { "node": [{ "id": "n:1" }] } }), task),
            None
        );
        assert_eq!(task_slots(&json!({}), task), None);
    }
}
