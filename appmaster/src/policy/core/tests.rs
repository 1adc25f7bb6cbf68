//! The policy core's tests: each policy driven through `testing::Driver`.

use super::super::testing::{Driver, at, d1_profile};
use super::super::{
    Aria, Dart, MapSpec, PolicyConfig, PolicyKind, PreselectedSampling, RecoveredMap, TaskPolicy,
};
use super::*;

/// Three maps of 10 B and one reduce, with deadline `d`.
fn spec(deadline: Seconds) -> JobSpec {
    JobSpec {
        deadline: Some(deadline),
        maps: (0..3)
            .map(|i| MapSpec {
                bytes: 10,
                replicas: vec![at(i)],
            })
            .collect(),
        reduces: 1,
        profile: d1_profile(1.0),
        allotment: None,
        recovered: Vec::new(),
    }
}

/// `randomise_map_order`: a seeded permutation, and within it each node's queue keeps
/// its own maps, so a container still takes a node-local map first.
#[test]
fn a_random_map_order_is_seeded_and_keeps_locality_first() {
    use rand::SeedableRng;
    let spec = JobSpec {
        maps: (0..40)
            .map(|i| MapSpec {
                bytes: 10,
                replicas: vec![at(i % 2)],
            })
            .collect(),
        ..spec(1e6)
    };
    let ordered = |seed| {
        let mut c = Core::new(spec.clone(), 0.0);
        c.randomise_map_order(&mut super::super::Rng::seed_from_u64(seed));
        c
    };
    let mut a = ordered(1);
    // Queues pop from the end: the launch order is the queue reversed.
    let order = |q: &[MapId]| q.iter().rev().map(|m| m.0).collect::<Vec<u32>>();
    let any = order(&a.any);
    let mut sorted = any.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..40).collect::<Vec<_>>(), "a permutation");
    assert_ne!(any, sorted, "not block order");
    assert_eq!(order(&ordered(1).any), any, "the same seed, the same order");
    assert_ne!(order(&ordered(2).any), any, "another seed, another order");
    let node0 = order(&a.by_node[&at(0).node]);
    let even: Vec<u32> = any.iter().copied().filter(|m| m % 2 == 0).collect();
    assert_eq!(node0, even, "node 0's maps, in the same random order");
    assert_eq!(
        a.find_map(at(0)),
        Some((MapId(even[0]), Locality::NodeLocal))
    );
    // Block order without it.
    assert_eq!(order(&Core::new(spec, 0.0).any), sorted);
}

/// Every prefix of `2^j` blocks of the stratified order holds one block in each of the
/// `2^j` stretches of its level, and which block within a stretch varies (uniformly: each
/// block of a stretch drawn about as often); orders are permutations, seeded.
#[test]
fn the_stratified_order_draws_one_block_per_stretch_of_any_level() {
    use rand::SeedableRng;
    for n in [1usize, 2, 3, 7, 64, 200] {
        let mut rng = super::super::Rng::seed_from_u64(n as u64);
        let order = stratified_order(n, &mut rng);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..n as u32).collect::<Vec<_>>(),
            "n {n}: a permutation"
        );
        // The stretches of level j, as the order halves them.
        let mut level = vec![(0u32, n as u32)];
        let mut j = 0;
        while 1usize << j <= n && level.iter().all(|(a, b)| b > a) {
            let prefix = &order[..1 << j];
            for &(a, b) in &level {
                let inside = prefix.iter().filter(|&&m| (a..b).contains(&m)).count();
                assert_eq!(
                    inside, 1,
                    "n {n}, level {j}: stretch {a}..{b} holds {inside}"
                );
            }
            level = level
                .iter()
                .flat_map(|&(a, b)| {
                    let mid = a + (b - a) / 2;
                    [(a, mid), (mid, b)]
                })
                .collect();
            j += 1;
        }
    }
    // The first of 8 stretches of 200 blocks (0..25): each block comes in the first
    // eight about equally often over seeds (a uniform draw within the stretch).
    let mut hits = [0u32; 25];
    for seed in 0..5000 {
        let order = stratified_order(200, &mut super::super::Rng::seed_from_u64(seed));
        let m = order[..8].iter().find(|&&m| m < 25).copied().unwrap();
        hits[m as usize] += 1;
    }
    assert!(hits.iter().all(|&h| (120..=280).contains(&h)), "{hits:?}");
    let draw = |seed| stratified_order(50, &mut super::super::Rng::seed_from_u64(seed));
    assert_eq!(draw(3), draw(3), "seeded");
    assert_ne!(draw(3)[..5], draw(4)[..5], "another seed, another sample");
}

