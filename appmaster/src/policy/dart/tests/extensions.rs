//! yard's extensions to the estimator and the revise stage (`dart/mod.rs` lists them): maps of
//! unequal input, the estimate re-sent after a kill, `cut_tail`, `wave_fill`, `time_cut`,
//! `wave_end`, `fifo_shuffle`, the reduces' rates and the shuffle they pull.

use super::*;

#[test]
fn a_profiles_map_spread_is_capped_before_the_jobs_own_maps_have_ended() {
    // Four 5 s maps launched at once, D far off: at the close, the expected last of them
    // is the same with a profile's spread of 5 as with the cap's 1.
    let close_map = |spread: f64| {
        let mut profile = maps_of_4_bytes(0.5);
        profile.map_spread = Some(spread);
        let mut dart = Dart::new(PolicyKind::Dart, PolicyConfig::default());
        send(
            &mut dart,
            0.0,
            Event::JobStarted(node0_job(4, 1e4, profile)),
        );
        let mut out = Vec::new();
        for i in 0..4 {
            let c = Container {
                id: ContainerId(i),
                at: at(0),
            };
            out.extend(send(&mut dart, 0.0, Event::ContainerGranted(c)));
        }
        out.iter()
            .find_map(|d| match d {
                Decision::CloseMapPhase { estimate, .. } => *estimate,
                _ => None,
            })
            .expect("every map launched closes the map phase")
            .map
    };
    let capped = close_map(MAX_SPREAD);
    assert!(capped > 5.0 && capped < 1e3, "{capped}");
    assert_eq!(close_map(5.0), capped);
    assert!(close_map(0.3) < capped);
}

#[test]
fn input_scaled_reads_a_finished_tail_split_as_a_small_map_not_a_fast_one() {
    // Maps of 64 and 16 bytes (5 s and 4 bytes of output for the mean 40), both at 0: the
    // tail ends at 2 s with its 4 bytes (a mean map's 10, for its 0.4 of one); at 4 s the
    // full map is half done (8 s in all, on pace).
    let after_the_tail = |x: Extensions| {
        let mut spec = node0_job(2, 1e4, maps_of_4_bytes(0.5));
        spec.maps[1].bytes = 16;
        let mut dart = Dart::with_extensions(PolicyKind::Dart, PolicyConfig::default(), x);
        send(&mut dart, 0.0, Event::JobStarted(spec));
        let maps = granted_at_zero(&mut dart, 2);
        let tail = Event::TaskFinished {
            attempt: maps[1],
            output_bytes: 4,
        };
        send(&mut dart, 2.0, tail);
        let run = dart.run.as_mut().unwrap();
        run.core.progress_report(maps[0], 0.5, 4.0);
        run.detect_stragglers(4.0);
        let reduce_input = run.est.reduce_input(run.k_in_mean_maps(), false);
        (run.est.local, reduce_input, run.stragglers.len())
    };
    // In mean maps: T_l^a stays 5 s, the reduce input is both maps' 20 bytes, and the
    // full map runs at the tail's pace.
    let (local, reduce_input, stragglers) = after_the_tail(Extensions::YARD);
    assert!((local - 5.0).abs() < 1e-9, "T_l^a {local}");
    assert!((reduce_input - 20.0).abs() < 1e-9, "{reduce_input}");
    assert_eq!(stragglers, 0, "the full map is on pace");
    // As the paper reads it: a fast map with little output, and the full map a straggler
    // at a quarter of the tail's rate.
    let paper = Extensions::YARD.without("input_scaled").unwrap();
    let (local, reduce_input, stragglers) = after_the_tail(paper);
    assert!((local - 4.4).abs() < 1e-9, "T_l^a {local}");
    assert!((reduce_input - 8.0).abs() < 1e-9, "{reduce_input}");
    assert_eq!(stragglers, 1);
}

