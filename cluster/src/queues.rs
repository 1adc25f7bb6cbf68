//! Capacity queues, as YARN's CapacityScheduler has them (flat: leaf queues under `root`): each
//! queue is guaranteed `capacity` percent of the cluster, may grow to `maximum-capacity` when
//! others leave room, limits one user to `user-limit-factor` times its capacity, admits the
//! users of its `acl-submit-applications`, and runs its own cluster policy over its apps.
//!
//! This module owns the configuration and its checks only (what an operator writes in the rm's
//! `--queues` file, as [`QueueFile`], read by the caller); the [`Scheduler`] enforces the shares
//! (`scheduler/queues.rs`). Without a file there is one queue, `default`, at 100 % running the
//! rm's `--scheduler` policy ([`Queues::single`]): the scheduler then decides exactly what it
//! decided before queues existed.
//!
//! [`Scheduler`]: crate::scheduler::Scheduler

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::policy::ClusterPolicy;

/// The queue every application goes to when there is no queue file (YARN's `default`).
pub const DEFAULT_QUEUE: &str = "default";

/// How long a queue below its guarantee with asks waiting goes without before containers are
/// taken back for it from queues above theirs, ms: YARN's
/// `yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill` (15 000 ms), the time
/// YARN's ProportionalCapacityPreemptionPolicy gives a container marked for preemption before
/// it kills it. yard marks nothing: it waits this long on the starved queue, then kills.
pub const DEFAULT_MAX_WAIT_BEFORE_KILL_MS: u64 = 15_000;

/// Who may submit to a queue: YARN's `acl_submit_applications`, users only (yard has no
/// groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acl {
    /// `*`: everyone.
    All,
    /// These users (an empty list: no one but an admin).
    Users(BTreeSet<String>),
}

impl Acl {
    /// YARN's form: `*`, or users separated by commas (`alice,bob`). A group list after a space
    /// (YARN's `users groups`) is refused: yard knows no groups.
    pub fn parse(s: &str) -> Result<Acl, String> {
        let s = s.trim();
        if s == "*" {
            return Ok(Acl::All);
        }
        if s.contains(char::is_whitespace) {
            return Err(format!(
                "{s:?}: yard has no groups; list users separated by commas (no spaces), or * for all"
            ));
        }
        let users: BTreeSet<String> = s
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .collect();
        if users.contains("*") {
            return Err(format!("{s:?}: * stands alone (everyone), not in a list"));
        }
        Ok(Acl::Users(users))
    }

    pub fn allows(&self, user: &str) -> bool {
        match self {
            Acl::All => true,
            Acl::Users(users) => users.contains(user),
        }
    }
}

impl std::fmt::Display for Acl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Acl::All => f.write_str("*"),
            Acl::Users(u) => f.write_str(&u.iter().cloned().collect::<Vec<_>>().join(",")),
        }
    }
}

/// One leaf queue under `root`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    pub name: String,
    /// Its guaranteed share of the cluster, percent.
    pub capacity: f64,
    /// The most of the cluster it may hold when others leave room, percent (≥ `capacity`).
    pub maximum_capacity: f64,
    /// One user may hold this many times `capacity` (never above `maximum_capacity`).
    pub user_limit_factor: f64,
    pub acl_submit_applications: Acl,
    /// The cluster policy that orders its applications within its share.
    pub policy: ClusterPolicy,
}

impl QueueConfig {
    /// The most one user of this queue may hold, percent of the cluster.
    pub fn user_limit(&self) -> f64 {
        (self.capacity * self.user_limit_factor).min(self.maximum_capacity)
    }
}

/// The queues, checked: leaves under `root` whose capacities sum to 100.
#[derive(Debug, Clone, PartialEq)]
pub struct Queues {
    queues: Vec<QueueConfig>,
    max_wait_before_kill_ms: u64,
    /// From a queue file (`false`: the one implicit `default` queue).
    configured: bool,
}

/// What is wrong with a queue file, saying what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QueueError(pub String);

