//! Batch makespan against cluster size (seed 003 §IV-B, Figs. 7–9): the seed's workloads run
//! in a random order, Johnson's, reverse Johnson's and as BalancedPools plans them, through
//! the policy code of `yard_cluster::batch`.
//!
//! **Model.** The paper's: each job is its tasks; a batch is submitted at once and run on
//! `N` nodes of 1 map + 1 reduce slot each (§IV-B: "we assume 1 map and 1 reduce slot per
//! node"), by the task/slot-level simulation of [`yard_cluster::batch::simulate`] (SimMR-like:
//! greedy slots, FIFO in the order, a strict map→reduce barrier). This is not yard's
//! discrete-event shared cluster (`shared.rs`): no locality, shuffle link, failures or
//! masters. The abstraction's two-stage makespans (the paper's Min / Max curves, from
//! `(m_i, r_i)`) are given beside Johnson's and reverse Johnson's rows.
//!
//! **Workloads** (§IV-A), 100 jobs each by default:
//! - Yahoo! M45: maps N(154, 558), reduces N(19, 145), map tasks N(50, 200) s, reduce tasks
//!   N(100, 300) s;
//! - synthetic: maps U{1..100}, reduces U{1..50}, map tasks N(100, 1000) s, reduce tasks
//!   N(200, 2000) s;
//! - each unimodal (every job's task durations × a factor from U[1, 10]) and bimodal (80 % of
//!   the jobs × U[1, 2], 20 % × U[8, 10]);
//! - Facebook: Table I's 100 jobs (38 + 16 + 14 + 8 + 6 + 6 + 4 + 4 + 2 + 2), tasks from
//!   ARIA's log-normals (the paper ran real Hive jobs: their task times are not printed);
//! - and FB jobs from the shipped SWIM trace as `yard sim` derives them (yard's addition).
//!
//! N(μ, σ) has σ ≫ μ: [INF, digest §3] drawn again until positive; a count is rounded, maps at
//! least 1, reduces may round to 0 (a map-only job). The bimodal 80/20 split is exact (20 of
//! 100 jobs), which jobs drawn by the seed.

use std::fmt::Write as _;

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};
use serde::Serialize;
use yard_appmaster::policy::Rng;
use yard_cluster::batch::{self, BatchJob};

use crate::job::SimJob;
use crate::seeds::Spread;
use crate::table::{Cell, Column, Field, Printable, Row, Table, Unit};

/// The model, as every output's header states it.
pub const MODEL: &str = "the paper's task/slot-level model (seed 003 §III-C, SimMR-like: every job submitted at 0, each task to the earliest-free slot, FIFO in the order, a job's reduces only after all its maps; N nodes of 1 map + 1 reduce slot), not yard's discrete-event shared cluster";

/// A workload of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    YahooUnimodal,
    YahooBimodal,
    SyntheticUnimodal,
    SyntheticBimodal,
    FacebookTableI,
    /// FB jobs of a SWIM trace (default: the shipped FB-2009 day).
    FbSwim,
}

impl Workload {
    pub const ALL: [Workload; 6] = [
        Workload::SyntheticUnimodal,
        Workload::SyntheticBimodal,
        Workload::YahooUnimodal,
        Workload::YahooBimodal,
        Workload::FacebookTableI,
        Workload::FbSwim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::YahooUnimodal => "yahoo-unimodal",
            Workload::YahooBimodal => "yahoo-bimodal",
            Workload::SyntheticUnimodal => "synthetic-unimodal",
            Workload::SyntheticBimodal => "synthetic-bimodal",
            Workload::FacebookTableI => "facebook-table-i",
            Workload::FbSwim => "fb-swim",
        }
    }

    /// The jobs of this workload for `seed` (`trace`: the FB-SWIM jobs, already derived).
    pub fn jobs(self, n: usize, seed: u64, trace: &[BatchJob]) -> Vec<BatchJob> {
        // One stream per workload and seed.
        let mut rng = Rng::seed_from_u64(seed ^ (0x5eed_0003 + self as u64 * 0x9e37_79b9));
        match self {
            Workload::YahooUnimodal => yahoo(n, false, &mut rng),
            Workload::YahooBimodal => yahoo(n, true, &mut rng),
            Workload::SyntheticUnimodal => synthetic(n, false, &mut rng),
            Workload::SyntheticBimodal => synthetic(n, true, &mut rng),
            Workload::FacebookTableI => {
                let options = crate::workloads::WorkloadOptions {
                    seed,
                    ..Default::default()
                };
                crate::workloads::facebook_synthetic(n, 0.0, &options)
                    .iter()
                    .map(batch_job)
                    .collect()
            }
            Workload::FbSwim => trace.iter().take(n).cloned().collect(),
        }
    }
}

