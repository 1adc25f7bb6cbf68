//! Hadoop's client routes (`/ws/v1/cluster/...`): cluster info and metrics, the scheduler, nodes,
//! applications with their statistics, attempts, containers, queue, priority, timeouts and
//! state (submission itself is [`super::submission`]).

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};
use yard_wire::hadoop::{
    AppAttemptList, AppAttemptReply, AppAttemptsReply, AppPriority, AppQueue, AppStatisticsReply,
    AppTimeoutList, AppTimeoutReply, AppTimeoutsReply, ContainerList, ContainerReply,
    ContainersReply, NewApplication, QueueInfo, QueueList, QueueState, SchedulerApp, SchedulerApps,
    SchedulerInfo, SchedulerReply, SchedulerWrapper, StatItem, StatItems,
};
use yard_wire::limits::echo;
use yard_wire::views::{
    AppList, AppReply, AppStateView, AppsReply, ClusterInfo, ClusterInfoReply, ClusterMetrics,
    ClusterMetricsReply, NodeList, NodeReply, NodesReply, ResourceView, YarnApplicationState,
};

use super::caller::{Caller, owned};
use super::query::{APPS_PARAMS, AppsFilter, bad_query, lower_list, name_list, query_pairs};
use super::time::parse_iso8601;
use super::views::{
    QueueUse, app_view, attempt_id, attempt_view, classifier_counts, container_view,
    node_detail_view, node_view, percent, queue_info, quota_view, timeout_view, yarn_node_state,
};
use super::{ApiError, Host, Reply, Rm, app_location, ok_view};
use crate::cluster::{ClusterError, NodeState, Touch};

/// Hadoop reads `{appid}` before it looks the application up (`WebAppUtils.parseApplicationId`):
/// an id not of `application_<cluster timestamp>_<sequence>`'s form is a 400
/// (`BadRequestException`), a well-formed one never issued a 404.
fn app_id(id: &str) -> Result<(), ApiError> {
    if yard_wire::protocol::is_application_id(id) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("{} is not an application id", echo(id)),
        json!("application_<cluster timestamp>_<sequence>, as new-application issues"),
    ))
}

pub(super) async fn cluster_info(State(rm): State<Rm>) -> Reply {
    let version = env!("CARGO_PKG_VERSION");
    let store = if rm.journal.is_some() {
        "yard.rm.SqliteStateStore"
    } else {
        "yard.rm.MemoryStateStore"
    };
    ok_view(&ClusterInfoReply {
        cluster_info: ClusterInfo {
            id: rm.started_ms,
            started_on: rm.started_ms,
            state: "STARTED".into(),
            ha_state: "ACTIVE".into(),
            rm_state_store_name: store.into(),
            resource_manager_version: version.into(),
            resource_manager_build_version: format!("yard {version}"),
            resource_manager_version_built_on: String::new(),
            hadoop_version: "yard".into(),
            hadoop_build_version: format!("yard {version}"),
            hadoop_version_built_on: String::new(),
            ha_zoo_keeper_connection_state: "ResourceManager HA is not enabled.".into(),
        },
    })
}

pub(super) async fn metrics(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let m = rm.with(|c, _| c.metrics());
    let count = |n: usize| n as u64;
    ok_view(&ClusterMetricsReply {
        cluster_metrics: ClusterMetrics {
            apps_submitted: count(m.apps_submitted),
            apps_completed: count(m.apps_completed),
            apps_pending: count(m.apps_pending),
            apps_running: count(m.apps_running),
            apps_failed: count(m.apps_failed),
            apps_killed: count(m.apps_killed),
            available_mb: m.total_mb.saturating_sub(m.allocated_mb),
            allocated_mb: m.allocated_mb,
            total_mb: m.total_mb,
            available_virtual_cores: m.total_vcores.saturating_sub(m.allocated_vcores),
            allocated_virtual_cores: m.allocated_vcores,
            total_virtual_cores: m.total_vcores,
            containers_allocated: count(m.containers_allocated),
            total_nodes: count(m.active_nodes + m.lost_nodes),
            active_nodes: count(m.active_nodes),
            lost_nodes: count(m.lost_nodes),
            // Reserved, pending, unhealthy, decommissioned, rebooted, shut down: none in yard.
            ..ClusterMetrics::default()
        },
    })
}

