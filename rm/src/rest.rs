//! The rm's HTTP surface: a thin adapter from requests to [`Cluster`] calls. yard's own
//! protocols live under `/ws/v1/yard/` (node registration and heartbeats, a master's
//! register/allocate/unregister); the client routes are a compatible subset of Hadoop's
//! ResourceManager REST API, with Hadoop's paths and JSON field names. Every refusal is a 4xx
//! with `{"error": "...", "detail": ...}` saying what to fix.

use std::sync::{Arc, Mutex};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use yard_wire::protocol::{AllocateRequest, Dataset, NodeHeartbeat, RegisterNode, Registered};

use crate::app::AppState;
use crate::cluster::{AppInfo, AppResult, Cluster, ClusterError, NewApp, NodeInfo, NodeState};

/// Milliseconds since the Unix epoch; the daemon passes the wall clock, tests a fake one.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Clone)]
pub struct Rm {
    pub cluster: Arc<Mutex<Cluster>>,
    pub clock: Clock,
    pub started_ms: i64,
}

/// Request bodies larger than this are refused (413): nothing the rm accepts is this big.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// A refusal: status, what went wrong, and details to fix it.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: String,
    pub detail: Value,
}

impl ApiError {
    fn new(status: StatusCode, error: impl Into<String>, detail: Value) -> Self {
        ApiError {
            status,
            error: error.into(),
            detail,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "error": self.error, "detail": self.detail })),
        )
            .into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        // Keeps axum's status (400 syntax, 415 content type, 422 shape, 413 size).
        ApiError::new(
            r.status(),
            "the request body is not what this route takes",
            json!(r.body_text()),
        )
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "the query string is not what this route takes",
            json!(r.body_text()),
        )
    }
}

impl From<ClusterError> for ApiError {
    fn from(e: ClusterError) -> Self {
        let status = match e {
            ClusterError::UnknownApp(_) | ClusterError::UnknownNode(_) => StatusCode::NOT_FOUND,
            ClusterError::AlreadySubmitted(_)
            | ClusterError::Transition(_)
            | ClusterError::NotRunning(_)
            | ClusterError::Ended(_) => StatusCode::CONFLICT,
            ClusterError::BadDataset { .. } => StatusCode::BAD_REQUEST,
            ClusterError::UnknownDataset(_) => StatusCode::NOT_FOUND,
            ClusterError::BadAsk { .. } => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, e.to_string(), Value::Null)
    }
}

type Reply = Result<Response, ApiError>;

fn ok(v: Value) -> Reply {
    Ok(Json(v).into_response())
}

impl Rm {
    fn with<T>(&self, f: impl FnOnce(&mut Cluster, i64) -> T) -> T {
        let now = (self.clock)();
        let mut cluster = self
            .cluster
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut cluster, now)
    }
}

/// The OpenAPI document of every route below (checked against [`routes`] by a test).
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Every route: its path, its methods, and its handlers. The router is built from this table,
/// and a test checks the OpenAPI document lists exactly these paths and methods.
pub fn routes() -> Vec<(&'static str, &'static [&'static str], MethodRouter<Rm>)> {
    vec![
        ("/ws/v1/yard/nodes", &["post"], post(register_node)),
        ("/ws/v1/yard/nodes/heartbeat", &["post"], post(heartbeat)),
        (
            "/ws/v1/yard/apps/{id}/register",
            &["post"],
            post(master_register),
        ),
        ("/ws/v1/yard/apps/{id}/allocate", &["post"], post(allocate)),
        (
            "/ws/v1/yard/apps/{id}/unregister",
            &["post"],
            post(master_unregister),
        ),
        ("/ws/v1/yard/apps/{id}", &["get"], get(yard_app)),
        (
            "/ws/v1/yard/apps/{id}/deadline",
            &["put"],
            put(set_deadline),
        ),
        ("/ws/v1/yard/apps/{id}/result", &["put"], put(report_result)),
        ("/ws/v1/yard/datasets", &["get"], get(datasets)),
        (
            "/ws/v1/yard/datasets/{name}",
            &["get", "put"],
            get(dataset).put(put_dataset),
        ),
        ("/ws/v1/yard/openapi.json", &["get"], get(openapi)),
        ("/ws/v1/cluster/info", &["get"], get(cluster_info)),
        ("/ws/v1/cluster/metrics", &["get"], get(metrics)),
        ("/ws/v1/cluster/nodes", &["get"], get(nodes)),
        ("/ws/v1/cluster/nodes/{id}", &["get"], get(node)),
        (
            "/ws/v1/cluster/apps",
            &["get", "post"],
            get(apps).post(submit),
        ),
        (
            "/ws/v1/cluster/apps/new-application",
            &["post"],
            post(new_application),
        ),
        ("/ws/v1/cluster/apps/{id}", &["get"], get(app)),
        (
            "/ws/v1/cluster/apps/{id}/appattempts",
            &["get"],
            get(app_attempts),
        ),
        (
            "/ws/v1/cluster/apps/{id}/state",
            &["get", "put"],
            get(app_state).put(set_app_state),
        ),
    ]
}

/// Every route, bound to `rm`.
pub fn router(rm: Rm) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |r, (path, _, handlers)| {
            r.route(path, handlers)
        })
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "no such route",
                json!("see /ws/v1/cluster/info"),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(rm)
}

