//! `yard sim --explain JOB`: one job under one configuration and policy, decision by decision,
//! with its truth and its profile beside them — what a reader of the report's figures needs
//! to see why one job answered as it did (found useful enough, as a throwaway, to keep).

use std::fmt::Write as _;

use yard_appmaster::policy::PolicyKind;

use crate::config::DeadlineConfig;
use crate::engine::{Experiment, Moment, Plan, mdt, trace};
use crate::job::SimJob;

/// The text for `job` (the `index`-th job of the run, which keys its draws as in the report's
/// run) under `config` and `policy`, guarded as the report's `+guard` row is when `exp` has a
/// guard for it, else as its plain row.
pub fn explain(
    job: &SimJob,
    index: u64,
    config: DeadlineConfig,
    policy: PolicyKind,
    exp: &Experiment,
) -> String {
    let mdt = mdt(job, exp, index);
    let plan = Plan::new(job, config, exp, mdt);
    let guarded = exp
        .guard_for(policy, plan.deadline)
        .is_some_and(|g| g > 0.0);
    let run = match guarded {
        true => exp.clone(),
        false => exp.unguarded(),
    };
    let (r, log) = trace(job, &plan, policy, &run, index);
    let round = |x: f64| (x * 100.0).round() / 100.0;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "job {} under {}{} in {}: {} maps, {} reduces; MDT {mdt:.2} s, D {:.2} s, k_max {} \
         (the byte oracle's share {:.3}, {})",
        job.id,
        policy.name(),
        if guarded { "+guard" } else { "" },
        config.name,
        job.maps(),
        job.truth.reduces(),
        plan.deadline,
        plan.k_max,
        plan.byte_max_fraction,
        if plan.byte_max_exact {
            "exact"
        } else {
            "an upper bound"
        },
    );
    let _ = writeln!(
        t,
        "truth: map seconds {:?}",
        job.truth
            .maps
            .iter()
            .map(|m| round(m.duration))
            .collect::<Vec<_>>()
    );
    let _ = writeln!(
        t,
        "truth: map output bytes {:?}",
        job.truth
            .maps
            .iter()
            .map(|m| m.output_bytes)
            .collect::<Vec<_>>()
    );
    let _ = writeln!(
        t,
        "truth: reduce law {:?}, noise draws {:?} (σ {})",
        job.truth.reduce_time,
        job.truth
            .reduce_noise
            .iter()
            .map(|&e| round(e))
            .collect::<Vec<_>>(),
        job.truth.reduce_noise_sigma
    );
    let _ = writeln!(t, "profile: {:?}", job.profile);
    let _ = writeln!(t, "decisions (seconds from the job's start):");
    for (at, d) in log {
        let _ = writeln!(t, "{at:10.3}  {d:?}");
    }
    let _ = writeln!(
        t,
        "answered at {:.3} s ({}), k {}, processed {:.3}; true phases {:?}",
        r.completion,
        r.outcome().name(),
        r.k,
        r.processed_fraction,
        r.phases
    );
    let pct = |e: Option<f64>| e.map_or("—".into(), |e| format!("{:.1} %", 100.0 * e));
    let _ = writeln!(
        t,
        "estimate at map close {:?}; error {} (uncapped {}, the reduce-noise floor's {})",
        r.estimate(Moment::MapClose),
        pct(r.estimation_error()),
        pct(r.uncapped_estimation_error()),
        pct(r.floor_error()),
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{WorkloadOptions, trace_jobs};

    #[test]
    fn a_job_is_explained_decision_by_decision_with_its_truth_and_answer() {
        let w = yard_workload::read_file(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv"
            )
            .as_ref(),
            &Default::default(),
        )
        .unwrap();
        let exp = Experiment {
            guard: 1.0,
            ..Experiment::default()
        };
        let options = WorkloadOptions {
            seed: exp.seed,
            ..WorkloadOptions::default()
        }
        .with_model(&exp.model);
        let (i, job) = trace_jobs(&w, &options)
            .enumerate()
            .find(|(_, j)| j.maps() >= 2 && j.truth.reduces() > 0)
            .expect("a job of two maps and a reduce");
        let c2 = DeadlineConfig::by_name("C2").unwrap();
        let text = explain(&job, i as u64, c2, PolicyKind::Dart, &exp);
        assert!(
            text.starts_with(&format!("job {} under dart+guard in C2", job.id)),
            "{text}"
        );
        assert!(
            text.contains("LaunchMap") && text.contains("CloseMapPhase"),
            "{text}"
        );
        assert!(text.contains("answered at") && text.contains("estimate at map close"));
        // The same job and seed explain the same way.
        assert_eq!(text, explain(&job, i as u64, c2, PolicyKind::Dart, &exp));
    }
}
