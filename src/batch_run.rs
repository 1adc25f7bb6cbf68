//! `yard batch run`: a batch planned as `yard batch plan` plans it (seed 003: Johnson's order,
//! BalancedPools), run on a live cluster — a running rm (`--rm URL`), or a local one started
//! on 127.0.0.1 as `yard up` starts it and stopped at the end — with the measured makespan
//! beside the predicted one.
//!
//! Every job of the batch is a synthetic MapReduce job (`POST /ws/v1/yard/mapreduce/jobs`)
//! whose map and reduce tasks sleep the plan's task durations times `--time-scale`, under the
//! `full` task policy (a batch reads all its input) and no deadline. A map-only job gathers
//! its answer in one reduce of no time.
//!
//! How the plan runs live (the approximation, precisely):
//! - A pool of `S` slots is `S` map slots and `S` reduce slots in the model. Live containers
//!   are not typed, so each job of the pool is capped at `S` task containers at once
//!   (`maxContainers`, honoured by its master), and jobs are submitted in the pool's order,
//!   the next one **when the previous one's map stage is done** (all its maps finished, as its
//!   master reports to the rm): the two-stage pipelining Johnson's rule assumes, job k+1's
//!   maps beside job k's reduces. The pools run side by side, each with its own chain.
//!   (A cap that follows the previous job's running maps would need a master that can be
//!   told a new cap while it runs; `maxContainers` is fixed at submission.)
//! - Where the model differs (both directions are reported, not hidden: each job's measured
//!   submission, map-stage end and answer beside the model's map-stage end and end):
//!   - The model (`yard_cluster::batch::simulate`, SimMR-like) lets job k+1's maps start on the
//!     map slots job k's last wave leaves free; live, job k+1 waits for job k's whole map
//!     stage (and then its master's start, about a second). That is the two-stage flow
//!     shop Johnson's rule is stated on, so its makespan is printed too: a job with fewer
//!     maps than its pool's slots makes the live run slower than predicted, up to that.
//!   - The model's reduce slots are FIFO: job k+1's reduces wait for job k's to free slots.
//!     Live, job k+1's reduces start when its maps are done, beside job k's, where the
//!     cluster has the containers (a local cluster's node has `2·⌈2·slots / nodes⌉ + 2`
//!     vcores, at most half of them for masters): faster than predicted there.
//!   - A per-job cap cannot hold a pool's jobs together to its slots: job k's reduces and
//!     job k+1's maps each take up to the pool's slots, as the model's separate map and
//!     reduce slots do, but a third job of the pool in its reduces adds more.
//! - Predicted makespans are the plan's (the task/slot-level simulation) times the time
//!   scale; measured ones run from the first submission to the last answer, as this client
//!   sees them (polled every 50 ms).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::SeedableRng;
use serde::Serialize;
use serde_json::json;
use yard_appmaster::policy::PolicyKind;
use yard_appmaster::submission::{MAX_EACH, MapReduceJob};
use yard_cluster::batch::{self, BatchJob};
use yard_sim::table::{Cell, Column, Field, Printable, Row, Table, Unit};
use yard_wire::answer::AnswerJob;
use yard_wire::jobs::JobView;
use yard_wire::protocol::JobPhase;

use crate::batch::{BatchInput, Loaded, load};
use crate::client::Client;
use crate::local::{Target, stop_channel};
use crate::replay::{parse_time_scale, poll_job};
use crate::sim::BadInput;

/// The order the batch runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OrderKind {
    /// Johnson's order on the whole cluster (seed 003 Alg. 1).
    Johnson,
    /// BalancedPools' two pools, each in its Johnson order (Alg. 2); one pool when splitting
    /// does not pay.
    BalancedPools,
    /// Johnson's order reversed (the paper's worst case under the abstraction).
    ReverseJohnson,
    /// A random order drawn from `--seed`.
    Random,
    /// The order of the file (or the trace).
    Fifo,
}

impl OrderKind {
    fn name(self) -> &'static str {
        match self {
            OrderKind::Johnson => "johnson",
            OrderKind::BalancedPools => "balanced-pools",
            OrderKind::ReverseJohnson => "reverse-johnson",
            OrderKind::Random => "random",
            OrderKind::Fifo => "fifo",
        }
    }
}

