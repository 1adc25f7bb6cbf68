//! The reduce-noise floor of the estimation error at map close (issue 29): the best point
//! estimate of a job's completion that knows everything the simulator knows when the map
//! phase closed — every map's true end, the shuffle, each reduce's input, its law `f(d)` and
//! the node it runs on — except the reduces' own noise draws `e_r` (Dart eq. 9, `f(d)·e`).
//! No estimate made at map close can know those draws, so the floor's error
//! `|T − T̂_floor| / T` is what is left of any such estimate's error on this model.
//!
//! How it is computed, per run of a job (a measurement for the report, never seen by a
//! policy): the engine records every reduce attempt that ran its whole input to the end —
//! when it got its input, how long it took, and its noise factor. The reduce phase is then
//! replayed [`DRAWS`] times with each of those reduces' factors redrawn from the job's own
//! noise law (`LN(−σ²/2, σ)`, or the Pareto of the same spread under `--durations pareto`),
//! each reduce's time scaled by `e'_r / e_r`, in the same waves ([`replay`]); each replay
//! moves the job's true completion by as much as it moves the reduce phase's end. The
//! median of those completions (what minimises the expected absolute error) is the floor
//! estimate. Everything else keeps its true time: the maps, the shuffle, failed attempts, and
//! reduces the guard cut (their end is the guard's, not their noise's).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use yard_appmaster::policy::{Rng, Seconds};

use crate::config::TaskLaw;

/// Redraws of the reduces' noise per job run: enough that the median's own sampling error
/// (about `1.25·sd/√DRAWS`, a fifth of one reduce's spread) stays well under the figure.
pub(crate) const DRAWS: usize = 64;

/// A reduce attempt that ran its whole input: when it got its input, its true seconds, and
/// the noise factor those seconds carry (`JobTruth::reduce_noise`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RanReduce {
    pub start: Seconds,
    pub seconds: Seconds,
    pub noise: f64,
}

/// How a reduce phase ran: its heads (reduces that did not wait for another reduce's
/// container) and, in the order they started, the reduces that took over a container a
/// reduce had just given back, with how long after that end they started.
struct Waves<'a> {
    reduces: &'a [RanReduce],
    heads: Vec<usize>,
    waiting: Vec<(usize, Seconds)>,
}

