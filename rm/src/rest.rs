//! The rm's HTTP surface: a thin adapter from requests to [`Cluster`] calls. yard's own
//! protocols live under `/ws/v1/yard/` (node registration and heartbeats, a master's
//! register/allocate/unregister); the client routes are a compatible subset of Hadoop's
//! ResourceManager REST API, with Hadoop's paths and JSON field names. Every refusal is a 4xx
//! with `{"error": "...", "detail": ...}` saying what to fix.
//!
//! Every route but `cluster/info`, `yard/health` and the OpenAPI document needs a bearer token
//! ([`Caller`]), and acts only on what its principal owns: a user its applications and
//! datasets, a master its own application (and only while its attempt is the current one), a
//! node itself, an admin everything. A route that changes state answers only after the change
//! is committed to the store ([`Rm::commit`]); if it cannot be, the answer is 503.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use yard_wire::auth::{AuthError, BearerKey, DataGrant, Principal, bearer_of};
use yard_wire::limits::{self, FieldError};
use yard_wire::protocol::{AllocateRequest, Dataset, NodeHeartbeat, RegisterNode};
use yard_wire::telemetry::NodeTelemetry;

use crate::app::AppState;
use crate::aria;
use crate::cluster::{AppInfo, AppResult, Cluster, ClusterError, NewApp, NodeInfo, NodeState};
use crate::journal::{Journal, Pending};
use crate::policy::JobModel;

/// Milliseconds since the Unix epoch; the daemon passes the wall clock, tests a fake one.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Clone)]
pub struct Rm {
    pub cluster: Arc<Mutex<Cluster>>,
    pub clock: Clock,
    pub started_ms: i64,
    /// Checks callers' tokens (the cluster's, copied out so a check takes no lock).
    pub bearer: BearerKey,
    /// Where changes go before a reply acknowledges them; `None` keeps them in memory only
    /// (tests of the routes alone).
    pub journal: Option<Journal>,
    /// The job-profile store (`--profiles-db`): a registering master's job kind finds its
    /// profile there when the master sends none.
    pub profiles: Option<crate::profiles::Profiles>,
}

impl Rm {
    /// The routes over `cluster`, its state kept in memory only.
    pub fn in_memory(cluster: Cluster, clock: Clock, started_ms: i64) -> Rm {
        Rm {
            bearer: cluster.bearer_key().clone(),
            cluster: Arc::new(Mutex::new(cluster)),
            clock,
            started_ms,
            journal: None,
            profiles: None,
        }
    }
}

/// How long a dataset upload grant stays valid.
const UPLOAD_GRANT_MS: i64 = 3_600_000;

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

    fn forbidden(error: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, error, Value::Null)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (
            self.status,
            Json(json!({ "error": self.error, "detail": self.detail })),
        )
            .into_response();
        if unauthorized {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"yard\""),
            );
        }
        response
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, e.to_string(), Value::Null)
    }
}

impl From<FieldError> for ApiError {
    fn from(e: FieldError) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            e.to_string(),
            json!({ "field": e.field }),
        )
    }
}

/// Who calls: the principal of a valid bearer token. A route that takes a `Caller` refuses
/// (401) a request without one.
pub struct Caller(pub Principal);

impl FromRequestParts<Rm> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, rm: &Rm) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().map_err(|_| AuthError::NotBearer))
            .transpose()?;
        Ok(Caller(rm.bearer.verify(bearer_of(header)?)?))
    }
}

impl Caller {
    /// Users and admins (who own applications and datasets); not masters, not nodes.
    fn user(&self) -> Result<&str, ApiError> {
        self.0.user().ok_or_else(|| {
            ApiError::forbidden("only a user or an admin may do this; masters and nodes may not")
        })
    }

    /// The caller owns `app` (its user, or an admin).
    fn owner_of(&self, app: &AppInfo) -> Result<(), ApiError> {
        if self.0.owns(&app.user) {
            return Ok(());
        }
        Err(ApiError::forbidden(format!(
            "application {} belongs to {}; only its owner or an admin may do this",
            app.application_id, app.user
        )))
    }

