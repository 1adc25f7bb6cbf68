//! The nodemanager's Prometheus metrics (`GET /metrics`, text format 0.0.4): heartbeats sent and
//! failed, containers launched, refused and ended (by how), containers running, and the load it
//! last sampled for its heartbeat (the host's CPU, load averages, memory, disk and network
//! rates, its disk rate, and its own process tree's load).
//!
//! One [`Registry`] per nodemanager (tests run several in a process). Labels are bounded: how a
//! container ended, why a start was refused. Never a container or application id: the
//! per-container load stays in the heartbeat (the rm's node routes show it).

use prometheus::{
    Encoder, Gauge, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};
use yard_wire::protocol::{ContainerEnd, Resource};
use yard_wire::telemetry::NodeTelemetry;

/// The content type of the Prometheus text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Why a container start was refused (the `reason` label).
pub const REFUSALS: [&str; 5] = ["unregistered", "token", "conflict", "environment", "launch"];

/// Every metric a nodemanager exports.
pub struct NmMetrics {
    registry: Registry,
    pub heartbeats: IntCounter,
    pub heartbeat_failures: IntCounter,
    pub registrations: IntCounter,
    pub launched: IntCounter,
    refused: IntCounterVec,
    ended: IntCounterVec,
    pub running: IntGauge,
    capacity_memory: IntGauge,
    capacity_vcores: IntGauge,
    cpu: Gauge,
    cores: IntGauge,
    load1: Gauge,
    load5: Gauge,
    load15: Gauge,
    memory_total: Gauge,
    memory_used: Gauge,
    swap_used: Gauge,
    disk_read: Gauge,
    disk_write: Gauge,
    net_rx: Gauge,
    net_tx: Gauge,
    disk_io_rate: Gauge,
    own_cpu: Gauge,
    own_rss: Gauge,
    own_read: Gauge,
    own_write: Gauge,
    own_processes: IntGauge,
}

