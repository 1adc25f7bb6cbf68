//! What a nodemanager reports about its node's load in every heartbeat (the classifier of
//! Visalakshi & Karthik reads these): the host's CPU, load average, memory, disk and network
//! rates and its disk's speed; the load of the nodemanager's own process tree (several
//! nodemanagers on one host share its CPU and disks, so the overload rule may read either);
//! and each container's CPU, memory and disk IO over its process tree.
//!
//! Every number has a documented range ([`NodeTelemetry::check`], a 400 naming the field at
//! the rm); the nodemanager keeps its samples inside it ([`NodeTelemetry::clamped`]), so a
//! strange reading on one host never costs the node its heartbeat. Fields added after the
//! first version default when absent, so an older nodemanager's heartbeat still parses.

use serde::{Deserialize, Serialize};

use crate::limits::{self, FieldError};

/// The most logical CPUs a host may report (the most vcores a node may offer).
pub const MAX_CORES: u32 = limits::NODE_MAX_VCORES;
/// The highest load average accepted: far above any real run queue.
pub const MAX_LOAD: f64 = 1e6;
/// The fastest disk or network rate accepted, bytes per second (1 TB/s).
pub const MAX_RATE_BYTES_PER_S: f64 = 1e12;
/// The most physical memory (host or resident) accepted: 1 PiB.
pub const MAX_MEMORY_BYTES: u64 = 1 << 50;
/// The most virtual memory a process tree may map: 1 EiB (a 64-bit process may reserve
/// hundreds of TiB it never touches).
pub const MAX_VIRTUAL_BYTES: u64 = 1 << 60;
/// The most processes in one tree (Linux's largest `pid_max`).
pub const MAX_PROCESSES: u32 = 1 << 22;
/// The most CPU a process tree may use, in percent of one core.
pub const MAX_TREE_CPU_PERCENT: f64 = 100.0 * MAX_CORES as f64;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeTelemetry {
    /// CPU in use across all cores, 0–100.
    pub cpu_percent: f64,
    pub load_1m: f64,
    pub load_5m: f64,
    pub load_15m: f64,
    pub memory_total_bytes: u64,
    pub memory_used_bytes: u64,
    /// Since the previous sample.
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    pub net_rx_bytes_per_s: f64,
    pub net_tx_bytes_per_s: f64,
    pub containers: Vec<ContainerUsage>,
    /// Logical CPUs of the host (0: not reported, an older nodemanager).
    #[serde(default)]
    pub cores: u32,
    /// Swap in use (with `memory_used_bytes`, YARN's node virtual memory).
    #[serde(default)]
    pub swap_used_bytes: u64,
    /// The node's disk rate, bytes per second: the paper's DiskIORate (seed 002 eq. 2), which
    /// a task's disk demand is compared with to call its job IO-bound. Measured by the
    /// nodemanager at start, or set by its operator (`yard nm --disk-rate`); 0 when unknown.
    #[serde(default)]
    pub disk_io_rate_bytes_per_s: f64,
    /// The nodemanager's own process tree: itself, its containers and everything they start.
    #[serde(default)]
    pub own: ProcessTreeUsage,
}

/// The load of one process tree, since the previous sample.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessTreeUsage {
    /// Of one core: 200 means two cores busy.
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    /// Bytes the tree's processes made the disks read and write (Linux's `/proc/<pid>/io`
    /// `read_bytes`, `write_bytes`); 0 where the system does not say.
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    pub processes: u32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerUsage {
    pub container_id: String,
    /// Of one core: 200 means two cores busy. Over the container's process tree.
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    /// Disk bytes read and written per second by the container's process tree.
    #[serde(default)]
    pub read_bytes_per_s: f64,
    #[serde(default)]
    pub write_bytes_per_s: f64,
    /// Virtual memory mapped by the container's process tree.
    #[serde(default)]
    pub virtual_bytes: u64,
}

fn field_error(field: String, problem: String) -> FieldError {
    FieldError { field, problem }
}

/// `value` is a finite number in `0..=max`.
fn check_f64(field: &str, name: &str, value: f64, max: f64) -> Result<(), FieldError> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        return Ok(());
    }
    Err(field_error(
        format!("{field}.{name}"),
        format!("{value} is outside 0..={max}"),
    ))
}

