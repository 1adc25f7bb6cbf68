//! `yard nm`: the node manager as a process. It registers with the rm (which hands it the
//! container-token key), serves its small REST surface — node info, its containers, and
//! starting a container on a valid token — and heartbeats: what ended, its load, and the rm's
//! orders back (containers to stop, masters to start, register again). It also serves its data
//! directory: dataset blocks and map outputs (`crate::data`), and containers' logs while they
//! run and after, which it uploads to the rm as each container ends (`crate::logs`).

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use yard_wire::auth::DataKey;
use yard_wire::logs::NodeContainerLogs;
use yard_wire::protocol::{
    ContainerEnd, ContainerStatus, HeartbeatReply, NodeContainer, NodeHeartbeat, RegisterNode,
    Registered, Resource, StartContainer,
};
use yard_wire::token::{TokenKey, verify};

use crate::data::{DataDir, DataSettings, EnvError};
use crate::launcher::{Cgroups, ContainerSpec, Exit, Running, launch};
use crate::logs::LogAggregation;
use crate::metrics::NmMetrics;
use crate::telemetry::Sampler;

/// What `yard nm` is started with.
#[derive(Debug, Clone)]
pub struct NmOptions {
    pub bind: SocketAddr,
    /// The rm's base URL, e.g. `http://127.0.0.1:8088`.
    pub rm: String,
    pub rack: String,
    pub capability: Resource,
    /// Where containers' directories (and their logs) go.
    pub work_dir: PathBuf,
    pub heartbeat: Duration,
    /// Between SIGTERM and SIGKILL when the rm orders a container stopped.
    pub stop_grace: Duration,
    /// The node's bearer credential for the rm (from the rm's local credentials file, or
    /// handed over by the operator). Never logged.
    pub credential: String,
    /// How many ended containers' directories (logs included) to keep for debugging; older
    /// ones are removed.
    pub keep_finished: usize,
    /// The node's disk rate, bytes per second, as the operator set it; `None` measures it at
    /// start ([`crate::disk`]).
    pub disk_rate: Option<f64>,
    /// Whether and how much of each ended container's logs go to the rm.
    pub logs: LogAggregation,
}

/// The variable every container is given the node's disk rate in, bytes per second (the
/// master's job typing reads it); not set while the rate is unknown.
pub const DISK_RATE_ENV: &str = "YARD_DISK_RATE_BYTES_PER_S";

struct Node {
    id: String,
    options: NmOptions,
    key: Mutex<Option<TokenKey>>,
    containers: Mutex<BTreeMap<String, Running>>,
    /// Ended since the last heartbeat the rm acknowledged.
    completed: Mutex<Vec<Ended>>,
    /// Directories of ended containers, oldest first: the last `keep_finished` stay.
    finished_dirs: Mutex<std::collections::VecDeque<PathBuf>>,
    /// Log uploads under way: a nodemanager that shuts down waits for them (a while).
    uploads: Mutex<tokio::task::JoinSet<()>>,
    cgroups: Cgroups,
    data: Arc<DataDir>,
    http: reqwest::Client,
    /// The disk rate (bytes per second, an `f64`'s bits; 0: unknown), known before the node
    /// registers and so before any container starts.
    disk_rate: AtomicU64,
    /// What `GET /metrics` serves.
    metrics: NmMetrics,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a container was not started, as the REST surface reports it.
struct Refused(StatusCode, String);

impl Refused {
    /// The reason label of `yard_nodemanager_container_start_refusals_total`.
    fn reason(&self) -> &'static str {
        match self.0 {
            StatusCode::SERVICE_UNAVAILABLE => "unregistered",
            StatusCode::FORBIDDEN => "token",
            StatusCode::CONFLICT => "conflict",
            StatusCode::INTERNAL_SERVER_ERROR => "environment",
            // A container id naming no application, or a command that cannot start.
            _ => "launch",
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1, "detail": null }))).into_response()
    }
}

