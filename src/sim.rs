//! `yard sim`: replay a trace (or the Facebook synthetic workload) through the task policies
//! on the simulator, and print the Dart paper's tables beside its figures.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use yard_appmaster::policy::{PolicyConfig, PolicyKind};
use yard_appmaster_live::master::DEFAULT_GUARD_SECONDS;
use yard_cluster::scheduler::ClusterPolicy as RmPolicy;
use yard_sim::experiment::{self, Preset, Setup};
use yard_sim::report::Report;
use yard_sim::shared::{self, DeadlineFactor};
use yard_sim::table::Printable;
use yard_sim::workloads::{self, WorkloadOptions};
use yard_sim::{
    ClusterConfig, DeadlineConfig, Experiment, Model, ProfileSource, ProgressModel, TaskLaw,
};

use crate::trace::ReadArgs;

#[derive(Args)]
pub(crate) struct SimArgs {
    /// The trace to replay (SWIM, Rumen, SLS, SYNTH).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "synthetic",
        required_unless_present_any = ["synthetic", "experiment"]
    )]
    trace: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Replay ARIA's synthetic Facebook workload (Table I) instead of a trace.
    #[arg(long)]
    synthetic: bool,
    /// Use only the first N jobs (of those `--min-maps` keeps).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Keep only jobs with at least N map tasks: the jobs an approximate answer can be
    /// made of (a 1-map job is all or nothing). The paper's 140 jobs were "extracted" from
    /// its traces by a rule it does not give.
    #[arg(long, value_name = "N", default_value_t = 0)]
    min_maps: u64,
    /// Deadline configurations (C1, C2, C3).
    #[arg(long, value_delimiter = ',', default_value = "C1,C2,C3", value_parser = parse_config)]
    configs: Vec<DeadlineConfig>,
    /// Task policies: dart, dart-paper, aria, ps, late, d-wor, d-wmr, d-wost, full.
    /// Default: dart,aria,ps; with `--shared`, dart,full.
    #[arg(long, value_delimiter = ',')]
    policies: Option<Vec<PolicyKind>>,
    /// Replay the jobs on ONE cluster, each arriving at its submit time, under each cluster
    /// policy of `--rm-policies` (the rm's own scheduler), instead of each job alone on
    /// containers of its own under `--configs`.
    #[arg(long, conflicts_with_all = ["experiment", "configs", "seeds", "svg"])]
    shared: bool,
    /// `--shared` and `--experiment overload`: the rm's cluster policies (fifo, fair, edf,
    /// minedf, minedf-wc). Default: fifo,edf,minedf-wc with `--shared`, fifo for overload.
    #[arg(long, value_delimiter = ',')]
    rm_policies: Option<Vec<RmPolicy>>,
    /// `--shared`, `--experiment overload`: each job's deadline is U[LO, HI] × its time alone
    /// on the whole cluster, as ARIA draws them (one number: that factor). Default 1,2.
    #[arg(long, value_name = "LO,HI", value_parser = DeadlineFactor::parse)]
    deadline_factor: Option<DeadlineFactor>,
    /// `--shared`, `--experiment overload`: multiply every submit time by X (below 1: arrivals
    /// closer, more load). Default 1.
    #[arg(long, value_name = "X", value_parser = parse_time_scale)]
    time_scale: Option<f64>,
    /// `--shared`, `--experiment overload`: how masters use containers: `reuse` (yard's live
    /// master: a container runs the job's tasks one after another until released) or
    /// `per-task` (YARN's MapReduce and ARIA's slots: every task its own container, handed out
    /// anew by the cluster policy). Default: reuse with `--shared`; per-task for overload,
    /// where the classifier judges every task's placement as the paper's does.
    #[arg(long, value_name = "USE", value_parser = ["reuse", "per-task"])]
    containers: Option<String>,
    /// `--shared`, `--experiment overload`: the cluster's nodes. Default 64: of 2 containers
    /// each with `--shared`, of 4 cores and 4 containers each for overload.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    nodes: Option<u32>,
    /// `--shared`, `--experiment overload`: the cluster's nodes and racks from a topology file
    /// (SLS's `nodes.json` or Rumen's `TopologyBuilder` tree, detected), instead of `--nodes`:
    /// its hosts are the nodes; the simulator's racks are all of one size, its racks' mean
    /// (rounded up). Containers per node stay the experiment's.
    #[arg(long, value_name = "FILE", conflicts_with = "nodes")]
    topology: Option<PathBuf>,
    /// `--shared`: capacity queues, the file `yard rm --queues` reads (docs/queues.md); a
    /// queue without a policy runs each day's cluster policy. Job i goes to the (i mod N)-th
    /// queue, each job its own user; the report adds a row per queue.
    #[arg(long, value_name = "FILE", requires = "shared")]
    queues: Option<std::path::PathBuf>,
    /// One of the Dart paper's experiments: deadlines, estimation, stragglers, optimizations
    /// (they set configurations, policies and faults; `--configs`/`--policies` are then
    /// ignored); `rm-policies`: ARIA's cluster-policy experiment on its synthetic Facebook
    /// workload (`--runs`, `--interarrivals`, `--jobs`, `--svg`); or `overload`: the shared
    /// cluster with background CPU and IO hogs on its nodes, without and with the rm's overload
    /// classifier (issue 17; `--trace` or `--synthetic`, default the first 300 jobs of the
    /// shipped FB-2009 day; `--seeds`, `--nodes`, `--rm-policies`, `--policies`, `--svg`);
    /// or `makespan`: seed 003's batch makespan against cluster size for random, Johnson,
    /// reverse Johnson and BalancedPools on its Yahoo!/synthetic/Facebook workloads and FB
    /// jobs of a SWIM trace (`--trace`, default the shipped FB-2009 day), in the paper's
    /// slot-level model (`--jobs` per workload, default 100; `--cluster-sizes`, `--seeds`,
    /// `--svg`); or `shared-scans`: seed 004's CIRCUMFLEX against FLEX and BATCH on its §4
    /// mix (`--jobs` arrivals, default 1000; `--seeds`, `--svg`), or on a SWIM trace with
    /// input paths (`--trace`), with the bytes each policy reads; with `--deadlines`, its
    /// deadline variant.
    #[arg(long, value_name = "NAME", value_parser = parse_experiment)]
    experiment: Option<ExperimentArg>,
    /// `--experiment overload`: how tasks are placed, beside the run without any (off, always
    /// run): paper (seed 002's classifier), yard (yard's classifier), spread (no classifier,
    /// each task on the node with the fewest containers per core), comma-separated
    /// [default: paper].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    overload_variants: Option<Vec<String>>,
    /// `--experiment overload`: the classifier's settings, as `yard rm` takes them. Which job
    /// a node serves first among those judged good: policy, fcfs[:EPSILON_S] or
    /// map-first[:REDUCE_WEIGHT] [default: policy].
    #[arg(long, value_name = "NAME")]
    overload_utility: Option<String>,
    /// `--experiment overload`: the rule (for both runs): overloaded when the 1-minute load
    /// exceeds this many times the cores [default: 1].
    #[arg(long)]
    overload_max_load_per_core: Option<f64>,
    /// `--experiment overload`: the rule: overloaded when less than this fraction of memory is
    /// free [default: 0.1].
    #[arg(long)]
    overload_min_free_memory: Option<f64>,
    /// `--experiment overload`: the rule: overloaded when the disk moves more than this
    /// fraction of its rate [default: disks not judged].
    #[arg(long)]
    overload_max_disk: Option<f64>,
    /// `--experiment overload`: labelled placements the classifier needs before it refuses a
    /// node [default: 20].
    #[arg(long)]
    overload_min_samples: Option<u64>,
    /// `--experiment overload`: a placement is labelled by its node's first load sample this
    /// long after it, ms [default: 5000].
    #[arg(long)]
    overload_settle_ms: Option<i64>,
    /// `--experiment overload`: a node refused this long gets one task anyway, ms
    /// [default: 60000].
    #[arg(long)]
    overload_explore_after_ms: Option<i64>,
    /// `--experiment makespan`: the cluster sizes, nodes of 1 map + 1 reduce slot each
    /// [default: 10,20,50,100,200,500].
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=100_000))]
    cluster_sizes: Option<Vec<u32>>,
    /// `--experiment shared-scans`: every job's maximum map slots `M_j` (seed 004 gives none)
    /// [default: 100, all the slots].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    max_slots: Option<u32>,
    /// `--experiment shared-scans`: all of Fig. 6's 25 (θ1, θ2) settings, each at the nine
    /// correlation levels, summarised as min / median / max ratios to FLEX.
    #[arg(long, conflicts_with = "trace")]
    grid: bool,
    /// `--experiment shared-scans`: the deadline variant on the seed's mix: each job with
    /// probability SHARE (in (0, 1]) carries a Dart deadline at arrival + U[LO, HI] × its time
    /// alone (`--deadline-factor LO,HI`, here default 1,3), and answers by then from the part
    /// of its dataset scanned; FLEX, CIRCUMFLEX and CIRCUMFLEX-EDF (the deadline jobs' chains
    /// first where that costs no deadline the plan meets) on average response time, with whole
    /// answers by the deadline, the processed fraction and the empty answers over the deadline
    /// jobs, and the mean response time of the others.
    #[arg(long, value_name = "SHARE", value_parser = parse_share, conflicts_with_all = ["trace", "grid", "svg"])]
    deadlines: Option<f64>,
    /// `--experiment rm-policies`: runs (seeds) per point; every figure is their mean.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    runs: u64,
    /// `--experiment rm-policies`: the mean inter-arrival times swept, seconds.
    #[arg(long, value_name = "S,...", value_delimiter = ',', default_value = "100,200,400,800,1600", value_parser = parse_interarrival)]
    interarrivals: Vec<f64>,
    /// Slow nodes among the cluster's 64 (Dart §6.5 uses 8).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    stragglers: u32,
    /// Probability that a task attempt fails.
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_fraction)]
    failure_rate: f64,
    /// Zipf exponent of reduce partition sizes (0: no skew).
    #[arg(long, default_value_t = 0.0)]
    skew: f64,
    /// The deadline guard (yard's, beyond the paper), as the live master runs it: this many
    /// seconds before each deadline every policy but `full` stops its maps and has its
    /// running reduces answer from what they have folded in; at the deadline, reduces not
    /// done are dropped; `dart` stops its maps at the last moment its estimate leaves for the
    /// answer and treats this margin as a floor that stops only what will no longer end in
    /// time (`last_moment`). Each guarded policy is reported twice on the same jobs: without the
    /// guard (`dart`, as the paper has it) and with it (`dart+guard`). 0: no guard. The
    /// default is the live master's.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_GUARD_SECONDS, value_parser = parse_guard)]
    guard: f64,
    /// Run `dart` with these of yard's extensions off (comma-separated: reduce_waves,
    /// reduce_confidence, forecast_cut, sample_floor, node_pace, reduce_restart,
    /// deadline_stragglers, end_lost_races, kill_on_tick, first_map, lone_map, last_moment,
    /// busy_bandwidth, wave_end, fifo_shuffle, elapsed_phases, cut_tail, time_cut,
    /// reforecast_after_kill, input_scaled): an ablation, to be set beside the same command
    /// without it. The header says which are off.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    dart_without: Vec<String>,
    /// Run `dart` with these of yard's extensions on that are off by default (`wave_fill`),
    /// as `--dart-without` turns others off.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    dart_with: Vec<String>,
    /// How running tasks report progress: `exact` (linear in time, exact reports) or `noisy`
    /// (a task's speed varies between quarters of its run, σ 0.5 in log, and each report is
    /// off by 5 points, sd).
    #[arg(long, value_name = "MODEL", default_value = "exact", value_parser = ProgressModel::parse)]
    progress: ProgressModel,
    /// The law spreading task durations around their job's mean: `log-normal` (the law Dart's
    /// estimator assumes) or `pareto` (the same mean and spread, a heavier tail).
    #[arg(long, value_name = "LAW", default_value = "log-normal", value_parser = TaskLaw::parse)]
    durations: TaskLaw,
    /// What a job's profile is measured from: `noisy-truth` (sampled task times, but the
    /// truth's output per map and its bandwidth with 10 % noise) or `sampled` (sample runs
    /// only: the output ratio of a few maps, the bandwidth as the profiler reads their
    /// transfers).
    #[arg(long, value_name = "SOURCE", default_value = "noisy-truth", value_parser = ProfileSource::parse)]
    profiles: ProfileSource,
    /// All three harsh: `--progress noisy --durations pareto --profiles sampled`.
    #[arg(long, conflicts_with_all = ["progress", "durations", "profiles"])]
    harsh: bool,
    /// How many earlier runs of each recurring job its profile has seen, each with its own
    /// draws: `T_l^a` is their mean map (Dart §5.3), their reduces join the task sampler's in
    /// the `f(d)` fit, their spread is `map_spread`. 0: the sample runs alone (3 maps, 5
    /// reduces). The live profile store keeps the last 5 runs' means.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=100))]
    earlier_runs: u64,
    /// An oracle for research: give every profile the truth's reduce law `f(d)` (its median
    /// and spread) instead of the fit to sample and earlier reduces, every draw unchanged, to
    /// measure how much of the estimation error the fit's variance is. Never a cluster's.
    #[arg(long)]
    oracle_reduce_law: bool,
    /// Run N seeds, `--seed` S, S + 1, …, S + N − 1 (each draws its own task durations,
    /// profiles, slow nodes and failures), and print every figure as its mean over them ± the
    /// seeds' standard deviation (`--json`: each seed's report too). Default: 3 with
    /// `--experiment`, else 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    seeds: Option<u64>,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// Write the paper's plots as SVG here: CDFs of k/k_max and of estimation error, the
    /// error per phase, and how answers ended (met / empty / missed); from the first seed's
    /// run.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Write every job's result as a CSV row here (every seed, configuration and policy: the
    /// outcome, k and k_max, the processed fraction and the byte oracle's, the estimate at map
    /// close beside the true phases), for questions the tables do not answer.
    #[arg(long, value_name = "FILE")]
    jobs_csv: Option<PathBuf>,
    /// Explain one trace job (its id, e.g. job2432; among the jobs `--min-maps` keeps, as the
    /// report numbers them): under the first of `--configs` and of `--policies` (dart by
    /// default), at `--seed`, guarded as the report's `+guard` row is (`--guard 0`: its plain
    /// row), print its true task times and reduce law, its profile, every decision the policy
    /// made with its time, when it answered and its estimate at map close with the errors.
    #[arg(long, value_name = "JOB", conflicts_with_all = ["experiment", "shared", "synthetic", "seeds", "json", "svg", "jobs_csv"])]
    explain: Option<String>,
}

