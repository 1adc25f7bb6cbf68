use super::*;
use crate::policy::{
    Container, JobSpec, Location, MapId, MapSpec, NodeId, Profile, RackId, testing,
};

const NOW: Seconds = 3.0;

fn at(node: u32) -> Location {
    Location {
        node: NodeId(node),
        rack: RackId(node),
    }
}

/// Maps 0–4 running (k = 5) on containers 0–4; map 5 (the paper's m6) pending with its
/// replica on node 7; container 5 offered on node 7 (local) or node 8 (remote).
fn d1(kind: PolicyKind, deadline: Seconds, local: bool) -> (Run, ContainerId) {
    d1_from(kind, d1_spec(deadline), local)
}

fn d1_spec(deadline: Seconds) -> JobSpec {
    JobSpec {
        deadline: Some(deadline),
        maps: (0..6)
            .map(|i| MapSpec {
                bytes: 1,
                replicas: vec![at(if i < 5 { i } else { 7 })],
            })
            .collect(),
        reduces: 3,
        profile: testing::d1_profile(2.5),
        allotment: None,
        recovered: Vec::new(),
    }
}

fn d1_from(kind: PolicyKind, spec: JobSpec, local: bool) -> (Run, ContainerId) {
    d1_with(Variant::of(kind), PolicyConfig::default(), spec, local)
}

fn d1_with(v: Variant, config: PolicyConfig, spec: JobSpec, local: bool) -> (Run, ContainerId) {
    let mut run = Run::new(v, config, spec, 0.0);
    let mut out = Vec::new();
    for i in 0..5 {
        run.core.grant(Container {
            id: ContainerId(i),
            at: at(i as u32),
        });
        run.core
            .launch_map(MapId(i as u32), ContainerId(i), 0.0, false, &mut out);
    }
    let offered = Container {
        id: ContainerId(5),
        at: at(if local { 7 } else { 8 }),
    };
    run.core.grant(offered);
    testing::set_d1_state(&mut run.est);
    (run, offered.id)
}

/// D1 with what only yard's extensions read: reduce times that spread (σ 0.3), two slots
/// for the three reduces, and a link that moved its 6 bytes in 1 busy second of the 2
/// since `T_q` (so eq. 5 over the busy time reads 6 B/s, as printed 3 B/s). The paper's
/// numbers must not move.
fn d1_extended(kind: PolicyKind, deadline: Seconds, local: bool) -> (Run, ContainerId) {
    d1_extended_with(Variant::of(kind), PolicyConfig::default(), deadline, local)
}

fn d1_extended_with(
    v: Variant,
    config: PolicyConfig,
    deadline: Seconds,
    local: bool,
) -> (Run, ContainerId) {
    let mut spec = d1_spec(deadline);
    spec.profile.reduce_time.spread = 0.3;
    spec.allotment = Some(2);
    let (mut run, c) = d1_with(v, config, spec, local);
    run.est.busy = 1.0;
    run.est.busy_since = None;
    run.est.backlog = 0.0;
    (run, c)
}

const BOTH: [PolicyKind; 2] = [PolicyKind::Dart, PolicyKind::DartPaper];

/// A one-map job whose mean map (10 s) does not fit `D` = 9 s, though the shortest map
/// its profile timed (6 s) does, with its shuffle and the least reduce.
fn lone_map_spec() -> JobSpec {
    let mut profile = testing::d1_profile(10.0);
    profile.map_remote = 10.0;
    profile.map_shortest = Some(6.0);
    profile.shuffle_bandwidth = 1_000.0;
    JobSpec {
        deadline: Some(9.0),
        maps: vec![MapSpec {
            bytes: 64,
            replicas: vec![at(0)],
        }],
        reduces: 1,
        profile,
        allotment: None,
        recovered: Vec::new(),
    }
}

fn send(p: &mut Dart, now: Seconds, e: Event) -> Vec<Decision> {
    use rand::SeedableRng;
    let mut out = Vec::new();
    p.handle(now, e, &mut Rng::seed_from_u64(1), &mut out);
    out
}

