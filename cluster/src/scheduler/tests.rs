use super::*;
use crate::classifier::Utility;

const C: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

fn cluster(ordering: ClusterPolicy, nodes: u32, per_node: u64) -> Scheduler {
    let mut s = Scheduler::new(ordering);
    let mut out = Vec::new();
    for i in 0..nodes {
        let capacity = Resources::new(1024 * per_node, per_node as u32);
        s.handle(
            SchedEvent::NodeAdded {
                node: NodeId(i),
                rack: RackId(i / 2),
                capacity,
                running: Vec::new(),
            },
            &mut out,
        );
    }
    s
}

fn any(count: u32) -> Ask {
    Ask {
        priority: 1,
        place: Place::Any,
        size: C,
        count,
        relax_locality: true,
    }
}

fn add(s: &mut Scheduler, app: u64) -> Vec<Assignment> {
    let mut out = Vec::new();
    s.handle(
        SchedEvent::AppAdded {
            app: AppId(app),
            queue: "default".into(),
            user: String::new(),
            weight: 1.0,
        },
        &mut out,
    );
    out
}

fn ask(s: &mut Scheduler, app: u64, asks: Vec<Ask>) -> Vec<Assignment> {
    let mut out = Vec::new();
    s.handle(
        SchedEvent::Asks {
            app: AppId(app),
            asks,
        },
        &mut out,
    );
    out
}

fn allocated_to(out: &[Assignment], app: u64) -> usize {
    out.iter()
        .filter(|a| matches!(a, Assignment::Allocate { app: x, .. } if *x == AppId(app)))
        .count()
}

/// Two 4-core nodes: node 0 calm, node 1 hogged (load 6 on 4 cores). Each round the app
/// asks for 8 tasks (the whole cluster) and every task placed ends; then both nodes report their load, 5 s
/// later (the classifier's settle time). Returns the tasks placed on each node per round.
fn hog_rounds(s: &mut Scheduler, rounds: usize, t0: i64) -> Vec<[u32; 2]> {
    let calm = NodeLoad {
        cores: 4,
        load_1m: 0.5,
        cpu: 0.1,
        memory_free: 0.8,
        disk: 0.1,
    };
    let hot = NodeLoad {
        load_1m: 6.0,
        cpu: 1.0,
        ..calm
    };
    let mut per_round = Vec::new();
    let mut t = t0;
    for _ in 0..rounds {
        let mut out = Vec::new();
        s.handle_at(
            t,
            SchedEvent::NodeLoad {
                node: NodeId(0),
                load: calm,
            },
            &mut out,
        );
        s.handle_at(
            t,
            SchedEvent::NodeLoad {
                node: NodeId(1),
                load: hot,
            },
            &mut out,
        );
        out.extend(ask(s, 1, vec![any(8)]));
        let mut placed = [0u32; 2];
        // A task ending makes room that a pass fills at once: those end too.
        while let Some(a) = out.pop() {
            if let Assignment::Allocate {
                node, container, ..
            } = a
            {
                placed[node.0 as usize] += 1;
                s.handle_at(
                    t,
                    SchedEvent::ContainerCompleted {
                        app: AppId(1),
                        container,
                    },
                    &mut out,
                );
            }
        }
        per_round.push(placed);
        t += 5_000;
    }
    per_round
}

#[test]
fn spread_places_on_the_emptiest_node_where_pack_fills_the_first() {
    let nodes_of = |placement| {
        let mut s = cluster(ClusterPolicy::Fifo, 3, 4).with_placement(placement);
        add(&mut s, 1);
        let out = ask(&mut s, 1, vec![any(4)]);
        let mut per_node = [0u32; 3];
        for a in &out {
            if let Assignment::Allocate { node, .. } = a {
                per_node[node.0 as usize] += 1;
            }
        }
        per_node
    };
    assert_eq!(nodes_of(Placement::Pack), [4, 0, 0]);
    assert_eq!(nodes_of(Placement::Spread), [2, 1, 1]);
}

