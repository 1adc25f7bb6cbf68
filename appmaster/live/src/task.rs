//! The task side: `yard mr-runner` holds a container for the job and runs one task process
//! after another in it; `yard mr-task` is one attempt of a map or a reduce.
//!
//! A task process talks to the master directly (progress, shuffle bytes, readiness, done); the
//! replies carry `kill`, so a killed attempt stops within one progress interval. The runner
//! only reports what the task could not: that it died (non-zero exit, signal).

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use yard_appmaster::apps::{AppSpec, Split, sample_partitions, streaming};
use yard_appmaster::policy::Rng;

use crate::{
    BlockRef, Done, KILLED_EXIT, Measured, Order, OutputRef, Outputs, ReduceTail, Reply, TaskSpec,
    Work, job_token,
};

mod command;
use command::Workplace;

/// How often a task reports progress. Each report's reply waits up to this long for news (a
/// kill, the deadline guard's cut: `waitMs`), so a task hears of them at once, not at its
/// next report: the cut's lead before any cut is measured (`master::costs`) need not cover a
/// report interval.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);
/// How often a held (synthetic) task looks whether it was cut.
pub(crate) const HOLD_SLICE: Duration = Duration::from_millis(20);
/// How long a runner keeps trying an unreachable master before it gives up (its container
/// then ends, and the rm tells the master, if any, that it was lost).
const MASTER_PATIENCE: Duration = Duration::from_secs(30);
/// Map outputs a reducer fetches at once.
const FETCH_PARALLELISM: usize = 8;

#[derive(Args)]
pub struct RunnerArgs {
    /// The master's umbilical base URL.
    #[arg(long)]
    master: String,
    /// This container's id.
    #[arg(long)]
    container: String,
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("an HTTP client")
}

