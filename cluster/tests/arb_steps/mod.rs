//! The steps the cluster's property tests drive a scheduler with, shared by
//! `policy_properties.rs` (every step, every policy) and `scheduler_properties.rs` (placement
//! only, FIFO and fair): what can happen to a cluster as proptest strategies ([`step`],
//! [`placing_step`]), and the [`World`] that turns each step into `SchedEvent`s and checks
//! every assignment against the scheduler's invariants ([`World::take`]).

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use proptest::prelude::*;
use yard_cluster::aria::{Durations, Profile};
use yard_cluster::classifier::NodeLoad;
use yard_cluster::ids::Bound;
use yard_cluster::policy::{ClusterPolicy, JobModel, JobQuota};
use yard_cluster::scheduler::{
    AppId, Ask, Assignment, ContainerId, DEFAULT_MASTER_SHARE, MASTER_PRIORITY, NodeId, Place,
    RackId, Resources, SchedEvent,
};
use yard_wire::deadline::Deadline;

#[derive(Debug, Clone)]
pub enum Step {
    Node(u32, u64),
    LoseNode(u32),
    App(u64),
    EndApp(u64),
    /// app, priority (0: its master), count, a node to prefer, relax locality.
    Asks(u64, u32, u32, Option<u32>, bool),
    Complete(usize),
    /// app, deadline in seconds from now (negative: past), or none.
    Deadline(u64, Option<i64>),
    /// app, maps, reduces, map seconds; with a profile or not.
    Model(u64, u32, u32, f64, bool),
    Progress(u64, u32, u32),
    /// Time passes (ms), then a tick.
    Advance(i64),
    /// An application arrives whole: deadline (s from now, or none), a profiled map-only
    /// model (maps, seconds each), and its task asks.
    Job(u64, Option<i64>, u32, f64, u32),
    /// A node's load: load per core, memory free.
    Load(u32, f64, f64),
    /// An app's map and reduce types (0: unknown, 1: cpu, 2: io).
    Type(u64, u8, u8),
}

/// The cluster the steps draw from: node ids `0..nodes`, each of `1..capacity` containers,
/// asks at priorities in `priorities` (0: a master).
#[derive(Debug, Clone)]
pub struct Shape {
    pub nodes: u32,
    pub capacity: u64,
    pub priorities: Range<u32>,
}

/// Nodes come and go, applications come, ask and end, containers end.
pub fn placing_step(shape: &Shape) -> impl Strategy<Value = Step> + use<> {
    let Shape {
        nodes,
        capacity,
        ref priorities,
    } = *shape;
    prop_oneof![
        (0u32..nodes, 1u64..capacity).prop_map(|(n, c)| Step::Node(n, c)),
        (0u32..nodes).prop_map(Step::LoseNode),
        (0u64..4).prop_map(Step::App),
        (0u64..4).prop_map(Step::EndApp),
        (
            0u64..4,
            priorities.clone(),
            0u32..8,
            prop::option::of(0u32..nodes),
            any::<bool>()
        )
            .prop_map(|(a, p, n, node, relax)| Step::Asks(a, p, n, node, relax)),
        any::<usize>().prop_map(Step::Complete),
    ]
}

/// Every step: placement's, and deadlines, models, progress, time, whole jobs, node loads
/// and job types.
pub fn step(shape: &Shape) -> impl Strategy<Value = Step> + use<> {
    prop_oneof![
        6 => placing_step(shape),
        1 => (0u64..4, prop::option::of(-50i64..500)).prop_map(|(a, d)| Step::Deadline(a, d)),
        1 => (0u64..4, 0u32..40, 0u32..6, 0.5f64..200.0, any::<bool>())
            .prop_map(|(a, m, r, s, p)| Step::Model(a, m, r, s, p)),
        1 => (0u64..4, 0u32..40, 0u32..6).prop_map(|(a, m, r)| Step::Progress(a, m, r)),
        1 => (0i64..120_000).prop_map(Step::Advance),
        1 => (
            0u64..4,
            prop::option::of(1i64..400),
            1u32..60,
            0.5f64..600.0,
            1u32..12
        )
            .prop_map(|(a, d, m, s, n)| Step::Job(a, d, m, s, n)),
        1 => (0u32..shape.nodes, 0.0f64..3.0, 0.0f64..1.0).prop_map(|(n, l, m)| Step::Load(n, l, m)),
        1 => (0u64..4, 0u8..3, 0u8..3).prop_map(|(a, m, r)| Step::Type(a, m, r)),
    ]
}

