//! The k_max oracle (EVALUATION.md; Dart §6.1.3): the largest number of maps any schedule could
//! finish by the deadline with the job's containers, found by replaying every task's true
//! duration through the engine's model and searching over schedules and over k. Also MDT.
//! Pure: no IO, no clock, no randomness.
//!
//! # The model (the engine implements exactly this)
//! - A map on a container takes `duration × speed`; the oracle runs every map node-local, so a
//!   container's speed is its node's factor (1, or `slowdown` on a slow node).
//! - A finished map's output joins the job's shuffle link, a FIFO at `shuffle_bandwidth`: its
//!   transfer ends at `max(finish, link_free_at) + output / bandwidth`.
//! - The shuffle ends when every counted map has finished and the link has drained; reduces
//!   start then, on the same containers (all free by then), reduce `r` taking
//!   `reduce_seconds(r, d_r) × speed`, `d_r` its share of the counted maps' output in whole
//!   bytes that sum to the output exactly (`JobTruth::reduce_inputs`, as the engine hands them
//!   over), in waves when R > C.
//! - A map-only job (R = 0) completes when its last map finishes: no shuffle.
//! - Times are measured from the job's start, t = 0, when every container is free.
//!
//! # The schedule search ([`completion`])
//! The completion is `shuffle end + reduce makespan`, and the two parts are independent (the
//! reduce inputs depend on *which* maps are counted, not on where they ran), so each phase is
//! minimised on its own:
//! - **Maps** minimise the shuffle end: the time the last output has crossed the FIFO link,
//!   `E = max_t (t + bytes arriving at or after t / bandwidth)` over the maps' finish times, or
//!   the last finish when R = 0. A container runs its maps back to back from t = 0, shortest
//!   first (ties: larger output first). With equal outputs that order is optimal: it gives each
//!   container its earliest possible i-th finish, and `E` only grows with any finish time.
//! - **Reduces** minimise their makespan on the containers (Q||Cmax).
//!
//! A phase of n tasks on C containers (only the n fastest are ever needed) is scheduled by:
//! 1. **One wave** when n ≤ the number of fastest containers: every task alone on one. Optimal
//!    (each task finishes as early as it possibly can).
//! 2. **Exact** branch and bound when n ≤ [`EXACT_MAX_TASKS`] and min(n, C) ≤
//!    [`EXACT_MAX_CONTAINERS`]: every assignment of tasks to containers, longest task first,
//!    interchangeable containers tried once, pruned by lower bounds (placed tasks' finishes can
//!    only grow; the containers' capacity; the link drained with the unplaced tasks at their
//!    earliest possible finishes); started from the heuristics' value. Optimal (for equal
//!    outputs; see above) unless it visits more than [`NODE_BUDGET`] nodes, when it keeps the
//!    best schedule found. Instances with equal outputs stay far below the budget (≤ 20,000
//!    nodes seen on 12 tasks × 4 containers); some with unequal outputs and a link about as
//!    slow as the maps reach it, costing ~50 ms.
//! 3. **Otherwise** list scheduling on uniform machines: LPT (longest task first, to the
//!    container where it would finish earliest, ties to the faster), and for maps, when LPT's
//!    link is still queueing after its last map, also SPT list scheduling (shortest first, same
//!    rule: outputs reach the link early); the better of the two. For the makespan, Graham's
//!    bound: LPT ≤ (4/3 − 1/(3C))·OPT on identical containers; on uniform ones ≤ 2C/(C+1)·OPT
//!    (Gonzalez, Ibarra and Sahni, 1977). LPT is optimal on identical containers when n ≤ 2C
//!    (at most two tasks each). With a link no such factor is claimed: `E` is between the
//!    schedule's makespan plus one transfer and its makespan plus every transfer.
//!
//! Every value returned is the time of a schedule that exists in the model, so the oracle
//! never claims more than the engine could do; it is the optimum in cases 1–2 (for unequal
//! outputs, the optimum among shortest-first orders) and within the bounds above in case 3.
//! The result depends only on the multisets of maps and speeds, not on their order, so
//! `mdt` and `k_max` at deadline = MDT agree to the last bit.
//!
//! # Choosing the maps ([`k_max`])
//! With equal outputs the k shortest maps are an optimal choice (exchange: give any feasible
//! k-set's schedule the k shortest maps instead, the i-th shortest in the place of the chosen
//! set's i-th shortest; no finish time grows, the link carries the same bytes and the reduces
//! get the same inputs). The same holds when outputs grow with duration (a shorter map then also
//! has no more output). Otherwise a map with a small output can beat a shorter one (less link
//! time, smaller reduce inputs), so the oracle tries two orders, shortest first (ties: smaller
//! output) and smallest output first (ties: shorter), and keeps the larger k: exact for equal
//! outputs, and still achievable (a lower bound on the true k_max) for unequal ones.
//!
//! # Searching over k
//! The optimal completion is monotone in k (drop a map from a schedule: no finish is later, the
//! link carries less, reduce inputs shrink), and heuristic completions nearly so. So:
//! 1. A lower bound on the first k maps' completion from prefix sums (capacity, longest map,
//!    link, reduce capacity and longest reduce) is monotone and costs O(R): binary search on it
//!    gives a ceiling above which nothing can fit. If the ceiling fits, it is the answer.
//! 2. Otherwise regula falsi (Illinois) on `completion(k) − deadline` between 0 and the
//!    ceiling, with a bisection step whenever a step fails to halve the bracket, until `lo`
//!    fits and `lo + 1` does not.
//! 3. If the "no" at `lo + 1` came from a heuristic (LPT anomalies make those non-monotone),
//!    [`MONOTONE_GUARD`] more k are tried. An exact "no" rules out every larger k.
//!
//! Cost: O(M log M) to sort, then a handful to a dozen evaluations of O(k log k + k (S + log C))
//! each (S distinct container speeds, 1 or 2 in the simulator's clusters). A 100,000-map job
//! takes 10–120 ms in release builds (`timing_a_hundred_thousand_maps` in tests/oracle.rs).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::job::JobTruth;

