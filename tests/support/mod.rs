//! What the end-to-end tests share: real daemons on 127.0.0.1 (ephemeral ports), stopped when
//! dropped, and polling with a deadline (nothing sleeps for a fixed time); a Dart job submitted
//! over REST; and, for the CLI tests, the yard binary run to its end and its JSON read.
#![allow(dead_code)] // each test file uses its own subset

pub mod venv;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A daemon process, stopped when dropped.
pub struct Daemon {
    pub child: Child,
    pub addr: String,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start(args: &[&str]) -> Daemon {
    start_with_env(args, &[])
}

/// The `YARD_HOME` of every process these tests start (one per test binary; the rm's local
/// credentials in it are named by port, so concurrent tests do not meet), never the user's own.
pub fn yard_home() -> PathBuf {
    let home = std::env::temp_dir().join(format!("yard-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// The admin token the rm at `url` left in [`yard_home`], if it is an rm's URL.
pub fn admin_token(url: &str) -> Option<String> {
    yard_rm::credentials::find_local_in(&yard_home(), url).map(|c| c.token)
}

/// An HTTP client that sends the admin token of the rm at `rm_url` with every request.
pub fn admin_client(rm_url: &str) -> reqwest::blocking::Client {
    let token = admin_token(rm_url).expect("the rm left its local credentials");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    reqwest::blocking::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// A grant, from the rm at `rm_url`, to upload and read dataset `name`'s blocks.
pub fn upload_grant(rm_url: &str, name: &str) -> String {
    let reply: Value = admin_client(rm_url)
        .post(format!("{rm_url}/ws/v1/yard/datasets/{name}/upload-grant"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    reply["token"].as_str().expect("a grant").to_owned()
}

pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Daemon {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(args)
        .env("YARD_HOME", yard_home())
        .envs(env.iter().copied())
        .env("YARD_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("yard starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    Daemon { child, addr }
}

pub fn nm(rm: &Daemon, dir: &Path) -> Daemon {
    nm_for(&format!("http://{}", rm.addr), dir, NmShape::default(), &[])
}

/// A nodemanager's size and heartbeat, as the tests start them.
#[derive(Debug, Clone, Copy)]
pub struct NmShape {
    pub memory_mb: u64,
    pub vcores: u32,
    pub heartbeat_ms: u64,
}

impl Default for NmShape {
    fn default() -> Self {
        NmShape {
            memory_mb: 4096,
            vcores: 4,
            heartbeat_ms: 100,
        }
    }
}

/// A nodemanager of the rm at `rm_url` on 127.0.0.1:0 working in `work`, with `extra` flags.
pub fn nm_for(rm_url: &str, work: &Path, shape: NmShape, extra: &[&str]) -> Daemon {
    let (heartbeat, memory, vcores) = (
        shape.heartbeat_ms.to_string(),
        shape.memory_mb.to_string(),
        shape.vcores.to_string(),
    );
    let mut args = vec![
        "nm",
        "--rm",
        rm_url,
        "--bind",
        "127.0.0.1:0",
        "--heartbeat-ms",
        &heartbeat,
        "--work-dir",
        work.to_str().unwrap(),
        "--memory-mb",
        &memory,
        "--vcores",
        &vcores,
    ];
    args.extend(extra);
    start(&args)
}

/// Polls `f` until it returns `Some`, for at most 30 s.
pub fn eventually<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    eventually_for(what, Duration::from_secs(30), f)
}

/// Polls `f` until it returns `Some`, for at most `limit`.
pub fn eventually_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// GETs `url` as the cluster's admin (when it is an rm's URL); `Null` on any failure.
pub fn get(url: &str) -> Value {
    let mut request = reqwest::blocking::Client::new().get(url);
    if let Some(token) = admin_token(url) {
        request = request.bearer_auth(token);
    }
    request.send().and_then(|r| r.json()).unwrap_or(Value::Null)
}

pub fn node_states(rm: &Daemon) -> Vec<(String, String)> {
    let nodes = get(&format!("http://{}/ws/v1/cluster/nodes", rm.addr));
    nodes["nodes"]["node"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|n| {
                    (
                        n["id"].as_str().unwrap().to_owned(),
                        n["state"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A fresh directory for one test's daemons.
pub fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An rm on 127.0.0.1:0 keeping its state in `dir/rm.db`, with `extra` flags.
/// The state database of the rm `rm_in(dir, …)` starts: restart tests start it again on it.
pub fn rm_db(dir: &Path) -> std::path::PathBuf {
    dir.join("rm.db")
}

pub fn rm_in(dir: &Path, extra: &[&str]) -> Daemon {
    rm_on(dir, "127.0.0.1:0", extra)
}

/// The rm on `dir`'s state again (after [`terminate`] or a SIGKILL), at `addr`, where its
/// nodes look for it.
pub fn rm_again(dir: &Path, addr: &str) -> Daemon {
    rm_on(dir, addr, &[])
}

fn rm_on(dir: &Path, addr: &str, extra: &[&str]) -> Daemon {
    let db = rm_db(dir);
    let mut args = vec!["rm", "--bind", addr, "--state-db", db.to_str().unwrap()];
    args.extend(extra);
    // The profile store in the test's directory too, never the checkout's (the default is
    // the working directory's yard-profiles.db).
    let profiles = dir.join("profiles.db");
    if !extra.contains(&"--profiles-db") {
        args.extend(["--profiles-db", profiles.to_str().unwrap()]);
    }
    start(&args)
}

/// Waits until the rm lists `n` RUNNING nodes.
pub fn await_running(rm: &Daemon, n: usize) {
    eventually(&format!("{n} running nodes"), || {
        (node_states(rm).iter().filter(|s| s.1 == "RUNNING").count() == n).then_some(())
    });
}

pub fn containers_on(nm: &Daemon) -> Vec<Value> {
    get(&format!("http://{}/ws/v1/node/containers", nm.addr))["containers"]["container"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Runs the yard client; returns (exit code, stdout, stderr).
pub fn yard(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(args)
        .env("YARD_HOME", yard_home())
        .output()
        .expect("yard runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Stops a daemon gracefully (SIGTERM) and waits for it.
pub fn terminate(daemon: &mut Daemon) {
    let pid = daemon.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let _ = daemon.child.wait();
}

/// An rm with a profile store, and three nodemanagers of two one-core slots each: the master
/// of a job takes one, five run its tasks.
pub struct Cluster {
    pub rm: Daemon,
    pub nms: Vec<Daemon>,
    pub url: String,
    pub profiles: PathBuf,
}

pub fn cluster(dir: &Path) -> Cluster {
    cluster_with(dir, &[])
}

/// [`cluster`] with `extra` flags for the rm.
pub fn cluster_with(dir: &Path, extra: &[&str]) -> Cluster {
    let profiles = dir.join("profiles.db");
    let mut args = vec!["--profiles-db", profiles.to_str().unwrap()];
    args.extend(extra);
    let rm = rm_in(dir, &args);
    let url = format!("http://{}", rm.addr);
    let nms = nms_of(dir, &url);
    await_running(&rm, 3);
    Cluster {
        rm,
        nms,
        url,
        profiles,
    }
}

/// The three nodemanagers of [`cluster`], for the rm at `url`.
pub fn nms_of(dir: &Path, url: &str) -> Vec<Daemon> {
    let shape = NmShape {
        memory_mb: 1024,
        vcores: 2,
        ..NmShape::default()
    };
    (0..3)
        .map(|i| nm_for(url, &dir.join(format!("nm{i}")), shape, &[]))
        .collect()
}

/// `yard data gen --kind KIND --seed SEED` a file of `size` in `dir`, then `yard data put NAME`
/// it on the rm at `url` in `block`-sized blocks with `replication` replicas; returns the file.
#[allow(clippy::too_many_arguments)]
pub fn put_dataset(
    url: &str,
    dir: &Path,
    kind: &str,
    name: &str,
    size: &str,
    block: &str,
    replication: u32,
    seed: u64,
) -> PathBuf {
    let file = dir.join(format!("{name}.txt"));
    let (code, _, err) = yard(&[
        "data",
        "gen",
        "--kind",
        kind,
        "--size",
        size,
        "--seed",
        &seed.to_string(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    put_file(url, &file, name, block, replication);
    file
}

/// `yard data put NAME FILE` in blocks of `block` with `replication` copies.
pub fn put_file(url: &str, file: &Path, name: &str, block: &str, replication: u32) {
    let (code, _, err) = yard(&[
        "data",
        "put",
        name,
        file.to_str().unwrap(),
        "--block-size",
        block,
        "--replication",
        &replication.to_string(),
        "--rm",
        url,
    ]);
    assert_eq!(code, 0, "{err}");
}

/// The diagnostics of application `id`, as the rm's cluster app view says them.
pub fn app_diagnostics(rm_url: &str, id: &str) -> String {
    let report: Value = admin_client(rm_url)
        .get(format!("{rm_url}/ws/v1/cluster/apps/{id}"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    report["app"]["diagnostics"].as_str().unwrap().to_owned()
}

/// The processes of a local cluster in `dir`: those whose command line names it (the rm, the
/// nodemanagers) or that run in it (every container), with their command lines.
pub fn processes_in(dir: &Path) -> Vec<String> {
    let name = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        if cmdline.contains(&name) || cwd.starts_with(dir) {
            found.push(cmdline);
        }
    }
    found
}

/// Processes whose command line has the argument `arg` and whose environment mentions `needle`
/// (an application id, say).
pub fn processes(arg: &str, needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes())
            && String::from_utf8_lossy(&environ).contains(needle)
        {
            pids.push(pid);
        }
    }
    pids
}

/// Kills, when dropped, every process still running in an application's containers (found by
/// the container id in their environment): a test that fails, or stops its nodemanagers
/// before they stop their containers, leaves nothing behind to load the machine for the tests
/// after it.
pub struct ProcessesOf(String);

impl ProcessesOf {
    pub fn app(application_id: &str) -> ProcessesOf {
        // Container ids carry the application's `<timestamp>_<sequence>`.
        ProcessesOf(application_id.trim_start_matches("application_").to_owned())
    }
}

impl Drop for ProcessesOf {
    fn drop(&mut self) {
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            let env = String::from_utf8_lossy(&environ);
            let ours = env
                .split('\0')
                .any(|v| v.starts_with("CONTAINER_ID=") && v.contains(&self.0));
            if ours && let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// `yard submit --command CMD --no-wait` on the rm at `url`; the application's id.
pub fn submit_command(url: &str, command: &str) -> String {
    let (code, out, err) = yard(&["submit", "--command", command, "--no-wait", "--rm", url]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_owned()
}

/// Word counts of `file` computed directly, independently of yard's applications: the total
/// and each lower-cased word's count.
pub fn exact_counts(file: &Path) -> (u64, std::collections::HashMap<String, u64>) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut counts = std::collections::HashMap::new();
    let mut total = 0;
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        total += 1;
        *counts.entry(word.to_lowercase()).or_default() += 1;
    }
    (total, counts)
}

/// The master's stderr: the container of the application whose log is a master's.
pub fn master_log(dir: &Path, application: &str) -> String {
    let suffix = application.trim_start_matches("application_");
    for i in 0..3 {
        let Ok(entries) = std::fs::read_dir(dir.join(format!("nm{i}"))) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_string_lossy().contains(suffix) {
                continue;
            }
            let log = std::fs::read_to_string(e.path().join("stderr")).unwrap_or_default();
            // A MapReduce master registers; a shared scan's host or rider logs "master: …"
            // from its first line; runners and tasks do neither.
            if log.contains("master: registered") || log.starts_with("master: ") {
                return log;
            }
        }
    }
    String::new()
}

/// The rm's REST route for MapReduce jobs.
pub const JOBS: &str = "/ws/v1/yard/mapreduce/jobs";

/// A Dart grep for "e" over the dataset `books` with 2 reduces, its maps lasting at least
/// `map_min_seconds` each (long enough to be watched), named `name` and due in 10 minutes,
/// submitted over REST with `http` (an admin's client) to the rm at `rm_url`, which must accept
/// it (202): the job's id and the `Location` the rm answered with.
pub fn submit_grep(
    http: &reqwest::blocking::Client,
    rm_url: &str,
    name: &str,
    map_min_seconds: f64,
) -> (String, String) {
    submit_grep_due(http, rm_url, name, map_min_seconds, Some(600_000))
}

/// [`submit_grep`] due `deadline_in_ms` after its submission (`None`: no deadline).
pub fn submit_grep_due(
    http: &reqwest::blocking::Client,
    rm_url: &str,
    name: &str,
    map_min_seconds: f64,
    deadline_in_ms: Option<i64>,
) -> (String, String) {
    let job = serde_json::json!({"app": "grep", "input": "books", "params": {"pattern": "e"},
                                 "policy": "dart", "reduces": 2, "mapMinSeconds": map_min_seconds});
    let mut body = serde_json::json!({"job": job, "name": name});
    if let Some(ms) = deadline_in_ms {
        body["deadlineInMs"] = ms.into();
    }
    let submitted = http
        .post(format!("{rm_url}{JOBS}"))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(submitted.status().as_u16(), 202);
    let location = submitted.headers()["location"].to_str().unwrap().to_owned();
    let view: Value = submitted.json().unwrap();
    let id = view["job"]["id"].as_str().unwrap().to_owned();
    (id, location)
}

/// Polls the job `id` at `location` (what [`submit_grep`] answered) on the rm at `rm_url` with
/// `http`, every 100 ms for at most 300 s (the failure then shows its master's log, from the
/// cluster in `dir`), until it has ended (FINISHED, FAILED or KILLED); `seen` is shown each
/// view of it before then. Its last view.
pub fn watch_job(
    http: &reqwest::blocking::Client,
    rm_url: &str,
    location: &str,
    dir: &Path,
    id: &str,
    mut seen: impl FnMut(&Value),
) -> Value {
    let give_up = Instant::now() + Duration::from_secs(300);
    loop {
        let v: Value = http
            .get(format!("{rm_url}{location}"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        let job = &v["job"];
        if matches!(
            job["state"].as_str(),
            Some("FINISHED" | "FAILED" | "KILLED")
        ) {
            return job.clone();
        }
        seen(job);
        assert!(
            Instant::now() < give_up,
            "still {}: {}",
            job["state"],
            master_log(dir, id)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `yard ARGS` run in `dir`, to its end.
pub fn yard_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the yard binary runs")
}

/// `yard ARGS` run in the repository's root (where the shipped traces are), to its end.
pub fn yard_output(args: &[&str]) -> Output {
    yard_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Asserts that a run of yard succeeded; its stderr is the failure's message.
pub fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a run of yard that must succeed printed, as JSON.
pub fn json_of(out: &Output) -> Value {
    succeeded(out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The cluster secret of the rm [`rm_in`] started in `dir` (its default secret file): the
/// tests read it, as a node holding the data key could, to make job tokens.
pub fn cluster_secret(dir: &Path) -> yard_wire::auth::ClusterSecret {
    let hex = std::fs::read_to_string(rm_db(dir).with_extension("secret")).unwrap();
    yard_wire::auth::ClusterSecret::from_hex(&hex).expect("a cluster secret")
}

/// Application `app`'s job token on the cluster in `dir`: what its containers get as
/// `YARD_JOB_TOKEN`, and what its master's routes ask for.
pub fn job_token(dir: &Path, app: &str) -> String {
    cluster_secret(dir).data_key().job_token(app)
}

/// The cluster's scrape token, issued by the admin of the rm at `rm_url`
/// (`yard auth token --scrape`).
pub fn scrape_token(rm_url: &str) -> String {
    let reply: Value = admin_client(rm_url)
        .post(format!("{rm_url}/ws/v1/yard/auth/tokens"))
        .json(&serde_json::json!({"scrape": true}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    reply["token"].as_str().expect("a scrape token").to_owned()
}

/// GETs `url` with `token` as the bearer; `Null` on any failure.
pub fn get_as(url: &str, token: &str) -> Value {
    reqwest::blocking::Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.json())
        .unwrap_or(Value::Null)
}

/// The test standing in for application `id`'s first master on the rm at `url` (started by
/// `rm_in(dir, …)`, whose cluster secret signs the credential): it registers, answers from
/// `fraction` of the input unless `None`, and unregisters with `succeeded`.
pub fn finish_as_master(dir: &Path, url: &str, id: &str, fraction: Option<f64>, succeeded: bool) {
    let token = cluster_secret(dir)
        .bearer_key()
        .issue(&yard_wire::auth::Principal::Master {
            app: id.into(),
            attempt: 1,
        });
    let http = reqwest::blocking::Client::new();
    let call = |method: reqwest::Method, what: &str, body: Value| {
        let reply = http
            .request(method, format!("{url}/ws/v1/yard/apps/{id}/{what}"))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .unwrap();
        let status = reply.status();
        assert!(
            status.is_success(),
            "{what}: {status} {}",
            reply.text().unwrap()
        );
    };
    call(reqwest::Method::POST, "register", serde_json::json!({}));
    if let Some(f) = fraction {
        let answer = serde_json::json!({"processedFraction": f, "answer": {"lines": 1}});
        call(reqwest::Method::PUT, "result", answer);
    }
    call(
        reqwest::Method::POST,
        "unregister",
        serde_json::json!({ "succeeded": succeeded }),
    );
}

/// What the profile store at `db` holds for the job kind `kind`.
pub fn stored_profile(db: &Path, kind: &str) -> yard_profiles::Stored {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = yard_profiles::ProfileStore::open(db).await.unwrap();
        store.load(kind).await.unwrap()
    })
}

/// `PUT …/apps/{id}/deadline` (yard's, YARN's application timeout update), which must be
/// accepted.
pub fn set_deadline(http: &reqwest::blocking::Client, url: &str, id: &str, deadline_ms: i64) {
    let put = http
        .put(format!("{url}/ws/v1/yard/apps/{id}/deadline"))
        .json(&serde_json::json!({ "deadlineMs": deadline_ms }))
        .send()
        .unwrap();
    assert_eq!(put.status().as_u16(), 200, "{}", put.text().unwrap());
}
