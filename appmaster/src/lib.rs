//! yard-appmaster: the MapReduce application master's pure parts: Dart and its baseline task
//! policies as sans-IO state machines (`policy`), and the built-in applications with their
//! approximate answers (`apps`). No IO: this crate depends on nothing that could do any
//! (`tests/repo.rs` checks). The processes around it (master, task runner) are the
//! `yard-appmaster-live` crate beside it, in `appmaster/live/`.

pub mod apps;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod policy;
pub mod submission;
pub mod typing;
