//! Trace jobs (SWIM, Rumen, SLS, SYNTH: any format whose jobs have tasks) as simulator jobs.

use yard_appmaster::policy::{Rng, Seconds};
use yard_workload::{Job, Millis, Task, Workload};

use super::draw::{self, MapLaw};
use super::reduce::Reduces;
use super::{ARIA_REDUCE_MS, Draft, MapDraft, WorkloadOptions, realise};
use crate::job::SimJob;

/// Every job of the trace, in trace order, submitted at seconds from the workload's origin.
///
/// - Maps: one per map task. A recorded duration is kept (floored at 1 ms); the others are
///   drawn — around a log-normal fitted to the job's recorded maps when it has some, else
///   around a per-job mean from ARIA's LN(9.9511, 1.6764) ms, spread by `task_spread` and
///   scaled by input / block.
/// - Reduces: timed ones (Rumen) fix `f(d) = a·d^b` by a fit and `e_r` so that the truth
///   reproduces them (see `reduce`); untimed ones (SWIM) get a per-job mean from ARIA's
///   LN(12.375, 1.6262) ms at the mean input, `b` from `reduce_exponent` and drawn noise.
/// - Map output: the job's shuffle bytes (SWIM's column; for timed reduces, their recorded
///   inputs; else input × `output_ratio`), split over the maps in proportion to input.
/// - Replicas: the split's preferred hosts, topology node id mod `nodes`; HDFS's placement
///   where the trace names none.
pub fn from_trace(w: &Workload, options: &WorkloadOptions) -> Vec<SimJob> {
    trace_jobs(w, options).collect()
}

/// [`from_trace`], one job at a time: a day of a production cluster need not be held in
/// memory at once (the draws are the same, in the same order).
pub fn trace_jobs<'a>(
    w: &'a Workload,
    options: &'a WorkloadOptions,
) -> impl Iterator<Item = SimJob> + Send + 'a {
    let origin = w.origin_ms().unwrap_or(0);
    let mut rng = options.rng();
    w.jobs.iter().map(move |job| {
        let draft = draft(job, origin, &mut rng, options);
        realise(draft, &mut rng, options)
    })
}

fn draft(job: &Job, origin: Millis, rng: &mut Rng, o: &WorkloadOptions) -> Draft {
    let maps: Vec<MapDraft> = job
        .map_tasks()
        .map(|t| MapDraft {
            input: t.bytes,
            duration: t.duration_ms.map(seconds),
            replicas: cluster_nodes(t, o),
        })
        .collect();
    let recorded: Vec<Seconds> = maps.iter().filter_map(|m| m.duration).collect();
    let map_law =
        MapLaw::fitted(&recorded, o.task_spread).unwrap_or_else(|| MapLaw::per_job(rng, o));
    let reduces = reduces(job, rng, o);
    Draft {
        id: job.id.clone(),
        submit: job.submit_ms.saturating_sub(origin) as f64 / 1000.0,
        maps,
        map_law,
        reduces,
    }
}

/// A recorded duration in seconds, at least 1 ms: a task that ran took some time.
fn seconds(ms: Millis) -> Seconds {
    ms.max(1) as f64 / 1000.0
}

/// The trace's preferred hosts as cluster nodes: topology node id mod `nodes`, first
/// occurrence kept. Stable (the ids are interned in file order) and spreads the trace's
/// hosts over the cluster evenly; racks are not kept (the trace's racks rarely match).
fn cluster_nodes(task: &Task, o: &WorkloadOptions) -> Vec<u32> {
    let mut nodes: Vec<u32> = Vec::with_capacity(task.preferred.len());
    for id in &task.preferred {
        let node = id.0 % o.nodes.max(1);
        if !nodes.contains(&node) {
            nodes.push(node);
        }
    }
    nodes
}

fn reduces(job: &Job, rng: &mut Rng, o: &WorkloadOptions) -> Reduces {
    let tasks: Vec<&Task> = job.reduce_tasks().collect();
    if tasks.is_empty() {
        return Reduces::None;
    }
    if tasks.iter().any(|t| t.duration_ms.is_some()) {
        return Reduces::Timed {
            reduces: tasks
                .iter()
                .map(|t| (t.bytes.unwrap_or(0).max(1), t.duration_ms.map(seconds)))
                .collect(),
            fallback_b: 1.0,
        };
    }
    let recorded = tasks
        .iter()
        .filter_map(|t| t.bytes)
        .reduce(u64::saturating_add);
    let shuffle = job
        .shuffle_bytes
        .or(recorded)
        .unwrap_or_else(|| (job.input_bytes() as f64 * o.output_ratio) as u64);
    Reduces::Drawn {
        count: tasks.len() as u32,
        shuffle,
        mean: draw::seconds(rng, ARIA_REDUCE_MS),
        b: draw::uniform(rng, o.reduce_exponent),
    }
}