/// YARN's `scheduler.schedulerInfo`: which policy runs (`type`: `capacityScheduler` under a
/// queue file, else the rm's policy as YARN would name its scheduler; yard's `policy` name),
/// the cluster's capacity as YARN's FIFO scheduler reports it, the queues as YARN's capacity
/// scheduler lists them (`queueName` `root` and its leaf `queues`, each with its capacities,
/// use, applications and policy; without a queue file the one `default`), MinEDF-WC's spare
/// counts, and every unfinished application's deadline and quota.
pub(super) async fn scheduler(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let (report, metrics, app, queues) = rm.with(|c, now| {
        let (report, metrics) = (c.scheduler_report(), c.metrics());
        let config = c.queues();
        let mut queues: Vec<QueueUse> = report
            .queues
            .iter()
            .map(|u| QueueUse {
                preempted: u.preempted,
                ..QueueUse::default()
            })
            .collect();
        let apps: Vec<SchedulerApp> = c
            .apps()
            .filter(|a| !a.lifecycle.state.is_final())
            .map(|a| {
                let u = c.usage(&a.application_id, now);
                let q = &mut queues[config.index_of(&a.queue)];
                q.used_mb += u.allocated_mb;
                q.used_vcores += u.allocated_vcores;
                q.containers += c.running_containers(&a.application_id) as u64;
                if a.lifecycle.state == YarnApplicationState::Running {
                    q.running += 1;
                } else {
                    q.pending += 1;
                }
                SchedulerApp {
                    id: a.application_id.clone(),
                    state: a.lifecycle.state,
                    deadline_ms: a.deadline,
                    running_containers: c.running_containers(&a.application_id) as u64,
                    maps: a.model.map(|m| m.maps),
                    reduces: a.model.map(|m| m.reduces),
                    profiled: a.model.is_some_and(|m| m.profile.is_some()),
                    quota: a.quota.as_ref().map(quota_view),
                }
            })
            .collect();
        let queue: Vec<QueueInfo> = config
            .all()
            .iter()
            .zip(queues)
            .map(|(q, u)| queue_info(q, u, metrics.total_mb))
            .collect();
        let kind = if config.configured() {
            "capacityScheduler"
        } else {
            report.policy.yarn_type()
        };
        (report, metrics, apps, (kind, queue))
    });
    let (kind, queue) = queues;
    let used = percent(metrics.allocated_mb, metrics.total_mb);
    ok_view(&SchedulerReply {
        scheduler: SchedulerWrapper {
            scheduler_info: SchedulerInfo {
                kind: kind.into(),
                policy: report.policy.name().into(),
                queue_name: "root".into(),
                qstate: QueueState::Running,
                capacity: 100.0,
                used_capacity: used,
                max_capacity: 100.0,
                queues: QueueList { queue },
                num_nodes: metrics.active_nodes as u64,
                total_node_capacity: metrics.total_mb,
                used_node_capacity: metrics.allocated_mb,
                avail_node_capacity: metrics.total_mb.saturating_sub(metrics.allocated_mb),
                num_containers: metrics.containers_allocated as u64,
                master_share: report.master_share,
                masters_used: ResourceView {
                    memory: report.masters_used.memory_mb,
                    v_cores: report.masters_used.vcores,
                },
                spare_allocations: report.spare.spare_allocations,
                spare_kills: report.spare.spare_kills,
                spare_map_allocations: report.spare.spare_map_allocations,
                spare_map_kills: report.spare.spare_map_kills,
                overload_classifier: report.overload.map(classifier_counts),
                apps: SchedulerApps { app },
            },
        },
    })
}

/// The attempt number a path names: YARN's `appattempt_…` id of `app`, or the bare number.
pub(super) fn parse_attempt(app: &str, given: &str) -> Result<u32, ApiError> {
    let number = match given.strip_prefix("appattempt_") {
        Some(rest) => {
            let (app_part, n) = rest.rsplit_once('_').unwrap_or(("", ""));
            // Hadoop's `validateIds`: another application's attempt is not found here.
            if format!("application_{app_part}") != app {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("{} is not an attempt of {}", echo(given), echo(app)),
                    json!(echo(&attempt_id(app, 1))),
                ));
            }
            n
        }
        None => given,
    };
    number.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{:?} is not an application attempt id", echo(given)),
            json!(format!("write {} or 1", echo(&attempt_id(app, 1)))),
        )
    })
}