/// The map `p` launched on container 0 at node 0, if it did.
fn guarded() -> PolicyConfig {
    PolicyConfig {
        guarded: true,
        ..PolicyConfig::default()
    }
}

fn lone_map_started(p: &mut Dart) -> Option<AttemptId> {
    send(p, 0.0, Event::JobStarted(lone_map_spec()));
    let c = Container {
        id: ContainerId(0),
        at: at(0),
    };
    launched_maps(&send(p, 0.0, Event::ContainerGranted(c)))
        .first()
        .copied()
}

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

/// The map attempts `out` launches, in order.
fn launched_maps(out: &[Decision]) -> Vec<AttemptId> {
    out.iter()
        .filter_map(|d| match d {
            Decision::LaunchMap { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect()
}

/// Maps of 5 s anywhere, 4 bytes of output each on a fast link, and a reduce of
/// `reduce_a` seconds a byte (`f(d) = reduce_a·d`).
fn maps_of_4_bytes(reduce_a: Seconds) -> Profile {
    let mut profile = testing::d1_profile(5.0);
    profile.map_remote = 5.0;
    profile.partition_bytes = 4.0;
    profile.shuffle_bandwidth = 1_000.0;
    profile.reduce_time.a = reduce_a;
    profile
}

/// A job of `maps` 64-byte maps on node 0 and one reduce, due at `deadline`.
fn node0_job(maps: usize, deadline: Seconds, profile: Profile) -> JobSpec {
    JobSpec {
        deadline: Some(deadline),
        maps: vec![
            MapSpec {
                bytes: 64,
                replicas: vec![at(0)],
            };
            maps
        ],
        reduces: 1,
        profile,
        allotment: None,
        recovered: Vec::new(),
    }
}

/// Offers `n` containers on node 0 at time 0, one by one: the map attempts launched.
fn granted_at_zero(dart: &mut Dart, n: u64) -> Vec<AttemptId> {
    (0..n)
        .flat_map(|i| {
            let c = Container {
                id: ContainerId(i),
                at: at(0),
            };
            launched_maps(&send(dart, 0.0, Event::ContainerGranted(c)))
        })
        .collect()
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

/// The estimate a `CloseMapPhase` in `out` carried (outer `None`: no close).
fn closed_with(out: &[Decision]) -> Option<Option<Estimate>> {
    out.iter().find_map(|d| match d {
        Decision::CloseMapPhase { estimate, .. } => Some(*estimate),
        _ => None,
    })
}

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

fn approach(run: &mut Run, c: ContainerId) -> Vec<Decision> {
    let mut out = Vec::new();
    assert!(run.approach(c, NOW, &mut out));
    out
}

#[test]
fn d2_a_remote_candidate_at_exactly_d_is_not_launched_and_becomes_local_only() {
    // T_J = 5.5 + 1.5 + 3 = 10.0, and eq. (10) is strict: 10 < 10 is false.
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.0, false);
        let out = approach(&mut run, c);
        assert_eq!(
            out,
            vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))],
            "{kind}"
        );
        assert!(!run.core.map_phase_closed(), "{kind}");
        assert_eq!(run.core.k(), 5, "{kind}");
    }
}

#[test]
fn d3_a_local_candidate_at_exactly_d_terminates_the_map_phase() {
    // Also Fig. 6 (P4): D = 10, T_p = 3, m6 local and T_J(k_6) not under D: terminated.
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.0, true);
        let out = approach(&mut run, c);
        assert_eq!(out[0], Decision::Release(c), "{kind}");
        assert!(
            matches!(out[1], Decision::CloseMapPhase { k: 5, .. }),
            "{kind}: {out:?}"
        );
        assert!(run.core.map_phase_closed(), "{kind}");
    }
}

fn launches_m6(out: &[Decision]) -> bool {
    matches!(
        out[0],
        Decision::LaunchMap {
            map: MapId(5),
            locality: Locality::Remote,
            ..
        }
    )
}

