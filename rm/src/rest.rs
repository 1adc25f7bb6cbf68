//! The rm's HTTP surface: a thin adapter from requests to [`Cluster`] calls. yard's own
//! protocols live under `/ws/v1/yard/` (node registration and heartbeats, a master's
//! register/allocate/unregister); the client routes are a compatible subset of Hadoop's
//! ResourceManager REST API, with Hadoop's paths, wrappers, JSON field names and units. Every
//! refusal is a 4xx saying what to fix: on Hadoop's routes (`/ws/v1/cluster…`) in YARN's
//! `{"RemoteException": {"exception", "message", "javaClassName"}}` shape (plus yard's
//! `detail`), on yard's own as `{"error": "...", "detail": ...}`. The rm answers in JSON only:
//! a request that accepts no JSON gets a 406 (YARN would answer XML).
//!
//! Every route but `cluster/info`, `yard/health`, the OpenAPI document, Prometheus' `/metrics`,
//! and the web UI's assets (`/ui`, which hold no data) needs a bearer token ([`Caller`]), and
//! acts only on what its principal owns: a user its applications and datasets, a master its own
//! application (and only while its attempt is the current one), a node itself, an admin
//! everything. The scrape token ([`Scrape`]) reads the scrape targets and the finished
//! masters' final figures, and nothing else. A route that changes state answers only after the change
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
use yard_wire::limits::{self, FieldError, echo};
use yard_wire::protocol::{AllocateRequest, Dataset, NodeHeartbeat, RegisterNode, Resource};
use yard_wire::telemetry::NodeTelemetry;

use crate::app::AppState;
use crate::aria;
use crate::cluster::{
    AppInfo, AppResult, Cluster, ClusterError, NewApp, NodeInfo, NodeState, Touch,
};
use crate::journal::{Journal, Pending};
use crate::policy::JobModel;

pub mod mapreduce;

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
    /// The rm's Prometheus metrics (`GET /metrics`): its own registry.
    pub metrics: Arc<crate::metrics::RmMetrics>,
    /// The shared scans running (`mapreduce::ScanHosts`).
    pub scans: mapreduce::ScanHosts,
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
            metrics: Arc::new(crate::metrics::RmMetrics::started_at(started_ms)),
            scans: Default::default(),
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

/// A refusal's parts, kept on its response so that [`shapes`] can rewrite it in YARN's
/// `RemoteException` shape on Hadoop's routes.
#[derive(Clone)]
struct Refusal {
    error: String,
    detail: Value,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let refusal = Refusal {
            error: self.error.clone(),
            detail: self.detail.clone(),
        };
        let mut response = (
            self.status,
            Json(json!({ "error": self.error, "detail": self.detail })),
        )
            .into_response();
        response.extensions_mut().insert(refusal);
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
        let principal = principal_of(parts, rm)?;
        // A scrape token reads metrics ([`Scrape`]'s routes) and nothing else.
        if principal == Principal::Scraper {
            return Err(ApiError::forbidden(
                "a scrape token reads only the scrape targets and metrics",
            ));
        }
        Ok(Caller(principal))
    }
}

/// The principal of the request's bearer token (401 without a valid one).
fn principal_of(parts: &Parts, rm: &Rm) -> Result<Principal, ApiError> {
    let header = parts
        .headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().map_err(|_| AuthError::NotBearer))
        .transpose()?;
    Ok(rm.bearer.verify(bearer_of(header)?)?)
}

/// Prometheus, or an admin: the caller of the scrape targets and the final figures the rm
/// keeps for finished masters (`Principal::Scraper`, `yard auth token --scrape`). 401 without
/// a valid token, 403 with anyone else's.
pub struct Scrape;

impl FromRequestParts<Rm> for Scrape {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, rm: &Rm) -> Result<Self, Self::Rejection> {
        match principal_of(parts, rm)? {
            Principal::Scraper | Principal::Admin { .. } => Ok(Scrape),
            _ => Err(ApiError::forbidden(
                "only the scrape token (`yard auth token --scrape`) or an admin reads the scrape targets and the masters' metrics",
            )),
        }
    }
}

impl Caller {
    /// Users and admins (who own applications and datasets); not masters, not nodes.
    fn user(&self) -> Result<&str, ApiError> {
        self.0.user().ok_or_else(|| {
            ApiError::forbidden("only a user or an admin may do this; masters and nodes may not")
        })
    }