pub(super) async fn app_attempts(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    let attempts = rm.with(|c, _| {
        c.app(&id).map(|a| {
            a.attempts
                .iter()
                .map(|t| attempt_view(a, t))
                .collect::<Vec<_>>()
        })
    });
    match attempts {
        Some(app_attempt) => ok_view(&AppAttemptsReply {
            app_attempts: AppAttemptList { app_attempt },
        }),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

pub(super) async fn app_attempt(
    State(rm): State<Rm>,
    Path((id, attempt)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, _| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        let t = a
            .attempts
            .iter()
            .find(|t| t.attempt == n)
            .ok_or_else(|| no_attempt(&id, n))?;
        ok_view(&AppAttemptReply {
            app_attempt: attempt_view(a, t),
        })
    })
}

pub(super) fn no_attempt(id: &str, n: u32) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no attempt {} of {}", echo(&attempt_id(id, n)), echo(id)),
        json!(format!("see /ws/v1/cluster/apps/{}/appattempts", echo(id))),
    )
}

/// The attempt's running containers (as YARN's rm lists them: ended ones are the history
/// server's, which yard does not have).
pub(super) async fn attempt_containers(
    State(rm): State<Rm>,
    Path((id, attempt)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        if !a.attempts.iter().any(|t| t.attempt == n) {
            return Err(no_attempt(&id, n));
        }
        let container = c
            .containers_of(&id, n)
            .map(|(cid, m)| container_view(cid, m, now))
            .collect();
        ok_view(&ContainersReply {
            containers: ContainerList { container },
        })
    })
}

pub(super) async fn attempt_container(
    State(rm): State<Rm>,
    Path((id, attempt, container)): Path<(String, String, String)>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    let n = parse_attempt(&id, &attempt)?;
    rm.with(|c, now| {
        c.app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        match c.container(&container) {
            Some(m) if m.application_id == id && m.attempt == n => ok_view(&ContainerReply {
                container: container_view(&container, m, now),
            }),
            _ => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no running container {container} in {}", attempt_id(&id, n)),
                json!("ended containers are not kept; see the attempt's containers"),
            )),
        }
    })
}

pub(super) async fn nodes(
    State(rm): State<Rm>,
    _caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &["states", "state", "healthy"])?;
    let mut states = Vec::new();
    for key in ["states", "state"] {
        if let Some(v) = q.get(key) {
            states.extend(name_list(
                "node state",
                v,
                yard_wire::views::NodeState::ALL,
            )?);
        }
    }
    let healthy = match q.get("healthy").map(|h| h.trim().to_ascii_lowercase()) {
        None => None,
        Some(h) if h == "true" => Some(true),
        Some(h) if h == "false" => Some(false),
        Some(h) => {
            return Err(bad_query(format!(
                "healthy={:?}: write healthy=true or healthy=false",
                echo(&h)
            )));
        }
    };
    let node = rm.with(|c, _| {
        c.nodes()
            .filter(|n| states.is_empty() || states.contains(&yarn_node_state(n.state)))
            .filter(|n| healthy.is_none_or(|h| h == (n.state == NodeState::Running)))
            .map(|n| node_view(c, n))
            .collect()
    });
    ok_view(&NodesReply {
        nodes: NodeList { node },
    })
}

pub(super) async fn node(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    let found = rm.with(|c, now| c.node(&id).map(|n| node_detail_view(c, n, now)));
    match found {
        Some(node) => ok_view(&NodeReply { node }),
        None => Err(ClusterError::UnknownNode(id).into()),
    }
}

pub(super) async fn apps(
    State(rm): State<Rm>,
    caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &APPS_PARAMS)?;
    let f = AppsFilter::parse(&q)?;
    let (app, total) = rm.with(|c, now| {
        // Each caller lists what it may read: a user its own applications, an admin all.
        let (page, total) = f.page(c.apps().filter(|a| caller.reader_of(a).is_ok()), now);
        let app = page
            .into_iter()
            .map(|a| {
                let mut v = app_view(c, a, rm.started_ms, now);
                // The other `deSelects` name objects yard does not send.
                for d in &f.deselects {
                    match d.as_str() {
                        "appNodeLabelExpression" => v.app_node_label_expression = None,
                        "amNodeLabelExpression" => v.am_node_label_expression = None,
                        _ => {}
                    }
                }
                v
            })
            .collect();
        (app, total)
    });
    ok_view(&AppsReply {
        apps: AppList { app, total },
    })
}

