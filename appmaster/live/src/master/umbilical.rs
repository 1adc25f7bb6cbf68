//! The umbilical: the routes runners and tasks call (Hadoop's TaskUmbilicalProtocol over
//! HTTP), and the tracking URL's status.

use super::*;

pub(super) type St = AxumState<Arc<Shared>>;

/// Runs `f` on the state, then wakes every long-poll: whatever changed may answer one.
pub(super) fn with<T>(shared: &Shared, f: impl FnOnce(&mut State) -> T) -> T {
    let out = f(&mut shared.lock());
    shared.changed.notify_waiters();
    out
}

/// A long-poll: the first `Some` that `f` gives, re-asked whenever the state changes, or
/// `nothing` after [`LONG_POLL`] (the caller asks again).
async fn long_poll<T>(
    shared: &Shared,
    mut f: impl FnMut(&mut State) -> Option<T>,
    nothing: T,
) -> T {
    let give_up = tokio::time::Instant::now() + LONG_POLL;
    loop {
        // Registered before looking, so a change between the look and the wait is not missed.
        let changed = shared.changed.notified();
        let (answer, fed) = {
            let mut state = shared.lock();
            let answer = f(&mut state);
            (answer, std::mem::take(&mut state.fed))
        };
        // Looking changes nothing unless it fed the policy (a runner's first ask offers its
        // container): waking the other waiters for nothing would have them spin.
        if fed {
            shared.changed.notify_waiters();
        }
        if let Some(answer) = answer {
            return answer;
        }
        if tokio::time::timeout_at(give_up, changed).await.is_err() {
            return nothing;
        }
    }
}

pub(super) async fn next(AxumState(shared): St, Path(container): Path<String>) -> Json<Order> {
    Json(long_poll(&shared, |s| s.next_order(&container), Order::Wait).await)
}

#[derive(Deserialize)]
pub(super) struct ProgressBody {
    progress: f64,
}

pub(super) async fn progress(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<ProgressBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.progress(&attempt, body.progress)))
}

pub(super) async fn started(AxumState(shared): St, Path(attempt): Path<String>) -> Json<Reply> {
    Json(with(&shared, |s| s.started(&attempt)))
}

pub(super) async fn done(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<Done>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.done(&attempt, body)))
}

#[derive(Deserialize)]
pub(super) struct FailedBody {
    reason: String,
}

pub(super) async fn failed(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FailedBody>,
) -> Json<Reply> {
    with(&shared, |s| s.failed(&attempt, &body.reason));
    Json(Reply::default())
}

#[derive(Deserialize)]
pub(super) struct FromBody {
    from: usize,
}

pub(super) async fn outputs(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FromBody>,
) -> Json<Outputs> {
    let nothing = Outputs {
        outputs: Vec::new(),
        complete: false,
        kill: false,
    };
    Json(long_poll(&shared, |s| s.outputs(&attempt, body.from), nothing).await)
}

#[derive(Deserialize)]
pub(super) struct BytesBody {
    bytes: u64,
}

pub(super) async fn shuffled(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<BytesBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.shuffled(&attempt, body.bytes)))
}

pub(super) async fn ready(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<BytesBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| s.ready(&attempt, body.bytes)))
}

#[derive(Deserialize)]
pub(super) struct FetchFailureBody {
    /// The output as the master listed it (`OutputRef::output`) and the node it was on.
    output: String,
    node: String,
    #[serde(default)]
    reason: String,
}

/// A reducer could not fetch a map output (Hadoop's fetch-failure notification).
pub(super) async fn fetch_failure(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<FetchFailureBody>,
) -> Json<Reply> {
    Json(with(&shared, |s| {
        s.fetch_failed(&attempt, &body.output, &body.node, &body.reason)
    }))
}

pub(super) async fn status(AxumState(shared): St) -> Json<Value> {
    Json(shared.lock().status())
}

/// Every metric in Prometheus' text format (no credential, as `/status`: no label names the
/// job, its application or a container).
pub(super) async fn metrics(AxumState(shared): St) -> axum::response::Response {
    use axum::response::IntoResponse;
    let text = {
        let state = shared.lock();
        state.metrics.scrape(&state)
    };
    (
        [(
            axum::http::header::CONTENT_TYPE,
            super::metrics::CONTENT_TYPE,
        )],
        text,
    )
        .into_response()
}

pub(super) fn umbilical(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/status", get(status))
        .route("/metrics", get(metrics))
        .route("/mr/runners/{container}/next", post(next))
        .route("/mr/attempts/{attempt}/started", post(started))
        .route("/mr/attempts/{attempt}/progress", post(progress))
        .route("/mr/attempts/{attempt}/done", post(done))
        .route("/mr/attempts/{attempt}/failed", post(failed))
        .route("/mr/attempts/{attempt}/outputs", post(outputs))
        .route("/mr/attempts/{attempt}/shuffled", post(shuffled))
        .route("/mr/attempts/{attempt}/ready", post(ready))
        .route("/mr/attempts/{attempt}/fetch-failure", post(fetch_failure))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .with_state(shared)
}