impl<'a> Waves<'a> {
    /// `reduces` sorted by start. A reduce that started within `lag` of an earlier one's end
    /// (the latest such end not yet taken) waited for that reduce's container: one wave on.
    fn of(reduces: &'a [RanReduce], lag: Seconds) -> Waves<'a> {
        let mut ends: Vec<(Seconds, usize)> = reduces
            .iter()
            .enumerate()
            .map(|(i, r)| (r.start + r.seconds, i))
            .collect();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut taken = vec![false; reduces.len()];
        let (mut heads, mut waiting) = (Vec::new(), Vec::new());
        for (i, r) in reduces.iter().enumerate() {
            // The latest untaken end at or before this start, within `lag` of it.
            let upto = ends.partition_point(|&(e, _)| e <= r.start);
            let before = ends[..upto]
                .iter()
                .rev()
                .take_while(|&&(e, _)| r.start - e <= lag)
                .find(|&&(_, j)| !taken[j] && reduces[j].start < r.start);
            match before {
                Some(&(e, j)) => {
                    taken[j] = true;
                    waiting.push((i, r.start - e));
                }
                None => heads.push(i),
            }
        }
        Waves {
            reduces,
            heads,
            waiting,
        }
    }

    /// The end of the reduce phase when reduce `i` takes `seconds(i)`: the heads start when
    /// they did; each waiting reduce, in the order they started, takes the container that
    /// frees first and starts its lag after that. With the true seconds this is the true end.
    fn end(
        &self,
        seconds: &dyn Fn(usize) -> Seconds,
        free: &mut BinaryHeap<Reverse<u64>>,
    ) -> Seconds {
        let mut last = f64::NEG_INFINITY;
        free.clear();
        for &h in &self.heads {
            let end = self.reduces[h].start + seconds(h);
            last = last.max(end);
            if !self.waiting.is_empty() {
                free.push(Reverse(end.to_bits()));
            }
        }
        for &(i, lag) in &self.waiting {
            // Ends are non-negative, so their bits order as they do.
            let at = free
                .pop()
                .map_or(self.reduces[i].start, |Reverse(b)| f64::from_bits(b) + lag);
            let end = at + seconds(i);
            last = last.max(end);
            free.push(Reverse(end.to_bits()));
        }
        last
    }
}

/// The reduce phase's end under redrawn noise minus its end under the true noise: each reduce
/// takes `seconds · e' / e`. Exposed for tests.
pub fn replay(reduces: &[RanReduce], lag: Seconds, redrawn: &[f64]) -> Seconds {
    let mut sorted: Vec<(RanReduce, f64)> = reduces
        .iter()
        .copied()
        .zip(redrawn.iter().copied())
        .collect();
    sorted.sort_by(|a, b| a.0.start.total_cmp(&b.0.start));
    let (ran, e): (Vec<RanReduce>, Vec<f64>) = sorted.into_iter().unzip();
    let waves = Waves::of(&ran, lag);
    let mut heap = BinaryHeap::new();
    let truth = waves.end(&|i| ran[i].seconds, &mut heap);
    waves.end(&|i| scaled(&ran[i], e[i]), &mut heap) - truth
}

/// A reduce's seconds with its noise factor `e` in place of its own.
fn scaled(r: &RanReduce, e: f64) -> Seconds {
    match r.noise > 0.0 {
        true => r.seconds / r.noise * e,
        // No noise to take out (a zero recorded time): it keeps its time.
        false => r.seconds,
    }
}

/// The floor estimate of a job run that finished at `completion`, from the reduces that ran
/// whole (`reduces`, any order), redrawn from the job's noise law (`sigma`, `law`) with an RNG
/// seeded from `seed`; `lag` is how long after a reduce's end another may start and still be
/// taken to have waited for its container. Without such reduces, the completion itself.
pub fn estimate(
    completion: Seconds,
    reduces: &[RanReduce],
    sigma: f64,
    law: TaskLaw,
    lag: Seconds,
    seed: u64,
) -> Seconds {
    if reduces.is_empty() || !completion.is_finite() {
        return completion;
    }
    let mut ran = reduces.to_vec();
    ran.sort_by(|a, b| a.start.total_cmp(&b.start));
    let waves = Waves::of(&ran, lag);
    let mut heap = BinaryHeap::new();
    let truth = waves.end(&|i| ran[i].seconds, &mut heap);
    let mut rng = Rng::seed_from_u64(seed);
    let mut e = vec![1.0; ran.len()];
    let mut ends: Vec<Seconds> = (0..DRAWS)
        .map(|_| {
            for x in e.iter_mut() {
                *x = crate::workloads::redraw_noise(&mut rng, sigma, law);
            }
            let end = waves.end(&|i| scaled(&ran[i], e[i]), &mut heap);
            completion + (end - truth)
        })
        .collect();
    ends.sort_by(f64::total_cmp);
    (ends[DRAWS / 2 - 1] + ends[DRAWS / 2]) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: f64, seconds: f64) -> RanReduce {
        RanReduce {
            start,
            seconds,
            noise: 1.0,
        }
    }

    #[test]
    fn one_wave_moves_with_its_longest_reduce() {
        let ran = [r(10.0, 5.0), r(10.0, 8.0)];
        assert_eq!(replay(&ran, 1.0, &[1.0, 1.0]), 0.0);
        // The second now takes 4 s, the first 10 s: the phase ends at 20 instead of 18.
        assert!((replay(&ran, 1.0, &[2.0, 0.5]) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_second_wave_starts_when_the_first_container_frees() {
        // Two containers: A (0–4) and B (0–10); C took A's container at 4.5 and ran 3 s.
        let ran = [r(0.0, 4.0), r(0.0, 10.0), r(4.5, 3.0)];
        assert_eq!(replay(&ran, 1.0, &[1.0, 1.0, 1.0]), 0.0);
        // A takes 12 s: B's container frees first (10), C starts at 10.5 and ends at 13.5.
        assert!((replay(&ran, 1.0, &[3.0, 1.0, 1.0]) - 3.5).abs() < 1e-12);
        // Started long after any end (no lag within 1 s): C is a head, kept where it was.
        let late = [r(0.0, 4.0), r(0.0, 10.0), r(7.0, 3.0)];
        assert_eq!(replay(&late, 1.0, &[3.0, 1.0, 1.0]), 2.0);
    }

    #[test]
    fn no_noise_no_floor_and_a_seed_gives_one_answer() {
        let ran = [r(3.0, 20.0), r(3.0, 25.0), r(28.5, 10.0)];
        let law = TaskLaw::LogNormal;
        assert_eq!(estimate(40.0, &ran, 0.0, law, 1.0, 7), 40.0);
        let a = estimate(40.0, &ran, 0.3, law, 1.0, 7);
        assert_eq!(a, estimate(40.0, &ran, 0.3, law, 1.0, 7));
        assert_ne!(a, 40.0);
        assert_eq!(estimate(40.0, &[], 0.3, law, 1.0, 7), 40.0);
    }
}
