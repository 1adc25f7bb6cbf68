//! `yard rm` and `yard nm`: the daemons. Each prints `listening on ADDR` once bound (so a
//! caller can ask for port 0 and learn the port), logs to stderr, and stops on SIGINT/SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use serde::Deserialize;
use yard_nodemanager::daemon::NmOptions;
use yard_nodemanager::data::DataSettings;
use yard_rm::cluster::Settings;
use yard_rm::daemon::RmOptions;
use yard_wire::protocol::Resource;

use crate::sim::BadInput;

/// Each setting comes from, in order: its flag, its environment variable, the `--config` TOML
/// file (`[rm]` and `[nm]` sections, the same keys as the flags with `_`), its default.
#[derive(Args)]
pub(crate) struct RmArgs {
    /// A TOML file with an `[rm]` section.
    #[arg(long, env = "YARD_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8088; port 0 picks a free port].
    #[arg(long, env = "YARD_RM_BIND")]
    bind: Option<SocketAddr>,
    /// A nodemanager silent this long is LOST, milliseconds [default: 10000].
    #[arg(long, env = "YARD_RM_NODE_EXPIRY_MS")]
    node_expiry_ms: Option<i64>,
    /// A LOST node is forgotten this long after it was lost (no longer listed, nor named as a
    /// block's holder; YARN's yarn.resourcemanager.node-removal-untracked.timeout-ms),
    /// milliseconds [default: 60000].
    #[arg(long, env = "YARD_RM_LOST_NODE_RETENTION_MS")]
    lost_node_retention_ms: Option<i64>,
    /// The SQLite state database: applications and nodes survive a restart [default: yard-rm.db].
    #[arg(long, env = "YARD_RM_STATE_DB")]
    state_db: Option<PathBuf>,
    /// How many times an application's master is started before the application fails [default: 2].
    #[arg(long, env = "YARD_RM_AM_MAX_ATTEMPTS")]
    am_max_attempts: Option<u32>,
    /// The SQLite job-profile store every MapReduce master reads and writes (told to them as
    /// `YARD_PROFILES`) [default: yard-profiles.db].
    #[arg(long, env = "YARD_RM_PROFILES_DB")]
    profiles_db: Option<PathBuf>,
    /// The cluster secret every credential derives from; created (mode 0600) at first start
    /// [default: the state database's path with the extension .secret].
    #[arg(long, env = "YARD_RM_SECRET_FILE")]
    secret_file: Option<PathBuf>,
    /// The share of the cluster application masters may hold together, 0–1 (at least one
    /// master always runs) [default: 0.1].
    #[arg(long, env = "YARD_RM_MASTER_SHARE")]
    master_share: Option<f64>,
    /// The cluster policy: fifo, fair, edf (earliest deadline first), minedf (EDF, each job
    /// only its minimum quota from ARIA's model), minedf-wc (MinEDF giving spare containers
    /// beyond the quotas, reclaimed for earlier deadlines) [default: fifo].
    #[arg(long, env = "YARD_RM_SCHEDULER", value_name = "NAME")]
    scheduler: Option<String>,
    /// Capacity queues: a TOML file of `[[queue]]` tables (name, capacity, maximum-capacity,
    /// user-limit-factor, acl-submit-applications, policy) and an optional `[preemption]`
    /// table (max_wait_before_kill, ms). See docs/queues.md [default: one queue, default, at
    /// 100 %, running --scheduler].
    #[arg(long, env = "YARD_RM_QUEUES", value_name = "FILE")]
    queues: Option<PathBuf>,
    /// The overload classifier: keeps tasks off nodes it has learned to call overloaded, under
    /// any cluster policy. paper (or on): seed 002's; yard: yard's variant (the node's load
    /// projected with the task, "at the maximum" apart from "above it", labels over the next
    /// minute); off [default: off]. See docs/decisions/cluster-policies.md.
    #[arg(
        long,
        env = "YARD_RM_OVERLOAD_CLASSIFIER",
        value_name = "off|paper|yard|on"
    )]
    overload_classifier: Option<String>,
    /// Which load the overload rule reads: host (the machine's) or own (each nodemanager's
    /// process tree; for several nodemanagers on one host) [default: host].
    #[arg(long, env = "YARD_RM_OVERLOAD_LOAD_SOURCE", value_name = "host|own")]
    overload_load_source: Option<String>,
    /// The rule: overloaded when the 1-minute load exceeds this many times the cores
    /// [default: 1].
    #[arg(long, env = "YARD_RM_OVERLOAD_MAX_LOAD_PER_CORE")]
    overload_max_load_per_core: Option<f64>,
    /// The rule: overloaded when less than this fraction of memory is free [default: 0.1].
    #[arg(long, env = "YARD_RM_OVERLOAD_MIN_FREE_MEMORY")]
    overload_min_free_memory: Option<f64>,
    /// The rule: overloaded when the disks move more than this fraction of the node's disk
    /// rate [default: disks not judged].
    #[arg(long, env = "YARD_RM_OVERLOAD_MAX_DISK")]
    overload_max_disk: Option<f64>,
    /// Which job a node serves first among those judged good: policy (the cluster policy's
    /// order), fcfs[:EPSILON_S] or map-first[:REDUCE_WEIGHT] [default: policy].
    #[arg(long, env = "YARD_RM_OVERLOAD_UTILITY", value_name = "NAME")]
    overload_utility: Option<String>,
    /// Labelled placements the classifier needs before it refuses any node [default: 20].
    #[arg(long, env = "YARD_RM_OVERLOAD_MIN_SAMPLES")]
    overload_min_samples: Option<u64>,
    /// A placement is labelled by its node's first load sample this long after it, ms
    /// [default: 5000].
    #[arg(long, env = "YARD_RM_OVERLOAD_SETTLE_MS")]
    overload_settle_ms: Option<i64>,
    /// A node refused this long gets one task anyway, as a probe, ms [default: 60000].
    #[arg(long, env = "YARD_RM_OVERLOAD_EXPLORE_AFTER_MS")]
    overload_explore_after_ms: Option<i64>,
    /// How long ended applications' aggregated logs are kept, seconds (YARN's
    /// yarn.log-aggregation.retain-seconds) [default: 604800, 7 days]. They are kept beside
    /// the state database, in <state-db>.app-logs.
    #[arg(long, env = "YARD_RM_LOG_AGGREGATION_RETAIN_SECONDS")]
    log_aggregation_retain_seconds: Option<u64>,
}

