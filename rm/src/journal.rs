//! Writing the rm's state before a reply says it changed. Every change to [`Cluster`] is
//! taken (`Cluster::take_changes`) under the cluster's lock and queued here in that order; one
//! writer task commits whatever has queued up in one SQLite transaction (group commit: many
//! waiting callers, one fsync) and only then answers the callers that wait for it. A failed
//! write is the callers' error (the REST layer answers 503 with the reason), the changes are
//! marked to be written again with the next ones, and the store's health says so until a
//! write succeeds.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use crate::cluster::{Changes, Cluster};
use crate::store::Store;

type Done = oneshot::Sender<Result<(), String>>;

struct Entry {
    changes: Changes,
    /// Who waits for the commit (`None`: written in the background, e.g. heartbeats).
    done: Option<Done>,
}

/// The queue to the writer. Cheap to clone.
#[derive(Clone)]
pub struct Journal {
    queue: mpsc::UnboundedSender<Entry>,
    health: Arc<Mutex<Option<String>>>,
}

/// What a caller waits on: the commit of its changes (and of all queued before them).
pub struct Pending(Option<oneshot::Receiver<Result<(), String>>>);

impl Pending {
    /// Nothing to wait for.
    pub fn none() -> Pending {
        Pending(None)
    }

    /// `Err(reason)` when the write failed: the change is not durable.
    pub async fn committed(self) -> Result<(), String> {
        match self.0 {
            None => Ok(()),
            Some(rx) => rx
                .await
                .unwrap_or_else(|_| Err("the rm is shutting down".into())),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Journal {
    /// Starts the writer over `store`; it re-marks failed changes in `cluster`.
    pub fn start(store: Arc<Store>, cluster: Arc<Mutex<Cluster>>) -> Journal {
        let (queue, rx) = mpsc::unbounded_channel();
        let health = Arc::new(Mutex::new(None));
        tokio::spawn(write_loop(store, cluster, rx, health.clone()));
        Journal { queue, health }
    }

    /// Queues what changed; call it with the cluster locked, so the queue's order is the order
    /// of the changes. With `wait`, the returned [`Pending`] resolves once they are committed.
    pub fn queue(&self, changes: Changes, wait: bool) -> Pending {
        if changes.is_empty() && !wait {
            return Pending::none();
        }
        let (done, rx) = if wait {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        if self.queue.send(Entry { changes, done }).is_err() {
            return Pending(None);
        }
        Pending(rx)
    }

    /// `None` while writes succeed; the last write's error otherwise.
    pub fn failing(&self) -> Option<String> {
        lock(&self.health).clone()
    }
}

async fn write_loop(
    store: Arc<Store>,
    cluster: Arc<Mutex<Cluster>>,
    mut rx: mpsc::UnboundedReceiver<Entry>,
    health: Arc<Mutex<Option<String>>>,
) {
    while let Some(first) = rx.recv().await {
        let mut changes = first.changes;
        let mut waiting: Vec<Done> = first.done.into_iter().collect();
        while let Ok(next) = rx.try_recv() {
            changes.merge(next.changes);
            waiting.extend(next.done);
        }
        let result = if changes.is_empty() {
            Ok(())
        } else {
            store
                .save_changes(&changes)
                .await
                .map_err(|e| e.to_string())
        };
        match &result {
            Ok(()) => {
                if lock(&health).take().is_some() {
                    tracing::info!("the state store writes again");
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot write the rm's state; callers get 503 until it can");
                *lock(&health) = Some(e.clone());
                lock(&cluster).mark_changed(&changes);
            }
        }
        for done in waiting {
            let _ = done.send(result.clone());
        }
    }
}
