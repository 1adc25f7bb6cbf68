//! yard-sim: the discrete-event simulator that replays a workload on a virtual clock through the
//! same task policies the live master runs, and the Dart paper's evaluation built on it.

mod config;
pub mod engine;
pub mod experiment;
pub mod explain;
pub mod floor;
pub mod job;
pub mod jobs_csv;
pub mod load;
pub mod makespan;
pub mod oracle;
pub mod overload;
pub mod plot;
pub mod report;
mod result;
pub mod rm_policies;
pub mod scans;
pub mod seeds;
pub mod shared;
pub mod table;
pub mod workloads;

// `config` and `result` are reached through these and `engine`'s re-exports only.
pub use config::{ClusterConfig, DeadlineConfig, Model, ProfileSource, ProgressModel, TaskLaw};
pub use engine::{Experiment, JobResult, Plan, mdt, simulate, trace};
pub use job::{JobTruth, MapTruth, SimJob};