/// The exact branch is used when a phase has at most this many tasks...
pub(crate) const EXACT_MAX_TASKS: usize = 12;
/// ...and at most this many containers can be used (`min(C, tasks)`).
pub(crate) const EXACT_MAX_CONTAINERS: usize = 4;
/// Nodes an exact search may visit before it settles for the best schedule found so far.
pub(crate) const NODE_BUDGET: u64 = 250_000;
/// How many k past the binary search's answer `k_max` still tries when the answer's
/// neighbour was judged by a heuristic.
pub(crate) const MONOTONE_GUARD: usize = 4;

/// The completion time (seconds from the job's start) when exactly `maps` (indices into
/// `truth.maps`, each once) are processed on containers with these speed factors (1 = a
/// normal node, `slowdown` on a slow one), with the best schedule the oracle finds (see the
/// module documentation). `f64::INFINITY` when there is work but no container. Depends only
/// on the multiset of maps and of speeds, not on the order they are given in.
pub fn completion(truth: &JobTruth, maps: &[usize], speeds: &[f64]) -> f64 {
    let mut tasks: Vec<Task> = maps
        .iter()
        .map(|&i| {
            let m = &truth.maps[i];
            Task {
                d: m.duration,
                o: m.output_bytes,
            }
        })
        .collect();
    tasks.sort_by(by_duration);
    evaluate(truth, &tasks, &sorted_speeds(speeds)).time
}

/// The largest k such that some schedule of k maps on containers with these speed factors
/// completes by `deadline` (finishing exactly at the deadline meets it); 0 when not even one
/// map fits. See the module documentation for how the maps are chosen and k is searched.
pub fn k_max(truth: &JobTruth, speeds: &[f64], deadline: f64) -> u32 {
    k_max_schedule(truth, speeds, deadline).k
}

/// What the k_max schedule reads: how many maps, and which (indices into `truth.maps`).
#[derive(Debug, Clone, PartialEq)]
pub struct KMax {
    pub k: u32,
    /// The `k` maps of the candidate order that reached `k` (the shortest-first order unless
    /// the smallest-output order fitted more).
    pub maps: Vec<usize>,
}

impl KMax {
    /// Input bytes the schedule reads.
    pub fn input_bytes(&self, truth: &JobTruth) -> u64 {
        self.maps.iter().map(|&m| truth.maps[m].input_bytes).sum()
    }
}

/// [`k_max`], with the maps its schedule reads.
pub fn k_max_schedule(truth: &JobTruth, speeds: &[f64], deadline: f64) -> KMax {
    if truth.maps.is_empty() || speeds.is_empty() {
        return KMax {
            k: 0,
            maps: Vec::new(),
        };
    }
    let speeds = sorted_speeds(speeds);
    let all: Vec<Task> = truth
        .maps
        .iter()
        .map(|m| Task {
            d: m.duration,
            o: m.output_bytes,
        })
        .collect();
    let mut shortest = all.clone();
    shortest.sort_by(by_duration);
    let mut best = Search::new(truth, &shortest, &speeds, deadline).largest(0);
    let mut order: fn(&Task, &Task) -> Ordering = by_duration;
    if best < all.len() {
        let mut smallest = all.clone();
        smallest.sort_by(by_output);
        if smallest != shortest {
            let k = Search::new(truth, &smallest, &speeds, deadline).largest(best);
            if k > best {
                (best, order) = (k, by_output);
            }
        }
    }
    // The same order on indices (a stable sort: equal tasks are interchangeable to the
    // search, so any of them is the schedule's).
    let mut maps: Vec<usize> = (0..all.len()).collect();
    maps.sort_by(|&a, &b| order(&all[a], &all[b]));
    maps.truncate(best);
    KMax {
        k: best as u32,
        maps,
    }
}

/// The byte oracle's answer for a job under a deadline ([`byte_max`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteMax {
    /// Input bytes: the most any schedule of whole maps reads by the deadline when `exact`,
    /// else a proven upper bound on that.
    pub bytes: u64,
    /// `bytes` is the optimum (a schedule reading exactly that many bytes exists and no
    /// schedule reads more), not only an upper bound.
    pub exact: bool,
}

/// [`byte_max`] enumerates every subset of the maps that can fit alone when there are at most
/// this many.
pub(crate) const BYTE_EXACT_MAX_MAPS: usize = 8;

