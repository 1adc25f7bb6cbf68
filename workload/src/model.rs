//! The one workload model that every trace format is read into.
//!
//! Times are milliseconds ([`Millis`]). Rumen traces keep their epoch timestamps; SWIM, SLS and
//! SYNTH times are relative to the trace's own t = 0. Use [`Workload::origin_ms`] to rebase.

use std::collections::HashMap;

use serde::Serialize;

use crate::Format;

/// Milliseconds, absolute (epoch) or relative to the trace start depending on the format.
pub type Millis = i64;

/// Everything a trace says: the jobs and, where the trace gives it, the cluster topology.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    pub format: Format,
    /// Jobs in the order the trace lists them (SWIM and Rumen: submit order).
    pub jobs: Vec<Job>,
    /// Racks and nodes named by the trace (topology files, task hosts); empty for SWIM.
    pub topology: Topology,
    /// What the reader passed over and why (e.g. a nameless node entry), one line each, so
    /// nothing in the file is dropped without the user being told.
    pub notes: Vec<String>,
}

impl Workload {
    /// An empty workload of the given format, for readers to fill.
    pub fn new(format: Format) -> Self {
        Workload {
            format,
            jobs: Vec::new(),
            topology: Topology::default(),
            notes: Vec::new(),
        }
    }

    /// The earliest submit time, the natural t = 0 of the workload.
    pub fn origin_ms(&self) -> Option<Millis> {
        self.jobs.iter().map(|j| j.submit_ms).min()
    }
}

/// How a job, task or attempt ended, as far as the trace knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
    Killed,
    /// Not recorded (`null`), still running when the trace was cut, or a state yard does not model.
    #[default]
    Unknown,
}

impl Outcome {
    /// Reads Hadoop's spellings (`SUCCESS`, `SUCCEEDED`, `FAILED`, `KILLED`), case-insensitively.
    /// Any other state (`RUNNING`, `PREP`, …) is [`Outcome::Unknown`]: a trace cut mid-run is still a trace.
    pub fn from_hadoop(s: &str) -> Outcome {
        match s.to_ascii_uppercase().as_str() {
            "SUCCESS" | "SUCCEEDED" => Outcome::Succeeded,
            "FAILED" => Outcome::Failed,
            "KILLED" => Outcome::Killed,
            _ => Outcome::Unknown,
        }
    }
}

/// One MapReduce job.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Job {
    pub id: String,
    pub name: Option<String>,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub submit_ms: Millis,
    /// When the job started running (Rumen `launchTime`, SLS `job.start.ms`).
    pub start_ms: Option<Millis>,
    pub finish_ms: Option<Millis>,
    /// An absolute deadline where the trace gives one (SYNTH's `deadline_factor`).
    pub deadline_ms: Option<Millis>,
    pub outcome: Outcome,
    pub maps: Vec<TaskGroup>,
    pub reduces: Vec<TaskGroup>,
    /// Job-level byte totals where the trace records them (SWIM columns 5–6).
    pub shuffle_bytes: Option<u64>,
    pub output_bytes: Option<u64>,
    /// Where the job read its input (SWIM column 7); `None` when not recorded or empty.
    /// Jobs with the same path read the same data (for grouping them, e.g. shared scans).
    pub input_path: Option<String>,
    /// Where the job wrote its output (SWIM column 8); `None` when not recorded or empty.
    pub output_path: Option<String>,
}

impl Job {
    pub fn map_count(&self) -> u64 {
        self.maps.iter().map(|g| g.count).sum()
    }

    pub fn reduce_count(&self) -> u64 {
        self.reduces.iter().map(|g| g.count).sum()
    }

    /// Map and reduce tasks together: what the papers' size bins count.
    pub fn task_count(&self) -> u64 {
        self.map_count() + self.reduce_count()
    }

    /// Total map input bytes; tasks whose input is not recorded count as 0.
    pub fn input_bytes(&self) -> u64 {
        self.maps
            .iter()
            .map(|g| g.count.saturating_mul(g.task.bytes.unwrap_or(0)))
            .fold(0u64, u64::saturating_add)
    }

    /// Map tasks one by one, each group expanded (lazily: a SWIM job may hold 10⁵ blocks).
    pub fn map_tasks(&self) -> impl Iterator<Item = &Task> {
        expand(&self.maps)
    }

    pub fn reduce_tasks(&self) -> impl Iterator<Item = &Task> {
        expand(&self.reduces)
    }
}

fn expand(groups: &[TaskGroup]) -> impl Iterator<Item = &Task> {
    groups
        .iter()
        .flat_map(|g| std::iter::repeat_n(&g.task, g.count as usize))
}

/// `count` identical tasks. SWIM jobs turn into up to millions of block-sized map tasks; a group
/// keeps that to one or two entries, so reading a day of FB-2010 stays fast and small.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskGroup {
    pub count: u64,
    pub task: Task,
}

impl TaskGroup {
    pub fn one(task: Task) -> Self {
        TaskGroup { count: 1, task }
    }
}