#[test]
fn yards_classifier_also_learns_the_hogged_node() {
    let config = ClassifierConfig {
        variant: crate::classifier::Variant::Yard,
        ..ClassifierConfig::default()
    };
    let mut s = cluster(ClusterPolicy::Fifo, 2, 4).with_overload_classifier(config);
    add(&mut s, 1);
    // yard's labels wait up to a minute: enough rounds of 5 s for 20 of them and more.
    let rounds = hog_rounds(&mut s, 40, 0);
    let late: u32 = rounds[30..].iter().map(|r| r[1]).sum();
    let early: u32 = rounds[..5].iter().map(|r| r[1]).sum();
    assert!(early > 0 && late == 0, "{rounds:?}");
}

#[test]
fn the_overload_classifier_learns_a_hogged_node_and_keeps_tasks_off_it() {
    let mut s =
        cluster(ClusterPolicy::Fifo, 2, 4).with_overload_classifier(ClassifierConfig::default());
    add(&mut s, 1);
    let rounds = hog_rounds(&mut s, 20, 0);
    // Before the model has 20 labels it refuses nothing: both nodes take tasks.
    assert_eq!(rounds[0], [4, 4], "{rounds:?}");
    // Once learned, every task goes to the calm node, but for one probe of the hogged node
    // per exploration time (60 s: 12 rounds).
    let late = &rounds[4..];
    assert!(
        late.iter().all(|r| r[0] + r[1] == 8 && r[1] <= 1),
        "{rounds:?}"
    );
    assert_eq!(late.iter().map(|r| r[1]).sum::<u32>(), 1, "{rounds:?}");
    let c = s.overload().unwrap();
    assert_eq!(c.node(NodeId(1)).verdict, crate::classifier::Verdict::Bad);
    assert_eq!(c.node(NodeId(0)).verdict, crate::classifier::Verdict::Good);
    assert!(c.node(NodeId(1)).model.labelled_bad > 0 && c.node(NodeId(0)).model.labelled_good > 0);
    // Without the classifier, the same rounds keep using the hogged node.
    let mut plain = cluster(ClusterPolicy::Fifo, 2, 4);
    add(&mut plain, 1);
    let rounds = hog_rounds(&mut plain, 20, 0);
    assert!(rounds.iter().all(|r| r[1] == 4), "{rounds:?}");
}