/// `--jobs-csv`: the file, and whether its header is written.
struct JobsCsv {
    file: std::io::BufWriter<std::fs::File>,
    header_written: bool,
}

/// Input the user must fix (exit code 2, like a bad trace or flag).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadInput(pub(crate) String);

/// The seed when `--seed` is not given: runs repeat by default.
const DEFAULT_SEED: u64 = 1;

/// ARIA's synthetic workload: 1000 jobs (Table I), exponential inter-arrival with this mean.
const SYNTHETIC_JOBS: usize = 1000;
const SYNTHETIC_INTERARRIVAL_S: f64 = 100.0;

fn parse_config(s: &str) -> Result<DeadlineConfig, String> {
    DeadlineConfig::by_name(s)
        .ok_or_else(|| format!("unknown configuration {s:?}; expected C1, C2 or C3"))
}

fn parse_guard(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "expected seconds before the deadline, 0 or more, found {s:?}"
        )),
    }
}

/// A Dart experiment of the paper, or ARIA's cluster-policy experiment.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExperimentArg {
    Dart(Preset),
    RmPolicies,
    Overload,
    Makespan,
    SharedScans,
}

fn parse_experiment(s: &str) -> Result<ExperimentArg, String> {
    match s {
        "rm-policies" => Ok(ExperimentArg::RmPolicies),
        "overload" => Ok(ExperimentArg::Overload),
        "makespan" => Ok(ExperimentArg::Makespan),
        "shared-scans" => Ok(ExperimentArg::SharedScans),
        _ => Preset::parse(s)
            .map(ExperimentArg::Dart)
            .map_err(|e| format!("{e}, rm-policies, overload, makespan, shared-scans")),
    }
}

