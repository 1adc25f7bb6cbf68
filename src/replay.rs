//! `yard replay`: a trace's first jobs on a live cluster — a running rm (`--rm URL`), or a
//! local one started as `yard up` starts it — each submitted at its submit time compressed by
//! the time scale as a synthetic MapReduce job whose tasks take the durations and write the
//! bytes the simulator's job has; then the `yard sim` kind of table for the live jobs beside
//! the simulator's prediction for the same jobs on the same cluster, and the difference.
//!
//! The conversion (one rule for every format): the trace's jobs are built as `yard sim`
//! builds them (`yard_sim::workloads::trace_jobs`: Rumen and SLS tasks keep their recorded
//! durations, SWIM's are drawn from the seed), then every time in the job is multiplied by the
//! time scale (map durations, the reduce law, the profile; the shuffle bandwidth divided), and
//! the shared cluster's `prepare` draws each deadline, `U[1,2]·T_J`, on the scaled job. A live
//! map takes its scaled duration, has its split's bytes as the estimator's weight and writes
//! its output bytes times the job's byte scale (the time scale, so the shuffle shrinks with
//! the clock, unless that leaves a byte count under 1000: [`byte_scale`]); a live reduce takes
//! its reduce's scaled duration on the job's whole output. On a local cluster each job is its
//! own profile kind whose history is the simulator's profile of it ([`history`]).
//!
//! The prediction is simulated after the live run, with the start-up costs the live jobs
//! measured (`ClusterConfig::master_startup_s`, `task_startup_s`; `--master-startup-s`,
//! `--task-startup-s` override them): jobs due within a second or so live or die by them.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::{Value, json};
use yard_appmaster::policy::{Extensions, PolicyConfig, PolicyKind, RunRecord, Seconds};
use yard_appmaster::submission::{DEFAULT_GUARD_SECONDS, MAX_EACH, MapReduceJob};
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_sim::engine::{MEASURABLE, Moment, Outcome};
use yard_sim::shared::{self, DeadlineFactor, SharedJob, SharedResult};
use yard_sim::table::{Cell, Column, Field, Table, Unit};
use yard_sim::workloads::{self, WorkloadOptions};
use yard_sim::{ClusterConfig, Experiment, Model, SimJob};
use yard_wire::jobs::{AnswerView, JobView};
use yard_wire::views::FinalApplicationStatus;

use crate::client::{Client, Rm};
use crate::local::{LocalCluster, Shape, stop_channel};
use crate::sim::BadInput;
use crate::trace::ReadArgs;

#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The trace to replay (SWIM, Rumen, SLS, SYNTH).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    /// Replay the trace's first N jobs.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    jobs: u64,
    /// Multiply every duration and submit time by X (`0.0167` or `1/60`: an hour in a
    /// minute); map output bytes too.
    #[arg(long, value_name = "X", default_value = "1", value_parser = parse_time_scale)]
    time_scale: f64,
    /// The task policy every job's master runs: dart, dart-paper, aria, ps, late, full, d-wor,
    /// d-wmr, d-wost.
    #[arg(long, value_name = "P", default_value = "dart")]
    policy: PolicyKind,
    /// The cluster policy: the local cluster's rm runs it, the simulator's rm too. With
    /// `--rm`, say the one that rm runs (fifo, fair, edf, minedf, minedf-wc).
    #[arg(long, value_name = "NAME", default_value = "fifo")]
    scheduler: RmPolicy,
    /// A running rm to replay on; without it, a local cluster is started on 127.0.0.1 (as
    /// `yard up` starts one) and stopped at the end.
    #[arg(long, value_name = "URL")]
    rm: Option<String>,
    /// With `--rm`: a file holding your bearer token [default: as `yard submit` finds it].
    #[arg(long, value_name = "FILE", requires = "rm")]
    token_file: Option<PathBuf>,
    /// The cluster's nodes: the local cluster's nodemanagers, and the simulator's. With
    /// `--rm` [default: the rm's running nodes].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    nodes: Option<u32>,
    /// Containers per node (a vcore each), live and simulated: every job's master holds one
    /// (masters together at most `--master-share` of the cluster), tasks the rest. With
    /// `--rm`, say what that rm's nodes hold.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    containers: u32,
    /// The share of the cluster masters may hold together (the local rm's `--master-share`,
    /// and the simulator's); a job whose master finds no room waits, its deadline running.
    /// With `--rm`, that rm's own share is read from it.
    #[arg(long, value_name = "F", default_value_t = 0.5, conflicts_with = "rm", value_parser = parse_share)]
    master_share: f64,
    /// Each job's deadline is U[LO, HI] × its time alone on the whole cluster (ARIA's draw, as
    /// `yard sim --shared`); one number: that factor.
    #[arg(long, value_name = "LO,HI", default_value = "1,2", value_parser = DeadlineFactor::parse)]
    deadline_factor: DeadlineFactor,
    /// The deadline guard, live and simulated (`yard submit --guard-seconds`).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_GUARD_SECONDS)]
    guard: f64,
    /// The local cluster's nodemanager heartbeat (and the simulator's), ms.
    #[arg(long, value_name = "MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    heartbeat_ms: u64,
    /// Give up on jobs still running this many seconds after the last submission (they count
    /// as missed).
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    patience: u64,
    /// The simulated masters' start-up, from their container to asking for tasks [default:
    /// the median live master's, from its process's start to its job phase's, measured by
    /// this run; 0: the prediction of masters that start at once].
    #[arg(long, value_name = "SECONDS", value_parser = parse_cost)]
    master_startup_s: Option<f64>,
    /// The simulated tasks' launch cost, added to every attempt [default: the median over
    /// live jobs of their median task launch (a freed container to its next task's process),
    /// measured by this run; 0: tasks that start at once].
    #[arg(long, value_name = "SECONDS", value_parser = parse_cost)]
    task_startup_s: Option<f64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep the local cluster's directory (the rm's and nodemanagers' logs, and the masters'
    /// and tasks' of the last 50 ended containers per node: set YARD_NM_KEEP_FINISHED for
    /// more) and say where it is; without it, it is removed unless the replay failed.
    #[arg(long, conflicts_with = "rm")]
    keep: bool,
}

/// `0.0167`, or a fraction `1/60`: above 0 and finite.
fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err(format!(
            "{s:?}: give a share above 0 and at most 1, e.g. 0.5"
        )),
    }
}

/// Seconds of start-up: 0 or more, at most an hour.
fn parse_cost(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=3600.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?}: give seconds from 0 to 3600, e.g. 0.2")),
    }
}

pub(crate) fn parse_time_scale(s: &str) -> Result<f64, String> {
    let value = match s.split_once('/') {
        Some((a, b)) => match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) if b != 0.0 => Ok(a / b),
            _ => Err(()),
        },
        None => s.trim().parse::<f64>().map_err(|_| ()),
    };
    match value {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a factor above 0 (0.0167, or 1/60), found {s:?}"
        )),
    }
}

/// The seed when `--seed` is not given (as `yard sim`'s).
const DEFAULT_SEED: u64 = 1;

/// One trace job as the live cluster runs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveJob {
    pub(crate) id: String,
    /// Seconds after the replay's start.
    pub(crate) arrival: Seconds,
    /// Seconds after its submission.
    pub(crate) deadline: Seconds,
    pub(crate) map_seconds: Vec<Seconds>,
    pub(crate) map_input_bytes: Vec<u64>,
    pub(crate) map_output_bytes: Vec<u64>,
    pub(crate) reduce_seconds: Vec<Seconds>,
    /// Its profile store kind's name (`synthetic:NAME`, [`history`]); `None`: `synthetic`.
    pub(crate) kind: Option<String>,
    /// Its bytes over the trace's ([`byte_scale`]).
    pub(crate) byte_scale: f64,
    /// The most containers it may hold (`maxContainers`): the cluster's, as the simulator's
    /// policy is told them (its allotment; the master tells its policy the cap).
    pub(crate) max_containers: Option<u32>,
}