#[test]
fn a_close_after_the_last_launch_ends_the_map_phase_with_the_running_maps_scaled_by_input() {
    // Maps of 64, 64 and 16 bytes (5 s for the mean 48 bytes), two containers: maps 0
    // and 1 run from 0; at 6 s map 0 is done and the 16-byte tail split takes its
    // container, the last launch. The phase ends with the later of map 1 (about 6.7 s on
    // average, 6 s gone) and the tail (about 1.7 s from 6) — not at eq. (2)'s 6 + 5 s,
    // which reads the tail as a whole map (FB-2010 job450: 1,692 s forecast, 1,058 taken).
    let mut spec = node0_job(3, 1e4, maps_of_4_bytes(0.5));
    spec.reduces = 0;
    spec.maps[2].bytes = 16;
    let mut dart = Dart::new(PolicyKind::Dart, PolicyConfig::default());
    send(&mut dart, 0.0, Event::JobStarted(spec));
    let maps = granted_at_zero(&mut dart, 2);
    assert_eq!(maps.len(), 2);
    let out = send(
        &mut dart,
        6.0,
        Event::TaskFinished {
            attempt: maps[0],
            output_bytes: 0,
        },
    );
    assert_eq!(launched_maps(&out).len(), 1, "{out:?}");
    let close = closed_with(&out)
        .flatten()
        .expect("the last launch closes with an estimate");
    assert!(
        close.map > 6.5 && close.map < 9.5,
        "the map phase at close: {close:?}"
    );
}

/// D8 under `dart` with extensions `x`: the reduce's 8 bytes ready at `T_p = 7`, D = 10.
fn d8_reduce_ready(x: Extensions, config: PolicyConfig) -> (Run, Vec<Decision>) {
    let v = Variant {
        x,
        ..Variant::of(PolicyKind::Dart)
    };
    let (mut run, c) = d1_extended_with(v, config, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 8);
    (run, out)
}

/// Two one-byte maps on nodes 0 and 1, one reduce, `D` = 5.5 s: both launch at once and
/// the map phase closes with `k` = 2. Map 0 ends at 2 s; map 1 is 5 % done at 3 s, so its
/// rate says it ends at 60 s, after `D`, and with no time left for a copy a tick kills it
/// (Alg. 3–4, `deadline_stragglers`, `kill_on_tick`). Every decision after the close, with `x` as the extensions.
fn killed_after_the_close(x: Extensions) -> (Vec<Decision>, Vec<Decision>) {
    let config = PolicyConfig {
        dart_extensions: Some(x),
        ..PolicyConfig::default()
    };
    let mut dart = Dart::new(PolicyKind::Dart, config);
    let spec = JobSpec {
        deadline: Some(5.5),
        maps: (0..2)
            .map(|i| MapSpec {
                bytes: 1,
                replicas: vec![at(i)],
            })
            .collect(),
        reduces: 1,
        profile: testing::d1_profile(2.0),
        allotment: None,
        recovered: Vec::new(),
    };
    let mut before = send(&mut dart, 0.0, Event::JobStarted(spec));
    for i in 0..2 {
        let c = Container {
            id: ContainerId(i),
            at: at(i as u32),
        };
        before.extend(send(&mut dart, 0.0, Event::ContainerGranted(c)));
    }
    let maps = launched_maps(&before);
    assert_eq!(maps.len(), 2, "{before:?}");
    let mut after = send(
        &mut dart,
        2.0,
        Event::TaskFinished {
            attempt: maps[0],
            output_bytes: 1,
        },
    );
    after.extend(send(
        &mut dart,
        3.0,
        Event::TaskProgress {
            attempt: maps[1],
            progress: 0.05,
        },
    ));
    after.extend(send(&mut dart, 3.0, Event::Tick));
    assert!(after.contains(&Decision::Kill(maps[1])), "{after:?}");
    assert_eq!(dart.progress().k, 1);
    (before, after)
}

#[test]
fn reforecast_after_kill_sends_a_fresh_estimate_when_a_kill_after_the_close_lowers_k() {
    let on = Extensions::YARD.with("reforecast_after_kill").unwrap();
    let (before, after) = killed_after_the_close(on);
    let close = before
        .iter()
        .find_map(|d| match d {
            Decision::CloseMapPhase { k, estimate } => Some((*k, estimate.unwrap())),
            _ => None,
        })
        .expect("the map phase closed at the launches");
    assert_eq!(close.0, 2);
    let fresh: Vec<(u32, Estimate)> = after
        .iter()
        .filter_map(|d| match d {
            Decision::Reforecast { k, estimate } => Some((*k, *estimate)),
            _ => None,
        })
        .collect();
    assert_eq!(fresh.len(), 1, "{after:?}");
    let (k, e) = fresh[0];
    assert_eq!(k, 1);
    // The map phase is over at the kill, 3 s (`wave_end`), and the reduce has one map's
    // byte to fold (f(1) = 0.5 s), where the close counted two.
    assert_eq!((e.map, e.reduce), (3.0, 0.5), "{e:?}");
    assert!(close.1.reduce > e.reduce, "{e:?} against {:?}", close.1);
    // After the kill, nothing changes k: no second one.
    let off = Extensions::YARD.without("reforecast_after_kill").unwrap();
    let (_, after) = killed_after_the_close(off);
    assert!(
        !after
            .iter()
            .any(|d| matches!(d, Decision::Reforecast { .. })),
        "{after:?}"
    );
}