fn check_u64(field: &str, name: &str, value: u64, max: u64) -> Result<(), FieldError> {
    if value <= max {
        return Ok(());
    }
    Err(field_error(
        format!("{field}.{name}"),
        format!("{value} is outside 0..={max}"),
    ))
}

/// A finite value clamped into `0..=max`; NaN becomes 0.
fn clamp_f64(value: f64, max: f64) -> f64 {
    if value.is_nan() {
        0.0
    } else {
        value.clamp(0.0, max)
    }
}

impl NodeTelemetry {
    /// Every number in its documented range, the container ids plain names, the list no
    /// longer than [`limits::MAX_LIST`]; `field` prefixes the field an error names.
    pub fn check(&self, field: &str) -> Result<(), FieldError> {
        check_f64(field, "cpuPercent", self.cpu_percent, 100.0)?;
        check_f64(field, "load1m", self.load_1m, MAX_LOAD)?;
        check_f64(field, "load5m", self.load_5m, MAX_LOAD)?;
        check_f64(field, "load15m", self.load_15m, MAX_LOAD)?;
        check_u64(
            field,
            "memoryTotalBytes",
            self.memory_total_bytes,
            MAX_MEMORY_BYTES,
        )?;
        check_u64(
            field,
            "memoryUsedBytes",
            self.memory_used_bytes,
            self.memory_total_bytes,
        )?;
        check_u64(
            field,
            "swapUsedBytes",
            self.swap_used_bytes,
            MAX_MEMORY_BYTES,
        )?;
        for (name, v) in [
            ("diskReadBytesPerS", self.disk_read_bytes_per_s),
            ("diskWriteBytesPerS", self.disk_write_bytes_per_s),
            ("netRxBytesPerS", self.net_rx_bytes_per_s),
            ("netTxBytesPerS", self.net_tx_bytes_per_s),
            ("diskIoRateBytesPerS", self.disk_io_rate_bytes_per_s),
        ] {
            check_f64(field, name, v, MAX_RATE_BYTES_PER_S)?;
        }
        check_u64(field, "cores", u64::from(self.cores), u64::from(MAX_CORES))?;
        self.own.check(&format!("{field}.own"))?;
        limits::check_len(&format!("{field}.containers"), self.containers.len())?;
        for (i, c) in self.containers.iter().enumerate() {
            c.check(&format!("{field}.containers[{i}]"))?;
        }
        Ok(())
    }

    /// The sample with every number forced into the range [`NodeTelemetry::check`] accepts
    /// (NaN as 0): the nodemanager sends only what the rm takes.
    pub fn clamped(mut self) -> NodeTelemetry {
        self.cpu_percent = clamp_f64(self.cpu_percent, 100.0);
        for v in [&mut self.load_1m, &mut self.load_5m, &mut self.load_15m] {
            *v = clamp_f64(*v, MAX_LOAD);
        }
        self.memory_total_bytes = self.memory_total_bytes.min(MAX_MEMORY_BYTES);
        self.memory_used_bytes = self.memory_used_bytes.min(self.memory_total_bytes);
        self.swap_used_bytes = self.swap_used_bytes.min(MAX_MEMORY_BYTES);
        for v in [
            &mut self.disk_read_bytes_per_s,
            &mut self.disk_write_bytes_per_s,
            &mut self.net_rx_bytes_per_s,
            &mut self.net_tx_bytes_per_s,
            &mut self.disk_io_rate_bytes_per_s,
        ] {
            *v = clamp_f64(*v, MAX_RATE_BYTES_PER_S);
        }
        self.cores = self.cores.min(MAX_CORES);
        self.own = self.own.clamped();
        self.containers.truncate(limits::MAX_LIST);
        self.containers = self
            .containers
            .into_iter()
            .map(ContainerUsage::clamped)
            .collect();
        self
    }
}

