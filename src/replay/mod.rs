//! `yard replay`: a trace's first jobs on a live cluster — a running rm (`--rm URL`), or a
//! local one started as `yard up` starts it — each submitted at its submit time compressed by
//! the time scale as a synthetic MapReduce job whose tasks take the durations and write the
//! bytes the simulator's job has; then the `yard sim` kind of table for the live jobs beside
//! the simulator's prediction for the same jobs on the same cluster, and the difference.
//!
//! The conversion (one rule for every format): the trace's jobs are built as `yard sim`
//! builds them (`yard_sim::workloads::trace_jobs`: Rumen and SLS tasks keep their recorded
//! durations, SWIM's are drawn from the seed), then every time in the job is multiplied by the
//! time scale (map durations, the reduce law, the profile; the shuffle bandwidth divided), and
//! the shared cluster's `prepare` draws each deadline, `U[1,2]·T_J`, on the scaled job. A live
//! map takes its scaled duration, has its split's bytes as the estimator's weight and writes
//! its output bytes times the job's byte scale (the time scale, so the shuffle shrinks with
//! the clock, unless that leaves a byte count under 1000: [`byte_scale`](prepare::byte_scale)); a live reduce takes
//! its reduce's scaled duration on the job's whole output. On a local cluster each job is its
//! own profile kind whose history is the simulator's profile of it ([`history`](prepare::history)).
//!
//! The prediction is simulated after the live run, with the start-up costs the live jobs
//! measured (`ClusterConfig::master_startup_s`, `task_startup_s`; `--master-startup-s`,
//! `--task-startup-s` override them): jobs due within a second or so live or die by them.
//!
//! One concern a file: `prepare.rs` turns the trace's jobs into live jobs and their
//! profiles, `live.rs` runs them on the cluster and reads their answers, `predict.rs` is the
//! simulated cluster that stands for the live one and its prediction, `report.rs` the two
//! side by side. This file holds the command's flags and the run from one to the next.

mod live;
mod predict;
mod prepare;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget};
use yard_appmaster::policy::PolicyKind;
use yard_appmaster::submission::{DEFAULT_GUARD_SECONDS, MAX_EACH};
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_sim::shared::DeadlineFactor;
use yard_sim::workloads::WorkloadOptions;

use crate::local::{Target, stop_channel};
use crate::sim::BadInput;
use crate::trace::ReadArgs;

pub(crate) use live::poll_job;
use live::replay;
use predict::{experiment, predict};
use prepare::{LiveJob, byte_scale, live_job, prepare, seed_kinds};
use report::report;
use yard_sim::table::Printable;

#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The trace to replay (SWIM, Rumen, SLS, SYNTH).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    /// Replay the trace's first N jobs.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    jobs: u64,
    /// Multiply every duration and submit time by X (`0.0167` or `1/60`: an hour in a
    /// minute); map output bytes too.
    #[arg(long, value_name = "X", default_value = "1", value_parser = parse_time_scale)]
    time_scale: f64,
    /// The task policy every job's master runs: dart, dart-paper, aria, ps, late, full, d-wor,
    /// d-wmr, d-wost.
    #[arg(long, value_name = "P", default_value = "dart")]
    policy: PolicyKind,
    /// The cluster policy: the local cluster's rm runs it, the simulator's rm too. With
    /// `--rm`, say the one that rm runs (fifo, fair, edf, minedf, minedf-wc).
    #[arg(long, value_name = "NAME", default_value = "fifo")]
    scheduler: RmPolicy,
    /// A running rm to replay on; without it, a local cluster is started on 127.0.0.1 (as
    /// `yard up` starts one) and stopped at the end.
    #[arg(long, value_name = "URL")]
    rm: Option<String>,
    /// With `--rm`: a file holding your bearer token [default: as `yard submit` finds it].
    #[arg(long, value_name = "FILE", requires = "rm")]
    token_file: Option<PathBuf>,
    /// The cluster's nodes: the local cluster's nodemanagers, and the simulator's. With
    /// `--rm` [default: the rm's running nodes].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    nodes: Option<u32>,
    /// Containers per node (a vcore each), live and simulated: every job's master holds one
    /// (masters together at most `--master-share` of the cluster), tasks the rest. With
    /// `--rm`, say what that rm's nodes hold.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    containers: u32,
    /// The share of the cluster masters may hold together (the local rm's `--master-share`,
    /// and the simulator's); a job whose master finds no room waits, its deadline running.
    /// With `--rm`, that rm's own share is read from it.
    #[arg(long, value_name = "F", default_value_t = 0.5, conflicts_with = "rm", value_parser = parse_share)]
    master_share: f64,
    /// Each job's deadline is U[LO, HI] × its time alone on the whole cluster (ARIA's draw, as
    /// `yard sim --shared`); one number: that factor.
    #[arg(long, value_name = "LO,HI", default_value = "1,2", value_parser = DeadlineFactor::parse)]
    deadline_factor: DeadlineFactor,
    /// The deadline guard, live and simulated (`yard submit --guard-seconds`).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_GUARD_SECONDS)]
    guard: f64,
    /// The local cluster's nodemanager heartbeat (and the simulator's), ms.
    #[arg(long, value_name = "MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    heartbeat_ms: u64,
    /// Give up on jobs still running this many seconds after the last submission (they count
    /// as missed).
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    patience: u64,
    /// The simulated masters' start-up, from their container to asking for tasks [default:
    /// the median live master's, from its process's start to its job phase's, measured by
    /// this run; 0: the prediction of masters that start at once].
    #[arg(long, value_name = "SECONDS", value_parser = parse_cost)]
    master_startup_s: Option<f64>,
    /// The simulated tasks' launch cost, added to every attempt [default: the median over
    /// live jobs of their median task launch (a freed container to its next task's process),
    /// measured by this run; 0: tasks that start at once].
    #[arg(long, value_name = "SECONDS", value_parser = parse_cost)]
    task_startup_s: Option<f64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep the local cluster's directory (the rm's and nodemanagers' logs, and the masters'
    /// and tasks' of the last 50 ended containers per node: set YARD_NM_KEEP_FINISHED for
    /// more) and say where it is; without it, it is removed unless the replay failed.
    #[arg(long, conflicts_with = "rm")]
    keep: bool,
}

