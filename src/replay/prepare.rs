//! The trace's jobs as the live cluster runs them: the simulator's jobs with every time
//! scaled ([`scale_job`], [`prepare`]), their bytes' scale ([`byte_scale`]), the live job each
//! becomes ([`live_job`], [`LiveJob::to_job`]) and, on a local cluster, the profile history
//! each job's kind is seeded with ([`history`], [`seed_kinds`]).

use std::path::Path;

use anyhow::{Context, Result};
use yard_appmaster::policy::{PolicyKind, RunRecord, Seconds};
use yard_appmaster::submission::MapReduceJob;
use yard_sim::shared::{self, DeadlineFactor, SharedJob};
use yard_sim::workloads::{self, WorkloadOptions};
use yard_sim::{Experiment, SimJob};

/// One trace job as the live cluster runs it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LiveJob {
    pub(super) id: String,
    /// Seconds after the replay's start.
    pub(super) arrival: Seconds,
    /// Seconds after its submission.
    pub(super) deadline: Seconds,
    pub(super) map_seconds: Vec<Seconds>,
    pub(super) map_input_bytes: Vec<u64>,
    pub(super) map_output_bytes: Vec<u64>,
    pub(super) reduce_seconds: Vec<Seconds>,
    /// Its profile store kind's name (`synthetic:NAME`, [`history`]); `None`: `synthetic`.
    pub(super) kind: Option<String>,
    /// Its bytes over the trace's ([`byte_scale`]).
    pub(super) byte_scale: f64,
    /// The most containers it may hold (`maxContainers`): the cluster's, as the simulator's
    /// policy is told them (its allotment; the master tells its policy the cap).
    pub(super) max_containers: Option<u32>,
}

/// Below this many bytes, rounding a live job's byte counts to whole bytes moves them by
/// more than 0.05 %.
const WHOLE_BYTES: f64 = 1000.0;

/// The factor from a trace job's bytes to its live job's: the time scale (the shuffle
/// shrinks with the clock), unless that leaves a byte count the master keeps whole (a map's
/// output, the profile's partition, an earlier run's largest reduce input: eq. 13's
/// `d_{k_i}`) under [`WHOLE_BYTES`]: then as much more as keeps it there, at most 1 (the
/// trace's own bytes). At 1/60, a 24-byte `d_{k_i}` was 0.4 bytes, stored as 1: the live
/// estimate of that job's reduce came out 6.6 times the simulator's.
pub(super) fn byte_scale(shared: &SharedJob, time_scale: f64) -> f64 {
    let p = &shared.job.profile;
    let smallest = p
        .previous_runs
        .iter()
        .map(|r| r.max_reduce_input)
        .chain([p.partition_bytes])
        .chain(shared.job.truth.maps.iter().map(|m| m.output_bytes as f64))
        .filter(|&b| b > 0.0)
        .fold(f64::INFINITY, f64::min);
    match smallest.is_finite() {
        true => (WHOLE_BYTES / smallest).min(1.0).max(time_scale),
        false => time_scale,
    }
}

/// Every time in `job` times `x`: its maps' durations, its reduce law (`f(d)·x`: the same
/// bytes take `x` times as long), its shuffle (the bandwidth over `x`), and the profile the
/// policy is told, alike. Bytes, counts and the submit time stay (the shared cluster's
/// `prepare` scales arrivals).
pub(super) fn scale_job(mut job: SimJob, x: f64) -> SimJob {
    for m in &mut job.truth.maps {
        m.duration *= x;
    }
    job.truth.reduce_time.a *= x;
    job.truth.shuffle_bandwidth /= x;
    let p = &mut job.profile;
    p.map_local *= x;
    p.map_remote *= x;
    p.reduce_time.a *= x;
    p.shuffle_bandwidth /= x;
    job
}

