//! Cluster scheduling as a sans-IO state machine: the rm feeds it events (nodes joining and
//! leaving, applications arriving and leaving, masters' asks and releases, containers ending)
//! and carries out its assignments. No IO, no clock (time comes with the events).
//!
//! Asks follow YARN's ResourceRequest: per priority, an absolute count of containers of one
//! size wanted anywhere (`*`), with node and rack counts saying where they would rather be.
//! A grant on a node satisfies a node ask there first, else a rack ask, else the `*` count when
//! the ask relaxes locality — and always lowers the `*` count (YARN's bookkeeping).
//!
//! Which application goes first is the [`Ordering`]: FIFO and fair sharing now; the
//! deadline-aware orders (EDF, MinEDF, MinEDF-WC) plug in there later. The cost of one
//! scheduling pass grows with the active applications and the nodes, never with finished
//! applications (they are forgotten).

use std::collections::{BTreeMap, BTreeSet};

/// Memory and cores, YARN's two resource kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Resources {
    pub memory_mb: u64,
    pub vcores: u32,
}

impl Resources {
    pub fn new(memory_mb: u64, vcores: u32) -> Self {
        Resources { memory_mb, vcores }
    }

    pub fn fits_in(self, free: Resources) -> bool {
        self.memory_mb <= free.memory_mb && self.vcores <= free.vcores
    }

    fn plus(self, o: Resources) -> Resources {
        Resources::new(self.memory_mb + o.memory_mb, self.vcores + o.vcores)
    }

    fn minus(self, o: Resources) -> Resources {
        Resources::new(
            self.memory_mb.saturating_sub(o.memory_mb),
            self.vcores.saturating_sub(o.vcores),
        )
    }
}

macro_rules! id {
    ($name:ident($t:ty)) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);
    };
}
id!(AppId(u64));
id!(NodeId(u32));
id!(RackId(u32));
id!(ContainerId(u64));

/// Where an ask would like its containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    Node(NodeId),
    Rack(RackId),
    Any,
}

/// One line of a master's ask: `count` containers of `size` at `priority` (lower first), at
/// `place`. Counts are absolute (they replace the last count for the same priority, place
/// and size), as in YARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    pub priority: u32,
    pub place: Place,
    pub size: Resources,
    pub count: u32,
    /// For a `*` line: whether containers may go to any node (YARN's relaxLocality).
    pub relax_locality: bool,
}

/// A container a rejoining node already runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    pub app: AppId,
    pub size: Resources,
    /// An application master's: it counts toward the masters' share.
    pub master: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SchedEvent {
    NodeAdded {
        node: NodeId,
        rack: RackId,
        capacity: Resources,
        /// Containers already running there (a node rejoining a restarted rm): booked before
        /// anything new is placed, each answered by an [`Assignment::Recovered`], in order.
        running: Vec<Running>,
    },
    /// A node lost (silent past the expiry interval) or removed: its containers are gone.
    NodeRemoved(NodeId),
    AppAdded {
        app: AppId,
        queue: String,
        weight: f64,
    },
    /// The application finished or was killed: its asks go, its containers are returned.
    AppRemoved(AppId),
    Asks {
        app: AppId,
        asks: Vec<Ask>,
    },
    /// The master gives a container back.
    Release {
        app: AppId,
        container: ContainerId,
    },
    /// A container's process ended on its node.
    ContainerCompleted {
        app: AppId,
        container: ContainerId,
    },
}

/// What the rm must carry out.
#[derive(Debug, Clone, PartialEq)]
pub enum Assignment {
    Allocate {
        app: AppId,
        container: ContainerId,
        node: NodeId,
        size: Resources,
        priority: u32,
        /// Node-local, rack-local, or anywhere: what the grant satisfied.
        satisfied: Place,
    },
    /// A container that vanished with its node: tell its master it completed as LOST.
    Lost { app: AppId, container: ContainerId },
    /// A running container taken back from a rejoining node, under this id. An application
    /// the scheduler does not know gets `None`: the container must be stopped.
    Recovered {
        container: Option<ContainerId>,
        node: NodeId,
    },
}

/// Which application is served first when several wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// Earliest arrival first (YARN's FIFO scheduler).
    Fifo,
    /// The application furthest below its weighted fair share of memory first; ties by arrival
    /// (YARN's fair scheduler, one level, without preemption).
    Fair,
}

