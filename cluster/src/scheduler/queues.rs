//! The scheduler's capacity queues ([`crate::queues`] has the configuration): what each queue
//! and each of its users holds, how much more they may take (`maximum-capacity`,
//! `user-limit-factor`), which queue a pass serves next, and preemption across queues, only to
//! give a queue back its guarantee.
//!
//! As YARN's CapacityScheduler (with its DefaultResourceCalculator, so shares are of memory):
//! a pass serves the queue least used against its guarantee first (`used / capacity`, as a
//! parent orders its children), and within a queue its own policy orders its applications; a
//! container never takes a queue past its maximum capacity, nor a user past `user-limit-factor`
//! times the queue's capacity. A queue below its capacity whose asks find no room for
//! [`Queues::max_wait_before_kill_ms`] takes containers back from queues above theirs (as
//! YARN's ProportionalCapacityPreemptionPolicy): from the queue furthest above its guarantee
//! first, its newest task containers first (the least work lost), never a master's, and never
//! so many that the giving queue falls below its own guarantee.
//!
//! With one queue at 100 % (no queue file) none of this changes a decision: every limit is the
//! cluster's, the one queue is always next, and nothing is preempted across queues.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{
    App, AppId, Assignment, ClusterPolicy, ContainerId, MASTER_PRIORITY, Resources, Scheduler,
};
use crate::queues::Queues;

/// What the scheduler keeps per queue.
#[derive(Debug, Clone, Default)]
pub(super) struct QueueState {
    /// Every container its applications hold (masters', and those being preempted, too).
    pub used: Resources,
    /// Since when it has been below its guarantee with asks that no room is left for.
    pub starved_since: Option<i64>,
    /// Containers taken back from it for other queues' guarantees, so far.
    pub preempted: u64,
}

/// One queue as the scheduler sees it now, for the rm's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueUsage {
    pub used: Resources,
    /// Containers taken back from it for other queues' guarantees, so far.
    pub preempted: u64,
    /// Since when it has waited below its guarantee for room (ms since the epoch).
    pub starved_since_ms: Option<i64>,
}

/// A heap of one queue's turns in a pass, lowest key first.
pub(super) type Turns<K> = BinaryHeap<Reverse<(K, AppId)>>;

impl Scheduler {
    /// Runs these queues instead of the one `default` queue (before any application arrives).
    pub fn with_queues(mut self, queues: Queues) -> Self {
        self.queue_state = vec![QueueState::default(); queues.len()];
        self.queues = queues;
        self
    }

    pub fn queues(&self) -> &Queues {
        &self.queues
    }

    /// Each queue's use now, in the order of [`Scheduler::queues`].
    pub fn queue_usage(&self) -> Vec<QueueUsage> {
        self.queue_state
            .iter()
            .map(|s| QueueUsage {
                used: s.used,
                preempted: s.preempted,
                starved_since_ms: s.starved_since,
            })
            .collect()
    }

    /// The policy of `a`'s queue.
    pub(super) fn policy_of(&self, a: &App) -> ClusterPolicy {
        self.queues.all()[a.queue].policy
    }

    pub(super) fn app_policy(&self, app: AppId) -> ClusterPolicy {
        self.apps
            .get(&app)
            .map_or(self.policy, |a| self.policy_of(a))
    }

    pub(super) fn any_work_conserving(&self) -> bool {
        self.queues.all().iter().any(|q| q.policy.work_conserving())
    }

    pub(super) fn any_quota(&self) -> bool {
        self.queues.all().iter().any(|q| q.policy.uses_quota())
    }

    /// `pct` percent of the cluster (all of it, exactly, at 100).
    pub(super) fn share(&self, pct: f64) -> Resources {
        if pct >= 100.0 {
            return self.capacity;
        }
        Resources::new(
            (self.capacity.memory_mb as f64 * pct / 100.0) as u64,
            (f64::from(self.capacity.vcores) * pct / 100.0) as u32,
        )
    }

    /// Queue `q`'s guaranteed share of the cluster.
    pub(super) fn guarantee(&self, q: usize) -> Resources {
        self.share(self.queues.all()[q].capacity)
    }

    /// Containers of `size` queue `q`'s guarantee holds: the cap of its applications' quotas
    /// (each queue's policy runs over its own share).
    pub(super) fn queue_slots(&self, q: usize, size: Option<Resources>) -> u32 {
        self.guarantee(q)
            .holds(size.unwrap_or(Resources::new(1, 1)))
    }

    /// How much more memory `a` may take, MB, by its queue's maximum capacity and its user's
    /// limit; `None`: nothing short of the cluster limits it.
    pub(super) fn headroom(&self, a: &App) -> Option<u64> {
        let q = &self.queues.all()[a.queue];
        let mut room = None;
        if q.maximum_capacity < 100.0 {
            let used = self.queue_state[a.queue].used.memory_mb;
            room = Some(
                self.share(q.maximum_capacity)
                    .memory_mb
                    .saturating_sub(used),
            );
        }
        if q.user_limit() < 100.0 {
            let used = self
                .user_used
                .get(&(a.queue, a.user.clone()))
                .map_or(0, |r| r.memory_mb);
            let user = self.share(q.user_limit()).memory_mb.saturating_sub(used);
            room = Some(room.map_or(user, |r: u64| r.min(user)));
        }
        room
    }