#[test]
fn d4_with_half_a_unit_more_the_candidate_is_launched() {
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.5, false);
        let out = approach(&mut run, c);
        assert!(launches_m6(&out), "{kind}: {out:?}");
        assert_eq!(run.core.k(), 6, "{kind}");
        assert_eq!(run.est.map_end, 5.5, "{kind}: T_M^o := T_M^n");
    }
}

#[test]
fn dart_paper_fig4_and_d1_every_equation_whatever_the_profile_says_of_spread_slots_and_idle_time() {
    let (run, _) = d1_extended(PolicyKind::DartPaper, 10.5, false);
    let e = &run.est;
    // Fig. 4 (P1): T_M^n = max(5, 3 + 2.5) = 5.5 for the remote candidate m6.
    assert_eq!(e.map_phase_end(NOW, e.map_duration(Locality::Remote)), 5.5);
    assert_eq!(e.bandwidth(NOW), 3.0, "eq. (5) as printed: 6 / (3 − 1)");
    // Fig. 5 (P2): the shuffle counts m6, (k+1)·p·R = 18 B: T_S = 6, T_OS = 4.5, T_NS = 1.5.
    assert_eq!(e.non_overlapped_shuffle(6.0, 5.5, NOW), 1.5);
    // Eq. (8)–(9) at e = 1: d = 6, T_R = 0.5 · 6 = 3, one wave.
    let t = e.completion(6.0, NOW, 2.5, true);
    assert_eq!((t.map, t.shuffle, t.reduce, t.total), (5.5, 1.5, 3.0, 10.0));
    // D5: with V_p = 9, B = 4.5, T_S = 4, T_NS = −0.5 → 0, T_J = 8.5.
    let mut e = e.clone();
    e.shuffled = 9.0;
    assert_eq!(e.completion(6.0, NOW, 2.5, true).total, 8.5);
    // yard's dart reads the same state otherwise: the busy link's 6 B/s, the last of three
    // noisy reduces on two slots.
    let (run, _) = d1_extended(PolicyKind::Dart, 10.5, false);
    assert_eq!(run.est.bandwidth(NOW), 6.0);
    let t = run.est.completion(6.0, NOW, 2.5, true);
    assert!(t.reduce > 3.3 && t.total > 10.5, "{t:?}");
}

#[test]
fn dart_paper_d2_to_d4_hold_whatever_the_profile_says_of_spread_slots_and_idle_time() {
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, false);
    let out = approach(&mut run, c);
    assert_eq!(
        out,
        vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
    );
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = approach(&mut run, c);
    assert!(matches!(out[1], Decision::CloseMapPhase { k: 5, .. }));
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.5, false);
    let out = approach(&mut run, c);
    assert!(launches_m6(&out), "{out:?}");
    assert_eq!((run.core.k(), run.est.map_end), (6, 5.5));
    // dart leaves room for the last of its noisy reduces: m6 does not fit by 10.5.
    let (mut run, c) = d1_extended(PolicyKind::Dart, 10.5, false);
    let out = approach(&mut run, c);
    assert_eq!(
        out,
        vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
    );
}

/// Reduce 0 on container 5 (node 7), its map phase closed; returns the decisions when its
/// input of `bytes` is ready at `t`.
fn reduce_ready(run: &mut Run, c: ContainerId, t: Seconds, bytes: u64) -> Vec<Decision> {
    let mut out = Vec::new();
    run.core.close_map_phase(None, &mut out);
    assert!(run.core.launch_next_reduce(c, t, &mut out));
    let mut out = Vec::new();
    run.event(
        t,
        Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes,
        },
        &mut out,
    );
    out
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

