//! Golden replies: the exact reply of every route the rm serves — status, content type,
//! `Location` and `WWW-Authenticate` where sent, and the body (nulls and absent fields, `1`
//! against `1.0`) — for one representative cluster (two nodes, a running application with
//! containers, a finished one, a killed one, a dataset, a MapReduce job with its shared scan
//! and its answer) and for the refusals (400 with its message, 401, 403, 404, 405, 406, 409,
//! 413, 422), recorded in `rm/tests/golden/<case>.json`, one file a case.
//!
//! The rm is driven in-process through its router (as `rest.rs` does) on a clock the test
//! sets and a fixed cluster secret, so ids, times and tokens come out the same on every run.
//! A difference fails naming the case, the request, the path in the JSON, and the expected and
//! actual values with their JSON types. `YARD_BLESS=1 cargo test -p yard-rm --test golden`
//! rewrites the files (and removes those no case writes); review the diff before committing.
//!
//! Normalised ([`normalise`], nothing else): in `/metrics`, the histogram
//! `yard_rm_allocate_duration_seconds`, the one figure that measures wall-clock time (its
//! finite buckets and its sum become `<varies>`; its count, the number of allocate calls, is
//! kept); and the served OpenAPI document, replaced by `<rm/openapi.json>` only when it is that
//! file exactly (`rest.rs` checks the file's paths against the routes). Ids, times, keys and
//! token signatures are not normalised: on this clock and secret they do not vary.
//!
//! Also checked: every route and method in [`yard_rm::rest::routes`] has a case, and no
//! golden file is left over from a case that is gone.
//!
//! Not covered here, and why: the web UI's pages (`ui::router`: HTML, not JSON; `ui.rs`
//! tests them); the nodemanager's routes (`/ws/v1/node/...`: its info, metrics and container
//! routes exist only inside a running daemon registered with an rm, and its data router, which
//! a test could drive in-process, lives in `yard-nodemanager`, which `yard-rm` does not depend
//! on); a master's routes (its server runs only inside `yard mr-master`, in `appmaster/live`);
//! a 503 from a store that cannot be written (`durability.rs`).

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Map, Value, json};
use support::{Harness, served_routes, token};
use tower::ServiceExt;
use yard_rm::cluster::Settings;
use yard_rm::rest::{MAX_BODY_BYTES, OPENAPI, router};
use yard_wire::auth::Principal;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn admin() -> String {
    token(Principal::Admin {
        user: "operator".into(),
    })
}

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

fn master(h: &Harness, id: &str) -> String {
    let attempt =
        h.rm.cluster
            .lock()
            .unwrap()
            .current_attempt(id)
            .unwrap_or(1);
    token(Principal::Master {
        app: id.into(),
        attempt,
    })
}

fn node() -> String {
    token(Principal::Node { node: None })
}

/// A JSON body.
fn js(v: Value) -> Option<String> {
    Some(v.to_string())
}

/// The one normaliser: replaces what truly varies from run to run by a placeholder.
fn normalise(record: &mut Value) {
    if let Some(lines) = record.get_mut("bodyLines").and_then(Value::as_array_mut) {
        for line in lines.iter_mut() {
            let Some(text) = line.as_str() else { continue };
            // A wall-clock histogram: `name{labels} value`.
            let timed = text.starts_with("yard_rm_allocate_duration_seconds_sum")
                || (text.starts_with("yard_rm_allocate_duration_seconds_bucket")
                    && !text.contains("le=\"+Inf\""));
            if timed && let Some((series, _)) = text.rsplit_once(' ') {
                *line = json!(format!("{series} <varies>"));
            }
        }
    }
    if let Some(body) = record.get_mut("body")
        && serde_json::from_str::<Value>(OPENAPI).is_ok_and(|spec| *body == spec)
    {
        *body = json!("<rm/openapi.json>");
    }
}

/// The JSON type of `v`, telling an integer from a float.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

/// Where `got` differs from `want`, one line a difference, each with its path in the JSON.
fn diff(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let keys: BTreeSet<&String> = w.keys().chain(g.keys()).collect();
            for k in keys {
                let at = format!("{path}.{k}");
                match (w.get(k), g.get(k)) {
                    (Some(w), Some(g)) => diff(&at, w, g, out),
                    (Some(w), None) => {
                        out.push(format!("{at}: expected {} ({}), absent", shown(w), kind(w)))
                    }
                    (None, Some(g)) => out.push(format!(
                        "{at}: absent in the golden file, got {} ({})",
                        shown(g),
                        kind(g)
                    )),
                    (None, None) => unreachable!(),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (w, g)) in w.iter().zip(g).enumerate() {
                diff(&format!("{path}[{i}]"), w, g, out);
            }
            if w.len() != g.len() {
                out.push(format!(
                    "{path}: expected {} elements, got {}",
                    w.len(),
                    g.len()
                ));
            }
        }
        // `Value`'s equality tells `1` from `1.0`.
        (w, g) if w != g => out.push(format!(
            "{path}: expected {} ({}), got {} ({})",
            shown(w),
            kind(w),
            shown(g),
            kind(g)
        )),
        _ => {}
    }
}

/// The cases run so far, checked (or, blessing, written) against their golden files.
struct Golden {
    h: Harness,
    bless: bool,
    names: BTreeSet<String>,
    covered: BTreeSet<(String, String)>,
    failures: Vec<String>,
    /// The `Accept` header of the next call (none: no header).
    accept: Option<&'static str>,
}

impl Golden {
    fn new(h: Harness) -> Self {
        Golden {
            h,
            bless: std::env::var_os("YARD_BLESS").is_some_and(|v| v == "1"),
            names: BTreeSet::new(),
            covered: BTreeSet::new(),
            failures: Vec::new(),
            accept: None,
        }
    }

