//! What the rm answers clients about applications, nodes and the cluster: Hadoop's `app` and
//! `node` objects as yard serves them on `/ws/v1/cluster/apps[/{id}]` and
//! `/ws/v1/cluster/nodes[/{id}]` ([`AppView`], [`NodeView`]), yard's own view of an application
//! on `/ws/v1/yard/apps/{id}` ([`YardAppView`]), the cluster's metrics and info
//! ([`ClusterMetrics`], [`ClusterInfo`]), and their wrappers. The rm builds these and the CLI reads them, so the
//! two cannot drift apart; `rm/tests/golden` holds what they look like on the wire.
//!
//! Null and absent are distinct on purpose: an `Option` field without `skip_serializing_if`
//! is always sent (`null` when unknown, e.g. `deadlineMs` of an application without a
//! deadline), and its OpenAPI schema says it is required; one with it is absent when `None` (a
//! field `deSelects` left out, the load history only the one-node route has). Names are Hadoop's where it has the field (hence the renames
//! where Hadoop's capitals are not camelCase: `allocatedMB`, `trackingUI`, `nodeHTTPAddress`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deadline::{Deadline, DeadlineOutcome};
use crate::protocol::JobType;
use crate::telemetry::NodeTelemetry;

/// For an enum of names: `ALL`, `name()` (as the JSON spells it, which serde's rename must
/// agree with: the tests check), `Display`, and `FromStr` in any case, whose error names the
/// valid ones.
macro_rules! names {
    ($ty:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The name the JSON carries.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = crate::BadInput;

            fn from_str(s: &str) -> Result<Self, crate::BadInput> {
                let wanted = s.trim();
                let found = Self::ALL.iter().copied().find(|v| v.name().eq_ignore_ascii_case(wanted));
                found.ok_or_else(|| {
                    let valid: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                    crate::BadInput(format!(
                        "invalid {} {:?}: it should be one of {}",
                        $what,
                        wanted,
                        valid.join(", ")
                    ))
                })
            }
        }
    };
}

/// Hadoop's `YarnApplicationState`, as its REST API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum YarnApplicationState {
    New,
    NewSaving,
    Submitted,
    Accepted,
    Running,
    Finished,
    Failed,
    Killed,
}

names!(YarnApplicationState, "application state", {
    New => "NEW",
    NewSaving => "NEW_SAVING",
    Submitted => "SUBMITTED",
    Accepted => "ACCEPTED",
    Running => "RUNNING",
    Finished => "FINISHED",
    Failed => "FAILED",
    Killed => "KILLED",
});

impl YarnApplicationState {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            YarnApplicationState::Finished
                | YarnApplicationState::Failed
                | YarnApplicationState::Killed
        )
    }
}

/// Hadoop's `FinalApplicationStatus`: what the master reported, UNDEFINED while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FinalApplicationStatus {
    Undefined,
    Succeeded,
    Failed,
    Killed,
}

names!(FinalApplicationStatus, "final status", {
    Undefined => "UNDEFINED",
    Succeeded => "SUCCEEDED",
    Failed => "FAILED",
    Killed => "KILLED",
});

/// Hadoop's `NodeState` (yard's nodes are RUNNING or LOST; the rest are Hadoop's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeState {
    New,
    Running,
    Unhealthy,
    Decommissioning,
    Decommissioned,
    Lost,
    Rebooted,
    Shutdown,
}

names!(NodeState, "node state", {
    New => "NEW",
    Running => "RUNNING",
    Unhealthy => "UNHEALTHY",
    Decommissioning => "DECOMMISSIONING",
    Decommissioned => "DECOMMISSIONED",
    Lost => "LOST",
    Rebooted => "REBOOTED",
    Shutdown => "SHUTDOWN",
});

/// YARN's resource object (`{"memory": MB, "vCores": n}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceView {
    pub memory: u64,
    pub v_cores: u32,
}

/// The stage a job's quota is for: every map done or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum QuotaStage {
    Map,
    Reduce,
}

names!(QuotaStage, "stage", { Map => "map", Reduce => "reduce" });

/// Why a job has the quota it has (the cluster policy's, `yard_cluster::policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum QuotaBasis {
    /// The fewest containers that meet the deadline under ARIA's model.
    Feasible,
    /// No allocation meets the deadline (or it has passed): the most the job can use.
    Infeasible,
    /// The model says nothing is left to run: anything still asked is served as EDF would.
    Done,
    /// No deadline: under `minedf-wc` the job runs on spare containers only (its quota is 0);
    /// under `minedf` it is served as far as it asks, after every job with a deadline.
    NoDeadline,
    /// The rm knows no task counts or no profile for the job: it is served as EDF would
    /// serve it (no quota, never preempted).
    NoModel,
}