async fn register_node(
    State(rm): State<Rm>,
    body: Result<Json<RegisterNode>, JsonRejection>,
) -> Reply {
    let Json(r) = body?;
    if r.node_id.is_empty() || r.capability.memory_mb == 0 || r.capability.vcores == 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "a node needs an id and some memory and vcores",
            json!(r),
        ));
    }
    let token_key = rm.with(|c, now| {
        c.register_node(now, r);
        c.token_key_hex()
    });
    ok(json!(Registered { token_key }))
}

async fn heartbeat(
    State(rm): State<Rm>,
    body: Result<Json<NodeHeartbeat>, JsonRejection>,
) -> Reply {
    let Json(hb) = body?;
    ok(json!(rm.with(|c, now| c.heartbeat(now, hb))))
}

/// Hadoop's RegisterApplicationMasterRequest, the part yard uses: where the master serves its
/// own status (clients follow it for progress). An empty body is a master without one.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MasterRegistration {
    #[serde(default)]
    tracking_url: Option<String>,
}

async fn master_register(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Reply {
    let registration: MasterRegistration = if body.iter().all(u8::is_ascii_whitespace) {
        MasterRegistration::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "the registration is not {\"trackingUrl\": \"http://…\"} (or empty)",
                json!(e.to_string()),
            )
        })?
    };
    if let Some(url) = &registration.tracking_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "trackingUrl must be an http(s) URL",
            json!(url),
        ));
    }
    rm.with(|c, _| c.master_registered(&id, registration.tracking_url))?;
    ok(json!({}))
}

async fn allocate(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: Result<Json<AllocateRequest>, JsonRejection>,
) -> Reply {
    let Json(req) = body?;
    if req.application_id != id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "applicationId in the body differs from the one in the path",
            json!({ "path": id, "body": req.application_id }),
        ));
    }
    ok(json!(rm.with(|c, now| c.allocate(now, req))?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Unregister {
    succeeded: bool,
}

async fn master_unregister(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: Result<Json<Unregister>, JsonRejection>,
) -> Reply {
    let Json(u) = body?;
    rm.with(|c, _| c.master_finished(&id, u.succeeded))?;
    ok(json!({}))
}

/// yard's view of an application: what Hadoop's lacks (deadline, processed fraction, answer).
fn yard_app_json(a: &AppInfo) -> Value {
    json!({ "app": {
        "id": a.application_id,
        "state": state_name(a.lifecycle.state),
        "finalStatus": a.lifecycle.final_status,
        "deadlineMs": a.deadline_ms,
        "trackingUrl": a.tracking_url,
        "processedFraction": a.result.as_ref().map(|r| r.processed_fraction),
        "answer": a.result.as_ref().map(|r| &r.answer),
    }})
}

async fn yard_app(State(rm): State<Rm>, Path(id): Path<String>) -> Reply {
    match rm.with(|c, _| c.app(&id).map(yard_app_json)) {
        Some(v) => ok(v),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Deadline {
    deadline_ms: i64,
}

async fn set_deadline(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: Result<Json<Deadline>, JsonRejection>,
) -> Reply {
    let Json(d) = body?;
    if d.deadline_ms <= 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "deadlineMs is a time: milliseconds since the Unix epoch",
            json!({ "deadlineMs": d.deadline_ms }),
        ));
    }
    ok(rm.with(|c, _| {
        c.set_deadline(&id, d.deadline_ms)?;
        Ok::<_, ClusterError>(c.app(&id).map(yard_app_json).unwrap_or_default())
    })?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ResultBody {
    processed_fraction: f64,
    answer: Value,
}

async fn report_result(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: Result<Json<ResultBody>, JsonRejection>,
) -> Reply {
    let Json(r) = body?;
    if !(0.0..=1.0).contains(&r.processed_fraction) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "processedFraction is the share of the input processed, from 0 to 1",
            json!({ "processedFraction": r.processed_fraction }),
        ));
    }
    let result = AppResult {
        processed_fraction: r.processed_fraction,
        answer: r.answer,
    };
    ok(rm.with(|c, _| {
        c.report_result(&id, result)?;
        Ok::<_, ClusterError>(c.app(&id).map(yard_app_json).unwrap_or_default())
    })?)
}

