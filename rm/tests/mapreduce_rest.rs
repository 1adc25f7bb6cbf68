//! MapReduce jobs over REST through the rm's router: submission checked field by field, the
//! master started with the job as submitted, its progress and estimate against the deadline
//! as the master reports them, and the answer once there is one.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Answer, Harness, token};
use yard_appmaster::submission::MapReduceJob;
use yard_rm::cluster::Settings;
use yard_rm::rest::mapreduce::JOB_ENV;
use yard_wire::auth::Principal;

const JOBS: &str = "/ws/v1/yard/mapreduce/jobs";

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

/// An rm of the default settings started at 1 s, its clock at 1,000 s.
fn harness() -> Harness {
    let h = Harness::at(Settings::default(), 1_000);
    h.set_now(1_000_000);
    h
}

struct Reply {
    status: StatusCode,
    location: Option<String>,
    body: Value,
}

impl From<Answer> for Reply {
    fn from(a: Answer) -> Self {
        Reply {
            status: a.status,
            body: a.json(),
            location: a.location,
        }
    }
}

async fn call(h: &Harness, bearer: &str, method: Method, uri: &str, body: Option<Value>) -> Reply {
    h.call_as(Some(bearer), method, uri, body).await.into()
}

async fn submit(h: &Harness, body: Value) -> Reply {
    call(h, &user("alice"), Method::POST, JOBS, Some(body)).await
}

async fn get(h: &Harness, who: &str, uri: &str) -> Reply {
    call(h, &user(who), Method::GET, uri, None).await
}

