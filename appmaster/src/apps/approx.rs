//! The approximate answer: totals estimated from the blocks (maps) a job had time to read.
//!
//! # The estimator
//!
//! A job's input is `N` blocks (one per map) of `x_i` bytes, `X = Σx_i` bytes in all; both are
//! known before anything runs. A deadline-bound job reads `k` of them. For any total
//! `Y = Σy_i` — all words, one word's count, the matching lines, one key's count — we treat
//! the blocks read as a **simple random sample without replacement** of the `N` blocks and use
//! the block bytes as the auxiliary variable of the ratio estimator (W. G. Cochran, *Sampling
//! Techniques*, 3rd ed., Wiley 1977, ch. 6: the ratio estimate, its approximate variance, and
//! that variance estimated from the sample):
//!
//! ```text
//! R̂ = Σy / Σx                      (sums over the k blocks read)
//! Ŷ = R̂ · X                        ("scale by the fraction of bytes read")
//! s_e² = Σ(y_i − R̂x_i)² / (k − 1)
//!      = (Σy² − 2R̂·Σxy + R̂²·Σx²) / (k − 1)
//! V̂(Ŷ) = N² · (1 − k/N) / k · s_e²
//! 95 % interval: Ŷ ± t(0.975, k − 1) · √V̂, the lower end raised to Σy
//! ```
//!
//! Everything comes from six sums — `k, Σx, Σx², Σy, Σxy, Σy²` ([`Sums`]) — so a reducer
//! keeps three numbers per key (`Σy, Σxy, Σy²`; `k, Σx, Σx²` are the reducer's, shared by its
//! keys) instead of the samples. A key absent from a block has `y_i = 0` there, which adds
//! nothing to any sum: absence costs no bookkeeping.
//!
//! The special cases:
//! - `k = N` (every block read): the observed total is the answer, interval of zero width.
//! - `k = 1`: no variance estimate. The estimate stands, `low` = observed, `high` = `None`
//!   (unbounded); answers say so in their notes.
//! - `k = 0`: nothing observed; the estimate is `None` (`low` = 0, `high` = `None`).
//! - `Σx = 0` (every block read is empty, e.g. `N` blocks of a 0-byte input): the ratio is
//!   undefined, so the mean-per-block estimator `Ŷ = N·ȳ`, `V̂ = N²(1 − k/N)/k · s_y²`
//!   (Cochran ch. 2) stands in.
//! - The estimate is never below the observed `Σy`, and neither is `low`: the true total
//!   cannot be smaller than what was seen.
//!
//! `t(0.975, df)` comes from the usual table for df 1–30 and, beyond, from the Cornish–Fisher
//! expansion of Student's t about the normal quantile 1.96 (within 10⁻⁴ of the exact value).
//!
//! # Assumptions, and when they fail
//!
//! - **Blocks are exchangeable**: which blocks get read is unrelated to their contents. Dart
//!   reads blocks in locality order and drops stragglers, not by content, and the reduce side
//!   samples whole partitions uniformly (`sample_partitions`), so this holds unless the input
//!   is *ordered by the quantity measured* (a log sorted by error level, a file grouped by
//!   key): then the blocks read are not representative and the interval is wrong, not wide.
//! - **y is roughly proportional to x** within a block (words per byte steady). The ratio
//!   estimator is biased by O(1/k) (Cochran ch. 6); with a few tens of blocks the bias is small
//!   next to the standard error, and the interval's coverage is close to nominal (the crate's
//!   coverage test asserts 93–97 % for 15 of 60 blocks over 2,000 samples: 0.949).
//! - The variance is the usual large-sample approximation; for rare keys (seen in one or two
//!   blocks) the interval is only indicative.
//!
//! # A worked example (the unit tests check these numbers)
//!
//! `N = 10` blocks, `X = 1000` bytes; `k = 4` blocks read with `x = 100, 80, 120, 100` and
//! `y = 10, 9, 11, 12`:
//!
//! ```text
//! Σx = 400, Σy = 42, R̂ = 0.105, Ŷ = 0.105 · 1000 = 105
//! residuals y − R̂x = −0.5, 0.6, −1.6, 1.5;  Σe² = 5.42;  s_e² = 5.42 / 3 = 1.80667
//! V̂ = 10² · (1 − 0.4) / 4 · 1.80667 = 27.1;  √V̂ = 5.20577
//! t(0.975, 3) = 3.182;  half-width = 16.5648;  interval [88.435, 121.565]
//! ```

