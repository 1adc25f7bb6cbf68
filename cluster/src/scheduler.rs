//! Cluster scheduling as a sans-IO state machine: the rm feeds it events (nodes joining and
//! leaving, applications arriving and leaving, their deadlines, task counts, profiles and
//! progress, masters' asks and releases, containers ending, the clock's ticks) with the time,
//! and carries out its assignments (grants, quota changes, preemptions). No IO, no clock of
//! its own: [`Scheduler::handle_at`] takes the time.
//!
//! Asks follow YARN's ResourceRequest: per priority, an absolute count of containers of one
//! size wanted anywhere (`*`), with node and rack counts saying where they would rather be.
//! A grant on a node satisfies a node ask there first, else a rack ask, else the `*` count when
//! the ask relaxes locality — and always lowers the `*` count (YARN's bookkeeping).
//!
//! Which application goes first, and how far, is the cluster policy ([`PolicyKind`]: `fifo`,
//! `fair`, `edf`, `minedf`, `minedf-wc`; the rules are in [`crate::policy`]). Every pass serves,
//! in the policy's order: masters first (asks at [`MASTER_PRIORITY`], capped at the masters'
//! share), then task asks of applications below their quota, then (`minedf-wc` only) task asks
//! beyond it, from spare containers. Quotas are recomputed on each [`SchedEvent::Tick`] and
//! whenever an application's deadline, model or progress changes. The cost of one pass grows
//! with the active applications and the nodes, never with finished applications (they are
//! forgotten).
//!
//! It owns the cluster's state as the policies see it (nodes, applications, asks, grants,
//! quotas) and calls down into [`crate::policy`] (whose turn, how many) and
//! [`crate::classifier`] (which node); neither calls back. The ids it hands out are
//! defined in [`crate::ids`].

use std::collections::{BTreeMap, BTreeSet};

use crate::aria::Target;
use crate::classifier::{
    Classifier, ClassifierConfig, Here, JobFeatures, Judgement, NodeLoad, Utility,
};
use crate::ids::Bound;
/// The ids its events and assignments carry (defined in `ids`, below every policy module).
pub use crate::ids::{AppId, ContainerId, NodeId, RackId};
pub use crate::policy::PolicyKind;
use crate::policy::{
    self, ClusterState, JobModel, JobQuota, JobView, QuotaBasis, Reclaim, SpareCounts, Stage, Tier,
    edf_key,
};

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
        Resources::new(
            self.memory_mb.saturating_add(o.memory_mb),
            self.vcores.saturating_add(o.vcores),
        )
    }

    fn minus(self, o: Resources) -> Resources {
        Resources::new(
            self.memory_mb.saturating_sub(o.memory_mb),
            self.vcores.saturating_sub(o.vcores),
        )
    }

    /// How many containers of `size` fit in `self` (by both kinds).
    fn holds(self, size: Resources) -> u32 {
        let by = |have: u64, each: u64| have.checked_div(each).unwrap_or(u64::MAX);
        by(self.memory_mb, size.memory_mb)
            .min(by(u64::from(self.vcores), u64::from(size.vcores)))
            .min(u64::from(u32::MAX)) as u32
    }
}

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
    /// Its master's attempt ended: every ask it made goes (the next attempt's master asks
    /// anew). Sent before its containers are released, so the room they leave is not granted
    /// straight back to a master that is gone.
    AsksWithdrawn(AppId),
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
    /// When the application's answer is due, ms since the epoch (`None`: no deadline).
    Deadline {
        app: AppId,
        deadline_ms: Option<i64>,
    },
    /// What its master said of its work: task counts and a profile (`None`: nothing known).
    Model {
        app: AppId,
        model: Option<JobModel>,
    },
    /// Its tasks done so far.
    Progress {
        app: AppId,
        maps_done: u32,
        reduces_done: u32,
    },
    /// Time passes: quotas are recomputed on the time left, and promised releases that did
    /// not come are reclaimed.
    Tick,
    /// A node's load (from its heartbeat): the overload classifier labels the placements made
    /// there by it and judges the node by it. Ignored without a classifier.
    NodeLoad {
        node: NodeId,
        load: NodeLoad,
    },
    /// The job's map and reduce types, once its kind's probes have typed them (seed 002,
    /// eq. 1–2): a feature of the overload classifier.
    JobType {
        app: AppId,
        map: Option<Bound>,
        reduce: Option<Bound>,
    },
}

/// Why an application's waiting tasks were not placed in the last pass that had room for them:
/// the overload classifier refused every node where one would fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// When, ms since the epoch.
    pub at_ms: i64,
    /// The nodes refused, with P(good) there, likeliest good first (at most
    /// [`REFUSALS_SHOWN`]).
    pub nodes: Vec<(NodeId, f64)>,
    /// How many nodes were refused in all.
    pub refused: usize,
}