names!(QuotaBasis, "quota basis", {
    Feasible => "feasible",
    Infeasible => "infeasible",
    Done => "done",
    NoDeadline => "no-deadline",
    NoModel => "no-model",
});

/// A job's quota under the rm's cluster policy, in containers for the stage it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuotaView {
    pub stage: QuotaStage,
    /// `None`: as many as it asks for.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub containers: Option<u32>,
    /// ARIA's map and reduce slots, when computed.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub maps: Option<u32>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub reduces: Option<u32>,
    pub basis: QuotaBasis,
}

/// Hadoop's app object (its 26 fields, in its units: progress in percent, times in ms,
/// resource-seconds in MB·s and vcore·s) and yard's own (`deadlineMs`, `deadlineOutcome`,
/// `quota`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppView {
    pub id: String,
    pub user: String,
    pub name: String,
    pub application_type: String,
    pub queue: String,
    pub state: YarnApplicationState,
    pub final_status: FinalApplicationStatus,
    pub progress: f64,
    #[serde(rename = "trackingUI")]
    pub tracking_ui: String,
    pub tracking_url: String,
    pub diagnostics: String,
    pub cluster_id: i64,
    pub started_time: i64,
    /// 0 until it ends (YARN's "not yet").
    pub finished_time: i64,
    pub elapsed_time: i64,
    pub am_container_logs: String,
    pub am_host_http_address: String,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: u64,
    pub running_containers: u64,
    pub memory_seconds: u64,
    pub vcore_seconds: u64,
    pub unmanaged_application: bool,
    pub application_priority: i32,
    /// Absent when `deSelects` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_node_label_expression: Option<String>,
    /// Absent when `deSelects` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub am_node_label_expression: Option<String>,
    /// YARN's comma-separated list.
    pub application_tags: String,
    /// When the answer is wanted, ms since the epoch; `null` without a deadline.
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = Option<i64>))]
    pub deadline_ms: Option<Deadline>,
    /// Met, empty, missed or pending; `null` without a deadline.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub deadline_outcome: Option<DeadlineOutcome>,
    /// `null` under a policy without quotas.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub quota: Option<QuotaView>,
}

/// yard's view of an application: what Hadoop's lacks (where it stands against its deadline,
/// from how much of its input it answered, the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct YardAppView {
    pub id: String,
    pub state: YarnApplicationState,
    pub final_status: FinalApplicationStatus,
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = Option<i64>))]
    pub deadline_ms: Option<Deadline>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub deadline_outcome: Option<DeadlineOutcome>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub quota: Option<QuotaView>,
    /// Where its master serves its status; `null` until it says.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub tracking_url: Option<String>,
    /// Its map and reduce types, as its master last said; `null` until it says.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub job_type: Option<JobType>,
    /// `null` until it answers.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub processed_fraction: Option<f64>,
    /// The master's answer, opaque to the rm (a MapReduce job's: its `job` line, estimates and
    /// top lists); `null` until it answers.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub answer: Option<Value>,
}

/// `{"app": …}`: one application (`GET /ws/v1/cluster/apps/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppReply {
    pub app: AppView,
}

/// `{"apps": {"app": […]}}` (`GET /ws/v1/cluster/apps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppsReply {
    pub apps: AppList,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppList {
    pub app: Vec<AppView>,
    /// yard's: how many applications the caller may read matched the filters, before yard's
    /// `offset` and YARN's `limit` cut the page (so a reader of one page knows how many
    /// there are).
    pub total: u64,
}

/// `{"app": …}`: yard's view (`GET /ws/v1/yard/apps/{id}`, and `PUT …/deadline`'s reply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct YardAppReply {
    pub app: YardAppView,
}

/// The body of `PUT /ws/v1/yard/apps/{id}/deadline`: the application's new deadline (the
/// rm refuses one outside `1..=limits::MAX_TIME_MS` or past, naming `deadlineMs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetDeadline {
    /// Milliseconds since the Unix epoch.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub deadline_ms: Deadline,
}

/// `{"state": …}`: YARN's app state object (`GET` and `PUT /ws/v1/cluster/apps/{id}/state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppStateView {
    pub state: YarnApplicationState,
}

