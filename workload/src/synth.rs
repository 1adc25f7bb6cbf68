//! Hadoop SLS SYNTH generator configs (`syn.json`), expanded into concrete jobs.
//!
//! Follows SLS's `SynthTraceJobProducer` / `SynthJob` / `SynthUtils` where they define the
//! semantics; the RNG is ChaCha8 (not Java's), so the jobs differ from SLS's draw for draw but
//! follow the same distributions. Same bytes and seed, same workload.
//!
//! - The config is validated completely before anything is drawn, so errors never depend on
//!   the seed. Fields are named by path (`workloads[0].job_classes[0].mtasks_avg`).
//! - Per job, in SLS's order: a workload by `workload_weight`, a submit time from the workload's
//!   `time_distribution`, a class by `class_weight`. Jobs are then sorted by submit time
//!   (stable) and, in that order, named `job_<n>` (n from 0, SLS's `SynthJob` sequence) and
//!   given their duration, deadline and tasks.
//! - Submit time: bucket i by weight, then whole seconds uniform in [time_i, time_{i+1})
//!   (the last bucket, or an empty range, gives time_i), ×1000 to ms.
//! - Duration: `round(duration)` seconds → ms. It has no field in the model; it enters the
//!   deadline, `submit + ceil(deadline_factor × duration_ms)` (`SynthJob`). SLS gives that
//!   deadline only to the fraction `reservation` of jobs (those it books a YARN reservation
//!   for); yard has no reservation system and gives every job its deadline. A class without a
//!   deadline factor gets none.
//! - Tasks: `round(count)` per task type, at least 0; a `mapreduce` class keeps at least one
//!   map. Each task's duration is `round(time)` used as ms *unconverted*, as SLS does (its
//!   samples are 10–20 for MR tasks, 60000 for stream tasks). `stream` tasks are read as maps.
//!   Equal consecutive durations share one `TaskGroup`. Memory and vcores are not modelled.
//! - Topology: `num_nodes` nodes `node0…` in `num_nodes / nodes_per_rack` racks `rack0…`
//!   (at least 1, at most `num_nodes`), node i in rack i mod racks: SLS's
//!   `SLSUtils.generateNodes`, round-robin rather than contiguous.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, LogNormal, Normal};
use serde::Deserialize;

use crate::error::{Position, TraceError};
use crate::json::for_each_object;
use crate::{Format, Job, Millis, Outcome, Task, TaskGroup, Workload};

#[derive(Deserialize)]
struct RawConfig {
    #[serde(default)]
    num_nodes: i64,
    /// Absent means 1, as SLS's `getNodesPerRack` reads a missing (0) value.
    #[serde(default = "one")]
    nodes_per_rack: i64,
    num_jobs: i64,
    /// A Java `long`; reinterpreted as u64 for seeding.
    #[serde(default)]
    rand_seed: i64,
    workloads: Vec<RawWorkload>,
}

fn one() -> i64 {
    1
}

#[derive(Deserialize)]
struct RawWorkload {
    workload_weight: f64,
    queue_name: Option<String>,
    job_classes: Vec<RawClass>,
    time_distribution: Vec<RawTime>,
}

/// A bucket start in seconds and its weight (SLS's `TimeSample`).
#[derive(Deserialize)]
struct RawTime {
    time: i64,
    weight: f64,
}

/// A job class in either shape: generic (`tasks` present) or the old flat keys, which SLS's
/// `validateJobDef` converts to a map and a reduce task. Flat keys are ignored when `tasks` is given.
#[derive(Deserialize)]
struct RawClass {
    class_name: Option<String>,
    user_name: Option<String>,
    class_weight: f64,
    #[serde(rename = "type")]
    kind: Option<String>,
    deadline_factor: Option<RawSample>,
    duration: Option<RawSample>,
    tasks: Option<Vec<RawTask>>,
    mtasks_avg: Option<f64>,
    mtasks_stddev: Option<f64>,
    rtasks_avg: Option<f64>,
    rtasks_stddev: Option<f64>,
    dur_avg: Option<f64>,
    dur_stddev: Option<f64>,
    mtime_avg: Option<f64>,
    mtime_stddev: Option<f64>,
    rtime_avg: Option<f64>,
    rtime_stddev: Option<f64>,
    deadline_factor_avg: Option<f64>,
    deadline_factor_stddev: Option<f64>,
}