/// `request` with `Authorization: Bearer <token>` when there is a token.
fn authorized(
    request: reqwest::blocking::RequestBuilder,
    token: Option<&str>,
) -> reqwest::blocking::RequestBuilder {
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

fn post<T: DeserializeOwned>(
    http: &reqwest::blocking::Client,
    url: &str,
    body: &impl Serialize,
) -> Result<T> {
    let response = authorized(http.post(url).json(body), job_token().as_deref())
        .send()
        .with_context(|| format!("cannot reach {url}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().unwrap_or_default();
        bail!("{url} answered {status}: {text}");
    }
    response
        .json()
        .with_context(|| format!("{url} answered something unreadable"))
}

/// The runner: asks for orders until told to exit.
pub fn runner(args: RunnerArgs) -> Result<()> {
    let http = http();
    let next = format!("{}/mr/runners/{}/next", args.master, args.container);
    let exe = std::env::current_exe().context("cannot find the yard binary to run tasks")?;
    let mut unreachable_since: Option<Instant> = None;
    loop {
        let order: Order = match post(&http, &next, &json!({})) {
            Ok(order) => {
                unreachable_since = None;
                order
            }
            Err(e) => {
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() > MASTER_PATIENCE {
                    return Err(e.context("the master is gone"));
                }
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
        };
        match order {
            Order::Wait => {}
            Order::Exit => return Ok(()),
            Order::Run { task } => {
                let attempt = task.attempt.clone();
                eprintln!("runner: attempt {attempt} starts");
                let outcome = run_child(&exe, &task);
                if let Some(reason) = outcome {
                    eprintln!("runner: attempt {attempt} failed: {reason}");
                    let url = format!("{}/mr/attempts/{attempt}/failed", args.master);
                    if let Err(e) = post::<Reply>(&http, &url, &json!({ "reason": reason })) {
                        eprintln!("runner: cannot report the failure: {e:#}");
                    }
                }
            }
        }
    }
}

/// Runs one attempt as a child process; `Some(reason)` if it did not end well.
fn run_child(exe: &std::path::Path, task: &TaskSpec) -> Option<String> {
    let spawned = Command::new(exe)
        .arg("mr-task")
        .stdin(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Some(format!("cannot start the task process: {e}")),
    };
    let spec = serde_json::to_vec(task).expect("a task spec serializes");
    if let Some(mut stdin) = child.stdin.take()
        && let Err(e) = stdin.write_all(&spec)
    {
        let _ = child.kill();
        let _ = child.wait();
        return Some(format!("cannot hand the task its spec: {e}"));
    }
    match child.wait() {
        Ok(status) if status.success() => None,
        Ok(status) if status.code() == Some(KILLED_EXIT) => None, // the master asked for it
        Ok(status) => Some(
            match (
                status.code(),
                std::os::unix::process::ExitStatusExt::signal(&status),
            ) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                _ => "ended abnormally".into(),
            },
        ),
        Err(e) => Some(format!("cannot wait for the task process: {e}")),
    }
}

/// The master killed this attempt: its running command's process group goes too (a
/// container outlives its attempts, so an orphaned mapper would go on holding it), then
/// this process ends.
fn killed() -> ! {
    command::stop_command();
    std::process::exit(KILLED_EXIT)
}

/// Progress shared with the reporting thread, as f64 bits; whether the master's deadline
/// guard cut this attempt (a reduce then answers from what it has folded in); and whether
/// its work is over (its `done` posted or about to be).
#[derive(Clone)]
struct Progress(
    Arc<AtomicU64>,
    Arc<std::sync::atomic::AtomicBool>,
    Arc<std::sync::atomic::AtomicBool>,
);

/// What a reply to the progress long-poll asks of the attempt ([`heard`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heard {
    Nothing,
    /// The deadline guard's cut, heard for the first time.
    Cut,
    /// A kill while the attempt works: it ends at once.
    Kill,
    /// Its work is over: the reporting stops, and the task ends as it was ending.
    Over,
}

/// What `reply` asks of an attempt at `progress`. The master answers `kill` to any attempt
/// it no longer counts live, and one that has posted `done` is no longer live: for it the
/// reply is the end of its reports, not a kill (else every successful task's log ended
/// "killed by the master", and its process could exit as killed before its `done` reply).
fn heard(reply: &Reply, progress: &Progress) -> Heard {
    match (reply.kill, progress.is_finished()) {
        (true, true) => Heard::Over,
        (true, false) => Heard::Kill,
        _ if reply.cut && !progress.is_cut() => Heard::Cut,
        _ => Heard::Nothing,
    }
}

impl Progress {
    fn new() -> Progress {
        Progress(Arc::new(AtomicU64::new(0)), Arc::default(), Arc::default())
    }

    /// The attempt's work is done: a `kill` from now on is the master no longer following it.
    fn finish(&self) {
        self.2.store(true, Ordering::SeqCst);
    }

    fn is_finished(&self) -> bool {
        self.2.load(Ordering::SeqCst)
    }

    fn cut(&self) {
        self.1.store(true, Ordering::Relaxed);
    }

    fn is_cut(&self) -> bool {
        self.1.load(Ordering::Relaxed)
    }

    fn set(&self, p: f64) {
        self.0.store(p.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

/// One attempt: reads its spec from stdin, runs, reports.
pub fn task() -> Result<()> {
    let mut raw = Vec::new();
    std::io::stdin()
        .read_to_end(&mut raw)
        .context("reading the task spec from stdin")?;
    let spec: TaskSpec = serde_json::from_slice(&raw)
        .context("the task spec on stdin (mr-task is started by mr-runner)")?;
    let http = http();
    let base = format!("{}/mr/attempts/{}", spec.master, spec.attempt);
    // The master measures its scheduling overhead up to this moment.
    if let Err(e) = post::<Reply>(&http, &format!("{base}/started"), &json!({})) {
        eprintln!("task: cannot report the start: {e:#}");
    }
    let progress = Progress::new();
    // Progress reports, and the kill switch: a killed attempt ends at once.
    {
        let (http, url, progress) = (http.clone(), format!("{base}/progress"), progress.clone());
        let wait_ms = PROGRESS_EVERY.as_millis() as u64;
        std::thread::spawn(move || {
            loop {
                let asked = Instant::now();
                let body = json!({ "progress": progress.get(), "waitMs": wait_ms });
                let reply = post::<Reply>(&http, &url, &body);
                match reply.map_or(Heard::Nothing, |r| heard(&r, &progress)) {
                    Heard::Kill => {
                        eprintln!("task: killed by the master");
                        killed();
                    }
                    Heard::Cut => {
                        eprintln!("task: the deadline guard: answering from what is folded in");
                        progress.cut();
                    }
                    Heard::Over => return,
                    Heard::Nothing => {}
                }
                // A master that answers at once (a shared scan's, a cut already heard, an
                // error) is asked again only after the interval.
                std::thread::sleep(PROGRESS_EVERY.saturating_sub(asked.elapsed()));
            }
        });
    }
    let done = match &spec.work {
        Work::Map {
            split,
            output,
            block,
            lines,
        } => map(
            &spec,
            &http,
            *split,
            output,
            (block.as_ref(), lines.as_ref()),
            &progress,
        ),
        Work::Reduce { reduce, population } => {
            reduce_task(&spec, &http, &base, *reduce, *population, &progress)
        }
        Work::ScanMap {
            split,
            block,
            riders,
        } => scan_map(&spec, &http, *split, block, riders, &progress),
    };
    // Why it failed, told by the task itself (a streaming command's exit code and stderr):
    // the runner sees only this process's exit code, and the master keeps the first report.
    let done = match done {
        Ok(done) => done,
        Err(e) => {
            let reason = format!("{e:#}");
            if let Err(report) = post::<Reply>(
                &http,
                &format!("{base}/failed"),
                &json!({ "reason": reason }),
            ) {
                eprintln!("task: cannot report the failure: {report:#}");
            }
            return Err(e);
        }
    };
    progress.finish();
    let reply: Reply = post(&http, &format!("{base}/done"), &done)?;
    if reply.kill {
        // Killed before its `done` came: the master did not take its work.
        eprintln!("task: killed by the master before it took this attempt's work");
        killed();
    }
    Ok(())
}

fn env_dir(name: &str) -> Result<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("{name} is not set: tasks run in containers a nodemanager starts"))
}

/// The block's bytes, each copy checked against the block map's SHA-256 as it is read: from
/// this node's data directory (`data_dir`) when a replica is here, then over HTTP from the
/// replicas in their order. A copy that cannot be read, or whose digest differs, is logged
/// and the next one tried; the map fails only when every replica did, saying why each did.
/// A block without a recorded digest is taken as read.
fn read_block(
    http: &reqwest::blocking::Client,
    data_dir: &Path,
    block: &BlockRef,
    token: Option<&str>,
) -> Result<Vec<u8>> {
    let name = format!("{}/{}", block.dataset, block.block);
    let verify = |replica: &str, copy| verified(&name, block.sha256.as_deref(), replica, copy);
    let mut failures = Vec::new();
    let local = data_dir.join(&block.dataset).join(&block.block);
    let here = format!("the local data directory ({})", local.display());
    let read_here = match std::fs::File::open(&local) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None, // no replica here
        opened => Some(opened.and_then(|file| read_hashing(file, None))),
    };
    if let Some(read) = read_here {
        let copy = read.map_err(|e| {
            eprintln!("task: block {name}: cannot read {here}: {e}; trying the next replica");
            format!("{here}: {e}")
        });
        match copy.and_then(|read| verify(&here, read)) {
            Ok(bytes) => return Ok(bytes),
            Err(failure) => failures.push(failure),
        }
    }
    for node in &block.replicas {
        let copy = get_replica(http, node, block, token)
            .and_then(|r| {
                let size = r.content_length();
                read_hashing(r, size).map_err(anyhow::Error::from)
            })
            .map_err(|e| {
                eprintln!("task: block {name}: cannot read the replica at {node}: {e:#}");
                format!("{node}: {e:#}")
            });
        match copy.and_then(|read| verify(node, read)) {
            Ok(bytes) => return Ok(bytes),
            Err(failure) => failures.push(failure),
        }
    }
    if failures.is_empty() {
        failures.push("the block map lists no replica".into());
    }
    bail!(
        "no replica of block {name} could be read (tried {}): {}",
        failures.len(),
        failures.join("; ")
    )
}

/// The replica of `block` at `node` (`host:port`), asked for with the job token; its body
/// is read as it streams.
fn get_replica(
    http: &reqwest::blocking::Client,
    node: &str,
    block: &BlockRef,
    token: Option<&str>,
) -> Result<reqwest::blocking::Response> {
    let url = format!(
        "http://{node}/ws/v1/node/blocks/{}/{}",
        block.dataset, block.block
    );
    Ok(authorized(http.get(&url), token)
        .send()
        .and_then(|r| r.error_for_status())?)
}

/// A copy of block `name` read whole from `replica`, as (bytes, digest): its bytes if the
/// digest is the `expected` one (or none is recorded), else the logged reason it is not.
fn verified(
    name: &str,
    expected: Option<&str>,
    replica: &str,
    (bytes, digest): (Vec<u8>, String),
) -> Result<Vec<u8>, String> {
    match expected {
        Some(expected) if digest != expected => {
            eprintln!(
                "task: block {name}: the replica at {replica} is damaged: sha256 {digest}, \
                 the block map records {expected}; trying the next replica"
            );
            Err(format!("{replica}: sha256 {digest}, expected {expected}"))
        }
        _ => Ok(bytes),
    }
}

/// Reads `from` to its end, hashing as it goes: the bytes and their SHA-256 in lower-case hex.
fn read_hashing(mut from: impl Read, size: Option<u64>) -> std::io::Result<(Vec<u8>, String)> {
    use sha2::{Digest as _, Sha256};
    let mut bytes = Vec::with_capacity(size.unwrap_or(0).min(1 << 30) as usize);
    let mut hasher = Sha256::new();
    let mut chunk = vec![0; 256 << 10];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&chunk[..n]);
        bytes.extend_from_slice(&chunk[..n]);
    }
    Ok((bytes, yard_wire::protocol::hex(&hasher.finalize())))
}