    /// Sends `method uri` with `bearer` and `body`, records the reply as case `name` (of
    /// `route`, the routing table's path, if it is one) and checks it against the golden
    /// file. Returns the body as JSON (a text body: as a string).
    async fn call(
        &mut self,
        name: &str,
        route: Option<&str>,
        bearer: Option<&str>,
        method: Method,
        uri: &str,
        body: Option<String>,
    ) -> Value {
        assert!(self.names.insert(name.to_owned()), "two cases named {name}");
        if let Some(route) = route {
            self.covered
                .insert((route.to_owned(), method.as_str().to_ascii_lowercase()));
        }
        let mut request = Request::builder()
            .method(method.clone())
            .uri(uri)
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(b) = bearer {
            request = request.header(header::AUTHORIZATION, format!("Bearer {b}"));
        }
        if let Some(a) = self.accept.take() {
            request = request.header(header::ACCEPT, a);
        }
        let request = request
            .body(body.map_or_else(Body::empty, Body::from))
            .unwrap();
        let response = router(self.h.rm.clone()).oneshot(request).await.unwrap();
        let header_of = |name: header::HeaderName| {
            response
                .headers()
                .get(name)
                .map(|v| json!(v.to_str().unwrap()))
        };
        let content_type = header_of(header::CONTENT_TYPE);
        let location = header_of(header::LOCATION);
        let authenticate = header_of(header::WWW_AUTHENTICATE);
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(bytes.to_vec()).expect("a reply in UTF-8");
        let is_json = content_type
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with("application/json"));

