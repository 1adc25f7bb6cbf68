//! yard-sim: the discrete-event simulator that replays a workload on a virtual clock through the same
//! policy code the daemons run. Empty until the simulator lands (issue 5).
