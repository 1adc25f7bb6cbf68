//! Workloads for the simulator: trace jobs and ARIA's synthetic Facebook mix turned into
//! [`SimJob`]s — every task's true duration, the shuffle's bandwidth, the reduces' input
//! shares and noise (the truth), and the profile the policy is told, measured on sample runs
//! of the same job shape as Dart's task sampler and job profiler do (Dart §5.1), never copied
//! from the truth.
//!
//! Where durations come from (EVALUATION.md "Workloads"):
//! - A trace that records task durations (Rumen, SLS) is replayed as recorded, and its reduce
//!   law `f(d) = a·d^b` is fitted so that the truth reproduces every recorded reduce.
//! - A trace without durations (SWIM) gets them from the log-normals ARIA fitted to Facebook's
//!   tasks (papers/aria.md §4): a per-job mean map time from LN(9.9511, 1.6764) ms and a
//!   per-job mean reduce time from LN(12.375, 1.6262) ms, tasks spread around those means.
//! - ARIA's synthetic Facebook workload (Table I) draws every task from those log-normals.
//!
//! Determinism: every function here draws from one ChaCha8Rng seeded with
//! [`WorkloadOptions::seed`], consumed job by job in workload order, so a seed means the same
//! jobs on every platform and the first `n` jobs of a trace do not depend on the ones after.

mod draw;
mod facebook;
mod profile;
mod reduce;
mod trace;

use rand::{RngExt, SeedableRng};
use serde::Serialize;
use yard_appmaster::policy::{Rng, Seconds};

use crate::config::{ClusterConfig, Model, ProfileSource, TaskLaw};
use crate::job::{JobTruth, MapTruth, SimJob};

pub use draw::zipf_shares;
pub use facebook::{FACEBOOK_TABLE_I, FacebookBin, facebook_synthetic};
pub use trace::{from_trace, trace_jobs};

use draw::MapLaw;

/// One mean-one noise factor of spread `sigma` from `law`, as the truth's reduces are drawn
/// (`LN(−σ²/2, σ)`, or the Pareto of the same mean and spread): for the floor estimate.
pub(crate) fn redraw_noise(rng: &mut Rng, sigma: f64, law: TaskLaw) -> f64 {
    draw::spread(rng, sigma, law)
}
use reduce::Reduces;

/// ARIA's fit to Facebook's map task durations (papers/aria.md §4): LN(μ, σ) in milliseconds
/// (KS 0.1056). `e^μ` ≈ 21 s is the median map.
pub(crate) const ARIA_MAP_MS: LogNormalMs = LogNormalMs {
    mu: 9.9511,
    sigma: 1.6764,
};

/// ARIA's fit to Facebook's reduce task durations: LN(12.375, 1.6262) ms (KS 0.0451);
/// `e^μ` ≈ 237 s is the median reduce.
pub(crate) const ARIA_REDUCE_MS: LogNormalMs = LogNormalMs {
    mu: 12.375,
    sigma: 1.6262,
};

/// A log-normal distribution of milliseconds: `ln X ~ N(mu, sigma²)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct LogNormalMs {
    pub mu: f64,
    pub sigma: f64,
}

impl LogNormalMs {
    /// The distribution's mean, in seconds: `e^(μ + σ²/2) / 1000`.
    pub fn mean_seconds(&self) -> Seconds {
        (self.mu + self.sigma * self.sigma / 2.0).exp() / 1000.0
    }
}

