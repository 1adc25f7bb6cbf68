//! MapReduce jobs over REST: a client names a built-in application, its input, its task
//! policy and its deadline; the rm starts the job's master (`yard mr-master`) itself, and
//! serves the job's live progress (from its master's allocate calls) and, once it has
//! answered, the answer with its processed fraction and error bounds. `yard submit` uses
//! exactly these routes:
//!
//! - `POST /ws/v1/yard/mapreduce/jobs` `{"job": {"app", "input", "policy", …}, "deadlineInMs"}`
//!   → 202 with the job's view and `Location`;
//! - `GET /ws/v1/yard/mapreduce/jobs` → the caller's jobs;
//! - `GET /ws/v1/yard/mapreduce/jobs/{id}` → state, progress, estimate against the deadline;
//! - `GET /ws/v1/yard/mapreduce/jobs/{id}/answer` → the answer, or 409 while it is coming.
//!
//! Shared scans (`"sharedScan": true`, CIRCUMFLEX): a job's master asks
//! `POST /ws/v1/yard/mapreduce/scans/{dataset}` who scans its dataset. The first to ask hosts
//! the scan; the others are told its master's address and attach to it, with the scan's
//! credential (`token`, the same for the host and its riders). The host hands the
//! dataset back (`DELETE`) before it stops taking jobs; a host whose application ended is
//! replaced by the next to ask. `GET /ws/v1/yard/mapreduce/scans` lists the scans running.
//!
//! The job as submitted rides in its master's environment (`YARD_JOB`), which the rm keeps
//! with the application across restarts: that is how a job is told from any other app. A job
//! posted without `seed` gets one the rm draws ([`Seeds`]), written into that job, so every
//! REST run of an aggregate reads its own sample, a restarted master the same one, and the
//! answer's `job.seed` says which (`yard submit` draws its own and prints it).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
pub use yard_appmaster::submission::JOB_ENV;
use yard_appmaster::submission::{MapReduceJob, master_args};
use yard_wire::auth::Principal;
use yard_wire::deadline::Deadline;
use yard_wire::jobs::{
    AnswerReply, AnswerView, JobLinks, JobReply, JobView, JobsReply, ProgressView, ScanJoined,
    ScanLeft, ScanView, ScansReply,
};
use yard_wire::limits::{self, FieldError, echo};
use yard_wire::protocol::JoinScan;

use super::caller::{Caller, readable};
use super::submission::{check_deadline, default_queue};
use super::views::quota_view;
use super::{ApiError, Reply, Rm, Route, ok_view, reply_value};
use crate::cluster::{AppInfo, Cluster, ClusterError, NewApp, Touch};

/// The routes' prefix.
const JOBS: &str = "/ws/v1/yard/mapreduce/jobs";

pub(super) fn routes() -> Vec<Route> {
    vec![
        (JOBS, &["get", "post"], get(list).post(submit)),
        ("/ws/v1/yard/mapreduce/jobs/{id}", &["get"], get(job)),
        (
            "/ws/v1/yard/mapreduce/jobs/{id}/answer",
            &["get"],
            get(answer),
        ),
        ("/ws/v1/yard/mapreduce/scans", &["get"], get(scans)),
        (
            "/ws/v1/yard/mapreduce/scans/{dataset}",
            &["post", "delete"],
            post(join_scan).delete(leave_scan),
        ),
    ]
}

/// A dataset's shared scan: the master that runs it.
#[derive(Debug, Clone)]
pub struct ScanHost {
    pub application: String,
    /// The host master's umbilical base URL, where jobs attach.
    pub url: String,
}

/// The shared scans running, by dataset. In memory: after an rm restart the next job to ask
/// hosts anew (the old host keeps serving the jobs already attached).
pub type ScanHosts = Arc<Mutex<BTreeMap<String, ScanHost>>>;

