use super::*;
use crate::config::ProgressModel;
use yard_appmaster::policy::PowerLaw;

/// One node, one container, maps of fixed durations, no reduces: the answer is the sum.
fn tiny(durations: &[f64], reduces: u32) -> SimJob {
    SimJob::scripted("tiny", 0.0, durations, reduces)
}

fn experiment(nodes: u32) -> Experiment {
    Experiment {
        cluster: ClusterConfig {
            nodes,
            containers_per_node: 1,
            nodes_per_rack: 1,
            heartbeat: 1.0,
            ..ClusterConfig::default()
        },
        policy: PolicyConfig::default(),
        seed: 1,
        guard: 0.0,
        model: Model::default(),
    }
}

fn plan(job: &SimJob, exp: &Experiment, delta: f64, mu: f64) -> Plan {
    let config = DeadlineConfig {
        name: "T",
        delta,
        mu,
    };
    Plan::new(job, config, exp, mdt(job, exp, 0))
}

#[test]
fn one_map_one_container_finishes_after_its_duration() {
    let job = tiny(&[10.0], 0);
    let exp = experiment(1);
    let p = plan(&job, &exp, 1.0, 10.0);
    assert_eq!(p.mdt, 10.0);
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    assert_eq!((r.completion, r.k, r.k_max), (10.0, 1, 1));
    assert!(!r.missed());
}

#[test]
fn three_maps_on_one_container_run_back_to_back_then_shuffle_and_reduce() {
    // δ = 1/3 of MRA 3 → one container: maps end at 10, 20, 30; each 1000 B output takes 1 s
    // on the link; the reduce gets 3000 B at 31 and takes 3 s: done at 34.
    let job = tiny(&[10.0, 10.0, 10.0], 1);
    let exp = experiment(1);
    let p = plan(&job, &exp, 1.0 / 3.0, 100.0);
    assert_eq!(p.containers, 1);
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    assert!((r.completion - 34.0).abs() < 1e-6, "{r:?}");
    assert_eq!(r.processed_fraction, 1.0);
}

#[test]
fn the_true_phases_are_the_map_end_the_shuffle_left_and_the_reduces() {
    // As above: maps end at 10, 20, 30; the last output has crossed at 31; the reduce ends
    // at 34.
    let job = tiny(&[10.0, 10.0, 10.0], 1);
    let exp = experiment(1);
    let p = plan(&job, &exp, 1.0 / 3.0, 100.0);
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    let t = r.phases.expect("finished");
    assert!((t.map - 30.0).abs() < 1e-6, "{t:?}");
    assert!((t.shuffle - 1.0).abs() < 1e-6, "{t:?}");
    assert!((t.reduce - 3.0).abs() < 1e-6, "{t:?}");
    assert_eq!(t.total, r.completion);
    // Dart estimates at each moment: after the first grant, at map close, and as the
    // (only) reduce finishes.
    let r = simulate(&job, &p, PolicyKind::Dart, &exp, 0);
    for m in Moment::ALL {
        assert!(r.estimate(m).is_some(), "{m:?}: {r:?}");
    }
    assert!(r.phase_error(Moment::MapClose, Phase::Total).is_some());
    assert_eq!(r.phase_error(Moment::FirstReduce, Phase::Map), None);
    // A map-only job: no shuffle, no reduce phase; their errors are undefined.
    let job = tiny(&[10.0, 10.0], 0);
    let p = plan(&job, &exp, 0.5, 100.0);
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    let t = r.phases.unwrap();
    assert_eq!(
        (t.map, t.shuffle, t.reduce, t.total),
        (20.0, 0.0, 0.0, 20.0)
    );
    assert_eq!(
        r.estimate(Moment::FirstReduce),
        None,
        "no reduce ever finished"
    );
    assert_eq!(r.phase_error(Moment::MapClose, Phase::Shuffle), None);
    // A true phase under a millisecond is too short to measure an error against.
    let mut short = r.clone();
    short.phases = Some(Estimate {
        shuffle: 0.5e-3,
        ..t
    });
    short.estimates[1] = Some(Estimate { shuffle: 1.0, ..t });
    assert_eq!(short.phase_error(Moment::MapClose, Phase::Shuffle), None);
    short.phases = Some(Estimate { shuffle: 2e-3, ..t });
    assert!(short.phase_error(Moment::MapClose, Phase::Shuffle).unwrap() > 400.0);
}