#[derive(Deserialize)]
struct RawTask {
    #[serde(rename = "type")]
    kind: String,
    count: RawSample,
    time: RawSample,
}

/// SLS's `Sample`: a constant `{val}`, a distribution `{val, std, dist?}` (log-normal unless
/// `dist` is `NORM`), or a discrete choice `{discrete, weights?}` (numbers only here).
#[derive(Deserialize)]
struct RawSample {
    val: Option<f64>,
    std: Option<f64>,
    dist: Option<String>,
    discrete: Option<Vec<f64>>,
    weights: Option<Vec<f64>>,
}

/// A field path and what is wrong with it; turned into a TraceError at the top.
type Bad = (String, String);

fn bad(field: impl Into<String>, problem: impl Into<String>) -> Bad {
    (field.into(), problem.into())
}

/// A validated, ready-to-draw config.
struct Plan {
    weights: Vec<f64>,
    workloads: Vec<WorkloadPlan>,
}

struct WorkloadPlan {
    queue: Option<String>,
    class_weights: Vec<f64>,
    classes: Vec<ClassPlan>,
    times: Vec<i64>,
    time_weights: Vec<f64>,
}

struct ClassPlan {
    name: Option<String>,
    user: Option<String>,
    mapreduce: bool,
    duration: Dist,
    deadline_factor: Option<Dist>,
    tasks: Vec<TaskPlan>,
}

struct TaskPlan {
    reduce: bool,
    count: Dist,
    time: Dist,
}

enum Dist {
    Const(f64),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Discrete(Vec<f64>, Vec<f64>),
}

impl Dist {
    fn draw(&self, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Normal(d) => d.sample(rng),
            Dist::LogNormal(d) => d.sample(rng),
            Dist::Discrete(values, weights) => values[pick(weights, rng)],
        }
    }

    /// Java's `Math.round`, floored at 0: counts and times are never negative.
    fn draw_round(&self, rng: &mut ChaCha8Rng) -> i64 {
        (self.draw(rng) + 0.5).floor().max(0.0) as i64
    }

    /// `SynthUtils.getLogNormalDist` / `getNormalDist`: a spread of 0 means mean / 6.
    /// SLS has no distribution for a mean of 0 (and fails when sampling); here it is the constant 0.
    fn spread(mean: f64, std: f64, normal: bool, field: &str) -> Result<Dist, Bad> {
        if mean == 0.0 {
            return Ok(Dist::Const(0.0));
        }
        let std = if std == 0.0 { mean / 6.0 } else { std };
        let dist = if normal {
            Normal::new(mean, std)
                .map(Dist::Normal)
                .map_err(|e| e.to_string())
        } else {
            LogNormal::from_mean_cv(mean, std / mean)
                .map(Dist::LogNormal)
                .map_err(|e| e.to_string())
        };
        dist.map_err(|e| bad(field, e))
    }
}

/// SLS's `SynthUtils.getWeighted`: the first index whose running sum exceeds u × total.
fn pick(weights: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = weights.iter().sum();
    let r = rng.random::<f64>() * total;
    let mut sum = 0.0;
    for (i, w) in weights.iter().enumerate() {
        sum += w;
        if sum > r {
            return i;
        }
    }
    // Only rounding gets here: the last index that can be chosen at all.
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
}

fn non_negative(v: f64, field: &str) -> Result<f64, Bad> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(bad(field, format!("expected a number ≥ 0, found {v}")))
    }
}

/// Weights must be ≥ 0 and not all 0 (SLS would index past the end).
fn check_weights(weights: &[f64], each: impl Fn(usize) -> String, all: &str) -> Result<(), Bad> {
    for (i, &w) in weights.iter().enumerate() {
        non_negative(w, &each(i))?;
    }
    if weights.iter().all(|&w| w == 0.0) {
        return Err(bad(
            all,
            "expected at least one positive weight, found none",
        ));
    }
    Ok(())
}