/// The calling master's application, if it is its current attempt and a shared-scan job over
/// `dataset`.
fn calling_master(c: &Cluster, caller: &Caller, dataset: &str) -> Result<String, ApiError> {
    let Principal::Master { app, .. } = &caller.0 else {
        return Err(ApiError::forbidden(
            "only a shared-scan job's master may do this (with its YARD_TOKEN)",
        ));
    };
    caller.master_of(c, app)?;
    let job = c.app(app).and_then(crate::cluster::job_of);
    match job {
        Some(j) if j.shared_scan && j.input.as_deref() == Some(dataset) => Ok(app.clone()),
        _ => Err(ApiError::forbidden(format!(
            "{app} is not a shared-scan job over dataset {dataset}"
        ))),
    }
}

/// The registry, rid of scans whose host's application no longer runs.
fn live_scans<'a>(
    rm: &'a Rm,
    c: &Cluster,
) -> std::sync::MutexGuard<'a, BTreeMap<String, ScanHost>> {
    let mut hosts = rm.scans.lock().unwrap_or_else(|p| p.into_inner());
    hosts.retain(|_, h| c.current_attempt(&h.application).is_some());
    hosts
}

async fn scans(State(rm): State<Rm>, _caller: Caller) -> Reply {
    let scans = rm.with(|c, _| {
        live_scans(&rm, c)
            .iter()
            .map(|(dataset, h)| scan_view(dataset, h))
            .collect()
    });
    ok_view(&ScansReply { scans })
}

fn scan_view(dataset: &str, h: &ScanHost) -> ScanView {
    ScanView {
        dataset: dataset.to_owned(),
        host: h.application.clone(),
        url: h.url.clone(),
    }
}

/// Who scans `dataset`: the host if one runs, else the caller, which hosts from now on.
async fn join_scan(
    State(rm): State<Rm>,
    Path(dataset): Path<String>,
    caller: Caller,
    body: Result<Json<JoinScan>, JsonRejection>,
) -> Reply {
    // Who calls first, then what it sent.
    rm.with(|c, _| {
        c.dataset(&dataset)?;
        calling_master(c, &caller, &dataset).map(drop)
    })?;
    let Json(JoinScan { url }) = body?;
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() > 200 {
        return Err(field_error(
            "url",
            format!("{:?} is not the master's http:// base URL", echo(&url)),
        ));
    }
    rm.with(|c, _| {
        c.dataset(&dataset)?;
        let me = calling_master(c, &caller, &dataset)?;
        let mut hosts = live_scans(&rm, c);
        let host = hosts.entry(dataset.clone()).or_insert_with(|| ScanHost {
            application: me.clone(),
            url,
        });
        // The host asks it of every rider on its scan routes: riders are other applications'
        // masters, which do not hold the host's job token.
        let token = c.scan_token(&dataset, &host.application);
        ok_view(&ScanJoined {
            scan: scan_view(&dataset, host),
            hosting: host.application == me,
            token,
        })
    })
}

/// The host stops taking jobs: the next job over `dataset` hosts a scan of its own.
async fn leave_scan(State(rm): State<Rm>, Path(dataset): Path<String>, caller: Caller) -> Reply {
    rm.with(|c, _| {
        let me = calling_master(c, &caller, &dataset)?;
        let mut hosts = rm.scans.lock().unwrap_or_else(|p| p.into_inner());
        let left = hosts.get(&dataset).is_some_and(|h| h.application == me);
        if left {
            hosts.remove(&dataset);
        }
        ok_view(&ScanLeft { dataset, left })
    })
}

/// Where the rm draws the seed of a job posted without one: a generator of its own (ChaCha8,
/// as the policies'), seeded from the OS at start ([`Seeds::default`]) or, for tests of the
/// routes alone, fixed, so their replies are reproducible. The rm is a daemon, not a policy:
/// its draws need not repeat, only differ.
#[derive(Clone)]
pub struct Seeds(Arc<Mutex<rand::rngs::ChaCha8Rng>>);

impl Seeds {
    /// Draws from `seed`'s sequence.
    pub fn fixed(seed: u64) -> Seeds {
        use rand::SeedableRng as _;
        Seeds(Arc::new(Mutex::new(rand::rngs::ChaCha8Rng::seed_from_u64(
            seed,
        ))))
    }

