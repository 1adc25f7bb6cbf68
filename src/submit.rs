//! The client side of a MapReduce job: `yard submit wordcount --input NAME --deadline 30s`
//! sends the job to the rm (`POST /ws/v1/yard/mapreduce/jobs`), which starts its master
//! (`yard mr-master`); follows its progress there (a bar: maps done of launched, the estimate
//! against the deadline), and prints the answer with its processed fraction and bounds.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use yard_appmaster::policy::PolicyKind;
use yard_appmaster::submission::{FILES_CAP, MapReduceJob, ShippedFile};
use yard_wire::deadline::Deadline;
use yard_wire::jobs::{JobView, ProgressView};
use yard_wire::protocol::JobPhase;
use yard_wire::views::FinalApplicationStatus;

use crate::client::{Client, Finished, Rm, parse_duration, print_json, render};
use crate::sim::BadInput;

/// A MapReduce job's settings, shared by `yard submit APP` and `yard demo`.
#[derive(Args, Clone, Debug)]
pub(crate) struct JobArgs {
    /// The dataset to read (`yard data put`); not for synthetic.
    #[arg(long)]
    pub(crate) input: Option<String>,
    /// The task policy: dart (yard's), dart-paper (the paper's algorithm as printed), aria, ps,
    /// late, full (every map, the exact answer), d-wor, d-wmr, d-wost (dart-paper's ablations).
    #[arg(long, default_value = "dart")]
    pub(crate) policy: PolicyKind,
    /// An application parameter, key=value (repeat): pattern=REGEX for grep; field=N, k=N for
    /// topk; top=N; mapper=CMD, reducer=CMD|NONE, cmdenv=K=V for streaming.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    #[arg(long, default_value_t = 2)]
    pub(crate) reduces: u32,
    /// Seeds the master's random choices (which blocks the task sampler reads, the order an
    /// aggregate job's maps are launched in, so which blocks a deadline lets it read; reduce
    /// sampling). Without it each run draws its own, which `submitted` prints and the job's
    /// spec shows: pass it back to read the same sample again.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Memory of each task container.
    #[arg(long, default_value_t = 256)]
    pub(crate) memory_mb: u64,
    /// Only run the task sampler (Dart §5.1) to profile the job; no answer.
    #[arg(long)]
    pub(crate) sample_only: bool,
    /// Synthetic jobs: maps, seconds per map, bytes each map writes, seconds per reduce.
    #[arg(long, default_value_t = 0)]
    pub(crate) maps: u32,
    #[arg(long, default_value_t = 1.0)]
    pub(crate) map_seconds: f64,
    #[arg(long, default_value_t = 1 << 16)]
    pub(crate) map_output_bytes: u64,
    #[arg(long, default_value_t = 1.0)]
    pub(crate) reduce_seconds: f64,
    /// Synthetic jobs: replay this trace's job (its maps' and reduces' recorded durations).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<std::path::PathBuf>,
    /// The trace's job: its id, or its index in the file.
    #[arg(long, default_value = "0")]
    pub(crate) job: String,
    /// Multiplies the trace's durations (0.01 replays a 100 s task in 1 s).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) time_scale: f64,
    /// Every map of a built-in app takes at least this many seconds: rehearse a deadline on a
    /// small dataset, where maps would otherwise take milliseconds (the demo and the tests
    /// use it; the answer is unchanged).
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub(crate) map_min_seconds: f64,
    /// The deadline guard fires this long before the deadline: maps stop, and the reduces
    /// answer from what they have folded in, so the answer arrives by the deadline (0: no
    /// guard; `full` never has one). With `dart` it is a floor: `dart` stops its maps at the
    /// last moment its estimate leaves for the answer, and here only what will no longer end
    /// in time.
    #[arg(long, default_value_t = yard_appmaster_live::master::DEFAULT_GUARD_SECONDS, value_name = "SECONDS")]
    pub(crate) guard_seconds: f64,
    /// Fault injection: the map of this split hangs until it is killed (the guard's tests).
    #[arg(long, hide = true)]
    pub(crate) hang_split: Option<u32>,
    /// At most this many task containers held at once (the master's own not counted).
    #[arg(long, value_name = "N")]
    pub(crate) max_containers: Option<u32>,
    /// Share one scan of --input with every other shared-scan job over it (CIRCUMFLEX): each
    /// block is read once for all the jobs attached when it is read. Under full (or dart
    /// without --deadline) the job reads every block, the exact answer; under dart with a
    /// --deadline it answers by then from the blocks read. Other policies are refused.
    #[arg(long)]
    pub(crate) shared_scan: bool,
    /// Write the job's output as this new dataset (Hadoop's -output): one part per reduce,
    /// part-r-00000, …, owned by you; `yard data cat NAME` prints it. A name that exists is
    /// refused before anything runs.
    #[arg(long, value_name = "NAME")]
    pub(crate) output: Option<String>,
    #[command(flatten)]
    pub(crate) more: MoreJobArgs,
}