#[test]
fn the_live_master_runs_every_extension_cut_tail_too() {
    assert_eq!(Extensions::LIVE, Extensions::YARD);
}

#[test]
fn cut_tail_sizes_the_reduces_to_the_median_reduce_under_the_guard() {
    let kept = |x: Extensions, config: PolicyConfig| match d8_reduce_ready(x, config).1[..] {
        [Decision::SampleReduceInput { keep_bytes, .. }] => keep_bytes,
        ref out => panic!("{out:?}"),
    };
    let unguarded = kept(Extensions::YARD, PolicyConfig::default());
    // Unguarded, dart sizes for its wave's largest draw at `reduce_confidence`: under D8's 6.
    assert!(unguarded < 6, "{unguarded}");
    // Under the guard, which cuts a reduce that runs long, eq. 12 at e = 1: D8's 6 bytes
    // (with `time_cut` off: on, nothing is sampled ahead).
    let sampling = Extensions::YARD.without("time_cut").unwrap();
    assert_eq!(kept(sampling, guarded()), 6);
    // Without the switch, or without `last_moment` (whose cut takes the tail), the bound.
    for off in ["cut_tail", "last_moment"] {
        let x = Extensions::YARD.without(off).unwrap();
        assert_eq!(kept(x, guarded()), unguarded, "{off}");
        assert_eq!(kept(x.without("time_cut").unwrap(), guarded()), unguarded);
    }
}

/// Two maps of 5 s on two containers, one reduce of 2.5 s a byte over 4 bytes a map, D
/// 20: `T_J(2)` (the two maps' wave, 20 s of reduce) passes D, `T_J(1)` (15 s) does not.
/// The maps launched.
fn fill_launches(x: Extensions, config: PolicyConfig) -> usize {
    let profile = maps_of_4_bytes(2.5);
    let mut dart = Dart::with_extensions(PolicyKind::Dart, config, x);
    send(
        &mut dart,
        0.0,
        Event::JobStarted(node0_job(2, 20.0, profile)),
    );
    granted_at_zero(&mut dart, 2).len()
}

#[test]
fn wave_fill_runs_a_refused_map_whose_output_the_cut_reduce_still_folds() {
    let fill = Extensions::YARD.with("wave_fill").unwrap();
    // Alg. 1 refuses the second map: T_J(2) > D.
    assert_eq!(fill_launches(Extensions::YARD, guarded()), 1);
    // Under the guard the reduce cut at D folds 14 s / 2.5 s of the 8 bytes, 1.4 maps'
    // worth, where one map's 4 bytes fold whole: the second map runs in the same wave.
    assert_eq!(fill_launches(fill, guarded()), 2);
    // No guard, no cut: Alg. 5 would sample, the paper's test stands.
    assert_eq!(fill_launches(fill, PolicyConfig::default()), 1);
    // Nor without `time_cut`, whose reduce the cut, not a sample, sizes.
    assert_eq!(
        fill_launches(fill.without("time_cut").unwrap(), guarded()),
        1
    );
}