    /// The caller may read `app`'s answer: its owner, an admin, or one of its masters.
    fn reader_of(&self, app: &AppInfo) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Master { app: id, .. } if *id == app.application_id => Ok(()),
            _ => self.owner_of(app),
        }
    }

    /// The caller is the current attempt of `id`'s master.
    fn master_of(&self, cluster: &Cluster, id: &str) -> Result<(), ApiError> {
        let Principal::Master { app, attempt } = &self.0 else {
            return Err(ApiError::forbidden(format!(
                "only application {id}'s master may do this (with the token the rm gave it as YARD_TOKEN)"
            )));
        };
        if app != id {
            return Err(ApiError::forbidden(format!(
                "this token is application {app}'s master's, not {id}'s"
            )));
        }
        match cluster.current_attempt(id) {
            None if cluster.app(id).is_none() => Err(ClusterError::UnknownApp(id.into()).into()),
            None => Err(ClusterError::NotRunning(id.into()).into()),
            Some(current) if current == *attempt => Ok(()),
            current => Err(ApiError::forbidden(format!(
                "attempt {attempt} of {id} is over (the current attempt is {}); its calls are dropped",
                current.map_or("none: the application ended".to_owned(), |c| c.to_string())
            ))),
        }
    }

    /// The caller is a nodemanager that may act as `node`.
    fn node(&self, node: &str) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Node { node: None } => Ok(()),
            Principal::Node { node: Some(n) } if n == node => Ok(()),
            Principal::Node { node: Some(n) } => Err(ApiError::forbidden(format!(
                "this credential is node {n}'s, not {node}'s"
            ))),
            _ => Err(ApiError::forbidden(
                "only a nodemanager, with its node credential, may do this",
            )),
        }
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
            ClusterError::NotIssued(_) => StatusCode::BAD_REQUEST,
            ClusterError::IssuedToOther { .. } => StatusCode::FORBIDDEN,
            ClusterError::TooManyIssued(_) => StatusCode::TOO_MANY_REQUESTS,
            ClusterError::RecoveryFull { .. } => StatusCode::INSUFFICIENT_STORAGE,
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
    /// Reads or changes the cluster; what changed stays marked and is written with the next
    /// commit or tick (heartbeats, allocate: the rm recovers those from the nodes and masters
    /// after a crash, and a write per allocate call would cost more than the call).
    fn with<T>(&self, f: impl FnOnce(&mut Cluster, i64) -> T) -> T {
        let now = (self.clock)();
        let mut cluster = self
            .cluster
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut cluster, now)
    }

    /// Changes the cluster and waits until the change is committed: a reply built after this
    /// is a promise the change survives a crash. 503 if it could not be written.
    async fn commit<T, E>(
        &self,
        f: impl FnOnce(&mut Cluster, i64) -> Result<T, E>,
    ) -> Result<T, ApiError>
    where
        ApiError: From<E>,
    {
        let (result, pending) = self.with(|cluster, now| {
            let result = f(cluster, now);
            // Queued under the lock: the store sees changes in the order they were made.
            let pending = match &self.journal {
                Some(j) => j.queue(cluster.take_changes(), true),
                None => Pending::none(),
            };
            (result, pending)
        });
        let value = result?;
        pending.committed().await.map_err(|reason| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the rm could not save this change, so it is not acknowledged; try again",
                json!(reason),
            )
        })?;
        Ok(value)
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
        (
            "/ws/v1/yard/apps/{id}/recovery",
            &["get", "put"],
            get(recovery).put(put_recovery),
        ),
        ("/ws/v1/yard/datasets", &["get"], get(datasets)),
        (
            "/ws/v1/yard/datasets/{name}/upload-grant",
            &["post"],
            post(upload_grant),
        ),
        ("/ws/v1/yard/auth/whoami", &["get"], get(whoami)),
        ("/ws/v1/yard/auth/tokens", &["post"], post(issue_token)),
        ("/ws/v1/yard/health", &["get"], get(health)),
        (
            "/ws/v1/yard/datasets/{name}",
            &["get", "put"],
            get(dataset).put(put_dataset),
        ),
        ("/ws/v1/yard/openapi.json", &["get"], get(openapi)),
        ("/ws/v1/cluster/info", &["get"], get(cluster_info)),
        ("/ws/v1/cluster/metrics", &["get"], get(metrics)),
        ("/ws/v1/cluster/scheduler", &["get"], get(scheduler)),
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
        // A bug that panics in a handler is a 500 for that request, not a dropped connection.
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .with_state(rm)
}

async fn register_node(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<RegisterNode>, JsonRejection>,
) -> Reply {
    let Json(r) = body?;
    caller.node(&r.node_id)?;
    limits::check_name("nodeId", &r.node_id)?;
    limits::check_name("rack", &r.rack)?;
    limits::check_resource(
        "capability",
        r.capability,
        limits::NODE_MAX_MEMORY_MB,
        limits::NODE_MAX_VCORES,
    )?;
    limits::check_len("containers", r.containers.len())?;
    let registered = rm.with(|c, now| {
        let node = r.node_id.clone();
        c.register_node(now, r);
        c.registration(&node)
    });
    ok(json!(registered))
}

