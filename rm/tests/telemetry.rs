//! Node telemetry at the rm: heartbeats' load samples are range-checked (a 4xx naming the
//! field, nothing kept), shown in the nodes routes as YARN's `resourceUtilization` and yard's
//! `yardLoad` (with the recent history on a single node), and the last sample survives an rm
//! restart through the store.

mod support;

use std::sync::atomic::Ordering;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, SECRET, token};
use yard_rm::cluster::{Cluster, NodeState, Settings, TELEMETRY_HISTORY};
use yard_rm::store::Store;
use yard_wire::auth::{ClusterSecret, Principal};
use yard_wire::protocol::NodeHeartbeat;
use yard_wire::telemetry::{ContainerUsage, NodeTelemetry, ProcessTreeUsage};

/// An rm of the default settings started at 1 s.
fn harness() -> Harness {
    Harness::at(Settings::default(), 1_000)
}

/// A busy node: 4 cores at 50 %, 6 of 8 GiB used, 1 GiB swapped, two containers.
fn sample() -> NodeTelemetry {
    NodeTelemetry {
        cpu_percent: 50.0,
        load_1m: 6.0,
        load_5m: 4.0,
        load_15m: 2.0,
        memory_total_bytes: 8 << 30,
        memory_used_bytes: 6 << 30,
        disk_read_bytes_per_s: 12e6,
        disk_write_bytes_per_s: 3e6,
        net_rx_bytes_per_s: 1e3,
        net_tx_bytes_per_s: 2e3,
        containers: vec![
            ContainerUsage {
                container_id: "container_e1_1_0001_01_000002".into(),
                cpu_percent: 150.0,
                rss_bytes: 512 << 20,
                read_bytes_per_s: 10e6,
                write_bytes_per_s: 1e6,
                virtual_bytes: 2 << 30,
            },
            ContainerUsage {
                container_id: "container_e1_1_0001_01_000003".into(),
                cpu_percent: 25.0,
                rss_bytes: 256 << 20,
                read_bytes_per_s: 0.0,
                write_bytes_per_s: 2e6,
                virtual_bytes: 1 << 30,
            },
        ],
        cores: 4,
        swap_used_bytes: 1 << 30,
        disk_io_rate_bytes_per_s: 150e6,
        own: ProcessTreeUsage {
            cpu_percent: 180.0,
            rss_bytes: 800 << 20,
            read_bytes_per_s: 10e6,
            write_bytes_per_s: 3e6,
            processes: 5,
        },
    }
}

