//! yard-nodemanager: the node manager — container launcher (processes, logs, stop, cgroup v2
//! limits where the host allows), load telemetry, and (with the rest of issue 6) the shuffle server.

pub mod daemon;
pub mod launcher;
pub mod telemetry;
