//! The rm's HTTP surface: the protocols end to end through the router, Hadoop's JSON shapes,
//! and a 4xx that says what to fix for every kind of bad request.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, token};
use yard_rm::cluster::Settings;
use yard_rm::rest::{MAX_BODY_BYTES, router};
use yard_wire::auth::{ClusterSecret, Principal};

fn admin() -> String {
    token(Principal::Admin {
        user: "operator".into(),
    })
}

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

/// An rm of the default settings started at 1 s: its ids are `application_1000_…`.
fn harness() -> Harness {
    Harness::at(Settings::default(), 1_000)
}

/// new-application, submit, and the master registering: a running application.
async fn running_app(h: &Harness) -> String {
    let id = h.new_id().await;
    let submission = json!({"application-name": "wordcount", "queue": "default"});
    assert_eq!(h.submit(&id, submission).await.0, StatusCode::ACCEPTED);
    let launches = h.rm.cluster.lock().unwrap().take_master_launches();
    assert_eq!(launches.len(), 1, "the master's container is granted");
    assert_eq!(
        h.post(&format!("/ws/v1/yard/apps/{id}/register"), json!({}))
            .await
            .0,
        StatusCode::OK
    );
    id
}

fn asks(app: &str, n: u32) -> Value {
    json!({"applicationId": app, "progress": 0.1, "releases": [],
           "asks": [{"priority": 1, "resourceName": "*", "capability": {"memoryMb": 1024, "vcores": 1}, "numContainers": n}]})
}