    fn draw(&self) -> u64 {
        use rand::Rng as _;
        self.0.lock().unwrap_or_else(|p| p.into_inner()).next_u64()
    }
}

impl Default for Seeds {
    /// Seeded from the OS: std's per-process random hash keys (as `yard submit`'s draw).
    fn default() -> Seeds {
        use std::hash::{BuildHasher, RandomState};
        Seeds::fixed(RandomState::new().hash_one(std::process::id()))
    }
}

/// A submission as posted, and whether its job named a seed. Read by axum's own `Json`
/// (its rejections as on every route: content type, syntax, shape), then once more for
/// `job.seed`: the job's type defaults a missing seed, which cannot tell "none" from 1.
struct Posted {
    submission: Submission,
    seeded: bool,
}

impl<S: Send + Sync> FromRequest<S> for Posted {
    type Rejection = JsonRejection;

    async fn from_request(req: Request, state: &S) -> Result<Posted, JsonRejection> {
        /// Only the one field looked at; the rest is `Submission`'s to check.
        #[derive(Deserialize)]
        struct Probe {
            job: ProbeJob,
        }
        #[derive(Deserialize)]
        struct ProbeJob {
            seed: Option<serde::de::IgnoredAny>,
        }
        let (parts, body) = req.into_parts();
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state).await?;
        let again = Request::from_parts(parts, Body::from(bytes.clone()));
        let Json(submission) = Json::<Submission>::from_request(again, state).await?;
        let seeded = serde_json::from_slice::<Probe>(&bytes).is_ok_and(|p| p.job.seed.is_some());
        Ok(Posted { submission, seeded })
    }
}

/// The body of `POST /ws/v1/yard/mapreduce/jobs`: the job, and who runs it, where, by when.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Submission {
    job: MapReduceJob,
    /// The application's name [the app's].
    #[serde(default)]
    name: Option<String>,
    #[serde(default = "default_queue")]
    queue: String,
    /// Submit for this user (admins only) [the caller].
    #[serde(default)]
    user: Option<String>,
    /// When the answer is due: ms since the Unix epoch…
    #[serde(default)]
    deadline_ms: Option<i64>,
    /// …or ms from now, on the rm's clock (one of the two, or neither: no deadline).
    #[serde(default)]
    deadline_in_ms: Option<i64>,
}

fn field_error(field: impl Into<String>, problem: impl Into<String>) -> ApiError {
    FieldError {
        field: field.into(),
        problem: problem.into(),
    }
    .into()
}

/// The submission's deadline on the rm's clock.
fn deadline_of(s: &Submission, now_ms: i64) -> Result<Option<Deadline>, ApiError> {
    match (s.deadline_ms, s.deadline_in_ms) {
        (Some(_), Some(_)) => Err(field_error(
            "deadlineInMs",
            "give deadlineMs (when) or deadlineInMs (how long from now), not both",
        )),
        (Some(at), None) => check_deadline("deadlineMs", at, now_ms).map(Some),
        (None, Some(after)) if !(1..=limits::MAX_TIME_MS).contains(&after) => Err(field_error(
            "deadlineInMs",
            format!("{after} is not a positive number of milliseconds"),
        )),
        (None, Some(after)) => {
            let at = Deadline::after(now_ms, after).epoch_ms();
            check_deadline("deadlineInMs", at, now_ms).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// The program the rm starts masters with: itself (`yard rm` is the `yard` binary).
fn master_program() -> Result<String, ApiError> {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the rm cannot find its own program to start the master with: {e}"),
                Value::Null,
            )
        })
}