#[test]
fn scripted_jobs_end_met_empty_and_missed() {
    let exp = experiment(1);
    // Met: a loose deadline, every map read by D.
    let job = tiny(&[10.0, 10.0], 1);
    let p = plan(&job, &exp, 0.5, 2.0);
    let r = simulate(&job, &p, PolicyKind::Dart, &exp, 0);
    assert_eq!((r.outcome(), r.k), (Outcome::Met, 2), "{r:?}");
    assert!(r.processed_fraction > 0.99 && r.data_vs_oracle() == Some(r.processed_fraction));
    // Empty: D is half of the only map's time; the profile says so, and Dart answers at
    // once from nothing. By D, but not a met deadline.
    let job = tiny(&[10.0], 0);
    let p = plan(&job, &exp, 1.0, 0.5);
    assert_eq!(p.k_max, 0);
    let r = simulate(&job, &p, PolicyKind::Dart, &exp, 0);
    assert!(!r.missed(), "{r:?}");
    assert_eq!((r.outcome(), r.k), (Outcome::Empty, 0), "{r:?}");
    assert_eq!(r.data_vs_oracle(), None, "k_max = 0");
    // Missed: `full` reads it all whatever D says.
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    assert_eq!((r.outcome(), r.k), (Outcome::Missed, 1), "{r:?}");
}

#[test]
fn one_byte_reduces_answer_from_nothing_and_their_estimate_is_apart() {
    // FB-2010's job2719 in miniature: one map whose 4 bytes of output give each of 4
    // reduces 1 byte, and a reduce law that makes that byte take 100 s (f(d) = 100·d). In
    // C1 (D = 0.95 × MDT ≈ 96 s) no schedule reads the map by D. dart-paper sees that
    // (Alg. 1 as printed: T_J(1) > D) and answers at once from nothing. dart launches the
    // map (`first_map`: it need only finish by D), keeps a whole byte of each reduce
    // (`sample_floor`), forecasts the 100 s that takes — and misses D. Under the guard
    // its reduces are cut at D − 1 s, having folded in none of their byte: an answer by
    // D from no input, whose estimate error is reported apart.
    let mut job = tiny(&[1.0], 4);
    job.truth.maps[0].output_bytes = 4;
    let law = PowerLaw {
        a: 100.0,
        b: 1.0,
        spread: 0.0,
    };
    job.truth.reduce_time = law;
    job.profile.reduce_time = law;
    job.profile.map_local = 1.0;
    job.profile.partition_bytes = 1.0;
    let exp = experiment(4);
    let p = plan(&job, &exp, 1.0, 0.95);
    assert_eq!(p.k_max, 0, "no schedule reads the map by D");
    let paper = simulate(&job, &p, PolicyKind::DartPaper, &exp, 0);
    assert_eq!((paper.k, paper.completion), (0, 0.0), "{paper:?}");
    assert_eq!(paper.outcome(), Outcome::Empty);
    let dart = simulate(&job, &p, PolicyKind::Dart, &exp, 0);
    assert_eq!((dart.k, dart.processed_fraction), (1, 1.0), "{dart:?}");
    assert_eq!(dart.outcome(), Outcome::Missed);
    let r = simulate(&job, &p, PolicyKind::Dart, &guarded(&exp), 0);
    assert!(r.guard_fired, "{r:?}");
    assert_eq!((r.k, r.processed_fraction), (1, 0.0), "{r:?}");
    assert!(!r.missed(), "{r:?}");
    assert_eq!(r.outcome(), Outcome::Empty);
    let error = r.estimation_error().unwrap();
    let rows = crate::report::rows(&[r], &["T"], &[PolicyKind::Dart]);
    let none = rows.iter().find(|row| row.bin == "none-fits").unwrap();
    assert_eq!(none.policy, "dart+guard");
    assert_eq!((none.empty_fraction, none.met_fraction), (1.0, 0.0));
    assert_eq!(
        none.mean_estimation_error, None,
        "not among the answers' errors"
    );
    assert_eq!(none.empty_estimation_error.mean, Some(error));
}

