//! yard's daemon protocols under `/ws/v1/yard/`: a nodemanager's registration and heartbeats,
//! and a master's register, allocate, unregister, its answer, its final figures and the
//! recovery entries it keeps for its next attempt.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use yard_appmaster::apps::MAX_KIND_CHARS;
use yard_wire::deadline::DeadlineOutcome;
use yard_wire::limits::{self, FieldError, echo};
use yard_wire::protocol::{
    AllocateRequest, MasterAnswer, NodeHeartbeat, RecoveryEntries, RegisterNode, Unregister,
};
use yard_wire::replies::{
    FinalFiguresKept, MasterRegistered, Recovery, RecoveryKept, Unregistered,
};

use super::caller::Caller;
use super::views::{quota_view, yard_app_reply};
use super::{ApiError, Reply, Rm, ok_view};
use crate::cluster::{AppResult, Touch};
use yard_cluster::aria;
use yard_cluster::policy::JobModel;

pub(super) async fn register_node(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<RegisterNode>, JsonRejection>,
) -> Reply {
    // Who calls is checked before the body is read: a user's token is a 403 whatever it sent.
    caller.any_node()?;
    let Json(r) = body?;
    caller.node(&r.node_id)?;
    limits::check_name("nodeId", &r.node_id)?;
    limits::check_name("rack", &r.rack)?;
    limits::check_resource(
        "capability",
        r.capability,
        limits::NODE_MAX_MEMORY_MB,
        limits::NODE_MAX_VCORES,
    )?;
    limits::check_len("containers", r.containers.len())?;
    let registered = rm.with(|c, now| {
        let node = r.node_id.clone();
        c.register_node(now, r);
        c.registration(&node)
    });
    ok_view(&registered)
}

pub(super) async fn heartbeat(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<NodeHeartbeat>, JsonRejection>,
) -> Reply {
    caller.any_node()?;
    let Json(hb) = body?;
    caller.node(&hb.node_id)?;
    limits::check_len("running", hb.running.len())?;
    limits::check_len("completed", hb.completed.len())?;
    hb.telemetry.check("telemetry")?;
    ok_view(&rm.with(|c, now| {
        // Container ends are counted by the cluster as it frees them (see the metrics).
        let reply = c.heartbeat(now, hb);
        if !reply.reregister {
            rm.metrics.heartbeats.inc();
        }
        reply
    }))
}

/// Hadoop's RegisterApplicationMasterRequest, the part yard uses: where the master serves its
/// own status (clients follow it for progress). An empty body is a master without one.
/// yard's masters add what the deadline policies size quotas by: their task counts, and a
/// profile or the job kind to find one in the profile store. yard's MapReduce master sends
/// this type; it is the rm's, not `yard-wire`'s, because its profile is `yard-cluster`'s
/// (ARIA's model reads it), which `wire` is below; its schema is the path table's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MasterRegistration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduces: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<aria::Profile>,
}

/// The most maps or reduces a registering master may say its job has.
pub(super) const MAX_TASKS: u32 = 10_000_000;

impl MasterRegistration {
    /// The job model it registers, if any; a 400 naming the field for what is out of range.
    pub(super) fn model(&self) -> Result<Option<JobModel>, ApiError> {
        let said = self.profile.is_some() || self.job_kind.is_some();
        let (maps, reduces) = match (self.maps, self.reduces) {
            (Some(m), Some(r)) => (m, r),
            (None, None) if !said => return Ok(None),
            _ => {
                return Err(FieldError {
                    field: if self.maps.is_none() {
                        "maps"
                    } else {
                        "reduces"
                    }
                    .into(),
                    problem: "a job model needs both maps and reduces (its task counts)".into(),
                }
                .into());
            }
        };
        for (field, n) in [("maps", maps), ("reduces", reduces)] {
            if n > MAX_TASKS {
                return Err(FieldError {
                    field: field.into(),
                    problem: format!("{n} is over {MAX_TASKS}"),
                }
                .into());
            }
        }
        if let Some(kind) = &self.job_kind
            && (kind.is_empty()
                || kind.chars().count() > MAX_KIND_CHARS
                || kind.chars().any(char::is_control))
        {
            return Err(FieldError {
                field: "jobKind".into(),
                problem: format!("1 to {MAX_KIND_CHARS} printable characters"),
            }
            .into());
        }
        if let Some(p) = &self.profile
            && !p.valid()
        {
            return Err(FieldError {
                field: "profile".into(),
                problem: format!(
                    "every duration is a number of seconds from 0 to {}",
                    aria::MAX_SECONDS
                ),
            }
            .into());
        }
        Ok(Some(JobModel {
            maps,
            reduces,
            profile: self.profile,
        }))
    }
}