#[tokio::test]
async fn the_nodes_routes_show_yarns_resource_utilization_and_yards_load() {
    let h = harness();
    h.node("n1:8042", 4).await;
    // Before any sample: YARN's zeros, and no yard load.
    let nodes = h.get_ok("/ws/v1/cluster/nodes").await;
    let n = &nodes["nodes"]["node"][0];
    assert_eq!(n["resourceUtilization"]["nodeCPUUsage"], 0.0);
    assert_eq!(n["resourceUtilization"]["nodePhysicalMemoryMB"], 0);
    assert_eq!(n["yardLoad"], Value::Null);
    assert_eq!(
        h.get_ok("/ws/v1/cluster/nodes/n1:8042").await["node"]["yardLoadHistory"],
        json!([])
    );

    h.set_now(2_000);
    let (status, reply) = h.telemetry("n1:8042", json!(sample())).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let nodes = h.get_ok("/ws/v1/cluster/nodes").await;
    let n = &nodes["nodes"]["node"][0];
    // Hadoop's ResourceUtilizationInfo, field for field: MB, and CPU in cores kept busy.
    assert_eq!(
        n["resourceUtilization"],
        json!({
            "nodePhysicalMemoryMB": 6 * 1024,
            "nodeVirtualMemoryMB": 7 * 1024,
            "nodeCPUUsage": 2.0,
            "aggregatedContainersPhysicalMemoryMB": 768,
            "aggregatedContainersVirtualMemoryMB": 3 * 1024,
            "containersCPUUsage": 1.75,
        })
    );
    let load = &n["yardLoad"];
    assert_eq!(load["sampledAt"], 2_000);
    assert_eq!(
        (
            load["load1m"].as_f64(),
            load["load5m"].as_f64(),
            load["load15m"].as_f64()
        ),
        (Some(6.0), Some(4.0), Some(2.0))
    );
    assert_eq!(
        (load["cores"].as_u64(), load["loadPerCore"].as_f64()),
        (Some(4), Some(1.5))
    );
    assert_eq!(load["memoryUsedFraction"], 0.75);
    assert_eq!(load["cpuPercent"], 50.0);
    assert_eq!(
        (
            load["memoryTotalBytes"].as_u64(),
            load["memoryUsedBytes"].as_u64()
        ),
        (Some(8 << 30), Some(6 << 30))
    );
    assert_eq!(load["diskReadBytesPerS"], 12e6);
    assert_eq!(load["diskWriteBytesPerS"], 3e6);
    assert_eq!(load["diskIoRateBytesPerS"], 150e6);
    assert_eq!(
        (
            load["netRxBytesPerS"].as_f64(),
            load["netTxBytesPerS"].as_f64()
        ),
        (Some(1e3), Some(2e3))
    );
    assert_eq!(
        load["own"],
        json!({"cpuPercent": 180.0, "rssBytes": 800u64 << 20, "readBytesPerS": 10e6,
               "writeBytesPerS": 3e6, "processes": 5})
    );
    assert_eq!(
        load["containers"][0],
        json!({"containerId": "container_e1_1_0001_01_000002", "cpuPercent": 150.0,
               "rssBytes": 512u64 << 20, "readBytesPerS": 10e6, "writeBytesPerS": 1e6,
               "virtualBytes": 2u64 << 30})
    );
    // The list route has no history; the node's own route has it, oldest first.
    assert!(n.get("yardLoadHistory").is_none());
    for i in 1..=(TELEMETRY_HISTORY as i64 + 5) {
        h.set_now(2_000 + i * 1_000);
        let mut t = sample();
        t.load_1m = i as f64;
        assert_eq!(h.telemetry("n1:8042", json!(t)).await.0, StatusCode::OK);
    }
    let one = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    let history = one["node"]["yardLoadHistory"].as_array().unwrap();
    assert_eq!(history.len(), TELEMETRY_HISTORY);
    assert_eq!(
        history[0],
        json!({"time": 2_000 + 6 * 1_000, "load1m": 6.0, "cpuPercent": 50.0,
               "memoryUsedFraction": 0.75, "diskReadBytesPerS": 12e6,
               "diskWriteBytesPerS": 3e6, "ownCpuPercent": 180.0})
    );
    let last = history.last().unwrap();
    assert_eq!(
        (last["time"].as_i64(), last["load1m"].as_f64()),
        (
            Some(2_000 + (TELEMETRY_HISTORY as i64 + 5) * 1_000),
            Some(TELEMETRY_HISTORY as f64 + 5.0)
        )
    );
    assert_eq!(one["node"]["yardLoad"], {
        let list = h.get_ok("/ws/v1/cluster/nodes").await;
        list["nodes"]["node"][0]["yardLoad"].clone()
    });

    // An older nodemanager's sample (none of the newer fields) is taken: unknown cores and
    // disk rate are 0, and the load per core is unknown.
    let old = json!({"cpuPercent": 5.0, "load1m": 0.5, "load5m": 0.1, "load15m": 0.1,
        "memoryTotalBytes": 1024, "memoryUsedBytes": 512, "diskReadBytesPerS": 0.0,
        "diskWriteBytesPerS": 0.0, "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0,
        "containers": [{"containerId": "c1", "cpuPercent": 3.0, "rssBytes": 7}]});
    let (status, reply) = h.telemetry("n1:8042", old).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let n = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    assert_eq!(n["node"]["yardLoad"]["loadPerCore"], Value::Null);
    assert_eq!(n["node"]["yardLoad"]["diskIoRateBytesPerS"], 0.0);
    assert_eq!(n["node"]["resourceUtilization"]["nodeCPUUsage"], 0.0);
}

