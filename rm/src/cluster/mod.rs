//! The resource manager's state, without IO: nodes and their heartbeats (silent past the
//! expiry → LOST, their containers complete as LOST), applications and their lifecycles, the
//! allocate protocol over the [`Scheduler`], and a signed token on every container. The
//! daemon turns HTTP calls into these methods, passes the time in, and carries out what they
//! return: masters to start and containers to stop, in each node's heartbeat reply. Every
//! container is in one book ([`crate::book`]), freed once.
//!
//! One [`Cluster`] holds it all; its methods live beside the part of the state they own (as
//! HyperQueue's tako splits its `Core` into task and worker maps), each file opening with
//! what it owns: `apps` (applications and their lifecycles), `allocation` (the allocate
//! protocol and the scheduler's assignments), `containers` (the book of granted containers),
//! `nodes` (registration, heartbeats, expiry), `telemetry` (nodes' load and the overload
//! classifier's verdicts), `datasets`, `recovery` (what survives a restart), `changes` (what
//! the store must write), `tokens` (keys and credentials), `reports` (cluster-wide counts)
//! and `undo` (putting back a change whose write failed). The fields are private to this
//! module and its files.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use yard_wire::auth::{BearerKey, ClusterSecret};
use yard_wire::limits::echo;
use yard_wire::protocol::{ContainerEnd, Dataset, Resource};
use yard_wire::token::TokenKey;

use crate::book::ContainerBook;
pub use crate::book::ContainerMeta;
use yard_cluster::app::{AppAction, InvalidTransition};
use yard_cluster::classifier::ClassifierConfig;
use yard_cluster::policy::ClusterPolicy;
use yard_cluster::queues::{QueueError, Queues};
use yard_cluster::scheduler::{self, AppId, RackId, Scheduler};

mod allocation;
mod apps;
mod changes;
mod containers;
mod datasets;
mod history;
mod nodes;
mod recovery;
mod reports;
mod telemetry;
#[cfg(test)]
mod tests;
mod tokens;
mod undo;

pub use allocation::MasterLaunch;
pub use apps::{
    ANSWER_TRANSIT_MS, AppInfo, AppRecord, AppResult, AttemptInfo, ESTIMATE_POINTS, EstimatePoint,
    MAX_ISSUED, NewApp, ProgressSeen, Usage, YarnFields, deadline_outcome,
};
pub use changes::Changes;
use datasets::Release;
pub use datasets::{check_dataset_name, job_of, plain_name};
pub use nodes::{NodeInfo, NodeState};
pub use recovery::MAX_RECOVERY_ENTRIES;
pub use reports::{Metrics, SchedulerReport};
pub use telemetry::{TELEMETRY_HISTORY, TelemetryRing, node_load};
pub use undo::{Touch, Undo};

/// Settings that shape the rm's decisions.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// A node silent this long is LOST.
    pub node_expiry_ms: i64,
    /// A LOST node is forgotten this long after it was lost: no longer listed, nor named as
    /// a block's holder, nor kept in the store (YARN's
    /// `yarn.resourcemanager.node-removal-untracked.timeout-ms`, 60 s; `yard rm
    /// --lost-node-retention-ms`). It registers again as a new node.
    pub lost_node_retention_ms: i64,
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
    pub scheduler: ClusterPolicy,
    /// The share of the cluster masters may hold together (YARN's
    /// maximum-am-resource-percent; at least one master always runs).
    pub master_share: f64,
    /// The overload classifier, a placement filter under the cluster policy (`yard rm
    /// --overload-classifier on`); `None`: off.
    pub overload: Option<ClassifierConfig>,
    /// The capacity queues (`yard rm --queues FILE`); `None`: one `default` queue at 100 %
    /// running `scheduler`.
    pub queues: Option<Queues>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            node_expiry_ms: 10_000,
            lost_node_retention_ms: 60_000,
            token_ttl_ms: 600_000,
            allocation_expiry_ms: 600_000,
            am_max_attempts: yard_cluster::app::DEFAULT_AM_MAX_ATTEMPTS,
            am_expiry_ms: 600_000,
            am_resource: Resource {
                memory_mb: 512,
                vcores: 1,
            },
            scheduler: ClusterPolicy::Fifo,
            master_share: scheduler::DEFAULT_MASTER_SHARE,
            overload: None,
            queues: None,
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
    #[error(
        "dataset {} is read or written by unfinished application {app}: kill it or wait for it to end",
        echo(name)
    )]
    DatasetInUse { name: String, app: String },
    #[error("dataset {} is being deleted from its nodes: try again once their next heartbeats have told them (a few seconds)", echo(.0))]
    BeingDeleted(String),
    /// An unknown queue, or one whose ACL refuses the user (the message names both).
    #[error("{0}")]
    Queue(#[from] QueueError),
}

/// The rm's state (the daemon holds it behind a `Mutex`); the module doc says which file owns
/// which part.
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
    /// Masters granted and not yet started: each goes out in its node's next heartbeat reply.
    launches: Vec<MasterLaunch>,
    /// Containers each node must stop, told in its next heartbeat reply.
    stop_orders: BTreeMap<String, Vec<String>>,
    /// Datasets whose blocks each node must delete, told in its next heartbeat reply once
    /// released (`datasets`).
    deletes: BTreeMap<String, BTreeMap<String, Release>>,
    /// (node, dataset) deletions queued or told since the store last took them.
    dirty_deletes: BTreeSet<(String, String)>,
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
    /// The cluster over the last hour, sampled on the tick (`history.rs`).
    history: history::History,
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
            history: history::History::default(),
            held: None,
            datasets: BTreeMap::new(),
            dirty_datasets: BTreeSet::new(),
            recovering: VecDeque::new(),
            recovery: BTreeMap::new(),
            dirty_recovery: BTreeSet::new(),
            scheduler: {
                let s = Scheduler::new(settings.scheduler).with_master_share(settings.master_share);
                let s = match settings.queues.clone() {
                    Some(queues) => s.with_queues(queues),
                    None => s,
                };
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
            deletes: BTreeMap::new(),
            dirty_deletes: BTreeSet::new(),
            dirty_apps: BTreeSet::new(),
            dirty_nodes: BTreeSet::new(),
        }
    }

    /// Where the rm listens, e.g. `http://127.0.0.1:8088`: masters are told it as `YARD_RM`.
    /// The rm's own URL, if the daemon said it.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    pub fn set_url(&mut self, url: String) {
        self.url = Some(url);
    }

    /// A variable every master gets, whatever its submission says: the cluster's own settings
    /// (e.g. `YARD_PROFILES`, the job-profile store all masters share).
    pub fn set_master_env(&mut self, name: &str, value: String) {
        self.master_env.insert(name.into(), value);
    }
}
