//! `yard up`: a local cluster in the foreground that runs jobs and, on Ctrl-C, stops with
//! nothing left running (issue 19 item 4).

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::*;

/// Whether `pid` runs (a zombie, waiting to be reaped, runs nothing).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'))
    })
}

#[test]
fn yard_up_runs_jobs_and_stops_everything_on_ctrl_c() {
    let tmp = work_dir("yard-up");
    let dir = tmp.join("cluster");
    // Two free ports side by side for the nodemanagers (`--nm-base-port`): the kernel's pick
    // and the next, both bound once to check.
    let base = (0..100)
        .find_map(|_| {
            let first = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
            let port = first.local_addr().ok()?.port();
            let next = port.checked_add(1)?;
            std::net::TcpListener::bind(("127.0.0.1", next)).ok()?;
            Some(port)
        })
        .expect("two free ports side by side");
    let mut up = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(["up", "--nodes", "2", "--bind", "127.0.0.1:0"])
        .args(["--nm-base-port", &base.to_string()])
        .args(["--heartbeat-ms", "200", "--dir"])
        .arg(&dir)
        .env("YARD_HOME", yard_home())
        .env("YARD_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yard up starts");
    let mut stdout = BufReader::new(up.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // `rm http://127.0.0.1:PORT with 2 nodemanagers`
    let url = line
        .strip_prefix("rm ")
        .and_then(|l| l.strip_suffix(" with 2 nodemanagers\n"))
        .unwrap_or_else(|| panic!("the first line names the rm: {line:?}"))
        .to_owned();
    let mut ready = String::new();
    stdout.read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready: "), "{ready}");
    assert!(ready.contains(&url), "{ready}");

    // It left Prometheus' scrape token in its directory, for its owner only, and said where.
    let token_file = dir.join("scrape-token");
    assert!(ready.contains(&token_file.display().to_string()), "{ready}");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let scraper = std::fs::read_to_string(&token_file).unwrap();
    let targets = get_as(
        &format!("{url}/ws/v1/yard/prometheus/targets"),
        scraper.trim(),
    );
    assert!(
        targets.is_array(),
        "the token opens the targets list: {targets}"
    );

    // Both nodes run by the time it says ready, on the ports asked for.
    let nodes = get(&format!("{url}/ws/v1/cluster/nodes?states=RUNNING"));
    let mut ids: Vec<String> = nodes["nodes"]["node"]
        .as_array()
        .unwrap_or_else(|| panic!("{nodes}"))
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    let mut asked = vec![
        format!("127.0.0.1:{base}"),
        format!("127.0.0.1:{}", base + 1),
    ];
    asked.sort();
    assert_eq!(ids, asked, "{nodes}");

    // A job runs on it: a container that would outlive the cluster if it were not stopped.
    let pid_file = tmp.join("sleeper.pid");
    let command = format!("echo $$ > {}; exec sleep 600", pid_file.display());
    let (code, id, err) = yard(&["submit", "--rm", &url, "--command", &command]);
    assert_eq!(code, 0, "{err}");
    let id = id.trim().to_owned();
    let sleeper = eventually("the container's process", || {
        std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
    });
    assert!(alive(sleeper), "the container runs");
    let state = get(&format!("{url}/ws/v1/cluster/apps/{id}"))["app"]["state"].clone();
    assert!(state == "ACCEPTED" || state == "RUNNING", "{state}");
    // The rm and both nodemanagers name the cluster's directory.
    assert!(processes_in(&dir).len() >= 3, "{:?}", processes_in(&dir));

    // Ctrl-C: exit 0, and nothing it started is left.
    kill(Pid::from_raw(up.id() as i32), Signal::SIGINT).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = up.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "yard up did not stop within 60 s of Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(&mut up.stderr.take().unwrap(), &mut said).unwrap();
    assert!(status.success(), "{status}: {said}");
    assert!(said.contains("stopped"), "{said}");
    assert!(
        said.contains(&format!(
            "state and logs in {} (kept when it stops)",
            dir.display()
        )),
        "it said where from the start: {said}"
    );
    // Orphaned containers are reaped by init at once; give it a moment, not a fixed sleep.
    eventually("no process left", || {
        (processes_in(&dir).is_empty() && !alive(sleeper)).then_some(())
    });
    assert!(
        reqwest::blocking::get(format!("{url}/ws/v1/cluster/info")).is_err(),
        "the rm still answers"
    );
    // --dir keeps the state and the logs.
    assert!(dir.join("rm.db").exists() && dir.join("nm0.log").exists());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn yard_up_refuses_what_it_cannot_run_with_exit_2() {
    for (args, says) in [
        (&["--bind", "0.0.0.0:0"][..], "127.0.0.1"),
        (&["--nodes", "0"][..], "--nodes 0"),
        (&["--nm-base-port", "0"][..], "--nm-base-port 0"),
        (&["--nm-base-port", "65535"][..], "ports 65535 to 65537"),
    ] {
        let (code, _, err) = yard(&[&["up"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // The demo starts its cluster the same way, of `--nodes` × `--vcores` one-core slots of
    // which the master takes one: a cluster with none left for tasks is refused before
    // anything starts.
    for (args, says) in [
        (&["--nodes", "1", "--vcores", "1"][..], "--nodes × --vcores"),
        (&["--nodes", "0"][..], "--nodes"),
        (&["--dart-runs", "0"][..], "--dart-runs"),
        (&["--dart-runs", "21"][..], "--dart-runs"),
    ] {
        let (code, _, err) = yard(&[&["demo"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `yard demo --dart-runs 2` at a tiny size: the dart word count runs twice under one deadline,
/// the runs table has a row for each, and every live run's record joined the profile store
/// under the demo's kind (three task-sampler runs, `full`, two `dart`). No timing asserts.
#[test]
fn the_demo_runs_dart_again_and_each_run_joins_the_profile() {
    let tmp = work_dir("yard-demo-runs");
    let out = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(["demo", "--size", "8MiB", "--block-size", "1MiB"])
        .args(["--dart-runs", "2", "--keep"])
        .env("YARD_HOME", yard_home())
        .env("YARD_LOG", "warn")
        // The demo's directory (kept) goes under the test's.
        .env("TMPDIR", &tmp)
        .output()
        .expect("yard demo runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{}: {stdout}\n{stderr}", out.status);
    let table = stdout
        .split("run after run")
        .nth(1)
        .unwrap_or_else(|| panic!("no runs table: {stdout}"));
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows[0].starts_with("1 ") && rows[1].starts_with("2 "),
        "{table}"
    );
    assert!(
        table.contains("run 1 ") && table.contains("runs 2–2 "),
        "{table}"
    );

    let demo = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("yard-demo-"))
        })
        .unwrap_or_else(|| panic!("the kept directory: {stderr}"));
    for name in ["full.json", "dart.json", "dart-2.json"] {
        let answer: serde_json::Value =
            serde_json::from_slice(&std::fs::read(demo.join(name)).unwrap()).unwrap();
        let job = &answer["app"]["answer"]["job"];
        assert_eq!(job["kind"], "wordcount@demo", "{name}: {job}");
        assert_eq!(job["taskSamplerRan"], false, "{name}: {job}");
    }
    let runs = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = yard_profiles::ProfileStore::open(&demo.join("profiles.db"))
            .await
            .unwrap();
        store.load("wordcount@demo").await.unwrap().runs
    });
    assert_eq!(runs.len(), 3 + 1 + 2, "{runs:?}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Ctrl-C during `yard demo` stops its whole local cluster (daemons in process groups of their
/// own, which the terminal's Ctrl-C does not reach) and removes its directory, exiting 130 —
/// also when it comes while the cluster is still starting (a daemon stopped mid-start fails
/// its start: that failure must not be what the demo exits with).
#[test]
fn an_interrupted_demo_stops_its_cluster_and_removes_its_directory() {
    // Interrupted once the rm's process exists, once two nodemanagers' do, once all four.
    for daemons in [1, 3, 4] {
        interrupt_demo_once_started(daemons);
    }
}

fn interrupt_demo_once_started(daemons: usize) {
    let tmp = work_dir(&format!("yard-demo-interrupted-{daemons}"));
    let mut demo = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(["demo", "--size", "8MiB", "--block-size", "1MiB"])
        .env("YARD_HOME", yard_home())
        .env("YARD_LOG", "warn")
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yard demo starts");
    let dir = tmp.join(format!("yard-demo-{}", demo.id()));
    let holding = || -> Vec<String> {
        let needle = dir.display().to_string();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&needle))
            .collect()
    };
    // The rm and its three nodemanagers (the default shape) each name the directory.
    eventually("the demo's cluster", || {
        (holding().len() >= daemons).then_some(())
    });
    kill(Pid::from_raw(demo.id() as i32), Signal::SIGINT).unwrap();
    let status = demo.wait().unwrap();
    let mut said = String::new();
    use std::io::Read;
    demo.stderr
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{daemons} daemons up: {said}");
    assert!(said.contains("interrupted"), "{said}");
    assert!(!dir.exists(), "{dir:?} is left: {said}");
    assert_eq!(holding(), Vec::<String>::new(), "daemons left running");
    let _ = std::fs::remove_dir_all(&tmp);
}
