//! The figures `yard trace inspect` prints: counts, bytes, time span, size bins, failures.

use std::collections::HashSet;

use serde::Serialize;

use crate::{Format, Job, Millis, Outcome, Workload};

/// The papers' job size bins, by map + reduce task count (Dart §6.1: Small < 100 tasks,
/// Medium 100–1000, Large > 1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeBin {
    Small,
    Medium,
    Large,
}

impl SizeBin {
    pub const ALL: [SizeBin; 3] = [SizeBin::Small, SizeBin::Medium, SizeBin::Large];

    pub fn of_tasks(tasks: u64) -> SizeBin {
        match tasks {
            0..100 => SizeBin::Small,
            100..=1000 => SizeBin::Medium,
            _ => SizeBin::Large,
        }
    }

    pub fn of(job: &Job) -> SizeBin {
        SizeBin::of_tasks(job.task_count())
    }

    pub fn name(self) -> &'static str {
        match self {
            SizeBin::Small => "small",
            SizeBin::Medium => "medium",
            SizeBin::Large => "large",
        }
    }
}

/// Jobs per size bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BinCounts {
    pub small: u64,
    pub medium: u64,
    pub large: u64,
}

/// Task and attempt counts that ended in one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct EndCounts {
    /// Tasks whose final status is this.
    pub tasks: u64,
    /// Attempts that ended this way (a retried task that later succeeded counts here only).
    pub attempts: u64,
}

/// What a trace holds, in figures. Serialized as `yard trace inspect --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub format: Format,
    pub jobs: u64,
    pub map_tasks: u64,
    pub reduce_tasks: u64,
    /// Total map input bytes (tasks with unrecorded input count as 0).
    pub input_bytes: u64,
    /// Map tasks whose input bytes the trace does not record.
    pub maps_without_bytes: u64,
    /// Tasks with a recorded duration.
    pub tasks_with_duration: u64,
    /// From the first submit to the last known event (a job's finish, else its submit), seconds.
    pub span_s: f64,
    pub first_submit_ms: Option<Millis>,
    pub last_event_ms: Option<Millis>,
    pub size_bins: BinCounts,
    pub failed: EndCounts,
    pub killed: EndCounts,
    pub failed_jobs: u64,
    pub killed_jobs: u64,
    pub racks: u64,
    pub nodes: u64,
    /// Distinct job input paths (SWIM columns 7+); 0 when the trace records none.
    pub input_paths: u64,
    /// Jobs that record an input path.
    pub jobs_with_input_path: u64,
    /// What the reader passed over, one line each.
    pub notes: Vec<String>,
}

