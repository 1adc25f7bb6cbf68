//! Change tracking: what changed since the store last wrote ([`Changes`]), taken in one
//! batch, and marked again when the write failed.

use std::collections::BTreeMap;

use yard_wire::protocol::Dataset;

use super::{AppInfo, AppRecord, Cluster, NodeInfo};

/// What changed in the rm's state, for the store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub apps: Vec<AppRecord>,
    pub nodes: Vec<NodeInfo>,
    /// Nodes forgotten (LOST past the retention).
    pub removed_nodes: Vec<String>,
    pub datasets: Vec<(Dataset, String)>,
    /// Datasets removed (`yard data rm`).
    pub removed_datasets: Vec<String>,
    /// Recovery entries written: (application, key, value).
    pub recovery: Vec<(String, String, String)>,
    /// Deletions of datasets' blocks: (node, dataset, still to be told); told ones are removed.
    pub deletes: Vec<(String, String, bool)>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
            && self.nodes.is_empty()
            && self.removed_nodes.is_empty()
            && self.datasets.is_empty()
            && self.removed_datasets.is_empty()
            && self.recovery.is_empty()
            && self.deletes.is_empty()
    }

    /// `later` on top of `self`: a record in both is `later`'s. Linear in both sizes.
    pub fn merge(&mut self, later: Changes) {
        fn upsert<T>(into: &mut Vec<T>, from: Vec<T>, key: impl Fn(&T) -> String) {
            let mut at: BTreeMap<String, usize> =
                into.iter().enumerate().map(|(i, x)| (key(x), i)).collect();
            for x in from {
                match at.get(&key(&x)) {
                    Some(&i) => into[i] = x,
                    None => {
                        at.insert(key(&x), into.len());
                        into.push(x);
                    }
                }
            }
        }
        upsert(&mut self.apps, later.apps, |a| a.id.clone());
        // A node is either written or removed, as it last was.
        self.removed_nodes
            .retain(|n| !later.nodes.iter().any(|l| &l.node_id == n));
        self.nodes
            .retain(|n| !later.removed_nodes.contains(&n.node_id));
        upsert(&mut self.nodes, later.nodes, |n| n.node_id.clone());
        upsert(&mut self.removed_nodes, later.removed_nodes, String::clone);
        // A dataset is either written or removed, as it last was.
        self.removed_datasets
            .retain(|n| !later.datasets.iter().any(|(d, _)| &d.name == n));
        self.datasets
            .retain(|(d, _)| !later.removed_datasets.contains(&d.name));
        upsert(&mut self.datasets, later.datasets, |d| d.0.name.clone());
        upsert(
            &mut self.removed_datasets,
            later.removed_datasets,
            String::clone,
        );
        upsert(&mut self.recovery, later.recovery, |r| {
            format!("{}/{}", r.0, r.1)
        });
        upsert(&mut self.deletes, later.deletes, |d| {
            format!("{}/{}", d.0, d.1)
        });
    }
}

impl Cluster {
    /// What changed since the last call, for the store to write.
    pub fn take_dirty(&mut self) -> (Vec<AppRecord>, Vec<NodeInfo>) {
        let apps = std::mem::take(&mut self.dirty_apps)
            .iter()
            .filter_map(|id| self.apps.get(id))
            .map(AppInfo::record)
            .collect();
        let nodes = std::mem::take(&mut self.dirty_nodes)
            .iter()
            .filter_map(|id| self.nodes.get(id))
            .cloned()
            .collect();
        (apps, nodes)
    }

    /// Datasets changed since the last call, with their owners, and those removed, for the
    /// store.
    fn take_dirty_datasets(&mut self) -> (Vec<(Dataset, String)>, Vec<String>) {
        let (mut written, mut removed) = (Vec::new(), Vec::new());
        for n in std::mem::take(&mut self.dirty_datasets) {
            match self.datasets.get(&n) {
                Some(d) => {
                    let owner = self.dataset_owners.get(&n).cloned().unwrap_or_default();
                    written.push((d.clone(), owner));
                }
                None => removed.push(n),
            }
        }
        (written, removed)
    }

    /// Everything changed since the last call, for the store to write in one transaction.
    pub fn take_changes(&mut self) -> Changes {
        // Marked nodes the rm no longer knows were forgotten (`prune_lost`).
        let removed_nodes = self
            .dirty_nodes
            .iter()
            .filter(|id| !self.nodes.contains_key(*id))
            .cloned()
            .collect();
        let (apps, nodes) = self.take_dirty();
        let recovery = std::mem::take(&mut self.dirty_recovery)
            .into_iter()
            .filter_map(|(app, key)| {
                let value = self.recovery.get(&app)?.get(&key)?.clone();
                Some((app, key, value))
            })
            .collect();
        let (datasets, removed_datasets) = self.take_dirty_datasets();
        Changes {
            apps,
            nodes,
            removed_nodes,
            datasets,
            removed_datasets,
            recovery,
            deletes: self.take_dirty_deletes(),
        }
    }

    /// Changes the store failed to write are written again with the next ones (by id, so
    /// the then-current state is what gets written).
    pub fn mark_changed(&mut self, changes: &Changes) {
        self.dirty_apps
            .extend(changes.apps.iter().map(|a| a.id.clone()));
        self.dirty_nodes
            .extend(changes.nodes.iter().map(|n| n.node_id.clone()));
        self.dirty_nodes
            .extend(changes.removed_nodes.iter().cloned());
        self.dirty_datasets
            .extend(changes.datasets.iter().map(|(d, _)| d.name.clone()));
        self.dirty_datasets
            .extend(changes.removed_datasets.iter().cloned());
        self.dirty_recovery.extend(
            changes
                .recovery
                .iter()
                .map(|(app, key, _)| (app.clone(), key.clone())),
        );
        self.mark_deletes_changed(&changes.deletes);
    }
}
