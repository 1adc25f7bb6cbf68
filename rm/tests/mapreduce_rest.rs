//! MapReduce jobs over REST through the rm's router: submission checked field by field, the
//! master started with the job as submitted, its progress and estimate against the deadline
//! as the master reports them, and the answer once there is one.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use yard_appmaster::submission::MapReduceJob;
use yard_rm::cluster::{Cluster, Settings};
use yard_rm::rest::mapreduce::JOB_ENV;
use yard_rm::rest::{Clock, Rm, router};
use yard_wire::auth::{ClusterSecret, Principal};

const SECRET: [u8; 32] = [5; 32];
const JOBS: &str = "/ws/v1/yard/mapreduce/jobs";

fn token(p: Principal) -> String {
    ClusterSecret::new(SECRET).bearer_key().issue(&p)
}

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

struct Reply {
    status: StatusCode,
    location: Option<String>,
    body: Value,
}

struct Harness {
    rm: Rm,
    now: Arc<AtomicI64>,
}

impl Harness {
    fn new() -> Self {
        let now = Arc::new(AtomicI64::new(1_000_000));
        let clock_now = now.clone();
        let clock: Clock = Arc::new(move || clock_now.load(Ordering::SeqCst));
        let cluster = Cluster::new(Settings::default(), ClusterSecret::new(SECRET), 1_000);
        Harness {
            rm: Rm::in_memory(cluster, clock, 1_000),
            now,
        }
    }

