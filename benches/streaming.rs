//! `cargo bench --bench streaming`: Hadoop Streaming's per-record overhead against the built-in
//! word count over the same input (issue 31's goal: ≤ 2× for a `cat`-like mapper). Real rm,
//! nodemanager, master, runner and task processes on 127.0.0.1 (three nodemanagers, five task
//! containers), `--policy full`, no deadline: every block read, no task sampler.
//!
//! The Streaming job is `-mapper cat -reducer 'wc -l'`: every input line goes through a
//! process's pipes both ways, is read back as a record (the whole line its key), shuffled,
//! sorted and piped into the reducer; the built-in word count tokenizes the same lines in
//! process. Records are the input's lines, the same for both. Prints each job's seconds (the
//! master's `jobSeconds`, and the client's wall time from submission to answer), records per
//! second, and the ratio. Figures, not assertions: the tests check behaviour.
//!
//! `YARD_BENCH_STREAMING_SIZE` (default `32MiB`) and `YARD_BENCH_STREAMING_BLOCK` (default
//! `2MiB`) size the input; `YARD_BENCH_STREAMING_RUNS` (default 1) runs each job that many
//! times, alternating, and reports each job's fastest.

use std::time::Instant;

use serde_json::Value;

#[path = "../tests/support/mod.rs"]
mod support;

/// A job's fastest run: the master's `jobSeconds` and the client's wall seconds.
#[derive(Clone, Copy)]
struct Timed {
    job: f64,
    wall: f64,
}

/// Runs `yard ARGS --json --rm URL`; the master's and the client's seconds.
fn timed(rm: &str, args: &[&str]) -> Timed {
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(args)
        .args(["--json", "--rm", rm])
        .env("YARD_HOME", support::yard_home())
        .output()
        .expect("yard runs");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "yard {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app: Value = serde_json::from_slice(&out.stdout).expect("JSON from yard --json");
    let app = &app["app"];
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}");
    assert_eq!(
        app["processedFraction"], 1.0,
        "full reads everything: {app}"
    );
    Timed {
        job: app["answer"]["job"]["jobSeconds"]
            .as_f64()
            .unwrap_or(f64::NAN),
        wall,
    }
}

fn fastest(a: Option<Timed>, b: Timed) -> Timed {
    match a {
        Some(a) if a.job <= b.job => a,
        _ => b,
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn main() {
    let size = env_or("YARD_BENCH_STREAMING_SIZE", "32MiB");
    let block = env_or("YARD_BENCH_STREAMING_BLOCK", "2MiB");
    let runs: u32 = env_or("YARD_BENCH_STREAMING_RUNS", "1")
        .parse()
        .expect("YARD_BENCH_STREAMING_RUNS: a whole number");
    let dir = support::work_dir("yard-bench-streaming");
    let cluster = support::cluster(&dir);
    let url = cluster.url.clone();
    let file = support::put_dataset(&url, &dir, "text", "input", &size, &block, 2, 11);
    let text = std::fs::read(&file).expect("the generated input");
    let records = text.iter().filter(|&&b| b == b'\n').count() as f64;
    println!(
        "{size} of text in {block} blocks ({records} lines), 2 reduces, --policy full, on 3 local \
         nodemanagers (5 task containers); fastest of {runs}"
    );
    let builtin = [
        "submit",
        "wordcount",
        "--input",
        "input",
        "--reduces",
        "2",
        "--policy",
        "full",
    ];
    let streaming = [
        "streaming",
        "-input",
        "input",
        "-mapper",
        "cat",
        "-reducer",
        "wc -l",
        "-numReduceTasks",
        "2",
        "--policy",
        "full",
    ];
    let (mut b, mut s) = (None, None);
    for _ in 0..runs.max(1) {
        b = Some(fastest(b, timed(&url, &builtin)));
        s = Some(fastest(s, timed(&url, &streaming)));
    }
    let (b, s) = (b.expect("ran"), s.expect("ran"));
    for (name, t) in [("built-in wordcount", b), ("streaming cat | wc -l", s)] {
        println!(
            "{name:>22}: job {:.2} s ({:.0} records/s), wall {:.2} s",
            t.job,
            records / t.job,
            t.wall
        );
    }
    println!(
        "streaming / built-in: {:.2}× the job's seconds ({:.2}× wall); per record {:.2} µs \
         against {:.2} µs (goal ≤ 2×)",
        s.job / b.job,
        s.wall / b.wall,
        1e6 * s.job / records,
        1e6 * b.job / records,
    );
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