/// The live job of a prepared (scaled) one: every map's duration, split bytes and output
/// (times `byte_scale`), every reduce's time on its share of the whole output.
pub(super) fn live_job(shared: &SharedJob, byte_scale: f64) -> LiveJob {
    let t = &shared.job.truth;
    let output: u64 = t.maps.iter().map(|m| m.output_bytes).sum();
    LiveJob {
        id: shared.job.id.clone(),
        arrival: shared.arrival,
        deadline: shared.deadline,
        map_seconds: t.maps.iter().map(|m| m.duration).collect(),
        map_input_bytes: t.maps.iter().map(|m| m.input_bytes).collect(),
        map_output_bytes: t
            .maps
            .iter()
            .map(|m| (m.output_bytes as f64 * byte_scale).round() as u64)
            .collect(),
        reduce_seconds: t
            .reduce_inputs(output)
            .iter()
            .enumerate()
            .map(|(r, &d)| t.reduce_seconds(r as u32, d as f64))
            .collect(),
        kind: None,
        byte_scale,
        max_containers: None,
    }
}

/// The history the simulator's profile of a job stands for, as the live profile store keeps
/// one: a run record and reduce samples from which the live master's `Profiler` builds the
/// simulated policy's profile, in the live job's bytes (its map output is the trace's times
/// `byte_scale`). The simulator hands every policy its own job's profile (a recurring job
/// measured before, `Model::profiles`); live, a master reads its kind's history from the
/// store, so each trace job is its own kind with this history written before it is submitted.
/// Without it every replayed job was the kind `synthetic`: its masters estimated with the
/// average of the last five trace jobs of any size, and a reduce law fitted across all of
/// them (issue 29: estimation error 88.6 % live against 13.8 % simulated).
pub(super) fn history(
    shared: &SharedJob,
    byte_scale: f64,
) -> (Vec<RunRecord>, Vec<(f64, Seconds)>) {
    let p = &shared.job.profile;
    let record = RunRecord {
        map_local: Some(p.map_local),
        map_remote: Some(p.map_remote),
        map_shortest: p.map_shortest,
        map_spread: p.map_spread,
        partition_bytes: Some(p.partition_bytes * byte_scale),
        shuffle_bandwidth: Some(p.shuffle_bandwidth * byte_scale),
        k: 0,
        max_reduce_input: 0,
        reduce_samples: Vec::new(),
    };
    // One record per earlier run (eq. 13's `k_i`, `d_{k_i}`), the same means in each.
    let records: Vec<RunRecord> = match p.previous_runs.is_empty() {
        true => vec![record],
        false => p
            .previous_runs
            .iter()
            .map(|r| RunRecord {
                k: r.k,
                max_reduce_input: (r.max_reduce_input * byte_scale).round() as u64,
                ..record.clone()
            })
            .collect(),
    };
    // f(d) = a·d^b over the trace's bytes is a·x^-b·d^b over the live ones (d·x). Three
    // points a factor 4 apart around the largest reduce input, their residuals in log space
    // (e, −2e, e) with e = spread/√6: the least-squares fit (eq. 9) returns a, b and spread.
    let law = p.reduce_time;
    let largest = records
        .iter()
        .map(|r| r.max_reduce_input as f64)
        .fold(0.0, f64::max);
    let centre = match largest > 0.0 {
        true => largest,
        false => (p.partition_bytes * byte_scale).max(1024.0),
    };
    // A map-only job's law takes no time (its live job's one reduce sleeps 0 s): a fit
    // needs times above 0, so a nanosecond stands for none.
    let e = law.spread / 6f64.sqrt();
    let samples = [(0.25, e), (1.0, -2.0 * e), (4.0, e)]
        .iter()
        .map(|&(f, r)| {
            let d = centre * f;
            let t = law.a * (d / byte_scale).powf(law.b) * r.exp();
            (d, if t > 0.0 && t.is_finite() { t } else { 1e-9 })
        })
        .collect();
    (records, samples)
}

/// A job kind and the history written for it: run records and reduce samples.
type KindHistory = (String, Vec<RunRecord>, Vec<(f64, Seconds)>);