/// The byte oracle: the most input bytes any schedule of whole maps could read by `deadline`
/// on these containers, in the model of the module documentation (the same true task times,
/// link and reduces as [`k_max`]; a schedule reads a set of maps when it completes, reduces
/// included, by the deadline). `known` is a set the caller already knows fits (the k_max
/// schedule), so the answer is never below its bytes.
///
/// Exact where cheap, else a proven upper bound, and it says which:
/// 1. Maps that cannot fit even alone are dropped: in any set a map finishes no earlier than
///    alone on the fastest container, and with reduces its output then crosses the link.
/// 2. **An upper bound** `U` ([`byte_bound`], the fractional relaxation) and **an achievable
///    value** `L`: the larger of `known` and the longest prefix that fits of the maps in order
///    of bytes per second (every completion the oracle returns is that of a schedule that
///    exists). `L = U`: exact.
/// 3. At most [`BYTE_EXACT_MAX_MAPS`] maps left: every subset with more bytes than `L` and no
///    more than `U`, most bytes first, until one fits. Exact when every subset passed over was
///    ruled out by a proven optimum (the exact schedule search, on maps of equal outputs, a
///    map-only job or one map to a container, where shortest-first runs are optimal) or by
///    `Search::lower_bound` (capacity, longest map, link, reduces) past the deadline; otherwise
///    the bytes of the largest subset only a heuristic ruled out (capped by `U`) are the bound.
/// 4. Otherwise `U`, not exact.
///
/// Jobs recording no input bytes have none to read: 0, exact (their reports count maps).
pub fn byte_max(truth: &JobTruth, speeds: &[f64], deadline: f64, known: &KMax) -> ByteMax {
    let zero = ByteMax {
        bytes: 0,
        exact: true,
    };
    if truth.maps.is_empty() || speeds.is_empty() || deadline.is_nan() || deadline < 0.0 {
        return zero;
    }
    let speeds = sorted_speeds(speeds);
    let task = |i: usize| Task {
        d: truth.maps[i].duration,
        o: truth.maps[i].output_bytes,
    };
    // 1. Maps not ruled out alone: in any set, map `i` finishes no earlier than alone on the
    // fastest container, and its output then still crosses the link (O(1) a map, where the
    // lone completion would cost the reduces' schedule).
    let reduces = !truth.partition_shares.is_empty();
    let eligible: Vec<usize> = (0..truth.maps.len())
        .filter(|&i| {
            let m = &truth.maps[i];
            let link = match reduces {
                true => transfer(m.output_bytes, truth.shuffle_bandwidth),
                false => 0.0,
            };
            (m.duration * speeds[0] + link) * (1.0 - 1e-9) <= deadline
        })
        .collect();
    if eligible.is_empty() {
        return zero;
    }
    let bytes_of = |set: &[usize]| -> u64 { set.iter().map(|&i| truth.maps[i].input_bytes).sum() };
    // 2. The bound and an achievable value.
    let upper = byte_bound(truth, &eligible, &speeds, deadline);
    let mut lower = known.input_bytes(truth);
    let mut by_rate = eligible.clone();
    by_rate.sort_by(|&a, &b| {
        let rate = |i: usize| truth.maps[i].input_bytes as f64 / truth.maps[i].duration;
        rate(b).total_cmp(&rate(a)).then(a.cmp(&b))
    });
    let order: Vec<Task> = by_rate.iter().map(|&i| task(i)).collect();
    let k = Search::new(truth, &order, &speeds, deadline).largest(0);
    lower = lower.max(bytes_of(&by_rate[..k]));
    if lower >= upper {
        return ByteMax {
            bytes: lower,
            exact: true,
        };
    }
    if eligible.len() > BYTE_EXACT_MAX_MAPS {
        return ByteMax {
            bytes: upper,
            exact: false,
        };
    }
    // 3. Every subset between the two, most bytes first.
    let n = eligible.len();
    let mut subsets: Vec<(u64, Vec<usize>)> = (1u32..1 << n)
        .map(|mask| {
            let set: Vec<usize> = (0..n)
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| eligible[b])
                .collect();
            (bytes_of(&set), set)
        })
        .filter(|(b, _)| *b > lower && *b <= upper)
        .collect();
    subsets.sort_by_key(|s| Reverse(s.0));
    let mut unproven: Option<u64> = None;
    let mut tasks = Vec::with_capacity(n);
    for (bytes, set) in subsets {
        tasks.clear();
        tasks.extend(set.iter().map(|&i| task(i)));
        tasks.sort_by(by_duration);
        let e = evaluate(truth, &tasks, &speeds);
        if e.time <= deadline {
            lower = bytes;
            break;
        }
        // Shortest-first runs are optimal without a link, with equal outputs, or when every
        // map has a fastest container to itself (no runs at all).
        let fastest = speeds.iter().take_while(|s| **s == speeds[0]).count();
        let runs_optimal = truth.partition_shares.is_empty()
            || tasks.len() <= fastest
            || tasks.windows(2).all(|w| w[0].o == w[1].o);
        let proven = e.optimal && runs_optimal
            || Search::new(truth, &tasks, &speeds, deadline).lower_bound(tasks.len()) > deadline;
        if !proven && unproven.is_none() {
            unproven = Some(bytes);
        }
    }
    match unproven {
        None => ByteMax {
            bytes: lower,
            exact: true,
        },
        Some(bound) => ByteMax {
            bytes: bound.min(upper).max(lower),
            exact: false,
        },
    }
}

