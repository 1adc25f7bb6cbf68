//! The Grafana dashboards in `grafana/` against a live cluster (issue 19 item 2): every panel
//! query parses, names only metrics the rm, a nodemanager and a MapReduce master export, and
//! returns data from a real Prometheus — the shipped `grafana/prometheus.yml`, pointed at the
//! test's rm — that scraped the cluster while a Dart job ran.

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
/// every second. `None` when it is not installed (CI installs it: there, a failure).
fn prometheus(rm_addr: &str, dir: &Path) -> Option<Prometheus> {
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
    let check = Command::new("promtool")
        .args(["check", "config"])
        .arg(grafana().join("prometheus.yml"))
        .output()
        .expect("promtool comes with prometheus");
    assert!(
        check.status.success(),
        "promtool check config: {}",
        String::from_utf8_lossy(&check.stdout) + String::from_utf8_lossy(&check.stderr)
    );
    let shipped = std::fs::read_to_string(grafana().join("prometheus.yml")).unwrap();
    assert!(shipped.contains("127.0.0.1:8088"), "{shipped}");
    let config = shipped
        .replace("127.0.0.1:8088", rm_addr)
        .replace(": 5s", ": 1s");
    let config_file = dir.join("prometheus.yml");
    std::fs::write(&config_file, config).unwrap();
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

#[test]
fn every_dashboard_query_names_exported_metrics_and_returns_data_from_prometheus() {
    let tmp = work_dir("yard-dashboards");
    let c = cluster(&tmp);
    let prom = prometheus(&c.rm.addr, &tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);

    // A Dart job long enough for Prometheus to find and scrape its master while it runs (the
    // discovery manager passes new targets on every 5 s; maps of at least 3 s).
    let job = json!({"app": "grep", "input": "books", "params": {"pattern": "e"},
                     "policy": "dart", "reduces": 2, "mapMinSeconds": 3.0});
    let submitted: Value = http
        .post(format!("{}/ws/v1/yard/mapreduce/jobs", c.url))
        .json(&json!({"job": job, "name": "dashboards", "deadlineInMs": 600_000}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = submitted["job"]["id"].as_str().unwrap().to_owned();
    let targets = format!("{}/ws/v1/yard/prometheus/targets", c.url);
    let master = eventually_for(
        "the master among the scrape targets",
        Duration::from_secs(120),
        || {
            get(&targets).as_array()?.iter().find_map(|group| {
                (group["labels"]["yard_component"] == "mr_master")
                    .then(|| group["targets"][0].as_str().map(str::to_owned))
                    .flatten()
            })
        },
    );
    // What the master exports while it runs (its estimate once it has one), scraped until
    // its job answers.
    let mut names = BTreeSet::new();
    let mut scraped = false;
    eventually_for("the job's answer", Duration::from_secs(300), || {
        if let Ok(text) = reqwest::blocking::get(format!("http://{master}/metrics"))
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.text())
        {
            names.extend(exported(&text));
            scraped = true;
        }
        let v = get(&format!("{}/ws/v1/yard/mapreduce/jobs/{id}", c.url));
        matches!(
            v["job"]["state"].as_str(),
            Some("FINISHED" | "FAILED" | "KILLED")
        )
        .then_some(())
    });
    assert!(scraped, "the master was scraped while it ran");
    if let Some(p) = &prom {
        assert!(
            !query(p, "yard_mr_master_info").is_empty(),
            "Prometheus scraped the master while it ran"
        );
    }
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