pub(super) async fn master_register(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let registration: MasterRegistration = if body.iter().all(u8::is_ascii_whitespace) {
        MasterRegistration::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "the registration is not {\"trackingUrl\": \"http://…\", \"maps\": N, \"reduces\": N, \"jobKind\": \"…\", \"profile\": {…}} (every field optional; or empty)",
                json!(limits::echo_message(&e.to_string())),
            )
        })?
    };
    let mut model = registration.model()?;
    if let Some(url) = &registration.tracking_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "trackingUrl must be an http(s) URL",
            json!(echo(url)),
        ));
    }
    // A profile from the store, for the job kind, when the master sent none (looked up only
    // for the application's own master).
    if let (Some(m), Some(kind), Some(store)) =
        (model.as_mut(), &registration.job_kind, &rm.profiles)
        && m.profile.is_none()
    {
        rm.with(|c, _| caller.master_of(c, &id))?;
        m.profile = store.lookup(kind, m.maps, m.reduces).await;
    }
    let quota = rm
        .commit(Touch::App(id.clone()), |c, _| {
            caller.master_of(c, &id)?;
            c.master_registered(&id, registration.tracking_url)?;
            if let Some(m) = model {
                c.set_model(&id, m)?;
            }
            Ok::<_, ApiError>(c.app(&id).and_then(|a| a.quota.as_ref().map(quota_view)))
        })
        .await?;
    ok_view(&MasterRegistered { quota })
}

pub(super) async fn allocate(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<AllocateRequest>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(req) = body?;
    if let Some(t) = req.tasks
        && t.maps_done > t.maps_to_run
    {
        return Err(FieldError {
            field: "tasks.mapsDone".into(),
            problem: format!(
                "{} is over tasks.mapsToRun ({})",
                t.maps_done, t.maps_to_run
            ),
        }
        .into());
    }
    limits::check_len("asks", req.asks.len())?;
    limits::check_len("releases", req.releases.len())?;
    for (i, ask) in req.asks.iter().enumerate() {
        limits::check_resource(
            &format!("asks[{i}].capability"),
            ask.capability,
            limits::CONTAINER_MAX_MEMORY_MB,
            limits::CONTAINER_MAX_VCORES,
        )?;
        if ask.num_containers > limits::MAX_CONTAINERS_PER_ASK {
            return Err(FieldError {
                field: format!("asks[{i}].numContainers"),
                problem: format!(
                    "{} is over {}",
                    ask.num_containers,
                    limits::MAX_CONTAINERS_PER_ASK
                ),
            }
            .into());
        }
    }
    if !(0.0..=1.0).contains(&req.progress) {
        return Err(FieldError {
            field: "progress".into(),
            problem: format!("{} is outside 0..=1", req.progress),
        }
        .into());
    }
    if req.application_id != id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "applicationId in the body differs from the one in the path",
            json!({ "path": echo(&id), "body": echo(&req.application_id) }),
        ));
    }
    ok_view(&rm.with(|c, now| {
        caller.master_of(c, &id)?;
        let placing = std::time::Instant::now();
        let reply = c.allocate(now, req).map_err(ApiError::from);
        rm.metrics
            .allocate_seconds
            .observe(placing.elapsed().as_secs_f64());
        reply
    })?)
}

pub(super) async fn master_unregister(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<Unregister>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(u) = body?;
    let diagnostics = limits::cut(&u.diagnostics, limits::MAX_DIAGNOSTICS_CHARS);
    rm.commit(Touch::App(id.clone()), |c, now| {
        caller.master_of(c, &id)?;
        c.master_finished(now, &id, u.succeeded, &diagnostics)
            .map_err(ApiError::from)
    })
    .await?;
    ok_view(&Unregistered {})
}

