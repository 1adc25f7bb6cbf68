//! When the tasks still running will end, as `dart`'s forecast reads them (the `wave_end`,
//! `fifo_shuffle` and `elapsed_phases` switches of [`super::Extensions`]; `dart/mod.rs` says what
//! each replaces). The paper's estimator (eq. 2) puts the map phase's end one mean map after
//! the last launch; a wave of maps launched together ends with its *longest* map, and a
//! running task's own start and progress say more about its end than the mean does.
//!
//! Each running task is an [`Ending`]: it ends at `from + left·X`, with `X` a mean-one
//! log-normal factor of spread `sigma` (`ln X ~ N(−σ²/2, σ²)`, the spread the simulator and
//! the sample runs give task times), given that it has not ended by `after` (now). From a set
//! of them: the expected latest end ([`expected_latest`], for `T_M` and `T_R`) and the shuffle
//! left once the last one ended when each one's output queues for the job's link, FIFO at its
//! bandwidth ([`fifo_leftover`], for `T_NS`: the simulator's model of the link and the live
//! shuffle's).

use super::Seconds;
use super::estimate::normal_cdf;

/// A running task's end: `from + left·X`, `X` mean-one log-normal of spread `sigma`, given
/// that it has not ended by `after`. `sigma = 0` (or `left = 0`): it ends at `from + left`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ending {
    pub from: Seconds,
    pub left: Seconds,
    pub sigma: f64,
    pub after: Seconds,
}

/// Grid steps of the numerical integrals (even, for Simpson's rule).
const STEPS: usize = 300;

impl Ending {
    fn certain(&self) -> bool {
        self.sigma <= 0.0 || self.left <= 0.0
    }

    /// `P(end ≤ t)`, not conditioned on `after`.
    fn raw_cdf(&self, t: Seconds) -> f64 {
        if t <= self.from {
            return 0.0;
        }
        if self.certain() {
            return if t >= self.from + self.left { 1.0 } else { 0.0 };
        }
        let s = self.sigma;
        normal_cdf((((t - self.from) / self.left).ln() + s * s / 2.0) / s)
    }
}

impl Ending {
    /// Its expected end given that it has not ended by `after`, in closed form (one task's
    /// `expected_latest`): with `ln X ~ N(−σ²/2, σ²)` and `c = (after − from)/left`,
    /// `E[X | X > c] = Φ((σ²/2 − ln c)/σ) / Φ((−σ²/2 − ln c)/σ)`.
    pub fn expected_end(&self) -> Seconds {
        if self.certain() {
            return (self.from + self.left).max(self.after);
        }
        let s = self.sigma;
        let c = (self.after - self.from) / self.left;
        if c <= 0.0 {
            return self.from + self.left; // not started yet: the mean
        }
        let ln_c = c.ln();
        let above = normal_cdf((-s * s / 2.0 - ln_c) / s);
        if above < 1e-12 {
            return self.after; // past any end its law gives a chance: taken to end now
        }
        let x = normal_cdf((s * s / 2.0 - ln_c) / s) / above;
        (self.from + self.left * x).max(self.after)
    }
}

/// Equal endings counted once (a wave launched together shares its start and, per locality
/// and input size, its duration; durations within 0.001 % and times within 1 µs count as
/// equal when they spread), with what the integrals need of each worked out once.
struct Group {
    e: Ending,
    n: f64,
    /// `P(end ≤ after)`, not conditioned.
    below: f64,
    /// Where the end is known: a task without spread, or one already past any end its law
    /// gives it a chance of (it is taken to end now).
    fixed: Option<Seconds>,
    /// Where its end can be: from the later of `from` and `after`, to a point past which the
    /// chance of it, times the tasks' count, is negligible.
    lo: Seconds,
    hi: Seconds,
}

impl Group {
    /// `P(end ≤ t | end > after)`.
    fn cdf(&self, t: Seconds) -> f64 {
        if let Some(end) = self.fixed {
            return if t >= end { 1.0 } else { 0.0 };
        }
        if t <= self.lo {
            return 0.0;
        }
        if t >= self.hi {
            return 1.0;
        }
        ((self.e.raw_cdf(t) - self.below) / (1.0 - self.below)).clamp(0.0, 1.0)
    }
}