/// Writes every job's history (`history`) under its kind into the profile store at `db`.
fn seed_profiles(db: &std::path::Path, jobs: &[KindHistory]) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(async {
            let store = yard_profiles::ProfileStore::open(db).await?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            for (kind, records, samples) in jobs {
                store.add_samples(kind, samples).await?;
                for r in records {
                    store.add_run(kind, now, r).await?;
                }
            }
            anyhow::Ok(())
        })
        .with_context(|| format!("writing the trace jobs' profiles into {}", db.display()))
}

/// The `kind` parameter of the `i`-th trace job `id` (its profile store kind is
/// `synthetic:NAME`).
fn kind_name(i: usize, id: &str) -> String {
    format!("j{i}.{}", clean_id(id, 80))
}

/// A trace job's id as a name: its first `max` characters, each letter, digit, `-`, `_` and
/// `.` kept and any other `_`.
pub(super) fn clean_id(id: &str, max: usize) -> String {
    id.chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .take(max)
        .collect()
}

impl LiveJob {
    /// The job as the rm's `POST /ws/v1/yard/mapreduce/jobs` takes it. A map-only job still
    /// gathers its answer in one reduce of no time, as `yard submit synthetic --trace` does.
    pub(super) fn to_job(&self, policy: PolicyKind, seed: u64, guard: f64) -> MapReduceJob {
        let mut job = MapReduceJob::new("synthetic", None);
        job.max_containers = self.max_containers;
        if let Some(name) = &self.kind {
            job.params.insert("kind".into(), name.into());
        }
        job.policy = policy;
        job.seed = seed;
        job.guard_seconds = guard;
        // Whole microseconds: the lists travel in the master's command line.
        let round = |s: &f64| (s * 1e6).round() / 1e6;
        job.map_seconds_each = Some(self.map_seconds.iter().map(round).collect());
        job.map_input_bytes_each = Some(self.map_input_bytes.clone());
        job.map_output_bytes_each = Some(self.map_output_bytes.clone());
        let reduces = match self.reduce_seconds.is_empty() {
            true => vec![0.0],
            false => self.reduce_seconds.iter().map(round).collect(),
        };
        job.reduces = reduces.len() as u32;
        job.reduce_seconds_each = Some(reduces);
        job
    }
}

/// The trace's first `n` jobs as the simulator builds them, every time scaled, with their
/// arrivals, `T_J` and deadlines drawn by the shared cluster's `prepare` on `exp`.
pub(super) fn prepare(
    workload: &yard_workload::Workload,
    n: usize,
    options: &WorkloadOptions,
    exp: &Experiment,
    factor: DeadlineFactor,
    time_scale: f64,
) -> Vec<SharedJob> {
    let jobs: Vec<SimJob> = workloads::trace_jobs(workload, options)
        .take(n)
        .map(|j| scale_job(j, time_scale))
        .collect();
    shared::prepare(jobs, exp, factor, time_scale)
}