/// A job's settings beyond the built-in apps' (`yard streaming` sets them from Hadoop's
/// options; the demo leaves them out).
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct MoreJobArgs {
    /// Another dataset to read after --input (repeat): its blocks are maps too.
    #[arg(long = "more-input", value_name = "NAME")]
    pub(crate) more_inputs: Vec<String>,
    /// Streaming: a file placed in each task's working directory (repeat), at most 64 KiB
    /// with the others; an executable file stays executable.
    #[arg(long = "file", value_name = "PATH")]
    pub(crate) files: Vec<std::path::PathBuf>,
    /// Attempts a map may take before the job fails [default: 4, Hadoop's].
    #[arg(long, value_name = "N")]
    pub(crate) map_max_attempts: Option<u32>,
    /// Attempts a reduce may take before the job fails [default: 4, Hadoop's].
    #[arg(long, value_name = "N")]
    pub(crate) reduce_max_attempts: Option<u32>,
}

impl MoreJobArgs {
    /// Sets them on `job`, reading the files: one that cannot be read is bad input naming it.
    fn apply(&self, job: &mut MapReduceJob) -> Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        job.more_inputs.clone_from(&self.more_inputs);
        job.map_max_attempts = self.map_max_attempts;
        job.reduce_max_attempts = self.reduce_max_attempts;
        let mut total = 0u64;
        for path in &self.files {
            let shown = path.display();
            let meta = std::fs::metadata(path)
                .map_err(|e| BadInput(format!("--file {shown}: cannot read it: {e}")))?;
            if !meta.is_file() {
                return Err(BadInput(format!("--file {shown}: not a file")).into());
            }
            // Checked before it is read: a large file is refused, not loaded.
            total += meta.len();
            if total > FILES_CAP as u64 {
                return Err(BadInput(format!(
                    "--file {shown}: the shipped files hold {total} bytes so far; the cap is \
                     {FILES_CAP} bytes together (they travel in the job): put data in a \
                     dataset (`yard data put`) instead"
                ))
                .into());
            }
            let bytes = std::fs::read(path)
                .map_err(|e| BadInput(format!("--file {shown}: cannot read it: {e}")))?;
            let name = path
                .file_name()
                .ok_or_else(|| BadInput(format!("--file {shown}: names no file")))?
                .to_string_lossy();
            let executable = meta.permissions().mode() & 0o111 != 0;
            job.files.push(ShippedFile::new(&name, &bytes, executable));
        }
        Ok(())
    }
}