/// A synthetic task's recorded duration, spent with progress reports; cut short when the
/// deadline guard cuts the attempt. Returns the share of `seconds` spent (1 when whole).
fn hold(seconds: f64, progress: &Progress) -> f64 {
    let start = Instant::now();
    let total = Duration::from_secs_f64(seconds.max(0.0));
    while start.elapsed() < total {
        if progress.is_cut() {
            return start.elapsed().as_secs_f64() / seconds;
        }
        progress.set(start.elapsed().as_secs_f64() / seconds);
        std::thread::sleep((total - start.elapsed()).min(HOLD_SLICE));
    }
    1.0
}

/// The first bytes of `block`, through its first `\n` (all of it if it has none): a
/// replica read from its start until then, here if this node holds one, else from the others
/// in turn. Not checked against the block's digest (only a prefix is read); the map that owns
/// the block reads it whole and checks it.
fn read_first_line(
    http: &reqwest::blocking::Client,
    data_dir: &Path,
    block: &BlockRef,
    token: Option<&str>,
) -> Result<Vec<u8>> {
    fn through_newline(mut from: impl Read) -> std::io::Result<Vec<u8>> {
        let (mut out, mut chunk) = (Vec::new(), vec![0; 64 << 10]);
        loop {
            let n = match from.read(&mut chunk) {
                Ok(0) => return Ok(out),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(i) = streaming::line_end(&chunk[..n]) {
                out.extend_from_slice(&chunk[..=i]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
        }
    }
    let name = format!("{}/{}", block.dataset, block.block);
    let local = data_dir.join(&block.dataset).join(&block.block);
    let mut failures = Vec::new();
    match std::fs::File::open(&local) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        opened => match opened.and_then(through_newline) {
            Ok(bytes) => return Ok(bytes),
            Err(e) => failures.push(format!("{}: {e}", local.display())),
        },
    }
    for node in &block.replicas {
        let read = get_replica(http, node, block, token)
            .and_then(|r| through_newline(r).map_err(anyhow::Error::from));
        match read {
            Ok(bytes) => return Ok(bytes),
            Err(e) => failures.push(format!("{node}: {e:#}")),
        }
    }
    bail!(
        "cannot read the first line of block {name}, where this split's last line ends: {}",
        failures.join("; ")
    )
}

/// A streaming map's input: the lines its block owns (LineRecordReader's rule,
/// `streaming::owned_lines`), its last line finished from the blocks after it.
fn owned_input(
    http: &reqwest::blocking::Client,
    data_dir: &Path,
    block: &[u8],
    lines: &crate::Lines,
) -> Result<Vec<u8>> {
    if !lines.first && streaming::line_end(block).is_none() {
        // No line starts here: it is all an earlier split's.
        return Ok(Vec::new());
    }
    let mut after = Vec::new();
    let mut ended = false;
    for next in &lines.after {
        let prefix = read_first_line(http, data_dir, next, job_token().as_deref())?;
        after.extend_from_slice(&prefix);
        if streaming::line_end(&prefix).is_some() {
            ended = true;
            break;
        }
    }
    if !ended && lines.more {
        bail!(
            "this split's last line runs on past the {} blocks after it: yard streaming reads \
             lines of at most {} blocks",
            lines.after.len(),
            streaming::LINE_BLOCKS_CAP + 1
        );
    }
    Ok(streaming::owned_lines(block, lines.first, &after).into_owned())
}

fn map(
    spec: &TaskSpec,
    http: &reqwest::blocking::Client,
    split: Split,
    output: &str,
    (block, lines): (Option<&BlockRef>, Option<&crate::Lines>),
    progress: &Progress,
) -> Result<Done> {
    let started = Instant::now();
    let input = match block {
        Some(block) => {
            let data_dir = env_dir("YARD_DATA_DIR")?;
            let bytes = read_block(http, &data_dir, block, job_token().as_deref())?;
            match lines {
                Some(lines) => owned_input(http, &data_dir, &bytes, lines)
                    .with_context(|| format!("map {}", split.index))?,
                None => bytes,
            }
        }
        None => Vec::new(),
    };
    // What the map read; a synthetic map reads nothing and stands for its recorded input.
    let input_bytes = match block {
        Some(_) => input.len() as u64,
        None => split.bytes,
    };
    progress.set(0.3);
    if spec.hang {
        eprintln!(
            "map {}: hanging until killed (fault injection)",
            split.index
        );
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if let AppSpec::Synthetic { maps, .. } = &spec.app {
        let seconds = maps.get(split.index as usize).map_or(0.0, |m| m.seconds);
        hold(seconds, progress);
    } else {
        let left = spec.map_min_seconds - started.elapsed().as_secs_f64();
        if left > 0.0 {
            hold(left, progress);
        }
    }
    let mut map_only_stdout = None;
    let out = match &spec.app {
        AppSpec::Streaming {
            mapper,
            combiner,
            cmdenv,
            files,
            reducer,
            ..
        } => {
            let place = Workplace::new(&spec.attempt, files)?;
            let stdout = place
                .run("mapper", mapper, cmdenv, &input)
                .with_context(|| format!("map {}", split.index))?;
            let combiner = combiner.as_deref().unwrap_or_default();
            let out =
                spec.app
                    .map_streamed(split, &input, &stdout, spec.reduces, &mut |p, stdin| {
                        place
                            .run("combiner", combiner, cmdenv, stdin)
                            .map_err(|e| format!("partition {p}: {e:#}"))
                    });
            if reducer.is_none() {
                map_only_stdout = Some(stdout);
            }
            out
        }
        app => app.map(split, &input, spec.reduces),
    }
    .with_context(|| format!("map {}", split.index))?;
    progress.set(0.9);
    if let Some(stdout) = map_only_stdout {
        crate::output::map_part(http, spec, split.index, &stdout)?;
    }
    let output_bytes = write_partitions(output, &out.partitions)?;
    progress.set(1.0);
    Ok(Done {
        output_bytes,
        stats: Some(out.stats),
        partial: None,
        riders: Vec::new(),
        measured: Some(Measured {
            input_bytes,
            output_bytes,
            seconds: started.elapsed().as_secs_f64(),
            disk_rate_env: Measured::disk_rate_env(),
            tail: None,
        }),
    })
}

/// A map's partitions, under `output` in the container's shuffle directory; their bytes.
fn write_partitions(output: &str, partitions: &[Vec<u8>]) -> Result<u64> {
    let dir = env_dir("YARD_SHUFFLE_DIR")?.join(output);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut bytes = 0;
    for (r, partition) in partitions.iter().enumerate() {
        // Written aside and renamed: the shuffle service never serves half a partition.
        let (tmp, file) = (dir.join(format!(".{r}.tmp")), dir.join(r.to_string()));
        std::fs::write(&tmp, partition).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &file).with_context(|| format!("renaming {}", tmp.display()))?;
        bytes += partition.len() as u64;
    }
    Ok(bytes)
}

/// A shared scan's read (CIRCUMFLEX §2.2): the block read once, then every rider's map
/// function over the same bytes. `measured` is the one read: its bytes count once.
fn scan_map(
    spec: &TaskSpec,
    http: &reqwest::blocking::Client,
    split: Split,
    block: &BlockRef,
    riders: &[crate::ScanRider],
    progress: &Progress,
) -> Result<Done> {
    let started = Instant::now();
    let input = read_block(
        http,
        &env_dir("YARD_DATA_DIR")?,
        block,
        job_token().as_deref(),
    )?;
    progress.set(0.3);
    let left = spec.map_min_seconds - started.elapsed().as_secs_f64();
    if left > 0.0 {
        hold(left, progress);
    }
    let (mut output_bytes, mut stats) = (0, Vec::with_capacity(riders.len()));
    for rider in riders {
        let out = rider
            .app
            .map(split, &input, rider.reduces)
            .with_context(|| format!("map {} for {}", split.index, rider.output))?;
        output_bytes += write_partitions(&rider.output, &out.partitions)?;
        stats.push(out.stats);
    }
    progress.set(1.0);
    Ok(Done {
        output_bytes,
        stats: None,
        partial: None,
        riders: stats,
        measured: Some(Measured {
            input_bytes: input.len() as u64,
            output_bytes,
            seconds: started.elapsed().as_secs_f64(),
            disk_rate_env: Measured::disk_rate_env(),
            tail: None,
        }),
    })
}

/// Tries at one map output before a reducer tells the master it cannot be fetched, and the
/// pause before the second (doubled before each further one): a busy or restarting
/// nodemanager gets a moment, a lost one costs about a second.
const FETCH_TRIES: u32 = 3;
const FETCH_RETRY_AFTER: Duration = Duration::from_millis(300);

/// The client a reducer fetches map outputs with: a node that does not answer is given up on
/// after a few seconds, not after the whole request timeout.
fn fetch_client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(120))
        .build()
        .expect("an HTTP client")
}