#[test]
fn dart_paper_d7_d8_alg5_samples_to_what_f_inverse_of_the_time_left_allows() {
    // D8: a = 0.5, b = 1, D = 10, T_p = 7: d_max = 3 / 0.5 = 6 (eq. 12). d_i = 8 is sampled
    // to 6; d_i = 5 is left as it is.
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 8);
    let six = Decision::SampleReduceInput {
        reduce: ReduceId(0),
        keep_bytes: 6,
    };
    assert_eq!(out, vec![six.clone()]);
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 5);
    assert!(
        !out.iter()
            .any(|d| matches!(d, Decision::SampleReduceInput { .. })),
        "{out:?}"
    );
    // dart sizes the reduce for the largest draw of its wave: it keeps less.
    let (mut run, c) = d1_extended(PolicyKind::Dart, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 8);
    assert!(
        matches!(out[..], [Decision::SampleReduceInput { keep_bytes, .. }] if keep_bytes < 6),
        "{out:?}"
    );
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
fn dart_paper_d9_d10_skew_is_the_largest_reduce_at_e_1_and_the_ewma_is_section_5_3() {
    use crate::policy::PreviousRun;
    let (mut run, _) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    run.est.previous_runs = vec![
        PreviousRun {
            k: 10,
            max_reduce_input: 100.0,
        },
        PreviousRun {
            k: 20,
            max_reduce_input: 220.0,
        },
    ];
    // Eq. (13), k_n = 15: d = ½(1.5·100 + 0.75·220) = 157.5, T_R = f(157.5) = 78.75.
    assert_eq!(run.est.reduce_input(15.0, true), 157.5);
    assert_eq!(run.est.completion(15.0, NOW, 2.5, true).reduce, 78.75);
    // D-WOST's eq. (8): d = 15 · 1, T_R = 7.5.
    assert_eq!(run.est.completion(15.0, NOW, 2.5, false).reduce, 7.5);
    // D10: T_m^a = 2.5, a map took 4 → 0.8 · 2.5 + 0.2 · 4 = 2.8.
    run.est.map_finished(Locality::Remote, 4.0, Some(1.0));
    assert!((run.est.all - 2.8).abs() < 1e-12 && (run.est.remote - 2.8).abs() < 1e-12);
}

#[test]
fn an_extension_is_turned_off_by_its_name_and_only_it() {
    for name in Extensions::NAMES {
        let (x, base) = match Extensions::YARD.on().contains(&name) {
            true => (Extensions::YARD.without(name).unwrap(), Extensions::YARD),
            // Off in `dart`: turned on by name, and off again by name.
            false => {
                let on = Extensions::YARD.with(name).unwrap();
                assert_eq!(on.against(Extensions::YARD), (vec![], vec![name]));
                (on.without(name).unwrap(), on)
            }
        };
        assert_eq!(x.against(base), (vec![name], vec![]));
        assert_eq!(Extensions::NONE.without(name), Ok(Extensions::NONE));
    }
    assert_eq!(Extensions::YARD.off(), ["wave_fill"]);
    assert_eq!(Extensions::NONE.off().len(), Extensions::NAMES.len());
    assert!(Extensions::YARD.without("warp_drive").is_err());
    // `dart` runs the mix it is given; other kinds ignore it.
    let config = PolicyConfig {
        dart_extensions: Some(Extensions::YARD.without("lone_map").unwrap()),
        ..guarded()
    };
    let mut dart = Dart::new(PolicyKind::Dart, config.clone());
    assert_eq!(lone_map_started(&mut dart), None, "lone_map is off");
    let mut paper = Dart::new(PolicyKind::DartPaper, config);
    assert_eq!(paper.variant.x, Extensions::NONE);
    assert_eq!(lone_map_started(&mut paper), None);
}

