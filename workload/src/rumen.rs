//! Hadoop Rumen job traces: concatenated, pretty-printed `LoggedJob` objects, each with its map
//! and reduce tasks (`LoggedTask`) and their attempts (`LoggedTaskAttempt`).
//!
//! Only the fields yard uses are deserialized; everything else (`jobProperties`, the attempt
//! CDFs with their ±2⁶³ bounds, most counters, `otherTasks`) is skipped by serde without being
//! built, so reading stays fast. `-1` and `null` mean "not recorded" throughout.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::Format;
use crate::error::TraceError;
use crate::json::{Object, for_each_object, sentinel};
use crate::model::{Attempt, Job, Millis, NodeId, Outcome, Task, TaskGroup, Topology, Workload};

/// A `LoggedJob`, reduced to what yard uses.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawJob {
    #[serde(rename = "jobID", default)]
    job_id: Option<String>,
    #[serde(default)]
    job_name: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    queue: Option<String>,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    submit_time: Option<Millis>,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    launch_time: Option<Millis>,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    finish_time: Option<Millis>,
    #[serde(default, deserialize_with = "outcome")]
    outcome: Outcome,
    // `null` is read as an empty list: Rumen never writes it, but it costs nothing to accept.
    #[serde(default)]
    map_tasks: Option<Vec<RawTask>>,
    #[serde(default)]
    reduce_tasks: Option<Vec<RawTask>>,
    // `otherTasks` (SETUP/CLEANUP) is deliberately not read: it is not map/reduce work.
}

/// A `LoggedTask`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTask {
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    start_time: Option<Millis>,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    finish_time: Option<Millis>,
    #[serde(default, deserialize_with = "outcome")]
    task_status: Outcome,
    #[serde(default, deserialize_with = "sentinel::opt_u64")]
    input_bytes: Option<u64>,
    #[serde(default)]
    attempts: Option<Vec<RawAttempt>>,
    #[serde(default)]
    preferred_locations: Option<Vec<RawLocation>>,
}

/// A `LoggedTaskAttempt`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAttempt {
    #[serde(default, deserialize_with = "outcome")]
    result: Outcome,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    start_time: Option<Millis>,
    #[serde(default, deserialize_with = "sentinel::opt_i64")]
    finish_time: Option<Millis>,
    #[serde(default)]
    host_name: Option<String>,
    #[serde(default)]
    location: Option<RawLocation>,
    #[serde(default, deserialize_with = "sentinel::opt_u64")]
    hdfs_bytes_read: Option<u64>,
    #[serde(default, deserialize_with = "sentinel::opt_u64")]
    reduce_shuffle_bytes: Option<u64>,
}

/// A `LoggedLocation`: `{"layers": [rack, host]}`.
#[derive(Deserialize)]
struct RawLocation {
    #[serde(default)]
    layers: Option<Vec<String>>,
}

#[derive(Clone, Copy)]
enum Kind {
    Map,
    Reduce,
}

pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Workload, TraceError> {
    let mut workload = Workload::new(Format::Rumen);
    let Workload { jobs, topology, .. } = &mut workload;
    for_each_object::<RawJob, _>(file, bytes, |raw, object| {
        jobs.push(convert_job(file, raw, object, topology)?);
        Ok(())
    })?;
    Ok(workload)
}

fn convert_job(
    file: &str,
    raw: RawJob,
    object: Object,
    topology: &mut Topology,
) -> Result<Job, TraceError> {
    // Semantic errors point at the line the job starts on and name it by its 1-based
    // position in the file (and its id when known).
    let ordinal = object.index + 1;
    let id = match raw.job_id {
        // An empty id cannot key a job any better than a missing one.
        Some(id) if !id.is_empty() => id,
        _ => {
            return Err(TraceError::new(
                file,
                object.position(),
                format!(
                    "job object #{ordinal}: expected a job ID string such as \
                     \"job_200910281128_10005\", found none"
                ),
            )
            .field("jobID"));
        }
    };
    let Some(submit_ms) = raw.submit_time else {
        return Err(TraceError::new(
            file,
            object.position(),
            format!(
                "job object #{ordinal} (`{id}`): expected the submit time in ms since the epoch, \
                 found none (missing, null or -1)"
            ),
        )
        .field("submitTime"));
    };
    let maps = raw
        .map_tasks
        .unwrap_or_default()
        .into_iter()
        .map(|t| TaskGroup::one(convert_task(t, Kind::Map, topology)))
        .collect();
    let reduces = raw
        .reduce_tasks
        .unwrap_or_default()
        .into_iter()
        .map(|t| TaskGroup::one(convert_task(t, Kind::Reduce, topology)))
        .collect();
    Ok(Job {
        id,
        name: raw.job_name,
        user: raw.user,
        queue: raw.queue,
        submit_ms,
        start_ms: raw.launch_time,
        finish_ms: raw.finish_time,
        deadline_ms: None,
        outcome: raw.outcome,
        maps,
        reduces,
        shuffle_bytes: None,
        output_bytes: None,
        input_path: None,
        output_path: None,
    })
}