fn parse_interarrival(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a mean inter-arrival time in seconds above 0, found {s:?}"
        )),
    }
}

fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a factor above 0 for submit times, found {s:?}"
        )),
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!(
            "expected the share of jobs with a deadline, above 0 and at most 1, found {s:?}"
        )),
    }
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a probability between 0 and 1, found {s:?}"
        )),
    }
}

pub(crate) fn run(args: SimArgs) -> Result<()> {
    let model = match args.harsh {
        true => Model::HARSH,
        false => Model {
            progress: args.progress,
            durations: args.durations,
            profiles: args.profiles,
            earlier_runs: 1,
            oracle_reduce_law: false,
        },
    };
    // `--harsh` leaves the earlier runs and the oracle to their own flags.
    let model = Model {
        earlier_runs: args.earlier_runs as usize,
        oracle_reduce_law: args.oracle_reduce_law,
        ..model
    };
    let cluster = ClusterConfig {
        slow_nodes: args.stragglers,
        failure_rate: args.failure_rate,
        ..ClusterConfig::default()
    };
    let mut dart_extensions = yard_appmaster::policy::Extensions::YARD;
    for name in &args.dart_without {
        dart_extensions = dart_extensions
            .without(name.trim())
            .map_err(|e| BadInput(format!("--dart-without: {e}")))?;
    }
    for name in &args.dart_with {
        dart_extensions = dart_extensions
            .with(name.trim())
            .map_err(|e| BadInput(format!("--dart-with: {e}")))?;
    }
    let base = Experiment {
        cluster,
        policy: PolicyConfig {
            dart_extensions: (dart_extensions != yard_appmaster::policy::Extensions::YARD)
                .then_some(dart_extensions),
            ..PolicyConfig::default()
        },
        seed: args.read.seed.unwrap_or(DEFAULT_SEED),
        guard: args.guard,
        model,
    };
    let overload = matches!(args.experiment, Some(ExperimentArg::Overload));
    if !(args.shared || overload) {
        let given = [
            ("--rm-policies", args.rm_policies.is_some()),
            (
                "--deadline-factor",
                args.deadline_factor.is_some() && args.deadlines.is_none(),
            ),
            ("--time-scale", args.time_scale.is_some()),
            ("--containers", args.containers.is_some()),
            ("--nodes", args.nodes.is_some()),
            ("--topology", args.topology.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            // The deadline slack also serves the shared-scans experiment's deadlines.
            let also = match *flag {
                "--deadline-factor" => " (or --experiment shared-scans --deadlines SHARE)",
                _ => "",
            };
            return Err(BadInput(format!(
                "{flag} is for one shared cluster: add --shared or --experiment overload{also}"
            ))
            .into());
        }
    }
    if !overload {
        let given = [
            ("--overload-variants", args.overload_variants.is_some()),
            ("--overload-utility", args.overload_utility.is_some()),
            (
                "--overload-max-load-per-core",
                args.overload_max_load_per_core.is_some(),
            ),
            (
                "--overload-min-free-memory",
                args.overload_min_free_memory.is_some(),
            ),
            ("--overload-max-disk", args.overload_max_disk.is_some()),
            (
                "--overload-min-samples",
                args.overload_min_samples.is_some(),
            ),
            ("--overload-settle-ms", args.overload_settle_ms.is_some()),
            (
                "--overload-explore-after-ms",
                args.overload_explore_after_ms.is_some(),
            ),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(BadInput(format!(
                "{flag} sets the overload classifier: it needs --experiment overload"
            ))
            .into());
        }
    }
    if args.cluster_sizes.is_some() && !matches!(args.experiment, Some(ExperimentArg::Makespan)) {
        return Err(BadInput("--cluster-sizes is for --experiment makespan".into()).into());
    }
    if !matches!(args.experiment, Some(ExperimentArg::SharedScans)) {
        if args.max_slots.is_some() {
            return Err(BadInput("--max-slots is for --experiment shared-scans".into()).into());
        }
        if args.grid {
            return Err(BadInput("--grid is for --experiment shared-scans".into()).into());
        }
        if args.deadlines.is_some() {
            return Err(BadInput("--deadlines is for --experiment shared-scans".into()).into());
        }
    }
    if args.shared {
        return run_shared(&args, base);
    }
    if let Some(id) = &args.explain {
        return run_explain(&args, base, id);
    }
    let preset = match args.experiment {
        Some(ExperimentArg::RmPolicies) => return run_rm_policies(&args, base),
        Some(ExperimentArg::Overload) => return run_overload(&args, base),
        Some(ExperimentArg::Makespan) => return run_makespan(&args, base.seed),
        Some(ExperimentArg::SharedScans) => return run_shared_scans(&args, base.seed),
        Some(ExperimentArg::Dart(p)) if args.trace.is_none() && !args.synthetic => {
            return Err(BadInput(format!(
                "--experiment {} replays a workload: give --trace FILE or --synthetic",
                p.name()
            ))
            .into());
        }
        Some(ExperimentArg::Dart(p)) => Some(p),
        None => None,
    };
    let setups = match preset {
        Some(preset) => preset.setups(&base),
        None => vec![Setup {
            name: if args.stragglers > 0 {
                "stragglers"
            } else {
                "deadlines"
            }
            .to_owned(),
            configs: args.configs.clone(),
            policies: args
                .policies
                .clone()
                .unwrap_or_else(|| vec![PolicyKind::Dart, PolicyKind::Aria, PolicyKind::Ps]),
            experiment: base,
        }],
    };
    let mut text = String::new();
    let mut json = Vec::new();
    let trace = match &args.trace {
        Some(path) => Some(yard_workload::read_file(path, &args.read.options())?),
        None => None, // --synthetic (clap requires one of the two)
    };
    let first_seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    let seeds = args
        .seeds
        .unwrap_or(if args.experiment.is_some() { 3 } else { 1 });
    let mut jobs_csv = match &args.jobs_csv {
        Some(path) => Some(JobsCsv {
            file: std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("creating --jobs-csv {}", path.display()))?,
            ),
            header_written: false,
        }),
        None => None,
    };
    for setup in &setups {
        let mut reports = Vec::new();
        for seed in (0..seeds).map(|i| first_seed.wrapping_add(i)) {
            let mut setup = setup.clone();
            setup.experiment.seed = seed;
            // Plots are drawn from the first seed's run.
            let svg = args.svg.as_deref().filter(|_| reports.is_empty());
            reports.push(run_seed(
                &args,
                trace.as_ref(),
                &setup,
                svg,
                jobs_csv.as_mut(),
            )?);
        }
        let title = format!("## {} ({})\n\n", setup.name, describe(setup));
        match reports.len() {
            1 => {
                let report = reports.pop().expect("one report");
                if args.json {
                    json.push(serde_json::to_value(&report)?);
                } else {
                    text += &format!("{title}{}\n", report.text());
                }
            }
            _ => {
                let report = yard_sim::seeds::across(reports);
                if args.json {
                    json.push(serde_json::to_value(&report)?);
                } else {
                    text += &format!("{title}{}\n", report.text());
                }
            }
        }
    }
    if let Some(out) = &mut jobs_csv {
        std::io::Write::flush(&mut out.file).context("writing --jobs-csv")?;
    }
    let out = if args.json {
        let value = if json.len() == 1 {
            json.pop().expect("one report")
        } else {
            serde_json::Value::Array(json)
        };
        serde_json::to_string_pretty(&value)? + "\n"
    } else {
        text
    };
    crate::print(&out)?;
    Ok(())
}

