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

use yard_wire::protocol::Dataset;

use super::{AppResult, Cluster};
use crate::app::{AppAction, Lifecycle};
use crate::policy::JobModel;
use crate::scheduler::SchedEvent;

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
    deadline_ms: Option<i64>,
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
                    deadline_ms: a.deadline_ms,
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
                let deadline = put_back(
                    &mut app.deadline_ms,
                    &before.deadline_ms,
                    &after.deadline_ms,
                )
                .then_some(before.deadline_ms);
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
                if let Some(deadline_ms) = deadline {
                    self.schedule(SchedEvent::Deadline { app, deadline_ms });
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
