//! The dice: mean-one log-normal noise, map duration laws, HDFS replica placement, Zipf
//! shares and exact byte splits.

use rand::RngExt;
use rand_distr::StandardNormal;
use yard_appmaster::policy::{Rng, Seconds};

use super::{LogNormalMs, WorkloadOptions};
use crate::config::TaskLaw;

/// A mean-one log-normal factor, LN(−σ²/2, σ): it spreads a value without moving its mean.
/// It always takes one draw, so changing σ leaves every other draw of the run where it was.
pub(super) fn noise(rng: &mut Rng, sigma: f64) -> f64 {
    let z: f64 = rng.sample(StandardNormal);
    (sigma * z - sigma * sigma / 2.0).exp()
}

/// A mean-one factor that spreads a task's duration, from `law` at the spread of a
/// log-normal of σ `sigma`: the log-normal itself ([`noise`]), or the Pareto with its mean
/// (1) and coefficient of variation `CV = √(e^{σ²} − 1)`: shape `α = 1 + √(1 + 1/CV²)`,
/// scale `(α − 1)/α`. One draw either way.
pub(super) fn spread(rng: &mut Rng, sigma: f64, law: TaskLaw) -> f64 {
    match law {
        TaskLaw::LogNormal => noise(rng, sigma),
        TaskLaw::Pareto => {
            let u: f64 = rng.random();
            let cv2 = (sigma * sigma).exp_m1();
            if cv2 <= 0.0 {
                return 1.0;
            }
            let alpha = 1.0 + (1.0 + 1.0 / cv2).sqrt();
            // 1 − u is in (0, 1]: the floor itself at most.
            (alpha - 1.0) / alpha * (1.0 - u).powf(-1.0 / alpha)
        }
    }
}

/// One draw from a log-normal of milliseconds, in seconds.
pub(super) fn seconds(rng: &mut Rng, ln: LogNormalMs) -> Seconds {
    let z: f64 = rng.sample(StandardNormal);
    (ln.mu + ln.sigma * z).exp() / 1000.0
}

/// A uniform draw from `[lo, hi]` (either order); `lo` itself when the ends are equal.
pub(super) fn uniform(rng: &mut Rng, (lo, hi): (f64, f64)) -> f64 {
    let u: f64 = rng.random();
    lo + (hi - lo) * u
}

/// How a job's maps are drawn: `mean × LN(−σ²/2, σ)`, times the split's share of a full block
/// when `per_block` (maps of a trace that only knows bytes: a tail block is a short map).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MapLaw {
    /// Mean seconds of a full-block map (of every map, when not `per_block`).
    pub mean: Seconds,
    pub sigma: f64,
    pub per_block: bool,
}

impl MapLaw {
    /// SWIM: the job's mean map time is one draw from ARIA's fit; tasks spread by
    /// `task_spread` around it, scaled by their input.
    pub fn per_job(rng: &mut Rng, o: &WorkloadOptions) -> MapLaw {
        MapLaw {
            mean: seconds(rng, super::ARIA_MAP_MS),
            sigma: o.task_spread,
            per_block: true,
        }
    }

    /// A log-normal through recorded durations: their mean, and the spread of their logs
    /// (`fallback_sigma` with fewer than two).
    pub fn fitted(recorded: &[Seconds], fallback_sigma: f64) -> Option<MapLaw> {
        let n = recorded.len() as f64;
        let mean = recorded.iter().sum::<f64>() / n;
        if recorded.is_empty() {
            return None;
        }
        let logs: Vec<f64> = recorded.iter().map(|t| t.ln()).collect();
        let sigma = spread_of_logs(&logs).unwrap_or(fallback_sigma);
        Some(MapLaw {
            mean,
            sigma,
            per_block: false,
        })
    }

    /// One map's duration; `input` is `None` when unrecorded (a full block is assumed).
    pub fn draw(&self, input: Option<u64>, rng: &mut Rng, o: &WorkloadOptions) -> Seconds {
        self.mean * spread(rng, self.sigma, o.durations) * self.scale(input, o)
    }

    /// The share of a full block's time a map of `input` bytes takes under this law.
    pub fn scale(&self, input: Option<u64>, o: &WorkloadOptions) -> f64 {
        match input {
            Some(bytes) if self.per_block => {
                (bytes as f64 / o.block_bytes.max(1) as f64).max(o.min_map_fraction)
            }
            _ => 1.0,
        }
    }
}