/// One map or reduce task as the trace recorded it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Task {
    /// Map: input split bytes. Reduce: shuffle (input) bytes. `None` when not recorded.
    pub bytes: Option<u64>,
    /// The recorded run time: the successful attempt's, else the last attempt's
    /// (attempt runtime = finishTime − startTime). `None` when the trace has no durations.
    pub duration_ms: Option<Millis>,
    pub start_ms: Option<Millis>,
    /// Where the task (its last attempt) ran.
    pub host: Option<NodeId>,
    /// Where its input lives (Rumen `preferredLocations`): the base of map locality.
    pub preferred: Vec<NodeId>,
    pub status: Outcome,
    /// Every attempt, in trace order; empty when the trace records none.
    pub attempts: Vec<Attempt>,
}

/// One attempt of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Attempt {
    pub outcome: Outcome,
    pub start_ms: Option<Millis>,
    pub finish_ms: Option<Millis>,
    pub host: Option<NodeId>,
}

impl Attempt {
    /// finishTime − startTime, when both are recorded, in order, and the difference fits.
    pub fn runtime_ms(&self) -> Option<Millis> {
        match (self.start_ms, self.finish_ms) {
            (Some(s), Some(f)) if f >= s => f.checked_sub(s),
            _ => None,
        }
    }
}

/// Index of a node in [`Topology::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct NodeId(pub u32);

/// Index of a rack in [`Topology::racks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RackId(pub u32);

/// Racks and nodes. Node names are unique; a node belongs to at most one rack.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Topology {
    pub racks: Vec<String>,
    pub nodes: Vec<Node>,
    #[serde(skip)]
    rack_index: HashMap<String, RackId>,
    #[serde(skip)]
    node_index: HashMap<String, NodeId>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Node {
    pub name: String,
    pub rack: Option<RackId>,
    pub memory_mb: Option<u64>,
    pub vcores: Option<u32>,
    pub labels: Vec<String>,
}

impl Topology {
    /// The id of `host`, adding it (and its rack) on first sight. A rack learnt later fills in
    /// a node first seen without one; a node never moves between racks once placed.
    pub fn intern(&mut self, rack: Option<&str>, host: &str) -> NodeId {
        let rack = rack.map(|r| self.intern_rack(r));
        if let Some(&id) = self.node_index.get(host) {
            let node = &mut self.nodes[id.0 as usize];
            if node.rack.is_none() {
                node.rack = rack;
            }
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(Node {
            name: host.to_owned(),
            rack,
            ..Node::default()
        });
        self.node_index.insert(host.to_owned(), id);
        id
    }

    /// The id of a rack, adding it on first sight (a rack may have no nodes yet).
    pub fn intern_rack(&mut self, rack: &str) -> RackId {
        if let Some(&id) = self.rack_index.get(rack) {
            return id;
        }
        let id = RackId(self.racks.len() as u32);
        self.racks.push(rack.to_owned());
        self.rack_index.insert(rack.to_owned(), id);
        id
    }

    /// Reads Hadoop's `/rack/host` location strings (or a bare `host`).
    pub fn intern_path(&mut self, path: &str) -> NodeId {
        match path.trim_start_matches('/').rsplit_once('/') {
            Some((rack, host)) => self.intern(Some(rack), host),
            None => self.intern(None, path.trim_start_matches('/')),
        }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0 as usize]
    }

    pub fn find(&self, host: &str) -> Option<NodeId> {
        self.node_index.get(host).copied()
    }

    pub fn rack_name(&self, id: RackId) -> &str {
        &self.racks[id.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intern_reuses_ids_and_fills_in_a_late_rack() {
        let mut t = Topology::default();
        let a = t.intern(None, "a");
        let b = t.intern_path("/r1/b");
        assert_eq!(t.intern_path("/r2/a"), a);
        assert_eq!(t.node(a).rack, Some(RackId(1)));
        assert_eq!(t.rack_name(t.node(b).rack.unwrap()), "r1");
        assert_eq!(
            t.intern_path("b"),
            b,
            "a bare host name finds the placed node"
        );
        assert_eq!(t.nodes.len(), 2);
    }

    #[test]
    fn groups_expand_lazily_and_sum_bytes() {
        let task = |b| Task {
            bytes: Some(b),
            ..Task::default()
        };
        let job = Job {
            maps: vec![
                TaskGroup {
                    count: 3,
                    task: task(10),
                },
                TaskGroup::one(task(4)),
            ],
            ..Job::default()
        };
        assert_eq!(job.map_count(), 4);
        assert_eq!(job.input_bytes(), 34);
        assert_eq!(job.map_tasks().count(), 4);
        assert_eq!(job.reduce_tasks().count(), 0);
    }

    #[test]
    fn attempt_runtime_needs_both_ends_in_order() {
        let a = |s, f| Attempt {
            start_ms: s,
            finish_ms: f,
            ..Attempt::default()
        };
        assert_eq!(a(Some(10), Some(25)).runtime_ms(), Some(15));
        assert_eq!(a(None, Some(25)).runtime_ms(), None);
        assert_eq!(a(Some(30), Some(25)).runtime_ms(), None);
        assert_eq!(a(Some(i64::MIN), Some(i64::MAX)).runtime_ms(), None);
    }

    #[test]
    fn hadoop_outcomes() {
        assert_eq!(Outcome::from_hadoop("SUCCESS"), Outcome::Succeeded);
        assert_eq!(Outcome::from_hadoop("killed"), Outcome::Killed);
        assert_eq!(Outcome::from_hadoop("RUNNING"), Outcome::Unknown);
    }
}
