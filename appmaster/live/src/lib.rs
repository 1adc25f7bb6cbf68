//! yard's MapReduce application master as processes: the IO around `yard-appmaster`'s
//! sans-IO task policies (as `quinn` is around `quinn-proto`). The policies' crate has no IO
//! dependency at all (no tokio, no HTTP, no clock; `tests/repo.rs` checks its manifest), so
//! everything that talks to the world is here:
//!
//! - [`master`]: `yard mr-master`, the job's application master, launched by the rm in a
//!   container. It registers, asks for containers with locality from the dataset's block map,
//!   feeds the task policy (Dart or a baseline) real events and carries out its decisions.
//!   Tasks reach it over HTTP (Hadoop's umbilical protocol), on a port it binds on loopback.
//!   It keeps its finished maps at the rm for a next attempt (`master/recovery.rs`).
//! - [`task`]: `yard mr-runner`, started by the master in each granted container, asks the
//!   master for work and runs every task as a child process, `yard mr-task` (Hadoop's
//!   `YarnChild`): a container stays the job's across tasks, as the policy contract says,
//!   until the policy releases it (Tez's container reuse).
//! - [`synthetic`]: a trace's job as synthetic tasks (`yard submit synthetic --trace`).
//!
//! The `yard` binary dispatches its `mr-*` subcommands here; the client side (`yard submit`)
//! stays in the CLI. This crate depends on `yard-profiles` (the profile store), which depends
//! on `yard-appmaster`: that is why the process is a crate of its own.

pub mod master;
mod output;
pub mod synthetic;
pub mod task;

use serde::{Deserialize, Serialize};
use yard_appmaster::apps::{AppSpec, MapStats, Population, ReducePartial, Split};

/// The exit code of a task process that stopped because its master killed its attempt.
pub(crate) const KILLED_EXIT: i32 = 143;

/// The job token the nodemanager gave this container (`YARD_JOB_TOKEN`), if any. Every request
/// a task, runner or master makes to a nodemanager's data routes (blocks, shuffle) or to the
/// master's umbilical carries it as `Authorization: Bearer …`; unset (or empty), none is sent.
pub(crate) fn job_token() -> Option<String> {
    std::env::var("YARD_JOB_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
}

/// What a runner is to do next.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "order", rename_all = "camelCase")]
pub(crate) enum Order {
    Run {
        task: Box<TaskSpec>,
    },
    /// Nothing yet: ask again.
    Wait,
    /// The container goes back to the rm: end.
    Exit,
}

/// One attempt of a task, as the master hands it to a runner (and the runner to `mr-task` on
/// its stdin).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TaskSpec {
    /// The master's umbilical base URL.
    pub master: String,
    pub application: String,
    /// The attempt's name at the master (`{phase}-{attempt}`).
    pub attempt: String,
    pub app: AppSpec,
    pub reduces: u32,
    pub seed: u64,
    /// A map takes at least this many seconds (`yard submit --map-min-seconds`).
    #[serde(default)]
    pub map_min_seconds: f64,
    /// Fault injection: this map hangs until it is killed (`--hang-split`).
    #[serde(default)]
    pub hang: bool,
    /// The job writes an output dataset (`-output`) and this attempt may write a part of it:
    /// only then does it ask its master's `canCommit` (a shared scan's host serves none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes_output: bool,
    pub work: Work,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub(crate) enum Work {
    #[serde(rename_all = "camelCase")]
    Map {
        split: Split,
        /// The directory under the container's `YARD_SHUFFLE_DIR` its partitions go to; the
        /// NM's shuffle service serves them as `/ws/v1/node/shuffle/{app}/{output}/{r}`.
        output: String,
        /// The dataset block to read; `None` for a synthetic map, which reads nothing.
        block: Option<BlockRef>,
        /// A streaming map reads its block's lines by LineRecordReader's rule; `None` for
        /// the others, which read the block as it is (`yard data put` cuts at newlines).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lines: Option<Lines>,
    },
    #[serde(rename_all = "camelCase")]
    Reduce { reduce: u32, population: Population },
    /// One read of a shared scan's block (`master::scan`), fed to the map function of every
    /// job riding it: each job's partitions go to its own directory under `YARD_SHUFFLE_DIR`.
    #[serde(rename_all = "camelCase")]
    ScanMap {
        split: Split,
        block: BlockRef,
        riders: Vec<ScanRider>,
    },
}

/// Where a streaming map's lines end (`yard_appmaster::apps::streaming::owned_lines`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Lines {
    /// Its block is its dataset's first: it owns its first line.
    pub first: bool,
    /// The dataset's blocks after it, in order (at most `LINE_BLOCKS_CAP`): its last line
    /// ends in the first of them that holds a `\n`.
    pub after: Vec<BlockRef>,
    /// The dataset has blocks after `after`.
    pub more: bool,
}