/// Below this many bytes, rounding a live job's byte counts to whole bytes moves them by
/// more than 0.05 %.
const WHOLE_BYTES: f64 = 1000.0;

/// The factor from a trace job's bytes to its live job's: the time scale (the shuffle
/// shrinks with the clock), unless that leaves a byte count the master keeps whole (a map's
/// output, the profile's partition, an earlier run's largest reduce input: eq. 13's
/// `d_{k_i}`) under [`WHOLE_BYTES`]: then as much more as keeps it there, at most 1 (the
/// trace's own bytes). At 1/60, a 24-byte `d_{k_i}` was 0.4 bytes, stored as 1: the live
/// estimate of that job's reduce came out 6.6 times the simulator's.
pub(crate) fn byte_scale(shared: &SharedJob, time_scale: f64) -> f64 {
    let p = &shared.job.profile;
    let smallest = p
        .previous_runs
        .iter()
        .map(|r| r.max_reduce_input)
        .chain([p.partition_bytes])
        .chain(shared.job.truth.maps.iter().map(|m| m.output_bytes as f64))
        .filter(|&b| b > 0.0)
        .fold(f64::INFINITY, f64::min);
    match smallest.is_finite() {
        true => (WHOLE_BYTES / smallest).min(1.0).max(time_scale),
        false => time_scale,
    }
}

/// Every time in `job` times `x`: its maps' durations, its reduce law (`f(d)·x`: the same
/// bytes take `x` times as long), its shuffle (the bandwidth over `x`), and the profile the
/// policy is told, alike. Bytes, counts and the submit time stay (the shared cluster's
/// `prepare` scales arrivals).
pub(crate) fn scale_job(mut job: SimJob, x: f64) -> SimJob {
    for m in &mut job.truth.maps {
        m.duration *= x;
    }
    job.truth.reduce_time.a *= x;
    job.truth.shuffle_bandwidth /= x;
    let p = &mut job.profile;
    p.map_local *= x;
    p.map_remote *= x;
    p.reduce_time.a *= x;
    p.shuffle_bandwidth /= x;
    job
}

/// The live job of a prepared (scaled) one: every map's duration, split bytes and output
/// (times `byte_scale`), every reduce's time on its share of the whole output.
pub(crate) fn live_job(shared: &SharedJob, byte_scale: f64) -> LiveJob {
    let t = &shared.job.truth;
    let output: u64 = t.maps.iter().map(|m| m.output_bytes).sum();
    LiveJob {
        id: shared.job.id.clone(),
        arrival: shared.arrival,
        deadline: shared.deadline,
        map_seconds: t.maps.iter().map(|m| m.duration).collect(),
        map_input_bytes: t.maps.iter().map(|m| m.input_bytes).collect(),
        map_output_bytes: t
            .maps
            .iter()
            .map(|m| (m.output_bytes as f64 * byte_scale).round() as u64)
            .collect(),
        reduce_seconds: t
            .reduce_inputs(output)
            .iter()
            .enumerate()
            .map(|(r, &d)| t.reduce_seconds(r as u32, d as f64))
            .collect(),
        kind: None,
        byte_scale,
        max_containers: None,
    }
}

/// The history the simulator's profile of a job stands for, as the live profile store keeps
/// one: a run record and reduce samples from which the live master's `Profiler` builds the
/// simulated policy's profile, in the live job's bytes (its map output is the trace's times
/// `byte_scale`). The simulator hands every policy its own job's profile (a recurring job
/// measured before, `Model::profiles`); live, a master reads its kind's history from the
/// store, so each trace job is its own kind with this history written before it is submitted.
/// Without it every replayed job was the kind `synthetic`: its masters estimated with the
/// average of the last five trace jobs of any size, and a reduce law fitted across all of
/// them (issue 29: estimation error 88.6 % live against 13.8 % simulated).
pub(crate) fn history(
    shared: &SharedJob,
    byte_scale: f64,
) -> (Vec<RunRecord>, Vec<(f64, Seconds)>) {
    let p = &shared.job.profile;
    let record = RunRecord {
        map_local: Some(p.map_local),
        map_remote: Some(p.map_remote),
        map_shortest: p.map_shortest,
        map_spread: p.map_spread,
        partition_bytes: Some(p.partition_bytes * byte_scale),
        shuffle_bandwidth: Some(p.shuffle_bandwidth * byte_scale),
        k: 0,
        max_reduce_input: 0,
        reduce_samples: Vec::new(),
    };
    // One record per earlier run (eq. 13's `k_i`, `d_{k_i}`), the same means in each.
    let records: Vec<RunRecord> = match p.previous_runs.is_empty() {
        true => vec![record],
        false => p
            .previous_runs
            .iter()
            .map(|r| RunRecord {
                k: r.k,
                max_reduce_input: (r.max_reduce_input * byte_scale).round() as u64,
                ..record.clone()
            })
            .collect(),
    };
    // f(d) = a·d^b over the trace's bytes is a·x^-b·d^b over the live ones (d·x). Three
    // points a factor 4 apart around the largest reduce input, their residuals in log space
    // (e, −2e, e) with e = spread/√6: the least-squares fit (eq. 9) returns a, b and spread.
    let law = p.reduce_time;
    let largest = records
        .iter()
        .map(|r| r.max_reduce_input as f64)
        .fold(0.0, f64::max);
    let centre = match largest > 0.0 {
        true => largest,
        false => (p.partition_bytes * byte_scale).max(1024.0),
    };
    // A map-only job's law takes no time (its live job's one reduce sleeps 0 s): a fit
    // needs times above 0, so a nanosecond stands for none.
    let e = law.spread / 6f64.sqrt();
    let samples = [(0.25, e), (1.0, -2.0 * e), (4.0, e)]
        .iter()
        .map(|&(f, r)| {
            let d = centre * f;
            let t = law.a * (d / byte_scale).powf(law.b) * r.exp();
            (d, if t > 0.0 && t.is_finite() { t } else { 1e-9 })
        })
        .collect();
    (records, samples)
}

/// A job kind and the history written for it: run records and reduce samples.
type KindHistory = (String, Vec<RunRecord>, Vec<(f64, Seconds)>);

/// Writes every job's history (`history`) under its kind into the profile store at `db`.
fn seed_profiles(db: &std::path::Path, jobs: &[KindHistory]) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(async {
            let store = yard_profiles::ProfileStore::open(db).await?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            for (kind, records, samples) in jobs {
                store.add_samples(kind, samples).await?;
                for r in records {
                    store.add_run(kind, now, r).await?;
                }
            }
            anyhow::Ok(())
        })
        .with_context(|| format!("writing the trace jobs' profiles into {}", db.display()))
}

/// The `kind` parameter of the `i`-th trace job `id` (its profile store kind is
/// `synthetic:NAME`).
fn kind_name(i: usize, id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .take(80)
        .collect();
    format!("j{i}.{clean}")
}

impl LiveJob {
    /// The job as the rm's `POST /ws/v1/yard/mapreduce/jobs` takes it. A map-only job still
    /// gathers its answer in one reduce of no time, as `yard submit synthetic --trace` does.
    pub(crate) fn to_job(&self, policy: PolicyKind, seed: u64, guard: f64) -> MapReduceJob {
        let mut job = MapReduceJob::new("synthetic", None);
        job.max_containers = self.max_containers;
        if let Some(name) = &self.kind {
            job.params.insert("kind".into(), name.into());
        }
        job.policy = policy;
        job.seed = seed;
        job.guard_seconds = guard;
        // Whole microseconds: the lists travel in the master's command line.
        let round = |s: &f64| (s * 1e6).round() / 1e6;
        job.map_seconds_each = Some(self.map_seconds.iter().map(round).collect());
        job.map_input_bytes_each = Some(self.map_input_bytes.clone());
        job.map_output_bytes_each = Some(self.map_output_bytes.clone());
        let reduces = match self.reduce_seconds.is_empty() {
            true => vec![0.0],
            false => self.reduce_seconds.iter().map(round).collect(),
        };
        job.reduces = reduces.len() as u32;
        job.reduce_seconds_each = Some(reduces);
        job
    }
}

