//! The reduce side's truth: how the job's shuffle bytes split over the reduces, the reduce
//! time law `f(d) = a·d^b` and each reduce's mean-one noise `e_r` (Dart eq. 9).

use yard_appmaster::policy::{PowerLaw, Rng, Seconds};

use super::WorkloadOptions;
use super::draw::{spread, spread_of_logs, zipf_shares};

/// The largest exponent a fit to recorded reduces may give `f`. A few reduces of nearly equal
/// input can fit any slope; past quadratic (or below flat) the slope says that input does
/// not explain their times, and a law that falls with input would make Dart's reduce-input
/// sampling (Alg. 5) slow a reduce down.
pub(crate) const MAX_FITTED_EXPONENT: f64 = 2.0;

/// What a job's source says about its reduces.
pub(super) enum Reduces {
    /// A map-only job.
    None,
    /// The source times its reduces (Rumen, or ARIA's per-task draws): each one's input bytes
    /// (at least 1) and seconds (`None` where not recorded). `fallback_b` is `f`'s exponent
    /// when the inputs cannot fit one (fewer than two distinct sizes).
    Timed {
        reduces: Vec<(u64, Option<Seconds>)>,
        fallback_b: f64,
    },
    /// Untimed reduces (SWIM): `count` of them share `shuffle` bytes; `mean` is the job's mean
    /// reduce time at the mean input and `b` the law's exponent.
    Drawn {
        count: u32,
        shuffle: u64,
        mean: Seconds,
        b: f64,
    },
}

pub(super) struct ReduceTruth {
    pub shares: Vec<f64>,
    pub law: PowerLaw,
    pub noise: Vec<f64>,
    /// The spread (σ of `ln e`) the noise is drawn with, or, for recorded times, the spread
    /// of theirs: what a sample run of the same job would meet.
    pub noise_sigma: f64,
    /// Map output bytes, all maps together.
    pub shuffle: u64,
}

/// A map-only job's law: no reduce ever runs it.
const NO_REDUCES: PowerLaw = PowerLaw {
    a: 0.0,
    b: 1.0,
    spread: 0.0,
};

pub(super) fn truth(reduces: &Reduces, rng: &mut Rng, o: &WorkloadOptions) -> ReduceTruth {
    match reduces {
        Reduces::None => ReduceTruth {
            shares: Vec::new(),
            law: NO_REDUCES,
            noise: Vec::new(),
            noise_sigma: 0.0,
            shuffle: 0,
        },
        Reduces::Timed {
            reduces,
            fallback_b,
        } => timed(reduces, *fallback_b, rng, o),
        &Reduces::Drawn {
            count,
            shuffle,
            mean,
            b,
        } => drawn(count, shuffle, mean, b, rng, o),
    }
}

