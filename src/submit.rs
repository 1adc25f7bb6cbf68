//! The client side of a MapReduce job: `yard submit wordcount --input NAME --deadline 30s`
//! submits an application whose master is `yard mr-master`, follows its progress on the
//! master's tracking URL (a bar: maps done of launched, the estimate against the deadline),
//! and prints the answer with its processed fraction and bounds.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use yard_appmaster::apps::AppSpec;
use yard_appmaster::policy::PolicyKind;

use crate::client::{Client, Rm, parse_duration, print_json, render, text};
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
    /// An application parameter, key=value (repeat): pattern=REGEX for grep; field=N, k=N for topk; top=N.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    #[arg(long, default_value_t = 2)]
    pub(crate) reduces: u32,
    /// Seeds the master's random choices (which blocks the task sampler reads, reduce sampling).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
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
    /// guard; `full` never has one).
    #[arg(long, default_value_t = yard_appmaster_live::master::DEFAULT_GUARD_SECONDS, value_name = "SECONDS")]
    pub(crate) guard_seconds: f64,
    /// Fault injection: the map of this split hangs until it is killed (the guard's tests).
    #[arg(long, hide = true)]
    pub(crate) hang_split: Option<u32>,
}

/// `'…'` quoting for `/bin/sh -c`, which the rm runs a master's command under.
pub(crate) fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

impl JobArgs {
    /// Refuses what the master would refuse, before anything is submitted.
    fn check(&self, app: &str) -> Result<()> {
        if app == "synthetic"
            && let Some(trace) = &self.trace
        {
            // The master reads the trace too: it must be readable and hold the job.
            yard_appmaster_live::synthetic::from_trace(trace, &self.job, self.time_scale)?;
        } else if app == "synthetic" {
            if self.maps == 0 {
                return Err(BadInput("a synthetic job needs --maps N (N ≥ 1)".into()).into());
            }
            if !(self.map_seconds >= 0.0 && self.reduce_seconds >= 0.0) {
                return Err(BadInput("--map-seconds and --reduce-seconds are ≥ 0".into()).into());
            }
        } else {
            AppSpec::parse(app, &self.params).map_err(|e| BadInput(e.to_string()))?;
            if self.input.is_none() {
                return Err(BadInput(format!(
                    "{app} reads a dataset: name it with --input (see `yard data ls`)"
                ))
                .into());
            }
        }
        if self.reduces == 0 {
            return Err(BadInput("--reduces must be at least 1".into()).into());
        }
        if !(0.0..=3_600.0).contains(&self.guard_seconds) {
            return Err(BadInput(format!(
                "--guard-seconds {} is outside 0 to 3600",
                self.guard_seconds
            ))
            .into());
        }
        if !(0.0..=86_400.0).contains(&self.map_min_seconds) {
            return Err(BadInput(format!(
                "--map-min-seconds {} is outside 0 to 86400",
                self.map_min_seconds
            ))
            .into());
        }
        Ok(())
    }

    /// The master's command line.
    fn master_command(&self, app: &str, deadline_ms: Option<i64>) -> Result<String> {
        let exe = std::env::current_exe()?;
        let mut args: Vec<String> = vec![
            exe.display().to_string(),
            "mr-master".into(),
            format!("--app={app}"),
            format!("--policy={}", self.policy),
            format!("--reduces={}", self.reduces),
            format!("--seed={}", self.seed),
            format!("--memory-mb={}", self.memory_mb),
        ];
        if let Some(input) = &self.input {
            args.push(format!("--input={input}"));
        }
        args.extend(self.params.iter().map(|p| format!("--param={p}")));
        if let Some(d) = deadline_ms {
            args.push(format!("--deadline-ms={d}"));
        }
        if self.sample_only {
            args.push("--sample-only".into());
        }
        if self.map_min_seconds > 0.0 {
            args.push(format!("--map-min-seconds={}", self.map_min_seconds));
        }
        args.push(format!("--guard-seconds={}", self.guard_seconds));
        if let Some(split) = self.hang_split {
            args.push(format!("--hang-split={split}"));
        }
        if let (true, Some(trace)) = (app == "synthetic", &self.trace) {
            let trace = std::path::absolute(trace)?;
            args.extend([
                format!("--trace={}", trace.display()),
                format!("--job={}", self.job),
                format!("--time-scale={}", self.time_scale),
            ]);
        } else if app == "synthetic" {
            args.extend([
                format!("--maps={}", self.maps),
                format!("--map-seconds={}", self.map_seconds),
                format!("--map-output-bytes={}", self.map_output_bytes),
                format!("--reduce-seconds={}", self.reduce_seconds),
            ]);
        }
        Ok(args
            .iter()
            .map(|a| sh_quote(a))
            .collect::<Vec<_>>()
            .join(" "))
    }
}