impl Node {
    /// POSTs `body` to the rm and decodes its answer; any failure as one line for the log.
    async fn post_rm<B: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<R, String> {
        let url = format!("{}{path}", self.options.rm);
        let reply = self
            .http
            .post(&url)
            .bearer_auth(&self.options.credential)
            .json(body)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !reply.status().is_success() {
            let status = reply.status();
            let why = reply.text().await.unwrap_or_default();
            return Err(format!("{url} answered {status}: {why}"));
        }
        reply.json().await.map_err(|e| format!("{url}: {e}"))
    }

    async fn register(self: &Arc<Self>) -> Result<(), String> {
        self.reap();
        // Everything whose end the rm has not heard: a restarted rm takes these back (YARN's
        // work-preserving restart) and hears of the ended ones in the next heartbeat.
        let mut containers: Vec<NodeContainer> = lock(&self.containers)
            .values()
            .map(|r| NodeContainer {
                container_id: r.id.clone(),
                resource: size_of(r),
            })
            .collect();
        containers.extend(lock(&self.completed).iter().map(|e| NodeContainer {
            container_id: e.status.container_id.clone(),
            resource: e.resource,
        }));
        let body = RegisterNode {
            node_id: self.id.clone(),
            rack: self.options.rack.clone(),
            capability: self.options.capability,
            containers,
        };
        let registered: Registered = self.post_rm("/ws/v1/yard/nodes", &body).await?;
        let key = TokenKey::from_hex(&registered.container_key)
            .ok_or("the rm's container key is not 32 bytes of hex")?;
        let data_key = DataKey::from_hex(&registered.data_key)
            .ok_or("the rm's data key is not 32 bytes of hex")?;
        self.data.set_key(data_key);
        *lock(&self.key) = Some(key);
        self.metrics.registrations.inc();
        Ok(())
    }

    /// A container ended: kept for the rm until it acknowledges, and counted.
    fn record_end(&self, ended: Ended) {
        self.metrics.ended(ended.status.end);
        lock(&self.completed).push(ended);
    }

    /// Starts a container on a valid token for this node; a refusal is counted.
    async fn start(&self, s: StartContainer) -> Result<String, Refused> {
        let started = self.try_start(s).await;
        match &started {
            Ok(_) => self.metrics.launched.inc(),
            Err(refused) => self.metrics.refused(refused.reason()),
        }
        started
    }

