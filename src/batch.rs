//! `yard batch plan`: the order and pools that minimise a batch's makespan (seed 003: Johnson's
//! order and BalancedPools, `yard_cluster::batch`), with the predicted makespan of the plan beside
//! Johnson's, reverse Johnson's and a random order's.
//!
//! The batch is a CSV of stage durations or a trace. The CSV (one job a line):
//!
//! ```text
//! job,map_stage_s,reduce_stage_s[,map_tasks,reduce_tasks]
//! ```
//!
//! - The header line is optional: a first line that reads exactly `job,map_stage_s,
//!   reduce_stage_s` (or with `,map_tasks,reduce_tasks`) is skipped; any other line is a job.
//!   Blank lines and lines starting with `#` are skipped. Fields are trimmed; no quoting.
//! - `map_stage_s` and `reduce_stage_s` are each stage's duration, seconds (≥ 0), on the
//!   whole cluster of `--slots` map and `--slots` reduce slots. A `reduce_stage_s` of 0 is a
//!   map-only job.
//! - Without task counts a job fills the cluster, one wave per stage (`--slots` tasks each):
//!   Johnson's two-stage setting, where the predicted makespan is the two-stage formula's.
//!   With them, each stage's tasks are equal and last the stage over its waves
//!   (`⌈tasks / slots⌉`), so a pool of fewer slots runs the stage in more waves (seed 003
//!   §III-C, "Scenario 2").
//! - Job names are unique. At most 1,000 jobs (BalancedPools simulates O(n² log M) schedules).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand};
use rand::SeedableRng;
use serde::Serialize;
use yard_cluster::batch::{self, BatchJob};

use crate::sim::BadInput;
use crate::trace::ReadArgs;

#[derive(Subcommand)]
pub(crate) enum BatchCommand {
    /// Plan a batch: Johnson's order and BalancedPools' two pools (seed 003), the predicted
    /// makespan beside Johnson's, reverse Johnson's and a random order's.
    Plan(PlanArgs),
    /// Run a batch on a live cluster (a running rm, or a local one it starts) in the plan's
    /// order and pools, as synthetic jobs whose stages take the planned times; prints the
    /// predicted against the measured makespan.
    Run(Box<crate::batch_run::RunArgs>),
}

#[derive(Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    pub(crate) input: BatchInput,
    /// Print one JSON object: `{"order","pools","predicted_makespan_s",…}`.
    #[arg(long)]
    json: bool,
}

/// The batch: a CSV or a trace, and the cluster's slots (`yard batch plan` and `run`).
#[derive(Args)]
pub(crate) struct BatchInput {
    /// A CSV `job,map_stage_s,reduce_stage_s[,map_tasks,reduce_tasks]` (header optional;
    /// stage seconds on the whole cluster of `--slots`).
    #[arg(
        value_name = "FILE",
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    file: Option<PathBuf>,
    /// A trace instead (SWIM, Rumen, SLS, SYNTH): each job's map and reduce task durations as
    /// `yard sim` derives them (SWIM's drawn with `--seed`).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// `--trace`: only the first N jobs.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// The cluster: this many map slots and as many reduce slots (nodes of 1 + 1, as the
    /// paper's simulations count them).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) slots: u32,
}

/// At most this many jobs: BalancedPools simulates O(n² log M) schedules.
const MAX_JOBS: usize = 1000;
/// At most this many tasks in all (each simulation visits every task).
const MAX_TASKS: usize = 2_000_000;
/// The seed of the random order (and a SWIM trace's draws) when `--seed` is not given.
const DEFAULT_SEED: u64 = 1;

pub(crate) fn run(command: BatchCommand) -> Result<()> {
    match command {
        BatchCommand::Plan(args) => plan(&args),
        BatchCommand::Run(args) => crate::batch_run::run(*args),
    }
}

/// One pool of the plan as printed.
#[derive(Serialize)]
struct PoolOut {
    slots: u32,
    jobs: Vec<String>,
    predicted_makespan_s: f64,
}