/// `full` with `random_map_order` reads every block, in a seeded random order.
#[test]
fn full_launches_maps_in_a_random_order_when_asked() {
    let spec = JobSpec {
        maps: (0..30)
            .map(|i| MapSpec {
                bytes: 10,
                replicas: vec![at(i % 16)],
            })
            .collect(),
        ..spec(1e6)
    };
    let launched = |random_map_order: bool, seed: u64| {
        let config = PolicyConfig {
            random_map_order,
            ..PolicyConfig::default()
        };
        let mut d = Driver::new(Dart::new(PolicyKind::Full, config), spec.clone(), seed);
        d.run();
        d.launched_maps().iter().map(|m| m.0).collect::<Vec<u32>>()
    };
    let (plain, random) = (launched(false, 7), launched(true, 7));
    let mut sorted = random.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..30).collect::<Vec<_>>(),
        "every map once: {random:?}"
    );
    assert_ne!(random, plain, "not the block order: {plain:?}");
    assert_eq!(launched(true, 7), random, "seeded");
}

/// Two runs of the same aggregate job under the same deadline, with different seeds, read
/// different samples of its blocks (issue 31: a seed per run); the same seed, the same.
#[test]
fn dart_under_a_deadline_reads_another_sample_under_another_seed() {
    let spec = JobSpec {
        maps: (0..60)
            .map(|i| MapSpec {
                bytes: 10,
                replicas: vec![at(i % 16)],
            })
            .collect(),
        ..spec(12.0)
    };
    let read = |seed: u64| {
        let config = PolicyConfig {
            random_map_order: true,
            ..PolicyConfig::default()
        };
        let mut d = Driver::new(Dart::new(PolicyKind::Dart, config), spec.clone(), seed);
        d.run();
        let mut maps: Vec<u32> = d.launched_maps().iter().map(|m| m.0).collect();
        maps.sort_unstable();
        maps.dedup();
        maps
    };
    let (a, b) = (read(1), read(2));
    assert!(!a.is_empty() && a.len() < 60, "part of the input: {a:?}");
    assert_ne!(a, b, "another seed, another sample");
    assert_eq!(read(1), a, "the same seed, the same sample");
}

/// Runs every map to its end; the reduce is then launched and waits for its input.
fn maps_done<P: TaskPolicy>(d: &mut Driver<P>) {
    for _ in 0..3 {
        d.grant_wanted();
        d.finish_where(|t| matches!(t, TaskRef::Map(_)));
    }
    d.grant_wanted();
    let p = d.policy.progress();
    assert_eq!((p.k, p.maps_done, p.map_phase_closed), (3, 3, true));
    assert!(d.running.iter().all(|x| matches!(x.1, TaskRef::Reduce(_))));
    assert_eq!(d.running.len(), 1, "the reduce runs: {:?}", d.log);
}

fn relaunches_of(d: &Driver<impl TaskPolicy>, from: usize, map: MapId) -> usize {
    d.log[from..]
        .iter()
        .filter(|x| matches!(x, Decision::LaunchMap { map: m, .. } if *m == map))
        .count()
}

