//! Datasets: their block maps (checked names, replicas on registered nodes) and who put each.

use std::collections::BTreeSet;

use yard_wire::protocol::Dataset;

use super::{Cluster, ClusterError};

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
}