async fn heartbeat(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<NodeHeartbeat>, JsonRejection>,
) -> Reply {
    let Json(hb) = body?;
    caller.node(&hb.node_id)?;
    limits::check_len("running", hb.running.len())?;
    limits::check_len("completed", hb.completed.len())?;
    hb.telemetry.check("telemetry")?;
    ok(json!(rm.with(|c, now| c.heartbeat(now, hb))))
}

/// Hadoop's RegisterApplicationMasterRequest, the part yard uses: where the master serves its
/// own status (clients follow it for progress). An empty body is a master without one.
/// yard's masters add what the deadline policies size quotas by: their task counts, and a
/// profile or the job kind to find one in the profile store.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MasterRegistration {
    #[serde(default)]
    tracking_url: Option<String>,
    #[serde(default)]
    maps: Option<u32>,
    #[serde(default)]
    reduces: Option<u32>,
    #[serde(default)]
    job_kind: Option<String>,
    #[serde(default)]
    profile: Option<aria::Profile>,
}

/// The most maps or reduces a registering master may say its job has.
const MAX_TASKS: u32 = 10_000_000;

impl MasterRegistration {
    /// The job model it registers, if any; a 400 naming the field for what is out of range.
    fn model(&self) -> Result<Option<JobModel>, ApiError> {
        let said = self.profile.is_some() || self.job_kind.is_some();
        let (maps, reduces) = match (self.maps, self.reduces) {
            (Some(m), Some(r)) => (m, r),
            (None, None) if !said => return Ok(None),
            _ => {
                return Err(FieldError {
                    field: if self.maps.is_none() {
                        "maps"
                    } else {
                        "reduces"
                    }
                    .into(),
                    problem: "a job model needs both maps and reduces (its task counts)".into(),
                }
                .into());
            }
        };
        for (field, n) in [("maps", maps), ("reduces", reduces)] {
            if n > MAX_TASKS {
                return Err(FieldError {
                    field: field.into(),
                    problem: format!("{n} is over {MAX_TASKS}"),
                }
                .into());
            }
        }
        if let Some(kind) = &self.job_kind
            && (kind.is_empty() || kind.chars().count() > 200 || kind.chars().any(char::is_control))
        {
            return Err(FieldError {
                field: "jobKind".into(),
                problem: "1 to 200 printable characters".into(),
            }
            .into());
        }
        if let Some(p) = &self.profile
            && !p.valid()
        {
            return Err(FieldError {
                field: "profile".into(),
                problem: format!(
                    "every duration is a number of seconds from 0 to {}",
                    aria::MAX_SECONDS
                ),
            }
            .into());
        }
        Ok(Some(JobModel {
            maps,
            reduces,
            profile: self.profile,
        }))
    }
}

async fn master_register(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Reply {
    let registration: MasterRegistration = if body.iter().all(u8::is_ascii_whitespace) {
        MasterRegistration::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "the registration is not {\"trackingUrl\": \"http://…\", \"maps\": N, \"reduces\": N, \"jobKind\": \"…\", \"profile\": {…}} (every field optional; or empty)",
                json!(e.to_string()),
            )
        })?
    };
    let mut model = registration.model()?;
    if let Some(url) = &registration.tracking_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "trackingUrl must be an http(s) URL",
            json!(url),
        ));
    }
    // A profile from the store, for the job kind, when the master sent none (looked up only
    // for the application's own master).
    if let (Some(m), Some(kind), Some(store)) =
        (model.as_mut(), &registration.job_kind, &rm.profiles)
        && m.profile.is_none()
    {
        rm.with(|c, _| caller.master_of(c, &id))?;
        m.profile = store.lookup(kind, m.maps, m.reduces).await;
    }
    let quota = rm
        .commit(|c, _| {
            caller.master_of(c, &id)?;
            c.master_registered(&id, registration.tracking_url)?;
            if let Some(m) = model {
                c.set_model(&id, m)?;
            }
            Ok::<_, ApiError>(c.app(&id).and_then(|a| a.quota))
        })
        .await?;
    ok(json!({ "quota": quota }))
}

