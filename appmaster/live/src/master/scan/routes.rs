//! The host's routes: the umbilical its runners call (the scan's tasks) and the rider routes
//! (`/mr/scan/attach`, `/mr/scan/riders/{n}`) other jobs' masters call, over the shared scan.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State as AxumState};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::master::umbilical::{Gate, gate};
use crate::{Done, Order, Outputs, Reply};

use super::{Attach, RiderPoll, Shared, Task};
pub(super) fn kill() -> Reply {
    Reply {
        kill: true,
        ..Reply::default()
    }
}

pub(super) type St = AxumState<Arc<Shared>>;

async fn next(AxumState(shared): St, Path(container): Path<String>) -> Json<Order> {
    let order = shared.long_poll(|s| s.next_order(&container)).await;
    Json(order.unwrap_or(Order::Wait))
}

async fn started() -> Json<Reply> {
    Json(Reply::default())
}

async fn progress(AxumState(shared): St, Path(attempt): Path<String>) -> Json<Reply> {
    let live = shared.look(|s| s.attempts.contains_key(&attempt));
    Json(if live { Reply::default() } else { kill() })
}

async fn done(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Done>,
) -> Json<Reply> {
    Json(shared.with(|s| s.done(&attempt, body)))
}

#[derive(Deserialize)]
struct Failed {
    reason: String,
}

async fn failed(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Failed>,
) -> Json<Reply> {
    shared.with(|s| s.failed(&attempt, &body.reason));
    Json(Reply::default())
}

#[derive(Deserialize)]
struct FromBody {
    from: usize,
}

/// A reduce runs once its job has every block: its outputs are all listed at once.
async fn outputs(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FromBody>,
) -> Json<Outputs> {
    Json(shared.look(|s| {
        match s.attempts.get(&attempt).map(|a| a.task) {
            Some(Task::Reduce { rider, .. }) if s.riders[rider].outcome.is_none() => Outputs {
                outputs: s.riders[rider]
                    .outputs
                    .iter()
                    .skip(body.from)
                    .cloned()
                    .collect(),
                complete: true,
                kill: false,
            },
            _ => Outputs {
                outputs: Vec::new(),
                complete: true,
                kill: true,
            },
        }
    }))
}

/// `shuffled` and `ready`: a reduce on a shared scan keeps all its input.
async fn noted() -> Json<Reply> {
    Json(Reply::default())
}

#[derive(Deserialize)]
struct FetchFailure {
    output: String,
    node: String,
    #[serde(default)]
    reason: String,
}

async fn fetch_failure(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FetchFailure>,
) -> Json<Reply> {
    shared.with(|s| {
        if let Some(Task::Reduce { rider, .. }) = s.attempts.get(&attempt).map(|a| a.task) {
            let why = format!(
                "the scan's output {} on {} could not be fetched: {}",
                body.output, body.node, body.reason
            );
            s.fail(rider, &why);
        }
    });
    Json(kill())
}

/// A job attaches: 200 with its rider number, or 409 when the host no longer takes jobs.
async fn attach(AxumState(shared): St, Json(body): Json<Attach>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let rider = shared.with(|s| s.attach(body));
    match rider {
        Some(rider) => Json(json!({ "rider": rider })).into_response(),
        None => (
            axum::http::StatusCode::CONFLICT,
            Json(json!({ "error": "this scan is ending: ask the rm who scans the dataset now" })),
        )
            .into_response(),
    }
}

/// A rider's master waits here for its answer: its view once it has one (or after a while).
/// Each poll carries the deadline the rider's master holds now, which may have moved.
async fn rider(
    AxumState(shared): St,
    Path(rider): Path<usize>,
    Json(poll): Json<RiderPoll>,
) -> Json<Value> {
    if let Some(deadline) = poll.deadline_ms {
        shared.with(|s| s.move_deadline(rider, deadline));
    }
    let answered = shared
        .long_poll(|s| {
            let r = s.riders.get(rider)?;
            r.outcome.as_ref().map(|_| s.rider_view(rider))
        })
        .await;
    Json(answered.unwrap_or_else(|| {
        shared.look(|s| {
            if rider < s.riders.len() {
                s.rider_view(rider)
            } else {
                json!({ "error": format!("no job {rider} rides this scan") })
            }
        })
    }))
}

async fn status(AxumState(shared): St) -> Json<Value> {
    Json(shared.look(|s| s.status()))
}

pub(super) fn router(shared: Arc<Shared>, guard: Arc<Gate>) -> axum::Router {
    axum::Router::new()
        .route("/status", get(status))
        // Scraped like any master's; a scan host exports no figures of its own yet.
        .route("/metrics", get(|| async { "" }))
        .route("/mr/runners/{container}/next", post(next))
        .route("/mr/attempts/{attempt}/started", post(started))
        .route("/mr/attempts/{attempt}/progress", post(progress))
        .route("/mr/attempts/{attempt}/done", post(done))
        .route("/mr/attempts/{attempt}/failed", post(failed))
        .route("/mr/attempts/{attempt}/outputs", post(outputs))
        .route("/mr/attempts/{attempt}/shuffled", post(noted))
        .route("/mr/attempts/{attempt}/ready", post(noted))
        .route("/mr/attempts/{attempt}/fetch-failure", post(fetch_failure))
        .route("/mr/scan/attach", post(attach))
        .route("/mr/scan/riders/{rider}", post(rider))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .layer(axum::middleware::from_fn_with_state(guard, gate))
        .with_state(shared)
}