/// A proven upper bound on the input bytes of any set of the `eligible` maps (indices into
/// `truth.maps`) some schedule completes by `deadline` on containers of these `speeds`
/// (fastest first): the fractional relaxation of two knapsacks, the smaller of the two, and
/// never more than all their bytes.
///
/// - **Slot time.** Every map of a feasible set `S` finishes by `T = deadline − τ`, where `τ`
///   is the smallest transfer of any eligible map's output when the job has reduces (the last
///   map to finish still sends its output over the link before the shuffle ends, and the
///   reduces take no negative time) and 0 for a map-only job. A container of speed factor `s`
///   runs its maps one after another, each taking `d·s`, so it does at most `T / s` seconds
///   of speed-1 map work by `T`: `Σ_{i∈S} d_i ≤ T · Σ_j 1/s_j`. Any whole-map set obeying that
///   is a 0/1 solution of a knapsack of that capacity with weights `d_i` and values `bytes_i`;
///   the fractional knapsack (maps in order of bytes per second, the last one cut) is the
///   knapsack's LP optimum, at least every 0/1 solution's value.
/// - **Link.** With reduces, every output of `S` crosses the FIFO link at `bandwidth` after
///   the first map of `S` finishes (no earlier than the shortest eligible map alone on the
///   fastest container) and before the deadline: `Σ_{i∈S} o_i ≤ bandwidth · (deadline − that)`;
///   the same relaxation in order of input bytes per output byte.
///
/// A map of no duration (or no output, for the link) costs nothing and is counted whole.
/// The floor of a bound on an integer is still a bound; when every eligible map reads the same
/// number of bytes `b`, the bound is rounded down to a multiple of `b` (every set's bytes are).
pub fn byte_bound(truth: &JobTruth, eligible: &[usize], speeds: &[f64], deadline: f64) -> u64 {
    let maps = &truth.maps;
    let total: u64 = eligible.iter().map(|&i| maps[i].input_bytes).sum();
    if eligible.is_empty() || speeds.is_empty() {
        return 0;
    }
    let reduces = !truth.partition_shares.is_empty();
    let bandwidth = truth.shuffle_bandwidth;
    let least_transfer = match reduces {
        true => eligible
            .iter()
            .map(|&i| transfer(maps[i].output_bytes, bandwidth))
            .fold(f64::INFINITY, f64::min),
        false => 0.0,
    };
    let rate: f64 = speeds.iter().map(|s| 1.0 / s).sum();
    // The relative slack keeps the bound above float rounding of an exact fit.
    let slot_time = ((deadline - least_transfer) * rate).max(0.0) * (1.0 + 1e-9);
    let weights: Vec<(f64, u64)> = eligible
        .iter()
        .map(|&i| (maps[i].duration, maps[i].input_bytes))
        .collect();
    let mut bound = fractional_knapsack(&weights, slot_time);
    if reduces {
        let fastest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let first = eligible
            .iter()
            .map(|&i| maps[i].duration * fastest)
            .fold(f64::INFINITY, f64::min);
        let link = ((deadline - first) * bandwidth).max(0.0) * (1.0 + 1e-9);
        let weights: Vec<(f64, u64)> = eligible
            .iter()
            .map(|&i| (maps[i].output_bytes as f64, maps[i].input_bytes))
            .collect();
        bound = bound.min(fractional_knapsack(&weights, link));
    }
    let mut bytes = if bound >= total as f64 {
        total
    } else {
        bound.floor() as u64
    };
    let first = maps[eligible[0]].input_bytes;
    if first > 0 && eligible.iter().all(|&i| maps[i].input_bytes == first) {
        bytes -= bytes % first;
    }
    bytes
}

/// The LP optimum of a knapsack of `capacity` over items of (weight, value): items taken whole
/// in order of value per weight, the last one in part; items of no weight are free.
fn fractional_knapsack(items: &[(f64, u64)], capacity: f64) -> f64 {
    let mut free = 0.0;
    let mut costly: Vec<(f64, f64)> = Vec::with_capacity(items.len());
    for &(w, v) in items {
        if w <= 0.0 {
            free += v as f64;
        } else {
            costly.push((w, v as f64));
        }
    }
    costly.sort_by(|a, b| (b.1 / b.0).total_cmp(&(a.1 / a.0)));
    let (mut left, mut value) = (capacity, free);
    for (w, v) in costly {
        if left <= 0.0 {
            break;
        }
        let part = (left / w).min(1.0);
        value += part * v;
        left -= part * w;
    }
    value
}

/// MDT: the completion time processing all maps under MRA (`max(M, R, 1)` containers of speed
/// 1). Exact: with a container per task every task starts at once and nothing can finish
/// earlier.
pub fn mdt(truth: &JobTruth) -> f64 {
    let mra = truth.maps.len().max(truth.partition_shares.len()).max(1);
    let all: Vec<usize> = (0..truth.maps.len()).collect();
    completion(truth, &all, &vec![1.0; mra])
}

/// A task as the scheduler sees it: `d` seconds at speed 1, `o` output bytes (0 for reduces).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Task {
    d: f64,
    o: u64,
}

/// Shortest first, ties smaller output first: the canonical order `evaluate` takes, and the
/// first k_max candidate order.
fn by_duration(a: &Task, b: &Task) -> Ordering {
    a.d.total_cmp(&b.d).then(a.o.cmp(&b.o))
}

/// Smallest output first, ties shorter first: the second k_max candidate order.
fn by_output(a: &Task, b: &Task) -> Ordering {
    a.o.cmp(&b.o).then(a.d.total_cmp(&b.d))
}