/// `'…'` quoting for `/bin/sh -c`, which the rm runs a master's command under.
pub(crate) fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// `mapSeconds` → `--map-seconds`: a job's JSON field as this command's flag.
fn flag_of(field: &str) -> String {
    let field = field.strip_prefix("job.").unwrap_or(field);
    match field {
        "params" => return "--param".into(),
        "moreInputs" => return "--more-input".into(),
        "files" => return "--file".into(),
        _ => {}
    }
    let mut flag = String::from("--");
    for c in field.chars() {
        if c.is_ascii_uppercase() {
            flag.push('-');
        }
        flag.push(c.to_ascii_lowercase());
    }
    flag
}

impl JobArgs {
    /// The job as the rm's `POST /ws/v1/yard/mapreduce/jobs` takes it, checked as the rm
    /// will check it (with flags named as this command names them).
    fn to_job(&self, app: &str) -> Result<MapReduceJob> {
        let mut job = MapReduceJob::new(app, self.input.as_deref());
        for p in &self.params {
            let (key, value) = p
                .split_once('=')
                .ok_or_else(|| BadInput(format!("--param {p:?}: give KEY=VALUE")))?;
            job.params.insert(key.into(), value.into());
        }
        job.policy = self.policy;
        job.reduces = self.reduces;
        job.seed = self.seed.unwrap_or_else(draw_seed);
        job.memory_mb = self.memory_mb;
        job.sample_only = self.sample_only;
        job.map_min_seconds = self.map_min_seconds;
        job.guard_seconds = self.guard_seconds;
        job.hang_split = self.hang_split;
        job.max_containers = self.max_containers;
        job.shared_scan = self.shared_scan;
        job.output = self.output.clone();
        self.more.apply(&mut job)?;
        if let (true, Some(trace)) = (app == "synthetic", &self.trace) {
            // The master reads the trace too: it must be readable and hold the job. The rm
            // needs its whole path (the master runs in its container's directory).
            yard_appmaster_live::synthetic::from_trace(trace, &self.job, self.time_scale)?;
            job.trace = Some(std::path::absolute(trace)?.display().to_string());
            job.trace_job = Some(self.job.clone());
            job.time_scale = Some(self.time_scale);
        } else if app == "synthetic" {
            job.maps = Some(self.maps);
            job.map_seconds = Some(self.map_seconds);
            job.map_output_bytes = Some(self.map_output_bytes);
            job.reduce_seconds = Some(self.reduce_seconds);
        }
        // The problem names what to fix (`yard data ls` for an input), the flag says where.
        job.validate()
            .map_err(|p| BadInput(format!("{}: {}", flag_of(p.field), p.problem)))?;
        Ok(job)
    }
}

/// A submitted job.
pub(crate) struct Submitted {
    pub(crate) id: String,
    /// The job's seed, given or drawn.
    pub(crate) seed: u64,
}

/// A seed for a job submitted without one: two runs of an aggregate job read different
/// samples (their maps launch in different orders), and each says which it read. From std's
/// per-process random hash keys, which the OS seeds and every `RandomState` steps on.
fn draw_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(epoch_ms())
}

pub(crate) fn epoch_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Submits `app` over `job` (`POST /ws/v1/yard/mapreduce/jobs`); the deadline counts from
/// now, on the rm's clock.
pub(crate) fn submit_job(
    client: &Client,
    app: &str,
    job: &JobArgs,
    deadline: Option<Duration>,
    (name, queue, user): (&str, &str, Option<&str>),
) -> Result<Submitted> {
    let job = job.to_job(app)?;
    let seed = job.seed;
    let mut body = json!({ "job": job, "name": name, "queue": queue });
    if let Some(user) = user {
        body["user"] = json!(user);
    }
    if let Some(after) = deadline {
        body["deadlineInMs"] = json!(after.as_millis().max(1) as u64);
    }
    let job = client.typed(|rm| rm.submit_job(&body))?;
    Ok(Submitted { id: job.id, seed })
}