fn convert_task(raw: RawTask, kind: Kind, topology: &mut Topology) -> Task {
    let raw_attempts = raw.attempts.unwrap_or_default();
    let attempts: Vec<Attempt> = raw_attempts
        .iter()
        .map(|a| Attempt {
            outcome: a.result,
            start_ms: a.start_time,
            finish_ms: a.finish_time,
            host: attempt_host(a, topology),
        })
        .collect();

    // Hadoop allows one successful attempt per task; should a trace hold two, the first one
    // is the one that completed the task.
    let success = attempts
        .iter()
        .position(|a| a.outcome == Outcome::Succeeded);
    let chosen = success.or(attempts.len().checked_sub(1));
    let (attempt_duration, host) = match chosen {
        Some(i) => (attempts[i].runtime_ms(), attempts[i].host),
        None => (None, None),
    };
    // The task-level span is only a stand-in for a run time when something ran: a KILLED task
    // without a timed attempt (2jobs2min job _1207) spans scheduling to kill, not work.
    let duration_ms = attempt_duration.or_else(|| {
        if raw.task_status == Outcome::Killed {
            None
        } else {
            span(raw.start_time, raw.finish_time)
        }
    });

    let succeeded = success.map(|i| &raw_attempts[i]);
    let bytes = match kind {
        // Rumen fills a map's inputBytes from its successful attempt's HDFS_BYTES_READ (equal in
        // every file where both are recorded); fall back to that counter when the task lacks it
        // (folder-input-trace.json records inputBytes -1 on every task).
        Kind::Map => raw
            .input_bytes
            .or(succeeded.and_then(|a| a.hdfs_bytes_read)),
        Kind::Reduce => succeeded
            .and_then(|a| a.reduce_shuffle_bytes)
            .or(raw.input_bytes),
    };

    let preferred = raw
        .preferred_locations
        .unwrap_or_default()
        .iter()
        .filter_map(|loc| {
            loc.layers
                .as_deref()
                .and_then(|l| intern_layers(l, topology))
        })
        .collect();

    Task {
        bytes,
        duration_ms,
        start_ms: raw.start_time,
        host,
        preferred,
        status: raw.task_status,
        attempts,
    }
}

/// finish − start when both are known, in order, and the difference fits.
fn span(start: Option<Millis>, finish: Option<Millis>) -> Option<Millis> {
    match (start, finish) {
        (Some(s), Some(f)) if f >= s => f.checked_sub(s),
        _ => None,
    }
}

/// Where an attempt ran: `location.layers` when recorded, else `hostName`.
fn attempt_host(a: &RawAttempt, topology: &mut Topology) -> Option<NodeId> {
    let from_layers = a
        .location
        .as_ref()
        .and_then(|l| l.layers.as_deref())
        .and_then(|l| intern_layers(l, topology));
    if from_layers.is_some() {
        return from_layers;
    }
    let path = unescape(a.host_name.as_deref()?);
    // An empty name, or a path ending in `/`, names no host.
    let host = path.rsplit('/').next().unwrap_or("");
    if host.is_empty() {
        return None;
    }
    Some(topology.intern_path(&path))
}

/// `[rack, host]`, or a bare `[host]`. Deeper paths (`[dc, rack, host]`) keep every layer but
/// the last as the rack name, joined with `/` as in Hadoop's network paths.
fn intern_layers(layers: &[String], topology: &mut Topology) -> Option<NodeId> {
    let (host, racks) = layers.split_last()?;
    let host = unescape(host);
    if host.is_empty() {
        return None;
    }
    let rack: Cow<str> = match racks {
        [] => Cow::Borrowed(""),
        [rack] => unescape(rack),
        _ => Cow::Owned(
            racks
                .iter()
                .map(|r| unescape(r))
                .collect::<Vec<_>>()
                .join("/"),
        ),
    };
    let rack = Some(rack.as_ref()).filter(|r| !r.is_empty());
    Some(topology.intern(rack, &host))
}