#[test]
fn reduce_inputs_are_whole_bytes_that_sum_to_the_map_output() {
    // One map's 4 bytes over 3 equal reduces of f(d) = d seconds, run back to back on one
    // container: 2 + 1 + 1 = 4 s of reduces (each rounded on its own, 1 + 1 + 1 = 3 s on
    // 3 bytes: a quarter of the output gone). The oracle splits them the same way.
    let mut job = tiny(&[10.0], 3);
    job.truth.maps[0].output_bytes = 4;
    let law = PowerLaw {
        a: 1.0,
        b: 1.0,
        spread: 0.0,
    };
    job.truth.reduce_time = law;
    job.profile.reduce_time = law;
    let exp = experiment(1);
    let p = plan(&job, &exp, 1.0 / 3.0, 1.0);
    assert_eq!(p.containers, 1);
    assert_eq!(job.truth.reduce_inputs(4), vec![2, 1, 1]);
    let r = simulate(&job, &p, PolicyKind::Full, &exp, 0);
    let t = r.phases.unwrap();
    assert!((t.reduce - 4.0).abs() < 1e-6, "{t:?}");
    let oracle = crate::oracle::completion(&job.truth, &[0], &[1.0]);
    assert!((oracle - r.completion).abs() < 1e-5, "{oracle} vs {r:?}");
    // MDT is on MRA = 3 containers: the reduces side by side, the longest 2 s.
    assert!((p.mdt - (10.0 + 0.004 + 2.0)).abs() < 1e-5, "{}", p.mdt);
    let fits = |d: f64| crate::oracle::k_max(&job.truth, &[1.0], d);
    assert_eq!((fits(r.completion), fits(r.completion - 1e-3)), (1, 0));
}

#[test]
fn noisy_progress_varies_a_tasks_speed_and_blurs_its_reports() {
    let model = ProgressModel::NOISY;
    let live = |key: u64| Live {
        key,
        ..Live::new(0, 0, 10.0, 40.0, None)
    };
    let mut off_line = 0;
    for key in 1..=200u64 {
        let l = live(mix(1, 2, key, 3));
        assert_eq!(l.done(10.0, &model), 0.0);
        assert_eq!(l.done(50.0, &model), 1.0);
        let mut last = 0.0;
        let mut furthest: f64 = 0.0;
        for step in 0..=400 {
            let t = 10.0 + 0.1 * f64::from(step);
            let done = l.done(t, &model);
            assert!(done >= last - 1e-12, "progress never falls");
            furthest = furthest.max((done - (t - 10.0) / 40.0).abs());
            last = done;
        }
        if furthest > 0.05 {
            off_line += 1;
        }
        assert_eq!(l.done(30.0, &ProgressModel::EXACT), 0.5, "exact: linear");
    }
    assert!(
        off_line > 150,
        "{off_line} of 200 curves stray 5 points from linear"
    );
    // Reports: the share done plus noise of sd 0.05, clamped to [0, 1].
    let l = live(99);
    let errors: Vec<f64> = (0..4000)
        .map(|i| {
            let t = 20.0 + f64::from(i) * 0.005;
            l.report(t, &model) - l.done(t, &model)
        })
        .collect();
    let sd = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    assert!((sd - 0.05).abs() < 0.005, "{sd}");
    assert_eq!(l.report(30.0, &ProgressModel::EXACT), 0.5);
    // Only reports change: a task still ends when its duration says, so `full` (which
    // reads no report) finishes at the same instant, and every run is repeatable.
    let job = tiny(&[5.0, 7.0, 30.0, 6.0], 2);
    let exp = experiment(2);
    let noisy = Experiment {
        model: Model {
            progress: model,
            ..Model::default()
        },
        ..exp.clone()
    };
    let p = plan(&job, &exp, 0.5, 1.2);
    let (a, b) = (
        simulate(&job, &p, PolicyKind::Full, &exp, 0),
        simulate(&job, &p, PolicyKind::Full, &noisy, 0),
    );
    assert_eq!(a.completion, b.completion);
    for kind in PolicyKind::ALL {
        let run = || simulate(&job, &p, kind, &noisy, 0);
        assert_eq!(run(), run(), "{kind}");
    }
}

