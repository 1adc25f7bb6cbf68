//! yard-nodemanager: the node manager — container launcher (processes, logs, stop, cgroup v2
//! limits where the host allows), load telemetry (the host's, its own process tree's and each
//! container's, with the disk rate measured at start), its data directory (dataset blocks
//! and the shuffle server), and containers' logs (served, and aggregated to the rm).

pub mod daemon;
pub mod data;
pub mod disk;
pub mod launcher;
pub mod logs;
pub mod metrics;
pub mod procfs;
pub mod telemetry;