async fn datasets(State(rm): State<Rm>) -> Reply {
    let list: Vec<Value> = rm.with(|c, _| {
        c.datasets()
            .map(|d| {
                json!({
                    "name": d.name,
                    "createdMs": d.created_ms,
                    "blocks": d.blocks.len(),
                    "bytes": d.blocks.iter().map(|b| b.bytes).sum::<u64>(),
                })
            })
            .collect()
    });
    ok(json!({ "datasets": list }))
}

async fn dataset(State(rm): State<Rm>, Path(name): Path<String>) -> Reply {
    ok(rm.with(|c, _| c.dataset(&name).map(|d| json!(d)))?)
}

async fn put_dataset(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    body: Result<Json<Dataset>, JsonRejection>,
) -> Reply {
    let Json(d) = body?;
    if d.name != name {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "name in the body differs from the one in the path",
            json!({ "path": name, "body": d.name }),
        ));
    }
    ok(rm.with(|c, now| {
        c.put_dataset(now, d)?;
        c.dataset(&name).map(|d| json!(d))
    })?)
}

async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
        .into_response()
}

async fn cluster_info(State(rm): State<Rm>) -> Reply {
    ok(json!({ "clusterInfo": {
        "id": rm.started_ms,
        "startedOn": rm.started_ms,
        "state": "STARTED",
        "haState": "ACTIVE",
        "resourceManagerVersion": env!("CARGO_PKG_VERSION"),
        "hadoopVersion": "yard",
    }}))
}

async fn metrics(State(rm): State<Rm>) -> Reply {
    let m = rm.with(|c, _| c.metrics());
    ok(json!({ "clusterMetrics": {
        "appsSubmitted": m.apps_submitted,
        "appsCompleted": m.apps_completed,
        "appsPending": m.apps_pending,
        "appsRunning": m.apps_running,
        "appsFailed": m.apps_failed,
        "appsKilled": m.apps_killed,
        "totalMB": m.total_mb,
        "allocatedMB": m.allocated_mb,
        "availableMB": m.total_mb.saturating_sub(m.allocated_mb),
        "totalVirtualCores": m.total_vcores,
        "allocatedVirtualCores": m.allocated_vcores,
        "availableVirtualCores": m.total_vcores.saturating_sub(m.allocated_vcores),
        "containersAllocated": m.containers_allocated,
        "totalNodes": m.active_nodes + m.lost_nodes,
        "activeNodes": m.active_nodes,
        "lostNodes": m.lost_nodes,
    }}))
}

