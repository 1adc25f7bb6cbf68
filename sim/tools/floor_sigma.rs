//! How the reduce-noise floor of the estimation error (`yard_sim::floor`) moves with the
//! reduces' noise σ (`WorkloadOptions::reduce_noise`, which `yard sim` has no flag for): a
//! SWIM trace's jobs of two or more maps, C1–C3, `dart` with and without the default 1 s guard,
//! as `yard sim --min-maps 2 --configs C1,C2,C3 --policies dart` runs them but for σ; per σ
//! and configuration, the p80 estimation error at map close beside the floor's p80, each the
//! mean over the seeds. Changing σ changes the truth's reduce times and the task sampler's
//! measurements alike.
//!
//! Run: `cargo run --release -p yard-sim --example floor_sigma -- TRACE [SIGMAS] [SEEDS]`,
//! e.g. `… -- traces/swim/FB-2009_samples_24_times_1hr_0.tsv 0.05,0.1,0.2 3`.

use std::path::PathBuf;
use std::process::ExitCode;

use yard_appmaster::policy::PolicyKind;
use yard_sim::engine::DEFAULT_GUARD_SECONDS;
use yard_sim::experiment::{self, Setup};
use yard_sim::report::{self, Row};
use yard_sim::workloads::{WorkloadOptions, trace_jobs};
use yard_sim::{DeadlineConfig, Experiment};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().map(PathBuf::from) else {
        eprintln!("usage: floor_sigma TRACE [SIGMAS, default 0.05,0.1,0.2] [SEEDS, default 3]");
        return ExitCode::from(2);
    };
    let sigmas: Result<Vec<f64>, _> = args
        .get(1)
        .map_or("0.05,0.1,0.2", String::as_str)
        .split(',')
        .map(|s| s.trim().parse::<f64>())
        .collect();
    let seeds: Result<u64, _> = args.get(2).map_or(Ok(3), |s| s.parse());
    let (Ok(sigmas), Ok(seeds)) = (sigmas, seeds) else {
        eprintln!("SIGMAS is a comma-separated list of numbers, SEEDS a count");
        return ExitCode::from(2);
    };
    if sigmas.iter().any(|s| !(s.is_finite() && *s >= 0.0)) || seeds == 0 {
        eprintln!("each σ must be a finite number ≥ 0, and SEEDS at least 1");
        return ExitCode::from(2);
    }
    let workload = match yard_workload::read_file(&path, &Default::default()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{}: jobs of two or more maps; p80 estimation error at map close | floor's p80, %, mean over seeds 1–{seeds}",
        path.display()
    );
    println!("| σ | policy | C1 | C2 | C3 |\n|---:|---|---|---|---|");
    for sigma in sigmas {
        let mut rows: Vec<Vec<Row>> = Vec::new();
        for seed in 1..=seeds {
            let options = WorkloadOptions {
                seed,
                reduce_noise: sigma,
                ..WorkloadOptions::default()
            };
            let setup = Setup {
                name: "custom".into(),
                configs: DeadlineConfig::ALL.to_vec(),
                policies: vec![PolicyKind::Dart],
                experiment: Experiment {
                    seed,
                    guard: DEFAULT_GUARD_SECONDS,
                    ..Experiment::default()
                },
            };
            let jobs = trace_jobs(&workload, &options).filter(|j| j.maps() >= 2);
            let ran = experiment::run(jobs, &setup, &|_| {});
            rows.push(report::rows(
                &ran.results,
                &["C1", "C2", "C3"],
                &setup.policies,
            ));
        }
        for policy in ["dart", "dart+guard"] {
            let cell = |config: &str| {
                let of = |f: fn(&Row) -> Option<f64>| {
                    let v: Vec<f64> = rows
                        .iter()
                        .filter_map(|r| {
                            r.iter().find(|r| {
                                r.config == config && r.policy == policy && r.bin == "two-plus"
                            })
                        })
                        .filter_map(f)
                        .collect();
                    100.0 * v.iter().sum::<f64>() / v.len().max(1) as f64
                };
                format!(
                    "{:.1} | {:.1}",
                    of(|r| r.p80_estimation_error),
                    of(|r| r.p80_floor_error)
                )
            };
            println!(
                "| {sigma} | {policy} | {} | {} | {} |",
                cell("C1"),
                cell("C2"),
                cell("C3")
            );
        }
    }
    ExitCode::SUCCESS
}
