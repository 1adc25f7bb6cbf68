//! The one client of the rm's REST API, async ([`RmClient`]: the MapReduce master, anything
//! on tokio) with a blocking face ([`BlockingRmClient`]: the CLI). It sends the caller's bearer
//! token and turns the rm's answers into values or [`ClientError`]s that keep the rm's own
//! explanation (its `{"error", "detail"}` body). Applications, nodes, MapReduce jobs, datasets
//! and tokens have methods that answer `yard_wire` types (the ones the rm's handlers build);
//! [`RmClient::call`] with a path and JSON remains for the rest.

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use yard_wire::deadline::Deadline;
use yard_wire::hadoop::{NewApplication, SchedulerInfo, SchedulerReply};
use yard_wire::jobs::{AnswerReply, AnswerView, JobReply, JobView, JobsReply};
use yard_wire::logs::{AppLogs, AppLogsReply};
use yard_wire::protocol::Dataset;
use yard_wire::replies::{DatasetSummary, DatasetsReply, IssuedToken, UploadGrant};
use yard_wire::views::{
    AppReply, AppStateView, AppView, AppsReply, ClusterInfo, ClusterInfoReply, ClusterMetrics,
    ClusterMetricsReply, NodeReply, NodeState, NodeView, NodesReply, SetDeadline, YardAppReply,
    YardAppView, YarnApplicationState,
};

/// Why a call did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No answer: `reason` is the innermost cause ("Connection refused (os error 111)"), once
    /// (reqwest's own wrappers repeat the URL at each level).
    #[error("cannot reach the rm at {base}: {reason}; is it running there? (--rm URL or YARD_RM)")]
    Unreachable { base: String, reason: String },
    /// 401: no credential, or one the rm does not accept.
    #[error("the rm refused: {error}")]
    Unauthorized { error: String },
    /// Any other 4xx: the request was wrong; `error` and `detail` say how.
    #[error("the rm refused: {error}{}", detail_text(.detail))]
    Refused {
        status: StatusCode,
        error: String,
        detail: Value,
    },
    /// 5xx, or an answer that is not JSON where JSON was due.
    #[error("{url} answered {status}: {body}")]
    Failed {
        url: String,
        status: StatusCode,
        body: Value,
    },
    /// A 2xx whose JSON is not the type the route answers (an rm of another version?).
    #[error("{url} answered JSON this client cannot read ({error}); is the rm the same version?")]
    Unreadable { url: String, error: String },
}

impl ClientError {
    fn unreachable(base: &str, e: &reqwest::Error) -> ClientError {
        let mut root: &dyn std::error::Error = e;
        while let Some(inner) = root.source() {
            root = inner;
        }
        let reason = match e.is_timeout() {
            true => "no answer in time".to_owned(),
            false => root.to_string(),
        };
        ClientError::Unreachable {
            base: base.to_owned(),
            reason,
        }
    }
}

/// Hadoop's `/apps` filters, as `GET /ws/v1/cluster/apps` takes them; empty or `None`: any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppsFilter {
    pub states: Vec<YarnApplicationState>,
    pub application_types: Vec<String>,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub limit: Option<usize>,
}

impl AppsFilter {
    /// The query string, `?` included (empty without filters).
    pub fn query(&self) -> String {
        let list = |names: Vec<&str>| (!names.is_empty()).then(|| names.join(","));
        let pairs = [
            (
                "states",
                list(self.states.iter().map(|s| s.name()).collect()),
            ),
            (
                "applicationTypes",
                list(self.application_types.iter().map(String::as_str).collect()),
            ),
            ("user", self.user.clone()),
            ("queue", self.queue.clone()),
            ("limit", self.limit.map(|l| l.to_string())),
        ];
        let query: Vec<String> = pairs
            .into_iter()
            .filter_map(|(key, value)| value.map(|v| format!("{key}={v}")))
            .collect();
        if query.is_empty() {
            String::new()
        } else {
            format!("?{}", query.join("&"))
        }
    }
}

