//! Running an experiment: every job under every deadline configuration and policy, and the
//! Dart paper's experiments as named presets.
//!
//! Jobs are spread over the machine's cores as they are built; results are gathered in job
//! order, so a seed gives byte-identical output whatever the core count.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use yard_appmaster::policy::PolicyKind;

use crate::config::DeadlineConfig;
use crate::engine::{Experiment, JobResult, Plan, Unguarded, mdt, simulate};
use crate::job::SimJob;
use crate::report::{self, Report};

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// The preset's name, or "custom"; picks which paper figures are set beside the rows.
    pub name: String,
    pub configs: Vec<DeadlineConfig>,
    pub policies: Vec<PolicyKind>,
    pub experiment: Experiment,
}

/// The Dart paper's experiments (§6.2–6.6) as presets. Each runs both Darts: `dart-paper`
/// (the paper's algorithm, which its ablations D-WOR, D-WMR and D-WOST are built on) and
/// `dart` (yard's, with its extensions), beside the paper's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// §6.2–6.3: missed deadlines and k/k_max, both Darts vs ARIA vs PS, C1–C3; §6.4's
    /// estimation figures sit beside the same rows.
    Deadlines,
    /// §6.4: estimation error, both Darts vs ARIA.
    Estimation,
    /// §6.5: 8 of 64 nodes slowed; LATE, D-WOR, D-WMR and both Darts in C1 and C2 (Table 5).
    Stragglers,
    /// §6.6: failures (both Darts vs D-WOR at a 5 % failure rate) and skew (both Darts vs
    /// D-WOST under Zipf skew).
    Optimizations,
}

impl Preset {
    pub const ALL: [Preset; 4] = [
        Preset::Deadlines,
        Preset::Estimation,
        Preset::Stragglers,
        Preset::Optimizations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Deadlines => "deadlines",
            Preset::Estimation => "estimation",
            Preset::Stragglers => "stragglers",
            Preset::Optimizations => "optimizations",
        }
    }

    pub fn parse(s: &str) -> Result<Preset, String> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Preset::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown experiment {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// The runs the preset makes, starting from `base` (seed, cluster, policy tuning).
    /// Optimizations is two setups: failures, then skew (the caller builds skewed jobs).
    pub fn setups(self, base: &Experiment) -> Vec<Setup> {
        let setup = |name: &str,
                     configs: &[DeadlineConfig],
                     policies: &[PolicyKind],
                     exp: Experiment| Setup {
            name: name.to_owned(),
            configs: configs.to_vec(),
            policies: policies.to_vec(),
            experiment: exp,
        };
        let c12 = [DeadlineConfig::C1, DeadlineConfig::C2];
        match self {
            Preset::Deadlines => vec![setup(
                "deadlines",
                &DeadlineConfig::ALL,
                &[
                    PolicyKind::DartPaper,
                    PolicyKind::Dart,
                    PolicyKind::Aria,
                    PolicyKind::Ps,
                ],
                base.clone(),
            )],
            Preset::Estimation => vec![setup(
                "estimation",
                &DeadlineConfig::ALL,
                &[PolicyKind::DartPaper, PolicyKind::Dart, PolicyKind::Aria],
                base.clone(),
            )],
            Preset::Stragglers => {
                let mut exp = base.clone();
                exp.cluster.slow_nodes = exp.cluster.nodes / 8; // 8 of 64
                vec![setup(
                    "stragglers",
                    &c12,
                    &[
                        PolicyKind::Late,
                        PolicyKind::DartWithoutRevise,
                        PolicyKind::DartMapReviseOnly,
                        PolicyKind::DartPaper,
                        PolicyKind::Dart,
                    ],
                    exp,
                )]
            }
            Preset::Optimizations => {
                let mut failures = base.clone();
                if failures.cluster.failure_rate == 0.0 {
                    failures.cluster.failure_rate = 0.05;
                }
                vec![
                    setup(
                        "failures",
                        &c12,
                        &[
                            PolicyKind::DartPaper,
                            PolicyKind::Dart,
                            PolicyKind::DartWithoutRevise,
                        ],
                        failures,
                    ),
                    setup(
                        "skew",
                        &c12,
                        &[
                            PolicyKind::DartPaper,
                            PolicyKind::Dart,
                            PolicyKind::DartWithoutSkew,
                        ],
                        base.clone(),
                    ),
                ]
            }
        }
    }
}

/// What [`run`] came to: every scheduled job's results, and how many jobs had no tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// In job order.
    pub results: Vec<JobResult>,
    /// Jobs with no tasks (a Rumen job killed before any ran): not scheduled, not scored,
    /// counted apart ([`Report::no_task_jobs`]).
    pub no_task_jobs: usize,
}

