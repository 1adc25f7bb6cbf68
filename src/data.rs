//! `yard data put|ls`: datasets on the cluster. `put` splits files into blocks (at line ends,
//! so no record straddles two blocks), places the replicas with the rm's HDFS-style rule
//! (`yard_cluster::placement`), uploads each replica to its nodemanager, and only then records the
//! block map at the rm — a failed upload leaves no dataset that points at missing blocks.
//! Each block's SHA-256 goes into the block map, so a reader can tell a damaged replica.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use yard_cluster::placement::place;
use yard_rm::cluster::plain_name;
use yard_wire::protocol::{BlockReplicas, Dataset, sha256_hex};
use yard_wire::replies::DatasetsReply;

use crate::client::{Client, Rm, print_view};
use crate::sim::BadInput;

#[derive(Subcommand)]
pub(crate) enum DataCommand {
    /// Split files into blocks, place them on the nodemanagers and record the dataset.
    Put(PutArgs),
    /// List datasets, or one dataset's blocks and where they are.
    Ls(LsArgs),
    /// Print a dataset's blocks (a job output's parts) in order to stdout.
    Cat(CatArgs),
    /// Write each block of a dataset (a job output's `part-r-00000`, …) as a file in DIR.
    Get(GetArgs),
    /// Remove a dataset (HDFS's `-rm -r`): its owner or an admin; its nodes delete its blocks.
    Rm(RmArgs),
    /// Write a synthetic dataset file: Zipf-distributed text, or web-server logs.
    Gen(GenArgs),
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Kind {
    /// Lines of words whose frequencies follow Zipf's law (word count's natural input).
    Text,
    /// Access-log lines, `TIME CLIENT METHOD PATH STATUS BYTES`: Zipf clients and paths,
    /// skewed response sizes, and bursts (rushes onto popular paths, error storms) that make blocks
    /// differ: an aggregate job's natural input (`LongValueSum:$5<TAB>$6`), and grep's.
    Logs,
}

#[derive(Args)]
pub(crate) struct GenArgs {
    #[arg(long, value_enum, default_value = "text")]
    kind: Kind,
    /// How much to write: 64MiB, 512KiB, or bytes (the last line ends at or before it).
    #[arg(long, value_parser = parse_size)]
    size: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The file to write.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub(crate) struct PutArgs {
    #[command(flatten)]
    rm: Rm,
    /// The dataset's name (letters, digits, '_', '-', '.').
    name: String,
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Block size: 64MiB, 512KiB, 4096 (bytes).
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    block_size: u64,
    /// Replicas of each block, on distinct nodes (capped at the node count).
    #[arg(long, default_value_t = 3)]
    replication: usize,
}

#[derive(Args)]
pub(crate) struct LsArgs {
    #[command(flatten)]
    rm: Rm,
    name: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub(crate) struct CatArgs {
    #[command(flatten)]
    rm: Rm,
    /// The dataset (`yard data ls` lists them).
    name: String,
}

#[derive(Args)]
pub(crate) struct RmArgs {
    #[command(flatten)]
    rm: Rm,
    /// The dataset (`yard data ls` lists them).
    name: String,
}

#[derive(Args)]
pub(crate) struct GetArgs {
    #[command(flatten)]
    rm: Rm,
    /// The dataset (`yard data ls` lists them).
    name: String,
    /// The directory to write the files to (made if missing); a file already there is an
    /// error, as `hadoop fs -get` refuses to overwrite.
    dir: PathBuf,
}

/// `64MiB`, `512KiB`, `1GiB`, `10MB`, or plain bytes.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s:?} is no size: write 64MiB, 512KiB or a number of bytes"))?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use B, KiB, MiB, GiB, KB, MB or GB"
            ));
        }
    };
    match n.checked_mul(scale) {
        Some(0) | None => Err(format!(
            "{s:?}: a size must be at least one byte (and under 16 EiB)"
        )),
        Some(bytes) => Ok(bytes),
    }
}