/// `--explain JOB`: the job's run under the first configuration and policy, decision by
/// decision (`yard_sim::explain`), its draws made as the report's run at this seed makes them.
fn run_explain(args: &SimArgs, base: Experiment, id: &str) -> Result<()> {
    let Some(path) = &args.trace else {
        return Err(
            BadInput("--explain JOB explains a trace's job: give --trace FILE".into()).into(),
        );
    };
    let trace = yard_workload::read_file(path, &args.read.options())?;
    let seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    let exp = Experiment { seed, ..base };
    let options = workload_options(args, seed, args.skew, &exp.model);
    let found = workloads::trace_jobs(&trace, &options)
        .filter(|j| u64::from(j.maps()) >= args.min_maps)
        .enumerate()
        .find(|(_, j)| j.id == id);
    let Some((index, job)) = found else {
        return Err(BadInput(format!(
            "--explain {id}: no such job among the trace's jobs of at least {} maps (--min-maps; \
             `yard trace inspect` lists a trace's jobs)",
            args.min_maps
        ))
        .into());
    };
    let config = *args.configs.first().context("--configs names none")?;
    let policy = args
        .policies
        .as_ref()
        .and_then(|p| p.first().copied())
        .unwrap_or(PolicyKind::Dart);
    let text = yard_sim::explain::explain(&job, index as u64, config, policy, &exp);
    crate::print(&text)?;
    Ok(())
}