#[test]
fn a_refused_app_says_why_and_the_refused_node_gets_a_probe_later() {
    let mut s =
        cluster(ClusterPolicy::Fifo, 2, 4).with_overload_classifier(ClassifierConfig::default());
    add(&mut s, 1);
    hog_rounds(&mut s, 12, 0);
    // Fill the calm node with another app's tasks: only the hogged node has room.
    add(&mut s, 2);
    let t = 12 * 5_000;
    let mut out = Vec::new();
    s.handle_at(t, SchedEvent::Tick, &mut out);
    let filled = ask(&mut s, 2, vec![any(4)]);
    assert_eq!(allocated_to(&filled, 2), 4);
    let out = ask(&mut s, 1, vec![any(1)]);
    assert_eq!(allocated_to(&out, 1), 0, "refused: {out:?}");
    let r = s.refusal(AppId(1)).expect("says why");
    assert_eq!((r.refused, r.nodes[0].0), (1, NodeId(1)));
    assert!(r.nodes[0].1 < 0.5);
    // Still refused just before the exploration time, let through at it.
    let explore = ClassifierConfig::default().explore_after_ms;
    let since = s
        .overload()
        .unwrap()
        .node(NodeId(1))
        .model
        .refused_since_ms
        .unwrap();
    assert!(since < t && since + explore > t, "refused since {since}");
    let mut out = Vec::new();
    s.handle_at(since + explore - 1, SchedEvent::Tick, &mut out);
    assert_eq!(allocated_to(&out, 1), 0);
    s.handle_at(since + explore, SchedEvent::Tick, &mut out);
    assert_eq!(allocated_to(&out, 1), 1, "the probe");
    assert_eq!(s.refusal(AppId(1)), None, "placed: the refusal is gone");
    assert_eq!(s.overload().unwrap().node(NodeId(1)).model.probes, 1);
    // The probe restarts the clock: one task per period while the model says bad (the
    // rate rm/tests/policy_properties.rs's liveness horizon is computed from).
    let done: Vec<ContainerId> = out
        .iter()
        .filter_map(|a| match a {
            Assignment::Allocate { container, .. } => Some(*container),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for container in done {
        let app = AppId(1);
        s.handle_at(
            since + explore,
            SchedEvent::ContainerCompleted { app, container },
            &mut out,
        );
    }
    out.extend(ask(&mut s, 1, vec![any(2)]));
    s.handle_at(since + 2 * explore - 1, SchedEvent::Tick, &mut out);
    assert_eq!(allocated_to(&out, 1), 0, "refused again after the probe");
    s.handle_at(since + 2 * explore, SchedEvent::Tick, &mut out);
    assert_eq!(allocated_to(&out, 1), 1, "one probe, not two");
    assert_eq!(s.overload().unwrap().node(NodeId(1)).model.probes, 2);
}

#[test]
fn fcfs_utility_serves_the_oldest_job_first_whatever_the_policy() {
    // Under EDF, app 2 (earlier deadline) would go first; FCFS utility prefers app 1, older.
    let config = ClassifierConfig {
        utility: Utility::Fcfs { epsilon_s: 1.0 },
        ..ClassifierConfig::default()
    };
    let mut s = cluster(ClusterPolicy::Edf, 1, 2).with_overload_classifier(config);
    let mut out = Vec::new();
    s.handle_at(
        0,
        SchedEvent::AppAdded {
            app: AppId(1),
            queue: "q".into(),
            user: String::new(),
            weight: 1.0,
        },
        &mut out,
    );
    s.handle_at(
        10_000,
        SchedEvent::AppAdded {
            app: AppId(2),
            queue: "q".into(),
            user: String::new(),
            weight: 1.0,
        },
        &mut out,
    );
    s.handle_at(
        10_000,
        SchedEvent::Deadline {
            app: AppId(2),
            deadline: Some(Deadline::from_epoch_ms(20_000)),
        },
        &mut out,
    );
    s.handle_at(
        10_000,
        SchedEvent::Deadline {
            app: AppId(1),
            deadline: Some(Deadline::from_epoch_ms(90_000)),
        },
        &mut out,
    );
    let mut out = Vec::new();
    s.handle_at(
        10_000,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![any(2)],
        },
        &mut out,
    );
    assert_eq!(allocated_to(&out, 2), 2, "alone, app 2 takes the node");
    for c in [1, 2] {
        s.handle_at(
            10_000,
            SchedEvent::ContainerCompleted {
                app: AppId(2),
                container: ContainerId(c),
            },
            &mut out,
        );
    }
    let mut out = Vec::new();
    s.handle_at(
        10_000,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![any(2)],
        },
        &mut out,
    );
    // Both wait now; the node frees up in one event: the older job takes it all.
    assert_eq!(allocated_to(&out, 1), 2);
    let mut plain = cluster(ClusterPolicy::Edf, 1, 2);
    let mut out = Vec::new();
    for (app, d) in [(1, 90_000), (2, 20_000)] {
        plain.handle_at(
            0,
            SchedEvent::AppAdded {
                app: AppId(app),
                queue: "q".into(),
                user: String::new(),
                weight: 1.0,
            },
            &mut out,
        );
        plain.handle_at(
            0,
            SchedEvent::Deadline {
                app: AppId(app),
                deadline: Some(Deadline::from_epoch_ms(d)),
            },
            &mut out,
        );
    }
    let mut out = Vec::new();
    plain.handle_at(
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![any(2)],
        },
        &mut out,
    );
    plain.handle_at(
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![any(2)],
        },
        &mut out,
    );
    assert_eq!(
        allocated_to(&out, 1),
        2,
        "EDF with one asking first: it fills the node"
    );
}

