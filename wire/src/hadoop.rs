//! Hadoop's other client objects as yard serves them on `/ws/v1/cluster/…`: the scheduler
//! (`scheduler.schedulerInfo`, with YARN's capacity-scheduler queue list and yard's own
//! counts), application attempts and their containers, application statistics, queue,
//! priority, timeouts and the new-application reply. The rm builds these and clients read
//! them; `rm/tests/golden` holds what they look like on the wire. Names and units are
//! Hadoop's (capacities in percent, memory in MB, times in ms since the epoch).

use serde::{Deserialize, Serialize};

use crate::deadline::Deadline;
use crate::views::{QuotaView, ResourceView, YarnApplicationState};

/// `{"scheduler": {"schedulerInfo": …}}` (`GET /ws/v1/cluster/scheduler`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulerReply {
    pub scheduler: SchedulerWrapper,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SchedulerWrapper {
    pub scheduler_info: SchedulerInfo,
}

/// Hadoop's `QueueState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QueueState {
    Running,
    Stopped,
    Draining,
}

/// Which policy runs (`type` as YARN names schedulers, `policy` as yard does), the cluster's
/// capacity as YARN's FIFO scheduler reports it, the queues as its capacity scheduler lists
/// them, MinEDF-WC's spare counts, the classifier's totals, and every unfinished
/// application's deadline and quota.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SchedulerInfo {
    /// `fifoScheduler`, `edfScheduler`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub policy: String,
    /// `root`.
    pub queue_name: String,
    pub qstate: QueueState,
    pub capacity: f64,
    pub used_capacity: f64,
    pub max_capacity: f64,
    pub queues: QueueList,
    pub num_nodes: u64,
    /// Memory in MB.
    pub total_node_capacity: u64,
    pub used_node_capacity: u64,
    pub avail_node_capacity: u64,
    pub num_containers: u64,
    /// The share of the cluster masters may hold.
    pub master_share: f64,
    pub masters_used: ResourceView,
    pub spare_allocations: u64,
    pub spare_kills: u64,
    pub spare_map_allocations: u64,
    pub spare_map_kills: u64,
    /// `null` when the classifier is off.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub overload_classifier: Option<ClassifierCounts>,
    pub apps: SchedulerApps,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueueList {
    pub queue: Vec<QueueInfo>,
}

/// One queue as YARN's capacity scheduler lists it (`capacitySchedulerLeafQueueInfo`): its
/// capacities in percent (`capacity` and `maxCapacity` of its parent, `root`, so equal to the
/// absolute ones; `usedCapacity` of its own capacity, `absoluteUsedCapacity` of the cluster),
/// its applications and what they hold; and yard's own: the policy that orders its
/// applications and the containers taken back from it for other queues' guarantees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueInfo {
    #[serde(rename = "type")]
    pub kind: String,
    pub queue_name: String,
    pub queue_path: String,
    pub state: QueueState,
    /// Its unfinished applications: running (`numActiveApplications`) and waiting for their
    /// master (`numPendingApplications`).
    pub num_applications: u64,
    pub num_active_applications: u64,
    pub num_pending_applications: u64,
    pub num_containers: u64,
    /// One user may hold this many times the queue's capacity.
    pub user_limit_factor: f64,
    /// yard's: the cluster policy within the queue (`fifo`, `fair`, `edf`, `minedf`,
    /// `minedf-wc`).
    pub policy: String,
    /// yard's: containers taken back from it to restore other queues' guarantees.
    pub preempted_containers: u64,
    pub resources_used: ResourceView,
    pub capacities: QueueCapacities,
    #[serde(flatten)]
    pub capacity: Capacities,
}

/// A queue's capacities, in percent, for the queue and for each of its partitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Capacities {
    pub capacity: f64,
    pub used_capacity: f64,
    pub max_capacity: f64,
    pub absolute_capacity: f64,
    pub absolute_used_capacity: f64,
    pub absolute_max_capacity: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueCapacities {
    pub queue_capacities_by_partition: Vec<PartitionCapacities>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PartitionCapacities {
    /// `""`: the default partition.
    pub partition_name: String,
    #[serde(flatten)]
    pub capacity: Capacities,
}

/// The overload classifier's totals and settings (`yard_cluster::classifier::ModelCounts`,
/// field for field: a test in the rm's `rest::views` checks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClassifierCounts {
    pub good: u64,
    pub bad: u64,
    pub min_samples: u64,
    pub rule: String,
    pub utility: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulerApps {
    pub app: Vec<SchedulerApp>,
}

/// An unfinished application as the deadline policies see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SchedulerApp {
    pub id: String,
    pub state: YarnApplicationState,
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = Option<i64>))]
    pub deadline_ms: Option<Deadline>,
    pub running_containers: u64,
    /// Its task counts, `null` until its master registers them.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub maps: Option<u32>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub reduces: Option<u32>,
    /// Whether ARIA has a profile of it.
    pub profiled: bool,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub quota: Option<QuotaView>,
}