    /// Whom a submission by the caller runs as: itself, or (an admin's only) `asked`.
    fn submitter(&self, asked: Option<&str>) -> Result<String, ApiError> {
        let me = self.user()?;
        let user = match asked {
            Some(u) if u != me && !self.0.is_admin() => {
                return Err(ApiError::forbidden(format!(
                    "you are {me}; only an admin may submit as {}",
                    echo(u)
                )));
            }
            Some(u) => u,
            None => me,
        };
        limits::check_name("user", user)?;
        Ok(user.to_owned())
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
                "only application {}'s master may do this (with the token the rm gave it as YARD_TOKEN)",
                echo(id)
            )));
        };
        if app != id {
            return Err(ApiError::forbidden(format!(
                "this token is application {app}'s master's, not {}'s",
                echo(id)
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

    /// The caller is a nodemanager (any node): checked before a body naming the node is read.
    fn any_node(&self) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Node { .. } => Ok(()),
            _ => Err(ApiError::forbidden(
                "only a nodemanager, with its node credential, may do this",
            )),
        }
    }

    /// The caller is a nodemanager that may act as `node`.
    fn node(&self, node: &str) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Node { node: None } => Ok(()),
            Principal::Node { node: Some(n) } if n == node => Ok(()),
            Principal::Node { node: Some(n) } => Err(ApiError::forbidden(format!(
                "this credential is node {n}'s, not {}'s",
                echo(node)
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
            json!(limits::echo_message(&r.body_text())),
        )
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "the query string is not what this route takes",
            json!(limits::echo_message(&r.body_text())),
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
            ClusterError::BadAsk { .. } | ClusterError::BadProgress(_) => StatusCode::BAD_REQUEST,
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

    /// Changes `touch` and waits until the change is committed: a reply built after this is a
    /// promise the change survives a crash. 503, with the change put back, if it could not be
    /// written; 503 before anything changes while the store is failing ([`Rm::refuse_unsaved`]).
    async fn commit<T, E>(
        &self,
        touch: Touch,
        f: impl FnOnce(&mut Cluster, i64) -> Result<T, E>,
    ) -> Result<T, ApiError>
    where
        ApiError: From<E>,
    {
        let (result, pending) = self.with(|cluster, now| {
            let Some(journal) = &self.journal else {
                return (f(cluster, now).map_err(ApiError::from), Pending::none());
            };
            // Read under the cluster's lock, under which the writer reports a failure.
            if let Err(refused) = self.refuse_unsaved() {
                return (Err(refused), Pending::none());
            }
            let undo = cluster.begin_change(touch);
            let result = f(cluster, now).map_err(ApiError::from);
            let undo = cluster.end_change(undo);
            // Queued under the lock: the store sees changes in the order they were made.
            (result, journal.queue_change(cluster.take_changes(), undo))
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

    /// 503 while the store cannot be written: a change now would be refused after it was made.
    fn refuse_unsaved(&self) -> Result<(), ApiError> {
        match self.journal.as_ref().and_then(Journal::failing) {
            None => Ok(()),
            Some(reason) => Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the rm cannot write its state store, so it accepts no changes until it can (GET /ws/v1/yard/health says when); try again later",
                json!(reason),
            )),
        }
    }
}

/// The OpenAPI document of every route below (checked against [`routes`] by a test).
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Every route: its path, its methods, and its handlers. The router is built from this table,
/// and a test checks the OpenAPI document lists exactly these paths and methods.
pub fn routes() -> Vec<Route> {
    let mut routes: Vec<Route> = vec![
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
            "/ws/v1/yard/apps/{id}/metrics",
            &["get", "put"],
            get(final_figures).put(keep_final_figures),
        ),
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
        ("/ws/v1/yard/books", &["get"], get(books)),
        (
            "/ws/v1/yard/datasets/{name}",
            &["get", "put"],
            get(dataset).put(put_dataset),
        ),
        ("/ws/v1/yard/openapi.json", &["get"], get(openapi)),
        ("/metrics", &["get"], get(prometheus_metrics)),
        (
            "/ws/v1/yard/prometheus/targets",
            &["get"],
            get(prometheus_targets),
        ),
        ("/ws/v1/cluster/info", &["get"], get(cluster_info)),
        ("/ws/v1/cluster", &["get"], get(cluster_info)),
        ("/cluster", &["get"], get(cluster_info)),
        (
            "/ws/v1/cluster/appstatistics",
            &["get"],
            get(app_statistics),
        ),
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
        (
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}",
            &["get"],
            get(app_attempt),
        ),
        (
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers",
            &["get"],
            get(attempt_containers),
        ),
        (
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{container}",
            &["get"],
            get(attempt_container),
        ),
        (
            "/ws/v1/cluster/apps/{id}/queue",
            &["get", "put"],
            get(app_queue).put(set_app_queue),
        ),
        (
            "/ws/v1/cluster/apps/{id}/priority",
            &["get", "put"],
            get(app_priority).put(set_app_priority),
        ),
        (
            "/ws/v1/cluster/apps/{id}/timeouts",
            &["get"],
            get(app_timeouts),
        ),
        (
            "/ws/v1/cluster/apps/{id}/timeouts/{kind}",
            &["get"],
            get(app_timeout),
        ),
        (
            "/ws/v1/cluster/apps/{id}/timeout",
            &["put"],
            put(set_app_timeout),
        ),
    ];
    routes.extend(mapreduce::routes());
    routes
}

/// A route: its path, its methods (as the OpenAPI document names them), its handlers.
pub type Route = (&'static str, &'static [&'static str], MethodRouter<Rm>);

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
        .layer(axum::middleware::from_fn(shapes))
        // A bug that panics in a handler is a 500 for that request, not a dropped connection.
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        // The web UI's page and assets (no token, no data), outside the API's JSON-only layers.
        .merge(crate::ui::router())
        .with_state(rm)
}

/// Hadoop's routes: their refusals take YARN's `RemoteException` shape.
fn hadoop_route(path: &str) -> bool {
    path == "/cluster" || path == "/ws/v1/cluster" || path.starts_with("/ws/v1/cluster/")
}

/// Whether an `Accept` header takes JSON (no header takes anything).
fn accepts_json(accept: Option<&HeaderValue>) -> bool {
    let Some(accept) = accept.and_then(|a| a.to_str().ok()) else {
        return true;
    };
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f64>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused
            && (media == "application/json"
                || media == "application/*"
                || media == "*/*"
                || media == "*"
                || media.ends_with("+json"))
    })
}

/// YARN's error object for a refusal: Hadoop's exception class for the status, the message,
/// and yard's `detail` (what to fix, machine-readable) beside them.
pub fn remote_exception(status: StatusCode, error: &str, detail: &Value) -> Value {
    let (exception, class) = match status.as_u16() {
        400 | 413 | 415 | 422 => (
            "BadRequestException",
            "org.apache.hadoop.yarn.webapp.BadRequestException",
        ),
        401 => (
            "AuthenticationException",
            "org.apache.hadoop.security.authentication.client.AuthenticationException",
        ),
        403 => (
            "ForbiddenException",
            "org.apache.hadoop.yarn.webapp.ForbiddenException",
        ),
        404 => (
            "NotFoundException",
            "org.apache.hadoop.yarn.webapp.NotFoundException",
        ),
        _ => (
            "WebApplicationException",
            "javax.ws.rs.WebApplicationException",
        ),
    };
    let message = match detail {
        Value::Null => error.to_owned(),
        Value::String(s) => format!("{error}: {s}"),
        other => format!("{error}: {other}"),
    };
    json!({ "RemoteException": {
        "exception": exception,
        "message": message,
        "javaClassName": class,
        "detail": detail,
    }})
}

/// Content negotiation and error shapes for every route: a request that takes no JSON is a
/// 406 (yard serves no XML); a refusal on Hadoop's routes becomes YARN's `RemoteException`.
async fn shapes(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let hadoop = hadoop_route(request.uri().path());
    // `/metrics` (and a finished master's, kept) answers in Prometheus' text format, whatever
    // a scraper accepts.
    let path = request.uri().path();
    let text =
        path == "/metrics" || (path.starts_with("/ws/v1/yard/apps/") && path.ends_with("/metrics"));
    let mut response = if text || accepts_json(request.headers().get(header::ACCEPT)) {
        next.run(request).await
    } else {
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "the rm answers in JSON only (no XML): accept application/json",
            json!(
                request
                    .headers()
                    .get(header::ACCEPT)
                    .and_then(|a| a.to_str().ok())
                    .unwrap_or("")
            ),
        )
        .into_response()
    };
    if hadoop && let Some(r) = response.extensions_mut().remove::<Refusal>() {
        let status = response.status();
        let mut rebuilt =
            (status, Json(remote_exception(status, &r.error, &r.detail))).into_response();
        for name in [header::WWW_AUTHENTICATE, header::LOCATION] {
            if let Some(v) = response.headers().get(&name) {
                rebuilt.headers_mut().insert(name, v.clone());
            }
        }
        return rebuilt;
    }
    response
}

async fn register_node(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<RegisterNode>, JsonRejection>,
) -> Reply {
    // Who calls is checked before the body is read: a user's token is a 403 whatever it sent.
    caller.any_node()?;
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
    caller.any_node()?;
    let Json(hb) = body?;
    caller.node(&hb.node_id)?;
    limits::check_len("running", hb.running.len())?;
    limits::check_len("completed", hb.completed.len())?;
    hb.telemetry.check("telemetry")?;
    ok(json!(rm.with(|c, now| {
        // Container ends are counted by the cluster as it frees them (see the metrics).
        let reply = c.heartbeat(now, hb);
        if !reply.reregister {
            rm.metrics.heartbeats.inc();
        }
        reply
    })))
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
    rm.with(|c, _| caller.master_of(c, &id))?;
    let registration: MasterRegistration = if body.iter().all(u8::is_ascii_whitespace) {
        MasterRegistration::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "the registration is not {\"trackingUrl\": \"http://…\", \"maps\": N, \"reduces\": N, \"jobKind\": \"…\", \"profile\": {…}} (every field optional; or empty)",
                json!(limits::echo_message(&e.to_string())),
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
            json!(echo(url)),
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
        .commit(Touch::App(id.clone()), |c, _| {
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
    rm.with(|c, _| caller.master_of(c, &id))?;
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
            json!({ "path": echo(&id), "body": echo(&req.application_id) }),
        ));
    }
    ok(json!(rm.with(|c, now| {
        caller.master_of(c, &id)?;
        let placing = std::time::Instant::now();
        let reply = c.allocate(now, req).map_err(ApiError::from);
        rm.metrics
            .allocate_seconds
            .observe(placing.elapsed().as_secs_f64());
        reply
    })?))
}

/// Hadoop's FinishApplicationMasterRequest, the part yard uses: success, and the master's
/// diagnostics (why it failed), kept in the application's `diagnostics` (cut to
/// [`limits::MAX_DIAGNOSTICS_CHARS`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Unregister {
    succeeded: bool,
    #[serde(default)]
    diagnostics: String,
}

async fn master_unregister(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<Unregister>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(u) = body?;
    let diagnostics = limits::cut(&u.diagnostics, limits::MAX_DIAGNOSTICS_CHARS);
    rm.commit(Touch::App(id.clone()), |c, now| {
        caller.master_of(c, &id)?;
        c.master_finished(now, &id, u.succeeded, &diagnostics)
            .map_err(ApiError::from)
    })
    .await?;
    ok(json!({}))
}

