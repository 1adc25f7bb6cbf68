//! yard's deadline guard inside Dart (`guard.rs`): `lone_map`, a first map launched when the
//! estimate says none fits but one could; `last_moment`, the maps stopped when the time left
//! falls to answering from what is done, the reduces cut before D; and the approach admitting
//! only what the guard would spare.

use super::*;

/// `dart` with a guard, its lone map launched and `progress` done at 7 s, then the guard
/// at 8 s (D = 9 s): the policy, the map's attempt and the guard's decisions.
fn lone_map_at_the_guard(progress: f64) -> (Dart, AttemptId, Vec<Decision>) {
    let mut dart = Dart::new(PolicyKind::Dart, guarded());
    let a = lone_map_started(&mut dart).expect("dart launches the lone map");
    send(
        &mut dart,
        7.0,
        Event::TaskProgress {
            attempt: a,
            progress,
        },
    );
    let out = send(&mut dart, 8.0, Event::Guard);
    (dart, a, out)
}

#[test]
fn lone_map_runs_a_map_that_fits_by_d_and_the_guard_lets_it_end() {
    // At 7 s it is 7/8.5 done: it will end at 8.5 s, before D = 9 s.
    let (mut dart, a, out) = lone_map_at_the_guard(7.0 / 8.5);
    assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
    assert!(dart.progress().guarded && dart.progress().k == 1);
    let out = send(
        &mut dart,
        8.5,
        Event::TaskFinished {
            attempt: a,
            output_bytes: 1,
        },
    );
    let reduce = out
        .iter()
        .find_map(|d| match d {
            Decision::LaunchReduce { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .expect("the reduce runs on the freed container");
    send(&mut dart, 8.5, Event::ShuffleBytes(1));
    send(
        &mut dart,
        8.5,
        Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes: 1,
        },
    );
    let p = finished_job(&mut dart, 8.8, reduce, 1);
    assert!(p.processed_fraction() > 0.0, "not empty: {p:?}");
    assert_eq!((p.k, p.maps_done, p.processed_bytes), (1, 1, 64));

    // The paper's Alg. 1 on the same events refuses: T_J(1) > D, an empty answer.
    let mut paper = Dart::new(PolicyKind::DartPaper, guarded());
    assert_eq!(lone_map_started(&mut paper), None);
    assert!(paper.progress().map_phase_closed && paper.progress().k == 0);
    // And `dart` less the switch refuses as well.
    let x = Extensions {
        lone_map: false,
        ..Extensions::YARD
    };
    let mut without = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
    assert_eq!(lone_map_started(&mut without), None);
    // And so does `dart` in a run with no guard to stop waiting for the map by `D`: there
    // a map that ran long would be a miss.
    let mut unguarded = Dart::new(PolicyKind::Dart, PolicyConfig::default());
    assert_eq!(lone_map_started(&mut unguarded), None);
}

/// `last_moment`'s job: `maps` maps of 5 s on node 0, each writing 4 bytes to the one reduce
/// (`f(d) = 0.5·d`: 2 s of reduce per map), D = 20 s; `dart` with a guard, every map
/// launched at 0 on containers of node 0. The policy, the maps' attempts and the last
/// decisions.
fn last_moment_job(maps: usize) -> (Dart, Vec<AttemptId>) {
    let profile = maps_of_4_bytes(0.5);
    let mut dart = Dart::new(PolicyKind::Dart, guarded());
    send(
        &mut dart,
        0.0,
        Event::JobStarted(node0_job(maps, 20.0, profile)),
    );
    let launched = granted_at_zero(&mut dart, maps as u64);
    assert_eq!(launched.len(), maps, "every map fits");
    (dart, launched)
}

/// The last task `attempt` finishes at `now` having output `output_bytes`: the job's
/// `Finish`.
fn finished_job(dart: &mut Dart, now: Seconds, attempt: AttemptId, output_bytes: u64) -> Progress {
    let out = send(
        dart,
        now,
        Event::TaskFinished {
            attempt,
            output_bytes,
        },
    );
    match out.last() {
        Some(Decision::Finish(p)) => *p,
        _ => panic!("{out:?}"),
    }
}

fn wake_asked(out: &[Decision]) -> Option<Seconds> {
    out.iter().rev().find_map(|d| match d {
        Decision::WakeAt(t) => Some(*t),
        _ => None,
    })
}

fn launched_reduce(out: &[Decision]) -> AttemptId {
    out.iter()
        .find_map(|d| match d {
            Decision::LaunchReduce { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .expect("the reduce runs on the freed container")
}

#[test]
fn last_moment_stops_the_maps_when_the_time_left_falls_to_answering_from_what_is_done() {
    let (mut dart, maps) = last_moment_job(2);
    // Nothing done yet: stopping would answer from nothing, so the only moment is the
    // last reduces' cut, at D (the simulator's answer cost is 0).
    let out = send(&mut dart, 1.0, Event::Tick);
    assert!(
        !out.iter().any(|d| matches!(d, Decision::Kill(_))),
        "{out:?}"
    );
    let out = send(
        &mut dart,
        5.0,
        Event::TaskFinished {
            attempt: maps[0],
            output_bytes: 4,
        },
    );
    // One map done: its 4 bytes take 2 s to reduce (and a few ms to shuffle), so the maps
    // stop at about 18 s: D less the answer from what is done.
    let stop = wake_asked(&out).expect("the guard's own moment is asked for");
    assert!((17.9..18.0).contains(&stop), "{stop}");
    // The second map hangs (no tick comes to judge it a straggler): at the moment it is
    // killed (its end and a reduce over both outputs no longer fit), and the reduce
    // answers from the first.
    let out = send(&mut dart, stop, Event::Wake);
    assert!(out.contains(&Decision::Kill(maps[1])), "{out:?}");
    let p = dart.progress();
    assert!(p.guarded && p.map_phase_closed && p.k == 1, "{p:?}");
    // `dart-paper` asks for no moment of its own.
    let mut paper = Dart::new(PolicyKind::DartPaper, guarded());
    send(&mut paper, 0.0, Event::JobStarted(lone_map_spec()));
    let out = send(&mut paper, 0.0, Event::Tick);
    assert_eq!(wake_asked(&out), None);
}

/// The one-map `last_moment_job` with its map done at 5 s and its reduce running on its
/// 4 bytes (2 s), then the fixed guard at 6 s: the policy, the reduce and what the guard
/// decided.
fn reduce_at_the_floor_guard() -> (Dart, AttemptId, Vec<Decision>) {
    let (mut dart, maps) = last_moment_job(1);
    let out = send(
        &mut dart,
        5.0,
        Event::TaskFinished {
            attempt: maps[0],
            output_bytes: 4,
        },
    );
    let reduce = launched_reduce(&out);
    send(&mut dart, 5.0, Event::ShuffleBytes(4));
    send(
        &mut dart,
        5.0,
        Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes: 4,
        },
    );
    let out = send(&mut dart, 6.0, Event::Guard);
    (dart, reduce, out)
}

#[test]
fn last_moment_spares_a_reduce_that_ends_in_time_and_counts_it_in_full() {
    let (mut dart, reduce, out) = reduce_at_the_floor_guard();
    assert!(
        !out.iter().any(|d| matches!(d, Decision::CutReduce { .. })),
        "a reduce that ends at 7 s is not cut at 6 s: {out:?}"
    );
    // It ends in full (the simulator reports no bytes for a reduce it did not cut).
    let p = finished_job(&mut dart, 7.0, reduce, 0);
    assert_eq!(p.processed_fraction(), 1.0, "{p:?}");
}

#[test]
fn last_moment_cuts_the_last_reduces_answer_cost_before_d() {
    let (mut dart, reduce, out) = reduce_at_the_floor_guard();
    // The reduce hangs. Its cut is asked for at D less the answer's cost (0 here).
    let cut = wake_asked(&out).or(dart.run.as_ref().and_then(|r| r.wake));
    assert_eq!(cut, Some(20.0));
    let out = send(&mut dart, 19.0, Event::Tick);
    assert!(!out.iter().any(|d| matches!(d, Decision::CutReduce { .. })));
    let out = send(&mut dart, 20.0, Event::Wake);
    assert!(
        out.contains(&Decision::CutReduce {
            attempt: reduce,
            reduce: ReduceId(0)
        }),
        "{out:?}"
    );
    // It folded in half its input: the answer says so.
    let p = finished_job(&mut dart, 20.0, reduce, 2);
    assert_eq!(p.processed_fraction(), 0.5, "{p:?}");
    // With a cost, the cut comes that much earlier.
    let config = PolicyConfig {
        answer_cost: 0.5,
        ..guarded()
    };
    let mut costly = Dart::new(PolicyKind::Dart, config);
    let out = send(&mut costly, 0.0, Event::JobStarted(lone_map_spec()));
    assert_eq!(wake_asked(&out), Some(8.5), "D = 9 s less 0.5 s: {out:?}");
}

#[test]
fn while_no_map_is_done_the_guard_stops_a_map_only_once_ending_now_would_be_too_late() {
    // Half done at 7 s: its rate says it ends at 14 s, after D = 9 s. But it is all the
    // answer could hold, and a rate can be wrong: the guard and the ticks leave it running
    // while its output, were it to end now, could still be answered by D.
    let (mut dart, a, out) = lone_map_at_the_guard(0.5);
    assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
    let out = send(&mut dart, 8.0, Event::Tick);
    assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
    assert_eq!(dart.progress().k, 1);
    // Once even ending now leaves its shuffle and least reduce no time before D (both a
    // few milliseconds here): stopped on the tick.
    let out = send(&mut dart, 9.0, Event::Tick);
    assert!(out.contains(&Decision::Kill(a)), "{out:?}");
    assert_eq!(dart.progress().k, 0);
}

#[test]
fn the_guards_close_carries_the_estimate_and_its_uncapped_total_passes_d() {
    // Four maps of 5 s, D = 20 s, two containers: two maps run, two wait. At 15 s both
    // running maps are a tenth done (their rates say they end long after D); the guard at
    // 16 s, with no map done, spares them and closes the map phase.
    let at_the_guard = |kind: PolicyKind| {
        let mut dart = Dart::new(kind, guarded());
        let job = node0_job(4, 20.0, maps_of_4_bytes(0.5));
        send(&mut dart, 0.0, Event::JobStarted(job));
        let maps = granted_at_zero(&mut dart, 2);
        assert_eq!(maps.len(), 2, "{kind:?}");
        for attempt in maps {
            let progress = Event::TaskProgress {
                attempt,
                progress: 0.1,
            };
            send(&mut dart, 15.0, progress);
        }
        assert!(!dart.progress().map_phase_closed, "{kind:?}");
        let out = send(&mut dart, 16.0, Event::Guard);
        assert!(dart.progress().map_phase_closed, "{kind:?}");
        closed_with(&out)
            .expect("the guard closes the map phase")
            .expect("with the policy's estimate")
    };
    // `forecast_cut` under `last_moment`: the total is at most D; Dart eq. (1)'s sum of
    // the parts is not, and the parts are the uncut phases.
    let e = at_the_guard(PolicyKind::Dart);
    assert_eq!(e.total, 20.0, "{e:?}");
    assert!(e.map > 40.0 && e.uncapped() > e.total, "{e:?}");
    assert_eq!(e.uncapped(), e.map + e.shuffle + e.reduce);
    // `dart-paper`'s guard stops both maps (k = 0) and its close carries eq. (1)'s T_J of
    // what is left, uncapped: the total is the parts' sum.
    let e = at_the_guard(PolicyKind::DartPaper);
    assert_eq!(e.total, e.uncapped(), "{e:?}");
}

#[test]
fn lone_map_without_last_moment_the_guard_stops_a_map_that_will_not_end_in_time() {
    let at_the_guard = |progress: f64| {
        let x = Extensions::YARD.without("last_moment").unwrap();
        let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
        let a = lone_map_started(&mut dart).expect("dart launches the lone map");
        let progress = Event::TaskProgress {
            attempt: a,
            progress,
        };
        send(&mut dart, 7.0, progress);
        let out = send(&mut dart, 8.0, Event::Guard);
        (dart, a, out)
    };
    // Half done at 7 s: it ends at 14 s, after D. The guard kills it.
    let (_, a, out) = at_the_guard(0.5);
    assert!(out.contains(&Decision::Kill(a)), "{out:?}");
    // Spared at the guard (ends at 8.5 s), then slowed: killed on the next tick.
    let (mut dart, a, out) = at_the_guard(7.0 / 8.5);
    assert!(!out.contains(&Decision::Kill(a)));
    send(
        &mut dart,
        8.4,
        Event::TaskProgress {
            attempt: a,
            progress: 0.83,
        },
    );
    let out = send(&mut dart, 8.4, Event::Tick);
    assert!(out.contains(&Decision::Kill(a)), "{out:?}");
    assert_eq!(dart.progress().k, 0);
}

#[test]
fn lone_map_launches_the_map_likeliest_to_bring_the_most_input() {
    // Maps on node 0, one with 4× the other's input, in either order, and one with none:
    // only the short one's best case fits D = 9 s, the locality queue offers one of them
    // first, and a map with no input would answer from nothing.
    for short in [0, 1] {
        let mut spec = lone_map_spec();
        let map = |bytes| MapSpec {
            bytes,
            replicas: vec![at(0)],
        };
        spec.maps = match short {
            0 => vec![map(32), map(128), map(0)],
            _ => vec![map(128), map(32), map(0)],
        };
        for x in [
            Extensions::YARD,
            Extensions::YARD.without("lone_map").unwrap(),
        ] {
            let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
            send(&mut dart, 0.0, Event::JobStarted(spec.clone()));
            let c = Container {
                id: ContainerId(0),
                at: at(0),
            };
            let out = send(&mut dart, 0.0, Event::ContainerGranted(c));
            let launched: Vec<MapId> = out
                .iter()
                .filter_map(|d| match d {
                    Decision::LaunchMap { map, .. } => Some(*map),
                    _ => None,
                })
                .collect();
            match x.lone_map {
                true => assert_eq!(launched, vec![MapId(short)], "{out:?}"),
                false => assert!(launched.is_empty(), "{out:?}"),
            }
        }
    }
}

#[test]
fn under_the_guard_the_forecast_answers_by_d() {
    let v = Variant::of(PolicyKind::Dart);
    let (free, _) = d1_extended_with(v, PolicyConfig::default(), 5.0, true);
    let uncut = free.current_estimate(0.0);
    assert!(uncut.total > 5.0, "{uncut:?}");
    let (guarded, _) = d1_extended_with(v, guarded(), 5.0, true);
    let e = guarded.current_estimate(0.0);
    assert_eq!(e.total, 5.0, "{e:?}");
    assert_eq!((e.map, e.shuffle), (uncut.map, uncut.shuffle));
}

#[test]
fn under_cut_tails_guard_a_late_reduce_is_left_to_the_cut_not_restarted() {
    let kills_of_a_late_reduce = |x: Extensions| {
        let v = Variant {
            x,
            ..Variant::of(PolicyKind::Dart)
        };
        let (mut run, c) = d1_with(v, guarded(), d1_spec(10.5), true);
        let mut out = Vec::new();
        run.core.close_map_phase(None, &mut out);
        assert!(run.core.launch_next_reduce(c, NOW, &mut out));
        let a = AttemptId(run.core.attempts.len() as u32 - 1);
        let ready = Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes: 2,
        };
        run.event(4.0, ready, &mut out);
        // 45 % in 4 s: its rate says it ends at 12.9 s, after D.
        let mut out = Vec::new();
        let report = Event::TaskProgress {
            attempt: a,
            progress: 0.45,
        };
        run.event(8.0, report, &mut out);
        out.iter()
            .filter(|d| matches!(d, Decision::Kill(_)))
            .count()
    };
    // The guard's cut keeps what it folded in by D − answer_cost.
    assert_eq!(kills_of_a_late_reduce(Extensions::YARD), 0);
    // Without `cut_tail` the guard does not count on the cut: restarted elsewhere.
    let without = Extensions::YARD.without("cut_tail").unwrap();
    assert_eq!(kills_of_a_late_reduce(without), 1);
}

#[test]
fn the_guard_does_not_stop_a_map_the_approach_launched_without_news() {
    // Maps of 5 s writing 4 B each, `f(d) = 0.1·d` (0.4 s of reduce per map), D = 11.5 s and
    // an answer that costs 1 s: the guard's cut is at 10.5 s. Maps 0 and 1 run from 0 and end
    // at 5. On map 0's container, Alg. 1 alone admits map 2: T_J(3) = 10 + 1.2 = 11.2 < D.
    // But the guard's moment, the cut less the reduce over the two outputs done, is 9.7 s,
    // and there map 2 — on time, no report says otherwise — cannot end, shuffle and be
    // reduced with the others (1.2 s) by the cut: the guard would stop what the approach
    // launched on the same information.
    let config = PolicyConfig {
        answer_cost: 1.0,
        ..guarded()
    };
    let mut dart = Dart::new(PolicyKind::Dart, config);
    send(
        &mut dart,
        0.0,
        Event::JobStarted(node0_job(4, 11.5, maps_of_4_bytes(0.1))),
    );
    let mut launched = granted_at_zero(&mut dart, 2);
    assert_eq!(launched.len(), 2, "maps 0 and 1 fit");
    let mut killed = Vec::new();
    let mut wake = None;
    for &a in &launched.clone() {
        let out = send(
            &mut dart,
            5.0,
            Event::TaskFinished {
                attempt: a,
                output_bytes: 4,
            },
        );
        launched.extend(launched_maps(&out));
        wake = wake_asked(&out).or(wake);
    }
    // No news: no progress report, no map past its mean. The guard's moment comes (9.7 s
    // with map 2 running, before its mean end at 10 s).
    let stop = wake.expect("the guard's moment is asked for");
    let out = send(&mut dart, stop, Event::Wake);
    killed.extend(out.iter().filter_map(|d| match d {
        Decision::Kill(a) => Some(*a),
        _ => None,
    }));
    let stopped: Vec<&AttemptId> = launched.iter().filter(|a| killed.contains(a)).collect();
    assert!(
        stopped.is_empty(),
        "launched {launched:?}, stopped {stopped:?}"
    );
    // The approach kept to the two maps the answer has time for.
    assert_eq!(dart.progress().k, 2, "{:?}", dart.progress());
    assert!(dart.progress().map_phase_closed);
    // Without the guard's cost and tail to respect (no guard), Alg. 1 alone admits map 2.
    let mut unguarded = Dart::new(PolicyKind::Dart, PolicyConfig::default());
    send(
        &mut unguarded,
        0.0,
        Event::JobStarted(node0_job(4, 11.5, maps_of_4_bytes(0.1))),
    );
    let first = granted_at_zero(&mut unguarded, 2);
    let out = send(
        &mut unguarded,
        5.0,
        Event::TaskFinished {
            attempt: first[0],
            output_bytes: 4,
        },
    );
    assert_eq!(launched_maps(&out).len(), 1, "{out:?}");
}
