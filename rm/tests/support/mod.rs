//! A small in-process rm for the tests that talk to it over its router: a cluster on a clock
//! the test sets, tokens of a fixed secret, and the calls nodes, masters and clients make.
//! Every HTTP test of the rm (`rest.rs`, `deadlines.rs`, `telemetry.rs`, `metrics.rs`,
//! `mapreduce_rest.rs`, `ui.rs`) uses this one.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use yard_rm::cluster::{Cluster, Settings};
use yard_rm::rest::{Clock, Rm, router};
use yard_wire::auth::{ClusterSecret, Principal};

pub const SECRET: [u8; 32] = [7; 32];

/// Dataset `name`: one block `b0` of 7 bytes on n1:8042.
pub fn one_block_dataset(name: &str) -> yard_wire::protocol::Dataset {
    yard_wire::protocol::Dataset {
        name: name.into(),
        created_ms: 0,
        blocks: vec![yard_wire::protocol::BlockReplicas {
            block: "b0".into(),
            bytes: 7,
            nodes: vec!["n1:8042".into()],
            sha256: None,
        }],
    }
}

/// A node's registration: rack r1, 4 GiB and 4 vcores, nothing running.
pub fn registration(id: &str) -> yard_wire::protocol::RegisterNode {
    yard_wire::protocol::RegisterNode {
        node_id: id.into(),
        rack: "r1".into(),
        capability: yard_wire::protocol::Resource {
            memory_mb: 4096,
            vcores: 4,
        },
        containers: Vec::new(),
    }
}
/// The rm's clock at the start, ms since the epoch.
pub const T0: i64 = 1_700_000_000_000;

pub fn token(p: Principal) -> String {
    ClusterSecret::new(SECRET).bearer_key().issue(&p)
}

/// One HTTP answer: status, content type, `Location` (if any), body text.
pub struct Answer {
    pub status: StatusCode,
    pub content_type: String,
    pub location: Option<String>,
    pub text: String,
}

impl Answer {
    /// The body as JSON; a body that is not JSON, as a JSON string.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| json!(self.text))
    }

    /// The status and the body as JSON.
    pub fn pair(&self) -> (StatusCode, Value) {
        (self.status, self.json())
    }
}

/// Every (path, method) the rm's router serves, from its route table.
pub fn served_routes() -> BTreeSet<(String, String)> {
    yard_rm::rest::routes()
        .into_iter()
        .flat_map(|(path, methods, _)| {
            methods
                .iter()
                .map(move |m| (path.to_owned(), (*m).to_owned()))
        })
        .collect()
}