impl Workload {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            format: self.format,
            jobs: self.jobs.len() as u64,
            map_tasks: 0,
            reduce_tasks: 0,
            input_bytes: 0,
            maps_without_bytes: 0,
            tasks_with_duration: 0,
            span_s: 0.0,
            first_submit_ms: self.origin_ms(),
            last_event_ms: None,
            size_bins: BinCounts::default(),
            failed: EndCounts::default(),
            killed: EndCounts::default(),
            failed_jobs: 0,
            killed_jobs: 0,
            racks: self.topology.racks.len() as u64,
            nodes: self.topology.nodes.len() as u64,
            input_paths: 0,
            jobs_with_input_path: 0,
            notes: self.notes.clone(),
        };
        let mut paths = HashSet::new();
        for job in &self.jobs {
            if let Some(path) = &job.input_path {
                paths.insert(path.as_str());
                s.jobs_with_input_path += 1;
            }
            s.map_tasks += job.map_count();
            s.reduce_tasks += job.reduce_count();
            s.input_bytes = s.input_bytes.saturating_add(job.input_bytes());
            let last = job.finish_ms.unwrap_or(job.submit_ms).max(job.submit_ms);
            s.last_event_ms = s.last_event_ms.max(Some(last));
            match SizeBin::of(job) {
                SizeBin::Small => s.size_bins.small += 1,
                SizeBin::Medium => s.size_bins.medium += 1,
                SizeBin::Large => s.size_bins.large += 1,
            }
            match job.outcome {
                Outcome::Failed => s.failed_jobs += 1,
                Outcome::Killed => s.killed_jobs += 1,
                _ => {}
            }
            for group in job.maps.iter().chain(&job.reduces) {
                let task = &group.task;
                if task.duration_ms.is_some() {
                    s.tasks_with_duration += group.count;
                }
                let attempts = |o| task.attempts.iter().filter(|a| a.outcome == o).count() as u64;
                for (outcome, ends) in [
                    (Outcome::Failed, &mut s.failed),
                    (Outcome::Killed, &mut s.killed),
                ] {
                    ends.tasks += group.count * u64::from(task.status == outcome);
                    ends.attempts += group.count * attempts(outcome);
                }
            }
            s.maps_without_bytes += job
                .maps
                .iter()
                .filter(|g| g.task.bytes.is_none())
                .map(|g| g.count)
                .sum::<u64>();
        }
        s.input_paths = paths.len() as u64;
        if let (Some(first), Some(last)) = (s.first_submit_ms, s.last_event_ms) {
            s.span_s = (last - first) as f64 / 1000.0;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Attempt, Task, TaskGroup};

    #[test]
    fn bins_follow_the_papers_bounds() {
        assert_eq!(SizeBin::of_tasks(0), SizeBin::Small);
        assert_eq!(SizeBin::of_tasks(99), SizeBin::Small);
        assert_eq!(SizeBin::of_tasks(100), SizeBin::Medium);
        assert_eq!(SizeBin::of_tasks(1000), SizeBin::Medium);
        assert_eq!(SizeBin::of_tasks(1001), SizeBin::Large);
    }

    #[test]
    fn summary_counts_tasks_failures_and_span() {
        let killed_once = Task {
            bytes: Some(5),
            duration_ms: Some(3),
            status: Outcome::Succeeded,
            attempts: vec![
                Attempt {
                    outcome: Outcome::Killed,
                    ..Attempt::default()
                },
                Attempt {
                    outcome: Outcome::Succeeded,
                    ..Attempt::default()
                },
            ],
            ..Task::default()
        };
        let failed = Task {
            status: Outcome::Failed,
            ..Task::default()
        };
        let mut w = Workload::new(Format::Rumen);
        w.jobs.push(Job {
            submit_ms: 1_000,
            finish_ms: Some(4_500),
            maps: vec![
                TaskGroup {
                    count: 150,
                    task: killed_once,
                },
                TaskGroup::one(failed),
            ],
            ..Job::default()
        });
        w.jobs.push(Job {
            submit_ms: 2_000,
            outcome: Outcome::Killed,
            ..Job::default()
        });
        let s = w.summary();
        assert_eq!((s.jobs, s.map_tasks, s.reduce_tasks), (2, 151, 0));
        assert_eq!((s.input_bytes, s.maps_without_bytes), (750, 1));
        assert_eq!(s.tasks_with_duration, 150);
        assert_eq!(s.span_s, 3.5);
        assert_eq!(
            s.size_bins,
            BinCounts {
                small: 1,
                medium: 1,
                large: 0
            }
        );
        assert_eq!(
            s.killed,
            EndCounts {
                tasks: 0,
                attempts: 150
            }
        );
        assert_eq!(
            s.failed,
            EndCounts {
                tasks: 1,
                attempts: 0
            }
        );
        assert_eq!((s.failed_jobs, s.killed_jobs), (0, 1));
        assert_eq!((s.input_paths, s.jobs_with_input_path), (0, 0));
    }

    #[test]
    fn summary_counts_distinct_input_paths() {
        let mut w = Workload::new(Format::Swim);
        for path in [Some("a"), None, Some("b"), Some("a")] {
            w.jobs.push(Job {
                input_path: path.map(str::to_owned),
                ..Job::default()
            });
        }
        let s = w.summary();
        assert_eq!((s.input_paths, s.jobs_with_input_path), (2, 3));
    }
}
