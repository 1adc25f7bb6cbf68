//! The scheduler's quotas and what it takes back: each application's quota recomputed under the
//! policy, MinEDF-WC's reclamation of spare containers and the preemptions that carry it out.

use super::{AppId, Assignment, ContainerId, MASTER_PRIORITY, Node, Resources, Scheduler};
use crate::policy::{self, ClusterState, Due, JobView, QuotaBasis, Reclaim, Stage, edf_key};

impl Scheduler {
    pub(super) fn requota_all(&mut self, out: &mut Vec<Assignment>) {
        if self.any_quota() {
            let apps: Vec<AppId> = self.apps.keys().copied().collect();
            for app in apps {
                self.requota(app, out);
            }
        }
    }

    /// Recomputes `app`'s quota at the current time; says so when it changed.
    pub(super) fn requota(&mut self, app: AppId, out: &mut Vec<Assignment>) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let kind = self.policy_of(a);
        if !kind.uses_quota() {
            return;
        }
        // Each queue's policy sizes quotas within the queue's guarantee.
        let q = policy::quota_of(
            kind,
            &a.view(app),
            self.now_ms,
            self.queue_slots(a.queue, a.task_size),
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
    pub(super) fn arrival_check(&mut self, app: AppId, out: &mut Vec<Assignment>) {
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
    pub(super) fn reclaim_for(&mut self, app: AppId, predict: bool, out: &mut Vec<Assignment>) {
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
        // Alg. 1 runs within the queue: its jobs only, its room only (up to its maximum).
        let a = &self.apps[&app];
        let queue = a.queue;
        let headroom = self.headroom(a);
        let kind = self.policy_of(a);
        let views: Vec<JobView> = self
            .apps
            .iter()
            .filter(|(id, a)| **id != app && a.queue == queue)
            .map(|(id, a)| a.view(*id))
            .collect();
        let others: Vec<&JobView> = views.iter().collect();
        // Free now (as far as the queue may grow), plus what is already being taken back.
        let free_now = self
            .nodes
            .values()
            .map(|n| n.capacity.minus(n.used).holds(size))
            .fold(0u32, u32::saturating_add);
        let free_now = match headroom {
            Some(h) => free_now.min(Resources::new(h, u32::MAX).holds(size)),
            None => free_now,
        };
        let taking_back = if self.queue_state.len() == 1 {
            self.preempting.len()
        } else {
            self.preempting
                .iter()
                .filter(|c| self.in_queue(c, queue))
                .count()
        };
        let free = free_now.saturating_add(taking_back as u32);
        let at = ClusterState {
            kind,
            free,
            now_ms: self.now_ms,
            slots: self.queue_slots(queue, Some(size)),
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
            self.take_back(c, true, out);
        }
    }

    /// Preempts one task container: it no longer counts as its job's, and stays booked on its
    /// node until it has ended. `spare`: MinEDF-WC taking back a spare container (counted in
    /// [`SpareCounts`](crate::policy::SpareCounts)); else a queue's guarantee restored.
    pub(super) fn take_back(&mut self, c: ContainerId, spare: bool, out: &mut Vec<Assignment>) {
        let Some(&(app, _, _)) = self.containers.get(&c) else {
            return;
        };
        if self.masters.contains(&c) || !self.preempting.insert(c) {
            return;
        }
        if let Some(a) = self.apps.get_mut(&app) {
            a.tasks = a.tasks.saturating_sub(1);
        }
        if spare {
            self.counts.spare_kills += 1;
            if self
                .apps
                .get(&app)
                .is_some_and(|a| a.view(app).stage() == Stage::Map)
            {
                self.counts.spare_map_kills += 1;
            }
        }
        out.push(Assignment::Preempt { app, container: c });
    }

    /// MinEDF-WC, for masters [INF; Alg. 1 knows no masters]: a job with a deadline whose
    /// master finds no room (within the masters' share) takes one spare container — a task
    /// above its job's quota, of the latest deadline first — on a node where that makes room;
    /// unless room is already being made. Without this, spare containers lent to other jobs
    /// would keep a deadline job from starting at all, since its tasks' reclamation needs its
    /// master to ask for them.
    pub(super) fn reclaim_for_masters(&mut self, out: &mut Vec<Assignment>) {
        let mut waiting: Vec<((Due, u64), AppId, Resources)> = self
            .apps
            .iter()
            .filter(|(_, a)| a.deadline.is_some() && self.policy_of(a).work_conserving())
            .filter_map(|(id, a)| {
                let (&(_, size), _) = a.asks.iter().find(|((p, _), _)| *p == MASTER_PRIORITY)?;
                Some((edf_key(a.deadline, a.arrival), *id, size))
            })
            .collect();
        waiting.sort();
        for (_, app, size) in waiting {
            let queue = self.apps[&app].queue;
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
            // Spare containers of its queue, latest deadline first, each job's newest first.
            let mut lenders: Vec<((Due, u64), AppId)> = self
                .apps
                .iter()
                .filter(|(id, a)| a.queue == queue && a.view(**id).extra() > 0)
                .map(|(id, a)| (edf_key(a.deadline, a.arrival), *id))
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
                self.take_back(c, true, out);
            }
        }
    }
}
