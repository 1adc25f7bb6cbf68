//! The granted containers, in one book ([`crate::book`]): each freed once, whatever ends it
//! (its node's report, its node lost, a kill, a release, a preemption), its resource-seconds
//! and its end counted; what a node lists as running reconciled against the book; and the
//! book's invariants against the scheduler's holdings.

use std::collections::BTreeSet;

use yard_wire::protocol::{ContainerEnd, ContainerStatus};

use crate::book::ContainerMeta;
use yard_cluster::app::AppEvent;
use yard_cluster::scheduler::SchedEvent;

use super::{Cluster, NodeState, Stop, Usage};

impl Cluster {
    /// In debug builds (every test, and a debug daemon), a change that parts the books
    /// panics at once, naming what disagrees.
    pub(super) fn debug_check(&self) {
        #[cfg(debug_assertions)]
        if let Err(e) = self.check_books() {
            panic!("the rm's container books disagree: {e}");
        }
    }

    /// Container ends since the rm started, by how they ended, each container once: as its
    /// node reported it (also for one the rm stopped while it ran), LOST with its node,
    /// PREEMPTED, or KILLED when the rm ended one its node never reports (never started, or
    /// its node lost first); in [`ContainerEnd::ALL`]'s order.
    pub fn containers_ended(&self) -> impl Iterator<Item = (ContainerEnd, u64)> + '_ {
        ContainerEnd::ALL.into_iter().zip(self.ended)
    }

    /// Adds an ended container's resource-seconds to its application's.
    fn account(&mut self, meta: &ContainerMeta) {
        let secs = u64::try_from(self.now_ms.saturating_sub(meta.started_ms)).unwrap_or(0) / 1000;
        if let Some(app) = self.apps.get_mut(&meta.application_id) {
            app.yarn.memory_seconds = app
                .yarn
                .memory_seconds
                .saturating_add(meta.resource.memory_mb.saturating_mul(secs));
            app.yarn.vcore_seconds = app
                .yarn
                .vcore_seconds
                .saturating_add(u64::from(meta.resource.vcores).saturating_mul(secs));
            self.dirty_apps.insert(meta.application_id.clone());
        }
    }

    /// What `id` holds now and has held so far (its running containers counted up to `now_ms`).
    pub fn usage(&self, id: &str, now_ms: i64) -> Usage {
        let Some(app) = self.apps.get(id) else {
            return Usage::default();
        };
        let mut u = Usage {
            memory_seconds: app.yarn.memory_seconds,
            vcore_seconds: app.yarn.vcore_seconds,
            ..Usage::default()
        };
        for (_, meta) in self.book.of_app(id) {
            let secs = u64::try_from(now_ms.saturating_sub(meta.started_ms)).unwrap_or(0) / 1000;
            u.allocated_mb += meta.resource.memory_mb;
            u.allocated_vcores += u64::from(meta.resource.vcores);
            u.memory_seconds = u
                .memory_seconds
                .saturating_add(meta.resource.memory_mb.saturating_mul(secs));
            u.vcore_seconds = u
                .vcore_seconds
                .saturating_add(u64::from(meta.resource.vcores).saturating_mul(secs));
        }
        u
    }

    /// A live container's report.
    pub fn container(&self, id: &str) -> Option<&ContainerMeta> {
        self.book.get(id)
    }

    /// The live containers of `app`'s attempt `attempt`, by id.
    pub fn containers_of<'a>(
        &'a self,
        app: &'a str,
        attempt: u32,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.book
            .of_app(app)
            .filter(move |(_, m)| m.attempt == attempt)
    }

    /// How many containers `app` holds now (YARN's `runningContainers`).
    pub fn running_containers(&self, app: &str) -> usize {
        self.book.of_app(app).count()
    }

    /// The containers booked on `node`, by id (YARN's `numContainers` counts them).
    pub fn containers_on<'a>(
        &'a self,
        node: &str,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.book.on_node(node)
    }

    /// The one way a container leaves the book: freed once, whichever comes first — its node
    /// reports its end, its node is lost, or the rm ends it (a kill, the end of its attempt or
    /// application, a release, a preemption; `Stop::Yes` then tells its node to stop it). Its
    /// room goes back to the scheduler at once, its resource-seconds to its application, and
    /// its end is counted. `None`: it was freed before (or never booked).
    pub(super) fn free(
        &mut self,
        id: &str,
        end: ContainerEnd,
        stop: Stop,
    ) -> Option<ContainerMeta> {
        let meta = self.book.remove(id)?;
        self.account(&meta);
        let node_runs = self
            .nodes
            .get(&meta.node_id)
            .is_some_and(|n| n.state == NodeState::Running);
        if stop == Stop::Yes && node_runs {
            self.stop_orders
                .entry(meta.node_id.clone())
                .or_default()
                .push(id.to_owned());
        }
        if stop == Stop::Yes && node_runs && meta.running {
            let counted_as = (end == ContainerEnd::Preempted).then_some(end);
            self.stopping
                .insert(id.to_owned(), (meta.node_id.clone(), counted_as));
        } else {
            self.count_end(end);
        }
        // A master launch still waiting for its node's heartbeat is never carried out.
        self.launches.retain(|l| l.container.container_id != id);
        if let Some(&app) = self.app_ids.get(&meta.application_id) {
            self.schedule(SchedEvent::ContainerCompleted {
                app,
                container: meta.sched,
            });
        }
        Some(meta)
    }

    pub(super) fn count_end(&mut self, end: ContainerEnd) {
        if let Some(i) = ContainerEnd::ALL.iter().position(|e| *e == end) {
            self.ended[i] += 1;
        }
    }

    /// The rm ends a task container of a live application (a release, a preemption): freed,
    /// its node told to stop it, its master told in its next allocate reply.
    pub(super) fn end_task(&mut self, id: &str, end: ContainerEnd) {
        let Some(meta) = self.free(id, end, Stop::Yes) else {
            return;
        };
        if let Some(info) = self.apps.get_mut(&meta.application_id) {
            info.pending.completed.push(ContainerStatus {
                container_id: id.to_owned(),
                end,
                exit_code: None,
            });
        }
    }

    /// A container's process ended on its node (or the node was lost).
    pub(super) fn container_ended(&mut self, status: ContainerStatus) {
        // A master's end: its attempt's asks go before the room it leaves is offered, so
        // nothing is granted to an attempt that is gone.
        let master_of = self
            .book
            .get(&status.container_id)
            .filter(|m| {
                self.apps.get(&m.application_id).is_some_and(|a| {
                    !a.lifecycle.state.is_final()
                        && a.master.as_deref() == Some(status.container_id.as_str())
                })
            })
            .and_then(|m| self.app_ids.get(&m.application_id).copied());
        if let Some(app) = master_of {
            self.schedule(SchedEvent::AsksWithdrawn(app));
        }
        // Forgotten once ended: the rm's memory does not grow with every container ever run,
        // and a node that comes back listing it is told to stop it (see `reconcile`).
        let Some(meta) = self.free(&status.container_id, status.end, Stop::No) else {
            return;
        };
        let app_id = meta.application_id;
        let Some(info) = self.apps.get_mut(&app_id) else {
            return;
        };
        if info.master.as_deref() == Some(status.container_id.as_str()) {
            info.master = None;
            // A master that ended without unregistering failed its attempt.
            if !info.lifecycle.state.is_final() {
                let _ = self.transition(&app_id, AppEvent::MasterFailed);
            }
        } else {
            info.pending.completed.push(status);
        }
    }

    /// Books a container the scheduler placed. The scheduler numbers its containers upwards
    /// and the book refuses an id twice, so this cannot fail unless the books have parted —
    /// a bug, loud in debug builds and logged in release ones.
    pub(super) fn book_container(&mut self, id: String, meta: ContainerMeta) {
        if let Err(e) = self.book.insert(id, meta) {
            debug_assert!(false, "{e}");
            tracing::error!(error = %e, "the container book refused a grant");
        }
    }

    /// What a node lists as running, against the book: a booked container it lists is
    /// running; one it listed before and lists no more, with no end reported, is gone (LOST);
    /// one it runs that the book does not hold (freed meanwhile: its attempt or application
    /// ended, or it was released, before its master started it) is told to stop.
    pub(super) fn reconcile(&mut self, node: &str, running: &[String]) {
        self.lose_unlisted(node, running);
        for c in running {
            match self.book.get(c) {
                Some(m) if m.node_id == node => self.book.mark_running(c),
                _ => {
                    let orders = self.stop_orders.entry(node.to_owned()).or_default();
                    if !orders.contains(c) {
                        orders.push(c.clone());
                    }
                }
            }
        }
    }

    /// Containers `node` ran (it listed them before) and no longer lists, with no end
    /// reported: they are gone, as LOST.
    pub(super) fn lose_unlisted(&mut self, node: &str, running: &[String]) {
        let listed: BTreeSet<&str> = running.iter().map(String::as_str).collect();
        let gone: Vec<String> = self
            .book
            .on_node(node)
            .filter(|(c, m)| m.running && !listed.contains(c.as_str()))
            .map(|(c, _)| c.clone())
            .collect();
        for c in gone {
            tracing::warn!(container = %c, %node, "its node no longer runs it and reported no end: lost");
            self.container_ended(ContainerStatus {
                container_id: c,
                end: ContainerEnd::Lost,
                exit_code: None,
            });
        }
    }

    /// The book's invariants, checked after every change in debug builds (and by tests): its
    /// indexes agree; it holds exactly what the scheduler holds, each for the same application
    /// and node; no running node holds more than its capacity; every booked application and
    /// node is known.
    pub fn check_books(&self) -> Result<(), String> {
        self.book.check()?;
        let mut held = 0;
        for (c, app, node, size) in self.scheduler.holdings() {
            held += 1;
            let id = self.book.id_of(c).ok_or_else(|| {
                format!("the scheduler holds {c:?} for {app:?}, the book does not")
            })?;
            let m = &self.book.get(id).expect("indexed");
            let (owner, on) = (
                self.app_ids.get(&m.application_id),
                self.node_index.get(&m.node_id),
            );
            if owner != Some(&app) || on != Some(&node) {
                return Err(format!(
                    "{id} is booked for {} on {}, the scheduler has {app:?} on {node:?}",
                    m.application_id, m.node_id
                ));
            }
            if (size.memory_mb, size.vcores) != (m.resource.memory_mb, m.resource.vcores) {
                return Err(format!(
                    "{id} is booked as {:?}, the scheduler has {size:?}",
                    m.resource
                ));
            }
        }
        if held != self.book.len() {
            return Err(format!(
                "the book holds {} containers, the scheduler {held}",
                self.book.len()
            ));
        }
        for n in self.nodes.values() {
            let booked = self.book.on_node(&n.node_id);
            let (mut mb, mut vcores, mut count) = (0u64, 0u64, 0usize);
            for (_, m) in booked {
                mb += m.resource.memory_mb;
                vcores += u64::from(m.resource.vcores);
                count += 1;
            }
            if n.state == NodeState::Lost && count > 0 {
                return Err(format!(
                    "lost node {} still holds {count} containers",
                    n.node_id
                ));
            }
            if mb > n.capability.memory_mb || vcores > u64::from(n.capability.vcores) {
                return Err(format!(
                    "node {} holds {mb} MB and {vcores} vcores, beyond its {:?}",
                    n.node_id, n.capability
                ));
            }
        }
        for (id, m) in self.book.iter() {
            if !self.apps.contains_key(&m.application_id) || !self.nodes.contains_key(&m.node_id) {
                return Err(format!(
                    "{id} is booked for an unknown application or node: {m:?}"
                ));
            }
        }
        Ok(())
    }
}
