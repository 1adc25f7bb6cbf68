//! Putting a refused change back (issue 28). A request that changes what a client was promised
//! changes the [`Cluster`] at once, under its lock, and answers once the journal has written
//! it. Its change carries an [`Undo`]: the fields it may change as they were before and after
//! it. If the write fails, the journal puts back, latest first, every field that nothing has
//! changed since (an application the request submitted is withdrawn), so nothing refused
//! stays in memory to be written with a later change. What cannot be put back — containers
//! stopped, a master asked for — is held: a transition's actions wait for the write and are
//! carried out once it succeeded ([`Cluster::saved`]), unless the application changed state
//! since (a later transition's own actions then stand).

use std::collections::BTreeMap;

use yard_wire::deadline::Deadline;
use yard_wire::protocol::Dataset;

use super::{AppResult, Cluster};
use yard_cluster::app::{AppAction, Lifecycle};
use yard_cluster::policy::JobModel;
use yard_cluster::scheduler::SchedEvent;

/// What a state-changing request changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touch {
    /// An application, or one the request submits.
    App(String),
    /// A dataset's block map.
    Dataset(String),
}

/// An application's fields a client's or master's request may change.
#[derive(Debug, Clone, PartialEq)]
struct AppFields {
    lifecycle: Lifecycle,
    deadline: Option<Deadline>,
    result: Option<AppResult>,
    model: Option<JobModel>,
    tracking_url: Option<String>,
    finished_ms: Option<i64>,
    lifetime_expiry_ms: Option<i64>,
    recovery: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Image {
    App(Option<Box<AppFields>>),
    Dataset(Option<(Dataset, String)>),
}

/// One request's change: what it touched, before and after, and the actions held for after
/// its write.
#[derive(Debug)]
pub struct Undo {
    touch: Touch,
    before: Image,
    after: Image,
    actions: Vec<AppAction>,
}

/// `now` back to `before` if the request changed it and nothing did since.
fn put_back<T: PartialEq + Clone>(now: &mut T, before: &T, after: &T) -> bool {
    let back = now == after && before != after;
    if back {
        *now = before.clone();
    }
    back
}

impl Cluster {
    fn image(&self, touch: &Touch) -> Image {
        match touch {
            Touch::App(id) => Image::App(self.apps.get(id).map(|a| {
                Box::new(AppFields {
                    lifecycle: a.lifecycle.clone(),
                    deadline: a.deadline,
                    result: a.result.clone(),
                    model: a.model,
                    tracking_url: a.tracking_url.clone(),
                    finished_ms: a.yarn.finished_ms,
                    lifetime_expiry_ms: a.yarn.lifetime_expiry_ms,
                    recovery: self.recovery.get(id).cloned(),
                })
            })),
            Touch::Dataset(name) => Image::Dataset(self.datasets.get(name).map(|d| {
                let owner = self.dataset_owners.get(name).cloned().unwrap_or_default();
                (d.clone(), owner)
            })),
        }
    }

    /// Before a state-changing request: what `touch` is now; the application's transitions'
    /// actions are held from here until [`Cluster::end_change`].
    pub fn begin_change(&mut self, touch: Touch) -> Undo {
        let before = self.image(&touch);
        if let Touch::App(id) = &touch {
            self.held = Some((id.clone(), Vec::new()));
        }
        Undo {
            after: before.clone(),
            before,
            touch,
            actions: Vec::new(),
        }
    }

    /// After it: what it changed, to finish once saved or put back if the write fails.
    pub fn end_change(&mut self, mut undo: Undo) -> Undo {
        undo.after = self.image(&undo.touch);
        undo.actions = self.held.take().map(|(_, a)| a).unwrap_or_default();
        undo
    }

    /// The change is saved: the held actions are carried out, unless the application's
    /// lifecycle moved on since (then the later transition's actions stand).
    pub fn saved(&mut self, undo: Undo) {
        let (Touch::App(id), Image::App(Some(after))) = (&undo.touch, &undo.after) else {
            return;
        };
        if self
            .apps
            .get(id)
            .is_some_and(|a| a.lifecycle == after.lifecycle)
        {
            for action in undo.actions {
                self.act(id, action);
            }
        }
    }

    /// The change could not be saved: what it changed goes back, unless changed since; an
    /// application it submitted is withdrawn (its id may be submitted again). Its held actions
    /// are dropped.
    pub fn undo(&mut self, undo: Undo) {
        match (undo.touch, undo.before, undo.after) {
            (Touch::App(id), Image::App(None), Image::App(Some(_))) => self.withdraw(&id),
            (Touch::App(id), Image::App(Some(before)), Image::App(Some(after))) => {
                let Some(app) = self.apps.get_mut(&id) else {
                    return;
                };
                put_back(&mut app.lifecycle, &before.lifecycle, &after.lifecycle);
                put_back(&mut app.result, &before.result, &after.result);
                put_back(
                    &mut app.tracking_url,
                    &before.tracking_url,
                    &after.tracking_url,
                );
                put_back(
                    &mut app.yarn.finished_ms,
                    &before.finished_ms,
                    &after.finished_ms,
                );
                put_back(
                    &mut app.yarn.lifetime_expiry_ms,
                    &before.lifetime_expiry_ms,
                    &after.lifetime_expiry_ms,
                );
                let deadline = put_back(&mut app.deadline, &before.deadline, &after.deadline)
                    .then_some(before.deadline);
                let model =
                    put_back(&mut app.model, &before.model, &after.model).then_some(before.model);
                let mut recovery = self.recovery.get(&id).cloned();
                if put_back(&mut recovery, &before.recovery, &after.recovery) {
                    match recovery {
                        Some(r) => self.recovery.insert(id.clone(), r),
                        None => self.recovery.remove(&id),
                    };
                }
                self.dirty_apps.insert(id.clone());
                // The scheduler's copies follow the fields.
                let app = self.app_of(&id);
                if let Some(deadline) = deadline {
                    self.schedule(SchedEvent::Deadline { app, deadline });
                }
                if let Some(model) = model {
                    self.schedule(SchedEvent::Model { app, model });
                }
            }
            (Touch::Dataset(name), Image::Dataset(before), Image::Dataset(after)) => {
                if self.image(&Touch::Dataset(name.clone())) != Image::Dataset(after) {
                    return;
                }
                match before {
                    Some((d, owner)) => {
                        self.datasets.insert(name.clone(), d);
                        self.dataset_owners.insert(name, owner);
                    }
                    None => {
                        self.datasets.remove(&name);
                        self.dataset_owners.remove(&name);
                    }
                }
            }
            _ => {}
        }
    }

