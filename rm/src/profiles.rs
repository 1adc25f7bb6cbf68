//! Profiles for the quotas, from the job-profile store (`yard-profiles`, the SQLite file every
//! MapReduce master writes and `yard rm --profiles-db` names): what earlier runs of a job kind
//! measured, turned into ARIA's profile for the job's task counts.
//!
//! The store keeps Dart's profile (§5.1: map durations by locality, partition bytes, shuffle
//! bandwidth, reduce time as a power law of its input), means only; ARIA's is read from it by
//! `yard_appmaster::policy::aria_profile`, whose documentation gives the rules.
//!
//! A kind without a run that measured its maps has no profile (nothing is invented).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::OnceCell;
use yard_profiles::ProfileStore;

use yard_appmaster::policy::{PowerLaw, Profile as DartProfile, aria_profile};
use yard_cluster::aria::Profile;

/// The profile store at a path, opened the first time a profile is looked up there and the
/// file exists (the masters create it; the rm only reads).
#[derive(Clone, Debug)]
pub struct Profiles {
    path: PathBuf,
    store: Arc<OnceCell<Option<ProfileStore>>>,
}

impl Profiles {
    pub fn at(path: &Path) -> Profiles {
        Profiles {
            path: path.to_owned(),
            store: Arc::new(OnceCell::new()),
        }
    }

    /// `kind`'s profile for `maps` maps and `reduces` reduces, if the store has one.
    pub async fn lookup(&self, kind: &str, maps: u32, reduces: u32) -> Option<Profile> {
        if !self.store.initialized() && !self.path.exists() {
            return None;
        }
        let store = self.store.get_or_init(|| open(&self.path)).await.as_ref()?;
        lookup(store, kind, maps, reduces).await
    }
}

/// Opens the store at `path` for reading profiles; `None` (logged) when it cannot be opened:
/// the rm then runs without it, and jobs without a registered profile have no quota.
pub async fn open(path: &Path) -> Option<ProfileStore> {
    match ProfileStore::open(path).await {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot open the profile store: quotas only from masters' registrations");
            None
        }
    }
}

/// Reads `kind`'s profile from `store`, if it has one with measured maps. An error is logged
/// and read as "no profile": the job then runs without a quota, as EDF would serve it.
pub async fn lookup(store: &ProfileStore, kind: &str, maps: u32, reduces: u32) -> Option<Profile> {
    let stored = match store.load(kind).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, %kind, "cannot read the job kind's profile");
            return None;
        }
    };
    if !stored
        .runs
        .iter()
        .any(|r| r.map_local.is_some() || r.map_remote.is_some())
    {
        return None;
    }
    // Nothing unmeasured is used: the defaults are never read for a measured map time, and
    // reduce times fall back to no time at all.
    let defaults = DartProfile {
        map_local: f64::NAN,
        map_remote: f64::NAN,
        map_shortest: None,
        map_spread: None,
        partition_bytes: 0.0,
        shuffle_bandwidth: 0.0,
        reduce_time: PowerLaw {
            a: 0.0,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    };
    aria_profile(&stored.profiler(defaults).profile(), maps, reduces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_cluster::aria::Durations;

    #[tokio::test]
    async fn a_kind_the_store_has_never_run_has_no_profile() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("profiles.db")).await.unwrap();
        assert_eq!(lookup(&store, "wordcount@text", 10, 2).await, None);
        let record = yard_appmaster::policy::RunRecord {
            map_local: Some(3.0),
            map_remote: Some(4.0),
            partition_bytes: Some(10.0),
            shuffle_bandwidth: Some(100.0),
            k: 10,
            max_reduce_input: 100,
            reduce_samples: vec![(50.0, 1.0), (100.0, 2.0)],
            ..Default::default()
        };
        store.add_run("wordcount@text", 0, &record).await.unwrap();
        let p = lookup(&store, "wordcount@text", 10, 2).await.unwrap();
        assert_eq!(p.map, Durations::new(3.0, 4.5));
        // d = 10 × 10 bytes: 1 s of shuffle; f(d) fitted through (50, 1) and (100, 2): 2 s.
        assert!((p.typical_shuffle.avg - 1.0).abs() < 1e-9, "{p:?}");
        assert!((p.reduce.avg - 2.0).abs() < 1e-6, "{p:?}");
        assert_eq!(lookup(&store, "grep@text", 10, 2).await, None);
        // Through the lazily opened handle, as the rm reads it.
        let lazy = Profiles::at(&dir.path().join("profiles.db"));
        assert_eq!(lazy.lookup("wordcount@text", 10, 2).await, Some(p));
        assert_eq!(
            Profiles::at(&dir.path().join("none.db"))
                .lookup("wordcount@text", 10, 2)
                .await,
            None
        );
        assert!(
            !dir.path().join("none.db").exists(),
            "the rm creates no store"
        );
    }
}
