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
//! Which application goes first, and how far, is the cluster policy ([`ClusterPolicy`]: `fifo`,
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
use yard_wire::deadline::Deadline;

use crate::aria::Target;
use crate::classifier::{Classifier, ClassifierConfig, JobFeatures, NodeLoad};
use crate::ids::Bound;
/// The ids its events and assignments carry (defined in `ids`, below every policy module).
pub use crate::ids::{AppId, ContainerId, NodeId, RackId};
pub use crate::policy::ClusterPolicy;
use crate::policy::{self, JobModel, JobQuota, JobView, SpareCounts, Stage};
use crate::queues::Queues;

mod placing;
mod queues;
mod quota;

pub use queues::QueueUsage;

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
    /// An application arrives in `queue` (by name; see [`Queues::index_of`]) for `user` (who
    /// counts against the queue's user limit).
    AppAdded {
        app: AppId,
        queue: String,
        user: String,
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
    /// When the application's answer is due (`None`: no deadline; the simulator's clock counts
    /// its own epoch from 0).
    Deadline {
        app: AppId,
        deadline: Option<Deadline>,
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
pub(crate) const REFUSALS_SHOWN: usize = 5;

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
    /// Its queue's index in the scheduler's [`Queues`].
    queue: usize,
    user: String,
    arrival: u64,
    weight: f64,
    used: Resources,
    asks: BTreeMap<(u32, Resources), AskSet>,
    containers: BTreeSet<ContainerId>,
    /// Task containers held (not masters', not being preempted).
    tasks: u32,
    deadline: Option<Deadline>,
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
            deadline: self.deadline,
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

/// The cluster scheduler. See the module documentation.
pub struct Scheduler {
    /// The rm's policy: the one queue's when there is no queue file.
    policy: ClusterPolicy,
    /// The capacity queues (one, `default`, without a queue file) and what each holds.
    queues: Queues,
    queue_state: Vec<queues::QueueState>,
    /// What each (queue, user) holds: the user limit's book.
    user_used: BTreeMap<(usize, String), Resources>,
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
    pub fn new(policy: ClusterPolicy) -> Self {
        Scheduler {
            policy,
            queues: Queues::single(policy),
            queue_state: vec![queues::QueueState::default()],
            user_used: BTreeMap::new(),
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

    pub fn policy(&self) -> ClusterPolicy {
        self.policy
    }

    pub fn master_share(&self) -> f64 {
        self.master_share
    }

    /// MinEDF-WC's spare allocations and kills so far.
    pub fn spare_counts(&self) -> SpareCounts {
        self.counts
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
            SchedEvent::AppAdded {
                app,
                queue,
                user,
                weight,
            } => {
                self.arrivals += 1;
                let arrival = self.arrivals;
                let queue = self.queues.index_of(&queue);
                self.apps.entry(app).or_insert(App {
                    queue,
                    user,
                    arrival,
                    weight: if weight > 0.0 { weight } else { 1.0 },
                    used: Resources::default(),
                    asks: BTreeMap::new(),
                    containers: BTreeSet::new(),
                    tasks: 0,
                    deadline: None,
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
                // Freed while the app is known, so its queue and user are credited.
                let held = self.apps.get(&app).map(|a| a.containers.clone());
                for c in held.into_iter().flatten() {
                    self.free(c);
                }
                self.apps.remove(&app);
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
            SchedEvent::Deadline { app, deadline } => {
                if let Some(a) = self.apps.get_mut(&app) {
                    a.deadline = deadline;
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
        if self.any_work_conserving() {
            if let Some(app) = asked.filter(|a| self.app_policy(*a).work_conserving()) {
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
        self.restore_guarantees(out);
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

#[cfg(test)]
mod queue_tests;