async fn submit(
    State(rm): State<Rm>,
    caller: Caller,
    body: Result<Posted, JsonRejection>,
) -> Reply {
    caller.user()?;
    let Posted {
        submission: mut s,
        seeded,
    } = body?;
    let user = caller.submitter(s.user.as_deref())?;
    limits::check_name("queue", &s.queue)?;
    // An unknown or refusing queue is the caller's 400 before anything is spent on the job
    // (a seed, an id).
    rm.with(|c, _| c.check_queue(&s.queue, &user, caller.0.is_admin()))?;
    if !seeded {
        s.job.seed = rm.seeds.draw();
    }
    let name = s.name.clone().unwrap_or_else(|| s.job.app.clone());
    limits::check_name("name", &name)?;
    s.job
        .validate()
        .map_err(|p| field_error(format!("job.{}", p.field), p.problem))?;
    if let Some(trace) = &s.job.trace {
        // The master reads it on its node, from its own directory: a path the rm's host can
        // read, given whole.
        let path = std::path::Path::new(trace);
        if !path.is_absolute() {
            return Err(field_error(
                "job.trace",
                format!("{trace} is relative: give the trace's absolute path on the rm's host"),
            ));
        }
        if let Err(e) = std::fs::metadata(path) {
            return Err(field_error(
                "job.trace",
                format!("cannot read {trace}: {e}"),
            ));
        }
    }
    let deadline = deadline_of(&s, (rm.clock)())?;
    let mut command = vec![master_program()?];
    command.extend(master_args(deadline));
    let spec = serde_json::to_string(&s.job).expect("a job serialises");
    // The id first, so the submission's change names what it touches (an id it leaves unused
    // expires as any issued one does).
    let id = rm.with(|c, now| {
        rm.refuse_unsaved()?;
        for (i, input) in s.job.inputs().into_iter().enumerate() {
            if c.dataset(input).is_err() {
                return Err(field_error(
                    if i == 0 {
                        "job.input"
                    } else {
                        "job.moreInputs"
                    },
                    format!("no dataset {input} (`yard data ls` lists them)"),
                ));
            }
        }
        if let Some(output) = &s.job.output {
            super::outputs::output_free(c, output, None)?;
        }
        Ok::<_, ApiError>(c.new_application(now, &user)?)
    })?;
    rm.commit(Touch::App(id.clone()), |c, now| {
        let mut new = NewApp::new(&id, &name, &user, &s.queue);
        new.master_command = command;
        new.master_env.insert(JOB_ENV.into(), spec);
        new.deadline = deadline;
        // As YARN's own MapReduce jobs report themselves (`yarn application -appTypes`).
        new.application_type = "MAPREDUCE".into();
        c.submit_issued(now, new, &caller.0)
    })
    .await?;
    let job = rm
        .with(|c, now| c.app(&id).map(|a| job_view(a, now)))
        .ok_or_else(|| ClusterError::UnknownApp(id.clone()))?;
    let location = format!("{JOBS}/{id}");
    Ok((
        StatusCode::ACCEPTED,
        [(
            header::LOCATION,
            HeaderValue::from_str(&location).expect("an id is a plain name"),
        )],
        Json(reply_value(&JobReply { job })?),
    )
        .into_response())
}

/// The job `id`, if it is a MapReduce job the caller may read.
fn readable_job<'a>(c: &'a Cluster, caller: &Caller, id: &str) -> Result<&'a AppInfo, ApiError> {
    let app = readable(c, caller, id)?;
    if !app.master_env.contains_key(JOB_ENV) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("application {id} is not a MapReduce job"),
            json!(format!("see /ws/v1/cluster/apps/{id}")),
        ));
    }
    Ok(app)
}

async fn job(State(rm): State<Rm>, Path(id): Path<String>, caller: Caller) -> Reply {
    let job = rm.with(|c, now| readable_job(c, &caller, &id).map(|a| job_view(a, now)))?;
    ok_view(&JobReply { job })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// `active` (the default: not yet ended) or `all`.
    #[serde(default)]
    show: Option<String>,
    /// Only these applications (comma-separated ids): the web UI asks for the jobs of the
    /// page of applications it shows, not every job.
    #[serde(default)]
    ids: Option<String>,
}

/// The most ids one `?ids=` names (a page of the UI's applications is 25).
const MAX_IDS: usize = 200;