fn guarded(exp: &Experiment) -> Experiment {
    Experiment {
        guard: DEFAULT_GUARD_SECONDS,
        ..exp.clone()
    }
}

#[test]
fn under_the_guard_a_job_whose_last_map_hangs_answers_by_the_deadline_from_the_others() {
    // Four maps, the last of which never ends, on four containers, D = 30 s. Without the
    // guard no policy answers (none kills a map that reports no progress at all); with it,
    // every policy but `full` kills the hung map at D − 1 s and answers from the other
    // three: k = maps − 1 = k_max (with a reduce, only `dart` from their records).
    for reduces in [0, 1] {
        let mut job = tiny(&[10.0, 10.0, 10.0, 10.0], reduces);
        job.truth.maps[3].duration = f64::INFINITY;
        job.truth.reduce_time.a = 1e-4; // 0.3 s for the 3,000 bytes
        job.profile.reduce_time.a = 1e-4;
        let exp = experiment(4);
        let config = DeadlineConfig {
            name: "T",
            delta: 1.0,
            mu: 1.0,
        };
        let plan = Plan::new(&job, config, &exp, 30.0); // the hung job has no MDT
        assert_eq!((plan.containers, plan.k_max), (4, 3));
        for kind in PolicyKind::ALL {
            let unguarded = simulate(&job, &plan, kind, &exp, 0);
            assert!(unguarded.completion.is_infinite(), "{kind}: {unguarded:?}");
            let r = simulate(&job, &plan, kind, &guarded(&exp), 0);
            if kind == PolicyKind::Full {
                assert_eq!((r.guard, r.guard_fired), (0.0, false), "never guarded");
                assert!(r.completion.is_infinite());
                continue;
            }
            assert!(r.guard_fired && !r.missed(), "{kind}: {r:?}");
            assert_eq!(r.k, 3, "{kind}: {r:?}");
            if kind == PolicyKind::Dart && reduces == 1 {
                // `last_moment` leaves the reduce waiting for its input to run: it gets
                // the three outputs and answers from them 0.3 s later, by D.
                assert!((r.completion - 29.3).abs() < 1e-6, "{r:?}");
                assert_eq!(r.outcome(), Outcome::Met, "{r:?}");
                assert_eq!(r.processed_fraction, 0.75, "{r:?}");
                continue;
            }
            assert_eq!(r.completion, 29.0, "{kind}: the guard answers");
            if reduces == 0 {
                assert_eq!(r.outcome(), Outcome::Met, "{kind}: {r:?}");
                assert_eq!(r.processed_fraction, 0.75, "{kind}");
            } else {
                // The reduce waited for the hung map's output; cut at the guard before it
                // had its input, it answers from none of it (as a synthetic reduce does
                // live): by D, but empty.
                assert_eq!(r.outcome(), Outcome::Empty, "{kind}: {r:?}");
            }
        }
    }
}