/// An order and its predicted makespan.
#[derive(Serialize)]
struct OrderOut {
    order: Vec<String>,
    predicted_makespan_s: f64,
}

/// `--json`: the three documented keys first, in this order.
#[derive(Serialize)]
struct PlanOut {
    order: Vec<String>,
    pools: Vec<PoolOut>,
    predicted_makespan_s: f64,
    policy: &'static str,
    slots: u32,
    jobs: usize,
    source: String,
    model: &'static str,
    johnson: OrderOut,
    reverse_johnson: OrderOut,
    random: OrderOut,
    seed: u64,
    simulations: u64,
    /// No order or pools can beat this (`yard_cluster::batch::lower_bound`).
    lower_bound_s: f64,
}

const MODEL: &str = "seed 003's task/slot-level model: the batch submitted at once, each task to the earliest-free slot, FIFO in the order, a job's reduces after all its maps; two pools run side by side; Johnson's order compares ARIA's T^avg stage durations for the slots each job gets";

/// A batch as read: its jobs, where they came from, and the seed.
pub(crate) struct Loaded {
    pub(crate) jobs: Vec<BatchJob>,
    pub(crate) source: String,
    pub(crate) seed: u64,
}

/// Reads the batch (the CSV or the trace's first jobs); bad input is [`BadInput`].
pub(crate) fn load(args: &BatchInput) -> Result<Loaded> {
    let seed = args.read.seed.unwrap_or(DEFAULT_SEED);
    if args.file.is_some() && args.jobs.is_some() {
        return Err(BadInput("--jobs is for --trace".into()).into());
    }
    let (jobs, source) = match (&args.file, &args.trace) {
        (Some(file), _) => (
            read_csv(file, args.slots)?,
            format!(
                "{} (stage durations on {} slots)",
                file.display(),
                args.slots
            ),
        ),
        (None, Some(trace)) => {
            let w = yard_workload::read_file(trace, &args.read.options())?;
            let options = yard_sim::workloads::WorkloadOptions {
                seed,
                block_bytes: args.read.options().block_bytes,
                ..Default::default()
            };
            let n = args.jobs.unwrap_or(w.jobs.len());
            if n > MAX_JOBS {
                return Err(BadInput(format!(
                    "{}: {} jobs; a batch plan takes at most {MAX_JOBS} (BalancedPools simulates O(n² log M) schedules): give --jobs N",
                    trace.display(),
                    n
                ))
                .into());
            }
            let jobs: Vec<BatchJob> = yard_sim::workloads::trace_jobs(&w, &options)
                .take(n)
                .map(|j| yard_sim::makespan::batch_job(&j))
                .collect();
            let source = format!(
                "the first {} jobs of {} (task durations as `yard sim` derives them, seed {seed})",
                jobs.len(),
                trace.display()
            );
            (jobs, source)
        }
        (None, None) => unreachable!("clap requires FILE or --trace"),
    };
    if jobs.is_empty() {
        return Err(BadInput("the batch has no jobs: give a file with at least one".into()).into());
    }
    let tasks: usize = jobs.iter().map(|j| j.maps.len() + j.reduces.len()).sum();
    if tasks > MAX_TASKS {
        return Err(BadInput(format!(
            "the batch has {tasks} tasks; at most {MAX_TASKS}: give fewer jobs (--jobs) or fewer --slots"
        ))
        .into());
    }
    Ok(Loaded { jobs, source, seed })
}