impl ProcessTreeUsage {
    pub fn check(&self, field: &str) -> Result<(), FieldError> {
        check_f64(field, "cpuPercent", self.cpu_percent, MAX_TREE_CPU_PERCENT)?;
        check_u64(field, "rssBytes", self.rss_bytes, MAX_MEMORY_BYTES)?;
        check_f64(
            field,
            "readBytesPerS",
            self.read_bytes_per_s,
            MAX_RATE_BYTES_PER_S,
        )?;
        check_f64(
            field,
            "writeBytesPerS",
            self.write_bytes_per_s,
            MAX_RATE_BYTES_PER_S,
        )?;
        check_u64(
            field,
            "processes",
            u64::from(self.processes),
            u64::from(MAX_PROCESSES),
        )
    }

    pub fn clamped(self) -> ProcessTreeUsage {
        ProcessTreeUsage {
            cpu_percent: clamp_f64(self.cpu_percent, MAX_TREE_CPU_PERCENT),
            rss_bytes: self.rss_bytes.min(MAX_MEMORY_BYTES),
            read_bytes_per_s: clamp_f64(self.read_bytes_per_s, MAX_RATE_BYTES_PER_S),
            write_bytes_per_s: clamp_f64(self.write_bytes_per_s, MAX_RATE_BYTES_PER_S),
            processes: self.processes.min(MAX_PROCESSES),
        }
    }
}

impl ContainerUsage {
    pub fn check(&self, field: &str) -> Result<(), FieldError> {
        limits::check_name(&format!("{field}.containerId"), &self.container_id)?;
        check_f64(field, "cpuPercent", self.cpu_percent, MAX_TREE_CPU_PERCENT)?;
        check_u64(field, "rssBytes", self.rss_bytes, MAX_MEMORY_BYTES)?;
        check_f64(
            field,
            "readBytesPerS",
            self.read_bytes_per_s,
            MAX_RATE_BYTES_PER_S,
        )?;
        check_f64(
            field,
            "writeBytesPerS",
            self.write_bytes_per_s,
            MAX_RATE_BYTES_PER_S,
        )?;
        check_u64(field, "virtualBytes", self.virtual_bytes, MAX_VIRTUAL_BYTES)
    }