pub(crate) fn run(command: DataCommand) -> Result<()> {
    match command {
        DataCommand::Put(args) => put(args),
        DataCommand::Ls(args) => ls(args),
        DataCommand::Cat(args) => crate::data_read::cat(&args.rm, &args.name),
        DataCommand::Get(args) => crate::data_read::get(&args.rm, &args.name, &args.dir),
        DataCommand::Rm(args) => {
            let client = Client::new(&args.rm)?;
            let removed = client.typed(|rm| rm.delete_dataset(&args.name))?;
            crate::print(&format!(
                "removed {}: {} node(s) delete its blocks with their next heartbeats\n",
                removed.dataset, removed.nodes
            ))?;
            Ok(())
        }
        DataCommand::Gen(args) => {
            let file = File::create(&args.out)
                .map_err(|e| BadInput(format!("{}: {e}", args.out.display())))?;
            let mut out = std::io::BufWriter::new(file);
            let written = generate(args.kind, args.size, args.seed, &mut out)?;
            std::io::Write::flush(&mut out)?;
            crate::print(&format!("{}: {written} bytes\n", args.out.display()))?;
            Ok(())
        }
    }
}

/// A pronounceable word for a vocabulary rank (the same word for the same rank, always).
fn word(mut rank: usize) -> String {
    const ONSETS: [&str; 16] = [
        "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "st", "tr",
    ];
    const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
    let mut w = String::new();
    loop {
        w.push_str(ONSETS[rank % ONSETS.len()]);
        rank /= ONSETS.len();
        w.push_str(VOWELS[rank % VOWELS.len()]);
        rank /= VOWELS.len();
        if rank == 0 {
            return w;
        }
    }
}

/// Writes `kind` lines drawn from a ChaCha8 stream seeded with `seed` until the next line
/// would pass `size` bytes; returns the bytes written. Same arguments, same bytes.
pub(crate) fn generate(
    kind: Kind,
    size: u64,
    seed: u64,
    out: &mut impl std::io::Write,
) -> Result<u64> {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    use rand_distr::Distribution;
    const VOCABULARY: usize = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let zipf = rand_distr::Zipf::new(VOCABULARY as f64, 1.07).expect("valid Zipf parameters");
    let words: Vec<String> = (0..VOCABULARY).map(word).collect();
    let mut logs = match kind {
        Kind::Logs => AccessLog::new(&mut rng, &words),
        Kind::Text => AccessLog::default(),
    };
    let (mut written, mut line) = (0u64, String::new());
    loop {
        line.clear();
        match kind {
            Kind::Text => {
                for i in 0..rng.random_range(6..16) {
                    let rank = zipf.sample(&mut rng) as usize - 1;
                    if i > 0 {
                        line.push(' ');
                    }
                    line.push_str(&words[rank.min(VOCABULARY - 1)]);
                }
            }
            Kind::Logs => logs.line(&mut rng, &mut line),
        }
        line.push('\n');
        if written + line.len() as u64 > size {
            return Ok(written);
        }
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
}

/// What an access log is doing for a while: its request rate and what the requests are.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum Regime {
    /// Ordinary traffic.
    #[default]
    Calm,
    /// A rush (a launch, a link shared): five times the requests, crowding onto the most
    /// popular paths.
    Rush,
    /// A failing backend: three times the requests, 15 % of them answered 5xx (3 % when calm).
    Storm,
}

/// The state of `yard data gen --kind logs`: its paths and their typical sizes, the clock and
/// the regime. All of it drawn from the generator's seeded stream.
#[derive(Default)]
struct AccessLog {
    /// Paths by popularity rank, each with the median size of its 200 response.
    paths: Vec<(String, f64)>,
    path_rank: Option<rand_distr::Zipf<f64>>,
    /// A rush's paths: a steeper Zipf, the same paths.
    rush_rank: Option<rand_distr::Zipf<f64>>,
    client_rank: Option<rand_distr::Zipf<f64>>,
    /// Seconds since the log's first line.
    clock: f64,
    regime: Regime,
    /// Lines left in the regime.
    left: u64,
}

