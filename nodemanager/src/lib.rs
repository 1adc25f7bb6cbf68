//! yard-nodemanager: the node manager — container launcher (processes, logs, stop, cgroup v2
//! limits where the host allows), load telemetry, and its data directory: dataset blocks and
//! the shuffle server.

pub mod daemon;
pub mod data;
pub mod launcher;
pub mod telemetry;
