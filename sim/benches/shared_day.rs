//! A whole day on ONE shared cluster (issue 16 item 7): SWIM FB-2009 (5,894 jobs) on the
//! paper's 64 × 2 containers and FB-2010 (24,442 jobs) on 3,000 nodes, every job's master
//! running `dart` under the rm's `minedf-wc`, on one core (the day is one thread; `T_J`, the
//! jobs alone, is computed first and timed apart). The baseline, run first in the same
//! process on the same jobs, is `full` under `fifo`. Prints events (the task policies' and
//! the rm's), wall time, events per second and its ratio to the baseline, and peak memory.
//! Goals: the FB-2009 day in under 60 s, the FB-2010 day in under 5 min and 2 GiB.
//! Run: `cargo bench -p yard-sim --bench shared_day` (`-- --quick`: the first 1,000 jobs of
//! each day).

use std::path::Path;
use std::time::Instant;

use yard_appmaster::policy::PolicyKind;
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_sim::Experiment;
use yard_sim::shared::{DeadlineFactor, prepare, simulate_day};
use yard_sim::workloads::{WorkloadOptions, trace_jobs};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;
use support::peak_mib;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    for (file, nodes) in [
        ("FB-2009_samples_24_times_1hr_0.tsv", 64u32),
        ("FB-2010_samples_24_times_1hr_0.tsv", 3_000),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../traces/swim")
            .join(file);
        let workload =
            yard_workload::read_file(&path, &Default::default()).expect("the shipped trace");
        let mut exp = Experiment::default();
        exp.cluster.nodes = nodes;
        let jobs: Vec<_> = trace_jobs(&workload, &WorkloadOptions::default())
            .take(if quick { 1_000 } else { usize::MAX })
            .collect();
        let n = jobs.len();
        let t = Instant::now();
        let jobs = prepare(jobs, &exp, DeadlineFactor::ARIA, 1.0);
        println!(
            "{file}: {n} jobs on {nodes} × 2 containers; T_J of every job (all cores) in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        println!(
            "{:<20} {:>12} {:>10} {:>14} {:>10} {:>10}",
            "rm + task policy", "events", "wall s", "events/s", "vs base", "peak MiB"
        );
        let mut baseline = None;
        for (rm, policy) in [
            (RmPolicy::Fifo, PolicyKind::Full),
            (RmPolicy::MinEdfWc, PolicyKind::Dart),
        ] {
            let t = Instant::now();
            let (results, stats) = simulate_day(&jobs, rm, policy, &exp);
            let wall = t.elapsed().as_secs_f64();
            let events = stats.rm_events + stats.policy_events;
            let rate = events as f64 / wall;
            let ratio = rate / *baseline.get_or_insert(rate);
            let peak = peak_mib().map_or("?".to_owned(), |m| format!("{m:.0}"));
            println!(
                "{:<20} {events:>12} {wall:>10.2} {rate:>14.0} {ratio:>10.2} {peak:>10}",
                format!("{} + {}", rm.name(), policy.name())
            );
            assert_eq!(results.len(), n);
        }
    }
}