/// A negative, non-finite or absurd number in a heartbeat's sample is refused with a 4xx that
/// names the field; the node keeps its last good sample and nothing else of the heartbeat
/// happens.
/// A node's own route lists the containers placed on it, oldest first, each with its
/// application and YARN's container report; the list route and other nodes show none.
#[tokio::test]
async fn a_nodes_own_route_lists_its_containers_with_their_applications() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let one = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    assert_eq!(one["node"]["yardContainers"], json!([]), "{one}");
    let id = h.running(json!({}), json!({})).await;
    h.set_now(5_000);
    let granted = support::granted(&h.allocate(&id, 2, 0.1).await);
    assert_eq!(granted.len(), 2);
    let one = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    let listed = one["node"]["yardContainers"].as_array().unwrap();
    // The master's container, then the two granted.
    assert_eq!(listed.len(), 3, "{one}");
    assert!(
        listed.iter().all(|c| c["applicationId"] == id.as_str()),
        "{one}"
    );
    let ids: Vec<&str> = listed
        .iter()
        .map(|c| c["containerId"].as_str().unwrap())
        .collect();
    for g in &granted {
        assert!(ids.contains(&g.as_str()), "{g} in {ids:?}");
    }
    assert!(
        !granted.contains(&ids[0].to_owned()),
        "the master's first: {ids:?}"
    );
    let c = &listed[1];
    assert_eq!(
        (c["allocatedMB"].as_u64(), c["allocatedVCores"].as_u64()),
        (Some(1024), Some(1))
    );
    assert_eq!(c["nodeId"], "n1:8042");
    assert_eq!(c["startedTime"], 5_000);
    assert_eq!(one["node"]["numContainers"], 3);
    let list = h.get_ok("/ws/v1/cluster/nodes").await;
    assert!(
        list["nodes"]["node"][0].get("yardContainers").is_none(),
        "{list}"
    );
}