pub const SIZE: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

/// What the test knows of a live container.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    pub app: AppId,
    pub container: ContainerId,
    pub node: NodeId,
    pub master: bool,
}

#[derive(Default)]
pub struct World {
    pub now: i64,
    pub capacity: BTreeMap<NodeId, u64>,
    pub live: Vec<Live>,
    pub preempting: BTreeSet<ContainerId>,
    /// Containers each app may still get: what it asked for since, less what it got.
    pub wanted: BTreeMap<AppId, u32>,
    pub apps: BTreeSet<AppId>,
    pub quotas: BTreeMap<AppId, JobQuota>,
}

impl World {
    pub fn tasks_of(&self, app: AppId) -> u32 {
        self.live
            .iter()
            .filter(|l| l.app == app && !l.master && !self.preempting.contains(&l.container))
            .count() as u32
    }

    pub fn masters(&self) -> u64 {
        self.live.iter().filter(|l| l.master).count() as u64
    }

    /// Checks an event's assignments against the invariants and books them.
    pub fn take(&mut self, policy: ClusterPolicy, out: &[Assignment]) {
        for a in out {
            match *a {
                Assignment::Allocate {
                    app,
                    container,
                    node,
                    priority,
                    ..
                } => {
                    let w = self
                        .wanted
                        .get_mut(&app)
                        .expect("an allocation for an app that never asked");
                    assert!(*w > 0, "{policy}: {app:?} got more than it asked for");
                    *w -= 1;
                    let master = priority == MASTER_PRIORITY;
                    if master {
                        let total: u64 = self.capacity.values().sum();
                        let after = self.masters() + 1;
                        assert!(
                            self.masters() == 0
                                || after as f64 <= DEFAULT_MASTER_SHARE * total as f64 + 1e-9,
                            "{policy}: master {after} of a cluster of {total}"
                        );
                    }
                    self.live.push(Live {
                        app,
                        container,
                        node,
                        master,
                    });
                }
                Assignment::Lost { container, .. } => {
                    self.live.retain(|l| l.container != container);
                    self.preempting.remove(&container);
                }
                Assignment::Recovered { .. } => panic!("no node here rejoins with containers"),
                Assignment::Quota { app, quota } => {
                    assert!(
                        policy == ClusterPolicy::MinEdf || policy == ClusterPolicy::MinEdfWc,
                        "{policy} sets no quotas"
                    );
                    self.quotas.insert(app, quota);
                }
                Assignment::Preempt { app, container } => {
                    assert_eq!(policy, ClusterPolicy::MinEdfWc, "only minedf-wc preempts");
                    let l = self
                        .live
                        .iter()
                        .find(|l| l.container == container)
                        .expect("a live container");
                    assert_eq!(l.app, app);
                    assert!(!l.master, "{policy}: a master preempted");
                    let quota = self.quotas.get(&app).and_then(|q| q.containers);
                    let held = self.tasks_of(app);
                    assert!(
                        quota.is_some_and(|q| held > q),
                        "{policy}: {app:?} holds {held} tasks, quota {quota:?}: not above it"
                    );
                    assert!(self.preempting.insert(container), "preempted twice");
                }
            }
        }
        for (node, cap) in &self.capacity {
            let used = self.live.iter().filter(|l| l.node == *node).count() as u64;
            assert!(used <= *cap, "{policy}: {node:?} holds {used} > {cap}");
        }
    }
}

