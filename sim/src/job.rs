//! A job as the simulator runs it: what the policy is told (`JobSpec`, with a profile from
//! sample runs) and the truth it is not (every task's real duration, the shuffle's real
//! bandwidth, reduce skew and noise). Workload builders make these; the engine and the k_max
//! oracle consume them.

use yard_appmaster::policy::{PowerLaw, Profile, Seconds};

/// One map task's truth.
#[derive(Debug, Clone, PartialEq)]
pub struct MapTruth {
    /// Seconds the map takes node-local on a normal node (rack-local and remote runs, and
    /// slow nodes, scale it: see `ClusterConfig`).
    pub duration: Seconds,
    pub input_bytes: u64,
    /// Bytes of output, spread over the reduces by `JobTruth::partition_shares`.
    pub output_bytes: u64,
    /// Nodes (indices into the cluster) holding the input split's replicas.
    pub replicas: Vec<u32>,
}

/// What the simulator knows about a job and the policy does not.
#[derive(Debug, Clone, PartialEq)]
pub struct JobTruth {
    pub maps: Vec<MapTruth>,
    /// Each reduce's share of every map's output; sums to 1 (uniform without skew, Zipf with).
    pub partition_shares: Vec<f64>,
    /// `f(d) = a·d^b` with each reduce's multiplicative noise `e_r` (mean 1, Dart eq. 9).
    pub reduce_time: PowerLaw,
    pub reduce_noise: Vec<f64>,
    /// The job's shuffle bottleneck, bytes per second.
    pub shuffle_bandwidth: f64,
}

impl JobTruth {
    pub fn reduces(&self) -> u32 {
        self.partition_shares.len() as u32
    }

    /// The true time of reduce `r` on `bytes` of input. (The oracle's `reduce_times` computes
    /// the same product, reusing `f(d)` across reduces of equal input: change both together.)
    pub fn reduce_seconds(&self, r: u32, bytes: f64) -> Seconds {
        self.reduce_time.at(bytes) * self.reduce_noise[r as usize]
    }
}

/// A job ready to simulate. Deadline and containers are set per experiment configuration
/// (C1–C3) from the job's MDT and MRA, so they are not here.
#[derive(Debug, Clone, PartialEq)]
pub struct SimJob {
    pub id: String,
    /// Seconds after the workload's start.
    pub submit: Seconds,
    pub truth: JobTruth,
    /// What the policy is told: measured on sample runs of the same job shape (Dart §5.1),
    /// never copied from `truth`.
    pub profile: Profile,
}

impl SimJob {
    pub fn maps(&self) -> u32 {
        self.truth.maps.len() as u32
    }

    pub fn reduces(&self) -> u32 {
        self.truth.reduces()
    }

    /// Map and reduce tasks: what the size bins count.
    pub fn tasks(&self) -> u64 {
        u64::from(self.maps()) + u64::from(self.reduces())
    }

    /// MRA (EVALUATION.md): containers enough that every task of a phase starts at once.
    pub fn mra(&self) -> u32 {
        self.maps().max(self.reduces()).max(1)
    }
}
