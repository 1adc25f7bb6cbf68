//! `yard demo`: yard's main job on a fresh machine. It starts an rm and three nodemanagers on
//! loopback (temporary directories), generates a text dataset and puts it on them, profiles
//! word count with the task sampler (Dart §5.1), then runs the same word count twice under one
//! deadline too tight to read everything: once under `full`, once under `dart`. It prints both
//! side by side against the exact answer, computed directly at the end, and shuts it all down.
//! With `--dart-runs N` the `dart` word count recurs N times under the same deadline: every
//! run's record joins the profile store (kind `wordcount@demo`), so each next run starts from
//! a profile that knows the runs before it (Dart §5.1, the job profiler; §5.3, `T_m^a`
//! initialised from the previous execution), and a table shows its estimate at map close run
//! after run.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use yard_appmaster::apps::AppSpec;
use yard_appmaster::policy::PolicyKind;
use yard_wire::answer::AnswerJob;
use yard_wire::views::FinalApplicationStatus;

use crate::client::{Client, estimate_text, table};
use crate::data::Kind;
use crate::local::{LocalCluster, Shape};
use crate::submit::{JobArgs, submit_job, wait};

#[derive(Args)]
pub(crate) struct DemoArgs {
    /// The dataset's size.
    #[arg(long, default_value = "256MiB", value_parser = crate::data::parse_size)]
    size: u64,
    /// Its block size: one map task per block.
    #[arg(long, default_value = "4MiB", value_parser = crate::data::parse_size)]
    block_size: u64,
    /// The deadline as a share of the full job's time the profile predicts.
    #[arg(long, default_value_t = 0.5)]
    tightness: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The local cluster's nodes.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=16))]
    nodes: u32,
    /// One-core containers per node; the master takes one, the others run tasks. Fewer nodes
    /// and containers make a job of a given size take longer (`--size 1GiB --nodes 1
    /// --vcores 2`: one task at a time).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    vcores: u32,
    /// How many times the `dart` word count runs after `full`, under the same deadline: each
    /// run's record joins the profile store, and a table shows each run's estimate at map
    /// close against when it answered.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    dart_runs: u32,
    /// Keep the temporary directory (daemons' logs, containers' logs, each run's answer as
    /// `full.json`, `dart.json`, then `dart-2.json`, … for `--dart-runs`) instead of deleting
    /// it.
    #[arg(long)]
    keep: bool,
}

/// The deadline guard's floor in the demo: under it `dart` stops its maps at its own last
/// moment (the time left falls to answering from the maps done, the reduces cut the cut's
/// lead before D: `last_moment`), not at the default 1 s floor, which against the demo's
/// deadline of about 2 s is a quarter of it (`guard_margin`) and closed the map phase at 75 %
/// of D. The floor stays as what it is for: past it, only what still ends in time runs.
const DEMO_GUARD_SECONDS: f64 = 0.1;

/// How often the demo runs the task sampler. The profile averages the kind's recent runs
/// (`RECENT_RUNS`): three runs of three maps each average this shared host's load over nine
/// maps and about a second, not three maps in a third of one (the sampler's map probe read the
/// same 4 MiB at 15–117 MB/s in runs minutes apart).
const SAMPLER_RUNS: u64 = 3;

fn step(text: &str) {
    eprintln!("==> {text}");
}

