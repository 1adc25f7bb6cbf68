//! The rm's `GET /metrics` and `GET /ws/v1/yard/prometheus/targets` over its router: the scrape
//! is valid text format with `yard_rm_<what>_<unit>` names and no application or container id
//! in any label; counters move with heartbeats, allocate calls and reported answers; gauges
//! describe the cluster as it is; Prometheus' `http_sd` targets (the scrape token's) list the
//! running nodemanagers and masters, and finished masters' final figures the rm keeps.

mod support;

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, T0, granted, token};
use yard_cluster::classifier::ClassifierConfig;
use yard_cluster::policy::ClusterPolicy;
use yard_rm::cluster::Settings;
use yard_rm::metrics::{
    FINAL_FIGURES_RETENTION_MS, MAX_FINAL_FIGURES_BYTES, Sample, parse_text, sum_of, value_of,
};
use yard_wire::auth::Principal;

/// `GET /metrics` without a credential, checked: 200, the text format's content type, and
/// text the checker accepts.
async fn scrape(h: &Harness) -> Vec<Sample> {
    let a = h.call_as(None, Method::GET, "/metrics", None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert!(
        a.content_type.starts_with("text/plain; version=0.0.4"),
        "{}",
        a.content_type
    );
    parse_text(&a.text).unwrap_or_else(|e| panic!("{e}\n{}", a.text))
}

fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    value_of(samples, name, labels).unwrap_or_else(|| panic!("no {name}{labels:?}"))
}

