//! The aggregated logs' store (YARN's log aggregation, whose `remote-app-log-dir` is on HDFS):
//! files beside the state database, one directory per application, one per container.
//!
//! ```text
//! <state-db>.app-logs/<application>/<container>/node          the node it ran on
//! <state-db>.app-logs/<application>/<container>/<file>        stdout, stderr as uploaded
//! <state-db>.app-logs/<application>/<container>/<file>.meta   {"bytes", "cut"} (JSON)
//! ```
//!
//! Why the rm's disk and not the block store: logs are small (capped per container), written
//! by nodemanagers (which place no replicas: placement is the client's, `yard data put`), and
//! must outlive any node, which the rm's own directory does; a dataset per application would
//! also sit among users' datasets. The rm learns which containers ran where from its book at
//! each tick (`node` files), so a node lost before it uploaded is named in the listing.
//!
//! Every name reaching a path here is checked first ([`plain`]). Blocking file IO: callers
//! run it on tokio's blocking pool.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use yard_wire::logs::{LOG_FILES, cut_note, is_log_file};

/// Where the store is and how long it keeps an ended application's logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    pub dir: PathBuf,
    /// `yarn.log-aggregation.retain-seconds`.
    pub retain: Duration,
}

impl LogSettings {
    /// The store beside `state_db` (`<state-db>.app-logs`), kept `retain_seconds` (default 7
    /// days).
    pub fn beside(state_db: &Path, retain_seconds: Option<u64>) -> LogSettings {
        let mut dir = state_db.as_os_str().to_owned();
        dir.push(".app-logs");
        LogSettings {
            dir: dir.into(),
            retain: Duration::from_secs(
                retain_seconds.unwrap_or(yard_wire::logs::DEFAULT_RETAIN_SECONDS),
            ),
        }
    }
}

/// What the store keeps beside a file: how many bytes the container wrote, and whether the
/// stored copy was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stored {
    pub bytes: u64,
    pub cut: bool,
}

/// A container the store knows: its node and its uploaded files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredContainer {
    pub node: String,
    pub files: BTreeMap<String, Stored>,
}

#[derive(Clone)]
pub struct LogStore {
    settings: Arc<LogSettings>,
    /// Reads running containers' logs from their nodemanagers.
    http: reqwest::Client,
    /// Running containers whose `node` file is written: the tick writes each once.
    noted: Arc<Mutex<HashSet<String>>>,
}

/// Whether `s` may name a directory or file here (the nodemanager's rule for names).
pub fn plain(s: &str) -> bool {
    (1..=200).contains(&s.len())
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} is not a plain name"),
    )
}

/// Writes `bytes` to `path` through a temporary file, so a reader never sees half of it, and
/// on disk (the file, then its directory's entry) before it returns: the rm acknowledges an
/// upload only once it would survive a crash, and a full disk fails the upload instead.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("partial~");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

