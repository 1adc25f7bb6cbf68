//! yard's own client routes under `/ws/v1/yard/`: an application's deadline view, datasets and
//! their upload grants, tokens, health, the container books, the cluster's last hour, the
//! OpenAPI document, and Prometheus' scrape targets and a finished master's final figures.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use yard_wire::auth::{DataGrant, Principal};
use yard_wire::limits::{self, echo};
use yard_wire::outputs::DatasetRemoved;
use yard_wire::protocol::Dataset;
use yard_wire::replies::{
    BookedNode, Books, BooksReply, DatasetSummary, DatasetsReply, Health, HealthReply,
    HistoryReply, IssuedToken, StoreHealth, UploadGrant, WhoAmI,
};
use yard_wire::views::{SetDeadline, YardAppReply};

use super::caller::{Caller, Scrape, owned, readable};
use super::views::{yard_app_reply, yard_app_view, yarn_node_state};
use super::{ApiError, OPENAPI, Reply, Rm, ok_view};
use crate::cluster::{Cluster, Touch};
use crate::journal::Journal;

/// How long a dataset upload grant stays valid.
pub(super) const UPLOAD_GRANT_MS: i64 = 3_600_000;

pub(super) async fn yard_app(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
) -> Reply {
    let app = rm.with(|c, now| readable(c, &caller, &id).map(|a| yard_app_view(a, now)))?;
    ok_view(&YardAppReply { app })
}

pub(super) async fn set_deadline(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<SetDeadline>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| owned(c, &caller, &id).map(drop))?;
    let Json(SetDeadline { deadline_ms }) = body?;
    if !(1..=limits::MAX_TIME_MS).contains(&deadline_ms.epoch_ms()) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "deadlineMs is a time: milliseconds since the Unix epoch",
            json!({ "deadlineMs": deadline_ms }),
        ));
    }
    let app = rm
        .commit(Touch::App(id.clone()), |c, now| {
            owned(c, &caller, &id)?;
            c.set_deadline(&id, deadline_ms)?;
            Ok::<_, ApiError>(yard_app_reply(c, &id, now)?)
        })
        .await?;
    ok_view(&app)
}

/// Every metric in Prometheus' text format. No token: Prometheus scrapes without one, and the
/// figures name no application, container or user (see docs/decisions/metrics-ui.md, "Metrics").
pub(super) async fn prometheus_metrics(State(rm): State<Rm>) -> Response {
    let text = rm.metrics.scrape(|refresh| rm.with(|c, _| refresh(c)));
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response()
}

/// Where Prometheus finds the nodemanagers and the MapReduce masters to scrape, in its
/// `http_sd` form; a finished master's final figures are scraped at the rm while it keeps
/// them. The scrape token or an admin's: it says where masters listen.
pub(super) async fn prometheus_targets(
    State(rm): State<Rm>,
    _scrape: Scrape,
    headers: axum::http::HeaderMap,
) -> Reply {
    let mut finals = rm.metrics.finals.lock().unwrap_or_else(|p| p.into_inner());
    ok_view(&rm.with(|c, now| {
        // The rm's address as the daemon knows it, else as Prometheus reached it.
        let rm_addr = c
            .url()
            .and_then(crate::metrics::host_port)
            .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()))
            .unwrap_or_default()
            .to_owned();
        crate::metrics::targets(c, &mut finals, &rm_addr, now)
    }))
}

/// A finished master's final figures, in Prometheus' text format: 404 once they expired.
pub(super) async fn final_figures(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    _scrape: Scrape,
) -> Reply {
    let now = (rm.clock)();
    let finals = rm.metrics.finals.lock().unwrap_or_else(|p| p.into_inner());
    match finals.get(&id, now) {
        Some(f) => Ok((
            [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
            f.text.clone(),
        )
            .into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "the rm keeps no final figures of this application: its master has not ended, left none, or they expired",
            Value::Null,
        )),
    }
}

pub(super) async fn datasets(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let datasets = rm.with(|c, _| {
        c.datasets()
            .map(|d| DatasetSummary {
                name: d.name.clone(),
                created_ms: d.created_ms,
                blocks: d.blocks.len() as u64,
                bytes: d.blocks.iter().map(|b| b.bytes).sum(),
            })
            .collect()
    });
    ok_view(&DatasetsReply { datasets })
}

pub(super) async fn dataset(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    _caller: Caller,
) -> Reply {
    let dataset = rm.with(|c, _| c.dataset(&name).map(|d| c.known_replicas(d)))?;
    ok_view(&dataset)
}

/// Whether `caller` may write dataset `name`: anyone who is a user when it is new, else its
/// owner or an admin.
pub(super) fn may_write_dataset(
    c: &Cluster,
    caller: &Caller,
    name: &str,
) -> Result<String, ApiError> {
    let user = caller.user()?.to_owned();
    match c.dataset_owner(name) {
        Some(owner) if !caller.0.owns(owner) => Err(ApiError::forbidden(format!(
            "dataset {name} belongs to {}; only its owner or an admin may replace it",
            if owner.is_empty() {
                "nobody (it predates owners)"
            } else {
                owner
            }
        ))),
        _ => Ok(user),
    }
}