#[test]
fn wave_fill_keeps_a_straggler_whose_output_the_cut_reduce_still_folds() {
    // Two maps of 5 s, one reduce of 1.7 s a byte over 4 bytes a map, D 20: both fit.
    // At 3 s one map is done and the other, at a quarter, a straggler (LATE: under half
    // the typical rate) that will end at 12 s. Eq. 11's window with both, 20 − 3 − 13.6,
    // leaves no room for a copy (under `T_m^a`), so Alg. 3 kills it. By the cut's rule
    // it stays: ending at 12, the reduce cut at D folds 8 / 1.7 of its 8 bytes, 1.18
    // maps' worth, against one map without it.
    let kills = |x: Extensions| {
        let profile = maps_of_4_bytes(1.7);
        let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
        send(
            &mut dart,
            0.0,
            Event::JobStarted(node0_job(2, 20.0, profile)),
        );
        let maps = granted_at_zero(&mut dart, 2);
        assert_eq!(maps.len(), 2);
        let mut out = send(
            &mut dart,
            3.0,
            Event::TaskFinished {
                attempt: maps[0],
                output_bytes: 4,
            },
        );
        out.extend(send(
            &mut dart,
            3.0,
            Event::TaskProgress {
                attempt: maps[1],
                progress: 0.25,
            },
        ));
        out.extend(send(&mut dart, 3.0, Event::Tick));
        out.iter()
            .any(|d| matches!(d, Decision::Kill(a) if *a == maps[1]))
    };
    assert!(kills(Extensions::YARD), "Alg. 3 kills the straggler");
    assert!(!kills(Extensions::YARD.with("wave_fill").unwrap()));
}

#[test]
fn time_cut_leaves_a_reduces_input_whole_for_the_guards_cut() {
    let ready = |x: Extensions, config: PolicyConfig| {
        let (run, out) = d8_reduce_ready(x, config);
        let kept = run.core.reduce_running_since(ReduceId(0)).map(|(_, k)| k);
        (out, kept)
    };
    let on = Extensions::YARD.with("time_cut").unwrap();
    // D8: eq. 12 leaves room for 6 of the 8 bytes; under the guard, whose cut at
    // `D − answer_cost` keeps what the reduce folded by then, all 8 are kept.
    let (out, kept) = ready(on, guarded());
    assert!(
        !out.iter()
            .any(|d| matches!(d, Decision::SampleReduceInput { .. })),
        "{out:?}"
    );
    assert_eq!(kept, Some(8));
    // No guard, no cut: Alg. 5 samples as before.
    let (out, kept) = ready(on, PolicyConfig::default());
    assert!(matches!(out[..], [Decision::SampleReduceInput { keep_bytes, .. }] if keep_bytes < 6));
    assert!(kept.is_some_and(|k| k < 6), "{kept:?}");
    // Without `cut_tail` the guard does not count on its cut: sampled.
    let (out, _) = ready(on.without("cut_tail").unwrap(), guarded());
    assert!(
        matches!(out[..], [Decision::SampleReduceInput { .. }]),
        "{out:?}"
    );
}

#[test]
fn a_reduce_is_judged_on_its_rate_once_it_reports_progress_and_only_once() {
    // D1 with D = 10.5; reduce 0 on container 5 gets 2 B at t = 4 (f = 1 s, judged from
    // 0.5 s on).
    let (mut run, c) = d1(PolicyKind::Dart, 10.5, true);
    let mut out = Vec::new();
    run.core.close_map_phase(None, &mut out);
    assert!(run.core.launch_next_reduce(c, NOW, &mut out));
    let a = AttemptId(run.core.attempts.len() as u32 - 1);
    let ready = Event::ReduceInputReady {
        reduce: ReduceId(0),
        bytes: 2,
    };
    run.event(4.0, ready.clone(), &mut out);
    let kills = |run: &mut Run, t: Seconds, progress: f64| {
        let mut out = Vec::new();
        run.event(
            t,
            Event::TaskProgress {
                attempt: a,
                progress,
            },
            &mut out,
        );
        out.iter()
            .filter(|d| matches!(d, Decision::Kill(_)))
            .count()
    };
    // No progress yet says nothing of the rate (a report may predate the input).
    assert_eq!(kills(&mut run, 6.0, 0.0), 0);
    // 40 % in 2 s: it ends at 9, before D.
    assert_eq!(kills(&mut run, 6.0, 0.4), 0);
    // 45 % in 4 s: it ends at 4 + 8.9, after D: killed and queued again.
    assert_eq!(kills(&mut run, 8.0, 0.45), 1);
    assert_eq!(run.core.next_reduce(), Some(ReduceId(0)));
    assert!(run.restart_waits(ReduceId(0)) && run.reduce_avoid == [NodeId(7)]);
    // Its restart, however slow, is not killed again.
    assert!(run.core.launch_next_reduce(c, 8.0, &mut out));
    let a = AttemptId(run.core.attempts.len() as u32 - 1);
    run.event(8.0, ready, &mut out);
    let mut out = Vec::new();
    run.event(
        10.0,
        Event::TaskProgress {
            attempt: a,
            progress: 0.01,
        },
        &mut out,
    );
    assert!(
        !out.iter().any(|d| matches!(d, Decision::Kill(_))),
        "{out:?}"
    );
}

