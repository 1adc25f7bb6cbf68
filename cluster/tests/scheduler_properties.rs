//! Whatever happens, the cluster scheduler never puts more on a node than it holds, never gives
//! an application more than it asked for, and decides the same way for the same events.

use std::collections::HashMap;

use proptest::prelude::*;
use yard_cluster::scheduler::{
    AppId, Ask, Assignment, ClusterPolicy, ContainerId, NodeId, Place, RackId, Resources,
    SchedEvent, Scheduler,
};

#[derive(Debug, Clone)]
enum Step {
    Node(u32, u64),
    LoseNode(u32),
    App(u64),
    EndApp(u64),
    Asks(u64, u32, u32, Option<u32>, bool),
    Complete(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u32..6, 1u64..5).prop_map(|(n, c)| Step::Node(n, c)),
        (0u32..6).prop_map(Step::LoseNode),
        (0u64..4).prop_map(Step::App),
        (0u64..4).prop_map(Step::EndApp),
        (
            0u64..4,
            1u32..3,
            0u32..8,
            prop::option::of(0u32..6),
            any::<bool>()
        )
            .prop_map(|(a, p, n, node, relax)| Step::Asks(a, p, n, node, relax)),
        any::<usize>().prop_map(Step::Complete),
    ]
}

/// Runs the steps and returns the assignments, checking capacity and asks after every event.
fn run(ordering: ClusterPolicy, steps: &[Step]) -> Vec<Assignment> {
    let mut s = Scheduler::new(ordering);
    let mut all = Vec::new();
    let mut capacity: HashMap<NodeId, u64> = HashMap::new();
    let mut live: Vec<(AppId, ContainerId, NodeId)> = Vec::new();
    // Containers each app still wants: its last `*` count minus what it got since.
    let mut wanted: HashMap<AppId, u32> = HashMap::new();
    let mut apps: Vec<AppId> = Vec::new();
    for st in steps {
        let event = match *st {
            Step::Node(n, c) => {
                capacity.entry(NodeId(n)).or_insert(c);
                SchedEvent::NodeAdded {
                    node: NodeId(n),
                    rack: RackId(n / 2),
                    capacity: Resources::new(1024 * c, c as u32),
                    running: Vec::new(),
                }
            }
            Step::LoseNode(n) => {
                capacity.remove(&NodeId(n));
                SchedEvent::NodeRemoved(NodeId(n))
            }
            Step::App(a) => {
                apps.push(AppId(a));
                SchedEvent::AppAdded {
                    app: AppId(a),
                    queue: "q".into(),
                    weight: 1.0,
                }
            }
            Step::EndApp(a) => {
                live.retain(|l| l.0 != AppId(a));
                wanted.remove(&AppId(a));
                apps.retain(|x| *x != AppId(a));
                SchedEvent::AppRemoved(AppId(a))
            }
            Step::Asks(a, priority, count, node, relax) => {
                let size = Resources::new(1024, 1);
                let any = Ask {
                    priority,
                    place: Place::Any,
                    size,
                    count,
                    relax_locality: relax,
                };
                let mut asks = vec![any];
                if let Some(n) = node {
                    asks.push(Ask {
                        place: Place::Node(NodeId(n)),
                        ..any
                    });
                }
                if apps.contains(&AppId(a)) {
                    // The `*` count is absolute per priority; sum over priorities.
                    *wanted.entry(AppId(a)).or_default() += count;
                }
                SchedEvent::Asks {
                    app: AppId(a),
                    asks,
                }
            }
            Step::Complete(i) => {
                if live.is_empty() {
                    continue;
                }
                let (app, container, _) = live.remove(i % live.len());
                SchedEvent::ContainerCompleted { app, container }
            }
        };
        let mut out = Vec::new();
        s.handle(event, &mut out);
        for a in &out {
            match *a {
                Assignment::Allocate {
                    app,
                    container,
                    node,
                    ..
                } => {
                    let w = wanted
                        .get_mut(&app)
                        .expect("an allocation for an app that never asked");
                    assert!(*w > 0, "{app:?} got more than it asked for");
                    *w -= 1;
                    live.push((app, container, node));
                }
                Assignment::Lost { container, .. } => live.retain(|l| l.1 != container),
                Assignment::Recovered { .. } => panic!("no node here rejoins with containers"),
                // FIFO and fair have no quotas and preempt nothing.
                Assignment::Preempt { .. } | Assignment::Quota { .. } => {
                    panic!("{ordering:?} neither preempts nor sets quotas: {a:?}")
                }
            }
        }
        for (node, cap) in &capacity {
            let used = live.iter().filter(|l| l.2 == *node).count() as u64;
            assert!(used <= *cap, "{node:?} holds {used} > {cap}");
        }
        all.extend(out);
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn capacity_and_asks_hold_and_decisions_repeat(
        steps in prop::collection::vec(step(), 0..60),
        fair in any::<bool>(),
    ) {
        let ordering = if fair { ClusterPolicy::Fair } else { ClusterPolicy::Fifo };
        prop_assert_eq!(run(ordering, &steps), run(ordering, &steps));
    }
}