#[tokio::test]
async fn bad_numbers_in_a_heartbeat_are_refused_naming_the_field() {
    let h = harness();
    h.node("n1:8042", 4).await;
    assert_eq!(
        h.telemetry("n1:8042", json!(sample())).await.0,
        StatusCode::OK
    );
    let spoiled = |path: &[&str], value: Value| {
        let mut t = json!(sample());
        let mut at = &mut t;
        for (i, key) in path.iter().enumerate() {
            if i + 1 == path.len() {
                at[*key] = value.clone();
            } else if let Ok(index) = key.parse::<usize>() {
                at = &mut at[index];
            } else {
                at = &mut at[*key];
            }
        }
        t
    };
    // Out of range: 400 with the field.
    for (path, value, field) in [
        (&["cpuPercent"][..], json!(-1.0), "telemetry.cpuPercent"),
        (&["cpuPercent"][..], json!(100.5), "telemetry.cpuPercent"),
        (&["load1m"][..], json!(-0.1), "telemetry.load1m"),
        (&["load5m"][..], json!(1e300), "telemetry.load5m"),
        (
            &["memoryUsedBytes"][..],
            json!(9u64 << 30),
            "telemetry.memoryUsedBytes",
        ),
        (
            &["memoryTotalBytes"][..],
            json!(u64::MAX),
            "telemetry.memoryTotalBytes",
        ),
        (
            &["diskReadBytesPerS"][..],
            json!(-5.0),
            "telemetry.diskReadBytesPerS",
        ),
        (
            &["diskIoRateBytesPerS"][..],
            json!(-1.0),
            "telemetry.diskIoRateBytesPerS",
        ),
        (
            &["netTxBytesPerS"][..],
            json!(1e13),
            "telemetry.netTxBytesPerS",
        ),
        (&["cores"][..], json!(1u64 << 20), "telemetry.cores"),
        (
            &["own", "cpuPercent"][..],
            json!(-50.0),
            "telemetry.own.cpuPercent",
        ),
        (
            &["own", "processes"][..],
            json!(u32::MAX),
            "telemetry.own.processes",
        ),
        (
            &["own", "writeBytesPerS"][..],
            json!(-1.0),
            "telemetry.own.writeBytesPerS",
        ),
        (
            &["containers", "1", "readBytesPerS"][..],
            json!(-3.0),
            "telemetry.containers[1].readBytesPerS",
        ),
        (
            &["containers", "0", "cpuPercent"][..],
            json!(1e9),
            "telemetry.containers[0].cpuPercent",
        ),
        (
            &["containers", "0", "containerId"][..],
            json!("no spaces please"),
            "telemetry.containers[0].containerId",
        ),
    ] {
        h.now.fetch_add(1, Ordering::SeqCst);
        let (status, reply) = h.telemetry("n1:8042", spoiled(path, value)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}: {reply}");
        assert_eq!(reply["detail"]["field"], field, "{reply}");
        assert!(reply["error"].as_str().unwrap().contains(field), "{reply}");
    }
    // Not a number JSON can carry, or the wrong sign for a count: the body is refused as
    // axum refuses any body of the wrong shape (400 syntax, 422 shape), naming the field.
    for (body, status, field) in [
        (
            spoiled(&["memoryTotalBytes"], json!(-1)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "telemetry.memoryTotalBytes",
        ),
        (
            spoiled(&["own", "rssBytes"], json!(-1)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "telemetry.own.rssBytes",
        ),
        (
            spoiled(&["cores"], json!("four")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "telemetry.cores",
        ),
    ] {
        let (got, reply) = h.telemetry("n1:8042", body).await;
        assert_eq!(got, status, "{reply}");
        assert!(reply["detail"].as_str().unwrap().contains(field), "{reply}");
    }
    for text in ["NaN", "Infinity", "1e400", "-1e400"] {
        let raw = json!(sample())
            .to_string()
            .replace("\"cpuPercent\":50.0", &format!("\"cpuPercent\":{text}"));
        assert!(raw.contains(text));
        let bearer = token(Principal::Node { node: None });
        let body = format!(
            "{{\"nodeId\":\"n1:8042\",\"running\":[],\"completed\":[],\"telemetry\":{raw}}}"
        );
        let response = h
            .send(
                Some(&bearer),
                Method::POST,
                "/ws/v1/yard/nodes/heartbeat",
                Some(body),
            )
            .await;
        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{text}");
    }
    // Nothing of the refused heartbeats was kept.
    let n = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    assert_eq!(n["node"]["yardLoad"]["sampledAt"], 1_000);
    assert_eq!(n["node"]["yardLoad"]["cpuPercent"], 50.0);
    assert_eq!(n["node"]["yardLoadHistory"].as_array().unwrap().len(), 1);
    assert_eq!(n["node"]["lastHealthUpdate"], 1_000);
}

#[tokio::test]
async fn the_last_sample_survives_an_rm_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let store = Store::open(&path).await.unwrap();
    let mut before = Cluster::new(Settings::default(), ClusterSecret::new(SECRET), 1_000);
    before.register_node(1_000, support::registration("n1:8042"));
    before.register_node(1_000, support::registration("n2:8042")); // never sends a sample
    let beat = |at: i64, t: NodeTelemetry| {
        (
            at,
            NodeHeartbeat {
                node_id: "n1:8042".into(),
                running: vec![],
                completed: vec![],
                telemetry: t,
            },
        )
    };
    let mut older = sample();
    older.load_1m = 1.0;
    for (at, hb) in [beat(2_000, older), beat(3_000, sample())] {
        before.heartbeat(at, hb);
    }
    store.save_changes(&before.take_changes()).await.unwrap();
    drop(store);

    // A new rm on the same file: the last sample is back, with when it came.
    let store = Store::open(&path).await.unwrap();
    let (apps, nodes) = store.load().await.unwrap();
    let mut after = Cluster::new(Settings::default(), ClusterSecret::new(SECRET), 9_000);
    after.restore(apps, nodes);
    let n1 = after.node("n1:8042").unwrap();
    assert_eq!(n1.state, NodeState::Lost, "until it registers again");
    assert_eq!((n1.telemetry_ms, &n1.telemetry), (Some(3_000), &sample()));
    let history: Vec<(i64, NodeTelemetry)> = after
        .telemetry_history("n1:8042")
        .map(|(at, t)| (at, t.clone()))
        .collect();
    assert_eq!(history, [(3_000, sample())], "the ring starts from it");
    let n2 = after.node("n2:8042").unwrap();
    assert_eq!(
        (n2.telemetry_ms, &n2.telemetry),
        (None, &NodeTelemetry::default())
    );
    assert_eq!(after.telemetry_history("n2:8042").count(), 0);
    // The API shows the last known load; the node registering again keeps it until its next
    // heartbeat.
    after.register_node(9_500, support::registration("n1:8042"));
    let h = Harness::over(after, 1_000);
    let n = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await;
    assert_eq!(n["node"]["state"], "RUNNING");
    assert_eq!(n["node"]["yardLoad"]["sampledAt"], 3_000);
    assert_eq!(n["node"]["resourceUtilization"]["nodeCPUUsage"], 2.0);
    assert_eq!(
        h.get_ok("/ws/v1/cluster/nodes/n2:8042").await["node"]["yardLoad"],
        Value::Null
    );
    drop(h);
    drop(store);

    // A stored sample this version cannot read (another version's) is dropped; the rm starts.
    {
        let pool = sqlx::sqlite::SqlitePool::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("UPDATE nodes SET telemetry_json = '{\"cpuPercent\": \"busy\"}'")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    let store = Store::open(&path).await.unwrap();
    let (_, nodes) = store.load().await.unwrap();
    let n1 = nodes.iter().find(|n| n.node_id == "n1:8042").unwrap();
    assert_eq!(
        (n1.telemetry_ms, &n1.telemetry),
        (None, &NodeTelemetry::default())
    );
}

/// Every field the nodes routes serve is in the OpenAPI document (a field added to a node
/// must be documented with it).
#[tokio::test]
async fn the_openapi_document_describes_every_node_field() {
    use std::collections::BTreeSet;
    let spec: Value = serde_json::from_str(yard_rm::rest::OPENAPI).unwrap();
    let documented = |schema: &str| -> BTreeSet<String> {
        spec["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("schema {schema}"))
            .keys()
            .cloned()
            .collect()
    };
    let served =
        |v: &Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let h = harness();
    h.node("n1:8042", 4).await;
    assert_eq!(
        h.telemetry("n1:8042", json!(sample())).await.0,
        StatusCode::OK
    );
    let node = h.get_ok("/ws/v1/cluster/nodes/n1:8042").await["node"].clone();
    let mut expected = documented("NodeView");
    expected.insert("yardLoadHistory".into());
    expected.insert("yardContainers".into());
    let missing = |served: BTreeSet<String>, documented: BTreeSet<String>| {
        served.difference(&documented).cloned().collect::<Vec<_>>()
    };
    assert_eq!(missing(served(&node), expected), Vec::<String>::new());
    for (value, schema) in [
        (&node["resourceUtilization"], "ResourceUtilization"),
        (&node["yardLoad"], "YardLoad"),
        (&node["yardLoad"]["own"], "ProcessTreeUsage"),
        (&node["yardLoad"]["containers"][0], "ContainerUsage"),
        (&node["yardLoadHistory"][0], "LoadPoint"),
    ] {
        assert_eq!(
            missing(served(value), documented(schema)),
            Vec::<String>::new(),
            "{schema}"
        );
    }
    // The heartbeat's sample is described field for field.
    assert_eq!(
        served(&json!(sample())),
        documented("NodeTelemetry"),
        "NodeTelemetry"
    );
}
