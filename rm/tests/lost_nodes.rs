//! LOST nodes are forgotten after their retention (`Settings::lost_node_retention_ms`, YARN's
//! `yarn.resourcemanager.node-removal-untracked.timeout-ms`): listed LOST until then, then
//! gone from the nodes list, from the block maps the rm answers with (`yard data ls`) and from
//! the store, so a node lost before an rm restart does not stay listed for good; one that
//! registers again is listed, and named as its blocks' holder, again.

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::{Harness, T0, registration};
use yard_rm::cluster::{Cluster, NodeState, Settings};
use yard_rm::store::Store;
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::NodeHeartbeat;

/// The default expiry (10 s) and a retention of 30 s.
fn settings() -> Settings {
    Settings {
        lost_node_retention_ms: 30_000,
        ..Settings::default()
    }
}

/// Each listed node as `id STATE`.
fn node_ids(nodes: &Value) -> Vec<String> {
    nodes["nodes"]["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{} {}",
                n["id"].as_str().unwrap(),
                n["state"].as_str().unwrap()
            )
        })
        .collect()
}

fn holders(dataset: &Value) -> Vec<Vec<String>> {
    dataset["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_value(b["nodes"].clone()).unwrap())
        .collect()
}

#[tokio::test]
async fn a_lost_node_is_listed_until_its_retention_then_forgotten_until_it_registers_again() {
    let h = Harness::new(settings());
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    let (status, reply) = h
        .put(
            "/ws/v1/yard/datasets/logs",
            json!({"name": "logs", "blocks": [
                {"block": "b0", "bytes": 10, "nodes": ["n1:8042", "n2:8042"]},
                {"block": "b1", "bytes": 10, "nodes": ["n1:8042"]}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    // n2 beats on; n1 falls silent at T0 and is LOST past the 10 s expiry.
    for s in 1..=12 {
        h.beat_and_tick("n2:8042", T0 + s * 1_000).await;
    }
    let nodes = h.get_ok("/ws/v1/cluster/nodes").await;
    assert_eq!(node_ids(&nodes), ["n1:8042 LOST", "n2:8042 RUNNING"]);
    let lost_at =
        h.rm.cluster
            .lock()
            .unwrap()
            .node("n1:8042")
            .unwrap()
            .lost_ms;
    let lost_at = lost_at.expect("marked when lost");
    // Within the retention it is still listed, and still named as a holder.
    for t in [20_000, 29_999] {
        h.beat_and_tick("n2:8042", lost_at + t).await;
    }
    assert_eq!(node_ids(&h.get_ok("/ws/v1/cluster/nodes").await).len(), 2);
    assert_eq!(
        holders(&h.get_ok("/ws/v1/yard/datasets/logs").await),
        [vec!["n1:8042", "n2:8042"], vec!["n1:8042"]]
    );
    assert_eq!(
        h.get_ok("/ws/v1/cluster/metrics").await["clusterMetrics"]["lostNodes"],
        1
    );
    // Past it, forgotten: not listed, not found, named nowhere, counted nowhere.
    h.beat_and_tick("n2:8042", lost_at + 30_000).await;
    assert_eq!(
        node_ids(&h.get_ok("/ws/v1/cluster/nodes").await),
        ["n2:8042 RUNNING"]
    );
    let (status, _) = h.get("/ws/v1/cluster/nodes/n1:8042").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        holders(&h.get_ok("/ws/v1/yard/datasets/logs").await),
        [vec!["n2:8042"], Vec::<&str>::new()]
    );
    assert_eq!(
        h.get_ok("/ws/v1/cluster/metrics").await["clusterMetrics"]["lostNodes"],
        0
    );
    // It comes back: listed, and holding its blocks, again.
    h.node("n1:8042", 4).await;
    assert_eq!(node_ids(&h.get_ok("/ws/v1/cluster/nodes").await).len(), 2);
    assert_eq!(
        holders(&h.get_ok("/ws/v1/yard/datasets/logs").await),
        [vec!["n1:8042", "n2:8042"], vec!["n1:8042"]]
    );
}

#[tokio::test]
async fn a_node_lost_before_a_restart_is_forgotten_after_it_and_leaves_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let store = Store::open(&path).await.unwrap();
    let mut before = Cluster::new(settings(), ClusterSecret::new([1; 32]), 1_000);
    before.register_node(1_000, registration("gone:8042"));
    before.register_node(1_000, registration("up:8042"));
    // `gone` falls silent and is LOST at 12 s; `up` runs until the rm stops at 20 s.
    before.heartbeat(
        11_500,
        NodeHeartbeat {
            node_id: "up:8042".into(),
            running: Vec::new(),
            completed: Vec::new(),
            telemetry: Default::default(),
        },
    );
    assert_eq!(before.expire(12_000), ["gone:8042"]);
    store.save_changes(&before.take_changes()).await.unwrap();
    drop(store);

    // The rm comes back at 25 s: both nodes LOST until they register (as every node after a
    // restart), `gone` lost since 11 s (its last heartbeat plus the expiry), `up` since now.
    let restart = |at: i64| {
        let path = path.clone();
        async move {
            let store = Store::open(&path).await.unwrap();
            let (apps, nodes) = store.load().await.unwrap();
            let mut after = Cluster::new(settings(), ClusterSecret::new([2; 32]), at);
            after.restore(apps, nodes);
            (store, after)
        }
    };
    let (store, mut after) = restart(25_000).await;
    let lost: Vec<(String, NodeState, Option<i64>)> = after
        .nodes()
        .map(|n| (n.node_id.clone(), n.state, n.lost_ms))
        .collect();
    assert_eq!(
        lost,
        [
            ("gone:8042".into(), NodeState::Lost, Some(11_000)),
            ("up:8042".into(), NodeState::Lost, Some(25_000))
        ]
    );
    // 30 s after `gone` was lost it is forgotten, in memory and in the store; `up`, lost at
    // the restart, is kept until its own retention has passed.
    after.expire(40_999);
    assert_eq!(after.nodes().count(), 2);
    after.expire(41_000);
    let kept: Vec<&str> = after.nodes().map(|n| n.node_id.as_str()).collect();
    assert_eq!(kept, ["up:8042"]);
    let changes = after.take_changes();
    assert_eq!(changes.removed_nodes, ["gone:8042"]);
    store.save_changes(&changes).await.unwrap();
    drop(store);
    let (_, after) = restart(42_000).await;
    let kept: Vec<&str> = after.nodes().map(|n| n.node_id.as_str()).collect();
    assert_eq!(kept, ["up:8042"], "gone from the store too");
}