/// The job's master, as the rm would start it, registers: the job runs.
async fn start_master(h: &Harness, id: &str) {
    h.node("n1:8042", 8).await;
    let launches = h.rm.cluster.lock().unwrap().take_master_launches();
    assert_eq!(launches.len(), 1, "the master's container is granted");
    let register = format!("/ws/v1/yard/apps/{id}/register");
    let r = call(h, &master(h, id), Method::POST, &register, Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

fn master(h: &Harness, id: &str) -> String {
    let attempt = h.rm.cluster.lock().unwrap().current_attempt(id).unwrap();
    token(Principal::Master {
        app: id.into(),
        attempt,
    })
}

async fn allocate(h: &Harness, id: &str, job: Value) -> Reply {
    let body =
        json!({"applicationId": id, "asks": [], "releases": [], "progress": 0.2, "job": job});
    let uri = format!("/ws/v1/yard/apps/{id}/allocate");
    call(h, &master(h, id), Method::POST, &uri, Some(body)).await
}

fn progress(elapsed: f64, estimate: f64) -> Value {
    json!({"phase": "running", "policy": "dart", "maps": 10, "mapsLaunched": 4, "mapsDone": 2,
           "k": 4, "mapPhaseClosed": false, "reduces": 2, "reducesDone": 0,
           "processedBytes": 200, "inputBytes": 1000, "guarded": false,
           "elapsedSeconds": elapsed, "estimateSeconds": estimate})
}

#[tokio::test]
async fn a_job_is_submitted_watched_and_answered_over_rest() {
    let h = harness();
    let job = json!({"app": "synthetic", "maps": 10, "mapSeconds": 0.5, "policy": "dart-paper"});
    let r = submit(
        &h,
        json!({"job": job, "name": "nightly", "deadlineInMs": 30_000}),
    )
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
    // The master runs the job as submitted, from its environment, typed; only its deadline
    // rides the command line.
    {
        let c = h.rm.cluster.lock().unwrap();
        let app = c.app(&id).unwrap();
        let spec: MapReduceJob = serde_json::from_str(&app.master_env[JOB_ENV]).unwrap();
        assert_eq!((spec.maps, spec.map_seconds), (Some(10), Some(0.5)));
        assert_eq!(spec.policy.name(), "dart-paper");
        assert_eq!(
            &app.master_command[1..],
            ["mr-master", "--deadline-ms=1030000"]
        );
        assert_eq!(app.yarn.application_type, "MAPREDUCE");
    }
    // No answer yet: 409, saying where progress is.
    let r = get(&h, "alice", &format!("{JOBS}/{id}/answer")).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // The master reports progress with its allocate calls; the rm turns the estimate into a
    // time on its own clock and sets it against the deadline.
    start_master(&h, &id).await;
    h.set_now(1_004_000);
    let r = allocate(&h, &id, progress(3.0, 20.0)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = get(&h, "alice", &format!("{JOBS}/{id}")).await;
    let p = &r.body["job"]["progress"];
    assert_eq!(r.body["job"]["state"], "RUNNING");
    assert_eq!((&p["mapsDone"], &p["maps"]), (&json!(2), &json!(10)));
    assert_eq!(p["estimatedEndMs"], 1_004_000 + 17_000, "{p}");
    assert_eq!(p["slackMs"], 1_030_000 - 1_021_000);
    // A later, worse estimate: the history keeps both, a second apart at least.
    h.set_now(1_004_500);
    allocate(&h, &id, progress(3.5, 20.0)).await;
    h.set_now(1_006_000);
    allocate(&h, &id, progress(5.0, 40.0)).await;
    let r = get(&h, "alice", &format!("{JOBS}/{id}")).await;
    let ends: Vec<i64> = r.body["job"]["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["estimatedEndMs"].as_i64().unwrap())
        .collect();
    assert_eq!(ends, [1_021_000, 1_041_000]);
    assert_eq!(r.body["job"]["progress"]["slackMs"], -11_000, "now late");
    // The listing shows it; another user sees neither it nor its answer.
    let r = get(&h, "alice", JOBS).await;
    assert_eq!(r.body["jobs"][0]["id"], id.as_str());
    assert_eq!(get(&h, "bob", JOBS).await.body["jobs"], json!([]));
    assert_eq!(
        get(&h, "bob", &format!("{JOBS}/{id}")).await.status,
        StatusCode::FORBIDDEN
    );
    // The master answers; the answer route serves it.
    let answer = json!({"processedFraction": 0.4, "answer": {"words": {"estimate": 5.0, "low": 4.0, "high": 6.0}}});
    let r = call(
        &h,
        &master(&h, &id),
        Method::PUT,
        &format!("/ws/v1/yard/apps/{id}/result"),
        Some(answer),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = get(&h, "alice", &format!("{JOBS}/{id}/answer")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["answer"]["processedFraction"], 0.4);
    assert_eq!(r.body["answer"]["answer"]["words"]["low"], 4.0);
}

/// A job posted without a seed gets one the rm draws, written into the job its master runs
/// (which a restarted master reads again) and shown in its view; two such jobs get two seeds,
/// so two REST runs of an aggregate read two samples. A seed given is kept, 1 included.
#[tokio::test]
async fn a_job_without_a_seed_gets_one_drawn_and_a_given_seed_is_kept() {
    let h = harness();
    let mut seeds = Vec::new();
    for seed in [None, None, Some(1), Some(42)] {
        let mut job = json!({"app": "synthetic", "maps": 2, "mapSeconds": 0.5});
        if let Some(seed) = seed {
            job["seed"] = json!(seed);
        }
        let r = submit(&h, json!({ "job": job })).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let id = r.body["job"]["id"].as_str().unwrap().to_owned();
        let shown = r.body["job"]["spec"]["seed"].as_u64().unwrap();
        let c = h.rm.cluster.lock().unwrap();
        let stored: MapReduceJob =
            serde_json::from_str(&c.app(&id).unwrap().master_env[JOB_ENV]).unwrap();
        assert_eq!(stored.seed, shown, "the master runs with the seed shown");
        if let Some(seed) = seed {
            assert_eq!(shown, seed, "a given seed is kept");
        }
        seeds.push(shown);
    }
    assert_ne!(seeds[0], seeds[1], "two jobs without a seed: two draws");
}

#[tokio::test]
async fn bad_submissions_name_the_field_and_store_nothing() {
    let h = harness();
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
        let r = submit(&h, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.body);
        let text = r.body.to_string();
        assert!(text.contains(field), "{body}: {text} should name {field}");
    }
    // Shapes serde refuses: an unknown field, a policy yard does not have.
    for body in [
        json!({"job": {"app": "synthetic", "maps": 1}, "deadline": 5}),
        json!({"job": {"app": "synthetic", "maps": 1, "policy": "fastest"}}),
    ] {
        let r = submit(&h, body.clone()).await;
        assert!(r.status.is_client_error(), "{body}: {}", r.status);
    }
    // Only an admin submits for someone else.
    let r = submit(
        &h,
        json!({"job": {"app": "synthetic", "maps": 1}, "user": "bob"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        h.rm.cluster.lock().unwrap().apps().count(),
        0,
        "nothing was stored"
    );
    // A plain application is not a job.
    let r = get(&h, "alice", &format!("{JOBS}/application_1000_0001")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_master_progress_that_makes_no_sense_is_refused() {
    let h = harness();
    let r = submit(&h, json!({"job": {"app": "synthetic", "maps": 2}})).await;
    let id = r.body["job"]["id"].as_str().unwrap().to_owned();
    start_master(&h, &id).await;
    let mut bad = progress(1.0, 2.0);
    bad["mapsDone"] = json!(11);
    let r = allocate(&h, &id, bad).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = allocate(&h, &id, progress(-1.0, 2.0)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = get(&h, "alice", &format!("{JOBS}/{id}")).await;
    assert_eq!(r.body["job"]["progress"], Value::Null, "nothing of it kept");
}

/// The shared-scan registry: the first master to ask hosts its dataset's scan, the next is told
/// the host; only the host hands the dataset back, and a host whose application ended is
/// replaced by the next to ask. Users may list the scans, not join them.
#[tokio::test]
async fn the_first_master_to_ask_hosts_a_datasets_scan_and_the_others_are_sent_to_it() {
    let h = harness();
    // Room for four masters within the masters' default tenth of the cluster.
    h.node("n1:8042", 40).await;
    let logs =
        json!({"name": "logs", "blocks": [{"block": "b0", "bytes": 10, "nodes": ["n1:8042"]}]});
    let (status, body) = h
        .call(Method::PUT, "/ws/v1/yard/datasets/logs", Some(logs))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let job = json!({"app": "wordcount", "input": "logs", "policy": "full", "sharedScan": true});
    let plain = json!({"app": "wordcount", "input": "logs", "policy": "full"});
    let mut ids = Vec::new();
    for job in [&job, &job, &job, &plain] {
        let r = submit(&h, json!({"job": job})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let id = r.body["job"]["id"].as_str().unwrap().to_owned();
        let launches = h.rm.cluster.lock().unwrap().take_master_launches();
        assert_eq!(launches.len(), 1);
        ids.push(id);
    }
    let scan = "/ws/v1/yard/mapreduce/scans/logs";
    let join = |id: &str, url: &str| {
        let (h, who, body) = (&h, master(&h, id), json!({ "url": url }));
        async move { call(h, &who, Method::POST, scan, Some(body)).await }
    };
    let r = join(&ids[0], "http://127.0.0.1:1001").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (&r.body["host"], &r.body["hosting"]),
        (&json!(ids[0]), &json!(true))
    );
    // The scan's credential: the host asks it of riders, and the rm hands them the same.
    let host_token = r.body["token"].clone();
    assert!(
        host_token
            .as_str()
            .is_some_and(|t| t.starts_with("yardscan1.")),
        "{}",
        r.body
    );
    let r = join(&ids[1], "http://127.0.0.1:1002").await;
    assert_eq!(
        (&r.body["host"], &r.body["url"]),
        (&json!(ids[0]), &json!("http://127.0.0.1:1001"))
    );
    assert_eq!(r.body["hosting"], false);
    assert_eq!(r.body["token"], host_token);
    let listed = get(&h, "alice", "/ws/v1/yard/mapreduce/scans").await;
    assert_eq!(listed.body["scans"][0]["host"], ids[0], "{}", listed.body);
    // Not the host: nothing handed back. The host: the dataset is free.
    let r = call(&h, &master(&h, &ids[1]), Method::DELETE, scan, None).await;
    assert_eq!(r.body["left"], false, "{}", r.body);
    let r = call(&h, &master(&h, &ids[0]), Method::DELETE, scan, None).await;
    assert_eq!(r.body["left"], true, "{}", r.body);
    let r = join(&ids[1], "http://127.0.0.1:1002").await;
    assert_eq!(
        (&r.body["host"], &r.body["hosting"]),
        (&json!(ids[1]), &json!(true))
    );
    // Another host's scan, another credential: the first's riders cannot ride it.
    assert_ne!(r.body["token"], host_token);
    // The host's application ends: the next to ask hosts.
    h.rm.cluster.lock().unwrap().kill(&ids[1]).unwrap();
    let r = join(&ids[2], "http://127.0.0.1:1003").await;
    assert_eq!(
        (&r.body["host"], &r.body["hosting"]),
        (&json!(ids[2]), &json!(true))
    );
    // Users list; only masters join; a bad URL or an unknown dataset is a clear 4xx.
    let r = call(
        &h,
        &user("alice"),
        Method::POST,
        scan,
        Some(json!({"url": "http://x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = join(&ids[2], "ftp://x").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let (who, body) = (master(&h, &ids[2]), json!({"url": "http://127.0.0.1:1003"}));
    let r = call(
        &h,
        &who,
        Method::POST,
        "/ws/v1/yard/mapreduce/scans/nope",
        Some(body),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    // A master of a job that shares no scan hosts none.
    let r = join(&ids[3], "http://127.0.0.1:1004").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
}
