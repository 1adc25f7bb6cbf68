//! yard-appmaster: the MapReduce application master's pure parts: Dart and its baseline task
//! policies as sans-IO state machines (`policy`), and the built-in applications with their
//! approximate answers (`apps`). The process adapters (master, task runner) live in the `yard`
//! binary (`src/mapreduce/`), because the profile store they write depends on this crate.

pub mod apps;
pub mod policy;
