//! Batch makespan: Johnson's two-stage order and BalancedPools (seed 003: Verma, Cherkasova,
//! Campbell, "Two Sides of a Coin", HPL-2012-127; digest `papers/balancedpools.md`).
//!
//! A batch is a set of independent MapReduce jobs submitted together; the goal is the shortest
//! makespan. Sans-IO and deterministic: no clock, no global state; the one random thing (a
//! random order, the baseline) draws from the RNG the caller passes in.
//!
//! The model, as the paper has it:
//! - A job is its tasks: map task durations and reduce task durations (a reduce's time holds
//!   its shuffle, as the paper folds shuffle and sort into the reduce stage, seed 003 §II-A).
//! - **Stage durations depend on the slots** (seed 003 §II-B): with `S` slots a stage of `n`
//!   tasks takes `T^avg = (T^low + T^up) / 2`, `T^low = n·avg/S`, `T^up = (n−1)·avg/S + max`
//!   (ARIA's bounds, without the printed double `/S_M`, digest §1.1). [INF] A stage of fewer
//!   tasks than slots uses only `n` of them, so `S` is `min(S, n)` there: one task of 10 s
//!   takes 10 s on any cluster, where the bound as printed would say `(0.1 + 10) / 2`.
//! - **Johnson's order** (§III-B, Alg. 1) over the pairs `(m_i, r_i)` computed for the slots
//!   the jobs will get: the whole cluster, or their pool.
//! - **The makespan of an order** is not the two-stage formula (the abstraction; the paper's
//!   Min/Max curves, [`flow_shop_makespan`]) but a task/slot-level simulation, as the paper
//!   uses SimMR (§III-C; digest §1.4, §1.6): [`simulate`].
//! - **BalancedPools** (§III-C, Alg. 2) with the digest's corrections (§1.5): a bisection that
//!   ends, the best of every evaluated split kept, stage durations recomputed per pool.
//!
//! A cluster of `slots` is `slots` map slots and `slots` reduce slots (the paper's simulations
//! count nodes of 1 map + 1 reduce slot each; a pool's size is in such slot pairs, digest §5).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rand::seq::SliceRandom;
use serde::Serialize;

/// One job of a batch: the durations of its map tasks and of its reduce tasks, seconds.
/// A map-only job has no reduces.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchJob {
    pub id: String,
    pub maps: Vec<f64>,
    pub reduces: Vec<f64>,
}

impl BatchJob {
    /// A job that fills `slots` slots in one wave per stage: `slots` maps of `map_stage`
    /// seconds and `slots` reduces of `reduce_stage` (none when it is 0). Johnson's own
    /// two-stage setting (seed 003 §III-C, "Scenario 1").
    pub fn one_wave(id: &str, map_stage: f64, reduce_stage: f64, slots: u32) -> BatchJob {
        BatchJob::waves(id, map_stage, reduce_stage, slots, slots, slots)
    }

    /// A job whose stages took `map_stage` and `reduce_stage` seconds on `slots` slots with
    /// `map_tasks` and `reduce_tasks` equal tasks: each task lasts its stage divided by the
    /// stage's waves, `⌈tasks / slots⌉` (seed 003 §III-C, "Scenario 2": 30 tasks on 10 slots
    /// are three waves). At least one map; no reduces when `reduce_tasks` or `reduce_stage` is 0.
    pub fn waves(
        id: &str,
        map_stage: f64,
        reduce_stage: f64,
        map_tasks: u32,
        reduce_tasks: u32,
        slots: u32,
    ) -> BatchJob {
        let slots = slots.max(1);
        let tasks = |stage: f64, n: u32| vec![stage / f64::from(n.div_ceil(slots)); n as usize];
        BatchJob {
            id: id.to_owned(),
            maps: tasks(map_stage, map_tasks.max(1)),
            reduces: match reduce_stage == 0.0 {
                true => Vec::new(),
                false => tasks(reduce_stage, reduce_tasks),
            },
        }
    }
}

