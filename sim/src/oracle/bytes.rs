//! The byte oracle: the most input bytes a schedule of whole maps reads by the deadline
//! ([`byte_max`], exact on few maps, else a proven bound), and the bound itself
//! ([`byte_bound`]: a fractional knapsack over the maps that fit alone).

use std::cmp::Reverse;

use super::phase::transfer;
use super::search::Search;
use super::{KMax, Task, by_duration, evaluate, sorted_speeds};
use crate::job::JobTruth;

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
/// link and reduces as [`k_max`](super::k_max); a schedule reads a set of maps when it completes, reduces
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
