//! Datasets: their block maps (checked names, replicas on registered nodes), who put each, and
//! deleting their blocks from the nodes.
//!
//! Deleting (`yard data rm`, HDFS's `-rm -r`; and the parts a job that ended without
//! committing its output left behind): the rm tells each node, in its next heartbeat reply,
//! which datasets' directories to delete. A deletion is held until the change that made it is
//! saved ([`Cluster::release_deletes`]; a refused change drops it), so a node never deletes
//! the blocks of a dataset the rm still lists. Until every node has been told, the name is
//! being deleted: no block map, upload grant or job output takes it, so no delete reaches a
//! later dataset of the same name. A node lost before it is told keeps those blocks: orphans
//! on its disk that nothing lists (deleting later could reach a reused name's blocks).
//! Deletions not yet told are kept in the store with the removal that made them (saved in its
//! transaction, the row gone with the first change saved after the telling), so an rm
//! restarted in between tells them still, and the name waits for them as before.

use std::collections::BTreeSet;

use yard_appmaster::submission::{JOB_ENV, MapReduceJob};
use yard_wire::protocol::Dataset;

use super::{AppInfo, Cluster, ClusterError, NodeState};

/// Whether a node may be told a deletion yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Release {
    /// The change that made it is not saved yet.
    Held,
    Released,
}

/// The MapReduce job an application runs, as submitted (`None` for other applications).
pub fn job_of(app: &AppInfo) -> Option<MapReduceJob> {
    app.master_env
        .get(JOB_ENV)
        .and_then(|spec| serde_json::from_str(spec).ok())
}

