//! The resource manager's state, without IO: nodes and their heartbeats (silent past the
//! expiry → LOST, their containers complete as LOST), applications and their lifecycles, the
//! allocate protocol over the [`Scheduler`], and a signed token on every container. The
//! daemon turns HTTP calls into these methods, passes the time in, and carries out what they
//! return: masters to start and containers to stop, in each node's heartbeat reply. Every
//! container is in one book ([`crate::book`]), freed once.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use yard_wire::auth::{BearerKey, ClusterSecret, Principal};
use yard_wire::deadline::DeadlineOutcome;
use yard_wire::limits::echo;
use yard_wire::protocol::Registered;
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, Allocated, ContainerEnd, ContainerStatus, Dataset,
    HeartbeatReply, JobProgress, JobType, NodeHeartbeat, RegisterNode, Resource, StartContainer,
    TaskBound, application_of, container_id, epoch_of,
};
use yard_wire::telemetry::NodeTelemetry;
use yard_wire::token::{TokenKey, mint};

use crate::app::{AppAction, AppEvent, AppState, FinalStatus, InvalidTransition, Lifecycle};
use crate::book::ContainerBook;
pub use crate::book::ContainerMeta;
use crate::overload::{Bound, ClassifierConfig, LoadSource, ModelCounts, NodeLoad, NodeOverload};
use crate::policy::{JobModel, JobQuota, PolicyKind, SpareCounts};
use crate::scheduler::{
    self, AppId, Ask, Assignment, Place, RackId, Resources, SchedEvent, Scheduler,
};

mod undo;
pub use undo::{Touch, Undo};

/// Settings that shape the rm's decisions.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// A node silent this long is LOST.
    pub node_expiry_ms: i64,
    /// How long a container token stays valid after its grant.
    pub token_ttl_ms: i64,
    /// A granted container its node has not listed as running this long is taken back
    /// (YARN's `yarn.resourcemanager.rm.container-allocation.expiry-interval-ms`): a master
    /// that never starts what it was given does not hold it for ever.
    pub allocation_expiry_ms: i64,
    pub am_max_attempts: u32,
    /// A registered master silent this long (no allocate, no register) has failed its attempt
    /// (YARN's `yarn.am.liveness-monitor.expiry-interval-ms`).
    pub am_expiry_ms: i64,
    /// The resource of an application master's container.
    pub am_resource: Resource,
    /// The cluster policy (`yard rm --scheduler`).
    pub scheduler: PolicyKind,
    /// The share of the cluster masters may hold together (YARN's
    /// maximum-am-resource-percent; at least one master always runs).
    pub master_share: f64,
    /// The overload classifier, a placement filter under the cluster policy (`yard rm
    /// --overload-classifier on`); `None`: off.
    pub overload: Option<ClassifierConfig>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            node_expiry_ms: 10_000,
            token_ttl_ms: 600_000,
            allocation_expiry_ms: 600_000,
            am_max_attempts: crate::app::DEFAULT_AM_MAX_ATTEMPTS,
            am_expiry_ms: 600_000,
            am_resource: Resource {
                memory_mb: 512,
                vcores: 1,
            },
            scheduler: PolicyKind::Fifo,
            master_share: scheduler::DEFAULT_MASTER_SHARE,
            overload: None,
        }
    }
}

/// What a client asked for, and why it cannot be done. Ids and names from outside are echoed
/// cut short ([`echo`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClusterError {
    #[error("no application {}", echo(.0))]
    UnknownApp(String),
    #[error("no node {}; nodes register before they heartbeat", echo(.0))]
    UnknownNode(String),
    #[error("application {} was already submitted", echo(.0))]
    AlreadySubmitted(String),
    #[error("{0}")]
    Transition(#[from] InvalidTransition),
    #[error("application {} is not running; only a running application's master may allocate", echo(.0))]
    NotRunning(String),
    #[error("ask {index}: {problem}")]
    BadAsk { index: usize, problem: String },
    #[error("{0}")]
    BadProgress(String),
    #[error("application {} has ended; its deadline can no longer change", echo(.0))]
    Ended(String),
    #[error("dataset {}: {problem}", echo(name))]
    BadDataset { name: String, problem: String },
    #[error("no dataset {}", echo(.0))]
    UnknownDataset(String),
    #[error(
        "application id {} was not issued by this rm (or was already used): ask POST /ws/v1/cluster/apps/new-application for one",
        echo(.0)
    )]
    NotIssued(String),
    #[error("application id {} was issued to {owner}, not to {caller}", echo(id))]
    IssuedToOther {
        id: String,
        owner: String,
        caller: String,
    },
    #[error(
        "{0} application ids are issued and not yet submitted; submit or wait for them to expire (1 h)"
    )]
    TooManyIssued(usize),
    #[error("application {id} keeps {max} recovery entries already, the most one may keep")]
    RecoveryFull { id: String, max: usize },
}

/// The most recovery entries one application may keep (a map each, for yard's masters).
pub const MAX_RECOVERY_ENTRIES: usize = 200_000;

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

/// A master the daemon must start: its container is granted, its token signed.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterLaunch {
    pub application_id: String,
    pub attempt: u32,
    pub container: Allocated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Running,
    Lost,
}

/// What the rm knows of a node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    pub node_id: String,
    pub rack: String,
    pub capability: Resource,
    pub state: NodeState,
    pub last_heartbeat_ms: i64,
    /// The node's last load sample (default until its first heartbeat). Kept in the store, so
    /// after an rm restart it is the last known load until the node's next heartbeat.
    pub telemetry: NodeTelemetry,
    /// When the rm received `telemetry`, ms since the epoch (`None`: no sample yet).
    pub telemetry_ms: Option<i64>,
}

/// How many load samples the rm keeps per node: a minute at the nodemanagers' default
/// heartbeat of 1 s, enough to see a trend beside the load averages; older samples drop out.
pub const TELEMETRY_HISTORY: usize = 60;

/// A node's last [`TELEMETRY_HISTORY`] load samples with the time the rm received each (ms
/// since the epoch), oldest first, in the order they arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryRing {
    samples: VecDeque<(i64, NodeTelemetry)>,
}

impl TelemetryRing {
    /// Adds the newest sample, dropping the oldest beyond [`TELEMETRY_HISTORY`].
    pub fn push(&mut self, at_ms: i64, sample: NodeTelemetry) {
        if self.samples.len() == TELEMETRY_HISTORY {
            self.samples.pop_front();
        }
        self.samples.push_back((at_ms, sample));
    }

    /// Oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (i64, &NodeTelemetry)> + '_ {
        self.samples.iter().map(|(at, t)| (*at, t))
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The newest sample.
    pub fn last(&self) -> Option<(i64, &NodeTelemetry)> {
        self.samples.back().map(|(at, t)| (*at, t))
    }
}

/// An application as submitted: who, where, and how to start its master (Hadoop's
/// submission context with its am-container-spec).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewApp {
    pub id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    /// When the answer is due, ms since the epoch (the submission's `deadline-ms`, or its
    /// `deadline=` tag).
    pub deadline_ms: Option<i64>,
    /// Hadoop's application tags, as submitted (lower-cased, as YARN keeps them).
    pub tags: Vec<String>,
    /// Hadoop's `application-type` (YARN's default `YARN` when empty).
    pub application_type: String,
    /// The master container's resource (`resource`); `None`: the rm's `am_resource`.
    pub am_resource: Option<Resource>,
    /// `max-app-attempts`; `None` (or over the rm's) takes the rm's `am_max_attempts`.
    pub max_attempts: Option<u32>,
}

/// What YARN's application report carries beyond yard's lifecycle, kept in the store as one
/// JSON value (`applications.yarn_json`).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct YarnFields {
    /// Hadoop's `applicationType`.
    pub application_type: String,
    /// The master container's resource.
    pub am_memory_mb: u64,
    pub am_vcores: u32,
    /// When it reached a final state, ms since the epoch.
    pub finished_ms: Option<i64>,
    /// Its ended containers' resources times their lifetimes (YARN's `memorySeconds`, MB·s, and
    /// `vcoreSeconds`); the running ones' are added when reported.
    pub memory_seconds: u64,
    pub vcore_seconds: u64,
    /// YARN's `LIFETIME` timeout: killed by the rm at this time (ms since the epoch).
    pub lifetime_expiry_ms: Option<i64>,
}

/// What an application has allocated: now, and over its life so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub allocated_mb: u64,
    pub allocated_vcores: u64,
    pub memory_seconds: u64,
    pub vcore_seconds: u64,
}

impl NewApp {
    /// An application whose master command is yet to be said.
    pub fn new(id: &str, name: &str, user: &str, queue: &str) -> NewApp {
        NewApp {
            id: id.into(),
            name: name.into(),
            user: user.into(),
            queue: queue.into(),
            ..NewApp::default()
        }
    }
}

/// What the store keeps of an application: enough to report it after a restart.
#[derive(Debug, Clone, PartialEq)]
pub struct AppRecord {
    pub id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub lifecycle: Lifecycle,
    pub progress: f64,
    pub submitted_ms: i64,
    pub attempts: Vec<AttemptInfo>,
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    pub deadline_ms: Option<i64>,
    pub result: Option<AppResult>,
    pub tags: Vec<String>,
    /// What its master registered of its work (task counts, profile), for the quotas.
    pub model: Option<JobModel>,
    pub yarn: YarnFields,
}

/// What a deadline-bound job answered: from how much of its input, the answer itself (opaque
/// to the rm: the master's JSON), and when the rm received it.
#[derive(Debug, Clone, PartialEq)]
pub struct AppResult {
    pub processed_fraction: f64,
    pub answer: serde_json::Value,
    /// The rm's clock when the answer arrived, ms since the epoch: the time its deadline
    /// outcome counts (see [`deadline_outcome`]).
    pub answered_ms: i64,
}

/// How long before its receipt at the rm an answer counts as given: none. The user reads the
/// answer from the rm, so it is given when the rm has it; an allowance for the call from the
/// master would call met what the user saw late (it was 1 s, half of a short job's deadline).
/// A master's own `job.outcome`, by its own clock, may say met for an answer that reached the
/// rm just after the deadline: the rm's `deadlineOutcome` is the one of record.
pub const ANSWER_TRANSIT_MS: i64 = 0;

/// Where an application stands against its deadline (`None`: it has none), from its deadline,
/// its answer (when the rm received it, from what fraction of the input), its end (when, and
/// whether it succeeded) and the time now; the last answer reported is the one that stands.
/// An answer is judged by the masters' rule ([`DeadlineOutcome::of_answer`]) at its receipt
/// less [`ANSWER_TRANSIT_MS`]. Without an answer: an application that succeeded answered by
/// its end, from all its input (a YARN application reports no result); one that failed or was
/// killed never will (missed); one still running has missed once the deadline has passed,
/// else it is pending.
pub fn deadline_outcome(
    deadline_ms: Option<i64>,
    answer: Option<(i64, f64)>,
    end: Option<(i64, FinalStatus)>,
    now_ms: i64,
) -> Option<DeadlineOutcome> {
    let d = deadline_ms?;
    let by = |at: i64, fraction| {
        DeadlineOutcome::of_answer(d, at.saturating_sub(ANSWER_TRANSIT_MS), fraction)
    };
    Some(match (answer, end) {
        (Some((at, fraction)), _) => by(at, fraction),
        (None, Some((at, FinalStatus::Succeeded))) => by(at, 1.0),
        (None, Some(_)) => DeadlineOutcome::Missed,
        (None, None) if now_ms.saturating_sub(ANSWER_TRANSIT_MS) > d => DeadlineOutcome::Missed,
        (None, None) => DeadlineOutcome::Pending,
    })
}

impl AppInfo {
    /// [`deadline_outcome`] of this application at `now_ms`.
    pub fn deadline_outcome(&self, now_ms: i64) -> Option<DeadlineOutcome> {
        let end = self.lifecycle.state.is_final().then(|| {
            (
                self.yarn.finished_ms.unwrap_or(now_ms),
                self.lifecycle.final_status,
            )
        });
        deadline_outcome(
            self.deadline_ms,
            self.result
                .as_ref()
                .map(|r| (r.answered_ms, r.processed_fraction)),
            end,
            now_ms,
        )
    }
}

impl AppInfo {
    pub fn record(&self) -> AppRecord {
        AppRecord {
            id: self.application_id.clone(),
            name: self.name.clone(),
            user: self.user.clone(),
            queue: self.queue.clone(),
            lifecycle: self.lifecycle.clone(),
            progress: self.progress,
            submitted_ms: self.submitted_ms,
            attempts: self.attempts.clone(),
            master_command: self.master_command.clone(),
            master_env: self.master_env.clone(),
            deadline_ms: self.deadline_ms,
            result: self.result.clone(),
            tags: self.tags.clone(),
            model: self.model,
            yarn: self.yarn.clone(),
        }
    }
}

/// One master attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptInfo {
    pub attempt: u32,
    pub container_id: String,
    pub node_id: String,
    pub started_ms: i64,
}

/// The cluster policy and what it has done, for `GET /ws/v1/cluster/scheduler`.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerReport {
    pub policy: PolicyKind,
    pub master_share: f64,
    pub capacity: Resources,
    pub masters_used: Resources,
    pub spare: SpareCounts,
    /// The overload classifier's counts and settings, when on.
    pub overload: Option<ModelCounts>,
}

/// Cluster-wide counts, as Hadoop's `/ws/v1/cluster/metrics` reports them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    pub apps_submitted: usize,
    pub apps_pending: usize,
    pub apps_running: usize,
    pub apps_completed: usize,
    pub apps_failed: usize,
    pub apps_killed: usize,
    pub total_mb: u64,
    pub allocated_mb: u64,
    pub total_vcores: u64,
    pub allocated_vcores: u64,
    pub containers_allocated: usize,
    pub active_nodes: usize,
    pub lost_nodes: usize,
}