        let mut record = Map::new();
        record.insert("request".into(), json!(format!("{method} {uri}")));
        record.insert("status".into(), json!(status));
        record.insert("contentType".into(), content_type.unwrap_or(Value::Null));
        if let Some(l) = location {
            record.insert("location".into(), l);
        }
        if let Some(a) = authenticate {
            record.insert("wwwAuthenticate".into(), a);
        }
        let reply = if is_json {
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{name}: a JSON reply that is not JSON ({e}): {text}"));
            record.insert("body".into(), v.clone());
            v
        } else {
            // Text (Prometheus' format, an empty body): a line a value, so a diff names the line.
            record.insert("bodyLines".into(), json!(text.lines().collect::<Vec<_>>()));
            json!(text)
        };
        let mut record = Value::Object(record);
        normalise(&mut record);
        self.check(name, &record);
        reply
    }

    fn check(&mut self, name: &str, actual: &Value) {
        let file = golden_dir().join(format!("{name}.json"));
        if self.bless {
            std::fs::create_dir_all(golden_dir()).unwrap();
            let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
            std::fs::write(&file, text).unwrap();
            return;
        }
        let request = actual["request"].as_str().unwrap_or("?");
        let want: Value = match std::fs::read_to_string(&file) {
            Ok(text) => serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", file.display())),
            Err(_) => {
                self.failures.push(format!(
                    "{name} ({request}): no golden file {}; run with YARD_BLESS=1 to record it",
                    file.display()
                ));
                return;
            }
        };
        let mut lines = Vec::new();
        diff("$", &want, actual, &mut lines);
        if !lines.is_empty() {
            let more = lines.len().saturating_sub(20);
            lines.truncate(20);
            if more > 0 {
                lines.push(format!("… and {more} more"));
            }
            self.failures
                .push(format!("{name} ({request}):\n    {}", lines.join("\n    ")));
        }
    }

    /// Every route and method has a case; no golden file is left from a case that is gone.
    /// Panics with every difference found.
    fn finish(mut self) {
        let served = served_routes();
        for (path, method) in served.difference(&self.covered) {
            self.failures
                .push(format!("no golden case for {method} {path}: add one"));
        }
        for entry in std::fs::read_dir(golden_dir()).into_iter().flatten() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.extension().is_some_and(|e| e == "json") && !self.names.contains(&stem) {
                if self.bless {
                    std::fs::remove_file(&path).unwrap();
                } else {
                    self.failures.push(format!(
                        "{}: no case writes it (YARD_BLESS=1 removes it)",
                        path.display()
                    ));
                }
            }
        }
        assert!(
            self.failures.is_empty(),
            "{} replies differ from rm/tests/golden (if the change is meant, rerun with \
             YARD_BLESS=1 and review the diff):\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

fn telemetry(cpu: f64) -> Value {
    json!({"cpuPercent": cpu, "load1m": 0.5, "load5m": 0.4, "load15m": 0.3,
        "memoryTotalBytes": 4u64 << 30, "memoryUsedBytes": 1u64 << 30,
        "diskReadBytesPerS": 1000.0, "diskWriteBytesPerS": 2000.0,
        "netRxBytesPerS": 300.0, "netTxBytesPerS": 400.0, "containers": [], "cores": 4})
}

fn asks(app: &str, n: u32) -> Value {
    json!({"applicationId": app, "progress": 0.25, "releases": [],
           "asks": [{"priority": 1, "resourceName": "*",
                     "capability": {"memoryMb": 1024, "vcores": 1}, "numContainers": n}]})
}

/// A refusal's case: its name, the bearer, the method, the address, the body.
type Case<'a> = (&'a str, Option<&'a str>, Method, String, Option<String>);

/// A master's final Prometheus exposition.
const FINAL: &str = "# HELP yard_mr_master_maps Maps by state\n# TYPE yard_mr_master_maps gauge\nyard_mr_master_maps{state=\"done\"} 16\n";

#[tokio::test]
async fn every_route_replies_as_recorded() {
    // ids `application_1000_…`, the clock at 1 s.
    let mut g = Golden::new(Harness::at(Settings::default(), 1_000));
    let (admin, alice, bob) = (admin(), user("alice"), user("bob"));
    let (admin, alice, bob) = (
        Some(admin.as_str()),
        Some(alice.as_str()),
        Some(bob.as_str()),
    );
    let node = node();
    let node = Some(node.as_str());
    let (get, post, put, delete) = (Method::GET, Method::POST, Method::PUT, Method::DELETE);

    // The daemons' protocol: two nodes register and beat.
    let nodes = "/ws/v1/yard/nodes";
    let beat = "/ws/v1/yard/nodes/heartbeat";
    g.call(
        "yard_nodes_register",
        Some(nodes),
        node,
        post.clone(),
        nodes,
        js(json!({"nodeId": "n1:8042", "rack": "/r1",
            "capability": {"memoryMb": 16384, "vcores": 16}})),
    )
    .await;
    g.h.node("n2:8042", 8).await;
    g.call(
        "yard_nodes_heartbeat",
        Some(beat),
        node,
        post.clone(),
        beat,
        js(json!({"nodeId": "n2:8042", "running": [], "completed": [],
            "telemetry": telemetry(12.5)})),
    )
    .await;

    // A Hadoop client's application: new id, submit; its master registers and allocates.
    let created = g
        .call(
            "cluster_apps_new_application",
            Some("/ws/v1/cluster/apps/new-application"),
            alice,
            post.clone(),
            "/ws/v1/cluster/apps/new-application",
            None,
        )
        .await;
    let a = created["application-id"].as_str().unwrap().to_owned();
    g.call(
        "cluster_apps_submit",
        Some("/ws/v1/cluster/apps"),
        alice,
        post.clone(),
        "/ws/v1/cluster/apps",
        js(json!({"application-id": a, "application-name": "wordcount",
            "queue": "default", "application-type": "YARN",
            "application-tags": ["nightly"]})),
    )
    .await;
    g.h.rm.cluster.lock().unwrap().take_master_launches();
    let ma = master(&g.h, &a);
    let ma = Some(ma.as_str());
    let app_a = format!("/ws/v1/yard/apps/{a}");
    g.call(
        "yard_apps_register",
        Some("/ws/v1/yard/apps/{id}/register"),
        ma,
        post.clone(),
        &format!("{app_a}/register"),
        js(json!({"trackingUrl": "http://127.0.0.1:7001/status"})),
    )
    .await;
    g.h.set_now(2_000);
    let allocated = g
        .call(
            "yard_apps_allocate",
            Some("/ws/v1/yard/apps/{id}/allocate"),
            ma,
            post.clone(),
            &format!("{app_a}/allocate"),
            js(asks(&a, 2)),
        )
        .await;
    let first = &allocated["allocated"][0];
    let container = first["containerId"].as_str().unwrap().to_owned();
    let on = first["nodeId"].as_str().unwrap().to_owned();
    // The other one runs on: the attempt's container route shows it.
    let running = allocated["allocated"][1]["containerId"]
        .as_str()
        .unwrap()
        .to_owned();
    g.h.set_now(3_000);
    g.call(
        "yard_nodes_heartbeat_completed",
        None,
        node,
        post.clone(),
        beat,
        js(
            json!({"nodeId": on, "running": [], "telemetry": telemetry(50.0),
            "completed": [{"containerId": container, "end": "EXITED", "exitCode": 0}]}),
        ),
    )
    .await;
    g.call(
        "yard_apps_allocate_completed",
        None,
        ma,
        post.clone(),
        &format!("{app_a}/allocate"),
        js(asks(&a, 0)),
    )
    .await;
    // yard's own routes on it: deadline, result, recovery, final figures.
    g.call(
        "yard_apps_deadline",
        Some("/ws/v1/yard/apps/{id}/deadline"),
        alice,
        put.clone(),
        &format!("{app_a}/deadline"),
        js(json!({"deadlineMs": 90_000})),
    )
    .await;
    g.call(
        "yard_apps_result",
        Some("/ws/v1/yard/apps/{id}/result"),
        ma,
        put.clone(),
        &format!("{app_a}/result"),
        js(json!({"processedFraction": 0.5,
            "answer": {"words": {"the": 412}, "interval95": [400, 424.5]}})),
    )
    .await;
    g.call(
        "yard_apps_recovery_put",
        Some("/ws/v1/yard/apps/{id}/recovery"),
        ma,
        put.clone(),
        &format!("{app_a}/recovery"),
        js(json!({"entries": {"map-0": {"output": "1-0", "node": "http://n1"}}})),
    )
    .await;
    g.call(
        "yard_apps_recovery_get",
        Some("/ws/v1/yard/apps/{id}/recovery"),
        ma,
        get.clone(),
        &format!("{app_a}/recovery"),
        None,
    )
    .await;
    g.call(
        "yard_apps_metrics_put",
        Some("/ws/v1/yard/apps/{id}/metrics"),
        ma,
        put.clone(),
        &format!("{app_a}/metrics"),
        Some(FINAL.into()),
    )
    .await;
    g.call(
        "yard_apps_app_running",
        Some("/ws/v1/yard/apps/{id}"),
        alice,
        get.clone(),
        &app_a,
        None,
    )
    .await;

    // A finished application and a killed one.
    let b = g.h.submitted(json!({"application-name": "grep"})).await;
    let mb = master(&g.h, &b);
    let mb = Some(mb.as_str());
    g.call(
        "yard_apps_register_bare",
        None,
        mb,
        post.clone(),
        &format!("/ws/v1/yard/apps/{b}/register"),
        js(json!({})),
    )
    .await;
    g.h.set_now(4_000);
    g.call(
        "yard_apps_unregister",
        Some("/ws/v1/yard/apps/{id}/unregister"),
        mb,
        post.clone(),
        &format!("/ws/v1/yard/apps/{b}/unregister"),
        js(json!({"succeeded": true, "diagnostics": "all maps done"})),
    )
    .await;
    // Its master's logs, aggregated (a node uploads them), listed and read by its owner.
    let logs_dir = tempfile::tempdir().unwrap();
    g.h.rm.logs = Some(
        yard_rm::logs::LogStore::open(yard_rm::logs::LogSettings::beside(
            &logs_dir.path().join("rm.db"),
            None,
        ))
        .unwrap(),
    );
    let master_b = {
        let c = g.h.rm.cluster.lock().unwrap();
        // Ended: the listing reads the store and calls no nodemanager.
        assert_eq!(c.running_containers(&b), 0);
        c.app(&b).unwrap().attempts[0].container_id.clone()
    };
    let logs_b = format!("/ws/v1/yard/apps/{b}/logs");
    g.call(
        "yard_apps_logs_put",
        Some("/ws/v1/yard/apps/{id}/logs/{container}/{file}"),
        node,
        put.clone(),
        &format!("{logs_b}/{master_b}/stdout?node=n1:8042&bytes=20&cap=16"),
        Some("the last 8".into()),
    )
    .await;
    g.call(
        "yard_apps_logs",
        Some("/ws/v1/yard/apps/{id}/logs"),
        alice,
        get.clone(),
        &logs_b,
        None,
    )
    .await;
    g.call(
        "yard_apps_logs_file",
        Some("/ws/v1/yard/apps/{id}/logs/{container}/{file}"),
        alice,
        get.clone(),
        &format!("{logs_b}/{master_b}/stdout"),
        None,
    )
    .await;
    let c = g.h.submitted(json!({"application-name": "sort"})).await;
    let state_c = format!("/ws/v1/cluster/apps/{c}/state");
    g.h.set_now(5_000);
    g.call(
        "cluster_apps_state_kill",
        Some("/ws/v1/cluster/apps/{id}/state"),
        alice,
        put.clone(),
        &state_c,
        js(json!({"state": "KILLED"})),
    )
    .await;
    g.call(
        "cluster_apps_state_kill_again",
        None,
        alice,
        put.clone(),
        &state_c,
        js(json!({"state": "KILLED"})),
    )
    .await;

    // A dataset.
    let logs = "/ws/v1/yard/datasets/logs";
    g.call(
        "yard_datasets_put",
        Some("/ws/v1/yard/datasets/{name}"),
        alice,
        put.clone(),
        logs,
        js(json!({"name": "logs", "blocks": [
            {"block": "b000000", "bytes": 100, "nodes": ["n1:8042", "n2:8042"]},
            {"block": "b000001", "bytes": 40, "nodes": ["n2:8042"]}]})),
    )
    .await;
    g.call(
        "yard_datasets_get",
        Some("/ws/v1/yard/datasets/{name}"),
        alice,
        get.clone(),
        logs,
        None,
    )
    .await;
    g.call(
        "yard_datasets_list",
        Some("/ws/v1/yard/datasets"),
        alice,
        get.clone(),
        "/ws/v1/yard/datasets",
        None,
    )
    .await;
    g.call(
        "yard_datasets_upload_grant",
        Some("/ws/v1/yard/datasets/{name}/upload-grant"),
        alice,
        post.clone(),
        "/ws/v1/yard/datasets/fresh/upload-grant",
        None,
    )
    .await;

    // A MapReduce job over it, sharing its scan; its master reports progress and answers.
    let jobs = "/ws/v1/yard/mapreduce/jobs";
    let submitted = g
        .call(
            "mapreduce_jobs_submit",
            Some(jobs),
            alice,
            post.clone(),
            jobs,
            js(
                json!({"job": {"app": "wordcount", "input": "logs", "policy": "dart",
                "sharedScan": true}, "name": "nightly", "deadlineInMs": 30_000}),
            ),
        )
        .await;
    let j = submitted["job"]["id"].as_str().unwrap().to_owned();
    let job = format!("{jobs}/{j}");
    g.call(
        "mapreduce_jobs_answer_none_yet",
        None,
        alice,
        get.clone(),
        &format!("{job}/answer"),
        None,
    )
    .await;
    g.h.rm.cluster.lock().unwrap().take_master_launches();
    let mj = master(&g.h, &j);
    let mj = Some(mj.as_str());
    g.call(
        "yard_apps_register_job",
        None,
        mj,
        post.clone(),
        &format!("/ws/v1/yard/apps/{j}/register"),
        js(json!({"trackingUrl": "http://127.0.0.1:7002/status"})),
    )
    .await;
    g.h.set_now(8_000);
    g.call(
        "yard_apps_allocate_progress",
        None,
        mj,
        post.clone(),
        &format!("/ws/v1/yard/apps/{j}/allocate"),
        js(
            json!({"applicationId": j, "asks": [], "releases": [], "progress": 0.2,
            "job": {"phase": "running", "policy": "dart", "maps": 2, "mapsLaunched": 2,
                "mapsDone": 1, "k": 2, "mapPhaseClosed": false, "reduces": 1,
                "reducesDone": 0, "processedBytes": 100, "inputBytes": 140,
                "guarded": false, "elapsedSeconds": 3.0, "estimateSeconds": 20.0}}),
        ),
    )
    .await;
    let scan = "/ws/v1/yard/mapreduce/scans/logs";
    g.call(
        "mapreduce_scans_join",
        Some("/ws/v1/yard/mapreduce/scans/{dataset}"),
        mj,
        post.clone(),
        scan,
        js(json!({"url": "http://127.0.0.1:7102"})),
    )
    .await;
    g.call(
        "mapreduce_scans_list",
        Some("/ws/v1/yard/mapreduce/scans"),
        alice,
        get.clone(),
        "/ws/v1/yard/mapreduce/scans",
        None,
    )
    .await;
    g.call(
        "mapreduce_scans_leave",
        Some("/ws/v1/yard/mapreduce/scans/{dataset}"),
        mj,
        delete.clone(),
        scan,
        None,
    )
    .await;
    g.call(
        "mapreduce_jobs_get",
        Some("/ws/v1/yard/mapreduce/jobs/{id}"),
        alice,
        get.clone(),
        &job,
        None,
    )
    .await;
    g.call(
        "yard_apps_result_job",
        None,
        mj,
        put.clone(),
        &format!("/ws/v1/yard/apps/{j}/result"),
        js(json!({"processedFraction": 0.75,
            "answer": {"words": {"estimate": 5.0, "low": 4.0, "high": 6.0}}})),
    )
    .await;
    g.call(
        "mapreduce_jobs_answer",
        Some("/ws/v1/yard/mapreduce/jobs/{id}/answer"),
        alice,
        get.clone(),
        &format!("{job}/answer"),
        None,
    )
    .await;
    g.call(
        "mapreduce_jobs_list",
        Some(jobs),
        alice,
        get.clone(),
        jobs,
        None,
    )
    .await;

    // Hadoop's client routes on that state.
    g.h.set_now(10_000);
    for (name, route, uri) in [
        ("cluster_info", "/ws/v1/cluster/info", "/ws/v1/cluster/info"),
        ("cluster", "/ws/v1/cluster", "/ws/v1/cluster"),
        ("cluster_bare", "/cluster", "/cluster"),
        (
            "cluster_appstatistics",
            "/ws/v1/cluster/appstatistics",
            "/ws/v1/cluster/appstatistics",
        ),
        (
            "cluster_metrics",
            "/ws/v1/cluster/metrics",
            "/ws/v1/cluster/metrics",
        ),
        (
            "cluster_scheduler",
            "/ws/v1/cluster/scheduler",
            "/ws/v1/cluster/scheduler",
        ),
        (
            "cluster_nodes",
            "/ws/v1/cluster/nodes",
            "/ws/v1/cluster/nodes",
        ),
        (
            "cluster_nodes_one",
            "/ws/v1/cluster/nodes/{id}",
            "/ws/v1/cluster/nodes/n2:8042",
        ),
        ("cluster_apps", "/ws/v1/cluster/apps", "/ws/v1/cluster/apps"),
    ] {
        g.call(name, Some(route), admin, get.clone(), uri, None)
            .await;
    }
    g.call(
        "cluster_apps_filtered",
        None,
        admin,
        get.clone(),
        "/ws/v1/cluster/apps?states=killed,finished&user=alice&limit=5",
        None,
    )
    .await;
    // yard's own: a search, sorted, one page of one past the first; and alice's own list.
    g.call(
        "cluster_apps_paged",
        None,
        admin,
        get.clone(),
        "/ws/v1/cluster/apps?search=application_&sort=-startedTime&limit=1&offset=1",
        None,
    )
    .await;
    g.call(
        "cluster_apps_as_user",
        None,
        alice,
        get.clone(),
        "/ws/v1/cluster/apps?outcome=none,met,missed,pending,empty",
        None,
    )
    .await;
    for (what, id) in [
        ("running", &a),
        ("finished", &b),
        ("killed", &c),
        ("job", &j),
    ] {
        g.call(
            &format!("cluster_apps_one_{what}"),
            (what == "running").then_some("/ws/v1/cluster/apps/{id}"),
            alice,
            get.clone(),
            &format!("/ws/v1/cluster/apps/{id}"),
            None,
        )
        .await;
    }
    let app = format!("/ws/v1/cluster/apps/{a}");
    let attempts = format!("{app}/appattempts");
    let containers = format!("{attempts}/1/containers");
    for (name, route, uri) in [
        (
            "cluster_apps_state",
            "/ws/v1/cluster/apps/{id}/state",
            format!("{app}/state"),
        ),
        (
            "cluster_apps_appattempts",
            "/ws/v1/cluster/apps/{id}/appattempts",
            attempts.clone(),
        ),
        (
            "cluster_apps_appattempt",
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}",
            format!("{attempts}/1"),
        ),
        (
            "cluster_apps_appattempt_containers",
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers",
            containers.clone(),
        ),
        (
            "cluster_apps_appattempt_container",
            "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{container}",
            format!("{containers}/{running}"),
        ),
        (
            "cluster_apps_queue",
            "/ws/v1/cluster/apps/{id}/queue",
            format!("{app}/queue"),
        ),
        (
            "cluster_apps_priority",
            "/ws/v1/cluster/apps/{id}/priority",
            format!("{app}/priority"),
        ),
        (
            "cluster_apps_timeouts",
            "/ws/v1/cluster/apps/{id}/timeouts",
            format!("{app}/timeouts"),
        ),
        (
            "cluster_apps_timeout_lifetime",
            "/ws/v1/cluster/apps/{id}/timeouts/{kind}",
            format!("{app}/timeouts/LIFETIME"),
        ),
    ] {
        g.call(name, Some(route), alice, get.clone(), &uri, None)
            .await;
    }
    g.call(
        "cluster_apps_state_finished",
        None,
        alice,
        get.clone(),
        &format!("/ws/v1/cluster/apps/{b}/state"),
        None,
    )
    .await;
    for (name, route, uri, body) in [
        (
            "cluster_apps_queue_put",
            "/ws/v1/cluster/apps/{id}/queue",
            format!("{app}/queue"),
            json!({"queue": "default"}),
        ),
        (
            "cluster_apps_priority_put",
            "/ws/v1/cluster/apps/{id}/priority",
            format!("{app}/priority"),
            json!({"priority": 5}),
        ),
        (
            "cluster_apps_timeout_put",
            "/ws/v1/cluster/apps/{id}/timeout",
            format!("{app}/timeout"),
            json!({"timeout": {"type": "LIFETIME",
                "expiryTime": "2030-01-31T12:00:00.000+0000"}}),
        ),
    ] {
        g.call(name, Some(route), alice, put.clone(), &uri, js(body))
            .await;
    }
    g.call(
        "cluster_apps_timeouts_set",
        None,
        alice,
        get.clone(),
        &format!("{app}/timeouts"),
        None,
    )
    .await;

    // Credentials, health, the books, the document, the scrape.
    let tokens = "/ws/v1/yard/auth/tokens";
    for (name, body) in [
        ("yard_auth_tokens_user", json!({"user": "carol"})),
        ("yard_auth_tokens_node", json!({"node": "n3:8042"})),
        ("yard_auth_tokens_scrape", json!({"scrape": true})),
    ] {
        g.call(name, Some(tokens), admin, post.clone(), tokens, js(body))
            .await;
    }
    let whoami = "/ws/v1/yard/auth/whoami";
    g.call(
        "yard_auth_whoami",
        Some(whoami),
        alice,
        get.clone(),
        whoami,
        None,
    )
    .await;
    g.call(
        "yard_auth_whoami_master",
        None,
        ma,
        get.clone(),
        whoami,
        None,
    )
    .await;
    for (name, route) in [
        ("yard_health", "/ws/v1/yard/health"),
        ("yard_books", "/ws/v1/yard/books"),
        ("yard_history", "/ws/v1/yard/history"),
        ("yard_openapi", "/ws/v1/yard/openapi.json"),
    ] {
        g.call(name, Some(route), admin, get.clone(), route, None)
            .await;
    }
    let scraper = token(Principal::Scraper);
    let scraper = Some(scraper.as_str());
    g.call(
        "prometheus_targets",
        Some("/ws/v1/yard/prometheus/targets"),
        scraper,
        get.clone(),
        "/ws/v1/yard/prometheus/targets",
        None,
    )
    .await;
    g.call(
        "yard_apps_metrics_get",
        Some("/ws/v1/yard/apps/{id}/metrics"),
        scraper,
        get.clone(),
        &format!("{app_a}/metrics"),
        None,
    )
    .await;
    g.call(
        "metrics",
        Some("/metrics"),
        None,
        get.clone(),
        "/metrics",
        None,
    )
    .await;

    // Refusals, in both shapes.
    let nowhere = "application_1000_0999";
    let cases: Vec<Case> = vec![
        // 404
        (
            "error_404_cluster_route",
            admin,
            get.clone(),
            "/ws/v1/cluster/nowhere".into(),
            None,
        ),
        (
            "error_404_yard_route",
            admin,
            get.clone(),
            "/ws/v1/yard/nowhere".into(),
            None,
        ),
        (
            "error_404_cluster_app",
            admin,
            get.clone(),
            format!("/ws/v1/cluster/apps/{nowhere}"),
            None,
        ),
        (
            "error_404_yard_app",
            admin,
            get.clone(),
            format!("/ws/v1/yard/apps/{nowhere}"),
            None,
        ),
        (
            "error_404_cluster_node",
            admin,
            get.clone(),
            "/ws/v1/cluster/nodes/n9:1".into(),
            None,
        ),
        (
            "error_404_dataset",
            admin,
            get.clone(),
            "/ws/v1/yard/datasets/nothing".into(),
            None,
        ),
        (
            "error_404_attempt",
            alice,
            get.clone(),
            format!("{attempts}/7"),
            None,
        ),
        (
            "error_404_job",
            admin,
            get.clone(),
            format!("{jobs}/{nowhere}"),
            None,
        ),
        // 400
        (
            "error_400_queue",
            alice,
            post.clone(),
            jobs.into(),
            js(json!({"job": {"app": "wordcount", "input": "books"}, "queue": "nowhere"})),
        ),
        (
            "error_400_limit",
            admin,
            get.clone(),
            "/ws/v1/cluster/apps?limit=many".into(),
            None,
        ),
        (
            "error_400_state",
            alice,
            put.clone(),
            format!("{app}/state"),
            js(json!({"state": "RUNNING"})),
        ),
        (
            "error_400_not_json",
            ma,
            post.clone(),
            format!("{app_a}/allocate"),
            Some("{\"applicationId\": ".into()),
        ),
        (
            "error_400_deadline",
            alice,
            put.clone(),
            format!("{app_a}/deadline"),
            js(json!({"deadlineMs": -5})),
        ),
        (
            "error_400_capability",
            node,
            post.clone(),
            nodes.into(),
            js(
                json!({"nodeId": "n3:8042", "rack": "/r1", "capability": {"memoryMb": 0, "vcores": 4}}),
            ),
        ),
        (
            "error_400_timeout",
            alice,
            put.clone(),
            format!("{app}/timeout"),
            js(json!({"timeout": {"type": "LIFETIME", "expiryTime": "tomorrow"}})),
        ),
        (
            "error_400_job_field",
            alice,
            post.clone(),
            jobs.into(),
            js(json!({"job": {"app": "sort", "input": "x"}})),
        ),
        // 401
        (
            "error_401_cluster",
            None,
            get.clone(),
            "/ws/v1/cluster/apps".into(),
            None,
        ),
        ("error_401_yard", None, get.clone(), app_a.clone(), None),
        (
            "error_401_forged",
            Some("not-a-token"),
            post.clone(),
            beat.into(),
            js(json!({})),
        ),
        // 403
        (
            "error_403_cluster",
            bob,
            put.clone(),
            format!("{app}/state"),
            js(json!({"state": "KILLED"})),
        ),
        ("error_403_yard", bob, get.clone(), app_a.clone(), None),
        (
            "error_403_user_on_node_route",
            alice,
            post.clone(),
            beat.into(),
            js(json!({})),
        ),
        (
            "error_403_tokens",
            alice,
            post.clone(),
            tokens.into(),
            js(json!({"user": "bob"})),
        ),
        // 405, 406 (below), 409, 413, 422
        (
            "error_405",
            admin,
            Method::DELETE,
            "/ws/v1/cluster/apps".into(),
            None,
        ),
        (
            "error_405_yard",
            admin,
            Method::DELETE,
            "/ws/v1/yard/health".into(),
            None,
        ),
        (
            "error_409_submitted_twice",
            admin,
            post.clone(),
            "/ws/v1/cluster/apps".into(),
            js(json!({"application-id": a})),
        ),
        (
            "error_409_ended",
            alice,
            put.clone(),
            format!("/ws/v1/yard/apps/{b}/deadline"),
            js(json!({"deadlineMs": 5})),
        ),
        (
            "error_413",
            ma,
            post.clone(),
            format!("{app_a}/allocate"),
            Some("x".repeat(MAX_BODY_BYTES + 1)),
        ),
        (
            "error_422_missing_field",
            ma,
            post.clone(),
            format!("{app_a}/allocate"),
            js(json!({"applicationId": a})),
        ),
        (
            "error_422_cluster",
            alice,
            put.clone(),
            format!("{app}/state"),
            js(json!({"status": "KILLED"})),
        ),
    ];
    for (name, bearer, method, uri, body) in cases {
        g.call(name, None, bearer, method, &uri, body).await;
    }
    // A job's output dataset: any user's grant to read a dataset; a job that writes one, its
    // master's grant and commit, and the name refused while that job writes it.
    g.call(
        "yard_datasets_read_grant",
        Some("/ws/v1/yard/datasets/{name}/read-grant"),
        bob,
        post.clone(),
        "/ws/v1/yard/datasets/logs/read-grant",
        None,
    )
    .await;
    // A dataset removed by its owner (`yard data rm`).
    let scratch = "/ws/v1/yard/datasets/scratch";
    let (status, _) =
        g.h.call_as(
            alice,
            put.clone(),
            scratch,
            Some(json!({"name": "scratch", "blocks": [
                {"block": "b0", "bytes": 3, "nodes": ["n1:8042", "n2:8042"]}]})),
        )
        .await
        .pair();
    assert_eq!(status, StatusCode::OK);
    g.call(
        "yard_datasets_delete",
        Some("/ws/v1/yard/datasets/{name}"),
        alice,
        delete.clone(),
        scratch,
        None,
    )
    .await;
    let writes = js(
        json!({"job": {"app": "wordcount", "input": "logs", "output": "counts"},
        "name": "counted"}),
    );
    let submitted = g
        .call(
            "mapreduce_jobs_submit_output",
            None,
            alice,
            post.clone(),
            jobs,
            writes.clone(),
        )
        .await;
    let o = submitted["job"]["id"].as_str().unwrap().to_owned();
    g.call(
        "error_409_output_taken",
        None,
        bob,
        post.clone(),
        jobs,
        writes,
    )
    .await;
    g.h.rm.cluster.lock().unwrap().take_master_launches();
    let mo = master(&g.h, &o);
    let mo = Some(mo.as_str());
    g.call(
        "yard_apps_output_grant",
        Some("/ws/v1/yard/apps/{id}/output-grant"),
        mo,
        post.clone(),
        &format!("/ws/v1/yard/apps/{o}/output-grant"),
        None,
    )
    .await;
    g.call(
        "yard_apps_output",
        Some("/ws/v1/yard/apps/{id}/output"),
        mo,
        put.clone(),
        &format!("/ws/v1/yard/apps/{o}/output"),
        js(json!({"dataset": "counts", "parts": [
            {"block": "part-r-00000", "bytes": 12, "nodes": ["n1:8042", "n2:8042"]}]})),
    )
    .await;
    g.call(
        "error_403_output_of_another",
        None,
        mo,
        put.clone(),
        &format!("/ws/v1/yard/apps/{o}/output"),
        js(json!({"dataset": "logs", "parts": []})),
    )
    .await;
    g.accept = Some("application/xml");
    g.call(
        "error_406_xml",
        None,
        admin,
        get.clone(),
        "/ws/v1/cluster/apps",
        None,
    )
    .await;
    g.finish();
}

