//! `yard rm`: the resource manager as a process. Restores its state from SQLite, binds its HTTP
//! listener, draws the token key from the OS, serves the routes over a [`Cluster`], and every
//! tick expires silent nodes and writes what changed (once more at shutdown).

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use yard_wire::token::TokenKey;

use crate::cluster::{Cluster, Settings};
use crate::rest::{Clock, Rm, router};
use crate::store::Store;

/// What `yard rm` is started with.
#[derive(Debug, Clone)]
pub struct RmOptions {
    pub bind: SocketAddr,
    /// The SQLite state database (created if missing).
    pub state_db: PathBuf,
    pub settings: Settings,
    /// How often silent nodes are looked for and changes written.
    pub tick: Duration,
    /// Variables every master gets (the cluster's settings for masters, e.g. `YARD_PROFILES`).
    pub master_env: BTreeMap<String, String>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// 32 bytes from the OS's randomness, for the container-token key.
fn random_key() -> io::Result<[u8; 32]> {
    use std::io::Read;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    Ok(key)
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
    let (apps, nodes) = store.load().await.map_err(io::Error::other)?;
    if !apps.is_empty() || !nodes.is_empty() {
        tracing::info!(apps = apps.len(), nodes = nodes.len(), db = %options.state_db.display(), "restored");
    }
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let address = listener.local_addr()?;
    let mut cluster = Cluster::new(options.settings, TokenKey::new(random_key()?), started_ms);
    cluster.restore(apps, nodes);
    cluster.restore_datasets(store.load_datasets().await.map_err(io::Error::other)?);
    cluster.set_url(format!("http://{address}"));
    for (name, value) in &options.master_env {
        cluster.set_master_env(name, value.clone());
    }
    let clock: Clock = Arc::new(now_ms);
    let rm = Rm {
        cluster: Arc::new(Mutex::new(cluster)),
        clock,
        started_ms,
    };
    ready(address);
    let (cluster, writer) = (rm.cluster.clone(), store.clone());
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(options.tick);
        loop {
            tick.tick().await;
            let (lost, (apps, nodes), datasets) = {
                let mut c = lock(&cluster);
                (c.expire(now_ms()), c.take_dirty(), c.take_dirty_datasets())
            };
            for node in lost {
                tracing::warn!(%node, "node lost: no heartbeat within the expiry interval");
            }
            if let Err(e) = writer.save(&apps, &nodes).await {
                tracing::error!(error = %e, "cannot write the rm's state");
            }
            if let Err(e) = writer.save_datasets(&datasets).await {
                tracing::error!(error = %e, "cannot write the datasets' block maps");
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
    let ((apps, nodes), datasets) = {
        let mut c = lock(&rm.cluster);
        (c.take_dirty(), c.take_dirty_datasets())
    };
    store.save(&apps, &nodes).await.map_err(io::Error::other)?;
    store
        .save_datasets(&datasets)
        .await
        .map_err(io::Error::other)?;
    served
}
