//! A day of Facebook's production cluster (SWIM FB-2009, 5,894 jobs) through Dart on the
//! paper's cluster (64 × 2, scaled per job to hold its containers), on one core: simulated
//! events per second, wall time and peak memory. The `full` policy, run the same way in the
//! same process, is the baseline. Goals: ≥ 1,000,000 events/s and < 10 s for the day; memory
//! that grows with the running jobs, not with the trace.
//! Run: `cargo bench -p yard-sim --bench day` (`-- --quick` for the first 500 jobs).

use std::path::Path;
use std::time::Instant;

use yard_appmaster::policy::{PolicyConfig, PolicyKind};
use yard_sim::workloads::{WorkloadOptions, trace_jobs};
use yard_sim::{ClusterConfig, DeadlineConfig, Experiment, Plan, mdt, simulate};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;
use support::peak_mib;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces/swim/FB-2009_samples_24_times_1hr_0.tsv");
    let t = Instant::now();
    let workload = yard_workload::read_file(&path, &Default::default()).expect("the shipped trace");
    let read = t.elapsed();
    let options = WorkloadOptions::default();
    let exp = Experiment {
        cluster: ClusterConfig::default(),
        policy: PolicyConfig::default(),
        seed: 1,
        guard: 0.0, // the figures in docs/decisions/simulator.md are without the guard
        ..Experiment::default()
    };
    let jobs = if quick { 500 } else { workload.jobs.len() };
    println!(
        "FB-2009: {jobs} jobs, read in {:.0} ms; one core, C1 (δ = 1, μ = 0.95)",
        read.as_secs_f64() * 1e3
    );
    println!(
        "{:<6} {:>12} {:>10} {:>14} {:>10} {:>10}",
        "policy", "events", "wall s", "events/s", "vs full", "peak MiB"
    );
    let mut baseline = None;
    for kind in [PolicyKind::Full, PolicyKind::Dart] {
        let t = Instant::now();
        let mut events = 0u64;
        for (i, job) in trace_jobs(&workload, &options).take(jobs).enumerate() {
            let plan = Plan::new(&job, DeadlineConfig::C1, &exp, mdt(&job, &exp, i as u64));
            events += simulate(&job, &plan, kind, &exp, i as u64).events;
        }
        let wall = t.elapsed().as_secs_f64();
        let rate = events as f64 / wall;
        let ratio = rate / *baseline.get_or_insert(rate);
        let peak = peak_mib().map_or("?".to_owned(), |m| format!("{m:.0}"));
        println!(
            "{:<6} {events:>12} {wall:>10.2} {rate:>14.0} {ratio:>10.2} {peak:>10}",
            kind.name()
        );
    }
    println!(
        "wall time counts building each job, its MDT run and k_max oracle, and the policy run"
    );
}
