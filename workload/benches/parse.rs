//! Parse throughput per trace format, on the largest shipped file of each, against a baseline
//! run in the same process (a bare tokenizer that builds nothing), so the ratio survives a
//! slower or busier machine. Run: `cargo bench -p yard-workload --bench parse`.
//! Goals (one core): SWIM ≥ 100 MB/s, Rumen ≥ 50 MB/s.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use yard_workload::{Format, ReadOptions};

/// The allocator the `yard` binary uses, so the figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// (format, file under traces/, goal in MB/s where the issue sets one)
const CASES: &[(Format, &str, Option<f64>)] = &[
    (
        Format::Swim,
        "swim/FB-2010_samples_24_times_1hr_0.tsv",
        Some(100.0),
    ),
    (Format::Rumen, "rumen/folder-input-trace.json", Some(50.0)),
    (Format::Sls, "sls/inputsls.json", None),
    (Format::Topology, "sls/nodes.json", None),
    (Format::Synth, "sls/syn.json", None),
];

/// Runs `f` repeatedly for about `budget` and returns the median time of one run.
fn median_time(budget: Duration, mut f: impl FnMut()) -> Duration {
    f(); // warm caches and the allocator
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || times.len() < 5 {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// The baseline: what reading the bytes costs before yard builds anything from them.
fn baseline(format: Format, bytes: &[u8]) -> usize {
    match format {
        // Splitting into lines and tab-separated fields.
        Format::Swim => bytes
            .split(|&b| b == b'\n')
            .map(|line| line.split(|&b| b == b'\t').count())
            .sum(),
        // Tokenizing every JSON value without keeping any of it.
        _ => serde_json::Deserializer::from_slice(bytes)
            .into_iter::<serde::de::IgnoredAny>()
            .filter(Result::is_ok)
            .count(),
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let budget = Duration::from_millis(if std::env::args().any(|a| a == "--quick") {
        100
    } else {
        1500
    });
    println!(
        "{:<9} {:<40} {:>9} {:>10} {:>9} {:>10} {:>6}  goal",
        "format", "file", "bytes", "yard MB/s", "jobs", "base MB/s", "ratio"
    );
    for &(format, file, goal) in CASES {
        let bytes = std::fs::read(root.join(file)).expect("shipped trace");
        let options = ReadOptions {
            format: Some(format),
            ..ReadOptions::default()
        };
        let jobs = yard_workload::parse(file, &bytes, &options)
            .expect("parses")
            .jobs
            .len();
        let yard = median_time(budget, || {
            black_box(yard_workload::parse(file, black_box(&bytes), &options).unwrap());
        });
        let base = median_time(budget, || {
            black_box(baseline(format, black_box(&bytes)));
        });
        let mbps = |t: Duration| bytes.len() as f64 / t.as_secs_f64() / 1e6;
        let verdict = match goal {
            Some(g) if mbps(yard) >= g => format!("≥ {g} MB/s: met"),
            Some(g) => format!("≥ {g} MB/s: MISSED"),
            None => "none (tiny sample file)".to_owned(),
        };
        println!(
            "{:<9} {:<40} {:>9} {:>10.1} {:>9} {:>10.1} {:>6.2}  {verdict}",
            format.name(),
            file,
            bytes.len(),
            mbps(yard),
            jobs,
            mbps(base),
            mbps(yard) / mbps(base),
        );
    }
}