fn detail_text(detail: &Value) -> String {
    match detail {
        Value::Null => String::new(),
        Value::String(s) => format!(" ({s})"),
        other => format!(" ({other})"),
    }
}

/// A client of the rm at one base URL, with one credential.
#[derive(Clone)]
pub struct RmClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl RmClient {
    /// A client of the rm at `base` (e.g. `http://127.0.0.1:8088`) that sends `token`.
    pub fn new(base: &str, token: Option<String>) -> RmClient {
        RmClient {
            base: base.trim_end_matches('/').to_owned(),
            token,
            http: reqwest::Client::new(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The bearer token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The HTTP client underneath (for calls to other daemons, e.g. nodemanagers).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends a request and returns the status and the JSON body (`Null` when there is none),
    /// whatever the status: for callers that judge it themselves.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| ClientError::unreachable(&self.base, &e))?;
        let status = response.status();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    }

    /// Sends a request; anything but a 2xx is an error carrying the rm's explanation.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let (status, value) = self.send(method, path, body).await?;
        judge(&self.base, path, status, value)
    }

    /// [`RmClient::call`], its answer read as a `T`.
    async fn typed<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, ClientError> {
        let value = self.call(method, path, body).await?;
        serde_json::from_value(value).map_err(|e| ClientError::Unreadable {
            url: format!("{}{path}", self.base),
            error: e.to_string(),
        })
    }

    /// Hadoop's cluster metrics (`GET /ws/v1/cluster/metrics`).
    pub async fn metrics(&self) -> Result<ClusterMetrics, ClientError> {
        let reply: ClusterMetricsReply = self
            .typed(Method::GET, "/ws/v1/cluster/metrics", None)
            .await?;
        Ok(reply.cluster_metrics)
    }

    /// Hadoop's cluster info (`GET /ws/v1/cluster/info`; no credential needed).
    pub async fn cluster_info(&self) -> Result<ClusterInfo, ClientError> {
        let reply: ClusterInfoReply = self.typed(Method::GET, "/ws/v1/cluster/info", None).await?;
        Ok(reply.cluster_info)
    }

    /// The applications that pass `filter` (`GET /ws/v1/cluster/apps`).
    pub async fn apps(&self, filter: &AppsFilter) -> Result<Vec<AppView>, ClientError> {
        let path = format!("/ws/v1/cluster/apps{}", filter.query());
        let reply: AppsReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.apps.app)
    }