/// Undoes the anonymizer's backslash escapes (`node43402\.gold` → `node43402.gold`): a backslash
/// keeps the character after it and is itself dropped.
fn unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            // A trailing lone backslash is dropped.
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A Hadoop state string (`SUCCESS`, `KILLED`, …) or `null`, read without allocating a String.
fn outcome<'de, D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
    d.deserialize_option(OutcomeVisitor)
}

struct OutcomeVisitor;

impl<'de> Visitor<'de> for OutcomeVisitor {
    type Value = Outcome;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a state such as \"SUCCESS\", \"FAILED\" or \"KILLED\", or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Outcome, E> {
        Ok(Outcome::Unknown)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Outcome, E> {
        Ok(Outcome::Unknown)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Outcome, D::Error> {
        d.deserialize_str(OutcomeVisitor)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Outcome, E> {
        Ok(Outcome::from_hadoop(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Position;

    fn read(text: &str) -> Result<Workload, TraceError> {
        parse("t.json", text.as_bytes())
    }

    const ONE_JOB: &str = r#"
    {
      "jobID": "job_1_0001", "user": "alice", "jobName": "wc", "queue": null,
      "submitTime": 1000, "launchTime": 1100, "finishTime": 9000, "outcome": "SUCCESS",
      "totalMaps": 99, "totalReduces": 99,
      "jobProperties": {"mapred.job.name": "x"},
      "successfulMapAttemptCDFs": [{"maximum": 9223372036854775807,
                                    "minimum": -9223372036854775808, "rankings": [],
                                    "numberValues": 0}],
      "otherTasks": [{"taskType": "SETUP", "startTime": 1, "finishTime": 2,
                      "attempts": [{"hostName": "/r9/setup-host", "result": "SUCCESS"}]}],
      "mapTasks": [
        {"taskType": "MAP", "startTime": 1200, "finishTime": 2000, "taskStatus": "SUCCESS",
         "inputBytes": 500,
         "preferredLocations": [{"layers": ["10\\.0\\.0\\.0", "h1\\.example\\.com"]},
                                {"layers": ["lonely"]}],
         "attempts": [
           {"result": "KILLED", "startTime": 1250, "finishTime": 1900,
            "location": null, "hostName": "h2\\.example\\.com"},
           {"result": "SUCCESS", "startTime": 1300, "finishTime": 1800,
            "location": {"layers": ["10\\.0\\.0\\.0", "h1\\.example\\.com"]},
            "hostName": "/10\\.0\\.0\\.0/h1\\.example\\.com", "hdfsBytesRead": 7}
         ]},
        {"taskType": "MAP", "startTime": -1, "finishTime": null, "taskStatus": null,
         "inputBytes": -1, "attempts": [], "preferredLocations": []}
      ],
      "reduceTasks": [
        {"taskType": "REDUCE", "startTime": 2000, "finishTime": 8000, "taskStatus": "SUCCESS",
         "inputBytes": 300,
         "attempts": [
           {"result": "FAILED", "startTime": 2000, "finishTime": 2500,
            "hostName": "/r2/h3", "reduceShuffleBytes": 1},
           {"result": "SUCCESS", "startTime": 2600, "finishTime": 7900,
            "hostName": "/r2/h4", "reduceShuffleBytes": 250}
         ]}
      ]
    }
    "#;

    #[test]
    fn reads_a_job_its_tasks_and_attempts() {
        let w = read(ONE_JOB).unwrap();
        assert_eq!(w.format, Format::Rumen);
        assert_eq!(w.jobs.len(), 1);
        let job = &w.jobs[0];
        assert_eq!(job.id, "job_1_0001");
        assert_eq!(job.name.as_deref(), Some("wc"));
        assert_eq!(job.user.as_deref(), Some("alice"));
        assert_eq!(job.queue, None);
        assert_eq!(
            (job.submit_ms, job.start_ms, job.finish_ms),
            (1000, Some(1100), Some(9000))
        );
        assert_eq!(job.outcome, Outcome::Succeeded);
        // Listed tasks are counted, totalMaps/totalReduces ignored, otherTasks skipped.
        assert_eq!((job.map_count(), job.reduce_count()), (2, 1));
        assert!(w.topology.find("setup-host").is_none());

        let m0 = &job.maps[0].task;
        assert_eq!(m0.bytes, Some(500));
        assert_eq!(m0.status, Outcome::Succeeded);
        assert_eq!(m0.start_ms, Some(1200));
        assert_eq!(m0.attempts.len(), 2);
        assert_eq!(m0.attempts[0].outcome, Outcome::Killed);
        assert_eq!(
            m0.duration_ms,
            Some(500),
            "the successful attempt's, not the last one's"
        );
        let h1 = w.topology.find("h1.example.com").unwrap();
        let h2 = w.topology.find("h2.example.com").unwrap();
        assert_eq!(m0.host, Some(h1));
        assert_eq!(m0.attempts[0].host, Some(h2));
        assert_eq!(
            w.topology.node(h2).rack,
            None,
            "a bare hostName has no rack"
        );
        let lonely = w.topology.find("lonely").unwrap();
        assert_eq!(m0.preferred, vec![h1, lonely]);
        assert_eq!(w.topology.node(lonely).rack, None);

        let m1 = &job.maps[1].task;
        assert_eq!(
            (m1.bytes, m1.start_ms, m1.duration_ms, m1.host, m1.status),
            (None, None, None, None, Outcome::Unknown)
        );
        assert!(m1.attempts.is_empty() && m1.preferred.is_empty());

        let r = &job.reduces[0].task;
        assert_eq!(
            r.bytes,
            Some(250),
            "the successful attempt's reduceShuffleBytes"
        );
        assert_eq!(r.duration_ms, Some(5300));
        assert_eq!(r.host, w.topology.find("h4"));
        assert_eq!(
            w.topology
                .rack_name(w.topology.node(r.host.unwrap()).rack.unwrap()),
            "r2"
        );
    }

    #[test]
    fn escaped_dots_are_stripped_from_racks_and_hosts() {
        let w = read(ONE_JOB).unwrap();
        assert!(w.topology.racks.contains(&"10.0.0.0".to_owned()));
        for node in &w.topology.nodes {
            assert!(!node.name.contains('\\'), "{}", node.name);
        }
        for rack in &w.topology.racks {
            assert!(!rack.contains('\\'), "{rack}");
        }
        assert_eq!(unescape(r"a\.b\\c\"), r"a.b\c");
        assert!(matches!(unescape("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn host_falls_back_to_host_name_and_layers_win() {
        let w = read(
            r#"{"jobID": "j", "submitTime": 1, "mapTasks": [{"attempts": [
                 {"result": "SUCCESS", "hostName": "/ra/hx", "location": {"layers": ["rb", "hy"]}},
                 {"result": "FAILED", "hostName": "/ra/hz", "location": null},
                 {"result": "FAILED", "hostName": "", "location": {"layers": []}},
                 {"result": "FAILED", "location": {"layers": ["dc", "rc", "hw"]}}
               ]}]}"#,
        )
        .unwrap();
        let t = &w.jobs[0].maps[0].task;
        let names: Vec<_> = t
            .attempts
            .iter()
            .map(|a| a.host.map(|h| w.topology.node(h).name.as_str()))
            .collect();
        assert_eq!(names, [Some("hy"), Some("hz"), None, Some("hw")]);
        let hw = w.topology.find("hw").unwrap();
        assert_eq!(
            w.topology.rack_name(w.topology.node(hw).rack.unwrap()),
            "dc/rc"
        );
        assert!(
            w.topology.find("hx").is_none(),
            "hostName is not read when layers are"
        );
        // No timed attempt and no task span: no duration, but the successful attempt's host.
        assert_eq!(t.duration_ms, None);
        assert_eq!(t.host, w.topology.find("hy"));
    }

    #[test]
    fn duration_falls_back_to_last_attempt_then_task_span() {
        let w = read(
            r#"{"jobID": "j", "submitTime": 1, "mapTasks": [
                 {"taskStatus": "FAILED", "startTime": 0, "finishTime": 100, "attempts": [
                   {"result": "FAILED", "startTime": 0, "finishTime": 10, "hostName": "a"},
                   {"result": "FAILED", "startTime": 20, "finishTime": 50, "hostName": "b"}]},
                 {"taskStatus": "SUCCESS", "startTime": 5, "finishTime": 45, "attempts": []},
                 {"taskStatus": "KILLED", "startTime": 5, "finishTime": 45, "attempts": []},
                 {"taskStatus": "SUCCESS", "startTime": 50, "finishTime": 45, "attempts": []}
               ]}"#,
        )
        .unwrap();
        let d: Vec<_> = w.jobs[0].map_tasks().map(|t| t.duration_ms).collect();
        assert_eq!(d, [Some(30), Some(40), None, None]);
        assert_eq!(w.jobs[0].maps[0].task.host, w.topology.find("b"));
        assert_eq!(w.jobs[0].maps[2].task.status, Outcome::Killed);
    }

    #[test]
    fn minus_one_and_null_are_none() {
        let w = read(
            r#"{"jobID": "j", "user": null, "jobName": null, "submitTime": 5,
                "launchTime": -1, "finishTime": null, "outcome": null,
                "mapTasks": null, "reduceTasks": [
                 {"startTime": -1, "finishTime": -1, "inputBytes": -1, "taskStatus": null,
                  "preferredLocations": null, "attempts": [
                   {"result": null, "startTime": null, "finishTime": -1, "hostName": null,
                    "location": null, "reduceShuffleBytes": -1}]}]}"#,
        )
        .unwrap();
        let job = &w.jobs[0];
        assert_eq!((job.user.as_ref(), job.name.as_ref()), (None, None));
        assert_eq!(
            (job.start_ms, job.finish_ms, job.outcome),
            (None, None, Outcome::Unknown)
        );
        assert!(job.maps.is_empty());
        let t = &job.reduces[0].task;
        assert_eq!(
            (t.bytes, t.start_ms, t.duration_ms, t.host),
            (None, None, None, None)
        );
        assert_eq!(t.attempts[0], Attempt::default());
        assert!(w.topology.nodes.is_empty());
    }

    #[test]
    fn sixty_four_bit_extremes_do_not_break_parsing() {
        let w = read(
            r#"{"jobID": "j", "submitTime": -9223372036854775808, "finishTime": 9223372036854775807,
                "launchTime": 18446744073709551615,
                "mapTasks": [{"startTime": -9223372036854775808, "finishTime": 9223372036854775807,
                  "inputBytes": 18446744073709551615, "attempts": [
                   {"result": "SUCCESS", "startTime": -9223372036854775808,
                    "finishTime": 9223372036854775807}]},
                  {"startTime": -9223372036854775808, "finishTime": 9223372036854775807,
                   "attempts": []}]}"#,
        )
        .unwrap();
        let job = &w.jobs[0];
        assert_eq!(job.submit_ms, i64::MIN);
        assert_eq!(job.start_ms, Some(i64::MAX));
        let t = &job.maps[0].task;
        assert_eq!(t.bytes, Some(i64::MAX as u64));
        assert_eq!(
            t.duration_ms, None,
            "a span that overflows is not a duration"
        );
        assert_eq!(job.maps[1].task.duration_ms, None);
    }

    #[test]
    fn a_wrong_type_names_its_field_path() {
        let e = read(
            r#"{"jobID": "j", "submitTime": 1, "mapTasks": [{"attempts": []},
                 {"attempts": [{"result": "SUCCESS", "startTime": "x"}]}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("mapTasks[1].attempts[0].startTime"),
            "{e}"
        );
        assert!(matches!(e.at, Position::LineColumn(2, _)), "{e}");

        let e = read(r#"{"jobID": "j", "submitTime": 1, "outcome": 3}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("outcome"), "{e}");
        let e = read(r#"{"jobID": 7, "submitTime": 1}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("jobID"), "{e}");
        let e = read(
            r#"{"jobID": "j", "submitTime": 1,
                "reduceTasks": [{"preferredLocations": [{"layers": [1]}]}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("reduceTasks[0].preferredLocations[0].layers[0]")
        );
    }

    #[test]
    fn missing_job_id_or_submit_time_is_an_error_naming_job_and_field() {
        let e =
            read(r#"{"jobID": "a", "submitTime": 1} {"user": "u", "submitTime": 2}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("jobID"));
        assert!(e.to_string().contains("job object #2"), "{e}");
        assert_eq!(e.at, Position::Line(1));
        let e = read("{\"jobID\": \"a\", \"submitTime\": 1}\n\n{\"jobID\": \"b\"}").unwrap_err();
        assert_eq!(
            (e.at, e.field.as_deref()),
            (Position::Line(3), Some("submitTime"))
        );

        for bad in [
            r#""submitTime": -1"#,
            r#""submitTime": null"#,
            r#""user": "u""#,
        ] {
            let text = format!(r#"{{"jobID": "job_x", {bad}}}"#);
            let e = read(&text).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("submitTime"), "{text}");
            let msg = e.to_string();
            assert!(
                msg.contains("job object #1") && msg.contains("job_x"),
                "{msg}"
            );
        }
    }

    #[test]
    fn truncated_empty_and_odd_inputs_fail_cleanly() {
        let full = ONE_JOB.trim();
        for cut in (0..full.len()).step_by(7) {
            if !full.is_char_boundary(cut) {
                continue;
            }
            let r = parse("t.json", &full.as_bytes()[..cut]);
            assert!(r.is_err(), "cut at {cut} parsed");
        }
        assert!(read("").is_err());
        assert!(read("[]").is_err());
        assert!(read(r#"{"jobID": "j", "submitTime": 1} 42"#).is_err());
        assert!(parse("t.json", b"{\"jobID\": \"\xff\", \"submitTime\": 1}").is_err());
    }
}
