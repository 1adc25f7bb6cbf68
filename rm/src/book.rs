//! The rm's one book of containers: every container it has granted (or taken back from a
//! rejoining node) and not yet freed, with indexes by application, node and the scheduler's
//! id kept here and nowhere else. Every count the rm shows — `containersAllocated`, an
//! application's `runningContainers`, a node's `numContainers`, the metrics, `yard nodes`, the
//! UI — reads this book, so they cannot disagree; and since an entry leaves it once
//! ([`ContainerBook::remove`] answers `None` the second time), a container is freed once.
//! Pure bookkeeping: the rules of *when* to free are `Cluster`'s.

use std::collections::{BTreeMap, BTreeSet};

use yard_wire::protocol::Resource;

use yard_cluster::scheduler;

/// A booked container, as YARN's container report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerMeta {
    pub application_id: String,
    pub attempt: u32,
    pub node_id: String,
    pub resource: Resource,
    pub priority: u32,
    pub started_ms: i64,
    /// The scheduler's id of the same container.
    pub sched: scheduler::ContainerId,
    /// Its node has listed it as running (a granted container is booked before its master
    /// starts it; YARN's ALLOCATED, then RUNNING).
    pub running: bool,
}

/// Why a container cannot be booked: each would make two entries of one container.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum BookError {
    #[error("container {0} is already booked")]
    Twice(String),
    #[error("the scheduler's container {0:?} is already booked as {1}")]
    SchedTwice(scheduler::ContainerId, String),
    #[error(
        "the scheduler's container {0:?} is not newer than the last booked, {1:?}: an id granted twice"
    )]
    Reused(scheduler::ContainerId, scheduler::ContainerId),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ContainerBook {
    by_id: BTreeMap<String, ContainerMeta>,
    by_sched: BTreeMap<scheduler::ContainerId, String>,
    by_app: BTreeMap<String, BTreeSet<String>>,
    by_node: BTreeMap<String, BTreeSet<String>>,
    /// The newest scheduler id booked: the scheduler numbers containers upwards, so an id at
    /// or below it would be one granted before.
    last_sched: Option<scheduler::ContainerId>,
}

impl ContainerBook {
    pub fn insert(&mut self, id: String, meta: ContainerMeta) -> Result<(), BookError> {
        if self.by_id.contains_key(&id) {
            return Err(BookError::Twice(id));
        }
        if let Some(other) = self.by_sched.get(&meta.sched) {
            return Err(BookError::SchedTwice(meta.sched, other.clone()));
        }
        if let Some(last) = self.last_sched.filter(|&last| meta.sched <= last) {
            return Err(BookError::Reused(meta.sched, last));
        }
        self.last_sched = Some(meta.sched);
        self.by_sched.insert(meta.sched, id.clone());
        self.by_app
            .entry(meta.application_id.clone())
            .or_default()
            .insert(id.clone());
        self.by_node
            .entry(meta.node_id.clone())
            .or_default()
            .insert(id.clone());
        self.by_id.insert(id, meta);
        Ok(())
    }

    /// Takes `id` out of the book: `None` if it is not (or no longer) booked.
    pub fn remove(&mut self, id: &str) -> Option<ContainerMeta> {
        let meta = self.by_id.remove(id)?;
        self.by_sched.remove(&meta.sched);
        for (index, key) in [
            (&mut self.by_app, &meta.application_id),
            (&mut self.by_node, &meta.node_id),
        ] {
            if let Some(set) = index.get_mut(key) {
                set.remove(id);
                if set.is_empty() {
                    index.remove(key);
                }
            }
        }
        Some(meta)
    }

    pub fn get(&self, id: &str) -> Option<&ContainerMeta> {
        self.by_id.get(id)
    }

    /// Notes that its node lists it as running.
    pub fn mark_running(&mut self, id: &str) {
        if let Some(m) = self.by_id.get_mut(id) {
            m.running = true;
        }
    }

    /// The string id of the scheduler's container `sched`.
    pub fn id_of(&self, sched: scheduler::ContainerId) -> Option<&String> {
        self.by_sched.get(&sched)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// The containers `app` holds, by id.
    pub fn of_app<'a>(
        &'a self,
        app: &str,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.index(&self.by_app, app)
    }

    /// The containers booked on `node`, by id.
    pub fn on_node<'a>(
        &'a self,
        node: &str,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.index(&self.by_node, node)
    }

    fn index<'a>(
        &'a self,
        index: &'a BTreeMap<String, BTreeSet<String>>,
        key: &str,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        index
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|id| self.by_id.get_key_value(id))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &ContainerMeta)> {
        self.by_id.iter()
    }

    /// The indexes agree with the entries: every entry is in each index once, under its own
    /// application, node and scheduler id, and no index names anything else.
    pub fn check(&self) -> Result<(), String> {
        let indexed = |index: &BTreeMap<String, BTreeSet<String>>| -> usize {
            index.values().map(BTreeSet::len).sum()
        };
        if self.by_sched.len() != self.by_id.len()
            || indexed(&self.by_app) != self.by_id.len()
            || indexed(&self.by_node) != self.by_id.len()
        {
            return Err(format!(
                "the book's indexes hold {} (scheduler), {} (applications), {} (nodes) of {} containers",
                self.by_sched.len(),
                indexed(&self.by_app),
                indexed(&self.by_node),
                self.by_id.len()
            ));
        }
        for (id, m) in &self.by_id {
            let in_app = self
                .by_app
                .get(&m.application_id)
                .is_some_and(|s| s.contains(id));
            let in_node = self.by_node.get(&m.node_id).is_some_and(|s| s.contains(id));
            if !in_app || !in_node || self.by_sched.get(&m.sched) != Some(id) {
                return Err(format!("container {id} is not indexed as booked: {m:?}"));
            }
        }
        Ok(())
    }
}
