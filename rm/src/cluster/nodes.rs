//! Nodes: registration (a rejoining node's running containers taken back or stopped), the
//! heartbeat (load in, ended containers in, containers to stop and masters to start out),
//! expiry (silent nodes LOST, silent masters failed, lifetimes and unstarted grants ended), and
//! LOST nodes forgotten after their retention.

use yard_wire::auth::Principal;
use yard_wire::protocol::{
    ContainerEnd, ContainerStatus, Dataset, HeartbeatReply, NodeHeartbeat, RegisterNode, Resource,
    StartContainer, application_of, epoch_of,
};
use yard_wire::telemetry::NodeTelemetry;

use yard_cluster::app::{AppEvent, YarnApplicationState};
use yard_cluster::scheduler::{self, RackId, Resources, SchedEvent};

use super::{Cluster, MasterLaunch, node_load};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Running,
    Lost,
}

/// What the rm knows of a node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    pub node_id: String,
    pub rack: String,
    pub capability: Resource,
    pub state: NodeState,
    pub last_heartbeat_ms: i64,
    /// The node's last load sample (default until its first heartbeat). Kept in the store, so
    /// after an rm restart it is the last known load until the node's next heartbeat.
    pub telemetry: NodeTelemetry,
    /// When the rm received `telemetry`, ms since the epoch (`None`: no sample yet).
    pub telemetry_ms: Option<i64>,
    /// When the rm marked it LOST (`None` while it runs). Not stored: after a restart, a node
    /// stored LOST was lost at its last heartbeat plus the expiry, one stored RUNNING at the
    /// restart.
    pub lost_ms: Option<i64>,
}