/// yard's view of an application at `now`: what Hadoop's lacks (deadline and where the app
/// stands against it, processed fraction, answer).
fn yard_app_json(a: &AppInfo, now: i64) -> Value {
    json!({ "app": {
        "id": a.application_id,
        "state": state_name(a.lifecycle.state),
        "finalStatus": a.lifecycle.final_status,
        "deadlineMs": a.deadline_ms,
        "deadlineOutcome": a.deadline_outcome(now),
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
    ok(rm.with(|c, now| readable(c, &caller, &id).map(|a| yard_app_json(a, now)))?)
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
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(d) = body?;
    if !(1..=limits::MAX_TIME_MS).contains(&d.deadline_ms) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "deadlineMs is a time: milliseconds since the Unix epoch",
            json!({ "deadlineMs": d.deadline_ms }),
        ));
    }
    ok(rm
        .commit(Touch::App(id.clone()), |c, now| {
            owned(c, &caller, &id)?;
            c.set_deadline(&id, d.deadline_ms)?;
            Ok::<_, ApiError>(
                c.app(&id)
                    .map(|a| yard_app_json(a, now))
                    .unwrap_or_default(),
            )
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
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(r) = body?;
    if !(0.0..=1.0).contains(&r.processed_fraction) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "processedFraction is the share of the input processed, from 0 to 1",
            json!({ "processedFraction": r.processed_fraction }),
        ));
    }
    // The metrics count a job's first answer (a master may report again as it improves).
    let (fraction, counted) = (r.processed_fraction, r.answer.clone());
    let (reply, first) = rm
        .commit(Touch::App(id.clone()), |c, now| {
            caller.master_of(c, &id)?;
            let first = c.app(&id).is_some_and(|a| a.result.is_none());
            // Stamped on receipt: the time the rm judges the deadline by.
            let result = AppResult {
                processed_fraction: r.processed_fraction,
                answer: r.answer,
                answered_ms: now,
            };
            c.report_result(&id, result)?;
            let reply = c
                .app(&id)
                .map(|a| yard_app_json(a, now))
                .unwrap_or_default();
            Ok::<_, ApiError>((reply, first))
        })
        .await?;
    if first {
        let judged = reply["app"]["deadlineOutcome"].as_str();
        rm.metrics.job_answered(fraction, &counted, judged);
    }
    ok(reply)
}

/// Every metric in Prometheus' text format. No token: Prometheus scrapes without one, and the
/// figures name no application, container or user (see docs/decisions/metrics-ui.md, "Metrics").
async fn prometheus_metrics(State(rm): State<Rm>) -> Response {
    let text = rm.metrics.scrape(|refresh| rm.with(|c, _| refresh(c)));
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response()
}

/// Where Prometheus finds the nodemanagers and the MapReduce masters to scrape, in its
/// `http_sd` form; a finished master's final figures are scraped at the rm while it keeps
/// them. The scrape token or an admin's: it says where masters listen.
async fn prometheus_targets(
    State(rm): State<Rm>,
    _scrape: Scrape,
    headers: axum::http::HeaderMap,
) -> Reply {
    let mut finals = rm.metrics.finals.lock().unwrap_or_else(|p| p.into_inner());
    ok(rm.with(|c, now| {
        // The rm's address as the daemon knows it, else as Prometheus reached it.
        let rm_addr = c
            .url()
            .and_then(crate::metrics::host_port)
            .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()))
            .unwrap_or_default()
            .to_owned();
        crate::metrics::targets(c, &mut finals, &rm_addr, now)
    }))
}

/// A master, ending, leaves its last exposition (its `/metrics` text) with the rm, which serves
/// it in the master's place for [`crate::metrics::FINAL_FIGURES_RETENTION_MS`]: a short job's
/// master is gone before Prometheus first scrapes it. The current attempt's master only.
async fn keep_final_figures(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Reply {
    use crate::metrics::{Final, MAX_FINAL_FIGURES_BYTES};
    let (instance, now) = rm.with(|c, now| {
        caller.master_of(c, &id)?;
        let instance = c
            .app(&id)
            .and_then(|a| a.tracking_url.as_deref())
            .and_then(crate::metrics::host_port)
            .map(str::to_owned)
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::CONFLICT,
                    "register a tracking URL first: the final figures go under the instance Prometheus scraped",
                    Value::Null,
                )
            })?;
        Ok::<_, ApiError>((instance, now))
    })?;
    if body.len() > MAX_FINAL_FIGURES_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a master's final figures are at most {MAX_FINAL_FIGURES_BYTES} bytes"),
            json!({ "bytes": body.len() }),
        ));
    }
    let text = String::from_utf8(body.to_vec()).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "the final figures are Prometheus' text format, UTF-8",
            Value::Null,
        )
    })?;
    if let Err(e) = crate::metrics::parse_text(&text) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the final figures are not Prometheus' text format (0.0.4)",
            json!(e),
        ));
    }
    let bytes = text.len();
    rm.metrics
        .finals
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keep(
            &id,
            Final {
                text,
                kept_ms: now,
                instance,
            },
        );
    ok(json!({ "application": id, "bytes": bytes, "keptMs": now }))
}