fn sample(s: &RawSample, field: &str) -> Result<Dist, Bad> {
    match (s.val, &s.discrete) {
        (Some(val), None) if s.weights.is_none() => {
            let val = non_negative(val, &format!("{field}.val"))?;
            let Some(std) = s.std else {
                return match s.dist {
                    None => Ok(Dist::Const(val)),
                    Some(_) => Err(bad(format!("{field}.dist"), "a `dist` needs a `std`")),
                };
            };
            let std = non_negative(std, &format!("{field}.std"))?;
            let normal = match s.dist.as_deref() {
                None => false,
                Some(d) if d.eq_ignore_ascii_case("LOGNORM") => false,
                Some(d) if d.eq_ignore_ascii_case("NORM") => true,
                Some(d) => {
                    return Err(bad(
                        format!("{field}.dist"),
                        format!("expected `LOGNORM` or `NORM`, found {d:?}"),
                    ));
                }
            };
            Dist::spread(val, std, normal, field)
        }
        (None, Some(values)) if s.std.is_none() && s.dist.is_none() => {
            if values.is_empty() {
                return Err(bad(
                    format!("{field}.discrete"),
                    "expected at least one value, found none",
                ));
            }
            for (i, &v) in values.iter().enumerate() {
                non_negative(v, &format!("{field}.discrete[{i}]"))?;
            }
            let weights = s.weights.clone().unwrap_or_else(|| vec![1.0; values.len()]);
            if weights.len() != values.len() {
                return Err(bad(
                    format!("{field}.weights"),
                    format!(
                        "expected {} weights (one per discrete value), found {}",
                        values.len(),
                        weights.len()
                    ),
                ));
            }
            check_weights(
                &weights,
                |i| format!("{field}.weights[{i}]"),
                &format!("{field}.weights"),
            )?;
            Ok(Dist::Discrete(values.clone(), weights))
        }
        _ => Err(bad(
            field,
            "expected `{val}`, `{val, std[, dist]}` or `{discrete[, weights]}`",
        )),
    }
}

/// An old-style `<key>_avg` / `<key>_stddev` pair: SLS's `new Sample(avg, stddev)`, a log-normal
/// whose missing or 0 stddev becomes avg / 6.
fn flat(avg: Option<f64>, std: Option<f64>, key: &str, at: &str) -> Result<Option<Dist>, Bad> {
    let Some(avg) = avg else { return Ok(None) };
    let avg = non_negative(avg, &format!("{at}.{key}_avg"))?;
    let std = non_negative(std.unwrap_or(0.0), &format!("{at}.{key}_stddev"))?;
    Dist::spread(avg, std, false, &format!("{at}.{key}_avg")).map(Some)
}

/// Task counts are drawn one task at a time: their centre is bounded, and so is every draw.
const MAX_TASKS: i64 = 1_000_000;

fn limit(counts: impl IntoIterator<Item = f64>, field: &str) -> Result<(), Bad> {
    match counts.into_iter().find(|&v| v > MAX_TASKS as f64) {
        Some(v) => Err(bad(
            field,
            format!("expected at most {MAX_TASKS} tasks, found {v}"),
        )),
        None => Ok(()),
    }
}

fn required(dist: Option<Dist>, field: String) -> Result<Dist, Bad> {
    dist.ok_or_else(|| {
        bad(
            field,
            "missing: a job class needs `tasks` or the flat keys mtasks_avg, mtime_avg, dur_avg",
        )
    })
}