/// What the rm knows of an application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppInfo {
    pub application_id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub lifecycle: Lifecycle,
    pub progress: f64,
    pub submitted_ms: i64,
    /// The master's container of the current attempt, once granted.
    pub master: Option<String>,
    /// Every master attempt's container, oldest first (Hadoop's appattempts).
    pub attempts: Vec<AttemptInfo>,
    /// How to start the master: its command and environment.
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    /// When the client wants the answer, ms since the epoch (yard's, not Hadoop's).
    pub deadline_ms: Option<i64>,
    pub result: Option<AppResult>,
    pub tags: Vec<String>,
    /// What its master registered of its work, for the quotas.
    pub model: Option<JobModel>,
    /// Its quota under the cluster policy, as last computed (`None` under a policy without
    /// quotas).
    pub quota: Option<JobQuota>,
    /// Where the current master serves its own status, if it said (not kept across restarts:
    /// a master that survives one registers again).
    pub tracking_url: Option<String>,
    /// When the master last called (register or allocate), for the liveness check.
    pub master_seen_ms: i64,
    /// Its map and reduce types, as its master last said (seed 002 eq. 1–2; not kept across
    /// restarts: the master says it with every allocate).
    pub job_type: Option<JobType>,
    /// A MapReduce master's view of its job, as it last said (not kept across restarts: the
    /// master says it with every allocate).
    pub job_progress: Option<ProgressSeen>,
    /// When the job's estimate said it would answer, over time (at most one point a second,
    /// thinned to [`ESTIMATE_POINTS`] over the whole run).
    pub estimates: Vec<EstimatePoint>,
    /// YARN's report fields yard keeps (type, master resource, end, resource-seconds,
    /// lifetime).
    pub yarn: YarnFields,
    /// Granted or completed since the master last asked: its next allocate reply.
    pending: AllocateReply,
}

/// A master's [`JobProgress`] and when the rm heard it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressSeen {
    pub progress: JobProgress,
    pub at_ms: i64,
    /// When the policy's estimate says the answer comes, on the rm's clock: now, plus the
    /// estimate less the time the phase has run.
    pub estimated_end_ms: Option<i64>,
}

/// One point of a job's estimate over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EstimatePoint {
    pub at_ms: i64,
    pub estimated_end_ms: i64,
}

/// The most estimate points an application keeps: past it every other one goes, so the
/// points span the whole run at half the density.
pub const ESTIMATE_POINTS: usize = 512;

impl ProgressSeen {
    fn new(progress: JobProgress, at_ms: i64) -> ProgressSeen {
        let estimated_end_ms = progress.estimate_seconds.map(|e| {
            let left_ms = (e - progress.elapsed_seconds) * 1000.0;
            at_ms.saturating_add(left_ms.clamp(-1e15, 1e15) as i64)
        });
        ProgressSeen {
            progress,
            at_ms,
            estimated_end_ms,
        }
    }
}

/// A master's progress numbers are times and counts: anything else is a bug to refuse.
fn check_progress(p: &JobProgress) -> Result<(), String> {
    let seconds = |x: f64| x.is_finite() && x >= 0.0;
    if !seconds(p.elapsed_seconds) || !p.estimate_seconds.is_none_or(seconds) {
        return Err(format!(
            "job.elapsedSeconds and job.estimateSeconds are seconds from 0 up (got {} and {:?})",
            p.elapsed_seconds, p.estimate_seconds
        ));
    }
    if p.maps_done > p.maps || p.reduces_done > p.reduces || p.processed_bytes > p.input_bytes {
        return Err(format!(
            "job counts done exceed their totals (maps {}/{}, reduces {}/{}, bytes {}/{})",
            p.maps_done, p.maps, p.reduces_done, p.reduces, p.processed_bytes, p.input_bytes
        ));
    }
    Ok(())
}

impl AppInfo {
    fn heard(&mut self, progress: JobProgress, now_ms: i64) {
        let seen = ProgressSeen::new(progress, now_ms);
        if let Some(end) = seen.estimated_end_ms
            && self
                .estimates
                .last()
                .is_none_or(|p| now_ms - p.at_ms >= 1_000)
        {
            if self.estimates.len() >= ESTIMATE_POINTS {
                let mut i = 0;
                self.estimates.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
            }
            self.estimates.push(EstimatePoint {
                at_ms: now_ms,
                estimated_end_ms: end,
            });
        }
        self.job_progress = Some(seen);
    }
}

pub struct Cluster {
    settings: Settings,
    secret: ClusterSecret,
    bearer: BearerKey,
    /// Each node's container-token key (derived from the secret), by node id.
    node_keys: BTreeMap<String, TokenKey>,
    /// Application ids handed out by `new_application` and not yet submitted: to whom, when.
    issued: BTreeMap<String, (String, i64)>,
    /// Who put each dataset (the only user, beside admins, who may replace it).
    dataset_owners: BTreeMap<String, String>,
    /// Part of every application id: YARN's cluster timestamp, the rm's start time.
    epoch: i64,
    /// How many times the rm restarted on its state (YARN's rm epoch): part of every container
    /// id, so a restarted rm never hands out an id an earlier one did.
    restart_epoch: u64,
    scheduler: Scheduler,
    nodes: BTreeMap<String, NodeInfo>,
    node_index: BTreeMap<String, scheduler::NodeId>,
    node_names: BTreeMap<scheduler::NodeId, String>,
    racks: BTreeMap<String, RackId>,
    apps: BTreeMap<String, AppInfo>,
    app_index: BTreeMap<AppId, String>,
    app_ids: BTreeMap<String, AppId>,
    next_app: u64,
    /// The time of the call being handled: grants made during it are signed from then.
    now_ms: i64,
    /// Every container granted and not yet freed: the one book every count reads.
    book: ContainerBook,
    /// Container ends so far, by how they ended ([`ContainerEnd::ALL`]'s order), for the
    /// metrics: each container once, however many times (or whether) its node reports its
    /// end — when freed, or for one the rm stopped while it ran, when its node reports it
    /// (`stopping`).
    ended: [u64; ContainerEnd::ALL.len()],
    /// Containers the rm ended while their nodes ran them, until the node reports the end:
    /// counted then, as the node saw it (a preemption as one), so a finished job's master
    /// that exits by itself counts as exited. By id: its node, and how it counts if not as
    /// reported.
    stopping: BTreeMap<String, (String, Option<ContainerEnd>)>,
    launches: Vec<MasterLaunch>,
    /// Containers each node must stop, told in its next heartbeat reply.
    stop_orders: BTreeMap<String, Vec<String>>,
    /// Applications and nodes changed since the store last took them.
    dirty_apps: BTreeSet<String>,
    dirty_nodes: BTreeSet<String>,
    /// Datasets' block maps, by name; and those changed since the store last took them.
    datasets: BTreeMap<String, Dataset>,
    dirty_datasets: BTreeSet<String>,
    /// Containers a rejoining node reported, in the order the scheduler answers them.
    recovering: VecDeque<(String, AppId, Resource)>,
    /// What each unfinished application's master keeps for its next attempt, by key; and the
    /// entries changed since the store last took them.
    recovery: BTreeMap<String, BTreeMap<String, String>>,
    dirty_recovery: BTreeSet<(String, String)>,
    /// The rm's own URL, given to every master as `YARD_RM` so it can reach the rm.
    url: Option<String>,
    /// Set for every master (the submission's own variables win).
    master_env: BTreeMap<String, String>,
    /// Each node's recent load samples (beside `NodeInfo`, which the store copies at every
    /// change: the ring stays here). Not stored: after a restart it starts from the last
    /// sample the store kept.
    telemetry_history: BTreeMap<String, TelemetryRing>,
    /// While a state-changing request on an application runs under the journal: that
    /// application and the actions its transitions call for (stopping containers, asking for a
    /// master), held until the change is saved: a change whose write fails is put back, and
    /// these could not be (see `undo`).
    held: Option<(String, Vec<AppAction>)>,
}

/// Whether freeing a container also orders its node to stop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Yes,
    No,
}

/// The priority an application master's container is asked at (before any of its tasks).
const AM_PRIORITY: u32 = scheduler::MASTER_PRIORITY;

/// How long an issued application id may wait for its submission.
const ISSUED_TTL_MS: i64 = 3_600_000;
/// The most issued, unsubmitted application ids at once (each is a few bytes; the cap bounds a
/// client that asks in a loop).
pub const MAX_ISSUED: usize = 10_000;

/// What changed in the rm's state, for the store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub apps: Vec<AppRecord>,
    pub nodes: Vec<NodeInfo>,
    pub datasets: Vec<(Dataset, String)>,
    /// Recovery entries written: (application, key, value).
    pub recovery: Vec<(String, String, String)>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
            && self.nodes.is_empty()
            && self.datasets.is_empty()
            && self.recovery.is_empty()
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
        upsert(&mut self.nodes, later.nodes, |n| n.node_id.clone());
        upsert(&mut self.datasets, later.datasets, |d| d.0.name.clone());
        upsert(&mut self.recovery, later.recovery, |r| {
            format!("{}/{}", r.0, r.1)
        });
    }
}

impl Cluster {
    pub fn new(settings: Settings, secret: ClusterSecret, epoch: i64) -> Self {
        Cluster {
            bearer: secret.bearer_key(),
            secret,
            node_keys: BTreeMap::new(),
            issued: BTreeMap::new(),
            dataset_owners: BTreeMap::new(),
            url: None,
            master_env: BTreeMap::new(),
            telemetry_history: BTreeMap::new(),
            held: None,
            datasets: BTreeMap::new(),
            dirty_datasets: BTreeSet::new(),
            recovering: VecDeque::new(),
            recovery: BTreeMap::new(),
            dirty_recovery: BTreeSet::new(),
            scheduler: {
                let s = Scheduler::new(settings.scheduler).with_master_share(settings.master_share);
                match settings.overload {
                    Some(config) => s.with_overload_classifier(config),
                    None => s,
                }
            },
            settings,
            epoch,
            restart_epoch: 0,
            nodes: BTreeMap::new(),
            node_index: BTreeMap::new(),
            node_names: BTreeMap::new(),
            racks: BTreeMap::new(),
            apps: BTreeMap::new(),
            app_index: BTreeMap::new(),
            app_ids: BTreeMap::new(),
            next_app: 1,
            now_ms: epoch,
            book: ContainerBook::default(),
            ended: [0; ContainerEnd::ALL.len()],
            stopping: BTreeMap::new(),
            launches: Vec::new(),
            stop_orders: BTreeMap::new(),
            dirty_apps: BTreeSet::new(),
            dirty_nodes: BTreeSet::new(),
        }
    }

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

    /// Datasets changed since the last call, with their owners, for the store.
    pub fn take_dirty_datasets(&mut self) -> Vec<(Dataset, String)> {
        std::mem::take(&mut self.dirty_datasets)
            .iter()
            .filter_map(|n| {
                let owner = self.dataset_owners.get(n).cloned().unwrap_or_default();
                Some((self.datasets.get(n).cloned()?, owner))
            })
            .collect()
    }

    pub fn restore_datasets(&mut self, datasets: Vec<(Dataset, String)>) {
        for (d, owner) in datasets {
            self.dataset_owners.insert(d.name.clone(), owner);
            self.datasets.insert(d.name.clone(), d);
        }
    }

    /// Everything changed since the last call, for the store to write in one transaction.
    pub fn take_changes(&mut self) -> Changes {
        let (apps, nodes) = self.take_dirty();
        let recovery = std::mem::take(&mut self.dirty_recovery)
            .into_iter()
            .filter_map(|(app, key)| {
                let value = self.recovery.get(&app)?.get(&key)?.clone();
                Some((app, key, value))
            })
            .collect();
        Changes {
            apps,
            nodes,
            datasets: self.take_dirty_datasets(),
            recovery,
        }
    }

    /// Changes the store failed to write are written again with the next ones (by id, so
    /// the then-current state is what gets written).
    pub fn mark_changed(&mut self, changes: &Changes) {
        self.dirty_apps
            .extend(changes.apps.iter().map(|a| a.id.clone()));
        self.dirty_nodes
            .extend(changes.nodes.iter().map(|n| n.node_id.clone()));
        self.dirty_datasets
            .extend(changes.datasets.iter().map(|(d, _)| d.name.clone()));
        self.dirty_recovery.extend(
            changes
                .recovery
                .iter()
                .map(|(app, key, _)| (app.clone(), key.clone())),
        );
    }

    /// Brings back the recovery entries the store kept (for unfinished applications).
    pub fn restore_recovery(&mut self, entries: Vec<(String, String, String)>) {
        for (app, key, value) in entries {
            let unfinished = self
                .apps
                .get(&app)
                .is_some_and(|a| !a.lifecycle.state.is_final());
            if unfinished {
                self.recovery.entry(app).or_default().insert(key, value);
            }
        }
    }

