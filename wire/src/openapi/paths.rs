//! Every operation the rm serves, as one table: its route, who may call it, its parameters,
//! and the wire types it reads and answers with (named by type, so a renamed or retyped reply
//! moves the document with it). `rm/tests/rest.rs` checks these are exactly the router's
//! routes, both ways; schemathesis (`tests/schemathesis.rs`) that each answers as it says.
//! The document's schemas are what these operations name and what those types contain, so a
//! new route is one entry here (its wire types deriving `ToSchema` behind the feature, as these
//! do) and `YARD_BLESS=1 cargo test -p yard-rm --test openapi`.

use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::hadoop::{
    AppAttemptReply, AppAttemptsReply, AppPriority, AppQueue, AppStatisticsReply, AppTimeoutReply,
    AppTimeoutsReply, ContainerReply, ContainersReply, NewApplication, SchedulerReply,
};
use crate::jobs::{AnswerReply, JobReply, JobsReply, ScanJoined, ScanLeft, ScansReply};
use crate::logs::{AppLogsReply, LogStored};
use crate::outputs::{DatasetRemoved, OutputCommit, OutputGrant, ReadGrant};
use crate::protocol::{
    AllocateReply, AllocateRequest, Dataset, HeartbeatReply, JoinScan, MasterAnswer, NodeHeartbeat,
    RecoveryEntries, RegisterNode, Registered, Unregister,
};
use crate::replies::{
    BooksReply, DatasetsReply, FinalFiguresKept, HealthReply, HistoryReply, IssuedToken,
    MasterRegistered, Recovery, RecoveryKept, TargetGroup, Unregistered, UploadGrant, WhoAmI,
};
use crate::views::{
    AppReply, AppStateView, AppsReply, ClusterInfoReply, ClusterMetricsReply, NodeReply,
    NodesReply, SetDeadline, YardAppReply,
};

/// Which shape an operation's refusals take (`rm/src/rest/mod.rs`): YARN's `RemoteException`
/// on Hadoop's routes, `{"error", "detail"}` on yard's.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    Hadoop,
    Yard,
}
use Shape::{Hadoop, Yard};

/// One operation: a method on a path, and its OpenAPI operation object.
pub(super) struct Op {
    pub method: &'static str,
    pub path: &'static str,
    pub operation: Map<String, Value>,
    /// The wire types it names and every type they contain, by name.
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

/// `{"$ref": …}` to a component schema.
fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// A JSON body of type `T`.
fn json_content<T: ToSchema>() -> Value {
    json!({ "application/json": { "schema": schema_ref(&T::name()) } })
}

impl Op {
    fn new(method: &'static str, path: &'static str, shape: Shape, summary: &str) -> Op {
        let refusal = match shape {
            Hadoop => "RemoteException",
            Yard => "Error",
        };
        let mut operation = Map::new();
        operation.insert("summary".into(), json!(summary));
        operation.insert(
            "responses".into(),
            json!({ "4XX": { "$ref": format!("#/components/responses/{refusal}") } }),
        );
        Op {
            method,
            path,
            operation,
            schemas: Vec::new(),
        }
    }

    fn get(path: &'static str, shape: Shape, summary: &str) -> Op {
        Op::new("get", path, shape, summary)
    }

    fn post(path: &'static str, shape: Shape, summary: &str) -> Op {
        Op::new("post", path, shape, summary)
    }

    fn put(path: &'static str, shape: Shape, summary: &str) -> Op {
        Op::new("put", path, shape, summary)
    }

    fn delete(path: &'static str, shape: Shape, summary: &str) -> Op {
        Op::new("delete", path, shape, summary)
    }

    /// `T`'s schema and every schema it refers to, for the document's components.
    fn named<T: ToSchema>(&mut self) {
        self.schemas.push((T::name().into_owned(), T::schema()));
        T::schemas(&mut self.schemas);
    }

    /// Needs no token.
    fn open(mut self) -> Op {
        self.operation.insert("security".into(), json!([]));
        self
    }

    fn param(mut self, parameter: Value) -> Op {
        let list = self
            .operation
            .entry("parameters")
            .or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            list.push(parameter);
        }
        self
    }

    /// A required JSON body of type `T`.
    fn body<T: ToSchema>(mut self) -> Op {
        self.named::<T>();
        self.body_raw(json!({ "required": true, "content": json_content::<T>() }))
    }

    /// A required JSON body the rm reads into a type of its own (its schema by hand).
    fn body_schema(self, schema: Value) -> Op {
        self.body_raw(
            json!({ "required": true, "content": { "application/json": { "schema": schema } } }),
        )
    }

