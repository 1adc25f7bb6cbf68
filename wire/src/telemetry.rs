//! What a nodemanager reports about its node's load in every heartbeat (the classifier of
//! Visalakshi & Karthik reads these): CPU, load average, memory, disk and network rates, and
//! each container's CPU and memory.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeTelemetry {
    /// CPU in use across all cores, 0–100.
    pub cpu_percent: f64,
    pub load_1m: f64,
    pub load_5m: f64,
    pub load_15m: f64,
    pub memory_total_bytes: u64,
    pub memory_used_bytes: u64,
    /// Since the previous sample.
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    pub net_rx_bytes_per_s: f64,
    pub net_tx_bytes_per_s: f64,
    pub containers: Vec<ContainerUsage>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerUsage {
    pub container_id: String,
    /// Of one core: 200 means two cores busy.
    pub cpu_percent: f64,
    pub rss_bytes: u64,
}
