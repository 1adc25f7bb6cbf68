//! Job typing (seed 002, §4.1, eq. 1–2): a job is CPU-bound or IO-bound by the disk
//! throughput its probe task needs, against the node's disk rate (DiskIORate). The first map and
//! the first reduce of a job kind never seen are its probes; the verdict is stored with the kind
//! and read by every later run, and the rm's overload classifier uses it as a job feature.
//!
//! The paper types maps only [AMB]; yard types a reduce the same way over its shuffle input and
//! output, so the map and the reduce part of a job each have their own type (digest §1.4: "the
//! map part and the reduce part of a job have separate values").

use serde::{Deserialize, Serialize};

/// What a task's run time is bound by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Cpu,
    Io,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Cpu => "cpu",
            Bound::Io => "io",
        }
    }

    pub fn parse(s: &str) -> Option<Bound> {
        match s {
            "cpu" => Some(Bound::Cpu),
            "io" => Some(Bound::Io),
            _ => None,
        }
    }
}

/// What a probe task measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// MID: bytes the task read.
    pub input_bytes: f64,
    /// MOD = ρ·MID (eq. 1): bytes it wrote.
    pub output_bytes: f64,
    /// MTCT: its run time, seconds.
    pub seconds: f64,
}

impl Probe {
    /// q = (1 + ρ)·MID / MTCT (eq. 2) = (MID + MOD) / MTCT: the disk throughput the task
    /// needed, bytes per second. `None` for a probe that measured no time or a negative or
    /// non-finite quantity (nothing to type by).
    pub fn disk_demand(&self) -> Option<f64> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !(ok(self.input_bytes) && ok(self.output_bytes) && ok(self.seconds))
            || self.seconds == 0.0
        {
            return None;
        }
        Some((self.input_bytes + self.output_bytes) / self.seconds)
    }

    /// CPU-bound when q < DiskIORate, else IO-bound (eq. 2; q equal to the rate counts as IO,
    /// since the paper's test is "less than"). `None` when the probe or the rate measured
    /// nothing usable.
    pub fn bound(&self, disk_rate_bytes_per_s: f64) -> Option<Bound> {
        if !(disk_rate_bytes_per_s.is_finite() && disk_rate_bytes_per_s > 0.0) {
            return None;
        }
        let q = self.disk_demand()?;
        Some(if q < disk_rate_bytes_per_s {
            Bound::Cpu
        } else {
            Bound::Io
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    #[test]
    fn the_digests_worked_examples() {
        // Digest §2.1: (MID, MOD, MTCT) against a 50 MB/s disk.
        let cases = [
            (64.0, 32.0, 8.0, 12.0, Bound::Cpu),
            (64.0, 64.0, 2.0, 64.0, Bound::Io),
            (64.0, 61.0, 2.5, 50.0, Bound::Io),
        ];
        for (mid, mod_, mtct, q, bound) in cases {
            let p = Probe {
                input_bytes: mid * MB,
                output_bytes: mod_ * MB,
                seconds: mtct,
            };
            assert!((p.disk_demand().unwrap() - q * MB).abs() < 1e-6, "{p:?}");
            assert_eq!(p.bound(50.0 * MB), Some(bound), "{p:?}");
        }
    }

    #[test]
    fn a_probe_that_measured_nothing_types_nothing() {
        let p = |i, o, s| Probe {
            input_bytes: i,
            output_bytes: o,
            seconds: s,
        };
        assert_eq!(p(1.0, 1.0, 0.0).bound(1.0), None);
        assert_eq!(p(f64::NAN, 1.0, 1.0).bound(1.0), None);
        assert_eq!(p(-1.0, 1.0, 1.0).bound(1.0), None);
        assert_eq!(p(1.0, 1.0, 1.0).bound(0.0), None);
        assert_eq!(p(0.0, 0.0, 1.0).bound(1.0), Some(Bound::Cpu));
        assert_eq!(Bound::parse(Bound::Io.name()), Some(Bound::Io));
        assert_eq!(Bound::parse("disk"), None);
    }
}