/// How many refused nodes a [`Refusal`] names.
pub const REFUSALS_SHOWN: usize = 5;

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
    /// An above-quota task container taken back for a job that needs it (MinEDF-WC): stop it
    /// and tell its master it was preempted. It stays booked on its node until it has ended
    /// (its completion, release or node loss), so nothing is placed on top of it.
    Preempt { app: AppId, container: ContainerId },
    /// The application's quota changed.
    Quota { app: AppId, quota: JobQuota },
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
    /// Task containers held (not masters', not being preempted).
    tasks: u32,
    deadline_ms: Option<i64>,
    model: Option<JobModel>,
    maps_done: u32,
    reduces_done: u32,
    /// As last computed (`None` before the first computation).
    quota: Option<JobQuota>,
    /// The size of its task containers, from its last task ask.
    task_size: Option<Resources>,
    /// MinEDF-WC: its arrival check ran (Alg. 1, lines 1–29).
    checked: bool,
    /// MinEDF-WC: predicted releases should have given it its quota by then.
    reclaim_by: Option<i64>,
    /// When it was added, ms since the epoch (FCFS utility's age).
    added_ms: i64,
    /// Its map and reduce types, when known.
    bound: [Option<Bound>; 2],
    /// Why its tasks waited in the last pass, if the classifier refused them.
    refusal: Option<Refusal>,
}

impl App {
    fn has_master_ask(&self) -> bool {
        self.asks.keys().any(|(p, _)| *p == MASTER_PRIORITY)
    }

    /// Task containers asked for and not granted.
    fn waiting(&self) -> u32 {
        self.asks
            .iter()
            .filter(|((p, _), _)| *p != MASTER_PRIORITY)
            .map(|(_, s)| s.any)
            .fold(0, u32::saturating_add)
    }

    fn stage(&self) -> Stage {
        policy::stage_of(self.model, self.maps_done)
    }

    /// What the overload classifier reads of it.
    fn job_features(&self) -> JobFeatures {
        let stage = self.stage();
        JobFeatures {
            stage,
            bound: self.bound[usize::from(stage == Stage::Reduce)],
        }
    }

    fn view(&self, app: AppId) -> JobView {
        JobView {
            app,
            arrival: self.arrival,
            deadline_ms: self.deadline_ms,
            model: self.model,
            maps_done: self.maps_done,
            reduces_done: self.reduces_done,
            running: self.tasks,
            waiting: self.waiting(),
            quota: self.quota,
        }
    }
}

/// Asks at this priority are application masters' containers; together they may hold only
/// [`Scheduler::with_master_share`] of the cluster (YARN's maximum-am-resource-percent), so
/// tasks always find room. Masters are placed before any task, whatever the policy.
pub const MASTER_PRIORITY: u32 = 0;

/// The share of the cluster masters may hold by default (YARN's 0.1).
pub const DEFAULT_MASTER_SHARE: f64 = 0.1;

/// An application's place in the policy's order: a key (fair share, or deadline) then
/// arrival, lower first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Turn(f64, u64);