fn class(c: &RawClass, at: &str) -> Result<ClassPlan, Bad> {
    let (duration, deadline_factor, tasks) = match &c.tasks {
        Some(tasks) => {
            let duration = c
                .duration
                .as_ref()
                .ok_or_else(|| bad(format!("{at}.duration"), "missing"))?;
            let factor = c.deadline_factor.as_ref();
            let mut plans = Vec::with_capacity(tasks.len());
            for (i, t) in tasks.iter().enumerate() {
                let at = format!("{at}.tasks[{i}]");
                let reduce = match t.kind.to_ascii_lowercase().as_str() {
                    "map" | "stream" => false,
                    "reduce" => true,
                    _ => {
                        return Err(bad(
                            format!("{at}.type"),
                            format!("expected `map`, `reduce` or `stream`, found {:?}", t.kind),
                        ));
                    }
                };
                limit(
                    t.count
                        .val
                        .into_iter()
                        .chain(t.count.discrete.iter().flatten().copied()),
                    &format!("{at}.count"),
                )?;
                plans.push(TaskPlan {
                    reduce,
                    count: sample(&t.count, &format!("{at}.count"))?,
                    time: sample(&t.time, &format!("{at}.time"))?,
                });
            }
            let factor = factor
                .map(|f| sample(f, &format!("{at}.deadline_factor")))
                .transpose()?;
            (sample(duration, &format!("{at}.duration"))?, factor, plans)
        }
        None => {
            limit(c.mtasks_avg, &format!("{at}.mtasks_avg"))?;
            limit(c.rtasks_avg, &format!("{at}.rtasks_avg"))?;
            let map = TaskPlan {
                reduce: false,
                count: required(
                    flat(c.mtasks_avg, c.mtasks_stddev, "mtasks", at)?,
                    format!("{at}.mtasks_avg"),
                )?,
                time: required(
                    flat(c.mtime_avg, c.mtime_stddev, "mtime", at)?,
                    format!("{at}.mtime_avg"),
                )?,
            };
            // A class without reduces (no `rtasks_avg`) is map-only.
            let reduce = TaskPlan {
                reduce: true,
                count: flat(c.rtasks_avg, c.rtasks_stddev, "rtasks", at)?
                    .unwrap_or(Dist::Const(0.0)),
                time: flat(c.rtime_avg, c.rtime_stddev, "rtime", at)?.unwrap_or(Dist::Const(0.0)),
            };
            let duration = required(
                flat(c.dur_avg, c.dur_stddev, "dur", at)?,
                format!("{at}.dur_avg"),
            )?;
            let factor = flat(
                c.deadline_factor_avg,
                c.deadline_factor_stddev,
                "deadline_factor",
                at,
            )?;
            (duration, factor, vec![map, reduce])
        }
    };
    Ok(ClassPlan {
        name: c.class_name.clone(),
        user: c.user_name.clone(),
        // SLS's `validateJobDef` makes every flat class `mapreduce`.
        mapreduce: c.tasks.is_none()
            || c.kind
                .as_deref()
                .is_none_or(|k| k.eq_ignore_ascii_case("mapreduce")),
        duration,
        deadline_factor,
        tasks,
    })
}

/// Far above any SLS config; they keep a typo from exhausting memory.
const MAX_JOBS: i64 = 10_000_000;
const MAX_NODES: i64 = 1_000_000;

fn plan(raw: &RawConfig) -> Result<Plan, Bad> {
    if !(0..=MAX_JOBS).contains(&raw.num_jobs) {
        return Err(bad(
            "num_jobs",
            format!("expected 0 to {MAX_JOBS}, found {}", raw.num_jobs),
        ));
    }
    if !(0..=MAX_NODES).contains(&raw.num_nodes) {
        return Err(bad(
            "num_nodes",
            format!("expected 0 to {MAX_NODES}, found {}", raw.num_nodes),
        ));
    }
    if raw.nodes_per_rack < 1 {
        return Err(bad(
            "nodes_per_rack",
            format!("expected a number ≥ 1, found {}", raw.nodes_per_rack),
        ));
    }
    if raw.workloads.is_empty() {
        return Err(bad(
            "workloads",
            "expected at least one workload, found none",
        ));
    }
    let weights: Vec<f64> = raw.workloads.iter().map(|w| w.workload_weight).collect();
    check_weights(
        &weights,
        |i| format!("workloads[{i}].workload_weight"),
        "workloads",
    )?;
    let mut workloads = Vec::with_capacity(raw.workloads.len());
    for (w, wl) in raw.workloads.iter().enumerate() {
        let at = format!("workloads[{w}]");
        if wl.job_classes.is_empty() {
            return Err(bad(
                format!("{at}.job_classes"),
                "expected at least one job class, found none",
            ));
        }
        if wl.time_distribution.is_empty() {
            return Err(bad(
                format!("{at}.time_distribution"),
                "expected at least one {time, weight}, found none",
            ));
        }
        let class_weights: Vec<f64> = wl.job_classes.iter().map(|c| c.class_weight).collect();
        check_weights(
            &class_weights,
            |i| format!("{at}.job_classes[{i}].class_weight"),
            &format!("{at}.job_classes"),
        )?;
        let time_weights: Vec<f64> = wl.time_distribution.iter().map(|t| t.weight).collect();
        check_weights(
            &time_weights,
            |i| format!("{at}.time_distribution[{i}].weight"),
            &format!("{at}.time_distribution"),
        )?;
        if let Some(i) = wl.time_distribution.iter().position(|t| t.time < 0) {
            return Err(bad(
                format!("{at}.time_distribution[{i}].time"),
                "expected seconds ≥ 0",
            ));
        }
        let classes = wl
            .job_classes
            .iter()
            .enumerate()
            .map(|(c, class_def)| class(class_def, &format!("{at}.job_classes[{c}]")))
            .collect::<Result<_, _>>()?;
        workloads.push(WorkloadPlan {
            queue: wl.queue_name.clone(),
            class_weights,
            classes,
            times: wl.time_distribution.iter().map(|t| t.time).collect(),
            time_weights,
        });
    }
    Ok(Plan { weights, workloads })
}

