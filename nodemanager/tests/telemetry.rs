//! A live nodemanager's heartbeats carry its load: the host's, with the disk rate it measured
//! at start; its own process tree's; and a running container's, whose environment has the
//! same disk rate. A stand-in rm records the heartbeats.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use serde_json::json;
use support::Nm;
use yard_nodemanager::daemon::{DISK_RATE_ENV, NmOptions};
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::{HeartbeatReply, NodeHeartbeat};
use yard_wire::token::mint;

/// An rm that registers every node with `secret`'s keys and keeps every heartbeat it hears.
async fn recording_rm(secret: ClusterSecret, heard: Arc<Mutex<Vec<NodeHeartbeat>>>) -> String {
    let heartbeat = post(move |Json(hb): Json<NodeHeartbeat>| async move {
        heard.lock().unwrap().push(hb);
        Json(HeartbeatReply::default())
    });
    support::stand_in_rm(secret, heartbeat).await
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
    let node = Nm::start(NmOptions {
        disk_rate: None, // measured at start
        ..support::options(rm, work.path())
    })
    .await;
    let nm = node.addr;

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
    node.stop().await;
}