    /// One application as Hadoop reports it (`GET /ws/v1/cluster/apps/{id}`).
    pub async fn app(&self, id: &str) -> Result<AppView, ClientError> {
        let path = format!("/ws/v1/cluster/apps/{id}");
        let reply: AppReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.app)
    }

    /// yard's view of one application: its deadline, answer (`GET /ws/v1/yard/apps/{id}`).
    pub async fn yard_app(&self, id: &str) -> Result<YardAppView, ClientError> {
        let path = format!("/ws/v1/yard/apps/{id}");
        let reply: YardAppReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.app)
    }

    /// Moves an application's deadline, or gives it one (`PUT /ws/v1/yard/apps/{id}/deadline`):
    /// yard's view of it after the change, which the rm committed.
    pub async fn set_deadline(
        &self,
        id: &str,
        deadline: Deadline,
    ) -> Result<YardAppView, ClientError> {
        let path = format!("/ws/v1/yard/apps/{id}/deadline");
        let body = serde_json::json!(SetDeadline {
            deadline_ms: deadline
        });
        let reply: YardAppReply = self.typed(Method::PUT, &path, Some(&body)).await?;
        Ok(reply.app)
    }

    /// The nodes in `states` (every node when empty) (`GET /ws/v1/cluster/nodes`).
    pub async fn nodes(&self, states: &[NodeState]) -> Result<Vec<NodeView>, ClientError> {
        let path = match states {
            [] => "/ws/v1/cluster/nodes".to_owned(),
            _ => {
                let names: Vec<&str> = states.iter().map(|s| s.name()).collect();
                format!("/ws/v1/cluster/nodes?states={}", names.join(","))
            }
        };
        let reply: NodesReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.nodes.node)
    }

    /// The scheduler and its queues (`GET /ws/v1/cluster/scheduler`).
    pub async fn scheduler(&self) -> Result<SchedulerInfo, ClientError> {
        let reply: SchedulerReply = self
            .typed(Method::GET, "/ws/v1/cluster/scheduler", None)
            .await?;
        Ok(reply.scheduler.scheduler_info)
    }

    /// One node, with its recent load samples (`GET /ws/v1/cluster/nodes/{id}`).
    pub async fn node(&self, id: &str) -> Result<NodeView, ClientError> {
        let path = format!("/ws/v1/cluster/nodes/{id}");
        let reply: NodeReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.node)
    }

    /// An application's state (`GET /ws/v1/cluster/apps/{id}/state`).
    pub async fn app_state(&self, id: &str) -> Result<YarnApplicationState, ClientError> {
        let path = format!("/ws/v1/cluster/apps/{id}/state");
        let reply: AppStateView = self.typed(Method::GET, &path, None).await?;
        Ok(reply.state)
    }

    /// Kills an application (YARN's `PUT …/state` to KILLED): its state after the call, KILLED
    /// while its containers stop, or the final state it had already reached.
    pub async fn kill(&self, id: &str) -> Result<YarnApplicationState, ClientError> {
        let path = format!("/ws/v1/cluster/apps/{id}/state");
        let body = serde_json::json!(AppStateView {
            state: YarnApplicationState::Killed
        });
        let reply: AppStateView = self.typed(Method::PUT, &path, Some(&body)).await?;
        Ok(reply.state)
    }

    /// A new application id, and the largest resource a container may have (YARN's
    /// `POST /ws/v1/cluster/apps/new-application`).
    pub async fn new_application(&self) -> Result<NewApplication, ClientError> {
        self.typed(Method::POST, "/ws/v1/cluster/apps/new-application", None)
            .await
    }

    /// Submits a MapReduce job (`POST /ws/v1/yard/mapreduce/jobs`, `body` the submission):
    /// its view as accepted.
    pub async fn submit_job(&self, body: &Value) -> Result<JobView, ClientError> {
        let reply: JobReply = self.typed(Method::POST, JOBS, Some(body)).await?;
        Ok(reply.job)
    }

    /// A MapReduce job's view: state, progress, estimate against the deadline.
    pub async fn job(&self, id: &str) -> Result<JobView, ClientError> {
        let reply: JobReply = self
            .typed(Method::GET, &format!("{JOBS}/{id}"), None)
            .await?;
        Ok(reply.job)
    }

    /// The caller's MapReduce jobs: those not yet ended, or with `all` every one.
    pub async fn jobs(&self, all: bool) -> Result<Vec<JobView>, ClientError> {
        let path = format!("{JOBS}?show={}", if all { "all" } else { "active" });
        let reply: JobsReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.jobs)
    }

    /// A MapReduce job's answer (a 409 while it is coming, a 410 if it ended without one).
    pub async fn answer(&self, id: &str) -> Result<AnswerView, ClientError> {
        let path = format!("{JOBS}/{id}/answer");
        let reply: AnswerReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.answer)
    }

    /// Every dataset, with its size (`GET /ws/v1/yard/datasets`).
    pub async fn datasets(&self) -> Result<Vec<DatasetSummary>, ClientError> {
        let reply: DatasetsReply = self.typed(Method::GET, DATASETS, None).await?;
        Ok(reply.datasets)
    }

    /// One dataset's block map.
    pub async fn dataset(&self, name: &str) -> Result<Dataset, ClientError> {
        self.typed(Method::GET, &format!("{DATASETS}/{name}"), None)
            .await
    }

    /// Puts a dataset's block map (its blocks are on the nodemanagers already).
    pub async fn put_dataset(&self, dataset: &Dataset) -> Result<Dataset, ClientError> {
        let path = format!("{DATASETS}/{}", dataset.name);
        let body = serde_json::to_value(dataset).expect("a dataset serialises");
        self.typed(Method::PUT, &path, Some(&body)).await
    }

    /// Removes dataset `name` (`yard data rm`); its nodes delete its blocks.
    pub async fn delete_dataset(
        &self,
        name: &str,
    ) -> Result<yard_wire::outputs::DatasetRemoved, ClientError> {
        self.typed(Method::DELETE, &format!("{DATASETS}/{name}"), None)
            .await
    }

    /// A grant to upload dataset `name`'s blocks to the nodemanagers.
    pub async fn upload_grant(&self, name: &str) -> Result<UploadGrant, ClientError> {
        let path = format!("{DATASETS}/{name}/upload-grant");
        self.typed(Method::POST, &path, None).await
    }

    /// A grant to read dataset `name`'s blocks from the nodemanagers (`yard data cat|get`).
    pub async fn read_grant(
        &self,
        name: &str,
    ) -> Result<yard_wire::outputs::ReadGrant, ClientError> {
        let path = format!("{DATASETS}/{name}/read-grant");
        self.typed(Method::POST, &path, None).await
    }

    /// An admin issues a token (`body`: `{"user"}`, `{"node"}` or `{"scrape": true}`).
    pub async fn issue_token(&self, body: &Value) -> Result<IssuedToken, ClientError> {
        self.typed(Method::POST, "/ws/v1/yard/auth/tokens", Some(body))
            .await
    }

    /// An application's containers' logs (`GET /ws/v1/yard/apps/{id}/logs`), or one
    /// container's.
    pub async fn app_logs(
        &self,
        id: &str,
        container: Option<&str>,
    ) -> Result<AppLogs, ClientError> {
        let mut path = format!("/ws/v1/yard/apps/{id}/logs");
        if let Some(c) = container {
            path.push_str(&format!("?container={c}"));
        }
        let reply: AppLogsReply = self.typed(Method::GET, &path, None).await?;
        Ok(reply.app_logs)
    }

    /// One log file's text (`GET …/logs/{container}/{file}`), from `start` as Hadoop's
    /// `?start=` (negative: the last bytes).
    pub async fn log_text(
        &self,
        id: &str,
        container: &str,
        file: &str,
        start: Option<i64>,
    ) -> Result<Vec<u8>, ClientError> {
        let mut path = format!("/ws/v1/yard/apps/{id}/logs/{container}/{file}");
        if let Some(s) = start {
            path.push_str(&format!("?start={s}"));
        }
        let url = format!("{}{path}", self.base);
        let mut request = self.http.get(&url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let unreachable = |e| ClientError::unreachable(&self.base, &e);
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let body = response.bytes().await.map_err(unreachable)?;
        if status.is_success() {
            return Ok(body.to_vec());
        }
        let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        judge(&self.base, &path, status, value).map(|_| Vec::new())
    }
}

