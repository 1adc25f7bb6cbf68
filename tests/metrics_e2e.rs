//! Prometheus metrics on a live cluster: an rm and three nodemanagers on 127.0.0.1 run a Dart
//! job; the rm's `http_sd` targets name the nodemanagers and, while it runs, the job's master;
//! each daemon's `GET /metrics` is valid text format named `yard_<component>_*` with no
//! application or container id in a label, and its figures saw the job. Where `promtool` (the
//! Debian package `prometheus`) is installed, `promtool check metrics` is clean on every
//! daemon's output; without it the check is skipped loudly, except under CI (`CI=true`),
//! where it fails (`.ci/run` installs it).

mod support;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::*;
use yard_rm::metrics::{Sample, parse_text, value_of};

/// `GET http://{target}/metrics` without a credential, checked: 200, the text format, every
/// family `yard_{component}_*`, no label value an application or container id.
fn scrape(target: &str, component: &str) -> (String, Vec<Sample>) {
    let reply = reqwest::blocking::get(format!("http://{target}/metrics"))
        .unwrap_or_else(|e| panic!("scraping {target}: {e}"));
    checked(target, component, reply)
}

/// A master's `/metrics` with the scrape token (a master's routes all ask who calls), which
/// may be gone (its job just ended): `None` when it no longer answers; an answer it gives is
/// checked as any other.
fn scrape_if_there(target: &str, path: &str, scraper: &str) -> Option<(String, Vec<Sample>)> {
    let reply = reqwest::blocking::Client::new()
        .get(format!("http://{target}{path}"))
        .bearer_auth(scraper)
        .send()
        .ok()?;
    Some(checked(target, "mr_master", reply))
}

fn checked(
    target: &str,
    component: &str,
    reply: reqwest::blocking::Response,
) -> (String, Vec<Sample>) {
    assert_eq!(reply.status().as_u16(), 200, "{target}");
    let content_type = reply.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{target}: {content_type}"
    );
    let text = reply.text().unwrap();
    let samples = parse_text(&text).unwrap_or_else(|e| panic!("{target}: {e}\n{text}"));
    let prefix = format!("yard_{component}_");
    for s in &samples {
        assert!(s.name.starts_with(&prefix), "{target}: {}", s.name);
        for (k, v) in &s.labels {
            assert!(
                !v.starts_with("application_") && !v.starts_with("container_"),
                "{target}: an id as a label: {}{{{k}={v}}}",
                s.name
            );
        }
    }
    (text, samples)
}

/// The rm's `http_sd` targets, read with the scrape token.
fn targets(url: &str, scraper: &str) -> Value {
    let reply = reqwest::blocking::Client::new()
        .get(format!("{url}/ws/v1/yard/prometheus/targets"))
        .bearer_auth(scraper)
        .send()
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    reply.json().unwrap()
}