/// How workloads are built. `Default` gives the documented values; the cluster fields default
/// to [`ClusterConfig::default`] (the Dart paper's 64 nodes in racks of 16).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadOptions {
    /// The seed of every draw. Default 1.
    pub seed: u64,
    /// HDFS block size, bytes: a map reading a full block takes its job's map time; a partial
    /// tail block takes its fraction of it. Also the synthetic workload's input per map.
    /// Default 64 MiB (yard-workload's SWIM default, ARIA's and Dart's clusters).
    pub block_bytes: u64,
    /// Cluster nodes, to place replicas on. Default `ClusterConfig::default().nodes` (64).
    pub nodes: u32,
    /// Nodes per rack (racks are consecutive node ranges). Default 16.
    pub nodes_per_rack: u32,
    /// `T_r^a / T_l^a` the profile assumes: sample maps run node-local, remote ones take
    /// this much longer. Default `ClusterConfig::default().remote_factor` (1.5).
    pub remote_factor: f64,
    /// Replicas per input split where the trace does not say where they are (HDFS: 3).
    pub replication: u32,
    /// Zipf exponent of the reduces' partition shares (rank 1 the largest); 0 is no skew:
    /// uniform shares, or the recorded ones where the trace records reduce inputs. Default 0.
    pub skew: f64,
    /// σ of ln(task duration) around its job's mean, for maps drawn around a per-job mean
    /// (SWIM): duration = job mean × LN(−σ²/2, σ), so the job mean stays the mean. 0.3 puts
    /// 95 % of a job's full-block maps within about ×0.5–×1.7 of their median, a spread like
    /// the Rumen traces' (folder-input: 1.9–240 s over all jobs, much tighter within one).
    /// Default 0.3.
    pub task_spread: f64,
    /// A map's drawn duration scales with its input / block, but never below this fraction
    /// of a full block's: a 1-byte tail split still starts a task. Default 0.01.
    pub min_map_fraction: f64,
    /// σ of the reduces' mean-one noise `e_r ~ LN(−σ²/2, σ)` (Dart eq. 9) where it is drawn,
    /// and of the task sampler's measurements. Default 0.2.
    pub reduce_noise: f64,
    /// Range of the exponent `b` of `f(d) = a·d^b`, drawn uniformly per job where no trace
    /// records reduce times (SWIM, synthetic): sub- to super-linear, as Dart's Table 4 jobs
    /// are. Equal ends fix it. Default (0.7, 1.2).
    pub reduce_exponent: (f64, f64),
    /// Map output / map input where the trace does not record the shuffle (Rumen and SLS
    /// jobs without reduce inputs, the synthetic workload). Default 1.
    pub output_ratio: f64,
    /// Mean of a job's shuffle bottleneck, bytes per second: one GbE link's worth. Default
    /// 100 MB/s (10⁸).
    pub shuffle_bandwidth: f64,
    /// σ of the per-job bandwidth's mean-one log-normal factor. Default 0.3.
    pub bandwidth_spread: f64,
    /// Sample maps the profiler times for `T_l^a` (at least 1). Default 3.
    pub sample_maps: usize,
    /// Sample reduces the task sampler runs to fit `f(d)` (Dart §5.1). Default 5.
    pub sample_reduces: usize,
    /// Earlier runs of each (recurring) job the profile has seen, each with its own draws
    /// (Dart §5.1's job profiler, §5.3's `T_m^a` "initialized from ... the previous
    /// execution"): their maps' mean and spread, their reduces in the `f(d)` fit, their
    /// `(k_i, d_{k_i})`. 0: the sample runs alone. Default 1.
    pub earlier_runs: usize,
    /// σ of the profile's measurement noise on bandwidth and the previous run's largest
    /// reduce input. Default 0.1.
    pub profile_noise: f64,
    /// The law that spreads task durations around their job's mean (`task_spread`,
    /// `reduce_noise`): the estimator's log-normal, or a heavier-tailed Pareto of the same
    /// mean and spread. Default log-normal.
    pub durations: TaskLaw,
    /// What profiles are measured from: the truth's output and bandwidth with noise, or
    /// sample runs only. Default noisy-truth.
    pub profiles: ProfileSource,
    /// An oracle for research, never a model of a cluster: the profile's reduce law `f(d)` is
    /// the truth's (its median and the job's own noise spread) instead of the fit to sample
    /// and earlier reduces, every draw left where it was. It measures how much of the
    /// estimate's error at map close the fit's variance is. Default off.
    pub oracle_reduce_law: bool,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        let cluster = ClusterConfig::default();
        WorkloadOptions {
            seed: 1,
            block_bytes: yard_workload::DEFAULT_BLOCK_BYTES,
            nodes: cluster.nodes,
            nodes_per_rack: cluster.nodes_per_rack,
            remote_factor: cluster.remote_factor,
            replication: 3,
            skew: 0.0,
            task_spread: 0.3,
            min_map_fraction: 0.01,
            reduce_noise: 0.2,
            reduce_exponent: (0.7, 1.2),
            output_ratio: 1.0,
            shuffle_bandwidth: 1e8,
            bandwidth_spread: 0.3,
            sample_maps: 3,
            sample_reduces: 5,
            earlier_runs: 1,
            profile_noise: 0.1,
            durations: TaskLaw::default(),
            profiles: ProfileSource::default(),
            oracle_reduce_law: false,
        }
    }
}