/// A finished map's output is lost while the reduce waits: the map leaves k, is run again
/// (every policy, under a deadline that allows it), and the job finishes with k = M.
fn lost_output_is_rerun<P: TaskPolicy>(policy: P) {
    let name = policy.name();
    let mut d = Driver::new(policy, spec(1e6), 1);
    maps_done(&mut d);
    let from = d.log.len();
    d.send(Event::MapOutputLost(MapId(1)));
    let p = d.policy.progress();
    // Until the restart gets a container, the map is out of k and its output is to come.
    assert_eq!((p.k, p.maps_done), (2, 2), "{name}");
    assert_eq!(p.processed_bytes, 20, "{name}");
    assert_eq!(p.restarts_waiting, 1, "{name}");
    // A second report of the same loss changes nothing.
    d.send(Event::MapOutputLost(MapId(1)));
    assert_eq!(d.policy.progress(), p, "{name}");
    d.grant_wanted();
    assert_eq!(relaunches_of(&d, from, MapId(1)), 1, "{name}: {:?}", d.log);
    assert_eq!(d.policy.progress().restarts_waiting, 0, "{name}");
    assert_eq!(
        d.policy.progress().k,
        3,
        "{name}: back in k once relaunched"
    );
    d.finish_where(|t| t == TaskRef::Map(MapId(1)));
    assert!(!d.finished(), "{name}: the reduce still runs");
    d.finish_where(|t| matches!(t, TaskRef::Reduce(_)));
    let p = d
        .finish()
        .unwrap_or_else(|| panic!("{name} finishes: {:?}", d.log));
    assert_eq!((p.k, p.maps_done, p.processed_bytes), (3, 3, 30), "{name}");
    assert_eq!(relaunches_of(&d, from, MapId(1)), 1, "{name}");
}

/// Maps an earlier master attempt finished are done from the start: counted in `k` and in
/// the processed bytes, never launched; with `all` of them recovered the map phase closes
/// at once and only the reduce runs.
fn recovered_maps_are_not_run_again<P: TaskPolicy>(policy: impl Fn() -> P) {
    for all in [false, true] {
        let mut spec = spec(1e6);
        let recovered: Vec<u32> = if all { vec![0, 1, 2] } else { vec![0, 2] };
        spec.recovered = recovered
            .iter()
            .map(|&m| RecoveredMap {
                map: MapId(m),
                output_bytes: 5,
            })
            .collect();
        let mut d = Driver::new(policy(), spec, 1);
        let name = d.policy.name();
        let p = d.policy.progress();
        assert_eq!(
            (p.k, p.maps_done, p.processed_bytes),
            (
                recovered.len() as u32,
                recovered.len() as u32,
                10 * recovered.len() as u64
            ),
            "{name}"
        );
        d.run();
        let p = d
            .finish()
            .unwrap_or_else(|| panic!("{name} finishes: {:?}", d.log));
        assert_eq!((p.k, p.maps_done, p.processed_bytes), (3, 3, 30), "{name}");
        let launched = d.launched_maps();
        let expected: Vec<MapId> = if all { vec![] } else { vec![MapId(1)] };
        assert_eq!(launched, expected, "{name}: {:?}", d.log);
    }
}

#[test]
fn every_policy_counts_recovered_maps_as_done_and_never_runs_them() {
    for kind in PolicyKind::ALL {
        match kind {
            PolicyKind::Aria => {
                recovered_maps_are_not_run_again(|| Aria::new(PolicyConfig::default()))
            }
            PolicyKind::Ps => recovered_maps_are_not_run_again(|| {
                PreselectedSampling::new(PolicyConfig::default())
            }),
            dart => recovered_maps_are_not_run_again(|| Dart::new(dart, PolicyConfig::default())),
        }
    }
}

/// Runs `dart` to its end on `spec(first)` (`None`: no deadline), its deadline changed to
/// `then` as soon as it starts (before any container); the maps it launched and its `k`.
fn dart_with_deadline(first: Option<Seconds>, then: Option<Seconds>) -> (Vec<MapId>, u32) {
    let spec = JobSpec {
        deadline: first,
        ..spec(0.0)
    };
    let mut d = Driver::new(
        Dart::new(PolicyKind::Dart, PolicyConfig::default()),
        spec,
        1,
    );
    if let Some(then) = then {
        d.send(Event::DeadlineChanged(then));
    }
    d.run();
    let k = d.finish().expect("finishes").k;
    (d.launched_maps(), k)
}

