//! The allocate protocol over the [`Scheduler`](yard_cluster::scheduler::Scheduler): a master's asks
//! and releases in, the scheduler's assignments carried out — grants signed with their node's
//! container-token key, a master's grant held as a [`MasterLaunch`] until its node's next
//! heartbeat reply starts it, preemptions, recovered containers.

use yard_wire::protocol::{
    AllocateReply, AllocateRequest, Allocated, ContainerEnd, ContainerStatus, Resource,
    container_id,
};
use yard_wire::token::mint;

use crate::book::ContainerMeta;
use yard_cluster::app::YarnApplicationState;
use yard_cluster::scheduler::{self, AppId, Ask, Assignment, Place, Resources, SchedEvent};

use super::apps::check_progress;
use super::{AM_PRIORITY, AttemptInfo, Cluster, ClusterError};

/// A master whose container is granted (its token signed), waiting for its node: the node's
/// next heartbeat reply starts it ([`Cluster::heartbeat`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MasterLaunch {
    pub application_id: String,
    pub attempt: u32,
    pub container: Allocated,
}

impl Cluster {
    /// Asks the scheduler for an application master's container.
    pub(super) fn ask_master(&mut self, app: AppId) {
        let r = self
            .app_index
            .get(&app)
            .and_then(|id| self.apps.get(id))
            .filter(|a| a.yarn.am_memory_mb > 0 && a.yarn.am_vcores > 0)
            .map_or(self.settings.am_resource, |a| Resource {
                memory_mb: a.yarn.am_memory_mb,
                vcores: a.yarn.am_vcores,
            });
        let ask = Ask {
            priority: AM_PRIORITY,
            place: Place::Any,
            size: Resources::new(r.memory_mb, r.vcores),
            count: 1,
            relax_locality: true,
        };
        self.schedule(SchedEvent::Asks {
            app,
            asks: vec![ask],
        });
    }

    /// A running master's allocate call: its asks replace the previous ones, its releases go;
    /// the reply carries what was granted and what completed since its last call.
    pub fn allocate(
        &mut self,
        now_ms: i64,
        req: AllocateRequest,
    ) -> Result<AllocateReply, ClusterError> {
        self.now_ms = now_ms;
        let app_id = req.application_id.clone();
        let info = self
            .apps
            .get(&app_id)
            .ok_or_else(|| ClusterError::UnknownApp(app_id.clone()))?;
        if info.lifecycle.state != YarnApplicationState::Running {
            return Err(ClusterError::NotRunning(app_id));
        }
        if let Some(p) = &req.job {
            check_progress(p).map_err(ClusterError::BadProgress)?;
        }
        if let Some(info) = self.apps.get_mut(&app_id) {
            info.master_seen_ms = now_ms;
        }
        let app = self.app_of(&app_id);
        let mut asks = Vec::with_capacity(req.asks.len());
        for (index, r) in req.asks.iter().enumerate() {
            let bad = |problem: String| ClusterError::BadAsk { index, problem };
            if r.priority == AM_PRIORITY {
                return Err(bad(format!(
                    "priority {AM_PRIORITY} is the master's own; ask at 1 or more"
                )));
            }
            if r.capability.memory_mb == 0 || r.capability.vcores == 0 {
                return Err(bad(
                    "a container needs some memory and at least one vcore".into()
                ));
            }
            let place = match r.resource_name.as_str() {
                "*" => Place::Any,
                name => match (self.node_index.get(name), self.racks.get(name)) {
                    (Some(n), _) => Place::Node(*n),
                    (None, Some(r)) => Place::Rack(*r),
                    // A name the rm does not know (yet): a node that has not registered since
                    // an rm restart, or one that left. YARN keeps such asks; asks here are
                    // absolute and sent again with every allocate, so skipping it now loses
                    // nothing once the node joins. Refusing it failed masters during a restart.
                    (None, None) => continue,
                },
            };
            let size = Resources::new(r.capability.memory_mb, r.capability.vcores);
            asks.push(Ask {
                priority: r.priority,
                place,
                size,
                count: r.num_containers,
                relax_locality: r.relax_locality,
            });
        }
        for release in &req.releases {
            if self
                .book
                .get(release)
                .is_some_and(|m| m.application_id == app_id)
            {
                // Freed now, and told as KILLED in this very reply (YARN reports a released
                // container as completed too).
                self.end_task(release, ContainerEnd::Killed);
            }
        }
        if let Some(t) = req.job_type
            && let Some(info) = self.apps.get_mut(&app_id)
            && info.job_type != Some(t)
        {
            info.job_type = Some(t);
            self.schedule(SchedEvent::JobType {
                app,
                map: t.map,
                reduce: t.reduce,
            });
        }
        let mut done = None;
        if let Some(info) = self.apps.get_mut(&app_id) {
            info.progress = req.progress.clamp(0.0, 1.0);
            if let Some(p) = req.job.clone() {
                info.heard(p, now_ms);
            }
            done = info.model.map(|m| match req.tasks {
                // A yard master's own counts: maps it will not run (Dart closed its map phase
                // at k) are as good as done for the quota.
                Some(t) => (
                    (t.maps_done + m.maps.saturating_sub(t.maps_to_run)).min(m.maps),
                    t.reduces_done.min(m.reduces),
                ),
                // Else progress as yard's masters report it: the maps done over the maps.
                None => ((info.progress * f64::from(m.maps)).floor() as u32, 0),
            });
        }
        self.dirty_apps.insert(app_id.clone());
        if let Some((maps_done, reduces_done)) = done {
            self.schedule(SchedEvent::Progress {
                app,
                maps_done,
                reduces_done,
            });
        }
        self.schedule(SchedEvent::Asks { app, asks });
        self.debug_check();
        let info = self.apps.get_mut(&app_id).expect("checked above");
        Ok(AllocateReply {
            deadline: info.deadline,
            ..std::mem::take(&mut info.pending)
        })
    }