/// Runs every job under every configuration and policy of `setup`. Jobs are taken from `jobs`
/// as workers free up, so only the jobs being simulated are in memory; results come back in
/// job order. A job with no tasks is counted and skipped (its index still keys the others'
/// draws, so they do not depend on it). `progress(done)` is called as jobs complete (from
/// worker threads).
pub fn run<I>(jobs: I, setup: &Setup, progress: &(dyn Fn(u64) + Sync)) -> Ran
where
    I: Iterator<Item = SimJob> + Send,
{
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let source = Mutex::new(jobs.enumerate());
    let done = AtomicU64::new(0);
    let no_tasks = AtomicU64::new(0);
    let mut per_job: Vec<(usize, Vec<JobResult>)> = Vec::new();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (source, done, no_tasks) = (&source, &done, &no_tasks);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let next = source.lock().expect("a worker panicked").next();
                        let Some((i, job)) = next else { break };
                        if job.tasks() == 0 {
                            no_tasks.fetch_add(1, Ordering::Relaxed);
                        } else {
                            mine.push((i, run_job(&job, i as u64, setup)));
                        }
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                    mine
                })
            })
            .collect();
        for worker in workers {
            per_job.extend(worker.join().expect("a simulation worker panicked"));
        }
    });
    per_job.sort_unstable_by_key(|(i, _)| *i);
    Ran {
        results: per_job.into_iter().flat_map(|(_, r)| r).collect(),
        no_task_jobs: no_tasks.into_inner() as usize,
    }
}

/// `f(index, item)` over `items` on every core, the results in the items' order;
/// `progress(done, total)` after each. Items are handed out one at a time as threads free up,
/// so one slow item (a day under a policy that queues) does not hold back a chunk of others.
/// Every experiment's days, points and seeds' runs go through it.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(usize, &T) -> R + Sync,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Vec<R> {
    let total = items.len() as u64;
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(item) = items.get(i) else { break };
                    let r = f(i, item);
                    results.lock().expect("no poisoned lock")[i] = Some(r);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                }
            });
        }
    });
    // A thread that panicked has re-raised it at the scope's end: every item has its result.
    let results = results.into_inner().expect("no poisoned lock");
    results
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// No progress to report.
pub(crate) fn quietly(_: u64, _: u64) {}

/// One job under every configuration and policy: its MDT once, its plan per configuration.
/// With the guard on, every policy it applies to runs twice — without the guard (the paper's
/// algorithms as printed) and with it — and the guarded result carries its twin's outcome
/// ([`JobResult::unguarded`]). Until the guard fires the two runs are the same run, so the
/// twin is only simulated for jobs where it fired — and always for yard's `dart`, whose guarded
/// run sizes its reduces for the guard's cut (`cut_tail`). A guard of no time (`--guard 0`, or a
/// deadline of 0 whose quarter is 0) is no guard: one unguarded run, no `+guard` row.
pub fn run_job(job: &SimJob, index: u64, setup: &Setup) -> Vec<JobResult> {
    let exp = &setup.experiment;
    let plain = exp.unguarded();
    let mdt = mdt(job, exp, index);
    let mut results = Vec::with_capacity(2 * setup.configs.len() * setup.policies.len());
    for &config in &setup.configs {
        let plan = Plan::new(job, config, exp, mdt);
        for &policy in &setup.policies {
            if exp
                .guard_for(policy, plan.deadline)
                .is_none_or(|g| g <= 0.0)
            {
                results.push(simulate(job, &plan, policy, &plain, index));
                continue;
            }
            let mut guarded = simulate(job, &plan, policy, exp, index);
            // yard's `dart` sizes its reduces for the guard's cut (`cut_tail`) when guarded: it
            // leaves its twin's path at its first reduce, guard or not.
            let diverged = guarded.guard_fired || guarded.lone_map || policy == PolicyKind::Dart;
            let twin = match diverged {
                true => simulate(job, &plan, policy, &plain, index),
                false => guarded.as_unguarded(),
            };
            guarded.unguarded = Some(Unguarded {
                processed_fraction: twin.processed_fraction,
                outcome: twin.outcome(),
            });
            results.push(twin);
            results.push(guarded);
        }
    }
    results
}

/// The report of a finished run of `jobs` jobs, `no_task_jobs` of them with no tasks (so
/// without results).
pub fn report(setup: &Setup, jobs: usize, no_task_jobs: usize, results: &[JobResult]) -> Report {
    let configs: Vec<&str> = setup.configs.iter().map(|c| c.name).collect();
    let rows = report::rows(results, &configs, &setup.policies);
    let mut paper = report::compare(&rows, &setup.name, &configs);
    if setup.name == "deadlines" {
        // The same configurations and Darts against ARIA as §6.4's estimation experiment, whose
        // figures then sit beside these rows too (one run of a day prints §6.2–6.4).
        paper.extend(report::compare(&rows, "estimation", &configs));
    }
    Report {
        seed: setup.experiment.seed,
        jobs: jobs - no_task_jobs.min(jobs),
        no_task_jobs,
        population: report::POPULATION,
        guard: setup.experiment.guard,
        model: setup.experiment.model,
        rows,
        paper,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_the_items_order_and_counts_every_item_done() {
        let items: Vec<u64> = (0..50).collect();
        let seen = AtomicU64::new(0);
        // Uneven work, so threads finish out of order.
        let out = par_map(
            &items,
            |i, &x| {
                std::hint::black_box((0..(x % 7) * 1000).sum::<u64>());
                (i as u64, x * x)
            },
            &|done, total| {
                assert!(done <= total && total == 50);
                seen.fetch_add(1, Ordering::Relaxed);
            },
        );
        assert_eq!(out, (0..50).map(|x| (x, x * x)).collect::<Vec<_>>());
        assert_eq!(seen.into_inner(), 50);
        assert!(par_map(&[] as &[u8], |_, _| 0, &quietly).is_empty());
    }
}