/// The finished masters whose final figures the rm serves: (target, instance, path).
fn finished_masters(targets: &Value) -> Vec<(String, String, String)> {
    targets
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["labels"]["__metrics_path__"].is_string())
        .map(|g| {
            (
                g["targets"][0].as_str().unwrap().to_owned(),
                g["labels"]["instance"].as_str().unwrap().to_owned(),
                g["labels"]["__metrics_path__"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn targets_of(targets: &Value, component: &str) -> BTreeSet<String> {
    targets
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["labels"]["yard_component"] == component)
        .flat_map(|g| g["targets"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// `promtool check metrics` on each scrape: clean, or the test fails. Without promtool: a
/// loud skip, or a failure under CI.
fn promtool_check(scrapes: &[(String, String)]) {
    let version = Command::new("promtool").arg("--version").output();
    if !version.as_ref().is_ok_and(|o| o.status.success()) {
        let why = "promtool is not on PATH (Debian: apt-get install prometheus)";
        if ci() {
            panic!("metrics_e2e cannot check the scrapes in CI: {why}");
        }
        eprintln!("\n*** SKIPPED: promtool check metrics: {why}. ***\n");
        return;
    }
    for (what, text) in scrapes {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && said.trim().is_empty(),
            "promtool check metrics on {what}: {}\n{said}",
            out.status
        );
    }
}

#[test]
fn every_daemon_serves_its_metrics_and_the_rm_hands_prometheus_the_targets() {
    let tmp = work_dir("yard-metrics");
    let c = cluster(&tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);
    // The targets say where masters listen: only the scrape token (or an admin) reads them.
    let open = reqwest::blocking::get(format!("{}/ws/v1/yard/prometheus/targets", c.url));
    assert_eq!(open.unwrap().status().as_u16(), 401);
    let scraper = scrape_token(&c.url);

    // The nodemanagers are targets from the start.
    let nms = targets_of(&targets(&c.url, &scraper), "nodemanager");
    assert_eq!(nms.len(), 3, "{nms:?}");
    for nm in &c.nms {
        assert!(nms.contains(&nm.addr.to_string()), "{} in {nms:?}", nm.addr);
    }

    // Maps of at least 0.4 s each: the master lives long enough to be scraped.
    let (id, location) = submit_grep(&http, &c.url, "metrics-grep", 0.4);

    // While it runs: its master is a target, and its scrape shows the policy at work.
    let mut master: Option<(String, String, Vec<Sample>)> = None;
    let done = watch_job(&http, &c.url, &location, &tmp, &id, |_| {
        let listed = targets(&c.url, &scraper);
        let finished = finished_masters(&listed);
        if let Some(target) = targets_of(&listed, "mr_master")
            .into_iter()
            .find(|t| finished.iter().all(|f| &f.0 != t))
        {
            // The master may end between the listing and the scrape: only an answer counts.
            if let Some((text, samples)) = scrape_if_there(&target, "/metrics", &scraper) {
                let launched = value_of(
                    &samples,
                    "yard_mr_master_decisions_total",
                    &[("policy", "dart"), ("decision", "launch")],
                );
                if launched.is_some_and(|n| n > 0.0) {
                    master = Some((target, text, samples));
                }
            }
        }
    });
    assert_eq!(
        done["finalStatus"],
        "SUCCEEDED",
        "{done}\n{}",
        master_log(&tmp, &id)
    );
    let (master_target, master_text, m) = master.expect("the master was scraped while its job ran");
    assert_eq!(
        value_of(
            &m,
            "yard_mr_master_info",
            &[("policy", "dart"), ("phase", "job")]
        ),
        Some(1.0),
        "{master_text}"
    );
    assert!(value_of(&m, "yard_mr_master_deadline_seconds", &[("policy", "dart")]).unwrap() > 0.0);
    let maps: f64 = m
        .iter()
        .filter(|s| s.name == "yard_mr_master_maps" && s.labels["policy"] == "dart")
        .map(|s| s.value)
        .sum();
    assert!(maps >= 8.0, "1 MiB in 128 KiB blocks: {maps}");
    // A finished master's final figures stay a target for a while, at the rm under the
    // master's own instance, so its series go on once its process is gone.
    let listed = targets(&c.url, &scraper);
    let rm_addr = c.url.trim_start_matches("http://");
    let finished = finished_masters(&listed);
    assert_eq!(finished.len(), 1, "{listed}");
    let (at, instance, path) = &finished[0];
    assert_eq!(
        (at.as_str(), instance),
        (rm_addr, &master_target),
        "{listed}"
    );
    let (_, last) = scrape_if_there(at, path, &scraper).expect("the rm serves them");
    assert_eq!(
        value_of(
            &last,
            "yard_mr_master_info",
            &[("policy", "dart"), ("phase", "job")]
        ),
        Some(1.0)
    );
    let done_maps: f64 = last
        .iter()
        .filter(|s| {
            s.name == "yard_mr_master_maps" && s.labels.get("state").is_some_and(|st| st == "done")
        })
        .map(|s| s.value)
        .sum();
    assert!(
        done_maps >= 1.0,
        "the job's last figures: {done_maps} maps done"
    );
    // Its two reducers fetched the maps' matching lines: the shuffle counter is there, and
    // counted bytes (a missing counter is a failure, not a zero).
    let shuffled = value_of(&last, "yard_mr_master_shuffle_bytes_total", &[]);
    assert!(
        shuffled.is_some_and(|b| b > 0.0),
        "the job's last figures: shuffle bytes {shuffled:?}"
    );
    // Nothing of a master without a credential, the live one's or the kept.
    let open = reqwest::blocking::get(format!("http://{at}{path}")).unwrap();
    assert_eq!(open.status().as_u16(), 401);

    // The rm saw the heartbeats, the allocations and the job's answer.
    let rm = c.url.trim_start_matches("http://").to_owned();
    let (rm_text, r) = scrape(&rm, "rm");
    assert!(value_of(&r, "yard_rm_node_heartbeats_total", &[]).unwrap() > 0.0);
    assert!(value_of(&r, "yard_rm_allocate_duration_seconds_count", &[]).unwrap() > 0.0);
    assert_eq!(
        value_of(&r, "yard_rm_nodes", &[("state", "running")]),
        Some(3.0)
    );
    assert!(value_of(&r, "yard_rm_apps", &[("state", "finished")]).unwrap() >= 1.0);
    assert_eq!(
        value_of(
            &r,
            "yard_rm_deadline_outcomes_total",
            &[("policy", "dart"), ("outcome", "met")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value_of(
            &r,
            "yard_rm_processed_fraction_ratio_count",
            &[("policy", "dart")]
        ),
        Some(1.0)
    );
    assert!(
        value_of(
            &r,
            "yard_rm_containers_completed_total",
            &[("end", "exited")]
        )
        .unwrap()
            >= 1.0
    );

    // Each nodemanager heartbeats, and together they ran the master and its tasks.
    let mut scrapes = vec![
        ("the rm".to_owned(), rm_text),
        (format!("the master at {master_target}"), master_text),
    ];
    let mut launched = 0.0;
    for nm in &nms {
        let (text, s) = scrape(nm, "nodemanager");
        assert!(value_of(&s, "yard_nodemanager_heartbeats_total", &[]).unwrap() > 0.0);
        assert!(value_of(&s, "yard_nodemanager_memory_total_bytes", &[]).unwrap() > 0.0);
        launched += value_of(&s, "yard_nodemanager_containers_launched_total", &[]).unwrap();
        scrapes.push((format!("the nodemanager at {nm}"), text));
    }
    assert!(launched >= 2.0, "a master and its tasks: {launched}");
    promtool_check(&scrapes);
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