/// A deadline changed before anything ran is the job's deadline, as if it had been from
/// the start, whichever way it moved; and the two deadlines do lead to different runs.
#[test]
fn a_deadline_changed_at_the_start_is_the_jobs_deadline() {
    let (tight, loose) = (2.5, 1e6);
    let (run_tight, run_loose) = (
        dart_with_deadline(Some(tight), None),
        dart_with_deadline(Some(loose), None),
    );
    assert!(run_tight.1 < run_loose.1, "{run_tight:?} {run_loose:?}");
    assert_eq!(dart_with_deadline(Some(tight), Some(loose)), run_loose);
    assert_eq!(dart_with_deadline(Some(loose), Some(tight)), run_tight);
    // A job without a deadline may be given one: from then on it is the job's.
    assert_eq!(dart_with_deadline(None, Some(tight)), run_tight);
    assert_eq!(
        dart_with_deadline(None, None).1,
        3,
        "no deadline: every map"
    );
}

/// Without a deadline (`JobSpec::deadline` is `None`) every policy reads all the input and
/// no policy acts on time: `dart` under a guard samples, kills and cuts nothing and asks for
/// no wake (its guard waits for a deadline); ARIA asks for one container (any allocation
/// finishes by no deadline); PS samples every map.
#[test]
fn without_a_deadline_every_policy_reads_everything_and_waits_for_nothing() {
    let guarded = PolicyConfig {
        guarded: true,
        answer_cost: 0.25,
        ..PolicyConfig::default()
    };
    let no_deadline = JobSpec {
        deadline: None,
        ..spec(0.0)
    };
    fn check<P: TaskPolicy>(policy: P, spec: &JobSpec) {
        let name = policy.name();
        let mut d = Driver::new(policy, spec.clone(), 3);
        if name == "aria" {
            assert_eq!(d.want, 1, "ARIA without a deadline: one slot");
        }
        d.run();
        let p = d.finish().expect("finishes");
        assert_eq!((p.k, p.maps_done), (3, 3), "{name}: {:?}", d.log);
        let on_time = |x: &Decision| {
            matches!(
                x,
                Decision::Kill(_)
                    | Decision::SampleReduceInput { .. }
                    | Decision::CutReduce { .. }
                    | Decision::WakeAt(_)
            )
        };
        assert_eq!(d.count(on_time), 0, "{name}: {:?}", d.log);
        assert!(!p.guarded, "{name}");
    }
    for kind in PolicyKind::ALL {
        match kind {
            PolicyKind::Aria => check(Aria::new(guarded.clone()), &no_deadline),
            PolicyKind::Ps => check(PreselectedSampling::new(guarded.clone()), &no_deadline),
            dart => check(Dart::new(dart, guarded.clone()), &no_deadline),
        }
    }
    // The same `dart` given a deadline asks for its last moment at once.
    let mut d = Driver::new(Dart::new(PolicyKind::Dart, guarded), spec(30.0), 3);
    d.run();
    assert!(
        d.count(|x| matches!(x, Decision::WakeAt(_))) > 0,
        "{:?}",
        d.log
    );
}

/// What is done stays done: once `dart` closed its map phase for a tight deadline, a later
/// deadline launches no map; the reduces run to it.
#[test]
fn a_deadline_moved_later_does_not_reopen_a_closed_map_phase() {
    let mut d = Driver::new(
        Dart::new(PolicyKind::Dart, PolicyConfig::default()),
        spec(2.5),
        1,
    );
    d.grant_wanted();
    while !d.policy.progress().map_phase_closed {
        d.finish_where(|t| matches!(t, TaskRef::Map(_)));
        d.grant_wanted();
    }
    let launched = d.launched_maps().len();
    let k = d.policy.progress().k;
    assert!(k < 3, "the tight deadline closes early: {:?}", d.log);
    d.send(Event::DeadlineChanged(1e6));
    d.run();
    assert_eq!(d.launched_maps().len(), launched, "{:?}", d.log);
    assert_eq!(d.finish().expect("finishes").k, k);
}