impl AccessLog {
    /// Paths (Zipf-ranked, sections by rank) and their sizes: log-normal medians, e^8 ≈ 3 KB
    /// typical, σ 1.5 of the log, so a few are megabytes.
    fn new(rng: &mut rand::rngs::ChaCha8Rng, words: &[String]) -> AccessLog {
        use rand_distr::Distribution;
        const PATHS: usize = 2_000;
        const SECTIONS: [&str; 5] = ["api", "static", "img", "docs", "files"];
        let size = rand_distr::LogNormal::new(8.0, 1.5).expect("valid log-normal");
        let paths = (0..PATHS)
            .map(|r| {
                let path = format!("/{}/{}", SECTIONS[r % SECTIONS.len()], words[r]);
                (path, size.sample(rng))
            })
            .collect();
        AccessLog {
            paths,
            path_rank: rand_distr::Zipf::new(PATHS as f64, 1.1).ok(),
            rush_rank: rand_distr::Zipf::new(PATHS as f64, 1.6).ok(),
            client_rank: rand_distr::Zipf::new(50_000.0, 1.2).ok(),
            ..AccessLog::default()
        }
    }

    /// One line, `TIME CLIENT METHOD PATH STATUS BYTES` (no newline).
    fn line(&mut self, rng: &mut rand::rngs::ChaCha8Rng, line: &mut String) {
        use rand::RngExt;
        use rand_distr::Distribution;
        if self.left == 0 {
            // Regimes last 5k–80k lines (0.3–5 MB: a 4 MiB block holds one to a few); one in
            // three a burst.
            self.regime = match rng.random_range(0..6) {
                0 => Regime::Rush,
                1 => Regime::Storm,
                _ => Regime::Calm,
            };
            self.left = rng.random_range(5_000..80_000);
        }
        self.left -= 1;
        let rate = match self.regime {
            Regime::Calm => 200.0,
            Regime::Rush => 1_000.0,
            Regime::Storm => 600.0,
        };
        // Poisson arrivals at the regime's rate.
        self.clock += -(1.0 - rng.random::<f64>()).ln() / rate;
        let rank = |z: &Option<rand_distr::Zipf<f64>>, rng: &mut rand::rngs::ChaCha8Rng| {
            z.as_ref().map_or(1, |z| z.sample(rng) as usize)
        };
        let client = rank(&self.client_rank, rng);
        let paths = match self.regime {
            Regime::Rush => &self.rush_rank,
            _ => &self.path_rank,
        };
        let (path, median) = &self.paths[(rank(paths, rng) - 1).min(self.paths.len() - 1)];
        let method = match rng.random_range(0..100) {
            0..=79 => "GET",
            80..=91 => "POST",
            92..=96 => "PUT",
            _ => "DELETE",
        };
        let errors = if self.regime == Regime::Storm { 15 } else { 3 };
        let roll = rng.random_range(0..100);
        let status = match roll {
            r if r < errors => {
                if r % 3 == 0 {
                    500
                } else {
                    503
                }
            }
            r if r < errors + 4 => 404,
            r if r < errors + 9 => 304,
            _ => 200,
        };
        // Response sizes: the path's median times log-normal noise (σ 0.8) for a 200, a small
        // page for an error, nothing for a 304.
        let noise = (0.8 * standard_normal(rng)).exp();
        let bytes = match status {
            200 => (*median * noise) as u64,
            304 => 0,
            _ => (300.0 * noise) as u64,
        };
        let at = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(LOG_START)
            + std::time::Duration::from_secs_f64(self.clock);
        let _ = std::fmt::Write::write_fmt(
            line,
            format_args!(
                "{} 10.{}.{}.{} {method} {path} {status} {bytes}",
                humantime::format_rfc3339_seconds(at),
                (client >> 16) & 255,
                (client >> 8) & 255,
                client & 255,
            ),
        );
    }
}

