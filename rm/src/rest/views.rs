//! The views the routes answer with: Hadoop's app, attempt, container, node, queue and
//! timeout objects, yard's own app view, and YARN's state names, each a `yard_wire` type (the
//! CLI reads the same types).

use yard_wire::hadoop::{
    AppAttempt, AppAttemptState, AppTimeout, Capacities, ClassifierCounts, ContainerState,
    ContainerView, PartitionCapacities, QueueCapacities, QueueInfo, QueueState, TimeoutType,
};
use yard_wire::telemetry::NodeTelemetry;
use yard_wire::views::{
    AppView, Classifier, LoadPoint, NodeContainer, NodeHealth, NodeView, OverloadView, QuotaView,
    ResourceUtilization, ResourceView, YardAppReply, YardAppView, YardLoad, YarnApplicationState,
};

use super::time::iso8601;
use crate::cluster::{AppInfo, Cluster, ClusterError, NodeInfo, NodeState};
use yard_cluster::classifier::{ModelCounts, NodeOverload, Verdict};
use yard_cluster::policy::JobQuota;
use yard_cluster::queues::QueueConfig;

/// `{"app": …}` as `id` stands at `now`, built by a route that changed it inside the same
/// [`super::Rm::commit`] closure, under the lock of the change: what was committed, never a
/// `null` body. The 404 is for an application the change did not find (the change itself
/// refuses one first, so it is not reached; it keeps the reply a `YardAppReply`, not an
/// `Option` that serializes as `null`).
pub(super) fn yard_app_reply(
    c: &Cluster,
    id: &str,
    now: i64,
) -> Result<YardAppReply, ClusterError> {
    c.app(id)
        .map(|a| YardAppReply {
            app: yard_app_view(a, now),
        })
        .ok_or_else(|| ClusterError::UnknownApp(id.into()))
}

/// yard's view of an application at `now`: what Hadoop's lacks (deadline and where the app
/// stands against it, processed fraction, answer).
pub(super) fn yard_app_view(a: &AppInfo, now: i64) -> YardAppView {
    YardAppView {
        id: a.application_id.clone(),
        state: a.lifecycle.state,
        final_status: a.lifecycle.final_status,
        deadline_ms: a.deadline,
        deadline_outcome: a.deadline_outcome(now),
        quota: a.quota.as_ref().map(quota_view),
        tracking_url: a.tracking_url.clone(),
        job_type: a.job_type,
        processed_fraction: a.result.as_ref().map(|r| r.processed_fraction),
        answer: a.result.as_ref().map(|r| r.answer.clone()),
    }
}

/// A job's quota as the wire shows it (field for field: the policy's type is not the wire's).
pub(super) fn quota_view(q: &JobQuota) -> QuotaView {
    QuotaView {
        stage: q.stage,
        containers: q.containers,
        maps: q.maps,
        reduces: q.reduces,
        basis: q.basis,
    }
}

/// The classifier's totals as the wire shows them (field for field: the policy's type is not
/// the wire's, its `utility` a `&'static str`).
pub(super) fn classifier_counts(m: ModelCounts) -> ClassifierCounts {
    ClassifierCounts {
        good: m.good,
        bad: m.bad,
        min_samples: m.min_samples,
        rule: m.rule,
        utility: m.utility.to_owned(),
    }
}

/// A share of `total` as a percentage (0 when there is nothing).
pub(super) fn percent(used: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * used as f64 / total as f64
    }
}

/// What a queue holds now, as the scheduler route adds it up from the book.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct QueueUse {
    pub used_mb: u64,
    pub used_vcores: u64,
    pub running: u64,
    pub pending: u64,
    pub containers: u64,
    pub preempted: u64,
}

/// One queue as YARN's capacity scheduler lists it, on a cluster of `total_mb`.
pub(super) fn queue_info(q: &QueueConfig, u: QueueUse, total_mb: u64) -> QueueInfo {
    let capacity = capacities(q, u.used_mb, total_mb);
    QueueInfo {
        kind: "capacitySchedulerLeafQueueInfo".into(),
        queue_name: q.name.clone(),
        queue_path: format!("root.{}", q.name),
        state: QueueState::Running,
        num_applications: u.running + u.pending,
        num_active_applications: u.running,
        num_pending_applications: u.pending,
        num_containers: u.containers,
        user_limit_factor: q.user_limit_factor,
        policy: q.policy.name().into(),
        preempted_containers: u.preempted,
        resources_used: ResourceView {
            memory: u.used_mb,
            v_cores: u32::try_from(u.used_vcores).unwrap_or(u32::MAX),
        },
        capacities: QueueCapacities {
            queue_capacities_by_partition: vec![PartitionCapacities {
                partition_name: String::new(),
                capacity,
            }],
        },
        capacity,
    }
}