    async fn call(&self, bearer: &str, method: Method, uri: &str, body: Option<Value>) -> Reply {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {bearer}"))
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
            .unwrap();
        let response = router(self.rm.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let location = response
            .headers()
            .get(header::LOCATION)
            .map(|l| l.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
        Reply {
            status,
            location,
            body,
        }
    }

    async fn submit(&self, body: Value) -> Reply {
        self.call(&user("alice"), Method::POST, JOBS, Some(body))
            .await
    }

    async fn get(&self, who: &str, uri: &str) -> Reply {
        self.call(&user(who), Method::GET, uri, None).await
    }

    /// The job's master, as the rm would start it, registers: the job runs.
    async fn start_master(&self, id: &str) {
        let node = json!({"nodeId": "n1:8042", "rack": "r1", "capability": {"memoryMb": 8192, "vcores": 8}});
        let n = token(Principal::Node { node: None });
        let r = self
            .call(&n, Method::POST, "/ws/v1/yard/nodes", Some(node))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let launches = self.rm.cluster.lock().unwrap().take_master_launches();
        assert_eq!(launches.len(), 1, "the master's container is granted");
        let r = self
            .call(
                &self.master(id),
                Method::POST,
                &format!("/ws/v1/yard/apps/{id}/register"),
                Some(json!({})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }

    fn master(&self, id: &str) -> String {
        let attempt = self.rm.cluster.lock().unwrap().current_attempt(id).unwrap();
        token(Principal::Master {
            app: id.into(),
            attempt,
        })
    }

    async fn allocate(&self, id: &str, job: Value) -> Reply {
        let body =
            json!({"applicationId": id, "asks": [], "releases": [], "progress": 0.2, "job": job});
        self.call(
            &self.master(id),
            Method::POST,
            &format!("/ws/v1/yard/apps/{id}/allocate"),
            Some(body),
        )
        .await
    }
}

fn progress(elapsed: f64, estimate: f64) -> Value {
    json!({"phase": "running", "policy": "dart", "maps": 10, "mapsLaunched": 4, "mapsDone": 2,
           "k": 4, "mapPhaseClosed": false, "reduces": 2, "reducesDone": 0,
           "processedBytes": 200, "inputBytes": 1000, "guarded": false,
           "elapsedSeconds": elapsed, "estimateSeconds": estimate})
}

#[tokio::test]
async fn a_job_is_submitted_watched_and_answered_over_rest() {
    let h = Harness::new();
    let job = json!({"app": "synthetic", "maps": 10, "mapSeconds": 0.5, "policy": "dart-paper"});
    let r = h
        .submit(json!({"job": job, "name": "nightly", "deadlineInMs": 30_000}))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let view = &r.body["job"];
    let id = view["id"].as_str().unwrap().to_owned();
    assert_eq!(r.location.as_deref(), Some(format!("{JOBS}/{id}").as_str()));
    assert_eq!(view["name"], "nightly");
    assert_eq!(view["user"], "alice");
    assert_eq!(view["state"], "ACCEPTED");
    assert_eq!(view["deadlineMs"], 1_030_000, "30 s on the rm's clock");
    assert_eq!(view["msToDeadline"], 30_000);
    assert_eq!(view["spec"]["policy"], "dart-paper");
    assert_eq!(view["spec"]["maps"], 10);
    assert_eq!(view["progress"], Value::Null);
    // The master runs the job as submitted, with its deadline.
    {
        let c = h.rm.cluster.lock().unwrap();
        let app = c.app(&id).unwrap();
        let spec: MapReduceJob = serde_json::from_str(&app.master_env[JOB_ENV]).unwrap();
        assert_eq!(
            &app.master_command[1..],
            spec.master_args(Some(1_030_000)).as_slice()
        );
        assert!(app.master_command[1..].contains(&"--maps=10".to_owned()));
    }
    // No answer yet: 409, saying where progress is.
    let r = h.get("alice", &format!("{JOBS}/{id}/answer")).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // The master reports progress with its allocate calls; the rm turns the estimate into a
    // time on its own clock and sets it against the deadline.
    h.start_master(&id).await;
    h.now.store(1_004_000, Ordering::SeqCst);
    let r = h.allocate(&id, progress(3.0, 20.0)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = h.get("alice", &format!("{JOBS}/{id}")).await;
    let p = &r.body["job"]["progress"];
    assert_eq!(r.body["job"]["state"], "RUNNING");
    assert_eq!((&p["mapsDone"], &p["maps"]), (&json!(2), &json!(10)));
    assert_eq!(p["estimatedEndMs"], 1_004_000 + 17_000, "{p}");
    assert_eq!(p["slackMs"], 1_030_000 - 1_021_000);
    // A later, worse estimate: the history keeps both, a second apart at least.
    h.now.store(1_004_500, Ordering::SeqCst);
    h.allocate(&id, progress(3.5, 20.0)).await;
    h.now.store(1_006_000, Ordering::SeqCst);
    h.allocate(&id, progress(5.0, 40.0)).await;
    let r = h.get("alice", &format!("{JOBS}/{id}")).await;
    let ends: Vec<i64> = r.body["job"]["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["estimatedEndMs"].as_i64().unwrap())
        .collect();
    assert_eq!(ends, [1_021_000, 1_041_000]);
    assert_eq!(r.body["job"]["progress"]["slackMs"], -11_000, "now late");
    // The listing shows it; another user sees neither it nor its answer.
    let r = h.get("alice", JOBS).await;
    assert_eq!(r.body["jobs"][0]["id"], id.as_str());
    assert_eq!(h.get("bob", JOBS).await.body["jobs"], json!([]));
    assert_eq!(
        h.get("bob", &format!("{JOBS}/{id}")).await.status,
        StatusCode::FORBIDDEN
    );
    // The master answers; the answer route serves it.
    let answer = json!({"processedFraction": 0.4, "answer": {"words": {"estimate": 5.0, "low": 4.0, "high": 6.0}}});
    let r = h
        .call(
            &h.master(&id),
            Method::PUT,
            &format!("/ws/v1/yard/apps/{id}/result"),
            Some(answer),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = h.get("alice", &format!("{JOBS}/{id}/answer")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["answer"]["processedFraction"], 0.4);
    assert_eq!(r.body["answer"]["answer"]["words"]["low"], 4.0);
}

#[tokio::test]
async fn bad_submissions_name_the_field_and_store_nothing() {
    let h = Harness::new();
    for (body, field) in [
        (json!({"job": {"app": "sort", "input": "x"}}), "job.app"),
        (json!({"job": {"app": "wordcount"}}), "job.input"),
        (
            json!({"job": {"app": "wordcount", "input": "nothing-here"}}),
            "job.input",
        ),
        (json!({"job": {"app": "synthetic", "maps": 0}}), "job.maps"),
        (
            json!({"job": {"app": "synthetic", "trace": "traces/x.json"}}),
            "job.trace",
        ),
        (
            json!({"job": {"app": "synthetic", "trace": "/no/such/trace.json"}}),
            "job.trace",
        ),
        (
            json!({"job": {"app": "synthetic", "maps": 1}, "deadlineMs": 2_000_000, "deadlineInMs": 5}),
            "deadlineInMs",
        ),
        (
            json!({"job": {"app": "synthetic", "maps": 1}, "deadlineInMs": 0}),
            "deadlineInMs",
        ),
        (
            json!({"job": {"app": "synthetic", "maps": 1}, "deadlineMs": 999_999}),
            "deadlineMs",
        ),
    ] {
        let r = h.submit(body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.body);
        let text = r.body.to_string();
        assert!(text.contains(field), "{body}: {text} should name {field}");
    }
    // Shapes serde refuses: an unknown field, a policy yard does not have.
    for body in [
        json!({"job": {"app": "synthetic", "maps": 1}, "deadline": 5}),
        json!({"job": {"app": "synthetic", "maps": 1, "policy": "fastest"}}),
    ] {
        let r = h.submit(body.clone()).await;
        assert!(r.status.is_client_error(), "{body}: {}", r.status);
    }
    // Only an admin submits for someone else.
    let r = h
        .submit(json!({"job": {"app": "synthetic", "maps": 1}, "user": "bob"}))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        h.rm.cluster.lock().unwrap().apps().count(),
        0,
        "nothing was stored"
    );
    // A plain application is not a job.
    let r = h
        .get("alice", &format!("{JOBS}/application_1000_0001"))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_master_progress_that_makes_no_sense_is_refused() {
    let h = Harness::new();
    let r = h
        .submit(json!({"job": {"app": "synthetic", "maps": 2}}))
        .await;
    let id = r.body["job"]["id"].as_str().unwrap().to_owned();
    h.start_master(&id).await;
    let mut bad = progress(1.0, 2.0);
    bad["mapsDone"] = json!(11);
    let r = h.allocate(&id, bad).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = h.allocate(&id, progress(-1.0, 2.0)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = h.get("alice", &format!("{JOBS}/{id}")).await;
    assert_eq!(r.body["job"]["progress"], Value::Null, "nothing of it kept");
}