impl LogStore {
    pub fn open(settings: LogSettings) -> io::Result<LogStore> {
        std::fs::create_dir_all(&settings.dir)?;
        Ok(LogStore {
            settings: Arc::new(settings),
            http: reqwest::Client::new(),
            noted: Default::default(),
        })
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    fn container_dir(&self, app: &str, container: &str) -> io::Result<PathBuf> {
        if !plain(app) {
            return Err(invalid("the application"));
        }
        if !plain(container) {
            return Err(invalid("the container"));
        }
        Ok(self.settings.dir.join(app).join(container))
    }

    /// Notes where the running containers (application, container, node) run, once each;
    /// forgets those no longer running, so the set stays as small as the book.
    pub fn note(&self, running: Vec<(String, String, String)>) -> io::Result<()> {
        let mut seen = HashSet::with_capacity(running.len());
        for (app, container, node) in running {
            seen.insert(container.clone());
            if lock(&self.noted).contains(&container) {
                continue;
            }
            let dir = self.container_dir(&app, &container)?;
            std::fs::create_dir_all(&dir)?;
            if !dir.join("node").exists() {
                write_atomic(&dir.join("node"), node.as_bytes())?;
            }
            lock(&self.noted).insert(container);
        }
        lock(&self.noted).retain(|c| seen.contains(c));
        Ok(())
    }

    /// The node a container ran on, if the store knows it.
    pub fn node_of(&self, app: &str, container: &str) -> Option<String> {
        let dir = self.container_dir(app, container).ok()?;
        std::fs::read_to_string(dir.join("node")).ok()
    }

    /// Keeps an uploaded file: `kept` is its last bytes, `total` how many the container wrote,
    /// `cap` the nodemanager's per-container cap (said in the note of a cut file).
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &self,
        app: &str,
        container: &str,
        node: &str,
        file: &str,
        total: u64,
        cap: u64,
        kept: &[u8],
    ) -> io::Result<Stored> {
        if !is_log_file(file) {
            return Err(invalid("the file"));
        }
        let dir = self.container_dir(app, container)?;
        std::fs::create_dir_all(&dir)?;
        write_atomic(&dir.join("node"), node.as_bytes())?;
        let cut = (kept.len() as u64) < total;
        let mut text = Vec::with_capacity(kept.len() + 200);
        if cut {
            text.extend_from_slice(cut_note(total, kept.len() as u64, cap).as_bytes());
        }
        text.extend_from_slice(kept);
        write_atomic(&dir.join(file), &text)?;
        let stored = Stored { bytes: total, cut };
        let meta = serde_json::to_vec(&stored).map_err(io::Error::other)?;
        write_atomic(&dir.join(format!("{file}.meta")), &meta)?;
        Ok(stored)
    }

    /// Every container of `app` the store knows, by id.
    pub fn list(&self, app: &str) -> io::Result<BTreeMap<String, StoredContainer>> {
        if !plain(app) {
            return Err(invalid("the application"));
        }
        let mut out = BTreeMap::new();
        let entries = match std::fs::read_dir(self.settings.dir.join(app)) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for entry in entries.flatten() {
            let container = entry.file_name().to_string_lossy().into_owned();
            if !plain(&container) {
                continue;
            }
            let dir = entry.path();
            let mut c = StoredContainer {
                node: std::fs::read_to_string(dir.join("node")).unwrap_or_default(),
                files: BTreeMap::new(),
            };
            for file in LOG_FILES {
                let meta = std::fs::read(dir.join(format!("{file}.meta")));
                if let Ok(stored) = meta
                    .and_then(|m| serde_json::from_slice::<Stored>(&m).map_err(io::Error::other))
                {
                    c.files.insert(file.to_owned(), stored);
                }
            }
            out.insert(container, c);
        }
        Ok(out)
    }

