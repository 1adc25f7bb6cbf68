//! Every route of a MapReduce master asks who calls (issue 28 item 3): without a bearer a 401,
//! with a wrong one (another application's job token, a token this cluster never signed, the
//! scrape token off `/metrics`) a 403, each before the body is read; the job's own token opens
//! them, and the job's tasks, which carry it, run the job to its answer. Forged task reports
//! sent meanwhile change nothing. Once the job ends, the rm serves the master's final figures to
//! the scrape token, listed under the instance the live master had.

use std::time::Duration;

use serde_json::{Value, json};
use yard_rm::metrics::{parse_text, value_of};
use yard_wire::auth::ClusterSecret;

mod support;
use support::*;

/// Every route of a master's umbilical, with a body it would take.
fn routes() -> Vec<(reqwest::Method, &'static str, Value)> {
    use reqwest::Method;
    vec![
        (Method::GET, "/status", Value::Null),
        (Method::GET, "/metrics", Value::Null),
        (
            Method::POST,
            "/mr/runners/container_1_0001_01_000002/next",
            json!({}),
        ),
        (Method::POST, "/mr/attempts/1-1/started", json!({})),
        (
            Method::POST,
            "/mr/attempts/1-1/progress",
            json!({"progress": 0.5}),
        ),
        (
            Method::POST,
            "/mr/attempts/1-1/done",
            json!({"outputBytes": 0}),
        ),
        (
            Method::POST,
            "/mr/attempts/1-1/failed",
            json!({"reason": "forged"}),
        ),
        (Method::POST, "/mr/attempts/1-1/outputs", json!({"from": 0})),
        (
            Method::POST,
            "/mr/attempts/1-1/shuffled",
            json!({"bytes": 1}),
        ),
        (Method::POST, "/mr/attempts/1-1/ready", json!({"bytes": 1})),
        (
            Method::POST,
            "/mr/attempts/1-1/fetch-failure",
            json!({"output": "1.1-0", "node": "http://127.0.0.1:1"}),
        ),
    ]
}

/// `method path` on the master at `base` with `bearer` (as the whole `Authorization` value)
/// and `body` sent as it is: the status.
fn status_of(
    base: &str,
    method: &reqwest::Method,
    path: &str,
    authorization: Option<&str>,
    body: &str,
) -> u16 {
    let mut request = reqwest::blocking::Client::new()
        .request(method.clone(), format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(a) = authorization {
        request = request.header("authorization", a);
    }
    request.send().unwrap().status().as_u16()
}

#[test]
fn every_master_route_wants_the_jobs_token_and_the_rm_keeps_its_final_figures() {
    let tmp = work_dir("yard-master-auth");
    let c = cluster(&tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);
    // The scrape token, as an admin issues it.
    let (code, out, err) = yard(&["auth", "token", "--scrape", "--rm", &c.url]);
    assert_eq!(code, 0, "{err}");
    let scraper = out.trim().to_owned();
    assert_eq!(
        scraper,
        scrape_token(&c.url),
        "one scrape token per cluster"
    );
    // Maps of at least 2 s: the master serves long enough to be tried.
    let (id, location) = submit_grep(&http, &c.url, "master-auth", 2.0);
    let tracking = eventually_for(
        "the master's tracking URL",
        Duration::from_secs(120),
        || {
            let view = get(&format!("{}/ws/v1/yard/apps/{id}", c.url));
            view["app"]["trackingUrl"].as_str().map(str::to_owned)
        },
    );
    let base = tracking.trim_end_matches("/status").to_owned();

    let mine = job_token(&tmp, &id);
    let others = job_token(&tmp, "application_1_0001");
    let forged = ClusterSecret::new([9; 32]).data_key().job_token(&id);
    for (method, path, body) in routes() {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        // No credential, or not a bearer: 401, also with a body the route could not parse
        // (the credential is checked first).
        for authorization in [None, Some("Basic YWxpY2U6c2VjcmV0"), Some("Bearer")] {
            for sent in [body.as_str(), "{not json"] {
                assert_eq!(
                    status_of(&base, &method, path, authorization, sent),
                    401,
                    "{method} {path} with {authorization:?}, body {sent}"
                );
            }
        }
        // Someone else's token: 403, the body unread.
        let mut wrong = vec![others.as_str(), forged.as_str(), "garbage"];
        if path != "/metrics" {
            wrong.push(scraper.as_str());
        }
        for token in wrong {
            for sent in [body.as_str(), "{not json"] {
                let authorization = format!("Bearer {token}");
                assert_eq!(
                    status_of(&base, &method, path, Some(&authorization), sent),
                    403,
                    "{method} {path} with {token}, body {sent}"
                );
            }
        }
    }
    // The job's own token opens the routes; the scrape token opens `/metrics`.
    let status = get_as(&tracking, &mine);
    assert!(status.is_object(), "{status}");
    for token in [&mine, &scraper] {
        let authorization = format!("Bearer {token}");
        assert_eq!(
            status_of(
                &base,
                &reqwest::Method::GET,
                "/metrics",
                Some(&authorization),
                ""
            ),
            200
        );
    }

    // The tasks carry the token: the job runs to its answer, the forged reports refused.
    let done = watch_job(&http, &c.url, &location, &tmp, &id, |_| {});
    assert_eq!(
        done["finalStatus"],
        "SUCCEEDED",
        "{done}\n{}",
        master_log(&tmp, &id)
    );

    // Its master is gone; the rm serves its final figures under the master's instance.
    let instance = base.trim_start_matches("http://").to_owned();
    let targets = get_as(
        &format!("{}/ws/v1/yard/prometheus/targets", c.url),
        &scraper,
    );
    let kept = targets
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["labels"]["instance"] == instance.as_str())
        .unwrap_or_else(|| panic!("{instance} in {targets}"));
    assert_eq!(kept["labels"]["yard_component"], "mr_master", "{kept}");
    assert_eq!(
        kept["targets"],
        json!([c.url.trim_start_matches("http://")]),
        "{kept}"
    );
    let path = kept["labels"]["__metrics_path__"].as_str().unwrap();
    assert_eq!(path, format!("/ws/v1/yard/apps/{id}/metrics"));
    let text = reqwest::blocking::Client::new()
        .get(format!("{}{path}", c.url))
        .bearer_auth(&scraper)
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.text())
        .unwrap();
    let samples = parse_text(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        value_of(
            &samples,
            "yard_mr_master_info",
            &[("policy", "dart"), ("phase", "job")]
        ),
        Some(1.0),
        "{text}"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