/// The MapReduce job routes' prefix.
const JOBS: &str = "/ws/v1/yard/mapreduce/jobs";
/// The dataset routes' prefix.
const DATASETS: &str = "/ws/v1/yard/datasets";

/// A 2xx's body, or the error the status and body make.
fn judge(base: &str, path: &str, status: StatusCode, value: Value) -> Result<Value, ClientError> {
    // Hadoop's routes refuse in YARN's `RemoteException` shape (its message, and yard's
    // detail beside it), yard's own as `{"error", "detail"}`.
    let remote = value.get("RemoteException").filter(|r| r.is_object());
    let error = || {
        remote
            .and_then(|r| r["message"].as_str())
            .or_else(|| value["error"].as_str())
            .unwrap_or("refused")
            .to_owned()
    };
    if status.is_success() {
        Ok(value)
    } else if status == StatusCode::UNAUTHORIZED {
        Err(ClientError::Unauthorized { error: error() })
    } else if status.is_client_error() {
        Err(ClientError::Refused {
            status,
            error: error(),
            // The message already says it; the detail is for callers that read fields.
            detail: match remote {
                Some(r) if r["message"].is_string() => Value::Null,
                _ => value["detail"].clone(),
            },
        })
    } else {
        Err(ClientError::Failed {
            url: format!("{base}{path}"),
            status,
            body: value,
        })
    }
}

