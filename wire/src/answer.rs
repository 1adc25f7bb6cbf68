//! A yard MapReduce master's answer as it puts it to the rm
//! ([`crate::protocol::MasterAnswer`]'s `answer`): the application's own answer, whose shape
//! is the application's (`yard_appmaster::apps`: top lists, estimates, an aggregate's rows,
//! a streaming job's lines) and so stays a JSON object here, with beside it
//! - `job`, [`AnswerJob`]: how the job ran against its deadline, which every yard master adds
//!   (the rm's metrics read its policy, outcome and estimate; `yard app`, `yard demo` and
//!   `yard replay` read the rest);
//! - `outputDataset`, [`crate::outputs::OutputView`], when the job wrote one (Hadoop's `-output`).
//!
//! The master builds these types and the rm keeps the answer as it came (`JobView.answer`,
//! `AnswerView.answer` are opaque JSON): an answer stored by an older master reads back as it
//! was. Every `Option` here is written as `null`, never left out: the answer's readers tell
//! "not measured" from "not sent".

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deadline::DeadlineOutcome;
use crate::protocol::TaskBound;

/// The answer's `job` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerJob {
    /// The task policy's name; a shared scan's job's: `full`, or `scan-deadline` with a
    /// deadline (yard's rule).
    pub policy: String,
    /// The job's kind in the profile store (`app@input`, `synthetic:NAME`, …).
    pub kind: String,
    /// The seed of the master's random choices (the job's `seed`: given, else drawn by `yard
    /// submit` or the rm): submitted again with it, a job makes the same choices (the task
    /// sampler's blocks, the maps' order, reduce sampling), so reads the same sample. `null`
    /// in an answer put before the seed was kept in it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Maps whose output reached the answer (Dart's k; on a shared scan, the blocks read for
    /// the job), of `maps`.
    pub k: u64,
    pub maps: u64,
    /// The share of the input the answer is from, 0 to 1.
    pub processed_fraction: f64,
    #[serde(flatten)]
    pub times: DeadlineTimes,
    /// A job the master ran itself (not on a shared scan): what the run measured.
    #[serde(flatten)]
    pub run: Option<RunFigures>,
    /// A job on a shared scan: how the scan served it.
    #[serde(flatten)]
    pub scan: Option<ScanFigures>,
}

impl AnswerJob {
    /// The `job` line of a master's answer (`JobView.answer`, `AnswerView.answer`), read by
    /// type; `None` when the answer has none (not a yard MapReduce master's) or it is not one.
    pub fn of(answer: &Value) -> Option<AnswerJob> {
        AnswerJob::deserialize(answer.get("job")?).ok()
    }
}

/// A job's times against its deadline, from the master's start, on the master's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadlineTimes {
    pub completion_seconds: f64,
    /// `null` without a deadline (as the next two).
    pub deadline_seconds: Option<f64>,
    pub deadline_met: Option<bool>,
    /// By the rule the rm judges the answer by ([`DeadlineOutcome::of_answer`]).
    pub outcome: Option<DeadlineOutcome>,
}

/// What a MapReduce master's own run of the job measured (`appmaster/live/src/master`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFigures {
    /// Dart eq. (1)'s T_J when the map phase closed, seconds from the phase's start, capped
    /// at the deadline by `forecast_cut`; and uncapped.
    pub estimate_at_close: Option<f64>,
    pub estimate_at_close_uncapped: Option<f64>,
    pub map_phase_closed_at: Option<f64>,
    /// The estimate in force at the answer: the latest reforecast's, else the close's.
    pub estimate_at_end: Option<f64>,
    pub reforecast_at: Option<f64>,
    /// When the policy finished, seconds from the phase's start.
    pub job_seconds: f64,
    /// The policy's deadline, seconds from the phase's start (the master's margin kept);
    /// `null` for a job without a deadline.
    pub policy_deadline: Option<f64>,
    pub task_sampler_ran: bool,
    /// Maps an earlier master attempt finished, taken back.
    pub recovered_maps: u32,
    pub guard_fired: bool,
    pub reduces_abandoned: u32,
    /// The reduces' input, and what they kept of it: Alg. 5's sampling, or the guard's cut of
    /// a reduce while it folded. `processedFraction` is the finished maps' share of the input
    /// times kept over input times the share of the reduces not abandoned, so a cut anywhere
    /// shows in it and here. 0 and 0 in an answer from before they were reported.
    #[serde(default)]
    pub reduce_input_bytes: u64,
    #[serde(default)]
    pub reduce_kept_bytes: u64,
    /// From a container becoming free to its next task process starting, ms.
    pub scheduling_overhead_ms: Option<Overheads>,
    pub live_costs: LiveCostsView,
    pub input_read: InputRead,
    /// `null` until the master typed a part (or the store had).
    pub job_type: Option<JobTypeView>,
    /// The cap on task containers held at once (`maxContainers`), and the most held.
    pub max_containers: Option<u32>,
    pub peak_containers: u32,
    pub measured: Measured,
}