fn targets_of(targets: &Value, component: &str) -> BTreeSet<String> {
    targets
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["labels"]["yard_component"] == component)
        .flat_map(|g| g["targets"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

/// A cluster with something in every state: two nodes with load, a running app holding task
/// containers, one waiting, one finished with an answer.
async fn busy(h: &Harness) -> (Vec<String>, Vec<String>) {
    h.node("127.0.0.1:9001", 4).await;
    h.node("127.0.0.1:9002", 4).await;
    h.heartbeat("127.0.0.1:9001", 50.0, &[]).await;
    h.heartbeat("127.0.0.1:9002", 25.0, &[]).await;
    let running = h
        .running(
            json!({}),
            json!({"trackingUrl": "http://127.0.0.1:7001/status"}),
        )
        .await;
    let reply = h.allocate(&running, 2, 0.1).await;
    let containers: Vec<String> = granted(&reply);
    assert_eq!(containers.len(), 2, "{reply}");
    let waiting = h.submitted(json!({})).await;
    let done = h.running(json!({}), json!({})).await;
    let (status, _) = h
        .put(
            &format!("/ws/v1/yard/apps/{done}/result"),
            json!({"processedFraction": 0.5, "answer": {"job": {"policy": "dart", "outcome": "met"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    h.unregister(&done).await;
    (vec![running, waiting, done], containers)
}

#[tokio::test]
async fn the_scrape_is_valid_text_named_yard_rm_what_unit_with_no_app_or_container_ids() {
    let h = Harness::new(Settings {
        scheduler: ClusterPolicy::MinEdf,
        overload: Some(ClassifierConfig::default()),
        ..Settings::default()
    });
    let (apps, containers) = busy(&h).await;
    let samples = scrape(&h).await;
    assert!(!samples.is_empty());
    // Every family: yard_rm_<what>_<unit>. Counters count (`_total`); histograms measure
    // seconds or fractions; a gauge has a base unit, is an `_info`, or counts the things its
    // name says (apps, nodes, containers, vcores) or is a load average.
    let text = h.call_as(None, Method::GET, "/metrics", None).await.text;
    let mut families = 0;
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let mut words = line["# TYPE ".len()..].split(' ');
        let (name, kind) = (words.next().unwrap(), words.next().unwrap());
        families += 1;
        let what = name
            .strip_prefix("yard_rm_")
            .unwrap_or_else(|| panic!("{name} is not yard_rm_*"));
        assert!(
            !what.is_empty()
                && what
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{name}"
        );
        let ok = match kind {
            "counter" => name.ends_with("_total"),
            "histogram" => name.ends_with("_seconds") || name.ends_with("_ratio"),
            "gauge" => {
                ["_bytes", "_seconds", "_ratio", "_info", "_load1"]
                    .iter()
                    .any(|unit| name.ends_with(unit))
                    || ["apps", "nodes", "containers", "vcores"]
                        .iter()
                        .any(|n| name.ends_with(&format!("_{n}")))
            }
            _ => false,
        };
        assert!(ok, "{name} ({kind}) does not end in its unit");
        // No non-base unit sneaks in.
        for bad in ["_ms", "_mb", "_percent", "_millis", "_kb"] {
            assert!(
                !name.contains(&format!("{bad}_")) && !name.ends_with(bad),
                "{name}"
            );
        }
    }
    assert!(families >= 20, "only {families} families");
    // Labels are bounded: their names are a fixed few (a queue's: the rm's queue file's), and
    // no value is an id.
    let allowed: BTreeSet<&str> = [
        "state", "kind", "node", "verdict", "label", "stage", "end", "policy", "outcome", "le",
        "queue",
    ]
    .into();
    for s in &samples {
        for (k, v) in &s.labels {
            assert!(allowed.contains(k.as_str()), "label {k} on {}", s.name);
            assert!(
                !v.starts_with("application_") && !v.starts_with("container_"),
                "{}{{{k}={v}}}",
                s.name
            );
            assert!(!apps.contains(v) && !containers.contains(v), "{v}");
        }
    }
}

#[tokio::test]
async fn counters_move_with_heartbeats_allocates_and_answers() {
    let h = Harness::new(Settings::default());
    h.node("127.0.0.1:9001", 8).await;
    let before = scrape(&h).await;
    assert_eq!(value(&before, "yard_rm_node_heartbeats_total", &[]), 0.0);
    assert_eq!(
        value(&before, "yard_rm_allocate_duration_seconds_count", &[]),
        0.0
    );
    for end in yard_wire::protocol::ContainerEnd::ALL.map(|e| e.label()) {
        assert_eq!(
            value(
                &before,
                "yard_rm_containers_completed_total",
                &[("end", end)]
            ),
            0.0,
            "every end is there from the start"
        );
    }

    let id = h.running(json!({}), json!({})).await;
    let granted = h.allocate(&id, 2, 0.1).await;
    h.allocate(&id, 0, 0.2).await;
    let c0 = granted["allocated"][0]["containerId"]
        .as_str()
        .unwrap()
        .to_owned();
    h.heartbeat("127.0.0.1:9001", 10.0, &[]).await;
    h.heartbeat("127.0.0.1:9001", 10.0, &[&c0]).await;
    // A node repeats an end it is not sure the rm heard: it is counted once.
    h.heartbeat("127.0.0.1:9001", 10.0, &[&c0]).await;
    // A node the rm does not know is told to register; its heartbeat is not counted.
    let hb = json!({"nodeId": "127.0.0.1:9999", "running": [], "completed": [],
        "telemetry": {"cpuPercent": 1.0, "load1m": 0.0, "load5m": 0.0, "load15m": 0.0,
            "memoryTotalBytes": 1, "memoryUsedBytes": 1, "diskReadBytesPerS": 0.0,
            "diskWriteBytesPerS": 0.0, "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0,
            "containers": []}});
    let (_, reply) = h.post("/ws/v1/yard/nodes/heartbeat", hb).await;
    assert_eq!(reply["reregister"], true);

    let after = scrape(&h).await;
    assert_eq!(value(&after, "yard_rm_node_heartbeats_total", &[]), 3.0);
    assert_eq!(
        value(&after, "yard_rm_allocate_duration_seconds_count", &[]),
        2.0
    );
    // The two calls' time (wall-clock, so not a fixed figure): some time, all of it within
    // the histogram's last bucket, which holds both calls.
    assert!(value(&after, "yard_rm_allocate_duration_seconds_sum", &[]) > 0.0);
    assert_eq!(
        value(
            &after,
            "yard_rm_allocate_duration_seconds_bucket",
            &[("le", "+Inf")]
        ),
        2.0
    );
    assert_eq!(
        value(
            &after,
            "yard_rm_containers_completed_total",
            &[("end", "exited")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &after,
            "yard_rm_containers_completed_total",
            &[("end", "killed")]
        ),
        0.0
    );

    // Answers: one per outcome and policy; a master reporting again as its answer improves
    // is counted once.
    let answer = |policy: &str, outcome: &str, estimate: f64, seconds: f64| {
        json!({"job": {"policy": policy, "outcome": outcome,
                       "estimateAtClose": estimate, "jobSeconds": seconds}})
    };
    let reports = [
        ("dart", "met", 0.6, 9.0, 10.0),
        ("dart", "missed", 1.0, 12.0, 10.0),
        ("full", "empty", 0.0, 5.0, 10.0),
    ];
    for (policy, outcome, fraction, estimate, seconds) in reports {
        let app = h.running(json!({}), json!({})).await;
        for _ in 0..2 {
            let (status, reply) = h
                .put(
                    &format!("/ws/v1/yard/apps/{app}/result"),
                    json!({"processedFraction": fraction,
                           "answer": answer(policy, outcome, estimate, seconds)}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{reply}");
        }
    }
    // An answer with no job metadata (a non-MapReduce app) counts nothing.
    let plain = h.running(json!({}), json!({})).await;
    h.put(
        &format!("/ws/v1/yard/apps/{plain}/result"),
        json!({"processedFraction": 1.0, "answer": {"words": 3}}),
    )
    .await;
    let s = scrape(&h).await;
    let outcome = |policy: &str, outcome: &str| {
        value(
            &s,
            "yard_rm_deadline_outcomes_total",
            &[("policy", policy), ("outcome", outcome)],
        )
    };
    assert_eq!(
        (
            outcome("dart", "met"),
            outcome("dart", "missed"),
            outcome("dart", "empty")
        ),
        (1.0, 1.0, 0.0)
    );
    assert_eq!(
        (outcome("full", "empty"), outcome("late", "met")),
        (1.0, 0.0)
    );
    let fraction = |policy: &str, what: &str| {
        value(
            &s,
            &format!("yard_rm_processed_fraction_ratio_{what}"),
            &[("policy", policy)],
        )
    };
    assert_eq!(
        (fraction("dart", "count"), fraction("dart", "sum")),
        (2.0, 1.6)
    );
    assert_eq!(
        (fraction("full", "count"), fraction("full", "sum")),
        (1.0, 0.0)
    );
    assert_eq!(
        value(
            &s,
            "yard_rm_processed_fraction_ratio_bucket",
            &[("policy", "dart"), ("le", "0.6")]
        ),
        1.0
    );
    // |9 − 10| / 10 and |12 − 10| / 10.
    let error_sum = value(
        &s,
        "yard_rm_estimation_error_ratio_sum",
        &[("policy", "dart")],
    );
    assert!((error_sum - 0.3).abs() < 1e-9, "{error_sum}");
    assert_eq!(
        value(
            &s,
            "yard_rm_estimation_error_ratio_count",
            &[("policy", "full")]
        ),
        1.0
    );
}

#[tokio::test]
async fn gauges_describe_apps_nodes_containers_and_load_by_state() {
    let h = Harness::new(Settings::default());
    let (apps, _) = busy(&h).await;
    let killed = h.submitted(json!({})).await;
    let (status, _) = h
        .put(
            &format!("/ws/v1/cluster/apps/{killed}/state"),
            json!({"state": "KILLED"}),
        )
        .await;
    assert!(status.is_success(), "{status}");
    let s = scrape(&h).await;
    let apps_in = |state: &str| value(&s, "yard_rm_apps", &[("state", state)]);
    assert_eq!(
        (
            apps_in("running"),
            apps_in("accepted"),
            apps_in("finished"),
            apps_in("killed"),
            apps_in("failed")
        ),
        (1.0, 1.0, 1.0, 1.0, 0.0),
        "{apps:?}"
    );
    assert_eq!(sum_of(&s, "yard_rm_apps"), 4.0);
    assert_eq!(value(&s, "yard_rm_nodes", &[("state", "running")]), 2.0);
    assert_eq!(value(&s, "yard_rm_nodes", &[("state", "lost")]), 0.0);
    // The running app's master (the finished one's ended with it) and its two tasks; the
    // waiting app's master is granted too.
    assert_eq!(value(&s, "yard_rm_containers", &[("kind", "task")]), 2.0);
    assert!(value(&s, "yard_rm_containers", &[("kind", "master")]) >= 1.0);
    assert_eq!(
        value(&s, "yard_rm_memory_bytes", &[("kind", "total")]),
        8.0 * 1024.0 * 1024.0 * 1024.0
    );
    assert!(value(&s, "yard_rm_memory_bytes", &[("kind", "allocated")]) >= 2048.0 * 1048576.0);
    assert_eq!(value(&s, "yard_rm_vcores", &[("kind", "total")]), 8.0);
    assert_eq!(
        value(&s, "yard_rm_node_cpu_ratio", &[("node", "127.0.0.1:9001")]),
        0.5
    );
    assert_eq!(
        value(&s, "yard_rm_node_load1", &[("node", "127.0.0.1:9002")]),
        0.5
    );
    assert_eq!(
        value(
            &s,
            "yard_rm_node_memory_used_bytes",
            &[("node", "127.0.0.1:9002")]
        ),
        1073741824.0
    );
    assert_eq!(
        sum_of(&s, "yard_rm_node_containers"),
        value(&s, "yard_rm_containers", &[("kind", "task")])
            + value(&s, "yard_rm_containers", &[("kind", "master")])
    );
    assert_eq!(
        value(&s, "yard_rm_cluster_policy_info", &[("policy", "fifo")]),
        1.0
    );
    assert_eq!(
        value(&s, "yard_rm_start_time_seconds", &[]),
        T0 as f64 / 1000.0
    );
    // A silent node is lost: it leaves the per-node series, and its containers end.
    h.set_now(T0 + 60_000);
    h.heartbeat("127.0.0.1:9001", 75.0, &[]).await;
    let lost = h.rm.cluster.lock().unwrap().expire(T0 + 60_000);
    assert_eq!(lost, vec!["127.0.0.1:9002".to_owned()]);
    let s = scrape(&h).await;
    assert_eq!(value(&s, "yard_rm_nodes", &[("state", "running")]), 1.0);
    assert_eq!(value(&s, "yard_rm_nodes", &[("state", "lost")]), 1.0);
    assert_eq!(
        value_of(&s, "yard_rm_node_cpu_ratio", &[("node", "127.0.0.1:9002")]),
        None
    );
    assert_eq!(
        value(&s, "yard_rm_node_cpu_ratio", &[("node", "127.0.0.1:9001")]),
        0.75
    );
    assert_eq!(value(&s, "yard_rm_vcores", &[("kind", "total")]), 4.0);
}

#[tokio::test]
async fn classifier_verdicts_and_quotas_are_read_from_the_cluster_policy() {
    // Off: every verdict is 0.
    let h = Harness::new(Settings::default());
    h.node("127.0.0.1:9001", 4).await;
    let s = scrape(&h).await;
    assert_eq!(sum_of(&s, "yard_rm_classifier_nodes"), 0.0);
    assert_eq!(sum_of(&s, "yard_rm_quota_containers"), 0.0);

    let h = Harness::new(Settings {
        scheduler: ClusterPolicy::MinEdf,
        master_share: 0.5,
        overload: Some(ClassifierConfig::default()),
        ..Settings::default()
    });
    h.node("127.0.0.1:9001", 20).await;
    h.node("127.0.0.1:9002", 4).await;
    h.heartbeat("127.0.0.1:9001", 10.0, &[]).await;
    // 100 maps of 10 s due in 100 s: ARIA's T^avg needs ⌈995 / 92.5⌉ = 11 containers (as in
    // deadlines.rs).
    let model = json!({"maps": 100, "reduces": 0,
                       "profile": {"map": {"avg": 10.0, "max": 15.0}}});
    let id = h.running(json!({"deadline-ms": T0 + 100_000}), model).await;
    let (_, app) = h.get(&format!("/ws/v1/yard/apps/{id}")).await;
    h.allocate(&id, 4, 0.0).await;
    let s = scrape(&h).await;
    // Both running nodes have a verdict; with no labelled placement yet it is not "bad".
    assert_eq!(sum_of(&s, "yard_rm_classifier_nodes"), 2.0);
    assert_eq!(
        value(&s, "yard_rm_classifier_nodes", &[("verdict", "bad")]),
        0.0
    );
    assert_eq!(
        value(&s, "yard_rm_quota_containers", &[("stage", "map")]),
        11.0,
        "{app}"
    );
    assert_eq!(
        value(&s, "yard_rm_quota_containers", &[("stage", "reduce")]),
        0.0
    );
    assert_eq!(value(&s, "yard_rm_quota_apps", &[]), 1.0);
    assert_eq!(
        value(&s, "yard_rm_cluster_policy_info", &[("policy", "minedf")]),
        1.0
    );
    assert_eq!(sum_of(&s, "yard_rm_cluster_policy_info"), 1.0);
    for stage in ["map", "reduce"] {
        assert!(value_of(&s, "yard_rm_spare_allocations_total", &[("stage", stage)]).is_some());
        assert!(value_of(&s, "yard_rm_spare_kills_total", &[("stage", stage)]).is_some());
    }
    for label in ["good", "bad"] {
        assert!(value_of(&s, "yard_rm_classifier_labels_total", &[("label", label)]).is_some());
    }
}

/// `GET /ws/v1/yard/prometheus/targets` with the scrape token: 200 and JSON.
async fn targets(h: &Harness) -> Value {
    let scraper = token(Principal::Scraper);
    let a = h.call_as(Some(&scraper), Method::GET, TARGETS, None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert!(
        a.content_type.starts_with("application/json"),
        "{}",
        a.content_type
    );
    a.json()
}

const TARGETS: &str = "/ws/v1/yard/prometheus/targets";

/// A master's final exposition, as `yard mr-master` leaves it.
const FINAL: &str = "# HELP yard_mr_master_maps Maps by state\n# TYPE yard_mr_master_maps gauge\nyard_mr_master_maps{state=\"done\"} 16\n";

/// The master of `id` leaves `text` as its final figures.
async fn leave_final(h: &Harness, id: &str, text: &str) -> (StatusCode, Value) {
    h.send(
        Some(&h.rightful(&format!("/ws/v1/yard/apps/{id}/result"))),
        Method::PUT,
        &format!("/ws/v1/yard/apps/{id}/metrics"),
        Some(text.to_owned()),
    )
    .await
    .pair()
}

#[tokio::test]
async fn the_targets_are_running_nodemanagers_and_masters_and_need_the_scrape_token() {
    let h = Harness::new(Settings::default());
    let none = h.call_as(None, Method::GET, TARGETS, None).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED, "{}", none.text);
    assert_eq!(targets(&h).await, json!([]));
    // An admin may read them too.
    let (status, _) = h.get(TARGETS).await;
    assert_eq!(status, StatusCode::OK);

    busy(&h).await;
    let targets = targets(&h).await;
    // Labels name the component, nothing else.
    for group in targets.as_array().unwrap() {
        let labels = group["labels"].as_object().unwrap();
        assert_eq!(
            labels.keys().collect::<Vec<_>>(),
            ["yard_component"],
            "{group}"
        );
    }
    assert_eq!(
        targets_of(&targets, "nodemanager"),
        ["127.0.0.1:9001", "127.0.0.1:9002"]
            .map(String::from)
            .into()
    );
    assert_eq!(
        targets_of(&targets, "mr_master"),
        ["127.0.0.1:7001"].map(String::from).into()
    );
}

/// A short job's master has exited before Prometheus looks: the rm keeps its final figures
/// for the retention period, serves them to the scrape token, lists them as a target at the
/// rm under the instance the master had, and forgets them after.
#[tokio::test]
async fn the_rm_keeps_serves_and_expires_a_finished_masters_final_figures() {
    let h = Harness::new(Settings::default());
    h.rm.cluster
        .lock()
        .unwrap()
        .set_url("http://127.0.0.1:8088".into());
    h.node("127.0.0.1:9001", 4).await;
    let short = h
        .running(
            json!({}),
            json!({"trackingUrl": "http://127.0.0.1:7002/status"}),
        )
        .await;
    // A master that leaves nothing is not listed once it ends (its process is gone).
    let silent = h
        .running(
            json!({}),
            json!({"trackingUrl": "http://127.0.0.1:7003/status"}),
        )
        .await;
    let path = format!("/ws/v1/yard/apps/{short}/metrics");
    let scraper = token(Principal::Scraper);
    // Nothing kept yet.
    let a = h.call_as(Some(&scraper), Method::GET, &path, None).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.text);

    // What is not the text format, or is too big, is refused and not kept.
    let (status, reply) = leave_final(&h, &short, "not { metrics").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    let big = format!("{FINAL}# {}\n", "x".repeat(MAX_FINAL_FIGURES_BYTES));
    let (status, reply) = leave_final(&h, &short, &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{reply}");

    h.set_now(T0 + 1_000);
    let (status, reply) = leave_final(&h, &short, FINAL).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    h.unregister(&short).await;
    h.unregister(&silent).await;

    let listed = targets(&h).await;
    let masters: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["labels"]["yard_component"] == "mr_master")
        .collect();
    assert_eq!(
        masters,
        [&json!({
            "targets": ["127.0.0.1:8088"],
            "labels": {
                "yard_component": "mr_master",
                "instance": "127.0.0.1:7002",
                "__metrics_path__": path,
            },
        })],
        "{listed}"
    );
    // Served as text to the scrape token (or an admin), to nobody else.
    let a = h.call_as(Some(&scraper), Method::GET, &path, None).await;
    assert_eq!((a.status, a.text.as_str()), (StatusCode::OK, FINAL));
    assert!(a.content_type.starts_with("text/plain; version=0.0.4"));
    let a = h.call_as(None, Method::GET, &path, None).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);

    // A retention period later they are gone, from the targets too.
    h.set_now(T0 + 1_000 + FINAL_FIGURES_RETENTION_MS - 1);
    let a = h.call_as(Some(&scraper), Method::GET, &path, None).await;
    assert_eq!(a.status, StatusCode::OK);
    h.set_now(T0 + 1_000 + FINAL_FIGURES_RETENTION_MS);
    let a = h.call_as(Some(&scraper), Method::GET, &path, None).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.text);
    assert!(targets_of(&targets(&h).await, "mr_master").is_empty());
    // An ended master may leave nothing more.
    let (status, _) = leave_final(&h, &short, FINAL).await;
    assert!(status.is_client_error(), "{status}");
}

#[tokio::test]
async fn metrics_ignore_what_a_scraper_accepts_and_the_targets_refuse_other_methods() {
    let h = Harness::new(Settings::default());
    // Prometheus sends an Accept of its own; the text format is the only answer.
    let request = axum::http::Request::builder()
        .uri("/metrics")
        .header(
            "accept",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        )
        .body(axum::body::Body::empty())
        .unwrap();
    use tower::ServiceExt;
    let response = yard_rm::rest::router(h.rm.clone())
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    for method in [Method::POST, Method::PUT, Method::DELETE] {
        for uri in ["/metrics", "/ws/v1/yard/prometheus/targets"] {
            let a = h.call_as(None, method.clone(), uri, Some(json!({}))).await;
            assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        }
    }
}