use serde::{Deserialize, Serialize};

use super::Population;

/// An estimated total: the JSON shape every answer uses for a count
/// (`{"estimate", "low", "high", "observed"}`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// `Ŷ`, or `None` when nothing was read.
    pub estimate: Option<f64>,
    /// The interval's lower end, never below `observed`.
    pub low: Option<f64>,
    /// The interval's upper end; `None` when unbounded (fewer than two blocks read).
    pub high: Option<f64>,
    /// `Σy`: what the blocks read actually contained.
    pub observed: u64,
    /// `√V̂`, the estimate's standard error: 0 when exact, `None` when it cannot be estimated
    /// (fewer than two blocks read). Checks at other confidence levels start from it.
    #[serde(rename = "stdError", default)]
    pub std_error: Option<f64>,
}

impl Estimate {
    /// Every block was read: `observed` is the answer.
    pub fn exact(observed: u64) -> Estimate {
        let v = observed as f64;
        Estimate {
            estimate: Some(v),
            low: Some(v),
            high: Some(v),
            observed,
            std_error: Some(0.0),
        }
    }
}

/// The six running sums over the blocks read, enough for [`Sums::estimate`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sums {
    /// Blocks read.
    pub k: u32,
    /// `Σx`: their bytes.
    pub x: f64,
    /// `Σx²`.
    pub x2: f64,
    /// `Σy`: the quantity observed in them.
    pub y: u64,
    /// `Σxy`.
    pub xy: f64,
    /// `Σy²`.
    pub y2: f64,
}

impl Sums {
    /// Adds one block of `x` bytes in which the quantity was `y`.
    pub fn add(&mut self, x: u64, y: u64) {
        let (xf, yf) = (x as f64, y as f64);
        self.k += 1;
        self.x += xf;
        self.x2 += xf * xf;
        self.y = self.y.saturating_add(y);
        self.xy += xf * yf;
        self.y2 += yf * yf;
    }

    /// The 95 % ratio estimate of the population total (see the module documentation).
    pub fn estimate(&self, population: Population) -> Estimate {
        let observed = self.y;
        let obs = observed as f64;
        if self.k >= population.maps {
            return Estimate::exact(observed);
        }
        if self.k == 0 {
            return Estimate {
                estimate: None,
                low: Some(0.0),
                high: None,
                observed,
                std_error: None,
            };
        }
        let (estimate, variance) = ratio(
            [f64::from(self.k), self.x, self.x2, obs, self.xy, self.y2],
            population,
        );
        // A population the caller got wrong (X < Σx) could push the estimate below what was
        // seen; counts cannot be below it.
        let estimate = estimate.max(obs);
        let Some(variance) = variance else {
            return Estimate {
                estimate: Some(estimate),
                low: Some(obs),
                high: None,
                observed,
                std_error: None,
            };
        };
        let half = t975(self.k - 1) * variance.sqrt();
        Estimate {
            estimate: Some(estimate),
            low: Some((estimate - half).max(obs)),
            high: Some(estimate + half),
            observed,
            std_error: Some(variance.sqrt()),
        }
    }
}

/// The ratio estimate `Ŷ` and its variance `V̂` (`None` for one block) from the six sums
/// `[k, Σx, Σx², Σy, Σxy, Σy²]` over `0 < k < N` blocks, for any real `y` (the module
/// documentation's formulas; the mean-per-block estimator when `Σx = 0`). Callers add the
/// interval and any floor of their own: [`Sums::estimate`] for counts, the aggregate
/// reducer's sums for values of either sign.
pub(crate) fn ratio(sums: [f64; 6], population: Population) -> (f64, Option<f64>) {
    let [k, x, x2, y, xy, y2] = sums;
    let n = f64::from(population.maps);
    let (estimate, sse) = if x > 0.0 {
        let r = y / x;
        (r * population.bytes as f64, y2 - 2.0 * r * xy + r * r * x2)
    } else {
        (n * y / k, y2 - y * y / k)
    };
    if k < 2.0 {
        return (estimate, None);
    }
    // Rounding can push a zero residual sum slightly negative.
    let variance = n * n * (1.0 - k / n) / k * (sse.max(0.0) / (k - 1.0));
    (estimate, Some(variance))
}