/// A job on a shared scan (CIRCUMFLEX, seed 004).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanFigures {
    /// The deadline cut the job's reads short.
    pub cut_by_deadline: bool,
    /// The scan as the job saw it, as its host master reported it (where the job joined,
    /// the blocks read for it and for all): the host's own report, passed through.
    pub shared_scan: Value,
}

/// Mean and quantiles of the scheduling overheads, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overheads {
    pub tasks: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// This cluster's measured costs (seconds), and the margin and cut lead this run kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveCostsView {
    pub answer: Option<CostQuantiles>,
    pub launch: Option<CostQuantiles>,
    pub grant: Option<CostQuantiles>,
    pub cut: Option<CostQuantiles>,
    pub finish_margin: f64,
    pub cut_lead: f64,
}

/// One cost's samples and quantiles, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostQuantiles {
    pub samples: u64,
    pub p50: f64,
    pub p99: f64,
}

/// The input read over time: `[seconds from the master's start, bytes read by then]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRead {
    pub input_bytes: u64,
    pub at: Vec<(f64, u64)>,
}

impl InputRead {
    /// The bytes read by `seconds` (from the master's start): the last point at or before it.
    pub fn by(&self, seconds: f64) -> u64 {
        self.at
            .iter()
            .take_while(|(t, _)| *t <= seconds)
            .last()
            .map_or(0, |&(_, bytes)| bytes)
    }
}

/// The job's type (seed 002 eq. 1–2): each part's verdict and what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobTypeView {
    pub map: Option<PartTypeView>,
    pub reduce: Option<PartTypeView>,
    /// E.g. `map: io-bound (…); reduce: unknown`.
    pub summary: String,
}

/// One part's type and its probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartTypeView {
    pub bound: TaskBound,
    /// q (eq. 2): the disk throughput the probe needed, and the disk's, bytes per second.
    pub demand_bytes_per_s: f64,
    pub disk_rate_bytes_per_s: f64,
    /// Where the disk rate came from (`measured`, `default`, …).
    pub disk_rate_source: String,
    pub probe: ProbeView,
    pub recorded_ms: i64,
    /// Typed by an earlier run (from the store), not this one's probe.
    pub from_store: bool,
    pub default_disk_rate: bool,
}

/// The task a part was typed by: MID, MOD and MTCT (eq. 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeView {
    pub input_bytes: f64,
    pub output_bytes: f64,
    pub seconds: f64,
}

