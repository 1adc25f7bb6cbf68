//! Every cluster policy (fifo, fair, edf, minedf, minedf-wc) keeps the scheduler's invariants,
//! whatever happens: no node holds more than it has (a preempted container stays booked until
//! it has ended), masters stay within their share (one may always run), no application gets
//! more than it asked for, only tasks above their application's quota are preempted (never a
//! master), the same events give the same assignments, and on an idle cluster every ask is
//! eventually granted. All of it also with the overload classifier on (it learns quickly here,
//! so it refuses nodes within the run), fed random node loads and job types.

mod arb_steps;

use std::collections::BTreeMap;

use arb_steps::{Shape, Step, World, event, events, step};
use proptest::prelude::*;
use yard_cluster::classifier::ClassifierConfig;
use yard_cluster::policy::ClusterPolicy;
use yard_cluster::scheduler::{AppId, Assignment, Scheduler};

/// Five nodes of up to five containers; masters among the asks.
const SHAPE: Shape = Shape {
    nodes: 5,
    capacity: 6,
    priorities: 0..3,
};

/// Runs the steps, checking the invariants after every event, then drains: the cluster goes
/// idle round after round (every container ends, time passes), and every application that
/// asks anew for three containers gets them. Returns every assignment.
fn run(policy: ClusterPolicy, classifier: bool, steps: &[Step]) -> Vec<Assignment> {
    let config = ClassifierConfig {
        min_samples: 3,
        settle_ms: 0,
        ..ClassifierConfig::default()
    };
    let mut s = Scheduler::new(policy);
    if classifier {
        s = s.with_overload_classifier(config);
    }
    let mut w = World {
        now: 1_000_000,
        ..World::default()
    };
    let mut all = Vec::new();
    for st in steps {
        for e in events(&mut w, st) {
            let mut out = Vec::new();
            s.handle_at(w.now, e, &mut out);
            w.take(policy, &out);
            all.extend(out);
        }
    }
    // Liveness: a node to run on, every app asking for three task containers anywhere. With
    // the classifier, every node reports itself overloaded from here on: only its exploration
    // rule keeps tasks flowing.
    let mut drain = vec![Step::Node(9, 2)];
    let overloaded: Vec<Step> = (0..10).map(|n| Step::Load(n, 3.0, 0.5)).collect();
    if classifier {
        drain.extend(overloaded.iter().cloned());
    }
    for a in w.apps.clone() {
        drain.push(Step::Asks(a.0, 1, 0, None, true));
        drain.push(Step::Asks(a.0, 2, 0, None, true));
        drain.push(Step::Asks(a.0, 0, 0, None, true));
    }
    for st in &drain {
        let e = event(&mut w, st).expect("an event");
        let mut out = Vec::new();
        s.handle_at(w.now, e, &mut out);
        w.take(policy, &out);
    }
    w.wanted.clear();
    let mut got: BTreeMap<AppId, u32> = BTreeMap::new();
    for a in w.apps.clone() {
        let e = event(&mut w, &Step::Asks(a.0, 1, 3, None, true)).expect("an event");
        let mut out = Vec::new();
        s.handle_at(w.now, e, &mut out);
        w.take(policy, &out);
        for g in &out {
            if let Assignment::Allocate { app, .. } = g {
                *got.entry(*app).or_default() += 1;
            }
        }
    }
    // How long "eventually" may take, in 10-second rounds. With a model that has learned only
    // bad, a node gets one task per `explore_after_ms` (a probe restarts its refusal clock), and
    // every node but the drain's may have been lost: three tasks for each app, one probe
    // apart, the first a period after the first refusal; and a period to spare.
    let period = (config.explore_after_ms + 9_999) as usize / 10_000;
    let rounds = (3 * w.apps.len() + 1) * period;
    for _round in 0..rounds {
        if w.apps.iter().all(|a| got.get(a).copied().unwrap_or(0) >= 3) {
            break;
        }
        while !w.live.is_empty() {
            let e = event(&mut w, &Step::Complete(0)).expect("a container");
            let mut out = Vec::new();
            s.handle_at(w.now, e, &mut out);
            w.take(policy, &out);
            for g in &out {
                if let Assignment::Allocate { app, .. } = g {
                    *got.entry(*app).or_default() += 1;
                }
            }
        }
        if classifier {
            for st in &overloaded {
                let e = event(&mut w, st).expect("a load");
                let mut out = Vec::new();
                s.handle_at(w.now, e, &mut out);
                w.take(policy, &out);
                for g in &out {
                    if let Assignment::Allocate { app, .. } = g {
                        *got.entry(*app).or_default() += 1;
                    }
                }
            }
        }
        let e = event(&mut w, &Step::Advance(10_000)).expect("a tick");
        let mut out = Vec::new();
        s.handle_at(w.now, e, &mut out);
        w.take(policy, &out);
        for g in &out {
            if let Assignment::Allocate { app, .. } = g {
                *got.entry(*app).or_default() += 1;
            }
        }
    }
    for a in &w.apps {
        assert!(
            got.get(a).copied().unwrap_or(0) >= 3,
            "{policy}: {a:?} still waits on an idle cluster: got {got:?}"
        );
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_keeps_the_invariants_and_decides_the_same_way_twice(
        steps in prop::collection::vec(step(&SHAPE), 0..80),
        which in 0usize..5,
        classifier in any::<bool>(),
    ) {
        let policy = ClusterPolicy::ALL[which];
        prop_assert_eq!(run(policy, classifier, &steps), run(policy, classifier, &steps));
    }
}