/// A simulator job as a batch job: its maps' node-local durations, and each reduce's time on
/// its input plus that input's transfer at the job's shuffle bandwidth (the paper's reduce
/// stage holds the shuffle, seed 003 §II-A). Submit times are dropped: a batch starts at once.
pub fn batch_job(job: &SimJob) -> BatchJob {
    let t = &job.truth;
    let output: u64 = t.maps.iter().map(|m| m.output_bytes).sum();
    BatchJob {
        id: job.id.clone(),
        maps: t.maps.iter().map(|m| m.duration).collect(),
        reduces: t
            .reduce_inputs(output)
            .iter()
            .enumerate()
            .map(|(r, &d)| {
                t.reduce_seconds(r as u32, d as f64) + d as f64 / t.shuffle_bandwidth.max(1.0)
            })
            .collect(),
    }
}

/// A draw from N(μ, σ) again until positive ([INF], digest §3).
fn positive(rng: &mut Rng, normal: &Normal<f64>) -> f64 {
    loop {
        let x = normal.sample(rng);
        if x > 0.0 {
            return x;
        }
    }
}

fn normal(mean: f64, sd: f64) -> Normal<f64> {
    Normal::new(mean, sd).expect("a finite mean and a positive sd")
}

/// Each job's scale factor: U[1, 10] (unimodal), or 80 % U[1, 2] and 20 % U[8, 10].
fn scales(n: usize, bimodal: bool, rng: &mut Rng) -> Vec<f64> {
    if !bimodal {
        return (0..n).map(|_| rng.random_range(1.0..=10.0)).collect();
    }
    let long = (n as f64 * 0.2).round() as usize;
    let mut is_long: Vec<bool> = (0..n).map(|i| i < long).collect();
    is_long.shuffle(rng);
    is_long
        .into_iter()
        .map(|l| match l {
            true => rng.random_range(8.0..=10.0),
            false => rng.random_range(1.0..=2.0),
        })
        .collect()
}

/// Yahoo! M45 (seed 003 §IV-A.1).
fn yahoo(n: usize, bimodal: bool, rng: &mut Rng) -> Vec<BatchJob> {
    let (maps, reduces) = (normal(154.0, 558.0), normal(19.0, 145.0));
    let (map_s, reduce_s) = (normal(50.0, 200.0), normal(100.0, 300.0));
    let scale = scales(n, bimodal, rng);
    (0..n)
        .map(|i| {
            let m = loop {
                let m = positive(rng, &maps).round();
                if m >= 1.0 {
                    break m as usize;
                }
            };
            let r = positive(rng, &reduces).round() as usize;
            BatchJob {
                id: format!("yahoo{i}"),
                maps: (0..m).map(|_| scale[i] * positive(rng, &map_s)).collect(),
                reduces: (0..r)
                    .map(|_| scale[i] * positive(rng, &reduce_s))
                    .collect(),
            }
        })
        .collect()
}