/// The sample standard deviation of `logs` (a log-normal's σ); `None` with fewer than two.
pub(super) fn spread_of_logs(logs: &[f64]) -> Option<f64> {
    let n = logs.len();
    (n >= 2).then(|| {
        let mean = logs.iter().sum::<f64>() / n as f64;
        (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    })
}

/// Where HDFS's default policy puts a block's replicas: the first on a random node (the
/// writer's), the second on a node of another rack, the third on another node of the
/// second's rack, any more anywhere; all distinct. With one rack, any distinct nodes.
/// Racks are consecutive ranges of `nodes_per_rack` nodes.
pub(super) fn hdfs_replicas(rng: &mut Rng, o: &WorkloadOptions) -> Vec<u32> {
    let nodes = o.nodes.max(1);
    let per_rack = o.nodes_per_rack.clamp(1, nodes);
    let rack = |n: u32| {
        let start = n / per_rack * per_rack;
        (start, (start + per_rack).min(nodes))
    };
    let copies = o.replication.min(nodes) as usize;
    let mut chosen: Vec<u32> = Vec::with_capacity(copies);
    while chosen.len() < copies {
        let node = match chosen.len() {
            0 => None,
            1 => off_range(rng, nodes, rack(chosen[0])),
            2 => free_in(rng, rack(chosen[1]), &chosen),
            _ => None,
        }
        .unwrap_or_else(|| free_in(rng, (0, nodes), &chosen).expect("copies ≤ nodes"));
        chosen.push(node);
    }
    chosen
}

/// A uniform node of `0..nodes` outside `start..end`, if there is one.
fn off_range(rng: &mut Rng, nodes: u32, (start, end): (u32, u32)) -> Option<u32> {
    let free = nodes - (end - start);
    (free > 0).then(|| {
        let k = rng.random_range(0..free);
        if k < start { k } else { k + (end - start) }
    })
}

/// A uniform node of `start..end` not in `taken`, if there is one.
fn free_in(rng: &mut Rng, (start, end): (u32, u32), taken: &[u32]) -> Option<u32> {
    let mut inside: Vec<u32> = taken
        .iter()
        .copied()
        .filter(|n| (start..end).contains(n))
        .collect();
    inside.sort_unstable();
    let free = (end - start) - inside.len() as u32;
    (free > 0).then(|| {
        // The k-th free node: step over every taken node at or below it.
        let mut node = start + rng.random_range(0..free);
        for t in inside {
            if t <= node {
                node += 1;
            }
        }
        node
    })
}

/// Zipf shares of `reduces` partitions with exponent `s`: rank `r` (1-based) gets
/// `r^−s / Σ_j j^−s`, so rank 1 is the largest and the shares sum to 1; `s = 0` is uniform.
/// This is how skewed keys spread over reducers in Dart's skew experiment (§6.6) and in
/// EVALUATION.md's cluster model.
pub fn zipf_shares(reduces: u32, s: f64) -> Vec<f64> {
    let weights: Vec<f64> = (1..=reduces).map(|r| f64::from(r).powf(-s)).collect();
    let total: f64 = weights.iter().sum();
    weights.into_iter().map(|w| w / total).collect()
}

/// `total` bytes split over parts in proportion to `weights` (equally when they are all 0),
/// rounded so the parts sum to `total` exactly.
pub(super) fn split(total: u64, weights: &[u64]) -> Vec<u64> {
    let equal = weights.iter().all(|&w| w == 0);
    let weight = |w: u64| if equal { 1 } else { u128::from(w) };
    let sum: u128 = weights.iter().map(|&w| weight(w)).sum();
    let mut cumulative = 0u128;
    let mut given = 0u64;
    weights
        .iter()
        .map(|&w| {
            cumulative += weight(w);
            // Rounded running totals: each part is the step between two of them.
            let upto = match u128::from(total).checked_mul(cumulative) {
                _ if cumulative == sum => total,
                Some(product) => ((product + sum / 2) / sum) as u64,
                None => (total as f64 * (cumulative as f64 / sum as f64)) as u64,
            }
            .clamp(given, total);
            let part = upto - given;
            given = upto;
            part
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> Rng {
        Rng::seed_from_u64(7)
    }

    #[test]
    fn noise_has_mean_one_and_the_asked_spread() {
        let mut r = rng();
        let xs: Vec<f64> = (0..200_000).map(|_| noise(&mut r, 0.5)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let lm = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|l| (l - lm).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((sd - 0.5).abs() < 0.01, "{sd}");
        assert_eq!(noise(&mut r, 0.0), 1.0);
    }

    #[test]
    fn a_pareto_spread_has_the_log_normals_mean_and_spread_and_a_heavier_tail() {
        let n = 400_000;
        let stats = |law: TaskLaw| {
            let mut r = rng();
            let xs: Vec<f64> = (0..n).map(|_| spread(&mut r, 0.3, law)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            let tail = |t: f64| xs.iter().filter(|&&x| x > t).count() as f64 / n as f64;
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            (mean, sd / mean, tail(2.0), tail(3.0), min)
        };
        let (ln_mean, ln_cv, ln_2, ln_3, _) = stats(TaskLaw::LogNormal);
        let (p_mean, p_cv, p_2, p_3, p_min) = stats(TaskLaw::Pareto);
        // The same mean (1) and coefficient of variation (√(e^0.09 − 1) = 0.307)...
        assert!((ln_mean - 1.0).abs() < 0.005 && (p_mean - 1.0).abs() < 0.005);
        assert!((ln_cv - 0.307).abs() < 0.01, "{ln_cv}");
        assert!((p_cv - 0.307).abs() < 0.02, "{p_cv}");
        // ...and a heavier tail: twice the mean is 2× as likely, three times ~30× (at α
        // = 4.41, P(X > 3) = (0.773 / 3)^4.41 = 0.25 %; the log-normal's 0.007 %).
        assert!(p_2 > 1.5 * ln_2, "{p_2} vs {ln_2}");
        assert!(p_3 > 10.0 * ln_3, "{p_3} vs {ln_3}");
        assert!((p_3 - 0.0025).abs() < 0.0004, "{p_3}");
        // The Pareto's floor: (α − 1)/α of the mean.
        assert!((0.7731..0.775).contains(&p_min), "{p_min}");
        // No spread, no factor; one draw either way.
        let mut r = rng();
        assert_eq!(spread(&mut r, 0.0, TaskLaw::Pareto), 1.0);
    }

    #[test]
    fn a_tail_block_takes_its_share_of_a_full_blocks_time_but_not_less_than_the_floor() {
        let o = WorkloadOptions::default();
        let law = MapLaw {
            mean: 10.0,
            sigma: 0.0,
            per_block: true,
        };
        let mut r = rng();
        assert_eq!(law.draw(Some(o.block_bytes), &mut r, &o), 10.0);
        assert_eq!(law.draw(Some(o.block_bytes / 4), &mut r, &o), 2.5);
        assert_eq!(law.draw(Some(1), &mut r, &o), 0.1);
        assert_eq!(
            law.draw(None, &mut r, &o),
            10.0,
            "unknown input: a full block"
        );
        let flat = MapLaw {
            per_block: false,
            ..law
        };
        assert_eq!(flat.draw(Some(1), &mut r, &o), 10.0);
    }

    #[test]
    fn a_fitted_law_keeps_the_recorded_mean_and_log_spread() {
        let law = MapLaw::fitted(&[1.0, std::f64::consts::E.powi(2)], 0.3).unwrap();
        assert!((law.mean - (1.0 + 7.389_056_098_930_65) / 2.0).abs() < 1e-9);
        assert!((law.sigma - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(MapLaw::fitted(&[4.0], 0.3).unwrap().sigma, 0.3);
        assert!(MapLaw::fitted(&[], 0.3).is_none());
    }

    #[test]
    fn replicas_follow_hdfs_rack_awareness() {
        let o = WorkloadOptions::default();
        let mut r = rng();
        for _ in 0..2000 {
            let nodes = hdfs_replicas(&mut r, &o);
            assert_eq!(nodes.len(), 3);
            assert!(nodes.iter().all(|&n| n < 64));
            let racks: Vec<u32> = nodes.iter().map(|n| n / 16).collect();
            assert_ne!(racks[0], racks[1], "{nodes:?}");
            assert_eq!(racks[1], racks[2], "{nodes:?}");
            assert!(nodes[1] != nodes[2] && nodes[0] != nodes[2]);
        }
    }

    #[test]
    fn replicas_stay_distinct_on_tiny_and_odd_clusters() {
        let mut r = rng();
        for (nodes, per_rack) in [(1, 16), (2, 1), (3, 3), (5, 2), (17, 16), (4, 0)] {
            let o = WorkloadOptions {
                nodes,
                nodes_per_rack: per_rack,
                ..WorkloadOptions::default()
            };
            for _ in 0..200 {
                let mut got = hdfs_replicas(&mut r, &o);
                assert_eq!(got.len(), 3.min(nodes as usize));
                got.sort_unstable();
                got.dedup();
                assert_eq!(got.len(), 3.min(nodes as usize), "{nodes}/{per_rack}");
                assert!(got.iter().all(|&n| n < nodes));
            }
        }
    }

    #[test]
    fn every_node_gets_replicas() {
        let o = WorkloadOptions::default();
        let mut r = rng();
        let mut hits = [0u32; 64];
        for _ in 0..6400 {
            for n in hdfs_replicas(&mut r, &o) {
                hits[n as usize] += 1;
            }
        }
        assert!(hits.iter().all(|&h| h > 150), "{hits:?}");
    }

    #[test]
    fn zipf_shares_sum_to_one_and_fall_with_rank() {
        assert_eq!(zipf_shares(4, 0.0), vec![0.25; 4]);
        let s = zipf_shares(3, 1.0);
        let h = 1.0 + 0.5 + 1.0 / 3.0;
        assert!((s[0] - 1.0 / h).abs() < 1e-12 && (s[2] - 1.0 / 3.0 / h).abs() < 1e-12);
        assert!(zipf_shares(0, 1.0).is_empty());
    }

    #[test]
    fn splits_are_exact_and_proportional() {
        assert_eq!(split(10, &[1, 1, 2]), vec![3, 2, 5]);
        assert_eq!(split(7, &[0, 0, 0]), vec![2, 3, 2]);
        assert_eq!(split(0, &[5, 5]), vec![0, 0]);
        for weights in [vec![u64::MAX, 1], vec![u64::MAX; 3]] {
            let big = split(u64::MAX, &weights);
            assert_eq!(
                big.iter().map(|&b| u128::from(b)).sum::<u128>(),
                u128::from(u64::MAX)
            );
        }
        assert!(split(5, &[]).is_empty());
    }
}
