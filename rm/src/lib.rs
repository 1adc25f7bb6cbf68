//! yard-rm: the resource manager as a process — cluster state with tokens, the store, the REST
//! server, the daemon and the client — around the sans-IO cluster policies of `yard-cluster`
//! (the scheduler, the policies, ARIA's model, the overload classifier), which it drives with
//! the time and whose decisions it carries out.

mod book;
pub mod client;
pub mod cluster;
pub mod credentials;
pub mod daemon;
pub mod journal;
pub mod logs;
pub mod metrics;
pub mod profiles;
pub mod rest;
pub mod store;
pub mod ui;