fn groups(tasks: &[Ending]) -> Vec<Group> {
    let round = |t: Seconds| (t * 1e6).round() / 1e6;
    let mut sorted: Vec<Ending> = tasks
        .iter()
        .map(|&e| match e.certain() {
            true => e,
            false => Ending {
                from: round(e.from),
                left: ((e.left.ln() * 1e5).round() / 1e5).exp(),
                sigma: (e.sigma * 1e5).round() / 1e5,
                after: round(e.after),
            },
        })
        .collect();
    sorted.sort_by(|a, b| {
        (a.from, a.left, a.sigma, a.after)
            .partial_cmp(&(b.from, b.left, b.sigma, b.after))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut merged: Vec<(Ending, f64)> = Vec::new();
    for t in sorted {
        match merged.last_mut() {
            Some((last, n)) if *last == t => *n += 1.0,
            _ => merged.push((t, 1.0)),
        }
    }
    let z = 6.0 + (2.0 * (tasks.len().max(1) as f64).ln()).sqrt();
    merged
        .into_iter()
        .map(|(e, n)| {
            let below = e.raw_cdf(e.after);
            let fixed = if e.certain() {
                Some((e.from + e.left).max(e.after))
            } else if below >= 1.0 - 1e-9 {
                Some(e.after)
            } else {
                None
            };
            let (lo, hi) = match fixed {
                Some(end) => (end, end),
                None => {
                    let s = e.sigma;
                    let lo = e.from.max(e.after);
                    (lo, lo + e.left * (s * z - s * s / 2.0).exp())
                }
            };
            Group {
                e,
                n,
                below,
                fixed,
                lo,
                hi,
            }
        })
        .collect()
}

/// The expected latest end of `tasks`: `E[max] = b + ∫_b^∞ P(max > t) dt` over the product of
/// their distribution functions, `b` the earliest the latest can be. `None` when there are
/// none.
pub fn expected_latest(tasks: &[Ending]) -> Option<Seconds> {
    let mut fixed = f64::NEG_INFINITY;
    let mut open = Vec::new();
    for g in groups(tasks) {
        match g.fixed {
            Some(end) => fixed = fixed.max(end),
            None => open.push(g),
        }
    }
    if open.is_empty() {
        return fixed.is_finite().then_some(fixed);
    }
    let base = fixed.max(open.iter().map(|g| g.lo).fold(f64::INFINITY, f64::min));
    let hi = open.iter().map(|g| g.hi).fold(base, f64::max);
    if hi <= base {
        return Some(base);
    }
    let above = |t: Seconds| {
        let mut log_all = 0.0;
        for g in &open {
            if t >= g.hi {
                continue;
            }
            let p = g.cdf(t);
            if p <= 0.0 {
                return 1.0;
            }
            log_all += g.n * p.ln();
            if log_all < -40.0 {
                return 1.0;
            }
        }
        1.0 - log_all.exp()
    };
    let h = (hi - base) / STEPS as f64;
    let inner: f64 = (1..STEPS)
        .map(|i| {
            let w = if i % 2 == 1 { 4.0 } else { 2.0 };
            w * above(base + h * i as f64)
        })
        .sum();
    Some(base + (above(base) + inner + above(hi)) * h / 3.0)
}

/// The shuffle left after the last of `tasks` ends, each putting `output` bytes (their mean
/// is used: which task ends when is not known) on a link that moves `bandwidth` bytes a
/// second first come, first served, with `queued` bytes already waiting at `now`. The tasks
/// end, in order, at the quantiles `(j − ½)/N` of the mixture of their distributions (the
/// expected order statistics, near enough); the link then drains as the simulator's does.
/// `None` when no task runs.
pub fn fifo_leftover(
    tasks: &[(Ending, f64)],
    now: Seconds,
    queued: f64,
    bandwidth: f64,
) -> Option<Seconds> {
    if tasks.is_empty() || bandwidth <= 0.0 {
        return None;
    }
    let endings: Vec<Ending> = tasks.iter().map(|t| t.0).collect();
    let output = tasks.iter().map(|t| t.1).sum::<f64>() / tasks.len() as f64;
    let groups = groups(&endings);
    let n: f64 = groups.iter().map(|g| g.n).sum();
    let (lo, hi) = groups
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), g| {
            (lo.min(g.lo), hi.max(g.hi))
        });
    // The mixture's distribution on a grid, as (t, share of tasks ended by t).
    let h = (hi - lo) / STEPS as f64;
    let grid: Vec<(Seconds, f64)> = (0..=STEPS)
        .map(|i| {
            let t = if i == STEPS { hi } else { lo + h * i as f64 };
            let ended: f64 = groups.iter().map(|g| g.n * g.cdf(t)).sum();
            (t, ended / n)
        })
        .collect();
    let count = tasks.len();
    let mut free = now + queued.max(0.0) / bandwidth;
    let mut last = lo;
    let mut at = 0;
    for j in 0..count {
        let q = (j as f64 + 0.5) / count as f64;
        while at + 1 < grid.len() && grid[at + 1].1 < q {
            at += 1;
        }
        let end = match grid.get(at + 1) {
            _ if h <= 0.0 => lo,
            Some(&(t1, p1)) if p1 > grid[at].1 => {
                let (t0, p0) = grid[at];
                t0 + (t1 - t0) * ((q - p0) / (p1 - p0)).clamp(0.0, 1.0)
            }
            Some(&(t1, _)) => t1,
            None => hi,
        };
        last = last.max(end);
        free = free.max(end) + output / bandwidth;
    }
    Some((free - last).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::estimate::expected_max_lognormal;

    fn wave(n: usize, sigma: f64) -> Vec<Ending> {
        vec![
            Ending {
                from: 0.0,
                left: 10.0,
                sigma,
                after: 0.0,
            };
            n
        ]
    }

    #[test]
    fn a_wave_ends_with_its_longest_task() {
        // 20 maps of mean 10 s, σ 0.3: the last ends at 10·E[max of 20 draws of exp(σZ)]·e^(−σ²/2).
        let latest = expected_latest(&wave(20, 0.3)).unwrap();
        let want = 10.0 * expected_max_lognormal(0.3, 20) * (-0.045f64).exp();
        assert!((latest - want).abs() < 0.01 * want, "{latest} vs {want}");
        assert!(latest > 14.0, "well past the mean: {latest}");
        // One task: its mean; no spread: its end.
        assert!((expected_latest(&wave(1, 0.3)).unwrap() - 10.0).abs() < 0.01);
        assert_eq!(expected_latest(&wave(5, 0.0)), Some(10.0));
        assert_eq!(expected_latest(&[]), None);
    }

    #[test]
    fn a_task_known_to_end_late_sets_the_end() {
        let mut tasks = wave(3, 0.3);
        tasks.push(Ending {
            from: 0.0,
            left: 40.0,
            sigma: 0.0,
            after: 0.0,
        });
        assert!((expected_latest(&tasks).unwrap() - 40.0).abs() < 1e-3);
        // A task that has run 12 s of a 10 s mean has its end after 12.
        let late = Ending {
            from: 0.0,
            left: 10.0,
            sigma: 0.3,
            after: 12.0,
        };
        assert!(expected_latest(&[late]).unwrap() > 12.0);
    }

    #[test]
    fn one_tasks_expected_end_in_closed_form_is_the_quadratures() {
        for (after, sigma) in [(0.0, 0.3), (5.0, 0.3), (12.0, 0.3), (20.0, 0.8), (3.0, 0.0)] {
            let e = Ending {
                from: 1.0,
                left: 10.0,
                sigma,
                after,
            };
            let (closed, numeric) = (e.expected_end(), expected_latest(&[e]).unwrap());
            assert!(
                (closed - numeric).abs() < 1e-3 * numeric,
                "{e:?}: {closed} vs {numeric}"
            );
        }
        // Far past any end its law allows: it ends now.
        let e = Ending {
            from: 0.0,
            left: 1.0,
            sigma: 0.1,
            after: 100.0,
        };
        assert_eq!(e.expected_end(), 100.0);
    }

    #[test]
    fn the_link_left_after_the_maps_is_the_last_output_when_it_keeps_up() {
        // 10 maps around 10 s, 1 B each on a 10 B/s link: each output crosses in 0.1 s, far
        // less than the gaps between ends: the last output alone is left.
        let tasks: Vec<(Ending, f64)> = wave(10, 0.3).into_iter().map(|e| (e, 1.0)).collect();
        let left = fifo_leftover(&tasks, 0.0, 0.0, 10.0).unwrap();
        assert!((left - 0.1).abs() < 1e-6, "{left}");
        // A slow link (0.1 B/s): the outputs queue; most of the 100 s they need is left after.
        let left = fifo_leftover(&tasks, 0.0, 0.0, 0.1).unwrap();
        assert!(left > 90.0 && left < 100.0, "{left}");
        // Bytes already queued are ahead of them.
        let more = fifo_leftover(&tasks, 0.0, 2.0, 0.1).unwrap();
        assert!(more > left + 10.0, "{more} vs {left}");
        assert_eq!(fifo_leftover(&[], 0.0, 5.0, 1.0), None);
    }
}
