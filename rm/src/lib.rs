//! yard-rm: the resource manager — cluster state, the sans-IO cluster policies (FIFO, fair, EDF, MinEDF,
//! MinEDF-WC, the node classifier) and the REST server. Empty until the live cluster lands (issue 6).