/// Fastest (smallest factor) first.
fn sorted_speeds(speeds: &[f64]) -> Vec<f64> {
    debug_assert!(
        speeds.iter().all(|s| *s > 0.0 && s.is_finite()),
        "speed factors must be positive: {speeds:?}"
    );
    let mut s = speeds.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// A phase's (or a job's) best time found, and whether it is provably optimal.
#[derive(Debug, Clone, Copy)]
struct Eval {
    time: f64,
    optimal: bool,
}

/// `completion` for maps in `by_duration` order and speeds fastest first.
fn evaluate(truth: &JobTruth, maps: &[Task], speeds: &[f64]) -> Eval {
    let reduces = truth.partition_shares.len();
    if maps.is_empty() && reduces == 0 {
        return Eval {
            time: 0.0,
            optimal: true,
        };
    }
    if speeds.is_empty() {
        return Eval {
            time: f64::INFINITY,
            optimal: true,
        };
    }
    if reduces == 0 {
        return phase(maps, speeds, None);
    }
    let shuffle = phase(maps, speeds, Some(truth.shuffle_bandwidth));
    // Summed exactly, so the inputs do not depend on the order the maps are given in.
    let total = maps.iter().map(|t| u128::from(t.o)).sum::<u128>();
    let total = u64::try_from(total).unwrap_or(u64::MAX);
    let mut work: Vec<Task> = reduce_times(truth, total)
        .map(|d| Task { d, o: 0 })
        .collect();
    work.sort_by(by_duration);
    let reduce = phase(&work, speeds, None);
    Eval {
        time: shuffle.time + reduce.time,
        optimal: shuffle.optimal && reduce.optimal,
    }
}

/// Every reduce's time at speed 1 when the counted maps output `total` bytes, in reduce
/// order: reduce `r`'s input is its share of them in whole bytes, split as the engine splits
/// them (`JobTruth::reduce_inputs`: they sum to `total`), and its time
/// `truth.reduce_seconds(r, input)`. Reduces with the same input as the one before reuse its
/// `f(d)`, the same value `reduce_seconds` computes, instead of another `powf`.
fn reduce_times(truth: &JobTruth, total: u64) -> impl Iterator<Item = f64> + '_ {
    debug_assert_eq!(truth.partition_shares.len(), truth.reduce_noise.len());
    let mut last: Option<(f64, f64)> = None;
    truth
        .reduce_inputs(total)
        .into_iter()
        .zip(&truth.reduce_noise)
        .map(move |(bytes, noise)| {
            let bytes = bytes as f64;
            let f = match last {
                Some((b, f)) if b == bytes => f,
                _ => truth.reduce_time.at(bytes),
            };
            last = Some((bytes, f));
            f * noise
        })
}

/// The best schedule the oracle finds for `tasks` (in `by_duration` order) on containers with
/// `speeds` (fastest first): with a link, the time the last output has crossed it; without,
/// the makespan.
fn phase(tasks: &[Task], speeds: &[f64], link: Option<f64>) -> Eval {
    if tasks.is_empty() {
        return Eval {
            time: 0.0,
            optimal: true,
        };
    }
    let run = run_order(tasks);
    let fastest = speeds.iter().take_while(|s| **s == speeds[0]).count();
    if run.len() <= fastest {
        // One wave on the fastest containers: every task finishes as early as it possibly can,
        // and the objective only grows with finish times.
        let mut arrivals: Vec<(f64, u64)> = run.iter().map(|t| (t.d * speeds[0], t.o)).collect();
        return Eval {
            time: drain(&mut arrivals, link),
            optimal: true,
        };
    }
    // No schedule needs more containers than tasks, and the fastest ones do at least as well.
    let speeds = &speeds[..speeds.len().min(run.len())];
    let (mut best, makespan) = lpt(&run, speeds, link);
    if let Some(bandwidth) = link {
        // SPT gets outputs onto the link early, which only pays when the link queues: when
        // LPT's shuffle ends later than its last map plus one transfer.
        let longest_transfer = run
            .iter()
            .map(|t| transfer(t.o, bandwidth))
            .fold(0.0, f64::max);
        if best > makespan + longest_transfer {
            best = best.min(spt(&run, speeds, link));
        }
    }
    if run.len() <= EXACT_MAX_TASKS && speeds.len() <= EXACT_MAX_CONTAINERS {
        return Exact::search(&run, speeds, link, best);
    }
    Eval {
        time: best,
        optimal: false,
    }
}

/// The order maps run in on a container: shortest first, ties larger output first (its bytes
/// then reach the link sooner). From `by_duration` order: each run of equal durations reversed.
fn run_order(tasks: &[Task]) -> Vec<Task> {
    let mut run = tasks.to_vec();
    for group in run.chunk_by_mut(|a, b| a.d == b.d) {
        group.reverse();
    }
    run
}

/// LPT: longest first (ties smaller output first), each to the container where it would
/// finish earliest; each container then runs its tasks shortest first. The objective and the
/// makespan.
fn lpt(run: &[Task], speeds: &[f64], link: Option<f64>) -> (f64, f64) {
    let mut pool = Pool::new(speeds);
    let placed: Vec<(u32, f64, u64)> = run
        .iter()
        .rev()
        .map(|t| {
            let (id, before, _) = pool.place(t.d);
            (id, before, t.o)
        })
        .collect();
    // Run shortest first, a task finishes when everything placed after it (all no longer) and
    // itself are done: the container's final load less what was placed before it.
    let mut arrivals: Vec<(f64, u64)> = placed
        .iter()
        .map(|&(id, before, o)| (pool.loads[id as usize] - before, o))
        .collect();
    let makespan = pool.loads.iter().copied().fold(0.0, f64::max);
    (drain(&mut arrivals, link), makespan)
}