/// A finished master's final figures, in Prometheus' text format: 404 once they expired.
async fn final_figures(State(rm): State<Rm>, Path(id): Path<String>, _scrape: Scrape) -> Reply {
    let now = (rm.clock)();
    let finals = rm.metrics.finals.lock().unwrap_or_else(|p| p.into_inner());
    match finals.get(&id, now) {
        Some(f) => Ok((
            [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
            f.text.clone(),
        )
            .into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "the rm keeps no final figures of this application: its master has not ended, left none, or they expired",
            Value::Null,
        )),
    }
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
    rm.with(|c, _| caller.master_of(c, &id))?;
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
        .commit(Touch::App(id.clone()), |c, _| {
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
    rm.with(|c, _| may_write_dataset(c, &caller, &name))?;
    let Json(d) = body?;
    if d.name != name {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "name in the body differs from the one in the path",
            json!({ "path": echo(&name), "body": echo(&d.name) }),
        ));
    }
    ok(rm
        .commit(Touch::Dataset(name.clone()), |c, now| {
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

/// What an admin may issue: a user's token, one node's credential, or the scrape token.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TokenRequest {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    scrape: bool,
}

async fn issue_token(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<TokenRequest>, JsonRejection>,
) -> Reply {
    if !caller.0.is_admin() {
        return Err(ApiError::forbidden(
            "only an admin may issue tokens; ask the cluster's operator",
        ));
    }
    let Json(t) = body?;
    let principal = match (t.user, t.node, t.scrape) {
        (Some(user), None, false) => {
            limits::check_name("user", &user)?;
            Principal::User { user }
        }
        (None, Some(node), false) => {
            limits::check_name("node", &node)?;
            Principal::Node { node: Some(node) }
        }
        (None, None, true) => Principal::Scraper,
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "say whose token: {\"user\": NAME}, {\"node\": HOST:PORT} or {\"scrape\": true}",
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

/// The container book as the rm holds it, and whether its invariants hold (a test and
/// operator hook: compare each node's booked containers with what its nodemanager runs at
/// `/ws/v1/node/containers`). Admins only: it lists every application's containers.
async fn books(State(rm): State<Rm>, caller: Caller) -> Reply {
    if !caller.0.is_admin() {
        return Err(ApiError::forbidden(
            "only an admin may read the container book",
        ));
    }
    ok(rm.with(|c, _| {
        let nodes: Vec<Value> = c
            .nodes()
            .map(|n| {
                let containers: Vec<&String> = c.containers_on(&n.node_id).map(|(id, _)| id).collect();
                json!({ "nodeId": n.node_id, "state": node_state_name(n.state), "containers": containers })
            })
            .collect();
        let problem = c.check_books().err();
        json!({ "books": { "consistent": problem.is_none(), "problem": problem, "nodes": nodes } })
    }))
}

async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
        .into_response()
}

async fn cluster_info(State(rm): State<Rm>) -> Reply {
    let version = env!("CARGO_PKG_VERSION");
    let store = if rm.journal.is_some() {
        "yard.rm.SqliteStateStore"
    } else {
        "yard.rm.MemoryStateStore"
    };
    ok(json!({ "clusterInfo": {
        "id": rm.started_ms,
        "startedOn": rm.started_ms,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": store,
        "resourceManagerVersion": version,
        "resourceManagerBuildVersion": format!("yard {version}"),
        "resourceManagerVersionBuiltOn": "",
        "hadoopVersion": "yard",
        "hadoopBuildVersion": format!("yard {version}"),
        "hadoopVersionBuiltOn": "",
        "haZooKeeperConnectionState": "ResourceManager HA is not enabled.",
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
        "reservedMB": 0,
        "availableMB": m.total_mb.saturating_sub(m.allocated_mb),
        "allocatedMB": m.allocated_mb,
        "totalMB": m.total_mb,
        "reservedVirtualCores": 0,
        "availableVirtualCores": m.total_vcores.saturating_sub(m.allocated_vcores),
        "allocatedVirtualCores": m.allocated_vcores,
        "totalVirtualCores": m.total_vcores,
        "containersAllocated": m.containers_allocated,
        "containersReserved": 0,
        "containersPending": 0,
        "totalNodes": m.active_nodes + m.lost_nodes,
        "activeNodes": m.active_nodes,
        "lostNodes": m.lost_nodes,
        "unhealthyNodes": 0,
        "decommissioningNodes": 0,
        "decommissionedNodes": 0,
        "rebootedNodes": 0,
        "shutdownNodes": 0,
    }}))
}

/// A share of `total` as a percentage (0 when there is nothing).
fn percent(used: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * used as f64 / total as f64
    }
}

/// One queue as YARN's capacity scheduler lists it. yard's queues are names applications are
/// submitted under: each may use the whole cluster (capacity 100 %), none is configured.
fn queue_json(name: &str, used_mb: u64, used_vcores: u64, apps: usize, total_mb: u64) -> Value {
    let used = percent(used_mb, total_mb);
    json!({
        "type": "capacitySchedulerLeafQueueInfo",
        "queueName": name,
        "queuePath": format!("root.{name}"),
        "state": "RUNNING",
        "capacity": 100.0,
        "usedCapacity": used,
        "maxCapacity": 100.0,
        "absoluteCapacity": 100.0,
        "absoluteUsedCapacity": used,
        "absoluteMaxCapacity": 100.0,
        "numApplications": apps,
        "resourcesUsed": { "memory": used_mb, "vCores": used_vcores },
        "capacities": { "queueCapacitiesByPartition": [{
            "partitionName": "",
            "capacity": 100.0,
            "usedCapacity": used,
            "maxCapacity": 100.0,
            "absoluteCapacity": 100.0,
            "absoluteUsedCapacity": used,
            "absoluteMaxCapacity": 100.0,
        }]},
    })
}

/// YARN's `scheduler.schedulerInfo`: which policy runs (`type`, and yard's `policy` name), the
/// cluster's capacity as YARN's FIFO scheduler reports it, the queues as YARN's capacity
/// scheduler lists them (`queueName` `root` and its `queues`), MinEDF-WC's spare counts, and
/// every unfinished application's deadline and quota.
async fn scheduler(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let (report, metrics, apps, queues) = rm.with(|c, now| {
        let mut queues: BTreeMap<String, (u64, u64, usize)> = BTreeMap::new();
        queues.insert("default".into(), (0, 0, 0));
        let apps: Vec<Value> = c
            .apps()
            .filter(|a| !a.lifecycle.state.is_final())
            .map(|a| {
                let u = c.usage(&a.application_id, now);
                let q = queues.entry(a.queue.clone()).or_default();
                q.0 += u.allocated_mb;
                q.1 += u.allocated_vcores;
                q.2 += 1;
                json!({
                    "id": a.application_id,
                    "state": state_name(a.lifecycle.state),
                    "deadlineMs": a.deadline_ms,
                    "runningContainers": c.running_containers(&a.application_id),
                    "maps": a.model.map(|m| m.maps),
                    "reduces": a.model.map(|m| m.reduces),
                    "profiled": a.model.is_some_and(|m| m.profile.is_some()),
                    "quota": a.quota,
                })
            })
            .collect();
        (c.scheduler_report(), c.metrics(), apps, queues)
    });
    let queues: Vec<Value> = queues
        .iter()
        .map(|(name, (mb, vcores, n))| queue_json(name, *mb, *vcores, *n, metrics.total_mb))
        .collect();
    let used = percent(metrics.allocated_mb, metrics.total_mb);
    ok(json!({ "scheduler": { "schedulerInfo": {
        "type": report.policy.yarn_type(),
        "policy": report.policy.name(),
        "queueName": "root",
        "qstate": "RUNNING",
        "capacity": 100.0,
        "usedCapacity": used,
        "maxCapacity": 100.0,
        "queues": { "queue": queues },
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

/// YARN's application attempt id: `appattempt_<cluster timestamp>_<sequence>_<attempt:06>`.
fn attempt_id(app: &str, attempt: u32) -> String {
    let rest = app.strip_prefix("application_").unwrap_or(app);
    format!("appattempt_{rest}_{attempt:06}")
}

/// The attempt number a path names: YARN's `appattempt_…` id of `app`, or the bare number.
fn parse_attempt(app: &str, given: &str) -> Result<u32, ApiError> {
    let number = match given.strip_prefix("appattempt_") {
        Some(rest) => {
            let (app_part, n) = rest.rsplit_once('_').unwrap_or(("", ""));
            if format!("application_{app_part}") != app {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("{} is not an attempt of {}", echo(given), echo(app)),
                    json!(echo(&attempt_id(app, 1))),
                ));
            }
            n
        }
        None => given,
    };
    number.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{:?} is not an application attempt id", echo(given)),
            json!(format!("write {} or 1", echo(&attempt_id(app, 1)))),
        )
    })
}

/// YARN's `RMAppAttemptState` of attempt `t` of `a`.
fn attempt_state(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> &'static str {
    let current = a.attempts.last().is_some_and(|l| l.attempt == t.attempt);
    if !current {
        return "FAILED";
    }
    match a.lifecycle.state {
        AppState::New | AppState::Submitted | AppState::Accepted => "LAUNCHED",
        AppState::Running => "RUNNING",
        AppState::Finished => "FINISHED",
        AppState::Failed => "FAILED",
        AppState::Killed => "KILLED",
    }
}

/// One attempt, with the fields of both of YARN's attempt objects (the list's and the one's).
fn attempt_json(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> Value {
    let next_start = a
        .attempts
        .iter()
        .find(|n| n.attempt > t.attempt)
        .map(|n| n.started_ms);
    let finished = match next_start {
        Some(ms) => ms,
        None if a.lifecycle.state.is_final() => a.yarn.finished_ms.unwrap_or(0),
        None => 0,
    };
    json!({
        "id": t.attempt,
        "appAttemptId": attempt_id(&a.application_id, t.attempt),
        "startTime": t.started_ms,
        "startedTime": t.started_ms,
        "finishedTime": finished,
        "containerId": t.container_id,
        "amContainerId": t.container_id,
        "nodeId": t.node_id,
        "nodeHttpAddress": t.node_id,
        "host": t.node_id.split(':').next().unwrap_or(&t.node_id),
        "rpcPort": -1,
        "logsLink": "",
        "blacklistedNodes": "",
        "nodesBlacklistedBySystem": "",
        "appAttemptState": attempt_state(a, t),
        "trackingUrl": a.tracking_url.clone().unwrap_or_default(),
        "diagnosticsInfo": if a.attempts.last().is_some_and(|l| l.attempt == t.attempt) {
            a.lifecycle.diagnostics.clone()
        } else {
            String::new()
        },
    })
}

async fn app_attempts(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    let attempts = rm.with(|c, _| {
        c.app(&id).map(|a| {
            a.attempts
                .iter()
                .map(|t| attempt_json(a, t))
                .collect::<Vec<_>>()
        })
    });
    match attempts {
        Some(list) => ok(json!({ "appAttempts": { "appAttempt": list } })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

async fn app_attempt(
    State(rm): State<Rm>,
    Path((id, attempt)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, _| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        let t = a
            .attempts
            .iter()
            .find(|t| t.attempt == n)
            .ok_or_else(|| no_attempt(&id, n))?;
        ok(json!({ "appAttempt": attempt_json(a, t) }))
    })
}

fn no_attempt(id: &str, n: u32) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no attempt {} of {}", echo(&attempt_id(id, n)), echo(id)),
        json!(format!("see /ws/v1/cluster/apps/{}/appattempts", echo(id))),
    )
}

/// A running container as YARN's container report shows it.
fn container_json(id: &str, m: &crate::cluster::ContainerMeta, now: i64) -> Value {
    json!({
        "containerId": id,
        "allocatedMB": m.resource.memory_mb,
        "allocatedVCores": m.resource.vcores,
        "assignedNodeId": m.node_id,
        "priority": m.priority,
        "startedTime": m.started_ms,
        "finishedTime": 0,
        "elapsedTime": now.saturating_sub(m.started_ms).max(0),
        "diagnosticsInfo": "",
        "logUrl": "",
        "containerExitStatus": 0,
        "containerState": "RUNNING",
        "nodeHttpAddress": format!("http://{}", m.node_id),
        "nodeId": m.node_id,
        "allocatedResources": { "memory": m.resource.memory_mb, "vCores": m.resource.vcores },
    })
}

/// The attempt's running containers (as YARN's rm lists them: ended ones are the history
/// server's, which yard does not have).
async fn attempt_containers(
    State(rm): State<Rm>,
    Path((id, attempt)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        if !a.attempts.iter().any(|t| t.attempt == n) {
            return Err(no_attempt(&id, n));
        }
        let list: Vec<Value> = c
            .containers_of(&id, n)
            .map(|(cid, m)| container_json(cid, m, now))
            .collect();
        ok(json!({ "containers": { "container": list } }))
    })
}

async fn attempt_container(
    State(rm): State<Rm>,
    Path((id, attempt, container)): Path<(String, String, String)>,
    _caller: Caller,
) -> Reply {
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, now| {
        c.app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        match c.container(&container) {
            Some(m) if m.application_id == id && m.attempt == n => {
                ok(json!({ "container": container_json(&container, m, now) }))
            }
            _ => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no running container {container} in {}", attempt_id(&id, n)),
                json!("ended containers are not kept; see the attempt's containers"),
            )),
        }
    })
}

/// One node as both nodes routes show it: Hadoop's fields, YARN's `resourceUtilization`, and
/// yard's own view of its load (`yardLoad`). A further per-node object is one more key here.
fn node_json(cluster: &Cluster, n: &NodeInfo) -> Value {
    let (mut used_mb, mut used_vcores) = (0u64, 0u64);
    let mut count = 0;
    for (_, m) in cluster.containers_on(&n.node_id) {
        used_mb += m.resource.memory_mb;
        used_vcores += u64::from(m.resource.vcores);
        count += 1;
    }
    let (health, report) = match n.state {
        NodeState::Running => ("Healthy", String::new()),
        NodeState::Lost => (
            "Unhealthy",
            "lost: no heartbeat within the rm's node expiry".to_owned(),
        ),
    };
    let mut node = json!({
        "rack": n.rack,
        "state": node_state_name(n.state),
        "id": n.node_id,
        "nodeHostName": n.node_id.split(':').next().unwrap_or(&n.node_id),
        "nodeHTTPAddress": n.node_id,
        "healthStatus": health,
        "healthReport": report,
        "lastHealthUpdate": n.last_heartbeat_ms,
        "version": env!("CARGO_PKG_VERSION"),
        "usedMemoryMB": used_mb,
        "availMemoryMB": n.capability.memory_mb.saturating_sub(used_mb),
        "usedVirtualCores": used_vcores,
        "availableVirtualCores": u64::from(n.capability.vcores).saturating_sub(used_vcores),
        "numContainers": count,
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

/// YARN's `NodeState` names, as its REST API spells them.
pub const NODE_STATES: [&str; 8] = [
    "NEW",
    "RUNNING",
    "UNHEALTHY",
    "DECOMMISSIONING",
    "DECOMMISSIONED",
    "LOST",
    "REBOOTED",
    "SHUTDOWN",
];

fn node_state_name(s: NodeState) -> &'static str {
    match s {
        NodeState::Running => "RUNNING",
        NodeState::Lost => "LOST",
    }
}

/// A route's query: its pairs in order; a key the route does not take is a 400 naming it
/// (YARN would ignore it, and a filter the caller believes applied would silently not be).
fn query_pairs(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    known: &[&str],
) -> Result<BTreeMap<String, String>, ApiError> {
    let Query(pairs) = query?;
    let mut out = BTreeMap::new();
    for (key, value) in pairs {
        // Hadoop's pseudo authentication; yard authenticates by bearer token.
        if key == "user.name" {
            continue;
        }
        if !known.contains(&key.as_str()) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("unknown query parameter {:?}", echo(&key)),
                json!({ "known": known }),
            ));
        }
        if out.insert(key.clone(), value).is_some() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("query parameter {:?} given twice", echo(&key)),
                Value::Null,
            ));
        }
    }
    Ok(out)
}