/// `0.0167`, or a fraction `1/60`: above 0 and finite.
fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err(format!(
            "{s:?}: give a share above 0 and at most 1, e.g. 0.5"
        )),
    }
}

/// Seconds of start-up: 0 or more, at most an hour.
fn parse_cost(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=3600.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?}: give seconds from 0 to 3600, e.g. 0.2")),
    }
}

/// A time scale for people, as it is usually given: `0.5`, `2`, `1/60` (not
/// `0.016666666666666666`); else four decimals.
pub(crate) fn time_scale_text(x: f64) -> String {
    let short = (x * 1e4).round() / 1e4;
    let inverse = 1.0 / x;
    if (x - short).abs() < 1e-12 {
        format!("{short}")
    } else if (inverse - inverse.round()).abs() < 1e-9 {
        format!("1/{}", inverse.round())
    } else {
        format!("{x:.4}")
    }
}

pub(crate) fn parse_time_scale(s: &str) -> Result<f64, String> {
    let value = match s.split_once('/') {
        Some((a, b)) => match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) if b != 0.0 => Ok(a / b),
            _ => Err(()),
        },
        None => s.trim().parse::<f64>().map_err(|_| ()),
    };
    match value {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a factor above 0 (0.0167, or 1/60), found {s:?}"
        )),
    }
}

/// The seed when `--seed` is not given (as `yard sim`'s).
const DEFAULT_SEED: u64 = 1;

