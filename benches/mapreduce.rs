//! `cargo bench --bench mapreduce`: a job of 200 small synthetic maps on three local
//! nodemanagers (real rm, nodemanager, master, runner and task processes on 127.0.0.1).
//!
//! Prints the master's scheduling overhead per task (from a container becoming free to the next
//! task process starting in it), and Dart's estimation error at map close, live and as the
//! simulator predicts it for the same job (same shape, profile, containers and deadline).
//! Figures, not assertions: the tests check behaviour.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use yard_appmaster::policy::{PolicyConfig, PolicyKind};
use yard_sim::{ClusterConfig, DeadlineConfig, Experiment, JobTruth, MapTruth, Plan, SimJob};

const MAPS: u32 = 200;
const MAP_SECONDS: f64 = 0.05;
const REDUCE_SECONDS: f64 = 0.2;
/// Three nodemanagers of two one-core slots; the master holds one.
const TASK_CONTAINERS: u32 = 5;

#[path = "../tests/support/mod.rs"]
mod support;

fn submit(rm: &str, extra: &[&str]) -> Value {
    let maps = MAPS.to_string();
    let (map_s, reduce_s) = (MAP_SECONDS.to_string(), REDUCE_SECONDS.to_string());
    let mut args = vec![
        "submit",
        "synthetic",
        "--rm",
        rm,
        "--json",
        "--maps",
        &maps,
        "--map-seconds",
        &map_s,
        "--map-output-bytes",
        "4096",
        "--reduces",
        "1",
        "--reduce-seconds",
        &reduce_s,
    ];
    args.extend(extra);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(&args)
        .output()
        .expect("yard submit runs");
    assert!(
        out.status.success(),
        "yard submit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from yard submit --json")
}

fn profile(db: &Path) -> yard_appmaster::policy::Profile {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stored = runtime.block_on(async {
        let store = yard_profiles::ProfileStore::open(db).await.unwrap();
        store.load("synthetic").await.unwrap()
    });
    stored
        .profiler(yard_appmaster::policy::Profile {
            map_local: MAP_SECONDS,
            map_remote: MAP_SECONDS,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 4096.0,
            shuffle_bandwidth: 1e8,
            reduce_time: yard_appmaster::policy::PowerLaw {
                a: 0.0,
                b: 1.0,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        })
        .profile()
}

/// The simulator's run of the same job: the live profile as both what Dart is told and the
/// truth (every map as long as the profile's), on as many containers, under the same deadline.
fn simulated(profile: &yard_appmaster::policy::Profile, deadline: f64) -> (f64, f64, u32) {
    let map = profile.map_remote.max(profile.map_local);
    let job = SimJob {
        id: "bench".into(),
        submit: 0.0,
        truth: JobTruth {
            maps: (0..MAPS)
                .map(|_| MapTruth {
                    duration: map,
                    input_bytes: 1 << 20,
                    output_bytes: 4096,
                    replicas: Vec::new(), // synthetic maps read nothing: no locality
                })
                .collect(),
            partition_shares: vec![1.0],
            reduce_time: profile.reduce_time,
            reduce_noise: vec![1.0],
            reduce_noise_sigma: 0.0,
            shuffle_bandwidth: profile.shuffle_bandwidth,
        },
        profile: profile.clone(),
    };
    let exp = Experiment {
        cluster: ClusterConfig {
            nodes: 3,
            containers_per_node: 2,
            nodes_per_rack: 3,
            heartbeat: 0.5,
            // The profile's map time is measured as these maps run (none is local).
            rack_local_factor: 1.0,
            remote_factor: 1.0,
            ..ClusterConfig::default()
        },
        policy: PolicyConfig::default(),
        seed: 1,
        // As documented (docs/decisions/mapreduce-live.md, "Performance"): the prediction without
        // the deadline guard the live run has.
        guard: 0.0,
        ..Experiment::default()
    };
    let mdt = yard_sim::mdt(&job, &exp, 0);
    let config = DeadlineConfig {
        name: "live",
        delta: f64::from(TASK_CONTAINERS) / f64::from(MAPS),
        mu: deadline / mdt,
    };
    let plan = Plan::new(&job, config, &exp, mdt);
    let r = yard_sim::simulate(&job, &plan, PolicyKind::Dart, &exp, 0);
    let estimate = r.estimate(yard_sim::engine::Moment::MapClose);
    (estimate.map_or(f64::NAN, |e| e.total), r.completion, r.k)
}

fn main() {
    let dir = support::work_dir("yard-bench-mr");
    let cluster = support::cluster(&dir);
    let (url, profiles) = (cluster.url.clone(), cluster.profiles.clone());
    println!(
        "{MAPS} synthetic maps of {:.0} ms, one reduce of {:.0} ms, on 3 local nodemanagers ({TASK_CONTAINERS} task containers)",
        MAP_SECONDS * 1000.0,
        REDUCE_SECONDS * 1000.0
    );
    submit(&url, &["--sample-only"]);
    let full = submit(&url, &["--policy", "full"]);
    let full_job = &full["app"]["answer"]["job"];
    let o = &full_job["schedulingOverheadMs"];
    println!(
        "scheduling overhead per task (container free → next task process started), {} tasks: mean {:.1} ms, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        o["tasks"],
        o["mean"].as_f64().unwrap_or(f64::NAN),
        o["p50"].as_f64().unwrap_or(f64::NAN),
        o["p99"].as_f64().unwrap_or(f64::NAN),
        o["max"].as_f64().unwrap_or(f64::NAN)
    );
    let full_seconds = full_job["jobSeconds"].as_f64().unwrap_or(f64::NAN);
    let ideal =
        (f64::from(MAPS) / f64::from(TASK_CONTAINERS)).ceil() * MAP_SECONDS + REDUCE_SECONDS;
    println!(
        "full job: {full_seconds:.2} s (maps and reduce alone: {ideal:.2} s; {:.0} % of the job is overhead)",
        100.0 * (1.0 - ideal / full_seconds)
    );

    let deadline = Duration::from_secs_f64(full_seconds * 0.6);
    let dart = submit(
        &url,
        &[
            "--policy",
            "dart",
            "--deadline",
            &format!("{}ms", deadline.as_millis()),
        ],
    );
    let job = &dart["app"]["answer"]["job"];
    let (estimate, actual) = (
        job["estimateAtClose"].as_f64().unwrap_or(f64::NAN),
        job["jobSeconds"].as_f64().unwrap_or(f64::NAN),
    );
    let policy_deadline = job["policyDeadline"].as_f64().unwrap_or(f64::NAN);
    println!(
        "dart, deadline {:.2} s for the policy: k = {} of {MAPS}, finished at {actual:.2} s, deadline met: {}",
        policy_deadline, job["k"], job["deadlineMet"]
    );
    let profile = profile(&profiles);
    let (sim_estimate, sim_actual, sim_k) = simulated(&profile, policy_deadline);
    println!(
        "estimation error at map close: live {:.1} % (estimate {estimate:.2} s, actual {actual:.2} s); simulator {:.1} % (estimate {sim_estimate:.2} s, actual {sim_actual:.2} s, k = {sim_k})",
        100.0 * (actual - estimate).abs() / actual,
        100.0 * (sim_actual - sim_estimate).abs() / sim_actual,
    );
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
