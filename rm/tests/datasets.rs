//! Removing a dataset (`DELETE /ws/v1/yard/datasets/{name}`, `yard data rm`): who may, what an
//! unfinished job holds, the nodes told to delete its blocks in their heartbeat replies (each
//! once), the name refused until every node has been told, a failed job's output parts
//! deleted, and the removal kept across a restart.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, registration, token};
use yard_rm::cluster::{Cluster, Settings};
use yard_rm::store::Store;
use yard_wire::auth::{ClusterSecret, Principal};

fn harness() -> Harness {
    Harness::at(Settings::default(), 1_000)
}

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

/// `name` put by `owner`: one block on n1 and n2, one on n2.
async fn put(h: &Harness, owner: &str, name: &str) {
    let body = json!({"name": name, "blocks": [
        {"block": "b0", "bytes": 10, "nodes": ["n1:8042", "n2:8042"]},
        {"block": "b1", "bytes": 4, "nodes": ["n2:8042"]}]});
    let uri = format!("/ws/v1/yard/datasets/{name}");
    let r = h
        .call_as(Some(&user(owner)), Method::PUT, &uri, Some(body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// A MapReduce job of `job`'s fields, accepted: its id.
async fn submit(h: &Harness, job: Value) -> String {
    let (status, reply) = h
        .post("/ws/v1/yard/mapreduce/jobs", json!({ "job": job }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{reply}");
    reply["job"]["id"].as_str().unwrap().to_owned()
}

/// YARN's kill of application `id`, which must be taken.
async fn kill(h: &Harness, id: &str) {
    let uri = format!("/ws/v1/cluster/apps/{id}/state");
    let (status, reply) = h.put(&uri, json!({"state": "KILLED"})).await;
    assert!(status.is_success(), "{status}: {reply}");
}

/// What `node`'s heartbeat reply tells it to delete.
async fn told(h: &Harness, node: &str) -> Value {
    h.heartbeat(node, 10.0, &[]).await["deleteDatasets"].clone()
}

#[tokio::test]
async fn a_removed_datasets_nodes_are_told_once_and_its_name_waits_for_them() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    h.node("n3:8042", 4).await;
    put(&h, "carol", "logs").await;
    put(&h, "carol", "src").await;
    let uri = "/ws/v1/yard/datasets/logs";

    // Only its owner or an admin; an unknown one is a 404.
    let r = h
        .call_as(Some(&user("dave")), Method::DELETE, uri, None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert!(r.text.contains("belongs to carol"), "{}", r.text);
    let r = h.call_as(None, Method::DELETE, uri, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = h
        .call_as(
            Some(&user("carol")),
            Method::DELETE,
            "/ws/v1/yard/datasets/nope",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

    let r = h
        .call_as(Some(&user("carol")), Method::DELETE, uri, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json(), json!({"dataset": "logs", "nodes": 2}));
    assert_eq!(h.get(uri).await.0, StatusCode::NOT_FOUND);
    let (_, list) = h.get("/ws/v1/yard/datasets").await;
    assert_eq!(
        list["datasets"].as_array().unwrap().len(),
        1,
        "src only: {list}"
    );

    // n3 holds none of it; n1 is told once.
    assert_eq!(told(&h, "n3:8042").await, Value::Null);
    assert_eq!(told(&h, "n1:8042").await, json!(["logs"]));
    assert_eq!(told(&h, "n1:8042").await, Value::Null);

    // Until n2 is told, the name is taken: no new block map, no upload grant, no job output.
    let again =
        json!({"name": "logs", "blocks": [{"block": "b0", "bytes": 1, "nodes": ["n1:8042"]}]});
    let (status, why) = h.put(uri, again.clone()).await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");
    assert!(
        why["error"].as_str().unwrap().contains("being deleted"),
        "{why}"
    );
    let (status, why) = h.post(&format!("{uri}/upload-grant"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");
    let (status, why) = h
        .post(
            "/ws/v1/yard/mapreduce/jobs",
            json!({"job": {"app": "wordcount", "input": "src", "output": "logs"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");

    assert_eq!(told(&h, "n2:8042").await, json!(["logs"]));
    let (status, why) = h.put(uri, again).await;
    assert_eq!(status, StatusCode::OK, "the name is free again: {why}");
    // The new dataset's blocks are nobody's to delete.
    assert_eq!(told(&h, "n1:8042").await, Value::Null);
}

#[tokio::test]
async fn a_dataset_an_unfinished_job_reads_is_not_removed() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    put(&h, "carol", "books").await;
    let job = submit(&h, json!({"app": "wordcount", "input": "books"})).await;
    let (status, why) = h
        .call(Method::DELETE, "/ws/v1/yard/datasets/books", None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");
    assert!(why["error"].as_str().unwrap().contains(&job), "{why}");
    assert!(h.get("/ws/v1/yard/datasets/books").await.0.is_success());
    assert_eq!(told(&h, "n1:8042").await, Value::Null, "nothing deleted");

    // Once the job ends, it may go.
    kill(&h, &job).await;
    let (status, why) = h
        .call(Method::DELETE, "/ws/v1/yard/datasets/books", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{why}");
}

#[tokio::test]
async fn a_job_that_ends_without_committing_its_output_has_its_parts_deleted() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    put(&h, "carol", "books").await;
    let job = submit(
        &h,
        json!({"app": "wordcount", "input": "books", "output": "counts"}),
    )
    .await;
    // Running: nothing to delete.
    assert_eq!(told(&h, "n1:8042").await, Value::Null);
    kill(&h, &job).await;
    // Every running node may hold a part: each is told, once; the input is untouched.
    for node in ["n1:8042", "n2:8042"] {
        assert_eq!(told(&h, node).await, json!(["counts"]), "{node}");
        assert_eq!(told(&h, node).await, Value::Null, "{node}");
    }
    assert!(h.get("/ws/v1/yard/datasets/books").await.0.is_success());
}

/// The store forgets a removed dataset: a restarted rm does not list it.
#[tokio::test]
async fn a_removal_is_kept_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let store = Store::open(&path).await.unwrap();
    let mut before = Cluster::new(Settings::default(), ClusterSecret::new([1; 32]), 1_000);
    before.register_node(1_000, registration("n1:8042"));
    for name in ["kept", "gone"] {
        before
            .put_dataset(2_000, support::one_block_dataset(name), "carol")
            .unwrap();
    }
    store.save_changes(&before.take_changes()).await.unwrap();
    assert_eq!(before.remove_dataset("gone").unwrap(), 1);
    let changes = before.take_changes();
    assert_eq!(changes.removed_datasets, ["gone"]);
    store.save_changes(&changes).await.unwrap();
    drop(store);

    let store = Store::open(&path).await.unwrap();
    let mut after = Cluster::new(Settings::default(), ClusterSecret::new([2; 32]), 9_000);
    after.restore_datasets(store.load_datasets().await.unwrap());
    let names: Vec<&str> = after.datasets().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["kept"]);
}

/// A deletion not yet told when the rm stops is kept with the removal: the rm restarted on that
/// state holds the name and tells the node in its next heartbeat reply; once told and saved, a
/// later restart has nothing to tell.
#[tokio::test]
async fn a_deletion_not_yet_told_is_told_by_the_restarted_rm() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let heartbeat = |c: &mut Cluster, now| {
        let hb = yard_wire::protocol::NodeHeartbeat {
            node_id: "n1:8042".into(),
            running: Vec::new(),
            completed: Vec::new(),
            telemetry: Default::default(),
        };
        c.heartbeat(now, hb).delete_datasets
    };
    let store = Store::open(&path).await.unwrap();
    let mut before = Cluster::new(Settings::default(), ClusterSecret::new([1; 32]), 1_000);
    before.register_node(1_000, registration("n1:8042"));
    before
        .put_dataset(2_000, support::one_block_dataset("gone"), "carol")
        .unwrap();
    store.save_changes(&before.take_changes()).await.unwrap();
    assert_eq!(before.remove_dataset("gone").unwrap(), 1);
    store.save_changes(&before.take_changes()).await.unwrap();
    before.release_deletes("gone");
    drop((store, before)); // stopped before n1's next heartbeat

    let store = Store::open(&path).await.unwrap();
    let mut after = Cluster::new(Settings::default(), ClusterSecret::new([2; 32]), 9_000);
    let (_, nodes) = store.load().await.unwrap();
    assert_eq!(nodes.len(), 1);
    after.register_node(9_000, registration("n1:8042"));
    after.restore_datasets(store.load_datasets().await.unwrap());
    after.restore_deletes(store.load_deletes().await.unwrap());
    assert!(after.being_deleted("gone"), "the name waits for the node");
    assert_eq!(heartbeat(&mut after, 9_500), ["gone"]);
    assert!(heartbeat(&mut after, 9_600).is_empty(), "told once");
    assert!(!after.being_deleted("gone"));
    store.save_changes(&after.take_changes()).await.unwrap();
    drop(store);

    let store = Store::open(&path).await.unwrap();
    assert!(
        store.load_deletes().await.unwrap().is_empty(),
        "told: gone from the store"
    );
}