#[test]
fn the_guard_cuts_a_running_reduce_to_what_it_has_folded_in() {
    // D-WOR (no Alg. 5: the reduce keeps all its input) on two node-local maps and a
    // reduce of f(2,000 B) = 20 s that the profile puts at 2 s, so D-WOR reads both maps.
    // Unguarded it ends after D = 0.8 × MDT; guarded, the reduce is cut at D − 1 s having
    // folded in its share done × its 2,000 bytes, and the job answers then from that
    // share of the input.
    let mut job = tiny(&[10.0, 10.0], 1);
    job.truth.maps[1].replicas = vec![1];
    job.truth.reduce_time.a = 0.01;
    let exp = experiment(2);
    let p = plan(&job, &exp, 1.0, 0.8);
    let kind = PolicyKind::DartWithoutRevise;
    let plain = simulate(&job, &p, kind, &exp, 0);
    assert!(
        plain.missed() && plain.processed_fraction == 1.0,
        "{plain:?}"
    );
    let t = plain.phases.unwrap();
    let reduce_start = t.map + t.shuffle;
    assert!((t.reduce - 20.0).abs() < 1e-6, "{t:?}");
    let r = simulate(&job, &p, kind, &guarded(&exp), 0);
    let cut_at = (p.deadline - 1.0) * 1e6;
    let cut_at = cut_at.floor() / 1e6;
    assert!(r.guard_fired && !r.missed(), "{r:?}");
    assert!((r.completion - cut_at).abs() < 1e-6, "{r:?}");
    let folded = (2000.0 * (cut_at - reduce_start) / 20.0).floor() / 2000.0;
    assert!(folded > 0.2 && folded < 0.9, "{folded}");
    assert!(
        (r.processed_fraction - folded).abs() < 1e-9,
        "{r:?} vs {folded}"
    );
    assert_eq!((r.k, r.outcome()), (2, Outcome::Met));
}

#[test]
fn a_guarded_run_is_reported_beside_its_unguarded_twin() {
    use crate::experiment::{Setup, run_job};
    let mut job = tiny(&[10.0, 10.0], 1);
    job.truth.maps[1].replicas = vec![1];
    job.truth.reduce_time.a = 0.01; // the profile says a tenth of that
    let exp = guarded(&experiment(2));
    let tight = DeadlineConfig {
        name: "tight",
        delta: 1.0,
        mu: 0.8,
    };
    let loose = DeadlineConfig {
        name: "loose",
        delta: 1.0,
        mu: 2.0,
    };
    let setup = Setup {
        name: "deadlines".into(),
        configs: vec![tight, loose],
        policies: vec![PolicyKind::DartWithoutRevise, PolicyKind::Full],
        experiment: exp.clone(),
    };
    let results = run_job(&job, 0, &setup);
    let labels: Vec<(&str, String)> = results.iter().map(|r| (r.config, r.label())).collect();
    let expected = ["d-wor", "d-wor+guard", "full"];
    assert_eq!(
        labels,
        [tight.name, loose.name]
            .iter()
            .flat_map(|c| expected.map(|l| (*c, l.to_owned())))
            .collect::<Vec<_>>()
    );
    let mdt = mdt(&job, &exp, 0);
    for (i, config) in [tight, loose].into_iter().enumerate() {
        let p = Plan::new(&job, config, &exp, mdt);
        let (twin, guarded, full) = (&results[3 * i], &results[3 * i + 1], &results[3 * i + 2]);
        // The twin is the run without the guard, whether or not the guard fired.
        let plain = simulate(&job, &p, PolicyKind::DartWithoutRevise, &exp.unguarded(), 0);
        assert_eq!(twin, &plain, "{}", config.name);
        assert_eq!(full.guard, 0.0);
        let unguarded = guarded.unguarded.expect("a twin");
        assert_eq!(unguarded.outcome, plain.outcome());
        assert_eq!(unguarded.processed_fraction, plain.processed_fraction);
        if i == 0 {
            // Tight: the guard fired, cost the input the reduce had not folded in, and
            // turned a missed deadline into a met one.
            assert!(guarded.guard_fired);
            let cost = guarded.guard_cost().unwrap();
            assert!(cost > 0.1 && cost < 0.8, "{cost}");
            assert_eq!(guarded.guard_rescued(), Some(true));
        } else {
            // Loose: it never fired; the runs are the same.
            assert!(!guarded.guard_fired);
            assert_eq!(guarded.guard_cost(), Some(0.0));
            assert_eq!(guarded.guard_rescued(), Some(false));
            assert_eq!(&guarded.as_unguarded(), twin);
        }
    }
    let rows = crate::report::rows(&results, &["tight", "loose"], &setup.policies);
    let row = |config: &str, policy: &str| {
        rows.iter()
            .find(|r| r.config == config && r.policy == policy && r.bin == "every")
            .unwrap()
    };
    let (plain, with) = (row("tight", "d-wor"), row("tight", "d-wor+guard"));
    assert_eq!((plain.missed_fraction, with.missed_fraction), (1.0, 0.0));
    assert_eq!(
        (plain.guard_fired_fraction, plain.guard_cost),
        (None, None),
        "no guard, no guard columns"
    );
    assert_eq!(with.guard_seconds, Some(DEFAULT_GUARD_SECONDS));
    assert_eq!(with.guard_fired_fraction, Some(1.0));
    assert_eq!(with.guard_rescued_fraction, Some(1.0));
    assert_eq!(
        with.guard_cost,
        Some(plain.mean_processed_fraction - with.mean_processed_fraction)
    );
    let all = row("all", "d-wor+guard");
    assert_eq!((all.jobs, all.guard_fired_fraction), (2, Some(0.5)));
    assert!(rows.iter().all(|r| r.policy != "full+guard"));
}

