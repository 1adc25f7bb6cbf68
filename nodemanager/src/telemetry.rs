//! Samples the node's load with `sysinfo` for the heartbeat: rates are over the time since the
//! previous sample, which the caller measures and passes in.

use sysinfo::{Disks, Networks, Pid, ProcessesToUpdate, System};
use yard_wire::telemetry::{ContainerUsage, NodeTelemetry};

/// Keeps the previous readings that rates are measured against.
pub struct Sampler {
    system: System,
    disks: Disks,
    networks: Networks,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new()
    }
}

impl Sampler {
    pub fn new() -> Self {
        let mut system = System::new();
        system.refresh_cpu_usage();
        Sampler {
            system,
            disks: Disks::new_with_refreshed_list(),
            networks: Networks::new_with_refreshed_list(),
        }
    }

    /// The node's load since the last sample (`elapsed_s` ago), and each running container's
    /// CPU and memory, given as (container id, process id).
    pub fn sample(&mut self, elapsed_s: f64, containers: &[(String, u32)]) -> NodeTelemetry {
        let per_s = |bytes: u64| {
            if elapsed_s > 0.0 {
                bytes as f64 / elapsed_s
            } else {
                0.0
            }
        };
        self.system.refresh_cpu_usage();
        self.system.refresh_memory();
        let pids: Vec<Pid> = containers
            .iter()
            .map(|(_, pid)| Pid::from_u32(*pid))
            .collect();
        self.system
            .refresh_processes(ProcessesToUpdate::Some(&pids), true);
        self.disks.refresh(true);
        self.networks.refresh(true);
        let load = System::load_average();
        let (read, written) = self
            .disks
            .list()
            .iter()
            .map(|d| d.usage())
            .fold((0, 0), |(r, w), u| (r + u.read_bytes, w + u.written_bytes));
        let (rx, tx) = self
            .networks
            .values()
            .fold((0, 0), |(r, t), n| (r + n.received(), t + n.transmitted()));
        NodeTelemetry {
            cpu_percent: f64::from(self.system.global_cpu_usage()),
            load_1m: load.one,
            load_5m: load.five,
            load_15m: load.fifteen,
            memory_total_bytes: self.system.total_memory(),
            memory_used_bytes: self.system.used_memory(),
            disk_read_bytes_per_s: per_s(read),
            disk_write_bytes_per_s: per_s(written),
            net_rx_bytes_per_s: per_s(rx),
            net_tx_bytes_per_s: per_s(tx),
            containers: containers
                .iter()
                .filter_map(|(id, pid)| {
                    let p = self.system.process(Pid::from_u32(*pid))?;
                    Some(ContainerUsage {
                        container_id: id.clone(),
                        cpu_percent: f64::from(p.cpu_usage()),
                        rss_bytes: p.memory(),
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_describes_this_node_and_a_running_process() {
        let mut s = Sampler::new();
        let me = std::process::id();
        let t = s.sample(
            1.0,
            &[("c_self".into(), me), ("c_gone".into(), u32::MAX - 1)],
        );
        assert!(
            t.memory_total_bytes > 0 && t.memory_used_bytes <= t.memory_total_bytes,
            "{t:?}"
        );
        assert!((0.0..=100.0).contains(&t.cpu_percent), "{t:?}");
        assert!(t.load_1m >= 0.0 && t.disk_read_bytes_per_s >= 0.0 && t.net_rx_bytes_per_s >= 0.0);
        // Only the process that exists is reported, with its resident memory.
        assert_eq!(t.containers.len(), 1, "{:?}", t.containers);
        assert_eq!(t.containers[0].container_id, "c_self");
        assert!(t.containers[0].rss_bytes > 0);
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains("\"cpuPercent\"") && json.contains("\"rssBytes\""),
            "{json}"
        );
    }
}