async fn app_attempts(State(rm): State<Rm>, Path(id): Path<String>) -> Reply {
    let attempts = rm.with(|c, _| {
        c.app(&id).map(|a| {
            a.attempts
                .iter()
                .map(|t| {
                    json!({
                        "id": t.attempt,
                        "startTime": t.started_ms,
                        "containerId": t.container_id,
                        "nodeId": t.node_id,
                        "nodeHttpAddress": t.node_id,
                    })
                })
                .collect::<Vec<_>>()
        })
    });
    match attempts {
        Some(list) => ok(json!({ "appAttempts": { "appAttempt": list } })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

fn node_json(n: &NodeInfo) -> Value {
    json!({
        "id": n.node_id,
        "rack": n.rack,
        "state": match n.state { NodeState::Running => "RUNNING", NodeState::Lost => "LOST" },
        "nodeHostName": n.node_id.split(':').next().unwrap_or(&n.node_id),
        "nodeHTTPAddress": n.node_id,
        "lastHealthUpdate": n.last_heartbeat_ms,
        "numContainers": n.containers.len(),
        "totalResource": { "memory": n.capability.memory_mb, "vCores": n.capability.vcores },
    })
}

async fn nodes(State(rm): State<Rm>) -> Reply {
    let list: Vec<Value> = rm.with(|c, _| c.nodes().map(node_json).collect());
    ok(json!({ "nodes": { "node": list } }))
}

async fn node(State(rm): State<Rm>, Path(id): Path<String>) -> Reply {
    let found = rm.with(|c, _| c.nodes().find(|n| n.node_id == id).map(node_json));
    match found {
        Some(n) => ok(json!({ "node": n })),
        None => Err(ClusterError::UnknownNode(id).into()),
    }
}

fn state_name(s: AppState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn app_json(a: &AppInfo) -> Value {
    json!({
        "id": a.application_id,
        "name": a.name,
        "user": a.user,
        "queue": a.queue,
        "state": state_name(a.lifecycle.state),
        "finalStatus": a.lifecycle.final_status,
        "progress": a.progress * 100.0,
        "diagnostics": a.lifecycle.diagnostics,
        "startedTime": a.submitted_ms,
        "runningContainers": a.containers.len(),
        "applicationType": "YARD",
    })
}

/// Hadoop's filters on `/apps`: `states` (comma-separated), `user`, `queue`, `limit`.
#[derive(Deserialize)]
struct AppsFilter {
    states: Option<String>,
    user: Option<String>,
    queue: Option<String>,
    limit: Option<usize>,
}

async fn apps(State(rm): State<Rm>, filter: Result<Query<AppsFilter>, QueryRejection>) -> Reply {
    let Query(f) = filter?;
    let states: Option<Vec<String>> = f.states.map(|s| {
        s.split(',')
            .map(|x| x.trim().to_ascii_uppercase())
            .collect()
    });
    let list: Vec<Value> = rm.with(|c, _| {
        c.apps()
            .filter(|a| {
                states
                    .as_ref()
                    .is_none_or(|s| s.contains(&state_name(a.lifecycle.state)))
            })
            .filter(|a| f.user.as_ref().is_none_or(|u| *u == a.user))
            .filter(|a| f.queue.as_ref().is_none_or(|q| *q == a.queue))
            .take(f.limit.unwrap_or(usize::MAX))
            .map(app_json)
            .collect()
    });
    ok(json!({ "apps": { "app": list } }))
}

async fn app(State(rm): State<Rm>, Path(id): Path<String>) -> Reply {
    match rm.with(|c, _| c.app(&id).map(app_json)) {
        Some(a) => ok(json!({ "app": a })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

async fn new_application(State(rm): State<Rm>) -> Reply {
    let id = rm.with(|c, _| c.new_application());
    ok(
        json!({ "application-id": id, "maximum-resource-capability": { "memory": 8192, "vCores": 8 } }),
    )
}

/// Hadoop's application submission context, the fields yard reads.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Submission {
    application_id: String,
    #[serde(default)]
    application_name: String,
    #[serde(default = "default_queue")]
    queue: String,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    am_container_spec: AmContainerSpec,
}

/// Hadoop's `am-container-spec`: `{"commands": {"command": "..."}, "environment": {"entry":
/// [{"key", "value"}]}}`. The command runs under `/bin/sh -c`.
#[derive(Deserialize, Default)]
struct AmContainerSpec {
    #[serde(default)]
    commands: Option<Commands>,
    #[serde(default)]
    environment: Option<Environment>,
}

#[derive(Deserialize)]
struct Commands {
    command: String,
}

#[derive(Deserialize)]
struct Environment {
    #[serde(default)]
    entry: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    key: String,
    value: String,
}

fn default_queue() -> String {
    "default".into()
}

async fn submit(State(rm): State<Rm>, body: Result<Json<Submission>, JsonRejection>) -> Reply {
    let Json(s) = body?;
    let user = s.user.unwrap_or_else(|| "yard".into());
    let spec = s.am_container_spec;
    let command = spec
        .commands
        .map(|c| vec!["/bin/sh".to_owned(), "-c".to_owned(), c.command])
        .unwrap_or_default();
    let env = spec
        .environment
        .map(|e| e.entry.into_iter().map(|x| (x.key, x.value)).collect())
        .unwrap_or_default();
    let new = NewApp {
        id: s.application_id.clone(),
        name: s.application_name,
        user,
        queue: s.queue,
        master_command: command,
        master_env: env,
    };
    rm.with(|c, now| c.submit(now, new))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "application-id": s.application_id })),
    )
        .into_response())
}

async fn app_state(State(rm): State<Rm>, Path(id): Path<String>) -> Reply {
    match rm.with(|c, _| c.app(&id).map(|a| state_name(a.lifecycle.state))) {
        Some(state) => ok(json!({ "state": state })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewState {
    state: String,
}

async fn set_app_state(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    body: Result<Json<NewState>, JsonRejection>,
) -> Reply {
    let Json(s) = body?;
    if s.state != "KILLED" {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the only state a client may set is KILLED",
            json!({ "asked": s.state }),
        ));
    }
    rm.with(|c, _| c.kill(&id))?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "state": "KILLED" }))).into_response())
}
