//! yard-rm: the resource manager — cluster state, the sans-IO cluster policies (`scheduler`:
//! FIFO and fair now; EDF, MinEDF, MinEDF-WC and the node classifier later) and the REST server.
//! The daemon and its REST surface arrive with the rest of issue 6.

pub mod app;
pub mod client;
pub mod cluster;
pub mod credentials;
pub mod daemon;
pub mod journal;
pub mod placement;
pub mod rest;
pub mod scheduler;
pub mod store;