/// Fits `b` to the timed reduces (`PowerLaw::fit`, clamped to `[0, MAX_FITTED_EXPONENT]`),
/// sets `a` so that the noise `e_r = t_r / f(d_r)` has mean exactly 1 over them, and so
/// reproduces every recorded time at its recorded input. Untimed reduces get drawn noise.
/// Without skew the shares are the recorded inputs', so a full run replays the trace.
fn timed(
    reduces: &[(u64, Option<Seconds>)],
    fallback_b: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> ReduceTruth {
    let points: Vec<(f64, Seconds)> = reduces
        .iter()
        .filter_map(|&(d, t)| t.map(|t| (d.max(1) as f64, t)))
        .collect();
    let b = PowerLaw::fit(&points)
        .map(|law| law.b)
        .filter(|b| b.is_finite())
        .map_or(fallback_b, |b| b.clamp(0.0, MAX_FITTED_EXPONENT));
    let a = points.iter().map(|&(d, t)| t / d.powf(b)).sum::<f64>() / points.len().max(1) as f64;
    let law = PowerLaw { a, b, spread: 0.0 };
    let recorded = |d: u64, t: Option<Seconds>| {
        let at = law.at(d.max(1) as f64);
        t.filter(|_| at > 0.0).map(|t| t / at)
    };
    let logs: Vec<f64> = reduces
        .iter()
        .filter_map(|&(d, t)| recorded(d, t))
        .filter(|e| *e > 0.0)
        .map(f64::ln)
        .collect();
    let noise_sigma = spread_of_logs(&logs).unwrap_or(o.reduce_noise);
    let noise = reduces
        .iter()
        .map(|&(d, t)| recorded(d, t).unwrap_or_else(|| spread(rng, noise_sigma, o.durations)))
        .collect();
    let inputs: Vec<u64> = reduces.iter().map(|&(d, _)| d.max(1)).collect();
    let shuffle = inputs.iter().sum::<u64>();
    let shares = match o.skew > 0.0 {
        true => zipf_shares(inputs.len() as u32, o.skew),
        false => inputs.iter().map(|&d| d as f64 / shuffle as f64).collect(),
    };
    ReduceTruth {
        shares,
        law,
        noise,
        noise_sigma,
        shuffle,
    }
}

/// `a` puts `f` through the job's mean reduce time at the mean input (at least one byte per
/// reduce, so every reduce's time is defined); every reduce gets drawn noise.
fn drawn(
    count: u32,
    shuffle: u64,
    mean: Seconds,
    b: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> ReduceTruth {
    let shuffle = shuffle.max(u64::from(count));
    let mean_input = shuffle as f64 / f64::from(count.max(1));
    ReduceTruth {
        shares: zipf_shares(count, o.skew),
        law: PowerLaw {
            a: mean / mean_input.powf(b),
            b,
            // The truth's noise is drawn per reduce, below.
            spread: 0.0,
        },
        noise: (0..count)
            .map(|_| spread(rng, o.reduce_noise, o.durations))
            .collect(),
        noise_sigma: o.reduce_noise,
        shuffle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn run(reduces: &Reduces, skew: f64) -> ReduceTruth {
        let o = WorkloadOptions {
            skew,
            ..WorkloadOptions::default()
        };
        truth(reduces, &mut Rng::seed_from_u64(3), &o)
    }

    fn reproduces(t: &ReduceTruth, recorded: &[(u64, Option<Seconds>)]) {
        for (r, &(d, s)) in recorded.iter().enumerate() {
            let got = t.law.at(d.max(1) as f64) * t.noise[r];
            if let Some(s) = s {
                assert!((got / s - 1.0).abs() < 1e-9, "reduce {r}: {got} vs {s}");
            }
        }
    }

    #[test]
    fn timed_reduces_are_reproduced_with_a_fitted_law_and_mean_one_noise() {
        let recorded = [
            (1_000, Some(10.0)),
            (4_000, Some(25.0)),
            (16_000, Some(90.0)),
        ];
        let t = run(
            &Reduces::Timed {
                reduces: recorded.to_vec(),
                fallback_b: 1.0,
            },
            0.0,
        );
        let fit = PowerLaw::fit(&[(1e3, 10.0), (4e3, 25.0), (16e3, 90.0)]).unwrap();
        assert!((t.law.b - fit.b).abs() < 1e-12);
        assert!((t.noise.iter().sum::<f64>() / 3.0 - 1.0).abs() < 1e-12);
        reproduces(&t, &recorded);
        assert_eq!(t.shuffle, 21_000);
        assert_eq!(t.shares, vec![1.0 / 21.0, 4.0 / 21.0, 16.0 / 21.0]);
    }

    #[test]
    fn unfittable_reduces_fall_back_and_wild_slopes_are_clamped() {
        let same = [(500, Some(3.0)), (500, Some(5.0)), (500, None)];
        let t = run(
            &Reduces::Timed {
                reduces: same.to_vec(),
                fallback_b: 1.0,
            },
            0.0,
        );
        assert_eq!(t.law.b, 1.0);
        reproduces(&t, &same);
        assert!(
            t.noise[2] > 0.0 && t.noise[2] != 1.0,
            "the untimed reduce gets noise"
        );
        // Zero recorded bytes read as one byte, so the time still has an input to scale.
        let falling = [(0, Some(60.0)), (20_000_000, Some(30.0))];
        let t = run(
            &Reduces::Timed {
                reduces: falling.to_vec(),
                fallback_b: 1.0,
            },
            0.0,
        );
        assert_eq!(t.law.b, 0.0, "a falling fit is clamped flat");
        reproduces(&t, &falling);
        let steep = [(100, Some(1.0)), (110, Some(100.0))];
        let t = run(
            &Reduces::Timed {
                reduces: steep.to_vec(),
                fallback_b: 1.0,
            },
            0.0,
        );
        assert_eq!(t.law.b, MAX_FITTED_EXPONENT);
        reproduces(&t, &steep);
    }

    #[test]
    fn drawn_reduces_pass_the_mean_time_at_the_mean_input() {
        let t = run(
            &Reduces::Drawn {
                count: 4,
                shuffle: 4_000_000,
                mean: 200.0,
                b: 0.8,
            },
            1.0,
        );
        assert!((t.law.at(1e6) - 200.0).abs() < 1e-9);
        assert_eq!(t.noise.len(), 4);
        assert_eq!(t.shares, zipf_shares(4, 1.0));
        let tiny = run(
            &Reduces::Drawn {
                count: 3,
                shuffle: 0,
                mean: 9.0,
                b: 1.0,
            },
            0.0,
        );
        assert_eq!((tiny.shuffle, tiny.law.at(1.0)), (3, 9.0));
    }
}