    /// A running master keeps `entries` (key → JSON value, opaque to the rm) for its next
    /// attempt; a key written again is replaced, so a retried call changes nothing. Refused
    /// past [`MAX_RECOVERY_ENTRIES`] per application, whole.
    pub fn put_recovery(
        &mut self,
        id: &str,
        entries: BTreeMap<String, String>,
    ) -> Result<usize, ClusterError> {
        let app = self
            .apps
            .get(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state != AppState::Running {
            return Err(ClusterError::NotRunning(id.into()));
        }
        let kept = self.recovery.entry(id.to_owned()).or_default();
        let new = entries.keys().filter(|k| !kept.contains_key(*k)).count();
        if kept.len() + new > MAX_RECOVERY_ENTRIES {
            return Err(ClusterError::RecoveryFull {
                id: id.into(),
                max: MAX_RECOVERY_ENTRIES,
            });
        }
        for (key, value) in entries {
            self.dirty_recovery.insert((id.to_owned(), key.clone()));
            kept.insert(key, value);
        }
        Ok(kept.len())
    }

    /// What `id`'s masters kept for a next attempt, by key.
    pub fn recovery(&self, id: &str) -> impl Iterator<Item = (&String, &String)> {
        self.recovery.get(id).into_iter().flatten()
    }

    /// Where the rm listens, e.g. `http://127.0.0.1:8088`: masters are told it as `YARD_RM`.
    /// The rm's own URL, if the daemon said it.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The rm's restart count on its state (the store keeps it): part of container ids.
    pub fn set_restart_epoch(&mut self, epoch: u64) {
        self.restart_epoch = epoch;
    }

    pub fn set_url(&mut self, url: String) {
        self.url = Some(url);
    }

    /// A variable every master gets, whatever its submission says: the cluster's own settings
    /// (e.g. `YARD_PROFILES`, the job-profile store all masters share).
    pub fn set_master_env(&mut self, name: &str, value: String) {
        self.master_env.insert(name.into(), value);
    }

    /// Brings back what the store kept, after an rm restart. Applications are known and
    /// reported again in their states; unfinished ones rejoin the scheduler, and one whose
    /// master was never granted asks for it again. Nodes come back LOST until they register
    /// again (their next heartbeat is told to): the new scheduler knows nothing of them yet.
    pub fn restore(&mut self, apps: Vec<AppRecord>, nodes: Vec<NodeInfo>) {
        for n in nodes {
            if let Some(at) = n.telemetry_ms {
                self.telemetry_history
                    .entry(n.node_id.clone())
                    .or_default()
                    .push(at, n.telemetry.clone());
            }
            self.nodes.insert(
                n.node_id.clone(),
                NodeInfo {
                    state: NodeState::Lost,
                    ..n
                },
            );
        }
        for r in apps {
            let app = AppId(self.app_index.len() as u64 + 1);
            self.app_index.insert(app, r.id.clone());
            self.app_ids.insert(r.id.clone(), app);
            let unfinished = !r.lifecycle.state.is_final();
            let needs_master = r.lifecycle.state == AppState::Accepted
                && r.attempts.len() < r.lifecycle.attempts as usize;
            self.apps.insert(
                r.id.clone(),
                AppInfo {
                    application_id: r.id.clone(),
                    name: r.name,
                    user: r.user,
                    queue: r.queue.clone(),
                    lifecycle: r.lifecycle,
                    progress: r.progress,
                    submitted_ms: r.submitted_ms,
                    master: None,
                    attempts: r.attempts,
                    master_command: r.master_command,
                    master_env: r.master_env,
                    deadline_ms: r.deadline_ms,
                    result: r.result,
                    tags: r.tags,
                    model: r.model,
                    yarn: r.yarn,
                    quota: None,
                    // A master of a restored application has until the expiry, from the rm's
                    // start, to call the new rm.
                    master_seen_ms: self.epoch,
                    tracking_url: None,
                    job_type: None,
                    job_progress: None,
                    estimates: Vec::new(),
                    pending: AllocateReply::default(),
                },
            );
            if unfinished {
                self.schedule(SchedEvent::AppAdded {
                    app,
                    queue: r.queue,
                    weight: 1.0,
                });
                self.schedule(SchedEvent::Deadline {
                    app,
                    deadline_ms: r.deadline_ms,
                });
                self.schedule(SchedEvent::Model {
                    app,
                    model: r.model,
                });
            }
            if needs_master {
                self.ask_master(app);
            }
        }
    }

    /// Asks the scheduler for an application master's container.
    fn ask_master(&mut self, app: AppId) {
        let r = self
            .app_index
            .get(&app)
            .and_then(|id| self.apps.get(id))
            .filter(|a| a.yarn.am_memory_mb > 0 && a.yarn.am_vcores > 0)
            .map_or(self.settings.am_resource, |a| Resource {
                memory_mb: a.yarn.am_memory_mb,
                vcores: a.yarn.am_vcores,
            });
        let ask = Ask {
            priority: AM_PRIORITY,
            place: Place::Any,
            size: Resources::new(r.memory_mb, r.vcores),
            count: 1,
            relax_locality: true,
        };
        self.schedule(SchedEvent::Asks {
            app,
            asks: vec![ask],
        });
    }

    /// Counts over applications, nodes and allocated resources.
    pub fn metrics(&self) -> Metrics {
        let mut m = Metrics {
            apps_submitted: self.apps.len(),
            ..Metrics::default()
        };
        for a in self.apps.values() {
            match a.lifecycle.state {
                AppState::New | AppState::Submitted | AppState::Accepted => m.apps_pending += 1,
                AppState::Running => m.apps_running += 1,
                AppState::Finished => m.apps_completed += 1,
                AppState::Failed => m.apps_failed += 1,
                AppState::Killed => m.apps_killed += 1,
            }
        }
        for (_, c) in self.book.iter() {
            m.allocated_mb += c.resource.memory_mb;
            m.allocated_vcores += u64::from(c.resource.vcores);
        }
        m.containers_allocated = self.book.len();
        for n in self.nodes.values() {
            match n.state {
                NodeState::Running => {
                    m.active_nodes += 1;
                    m.total_mb += n.capability.memory_mb;
                    m.total_vcores += u64::from(n.capability.vcores);
                }
                NodeState::Lost => m.lost_nodes += 1,
            }
        }
        m
    }

    /// What an authenticated nodemanager gets at registration: its own container-token key
    /// and the data key.
    pub fn registration(&self, node_id: &str) -> Registered {
        Registered {
            container_key: self.secret.container_key(node_id).to_hex(),
            data_key: self.secret.data_key().to_hex(),
        }
    }

    /// The bearer key the REST layer checks callers' tokens with.
    pub fn bearer_key(&self) -> &BearerKey {
        &self.bearer
    }

    /// The attempt whose master may act for `id` now: the latest, while the application runs
    /// or waits for that master.
    pub fn current_attempt(&self, id: &str) -> Option<u32> {
        self.apps
            .get(id)
            .filter(|a| !a.lifecycle.state.is_final())
            .map(|a| a.lifecycle.attempts)
    }

    /// Who put dataset `name`, if anyone has.
    pub fn dataset_owner(&self, name: &str) -> Option<&str> {
        self.dataset_owners.get(name).map(String::as_str)
    }

    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }

    pub fn node(&self, node_id: &str) -> Option<&NodeInfo> {
        self.nodes.get(node_id)
    }

    /// A node's recent load samples with the time the rm received each (ms since the epoch),
    /// oldest first; at most [`TELEMETRY_HISTORY`]. Empty for an unknown node, or one that has
    /// sent none since the rm started (the store's last sample excepted).
    pub fn telemetry_history(&self, node_id: &str) -> impl Iterator<Item = (i64, &NodeTelemetry)> {
        self.telemetry_history
            .get(node_id)
            .into_iter()
            .flat_map(TelemetryRing::iter)
    }

    pub fn apps(&self) -> impl Iterator<Item = &AppInfo> {
        self.apps.values()
    }

    pub fn app(&self, id: &str) -> Option<&AppInfo> {
        self.apps.get(id)
    }

    /// A node joins (or rejoins after being lost or after an rm restart).
    pub fn register_node(&mut self, now_ms: i64, r: RegisterNode) {
        self.now_ms = now_ms;
        let next_rack = RackId(self.racks.len() as u32);
        let rack = *self.racks.entry(r.rack.clone()).or_insert(next_rack);
        let next_node = scheduler::NodeId(self.node_index.len() as u32);
        let id = *self
            .node_index
            .entry(r.node_id.clone())
            .or_insert(next_node);
        self.node_names.insert(id, r.node_id.clone());
        // A node that rejoins keeps its last known load until its next heartbeat.
        let (telemetry, telemetry_ms) = self
            .nodes
            .remove(&r.node_id)
            .map(|n| (n.telemetry, n.telemetry_ms))
            .unwrap_or_default();
        self.nodes.insert(
            r.node_id.clone(),
            NodeInfo {
                node_id: r.node_id,
                rack: r.rack,
                capability: r.capability,
                state: NodeState::Running,
                last_heartbeat_ms: now_ms,
                telemetry,
                telemetry_ms,
            },
        );
        self.dirty_nodes.insert(self.node_names[&id].clone());
        // A node registering again while the rm still books containers it ran (its
        // nodemanager restarted, say) no longer runs those it does not list: they are lost.
        let listed: Vec<String> = r
            .containers
            .iter()
            .map(|c| c.container_id.clone())
            .collect();
        self.lose_unlisted(&self.node_names[&id].clone(), &listed);
        // What the node already runs: containers of unfinished applications granted by an
        // earlier rm are taken back (work-preserving restart); any other is an orphan (its
        // application ended, or this rm already reported it LOST) and is stopped.
        let mut running = Vec::new();
        for c in r.containers {
            if self.book.get(&c.container_id).is_some() {
                self.book.mark_running(&c.container_id);
                continue;
            }
            let app = application_of(&c.container_id)
                .filter(|_| epoch_of(&c.container_id) != Some(self.restart_epoch))
                .and_then(|a| self.app_ids.get(&a).copied());
            match app {
                Some(app) => {
                    let size = Resources::new(c.resource.memory_mb, c.resource.vcores);
                    let master = self
                        .app_index
                        .get(&app)
                        .and_then(|a| self.apps.get(a))
                        .is_some_and(|a| {
                            a.attempts
                                .last()
                                .is_some_and(|t| t.container_id == c.container_id)
                        });
                    running.push(scheduler::Running { app, size, master });
                    self.recovering.push_back((c.container_id, app, c.resource));
                }
                None => self.stop_on(id, c.container_id),
            }
        }
        let capacity = Resources::new(r.capability.memory_mb, r.capability.vcores);
        self.schedule(SchedEvent::NodeAdded {
            node: id,
            rack,
            capacity,
            running,
        });
        self.debug_check();
    }

    fn stop_on(&mut self, node: scheduler::NodeId, container: String) {
        let name = self.node_names[&node].clone();
        self.stop_orders.entry(name).or_default().push(container);
    }

    /// A container taken back from a rejoining node; a master's own makes its attempt current.
    fn recovered(
        &mut self,
        container: scheduler::ContainerId,
        id: String,
        app: AppId,
        node: scheduler::NodeId,
        resource: Resource,
    ) {
        let Some(app_id) = self.app_index.get(&app).cloned() else {
            return;
        };
        let node_id = self.node_names[&node].clone();
        if let Some(info) = self.apps.get_mut(&app_id)
            && info.attempts.last().is_some_and(|a| a.container_id == id)
        {
            info.master = Some(id.clone());
        }
        tracing::info!(container = %id, node = %node_id, "recovered");
        let attempt = id
            .rsplit('_')
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(1);
        self.book_container(
            id,
            ContainerMeta {
                application_id: app_id,
                attempt,
                node_id,
                resource,
                priority: 0,
                started_ms: self.now_ms,
                sched: container,
                running: true,
            },
        );
    }

    /// A node's heartbeat: its load, and the containers that ended on it.
    pub fn heartbeat(&mut self, now_ms: i64, hb: NodeHeartbeat) -> HeartbeatReply {
        self.now_ms = now_ms;
        let Some(node) = self
            .nodes
            .get_mut(&hb.node_id)
            .filter(|n| n.state == NodeState::Running)
        else {
            return HeartbeatReply {
                reregister: true,
                ..HeartbeatReply::default()
            };
        };
        node.last_heartbeat_ms = now_ms;
        node.telemetry_ms = Some(now_ms);
        self.telemetry_history
            .entry(hb.node_id.clone())
            .or_default()
            .push(now_ms, hb.telemetry.clone());
        node.telemetry = hb.telemetry;
        let load = self
            .settings
            .overload
            .and_then(|c| node_load(&node.telemetry, c.rule.source, node.capability));
        self.dirty_nodes.insert(hb.node_id.clone());
        // The load first: placements the ended containers make room for see it.
        if let (Some(load), Some(&idx)) = (load, self.node_index.get(&hb.node_id)) {
            self.schedule(SchedEvent::NodeLoad { node: idx, load });
        }
        for status in hb.completed {
            if let Some((_, counted_as)) = self.stopping.remove(&status.container_id) {
                self.count_end(counted_as.unwrap_or(status.end));
            }
            self.container_ended(status);
        }
        self.reconcile(&hb.node_id, &hb.running);
        // Masters granted on this node start now (the rm launches masters through heartbeats).
        let (here, elsewhere): (Vec<MasterLaunch>, Vec<MasterLaunch>) =
            std::mem::take(&mut self.launches)
                .into_iter()
                .partition(|l| l.container.node_id == hb.node_id);
        self.launches = elsewhere;
        let start = here
            .into_iter()
            .filter_map(|l| {
                // A launch that lost its race (the app ended, or this attempt was re-placed
                // while the node was away) must not start a second master.
                let app = self.apps.get(&l.application_id).filter(|a| {
                    !a.lifecycle.state.is_final()
                        && a.master.as_deref() == Some(l.container.container_id.as_str())
                })?;
                let mut env = self.master_env.clone();
                env.extend(app.master_env.clone());
                env.insert("APPLICATION_ID".into(), l.application_id.clone());
                env.insert("APP_ATTEMPT".into(), l.attempt.to_string());
                env.insert("CONTAINER_ID".into(), l.container.container_id.clone());
                // The master's credential for the rm: good for this application and attempt.
                let principal = Principal::Master {
                    app: l.application_id.clone(),
                    attempt: l.attempt,
                };
                env.insert("YARD_TOKEN".into(), self.bearer.issue(&principal));
                if let Some(url) = &self.url {
                    env.insert("YARD_RM".into(), url.clone());
                }
                Some(StartContainer {
                    token: Some(l.container.token),
                    command: app.master_command.clone(),
                    env,
                })
            })
            .collect();
        self.debug_check();
        HeartbeatReply {
            stop: self.stop_orders.remove(&hb.node_id).unwrap_or_default(),
            start,
            reregister: false,
        }
    }

    /// In debug builds (every test, and a debug daemon), a change that parts the books
    /// panics at once, naming what disagrees.
    fn debug_check(&self) {
        #[cfg(debug_assertions)]
        if let Err(e) = self.check_books() {
            panic!("the rm's container books disagree: {e}");
        }
    }

