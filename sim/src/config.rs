//! Experiment settings: the cluster model and the deadline configurations of the Dart paper.

use serde::Serialize;

/// The simulated cluster (EVALUATION.md "Cluster model"; defaults are the Dart paper's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterConfig {
    pub nodes: u32,
    pub containers_per_node: u32,
    pub nodes_per_rack: u32,
    /// A rack-local map takes this many times its node-local duration.
    pub rack_local_factor: f64,
    /// A remote (off-rack) map takes this many times its node-local duration.
    pub remote_factor: f64,
    /// Slow nodes (stragglers, Dart §6.5: 8 of 64 VMs loaded with CPU and IO hogs).
    pub slow_nodes: u32,
    /// How much slower a task runs on a slow node.
    pub slowdown: f64,
    /// Probability that a task attempt fails (Dart §6.6), at a uniform point of its run.
    pub failure_rate: f64,
    /// Heartbeat: progress reports, container grants and policy ticks, seconds.
    pub heartbeat: f64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 64,
            containers_per_node: 2,
            nodes_per_rack: 16,
            rack_local_factor: 1.2,
            remote_factor: 1.5,
            slow_nodes: 0,
            slowdown: 4.0,
            failure_rate: 0.0,
            heartbeat: 1.0,
        }
    }
}

/// One of the Dart paper's deadline configurations (Table 2): containers δ·MRA, deadline μ·MDT.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeadlineConfig {
    pub name: &'static str,
    /// δ: containers granted / MRA.
    pub delta: f64,
    /// μ: deadline / MDT.
    pub mu: f64,
}

impl DeadlineConfig {
    /// C1: all the containers, a deadline too tight to read all input.
    pub const C1: DeadlineConfig = DeadlineConfig {
        name: "C1",
        delta: 1.0,
        mu: 0.95,
    };
    /// C2: half the containers, a loose deadline.
    pub const C2: DeadlineConfig = DeadlineConfig {
        name: "C2",
        delta: 0.5,
        mu: 1.6,
    };
    /// C3: the ideal: all the containers, deadline = MDT.
    pub const C3: DeadlineConfig = DeadlineConfig {
        name: "C3",
        delta: 1.0,
        mu: 1.0,
    };
    pub const ALL: [DeadlineConfig; 3] = [Self::C1, Self::C2, Self::C3];

    pub fn by_name(name: &str) -> Option<DeadlineConfig> {
        Self::ALL
            .into_iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Containers for a job with this MRA: `⌈δ·MRA⌉`, at least 1.
    pub fn containers(&self, mra: u32) -> u32 {
        ((self.delta * f64::from(mra)).ceil() as u32).max(1)
    }
}