async fn allocate(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<AllocateRequest>, JsonRejection>,
) -> Reply {
    let Json(req) = body?;
    if let Some(t) = req.tasks
        && t.maps_done > t.maps_to_run
    {
        return Err(FieldError {
            field: "tasks.mapsDone".into(),
            problem: format!(
                "{} is over tasks.mapsToRun ({})",
                t.maps_done, t.maps_to_run
            ),
        }
        .into());
    }
    limits::check_len("asks", req.asks.len())?;
    limits::check_len("releases", req.releases.len())?;
    for (i, ask) in req.asks.iter().enumerate() {
        limits::check_resource(
            &format!("asks[{i}].capability"),
            ask.capability,
            limits::CONTAINER_MAX_MEMORY_MB,
            limits::CONTAINER_MAX_VCORES,
        )?;
        if ask.num_containers > limits::MAX_CONTAINERS_PER_ASK {
            return Err(FieldError {
                field: format!("asks[{i}].numContainers"),
                problem: format!(
                    "{} is over {}",
                    ask.num_containers,
                    limits::MAX_CONTAINERS_PER_ASK
                ),
            }
            .into());
        }
    }
    if !(0.0..=1.0).contains(&req.progress) {
        return Err(FieldError {
            field: "progress".into(),
            problem: format!("{} is outside 0..=1", req.progress),
        }
        .into());
    }
    if req.application_id != id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "applicationId in the body differs from the one in the path",
            json!({ "path": id, "body": req.application_id }),
        ));
    }
    ok(json!(rm.with(|c, now| {
        caller.master_of(c, &id)?;
        c.allocate(now, req).map_err(ApiError::from)
    })?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Unregister {
    succeeded: bool,
}

async fn master_unregister(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<Unregister>, JsonRejection>,
) -> Reply {
    let Json(u) = body?;
    rm.commit(|c, _| {
        caller.master_of(c, &id)?;
        c.master_finished(&id, u.succeeded).map_err(ApiError::from)
    })
    .await?;
    ok(json!({}))
}

/// yard's view of an application: what Hadoop's lacks (deadline, processed fraction, answer).
fn yard_app_json(a: &AppInfo) -> Value {
    json!({ "app": {
        "id": a.application_id,
        "state": state_name(a.lifecycle.state),
        "finalStatus": a.lifecycle.final_status,
        "deadlineMs": a.deadline_ms,
        "quota": a.quota,
        "trackingUrl": a.tracking_url,
        "jobType": a.job_type,
        "processedFraction": a.result.as_ref().map(|r| r.processed_fraction),
        "answer": a.result.as_ref().map(|r| &r.answer),
    }})
}

/// The application `id`, if the caller may read its answer.
fn readable<'a>(c: &'a Cluster, caller: &Caller, id: &str) -> Result<&'a AppInfo, ApiError> {
    let app = c
        .app(id)
        .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
    caller.reader_of(app)?;
    Ok(app)
}

/// The application `id`, if the caller owns it.
fn owned<'a>(c: &'a Cluster, caller: &Caller, id: &str) -> Result<&'a AppInfo, ApiError> {
    let app = c
        .app(id)
        .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
    caller.owner_of(app)?;
    Ok(app)
}

async fn yard_app(State(rm): State<Rm>, Path(id): Path<String>, caller: Caller) -> Reply {
    ok(rm.with(|c, _| readable(c, &caller, &id).map(yard_app_json))?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Deadline {
    deadline_ms: i64,
}

async fn set_deadline(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<Deadline>, JsonRejection>,
) -> Reply {
    let Json(d) = body?;
    if !(1..=limits::MAX_TIME_MS).contains(&d.deadline_ms) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "deadlineMs is a time: milliseconds since the Unix epoch",
            json!({ "deadlineMs": d.deadline_ms }),
        ));
    }
    ok(rm
        .commit(|c, _| {
            owned(c, &caller, &id)?;
            c.set_deadline(&id, d.deadline_ms)?;
            Ok::<_, ApiError>(c.app(&id).map(yard_app_json).unwrap_or_default())
        })
        .await?)
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
    caller: Caller,
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
    ok(rm
        .commit(|c, _| {
            caller.master_of(c, &id)?;
            c.report_result(&id, result)?;
            Ok::<_, ApiError>(c.app(&id).map(yard_app_json).unwrap_or_default())
        })
        .await?)
}

/// The longest recovery value, as JSON text.
const MAX_RECOVERY_VALUE_BYTES: usize = 8192;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecoveryBody {
    entries: BTreeMap<String, Value>,
}

/// A master keeps entries for its application's next attempt (Hadoop's MapReduce recovery:
/// yard's masters keep one per finished map). Answered once committed.
async fn put_recovery(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<RecoveryBody>, JsonRejection>,
) -> Reply {
    let Json(r) = body?;
    limits::check_len("entries", r.entries.len())?;
    let mut entries = BTreeMap::new();
    for (key, value) in r.entries {
        limits::check_name("entries (a key)", &key)?;
        let text = value.to_string();
        if !value.is_object() || text.len() > MAX_RECOVERY_VALUE_BYTES {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "entries.{key}: each value is a JSON object of at most {MAX_RECOVERY_VALUE_BYTES} bytes"
                ),
                json!({ "field": format!("entries.{key}"), "bytes": text.len() }),
            ));
        }
        entries.insert(key, text);
    }
    let kept = rm
        .commit(|c, _| {
            caller.master_of(c, &id)?;
            Ok::<_, ApiError>(c.put_recovery(&id, entries)?)
        })
        .await?;
    ok(json!({ "entries": kept }))
}

