//! Writing the rm's state before a reply says it changed. Every change to [`Cluster`] is
//! taken (`Cluster::take_changes`) under the cluster's lock and queued here in that order; one
//! writer task commits whatever has queued up in one SQLite transaction (group commit: many
//! waiting callers, one fsync) and only then answers the callers that wait for it.
//!
//! It fails closed. A write that fails is the waiting callers' error (the REST layer answers
//! 503 with the reason); under the cluster's lock the writer then takes in everything queued
//! behind it, puts back every waiting caller's change ([`Cluster::undo`], latest first), marks
//! the rest (heartbeats, allocations: facts from nodes and masters) to be written again, and
//! reports itself failing, so every later state-changing request is refused before it changes
//! anything ([`Journal::failing`], read under the same lock). While failing it tries to write
//! what is pending every [`PROBE_INTERVAL`] and is healthy again after the first write that
//! succeeds: room or write access back is noticed without a request and without a restart.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::cluster::{Changes, Cluster, Undo};
use crate::store::Store;

/// How often a failing writer tries again.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_secs(1);

type Done = oneshot::Sender<Result<(), String>>;

struct Entry {
    changes: Changes,
    /// Who waits for the commit (`None`: written in the background, e.g. heartbeats).
    done: Option<Done>,
    /// A request's change, finished once saved or put back if the write fails.
    undo: Option<Undo>,
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

    /// `Err(reason)` when the write failed: the change is not durable (and was put back).
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
    /// Starts the writer over `store`; on a failed write it puts back and re-marks changes in
    /// `cluster`.
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
        self.send(changes, wait, None)
    }

    /// Queues a request's change (with the cluster locked, as [`Journal::queue`]) and its
    /// [`Undo`]: the returned [`Pending`] resolves once it is committed and finished, or put
    /// back.
    pub fn queue_change(&self, changes: Changes, undo: Undo) -> Pending {
        self.send(changes, true, Some(undo))
    }

    fn send(&self, changes: Changes, wait: bool, undo: Option<Undo>) -> Pending {
        let (done, rx) = if wait {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        if self
            .queue
            .send(Entry {
                changes,
                done,
                undo,
            })
            .is_err()
        {
            return Pending(None);
        }
        Pending(rx)
    }

    /// `None` while writes succeed; the last write's error otherwise. Read it with the
    /// cluster locked to refuse a change: the writer sets it under that lock.
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
    let mut probe = tokio::time::interval(PROBE_INTERVAL);
    probe.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let failing = lock(&health).is_some();
        let first = if failing {
            tokio::select! {
                entry = rx.recv() => match entry {
                    // While failing only background changes come (a request's change is
                    // refused before it is made): they wait for the probe, which writes them
                    // with whatever else is pending, at its own pace.
                    Some(e) if e.done.is_none() => {
                        lock(&cluster).mark_changed(&e.changes);
                        continue;
                    }
                    entry => entry,
                },
                // The probe: what is pending, or, if nothing is, a write of nothing new.
                _ = probe.tick() => Some(Entry {
                    changes: lock(&cluster).take_changes(),
                    done: None,
                    undo: None,
                }),
            }
        } else {
            rx.recv().await
        };
        let Some(first) = first else {
            return;
        };
        let mut batch = vec![first];
        while let Ok(next) = rx.try_recv() {
            batch.push(next);
        }
        let mut changes = Changes::default();
        for e in &mut batch {
            changes.merge(std::mem::take(&mut e.changes));
        }
        let result = if changes.is_empty() && !failing {
            Ok(())
        } else {
            store
                .save_changes(&changes)
                .await
                .map_err(|e| e.to_string())
        };
        {
            let mut c = lock(&cluster);
            match &result {
                Ok(()) => {
                    if lock(&health).take().is_some() {
                        tracing::info!("the state store writes again; changes are accepted");
                    }
                    for undo in batch.iter_mut().filter_map(|e| e.undo.take()) {
                        c.saved(undo);
                    }
                }
                Err(e) => {
                    if failing {
                        tracing::debug!(error = %e, "the state store still cannot be written");
                    } else {
                        tracing::error!(error = %e, "cannot write the rm's state; changes are refused until it can");
                        // The first probe a whole interval from now.
                        probe.reset();
                    }
                    *lock(&health) = Some(e.clone());
                    // What queued behind the failed write was made before the failure was
                    // known: it fails with it (the queue only grows under this lock).
                    while let Ok(mut next) = rx.try_recv() {
                        changes.merge(std::mem::take(&mut next.changes));
                        batch.push(next);
                    }
                    for undo in batch.iter_mut().rev().filter_map(|e| e.undo.take()) {
                        c.undo(undo);
                    }
                    // Written again by id, as they are then (a withdrawn application is not).
                    c.mark_changed(&changes);
                }
            }
        }
        for done in batch.into_iter().filter_map(|e| e.done) {
            let _ = done.send(result.clone());
        }
    }
}