#[test]
fn fifo_serves_the_first_arrival_until_it_is_satisfied() {
    let mut s = cluster(ClusterPolicy::Fifo, 2, 2); // 4 containers
    add(&mut s, 1);
    add(&mut s, 2);
    let mut out = Vec::new();
    s.handle(
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![any(3)],
        },
        &mut out,
    );
    s.handle(
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![any(3)],
        },
        &mut out,
    );
    // App 2 asked first and got 3; app 1 gets the last one, then waits.
    assert_eq!(allocated_to(&out, 2), 3);
    assert_eq!(allocated_to(&out, 1), 1);
    // App 2 releases one: FIFO gives it to app 1, the earlier arrival still waiting.
    let Assignment::Allocate { container, .. } = out[0].clone() else {
        panic!()
    };
    let mut more = Vec::new();
    s.handle(
        SchedEvent::Release {
            app: AppId(2),
            container,
        },
        &mut more,
    );
    assert_eq!(allocated_to(&more, 1), 1);
}

#[test]
fn fair_sharing_splits_the_cluster_between_waiting_apps() {
    let mut s = cluster(ClusterPolicy::Fair, 4, 2); // 8 containers
    add(&mut s, 1);
    add(&mut s, 2);
    let mut out = ask(&mut s, 1, vec![any(100)]);
    assert_eq!(allocated_to(&out, 1), 8, "alone, app 1 takes the cluster");
    // App 2 asks: as app 1's containers end, app 2 is furthest below its share.
    out = ask(&mut s, 2, vec![any(100)]);
    assert!(out.is_empty());
    for c in 1..=4 {
        s.handle(
            SchedEvent::ContainerCompleted {
                app: AppId(1),
                container: ContainerId(c),
            },
            &mut out,
        );
    }
    assert_eq!(allocated_to(&out, 2), 4);
    assert_eq!(s.used(AppId(1)), s.used(AppId(2)));
}

#[test]
fn node_asks_are_served_node_local_then_rack_then_anywhere() {
    let mut s = cluster(ClusterPolicy::Fifo, 4, 1); // nodes 0,1 in rack 0; 2,3 in rack 1
    add(&mut s, 1);
    let out = ask(
        &mut s,
        1,
        vec![
            Ask {
                place: Place::Node(NodeId(3)),
                count: 1,
                ..any(0)
            },
            Ask {
                place: Place::Rack(RackId(1)),
                count: 2,
                ..any(0)
            },
            any(3),
        ],
    );
    let satisfied: Vec<(NodeId, Place)> = out
        .iter()
        .filter_map(|a| match a {
            Assignment::Allocate {
                node, satisfied, ..
            } => Some((*node, *satisfied)),
            _ => None,
        })
        .collect();
    assert_eq!(
        satisfied,
        vec![
            (NodeId(3), Place::Node(NodeId(3))),
            (NodeId(2), Place::Rack(RackId(1))),
            (NodeId(0), Place::Any)
        ]
    );
}

#[test]
fn strict_locality_waits_for_its_node() {
    let mut s = cluster(ClusterPolicy::Fifo, 2, 1);
    add(&mut s, 1);
    add(&mut s, 2);
    ask(&mut s, 2, vec![any(1)]); // takes node 0
    let strict = vec![
        Ask {
            place: Place::Node(NodeId(0)),
            count: 1,
            ..any(0)
        },
        Ask {
            relax_locality: false,
            ..any(1)
        },
    ];
    assert!(
        ask(&mut s, 1, strict).is_empty(),
        "node 1 is free but not where app 1 may run"
    );
    let mut out = Vec::new();
    s.handle(
        SchedEvent::ContainerCompleted {
            app: AppId(2),
            container: ContainerId(1),
        },
        &mut out,
    );
    assert!(
        matches!(
            out[..],
            [Assignment::Allocate {
                node: NodeId(0),
                ..
            }]
        ),
        "{out:?}"
    );
}

