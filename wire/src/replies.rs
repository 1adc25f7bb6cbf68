//! The rm's other replies on `/ws/v1/yard/…`: datasets and their upload grants, tokens and
//! whoami, health, the container books, Prometheus' scrape targets, and what the masters'
//! protocol answers (register, unregister, final figures, recovery entries). The nodemanagers'
//! and the allocate protocol's replies are in [`crate::protocol`]; `rm/tests/golden` holds what
//! all of them look like on the wire.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::Principal;
use crate::views::{NodeState, QuotaView};

/// A dataset in the list: its name, when it was put, and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DatasetSummary {
    pub name: String,
    pub created_ms: i64,
    /// How many blocks, and their bytes.
    pub blocks: u64,
    pub bytes: u64,
}

/// `{"datasets": […]}` (`GET /ws/v1/yard/datasets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DatasetsReply {
    pub datasets: Vec<DatasetSummary>,
}

/// A grant to upload a dataset's blocks (`POST /ws/v1/yard/datasets/{name}/upload-grant`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UploadGrant {
    pub token: String,
    /// ms since the epoch.
    pub expires_ms: i64,
}

/// `GET /ws/v1/yard/auth/whoami`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WhoAmI {
    pub principal: Principal,
}

/// `POST /ws/v1/yard/auth/tokens`: the token, and whom it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IssuedToken {
    pub token: String,
    pub principal: Principal,
}

/// Whether the rm can write its state store (only `ok` is ever a 200).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum StoreHealth {
    Ok,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    pub store: StoreHealth,
}

/// `{"health": {"store": "ok"}}` (`GET /ws/v1/yard/health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HealthReply {
    pub health: Health,
}

/// `{"history": …}` (`GET /ws/v1/yard/history`): the cluster over the last hour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistoryReply {
    pub history: ClusterHistory,
}

/// The rm's own record of the cluster, sampled on its tick (kept in memory: a restarted rm
/// starts a new one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterHistory {
    /// At most one point this often, ms.
    pub step_ms: i64,
    /// Points older than this are dropped, ms.
    pub span_ms: i64,
    /// Oldest first.
    pub points: Vec<HistoryPoint>,
}

/// The cluster at one moment, in the fields and units of Hadoop's cluster metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryPoint {
    /// When, ms since the epoch.
    pub at_ms: i64,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    /// The running nodes' memory.
    #[serde(rename = "totalMB")]
    pub total_mb: u64,
    pub allocated_virtual_cores: u64,
    pub total_virtual_cores: u64,
    pub containers_allocated: u64,
    pub apps_running: u64,
    /// Submitted, not yet running (YARN's appsPending).
    pub apps_pending: u64,
    pub active_nodes: u64,
}

/// `{"books": …}` (`GET /ws/v1/yard/books`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BooksReply {
    pub books: Books,
}

/// The container book as the rm holds it, and whether its invariants hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Books {
    pub consistent: bool,
    /// The first broken invariant; `null` when consistent.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub problem: Option<String>,
    pub nodes: Vec<BookedNode>,
}

/// A node's booked containers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BookedNode {
    pub node_id: String,
    pub state: NodeState,
    pub containers: Vec<String>,
}

/// One of Prometheus' `http_sd` target groups (`GET /ws/v1/yard/prometheus/targets` answers a
/// list of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetGroup {
    pub targets: Vec<String>,
    pub labels: BTreeMap<String, String>,
}

/// A master's registration is answered with its job's quota (`null` under a policy without
/// quotas, or before the job's model is known).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MasterRegistered {
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub quota: Option<QuotaView>,
}

/// `{}`: a master's unregistration, done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Unregistered {}

/// A master's final figures, kept (`PUT /ws/v1/yard/apps/{id}/metrics`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FinalFiguresKept {
    pub application: String,
    pub bytes: u64,
    /// ms since the epoch.
    pub kept_ms: i64,
}

/// `PUT /ws/v1/yard/apps/{id}/recovery`: how many entries the application now keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecoveryKept {
    pub entries: u64,
}

/// `GET /ws/v1/yard/apps/{id}/recovery`: the current attempt (`null` once the application
/// ended) and the entries its masters kept, each a JSON object opaque to the rm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Recovery {
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub attempt: Option<u32>,
    pub entries: BTreeMap<String, Value>,
}
