//! The node's disk rate — the paper's DiskIORate (seed 002 eq. 2), against which a job's probe
//! task's disk demand makes the job IO-bound or CPU-bound.
//!
//! Measured once, when the nodemanager starts, before it registers (so every container it
//! starts is told the rate, as `YARD_DISK_RATE_BYTES_PER_S`): a short sequential write and
//! read of a file in its work directory, [`PROBE_FILE`].
//!
//! - **Write**: up to [`PROBE_BYTES`] (64 MiB) of incompressible bytes in 4 MiB chunks, each
//!   followed by `fdatasync`, so the time is the disk's and not the page cache's; it stops
//!   early after [`PHASE_BUDGET`] (0.4 s), so a slow disk costs no more than that.
//! - **Read**: the file is dropped from the page cache (`posix_fadvise(DONTNEED)`, Linux; the
//!   pages are clean after the syncs, so the kernel can drop them), then read back in the same
//!   chunks, again for at most [`PHASE_BUDGET`]. Where the hint is not available (or ignored,
//!   as on tmpfs) the read may come from memory and look faster than the disk.
//! - **The rate** is the slower of the two, bytes per second: a task reading and writing moves
//!   at most that many bytes a second, and a read served from the cache cannot inflate it.
//!
//! The file is removed afterwards. If the probe fails (a full or read-only disk) the rate is
//! unknown (0): the nodemanager logs a warning saying to set it with `--disk-rate`, and
//! containers are not given the variable. An operator who knows the disk, or who runs several
//! nodemanagers on one host (which would each measure the same disk), sets the rate instead
//! (`yard nm --disk-rate 200MB/s`, [`parse_rate`]) and no probe runs.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The probe's file in the nodemanager's work directory (one name, so a probe interrupted by
/// a crash leaves nothing behind after the next start).
pub const PROBE_FILE: &str = ".yard-disk-probe";
/// The most the probe writes, and reads back.
pub const PROBE_BYTES: u64 = 64 << 20;
const CHUNK: usize = 4 << 20;
/// How long each phase may take before the probe stops with what it has.
pub const PHASE_BUDGET: Duration = Duration::from_millis(400);

/// What the probe measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskProbe {
    pub written_bytes: u64,
    pub write_bytes_per_s: f64,
    pub read_bytes: u64,
    pub read_bytes_per_s: f64,
}

impl DiskProbe {
    /// The node's disk rate: the slower of writing and reading.
    pub fn rate(&self) -> f64 {
        self.write_bytes_per_s.min(self.read_bytes_per_s)
    }
}

/// Bytes that no file system compresses away (xorshift).
fn incompressible(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn per_s(bytes: u64, took: Duration) -> f64 {
    // A phase takes some time: a clock that says 0 still gives a finite rate.
    bytes as f64 / took.as_secs_f64().max(1e-6)
}

/// Measures the disk under `dir` (blocking: at most about twice [`PHASE_BUDGET`] plus one
/// chunk's sync). The probe file is removed whatever happens.
pub fn probe(dir: &Path) -> std::io::Result<DiskProbe> {
    let path = dir.join(PROBE_FILE);
    let result = probe_at(&path);
    let _ = std::fs::remove_file(&path);
    result
}

fn probe_at(path: &Path) -> std::io::Result<DiskProbe> {
    let chunk = incompressible(CHUNK);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let start = Instant::now();
    let mut written = 0u64;
    while written < PROBE_BYTES {
        file.write_all(&chunk)?;
        file.sync_data()?;
        written += CHUNK as u64;
        if start.elapsed() >= PHASE_BUDGET {
            break;
        }
    }
    let write_took = start.elapsed();
    drop_cache(&file);
    file.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; CHUNK];
    let start = Instant::now();
    let mut read = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if start.elapsed() >= PHASE_BUDGET {
            break;
        }
    }
    let read_took = start.elapsed();
    Ok(DiskProbe {
        written_bytes: written,
        write_bytes_per_s: per_s(written, write_took),
        read_bytes: read,
        read_bytes_per_s: per_s(read, read_took),
    })
}

/// Asks the kernel to forget the file's cached pages, so the read back comes from the disk.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn drop_cache(file: &std::fs::File) {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    // A hint: if it fails, the read may come from the cache, and the write rate (the min)
    // still bounds the result.
    let _ = posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
}

/// Not available here: the read may come from the page cache; the rate is then the write's.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn drop_cache(_file: &std::fs::File) {}

/// The most a disk rate may be set to (the rm's limit on the reported rate).
pub const MAX_RATE: f64 = yard_wire::telemetry::MAX_RATE_BYTES_PER_S;

/// Parses a disk rate: bytes per second as a plain number (`200000000`), or a number with a
/// unit, decimal (`kB`, `MB`, `GB`, `TB`: powers of 1000) or binary (`KiB`, `MiB`, `GiB`,
/// `TiB`: powers of 1024), optionally followed by `/s` (`200MB/s`, `1.5 GiB/s`). Units are not
/// case-sensitive. The rate must be above 0 and at most 1 TB/s. The error says what to write.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let usage = || {
        format!(
            "`{text}` is not a disk rate: give bytes per second (200000000) or a number with a unit (200MB/s, 1.5GiB/s)"
        )
    };
    let s = text.trim();
    let s = s
        .strip_suffix("/s")
        .or_else(|| s.strip_suffix("/S"))
        .unwrap_or(s)
        .trim_end();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number.parse().map_err(|_| usage())?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(usage()),
    };
    let rate = number * scale;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("`{text}`: a disk rate must be above 0"));
    }
    if rate > MAX_RATE {
        return Err(format!("`{text}`: a disk rate must be at most 1TB/s"));
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_in_bytes_and_in_units() {
        for (text, rate) in [
            ("200000000", 2e8),
            ("200MB/s", 2e8),
            ("200 MB/s", 2e8),
            ("200mb", 2e8),
            ("1.5GB/s", 1.5e9),
            ("512KiB/s", 512.0 * 1024.0),
            ("2 GiB", 2.0 * (1u64 << 30) as f64),
            (" 64MiB/s ", 64.0 * (1u64 << 20) as f64),
            ("1TB/s", 1e12),
            ("100B/s", 100.0),
        ] {
            assert_eq!(parse_rate(text), Ok(rate), "{text}");
        }
        for bad in [
            "", "fast", "200XB/s", "-5MB/s", "0", "0MB/s", "2TB/s", "1e3", "MB/s", "1.2.3",
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        assert!(parse_rate("12XB/s").unwrap_err().contains("200MB/s"));
    }

    #[test]
    fn the_probe_measures_a_positive_rate_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(dir.path()).unwrap();
        assert!(p.written_bytes >= CHUNK as u64 && p.written_bytes <= PROBE_BYTES);
        assert!(p.read_bytes > 0 && p.read_bytes <= p.written_bytes, "{p:?}");
        assert!(p.rate() > 0.0 && p.rate().is_finite(), "{p:?}");
        assert_eq!(p.rate(), p.write_bytes_per_s.min(p.read_bytes_per_s));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A directory that is not there: an error, not a panic.
        assert!(probe(&dir.path().join("absent")).is_err());
    }

    #[test]
    fn the_probes_bytes_do_not_repeat() {
        let b = incompressible(CHUNK);
        assert_eq!(b.len(), CHUNK);
        assert_ne!(b[..4096], b[4096..8192]);
    }
}