/// A stage's duration on `slots` slots by ARIA's bounds (seed 003 §II-B):
/// `(T^low + T^up) / 2`, with at most one slot per task ([INF], module doc). 0 for no tasks.
pub(crate) fn stage_duration(tasks: &[f64], slots: u32) -> f64 {
    if tasks.is_empty() {
        return 0.0;
    }
    let n = tasks.len() as f64;
    let s = f64::from(slots.max(1)).min(n);
    let sum: f64 = tasks.iter().sum();
    let avg = sum / n;
    let max = tasks.iter().copied().fold(0.0, f64::max);
    let low = n * avg / s;
    let up = (n - 1.0) * avg / s + max;
    (low + up) / 2.0
}

/// `(m_i, r_i)`: the job's map and reduce stage durations on `slots` slots (seed 003 §III-A,
/// the abstraction `J_i = (m_i, r_i)`).
pub fn stages(job: &BatchJob, slots: u32) -> (f64, f64) {
    (
        stage_duration(&job.maps, slots),
        stage_duration(&job.reduces, slots),
    )
}

/// Johnson's order (seed 003 §III-B, Alg. 1) of jobs given as `(m_i, r_i)`: indices into
/// `stages`. `D_i = (m_i, m)` when `min(m_i, r_i) = m_i` (a tie goes to the head), else
/// `(r_i, r)`; jobs sorted by `D_i^1` ascending (stable: equal ones keep their input order);
/// `m` jobs fill the schedule from the head, `r` jobs from the tail. A map-only job
/// (`r_i = 0`) is an `r` job and goes to the tail (footnote 3; digest §1.3).
pub(crate) fn johnson_order(stages: &[(f64, f64)]) -> Vec<usize> {
    let n = stages.len();
    let d = |i: usize| -> (f64, bool) {
        let (m, r) = stages[i];
        if m <= r { (m, true) } else { (r, false) }
    };
    let mut list: Vec<usize> = (0..n).collect();
    list.sort_by(|&a, &b| d(a).0.total_cmp(&d(b).0)); // stable
    let mut sigma = vec![usize::MAX; n];
    let (mut head, mut tail) = (0, n);
    for i in list {
        if d(i).1 {
            sigma[head] = i;
            head += 1;
        } else {
            tail -= 1;
            sigma[tail] = i;
        }
    }
    sigma
}

/// The reverse of an order (the paper's "worst" order under the abstraction, MaxSim).
pub fn reverse(order: &[usize]) -> Vec<usize> {
    order.iter().rev().copied().collect()
}

/// A uniformly random order of `n` jobs, drawn from `rng` (the baseline: a batch submitted
/// in no particular order).
pub fn random_order<R: rand::Rng + ?Sized>(n: usize, rng: &mut R) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    order
}

/// The two-stage flow-shop makespan of `order` under the abstraction (seed 003 §III-B; the
/// paper's Min and Max curves): `Cm += m_k; Cr = max(Cr, Cm) + r_k`.
pub fn flow_shop_makespan(stages: &[(f64, f64)], order: &[usize]) -> f64 {
    let (mut cm, mut cr) = (0.0f64, 0.0f64);
    for &k in order {
        let (m, r) = stages[k];
        cm += m;
        cr = cr.max(cm) + r;
    }
    cr
}

/// Johnson's order of the jobs `members` (indices into `jobs`) with their stage durations
/// recomputed for `slots` slots (digest §1.5: the pool's own `(m_i, r_i)`). Indices into
/// `jobs`.
pub fn johnson_for(jobs: &[BatchJob], members: &[usize], slots: u32) -> Vec<usize> {
    let pairs: Vec<(f64, f64)> = members.iter().map(|&j| stages(&jobs[j], slots)).collect();
    johnson_order(&pairs)
        .into_iter()
        .map(|k| members[k])
        .collect()
}