/// One map's partition for `reduce`, from the nodemanager that ran the map, tried
/// `FETCH_TRIES` times (connection refused, 404, a timeout, a broken body all count).
fn fetch(
    http: &reqwest::blocking::Client,
    application: &str,
    o: &OutputRef,
    reduce: u32,
) -> Result<(Split, Vec<u8>)> {
    let url = format!(
        "{}/ws/v1/node/shuffle/{application}/{}/{reduce}",
        o.node, o.output
    );
    let mut pause = FETCH_RETRY_AFTER;
    for tries in 1.. {
        let got = authorized(http.get(&url), job_token().as_deref())
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.bytes())
            .map_err(anyhow::Error::from)
            // A damaged partition (its CRC-32 trailer disagrees) is a failed fetch too: the
            // master runs its map again rather than every reduce attempt failing on it.
            .and_then(|bytes| {
                yard_appmaster::apps::records::Reader::new(&bytes)?;
                Ok(bytes)
            });
        match got {
            Ok(bytes) => return Ok((o.split, bytes.to_vec())),
            Err(e) if tries < FETCH_TRIES => {
                eprintln!("reduce {reduce}: fetching map output {url}: {e:#}; trying again");
                std::thread::sleep(pause);
                pause *= 2;
            }
            Err(e) => {
                return Err(e.context(format!("fetching map output {url} ({tries} tries)")));
            }
        }
    }
    unreachable!("the loop returns")
}