/// A job riding a shared scan's read: its map function, its reduces, where its output goes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ScanRider {
    pub app: AppSpec,
    pub reduces: u32,
    pub output: String,
}

/// A dataset block and the nodes holding it (`host:port`), first replica first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BlockRef {
    pub dataset: String,
    pub block: String,
    pub replicas: Vec<String>,
    /// The block's SHA-256 (lower-case hex) from the block map: every replica read is checked
    /// against it. `None` for a block recorded without one, read unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A map output a reducer fetches.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OutputRef {
    pub split: Split,
    /// The nodemanager that ran the map, `http://host:port`.
    pub node: String,
    pub output: String,
}

/// The master's answer to a reducer asking for map outputs from index `from` on.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Outputs {
    pub outputs: Vec<OutputRef>,
    /// No further output will come: the map phase is closed and every counted map is done.
    pub complete: bool,
    pub kill: bool,
}

/// A task's report of success.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Done {
    /// For a map, all its partitions; for a reduce, the input it kept.
    pub output_bytes: u64,
    #[serde(default)]
    pub stats: Option<MapStats>,
    #[serde(default)]
    pub partial: Option<ReducePartial>,
    /// A shared scan's read: each rider's map statistics, in the order of its riders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub riders: Vec<MapStats>,
    /// What the attempt measured of itself, for job typing (seed 002 eq. 1–2): the master
    /// types a part of a job kind by the first of its tasks to finish (`master::typing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

/// A finished attempt's own measurement: MID, MOD and MTCT in the paper's terms, and its
/// node's disk rate as the container's environment gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Measured {
    /// A map: the bytes it read (a synthetic map, which reads nothing: the input it stands
    /// for). A reduce: its shuffle input, every map output it fetched.
    pub input_bytes: u64,
    /// A map: its partitions. A reduce: its partial answer as sent to the master (yard's
    /// reduces write no file; that is what they write).
    pub output_bytes: u64,
    /// A map: from its start to its output written. A reduce: the same, less the time it
    /// waited on the master for map outputs (waiting for maps to finish is not its work).
    pub seconds: f64,
    /// `YARD_DISK_RATE_BYTES_PER_S` as the task read it (at most 64 characters), `None` when
    /// unset; the master parses it and falls back on the default when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_rate_env: Option<String>,
    /// A reduce: how its time after the map outputs went (issue 29: the answer's tail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<ReduceTail>,
}

/// A reduce's time, part by part: its fetch (from its start to its last map output, waits
/// for maps included), its fold of what it kept, and its output part's write. What follows
/// (the report) the master sees as the gap between this and its arrival.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ReduceTail {
    pub fetch_seconds: f64,
    pub fold_seconds: f64,
    pub write_seconds: f64,
}

impl ReduceTail {
    /// The fold's pace over `bytes` folded, for the logs: "N ms/MB", or "no bytes".
    pub(crate) fn fold_rate(&self, bytes: u64) -> String {
        match bytes {
            0 => "no bytes".into(),
            b => format!("{:.1} ms/MB", self.fold_seconds * 1e3 / (b as f64 / 1e6)),
        }
    }
}

impl Measured {
    /// This container's disk rate variable, as read.
    pub(crate) fn disk_rate_env() -> Option<String> {
        std::env::var_os(yard_appmaster::typing::DISK_RATE_ENV)
            .map(|v| v.to_string_lossy().chars().take(64).collect())
    }
}

/// The master's reply to a task's progress, shuffle or readiness report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Reply {
    pub kill: bool,
    /// To `ready`: how much of its input the reduce keeps (Dart Alg. 5).
    #[serde(default)]
    pub keep_bytes: Option<u64>,
    /// To a reduce, under the deadline guard: emit what it has folded in, now.
    #[serde(default)]
    pub cut: bool,
}
