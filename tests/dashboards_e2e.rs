//! The Grafana dashboards in `grafana/` against a live cluster (issue 19 item 2): every panel
//! query parses, names only metrics the rm, a nodemanager and a MapReduce master export, and
//! returns data from a real Prometheus — the shipped `grafana/prometheus.yml`, pointed at the
//! test's rm with the cluster's scrape token — that scraped a cluster running only short jobs
//! (issue 28 item 4): their masters are seen through the final figures the rm keeps.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use promql_parser::parser::Expr;
use promql_parser::util::{ExprVisitor, walk_expr};
use serde_json::{Value, json};

mod support;
use support::*;

fn grafana() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("grafana")
}

/// Every dashboard: its file name and JSON.
fn dashboards() -> Vec<(String, Value)> {
    let mut all: Vec<(String, Value)> = std::fs::read_dir(grafana().join("dashboards"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let json = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{name}: {err}"));
            (name, json)
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// Every panel query: `dashboard / panel`, and the PromQL.
fn queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, d) in dashboards() {
        for panel in d["panels"].as_array().unwrap() {
            for target in panel["targets"].as_array().unwrap() {
                out.push((
                    format!("{name} / {}", panel["title"].as_str().unwrap()),
                    target["expr"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    out
}

/// The metric names a query reads.
fn metric_names(expr: &Expr) -> BTreeSet<String> {
    struct Names(BTreeSet<String>);
    impl ExprVisitor for Names {
        type Error = ();
        fn pre_visit(&mut self, expr: &Expr) -> Result<bool, ()> {
            let selector = match expr {
                Expr::VectorSelector(vs) => Some(vs),
                Expr::MatrixSelector(ms) => Some(&ms.vs),
                _ => None,
            };
            if let Some(name) = selector.and_then(|vs| vs.name.clone()) {
                self.0.insert(name);
            }
            Ok(true)
        }
    }
    let mut names = Names(BTreeSet::new());
    walk_expr(&mut names, expr).unwrap();
    names.0
}

#[test]
fn dashboards_have_stable_uids_a_datasource_variable_and_queries_that_parse() {
    let all = dashboards();
    assert_eq!(all.len(), 4, "cluster, nodes, deadlines, scheduler");
    let uids: BTreeSet<&str> = all
        .iter()
        .map(|(_, d)| d["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        uids,
        BTreeSet::from([
            "yard-cluster",
            "yard-nodes",
            "yard-deadlines",
            "yard-scheduler"
        ])
    );
    for (name, d) in &all {
        let variables = d["templating"]["list"].as_array().unwrap();
        assert!(
            variables
                .iter()
                .any(|v| v["name"] == "datasource" && v["type"] == "datasource"),
            "{name}: a datasource variable"
        );
        for panel in d["panels"].as_array().unwrap() {
            for ds in std::iter::once(&panel["datasource"]).chain(
                panel["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| &t["datasource"]),
            ) {
                assert_eq!(ds["uid"], "${datasource}", "{name}: {}", panel["title"]);
            }
        }
    }
    for (panel, query) in queries() {
        let expr = promql_parser::parser::parse(&query)
            .unwrap_or_else(|err| panic!("{panel}: {query}: {err}"));
        let names = metric_names(&expr);
        assert!(!names.is_empty(), "{panel}: {query} reads no metric");
        for name in names {
            assert!(name.starts_with("yard_"), "{panel}: {name}");
        }
    }
    // A typo in PromQL is caught, not waved through.
    assert!(promql_parser::parser::parse("sum by (state (yard_rm_apps)").is_err());
}

/// Metric names in a text-format scrape (a histogram's `_bucket`, `_sum` and `_count` too).
fn exported(scrape: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in scrape.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
                continue;
            };
            names.insert(name.to_owned());
            if kind == "histogram" || kind == "summary" {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"));
                }
            }
        }
    }
    names
}

fn scrape(target: &str) -> String {
    reqwest::blocking::get(format!("http://{target}/metrics"))
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.text())
        .unwrap_or_else(|e| panic!("scraping {target}: {e}"))
}

/// A Prometheus server, stopped when dropped.
struct Prometheus {
    child: Child,
    url: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's `prometheus` with the shipped config, pointed at the rm at `rm_addr` and scraping
/// every second, with the scrape token `scraper` in `scrape-token` beside the config (where
/// the shipped config reads it). `None` when it is not installed (CI installs it: there, a
/// failure).
fn prometheus(rm_addr: &str, scraper: &str, dir: &Path) -> Option<Prometheus> {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "prometheus is not installed; .ci/run installs Debian's package"
        );
        eprintln!(
            "SKIPPED: the Prometheus half (no `prometheus` on PATH; apt-get install prometheus)"
        );
        return None;
    }
    let shipped = std::fs::read_to_string(grafana().join("prometheus.yml")).unwrap();
    assert!(shipped.contains("127.0.0.1:8088"), "{shipped}");
    // The targets list and the masters take the scrape token, in both places it is needed.
    assert_eq!(
        shipped.matches("credentials_file: scrape-token").count(),
        2,
        "{shipped}"
    );
    let config = shipped
        .replace("127.0.0.1:8088", rm_addr)
        .replace(": 5s", ": 1s");
    let config_file = dir.join("prometheus.yml");
    std::fs::write(&config_file, config).unwrap();
    std::fs::write(dir.join("scrape-token"), format!("{scraper}\n")).unwrap();
    let check = Command::new("promtool")
        .args(["check", "config"])
        .arg(&config_file)
        .output()
        .expect("promtool comes with prometheus");
    assert!(
        check.status.success(),
        "promtool check config: {}",
        String::from_utf8_lossy(&check.stdout) + String::from_utf8_lossy(&check.stderr)
    );
    // A free port, released for Prometheus to take.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config_file.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus starts");
    let p = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    eventually("prometheus ready", || {
        reqwest::blocking::get(format!("{}/-/ready", p.url))
            .is_ok_and(|r| r.status().is_success())
            .then_some(())
    });
    Some(p)
}

/// An instant query's result vector (an error is a failure: the query is malformed for
/// Prometheus itself).
fn query(p: &Prometheus, promql: &str) -> Vec<Value> {
    let url =
        reqwest::Url::parse_with_params(&format!("{}/api/v1/query", p.url), [("query", promql)])
            .unwrap();
    let reply: Value = reqwest::blocking::get(url).unwrap().json().unwrap();
    assert_eq!(reply["status"], "success", "{promql}: {reply}");
    reply["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The final figures the rm keeps of every finished master, as text, read as Prometheus does
/// (the targets list, then each target's `__metrics_path__` at the rm, with the scrape token).
fn final_figures(rm_url: &str, scraper: &str) -> Vec<String> {
    let targets = get_as(&format!("{rm_url}/ws/v1/yard/prometheus/targets"), scraper);
    targets
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["labels"]["__metrics_path__"].as_str())
        .filter_map(|path| {
            reqwest::blocking::Client::new()
                .get(format!("{rm_url}{path}"))
                .bearer_auth(scraper)
                .send()
                .and_then(|r| r.error_for_status())
                .and_then(|r| r.text())
                .ok()
        })
        .collect()
}

#[test]
fn every_dashboard_query_names_exported_metrics_and_returns_data_from_prometheus() {
    let tmp = work_dir("yard-dashboards");
    let c = cluster(&tmp);
    let scraper = scrape_token(&c.url);
    let prom = prometheus(&c.rm.addr, &scraper, &tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);

    // Only short jobs: a Dart grep over 1 MiB (a few seconds, its maps as fast as they go),
    // whose master may well be gone before Prometheus's discovery (every second here, 5 s as
    // shipped) has handed it over; the rm keeps its final figures in its place.
    let job = json!({"app": "grep", "input": "books", "params": {"pattern": "e"},
                     "policy": "dart", "reduces": 2});
    let submitted: Value = http
        .post(format!("{}/ws/v1/yard/mapreduce/jobs", c.url))
        .json(&json!({"job": job, "name": "dashboards", "deadlineInMs": 600_000}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = submitted["job"]["id"].as_str().unwrap().to_owned();
    eventually_for("the job's answer", Duration::from_secs(300), || {
        let v = get(&format!("{}/ws/v1/yard/mapreduce/jobs/{id}", c.url));
        matches!(
            v["job"]["state"].as_str(),
            Some("FINISHED" | "FAILED" | "KILLED")
        )
        .then_some(())
    });
    // What its master exported, as the rm keeps it.
    let mut names = BTreeSet::new();
    let kept = final_figures(&c.url, &scraper);
    assert_eq!(kept.len(), 1, "the finished master's final figures");
    names.extend(exported(&kept[0]));
    // `yard replay` on the same cluster (issue 19: the dashboards show a cluster running it):
    // a trace's first three jobs, at a six-hundredth of their time, each answered.
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv"
    );
    let (code, out, err) = yard(&[
        "replay",
        "--trace",
        trace,
        "--jobs",
        "3",
        "--time-scale",
        "1/600",
        "--rm",
        &c.url,
        "--json",
    ]);
    assert_eq!(code, 0, "yard replay: {err}");
    let replayed: Value = serde_json::from_str(&out).expect(&out);
    assert_eq!(replayed["rows"][0]["unanswered"], 0, "{replayed}");
    // What the rm and a nodemanager export once the jobs have answered (the rm's outcome and
    // processed-fraction series start with the first answer).
    names.extend(exported(&scrape(&c.rm.addr)));
    names.extend(exported(&scrape(&c.nms[0].addr)));
    for (panel, promql) in queries() {
        let expr = promql_parser::parser::parse(&promql).unwrap();
        for name in metric_names(&expr) {
            assert!(names.contains(&name), "{panel}: {name} is not exported");
        }
    }
    let Some(p) = prom else {
        return;
    };
    // Every panel has data: the rm's deadline outcome, the nodes, the master's last values.
    for (panel, promql) in queries() {
        eventually_for(
            &format!("{panel}: {promql}"),
            Duration::from_secs(60),
            || (!query(&p, &promql).is_empty()).then_some(()),
        );
    }
    // The Dart job's master reached Prometheus through the final figures the rm keeps, and
    // every master target Prometheus still has is up.
    let kept_at = format!("{}/ws/v1/yard/apps/{id}/metrics", c.url);
    eventually_for(
        "the master's final figures scraped at the rm",
        Duration::from_secs(60),
        || {
            let targets: Value = reqwest::blocking::get(format!("{}/api/v1/targets", p.url))
                .ok()?
                .json()
                .ok()?;
            targets["data"]["activeTargets"]
                .as_array()?
                .iter()
                .any(|t| t["scrapeUrl"] == kept_at.as_str() && t["health"] == "up")
                .then_some(())
        },
    );
    eventually_for("every master target up", Duration::from_secs(60), || {
        let up = query(&p, "min(up{yard_component=\"mr_master\"})");
        (up.first()?["value"][1] == "1").then_some(())
    });
    // Every answer reached Prometheus: the Dart job's (met) and the replay's three.
    eventually_for(
        "four outcomes in Prometheus",
        Duration::from_secs(60),
        || {
            let all = query(&p, "sum(yard_rm_deadline_outcomes_total)");
            (all.first()?["value"][1] == "4").then_some(())
        },
    );
    let met = query(&p, "sum(yard_rm_deadline_outcomes_total{outcome=\"met\"})");
    let met: u32 = met[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert!(met >= 1, "the Dart job met its deadline: {met}");
    drop(p);
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