/// The trace's first `n` jobs as the simulator builds them, every time scaled, with their
/// arrivals, `T_J` and deadlines drawn by the shared cluster's `prepare` on `exp`.
pub(crate) fn prepare(
    workload: &yard_workload::Workload,
    n: usize,
    options: &WorkloadOptions,
    exp: &Experiment,
    factor: DeadlineFactor,
    time_scale: f64,
) -> Vec<SharedJob> {
    let jobs: Vec<SimJob> = workloads::trace_jobs(workload, options)
        .take(n)
        .map(|j| scale_job(j, time_scale))
        .collect();
    shared::prepare(jobs, exp, factor, time_scale)
}

/// The simulated cluster that stands for the live one: `nodes` × `containers`, masters in
/// containers of their own within `master_share`, heartbeats as the nodemanagers', and a map
/// taking its time wherever it runs (a live synthetic map sleeps its seconds on any node: no
/// rack or remote penalty).
pub(crate) fn experiment(
    nodes: u32,
    containers: u32,
    heartbeat_ms: u64,
    seed: u64,
    guard: f64,
    master_share: f64,
) -> Experiment {
    Experiment {
        cluster: ClusterConfig {
            nodes,
            containers_per_node: containers,
            rack_local_factor: 1.0,
            remote_factor: 1.0,
            heartbeat: heartbeat_ms as f64 / 1000.0,
            master_share: Some(master_share),
            ..ClusterConfig::default()
        },
        // The live master's `dart` (`Extensions::LIVE`), so that the prediction runs its policy.
        policy: PolicyConfig {
            dart_extensions: Some(Extensions::LIVE),
            ..PolicyConfig::default()
        },
        seed,
        guard,
        model: Model::default(),
    }
}

/// What became of one live job.
#[derive(Debug, Clone, Default)]
struct LiveResult {
    id: String,
    app: Option<String>,
    /// missed, empty or met; `None`: it never answered (failed, killed, or still running).
    outcome: Option<String>,
    processed_fraction: f64,
    /// From its submission to its answer, seconds.
    completion: Option<Seconds>,
    estimation_error: Option<f64>,
    /// The estimate of the job's time (from its job phase's start) when its map phase closed.
    estimate_at_close: Option<Seconds>,
    /// When its map phase closed and when it answered, from its job phase's start.
    map_closed_at: Option<Seconds>,
    job_seconds: Option<Seconds>,
    guard_fired: bool,
    task_sampler_ran: bool,
    k: u32,
    k_max: Option<u32>,
    state: String,
    /// From its submission to its master's start (the master's clock starts then), seconds.
    master_start: Option<Seconds>,
    /// Its master's start-up: from its start to its job phase's (`completionSeconds −
    /// jobSeconds`), unless the task sampler ran in between.
    master_startup: Option<Seconds>,
    /// Its median task launch: from a container freed to its next task's process started.
    task_startup: Option<Seconds>,
}

/// Median, p80 and mean of an error over some jobs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct ErrorStats {
    jobs: usize,
    median: f64,
    p80: f64,
    mean: f64,
}