pub fn events(w: &mut World, st: &Step) -> Vec<SchedEvent> {
    match *st {
        Step::Job(a, deadline, maps, map_s, count) => [
            Step::App(a),
            Step::Deadline(a, deadline),
            Step::Model(a, maps, 0, map_s, true),
            Step::Asks(a, 1, count, None, true),
        ]
        .iter()
        .filter_map(|st| event(w, st))
        .collect(),
        _ => event(w, st).into_iter().collect(),
    }
}

pub fn event(w: &mut World, st: &Step) -> Option<SchedEvent> {
    Some(match *st {
        Step::Job(..) => unreachable!("expanded by events()"),
        Step::Node(n, c) => {
            w.capacity.entry(NodeId(n)).or_insert(c);
            SchedEvent::NodeAdded {
                node: NodeId(n),
                rack: RackId(n / 2),
                capacity: Resources::new(1024 * c, c as u32),
                running: Vec::new(),
            }
        }
        Step::LoseNode(n) => {
            w.capacity.remove(&NodeId(n));
            SchedEvent::NodeRemoved(NodeId(n))
        }
        Step::App(a) => {
            w.apps.insert(AppId(a));
            SchedEvent::AppAdded {
                app: AppId(a),
                queue: "q".into(),
                user: String::new(),
                weight: 1.0,
            }
        }
        Step::EndApp(a) => {
            w.live.retain(|l| l.app != AppId(a));
            w.wanted.remove(&AppId(a));
            w.apps.remove(&AppId(a));
            w.quotas.remove(&AppId(a));
            SchedEvent::AppRemoved(AppId(a))
        }
        Step::Asks(a, priority, count, node, relax) => {
            let any = Ask {
                priority,
                place: Place::Any,
                size: SIZE,
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
            if w.apps.contains(&AppId(a)) {
                *w.wanted.entry(AppId(a)).or_default() += count;
            }
            SchedEvent::Asks {
                app: AppId(a),
                asks,
            }
        }
        Step::Complete(i) => {
            if w.live.is_empty() {
                return None;
            }
            let l = w.live.remove(i % w.live.len());
            w.preempting.remove(&l.container);
            SchedEvent::ContainerCompleted {
                app: l.app,
                container: l.container,
            }
        }
        Step::Deadline(a, d) => SchedEvent::Deadline {
            app: AppId(a),
            deadline: d.map(|s| Deadline::from_epoch_ms(w.now + s * 1000)),
        },
        Step::Model(a, maps, reduces, map_s, profiled) => SchedEvent::Model {
            app: AppId(a),
            model: Some(JobModel {
                maps,
                reduces,
                profile: profiled.then(|| Profile {
                    map: Durations::new(map_s, 2.0 * map_s),
                    first_shuffle: Durations::new(1.0, 2.0),
                    typical_shuffle: Durations::new(1.0, 2.0),
                    reduce: Durations::new(map_s / 2.0, map_s),
                }),
            }),
        },
        Step::Progress(a, m, r) => SchedEvent::Progress {
            app: AppId(a),
            maps_done: m,
            reduces_done: r,
        },
        Step::Advance(ms) => {
            w.now += ms;
            SchedEvent::Tick
        }
        Step::Load(n, per_core, memory_free) => {
            let cores = w.capacity.get(&NodeId(n)).copied().unwrap_or(1) as u32;
            SchedEvent::NodeLoad {
                node: NodeId(n),
                load: NodeLoad {
                    cores,
                    load_1m: per_core * f64::from(cores),
                    cpu: (per_core).min(1.0),
                    memory_free,
                    disk: per_core / 3.0,
                },
            }
        }
        Step::Type(a, map, reduce) => {
            let bound = |b| [None, Some(Bound::Cpu), Some(Bound::Io)][usize::from(b)];
            SchedEvent::JobType {
                app: AppId(a),
                map: bound(map),
                reduce: bound(reduce),
            }
        }
    })
}