    /// Nodes silent past the expiry become LOST; their containers complete as LOST (a master
    /// on one fails its attempt). Returns the nodes lost now.
    pub fn expire(&mut self, now_ms: i64) -> Vec<String> {
        self.now_ms = now_ms;
        let lost: Vec<String> = self
            .nodes
            .values()
            .filter(|n| {
                n.state == NodeState::Running
                    && now_ms - n.last_heartbeat_ms > self.settings.node_expiry_ms
            })
            .map(|n| n.node_id.clone())
            .collect();
        for id in &lost {
            if let Some(n) = self.nodes.get_mut(id) {
                n.state = NodeState::Lost;
            }
            self.dirty_nodes.insert(id.clone());
            self.stop_orders.remove(id);
            // Containers the rm was stopping there: their node will not report them now.
            let mut unreported = Vec::new();
            self.stopping.retain(|_, (node, counted_as)| {
                let here = node == id;
                if here {
                    unreported.push(*counted_as);
                }
                !here
            });
            for counted_as in unreported {
                self.count_end(counted_as.unwrap_or(ContainerEnd::Killed));
            }
            // Masters waiting for this node's heartbeat to start never will: their containers
            // complete as LOST below, and their attempts fail over to other nodes.
            self.launches.retain(|l| l.container.node_id != *id);
            self.schedule(SchedEvent::NodeRemoved(self.node_index[id]));
        }
        // Registered masters that fell silent: their attempt failed (its containers are
        // stopped; another attempt is launched while attempts remain).
        let silent: Vec<String> = self
            .apps
            .values()
            .filter(|a| {
                a.lifecycle.state == AppState::Running
                    && now_ms - a.master_seen_ms > self.settings.am_expiry_ms
            })
            .map(|a| a.application_id.clone())
            .collect();
        for id in silent {
            let _ = self.transition(&id, AppEvent::MasterFailed);
        }
        // YARN's LIFETIME timeout: the rm kills what outlives it.
        let expired: Vec<String> = self
            .apps
            .values()
            .filter(|a| {
                !a.lifecycle.state.is_final()
                    && a.yarn.lifetime_expiry_ms.is_some_and(|t| now_ms >= t)
            })
            .map(|a| a.application_id.clone())
            .collect();
        for id in expired {
            if self.transition(&id, AppEvent::Kill).is_ok()
                && let Some(app) = self.apps.get_mut(&id)
            {
                app.lifecycle.diagnostics =
                    "Application is killed by ResourceManager as it has exceeded the lifetime period."
                        .into();
            }
        }
        // Granted containers never started within the allocation expiry: taken back, and
        // their masters told (YARN's container allocation expiry).
        let unstarted: Vec<String> = self
            .book
            .iter()
            .filter(|(_, m)| {
                !m.running && now_ms - m.started_ms > self.settings.allocation_expiry_ms
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in unstarted {
            tracing::warn!(container = %id, "granted and never started: taken back");
            let master = self
                .book
                .get(&id)
                .and_then(|m| self.apps.get(&m.application_id))
                .is_some_and(|a| a.master.as_deref() == Some(id.as_str()));
            match master {
                // A master never started fails its attempt, as one its node could not start.
                true => self.container_ended(ContainerStatus {
                    container_id: id,
                    end: ContainerEnd::LaunchFailed,
                    exit_code: None,
                }),
                false => self.end_task(&id, ContainerEnd::Killed),
            }
        }
        // Quotas follow the time left; promised releases that did not come are reclaimed.
        self.schedule(SchedEvent::Tick);
        self.debug_check();
        lost
    }

    /// Container ends since the rm started, by how they ended, each container once: as its
    /// node reported it (also for one the rm stopped while it ran), LOST with its node,
    /// PREEMPTED, or KILLED when the rm ended one its node never reports (never started, or
    /// its node lost first); in [`ContainerEnd::ALL`]'s order.
    pub fn containers_ended(&self) -> impl Iterator<Item = (ContainerEnd, u64)> + '_ {
        ContainerEnd::ALL.into_iter().zip(self.ended)
    }

    /// `new-application`: an id for an application `owner` is about to submit. Only ids issued
    /// here may be submitted, by their owner (or an admin), once; one not submitted within an
    /// hour lapses, and at most [`MAX_ISSUED`] wait at once.
    pub fn new_application(&mut self, now_ms: i64, owner: &str) -> Result<String, ClusterError> {
        self.issued
            .retain(|_, (_, issued_ms)| now_ms - *issued_ms <= ISSUED_TTL_MS);
        if self.issued.len() >= MAX_ISSUED {
            return Err(ClusterError::TooManyIssued(self.issued.len()));
        }
        let id = format!("application_{}_{:04}", self.epoch, self.next_app);
        self.next_app += 1;
        self.issued.insert(id.clone(), (owner.to_owned(), now_ms));
        Ok(id)
    }

    /// [`Cluster::submit`] by `caller`, who must be the one the id was issued to (or an admin).
    pub fn submit_issued(
        &mut self,
        now_ms: i64,
        new: NewApp,
        caller: &Principal,
    ) -> Result<(), ClusterError> {
        if let Some((owner, _)) = self.issued.get(&new.id)
            && !caller.owns(owner)
        {
            return Err(ClusterError::IssuedToOther {
                id: new.id,
                owner: owner.clone(),
                caller: caller.user().unwrap_or("?").to_owned(),
            });
        }
        self.submit(now_ms, new)
    }

    /// A data-plane grant signed with the cluster's data key (nodemanagers check it).
    pub fn data_token(&self, grant: &yard_wire::auth::DataGrant) -> String {
        self.secret.data_key().issue(grant)
    }

    /// The credential of `host`'s shared scan of `dataset` (`ClusterSecret::scan_token`).
    pub fn scan_token(&self, dataset: &str, host: &str) -> String {
        self.secret.scan_token(dataset, host)
    }

    /// Submits an application whose id this rm issued; it is accepted at once and its
    /// master's container asked for.
    pub fn submit(&mut self, now_ms: i64, new: NewApp) -> Result<(), ClusterError> {
        let NewApp {
            id,
            name,
            user,
            queue,
            master_command: command,
            master_env: env,
            deadline_ms,
            tags,
            application_type,
            am_resource,
            max_attempts,
        } = new;
        let (id, name, user, queue) = (id.as_str(), name.as_str(), user.as_str(), queue.as_str());
        self.now_ms = now_ms;
        if self.apps.contains_key(id) {
            return Err(ClusterError::AlreadySubmitted(id.to_owned()));
        }
        if self.issued.remove(id).is_none() {
            return Err(ClusterError::NotIssued(id.to_owned()));
        }
        // YARN's rule: a submission's max-app-attempts counts when it is 1 to the rm's own.
        let attempts = match max_attempts {
            Some(n) if (1..=self.settings.am_max_attempts).contains(&n) => n,
            _ => self.settings.am_max_attempts,
        };
        let mut lifecycle = Lifecycle::new(attempts);
        lifecycle.apply(AppEvent::Submit)?;
        let am = am_resource.unwrap_or(self.settings.am_resource);
        let yarn = YarnFields {
            application_type: if application_type.is_empty() {
                "YARN".into()
            } else {
                application_type
            },
            am_memory_mb: am.memory_mb,
            am_vcores: am.vcores,
            ..YarnFields::default()
        };
        let app = AppId(self.app_index.len() as u64 + 1);
        self.app_index.insert(app, id.to_owned());
        self.app_ids.insert(id.to_owned(), app);
        self.apps.insert(
            id.to_owned(),
            AppInfo {
                application_id: id.to_owned(),
                name: name.to_owned(),
                user: user.to_owned(),
                queue: queue.to_owned(),
                lifecycle,
                progress: 0.0,
                submitted_ms: now_ms,
                master: None,
                attempts: Vec::new(),
                master_command: command,
                master_env: env,
                deadline_ms,
                result: None,
                tags,
                model: None,
                yarn,
                quota: None,
                master_seen_ms: now_ms,
                tracking_url: None,
                job_type: None,
                job_progress: None,
                estimates: Vec::new(),
                pending: AllocateReply::default(),
            },
        );
        self.schedule(SchedEvent::AppAdded {
            app,
            queue: queue.to_owned(),
            weight: 1.0,
        });
        if deadline_ms.is_some() {
            self.schedule(SchedEvent::Deadline { app, deadline_ms });
        }
        self.transition(id, AppEvent::Accept)
    }

    /// The master registered: the application runs.
    pub fn master_registered(
        &mut self,
        id: &str,
        tracking_url: Option<String>,
    ) -> Result<(), ClusterError> {
        self.transition(id, AppEvent::MasterRegistered)?;
        let now = self.now_ms;
        if let Some(app) = self.apps.get_mut(id) {
            app.master_seen_ms = now;
            app.tracking_url = tracking_url;
        }
        Ok(())
    }

    /// The master unregistered at `now_ms` with its final status and its diagnostics (YARN's
    /// FinishApplicationMasterRequest: why it failed, kept in the application's diagnostics).
    pub fn master_finished(
        &mut self,
        now_ms: i64,
        id: &str,
        succeeded: bool,
        diagnostics: &str,
    ) -> Result<(), ClusterError> {
        self.now_ms = now_ms;
        self.transition(id, AppEvent::MasterFinished { succeeded })?;
        self.debug_check();
        let said = diagnostics.trim();
        if let Some(app) = self.apps.get_mut(id)
            && !said.is_empty()
        {
            let d = &mut app.lifecycle.diagnostics;
            *d = if d.is_empty() {
                said.to_owned()
            } else {
                format!("{d}: {said}")
            };
        }
        Ok(())
    }

    /// The client says when it wants the answer (any time before the application ends).
    pub fn set_deadline(&mut self, id: &str, deadline_ms: i64) -> Result<(), ClusterError> {
        self.change_unfinished(id, |app| app.deadline_ms = Some(deadline_ms))?;
        let app = self.app_of(id);
        self.schedule(SchedEvent::Deadline {
            app,
            deadline_ms: Some(deadline_ms),
        });
        Ok(())
    }

    /// What the running master of `id` says of its work (task counts, a profile): the
    /// policies size its quota by it. Kept across rm restarts.
    pub fn set_model(&mut self, id: &str, model: JobModel) -> Result<(), ClusterError> {
        self.change_unfinished(id, |app| app.model = Some(model))?;
        let app = self.app_of(id);
        self.schedule(SchedEvent::Model {
            app,
            model: Some(model),
        });
        Ok(())
    }

    /// Changes application `id` with `f` unless it has ended, and marks it for the store.
    fn change_unfinished(
        &mut self,
        id: &str,
        f: impl FnOnce(&mut AppInfo),
    ) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state.is_final() {
            return Err(ClusterError::Ended(id.into()));
        }
        f(app);
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    /// The cluster policy and what it decided: for `GET /ws/v1/cluster/scheduler`.
    pub fn scheduler_report(&self) -> SchedulerReport {
        SchedulerReport {
            policy: self.scheduler.policy(),
            master_share: self.scheduler.master_share(),
            capacity: self.scheduler.capacity(),
            masters_used: self.scheduler.masters_used(),
            spare: self.scheduler.spare_counts(),
            overload: self.scheduler.overload().map(|c| c.counts()),
        }
    }

    /// The overload classifier's verdict on a node and the counts behind it; `None` when the
    /// classifier is off or the node unknown.
    pub fn node_overload(&self, node_id: &str) -> Option<NodeOverload> {
        let idx = self.node_index.get(node_id)?;
        Some(self.scheduler.overload()?.node(*idx))
    }

    /// Why the application's tasks are waiting, when the overload classifier refused every
    /// node with room for them in the last pass: one line for its diagnostics.
    pub fn refusal(&self, id: &str) -> Option<String> {
        let app = self.app_index.iter().find(|(_, a)| a.as_str() == id)?.0;
        let r = self.scheduler.refusal(*app)?;
        let nodes: Vec<String> = r
            .nodes
            .iter()
            .map(|(n, p)| {
                let name = self.node_names.get(n).map_or("?", String::as_str);
                format!("{name} (P(good) {p:.2})")
            })
            .collect();
        let more = r.refused.saturating_sub(r.nodes.len());
        Some(format!(
            "waiting: the overload classifier refuses every node with room for a task: {}{}",
            nodes.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }

    /// A running master reports its answer (again, as it improves); the last one stands.
    pub fn report_result(&mut self, id: &str, result: AppResult) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state != AppState::Running {
            return Err(ClusterError::NotRunning(id.into()));
        }
        app.result = Some(result);
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    pub fn kill(&mut self, id: &str) -> Result<(), ClusterError> {
        self.transition(id, AppEvent::Kill)?;
        self.debug_check();
        Ok(())
    }

    /// Sets (or with `None` lifts) YARN's `LIFETIME` timeout of an unfinished application.
    pub fn set_lifetime(&mut self, id: &str, expiry_ms: Option<i64>) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state.is_final() {
            return Err(ClusterError::Ended(id.into()));
        }
        app.yarn.lifetime_expiry_ms = expiry_ms;
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    /// Adds an ended container's resource-seconds to its application's.
    fn account(&mut self, meta: &ContainerMeta) {
        let secs = u64::try_from(self.now_ms.saturating_sub(meta.started_ms)).unwrap_or(0) / 1000;
        if let Some(app) = self.apps.get_mut(&meta.application_id) {
            app.yarn.memory_seconds = app
                .yarn
                .memory_seconds
                .saturating_add(meta.resource.memory_mb.saturating_mul(secs));
            app.yarn.vcore_seconds = app
                .yarn
                .vcore_seconds
                .saturating_add(u64::from(meta.resource.vcores).saturating_mul(secs));
            self.dirty_apps.insert(meta.application_id.clone());
        }
    }

    /// What `id` holds now and has held so far (its running containers counted up to `now_ms`).
    pub fn usage(&self, id: &str, now_ms: i64) -> Usage {
        let Some(app) = self.apps.get(id) else {
            return Usage::default();
        };
        let mut u = Usage {
            memory_seconds: app.yarn.memory_seconds,
            vcore_seconds: app.yarn.vcore_seconds,
            ..Usage::default()
        };
        for (_, meta) in self.book.of_app(id) {
            let secs = u64::try_from(now_ms.saturating_sub(meta.started_ms)).unwrap_or(0) / 1000;
            u.allocated_mb += meta.resource.memory_mb;
            u.allocated_vcores += u64::from(meta.resource.vcores);
            u.memory_seconds = u
                .memory_seconds
                .saturating_add(meta.resource.memory_mb.saturating_mul(secs));
            u.vcore_seconds = u
                .vcore_seconds
                .saturating_add(u64::from(meta.resource.vcores).saturating_mul(secs));
        }
        u
    }

    /// A live container's report.
    pub fn container(&self, id: &str) -> Option<&ContainerMeta> {
        self.book.get(id)
    }

    /// The live containers of `app`'s attempt `attempt`, by id.
    pub fn containers_of<'a>(
        &'a self,
        app: &'a str,
        attempt: u32,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.book
            .of_app(app)
            .filter(move |(_, m)| m.attempt == attempt)
    }

    /// How many containers `app` holds now (YARN's `runningContainers`).
    pub fn running_containers(&self, app: &str) -> usize {
        self.book.of_app(app).count()
    }

    /// The containers booked on `node`, by id (YARN's `numContainers` counts them).
    pub fn containers_on<'a>(
        &'a self,
        node: &str,
    ) -> impl Iterator<Item = (&'a String, &'a ContainerMeta)> + 'a {
        self.book.on_node(node)
    }