/// The `yard_wire` reply types (what the rm's handlers build and the CLI reads) read every
/// golden 200/202 reply of their routes back to the same JSON: no field lost or added, nulls, absences
/// and number forms kept. A reply that gains a field the type lacks fails here.
#[test]
fn the_wire_views_read_their_routes_replies_back_exactly() {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use yard_wire::hadoop::{
        AppAttemptReply, AppAttemptsReply, AppPriority, AppQueue, AppStatisticsReply,
        AppTimeoutReply, AppTimeoutsReply, ContainerReply, ContainersReply, NewApplication,
        SchedulerReply,
    };
    use yard_wire::jobs::{AnswerReply, JobReply, JobsReply, ScanJoined, ScanLeft, ScansReply};
    use yard_wire::protocol::{AllocateReply, Dataset, HeartbeatReply, Registered};
    use yard_wire::replies::{
        BooksReply, DatasetsReply, FinalFiguresKept, HealthReply, HistoryReply, IssuedToken,
        MasterRegistered, Recovery, RecoveryKept, TargetGroup, Unregistered, UploadGrant, WhoAmI,
    };
    use yard_wire::views::{
        AppReply, AppStateView, AppsReply, ClusterInfoReply, ClusterMetricsReply, NodeReply,
        NodesReply, YardAppReply,
    };

    fn body(case: &str) -> Value {
        let file = golden_dir().join(format!("{case}.json"));
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        record["body"].clone()
    }
    fn round_trip<T: Serialize + DeserializeOwned>(case: &str, want: Value) {
        let read: T = serde_json::from_value(want.clone())
            .unwrap_or_else(|e| panic!("{case}: the wire type does not read the reply: {e}"));
        let mut out = Vec::new();
        diff("$", &want, &serde_json::to_value(&read).unwrap(), &mut out);
        assert!(out.is_empty(), "{case}:\n    {}", out.join("\n    "));
    }
    fn check<T: Serialize + DeserializeOwned>(seen: &mut BTreeSet<String>, case: &str) {
        round_trip::<T>(case, body(case));
        seen.insert(case.to_owned());
    }
    let mut seen = BTreeSet::new();
    check::<AppsReply>(&mut seen, "cluster_apps");
    check::<AppsReply>(&mut seen, "cluster_apps_filtered");
    check::<AppsReply>(&mut seen, "cluster_apps_paged");
    check::<AppsReply>(&mut seen, "cluster_apps_as_user");
    for case in [
        "cluster_apps_one_running",
        "cluster_apps_one_finished",
        "cluster_apps_one_killed",
        "cluster_apps_one_job",
    ] {
        check::<AppReply>(&mut seen, case);
    }
    for case in [
        "cluster_apps_state",
        "cluster_apps_state_finished",
        "cluster_apps_state_kill",
        "cluster_apps_state_kill_again",
    ] {
        check::<AppStateView>(&mut seen, case);
    }
    check::<NodesReply>(&mut seen, "cluster_nodes");
    check::<NodeReply>(&mut seen, "cluster_nodes_one");
    for case in [
        "yard_apps_app_running",
        "yard_apps_deadline",
        "yard_apps_result",
        "yard_apps_result_job",
    ] {
        check::<YardAppReply>(&mut seen, case);
    }
    check::<ClusterMetricsReply>(&mut seen, "cluster_metrics");
    for case in ["cluster_info", "cluster", "cluster_bare"] {
        check::<ClusterInfoReply>(&mut seen, case);
    }
    check::<SchedulerReply>(&mut seen, "cluster_scheduler");
    check::<AppAttemptsReply>(&mut seen, "cluster_apps_appattempts");
    check::<AppAttemptReply>(&mut seen, "cluster_apps_appattempt");
    check::<ContainersReply>(&mut seen, "cluster_apps_appattempt_containers");
    check::<ContainerReply>(&mut seen, "cluster_apps_appattempt_container");
    check::<AppStatisticsReply>(&mut seen, "cluster_appstatistics");
    check::<NewApplication>(&mut seen, "cluster_apps_new_application");
    for case in ["cluster_apps_queue", "cluster_apps_queue_put"] {
        check::<AppQueue>(&mut seen, case);
    }
    for case in ["cluster_apps_priority", "cluster_apps_priority_put"] {
        check::<AppPriority>(&mut seen, case);
    }
    for case in ["cluster_apps_timeouts", "cluster_apps_timeouts_set"] {
        check::<AppTimeoutsReply>(&mut seen, case);
    }
    for case in ["cluster_apps_timeout_lifetime", "cluster_apps_timeout_put"] {
        check::<AppTimeoutReply>(&mut seen, case);
    }
    for case in ["mapreduce_jobs_get", "mapreduce_jobs_submit"] {
        check::<JobReply>(&mut seen, case);
    }
    check::<JobsReply>(&mut seen, "mapreduce_jobs_list");
    check::<AnswerReply>(&mut seen, "mapreduce_jobs_answer");
    check::<ScansReply>(&mut seen, "mapreduce_scans_list");
    check::<ScanJoined>(&mut seen, "mapreduce_scans_join");
    check::<ScanLeft>(&mut seen, "mapreduce_scans_leave");
    check::<DatasetsReply>(&mut seen, "yard_datasets_list");
    for case in ["yard_datasets_get", "yard_datasets_put"] {
        check::<Dataset>(&mut seen, case);
    }
    check::<UploadGrant>(&mut seen, "yard_datasets_upload_grant");
    check::<yard_wire::outputs::ReadGrant>(&mut seen, "yard_datasets_read_grant");
    check::<yard_wire::outputs::DatasetRemoved>(&mut seen, "yard_datasets_delete");
    check::<yard_wire::outputs::OutputGrant>(&mut seen, "yard_apps_output_grant");
    check::<Dataset>(&mut seen, "yard_apps_output");
    check::<JobReply>(&mut seen, "mapreduce_jobs_submit_output");
    for case in ["yard_auth_whoami", "yard_auth_whoami_master"] {
        check::<WhoAmI>(&mut seen, case);
    }
    for case in [
        "yard_auth_tokens_node",
        "yard_auth_tokens_user",
        "yard_auth_tokens_scrape",
    ] {
        check::<IssuedToken>(&mut seen, case);
    }
    check::<HealthReply>(&mut seen, "yard_health");
    check::<BooksReply>(&mut seen, "yard_books");
    check::<HistoryReply>(&mut seen, "yard_history");
    check::<Vec<TargetGroup>>(&mut seen, "prometheus_targets");
    for case in [
        "yard_apps_register",
        "yard_apps_register_bare",
        "yard_apps_register_job",
    ] {
        check::<MasterRegistered>(&mut seen, case);
    }
    check::<Unregistered>(&mut seen, "yard_apps_unregister");
    check::<FinalFiguresKept>(&mut seen, "yard_apps_metrics_put");
    check::<RecoveryKept>(&mut seen, "yard_apps_recovery_put");
    check::<Recovery>(&mut seen, "yard_apps_recovery_get");
    check::<Registered>(&mut seen, "yard_nodes_register");
    for case in ["yard_nodes_heartbeat", "yard_nodes_heartbeat_completed"] {
        check::<HeartbeatReply>(&mut seen, case);
    }
    for case in [
        "yard_apps_allocate",
        "yard_apps_allocate_completed",
        "yard_apps_allocate_progress",
    ] {
        check::<AllocateReply>(&mut seen, case);
    }
    check::<yard_wire::logs::AppLogsReply>(&mut seen, "yard_apps_logs");
    check::<yard_wire::logs::LogStored>(&mut seen, "yard_apps_logs_put");
    // What `deSelects` leaves out stays out.
    let mut lean = body("cluster_apps");
    for app in lean["apps"]["app"].as_array_mut().unwrap() {
        let app = app.as_object_mut().unwrap();
        app.remove("appNodeLabelExpression");
        app.remove("amNodeLabelExpression");
    }
    round_trip::<AppsReply>("cluster_apps deselected", lean);
    // Every recorded JSON reply of a success is read by its type above (the OpenAPI document,
    // kept as a file, is not a reply type): a new route's reply needs one.
    let mut recorded = BTreeSet::new();
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let case = path.file_stem().unwrap().to_string_lossy().into_owned();
        let success = record["status"]
            .as_u64()
            .is_some_and(|s| (200..300).contains(&s));
        if success && record["contentType"] == "application/json" && case != "yard_openapi" {
            recorded.insert(case);
        }
    }
    assert_eq!(
        recorded, seen,
        "recorded 2xx JSON replies vs those read by a type"
    );
}