pub(crate) fn demo(args: DemoArgs) -> Result<()> {
    if !(args.tightness > 0.0 && args.tightness < 1.0) {
        return Err(crate::sim::BadInput("--tightness is a share in (0, 1)".into()).into());
    }
    if task_slots(&args) == 0 {
        return Err(crate::sim::BadInput(
            "--nodes × --vcores must leave a container for tasks beside the master's".into(),
        )
        .into());
    }
    let dir = std::env::temp_dir().join(format!("yard-demo-{}", std::process::id()));
    // Ctrl-C or SIGTERM: the cluster is stopped (its daemons run in process groups of their
    // own and do not hear the terminal) and the directory, about 1 GB at the default size,
    // goes unless `--keep` asked for it.
    let stop = crate::local::stop_channel()?;
    let (kept, keep) = (dir.clone(), args.keep);
    std::thread::Builder::new()
        .name("demo-interrupt".into())
        .spawn(move || {
            if stop.recv().is_ok() {
                eprintln!("\ninterrupted: stopping the demo's cluster");
                crate::local::stop_started();
                match keep {
                    true => eprintln!("logs kept in {}", kept.display()),
                    false => {
                        let _ = std::fs::remove_dir_all(&kept);
                    }
                }
                std::process::exit(130);
            }
        })?;
    std::fs::create_dir_all(&dir)?;
    let result = run(&args, &dir);
    if crate::local::interrupted() {
        // The interrupt stopped a daemon under `run` (a nodemanager mid-start, say): its
        // thread is removing the directory and exits 130; an error from `run` is its echo.
        loop {
            std::thread::park();
        }
    }
    if args.keep || result.is_err() {
        eprintln!("logs kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn run(args: &DemoArgs, dir: &Path) -> Result<()> {
    let exe = std::env::current_exe().context("cannot find the yard binary")?;
    step(&format!(
        "starting an rm and {} nodemanager{} on 127.0.0.1 ({} one-core containers each)",
        args.nodes,
        if args.nodes == 1 { "" } else { "s" },
        args.vcores
    ));
    let profiles = dir.join("profiles.db");
    // The demo's cluster leaves its credentials in its own directory, not in ~/.yard. By
    // default two one-core slots per node on three: the master takes one, five run tasks.
    let home = dir.join("home");
    let cluster = LocalCluster::start(&Shape {
        nodes: args.nodes,
        // The job's containers take 256 MB each: memory never binds before the cores.
        memory_mb: 1024.max(256 * u64::from(args.vcores)),
        vcores: args.vcores,
        heartbeat_ms: 100,
        rm_bind: "127.0.0.1:0".into(),
        nm_base_port: None,
        rm_args: Vec::new(),
        dir: dir.to_owned(),
        home: Some(home.clone()),
    })?;
    let (url, client) = (&cluster.url, &cluster.client);

    step(&format!(
        "generating {} MiB of Zipf text and putting it on the nodes in {} KiB blocks",
        args.size >> 20,
        args.block_size >> 10
    ));
    let file = dir.join("text.txt");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
        crate::data::generate(Kind::Text, args.size, args.seed, &mut out)?;
        std::io::Write::flush(&mut out)?;
    }
    let put = Command::new(&exe)
        .env("YARD_HOME", &home)
        .args(["data", "put", "demo"])
        .arg(&file)
        .args([
            "--block-size",
            &args.block_size.to_string(),
            "--replication",
            &args.nodes.min(2).to_string(),
            "--rm",
            url,
        ])
        .output()?;
    if !put.status.success() {
        bail!("yard data put: {}", String::from_utf8_lossy(&put.stderr));
    }
    // The text and its blocks (about three times `--size`) are still dirty in the page
    // cache: written back during the timed runs, they slowed the sampler's maps or the full
    // run's by whatever the kernel flushed then (the full run's maps 0.13–0.21 s in runs
    // minutes apart, the forecast 13–27 % off). Flushed now, before anything is timed.
    nix::unistd::sync();

    let job = |policy: PolicyKind, sample_only: bool| JobArgs {
        input: Some("demo".into()),
        policy,
        params: vec!["top=5".into()],
        reduces: 2,
        seed: Some(args.seed),
        memory_mb: 256,
        sample_only,
        maps: 0,
        map_seconds: 0.0,
        map_output_bytes: 0,
        reduce_seconds: 0.0,
        trace: None,
        job: "0".into(),
        time_scale: 1.0,
        map_min_seconds: 0.0,
        guard_seconds: DEMO_GUARD_SECONDS,
        hang_split: None,
        max_containers: None,
        shared_scan: false,
        output: None,
        more: Default::default(),
    };
    let owner = ("demo", "default", None);
    let patience = Duration::from_secs(600);

    step(&format!(
        "profiling word count: the task sampler runs a few maps and reduces (Dart §5.1), {SAMPLER_RUNS} times"
    ));
    for i in 0..SAMPLER_RUNS {
        // Each run its own maps: the seed picks them.
        let args = JobArgs {
            seed: Some(args.seed.wrapping_add(i)),
            ..job(PolicyKind::Dart, true)
        };
        let sampler = submit_job(client, "wordcount", &args, None, owner)?;
        wait(client, &sampler, patience)?;
    }
    let predicted = predicted_full_seconds(&profiles, client, url, task_slots(args))?;
    let deadline = Duration::from_secs_f64((predicted * args.tightness).max(1.0));
    step(&format!(
        "the profile predicts {predicted:.1} s for the whole job; the deadline is {:.1} s",
        deadline.as_secs_f64()
    ));

    // `full` once, then `dart` `--dart-runs` times: the same job, the same deadline from each
    // submission. Every live run's record joins the profile store under the kind
    // `wordcount@demo` (the master's `add_run` after its phase), so dart's n-th run starts
    // from a profile that averages the runs before it (`RECENT_RUNS`).
    let mut answers: Vec<(PolicyKind, Value)> = Vec::new();
    let plan = std::iter::once(PolicyKind::Full).chain(std::iter::repeat_n(
        PolicyKind::Dart,
        args.dart_runs as usize,
    ));
    for (i, policy) in plan.enumerate() {
        let name = match i {
            0 | 1 => policy.to_string(),
            _ => format!("{policy}-{i}"),
        };
        step(&format!(
            "word count under {policy}{}, deadline {:.1} s",
            match (policy, args.dart_runs) {
                (PolicyKind::Dart, n) if n > 1 => format!(" (run {i} of {n})"),
                _ => String::new(),
            },
            deadline.as_secs_f64()
        ));
        let submitted = submit_job(
            client,
            "wordcount",
            &job(policy, false),
            Some(deadline),
            owner,
        )?;
        let finished = wait(client, &submitted, patience)?;
        if finished.final_status != FinalApplicationStatus::Succeeded {
            bail!(
                "{} ended {}; logs in {}",
                submitted.id,
                finished.final_status,
                dir.display()
            );
        }
        // As `yard submit --json` prints it; the answer inside is the master's own JSON.
        let finished = json!({ "app": finished });
        if args.keep {
            // The answer as the rm keeps it (`inputRead`, `liveCosts`, `guardFired`, …):
            // `full.json`, `dart.json`, then `dart-2.json`, ….
            std::fs::write(
                dir.join(format!("{name}.json")),
                serde_json::to_vec_pretty(&finished)?,
            )?;
        }
        answers.push((policy, finished));
    }
    // The side-by-side tables compare `full` with dart's first run, as without `--dart-runs`.
    let runs = &answers[..2];

    step("computing the exact answer directly from the file");
    let text = std::fs::read(&file)?;
    let exact = AppSpec::parse("wordcount", &["top=5".into()])
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .exact(&[&text], 2)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::print(&side_by_side(runs, &exact, deadline))?;
    crate::print(&against_full(runs, predicted))?;
    let dart: Vec<&Value> = answers[1..].iter().map(|(_, app)| app).collect();
    let map_time = map_time_before(&profiles, dart.len())?;
    crate::print(&recurring(&dart, &map_time))?;
    drop(cluster);
    Ok(())
}

/// What the demo's profiles assume where nothing was measured (the stored runs and samples
/// decide: the demo profiles the kind before it forecasts).
fn no_profile() -> yard_appmaster::policy::Profile {
    yard_appmaster::policy::Profile {
        map_local: 1.0,
        map_remote: f64::NAN, // not measured: the node-local time stands in
        map_shortest: None,
        map_spread: None,
        partition_bytes: 1.0,
        shuffle_bandwidth: 1e9,
        reduce_time: yard_appmaster::policy::PowerLaw {
            a: 0.0,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    }
}

/// The node-local map time (`T_m^a`, Dart §5.3: initialised from the previous executions)
/// that each of the kind's last `runs` runs started from: the profile of the runs stored
/// before it, as its master built it (`Stored::profiler`; the master stores its run before it
/// answers, so on the demo's own cluster the last `runs` records are these runs').
fn map_time_before(profiles: &Path, runs: usize) -> Result<Vec<f64>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stored = runtime.block_on(async {
        let store = yard_profiles::ProfileStore::open(profiles).await?;
        store.load("wordcount@demo").await
    })?;
    let first = stored.runs.len().saturating_sub(runs);
    Ok((first..stored.runs.len())
        .map(|i| {
            let before = yard_profiles::Stored {
                runs: stored.runs[..i].to_vec(),
                ..stored.clone()
            };
            before.profiler(no_profile()).profile().map_local
        })
        .collect())
}

/// The full job's time the stored profile predicts on this cluster: the first containers'
/// grant (this cluster's measured median), waves of maps over the task slots at the node-local
/// map time (Dart eq. 2), then the reduce of all their output (eq. 9). The node-local time,
/// not the larger of it and the remote one: the rm grants where the blocks are (two replicas
/// on three nodes), and the sampler's remote time is one map's at most.
fn predicted_full_seconds(
    profiles: &Path,
    client: &Client,
    cluster: &str,
    slots: u32,
) -> Result<f64> {
    let maps = client.typed(|rm| rm.dataset("demo"))?.blocks.len() as f64;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (stored, costs) = runtime.block_on(async {
        let store = yard_profiles::ProfileStore::open(profiles).await?;
        let costs = store.load_costs(cluster).await?;
        Ok::<_, yard_profiles::ProfileError>((store.load("wordcount@demo").await?, costs))
    })?;
    let profile = stored.profiler(no_profile()).profile();
    let remote = if profile.map_remote.is_nan() {
        "not measured".to_string()
    } else {
        format!("{:.3} s", profile.map_remote)
    };
    eprintln!(
        "    profile: map {:.3} s node-local, remote {remote}; {:.0} KiB per partition; reduce f(d) = {:.2e}·d^{:.2}",
        profile.map_local,
        profile.partition_bytes / 1024.0,
        profile.reduce_time.a,
        profile.reduce_time.b
    );
    let forecast = Forecast::of(
        maps,
        f64::from(slots),
        &profile,
        median(&costs.grant).unwrap_or(0.0),
    );
    eprintln!("    forecast: {}", forecast.describe());
    Ok(forecast.total())
}

/// The one-core slots on the demo's nodes, less the master's (five by default).
fn task_slots(args: &DemoArgs) -> u32 {
    (args.nodes * args.vcores).saturating_sub(1)
}

/// The profile's forecast of the full job, by part.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Forecast {
    /// The first containers' grant.
    grant: f64,
    /// Waves of maps over the task slots, and one map's time (Dart eq. 2).
    waves: f64,
    map: f64,
    /// The reduce of all the maps' output (eq. 9).
    reduce: f64,
}