/// `Workload.generateSubmissionTime` in SLS: whole seconds.
fn submit_seconds(w: &WorkloadPlan, rng: &mut ChaCha8Rng) -> i64 {
    let i = pick(&w.time_weights, rng);
    let start = w.times[i];
    let end = w.times.get(i + 1).copied().unwrap_or(start);
    if end > start {
        rng.random_range(start..end)
    } else {
        start
    }
}

fn expand(plan: &Plan, num_jobs: usize, rng: &mut ChaCha8Rng) -> Vec<Job> {
    let mut stories: Vec<(i64, usize, usize)> = (0..num_jobs)
        .map(|_| {
            let w = pick(&plan.weights, rng);
            let submit = submit_seconds(&plan.workloads[w], rng);
            (submit, w, pick(&plan.workloads[w].class_weights, rng))
        })
        .collect();
    stories.sort_by_key(|s| s.0);
    let mut jobs = Vec::with_capacity(num_jobs);
    for (n, (submit_s, w, c)) in stories.into_iter().enumerate() {
        let (workload, class) = (&plan.workloads[w], &plan.workloads[w].classes[c]);
        let submit_ms: Millis = submit_s.saturating_mul(1000);
        let duration_ms = class.duration.draw_round(rng).saturating_mul(1000);
        let deadline_ms = class
            .deadline_factor
            .as_ref()
            .map(|f| submit_ms.saturating_add((f.draw(rng) * duration_ms as f64).ceil() as i64));
        let mut counts: Vec<u64> = class
            .tasks
            .iter()
            .map(|t| t.count.draw_round(rng).min(MAX_TASKS) as u64)
            .collect();
        if class.mapreduce
            && class
                .tasks
                .iter()
                .zip(&counts)
                .all(|(t, &k)| t.reduce || k == 0)
        {
            if let Some(first_map) = class.tasks.iter().position(|t| !t.reduce) {
                counts[first_map] = 1;
            }
        }
        let mut job = Job {
            id: format!("job_{n}"),
            name: class.name.as_ref().map(|name| format!("{name}_{n:06}")),
            user: class.user.clone(),
            queue: workload.queue.clone(),
            submit_ms,
            deadline_ms,
            // SynthJob reports every job and attempt as succeeded.
            outcome: Outcome::Succeeded,
            ..Job::default()
        };
        for (t, count) in class.tasks.iter().zip(counts) {
            let groups = if t.reduce {
                &mut job.reduces
            } else {
                &mut job.maps
            };
            let task = |ms: i64| Task {
                duration_ms: Some(ms),
                status: Outcome::Succeeded,
                ..Task::default()
            };
            if let Dist::Const(_) = t.time {
                if count > 0 {
                    groups.push(TaskGroup {
                        count,
                        task: task(t.time.draw_round(rng)),
                    });
                }
                continue;
            }
            for _ in 0..count {
                let ms = t.time.draw_round(rng);
                match groups.last_mut() {
                    Some(g) if g.task.duration_ms == Some(ms) => g.count += 1,
                    _ => groups.push(TaskGroup::one(task(ms))),
                }
            }
        }
        jobs.push(job);
    }
    jobs
}