    async fn try_start(&self, s: StartContainer) -> Result<String, Refused> {
        let key = lock(&self.key).clone().ok_or(Refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "not registered with the rm yet".into(),
        ))?;
        verify(&key, s.token.as_ref(), &self.id, now_ms())
            .map_err(|e| Refused(StatusCode::FORBIDDEN, e.to_string()))?;
        let token = s.token.expect("verified");
        if lock(&self.containers).contains_key(&token.container_id) {
            return Err(Refused(
                StatusCode::CONFLICT,
                format!("container {} is already running here", token.container_id),
            ));
        }
        // The node's values win over any a master chose: a task must not write another
        // application's map outputs.
        let mut env = s.env;
        let data_env = self.data.container_env(&token.container_id).map_err(|e| {
            let status = match e {
                EnvError::NoApplication(_) => StatusCode::BAD_REQUEST,
                EnvError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            };
            Refused(status, e.to_string())
        })?;
        env.extend(data_env);
        let disk_rate = f64::from_bits(self.disk_rate.load(Ordering::Relaxed));
        if disk_rate > 0.0 {
            env.insert(DISK_RATE_ENV.into(), format!("{disk_rate:.0}"));
        }
        let spec = ContainerSpec {
            id: token.container_id.clone(),
            command: s.command,
            env,
            memory_mb: token.memory_mb,
            vcores: token.vcores,
        };
        let running = launch(&spec, &self.options.work_dir, &self.cgroups)
            .await
            .map_err(|e| Refused(StatusCode::BAD_REQUEST, e.to_string()))?;
        tracing::info!(container = %spec.id, "started");
        lock(&self.containers).insert(spec.id.clone(), running);
        Ok(spec.id)
    }

    /// Keeps an ended container's directory for debugging while it is among the last
    /// `keep_finished`; removes the oldest beyond that.
    fn retire(&self, dir: PathBuf) {
        let old: Vec<PathBuf> = {
            let mut dirs = lock(&self.finished_dirs);
            dirs.push_back(dir);
            let excess = dirs.len().saturating_sub(self.options.keep_finished);
            dirs.drain(..excess).collect()
        };
        for d in old {
            if let Err(e) = std::fs::remove_dir_all(&d)
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(dir = %d.display(), error = %e, "cannot remove an ended container's directory");
            }
        }
    }

    /// An ended container's directory: its logs go to the rm first (log aggregation), then it
    /// is retired, so pruning never races the upload.
    fn ended_dir(self: &Arc<Self>, container: String, dir: PathBuf) {
        if !self.options.logs.enabled {
            return self.retire(dir);
        }
        let node = self.clone();
        let mut uploads = lock(&self.uploads);
        // Those done are reaped here: the set holds only what is under way.
        while uploads.try_join_next().is_some() {}
        uploads.spawn(async move {
            let o = &node.options;
            // Long enough for an rm restart; the logs stay here (until pruned) if it fails.
            let patience = Duration::from_secs(300);
            let to = crate::logs::Uploader {
                http: &node.http,
                rm: &o.rm,
                credential: &o.credential,
                node: &node.id,
            };
            let sent = crate::logs::upload(&to, &dir, &container, &o.logs, patience).await;
            match sent {
                Ok(()) => tracing::debug!(%container, "logs aggregated at the rm"),
                Err(why) => {
                    tracing::warn!(%container, %why, "cannot aggregate the container's logs at the rm; they stay on this node until pruned")
                }
            }
            node.retire(dir);
        });
    }

    /// Moves containers whose process ended into `completed`.
    fn reap(self: &Arc<Self>) {
        let mut retired = Vec::new();
        {
            let mut containers = lock(&self.containers);
            let ended: Vec<(String, Exit)> = containers
                .iter_mut()
                .filter_map(|(id, r)| r.try_exit().ok().flatten().map(|e| (id.clone(), e)))
                .collect();
            let mut completed = lock(&self.completed);
            for (id, exit) in ended {
                self.metrics.ended(ContainerEnd::Exited);
                let Some(r) = containers.remove(&id) else {
                    continue;
                };
                retired.push((id.clone(), r.dir.clone()));
                let code = match exit {
                    Exit::Code(c) => c,
                    Exit::Signal(s) => 128 + s, // the shell's convention
                };
                completed.push(Ended {
                    status: ContainerStatus {
                        container_id: id,
                        end: ContainerEnd::Exited,
                        exit_code: Some(code),
                    },
                    resource: size_of(&r),
                });
            }
        }
        // Directories are removed outside the locks: a start or a listing need not wait for it.
        for (id, dir) in retired {
            self.ended_dir(id, dir);
        }
    }

    async fn heartbeat(
        self: &Arc<Self>,
        sampler: &mut Sampler,
        elapsed_s: f64,
    ) -> Result<HeartbeatReply, String> {
        self.reap();
        let running: Vec<(String, u32)> = lock(&self.containers)
            .iter()
            .map(|(id, r)| (id.clone(), r.pid()))
            .collect();
        let completed: Vec<ContainerStatus> = lock(&self.completed)
            .iter()
            .map(|e| e.status.clone())
            .collect();
        let telemetry = sampler.sample(elapsed_s, &running);
        self.metrics.sampled(&telemetry);
        let body = NodeHeartbeat {
            node_id: self.id.clone(),
            running: running.iter().map(|(id, _)| id.clone()).collect(),
            completed: completed.clone(),
            telemetry,
        };
        let reply: HeartbeatReply = self
            .post_rm("/ws/v1/yard/nodes/heartbeat", &body)
            .await
            .inspect_err(|_| self.metrics.heartbeat_failures.inc())?;
        self.metrics.heartbeats.inc();
        // The rm has these now, unless it does not know this node (it restarted): then they
        // go with the registration. Anything that ended meanwhile waits for the next beat.
        if !reply.reregister {
            lock(&self.completed).retain(|e| !completed.contains(&e.status));
        }
        Ok(reply)
    }

    fn carry_out(self: &Arc<Self>, reply: HeartbeatReply) {
        for dataset in reply.delete_datasets {
            let data = self.data.clone();
            tokio::spawn(async move {
                match data.delete_dataset(&dataset).await {
                    Ok(bytes) => tracing::info!(%dataset, bytes, "deleted on the rm's order"),
                    Err(e) => {
                        tracing::warn!(%dataset, error = %e, "could not delete the dataset's blocks")
                    }
                }
            });
        }
        for id in reply.stop {
            let Some(mut running) = lock(&self.containers).remove(&id) else {
                continue;
            };
            let node = self.clone();
            tokio::spawn(async move {
                let exit = running.stop(node.options.stop_grace).await;
                tracing::info!(container = %id, ?exit, "stopped on the rm's order");
                node.ended_dir(id.clone(), running.dir.clone());
                let status = ContainerStatus {
                    container_id: id,
                    end: ContainerEnd::Killed,
                    exit_code: None,
                };
                let resource = size_of(&running);
                node.record_end(Ended { status, resource });
            });
        }
        for start in reply.start {
            let node = self.clone();
            tokio::spawn(async move {
                let id = start.token.as_ref().map(|t| t.container_id.clone());
                let resource = start
                    .token
                    .as_ref()
                    .map_or(Resource::default(), |t| Resource {
                        memory_mb: t.memory_mb,
                        vcores: t.vcores,
                    });
                if let Err(Refused(_, why)) = node.start(start).await {
                    tracing::warn!(%why, "a master the rm asked for was not started");
                    // The rm hears of it as an ended container, so the attempt fails over
                    // instead of holding its reservation forever.
                    if let Some(container_id) = id {
                        let status = ContainerStatus {
                            container_id,
                            end: ContainerEnd::LaunchFailed,
                            exit_code: None,
                        };
                        node.record_end(Ended { status, resource });
                    }
                }
            });
        }
    }
}