impl Queues {
    /// No queue file: one `default` queue at 100 %, running `policy`, open to all.
    pub fn single(policy: ClusterPolicy) -> Queues {
        Queues {
            queues: vec![QueueConfig {
                name: DEFAULT_QUEUE.into(),
                capacity: 100.0,
                maximum_capacity: 100.0,
                user_limit_factor: 1.0,
                acl_submit_applications: Acl::All,
                policy,
            }],
            max_wait_before_kill_ms: DEFAULT_MAX_WAIT_BEFORE_KILL_MS,
            configured: false,
        }
    }

    /// Checks `queues`: at least one, names unique and plain, every share a percentage, the
    /// capacities summing to 100 (YARN's rule for a parent's children), each maximum at least
    /// its capacity, user-limit factors positive.
    pub fn new(
        queues: Vec<QueueConfig>,
        max_wait_before_kill_ms: u64,
    ) -> Result<Queues, QueueError> {
        let bad = |s: String| Err(QueueError(s));
        if queues.is_empty() {
            return bad("no queue: add [[queue]] tables, each with a name and a capacity".into());
        }
        let mut names = BTreeSet::new();
        for q in &queues {
            let n = &q.name;
            if n.is_empty()
                || n.len() > 64
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return bad(format!(
                    "queue {n:?}: a name is 1–64 letters, digits, - or _ (no dots: the queues are leaves of root)"
                ));
            }
            if n == "root" {
                return bad(
                    "queue \"root\": root is the parent of every queue; name the leaves only"
                        .into(),
                );
            }
            if !names.insert(n.clone()) {
                return bad(format!("queue {n:?} is named twice"));
            }
            if !(q.capacity.is_finite() && (0.0..=100.0).contains(&q.capacity)) {
                return bad(format!(
                    "queue {n:?}: capacity {} is not a percentage from 0 to 100",
                    q.capacity
                ));
            }
            if !(q.maximum_capacity.is_finite()
                && (q.capacity..=100.0).contains(&q.maximum_capacity))
            {
                return bad(format!(
                    "queue {n:?}: maximum-capacity {} must be from its capacity ({}) to 100",
                    q.maximum_capacity, q.capacity
                ));
            }
            if !(q.user_limit_factor.is_finite() && q.user_limit_factor > 0.0) {
                return bad(format!(
                    "queue {n:?}: user-limit-factor {} must be a number above 0 (1: one user may hold the queue's capacity)",
                    q.user_limit_factor
                ));
            }
        }
        let sum: f64 = queues.iter().map(|q| q.capacity).sum();
        if (sum - 100.0).abs() > 1e-6 {
            let list: Vec<String> = queues
                .iter()
                .map(|q| format!("{} {}", q.name, q.capacity))
                .collect();
            return bad(format!(
                "the queues' capacities sum to {sum} %, not 100 ({}): make them add up to 100",
                list.join(", ")
            ));
        }
        Ok(Queues {
            queues,
            max_wait_before_kill_ms,
            configured: true,
        })
    }

    /// Whether these come from a queue file (else the one implicit `default` queue).
    pub fn configured(&self) -> bool {
        self.configured
    }

    pub fn all(&self) -> &[QueueConfig] {
        &self.queues
    }

    pub fn len(&self) -> usize {
        self.queues.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// How long a starved queue waits before containers are taken back for it, ms.
    pub fn max_wait_before_kill_ms(&self) -> u64 {
        self.max_wait_before_kill_ms
    }

    /// The queue named `name`, with its index.
    pub fn get(&self, name: &str) -> Option<(usize, &QueueConfig)> {
        self.queues.iter().enumerate().find(|(_, q)| q.name == name)
    }

    /// The queue an application naming `name` runs in: that queue; without a queue file, the
    /// one queue whatever the name; else (an application recovered from before the file
    /// changed) `default` if there is one, else the first.
    pub fn index_of(&self, name: &str) -> usize {
        if !self.configured {
            return 0;
        }
        self.get(name)
            .or_else(|| self.get(DEFAULT_QUEUE))
            .map_or(0, |(i, _)| i)
    }

    /// Whether `user` may submit to `queue`: the queue must exist and its ACL admit the user
    /// (an admin may submit anywhere, as YARN's queue administrators may).
    pub fn check_submit(&self, queue: &str, user: &str, admin: bool) -> Result<(), QueueError> {
        let Some((_, q)) = self.get(queue) else {
            let names: Vec<&str> = self.queues.iter().map(|q| q.name.as_str()).collect();
            return Err(QueueError(format!(
                "no queue {}: the queues are {}",
                yard_wire::limits::echo(queue),
                names.join(", ")
            )));
        };
        if admin || q.acl_submit_applications.allows(user) {
            Ok(())
        } else {
            Err(QueueError(format!(
                "user {} may not submit to queue {}: its acl-submit-applications is {:?}",
                yard_wire::limits::echo(user),
                q.name,
                q.acl_submit_applications.to_string()
            )))
        }
    }
}