/// Synthetic (seed 003 §IV-A.3).
fn synthetic(n: usize, bimodal: bool, rng: &mut Rng) -> Vec<BatchJob> {
    let (map_s, reduce_s) = (normal(100.0, 1000.0), normal(200.0, 2000.0));
    let scale = scales(n, bimodal, rng);
    (0..n)
        .map(|i| {
            let m = rng.random_range(1..=100usize);
            let r = rng.random_range(1..=50usize);
            BatchJob {
                id: format!("synthetic{i}"),
                maps: (0..m).map(|_| scale[i] * positive(rng, &map_s)).collect(),
                reduces: (0..r)
                    .map(|_| scale[i] * positive(rng, &reduce_s))
                    .collect(),
            }
        })
        .collect()
}

/// The experiment's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MakespanSetup {
    /// The first seed; seeds `seed .. seed + seeds`.
    pub seed: u64,
    pub seeds: u64,
    /// Jobs per workload (the paper's 100).
    pub jobs: usize,
    /// Cluster sizes, nodes of 1 map + 1 reduce slot.
    pub nodes: Vec<u32>,
    pub workloads: Vec<Workload>,
    /// What the FB-SWIM jobs are (the trace and how many of its jobs).
    pub fb_swim_source: Option<String>,
}

/// The paper's policies, in the tables' order.
pub(crate) const POLICIES: [&str; 4] = ["random", "johnson", "reverse-johnson", "balanced-pools"];

/// One point: a policy's makespan on a workload and cluster size, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MakespanRow {
    pub policy: &'static str,
    pub workload: &'static str,
    pub nodes: u32,
    /// Map slots (= reduce slots = nodes).
    pub slots: u32,
    pub jobs: usize,
    /// The mean over the seeds, seconds.
    pub makespan_s: f64,
    pub makespan_sd_s: f64,
    pub seeds: usize,
    /// Johnson's and reverse Johnson's rows: the abstraction's two-stage makespan of the same
    /// order (the paper's Min / Max), mean over the seeds.
    pub abstraction_makespan_s: Option<f64>,
    /// BalancedPools: the first seed's pools, `[slots, jobs]` each (one pool: Johnson's).
    pub pools: Option<Vec<[u64; 2]>>,
    /// A lower bound on any plan's makespan here (`yard_cluster::batch::lower_bound`: all map or
    /// all reduce work over the slots, or one job's longest map + longest reduce), mean over
    /// the seeds.
    pub lower_bound_s: f64,
}

/// A claim of the paper about one workload, and the figure this run sets beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    pub workload: &'static str,
    /// Which gain: `johnson_vs_reverse`, `bp_vs_johnson` or `bp_vs_reverse` (makespan
    /// decrease, % of the second's makespan).
    pub gain: &'static str,
    /// The paper's words and where they are.
    pub paper: &'static str,
    /// The paper's figure (points), or its range.
    pub paper_lo: f64,
    pub paper_hi: f64,
    /// How this run's figure is taken over the cluster sizes: `max`, `median` or `smallest`.
    pub over_sizes: &'static str,
    pub ours: f64,
    /// Whether `ours` is within 5 points of the paper's figure (or range).
    pub within_5_points: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MakespanReport {
    pub seed: u64,
    pub seeds: u64,
    pub model: &'static str,
    pub setup: MakespanSetup,
    pub rows: Vec<MakespanRow>,
    pub claims: Vec<Claim>,
    /// The goal: Johnson and BalancedPools within 5 points of the paper's gains on
    /// its own workloads (every claim on them).
    pub goal_met: bool,
}

/// One (workload, nodes, policy): its per-seed makespans, the abstraction's, the first seed's
/// pools.
struct Point {
    workload: Workload,
    nodes: u32,
    policy: usize,
    makespans: Vec<f64>,
    abstraction: Vec<f64>,
    pools: Option<Vec<[u64; 2]>>,
}