fn plan(args: &PlanArgs) -> Result<()> {
    let Loaded { jobs, source, seed } = load(&args.input)?;
    let slots = args.input.slots;
    let ids =
        |order: &[usize]| -> Vec<String> { order.iter().map(|&j| jobs[j].id.clone()).collect() };
    let plan = batch::balanced_pools(&jobs, slots);
    let johnson = batch::johnson_plan(&jobs, slots);
    let reverse = batch::reverse(&johnson.pools[0].order);
    let mut rng = yard_appmaster::policy::Rng::seed_from_u64(seed);
    let random = batch::random_order(jobs.len(), &mut rng);
    let out = PlanOut {
        order: plan.pools.iter().flat_map(|p| ids(&p.order)).collect(),
        pools: plan
            .pools
            .iter()
            .map(|p| PoolOut {
                slots: p.slots,
                jobs: ids(&p.order),
                predicted_makespan_s: p.makespan,
            })
            .collect(),
        predicted_makespan_s: plan.makespan,
        policy: match plan.pools.len() {
            1 => "johnson",
            _ => "balanced-pools",
        },
        slots,
        jobs: jobs.len(),
        source,
        model: MODEL,
        johnson: OrderOut {
            order: ids(&johnson.pools[0].order),
            predicted_makespan_s: johnson.makespan,
        },
        reverse_johnson: OrderOut {
            order: ids(&reverse),
            predicted_makespan_s: batch::simulate(&jobs, &reverse, slots).makespan,
        },
        random: OrderOut {
            order: ids(&random),
            predicted_makespan_s: batch::simulate(&jobs, &random, slots).makespan,
        },
        seed,
        simulations: plan.simulations,
        lower_bound_s: batch::lower_bound(&jobs, slots),
    };
    let text = match args.json {
        true => serde_json::to_string_pretty(&out)? + "\n",
        false => table(&out),
    };
    crate::print(&text)?;
    Ok(())
}

fn table(p: &PlanOut) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Batch plan: {} jobs on {} map + {} reduce slots, from {}.",
        p.jobs, p.slots, p.slots, p.source
    );
    let _ = writeln!(t, "Model: {}.\n", p.model);
    let _ = writeln!(
        t,
        "Plan: {} ({}), predicted makespan {:.1} s",
        p.policy,
        match p.pools.len() {
            1 => "one pool: Johnson's order on the whole cluster, seed 003 Alg. 1".to_owned(),
            n => format!("{n} pools side by side, seed 003 Alg. 2"),
        },
        p.predicted_makespan_s
    );
    let _ = writeln!(t, "Order: {}\n", p.order.join(" "));
    let _ = writeln!(
        t,
        "| pool | slots | jobs in order | predicted makespan (s) |"
    );
    let _ = writeln!(t, "|---:|---:|---|---:|");
    for (i, pool) in p.pools.iter().enumerate() {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {:.1} |",
            i + 1,
            pool.slots,
            pool.jobs.join(" "),
            pool.predicted_makespan_s
        );
    }
    let _ = writeln!(t, "\n| order | predicted makespan (s) | plan's decrease |");
    let _ = writeln!(t, "|---|---:|---:|");
    let plan = p.predicted_makespan_s;
    for (name, o) in [
        ("johnson", &p.johnson),
        ("reverse-johnson", &p.reverse_johnson),
        (&*format!("random (seed {})", p.seed), &p.random),
    ] {
        let decrease = match o.predicted_makespan_s > 0.0 {
            true => format!(
                "{:.1} %",
                100.0 * (o.predicted_makespan_s - plan) / o.predicted_makespan_s
            ),
            false => "–".into(),
        };
        let _ = writeln!(t, "| {name} | {:.1} | {decrease} |", o.predicted_makespan_s);
    }
    let _ = writeln!(
        t,
        "\nNo order or pools can finish before {:.1} s (all map or all reduce work over the slots, or one job's longest map + longest reduce).",
        p.lower_bound_s
    );
    t
}

/// The CSV's header, as it may appear on the first line.
const HEADER: [&str; 5] = [
    "job",
    "map_stage_s",
    "reduce_stage_s",
    "map_tasks",
    "reduce_tasks",
];

