//! A live nodemanager's heartbeats carry its load: the host's, with the disk rate it measured
//! at start; its own process tree's; and a running container's, whose environment has the
//! same disk rate. A stand-in rm records the heartbeats.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use yard_nodemanager::daemon::{DISK_RATE_ENV, NmOptions, serve};
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::{HeartbeatReply, NodeHeartbeat, Registered, Resource};
use yard_wire::token::mint;

/// An rm that registers every node with `secret`'s keys and keeps every heartbeat it hears.
async fn recording_rm(secret: ClusterSecret, heard: Arc<Mutex<Vec<NodeHeartbeat>>>) -> String {
    let router = Router::new()
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
        .route(
            "/ws/v1/yard/nodes/heartbeat",
            post(move |Json(hb): Json<NodeHeartbeat>| async move {
                heard.lock().unwrap().push(hb);
                Json(HeartbeatReply::default())
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// Waits (at most 30 s, polling) for a heartbeat `f` accepts.
async fn heartbeat_where<T>(
    heard: &Mutex<Vec<NodeHeartbeat>>,
    what: &str,
    f: impl Fn(&NodeHeartbeat) -> Option<T>,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = heard.lock().unwrap().iter().rev().find_map(&f) {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn heartbeats_carry_the_hosts_the_own_trees_and_a_containers_load() {
    let secret = ClusterSecret::new([9; 32]);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let rm = recording_rm(secret.clone(), heard.clone()).await;
    let work = tempfile::tempdir().unwrap();
    let (ready, bound) = tokio::sync::oneshot::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = NmOptions {
        bind: ([127, 0, 0, 1], 0).into(),
        rm,
        rack: "r1".into(),
        capability: Resource {
            memory_mb: 1024,
            vcores: 2,
        },
        work_dir: work.path().join("nm"),
        heartbeat: Duration::from_millis(50),
        stop_grace: Duration::from_secs(5),
        credential: "a node credential".into(),
        keep_finished: 5,
        disk_rate: None, // measured at start
    };
    let nm_task = tokio::spawn(serve(
        options,
        move |a| ready.send(a).unwrap(),
        async move {
            let _ = stopped.await;
        },
    ));
    let nm = bound.await.unwrap();

    // The first heartbeat already has the measured rate; the probe's file is gone.
    let rate = heartbeat_where(&heard, "a heartbeat", |hb| {
        Some(hb.telemetry.disk_io_rate_bytes_per_s)
    })
    .await;
    assert!(rate > 0.0, "the measured disk rate: {rate}");
    assert!(!work.path().join("nm").join(".yard-disk-probe").exists());
    {
        let first = &heard.lock().unwrap()[0].telemetry;
        assert!(first.cores >= 1, "{first:?}");
        assert!(first.memory_total_bytes > 0, "{first:?}");
        // The nodemanager's own tree: this test's process (it runs in it), at least.
        assert!(
            first.own.processes >= 1 && first.own.rss_bytes > 0,
            "{:?}",
            first.own
        );
    }

    // A container that records its environment and then spins: its tree's CPU shows in a
    // heartbeat, and the own tree counts its process too.
    let container = "container_e1000_1000_0001_01_000002";
    let token = mint(
        &secret.container_key(&nm.to_string()),
        container,
        &nm.to_string(),
        128,
        1,
        i64::MAX,
    );
    let script = format!(
        "printf '%s' \"${DISK_RATE_ENV}\" > rate.txt && sh -c 'while :; do :; done' & wait"
    );
    let started = reqwest::Client::new()
        .post(format!("http://{nm}/ws/v1/node/containers"))
        .json(&json!({"token": token, "command": ["/bin/sh", "-c", script]}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201, "{:?}", started.text().await);
    let usage = heartbeat_where(&heard, "the container's CPU", |hb| {
        hb.telemetry
            .containers
            .iter()
            .find(|c| c.container_id == container && c.cpu_percent > 0.0)
            .map(|c| (c.clone(), hb.telemetry.own.clone()))
    })
    .await;
    let (c, own) = usage;
    assert!(c.rss_bytes > 0 && c.virtual_bytes > 0, "{c:?}");
    assert!(
        own.processes >= 3,
        "the nm, the container's shell and its spinner: {own:?}"
    );
    let given =
        std::fs::read_to_string(work.path().join("nm").join(container).join("rate.txt")).unwrap();
    assert_eq!(
        given,
        format!("{rate:.0}"),
        "the container is told the node's rate"
    );

    // Every sample was within the range the rm accepts.
    for hb in heard.lock().unwrap().iter() {
        hb.telemetry.check("telemetry").unwrap();
    }
    stop.send(()).unwrap();
    nm_task.await.unwrap().unwrap();
}