/// [`RmClient`] for code that is not async: each call runs on a runtime of its own. Not for
/// use inside an async context (as `reqwest::blocking`).
pub struct BlockingRmClient {
    inner: RmClient,
    runtime: tokio::runtime::Runtime,
}

impl BlockingRmClient {
    pub fn new(base: &str, token: Option<String>) -> std::io::Result<BlockingRmClient> {
        Ok(BlockingRmClient {
            inner: RmClient::new(base, token),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        })
    }

    pub fn base(&self) -> &str {
        self.inner.base()
    }

    pub fn token(&self) -> Option<&str> {
        self.inner.token()
    }

    pub fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        self.runtime.block_on(self.inner.send(method, path, body))
    }

    pub fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        self.runtime.block_on(self.inner.call(method, path, body))
    }

    pub fn metrics(&self) -> Result<ClusterMetrics, ClientError> {
        self.runtime.block_on(self.inner.metrics())
    }

    pub fn cluster_info(&self) -> Result<ClusterInfo, ClientError> {
        self.runtime.block_on(self.inner.cluster_info())
    }

    pub fn apps(&self, filter: &AppsFilter) -> Result<Vec<AppView>, ClientError> {
        self.runtime.block_on(self.inner.apps(filter))
    }

    pub fn app(&self, id: &str) -> Result<AppView, ClientError> {
        self.runtime.block_on(self.inner.app(id))
    }

    pub fn yard_app(&self, id: &str) -> Result<YardAppView, ClientError> {
        self.runtime.block_on(self.inner.yard_app(id))
    }

    pub fn set_deadline(&self, id: &str, deadline: Deadline) -> Result<YardAppView, ClientError> {
        self.runtime.block_on(self.inner.set_deadline(id, deadline))
    }

    pub fn nodes(&self, states: &[NodeState]) -> Result<Vec<NodeView>, ClientError> {
        self.runtime.block_on(self.inner.nodes(states))
    }

    pub fn node(&self, id: &str) -> Result<NodeView, ClientError> {
        self.runtime.block_on(self.inner.node(id))
    }

    pub fn scheduler(&self) -> Result<SchedulerInfo, ClientError> {
        self.runtime.block_on(self.inner.scheduler())
    }

    pub fn app_state(&self, id: &str) -> Result<YarnApplicationState, ClientError> {
        self.runtime.block_on(self.inner.app_state(id))
    }

    pub fn kill(&self, id: &str) -> Result<YarnApplicationState, ClientError> {
        self.runtime.block_on(self.inner.kill(id))
    }

    pub fn new_application(&self) -> Result<NewApplication, ClientError> {
        self.runtime.block_on(self.inner.new_application())
    }

    pub fn submit_job(&self, body: &Value) -> Result<JobView, ClientError> {
        self.runtime.block_on(self.inner.submit_job(body))
    }

    pub fn job(&self, id: &str) -> Result<JobView, ClientError> {
        self.runtime.block_on(self.inner.job(id))
    }

    pub fn jobs(&self, all: bool) -> Result<Vec<JobView>, ClientError> {
        self.runtime.block_on(self.inner.jobs(all))
    }

    pub fn answer(&self, id: &str) -> Result<AnswerView, ClientError> {
        self.runtime.block_on(self.inner.answer(id))
    }

    pub fn datasets(&self) -> Result<Vec<DatasetSummary>, ClientError> {
        self.runtime.block_on(self.inner.datasets())
    }

    pub fn dataset(&self, name: &str) -> Result<Dataset, ClientError> {
        self.runtime.block_on(self.inner.dataset(name))
    }

    pub fn put_dataset(&self, dataset: &Dataset) -> Result<Dataset, ClientError> {
        self.runtime.block_on(self.inner.put_dataset(dataset))
    }

    pub fn delete_dataset(
        &self,
        name: &str,
    ) -> Result<yard_wire::outputs::DatasetRemoved, ClientError> {
        self.runtime.block_on(self.inner.delete_dataset(name))
    }

    pub fn upload_grant(&self, name: &str) -> Result<UploadGrant, ClientError> {
        self.runtime.block_on(self.inner.upload_grant(name))
    }

    pub fn read_grant(&self, name: &str) -> Result<yard_wire::outputs::ReadGrant, ClientError> {
        self.runtime.block_on(self.inner.read_grant(name))
    }

    pub fn issue_token(&self, body: &Value) -> Result<IssuedToken, ClientError> {
        self.runtime.block_on(self.inner.issue_token(body))
    }

    pub fn app_logs(&self, id: &str, container: Option<&str>) -> Result<AppLogs, ClientError> {
        self.runtime.block_on(self.inner.app_logs(id, container))
    }

    pub fn log_text(
        &self,
        id: &str,
        container: &str,
        file: &str,
        start: Option<i64>,
    ) -> Result<Vec<u8>, ClientError> {
        self.runtime
            .block_on(self.inner.log_text(id, container, file, start))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_become_values_or_errors_that_keep_the_rms_explanation() {
        let ok = judge("http://rm", "/x", StatusCode::OK, json!({"a": 1}));
        assert_eq!(ok.unwrap(), json!({"a": 1}));
        let refused = judge(
            "http://rm",
            "/x",
            StatusCode::BAD_REQUEST,
            json!({"error": "field `vcores`: 0 is outside 1..=1024", "detail": {"field": "vcores"}}),
        )
        .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the rm refused: field `vcores`: 0 is outside 1..=1024 ({\"field\":\"vcores\"})"
        );
        let yarn = judge(
            "http://rm",
            "/ws/v1/cluster/apps",
            StatusCode::BAD_REQUEST,
            json!({"RemoteException": {"exception": "BadRequestException", "message": "Invalid application-state BOGUS specified", "javaClassName": "org.apache.hadoop.yarn.webapp.BadRequestException", "detail": null}}),
        )
        .unwrap_err();
        assert_eq!(
            yarn.to_string(),
            "the rm refused: Invalid application-state BOGUS specified"
        );
        let who = judge("http://rm", "/x", StatusCode::UNAUTHORIZED, Value::Null).unwrap_err();
        assert!(matches!(who, ClientError::Unauthorized { .. }), "{who}");
        let down = judge(
            "http://rm",
            "/x",
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "disk"}),
        )
        .unwrap_err();
        assert!(
            down.to_string().starts_with("http://rm/x answered 503"),
            "{down}"
        );
    }

    #[test]
    fn an_apps_filter_is_hadoops_query() {
        assert_eq!(AppsFilter::default().query(), "");
        let f = AppsFilter {
            states: vec![
                YarnApplicationState::Running,
                YarnApplicationState::Accepted,
            ],
            application_types: vec!["YARN".into(), "MAPREDUCE".into()],
            user: Some("alice".into()),
            queue: None,
            limit: Some(5),
        };
        assert_eq!(
            f.query(),
            "?states=RUNNING,ACCEPTED&applicationTypes=YARN,MAPREDUCE&user=alice&limit=5"
        );
    }
}
