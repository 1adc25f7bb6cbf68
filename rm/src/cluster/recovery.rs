//! What survives a restart: the store's applications and nodes brought back into a new rm,
//! the containers rejoining nodes still run taken back (work-preserving restart), and the
//! entries a master keeps for its next attempt.

use std::collections::BTreeMap;

use yard_appmaster::submission::upgraded_master_command;
use yard_wire::protocol::{AllocateReply, Resource};

use crate::book::ContainerMeta;
use yard_cluster::app::YarnApplicationState;
use yard_cluster::scheduler::{self, AppId, SchedEvent};

use super::{AppInfo, AppRecord, Cluster, ClusterError, NodeInfo, NodeState};

/// The most recovery entries one application may keep (a map each, for yard's masters).
pub const MAX_RECOVERY_ENTRIES: usize = 200_000;

impl Cluster {
    /// Brings back the recovery entries the store kept (for unfinished applications).
    pub fn restore_recovery(&mut self, entries: Vec<(String, String, String)>) {
        for (app, key, value) in entries {
            let unfinished = self
                .apps
                .get(&app)
                .is_some_and(|a| !a.lifecycle.state.is_final());
            if unfinished {
                self.recovery.entry(app).or_default().insert(key, value);
            }
        }
    }

    /// A running master keeps `entries` (key → JSON value, opaque to the rm) for its next
    /// attempt; a key written again is replaced, so a retried call changes nothing. Refused
    /// past [`MAX_RECOVERY_ENTRIES`] per application, whole.
    pub fn put_recovery(
        &mut self,
        id: &str,
        entries: BTreeMap<String, String>,
    ) -> Result<usize, ClusterError> {
        let app = self
            .apps
            .get(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state != YarnApplicationState::Running {
            return Err(ClusterError::NotRunning(id.into()));
        }
        let kept = self.recovery.entry(id.to_owned()).or_default();
        let new = entries.keys().filter(|k| !kept.contains_key(*k)).count();
        if kept.len() + new > MAX_RECOVERY_ENTRIES {
            return Err(ClusterError::RecoveryFull {
                id: id.into(),
                max: MAX_RECOVERY_ENTRIES,
            });
        }
        for (key, value) in entries {
            self.dirty_recovery.insert((id.to_owned(), key.clone()));
            kept.insert(key, value);
        }
        Ok(kept.len())
    }

    /// What `id`'s masters kept for a next attempt, by key.
    pub fn recovery(&self, id: &str) -> impl Iterator<Item = (&String, &String)> {
        self.recovery.get(id).into_iter().flatten()
    }

    /// The rm's restart count on its state (the store keeps it): part of container ids.
    pub fn set_restart_epoch(&mut self, epoch: u64) {
        self.restart_epoch = epoch;
    }

    /// Brings back what the store kept, after an rm restart. Applications are known and
    /// reported again in their states; unfinished ones rejoin the scheduler, and one whose
    /// master was never granted asks for it again. Nodes come back LOST until they register
    /// again (their next heartbeat is told to): the new scheduler knows nothing of them yet.
    pub fn restore(&mut self, apps: Vec<AppRecord>, nodes: Vec<NodeInfo>) {
        for n in nodes {
            if let Some(at) = n.telemetry_ms {
                self.telemetry_history
                    .entry(n.node_id.clone())
                    .or_default()
                    .push(at, n.telemetry.clone());
            }
            // Lost when it was, or now: the retention runs from there (`prune_lost`).
            let lost_ms = match n.state {
                NodeState::Lost => {
                    (n.last_heartbeat_ms + self.settings.node_expiry_ms).min(self.now_ms)
                }
                NodeState::Running => self.now_ms,
            };
            self.nodes.insert(
                n.node_id.clone(),
                NodeInfo {
                    state: NodeState::Lost,
                    lost_ms: Some(lost_ms),
                    ..n
                },
            );
        }
        for r in apps {
            let app = AppId(self.app_index.len() as u64 + 1);
            self.app_index.insert(app, r.id.clone());
            self.app_ids.insert(r.id.clone(), app);
            let unfinished = !r.lifecycle.state.is_final();
            let needs_master = r.lifecycle.state == YarnApplicationState::Accepted
                && r.attempts.len() < r.lifecycle.attempts as usize;
            self.apps.insert(
                r.id.clone(),
                AppInfo {
                    application_id: r.id.clone(),
                    name: r.name,
                    user: r.user.clone(),
                    queue: r.queue.clone(),
                    lifecycle: r.lifecycle,
                    progress: r.progress,
                    submitted_ms: r.submitted_ms,
                    master: None,
                    attempts: r.attempts,
                    // An older rm's MapReduce master took the job as flags; today's reads
                    // it from its environment alone.
                    master_command: upgraded_master_command(&r.master_command)
                        .unwrap_or(r.master_command),
                    master_env: r.master_env,
                    deadline: r.deadline,
                    result: r.result,
                    tags: r.tags,
                    model: r.model,
                    yarn: r.yarn,
                    quota: None,
                    // A master of a restored application has until the expiry, from the rm's
                    // start, to call the new rm.
                    master_seen_ms: self.epoch,
                    tracking_url: None,
                    job_type: None,
                    job_progress: None,
                    estimates: Vec::new(),
                    pending: AllocateReply::default(),
                },
            );
            if unfinished {
                self.schedule(SchedEvent::AppAdded {
                    app,
                    queue: r.queue,
                    user: r.user,
                    weight: 1.0,
                });
                self.schedule(SchedEvent::Deadline {
                    app,
                    deadline: r.deadline,
                });
                self.schedule(SchedEvent::Model {
                    app,
                    model: r.model,
                });
            }
            if needs_master {
                self.ask_master(app);
            }
        }
    }

    /// A container taken back from a rejoining node; a master's own makes its attempt current.
    pub(super) fn recovered(
        &mut self,
        container: scheduler::ContainerId,
        id: String,
        app: AppId,
        node: scheduler::NodeId,
        resource: Resource,
    ) {
        let Some(app_id) = self.app_index.get(&app).cloned() else {
            return;
        };
        let node_id = self.node_names[&node].clone();
        if let Some(info) = self.apps.get_mut(&app_id)
            && info.attempts.last().is_some_and(|a| a.container_id == id)
        {
            info.master = Some(id.clone());
        }
        tracing::info!(container = %id, node = %node_id, "recovered");
        let attempt = id
            .rsplit('_')
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(1);
        self.book_container(
            id,
            ContainerMeta {
                application_id: app_id,
                attempt,
                node_id,
                resource,
                priority: 0,
                started_ms: self.now_ms,
                sched: container,
                running: true,
            },
        );
    }
}
