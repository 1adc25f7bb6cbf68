//! `yard rm` and `yard nm`: the daemons. Each prints `listening on ADDR` once bound (so a
//! caller can ask for port 0 and learn the port), logs to stderr, and stops on SIGINT/SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use yard_nodemanager::daemon::NmOptions;
use yard_rm::cluster::Settings;
use yard_rm::daemon::RmOptions;
use yard_wire::protocol::Resource;

#[derive(Args)]
pub(crate) struct RmArgs {
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8088", env = "YARD_RM_BIND")]
    bind: SocketAddr,
    /// A nodemanager silent this long is LOST, milliseconds.
    #[arg(long, default_value_t = 10_000, env = "YARD_RM_NODE_EXPIRY_MS")]
    node_expiry_ms: i64,
    /// The SQLite state database: applications and nodes survive a restart.
    #[arg(long, default_value = "yard-rm.db", env = "YARD_RM_STATE_DB")]
    state_db: PathBuf,
    /// How many times an application's master is started before the application fails.
    #[arg(long, default_value_t = yard_rm::app::DEFAULT_AM_MAX_ATTEMPTS, env = "YARD_RM_AM_MAX_ATTEMPTS")]
    am_max_attempts: u32,
}

#[derive(Args)]
pub(crate) struct NmArgs {
    /// The rm's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8088", env = "YARD_NM_RM")]
    rm: String,
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8042", env = "YARD_NM_BIND")]
    bind: SocketAddr,
    #[arg(long, default_value = "default-rack", env = "YARD_NM_RACK")]
    rack: String,
    #[arg(long, default_value_t = 8192, env = "YARD_NM_MEMORY_MB")]
    memory_mb: u64,
    #[arg(long, default_value_t = 8, env = "YARD_NM_VCORES")]
    vcores: u32,
    /// Where containers' working directories and logs go.
    #[arg(long, default_value = "yard-nm", env = "YARD_NM_WORK_DIR")]
    work_dir: PathBuf,
    /// Heartbeat interval, milliseconds.
    #[arg(long, default_value_t = 1000, env = "YARD_NM_HEARTBEAT_MS")]
    heartbeat_ms: u64,
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
    init_logs();
    let settings = Settings {
        node_expiry_ms: args.node_expiry_ms,
        am_max_attempts: args.am_max_attempts,
        ..Settings::default()
    };
    let tick = Duration::from_millis((args.node_expiry_ms / 4).clamp(50, 1000) as u64);
    let options = RmOptions {
        bind: args.bind,
        state_db: args.state_db,
        settings,
        tick,
    };
    runtime()?
        .block_on(yard_rm::daemon::serve(options, announce, stop_signal()))
        .with_context(|| format!("serving the rm on {}", args.bind))
}

pub(crate) fn nm(args: NmArgs) -> Result<()> {
    init_logs();
    let options = NmOptions {
        bind: args.bind,
        rm: args.rm.trim_end_matches('/').to_owned(),
        rack: args.rack,
        capability: Resource {
            memory_mb: args.memory_mb,
            vcores: args.vcores,
        },
        work_dir: args.work_dir,
        heartbeat: Duration::from_millis(args.heartbeat_ms.max(10)),
        stop_grace: Duration::from_secs(5),
    };
    runtime()?
        .block_on(yard_nodemanager::daemon::serve(
            options,
            announce,
            stop_signal(),
        ))
        .with_context(|| format!("serving the nodemanager on {}", args.bind))
}