/// What the application's masters kept for a next attempt; read by the current attempt.
async fn recovery(State(rm): State<Rm>, Path(id): Path<String>, caller: Caller) -> Reply {
    rm.with(|c, _| {
        caller.master_of(c, &id)?;
        let entries: serde_json::Map<String, Value> = c
            .recovery(&id)
            .map(|(k, v)| (k.clone(), serde_json::from_str(v).unwrap_or(Value::Null)))
            .collect();
        ok(json!({
            "attempt": c.current_attempt(&id),
            "entries": entries,
        }))
    })
}

async fn datasets(State(rm): State<Rm>, _caller: Caller) -> Reply {
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

async fn dataset(State(rm): State<Rm>, Path(name): Path<String>, _caller: Caller) -> Reply {
    ok(rm.with(|c, _| c.dataset(&name).map(|d| json!(d)))?)
}

/// Whether `caller` may write dataset `name`: anyone who is a user when it is new, else its
/// owner or an admin.
fn may_write_dataset(c: &Cluster, caller: &Caller, name: &str) -> Result<String, ApiError> {
    let user = caller.user()?.to_owned();
    match c.dataset_owner(name) {
        Some(owner) if !caller.0.owns(owner) => Err(ApiError::forbidden(format!(
            "dataset {name} belongs to {}; only its owner or an admin may replace it",
            if owner.is_empty() {
                "nobody (it predates owners)"
            } else {
                owner
            }
        ))),
        _ => Ok(user),
    }
}

async fn put_dataset(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    caller: Caller,
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
    ok(rm
        .commit(|c, now| {
            let owner = may_write_dataset(c, &caller, &name)?;
            c.put_dataset(now, d, &owner)?;
            Ok::<_, ApiError>(c.dataset(&name).map(|d| json!(d))?)
        })
        .await?)
}

/// A grant to upload dataset `name`'s blocks to the nodemanagers, for its owner (or whoever
/// puts it first).
async fn upload_grant(State(rm): State<Rm>, Path(name): Path<String>, caller: Caller) -> Reply {
    crate::cluster::check_dataset_name(&name)?;
    let (token, expires_ms) = rm.with(|c, now| {
        may_write_dataset(c, &caller, &name)?;
        let expires_ms = now + UPLOAD_GRANT_MS;
        let grant = DataGrant::Upload {
            dataset: name.clone(),
            expires_ms,
        };
        Ok::<_, ApiError>((c.data_token(&grant), expires_ms))
    })?;
    ok(json!({ "token": token, "expiresMs": expires_ms }))
}

/// The caller's principal, as the rm reads its token.
async fn whoami(caller: Caller) -> Reply {
    ok(json!({ "principal": caller.0 }))
}

/// What an admin may issue: a user's token, or one node's credential.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TokenRequest {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    node: Option<String>,
}

async fn issue_token(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<TokenRequest>, JsonRejection>,
) -> Reply {
    let Json(t) = body?;
    if !caller.0.is_admin() {
        return Err(ApiError::forbidden(
            "only an admin may issue tokens; ask the cluster's operator",
        ));
    }
    let principal = match (t.user, t.node) {
        (Some(user), None) => {
            limits::check_name("user", &user)?;
            Principal::User { user }
        }
        (None, Some(node)) => {
            limits::check_name("node", &node)?;
            Principal::Node { node: Some(node) }
        }
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "say whose token: {\"user\": NAME} or {\"node\": HOST:PORT}",
                Value::Null,
            ));
        }
    };
    ok(json!({ "token": rm.bearer.issue(&principal), "principal": principal }))
}

/// Whether the rm can write its state. 503 while it cannot (a full or read-only disk).
async fn health(State(rm): State<Rm>) -> Reply {
    match rm.journal.as_ref().and_then(Journal::failing) {
        None => ok(json!({ "health": { "store": "ok" } })),
        Some(reason) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the rm cannot write its state store: changes are refused until it can",
            json!(reason),
        )),
    }
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

