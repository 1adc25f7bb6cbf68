//! 12,000 generated bad requests against a live rm and nodemanager (127.0.0.1): every route
//! with mangled paths (traversal, encoded slashes, NULs, 30,000-character names, ids never
//! issued), every kind of missing, malformed, forged or someone else's credential, and bodies
//! that are broken, mistyped, out of range, deeply nested or too large. Not one may get a 5xx
//! or a connection dropped without an answer, both daemons must still run, and nothing they keep may
//! change. Seeded, so a failure replays.

use rand::rngs::ChaCha8Rng;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use yard_wire::auth::{ClusterSecret, Principal};

mod support;
use support::*;

const REQUESTS: usize = 12_000;

/// What the rm and the nodemanager keep, as a client sees it.
fn snapshot(rm: &str, nm: &str, app: &str, grant: &str) -> Value {
    let apps: Vec<Value> = get(&format!("{rm}/ws/v1/cluster/apps"))["apps"]["app"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| json!([a["id"], a["state"], a["user"], a["name"]]))
        .collect();
    let nodes: Vec<Value> = get(&format!("{rm}/ws/v1/cluster/nodes"))["nodes"]["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| json!([n["id"], n["state"], n["totalResource"]]))
        .collect();
    let containers: Vec<Value> =
        get(&format!("{nm}/ws/v1/node/containers"))["containers"]["container"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect();
    let block = reqwest::blocking::Client::new()
        .get(format!("{nm}/ws/v1/node/blocks/logs/b000000"))
        .bearer_auth(grant)
        .send()
        .and_then(|r| r.text())
        .unwrap_or_default();
    json!({
        "apps": apps,
        "nodes": nodes,
        "app": get(&format!("{rm}/ws/v1/yard/apps/{app}")),
        "datasets": get(&format!("{rm}/ws/v1/yard/datasets")),
        "inventory": get(&format!("{nm}/ws/v1/node/blocks")),
        "containers": containers,
        "block": block,
    })
}

fn short(s: &str) -> String {
    s.chars().take(200).collect()
}

#[test]
fn thousands_of_bad_requests_get_4xx_never_5xx_and_change_nothing() {
    let tmp = work_dir("yard-bad-requests");
    let rm = rm_in(&tmp, &[]);
    let rm_url = format!("http://{}", rm.addr);
    let mut nms = vec![nm(&rm, &tmp.join("nm0"))];
    await_running(&rm, 1);
    let nm_url = format!("http://{}", nms[0].addr);

    // Some state to keep: a running application with its master, and a dataset.
    let app = submit_command(&rm_url, "sleep 600");
    eventually("the master container", || {
        (!containers_on(&nms[0]).is_empty()).then_some(())
    });
    let text = tmp.join("logs.txt");
    std::fs::write(&text, "one line\nanother line\n".repeat(50)).unwrap();
    let (code, _, err) = yard(&[
        "data",
        "put",
        "logs",
        text.to_str().unwrap(),
        "--block-size",
        "600",
        "--replication",
        "1",
        "--rm",
        &rm_url,
    ]);
    assert_eq!(code, 0, "{err}");
    let grant = upload_grant(&rm_url, "logs");
    let before = snapshot(&rm_url, &nm_url, &app, &grant);

    // Credentials of every wrong kind. Mallory is a real user of this cluster who owns nothing.
    let secret_text = std::fs::read_to_string(tmp.join("rm.secret")).unwrap();
    let bearer = ClusterSecret::from_hex(&secret_text).unwrap().bearer_key();
    let mallory = bearer.issue(&Principal::User {
        user: "mallory".into(),
    });
    let stale_master = bearer.issue(&Principal::Master {
        app: app.clone(),
        attempt: 7,
    });
    let other_node = bearer.issue(&Principal::Node {
        node: Some("elsewhere:1".into()),
    });
    let forged = ClusterSecret::new([1; 32])
        .bearer_key()
        .issue(&Principal::Admin { user: "x".into() });
    let forged_job = ClusterSecret::new([1; 32]).data_key().job_token(&app);
    let admin = admin_token(&rm_url).unwrap();
    let credentials: Vec<Option<String>> = vec![
        None,
        Some("Bearer".into()),
        Some("Bearer ".into()),
        Some("Basic YWxhZGRpbjpvcGVuc2VzYW1l".into()),
        Some("Bearer yard1.zz.zz".into()),
        Some(format!("Bearer {forged}")),
        Some(format!("Bearer {forged_job}")),
        Some(format!("Bearer {mallory}")),
        Some(format!("Bearer {stale_master}")),
        Some(format!("Bearer {other_node}")),
        Some(format!("bearer {}", "A".repeat(10_000))),
    ];

    let segments: Vec<String> = vec![
        app.clone(),
        "application_1_0001".into(),
        "..".into(),
        ".".into(),
        "%2e%2e".into(),
        "a%2Fb".into(),
        "%00".into(),
        "%C3%A9t%C3%A9".into(),
        // http::Uri's limit is 65,534 bytes: the longest a client can send.
        "x".repeat(30_000),
        "logs".into(),
        "b000000".into(),
        "container_e1_1_0001_01_000001".into(),
        "-1".into(),
        "%ZZ".into(),
    ];
    // Each route with the method it answers (most requests use it, so handlers run).
    let templates = [
        ("/ws/v1/yard/nodes", "POST"),
        ("/ws/v1/yard/nodes/heartbeat", "POST"),
        ("/ws/v1/yard/apps/{}/register", "POST"),
        ("/ws/v1/yard/apps/{}/allocate", "POST"),
        ("/ws/v1/yard/apps/{}/unregister", "POST"),
        ("/ws/v1/yard/apps/{}", "GET"),
        ("/ws/v1/yard/apps/{}/deadline", "PUT"),
        ("/ws/v1/yard/apps/{}/result", "PUT"),
        ("/ws/v1/yard/datasets/{}", "PUT"),
        ("/ws/v1/yard/datasets/{}/upload-grant", "POST"),
        ("/ws/v1/yard/auth/tokens", "POST"),
        ("/ws/v1/cluster/apps", "POST"),
        ("/ws/v1/cluster/apps/{}", "GET"),
        ("/ws/v1/cluster/apps/{}/state", "PUT"),
        ("/ws/v1/cluster/apps/{}/appattempts", "GET"),
        ("/ws/v1/cluster/nodes/{}", "GET"),
        ("/ws/v1/cluster/apps?limit={}&states={}", "GET"),
        ("/ws/v1/node/blocks/{}/{}", "PUT"),
        ("/ws/v1/node/shuffle/{}/{}/{}", "GET"),
        ("/ws/v1/node/shuffle/{}", "DELETE"),
        ("/ws/v1/node/containers", "POST"),
        ("/{}/{}", "GET"),
    ];
    let nested = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    let bodies: Vec<Vec<u8>> = [
        "",
        "{",
        "null",
        "[]",
        "\"text\"",
        "{\"unknown\": 1}",
        "{\"deadlineMs\": \"soon\"}",
        "{\"deadlineMs\": 1e400}",
        "{\"deadlineMs\": -9223372036854775808}",
        "{\"state\": \"RUNNING\"}",
        "{\"state\": \"KILLED\"}",
        "{\"processedFraction\": -1, \"answer\": 1}",
        "{\"processedFraction\": 0.5, \"answer\": \"forged\"}",
        "{\"succeeded\": true}",
        "{\"user\": \"mallory\"}",
        "{\"application-id\": \"..\"}",
        "{\"application-id\": \"application_1_0001\", \"user\": \"root\"}",
        "{\"nodeId\": \"evil:1\", \"rack\": \"r\", \"capability\": {\"memoryMb\": 9223372036854775808, \"vcores\": 1}}",
        "{\"nodeId\": \"evil:1\", \"rack\": \"r\", \"capability\": {\"memoryMb\": 1024, \"vcores\": 1}}",
        "{\"name\": \"logs\", \"blocks\": []}",
        "{\"token\": null, \"command\": [\"/bin/sh\", \"-c\", \"touch /tmp/pwned\"]}",
        "{\"applicationId\": \"x\", \"asks\": [], \"releases\": [], \"progress\": 2}",
    ]
    .iter()
    .map(|b| b.as_bytes().to_vec())
    .chain([
        nested.into_bytes(),
        vec![0xff, 0xfe, 0x00, 0x7b],
        vec![b' '; 1_100_000],
    ])
    .collect();

    // A fresh connection per request: a server may close a kept-alive connection after
    // refusing a body it did not read, and reusing it would be the client's race, not a fault.
    let http = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap();
    let methods = [
        reqwest::Method::GET,
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let mut by_status = std::collections::BTreeMap::<u16, usize>::new();
    let mut failures = Vec::new();
    let mut early = 0;
    for i in 0..REQUESTS {
        let (template, natural) = templates.choose(&mut rng).unwrap();
        let mut path = String::new();
        for (k, part) in template.split("{}").enumerate() {
            if k > 0 {
                path += segments.choose(&mut rng).unwrap();
            }
            path += part;
        }
        let base = if path.starts_with("/ws/v1/node") || rng.random_bool(0.1) {
            &nm_url
        } else {
            &rm_url
        };
        let method = if rng.random_bool(0.7) {
            reqwest::Method::from_bytes(natural.as_bytes()).unwrap()
        } else {
            methods.choose(&mut rng).unwrap().clone()
        };
        // The admin only ever sends a body that cannot parse; every other credential anything.
        let admin_call = rng.random_bool(0.15);
        let credential = if admin_call {
            Some(format!("Bearer {admin}"))
        } else {
            credentials.choose(&mut rng).unwrap().clone()
        };
        let body = if admin_call {
            [
                &bodies[1],
                &bodies[2],
                &bodies[22],
                &bodies[23],
                &bodies[24],
            ]
            .choose(&mut rng)
            .map(|b| (*b).clone())
            .unwrap()
        } else {
            bodies.choose(&mut rng).unwrap().clone()
        };
        if admin_call && method == reqwest::Method::POST && path.ends_with("new-application") {
            continue;
        }
        let size = body.len();
        let mut request = http
            .request(method.clone(), format!("{base}{path}"))
            .header("content-type", "application/json")
            .body(body);
        if let Some(c) = credential {
            request = request.header("authorization", c);
        }
        match request.send() {
            Ok(r) => {
                let status = r.status().as_u16();
                *by_status.entry(status).or_default() += 1;
                // What succeeds may only read (or hand out a grant, which stores nothing).
                if r.status().is_success()
                    && method != reqwest::Method::GET
                    && !path.ends_with("upload-grant")
                {
                    failures.push(format!("#{i} {method} {base}{}: {status}", short(&path)));
                }
                if status >= 500 {
                    let text: String = r.text().unwrap_or_default().chars().take(300).collect();
                    failures.push(format!(
                        "#{i} {method} {base}{}: {status} {text}",
                        short(&path)
                    ));
                }
            }
            // The server answered (404, 405, 413…) before reading a body it did not want, and
            // closed: the client could not finish writing it. A panic would be a 500 (both
            // daemons catch them), never this.
            Err(e) if format!("{e:?}").contains("BodyWrite") => early += 1,
            Err(e) => failures.push(format!(
                "#{i} {method} {base}{} ({size} bytes): no answer: {}",
                short(&path),
                short(&format!("{e:?}"))
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    eprintln!("statuses: {by_status:?}; {early} refused before the body was sent");
    assert!(early < REQUESTS / 10, "{early} early refusals");
    // Both daemons still run, and everything they keep is as it was.
    let mut rm = rm;
    assert!(rm.child.try_wait().unwrap().is_none(), "the rm died");
    assert!(
        nms[0].child.try_wait().unwrap().is_none(),
        "the nodemanager died"
    );
    assert_eq!(snapshot(&rm_url, &nm_url, &app, &grant), before);
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    drop(nms.pop());
    drop(rm);
    let _ = std::fs::remove_dir_all(&tmp);
}