    fn body_raw(mut self, body: Value) -> Op {
        self.operation.insert("requestBody".into(), body);
        self
    }

    /// Answers `status` with a JSON body of type `T`.
    fn reply<T: ToSchema>(self, status: &str, description: &str) -> Op {
        self.reply_with::<T>(status, description, json!({}))
    }

    /// As [`Op::reply`], with more of the response object (its headers).
    fn reply_with<T: ToSchema>(mut self, status: &str, description: &str, more: Value) -> Op {
        self.named::<T>();
        let mut response = json!({ "description": description, "content": json_content::<T>() });
        if let (Value::Object(response), Value::Object(more)) = (&mut response, more) {
            response.extend(more);
        }
        self.response(status, response)
    }

    /// Answers `status` with a JSON list of `T`.
    fn reply_list<T: ToSchema>(mut self, status: &str, description: &str) -> Op {
        self.named::<T>();
        let list = json!({ "type": "array", "items": schema_ref(&T::name()) });
        let content = json!({ "application/json": { "schema": list } });
        self.response(
            status,
            json!({ "description": description, "content": content }),
        )
    }

    /// Answers `status` with a response that is not a wire type (text, no body, a refusal).
    fn response(mut self, status: &str, response: Value) -> Op {
        if let Some(Value::Object(responses)) = self.operation.get_mut("responses") {
            responses.insert(status.into(), response);
        }
        self
    }
}

/// A required path parameter.
fn path(name: &str, description: &str, schema: Value) -> Value {
    let mut p = json!({ "name": name, "in": "path", "required": true, "schema": schema });
    if !description.is_empty() {
        p["description"] = json!(description);
    }
    p
}

/// An optional query parameter.
fn query(name: &str, description: &str, schema: Value) -> Value {
    let mut p = json!({ "name": name, "in": "query", "required": false, "schema": schema });
    if !description.is_empty() {
        p["description"] = json!(description);
    }
    p
}

/// `{id}`: an application the rm issued.
fn app_id() -> Value {
    path(
        "id",
        "an application id the rm issued (new-application): application_<cluster timestamp>_<sequence>; no other id names an application",
        json!({ "type": "string", "pattern": "^application_[0-9]{1,19}_[0-9]{1,10}$" }),
    )
}

/// A dataset's name as a path segment (`data.rs`'s rule for a plain name).
fn dataset_name(name: &str) -> Value {
    path(
        name,
        "a dataset's name: 1 to 200 letters, digits, '_', '-' or '.', not . or ..",
        json!({ "type": "string", "pattern": "^([A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}|\\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,198}|\\.\\.[A-Za-z0-9_.-]{1,198})$" }),
    )
}

/// `{attempt}`: YARN's attempt id, or its number.
fn attempt() -> Value {
    path(
        "attempt",
        "YARN's attempt id of this application (appattempt_<cluster timestamp>_<sequence>_<n>), or n alone; n from 1. An attempt id of another application names no attempt of this one (404)",
        json!({ "type": "string", "pattern": "^(appattempt_[0-9]{1,19}_[0-9]{1,10}_0*[1-9][0-9]{0,8}|0*[1-9][0-9]{0,8})$" }),
    )
}

