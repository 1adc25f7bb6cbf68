//! Dart on scripted clusters: the scenarios of the paper's §4–5 with known task durations,
//! run on a virtual clock (no sleeps, no wall clock).

mod support;

use support::{Script, run};
use yard_appmaster::policy::{
    ContainerId, Dart, Decision, Extensions, Locality, MapId, PolicyConfig, PolicyKind, PowerLaw,
    TaskPolicy,
};

fn dart() -> Box<dyn TaskPolicy> {
    policy(PolicyKind::Dart)
}

fn policy(kind: PolicyKind) -> Box<dyn TaskPolicy> {
    kind.build(PolicyConfig::default())
}

/// Reduces at 2.5e-5 s per byte, every one alike.
const LINEAR_REDUCE: PowerLaw = PowerLaw {
    a: 2.5e-5,
    b: 1.0,
    spread: 0.0,
};

/// 8 containers, 40 node-local maps of 10 s: five waves, 50 s to read everything.
fn five_waves() -> Script {
    let mut s = Script::uniform(8, 1, 1, 10.0, 15.0);
    s.map_output = 100_000;
    s
}

#[test]
fn a_tight_deadline_closes_the_map_phase_early_and_still_finishes_before_it() {
    let s = five_waves();
    let spec = s.job(40, 2, 35.0, s.true_profile(10.0, 15.0, 2));
    let r = run(dart().as_mut(), spec, &s, 1);
    let (closed_at, k, estimate) = r.closed.expect("the map phase closes");
    // The shuffle keeps up (each 100 kB output crosses in 0.1 ms), so eq. 5 over the busy time
    // measures ~1 GB/s and T_NS ≈ 0. A third-wave candidate ends the maps at T_M^n = 30 with
    // T_R = 24 · 50 kB · 1e-6 s/B = 1.2 (eq. 9): T_J = 31.2 < 35. At t = 30 a fourth-wave local
    // candidate would end at 40 ≥ 35: terminate (Alg. 1), k = 24.
    assert_eq!((closed_at, k), (30.0, 24));
    let estimate = estimate.expect("Dart estimates");
    assert!((estimate.total - 31.2).abs() < 1e-3, "{estimate:?}");
    let finished = r.finished_at.expect("finishes");
    assert!(finished < 35.0, "finished at {finished}");
    let p = r.progress.unwrap();
    assert_eq!((p.k, p.maps_done), (24, 24));
    assert!((p.processed_fraction() - 0.6).abs() < 1e-9);
}

#[test]
fn the_full_policy_reads_everything_and_misses_the_same_deadline() {
    let s = five_waves();
    let spec = s.job(40, 2, 35.0, s.true_profile(10.0, 15.0, 2));
    let r = run(policy(PolicyKind::Full).as_mut(), spec, &s, 1);
    assert_eq!(r.closed.unwrap().1, 40);
    assert!(r.finished_at.unwrap() > 50.0);
    assert_eq!(r.progress.unwrap().processed_fraction(), 1.0);
}

#[test]
fn a_loose_deadline_processes_all_input_under_every_dart_variant() {
    for kind in PolicyKind::ALL
        .into_iter()
        .filter(|k| !matches!(k, PolicyKind::Aria | PolicyKind::Ps))
    {
        let s = five_waves();
        let spec = s.job(40, 2, 1000.0, s.true_profile(10.0, 15.0, 2));
        let r = run(policy(kind).as_mut(), spec, &s, 1);
        let p = r.progress.unwrap();
        assert_eq!((p.k, p.maps_done), (40, 40), "{kind}");
        assert_eq!(p.processed_fraction(), 1.0, "{kind}");
        assert!(r.finished_at.unwrap() < 1000.0, "{kind}");
    }
}

/// 4 containers, 8 maps of 10 s; map 3's first attempt crawls for 60 s.
fn with_straggler() -> Script {
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.map_output = 100_000;
    s.map_time = Box::new(|m, _, nth| {
        if m == MapId(3) && nth == 0 {
            60.0
        } else {
            10.0
        }
    });
    s
}