/// The comparison notices each kind of change the golden files guard against.
#[test]
fn the_comparison_notices_renames_drops_type_changes_and_number_forms() {
    let golden = json!({"status": 200, "body": {"a": 1, "b": null, "c": [1.0, "x"]}});
    let changed = |f: fn(&mut Value)| {
        let mut v = golden.clone();
        f(&mut v);
        let mut out = Vec::new();
        diff("$", &golden, &v, &mut out);
        out
    };
    assert!(changed(|_| {}).is_empty());
    let renamed = changed(|v| {
        let a = v["body"]["a"].take();
        v["body"].as_object_mut().unwrap().remove("a");
        v["body"]["A"] = a;
    });
    assert_eq!(
        renamed,
        [
            "$.body.A: absent in the golden file, got 1 (integer)",
            "$.body.a: expected 1 (integer), absent"
        ]
    );
    let dropped = changed(|v| {
        v["body"].as_object_mut().unwrap().remove("b");
    });
    assert_eq!(dropped, ["$.body.b: expected null (null), absent"]);
    let retyped = changed(|v| v["body"]["a"] = json!("1"));
    assert_eq!(
        retyped,
        ["$.body.a: expected 1 (integer), got \"1\" (string)"]
    );
    let number_form = changed(|v| v["body"]["c"][0] = json!(1));
    assert_eq!(
        number_form,
        ["$.body.c[0]: expected 1.0 (float), got 1 (integer)"]
    );
    let status = changed(|v| v["status"] = json!(201));
    assert_eq!(
        status,
        ["$.status: expected 200 (integer), got 201 (integer)"]
    );
    let shorter = changed(|v| {
        v["body"]["c"].as_array_mut().unwrap().pop();
    });
    assert_eq!(shorter, ["$.body.c: expected 2 elements, got 1"]);
}

