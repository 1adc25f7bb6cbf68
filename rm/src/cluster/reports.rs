//! Cluster-wide reports: Hadoop's cluster metrics and the cluster policy's report.

use yard_cluster::app::YarnApplicationState;
use yard_cluster::classifier::ModelCounts;
use yard_cluster::policy::{ClusterPolicy, SpareCounts};
use yard_cluster::scheduler::{QueueUsage, Resources};

use super::{Cluster, NodeState};

/// The cluster policy and what it has done, for `GET /ws/v1/cluster/scheduler`.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerReport {
    pub policy: ClusterPolicy,
    pub master_share: f64,
    pub capacity: Resources,
    pub masters_used: Resources,
    pub spare: SpareCounts,
    /// The overload classifier's counts and settings, when on.
    pub overload: Option<ModelCounts>,
    /// Each queue as the scheduler sees it, in the order of [`Cluster::queues`].
    pub queues: Vec<QueueUsage>,
}

/// Cluster-wide counts, as Hadoop's `/ws/v1/cluster/metrics` reports them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    pub apps_submitted: usize,
    pub apps_pending: usize,
    pub apps_running: usize,
    pub apps_completed: usize,
    pub apps_failed: usize,
    pub apps_killed: usize,
    pub total_mb: u64,
    pub allocated_mb: u64,
    pub total_vcores: u64,
    pub allocated_vcores: u64,
    pub containers_allocated: usize,
    pub active_nodes: usize,
    pub lost_nodes: usize,
}

impl Cluster {
    /// Counts over applications, nodes and allocated resources.
    pub fn metrics(&self) -> Metrics {
        let mut m = Metrics {
            apps_submitted: self.apps.len(),
            ..Metrics::default()
        };
        for a in self.apps.values() {
            match a.lifecycle.state {
                YarnApplicationState::New
                | YarnApplicationState::NewSaving
                | YarnApplicationState::Submitted
                | YarnApplicationState::Accepted => m.apps_pending += 1,
                YarnApplicationState::Running => m.apps_running += 1,
                YarnApplicationState::Finished => m.apps_completed += 1,
                YarnApplicationState::Failed => m.apps_failed += 1,
                YarnApplicationState::Killed => m.apps_killed += 1,
            }
        }
        for (_, c) in self.book.iter() {
            m.allocated_mb += c.resource.memory_mb;
            m.allocated_vcores += u64::from(c.resource.vcores);
        }
        m.containers_allocated = self.book.len();
        for n in self.nodes.values() {
            match n.state {
                NodeState::Running => {
                    m.active_nodes += 1;
                    m.total_mb += n.capability.memory_mb;
                    m.total_vcores += u64::from(n.capability.vcores);
                }
                NodeState::Lost => m.lost_nodes += 1,
            }
        }
        m
    }

    /// The cluster policy and what it decided: for `GET /ws/v1/cluster/scheduler`.
    pub fn scheduler_report(&self) -> SchedulerReport {
        SchedulerReport {
            policy: self.scheduler.policy(),
            master_share: self.scheduler.master_share(),
            capacity: self.scheduler.capacity(),
            masters_used: self.scheduler.masters_used(),
            spare: self.scheduler.spare_counts(),
            overload: self.scheduler.overload().map(|c| c.counts()),
            queues: self.scheduler.queue_usage(),
        }
    }
}