/// The logs' first line's time, 2026-11-22T00:00:00Z, in seconds since the epoch.
const LOG_START: u64 = 1_795_305_600;

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut rand::rngs::ChaCha8Rng) -> f64 {
    use rand::RngExt;
    let (u1, u2): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A block: which file, where in it, how long.
struct Span {
    file: usize,
    offset: u64,
    len: u64,
}

/// Cuts each file into blocks of at most `block_size` bytes, each ending at a newline where the
/// file has one within the block (a line longer than a block is cut where the block ends).
fn split(files: &[PathBuf], block_size: u64) -> Result<Vec<Span>> {
    split_reading(files, block_size, TAIL_WINDOW)
}

/// [`split`], reading a block's tail `tail` bytes at a time.
fn split_reading(files: &[PathBuf], block_size: u64, tail: u64) -> Result<Vec<Span>> {
    let mut spans = Vec::new();
    let mut window = Vec::new();
    for (index, path) in files.iter().enumerate() {
        let mut file =
            File::open(path).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        let size = file.metadata()?.len();
        let mut offset = 0;
        while offset < size {
            let end = (offset + block_size).min(size);
            let len = if end == size {
                end - offset
            } else {
                // The last newline before `end`, read backwards a window at a time: only the
                // block's tail is read here (the upload reads the block itself).
                let mut cut = None;
                let mut stop = end;
                while cut.is_none() && stop > offset {
                    let from = stop.saturating_sub(tail).max(offset);
                    window.clear();
                    file.seek(SeekFrom::Start(from))?;
                    (&mut file).take(stop - from).read_to_end(&mut window)?;
                    cut = window
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map(|i| from + i as u64 + 1);
                    stop = from;
                }
                cut.unwrap_or(end) - offset
            };
            anyhow::ensure!(len > 0, "{} changed while being read", path.display());
            spans.push(Span {
                file: index,
                offset,
                len,
            });
            offset += len;
        }
    }
    Ok(spans)
}

/// How much of a block's tail is read at a time looking for its last line end.
const TAIL_WINDOW: u64 = 64 << 10;

fn put(args: PutArgs) -> Result<()> {
    if !plain_name(&args.name) {
        return Err(BadInput(format!(
            "dataset name {:?}: use 1 to 200 letters, digits, '_', '-' or '.'",
            args.name
        ))
        .into());
    }
    let client = Client::new(&args.rm)?;
    let holders = client.running_nodes()?;
    let spans = split(&args.files, args.block_size)?;
    if spans.is_empty() {
        return Err(
            BadInput("the files are empty: a dataset needs at least one byte".into()).into(),
        );
    }
    let sizes: Vec<u64> = spans.iter().map(|s| s.len).collect();
    let placed = place(&holders, &sizes, args.replication).map_err(|e| BadInput(e.to_string()))?;
    let total: u64 = sizes.iter().sum();
    let copies: u64 = spans
        .iter()
        .zip(&placed)
        .map(|(s, r)| s.len * r.len() as u64)
        .sum();
    let bar = indicatif::ProgressBar::new(copies).with_style(
        indicatif::ProgressStyle::with_template(
            "{msg} {bar:30} {bytes}/{total_bytes} ({bytes_per_sec})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(format!("uploading {}", args.name));
    let http = reqwest::blocking::Client::new();
    let grant = upload_token(&client, &args.name)?;
    let mut blocks = Vec::with_capacity(spans.len());
    let mut bytes = Vec::new();
    for (i, (span, replicas)) in spans.iter().zip(&placed).enumerate() {
        let block = format!("b{i:06}");
        let mut file = File::open(&args.files[span.file])?;
        file.seek(SeekFrom::Start(span.offset))?;
        bytes.clear();
        file.take(span.len).read_to_end(&mut bytes)?;
        anyhow::ensure!(
            bytes.len() as u64 == span.len,
            "{} changed while being read",
            args.files[span.file].display()
        );
        let sha256 = sha256_hex(&bytes);
        let mut nodes = Vec::with_capacity(replicas.len());
        for &r in replicas {
            let node = &holders[r].node;
            let url = format!("http://{node}/ws/v1/node/blocks/{}/{block}", args.name);
            let mut request = http.put(&url).body(bytes.clone());
            if let Some(grant) = &grant {
                request = request.bearer_auth(grant);
            }
            let response = request
                .send()
                .with_context(|| format!("cannot reach {node}"))?;
            let status = response.status();
            anyhow::ensure!(
                status.is_success(),
                "{node} refused block {block}: {status} {}",
                response.text().unwrap_or_default()
            );
            nodes.push(node.clone());
            bar.inc(span.len);
        }
        blocks.push(BlockReplicas {
            block,
            bytes: span.len,
            nodes,
            sha256: Some(sha256),
        });
    }
    bar.finish_and_clear();
    let dataset = Dataset {
        name: args.name.clone(),
        created_ms: 0,
        blocks,
    };
    client.typed(|rm| rm.put_dataset(&dataset))?;
    let replication = placed.iter().map(Vec::len).min().unwrap_or(0);
    crate::print(&format!(
        "{}: {} blocks, {total} bytes, {replication} replicas each on {} nodes\n",
        args.name,
        dataset.blocks.len(),
        holders.len()
    ))?;
    Ok(())
}

/// The bearer token `put`'s block uploads carry: the nodemanagers' data routes take a block
/// only from a holder of a dataset upload grant. The one place `put` gets it.
fn upload_token(client: &Client, dataset: &str) -> Result<Option<String>> {
    Ok(Some(client.typed(|rm| rm.upload_grant(dataset))?.token))
}

fn ls(args: LsArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    let rows: Vec<Vec<String>> = match &args.name {
        Some(name) => {
            let dataset = client.typed(|rm| rm.dataset(name))?;
            if args.json {
                return print_view(&dataset);
            }
            dataset
                .blocks
                .iter()
                .map(|b| vec![b.block.clone(), b.bytes.to_string(), b.nodes.join(",")])
                .collect()
        }
        None => {
            let datasets = client.typed(|rm| rm.datasets())?;
            if args.json {
                return print_view(&DatasetsReply { datasets });
            }
            datasets
                .iter()
                .map(|d| vec![d.name.clone(), d.blocks.to_string(), d.bytes.to_string()])
                .collect()
        }
    };
    let header: &[&str] = if args.name.is_some() {
        &["BLOCK", "BYTES", "NODES"]
    } else {
        &["DATASET", "BLOCKS", "BYTES"]
    };
    crate::print(&crate::client::table(header, &rows))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_data_is_reproducible_sized_and_skewed() {
        for kind in [Kind::Text, Kind::Logs] {
            let mut a = Vec::new();
            let n = generate(kind, 100_000, 7, &mut a).unwrap();
            assert_eq!(n as usize, a.len());
            assert!(n <= 100_000 && n > 99_000, "{n}");
            assert!(a.ends_with(b"\n"));
            let mut b = Vec::new();
            generate(kind, 100_000, 7, &mut b).unwrap();
            assert_eq!(a, b, "same seed, same bytes");
            let mut c = Vec::new();
            generate(kind, 100_000, 8, &mut c).unwrap();
            assert_ne!(a, c, "another seed, other bytes");
        }
        let mut text = Vec::new();
        generate(Kind::Text, 200_000, 1, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let mut counts = std::collections::HashMap::new();
        text.split_whitespace()
            .for_each(|w| *counts.entry(w).or_insert(0u64) += 1);
        let mut freq: Vec<u64> = counts.into_values().collect();
        freq.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            freq[0] > 20 * freq[freq.len() / 2],
            "Zipf: a few words dominate ({} vs {})",
            freq[0],
            freq[freq.len() / 2]
        );
    }

    /// `--kind logs`: six fields that parse, sizes skewed, paths Zipf, and bursts that make
    /// stretches of the log differ (what a block of it holds depends on where it is).
    #[test]
    fn access_logs_parse_and_are_skewed_and_bursty() {
        let mut out = Vec::new();
        generate(Kind::Logs, 24 << 20, 3, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut sizes = Vec::new();
        let mut paths: std::collections::HashMap<&str, u64> = Default::default();
        let mut last_time = String::new();
        // Per 256 KiB stretch: its lines and its 5xx lines.
        let mut stretches: Vec<(u64, u64)> = Vec::new();
        let mut at = 0usize;
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 6, "{line}");
            humantime::parse_rfc3339(f[0]).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(f[0] >= last_time.as_str(), "time runs forward: {line}");
            last_time = f[0].to_owned();
            let ip: Vec<u8> = f[1].split('.').map(|o| o.parse().unwrap()).collect();
            assert_eq!((ip.len(), ip[0]), (4, 10), "{line}");
            assert!(["GET", "POST", "PUT", "DELETE"].contains(&f[2]), "{line}");
            assert!(f[3].starts_with('/'), "{line}");
            let status: u16 = f[4].parse().unwrap();
            assert!([200, 304, 404, 500, 503].contains(&status), "{line}");
            let bytes: u64 = f[5].parse().unwrap();
            sizes.push(bytes);
            *paths.entry(f[3]).or_default() += 1;
            let i = at / (256 << 10);
            if stretches.len() <= i {
                stretches.push((0, 0));
            }
            stretches[i].0 += 1;
            stretches[i].1 += u64::from(status >= 500);
            at += line.len() + 1;
        }
        // Skewed sizes: the largest responses dwarf the typical one.
        let mut sorted = sizes.clone();
        sorted.sort_unstable();
        let (median, p999) = (sorted[sorted.len() / 2], sorted[sorted.len() * 999 / 1000]);
        assert!(p999 > 50 * median.max(1), "median {median}, p99.9 {p999}");
        // Zipf paths: the most requested path is far above the typical one.
        let mut counts: Vec<u64> = paths.into_values().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            counts[0] > 50 * counts[counts.len() / 2],
            "{:?}",
            &counts[..5]
        );
        // Bursts: some stretches are error storms, most are calm.
        let shares: Vec<f64> = stretches
            .iter()
            .map(|&(n, e)| e as f64 / n as f64)
            .collect();
        let stormy = shares.iter().filter(|&&s| s > 0.12).count();
        let calm = shares.iter().filter(|&&s| s < 0.06).count();
        assert!(
            stormy >= 1 && calm >= shares.len() / 2,
            "5xx shares {shares:?}"
        );
    }

    #[test]
    fn reading_the_tail_in_small_windows_cuts_the_same_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        std::fs::write(
            &a,
            format!("short\n{}\nx\n{}", "y".repeat(40), "z".repeat(30)),
        )
        .unwrap();
        let cut = |tail| -> Vec<(u64, u64)> {
            split_reading(std::slice::from_ref(&a), 32, tail)
                .unwrap()
                .iter()
                .map(|s| (s.offset, s.len))
                .collect()
        };
        assert_eq!(cut(3), cut(1 << 16));
        assert_eq!(
            cut(3)[0],
            (0, 6),
            "the newline lies windows before the block's end"
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        for bad in ["", "0", "MiB", "12 MiB", "5TiB", "99999999999GiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn blocks_end_at_line_ends_and_cover_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let long_line = "x".repeat(25);
        std::fs::write(&a, format!("one\ntwo two\nthree\n{long_line}\nend")).unwrap();
        let b = dir.path().join("b.txt");
        std::fs::write(&b, "").unwrap();
        let spans = split(&[a.clone(), b], 10).unwrap();
        let text = std::fs::read(&a).unwrap();
        let pieces: Vec<&[u8]> = spans
            .iter()
            .map(|s| &text[s.offset as usize..(s.offset + s.len) as usize])
            .collect();
        assert_eq!(pieces.concat(), text, "every byte once, in order");
        assert!(spans.iter().all(|s| s.file == 0 && s.len <= 10));
        for p in &pieces[..pieces.len() - 1] {
            let whole_line_or_full = p.ends_with(b"\n") || p.len() == 10;
            assert!(whole_line_or_full, "{:?}", String::from_utf8_lossy(p));
        }
        assert_eq!(pieces[0], b"one\n", "'two two\\n' does not fit after it");
    }
}