fn bad_query(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, message, Value::Null)
}

/// A comma-separated list of names from `valid` (case-insensitive), upper-cased; 400 naming
/// the bad one and the valid ones.
fn name_list(param: &str, given: &str, valid: &[&str]) -> Result<Vec<String>, ApiError> {
    given
        .split(',')
        .map(|s| s.trim().to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .map(|s| {
            if valid.contains(&s.as_str()) {
                Ok(s)
            } else {
                Err(bad_query(format!(
                    "Invalid {param} {} specified. It should be one of {}",
                    echo(&s),
                    valid.join(", ")
                )))
            }
        })
        .collect()
}

async fn nodes(
    State(rm): State<Rm>,
    _caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &["states", "state", "healthy"])?;
    let mut states = Vec::new();
    for key in ["states", "state"] {
        if let Some(v) = q.get(key) {
            states.extend(name_list("node state", v, &NODE_STATES)?);
        }
    }
    let healthy = match q.get("healthy").map(|h| h.trim().to_ascii_lowercase()) {
        None => None,
        Some(h) if h == "true" => Some(true),
        Some(h) if h == "false" => Some(false),
        Some(h) => {
            return Err(bad_query(format!(
                "healthy={:?}: write healthy=true or healthy=false",
                echo(&h)
            )));
        }
    };
    let list: Vec<Value> = rm.with(|c, _| {
        c.nodes()
            .filter(|n| states.is_empty() || states.iter().any(|s| s == node_state_name(n.state)))
            .filter(|n| healthy.is_none_or(|h| h == (n.state == NodeState::Running)))
            .map(|n| node_json(c, n))
            .collect()
    });
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

/// YARN's `YarnApplicationState` and `FinalApplicationStatus` names.
pub const APP_STATES: [&str; 8] = [
    "NEW",
    "NEW_SAVING",
    "SUBMITTED",
    "ACCEPTED",
    "RUNNING",
    "FINISHED",
    "FAILED",
    "KILLED",
];
const FINAL_STATUSES: [&str; 4] = ["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED"];

fn final_name(a: &AppInfo) -> String {
    serde_json::to_value(a.lifecycle.final_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Hadoop's app object: YARN's 26 fields, in its units (progress in percent, times in ms,
/// resource-seconds in MB·s and vcore·s), and yard's own (`applicationTags` as YARN's
/// comma-separated list, `deadlineMs`, `deadlineOutcome`, `quota`). Its diagnostics carry, while the app waits
/// for that reason, why the overload classifier placed none of its tasks.
fn app_json(c: &Cluster, a: &AppInfo, cluster_id: i64, now: i64) -> Value {
    let diagnostics = match c.refusal(&a.application_id) {
        Some(why) if !a.lifecycle.state.is_final() && a.lifecycle.diagnostics.is_empty() => why,
        Some(why) if !a.lifecycle.state.is_final() => {
            format!("{}; {why}", a.lifecycle.diagnostics)
        }
        _ => a.lifecycle.diagnostics.clone(),
    };
    let usage = c.usage(&a.application_id, now);
    let finished = a.yarn.finished_ms.unwrap_or(0);
    let elapsed = if finished > 0 { finished } else { now }
        .saturating_sub(a.submitted_ms)
        .max(0);
    let master_node = a.attempts.last().map(|t| t.node_id.clone());
    let (tracking_ui, tracking_url) = match (&a.tracking_url, c.url()) {
        (Some(url), _) if !a.lifecycle.state.is_final() => ("ApplicationMaster", url.clone()),
        _ if a.lifecycle.state.is_final() => (
            "History",
            c.url()
                .map(|rm| format!("{rm}/ws/v1/cluster/apps/{}", a.application_id))
                .unwrap_or_default(),
        ),
        (_, Some(rm)) => (
            "UNASSIGNED",
            format!("{rm}/ws/v1/cluster/apps/{}", a.application_id),
        ),
        (_, None) => ("UNASSIGNED", String::new()),
    };
    json!({
        "id": a.application_id,
        "user": a.user,
        "name": a.name,
        "applicationType": a.yarn.application_type,
        "queue": a.queue,
        "state": state_name(a.lifecycle.state),
        "finalStatus": final_name(a),
        "progress": a.progress * 100.0,
        "trackingUI": tracking_ui,
        "trackingUrl": tracking_url,
        "diagnostics": diagnostics,
        "clusterId": cluster_id,
        "startedTime": a.submitted_ms,
        "finishedTime": finished,
        "elapsedTime": elapsed,
        "amContainerLogs": "",
        "amHostHttpAddress": master_node.unwrap_or_default(),
        "allocatedMB": usage.allocated_mb,
        "allocatedVCores": usage.allocated_vcores,
        "runningContainers": c.running_containers(&a.application_id),
        "memorySeconds": usage.memory_seconds,
        "vcoreSeconds": usage.vcore_seconds,
        "unmanagedApplication": false,
        "applicationPriority": 0,
        "appNodeLabelExpression": "",
        "amNodeLabelExpression": "",
        "applicationTags": a.tags.join(","),
        "deadlineMs": a.deadline_ms,
        // yard's: met, empty, missed or pending beside YARN's state and final status (null
        // without a deadline), judged once, here (`cluster::deadline_outcome`).
        "deadlineOutcome": a.deadline_outcome(now),
        "quota": a.quota,
    })
}

/// A time filter: ms since the epoch, not negative.
fn time_param(q: &BTreeMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    q.get(key)
        .map(|v| {
            v.trim()
                .parse::<i64>()
                .ok()
                .filter(|t| *t >= 0)
                .ok_or_else(|| {
                    bad_query(format!(
                        "{key}={:?}: a time is milliseconds since the Unix epoch, 0 or more",
                        echo(v)
                    ))
                })
        })
        .transpose()
}

/// A `[begin, end]` time range from two filters; 400 when end is before begin.
fn time_range(
    q: &BTreeMap<String, String>,
    begin: &str,
    end: &str,
) -> Result<Option<(i64, i64)>, ApiError> {
    let (b, e) = (time_param(q, begin)?, time_param(q, end)?);
    if b.is_none() && e.is_none() {
        return Ok(None);
    }
    let (b, e) = (b.unwrap_or(0), e.unwrap_or(i64::MAX));
    if e < b {
        return Err(bad_query(format!("{end} ({e}) is before {begin} ({b})")));
    }
    Ok(Some((b, e)))
}

/// A comma-separated list, trimmed and lower-cased (YARN matches types and tags so).
fn lower_list(v: Option<&String>) -> Vec<String> {
    v.map(|v| {
        v.split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Hadoop's `/apps` filters, every one honoured; a value that makes no sense is a 400.
struct AppsFilter {
    states: Vec<String>,
    final_status: Option<String>,
    user: Option<String>,
    queue: Option<String>,
    name: Option<String>,
    limit: usize,
    started: Option<(i64, i64)>,
    finished: Option<(i64, i64)>,
    types: Vec<String>,
    tags: Vec<String>,
    deselects: Vec<String>,
}

const APPS_PARAMS: [&str; 14] = [
    "state",
    "states",
    "finalStatus",
    "user",
    "queue",
    "limit",
    "startedTimeBegin",
    "startedTimeEnd",
    "finishedTimeBegin",
    "finishedTimeEnd",
    "applicationTypes",
    "applicationTags",
    "name",
    "deSelects",
];

/// What `deSelects` may leave out (YARN's `DeSelectType`).
const DESELECTS: [&str; 5] = [
    "resourceRequests",
    "timeouts",
    "appNodeLabelExpression",
    "amNodeLabelExpression",
    "resourceInfo",
];

impl AppsFilter {
    fn parse(q: &BTreeMap<String, String>) -> Result<AppsFilter, ApiError> {
        let mut states = Vec::new();
        for key in ["states", "state"] {
            if let Some(v) = q.get(key) {
                states.extend(name_list("application-state", v, &APP_STATES)?);
            }
        }
        let final_status = q
            .get("finalStatus")
            .map(|v| {
                let v = v.trim().to_ascii_uppercase();
                if FINAL_STATUSES.contains(&v.as_str()) {
                    Ok(v)
                } else {
                    Err(bad_query(format!(
                        "Invalid finalStatus {v} specified. It should be one of {}",
                        FINAL_STATUSES.join(", ")
                    )))
                }
            })
            .transpose()?;
        let limit = match q.get("limit") {
            None => usize::MAX,
            Some(v) => v
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or_else(|| {
                    bad_query(format!(
                        "limit={:?}: limit value must be greater then 0",
                        echo(v)
                    ))
                })?,
        };
        let deselects: Vec<String> = q
            .get("deSelects")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        DESELECTS
                            .iter()
                            .find(|d| d.eq_ignore_ascii_case(s))
                            .map(|d| (*d).to_owned())
                            .ok_or_else(|| {
                                bad_query(format!(
                                    "Invalid deSelects string {s}; valid ones are {}",
                                    DESELECTS.join(", ")
                                ))
                            })
                    })
                    .collect::<Result<_, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        Ok(AppsFilter {
            states,
            final_status,
            user: q.get("user").cloned(),
            queue: q.get("queue").cloned(),
            name: q.get("name").cloned(),
            limit,
            started: time_range(q, "startedTimeBegin", "startedTimeEnd")?,
            finished: time_range(q, "finishedTimeBegin", "finishedTimeEnd")?,
            types: lower_list(q.get("applicationTypes")),
            tags: lower_list(q.get("applicationTags")),
            deselects,
        })
    }

    fn matches(&self, a: &AppInfo) -> bool {
        let finished = a.yarn.finished_ms.unwrap_or(0);
        (self.states.is_empty() || self.states.contains(&state_name(a.lifecycle.state)))
            && self
                .final_status
                .as_ref()
                .is_none_or(|f| *f == final_name(a))
            && self.user.as_ref().is_none_or(|u| *u == a.user)
            && self.queue.as_ref().is_none_or(|q| *q == a.queue)
            && self.name.as_ref().is_none_or(|n| *n == a.name)
            && self
                .started
                .is_none_or(|(b, e)| (b..=e).contains(&a.submitted_ms))
            && self
                .finished
                .is_none_or(|(b, e)| (b..=e).contains(&finished))
            && (self.types.is_empty()
                || self
                    .types
                    .contains(&a.yarn.application_type.to_ascii_lowercase()))
            && (self.tags.is_empty()
                || a.tags
                    .iter()
                    .any(|t| self.tags.contains(&t.to_ascii_lowercase())))
    }
}

async fn apps(
    State(rm): State<Rm>,
    _caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &APPS_PARAMS)?;
    let f = AppsFilter::parse(&q)?;
    let list: Vec<Value> = rm.with(|c, now| {
        c.apps()
            .filter(|a| f.matches(a))
            .take(f.limit)
            .map(|a| {
                let mut v = app_json(c, a, rm.started_ms, now);
                if let Some(o) = v.as_object_mut() {
                    for d in &f.deselects {
                        o.remove(d);
                    }
                }
                v
            })
            .collect()
    });
    ok(json!({ "apps": { "app": list } }))
}

async fn app(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    match rm.with(|c, now| c.app(&id).map(|a| app_json(c, a, rm.started_ms, now))) {
        Some(a) => ok(json!({ "app": a })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

/// YARN's application statistics: how many applications of a type (at most one, as YARN
/// allows; `*` for any) are in each asked state (every state when none is asked).
async fn app_statistics(
    State(rm): State<Rm>,
    _caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &["states", "applicationTypes"])?;
    let states = match q.get("states") {
        Some(v) => name_list("application-state", v, &APP_STATES)?,
        None => APP_STATES.iter().map(|s| (*s).to_owned()).collect(),
    };
    let types = lower_list(q.get("applicationTypes"));
    if types.len() > 1 {
        return Err(bad_query(
            "we temporarily support at most one applicationType".into(),
        ));
    }
    let kind = types.first().cloned();
    let items: Vec<Value> = rm.with(|c, _| {
        states
            .iter()
            .map(|state| {
                let count = c
                    .apps()
                    .filter(|a| state_name(a.lifecycle.state) == *state)
                    .filter(|a| {
                        kind.as_ref()
                            .is_none_or(|k| *k == a.yarn.application_type.to_ascii_lowercase())
                    })
                    .count();
                json!({
                    "state": state,
                    "type": kind.clone().unwrap_or_else(|| "*".into()),
                    "count": count,
                })
            })
            .collect()
    });
    ok(json!({ "appStatInfo": { "statItem": items } }))
}

async fn new_application(State(rm): State<Rm>, caller: Caller) -> Reply {
    let user = caller.user()?.to_owned();
    // Refused with the submission it is for while nothing can be saved.
    let (id, max) = rm.with(|c, now| {
        rm.refuse_unsaved()?;
        Ok::<_, ApiError>((c.new_application(now, &user)?, c.max_resource()))
    })?;
    ok(json!({
        "application-id": id,
        "maximum-resource-capability": { "memory": max.memory_mb, "vCores": max.vcores },
    }))
}

async fn app_queue(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    match rm.with(|c, _| c.app(&id).map(|a| a.queue.clone())) {
        Some(queue) => ok(json!({ "queue": queue })),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueBody {
    queue: String,
}

/// Moving an application: yard's policies do not move applications between queues (as YARN's
/// FIFO scheduler does not), so only its own queue is a valid target (200, nothing moves).
async fn set_app_queue(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<QueueBody>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(b) = body?;
    rm.with(|c, _| {
        let app = owned(c, &caller, &id)?;
        if app.queue != b.queue {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "{id} is in queue {}: yard's schedulers do not move applications between queues",
                    app.queue
                ),
                json!({ "queue": echo(&b.queue) }),
            ));
        }
        ok(json!({ "queue": app.queue }))
    })
}

async fn app_priority(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    match rm.with(|c, _| c.app(&id).is_some()) {
        true => ok(json!({ "priority": 0 })),
        false => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PriorityBody {
    /// Read to check the body's shape; capped to 0 whatever it is.
    #[allow(dead_code)]
    priority: i64,
}

/// yard's cluster has YARN's default `yarn.cluster.max-application-priority` of 0: as YARN
/// does, a higher priority is capped to it, so every application keeps priority 0.
async fn set_app_priority(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<PriorityBody>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(_) = body?;
    rm.with(|c, _| {
        let app = owned(c, &caller, &id)?;
        if app.lifecycle.state.is_final() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("{id} has ended: its priority can no longer change"),
                Value::Null,
            ));
        }
        ok(json!({ "priority": 0 }))
    })
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// YARN's timeout time format, `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC.
pub fn iso8601(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}+0000")
}

/// Reads `yyyy-MM-dd'T'HH:mm:ss[.SSS](Z|±HHMM|±HH:MM)` into ms since the epoch.
pub fn parse_iso8601(text: &str) -> Option<i64> {
    let t = text.trim();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (date, time) = t.split_once('T')?;
    let mut dp = date.split('-');
    let (y, mo, d) = (num(dp.next()?)?, num(dp.next()?)?, num(dp.next()?)?);
    if dp.next().is_some() || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let (clock, offset_ms) = if let Some(c) = time.strip_suffix('Z') {
        (c, 0)
    } else {
        let at = time.rfind(['+', '-'])?;
        let (c, off) = time.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 {
            return None;
        }
        let (oh, om) = (num(&digits[..2])?, num(&digits[2..])?);
        (c, sign * (oh * 3_600_000 + om * 60_000))
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut tp = hms.split(':');
    let (h, mi, s) = (num(tp.next()?)?, num(tp.next()?)?, num(tp.next()?)?);
    if tp.next().is_some() || h > 23 || mi > 59 || s > 60 || frac.len() > 9 {
        return None;
    }
    let milli = num(&format!("{frac:0<3}")[..3])?;
    let days = days_from_civil(y, mo as u32, d as u32);
    Some(days * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + milli - offset_ms)
}

/// YARN's `LIFETIME` timeout object of `a` at `now`.
fn timeout_json(a: &AppInfo, now: i64) -> Value {
    match a.yarn.lifetime_expiry_ms {
        Some(t) if !a.lifecycle.state.is_final() => json!({
            "type": "LIFETIME",
            "expiryTime": iso8601(t),
            "remainingTimeInSeconds": (t - now).max(0) / 1000,
        }),
        _ => json!({
            "type": "LIFETIME",
            "expiryTime": "UNLIMITED",
            "remainingTimeInSeconds": -1,
        }),
    }
}

async fn app_timeouts(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        ok(json!({ "timeouts": { "timeout": [timeout_json(a, now)] } }))
    })
}

fn check_timeout_type(kind: &str) -> Result<(), ApiError> {
    if kind.eq_ignore_ascii_case("LIFETIME") {
        return Ok(());
    }
    Err(bad_query(format!(
        "timeout type {:?}: LIFETIME is the only one (YARN's ApplicationTimeoutType)",
        echo(kind)
    )))
}

async fn app_timeout(
    State(rm): State<Rm>,
    Path((id, kind)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    check_timeout_type(&kind)?;
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        ok(json!({ "timeout": timeout_json(a, now) }))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeoutBody {
    timeout: TimeoutSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TimeoutSpec {
    r#type: String,
    expiry_time: String,
}

/// Sets an application's `LIFETIME`: the rm kills it at that time (YARN's timeout).
async fn set_app_timeout(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<TimeoutBody>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(b) = body?;
    check_timeout_type(&b.timeout.r#type)?;
    let expiry = parse_iso8601(&b.timeout.expiry_time).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "timeout.expiryTime {:?} is not yyyy-MM-dd'T'HH:mm:ss.SSSZ (e.g. 2030-01-31T12:00:00.000+0000)",
                echo(&b.timeout.expiry_time)
            ),
            json!({ "field": "timeout.expiryTime" }),
        )
    })?;
    if expiry <= (rm.clock)() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "timeout.expiryTime {} is not in the future",
                b.timeout.expiry_time
            ),
            json!({ "field": "timeout.expiryTime" }),
        ));
    }
    let value = rm
        .commit(Touch::App(id.clone()), |c, now| {
            owned(c, &caller, &id)?;
            c.set_lifetime(&id, Some(expiry))?;
            Ok::<_, ApiError>(c.app(&id).map(|a| timeout_json(a, now)))
        })
        .await?;
    ok(json!({ "timeout": value }))
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
    /// The master's container: `{"memory": MB, "vCores": N}`.
    #[serde(default)]
    resource: Option<Value>,
    #[serde(default)]
    max_app_attempts: Option<Value>,
    #[serde(default)]
    application_type: Option<String>,
    /// Capped to the cluster's maximum priority, 0 (YARN's default).
    #[serde(default)]
    priority: Option<Value>,
    #[serde(default, rename = "unmanaged-AM")]
    unmanaged_am: Option<bool>,
    #[serde(default)]
    keep_containers_across_application_attempts: Option<bool>,
    #[serde(default)]
    reservation_id: Option<String>,
}

