//! yard-rm: the resource manager — cluster state, the sans-IO cluster policies and the REST
//! server.
//!
//! The policies need no IO: `aria` (ARIA's bounds model and minimum quota), `policy` (FIFO,
//! fair, EDF, MinEDF, MinEDF-WC), `batch` and `scans` (seeds 003 and 004: batch makespan,
//! CIRCUMFLEX shared scans) and `scheduler` (the state machine that places containers by
//! them) build without the `daemon` feature (`default-features = false`), so a simulator can
//! drive the very code the rm runs without depending on an async runtime, HTTP or a database.
//! Everything else — cluster state with tokens, the store, the REST server, the daemon, the
//! client — is the `daemon` feature (on by default).

pub mod aria;
pub mod batch;
pub mod overload;
pub mod policy;
pub mod scans;
pub mod scheduler;

pub mod app;
pub mod placement;

#[cfg(feature = "daemon")]
pub mod book;
#[cfg(feature = "daemon")]
pub mod client;
#[cfg(feature = "daemon")]
pub mod cluster;
#[cfg(feature = "daemon")]
pub mod credentials;
#[cfg(feature = "daemon")]
pub mod daemon;
#[cfg(feature = "daemon")]
pub mod journal;
#[cfg(feature = "daemon")]
pub mod metrics;
#[cfg(feature = "daemon")]
pub mod profiles;
#[cfg(feature = "daemon")]
pub mod rest;
#[cfg(feature = "daemon")]
pub mod store;
#[cfg(feature = "daemon")]
pub mod ui;