    /// Forgets a submission that was never saved. Its master was never asked for (that action
    /// was held), so it holds no container; its id goes back to the issued ones, so the client
    /// may submit it again.
    fn withdraw(&mut self, id: &str) {
        if !self.apps.contains_key(id) {
            return;
        }
        self.stop_all(id);
        let Some(info) = self.apps.remove(id) else {
            return;
        };
        if let Some(app) = self.app_ids.remove(id) {
            self.schedule(SchedEvent::AppRemoved(app));
        }
        self.recovery.remove(id);
        self.dirty_apps.remove(id);
        self.issued.insert(id.to_owned(), (info.user, self.now_ms));
    }
}

#[cfg(test)]
mod tests {
    use yard_wire::auth::ClusterSecret;
    use yard_wire::protocol::{NodeHeartbeat, RegisterNode, Resource};
    use yard_wire::telemetry::NodeTelemetry;

    use super::*;
    use crate::cluster::{NewApp, Settings};
    use yard_cluster::app::YarnApplicationState;

    const NODE: &str = "n1:8042";

    fn cluster() -> Cluster {
        let mut c = Cluster::new(Settings::default(), ClusterSecret::new([3; 32]), 1_000);
        c.register_node(
            1_000,
            RegisterNode {
                node_id: NODE.into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: Vec::new(),
            },
        );
        c
    }

    /// What the node is told to stop in its next heartbeat.
    fn stop_orders(c: &mut Cluster) -> Vec<String> {
        c.heartbeat(
            3_000,
            NodeHeartbeat {
                node_id: NODE.into(),
                running: vec![],
                completed: vec![],
                telemetry: NodeTelemetry::default(),
            },
        )
        .stop
    }

    /// Submits as a request under the journal does, finishing it as `write_ok` says.
    fn submit(c: &mut Cluster, write_ok: bool) -> String {
        let id = c.new_application(2_000, "alice").unwrap();
        let undo = c.begin_change(Touch::App(id.clone()));
        c.submit(2_000, NewApp::new(&id, "wc", "alice", "default"))
            .unwrap();
        let undo = c.end_change(undo);
        // Its master is asked for only once the submission is saved.
        assert!(c.take_master_launches().is_empty());
        if write_ok {
            c.saved(undo)
        } else {
            c.undo(undo)
        }
        id
    }

    #[test]
    fn a_submission_whose_write_failed_is_withdrawn_and_its_id_may_be_submitted_again() {
        let mut c = cluster();
        let id = submit(&mut c, false);
        assert!(c.app(&id).is_none());
        assert!(
            c.take_changes().apps.is_empty(),
            "nothing of it left to write"
        );
        assert!(c.take_master_launches().is_empty());
        c.submit(2_500, NewApp::new(&id, "wc", "alice", "default"))
            .unwrap();
        assert_eq!(c.take_master_launches().len(), 1);
    }

    #[test]
    fn a_kill_whose_write_failed_leaves_the_app_as_it_was_and_its_containers_running() {
        let mut c = cluster();
        let id = submit(&mut c, true);
        let master = c.take_master_launches().remove(0).container.container_id;
        c.master_registered(&id, None).unwrap();
        let before = c.app(&id).unwrap().clone();

        let undo = c.begin_change(Touch::App(id.clone()));
        c.kill(&id).unwrap();
        let undo = c.end_change(undo);
        c.undo(undo);
        let after = c.app(&id).unwrap();
        assert_eq!(after.lifecycle.state, YarnApplicationState::Running);
        assert_eq!(after, &before);
        assert!(stop_orders(&mut c).is_empty());

        // The same kill saved: now its master is stopped.
        let undo = c.begin_change(Touch::App(id.clone()));
        c.kill(&id).unwrap();
        let undo = c.end_change(undo);
        assert!(stop_orders(&mut c).is_empty(), "not before it is saved");
        c.saved(undo);
        assert_eq!(
            c.app(&id).unwrap().lifecycle.state,
            YarnApplicationState::Killed
        );
        assert_eq!(stop_orders(&mut c), vec![master]);
    }

    #[test]
    fn a_refused_change_is_not_put_back_over_a_later_one() {
        let mut c = cluster();
        let id = submit(&mut c, true);
        let undo = c.begin_change(Touch::App(id.clone()));
        c.set_deadline(&id, Deadline::from_epoch_ms(5_000)).unwrap();
        let undo = c.end_change(undo);
        // Another request set it again before the first one's write failed.
        c.set_deadline(&id, Deadline::from_epoch_ms(9_000)).unwrap();
        c.undo(undo);
        assert_eq!(
            c.app(&id).unwrap().deadline,
            Some(Deadline::from_epoch_ms(9_000))
        );
    }
}
