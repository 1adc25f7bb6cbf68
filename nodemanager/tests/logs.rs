//! Containers' logs on a real nodemanager (127.0.0.1, ephemeral ports): served while and after
//! the container runs, to its application's job token only, `?start=-N` its last bytes; and
//! uploaded to the rm as the container ends, each file cut to its share of the cap.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{OriginalUri, State};
use axum::routing::{post, put};
use axum::{Json, Router};
use serde_json::{Value, json};
use support::{Nm, eventually};
use yard_nodemanager::daemon::NmOptions;
use yard_nodemanager::logs::LogAggregation;
use yard_wire::auth::ClusterSecret;
use yard_wire::protocol::HeartbeatReply;
use yard_wire::token::mint;

/// What the stand-in rm received: each upload's path and query, and its body.
type Uploads = Arc<Mutex<Vec<(String, Bytes)>>>;

/// A registered nodemanager whose stand-in rm keeps every log upload, with aggregation capped
/// at `cap` bytes a container: the node, the uploads, the cluster's secret and the work dir.
async fn node_uploading_to_a_stand_in_rm(
    cap: u64,
) -> (Nm, Uploads, ClusterSecret, tempfile::TempDir) {
    let secret = ClusterSecret::new([3; 32]);
    let uploads: Uploads = Default::default();
    let received = Router::new()
        .route(
            "/ws/v1/yard/apps/{app}/logs/{container}/{file}",
            put(
                |State(u): State<Uploads>, OriginalUri(uri): OriginalUri, body: Bytes| async move {
                    u.lock().unwrap().push((uri.to_string(), body));
                    (axum::http::StatusCode::CREATED, Json(json!({})))
                },
            ),
        )
        .with_state(uploads.clone());
    let heartbeat = post(|| async { Json(HeartbeatReply::default()) });
    let rm = support::stand_in_rm_with(secret.clone(), heartbeat, received).await;
    let work = tempfile::tempdir().unwrap();
    let node = Nm::start(NmOptions {
        heartbeat: Duration::from_millis(20),
        logs: LogAggregation {
            enabled: true,
            max_bytes_per_container: cap,
        },
        ..support::options(rm, work.path())
    })
    .await;
    support::registered(node.addr).await;
    (node, uploads, secret, work)
}

/// Starts `script` as `container` on `node`, which must accept it.
async fn start_script(node: &Nm, secret: &ClusterSecret, container: &str, script: &str) {
    let nm = node.addr.to_string();
    let started = reqwest::Client::new()
        .post(format!("http://{nm}/ws/v1/node/containers"))
        .json(&json!({
            "token": mint(&secret.container_key(&nm), container, &nm, 128, 1, i64::MAX),
            "command": ["/bin/sh", "-c", script],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201, "{:?}", started.text().await);
}

#[tokio::test]
async fn a_containers_logs_are_served_to_its_job_token_and_uploaded_cut_to_the_cap() {
    // 4 bytes a file.
    let (node, uploads, secret, _work) = node_uploading_to_a_stand_in_rm(8).await;
    let nm = node.addr.to_string();
    let base = format!("http://{nm}/ws/v1/node");
    let http = reqwest::Client::new();
    let container = "container_1000_0001_01_000002";
    start_script(
        &node,
        &secret,
        container,
        "printf 'hello-out\\n'; printf 'oops\\n' >&2; printf x > not-a-log",
    )
    .await;

    // Uploaded as it ends: each file's last 4 bytes, with what the container wrote.
    let got = eventually("both files uploaded", || async {
        let u = uploads.lock().unwrap().clone();
        (u.len() == 2).then_some(u)
    })
    .await;
    let prefix = format!("/ws/v1/yard/apps/application_1000_0001/logs/{container}");
    assert_eq!(
        got,
        vec![
            (
                format!("{prefix}/stdout?node={nm}&bytes=10&cap=8"),
                Bytes::from_static(b"out\n")
            ),
            (
                format!("{prefix}/stderr?node={nm}&bytes=5&cap=8"),
                Bytes::from_static(b"ops\n")
            ),
        ]
    );

    // Still served by the node after it ended (its directory is kept), to the job token.
    let job = secret.data_key().job_token("application_1000_0001");
    let logs = format!("{base}/containers/{container}/logs");
    let listed: Value = http
        .get(&logs)
        .bearer_auth(&job)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed,
        json!({"containerId": container, "running": false,
               "files": [{"file": "stdout", "bytes": 10}, {"file": "stderr", "bytes": 5}]})
    );
    let read = |url: String| http.get(url).bearer_auth(&job).send();
    let tail = read(format!("{logs}/stdout?start=-4")).await.unwrap();
    assert_eq!(tail.text().await.unwrap(), "out\n");
    let all = read(format!("{logs}/stderr")).await.unwrap();
    assert_eq!(all.text().await.unwrap(), "oops\n");
    // A file the command wrote is not a log; no token, another application's: refused.
    let other = read(format!("{logs}/not-a-log")).await.unwrap();
    assert_eq!(other.status(), 404);
    assert_eq!(http.get(&logs).send().await.unwrap().status(), 401);
    let foreign = secret.data_key().job_token("application_1000_0002");
    let refused = http.get(&logs).bearer_auth(foreign).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    node.stop().await;
}

/// A container still running when its nodemanager shuts down is stopped, and its logs go to
/// the rm before the nodemanager exits (they used to stay in the work dir).
#[tokio::test]
async fn a_nodemanager_that_shuts_down_uploads_its_running_containers_logs() {
    let (node, uploads, secret, _work) = node_uploading_to_a_stand_in_rm(1 << 20).await;
    let container = "container_1000_0001_01_000003";
    start_script(&node, &secret, container, "echo running; exec sleep 600").await;
    let job = secret.data_key().job_token("application_1000_0001");
    let stdout = format!(
        "http://{}/ws/v1/node/containers/{container}/logs/stdout",
        node.addr
    );
    eventually("the container's first line", || async {
        let r = reqwest::Client::new()
            .get(&stdout)
            .bearer_auth(&job)
            .send()
            .await
            .ok()?;
        (r.text().await.ok()? == "running\n").then_some(())
    })
    .await;
    assert!(uploads.lock().unwrap().is_empty(), "nothing ended yet");
    node.stop().await;
    let got = uploads.lock().unwrap().clone();
    let stdout = got
        .iter()
        .find(|(uri, _)| uri.contains(&format!("{container}/stdout?")))
        .unwrap_or_else(|| panic!("its stdout uploaded at shutdown: {got:?}"));
    assert_eq!(stdout.1, Bytes::from_static(b"running\n"));
}
