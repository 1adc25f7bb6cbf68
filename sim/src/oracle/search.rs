//! The search over k for one candidate order of the maps (the module documentation's
//! "Searching over k"): a monotone lower bound narrows the ceiling, then regula falsi with
//! bisection steps, and a guard against heuristics' non-monotone answers.

use super::phase::transfer;
use super::{Eval, MONOTONE_GUARD, Task, by_duration, evaluate, reduce_times};
use crate::job::JobTruth;

/// The search over k for one candidate order of the maps.
pub(super) struct Search<'a> {
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
    pub(super) fn new(
        truth: &'a JobTruth,
        order: &'a [Task],
        speeds: &'a [f64],
        deadline: f64,
    ) -> Self {
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
    pub(super) fn lower_bound(&self, k: usize) -> f64 {
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
    pub(super) fn largest(&mut self, floor: usize) -> usize {
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