#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    input: BatchInput,
    /// The order (and pools) to run the batch in.
    #[arg(long, value_enum, default_value = "balanced-pools")]
    order: OrderKind,
    /// A running rm to run on; without it, a local cluster is started on 127.0.0.1 (as `yard
    /// up` starts one) and stopped at the end.
    #[arg(long, value_name = "URL")]
    rm: Option<String>,
    /// With `--rm`: a file holding your bearer token [default: as `yard submit` finds it].
    #[arg(long, value_name = "FILE", requires = "rm")]
    token_file: Option<PathBuf>,
    /// The local cluster's nodemanagers; together they get room for 2 × `--slots` task
    /// containers (the plan's map and reduce slots) and the masters.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64), conflicts_with = "rm")]
    nodes: u32,
    /// Multiply every task duration by X (`0.1`, or `1/10`) so that the batch takes a minute
    /// or two; predicted makespans are scaled alike.
    #[arg(long, value_name = "X", default_value = "1", value_parser = parse_time_scale)]
    time_scale: f64,
    /// The local cluster's nodemanager heartbeat, ms.
    #[arg(long, value_name = "MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    heartbeat_ms: u64,
    /// Give up on the batch this many seconds after its first submission.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    patience: u64,
    /// Print one JSON object: `{"order","pools","predicted_makespan_s","measured_makespan_s",…}`.
    #[arg(long)]
    json: bool,
}

/// The most slots a local cluster runs (2 × slots task containers on this host).
const MAX_LOCAL_SLOTS: u32 = 64;

/// One pool as it runs: its slots and its jobs in order (indices into the batch).
struct LivePool {
    slots: u32,
    order: Vec<usize>,
    /// The model's schedule of the pool (unscaled seconds).
    schedule: batch::Schedule,
}

/// The plan for `kind`: its pools, and the predicted makespan (unscaled).
fn plan(jobs: &[BatchJob], slots: u32, kind: OrderKind, seed: u64) -> (Vec<LivePool>, f64) {
    let one = |order: Vec<usize>| {
        let schedule = batch::simulate(jobs, &order, slots);
        let makespan = schedule.makespan;
        (
            vec![LivePool {
                slots,
                order,
                schedule,
            }],
            makespan,
        )
    };
    match kind {
        OrderKind::BalancedPools => {
            let p = batch::balanced_pools(jobs, slots);
            let pools = p
                .pools
                .into_iter()
                .map(|pool| LivePool {
                    schedule: batch::simulate(jobs, &pool.order, pool.slots),
                    slots: pool.slots,
                    order: pool.order,
                })
                .collect();
            (pools, p.makespan)
        }
        OrderKind::Johnson => one(batch::johnson_plan(jobs, slots).pools.remove(0).order),
        OrderKind::ReverseJohnson => one(batch::reverse(
            &batch::johnson_plan(jobs, slots).pools[0].order,
        )),
        OrderKind::Random => {
            let mut rng = yard_appmaster::policy::Rng::seed_from_u64(seed);
            one(batch::random_order(jobs.len(), &mut rng))
        }
        OrderKind::Fifo => one((0..jobs.len()).collect()),
    }
}

/// The two-stage flow shop's makespan of a pool's order (unscaled), each job's stages as long
/// as they take it alone on the pool's slots (the model's schedule of the job by itself).
fn flow_shop(jobs: &[BatchJob], pool: &LivePool) -> f64 {
    let stages: Vec<(f64, f64)> = (0..jobs.len())
        .map(|j| {
            let alone = batch::simulate(jobs, &[j], pool.slots);
            (alone.map_end[0], alone.end[0] - alone.map_end[0])
        })
        .collect();
    batch::flow_shop_makespan(&stages, &pool.order)
}