impl NmMetrics {
    /// The metrics of a node offering `capability`.
    pub fn new(capability: Resource) -> NmMetrics {
        let registry = Registry::new();
        let reg = |c: Box<dyn prometheus::core::Collector>| {
            registry
                .register(c)
                .expect("metric names are unique and valid");
        };
        let counter = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).expect("a valid metric");
            reg(Box::new(c.clone()));
            c
        };
        let counters = |name: &str, help: &str, label: &str, values: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), &[label]).expect("a valid metric");
            reg(Box::new(c.clone()));
            // Every label value known in advance starts at 0: no series appears late.
            for v in values {
                c.with_label_values(&[v]);
            }
            c
        };
        let gauge = |name: &str, help: &str| {
            let g = Gauge::new(name, help).expect("a valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let int_gauge = |name: &str, help: &str| {
            let g = IntGauge::new(name, help).expect("a valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let m = NmMetrics {
            heartbeats: counter(
                "yard_nodemanager_heartbeats_total",
                "Heartbeats the rm answered",
            ),
            heartbeat_failures: counter(
                "yard_nodemanager_heartbeat_failures_total",
                "Heartbeats that failed: the rm unreachable, or refusing them",
            ),
            registrations: counter(
                "yard_nodemanager_registrations_total",
                "Times the node registered with the rm (again after an rm restart)",
            ),
            launched: counter(
                "yard_nodemanager_containers_launched_total",
                "Containers whose process the node started",
            ),
            refused: counters(
                "yard_nodemanager_container_start_refusals_total",
                "Container starts the node refused or could not carry out, by reason",
                "reason",
                &REFUSALS,
            ),
            ended: counters(
                "yard_nodemanager_containers_ended_total",
                "Containers that ended, by how (what the node reports to the rm)",
                "end",
                &ContainerEnd::ALL.map(ContainerEnd::label),
            ),
            running: int_gauge(
                "yard_nodemanager_containers",
                "Containers running on the node",
            ),
            capacity_memory: int_gauge(
                "yard_nodemanager_capacity_memory_bytes",
                "Memory the node offers containers",
            ),
            capacity_vcores: int_gauge(
                "yard_nodemanager_capacity_vcores",
                "Virtual cores the node offers containers",
            ),
            cpu: gauge(
                "yard_nodemanager_cpu_ratio",
                "The host's CPU in use across all cores, 0 to 1, at the last sample",
            ),
            cores: int_gauge("yard_nodemanager_cores", "The host's logical CPUs"),
            load1: gauge(
                "yard_nodemanager_load1",
                "The host's one-minute load average",
            ),
            load5: gauge(
                "yard_nodemanager_load5",
                "The host's five-minute load average",
            ),
            load15: gauge(
                "yard_nodemanager_load15",
                "The host's fifteen-minute load average",
            ),
            memory_total: gauge("yard_nodemanager_memory_total_bytes", "The host's memory"),
            memory_used: gauge(
                "yard_nodemanager_memory_used_bytes",
                "The host's memory in use",
            ),
            swap_used: gauge("yard_nodemanager_swap_used_bytes", "The host's swap in use"),
            disk_read: gauge(
                "yard_nodemanager_disk_read_bytes_per_second",
                "The host's disk reads between the last two samples",
            ),
            disk_write: gauge(
                "yard_nodemanager_disk_write_bytes_per_second",
                "The host's disk writes between the last two samples",
            ),
            net_rx: gauge(
                "yard_nodemanager_network_receive_bytes_per_second",
                "The host's network bytes received between the last two samples",
            ),
            net_tx: gauge(
                "yard_nodemanager_network_transmit_bytes_per_second",
                "The host's network bytes sent between the last two samples",
            ),
            disk_io_rate: gauge(
                "yard_nodemanager_disk_io_rate_bytes_per_second",
                "The node's disk rate (measured at start or set by --disk-rate; 0: unknown)",
            ),
            own_cpu: gauge(
                "yard_nodemanager_own_cpu_ratio",
                "CPU of the nodemanager's own process tree (it, its containers and what they start), of one core: 2 is two cores busy",
            ),
            own_rss: gauge(
                "yard_nodemanager_own_resident_memory_bytes",
                "Resident memory of the nodemanager's own process tree",
            ),
            own_read: gauge(
                "yard_nodemanager_own_disk_read_bytes_per_second",
                "Disk reads the nodemanager's own process tree caused, between the last two samples",
            ),
            own_write: gauge(
                "yard_nodemanager_own_disk_write_bytes_per_second",
                "Disk writes the nodemanager's own process tree caused, between the last two samples",
            ),
            own_processes: int_gauge(
                "yard_nodemanager_own_processes",
                "Processes in the nodemanager's own process tree",
            ),
            registry,
        };
        m.capacity_memory
            .set(i64::try_from(capability.memory_mb.saturating_mul(1 << 20)).unwrap_or(i64::MAX));
        m.capacity_vcores.set(i64::from(capability.vcores));
        m
    }

    /// Counts a container's end (once: when the node records it for the rm).
    pub fn ended(&self, end: ContainerEnd) {
        self.ended.with_label_values(&[end.label()]).inc();
    }

    /// Counts a refused start; `reason` is one of [`REFUSALS`].
    pub fn refused(&self, reason: &'static str) {
        debug_assert!(REFUSALS.contains(&reason));
        self.refused.with_label_values(&[reason]).inc();
    }

    /// The load the node just sampled for its heartbeat.
    pub fn sampled(&self, t: &NodeTelemetry) {
        self.cpu.set(t.cpu_percent / 100.0);
        self.cores.set(i64::from(t.cores));
        self.load1.set(t.load_1m);
        self.load5.set(t.load_5m);
        self.load15.set(t.load_15m);
        self.memory_total.set(t.memory_total_bytes as f64);
        self.memory_used.set(t.memory_used_bytes as f64);
        self.swap_used.set(t.swap_used_bytes as f64);
        self.disk_read.set(t.disk_read_bytes_per_s);
        self.disk_write.set(t.disk_write_bytes_per_s);
        self.net_rx.set(t.net_rx_bytes_per_s);
        self.net_tx.set(t.net_tx_bytes_per_s);
        self.disk_io_rate.set(t.disk_io_rate_bytes_per_s);
        self.own_cpu.set(t.own.cpu_percent / 100.0);
        self.own_rss.set(t.own.rss_bytes as f64);
        self.own_read.set(t.own.read_bytes_per_s);
        self.own_write.set(t.own.write_bytes_per_s);
        self.own_processes.set(i64::from(t.own.processes));
    }

    /// Every metric in the Prometheus text format, as they stand.
    pub fn encode(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "cannot encode the metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_yard_nodemanager_and_a_sample_sets_the_gauges() {
        let m = NmMetrics::new(Resource {
            memory_mb: 2048,
            vcores: 2,
        });
        let mut t = NodeTelemetry {
            cpu_percent: 50.0,
            load_1m: 1.5,
            cores: 4,
            memory_used_bytes: 7,
            ..NodeTelemetry::default()
        };
        t.own.cpu_percent = 150.0;
        m.sampled(&t);
        m.ended(ContainerEnd::Killed);
        let text = m.encode();
        for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
            assert!(line.starts_with("# TYPE yard_nodemanager_"), "{line}");
        }
        for want in [
            "yard_nodemanager_cpu_ratio 0.5\n",
            "yard_nodemanager_own_cpu_ratio 1.5\n",
            "yard_nodemanager_load1 1.5\n",
            "yard_nodemanager_memory_used_bytes 7\n",
            "yard_nodemanager_capacity_memory_bytes 2147483648\n",
            "yard_nodemanager_containers_ended_total{end=\"killed\"} 1\n",
            "yard_nodemanager_containers_ended_total{end=\"exited\"} 0\n",
            "yard_nodemanager_container_start_refusals_total{reason=\"token\"} 0\n",
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
    }
}