/// A name that is safe as a path component on a nodemanager: 1–200 of `[A-Za-z0-9_.-]`, not
/// `.` or `..` (the nodemanager's own rule for dataset and block names).
pub fn plain_name(s: &str) -> bool {
    (1..=200).contains(&s.len())
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A dataset's name must be a [`plain_name`]: it names a directory on every nodemanager.
pub fn check_dataset_name(name: &str) -> Result<(), ClusterError> {
    if plain_name(name) {
        return Ok(());
    }
    Err(ClusterError::BadDataset {
        name: name.into(),
        problem: "name it with 1 to 200 letters, digits, '_', '-' or '.'".into(),
    })
}

impl Cluster {
    /// Records (or replaces) a dataset's block map. Every block needs a plain, unique name and
    /// at least one replica, on nodes that have registered.
    pub fn put_dataset(
        &mut self,
        now_ms: i64,
        mut d: Dataset,
        owner: &str,
    ) -> Result<(), ClusterError> {
        let bad = |problem: String| ClusterError::BadDataset {
            name: d.name.clone(),
            problem,
        };
        check_dataset_name(&d.name)?;
        self.not_being_deleted(&d.name)?;
        if d.blocks.is_empty() {
            return Err(bad("it has no blocks".into()));
        }
        let mut seen = BTreeSet::new();
        for b in &d.blocks {
            if !plain_name(&b.block) || !seen.insert(b.block.as_str()) {
                return Err(bad(format!(
                    "block {:?} is not a plain, unique name",
                    b.block
                )));
            }
            if b.nodes.is_empty() {
                return Err(bad(format!("block {} has no replica", b.block)));
            }
            if let Some(digest) = &b.sha256
                && !yard_wire::protocol::valid_sha256_hex(digest)
            {
                return Err(bad(format!(
                    "block {}'s sha256 is not 64 lower-case hex digits",
                    b.block
                )));
            }
            if let Some(n) = b.nodes.iter().find(|n| !self.nodes.contains_key(*n)) {
                return Err(bad(format!(
                    "block {} is on {n}, which is no node of this cluster",
                    b.block
                )));
            }
        }
        d.created_ms = now_ms;
        self.dataset_owners.insert(d.name.clone(), owner.to_owned());
        self.dirty_datasets.insert(d.name.clone());
        self.datasets.insert(d.name.clone(), d);
        Ok(())
    }

    pub fn datasets(&self) -> impl Iterator<Item = &Dataset> {
        self.datasets.values()
    }

    pub fn dataset(&self, name: &str) -> Result<&Dataset, ClusterError> {
        self.datasets
            .get(name)
            .ok_or_else(|| ClusterError::UnknownDataset(name.into()))
    }

    pub fn restore_datasets(&mut self, datasets: Vec<(Dataset, String)>) {
        for (d, owner) in datasets {
            self.dataset_owners.insert(d.name.clone(), owner);
            self.datasets.insert(d.name.clone(), d);
        }
    }

    /// Who put dataset `name`, if anyone has.
    pub fn dataset_owner(&self, name: &str) -> Option<&str> {
        self.dataset_owners.get(name).map(String::as_str)
    }

    /// Whether some node is still to be told to delete dataset `name`'s blocks.
    pub fn being_deleted(&self, name: &str) -> bool {
        self.deletes.values().any(|d| d.contains_key(name))
    }

    /// `BeingDeleted` while [`Cluster::being_deleted`].
    pub fn not_being_deleted(&self, name: &str) -> Result<(), ClusterError> {
        match self.being_deleted(name) {
            true => Err(ClusterError::BeingDeleted(name.into())),
            false => Ok(()),
        }
    }

    /// Removes dataset `name` from the catalog; its blocks are deleted from the running nodes
    /// that hold replicas once [`Cluster::release_deletes`] says the removal is saved. Refused
    /// while an unfinished MapReduce job reads or writes it. The nodes told.
    pub fn remove_dataset(&mut self, name: &str) -> Result<usize, ClusterError> {
        let d = self.dataset(name)?;
        let holders: BTreeSet<String> = d
            .blocks
            .iter()
            .flat_map(|b| b.nodes.iter().cloned())
            .collect();
        let user = self
            .apps()
            .filter(|a| !a.lifecycle.state.is_final())
            .find(|a| {
                job_of(a).is_some_and(|j| {
                    j.input.as_deref() == Some(name)
                        || j.more_inputs.iter().any(|i| i == name)
                        || j.output.as_deref() == Some(name)
                })
            });
        if let Some(app) = user {
            return Err(ClusterError::DatasetInUse {
                name: name.into(),
                app: app.application_id.clone(),
            });
        }
        self.datasets.remove(name);
        self.dataset_owners.remove(name);
        self.dirty_datasets.insert(name.to_owned());
        Ok(self.queue_deletes(name, holders, Release::Held))
    }

    /// The removal of `name` is saved: its nodes may be told.
    pub fn release_deletes(&mut self, name: &str) {
        for d in self.deletes.values_mut() {
            if let Some(r) = d.get_mut(name) {
                *r = Release::Released;
            }
        }
    }

    /// The removal of `name` was refused: its held deletions go.
    pub fn drop_held_deletes(&mut self, name: &str) {
        for (node, d) in self.deletes.iter_mut() {
            if d.get(name) == Some(&Release::Held) {
                d.remove(name);
                self.dirty_deletes.insert((node.clone(), name.to_owned()));
            }
        }
        self.deletes.retain(|_, d| !d.is_empty());
    }

    /// Deletions the store kept, not yet told when the rm stopped: told in their nodes' next
    /// heartbeat replies (the removals that made them were saved with them).
    pub fn restore_deletes(&mut self, deletes: Vec<(String, String)>) {
        for (node, name) in deletes {
            self.deletes
                .entry(node)
                .or_default()
                .insert(name, Release::Released);
        }
    }

    /// `node` is lost: it is told nothing more (the module doc says why).
    pub(super) fn forget_deletes(&mut self, node: &str) {
        for name in self
            .deletes
            .remove(node)
            .into_iter()
            .flat_map(|d| d.into_keys())
        {
            self.dirty_deletes.insert((node.to_owned(), name));
        }
    }

    /// The deletions changed since the last call, for the store: (node, dataset, whether it
    /// is still to be told).
    pub(super) fn take_dirty_deletes(&mut self) -> Vec<(String, String, bool)> {
        std::mem::take(&mut self.dirty_deletes)
            .into_iter()
            .map(|(node, name)| {
                let pending = self
                    .deletes
                    .get(&node)
                    .is_some_and(|d| d.contains_key(&name));
                (node, name, pending)
            })
            .collect()
    }

    /// Deletions the store failed to write are written again with the next changes.
    pub(super) fn mark_deletes_changed(&mut self, deletes: &[(String, String, bool)]) {
        self.dirty_deletes.extend(
            deletes
                .iter()
                .map(|(node, name, _)| (node.clone(), name.clone())),
        );
    }

    /// An application ended: if it is a MapReduce job whose output was never committed, the
    /// parts its attempts wrote are deleted from every running node (they may be anywhere the
    /// output grant let its tasks write).
    pub(super) fn delete_uncommitted_output(&mut self, id: &str) {
        let Some(output) = self.apps.get(id).and_then(job_of).and_then(|j| j.output) else {
            return;
        };
        if self.datasets.contains_key(&output) {
            return;
        }
        let running = self
            .nodes
            .values()
            .filter(|n| n.state == NodeState::Running)
            .map(|n| n.node_id.clone())
            .collect();
        self.queue_deletes(&output, running, Release::Released);
    }

    /// Dataset `name`'s blocks to delete on `nodes` (the running ones); how many.
    fn queue_deletes(&mut self, name: &str, nodes: BTreeSet<String>, release: Release) -> usize {
        let mut told = 0;
        for node in nodes {
            if self
                .nodes
                .get(&node)
                .is_some_and(|n| n.state == NodeState::Running)
            {
                self.deletes
                    .entry(node.clone())
                    .or_default()
                    .insert(name.to_owned(), release);
                self.dirty_deletes.insert((node, name.to_owned()));
                told += 1;
            }
        }
        told
    }

    /// The released deletions for `node`'s heartbeat reply, taken.
    pub(super) fn take_deletes(&mut self, node: &str) -> Vec<String> {
        let Some(mine) = self.deletes.get_mut(node) else {
            return Vec::new();
        };
        let released: Vec<String> = mine
            .iter()
            .filter(|(_, r)| **r == Release::Released)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &released {
            mine.remove(name);
            self.dirty_deletes.insert((node.to_owned(), name.clone()));
        }
        if mine.is_empty() {
            self.deletes.remove(node);
        }
        released
    }
}
