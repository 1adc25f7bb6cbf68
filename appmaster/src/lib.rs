//! yard-appmaster: the MapReduce application master and task runner, with Dart and its baseline task
//! policies as sans-IO state machines. Empty until the Dart scheduler lands (issue 4).