/// A submitted job: its id and when its answer is due.
pub(crate) struct Submitted {
    pub(crate) id: String,
    pub(crate) deadline_ms: Option<i64>,
}

pub(crate) fn epoch_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Submits `app` over `job`; the deadline counts from now.
pub(crate) fn submit_job(
    client: &Client,
    app: &str,
    job: &JobArgs,
    deadline: Option<Duration>,
    (name, queue, user): (&str, &str, Option<&str>),
) -> Result<Submitted> {
    job.check(app)?;
    if let Some(input) = &job.input {
        // A missing dataset is the user's to fix (a 404 here is bad input, exit 2).
        client.call(
            reqwest::Method::GET,
            &format!("/ws/v1/yard/datasets/{input}"),
            None,
        )?;
    }
    let deadline_ms = deadline.map(|d| epoch_ms() + d.as_millis() as i64);
    let command = job.master_command(app, deadline_ms)?;
    // The deadline is part of the submission: the rm orders and sizes the job by it at once.
    let id = client.submit_by(name, queue, user, &command, deadline_ms)?;
    Ok(Submitted { id, deadline_ms })
}

/// Waits for the job to end, drawing a progress bar on stderr (hidden when it is not a
/// terminal); returns yard's view of the application (answer included).
pub(crate) fn wait(client: &Client, job: &Submitted, patience: Duration) -> Result<Value> {
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} maps {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let give_up = Instant::now() + patience;
    let status_client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()?;
    loop {
        let app = client.call(
            reqwest::Method::GET,
            &format!("/ws/v1/yard/apps/{}", job.id),
            None,
        )?;
        let state = text(&app["app"]["state"]);
        if matches!(state.as_str(), "FINISHED" | "FAILED" | "KILLED") {
            bar.finish_and_clear();
            return Ok(app);
        }
        if let Some(url) = app["app"]["trackingUrl"].as_str()
            && let Ok(status) = status_client
                .get(url)
                .send()
                .and_then(|r| r.json::<Value>())
        {
            show(&bar, &status, job.deadline_ms);
        } else {
            bar.set_message(state.to_lowercase());
            bar.tick();
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

fn show(bar: &ProgressBar, status: &Value, deadline_ms: Option<i64>) {
    bar.set_length(status["maps"].as_u64().unwrap_or(1).max(1));
    bar.set_position(status["mapsDone"].as_u64().unwrap_or(0));
    let mut msg = format!(
        "({} launched) · reduces {}/{}",
        status["mapsLaunched"], status["reducesDone"], status["reduces"]
    );
    if status["phase"] == "sampling" {
        msg.push_str(" · task sampler");
    }
    if let (Some(estimate), Some(elapsed)) =
        (status["estimate"].as_f64(), status["elapsed"].as_f64())
    {
        let _ = write!(msg, " · estimate {estimate:.1} s");
        if let Some(d) = deadline_ms {
            let left = (d - epoch_ms()) as f64 / 1000.0;
            let _ = write!(msg, " vs deadline {:.1} s", elapsed + left.max(0.0));
        }
    }
    bar.set_message(msg);
}

#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    rm: Rm,
    /// A built-in MapReduce application: wordcount, grep, topk, index, synthetic. The command
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
        let deadline_ms = args
            .deadline
            .map(|after| epoch_ms() + after.as_millis() as i64);
        let id = client.submit_by(owner.0, owner.1, owner.2, command, deadline_ms)?;
        crate::print(&format!("{id}\n"))?;
        return Ok(());
    };
    let job = submit_job(&client, app, &args.job, args.deadline, owner)?;
    if args.no_wait {
        crate::print(&format!("{}\n", job.id))?;
        return Ok(());
    }
    eprintln!("submitted {}", job.id);
    let finished = wait(&client, &job, Duration::from_secs(args.wait_secs))?;
    if args.json {
        print_json(&finished)?;
    } else {
        crate::print(&render(&finished))?;
    }
    let status = text(&finished["app"]["finalStatus"]);
    if status != "SUCCEEDED" {
        anyhow::bail!(
            "{} ended {status}; see its master's log on the nodemanager",
            job.id
        );
    }
    Ok(())
}