async fn metrics(State(rm): State<Rm>, _caller: Caller) -> Reply {
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

/// YARN's `scheduler.schedulerInfo`: which policy runs (`type`, and yard's `policy` name), the
/// cluster's capacity as YARN's FIFO scheduler reports it, MinEDF-WC's spare counts, and every
/// unfinished application's deadline and quota.
async fn scheduler(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let (report, metrics, apps) = rm.with(|c, _| {
        let apps: Vec<Value> = c
            .apps()
            .filter(|a| !a.lifecycle.state.is_final())
            .map(|a| {
                json!({
                    "id": a.application_id,
                    "state": state_name(a.lifecycle.state),
                    "deadlineMs": a.deadline_ms,
                    "runningContainers": a.containers.len(),
                    "maps": a.model.map(|m| m.maps),
                    "reduces": a.model.map(|m| m.reduces),
                    "profiled": a.model.is_some_and(|m| m.profile.is_some()),
                    "quota": a.quota,
                })
            })
            .collect();
        (c.scheduler_report(), c.metrics(), apps)
    });
    let used = |total: u64, used: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * used as f64 / total as f64
        }
    };
    ok(json!({ "scheduler": { "schedulerInfo": {
        "type": report.policy.yarn_type(),
        "policy": report.policy.name(),
        "qstate": "RUNNING",
        "capacity": 1.0,
        "usedCapacity": used(metrics.total_mb, metrics.allocated_mb),
        "numNodes": metrics.active_nodes,
        "totalNodeCapacity": metrics.total_mb,
        "usedNodeCapacity": metrics.allocated_mb,
        "availNodeCapacity": metrics.total_mb.saturating_sub(metrics.allocated_mb),
        "numContainers": metrics.containers_allocated,
        "masterShare": report.master_share,
        "mastersUsed": { "memory": report.masters_used.memory_mb, "vCores": report.masters_used.vcores },
        "spareAllocations": report.spare.spare_allocations,
        "spareKills": report.spare.spare_kills,
        "spareMapAllocations": report.spare.spare_map_allocations,
        "spareMapKills": report.spare.spare_map_kills,
        "overloadClassifier": report.overload,
        "apps": { "app": apps },
    }}}))
}