pub(crate) fn parse(file: &str, bytes: &[u8], seed: Option<u64>) -> Result<Workload, TraceError> {
    let mut config = None;
    for_each_object::<RawConfig, _>(file, bytes, |raw, object| {
        if object.index > 0 {
            return Err(TraceError::new(
                file,
                object.position(),
                "expected one SYNTH config object, found a second",
            ));
        }
        config = Some(raw);
        Ok(())
    })?;
    // for_each_object already refuses an empty stream; this keeps the reader panic-free regardless.
    let raw = config.ok_or_else(|| {
        TraceError::new(
            file,
            Position::File,
            "expected a SYNTH config object, found none",
        )
    })?;
    let plan = plan(&raw)
        .map_err(|(field, problem)| TraceError::new(file, Position::File, problem).field(field))?;
    let mut workload = Workload::new(Format::Synth);
    let mut rng = ChaCha8Rng::seed_from_u64(seed.unwrap_or(raw.rand_seed as u64));
    workload.jobs = expand(&plan, raw.num_jobs as usize, &mut rng);
    let nodes = raw.num_nodes as usize;
    let racks = (nodes / raw.nodes_per_rack as usize).clamp(1, nodes.max(1));
    for i in 0..nodes {
        workload
            .topology
            .intern(Some(&format!("rack{}", i % racks)), &format!("node{i}"));
    }
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAT: &str = r#"{"num_nodes": 6, "nodes_per_rack": 2, "num_jobs": 40, "rand_seed": 7,
      "workloads": [{"workload_name": "w", "workload_weight": 1, "queue_name": "q",
        "job_classes": [{"class_name": "c", "user_name": "u", "class_weight": 1,
          "mtasks_avg": 5, "mtasks_stddev": 1, "rtasks_avg": 2, "rtasks_stddev": 1,
          "dur_avg": 60, "dur_stddev": 5, "mtime_avg": 10, "mtime_stddev": 2,
          "rtime_avg": 20, "rtime_stddev": 4, "deadline_factor_avg": 2, "deadline_factor_stddev": 0.001}],
        "time_distribution": [{"time": 10, "weight": 1}, {"time": 20, "weight": 0}]}]}"#;

    fn read(text: &str, seed: Option<u64>) -> Result<Workload, TraceError> {
        parse("s.json", text.as_bytes(), seed)
    }

    /// Replaces the first `from` in FLAT.
    fn flat_with(from: &str, to: &str) -> String {
        assert!(FLAT.contains(from), "{from}");
        FLAT.replacen(from, to, 1)
    }

    #[test]
    fn flat_classes_expand_within_their_distributions() {
        let w = read(FLAT, None).unwrap();
        assert_eq!(w.format, Format::Synth);
        assert_eq!(w.jobs.len(), 40);
        assert!(
            w.jobs.windows(2).all(|p| p[0].submit_ms <= p[1].submit_ms),
            "sorted by submit"
        );
        for (n, j) in w.jobs.iter().enumerate() {
            assert_eq!(j.id, format!("job_{n}"));
            assert_eq!(j.name.as_deref(), Some(format!("c_{n:06}").as_str()));
            assert_eq!(
                (j.user.as_deref(), j.queue.as_deref()),
                (Some("u"), Some("q"))
            );
            assert!(
                (10_000..20_000).contains(&j.submit_ms) && j.submit_ms % 1000 == 0,
                "{}",
                j.submit_ms
            );
            // deadline = submit + ~2 × duration, duration ~ 60 s ± 5.
            let slack = j.deadline_ms.unwrap() - j.submit_ms;
            assert!((80_000..160_000).contains(&slack), "{slack}");
            assert!(
                j.map_count() >= 1 && j.map_count() < 15,
                "{}",
                j.map_count()
            );
            assert!(
                j.map_tasks()
                    .all(|t| (1..40).contains(&t.duration_ms.unwrap()))
            );
            assert!(
                j.reduce_tasks()
                    .all(|t| (1..80).contains(&t.duration_ms.unwrap()))
            );
            assert_eq!(
                (j.start_ms, j.finish_ms, j.outcome),
                (None, None, Outcome::Succeeded)
            );
        }
        let reduces: u64 = w.jobs.iter().map(Job::reduce_count).sum();
        assert!((40..120).contains(&reduces), "{reduces}");
    }

    #[test]
    fn generic_classes_stream_tasks_and_constants() {
        let text = r#"{"num_jobs": 3, "rand_seed": 1, "workloads": [{"workload_weight": 1,
          "job_classes": [{"class_weight": 1, "type": "stream", "duration": {"val": 30},
            "deadline_factor": {"val": 2},
            "tasks": [{"type": "stream", "priority": 20, "count": {"val": 2}, "time": {"val": 60000}}]}],
          "time_distribution": [{"time": 5, "weight": 1}]}]}"#;
        let w = read(text, None).unwrap();
        for j in &w.jobs {
            assert_eq!(j.submit_ms, 5000, "the last bucket is its start time");
            assert_eq!(j.deadline_ms, Some(5000 + 60_000));
            assert_eq!(
                j.maps,
                [TaskGroup {
                    count: 2,
                    task: Task {
                        duration_ms: Some(60000),
                        status: Outcome::Succeeded,
                        ..Task::default()
                    }
                }]
            );
            assert!(j.reduces.is_empty() && j.name.is_none() && j.user.is_none());
        }
        assert!(w.topology.nodes.is_empty());
    }

    #[test]
    fn same_seed_same_workload_other_seed_other_workload() {
        let a = read(FLAT, None).unwrap();
        assert_eq!(a, read(FLAT, None).unwrap());
        assert_eq!(
            a,
            read(FLAT, Some(7)).unwrap(),
            "the config's rand_seed is the default"
        );
        assert_ne!(a, read(FLAT, Some(8)).unwrap());
    }

    #[test]
    fn topology_is_slss_round_robin() {
        let w = read(FLAT, None).unwrap();
        let t = &w.topology;
        assert_eq!(t.racks, ["rack0", "rack1", "rack2"]);
        let names: Vec<_> = t
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), t.rack_name(n.rack.unwrap())))
            .collect();
        assert_eq!(
            names[..4],
            [
                ("node0", "rack0"),
                ("node1", "rack1"),
                ("node2", "rack2"),
                ("node3", "rack0")
            ]
        );
        let w = read(
            &flat_with("\"nodes_per_rack\": 2", "\"nodes_per_rack\": 10"),
            None,
        )
        .unwrap();
        assert_eq!(w.topology.racks, ["rack0"], "at least one rack");
    }

    #[test]
    fn a_mapreduce_class_keeps_one_map() {
        let w = read(&flat_with("\"mtasks_avg\": 5", "\"mtasks_avg\": 0"), None).unwrap();
        assert!(w.jobs.iter().all(|j| j.map_count() == 1));
    }

    #[test]
    fn a_zero_stddev_is_mean_over_six_as_in_sls() {
        let text = flat_with("\"mtasks_stddev\": 1", "\"mtasks_stddev\": 0")
            .replace("\"num_jobs\": 40", "\"num_jobs\": 200");
        let counts: Vec<u64> = read(&text, None)
            .unwrap()
            .jobs
            .iter()
            .map(Job::map_count)
            .collect();
        assert!(counts.iter().any(|&c| c != 5), "{counts:?}");
    }

    #[test]
    fn discrete_and_normal_samples() {
        let text = r#"{"num_jobs": 50, "workloads": [{"workload_weight": 1,
          "job_classes": [{"class_weight": 1, "duration": {"val": 10, "std": 3, "dist": "NORM"},
            "tasks": [{"type": "map", "count": {"discrete": [1, 3], "weights": [0, 1]}, "time": {"discrete": [7]}}]}],
          "time_distribution": [{"time": 0, "weight": 1}]}]}"#;
        let w = read(text, Some(3)).unwrap();
        assert!(
            w.jobs
                .iter()
                .all(|j| j.map_count() == 3 && j.deadline_ms.is_none())
        );
        assert!(
            w.jobs.iter().all(|j| j.maps.len() == 1),
            "equal durations share a group"
        );
    }

    fn field_of(text: &str) -> String {
        let e = read(text, None).unwrap_err();
        assert_eq!(e.at, Position::File, "{e}");
        e.field.clone().unwrap_or_else(|| panic!("no field: {e}"))
    }

    #[test]
    fn validation_errors_name_the_field() {
        let c = "workloads[0].job_classes[0]";
        for (from, to, field) in [
            (
                "\"mtasks_avg\": 5",
                "\"mtasks_avg\": -5",
                format!("{c}.mtasks_avg"),
            ),
            (
                "\"mtasks_stddev\": 1",
                "\"mtasks_stddev\": -1",
                format!("{c}.mtasks_stddev"),
            ),
            (
                "\"dur_stddev\": 5",
                "\"dur_stddev\": -5",
                format!("{c}.dur_stddev"),
            ),
            ("\"mtime_avg\": 10,", "", format!("{c}.mtime_avg")),
            ("\"dur_avg\": 60,", "", format!("{c}.dur_avg")),
            (
                "\"class_weight\": 1",
                "\"class_weight\": -1",
                format!("{c}.class_weight"),
            ),
            (
                "\"class_weight\": 1",
                "\"class_weight\": 0",
                "workloads[0].job_classes".into(),
            ),
            (
                "\"workload_weight\": 1",
                "\"workload_weight\": 0",
                "workloads".into(),
            ),
            (
                "\"workload_weight\": 1",
                "\"workload_weight\": -2",
                "workloads[0].workload_weight".into(),
            ),
            (
                "\"weight\": 1",
                "\"weight\": 0",
                "workloads[0].time_distribution".into(),
            ),
            (
                "\"weight\": 0",
                "\"weight\": -1",
                "workloads[0].time_distribution[1].weight".into(),
            ),
            (
                "\"time\": 10",
                "\"time\": -10",
                "workloads[0].time_distribution[0].time".into(),
            ),
            ("\"num_jobs\": 40", "\"num_jobs\": -1", "num_jobs".into()),
            (
                "\"num_jobs\": 40",
                "\"num_jobs\": 10000001",
                "num_jobs".into(),
            ),
            ("\"num_nodes\": 6", "\"num_nodes\": -1", "num_nodes".into()),
            (
                "\"rtasks_avg\": 2",
                "\"rtasks_avg\": 2e9",
                format!("{c}.rtasks_avg"),
            ),
            (
                "\"mtasks_avg\": 5",
                "\"mtasks_avg\": 2e9",
                format!("{c}.mtasks_avg"),
            ),
            (
                "\"nodes_per_rack\": 2",
                "\"nodes_per_rack\": 0",
                "nodes_per_rack".into(),
            ),
        ] {
            assert_eq!(field_of(&flat_with(from, to)), field, "{from} -> {to}");
        }
    }

    #[test]
    fn generic_validation_errors_name_the_field() {
        let task = r#"{"type": "map", "count": {"val": 1}, "time": {"val": 1}}"#;
        let dur = r#""duration": {"val": 1}"#;
        for (class, field) in [
            (r#""tasks": [TASK]"#, "duration"),
            (
                r#""duration": {"val": 1, "std": -1}, "tasks": []"#,
                "duration.std",
            ),
            (
                r#""duration": {"val": 1, "std": 1, "dist": "POISSON"}, "tasks": []"#,
                "duration.dist",
            ),
            (r#""duration": {"std": 1}, "tasks": []"#, "duration"),
            (
                r#"DUR, "deadline_factor": {"val": -2}, "tasks": []"#,
                "deadline_factor.val",
            ),
            (
                r#"DUR, "tasks": [TASK, {"type": "shuffle", "count": {"val": 1}, "time": {"val": 1}}]"#,
                "tasks[1].type",
            ),
            (
                r#"DUR, "tasks": [{"type": "map", "count": {"val": 5e6}, "time": {"val": 1}}]"#,
                "tasks[0].count",
            ),
            (
                r#"DUR, "tasks": [{"type": "map", "count": {"discrete": [1, 2], "weights": [1]}, "time": {"val": 1}}]"#,
                "tasks[0].count.weights",
            ),
        ] {
            let class = class.replace("TASK", task).replace("DUR", dur);
            let text = format!(
                r#"{{"num_jobs": 1, "workloads": [{{"workload_weight": 1,
                   "job_classes": [{{"class_weight": 1, {class}}}],
                   "time_distribution": [{{"time": 0, "weight": 1}}]}}]}}"#
            );
            assert_eq!(
                field_of(&text),
                format!("workloads[0].job_classes[0].{field}"),
                "{class}"
            );
        }
    }

    #[test]
    fn malformed_configs_fail_cleanly() {
        let e = read(r#"{"num_jobs": "ten", "workloads": []}"#, None).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("num_jobs"), "{e}");
        let e = read(
            &flat_with("\"mtasks_avg\": 5", "\"mtasks_avg\": \"5\""),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("workloads[0].job_classes[0].mtasks_avg"),
            "{e}"
        );
        let e = read(&format!("{FLAT}\n{FLAT}"), None).unwrap_err();
        assert!(e.to_string().contains("found a second"), "{e}");
        assert_eq!(field_of(r#"{"num_jobs": 1, "workloads": []}"#), "workloads");
    }
}