#[tokio::test]
async fn the_protocols_end_to_end_in_hadoops_shapes() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    let id = running_app(&h).await;
    let (status, reply) = h
        .post(&format!("/ws/v1/yard/apps/{id}/allocate"), asks(&id, 2))
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let granted = reply["allocated"].as_array().unwrap();
    assert_eq!(granted.len(), 2);
    assert!(granted[0]["token"]["signature"].as_str().unwrap().len() == 64);
    // A heartbeat reports one container done; the master hears of it next time.
    h.set_now(2_000);
    let container = granted[0]["containerId"].as_str().unwrap();
    let node = granted[0]["nodeId"].as_str().unwrap();
    let hb = json!({"nodeId": node, "running": [], "telemetry": {"cpuPercent": 5.0, "load1m": 0.1, "load5m": 0.1, "load15m": 0.1,
        "memoryTotalBytes": 1, "memoryUsedBytes": 1, "diskReadBytesPerS": 0.0, "diskWriteBytesPerS": 0.0,
        "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0, "containers": []},
        "completed": [{"containerId": container, "end": "EXITED", "exitCode": 0}]});
    let (status, reply) = h.post("/ws/v1/yard/nodes/heartbeat", hb).await;
    assert_eq!(
        (status, reply["reregister"].as_bool()),
        (StatusCode::OK, Some(false))
    );
    let (_, next) = h
        .post(&format!("/ws/v1/yard/apps/{id}/allocate"), asks(&id, 0))
        .await;
    assert_eq!(next["completed"][0]["containerId"], container);
    // Hadoop's client routes.
    let (_, metrics) = h.get("/ws/v1/cluster/metrics").await;
    let m = &metrics["clusterMetrics"];
    assert_eq!(
        (
            m["appsRunning"].as_u64(),
            m["activeNodes"].as_u64(),
            m["totalMB"].as_u64()
        ),
        (Some(1), Some(2), Some(8192))
    );
    // The master's 512 MB and two 1024 MB containers, one of which completed.
    assert_eq!(
        (m["allocatedMB"].as_u64(), m["containersAllocated"].as_u64()),
        (Some(512 + 1024), Some(2))
    );
    let (_, attempts) = h
        .get(&format!("/ws/v1/cluster/apps/{id}/appattempts"))
        .await;
    let list = attempts["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], 1);
    assert!(
        list[0]["containerId"]
            .as_str()
            .unwrap()
            .ends_with("_01_000001"),
        "{attempts}"
    );
    let (_, info) = h.get("/ws/v1/cluster/info").await;
    assert_eq!(info["clusterInfo"]["state"], "STARTED");
    let (_, nodes) = h.get("/ws/v1/cluster/nodes").await;
    assert_eq!(nodes["nodes"]["node"].as_array().unwrap().len(), 2);
    let (_, one) = h.get("/ws/v1/cluster/nodes/n2:8042").await;
    assert_eq!(one["node"]["rack"], "r1");
    let (_, app) = h.get(&format!("/ws/v1/cluster/apps/{id}")).await;
    assert_eq!(
        (app["app"]["state"].as_str(), app["app"]["user"].as_str()),
        (Some("RUNNING"), Some("alice"))
    );
    assert_eq!(
        h.get(&format!("/ws/v1/cluster/apps/{id}/state")).await.1["state"],
        "RUNNING"
    );
    // Kill it; the filters find it among the KILLED.
    let (status, _) = h
        .call(
            Method::PUT,
            &format!("/ws/v1/cluster/apps/{id}/state"),
            Some(json!({"state": "KILLED"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, killed) = h
        .get("/ws/v1/cluster/apps?states=killed&user=alice&limit=5")
        .await;
    assert_eq!(killed["apps"]["app"].as_array().unwrap().len(), 1);
    let (_, none) = h.get("/ws/v1/cluster/apps?states=RUNNING").await;
    assert!(none["apps"]["app"].as_array().unwrap().is_empty());
    // `deSelects` leaves out what it names, and only that.
    let (_, lean) = h
        .get("/ws/v1/cluster/apps?deSelects=appNodeLabelExpression,resourceRequests")
        .await;
    let app = &lean["apps"]["app"][0];
    assert!(app.get("appNodeLabelExpression").is_none(), "{app}");
    assert_eq!(app["amNodeLabelExpression"], "");
}

#[tokio::test]
async fn bad_requests_get_a_4xx_that_says_what_to_fix_and_lose_nothing() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let allocate = format!("/ws/v1/yard/apps/{id}/allocate");
    let state = format!("/ws/v1/cluster/apps/{id}/state");
    let cases: Vec<(Method, String, Option<String>, StatusCode, &str)> = vec![
        (
            Method::POST,
            allocate.clone(),
            Some("{\"applicationId\": ".into()),
            StatusCode::BAD_REQUEST,
            "not what this route takes",
        ),
        (
            Method::POST,
            allocate.clone(),
            Some(asks(&id, 1).to_string().replace("numContainers", "count")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "numContainers",
        ),
        (
            Method::POST,
            allocate.clone(),
            Some(json!({"applicationId": id}).to_string()),
            StatusCode::UNPROCESSABLE_ENTITY,
            "missing field",
        ),
        (
            Method::POST,
            allocate.clone(),
            Some(asks("application_1000_0042", 1).to_string()),
            StatusCode::BAD_REQUEST,
            "differs",
        ),
        (
            Method::POST,
            "/ws/v1/yard/apps/application_9_0009/allocate".into(),
            Some(asks("application_9_0009", 1).to_string()),
            StatusCode::NOT_FOUND,
            "no application",
        ),
        (
            Method::POST,
            allocate.clone(),
            Some("x".repeat(MAX_BODY_BYTES + 1)),
            StatusCode::PAYLOAD_TOO_LARGE,
            "",
        ),
        (
            Method::PUT,
            state.clone(),
            Some(json!({"state": "RUNNING"}).to_string()),
            StatusCode::BAD_REQUEST,
            "KILLED",
        ),
        (
            Method::GET,
            "/ws/v1/cluster/apps/application_9_0009".into(),
            None,
            StatusCode::NOT_FOUND,
            "no application",
        ),
        (
            Method::GET,
            "/ws/v1/cluster/nowhere".into(),
            None,
            StatusCode::NOT_FOUND,
            "no such route",
        ),
        (
            Method::GET,
            "/ws/v1/cluster/apps?limit=many".into(),
            None,
            StatusCode::BAD_REQUEST,
            "limit value must be greater",
        ),
        (
            Method::POST,
            "/ws/v1/cluster/apps".into(),
            Some(json!({"application-id": id}).to_string()),
            StatusCode::CONFLICT,
            "already submitted",
        ),
    ];
    for (method, uri, body, want, says) in cases {
        let (status, reply) = h.call_raw(method.clone(), &uri, body).await;
        assert_eq!(status, want, "{method} {uri}: {reply}");
        if status != StatusCode::PAYLOAD_TOO_LARGE {
            // Hadoop's routes refuse in YARN's shape, yard's own in yard's.
            if uri.starts_with("/ws/v1/cluster") {
                let e = &reply["RemoteException"];
                assert!(
                    e["exception"].is_string()
                        && e["message"].is_string()
                        && e["javaClassName"].is_string()
                        && e.get("detail").is_some(),
                    "{method} {uri}: {reply}"
                );
            } else {
                assert!(
                    reply["error"].is_string() && reply.get("detail").is_some(),
                    "{method} {uri}: {reply}"
                );
            }
            assert!(
                reply.to_string().contains(says),
                "{method} {uri}: `{says}` not in {reply}"
            );
        }
    }
    // Killing twice is the same kill (a retry is safe); killing a finished application is an
    // invalid transition (409); nothing stored was lost along the way.
    let kill = |uri: String| {
        let h = &h;
        async move {
            h.call(Method::PUT, &uri, Some(json!({"state": "KILLED"})))
                .await
        }
    };
    // YARN's kill: 202 with Location the first time, 200 with the final state after.
    let (status, first) = kill(state.clone()).await;
    assert_eq!(
        (status, &first),
        (StatusCode::ACCEPTED, &json!({"state": "KILLED"}))
    );
    let (status, again) = kill(state.clone()).await;
    assert_eq!(
        (status, &again),
        (StatusCode::OK, &json!({"state": "KILLED"}))
    );
    let done = running_app(&h).await;
    h.unregister(&done).await;
    // A late kill, on an application that ended: 200 with its state (YARN), nothing moves.
    let (status, reply) = kill(format!("/ws/v1/cluster/apps/{done}/state")).await;
    assert_eq!(
        (status, &reply),
        (StatusCode::OK, &json!({"state": "FINISHED"}))
    );
    let (_, apps) = h.get("/ws/v1/cluster/apps").await;
    assert_eq!(apps["apps"]["app"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn yards_own_routes_keep_the_deadline_and_the_answer_and_refuse_nonsense() {
    let h = harness();
    let put = |uri: String, body: Value| {
        let h = &h;
        async move { h.call(Method::PUT, &uri, Some(body)).await }
    };
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let app = format!("/ws/v1/yard/apps/{id}");
    let (status, view) = h.get(&app).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (&view["app"]["deadlineMs"], &view["app"]["answer"]),
        (&Value::Null, &Value::Null)
    );

    let (status, view) = put(format!("{app}/deadline"), json!({"deadlineMs": 90_000})).await;
    assert_eq!(
        (status, &view["app"]["deadlineMs"]),
        (StatusCode::OK, &json!(90_000))
    );
    let answer = json!({"words": {"the": 412}, "interval95": [400, 424]});
    let (status, view) = put(
        format!("{app}/result"),
        json!({"processedFraction": 0.6, "answer": answer}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (&view["app"]["processedFraction"], &view["app"]["answer"]),
        (&json!(0.6), &answer)
    );

    // Nonsense is refused with a reason, and what is stored stays.
    for (uri, body, want) in [
        (
            format!("{app}/deadline"),
            json!({"deadlineMs": -5}),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{app}/deadline"),
            json!({"deadline": 5}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            format!("{app}/result"),
            json!({"processedFraction": 1.5, "answer": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{app}/result"),
            json!({"processedFraction": 0.5}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/ws/v1/yard/apps/application_1_9999/deadline".into(),
            json!({"deadlineMs": 5}),
            StatusCode::NOT_FOUND,
        ),
    ] {
        let (status, why) = put(uri.clone(), body).await;
        assert_eq!(status, want, "{uri}: {why}");
        assert!(
            why["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{why}"
        );
    }
    let (_, view) = h.get(&app).await;
    assert_eq!(
        (
            &view["app"]["deadlineMs"],
            &view["app"]["processedFraction"]
        ),
        (&json!(90_000), &json!(0.6))
    );

    // Once the application ends, its deadline is history and its master can report no more.
    h.unregister(&id).await;
    let (status, why) = put(format!("{app}/deadline"), json!({"deadlineMs": 5})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");
    let (status, why) = put(
        format!("{app}/result"),
        json!({"processedFraction": 1.0, "answer": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{why}");
    assert_eq!(h.get(&app).await.1["app"]["answer"], answer);
}

#[tokio::test]
async fn datasets_block_maps_are_recorded_listed_and_checked() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    let put = |name: &str, body: Value| {
        let (h, uri) = (&h, format!("/ws/v1/yard/datasets/{name}"));
        async move { h.call(Method::PUT, &uri, Some(body)).await }
    };
    let logs = json!({"name": "logs", "blocks": [
        {"block": "b000000", "bytes": 100, "nodes": ["n1:8042", "n2:8042"]},
        {"block": "b000001", "bytes": 40, "nodes": ["n2:8042"]}]});
    let (status, stored) = put("logs", logs.clone()).await;
    assert_eq!(status, StatusCode::OK, "{stored}");
    assert_eq!(
        (&stored["blocks"], &stored["createdMs"]),
        (&logs["blocks"], &json!(1_000))
    );
    assert_eq!(h.get("/ws/v1/yard/datasets/logs").await.1, stored);
    let (_, list) = h.get("/ws/v1/yard/datasets").await;
    assert_eq!(
        list,
        json!({"datasets": [{"name": "logs", "createdMs": 1_000, "blocks": 2, "bytes": 140}]})
    );

    let block = |name: &str, nodes: Value| json!({"block": name, "bytes": 1, "nodes": nodes});
    for (name, body, want) in [
        ("other", logs.clone(), StatusCode::BAD_REQUEST),
        (
            "x",
            json!({"name": "x", "blocks": []}),
            StatusCode::BAD_REQUEST,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [block("b", json!(["n9:1"]))]}),
            StatusCode::BAD_REQUEST,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [block("b", json!([]))]}),
            StatusCode::BAD_REQUEST,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [block("../b", json!(["n1:8042"]))]}),
            StatusCode::BAD_REQUEST,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [block("b", json!(["n1:8042"])), block("b", json!(["n1:8042"]))]}),
            StatusCode::BAD_REQUEST,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [{"block": "b", "nodes": ["n1:8042"]}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "x",
            json!({"name": "x", "blocks": [{"block": "b", "bytes": 1, "nodes": ["n1:8042"], "sha256": "ABC"}]}),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, why) = put(name, body.clone()).await;
        assert_eq!(status, want, "{body}: {why}");
        assert!(
            why["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{why}"
        );
    }
    assert_eq!(
        h.get("/ws/v1/yard/datasets/x").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        h.get("/ws/v1/yard/datasets").await.1["datasets"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_real_listener_on_loopback_answers() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let h = harness();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(axum::serve(listener, router(h.rm.clone())).into_future());
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"GET /ws/v1/cluster/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"clusterInfo\""), "{response}");
    server.abort();
}

#[tokio::test]
async fn the_openapi_document_lists_exactly_the_routes_served() {
    use std::collections::BTreeSet;
    let spec: Value =
        serde_json::from_str(yard_rm::rest::OPENAPI).expect("the OpenAPI document is JSON");
    assert_eq!(spec["openapi"], "3.0.3");
    let documented: BTreeSet<(String, String)> = spec["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (path.clone(), m.clone()))
        })
        .collect();
    let served = support::served_routes();
    assert_eq!(documented, served);
    // Every documented operation has a summary and documents its errors.
    for (path, method) in &documented {
        let op = &spec["paths"][path][method];
        assert!(
            op["summary"].is_string() && op["responses"]["4XX"].is_object(),
            "{method} {path}"
        );
    }
    // The table's methods are the ones the handlers answer: any other method is 405.
    let h = harness();
    for (path, methods, _) in yard_rm::rest::routes() {
        let uri = path.replace("{id}", "application_1000_0001");
        for method in [Method::GET, Method::POST, Method::PUT, Method::DELETE] {
            let (status, _) = h.call_raw(method.clone(), &uri, Some("{}".into())).await;
            let listed = methods.contains(&method.as_str().to_ascii_lowercase().as_str());
            assert_eq!(
                status == StatusCode::METHOD_NOT_ALLOWED,
                !listed,
                "{method} {path}: {status}"
            );
        }
    }
    // And the rm serves the document itself.
    let (status, served_spec) = h.get("/ws/v1/yard/openapi.json").await;
    assert_eq!((status, served_spec), (StatusCode::OK, spec));
}

/// Every route refuses a caller without a credential and one with a forged credential (401),
/// and one acting on what it does not own (403); the refusals change nothing.
#[tokio::test]
async fn every_route_wants_a_credential_and_acts_only_on_what_its_caller_owns() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await; // alice's, submitted by the admin for her
    let open = [
        "/ws/v1/cluster/info",
        "/ws/v1/cluster",
        "/cluster",
        "/ws/v1/yard/openapi.json",
        "/ws/v1/yard/health",
        // Prometheus scrapes without a credential; no label names an app or container. The
        // targets list says where masters listen: it takes the scrape token (below).
        "/metrics",
    ];
    let forged = ClusterSecret::new([9; 32])
        .bearer_key()
        .issue(&Principal::Admin { user: "op".into() });
    for (path, methods, _) in yard_rm::rest::routes() {
        let uri = path.replace("{id}", &id).replace("{name}", "logs");
        for method in methods {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            for bearer in [None, Some(forged.as_str()), Some("not-a-token")] {
                let (status, reply) = h
                    .send(bearer, method.clone(), &uri, Some("{}".into()))
                    .await
                    .pair();
                if open.contains(&path) {
                    assert!(status.is_success(), "{method} {path}: {status} {reply}");
                } else {
                    assert_eq!(
                        status,
                        StatusCode::UNAUTHORIZED,
                        "{method} {path} with {bearer:?}: {reply}"
                    );
                    assert!(
                        reply["error"].is_string()
                            || reply["RemoteException"]["message"].is_string(),
                        "{reply}"
                    );
                }
            }
        }
    }

    // Someone else's credential: 403, saying whose it is.
    let bob = user("bob");
    let alice = user("alice");
    let other_master = token(Principal::Master {
        app: "application_1000_0099".into(),
        attempt: 1,
    });
    let stale_master = token(Principal::Master {
        app: id.clone(),
        attempt: 2,
    });
    let other_node = token(Principal::Node {
        node: Some("n2:8042".into()),
    });
    let scraper = token(Principal::Scraper);
    let app = format!("/ws/v1/yard/apps/{id}");
    let master = format!("{}_01_000001", id.replace("application_", "container_"));
    let cases: Vec<(&str, Method, String, Value)> = vec![
        (&bob, Method::GET, app.clone(), Value::Null),
        (
            &bob,
            Method::PUT,
            format!("{app}/deadline"),
            json!({"deadlineMs": 5}),
        ),
        (
            &bob,
            Method::PUT,
            format!("/ws/v1/cluster/apps/{id}/state"),
            json!({"state": "KILLED"}),
        ),
        (
            &alice,
            Method::POST,
            format!("{app}/allocate"),
            asks(&id, 1),
        ),
        (
            &alice,
            Method::PUT,
            format!("{app}/result"),
            json!({"processedFraction": 1.0, "answer": "forged"}),
        ),
        (
            &alice,
            Method::POST,
            format!("{app}/unregister"),
            json!({"succeeded": true}),
        ),
        (
            &other_master,
            Method::POST,
            format!("{app}/allocate"),
            asks(&id, 1),
        ),
        (
            &stale_master,
            Method::POST,
            format!("{app}/allocate"),
            asks(&id, 1),
        ),
        (
            &other_master,
            Method::PUT,
            format!("{app}/result"),
            json!({"processedFraction": 1.0, "answer": "forged"}),
        ),
        (
            &alice,
            Method::PUT,
            format!("{app}/recovery"),
            json!({"entries": {"map-0": {"forged": true}}}),
        ),
        (&alice, Method::GET, format!("{app}/recovery"), Value::Null),
        (
            &stale_master,
            Method::PUT,
            format!("{app}/recovery"),
            json!({"entries": {"map-0": {"forged": true}}}),
        ),
        (
            &other_master,
            Method::GET,
            format!("{app}/recovery"),
            Value::Null,
        ),
        (
            &alice,
            Method::POST,
            "/ws/v1/yard/nodes".into(),
            json!({"nodeId": "evil:1", "rack": "r1", "capability": {"memoryMb": 1024, "vcores": 1}}),
        ),
        (
            &other_node,
            Method::POST,
            "/ws/v1/yard/nodes".into(),
            json!({"nodeId": "n1:8042", "rack": "r1", "capability": {"memoryMb": 1024, "vcores": 1}}),
        ),
        (
            &alice,
            Method::POST,
            "/ws/v1/yard/auth/tokens".into(),
            json!({"user": "bob"}),
        ),
        (
            &other_master,
            Method::POST,
            "/ws/v1/cluster/apps/new-application".into(),
            json!({}),
        ),
        // Where masters listen, and their final figures: the scrape token's or an admin's.
        (
            &alice,
            Method::GET,
            "/ws/v1/yard/prometheus/targets".into(),
            Value::Null,
        ),
        (&alice, Method::GET, format!("{app}/metrics"), Value::Null),
        (
            &other_node,
            Method::GET,
            format!("{app}/metrics"),
            Value::Null,
        ),
        (
            &other_master,
            Method::PUT,
            format!("{app}/metrics"),
            json!("yard_mr_master_info 1"),
        ),
        // The scrape token reads metrics and nothing else.
        (&scraper, Method::GET, app.clone(), Value::Null),
        (
            &scraper,
            Method::GET,
            "/ws/v1/cluster/apps".into(),
            Value::Null,
        ),
        (
            &scraper,
            Method::PUT,
            format!("{app}/metrics"),
            json!("yard_mr_master_info 1"),
        ),
        (
            &scraper,
            Method::POST,
            "/ws/v1/yard/auth/tokens".into(),
            json!({"scrape": true}),
        ),
        // Logs: the owner's and admins'; uploads a node's.
        (&bob, Method::GET, format!("{app}/logs"), Value::Null),
        (
            &bob,
            Method::GET,
            format!("{app}/logs/{master}/stdout"),
            Value::Null,
        ),
        (
            &alice,
            Method::PUT,
            format!("{app}/logs/{master}/stdout?node=n1:8042&bytes=1&cap=1"),
            json!("x"),
        ),
        (
            &other_node,
            Method::PUT,
            format!("{app}/logs/{master}/stdout?node=n1:8042&bytes=1&cap=1"),
            json!("x"),
        ),
    ];
    for (bearer, method, uri, body) in cases {
        let body = (!body.is_null()).then(|| body.to_string());
        let (status, reply) = h
            .send(Some(bearer), method.clone(), &uri, body)
            .await
            .pair();
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {uri}: {reply}");
        let message = if uri.starts_with("/ws/v1/cluster") {
            assert_eq!(reply["RemoteException"]["exception"], "ForbiddenException");
            &reply["RemoteException"]["message"]
        } else {
            &reply["error"]
        };
        assert!(message.as_str().is_some_and(|e| !e.is_empty()), "{reply}");
    }
    // Nothing moved: alice's application runs, with no forged answer and no grant.
    let (_, view) = h.get(&app).await;
    assert_eq!(
        (
            &view["app"]["state"],
            &view["app"]["answer"],
            &view["app"]["deadlineMs"]
        ),
        (&json!("RUNNING"), &Value::Null, &Value::Null)
    );
    assert_eq!(
        h.get("/ws/v1/cluster/nodes").await.1["nodes"]["node"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // alice herself may read and kill her own application, and bob may not submit under
    // alice's name nor use an id issued to her.
    let (status, _) = h.send(Some(&alice), Method::GET, &app, None).await.pair();
    assert_eq!(status, StatusCode::OK);
    let (_, issued) = h
        .send(
            Some(&alice),
            Method::POST,
            "/ws/v1/cluster/apps/new-application",
            Some("{}".into()),
        )
        .await
        .pair();
    let fresh = issued["application-id"].as_str().unwrap().to_owned();
    for body in [
        json!({"application-id": fresh, "user": "alice"}),
        json!({"application-id": fresh}),
    ] {
        let (status, reply) = h
            .call_as(Some(&bob), Method::POST, "/ws/v1/cluster/apps", Some(body))
            .await
            .pair();
        assert_eq!(status, StatusCode::FORBIDDEN, "{reply}");
    }
    // Ids the rm never issued are refused, whoever asks.
    for made_up in ["..", "a/b", &"x".repeat(100_000), "application_1000_0777"] {
        let body = json!({"application-id": made_up}).to_string();
        let (status, reply) = h
            .send(
                Some(&admin()),
                Method::POST,
                "/ws/v1/cluster/apps",
                Some(body),
            )
            .await
            .pair();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
        assert!(
            reply["RemoteException"]["message"]
                .as_str()
                .unwrap()
                .contains("not issued"),
            "{reply}"
        );
    }
    let (status, _) = h
        .call_as(
            Some(&alice),
            Method::POST,
            "/ws/v1/cluster/apps",
            Some(json!({"application-id": fresh})),
        )
        .await
        .pair();
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = h
        .call_as(
            Some(&alice),
            Method::PUT,
            &format!("/ws/v1/cluster/apps/{id}/state"),
            Some(json!({"state": "KILLED"})),
        )
        .await
        .pair();
    assert_eq!(
        status,
        StatusCode::ACCEPTED,
        "an admin submitted it for alice: it is hers"
    );
}

/// A master keeps entries for its next attempt (one per finished map, for yard's masters):
/// idempotent by key, checked at the edge, read by the next attempt and by no one else,
/// dropped when the application ends.
#[tokio::test]
async fn a_masters_recovery_entries_reach_its_next_attempt_and_go_with_the_application() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let uri = format!("/ws/v1/yard/apps/{id}/recovery");
    let put = |body: Value| h.call(Method::PUT, &uri, Some(body));
    let (status, reply) = put(json!({"entries": {
        "map-0": {"output": "1-0", "node": "http://n1"},
        "map-1": {"output": "1-1", "node": "http://n1"},
    }}))
    .await;
    assert_eq!(
        (status, &reply["entries"]),
        (StatusCode::OK, &json!(2)),
        "{reply}"
    );
    // A retried or rewritten key replaces, never duplicates.
    let (status, reply) =
        put(json!({"entries": {"map-1": {"output": "1-1b", "node": "http://n1"}}})).await;
    assert_eq!(
        (status, &reply["entries"]),
        (StatusCode::OK, &json!(2)),
        "{reply}"
    );
    for (bad, field) in [
        (
            json!({"entries": {"map-2": "not an object"}}),
            "entries.map-2",
        ),
        (
            json!({"entries": {"map-2": {"pad": "x".repeat(9_000)}}}),
            "entries.map-2",
        ),
        (json!({"entries": {"has space": {}}}), "entries (a key)"),
        (json!({"entries": {"": {}}}), "entries (a key)"),
        (json!({"entries": [1, 2]}), "not what this route takes"),
        (json!({"records": {}}), "not what this route takes"),
    ] {
        let (status, reply) = put(bad.clone()).await;
        assert!(
            status == StatusCode::BAD_REQUEST || status == StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {reply}"
        );
        assert!(
            reply["error"].as_str().unwrap().contains(field),
            "{bad}: {reply}"
        );
    }
    let (status, kept) = h.get(&uri).await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    assert_eq!(kept["attempt"], json!(1));
    assert_eq!(
        kept["entries"],
        json!({"map-0": {"output": "1-0", "node": "http://n1"}, "map-1": {"output": "1-1b", "node": "http://n1"}})
    );

    // The master dies (its container exits 1): attempt 2 starts, and reads what attempt 1 kept.
    let master =
        h.rm.cluster
            .lock()
            .unwrap()
            .app(&id)
            .unwrap()
            .master
            .clone()
            .unwrap();
    let hb = json!({"nodeId": "n1:8042", "running": [], "telemetry": {"cpuPercent": 5.0, "load1m": 0.1, "load5m": 0.1, "load15m": 0.1,
        "memoryTotalBytes": 1, "memoryUsedBytes": 1, "diskReadBytesPerS": 0.0, "diskWriteBytesPerS": 0.0,
        "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0, "containers": []},
        "completed": [{"containerId": master, "end": "EXITED", "exitCode": 1}]});
    let (status, reply) = h.post("/ws/v1/yard/nodes/heartbeat", hb).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(h.rm.cluster.lock().unwrap().current_attempt(&id), Some(2));
    let (status, reply) = h
        .post(&format!("/ws/v1/yard/apps/{id}/register"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let (status, kept2) = h.get(&uri).await;
    assert_eq!(status, StatusCode::OK, "{kept2}");
    assert_eq!(
        (&kept2["attempt"], &kept2["entries"]),
        (&json!(2), &kept["entries"])
    );
    // Attempt 1's token no longer writes.
    let old = token(Principal::Master {
        app: id.clone(),
        attempt: 1,
    });
    let (status, _) = h
        .call_as(
            Some(&old),
            Method::PUT,
            &uri,
            Some(json!({"entries": {"map-9": {}}})),
        )
        .await
        .pair();
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The application ends: its entries go (a master of a finished app reads nothing).
    h.unregister(&id).await;
    assert_eq!(h.rm.cluster.lock().unwrap().recovery(&id).count(), 0);
    let (status, _) = h.get(&uri).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "the application is not running"
    );
}

/// Numbers out of their documented range are a 400 naming the field, and nothing is stored.
#[tokio::test]
async fn numbers_out_of_range_are_refused_naming_the_field() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let node = |memory: u64, vcores: u64| json!({"nodeId": "n2:8042", "rack": "r1", "capability": {"memoryMb": memory, "vcores": vcores}});
    for (body, field) in [
        (node(1 << 63, 4), "capability.memoryMb"),
        (node(0, 4), "capability.memoryMb"),
        (node(4096, 0), "capability.vcores"),
        (node(4096, 1 << 20), "capability.vcores"),
    ] {
        let (status, reply) = h.post("/ws/v1/yard/nodes", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
        assert_eq!(reply["detail"]["field"], field, "{reply}");
    }
    let ask = |memory: u64, vcores: u64, n: u64| {
        json!({"applicationId": id, "progress": 0.1, "releases": [],
               "asks": [{"priority": 1, "resourceName": "*", "capability": {"memoryMb": memory, "vcores": vcores}, "numContainers": n}]})
    };
    for (body, field) in [
        (ask(1 << 40, 1, 1), "asks[0].capability.memoryMb"),
        (ask(1024, 5000, 1), "asks[0].capability.vcores"),
        (ask(1024, 1, 1_000_000), "asks[0].numContainers"),
    ] {
        let (status, reply) = h
            .post(&format!("/ws/v1/yard/apps/{id}/allocate"), body)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
        assert_eq!(reply["detail"]["field"], field, "{reply}");
    }
    let (status, reply) = h
        .call(
            Method::PUT,
            &format!("/ws/v1/yard/apps/{id}/deadline"),
            Some(json!({"deadlineMs": i64::MAX})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    let (_, nodes) = h.get("/ws/v1/cluster/nodes").await;
    assert_eq!(
        nodes["nodes"]["node"].as_array().unwrap().len(),
        1,
        "nothing stored"
    );
}

/// Who calls is checked before the body is read: a caller of the wrong kind, or of someone
/// else's application, is a 403 and no credential a 401, whatever the body (a bad body from
/// the rightful caller is still the 4xx that says what to fix).
#[tokio::test]
async fn who_calls_is_checked_before_the_body_is_read() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await; // alice's
    let alice = user("alice");
    let bob = user("bob");
    let node = token(Principal::Node { node: None });
    let bad = Some("{\"not\": \"this\"".to_owned()); // not even JSON
    let shaped = Some("{\"unknownField\": 1}".to_owned()); // JSON of the wrong shape
    let app = format!("/ws/v1/yard/apps/{id}");
    let cases: Vec<(Option<&str>, Method, String, StatusCode)> = vec![
        // A user's token on a node's route.
        (
            Some(&alice),
            Method::POST,
            "/ws/v1/yard/nodes/heartbeat".into(),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&alice),
            Method::POST,
            "/ws/v1/yard/nodes".into(),
            StatusCode::FORBIDDEN,
        ),
        // A user's token on a master's routes.
        (
            Some(&alice),
            Method::POST,
            format!("{app}/allocate"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&alice),
            Method::POST,
            format!("{app}/unregister"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&alice),
            Method::PUT,
            format!("{app}/result"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&alice),
            Method::POST,
            format!("{app}/register"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&alice),
            Method::PUT,
            format!("{app}/recovery"),
            StatusCode::FORBIDDEN,
        ),
        // Another user's application; a user issuing tokens.
        (
            Some(&bob),
            Method::PUT,
            format!("{app}/deadline"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&bob),
            Method::PUT,
            format!("/ws/v1/cluster/apps/{id}/state"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&bob),
            Method::PUT,
            format!("/ws/v1/cluster/apps/{id}/queue"),
            StatusCode::FORBIDDEN,
        ),
        (
            Some(&bob),
            Method::POST,
            "/ws/v1/yard/auth/tokens".into(),
            StatusCode::FORBIDDEN,
        ),
        // A node submitting.
        (
            Some(&node),
            Method::POST,
            "/ws/v1/cluster/apps".into(),
            StatusCode::FORBIDDEN,
        ),
        // No credential at all.
        (
            None,
            Method::POST,
            "/ws/v1/yard/nodes/heartbeat".into(),
            StatusCode::UNAUTHORIZED,
        ),
        (
            None,
            Method::POST,
            format!("{app}/allocate"),
            StatusCode::UNAUTHORIZED,
        ),
        (
            None,
            Method::POST,
            "/ws/v1/cluster/apps".into(),
            StatusCode::UNAUTHORIZED,
        ),
    ];
    for (bearer, method, uri, expected) in &cases {
        for body in [&bad, &shaped] {
            let (status, reply) = h
                .send(*bearer, method.clone(), uri, body.clone())
                .await
                .pair();
            assert_eq!(status, *expected, "{method} {uri} with {body:?}: {reply}");
        }
    }
    // The rightful caller with a bad body: what to fix, not a refusal of who it is.
    let (status, reply) = h
        .call_raw(Method::POST, "/ws/v1/yard/nodes/heartbeat", bad.clone())
        .await;
    assert!(
        matches!(
            status,
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY
        ),
        "{reply}"
    );
    let (status, reply) = h
        .call_raw(Method::POST, &format!("{app}/allocate"), shaped.clone())
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{reply}");
    assert_eq!(h.app(&id).await["state"], "RUNNING");
}

/// An id or value from outside is echoed in a refusal cut to 64 characters and "…", on every
/// route: a 100,000-character one is not sent back whole.
#[tokio::test]
async fn a_refusal_echoes_an_outside_value_cut_short() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let long = "x".repeat(100_000);
    // An address holds at most 65,534 bytes (the `http` crate's limit; hyper refuses longer),
    // three such ids among them.
    let long_in_uri = "x".repeat(20_000);
    let whole = "x".repeat(65);
    let check = |what: String, status: StatusCode, text: &str| {
        assert!(status.is_client_error(), "{what}: {status}");
        assert!(
            !text.contains(&whole),
            "{what} echoes it whole: {}",
            &text[..200.min(text.len())]
        );
    };
    for (path, methods, _) in yard_rm::rest::routes() {
        if !path.contains('{') {
            continue;
        }
        let uri = path
            .split('/')
            .map(|part| {
                if part.starts_with('{') {
                    long_in_uri.as_str()
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        for method in methods {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            let a = h
                .send(Some(&admin()), method.clone(), &uri, Some("{}".into()))
                .await;
            check(format!("{method} {path}"), a.status, &a.text);
        }
    }
    // In bodies and query strings too.
    let app = format!("/ws/v1/yard/apps/{id}");
    let master = token(Principal::Master {
        app: id.clone(),
        attempt: 1,
    });
    for (bearer, method, uri, body) in [
        (
            admin(),
            Method::POST,
            "/ws/v1/cluster/apps".to_owned(),
            json!({"application-id": long}),
        ),
        (
            admin(),
            Method::POST,
            "/ws/v1/cluster/apps".to_owned(),
            json!({"application-id": long, "application-name": "n", "queue": long}),
        ),
        (
            admin(),
            Method::PUT,
            "/ws/v1/yard/datasets/books".to_owned(),
            json!({"name": long, "createdMs": 0, "blocks": []}),
        ),
        (
            admin(),
            Method::PUT,
            format!("/ws/v1/cluster/apps/{id}/state"),
            json!({"state": long}),
        ),
        (
            admin(),
            Method::PUT,
            format!("/ws/v1/cluster/apps/{id}/queue"),
            json!({"queue": long}),
        ),
        (
            admin(),
            Method::POST,
            "/ws/v1/yard/auth/tokens".to_owned(),
            json!({"user": long}),
        ),
        (master.clone(), Method::POST, format!("{app}/allocate"), {
            let mut a = asks(&id, 1);
            a["applicationId"] = json!(long);
            a
        }),
        (
            master.clone(),
            Method::POST,
            format!("{app}/register"),
            json!({"trackingUrl": long}),
        ),
        (
            master.clone(),
            Method::POST,
            format!("{app}/register"),
            json!({long.clone(): 1}),
        ),
        (
            master.clone(),
            Method::POST,
            format!("{app}/unregister"),
            json!({"succeeded": long}),
        ),
        (
            master.clone(),
            Method::PUT,
            format!("{app}/result"),
            json!({long.clone(): 1}),
        ),
        (
            admin(),
            Method::GET,
            format!("/ws/v1/cluster/apps?states={long_in_uri}"),
            Value::Null,
        ),
        (
            admin(),
            Method::GET,
            format!("/ws/v1/cluster/apps?{long_in_uri}=1"),
            Value::Null,
        ),
        (
            admin(),
            Method::GET,
            format!("/ws/v1/cluster/nodes?states={long_in_uri}"),
            Value::Null,
        ),
    ] {
        let body = (!body.is_null()).then(|| body.to_string());
        let a = h.send(Some(&bearer), method.clone(), &uri, body).await;
        check(
            format!("{method} {}", &uri[..60.min(uri.len())]),
            a.status,
            &a.text,
        );
    }
}

/// As Hadoop reads them: an empty filter value is no filter (`finalStatus=&limit=` lists every
/// application), and another application's attempt id names no attempt here (404, as Hadoop's
/// `validateIds`); a key no route takes is still a 400, and so is an attempt that is no id.
#[tokio::test]
async fn empty_filters_and_another_applications_attempt_read_as_hadoop_reads_them() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    let (status, apps) = h
        .get("/ws/v1/cluster/apps?states=&finalStatus=&limit=&startedTimeBegin=&deSelects=")
        .await;
    assert_eq!(status, StatusCode::OK, "{apps}");
    assert_eq!(apps["apps"]["app"][0]["id"], json!(id));
    let (status, nodes) = h.get("/ws/v1/cluster/nodes?healthy=&states=").await;
    assert_eq!(status, StatusCode::OK, "{nodes}");
    let (status, reply) = h.get("/ws/v1/cluster/apps?bogus=").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    let (_, stamp, seq) = {
        let mut parts = id.splitn(3, '_');
        (parts.next(), parts.next().unwrap(), parts.next().unwrap())
    };
    let other = format!(
        "appattempt_{stamp}_{}_000001",
        seq.parse::<u32>().unwrap() + 1
    );
    for tail in ["", "/containers", "/containers/container_1_0001_01_000001"] {
        let (status, reply) = h
            .get(&format!(
                "/ws/v1/cluster/apps/{id}/appattempts/{other}{tail}"
            ))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{tail}: {reply}");
        assert_eq!(reply["RemoteException"]["exception"], "NotFoundException");
    }
    let own = format!("appattempt_{stamp}_{seq}_000001");
    let (status, _) = h
        .get(&format!("/ws/v1/cluster/apps/{id}/appattempts/{own}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = h
        .get(&format!("/ws/v1/cluster/apps/{id}/appattempts/0"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// As Hadoop's `WebAppUtils.parseApplicationId`: on Hadoop's routes an id that is not an
/// application id is a 400 (`BadRequestException`) before it is looked up, and a well-formed
/// one never issued a 404; yard's own routes keep their 404.
#[tokio::test]
async fn a_malformed_application_id_is_a_bad_request_on_hadoops_routes() {
    let h = harness();
    h.node("n1:8042", 4).await;
    let id = running_app(&h).await;
    for bad in [
        "bogus",
        "application_1000",
        "application_x_0001",
        "application_1000_0001_7",
    ] {
        for route in [
            "",
            "/state",
            "/appattempts",
            "/appattempts/1",
            "/queue",
            "/priority",
            "/timeouts",
        ] {
            let (status, reply) = h.get(&format!("/ws/v1/cluster/apps/{bad}{route}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}{route}: {reply}");
            let e = &reply["RemoteException"];
            assert_eq!(e["exception"], "BadRequestException", "{reply}");
            assert!(
                e["message"]
                    .as_str()
                    .unwrap()
                    .contains("is not an application id"),
                "{reply}"
            );
        }
    }
    let (status, _) = h.get("/ws/v1/cluster/apps/application_9_0009/state").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = h.get(&format!("/ws/v1/cluster/apps/{id}/state")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = h.get("/ws/v1/yard/apps/bogus").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