    pub fn clamped(self) -> ContainerUsage {
        ContainerUsage {
            cpu_percent: clamp_f64(self.cpu_percent, MAX_TREE_CPU_PERCENT),
            rss_bytes: self.rss_bytes.min(MAX_MEMORY_BYTES),
            read_bytes_per_s: clamp_f64(self.read_bytes_per_s, MAX_RATE_BYTES_PER_S),
            write_bytes_per_s: clamp_f64(self.write_bytes_per_s, MAX_RATE_BYTES_PER_S),
            virtual_bytes: self.virtual_bytes.min(MAX_VIRTUAL_BYTES),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NodeTelemetry {
        NodeTelemetry {
            cpu_percent: 37.5,
            load_1m: 1.5,
            load_5m: 1.0,
            load_15m: 0.5,
            memory_total_bytes: 8 << 30,
            memory_used_bytes: 2 << 30,
            disk_read_bytes_per_s: 1e6,
            disk_write_bytes_per_s: 2e6,
            net_rx_bytes_per_s: 3e3,
            net_tx_bytes_per_s: 4e3,
            containers: vec![ContainerUsage {
                container_id: "container_e1_1_0001_01_000002".into(),
                cpu_percent: 150.0,
                rss_bytes: 100 << 20,
                read_bytes_per_s: 5e5,
                write_bytes_per_s: 6e5,
                virtual_bytes: 1 << 40,
            }],
            cores: 4,
            swap_used_bytes: 0,
            disk_io_rate_bytes_per_s: 2e8,
            own: ProcessTreeUsage {
                cpu_percent: 160.0,
                rss_bytes: 150 << 20,
                read_bytes_per_s: 5e5,
                write_bytes_per_s: 7e5,
                processes: 3,
            },
        }
    }

    #[test]
    fn a_sample_round_trips_in_camel_case() {
        let t = sample();
        let json = serde_json::to_value(&t).unwrap();
        for key in [
            "cpuPercent",
            "load1m",
            "diskIoRateBytesPerS",
            "swapUsedBytes",
            "cores",
        ] {
            assert!(json.get(key).is_some(), "{key} in {json}");
        }
        assert_eq!(json["own"]["writeBytesPerS"], 7e5);
        assert_eq!(json["containers"][0]["readBytesPerS"], 5e5);
        let back: NodeTelemetry = serde_json::from_value(json).unwrap();
        assert_eq!(back, t);
        assert!(t.check("telemetry").is_ok());
        assert_eq!(t.clone().clamped(), t, "a sound sample is unchanged");
    }

    #[test]
    fn an_older_nodemanagers_sample_still_parses() {
        let old = serde_json::json!({"cpuPercent": 5.0, "load1m": 0.1, "load5m": 0.1,
            "load15m": 0.1, "memoryTotalBytes": 10, "memoryUsedBytes": 1,
            "diskReadBytesPerS": 0.0, "diskWriteBytesPerS": 0.0, "netRxBytesPerS": 0.0,
            "netTxBytesPerS": 0.0,
            "containers": [{"containerId": "c1", "cpuPercent": 1.0, "rssBytes": 5}]});
        let t: NodeTelemetry = serde_json::from_value(old).unwrap();
        assert_eq!((t.cores, t.disk_io_rate_bytes_per_s), (0, 0.0));
        assert_eq!(t.own, ProcessTreeUsage::default());
        assert_eq!(t.containers[0].read_bytes_per_s, 0.0);
        assert!(t.check("telemetry").is_ok());
        // Unknown fields are still refused.
        let typo = serde_json::json!({"cpuPercent": 5.0, "load1m": 0.1, "load5m": 0.1,
            "load15m": 0.1, "memoryTotalBytes": 10, "memoryUsedBytes": 1,
            "diskReadBytesPerS": 0.0, "diskWriteBytesPerS": 0.0, "netRxBytesPerS": 0.0,
            "netTxBytesPerS": 0.0, "containers": [], "diskRate": 1});
        assert!(serde_json::from_value::<NodeTelemetry>(typo).is_err());
    }

    #[test]
    fn numbers_out_of_range_name_their_field() {
        type Spoil = fn(&mut NodeTelemetry);
        let cases: Vec<(Spoil, &str)> = vec![
            (|t| t.cpu_percent = -1.0, "telemetry.cpuPercent"),
            (|t| t.cpu_percent = 100.5, "telemetry.cpuPercent"),
            (|t| t.load_1m = f64::NAN, "telemetry.load1m"),
            (|t| t.load_15m = f64::INFINITY, "telemetry.load15m"),
            (
                |t| t.memory_used_bytes = t.memory_total_bytes + 1,
                "telemetry.memoryUsedBytes",
            ),
            (
                |t| t.memory_total_bytes = u64::MAX,
                "telemetry.memoryTotalBytes",
            ),
            (
                |t| t.disk_write_bytes_per_s = -0.5,
                "telemetry.diskWriteBytesPerS",
            ),
            (
                |t| t.disk_io_rate_bytes_per_s = 1e300,
                "telemetry.diskIoRateBytesPerS",
            ),
            (
                |t| t.net_rx_bytes_per_s = f64::NAN,
                "telemetry.netRxBytesPerS",
            ),
            (|t| t.cores = MAX_CORES + 1, "telemetry.cores"),
            (|t| t.own.cpu_percent = -3.0, "telemetry.own.cpuPercent"),
            (|t| t.own.processes = u32::MAX, "telemetry.own.processes"),
            (
                |t| t.own.read_bytes_per_s = f64::NEG_INFINITY,
                "telemetry.own.readBytesPerS",
            ),
            (
                |t| t.containers[0].write_bytes_per_s = -1.0,
                "telemetry.containers[0].writeBytesPerS",
            ),
            (
                |t| t.containers[0].container_id = "a b".into(),
                "telemetry.containers[0].containerId",
            ),
            (
                |t| t.containers[0].rss_bytes = u64::MAX,
                "telemetry.containers[0].rssBytes",
            ),
        ];
        for (spoil, field) in cases {
            let mut t = sample();
            spoil(&mut t);
            let e = t.check("telemetry").unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.to_string().contains("outside") || field.ends_with("containerId"));
            // What the nodemanager would send instead is accepted (its container ids come
            // from the rm's tokens: nothing to clamp there).
            if !field.ends_with("containerId") {
                t.clone()
                    .clamped()
                    .check("telemetry")
                    .unwrap_or_else(|e| panic!("clamped {field}: {e}"));
            }
        }
    }
}