pub(super) async fn app(State(rm): State<Rm>, Path(id): Path<String>, _caller: Caller) -> Reply {
    app_id(&id)?;
    match rm.with(|c, now| c.app(&id).map(|a| app_view(c, a, rm.started_ms, now))) {
        Some(app) => ok_view(&AppReply { app }),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

/// YARN's application statistics: how many applications of a type (at most one, as YARN
/// allows; `*` for any) are in each asked state (every state when none is asked).
pub(super) async fn app_statistics(
    State(rm): State<Rm>,
    _caller: Caller,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Reply {
    let q = query_pairs(query, &["states", "applicationTypes"])?;
    let states = match q.get("states") {
        Some(v) => name_list("application-state", v, YarnApplicationState::ALL)?,
        None => YarnApplicationState::ALL.to_vec(),
    };
    let types = lower_list(q.get("applicationTypes"));
    if types.len() > 1 {
        return Err(bad_query(
            "we temporarily support at most one applicationType".into(),
        ));
    }
    let kind = types.first().cloned();
    let stat_item = rm.with(|c, _| {
        states
            .iter()
            .map(|&state| {
                let count = c
                    .apps()
                    .filter(|a| a.lifecycle.state == state)
                    .filter(|a| {
                        kind.as_ref()
                            .is_none_or(|k| *k == a.yarn.application_type.to_ascii_lowercase())
                    })
                    .count();
                StatItem {
                    state,
                    kind: kind.clone().unwrap_or_else(|| "*".into()),
                    count: count as u64,
                }
            })
            .collect()
    });
    ok_view(&AppStatisticsReply {
        app_stat_info: StatItems { stat_item },
    })
}

pub(super) async fn new_application(State(rm): State<Rm>, caller: Caller) -> Reply {
    let user = caller.user()?.to_owned();
    // Refused with the submission it is for while nothing can be saved.
    let (id, max) = rm.with(|c, now| {
        rm.refuse_unsaved()?;
        Ok::<_, ApiError>((c.new_application(now, &user)?, c.max_resource()))
    })?;
    ok_view(&NewApplication {
        application_id: id,
        maximum_resource_capability: ResourceView {
            memory: max.memory_mb,
            v_cores: max.vcores,
        },
    })
}

pub(super) async fn app_queue(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    match rm.with(|c, _| c.app(&id).map(|a| a.queue.clone())) {
        Some(queue) => ok_view(&AppQueue { queue }),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QueueBody {
    queue: String,
}

/// Moving an application: yard's policies do not move applications between queues (as YARN's
/// FIFO scheduler does not), so only its own queue is a valid target (200, nothing moves).
pub(super) async fn set_app_queue(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<QueueBody>, JsonRejection>,
) -> Reply {
    app_id(&id)?;
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(b) = body?;
    rm.with(|c, _| {
        let app = owned(c, &caller, &id)?;
        if app.queue != b.queue {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "{id} is in queue {}: yard's schedulers do not move applications between queues",
                    app.queue
                ),
                json!({ "queue": echo(&b.queue) }),
            ));
        }
        ok_view(&AppQueue {
            queue: app.queue.clone(),
        })
    })
}

pub(super) async fn app_priority(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    match rm.with(|c, _| c.app(&id).is_some()) {
        true => ok_view(&AppPriority { priority: 0 }),
        false => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriorityBody {
    /// Read to check the body's shape; capped to 0 whatever it is.
    #[allow(dead_code)]
    priority: i64,
}

/// yard's cluster has YARN's default `yarn.cluster.max-application-priority` of 0: as YARN
/// does, a higher priority is capped to it, so every application keeps priority 0.
pub(super) async fn set_app_priority(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<PriorityBody>, JsonRejection>,
) -> Reply {
    app_id(&id)?;
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(_) = body?;
    rm.with(|c, _| {
        let app = owned(c, &caller, &id)?;
        if app.lifecycle.state.is_final() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("{id} has ended: its priority can no longer change"),
                Value::Null,
            ));
        }
        ok_view(&AppPriority { priority: 0 })
    })
}

pub(super) async fn app_timeouts(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        ok_view(&AppTimeoutsReply {
            timeouts: AppTimeoutList {
                timeout: vec![timeout_view(a, now)],
            },
        })
    })
}