#[test]
fn a_lost_node_reports_its_containers_and_frees_nothing_twice() {
    let mut s = cluster(ClusterPolicy::Fifo, 2, 1);
    add(&mut s, 1);
    let out = ask(&mut s, 1, vec![any(2)]);
    assert_eq!(out.len(), 2);
    let mut lost = Vec::new();
    s.handle(SchedEvent::NodeRemoved(NodeId(0)), &mut lost);
    assert_eq!(
        lost,
        vec![Assignment::Lost {
            app: AppId(1),
            container: ContainerId(1)
        }]
    );
    assert_eq!(s.used(AppId(1)), Some(C));
    // Completing the lost container later changes nothing.
    s.handle(
        SchedEvent::ContainerCompleted {
            app: AppId(1),
            container: ContainerId(1),
        },
        &mut lost,
    );
    assert_eq!(s.used(AppId(1)), Some(C));
}

#[test]
fn a_removed_app_returns_everything_and_its_asks_go() {
    let mut s = cluster(ClusterPolicy::Fifo, 1, 2);
    add(&mut s, 1);
    add(&mut s, 2);
    ask(&mut s, 1, vec![any(5)]);
    let mut out = Vec::new();
    s.handle(
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![any(1)],
        },
        &mut out,
    );
    assert!(out.is_empty());
    s.handle(SchedEvent::AppRemoved(AppId(1)), &mut out);
    assert_eq!(allocated_to(&out, 2), 1);
    assert_eq!(allocated_to(&out, 1), 0);
    assert_eq!(s.free_on(NodeId(0)), Some(C));
}

#[test]
fn an_absolute_count_replaces_the_last_one() {
    let mut s = cluster(ClusterPolicy::Fifo, 1, 1);
    add(&mut s, 1);
    add(&mut s, 2);
    ask(&mut s, 2, vec![any(1)]); // fills the node
    ask(&mut s, 1, vec![any(5)]);
    ask(&mut s, 1, vec![any(0)]); // app 1 no longer wants anything
    let mut out = Vec::new();
    s.handle(
        SchedEvent::ContainerCompleted {
            app: AppId(2),
            container: ContainerId(1),
        },
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn a_master_a_rejoining_node_reports_counts_toward_the_masters_share() {
    // One node of 8 vcores: 10 % admits one 1-vcore master at a time.
    let mut s = cluster(ClusterPolicy::Fifo, 0, 8);
    add(&mut s, 1);
    add(&mut s, 2);
    let mut out = Vec::new();
    s.handle(
        SchedEvent::NodeAdded {
            node: NodeId(0),
            rack: RackId(0),
            capacity: Resources::new(8 * 1024, 8),
            running: vec![Running {
                app: AppId(1),
                size: C,
                master: true,
            }],
        },
        &mut out,
    );
    let master = Ask {
        priority: MASTER_PRIORITY,
        ..any(1)
    };
    assert!(
        ask(&mut s, 2, vec![master]).is_empty(),
        "the recovered master holds the share"
    );
    // It ends: the waiting master gets its turn.
    let Some(Assignment::Recovered {
        container: Some(c), ..
    }) = out.first().cloned()
    else {
        panic!("recovered: {out:?}");
    };
    let mut granted = Vec::new();
    s.handle(
        SchedEvent::ContainerCompleted {
            app: AppId(1),
            container: c,
        },
        &mut granted,
    );
    assert_eq!(granted.len(), 1, "{granted:?}");
}
