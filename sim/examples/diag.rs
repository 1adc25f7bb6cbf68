// Scratch diagnostic (not committed): why do single-map C3 jobs answer empty under dart+guard?
use yard_appmaster::policy::PolicyKind;
use yard_sim::workloads::{self, WorkloadOptions};
use yard_sim::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::Path::new(&args[1]);
    let cfg = DeadlineConfig::by_name(args.get(2).map(|s| s.as_str()).unwrap_or("C3")).unwrap();
    let limit: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let show: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(5);
    let w = yard_workload::read_file(path, &Default::default()).unwrap();
    let exp = Experiment {
        guard: engine::DEFAULT_GUARD_SECONDS,
        ..Experiment::default()
    };
    let options = WorkloadOptions {
        seed: 1,
        ..WorkloadOptions::default()
    }
    .with_model(&exp.model);
    let (mut n, mut empty, mut shown) = (0, 0, 0);
    let mut reasons = std::collections::BTreeMap::<String, u32>::new();
    for (i, job) in workloads::trace_jobs(&w, &options).enumerate().take(limit) {
        if job.tasks() == 0 || job.maps() != 1 {
            continue;
        }
        let m = mdt(&job, &exp, i as u64);
        let plan = Plan::new(&job, cfg, &exp, m);
        if plan.k_max == 0 {
            continue;
        }
        n += 1;
        let (r, log) = trace(&job, &plan, PolicyKind::Dart, &exp, i as u64);
        if r.processed_fraction > 0.0 {
            continue;
        }
        empty += 1;
        let launched = log
            .iter()
            .any(|(_, d)| matches!(d, yard_appmaster::policy::Decision::LaunchMap { .. }));
        let reason = format!(
            "launched={launched} guard_fired={} lone={}",
            r.guard_fired, r.lone_map
        );
        *reasons.entry(reason).or_default() += 1;
        if shown < show {
            shown += 1;
            println!(
                "job {} D={:.2} mdt={:.2} maps={:?} reduces={} guard={:.2} completion={:.2} phases={:?}",
                r.job,
                r.deadline,
                m,
                job.truth
                    .maps
                    .iter()
                    .map(|m| m.duration)
                    .collect::<Vec<_>>(),
                job.reduces(),
                r.guard,
                r.completion,
                r.phases
            );
            println!("  profile {:?}", job.profile);
            println!("  estimates {:?}", r.estimates);
            for (t, d) in &log {
                println!("  {t:.3} {d:?}");
            }
        }
    }
    println!("single-map k_max>=1: {n}, empty {empty}: {reasons:?}");
}