/// Runs the experiment; `fb_swim`: each seed's FB-SWIM jobs (may be empty when the workload
/// is not asked for). `progress(done, total)` after each point.
pub fn run(
    setup: &MakespanSetup,
    fb_swim: &dyn Fn(u64) -> Vec<BatchJob>,
    progress: &dyn Fn(u64, u64),
) -> MakespanReport {
    let total = (setup.workloads.len() * setup.nodes.len()) as u64 * setup.seeds;
    let mut done = 0;
    let mut points: Vec<Point> = Vec::new();
    let mut counts: Vec<(Workload, usize)> = Vec::new();
    let mut bounds: Vec<(Workload, u32, Vec<f64>)> = Vec::new();
    for s in 0..setup.seeds {
        let seed = setup.seed.wrapping_add(s);
        let trace = match setup.workloads.contains(&Workload::FbSwim) {
            true => fb_swim(seed),
            false => Vec::new(),
        };
        for &w in &setup.workloads {
            let jobs = w.jobs(setup.jobs, seed, &trace);
            if s == 0 {
                counts.push((w, jobs.len()));
            }
            let mut rng = Rng::seed_from_u64(seed ^ 0x0003_ba7c ^ (w as u64) << 32);
            for &nodes in &setup.nodes {
                let all: Vec<usize> = (0..jobs.len()).collect();
                let johnson = batch::johnson_for(&jobs, &all, nodes);
                let reverse = batch::reverse(&johnson);
                let random = batch::random_order(jobs.len(), &mut rng);
                let pairs: Vec<(f64, f64)> = jobs.iter().map(|j| batch::stages(j, nodes)).collect();
                let bp = batch::balanced_pools(&jobs, nodes);
                let bound = batch::lower_bound(&jobs, nodes);
                match bounds.iter_mut().find(|b| b.0 == w && b.1 == nodes) {
                    Some(b) => b.2.push(bound),
                    None => bounds.push((w, nodes, vec![bound])),
                }
                let results = [
                    (batch::simulate(&jobs, &random, nodes).makespan, None),
                    (
                        batch::simulate(&jobs, &johnson, nodes).makespan,
                        Some(batch::flow_shop_makespan(&pairs, &johnson)),
                    ),
                    (
                        batch::simulate(&jobs, &reverse, nodes).makespan,
                        Some(batch::flow_shop_makespan(&pairs, &reverse)),
                    ),
                    (bp.makespan, None),
                ];
                for (p, (makespan, abstraction)) in results.into_iter().enumerate() {
                    let i = match points
                        .iter()
                        .position(|x| x.workload == w && x.nodes == nodes && x.policy == p)
                    {
                        Some(i) => i,
                        None => {
                            points.push(Point {
                                workload: w,
                                nodes,
                                policy: p,
                                makespans: Vec::new(),
                                abstraction: Vec::new(),
                                pools: None,
                            });
                            points.len() - 1
                        }
                    };
                    points[i].makespans.push(makespan);
                    points[i].abstraction.extend(abstraction);
                    if p == 3 && s == 0 {
                        points[i].pools = Some(
                            bp.pools
                                .iter()
                                .map(|pool| [u64::from(pool.slots), pool.order.len() as u64])
                                .collect(),
                        );
                    }
                }
                done += 1;
                progress(done, total);
            }
        }
    }
    let rows: Vec<MakespanRow> = points
        .into_iter()
        .map(|x| {
            let Point {
                workload: w,
                nodes,
                policy: p,
                makespans: m,
                abstraction: a,
                pools,
            } = x;
            let spread = Spread::of(&m);
            MakespanRow {
                policy: POLICIES[p],
                workload: w.name(),
                nodes,
                slots: nodes,
                jobs: counts.iter().find(|c| c.0 == w).map_or(0, |c| c.1),
                makespan_s: spread.mean.unwrap_or(0.0),
                makespan_sd_s: spread.sd.unwrap_or(0.0),
                seeds: m.len(),
                abstraction_makespan_s: Spread::of(&a).mean,
                pools,
                lower_bound_s: bounds
                    .iter()
                    .find(|b| b.0 == w && b.1 == nodes)
                    .and_then(|b| Spread::of(&b.2).mean)
                    .unwrap_or(0.0),
            }
        })
        .collect();
    let claims = claims(&rows, &setup.workloads);
    let goal_met = !claims.is_empty()
        && claims
            .iter()
            .filter(|c| c.workload != Workload::FbSwim.name())
            .all(|c| c.within_5_points);
    MakespanReport {
        seed: setup.seed,
        seeds: setup.seeds,
        model: MODEL,
        setup: setup.clone(),
        rows,
        claims,
        goal_met,
    }
}