#[test]
fn the_same_seed_gives_the_same_result_for_every_policy() {
    let job = tiny(&[5.0, 7.0, 30.0, 6.0, 5.0, 8.0], 2);
    let mut exp = experiment(3);
    exp.cluster.failure_rate = 0.2;
    for kind in PolicyKind::ALL {
        let p = plan(&job, &exp, 0.5, 1.2);
        let a = simulate(&job, &p, kind, &exp, 3);
        let b = simulate(&job, &p, kind, &exp, 3);
        assert_eq!(a, b, "{kind}");
    }
}

/// A job of four maps and three reduces of 10 s each (0.01 s a byte) whose reduces'
/// noise is `e_r = exp(σ·z_r − σ²/2)`, drawn with spread σ.
fn noisy_reduces(sigma: f64, z: [f64; 3]) -> SimJob {
    let mut job = tiny(&[10.0, 10.0, 10.0, 10.0], 3);
    job.truth.maps.iter_mut().for_each(|m| m.output_bytes = 750);
    job.truth.reduce_time.a = 0.01;
    job.profile.reduce_time.a = 0.01;
    job.profile.partition_bytes = 1000.0;
    job.truth.reduce_noise = z
        .iter()
        .map(|z| (sigma * z - sigma * sigma / 2.0).exp())
        .collect();
    job.truth.reduce_noise_sigma = sigma;
    job
}

#[test]
fn the_floor_is_the_truth_without_noise_and_rises_with_it() {
    let draws = [
        [1.3, -0.4, 0.8],
        [-1.1, -0.2, 0.3],
        [0.5, 2.0, -1.5],
        [-0.7, -1.4, -0.3],
    ];
    let exp = experiment(4);
    let mean_floor_error = |sigma: f64| {
        let errors: Vec<f64> = draws
            .iter()
            .enumerate()
            .map(|(i, &z)| {
                let job = noisy_reduces(sigma, z);
                let p = plan(&job, &exp, 1.0, 2.0);
                let r = simulate(&job, &p, PolicyKind::Dart, &exp, i as u64);
                assert!(r.estimation_error().is_some(), "dart estimated at close");
                assert_eq!(r, simulate(&job, &p, PolicyKind::Dart, &exp, i as u64));
                r.floor_error().expect("a floor")
            })
            .collect();
        errors.iter().sum::<f64>() / errors.len() as f64
    };
    // No noise: the floor estimate is the true completion.
    let job = noisy_reduces(0.0, draws[0]);
    let r = simulate(&job, &plan(&job, &exp, 1.0, 2.0), PolicyKind::Dart, &exp, 0);
    assert_eq!(r.floor, Some(r.completion));
    assert_eq!(mean_floor_error(0.0), 0.0);
    let (low, mid, high) = (
        mean_floor_error(0.1),
        mean_floor_error(0.2),
        mean_floor_error(0.4),
    );
    assert!(0.0 < low && low < mid && mid < high, "{low} {mid} {high}");
}