    /// Takes the master launches still waiting for their nodes' heartbeats, so that none of
    /// them starts: a hook for tests that play the master themselves. The daemon never calls
    /// it; masters start through their node's heartbeat reply ([`Cluster::heartbeat`]).
    pub fn take_master_launches(&mut self) -> Vec<MasterLaunch> {
        std::mem::take(&mut self.launches)
    }

    /// Feeds the scheduler and carries out its assignments.
    pub(super) fn schedule(&mut self, event: SchedEvent) {
        let mut out = Vec::new();
        self.scheduler.handle_at(self.now_ms, event, &mut out);
        for a in out {
            match a {
                Assignment::Allocate {
                    app,
                    container,
                    node,
                    size,
                    priority,
                    ..
                } => self.granted(app, container, node, size, priority),
                Assignment::Recovered { container, node } => {
                    let Some((id, app, resource)) = self.recovering.pop_front() else {
                        continue;
                    };
                    match container {
                        Some(c) => self.recovered(c, id, app, node, resource),
                        None => self.stop_on(node, id),
                    }
                }
                Assignment::Lost { container, .. } => {
                    if let Some(id) = self.book.id_of(container).cloned() {
                        self.container_ended(ContainerStatus {
                            container_id: id,
                            end: ContainerEnd::Lost,
                            exit_code: None,
                        });
                    }
                }
                Assignment::Preempt { container, .. } => self.preempt(container),
                Assignment::Quota { app, quota } => {
                    if let Some(info) = self.app_index.get(&app).and_then(|a| self.apps.get_mut(a))
                    {
                        info.quota = Some(quota);
                    }
                }
            }
        }
    }

    /// A task container taken back — above its job's quota (MinEDF-WC), or from a queue above
    /// its capacity for one below its own: freed at once (YARN's scheduler, too, frees a
    /// container it kills and lets the node catch up), its node told to stop it and its master
    /// that it was preempted (the attempt in it is lost, and runs again).
    fn preempt(&mut self, container: scheduler::ContainerId) {
        let Some(id) = self.book.id_of(container).cloned() else {
            return;
        };
        tracing::info!(container = %id, "preempted: above its quota or its queue's capacity");
        self.end_task(&id, ContainerEnd::Preempted);
    }

    fn granted(
        &mut self,
        app: AppId,
        container: scheduler::ContainerId,
        node: scheduler::NodeId,
        size: Resources,
        priority: u32,
    ) {
        let Some(app_id) = self.app_index.get(&app).cloned() else {
            return;
        };
        let node_id = self.node_names[&node].clone();
        let Some(info) = self.apps.get_mut(&app_id) else {
            return;
        };
        let attempt = info.lifecycle.attempts;
        let id = container_id(self.restart_epoch, &app_id, attempt, container.0);
        let resource = Resource {
            memory_mb: size.memory_mb,
            vcores: size.vcores,
        };
        let key = self
            .node_keys
            .entry(node_id.clone())
            .or_insert_with(|| self.secret.container_key(&node_id));
        let token = mint(
            key,
            &id,
            &node_id,
            size.memory_mb,
            size.vcores,
            self.now_ms.saturating_add(self.settings.token_ttl_ms),
        );
        let allocated = Allocated {
            container_id: id.clone(),
            node_id: node_id.clone(),
            node_http_address: format!("http://{node_id}"),
            resource,
            priority,
            token,
        };
        if priority == AM_PRIORITY {
            self.dirty_apps.insert(app_id.clone());
            info.attempts.push(AttemptInfo {
                attempt,
                container_id: id.clone(),
                node_id: node_id.clone(),
                started_ms: self.now_ms,
            });
            info.master = Some(id.clone());
            self.launches.push(MasterLaunch {
                application_id: app_id.clone(),
                attempt,
                container: allocated,
            });
        } else {
            info.pending.allocated.push(allocated);
        }
        self.book_container(
            id,
            ContainerMeta {
                application_id: app_id,
                attempt,
                node_id,
                resource,
                priority,
                started_ms: self.now_ms,
                sched: container,
                running: false,
            },
        );
    }
}