/// The guard on a job whose last map hangs: that map is killed and leaves `k`, the map
/// phase closes, a running reduce is cut and answers from what it folded in; or, at the
/// deadline, a reduce still running is killed and abandoned and the job finishes anyway.
fn guard_holds_the_deadline<P: TaskPolicy>(policy: impl Fn() -> P) {
    for deadline_first in [false, true] {
        let mut d = Driver::new(policy(), spec(1e6), 1);
        let name = d.policy.name();
        d.grant_wanted();
        d.finish_where(|t| t == TaskRef::Map(MapId(0)));
        d.finish_where(|t| t == TaskRef::Map(MapId(1)));
        d.grant_wanted();
        let hung = d
            .running
            .iter()
            .find(|x| x.1 == TaskRef::Map(MapId(2)))
            .map(|x| x.0)
            .unwrap_or_else(|| panic!("{name}: map 2 runs: {:?}", d.log));
        let reduce_before = d
            .running
            .iter()
            .find(|x| matches!(x.1, TaskRef::Reduce(_)))
            .map(|x| x.0);
        let out = d.send(Event::Guard);
        assert!(out.contains(&Decision::Kill(hung)), "{name}: {out:?}");
        let cut = out.iter().any(|x| matches!(x, Decision::CutReduce { .. }));
        assert_eq!(cut, reduce_before.is_some(), "{name}: {out:?}");
        let p = d.policy.progress();
        assert_eq!(
            (p.k, p.map_phase_closed, p.guarded),
            (2, true, true),
            "{name}"
        );
        // A second guard changes nothing.
        assert!(
            d.send(Event::Guard)
                .iter()
                .all(|x| matches!(x, Decision::Want(_))),
            "{name}"
        );
        d.running.retain(|x| x.0 != hung);
        d.grant_wanted();
        let reduce = d
            .running
            .iter()
            .find(|x| matches!(x.1, TaskRef::Reduce(_)))
            .map(|x| x.0)
            .unwrap_or_else(|| panic!("{name}: the reduce runs: {:?}", d.log));
        if deadline_first {
            let out = d.send(Event::Deadline);
            assert!(out.contains(&Decision::Kill(reduce)), "{name}: {out:?}");
            let p = d
                .finish()
                .unwrap_or_else(|| panic!("{name} finishes: {:?}", d.log));
            assert_eq!(
                (p.k, p.reduces_done, p.reduces_abandoned),
                (2, 0, 1),
                "{name}"
            );
            assert_eq!(p.processed_fraction(), 0.0, "{name}: no reduce answered");
        } else {
            // The reduce folds in 200 of its 400 bytes when cut, all of them when not.
            d.finish_where(|t| matches!(t, TaskRef::Reduce(_)));
            let p = d
                .finish()
                .unwrap_or_else(|| panic!("{name} finishes: {:?}", d.log));
            assert_eq!(
                (p.k, p.processed_bytes, p.reduces_abandoned),
                (2, 20, 0),
                "{name}"
            );
            let folded = if cut { 0.5 } else { 1.0 };
            assert!(
                (p.processed_fraction() - 2.0 / 3.0 * folded).abs() < 1e-9,
                "{name}: {}",
                p.processed_fraction()
            );
        }
    }
}

#[test]
fn the_guards_margin_is_its_seconds_but_at_most_a_quarter_of_the_time_the_job_has() {
    use super::super::guard_margin;
    assert_eq!(guard_margin(1.0, 60.0), 1.0);
    assert_eq!(guard_margin(1.0, 0.6), 0.15);
    assert_eq!(guard_margin(1.0, -2.0), 0.0);
    assert_eq!(guard_margin(-1.0, 10.0), 0.0);
}

#[test]
fn every_policy_answers_by_the_deadline_under_the_guard() {
    for kind in PolicyKind::ALL {
        match kind {
            PolicyKind::Aria => guard_holds_the_deadline(|| Aria::new(PolicyConfig::default())),
            PolicyKind::Ps => {
                guard_holds_the_deadline(|| PreselectedSampling::new(PolicyConfig::default()))
            }
            dart => guard_holds_the_deadline(|| Dart::new(dart, PolicyConfig::default())),
        }
    }
}