/// The makespan of `policy` on `workload` at `nodes` (mean over seeds).
fn makespan(rows: &[MakespanRow], workload: &str, nodes: u32, policy: &str) -> Option<f64> {
    rows.iter()
        .find(|r| r.workload == workload && r.nodes == nodes && r.policy == policy)
        .map(|r| r.makespan_s)
}

/// The decrease of `better` against `base`, % of `base`.
fn gain(rows: &[MakespanRow], workload: &str, nodes: u32, better: &str, base: &str) -> Option<f64> {
    let (b, a) = (
        makespan(rows, workload, nodes, base)?,
        makespan(rows, workload, nodes, better)?,
    );
    (b > 0.0).then(|| 100.0 * (b - a) / b)
}

/// The gain per cluster size, in the sizes' order.
fn gains(rows: &[MakespanRow], workload: &str, which: &str) -> Vec<f64> {
    let (better, base) = match which {
        "johnson_vs_reverse" => ("johnson", "reverse-johnson"),
        "bp_vs_johnson" => ("balanced-pools", "johnson"),
        _ => ("balanced-pools", "reverse-johnson"),
    };
    let mut nodes: Vec<u32> = rows
        .iter()
        .filter(|r| r.workload == workload)
        .map(|r| r.nodes)
        .collect();
    nodes.dedup();
    nodes
        .into_iter()
        .filter_map(|n| gain(rows, workload, n, better, base))
        .collect()
}

/// The paper's claims (digest §4, each quoted from seed 003 §IV-B) per workload.
/// `(workload, gain, words, lo, hi, over sizes)`.
const CLAIMS: &[(Workload, &str, &str, f64, f64, &str)] = &[
    (
        Workload::SyntheticUnimodal,
        "johnson_vs_reverse",
        "\"up to 25% of makespan decrease with Johnson's schedule (MinSim) compared to MaxSim\" (§IV-B, Fig. 7a)",
        25.0,
        25.0,
        "max",
    ),
    (
        Workload::SyntheticUnimodal,
        "bp_vs_johnson",
        "\"The BalancedPools schedule behaves similar to Johnson's in this case\" (§IV-B, Fig. 7a; read: 0 points)",
        0.0,
        0.0,
        "max",
    ),
    (
        Workload::SyntheticBimodal,
        "bp_vs_reverse",
        "\"BalancedPools heuristic provides up to 38% of makespan improvements\" (§IV-B, Fig. 7b; baseline not stated, MaxSim assumed)",
        38.0,
        38.0,
        "max",
    ),
    (
        Workload::YahooUnimodal,
        "johnson_vs_reverse",
        "\"only up to 12% of makespan improvements for most experiments\" (§IV-B, Fig. 8)",
        12.0,
        12.0,
        "max",
    ),
    (
        Workload::YahooUnimodal,
        "bp_vs_johnson",
        "\"significantly outperforms Johnson's algorithm: by 10%-30% in most cases\" (§IV-B, Fig. 8)",
        10.0,
        30.0,
        "median",
    ),
    (
        Workload::YahooBimodal,
        "johnson_vs_reverse",
        "\"only up to 12% of makespan improvements for most experiments\" (§IV-B, Fig. 8)",
        12.0,
        12.0,
        "max",
    ),
    (
        Workload::YahooBimodal,
        "bp_vs_johnson",
        "\"significantly outperforms Johnson's algorithm: by 10%-30% in most cases\" (§IV-B, Fig. 8)",
        10.0,
        30.0,
        "median",
    ),
    (
        Workload::YahooBimodal,
        "bp_vs_reverse",
        "\"overall makespan improvements up to 38% for the Bimodal Yahoo! M45 workload\" (§IV-B, Fig. 8b)",
        38.0,
        38.0,
        "max",
    ),
    (
        Workload::FacebookTableI,
        "johnson_vs_reverse",
        "\"relatively lesser (2%) difference between MinSim and MaxSim\" (§IV-B, Fig. 9)",
        2.0,
        2.0,
        "max",
    ),
    (
        Workload::FacebookTableI,
        "bp_vs_johnson",
        "\"decreases the makespan by 14% for smaller cluster sizes\" (§IV-B, Fig. 9; baseline read as Johnson's)",
        14.0,
        14.0,
        "smallest",
    ),
    (
        Workload::FacebookTableI,
        "bp_vs_johnson",
        "\"up to 33% of makespan improvements for larger cluster sizes\" (§IV-B, Fig. 9)",
        33.0,
        33.0,
        "max",
    ),
];