/// Hadoop's `RMAppAttemptState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AppAttemptState {
    New,
    Submitted,
    Scheduled,
    AllocatedSaving,
    Allocated,
    Launched,
    Failed,
    Running,
    Finishing,
    Finished,
    Killed,
}

/// One attempt, with the fields of both of YARN's attempt objects (the list's and the one's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppAttempt {
    pub id: u32,
    pub app_attempt_id: String,
    pub start_time: i64,
    pub started_time: i64,
    /// 0 while it runs.
    pub finished_time: i64,
    pub container_id: String,
    pub am_container_id: String,
    pub node_id: String,
    pub node_http_address: String,
    pub host: String,
    /// -1: yard's masters have no RPC port.
    pub rpc_port: i32,
    pub logs_link: String,
    pub blacklisted_nodes: String,
    pub nodes_blacklisted_by_system: String,
    pub app_attempt_state: AppAttemptState,
    pub tracking_url: String,
    pub diagnostics_info: String,
}

/// `{"appAttempts": {"appAttempt": […]}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptsReply {
    pub app_attempts: AppAttemptList,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptList {
    pub app_attempt: Vec<AppAttempt>,
}

/// `{"appAttempt": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptReply {
    pub app_attempt: AppAttempt,
}

/// Hadoop's `ContainerState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContainerState {
    New,
    Running,
    Complete,
}

/// A running container as YARN's container report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContainerView {
    pub container_id: String,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: u32,
    pub assigned_node_id: String,
    pub priority: u32,
    pub started_time: i64,
    pub finished_time: i64,
    pub elapsed_time: i64,
    pub diagnostics_info: String,
    pub log_url: String,
    pub container_exit_status: i32,
    pub container_state: ContainerState,
    pub node_http_address: String,
    pub node_id: String,
    pub allocated_resources: ResourceView,
}

/// `{"containers": {"container": […]}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContainersReply {
    pub containers: ContainerList,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContainerList {
    pub container: Vec<ContainerView>,
}

/// `{"container": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContainerReply {
    pub container: ContainerView,
}

/// `{"appStatInfo": {"statItem": […]}}` (`GET /ws/v1/cluster/appstatistics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppStatisticsReply {
    pub app_stat_info: StatItems,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatItems {
    pub stat_item: Vec<StatItem>,
}

/// How many applications of a type (`*`: any) are in a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatItem {
    pub state: YarnApplicationState,
    #[serde(rename = "type")]
    pub kind: String,
    pub count: u64,
}

/// `POST /ws/v1/cluster/apps/new-application`'s reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewApplication {
    #[serde(rename = "application-id")]
    pub application_id: String,
    #[serde(rename = "maximum-resource-capability")]
    pub maximum_resource_capability: ResourceView,
}

/// `{"queue": …}` (`GET` and `PUT /ws/v1/cluster/apps/{id}/queue`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppQueue {
    pub queue: String,
}

/// `{"priority": …}` (`GET` and `PUT /ws/v1/cluster/apps/{id}/priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppPriority {
    pub priority: i32,
}

/// Hadoop's `ApplicationTimeoutType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TimeoutType {
    Lifetime,
}

/// YARN's timeout object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppTimeout {
    #[serde(rename = "type")]
    pub kind: TimeoutType,
    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, or `UNLIMITED`.
    pub expiry_time: String,
    /// -1 when unlimited.
    pub remaining_time_in_seconds: i64,
}

/// `{"timeouts": {"timeout": […]}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppTimeoutsReply {
    pub timeouts: AppTimeoutList,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppTimeoutList {
    pub timeout: Vec<AppTimeout>,
}

/// `{"timeout": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppTimeoutReply {
    pub timeout: AppTimeout,
}
