//! A live nodemanager's `GET /metrics`: heartbeats answered and failed, containers launched,
//! refused and ended by how, containers running, and the load it sampled, all named
//! `yard_nodemanager_*` with no container id anywhere. A stand-in rm refuses the first
//! heartbeats, then answers, and orders a container stopped when the test says so.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use serde_json::{Value, json};
use support::Nm;
use yard_nodemanager::daemon::NmOptions;
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::HeartbeatReply;
use yard_wire::token::mint;

/// Heartbeats this stand-in rm refuses before it answers.
const REFUSED: usize = 3;

/// An rm that registers every node with `secret`'s keys, answers 503 to the first
/// [`REFUSED`] heartbeats, and then orders stopped whatever `stop` holds.
async fn refusing_rm(secret: ClusterSecret, stop: Arc<Mutex<Vec<String>>>) -> String {
    let beats = Arc::new(AtomicUsize::new(0));
    let heartbeat = post(move |Json(_): Json<Value>| async move {
        if beats.fetch_add(1, Ordering::SeqCst) < REFUSED {
            return (StatusCode::SERVICE_UNAVAILABLE, "not now").into_response();
        }
        let reply = HeartbeatReply {
            stop: std::mem::take(&mut *stop.lock().unwrap()),
            ..HeartbeatReply::default()
        };
        Json(reply).into_response()
    });
    support::stand_in_rm(secret, heartbeat).await
}

/// One scrape as `name{labels}` → value, after checking every line's shape: comments are
/// HELP or TYPE of a `yard_nodemanager_` family, samples are `name[{labels}] value`.
async fn scrape(nm: &str) -> BTreeMap<String, f64> {
    let reply = reqwest::get(format!("http://{nm}/metrics")).await.unwrap();
    assert_eq!(reply.status(), 200);
    let content_type = reply.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = reply.text().await.unwrap();
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix("# ") {
            let mut words = comment.split(' ');
            assert!(
                matches!(words.next(), Some("HELP" | "TYPE"))
                    && words
                        .next()
                        .is_some_and(|n| n.starts_with("yard_nodemanager_")),
                "{line}"
            );
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        assert!(series.starts_with("yard_nodemanager_"), "{line}");
        let labels = series.split_once('{').map_or("", |(_, l)| l);
        assert!(
            !labels.contains("\"container_") && !labels.contains("\"application_"),
            "an id in a label: {line}"
        );
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "twice: {line}"
        );
    }
    samples
}

/// Scrapes until `f` holds (at most 30 s).
async fn until(
    nm: &str,
    what: &str,
    f: impl Fn(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = scrape(nm).await;
        if f(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {s:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn at(s: &BTreeMap<String, f64>, series: &str) -> f64 {
    *s.get(series)
        .unwrap_or_else(|| panic!("no {series} in {s:#?}"))
}

#[tokio::test]
async fn a_nodemanager_counts_heartbeats_and_containers_and_shows_its_load() {
    let secret = ClusterSecret::new([4; 32]);
    let stop = Arc::new(Mutex::new(Vec::new()));
    let rm = refusing_rm(secret.clone(), stop.clone()).await;
    let work = tempfile::tempdir().unwrap();
    let node = Nm::start(NmOptions {
        heartbeat: Duration::from_millis(30),
        ..support::options(rm, work.path())
    })
    .await;
    let nm = node.addr.to_string();

    // Before anything: every counter at 0, the capacity known.
    let s = scrape(&nm).await;
    assert_eq!(at(&s, "yard_nodemanager_containers_launched_total"), 0.0);
    assert_eq!(
        at(&s, "yard_nodemanager_capacity_memory_bytes"),
        1024.0 * 1048576.0
    );
    assert_eq!(at(&s, "yard_nodemanager_capacity_vcores"), 2.0);
    for end in ["exited", "killed", "lost", "launch_failed", "preempted"] {
        assert!(s.contains_key(&format!(
            "yard_nodemanager_containers_ended_total{{end=\"{end}\"}}"
        )));
    }

    // The rm refuses the first heartbeats: counted as failures, then answered ones count.
    let s = until(&nm, "an answered heartbeat", |s| {
        s.get("yard_nodemanager_heartbeats_total") >= Some(&1.0)
    })
    .await;
    assert_eq!(
        at(&s, "yard_nodemanager_heartbeat_failures_total"),
        REFUSED as f64
    );
    assert!(at(&s, "yard_nodemanager_registrations_total") >= 1.0);
    // The load sampled for that heartbeat.
    assert!(at(&s, "yard_nodemanager_cores") >= 1.0);
    assert!(at(&s, "yard_nodemanager_memory_total_bytes") > 0.0);
    assert!(at(&s, "yard_nodemanager_memory_used_bytes") > 0.0);
    let cpu = at(&s, "yard_nodemanager_cpu_ratio");
    assert!((0.0..=1.0).contains(&cpu), "{cpu}");
    assert!(at(&s, "yard_nodemanager_own_processes") >= 1.0);
    assert!(at(&s, "yard_nodemanager_own_resident_memory_bytes") > 0.0);
    assert_eq!(
        at(&s, "yard_nodemanager_disk_io_rate_bytes_per_second"),
        100e6
    );
    for rate in [
        "disk_read",
        "disk_write",
        "network_receive",
        "network_transmit",
    ] {
        assert!(at(&s, &format!("yard_nodemanager_{rate}_bytes_per_second")) >= 0.0);
    }

    // One container that exits, one the rm stops, one start with a forged token.
    let start = |container: &'static str, command: &'static str, key: &ClusterSecret| {
        let token = mint(&key.container_key(&nm), container, &nm, 64, 1, i64::MAX);
        let nm = nm.clone();
        async move {
            reqwest::Client::new()
                .post(format!("http://{nm}/ws/v1/node/containers"))
                .json(&json!({"token": token, "command": ["/bin/sh", "-c", command]}))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    let quick = "container_e1000_1000_0001_01_000002";
    let slow = "container_e1000_1000_0001_01_000003";
    assert_eq!(start(quick, "exit 0", &secret).await, 201);
    assert_eq!(start(slow, "exec sleep 60", &secret).await, 201);
    let forged = ClusterSecret::new([5; 32]);
    assert_eq!(
        start("container_e1000_1000_0001_01_000004", "true", &forged).await,
        403
    );
    let s = until(&nm, "the quick container's end", |s| {
        s.get("yard_nodemanager_containers_ended_total{end=\"exited\"}") == Some(&1.0)
    })
    .await;
    assert_eq!(at(&s, "yard_nodemanager_containers_launched_total"), 2.0);
    assert_eq!(at(&s, "yard_nodemanager_containers"), 1.0);
    assert_eq!(
        at(
            &s,
            "yard_nodemanager_container_start_refusals_total{reason=\"token\"}"
        ),
        1.0
    );
    stop.lock().unwrap().push(slow.to_owned());
    let s = until(&nm, "the stopped container's end", |s| {
        s.get("yard_nodemanager_containers_ended_total{end=\"killed\"}") == Some(&1.0)
    })
    .await;
    assert_eq!(at(&s, "yard_nodemanager_containers"), 0.0);
    assert_eq!(
        at(
            &s,
            "yard_nodemanager_containers_ended_total{end=\"exited\"}"
        ),
        1.0,
        "an end is counted once, however often it is sent"
    );

    node.stop().await;
}
