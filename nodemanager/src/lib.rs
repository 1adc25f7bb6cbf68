//! yard-nodemanager: the node manager — container launcher (processes, logs, stop, cgroup v2
//! limits where the host allows), and, with the rest of issue 6, telemetry and the shuffle server.

pub mod launcher;