#[test]
fn a_straggler_is_speculated_when_the_window_allows() {
    let s = with_straggler();
    let spec = s.job(8, 1, 60.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec, &s, 1);
    let copies: Vec<_> = r
        .log
        .iter()
        .filter(|(_, d)| {
            matches!(
                d,
                Decision::LaunchMap {
                    speculative: true,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(copies.len(), 1, "{:#?}", r.log);
    assert!(matches!(
        copies[0].1,
        Decision::LaunchMap { map: MapId(3), .. }
    ));
    // The copy wins; the original is killed; nothing is lost.
    assert_eq!(
        r.count(|d| matches!(d, Decision::Kill(_))),
        1,
        "{:#?}",
        r.log
    );
    let p = r.progress.unwrap();
    assert_eq!((p.k, p.maps_done), (8, 8));
    assert!(r.finished_at.unwrap() < 60.0);
}

#[test]
fn a_straggler_is_killed_when_the_window_is_too_short_for_a_copy() {
    let s = with_straggler();
    let spec = s.job(8, 1, 30.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec, &s, 1);
    assert_eq!(
        r.count(|d| matches!(
            d,
            Decision::LaunchMap {
                speculative: true,
                ..
            }
        )),
        0
    );
    assert_eq!(r.count(|d| matches!(d, Decision::Kill(_))), 1);
    let p = r.progress.unwrap();
    // Maps 0–6 launched (map 7 would end at 30 = D), map 3 killed: k = 6.
    assert_eq!((p.k, p.maps_done), (6, 6));
    assert!(r.finished_at.unwrap() < 30.0);
}

#[test]
fn without_revise_the_straggler_makes_the_job_miss_its_deadline() {
    let s = with_straggler();
    let spec = s.job(8, 1, 30.0, s.true_profile(10.0, 10.0, 1));
    let r = run(policy(PolicyKind::DartWithoutRevise).as_mut(), spec, &s, 1);
    assert_eq!(r.count(|d| matches!(d, Decision::Kill(_))), 0);
    assert!(r.finished_at.unwrap() >= 60.0);
}

#[test]
fn late_speculates_but_never_kills() {
    let s = with_straggler();
    let spec = s.job(8, 1, 30.0, s.true_profile(10.0, 10.0, 1));
    let r = run(policy(PolicyKind::Late).as_mut(), spec, &s, 1);
    assert_eq!(
        r.count(|d| matches!(
            d,
            Decision::LaunchMap {
                speculative: true,
                ..
            }
        )),
        1
    );
    // Only the race's loser is killed, never a straggler outright.
    let p = r.progress.unwrap();
    assert_eq!(p.k, 7);
    assert_eq!(p.maps_done, 7);
}

#[test]
fn a_failed_map_is_retried_when_it_still_fits() {
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.fail = Box::new(|m, nth| (m == MapId(2) && nth == 0).then_some(5.0));
    let spec = s.job(8, 1, 60.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec, &s, 1);
    let launches_of_2 = r.count(|d| matches!(d, Decision::LaunchMap { map: MapId(2), .. }));
    assert_eq!(launches_of_2, 2);
    let p = r.progress.unwrap();
    assert_eq!((p.k, p.maps_done), (8, 8));
}

#[test]
fn a_failed_map_is_dropped_when_a_restart_would_miss_the_deadline() {
    // §5.2.1: at t = 9 a restart ends at max(10, 9 + 10) = 19 > D = 15: drop it, k − 1.
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.fail = Box::new(|m, nth| (m == MapId(2) && nth == 0).then_some(9.0));
    let spec = s.job(4, 1, 15.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec, &s, 1);
    assert_eq!(
        r.count(|d| matches!(d, Decision::LaunchMap { map: MapId(2), .. })),
        1
    );
    let p = r.progress.unwrap();
    assert_eq!((p.k, p.maps_done), (3, 3));
    assert!(r.finished_at.unwrap() < 15.0);
}

#[test]
fn a_remote_candidate_that_does_not_fit_becomes_local_only_and_runs_only_locally() {
    // 2 racks × 2 nodes; maps' replicas on nodes 0 and 1 only. Remote maps take 30 s, local 10 s.
    let mut s = Script::uniform(4, 2, 1, 10.0, 30.0);
    s.map_output = 1000;
    let mut spec = s.job(6, 1, 25.0, s.true_profile(10.0, 30.0, 1));
    for (i, m) in spec.maps.iter_mut().enumerate() {
        m.replicas = vec![s.location(i as u32 % 2)];
    }
    let r = run(dart().as_mut(), spec, &s, 1);
    assert!(
        r.count(|d| matches!(d, Decision::MarkLocalOnly(_))) >= 1,
        "{:#?}",
        r.log
    );
    // The support driver asserts every local-only map later ran node-local.
    let remote = r.count(|d| {
        matches!(
            d,
            Decision::LaunchMap {
                locality: Locality::Remote,
                ..
            }
        )
    });
    assert_eq!(remote, 0, "no remote map fits a 25 s deadline");
    assert!(r.finished_at.unwrap() < 25.0);
}

#[test]
fn maps_without_replicas_close_the_map_phase_when_the_next_one_misses() {
    // Synthetic maps read nothing, so no container is ever local to them: the first that would
    // miss D ends the map phase, as a local one would (Alg. 1 lines 6–8), instead of every
    // remaining map being marked local-only and its container handed back.
    let s = five_waves();
    let mut spec = s.job(40, 2, 35.0, s.true_profile(10.0, 15.0, 2));
    for m in &mut spec.maps {
        m.replicas.clear();
    }
    let r = run(dart().as_mut(), spec, &s, 1);
    assert!(
        !r.log
            .iter()
            .any(|(_, d)| matches!(d, Decision::MarkLocalOnly(_))),
        "no map is marked local-only"
    );
    let (closed_at, k, _) = r.closed.expect("the map phase closes");
    assert!(k > 0 && k < 40, "k = {k}");
    assert!(closed_at < 35.0);
    assert!(r.finished_at.expect("finishes") < 35.0);
}

#[test]
fn reduce_input_is_sampled_down_to_what_fits_alg5() {
    // Maps take 22 s where the profile says 10: the approach stage launches all four
    // (T_J = 10 + 0 + 400 kB · 2.5e-5 s/B = 20 < 30), and the reduce gets its input at
    // t = 23 with 7 s left: d_max = (30 − 23) / 2.5e-5 = 280 kB of 400 kB (eq. 12, Alg. 5).
    let mut s = Script::uniform(4, 1, 1, 22.0, 22.0);
    s.map_output = 100_000;
    s.reduce_time = LINEAR_REDUCE;
    let spec = s.job(4, 1, 30.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    assert_eq!(r.sampled(), vec![280_000]);
    let p = r.progress.unwrap();
    assert!((p.processed_fraction() - 0.7).abs() < 1e-9);
    assert!(r.finished_at.unwrap() <= 30.0 + 1e-9);
    // D-WMR has no reduce revise: it reduces all 400 kB and finishes at 23 + 10 = 33.
    let r = run(policy(PolicyKind::DartMapReviseOnly).as_mut(), spec, &s, 1);
    assert_eq!(
        r.count(|d| matches!(d, Decision::SampleReduceInput { .. })),
        0
    );
    assert!(r.finished_at.unwrap() > 30.0);
}

#[test]
fn a_one_map_job_over_its_deadline_runs_its_map_and_samples_the_reduce() {
    // One 10 s map, one reduce of its 400 kB output at 2.5e-5 s/B: T_J(1) = 10 + 0 + 10 = 20
    // against D = 15. Alg. 1 as printed answers with nothing; Dart launches the map (it and its
    // shuffle fit) and Alg. 5 keeps what the time left can reduce: the scripted cluster hands
    // the reduce its input on the next heartbeat, t = 11, so 4 s, 160 kB.
    let mut s = Script::uniform(1, 1, 1, 10.0, 10.0);
    s.map_output = 400_000;
    s.reduce_time = LINEAR_REDUCE;
    let spec = s.job(1, 1, 15.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let (closed_at, k, estimate) = r.closed.expect("the map phase closes");
    assert_eq!((closed_at, k), (0.0, 1), "the only map is launched");
    // The forecast at close is what Alg. 5 will make of the reduce: it ends at D.
    let estimate = estimate.unwrap();
    assert!((estimate.total - 15.0).abs() < 1e-3, "{estimate:?}");
    assert_eq!(r.sampled(), vec![160_000]);
    let finished = r.finished_at.unwrap();
    assert!(finished <= 15.0 + 1e-6, "finished at {finished}");
    assert_eq!(r.progress.unwrap().k, 1);
    // Without Alg. 5 (D-WMR) nothing could cut the reduce: Alg. 1 as printed, k = 0.
    let r = run(
        policy(PolicyKind::DartMapReviseOnly).as_mut(),
        spec.clone(),
        &s,
        1,
    );
    assert_eq!(r.closed.unwrap().1, 0);
    assert_eq!(r.progress.unwrap().k, 0);
    // The map fails at t = 1: the restart test (§5.2.1) is the same as the launch test, so it
    // runs again (ending at 11) and the reduce gets what the 3 s left at t = 12 can take.
    s.fail = Box::new(|_, nth| (nth == 0).then_some(1.0));
    let r = run(dart().as_mut(), spec, &s, 1);
    assert_eq!(r.count(|d| matches!(d, Decision::LaunchMap { .. })), 2);
    assert_eq!(r.progress.unwrap().k, 1);
    assert!(r.finished_at.unwrap() <= 15.0 + 1e-6);
}

#[test]
fn the_same_seed_gives_the_same_decision_log() {
    let s = with_straggler();
    let logs: Vec<_> = (0..2)
        .map(|_| {
            let spec = s.job(8, 2, 40.0, s.true_profile(10.0, 10.0, 2));
            format!("{:?}", run(dart().as_mut(), spec, &s, 7).log)
        })
        .collect();
    assert_eq!(logs[0], logs[1]);
}

#[test]
fn a_recurring_job_profiled_from_its_first_run_does_better_in_its_second() {
    // The first run guesses maps take 25 s (they take 10): it stops after one wave.
    let s = five_waves();
    let mut guess = s.true_profile(25.0, 30.0, 2);
    guess.reduce_time.a = 1e-5;
    let first = run(dart().as_mut(), s.job(40, 2, 35.0, guess.clone()), &s, 1);
    let k1 = first.progress.unwrap().k;
    let mut profiler = yard_appmaster::policy::Profiler::new(guess);
    profiler.add_run(first.record.clone());
    let learned = profiler.profile();
    assert_eq!(
        learned.map_local, 10.0,
        "the job profiler measured the maps"
    );
    assert_eq!(learned.previous_runs.len(), 1);
    let second = run(dart().as_mut(), s.job(40, 2, 35.0, learned), &s, 1);
    let k2 = second.progress.unwrap().k;
    assert!(k2 > k1, "k {k1} → {k2}");
    assert!(second.finished_at.unwrap() < 35.0);
}

#[test]
fn a_speculative_race_that_neither_copy_can_win_in_time_is_ended() {
    // 4 containers, 8 maps of 10 s, but map 3 takes 60 s wherever it runs (the slowness is in
    // its data, not its node). Alg. 3 copies it at t = 20 (W ≈ 19 ≥ T_m^a); once the copy
    // reports, neither attempt can end within W, so both go (k = 8 − 1) and the job answers
    // by D instead of waiting for map 3 until t = 60.
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.map_output = 100_000;
    s.map_time = Box::new(|m, _, _| if m == MapId(3) { 60.0 } else { 10.0 });
    let spec = s.job(8, 1, 40.0, s.true_profile(10.0, 10.0, 1));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let copies = r.count(|d| {
        matches!(
            d,
            Decision::LaunchMap {
                speculative: true,
                map: MapId(3),
                ..
            }
        )
    });
    assert_eq!(copies, 1, "{:#?}", r.log);
    assert_eq!(
        r.count(|d| matches!(d, Decision::Kill(_))),
        2,
        "original and copy"
    );
    let p = r.progress.unwrap();
    assert_eq!((p.k, p.maps_done), (7, 7));
    assert!(r.finished_at.unwrap() < 40.0, "{:?}", r.finished_at);

    // Without the revise stage the job waits for map 3 and misses.
    let r = run(policy(PolicyKind::DartWithoutRevise).as_mut(), spec, &s, 1);
    assert!(r.finished_at.unwrap() >= 60.0);
}

#[test]
fn a_reduce_on_a_node_its_maps_found_slow_gets_the_input_it_can_finish_there() {
    // 2 nodes, one container each; node 1 runs everything 3× slower. Maps 0 and 2 run on
    // node 0, map 1 on node 1 (30 s: 3× what node 0's maps took), map 3 remote on node 0
    // (15 s, as profiled). The reduce lands on node 1, the first container free after the map
    // phase closed. Its full input (400 kB) takes 10 s on a normal node, 30 s there.
    // Alg. 5 as printed sees 14–15 s left and keeps everything (a 30 s reduce: late); on the
    // node's measured pace it keeps what 3× slower can finish by D.
    let mut s = Script::uniform(2, 1, 1, 10.0, 15.0);
    s.map_output = 100_000;
    s.reduce_time = LINEAR_REDUCE;
    s.node_slowdown = Box::new(|n| if n.0 == 1 { 3.0 } else { 1.0 });
    let deadline = 50.0;
    let spec = s.job(4, 1, deadline, s.true_profile(10.0, 15.0, 1));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let launched_on_1 = r.log.iter().any(|(_, d)| {
        matches!(
            d,
            Decision::LaunchReduce {
                container: ContainerId(1),
                ..
            }
        )
    });
    assert!(
        launched_on_1,
        "the scenario puts the reduce on node 1: {:#?}",
        r.log
    );
    let sampled: Vec<(f64, u64)> = r
        .log
        .iter()
        .filter_map(|(t, d)| match d {
            Decision::SampleReduceInput { keep_bytes, .. } => Some((*t, *keep_bytes)),
            _ => None,
        })
        .collect();
    let [(at, kept)] = sampled[..] else {
        panic!("one sample: {sampled:?}")
    };
    let fits_at_pace_3 = (deadline - at) / 3.0 / 2.5e-5;
    assert!(
        (kept as f64 - fits_at_pace_3).abs() <= 1.0,
        "kept {kept} at t = {at}"
    );
    assert_eq!(r.progress.unwrap().k, 4);
    assert!(
        r.finished_at.unwrap() <= deadline + 1e-9,
        "{:?}",
        r.finished_at
    );

    // Without `node_pace` (Alg. 5 as printed, at the profile's pace) the reduce keeps its whole
    // input on node 1 and the job misses. (This compared D-WMR before the ablations were
    // re-based on dart-paper, whose eq. 5 as printed ends this job's map phase at k = 3 with
    // the reduce on node 0; `tests/dart_paper.rs` has both.)
    let x = Extensions {
        node_pace: false,
        ..Extensions::YARD
    };
    let mut without = Dart::with_extensions(PolicyKind::Dart, PolicyConfig::default(), x);
    let r = run(&mut without, spec, &s, 1);
    assert!(r.finished_at.unwrap() > deadline, "{:?}", r.finished_at);
}

#[test]
fn a_reduce_that_will_end_after_the_deadline_is_restarted_elsewhere_on_what_time_allows() {
    // 3 nodes, one container each; node 2 runs 4× slower and no map runs there to say so.
    // Maps 0 and 1 run node-local on nodes 0 and 1 (10 s); the map phase closes at once and
    // the third container, on node 2, takes reduce 0; reduce 1 starts on node 0 at t = 10.
    // Both get 400 kB at t = 11: 10 s on a normal node, 40 s on node 2 (ending at 51, D = 30).
    // At t = 16 reduce 0 has run half of what the profile expects and its rate says 51: it is
    // killed; its restart waits for node 0 (free at 21, where the same heartbeat hands it its
    // input), and Alg. 5 keeps what the 9 s left can reduce there: 360 kB.
    let mut s = Script::uniform(3, 1, 1, 10.0, 15.0);
    s.map_output = 400_000;
    s.reduce_time = LINEAR_REDUCE;
    s.node_slowdown = Box::new(|n| if n.0 == 2 { 4.0 } else { 1.0 });
    let deadline = 30.0;
    let spec = s.job(2, 2, deadline, s.true_profile(10.0, 15.0, 2));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let reduce_launches: Vec<(f64, ContainerId)> = r
        .log
        .iter()
        .filter_map(|(t, d)| match d {
            Decision::LaunchReduce {
                reduce, container, ..
            } if reduce.0 == 0 => Some((*t, *container)),
            _ => None,
        })
        .collect();
    assert_eq!(
        reduce_launches,
        [(0.0, ContainerId(2)), (21.0, ContainerId(0))],
        "reduce 0 on node 2, then again on node 0: {:#?}",
        r.log
    );
    let kills = r.times(|d| matches!(d, Decision::Kill(_)));
    assert_eq!(kills, [16.0]);
    assert_eq!(r.sampled(), vec![360_000]);
    let finished = r.finished_at.unwrap();
    assert!(finished <= deadline + 1e-6, "finished at {finished}");
    let p = r.progress.unwrap();
    assert_eq!(p.k, 2);
    // Reduce 0's answer comes from 360 of its 400 kB (counted once), reduce 1's from all of it.
    assert!((p.processed_fraction() - 0.95).abs() < 1e-9, "{p:?}");

    // D-WMR (no reduce revise) waits for node 2 and misses.
    let r = run(policy(PolicyKind::DartMapReviseOnly).as_mut(), spec, &s, 1);
    assert!(r.finished_at.unwrap() > 50.0, "{:?}", r.finished_at);
}

#[test]
fn a_map_that_will_end_after_the_deadline_is_revised_though_no_late_straggler() {
    // Four node-local maps in one wave, map 3 the longest draw: 15 s where the others take 10.
    // Its rate is 2/3 of the median, so LATE's rule (under half) never calls it a straggler,
    // but its rate says it ends at 15, after D = 14. Judged from t = 5 (half of T_m^a), Alg. 3's
    // window is 14 − 5 = 9 s, under T_m^a = 10: no copy fits, it is killed (k = 3), and the
    // job ends with the other maps at 10. D-WOR waits for it.
    let mut s = Script::uniform(4, 1, 1, 10.0, 15.0);
    s.map_time = Box::new(|m, _, _| if m.0 == 3 { 15.0 } else { 10.0 });
    let spec = s.job(4, 0, 14.0, s.true_profile(10.0, 15.0, 0));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let kills = r.times(|d| matches!(d, Decision::Kill(_)));
    assert_eq!(kills, [5.0], "{:#?}", r.log);
    assert_eq!(r.progress.unwrap().k, 3);
    assert_eq!(r.finished_at, Some(10.0));

    let r = run(policy(PolicyKind::DartWithoutRevise).as_mut(), spec, &s, 1);
    assert_eq!(r.finished_at, Some(15.0));
    assert_eq!(r.progress.unwrap().k, 4);
}

#[test]
fn a_lone_map_that_will_end_after_the_deadline_is_killed_on_a_tick() {
    // One map, one container: the map takes 20 s where the profile says 10, D = 15. From
    // t = 5 its rate says it ends at 20. Alg. 3 runs when a container is offered, and no other
    // task will free one; once the window D − T_p falls under T_m^a (t = 6) no copy could
    // help, and the kill is made on the tick: k = 0, an empty answer at t = 6, in time.
    let mut s = Script::uniform(1, 1, 1, 20.0, 20.0);
    s.map_output = 0;
    let spec = s.job(1, 0, 15.0, s.true_profile(10.0, 10.0, 0));
    let r = run(dart().as_mut(), spec.clone(), &s, 1);
    let kills = r.times(|d| matches!(d, Decision::Kill(_)));
    assert_eq!(kills, [6.0], "{:#?}", r.log);
    assert_eq!(r.progress.unwrap().k, 0);
    assert_eq!(r.finished_at, Some(6.0));

    let r = run(policy(PolicyKind::DartWithoutRevise).as_mut(), spec, &s, 1);
    assert_eq!(r.finished_at, Some(20.0));
}