/// A queue's capacities, as YARN lists them for the queue and for each of its partitions: its
/// parent is `root` (the whole cluster), so its capacities are also its absolute ones; it uses
/// `used_mb` of the cluster's `total_mb`, which YARN's `usedCapacity` reads against the
/// queue's own capacity.
fn capacities(q: &QueueConfig, used_mb: u64, total_mb: u64) -> Capacities {
    let absolute_used = percent(used_mb, total_mb);
    Capacities {
        capacity: q.capacity,
        used_capacity: if q.capacity >= 100.0 {
            absolute_used
        } else if q.capacity > 0.0 {
            absolute_used * 100.0 / q.capacity
        } else {
            0.0
        },
        max_capacity: q.maximum_capacity,
        absolute_capacity: q.capacity,
        absolute_used_capacity: absolute_used,
        absolute_max_capacity: q.maximum_capacity,
    }
}

/// YARN's application attempt id: `appattempt_<cluster timestamp>_<sequence>_<attempt:06>`.
pub(super) fn attempt_id(app: &str, attempt: u32) -> String {
    let rest = app.strip_prefix("application_").unwrap_or(app);
    format!("appattempt_{rest}_{attempt:06}")
}

/// YARN's `RMAppAttemptState` of attempt `t` of `a`.
pub(super) fn attempt_state(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> AppAttemptState {
    let current = a.attempts.last().is_some_and(|l| l.attempt == t.attempt);
    if !current {
        return AppAttemptState::Failed;
    }
    match a.lifecycle.state {
        // A lifecycle is never NEW_SAVING; its master is asked for from ACCEPTED.
        YarnApplicationState::New
        | YarnApplicationState::NewSaving
        | YarnApplicationState::Submitted
        | YarnApplicationState::Accepted => AppAttemptState::Launched,
        YarnApplicationState::Running => AppAttemptState::Running,
        YarnApplicationState::Finished => AppAttemptState::Finished,
        YarnApplicationState::Failed => AppAttemptState::Failed,
        YarnApplicationState::Killed => AppAttemptState::Killed,
    }
}

/// One attempt, with the fields of both of YARN's attempt objects (the list's and the one's).
pub(super) fn attempt_view(a: &AppInfo, t: &crate::cluster::AttemptInfo) -> AppAttempt {
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
    let current = a.attempts.last().is_some_and(|l| l.attempt == t.attempt);
    AppAttempt {
        id: t.attempt,
        app_attempt_id: attempt_id(&a.application_id, t.attempt),
        start_time: t.started_ms,
        started_time: t.started_ms,
        finished_time: finished,
        container_id: t.container_id.clone(),
        am_container_id: t.container_id.clone(),
        node_id: t.node_id.clone(),
        node_http_address: t.node_id.clone(),
        host: t.node_id.split(':').next().unwrap_or(&t.node_id).to_owned(),
        rpc_port: -1,
        logs_link: super::logs::logs_link(None, &a.application_id, &t.container_id),
        blacklisted_nodes: String::new(),
        nodes_blacklisted_by_system: String::new(),
        app_attempt_state: attempt_state(a, t),
        tracking_url: a.tracking_url.clone().unwrap_or_default(),
        diagnostics_info: if current {
            a.lifecycle.diagnostics.clone()
        } else {
            String::new()
        },
    }
}

/// A running container as YARN's container report shows it.
pub(super) fn container_view(
    id: &str,
    m: &crate::cluster::ContainerMeta,
    now: i64,
) -> ContainerView {
    ContainerView {
        container_id: id.to_owned(),
        allocated_mb: m.resource.memory_mb,
        allocated_vcores: m.resource.vcores,
        assigned_node_id: m.node_id.clone(),
        priority: m.priority,
        started_time: m.started_ms,
        finished_time: 0,
        elapsed_time: now.saturating_sub(m.started_ms).max(0),
        diagnostics_info: String::new(),
        log_url: super::logs::logs_link(None, &m.application_id, id),
        container_exit_status: 0,
        container_state: ContainerState::Running,
        node_http_address: format!("http://{}", m.node_id),
        node_id: m.node_id.clone(),
        allocated_resources: ResourceView {
            memory: m.resource.memory_mb,
            v_cores: m.resource.vcores,
        },
    }
}

/// One node as both nodes routes show it: Hadoop's fields, YARN's `resourceUtilization`, and
/// yard's own view of its load (`yardLoad`). A further per-node object is one more field of
/// [`NodeView`].
pub(super) fn node_view(cluster: &Cluster, n: &NodeInfo) -> NodeView {
    let (mut used_mb, mut used_vcores) = (0u64, 0u64);
    let mut count = 0;
    for (_, m) in cluster.containers_on(&n.node_id) {
        used_mb += m.resource.memory_mb;
        used_vcores += u64::from(m.resource.vcores);
        count += 1;
    }
    let (health, report) = match n.state {
        NodeState::Running => (NodeHealth::Healthy, String::new()),
        NodeState::Lost => (
            NodeHealth::Unhealthy,
            "lost: no heartbeat within the rm's node expiry".to_owned(),
        ),
    };
    NodeView {
        rack: n.rack.clone(),
        state: yarn_node_state(n.state),
        id: n.node_id.clone(),
        node_host_name: n.node_id.split(':').next().unwrap_or(&n.node_id).to_owned(),
        node_http_address: n.node_id.clone(),
        health_status: health,
        health_report: report,
        last_health_update: n.last_heartbeat_ms,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        used_memory_mb: used_mb,
        avail_memory_mb: n.capability.memory_mb.saturating_sub(used_mb),
        used_virtual_cores: used_vcores,
        available_virtual_cores: u64::from(n.capability.vcores).saturating_sub(used_vcores),
        num_containers: count,
        total_resource: ResourceView {
            memory: n.capability.memory_mb,
            v_cores: n.capability.vcores,
        },
        resource_utilization: resource_utilization(&n.telemetry),
        yard_load: yard_load(n),
        overload: match cluster.node_overload(&n.node_id) {
            Some(o) => overload_view(o),
            None => OverloadView {
                classifier: Classifier::Off,
                verdict: Verdict::Unknown,
                model: None,
            },
        },
        yard_load_history: None,
        yard_containers: None,
    }
}

/// The classifier's view of a node, as the wire shows it.
fn overload_view(o: NodeOverload) -> OverloadView {
    OverloadView {
        classifier: Classifier::On,
        verdict: o.verdict,
        model: Some(o.model),
    }
}

/// `GET /ws/v1/cluster/nodes/{id}`: [`node_view`], the node's recent samples and its
/// containers, oldest first.
pub(super) fn node_detail_view(cluster: &Cluster, n: &NodeInfo, now: i64) -> NodeView {
    let mut node = node_view(cluster, n);
    let mut containers: Vec<NodeContainer> = cluster
        .containers_on(&n.node_id)
        .map(|(id, m)| NodeContainer {
            application_id: m.application_id.clone(),
            container: container_view(id, m, now),
        })
        .collect();
    containers.sort_by(|a, b| {
        (a.container.started_time, &a.container.container_id)
            .cmp(&(b.container.started_time, &b.container.container_id))
    });
    node.yard_containers = Some(containers);
    node.yard_load_history = Some(
        cluster
            .telemetry_history(&n.node_id)
            .map(|(at, t)| LoadPoint {
                time: at,
                load_1m: t.load_1m,
                cpu_percent: t.cpu_percent,
                memory_used_fraction: memory_used_fraction(t),
                disk_read_bytes_per_s: t.disk_read_bytes_per_s,
                disk_write_bytes_per_s: t.disk_write_bytes_per_s,
                own_cpu_percent: t.own.cpu_percent,
            })
            .collect(),
    );
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
pub(super) fn resource_utilization(t: &NodeTelemetry) -> ResourceUtilization {
    let mb = |bytes: u64| bytes >> 20;
    let containers = |f: fn(&yard_wire::telemetry::ContainerUsage) -> u64| {
        t.containers.iter().map(f).fold(0u64, u64::saturating_add)
    };
    ResourceUtilization {
        node_physical_memory_mb: mb(t.memory_used_bytes),
        node_virtual_memory_mb: mb(t.memory_used_bytes.saturating_add(t.swap_used_bytes)),
        node_cpu_usage: t.cpu_percent / 100.0 * f64::from(t.cores),
        aggregated_containers_physical_memory_mb: mb(containers(|c| c.rss_bytes)),
        aggregated_containers_virtual_memory_mb: mb(containers(|c| c.virtual_bytes)),
        containers_cpu_usage: t.containers.iter().map(|c| c.cpu_percent).sum::<f64>() / 100.0,
    }
}

/// yard's view of a node's load: its last sample as the nodemanager sent it (the heartbeat's
/// `telemetry`, field for field) with when the rm received it (`sampledAt`, ms since the
/// epoch), the 1-minute load per logical CPU and the memory in use as a fraction. `None`
/// until the node's first sample.
pub(super) fn yard_load(n: &NodeInfo) -> Option<YardLoad> {
    let at = n.telemetry_ms?;
    let t = &n.telemetry;
    Some(YardLoad {
        sample: t.clone(),
        sampled_at: at,
        load_per_core: (t.cores > 0).then(|| t.load_1m / f64::from(t.cores)),
        memory_used_fraction: memory_used_fraction(t),
    })
}

pub(super) fn yarn_node_state(s: NodeState) -> yard_wire::views::NodeState {
    match s {
        NodeState::Running => yard_wire::views::NodeState::Running,
        NodeState::Lost => yard_wire::views::NodeState::Lost,
    }
}

/// Hadoop's app object: YARN's 26 fields, in its units (progress in percent, times in ms,
/// resource-seconds in MB·s and vcore·s), and yard's own (`applicationTags` as YARN's
/// comma-separated list, `deadlineMs`, `deadlineOutcome`, `quota`). Its diagnostics carry, while the app waits
/// for that reason, why the overload classifier placed none of its tasks.
pub(super) fn app_view(c: &Cluster, a: &AppInfo, cluster_id: i64, now: i64) -> AppView {
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
    AppView {
        id: a.application_id.clone(),
        user: a.user.clone(),
        name: a.name.clone(),
        application_type: a.yarn.application_type.clone(),
        queue: a.queue.clone(),
        state: a.lifecycle.state,
        final_status: a.lifecycle.final_status,
        progress: a.progress * 100.0,
        tracking_ui: tracking_ui.to_owned(),
        tracking_url,
        diagnostics,
        cluster_id,
        started_time: a.submitted_ms,
        finished_time: finished,
        elapsed_time: elapsed,
        am_container_logs: a.attempts.last().map_or_else(String::new, |t| {
            super::logs::logs_link(c.url(), &a.application_id, &t.container_id)
        }),
        am_host_http_address: master_node.unwrap_or_default(),
        allocated_mb: usage.allocated_mb,
        allocated_vcores: usage.allocated_vcores,
        running_containers: c.running_containers(&a.application_id) as u64,
        memory_seconds: usage.memory_seconds,
        vcore_seconds: usage.vcore_seconds,
        unmanaged_application: false,
        application_priority: 0,
        app_node_label_expression: Some(String::new()),
        am_node_label_expression: Some(String::new()),
        application_tags: a.tags.join(","),
        deadline_ms: a.deadline,
        // yard's: met, empty, missed or pending beside YARN's state and final status (null
        // without a deadline), judged once, here (`cluster::deadline_outcome`).
        deadline_outcome: a.deadline_outcome(now),
        quota: a.quota.as_ref().map(quota_view),
    }
}

/// YARN's `LIFETIME` timeout object of `a` at `now`.
pub(super) fn timeout_view(a: &AppInfo, now: i64) -> AppTimeout {
    let (expiry_time, remaining_time_in_seconds) = match a.yarn.lifetime_expiry_ms {
        Some(t) if !a.lifecycle.state.is_final() => (iso8601(t), (t - now).max(0) / 1000),
        _ => ("UNLIMITED".to_owned(), -1),
    };
    AppTimeout {
        kind: TimeoutType::Lifetime,
        expiry_time,
        remaining_time_in_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use yard_wire::views::{FeatureCount, OverloadModel, QuotaBasis, QuotaStage};

    /// The wire's copies of the policies' own types say what those serialize to, field for
    /// field: a field added to the policy's type fails here until the wire has it too.
    #[test]
    fn the_wire_views_of_policy_types_are_their_json() {
        let o = NodeOverload {
            verdict: Verdict::Bad,
            model: OverloadModel {
                p_good: Some(0.25),
                overloaded: None,
                labelled_good: 3,
                labelled_bad: 9,
                pending: 1,
                probes: 2,
                refused_since_ms: Some(5_000),
                features: vec![FeatureCount {
                    name: "load".into(),
                    level: 2,
                    good: 3,
                    bad: 9,
                }],
            },
        };
        let mut was = serde_json::to_value(&o).unwrap();
        was["classifier"] = json!("on");
        assert_eq!(serde_json::to_value(overload_view(o)).unwrap(), was);
        let counts = ModelCounts {
            good: 4,
            bad: 2,
            min_samples: 8,
            rule: "map".into(),
            utility: "cpu",
        };
        assert_eq!(
            serde_json::to_value(classifier_counts(counts.clone())).unwrap(),
            serde_json::to_value(counts).unwrap()
        );
        for &basis in QuotaBasis::ALL {
            for &stage in QuotaStage::ALL {
                let q = JobQuota {
                    stage,
                    containers: Some(4),
                    maps: None,
                    reduces: Some(1),
                    basis,
                };
                assert_eq!(
                    serde_json::to_value(quota_view(&q)).unwrap(),
                    serde_json::to_value(q).unwrap()
                );
            }
        }
    }
}
