//! The scheduler's passes: which application goes next (the policy's order), which node a
//! container goes to (locality, the classifier, packing or spreading), and the book of grants.

use super::queues::Turns;
use super::{
    App, AppId, Assignment, ClusterPolicy, ContainerId, MASTER_PRIORITY, Node, NodeId, Place,
    Placement, REFUSALS_SHOWN, Refusal, Resources, Scheduler,
};
use crate::classifier::{JobFeatures, Judgement, NodeContainers, Utility};
use crate::policy::{self, Due, Stage, Tier, edf_key};

/// An application's place in the policy's order: a key (fair share, or deadline) then
/// arrival, lower first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderKey(f64, u64);

impl OrderKey {
    /// Where `a` stands: FIFO by arrival; fair by memory used relative to its weighted share
    /// of the cluster's `cluster_mb`, then arrival; the deadline policies by deadline (none
    /// last), then arrival.
    fn of(policy: ClusterPolicy, a: &App, cluster_mb: u64, total_weight: f64) -> OrderKey {
        match policy {
            ClusterPolicy::Fifo => OrderKey(0.0, a.arrival),
            ClusterPolicy::Fair => {
                let share = cluster_mb as f64 * a.weight / total_weight.max(f64::MIN_POSITIVE);
                OrderKey(a.used.memory_mb as f64 / share.max(1.0), a.arrival)
            }
            ClusterPolicy::Edf | ClusterPolicy::MinEdf | ClusterPolicy::MinEdfWc => {
                let (due, arrival) = edf_key(a.deadline, a.arrival);
                let at = match due {
                    Due::At(d) => d.epoch_ms() as f64,
                    Due::Never => f64::INFINITY,
                };
                OrderKey(at, arrival)
            }
        }
    }
}

impl Eq for OrderKey {}

impl PartialOrd for OrderKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderKey {
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

impl Scheduler {
    /// Serves waiting applications until no waiting ask fits anywhere: masters first, then
    /// tasks below their quotas, then (MinEDF-WC) tasks on spare containers; each in the
    /// policy's turn, one container at a time.
    pub(super) fn schedule(&mut self, out: &mut Vec<Assignment>) {
        self.pass(Pass::Masters, out);
        self.pass(Pass::Tasks(Tier::Quota), out);
        if self.any_work_conserving() {
            self.pass(Pass::Tasks(Tier::Spare), out);
        }
    }

    /// Whether `a` has something `pass` serves.
    fn eligible(&self, pass: Pass, a: &App) -> bool {
        match pass {
            Pass::Masters => a.has_master_ask(),
            Pass::Tasks(t) => {
                a.waiting() > 0
                    && policy::tier(self.policy_of(a), a.quota.as_ref(), a.tasks) == Some(t)
            }
        }
    }

    /// One tier. Each queue's turn is a heap keyed by its policy: only the app just served
    /// changes its key, so a pass costs O((grants + waiting apps) · log apps), not
    /// O(waiting apps²) (a thousand apps queued behind the masters' cap made that minutes).
    /// Which queue's turn comes next is the queues' rule (`queues.rs`): the least used against
    /// its guarantee.
    fn pass(&mut self, pass: Pass, out: &mut Vec<Assignment>) {
        use std::cmp::Reverse;
        if self.room.is_empty() {
            return;
        }
        // Neither changes within a pass: each queue's total weight and its guaranteed memory
        // (fair shares are of the queue's share).
        let n = self.queue_state.len();
        let mut total_weight = vec![0.0; n];
        for a in self.apps.values() {
            total_weight[a.queue] += a.weight;
        }
        let shares: Vec<u64> = (0..n).map(|q| self.guarantee(q).memory_mb).collect();
        let mut turns: Vec<Turns<OrderKey>> = vec![Turns::new(); n];
        for (id, a) in &self.apps {
            if self.eligible(pass, a) {
                let key = self.order_key(pass, a, shares[a.queue], total_weight[a.queue]);
                turns[a.queue].push(Reverse((key, *id)));
            }
        }
        while let Some(q) = self.next_queue(&turns) {
            let Some(Reverse((_, app))) = turns[q].pop() else {
                break;
            };
            let headroom = self.apps.get(&app).and_then(|a| self.headroom(a));
            if let Some(a) = self.place_one(app, pass == Pass::Masters, headroom) {
                if pass == Pass::Tasks(Tier::Spare) {
                    self.counts.spare_allocations += 1;
                    if self.apps[&app].view(app).stage() == Stage::Map {
                        self.counts.spare_map_allocations += 1;
                    }
                }
                out.push(a);
                if let Some(next) = self.apps.get(&app).filter(|a| self.eligible(pass, a)) {
                    let key = self.order_key(pass, next, shares[q], total_weight[q]);
                    turns[q].push(Reverse((key, app)));
                }
                if self.room.is_empty() {
                    return;
                }
            }
        }
    }