#[test]
fn each_ablation_is_dart_paper_less_exactly_its_part() {
    let paper = Variant::of(PolicyKind::DartPaper);
    assert_eq!(
        paper,
        Variant {
            approach: true,
            revise_maps: true,
            revise_reduces: true,
            skew: true,
            late: false,
            x: Extensions::NONE,
        }
    );
    let of = Variant::of;
    assert_eq!(
        of(PolicyKind::DartWithoutRevise),
        Variant {
            revise_maps: false,
            revise_reduces: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::DartMapReviseOnly),
        Variant {
            revise_reduces: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::DartWithoutSkew),
        Variant {
            skew: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::Dart),
        Variant {
            x: Extensions::YARD,
            ..paper
        }
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

/// D1 after the map phase closed, with maps 0–2 as stragglers whose remaining times are
/// 1.5, 2.0 and 3.0 (progress ½ after 1.5, 2.0 and 3.0 s).
fn revise_state(kind: PolicyKind, deadline: Seconds) -> (Run, ContainerId) {
    let (mut run, c) = d1(kind, deadline, false);
    let mut out = Vec::new();
    run.core.close_map_phase(None, &mut out);
    for (i, age) in [1.5, 2.0, 3.0].into_iter().enumerate() {
        let a = AttemptId(i as u32);
        run.core.attempts[i].started = NOW - age;
        run.core.progress_report(a, 0.5, NOW);
        run.stragglers.push(a);
    }
    (run, c)
}

fn window(run: &Run) -> Seconds {
    run.est
        .window(run.core.k(), NOW, run.deadline().unwrap(), run.v.skew)
}

#[test]
fn d11_a_window_of_t_ma_speculates_the_straggler_with_most_time_left() {
    // Eq. (11) with k = 5: T_NS = 0.5, T_R = 2.5; D = 8.5 makes W = 2.5 = T_m^a (≥: copy).
    // Fig. 6 (P5): a copy of the straggler keeps k = 5.
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 8.5);
        assert!((window(&run) - 2.5).abs() < 1e-12, "{kind}");
        let mut out = Vec::new();
        assert!(run.revise(c, NOW, &mut out), "{kind}");
        assert!(
            matches!(
                out[..],
                [Decision::LaunchMap {
                    map: MapId(2),
                    speculative: true,
                    ..
                }]
            ),
            "{kind}: {out:?}"
        );
        assert_eq!(run.core.k(), 5, "{kind}: a copy leaves k unchanged");
    }
}

#[test]
fn d12_a_window_under_t_ma_kills_the_straggler_with_most_time_left() {
    // Fig. 6 (P5): killing the straggler makes k = 4.
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 8.0); // W = 2.0
        let mut out = Vec::new();
        assert!(
            !run.revise(c, NOW, &mut out),
            "{kind}: the container stays free"
        );
        assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
        assert_eq!(run.core.k(), 4, "{kind}");
    }
}

#[test]
fn d13_no_window_kills_every_straggler_over_the_threshold_strictly() {
    // W = −1.5: Alg. 4 with StragglingsThreshold 0.8 · 2.5 = 2.0 kills only T_rem = 3.0
    // (T_rem = 2.0 is not > 2.0).
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 4.5);
        assert!(window(&run) <= 0.0, "{kind}");
        let mut out = Vec::new();
        assert!(!run.revise(c, NOW, &mut out), "{kind}");
        assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
        assert_eq!(run.core.k(), 4, "{kind}");
        assert_eq!(run.stragglers, vec![AttemptId(0), AttemptId(1)], "{kind}");
    }
}

/// A wave of `n` maps of 1 byte each, all launched node-local at 0 on containers 0..n and
/// the map phase closed; 2 reduces, each map's output 2 B (p = 1) on a link of `bandwidth`
/// B/s, `f(d) = 0.5·d` with no spread; `T_l^a` 10 s. Dart's extensions `x`.
fn wave(x: Extensions, n: u32, bandwidth: f64) -> Run {
    let mut profile = testing::d1_profile(10.0);
    profile.shuffle_bandwidth = bandwidth;
    let spec = JobSpec {
        deadline: Some(1000.0),
        maps: (0..n)
            .map(|i| MapSpec {
                bytes: 1,
                replicas: vec![at(i)],
            })
            .collect(),
        reduces: 2,
        profile,
        allotment: None,
        recovered: Vec::new(),
    };
    let v = Variant {
        x,
        ..Variant::of(PolicyKind::Dart)
    };
    let mut run = Run::new(v, PolicyConfig::default(), spec, 0.0);
    let mut out = Vec::new();
    for i in 0..n {
        let c = ContainerId(u64::from(i));
        run.core.grant(Container { id: c, at: at(i) });
        run.core.launch_map(MapId(i), c, 0.0, false, &mut out);
        run.note_launch(0.0);
    }
    run.core.close_map_phase(None, &mut out);
    run
}

fn without(f: impl Fn(&mut Extensions)) -> Extensions {
    let mut x = Extensions::YARD;
    f(&mut x);
    x
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