#[derive(Args)]
pub(crate) struct NmArgs {
    /// A TOML file with an `[nm]` section.
    #[arg(long, env = "YARD_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The rm's base URL [default: http://127.0.0.1:8088].
    #[arg(long, env = "YARD_NM_RM")]
    rm: Option<String>,
    /// Address to listen on [default: 127.0.0.1:8042; port 0 picks a free port].
    #[arg(long, env = "YARD_NM_BIND")]
    bind: Option<SocketAddr>,
    /// [default: default-rack]
    #[arg(long, env = "YARD_NM_RACK")]
    rack: Option<String>,
    /// [default: 8192]
    #[arg(long, env = "YARD_NM_MEMORY_MB")]
    memory_mb: Option<u64>,
    /// [default: 8]
    #[arg(long, env = "YARD_NM_VCORES")]
    vcores: Option<u32>,
    /// Where containers' working directories and logs go [default: yard-nm].
    #[arg(long, env = "YARD_NM_WORK_DIR")]
    work_dir: Option<PathBuf>,
    /// Heartbeat interval, milliseconds [default: 1000].
    #[arg(long, env = "YARD_NM_HEARTBEAT_MS")]
    heartbeat_ms: Option<u64>,
    /// The largest dataset block the node accepts, MiB [default: 1024].
    #[arg(long, env = "YARD_NM_MAX_BLOCK_MB")]
    max_block_mb: Option<u64>,
    /// A file holding this node's credential for the rm [default: the rm's local credentials,
    /// when run as its OS user on its host; YARD_NM_CREDENTIAL, if set, wins].
    #[arg(long, env = "YARD_NM_CREDENTIAL_FILE", value_name = "FILE")]
    credential_file: Option<PathBuf>,
    /// How many ended containers' directories (with their logs) to keep [default: 50].
    #[arg(long, env = "YARD_NM_KEEP_FINISHED")]
    keep_finished: Option<usize>,
    /// The node's disk rate (the classifier's DiskIORate): bytes per second, or with a unit,
    /// e.g. 200MB/s or 1.5GiB/s [default: measured at start by a short sequential write and
    /// read in the work directory].
    #[arg(long, env = "YARD_NM_DISK_RATE", value_name = "RATE")]
    disk_rate: Option<String>,
    /// Upload each ended container's stdout and stderr to the rm (YARN's
    /// yarn.log-aggregation-enable) [default: true].
    #[arg(
        long,
        env = "YARD_NM_LOG_AGGREGATION_ENABLE",
        value_name = "true|false"
    )]
    log_aggregation_enable: Option<bool>,
    /// The most bytes of one container's logs uploaded, shared by stdout and stderr; a longer
    /// file keeps its last bytes and says it was cut [default: 10485760, 10 MiB].
    #[arg(long, env = "YARD_NM_LOG_AGGREGATION_MAX_BYTES", value_name = "BYTES")]
    log_aggregation_max_bytes: Option<u64>,
}