/// A queue file as an operator writes it (TOML: `[[queue]]` tables, and an optional
/// `[preemption]` table), before its checks: read it with any TOML reader, then
/// [`QueueFile::into_queues`].
///
/// ```toml
/// [preemption]
/// max_wait_before_kill = 15000   # ms
///
/// [[queue]]
/// name = "team-a"
/// capacity = 50
/// maximum-capacity = 100
/// user-limit-factor = 2
/// acl-submit-applications = "alice,bob"
/// policy = "minedf-wc"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueFile {
    #[serde(default)]
    pub preemption: PreemptionFile,
    #[serde(default)]
    pub queue: Vec<QueueEntry>,
}

/// `[preemption]`: Hadoop's `yarn.resourcemanager.monitor.capacity.preemption.*` names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreemptionFile {
    /// ms [default: [`DEFAULT_MAX_WAIT_BEFORE_KILL_MS`]].
    pub max_wait_before_kill: Option<u64>,
}

/// One `[[queue]]` table: Hadoop's `yarn.scheduler.capacity.root.<name>.*` names, and yard's
/// `policy`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct QueueEntry {
    pub name: String,
    pub capacity: f64,
    /// [default: 100]
    pub maximum_capacity: Option<f64>,
    /// [default: 1]
    pub user_limit_factor: Option<f64>,
    /// [default: `*`]
    pub acl_submit_applications: Option<String>,
    /// fifo, fair, edf, minedf, minedf-wc [default: the rm's `--scheduler`].
    pub policy: Option<String>,
}

