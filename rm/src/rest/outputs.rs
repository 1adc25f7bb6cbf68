//! Datasets as jobs' outputs and as what clients read (issue 31 item 3):
//!
//! - `POST /ws/v1/yard/datasets/{name}/read-grant` → a [`ReadGrant`] for `yard data cat|get`:
//!   the nodemanagers serve a dataset's blocks to its holder. Datasets are not private in
//!   yard (any user lists them, reads their block maps and runs jobs over them), so any user
//!   (or admin) may have one.
//! - `POST /ws/v1/yard/apps/{id}/output-grant` → an [`OutputGrant`] for a job's master: the
//!   upload grant of the job's `output` (which must still be free) and the running nodes its
//!   tasks place their parts on.
//! - `PUT /ws/v1/yard/apps/{id}/output` with an [`OutputCommit`]: the master's job commit,
//!   recording the parts as the output dataset, owned by the job's user. Only the parts the
//!   master committed (one accepted attempt per reduce) are named, so parts of failed or
//!   killed attempts never appear; a job that fails never commits and leaves no dataset.
//!
//! An output name is taken when a dataset has it or an unfinished job writes it: submission
//! refuses such a job with a 409 (Hadoop's `FileAlreadyExistsException`), before anything runs.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::json;
use yard_wire::auth::DataGrant;
use yard_wire::outputs::{OutputCommit, OutputGrant, OutputNode, ReadGrant};
use yard_wire::protocol::Dataset;

use super::caller::Caller;
use super::{ApiError, Reply, Rm, ok_view};
use crate::cluster::{Cluster, NodeState, Touch, job_of};

/// How long a read grant stays valid: one `yard data cat` or `get`.
const READ_GRANT_MS: i64 = 3_600_000;
/// How long a job's output grant stays valid: its tasks write their parts at the job's end,
/// however long the job ran (a job past this fails its writes, saying the grant expired).
const OUTPUT_GRANT_MS: i64 = 24 * 3_600_000;

/// Why `name` cannot be a new job's output: a dataset has it, its blocks are being deleted,
/// or an unfinished job other than `except` writes it.
fn taken(c: &Cluster, name: &str, except: Option<&str>) -> Option<String> {
    if c.dataset(name).is_ok() {
        return Some(format!("dataset {name} already exists"));
    }
    if c.being_deleted(name) {
        return Some(format!(
            "dataset {name}'s blocks are being deleted from its nodes (a few seconds)"
        ));
    }
    c.apps()
        .filter(|a| Some(a.application_id.as_str()) != except)
        .filter(|a| !a.lifecycle.state.is_final())
        .find(|a| job_of(a).and_then(|j| j.output).as_deref() == Some(name))
        .map(|a| format!("job {} is writing dataset {name}", a.application_id))
}

/// The 409 of an output name that is taken (Hadoop's `FileAlreadyExistsException`).
pub(super) fn output_free(c: &Cluster, name: &str, except: Option<&str>) -> Result<(), ApiError> {
    match taken(c, name, except) {
        None => Ok(()),
        Some(why) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "output {name}: {why} (Hadoop's FileAlreadyExistsException); name a new dataset"
            ),
            json!({ "field": "job.output", "output": name }),
        )),
    }
}

/// The output dataset of application `id`, if the caller is its current master and its job
/// writes one.
fn calling_job_output(
    c: &Cluster,
    caller: &Caller,
    id: &str,
) -> Result<(String, String), ApiError> {
    caller.master_of(c, id)?;
    let app = c
        .app(id)
        .ok_or_else(|| ApiError::forbidden("no such application"))?;
    match job_of(app).and_then(|j| j.output) {
        Some(output) => Ok((output, app.user.clone())),
        None => Err(ApiError::forbidden(format!(
            "{id} is no MapReduce job with an output"
        ))),
    }
}

pub(super) async fn read_grant(
    State(rm): State<Rm>,
    Path(name): Path<String>,
    caller: Caller,
) -> Reply {
    caller.user()?;
    let grant = rm.with(|c, now| {
        c.dataset(&name)?;
        let expires_ms = now + READ_GRANT_MS;
        let token = c.data_token(&DataGrant::Read {
            dataset: name.clone(),
            expires_ms,
        });
        Ok::<_, ApiError>(ReadGrant { token, expires_ms })
    })?;
    ok_view(&grant)
}

pub(super) async fn output_grant(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
) -> Reply {
    let grant = rm.with(|c, now| {
        let (dataset, _) = calling_job_output(c, &caller, &id)?;
        output_free(c, &dataset, Some(&id))?;
        let expires_ms = now + OUTPUT_GRANT_MS;
        let token = c.data_token(&DataGrant::Upload {
            dataset: dataset.clone(),
            expires_ms,
        });
        let nodes = c
            .nodes()
            .filter(|n| n.state == NodeState::Running)
            .map(|n| OutputNode {
                node: n.node_id.clone(),
                rack: n.rack.clone(),
            })
            .collect();
        Ok::<_, ApiError>(OutputGrant {
            dataset,
            token,
            expires_ms,
            nodes,
        })
    })?;
    ok_view(&grant)
}

pub(super) async fn commit_output(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    caller: Caller,
    body: Result<Json<OutputCommit>, JsonRejection>,
) -> Reply {
    rm.with(|c, _| calling_job_output(c, &caller, &id))?;
    let Json(commit) = body?;
    let dataset = rm
        .commit(Touch::Dataset(commit.dataset.clone()), |c, now| {
            let (output, user) = calling_job_output(c, &caller, &id)?;
            if commit.dataset != output {
                return Err(ApiError::forbidden(format!(
                    "{id} writes dataset {output}, not {}",
                    yard_wire::limits::echo(&commit.dataset)
                )));
            }
            output_free(c, &output, Some(&id))?;
            let d = Dataset {
                name: output.clone(),
                created_ms: 0,
                blocks: commit.parts,
            };
            c.put_dataset(now, d, &user)?;
            Ok::<_, ApiError>(c.dataset(&output).cloned()?)
        })
        .await?;
    ok_view(&dataset)
}
