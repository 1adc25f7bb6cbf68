//! The profile a policy starts a job with, measured the way Dart's profiler measures it
//! (§5.1, §2.7 of the digest): sample runs of the same job shape and one earlier run of the
//! recurring job, each with its own draws — never the truth's numbers themselves. As in the
//! live profiler (`Profiler::add_run`), the earlier run's reduces are points of the `f(d)` fit
//! beside the task sampler's.

use yard_appmaster::policy::{PowerLaw, PreviousRun, Profile, Profiler, Rng, Seconds};

use super::draw::noise;
use super::{Draft, WorkloadOptions};
use crate::job::JobTruth;

/// `reduce_sigma`: the spread of the job's reduce noise, which the sample runs' reduces meet
/// afresh (for recorded reduces, the spread of the recorded ones).
pub(super) fn measure(
    draft: &Draft,
    truth: &JobTruth,
    reduce_sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> Profile {
    let map_local = sample_maps(draft, rng, o);
    let maps = truth.maps.len().max(1) as f64;
    let reduces = truth.reduces();
    let output: f64 = truth.maps.iter().map(|m| m.output_bytes as f64).sum();
    let largest_share = truth.partition_shares.iter().copied().fold(0.0, f64::max);
    let largest_input = output * largest_share;
    let shuffle_bandwidth = truth.shuffle_bandwidth * noise(rng, o.profile_noise);
    let reduce_time = match reduces {
        0 => truth.reduce_time,
        _ => sample_reduces(truth, output, largest_input, reduce_sigma, rng, o),
    };
    let previous_runs = match reduces {
        0 => Vec::new(),
        _ => vec![PreviousRun {
            k: truth.maps.len() as u32,
            max_reduce_input: largest_input * noise(rng, o.profile_noise),
        }],
    };
    Profile {
        map_local,
        map_remote: map_local * o.remote_factor,
        partition_bytes: match reduces {
            0 => 0.0,
            r => output / maps / f64::from(r),
        },
        shuffle_bandwidth,
        reduce_time,
        previous_runs,
    }
}

/// `T_l^a`: the mean of `sample_maps` fresh node-local runs of a full block, drawn anew from
/// the job's map law (for a trace with durations, the log-normal fitted to them), scaled by
/// the job's mean share of a block so that short tail splits count as often as they occur.
/// Timing full blocks and scaling, rather than timing random maps, keeps one unlucky pick of
/// a 1-byte tail from halving a small job's profile.
fn sample_maps(draft: &Draft, rng: &mut Rng, o: &WorkloadOptions) -> Seconds {
    let n = o.sample_maps.max(1);
    let runs: Seconds = (0..n).map(|_| draft.map_law.draw(None, rng, o)).sum();
    let scales = draft.maps.iter().map(|m| draft.map_law.scale(m.input, o));
    let scale = match draft.maps.len() {
        0 => 1.0,
        maps => scales.sum::<f64>() / maps as f64,
    };
    runs / n as f64 * scale
}

/// `f` fitted to the task sampler's reduces (Dart §5.1: `sample_reduces` of them at
/// `Profiler::sample_sizes` up to the largest reduce's input) and to the earlier run's
/// reduces (every partition of all `output`), each timed as `f(d)` × fresh noise of the job's
/// spread `sigma`; the truth's law when they cannot fit one. The earlier run's reduces are what make the fit's spread
/// (and so the last of many reduces, `reduce_phase_factor`) known to more than a few points.
fn sample_reduces(
    truth: &JobTruth,
    output: f64,
    largest_input: f64,
    sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> PowerLaw {
    let law = truth.reduce_time;
    let sampler = Profiler::sample_sizes(largest_input, o.sample_reduces);
    let earlier_run = truth.partition_shares.iter().map(|share| output * share);
    let samples: Vec<(f64, Seconds)> = sampler
        .into_iter()
        .chain(earlier_run)
        .map(|d| (d, law.at(d) * noise(rng, sigma)))
        .collect();
    PowerLaw::fit(&samples).unwrap_or(law)
}