async fn app_attempts(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
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

/// One node as both nodes routes show it: Hadoop's fields, YARN's `resourceUtilization`, and
/// yard's own view of its load (`yardLoad`). A further per-node object is one more key here.
fn node_json(cluster: &Cluster, n: &NodeInfo) -> Value {
    let mut node = json!({
        "id": n.node_id,
        "rack": n.rack,
        "state": match n.state { NodeState::Running => "RUNNING", NodeState::Lost => "LOST" },
        "nodeHostName": n.node_id.split(':').next().unwrap_or(&n.node_id),
        "nodeHTTPAddress": n.node_id,
        "lastHealthUpdate": n.last_heartbeat_ms,
        "numContainers": n.containers.len(),
        "totalResource": { "memory": n.capability.memory_mb, "vCores": n.capability.vcores },
    });
    node["resourceUtilization"] = resource_utilization(&n.telemetry);
    node["yardLoad"] = yard_load(n);
    node["overload"] = match cluster.node_overload(&n.node_id) {
        Some(o) => {
            let mut v = serde_json::to_value(o).unwrap_or_default();
            v["classifier"] = json!("on");
            v
        }
        None => json!({ "classifier": "off", "verdict": "unknown" }),
    };
    node
}

/// `GET /ws/v1/cluster/nodes/{id}`: [`node_json`] and the node's recent samples, oldest first.
fn node_detail_json(cluster: &Cluster, n: &NodeInfo) -> Value {
    let mut node = node_json(cluster, n);
    node["yardLoadHistory"] = cluster
        .telemetry_history(&n.node_id)
        .map(|(at, t)| {
            json!({
                "time": at,
                "load1m": t.load_1m,
                "cpuPercent": t.cpu_percent,
                "memoryUsedFraction": memory_used_fraction(t),
                "diskReadBytesPerS": t.disk_read_bytes_per_s,
                "diskWriteBytesPerS": t.disk_write_bytes_per_s,
                "ownCpuPercent": t.own.cpu_percent,
            })
        })
        .collect();
    node
}

fn memory_used_fraction(t: &NodeTelemetry) -> f64 {
    if t.memory_total_bytes == 0 {
        return 0.0;
    }
    t.memory_used_bytes as f64 / t.memory_total_bytes as f64
}

/// YARN's `resourceUtilization` (Hadoop's `ResourceUtilizationInfo`, field for field): memory
/// in MB (virtual: physical and swap in use); CPU as YARN's `ResourceUtilization` counts it, in
/// cores kept busy (1.5: one and a half cores), the node's over its logical CPUs and the
/// containers' summed over their process trees. All 0 until the node's first sample, as YARN
/// reports a node without one.
fn resource_utilization(t: &NodeTelemetry) -> Value {
    let mb = |bytes: u64| bytes >> 20;
    let containers = |f: fn(&yard_wire::telemetry::ContainerUsage) -> u64| {
        t.containers.iter().map(f).fold(0u64, u64::saturating_add)
    };
    json!({
        "nodePhysicalMemoryMB": mb(t.memory_used_bytes),
        "nodeVirtualMemoryMB": mb(t.memory_used_bytes.saturating_add(t.swap_used_bytes)),
        "nodeCPUUsage": t.cpu_percent / 100.0 * f64::from(t.cores),
        "aggregatedContainersPhysicalMemoryMB": mb(containers(|c| c.rss_bytes)),
        "aggregatedContainersVirtualMemoryMB": mb(containers(|c| c.virtual_bytes)),
        "containersCPUUsage": t.containers.iter().map(|c| c.cpu_percent).sum::<f64>() / 100.0,
    })
}

/// yard's view of a node's load: its last sample as the nodemanager sent it (the heartbeat's
/// `telemetry`, field for field) with when the rm received it (`sampledAt`, ms since the
/// epoch), the 1-minute load per logical CPU and the memory in use as a fraction. `null`
/// until the node's first sample.
fn yard_load(n: &NodeInfo) -> Value {
    let Some(at) = n.telemetry_ms else {
        return Value::Null;
    };
    let t = &n.telemetry;
    let mut load = json!(t);
    load["sampledAt"] = json!(at);
    load["loadPerCore"] = if t.cores > 0 {
        json!(t.load_1m / f64::from(t.cores))
    } else {
        Value::Null
    };
    load["memoryUsedFraction"] = json!(memory_used_fraction(t));
    load
}

async fn nodes(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let list: Vec<Value> = rm.with(|c, _| c.nodes().map(|n| node_json(c, n)).collect());
    ok(json!({ "nodes": { "node": list } }))
}

async fn node(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    let found = rm.with(|c, _| c.node(&id).map(|n| node_detail_json(c, n)));
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

/// Hadoop's app object. Its diagnostics carry, while the app waits for that reason, why the
/// overload classifier placed none of its tasks.
fn app_json(c: &Cluster, a: &AppInfo) -> Value {
    let diagnostics = match c.refusal(&a.application_id) {
        Some(why) if !a.lifecycle.state.is_final() && a.lifecycle.diagnostics.is_empty() => why,
        Some(why) if !a.lifecycle.state.is_final() => {
            format!("{}; {why}", a.lifecycle.diagnostics)
        }
        _ => a.lifecycle.diagnostics.clone(),
    };
    json!({
        "id": a.application_id,
        "name": a.name,
        "user": a.user,
        "queue": a.queue,
        "state": state_name(a.lifecycle.state),
        "finalStatus": a.lifecycle.final_status,
        "progress": a.progress * 100.0,
        "diagnostics": diagnostics,
        "startedTime": a.submitted_ms,
        "runningContainers": a.containers.len(),
        "applicationType": "YARD",
        "applicationTags": a.tags.join(","),
        "deadlineMs": a.deadline_ms,
        "quota": a.quota,
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

async fn apps(
    State(rm): State<Rm>,
    _caller: Caller,
    filter: Result<Query<AppsFilter>, QueryRejection>,
) -> Reply {
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
            .map(|a| app_json(c, a))
            .collect()
    });
    ok(json!({ "apps": { "app": list } }))
}

async fn app(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    match rm.with(|c, _| c.app(&id).map(|a| app_json(c, a))) {
        Some(a) => ok(json!({ "app": a })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

async fn new_application(State(rm): State<Rm>, caller: Caller) -> Reply {
    let user = caller.user()?.to_owned();
    let id = rm.with(|c, now| c.new_application(now, &user))?;
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
    /// yard's: when the answer is due, ms since the epoch (a number). Read as a JSON value so
    /// a wrong one is a 400 naming the field, not a shape error.
    #[serde(default)]
    deadline_ms: Option<Value>,
    /// Hadoop's `{"tag": ["a", "b"]}` (also `{"tag": "a"}` or a plain list). A tag
    /// `deadline=<epoch ms>` is the deadline, for YARN clients.
    #[serde(default)]
    application_tags: Option<Value>,
}

/// The most application tags, and the longest (YARN's defaults).
const MAX_TAGS: usize = 10;
const MAX_TAG_LEN: usize = 100;

/// Hadoop's application tags in any of their JSON shapes; 400 naming `application-tags` for
/// anything else.
fn tags_of(v: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let bad = |problem: String| -> ApiError {
        FieldError {
            field: "application-tags".into(),
            problem,
        }
        .into()
    };
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(o)) => match o.get("tag") {
            _ if o.keys().any(|k| k != "tag") => {
                return Err(bad("write {\"tag\": [\"a\", \"b\"]}".into()));
            }
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(t) => t,
        },
        Some(other) => other,
    };
    let tags: Vec<&Value> = match list {
        Value::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    if tags.len() > MAX_TAGS {
        return Err(bad(format!("{} tags, over {MAX_TAGS}", tags.len())));
    }
    tags.into_iter()
        .map(|t| {
            let t = t
                .as_str()
                .ok_or_else(|| bad(format!("{t} is not a string")))?
                .trim();
            if t.is_empty()
                || t.len() > MAX_TAG_LEN
                || !t.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
            {
                return Err(bad(format!(
                    "{t:?}: a tag is 1 to {MAX_TAG_LEN} printable ASCII characters"
                )));
            }
            Ok(t.to_owned())
        })
        .collect()
}

/// A deadline from outside: ms since the epoch, in range and after `now_ms`.
fn check_deadline(field: &str, ms: i64, now_ms: i64) -> Result<i64, ApiError> {
    let bad = |problem: String| -> ApiError {
        FieldError {
            field: field.into(),
            problem,
        }
        .into()
    };
    if !(1..=limits::MAX_TIME_MS).contains(&ms) {
        return Err(bad(format!(
            "{ms} is outside 1..={}: a deadline is milliseconds since the Unix epoch",
            limits::MAX_TIME_MS
        )));
    }
    if ms <= now_ms {
        return Err(bad(format!(
            "{ms} is in the past (the rm's clock reads {now_ms}): a deadline is milliseconds since the Unix epoch, in the future"
        )));
    }
    Ok(ms)
}

/// The submission's deadline: `deadline-ms`, else a `deadline=<epoch ms>` tag; both must agree.
fn submitted_deadline(
    body: Option<&Value>,
    tags: &[String],
    now_ms: i64,
) -> Result<Option<i64>, ApiError> {
    let from_body = match body {
        None | Some(Value::Null) => None,
        Some(v) => {
            let ms = v.as_i64().ok_or_else(|| -> ApiError {
                FieldError {
                    field: "deadline-ms".into(),
                    problem: format!(
                        "{v} is not a whole number of milliseconds since the Unix epoch"
                    ),
                }
                .into()
            })?;
            Some(check_deadline("deadline-ms", ms, now_ms)?)
        }
    };
    let mut from_tags = None;
    for t in tags {
        let Some((key, value)) = t.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("deadline") {
            continue;
        }
        let ms: i64 = value.trim().parse().map_err(|_| -> ApiError {
            FieldError {
                field: "application-tags".into(),
                problem: format!("{t:?}: deadline=<ms since the Unix epoch> takes a whole number"),
            }
            .into()
        })?;
        let ms = check_deadline("application-tags", ms, now_ms)?;
        if from_tags.is_some_and(|d| d != ms) {
            return Err(FieldError {
                field: "application-tags".into(),
                problem: "two deadline= tags that differ".into(),
            }
            .into());
        }
        from_tags = Some(ms);
    }
    match (from_body, from_tags) {
        (Some(b), Some(t)) if b != t => Err(FieldError {
            field: "deadline-ms".into(),
            problem: format!("{b} differs from the tag deadline={t}; give one deadline"),
        }
        .into()),
        (b, t) => Ok(b.or(t)),
    }
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

async fn submit(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<Submission>, JsonRejection>,
) -> Reply {
    let Json(s) = body?;
    let caller_user = caller.user()?.to_owned();
    // A user submits as itself; only an admin may submit for another user.
    let user = match s.user {
        Some(u) if u != caller_user && !caller.0.is_admin() => {
            return Err(ApiError::forbidden(format!(
                "you are {caller_user}; only an admin may submit as {u}"
            )));
        }
        Some(u) => u,
        None => caller_user,
    };
    limits::check_name("user", &user)?;
    limits::check_name("queue", &s.queue)?;
    if s.application_name.len() > 1024 {
        return Err(FieldError {
            field: "application-name".into(),
            problem: format!("{} characters, over 1024", s.application_name.len()),
        }
        .into());
    }
    let tags = tags_of(s.application_tags.as_ref())?;
    let deadline_ms = submitted_deadline(s.deadline_ms.as_ref(), &tags, (rm.clock)())?;
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
        deadline_ms,
        tags,
    };
    rm.commit(|c, now| {
        // Submitting again what is already accepted (a retry after a 503 or a lost reply)
        // succeeds once it is committed.
        if let Some(app) = c.app(&new.id)
            && app.user == new.user
            && app.name == new.name
        {
            return Ok(());
        }
        c.submit_issued(now, new, &caller.0)
    })
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "application-id": s.application_id })),
    )
        .into_response())
}

async fn app_state(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
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
    caller: Caller,
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
    rm.commit(|c, _| {
        let app = owned(c, &caller, &id)?;
        // Killing a killed application again succeeds once that is saved: a client retrying
        // after a 503 or a lost reply gets its answer.
        if app.lifecycle.state == AppState::Killed {
            return Ok(());
        }
        c.kill(&id).map_err(ApiError::from)
    })
    .await?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "state": "KILLED" }))).into_response())
}
