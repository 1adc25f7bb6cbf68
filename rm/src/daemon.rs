//! `yard rm`: the resource manager as a process. Restores its state from SQLite, binds its HTTP
//! listener, reads (or creates) the cluster secret, leaves the local credentials, serves the
//! routes over a [`Cluster`], and every tick expires silent nodes and queues what changed in
//! the background for the [`Journal`] (the routes that change state wait for their commit).

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use yard_wire::auth::Principal;

use crate::cluster::{Cluster, Settings};
use crate::credentials::{LocalCredentials, load_or_create_secret, write_local};
use crate::journal::Journal;
use crate::rest::{Clock, Rm, router};
use crate::store::Store;

/// What `yard rm` is started with.
#[derive(Debug, Clone)]
pub struct RmOptions {
    pub bind: SocketAddr,
    /// The SQLite state database (created if missing).
    pub state_db: PathBuf,
    /// The cluster secret (created if missing, mode 0600).
    pub secret_file: PathBuf,
    /// Where to leave the same OS user's local credentials (`$YARD_HOME`), if anywhere.
    pub yard_home: Option<PathBuf>,
    /// The user the local admin token names (the OS user running the rm).
    pub admin_user: String,
    pub settings: Settings,
    /// How often silent nodes are looked for and background changes written.
    pub tick: Duration,
    /// Variables every master gets (the cluster's settings for masters, e.g. `YARD_PROFILES`).
    pub master_env: BTreeMap<String, String>,
    /// The job-profile store the masters write: the quotas of jobs whose masters register a
    /// job kind but no profile are sized by what it holds for that kind.
    pub profiles_db: Option<PathBuf>,
    /// Where the containers' aggregated logs are kept, and how long.
    pub logs: crate::logs::LogSettings,
}

/// How often ended applications' aggregated logs are checked against their retention (more
/// often under a shorter retention).
const LOG_EXPIRY_EVERY: Duration = Duration::from_secs(60);

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn lock(cluster: &Mutex<Cluster>) -> std::sync::MutexGuard<'_, Cluster> {
    cluster.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the rm until `shutdown` resolves. `ready` hears the bound address first (port 0 picks
/// a free one).
pub async fn serve(
    options: RmOptions,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let started_ms = now_ms();
    let store = Arc::new(
        Store::open(&options.state_db)
            .await
            .map_err(io::Error::other)?,
    );
    let secret = load_or_create_secret(&options.secret_file)?;
    let (apps, nodes) = store.load().await.map_err(io::Error::other)?;
    if !apps.is_empty() || !nodes.is_empty() {
        tracing::info!(apps = apps.len(), nodes = nodes.len(), db = %options.state_db.display(), "restored");
    }
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let address = listener.local_addr()?;
    let url = format!("http://{address}");
    tracing::info!(scheduler = %options.settings.scheduler, "cluster policy");
    let restart_epoch = store.next_epoch().await.map_err(io::Error::other)?;
    let mut cluster = Cluster::new(options.settings, secret.clone(), started_ms);
    cluster.set_restart_epoch(restart_epoch);
    cluster.restore(apps, nodes);
    cluster.restore_datasets(store.load_datasets().await.map_err(io::Error::other)?);
    cluster.restore_recovery(store.load_recovery().await.map_err(io::Error::other)?);
    cluster.restore_deletes(store.load_deletes().await.map_err(io::Error::other)?);
    cluster.set_url(url.clone());
    for (name, value) in &options.master_env {
        cluster.set_master_env(name, value.clone());
    }
    // Masters accept the scrape token on their `/metrics` (and nowhere else): they compare
    // with this copy, having no key to verify a token with.
    cluster.set_master_env(
        "YARD_SCRAPE_TOKEN",
        secret.bearer_key().issue(&Principal::Scraper),
    );
    let cluster = Arc::new(Mutex::new(cluster));
    let journal = Journal::start(store.clone(), cluster.clone());
    let clock: Clock = Arc::new(now_ms);
    let profiles = options
        .profiles_db
        .as_deref()
        .map(crate::profiles::Profiles::at);
    let rm = Rm {
        cluster,
        clock,
        started_ms,
        bearer: secret.bearer_key(),
        journal: Some(journal.clone()),
        profiles,
        metrics: Arc::new(crate::metrics::RmMetrics::started_at(started_ms)),
        scans: Default::default(),
        logs: Some(crate::logs::LogStore::open(options.logs.clone())?),
        seeds: Default::default(),
    };
    if let Some(home) = &options.yard_home {
        let creds = LocalCredentials {
            rm: url,
            token: rm.bearer.issue(&Principal::Admin {
                user: options.admin_user.clone(),
            }),
            node_credential: rm.bearer.issue(&Principal::Node { node: None }),
        };
        match write_local(home, &creds) {
            Ok(path) => {
                tracing::info!(credentials = %path.display(), "left local credentials for this OS user")
            }
            Err(e) => {
                tracing::warn!(error = %e, home = %home.display(), "cannot leave local credentials; hand tokens over with `yard auth token`")
            }
        }
    }
    ready(address);
    let (cluster, queue) = (rm.cluster.clone(), journal.clone());
    let log_store = rm.logs.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(options.tick);
        let mut last_log_expiry = Instant::now();
        let expiry_every = LOG_EXPIRY_EVERY.min(options.logs.retain);
        loop {
            tick.tick().await;
            let (lost, running) = {
                let mut c = lock(&cluster);
                let lost = c.expire(now_ms());
                // Heartbeats, allocations and expiries: written behind the replies.
                let _ = queue.queue(c.take_changes(), false);
                (lost, crate::logs::running_containers(&c))
            };
            for node in lost {
                tracing::warn!(%node, "node lost: no heartbeat within the expiry interval");
            }
            if let Some(store) = &log_store {
                let expire = last_log_expiry.elapsed() >= expiry_every;
                let active = expire.then(|| crate::logs::active_apps(&lock(&cluster)));
                if expire {
                    last_log_expiry = Instant::now();
                }
                crate::logs::tick(store.clone(), running, active).await;
            }
        }
    });
    // Replies are small and come back to back: without TCP_NODELAY, Nagle's algorithm holds a
    // reply's last segment for the peer's delayed ACK (40 ms a round trip on Linux).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(listener, router(rm.clone()))
        .with_graceful_shutdown(shutdown)
        .await;
    ticker.abort();
    // What changed since the last tick is written before the process ends.
    let last = {
        let mut c = lock(&rm.cluster);
        journal.queue(c.take_changes(), true)
    };
    last.committed().await.map_err(io::Error::other)?;
    served
}