/// The stratified ratio estimate `Ŷ` and, for two blocks or more, its variance `V̂` and the
/// interval's degrees of freedom, from the blocks read as `(position, x, y)` sorted by
/// position (each block once, `0 < k < N`): `apps::aggregate`'s module documentation, "The
/// stratified estimator", derives it. Each block read stands for its cell, the blocks nearer
/// to it than to any other block read; the cells' sizes `w_j` weigh the combined ratio
/// estimator (Cochran 1977 §6.11), `Ŷ = (Σw·y / Σw·x)·X`; each cell's variance is estimated
/// from its read neighbours' successive differences (one unit a stratum: Cochran §5A.12,
/// collapsed strata), `V̂ = Σ w_j(w_j − 1)·s_j²`; the degrees of freedom are Satterthwaite's
/// (Cochran §5.4). With `Σx = 0` the expansion estimator `Σ w·y` stands in.
pub(crate) fn stratified(
    blocks: &[(u32, f64, f64)],
    population: Population,
) -> (f64, Option<(f64, u32)>) {
    let k = blocks.len();
    // A position past N (a population the caller got wrong) still gets a cell of its own.
    let last = blocks.last().map_or(0.0, |b| f64::from(b.0) + 1.0);
    let n = f64::from(population.maps).max(last);
    // The cell of block j runs from midway after its predecessor to midway before its
    // successor (the first from 0, the last to N): each holds its block, sizes sum to N.
    let edge = |j: usize| -> f64 {
        match j {
            0 => 0.0,
            _ if j == k => n,
            _ => f64::from(blocks[j - 1].0 + blocks[j].0 + 1) / 2.0,
        }
    };
    let w: Vec<f64> = (0..k).map(|j| edge(j + 1) - edge(j)).collect();
    let wx: f64 = blocks.iter().zip(&w).map(|(b, w)| w * b.1).sum();
    let wy: f64 = blocks.iter().zip(&w).map(|(b, w)| w * b.2).sum();
    let (estimate, r) = if wx > 0.0 {
        let r = wy / wx;
        (r * population.bytes as f64, r)
    } else {
        (wy, 0.0)
    };
    if k < 2 {
        return (estimate, None);
    }
    let e: Vec<f64> = blocks.iter().map(|&(_, x, y)| y - r * x).collect();
    let (mut variance, mut squares) = (0.0, 0.0);
    for j in 0..k {
        let before = (j > 0).then(|| (e[j] - e[j - 1]).powi(2) / 2.0);
        let after = (j + 1 < k).then(|| (e[j] - e[j + 1]).powi(2) / 2.0);
        let s2 = match (before, after) {
            (Some(a), Some(b)) => (a + b) / 2.0,
            (a, b) => a.or(b).unwrap_or(0.0),
        };
        let c = w[j] * (w[j] - 1.0).max(0.0) * s2;
        variance += c;
        squares += c * c;
    }
    // Satterthwaite's effective degrees of freedom, one a cell's estimate (its differences).
    let df = if squares > 0.0 {
        (variance * variance / squares)
            .floor()
            .clamp(1.0, (k - 1) as f64) as u32
    } else {
        (k - 1) as u32
    };
    (estimate, Some((variance, df)))
}

