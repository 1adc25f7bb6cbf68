//! Hadoop SLS traces (`inputsls.json`): concatenated job objects, each listing the containers it
//! ran, times in ms from the simulation start. Keys are read the way SLS's `AMDefinitionSLS` and
//! `TaskContainerDefinition` read them; every container is a completed (succeeded) task.
//!
//! A `{"num.nodes", "num.racks"}` object (SLS accepts one anywhere; it usually comes first) only
//! sizes SLS's generated cluster. It is checked for numbers and otherwise ignored: yard does not
//! invent the nodes SLS would.

use serde::Deserialize;

use crate::error::TraceError;
use crate::json::{for_each_object, sentinel};
use crate::{Format, Job, Outcome, Task, TaskGroup, Workload};

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "num.nodes")]
    num_nodes: Option<u64>,
    #[serde(rename = "num.racks")]
    num_racks: Option<u64>,
    #[serde(rename = "job.id")]
    id: Option<String>,
    #[serde(rename = "job.user")]
    user: Option<String>,
    #[serde(rename = "job.queue.name")]
    queue: Option<String>,
    #[serde(
        rename = "job.start.ms",
        default,
        deserialize_with = "sentinel::opt_i64"
    )]
    start: Option<i64>,
    #[serde(rename = "job.end.ms", default, deserialize_with = "sentinel::opt_i64")]
    end: Option<i64>,
    /// The AM simulator to run (`mapreduce`, `dag`, `stream`); yard has one kind of AM.
    #[serde(rename = "am.type")]
    am_type: Option<String>,
    #[serde(rename = "yarn.sls.am.type")]
    sls_am_type: Option<String>,
    #[serde(rename = "job.count")]
    count: Option<i64>,
    #[serde(rename = "job.tasks")]
    tasks: Option<Vec<Container>>,
}

#[derive(Deserialize)]
struct Container {
    #[serde(rename = "container.host")]
    host: Option<String>,
    #[serde(
        rename = "container.start.ms",
        default,
        deserialize_with = "sentinel::opt_i64"
    )]
    start: Option<i64>,
    #[serde(
        rename = "container.end.ms",
        default,
        deserialize_with = "sentinel::opt_i64"
    )]
    end: Option<i64>,
    #[serde(
        rename = "container.duration.ms",
        default,
        deserialize_with = "sentinel::opt_i64"
    )]
    duration: Option<i64>,
    /// The older spelling, still read by SLS (`withDurationLegacy`).
    #[serde(
        rename = "duration.ms",
        default,
        deserialize_with = "sentinel::opt_i64"
    )]
    legacy_duration: Option<i64>,
    #[serde(rename = "container.priority")]
    priority: Option<i64>,
    #[serde(rename = "container.type")]
    kind: Option<String>,
    count: Option<i64>,
}

/// SLS's priority convention (`AMDefinitionRumen.DEFAULT_MAPPER_PRIORITY` / `…REDUCER…`).
const MAP_PRIORITY: i64 = 20;
const REDUCE_PRIORITY: i64 = 10;
/// Copies of one job (`job.count`) are materialized: a bound keeps a typo from exhausting memory.
const MAX_COPIES: i64 = 1_000_000;

pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Workload, TraceError> {
    let mut workload = Workload::new(Format::Sls);
    let mut job_objects = 0usize;
    for_each_object::<Entry, _>(file, bytes, |e, object| {
        let index = object.index;
        let is_job = e.id.is_some()
            || e.user.is_some()
            || e.queue.is_some()
            || e.start.is_some()
            || e.end.is_some()
            || e.am_type.is_some()
            || e.sls_am_type.is_some()
            || e.count.is_some()
            || e.tasks.is_some();
        if !is_job {
            if e.num_nodes.is_some() || e.num_racks.is_some() {
                let show = |v: Option<u64>| v.map_or("?".to_owned(), |v| v.to_string());
                workload.notes.push(format!(
                    "ignored the cluster size object ({} nodes, {} racks): yard does not invent hosts",
                    show(e.num_nodes),
                    show(e.num_racks)
                ));
                return Ok(());
            }
            return Err(TraceError::new(
                file,
                object.position(),
                format!(
                    "object {index}: expected an SLS job (`job.*` keys) or cluster size (`num.nodes`), found neither"
                ),
            ));
        }
        // SLS numbers the AMs it starts when the trace gives no id.
        let base = e.id.unwrap_or_else(|| format!("job_{job_objects}"));
        job_objects += 1;
        let fail = |field: String, problem: String| {
            TraceError::new(
                file,
                object.position(),
                format!("job index {index} (`{base}`): {problem}"),
            )
            .field(field)
        };
        if let (Some(s), Some(f)) = (e.start, e.end) {
            if f < s {
                return Err(fail(
                    "job.end.ms".into(),
                    format!("the job ends at {f}, before it starts at {s}"),
                ));
            }
        }
        let mut job = Job {
            user: e.user,
            queue: e.queue,
            // SLS's `AMDefinition` starts a job without `job.start.ms` at 0.
            submit_ms: e.start.unwrap_or(0),
            start_ms: e.start,
            finish_ms: e.end,
            outcome: Outcome::Succeeded,
            ..Job::default()
        };
        for (t, c) in e.tasks.into_iter().flatten().enumerate() {
            let field = |key: &str| format!("job.tasks[{t}].{key}");
            let reduce = match (c.kind.as_deref(), c.priority) {
                (Some(k), _) if k.eq_ignore_ascii_case("map") => false,
                (Some(k), _) if k.eq_ignore_ascii_case("reduce") => true,
                (Some(k), _) => {
                    return Err(fail(
                        field("container.type"),
                        format!("expected `map` or `reduce`, found {k:?}"),
                    ));
                }
                (None, None | Some(MAP_PRIORITY)) => false,
                (None, Some(REDUCE_PRIORITY)) => true,
                (None, Some(p)) => {
                    return Err(fail(
                        field("container.type"),
                        format!(
                            "missing, and container.priority {p} is neither {MAP_PRIORITY} (map) nor {REDUCE_PRIORITY} (reduce)"
                        ),
                    ));
                }
            };
            let span = match (c.start, c.end) {
                (Some(s), Some(f)) if f < s => {
                    return Err(fail(
                        field("container.end.ms"),
                        format!(
                            "the container ends at {f}, before it starts at {s} (negative duration)"
                        ),
                    ));
                }
                (Some(s), Some(f)) => Some(f - s),
                _ => None,
            };
            for (key, d) in [
                ("container.duration.ms", c.duration),
                ("duration.ms", c.legacy_duration),
            ] {
                if let Some(d) = d.filter(|&d| d < 0) {
                    return Err(fail(
                        field(key),
                        format!("expected a duration ≥ 0, found {d}"),
                    ));
                }
            }
            let host = c
                .host
                .as_deref()
                .filter(|h| !h.trim_matches('/').is_empty());
            let task = Task {
                // SLS's `validateAndGetDuration` order: explicit durations before end − start.
                duration_ms: c.duration.or(c.legacy_duration).or(span),
                start_ms: c.start,
                host: host.map(|h| workload.topology.intern_path(h)),
                status: Outcome::Succeeded,
                ..Task::default()
            };
            // SLS (`withCount`) runs a container at least once.
            let group = TaskGroup {
                count: c.count.unwrap_or(1).max(1) as u64,
                task,
            };
            if reduce {
                job.reduces.push(group)
            } else {
                job.maps.push(group)
            }
        }
        // `job.count` repeats the job (SLS: `AMRunner.startAMs`, at least once).
        let count = e.count.unwrap_or(1).max(1);
        if count > MAX_COPIES {
            return Err(fail(
                "job.count".into(),
                format!("expected at most {MAX_COPIES}, found {count}"),
            ));
        }
        if count == 1 {
            job.id = base;
            workload.jobs.push(job);
        } else {
            for i in 1..=count {
                workload.jobs.push(Job {
                    id: format!("{base}_{i}"),
                    ..job.clone()
                });
            }
        }
        Ok(())
    })?;
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;

    fn read(text: &str) -> Result<Workload, TraceError> {
        parse("t.json", text.as_bytes())
    }

    fn err(text: &str) -> TraceError {
        read(text).unwrap_err()
    }

    #[test]
    fn reads_jobs_containers_hosts_and_the_cluster_object() {
        let w = read(
            r#"{"num.nodes": 10, "num.racks": 2}
               {"am.type": "mapreduce", "job.start.ms": 5, "job.end.ms": 90, "job.queue.name": "q",
                "job.id": "j1", "job.user": "u", "job.tasks": [
                  {"container.host": "/r1/n1", "container.start.ms": 10, "container.end.ms": 30,
                   "container.priority": 20, "container.type": "map"},
                  {"container.host": "/r1/n2", "duration.ms": 7, "container.priority": 10, "count": 3}]}
               {"yarn.sls.am.type": "dag", "job.start.ms": 100}"#,
        )
        .unwrap();
        assert_eq!(w.format, Format::Sls);
        assert_eq!(w.jobs.len(), 2);
        let j = &w.jobs[0];
        assert_eq!(
            (j.id.as_str(), j.user.as_deref(), j.queue.as_deref()),
            ("j1", Some("u"), Some("q"))
        );
        assert_eq!(
            (j.submit_ms, j.start_ms, j.finish_ms),
            (5, Some(5), Some(90))
        );
        assert_eq!((j.map_count(), j.reduce_count()), (1, 3));
        let m = &j.maps[0].task;
        assert_eq!(
            (m.start_ms, m.duration_ms, m.status),
            (Some(10), Some(20), Outcome::Succeeded)
        );
        assert_eq!(w.topology.node(m.host.unwrap()).name, "n1");
        assert_eq!(
            j.reduces[0].task.duration_ms,
            Some(7),
            "priority 10 without a type is a reduce"
        );
        assert_eq!(w.topology.racks, ["r1"], "num.nodes invents no nodes");
        assert_eq!(w.notes.len(), 1, "but the user hears of it");
        assert!(w.notes[0].contains("10 nodes, 2 racks"), "{:?}", w.notes);
        assert_eq!(w.topology.nodes.len(), 2);
        let j = &w.jobs[1];
        assert_eq!(
            (j.id.as_str(), j.task_count(), j.finish_ms),
            ("job_1", 0, None),
            "a job with no tasks is fine"
        );
    }

    #[test]
    fn job_count_repeats_the_job_with_suffixed_ids() {
        let w = read(r#"{"job.id": "j", "job.count": 3, "job.tasks": [{"duration.ms": 1}]} {"job.count": 1}"#).unwrap();
        let ids: Vec<_> = w.jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["j_1", "j_2", "j_3", "job_1"]);
        assert!(w.jobs.iter().take(3).all(|j| j.map_count() == 1));
    }

    #[test]
    fn explicit_durations_win_over_start_and_end_as_in_sls() {
        let w = read(
            r#"{"job.tasks": [{"container.start.ms": 0, "container.end.ms": 50, "container.duration.ms": 40},
                              {"container.start.ms": 0, "container.end.ms": 50, "duration.ms": 30},
                              {"container.type": "reduce"}]}"#,
        )
        .unwrap();
        let j = &w.jobs[0];
        assert_eq!(j.maps[0].task.duration_ms, Some(40));
        assert_eq!(j.maps[1].task.duration_ms, Some(30));
        assert_eq!(j.reduces[0].task.duration_ms, None);
    }

    #[test]
    fn negative_durations_are_errors_naming_field_and_job() {
        let e = err(
            "{\"job.id\": \"a\"}\n{\"job.id\": \"b\", \"job.tasks\": [{\"duration.ms\": 1},\n {\"container.start.ms\": 9, \"container.end.ms\": 4}]}",
        );
        assert_eq!(e.field.as_deref(), Some("job.tasks[1].container.end.ms"));
        assert_eq!(e.at, Position::Line(2));
        assert!(
            e.problem.contains("job index 1 (`b`)") && e.problem.contains("negative"),
            "{e}"
        );
        let e = err(r#"{"job.tasks": [{"duration.ms": -5}]}"#);
        assert_eq!(e.field.as_deref(), Some("job.tasks[0].duration.ms"));
        let e = err(r#"{"job.tasks": [{"container.duration.ms": -5}]}"#);
        assert_eq!(
            e.field.as_deref(),
            Some("job.tasks[0].container.duration.ms")
        );
        let e = err(r#"{"job.start.ms": 10, "job.end.ms": 3}"#);
        assert_eq!(e.field.as_deref(), Some("job.end.ms"));
        assert!(e.problem.contains("job index 0 (`job_0`)"), "{e}");
    }

    #[test]
    fn unknown_container_types_and_priorities_are_errors() {
        let e = err(r#"{"job.tasks": [{"container.type": "shuffle"}]}"#);
        assert_eq!(e.field.as_deref(), Some("job.tasks[0].container.type"));
        assert!(e.problem.contains("\"shuffle\""), "{e}");
        let e = err(r#"{"job.tasks": [{"container.priority": 5}]}"#);
        assert_eq!(e.field.as_deref(), Some("job.tasks[0].container.type"));
        assert!(e.problem.contains("priority 5"), "{e}");
    }

    #[test]
    fn wrong_types_name_the_field() {
        let e =
            err(r#"{"job.id": "a"} {"job.id": "b", "job.tasks": [{"container.start.ms": "x"}]}"#);
        assert_eq!(
            e.field.as_deref(),
            Some("job.tasks[0].container.start.ms"),
            "{e}"
        );
        for (text, field) in [
            (r#"{"am.type": 3}"#, "am.type"),
            (r#"{"yarn.sls.am.type": true}"#, "yarn.sls.am.type"),
            (r#"{"job.queue.name": 1}"#, "job.queue.name"),
            (r#"{"num.nodes": "ten"}"#, "num.nodes"),
            (r#"{"job.count": 1.5}"#, "job.count"),
            (r#"{"job.count": 1000001}"#, "job.count"),
            (r#"{"job.tasks": {}}"#, "job.tasks"),
        ] {
            assert_eq!(err(text).field.as_deref(), Some(field), "{text}");
        }
    }

    #[test]
    fn an_object_that_is_neither_job_nor_cluster_size_is_an_error() {
        let e = err("{\"job.id\": \"a\"}\n\n{\"foo\": 1}");
        assert_eq!(e.at, Position::Line(3));
        assert!(e.problem.contains("object 1"), "{e}");
    }
}
