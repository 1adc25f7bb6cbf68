//! Properties every policy keeps on any cluster, workload and deadline (the scripted driver in
//! `support` asserts the per-call invariants; these tests add the end-to-end ones).

mod support;

use proptest::prelude::*;
use support::{Script, run};
use yard_appmaster::policy::{
    Estimator, Locality, MapId, PolicyConfig, PolicyKind, PowerLaw, PreviousRun, Profile,
};

#[derive(Debug, Clone)]
struct Case {
    nodes: u32,
    racks: u32,
    slots: u32,
    allotment: u32,
    maps: u32,
    reduces: u32,
    /// Per-map true duration (node-local), seconds.
    durations: Vec<f64>,
    remote_factor: f64,
    /// Maps whose first attempt fails, and when.
    failures: Vec<(u32, f64)>,
    /// `None`: no deadline.
    deadline: Option<f64>,
    /// How wrong the profile is about map durations.
    profile_bias: f64,
    kind: PolicyKind,
    seed: u64,
}

/// The policies under test: all of them.
fn kinds() -> Vec<PolicyKind> {
    PolicyKind::ALL.to_vec()
}

fn case() -> impl Strategy<Value = Case> {
    (1u32..6, 1u32..3, 1u32..3, 0u32..40, 0u32..3)
        .prop_flat_map(|(nodes, racks, slots, maps, reduces)| {
            let racks = racks.min(nodes);
            (
                Just((nodes, racks, slots, maps, reduces)),
                1u32..=nodes * slots,
                prop::collection::vec(
                    prop_oneof![4 => 2.0f64..20.0, 1 => 40.0f64..120.0],
                    maps as usize,
                ),
                1.0f64..2.0,
                prop::collection::vec((0u32..maps.max(1), 0.5f64..10.0), 0..3),
                // One job in five has no deadline (`JobSpec::deadline` is `None`).
                prop::option::weighted(0.8, 5.0f64..300.0),
                0.5f64..2.0,
                prop::sample::select(kinds()),
                any::<u64>(),
            )
        })
        .prop_map(
            |(
                (nodes, racks, slots, maps, reduces),
                allotment,
                durations,
                remote_factor,
                failures,
                deadline,
                profile_bias,
                kind,
                seed,
            )| Case {
                nodes,
                racks,
                slots,
                allotment,
                maps,
                reduces,
                durations,
                remote_factor,
                failures,
                deadline,
                profile_bias,
                kind,
                seed,
            },
        )
}

fn script(c: &Case) -> Script {
    let mut s = Script::uniform(c.nodes, c.racks, c.slots, 10.0, 15.0);
    s.allotment = c.allotment;
    let durations = c.durations.clone();
    let remote = c.remote_factor;
    s.map_time = Box::new(move |m: MapId, loc, nth| {
        let base = durations[m.0 as usize];
        // Copies and restarts run at a normal pace: only first attempts straggle.
        let base = if nth > 0 { base.min(20.0) } else { base };
        if loc == Locality::NodeLocal {
            base
        } else {
            base * remote
        }
    });
    let failures = c.failures.clone();
    s.fail = Box::new(move |m, nth| {
        failures
            .iter()
            .find(|f| nth == 0 && f.0 == m.0)
            .map(|f| f.1)
    });
    s.map_output = 50_000;
    s.bandwidth = 200_000.0;
    s.reduce_time = PowerLaw {
        a: 1e-5,
        b: 1.0,
        spread: 0.0,
    };
    s.horizon = 50_000.0;
    s
}

