//! `yard up`: a local cluster in the foreground — an rm and N nodemanagers on 127.0.0.1 — with
//! a status line, until Ctrl-C (or SIGTERM) stops it: the nodemanagers first (each stops its
//! containers), then the rm, and nothing is left running.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::local::{LocalCluster, Shape, stop_channel};
use crate::sim::BadInput;

/// The file in `yard up`'s directory holding the cluster's scrape token, for Prometheus.
pub(crate) const SCRAPE_TOKEN_FILE: &str = "scrape-token";

#[derive(Args)]
pub(crate) struct UpArgs {
    /// How many nodemanagers.
    #[arg(long, default_value_t = 3)]
    nodes: u32,
    /// Where the rm listens (YARN's port by default; `127.0.0.1:0` takes any free one). Only
    /// loopback: a cluster of one host.
    #[arg(long, default_value = "127.0.0.1:8088")]
    bind: std::net::SocketAddr,
    /// The cluster policy: fifo, fair, edf, minedf, minedf-wc (as `yard rm --scheduler`).
    #[arg(long)]
    scheduler: Option<String>,
    /// Each node's memory and vcores.
    #[arg(long, default_value_t = 2048)]
    memory_mb: u64,
    #[arg(long, default_value_t = 2)]
    vcores: u32,
    /// How often each nodemanager heartbeats.
    #[arg(long, default_value_t = 500)]
    heartbeat_ms: u64,
    /// More flags for the rm, one per `--rm-arg` (e.g. `--rm-arg=--overload-classifier
    /// --rm-arg=on`).
    #[arg(long = "rm-arg", value_name = "ARG", allow_hyphen_values = true)]
    rm_args: Vec<String>,
    /// State, logs and work directories, kept after it stops [default: a temporary
    /// directory, removed after it stops].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Nodemanager i listens on 127.0.0.1:(PORT + i) [default: any free port each]. YARN's
    /// nodemanagers use 8042 (one per host: here give a base such as 8042).
    #[arg(long, value_name = "PORT")]
    nm_base_port: Option<u16>,
}

pub(crate) fn up(args: UpArgs) -> Result<()> {
    if args.nodes == 0 || args.nodes > 64 {
        return Err(BadInput(format!("--nodes {}: give 1 to 64", args.nodes)).into());
    }
    if let Some(base) = args.nm_base_port
        && (base == 0 || u32::from(base) + args.nodes - 1 > u32::from(u16::MAX))
    {
        return Err(BadInput(format!(
            "--nm-base-port {base}: {} nodemanagers need ports {base} to {}: give a base from 1 to {}",
            args.nodes,
            u32::from(base) + args.nodes - 1,
            u32::from(u16::MAX) + 1 - args.nodes
        ))
        .into());
    }
    if !args.bind.ip().is_loopback() {
        return Err(BadInput(format!(
            "--bind {}: yard up runs a cluster of this host; give a 127.0.0.1 address",
            args.bind
        ))
        .into());
    }
    let (dir, keep) = match &args.dir {
        Some(d) => (d.clone(), true),
        None => (
            std::env::temp_dir().join(format!("yard-up-{}", std::process::id())),
            false,
        ),
    };
    let mut rm_args = args.rm_args.clone();
    if let Some(s) = &args.scheduler {
        rm_args.extend(["--scheduler".into(), s.clone()]);
    }
    let shape = Shape {
        nodes: args.nodes,
        memory_mb: args.memory_mb,
        vcores: args.vcores,
        heartbeat_ms: args.heartbeat_ms,
        rm_bind: args.bind.to_string(),
        nm_base_port: args.nm_base_port,
        rm_args,
        dir: dir.clone(),
        home: None,
    };
    // Ctrl-C and SIGTERM are heard from the start: a cluster half started is stopped too.
    let stop = stop_channel()?;
    eprintln!(
        "state and logs in {} ({} when it stops)",
        dir.display(),
        if keep { "kept" } else { "removed" }
    );
    let result = run(&shape, &stop);
    if keep {
        eprintln!("state and logs kept in {}", dir.display());
    } else if result.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("logs kept in {}", dir.display());
    }
    result
}

fn run(shape: &Shape, stop: &mpsc::Receiver<()>) -> Result<()> {
    let mut cluster = LocalCluster::start(shape)?;
    // Prometheus' credential for the targets list and the masters (grafana/prometheus.yml
    // reads it with `credentials_file`).
    let scrape_token = shape.dir.join(SCRAPE_TOKEN_FILE);
    let issued = cluster
        .client
        .typed(|rm| rm.issue_token(&serde_json::json!({ "scrape": true })))?;
    crate::auth::write_token(&scrape_token, &issued.token)?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "rm {} with {} nodemanagers", cluster.url, shape.nodes)?;
        writeln!(
            out,
            "ready: `yard submit … --rm {url}` runs jobs here; its web UI is {url}/ui (token: \
             `yard auth token --rm {url}`); Prometheus scrapes {url}/metrics with the scrape \
             token in {token_file} (README, \"Metrics and dashboards\"); Ctrl-C stops it",
            url = cluster.url,
            token_file = scrape_token.display(),
        )?;
        out.flush()?;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"));
    let outcome = loop {
        match stop.recv_timeout(Duration::from_secs(1)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Some((log, status)) = cluster.exited() {
            break Err(anyhow::anyhow!(
                "a daemon stopped by itself ({status}); see {}",
                log.display()
            ));
        }
        bar.set_message(status_line(&cluster));
        bar.tick();
    };
    bar.finish_and_clear();
    eprintln!(
        "stopping {} nodemanagers (and their containers), then the rm",
        shape.nodes
    );
    drop(cluster);
    eprintln!("stopped");
    outcome
}

/// `3/3 nodes · apps: 1 running, 2 accepted, 4 finished · 5 containers, 2816 of 6144 MB`.
fn status_line(cluster: &LocalCluster) -> String {
    // All 0 while the rm does not answer.
    let m = cluster.client.typed(|rm| rm.metrics()).unwrap_or_default();
    format!(
        "{} {}/{} nodes · apps: {} running, {} pending, {} done · {} containers, {} of {} MB",
        cluster.url,
        m.active_nodes,
        m.total_nodes,
        m.apps_running,
        m.apps_pending,
        m.apps_completed,
        m.containers_allocated,
        m.allocated_mb,
        m.total_mb,
    )
}
