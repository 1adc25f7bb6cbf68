//! The job's output dataset (`-output`), on the master's side: Hadoop's output committer.
//!
//! - Before the job proper runs, the master asks the rm for the output's upload grant and the
//!   running nodes (`POST /ws/v1/yard/apps/{id}/output-grant`). The task sampler's phase
//!   writes nothing: its tasks are a sample.
//! - A task that has its part ready asks `POST /mr/attempts/{a}/commit` (Hadoop's
//!   `canCommit`): one attempt of a task at a time may write, the first to ask; another
//!   waits until that one ended without its part accepted (failed, killed, lost), and writes
//!   nothing if the task's part is in. The reply names the part and where to
//!   write it. The task uploads, then reports the replicas (`/mr/attempts/{a}/part`) before
//!   `done`.
//! - The part of an attempt the policy accepted (its `done`) is the task's; the parts of
//!   failed and killed attempts are never named. When the job answers, the master commits the
//!   accepted parts as the dataset (`PUT /ws/v1/yard/apps/{id}/output`), just before its
//!   answer, which names it ([`OutputView`]). A job that fails never commits: it leaves no
//!   dataset (stray blocks of its attempts stay on the nodes, named by no dataset).
//!
//! Parts are named as Hadoop names them (`part-r-00000`, `part-m-00000` for a map-only job)
//! under the output dataset's name on the nodes: an attempt let write after an earlier one
//! failed replaces its blocks. The block map records each part's SHA-256 as its committed
//! attempt wrote it, so a reader tells a replica an attempt that was lost but still ran
//! overwrote afterwards, and reads another replica.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Json;
use axum::extract::{Path, State as AxumState};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use yard_appmaster::policy::{AttemptId, TaskRef};
use yard_wire::outputs::{OutputCommit, OutputGrant, OutputView, part_name};
use yard_wire::protocol::BlockReplicas;

use super::rm::RmClient;
use super::state::{Shared, State};
use super::umbilical::{St, with};
use crate::output::PartTarget;

/// The commits of one phase: who may write each task's part, and what was written.
#[derive(Default)]
pub(super) struct Commits {
    /// The attempt let write each task's part (Hadoop's `canCommit`).
    holder: HashMap<TaskRef, AttemptId>,
    /// Parts written by attempts not yet accepted.
    written: HashMap<AttemptId, BlockReplicas>,
    /// Each task's accepted part, by part name.
    pub(super) parts: BTreeMap<String, BlockReplicas>,
    /// Tasks whose part is in.
    done: HashMap<TaskRef, String>,
}

/// The master's reply to `commit`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CommitReply {
    /// Stop: this attempt is over.
    pub kill: bool,
    /// Ask again soon: another live attempt of the task is writing its part.
    #[serde(default)]
    pub wait: bool,
    /// The part's name and where to write it; `None` (and no kill): the job writes no output
    /// (or this is the task sampler), nothing to write.
    #[serde(default)]
    pub part: Option<String>,
    #[serde(default)]
    pub target: Option<PartTarget>,
}

impl Commits {
    /// Whether `attempt` of `task` may write its part now: `Some(true)` yes, `Some(false)`
    /// not yet (another live attempt writes), `None` never (the task's part is in).
    /// `ended(a)`: attempt `a` is over.
    fn may_write(
        &mut self,
        task: TaskRef,
        attempt: AttemptId,
        ended: impl Fn(AttemptId) -> bool,
    ) -> Option<bool> {
        if self.done.contains_key(&task) {
            return None;
        }
        match self.holder.get(&task) {
            Some(&h) if h != attempt && !ended(h) => Some(false),
            _ => {
                self.holder.insert(task, attempt);
                Some(true)
            }
        }
    }

    /// The policy accepted `attempt` of `task`: its part, if it wrote one, is the task's.
    pub(super) fn accepted(&mut self, task: TaskRef, attempt: AttemptId) {
        if let Some(part) = self.written.remove(&attempt) {
            self.done.insert(task, part.block.clone());
            self.parts.insert(part.block.clone(), part);
        }
    }
}