impl ErrorStats {
    /// `None` for no values; p80 by the nearest rank (the smallest value with at least 80 %
    /// of the values at or below it).
    fn of(xs: &[f64]) -> Option<ErrorStats> {
        if xs.is_empty() {
            return None;
        }
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = ((0.8 * v.len() as f64).ceil() as usize).clamp(1, v.len());
        Some(ErrorStats {
            jobs: v.len(),
            median: median(&v),
            p80: v[rank - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
struct Row {
    source: &'static str,
    policy: String,
    rm_policy: String,
    jobs: usize,
    missed_fraction: f64,
    empty_fraction: f64,
    met_fraction: f64,
    mean_processed_fraction: f64,
    /// Live: the median over jobs answered both live and simulated of |live − simulated job
    /// time| / simulated job time (job time: from submission to answer); sim: 0.
    median_deviation: Option<f64>,
    /// |T − T̂| / T at map close over the jobs both sides measured it for (the same jobs
    /// live and simulated); `None` when there are none.
    estimation_error: Option<ErrorStats>,
    /// The jobs this side measured an estimation error for, of either side or not.
    estimation_error_jobs: usize,
    mean_k_over_k_max: Option<f64>,
    /// Jobs that never answered (failed, killed, still running at `--patience` or at Ctrl-C):
    /// missed.
    unanswered: usize,
}

pub(crate) fn run(args: ReplayArgs) -> Result<()> {
    if !(0.0..=3_600.0).contains(&args.guard) {
        return Err(BadInput(format!("--guard {}: give 0 to 3600 seconds", args.guard)).into());
    }
    let workload = yard_workload::read_file(&args.trace, &args.read.options())?;
    let n = (args.jobs as usize).min(workload.jobs.len());
    if n == 0 {
        return Err(BadInput(format!("{}: no jobs to replay", args.trace.display())).into());
    }
    let seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    // The cluster: given, or the rm's.
    let remote = match &args.rm {
        Some(url) => {
            let url = url.trim_end_matches('/').to_owned();
            check_loopback_or_any(&url)?;
            let client = Client::new(&Rm {
                rm: url.clone(),
                token_file: args.token_file.clone(),
            })?;
            Some((url, client))
        }
        None => None,
    };
    let nodes = match (&remote, args.nodes) {
        (_, Some(n)) => n,
        (Some((url, client)), None) => {
            let n = client
                .running_nodes()
                .with_context(|| format!("asking {url} for its nodes"))?
                .len() as u32;
            if n == 0 {
                anyhow::bail!("{url} has no running nodes to replay on");
            }
            n
        }
        (None, None) => 2,
    };
    let master_share = match &remote {
        Some((url, client)) => {
            let s = client
                .call(reqwest::Method::GET, "/ws/v1/cluster/scheduler", None)
                .with_context(|| format!("asking {url} for its scheduler"))?;
            s["scheduler"]["schedulerInfo"]["masterShare"]
                .as_f64()
                .with_context(|| format!("{url} does not say its masters' share (masterShare)"))?
        }
        None => args.master_share,
    };
    let mut exp = experiment(
        nodes,
        args.containers,
        args.heartbeat_ms,
        seed,
        args.guard,
        master_share,
    );
    let options = WorkloadOptions {
        seed,
        block_bytes: args.read.options().block_bytes,
        ..WorkloadOptions::default()
    }
    .with_cluster(&exp.cluster)
    .with_model(&exp.model);
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.enable_steady_tick(Duration::from_millis(200));
    spinner.set_message(format!(
        "{n} jobs: each alone on the simulated cluster (T_J, the deadlines)"
    ));
    let prepared = prepare(
        &workload,
        n,
        &options,
        &exp,
        args.deadline_factor,
        args.time_scale,
    );
    let live: Vec<LiveJob> = prepared
        .iter()
        .map(|j| LiveJob {
            max_containers: Some(nodes * args.containers),
            ..live_job(j, byte_scale(j, args.time_scale))
        })
        .collect();
    for j in &live {
        let tasks = j.map_seconds.len().max(j.reduce_seconds.len());
        if tasks > MAX_EACH {
            return Err(BadInput(format!(
                "job {} has {tasks} tasks of a kind; a live replay takes at most {MAX_EACH}: replay fewer jobs (--jobs)",
                j.id
            ))
            .into());
        }
    }
    spinner.finish_and_clear();

    let stop = stop_channel()?;
    let (dir, cluster) = match &remote {
        Some(_) => (None, None),
        None => {
            let dir = std::env::temp_dir().join(format!("yard-replay-{}", std::process::id()));
            let shape = Shape {
                nodes,
                // Vcores bind, as in the simulator: memory for every container to be a master's.
                memory_mb: 4096.max(u64::from(args.containers) * 512),
                vcores: args.containers,
                heartbeat_ms: args.heartbeat_ms,
                rm_bind: "127.0.0.1:0".into(),
                rm_args: vec![
                    "--scheduler".into(),
                    args.scheduler.name().into(),
                    "--master-share".into(),
                    master_share.to_string(),
                ],
                dir: dir.clone(),
                home: None,
            };
            let cluster = LocalCluster::start(&shape);
            (Some(dir), Some(cluster))
        }
    };
    let cluster = cluster.transpose()?;
    let client = match (&remote, &cluster) {
        (Some((_, c)), _) => c,
        (None, Some(c)) => &c.client,
        (None, None) => unreachable!("a cluster either way"),
    };
    let containers = (exp.cluster.nodes * exp.cluster.containers_per_node) as usize;
    // On the local cluster every job is its own kind, its history the simulator's profile
    // of it; a running rm's store is its own (`--rm`): the jobs are the kind `synthetic`.
    let mut live = live;
    if let Some(dir) = &dir {
        let jobs: Vec<KindHistory> = prepared
            .iter()
            .enumerate()
            .zip(&live)
            .map(|((i, j), l)| {
                let (records, samples) = history(j, l.byte_scale);
                (
                    format!("synthetic:{}", kind_name(i, &j.job.id)),
                    records,
                    samples,
                )
            })
            .collect();
        seed_profiles(&dir.join("profiles.db"), &jobs)?;
        for (i, j) in live.iter_mut().enumerate() {
            j.kind = Some(kind_name(i, &j.id));
        }
    }
    let outcome = replay(client, &args, &live, seed, &prepared, containers, &stop);
    drop(cluster);
    if let Some(dir) = dir {
        match (&outcome, args.keep) {
            (Ok(_), false) => {
                let _ = std::fs::remove_dir_all(&dir);
            }
            _ => eprintln!("logs kept in {}", dir.display()),
        }
    }
    let live_results = outcome?;
    // The prediction, with the start-up costs the live jobs just measured (or the flags'):
    // its deadlines are the live jobs', drawn on the cluster without them.
    let startup = Startup::of(&args, &live_results);
    exp.cluster.master_startup_s = startup.master_s;
    exp.cluster.task_startup_s = startup.task_s;
    let (sim_results, _) = shared::simulate_day(&prepared, args.scheduler, args.policy, &exp);
    let report = report(
        &args,
        nodes,
        seed,
        &prepared,
        &sim_results,
        &live_results,
        (master_share, startup),
    );
    let out = match args.json {
        true => serde_json::to_string_pretty(&report)? + "\n",
        false => markdown(&args, nodes, &report),
    };
    crate::print(&out)?;
    Ok(())
}

/// `--rm` must be a loopback address: yard's clusters are of one host.
pub(crate) fn check_loopback_or_any(url: &str) -> Result<()> {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    match host {
        "127.0.0.1" | "localhost" | "[::1]" => Ok(()),
        _ => Err(BadInput(format!(
            "--rm {url}: yard replays on a cluster of this host; give http://127.0.0.1:PORT"
        ))
        .into()),
    }
}

/// Submits every job at its arrival, follows them to their answers, and reads them.
fn replay(
    client: &Client,
    args: &ReplayArgs,
    live: &[LiveJob],
    seed: u64,
    prepared: &[SharedJob],
    containers: usize,
    stop: &mpsc::Receiver<()>,
) -> Result<Vec<LiveResult>> {
    let n = live.len();
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("replay [{bar:30}] {pos}/{len} done {msg} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let start = Instant::now();
    let mut results: Vec<LiveResult> = live
        .iter()
        .map(|j| LiveResult {
            id: j.id.clone(),
            state: "NOT SUBMITTED".into(),
            ..LiveResult::default()
        })
        .collect();
    let mut submitted = 0;
    let mut running: Vec<usize> = Vec::new();
    let (mut done, mut met) = (0, 0);
    let last = live.iter().map(|j| j.arrival).fold(0.0, f64::max);
    let give_up = start + Duration::from_secs_f64(last) + Duration::from_secs(args.patience);
    while done < n {
        if stop.try_recv().is_ok() {
            // The report still comes, over what answered: the rest count as missed.
            bar.abandon();
            eprintln!(
                "interrupted: {submitted} of {n} jobs submitted, {done} answered; the others are counted missed (unanswered)"
            );
            break;
        }
        let now = start.elapsed().as_secs_f64();
        while submitted < n && live[submitted].arrival <= now {
            let j = &live[submitted];
            let body = json!({
                "job": j.to_job(args.policy, seed.wrapping_add(submitted as u64), args.guard),
                "name": app_name(&j.id),
                "deadlineInMs": (j.deadline * 1000.0).round().max(1.0) as u64,
            });
            let view = client
                .typed(|rm| rm.submit_job(&body))
                .with_context(|| format!("submitting job {}", j.id))?;
            results[submitted].app = Some(view.id);
            results[submitted].state = "SUBMITTED".into();
            running.push(submitted);
            submitted += 1;
        }
        let mut still = Vec::new();
        for &i in &running {
            let Some(app) = results[i].app.clone() else {
                continue;
            };
            let polled = poll_job(client, &app)?;
            results[i].state = polled.state.clone();
            match polled.ended {
                true => {
                    if let Some(answer) = &polled.answer {
                        read_answer(&mut results[i], answer, &live[i], &prepared[i], containers);
                    }
                    met += usize::from(results[i].outcome.as_deref() == Some("met"));
                    done += 1;
                    bar.inc(1);
                }
                false => still.push(i),
            }
        }
        running = still;
        bar.set_message(format!(
            "· submitted {submitted}/{n} · running {} · deadlines met {met}",
            running.len()
        ));
        if Instant::now() > give_up {
            bar.abandon();
            eprintln!(
                "gave up on {} jobs still running {} s after the last submission (counted missed)",
                running.len(),
                args.patience
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
    Ok(results)
}

/// A MapReduce job as the rm shows it now (`GET /ws/v1/yard/mapreduce/jobs/{app}`).
pub(crate) struct Polled {
    pub(crate) view: JobView,
    /// YARN's state name.
    pub(crate) state: String,
    /// FINISHED, FAILED or KILLED.
    pub(crate) ended: bool,
    /// Its answer, once it has ended and succeeded.
    pub(crate) answer: Option<AnswerView>,
}

/// Polls the MapReduce job `app` at the rm, and reads its answer once it has ended well.
pub(crate) fn poll_job(client: &Client, app: &str) -> Result<Polled> {
    let view = client.typed(|rm| rm.job(app))?;
    let ended = view.state.is_final();
    let answer = match ended && view.final_status == FinalApplicationStatus::Succeeded {
        true => Some(client.typed(|rm| rm.answer(app))?),
        false => None,
    };
    Ok(Polled {
        state: view.state.name().to_owned(),
        view,
        ended,
        answer,
    })
}

/// An application name from a trace job's id: its letters, digits, `-`, `_` and `.`.
fn app_name(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .take(200)
        .collect();
    format!("replay-{clean}")
}

/// The answer's outcome, processed fraction, time from submission, estimation error and k,
/// and k_max on the task times the cluster measured.
fn read_answer(
    r: &mut LiveResult,
    answer: &AnswerView,
    live: &LiveJob,
    shared: &SharedJob,
    containers: usize,
) {
    // The master's own answer (its `job` line), opaque to the rm.
    let job = &answer.answer["job"];
    r.outcome = job["outcome"].as_str().map(str::to_owned);
    r.processed_fraction = answer.processed_fraction;
    r.k = job["k"].as_u64().unwrap_or(0) as u32;
    // The master's clock: its start is `deadlineSeconds` before the deadline, which is
    // `live.deadline` after the submission.
    if let (Some(to_deadline), Some(completion)) = (
        job["deadlineSeconds"].as_f64(),
        job["completionSeconds"].as_f64(),
    ) {
        r.completion = Some(live.deadline - to_deadline + completion);
        r.master_start = Some(live.deadline - to_deadline);
    }
    // A cold profile store's first jobs run the task sampler before their phase: a job's
    // worth of work (seconds on a 2-job replay's median), not a start-up.
    if let (Some(completion), Some(t), false) = (
        job["completionSeconds"].as_f64(),
        job["jobSeconds"].as_f64(),
        job["taskSamplerRan"] == true,
    ) {
        r.master_startup = Some((completion - t).max(0.0));
    }
    r.estimate_at_close = job["estimateAtClose"].as_f64();
    r.map_closed_at = job["mapPhaseClosedAt"].as_f64();
    r.job_seconds = job["jobSeconds"].as_f64();
    r.guard_fired = job["guardFired"] == true;
    r.task_sampler_ran = job["taskSamplerRan"] == true;
    r.task_startup = job["schedulingOverheadMs"]["p50"]
        .as_f64()
        .map(|ms| ms / 1000.0);
    // The estimate in force at the answer (re-sent after a kill changed k, else the close's),
    // as the simulator scores it.
    let in_force = job["estimateAtEnd"].as_f64().or(r.estimate_at_close);
    if let (Some(t), Some(estimate)) = (job["jobSeconds"].as_f64(), in_force)
        && t >= MEASURABLE
    {
        r.estimation_error = Some((t - estimate).abs() / t);
    }
    r.k_max = Some(measured_k_max(
        shared,
        &job["measured"],
        live.byte_scale,
        containers,
    ));
}

/// k_max of the job on the whole cluster by its deadline, its maps' and reduces' times as the
/// cluster measured them: the planned times scaled by the measured mean over the planned mean
/// (maps; reduces at the inputs they had), the planned ones where nothing was measured.
fn measured_k_max(shared: &SharedJob, measured: &Value, byte_scale: f64, containers: usize) -> u32 {
    let mut truth = shared.job.truth.clone();
    let planned_maps =
        truth.maps.iter().map(|m| m.duration).sum::<f64>() / truth.maps.len().max(1) as f64;
    let measured_maps = [&measured["mapLocalSeconds"], &measured["mapRemoteSeconds"]]
        .iter()
        .filter_map(|v| v.as_f64())
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        });
    if let Some(m) = measured_maps.filter(|_| planned_maps > 0.0) {
        let ratio = m / planned_maps;
        for map in &mut truth.maps {
            map.duration *= ratio;
        }
    }
    let samples: Vec<(f64, f64)> = measured["reduceSamples"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| Some((s[0].as_f64()?, s[1].as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let planned: f64 = samples
        .iter()
        // The live reduce read the scaled bytes; the truth's law takes the trace's.
        .map(|&(d, _)| truth.reduce_time.at(d / byte_scale))
        .sum();
    let took: f64 = samples.iter().map(|&(_, s)| s).sum();
    if planned > 0.0 && took > 0.0 {
        truth.reduce_time.a *= took / planned;
    }
    yard_sim::oracle::k_max(&truth, &vec![1.0; containers], shared.deadline)
}

#[derive(Debug, Serialize)]
struct Report {
    seed: u64,
    jobs: usize,
    time_scale: f64,
    /// The share of the cluster masters may hold together, live and simulated.
    master_share: f64,
    /// The start-up costs the simulation gave masters and tasks.
    startup: Startup,
    rows: Vec<Row>,
    /// Each job live and simulated, in submission order: where the two part.
    per_job: Vec<JobRow>,
}

/// One job of the replay, live beside simulated.
#[derive(Debug, Serialize)]
struct JobRow {
    id: String,
    maps: u32,
    reduces: u32,
    /// Seconds after the replay's start.
    arrival_s: f64,
    /// Relative to the submission (U[lo, hi]·T_J).
    deadline_s: f64,
    /// T_J: the job alone on the whole simulated cluster.
    alone_s: f64,
    live: JobSide,
    sim: JobSide,
}

#[derive(Debug, Serialize)]
struct JobSide {
    /// met, empty or missed; `None`: never answered.
    outcome: Option<&'static str>,
    /// From submission to answer.
    completion_s: Option<f64>,
    /// From submission to the master's start (the simulator's: its wait for room).
    master_start_s: Option<f64>,
    k: u32,
    processed_fraction: f64,
    /// |T − T̂| / T at map close (T: from the job's start to its answer, on the master's
    /// clock; the simulator's the same).
    estimation_error: Option<f64>,
    /// T̂ and T, seconds from the job's start (live: its job phase's, after any task sampler).
    estimate_at_close_s: Option<f64>,
    job_s: Option<f64>,
    /// When the map phase closed, from the job's start.
    map_closed_at_s: Option<f64>,
    /// Live only: the guard fired; the task sampler ran before the job proper.
    #[serde(skip_serializing_if = "Option::is_none")]
    guard_fired: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_sampler_ran: Option<bool>,
}

/// The start-up costs the prediction uses: the flags', else the medians over the live jobs
/// that measured them (0 when none did).
#[derive(Debug, Clone, Serialize)]
struct Startup {
    master_s: f64,
    task_s: f64,
    /// `measured`, `flag`, or `unmeasured` (0: no live job measured it); `master …, task …`
    /// when the two differ.
    source: String,
}

impl Startup {
    fn of(args: &ReplayArgs, live: &[LiveResult]) -> Startup {
        let cost = |flag: Option<f64>, of: fn(&LiveResult) -> Option<Seconds>| {
            if let Some(x) = flag {
                return (x, "flag");
            }
            let mut xs: Vec<f64> = live.iter().filter_map(of).collect();
            xs.sort_by(f64::total_cmp);
            match xs.is_empty() {
                true => (0.0, "unmeasured"),
                false => (median(&xs), "measured"),
            }
        };
        let (master_s, m) = cost(args.master_startup_s, |r| r.master_startup);
        let (task_s, t) = cost(args.task_startup_s, |r| r.task_startup);
        Startup {
            master_s,
            task_s,
            source: match m == t {
                true => m.to_owned(),
                false => format!("master {m}, task {t}"),
            },
        }
    }
}

fn report(
    args: &ReplayArgs,
    nodes: u32,
    seed: u64,
    prepared: &[SharedJob],
    sim: &[SharedResult],
    live: &[LiveResult],
    (master_share, startup): (f64, Startup),
) -> Report {
    let n = prepared.len();
    let frac = |c: usize| c as f64 / n.max(1) as f64;
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    // Simulated results are sorted by arrival; find each job's by id.
    let sim_of = |id: &str| sim.iter().find(|r| r.result.job == id);
    let sim_outcomes: Vec<Option<Outcome>> = prepared
        .iter()
        .map(|j| sim_of(&j.job.id).map(|r| r.result.outcome()))
        .collect();
    let count = |o: Outcome| sim_outcomes.iter().filter(|x| **x == Some(o)).count();
    // The shared day leaves k_max unset: the oracle's, on the planned task times.
    let containers = args.containers as usize * nodes as usize;
    let sim_ratios: Vec<f64> = prepared
        .iter()
        .filter_map(|j| {
            let r = sim_of(&j.job.id)?;
            let k_max = yard_sim::oracle::k_max(&j.job.truth, &vec![1.0; containers], j.deadline);
            (k_max > 0).then(|| f64::from(r.result.k) / f64::from(k_max))
        })
        .collect();
    // The estimation error over the same jobs on both sides: those both measured it for and
    // both answered from some input (an answer from none is scored apart, as the simulator's
    // report does: its "estimate" is of a job that read nothing).
    let live_of = |id: &str| live.iter().find(|r| r.id == id);
    let (paired_live, paired_sim): (Vec<f64>, Vec<f64>) = prepared
        .iter()
        .filter_map(|j| {
            let l = live_of(&j.job.id).filter(|l| l.processed_fraction > 0.0)?;
            let s = sim_of(&j.job.id).filter(|s| !s.result.from_nothing())?;
            Some((l.estimation_error?, s.result.estimation_error()?))
        })
        .unzip();
    let sim_row = Row {
        source: "sim",
        policy: args.policy.name().into(),
        rm_policy: args.scheduler.name().into(),
        jobs: n,
        // A job the day never answered is missed (`Outcome::Missed`).
        missed_fraction: frac(n - count(Outcome::Met) - count(Outcome::Empty)),
        empty_fraction: frac(count(Outcome::Empty)),
        met_fraction: frac(count(Outcome::Met)),
        mean_processed_fraction: sim.iter().map(|r| r.result.processed_fraction).sum::<f64>()
            / n.max(1) as f64,
        median_deviation: Some(0.0),
        estimation_error: ErrorStats::of(&paired_sim),
        estimation_error_jobs: sim
            .iter()
            .filter(|r| r.result.estimation_error().is_some())
            .count(),
        mean_k_over_k_max: mean(&sim_ratios),
        unanswered: sim
            .iter()
            .filter(|r| !r.result.completion.is_finite())
            .count()
            + (n - sim.len()),
    };
    let live_count = |o: &str| {
        live.iter()
            .filter(|r| r.outcome.as_deref() == Some(o))
            .count()
    };
    let mut deviations: Vec<f64> = live
        .iter()
        .filter_map(|r| {
            let t = r.completion?;
            let s = sim_of(&r.id)?.result.completion;
            (s.is_finite() && s >= MEASURABLE).then(|| (t - s).abs() / s)
        })
        .collect();
    deviations.sort_by(f64::total_cmp);
    let live_ratios: Vec<f64> = live
        .iter()
        .filter_map(|r| {
            let k_max = r.k_max.filter(|&k| k > 0)?;
            Some(f64::from(r.k) / f64::from(k_max))
        })
        .collect();
    let live_row = Row {
        source: "live",
        policy: args.policy.name().into(),
        rm_policy: args.scheduler.name().into(),
        jobs: n,
        missed_fraction: frac(n - live_count("met") - live_count("empty")),
        empty_fraction: frac(live_count("empty")),
        met_fraction: frac(live_count("met")),
        mean_processed_fraction: live.iter().map(|r| r.processed_fraction).sum::<f64>()
            / n.max(1) as f64,
        median_deviation: (!deviations.is_empty()).then(|| median(&deviations)),
        estimation_error: ErrorStats::of(&paired_live),
        estimation_error_jobs: live.iter().filter(|r| r.estimation_error.is_some()).count(),
        mean_k_over_k_max: mean(&live_ratios),
        unanswered: live.iter().filter(|r| r.outcome.is_none()).count(),
    };
    let per_job = prepared
        .iter()
        .zip(live)
        .map(|(j, l)| {
            let s = sim_of(&j.job.id);
            JobRow {
                id: j.job.id.clone(),
                maps: j.job.maps(),
                reduces: j.job.reduces(),
                arrival_s: j.arrival,
                deadline_s: j.deadline,
                alone_s: j.alone,
                live: JobSide {
                    outcome: match l.outcome.as_deref() {
                        Some("met") => Some("met"),
                        Some("empty") => Some("empty"),
                        Some(_) => Some("missed"),
                        None => None,
                    },
                    completion_s: l.completion,
                    master_start_s: l.master_start,
                    k: l.k,
                    processed_fraction: l.processed_fraction,
                    estimation_error: l.estimation_error,
                    estimate_at_close_s: l.estimate_at_close,
                    job_s: l.job_seconds,
                    map_closed_at_s: l.map_closed_at,
                    guard_fired: Some(l.guard_fired),
                    task_sampler_ran: Some(l.task_sampler_ran),
                },
                sim: JobSide {
                    outcome: s.map(|r| r.result.outcome().name()),
                    completion_s: s.map(|r| r.result.completion).filter(|c| c.is_finite()),
                    master_start_s: s.map(|r| r.master_wait),
                    k: s.map_or(0, |r| r.result.k),
                    processed_fraction: s.map_or(0.0, |r| r.result.processed_fraction),
                    estimation_error: s.and_then(|r| r.result.estimation_error()),
                    estimate_at_close_s: s
                        .and_then(|r| r.result.estimate(Moment::MapClose))
                        .map(|e| e.total),
                    job_s: s.and_then(|r| r.result.phases).map(|p| p.total),
                    map_closed_at_s: None,
                    guard_fired: None,
                    task_sampler_ran: None,
                },
            }
        })
        .collect();
    Report {
        seed,
        jobs: n,
        time_scale: args.time_scale,
        master_share,
        startup,
        rows: vec![live_row, sim_row],
        per_job,
    }
}

/// The median of sorted, non-empty `xs` (the mean of the middle two for an even count).
fn median(xs: &[f64]) -> f64 {
    let m = xs.len() / 2;
    match xs.len() % 2 {
        1 => xs[m],
        _ => (xs[m - 1] + xs[m]) / 2.0,
    }
}

fn markdown(args: &ReplayArgs, nodes: u32, r: &Report) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "## replay\n\n{}: the first {} jobs, times × {}, seed {}, on {} × {} containers, masters in containers of their own within {} of them ({} cluster policy, {} task policy); deadlines U[{}, {}]·T_J\n",
        args.trace.display(),
        r.jobs,
        args.time_scale,
        r.seed,
        nodes,
        args.containers,
        r.master_share,
        args.scheduler.name(),
        args.policy.name(),
        args.deadline_factor.lo,
        args.deadline_factor.hi,
    );
    let s = &r.startup;
    let _ = writeln!(
        t,
        "The simulated masters start up in {:.3} s and tasks launch in {:.3} s ({}).\n",
        s.master_s, s.task_s, s.source
    );
    let pct = |h: &str| Column::new(h, Unit::Percent(1));
    let fields: &[Field<&Row>] = &[
        (Column::text("source"), |x| x.source.into()),
        (Column::new("jobs", Unit::Count), |x| x.jobs.into()),
        (pct("missed %"), |x| x.missed_fraction.into()),
        (pct("empty %"), |x| x.empty_fraction.into()),
        (pct("met %"), |x| x.met_fraction.into()),
        (pct("processed %"), |x| x.mean_processed_fraction.into()),
        (pct("k/k_max %"), |x| x.mean_k_over_k_max.into()),
        (pct("median deviation %"), |x| x.median_deviation.into()),
        (
            pct("estimation error % median / p80 / mean (jobs)"),
            |x| match x.estimation_error {
                Some(e) => format!(
                    "{} ({} of {})",
                    Cell::Joined(vec![e.median.into(), e.p80.into(), e.mean.into()])
                        .in_unit(Unit::Percent(1)),
                    e.jobs,
                    x.estimation_error_jobs
                )
                .into(),
                None => format!("– (0 of {})", x.estimation_error_jobs).into(),
            },
        ),
        (Column::new("unanswered", Unit::Count), |x| {
            x.unanswered.into()
        }),
    ];
    let mut table = Table::of(fields, &r.rows);
    if let [live, sim] = r.rows.as_slice() {
        // The live row less the simulated one, in points; counts have no difference here.
        let diff = |a: f64, b: f64| Cell::Text(Unit::Points(1).format(a - b));
        table.row(vec![
            "live − sim".into(),
            Cell::Blank,
            diff(live.missed_fraction, sim.missed_fraction),
            diff(live.empty_fraction, sim.empty_fraction),
            diff(live.met_fraction, sim.met_fraction),
            diff(live.mean_processed_fraction, sim.mean_processed_fraction),
            match (live.mean_k_over_k_max, sim.mean_k_over_k_max) {
                (Some(a), Some(b)) => diff(a, b),
                _ => Cell::Missing,
            },
            Cell::Blank,
            match (live.estimation_error, sim.estimation_error) {
                (Some(l), Some(s)) => Cell::Joined(vec![
                    diff(l.median, s.median),
                    diff(l.p80, s.p80),
                    diff(l.mean, s.mean),
                ]),
                _ => Cell::Missing,
            },
            Cell::Blank,
        ]);
    }
    t += &table.markdown();
    let _ = writeln!(
        t,
        "\nmissed: answered after D, or never; empty: by D from no input; met: by D from some input. k_max: live, on the task times the cluster measured. Median deviation: the median over jobs of |live − simulated job time| / simulated (job time: submission to answer). Estimation error: |T − T̂| / T at map close (T from the job's start, after any task sampler, to its answer), over the jobs both sides measured it for and answered from some input (n of m: m, the jobs this side measured it for). Start-up costs, measured: medians over the live jobs that answered (a master: from its process's start to its job phase's, the task sampler's runs left out; a task: its job's median from a container freed to its next task's process); unmeasured: no live job measured it, 0."
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(name: &str) -> yard_workload::Workload {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces")
            .join(name);
        yard_workload::read_file(&path, &yard_workload::ReadOptions::default()).unwrap()
    }

    fn jobs(w: &yard_workload::Workload, n: usize, x: f64) -> (Vec<SharedJob>, Vec<SimJob>) {
        let exp = experiment(2, 2, 100, 3, 0.0, 0.5);
        let options = WorkloadOptions {
            seed: 3,
            ..WorkloadOptions::default()
        }
        .with_cluster(&exp.cluster);
        let unscaled: Vec<SimJob> = workloads::trace_jobs(w, &options).take(n).collect();
        let scaled = prepare(w, n, &options, &exp, DeadlineFactor::ARIA, x);
        (scaled, unscaled)
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: ReplayArgs,
    }

    fn args(extra: &[&str]) -> ReplayArgs {
        use clap::Parser;
        let mut argv = vec!["replay", "--trace", "t.tsv"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn error_stats_give_median_p80_and_mean() {
        assert_eq!(ErrorStats::of(&[]), None);
        let e = ErrorStats::of(&[0.5, 0.1, 0.3, 0.2, 0.4]).unwrap();
        assert_eq!(e.jobs, 5);
        assert!((e.median - 0.3).abs() < 1e-12);
        // Nearest rank: 4 of 5 values at or below it.
        assert!((e.p80 - 0.4).abs() < 1e-12);
        assert!((e.mean - 0.3).abs() < 1e-12);
        assert_eq!(ErrorStats::of(&[7.0]).unwrap().p80, 7.0);
    }

    #[test]
    fn the_report_measures_the_estimation_error_over_the_same_jobs_live_and_simulated() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let (prepared, _) = jobs(&w, 8, 1.0 / 60.0);
        let exp = experiment(2, 2, 100, 3, 0.0, 0.5);
        let (sim, _) = shared::simulate_day(&prepared, RmPolicy::Fifo, PolicyKind::Dart, &exp);
        let sim_error = |id: &str| {
            sim.iter()
                .find(|r| r.result.job == id)
                .and_then(|r| r.result.estimation_error())
        };
        let from_input = |id: &str| {
            sim.iter()
                .any(|r| r.result.job == id && !r.result.from_nothing())
        };
        let measured: Vec<&SharedJob> = prepared
            .iter()
            .filter(|j| sim_error(&j.job.id).is_some() && from_input(&j.job.id))
            .collect();
        assert!(measured.len() >= 2, "{} simulated errors", measured.len());
        // Live: every job answered met from half its input but the second simulated-measured
        // one, empty; an error for the first two simulated-measured jobs, and one for a job
        // the simulator has none for (if any): only the first is paired (the second answered
        // from no input live).
        let unmeasured = prepared.iter().find(|j| sim_error(&j.job.id).is_none());
        let live: Vec<LiveResult> = prepared
            .iter()
            .map(|j| {
                let empty = j.job.id == measured[1].job.id;
                LiveResult {
                    id: j.job.id.clone(),
                    outcome: Some(if empty { "empty" } else { "met" }.into()),
                    processed_fraction: if empty { 0.0 } else { 0.5 },
                    k: 1,
                    estimation_error: (j.job.id == measured[0].job.id
                        || empty
                        || unmeasured.is_some_and(|u| u.job.id == j.job.id))
                    .then_some(2.0),
                    ..LiveResult::default()
                }
            })
            .collect();
        let startup = Startup {
            master_s: 0.0,
            task_s: 0.0,
            source: "flag".into(),
        };
        let r = report(&args(&[]), 2, 3, &prepared, &sim, &live, (0.5, startup));
        let [l, s] = r.rows.as_slice() else {
            panic!("two rows")
        };
        let le = l.estimation_error.unwrap();
        let se = s.estimation_error.unwrap();
        assert_eq!((le.jobs, se.jobs), (1, 1));
        assert_eq!(le.median, 2.0);
        let want = sim_error(&measured[0].job.id).unwrap();
        assert_eq!((se.median, se.p80, se.mean), (want, want, want));
        assert_eq!(
            l.estimation_error_jobs,
            2 + usize::from(unmeasured.is_some())
        );
        assert!(s.estimation_error_jobs >= measured.len());
        assert_eq!(l.empty_fraction, 1.0 / prepared.len() as f64);
        // Per job, both sides' errors side by side.
        let row = r
            .per_job
            .iter()
            .find(|j| j.id == measured[0].job.id)
            .unwrap();
        assert_eq!(row.live.estimation_error, Some(2.0));
        assert_eq!(row.sim.estimation_error, Some(want));
        // The table shows median / p80 / mean and the jobs paired.
        let table = markdown(&args(&[]), 2, &r);
        assert!(table.contains("200.0 / 200.0 / 200.0 (1 of"), "{table}");
    }

    /// The whole table as it printed before the simulator's reports shared one writer: every
    /// cell kind (percent, none, the error triple, the live − sim row's blanks and points).
    #[test]
    fn the_table_prints_every_cell_as_it_always_has() {
        let row = |source, missed, k: Option<f64>, e: Option<ErrorStats>| Row {
            source,
            policy: "dart".into(),
            rm_policy: "fifo".into(),
            jobs: 4,
            missed_fraction: missed,
            empty_fraction: 0.25,
            met_fraction: 0.75 - missed,
            mean_processed_fraction: 0.5,
            median_deviation: k.map(|_| 0.125),
            estimation_error: e,
            estimation_error_jobs: 3,
            mean_k_over_k_max: k,
            unanswered: 1,
        };
        let e = ErrorStats {
            jobs: 2,
            median: 0.1,
            p80: 0.2,
            mean: 0.15,
        };
        let r = Report {
            seed: 3,
            jobs: 4,
            time_scale: 1.0 / 60.0,
            master_share: 0.5,
            startup: Startup {
                master_s: 1.5,
                task_s: 0.25,
                source: "measured".into(),
            },
            rows: vec![
                row("live", 0.25, Some(0.8), Some(e)),
                row("sim", 0.0, None, None),
            ],
            per_job: Vec::new(),
        };
        let text = markdown(&args(&[]), 2, &r);
        let table = "| source | jobs | missed % | empty % | met % | processed % | k/k_max % | median deviation % | estimation error % median / p80 / mean (jobs) | unanswered |\n\
                     |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n\
                     | live | 4 | 25.0 | 25.0 | 50.0 | 50.0 | 80.0 | 12.5 | 10.0 / 20.0 / 15.0 (2 of 3) | 1 |\n\
                     | sim | 4 | 0.0 | 25.0 | 75.0 | 50.0 | – | – | – (0 of 3) | 1 |\n\
                     | live − sim | | +25.0 | +0.0 | -25.0 | +0.0 | – | | – | |\n";
        assert!(text.contains(table), "{text}");
        assert!(
            text.contains("The simulated masters start up in 1.500 s and tasks launch in 0.250 s (measured).\n\n| source"),
            "{text}"
        );
    }

    #[test]
    fn keep_is_a_flag_of_the_local_cluster_only() {
        assert!(args(&["--keep"]).keep);
        assert!(!args(&[]).keep);
        use clap::Parser;
        assert!(
            Cli::try_parse_from([
                "replay",
                "--trace",
                "t",
                "--keep",
                "--rm",
                "http://127.0.0.1:1"
            ])
            .is_err()
        );
    }

    #[test]
    fn a_jobs_seeded_history_gives_the_live_master_the_simulators_profile() {
        use yard_appmaster::policy::{PowerLaw, Profile, Profiler};
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 1.0 / 60.0;
        let (prepared, _) = jobs(&w, 20, x);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-12);
        let mut with_reduces = 0;
        for j in &prepared {
            let sim = &j.job.profile;
            // What a master falls back on where its store has nothing: all of it wrong.
            let defaults = Profile {
                map_local: 1e6,
                map_remote: 1e6,
                map_shortest: None,
                map_spread: None,
                partition_bytes: 0.123,
                shuffle_bandwidth: 0.5,
                reduce_time: PowerLaw {
                    a: 99.0,
                    b: 0.1,
                    spread: 0.0,
                },
                previous_runs: Vec::new(),
            };
            // As the live master reads its kind (`Stored::profiler`): samples, then runs.
            let bs = byte_scale(j, x);
            assert!((x..=1.0).contains(&bs), "{}: {bs}", j.job.id);
            let (records, samples) = history(j, bs);
            let mut profiler = Profiler::new(defaults);
            profiler.reduce_samples.extend(samples);
            for r in records {
                profiler.add_run(r);
            }
            let live = profiler.profile();
            assert_eq!(live.map_local, sim.map_local, "{}", j.job.id);
            assert_eq!(live.map_remote, sim.map_remote);
            assert_eq!(live.map_shortest, sim.map_shortest);
            assert_eq!(live.map_spread, sim.map_spread);
            // Bytes are the live job's: the trace's times its byte scale.
            assert!(close(live.partition_bytes, sim.partition_bytes * bs));
            assert!(close(live.shuffle_bandwidth, sim.shuffle_bandwidth * bs));
            // The same reduce time for the same share of the job's output, the same spread.
            for d in [1e3, 1e6, 1e9] {
                let (l, s) = (live.reduce_time.at(d * bs), sim.reduce_time.at(d));
                match s > 0.0 {
                    true => assert!(close(l, s), "{}: f({d}) live {l} sim {s}", j.job.id),
                    false => assert!(l < 1e-6, "{}: f({d}) live {l} sim 0", j.job.id),
                }
            }
            if sim.reduce_time.a > 0.0 {
                assert!((live.reduce_time.spread - sim.reduce_time.spread).abs() < 1e-9);
            }
            assert_eq!(live.previous_runs.len(), sim.previous_runs.len());
            for (l, s) in live.previous_runs.iter().zip(&sim.previous_runs) {
                assert_eq!(l.k, s.k);
                // Kept whole without moving eq. 13's d by more than 0.05 % (or as the trace
                // has it, when it has fewer bytes).
                let want = s.max_reduce_input * bs;
                assert!(
                    (l.max_reduce_input - want).abs() <= 0.5
                        && want >= s.max_reduce_input.min(WHOLE_BYTES) - 1e-6,
                    "{}: d_k {} live, {want} wanted",
                    j.job.id,
                    l.max_reduce_input
                );
            }
            with_reduces += usize::from(!sim.previous_runs.is_empty());
        }
        assert!(with_reduces > 0, "some jobs have reduces");
    }

    #[test]
    fn small_jobs_keep_their_bytes_whole_and_large_ones_shrink_with_the_clock() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 1.0 / 60.0;
        let (prepared, _) = jobs(&w, 50, x);
        let tiny = |j: &SharedJob| {
            j.job
                .profile
                .previous_runs
                .iter()
                .any(|r| r.max_reduce_input > 0.0 && r.max_reduce_input < 60.0)
        };
        // FB-2009's first jobs shuffle a few hundred bytes (job3: 1,320), the profile's
        // earlier run's largest reduce input tens of bytes: at 1/60 under one byte.
        let small = prepared
            .iter()
            .find(|j| tiny(j))
            .expect("a job of tiny reduces");
        assert_eq!(byte_scale(small, x), 1.0, "{}", small.job.id);
        let big = prepared.iter().find(|j| {
            j.job
                .truth
                .maps
                .iter()
                .all(|m| m.output_bytes as f64 * x > WHOLE_BYTES)
                && j.job.profile.partition_bytes * x > WHOLE_BYTES
                && j.job
                    .profile
                    .previous_runs
                    .iter()
                    .all(|r| r.max_reduce_input * x > WHOLE_BYTES)
        });
        let big = big.expect("a job of large bytes");
        assert_eq!(byte_scale(big, x), x, "{}", big.job.id);
        // The live job writes its maps' outputs at that scale.
        let live = live_job(small, byte_scale(small, x));
        let want: Vec<u64> = small
            .job
            .truth
            .maps
            .iter()
            .map(|m| m.output_bytes)
            .collect();
        assert_eq!(live.map_output_bytes, want);
    }

    #[test]
    fn every_trace_job_is_its_own_profile_kind() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let (prepared, _) = jobs(&w, 3, 0.1);
        let kinds: Vec<String> = prepared
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut live = live_job(j, 0.1);
                live.kind = Some(kind_name(i, &j.job.id));
                live.max_containers = Some(8);
                let job = live.to_job(PolicyKind::Dart, 1, 0.0);
                job.validate().unwrap();
                // Capped at the cluster's containers: its master tells its policy so.
                assert_eq!(job.max_containers, Some(8));
                job.params["kind"].clone()
            })
            .collect();
        assert_eq!(kinds, ["j0.job0", "j1.job1", "j2.job2"]);
        // Ids with other characters still make valid kinds.
        assert_eq!(kind_name(7, "job 7/x"), "j7.job_7_x");
    }

    #[test]
    fn time_scales_parse_as_numbers_or_fractions() {
        assert_eq!(parse_time_scale("0.5"), Ok(0.5));
        assert_eq!(parse_time_scale("1/60"), Ok(1.0 / 60.0));
        for bad in ["0", "-1", "1/0", "x", "1/x", "inf", ""] {
            assert!(parse_time_scale(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_swim_job_keeps_its_task_counts_and_takes_the_simulators_times_scaled() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 0.25;
        let (scaled, unscaled) = jobs(&w, 5, x);
        assert_eq!(scaled.len(), 5);
        let first = unscaled[0].submit;
        for (s, u) in scaled.iter().zip(&unscaled) {
            let live = live_job(s, x);
            assert_eq!(live.id, u.id);
            assert_eq!(live.map_seconds.len(), u.maps() as usize);
            assert_eq!(live.reduce_seconds.len(), u.reduces() as usize);
            for (l, m) in live.map_seconds.iter().zip(&u.truth.maps) {
                assert!((l - m.duration * x).abs() < 1e-9, "{l} vs {}", m.duration);
            }
            let output: u64 = u.truth.maps.iter().map(|m| m.output_bytes).sum();
            for (r, (&l, &d)) in live
                .reduce_seconds
                .iter()
                .zip(&u.truth.reduce_inputs(output))
                .enumerate()
            {
                let want = u.truth.reduce_seconds(r as u32, d as f64) * x;
                assert!((l - want).abs() <= 1e-9 * want.max(1.0), "{l} vs {want}");
            }
            assert_eq!(
                live.map_input_bytes,
                u.truth
                    .maps
                    .iter()
                    .map(|m| m.input_bytes)
                    .collect::<Vec<_>>()
            );
            assert!((live.arrival - (u.submit - first) * x).abs() < 1e-9);
            assert!(live.deadline >= s.alone && live.deadline <= 2.0 * s.alone + 1e-9);
            // The job the rm takes: valid, one reduce at least.
            let job = LiveJob {
                kind: Some(kind_name(0, &live.id)),
                ..live.clone()
            }
            .to_job(PolicyKind::Dart, 1, 0.0);
            job.validate().unwrap();
            assert_eq!(job.reduces as usize, live.reduce_seconds.len().max(1));
        }
    }

    #[test]
    fn a_rumen_job_replays_its_recorded_map_times_scaled() {
        let w = trace("rumen/2jobs2min-rumen-jh.json");
        let x = 0.1;
        let (scaled, _) = jobs(&w, 1, x);
        let live = live_job(&scaled[0], x);
        let recorded: Vec<f64> = w.jobs[0]
            .map_tasks()
            .map(|t| t.duration_ms.unwrap().max(1) as f64 / 1000.0 * x)
            .collect();
        assert_eq!(live.map_seconds.len(), recorded.len());
        for (l, r) in live.map_seconds.iter().zip(&recorded) {
            assert!((l - r).abs() < 1e-9, "{l} vs {r}");
        }
    }
}