pub(crate) fn run(args: ReplayArgs) -> Result<()> {
    if !(0.0..=3_600.0).contains(&args.guard) {
        return Err(BadInput(format!("--guard {}: give 0 to 3600 seconds", args.guard)).into());
    }
    let workload = yard_workload::read_file(&args.trace, &args.read.options())?;
    let n = (args.jobs as usize).min(workload.jobs.len());
    if n == 0 {
        return Err(BadInput(format!("{}: no jobs to replay", args.trace.display())).into());
    }
    let seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    // The cluster: given, or the rm's.
    let remote = match &args.rm {
        Some(url) => Some(Target::running(url, args.token_file.clone())?),
        None => None,
    };
    let nodes = match (&remote, args.nodes) {
        (_, Some(n)) => n,
        (Some(Target::Running { url, client }), None) => {
            let n = client
                .running_nodes()
                .with_context(|| format!("asking {url} for its nodes"))?
                .len() as u32;
            if n == 0 {
                anyhow::bail!("{url} has no running nodes to replay on");
            }
            n
        }
        (_, None) => 2,
    };
    let master_share = match &remote {
        Some(Target::Running { url, client }) => {
            let s = client
                .call(reqwest::Method::GET, "/ws/v1/cluster/scheduler", None)
                .with_context(|| format!("asking {url} for its scheduler"))?;
            s["scheduler"]["schedulerInfo"]["masterShare"]
                .as_f64()
                .with_context(|| format!("{url} does not say its masters' share (masterShare)"))?
        }
        _ => args.master_share,
    };
    let exp = experiment(
        nodes,
        args.containers,
        args.heartbeat_ms,
        seed,
        args.guard,
        master_share,
    );
    let options = WorkloadOptions {
        seed,
        block_bytes: args.read.options().block_bytes,
        ..WorkloadOptions::default()
    }
    .with_cluster(&exp.cluster)
    .with_model(&exp.model);
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.enable_steady_tick(Duration::from_millis(200));
    spinner.set_message(format!(
        "{n} jobs: each alone on the simulated cluster (T_J, the deadlines)"
    ));
    let prepared = prepare(
        &workload,
        n,
        &options,
        &exp,
        args.deadline_factor,
        args.time_scale,
    );
    let live: Vec<LiveJob> = prepared
        .iter()
        .map(|j| LiveJob {
            max_containers: Some(nodes * args.containers),
            ..live_job(j, byte_scale(j, args.time_scale))
        })
        .collect();
    for j in &live {
        let tasks = j.map_seconds.len().max(j.reduce_seconds.len());
        if tasks > MAX_EACH {
            return Err(BadInput(format!(
                "job {} has {tasks} tasks of a kind; a live replay takes at most {MAX_EACH}: replay fewer jobs (--jobs)",
                j.id
            ))
            .into());
        }
    }
    spinner.finish_and_clear();

    let stop = stop_channel()?;
    let target = match remote {
        Some(target) => target,
        // Vcores bind, as in the simulator.
        None => Target::start_local(
            "replay",
            nodes,
            args.containers,
            args.heartbeat_ms,
            vec![
                "--scheduler".into(),
                args.scheduler.name().into(),
                "--master-share".into(),
                master_share.to_string(),
            ],
        )?,
    };
    let containers = (exp.cluster.nodes * exp.cluster.containers_per_node) as usize;
    // On the local cluster every job is its own kind, its history the simulator's profile
    // of it; a running rm's store is its own (`--rm`): the jobs are the kind `synthetic`.
    let mut live = live;
    if let Some(dir) = target.dir() {
        seed_kinds(&dir.join("profiles.db"), &prepared, &mut live)?;
    }
    let outcome = replay(
        target.client(),
        &args,
        &live,
        seed,
        &prepared,
        containers,
        &stop,
    );
    target.finish(outcome.is_err() || args.keep);
    let live_results = outcome?;
    let (sim_results, startup) = predict(&args, exp, &prepared, &live_results);
    let report = report(
        &args,
        nodes,
        seed,
        &prepared,
        &sim_results,
        &live_results,
        (master_share, startup),
    );
    crate::print(&report.printed(args.json, "## replay\n\n")?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_sim::SimJob;
    use yard_sim::shared::SharedJob;
    use yard_sim::workloads;

    pub(super) fn trace(name: &str) -> yard_workload::Workload {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces")
            .join(name);
        yard_workload::read_file(&path, &yard_workload::ReadOptions::default()).unwrap()
    }

    /// The trace's first `n` jobs prepared at time scale `x`, and as the simulator builds them.
    pub(super) fn jobs(
        w: &yard_workload::Workload,
        n: usize,
        x: f64,
    ) -> (Vec<SharedJob>, Vec<SimJob>) {
        let exp = experiment(2, 2, 100, 3, 0.0, 0.5);
        let options = WorkloadOptions {
            seed: 3,
            ..WorkloadOptions::default()
        }
        .with_cluster(&exp.cluster);
        let unscaled: Vec<SimJob> = workloads::trace_jobs(w, &options).take(n).collect();
        let scaled = prepare(w, n, &options, &exp, DeadlineFactor::ARIA, x);
        (scaled, unscaled)
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: ReplayArgs,
    }

    pub(super) fn args(extra: &[&str]) -> ReplayArgs {
        use clap::Parser;
        let mut argv = vec!["replay", "--trace", "t.tsv"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn keep_is_a_flag_of_the_local_cluster_only() {
        assert!(args(&["--keep"]).keep);
        assert!(!args(&[]).keep);
        use clap::Parser;
        assert!(
            Cli::try_parse_from([
                "replay",
                "--trace",
                "t",
                "--keep",
                "--rm",
                "http://127.0.0.1:1"
            ])
            .is_err()
        );
    }

    #[test]
    fn time_scales_parse_as_numbers_or_fractions() {
        assert_eq!(parse_time_scale("0.5"), Ok(0.5));
        assert_eq!(parse_time_scale("1/60"), Ok(1.0 / 60.0));
        for bad in ["0", "-1", "1/0", "x", "1/x", "inf", ""] {
            assert!(parse_time_scale(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_scales_print_as_people_give_them() {
        for (given, printed) in [("1/60", "1/60"), ("0.5", "0.5"), ("2", "2"), ("1/3", "1/3")] {
            assert_eq!(time_scale_text(parse_time_scale(given).unwrap()), printed);
        }
        assert_eq!(time_scale_text(2.0 / 7.0), "0.2857");
    }
}
