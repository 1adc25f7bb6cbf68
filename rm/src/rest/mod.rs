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
//!
//! This file holds what every route shares: [`Rm`], [`ApiError`] and the error shapes, the
//! route table ([`routes`]) and the [`router`]. The routes live by concern: `protocol` (what
//! nodemanagers and masters call), `hadoop` (Hadoop's client routes) and `submission` (its
//! submit), `yard` (yard's own client routes), [`mapreduce`] (MapReduce jobs and shared scans);
//! beside them `caller` (who calls, what it may act on), `views` (the JSON views), `query`
//! (query parameters) and `time` (YARN's time format).

use std::sync::{Arc, Mutex};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};
use yard_wire::auth::{AuthError, BearerKey};
use yard_wire::limits::{self, FieldError};

use crate::cluster::{Cluster, ClusterError, Touch};
use crate::journal::{Journal, Pending};

mod caller;
mod hadoop;
mod logs;
pub mod mapreduce;
mod outputs;
mod protocol;
mod query;
mod submission;
mod time;
mod views;
mod yard;

use hadoop::{
    app, app_attempt, app_attempts, app_priority, app_queue, app_state, app_statistics,
    app_timeout, app_timeouts, apps, attempt_container, attempt_containers, cluster_info, metrics,
    new_application, node, nodes, scheduler, set_app_priority, set_app_queue, set_app_state,
    set_app_timeout,
};
use protocol::{
    allocate, heartbeat, keep_final_figures, master_register, master_unregister, put_recovery,
    recovery, register_node, report_result,
};
use submission::submit;
use yard::{
    books, dataset, datasets, delete_dataset, final_figures, health, history, issue_token, openapi,
    prometheus_metrics, prometheus_targets, put_dataset, set_deadline, upload_grant, whoami,
    yard_app,
};

pub use caller::{Caller, Scrape};
pub use protocol::MasterRegistration;
pub use time::{iso8601, parse_iso8601};

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
    /// The aggregated containers' logs (`None`: not kept, as in tests of the routes alone).
    pub logs: Option<crate::logs::LogStore>,
    /// Seeds for MapReduce jobs posted without one (`mapreduce::Seeds`).
    pub seeds: mapreduce::Seeds,
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
            logs: None,
            // Fixed: the routes' replies (a drawn seed among them) are the same every run.
            seeds: mapreduce::Seeds::fixed(1),
        }
    }
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
            | ClusterError::Ended(_)
            | ClusterError::DatasetInUse { .. }
            | ClusterError::BeingDeleted(_) => StatusCode::CONFLICT,
            ClusterError::BadDataset { .. } | ClusterError::Queue(_) => StatusCode::BAD_REQUEST,
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

/// A typed reply (a `yard_wire::views` type), sent through [`Value`]: its map keeps keys
/// sorted, so the wire's key order stays what it was when every reply was built with `json!`,
/// whatever the type's field order.
fn ok_view<T: serde::Serialize>(v: &T) -> Reply {
    ok(reply_value(v)?)
}

/// A typed reply as [`Value`] (see [`ok_view`]), for a reply with its own status or headers.
fn reply_value<T: serde::Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the rm could not write its reply: {e}"),
            Value::Null,
        )
    })
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
pub const OPENAPI: &str = include_str!("../../openapi.json");

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
        (
            "/ws/v1/yard/datasets/{name}/read-grant",
            &["post"],
            post(outputs::read_grant),
        ),
        (
            "/ws/v1/yard/apps/{id}/output-grant",
            &["post"],
            post(outputs::output_grant),
        ),
        (
            "/ws/v1/yard/apps/{id}/output",
            &["put"],
            put(outputs::commit_output),
        ),
        ("/ws/v1/yard/auth/whoami", &["get"], get(whoami)),
        ("/ws/v1/yard/auth/tokens", &["post"], post(issue_token)),
        ("/ws/v1/yard/health", &["get"], get(health)),
        ("/ws/v1/yard/books", &["get"], get(books)),
        ("/ws/v1/yard/history", &["get"], get(history)),
        (
            "/ws/v1/yard/datasets/{name}",
            &["get", "put", "delete"],
            get(dataset).put(put_dataset).delete(delete_dataset),
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
    routes.extend(logs::routes());
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

/// The methods the route table gives `path` (a `{name}` segment matches any one segment),
/// upper-case as HTTP names them.
fn allowed_methods(path: &str) -> Vec<String> {
    let wanted: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    routes()
        .into_iter()
        .filter(|(pattern, _, _)| {
            let parts: Vec<&str> = pattern.split('/').collect();
            parts.len() == wanted.len()
                && parts
                    .iter()
                    .zip(&wanted)
                    .all(|(p, w)| p.starts_with('{') || p == w)
        })
        .flat_map(|(_, methods, _)| methods.iter().map(|m| m.to_ascii_uppercase()))
        .collect()
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
    let path = request.uri().path().to_owned();
    let mut response = if text_route(&path) || accepts_json(request.headers().get(header::ACCEPT)) {
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
    // The router's own 405 has no body: it says which methods the route takes, in the
    // route's error shape, beside the `Allow` header it keeps.
    if response.status() == StatusCode::METHOD_NOT_ALLOWED
        && response.extensions().get::<Refusal>().is_none()
    {
        let allowed = allowed_methods(&path);
        response = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "this route does not take that method",
            json!(format!("use {}", allowed.join(", "))),
        )
        .into_response();
        if let Ok(allow) = HeaderValue::from_str(&allowed.join(", ")) {
            response.headers_mut().insert(header::ALLOW, allow);
        }
    }
    if hadoop && let Some(r) = response.extensions_mut().remove::<Refusal>() {
        let status = response.status();
        let mut rebuilt =
            (status, Json(remote_exception(status, &r.error, &r.detail))).into_response();
        for name in [header::WWW_AUTHENTICATE, header::LOCATION, header::ALLOW] {
            if let Some(v) = response.headers().get(&name) {
                rebuilt.headers_mut().insert(name, v.clone());
            }
        }
        return rebuilt;
    }
    response
}

/// Routes that answer in text whatever the request accepts: `/metrics` (and a finished
/// master's, kept) in Prometheus' text format, and one container log file
/// (`/ws/v1/yard/apps/{id}/logs/{container}/{file}`), as Hadoop's log servlet serves it.
fn text_route(path: &str) -> bool {
    if path == "/metrics" {
        return true;
    }
    let Some(app) = path.strip_prefix("/ws/v1/yard/apps/") else {
        return false;
    };
    let parts: Vec<&str> = app.split('/').collect();
    matches!(parts.as_slice(), [_, "metrics"] | [_, "logs", _, _])
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

#[cfg(test)]
mod tests {
    use super::text_route;

    #[test]
    fn metrics_and_log_files_are_text_routes_and_the_rest_json() {
        for path in [
            "/metrics",
            "/ws/v1/yard/apps/application_1_0001/metrics",
            "/ws/v1/yard/apps/application_1_0001/logs/container_1_0001_01_000001/stdout",
        ] {
            assert!(text_route(path), "{path}");
        }
        for path in [
            "/ws/v1/yard/apps/application_1_0001",
            "/ws/v1/yard/apps/application_1_0001/logs",
            "/ws/v1/yard/apps/application_1_0001/logs/container_1_0001_01_000001",
            "/ws/v1/yard/apps/a/b/metrics",
            "/ws/v1/cluster/metrics",
        ] {
            assert!(!text_route(path), "{path}");
        }
    }
}
