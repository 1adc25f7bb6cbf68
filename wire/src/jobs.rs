//! What the rm answers about MapReduce jobs and shared scans on `/ws/v1/yard/mapreduce/…`: a
//! job's view ([`JobView`]: its state, the job as submitted, its master's last progress with
//! the estimate against the deadline, the answer once there is one), the answer alone
//! ([`AnswerView`]), the list of jobs, and the shared scans' registry. The rm builds these and
//! `yard submit` reads them; `rm/tests/golden` holds what they look like on the wire.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deadline::Deadline;
use crate::protocol::{JobProgress, JobType};
use crate::views::{FinalApplicationStatus, QuotaView, YarnApplicationState};

/// A job's view (`GET /ws/v1/yard/mapreduce/jobs/{id}`, and the submission's 202).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    pub id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub state: YarnApplicationState,
    pub final_status: FinalApplicationStatus,
    /// Why the job ended as it did, as YARN's application diagnostics (a failed task's
    /// command, its exit code and the last lines of its stderr); empty while there is none.
    #[serde(default)]
    pub diagnostics: String,
    pub submitted_ms: i64,
    /// `null` without a deadline.
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = Option<i64>))]
    pub deadline_ms: Option<Deadline>,
    /// Negative once past; `null` without a deadline.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub ms_to_deadline: Option<i64>,
    /// The job as submitted (the master's `MapReduceJob`), as the rm stored it: opaque here,
    /// so a job stored by an older rm reads back as it was.
    pub spec: Value,
    /// Its master's last progress; `null` before its first allocate with one.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub progress: Option<ProgressView>,
    /// Every estimate of the job's end its master made, oldest first.
    pub estimates: Vec<EstimatePoint>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub quota: Option<QuotaView>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub job_type: Option<JobType>,
    /// `null` until it answers.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub processed_fraction: Option<f64>,
    /// The master's answer, opaque to the rm; `null` until it answers.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub answer: Option<Value>,
    pub links: JobLinks,
}

/// The master's progress as it sent it, with when the rm received it and the estimate
/// against the deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProgressView {
    #[serde(flatten)]
    pub progress: JobProgress,
    /// When the rm received it, ms since the epoch.
    pub at_ms: i64,
    /// When the master expects the job to end; `null` when it made no estimate.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub estimated_end_ms: Option<i64>,
    /// Positive: the estimate is ahead of the deadline by that much; `null` without a
    /// deadline or an estimate.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub slack_ms: Option<i64>,
}

/// One estimate of the job's end, ms since the epoch, made at `at_ms` (the rm keeps these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EstimatePoint {
    pub at_ms: i64,
    pub estimated_end_ms: i64,
}

/// Where to read more of the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobLinks {
    #[serde(rename = "self")]
    pub this: String,
    pub answer: String,
    pub app: String,
    pub state: String,
}

/// `{"job": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobReply {
    pub job: JobView,
}

/// `{"jobs": […]}` (`GET /ws/v1/yard/mapreduce/jobs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobsReply {
    pub jobs: Vec<JobView>,
}

/// A job's answer (`GET /ws/v1/yard/mapreduce/jobs/{id}/answer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AnswerView {
    pub id: String,
    pub state: YarnApplicationState,
    pub final_status: FinalApplicationStatus,
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = Option<i64>))]
    pub deadline_ms: Option<Deadline>,
    pub processed_fraction: f64,
    /// The master's answer (a MapReduce job's: its `job` line, estimates and top lists; a
    /// streaming job with `-reducer aggregate` adds the fields of `AggregateAnswer`).
    pub answer: Value,
}

/// `{"answer": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnswerReply {
    pub answer: AnswerView,
}

/// A dataset's shared scan: the master that hosts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanView {
    pub dataset: String,
    /// The host's application.
    pub host: String,
    /// The host master's umbilical base URL, where jobs attach.
    pub url: String,
}

/// `{"scans": […]}` (`GET /ws/v1/yard/mapreduce/scans`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScansReply {
    pub scans: Vec<ScanView>,
}

/// Who scans a dataset (`POST /ws/v1/yard/mapreduce/scans/{dataset}`): the host, whether it is
/// the caller, and the scan's credential (the same for the host and its riders).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanJoined {
    #[serde(flatten)]
    pub scan: ScanView,
    pub hosting: bool,
    pub token: String,
}

/// `DELETE /ws/v1/yard/mapreduce/scans/{dataset}`: whether the caller stopped hosting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanLeft {
    pub dataset: String,
    pub left: bool,
}