/// The workload's draws at `seed` as the flags and `model` have them.
fn workload_options(args: &SimArgs, seed: u64, skew: f64, model: &Model) -> WorkloadOptions {
    WorkloadOptions {
        seed,
        block_bytes: args.read.options().block_bytes,
        skew,
        ..WorkloadOptions::default()
    }
    .with_model(model)
}

/// One seed's run of `setup` (whose experiment carries the seed): its jobs built with that
/// seed, simulated, summed up.
fn run_seed(
    args: &SimArgs,
    trace: Option<&yard_workload::Workload>,
    setup: &Setup,
    svg: Option<&std::path::Path>,
    jobs_csv: Option<&mut JobsCsv>,
) -> Result<Report> {
    let seed = setup.experiment.seed;
    // The skew half of the optimizations preset needs skewed partitions.
    let skew = if setup.name == "skew" && args.skew == 0.0 {
        1.0
    } else {
        args.skew
    };
    let options = workload_options(args, seed, skew, &setup.experiment.model);
    // Jobs are built (and their draws made) before the filter, so a kept job is the same
    // job whatever `--min-maps` says.
    let kept = |j: &yard_sim::job::SimJob| u64::from(j.maps()) >= args.min_maps;
    let synthetic = match trace {
        Some(_) => Vec::new(),
        None => {
            let all = workloads::facebook_synthetic(
                args.jobs.unwrap_or(SYNTHETIC_JOBS),
                SYNTHETIC_INTERARRIVAL_S,
                &options,
            );
            all.into_iter().filter(|j| kept(j)).collect()
        }
    };
    let available = match trace {
        Some(w) => w
            .jobs
            .iter()
            .filter(|j| j.map_count() >= args.min_maps)
            .count(),
        None => synthetic.len(),
    };
    let count = args.jobs.map_or(available, |n| n.min(available));
    if count == 0 {
        return Err(BadInput(
            "the workload has no jobs to simulate; check --jobs, --min-maps and the trace".into(),
        )
        .into());
    }
    let name = format!("{} seed {seed}", setup.name);
    let bar = progress_bar(count as u64, &name);
    let ran = match trace {
        Some(w) => {
            let jobs = workloads::trace_jobs(w, &options).filter(|j| kept(j));
            experiment::run(jobs.take(count), setup, &bar)
        }
        None => experiment::run(synthetic.into_iter().take(count), setup, &bar),
    };
    let results = ran.results;
    if let Some(dir) = svg {
        yard_sim::plot::write_plots(dir, &setup.name, &setup.policies, &results)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
    }
    if let Some(out) = jobs_csv {
        let header = !out.header_written;
        yard_sim::jobs_csv::write(&mut out.file, header, &setup.name, seed, &results)
            .context("writing --jobs-csv")?;
        out.header_written = true;
    }
    Ok(experiment::report(setup, count, ran.no_task_jobs, &results))
}

/// `--experiment rm-policies`: ARIA's Facebook workload under the cluster policies.
fn run_rm_policies(args: &SimArgs, base: Experiment) -> Result<()> {
    if args.trace.is_some() {
        return Err(BadInput(
            "--experiment rm-policies replays ARIA's synthetic Facebook workload: leave out --trace (or use --shared to replay a trace on one cluster)".into(),
        )
        .into());
    }
    let mut setup = yard_sim::rm_policies::AriaSetup::aria(&base);
    setup.jobs = args.jobs.unwrap_or(setup.jobs);
    setup.runs = args.runs;
    setup.interarrivals = args.interarrivals.clone();
    let total = setup.runs * (setup.interarrivals.len() * setup.rm_policies.len()) as u64;
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "rm-policies [{bar:40}] {pos}/{len} days {elapsed} (eta {eta})",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    let report = yard_sim::rm_policies::run(&setup, &|done, _| bar.set_position(done));
    bar.finish_and_clear();
    if let Some(dir) = &args.svg {
        yard_sim::rm_policies::write_plots(dir, &report)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
    }
    crate::print(&report.printed(args.json, "## rm-policies\n\n")?)?;
    Ok(())
}