pub(super) async fn put_dataset(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    caller: Caller,
    body: Result<Json<Dataset>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| may_write_dataset(c, &caller, &name))?;
    let Json(d) = body?;
    if d.name != name {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "name in the body differs from the one in the path",
            json!({ "path": echo(&name), "body": echo(&d.name) }),
        ));
    }
    let dataset = rm
        .commit(Touch::Dataset(name.clone()), |c, now| {
            let owner = may_write_dataset(c, &caller, &name)?;
            c.put_dataset(now, d, &owner)?;
            Ok::<_, ApiError>(c.dataset(&name).map(|d| c.known_replicas(d))?)
        })
        .await?;
    ok_view(&dataset)
}

/// `yard data rm`: the dataset leaves the catalog at once (saved before the reply) and its
/// blocks leave its nodes with their next heartbeats, never before the removal is saved.
pub(super) async fn delete_dataset(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    caller: Caller,
) -> Reply {
    let removed = rm
        .commit(Touch::Dataset(name.clone()), |c, _| {
            c.dataset(&name)?;
            may_write_dataset(c, &caller, &name)?;
            Ok::<_, ApiError>(c.remove_dataset(&name)?)
        })
        .await;
    match removed {
        Ok(nodes) => {
            rm.with(|c, _| c.release_deletes(&name));
            ok_view(&DatasetRemoved {
                dataset: name,
                nodes,
            })
        }
        Err(refused) => {
            // Not saved (or never made): nothing is deleted.
            rm.with(|c, _| c.drop_held_deletes(&name));
            Err(refused)
        }
    }
}

/// A grant to upload dataset `name`'s blocks to the nodemanagers, for its owner (or whoever
/// puts it first).
pub(super) async fn upload_grant(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    caller: Caller,
) -> Reply {
    crate::cluster::check_dataset_name(&name)?;
    let (token, expires_ms) = rm.with(|c, now| {
        may_write_dataset(c, &caller, &name)?;
        c.not_being_deleted(&name)?;
        let expires_ms = now + UPLOAD_GRANT_MS;
        let grant = DataGrant::Upload {
            dataset: name.clone(),
            expires_ms,
        };
        Ok::<_, ApiError>((c.data_token(&grant), expires_ms))
    })?;
    ok_view(&UploadGrant { token, expires_ms })
}

/// The caller's principal, as the rm reads its token.
pub(super) async fn whoami(caller: Caller) -> Reply {
    ok_view(&WhoAmI {
        principal: caller.0,
    })
}

/// What an admin may issue: a user's token, one node's credential, or the scrape token.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct TokenRequest {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    scrape: bool,
}

pub(super) async fn issue_token(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Json<TokenRequest>, JsonRejection>,
) -> Reply {
    if !caller.0.is_admin() {
        return Err(ApiError::forbidden(
            "only an admin may issue tokens; ask the cluster's operator",
        ));
    }
    let Json(t) = body?;
    let principal = match (t.user, t.node, t.scrape) {
        (Some(user), None, false) => {
            limits::check_name("user", &user)?;
            Principal::User { user }
        }
        (None, Some(node), false) => {
            limits::check_name("node", &node)?;
            Principal::Node { node: Some(node) }
        }
        (None, None, true) => Principal::Scraper,
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "say whose token: {\"user\": NAME}, {\"node\": HOST:PORT} or {\"scrape\": true}",
                Value::Null,
            ));
        }
    };
    ok_view(&IssuedToken {
        token: rm.bearer.issue(&principal),
        principal,
    })
}

/// Whether the rm can write its state. 503 while it cannot (a full or read-only disk).
pub(super) async fn health(State(rm): State<Rm>) -> Reply {
    match rm.journal.as_ref().and_then(Journal::failing) {
        None => ok_view(&HealthReply {
            health: Health {
                store: StoreHealth::Ok,
            },
        }),
        Some(reason) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the rm cannot write its state store: changes are refused until it can",
            json!(reason),
        )),
    }
}

/// The container book as the rm holds it, and whether its invariants hold (a test and
/// operator hook: compare each node's booked containers with what its nodemanager runs at
/// `/ws/v1/node/containers`). Admins only: it lists every application's containers.
pub(super) async fn books(State(rm): State<Rm>, caller: Caller) -> Reply {
    if !caller.0.is_admin() {
        return Err(ApiError::forbidden(
            "only an admin may read the container book",
        ));
    }
    let books = rm.with(|c, _| {
        let nodes = c
            .nodes()
            .map(|n| BookedNode {
                node_id: n.node_id.clone(),
                state: yarn_node_state(n.state),
                containers: c
                    .containers_on(&n.node_id)
                    .map(|(id, _)| id.clone())
                    .collect(),
            })
            .collect();
        let problem = c.check_books().err();
        Books {
            consistent: problem.is_none(),
            problem,
            nodes,
        }
    });
    ok_view(&BooksReply { books })
}

/// The cluster over the last hour, as the rm sampled it (the web UI's overview chart). Any
/// caller's token: counts only, as the cluster metrics.
pub(super) async fn history(State(rm): State<Rm>, _caller: Caller) -> Reply {
    ok_view(&HistoryReply {
        history: rm.with(|c, _| c.history()),
    })
}

pub(super) async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
        .into_response()
}