/// The size a container's token granted.
fn size_of(r: &Running) -> Resource {
    Resource {
        memory_mb: r.memory_mb,
        vcores: r.vcores,
    }
}

/// A container that ended, kept until the rm acknowledges it.
struct Ended {
    status: ContainerStatus,
    resource: Resource,
}

async fn info(State(node): State<Arc<Node>>) -> Json<serde_json::Value> {
    let blocks = node.data.inventory().await;
    if let Err(e) = &blocks {
        tracing::warn!(error = %e, "cannot list the node's blocks");
    }
    let blocks = blocks.ok();
    let cgroups = match &node.cgroups {
        Cgroups::Available(dir) => json!({ "available": true, "dir": dir }),
        Cgroups::Unavailable(why) => json!({ "available": false, "reason": why }),
    };
    Json(json!({ "nodeInfo": {
        "id": node.id,
        "rack": node.options.rack,
        "totalMemoryMb": node.options.capability.memory_mb,
        "totalVCores": node.options.capability.vcores,
        "numContainers": lock(&node.containers).len(),
        "registered": lock(&node.key).is_some(),
        "cgroups": cgroups,
        "dataDir": node.data.root(),
        "numBlocks": blocks.as_ref().map(Vec::len),
        "blockBytes": blocks.map(|b| b.iter().map(|b| b.bytes).sum::<u64>()),
    }}))
}