/// What this run measured (the job profiler's record): mean map seconds node-local and not,
/// and every reduce's (input bytes, seconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measured {
    pub map_local_seconds: Option<f64>,
    pub map_remote_seconds: Option<f64>,
    pub reduce_samples: Vec<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn times() -> DeadlineTimes {
        DeadlineTimes {
            completion_seconds: 2.5,
            deadline_seconds: None,
            deadline_met: None,
            outcome: None,
        }
    }

    #[test]
    fn a_scan_job_line_is_flat_and_keeps_its_nulls() {
        let job = AnswerJob {
            policy: "full".into(),
            kind: "wordcount@b".into(),
            seed: None,
            k: 3,
            maps: 4,
            processed_fraction: 0.75,
            times: times(),
            run: None,
            scan: Some(ScanFigures {
                cut_by_deadline: false,
                shared_scan: json!({"host": "a"}),
            }),
        };
        assert_eq!(
            serde_json::to_value(&job).unwrap(),
            json!({"policy": "full", "kind": "wordcount@b", "seed": null, "k": 3, "maps": 4,
                "processedFraction": 0.75, "completionSeconds": 2.5, "deadlineSeconds": null,
                "deadlineMet": null, "outcome": null, "cutByDeadline": false,
                "sharedScan": {"host": "a"}})
        );
    }

    /// The keys a MapReduce master's `job` line had when it was built by hand (`json!`), each
    /// still there, with `null` for what was not measured.
    #[test]
    fn a_run_job_line_has_every_key_it_had() {
        let job = AnswerJob {
            policy: "dart".into(),
            kind: "wordcount@b".into(),
            seed: Some(7),
            k: 2,
            maps: 4,
            processed_fraction: 0.5,
            times: DeadlineTimes {
                deadline_seconds: Some(3.0),
                deadline_met: Some(true),
                outcome: Some(DeadlineOutcome::Met),
                ..times()
            },
            run: Some(RunFigures {
                estimate_at_close: Some(2.0),
                estimate_at_close_uncapped: None,
                map_phase_closed_at: Some(1.0),
                estimate_at_end: None,
                reforecast_at: None,
                job_seconds: 2.4,
                policy_deadline: Some(2.7),
                task_sampler_ran: false,
                recovered_maps: 0,
                guard_fired: false,
                reduces_abandoned: 0,
                reduce_input_bytes: 4096,
                reduce_kept_bytes: 2048,
                scheduling_overhead_ms: None,
                live_costs: LiveCostsView {
                    answer: Some(CostQuantiles {
                        samples: 3,
                        p50: 0.1,
                        p99: 0.2,
                    }),
                    launch: None,
                    grant: None,
                    cut: None,
                    finish_margin: 0.2,
                    cut_lead: 0.25,
                },
                input_read: InputRead {
                    input_bytes: 8,
                    at: vec![(1.5, 4)],
                },
                job_type: None,
                max_containers: None,
                peak_containers: 2,
                measured: Measured {
                    map_local_seconds: Some(1.0),
                    map_remote_seconds: None,
                    reduce_samples: vec![(100.0, 0.5)],
                },
            }),
            scan: None,
        };
        let line = serde_json::to_value(&job).unwrap();
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut had = vec![
            "policy",
            "kind",
            "seed",
            "k",
            "maps",
            "processedFraction",
            "estimateAtClose",
            "estimateAtCloseUncapped",
            "mapPhaseClosedAt",
            "estimateAtEnd",
            "reforecastAt",
            "jobSeconds",
            "policyDeadline",
            "taskSamplerRan",
            "recoveredMaps",
            "guardFired",
            "reducesAbandoned",
            "reduceInputBytes",
            "reduceKeptBytes",
            "schedulingOverheadMs",
            "liveCosts",
            "inputRead",
            "jobType",
            "maxContainers",
            "peakContainers",
            "measured",
            "completionSeconds",
            "deadlineSeconds",
            "deadlineMet",
            "outcome",
        ];
        had.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, had);
        assert_eq!(line["outcome"], "met");
        assert_eq!(line["seed"], 7);
        assert_eq!(line["estimateAtEnd"], Value::Null);
        assert_eq!(line["jobType"], Value::Null);
        assert_eq!(
            line["liveCosts"],
            json!({"answer": {"samples": 3, "p50": 0.1, "p99": 0.2}, "launch": null,
                "grant": null, "cut": null, "finishMargin": 0.2, "cutLead": 0.25})
        );
        assert_eq!(
            line["inputRead"],
            json!({"inputBytes": 8, "at": [[1.5, 4]]})
        );
        assert_eq!(
            line["measured"],
            json!({"mapLocalSeconds": 1.0, "mapRemoteSeconds": null,
                "reduceSamples": [[100.0, 0.5]]})
        );
        // And it reads back as it was written, alone or in its answer.
        let answer = json!({"words": 3, "job": line.clone()});
        assert_eq!(AnswerJob::of(&answer), Some(job.clone()));
        assert_eq!(serde_json::from_value::<AnswerJob>(line).unwrap(), job);
        assert_eq!(AnswerJob::of(&json!({"words": 3})), None);
        // A line from before the reduces' bytes were reported reads as 0 of 0.
        let mut old = serde_json::to_value(&job).unwrap();
        for key in ["reduceInputBytes", "reduceKeptBytes"] {
            old.as_object_mut().unwrap().remove(key);
        }
        let read = serde_json::from_value::<AnswerJob>(old)
            .unwrap()
            .run
            .unwrap();
        assert_eq!((read.reduce_input_bytes, read.reduce_kept_bytes), (0, 0));
        assert_eq!(AnswerJob::of(&json!({"job": {"policy": "dart"}})), None);
    }

    #[test]
    fn input_read_by_takes_the_last_point_not_after() {
        let read = InputRead {
            input_bytes: 30,
            at: vec![(1.0, 10), (2.0, 20), (3.0, 30)],
        };
        assert_eq!(read.by(0.5), 0);
        assert_eq!(read.by(2.0), 20);
        assert_eq!(read.by(2.9), 20);
        assert_eq!(read.by(9.0), 30);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            json!({"inputBytes": 30, "at": [[1.0, 10], [2.0, 20], [3.0, 30]]})
        );
    }
}