/// Reads the batch CSV (module doc); every error names the file, line and field.
fn read_csv(path: &Path, slots: u32) -> Result<Vec<BatchJob>> {
    let bytes = std::fs::read(path)
        .map_err(|e| BadInput(format!("{}: cannot read it: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        BadInput(format!(
            "{}: byte {}: expected UTF-8 text (a CSV job,map_stage_s,reduce_stage_s)",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse_csv(&path.display().to_string(), &text, slots).map_err(|e| BadInput(e).into())
}

fn parse_csv(name: &str, text: &str, slots: u32) -> std::result::Result<Vec<BatchJob>, String> {
    let mut jobs: Vec<BatchJob> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut first = true;
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |field: &str, expected: &str, found: &str| {
            format!(
                "{name}:{}: field `{field}`: expected {expected}, found {found:?}",
                i + 1
            )
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if std::mem::take(&mut first)
            && (fields.len() == 3 || fields.len() == 5)
            && fields
                .iter()
                .zip(HEADER)
                .all(|(f, h)| f.eq_ignore_ascii_case(h))
        {
            continue; // the optional header
        }
        if fields.len() != 3 && fields.len() != 5 {
            return Err(format!(
                "{name}:{}: expected 3 fields (job,map_stage_s,reduce_stage_s) or 5 (…,map_tasks,reduce_tasks), found {}",
                i + 1,
                fields.len()
            ));
        }
        let id = fields[0];
        if id.is_empty() {
            return Err(at("job", "a job name", id));
        }
        if !seen.insert(id.to_owned()) {
            return Err(at("job", "a name not used on an earlier line", id));
        }
        let seconds = |k: usize| -> std::result::Result<f64, String> {
            match fields[k].parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => Ok(v),
                _ => Err(at(HEADER[k], "seconds, a number from 0 to 10⁹", fields[k])),
            }
        };
        let (map_s, reduce_s) = (seconds(1)?, seconds(2)?);
        let (map_tasks, reduce_tasks) = match fields.len() {
            5 => {
                let count = |k: usize, min: u32| -> std::result::Result<u32, String> {
                    match fields[k].parse::<u32>() {
                        Ok(v) if (min..=1_000_000).contains(&v) => Ok(v),
                        _ => Err(at(
                            HEADER[k],
                            &format!("a whole number of tasks from {min} to 10⁶"),
                            fields[k],
                        )),
                    }
                };
                let (m, r) = (count(3, 1)?, count(4, 0)?);
                if r == 0 && reduce_s > 0.0 {
                    return Err(at(
                        "reduce_tasks",
                        "at least 1 task for a reduce stage of more than 0 s",
                        fields[4],
                    ));
                }
                (m, r)
            }
            _ => (slots, slots),
        };
        jobs.push(BatchJob::waves(
            id,
            map_s,
            reduce_s,
            map_tasks,
            reduce_tasks,
            slots,
        ));
        if jobs.len() > MAX_JOBS {
            return Err(format!(
                "{name}:{}: more than {MAX_JOBS} jobs; a batch plan takes at most {MAX_JOBS} (BalancedPools simulates O(n² log M) schedules)",
                i + 1
            ));
        }
    }
    if jobs.is_empty() {
        return Err(format!(
            "{name}: no jobs: expected lines job,map_stage_s,reduce_stage_s"
        ));
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_takes_an_optional_header_comments_and_task_counts() {
        let jobs = parse_csv(
            "b.csv",
            "job,map_stage_s,reduce_stage_s\n# c\n\nJ1,4,5\r\nJ2, 1 ,4\n",
            30,
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[1].maps, vec![1.0; 30]);
        let jobs = parse_csv("b.csv", "J3,30,4,20,20\nJ4,6,0,20,0\n", 10).unwrap();
        assert_eq!(jobs[0].maps, vec![15.0; 20], "two waves on 10 slots");
        assert!(jobs[1].reduces.is_empty());
        for (bad, says) in [
            ("J1,4\n", "b.csv:1: expected 3 fields"),
            ("J1,4,x\n", "b.csv:1: field `reduce_stage_s`"),
            ("J1,-1,2\n", "field `map_stage_s`"),
            ("J1,1,2\nJ1,1,2\n", "b.csv:2: field `job`"),
            ("J1,1,2,0,1\n", "field `map_tasks`"),
            ("J1,1,2,3,0\n", "field `reduce_tasks`"),
            ("# nothing\n", "no jobs"),
            ("job,map_stage_s\n", "expected 3 fields"),
        ] {
            let e = parse_csv("b.csv", bad, 4).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