/// Student's t, 0.975 quantile, for df 1–30.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// `t(0.975, df)`: the table up to 30, then the Cornish–Fisher expansion about z = 1.96
/// (Abramowitz & Stegun 26.7.5), which is within 10⁻⁴ there and better beyond.
pub fn t975(df: u32) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df as usize - 1],
        _ => {
            let z: f64 = 1.959_963_984_540_054;
            let v = f64::from(df);
            let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
            z + (z3 + z) / (4.0 * v)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(blocks: &[(u64, u64)]) -> Sums {
        let mut s = Sums::default();
        for &(x, y) in blocks {
            s.add(x, y);
        }
        s
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    const TEN: Population = Population {
        maps: 10,
        bytes: 1000,
    };

    #[test]
    fn four_of_ten_matches_the_worked_example() {
        let e = sums(&[(100, 10), (80, 9), (120, 11), (100, 12)]).estimate(TEN);
        assert_eq!(e.observed, 42);
        let est = e.estimate.unwrap();
        assert!(close(est, 105.0, 1e-9), "{e:?}");
        let half = 3.182 * 27.1_f64.sqrt();
        assert!(close(e.low.unwrap(), 105.0 - half, 1e-9), "{e:?}");
        assert!(close(e.high.unwrap(), 105.0 + half, 1e-9), "{e:?}");
        assert!(close(e.low.unwrap(), 88.435, 1e-3), "{e:?}");
        assert!(close(e.high.unwrap(), 121.565, 1e-3), "{e:?}");
    }

    #[test]
    fn the_lower_end_is_raised_to_what_was_seen() {
        // R̂ = 0.25, Ŷ = 250, s_e² = 1250, V̂ = 100·0.8/2·1250 = 50000, t₁ = 12.706.
        let e = sums(&[(100, 0), (100, 50)]).estimate(TEN);
        assert!(close(e.estimate.unwrap(), 250.0, 1e-9));
        assert_eq!(e.low, Some(50.0));
        assert!(close(
            e.high.unwrap(),
            250.0 + 12.706 * 50_000_f64.sqrt(),
            1e-6
        ));
    }

    #[test]
    fn all_blocks_read_is_exact() {
        let blocks: Vec<(u64, u64)> = (0..10).map(|i| (100, i * 3)).collect();
        let e = sums(&blocks).estimate(TEN);
        assert_eq!(e, Estimate::exact(135));
        assert_eq!((e.low, e.high), (Some(135.0), Some(135.0)));
    }

    #[test]
    fn one_block_has_no_upper_bound() {
        let e = sums(&[(200, 30)]).estimate(TEN);
        assert_eq!(
            e,
            Estimate {
                estimate: Some(150.0),
                low: Some(30.0),
                high: None,
                observed: 30,
                std_error: None,
            }
        );
    }

    #[test]
    fn no_block_has_no_estimate() {
        let e = Sums::default().estimate(TEN);
        assert_eq!(e.estimate, None);
        assert_eq!(e.high, None);
        assert_eq!(e.observed, 0);
    }

    #[test]
    fn an_empty_job_is_exactly_zero() {
        let e = Sums::default().estimate(Population { maps: 0, bytes: 0 });
        assert_eq!(e, Estimate::exact(0));
    }

    #[test]
    fn empty_blocks_fall_back_to_the_mean_per_block() {
        // Ŷ = 10·(2+4)/2 = 30; s_y² = 2; V̂ = 100·0.8/2·2 = 80.
        let e = sums(&[(0, 2), (0, 4)]).estimate(Population { maps: 10, bytes: 0 });
        assert!(close(e.estimate.unwrap(), 30.0, 1e-9));
        assert!(close(e.high.unwrap(), 30.0 + 12.706 * 80_f64.sqrt(), 1e-9));
    }

    #[test]
    fn proportional_blocks_have_a_zero_width_interval() {
        let e = sums(&[(100, 10), (200, 20), (300, 30)]).estimate(TEN);
        assert!(close(e.estimate.unwrap(), 100.0, 1e-9));
        // Zero up to the rounding of Σy² − 2R̂Σxy + R̂²Σx².
        assert!(e.high.unwrap() - e.low.unwrap() < 1e-4, "{e:?}");
    }

    #[test]
    fn t_quantiles_join_the_table_smoothly() {
        assert_eq!(t975(3), 3.182);
        assert!(close(t975(31), 2.0395, 2e-4), "{}", t975(31));
        assert!(close(t975(60), 2.0003, 2e-4), "{}", t975(60));
        assert!(close(t975(120), 1.9799, 2e-4), "{}", t975(120));
        assert!((30..200).all(|d| t975(d + 1) < t975(d)));
    }
}