/// The shared cluster's nodes: `--topology`'s hosts (and its racks' mean size, rounded up,
/// as the simulator's one rack size), else `--nodes`, else `default`.
fn shape_cluster(args: &SimArgs, cluster: &mut ClusterConfig, default: u32) -> Result<()> {
    let Some(path) = &args.topology else {
        cluster.nodes = args.nodes.unwrap_or(default);
        return Ok(());
    };
    let read = yard_workload::read_file(path, &yard_workload::ReadOptions::default())
        .map_err(|e| BadInput(format!("--topology: {e}")))?;
    if !matches!(
        read.format,
        yard_workload::Format::Topology | yard_workload::Format::RumenTopology
    ) {
        return Err(BadInput(format!(
            "--topology {}: expected a topology (SLS's nodes.json or a Rumen topology), found a {} trace",
            path.display(),
            read.format
        ))
        .into());
    }
    let (nodes, racks) = (read.topology.nodes.len(), read.topology.racks.len());
    cluster.nodes = u32::try_from(nodes)
        .ok()
        .filter(|n| *n <= 100_000)
        .ok_or_else(|| {
            BadInput(format!(
                "--topology {}: {nodes} nodes, more than the 100000 the simulator takes",
                path.display()
            ))
        })?;
    // Hosts without a rack count as one rack of their own.
    cluster.nodes_per_rack = cluster.nodes.div_ceil(racks.max(1) as u32);
    Ok(())
}

/// `--shared`: every job of the trace (or the synthetic workload) on one cluster, under each
/// cluster policy and task policy.
fn run_shared(args: &SimArgs, mut exp: Experiment) -> Result<()> {
    shape_cluster(args, &mut exp.cluster, 64)?;
    if let Some(path) = &args.queues {
        exp.cluster.queues = Some(crate::daemons::read_queue_file(path)?);
    }
    exp.policy.one_task_per_container = args.containers.as_deref() == Some("per-task");
    let rm_policies = args
        .rm_policies
        .clone()
        .unwrap_or_else(|| vec![RmPolicy::Fifo, RmPolicy::Edf, RmPolicy::MinEdfWc]);
    let deadline_factor = args.deadline_factor.unwrap_or(DeadlineFactor::ARIA);
    let time_scale = args.time_scale.unwrap_or(1.0);
    let trace = match &args.trace {
        Some(path) => Some(yard_workload::read_file(path, &args.read.options())?),
        None => None,
    };
    let options = workload_options(args, exp.seed, args.skew, &exp.model);
    let jobs = day_jobs(
        args,
        trace.as_ref(),
        &options,
        (
            args.jobs.unwrap_or(usize::MAX),
            args.jobs.unwrap_or(SYNTHETIC_JOBS),
        ),
    )?;
    let policies = args
        .policies
        .clone()
        .unwrap_or_else(|| vec![PolicyKind::Dart, PolicyKind::Full]);
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.enable_steady_tick(std::time::Duration::from_millis(200));
    spinner.set_message(format!(
        "{} jobs: each alone on the whole cluster (T_J)",
        jobs.len()
    ));
    let jobs = shared::prepare(jobs, &exp, deadline_factor, time_scale);
    spinner.set_message(format!(
        "{} jobs on one cluster: {} days ({} rm policies × {} task policies)",
        jobs.len(),
        rm_policies.len() * policies.len(),
        rm_policies.len(),
        policies.len()
    ));
    let report = shared::run_days(
        &jobs,
        &rm_policies,
        &policies,
        &exp,
        deadline_factor,
        time_scale,
    );
    spinner.finish_and_clear();
    crate::print(&report.printed(args.json, "## shared cluster\n\n")?)?;
    Ok(())
}

/// The jobs of a day on the shared cluster (`--shared`, `--experiment overload`): the trace's
/// first `trace_count` of at least `--min-maps` maps, or of ARIA's synthetic workload of
/// `synthetic_count` jobs those of at least `--min-maps`; none is bad input.
fn day_jobs(
    args: &SimArgs,
    trace: Option<&yard_workload::Workload>,
    options: &WorkloadOptions,
    (trace_count, synthetic_count): (usize, usize),
) -> Result<Vec<yard_sim::job::SimJob>> {
    let kept = |j: &yard_sim::job::SimJob| u64::from(j.maps()) >= args.min_maps;
    let jobs: Vec<yard_sim::job::SimJob> = match trace {
        Some(w) => workloads::trace_jobs(w, options)
            .filter(|j| kept(j))
            .take(trace_count)
            .collect(),
        None => workloads::facebook_synthetic(synthetic_count, SYNTHETIC_INTERARRIVAL_S, options)
            .into_iter()
            .filter(|j| kept(j))
            .collect(),
    };
    if jobs.is_empty() {
        return Err(BadInput(
            "the workload has no jobs to simulate; check --jobs, --min-maps and the trace".into(),
        )
        .into());
    }
    Ok(jobs)
}

/// `--experiment overload`'s default workload: the shipped FB-2009 day, as every README command
/// names it (relative to where yard runs), and how many of its jobs.
const OVERLOAD_TRACE: &str = "traces/swim/FB-2009_samples_24_times_1hr_0.tsv";
const OVERLOAD_JOBS: usize = 300;
/// `--experiment overload`'s cluster: the Dart paper's 64 nodes, of 4 cores and 4 containers
/// (a vcore each).
const OVERLOAD_NODES: u32 = 64;
const OVERLOAD_CONTAINERS: u32 = 4;

