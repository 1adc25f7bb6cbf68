//! Profiles for user jobs (issue 31, item 4), end to end on 127.0.0.1: a Streaming script's
//! first run under Dart runs the task sampler and stores what it measured under the script's
//! kind; its second run (the same commands and shipped files, listed in another order) finds
//! that profile, runs no sampler, and stores its own run beside it; the same
//! commands with one shipped file's bytes changed are another kind, and start cold.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::Value;

mod support;
use support::*;

/// Seconds each map's mapper sleeps before it reads: what every stored run must have
/// measured of its maps (the master's default profile guesses 1 s).
const MAP_SLEEP: &str = "1.5";

/// `yard streaming` over `books` in `dir` (where the shipped files are) with `files` as
/// `-files`, under Dart with a loose deadline: the finished app as `--json` prints it.
fn run(c: &Cluster, dir: &Path, files: &str) -> Value {
    let reducer = r#"awk -F '\t' '{ n[$1] += $2 } END { for (k in n) print k "\t" n[k] }'"#;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yard"))
        .args([
            "streaming",
            "-input",
            "books",
            "-mapper",
            "./m.sh",
            "-reducer",
            reducer,
            "-files",
            files,
            "-numReduceTasks",
            "2",
            "--deadline",
            "10m",
            "--json",
            "--rm",
            &c.url,
        ])
        .current_dir(dir)
        .env("YARD_HOME", yard_home())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(app["app"]["finalStatus"], "SUCCEEDED", "{app}");
    app
}

/// What the profile store holds for `kind`: its runs' node-local map means, and how many
/// reduce samples the task sampler stored.
fn stored(c: &Cluster, kind: &str) -> (Vec<Option<f64>>, usize) {
    let s = stored_profile(&c.profiles, kind);
    (
        s.runs.iter().map(|r| r.map_local).collect(),
        s.sampled.len(),
    )
}

/// The job's kind as its master stored it, and whether the task sampler ran.
fn kind_and_sampler(app: &Value) -> (String, bool) {
    let job = &app["app"]["answer"]["job"];
    (
        job["kind"].as_str().unwrap().to_owned(),
        job["taskSamplerRan"].as_bool().unwrap(),
    )
}

#[test]
fn a_script_s_second_run_forecasts_from_its_first_and_changed_files_start_cold() {
    let tmp = work_dir("yard-streaming-profiles");
    let c = cluster(&tmp);
    // 128 KiB in 16 KiB blocks: eight maps.
    put_dataset(&c.url, &tmp, "text", "books", "128KiB", "16KiB", 2, 3);
    let script = tmp.join("m.sh");
    let mapper = format!(
        "#!/bin/sh\nsleep {MAP_SLEEP}\ntr -cs 'A-Za-z' '\\n' | awk 'NF {{ print $0 \"\\t1\" }}'\n"
    );
    std::fs::write(&script, &mapper).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(tmp.join("stop.txt"), "the\nand\n").unwrap();

    // First run: a kind never seen; the task sampler runs first and is stored, then the job.
    let first = run(&c, &tmp, "m.sh,stop.txt");
    let (kind, sampled) = kind_and_sampler(&first);
    assert!(
        kind.starts_with("streaming:") && kind.ends_with(":reduces=2@books"),
        "{kind}"
    );
    assert!(sampled, "a cold kind runs the task sampler: {first}");
    let id = first["app"]["id"].as_str().unwrap();
    assert!(master_log(&tmp, id).contains("task sampler:"), "{id}");
    let (runs, samples) = stored(&c, &kind);
    assert_eq!(runs.len(), 2, "the sampler's run and the job's: {runs:?}");
    assert!(samples > 0, "the sampler's reduce samples are stored");
    let sleep: f64 = MAP_SLEEP.parse().unwrap();
    for map_local in &runs {
        let m = map_local.expect("each run timed node-local maps");
        assert!(m >= sleep, "a map sleeps {sleep} s: {runs:?}");
    }

    // Second run: the same script and files (listed in another order: Hadoop ships them
    // as a set). The same kind, found: no sampler, and one more run stored.
    let second = run(&c, &tmp, "stop.txt,m.sh");
    let (again, sampled) = kind_and_sampler(&second);
    assert_eq!(again, kind);
    assert!(!sampled, "a known kind runs no sampler: {second}");
    let id = second["app"]["id"].as_str().unwrap();
    let log = master_log(&tmp, id);
    assert!(
        log.contains("registered") && !log.contains("task sampler:"),
        "{log}"
    );
    assert_eq!(stored(&c, &kind).0.len(), 3);
    assert_eq!(
        second["app"]["answer"]["output"], first["app"]["answer"]["output"],
        "the same script over the same input"
    );
    // It looked the kind up, and Dart forecast from what it found: an estimate at the map
    // phase's close, and the loose deadline met.
    assert!(log.contains(&format!("job type of {kind:?}")), "{log}");
    let job = &second["app"]["answer"]["job"];
    assert!(
        job["estimateAtClose"].as_f64().is_some_and(|e| e > 0.0),
        "{job}"
    );
    assert_eq!(job["deadlineMet"], true, "{job}");

    // The same commands with one shipped file's bytes changed: another kind, cold again.
    std::fs::write(&script, format!("{mapper}# changed\n")).unwrap();
    let third = run(&c, &tmp, "m.sh,stop.txt");
    let (other, sampled) = kind_and_sampler(&third);
    assert_ne!(other, kind);
    assert!(sampled, "changed files are a kind never seen: {third}");
    assert_eq!(
        stored(&c, &kind).0.len(),
        3,
        "the first kind's runs are its own"
    );
    assert_eq!(stored(&c, &other).0.len(), 2);
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