/// Every operation of the rm, in the route table's order.
pub(super) fn operations() -> Vec<Op> {
    vec![
        Op::post("/ws/v1/yard/nodes", Yard, "A nodemanager registers; the reply carries the container-token key")
            .body::<RegisterNode>()
            .reply::<Registered>("200", "OK"),
        Op::post("/ws/v1/yard/nodes/heartbeat", Yard, "A nodemanager's heartbeat: ended containers and load; the reply: containers to stop, masters to start, register again")
            .body::<NodeHeartbeat>()
            .reply::<HeartbeatReply>("200", "OK"),
        Op::post("/ws/v1/yard/apps/{id}/register", Yard, "The application master registers: the application runs. The body may say where the master serves its status (trackingUrl) and, for the deadline policies, its job: maps and reduces (both, or neither), a profile (ARIA's: seconds per phase) or a jobKind whose profile the rm reads from the profile store (--profiles-db). The reply carries the quota")
            .param(app_id())
            .body_raw(json!({"required": false, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": false, "properties": {"trackingUrl": {"type": "string", "description": "http(s) URL of the master's own status; clients follow it for progress"}, "maps": {"type": "integer", "minimum": 0, "maximum": 10000000, "description": "the job's map tasks"}, "reduces": {"type": "integer", "minimum": 0, "maximum": 10000000, "description": "the job's reduce tasks"}, "jobKind": {"type": "string", "description": "the profile store's job kind (app:params@dataset), 1 to 200 printable characters"}, "profile": {"$ref": "#/components/schemas/JobProfile"}}}}}}))
            .reply::<MasterRegistered>("200", "OK"),
        Op::post("/ws/v1/yard/apps/{id}/allocate", Yard, "The master's asks and releases; the reply: granted containers (with tokens) and completed ones")
            .param(app_id())
            .body::<AllocateRequest>()
            .reply::<AllocateReply>("200", "OK"),
        Op::post("/ws/v1/yard/apps/{id}/unregister", Yard, "The master unregisters with its final status and, optionally, its diagnostics (why it failed)")
            .param(app_id())
            .body::<Unregister>()
            .reply::<Unregistered>("200", "OK"),
        Op::get("/ws/v1/yard/openapi.json", Yard, "This document")
            .open()
            .response("200", json!({"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}})),
        Op::get("/metrics", Yard, "Every rm metric in Prometheus' text format 0.0.4 (yard_rm_*): heartbeats, allocation latency, apps, nodes and containers by state, node load, classifier verdicts, quotas, spare grants and kills, deadline outcomes, processed-fraction and estimation-error histograms. No credential: no label names an application, container or user")
            .open()
            .response("200", json!({"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}})),
        Op::get("/ws/v1/yard/prometheus/targets", Yard, "Prometheus http_sd targets: the running nodemanagers and MapReduce masters, as [{targets: [host:port], labels: {yard_component}}], and every finished master whose final figures the rm keeps (10 minutes), as a target at the rm with labels instance (the master's host:port) and __metrics_path__ (/ws/v1/yard/apps/{id}/metrics). The scrape token (yard auth token --scrape) or an admin's: it says where masters listen")
            .reply_list::<TargetGroup>("200", "OK"),
        Op::get("/ws/v1/cluster/info", Hadoop, "clusterInfo: id, startedOn, state, versions")
            .open()
            .reply::<ClusterInfoReply>("200", "OK"),
        Op::get("/ws/v1/cluster/metrics", Hadoop, "clusterMetrics: applications by state, memory and vcores, nodes")
            .reply::<ClusterMetricsReply>("200", "OK"),
        Op::get("/ws/v1/cluster/scheduler", Hadoop, "scheduler.schedulerInfo (YARN's shape): which cluster policy runs (type: fifoScheduler, fairScheduler, edfScheduler, minEdfScheduler, minEdfWcScheduler; policy: yard's name, as `yard rm --scheduler` takes it), the cluster's capacity (numNodes, totalNodeCapacity, usedNodeCapacity, availNodeCapacity in MB, numContainers), masterShare and mastersUsed, MinEDF-WC's spareAllocations and spareKills (and of them spareMapAllocations and spareMapKills), and apps.app[]: every unfinished application's id, state, deadlineMs, runningContainers, maps, reduces, profiled and quota")
            .reply::<SchedulerReply>("200", "OK"),
        Op::get("/ws/v1/cluster/nodes", Hadoop, "nodes.node[]: id, rack, state, lastHealthUpdate, numContainers, totalResource, resourceUtilization (YARN's), yardLoad (the last load sample); filtered by states, state and healthy (an unknown value or parameter is a 400)")
            .param(query("states", "comma-separated node states: NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN", json!({"type": "string", "pattern": "^((DECOMMISSIONING|DECOMMISSIONED|UNHEALTHY|REBOOTED|SHUTDOWN|RUNNING|LOST|NEW)(,(DECOMMISSIONING|DECOMMISSIONED|UNHEALTHY|REBOOTED|SHUTDOWN|RUNNING|LOST|NEW))*)?$"})))
            .param(query("state", "one node state (older form; joins states)", json!({"type": "string", "pattern": "^((DECOMMISSIONING|DECOMMISSIONED|UNHEALTHY|REBOOTED|SHUTDOWN|RUNNING|LOST|NEW)(,(DECOMMISSIONING|DECOMMISSIONED|UNHEALTHY|REBOOTED|SHUTDOWN|RUNNING|LOST|NEW))*)?$"})))
            .param(query("healthy", "true: healthy nodes only; false: unhealthy (lost) ones", json!({"type": "boolean"})))
            .reply::<NodesReply>("200", "OK"),
        Op::get("/ws/v1/cluster/nodes/{id}", Hadoop, "One node, as in the list, with yardLoadHistory: its recent load samples, oldest first")
            .param(path("id", "", json!({"type": "string"})))
            .reply::<NodeReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps", Hadoop, "apps.app[]: each with YARN's 26 app fields and yard's deadlineMs, deadlineOutcome (met, empty, missed or pending), quota (null under fifo, fair and edf) and applicationTags (comma-separated). Every filter YARN documents is honoured, and yard's search, outcome, sort and offset page the list on the rm (apps.total: how many matched before offset and limit); a value that makes no sense (an unknown state, a negative time, an end before its begin, limit 0, an unknown sort key) or an unknown parameter is a 400. A user lists its own applications, an admin every one")
            .param(query("states", "comma-separated application states, e.g. RUNNING,ACCEPTED (case-insensitive)", json!({"type": "string", "pattern": "^((NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW)(,(NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW))*)?$"})))
            .param(query("state", "one application state (YARN's deprecated form; joins states)", json!({"type": "string", "pattern": "^((NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW)(,(NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW))*)?$"})))
            .param(query("finalStatus", "UNDEFINED, SUCCEEDED, FAILED or KILLED", json!({"type": "string", "enum": ["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED"]})))
            .param(query("user", "only this user's", json!({"type": "string"})))
            .param(query("queue", "only this queue's", json!({"type": "string"})))
            .param(query("name", "only applications of this name", json!({"type": "string"})))
            .param(query("limit", "at most this many (1 or more)", json!({"type": "integer", "minimum": 1, "maximum": i64::MAX})))
            .param(query("startedTimeBegin", "started at or after, ms since the epoch", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})))
            .param(query("startedTimeEnd", "started at or before, ms since the epoch", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})))
            .param(query("finishedTimeBegin", "finished at or after, ms since the epoch (unfinished applications have finishedTime 0)", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})))
            .param(query("finishedTimeEnd", "finished at or before, ms since the epoch", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})))
            .param(query("applicationTypes", "comma-separated types (case-insensitive)", json!({"type": "string"})))
            .param(query("applicationTags", "comma-separated tags: applications with any of them (case-insensitive)", json!({"type": "string"})))
            .param(query("deSelects", "fields to leave out: resourceRequests, timeouts, appNodeLabelExpression, amNodeLabelExpression, resourceInfo", json!({"type": "string", "pattern": "^((appNodeLabelExpression|amNodeLabelExpression|resourceRequests|resourceInfo|timeouts)(,(appNodeLabelExpression|amNodeLabelExpression|resourceRequests|resourceInfo|timeouts))*)?$"})))
            .param(query("search", "yard's: applications whose id or name contains this (case-insensitive)", json!({"type": "string"})))
            .param(query("outcome", "yard's: comma-separated deadline outcomes: met, empty, missed, pending, none (no deadline)", json!({"type": "string", "pattern": "^((met|empty|missed|pending|none)(,(met|empty|missed|pending|none))*)?$"})))
            .param(query("sort", "yard's: the order, by id, name, user, queue, applicationType, state, startedTime, finishedTime, progress or deadlineMs (none last); a leading - for descending; ties by id. Without it, by id", json!({"type": "string", "pattern": "^(-?(id|name|user|queue|applicationType|state|startedTime|finishedTime|progress|deadlineMs))?$"})))
            .param(query("offset", "yard's: how many matching applications to skip before limit counts (0 or more); apps.total says how many matched", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})))
            .reply::<AppsReply>("200", "OK"),
        Op::post("/ws/v1/cluster/apps", Hadoop, "Submit an application (Hadoop's submission context): application-id, application-name, queue, user, priority (capped to the cluster's maximum, 0, as YARN does), am-container-spec (commands.command: a command or a list, run under /bin/sh -c; environment.entry[]; YARN's expansion {{VAR}} -> $VAR, <CPS> -> ':', <LOG_DIR> -> the container's directory, variables using it exported by the master's shell), max-app-attempts (1 to the rm's; 0 or less takes the rm's), resource {memory, vCores} (the master's container, at most the largest node's), application-type (at most 20 characters; YARN when absent), application-tags; yard's deadline-ms. unmanaged-AM or keep-containers-across-application-attempts true, a reservation-id and local-resources are 400s (yard has none of these). The deadline is deadline-ms, or a tag deadline=<epoch ms>; a deadline in the past, not a whole number, or out of 1..=253402300799999 is a 400 naming the field. 202 with a Location header (the application's report) and no body, as YARN")
            .body_schema(schema_ref("Submission"))
            .response("202", json!({"description": "Accepted: Location names the application's report; no body"})),
        Op::post("/ws/v1/cluster/apps/new-application", Hadoop, "{application-id, maximum-resource-capability {memory, vCores}}: an id to submit under, and the largest container the cluster could hold (its largest running node)")
            .reply::<NewApplication>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}", Hadoop, "One application; with yard's deadlineMs, deadlineOutcome, quota and applicationTags")
            .param(app_id())
            .reply::<AppReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/appattempts", Hadoop, "appAttempts.appAttempt[]: each master attempt's container and node")
            .param(app_id())
            .reply::<AppAttemptsReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/state", Hadoop, "The application's state")
            .param(app_id())
            .reply::<AppStateView>("200", "OK"),
        Op::put("/ws/v1/cluster/apps/{id}/state", Hadoop, "Kill ({state: KILLED}; any other state is a 400). The first PUT on a live application answers 202 {state: KILLED} with a Location header (its containers are being stopped); a PUT on an application in a final state answers 200 with that state, so YARN's 'repeat the PUT until 200' loop ends")
            .param(app_id())
            .body_schema(schema_ref("NewState"))
            .reply::<AppStateView>("200", "Already in a final state: {state}")
            .reply::<AppStateView>("202", "Killed: its containers are being stopped; Location names the application's report"),
        Op::get("/ws/v1/yard/apps/{id}", Yard, "What Hadoop's application report lacks: the deadline and where the application stands against it (deadlineOutcome), the processed fraction and the answer")
            .param(app_id())
            .reply::<YardAppReply>("200", "yard's view of the application"),
        Op::put("/ws/v1/yard/apps/{id}/deadline", Yard, "The client sets when it wants the answer (409 once the application has ended)")
            .param(app_id())
            .body::<SetDeadline>()
            .reply::<YardAppReply>("200", "yard's view of the application"),
        Op::put("/ws/v1/yard/apps/{id}/result", Yard, "A running application's master reports its answer and the fraction of the input it covers; the last report stands")
            .param(app_id())
            .body::<MasterAnswer>()
            .reply::<YardAppReply>("200", "yard's view of the application"),
        Op::get("/ws/v1/yard/apps/{id}/metrics", Yard, "A finished MapReduce master's final figures (its last /metrics, Prometheus' text format 0.0.4), kept 10 minutes after it left them; 404 after. The scrape token or an admin's")
            .param(app_id())
            .response("200", json!({"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}})),
        Op::put("/ws/v1/yard/apps/{id}/metrics", Yard, "The application's current master, ending, leaves its final figures (its /metrics text, at most 256 KiB) for Prometheus to scrape at the rm once it is gone. The master's token only")
            .param(app_id())
            .body_raw(json!({"required": true, "content": {"text/plain": {"schema": {"type": "string"}}}}))
            .reply::<FinalFiguresKept>("200", "{application, bytes, keptMs}"),
        Op::get("/ws/v1/yard/datasets", Yard, "Every dataset: name, block count, bytes")
            .reply::<DatasetsReply>("200", "OK"),
        Op::get("/ws/v1/yard/datasets/{name}", Yard, "A dataset's block map: each block's size and the nodes holding its replicas")
            .param(dataset_name("name"))
            .reply::<Dataset>("200", "the dataset's block map"),
        Op::put("/ws/v1/yard/datasets/{name}", Yard, "Records (or replaces) a dataset's block map once its blocks are on the nodes (`yard data put` does both)")
            .param(dataset_name("name"))
            .body::<Dataset>()
            .reply::<Dataset>("200", "the dataset's block map"),
        Op::delete("/ws/v1/yard/datasets/{name}", Yard, "Removes a dataset (HDFS's `-rm -r`; `yard data rm`), for its owner or an admin: it leaves the catalog at once and its blocks leave its running nodes with their next heartbeats; until then the name is taken (409). A dataset an unfinished MapReduce job reads or writes is a 409 naming the job")
            .param(dataset_name("name"))
            .reply::<DatasetRemoved>("200", "{dataset, nodes}: how many running nodes delete its blocks"),
        Op::post("/ws/v1/yard/datasets/{name}/upload-grant", Yard, "A grant to upload the dataset's blocks to the nodemanagers (`Authorization: Bearer` on each block PUT), for its owner, an admin, or anyone when the dataset is new: {token, expiresMs} (valid 1 h)")
            .param(dataset_name("name"))
            .reply::<UploadGrant>("200", "OK"),
        Op::post("/ws/v1/yard/datasets/{name}/read-grant", Yard, "A grant to read the dataset's blocks from the nodemanagers (`Authorization: Bearer` on each block GET), for any user or admin (datasets are not private: any user lists them and runs jobs over them); `yard data cat|get` use it: {token, expiresMs} (valid 1 h)")
            .param(dataset_name("name"))
            .reply::<ReadGrant>("200", "OK"),
        Op::post("/ws/v1/yard/apps/{id}/output-grant", Yard, "A running MapReduce job's master (its current attempt) asks for the upload grant of its job's output dataset, which must still be free (else 409), and the running nodes its tasks place their parts on: {dataset, token, expiresMs, nodes} (valid 24 h)")
            .param(app_id())
            .reply::<OutputGrant>("200", "OK"),
        Op::put("/ws/v1/yard/apps/{id}/output", Yard, "A running MapReduce job's master commits its output (Hadoop's job commit): the parts its accepted attempts wrote, one block each, become the job's output dataset, owned by the job's user; answered once committed; 409 if the name was taken meanwhile")
            .param(app_id())
            .body::<OutputCommit>()
            .reply::<Dataset>("200", "the dataset's block map")
            .response("5XX", json!({"$ref": "#/components/responses/Error"})),
        Op::get("/ws/v1/yard/auth/whoami", Yard, "The caller's principal as the rm reads its token: {principal: {kind: admin|user|master|node, …}}")
            .reply::<WhoAmI>("200", "OK"),
        Op::post("/ws/v1/yard/auth/tokens", Yard, "Admins only: issue a user's token ({\"user\": NAME}), one node's credential ({\"node\": HOST:PORT}) or the cluster's read-only scrape token ({\"scrape\": true}: the scrape targets and metrics only); answers {token, principal}")
            .body_schema(json!({"description": "whose token: a user's, one node's credential, or the scrape token (exactly one)", "oneOf": [{"type": "object", "required": ["user"], "properties": {"user": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}, "scrape": {"type": "boolean", "enum": [false]}}, "additionalProperties": false}, {"type": "object", "required": ["node"], "properties": {"node": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$", "description": "HOST:PORT"}, "scrape": {"type": "boolean", "enum": [false]}}, "additionalProperties": false}, {"type": "object", "required": ["scrape"], "properties": {"scrape": {"type": "boolean", "enum": [true]}}, "additionalProperties": false}]}))
            .reply::<IssuedToken>("200", "OK"),
        Op::get("/ws/v1/yard/health", Yard, "Whether the rm can write its state store: 200 {health: {store: ok}}, or 503 with the store's error")
            .open()
            .reply::<HealthReply>("200", "OK")
            .response("503", json!({"$ref": "#/components/responses/Error"})),
        Op::get("/ws/v1/yard/history", Yard, "The cluster over the last hour, as the rm sampled it on its tick (at most every stepMs, kept spanMs, oldest first; in memory, so a restarted rm starts anew): each point's allocated and total memory and vcores, containers, running and pending applications and running nodes, in Hadoop's cluster metrics' names. Counts only, so any caller's token")
            .reply::<HistoryReply>("200", "OK"),
        Op::get("/ws/v1/yard/books", Yard, "The rm's container book (admins only): {books: {consistent, problem, nodes: [{nodeId, state, containers}]}}. `consistent` says whether its invariants hold: the book holds exactly what the scheduler holds, for the same application and node, no node beyond its capacity, no container on a lost node, no id twice")
            .reply::<BooksReply>("200", "OK"),
        Op::get("/ws/v1/yard/apps/{id}/logs", Yard, "The application's containers' logs (YARN's `yarn logs -applicationId`): each file's container, node, size, whether it was cut and where it is read from (the aggregated store once its container ended and its node uploaded it, else its nodemanager), and the containers whose logs are missing and why. The owner or an admin")
            .param(path("id", "", json!({"type": "string"})))
            .param(query("container", "Only this container's logs", json!({"type": "string"})))
            .reply::<AppLogsReply>("200", "OK"),
        Op::get("/ws/v1/yard/apps/{id}/logs/{container}/{file}", Yard, "One log file of one of the application's containers, as text; `start` as Hadoop's nodemanager takes it (negative: the last bytes). The owner or an admin")
            .param(path("id", "", json!({"type": "string"})))
            .param(path("container", "", json!({"type": "string"})))
            .param(path("file", "", json!({"type": "string", "enum": ["stdout", "stderr"]})))
            .param(query("start", "", json!({"type": "integer", "format": "int64"})))
            .response("200", json!({"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}}))
            .response("502", json!({"description": "The container's nodemanager did not answer", "content": {"application/json": {"schema": {"type": "object"}}}})),
        Op::put("/ws/v1/yard/apps/{id}/logs/{container}/{file}", Yard, "A nodemanager uploads an ended container's log file (its last bytes, at most its cap), at most 64 MiB (log aggregation). Its node credential only")
            .param(path("id", "", json!({"type": "string"})))
            .param(path("container", "", json!({"type": "string"})))
            .param(path("file", "", json!({"type": "string", "enum": ["stdout", "stderr"]})))
            .param(json!({"name": "node", "in": "query", "required": true, "schema": {"type": "string"}}))
            .param(json!({"name": "bytes", "in": "query", "required": true, "description": "How many bytes the container wrote to the file", "schema": {"type": "integer", "minimum": 0}}))
            .param(json!({"name": "cap", "in": "query", "required": true, "description": "The node's per-container cap, bytes", "schema": {"type": "integer", "minimum": 0}}))
            .body_raw(json!({"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}))
            .reply::<LogStored>("201", "{bytes, cut}"),
        Op::get("/ws/v1/yard/apps/{id}/recovery", Yard, "What the application's masters kept for a next attempt (the current attempt's master only): {attempt, entries}")
            .param(app_id())
            .reply::<Recovery>("200", "the current attempt and every entry kept, by key"),
        Op::put("/ws/v1/yard/apps/{id}/recovery", Yard, "A running application's master keeps entries for its next attempt (yard's masters: one per finished map, with where its output is); a key written again is replaced; answered once committed; 507 past 200,000 entries")
            .param(app_id())
            .body::<RecoveryEntries>()
            .reply::<RecoveryKept>("200", "how many entries the application keeps now")
            .response("5XX", json!({"$ref": "#/components/responses/Error"})),
        Op::post("/ws/v1/yard/mapreduce/jobs", Yard, "Submit a MapReduce job (a built-in app over a dataset, its task policy and deadline); the rm starts its master")
            .body_schema(schema_ref("MapReduceSubmission"))
            .reply_with::<JobReply>("202", "Accepted: the job's view; `Location` names it", json!({"headers": {"Location": {"schema": {"type": "string"}, "description": "/ws/v1/yard/mapreduce/jobs/{id}"}}})),
        Op::get("/ws/v1/yard/mapreduce/jobs", Yard, "The caller's MapReduce jobs (an admin's: all)")
            .param(query("show", "active (default): not yet ended; all", json!({"type": "string", "enum": ["active", "all"]})))
            .param(query("ids", "only these applications: comma-separated ids, at most 200 (each not a job, or not the caller's, is left out)", json!({"type": "string", "pattern": "^(application_[0-9]+_[0-9]+)?(,application_[0-9]+_[0-9]+)*$"})))
            .reply::<JobsReply>("200", "{\"jobs\": [the job's view]}"),
        Op::get("/ws/v1/yard/mapreduce/jobs/{id}", Yard, "A MapReduce job: state, the job as submitted, its master's progress, the estimate against the deadline, the answer once there is one")
            .param(app_id())
            .reply::<JobReply>("200", "the job's view"),
        Op::get("/ws/v1/yard/mapreduce/jobs/{id}/answer", Yard, "A MapReduce job's answer with its processed fraction and error bounds; 409 while it runs, 410 if it ended without one")
            .param(app_id())
            .reply::<AnswerReply>("200", "the answer"),
        Op::get("/ws/v1/yard/mapreduce/scans", Yard, "The shared scans running: per dataset, the application whose master hosts the scan and its address")
            .reply::<ScansReply>("200", "{\"scans\":[{\"dataset\",\"host\",\"url\"}]}"),
        Op::post("/ws/v1/yard/mapreduce/scans/{dataset}", Yard, "A shared-scan job's master asks who scans the dataset: the running host, or itself (it hosts from now on). Masters only.")
            .param(dataset_name("dataset"))
            .body::<JoinScan>()
            .reply::<ScanJoined>("200", "{\"dataset\",\"host\",\"url\",\"hosting\",\"token\"}: token is the scan's credential, which the host asks of its riders"),
        Op::delete("/ws/v1/yard/mapreduce/scans/{dataset}", Yard, "The host stops taking jobs; the next job over the dataset hosts anew. The host's master only.")
            .param(dataset_name("dataset"))
            .reply::<ScanLeft>("200", "{\"dataset\",\"left\"}"),
        Op::get("/ws/v1/cluster", Hadoop, "clusterInfo, as /ws/v1/cluster/info (YARN serves both)")
            .open()
            .reply::<ClusterInfoReply>("200", "OK"),
        Op::get("/cluster", Hadoop, "clusterInfo, as /ws/v1/cluster/info: where YARN's web UI is, so that clients probing an rm (yarn-api-client's check_is_active_rm) find one; yard serves no HTML")
            .open()
            .reply::<ClusterInfoReply>("200", "OK"),
        Op::get("/ws/v1/cluster/appstatistics", Hadoop, "appStatInfo.statItem[]: {state, type, count} for each asked state (every state when none), of one application type (* for any; two or more are a 400, as YARN)")
            .param(query("states", "comma-separated application states", json!({"type": "string", "pattern": "^((NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW)(,(NEW_SAVING|SUBMITTED|ACCEPTED|FINISHED|RUNNING|FAILED|KILLED|NEW))*)?$"})))
            .param(query("applicationTypes", "at most one application type", json!({"type": "string", "pattern": "^[^,]*$"})))
            .reply::<AppStatisticsReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/appattempts/{attempt}", Hadoop, "appAttempt: one attempt (attempt is YARN's appattempt_<ts>_<seq>_<n:06> or the number)")
            .param(app_id())
            .param(attempt())
            .reply::<AppAttemptReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers", Hadoop, "containers.container[]: the attempt's running containers (containerId, allocatedMB, allocatedVCores, assignedNodeId, priority, startedTime, finishedTime, elapsedTime, diagnosticsInfo, logUrl, containerExitStatus, containerState, nodeHttpAddress, nodeId, allocatedResources); ended ones are not kept")
            .param(app_id())
            .param(attempt())
            .reply::<ContainersReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{container}", Hadoop, "container: one running container of the attempt")
            .param(app_id())
            .param(attempt())
            .param(path("container", "", json!({"type": "string"})))
            .reply::<ContainerReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/queue", Hadoop, "{queue}")
            .param(app_id())
            .reply::<AppQueue>("200", "OK"),
        Op::put("/ws/v1/cluster/apps/{id}/queue", Hadoop, "Move to {queue}: yard's policies do not move applications (as YARN's FIFO scheduler), so only the application's own queue is accepted (200); another is a 400")
            .param(app_id())
            .body::<AppQueue>()
            .reply::<AppQueue>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/priority", Hadoop, "{priority}: always 0, the cluster's maximum application priority (YARN's default)")
            .param(app_id())
            .reply::<AppPriority>("200", "OK"),
        Op::put("/ws/v1/cluster/apps/{id}/priority", Hadoop, "Set {priority}: capped to the cluster's maximum, 0, as YARN caps it (200 {priority: 0}); an ended application's is a 400")
            .param(app_id())
            .body_schema(json!({"type": "object", "required": ["priority"], "properties": {"priority": {"type": "integer"}}}))
            .reply::<AppPriority>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/timeouts", Hadoop, "timeouts.timeout[]: the LIFETIME timeout {type, expiryTime (yyyy-MM-dd'T'HH:mm:ss.SSSZ, or UNLIMITED), remainingTimeInSeconds (-1 when unlimited)}")
            .param(app_id())
            .reply::<AppTimeoutsReply>("200", "OK"),
        Op::get("/ws/v1/cluster/apps/{id}/timeouts/{kind}", Hadoop, "timeout: the LIFETIME timeout (the only type; another is a 400)")
            .param(app_id())
            .param(path("kind", "YARN's ApplicationTimeoutType: LIFETIME is the only one (any case)", json!({"type": "string", "enum": ["LIFETIME"]})))
            .reply::<AppTimeoutReply>("200", "OK"),
        Op::put("/ws/v1/cluster/apps/{id}/timeout", Hadoop, "Set the LIFETIME timeout: {timeout: {type: LIFETIME, expiryTime}}; the rm kills the application at that time (diagnostics say so). Answered once committed, with the timeout")
            .param(app_id())
            .body_schema(json!({"type": "object", "required": ["timeout"], "properties": {"timeout": {"type": "object", "required": ["type", "expiryTime"], "properties": {"type": {"type": "string", "enum": ["LIFETIME"]}, "expiryTime": {"type": "string"}}}}}))
            .reply::<AppTimeoutReply>("200", "OK"),
    ]
}
