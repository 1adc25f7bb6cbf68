//! The rm's web UI in headless Chromium against live daemons on 127.0.0.1: first an rm with
//! no nodes and no applications (the pages say so, and ask for a token when given none or a
//! forged one), then a cluster with the overload classifier on that runs a Dart job to its
//! answer beside an application without a deadline and one that answers after its deadline.
//! The rendered pages show the nodes with their verdicts, the job with its deadline, processed
//! fraction, maps and the answer's 95 % interval, and the estimate-against-deadline chart;
//! each application's deadline outcome as a badge beside its state (the late one FINISHED /
//! SUCCEEDED, missed, and not green); the applications filtered and paged on the rm (a
//! filter and a page given in the address); an attempt's and a container's pages with their
//! logs; the overview's chart of the last hour from the rm's history; a stopped node LOST,
//! then forgotten after its retention (off the nodes page and `yard data ls`). Screenshots
//! of each page go to `target/ui-artifacts/` (their paths are printed).
//!
//! Without Chromium (`chromium`, or the program `YARD_CHROMIUM` names) the test says so
//! loudly and passes, except under CI (`CI=true`), where it fails: `.ci/run` installs
//! Debian's `chromium`.

mod support;

use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use support::*;

/// Why Chromium cannot run here, to skip (locally) or fail (in CI) with.
fn unavailable(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("headless Chromium cannot run in CI: {why}");
    }
    // Straight to stderr, past the test harness's capture: a skip is seen.
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED: ui_e2e: {why}. Install Chromium (apt-get install chromium) to run it. ***\n"
    );
}

/// The browser: a program that answers `--version`.
fn chromium() -> Result<String, String> {
    let candidates: Vec<String> = match std::env::var("YARD_CHROMIUM") {
        Ok(p) => vec![p],
        Err(_) => ["chromium", "chromium-browser", "google-chrome"]
            .map(String::from)
            .to_vec(),
    };
    for program in &candidates {
        if let Ok(out) = Command::new(program).arg("--version").output()
            && out.status.success()
        {
            return Ok(program.clone());
        }
    }
    Err(format!("none of {candidates:?} runs"))
}

/// Headless Chromium with a profile of its own, run once per page.
struct Browser {
    program: String,
    scratch: PathBuf,
    runs: u32,
}

impl Browser {
    /// Chromium on `url` with `extra` flags, for at most 90 s; its stdout.
    fn run(&mut self, url: &str, extra: &[String]) -> String {
        self.runs += 1;
        let profile = self.scratch.join(format!("profile-{}", self.runs));
        let out_path = self.scratch.join(format!("out-{}.html", self.runs));
        let mut child = Command::new(&self.program)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                // The page redraws every 3 s: this lets it load and draw at least once.
                "--virtual-time-budget=8000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).unwrap())
            .stderr(Stdio::null())
            // Its own process group: a run that hangs is stopped with all its helpers.
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        let give_up = Instant::now() + Duration::from_secs(90);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if Instant::now() > give_up {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                panic!("chromium did not finish with {url} in 90 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::read_to_string(&out_path).unwrap_or_default()
    }

    /// The page's DOM once its script has drawn it, polled until `ready` holds (60 s at most).
    fn dom(&mut self, url: &str, ready: impl Fn(&str) -> bool) -> String {
        let give_up = Instant::now() + Duration::from_secs(60);
        loop {
            let dom = self.run(url, &["--dump-dom".into()]);
            if ready(&dom) {
                return dom;
            }
            assert!(
                Instant::now() < give_up,
                "{url} never rendered as expected:\n{dom}"
            );
        }
    }

    /// A screenshot of `url` at 1400×1100, saved as `path`; checked to be that PNG.
    fn screenshot(&mut self, url: &str, path: &Path) {
        let _ = std::fs::remove_file(path);
        self.run(
            url,
            &[
                format!("--screenshot={}", path.display()),
                "--window-size=1400,1100".into(),
            ],
        );
        let png = std::fs::read(path).unwrap_or_else(|e| panic!("no screenshot {path:?}: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{path:?} is a PNG");
        let (w, h) = (
            u32::from_be_bytes(png[16..20].try_into().unwrap()),
            u32::from_be_bytes(png[20..24].try_into().unwrap()),
        );
        assert_eq!((w, h), (1400, 1100), "{path:?}");
        println!("ui screenshot: {}", path.display());
    }
}

/// Where the screenshots go: `target/ui-artifacts/`.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("ui-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A number as the page writes it (JavaScript's `String(x)` for a whole one, else one decimal).
fn js_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.1}")
    }
}

