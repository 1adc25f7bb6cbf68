//! `yard rm`: the resource manager as a process. Binds its HTTP listener, draws the token key
//! from the OS, serves the routes over a [`Cluster`], and expires silent nodes every tick.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use yard_wire::token::TokenKey;

use crate::cluster::{Cluster, Settings};
use crate::rest::{Clock, Rm, router};

/// What `yard rm` is started with.
#[derive(Debug, Clone)]
pub struct RmOptions {
    pub bind: SocketAddr,
    pub settings: Settings,
    /// How often silent nodes are looked for.
    pub tick: Duration,
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

/// Runs the rm until `shutdown` resolves. `ready` hears the bound address first (port 0 picks
/// a free one).
pub async fn serve(
    options: RmOptions,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let started_ms = now_ms();
    let cluster = Cluster::new(options.settings, TokenKey::new(random_key()?), started_ms);
    let clock: Clock = Arc::new(now_ms);
    let rm = Rm {
        cluster: Arc::new(Mutex::new(cluster)),
        clock,
        started_ms,
    };
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    ready(listener.local_addr()?);
    let cluster = rm.cluster.clone();
    let expiry = tokio::spawn(async move {
        let mut tick = tokio::time::interval(options.tick);
        loop {
            tick.tick().await;
            let lost = cluster
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .expire(now_ms());
            for node in lost {
                tracing::warn!(%node, "node lost: no heartbeat within the expiry interval");
            }
        }
    });
    let served = axum::serve(listener, router(rm))
        .with_graceful_shutdown(shutdown)
        .await;
    expiry.abort();
    served
}