struct Node {
    rack: RackId,
    capacity: Resources,
    used: Resources,
    containers: BTreeSet<ContainerId>,
}

/// Asks at one priority and size.
#[derive(Default)]
struct AskSet {
    any: u32,
    relax: bool,
    nodes: BTreeMap<NodeId, u32>,
    racks: BTreeMap<RackId, u32>,
}

struct App {
    arrival: u64,
    weight: f64,
    used: Resources,
    asks: BTreeMap<(u32, Resources), AskSet>,
    containers: BTreeSet<ContainerId>,
}

/// Asks at this priority are application masters' containers; together they may hold only
/// [`Scheduler::with_master_share`] of the cluster (YARN's maximum-am-resource-percent), so
/// tasks always find room.
pub const MASTER_PRIORITY: u32 = 0;

/// The share of the cluster masters may hold by default (YARN's 0.1).
pub const DEFAULT_MASTER_SHARE: f64 = 0.1;

/// An application's place in the ordering: a share (fair) then arrival, lower first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Turn(f64, u64);

impl Turn {
    /// Where `a` stands: FIFO by arrival; fair by memory used relative to its weighted share
    /// of the cluster's `cluster_mb`, then arrival.
    fn of(ordering: Ordering, a: &App, cluster_mb: u64, total_weight: f64) -> Turn {
        match ordering {
            Ordering::Fifo => Turn(0.0, a.arrival),
            Ordering::Fair => {
                let share = cluster_mb as f64 * a.weight / total_weight.max(f64::MIN_POSITIVE);
                Turn(a.used.memory_mb as f64 / share.max(1.0), a.arrival)
            }
        }
    }
}

impl Eq for Turn {}

impl PartialOrd for Turn {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Turn {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The cluster scheduler. See the module documentation.
pub struct Scheduler {
    ordering: Ordering,
    master_share: f64,
    /// What masters' containers hold now.
    masters_used: Resources,
    /// Every node's capacity, summed.
    capacity: Resources,
    nodes: BTreeMap<NodeId, Node>,
    apps: BTreeMap<AppId, App>,
    /// Every live container: its application, node and size.
    containers: BTreeMap<ContainerId, (AppId, NodeId, Resources)>,
    /// The live containers that are masters'.
    masters: BTreeSet<ContainerId>,
    next_container: u64,
    arrivals: u64,
}

impl Scheduler {
    pub fn new(ordering: Ordering) -> Self {
        Scheduler {
            ordering,
            master_share: DEFAULT_MASTER_SHARE,
            masters_used: Resources::default(),
            capacity: Resources::default(),
            nodes: BTreeMap::new(),
            apps: BTreeMap::new(),
            containers: BTreeMap::new(),
            masters: BTreeSet::new(),
            next_container: 1,
            arrivals: 0,
        }
    }

    /// Masters may hold at most `share` (0–1) of the cluster's memory and of its vcores; one
    /// master may always run, however small the share.
    pub fn with_master_share(mut self, share: f64) -> Self {
        self.master_share = share.clamp(0.0, 1.0);
        self
    }

    /// Whether one more master of `size` keeps masters within their share.
    fn master_fits(&self, size: Resources) -> bool {
        if self.masters_used == Resources::default() {
            return true;
        }
        let total = self.capacity;
        let after = self.masters_used.plus(size);
        after.memory_mb as f64 <= self.master_share * total.memory_mb as f64
            && f64::from(after.vcores) <= self.master_share * f64::from(total.vcores)
    }

