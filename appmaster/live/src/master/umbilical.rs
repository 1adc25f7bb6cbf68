//! The umbilical: the routes runners and tasks call (Hadoop's TaskUmbilicalProtocol over
//! HTTP), and the tracking URL's status. Every route asks who calls ([`Gate`]).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow};
use axum::Json;
use axum::extract::{Path, State as AxumState};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LONG_POLL;
use super::state::{Shared, State};
use crate::{Done, Order, Outputs, Reply};

/// Who may call a master's routes. The master holds no key to verify a token with, only the
/// tokens themselves, and compares a caller's bearer with them in constant time:
/// - its job's token (`YARD_JOB_TOKEN`, which the nodemanager gives every container of the
///   application, the master's own and its tasks'): every route;
/// - the cluster's scrape token (`YARD_SCRAPE_TOKEN`, from the rm): `/metrics` only;
/// - a shared scan's credential (from the rm, once this master hosts the scan): the rider
///   routes `/mr/scan/*` only, as riders are other applications' masters.
///
/// Checked before anything else, the body included: 401 without a bearer, 403 with a wrong one.
pub(super) struct Gate {
    job: String,
    scrape: Option<String>,
    pub(super) scan: std::sync::OnceLock<String>,
}

impl Gate {
    /// The tokens of this master's container; none without a job token, which would leave the
    /// routes open to anyone on the host.
    pub(super) fn from_env() -> Result<Arc<Gate>> {
        let job = crate::job_token().ok_or_else(|| {
            anyhow!("YARD_JOB_TOKEN is not set: `yard mr-master` runs in a container a nodemanager starts, which gives it the job's token its routes ask for")
        })?;
        let scrape = std::env::var("YARD_SCRAPE_TOKEN")
            .ok()
            .filter(|t| !t.is_empty());
        Ok(Arc::new(Gate {
            job,
            scrape,
            scan: Default::default(),
        }))
    }

    /// Whether `token` opens `path`.
    fn opens(&self, path: &str, token: &str) -> bool {
        use yard_wire::auth::same_token;
        if path.starts_with("/mr/scan/") {
            return self.scan.get().is_some_and(|s| same_token(token, s));
        }
        same_token(token, &self.job)
            || (path == "/metrics" && self.scrape.as_ref().is_some_and(|s| same_token(token, s)))
    }
}

/// The [`Gate`] as a middleware over every route of a master's router.
pub(super) async fn gate(
    AxumState(gate): AxumState<Arc<Gate>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default());
    let path = request.uri().path();
    let refusal = match yard_wire::auth::bearer_of(header) {
        Err(e) => (StatusCode::UNAUTHORIZED, e.to_string()),
        Ok(token) if gate.opens(path, token) => return next.run(request).await,
        Ok(_) if path.starts_with("/mr/scan/") => (
            StatusCode::FORBIDDEN,
            "riding this shared scan takes the scan's credential, which the rm hands the jobs it lets ride".to_owned(),
        ),
        Ok(_) if path == "/metrics" => (
            StatusCode::FORBIDDEN,
            "this master's metrics take its job's token or the cluster's scrape token (`yard auth token --scrape`)".to_owned(),
        ),
        Ok(_) => (
            StatusCode::FORBIDDEN,
            "this master's routes take its job's token (its containers' YARD_JOB_TOKEN)".to_owned(),
        ),
    };
    let mut response = (refusal.0, Json(json!({ "error": refusal.1 }))).into_response();
    if refusal.0 == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer realm=\"yard\""),
        );
    }
    response
}

pub(super) type St = AxumState<Arc<Shared>>;

/// Runs `f` on the state, then wakes every long-poll: whatever changed may answer one.
pub(super) fn with<T>(shared: &Shared, f: impl FnOnce(&mut State) -> T) -> T {
    let out = f(&mut shared.lock());
    shared.changed.notify_waiters();
    out
}

/// A long-poll: the first `Some` that `f` gives, re-asked whenever the state changes, or
/// `nothing` after [`LONG_POLL`] (the caller asks again).
async fn long_poll<T>(shared: &Shared, f: impl FnMut(&mut State) -> Option<T>, nothing: T) -> T {
    long_poll_for(shared, LONG_POLL, f, nothing).await
}

/// [`long_poll`], giving up after `wait`.
async fn long_poll_for<T>(
    shared: &Shared,
    wait: Duration,
    mut f: impl FnMut(&mut State) -> Option<T>,
    nothing: T,
) -> T {
    let give_up = tokio::time::Instant::now() + wait;
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
    /// How long the reply may wait for news (a kill, a cut) when there is none yet, in ms,
    /// at most [`LONG_POLL`]'s: the task hears of them at once instead of at its next report.
    #[serde(default, rename = "waitMs")]
    wait_ms: u64,
}

