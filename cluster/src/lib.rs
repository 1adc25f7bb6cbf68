//! yard-cluster: the resource manager's pure half, the cluster policies as sans-IO code. The
//! time is passed in, randomness comes from the caller's RNG; nothing here does IO, reads a
//! clock or needs an async runtime, so the rm (`yard-rm`, the daemon around it), the
//! simulator (`yard-sim`) and the master (`yard-appmaster`, for ARIA's model) run the same code.
//!
//! - `scheduler`: the state machine that places containers (YARN's asks, quotas, preemption);
//! - `policy`: FIFO, fair, EDF, MinEDF, MinEDF-WC, their quotas and reclamation;
//! - `queues`: capacity queues (YARN's CapacityScheduler, leaves of `root`), their checks;
//! - `aria`: ARIA's bounds model and minimum quota, for the rm and the master;
//! - `classifier`: the naive-Bayes overload classifier (seed 002);
//! - `batch` and `scans`: batch plans (Johnson, BalancedPools, seed 003) and shared scans
//!   (CIRCUMFLEX, seed 004), for `yard batch`, the simulator and the live master;
//! - `placement`: HDFS's replica rule, for `yard data put`;
//! - `app`: an application's lifecycle (YARN's states);
//! - `ids`: the keys they share.

pub mod app;
pub mod aria;
pub mod batch;
pub mod classifier;
pub mod ids;
pub mod placement;
pub mod policy;
pub mod queues;
pub mod scans;
pub mod scheduler;