/// Whole microseconds: the lists travel in the master's command line.
fn micros(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

/// The synthetic job that runs `job` live: its tasks' durations times `scale`, `full`, no
/// guard, at most `cap` task containers at once.
pub(crate) fn live_job(job: &BatchJob, scale: f64, cap: u32, seed: u64) -> MapReduceJob {
    let mut live = MapReduceJob::new("synthetic", None);
    live.policy = PolicyKind::Full;
    live.seed = seed;
    live.guard_seconds = 0.0;
    live.map_seconds_each = Some(job.maps.iter().map(|&d| micros(d * scale)).collect());
    let reduces: Vec<f64> = match job.reduces.is_empty() {
        true => vec![0.0],
        false => job.reduces.iter().map(|&d| micros(d * scale)).collect(),
    };
    live.reduces = reduces.len() as u32;
    live.reduce_seconds_each = Some(reduces);
    live.max_containers = Some(cap);
    live
}

/// An application name from a job's name: its letters, digits, `-`, `_` and `.`.
fn app_name(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .take(200)
        .collect();
    format!("batch-{clean}")
}

/// What became of one job, seconds from the batch's first submission.
#[derive(Debug, Clone, Serialize)]
struct JobOut {
    id: String,
    pool: usize,
    app: Option<String>,
    /// FINISHED, FAILED, KILLED, or where it was when the run ended.
    state: String,
    answered: bool,
    submitted_s: Option<f64>,
    /// When this client saw its map stage done (every map finished).
    map_stage_done_s: Option<f64>,
    answered_s: Option<f64>,
    /// The model's map-stage end and end for the job, times the time scale.
    predicted_map_stage_done_s: f64,
    predicted_end_s: f64,
    /// The cap its master was given (the pool's slots) and the most it held at once.
    max_containers: u32,
    peak_containers: Option<u64>,
    /// The master's own time from its job's start to its answer.
    job_seconds: Option<f64>,
    /// Why it failed, as the rm says (its application's diagnostics).
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostics: Option<String>,
}

#[derive(Debug, Serialize)]
struct PoolOut {
    slots: u32,
    jobs: Vec<String>,
    predicted_makespan_s: f64,
    measured_makespan_s: Option<f64>,
    /// The two-stage flow shop's makespan of the pool's order (Johnson's abstraction: a
    /// job's map stage after the previous one's), times the time scale.
    flow_shop_makespan_s: f64,
}

/// `--json`: the documented keys first.
#[derive(Debug, Serialize)]
struct RunOut {
    order: Vec<String>,
    pools: Vec<PoolOut>,
    predicted_makespan_s: f64,
    measured_makespan_s: Option<f64>,
    /// The two-stage flow shop's makespan (the latest pool's), times the time scale: what
    /// the live pipelining follows for map stages, where the prediction lets a job's maps
    /// start on slots the previous job's last wave leaves free.
    flow_shop_makespan_s: f64,
    policy: &'static str,
    /// The jobs in the order they were submitted (pools interleave by time).
    submitted: Vec<String>,
    jobs: Vec<JobOut>,
    answered: usize,
    unanswered: usize,
    slots: u32,
    time_scale: f64,
    /// The predicted makespan before the time scale (the plan's seconds).
    predicted_makespan_unscaled_s: f64,
    cluster: String,
    source: String,
    seed: u64,
    live_model: &'static str,
}

const LIVE_MODEL: &str = "each job a synthetic job of the plan's task durations × the time scale under `full`, no deadline; each job capped at its pool's slots in task containers (maxContainers); in each pool the next job submitted when the previous one's map stage is done; measured from the first submission to the last answer";

pub(crate) fn run(args: RunArgs) -> Result<()> {
    let Loaded { jobs, source, seed } = load(&args.input)?;
    let slots = args.input.slots;
    for j in &jobs {
        let tasks = j.maps.len().max(j.reduces.len());
        if tasks > MAX_EACH {
            return Err(BadInput(format!(
                "job {} has {tasks} tasks of a kind; a live run takes at most {MAX_EACH}: give fewer --slots or task counts in the file",
                j.id
            ))
            .into());
        }
    }
    if args.rm.is_none() && slots > MAX_LOCAL_SLOTS {
        return Err(BadInput(format!(
            "--slots {slots}: a local cluster runs at most {MAX_LOCAL_SLOTS} slots (twice as many task processes on this host): give fewer --slots, or a cluster with --rm"
        ))
        .into());
    }
    let (pools, predicted) = plan(&jobs, slots, args.order, seed);
    // The cluster: given (reachable, with nodes), or a local one.
    let remote = match &args.rm {
        Some(url) => {
            let target = Target::running(url, args.token_file.clone())?;
            let (url, client) = (target.url(), target.client());
            match client.running_nodes() {
                Ok(nodes) if nodes.is_empty() => {
                    return Err(BadInput(format!(
                        "--rm {url}: the rm has no running nodes: start nodemanagers (`yard nm --rm {url}`), or leave --rm out for a local cluster"
                    ))
                    .into());
                }
                Ok(_) => {
                    // The plan's pools hold 2 × slots task containers (map and reduce slots)
                    // and a master per job running; a smaller cluster queues them, and the
                    // measured makespan then says more about the cluster than about the plan.
                    let vcores = client.typed(|rm| rm.metrics())?.total_virtual_cores;
                    let wanted = 2 * u64::from(slots) + pools.len() as u64;
                    if vcores < wanted {
                        eprintln!(
                            "warning: the rm at {url} has {vcores} vcores; the plan wants {wanted} at once (2 × {slots} slots of tasks and a master per pool): jobs will wait for containers, and the measured makespan will exceed the prediction"
                        );
                    }
                }
                // Unreachable exits 1 and a refusal 2, as every client command (the hint is
                // this command's own).
                Err(e) => {
                    return Err(e.context(format!(
                        "--rm {url} (give the address `yard up` or `yard rm` printed, or leave --rm out for a local cluster)"
                    )));
                }
            }
            Some(target)
        }
        None => None,
    };
    let stop = stop_channel()?;
    let target = match remote {
        Some(target) => target,
        None => {
            // Room for 2 × slots task containers (the model's map and reduce slots), and
            // as much again, half open to masters (512 MB, 1 vcore each).
            let per_node = (2 * slots).div_ceil(args.nodes);
            Target::start_local(
                "batch",
                args.nodes,
                2 * per_node + 2,
                args.heartbeat_ms,
                vec!["--master-share".into(), "0.5".into()],
            )?
        }
    };
    let where_ = match &target {
        Target::Running { url, .. } => url.clone(),
        Target::Local { .. } => format!(
            "a local cluster of {} nodes at {}",
            args.nodes,
            target.url()
        ),
    };
    let outcome = execute(target.client(), &args, &jobs, &pools, seed, &stop);
    target.finish(
        !outcome
            .as_ref()
            .is_ok_and(|(results, _)| results.iter().all(|r| r.answered)),
    );
    let (results, submitted) = outcome?;
    let x = args.time_scale;
    let id = |j: usize| jobs[j].id.clone();
    let measured = |members: &mut dyn Iterator<Item = &JobOut>| -> Option<f64> {
        let mut last: Option<f64> = Some(0.0);
        for r in members {
            last = match (last, r.answered_s) {
                (Some(a), Some(b)) if r.answered => Some(a.max(b)),
                _ => None,
            };
        }
        last
    };
    let pool_out: Vec<PoolOut> = pools
        .iter()
        .enumerate()
        .map(|(p, pool)| PoolOut {
            slots: pool.slots,
            jobs: pool.order.iter().map(|&j| id(j)).collect(),
            predicted_makespan_s: pool.schedule.makespan * x,
            flow_shop_makespan_s: flow_shop(&jobs, pool) * x,
            measured_makespan_s: measured(&mut results.iter().filter(|r| r.pool == p)),
        })
        .collect();
    let answered = results.iter().filter(|r| r.answered).count();
    let out = RunOut {
        order: pools
            .iter()
            .flat_map(|p| p.order.iter().map(|&j| id(j)))
            .collect(),
        pools: pool_out,
        predicted_makespan_s: predicted * x,
        measured_makespan_s: measured(&mut results.iter()),
        policy: match (args.order, pools.len()) {
            (OrderKind::BalancedPools, 1) => "balanced-pools (one pool: Johnson's order)",
            (kind, _) => kind.name(),
        },
        submitted: submitted.iter().map(|&j| id(j)).collect(),
        answered,
        unanswered: results.len() - answered,
        jobs: results,
        slots,
        time_scale: x,
        predicted_makespan_unscaled_s: predicted,
        flow_shop_makespan_s: pools
            .iter()
            .map(|p| flow_shop(&jobs, p) * x)
            .fold(0.0, f64::max),
        cluster: where_,
        source,
        seed,
        live_model: LIVE_MODEL,
    };
    crate::print(&out.printed(args.json, "")?)?;
    if out.unanswered > 0 {
        anyhow::bail!(
            "{} of {} jobs did not answer (see their state above)",
            out.unanswered,
            out.jobs.len()
        );
    }
    Ok(())
}

/// The map stage of a job view is done: every map finished (or the job has ended).
fn map_stage_done(view: &JobView) -> bool {
    view.state.is_final()
        || view.progress.as_ref().is_some_and(|p| {
            let p = &p.progress;
            p.phase == JobPhase::Running && p.maps > 0 && p.maps_done >= p.maps
        })
}

/// Submits the pools' jobs, each pool's next one when its previous one's map stage is done,
/// follows every job to its answer, and reads it. Returns each job's result (in the batch's
/// order) and the submission order.
fn execute(
    client: &Client,
    args: &RunArgs,
    jobs: &[BatchJob],
    pools: &[LivePool],
    seed: u64,
    stop: &mpsc::Receiver<()>,
) -> Result<(Vec<JobOut>, Vec<usize>)> {
    let n = jobs.len();
    let x = args.time_scale;
    let mut results: Vec<JobOut> = (0..n)
        .map(|j| JobOut {
            id: jobs[j].id.clone(),
            pool: 0,
            app: None,
            state: "NOT SUBMITTED".into(),
            answered: false,
            submitted_s: None,
            map_stage_done_s: None,
            answered_s: None,
            predicted_map_stage_done_s: 0.0,
            predicted_end_s: 0.0,
            max_containers: 0,
            peak_containers: None,
            job_seconds: None,
            diagnostics: None,
        })
        .collect();
    for (p, pool) in pools.iter().enumerate() {
        for (k, &j) in pool.order.iter().enumerate() {
            let r = &mut results[j];
            r.pool = p;
            r.max_containers = pool.slots;
            r.predicted_map_stage_done_s = pool.schedule.map_end[k] * x;
            r.predicted_end_s = pool.schedule.end[k] * x;
        }
    }
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("batch [{bar:30}] {pos}/{len} answered {msg} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let mut next = vec![0usize; pools.len()];
    let mut submitted: Vec<usize> = Vec::new();
    let mut running: Vec<usize> = Vec::new();
    let mut done = 0;
    let mut start: Option<Instant> = None;
    let patience = Duration::from_secs(args.patience);
    let began = Instant::now();
    while done < n {
        if stop.try_recv().is_ok() {
            bar.abandon();
            anyhow::bail!(
                "interrupted: {} jobs submitted, {done} answered",
                submitted.len()
            );
        }
        // Each pool's next job, once its previous one's map stage is done.
        for (p, pool) in pools.iter().enumerate() {
            let Some(&j) = pool.order.get(next[p]) else {
                continue;
            };
            let ready = next[p] == 0 || {
                let prev = pool.order[next[p] - 1];
                results[prev].map_stage_done_s.is_some()
            };
            if !ready {
                continue;
            }
            let job = live_job(
                &jobs[j],
                x,
                pool.slots,
                seed.wrapping_add(submitted.len() as u64),
            );
            let body = json!({ "job": job, "name": app_name(&jobs[j].id) });
            let view = client
                .typed(|rm| rm.submit_job(&body))
                .with_context(|| format!("submitting job {}", jobs[j].id))?;
            let t0 = *start.get_or_insert_with(Instant::now);
            let r = &mut results[j];
            r.app = Some(view.id);
            r.state = "SUBMITTED".into();
            r.submitted_s = Some(t0.elapsed().as_secs_f64());
            submitted.push(j);
            running.push(j);
            next[p] += 1;
        }
        let now = start.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let mut still = Vec::new();
        for &j in &running {
            let Some(app) = results[j].app.clone() else {
                continue;
            };
            let polled = poll_job(client, &app)?;
            let r = &mut results[j];
            r.state = polled.state;
            if r.map_stage_done_s.is_none() && map_stage_done(&polled.view) {
                r.map_stage_done_s = Some(now);
            }
            match polled.ended {
                true => {
                    r.answered_s = Some(now);
                    if let Some(answer) = &polled.answer {
                        // The master's own answer (its `job` line), opaque to the rm.
                        let run = AnswerJob::of(&answer.answer).and_then(|j| j.run);
                        r.answered = true;
                        r.peak_containers = run.as_ref().map(|f| u64::from(f.peak_containers));
                        r.job_seconds = run.map(|f| f.job_seconds);
                    } else {
                        r.diagnostics = client.typed(|rm| rm.app(&app)).ok().map(|a| a.diagnostics);
                    }
                    done += 1;
                    bar.inc(1);
                }
                false => still.push(j),
            }
        }
        running = still;
        let busy: Vec<String> = running
            .iter()
            .map(|&j| {
                let stage = match results[j].map_stage_done_s {
                    Some(_) => "reduces",
                    None => "maps",
                };
                format!("{} {stage}", jobs[j].id)
            })
            .collect();
        bar.set_message(format!(
            "· submitted {}/{n} · running {}",
            submitted.len(),
            match busy.is_empty() {
                true => "–".to_owned(),
                false => busy.join(", "),
            }
        ));
        if began.elapsed() > patience {
            bar.abandon();
            eprintln!(
                "gave up on {} jobs still running {} s after the start (--patience)",
                running.len(),
                args.patience
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bar.finish_and_clear();
    Ok((results, submitted))
}

impl Row for JobOut {
    fn fields() -> Vec<Field<JobOut>> {
        let seconds = |h: &str| Column::new(h, Unit::Fixed(1));
        vec![
            (Column::text("job"), |j| j.id.as_str().into()),
            (Column::new("pool", Unit::Count), |j| (j.pool + 1).into()),
            (Column::text("state"), |j| j.state.as_str().into()),
            (seconds("submitted (s)"), |j| j.submitted_s.into()),
            (seconds("map stage done (s)"), |j| j.map_stage_done_s.into()),
            (seconds("predicted"), |j| {
                j.predicted_map_stage_done_s.into()
            }),
            (seconds("answered (s)"), |j| j.answered_s.into()),
            (seconds("predicted"), |j| j.predicted_end_s.into()),
            (Column::new("peak containers / cap", Unit::Count), |j| {
                Cell::Joined(vec![
                    j.peak_containers.map_or(Cell::Missing, Cell::from),
                    j.max_containers.into(),
                ])
            }),
        ]
    }
}

/// The run as text: what ran where, the pools' makespans, each job's times beside the model's.
impl Printable for RunOut {
    fn text(&self) -> String {
        table(self)
    }
}

fn table(r: &RunOut) -> String {
    let opt = |x: Option<f64>| Cell::from(x).in_unit(Unit::Fixed(1));
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Batch run: {} jobs from {}, order {}, on {}; {} slots as the plan counts them, times × {}.",
        r.jobs.len(),
        r.source,
        r.policy,
        r.cluster,
        r.slots,
        crate::replay::time_scale_text(r.time_scale)
    );
    let _ = writeln!(t, "Live: {}.\n", r.live_model);
    let _ = writeln!(t, "Order: {}", r.order.join(" "));
    let _ = writeln!(t, "Submitted: {}\n", r.submitted.join(" "));
    let seconds = |h: &str| Column::new(h, Unit::Fixed(1));
    let pools: &[Field<(usize, &PoolOut)>] = &[
        (Column::new("pool", Unit::Count), |(i, _)| (i + 1).into()),
        (Column::new("slots", Unit::Count), |(_, p)| p.slots.into()),
        (Column::text("jobs in order"), |(_, p)| {
            p.jobs.join(" ").into()
        }),
        (seconds("predicted makespan (s)"), |(_, p)| {
            p.predicted_makespan_s.into()
        }),
        (seconds("two-stage flow shop (s)"), |(_, p)| {
            p.flow_shop_makespan_s.into()
        }),
        (seconds("measured makespan (s)"), |(_, p)| {
            p.measured_makespan_s.into()
        }),
    ];
    t += &Table::of(pools, r.pools.iter().enumerate()).markdown();
    let mut rows: Vec<&JobOut> = r.jobs.iter().collect();
    rows.sort_by(|a, b| {
        a.submitted_s
            .unwrap_or(f64::MAX)
            .total_cmp(&b.submitted_s.unwrap_or(f64::MAX))
    });
    let _ = write!(t, "\n{}", Table::rows(rows).markdown());
    for j in r.jobs.iter().filter(|j| !j.answered) {
        let _ = writeln!(
            t,
            "\n{} ({}) did not answer: {}",
            j.id,
            j.app.as_deref().unwrap_or("not submitted"),
            j.diagnostics.as_deref().unwrap_or(&j.state)
        );
    }
    let _ = writeln!(
        t,
        "\nMakespan: predicted {:.1} s (the two-stage flow shop's {:.1} s), measured {} s{}.",
        r.predicted_makespan_s,
        r.flow_shop_makespan_s,
        opt(r.measured_makespan_s),
        match r.measured_makespan_s {
            Some(m) if r.predicted_makespan_s > 0.0 => format!(
                " ({:+.1} % against the prediction: the masters' and task processes' start, and the live pipelining's differences from the model, module doc of src/batch_run.rs)",
                100.0 * (m - r.predicted_makespan_s) / r.predicted_makespan_s
            ),
            _ => String::new(),
        }
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_job_runs_live_as_a_capped_full_synthetic_job_of_its_scaled_tasks() {
        let job = BatchJob::waves("J1", 4.0, 6.0, 2, 2, 2);
        let live = live_job(&job, 0.5, 1, 7);
        live.validate().unwrap();
        assert_eq!(live.policy, PolicyKind::Full);
        assert_eq!(live.max_containers, Some(1));
        assert_eq!(live.map_seconds_each, Some(vec![2.0, 2.0]));
        assert_eq!(live.reduce_seconds_each, Some(vec![3.0, 3.0]));
        assert_eq!(live.reduces, 2);
        // A map-only job answers from one reduce of no time.
        let map_only = live_job(&BatchJob::waves("J2", 4.0, 0.0, 2, 0, 2), 1.0, 2, 7);
        map_only.validate().unwrap();
        assert_eq!(map_only.reduce_seconds_each, Some(vec![0.0]));
    }

    #[test]
    fn every_order_plans_pools_that_hold_every_job_once() {
        let jobs: Vec<BatchJob> = [(4.0, 5.0), (4.0, 1.0), (30.0, 4.0), (6.0, 30.0), (2.0, 3.0)]
            .iter()
            .enumerate()
            .map(|(i, &(m, r))| BatchJob::one_wave(&format!("J{}", i + 1), m, r, 4))
            .collect();
        for kind in [
            OrderKind::Johnson,
            OrderKind::BalancedPools,
            OrderKind::ReverseJohnson,
            OrderKind::Random,
            OrderKind::Fifo,
        ] {
            let (pools, predicted) = plan(&jobs, 4, kind, 1);
            let mut all: Vec<usize> = pools.iter().flat_map(|p| p.order.clone()).collect();
            all.sort();
            assert_eq!(all, vec![0, 1, 2, 3, 4], "{kind:?}");
            assert_eq!(pools.iter().map(|p| p.slots).sum::<u32>(), 4, "{kind:?}");
            let latest = pools
                .iter()
                .map(|p| p.schedule.makespan)
                .fold(0.0, f64::max);
            assert!(
                (latest - predicted).abs() < 1e-9,
                "{kind:?}: {latest} vs {predicted}"
            );
        }
        let (fifo, _) = plan(&jobs, 4, OrderKind::Fifo, 1);
        assert_eq!(fifo[0].order, vec![0, 1, 2, 3, 4]);
        // The two-stage flow shop of seed 003's five jobs: 47 in Johnson's order, 78 reversed.
        let (johnson, _) = plan(&jobs, 4, OrderKind::Johnson, 1);
        assert_eq!(flow_shop(&jobs, &johnson[0]), 47.0);
        let (reverse, _) = plan(&jobs, 4, OrderKind::ReverseJohnson, 1);
        assert_eq!(flow_shop(&jobs, &reverse[0]), 78.0);
    }

    /// The text as it printed before the tables went through the simulator's writer: both
    /// tables' alignment, a missing time and peak, the jobs in submission order.
    #[test]
    fn the_run_prints_its_pools_and_jobs_as_it_always_has() {
        let job = |id: &str, pool, submitted: Option<f64>| JobOut {
            id: id.into(),
            pool,
            app: None,
            state: "NOT SUBMITTED".into(),
            answered: false,
            submitted_s: submitted,
            map_stage_done_s: None,
            answered_s: None,
            predicted_map_stage_done_s: 1.5,
            predicted_end_s: 5.0,
            max_containers: 1,
            peak_containers: None,
            job_seconds: None,
            diagnostics: None,
        };
        let answered = JobOut {
            state: "FINISHED".into(),
            answered: true,
            map_stage_done_s: Some(3.04),
            answered_s: Some(9.96),
            predicted_map_stage_done_s: 4.0,
            predicted_end_s: 10.0,
            max_containers: 2,
            peak_containers: Some(2),
            ..job("J1", 0, Some(0.0))
        };
        let pool = |slots, id: &str, predicted, measured| PoolOut {
            slots,
            jobs: vec![id.into()],
            predicted_makespan_s: predicted,
            measured_makespan_s: measured,
            flow_shop_makespan_s: predicted + 0.5,
        };
        let out = RunOut {
            order: vec!["J1".into(), "J2".into()],
            pools: vec![pool(2, "J1", 10.0, Some(12.34)), pool(1, "J2", 5.0, None)],
            predicted_makespan_s: 10.0,
            measured_makespan_s: None,
            flow_shop_makespan_s: 10.5,
            policy: "balanced-pools",
            submitted: vec!["J1".into()],
            jobs: vec![job("J2", 1, None), answered],
            answered: 1,
            unanswered: 1,
            slots: 3,
            time_scale: 0.5,
            predicted_makespan_unscaled_s: 20.0,
            cluster: "http://127.0.0.1:1".into(),
            source: "f.csv".into(),
            seed: 1,
            live_model: "M",
        };
        assert_eq!(
            out.printed(false, "").unwrap(),
            "Batch run: 2 jobs from f.csv, order balanced-pools, on http://127.0.0.1:1; 3 slots as the plan counts them, times × 0.5.\n\
             Live: M.\n\n\
             Order: J1 J2\n\
             Submitted: J1\n\n\
             | pool | slots | jobs in order | predicted makespan (s) | two-stage flow shop (s) | measured makespan (s) |\n\
             |---:|---:|---|---:|---:|---:|\n\
             | 1 | 2 | J1 | 10.0 | 10.5 | 12.3 |\n\
             | 2 | 1 | J2 | 5.0 | 5.5 | – |\n\n\
             | job | pool | state | submitted (s) | map stage done (s) | predicted | answered (s) | predicted | peak containers / cap |\n\
             |---|---:|---|---:|---:|---:|---:|---:|---:|\n\
             | J1 | 1 | FINISHED | 0.0 | 3.0 | 4.0 | 10.0 | 10.0 | 2 / 2 |\n\
             | J2 | 2 | NOT SUBMITTED | – | – | 1.5 | – | 5.0 | – / 1 |\n\n\
             J2 (not submitted) did not answer: NOT SUBMITTED\n\n\
             Makespan: predicted 10.0 s (the two-stage flow shop's 10.5 s), measured – s.\n"
        );
    }

    #[test]
    fn the_map_stage_is_done_when_every_map_is_or_the_job_ended() {
        let view = |state: &str, progress: Option<(&str, u32)>| -> JobView {
            let progress = progress.map(|(phase, done)| {
                json!({"phase": phase, "policy": "dart", "maps": 4, "mapsLaunched": 4,
                    "mapsDone": done, "k": done, "mapPhaseClosed": false, "reduces": 1,
                    "reducesDone": 0, "processedBytes": 0, "inputBytes": 0, "guarded": false,
                    "elapsedSeconds": 1.0, "atMs": 0, "estimatedEndMs": null, "slackMs": null})
            });
            serde_json::from_value(json!({"id": "application_1_0001", "name": "j",
                "user": "u", "queue": "default", "state": state, "finalStatus": "UNDEFINED",
                "submittedMs": 0, "deadlineMs": null, "msToDeadline": null, "spec": null,
                "progress": progress, "estimates": [], "quota": null, "jobType": null,
                "processedFraction": null, "answer": null,
                "links": {"self": "", "answer": "", "app": "", "state": ""}}))
            .unwrap()
        };
        assert!(!map_stage_done(&view("RUNNING", None)));
        assert!(!map_stage_done(&view("RUNNING", Some(("running", 3)))));
        assert!(map_stage_done(&view("RUNNING", Some(("running", 4)))));
        assert!(!map_stage_done(&view("RUNNING", Some(("sampling", 4)))));
        assert!(map_stage_done(&view("FAILED", None)));
    }
}