/// Waits for the job to end, drawing a progress bar on stderr (hidden when it is not a
/// terminal); returns its view (answer included).
pub(crate) fn wait(client: &Client, job: &Submitted, patience: Duration) -> Result<JobView> {
    let bar = ProgressBar::new(1);
    bar.set_style(ProgressStyle::with_template(JOB_BAR).expect("a valid template"));
    let give_up = Instant::now() + patience;
    loop {
        let view = client.typed(|rm| rm.job(&job.id))?;
        let state = view.state;
        if state.is_final() {
            bar.finish_and_clear();
            return Ok(view);
        }
        match &view.progress {
            Some(p) => show(&bar, p),
            None => {
                bar.set_message(state.name().to_lowercase());
                bar.tick();
            }
        }
        if Instant::now() > give_up {
            bar.abandon();
            bail!(
                "{} is still {state} after {} s; it keeps running (`yard app {}` shows it later)",
                job.id,
                patience.as_secs(),
                job.id
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What the bar shows: the job proper's maps as a bar (done of all), or, while the task
/// sampler runs, no bar (its few maps are not the job's: the bar would run to 3/3, then back
/// to 0/33); and a message of launches, reduces and the estimate against the deadline.
struct BarLine {
    maps: Option<(u64, u64)>,
    message: String,
}

fn bar_line(p: &ProgressView) -> BarLine {
    let (seen, now) = (&p.progress, p.at_ms);
    let sampling = seen.phase == JobPhase::Sampling;
    let mut message = match sampling {
        true => format!(
            "task sampler: {}/{} maps ({} launched) · reduces {}/{}",
            seen.maps_done, seen.maps, seen.maps_launched, seen.reduces_done, seen.reduces
        ),
        false => format!(
            "({} launched) · reduces {}/{}",
            seen.maps_launched, seen.reduces_done, seen.reduces
        ),
    };
    if let Some(end) = p.estimated_end_ms {
        let _ = write!(message, " · answer in {:.1} s", (end - now) as f64 / 1000.0);
        if let Some(slack) = p.slack_ms {
            let verdict = if slack >= 0 { "before" } else { "after" };
            let _ = write!(
                message,
                ", {:.1} s {verdict} the deadline",
                slack.abs() as f64 / 1000.0
            );
        }
    }
    BarLine {
        maps: (!sampling).then(|| (u64::from(seen.maps_done), u64::from(seen.maps).max(1))),
        message,
    }
}

fn show(bar: &ProgressBar, p: &ProgressView) {
    let line = bar_line(p);
    let template = match line.maps {
        Some((done, all)) => {
            bar.set_length(all);
            bar.set_position(done);
            JOB_BAR
        }
        None => SAMPLER_BAR,
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(line.message);
}

const JOB_BAR: &str = "{spinner} [{bar:30}] {pos}/{len} maps {msg}";
const SAMPLER_BAR: &str = "{spinner} {msg}";

#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    rm: Rm,
    /// A built-in MapReduce application: wordcount, grep, topk, index, streaming, synthetic
    /// (`yard streaming` takes Hadoop's options for it). The command
    /// waits for the answer and prints it (with --no-wait, only the id).
    #[arg(value_name = "APP", required_unless_present = "command")]
    app: Option<String>,
    /// Instead of an APP: the command the application's master runs (under /bin/sh -c).
    #[arg(long, conflicts_with = "app")]
    command: Option<String>,
    #[command(flatten)]
    job: JobArgs,
    /// The application's name [default: the APP, or yard-app].
    #[arg(long)]
    name: Option<String>,
    #[arg(long, default_value = "default")]
    queue: String,
    /// Submit as this user (admins only; a user submits as itself) [default: the user your
    /// token names].
    #[arg(long)]
    user: Option<String>,
    /// When the answer is wanted, from now: 90s, 5m, 1h, 500ms (a bare number is seconds).
    #[arg(long, value_parser = parse_duration)]
    deadline: Option<Duration>,
    /// Print the id and return at once (an APP's answer is then read with `yard app ID`).
    #[arg(long)]
    no_wait: bool,
    /// Give up waiting for an APP's answer (the job keeps running) after this many seconds.
    #[arg(long, default_value_t = 3600)]
    wait_secs: u64,
    /// Print yard's view of the finished application (answer included) as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn submit(args: SubmitArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    let name = args
        .name
        .clone()
        .or_else(|| args.app.clone())
        .unwrap_or_else(|| "yard-app".into());
    let owner = (name.as_str(), args.queue.as_str(), args.user.as_deref());
    let Some(app) = &args.app else {
        let command = args.command.as_deref().unwrap_or_default();
        let deadline = args
            .deadline
            .map(|after| Deadline::after(epoch_ms(), after.as_millis() as i64));
        let id = client.submit_by(owner.0, owner.1, owner.2, command, deadline)?;
        crate::print(&format!("{id}\n"))?;
        return Ok(());
    };
    let job = submit_job(&client, app, &args.job, args.deadline, owner)?;
    if args.no_wait {
        crate::print(&format!("{}\n", job.id))?;
        return Ok(());
    }
    eprintln!(
        "submitted {} (seed {}: --seed {} repeats its random choices)",
        job.id, job.seed, job.seed
    );
    let finished = wait(&client, &job, Duration::from_secs(args.wait_secs))?;
    let status = finished.final_status;
    if args.json {
        // As `yard app --json` shows an application.
        print_json(&json!({ "app": finished }))?;
    } else {
        crate::print(&render(&Finished::from(&finished)))?;
    }
    if status != FinalApplicationStatus::Succeeded {
        anyhow::bail!(
            "{} ended {status}; its containers' logs: yard logs {}",
            job.id,
            job.id
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        job: super::JobArgs,
    }

    fn job(flags: &[&str]) -> yard_appmaster::submission::MapReduceJob {
        let argv = std::iter::once("yard").chain(flags.iter().copied());
        Flags::try_parse_from(argv)
            .unwrap()
            .job
            .to_job("wordcount")
            .unwrap()
    }

    /// The task sampler's maps are not drawn as the job's bar: it shows only the job proper's
    /// (a bar at 3/3 of the sample, then back at 0/33, was the jump this prevents).
    #[test]
    fn the_bar_counts_the_job_propers_maps_and_the_sampler_apart() {
        let view = |phase: &str, done: u32, maps: u32| -> yard_wire::jobs::ProgressView {
            serde_json::from_value(serde_json::json!({
                "phase": phase, "policy": "dart", "maps": maps, "mapsLaunched": done,
                "mapsDone": done, "k": done, "mapPhaseClosed": false, "reduces": 2,
                "reducesDone": 0, "processedBytes": 0, "inputBytes": 1, "guarded": false,
                "elapsedSeconds": 1.0, "estimateSeconds": null, "atMs": 1_000,
                "estimatedEndMs": 3_500, "slackMs": -500,
            }))
            .unwrap()
        };
        let sampling = super::bar_line(&view("sampling", 3, 3));
        assert_eq!(sampling.maps, None);
        assert!(
            sampling.message.starts_with("task sampler: 3/3 maps"),
            "{}",
            sampling.message
        );
        let job = super::bar_line(&view("running", 0, 33));
        assert_eq!(job.maps, Some((0, 33)));
        assert_eq!(
            job.message,
            "(0 launched) · reduces 0/2 · answer in 2.5 s, 0.5 s after the deadline"
        );
    }

    /// A job without --seed draws its own, so two runs read different samples; a given one is
    /// sent as given, so a run can be repeated.
    #[test]
    fn a_job_without_a_seed_draws_one_and_a_given_seed_is_kept() {
        let drawn: std::collections::BTreeSet<u64> =
            (0..20).map(|_| job(&["--input", "logs"]).seed).collect();
        assert_eq!(drawn.len(), 20, "{drawn:?}");
        assert_eq!(job(&["--input", "logs", "--seed", "7"]).seed, 7);
    }
}