/// A time in a min-heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct At(f64);

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// What [`simulate`] found: per job of the order (in the order's positions), when its map
/// stage and its last task ended, and the makespan (the latest end; 0 for no jobs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schedule {
    pub map_end: Vec<f64>,
    pub end: Vec<f64>,
    pub makespan: f64,
}

/// The batch run in `order` (indices into `jobs`) on `slots` map and `slots` reduce slots,
/// every job submitted at 0: the task/slot-level simulation the paper estimates makespans
/// with (SimMR, seed 003 §III-C; digest §1.6). [INF, SimMR-like, as the digest reads it]
/// - Maps: FIFO in the order; each task to the earliest-free map slot, so a job's maps start
///   on slots the previous job's last wave leaves free (Fig. 6a).
/// - Reduces: a job's reduces may start only once all its maps are done (the paper's strict
///   barrier, no slow-start); a free reduce slot takes the next reduce of the first job in
///   the order that is ready (Hadoop's FIFO scheduler passes over a job with nothing to
///   schedule; it does not hold the slot for it).
/// - Tasks run exactly their durations; no failures, locality or speculation.
pub fn simulate(jobs: &[BatchJob], order: &[usize], slots: u32) -> Schedule {
    let s = slots.max(1) as usize;
    let mut free: BinaryHeap<Reverse<At>> = (0..s).map(|_| Reverse(At(0.0))).collect();
    let mut map_end = vec![0.0f64; order.len()];
    for (k, &j) in order.iter().enumerate() {
        // A job without maps is ready when FIFO reaches it: when a map slot is next free.
        let mut end = free.peek().map_or(0.0, |t| t.0.0);
        for &d in &jobs[j].maps {
            let Reverse(At(t)) = free.pop().expect("s ≥ 1 slots");
            let f = t + d;
            free.push(Reverse(At(f)));
            end = end.max(f);
        }
        map_end[k] = end;
    }
    let mut end = map_end.clone();
    // Positions in the order with reduces still to start, and the next one of each.
    let mut waiting: Vec<usize> = (0..order.len())
        .filter(|&k| !jobs[order[k]].reduces.is_empty())
        .collect();
    let mut next = vec![0usize; order.len()];
    let mut free: BinaryHeap<Reverse<At>> = (0..s).map(|_| Reverse(At(0.0))).collect();
    while !waiting.is_empty() {
        let Reverse(At(t)) = free.pop().expect("s ≥ 1 slots");
        // The first job in the order ready by t; if none is, the slot idles until the first
        // to become ready, and takes the first in the order ready then.
        let at = match waiting.iter().position(|&k| map_end[k] <= t) {
            Some(_) => t,
            None => waiting
                .iter()
                .map(|&k| map_end[k])
                .fold(f64::INFINITY, f64::min),
        };
        let w = waiting
            .iter()
            .position(|&k| map_end[k] <= at)
            .expect("a job is ready at the earliest ready time");
        let k = waiting[w];
        let reduces = &jobs[order[k]].reduces;
        let f = at + reduces[next[k]];
        next[k] += 1;
        end[k] = end[k].max(f);
        free.push(Reverse(At(f)));
        if next[k] == reduces.len() {
            waiting.remove(w);
        }
    }
    let makespan = end.iter().copied().fold(0.0, f64::max);
    Schedule {
        map_end,
        end,
        makespan,
    }
}

/// A lower bound on any order's and any pools' makespan on `slots` slots: all map work spread
/// over the map slots, all reduce work over the reduce slots, or one job's longest map then its
/// longest reduce, whichever is longest. How far a plan is from it bounds what any other plan
/// could still gain.
pub fn lower_bound(jobs: &[BatchJob], slots: u32) -> f64 {
    let s = f64::from(slots.max(1));
    let work =
        |f: fn(&BatchJob) -> &[f64]| jobs.iter().map(|j| f(j).iter().sum::<f64>()).sum::<f64>() / s;
    let longest = |t: &[f64]| t.iter().copied().fold(0.0, f64::max);
    let chain = jobs
        .iter()
        .map(|j| longest(&j.maps) + longest(&j.reduces))
        .fold(0.0, f64::max);
    work(|j| &j.maps).max(work(|j| &j.reduces)).max(chain)
}