/// The longest application type YARN keeps.
const MAX_TYPE_LEN: usize = 20;

/// A submission's field as a whole number in `range`; 400 naming it otherwise.
fn whole(field: &str, v: &Value, range: std::ops::RangeInclusive<i64>) -> Result<i64, ApiError> {
    v.as_i64().filter(|n| range.contains(n)).ok_or_else(|| {
        FieldError {
            field: field.into(),
            problem: format!(
                "{v} is not a whole number from {} to {}",
                range.start(),
                range.end()
            ),
        }
        .into()
    })
}

/// The master's resource: `{"memory", "vCores"}`, each at least 1 and at most the largest
/// node's (YARN's maximum-resource-capability).
fn master_resource(v: &Value, max: Resource) -> Result<Resource, ApiError> {
    let Some(o) = v.as_object() else {
        return Err(FieldError {
            field: "resource".into(),
            problem: "write {\"memory\": MB, \"vCores\": N}".into(),
        }
        .into());
    };
    if let Some(k) = o.keys().find(|k| *k != "memory" && *k != "vCores") {
        return Err(FieldError {
            field: format!("resource.{k}"),
            problem: "resource takes memory (MB) and vCores".into(),
        }
        .into());
    }
    let field = |name: &str, max: i64| -> Result<i64, ApiError> {
        let v = o.get(name).ok_or_else(|| -> ApiError {
            FieldError {
                field: format!("resource.{name}"),
                problem: "missing".into(),
            }
            .into()
        })?;
        let n = whole(&format!("resource.{name}"), v, 1..=i64::MAX)?;
        if n > max {
            return Err(FieldError {
                field: format!("resource.{name}"),
                problem: format!(
                    "{n} is over the cluster's maximum-resource-capability ({max}: its largest node)"
                ),
            }
            .into());
        }
        Ok(n)
    };
    let memory_mb = field("memory", i64::try_from(max.memory_mb).unwrap_or(i64::MAX))?;
    let vcores = field("vCores", i64::from(max.vcores))?;
    Ok(Resource {
        memory_mb: u64::try_from(memory_mb).unwrap_or(0),
        vcores: u32::try_from(vcores).unwrap_or(0),
    })
}

