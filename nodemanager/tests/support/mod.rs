//! A live nodemanager for the tests (127.0.0.1, ephemeral ports) and the stand-in rm it
//! registers with: the rm's node routes only, its heartbeat answered as each test says.

#![allow(dead_code)]

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::routing::{MethodRouter, post};
use axum::{Json, Router};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use yard_nodemanager::daemon::{NmOptions, serve};
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::{Registered, Resource};

/// An rm that registers every node with `secret`'s keys (the container key for the node id
/// the registration names) and answers heartbeats with `heartbeat`: its base URL.
pub async fn stand_in_rm(secret: ClusterSecret, heartbeat: MethodRouter) -> String {
    stand_in_rm_with(secret, heartbeat, Router::new()).await
}

/// [`stand_in_rm`] that also serves `more` (e.g. the log uploads' route).
pub async fn stand_in_rm_with(
    secret: ClusterSecret,
    heartbeat: MethodRouter,
    more: Router,
) -> String {
    let router = more
        .route(
            "/ws/v1/yard/nodes",
            post(move |Json(node): Json<Value>| async move {
                let id = node["nodeId"].as_str().unwrap_or_default().to_owned();
                Json(Registered {
                    container_key: secret.container_key(&id).to_hex(),
                    data_key: secret.data_key().to_hex(),
                })
            }),
        )
        .route("/ws/v1/yard/nodes/heartbeat", heartbeat);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// A small node (1 GiB, 2 vcores, rack r1) on an ephemeral port of 127.0.0.1, talking to `rm`
/// and working in `work`/nm: a heartbeat every 50 ms, 5 s to stop a container, 5 ended
/// containers kept, and a disk rate of 100 MB/s set, not measured.
pub fn options(rm: String, work: &Path) -> NmOptions {
    NmOptions {
        bind: ([127, 0, 0, 1], 0).into(),
        rm,
        rack: "r1".into(),
        capability: Resource {
            memory_mb: 1024,
            vcores: 2,
        },
        work_dir: work.join("nm"),
        heartbeat: Duration::from_millis(50),
        stop_grace: Duration::from_secs(5),
        credential: "a node credential".into(),
        keep_finished: 5,
        logs: Default::default(),
        disk_rate: Some(100e6),
    }
}

/// A nodemanager serving in this test's runtime.
pub struct Nm {
    /// Where it listens.
    pub addr: SocketAddr,
    quit: oneshot::Sender<()>,
    task: JoinHandle<io::Result<()>>,
}

impl Nm {
    /// Starts one with `options` and waits until it listens.
    pub async fn start(options: NmOptions) -> Nm {
        let (ready, bound) = oneshot::channel();
        let (quit, quitting) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(
            options,
            move |a| ready.send(a).unwrap(),
            async move {
                let _ = quitting.await;
            },
        ));
        let addr = bound.await.unwrap();
        Nm { addr, quit, task }
    }

    /// Asks it to stop and waits until it has; it must end without an error.
    pub async fn stop(self) {
        self.quit.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

/// Polls `probe` until it gives `Some`, or fails after a generous deadline (no fixed sleeps).
pub async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    probe: impl Fn() -> F,
) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The node's info (`nodeInfo`) once it has registered with its rm.
pub async fn registered(addr: SocketAddr) -> Value {
    let http = reqwest::Client::new();
    let url = format!("http://{addr}/ws/v1/node/info");
    eventually("registration", || async {
        let v: Value = http.get(&url).send().await.ok()?.json().await.ok()?;
        Some(v["nodeInfo"].clone()).filter(|i| i["registered"] == true)
    })
    .await
}