    /// Takes one event and appends the assignments it leads to.
    pub fn handle(&mut self, event: SchedEvent, out: &mut Vec<Assignment>) {
        match event {
            SchedEvent::NodeAdded {
                node,
                rack,
                capacity,
                running,
            } => {
                if let std::collections::btree_map::Entry::Vacant(v) = self.nodes.entry(node) {
                    v.insert(Node {
                        rack,
                        capacity,
                        used: Resources::default(),
                        containers: BTreeSet::new(),
                    });
                    self.capacity = self.capacity.plus(capacity);
                }
                for Running { app, size, master } in running {
                    let container = self.apps.contains_key(&app).then(|| {
                        let c = self.new_container();
                        self.book(c, app, node, size);
                        if master {
                            self.masters.insert(c);
                            self.masters_used = self.masters_used.plus(size);
                        }
                        c
                    });
                    out.push(Assignment::Recovered { container, node });
                }
            }
            SchedEvent::NodeRemoved(node) => {
                if let Some(n) = self.nodes.remove(&node) {
                    self.capacity = self.capacity.minus(n.capacity);
                    for c in n.containers {
                        if let Some((app, _, size)) = self.containers.remove(&c) {
                            if let Some(a) = self.apps.get_mut(&app) {
                                a.used = a.used.minus(size);
                                a.containers.remove(&c);
                            }
                            if self.masters.remove(&c) {
                                self.masters_used = self.masters_used.minus(size);
                            }
                            out.push(Assignment::Lost { app, container: c });
                        }
                    }
                }
            }
            SchedEvent::AppAdded { app, weight, .. } => {
                self.arrivals += 1;
                let arrival = self.arrivals;
                self.apps.entry(app).or_insert(App {
                    arrival,
                    weight: if weight > 0.0 { weight } else { 1.0 },
                    used: Resources::default(),
                    asks: BTreeMap::new(),
                    containers: BTreeSet::new(),
                });
            }
            SchedEvent::AppRemoved(app) => {
                if let Some(a) = self.apps.remove(&app) {
                    for c in a.containers {
                        self.free(c);
                    }
                }
            }
            SchedEvent::Asks { app, asks } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    for ask in asks {
                        let set = a.asks.entry((ask.priority, ask.size)).or_default();
                        match ask.place {
                            Place::Any => {
                                set.any = ask.count;
                                set.relax = ask.relax_locality;
                            }
                            Place::Rack(r) => {
                                set.racks.insert(r, ask.count);
                            }
                            Place::Node(n) => {
                                set.nodes.insert(n, ask.count);
                            }
                        }
                    }
                    a.asks.retain(|_, s| s.any > 0);
                }
            }
            SchedEvent::Release { app, container }
            | SchedEvent::ContainerCompleted { app, container } => {
                if self.containers.get(&container).is_some_and(|c| c.0 == app) {
                    self.free(container);
                }
            }
        }
        self.schedule(out);
    }

    fn new_container(&mut self) -> ContainerId {
        self.next_container += 1;
        ContainerId(self.next_container - 1)
    }

    /// Books a container's room on its node and under its application. A node may end up
    /// over-full (a rejoining node reporting more than it has): nothing new fits there then.
    fn book(&mut self, container: ContainerId, app: AppId, node: NodeId, size: Resources) {
        if let Some(n) = self.nodes.get_mut(&node) {
            n.used = n.used.plus(size);
            n.containers.insert(container);
        }
        if let Some(a) = self.apps.get_mut(&app) {
            a.used = a.used.plus(size);
            a.containers.insert(container);
        }
        self.containers.insert(container, (app, node, size));
    }

    fn free(&mut self, c: ContainerId) {
        if let Some((app, node, size)) = self.containers.remove(&c) {
            if self.masters.remove(&c) {
                self.masters_used = self.masters_used.minus(size);
            }
            if let Some(n) = self.nodes.get_mut(&node) {
                n.used = n.used.minus(size);
                n.containers.remove(&c);
            }
            if let Some(a) = self.apps.get_mut(&app) {
                a.used = a.used.minus(size);
                a.containers.remove(&c);
            }
        }
    }

