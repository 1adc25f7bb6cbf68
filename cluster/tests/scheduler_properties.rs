//! Whatever happens, the cluster scheduler never puts more on a node than it holds, never gives
//! an application more than it asked for, and decides the same way for the same events.

mod arb_steps;

use arb_steps::{Shape, Step, World, events, placing_step};
use proptest::prelude::*;
use yard_cluster::scheduler::{Assignment, ClusterPolicy, Scheduler};

/// Six nodes of up to four containers; task asks only.
const SHAPE: Shape = Shape {
    nodes: 6,
    capacity: 5,
    priorities: 1..3,
};

/// Runs the steps and returns the assignments, checking capacity and asks after every event
/// (FIFO and fair: no quotas, no preemption).
fn run(ordering: ClusterPolicy, steps: &[Step]) -> Vec<Assignment> {
    let mut s = Scheduler::new(ordering);
    let mut w = World::default();
    let mut all = Vec::new();
    for st in steps {
        for event in events(&mut w, st) {
            let mut out = Vec::new();
            s.handle(event, &mut out);
            w.take(ordering, &out);
            all.extend(out);
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn capacity_and_asks_hold_and_decisions_repeat(
        steps in prop::collection::vec(placing_step(&SHAPE), 0..60),
        fair in any::<bool>(),
    ) {
        let ordering = if fair { ClusterPolicy::Fair } else { ClusterPolicy::Fifo };
        prop_assert_eq!(run(ordering, &steps), run(ordering, &steps));
    }
}