#[test]
fn wave_end_puts_the_map_phase_at_the_longest_map_of_the_wave() {
    use crate::policy::estimate::expected_max_lognormal;
    // 20 maps of 10 s on average launched at 0: eq. (2) says 10; the wave ends with the
    // longest of 20 draws at σ 0.3 (`PolicyConfig::map_spread`), about 17.
    let paper = wave(without(|x| x.wave_end = false), 20, 100.0);
    assert_eq!(paper.current_estimate(0.0).map, 10.0);
    let yard = wave(Extensions::YARD, 20, 100.0);
    let longest = 10.0 * expected_max_lognormal(0.3, 20) * (-0.045f64).exp();
    let m = yard.current_estimate(0.0).map;
    assert!((m - longest).abs() < 0.1 && m > 16.0, "{m} vs {longest}");
    // At 5 s every map reports half done but map 7, a quarter: it ends at 20.
    let mut yard = yard;
    for i in 0..20 {
        let p = if i == 7 { 0.25 } else { 0.5 };
        yard.core.progress_report(AttemptId(i), p, 5.0);
    }
    let m = yard.current_estimate(5.0).map;
    assert!((m - 20.0).abs() < 0.01, "{m}");
    let mut paper = paper;
    for i in 0..20 {
        paper.core.progress_report(AttemptId(i), 0.5, 5.0);
    }
    assert_eq!(
        paper.current_estimate(5.0).map,
        10.0,
        "eq. (2) reads no progress"
    );
    // Once the last map ended (at 21), the phase ended then, whenever asked.
    let mut out = Vec::new();
    for i in 0..20 {
        yard.event(
            21.0,
            Event::TaskFinished {
                attempt: AttemptId(i),
                output_bytes: 2,
            },
            &mut out,
        );
    }
    yard.note_phases(21.0);
    assert_eq!(yard.current_estimate(30.0).map, 21.0);
}

#[test]
fn fifo_shuffle_leaves_the_last_output_when_the_link_keeps_up() {
    // 20 outputs of 2 B on a 100 B/s link: each crosses in 0.02 s, while the maps end
    // seconds apart. Eq. (3)–(7) take the 40 B over the link less an overlap from T_q (one
    // map after the first launch, 10) to T_M (10): 0.4 s.
    let paper = wave(without(|x| x.fifo_shuffle = false), 20, 100.0);
    assert!((paper.current_estimate(0.0).shuffle - 0.4).abs() < 1e-9);
    let yard = wave(Extensions::YARD, 20, 100.0);
    let s = yard.current_estimate(0.0).shuffle;
    assert!((s - 0.02).abs() < 1e-6, "{s}");
    // A link of 0.1 B/s cannot keep up: 400 s of output, all but the ~10 s the maps' ends
    // spread over left after them.
    let yard = wave(Extensions::YARD, 20, 0.1);
    let e = yard.current_estimate(0.0);
    assert!(e.shuffle > 380.0 && e.shuffle < 400.0, "{e:?}");
    // After the maps: the time since they ended and what is still queued.
    let mut yard = wave(Extensions::YARD, 2, 0.1);
    let mut out = Vec::new();
    for i in 0..2 {
        yard.event(
            10.0,
            Event::TaskFinished {
                attempt: AttemptId(i),
                output_bytes: 2,
            },
            &mut out,
        );
    }
    yard.note_phases(10.0);
    yard.event(12.0, Event::ShuffleBytes(3), &mut out);
    yard.note_phases(12.0);
    // The link moved 3 B in the 2 s it had bytes: 1.5 B/s (eq. 5 over busy time).
    let s = yard.current_estimate(12.0).shuffle;
    assert!(
        (s - (2.0 + 1.0 / 1.5)).abs() < 1e-6,
        "2 s since the maps, 1 B left at 1.5 B/s: {s}"
    );
}