fn profile(c: &Case, s: &Script) -> Profile {
    let mut p = s.true_profile(10.0 * c.profile_bias, 15.0 * c.profile_bias, c.reduces);
    p.previous_runs = vec![PreviousRun {
        k: 10,
        max_reduce_input: 300_000.0,
    }];
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Every policy finishes every job; the driver checks on every call that no more tasks run
    /// than containers are held, that no new map starts after the map phase closed, and that
    /// local-only maps run node-local.
    #[test]
    fn every_policy_finishes_within_its_containers(c in case()) {
        let s = script(&c);
        let spec = s.job(c.maps, c.reduces, c.deadline, profile(&c, &s));
        let mut policy = c.kind.build(PolicyConfig::default());
        let r = run(policy.as_mut(), spec, &s, c.seed);
        prop_assert!(r.finished_at.is_some(), "{} did not finish", c.kind);
        let p = r.progress.unwrap();
        prop_assert!(p.finished && p.map_phase_closed);
        prop_assert_eq!(p.k, p.maps_done, "every counted map finished");
        prop_assert!(p.k <= c.maps);
        prop_assert!((0.0..=1.0).contains(&p.processed_fraction()));
        prop_assert_eq!(p.reduces_done, c.reduces);
    }

    /// Finished maps' outputs are lost (their node fails) while reduces still need them:
    /// every policy still finishes, with k = the maps whose output exists (the driver checks
    /// it at `Finish`); `full` and ARIA re-run every lost output, so they still read all input.
    #[test]
    fn every_policy_finishes_when_map_outputs_are_lost(c in case()) {
        let mut s = script(&c);
        let losses = c.failures.clone();
        s.lose_output = Box::new(move |m, nth| {
            losses.iter().find(|f| nth == 0 && f.0 == m.0).map(|f| f.1)
        });
        let spec = s.job(c.maps, c.reduces, c.deadline, profile(&c, &s));
        let mut policy = c.kind.build(PolicyConfig::default());
        let r = run(policy.as_mut(), spec, &s, c.seed);
        prop_assert!(r.finished_at.is_some(), "{} did not finish", c.kind);
        let p = r.progress.unwrap();
        prop_assert_eq!(p.k, p.maps_done, "every counted map finished");
        prop_assert_eq!(p.reduces_done, c.reduces);
        if matches!(c.kind, PolicyKind::Full | PolicyKind::Aria) {
            prop_assert_eq!(p.k, c.maps, "{} reads all input", c.kind);
        }
    }

    /// The same events and seed give the same decisions.
    #[test]
    fn the_same_seed_gives_the_same_decision_log(c in case()) {
        let s = script(&c);
        let log = |_| {
            let spec = s.job(c.maps, c.reduces, c.deadline, profile(&c, &s));
            format!("{:?}", run(c.kind.build(PolicyConfig::default()).as_mut(), spec, &s, c.seed).log)
        };
        prop_assert_eq!(log(0), log(1));
    }

    /// Dart eq. (1)–(9): with everything else fixed, more maps never make the job finish sooner.
    #[test]
    fn the_estimate_never_decreases_when_k_grows(
        local in 0.1f64..100.0, remote in 0.1f64..200.0, partition in 0.0f64..1e7,
        bandwidth in 1.0f64..1e9, a in 1e-9f64..1.0, b in 0.1f64..2.0, reduces in 0u32..50,
        t_p in 0.0f64..1000.0, map_end in 0.0f64..2000.0, shuffled in 0.0f64..1e10,
        t_q in prop::option::of(0.0f64..1000.0), skew in any::<bool>(),
        runs in prop::collection::vec((1u32..1000, 0.0f64..1e9), 0..4),
        spread in 0.0f64..2.0, slots in prop::option::of(1u32..60), paper in any::<bool>(),
    ) {
        let profile = Profile {
            map_local: local,
            map_remote: remote,
            map_shortest: None,
            map_spread: None,
            partition_bytes: partition,
            shuffle_bandwidth: bandwidth,
            reduce_time: PowerLaw { a, b, spread },
            previous_runs: runs.iter().map(|&(k, d)| PreviousRun { k, max_reduce_input: d }).collect(),
        };
        // yard's estimator, or the paper's (`dart-paper`).
        let mut e = if paper {
            Estimator::paper(&profile, reduces, 0.8)
        } else {
            Estimator::new(&profile, reduces, slots, 0.8)
        };
        e.map_end = map_end;
        e.shuffled = shuffled;
        e.shuffle_start = t_q.filter(|&q| q < t_p);
        let mut last = f64::NEG_INFINITY;
        for k in 0..200 {
            let t = e.completion(f64::from(k), t_p, remote, skew).total;
            prop_assert!(t >= last - 1e-9 * last.abs(), "k = {}: {} < {}", k, t, last);
            last = t;
        }
    }
}