/// On a local cluster every job is its own kind, its history the simulator's profile of it:
/// writes each job's history into the profile store at `db` and names its kind in `live`.
pub(super) fn seed_kinds(db: &Path, prepared: &[SharedJob], live: &mut [LiveJob]) -> Result<()> {
    let jobs: Vec<KindHistory> = prepared
        .iter()
        .enumerate()
        .zip(&*live)
        .map(|((i, j), l)| {
            let (records, samples) = history(j, l.byte_scale);
            (
                format!("synthetic:{}", kind_name(i, &j.job.id)),
                records,
                samples,
            )
        })
        .collect();
    seed_profiles(db, &jobs)?;
    for (i, j) in live.iter_mut().enumerate() {
        j.kind = Some(kind_name(i, &j.id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::tests::{jobs, trace};

    #[test]
    fn a_jobs_seeded_history_gives_the_live_master_the_simulators_profile() {
        use yard_appmaster::policy::{PowerLaw, Profile, Profiler};
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 1.0 / 60.0;
        let (prepared, _) = jobs(&w, 20, x);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-12);
        let mut with_reduces = 0;
        for j in &prepared {
            let sim = &j.job.profile;
            // What a master falls back on where its store has nothing: all of it wrong.
            let defaults = Profile {
                map_local: 1e6,
                map_remote: 1e6,
                map_shortest: None,
                map_spread: None,
                partition_bytes: 0.123,
                shuffle_bandwidth: 0.5,
                reduce_time: PowerLaw {
                    a: 99.0,
                    b: 0.1,
                    spread: 0.0,
                },
                previous_runs: Vec::new(),
            };
            // As the live master reads its kind (`Stored::profiler`): samples, then runs.
            let bs = byte_scale(j, x);
            assert!((x..=1.0).contains(&bs), "{}: {bs}", j.job.id);
            let (records, samples) = history(j, bs);
            let mut profiler = Profiler::new(defaults);
            profiler.reduce_samples.extend(samples);
            for r in records {
                profiler.add_run(r);
            }
            let live = profiler.profile();
            assert_eq!(live.map_local, sim.map_local, "{}", j.job.id);
            assert_eq!(live.map_remote, sim.map_remote);
            assert_eq!(live.map_shortest, sim.map_shortest);
            assert_eq!(live.map_spread, sim.map_spread);
            // Bytes are the live job's: the trace's times its byte scale.
            assert!(close(live.partition_bytes, sim.partition_bytes * bs));
            assert!(close(live.shuffle_bandwidth, sim.shuffle_bandwidth * bs));
            // The same reduce time for the same share of the job's output, the same spread.
            for d in [1e3, 1e6, 1e9] {
                let (l, s) = (live.reduce_time.at(d * bs), sim.reduce_time.at(d));
                match s > 0.0 {
                    true => assert!(close(l, s), "{}: f({d}) live {l} sim {s}", j.job.id),
                    false => assert!(l < 1e-6, "{}: f({d}) live {l} sim 0", j.job.id),
                }
            }
            if sim.reduce_time.a > 0.0 {
                assert!((live.reduce_time.spread - sim.reduce_time.spread).abs() < 1e-9);
            }
            assert_eq!(live.previous_runs.len(), sim.previous_runs.len());
            for (l, s) in live.previous_runs.iter().zip(&sim.previous_runs) {
                assert_eq!(l.k, s.k);
                // Kept whole without moving eq. 13's d by more than 0.05 % (or as the trace
                // has it, when it has fewer bytes).
                let want = s.max_reduce_input * bs;
                assert!(
                    (l.max_reduce_input - want).abs() <= 0.5
                        && want >= s.max_reduce_input.min(WHOLE_BYTES) - 1e-6,
                    "{}: d_k {} live, {want} wanted",
                    j.job.id,
                    l.max_reduce_input
                );
            }
            with_reduces += usize::from(!sim.previous_runs.is_empty());
        }
        assert!(with_reduces > 0, "some jobs have reduces");
    }

    #[test]
    fn small_jobs_keep_their_bytes_whole_and_large_ones_shrink_with_the_clock() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 1.0 / 60.0;
        let (prepared, _) = jobs(&w, 50, x);
        let tiny = |j: &SharedJob| {
            j.job
                .profile
                .previous_runs
                .iter()
                .any(|r| r.max_reduce_input > 0.0 && r.max_reduce_input < 60.0)
        };
        // FB-2009's first jobs shuffle a few hundred bytes (job3: 1,320), the profile's
        // earlier run's largest reduce input tens of bytes: at 1/60 under one byte.
        let small = prepared
            .iter()
            .find(|j| tiny(j))
            .expect("a job of tiny reduces");
        assert_eq!(byte_scale(small, x), 1.0, "{}", small.job.id);
        let big = prepared.iter().find(|j| {
            j.job
                .truth
                .maps
                .iter()
                .all(|m| m.output_bytes as f64 * x > WHOLE_BYTES)
                && j.job.profile.partition_bytes * x > WHOLE_BYTES
                && j.job
                    .profile
                    .previous_runs
                    .iter()
                    .all(|r| r.max_reduce_input * x > WHOLE_BYTES)
        });
        let big = big.expect("a job of large bytes");
        assert_eq!(byte_scale(big, x), x, "{}", big.job.id);
        // The live job writes its maps' outputs at that scale.
        let live = live_job(small, byte_scale(small, x));
        let want: Vec<u64> = small
            .job
            .truth
            .maps
            .iter()
            .map(|m| m.output_bytes)
            .collect();
        assert_eq!(live.map_output_bytes, want);
    }

    #[test]
    fn every_trace_job_is_its_own_profile_kind() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let (prepared, _) = jobs(&w, 3, 0.1);
        let kinds: Vec<String> = prepared
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut live = live_job(j, 0.1);
                live.kind = Some(kind_name(i, &j.job.id));
                live.max_containers = Some(8);
                let job = live.to_job(PolicyKind::Dart, 1, 0.0);
                job.validate().unwrap();
                // Capped at the cluster's containers: its master tells its policy so.
                assert_eq!(job.max_containers, Some(8));
                job.params["kind"].clone()
            })
            .collect();
        assert_eq!(kinds, ["j0.job0", "j1.job1", "j2.job2"]);
        // Ids with other characters still make valid kinds.
        assert_eq!(kind_name(7, "job 7/x"), "j7.job_7_x");
    }

    #[test]
    fn a_swim_job_keeps_its_task_counts_and_takes_the_simulators_times_scaled() {
        let w = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let x = 0.25;
        let (scaled, unscaled) = jobs(&w, 5, x);
        assert_eq!(scaled.len(), 5);
        let first = unscaled[0].submit;
        for (s, u) in scaled.iter().zip(&unscaled) {
            let live = live_job(s, x);
            assert_eq!(live.id, u.id);
            assert_eq!(live.map_seconds.len(), u.maps() as usize);
            assert_eq!(live.reduce_seconds.len(), u.reduces() as usize);
            for (l, m) in live.map_seconds.iter().zip(&u.truth.maps) {
                assert!((l - m.duration * x).abs() < 1e-9, "{l} vs {}", m.duration);
            }
            let output: u64 = u.truth.maps.iter().map(|m| m.output_bytes).sum();
            for (r, (&l, &d)) in live
                .reduce_seconds
                .iter()
                .zip(&u.truth.reduce_inputs(output))
                .enumerate()
            {
                let want = u.truth.reduce_seconds(r as u32, d as f64) * x;
                assert!((l - want).abs() <= 1e-9 * want.max(1.0), "{l} vs {want}");
            }
            assert_eq!(
                live.map_input_bytes,
                u.truth
                    .maps
                    .iter()
                    .map(|m| m.input_bytes)
                    .collect::<Vec<_>>()
            );
            assert!((live.arrival - (u.submit - first) * x).abs() < 1e-9);
            assert!(live.deadline >= s.alone && live.deadline <= 2.0 * s.alone + 1e-9);
            // The job the rm takes: valid, one reduce at least.
            let job = LiveJob {
                kind: Some(kind_name(0, &live.id)),
                ..live.clone()
            }
            .to_job(PolicyKind::Dart, 1, 0.0);
            job.validate().unwrap();
            assert_eq!(job.reduces as usize, live.reduce_seconds.len().max(1));
        }
    }

    #[test]
    fn a_rumen_job_replays_its_recorded_map_times_scaled() {
        let w = trace("rumen/2jobs2min-rumen-jh.json");
        let x = 0.1;
        let (scaled, _) = jobs(&w, 1, x);
        let live = live_job(&scaled[0], x);
        let recorded: Vec<f64> = w.jobs[0]
            .map_tasks()
            .map(|t| t.duration_ms.unwrap().max(1) as f64 / 1000.0 * x)
            .collect();
        assert_eq!(live.map_seconds.len(), recorded.len());
        for (l, r) in live.map_seconds.iter().zip(&recorded) {
            assert!((l - r).abs() < 1e-9, "{l} vs {r}");
        }
    }
}