async fn list(
    State(rm): State<Rm>,
    caller: Caller,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Reply {
    let Query(q) = query.map_err(|e| field_error("query", limits::echo_message(&e.body_text())))?;
    let all = match q.show.as_deref() {
        None | Some("active") => false,
        Some("all") => true,
        Some(other) => {
            return Err(field_error(
                "show",
                format!("{:?}: give active (the default) or all", echo(other)),
            ));
        }
    };
    let ids: Option<Vec<&str>> = q.ids.as_deref().map(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    });
    if let Some(ids) = &ids {
        if ids.len() > MAX_IDS {
            return Err(field_error(
                "ids",
                format!("{} ids: give at most {MAX_IDS}", ids.len()),
            ));
        }
        if let Some(bad) = ids
            .iter()
            .find(|id| !yard_wire::protocol::is_application_id(id))
        {
            return Err(field_error(
                "ids",
                format!(
                    "{:?} is not an application id (application_<cluster timestamp>_<sequence>)",
                    echo(bad)
                ),
            ));
        }
    }
    let jobs = rm.with(|c, now| {
        c.apps()
            .filter(|a| a.master_env.contains_key(JOB_ENV) && caller.reader_of(a).is_ok())
            .filter(|a| all || !a.lifecycle.state.is_final())
            .filter(|a| {
                ids.as_ref()
                    .is_none_or(|ids| ids.contains(&a.application_id.as_str()))
            })
            .map(|a| job_view(a, now))
            .collect()
    });
    ok_view(&JobsReply { jobs })
}

async fn answer(State(rm): State<Rm>, Path(id): Path<String>, caller: Caller) -> Reply {
    rm.with(|c, _| {
        let a = readable_job(c, &caller, &id)?;
        let state = a.lifecycle.state;
        match &a.result {
            Some(r) => ok_view(&AnswerReply {
                answer: AnswerView {
                    id: a.application_id.clone(),
                    state,
                    final_status: a.lifecycle.final_status,
                    deadline_ms: a.deadline,
                    processed_fraction: r.processed_fraction,
                    answer: r.answer.clone(),
                },
            }),
            None if a.lifecycle.state.is_final() => Err(ApiError::new(
                StatusCode::GONE,
                format!("{id} ended {state} without an answer"),
                json!(format!(
                    "see {JOBS}/{id}, and its containers' logs at /ws/v1/yard/apps/{id}/logs"
                )),
            )),
            None => Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("{id} is {state}: its answer comes when it finishes"),
                json!(format!("GET {JOBS}/{id} for its progress")),
            )),
        }
    })
}

/// A job's view: its state, the job as submitted, its master's last progress with the
/// estimate against the deadline, and the answer once there is one.
fn job_view(a: &AppInfo, now_ms: i64) -> JobView {
    let id = &a.application_id;
    let spec: Value = a
        .master_env
        .get(JOB_ENV)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null);
    let progress = a.job_progress.as_ref().map(|p| ProgressView {
        progress: p.progress.clone(),
        at_ms: p.at_ms,
        estimated_end_ms: p.estimated_end_ms,
        slack_ms: p
            .estimated_end_ms
            .zip(a.deadline)
            .map(|(e, d)| d.epoch_ms() - e),
    });
    JobView {
        id: id.clone(),
        name: a.name.clone(),
        user: a.user.clone(),
        queue: a.queue.clone(),
        state: a.lifecycle.state,
        final_status: a.lifecycle.final_status,
        diagnostics: a.lifecycle.diagnostics.clone(),
        submitted_ms: a.submitted_ms,
        deadline_ms: a.deadline,
        ms_to_deadline: a.deadline.map(|d| d.epoch_ms() - now_ms),
        spec,
        progress,
        estimates: a.estimates.clone(),
        quota: a.quota.as_ref().map(quota_view),
        job_type: a.job_type,
        processed_fraction: a.result.as_ref().map(|r| r.processed_fraction),
        answer: a.result.as_ref().map(|r| r.answer.clone()),
        links: JobLinks {
            this: format!("{JOBS}/{id}"),
            answer: format!("{JOBS}/{id}/answer"),
            app: format!("/ws/v1/cluster/apps/{id}"),
            state: format!("/ws/v1/cluster/apps/{id}/state"),
        },
    }
}