impl State {
    /// Hadoop's `canCommit` for attempt `name`.
    fn can_commit(&mut self, name: &str) -> CommitReply {
        let kill = CommitReply {
            kill: true,
            ..CommitReply::default()
        };
        let Some(attempt) = self.attempt(name) else {
            return kill;
        };
        let target = self.output.clone();
        let Some(job) = self.job.as_mut() else {
            return kill;
        };
        let Some(live) = job.live(attempt) else {
            return kill;
        };
        let task = live.task;
        let (Some(target), false) = (target, job.sampler) else {
            return CommitReply::default();
        };
        let part = match task {
            TaskRef::Reduce(r) => part_name(false, r.0),
            TaskRef::Map(m) => part_name(true, job.maps[m.0 as usize].split.index),
        };
        let attempts = &job.attempts;
        match job
            .output
            .may_write(task, attempt, |a| attempts.get(&a).is_none_or(|l| l.ended))
        {
            Some(true) => CommitReply {
                part: Some(part),
                target: Some(target),
                ..CommitReply::default()
            },
            Some(false) => CommitReply {
                wait: true,
                ..CommitReply::default()
            },
            // Another attempt's part is in: this one has nothing to write.
            None => CommitReply::default(),
        }
    }

    /// Attempt `name` wrote its part: the task's once the attempt is accepted.
    fn part_written(&mut self, name: &str, part: BlockReplicas) -> bool {
        let Some(attempt) = self.attempt(name) else {
            return false;
        };
        let Some(job) = self.job.as_mut() else {
            return false;
        };
        match job.live(attempt) {
            Some(live) if job.output.holder.get(&live.task) == Some(&attempt) => {
                job.output.written.insert(attempt, part);
                true
            }
            _ => false,
        }
    }
}

pub(super) async fn commit(
    AxumState(shared): St,
    Path(attempt): Path<String>,
) -> Json<CommitReply> {
    Json(with(&shared, |s| s.can_commit(&attempt)))
}

pub(super) async fn part(
    AxumState(shared): St,
    Path(attempt): Path<String>,
    Json(part): Json<BlockReplicas>,
) -> Json<Value> {
    let kept = with(&shared, |s| s.part_written(&attempt, part));
    Json(json!({ "kill": !kept }))
}

/// The output grant, for the job proper's tasks.
pub(super) async fn grant(rm: &RmClient, shared: &Arc<Shared>) -> Result<()> {
    // The route reads no body: an empty object.
    let grant: OutputGrant = rm
        .app_call(
            reqwest::Method::POST,
            "output-grant",
            &serde_json::Map::new(),
        )
        .await
        .context("asking the rm for the output dataset's grant")?;
    with(shared, |s| s.output = Some(PartTarget::from(grant)));
    Ok(())
}

/// The job commit: the accepted parts become the output dataset; what the answer says of it.
/// `tasks`: how many parts a whole output has (reduces, or maps of a map-only job).
pub(super) async fn commit_job(
    rm: &RmClient,
    dataset: &str,
    parts: BTreeMap<String, BlockReplicas>,
    tasks: u32,
    processed_fraction: f64,
) -> Result<OutputView> {
    let view = OutputView::of(dataset, &parts, tasks, processed_fraction);
    let commit = OutputCommit {
        dataset: dataset.to_owned(),
        parts: parts.into_values().collect(),
    };
    rm.app_call::<yard_wire::protocol::Dataset>(reqwest::Method::PUT, "output", &commit)
        .await
        .with_context(|| format!("committing the output dataset {dataset}"))?;
    Ok(view)
}

#[cfg(test)]
mod tests {
    use yard_appmaster::policy::ReduceId;

    use super::*;

    fn part(name: &str) -> BlockReplicas {
        BlockReplicas {
            block: name.into(),
            bytes: 1,
            nodes: vec!["n:1".into()],
            sha256: None,
        }
    }

    #[test]
    fn one_attempt_writes_a_part_others_wait_until_it_ends_and_only_an_accepted_part_counts() {
        let mut c = Commits::default();
        let r0 = TaskRef::Reduce(ReduceId(0));
        let (a1, a2) = (AttemptId(1), AttemptId(2));
        let none_ended = |_| false;
        assert_eq!(c.may_write(r0, a1, none_ended), Some(true));
        assert_eq!(c.may_write(r0, a1, none_ended), Some(true), "asked again");
        assert_eq!(c.may_write(r0, a2, none_ended), Some(false), "a1 writes");
        // a1 failed after writing: its part is never named; a2 may write now.
        c.written.insert(a1, part("part-r-00000"));
        let a1_ended = |a| a == a1;
        assert_eq!(c.may_write(r0, a2, a1_ended), Some(true));
        c.written.insert(a2, part("part-r-00000"));
        c.accepted(r0, a2);
        assert_eq!(c.parts.len(), 1);
        assert!(c.written.contains_key(&a1), "a1's part stays unnamed");
        // The part is in: a later attempt writes nothing.
        assert_eq!(c.may_write(r0, AttemptId(3), |_| true), None);
        // An accepted attempt that wrote nothing (no output) names no part.
        let r1 = TaskRef::Reduce(ReduceId(1));
        c.accepted(r1, AttemptId(4));
        assert_eq!(c.parts.len(), 1);
    }
}
