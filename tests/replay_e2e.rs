//! `yard replay` (issue 19 item 5): a trace's first jobs on a local cluster it starts itself,
//! each submitted, run and answered, with the live and simulated rows side by side; bad
//! traces and flags exit 2.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::*;

const SWIM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv"
);

#[test]
fn a_swim_trace_replays_on_a_local_cluster_beside_the_simulators_prediction() {
    let (code, out, err) = yard(&[
        "replay",
        "--trace",
        SWIM,
        "--jobs",
        "3",
        "--time-scale",
        "1/60",
        "--nodes",
        "2",
        "--seed",
        "7",
        "--json",
        "--keep",
    ]);
    assert_eq!(code, 0, "{err}");
    // `--keep`: the local cluster's directory stays, and the replay says where.
    let kept = err
        .lines()
        .find_map(|l| l.strip_prefix("logs kept in "))
        .expect("where the logs are kept");
    assert!(std::path::Path::new(kept).join("rm.log").exists(), "{err}");
    let _ = std::fs::remove_dir_all(kept);
    let report: Value = serde_json::from_str(&out).expect(&out);
    assert_eq!(report["seed"], 7, "{report}");
    assert_eq!(report["jobs"], 3, "{report}");
    let rows = report["rows"].as_array().expect("rows");
    let sources: Vec<&str> = rows.iter().filter_map(|r| r["source"].as_str()).collect();
    assert_eq!(sources, ["live", "sim"], "{report}");
    for row in rows {
        assert_eq!(row["policy"], "dart", "{row}");
        assert_eq!(row["jobs"], 3, "{row}");
        for key in [
            "missed_fraction",
            "empty_fraction",
            "mean_processed_fraction",
        ] {
            let x = row[key].as_f64().unwrap_or(-1.0);
            assert!((0.0..=1.0).contains(&x), "{key}: {row}");
        }
        let sum: f64 = ["missed_fraction", "empty_fraction", "met_fraction"]
            .iter()
            .map(|k| row[*k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{row}");
        assert!(
            row["median_deviation"].is_f64() || row["median_deviation"].is_null(),
            "{row}"
        );
        // The estimation error over the same jobs live and simulated: median, p80, mean.
        let e = &row["estimation_error"];
        assert!(
            e.is_null() || ["median", "p80", "mean"].iter().all(|k| e[*k].is_f64()),
            "{row}"
        );
    }
    // Every job was submitted and answered (none failed or ran past the patience).
    assert_eq!(rows[0]["unanswered"], 0, "{report}\n{err}");
    assert!(rows[0]["median_deviation"].is_f64(), "{report}");
    // Masters hold containers of their own, live and simulated, within the same share.
    assert_eq!(report["master_share"], 0.5, "{report}");
    // The prediction's start-up costs, measured on the live jobs: whatever the machine's
    // speed, they cost something (0 only where no job measured one: every master ran the
    // task sampler, or no container was reused), and every simulated job answers after its
    // master's.
    let startup = &report["startup"];
    let source = startup["source"].as_str().expect("source");
    assert_ne!(source, "unmeasured", "{startup}");
    for part in ["master", "task"] {
        let x = startup[format!("{part}_s")].as_f64().expect("seconds");
        let measured = source == "measured" || source.contains(&format!("{part} measured"));
        assert!(measured == (x > 0.0) && x >= 0.0, "{part}: {startup}");
    }
    let master = startup["master_s"].as_f64().unwrap();
    // Each job live beside simulated: both answered, each master's start after submission.
    let per_job = report["per_job"].as_array().expect("per_job");
    assert_eq!(per_job.len(), 3, "{report}");
    for job in per_job {
        assert!(job["sim"]["completion_s"].as_f64() > Some(master), "{job}");
        // Every job is its own profile kind with the simulator's profile as its history: no
        // master runs the task sampler (the first job's did when all were `synthetic`).
        assert_eq!(job["live"]["task_sampler_ran"], false, "{job}");
        for side in ["live", "sim"] {
            let s = &job[side];
            assert!(
                ["met", "empty", "missed"].contains(&s["outcome"].as_str().unwrap_or("")),
                "{side}: {job}"
            );
            let start = s["master_start_s"].as_f64().expect("master_start_s");
            let done = s["completion_s"].as_f64().expect("completion_s");
            assert!(0.0 <= start && start <= done, "{side}: {job}");
        }
    }
}

#[test]
fn start_up_cost_flags_override_the_measured_ones() {
    let (code, out, err) = yard(&[
        "replay",
        "--trace",
        SWIM,
        "--jobs",
        "1",
        "--time-scale",
        "1/60",
        "--master-startup-s",
        "0.25",
        "--task-startup-s",
        "0",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).expect(&out);
    let startup = &report["startup"];
    assert_eq!(
        (&startup["master_s"], &startup["task_s"], &startup["source"]),
        (&0.25.into(), &0.0.into(), &"flag".into()),
        "{report}"
    );
    // Alone, its simulated master waited for no container and started up before it answered.
    let sim = &report["per_job"][0]["sim"];
    assert_eq!(sim["master_start_s"], 0.0, "{report}");
    assert!(sim["completion_s"].as_f64() > Some(0.25), "{report}");
}

#[test]
fn bad_traces_and_flags_exit_2_with_what_to_fix() {
    let dir = work_dir("yard-replay-bad");
    let bad = dir.join("bad.tsv");
    std::fs::write(&bad, "job0\t1\t1\tnot-a-number\t0\t0\n").unwrap();
    let (code, _, err) = yard(&["replay", "--trace", bad.to_str().unwrap(), "--jobs", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.tsv:1"), "{err}");
    let (code, _, err) = yard(&["replay", "--trace", SWIM, "--time-scale", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1/60"), "{err}");
    let (code, _, err) = yard(&["replay", "--trace", SWIM, "--task-startup-s=-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0 to 3600"), "{err}");
    let (code, _, err) = yard(&["replay", "--trace", SWIM, "--master-share", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("above 0"), "{err}");
    let (code, _, err) = yard(&["replay", "--trace", SWIM, "--rm", "http://10.1.2.3:8088"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("127.0.0.1"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_the_cluster_and_still_prints_the_report() {
    // At full time the first job's maps take half a minute, the next jobs arrive later still:
    // a Ctrl-C once the first master runs finds jobs unanswered.
    let mut replay = Command::new(env!("CARGO_BIN_EXE_yard"))
        .args([
            "replay",
            "--trace",
            SWIM,
            "--jobs",
            "3",
            "--time-scale",
            "1",
        ])
        .args(["--nodes", "1", "--seed", "7", "--json"])
        .env("YARD_HOME", yard_home())
        .env("YARD_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yard replay starts");
    let dir = std::env::temp_dir().join(format!("yard-replay-{}", replay.id()));
    eventually_for("the first job's master", Duration::from_secs(120), || {
        processes_in(&dir)
            .iter()
            .any(|p| p.contains("mr-master"))
            .then_some(())
    });
    kill(Pid::from_raw(replay.id() as i32), Signal::SIGINT).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = replay.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "yard replay did not stop within 60 s of Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |pipe: &mut dyn std::io::Read| {
        let mut text = String::new();
        pipe.read_to_string(&mut text).unwrap();
        text
    };
    let out = read(&mut replay.stdout.take().unwrap());
    let err = read(&mut replay.stderr.take().unwrap());
    assert!(status.success(), "{status}: {err}");
    assert!(err.contains("interrupted"), "{err}");
    let report: Value = serde_json::from_str(&out).expect(&out);
    assert_eq!(
        report["per_job"].as_array().map(Vec::len),
        Some(3),
        "{report}"
    );
    let unanswered = report["rows"][0]["unanswered"].as_u64().unwrap();
    assert!(unanswered >= 1, "{report}");
    // Counted missed: the live shares still sum to every job.
    let missed = report["rows"][0]["missed_fraction"].as_f64().unwrap();
    assert!(missed * 3.0 >= unanswered as f64 - 1e-9, "{report}");
    eventually("nothing of the cluster left", || {
        processes_in(&dir).is_empty().then_some(())
    });
}