    /// The largest container the cluster could hold: its largest running node (YARN's
    /// `maximum-resource-capability`); with no node yet, the most any container may ask.
    pub fn max_resource(&self) -> Resource {
        let running = self
            .nodes
            .values()
            .filter(|n| n.state == NodeState::Running);
        let memory_mb = running.clone().map(|n| n.capability.memory_mb).max();
        let vcores = running.map(|n| n.capability.vcores).max();
        match (memory_mb, vcores) {
            (Some(memory_mb), Some(vcores)) => Resource { memory_mb, vcores },
            _ => Resource {
                memory_mb: yard_wire::limits::CONTAINER_MAX_MEMORY_MB,
                vcores: yard_wire::limits::CONTAINER_MAX_VCORES,
            },
        }
    }

    /// A running master's allocate call: its asks replace the previous ones, its releases go;
    /// the reply carries what was granted and what completed since its last call.
    pub fn allocate(
        &mut self,
        now_ms: i64,
        req: AllocateRequest,
    ) -> Result<AllocateReply, ClusterError> {
        self.now_ms = now_ms;
        let app_id = req.application_id.clone();
        let info = self
            .apps
            .get(&app_id)
            .ok_or_else(|| ClusterError::UnknownApp(app_id.clone()))?;
        if info.lifecycle.state != AppState::Running {
            return Err(ClusterError::NotRunning(app_id));
        }
        if let Some(p) = &req.job {
            check_progress(p).map_err(ClusterError::BadProgress)?;
        }
        if let Some(info) = self.apps.get_mut(&app_id) {
            info.master_seen_ms = now_ms;
        }
        let app = self.app_of(&app_id);
        let mut asks = Vec::with_capacity(req.asks.len());
        for (index, r) in req.asks.iter().enumerate() {
            let bad = |problem: String| ClusterError::BadAsk { index, problem };
            if r.priority == AM_PRIORITY {
                return Err(bad(format!(
                    "priority {AM_PRIORITY} is the master's own; ask at 1 or more"
                )));
            }
            if r.capability.memory_mb == 0 || r.capability.vcores == 0 {
                return Err(bad(
                    "a container needs some memory and at least one vcore".into()
                ));
            }
            let place = match r.resource_name.as_str() {
                "*" => Place::Any,
                name => match (self.node_index.get(name), self.racks.get(name)) {
                    (Some(n), _) => Place::Node(*n),
                    (None, Some(r)) => Place::Rack(*r),
                    // A name the rm does not know (yet): a node that has not registered since
                    // an rm restart, or one that left. YARN keeps such asks; asks here are
                    // absolute and sent again with every allocate, so skipping it now loses
                    // nothing once the node joins. Refusing it failed masters during a restart.
                    (None, None) => continue,
                },
            };
            let size = Resources::new(r.capability.memory_mb, r.capability.vcores);
            asks.push(Ask {
                priority: r.priority,
                place,
                size,
                count: r.num_containers,
                relax_locality: r.relax_locality,
            });
        }
        for release in &req.releases {
            if self
                .book
                .get(release)
                .is_some_and(|m| m.application_id == app_id)
            {
                // Freed now, and told as KILLED in this very reply (YARN reports a released
                // container as completed too).
                self.end_task(release, ContainerEnd::Killed);
            }
        }
        if let Some(t) = req.job_type
            && let Some(info) = self.apps.get_mut(&app_id)
            && info.job_type != Some(t)
        {
            info.job_type = Some(t);
            let bound = |b: Option<TaskBound>| {
                b.map(|b| match b {
                    TaskBound::Cpu => Bound::Cpu,
                    TaskBound::Io => Bound::Io,
                })
            };
            self.schedule(SchedEvent::JobType {
                app,
                map: bound(t.map),
                reduce: bound(t.reduce),
            });
        }
        let mut done = None;
        if let Some(info) = self.apps.get_mut(&app_id) {
            info.progress = req.progress.clamp(0.0, 1.0);
            if let Some(p) = req.job.clone() {
                info.heard(p, now_ms);
            }
            done = info.model.map(|m| match req.tasks {
                // A yard master's own counts: maps it will not run (Dart closed its map phase
                // at k) are as good as done for the quota.
                Some(t) => (
                    (t.maps_done + m.maps.saturating_sub(t.maps_to_run)).min(m.maps),
                    t.reduces_done.min(m.reduces),
                ),
                // Else progress as yard's masters report it: the maps done over the maps.
                None => ((info.progress * f64::from(m.maps)).floor() as u32, 0),
            });
        }
        self.dirty_apps.insert(app_id.clone());
        if let Some((maps_done, reduces_done)) = done {
            self.schedule(SchedEvent::Progress {
                app,
                maps_done,
                reduces_done,
            });
        }
        self.schedule(SchedEvent::Asks { app, asks });
        self.debug_check();
        Ok(std::mem::take(
            &mut self.apps.get_mut(&app_id).expect("checked above").pending,
        ))
    }

    /// Masters granted a container since the last call, for the daemon to launch.
    pub fn take_master_launches(&mut self) -> Vec<MasterLaunch> {
        std::mem::take(&mut self.launches)
    }

    fn app_of(&self, id: &str) -> AppId {
        self.app_ids[id]
    }

    fn transition(&mut self, id: &str, event: AppEvent) -> Result<(), ClusterError> {
        let info = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.to_owned()))?;
        let action = info.lifecycle.apply(event)?;
        if info.lifecycle.state.is_final() && info.yarn.finished_ms.is_none() {
            info.yarn.finished_ms = Some(self.now_ms);
        }
        if info.lifecycle.state.is_final() {
            // Its recovery entries are of no use any more (the store drops them with the
            // application's final record).
            self.recovery.remove(id);
        }
        self.dirty_apps.insert(id.to_owned());
        match &mut self.held {
            Some((held_for, actions)) if held_for == id => actions.push(action),
            _ => self.act(id, action),
        }
        Ok(())
    }

    /// Carries out what a transition of `id` calls for.
    fn act(&mut self, id: &str, action: AppAction) {
        let app = self.app_of(id);
        match action {
            AppAction::None => {}
            AppAction::LaunchMaster { .. } => {
                // A new attempt: the dead attempt's asks go first (else the room its
                // containers leave would be granted straight back to them, for a master that
                // is gone), then its containers, then the new master is asked for.
                self.schedule(SchedEvent::AsksWithdrawn(app));
                self.stop_all(id);
                self.ask_master(app);
            }
            AppAction::StopContainers => {
                // The scheduler forgets the application (its asks and its holdings) before
                // the book frees its containers, for the same reason.
                self.schedule(SchedEvent::AppRemoved(app));
                self.stop_all(id);
            }
        }
    }

    /// Ends every container of `id`: freed now, its node told to stop it.
    fn stop_all(&mut self, id: &str) {
        if let Some(info) = self.apps.get_mut(id) {
            info.master = None;
        }
        let held: Vec<String> = self.book.of_app(id).map(|(c, _)| c.clone()).collect();
        for c in held {
            self.free(&c, ContainerEnd::Killed, Stop::Yes);
        }
    }

    /// The one way a container leaves the book: freed once, whichever comes first — its node
    /// reports its end, its node is lost, or the rm ends it (a kill, the end of its attempt or
    /// application, a release, a preemption; `Stop::Yes` then tells its node to stop it). Its
    /// room goes back to the scheduler at once, its resource-seconds to its application, and
    /// its end is counted. `None`: it was freed before (or never booked).
    fn free(&mut self, id: &str, end: ContainerEnd, stop: Stop) -> Option<ContainerMeta> {
        let meta = self.book.remove(id)?;
        self.account(&meta);
        let node_runs = self
            .nodes
            .get(&meta.node_id)
            .is_some_and(|n| n.state == NodeState::Running);
        if stop == Stop::Yes && node_runs {
            self.stop_orders
                .entry(meta.node_id.clone())
                .or_default()
                .push(id.to_owned());
        }
        if stop == Stop::Yes && node_runs && meta.running {
            let counted_as = (end == ContainerEnd::Preempted).then_some(end);
            self.stopping
                .insert(id.to_owned(), (meta.node_id.clone(), counted_as));
        } else {
            self.count_end(end);
        }
        // A master launch still waiting for its node's heartbeat is never carried out.
        self.launches.retain(|l| l.container.container_id != id);
        if let Some(&app) = self.app_ids.get(&meta.application_id) {
            self.schedule(SchedEvent::ContainerCompleted {
                app,
                container: meta.sched,
            });
        }
        Some(meta)
    }

    fn count_end(&mut self, end: ContainerEnd) {
        if let Some(i) = ContainerEnd::ALL.iter().position(|e| *e == end) {
            self.ended[i] += 1;
        }
    }

    /// The rm ends a task container of a live application (a release, a preemption): freed,
    /// its node told to stop it, its master told in its next allocate reply.
    fn end_task(&mut self, id: &str, end: ContainerEnd) {
        let Some(meta) = self.free(id, end, Stop::Yes) else {
            return;
        };
        if let Some(info) = self.apps.get_mut(&meta.application_id) {
            info.pending.completed.push(ContainerStatus {
                container_id: id.to_owned(),
                end,
                exit_code: None,
            });
        }
    }

    /// A container's process ended on its node (or the node was lost).
    fn container_ended(&mut self, status: ContainerStatus) {
        // A master's end: its attempt's asks go before the room it leaves is offered, so
        // nothing is granted to an attempt that is gone.
        let master_of = self
            .book
            .get(&status.container_id)
            .filter(|m| {
                self.apps.get(&m.application_id).is_some_and(|a| {
                    !a.lifecycle.state.is_final()
                        && a.master.as_deref() == Some(status.container_id.as_str())
                })
            })
            .and_then(|m| self.app_ids.get(&m.application_id).copied());
        if let Some(app) = master_of {
            self.schedule(SchedEvent::AsksWithdrawn(app));
        }
        // Forgotten once ended: the rm's memory does not grow with every container ever run,
        // and a node that comes back listing it is told to stop it (see `reconcile`).
        let Some(meta) = self.free(&status.container_id, status.end, Stop::No) else {
            return;
        };
        let app_id = meta.application_id;
        let Some(info) = self.apps.get_mut(&app_id) else {
            return;
        };
        if info.master.as_deref() == Some(status.container_id.as_str()) {
            info.master = None;
            // A master that ended without unregistering failed its attempt.
            if !info.lifecycle.state.is_final() {
                let _ = self.transition(&app_id, AppEvent::MasterFailed);
            }
        } else {
            info.pending.completed.push(status);
        }
    }

    /// Feeds the scheduler and carries out its assignments.
    fn schedule(&mut self, event: SchedEvent) {
        let mut out = Vec::new();
        self.scheduler.handle_at(self.now_ms, event, &mut out);
        for a in out {
            match a {
                Assignment::Allocate {
                    app,
                    container,
                    node,
                    size,
                    priority,
                    ..
                } => self.granted(app, container, node, size, priority),
                Assignment::Recovered { container, node } => {
                    let Some((id, app, resource)) = self.recovering.pop_front() else {
                        continue;
                    };
                    match container {
                        Some(c) => self.recovered(c, id, app, node, resource),
                        None => self.stop_on(node, id),
                    }
                }
                Assignment::Lost { container, .. } => {
                    if let Some(id) = self.book.id_of(container).cloned() {
                        self.container_ended(ContainerStatus {
                            container_id: id,
                            end: ContainerEnd::Lost,
                            exit_code: None,
                        });
                    }
                }
                Assignment::Preempt { container, .. } => self.preempt(container),
                Assignment::Quota { app, quota } => {
                    if let Some(info) = self.app_index.get(&app).and_then(|a| self.apps.get_mut(a))
                    {
                        info.quota = Some(quota);
                    }
                }
            }
        }
    }

    /// An above-quota task container taken back (MinEDF-WC): freed at once (YARN's
    /// scheduler, too, frees a container it kills and lets the node catch up), its node told to
    /// stop it and its master that it was preempted (the attempt in it is lost, and runs
    /// again).
    fn preempt(&mut self, container: scheduler::ContainerId) {
        let Some(id) = self.book.id_of(container).cloned() else {
            return;
        };
        tracing::info!(container = %id, "preempted: above its quota, for an earlier deadline");
        self.end_task(&id, ContainerEnd::Preempted);
    }

    fn granted(
        &mut self,
        app: AppId,
        container: scheduler::ContainerId,
        node: scheduler::NodeId,
        size: Resources,
        priority: u32,
    ) {
        let Some(app_id) = self.app_index.get(&app).cloned() else {
            return;
        };
        let node_id = self.node_names[&node].clone();
        let Some(info) = self.apps.get_mut(&app_id) else {
            return;
        };
        let attempt = info.lifecycle.attempts;
        let id = container_id(self.restart_epoch, &app_id, attempt, container.0);
        let resource = Resource {
            memory_mb: size.memory_mb,
            vcores: size.vcores,
        };
        let key = self
            .node_keys
            .entry(node_id.clone())
            .or_insert_with(|| self.secret.container_key(&node_id));
        let token = mint(
            key,
            &id,
            &node_id,
            size.memory_mb,
            size.vcores,
            self.now_ms.saturating_add(self.settings.token_ttl_ms),
        );
        let allocated = Allocated {
            container_id: id.clone(),
            node_id: node_id.clone(),
            node_http_address: format!("http://{node_id}"),
            resource,
            priority,
            token,
        };
        if priority == AM_PRIORITY {
            self.dirty_apps.insert(app_id.clone());
            info.attempts.push(AttemptInfo {
                attempt,
                container_id: id.clone(),
                node_id: node_id.clone(),
                started_ms: self.now_ms,
            });
            info.master = Some(id.clone());
            self.launches.push(MasterLaunch {
                application_id: app_id.clone(),
                attempt,
                container: allocated,
            });
        } else {
            info.pending.allocated.push(allocated);
        }
        self.book_container(
            id,
            ContainerMeta {
                application_id: app_id,
                attempt,
                node_id,
                resource,
                priority,
                started_ms: self.now_ms,
                sched: container,
                running: false,
            },
        );
    }

    /// Books a container the scheduler placed. The scheduler numbers its containers upwards
    /// and the book refuses an id twice, so this cannot fail unless the books have parted —
    /// a bug, loud in debug builds and logged in release ones.
    fn book_container(&mut self, id: String, meta: ContainerMeta) {
        if let Err(e) = self.book.insert(id, meta) {
            debug_assert!(false, "{e}");
            tracing::error!(error = %e, "the container book refused a grant");
        }
    }

    /// What a node lists as running, against the book: a booked container it lists is
    /// running; one it listed before and lists no more, with no end reported, is gone (LOST);
    /// one it runs that the book does not hold (freed meanwhile: its attempt or application
    /// ended, or it was released, before its master started it) is told to stop.
    fn reconcile(&mut self, node: &str, running: &[String]) {
        self.lose_unlisted(node, running);
        for c in running {
            match self.book.get(c) {
                Some(m) if m.node_id == node => self.book.mark_running(c),
                _ => {
                    let orders = self.stop_orders.entry(node.to_owned()).or_default();
                    if !orders.contains(c) {
                        orders.push(c.clone());
                    }
                }
            }
        }
    }

    /// Containers `node` ran (it listed them before) and no longer lists, with no end
    /// reported: they are gone, as LOST.
    fn lose_unlisted(&mut self, node: &str, running: &[String]) {
        let listed: BTreeSet<&str> = running.iter().map(String::as_str).collect();
        let gone: Vec<String> = self
            .book
            .on_node(node)
            .filter(|(c, m)| m.running && !listed.contains(c.as_str()))
            .map(|(c, _)| c.clone())
            .collect();
        for c in gone {
            tracing::warn!(container = %c, %node, "its node no longer runs it and reported no end: lost");
            self.container_ended(ContainerStatus {
                container_id: c,
                end: ContainerEnd::Lost,
                exit_code: None,
            });
        }
    }

    /// The book's invariants, checked after every change in debug builds (and by tests): its
    /// indexes agree; it holds exactly what the scheduler holds, each for the same application
    /// and node; no running node holds more than its capacity; every booked application and
    /// node is known.
    pub fn check_books(&self) -> Result<(), String> {
        self.book.check()?;
        let mut held = 0;
        for (c, app, node, size) in self.scheduler.holdings() {
            held += 1;
            let id = self.book.id_of(c).ok_or_else(|| {
                format!("the scheduler holds {c:?} for {app:?}, the book does not")
            })?;
            let m = &self.book.get(id).expect("indexed");
            let (owner, on) = (
                self.app_ids.get(&m.application_id),
                self.node_index.get(&m.node_id),
            );
            if owner != Some(&app) || on != Some(&node) {
                return Err(format!(
                    "{id} is booked for {} on {}, the scheduler has {app:?} on {node:?}",
                    m.application_id, m.node_id
                ));
            }
            if (size.memory_mb, size.vcores) != (m.resource.memory_mb, m.resource.vcores) {
                return Err(format!(
                    "{id} is booked as {:?}, the scheduler has {size:?}",
                    m.resource
                ));
            }
        }
        if held != self.book.len() {
            return Err(format!(
                "the book holds {} containers, the scheduler {held}",
                self.book.len()
            ));
        }
        for n in self.nodes.values() {
            let booked = self.book.on_node(&n.node_id);
            let (mut mb, mut vcores, mut count) = (0u64, 0u64, 0usize);
            for (_, m) in booked {
                mb += m.resource.memory_mb;
                vcores += u64::from(m.resource.vcores);
                count += 1;
            }
            if n.state == NodeState::Lost && count > 0 {
                return Err(format!(
                    "lost node {} still holds {count} containers",
                    n.node_id
                ));
            }
            if mb > n.capability.memory_mb || vcores > u64::from(n.capability.vcores) {
                return Err(format!(
                    "node {} holds {mb} MB and {vcores} vcores, beyond its {:?}",
                    n.node_id, n.capability
                ));
            }
        }
        for (id, m) in self.book.iter() {
            if !self.apps.contains_key(&m.application_id) || !self.nodes.contains_key(&m.node_id) {
                return Err(format!(
                    "{id} is booked for an unknown application or node: {m:?}"
                ));
            }
        }
        Ok(())
    }
}

