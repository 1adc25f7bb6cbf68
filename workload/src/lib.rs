//! yard-workload: the workload model (jobs, tasks, attempts, topology) and the readers that turn
//! every Hadoop/Facebook trace format — SWIM TSV, Rumen, SLS, SLS topology, Rumen topology,
//! SYNTH — into it.
//!
//! Readers are pure functions of the bytes (and, for SYNTH, a seed): no clock, no global state.
//! Bad input is a [`TraceError`], never a panic.

mod detect;
pub mod error;
mod json;
pub mod model;
mod rumen;
mod rumen_topology;
mod sls;
mod summary;
mod swim;
mod synth;
mod topology;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::Serialize;

pub use detect::detect;
pub use error::{Position, TraceError};
pub use model::*;
pub use summary::{BinCounts, EndCounts, SizeBin, Summary};

/// The trace formats yard reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// SWIM's job-level TSV (FB-2009, FB-2010): 6 to 9 columns (paths in 7–8), no tasks.
    Swim,
    /// Hadoop Rumen job histories: concatenated job objects with tasks and attempts.
    Rumen,
    /// Hadoop SLS traces: concatenated job objects with containers.
    Sls,
    /// Hadoop SLS topology files: concatenated `{"rack", "nodes"}` objects.
    Topology,
    /// Rumen topology files (`TopologyBuilder`'s `LoggedNetworkTopology`): a `{"name",
    /// "children"}` tree of racks and hosts.
    #[serde(rename = "rumen-topology")]
    RumenTopology,
    /// Hadoop SLS SYNTH generator configs, expanded with a seeded RNG.
    Synth,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Swim,
        Format::Rumen,
        Format::Sls,
        Format::Topology,
        Format::RumenTopology,
        Format::Synth,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Swim => "swim",
            Format::Rumen => "rumen",
            Format::Sls => "sls",
            Format::Topology => "topology",
            Format::RumenTopology => "rumen-topology",
            Format::Synth => "synth",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown trace format {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// How to read a trace. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOptions {
    /// Force a format instead of detecting it from the content.
    pub format: Option<Format>,
    /// SWIM: bytes of input per map task (one task per HDFS block). Default 64 MiB.
    pub block_bytes: u64,
    /// SWIM: shuffle + output bytes per reduce task (SWIM's `bytesPerReduce`). Default 64 MiB.
    pub reduce_bytes: u64,
    /// SYNTH: seed for the expansion; `None` uses the config's own `rand_seed`.
    pub seed: Option<u64>,
}

pub const DEFAULT_BLOCK_BYTES: u64 = 64 * 1024 * 1024;

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            block_bytes: DEFAULT_BLOCK_BYTES,
            reduce_bytes: DEFAULT_BLOCK_BYTES,
            seed: None,
        }
    }
}

/// Reads a trace file. `file` names the trace in errors.
pub fn read_file(path: &Path, options: &ReadOptions) -> Result<Workload, TraceError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        TraceError::new(&name, Position::File, format!("cannot read the file: {e}"))
    })?;
    parse(&name, &bytes, options)
}

/// Reads a trace held in memory. `file` names the trace in errors.
pub fn parse(file: &str, bytes: &[u8], options: &ReadOptions) -> Result<Workload, TraceError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(TraceError::new(
            file,
            Position::File,
            "the file is empty; expected a trace (SWIM TSV, Rumen, SLS, topology, Rumen topology or SYNTH JSON)",
        ));
    }
    if options.block_bytes == 0 || options.reduce_bytes == 0 {
        return Err(TraceError::new(
            file,
            Position::File,
            "block and reduce sizes must be at least 1 byte",
        ));
    }
    let format = match options.format {
        Some(f) => f,
        None => detect(file, bytes)?,
    };
    match format {
        Format::Swim => swim::parse(file, bytes, options),
        Format::Rumen => rumen::parse(file, bytes),
        Format::Sls => sls::parse(file, bytes),
        Format::Topology => topology::parse(file, bytes).map_err(|mut e| {
            // The SLS reader finds no `rack` in a Rumen tree: say what the file is instead.
            if detect(file, bytes) == Ok(Format::RumenTopology) {
                e.problem.push_str(
                    "; the file reads as a Rumen topology (`name`/`children`): pass --format \
                     rumen-topology, or no --format",
                );
            }
            e
        }),
        Format::RumenTopology => rumen_topology::parse(file, bytes),
        Format::Synth => synth::parse(file, bytes, options.seed),
    }
}