    /// Books (`add`) or frees a container of `size` against `app`'s queue and user.
    pub(super) fn queue_book(&mut self, app: AppId, size: Resources, add: bool) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let q = a.queue;
        let s = &mut self.queue_state[q];
        s.used = if add {
            s.used.plus(size)
        } else {
            s.used.minus(size)
        };
        if self.queues.configured() {
            let key = (q, a.user.clone());
            let u = self.user_used.entry(key.clone()).or_default();
            *u = if add { u.plus(size) } else { u.minus(size) };
            if *u == Resources::default() {
                self.user_used.remove(&key);
            }
        }
    }

    /// The queue a pass serves next, of those with turns left: the least used against its
    /// guarantee (a queue guaranteed nothing last), the first in the file among equals.
    pub(super) fn next_queue<K: Ord>(&self, turns: &[Turns<K>]) -> Option<usize> {
        if turns.len() == 1 {
            return (!turns[0].is_empty()).then_some(0);
        }
        let ratio = |q: usize| {
            let g = self.guarantee(q).memory_mb;
            if g == 0 {
                f64::INFINITY
            } else {
                self.queue_state[q].used.memory_mb as f64 / g as f64
            }
        };
        (0..turns.len())
            .filter(|&q| !turns[q].is_empty())
            .min_by(|&x, &y| ratio(x).total_cmp(&ratio(y)).then(x.cmp(&y)))
    }

    /// Memory queue `q`'s applications ask for and may still take (each within its headroom;
    /// a master only if the masters' share has room for it: room taken back for one that
    /// cannot start would only go back where it came from).
    fn pending_mb(&self, q: usize) -> u64 {
        self.apps
            .values()
            .filter(|a| a.queue == q)
            .map(|a| {
                let asked = a
                    .asks
                    .iter()
                    .filter(|((p, size), _)| *p != MASTER_PRIORITY || self.master_fits(*size))
                    .map(|((_, size), set)| u64::from(set.any).saturating_mul(size.memory_mb))
                    .fold(0u64, u64::saturating_add);
                asked.min(self.headroom(a).unwrap_or(u64::MAX))
            })
            .fold(0, u64::saturating_add)
    }

    /// Preemption across queues, only to restore guarantees: a queue below its capacity with
    /// asks that the free room (and what is already being taken back) cannot hold has waited
    /// since `starved_since`; once that is [`Queues::max_wait_before_kill_ms`] ago, what it
    /// lacks is taken back from queues above their capacities.
    pub(super) fn restore_guarantees(&mut self, out: &mut Vec<Assignment>) {
        let n = self.queue_state.len();
        if n < 2 {
            return;
        }
        let now = self.now_ms;
        let wait = i64::try_from(self.queues.max_wait_before_kill_ms()).unwrap_or(i64::MAX);
        let free: u64 = self
            .nodes
            .values()
            .map(|n| n.capacity.minus(n.used).memory_mb)
            .sum();
        let coming: u64 = self
            .preempting
            .iter()
            .filter_map(|c| self.containers.get(c))
            .map(|(_, _, size)| size.memory_mb)
            .sum();
        let mut room = free.saturating_add(coming);
        for q in 0..n {
            let short = self
                .guarantee(q)
                .memory_mb
                .saturating_sub(self.queue_state[q].used.memory_mb)
                .min(self.pending_mb(q));
            let need = short.saturating_sub(room);
            room = room.saturating_sub(short);
            if need == 0 {
                self.queue_state[q].starved_since = None;
                continue;
            }
            let since = *self.queue_state[q].starved_since.get_or_insert(now);
            if now.saturating_sub(since) >= wait {
                self.preempt_for(q, need, out);
                // At most one round a wait: should the room go elsewhere (asks that fit no
                // freed node), containers are not taken back event after event.
                self.queue_state[q].starved_since = Some(now);
            }
        }
    }

    /// Takes back about `need` MB for queue `q`: from the queue furthest above its guarantee
    /// (counting what it already gives back), its newest task container that keeps it at or
    /// above its guarantee; until `need` is met or no queue can give.
    fn preempt_for(&mut self, q: usize, need: u64, out: &mut Vec<Assignment>) {
        let n = self.queue_state.len();
        let mut giving = vec![0u64; n];
        for (app, _, size) in self
            .preempting
            .iter()
            .filter_map(|c| self.containers.get(c))
        {
            if let Some(a) = self.apps.get(app) {
                giving[a.queue] += size.memory_mb;
            }
        }
        let mut need = need;
        while need > 0 {
            let excess = |v: usize| {
                self.queue_state[v]
                    .used
                    .memory_mb
                    .saturating_sub(giving[v])
                    .saturating_sub(self.guarantee(v).memory_mb)
            };
            let mut donors: Vec<usize> = (0..n).filter(|&v| v != q && excess(v) > 0).collect();
            donors.sort_by_key(|&v| (Reverse(excess(v)), v));
            let victim = donors.iter().find_map(|&v| {
                self.containers
                    .iter()
                    .rev()
                    .find(|&(&c, (app, _, size))| {
                        !self.masters.contains(&c)
                            && !self.preempting.contains(&c)
                            && size.memory_mb <= excess(v)
                            && self.apps.get(app).is_some_and(|a| a.queue == v)
                    })
                    .map(|(c, (_, _, size))| (v, *c, size.memory_mb))
            });
            let Some((v, c, mb)) = victim else {
                return;
            };
            self.take_back(c, false, out);
            self.queue_state[v].preempted += 1;
            giving[v] += mb;
            need = need.saturating_sub(mb);
        }
    }

    /// Whether container `c` belongs to queue `q`.
    pub(super) fn in_queue(&self, c: &ContainerId, q: usize) -> bool {
        self.containers
            .get(c)
            .and_then(|(app, _, _)| self.apps.get(app))
            .is_some_and(|a| a.queue == q)
    }
}