/// `--experiment overload`: the shared cluster with background hogs on its nodes, every day
/// run without and with the rm's overload classifier on the same jobs and hogs, per seed.
fn run_overload(args: &SimArgs, mut exp: Experiment) -> Result<()> {
    use yard_sim::overload::{self, OverloadSetup};
    shape_cluster(args, &mut exp.cluster, OVERLOAD_NODES)?;
    exp.cluster.containers_per_node = OVERLOAD_CONTAINERS;
    exp.policy.one_task_per_container = args.containers.as_deref() != Some("reuse");
    let path = match (&args.trace, args.synthetic) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => None,
        (None, false) => {
            let path = PathBuf::from(OVERLOAD_TRACE);
            if !path.exists() {
                return Err(BadInput(format!(
                    "--experiment overload replays {OVERLOAD_TRACE} by default, which is not here: run yard from the repository, or give --trace FILE or --synthetic"
                ))
                .into());
            }
            Some(path)
        }
    };
    let trace = match &path {
        Some(path) => Some(yard_workload::read_file(path, &args.read.options())?),
        None => None,
    };
    let count = args.jobs.unwrap_or(OVERLOAD_JOBS);
    let workload = match &path {
        Some(p) => format!("{}, first {count} jobs", p.display()),
        None => format!("ARIA's synthetic Facebook workload, {count} jobs"),
    };
    let first_seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    let seeds = args.seeds.unwrap_or(3);
    let factor = args.deadline_factor.unwrap_or(DeadlineFactor::ARIA);
    let time_scale = args.time_scale.unwrap_or(1.0);
    let setup = OverloadSetup {
        experiment: exp.clone(),
        load: yard_sim::load::LoadConfig::for_containers(OVERLOAD_CONTAINERS),
        classifier: classifier_config(args)?,
        rm_policies: args
            .rm_policies
            .clone()
            .unwrap_or_else(|| vec![RmPolicy::Fifo]),
        policies: args
            .policies
            .clone()
            .unwrap_or_else(|| vec![PolicyKind::Dart]),
        variants: match &args.overload_variants {
            None => vec![overload::Variant::Paper],
            Some(list) => {
                let mut out = Vec::new();
                for v in list.iter().map(|v| v.trim()) {
                    let v = overload::Variant::parse(v)
                        .map_err(|e| BadInput(format!("--overload-variants: {e}")))?;
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
                out
            }
        },
    };
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.enable_steady_tick(std::time::Duration::from_millis(200));
    let mut reports = Vec::new();
    for seed in (0..seeds).map(|i| first_seed.wrapping_add(i)) {
        let mut setup = setup.clone();
        setup.experiment.seed = seed;
        let options = workload_options(args, seed, args.skew, &exp.model);
        let jobs = day_jobs(args, trace.as_ref(), &options, (count, count))?;
        spinner.set_message(format!(
            "overload, seed {seed}: {} jobs, each alone on the whole cluster (T_J)",
            jobs.len()
        ));
        let ratios = overload::reduce_output_ratios(&jobs, trace.as_ref());
        let jobs = shared::prepare(jobs, &setup.experiment, factor, time_scale);
        spinner.set_message(format!(
            "overload, seed {seed}: {} days",
            (1 + setup.variants.len()) * setup.rm_policies.len() * setup.policies.len()
        ));
        let report = overload::run(&setup, &jobs, &ratios, factor, time_scale);
        if let Some(dir) = args.svg.as_deref().filter(|_| reports.is_empty()) {
            overload::write_plot(dir, &report)
                .with_context(|| format!("writing the plot to {}", dir.display()))?;
        }
        reports.push(report);
    }
    spinner.finish_and_clear();
    let reports = overload::OverloadReports { reports, workload };
    crate::print(&reports.printed(args.json, "## overload\n\n")?)?;
    Ok(())
}

/// `--experiment makespan`'s cluster sizes (nodes of 1 map + 1 reduce slot; the paper does not
/// print its range) and jobs per workload (the paper's 100).
const MAKESPAN_NODES: [u32; 6] = [10, 20, 50, 100, 200, 500];
const MAKESPAN_JOBS: usize = 100;

/// `--experiment makespan`: seed 003's batch makespan against cluster size (issue 20 item 3).
fn run_makespan(args: &SimArgs, first_seed: u64) -> Result<()> {
    use yard_sim::makespan::{self, MakespanSetup, Workload};
    if args.synthetic || args.shared {
        return Err(BadInput(
            "--experiment makespan runs seed 003's own workloads; --trace FILE only picks the SWIM trace of its fb-swim workload".into(),
        )
        .into());
    }
    if args.cluster_sizes.as_ref().is_some_and(|s| s.is_empty()) {
        return Err(BadInput("--cluster-sizes: give at least one size".into()).into());
    }
    let jobs = args.jobs.unwrap_or(MAKESPAN_JOBS);
    if jobs == 0 {
        return Err(BadInput("--jobs: a batch needs at least one job".into()).into());
    }
    let path = match &args.trace {
        Some(path) => Some(path.clone()),
        None => Some(PathBuf::from(OVERLOAD_TRACE)).filter(|p| p.exists()),
    };
    let trace = match &path {
        Some(path) => Some(yard_workload::read_file(path, &args.read.options())?),
        None => None,
    };
    let mut workloads = Workload::ALL.to_vec();
    let fb_swim_source = match (&path, &trace) {
        (Some(p), Some(w)) => Some(format!(
            "the first {} jobs of {} as `yard sim` derives them (SWIM durations drawn per seed from ARIA's log-normals)",
            jobs.min(w.jobs.len()),
            p.display()
        )),
        _ => {
            workloads.retain(|&w| w != Workload::FbSwim);
            Some(format!(
                "not run: {OVERLOAD_TRACE} is not here (run yard from the repository, or give --trace FILE)"
            ))
        }
    };
    let mut sizes = args
        .cluster_sizes
        .clone()
        .unwrap_or_else(|| MAKESPAN_NODES.to_vec());
    sizes.sort_unstable();
    sizes.dedup();
    let setup = MakespanSetup {
        seed: first_seed,
        seeds: args.seeds.unwrap_or(3),
        jobs,
        nodes: sizes,
        workloads,
        fb_swim_source,
    };
    let block_bytes = args.read.options().block_bytes;
    let fb_swim = |seed: u64| -> Vec<yard_cluster::batch::BatchJob> {
        let Some(w) = &trace else { return Vec::new() };
        let options = WorkloadOptions {
            seed,
            block_bytes,
            ..WorkloadOptions::default()
        };
        workloads::trace_jobs(w, &options)
            .take(jobs)
            .map(|j| makespan::batch_job(&j))
            .collect()
    };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("makespan [{bar:40}] {pos}/{len} points {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let report = makespan::run(&setup, &fb_swim, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    if let Some(dir) = &args.svg {
        makespan::write_plots(dir, &report)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
    }
    crate::print(&report.printed(args.json, "## makespan\n\n")?)?;
    Ok(())
}