/// YARN's `ResourceUtilizationInfo`, field for field: memory in MB, CPU in cores kept busy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResourceUtilization {
    #[serde(rename = "nodePhysicalMemoryMB")]
    pub node_physical_memory_mb: u64,
    #[serde(rename = "nodeVirtualMemoryMB")]
    pub node_virtual_memory_mb: u64,
    #[serde(rename = "nodeCPUUsage")]
    pub node_cpu_usage: f64,
    #[serde(rename = "aggregatedContainersPhysicalMemoryMB")]
    pub aggregated_containers_physical_memory_mb: u64,
    #[serde(rename = "aggregatedContainersVirtualMemoryMB")]
    pub aggregated_containers_virtual_memory_mb: u64,
    #[serde(rename = "containersCPUUsage")]
    pub containers_cpu_usage: f64,
}

/// yard's view of a node's load: its last sample as the nodemanager sent it, with when the rm
/// received it and two figures derived from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct YardLoad {
    #[serde(flatten)]
    pub sample: NodeTelemetry,
    /// When the rm received it, ms since the epoch.
    pub sampled_at: i64,
    /// The 1-minute load per logical CPU; `null` when the node reported no CPU count.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub load_per_core: Option<f64>,
    pub memory_used_fraction: f64,
}

/// One of a node's recent samples (`GET /ws/v1/cluster/nodes/{id}`'s `yardLoadHistory`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LoadPoint {
    /// When the rm received it, ms since the epoch.
    pub time: i64,
    pub load_1m: f64,
    pub cpu_percent: f64,
    pub memory_used_fraction: f64,
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    /// The nodemanager's own process tree's CPU.
    pub own_cpu_percent: f64,
}

/// Whether the rm runs its overload classifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Classifier {
    On,
    Off,
}

names!(Classifier, "classifier state", { On => "on", Off => "off" });

/// The overload classifier's verdict on a node for a task of an untyped job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Good,
    Bad,
    Unknown,
}

names!(Verdict, "verdict", { Good => "good", Bad => "bad", Unknown => "unknown" });

/// A node as the overload classifier sees it: its verdict, and (when the classifier is on) the
/// counts behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OverloadView {
    pub classifier: Classifier,
    pub verdict: Verdict,
    /// `None` (its fields absent) when the classifier is off.
    #[serde(flatten)]
    pub model: Option<OverloadModel>,
}

/// What the classifier has learned of a node: `yard_cluster::classifier::NodeOverload` is its
/// verdict and this, which the classifier builds itself. The enums the cluster policies and
/// the views share (`Verdict`, `QuotaStage`, `QuotaBasis`) are defined here once too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OverloadModel {
    /// `null`: unknown.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub p_good: Option<f64>,
    /// `null` before the node's first sample.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub overloaded: Option<bool>,
    pub labelled_good: u64,
    pub labelled_bad: u64,
    pub pending: u64,
    pub probes: u64,
    /// `null` when not refusing.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub refused_since_ms: Option<i64>,
    pub features: Vec<FeatureCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FeatureCount {
    pub name: String,
    pub level: u8,
    pub good: u64,
    pub bad: u64,
}

/// A node's `healthStatus` as Hadoop's `NodeInfo` spells it: yard calls a node unhealthy once
/// it is lost (no heartbeat within the expiry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum NodeHealth {
    Healthy,
    Unhealthy,
}

/// Hadoop's node object, YARN's `resourceUtilization`, and yard's view of its load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub rack: String,
    pub state: NodeState,
    /// `host:port`, as the nodemanager registered.
    pub id: String,
    pub node_host_name: String,
    #[serde(rename = "nodeHTTPAddress")]
    pub node_http_address: String,
    pub health_status: NodeHealth,
    pub health_report: String,
    pub last_health_update: i64,
    pub version: String,
    #[serde(rename = "usedMemoryMB")]
    pub used_memory_mb: u64,
    #[serde(rename = "availMemoryMB")]
    pub avail_memory_mb: u64,
    pub used_virtual_cores: u64,
    pub available_virtual_cores: u64,
    pub num_containers: u64,
    pub total_resource: ResourceView,
    /// All 0 until the node's first sample, as YARN reports a node without one.
    pub resource_utilization: ResourceUtilization,
    /// `null` until the node's first sample.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub yard_load: Option<YardLoad>,
    pub overload: OverloadView,
    /// The node's recent samples, oldest first: on the one-node route only (absent in lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yard_load_history: Option<Vec<LoadPoint>>,
    /// The containers the rm has placed on the node, oldest first: on the one-node route only
    /// (absent in lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yard_containers: Option<Vec<NodeContainer>>,
}

/// A container on a node (`yardContainers`): YARN's container report and its application.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NodeContainer {
    pub application_id: String,
    #[serde(flatten)]
    pub container: crate::hadoop::ContainerView,
}

