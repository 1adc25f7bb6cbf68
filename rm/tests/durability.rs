//! A reply that says a change happened means the change is on disk: the routes wait for the
//! journal's commit, a write that fails is a 503 (never a silent 202), the rm keeps serving
//! and says in its health that it cannot write, and once it can again nothing acknowledged
//! is missing.

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

#[tokio::test]
async fn a_full_disk_is_a_503_not_a_lost_submission_and_the_rm_recovers() {
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
    // The disk fills: the next submission is refused with the reason, not acknowledged.
    store.cap_growth(0).await.unwrap();
    let refused = new_id(&rm).await;
    let (status, why) = submit(&rm, &refused).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
    assert!(
        why["RemoteException"]["detail"]
            .as_str()
            .unwrap()
            .contains("full"),
        "{why}"
    );
    let (status, health) = call(&rm, Method::GET, "/ws/v1/yard/health", Value::Null).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");
    // It still answers reads, and a kill that cannot be saved is refused too.
    let (status, _) = call(&rm, Method::GET, "/ws/v1/cluster/apps", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    let kill = json!({"state": "KILLED"});
    let uri = format!("/ws/v1/cluster/apps/{}/state", acknowledged[0]);
    assert_eq!(
        call(&rm, Method::PUT, &uri, kill.clone()).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );

    // Room again: the retried submission is acknowledged, and health recovers.
    store.cap_growth(10_000).await.unwrap();
    assert_eq!(submit(&rm, &refused).await.0, StatusCode::ACCEPTED);
    acknowledged.push(refused);
    let (status, _) = call(&rm, Method::GET, "/ws/v1/yard/health", Value::Null).await;
    assert_eq!(status, StatusCode::OK);

    // A new rm on the same file has everything that was acknowledged; the kill that was
    // refused was not acknowledged, and a retry of it is then saved too.
    // (200: the refused kill already moved the application to KILLED in memory, and a kill
    // of an application in a final state answers 200, as YARN's does; it is saved all the same.)
    assert_eq!(call(&rm, Method::PUT, &uri, kill).await.0, StatusCode::OK);
    drop(rm);
    drop(store);
    let store = Store::open(&path).await.unwrap();
    let (apps, _) = store.load().await.unwrap();
    let stored: Vec<(&str, &str)> = apps
        .iter()
        .map(|a| (a.id.as_str(), a.user.as_str()))
        .collect();
    for id in &acknowledged {
        assert!(stored.iter().any(|(s, _)| s == id), "{id} lost: {stored:?}");
    }
    let killed = apps.iter().find(|a| a.id == acknowledged[0]).unwrap();
    assert_eq!(killed.lifecycle.state, yard_rm::app::AppState::Killed);
}