impl QueueFile {
    /// The checked queues; a queue without a policy runs `default_policy`.
    pub fn into_queues(self, default_policy: ClusterPolicy) -> Result<Queues, QueueError> {
        let mut queues = Vec::with_capacity(self.queue.len());
        for e in self.queue {
            let acl = match e.acl_submit_applications.as_deref() {
                None => Acl::All,
                Some(s) => Acl::parse(s).map_err(|m| {
                    QueueError(format!("queue {:?}: acl-submit-applications {m}", e.name))
                })?,
            };
            let policy = match e.policy.as_deref() {
                None => default_policy,
                Some(p) => p
                    .parse()
                    .map_err(|m| QueueError(format!("queue {:?}: policy: {m}", e.name)))?,
            };
            queues.push(QueueConfig {
                maximum_capacity: e.maximum_capacity.unwrap_or(100.0),
                user_limit_factor: e.user_limit_factor.unwrap_or(1.0),
                acl_submit_applications: acl,
                policy,
                capacity: e.capacity,
                name: e.name,
            });
        }
        Queues::new(
            queues,
            self.preemption
                .max_wait_before_kill
                .unwrap_or(DEFAULT_MAX_WAIT_BEFORE_KILL_MS),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, capacity: f64) -> QueueEntry {
        QueueEntry {
            name: name.into(),
            capacity,
            maximum_capacity: None,
            user_limit_factor: None,
            acl_submit_applications: None,
            policy: None,
        }
    }

    fn file(queue: Vec<QueueEntry>) -> QueueFile {
        QueueFile {
            preemption: PreemptionFile::default(),
            queue,
        }
    }

    fn error(f: QueueFile) -> String {
        f.into_queues(ClusterPolicy::Fifo).unwrap_err().0
    }

    #[test]
    fn defaults_are_yarns() {
        let q = file(vec![entry("a", 60.0), entry("b", 40.0)])
            .into_queues(ClusterPolicy::Edf)
            .unwrap();
        assert!(q.configured());
        assert_eq!(q.max_wait_before_kill_ms(), 15_000);
        let (i, b) = q.get("b").unwrap();
        assert_eq!(i, 1);
        assert_eq!(b.maximum_capacity, 100.0);
        assert_eq!(b.user_limit_factor, 1.0);
        assert_eq!(b.acl_submit_applications, Acl::All);
        assert_eq!(b.policy, ClusterPolicy::Edf);
        assert_eq!(b.user_limit(), 40.0);
    }

    #[test]
    fn capacities_must_sum_to_100() {
        let e = error(file(vec![entry("a", 60.0), entry("b", 30.0)]));
        assert!(e.contains("sum to 90 %, not 100 (a 60, b 30)"), "{e}");
    }

    #[test]
    fn bad_queues_are_named() {
        let mut low = entry("a", 100.0);
        low.maximum_capacity = Some(50.0);
        let e = error(file(vec![low]));
        assert!(
            e.contains("queue \"a\": maximum-capacity 50 must be from its capacity (100)"),
            "{e}"
        );
        let e = error(file(vec![entry("a", 50.0), entry("a", 50.0)]));
        assert!(e.contains("\"a\" is named twice"), "{e}");
        let e = error(file(vec![entry("root.a", 100.0)]));
        assert!(e.contains("no dots"), "{e}");
        let mut p = entry("a", 100.0);
        p.policy = Some("lifo".into());
        let e = error(file(vec![p]));
        assert!(
            e.contains("queue \"a\": policy: unknown scheduler \"lifo\""),
            "{e}"
        );
        let mut u = entry("a", 100.0);
        u.user_limit_factor = Some(0.0);
        assert!(error(file(vec![u])).contains("user-limit-factor 0"));
        let mut g = entry("a", 100.0);
        g.acl_submit_applications = Some("alice staff".into());
        assert!(error(file(vec![g])).contains("yard has no groups"));
        assert!(error(file(vec![])).contains("no queue"));
        assert!(error(file(vec![entry("a", 150.0)])).contains("capacity 150 is not a percentage"));
    }

    #[test]
    fn submissions_name_a_queue_their_acl_admits() {
        let mut a = entry("a", 50.0);
        a.acl_submit_applications = Some("alice,bob".into());
        let q = file(vec![a, entry("b", 50.0)])
            .into_queues(ClusterPolicy::Fifo)
            .unwrap();
        assert!(q.check_submit("a", "alice", false).is_ok());
        assert!(q.check_submit("b", "carol", false).is_ok());
        let e = q.check_submit("a", "carol", false).unwrap_err().0;
        assert!(e.contains("user carol may not submit to queue a"), "{e}");
        assert!(q.check_submit("a", "carol", true).is_ok());
        let e = q.check_submit("c", "alice", false).unwrap_err().0;
        assert_eq!(e, "no queue c: the queues are a, b");
    }

    #[test]
    fn without_a_file_every_app_is_in_default() {
        let q = Queues::single(ClusterPolicy::MinEdf);
        assert!(!q.configured());
        assert_eq!(q.index_of("anything"), 0);
        assert_eq!(q.all()[0].name, "default");
        assert_eq!(q.all()[0].policy, ClusterPolicy::MinEdf);
        assert!(q.check_submit("default", "x", false).is_ok());
        assert!(q.check_submit("other", "x", false).is_err());
    }
}