fn claims(rows: &[MakespanRow], workloads: &[Workload]) -> Vec<Claim> {
    let mut out = Vec::new();
    // FB jobs from SWIM are held to the paper's Facebook claims too, for comparison only.
    let facebook: Vec<_> = CLAIMS
        .iter()
        .filter(|c| c.0 == Workload::FacebookTableI)
        .map(|c| (Workload::FbSwim, c.1, c.2, c.3, c.4, c.5))
        .collect();
    for &(w, which, paper, lo, hi, over) in CLAIMS.iter().chain(facebook.iter()) {
        if !workloads.contains(&w) {
            continue;
        }
        let g = gains(rows, w.name(), which);
        let ours = match over {
            "max" => g.iter().copied().reduce(f64::max),
            "smallest" => g.first().copied(),
            _ => {
                let mut s = g.clone();
                s.sort_by(f64::total_cmp);
                s.get(s.len() / 2).copied()
            }
        };
        let Some(ours) = ours else { continue };
        out.push(Claim {
            workload: w.name(),
            gain: which,
            paper,
            paper_lo: lo,
            paper_hi: hi,
            over_sizes: over,
            ours,
            within_5_points: ours >= lo - 5.0 && ours <= hi + 5.0,
        });
    }
    out
}

impl Row for Claim {
    fn fields() -> Vec<Field<Claim>> {
        // The paper's gains are in percent already, as ours are (`gain`).
        vec![
            (Column::text("workload"), |c| c.workload.into()),
            (Column::text("gain"), |c| c.gain.into()),
            (Column::text("the paper says"), |c| c.paper.into()),
            (Column::text("paper").right(), |c| {
                match c.paper_lo == c.paper_hi {
                    true => format!("{:.0} %", c.paper_lo),
                    false => format!("{:.0}–{:.0} %", c.paper_lo, c.paper_hi),
                }
                .into()
            }),
            (Column::text("ours (over sizes)").right(), |c| {
                format!("{:.1} % ({})", c.ours, c.over_sizes).into()
            }),
            (Column::text("within 5 points"), |c| {
                if c.within_5_points { "yes" } else { "no" }.into()
            }),
        ]
    }
}

impl Printable for MakespanReport {
    fn text(&self) -> String {
        markdown(self)
    }
}