fn reduce_task(
    spec: &TaskSpec,
    http: &reqwest::blocking::Client,
    base: &str,
    reduce: u32,
    population: yard_appmaster::apps::Population,
    progress: &Progress,
) -> Result<Done> {
    // The shuffle: fetch every map output as the master lists it, until it says no more come.
    // An output that cannot be fetched is reported to the master (Hadoop's fetch-failure
    // notification), which runs its map again and lists the new output (or drops the map):
    // the reducer waits for that instead of failing. A split fetched once is not fetched
    // again; of a split listed twice in one answer, the later (re-run) entry is taken.
    let fetcher = fetch_client();
    let mut fetched: Vec<(Split, Vec<u8>)> = Vec::new();
    let mut have: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut missing: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    // Entries of the master's list read so far (lost outputs' entries included).
    let mut seen = 0;
    let (began, mut polls, mut waited) = (Instant::now(), 0, Duration::ZERO);
    loop {
        polls += 1;
        let asked = Instant::now();
        let outputs: Outputs = post(http, &format!("{base}/outputs"), &json!({ "from": seen }))?;
        waited += asked.elapsed();
        if outputs.kill {
            killed();
        }
        seen += outputs.outputs.len();
        let mut todo: Vec<OutputRef> = Vec::new();
        let mut slot: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for o in outputs.outputs {
            if have.contains(&o.split.index) {
                continue;
            }
            match slot.get(&o.split.index) {
                Some(&i) => todo[i] = o,
                None => {
                    slot.insert(o.split.index, todo.len());
                    todo.push(o);
                }
            }
        }
        let mut reported = false;
        // Fetched a few at a time: per-request latency, not bytes, bounds a small shuffle.
        for batch in todo.chunks(FETCH_PARALLELISM) {
            // Cut by the deadline guard: no more fetching, the answer is from what is here.
            if progress.is_cut() {
                break;
            }
            let fetching = Instant::now();
            let got: Vec<Result<(Split, Vec<u8>)>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|o| scope.spawn(|| fetch(&fetcher, &spec.application, o, reduce)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(anyhow!("a fetch panicked")))
                    })
                    .collect()
            });
            let fetch_seconds = fetching.elapsed().as_secs_f64();
            let mut bytes = 0;
            for (o, output) in batch.iter().zip(got) {
                match output {
                    Ok((split, data)) => {
                        bytes += data.len();
                        have.insert(split.index);
                        missing.remove(&split.index);
                        fetched.push((split, data));
                    }
                    Err(e) => {
                        eprintln!("reduce {reduce}: {e:#}; telling the master");
                        let reply: Reply = post(
                            http,
                            &format!("{base}/fetch-failure"),
                            &json!({ "output": o.output, "node": o.node, "reason": format!("{e:#}") }),
                        )?;
                        if reply.kill {
                            killed();
                        }
                        missing.insert(o.split.index);
                        reported = true;
                    }
                }
            }
            let _: Reply = post(
                http,
                &format!("{base}/shuffled"),
                &json!({ "bytes": bytes, "seconds": fetch_seconds }),
            )?;
        }
        // A report may have the master run a map again: ask once more before taking
        // `complete` as final.
        if (outputs.complete && !reported) || progress.is_cut() {
            break;
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "reduce {reduce}: the outputs of splits {missing:?} were lost and their maps not run again: reducing without them"
        );
    }
    progress.set(0.5);
    let bytes: u64 = fetched.iter().map(|(_, b)| b.len() as u64).sum();
    let fetch_seconds = began.elapsed().as_secs_f64();
    eprintln!(
        "reduce {reduce}: {} map outputs, {bytes} bytes in {fetch_seconds:.3} s ({polls} polls, {:.3} s waiting for maps)",
        fetched.len(),
        waited.as_secs_f64()
    );
    let reply: Reply = post(http, &format!("{base}/ready"), &json!({ "bytes": bytes }))?;
    if reply.kill {
        killed();
    }
    if reply.cut {
        progress.cut();
    }
    // Dart Alg. 5: whole map partitions, chosen at random, down to what the master keeps.
    let sizes: Vec<u64> = fetched.iter().map(|(_, b)| b.len() as u64).collect();
    let mut rng = Rng::seed_from_u64(spec.seed ^ (u64::from(reduce) << 32));
    let keep = reply.keep_bytes.unwrap_or(bytes);
    let mut chosen = sample_partitions(&sizes, keep, &mut rng);
    if !matches!(spec.app, AppSpec::Synthetic { .. }) {
        // Folded in a seeded random order, so that a cut leaves a random sample of blocks.
        chosen.shuffle(&mut rng);
    }
    let kept: Vec<(Split, &[u8])> = chosen
        .iter()
        .map(|&i| (fetched[i].0, fetched[i].1.as_slice()))
        .collect();
    // The answer's tail, measured part by part (issue 29): the fold from here, then the
    // output part's write; the report's own time is the master's to see.
    let folding = Instant::now();
    let mut kept_bytes: u64 = chosen.iter().map(|&i| sizes[i]).sum();
    let mut reducer_stdout = None;
    let partial = if let AppSpec::Synthetic { reduce_seconds, .. } = &spec.app {
        let seconds = reduce_seconds.get(reduce as usize).copied().unwrap_or(0.0);
        // The recorded time, scaled to the input kept (f(d) is the master's to learn).
        let share = if bytes == 0 {
            1.0
        } else {
            kept_bytes as f64 / bytes as f64
        };
        // Cut by the deadline guard, it has folded in only the share of its input it held for.
        let held = hold(seconds * share, progress);
        kept_bytes = (kept_bytes as f64 * held) as u64;
        spec.app.reduce(population, &kept)
    } else if let (
        AppSpec::Streaming {
            reducer,
            cmdenv,
            files,
            ..
        },
        // `-reducer aggregate` is yard's own fold (`apps/aggregate.rs`), cut as a built-in's.
        false,
    ) = (&spec.app, spec.app.is_aggregate())
    {
        // The command runs once over what was fetched, sorted. A cut that came while it
        // fetched leaves what was fetched whole, as a built-in's fold does (the command is
        // not started on nothing); one that comes while the command runs closes its stdin
        // at the next key boundary, and the command answers for the keys it was given.
        let (mut partial, stdin) = spec.app.reducer_input(population, &kept, &mut || false)?;
        if let Some(reducer) = reducer {
            let place = Workplace::new(&spec.attempt, files)?;
            let cut_while_fetching = progress.is_cut();
            let heard = progress.clone();
            let (stdout, cut) = place
                .run_until(
                    "reducer",
                    reducer,
                    cmdenv,
                    &stdin,
                    Box::new(move || !cut_while_fetching && heard.is_cut()),
                )
                .with_context(|| format!("reduce {reduce}"))?;
            (partial.output, partial.output_lines) = streaming::output_lines(&stdout);
            reducer_stdout = Some(stdout);
            if let Some(cut) = cut {
                // The answer covers what the command was fed: the policy counts a cut reduce
                // by the bytes it reports folded (`Done::output_bytes`, into the processed
                // fraction), so the kept bytes shrink by the share of the sorted lines fed,
                // taken as the same share of the partitions' bytes.
                kept_bytes = (kept_bytes as f64 * cut.fed_fraction()) as u64;
                partial.command_cut = Some(cut);
            }
        }
        Ok(partial)
    } else {
        // A built-in app's fold hears a cut that comes while it folds, between partitions,
        // and answers from those it folded: what it reports kept is those. A cut that came
        // while it fetched stopped the fetching; what was fetched is folded in full (a word
        // count's fold is milliseconds, and the cut's measured cost, `liveCosts.cut`, takes in
        // the fold where it is not): else a reduce cut while waiting for a hung map's output
        // would answer from one partition of the many it holds.
        let cut_while_fetching = progress.is_cut();
        let partial = spec.app.reduce_until(population, &kept, &mut || {
            !cut_while_fetching && progress.is_cut()
        });
        if let Ok(p) = &partial {
            if p.input_bytes < kept_bytes {
                eprintln!(
                    "reduce {reduce}: cut while folding: {} of {} partitions, {} of {kept_bytes} bytes",
                    p.kept,
                    kept.len(),
                    p.input_bytes
                );
            }
            kept_bytes = p.input_bytes;
        }
        partial
    }
    .with_context(|| format!("reduce {reduce}"))?;
    let fold_seconds = folding.elapsed().as_secs_f64();
    let writing = Instant::now();
    crate::output::reduce_part(http, base, spec, reduce, reducer_stdout, &kept, &partial)?;
    let write_seconds = writing.elapsed().as_secs_f64();
    progress.set(1.0);
    let written = serde_json::to_vec(&partial).map_or(0, |json| json.len() as u64);
    let tail = ReduceTail {
        fetch_seconds,
        fold_seconds,
        write_seconds,
    };
    eprintln!(
        "reduce {reduce}: folded {kept_bytes} bytes of {} partitions in {fold_seconds:.3} s ({}), output part in {write_seconds:.3} s; reporting",
        partial.kept,
        tail.fold_rate(kept_bytes)
    );
    Ok(Done {
        output_bytes: kept_bytes,
        stats: None,
        partial: Some(partial),
        riders: Vec::new(),
        measured: Some(Measured {
            input_bytes: bytes,
            output_bytes: written,
            seconds: began.elapsed().saturating_sub(waited).as_secs_f64(),
            disk_rate_env: Measured::disk_rate_env(),
            tail: Some(tail),
        }),
    })
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;
    use std::sync::Mutex;

    use super::*;
    use yard_wire::protocol::sha256_hex;

    /// An HTTP server on 127.0.0.1 answering every request with `body`; its `host:port` and
    /// the heads of the requests it received.
    fn serve(body: &[u8]) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (seen, body) = (heads.clone(), body.to_vec());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (mut head, mut byte) = (Vec::new(), [0u8; 1]);
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_lowercase();
                seen.lock().unwrap().push(head);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        (addr, heads)
    }

    /// A `host:port` nothing listens on.
    fn nobody() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    }

    /// A data directory holding `bytes` as this node's replica of `ds/b0`.
    fn local_replica(bytes: &[u8]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ds")).unwrap();
        std::fs::write(dir.path().join("ds").join("b0"), bytes).unwrap();
        dir
    }

    fn block(replicas: &[&String], sha256: Option<String>) -> BlockRef {
        BlockRef {
            dataset: "ds".into(),
            block: "b0".into(),
            replicas: replicas.iter().map(|r| r.to_string()).collect(),
            sha256,
        }
    }

    const GOOD: &[u8] = b"one two\nthree\n";
    const DAMAGED: &[u8] = b"one twp\nthree\n";

    #[test]
    fn a_damaged_local_replica_falls_back_to_a_replica_with_the_recorded_digest() {
        let here = local_replica(DAMAGED);
        let gone = nobody();
        let (damaged, damaged_heads) = serve(DAMAGED);
        let (good, good_heads) = serve(GOOD);
        let b = block(&[&gone, &damaged, &good], Some(sha256_hex(GOOD)));
        let bytes = read_block(&http(), here.path(), &b, Some("job-secret")).unwrap();
        assert_eq!(bytes, GOOD);
        // The replicas were tried in order, each with the job token.
        for heads in [&damaged_heads, &good_heads] {
            let heads = heads.lock().unwrap();
            assert_eq!(heads.len(), 1, "{heads:?}");
            assert!(
                heads[0].starts_with("get /ws/v1/node/blocks/ds/b0 "),
                "{heads:?}"
            );
            assert!(
                heads[0].contains("\r\nauthorization: bearer job-secret\r\n"),
                "{heads:?}"
            );
        }
    }

    #[test]
    fn a_block_whose_every_replica_fails_fails_the_map_saying_why_each_did() {
        let here = local_replica(DAMAGED);
        let gone = nobody();
        let (damaged, _) = serve(DAMAGED);
        let b = block(&[&damaged, &gone], Some(sha256_hex(GOOD)));
        let err = format!(
            "{:#}",
            read_block(&http(), here.path(), &b, None).unwrap_err()
        );
        assert!(
            err.starts_with("no replica of block ds/b0 could be read (tried 3)"),
            "{err}"
        );
        let mismatch = format!(
            "sha256 {}, expected {}",
            sha256_hex(DAMAGED),
            sha256_hex(GOOD)
        );
        let local = here.path().join("ds").join("b0");
        assert!(
            err.contains(&format!(
                "the local data directory ({}): {mismatch}",
                local.display()
            )),
            "{err}"
        );
        assert!(err.contains(&format!("{damaged}: {mismatch}")), "{err}");
        assert!(err.contains(&format!("{gone}: ")), "{err}");

        let none = block(&[], Some(sha256_hex(GOOD)));
        let empty = tempfile::tempdir().unwrap();
        let err = format!(
            "{:#}",
            read_block(&http(), empty.path(), &none, None).unwrap_err()
        );
        assert!(err.contains("the block map lists no replica"), "{err}");
    }

    #[test]
    fn a_block_without_a_digest_is_read_unchecked_and_no_token_means_no_header() {
        let here = local_replica(DAMAGED);
        let (remote, heads) = serve(GOOD);
        let b = block(&[&remote], None);
        assert_eq!(read_block(&http(), here.path(), &b, None).unwrap(), DAMAGED);
        assert!(
            heads.lock().unwrap().is_empty(),
            "the local copy was enough"
        );

        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(
            read_block(&http(), elsewhere.path(), &b, None).unwrap(),
            GOOD
        );
        let heads = heads.lock().unwrap();
        assert_eq!(heads.len(), 1);
        assert!(!heads[0].contains("authorization"), "{heads:?}");
    }

    /// A `kill` is a kill while the attempt works, and the end of its reports once it has
    /// finished (the master answers `kill` to any attempt no longer live, a done one too);
    /// a cut is heard once.
    #[test]
    fn a_kill_after_the_work_is_done_ends_the_reports_quietly() {
        let p = Progress::new();
        let kill = Reply {
            kill: true,
            ..Reply::default()
        };
        let cut = Reply {
            cut: true,
            ..Reply::default()
        };
        assert_eq!(heard(&Reply::default(), &p), Heard::Nothing);
        assert_eq!(heard(&kill, &p), Heard::Kill);
        assert_eq!(heard(&cut, &p), Heard::Cut);
        p.cut();
        assert_eq!(heard(&cut, &p), Heard::Nothing);
        assert_eq!(heard(&kill, &p), Heard::Kill, "a cut attempt still works");
        p.finish();
        assert_eq!(heard(&kill, &p), Heard::Over);
        assert_eq!(heard(&Reply::default(), &p), Heard::Nothing);
    }

    #[test]
    fn hashing_while_reading_gives_the_bytes_and_their_digest() {
        let data: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
        let (bytes, digest) = read_hashing(&data[..], None).unwrap();
        assert_eq!(bytes, data);
        assert_eq!(digest, sha256_hex(&data));
    }
}
