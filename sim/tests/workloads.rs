//! Workloads built from the traces in `traces/` and from ARIA's Table I.

use std::path::Path;

use yard_sim::SimJob;
use yard_sim::workloads::{
    FACEBOOK_TABLE_I, WorkloadOptions, facebook_synthetic, from_trace, zipf_shares,
};
use yard_workload::{ReadOptions, Workload, read_file};

fn trace(name: &str) -> Workload {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces")).join(name);
    read_file(&path, &ReadOptions::default()).expect("a readable trace")
}

const FIRST50: &str = "swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv";
const FB2009: &str = "swim/FB-2009_samples_24_times_1hr_0.tsv";
const FOLDER: &str = "rumen/folder-input-trace.json";

fn seeded(seed: u64) -> WorkloadOptions {
    WorkloadOptions {
        seed,
        ..WorkloadOptions::default()
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn within(x: f64, target: f64, factor: f64) -> bool {
    x > target / factor && x < target * factor
}

/// e^9.9511 ms: the median of ARIA's map fit, seconds.
fn aria_map_median() -> f64 {
    9.9511f64.exp() / 1000.0
}

/// Named so that `cargo test -p yard-sim workloads` runs these beside the unit tests.
mod workloads {
    use super::*;

    #[test]
    fn a_seed_fixes_the_jobs_and_another_seed_changes_them() {
        let w = trace(FIRST50);
        assert_eq!(from_trace(&w, &seeded(3)), from_trace(&w, &seeded(3)));
        assert_ne!(from_trace(&w, &seeded(3)), from_trace(&w, &seeded(4)));
        assert_eq!(
            facebook_synthetic(40, 10.0, &seeded(3)),
            facebook_synthetic(40, 10.0, &seeded(3))
        );
        assert_ne!(
            facebook_synthetic(40, 10.0, &seeded(3)),
            facebook_synthetic(40, 10.0, &seeded(4))
        );
    }

    #[test]
    fn a_jobs_draws_do_not_depend_on_later_jobs() {
        let options = seeded(11);
        let first = from_trace(&trace(FIRST50), &options);
        let full = from_trace(&trace(FB2009), &options);
        assert_eq!(first[..], full[..50]);
    }

    #[test]
    fn how_profiles_are_measured_never_changes_the_jobs() {
        let options = seeded(11);
        let more_samples = WorkloadOptions {
            sample_maps: 7,
            sample_reduces: 9,
            ..seeded(11)
        };
        let a = from_trace(&trace(FIRST50), &options);
        let b = from_trace(&trace(FIRST50), &more_samples);
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(a.truth, b.truth, "{}", a.id);
        }
        assert!(a.iter().zip(&b).any(|(a, b)| a.profile != b.profile));
    }

    #[test]
    fn swim_jobs_keep_the_traces_shape_and_get_positive_durations() {
        let w = trace(FIRST50);
        let jobs = from_trace(&w, &WorkloadOptions::default());
        assert_eq!(jobs.len(), 50);
        for (job, sim) in w.jobs.iter().zip(&jobs) {
            assert_eq!(sim.id, job.id);
            assert_eq!(u64::from(sim.maps()), job.map_count());
            assert_eq!(u64::from(sim.reduces()), job.reduce_count());
            assert_eq!(sim.submit, (job.submit_ms - 49_000) as f64 / 1000.0);
            let inputs: u64 = sim.truth.maps.iter().map(|m| m.input_bytes).sum();
            assert_eq!(inputs, job.input_bytes());
            let outputs: u64 = sim.truth.maps.iter().map(|m| m.output_bytes).sum();
            match job.reduce_count() {
                0 => assert_eq!(outputs, 0, "{}: a map-only job has no output", job.id),
                r => assert_eq!(outputs, job.shuffle_bytes.unwrap().max(r)),
            }
            for m in &sim.truth.maps {
                assert!(m.duration.is_finite() && m.duration > 0.0, "{}", job.id);
            }
            for r in 0..sim.reduces() {
                let full = outputs as f64 * sim.truth.partition_shares[r as usize];
                let t = sim.truth.reduce_seconds(r, full);
                assert!(t.is_finite() && t > 0.0, "{} reduce {r}: {t}", job.id);
            }
        }
        assert_eq!(jobs[0].submit, 0.0);
    }

    #[test]
    fn a_tail_block_map_is_shorter_than_its_jobs_full_blocks() {
        let w = trace(FIRST50);
        let jobs = from_trace(&w, &WorkloadOptions::default());
        let block = WorkloadOptions::default().block_bytes;
        let job = jobs
            .iter()
            .find(|j| j.truth.maps.iter().any(|m| m.input_bytes < block / 4) && j.maps() > 10)
            .expect("a job with many full blocks and a short tail");
        let full = median(
            job.truth
                .maps
                .iter()
                .filter(|m| m.input_bytes == block)
                .map(|m| m.duration)
                .collect(),
        );
        let tail = job
            .truth
            .maps
            .iter()
            .find(|m| m.input_bytes < block)
            .unwrap();
        let fraction = tail.input_bytes as f64 / block as f64;
        // σ = 0.3 noise on either side: a factor 3 is more than 3σ.
        assert!(
            tail.duration < full * fraction.max(0.01) * 3.0,
            "{} vs {full}",
            tail.duration
        );
    }

    #[test]
    fn fb2009_map_durations_centre_on_arias_fit() {
        let jobs = from_trace(&trace(FB2009), &WorkloadOptions::default());
        let block = WorkloadOptions::default().block_bytes;
        // A job's full-block maps centre on its mean, one draw from ARIA's fit per job: the
        // median over jobs of their median full-block map is near the fit's median e^9.9511 ms
        // (a job's median map is e^{-σ_t²/2} ≈ 0.96 of its mean).
        let per_job: Vec<f64> = jobs
            .iter()
            .filter_map(|j| {
                let full: Vec<f64> = j
                    .truth
                    .maps
                    .iter()
                    .filter(|m| m.input_bytes == block)
                    .map(|m| m.duration)
                    .collect();
                (!full.is_empty()).then(|| median(full))
            })
            .collect();
        assert!(per_job.len() > 300, "{}", per_job.len());
        let m = median(per_job);
        assert!(
            within(m, aria_map_median(), 1.3),
            "median of job medians {m} s"
        );
        // Over every map, the huge jobs dominate; still within a plausible factor.
        let all = median(
            jobs.iter()
                .flat_map(|j| j.truth.maps.iter().map(|m| m.duration))
                .collect(),
        );
        assert!(within(all, aria_map_median(), 20.0), "median map {all} s");
    }

    #[test]
    fn rumen_jobs_replay_their_recorded_maps_and_reduces() {
        let w = trace(FOLDER);
        let jobs = from_trace(&w, &WorkloadOptions::default());
        assert_eq!(jobs.len(), 59);
        for (job, sim) in w.jobs.iter().zip(&jobs) {
            let recorded: Vec<f64> = job
                .map_tasks()
                .map(|t| t.duration_ms.unwrap() as f64 / 1000.0)
                .collect();
            let got: Vec<f64> = sim.truth.maps.iter().map(|m| m.duration).collect();
            assert_eq!(got, recorded, "{}", job.id);
            // Without skew, a reduce's input in a full run is its recorded shuffle bytes (at
            // least one), and its time the recorded one.
            let total: f64 = sim.truth.maps.iter().map(|m| m.output_bytes as f64).sum();
            for (r, task) in job.reduce_tasks().enumerate() {
                let share = sim.truth.partition_shares[r];
                let input = total * share;
                assert!((input - task.bytes.unwrap().max(1) as f64).abs() < 1e-6 * input.max(1.0));
                let want = task.duration_ms.unwrap() as f64 / 1000.0;
                let t = sim.truth.reduce_seconds(r as u32, input);
                assert!(
                    (t / want - 1.0).abs() < 1e-6,
                    "{} reduce {r}: {t} vs {want}",
                    job.id
                );
            }
            assert!(
                (sim.truth.partition_shares.iter().sum::<f64>() - 1.0).abs() < 1e-9
                    || sim.reduces() == 0
            );
            assert!(sim.truth.reduce_time.b >= 0.0 && sim.truth.reduce_time.b <= 2.0);
        }
        let submits: Vec<f64> = jobs.iter().map(|j| j.submit).collect();
        assert_eq!(submits.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
    }

    #[test]
    fn rumen_replicas_are_the_preferred_hosts_on_the_cluster() {
        let w = trace(FOLDER);
        let options = WorkloadOptions::default();
        let jobs = from_trace(&w, &options);
        let mut preferred = 0;
        for (job, sim) in w.jobs.iter().zip(&jobs) {
            for (task, m) in job.map_tasks().zip(&sim.truth.maps) {
                if !task.preferred.is_empty() {
                    preferred += 1;
                    let mut want: Vec<u32> = Vec::new();
                    for n in task.preferred.iter().map(|n| n.0 % options.nodes) {
                        if !want.contains(&n) {
                            want.push(n);
                        }
                    }
                    assert_eq!(m.replicas, want);
                }
            }
        }
        assert!(preferred > 100, "{preferred}");
    }

    #[test]
    fn replicas_are_distinct_valid_nodes_on_two_racks() {
        let options = WorkloadOptions::default();
        let jobs = from_trace(&trace(FIRST50), &options);
        let racks = |n: &u32| n / options.nodes_per_rack;
        for m in jobs.iter().flat_map(|j| &j.truth.maps) {
            let mut nodes = m.replicas.clone();
            assert_eq!(nodes.len(), 3);
            assert!(nodes.iter().all(|&n| n < options.nodes));
            let mut on: Vec<u32> = nodes.iter().map(racks).collect();
            on.dedup();
            assert!(
                on.len() >= 2 || racks(&nodes[0]) != racks(&nodes[2]),
                "{nodes:?}"
            );
            nodes.sort_unstable();
            nodes.dedup();
            assert_eq!(nodes.len(), 3);
        }
    }

    #[test]
    fn skew_gives_zipf_shares_that_sum_to_one_and_fall() {
        let options = WorkloadOptions {
            skew: 1.2,
            ..WorkloadOptions::default()
        };
        for jobs in [
            from_trace(&trace(FIRST50), &options),
            from_trace(&trace(FOLDER), &options),
        ] {
            let skewed: Vec<&SimJob> = jobs.iter().filter(|j| j.reduces() > 1).collect();
            assert!(!skewed.is_empty());
            for job in skewed {
                let shares = &job.truth.partition_shares;
                assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9);
                assert!(shares.windows(2).all(|w| w[0] > w[1]), "{shares:?}");
                assert_eq!(shares, &zipf_shares(job.reduces(), 1.2));
            }
        }
        for job in from_trace(&trace(FIRST50), &WorkloadOptions::default()) {
            let r = job.reduces() as usize;
            assert!(
                job.truth
                    .partition_shares
                    .iter()
                    .all(|&s| s == 1.0 / r as f64)
            );
        }
    }

    #[test]
    fn the_synthetic_workload_has_table_ones_bins_and_arias_medians() {
        let jobs = facebook_synthetic(1000, 100.0, &WorkloadOptions::default());
        assert_eq!(jobs.len(), 1000);
        for bin in FACEBOOK_TABLE_I {
            let n = jobs
                .iter()
                .filter(|j| j.maps() == bin.maps && j.reduces() == bin.reduces)
                .count();
            assert_eq!(n, bin.jobs as usize, "{bin:?}");
        }
        let maps: Vec<f64> = jobs
            .iter()
            .flat_map(|j| j.truth.maps.iter().map(|m| m.duration))
            .collect();
        assert!(within(median(maps.clone()), aria_map_median(), 1.05));
        let logs: Vec<f64> = maps.iter().map(|d| (d * 1000.0).ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        assert!(
            (mean - 9.9511).abs() < 0.02 && (sd - 1.6764).abs() < 0.02,
            "{mean} {sd}"
        );
        // Reduces on their full, even input take their drawn time: LN(12.375, 1.6262) ms.
        let reduces: Vec<f64> = jobs
            .iter()
            .flat_map(|j| {
                let total: f64 = j.truth.maps.iter().map(|m| m.output_bytes as f64).sum();
                (0..j.reduces()).map(move |r| {
                    j.truth
                        .reduce_seconds(r, total * j.truth.partition_shares[r as usize])
                })
            })
            .collect();
        assert!(reduces.len() > 10_000);
        assert!(within(median(reduces), 12.375f64.exp() / 1000.0, 1.1));
        // Poisson arrivals: gaps average the mean.
        let last = jobs.last().unwrap().submit;
        assert!(within(last / 999.0, 100.0, 1.15), "{last}");
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
    }

    #[test]
    fn profiles_come_from_sample_runs_near_but_not_at_the_truth() {
        let options = WorkloadOptions::default();
        let jobs = from_trace(&trace(FB2009), &options);
        let mut checked = 0;
        for job in jobs.iter().filter(|j| j.maps() >= 20 && j.reduces() > 0) {
            let t = &job.truth;
            let p = &job.profile;
            let mean = t.maps.iter().map(|m| m.duration).sum::<f64>() / t.maps.len() as f64;
            assert_ne!(p.map_local, mean);
            assert!(
                within(p.map_local, mean, 2.0),
                "{}: {} vs {mean}",
                job.id,
                p.map_local
            );
            // Pooled over the runs, remote and local means agree to rounding.
            let remote = p.map_local * options.remote_factor;
            assert!(
                (p.map_remote / remote - 1.0).abs() < 1e-12,
                "{} vs {remote}",
                p.map_remote
            );
            assert_ne!(p.shuffle_bandwidth, t.shuffle_bandwidth);
            assert!(within(p.shuffle_bandwidth, t.shuffle_bandwidth, 1.6));
            assert_ne!(p.reduce_time, t.reduce_time);
            let d = t.maps.iter().map(|m| m.output_bytes as f64).sum::<f64>()
                / f64::from(job.reduces());
            // Five sampler reduces and the earlier run's R, each with σ = 0.2 noise.
            assert!(
                within(p.reduce_time.at(d), t.reduce_time.at(d), 2.0),
                "{}: {:?} vs {:?} at {d}",
                job.id,
                p.reduce_time,
                t.reduce_time
            );
            // The spread of ln e is measured, not copied; with 50+ reduces it is near σ.
            assert_ne!(p.reduce_time.spread, options.reduce_noise);
            if job.reduces() >= 50 {
                let spread = p.reduce_time.spread;
                assert!(
                    (spread / options.reduce_noise - 1.0).abs() < 0.3,
                    "{spread}"
                );
            }
            let output: f64 = t.maps.iter().map(|m| m.output_bytes as f64).sum();
            let want = output / f64::from(job.maps()) / f64::from(job.reduces());
            assert!((p.partition_bytes / want - 1.0).abs() < 1e-9);
            assert_eq!(p.previous_runs.len(), 1);
            assert_eq!(p.previous_runs[0].k, job.maps());
            assert!(within(p.previous_runs[0].max_reduce_input, d, 1.6));
            checked += 1;
        }
        assert!(checked > 20, "{checked}");
        for job in jobs.iter().filter(|j| j.reduces() == 0).take(50) {
            assert!(job.profile.previous_runs.is_empty());
            assert_eq!(job.profile.partition_bytes, 0.0);
        }
    }

    #[test]
    fn a_profile_meets_the_spread_of_the_jobs_own_reduces() {
        // ARIA's synthetic reduces are each drawn from LN(12.375, 1.6262) ms: their times
        // spread far more than the default noise (σ 0.2). A sample run of such a job meets
        // that spread, so its profile must: fitted at σ 0.2, Alg. 5 and `T_R` took the last of
        // 50 reduces for 1.6× the mean where it is ~40×.
        let options = WorkloadOptions::default();
        let jobs = facebook_synthetic(200, 100.0, &options);
        let mut checked = 0;
        for job in jobs.iter().filter(|j| j.reduces() >= 50) {
            let logs: Vec<f64> = job.truth.reduce_noise.iter().map(|e| e.ln()).collect();
            let n = logs.len() as f64;
            let m = logs.iter().sum::<f64>() / n;
            let truth = (logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let spread = job.profile.reduce_time.spread;
            assert!(truth > 1.0, "{}: truth's σ {truth}", job.id);
            assert!(
                (spread / truth - 1.0).abs() < 0.3,
                "{}: profile σ {spread}, truth's {truth}",
                job.id
            );
            checked += 1;
        }
        assert!(checked >= 5, "{checked}");
    }

    #[test]
    fn every_trace_with_tasks_builds_sane_jobs() {
        let traces = [
            "rumen/2jobs2min-rumen-jh.json",
            "rumen/counters-test-trace.json",
            "rumen/gridmix-wordcount.json",
            FOLDER,
            "sls/inputsls.json",
            "sls/sls_dag.json",
            "sls/syn.json",
            "sls/syn_generic.json",
            "swim/Additional_Workloads_Placeholder.tsv",
        ];
        for name in traces {
            let w = trace(name);
            let jobs = from_trace(&w, &WorkloadOptions::default());
            assert_eq!(jobs.len(), w.jobs.len(), "{name}");
            for (job, sim) in w.jobs.iter().zip(&jobs) {
                assert_eq!(u64::from(sim.maps()), job.map_count(), "{name}");
                for m in &sim.truth.maps {
                    assert!(
                        m.duration.is_finite() && m.duration > 0.0,
                        "{name} {}",
                        job.id
                    );
                    assert!(!m.replicas.is_empty() && m.replicas.iter().all(|&n| n < 64));
                }
                let total: f64 = sim.truth.maps.iter().map(|m| m.output_bytes as f64).sum();
                for (r, share) in sim.truth.partition_shares.iter().enumerate() {
                    let t = sim.truth.reduce_seconds(r as u32, total * share);
                    assert!(t.is_finite() && t > 0.0, "{name} {} reduce {r}", job.id);
                }
                let p = &sim.profile;
                assert!(p.map_local.is_finite() && p.map_local > 0.0, "{name}");
                assert!(p.shuffle_bandwidth.is_finite() && p.shuffle_bandwidth > 0.0);
                assert!(p.reduce_time.a.is_finite() && p.reduce_time.b.is_finite());
                assert!(sim.submit >= 0.0);
            }
        }
    }

    #[test]
    fn a_rumen_profile_is_sampled_not_copied() {
        let w = trace(FOLDER);
        let jobs = from_trace(&w, &WorkloadOptions::default());
        for job in jobs.iter().filter(|j| j.maps() >= 10) {
            let mean =
                job.truth.maps.iter().map(|m| m.duration).sum::<f64>() / f64::from(job.maps());
            assert_ne!(job.profile.map_local, mean);
            // Three samples of a spread like job 10049's (2.5–24 s, σ ≈ 0.8 in ln) stray further
            // than SWIM's σ = 0.3 ones.
            assert!(
                within(job.profile.map_local, mean, 4.0),
                "{}: {} vs {mean}",
                job.id,
                job.profile.map_local
            );
        }
    }

    #[test]
    fn synthetic_workloads_of_any_size() {
        assert!(facebook_synthetic(0, 100.0, &WorkloadOptions::default()).is_empty());
        let jobs = facebook_synthetic(7, 0.0, &WorkloadOptions::default());
        assert_eq!(jobs.len(), 7);
        assert!(jobs.iter().all(|j| j.submit == 0.0));
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["fb0", "fb1", "fb2", "fb3", "fb4", "fb5", "fb6"]);
    }

    #[test]
    fn sampled_profiles_measure_what_noisy_truth_profiles_copy() {
        use yard_sim::{Model, ProfileSource};
        // The first 400 FB-2009 jobs with reduces and at least 4 maps (3 are sampled).
        let w = trace(FB2009);
        let jobs = |profiles: ProfileSource| -> Vec<SimJob> {
            let model = Model {
                profiles,
                ..Model::default()
            };
            from_trace(&w, &seeded(1).with_model(&model))
                .into_iter()
                .filter(|j| j.reduces() > 0 && j.maps() >= 4)
                .take(400)
                .collect()
        };
        let true_partition = |j: &SimJob| {
            let output: f64 = j.truth.maps.iter().map(|m| m.output_bytes as f64).sum();
            output / f64::from(j.maps()) / f64::from(j.reduces())
        };
        let log_error = |got: f64, truth: f64| (got / truth).ln().abs();
        let (copied, sampled) = (
            jobs(ProfileSource::NoisyTruth),
            jobs(ProfileSource::Sampled),
        );
        assert!(copied.len() >= 100, "{}", copied.len());
        // noisy-truth: the truth's output per map, exactly; the truth's bandwidth × e^±(3σ).
        for j in &copied {
            assert!(log_error(j.profile.partition_bytes, true_partition(j)) < 1e-9);
            assert!(log_error(j.profile.shuffle_bandwidth, j.truth.shuffle_bandwidth) < 0.5);
        }
        // sampled: measured on three maps whose output ratios vary: not the truth's; the
        // bandwidth as the profiler reads the reduces' timed fetches: the link's own.
        let exact = sampled
            .iter()
            .filter(|j| log_error(j.profile.partition_bytes, true_partition(j)) < 1e-3)
            .count();
        assert!(
            exact * 20 < sampled.len(),
            "{exact} of {} exact",
            sampled.len()
        );
        let mean = |v: &[SimJob], f: &dyn Fn(&SimJob) -> f64| {
            v.iter().map(f).sum::<f64>() / v.len() as f64
        };
        let partition = |j: &SimJob| log_error(j.profile.partition_bytes, true_partition(j));
        let bandwidth =
            |j: &SimJob| log_error(j.profile.shuffle_bandwidth, j.truth.shuffle_bandwidth);
        let (p, b) = (mean(&sampled, &partition), mean(&sampled, &bandwidth));
        assert!(
            p > 0.05 && p < 0.5,
            "mean |log error| of the output per map: {p}"
        );
        // Timed fetches measure the link (the window from the first arrival to the last
        // counted the waits between the maps' ends: 1e3–1e4 times slow on large jobs).
        assert!(b < 1e-9, "bandwidth: mean |log error| {b}");
        // The truth's total output is the trace's either way; only how it spreads differs.
        for (a, b) in copied.iter().zip(&sampled) {
            let total = |j: &SimJob| j.truth.maps.iter().map(|m| m.output_bytes).sum::<u64>();
            assert_eq!((a.id.as_str(), total(a)), (b.id.as_str(), total(b)));
        }
    }

    #[test]
    fn pareto_durations_change_the_tasks_not_the_jobs() {
        use yard_sim::{Model, TaskLaw};
        let w = trace(FIRST50);
        let pareto = Model {
            durations: TaskLaw::Pareto,
            ..Model::default()
        };
        let (a, b) = (
            from_trace(&w, &seeded(2)),
            from_trace(&w, &seeded(2).with_model(&pareto)),
        );
        let mut changed = 0;
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(
                (&a.id, a.maps(), a.reduces()),
                (&b.id, b.maps(), b.reduces())
            );
            if a.truth
                .maps
                .iter()
                .zip(&b.truth.maps)
                .any(|(x, y)| x.duration != y.duration)
            {
                changed += 1;
            }
        }
        assert!(
            changed >= 45,
            "{changed} of 50 jobs have other map durations"
        );
    }
}

/// `T_l^a` is the earlier runs' mean map (Dart §5.3), as the live `Profiler` averages them:
/// the more runs, the nearer the job's own mean map; with none, the three sample maps alone.
/// Every run has its own draws, and each job's truth is drawn before its profile, so the jobs
/// are the same under every count.
#[test]
fn more_earlier_runs_bring_the_profiles_map_time_nearer_the_jobs() {
    let w = trace(FB2009);
    let jobs = |runs: usize| {
        let o = WorkloadOptions {
            earlier_runs: runs,
            ..seeded(1)
        };
        let jobs: Vec<SimJob> = from_trace(&w, &o)
            .into_iter()
            .filter(|j| j.maps() >= 2)
            .take(1000)
            .collect();
        let off: f64 = jobs
            .iter()
            .map(|j| {
                let maps = &j.truth.maps;
                let truth = maps.iter().map(|m| m.duration).sum::<f64>() / maps.len() as f64;
                (j.profile.map_local / truth).ln().abs()
            })
            .sum::<f64>()
            / jobs.len() as f64;
        (jobs, off)
    };
    let (none, e0) = jobs(0);
    let (one, e1) = jobs(1);
    let (five, e5) = jobs(5);
    for (a, b) in [(&none, &one), (&one, &five)] {
        assert!(
            a.iter().zip(b).all(|(a, b)| a.truth == b.truth),
            "the jobs themselves do not move"
        );
    }
    assert!(e1 < 0.8 * e0 && e5 < 0.95 * e1, "{e0} {e1} {e5}");
    // Five runs, as the live store keeps (`RECENT_RUNS`), average five spreads too.
    let spread = |js: &[SimJob]| js.iter().map(|j| j.profile.map_spread).collect::<Vec<_>>();
    assert_ne!(spread(&five), spread(&one));
    // No earlier run: no spread measured, and no `(k_i, d_{k_i})`.
    assert!(none.iter().all(|j| j.profile.map_spread.is_none()));
    assert!(none.iter().all(|j| j.profile.previous_runs.is_empty()));
    assert!(
        five.iter()
            .all(|j| j.profile.previous_runs.len() == 5 || j.reduces() == 0)
    );
}

/// `--oracle-reduce-law` gives each profile the truth's `f(d)` as a median with the job's own
/// noise spread, and moves nothing else: the jobs' truths and the rest of their profiles are
/// the same draws as without it, and without it the fit differs from the truth.
#[test]
fn the_oracle_reduce_law_is_the_truths_and_moves_no_draw() {
    let w = trace(FIRST50);
    let oracle = WorkloadOptions {
        oracle_reduce_law: true,
        ..seeded(3)
    };
    let (fitted, known) = (from_trace(&w, &seeded(3)), from_trace(&w, &oracle));
    let mut with_reduces = 0;
    let mut fit_differs = 0;
    for (f, k) in fitted.iter().zip(&known) {
        assert_eq!(f.truth, k.truth, "{}: the truth is drawn alike", f.id);
        let law = k.profile.reduce_time;
        assert_eq!(
            (f.profile.map_local, f.profile.partition_bytes),
            (k.profile.map_local, k.profile.partition_bytes),
            "{}",
            f.id
        );
        if k.reduces() == 0 {
            continue;
        }
        with_reduces += 1;
        let (truth, sigma) = (k.truth.reduce_time, k.truth.reduce_noise_sigma);
        assert_eq!(law.b, truth.b, "{}", k.id);
        assert!((law.a - truth.a * (-sigma * sigma / 2.0).exp()).abs() <= 1e-12 * truth.a);
        assert_eq!(law.spread, sigma, "{}", k.id);
        if f.profile.reduce_time.b != truth.b {
            fit_differs += 1;
        }
    }
    assert!(with_reduces >= 20, "{with_reduces} jobs with reduces");
    assert_eq!(
        fit_differs, with_reduces,
        "a fit is never the truth exactly"
    );
}
