//! yard-nodemanager: the node manager — container launcher, telemetry sampler (sysinfo) and shuffle server.
//! Empty until the live cluster lands (issue 6).