impl Turn {
    /// Where `a` stands: FIFO by arrival; fair by memory used relative to its weighted share
    /// of the cluster's `cluster_mb`, then arrival; the deadline policies by deadline (none
    /// last), then arrival.
    fn of(policy: PolicyKind, a: &App, cluster_mb: u64, total_weight: f64) -> Turn {
        match policy {
            PolicyKind::Fifo => Turn(0.0, a.arrival),
            PolicyKind::Fair => {
                let share = cluster_mb as f64 * a.weight / total_weight.max(f64::MIN_POSITIVE);
                Turn(a.used.memory_mb as f64 / share.max(1.0), a.arrival)
            }
            PolicyKind::Edf | PolicyKind::MinEdf | PolicyKind::MinEdfWc => {
                let (deadline, arrival) = edf_key(a.deadline_ms, a.arrival);
                Turn(deadline as f64, arrival)
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

/// What one pass of [`Scheduler::schedule`] serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Masters,
    Tasks(Tier),
}

/// The cluster scheduler. See the module documentation.
pub struct Scheduler {
    policy: PolicyKind,
    target: Target,
    master_share: f64,
    /// What masters' containers hold now.
    masters_used: Resources,
    /// Every node's capacity, summed.
    capacity: Resources,
    nodes: BTreeMap<NodeId, Node>,
    /// The nodes with some memory and a vcore free: where a container might still go. A
    /// pass looks only here, and stops when it is empty (a full cluster of thousands of nodes
    /// costs nothing to search).
    room: BTreeSet<NodeId>,
    apps: BTreeMap<AppId, App>,
    /// Every live container: its application, node and size.
    containers: BTreeMap<ContainerId, (AppId, NodeId, Resources)>,
    /// The live containers that are masters'.
    masters: BTreeSet<ContainerId>,
    /// Containers preempted and not yet ended.
    preempting: BTreeSet<ContainerId>,
    next_container: u64,
    arrivals: u64,
    /// The time of the event being handled, ms since the epoch (never goes back).
    now_ms: i64,
    counts: SpareCounts,
    /// The overload classifier, a placement filter under any policy (`None`: off).
    overload: Option<Classifier>,
    /// Where a task that may go anywhere goes when no classifier chooses.
    placement: Placement,
}

/// Where a container that may go anywhere goes, when no overload classifier chooses (with one,
/// it goes to the likeliest-good node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// The first node with room, by node id: nodes fill up one after another (packing). The
    /// default, and what every experiment before issue 17's baselines ran.
    #[default]
    Pack,
    /// The node with the fewest containers per vcore (then the first by id), for node- and
    /// rack-local asks too among the nodes they name: spreading, with no load read and nothing
    /// learned — the baseline that tells the classifier's learning from its spreading.
    Spread,
}

impl Scheduler {
    pub fn new(policy: PolicyKind) -> Self {
        Scheduler {
            policy,
            target: Target::Avg,
            master_share: DEFAULT_MASTER_SHARE,
            masters_used: Resources::default(),
            capacity: Resources::default(),
            nodes: BTreeMap::new(),
            room: BTreeSet::new(),
            apps: BTreeMap::new(),
            containers: BTreeMap::new(),
            masters: BTreeSet::new(),
            preempting: BTreeSet::new(),
            next_container: 1,
            arrivals: 0,
            now_ms: i64::MIN,
            counts: SpareCounts::default(),
            overload: None,
            placement: Placement::Pack,
        }
    }

    /// Where containers that may go anywhere go when no classifier chooses.
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// Places tasks only where the overload classifier (seed 002) judges them good; see
    /// [`crate::classifier`]. Masters are never refused.
    pub fn with_overload_classifier(mut self, config: ClassifierConfig) -> Self {
        self.overload = Some(Classifier::new(config));
        self
    }

    /// The overload classifier, when on.
    pub fn overload(&self) -> Option<&Classifier> {
        self.overload.as_ref()
    }

    /// Why `app`'s tasks wait, if the classifier refused every node with room for them in the
    /// last pass that tried; cleared once one is placed or none fits anywhere.
    pub fn refusal(&self, app: AppId) -> Option<&Refusal> {
        self.apps
            .get(&app)
            .filter(|a| a.waiting() > 0)
            .and_then(|a| a.refusal.as_ref())
    }

    /// Masters may hold at most `share` (0–1) of the cluster's memory and of its vcores; one
    /// master may always run, however small the share.
    pub fn with_master_share(mut self, share: f64) -> Self {
        self.master_share = share.clamp(0.0, 1.0);
        self
    }

    /// Which of ARIA's bounds the quotas are sized for (default: their mean).
    pub fn with_target(mut self, target: Target) -> Self {
        self.target = target;
        self
    }

    pub fn policy(&self) -> PolicyKind {
        self.policy
    }

    pub fn master_share(&self) -> f64 {
        self.master_share
    }

    /// MinEDF-WC's spare allocations and kills so far.
    pub fn spare_counts(&self) -> SpareCounts {
        self.counts
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

    /// Takes one event at `now_ms` (ms since the epoch; a time before the last one counts as
    /// the last one) and appends the assignments it leads to.
    pub fn handle_at(&mut self, now_ms: i64, event: SchedEvent, out: &mut Vec<Assignment>) {
        self.now_ms = self.now_ms.max(now_ms);
        self.handle(event, out);
    }

    /// Takes one event at the time of the last one and appends the assignments it leads to.
    pub fn handle(&mut self, event: SchedEvent, out: &mut Vec<Assignment>) {
        // An application whose tasks just asked: MinEDF-WC's arrival check after the pass.
        let mut asked = None;
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
                    self.note_room(node);
                    // Every quota is capped by the cluster: recomputed when it changes.
                    self.requota_all(out);
                }
                for Running { app, size, master } in running {
                    let container = self.apps.contains_key(&app).then(|| {
                        let c = self.new_container();
                        self.book(c, app, node, size, master);
                        c
                    });
                    out.push(Assignment::Recovered { container, node });
                }
            }
            SchedEvent::NodeRemoved(node) => {
                if let Some(c) = self.overload.as_mut() {
                    c.forget(node);
                }
                if let Some(n) = self.nodes.remove(&node) {
                    self.room.remove(&node);
                    self.capacity = self.capacity.minus(n.capacity);
                    for c in n.containers {
                        if let Some((app, _, _)) = self.containers.get(&c).copied() {
                            self.free(c);
                            out.push(Assignment::Lost { app, container: c });
                        }
                    }
                    self.requota_all(out);
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
                    tasks: 0,
                    deadline_ms: None,
                    model: None,
                    maps_done: 0,
                    reduces_done: 0,
                    quota: None,
                    task_size: None,
                    checked: false,
                    reclaim_by: None,
                    added_ms: self.now_ms,
                    bound: [None, None],
                    refusal: None,
                });
                self.requota(app, out);
            }
            SchedEvent::AppRemoved(app) => {
                if let Some(a) = self.apps.remove(&app) {
                    for c in a.containers {
                        self.free(c);
                    }
                }
            }
            SchedEvent::AsksWithdrawn(app) => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.asks.clear();
                }
            }
            SchedEvent::Asks { app, asks } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    for ask in asks {
                        if ask.priority != MASTER_PRIORITY {
                            a.task_size = Some(ask.size);
                        }
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
                    asked = Some(app);
                }
            }
            SchedEvent::Release { app, container }
            | SchedEvent::ContainerCompleted { app, container } => {
                if self.containers.get(&container).is_some_and(|c| c.0 == app) {
                    self.free(container);
                }
            }
            SchedEvent::Deadline { app, deadline_ms } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.deadline_ms = deadline_ms;
                    a.checked = false;
                    self.requota(app, out);
                }
            }
            SchedEvent::Model { app, model } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.model = model;
                    a.checked = false;
                    self.requota(app, out);
                }
            }
            SchedEvent::Progress {
                app,
                maps_done,
                reduces_done,
            } => {
                if let Some(a) = self.apps.get_mut(&app)
                    && (a.maps_done, a.reduces_done) != (maps_done, reduces_done)
                {
                    a.maps_done = maps_done;
                    a.reduces_done = reduces_done;
                    self.requota(app, out);
                }
            }
            SchedEvent::Tick => self.requota_all(out),
            SchedEvent::NodeLoad { node, load } => {
                let now = self.now_ms;
                let containers = self
                    .nodes
                    .get(&node)
                    .map_or(0, |n| n.containers.len() as u32);
                if let Some(c) = self.overload.as_mut() {
                    c.observe_with(now, node, load, containers);
                }
            }
            SchedEvent::JobType { app, map, reduce } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.bound = [map, reduce];
                }
            }
        }
        self.schedule(out);
        if self.policy.work_conserving() {
            if let Some(app) = asked {
                self.arrival_check(app, out);
            }
            let due: Vec<AppId> = self
                .apps
                .iter()
                .filter(|(_, a)| a.reclaim_by.is_some_and(|t| t <= self.now_ms))
                .map(|(id, _)| *id)
                .collect();
            for app in due {
                self.reclaim_for(app, false, out);
            }
            self.reclaim_for_masters(out);
        }
    }

    /// MinEDF-WC, for masters [INF; Alg. 1 knows no masters]: a job with a deadline whose
    /// master finds no room (within the masters' share) takes one spare container — a task
    /// above its job's quota, of the latest deadline first — on a node where that makes room;
    /// unless room is already being made. Without this, spare containers lent to other jobs
    /// would keep a deadline job from starting at all, since its tasks' reclamation needs its
    /// master to ask for them.
    fn reclaim_for_masters(&mut self, out: &mut Vec<Assignment>) {
        let mut waiting: Vec<((i64, u64), AppId, Resources)> = self
            .apps
            .iter()
            .filter(|(_, a)| a.deadline_ms.is_some())
            .filter_map(|(id, a)| {
                let (&(_, size), _) = a.asks.iter().find(|((p, _), _)| *p == MASTER_PRIORITY)?;
                Some((edf_key(a.deadline_ms, a.arrival), *id, size))
            })
            .collect();
        waiting.sort();
        for (_, _, size) in waiting {
            if !self.master_fits(size) {
                continue;
            }
            let room_after =
                |n: &Node, freed: Resources| size.fits_in(n.capacity.minus(n.used).plus(freed));
            let fits_now = self
                .nodes
                .values()
                .any(|n| room_after(n, Resources::default()));
            let coming = self.preempting.iter().any(|c| {
                self.containers.get(c).is_some_and(|(_, node, freed)| {
                    self.nodes.get(node).is_some_and(|n| room_after(n, *freed))
                })
            });
            if fits_now || coming {
                continue;
            }
            // Spare containers, latest deadline first, each job's newest first.
            let mut lenders: Vec<((i64, u64), AppId)> = self
                .apps
                .iter()
                .filter(|(id, a)| a.view(**id).extra() > 0)
                .map(|(id, a)| (edf_key(a.deadline_ms, a.arrival), *id))
                .collect();
            lenders.sort_by(|a, b| b.cmp(a));
            let victim = lenders.iter().find_map(|(_, app)| {
                self.apps[app].containers.iter().rev().find(|c| {
                    !self.masters.contains(c)
                        && !self.preempting.contains(c)
                        && self.containers.get(c).is_some_and(|(_, node, freed)| {
                            self.nodes.get(node).is_some_and(|n| room_after(n, *freed))
                        })
                })
            });
            if let Some(&c) = victim {
                self.take_back(c, out);
            }
        }
    }

    /// Keeps `room` true for `node` after its use changed.
    fn note_room(&mut self, node: NodeId) {
        let free = self
            .nodes
            .get(&node)
            .map(|n| n.capacity.minus(n.used))
            .filter(|f| f.memory_mb > 0 && f.vcores > 0);
        match free {
            Some(_) => self.room.insert(node),
            None => self.room.remove(&node),
        };
    }

    fn new_container(&mut self) -> ContainerId {
        self.next_container += 1;
        ContainerId(self.next_container - 1)
    }

    /// Books a container's room on its node and under its application. A node may end up
    /// over-full (a rejoining node reporting more than it has): nothing new fits there then.
    fn book(
        &mut self,
        container: ContainerId,
        app: AppId,
        node: NodeId,
        size: Resources,
        master: bool,
    ) {
        if let Some(n) = self.nodes.get_mut(&node) {
            n.used = n.used.plus(size);
            n.containers.insert(container);
        }
        self.note_room(node);
        if let Some(a) = self.apps.get_mut(&app) {
            a.used = a.used.plus(size);
            a.containers.insert(container);
            if !master {
                a.tasks += 1;
            }
        }
        if master {
            self.masters.insert(container);
            self.masters_used = self.masters_used.plus(size);
        }
        self.containers.insert(container, (app, node, size));
    }

    fn free(&mut self, c: ContainerId) {
        if let Some((app, node, size)) = self.containers.remove(&c) {
            let master = self.masters.remove(&c);
            if master {
                self.masters_used = self.masters_used.minus(size);
            }
            let preempted = self.preempting.remove(&c);
            if let Some(n) = self.nodes.get_mut(&node) {
                n.used = n.used.minus(size);
                n.containers.remove(&c);
            }
            self.note_room(node);
            if let Some(a) = self.apps.get_mut(&app) {
                a.used = a.used.minus(size);
                a.containers.remove(&c);
                if !master && !preempted {
                    a.tasks = a.tasks.saturating_sub(1);
                }
            }
        }
    }

    /// Containers of `size` the whole cluster could hold: the cap of every quota.
    fn slots(&self, size: Option<Resources>) -> u32 {
        self.capacity.holds(size.unwrap_or(Resources::new(1, 1)))
    }

    fn requota_all(&mut self, out: &mut Vec<Assignment>) {
        if self.policy.uses_quota() {
            let apps: Vec<AppId> = self.apps.keys().copied().collect();
            for app in apps {
                self.requota(app, out);
            }
        }
    }

    /// Recomputes `app`'s quota at the current time; says so when it changed.
    fn requota(&mut self, app: AppId, out: &mut Vec<Assignment>) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        if !self.policy.uses_quota() {
            return;
        }
        let q = policy::quota_of(
            self.policy,
            &a.view(app),
            self.now_ms,
            self.slots(a.task_size),
            self.target,
        );
        if a.quota != Some(q) {
            if let Some(a) = self.apps.get_mut(&app) {
                a.quota = Some(q);
            }
            out.push(Assignment::Quota { app, quota: q });
        }
    }

    /// MinEDF-WC, on the arrival of `app`'s tasks (Alg. 1, lines 1–29): the first time it
    /// asks for tasks with a deadline it can meet and stays short of its quota after a pass.
    fn arrival_check(&mut self, app: AppId, out: &mut Vec<Assignment>) {
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        if a.checked || a.waiting() == 0 {
            return;
        }
        a.checked = true;
        self.reclaim_for(app, true, out);
    }

    /// Alg. 1 for `app` now: fits, wait for predicted releases (`predict`), or kill
    /// above-quota tasks. Only for a job whose deadline can be met (`Feasible`): killing
    /// others' work cannot save a job no allocation saves [INF].
    fn reclaim_for(&mut self, app: AppId, predict: bool, out: &mut Vec<Assignment>) {
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        a.reclaim_by = None;
        let feasible = a
            .quota
            .is_some_and(|q| q.basis == QuotaBasis::Feasible && q.containers > Some(a.tasks));
        if !feasible || a.waiting() == 0 {
            return;
        }
        let size = a.task_size.unwrap_or(Resources::new(1, 1));
        let new = a.view(app);
        let views: Vec<JobView> = self
            .apps
            .iter()
            .filter(|(id, _)| **id != app)
            .map(|(id, a)| a.view(*id))
            .collect();
        let others: Vec<&JobView> = views.iter().collect();
        // Free now, plus what is already being taken back.
        let free = self
            .nodes
            .values()
            .map(|n| n.capacity.minus(n.used).holds(size))
            .fold(0u32, u32::saturating_add)
            .saturating_add(self.preempting.len() as u32);
        let at = ClusterState {
            kind: self.policy,
            free,
            now_ms: self.now_ms,
            slots: self.slots(Some(size)),
            target: self.target,
        };
        let decision = policy::reclaim(&new, &others, at, predict);
        match decision {
            Reclaim::Fits | Reclaim::Short => {}
            Reclaim::Wait { until_ms } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.reclaim_by = Some(until_ms);
                }
            }
            Reclaim::Kill(victims) => {
                for (victim, count) in victims {
                    self.preempt(victim, count, out);
                }
            }
        }
    }

    /// Takes back `count` of `app`'s task containers, the newest first (the least work lost);
    /// never its master's.
    fn preempt(&mut self, app: AppId, count: u32, out: &mut Vec<Assignment>) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let chosen: Vec<ContainerId> = a
            .containers
            .iter()
            .rev()
            .filter(|c| !self.masters.contains(c) && !self.preempting.contains(c))
            .take(count as usize)
            .copied()
            .collect();
        for c in chosen {
            self.take_back(c, out);
        }
    }

    /// Preempts one task container: it no longer counts as its job's, and stays booked on its
    /// node until it has ended.
    fn take_back(&mut self, c: ContainerId, out: &mut Vec<Assignment>) {
        let Some(&(app, _, _)) = self.containers.get(&c) else {
            return;
        };
        if self.masters.contains(&c) || !self.preempting.insert(c) {
            return;
        }
        if let Some(a) = self.apps.get_mut(&app) {
            a.tasks = a.tasks.saturating_sub(1);
        }
        self.counts.spare_kills += 1;
        if self
            .apps
            .get(&app)
            .is_some_and(|a| a.view(app).stage() == Stage::Map)
        {
            self.counts.spare_map_kills += 1;
        }
        out.push(Assignment::Preempt { app, container: c });
    }

    /// Serves waiting applications until no waiting ask fits anywhere: masters first, then
    /// tasks below their quotas, then (MinEDF-WC) tasks on spare containers; each in the
    /// policy's turn, one container at a time.
    fn schedule(&mut self, out: &mut Vec<Assignment>) {
        self.pass(Pass::Masters, out);
        self.pass(Pass::Tasks(Tier::Quota), out);
        if self.policy.work_conserving() {
            self.pass(Pass::Tasks(Tier::Spare), out);
        }
    }

    /// Whether `a` has something `pass` serves.
    fn eligible(&self, pass: Pass, a: &App) -> bool {
        match pass {
            Pass::Masters => a.has_master_ask(),
            Pass::Tasks(t) => {
                a.waiting() > 0 && policy::tier(self.policy, a.quota.as_ref(), a.tasks) == Some(t)
            }
        }
    }

    /// One tier. The turn is a heap keyed by the policy: only the app just served changes its
    /// key, so a pass costs O((grants + waiting apps) · log apps), not O(waiting apps²) (a
    /// thousand apps queued behind the masters' cap made that minutes).
    fn pass(&mut self, pass: Pass, out: &mut Vec<Assignment>) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        if self.room.is_empty() {
            return;
        }
        // Neither changes within a pass.
        let total_weight: f64 = self.apps.values().map(|a| a.weight).sum();
        let cluster = self.capacity.memory_mb;
        let mut turn: BinaryHeap<Reverse<(Turn, AppId)>> = self
            .apps
            .iter()
            .filter(|(_, a)| self.eligible(pass, a))
            .map(|(id, a)| Reverse((self.turn(pass, a, cluster, total_weight), *id)))
            .collect();
        while let Some(Reverse((_, app))) = turn.pop() {
            if let Some(a) = self.place_one(app, pass == Pass::Masters) {
                if pass == Pass::Tasks(Tier::Spare) {
                    self.counts.spare_allocations += 1;
                    if self.apps[&app].view(app).stage() == Stage::Map {
                        self.counts.spare_map_allocations += 1;
                    }
                }
                out.push(a);
                if let Some(next) = self.apps.get(&app).filter(|a| self.eligible(pass, a)) {
                    turn.push(Reverse((self.turn(pass, next, cluster, total_weight), app)));
                }
                if self.room.is_empty() {
                    return;
                }
            }
        }
    }

    /// `a`'s place in this pass: the policy's, unless the overload classifier's utility
    /// replaces it for tasks by the paper's expected utility (eq. 3), the largest first.
    fn turn(&self, pass: Pass, a: &App, cluster_mb: u64, total_weight: f64) -> Turn {
        let utility = self.overload.as_ref().map(|c| c.config().utility);
        match utility {
            Some(u) if u != Utility::Policy && pass != Pass::Masters => {
                let age_s = (self.now_ms - a.added_ms).max(0) as f64 / 1000.0;
                let eu = u.value(age_s, a.stage()) * self.best_p_good(a);
                Turn(-eu, a.arrival)
            }
            _ => Turn::of(self.policy, a, cluster_mb, total_weight),
        }
    }

    /// P(good) of `a`'s next task on the likeliest-good node with room for it.
    fn best_p_good(&self, a: &App) -> f64 {
        let size = a.task_size.unwrap_or(Resources::new(1, 1));
        self.room
            .iter()
            .filter(|id| {
                self.nodes
                    .get(id)
                    .is_some_and(|n| size.fits_in(n.capacity.minus(n.used)))
            })
            .map(|&id| self.judge(a, id).p_good())
            .fold(0.0, f64::max)
    }

    /// The overload classifier's judgement of a task of `a` on `node` now (allowed when off).
    fn judge(&self, a: &App, node: NodeId) -> Judgement {
        let Some(c) = &self.overload else {
            return Judgement::Unknown;
        };
        let job = a.job_features();
        c.judge(self.now_ms, node, job, self.here(node, job))
    }

    /// What the rm knows of `node` for a task of `job`: the paper's CPU/IO balance and (yard's
    /// classifier) every container it has there now.
    fn here(&self, node: NodeId, job: JobFeatures) -> Here {
        Here {
            same_type: self.same_type(node, job),
            containers: self
                .nodes
                .get(&node)
                .map_or(0, |n| n.containers.len() as u32),
        }
    }

    /// How full `n` is for [`Placement::Spread`]: containers per vcore.
    fn fill(n: &Node) -> f64 {
        n.containers.len() as f64 / f64::from(n.capacity.vcores.max(1))
    }

    /// Task containers on `node` of jobs whose current type is `job`'s (untyped counts with
    /// untyped): the paper's per-node CPU/IO balance.
    fn same_type(&self, node: NodeId, job: JobFeatures) -> u32 {
        let Some(n) = self.nodes.get(&node) else {
            return 0;
        };
        n.containers
            .iter()
            .filter(|c| !self.masters.contains(c))
            .filter_map(|c| self.containers.get(c))
            .filter_map(|(app, _, _)| self.apps.get(app))
            .filter(|other| other.job_features().bound == job.bound)
            .count() as u32
    }

    /// Places one container for `app`'s most urgent ask (of masters, or of tasks) that fits
    /// somewhere: node-local where it asked for nodes, else rack-local, else anywhere if it
    /// relaxes locality. With the overload classifier, a task goes only where it is judged
    /// good (or unknown, or a probe), and anywhere means the likeliest-good node; when every
    /// node with room is refused, the app keeps a [`Refusal`] saying so.
    fn place_one(&mut self, app: AppId, masters: bool) -> Option<Assignment> {
        let a = self.apps.get(&app)?;
        let filter = self.overload.is_some() && !masters;
        // Refused nodes, with P(good) there.
        let mut refused: Vec<(NodeId, f64)> = Vec::new();
        let mut judged: Option<Judgement> = None;
        let mut allowed = |node: NodeId, judged: &mut Option<Judgement>| {
            if !filter {
                return true;
            }
            let j = self.judge(a, node);
            if j.allows() {
                *judged = Some(j);
                true
            } else {
                if !refused.iter().any(|(n, _)| *n == node) {
                    refused.push((node, j.p_good()));
                }
                false
            }
        };
        let fits = |n: &Node, size: Resources| size.fits_in(n.capacity.minus(n.used));
        let spread = !filter && self.placement == Placement::Spread;
        // Placement::Spread: the emptiest of these nodes with room, the first of equals.
        let emptiest = |ids: &mut dyn Iterator<Item = NodeId>, size: Resources| {
            ids.filter_map(|id| Some((id, self.nodes.get(&id).filter(|n| fits(n, size))?)))
                .min_by(|x, y| Self::fill(x.1).total_cmp(&Self::fill(y.1)))
                .map(|(id, _)| id)
        };
        let mut choice = None;
        'asks: for (&(priority, size), set) in &a.asks {
            if (priority == MASTER_PRIORITY) != masters {
                continue;
            }
            if priority == MASTER_PRIORITY && !self.master_fits(size) {
                continue;
            }
            if spread {
                let mut asked = set.nodes.iter().filter(|c| *c.1 > 0).map(|c| *c.0);
                if let Some(node) = emptiest(&mut asked, size) {
                    choice = Some((priority, size, node, Place::Node(node)));
                    break 'asks;
                }
                for (&rack, _) in set.racks.iter().filter(|c| *c.1 > 0) {
                    let mut in_rack = self
                        .room
                        .iter()
                        .copied()
                        .filter(|id| self.nodes.get(id).is_some_and(|n| n.rack == rack));
                    if let Some(node) = emptiest(&mut in_rack, size) {
                        choice = Some((priority, size, node, Place::Rack(rack)));
                        break 'asks;
                    }
                }
                let wants_places =
                    set.nodes.values().any(|&c| c > 0) || set.racks.values().any(|&c| c > 0);
                if set.relax || !wants_places {
                    let mut all = self.room.iter().copied();
                    if let Some(node) = emptiest(&mut all, size) {
                        choice = Some((priority, size, node, Place::Any));
                        break 'asks;
                    }
                }
                continue;
            }
            for (&node, &count) in &set.nodes {
                if count > 0
                    && self.nodes.get(&node).is_some_and(|n| fits(n, size))
                    && allowed(node, &mut judged)
                {
                    choice = Some((priority, size, node, Place::Node(node)));
                    break 'asks;
                }
            }
            for (&rack, &count) in &set.racks {
                if count == 0 {
                    continue;
                }
                if let Some(&node) = self.room.iter().find(|&&id| {
                    self.nodes
                        .get(&id)
                        .is_some_and(|n| n.rack == rack && fits(n, size))
                        && allowed(id, &mut judged)
                }) {
                    choice = Some((priority, size, node, Place::Rack(rack)));
                    break 'asks;
                }
            }
            let wants_places =
                set.nodes.values().any(|&c| c > 0) || set.racks.values().any(|&c| c > 0);
            if set.relax || !wants_places {
                let fitting = self
                    .room
                    .iter()
                    .copied()
                    .filter(|id| self.nodes.get(id).is_some_and(|n| fits(n, size)));
                let node = if filter {
                    // The likeliest good of the nodes allowed; the first of equals.
                    let mut best: Option<(NodeId, Judgement)> = None;
                    for id in fitting {
                        let mut j = None;
                        if allowed(id, &mut j) {
                            let j = j.expect("judged when allowed");
                            if best.is_none_or(|(_, b)| j.p_good() > b.p_good()) {
                                best = Some((id, j));
                            }
                        }
                    }
                    best.map(|(id, j)| {
                        judged = Some(j);
                        id
                    })
                } else {
                    fitting.into_iter().next()
                };
                if let Some(node) = node {
                    choice = Some((priority, size, node, Place::Any));
                    break 'asks;
                }
            }
        }
        let job = a.job_features();
        if choice.is_none() && refused.is_empty() {
            // Waiting for room, not for the classifier: an older refusal no longer says why.
            if let Some(a) = self.apps.get_mut(&app) {
                a.refusal = None;
            }
            return None;
        }
        if choice.is_none() {
            refused.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
            let now = self.now_ms;
            if let Some(c) = self.overload.as_mut() {
                refused.iter().for_each(|(n, _)| c.refused(now, *n));
            }
            let count = refused.len();
            refused.truncate(REFUSALS_SHOWN);
            if let Some(a) = self.apps.get_mut(&app) {
                a.refusal = Some(Refusal {
                    at_ms: now,
                    nodes: refused,
                    refused: count,
                });
            }
            return None;
        }
        let (priority, size, node, satisfied) = choice?;
        if filter {
            let here = self.here(node, job);
            let now = self.now_ms;
            let probe = matches!(judged, Some(Judgement::Explore { .. }));
            if let Some(c) = self.overload.as_mut() {
                let f = c.features(node, job, here);
                c.assigned(now, node, f, probe);
            }
            if let Some(a) = self.apps.get_mut(&app) {
                a.refusal = None;
            }
        }
        let container = self.new_container();
        self.book(container, app, node, size, priority == MASTER_PRIORITY);
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
    /// Every container the scheduler holds: its application, node and size.
    pub fn holdings(&self) -> impl Iterator<Item = (ContainerId, AppId, NodeId, Resources)> + '_ {
        self.containers
            .iter()
            .map(|(&c, &(app, node, size))| (c, app, node, size))
    }

    pub fn free_on(&self, node: NodeId) -> Option<Resources> {
        self.nodes.get(&node).map(|n| n.capacity.minus(n.used))
    }

    /// `app`'s quota, as last computed (`None` under a policy without quotas).
    pub fn quota(&self, app: AppId) -> Option<JobQuota> {
        self.apps.get(&app).and_then(|a| a.quota)
    }

    /// What the policies see of `app` now.
    pub fn view(&self, app: AppId) -> Option<JobView> {
        self.apps.get(&app).map(|a| a.view(app))
    }

    /// The containers masters hold now, and the cluster's capacity.
    pub fn masters_used(&self) -> Resources {
        self.masters_used
    }

    pub fn capacity(&self) -> Resources {
        self.capacity
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod policy_tests;
