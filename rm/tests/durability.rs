//! A reply that says a change happened means the change is on disk: the routes wait for the
//! journal's commit, a write that fails is a 503 (never a silent 202) and its change is put
//! back, every change is refused while the rm cannot write (its health says so), reads go on,
//! and once it can write again — found by itself — nothing acknowledged is missing and nothing
//! refused is there. (The real faults, a full and a read-only disk under a running rm, are in
//! `tests/storage_faults_e2e.rs`; here SQLite's `query_only` stands in for them.)

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use yard_rm::cluster::{Cluster, Settings};
use yard_rm::journal::Journal;
use yard_rm::rest::{Rm, router};
use yard_rm::store::Store;
use yard_wire::auth::{ClusterSecret, Principal};

const SECRET: [u8; 32] = [4; 32];

async fn call(rm: &Rm, method: Method, uri: &str, body: Value) -> (StatusCode, Value) {
    let admin = ClusterSecret::new(SECRET)
        .bearer_key()
        .issue(&Principal::Admin { user: "op".into() });
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {admin}"))
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = router(rm.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn submit(rm: &Rm, id: &str) -> (StatusCode, Value) {
    // A long command, so each application needs fresh pages in the database.
    let command = format!("echo {}", "x".repeat(20_000));
    let body = json!({"application-id": id, "application-name": "durable",
        "am-container-spec": {"commands": {"command": command}}});
    call(rm, Method::POST, "/ws/v1/cluster/apps", body).await
}

async fn new_id(rm: &Rm) -> String {
    let (_, v) = call(
        rm,
        Method::POST,
        "/ws/v1/cluster/apps/new-application",
        json!({}),
    )
    .await;
    v["application-id"].as_str().unwrap().to_owned()
}

async fn state_of(rm: &Rm, id: &str) -> (StatusCode, Value) {
    let uri = format!("/ws/v1/cluster/apps/{id}/state");
    call(rm, Method::GET, &uri, Value::Null).await
}

#[tokio::test]
async fn a_failed_write_is_a_503_its_change_put_back_and_the_rm_recovers_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let store = Arc::new(Store::open(&path).await.unwrap());
    let cluster = Arc::new(Mutex::new(Cluster::new(
        Settings::default(),
        ClusterSecret::new(SECRET),
        1_000,
    )));
    let journal = Journal::start(store.clone(), cluster.clone());
    let rm = Rm {
        bearer: ClusterSecret::new(SECRET).bearer_key(),
        cluster,
        clock: Arc::new(|| 2_000),
        started_ms: 1_000,
        journal: Some(journal),
        profiles: None,
        metrics: Default::default(),
        scans: Default::default(),
        logs: None,
        seeds: Default::default(),
    };
    // While no sidecar shared-memory file exists, a full or read-only disk cannot become a
    // SIGBUS (exclusive WAL keeps its index in the process's own memory).
    assert!(!dir.path().join("rm.db-shm").exists());

    let mut acknowledged = Vec::new();
    for _ in 0..3 {
        let id = new_id(&rm).await;
        assert_eq!(submit(&rm, &id).await.0, StatusCode::ACCEPTED);
        acknowledged.push(id);
    }
    let (refused, retried) = (new_id(&rm).await, new_id(&rm).await);

    // The disk turns read-only: the next submission's write fails, it is refused with the
    // reason, and it is gone from memory too (it used to stay, and be written with the next
    // change that could be).
    store.refuse_writes(true).await.unwrap();
    let (status, why) = submit(&rm, &refused).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
    assert!(
        why["RemoteException"]["detail"]
            .as_str()
            .unwrap()
            .contains("readonly"),
        "{why}"
    );
    assert_eq!(state_of(&rm, &refused).await.0, StatusCode::NOT_FOUND);
    let (status, health) = call(&rm, Method::GET, "/ws/v1/yard/health", Value::Null).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");

    // Every change is refused before it is made; reads go on.
    let (status, _) = call(&rm, Method::GET, "/ws/v1/cluster/apps", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    let kill = json!({"state": "KILLED"});
    let kill_uri = format!("/ws/v1/cluster/apps/{}/state", acknowledged[0]);
    let (status, why) = call(&rm, Method::PUT, &kill_uri, kill.clone()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
    assert!(why.to_string().contains("accepts no changes"), "{why}");
    assert_eq!(
        state_of(&rm, &acknowledged[0]).await.1,
        json!({"state": "ACCEPTED"}),
        "the refused kill left it as it was"
    );
    assert_eq!(
        submit(&rm, &retried).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    let (status, _) = call(
        &rm,
        Method::POST,
        "/ws/v1/cluster/apps/new-application",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);

    // Writable again: the rm notices by itself (no request, no restart).
    store.refuse_writes(false).await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, _) = call(&rm, Method::GET, "/ws/v1/yard/health", Value::Null).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "health never recovered"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(submit(&rm, &retried).await.0, StatusCode::ACCEPTED);
    acknowledged.push(retried);
    // 202, not 200: the refused kill had not left the application KILLED.
    assert_eq!(
        call(&rm, Method::PUT, &kill_uri, kill).await.0,
        StatusCode::ACCEPTED
    );

    // A new rm on the same file has everything acknowledged and nothing refused.
    drop(rm);
    drop(store);
    let store = Store::open(&path).await.unwrap();
    let (apps, _) = store.load().await.unwrap();
    let stored: Vec<&str> = apps.iter().map(|a| a.id.as_str()).collect();
    for id in &acknowledged {
        assert!(stored.contains(&id.as_str()), "{id} lost: {stored:?}");
    }
    assert!(!stored.contains(&refused.as_str()), "{refused} was refused");
    let killed = apps.iter().find(|a| a.id == acknowledged[0]).unwrap();
    assert_eq!(
        killed.lifecycle.state,
        yard_cluster::app::YarnApplicationState::Killed
    );
}