/// The report as Markdown: the header (model, jobs, seeds), a table per workload, the claims
/// beside the paper's, and the goal.
pub fn markdown(r: &MakespanReport) -> String {
    let mut t = String::new();
    let seeds = match r.seeds {
        1 => format!("seed {}", r.seed),
        n => format!("seeds {}–{} (mean ± sd)", r.seed, r.seed + n - 1),
    };
    let _ = writeln!(t, "Model: {}.\n", r.model);
    let _ = writeln!(
        t,
        "Batches of {} jobs per workload (seed 003 §IV-A), {seeds}; makespan in seconds; gains are makespan decreases in % of the second policy's.",
        r.setup.jobs
    );
    if let Some(src) = &r.setup.fb_swim_source {
        let _ = writeln!(t, "fb-swim: {src}.");
    }
    let policy_cell = |x: Option<&&MakespanRow>| match x {
        Some(x) if r.seeds > 1 => Cell::Spread(x.makespan_s, x.makespan_sd_s),
        Some(x) => x.makespan_s.into(),
        None => Cell::Missing,
    };
    for &w in &r.setup.workloads {
        let rows: Vec<&MakespanRow> = r.rows.iter().filter(|x| x.workload == w.name()).collect();
        let jobs = rows.first().map_or(0, |x| x.jobs);
        let _ = writeln!(t, "\n### {} ({jobs} jobs)\n", w.name());
        let seconds = |h: &str| Column::new(h, Unit::Fixed(0));
        let mut table = Table::new(vec![
            Column::new("nodes", Unit::Count),
            seconds("random"),
            seconds("johnson"),
            seconds("reverse-johnson"),
            seconds("balanced-pools"),
            Column::text("pools (slots×jobs)"),
            seconds("Min / Max (abstraction)"),
            seconds("lower bound"),
            Column::text("J vs R").right(),
            Column::text("BP vs J").right(),
            Column::text("BP vs R").right(),
        ]);
        let mut nodes: Vec<u32> = rows.iter().map(|x| x.nodes).collect();
        nodes.dedup();
        for n in nodes {
            let get = |p: &str| rows.iter().find(|x| x.nodes == n && x.policy == p);
            let pools = get("balanced-pools")
                .and_then(|x| x.pools.as_ref())
                .map(|p| {
                    p.iter()
                        .map(|[s, j]| format!("{s}×{j}"))
                        .collect::<Vec<_>>()
                        .join(" + ")
                })
                .unwrap_or_default();
            let abstraction = |p: &str| Cell::from(get(p).and_then(|x| x.abstraction_makespan_s));
            // Gains are in percent already (`gain`).
            let g = |better: &str, base: &str| {
                gain(&r.rows, w.name(), n, better, base)
                    .map_or(Cell::Missing, |g| format!("{g:.1} %").into())
            };
            table.row(vec![
                n.into(),
                policy_cell(get("random")),
                policy_cell(get("johnson")),
                policy_cell(get("reverse-johnson")),
                policy_cell(get("balanced-pools")),
                pools.into(),
                Cell::Joined(vec![abstraction("johnson"), abstraction("reverse-johnson")]),
                get("johnson").map_or(0.0, |x| x.lower_bound_s).into(),
                g("johnson", "reverse-johnson"),
                g("balanced-pools", "johnson"),
                g("balanced-pools", "reverse-johnson"),
            ]);
        }
        t += &table.markdown();
    }
    let _ = writeln!(t, "\n### Beside the paper (seed 003 §IV-B; digest §4)\n");
    t += &Table::rows(&r.claims).markdown();
    // How much any plan could still gain over Johnson's: 1 − bound / Johnson.
    let headroom: Vec<String> = r
        .setup
        .workloads
        .iter()
        .filter_map(|w| {
            r.rows
                .iter()
                .filter(|x| x.workload == w.name() && x.policy == "johnson" && x.makespan_s > 0.0)
                .map(|x| 100.0 * (1.0 - x.lower_bound_s / x.makespan_s))
                .reduce(f64::max)
                .map(|h| format!("{} {h:.1} %", w.name()))
        })
        .collect();
    let _ = writeln!(
        t,
        "\nHeadroom: the most any order or pools could gain over Johnson's (1 − lower bound / Johnson, the largest over the sizes): {}.",
        headroom.join(", ")
    );
    let missed: Vec<String> = r
        .claims
        .iter()
        .filter(|c| c.workload != Workload::FbSwim.name() && !c.within_5_points)
        .map(|c| format!("{} {}", c.workload, c.gain))
        .collect();
    let _ = writeln!(
        t,
        "\nGoal (issue 20): Johnson and BalancedPools within 5 points of the paper's gains on its own workloads (every claim above but fb-swim's, which is yard's addition): {}.",
        match (r.claims.is_empty(), missed.is_empty()) {
            (true, _) => "not judged (no claim's workload was run)".to_owned(),
            (false, true) => "met".to_owned(),
            (false, false) => format!(
                "NOT met ({} of {} claims off: {})",
                missed.len(),
                r.claims
                    .iter()
                    .filter(|c| c.workload != Workload::FbSwim.name())
                    .count(),
                missed.join(", ")
            ),
        }
    );
    t
}