/// What the overload classifier reads of a node's sample, by the rule's load source; `None`
/// before the node's first sample (an older nodemanager reports no memory total).
///
/// `host`: the machine's 1-minute load average and CPU over its logical CPUs, its free memory,
/// and its disks' read+write rate over the node's disk rate. `own`: the nodemanager's process
/// tree — the cores it keeps busy stand for the load average (a tree has none of its own),
/// over the vcores the node offers; its resident memory against the memory the node offers;
/// its disk IO over the disk rate. Nodemanagers sharing a host read the same host load, so
/// `own` is what tells them apart.
pub fn node_load(t: &NodeTelemetry, source: LoadSource, offered: Resource) -> Option<NodeLoad> {
    if t.memory_total_bytes == 0 {
        return None;
    }
    let disk = |bytes_per_s: f64| {
        if t.disk_io_rate_bytes_per_s > 0.0 {
            bytes_per_s / t.disk_io_rate_bytes_per_s
        } else {
            0.0
        }
    };
    Some(match source {
        LoadSource::Host => NodeLoad {
            cores: if t.cores > 0 { t.cores } else { offered.vcores },
            load_1m: t.load_1m,
            cpu: (t.cpu_percent / 100.0).clamp(0.0, 1.0),
            memory_free: 1.0 - t.memory_used_bytes as f64 / t.memory_total_bytes as f64,
            disk: disk(t.disk_read_bytes_per_s + t.disk_write_bytes_per_s),
        },
        LoadSource::Own => {
            let cores = offered.vcores.max(1);
            let busy = t.own.cpu_percent / 100.0;
            let offered_bytes = (offered.memory_mb as f64 * 1048576.0).max(1.0);
            NodeLoad {
                cores,
                load_1m: busy,
                cpu: (busy / f64::from(cores)).clamp(0.0, 1.0),
                memory_free: (1.0 - t.own.rss_bytes as f64 / offered_bytes).max(0.0),
                disk: disk(t.own.read_bytes_per_s + t.own.write_bytes_per_s),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_wire::protocol::{NodeContainer, ResourceRequest};
    use yard_wire::token::verify;

    #[test]
    fn a_deadline_outcome_is_judged_at_the_answers_receipt_less_its_transit() {
        use DeadlineOutcome::*;
        let d = 10_000;
        let t = ANSWER_TRANSIT_MS;
        let judge = |answer, end, now| deadline_outcome(Some(d), answer, end, now);
        assert_eq!(deadline_outcome(None, Some((1, 1.0)), None, 0), None);
        assert_eq!(judge(Some((d + t, 0.3)), None, d + t), Some(Met));
        assert_eq!(judge(Some((d + t + 1, 0.3)), None, d + t + 1), Some(Missed));
        assert_eq!(judge(Some((d, 0.0)), None, d), Some(Empty));
        // The answer stands whatever the end.
        let failed = Some((d + 50_000, FinalStatus::Failed));
        assert_eq!(judge(Some((d, 0.5)), failed, d + 60_000), Some(Met));
        // No answer: a successful end is the answer; any other end, none will come.
        let succeeded = |at| Some((at, FinalStatus::Succeeded));
        assert_eq!(judge(None, succeeded(d - 1), d + 60_000), Some(Met));
        assert_eq!(judge(None, succeeded(d + t + 1), d + t + 1), Some(Missed));
        for end in [FinalStatus::Failed, FinalStatus::Killed] {
            assert_eq!(judge(None, Some((0, end)), 0), Some(Missed));
        }
        // Running: pending until the deadline and the transit allowance have passed.
        assert_eq!(judge(None, None, d + t), Some(Pending));
        assert_eq!(judge(None, None, d + t + 1), Some(Missed));
    }

    #[test]
    fn the_classifier_reads_the_host_or_the_nodemanagers_own_tree() {
        use yard_wire::telemetry::ProcessTreeUsage;
        let offered = Resource {
            memory_mb: 1024,
            vcores: 4,
        };
        assert_eq!(
            node_load(&NodeTelemetry::default(), LoadSource::Host, offered),
            None,
            "no sample yet"
        );
        let t = NodeTelemetry {
            cpu_percent: 50.0,
            load_1m: 3.0,
            memory_total_bytes: 1000,
            memory_used_bytes: 750,
            disk_read_bytes_per_s: 30.0,
            disk_write_bytes_per_s: 20.0,
            cores: 8,
            disk_io_rate_bytes_per_s: 100.0,
            own: ProcessTreeUsage {
                cpu_percent: 200.0,
                rss_bytes: 256 << 20,
                read_bytes_per_s: 10.0,
                write_bytes_per_s: 0.0,
                processes: 5,
            },
            ..NodeTelemetry::default()
        };
        let host = node_load(&t, LoadSource::Host, offered).unwrap();
        assert_eq!(
            (
                host.cores,
                host.load_1m,
                host.cpu,
                host.memory_free,
                host.disk
            ),
            (8, 3.0, 0.5, 0.25, 0.5)
        );
        // Own: two cores busy of the 4 offered, a quarter of the offered memory resident.
        let own = node_load(&t, LoadSource::Own, offered).unwrap();
        assert_eq!(
            (own.cores, own.load_1m, own.cpu, own.memory_free, own.disk),
            (4, 2.0, 0.5, 0.75, 0.1)
        );
        // An older nodemanager reports no cores: the offered vcores stand in.
        let old = NodeTelemetry { cores: 0, ..t };
        assert_eq!(node_load(&old, LoadSource::Host, offered).unwrap().cores, 4);
    }

    fn key_of(node: &str) -> TokenKey {
        ClusterSecret::new(KEY).container_key(node)
    }

    const KEY: [u8; 32] = [9; 32];

    fn cluster(nodes: &[(&str, &str)]) -> Cluster {
        let mut c = Cluster::new(Settings::default(), ClusterSecret::new(KEY), 1_000);
        for (node, rack) in nodes {
            let capability = Resource {
                memory_mb: 4096,
                vcores: 4,
            };
            c.register_node(
                1_000,
                RegisterNode {
                    node_id: (*node).into(),
                    rack: (*rack).into(),
                    capability,
                    containers: Vec::new(),
                },
            );
        }
        c
    }

    /// A faithful node's heartbeat: it runs every container the rm booked there, but those
    /// it reports ended.
    fn heartbeat(
        c: &mut Cluster,
        now: i64,
        node: &str,
        completed: Vec<ContainerStatus>,
    ) -> HeartbeatReply {
        let running = c
            .containers_on(node)
            .map(|(id, _)| id.clone())
            .filter(|id| !completed.iter().any(|s| s.container_id == *id))
            .collect();
        c.heartbeat(
            now,
            NodeHeartbeat {
                node_id: node.into(),
                running,
                completed,
                telemetry: NodeTelemetry::default(),
            },
        )
    }

    fn ended(c: &Cluster, end: ContainerEnd) -> u64 {
        c.containers_ended()
            .find(|(e, _)| *e == end)
            .map_or(0, |(_, n)| n)
    }

    fn ask(count: u32, at: &str) -> ResourceRequest {
        ResourceRequest {
            priority: 1,
            resource_name: at.into(),
            capability: Resource {
                memory_mb: 1024,
                vcores: 1,
            },
            num_containers: count,
            relax_locality: true,
        }
    }

    fn allocate(
        c: &mut Cluster,
        now: i64,
        app: &str,
        asks: Vec<ResourceRequest>,
        releases: Vec<String>,
    ) -> Result<AllocateReply, ClusterError> {
        c.allocate(
            now,
            AllocateRequest {
                application_id: app.into(),
                asks,
                releases,
                progress: 0.5,
                tasks: None,
                job_type: None,
                job: None,
            },
        )
    }

    /// Submits an application and registers its master; returns its id and master launch.
    fn running_app(c: &mut Cluster) -> (String, MasterLaunch) {
        let id = c.new_application(2_000, "alice").unwrap();
        c.submit(2_000, NewApp::new(&id, "wordcount", "alice", "default"))
            .unwrap();
        let launches = c.take_master_launches();
        assert_eq!(launches.len(), 1);
        c.master_registered(&id, None).unwrap();
        (id, launches[0].clone())
    }

    #[test]
    fn a_submitted_app_gets_a_master_with_a_valid_token_then_its_containers() {
        let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
        let (id, master) = running_app(&mut c);
        assert_eq!(id, "application_1000_0001");
        assert_eq!(master.attempt, 1);
        let t = &master.container.token;
        assert_eq!(
            verify(
                &key_of(&master.container.node_id),
                Some(t),
                &master.container.node_id,
                2_001
            ),
            Ok(())
        );
        assert_eq!(c.app(&id).unwrap().lifecycle.state, AppState::Running);
        let reply = allocate(
            &mut c,
            3_000,
            &id,
            vec![ask(3, "*"), ask(2, "n2:8042")],
            vec![],
        )
        .unwrap();
        assert_eq!(reply.allocated.len(), 3);
        assert_eq!(
            reply
                .allocated
                .iter()
                .filter(|a| a.node_id == "n2:8042")
                .count(),
            2,
            "node asks first"
        );
        for a in &reply.allocated {
            assert_eq!(
                verify(&key_of(&a.node_id), Some(&a.token), &a.node_id, 3_001),
                Ok(())
            );
            assert!(
                a.container_id.starts_with("container_1000_0001_01_"),
                "{}",
                a.container_id
            );
            assert_eq!(
                application_of(&a.container_id).as_deref(),
                Some(id.as_str())
            );
        }
        // A container ends on its node: the master hears of it in its next allocate reply.
        let done = ContainerStatus {
            container_id: reply.allocated[0].container_id.clone(),
            end: ContainerEnd::Exited,
            exit_code: Some(0),
        };
        heartbeat(
            &mut c,
            4_000,
            &reply.allocated[0].node_id,
            vec![done.clone()],
        );
        let next = allocate(&mut c, 4_100, &id, vec![ask(0, "*")], vec![]).unwrap();
        assert_eq!(next.completed, vec![done]);
        assert!(next.allocated.is_empty());
    }

    #[test]
    fn a_lost_node_loses_its_containers_and_the_master_gets_another_attempt_then_fails() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        let (id, master) = running_app(&mut c);
        assert_eq!(master.container.node_id, "n1:8042");
        // The node falls silent; a second node arrives to host a new attempt.
        c.register_node(
            5_000,
            RegisterNode {
                node_id: "n2:8042".into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: Vec::new(),
            },
        );
        assert_eq!(c.expire(11_500), vec!["n1:8042".to_owned()]);
        assert_eq!(
            c.nodes().find(|n| n.node_id == "n1:8042").unwrap().state,
            NodeState::Lost
        );
        assert_eq!(
            ended(&c, ContainerEnd::Lost),
            1,
            "the master's container, counted once"
        );
        let relaunch = c.take_master_launches();
        assert_eq!(relaunch.len(), 1);
        assert_eq!(
            (relaunch[0].attempt, relaunch[0].container.node_id.as_str()),
            (2, "n2:8042")
        );
        assert_eq!(c.app(&id).unwrap().lifecycle.state, AppState::Accepted);
        // The lost node's heartbeat is refused: it must register again.
        assert!(heartbeat(&mut c, 12_000, "n1:8042", vec![]).reregister);
        // The second attempt's master dies too: am_max_attempts = 2 → FAILED.
        let died = ContainerStatus {
            container_id: relaunch[0].container.container_id.clone(),
            end: ContainerEnd::Exited,
            exit_code: Some(1),
        };
        heartbeat(&mut c, 13_000, "n2:8042", vec![died]);
        let app = c.app(&id).unwrap();
        assert_eq!(app.lifecycle.state, AppState::Failed);
        assert!(c.take_master_launches().is_empty());
    }

    #[test]
    fn killing_an_app_orders_its_containers_stopped_on_their_nodes() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        let (id, master) = running_app(&mut c);
        let reply = allocate(&mut c, 3_000, &id, vec![ask(2, "*")], vec![]).unwrap();
        c.kill(&id).unwrap();
        assert_eq!(c.app(&id).unwrap().lifecycle.state, AppState::Killed);
        let mut stop = heartbeat(&mut c, 4_000, "n1:8042", vec![]).stop;
        stop.sort();
        let mut expected: Vec<String> = reply
            .allocated
            .iter()
            .map(|a| a.container_id.clone())
            .chain([master.container.container_id])
            .collect();
        expected.sort();
        assert_eq!(stop, expected);
        assert!(
            heartbeat(&mut c, 5_000, "n1:8042", vec![]).stop.is_empty(),
            "told once"
        );
        assert!(matches!(c.kill(&id), Err(ClusterError::Transition(_))));
    }

    #[test]
    fn a_released_container_is_stopped_and_its_room_reused() {
        let mut c = cluster(&[("n1:8042", "r1")]); // 4 vcores: the master's and 3
        let (id, _) = running_app(&mut c);
        let first = allocate(&mut c, 3_000, &id, vec![ask(5, "*")], vec![]).unwrap();
        assert_eq!(first.allocated.len(), 3);
        let released = first.allocated[0].container_id.clone();
        let second = allocate(
            &mut c,
            3_100,
            &id,
            vec![ask(2, "*")],
            vec![released.clone()],
        )
        .unwrap();
        assert_eq!(
            second.allocated.len(),
            1,
            "the released container's room goes to the next ask"
        );
        assert_eq!(
            heartbeat(&mut c, 3_200, "n1:8042", vec![]).stop,
            vec![released]
        );
    }

    /// The issue's cluster: three nodes of 2 vcores (so a master and 5 tasks fill it).
    fn small_cluster() -> Cluster {
        small_cluster_with(Settings::default())
    }

    fn small_cluster_with(settings: Settings) -> Cluster {
        let mut c = Cluster::new(settings, ClusterSecret::new(KEY), 1_000);
        for (node, rack) in [("n1:8042", "r1"), ("n2:8042", "r1"), ("n3:8042", "r2")] {
            c.register_node(
                1_000,
                RegisterNode {
                    node_id: node.into(),
                    rack: rack.into(),
                    capability: Resource {
                        memory_mb: 8192,
                        vcores: 2,
                    },
                    containers: Vec::new(),
                },
            );
        }
        c
    }

    /// [`small_cluster`] with one application whose master registered.
    fn running_on_small_cluster() -> (Cluster, String) {
        let mut c = small_cluster();
        let (id, _) = running_app(&mut c);
        (c, id)
    }

    /// Every node's heartbeat, as a faithful node sends it; returns the stop orders.
    fn beat_all(c: &mut Cluster, now: i64) -> BTreeMap<String, Vec<String>> {
        let nodes: Vec<String> = c.nodes().map(|n| n.node_id.clone()).collect();
        nodes
            .into_iter()
            .map(|n| {
                let stop = heartbeat(c, now, &n, vec![]).stop;
                (n, stop)
            })
            .collect()
    }

    #[test]
    fn a_dead_master_frees_what_it_held_and_attempt_two_starts_on_a_full_cluster() {
        let mut c = small_cluster();
        let (id, master) = running_app(&mut c);
        // The master asks for more than fits: the cluster fills, asks stay outstanding.
        let tasks = allocate(&mut c, 3_000, &id, vec![ask(20, "*")], vec![]).unwrap();
        assert_eq!(tasks.allocated.len(), 5);
        assert_eq!(c.metrics().allocated_vcores, 6);
        beat_all(&mut c, 3_500);
        // kill -9 of the master: its node reports its container's end.
        let died = ContainerStatus {
            container_id: master.container.container_id.clone(),
            end: ContainerEnd::Exited,
            exit_code: Some(137),
        };
        let reply = heartbeat(&mut c, 4_000, &master.container.node_id, vec![died]);
        assert_eq!(c.app(&id).unwrap().lifecycle.state, AppState::Accepted);
        // Attempt 2's master is granted at once (on the node that just made room, so it
        // starts with this very reply), and nothing else is held for the dead attempt.
        assert_eq!(reply.start.len(), 1, "attempt 2 was not granted");
        assert_eq!(reply.start[0].env["APP_ATTEMPT"], "2");
        assert_eq!(c.running_containers(&id), 1, "only attempt 2's master");
        assert_eq!(c.metrics().containers_allocated, 1);
        assert_eq!(c.metrics().allocated_vcores, 1);
        // Each node is told to stop the dead attempt's tasks there, and once.
        let mut stopped: Vec<String> = beat_all(&mut c, 4_500)
            .into_values()
            .flatten()
            .chain(reply.stop)
            .collect();
        stopped.sort();
        let mut granted: Vec<String> = tasks
            .allocated
            .iter()
            .map(|a| a.container_id.clone())
            .collect();
        granted.sort();
        assert_eq!(stopped, granted);
        assert!(beat_all(&mut c, 5_000).values().all(Vec::is_empty));
        c.check_books().unwrap();
        // The ends the nodes report later are of containers already freed: nothing changes
        // but their count, once each, as the nodes saw them.
        let killed = ended(&c, ContainerEnd::Killed);
        for repeat in 0..2 {
            for a in &tasks.allocated {
                let end = ContainerStatus {
                    container_id: a.container_id.clone(),
                    end: ContainerEnd::Killed,
                    exit_code: None,
                };
                heartbeat(&mut c, 5_500 + repeat, &a.node_id, vec![end]);
            }
            assert_eq!(ended(&c, ContainerEnd::Killed), killed + 5);
        }
        assert_eq!(c.running_containers(&id), 1);
        c.check_books().unwrap();
    }

    #[test]
    fn killing_an_app_with_asks_outstanding_leaves_nothing_booked_and_the_next_app_runs() {
        let (mut c, id) = running_on_small_cluster();
        let tasks = allocate(&mut c, 3_000, &id, vec![ask(20, "*")], vec![]).unwrap();
        assert_eq!(tasks.allocated.len(), 5);
        c.kill(&id).unwrap();
        let m = c.metrics();
        assert_eq!(
            (m.containers_allocated, m.allocated_mb, m.allocated_vcores),
            (0, 0, 0)
        );
        assert_eq!(c.running_containers(&id), 0);
        for n in ["n1:8042", "n2:8042", "n3:8042"] {
            assert_eq!(c.containers_on(n).count(), 0, "{n}");
        }
        c.check_books().unwrap();
        // The next user's application gets its master at once.
        let next = c.new_application(6_000, "bob").unwrap();
        c.submit(6_000, NewApp::new(&next, "wordcount", "bob", "default"))
            .unwrap();
        assert_eq!(c.take_master_launches().len(), 1);
    }

    #[test]
    fn a_node_that_drops_a_container_without_an_end_loses_it_and_one_it_runs_unbooked_is_stopped() {
        let (mut c, id) = running_on_small_cluster();
        let asks = vec![ask(1, "*"), ask(1, "n2:8042")];
        let tasks = allocate(&mut c, 3_000, &id, asks, vec![]).unwrap();
        let task = tasks.allocated[0].container_id.clone();
        assert_eq!(tasks.allocated[0].node_id, "n2:8042");
        // Granted, not yet started: the node does not list it, and it stays booked.
        let silent = NodeHeartbeat {
            node_id: "n2:8042".into(),
            running: vec![],
            completed: vec![],
            telemetry: NodeTelemetry::default(),
        };
        c.heartbeat(3_100, silent.clone());
        assert!(c.container(&task).is_some());
        // Started: the node lists it; then it vanishes with no end reported: LOST, and its
        // master hears of it.
        c.heartbeat(
            3_200,
            NodeHeartbeat {
                running: vec![task.clone()],
                ..silent.clone()
            },
        );
        c.heartbeat(3_300, silent.clone());
        assert!(c.container(&task).is_none());
        assert_eq!(ended(&c, ContainerEnd::Lost), 1);
        let reply = allocate(&mut c, 3_400, &id, vec![], vec![]).unwrap();
        assert_eq!(reply.completed.len(), 1);
        assert_eq!(reply.completed[0].end, ContainerEnd::Lost);
        // A container the book does not hold, running on a node, is told to stop.
        let stray = "container_1000_0001_01_000099".to_owned();
        let reply = c.heartbeat(
            3_500,
            NodeHeartbeat {
                running: vec![stray.clone()],
                ..silent
            },
        );
        assert_eq!(reply.stop, vec![stray]);
        c.check_books().unwrap();
    }

    #[test]
    fn a_released_container_is_told_to_its_master_once_and_counted_once() {
        let (mut c, id) = running_on_small_cluster();
        let tasks = allocate(&mut c, 3_000, &id, vec![ask(1, "*")], vec![]).unwrap();
        let released = tasks.allocated[0].clone();
        let reply = allocate(
            &mut c,
            3_100,
            &id,
            vec![],
            vec![released.container_id.clone()],
        )
        .unwrap();
        assert_eq!(reply.completed.len(), 1);
        assert_eq!(reply.completed[0].end, ContainerEnd::Killed);
        assert_eq!(ended(&c, ContainerEnd::Killed), 1);
        // Its node's own report of the kill changes nothing.
        let end = ContainerStatus {
            container_id: released.container_id.clone(),
            end: ContainerEnd::Killed,
            exit_code: None,
        };
        heartbeat(&mut c, 3_200, &released.node_id, vec![end]);
        assert_eq!(ended(&c, ContainerEnd::Killed), 1);
        assert!(
            allocate(&mut c, 3_300, &id, vec![], vec![])
                .unwrap()
                .completed
                .is_empty()
        );
        c.check_books().unwrap();
    }

    #[test]
    fn a_granted_container_never_started_is_taken_back_after_the_allocation_expiry() {
        let expiry = 5_000;
        let mut c = small_cluster_with(Settings {
            allocation_expiry_ms: expiry,
            ..Settings::default()
        });
        let (id, _) = running_app(&mut c);
        beat_all(&mut c, 2_500); // the master runs
        let tasks = allocate(&mut c, 3_000, &id, vec![ask(2, "*")], vec![]).unwrap();
        let unstarted = tasks.allocated[0].container_id.clone();
        let started = tasks.allocated[1].container_id.clone();
        // Every node lists what it runs: all but the one never started.
        let nodes: Vec<String> = c.nodes().map(|n| n.node_id.clone()).collect();
        let beat = |c: &mut Cluster, now: i64| {
            for node in &nodes {
                let running = c
                    .containers_on(node)
                    .map(|(id, _)| id.clone())
                    .filter(|id| *id != unstarted)
                    .collect();
                c.heartbeat(
                    now,
                    NodeHeartbeat {
                        node_id: node.clone(),
                        running,
                        completed: vec![],
                        telemetry: NodeTelemetry::default(),
                    },
                );
            }
        };
        beat(&mut c, 3_100);
        c.expire(3_000 + expiry);
        assert!(c.container(&unstarted).is_some(), "not yet");
        allocate(&mut c, 3_000 + expiry, &id, vec![], vec![]).unwrap();
        beat(&mut c, 3_001 + expiry);
        c.expire(3_001 + expiry);
        assert!(c.container(&unstarted).is_none());
        assert!(c.container(&started).is_some());
        assert_eq!(c.app(&id).unwrap().lifecycle.state, AppState::Running);
        let reply = allocate(&mut c, 3_002 + expiry, &id, vec![], vec![]).unwrap();
        assert_eq!(reply.completed.len(), 1);
        assert_eq!(reply.completed[0].container_id, unstarted);
        c.check_books().unwrap();
    }

    #[test]
    fn bad_calls_say_what_is_wrong_and_change_nothing() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        assert!(matches!(
            allocate(&mut c, 1, "application_1000_0099", vec![], vec![]),
            Err(ClusterError::UnknownApp(_))
        ));
        let id = c.new_application(2_000, "alice").unwrap();
        c.submit(2_000, NewApp::new(&id, "x", "u", "q")).unwrap();
        assert!(matches!(
            c.submit(2_000, NewApp::new(&id, "x", "u", "q")),
            Err(ClusterError::AlreadySubmitted(_))
        ));
        assert!(
            matches!(
                allocate(&mut c, 3_000, &id, vec![], vec![]),
                Err(ClusterError::NotRunning(_))
            ),
            "master not registered yet"
        );
        c.master_registered(&id, None).unwrap();
        // A node the rm does not know (yet) is no error: the ask waits for it to join.
        allocate(
            &mut c,
            3_000,
            &id,
            vec![ask(1, "*"), ask(1, "nowhere")],
            vec![],
        )
        .expect("an ask for an unknown node is kept waiting, not refused");
        let zero = ResourceRequest {
            priority: 0,
            ..ask(1, "*")
        };
        assert!(
            allocate(&mut c, 3_000, &id, vec![zero], vec![])
                .unwrap_err()
                .to_string()
                .contains("priority 0")
        );
        // Nothing was asked by the refused calls.
        assert!(
            allocate(&mut c, 3_000, &id, vec![], vec![])
                .unwrap()
                .allocated
                .is_empty()
        );
        assert!(heartbeat(&mut c, 3_000, "stranger:1", vec![]).reregister);
    }

    #[test]
    fn a_restarted_rm_takes_back_what_rejoining_nodes_run_and_stops_orphans() {
        // On n1 (4 GiB) a 512 MiB master and three 1 GiB tasks fill 3.5 GiB.
        let mut before = cluster(&[("n1:8042", "r1")]);
        let (id, master) = running_app(&mut before);
        let tasks: Vec<String> = allocate(&mut before, 3_000, &id, vec![ask(3, "*")], vec![])
            .unwrap()
            .allocated
            .into_iter()
            .map(|a| a.container_id)
            .collect();
        assert_eq!(tasks.len(), 3);
        let (apps, nodes) = before.take_dirty();

        let mut after = Cluster::new(Settings::default(), ClusterSecret::new(KEY), 9_000);
        after.set_restart_epoch(1);
        after.restore(apps, nodes);
        let held = |id: &str, memory_mb| NodeContainer {
            container_id: id.into(),
            resource: Resource {
                memory_mb,
                vcores: 1,
            },
        };
        let orphan = "container_e1000_1000_0099_01_000042"; // an application never submitted
        let mut reported: Vec<NodeContainer> = tasks.iter().map(|t| held(t, 1024)).collect();
        reported.extend([
            held(&master.container.container_id, 512),
            held(orphan, 64),
            held("garbage", 64),
        ]);
        after.register_node(
            10_000,
            RegisterNode {
                node_id: "n1:8042".into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 8,
                },
                containers: reported,
            },
        );
        let app = after.app(&id).unwrap();
        assert_eq!(
            app.master.as_deref(),
            Some(master.container.container_id.as_str())
        );
        assert_eq!(after.running_containers(&id), 4);
        assert_eq!(after.metrics().allocated_mb, 512 + 3 * 1024);
        let stop = heartbeat(&mut after, 10_100, "n1:8042", vec![]).stop;
        assert_eq!(stop, [orphan.to_owned(), "garbage".to_owned()]);

        // The master re-registers and asks again: only the room left (512 MiB) is granted, as a
        // 512 MiB container; a 1 GiB one does not fit.
        after.master_registered(&id, None).unwrap();
        let small = |count| ResourceRequest {
            capability: Resource {
                memory_mb: 512,
                vcores: 1,
            },
            ..ask(count, "*")
        };
        assert!(
            allocate(&mut after, 10_200, &id, vec![ask(1, "*")], vec![])
                .unwrap()
                .allocated
                .is_empty()
        );
        let granted = allocate(&mut after, 10_300, &id, vec![small(2)], vec![])
            .unwrap()
            .allocated;
        assert_eq!(granted.len(), 1);
        assert!(
            granted[0]
                .container_id
                .starts_with("container_e01_1000_0001_"),
            "{}",
            granted[0].container_id
        );

        // A recovered task ends: its master hears of it.
        let ended = ContainerStatus {
            container_id: tasks[0].clone(),
            end: ContainerEnd::Exited,
            exit_code: Some(0),
        };
        heartbeat(&mut after, 10_400, "n1:8042", vec![ended.clone()]);
        let reply = allocate(&mut after, 10_500, &id, vec![], vec![]).unwrap();
        assert_eq!(reply.completed, [ended]);
    }

    #[test]
    fn a_registered_master_that_falls_silent_fails_its_attempt() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        let (id, master) = running_app(&mut c);
        let expiry = Settings::default().am_expiry_ms;
        allocate(&mut c, 3_000, &id, vec![], vec![]).unwrap();
        // The node stays alive; the master calls once more, then never again.
        heartbeat(&mut c, 3_000 + expiry, "n1:8042", vec![]);
        allocate(&mut c, 3_000 + expiry, &id, vec![], vec![]).unwrap();
        heartbeat(&mut c, 3_000 + 2 * expiry, "n1:8042", vec![]);
        c.expire(3_000 + 2 * expiry);
        assert_eq!(
            c.app(&id).unwrap().lifecycle.state,
            AppState::Running,
            "silent for exactly the expiry"
        );
        heartbeat(&mut c, 3_001 + 2 * expiry, "n1:8042", vec![]);
        c.expire(3_001 + 2 * expiry);
        let app = c.app(&id).unwrap();
        assert_eq!(
            (app.lifecycle.state, app.lifecycle.attempts),
            (AppState::Accepted, 2)
        );
        let reply = heartbeat(&mut c, 3_002 + 2 * expiry, "n1:8042", vec![]);
        assert!(
            reply.stop.contains(&master.container.container_id),
            "{reply:?}"
        );
        assert_eq!(reply.start.len(), 1, "the second attempt's master starts");
    }

    #[test]
    fn a_master_launch_waiting_for_a_node_that_dies_is_replaced_not_started_twice() {
        let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
        let id = c.new_application(2_000, "alice").unwrap();
        c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
            .unwrap();
        let first = c.app(&id).unwrap().master.clone().unwrap();
        let first_node = c.app(&id).unwrap().attempts[0].node_id.clone();
        let other = if first_node == "n1:8042" {
            "n2:8042"
        } else {
            "n1:8042"
        };
        // The master's node falls silent before its heartbeat could start it; the other lives.
        heartbeat(&mut c, 11_000, other, vec![]);
        assert_eq!(c.expire(12_000), vec![first_node.clone()]);
        let app = c.app(&id).unwrap();
        assert_eq!(app.lifecycle.attempts, 2);
        let second = app.master.clone().unwrap();
        assert_ne!(first, second);
        // The node comes back: it is not told to start the first attempt's master.
        c.register_node(
            13_000,
            RegisterNode {
                node_id: first_node.clone(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: Vec::new(),
            },
        );
        let back = heartbeat(&mut c, 13_100, &first_node, vec![]);
        assert!(back.start.is_empty(), "{back:?}");
        let started = heartbeat(&mut c, 13_200, other, vec![]);
        let ids: Vec<String> = started
            .start
            .iter()
            .filter_map(|s| s.token.as_ref().map(|t| t.container_id.clone()))
            .collect();
        assert_eq!(ids, vec![second]);
        assert_eq!(started.start[0].env["APP_ATTEMPT"], "2");
        assert!(started.start[0].env["YARD_TOKEN"].starts_with("yard1."));
    }

    #[test]
    fn a_master_its_node_could_not_start_fails_over_instead_of_holding_its_room() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        let id = c.new_application(2_000, "alice").unwrap();
        c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
            .unwrap();
        let launch = heartbeat(&mut c, 2_100, "n1:8042", vec![]).start;
        let container = launch[0].token.as_ref().unwrap().container_id.clone();
        let failed = ContainerStatus {
            container_id: container,
            end: ContainerEnd::LaunchFailed,
            exit_code: None,
        };
        // The reply that hears of the failure already carries the next attempt's master.
        let next = heartbeat(&mut c, 2_200, "n1:8042", vec![failed]).start;
        let app = c.app(&id).unwrap();
        assert_eq!(
            (app.lifecycle.state, app.lifecycle.attempts),
            (AppState::Accepted, 2)
        );
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].env["APP_ATTEMPT"], "2");
    }

    #[test]
    fn masters_hold_at_most_their_share_and_one_always_runs() {
        // Two nodes of 4 vcores: 10 % is 0.8 vcores, so one 1-vcore master at a time.
        let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
        let ids: Vec<String> = (0..3)
            .map(|_| {
                let id = c.new_application(2_000, "alice").unwrap();
                c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
                    .unwrap();
                id
            })
            .collect();
        let with_master = |c: &Cluster| {
            ids.iter()
                .filter(|i| c.app(i).unwrap().master.is_some())
                .count()
        };
        assert_eq!(with_master(&c), 1);
        // The first finishes: the next master gets its room.
        c.master_registered(&ids[0], None).unwrap();
        c.master_finished(0, &ids[0], true, "").unwrap();
        assert_eq!(with_master(&c), 1);
        assert!(c.app(&ids[1]).unwrap().master.is_some());
        // A larger share admits more at once.
        let settings = Settings {
            master_share: 0.5,
            ..Settings::default()
        };
        let mut wide = Cluster::new(settings, ClusterSecret::new(KEY), 1_000);
        for n in ["n1:8042", "n2:8042"] {
            wide.register_node(
                1_000,
                RegisterNode {
                    node_id: n.into(),
                    rack: "r1".into(),
                    capability: Resource {
                        memory_mb: 4096,
                        vcores: 4,
                    },
                    containers: Vec::new(),
                },
            );
        }
        let mut admitted = 0;
        for _ in 0..6 {
            let id = wide.new_application(2_000, "alice").unwrap();
            wide.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
                .unwrap();
            admitted += usize::from(wide.app(&id).unwrap().master.is_some());
        }
        assert_eq!(admitted, 4, "4 of 8 vcores");
    }

    #[test]
    fn only_issued_ids_are_submitted_once_and_unsubmitted_ones_lapse() {
        let mut c = cluster(&[("n1:8042", "r1")]);
        assert!(matches!(
            c.submit(2_000, NewApp::new("application_1000_0001", "x", "u", "q")),
            Err(ClusterError::NotIssued(_))
        ));
        let id = c.new_application(2_000, "alice").unwrap();
        let bob = Principal::User { user: "bob".into() };
        assert!(matches!(
            c.submit_issued(2_000, NewApp::new(&id, "x", "bob", "q"), &bob),
            Err(ClusterError::IssuedToOther { .. })
        ));
        // An hour later it has lapsed.
        c.new_application(2_000 + ISSUED_TTL_MS + 1, "alice")
            .unwrap();
        assert!(matches!(
            c.submit(
                2_000 + ISSUED_TTL_MS + 2,
                NewApp::new(&id, "x", "alice", "q")
            ),
            Err(ClusterError::NotIssued(_))
        ));
    }

    #[test]
    fn a_node_back_from_the_dead_is_told_to_stop_what_ran_there_before() {
        let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
        let (id, master) = running_app(&mut c);
        let (host, other) = if master.container.node_id == "n1:8042" {
            ("n1:8042", "n2:8042")
        } else {
            ("n2:8042", "n1:8042")
        };
        heartbeat(&mut c, 11_000, other, vec![]);
        assert_eq!(c.expire(12_000), vec![host.to_owned()]);
        assert_eq!(c.app(&id).unwrap().lifecycle.attempts, 2);
        // It returns, still running the first attempt's master.
        c.register_node(
            13_000,
            RegisterNode {
                node_id: host.into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: vec![NodeContainer {
                    container_id: master.container.container_id.clone(),
                    resource: Resource {
                        memory_mb: 512,
                        vcores: 1,
                    },
                }],
            },
        );
        let reply = heartbeat(&mut c, 13_100, host, vec![]);
        assert_eq!(reply.stop, vec![master.container.container_id.clone()]);
        assert!(reply.start.is_empty());
        assert_ne!(
            c.app(&id).unwrap().master.as_deref(),
            Some(master.container.container_id.as_str())
        );
    }

    #[test]
    fn the_telemetry_ring_keeps_the_newest_samples_oldest_first() {
        let sample = |load| NodeTelemetry {
            load_1m: load,
            ..NodeTelemetry::default()
        };
        let mut ring = TelemetryRing::default();
        assert!(ring.is_empty() && ring.last().is_none());
        for i in 0..(TELEMETRY_HISTORY as i64 + 25) {
            ring.push(1_000 + i, sample(i as f64));
            assert_eq!(ring.len(), (i as usize + 1).min(TELEMETRY_HISTORY));
        }
        let times: Vec<i64> = ring.iter().map(|(at, _)| at).collect();
        let first = 1_000 + 25;
        assert_eq!(
            times,
            (first..first + TELEMETRY_HISTORY as i64).collect::<Vec<_>>()
        );
        assert!(ring.iter().all(|(at, t)| t.load_1m == (at - 1_000) as f64));
        assert_eq!(ring.last().map(|(at, _)| at), times.last().copied());
    }

    #[test]
    fn heartbeats_fill_each_nodes_history_and_a_rejoining_node_keeps_its_last_load() {
        let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
        let beat = |c: &mut Cluster, now: i64, node: &str, load: f64| {
            c.heartbeat(
                now,
                NodeHeartbeat {
                    node_id: node.into(),
                    running: vec![],
                    completed: vec![],
                    telemetry: NodeTelemetry {
                        load_1m: load,
                        cores: 4,
                        ..NodeTelemetry::default()
                    },
                },
            )
        };
        assert_eq!(c.node("n1:8042").unwrap().telemetry_ms, None);
        assert_eq!(c.telemetry_history("n1:8042").count(), 0);
        for i in 0..100 {
            beat(&mut c, 2_000 + i * 10, "n1:8042", i as f64);
        }
        beat(&mut c, 5_000, "n2:8042", 7.0);
        let n1: Vec<(i64, f64)> = c
            .telemetry_history("n1:8042")
            .map(|(at, t)| (at, t.load_1m))
            .collect();
        assert_eq!(n1.len(), TELEMETRY_HISTORY);
        assert_eq!(n1[0], (2_000 + 40 * 10, 40.0));
        assert_eq!(n1.last(), Some(&(2_990, 99.0)));
        assert!(n1.windows(2).all(|w| w[0].0 < w[1].0), "oldest first");
        let n2: Vec<f64> = c
            .telemetry_history("n2:8042")
            .map(|(_, t)| t.load_1m)
            .collect();
        assert_eq!(n2, [7.0]);
        assert_eq!(c.telemetry_history("nowhere:1").count(), 0);
        let node = c.node("n1:8042").unwrap();
        assert_eq!(
            (node.telemetry_ms, node.telemetry.load_1m),
            (Some(2_990), 99.0)
        );
        // A node unknown to the rm (it must register again) adds nothing.
        beat(&mut c, 6_000, "n3:8042", 1.0);
        assert_eq!(c.telemetry_history("n3:8042").count(), 0);
        // Registering again keeps the last known load and the history.
        c.register_node(
            7_000,
            RegisterNode {
                node_id: "n1:8042".into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: Vec::new(),
            },
        );
        let node = c.node("n1:8042").unwrap();
        assert_eq!(
            (node.telemetry_ms, node.telemetry.load_1m),
            (Some(2_990), 99.0)
        );
        assert_eq!(c.telemetry_history("n1:8042").count(), TELEMETRY_HISTORY);
        // The store gets the last sample with the node.
        let stored = c.take_changes().nodes;
        assert!(stored.iter().any(|n| n.node_id == "n1:8042"
            && n.telemetry_ms == Some(2_990)
            && n.telemetry.load_1m == 99.0));
    }
}