/// `{"nodes": {"node": […]}}` (`GET /ws/v1/cluster/nodes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodesReply {
    pub nodes: NodeList,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeList {
    pub node: Vec<NodeView>,
}

/// `{"node": …}` (`GET /ws/v1/cluster/nodes/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeReply {
    pub node: NodeView,
}

/// Hadoop's `clusterMetrics` (`GET /ws/v1/cluster/metrics`): counts of applications, memory in
/// MB, vcores, containers and nodes. yard reserves nothing and decommissions nothing: those
/// counts are 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClusterMetrics {
    pub apps_submitted: u64,
    pub apps_completed: u64,
    pub apps_pending: u64,
    pub apps_running: u64,
    pub apps_failed: u64,
    pub apps_killed: u64,
    #[serde(rename = "reservedMB")]
    pub reserved_mb: u64,
    #[serde(rename = "availableMB")]
    pub available_mb: u64,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    #[serde(rename = "totalMB")]
    pub total_mb: u64,
    pub reserved_virtual_cores: u64,
    pub available_virtual_cores: u64,
    pub allocated_virtual_cores: u64,
    pub total_virtual_cores: u64,
    pub containers_allocated: u64,
    pub containers_reserved: u64,
    pub containers_pending: u64,
    pub total_nodes: u64,
    pub active_nodes: u64,
    pub lost_nodes: u64,
    pub unhealthy_nodes: u64,
    pub decommissioning_nodes: u64,
    pub decommissioned_nodes: u64,
    pub rebooted_nodes: u64,
    pub shutdown_nodes: u64,
}

/// `{"clusterMetrics": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClusterMetricsReply {
    pub cluster_metrics: ClusterMetrics,
}

/// Hadoop's `clusterInfo` (`GET /ws/v1/cluster/info`), as yard fills it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    /// The rm's start, ms since the epoch (YARN's cluster timestamp, in application ids).
    pub id: i64,
    pub started_on: i64,
    pub state: String,
    pub ha_state: String,
    pub rm_state_store_name: String,
    pub resource_manager_version: String,
    pub resource_manager_build_version: String,
    pub resource_manager_version_built_on: String,
    pub hadoop_version: String,
    pub hadoop_build_version: String,
    pub hadoop_version_built_on: String,
    pub ha_zoo_keeper_connection_state: String,
}

/// `{"clusterInfo": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfoReply {
    pub cluster_info: ClusterInfo,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yarns_names_are_the_ones_serde_writes_and_read_in_any_case() {
        fn check<T>(all: &[T])
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize + std::fmt::Display,
            T: std::str::FromStr,
        {
            for v in all {
                assert_eq!(serde_json::to_value(v).unwrap(), v.to_string());
                for name in [
                    v.to_string().to_ascii_lowercase(),
                    v.to_string().to_ascii_uppercase(),
                ] {
                    assert_eq!(name.parse::<T>().ok(), Some(*v), "{name}");
                }
            }
        }
        check(YarnApplicationState::ALL);
        check(FinalApplicationStatus::ALL);
        check(NodeState::ALL);
        check(QuotaBasis::ALL);
        check(QuotaStage::ALL);
        check(Classifier::ALL);
        check(Verdict::ALL);
        let err = "BOGUS"
            .parse::<YarnApplicationState>()
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid application state \"BOGUS\": it should be one of NEW, NEW_SAVING, \
             SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED"
        );
    }

    #[test]
    fn null_and_absent_stay_as_they_were_sent() {
        let off = serde_json::json!({"classifier": "off", "verdict": "unknown"});
        let view: OverloadView = serde_json::from_value(off.clone()).unwrap();
        assert_eq!(view.model, None);
        assert_eq!(serde_json::to_value(&view).unwrap(), off);
        let on = serde_json::json!({"classifier": "on", "verdict": "bad", "pGood": null,
            "overloaded": true, "labelledGood": 3, "labelledBad": 1, "pending": 0, "probes": 2,
            "refusedSinceMs": null, "features": [{"name": "load", "level": 2, "good": 3, "bad": 1}]});
        let view: OverloadView = serde_json::from_value(on.clone()).unwrap();
        assert!(view.model.as_ref().is_some_and(|m| m.p_good.is_none()));
        assert_eq!(serde_json::to_value(&view).unwrap(), on);
        let quota = serde_json::json!({"stage": "map", "containers": null, "maps": 4,
            "reduces": null, "basis": "no-deadline"});
        let q: QuotaView = serde_json::from_value(quota.clone()).unwrap();
        assert_eq!(q.basis, QuotaBasis::NoDeadline);
        assert_eq!(serde_json::to_value(q).unwrap(), quota);
    }
}