/// `--experiment shared-scans`: seed 004's CIRCUMFLEX, FLEX and BATCH (issue 20 item 4,
/// simulated): the paper's §4 mix, or a SWIM trace whose input paths name the datasets.
fn run_shared_scans(args: &SimArgs, first_seed: u64) -> Result<()> {
    use yard_sim::scans::{self, ScansSetup};
    if args.synthetic {
        return Err(BadInput(
            "--experiment shared-scans runs seed 004's own mix, or a SWIM trace with input paths given by --trace FILE; --synthetic has no datasets".into(),
        )
        .into());
    }
    let arrivals = args.jobs.unwrap_or(1000);
    if arrivals == 0 {
        return Err(BadInput("--jobs: the experiment needs at least one arrival".into()).into());
    }
    let setup = ScansSetup {
        seed: first_seed,
        seeds: args.seeds.unwrap_or(3),
        arrivals,
        max_slots: args.max_slots.unwrap_or(100),
        ..ScansSetup::default()
    };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "shared-scans [{bar:40}] {pos}/{len} runs {elapsed} (eta {eta})",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    let progress = |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    };
    if let Some(share) = args.deadlines {
        let mut deadlines = scans::Deadlines {
            share,
            ..scans::Deadlines::DEFAULT
        };
        if let Some(f) = args.deadline_factor {
            (deadlines.slack_lo, deadlines.slack_hi) = (f.lo, f.hi);
        }
        let setup = ScansSetup {
            metrics: vec![yard_cluster::scans::Metric::AvgResponse],
            ..setup
        };
        let report =
            scans::run_deadlines(&setup, &deadlines, &progress).map_err(anyhow::Error::msg)?;
        bar.finish_and_clear();
        crate::print(&report.printed(args.json, "## shared scans with deadlines\n\n")?)?;
        return Ok(());
    }
    let report = match &args.trace {
        Some(path) => {
            let mut w = yard_workload::read_file(path, &args.read.options())?;
            if let Some(n) = args.jobs {
                w.jobs.truncate(n);
            }
            let name = path.display().to_string();
            scans::run_trace(&setup, &name, &w)
                .map_err(|e| BadInput(format!("--trace {name}: {e}")))?
        }
        None => {
            let report = match args.grid {
                true => scans::run_grid(&setup, &progress),
                false => scans::run(&setup, &progress),
            }
            .map_err(anyhow::Error::msg)?;
            bar.finish_and_clear();
            report
        }
    };
    if let Some(dir) = &args.svg {
        scans::write_plots(dir, &report)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
    }
    let out = match (args.json, args.grid) {
        (false, true) => format!("## shared scans\n\n{}", scans::grid_markdown(&report)),
        _ => report.printed(args.json, "## shared scans\n\n")?,
    };
    crate::print(&out)?;
    Ok(())
}

/// The overload classifier's settings from the `--overload-*` flags (`yard rm`'s, the same
/// checks), the rest its defaults.
fn classifier_config(args: &SimArgs) -> Result<yard_cluster::classifier::ClassifierConfig> {
    use yard_cluster::classifier::{ClassifierConfig, Utility};
    let mut c = ClassifierConfig::default();
    if let Some(u) = &args.overload_utility {
        c.utility = Utility::parse(u).map_err(|e| BadInput(format!("--overload-utility: {e}")))?;
    }
    c.rule.max_load_per_core = args
        .overload_max_load_per_core
        .unwrap_or(c.rule.max_load_per_core);
    c.rule.min_free_memory = args
        .overload_min_free_memory
        .unwrap_or(c.rule.min_free_memory);
    c.rule.max_disk = args.overload_max_disk.or(c.rule.max_disk);
    c.min_samples = args.overload_min_samples.unwrap_or(c.min_samples);
    c.settle_ms = args.overload_settle_ms.unwrap_or(c.settle_ms);
    c.explore_after_ms = args.overload_explore_after_ms.unwrap_or(c.explore_after_ms);
    c.validate().map_err(BadInput)?;
    Ok(c)
}

fn describe(setup: &Setup) -> String {
    let c = &setup.experiment.cluster;
    let guard = match setup.experiment.guard {
        g if g > 0.0 => format!("deadline guard {g} s"),
        _ => "no deadline guard".to_owned(),
    };
    let ablation = match setup.experiment.policy.dart_extensions {
        Some(x) => {
            let (off, on) = x.against(yard_appmaster::policy::Extensions::YARD);
            let mut s = String::new();
            if !off.is_empty() {
                s += &format!("; `dart` without {}", off.join(", "));
            }
            if !on.is_empty() {
                s += &format!("; `dart` with {}", on.join(", "));
            }
            s
        }
        None => String::new(),
    };
    format!(
        "{} × {} containers, {} slow nodes, failure rate {}, {guard}; {}{ablation}",
        c.nodes,
        c.containers_per_node,
        c.slow_nodes,
        c.failure_rate,
        setup.experiment.model.describe()
    )
}

/// A bar on stderr while jobs run; hidden when stderr is not a terminal.
fn progress_bar(total: u64, name: &str) -> impl Fn(u64) + Sync {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} jobs {elapsed} (eta {eta})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_owned());
    move |done| {
        bar.set_position(done);
        if done == total {
            bar.finish_and_clear();
        }
    }
}
