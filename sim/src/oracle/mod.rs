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

//!
//! # Where
//! This file holds the public answers ([`completion`], [`k_max`], [`mdt`]) and the job's two
//! phases ([`evaluate`]); `phase.rs` schedules one phase (one wave, LPT, SPT, the shuffle
//! link), `exact.rs` its branch and bound, `search.rs` the search over k, and `bytes.rs` the
//! byte oracle ([`byte_max`], [`byte_bound`]).

mod bytes;
mod exact;
mod phase;
mod search;

use std::cmp::Ordering;

use crate::job::JobTruth;
pub use bytes::{ByteMax, byte_bound, byte_max};
use phase::phase;
use search::Search;

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

#[cfg(test)]
mod tests;
