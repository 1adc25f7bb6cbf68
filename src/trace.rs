//! `yard trace …`: reading trace files and reporting what they hold.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use yard_workload::{Format, ReadOptions, SizeBin, Summary};

#[derive(Subcommand)]
pub(crate) enum TraceCommand {
    /// Print a trace's jobs, tasks, bytes, time span, size bins, failures and input paths.
    Inspect(InspectArgs),
}

#[derive(Args)]
pub(crate) struct InspectArgs {
    /// The trace file.
    file: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// How to read a trace; shared by every command that takes one.
#[derive(Args)]
pub(crate) struct ReadArgs {
    /// The trace format (swim, rumen, sls, topology, rumen-topology, synth); detected from the
    /// content when absent.
    #[arg(long, value_name = "F")]
    format: Option<Format>,
    /// SWIM: input bytes per map task, one task per block (e.g. 64MiB, 128m, 1048576).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    block_size: u64,
    /// SWIM: shuffle + output bytes per reduce task (SWIM's bytesPerReduce).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    reduce_size: u64,
    /// The seed: SYNTH configs are expanded with it (default: the config's rand_seed), and
    /// `yard sim` draws everything from it (default 1).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
}

impl ReadArgs {
    pub(crate) fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            block_bytes: self.block_size,
            reduce_bytes: self.reduce_size,
            seed: self.seed,
        }
    }
}

pub(crate) fn run(command: TraceCommand) -> Result<()> {
    match command {
        TraceCommand::Inspect(args) => inspect(&args),
    }
}

fn inspect(args: &InspectArgs) -> Result<()> {
    let workload = yard_workload::read_file(&args.file, &args.read.options())?;
    let summary = workload.summary();
    let text = if args.json {
        serde_json::to_string_pretty(&summary)? + "\n"
    } else {
        table(&args.file.display().to_string(), &summary, &args.read)
    };
    crate::print(&text)?;
    Ok(())
}

fn table(file: &str, s: &Summary, read: &ReadArgs) -> String {
    let mut t = String::new();
    let mut row = |name: &str, value: String| {
        let _ = writeln!(t, "{name:<16}{value}");
    };
    row("trace", format!("{file} ({})", s.format));
    row("jobs", s.jobs.to_string());
    row("map tasks", s.map_tasks.to_string());
    row("reduce tasks", s.reduce_tasks.to_string());
    let mut input = format!("{} ({})", s.input_bytes, human_bytes(s.input_bytes));
    if s.maps_without_bytes > 0 {
        let _ = write!(
            input,
            "; {} maps without recorded input",
            s.maps_without_bytes
        );
    }
    row("input bytes", input);
    row(
        "time span",
        format!("{} s ({})", s.span_s, human_duration(s.span_s)),
    );
    let bins: Vec<String> = SizeBin::ALL
        .iter()
        .zip([s.size_bins.small, s.size_bins.medium, s.size_bins.large])
        .map(|(bin, n)| format!("{} {n}", bin.name()))
        .collect();
    row(
        "size bins",
        format!(
            "{}  (tasks per job: < 100, 100–1000, > 1000)",
            bins.join(", ")
        ),
    );
    row(
        "durations",
        format!(
            "{} of {} tasks have one",
            s.tasks_with_duration,
            s.map_tasks + s.reduce_tasks
        ),
    );
    for (name, ends, jobs) in [
        ("failed", s.failed, s.failed_jobs),
        ("killed", s.killed, s.killed_jobs),
    ] {
        row(
            name,
            format!(
                "{} tasks, {} attempts, {jobs} jobs",
                ends.tasks, ends.attempts
            ),
        );
    }
    row(
        "input paths",
        if s.jobs_with_input_path == 0 {
            "none recorded".to_owned()
        } else {
            format!(
                "{} distinct ({} of {} jobs record one)",
                s.input_paths, s.jobs_with_input_path, s.jobs
            )
        },
    );
    if s.nodes + s.racks > 0 {
        row("topology", format!("{} racks, {} nodes", s.racks, s.nodes));
    }
    for note in &s.notes {
        row("note", note.clone());
    }
    if s.format == Format::Swim {
        row(
            "derived",
            format!(
                "maps = one per {} block; reduces = round((shuffle + output) / {}), none when shuffle = 0",
                human_bytes(read.block_size),
                human_bytes(read.reduce_size)
            ),
        );
    }
    t
}

/// Sizes such as `64MiB`, `128m`, `1G`, `4096` (binary multiples; `k`/`m`/`g`/`t` mean KiB…TiB).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("expected a size such as 64MiB or 1048576, found {text:?}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "unknown size unit {other:?}; use B, KiB, MiB, GiB or TiB"
            ));
        }
    };
    let size = number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text} is too large"))?;
    if size == 0 {
        return Err("the size must be at least 1 byte".into());
    }
    Ok(size)
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn human_duration(seconds: f64) -> String {
    let total = seconds.round() as u64;
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m {s}s"),
        _ => format!("{h}h {m}m {s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_workload::DEFAULT_BLOCK_BYTES;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64MiB"), Ok(DEFAULT_BLOCK_BYTES));
        assert_eq!(parse_size("128m"), Ok(128 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("5 parsecs").unwrap_err().contains("unit"));
        assert!(
            parse_size("99999999999T")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_duration(86355.0), "23h 59m 15s");
        assert_eq!(human_duration(61.0), "1m 1s");
    }
}