impl WorkloadOptions {
    /// These options with the cluster's geometry and remote factor.
    pub fn with_cluster(self, cluster: &ClusterConfig) -> Self {
        WorkloadOptions {
            nodes: cluster.nodes,
            nodes_per_rack: cluster.nodes_per_rack,
            remote_factor: cluster.remote_factor,
            ..self
        }
    }

    /// These options with the model's duration law, profile source and earlier runs.
    pub fn with_model(self, model: &Model) -> Self {
        WorkloadOptions {
            durations: model.durations,
            profiles: model.profiles,
            earlier_runs: model.earlier_runs,
            oracle_reduce_law: model.oracle_reduce_law,
            ..self
        }
    }

    fn rng(&self) -> Rng {
        Rng::seed_from_u64(self.seed)
    }
}

/// A job as its source fixes it, before the simulator's per-task draws: what the trace
/// recorded, or what Table I and ARIA's distributions say.
struct Draft {
    id: String,
    submit: Seconds,
    maps: Vec<MapDraft>,
    /// How maps without a recorded duration are drawn (and how the profiler's samples are).
    map_law: MapLaw,
    reduces: Reduces,
}

struct MapDraft {
    /// Input split bytes; `None` when the trace does not record them.
    input: Option<u64>,
    /// The recorded duration, if any.
    duration: Option<Seconds>,
    /// Cluster nodes the trace says hold the split; empty to place replicas as HDFS would.
    replicas: Vec<u32>,
}

/// Rolls the dice a draft leaves open, in a fixed order: map durations, replicas, the reduce
/// truth, the bandwidth, then the seed of the profile's sample runs.
fn realise(draft: Draft, rng: &mut Rng, o: &WorkloadOptions) -> SimJob {
    let mut maps: Vec<MapTruth> = draft
        .maps
        .iter()
        .map(|m| MapTruth {
            duration: m
                .duration
                .unwrap_or_else(|| draft.map_law.draw(m.input, rng, o)),
            input_bytes: m.input.unwrap_or(0),
            output_bytes: 0,
            replicas: m.replicas.clone(),
        })
        .collect();
    for map in maps.iter_mut().filter(|m| m.replicas.is_empty()) {
        map.replicas = draw::hdfs_replicas(rng, o);
    }
    let reduce = reduce::truth(&draft.reduces, rng, o);
    let reduce_sigma = reduce.noise_sigma;
    // Map output goes with map input: a bigger split emits more (SWIM gives only the total).
    // Profiles measured on sample maps need maps whose output ratios differ, as real splits'
    // do, or a sample would measure the job's ratio exactly: then each split's ratio is
    // spread like its duration (σ `task_spread`), weights in 1/1024ths of a byte.
    let inputs: Vec<u64> = maps.iter().map(|m| m.input_bytes).collect();
    let weights: Vec<u64> = match o.profiles {
        ProfileSource::NoisyTruth => inputs,
        ProfileSource::Sampled => inputs
            .iter()
            .map(|&i| {
                let ratio = draw::spread(rng, o.task_spread, o.durations);
                (i.max(1) as f64 * ratio * 1024.0).round() as u64
            })
            .collect(),
    };
    for (map, bytes) in maps.iter_mut().zip(draw::split(reduce.shuffle, &weights)) {
        map.output_bytes = bytes;
    }
    let truth = JobTruth {
        maps,
        partition_shares: reduce.shares,
        reduce_time: reduce.law,
        reduce_noise: reduce.noise,
        reduce_noise_sigma: reduce_sigma,
        shuffle_bandwidth: o.shuffle_bandwidth * draw::noise(rng, o.bandwidth_spread),
    };
    // The profile's sample runs draw from a stream of their own, forked with one draw: how a
    // profile is measured (how many samples) never changes the jobs that come after.
    let mut samples = Rng::seed_from_u64(rng.random());
    let profile = profile::measure(&draft, &truth, reduce_sigma, &mut samples, o);
    SimJob {
        id: draft.id,
        submit: draft.submit,
        truth,
        profile,
    }
}