/// SPT list scheduling: shortest first, each to the container where it finishes earliest.
fn spt(run: &[Task], speeds: &[f64], link: Option<f64>) -> f64 {
    let mut pool = Pool::new(speeds);
    let mut arrivals: Vec<(f64, u64)> = run.iter().map(|t| (pool.place(t.d).2, t.o)).collect();
    drain(&mut arrivals, link)
}

/// Containers for list scheduling, grouped by speed.
struct Pool {
    classes: Vec<Class>,
    /// Each opened container's load.
    loads: Vec<f64>,
}

/// Containers of one speed: how many are still empty, and the open ones by load (the bits of
/// a non-negative f64 order as the f64 does).
struct Class {
    speed: f64,
    unused: usize,
    open: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Pool {
    fn new(speeds: &[f64]) -> Pool {
        let mut classes: Vec<Class> = Vec::new();
        for &s in speeds {
            match classes.last_mut() {
                Some(c) if c.speed == s => c.unused += 1,
                _ => classes.push(Class {
                    speed: s,
                    unused: 1,
                    open: BinaryHeap::new(),
                }),
            }
        }
        Pool {
            classes,
            loads: Vec::new(),
        }
    }

    /// Places a task of `d` seconds (at speed 1) where it finishes earliest (ties: the faster
    /// container): its container, the container's load before and after it.
    fn place(&mut self, d: f64) -> (u32, f64, f64) {
        let mut pick: Option<(usize, f64)> = None;
        for (i, c) in self.classes.iter().enumerate() {
            let load = if c.unused > 0 {
                0.0
            } else if let Some(Reverse((bits, _))) = c.open.peek() {
                f64::from_bits(*bits)
            } else {
                continue;
            };
            let finish = load + d * c.speed;
            if pick.is_none_or(|(_, f)| finish < f) {
                pick = Some((i, finish));
            }
        }
        let (i, finish) = pick.expect("at least one container");
        let class = &mut self.classes[i];
        let id = if class.unused > 0 {
            class.unused -= 1;
            self.loads.push(0.0);
            (self.loads.len() - 1) as u32
        } else {
            class.open.pop().expect("an open container").0.1
        };
        let before = self.loads[id as usize];
        self.loads[id as usize] = finish;
        class.open.push(Reverse((finish.to_bits(), id)));
        (id, before, finish)
    }
}

/// When the last of these (finish, output bytes) arrivals has crossed the FIFO link; without
/// a link, the last finish.
fn drain(arrivals: &mut [(f64, u64)], link: Option<f64>) -> f64 {
    let Some(bandwidth) = link else {
        return arrivals.iter().fold(0.0, |m, a| f64::max(m, a.0));
    };
    // Finish times are non-negative, so their bits order as they do.
    let key = |a: &(f64, u64)| (a.0.to_bits(), Reverse(a.1));
    if !arrivals.is_sorted_by_key(key) {
        arrivals.sort_unstable_by_key(key);
    }
    arrivals.iter().fold(0.0, |free, &(finish, bytes)| {
        free.max(finish) + transfer(bytes, bandwidth)
    })
}

fn transfer(bytes: u64, bandwidth: f64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        bytes as f64 / bandwidth
    }
}

/// The search over k for one candidate order of the maps.
struct Search<'a> {
    truth: &'a JobTruth,
    order: &'a [Task],
    speeds: &'a [f64],
    deadline: f64,
    /// Over the first k maps of `order`: work (speed-1 seconds), output bytes, the longest.
    work: Vec<f64>,
    bytes: Vec<u128>,
    longest: Vec<f64>,
    /// Over all maps: the shortest duration and the smallest transfer.
    shortest: f64,
    least_transfer: f64,
    /// `Σ 1/speed`: the containers' capacity, speed-1 seconds per second.
    rate: f64,
    /// Whether reduce time grows with input (the power law and noise are non-negative), so
    /// the reduce part of the lower bound is monotone in k.
    reduce_monotone: bool,
    scratch: Vec<Task>,
    seen: Vec<(usize, Eval)>,
}

impl<'a> Search<'a> {
    fn new(truth: &'a JobTruth, order: &'a [Task], speeds: &'a [f64], deadline: f64) -> Self {
        let mut work = Vec::with_capacity(order.len() + 1);
        let mut bytes = Vec::with_capacity(order.len() + 1);
        let mut longest = Vec::with_capacity(order.len() + 1);
        let (mut w, mut b, mut l) = (0.0, 0u128, 0.0f64);
        work.push(w);
        bytes.push(b);
        longest.push(l);
        for t in order {
            w += t.d;
            b += u128::from(t.o);
            l = l.max(t.d);
            work.push(w);
            bytes.push(b);
            longest.push(l);
        }
        let bandwidth = truth.shuffle_bandwidth;
        let p = truth.reduce_time;
        Search {
            truth,
            order,
            speeds,
            deadline,
            work,
            bytes,
            longest,
            shortest: order.iter().map(|t| t.d).fold(f64::INFINITY, f64::min),
            least_transfer: order
                .iter()
                .map(|t| transfer(t.o, bandwidth))
                .fold(f64::INFINITY, f64::min),
            rate: speeds.iter().map(|s| 1.0 / s).sum(),
            reduce_monotone: p.a >= 0.0
                && p.b >= 0.0
                && truth.reduce_noise.iter().all(|e| *e >= 0.0),
            scratch: Vec::with_capacity(order.len()),
            seen: Vec::new(),
        }
    }

