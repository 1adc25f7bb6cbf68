//! A job's output dataset (Hadoop's `-output`): what its master is granted to write it with,
//! and what its tasks report having written. The rm checks the name is free when the job is
//! submitted (Hadoop's `FileAlreadyExistsException`), grants the job's master an upload
//! grant for that one name (`POST /ws/v1/yard/apps/{id}/output-grant`), and registers the
//! parts the master commits (`PUT /ws/v1/yard/apps/{id}/output`) under the job's user.

use serde::{Deserialize, Serialize};

use crate::protocol::BlockReplicas;

/// A node a part may be written to (a running nodemanager, `host:port`, and its rack).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputNode {
    pub node: String,
    pub rack: String,
}

/// `POST /ws/v1/yard/apps/{id}/output-grant`: the upload grant of the job's output dataset
/// and the nodes its parts may go to, for the job's master (which hands both to its tasks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputGrant {
    pub dataset: String,
    /// A data-plane upload grant for `dataset` (`crate::auth::DataGrant::Upload`).
    pub token: String,
    /// ms since the epoch.
    pub expires_ms: i64,
    pub nodes: Vec<OutputNode>,
}

/// `PUT /ws/v1/yard/apps/{id}/output`: the parts the job committed, one block each, in part
/// order (`part-r-00000`, …). The rm records them as the job's output dataset, owned by the
/// job's user; a name taken meanwhile is a 409.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputCommit {
    pub dataset: String,
    pub parts: Vec<BlockReplicas>,
}

/// `POST /ws/v1/yard/datasets/{name}/read-grant`: a data-plane grant to read one dataset's
/// blocks from the nodemanagers (`crate::auth::DataGrant::Read`), for `yard data cat|get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadGrant {
    pub token: String,
    /// ms since the epoch.
    pub expires_ms: i64,
}

/// `DELETE /ws/v1/yard/datasets/{name}` (`yard data rm`): the dataset has left the catalog;
/// `nodes` running nodes hold its blocks and delete them when their next heartbeats tell them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DatasetRemoved {
    pub dataset: String,
    pub nodes: usize,
}

/// What a job's answer says of its output (`answer.output`): the dataset, its parts, and
/// how much of the input they cover. `complete` is false when the deadline left reduces
/// unanswered (their parts are missing); `processedFraction` below 1 means the parts are of
/// the input read, not all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputView {
    pub dataset: String,
    /// Parts written (one block each).
    pub parts: u32,
    /// Parts a whole output has: the job's reduces (its maps, when map-only).
    pub tasks: u32,
    pub bytes: u64,
    pub complete: bool,
    pub processed_fraction: f64,
}

impl OutputView {
    pub fn of(
        dataset: &str,
        parts: &std::collections::BTreeMap<String, BlockReplicas>,
        tasks: u32,
        processed_fraction: f64,
    ) -> OutputView {
        OutputView {
            dataset: dataset.to_owned(),
            parts: parts.len() as u32,
            tasks,
            bytes: parts.values().map(|p| p.bytes).sum(),
            complete: parts.len() as u32 >= tasks,
            processed_fraction,
        }
    }
}

/// Hadoop's name of a task's output file: `part-r-00000` for reduce 0, `part-m-00003` for map
/// 3 of a map-only job (`FileOutputFormat.getUniqueFile`, five digits at least).
pub fn part_name(map_only: bool, task: u32) -> String {
    format!("part-{}-{task:05}", if map_only { 'm' } else { 'r' })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_as_hadoop_names_them_and_sort_in_task_order() {
        assert_eq!(part_name(false, 0), "part-r-00000");
        assert_eq!(part_name(true, 12), "part-m-00012");
        assert_eq!(part_name(false, 123_456), "part-r-123456");
        let mut names: Vec<String> = [10, 2, 1].iter().map(|&t| part_name(false, t)).collect();
        names.sort();
        assert_eq!(names, ["part-r-00001", "part-r-00002", "part-r-00010"]);
    }
}