impl Cluster {
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }

    pub fn node(&self, node_id: &str) -> Option<&NodeInfo> {
        self.nodes.get(node_id)
    }

    /// A node joins (or rejoins after being lost or after an rm restart).
    pub fn register_node(&mut self, now_ms: i64, r: RegisterNode) {
        self.now_ms = now_ms;
        let next_rack = RackId(self.racks.len() as u32);
        let rack = *self.racks.entry(r.rack.clone()).or_insert(next_rack);
        let next_node = scheduler::NodeId(self.node_index.len() as u32);
        let id = *self
            .node_index
            .entry(r.node_id.clone())
            .or_insert(next_node);
        self.node_names.insert(id, r.node_id.clone());
        // A node that rejoins keeps its last known load until its next heartbeat.
        let (telemetry, telemetry_ms) = self
            .nodes
            .remove(&r.node_id)
            .map(|n| (n.telemetry, n.telemetry_ms))
            .unwrap_or_default();
        self.nodes.insert(
            r.node_id.clone(),
            NodeInfo {
                node_id: r.node_id,
                rack: r.rack,
                capability: r.capability,
                state: NodeState::Running,
                last_heartbeat_ms: now_ms,
                telemetry,
                telemetry_ms,
                lost_ms: None,
            },
        );
        self.dirty_nodes.insert(self.node_names[&id].clone());
        // A node registering again while the rm still books containers it ran (its
        // nodemanager restarted, say) no longer runs those it does not list: they are lost.
        let listed: Vec<String> = r
            .containers
            .iter()
            .map(|c| c.container_id.clone())
            .collect();
        self.lose_unlisted(&self.node_names[&id].clone(), &listed);
        // What the node already runs: containers of unfinished applications granted by an
        // earlier rm are taken back (work-preserving restart); any other is an orphan (its
        // application ended, or this rm already reported it LOST) and is stopped.
        let mut running = Vec::new();
        for c in r.containers {
            if self.book.get(&c.container_id).is_some() {
                self.book.mark_running(&c.container_id);
                continue;
            }
            let app = application_of(&c.container_id)
                .filter(|_| epoch_of(&c.container_id) != Some(self.restart_epoch))
                .and_then(|a| self.app_ids.get(&a).copied());
            match app {
                Some(app) => {
                    let size = Resources::new(c.resource.memory_mb, c.resource.vcores);
                    let master = self
                        .app_index
                        .get(&app)
                        .and_then(|a| self.apps.get(a))
                        .is_some_and(|a| {
                            a.attempts
                                .last()
                                .is_some_and(|t| t.container_id == c.container_id)
                        });
                    running.push(scheduler::Running { app, size, master });
                    self.recovering.push_back((c.container_id, app, c.resource));
                }
                None => self.stop_on(id, c.container_id),
            }
        }
        let capacity = Resources::new(r.capability.memory_mb, r.capability.vcores);
        self.schedule(SchedEvent::NodeAdded {
            node: id,
            rack,
            capacity,
            running,
        });
        self.debug_check();
    }

    pub(super) fn stop_on(&mut self, node: scheduler::NodeId, container: String) {
        let name = self.node_names[&node].clone();
        self.stop_orders.entry(name).or_default().push(container);
    }

    /// A node's heartbeat: its load, and the containers that ended on it.
    pub fn heartbeat(&mut self, now_ms: i64, hb: NodeHeartbeat) -> HeartbeatReply {
        self.now_ms = now_ms;
        let Some(node) = self
            .nodes
            .get_mut(&hb.node_id)
            .filter(|n| n.state == NodeState::Running)
        else {
            return HeartbeatReply {
                reregister: true,
                ..HeartbeatReply::default()
            };
        };
        node.last_heartbeat_ms = now_ms;
        node.telemetry_ms = Some(now_ms);
        self.telemetry_history
            .entry(hb.node_id.clone())
            .or_default()
            .push(now_ms, hb.telemetry.clone());
        node.telemetry = hb.telemetry;
        let load = self
            .settings
            .overload
            .and_then(|c| node_load(&node.telemetry, c.rule.source, node.capability));
        self.dirty_nodes.insert(hb.node_id.clone());
        // The load first: placements the ended containers make room for see it.
        if let (Some(load), Some(&idx)) = (load, self.node_index.get(&hb.node_id)) {
            self.schedule(SchedEvent::NodeLoad { node: idx, load });
        }
        for status in hb.completed {
            if let Some((_, counted_as)) = self.stopping.remove(&status.container_id) {
                self.count_end(counted_as.unwrap_or(status.end));
            }
            self.container_ended(status);
        }
        self.reconcile(&hb.node_id, &hb.running);
        // Masters granted on this node start now (the rm launches masters through heartbeats).
        let (here, elsewhere): (Vec<MasterLaunch>, Vec<MasterLaunch>) =
            std::mem::take(&mut self.launches)
                .into_iter()
                .partition(|l| l.container.node_id == hb.node_id);
        self.launches = elsewhere;
        let start = here
            .into_iter()
            .filter_map(|l| {
                // A launch that lost its race (the app ended, or this attempt was re-placed
                // while the node was away) must not start a second master.
                let app = self.apps.get(&l.application_id).filter(|a| {
                    !a.lifecycle.state.is_final()
                        && a.master.as_deref() == Some(l.container.container_id.as_str())
                })?;
                let mut env = self.master_env.clone();
                env.extend(app.master_env.clone());
                env.insert("APPLICATION_ID".into(), l.application_id.clone());
                env.insert("APP_ATTEMPT".into(), l.attempt.to_string());
                env.insert("CONTAINER_ID".into(), l.container.container_id.clone());
                // The master's credential for the rm: good for this application and attempt.
                let principal = Principal::Master {
                    app: l.application_id.clone(),
                    attempt: l.attempt,
                };
                env.insert("YARD_TOKEN".into(), self.bearer.issue(&principal));
                if let Some(url) = &self.url {
                    env.insert("YARD_RM".into(), url.clone());
                }
                Some(StartContainer {
                    token: Some(l.container.token),
                    command: app.master_command.clone(),
                    env,
                })
            })
            .collect();
        self.debug_check();
        HeartbeatReply {
            stop: self.stop_orders.remove(&hb.node_id).unwrap_or_default(),
            start,
            delete_datasets: self.take_deletes(&hb.node_id),
            reregister: false,
        }
    }

    /// Nodes silent past the expiry become LOST; their containers complete as LOST (a master
    /// on one fails its attempt). Returns the nodes lost now.
    pub fn expire(&mut self, now_ms: i64) -> Vec<String> {
        self.now_ms = now_ms;
        let lost: Vec<String> = self
            .nodes
            .values()
            .filter(|n| {
                n.state == NodeState::Running
                    && now_ms - n.last_heartbeat_ms > self.settings.node_expiry_ms
            })
            .map(|n| n.node_id.clone())
            .collect();
        for id in &lost {
            if let Some(n) = self.nodes.get_mut(id) {
                n.state = NodeState::Lost;
                n.lost_ms = Some(now_ms);
            }
            self.dirty_nodes.insert(id.clone());
            self.stop_orders.remove(id);
            // Told nothing more: a lost node keeps the blocks it was to delete (the module doc
            // of `datasets` says why).
            self.forget_deletes(id);
            // Containers the rm was stopping there: their node will not report them now.
            let mut unreported = Vec::new();
            self.stopping.retain(|_, (node, counted_as)| {
                let here = node == id;
                if here {
                    unreported.push(*counted_as);
                }
                !here
            });
            for counted_as in unreported {
                self.count_end(counted_as.unwrap_or(ContainerEnd::Killed));
            }
            // Masters waiting for this node's heartbeat to start never will: their containers
            // complete as LOST below, and their attempts fail over to other nodes.
            self.launches.retain(|l| l.container.node_id != *id);
            self.schedule(SchedEvent::NodeRemoved(self.node_index[id]));
        }
        self.prune_lost(now_ms);
        // Registered masters that fell silent: their attempt failed (its containers are
        // stopped; another attempt is launched while attempts remain).
        let silent: Vec<String> = self
            .apps
            .values()
            .filter(|a| {
                a.lifecycle.state == YarnApplicationState::Running
                    && now_ms - a.master_seen_ms > self.settings.am_expiry_ms
            })
            .map(|a| a.application_id.clone())
            .collect();
        for id in silent {
            let _ = self.transition(&id, AppEvent::MasterFailed);
        }
        // YARN's LIFETIME timeout: the rm kills what outlives it.
        let expired: Vec<String> = self
            .apps
            .values()
            .filter(|a| {
                !a.lifecycle.state.is_final()
                    && a.yarn.lifetime_expiry_ms.is_some_and(|t| now_ms >= t)
            })
            .map(|a| a.application_id.clone())
            .collect();
        for id in expired {
            if self.transition(&id, AppEvent::Kill).is_ok()
                && let Some(app) = self.apps.get_mut(&id)
            {
                app.lifecycle.diagnostics =
                    "Application is killed by ResourceManager as it has exceeded the lifetime period."
                        .into();
            }
        }
        // Granted containers never started within the allocation expiry: taken back, and
        // their masters told (YARN's container allocation expiry).
        let unstarted: Vec<String> = self
            .book
            .iter()
            .filter(|(_, m)| {
                !m.running && now_ms - m.started_ms > self.settings.allocation_expiry_ms
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in unstarted {
            tracing::warn!(container = %id, "granted and never started: taken back");
            let master = self
                .book
                .get(&id)
                .and_then(|m| self.apps.get(&m.application_id))
                .is_some_and(|a| a.master.as_deref() == Some(id.as_str()));
            match master {
                // A master never started fails its attempt, as one its node could not start.
                true => self.container_ended(ContainerStatus {
                    container_id: id,
                    end: ContainerEnd::LaunchFailed,
                    exit_code: None,
                }),
                false => self.end_task(&id, ContainerEnd::Killed),
            }
        }
        // Quotas follow the time left; promised releases that did not come are reclaimed.
        self.schedule(SchedEvent::Tick);
        self.sample_history(now_ms);
        self.debug_check();
        lost
    }

    /// Forgets nodes LOST longer than the retention: out of the nodes list, the block maps
    /// the rm answers with ([`Cluster::known_replicas`]) and (marked changed, so) the store.
    /// Returns the nodes forgotten now.
    pub fn prune_lost(&mut self, now_ms: i64) -> Vec<String> {
        let retention = self.settings.lost_node_retention_ms;
        let pruned: Vec<String> = self
            .nodes
            .values()
            .filter(|n| {
                n.state == NodeState::Lost && n.lost_ms.is_some_and(|t| now_ms - t >= retention)
            })
            .map(|n| n.node_id.clone())
            .collect();
        for id in &pruned {
            tracing::info!(node = %id, "lost node forgotten after the retention");
            self.nodes.remove(id);
            self.telemetry_history.remove(id);
            // A node not in `nodes` is written as removed.
            self.dirty_nodes.insert(id.clone());
        }
        pruned
    }

    /// `d` as the rm answers it: each block's replicas on the nodes it knows (running, or
    /// lost within the retention). A forgotten node's are left out, not taken from the block
    /// map: a node that registers again with its blocks holds them again.
    pub fn known_replicas(&self, d: &Dataset) -> Dataset {
        let mut d = d.clone();
        for b in &mut d.blocks {
            b.nodes.retain(|n| self.nodes.contains_key(n));
        }
        d
    }

    /// The largest container the cluster could hold: its largest running node (YARN's
    /// `maximum-resource-capability`); with no node yet, the most any container may ask.
    pub fn max_resource(&self) -> Resource {
        let running = self
            .nodes
            .values()
            .filter(|n| n.state == NodeState::Running);
        let memory_mb = running.clone().map(|n| n.capability.memory_mb).max();
        let vcores = running.map(|n| n.capability.vcores).max();
        match (memory_mb, vcores) {
            (Some(memory_mb), Some(vcores)) => Resource { memory_mb, vcores },
            _ => Resource {
                memory_mb: yard_wire::limits::CONTAINER_MAX_MEMORY_MB,
                vcores: yard_wire::limits::CONTAINER_MAX_VCORES,
            },
        }
    }
}