    /// `a`'s place in this pass: the policy's, unless the overload classifier's utility
    /// replaces it for tasks by the paper's expected utility (eq. 3), the largest first.
    fn order_key(&self, pass: Pass, a: &App, cluster_mb: u64, total_weight: f64) -> OrderKey {
        let utility = self.overload.as_ref().map(|c| c.config().utility);
        match utility {
            Some(u) if u != Utility::Policy && pass != Pass::Masters => {
                let age_s = (self.now_ms - a.added_ms).max(0) as f64 / 1000.0;
                let eu = u.value(age_s, a.stage()) * self.best_p_good(a);
                OrderKey(-eu, a.arrival)
            }
            _ => OrderKey::of(self.policy_of(a), a, cluster_mb, total_weight),
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
    pub(super) fn judge(&self, a: &App, node: NodeId) -> Judgement {
        let Some(c) = &self.overload else {
            return Judgement::Unknown;
        };
        let job = a.job_features();
        c.judge(self.now_ms, node, job, self.node_containers(node, job))
    }

    /// What the rm knows of `node` for a task of `job`: the paper's CPU/IO balance and (yard's
    /// classifier) every container it has there now.
    fn node_containers(&self, node: NodeId, job: JobFeatures) -> NodeContainers {
        NodeContainers {
            same_type: self.same_type(node, job),
            containers: self
                .nodes
                .get(&node)
                .map_or(0, |n| n.containers.len() as u32),
        }
    }

    /// How full `n` is for [`Placement::Spread`]: containers per vcore.
    pub(super) fn fill(n: &Node) -> f64 {
        n.containers.len() as f64 / f64::from(n.capacity.vcores.max(1))
    }

    /// Task containers on `node` of jobs whose current type is `job`'s (untyped counts with
    /// untyped): the paper's per-node CPU/IO balance.
    pub(super) fn same_type(&self, node: NodeId, job: JobFeatures) -> u32 {
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
    /// node with room is refused, the app keeps a [`Refusal`] saying so. An ask larger than
    /// `headroom` (MB its queue and user may still take; `None`: no limit) is passed over.
    fn place_one(
        &mut self,
        app: AppId,
        masters: bool,
        headroom: Option<u64>,
    ) -> Option<Assignment> {
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
            if headroom.is_some_and(|h| size.memory_mb > h) {
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
            let here = self.node_containers(node, job);
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

    /// Whether one more master of `size` keeps masters within their share.
    pub(super) fn master_fits(&self, size: Resources) -> bool {
        if self.masters_used == Resources::default() {
            return true;
        }
        let total = self.capacity;
        let after = self.masters_used.plus(size);
        after.memory_mb as f64 <= self.master_share * total.memory_mb as f64
            && f64::from(after.vcores) <= self.master_share * f64::from(total.vcores)
    }

    /// Keeps `room` true for `node` after its use changed.
    pub(super) fn note_room(&mut self, node: NodeId) {
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

    pub(super) fn new_container(&mut self) -> ContainerId {
        self.next_container += 1;
        ContainerId(self.next_container - 1)
    }

    /// Books a container's room on its node and under its application. A node may end up
    /// over-full (a rejoining node reporting more than it has): nothing new fits there then.
    pub(super) fn book(
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
        self.queue_book(app, size, true);
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

    pub(super) fn free(&mut self, c: ContainerId) {
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
            self.queue_book(app, size, false);
            if let Some(a) = self.apps.get_mut(&app) {
                a.used = a.used.minus(size);
                a.containers.remove(&c);
                if !master && !preempted {
                    a.tasks = a.tasks.saturating_sub(1);
                }
            }
        }
    }
}