    /// Serves waiting applications in the ordering's turn, one container at a time, until no
    /// waiting ask fits anywhere. The turn is a heap keyed by the ordering: only the app just
    /// served changes its key, so a pass costs O((grants + waiting apps) · log apps), not
    /// O(waiting apps²) (a thousand apps queued behind the masters' cap made that minutes).
    fn schedule(&mut self, out: &mut Vec<Assignment>) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // Neither changes within a pass.
        let total_weight: f64 = self.apps.values().map(|a| a.weight).sum();
        let cluster = self.capacity.memory_mb;
        let ordering = self.ordering;
        let turn_of = |a: &App| Turn::of(ordering, a, cluster, total_weight);
        let mut turn: BinaryHeap<Reverse<(Turn, AppId)>> = self
            .apps
            .iter()
            .filter(|(_, a)| !a.asks.is_empty())
            .map(|(id, a)| Reverse((turn_of(a), *id)))
            .collect();
        while let Some(Reverse((_, app))) = turn.pop() {
            if let Some(a) = self.place_one(app) {
                out.push(a);
                if let Some(next) = self.apps.get(&app).filter(|a| !a.asks.is_empty()) {
                    turn.push(Reverse((turn_of(next), app)));
                }
            }
        }
    }

    /// Places one container for `app`'s most urgent ask that fits somewhere: node-local where
    /// it asked for nodes, else rack-local, else anywhere if it relaxes locality.
    fn place_one(&mut self, app: AppId) -> Option<Assignment> {
        let a = self.apps.get(&app)?;
        let fits = |n: &Node, size: Resources| size.fits_in(n.capacity.minus(n.used));
        let mut choice = None;
        'asks: for (&(priority, size), set) in &a.asks {
            if priority == MASTER_PRIORITY && !self.master_fits(size) {
                continue;
            }
            for (&node, &count) in &set.nodes {
                if count > 0 && self.nodes.get(&node).is_some_and(|n| fits(n, size)) {
                    choice = Some((priority, size, node, Place::Node(node)));
                    break 'asks;
                }
            }
            for (&rack, &count) in &set.racks {
                if count == 0 {
                    continue;
                }
                if let Some((&node, _)) = self
                    .nodes
                    .iter()
                    .find(|(_, n)| n.rack == rack && fits(n, size))
                {
                    choice = Some((priority, size, node, Place::Rack(rack)));
                    break 'asks;
                }
            }
            let wants_places =
                set.nodes.values().any(|&c| c > 0) || set.racks.values().any(|&c| c > 0);
            if set.relax || !wants_places {
                if let Some((&node, _)) = self.nodes.iter().find(|(_, n)| fits(n, size)) {
                    choice = Some((priority, size, node, Place::Any));
                    break 'asks;
                }
            }
        }
        let (priority, size, node, satisfied) = choice?;
        let container = self.new_container();
        self.book(container, app, node, size);
        if priority == MASTER_PRIORITY {
            self.masters.insert(container);
            self.masters_used = self.masters_used.plus(size);
        }
        let rack = self.nodes[&node].rack;
        let a = self.apps.get_mut(&app).expect("waiting app");
        let set = a.asks.get_mut(&(priority, size)).expect("chosen ask");
        set.any -= 1;
        if let Some(c) = set.nodes.get_mut(&node) {
            *c = c.saturating_sub(1);
        }
        if let Some(c) = set.racks.get_mut(&rack) {
            *c = c.saturating_sub(1);
        }
        if set.any == 0 {
            a.asks.remove(&(priority, size));
        }
        Some(Assignment::Allocate {
            app,
            container,
            node,
            size,
            priority,
            satisfied,
        })
    }

    /// What `app` holds now.
    pub fn used(&self, app: AppId) -> Option<Resources> {
        self.apps.get(&app).map(|a| a.used)
    }

    /// What is free on `node`.
    pub fn free_on(&self, node: NodeId) -> Option<Resources> {
        self.nodes.get(&node).map(|n| n.capacity.minus(n.used))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Resources = Resources {
        memory_mb: 1024,
        vcores: 1,
    };

    fn cluster(ordering: Ordering, nodes: u32, per_node: u64) -> Scheduler {
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

    #[test]
    fn fifo_serves_the_first_arrival_until_it_is_satisfied() {
        let mut s = cluster(Ordering::Fifo, 2, 2); // 4 containers
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
        let mut s = cluster(Ordering::Fair, 4, 2); // 8 containers
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
        let mut s = cluster(Ordering::Fifo, 4, 1); // nodes 0,1 in rack 0; 2,3 in rack 1
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
        let mut s = cluster(Ordering::Fifo, 2, 1);
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
        let mut s = cluster(Ordering::Fifo, 2, 1);
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
        let mut s = cluster(Ordering::Fifo, 1, 2);
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
        let mut s = cluster(Ordering::Fifo, 1, 1);
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
        let mut s = cluster(Ordering::Fifo, 0, 8);
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
}