/// YARN's launch-context expansion in a master command: `{{VAR}}` → `$VAR`, `<CPS>` → `:`,
/// `<LOG_DIR>` → the container's directory (where the nodemanager keeps its logs: the
/// command runs there).
fn expand(text: &str) -> String {
    let mut out = text.replace("<LOG_DIR>", "$PWD").replace("<CPS>", ":");
    while let Some(at) = out.find("{{") {
        let Some(len) = out[at + 2..].find("}}") else {
            break;
        };
        let name = out[at + 2..at + 2 + len].to_owned();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            break;
        }
        out.replace_range(at..at + 4 + len, &format!("${{{name}}}"));
    }
    out
}

/// Whether a value uses YARN's launch-context expansion (so must pass through the shell).
fn expands(text: &str) -> bool {
    text.contains("{{") || text.contains("<CPS>") || text.contains("<LOG_DIR>")
}

/// A shell word that is `text` inside double quotes, `$` left to expand.
fn double_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        if matches!(ch, '"' | '\\' | '`') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
    out
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
                    "{:?}: a tag is 1 to {MAX_TAG_LEN} printable ASCII characters",
                    echo(t)
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
                problem: format!(
                    "{:?}: deadline=<ms since the Unix epoch> takes a whole number",
                    echo(t)
                ),
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
#[serde(rename_all = "kebab-case")]
struct AmContainerSpec {
    #[serde(default)]
    commands: Option<Commands>,
    #[serde(default)]
    environment: Option<Environment>,
    /// yard localizes nothing: a submission that needs files put first is refused.
    #[serde(default)]
    local_resources: Option<Value>,
}