/// `makespan-<workload>.svg` in `dir`: makespan against nodes, a line per policy (mean over
/// the seeds; the x axis is logarithmic).
pub fn write_plots(dir: &std::path::Path, r: &MakespanReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for &w in &r.setup.workloads {
        let series: Vec<(String, Vec<(f64, f64)>)> = POLICIES
            .iter()
            .map(|&p| {
                let points = r
                    .rows
                    .iter()
                    .filter(|x| x.workload == w.name() && x.policy == p)
                    .map(|x| (f64::from(x.nodes), x.makespan_s))
                    .collect();
                (p.to_owned(), points)
            })
            .collect();
        crate::plot::lines(
            &dir.join(format!("makespan-{}.svg", w.name())),
            &format!(
                "{}: batch makespan, {} jobs (slot-level model, seed 003)",
                w.name(),
                r.setup.jobs
            ),
            "nodes (1 map + 1 reduce slot each)",
            "makespan (s)",
            &series,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_follow_the_papers_shapes_and_the_seed() {
        let a = Workload::SyntheticBimodal.jobs(100, 3, &[]);
        assert_eq!(a, Workload::SyntheticBimodal.jobs(100, 3, &[]));
        assert_ne!(a, Workload::SyntheticBimodal.jobs(100, 4, &[]));
        assert!(a.iter().all(|j| (1..=100).contains(&j.maps.len())));
        assert!(a.iter().all(|j| (1..=50).contains(&j.reduces.len())));
        assert!(a.iter().flat_map(|j| j.maps.iter()).all(|&d| d > 0.0));
        let y = Workload::YahooUnimodal.jobs(100, 1, &[]);
        assert!(y.iter().all(|j| !j.maps.is_empty()));
        // Facebook's Table I for 100 jobs: 38 one-map jobs, 74 map-only.
        let f = Workload::FacebookTableI.jobs(100, 1, &[]);
        assert_eq!(f.iter().filter(|j| j.maps.len() == 1).count(), 38);
        assert_eq!(f.iter().filter(|j| j.reduces.is_empty()).count(), 74);
    }

    #[test]
    fn a_small_run_has_every_policy_and_balanced_pools_never_loses_to_johnson() {
        let setup = MakespanSetup {
            seed: 1,
            seeds: 2,
            jobs: 12,
            nodes: vec![5, 20],
            workloads: vec![Workload::SyntheticBimodal, Workload::YahooBimodal],
            fb_swim_source: None,
        };
        let r = run(&setup, &|_| Vec::new(), &|_, _| {});
        assert_eq!(r.rows.len(), 2 * 2 * 4);
        for w in ["synthetic-bimodal", "yahoo-bimodal"] {
            for n in [5, 20] {
                let bp = makespan(&r.rows, w, n, "balanced-pools").unwrap();
                let j = makespan(&r.rows, w, n, "johnson").unwrap();
                assert!(bp <= j, "{w} {n}: {bp} > {j}");
            }
        }
        assert!(markdown(&r).contains("Goal (issue 20)"));
    }
}