    /// A stored file's text (cut note included), `None` if it was not uploaded.
    pub fn read(&self, app: &str, container: &str, file: &str) -> io::Result<Option<Vec<u8>>> {
        if !is_log_file(file) {
            return Ok(None);
        }
        let dir = self.container_dir(app, container)?;
        if !dir.join(format!("{file}.meta")).exists() {
            return Ok(None);
        }
        match std::fs::read(dir.join(file)) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Removes the logs of applications that `ended` says are over and whose newest log is
    /// older than the retention; returns the applications removed.
    pub fn expire(&self, now: SystemTime, ended: impl Fn(&str) -> bool) -> io::Result<Vec<String>> {
        let mut removed = Vec::new();
        for entry in std::fs::read_dir(&self.settings.dir)?.flatten() {
            let app = entry.file_name().to_string_lossy().into_owned();
            if !plain(&app) || !ended(&app) {
                continue;
            }
            let newest = newest_mtime(&entry.path());
            let old = newest
                .is_none_or(|t| now.duration_since(t).unwrap_or_default() > self.settings.retain);
            if old {
                std::fs::remove_dir_all(entry.path())?;
                removed.push(app);
            }
        }
        Ok(removed)
    }
}

/// Every container in the book: (application, container, node).
pub fn running_containers(c: &crate::cluster::Cluster) -> Vec<(String, String, String)> {
    c.nodes()
        .flat_map(|n| c.containers_on(&n.node_id))
        .map(|(id, m)| (m.application_id.clone(), id.clone(), m.node_id.clone()))
        .collect()
}

/// The applications that have not ended (their logs do not expire), by id.
pub fn active_apps(c: &crate::cluster::Cluster) -> HashSet<String> {
    c.apps()
        .filter(|a| !a.lifecycle.state.is_final())
        .map(|a| a.application_id.clone())
        .collect()
}

/// The daemon's tick: notes where containers run and, when `active` is given, removes the
/// logs past their retention of every other application (ended, or forgotten by the rm).
pub async fn tick(
    store: LogStore,
    running: Vec<(String, String, String)>,
    active: Option<HashSet<String>>,
) {
    let done = tokio::task::spawn_blocking(move || {
        store.note(running)?;
        if let Some(active) = active {
            for app in store.expire(SystemTime::now(), |a| !active.contains(a))? {
                tracing::info!(%app, "aggregated logs removed: past their retention");
            }
        }
        Ok::<_, io::Error>(())
    })
    .await;
    if let Ok(Err(e)) = done {
        tracing::warn!(error = %e, "the aggregated logs' store failed");
    }
}

/// The newest modification time of the files one and two levels below `dir`.
fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    for c in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
            if let Ok(t) = f.metadata().and_then(|m| m.modified()) {
                newest = newest.max(Some(t));
            }
        }
    }
    newest
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "application_1_0001";
    const C1: &str = "container_1_0001_01_000001";

    fn store(retain_s: u64) -> (tempfile::TempDir, LogStore) {
        let dir = tempfile::tempdir().unwrap();
        let s = LogStore::open(LogSettings::beside(
            &dir.path().join("rm.db"),
            Some(retain_s),
        ))
        .unwrap();
        (dir, s)
    }

    #[test]
    fn a_cut_file_says_so_in_its_text_and_its_listing() {
        let (_d, s) = store(60);
        s.put(APP, C1, "n1", "stdout", 10, 8, b"6789").unwrap();
        s.put(APP, C1, "n1", "stderr", 3, 8, b"abc").unwrap();
        let listed = s.list(APP).unwrap();
        let c = &listed[C1];
        assert_eq!(c.node, "n1");
        assert_eq!(
            c.files["stdout"],
            Stored {
                bytes: 10,
                cut: true
            }
        );
        assert_eq!(
            c.files["stderr"],
            Stored {
                bytes: 3,
                cut: false
            }
        );
        let text = String::from_utf8(s.read(APP, C1, "stdout").unwrap().unwrap()).unwrap();
        assert!(
            text.starts_with("[yard: log cut to its last 4 of 10 bytes"),
            "{text}"
        );
        assert!(text.ends_with("\n6789"), "{text}");
        assert_eq!(s.read(APP, C1, "stderr").unwrap().unwrap(), b"abc");
    }

    #[test]
    fn names_that_are_not_plain_are_refused_before_any_path() {
        let (_d, s) = store(60);
        assert!(s.put("..", C1, "n", "stdout", 1, 1, b"x").is_err());
        assert!(s.put(APP, "a/b", "n", "stdout", 1, 1, b"x").is_err());
        assert!(s.put(APP, C1, "n", "node", 1, 1, b"x").is_err());
        assert!(s.list("../x").is_err());
    }

    #[test]
    fn noted_containers_are_listed_without_files_and_expire_only_when_ended() {
        let (_d, s) = store(60);
        s.note(vec![(APP.into(), C1.into(), "n2".into())]).unwrap();
        assert_eq!(s.list(APP).unwrap()[C1].node, "n2");
        assert!(s.list(APP).unwrap()[C1].files.is_empty());
        let later = SystemTime::now() + Duration::from_secs(120);
        assert!(s.expire(later, |_| false).unwrap().is_empty());
        assert!(s.expire(SystemTime::now(), |_| true).unwrap().is_empty());
        assert_eq!(s.expire(later, |_| true).unwrap(), vec![APP.to_owned()]);
        assert!(s.list(APP).unwrap().is_empty());
    }
}