#[test]
fn every_policy_reruns_a_finished_map_whose_output_was_lost() {
    for kind in PolicyKind::ALL {
        match kind {
            PolicyKind::Aria => lost_output_is_rerun(Aria::new(PolicyConfig::default())),
            PolicyKind::Ps => {
                lost_output_is_rerun(PreselectedSampling::new(PolicyConfig::default()))
            }
            dart => lost_output_is_rerun(Dart::new(dart, PolicyConfig::default())),
        }
    }
}

#[test]
fn dart_reruns_a_lost_output_only_if_it_fits_the_deadline_and_full_always_does() {
    for (kind, rerun) in [
        (PolicyKind::Dart, false),
        (PolicyKind::DartPaper, false),
        (PolicyKind::Full, true),
    ] {
        let mut d = Driver::new(Dart::new(kind, PolicyConfig::default()), spec(30.0), 1);
        maps_done(&mut d);
        // Past D: T_J with the map back in k misses D (the §5.2.1 test).
        d.now = 40.0;
        let from = d.log.len();
        d.send(Event::MapOutputLost(MapId(0)));
        d.grant_wanted();
        assert_eq!(
            relaunches_of(&d, from, MapId(0)),
            usize::from(rerun),
            "{kind}"
        );
        if rerun {
            d.finish_where(|t| t == TaskRef::Map(MapId(0)));
        }
        d.finish_where(|t| matches!(t, TaskRef::Reduce(_)));
        let p = d
            .finish()
            .unwrap_or_else(|| panic!("{kind} finishes: {:?}", d.log));
        let k = if rerun { 3 } else { 2 };
        // A dropped map stays dropped: k = maps done, without it.
        assert_eq!((p.k, p.maps_done), (k, k), "{kind}");
    }
}

#[test]
fn a_rerun_that_gets_no_container_preempts_a_reduce_waiting_for_its_input() {
    for kind in [PolicyKind::Full, PolicyKind::Dart] {
        let mut d = Driver::new(Dart::new(kind, PolicyConfig::default()), spec(1e6), 1);
        maps_done(&mut d);
        let reduce = d.running[0].0;
        d.send(Event::MapOutputLost(MapId(2)));
        // The cluster grants nothing more; the reduce holds the only container.
        let out = d.send(Event::Tick);
        assert!(
            !out.contains(&Decision::Kill(reduce)),
            "{kind}: not at once"
        );
        d.now += RERUN_PREEMPT_AFTER;
        let out = d.send(Event::Tick);
        assert_eq!(
            out.first(),
            Some(&Decision::Kill(reduce)),
            "{kind}: {out:?}"
        );
        assert!(
            out.iter()
                .any(|x| matches!(x, Decision::LaunchMap { map: MapId(2), .. })),
            "{kind}: the re-run takes its container: {out:?}"
        );
        d.running.retain(|x| x.0 != reduce);
        d.finish_where(|t| t == TaskRef::Map(MapId(2)));
        // The reduce runs again and the job ends with every map.
        d.grant_wanted();
        d.finish_where(|t| matches!(t, TaskRef::Reduce(_)));
        let p = d
            .finish()
            .unwrap_or_else(|| panic!("{kind} finishes: {:?}", d.log));
        assert_eq!((p.k, p.maps_done, p.reduces_done), (3, 3, 1), "{kind}");
    }
}

#[test]
fn an_output_lost_of_a_map_that_is_not_finished_changes_nothing() {
    let mut d = Driver::new(
        Dart::new(PolicyKind::Full, PolicyConfig::default()),
        spec(1e6),
        1,
    );
    d.grant_wanted();
    let before = d.policy.progress();
    let out = d.send(Event::MapOutputLost(MapId(0)));
    assert_eq!(d.policy.progress(), before);
    assert!(out.is_empty(), "{out:?}");
}
