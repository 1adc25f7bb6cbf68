//! The JSON views the routes answer with: Hadoop's app, attempt, container, node, queue and
//! timeout objects, yard's own app view, and YARN's state names.

use serde_json::{Value, json};
use yard_wire::telemetry::NodeTelemetry;

use super::time::iso8601;
use crate::cluster::{AppInfo, Cluster, NodeInfo, NodeState};
use yard_cluster::app::AppState;

/// yard's view of an application at `now`: what Hadoop's lacks (deadline and where the app
/// stands against it, processed fraction, answer).
pub(super) fn yard_app_json(a: &AppInfo, now: i64) -> Value {
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

/// A share of `total` as a percentage (0 when there is nothing).
pub(super) fn percent(used: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * used as f64 / total as f64
    }
}

/// One queue as YARN's capacity scheduler lists it. yard's queues are names applications are
/// submitted under: each may use the whole cluster (capacity 100 %), none is configured.
pub(super) fn queue_json(
    name: &str,
    used_mb: u64,
    used_vcores: u64,
    apps: usize,
    total_mb: u64,
) -> Value {
    let used = percent(used_mb, total_mb);
    let partition = with_capacities(used, json!({ "partitionName": "" }));
    with_capacities(
        used,
        json!({
            "type": "capacitySchedulerLeafQueueInfo",
            "queueName": name,
            "queuePath": format!("root.{name}"),
            "state": "RUNNING",
            "numApplications": apps,
            "resourcesUsed": { "memory": used_mb, "vCores": used_vcores },
            "capacities": { "queueCapacitiesByPartition": [partition] },
        }),
    )
}

/// `object` with a queue's capacities, as YARN lists them for the queue and for each of its
/// partitions: it may use the whole cluster, of which it uses `used` percent.
fn with_capacities(used: f64, mut object: Value) -> Value {
    if let Some(fields) = object.as_object_mut() {
        for (name, value) in [
            ("capacity", 100.0),
            ("usedCapacity", used),
            ("maxCapacity", 100.0),
            ("absoluteCapacity", 100.0),
            ("absoluteUsedCapacity", used),
            ("absoluteMaxCapacity", 100.0),
        ] {
            fields.insert(name.into(), json!(value));
        }
    }
    object
}

/// YARN's application attempt id: `appattempt_<cluster timestamp>_<sequence>_<attempt:06>`.
pub(super) fn attempt_id(app: &str, attempt: u32) -> String {
    let rest = app.strip_prefix("application_").unwrap_or(app);
    format!("appattempt_{rest}_{attempt:06}")
}

/// YARN's `RMAppAttemptState` of attempt `t` of `a`.
pub(super) fn attempt_state(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> &'static str {
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
pub(super) fn attempt_json(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> Value {
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

/// A running container as YARN's container report shows it.
pub(super) fn container_json(id: &str, m: &crate::cluster::ContainerMeta, now: i64) -> Value {
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

/// One node as both nodes routes show it: Hadoop's fields, YARN's `resourceUtilization`, and
/// yard's own view of its load (`yardLoad`). A further per-node object is one more key here.
pub(super) fn node_json(cluster: &Cluster, n: &NodeInfo) -> Value {
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
pub(super) fn node_detail_json(cluster: &Cluster, n: &NodeInfo) -> Value {
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

pub(super) fn memory_used_fraction(t: &NodeTelemetry) -> f64 {
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
pub(super) fn resource_utilization(t: &NodeTelemetry) -> Value {
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
pub(super) fn yard_load(n: &NodeInfo) -> Value {
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

pub(super) fn node_state_name(s: NodeState) -> &'static str {
    match s {
        NodeState::Running => "RUNNING",
        NodeState::Lost => "LOST",
    }
}

pub(super) fn state_name(s: AppState) -> String {
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

pub(super) const FINAL_STATUSES: [&str; 4] = ["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED"];

pub(super) fn final_name(a: &AppInfo) -> String {
    serde_json::to_value(a.lifecycle.final_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Hadoop's app object: YARN's 26 fields, in its units (progress in percent, times in ms,
/// resource-seconds in MB·s and vcore·s), and yard's own (`applicationTags` as YARN's
/// comma-separated list, `deadlineMs`, `deadlineOutcome`, `quota`). Its diagnostics carry, while the app waits
/// for that reason, why the overload classifier placed none of its tasks.
pub(super) fn app_json(c: &Cluster, a: &AppInfo, cluster_id: i64, now: i64) -> Value {
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

/// YARN's `LIFETIME` timeout object of `a` at `now`.
pub(super) fn timeout_json(a: &AppInfo, now: i64) -> Value {
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