pub(super) async fn progress(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<ProgressBody>,
) -> Json<Reply> {
    // A report the policy decides nothing on (most of them) changes nothing a waiter looks
    // at: waking every long-poll on each would cost O(tasks²) wake-ups per report interval.
    let (now, decided) = {
        let mut s = shared.lock();
        let fed = s.fed;
        s.decided = false;
        let now = s.progress(&attempt, body.progress);
        let news = std::mem::take(&mut s.decided);
        if !news {
            s.fed = fed; // fed, but nothing came of it: no waiter need look again
        }
        (now, news)
    };
    if decided {
        shared.changed.notify_waiters();
    }
    if now.kill || now.cut || body.wait_ms == 0 {
        return Json(now);
    }
    let wait = Duration::from_millis(body.wait_ms).min(LONG_POLL);
    let news = |s: &mut State| Some(s.standing(&attempt)).filter(|r| r.kill || r.cut);
    Json(long_poll_for(&shared, wait, news, now).await)
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

/// A reduce's report of map output it fetched: the bytes and, timed by the reduce, the
/// seconds the fetch took.
#[derive(Deserialize)]
pub(super) struct ShuffledBody {
    bytes: u64,
    #[serde(default)]
    seconds: Option<f64>,
}

pub(super) async fn shuffled(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(body): Json<ShuffledBody>,
) -> Json<Reply> {
    let seconds = body.seconds.filter(|s| s.is_finite() && *s >= 0.0);
    Json(with(&shared, |s| s.shuffled(&attempt, body.bytes, seconds)))
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

/// Every metric in Prometheus' text format (the job's token or the scrape token: no label names
/// the job, its application or a container).
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

pub(super) fn umbilical(shared: Arc<Shared>, guard: Arc<Gate>) -> axum::Router {
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
        .route("/mr/attempts/{attempt}/commit", post(super::output::commit))
        .route("/mr/attempts/{attempt}/part", post(super::output::part))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .layer(axum::middleware::from_fn_with_state(guard, gate))
        .with_state(shared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::master::state::tests::{granted_task, state};

    /// A report that waits for news hears of a cut made while it waits, in that reply: the
    /// task need not wait for its next report. (Were the wait not woken, it would end after
    /// its 5 s with the report's own reply, which has no cut.)
    #[tokio::test]
    async fn a_waiting_progress_report_hears_of_a_cut_made_meanwhile() {
        let mut s = state();
        let task = granted_task(&mut s, "c1", "c:1");
        assert!(!s.started(&task.attempt).kill);
        let shared = Arc::new(Shared {
            state: std::sync::Mutex::new(s),
            changed: tokio::sync::Notify::new(),
        });
        let report = |wait_ms| {
            let body = ProgressBody {
                progress: 0.5,
                wait_ms,
            };
            progress(
                AxumState(shared.clone()),
                Path(task.attempt.clone()),
                Json(body),
            )
        };
        // Nothing to tell, no wait: the reply is at once and says nothing.
        let Json(now) = report(0).await;
        assert!(!now.kill && !now.cut);
        let waiting = tokio::spawn(report(5_000));
        tokio::task::yield_now().await;
        let attempt = shared.lock().attempt(&task.attempt).unwrap();
        with(&shared, |s| s.job.as_mut().unwrap().cut.insert(attempt));
        let Json(reply) = waiting.await.unwrap();
        assert!(reply.cut && !reply.kill);
    }

    #[test]
    fn each_token_opens_only_its_routes() {
        let gate = Gate {
            job: "yarddata1.job".into(),
            scrape: Some("yard1.scrape".into()),
            scan: Default::default(),
        };
        for path in ["/status", "/mr/attempts/1-1/failed", "/mr/runners/c/next"] {
            assert!(gate.opens(path, "yarddata1.job"), "{path}");
            assert!(!gate.opens(path, "yard1.scrape"), "{path}");
            assert!(!gate.opens(path, "yarddata1.jo"), "{path}");
        }
        assert!(gate.opens("/metrics", "yarddata1.job"));
        assert!(gate.opens("/metrics", "yard1.scrape"));
        // The rider routes: closed until the host has the scan's credential, then to it only.
        assert!(!gate.opens("/mr/scan/attach", "yarddata1.job"));
        gate.scan.set("yardscan1.s".into()).unwrap();
        assert!(gate.opens("/mr/scan/attach", "yardscan1.s"));
        assert!(gate.opens("/mr/scan/riders/0", "yardscan1.s"));
        assert!(!gate.opens("/mr/scan/riders/0", "yarddata1.job"));
        assert!(!gate.opens("/status", "yardscan1.s"));
    }
}