#[test]
fn elapsed_phases_counts_the_reduce_phase_from_when_the_reduces_started() {
    // Two maps end at 10; their 8 B cross by 12; reduce 0 gets 4 B and reduce 1 gets 16 B
    // at 12: f = 2 s and 8 s, the job ends at 20.
    let run = |x: Extensions| {
        let mut run = wave(x, 2, 2.0);
        let mut out = Vec::new();
        for i in 0..2 {
            run.event(
                10.0,
                Event::TaskFinished {
                    attempt: AttemptId(i),
                    output_bytes: 4,
                },
                &mut out,
            );
            let c = ContainerId(u64::from(10 + i));
            run.core.grant(Container {
                id: c,
                at: at(10 + i),
            });
            assert!(run.core.launch_next_reduce(c, 10.0, &mut out));
        }
        run.note_phases(10.0);
        run.event(12.0, Event::ShuffleBytes(8), &mut out);
        run.note_phases(12.0);
        for (r, bytes) in [(0, 4), (1, 16)] {
            let reduce = ReduceId(r);
            run.event(12.0, Event::ReduceInputReady { reduce, bytes }, &mut out);
        }
        run
    };
    // Eq. (1) at 12.5 with none of the three: the map phase "ends" now, and a whole reduce
    // of the average input (eq. 8: 2 maps × 2 B, f = 2 s) follows.
    let old = Extensions {
        wave_end: false,
        fifo_shuffle: false,
        elapsed_phases: false,
        ..Extensions::YARD
    };
    let e = run(old).current_estimate(12.5);
    assert!(e.map == 12.5 && e.reduce == 2.0, "{e:?}");
    // With the maps' and the link's own history, the average reduce still ends at 14.
    let e = run(without(|x| x.elapsed_phases = false)).current_estimate(12.5);
    assert_eq!(
        (e.map, e.shuffle, e.reduce, e.total),
        (10.0, 2.0, 2.0, 14.0)
    );
    // The reduces' own inputs say 20; reduce 1's progress, a quarter at 16, says 28.
    let mut yard = run(Extensions::YARD);
    let e = yard.current_estimate(12.5);
    assert_eq!((e.map, e.shuffle), (10.0, 2.0), "{e:?}");
    assert!(
        (e.reduce - 8.0).abs() < 1e-9 && (e.total - 20.0).abs() < 1e-9,
        "{e:?}"
    );
    yard.core.progress_report(AttemptId(3), 0.25, 16.0); // maps 0–1, reduces 2–3
    let e = yard.current_estimate(16.0);
    assert!((e.total - 28.0).abs() < 1e-9, "{e:?}");
}

#[test]
fn a_reduce_pulls_the_shuffle_so_the_link_is_not_busy_before_one_runs() {
    // Live, the reduces start once the map phase closes: the first map's output waits 10 s
    // for them, then crosses in 1 s. Eq. 5 over the busy time counts from the first reduce.
    let mut e = Estimator::new(&testing::d1_profile(5.0), 1, None, 0.8);
    e.output_produced(5.0, 100.0);
    e.output_produced(10.0, 100.0);
    e.reduce_launched(15.0);
    e.reduce_launched(15.5); // a second reduce moves nothing
    e.bytes_shuffled(16.0, 100.0);
    assert!(
        (e.bandwidth(16.0) - 100.0).abs() < 1e-9,
        "{}",
        e.bandwidth(16.0)
    );
    // Counted from the first output, the wait read as a link of 9 B/s.
    let mut from_output = Estimator::new(&testing::d1_profile(5.0), 1, None, 0.8);
    from_output.output_produced(5.0, 100.0);
    from_output.bytes_shuffled(16.0, 100.0);
    assert!((from_output.bandwidth(16.0) - 100.0 / 11.0).abs() < 1e-9);
    // Where bytes crossed before any reduce ran (the simulator's link), nothing changes.
    let mut pushed = Estimator::new(&testing::d1_profile(5.0), 1, None, 0.8);
    pushed.output_produced(5.0, 100.0);
    pushed.bytes_shuffled(6.0, 50.0);
    pushed.reduce_launched(15.0);
    pushed.bytes_shuffled(16.0, 50.0);
    assert!((pushed.bandwidth(16.0) - 100.0 / 11.0).abs() < 1e-9);
}
