//! yard-appmaster: the MapReduce application master and task runner, with Dart and its baseline
//! task policies as sans-IO state machines (`policy`). The process adapters arrive with issue 7.

pub mod policy;