async fn containers(State(node): State<Arc<Node>>) -> Json<serde_json::Value> {
    let list: Vec<_> = lock(&node.containers)
        .values()
        .map(|r| json!({ "id": r.id, "state": "RUNNING", "pid": r.pid(), "dir": r.dir, "stdout": r.stdout, "stderr": r.stderr }))
        .collect();
    Json(json!({ "containers": { "container": list } }))
}

/// `?start=` of a log file (Hadoop's: negative for the last bytes).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LogStart {
    start: Option<i64>,
}

/// A container's log files (the application's job token).
async fn container_logs(
    State(node): State<Arc<Node>>,
    UrlPath(container): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Json<NodeContainerLogs>, crate::data::ApiError> {
    let dir = crate::logs::container_dir(&node.options.work_dir, &node.data, &headers, &container)?;
    let running = lock(&node.containers).contains_key(&container);
    crate::logs::list(&dir, &container, running).await
}

/// One of a container's log files (the application's job token).
async fn container_log(
    State(node): State<Arc<Node>>,
    UrlPath((container, file)): UrlPath<(String, String)>,
    query: Result<Query<LogStart>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, crate::data::ApiError> {
    let Query(q) = query.map_err(|r| {
        crate::data::ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "start is a byte offset, negative for the last bytes (start=-4096): {}",
                r.body_text()
            ),
        )
    })?;
    let dir = crate::logs::container_dir(&node.options.work_dir, &node.data, &headers, &container)?;
    crate::logs::serve(&dir, &container, &file, q.start).await
}

/// Every metric in Prometheus' text format (no credential: no label names a container).
async fn prometheus_metrics(State(node): State<Arc<Node>>) -> Response {
    node.reap();
    node.metrics
        .running
        .set(lock(&node.containers).len() as i64);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )],
        node.metrics.encode(),
    )
        .into_response()
}

async fn start_container(
    State(node): State<Arc<Node>>,
    body: Result<Json<StartContainer>, JsonRejection>,
) -> Response {
    let Json(start) = match body {
        Ok(b) => b,
        Err(r) => {
            return Refused(
                r.status(),
                format!(
                    "the request body is not a container start: {}",
                    r.body_text()
                ),
            )
            .into_response();
        }
    };
    match node.start(start).await {
        Ok(id) => (StatusCode::CREATED, Json(json!({ "containerId": id }))).into_response(),
        Err(refused) => refused.into_response(),
    }
}

/// The node's disk rate: the operator's, else measured in the work directory (0 if the probe
/// fails: unknown).
async fn disk_rate(options: &NmOptions) -> f64 {
    if let Some(rate) = options.disk_rate {
        tracing::info!(bytes_per_s = rate, "disk rate as configured");
        return rate;
    }
    let dir = options.work_dir.clone();
    match tokio::task::spawn_blocking(move || crate::disk::probe(&dir)).await {
        Ok(Ok(p)) => {
            tracing::info!(
                bytes_per_s = p.rate(),
                write_bytes_per_s = p.write_bytes_per_s,
                read_bytes_per_s = p.read_bytes_per_s,
                written = p.written_bytes,
                read = p.read_bytes,
                dir = %options.work_dir.display(),
                "disk rate measured (the slower of a sequential write and read)"
            );
            p.rate()
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, dir = %options.work_dir.display(), "cannot measure the disk rate; jobs cannot be typed by it until it is set: give the nodemanager --disk-rate");
            0.0
        }
        Err(e) => {
            tracing::warn!(error = %e, "the disk probe did not finish; set --disk-rate");
            0.0
        }
    }
}

/// Runs the nodemanager until `shutdown` resolves; `ready` hears the bound address first.
pub async fn serve(
    options: NmOptions,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    serve_with(options, DataSettings::default(), ready, shutdown).await
}