pub(super) fn check_timeout_type(kind: &str) -> Result<(), ApiError> {
    if kind.eq_ignore_ascii_case("LIFETIME") {
        return Ok(());
    }
    Err(bad_query(format!(
        "timeout type {:?}: LIFETIME is the only one (YARN's ApplicationTimeoutType)",
        echo(kind)
    )))
}

pub(super) async fn app_timeout(
    State(rm): State<Rm>,
    Path((id, kind)): Path<(String, String)>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    check_timeout_type(&kind)?;
    rm.with(|c, now| {
        let a = c
            .app(&id)
            .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
        ok_view(&AppTimeoutReply {
            timeout: timeout_view(a, now),
        })
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TimeoutBody {
    timeout: TimeoutSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct TimeoutSpec {
    r#type: String,
    expiry_time: String,
}

/// Sets an application's `LIFETIME`: the rm kills it at that time (YARN's timeout).
pub(super) async fn set_app_timeout(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<TimeoutBody>, JsonRejection>,
) -> Reply {
    app_id(&id)?;
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(b) = body?;
    check_timeout_type(&b.timeout.r#type)?;
    let expiry = parse_iso8601(&b.timeout.expiry_time).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "timeout.expiryTime {:?} is not yyyy-MM-dd'T'HH:mm:ss.SSSZ (e.g. 2030-01-31T12:00:00.000+0000)",
                echo(&b.timeout.expiry_time)
            ),
            json!({ "field": "timeout.expiryTime" }),
        )
    })?;
    if expiry <= (rm.clock)() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "timeout.expiryTime {} is not in the future",
                b.timeout.expiry_time
            ),
            json!({ "field": "timeout.expiryTime" }),
        ));
    }
    let timeout = rm
        .commit(Touch::App(id.clone()), |c, now| {
            owned(c, &caller, &id)?;
            c.set_lifetime(&id, Some(expiry))?;
            let a = c
                .app(&id)
                .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
            Ok::<_, ApiError>(timeout_view(a, now))
        })
        .await?;
    ok_view(&AppTimeoutReply { timeout })
}

pub(super) async fn app_state(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _caller: Caller,
) -> Reply {
    app_id(&id)?;
    match rm.with(|c, _| c.app(&id).map(|a| a.lifecycle.state)) {
        Some(state) => ok_view(&AppStateView { state }),
        None => Err(ClusterError::UnknownApp(id).into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewState {
    state: String,
}

/// YARN's kill: the first PUT that kills a live application answers 202 with `Location` (its
/// containers are being stopped); a PUT on an application in a final state (killed by this
/// PUT's predecessor, or ended otherwise) answers 200 with that state, so YARN's "repeat the
/// PUT until 200" loop ends.
pub(super) async fn set_app_state(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    Host(host): Host,
    caller: Caller,
    body: Result<Json<NewState>, JsonRejection>,
) -> Reply {
    app_id(&id)?;
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(s) = body?;
    if !s.state.eq_ignore_ascii_case("KILLED") {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Only 'KILLED' is allowed as a target state.",
            json!({ "asked": echo(&s.state) }),
        ));
    }
    let ended = rm
        .commit(Touch::App(id.clone()), |c, _| {
            let app = owned(c, &caller, &id)?;
            if app.lifecycle.state.is_final() {
                return Ok(Some(app.lifecycle.state));
            }
            c.kill(&id).map_err(ApiError::from)?;
            Ok::<_, ApiError>(None)
        })
        .await?;
    match ended {
        Some(state) => ok_view(&AppStateView { state }),
        None => Ok((
            StatusCode::ACCEPTED,
            [(header::LOCATION, app_location(&host, &id))],
            Json(AppStateView {
                state: YarnApplicationState::Killed,
            }),
        )
            .into_response()),
    }
}