/// A moment as the page's `<time datetime>` carries it (JavaScript's `toISOString`).
fn iso(ms: i64) -> String {
    let t = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap());
    humantime::format_rfc3339_millis(t).to_string()
}

/// The element whose opening tag contains `marker`, up to its closing `</tag>`.
fn element<'a>(dom: &'a str, marker: &str, tag: &str) -> &'a str {
    let start = dom
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker} in\n{dom}"));
    let start = dom[..=start].rfind('<').unwrap();
    let end = dom[start..]
        .find(&format!("</{tag}>"))
        .map_or(dom.len(), |e| start + e);
    &dom[start..end]
}

/// `GET url` with `http`, as JSON.
fn get_as(http: &reqwest::blocking::Client, url: &str) -> Value {
    http.get(url).send().unwrap().json().unwrap()
}

#[test]
fn the_rm_web_ui_shows_a_dart_job_its_deadline_estimate_and_answer_in_headless_chromium() {
    let program = match chromium() {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    let tmp = work_dir("yard-ui-e2e");
    let mut browser = Browser {
        program,
        scratch: tmp.join("chromium"),
        runs: 0,
    };
    std::fs::create_dir_all(&browser.scratch).unwrap();

    // An rm with nothing on it: every view says so, and none breaks.
    {
        let empty = tmp.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let rm = rm_in(&empty, &[]);
        let url = format!("http://{}", rm.addr);
        let token = admin_token(&url).expect("the rm left its local credentials");
        // No token: the page asks for one.
        let dom = browser.dom(&format!("{url}/ui"), |d| d.contains("Sign in with a token"));
        assert!(dom.contains("yard auth token"), "{dom}");
        // A forged one: the rm refuses it and the page says so.
        let dom = browser.dom(&format!("{url}/ui#/nodes?token=yard.0000.0000"), |d| {
            d.contains("The rm refused the token")
        });
        assert!(dom.contains("401"), "{dom}");
        let dom = browser.dom(&format!("{url}/ui#/nodes?token={token}"), |d| {
            d.contains("No nodes have registered")
        });
        assert!(!dom.contains(&token), "the page shows no token: {dom}");
        browser.dom(&format!("{url}/ui#/apps?token={token}"), |d| {
            d.contains("No applications yet.")
        });
        let dom = browser.dom(&format!("{url}/ui#token={token}"), |d| {
            d.contains("id=\"policy\"")
        });
        assert!(dom.contains("No applications yet."), "{dom}");
        assert!(dom.contains("no nodes"), "{dom}");
    }

    // A cluster that learns which nodes are overloaded, a Dart job with a deadline, and an
    // application without one.
    // A lost node is forgotten 5 s after it was lost (the end of the test stops one).
    let mut c = cluster_with(
        &tmp,
        &[
            "--overload-classifier",
            "on",
            "--lost-node-retention-ms",
            "5000",
        ],
    );
    let token = admin_token(&c.url).unwrap();
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);
    let plain = submit_command(&c.url, "true");
    let _plain_processes = ProcessesOf::app(&plain);
    let (id, _) = submit_grep(&http, &c.url, "ui-grep", 0.2);
    let _processes = ProcessesOf::app(&id);
    // An application that answers after its deadline (the test stands in for its master once
    // the rm calls it missed) and finishes SUCCEEDED: missed, and not drawn green.
    let (code, late, err) = yard(&[
        "submit",
        "--rm",
        &c.url,
        "--command",
        "exec sleep 60",
        "--deadline",
        "1s",
    ]);
    assert_eq!(code, 0, "{err}");
    let late = late.trim().to_owned();
    let _late_processes = ProcessesOf::app(&late);
    eventually_for("the late one missed", Duration::from_secs(60), || {
        let a = get_as(&http, &format!("{}/ws/v1/cluster/apps/{late}", c.url));
        (a["app"]["deadlineOutcome"] == "missed").then_some(())
    });
    finish_as_master(&tmp, &c.url, &late, Some(1.0), true);

    // Its page while it runs (or as soon as it is known): the id, the deadline, the refresh.
    let page = format!("{}/ui#/apps/{id}?token={token}", c.url);
    let dom = browser.dom(&page, |d| d.contains("class=\"app-id\""));
    assert!(dom.contains(&id), "{dom}");

    let done = eventually_for("the job's answer", Duration::from_secs(300), || {
        let v: Value = http
            .get(format!("{}{JOBS}/{id}", c.url))
            .send()
            .ok()?
            .json()
            .ok()?;
        let state = v["job"]["state"].as_str()?.to_owned();
        assert!(
            !matches!(state.as_str(), "FAILED" | "KILLED"),
            "{v}\n{}",
            master_log(&tmp, &id)
        );
        (state == "FINISHED").then(|| v["job"].clone())
    });
    assert_eq!(done["finalStatus"], "SUCCEEDED", "{done}");
    let deadline_ms = done["deadlineMs"].as_i64().unwrap();
    let fraction = done["processedFraction"].as_f64().unwrap();
    let matching = &done["answer"]["matchingLines"];
    let (low, high) = (
        matching["low"].as_f64().unwrap(),
        matching["high"].as_f64().unwrap(),
    );
    let progress = &done["progress"];

    // The job's page: deadline, processed fraction, maps, the answer with its interval, the
    // chart of the estimate against the deadline.
    let dom = browser.dom(&page, |d| d.contains("data-key=\"matchingLines\""));
    assert!(dom.contains(&id), "{dom}");
    assert!(
        dom.contains(&format!("datetime=\"{}\"", iso(deadline_ms))),
        "the deadline {deadline_ms} ({}): {dom}",
        iso(deadline_ms)
    );
    let shown = element(&dom, "id=\"processed-fraction\"", "span");
    assert!(
        shown.contains(&format!("{:.1} %", fraction * 100.0)),
        "{shown}"
    );
    let row = element(&dom, "data-key=\"matchingLines\"", "tr");
    assert!(
        row.contains(&format!("[{}, {}]", js_num(low), js_num(high))),
        "the interval [{low}, {high}] in {row}"
    );
    let maps = element(&dom, "id=\"maps\"", "span");
    assert!(
        maps.contains(&format!(
            "{} / {} of {}",
            progress["mapsDone"], progress["mapsLaunched"], progress["maps"]
        )),
        "{maps} against {progress}"
    );
    let chart = element(&dom, "<svg", "svg");
    assert!(chart.contains("class=\"estimate\""), "{chart}");
    assert!(chart.contains("class=\"deadline\""), "{chart}");
    assert!(chart.contains("deadline 600 s"), "{chart}");
    assert!(chart.contains("class=\"estimate-point\""), "{chart}");
    // It ended: its phase no longer reads as running, nor its map phase as just closed.
    assert!(!dom.contains("<dd>running"), "{dom}");
    assert!(!dom.contains("map phase closed"), "{dom}");
    let dir = artifacts();
    browser.screenshot(&page, &dir.join("ui-application.png"));

    // Its containers' logs, listed on its page and each one's page linked: the master's
    // stderr shows what the master said.
    let listing = get_as(&http, &format!("{}/ws/v1/yard/apps/{id}/logs", c.url));
    let master = listing["appLogs"]["files"]
        .as_array()
        .and_then(|f| {
            f.iter()
                .find(|f| f["master"] == true && f["file"] == "stderr")
        })
        .and_then(|f| f["containerId"].as_str())
        .unwrap_or_else(|| panic!("the master's stderr in {listing}"))
        .to_owned();
    let dom = browser.dom(&page, |d| d.contains("data-log="));
    let row = element(&dom, &format!("data-log=\"{master}/stderr\""), "tr");
    let href = format!("#/apps/{id}/logs/{master}/stderr");
    assert!(row.contains(&href), "{row}");
    let dom = browser.dom(&format!("{}/ui{href}?token={token}", c.url), |d| {
        d.contains("id=\"log-text\"")
    });
    let text = element(&dom, "id=\"log-text\"", "pre");
    assert!(text.contains("master: registered"), "{text}");

    // Its attempt, linked from its page: the attempt's master container and every log of
    // the attempt's containers; the master's (ended) container's own page with its logs.
    let attempt_href = format!("#/apps/{id}/attempts/1");
    let dom = browser.dom(&page, |d| d.contains("data-attempt=\"1\""));
    assert!(
        element(&dom, "data-attempt=\"1\"", "tr").contains(&format!("href=\"{attempt_href}\"")),
        "{dom}"
    );
    let attempt_page = format!("{}/ui{attempt_href}?token={token}", c.url);
    let dom = browser.dom(&attempt_page, |d| {
        d.contains("class=\"attempt-id\"") && d.contains("data-log=")
    });
    let attempt = get_as(
        &http,
        &format!("{}/ws/v1/cluster/apps/{id}/appattempts/1", c.url),
    );
    let attempt_id = attempt["appAttempt"]["appAttemptId"].as_str().unwrap();
    assert!(
        element(&dom, "class=\"attempt-id\"", "h1").contains(attempt_id),
        "{dom}"
    );
    let container_href = format!("{attempt_href}/containers/{master}");
    assert!(dom.contains(&format!("href=\"{container_href}\"")), "{dom}");
    let row = element(&dom, &format!("data-log=\"{master}/stderr\""), "tr");
    assert!(row.contains(&href), "{row}");
    browser.screenshot(&attempt_page, &dir.join("ui-attempt.png"));
    let container_page = format!("{}/ui{container_href}?token={token}", c.url);
    let dom = browser.dom(&container_page, |d| d.contains("class=\"container-id\""));
    assert!(
        element(&dom, "class=\"container-id\"", "h1").contains("ENDED"),
        "the master's container ended with its job: {dom}"
    );
    let row = element(&dom, &format!("data-log=\"{master}/stderr\""), "tr");
    assert!(row.contains(&href), "{row}");
    browser.screenshot(&container_page, &dir.join("ui-container.png"));

    // The applications: the job with its deadline and processed fraction, the other without.
    let dom = browser.dom(&format!("{}/ui#/apps?token={token}", c.url), |d| {
        [&plain, &id, &late]
            .iter()
            .all(|a| d.contains(&format!("data-app=\"{a}\"")))
    });
    let row = element(&dom, &format!("data-app=\"{id}\""), "tr");
    assert!(
        row.contains("outcome-met"),
        "the Dart job met its deadline: {row}"
    );
    assert!(row.contains(&iso(deadline_ms)), "{row}");
    assert!(row.contains(&format!("{:.1} %", fraction * 100.0)), "{row}");
    assert!(row.contains("ui-grep"), "{row}");
    // Ended: no last estimate against the deadline ("9m 49s early"), its outcome says it.
    assert!(
        !row.contains(" early</td>") && !row.contains(" late</td>"),
        "{row}"
    );
    let row = element(&dom, &format!("data-app=\"{plain}\""), "tr");
    assert!(row.contains("no deadline"), "{row}");
    assert!(
        !row.contains("class=\"outcome "),
        "no deadline, no outcome: {row}"
    );
    // The late one: FINISHED / SUCCEEDED as YARN says, a missed badge beside it, not green.
    let row = element(&dom, &format!("data-app=\"{late}\""), "tr");
    assert!(row.contains("FINISHED / SUCCEEDED"), "{row}");
    assert!(
        element(row, "class=\"outcome ", "span").contains("deadline missed"),
        "{row}"
    );
    assert!(
        row.contains("class=\"state state-finished state-unmet\""),
        "{row}"
    );
    let css = reqwest::blocking::get(format!("{}/ui/style.css", c.url))
        .unwrap()
        .text()
        .unwrap();
    let unmet = css
        .lines()
        .find(|l| l.starts_with(".state.state-unmet"))
        .unwrap_or_else(|| panic!("{css}"));
    assert!(
        !unmet.contains("--good"),
        "a missed deadline is not green: {unmet}"
    );
    let dom = browser.dom(&format!("{}/ui#/apps/{late}?token={token}", c.url), |d| {
        d.contains("class=\"app-id\"")
    });
    let title = element(&dom, "class=\"app-id\"", "h1");
    assert!(
        title.contains("outcome-missed") && title.contains("state-unmet"),
        "{title}"
    );
    // Its own page: no deadline, no estimate or answer, its diagnostics.
    let dom = browser.dom(&format!("{}/ui#/apps/{plain}?token={token}", c.url), |d| {
        d.contains("class=\"app-id\"")
    });
    assert!(dom.contains("no deadline"), "{dom}");
    assert!(dom.contains("Not a MapReduce job"), "{dom}");
    assert!(dom.contains("Diagnostics"), "{dom}");

    // The nodes: each with its load and the classifier's verdict as the API gives it.
    let nodes = get(&format!("{}/ws/v1/cluster/nodes", c.url));
    let nodes = nodes["nodes"]["node"].as_array().unwrap().clone();
    assert_eq!(nodes.len(), 3);
    let nodes_page = format!("{}/ui#/nodes?token={token}", c.url);
    // Drawn once every node's row is there with a load sample.
    let dom = browser.dom(&nodes_page, |d| {
        nodes
            .iter()
            .all(|n| d.contains(&format!("data-node=\"{}\"", n["id"].as_str().unwrap())))
            && d.matches(" cores").count() >= nodes.len()
    });
    for n in &nodes {
        let row = element(
            &dom,
            &format!("data-node=\"{}\"", n["id"].as_str().unwrap()),
            "tr",
        );
        assert!(row.contains("RUNNING"), "{row}");
        assert_eq!(n["overload"]["classifier"], "on", "{n}");
        let verdict = n["overload"]["verdict"].as_str().unwrap();
        assert!(
            ["good", "bad", "unknown"]
                .iter()
                .any(|v| row.contains(&format!("verdict-{v}"))),
            "{row} (the API said {verdict})"
        );
        assert!(row.contains("P(good)") && row.contains("good "), "{row}");
        assert!(
            row.contains(" cores"),
            "a load per core from a sample: {row}"
        );
    }
    browser.screenshot(&nodes_page, &dir.join("ui-nodes.png"));

    // One node's page: its containers, each with its application and its logs linked.
    let sleeper = submit_command(&c.url, "exec sleep 120");
    let _sleeper_processes = ProcessesOf::app(&sleeper);
    let (node, container) = eventually_for(
        "the sleeper's container on a node",
        Duration::from_secs(60),
        || {
            nodes.iter().find_map(|n| {
                let id = n["id"].as_str().unwrap();
                let one = get_as(&http, &format!("{}/ws/v1/cluster/nodes/{id}", c.url));
                one["node"]["yardContainers"]
                    .as_array()?
                    .iter()
                    .find(|k| k["applicationId"] == sleeper.as_str())
                    .map(|k| (id.to_owned(), k["containerId"].as_str().unwrap().to_owned()))
            })
        },
    );
    let node_page = format!("{}/ui#/nodes/{node}?token={token}", c.url);
    let dom = browser.dom(&node_page, |d| {
        d.contains(&format!("data-container=\"{container}\""))
    });
    let row = element(&dom, &format!("data-container=\"{container}\""), "tr");
    assert!(row.contains(&format!("href=\"#/apps/{sleeper}\"")), "{row}");
    for file in ["stdout", "stderr"] {
        let href = format!("#/apps/{sleeper}/logs/{container}/{file}");
        assert!(row.contains(&href), "{href} in {row}");
    }
    assert!(dom.contains("Recent load"), "{dom}");
    browser.screenshot(&node_page, &dir.join("ui-node.png"));
    // The running container's own page: RUNNING, on its node.
    let dom = browser.dom(
        &format!(
            "{}/ui#/apps/{sleeper}/attempts/1/containers/{container}?token={token}",
            c.url
        ),
        |d| d.contains("class=\"container-id\""),
    );
    assert!(
        element(&dom, "class=\"container-id\"", "h1").contains("RUNNING"),
        "{dom}"
    );
    // The node's page, its id escaped as a fragment's part (`:` as %3A).
    let node_href = format!("href=\"#/nodes/{}\"", node.replace(':', "%3A"));
    assert!(dom.contains(&node_href), "{node_href} in {dom}");
    let killed = http
        .put(format!("{}/ws/v1/cluster/apps/{sleeper}/state", c.url))
        .json(&serde_json::json!({"state": "KILLED"}))
        .send()
        .unwrap();
    assert!(killed.status().is_success(), "{}", killed.status());
    browser.screenshot(
        &format!("{}/ui#/apps?token={token}", c.url),
        &dir.join("ui-applications.png"),
    );

    // The applications filtered and paged on the rm: a filter in the address (its control
    // shows it), only what the rm matched, and where the page is among them.
    let filtered = format!("{}/ui#/apps?outcome=missed&token={token}", c.url);
    let dom = browser.dom(&filtered, |d| {
        d.contains(&format!("data-app=\"{late}\"")) && d.contains("id=\"pager\"")
    });
    for other in [&plain, &id, &sleeper] {
        assert!(
            !dom.contains(&format!("data-app=\"{other}\"")),
            "{other} did not miss a deadline: {dom}"
        );
    }
    assert!(
        element(&dom, "id=\"pager\"", "nav").contains("1–1 of 1"),
        "{dom}"
    );
    assert!(
        element(&dom, "name=\"outcome\"", "select").contains("value=\"missed\" selected"),
        "{dom}"
    );
    browser.screenshot(&filtered, &dir.join("ui-applications-missed.png"));
    let page = get_as(
        &http,
        &format!("{}/ws/v1/cluster/apps?sort=id&limit=2&offset=2", c.url),
    );
    let total = page["apps"]["total"].as_u64().unwrap();
    let on_page: Vec<String> = page["apps"]["app"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(total >= 4 && on_page.len() == 2, "{page}");
    let dom = browser.dom(
        &format!("{}/ui#/apps?sort=id&limit=2&offset=2&token={token}", c.url),
        |d| {
            on_page
                .iter()
                .all(|a| d.contains(&format!("data-app=\"{a}\"")))
        },
    );
    assert_eq!(dom.matches("data-app=").count(), 2, "{dom}");
    let pager = element(&dom, "id=\"pager\"", "nav");
    assert!(pager.contains(&format!("3–4 of {total}")), "{pager}");
    assert!(pager.contains("rel=\"prev\""), "{pager}");
    assert!(
        element(&dom, "data-sort=\"id\"", "a").contains("▲"),
        "sorted by id, ascending: {dom}"
    );

    // The overview: the scheduler's policy and the counts.
    let scheduler = get(&format!("{}/ws/v1/cluster/scheduler", c.url));
    let policy = scheduler["scheduler"]["schedulerInfo"]["policy"]
        .as_str()
        .unwrap()
        .to_owned();
    let dom = browser.dom(&format!("{}/ui#/overview?token={token}", c.url), |d| {
        d.contains("id=\"policy\"")
    });
    assert!(
        element(&dom, "id=\"policy\"", "strong").contains(&policy),
        "{policy}"
    );
    assert!(dom.contains("3 running"), "three nodes: {dom}");
    assert!(dom.contains("FINISHED"), "{dom}");
    // The last hour from the rm's own history: allocated capacity and applications, drawn
    // once it has two points (one per 10 s step, each the most of its step's readings, the
    // open step's last: the jobs above ran in one of them however fast they were).
    let history = get_as(&http, &format!("{}/ws/v1/yard/history", c.url));
    let points = history["history"]["points"].as_array().unwrap();
    assert!(points.len() >= 2, "{history}");
    assert!(
        points
            .iter()
            .any(|p| p["appsRunning"].as_u64() > Some(0) && p["allocatedMB"].as_u64() > Some(0)),
        "the rm saw its jobs run: {history}"
    );
    let capacity = element(&dom, "id=\"history-capacity\"", "figure");
    for series in ["memory", "vcores"] {
        assert!(
            capacity.contains(&format!("data-series=\"{series}\"")),
            "{capacity}"
        );
    }
    let apps_chart = element(&dom, "id=\"history-apps\"", "figure");
    assert!(
        apps_chart.contains("data-series=\"running\""),
        "{apps_chart}"
    );
    browser.screenshot(
        &format!("{}/ui#/overview?token={token}", c.url),
        &dir.join("ui-overview.png"),
    );

    // A node that stops is LOST, then forgotten after the retention: off the nodes page and
    // no longer named as a holder of the dataset's blocks (`yard data ls`).
    let books = get_as(&http, &format!("{}/ws/v1/yard/datasets/books", c.url));
    let holder = books["blocks"][0]["nodes"][0].as_str().unwrap().to_owned();
    let at = c
        .nms
        .iter()
        .position(|n| n.addr == holder)
        .unwrap_or_else(|| panic!("{holder} among the nodemanagers"));
    let mut gone = c.nms.remove(at);
    terminate(&mut gone);
    eventually_for("the stopped node LOST", Duration::from_secs(60), || {
        node_states(&c.rm)
            .iter()
            .any(|(n, s)| *n == holder && s == "LOST")
            .then_some(())
    });
    eventually_for("the lost node forgotten", Duration::from_secs(60), || {
        (!node_states(&c.rm).iter().any(|(n, _)| *n == holder)).then_some(())
    });
    let dom = browser.dom(&nodes_page, |d| d.contains("data-node="));
    assert!(!dom.contains(&holder), "{holder} forgotten: {dom}");
    let (code, ls, err) = yard(&["data", "ls", "--rm", &c.url, "books"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !ls.contains(&holder),
        "{holder} no longer holds blocks: {ls}"
    );
    assert!(ls.contains("127.0.0.1:"), "the other nodes still do: {ls}");

    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