/// One pool of a plan: its slots (map and reduce), its jobs in the order they are submitted
/// to its FIFO queue (indices into the batch), and its simulated makespan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pool {
    pub slots: u32,
    pub order: Vec<usize>,
    pub makespan: f64,
}

/// A batch plan: one pool (Johnson's order on the whole cluster) or two run side by side,
/// and the plan's makespan (the latest pool's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub pools: Vec<Pool>,
    pub makespan: f64,
    /// Simulations run to find it (the cost of the search).
    pub simulations: u64,
}

/// Johnson's order for the whole cluster, simulated: one pool.
pub fn johnson_plan(jobs: &[BatchJob], slots: u32) -> Plan {
    let all: Vec<usize> = (0..jobs.len()).collect();
    let order = johnson_for(jobs, &all, slots);
    let makespan = simulate(jobs, &order, slots).makespan;
    Plan {
        pools: vec![Pool {
            slots,
            order,
            makespan,
        }],
        makespan,
        simulations: 1,
    }
}

/// BalancedPools (seed 003 §III-C, Alg. 2) with the digest's corrections (§1.5):
/// 1. jobs sorted by increasing number of map tasks (stable);
/// 2. the best so far is Johnson's order on the whole cluster (line 2), so the result is
///    never worse than Johnson's;
/// 3. for every split, the `split` smallest jobs (α) and the rest (β) are two pools of
///    `SizeMid` and `M − SizeMid` slots, each in Johnson's order for its own slots (stage
///    durations recomputed per pool), simulated side by side; `SizeMid` is bisected over
///    `[1, M − 1]`, toward fewer slots for α when α finishes first, until the interval is at
///    most 1 wide (the printed `until SizeBegin ≠ SizeEnd` stops at once), and the best of
///    every size evaluated counts (line 19 as printed keeps only the last);
/// 4. a split replaces the best only when strictly shorter.
///
/// With fewer than 2 slots or 2 jobs there is nothing to split: Johnson's plan.
pub fn balanced_pools(jobs: &[BatchJob], slots: u32) -> Plan {
    let mut best = johnson_plan(jobs, slots);
    let m = slots;
    if m < 2 || jobs.len() < 2 {
        return best;
    }
    let mut sorted: Vec<usize> = (0..jobs.len()).collect();
    sorted.sort_by_key(|&j| jobs[j].maps.len()); // stable
    let mut simulations = best.simulations;
    for split in 1..jobs.len() {
        let (alpha, beta) = sorted.split_at(split);
        let mut tried: Vec<(u32, Pool, Pool)> = Vec::new();
        let mut eval = |size: u32, tried: &mut Vec<(u32, Pool, Pool)>| -> (f64, f64) {
            if let Some((_, a, b)) = tried.iter().find(|(s, _, _)| *s == size) {
                return (a.makespan, b.makespan);
            }
            let pool = |members: &[usize], slots: u32| {
                let order = johnson_for(jobs, members, slots);
                let makespan = simulate(jobs, &order, slots).makespan;
                Pool {
                    slots,
                    order,
                    makespan,
                }
            };
            let (a, b) = (pool(alpha, size), pool(beta, m - size));
            simulations += 2;
            let out = (a.makespan, b.makespan);
            tried.push((size, a, b));
            out
        };
        let (mut lo, mut hi) = (1u32, m - 1);
        loop {
            let mid = lo + (hi - lo) / 2;
            let (a, b) = eval(mid, &mut tried);
            if hi - lo <= 1 {
                eval(if mid == lo { hi } else { lo }, &mut tried);
                break;
            }
            if a < b {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        for (_, a, b) in tried {
            let makespan = a.makespan.max(b.makespan);
            if makespan < best.makespan {
                best = Plan {
                    pools: vec![a, b],
                    makespan,
                    simulations: 0,
                };
            }
        }
    }
    best.simulations = simulations;
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;

    /// Fig. 4's five jobs, J1..J5 at indices 0..4.
    const FIVE: [(f64, f64); 5] = [(4.0, 5.0), (1.0, 4.0), (30.0, 4.0), (6.0, 30.0), (2.0, 3.0)];

    fn ids(jobs: &[BatchJob], order: &[usize]) -> Vec<String> {
        order.iter().map(|&j| jobs[j].id.clone()).collect()
    }

    fn five(slots: u32, tasks: [u32; 5]) -> Vec<BatchJob> {
        FIVE.iter()
            .zip(tasks)
            .enumerate()
            .map(|(i, (&(m, r), n))| BatchJob::waves(&format!("J{}", i + 1), m, r, n, n, slots))
            .collect()
    }

    #[test]
    fn johnson_orders_the_five_jobs_as_figure_5_and_makes_47_against_78() {
        // seed 003 §III-B, Figs. 4-5: σ = (J2, J5, J1, J4, J3), makespan 47; reverse 78.
        let order = johnson_order(&FIVE);
        assert_eq!(order, vec![1, 4, 0, 3, 2]);
        assert_eq!(flow_shop_makespan(&FIVE, &order), 47.0);
        assert_eq!(flow_shop_makespan(&FIVE, &reverse(&order)), 78.0);
        // Brute force: 47 and 78 are the best and worst of all 120 orders (digest E2).
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for p in permutations(5) {
            let c = flow_shop_makespan(&FIVE, &p);
            (lo, hi) = (lo.min(c), hi.max(c));
        }
        assert_eq!((lo, hi), (47.0, 78.0));
    }

    #[test]
    fn the_slot_level_simulation_of_scenario_1_is_the_abstraction() {
        // 30 slots, every job 30 maps and 30 reduces (one wave each): 47 and 78 again, with
        // the digest's trace of the 47 schedule.
        let jobs = five(30, [30; 5]);
        let order = johnson_for(&jobs, &[0, 1, 2, 3, 4], 30);
        assert_eq!(ids(&jobs, &order), ["J2", "J5", "J1", "J4", "J3"]);
        let s = simulate(&jobs, &order, 30);
        assert_eq!(s.map_end, vec![1.0, 3.0, 7.0, 13.0, 43.0]);
        assert_eq!(s.end, vec![5.0, 8.0, 13.0, 43.0, 47.0]);
        assert_eq!(s.makespan, 47.0);
        assert_eq!(simulate(&jobs, &reverse(&order), 30).makespan, 78.0);
        // All reduce work on 30 slots: 46 s (map work 43 s, J4's chain 36 s).
        assert_eq!(lower_bound(&jobs, 30), 46.0);
    }

    #[test]
    fn two_jobs_make_24_in_johnsons_order_and_42_in_the_other() {
        // seed 003 §III-A: J1 = (20 s, 2 s), J2 = (2 s, 20 s) on the whole cluster.
        let pairs = [(20.0, 2.0), (2.0, 20.0)];
        assert_eq!(johnson_order(&pairs), vec![1, 0]);
        assert_eq!(flow_shop_makespan(&pairs, &[1, 0]), 24.0);
        assert_eq!(flow_shop_makespan(&pairs, &[0, 1]), 42.0);
        let jobs = [
            BatchJob::one_wave("J1", 20.0, 2.0, 8),
            BatchJob::one_wave("J2", 2.0, 20.0, 8),
        ];
        assert_eq!(johnson_plan(&jobs, 8).pools[0].order, vec![1, 0]);
        assert_eq!(simulate(&jobs, &[1, 0], 8).makespan, 24.0);
        assert_eq!(simulate(&jobs, &[0, 1], 8).makespan, 42.0);
    }

    #[test]
    fn scenario_2_is_47_under_johnson_and_40_in_two_pools() {
        // seed 003 §III-C: J3 and J4 have 20 + 20 tasks, the rest 30 + 30, on 30 slots.
        let jobs = five(30, [30, 30, 20, 20, 30]);
        let johnson = johnson_plan(&jobs, 30);
        assert_eq!(
            ids(&jobs, &johnson.pools[0].order),
            ["J2", "J5", "J1", "J4", "J3"]
        );
        assert_eq!(johnson.makespan, 47.0);
        // The paper's pools: {J1, J2, J5} on 10 slots (three waves: J2 = (3, 12), J5 = (6, 9),
        // J1 = (12, 15)) in order (J2, J5, J1) → 39; {J3, J4} on 20 slots in (J4, J3) → 40.
        let small = johnson_for(&jobs, &[0, 1, 4], 10);
        assert_eq!(ids(&jobs, &small), ["J2", "J5", "J1"]);
        assert_eq!(simulate(&jobs, &small, 10).makespan, 39.0);
        let big = johnson_for(&jobs, &[2, 3], 20);
        assert_eq!(ids(&jobs, &big), ["J4", "J3"]);
        assert_eq!(simulate(&jobs, &big, 20).makespan, 40.0);
        // BalancedPools finds that split (α = the 20-task jobs, on 20 slots): 40.
        let plan = balanced_pools(&jobs, 30);
        assert_eq!(plan.makespan, 40.0, "{plan:?}");
        assert_eq!(plan.pools.len(), 2);
        let sizes: Vec<u32> = plan.pools.iter().map(|p| p.slots).collect();
        assert_eq!(sizes, vec![20, 10]);
        assert_eq!(ids(&jobs, &plan.pools[0].order), ["J4", "J3"]);
        assert_eq!(ids(&jobs, &plan.pools[1].order), ["J2", "J5", "J1"]);
    }

    #[test]
    fn scenario_1_keeps_johnsons_single_pool() {
        // Every job fills the cluster: any pool makes every stage at least two waves.
        let jobs = five(30, [30; 5]);
        let plan = balanced_pools(&jobs, 30);
        assert_eq!(plan.pools.len(), 1);
        assert_eq!(plan.makespan, 47.0);
    }

    #[test]
    fn stage_durations_follow_arias_bounds_and_the_slots() {
        // 71 maps of 10 s on 16 slots (Fig. 1's WikiTrends shape): low 44.375, up 53.75.
        let maps = vec![10.0; 71];
        assert!(
            (stage_duration(&maps, 16) - (71.0 * 10.0 / 16.0 + 70.0 * 10.0 / 16.0 + 10.0) / 2.0)
                .abs()
                < 1e-9
        );
        // Fewer tasks than slots: one task takes its own time.
        assert_eq!(stage_duration(&[10.0], 100), 10.0);
        assert_eq!(stage_duration(&[], 100), 0.0);
        // Fewer slots, longer stages.
        assert!(stage_duration(&maps, 8) > stage_duration(&maps, 16));
        // A map-only job goes to the tail of Johnson's order (footnote 3).
        assert_eq!(
            johnson_order(&[(5.0, 0.0), (1.0, 9.0), (3.0, 2.0)]),
            vec![1, 2, 0]
        );
    }

    #[test]
    fn a_random_order_is_a_permutation_fixed_by_the_seed() {
        let mut a = rand::rngs::ChaCha8Rng::seed_from_u64(7);
        let mut b = rand::rngs::ChaCha8Rng::seed_from_u64(7);
        let (x, y) = (random_order(50, &mut a), random_order(50, &mut b));
        assert_eq!(x, y);
        let mut sorted = x.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(x, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn degenerate_batches_do_not_panic() {
        assert_eq!(simulate(&[], &[], 4).makespan, 0.0);
        let one = [BatchJob::one_wave("a", 3.0, 0.0, 1)];
        assert_eq!(balanced_pools(&one, 1).makespan, 3.0);
        assert_eq!(balanced_pools(&one, 0).makespan, 3.0);
        let two = [
            BatchJob::one_wave("a", 3.0, 1.0, 1),
            BatchJob::one_wave("b", 1.0, 3.0, 1),
        ];
        assert_eq!(balanced_pools(&two, 1).makespan, 5.0);
    }

    fn permutations(n: usize) -> Vec<Vec<usize>> {
        fn go(prefix: &mut Vec<usize>, rest: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if rest.is_empty() {
                out.push(prefix.clone());
            }
            for i in 0..rest.len() {
                let x = rest.remove(i);
                prefix.push(x);
                go(prefix, rest, out);
                prefix.pop();
                rest.insert(i, x);
            }
        }
        let mut out = Vec::new();
        go(&mut Vec::new(), &mut (0..n).collect(), &mut out);
        out
    }

    fn pairs(max_jobs: usize) -> impl Strategy<Value = Vec<(f64, f64)>> {
        prop::collection::vec((0u32..40, 0u32..40), 1..=max_jobs).prop_map(|v| {
            v.into_iter()
                .map(|(m, r)| (f64::from(m), f64::from(r)))
                .collect()
        })
    }

    proptest! {
        /// Johnson's rule is optimal for two stages of one machine each: no order is shorter
        /// (brute force over every permutation).
        #[test]
        fn johnson_is_never_worse_than_any_order(stages in pairs(6)) {
            let best = flow_shop_makespan(&stages, &johnson_order(&stages));
            for p in permutations(stages.len()) {
                prop_assert!(best <= flow_shop_makespan(&stages, &p));
            }
        }

        /// With one slot each (one map, one reduce per job) the slot-level simulation is the
        /// two-stage flow shop, for any order.
        #[test]
        fn one_slot_each_simulates_the_abstraction(stages in pairs(7), seed in 0u64..1000) {
            let jobs: Vec<BatchJob> = stages
                .iter()
                .enumerate()
                .map(|(i, &(m, r))| BatchJob::one_wave(&i.to_string(), m, r, 1))
                .collect();
            let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
            let order = random_order(jobs.len(), &mut rng);
            // A job of no map time still runs one (empty) map: the abstraction's m = 0.
            prop_assert_eq!(simulate(&jobs, &order, 1).makespan, flow_shop_makespan(&stages, &order));
        }

        /// BalancedPools never does worse than Johnson's single pool, and its pools use the
        /// cluster's slots and every job once.
        #[test]
        fn balanced_pools_is_never_worse_than_johnson(
            jobs in prop::collection::vec(
                (prop::collection::vec(1u32..50, 1..12), prop::collection::vec(1u32..50, 0..6)),
                1..7,
            ),
            slots in 1u32..12,
        ) {
            let jobs: Vec<BatchJob> = jobs
                .into_iter()
                .enumerate()
                .map(|(i, (m, r))| BatchJob {
                    id: i.to_string(),
                    maps: m.into_iter().map(f64::from).collect(),
                    reduces: r.into_iter().map(f64::from).collect(),
                })
                .collect();
            let johnson = johnson_plan(&jobs, slots);
            let plan = balanced_pools(&jobs, slots);
            prop_assert!(plan.makespan <= johnson.makespan);
            prop_assert_eq!(plan.pools.iter().map(|p| p.slots).sum::<u32>(), slots);
            let mut all: Vec<usize> = plan.pools.iter().flat_map(|p| p.order.clone()).collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..jobs.len()).collect::<Vec<_>>());
            let worst = plan.pools.iter().map(|p| p.makespan).fold(0.0, f64::max);
            prop_assert_eq!(worst, plan.makespan);
            prop_assert!(lower_bound(&jobs, slots) <= plan.makespan + 1e-9);
        }
    }
}