    /// A lower bound on any schedule of the first k maps, monotone in k, from prefix sums:
    /// the containers' capacity and the longest map bound the last finish; the link carries
    /// every byte after the first finish; the reduces need their longest task and capacity.
    fn lower_bound(&self, k: usize) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let fastest = self.speeds[0];
        let last_finish = (self.work[k] / self.rate).max(self.longest[k] * fastest);
        let reduces = self.truth.partition_shares.len();
        let bound = if reduces == 0 {
            last_finish
        } else {
            let bandwidth = self.truth.shuffle_bandwidth;
            let bytes = self.bytes[k];
            let link = if bytes == 0 {
                0.0
            } else {
                bytes as f64 / bandwidth
            };
            let shuffle = (last_finish + self.least_transfer).max(self.shortest * fastest + link);
            let reduce = if self.reduce_monotone {
                let times = reduce_times(self.truth, u64::try_from(bytes).unwrap_or(u64::MAX));
                let (longest, sum) = times.fold((0.0f64, 0.0), |(l, s), t| (l.max(t), s + t));
                (longest * fastest).max(sum / self.rate)
            } else {
                0.0
            };
            shuffle + reduce
        };
        // Leave room for rounding: the bound only rules out k that cannot fit.
        bound * (1.0 - 1e-9)
    }

    /// The completion of the first k maps (remembered: the search may come back to a k).
    fn eval(&mut self, k: usize) -> Eval {
        if let Some(&(_, e)) = self.seen.iter().find(|(j, _)| *j == k) {
            return e;
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.order[..k]);
        self.scratch.sort_by(by_duration);
        let e = evaluate(self.truth, &self.scratch, self.speeds);
        self.seen.push((k, e));
        e
    }

    /// The largest k that fits, or 0 when no k above `floor` can.
    fn largest(&mut self, floor: usize) -> usize {
        let deadline = self.deadline;
        if deadline.is_nan() || deadline < 0.0 {
            return 0;
        }
        // Above `ceiling` even the lower bound misses the deadline.
        let (mut lo, mut hi) = (0, self.order.len() + 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.lower_bound(mid) <= deadline {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let ceiling = lo;
        if ceiling <= floor {
            return 0;
        }
        let top = self.eval(ceiling);
        if top.time <= deadline {
            return ceiling;
        }
        // `lo` fits (0 maps finish at 0), `hi` does not: regula falsi (Illinois) on
        // completion − deadline, which is smooth enough in k to take a few steps, with a
        // bisection step whenever a step fails to halve the bracket.
        let (mut lo, mut over_lo) = (0, -deadline);
        let (mut hi, mut over_hi, mut exact) = (ceiling, top.time - deadline, top.optimal);
        let mut last_side = 0i8;
        let mut stalled = false;
        while hi - lo > 1 {
            let width = hi - lo;
            let interpolated = lo as f64 + width as f64 * (-over_lo / (over_hi - over_lo));
            let mid = if stalled || !interpolated.is_finite() {
                lo + width / 2
            } else {
                (interpolated.round() as usize).clamp(lo + 1, hi - 1)
            };
            let e = self.eval(mid);
            if e.time <= deadline {
                (lo, over_lo) = (mid, e.time - deadline);
                if last_side == -1 {
                    over_hi /= 2.0;
                }
                last_side = -1;
            } else {
                (hi, over_hi, exact) = (mid, e.time - deadline, e.optimal);
                if last_side == 1 {
                    over_lo /= 2.0;
                }
                last_side = 1;
            }
            stalled = hi - lo > width / 2;
        }
        // The optimum is monotone in k, so an exact "no" at `hi` rules out every larger k; a
        // heuristic "no" may be an anomaly: probe a few more.
        if !exact {
            let mut probe = hi + 1;
            while probe < ceiling && probe <= lo + 1 + MONOTONE_GUARD {
                if self.eval(probe).time <= deadline {
                    lo = probe;
                }
                probe += 1;
            }
        }
        lo
    }
}

/// The earliest T with `Σ_j max(0, T − load_j) / speed_j ≥ work`: no schedule finishes `work`
/// more seconds (at speed 1) on these containers before it.
fn capacity_bound(loads: &[f64], speeds: &[f64], work: f64) -> f64 {
    let mut by_load: Vec<(f64, f64)> = loads.iter().copied().zip(speeds.iter().copied()).collect();
    by_load.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rate, mut base) = (0.0, 0.0);
    let mut t = 0.0;
    for (i, &(load, speed)) in by_load.iter().enumerate() {
        rate += 1.0 / speed;
        base += load / speed;
        t = (work + base) / rate;
        if by_load.get(i + 1).is_none_or(|next| t <= next.0) {
            break;
        }
    }
    t
}

/// Branch and bound over every assignment of tasks to containers, longest first (the order
/// that prunes best); each container runs its tasks in run order, so a task placed later (no
/// longer) runs before the ones already there.
struct Exact<'a> {
    /// Longest first: the reverse of run order.
    tasks: Vec<Task>,
    speeds: &'a [f64],
    link: Option<f64>,
    /// Work (speed-1 seconds) of tasks `i..`.
    suffix_work: Vec<f64>,
    /// The smallest transfer of any task: the last output to arrive still crosses the link.
    least_transfer: f64,
    /// For each depth i, lower bounds on the arrivals of tasks `i..` (see `bound`): by rank,
    /// and (when their outputs differ) by task.
    early: Vec<Vec<(f64, u64)>>,
    alone: Vec<Option<Vec<(f64, u64)>>>,
    placed: Vec<(f64, u64)>,
    /// Each container's tasks, in placement order (so run order reversed), and load.
    lists: Vec<Vec<Task>>,
    loads: Vec<f64>,
    arrivals: Vec<(f64, u64)>,
    best: f64,
    nodes: u64,
}