/// The normaliser replaces the wall-clock histogram's values and nothing else.
#[test]
fn the_normaliser_replaces_only_what_varies() {
    let mut record = json!({"bodyLines": [
        "# TYPE yard_rm_allocate_duration_seconds histogram",
        "yard_rm_allocate_duration_seconds_bucket{le=\"0.001\"} 3",
        "yard_rm_allocate_duration_seconds_sum 0.000123",
        "yard_rm_allocate_duration_seconds_bucket{le=\"+Inf\"} 3",
        "yard_rm_allocate_duration_seconds_count 3",
        "yard_rm_apps_submitted_total 3",
    ]});
    normalise(&mut record);
    assert_eq!(
        record,
        json!({"bodyLines": [
            "# TYPE yard_rm_allocate_duration_seconds histogram",
            "yard_rm_allocate_duration_seconds_bucket{le=\"0.001\"} <varies>",
            "yard_rm_allocate_duration_seconds_sum <varies>",
            "yard_rm_allocate_duration_seconds_bucket{le=\"+Inf\"} 3",
            "yard_rm_allocate_duration_seconds_count 3",
            "yard_rm_apps_submitted_total 3",
        ]})
    );
    let mut body = json!({"body": {"openapi": "3.1.0"}});
    normalise(&mut body);
    assert_eq!(
        body,
        json!({"body": {"openapi": "3.1.0"}}),
        "not the document"
    );
}