#[derive(Deserialize)]
struct Commands {
    /// One command, or several (run one after the other, as YARN joins them).
    command: Value,
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
    Host(host): Host,
    caller: Caller,
    body: Result<Json<Submission>, JsonRejection>,
) -> Reply {
    caller.user()?;
    let Json(s) = body?;
    let user = caller.submitter(s.user.as_deref())?;
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
    if s.unmanaged_am == Some(true) {
        return Err(FieldError {
            field: "unmanaged-AM".into(),
            problem: "yard runs every master in a container; an unmanaged master is not supported"
                .into(),
        }
        .into());
    }
    if s.keep_containers_across_application_attempts == Some(true) {
        return Err(FieldError {
            field: "keep-containers-across-application-attempts".into(),
            problem: "yard stops an attempt's containers when the next one starts".into(),
        }
        .into());
    }
    if s.reservation_id.as_deref().is_some_and(|r| !r.is_empty()) {
        return Err(FieldError {
            field: "reservation-id".into(),
            problem: "yard has no reservation system".into(),
        }
        .into());
    }
    let has_entries = |v: &Value| match v {
        Value::Null => false,
        Value::Object(o) => o.values().any(|e| match e {
            Value::Array(a) => !a.is_empty(),
            Value::Null => false,
            _ => true,
        }),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    };
    if spec.local_resources.as_ref().is_some_and(has_entries) {
        return Err(FieldError {
            field: "am-container-spec.local-resources".into(),
            problem: "yard localizes no files: put them on the nodes (or in a dataset) and name their paths in the command".into(),
        }
        .into());
    }
    let application_type = s.application_type.unwrap_or_default();
    if application_type.chars().count() > MAX_TYPE_LEN
        || application_type.chars().any(char::is_control)
    {
        return Err(FieldError {
            field: "application-type".into(),
            problem: format!(
                "{:?}: at most {MAX_TYPE_LEN} printable characters",
                echo(&application_type)
            ),
        }
        .into());
    }
    let max_attempts = s
        .max_app_attempts
        .as_ref()
        .filter(|v| !v.is_null())
        .map(|v| {
            whole(
                "max-app-attempts",
                v,
                i64::from(i32::MIN)..=i64::from(i32::MAX),
            )
        })
        .transpose()?
        // YARN: 0 or less takes the cluster's default.
        .and_then(|n| u32::try_from(n).ok().filter(|n| *n >= 1));
    if let Some(p) = s.priority.as_ref().filter(|v| !v.is_null()) {
        whole("priority", p, i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    }
    let max = rm.with(|c, _| c.max_resource());
    let am_resource = s
        .resource
        .as_ref()
        .filter(|v| !v.is_null())
        .map(|v| master_resource(v, max))
        .transpose()?;
    let commands: Vec<String> = match spec.commands.map(|c| c.command) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(c)) => vec![c],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_owned).ok_or_else(|| -> ApiError {
                    FieldError {
                        field: "am-container-spec.commands.command".into(),
                        problem: format!("{i} is not a string"),
                    }
                    .into()
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(FieldError {
                field: "am-container-spec.commands.command".into(),
                problem: format!("{other} is neither a command nor a list of them"),
            }
            .into());
        }
    };
    let entries = spec.environment.map(|e| e.entry).unwrap_or_default();
    limits::check_len("am-container-spec.environment", entries.len())?;
    // Variables that use YARN's expansion are exported by the master's shell (as YARN's
    // launch script does), so `{{CLASSPATH}}<CPS>./*` reads the container's own CLASSPATH.
    let mut exports = Vec::new();
    let mut env = BTreeMap::new();
    for Entry { key, value } in entries {
        if key.is_empty()
            || key.starts_with(|c: char| c.is_ascii_digit())
            || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(FieldError {
                field: "am-container-spec.environment".into(),
                problem: format!(
                    "{:?} is not a variable name (letters, digits, '_')",
                    echo(&key)
                ),
            }
            .into());
        }
        if expands(&value) {
            exports.push(format!("export {key}={}; ", double_quoted(&expand(&value))));
        }
        env.insert(key, value.replace("<CPS>", ":"));
    }
    let command = if commands.is_empty() {
        Vec::new()
    } else {
        let joined = commands
            .iter()
            .map(|c| expand(c))
            .collect::<Vec<_>>()
            .join(" ");
        vec![
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            format!("{}{joined}", exports.concat()),
        ]
    };
    let new = NewApp {
        id: s.application_id.clone(),
        name: s.application_name,
        user,
        queue: s.queue,
        master_command: command,
        master_env: env,
        deadline_ms,
        tags,
        application_type,
        am_resource,
        max_attempts,
    };
    rm.commit(Touch::App(new.id.clone()), |c, now| {
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
        [(header::LOCATION, app_location(&host, &s.application_id))],
    )
        .into_response())
}

/// Where an application's report is (YARN's `Location` header): absolute when the request
/// said its host.
fn app_location(host: &Option<String>, id: &str) -> String {
    match host {
        Some(h) => format!("http://{h}/ws/v1/cluster/apps/{id}"),
        None => format!("/ws/v1/cluster/apps/{id}"),
    }
}

/// The `Host` a request was sent to, if it said a plausible one.
struct Host(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for Host {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Host(
            parts
                .headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .filter(|h| {
                    !h.is_empty()
                        && h.len() <= 255
                        && h.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
                })
                .map(str::to_owned),
        ))
    }
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

/// YARN's kill: the first PUT that kills a live application answers 202 with `Location` (its
/// containers are being stopped); a PUT on an application in a final state (killed by this
/// PUT's predecessor, or ended otherwise) answers 200 with that state, so YARN's "repeat the
/// PUT until 200" loop ends.
async fn set_app_state(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    Host(host): Host,
    caller: Caller,
    body: Result<Json<NewState>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(s) = body?;
    if !s.state.eq_ignore_ascii_case("KILLED") {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Only 'KILLED' is allowed as a target state.",
            json!({ "asked": echo(&s.state) }),
        ));
    }
    let ended = rm
        .commit(Touch::App(id.clone()), |c, _| {
            let app = owned(c, &caller, &id)?;
            if app.lifecycle.state.is_final() {
                return Ok(Some(state_name(app.lifecycle.state)));
            }
            c.kill(&id).map_err(ApiError::from)?;
            Ok::<_, ApiError>(None)
        })
        .await?;
    match ended {
        Some(state) => ok(json!({ "state": state })),
        None => Ok((
            StatusCode::ACCEPTED,
            [(header::LOCATION, app_location(&host, &id))],
            Json(json!({ "state": "KILLED" })),
        )
            .into_response()),
    }
}