/// The ids of the containers an allocate reply grants, in its order.
pub fn granted(reply: &Value) -> Vec<String> {
    reply["allocated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["containerId"].as_str().unwrap().to_owned())
        .collect()
}

pub struct Harness {
    pub rm: Rm,
    pub now: Arc<AtomicI64>,
}

impl Harness {
    /// A cluster of `settings` started at `T0`.
    pub fn new(settings: Settings) -> Self {
        Harness::at(settings, T0)
    }

    /// A cluster of `settings` started at `t0`, its clock there too.
    pub fn at(settings: Settings, t0: i64) -> Self {
        Harness::over(Cluster::new(settings, ClusterSecret::new(SECRET), t0), t0)
    }

    /// An rm over `cluster` (one of `SECRET`, as a restart restores it), started at `t0`, its
    /// clock there too.
    pub fn over(cluster: Cluster, t0: i64) -> Self {
        let now = Arc::new(AtomicI64::new(t0));
        let clock_now = now.clone();
        let clock: Clock = Arc::new(move || clock_now.load(Ordering::SeqCst));
        Harness {
            rm: Rm::in_memory(cluster, clock, t0),
            now,
        }
    }

    pub fn set_now(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    /// The credential the rightful caller of `uri` has: a node's for node routes, the current
    /// master's for an application's master routes, an admin's otherwise.
    pub fn rightful(&self, uri: &str) -> String {
        if uri.starts_with("/ws/v1/yard/nodes") {
            return token(Principal::Node { node: None });
        }
        let parts: Vec<&str> = uri.split('/').collect();
        if let ["", "ws", "v1", "yard", "apps", id, what] = parts[..]
            && ["register", "allocate", "unregister", "result", "recovery"].contains(&what)
        {
            let attempt = self
                .rm
                .cluster
                .lock()
                .unwrap()
                .current_attempt(id)
                .unwrap_or(1);
            return token(Principal::Master {
                app: id.into(),
                attempt,
            });
        }
        token(Principal::Admin {
            user: "operator".into(),
        })
    }

    /// A request with `bearer` (none: no credential) and `body` sent as it is, JSON or not.
    pub async fn send(
        &self,
        bearer: Option<&str>,
        method: Method,
        uri: &str,
        body: Option<String>,
    ) -> Answer {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json");
        if let Some(b) = bearer {
            request = request.header("authorization", format!("Bearer {b}"));
        }
        let request = request
            .body(body.map_or_else(Body::empty, Body::from))
            .unwrap();
        let response = router(self.rm.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let location = response
            .headers()
            .get(header::LOCATION)
            .map(|l| l.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            content_type,
            location,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// A request with `bearer` (none: no credential) and a JSON body.
    pub async fn call_as(
        &self,
        bearer: Option<&str>,
        method: Method,
        uri: &str,
        body: Option<Value>,
    ) -> Answer {
        self.send(bearer, method, uri, body.map(|b| b.to_string()))
            .await
    }

    /// A request from the rightful caller of `uri` with `body` sent as it is, JSON or not.
    pub async fn call_raw(
        &self,
        method: Method,
        uri: &str,
        body: Option<String>,
    ) -> (StatusCode, Value) {
        let bearer = self.rightful(uri);
        self.send(Some(&bearer), method, uri, body).await.pair()
    }

    /// A request from the rightful caller of `uri` with a JSON body.
    pub async fn call(
        &self,
        method: Method,
        uri: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call_raw(method, uri, body.map(|b| b.to_string()))
            .await
    }

    pub async fn get(&self, uri: &str) -> (StatusCode, Value) {
        self.call(Method::GET, uri, None).await
    }

    pub async fn post(&self, uri: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, uri, Some(body)).await
    }

    pub async fn put(&self, uri: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::PUT, uri, Some(body)).await
    }

    /// `GET uri`, which must answer 200: its body.
    pub async fn get_ok(&self, uri: &str) -> Value {
        let (status, v) = self.get(uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {v}");
        v
    }

    /// Registers node `id` with `vcores` cores and 1 GiB a core.
    pub async fn node(&self, id: &str, vcores: u32) {
        let body = json!({"nodeId": id, "rack": "r1",
            "capability": {"memoryMb": 1024 * u64::from(vcores), "vcores": vcores}});
        let (status, reply) = self.post("/ws/v1/yard/nodes", body).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
    }

    /// A heartbeat from `node` with this `telemetry`, nothing running and nothing ended,
    /// answered as it is.
    pub async fn telemetry(&self, node: &str, telemetry: Value) -> (StatusCode, Value) {
        let hb = json!({"nodeId": node, "running": [], "completed": [], "telemetry": telemetry});
        self.post("/ws/v1/yard/nodes/heartbeat", hb).await
    }

    /// A heartbeat from `node` with load `cpu_percent` and these containers ended (EXITED).
    pub async fn heartbeat(&self, node: &str, cpu_percent: f64, exited: &[&str]) -> Value {
        let completed: Vec<Value> = exited
            .iter()
            .map(|c| json!({"containerId": c, "end": "EXITED", "exitCode": 0}))
            .collect();
        let hb = json!({"nodeId": node, "running": [], "completed": completed,
            "telemetry": {"cpuPercent": cpu_percent, "load1m": 0.5, "load5m": 0.4, "load15m": 0.3,
                "memoryTotalBytes": 4u64 << 30, "memoryUsedBytes": 1u64 << 30,
                "diskReadBytesPerS": 0.0, "diskWriteBytesPerS": 0.0,
                "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0, "containers": [], "cores": 4}});
        let (status, reply) = self.post("/ws/v1/yard/nodes/heartbeat", hb).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        reply
    }

    /// The daemon's tick at `now`, `node` beating first so it stays RUNNING.
    pub async fn beat_and_tick(&self, node: &str, now: i64) {
        self.set_now(now);
        self.heartbeat(node, 10.0, &[]).await;
        self.rm.cluster.lock().unwrap().expire(now);
    }

    pub async fn new_id(&self) -> String {
        let (status, created) = self
            .post("/ws/v1/cluster/apps/new-application", json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        created["application-id"].as_str().unwrap().to_owned()
    }

    /// A submission of `id` (alice's job) with `extra` fields merged in, answered as it is.
    pub async fn submit(&self, id: &str, extra: Value) -> (StatusCode, Value) {
        let mut body = json!({"application-id": id, "application-name": "job", "user": "alice"});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        self.post("/ws/v1/cluster/apps", body).await
    }

    /// Submits an application with `extra` submission fields; its master's container is
    /// granted (and taken out of the launch queue, as a node's heartbeat would).
    pub async fn submitted(&self, extra: Value) -> String {
        let id = self.new_id().await;
        let (status, why) = self.submit(&id, extra).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{why}");
        self.rm.cluster.lock().unwrap().take_master_launches();
        id
    }

    /// A submitted application whose master registered with `registration`: running.
    pub async fn running(&self, extra: Value, registration: Value) -> String {
        self.registered(extra, registration).await.0
    }

    /// As `running`, with the rm's answer to the registration (the quota, for one).
    pub async fn registered(&self, extra: Value, registration: Value) -> (String, Value) {
        let id = self.submitted(extra).await;
        let (status, reply) = self
            .post(&format!("/ws/v1/yard/apps/{id}/register"), registration)
            .await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        (id, reply)
    }

    /// An allocate call asking for `n` containers anywhere.
    pub async fn allocate(&self, id: &str, n: u32, progress: f64) -> Value {
        let body = json!({"applicationId": id, "progress": progress, "releases": [],
            "asks": [{"priority": 1, "resourceName": "*",
                      "capability": {"memoryMb": 1024, "vcores": 1}, "numContainers": n}]});
        let (status, reply) = self
            .post(&format!("/ws/v1/yard/apps/{id}/allocate"), body)
            .await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        reply
    }

    /// The master of `id` unregisters, succeeded; the rm must take it (200).
    pub async fn unregister(&self, id: &str) {
        let (status, reply) = self
            .post(
                &format!("/ws/v1/yard/apps/{id}/unregister"),
                json!({"succeeded": true}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{reply}");
    }

    /// `GET /ws/v1/cluster/apps/{id}`, which must answer 200: YARN's view of the application.
    pub async fn app(&self, id: &str) -> Value {
        let (status, app) = self.get(&format!("/ws/v1/cluster/apps/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{app}");
        app["app"].clone()
    }
}