impl<'a> Exact<'a> {
    /// The optimum over every assignment (optimal unless the node budget ran out), or `upper`
    /// when nothing beats it.
    fn search(run: &[Task], speeds: &'a [f64], link: Option<f64>, upper: f64) -> Eval {
        let tasks: Vec<Task> = run.iter().rev().copied().collect();
        let mut suffix_work = vec![0.0; tasks.len() + 1];
        for i in (0..tasks.len()).rev() {
            suffix_work[i] = suffix_work[i + 1] + tasks[i].d;
        }
        let least_transfer = match link {
            Some(bw) => tasks
                .iter()
                .map(|t| transfer(t.o, bw))
                .fold(f64::INFINITY, f64::min),
            None => 0.0,
        };
        let rate: f64 = speeds.iter().map(|s| 1.0 / s).sum();
        let early = (0..=tasks.len())
            .map(|i| {
                // The j-th to finish of tasks `i..` finishes no earlier than the j shortest of
                // them could on all the containers, nor than the j-th shortest alone on the
                // fastest; the link is kindest with the largest outputs first.
                let mut ascending: Vec<Task> = tasks[i..].to_vec();
                ascending.reverse();
                let mut outputs: Vec<u64> = ascending.iter().map(|t| t.o).collect();
                outputs.sort_unstable_by(|a, b| b.cmp(a));
                let mut work = 0.0;
                ascending
                    .iter()
                    .zip(outputs)
                    .map(|(t, o)| {
                        work += t.d;
                        ((work / rate).max(t.d * speeds[0]), o)
                    })
                    .collect()
            })
            .collect();
        let alone = (0..=tasks.len())
            .map(|i| {
                let rest = &tasks[i..];
                let differ = rest.windows(2).any(|w| w[0].o != w[1].o);
                differ.then(|| rest.iter().map(|t| (t.d * speeds[0], t.o)).collect())
            })
            .collect();
        let mut e = Exact {
            speeds,
            link,
            suffix_work,
            least_transfer,
            early,
            alone,
            placed: Vec::with_capacity(tasks.len()),
            lists: vec![Vec::with_capacity(tasks.len()); speeds.len()],
            loads: vec![0.0; speeds.len()],
            arrivals: Vec::with_capacity(tasks.len()),
            best: upper,
            nodes: 0,
            tasks,
        };
        e.dfs(0);
        Eval {
            time: e.best,
            optimal: e.nodes <= NODE_BUDGET,
        }
    }

    fn dfs(&mut self, i: usize) {
        self.nodes += 1;
        if self.nodes > NODE_BUDGET {
            return;
        }
        let value = self.bound(i);
        if i == self.tasks.len() {
            // With every task placed the bound is the schedule's objective.
            if value < self.best {
                self.best = value;
            }
            return;
        }
        if value >= self.best {
            return;
        }
        let task = self.tasks[i];
        for j in 0..self.speeds.len() {
            let (load, speed) = (self.loads[j], self.speeds[j]);
            // Containers with the same speed and the same future are interchangeable: without
            // a link that is the same load, with one the same tasks.
            let twin = (0..j).any(|k| {
                self.speeds[k] == speed
                    && match self.link {
                        None => self.loads[k] == load,
                        Some(_) => self.lists[k] == self.lists[j],
                    }
            });
            if twin {
                continue;
            }
            let finish = load + task.d * speed;
            if finish >= self.best {
                continue;
            }
            self.loads[j] = finish;
            self.lists[j].push(task);
            self.dfs(i + 1);
            self.lists[j].pop();
            self.loads[j] = load;
        }
    }

    /// A lower bound on every completion of the partial schedule (tasks `..i` placed), and
    /// its objective when every task is placed. Tasks yet to be placed run before the placed
    /// ones on their container, so placed tasks only finish later than they do now. Each task
    /// yet to be placed finishes no earlier than alone on the fastest container; and the j-th
    /// of them to finish does so no earlier than the capacity of all the containers allows the
    /// j shortest of them to, nor than the j-th shortest alone on the fastest container, so,
    /// whichever tasks those are, the link drains no earlier than with the largest outputs at
    /// the earliest of those times (a larger output arriving earlier never delays the drain).
    /// And the last finish is no earlier than the containers' capacity allows, its output
    /// still to cross the link.
    fn bound(&mut self, i: usize) -> f64 {
        self.placed.clear();
        for (list, &speed) in self.lists.iter().zip(self.speeds) {
            let mut t = 0.0;
            for task in list.iter().rev() {
                t += task.d * speed;
                self.placed.push((t, task.o));
            }
        }
        self.arrivals.clone_from(&self.placed);
        self.arrivals.extend_from_slice(&self.early[i]);
        let mut bound = drain(&mut self.arrivals, self.link);
        if i == self.tasks.len() {
            return bound;
        }
        if let (Some(alone), Some(_)) = (&self.alone[i], self.link) {
            self.arrivals.clone_from(&self.placed);
            self.arrivals.extend_from_slice(alone);
            bound = bound.max(drain(&mut self.arrivals, self.link));
        }
        let by_capacity = capacity_bound(&self.loads, self.speeds, self.suffix_work[i]);
        bound.max(by_capacity + self.least_transfer)
    }
}

#[cfg(test)]
mod tests;