pub(super) async fn report_result(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<MasterAnswer>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(r) = body?;
    if !(0.0..=1.0).contains(&r.processed_fraction) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "processedFraction is the share of the input processed, from 0 to 1",
            json!({ "processedFraction": r.processed_fraction }),
        ));
    }
    // The metrics count a job's first answer (a master may report again as it improves).
    let (fraction, counted) = (r.processed_fraction, r.answer.clone());
    let (reply, first) = rm
        .commit(Touch::App(id.clone()), |c, now| {
            caller.master_of(c, &id)?;
            let first = c.app(&id).is_some_and(|a| a.result.is_none());
            // Stamped on receipt: the time the rm judges the deadline by.
            let result = AppResult {
                processed_fraction: r.processed_fraction,
                answer: r.answer,
                answered_ms: now,
            };
            c.report_result(&id, result)?;
            Ok::<_, ApiError>((yard_app_reply(c, &id, now)?, first))
        })
        .await?;
    if first {
        let judged = reply.app.deadline_outcome.map(DeadlineOutcome::name);
        rm.metrics.job_answered(fraction, &counted, judged);
    }
    ok_view(&reply)
}

/// A master, ending, leaves its last exposition (its `/metrics` text) with the rm, which serves
/// it in the master's place for [`crate::metrics::FINAL_FIGURES_RETENTION_MS`]: a short job's
/// master is gone before Prometheus first scrapes it. The current attempt's master only.
pub(super) async fn keep_final_figures(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Reply {
    use crate::metrics::{Final, MAX_FINAL_FIGURES_BYTES};
    let (instance, now) = rm.with(|c, now| {
        caller.master_of(c, &id)?;
        let instance = c
            .app(&id)
            .and_then(|a| a.tracking_url.as_deref())
            .and_then(crate::metrics::host_port)
            .map(str::to_owned)
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::CONFLICT,
                    "register a tracking URL first: the final figures go under the instance Prometheus scraped",
                    Value::Null,
                )
            })?;
        Ok::<_, ApiError>((instance, now))
    })?;
    if body.len() > MAX_FINAL_FIGURES_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a master's final figures are at most {MAX_FINAL_FIGURES_BYTES} bytes"),
            json!({ "bytes": body.len() }),
        ));
    }
    let text = String::from_utf8(body.to_vec()).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "the final figures are Prometheus' text format, UTF-8",
            Value::Null,
        )
    })?;
    if let Err(e) = crate::metrics::parse_text(&text) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the final figures are not Prometheus' text format (0.0.4)",
            json!(e),
        ));
    }
    let bytes = text.len();
    rm.metrics
        .finals
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keep(
            &id,
            Final {
                text,
                kept_ms: now,
                instance,
            },
        );
    ok_view(&FinalFiguresKept {
        application: id,
        bytes: bytes as u64,
        kept_ms: now,
    })
}

/// The longest recovery value, as JSON text.
pub(super) const MAX_RECOVERY_VALUE_BYTES: usize = 8192;

/// A master keeps entries for its application's next attempt (Hadoop's MapReduce recovery:
/// yard's masters keep one per finished map). Answered once committed.
pub(super) async fn put_recovery(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<RecoveryEntries>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| caller.master_of(c, &id))?;
    let Json(r) = body?;
    limits::check_len("entries", r.entries.len())?;
    let mut entries = BTreeMap::new();
    for (key, value) in r.entries {
        limits::check_name("entries (a key)", &key)?;
        let text = value.to_string();
        if !value.is_object() || text.len() > MAX_RECOVERY_VALUE_BYTES {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "entries.{key}: each value is a JSON object of at most {MAX_RECOVERY_VALUE_BYTES} bytes"
                ),
                json!({ "field": format!("entries.{key}"), "bytes": text.len() }),
            ));
        }
        entries.insert(key, text);
    }
    let kept = rm
        .commit(Touch::App(id.clone()), |c, _| {
            caller.master_of(c, &id)?;
            Ok::<_, ApiError>(c.put_recovery(&id, entries)?)
        })
        .await?;
    ok_view(&RecoveryKept {
        entries: kept as u64,
    })
}

/// What the application's masters kept for a next attempt; read by the current attempt.
pub(super) async fn recovery(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
) -> Reply {
    rm.with(|c, _| {
        caller.master_of(c, &id)?;
        let entries = c
            .recovery(&id)
            .map(|(k, v)| (k.clone(), serde_json::from_str(v).unwrap_or(Value::Null)))
            .collect();
        ok_view(&Recovery {
            attempt: c.current_attempt(&id),
            entries,
        })
    })
}