/// The `--config` file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    rm: RmFile,
    #[serde(default)]
    nm: NmFile,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RmFile {
    bind: Option<SocketAddr>,
    node_expiry_ms: Option<i64>,
    lost_node_retention_ms: Option<i64>,
    state_db: Option<PathBuf>,
    am_max_attempts: Option<u32>,
    profiles_db: Option<PathBuf>,
    secret_file: Option<PathBuf>,
    master_share: Option<f64>,
    scheduler: Option<String>,
    queues: Option<PathBuf>,
    overload_classifier: Option<String>,
    overload_load_source: Option<String>,
    overload_max_load_per_core: Option<f64>,
    overload_min_free_memory: Option<f64>,
    overload_max_disk: Option<f64>,
    overload_utility: Option<String>,
    overload_min_samples: Option<u64>,
    overload_settle_ms: Option<i64>,
    overload_explore_after_ms: Option<i64>,
    log_aggregation_retain_seconds: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NmFile {
    rm: Option<String>,
    bind: Option<SocketAddr>,
    rack: Option<String>,
    memory_mb: Option<u64>,
    vcores: Option<u32>,
    work_dir: Option<PathBuf>,
    heartbeat_ms: Option<u64>,
    max_block_mb: Option<u64>,
    credential_file: Option<PathBuf>,
    keep_finished: Option<usize>,
    disk_rate: Option<String>,
    log_aggregation_enable: Option<bool>,
    log_aggregation_max_bytes: Option<u64>,
}

/// Reads the `--config` file; a file that cannot be read or parsed is bad input (exit 2).
fn config_file(path: Option<&PathBuf>) -> Result<ConfigFile> {
    let Some(path) = path else {
        return Ok(ConfigFile::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        BadInput(format!(
            "{}: cannot read the config file: {e}",
            path.display()
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        BadInput(format!(
            "{}: {}",
            path.display(),
            e.to_string().replace('\n', " ")
        ))
        .into()
    })
}

fn init_logs() {
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("YARD_LOG").unwrap_or_else(|_| "info".into());
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn announce(addr: SocketAddr) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on {addr}");
    let _ = out.flush();
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

pub(crate) fn rm(args: RmArgs) -> Result<()> {
    let file = config_file(args.config.as_ref())?.rm;
    let overload = overload_settings(&args, &file)?;
    let bind = args
        .bind
        .or(file.bind)
        .unwrap_or(([127, 0, 0, 1], 8088).into());
    let node_expiry_ms = args
        .node_expiry_ms
        .or(file.node_expiry_ms)
        .unwrap_or(10_000);
    let lost_node_retention_ms = args
        .lost_node_retention_ms
        .or(file.lost_node_retention_ms)
        .unwrap_or(60_000);
    if lost_node_retention_ms < 0 {
        return Err(BadInput(format!(
            "--lost-node-retention-ms {lost_node_retention_ms}: give milliseconds, 0 or more"
        ))
        .into());
    }
    let state_db = args
        .state_db
        .or(file.state_db)
        .unwrap_or_else(|| "yard-rm.db".into());
    let am_max_attempts = args
        .am_max_attempts
        .or(file.am_max_attempts)
        .unwrap_or(yard_cluster::app::DEFAULT_AM_MAX_ATTEMPTS);
    let profiles_db = args
        .profiles_db
        .or(file.profiles_db)
        .unwrap_or_else(|| "yard-profiles.db".into());
    // Masters run in their containers' directories: they need the path from anywhere.
    let profiles_db = std::path::absolute(&profiles_db)
        .with_context(|| format!("--profiles-db {}", profiles_db.display()))?;
    let master_share = args.master_share.or(file.master_share).unwrap_or(0.1);
    if !(0.0..=1.0).contains(&master_share) {
        return Err(BadInput(format!(
            "--master-share {master_share}: give a share from 0 to 1"
        ))
        .into());
    }
    let scheduler = match args.scheduler.or(file.scheduler) {
        Some(name) => name
            .parse::<yard_cluster::policy::ClusterPolicy>()
            .map_err(|e| BadInput(format!("--scheduler: {e}")))?,
        None => yard_cluster::policy::ClusterPolicy::default(),
    };
    let queues = match args.queues.or(file.queues) {
        Some(path) => Some(queue_file(&path, scheduler)?),
        None => None,
    };
    let secret_file = args
        .secret_file
        .or(file.secret_file)
        .unwrap_or_else(|| state_db.with_extension("secret"));
    init_logs();
    let settings = Settings {
        node_expiry_ms,
        lost_node_retention_ms,
        am_max_attempts,
        master_share,
        scheduler,
        overload,
        queues,
        ..Settings::default()
    };
    let tick = Duration::from_millis((node_expiry_ms / 4).clamp(50, 1000) as u64);
    let logs = yard_rm::logs::LogSettings::beside(
        &state_db,
        args.log_aggregation_retain_seconds
            .or(file.log_aggregation_retain_seconds),
    );
    let options = RmOptions {
        logs,
        bind,
        state_db,
        secret_file,
        yard_home: yard_rm::credentials::yard_home(),
        admin_user: std::env::var("USER").unwrap_or_else(|_| "admin".into()),
        settings,
        tick,
        master_env: [(
            "YARD_PROFILES".to_string(),
            profiles_db.display().to_string(),
        )]
        .into(),
        profiles_db: Some(profiles_db),
    };
    runtime()?
        .block_on(yard_rm::daemon::serve(options, announce, stop_signal()))
        .with_context(|| format!("serving the rm on {bind}"))
}

/// Reads and checks the `--queues` file; queues without a policy run `scheduler`. Anything
/// wrong is bad input (exit 2) naming the file and what to fix.
pub(crate) fn queue_file(
    path: &std::path::Path,
    scheduler: yard_cluster::policy::ClusterPolicy,
) -> Result<yard_cluster::queues::Queues> {
    read_queue_file(path)?
        .into_queues(scheduler)
        .map_err(|e| BadInput(format!("--queues {}: {e}", path.display())).into())
}

/// Reads a `--queues` file and checks it (as for any policy): `yard rm`'s and `yard sim`'s.
pub(crate) fn read_queue_file(path: &std::path::Path) -> Result<yard_cluster::queues::QueueFile> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        BadInput(format!(
            "--queues {}: cannot read the queue file: {e}",
            path.display()
        ))
    })?;
    let file: yard_cluster::queues::QueueFile = toml::from_str(&text).map_err(|e| {
        BadInput(format!(
            "--queues {}: {}",
            path.display(),
            e.to_string().trim_end().replace('\n', " ")
        ))
    })?;
    file.clone()
        .into_queues(yard_cluster::policy::ClusterPolicy::default())
        .map_err(|e| BadInput(format!("--queues {}: {e}", path.display())))?;
    Ok(file)
}

/// The overload classifier's settings from the flags and the file; `None` when it is off. A
/// setting given while it is off is refused (it would silently do nothing).
fn overload_settings(
    args: &RmArgs,
    file: &RmFile,
) -> Result<Option<yard_cluster::classifier::ClassifierConfig>> {
    use yard_cluster::classifier::{ClassifierConfig, LoadSource, Utility, Variant};
    let variant = match args
        .overload_classifier
        .clone()
        .or(file.overload_classifier.clone())
        .as_deref()
    {
        None | Some("off") => None,
        Some("on") => Some(Variant::Paper),
        Some(other) => Some(Variant::parse(other).map_err(|e| {
            BadInput(format!(
                "--overload-classifier (or overload_classifier in the config file): {e}, on (= \
                 paper) or off"
            ))
        })?),
    };
    let on = variant.is_some();
    let source = args
        .overload_load_source
        .clone()
        .or(file.overload_load_source.clone());
    let utility = args
        .overload_utility
        .clone()
        .or(file.overload_utility.clone());
    let max_load = args
        .overload_max_load_per_core
        .or(file.overload_max_load_per_core);
    let min_free = args
        .overload_min_free_memory
        .or(file.overload_min_free_memory);
    let max_disk = args.overload_max_disk.or(file.overload_max_disk);
    let min_samples = args.overload_min_samples.or(file.overload_min_samples);
    let settle = args.overload_settle_ms.or(file.overload_settle_ms);
    let explore = args
        .overload_explore_after_ms
        .or(file.overload_explore_after_ms);
    let any_set = source.is_some()
        || utility.is_some()
        || max_load.is_some()
        || min_free.is_some()
        || max_disk.is_some()
        || min_samples.is_some()
        || settle.is_some()
        || explore.is_some();
    if !on {
        if any_set {
            return Err(BadInput(
                "--overload-* settings are given but the classifier is off: add \
                 --overload-classifier on (the paper's rule; or yard), or drop them"
                    .into(),
            )
            .into());
        }
        return Ok(None);
    }
    let mut c = ClassifierConfig {
        variant: variant.unwrap_or_default(),
        ..ClassifierConfig::default()
    };
    if let Some(s) = source {
        c.rule.source =
            LoadSource::parse(&s).map_err(|e| BadInput(format!("--overload-load-source: {e}")))?;
    }
    if let Some(u) = utility {
        c.utility = Utility::parse(&u).map_err(|e| BadInput(format!("--overload-utility: {e}")))?;
    }
    c.rule.max_load_per_core = max_load.unwrap_or(c.rule.max_load_per_core);
    c.rule.min_free_memory = min_free.unwrap_or(c.rule.min_free_memory);
    c.rule.max_disk = max_disk.or(c.rule.max_disk);
    c.min_samples = min_samples.unwrap_or(c.min_samples);
    c.settle_ms = settle.unwrap_or(c.settle_ms);
    c.explore_after_ms = explore.unwrap_or(c.explore_after_ms);
    c.validate().map_err(BadInput)?;
    Ok(Some(c))
}

pub(crate) fn nm(args: NmArgs) -> Result<()> {
    let file = config_file(args.config.as_ref())?.nm;
    let logs = log_aggregation(
        (args.log_aggregation_enable, args.log_aggregation_max_bytes),
        &file,
    )?;
    let bind = args
        .bind
        .or(file.bind)
        .unwrap_or(([127, 0, 0, 1], 8042).into());
    let rm = args
        .rm
        .or(file.rm)
        .unwrap_or_else(|| "http://127.0.0.1:8088".into());
    let capability = Resource {
        memory_mb: args.memory_mb.or(file.memory_mb).unwrap_or(8192),
        vcores: args.vcores.or(file.vcores).unwrap_or(8),
    };
    let heartbeat_ms = args.heartbeat_ms.or(file.heartbeat_ms).unwrap_or(1000);
    let data = match args.max_block_mb.or(file.max_block_mb) {
        Some(0) => return Err(BadInput("--max-block-mb must be at least 1".into()).into()),
        Some(mb) => DataSettings {
            max_block_bytes: mb.saturating_mul(1 << 20),
        },
        None => DataSettings::default(),
    };
    let disk_rate = args
        .disk_rate
        .or(file.disk_rate)
        .map(|r| yard_nodemanager::disk::parse_rate(&r))
        .transpose()
        .map_err(|e| BadInput(format!("--disk-rate {e}")))?;
    let rm = rm.trim_end_matches('/').to_owned();
    let credential_file = args.credential_file.or(file.credential_file);
    let credential = crate::auth::node_credential_for(&rm, credential_file.as_deref())?;
    init_logs();
    let options = NmOptions {
        bind,
        credential,
        keep_finished: args.keep_finished.or(file.keep_finished).unwrap_or(50),
        rm,
        rack: args
            .rack
            .or(file.rack)
            .unwrap_or_else(|| "default-rack".into()),
        capability,
        work_dir: args
            .work_dir
            .or(file.work_dir)
            .unwrap_or_else(|| "yard-nm".into()),
        heartbeat: Duration::from_millis(heartbeat_ms.max(10)),
        stop_grace: Duration::from_secs(5),
        disk_rate,
        logs,
    };
    runtime()?
        .block_on(yard_nodemanager::daemon::serve_with(
            options,
            data,
            announce,
            stop_signal(),
        ))
        .with_context(|| format!("serving the nodemanager on {bind}"))
}

/// The nodemanager's log aggregation from its flags (as `(enable, max bytes)`) and the file.
fn log_aggregation(
    args: (Option<bool>, Option<u64>),
    file: &NmFile,
) -> Result<yard_nodemanager::logs::LogAggregation> {
    let default = yard_nodemanager::logs::LogAggregation::default();
    let max = args.1.or(file.log_aggregation_max_bytes);
    if max == Some(0) {
        return Err(BadInput(
            "--log-aggregation-max-bytes must be at least 1 (turn aggregation off with --log-aggregation-enable false)".into(),
        )
        .into());
    }
    Ok(yard_nodemanager::logs::LogAggregation {
        enabled: args
            .0
            .or(file.log_aggregation_enable)
            .unwrap_or(default.enabled),
        max_bytes_per_container: max.unwrap_or(default.max_bytes_per_container),
    })
}