/// [`serve`] with the data service's settings.
pub async fn serve_with(
    options: NmOptions,
    data: DataSettings,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    std::fs::create_dir_all(&options.work_dir)?;
    let data = Arc::new(DataDir::open(&options.work_dir, data)?);
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let addr = listener.local_addr()?;
    let cgroups = Cgroups::detect(std::path::Path::new("/sys/fs/cgroup"));
    if let Cgroups::Unavailable(why) = &cgroups {
        tracing::warn!(%why, "containers run without cgroup limits");
    }
    let metrics = NmMetrics::new(options.capability);
    let node = Arc::new(Node {
        id: addr.to_string(),
        options,
        key: Mutex::new(None),
        containers: Mutex::new(BTreeMap::new()),
        completed: Mutex::new(Vec::new()),
        finished_dirs: Mutex::new(std::collections::VecDeque::new()),
        uploads: Mutex::new(tokio::task::JoinSet::new()),
        cgroups,
        data: data.clone(),
        http: reqwest::Client::new(),
        disk_rate: AtomicU64::new(0),
        metrics,
    });
    ready(addr);
    let beating = node.clone();
    let heartbeats = tokio::spawn(async move {
        let mut sampler = Sampler::new();
        let rate = disk_rate(&beating.options).await;
        beating.disk_rate.store(rate.to_bits(), Ordering::Relaxed);
        sampler.set_disk_rate(rate);
        let mut last = Instant::now();
        let mut registered = false;
        let mut tick = tokio::time::interval(beating.options.heartbeat);
        loop {
            tick.tick().await;
            if !registered {
                match beating.register().await {
                    Ok(()) => {
                        registered = true;
                        tracing::info!(node = %beating.id, "registered with the rm");
                    }
                    Err(why) => {
                        tracing::warn!(%why, "cannot register with the rm yet");
                        continue;
                    }
                }
            }
            let elapsed = last.elapsed().as_secs_f64();
            last = Instant::now();
            match beating.heartbeat(&mut sampler, elapsed).await {
                Ok(reply) => {
                    registered = !reply.reregister;
                    beating.carry_out(reply);
                }
                Err(why) => tracing::warn!(%why, "heartbeat failed"),
            }
        }
    });
    let router = Router::new()
        .route("/ws/v1/node/info", get(info))
        .route("/metrics", get(prometheus_metrics))
        .route(
            "/ws/v1/node/containers",
            get(containers).post(start_container),
        )
        .route(
            "/ws/v1/node/containers/{container}/logs",
            get(container_logs),
        )
        .route(
            "/ws/v1/node/containers/{container}/logs/{file}",
            get(container_log),
        )
        .layer(DefaultBodyLimit::max(1 << 20))
        .with_state(node.clone())
        // Merged after the 1 MiB layer, which so does not cover blocks: they stream under
        // their own limit.
        .merge(crate::data::router(data))
        // A bug that panics in a handler is a 500 for that request, not a dropped connection.
        .layer(tower_http::catch_panic::CatchPanicLayer::new());
    // Replies are small and come back to back: without TCP_NODELAY, Nagle's algorithm holds a
    // reply's last segment for the peer's delayed ACK (40 ms a round trip on Linux).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await;
    heartbeats.abort();
    // Containers do not outlive their nodemanager; their logs go to the rm like any ended
    // container's, and the uploads under way are given `SHUTDOWN_UPLOADS` to finish (what is
    // not sent by then stays in the work dir).
    let running: Vec<Running> = std::mem::take(&mut *lock(&node.containers))
        .into_values()
        .collect();
    for mut r in running {
        let _ = r.stop(node.options.stop_grace).await;
        node.ended_dir(r.id.clone(), r.dir.clone());
    }
    let mut uploads = std::mem::take(&mut *lock(&node.uploads));
    let drained = tokio::time::timeout(SHUTDOWN_UPLOADS, async {
        while uploads.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            left = uploads.len(),
            "log uploads not done at shutdown: those containers' logs stay in the work dir"
        );
    }
    served
}

/// How long a nodemanager that shuts down waits for its containers' log uploads.
const SHUTDOWN_UPLOADS: Duration = Duration::from_secs(10);