impl Forecast {
    fn of(
        maps: f64,
        slots: f64,
        profile: &yard_appmaster::policy::Profile,
        grant: f64,
    ) -> Forecast {
        let reduce_input = maps * profile.partition_bytes;
        Forecast {
            grant,
            waves: (maps / slots.max(1.0)).ceil(),
            map: profile.map_local,
            reduce: profile.reduce_time.a * reduce_input.powf(profile.reduce_time.b),
        }
    }

    fn total(&self) -> f64 {
        self.grant + self.waves * self.map + self.reduce
    }

    fn describe(&self) -> String {
        format!(
            "grant {:.3} s + {:.0} waves × {:.3} s + reduce {:.3} s = {:.2} s",
            self.grant,
            self.waves,
            self.map,
            self.reduce,
            self.total()
        )
    }
}

/// The median of the finite `samples`, the mean of the two middle ones for an even count
/// (`None` for none).
fn median(samples: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// What the full run had read by the deadline beside what dart read, when dart answered
/// within its deadline, and the profile's forecast against the full run's measured time. Times
/// are each master's own, from its start (its container's launch follows the submission).
fn against_full(runs: &[(PolicyKind, Value)], predicted: f64) -> String {
    let job = |p: PolicyKind| {
        runs.iter()
            .find(|(q, _)| *q == p)
            .and_then(|(_, app)| job_of(app))
    };
    let (Some(full), Some(dart)) = (job(PolicyKind::Full), job(PolicyKind::Dart)) else {
        return String::new();
    };
    let mut out = String::new();
    let full_share = full
        .times
        .deadline_seconds
        .and_then(|d| read_share(&full, d));
    let dart_share = Some(dart.processed_fraction);
    match (full_share, dart_share) {
        (Some(f), Some(d)) => {
            let _ = writeln!(
                out,
                "\nby the deadline the full run had read {:.1} % of the input (its maps finished by \
                 then); dart answered from {:.1} %{}",
                100.0 * f,
                100.0 * d,
                match f > 0.0 {
                    true => format!(", {:.0} % of that", 100.0 * d / f),
                    false => String::new(),
                }
            );
        }
        _ => out.push_str("\nthe full run's input read over time is missing from its answer\n"),
    }
    if let (Some(fit), Some(d)) = (what_fit(&full, &dart), dart_share)
        && fit.share > 0.0
    {
        let _ = writeln!(
            out,
            "answering takes time after the last map ends (dart's {:.3} s: its reduces' launch, \
             shuffle and fold, and its answer); by the deadline less that, the full run had read \
             {:.1} %, about the most any run could have answered from by the deadline: dart's \
             {:.1} % is {:.0} % of it",
            fit.tail,
            100.0 * fit.share,
            100.0 * d,
            100.0 * d / fit.share
        );
    }
    if let (x, Some(y), Some(run)) = (
        dart.times.completion_seconds,
        dart.times.deadline_seconds,
        &dart.run,
    ) && y > 0.0
    {
        let _ = writeln!(
            out,
            "dart answered at {x:.2} s of its {y:.2} s deadline ({:.0} %), counted from its master's start; \
             it kept {:.3} s for its answer and cut its last reduces {:.3} s before it",
            100.0 * x / y,
            run.live_costs.finish_margin,
            run.live_costs.cut_lead,
        );
    }
    if let Some(t) = full.run.as_ref().map(|r| r.job_seconds) {
        let _ = writeln!(
            out,
            "the profile forecast {predicted:.2} s for the whole job; the full run's job took {t:.2} s \
             (its master's job phase, from its start to the reduces' end: {:+.0} %)",
            100.0 * (predicted - t) / t
        );
    }
    out
}

/// What fit by the deadline, about: the share of the input the full run had read by its
/// deadline less `tail`, the time dart's answer took after its last map ended (a run that
/// read more would have taken no less to answer).
struct Fit {
    tail: f64,
    share: f64,
}

fn what_fit(full: &AnswerJob, dart: &AnswerJob) -> Option<Fit> {
    let (last_map, _) = dart.run.as_ref()?.input_read.at.last()?;
    let tail = (dart.times.completion_seconds - last_map).max(0.0);
    let by = full.times.deadline_seconds? - tail;
    Some(Fit {
        tail,
        share: read_share(full, by)?,
    })
}

/// The share of its input a run had read by `seconds` from its master's start (its maps
/// finished by then, its answer's `inputRead`); `None` without one.
fn read_share(job: &AnswerJob, seconds: f64) -> Option<f64> {
    let read = &job.run.as_ref()?.input_read;
    (read.input_bytes > 0).then(|| read.by(seconds) as f64 / read.input_bytes as f64)
}

/// The answer's `job` line of an application as `yard submit --json` prints it.
fn job_of(app: &Value) -> Option<AnswerJob> {
    AnswerJob::of(&app["app"]["answer"])
}

/// Whether an application (`app` of the rm's answer) met its deadline. The rm's judgement is
/// the one of record (it has the answer when the user does).
fn met(app: &Value) -> String {
    let job = AnswerJob::of(&app["answer"]);
    let outcome = app["deadlineOutcome"]
        .as_str()
        .or(job.as_ref().and_then(|j| j.times.outcome.map(|o| o.name())));
    match outcome {
        Some("met") => "yes".into(),
        Some("empty") => "NO: answered from no input".into(),
        Some("missed") => "NO".into(),
        _ => "—".into(),
    }
}

/// The estimation error at map close, |T − T̂| / T (EVALUATION.md): `T̂` the policy's
/// `estimateAtCloseUncapped` (Dart eq. 1's T_J before `forecast_cut`'s cap at D: under its
/// guard `dart`'s `estimateAtClose` is at most D, and its error would say how early it
/// answered, not how far the profile was off) and `T` its `jobSeconds`, both on the policy's
/// clock (seconds from its job phase's start, after the master's setup and any task sampler),
/// so they compare. `None` where the map phase closed without an estimate or the job took no
/// time.
fn close_error(job: &AnswerJob) -> Option<f64> {
    let run = job.run.as_ref()?;
    let (estimate, took) = (run.estimate_at_close_uncapped?, run.job_seconds);
    (took > 0.0).then(|| (took - estimate).abs() / took)
}

/// The recurring word count, one row per `dart` run (`--dart-runs`): the node-local map time
/// its profile started from (`map_time`, one per run: `T_m^a`, Dart §5.3) beside its maps'
/// measured mean, its estimate at map close (as answered, and uncapped) and when it answered,
/// on the same clock, the uncapped estimate's error, the input read and whether it met the deadline; then the first run's
/// errors against the later runs' medians. Each run's record joined the profile store before
/// the next began (Dart §5.1's job profiler).
fn recurring(dart: &[&Value], map_time: &[f64]) -> String {
    let mut rows = Vec::new();
    let (mut errors, mut map_errors) = (Vec::new(), Vec::new());
    let mut capped = false;
    for (i, app) in dart.iter().enumerate() {
        let a = &app["app"];
        let job = job_of(app);
        let run = job.as_ref().and_then(|j| j.run.as_ref());
        let error = job.as_ref().and_then(close_error);
        errors.push(error);
        let profiled = map_time.get(i).copied().filter(|t| t.is_finite());
        let measured = run.and_then(|r| r.measured.map_local_seconds);
        map_errors.push(match (profiled, measured) {
            (Some(p), Some(m)) if m > 0.0 => Some((m - p).abs() / m),
            _ => None,
        });
        let estimate = run.and_then(|r| r.estimate_at_close);
        // `dart`'s estimate at close is its cut forecast (`forecast_cut`): at most D under its
        // guard, where eq. 1's T_J would pass it.
        let at_d = estimate
            .zip(run.and_then(|r| r.policy_deadline))
            .is_some_and(|(e, d)| (e - d).abs() < 1e-6);
        capped |= at_d;
        let secs = |v: Option<f64>| v.map_or("—".into(), |s| format!("{s:.2} s"));
        let share = |v: Option<f64>| v.map_or("—".into(), |f| format!("{:.1} %", 100.0 * f));
        rows.push(vec![
            (i + 1).to_string(),
            secs(profiled),
            secs(measured),
            match at_d {
                true => format!("{} (= D)", secs(estimate)),
                false => secs(estimate),
            },
            secs(run.and_then(|r| r.estimate_at_close_uncapped)),
            secs(run.map(|r| r.job_seconds)),
            share(error),
            share(a["processedFraction"].as_f64()),
            met(a),
        ]);
    }
    let mut out = String::from(
        "\ndart's word count, run after run under the same deadline (each run's record joins \
         the profile store before the next): the node-local map time its profile started from \
         (T_m^a, the mean of the kind's recent runs) and its maps' measured mean; its \
         estimate at map close as answered (`estimateAtClose`) and T̂, the same uncapped (Dart \
         eq. 1's map + shuffle + reduce, `estimateAtCloseUncapped`); T when it answered, all \
         from its policy's start; the estimation error |T − T̂| / T\n\n",
    );
    out.push_str(&table(
        &[
            "run",
            "profile's map time",
            "maps' mean",
            "estimate at map close",
            "uncapped (T̂)",
            "answered at",
            "estimation error (uncapped)",
            "input read",
            "deadline met",
        ],
        &rows,
    ));
    if capped {
        out.push_str(
            "\n(= D): the estimate at map close was the policy's deadline: dart's forecast is cut \
             at D under its guard (`forecast_cut`), so its error would say how early it \
             answered, not how far its profile was off; the errors here are the uncapped one's\n",
        );
    }
    let shown = |e: Option<f64>| e.map_or("—".into(), |e| format!("{:.1} %", 100.0 * e));
    for (what, errors) in [
        ("estimation error at map close (uncapped T̂)", &errors),
        ("profile's map time against the run's maps", &map_errors),
    ] {
        let first = errors.first().copied().flatten();
        let later: Vec<f64> = errors.iter().skip(1).flatten().copied().collect();
        let _ = match errors.len() {
            0 | 1 => writeln!(
                out,
                "{what}: {} (`--dart-runs N` runs dart N times)",
                shown(first)
            ),
            n => writeln!(
                out,
                "{what}: run 1 {}, runs 2–{n} median {} ({} of {} measured)",
                shown(first),
                shown(median(&later)),
                later.len(),
                n - 1
            ),
        };
    }
    out
}

/// The two runs against the exact answer.
fn side_by_side(runs: &[(PolicyKind, Value)], exact: &Value, deadline: Duration) -> String {
    let exact_words = exact["words"]["observed"].as_f64().unwrap_or(f64::NAN);
    let mut rows: Vec<Vec<String>> = vec![
        vec!["deadline".into()],
        vec!["finished after".into()],
        vec!["deadline met".into()],
        vec!["input processed".into()],
        vec!["words".into()],
        vec!["error vs exact".into()],
        vec!["exact inside the 95 % CI".into()],
    ];
    for (_, app) in runs {
        let a = &app["app"];
        let answer = &a["answer"];
        let job = AnswerJob::of(answer);
        let words = &answer["words"];
        let estimate = words["estimate"].as_f64().unwrap_or(f64::NAN);
        let error = estimate - exact_words;
        let inside = match (words["low"].as_f64(), words["high"].as_f64()) {
            _ if answer["exact"] == true => "exact answer".to_string(),
            (Some(l), Some(h)) => if l <= exact_words && exact_words <= h {
                "yes"
            } else {
                "no"
            }
            .into(),
            _ => "no bound".into(),
        };
        let cells = [
            format!("{:.1} s", deadline.as_secs_f64()),
            job.as_ref().map_or("—".into(), |j| {
                format!("{:.1} s", j.times.completion_seconds)
            }),
            met(a),
            format!(
                "{:.1} % ({} of {} maps)",
                100.0 * a["processedFraction"].as_f64().unwrap_or(0.0),
                job.as_ref().map_or("?".into(), |j| j.k.to_string()),
                job.as_ref().map_or("?".into(), |j| j.maps.to_string())
            ),
            estimate_text(words),
            match error.is_finite() {
                true => format!("{error:+.0} ({:+.3} %)", 100.0 * error / exact_words),
                false => "— (no answer)".into(),
            },
            inside,
        ];
        for (row, cell) in rows.iter_mut().zip(cells) {
            row.push(cell);
        }
    }
    let mut header = vec![""];
    header.extend(runs.iter().map(|(p, _)| p.name()));
    let mut out = format!(
        "\nword count, {} words in the input (exact)\n\n",
        exact_words
    );
    out.push_str(&table(&header, &rows));
    let _ = writeln!(
        out,
        "\nfull reads every block; dart stops launching maps when its estimate (Dart eq. 1–9) \
         reaches the deadline and answers, scaled from what it read by then (an answer from no \
         input is not a met deadline)."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_appmaster::policy::{PowerLaw, Profile};

    fn profile(map_remote: f64) -> Profile {
        Profile {
            map_local: 0.2,
            map_remote,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 1000.0,
            shuffle_bandwidth: 1e9,
            reduce_time: PowerLaw {
                a: 1e-3,
                b: 0.5,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        }
    }

    #[test]
    fn the_forecast_is_the_grant_the_waves_of_node_local_maps_and_the_reduce() {
        let f = Forecast::of(64.0, 5.0, &profile(f64::NAN), 0.05);
        // 64 maps over 5 slots: 13 waves; the reduce of 64 maps' partitions, 1e-3·64000^0.5.
        assert_eq!(f.waves, 13.0);
        assert!((f.reduce - 0.253).abs() < 1e-3, "{f:?}");
        assert!((f.total() - (0.05 + 13.0 * 0.2 + f.reduce)).abs() < 1e-12);
        // One slow remote sample map does not decide it: the rm grants where the blocks are.
        assert_eq!(Forecast::of(64.0, 5.0, &profile(2.0), 0.05), f);
        // One node of two slots: the master's and one task's, 64 waves.
        assert_eq!(
            Forecast::of(64.0, 1.0, &profile(f64::NAN), 0.05).waves,
            64.0
        );
        assert_eq!(median(&[0.3, f64::NAN, 0.1, 0.2]), Some(0.2));
        assert_eq!(median(&[]), None);
    }

    /// A master's `job` line with what the demo reads: answered `completion` s after its
    /// master's start, its deadline, and its input read over time (of 100 bytes).
    fn line(completion: f64, deadline: Option<f64>, at: Vec<(f64, u64)>) -> AnswerJob {
        use yard_wire::answer::{DeadlineTimes, InputRead, RunFigures};
        AnswerJob {
            policy: "dart".into(),
            kind: "wordcount@demo".into(),
            seed: None,
            k: at.len() as u64,
            maps: 10,
            processed_fraction: 0.0,
            times: DeadlineTimes {
                completion_seconds: completion,
                deadline_seconds: deadline,
                deadline_met: None,
                outcome: None,
            },
            run: Some(RunFigures {
                job_seconds: completion,
                policy_deadline: deadline,
                input_read: InputRead {
                    input_bytes: 100,
                    at,
                },
                ..RunFigures::default()
            }),
            scan: None,
        }
    }

    #[test]
    fn what_fit_is_the_full_runs_read_by_the_deadline_less_darts_answering_tail() {
        let full = line(
            2.0,
            Some(1.0),
            vec![(0.3, 20), (0.6, 50), (0.85, 70), (0.95, 80)],
        );
        // dart's last map ended at 0.7 s and it answered at 0.9 s: 0.2 s to answer, so what
        // fit is full's read by 0.8 s.
        let dart = line(0.9, Some(1.0), vec![(0.4, 30), (0.7, 45)]);
        let fit = what_fit(&full, &dart).unwrap();
        assert!((fit.tail - 0.2).abs() < 1e-12);
        assert_eq!(fit.share, 0.5);
        // A dart run that read nothing has no tail to measure.
        let empty = line(0.9, Some(1.0), Vec::new());
        assert!(what_fit(&full, &empty).is_none());
    }

    /// An answer as the rm keeps it, with what the recurring table reads: a policy deadline of
    /// 1.3 s.
    fn answered(
        (estimate, uncapped): (Option<f64>, Option<f64>),
        took: f64,
        maps: Option<f64>,
        fraction: f64,
        outcome: &str,
    ) -> Value {
        // Another clock (from the master's start): never the error's T.
        let mut job = line(took + 5.0, Some(1.3), Vec::new());
        if let Some(run) = &mut job.run {
            run.estimate_at_close = estimate;
            run.estimate_at_close_uncapped = uncapped;
            run.job_seconds = took;
            run.measured.map_local_seconds = maps;
        }
        serde_json::json!({ "app": {
            "processedFraction": fraction,
            "deadlineOutcome": outcome,
            "answer": { "job": job },
        } })
    }

    #[test]
    fn the_recurring_table_has_a_row_per_dart_run_and_compares_the_first_with_the_rest() {
        let runs = [
            answered((Some(1.5), Some(1.5)), 1.0, Some(2.0), 0.25, "met"),
            answered((Some(0.9), Some(0.9)), 1.0, Some(1.6), 0.5, "met"),
            answered((None, None), 2.0, None, 0.0, "empty"),
            // Capped at D = 1.3 s; eq. 1's T_J was 1.6 s.
            answered((Some(1.3), Some(1.6)), 1.0, Some(2.0), 0.4, "missed"),
        ];
        let refs: Vec<&Value> = runs.iter().collect();
        let out = recurring(&refs, &[1.0, 1.5, 1.5, 1.9]);
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert_eq!(rows.len(), 4, "{out}");
        // |T − T̂| / T on the policy's clock: |1.0 − 1.5| / 1.0.
        for cell in ["1.00 s", "2.00 s", "1.50 s", "50.0 %", "25.0 %", "yes"] {
            assert!(rows[0].contains(cell), "{cell}: {out}");
        }
        assert!(rows[1].contains("10.0 %"), "{out}");
        assert!(
            rows[2].contains('—') && rows[2].contains("NO: answered from no input"),
            "{out}"
        );
        // An estimate at the policy's deadline is said to be one, and its error is the
        // uncapped estimate's: |1.0 − 1.6| / 1.0, not |1.0 − 1.3| / 1.0.
        assert!(
            rows[3].contains("1.30 s (= D)") && out.contains("forecast_cut"),
            "{out}"
        );
        assert!(
            rows[3].contains("1.60 s") && rows[3].contains("60.0 %"),
            "{out}"
        );
        assert!(!rows[3].contains("30.0 %"), "{out}");
        assert!(!rows[0].contains("(= D)"), "{out}");
        // Runs 2–4: errors 10 % and 60 % (run 3 closed without an estimate), median 35 %;
        // the profile's map time 50 % off the first run's maps, then 6.25 % and 5 %.
        for line in [
            "estimation error at map close (uncapped T̂): run 1 50.0 %, runs 2–4 median 35.0 % (2 of 3 measured)",
            "profile's map time against the run's maps: run 1 50.0 %, runs 2–4 median 5.6 % (2 of 3 measured)",
        ] {
            assert!(out.contains(line), "{line}: {out}");
        }
        let one = recurring(&refs[..1], &[]);
        assert!(
            one.contains("estimation error at map close (uncapped T̂): 50.0 %"),
            "{one}"
        );
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
