//! The profile a policy starts a job with, measured the way Dart's profiler measures it
//! (§5.1, §2.7 of the digest): sample runs of the same job shape and one earlier run of the
//! recurring job, each with its own draws — never the truth's numbers themselves. As in the
//! live profiler (`Profiler::add_run`), the earlier run's reduces are points of the `f(d)` fit
//! beside the task sampler's, and its maps' spread is the profile's `map_spread`.

use yard_appmaster::policy::profiler::SPREAD_MIN_MAPS;

use yard_appmaster::policy::profiler::RunRecord;
use yard_appmaster::policy::{PowerLaw, Profile, Profiler, Rng, Seconds};

use super::draw::{noise, spread};
use super::{Draft, WorkloadOptions};
use crate::config::ProfileSource;
use crate::job::JobTruth;

/// `reduce_sigma`: the spread of the job's reduce noise, which the sample runs' reduces meet
/// afresh (for recorded reduces, the spread of the recorded ones).
///
/// The sample runs give the defaults and a run of `sample_maps` maps; `earlier_runs` earlier
/// runs of the recurring job, each with its own draws, go through the live [`Profiler`] too:
/// `T_l^a` is the recent runs' maps pooled (Dart §5.3: "initialized from the job profile
/// information of the previous execution"),
/// `map_spread` their mean spread, `(k_i, d_{k_i})` every run's, and every run's reduces are
/// points of the `f(d)` fit beside the task sampler's.
pub(super) fn measure(
    draft: &Draft,
    truth: &JobTruth,
    reduce_sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> Profile {
    let (defaults, largest_input) = match o.profiles {
        ProfileSource::NoisyTruth => noisy_truth(draft, truth, reduce_sigma, rng, o),
        ProfileSource::Sampled => sampled(draft, truth, reduce_sigma, rng, o),
    };
    // The task sampler's run is a run of `sample_maps` maps, as the live store keeps it:
    // pooled with the earlier runs' maps, it weighs as many maps as it timed.
    let sampler = RunRecord {
        map_local: Some(defaults.map_local),
        map_remote: Some(defaults.map_remote),
        k: o.sample_maps.max(1) as u32,
        ..RunRecord::default()
    };
    let mut profiler = Profiler::new(defaults);
    profiler.add_run(sampler);
    // Drawn last: the sample runs' draws are what they were without the earlier runs' maps.
    for run in earlier_runs(draft, truth, largest_input, rng, o) {
        profiler.add_run(run);
    }
    profiler.profile()
}

/// The earlier runs' records (`RunRecord`, as `RunObserver` sums a live run up): each ran
/// every map (its `k`), drawn afresh from the job's map law by its input and, as the sample
/// runs are, node-local — their mean is `map_local`, remote maps `remote_factor` slower, and
/// with at least `SPREAD_MIN_MAPS` maps σ of ln(duration) is `map_spread`. A job with reduces
/// also records its largest reduce input (`largest_input`, as the profile measured it, with
/// `profile_noise`). Its reduces' times are in the defaults' fit (`sample_reduces`). None for
/// a job without maps.
fn earlier_runs(
    draft: &Draft,
    truth: &JobTruth,
    largest_input: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> Vec<RunRecord> {
    if draft.maps.is_empty() {
        return Vec::new();
    }
    (0..o.earlier_runs)
        .map(|_| {
            let took: Vec<f64> = draft
                .maps
                .iter()
                .map(|m| draft.map_law.draw(m.input, rng, o))
                .collect();
            let mean = took.iter().sum::<f64>() / took.len() as f64;
            // σ of a map's time about what its input makes it, as the live `RunObserver`
            // measures it: ln(t / input scale), the scale as `dart` takes it.
            let inputs: Vec<Option<u64>> = draft.maps.iter().map(|m| m.input).collect();
            let known: Vec<u64> = inputs.iter().flatten().copied().collect();
            let mean_input = known.iter().sum::<u64>() as f64 / known.len().max(1) as f64;
            let scale = |input: Option<u64>| match (input, mean_input > 0.0) {
                (Some(b), true) => (b as f64 / mean_input).max(0.01),
                _ => 1.0,
            };
            let logs: Vec<f64> = took
                .iter()
                .zip(&inputs)
                .map(|(t, &input)| (t / scale(input)).ln())
                .collect();
            let spread = (took.len() as u64 >= SPREAD_MIN_MAPS)
                .then(|| super::draw::spread_of_logs(&logs))
                .flatten();
            let max_reduce_input = match truth.reduces() {
                0 => 0,
                _ => (largest_input * noise(rng, o.profile_noise)).round() as u64,
            };
            RunRecord {
                map_local: Some(mean),
                map_remote: Some(mean * o.remote_factor),
                map_spread: spread,
                k: truth.maps.len() as u32,
                max_reduce_input,
                ..RunRecord::default()
            }
        })
        .collect()
}

/// The profile with the truth's own output per map and its bandwidth times noise: task times
/// from sample runs, the rest anchored on the truth (the simulator before issue 15); and the
/// largest reduce input it takes the earlier runs to have met.
fn noisy_truth(
    draft: &Draft,
    truth: &JobTruth,
    reduce_sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> (Profile, f64) {
    let sampled_maps = sample_maps(draft, rng, o);
    let output: f64 = truth.maps.iter().map(|m| m.output_bytes as f64).sum();
    let shuffle_bandwidth = truth.shuffle_bandwidth * noise(rng, o.profile_noise);
    measured(
        truth,
        sampled_maps,
        output,
        shuffle_bandwidth,
        reduce_sigma,
        rng,
        o,
    )
}

/// The profile from the sample maps' `(T_l^a, shortest)`, the job's map `output` and shuffle
/// bandwidth as measured: the sample reduces' fit at the inputs that output gives
/// (`sample_reduces`), and the largest reduce input it takes the earlier runs to have met.
fn measured(
    truth: &JobTruth,
    (map_local, map_shortest): (Seconds, Seconds),
    output: f64,
    shuffle_bandwidth: f64,
    reduce_sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> (Profile, f64) {
    let maps = truth.maps.len().max(1) as f64;
    let reduces = truth.reduces();
    let largest_share = truth.partition_shares.iter().copied().fold(0.0, f64::max);
    let largest_input = output * largest_share;
    let reduce_time = match reduces {
        0 => truth.reduce_time,
        _ => sample_reduces(truth, output, largest_input, reduce_sigma, rng, o),
    };
    (
        Profile {
            map_local,
            map_remote: map_local * o.remote_factor,
            map_shortest: Some(map_shortest),
            map_spread: None,
            partition_bytes: match reduces {
                0 => 0.0,
                r => output / maps / f64::from(r),
            },
            shuffle_bandwidth,
            reduce_time,
            previous_runs: Vec::new(),
        },
        largest_input,
    )
}

/// The profile from sample runs only, as the task sampler and the job profiler measure one
/// (Dart §5.1; `RunObserver`): `T_l^a` as in [`noisy_truth`]; the task sampler runs
/// `sample_maps` of the job's own maps, chosen at random, node-local and at once: their
/// output over their input is the job's output ratio, and their outputs crossing the job's
/// link give the bandwidth as the live profiler reads it from the reduces' timed fetches:
/// their bytes over the seconds the link spent on them (with no output nothing is
/// measured, and the cluster's nominal link speed, `shuffle_bandwidth`, stands in). The reduce law is fitted as in [`noisy_truth`], its
/// points at the inputs the measured ratio predicts; the earlier run's largest reduce input
/// is the measured output's largest share.
fn sampled(
    draft: &Draft,
    truth: &JobTruth,
    reduce_sigma: f64,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> (Profile, f64) {
    let sampled_maps = sample_maps(draft, rng, o);
    let maps = truth.maps.len();
    let reduces = truth.reduces();
    let picks: Vec<usize> = match maps {
        0 => Vec::new(),
        m => rand::seq::index::sample(rng, m, o.sample_maps.clamp(1, m)).into_vec(),
    };
    let input: u64 = truth.maps.iter().map(|m| m.input_bytes).sum();
    let (sampled_in, sampled_out) = picks.iter().fold((0u64, 0u64), |(i, out), &p| {
        let m = &truth.maps[p];
        (i + m.input_bytes, out + m.output_bytes)
    });
    let output = match sampled_in {
        0 => sampled_out as f64 / picks.len().max(1) as f64 * maps as f64,
        _ => sampled_out as f64 / sampled_in as f64 * input as f64,
    };
    // The sample run: the picked maps at once, each on a container of its own. Their times
    // are drawn (and dropped) so that every later draw stays where it was.
    for &p in &picks {
        draft.map_law.draw(draft.maps[p].input, rng, o);
    }
    // The reduces time their fetches (the live task runner does, `RunObserver::fetched`):
    // the bandwidth is the bytes over the seconds the link was busy with them — the link's
    // own — not over the window from the first arrival to the last, which counts the wait
    // between the maps' ends as link time (it read 1e3–1e4 times slow on large jobs, and
    // `--harsh`'s estimate at close put their shuffle at 375–1,641 s where it took none).
    let crossed = picks.iter().any(|&p| truth.maps[p].output_bytes > 0);
    let shuffle_bandwidth = match reduces > 0 && crossed {
        true => truth.shuffle_bandwidth,
        false => o.shuffle_bandwidth,
    };
    measured(
        truth,
        sampled_maps,
        output,
        shuffle_bandwidth,
        reduce_sigma,
        rng,
        o,
    )
}

/// `T_l^a`: the mean of `sample_maps` fresh node-local runs of a full block, drawn anew from
/// the job's map law (for a trace with durations, the log-normal fitted to them), scaled by
/// the job's mean share of a block so that short tail splits count as often as they occur.
/// Timing full blocks and scaling, rather than timing random maps, keeps one unlucky pick of
/// a 1-byte tail from halving a small job's profile. With it, the shortest of those runs on
/// the same footing (`Profile::map_shortest`): the same draws, so no later draw moves.
fn sample_maps(draft: &Draft, rng: &mut Rng, o: &WorkloadOptions) -> (Seconds, Seconds) {
    let n = o.sample_maps.max(1);
    let draws: Vec<Seconds> = (0..n).map(|_| draft.map_law.draw(None, rng, o)).collect();
    let runs: Seconds = draws.iter().sum();
    let shortest = draws.iter().copied().fold(f64::INFINITY, f64::min);
    let scales = draft.maps.iter().map(|m| draft.map_law.scale(m.input, o));
    let scale = match draft.maps.len() {
        0 => 1.0,
        maps => scales.sum::<f64>() / maps as f64,
    };
    (runs / n as f64 * scale, shortest * scale)
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
    let earlier_runs =
        (0..o.earlier_runs).flat_map(|_| truth.partition_shares.iter().map(|share| output * share));
    let samples: Vec<(f64, Seconds)> = sampler
        .into_iter()
        .chain(earlier_runs)
        .map(|d| (d, law.at(d) * spread(rng, sigma, o.durations)))
        .collect();
    let fitted = PowerLaw::fit(&samples).unwrap_or(law);
    match o.oracle_reduce_law {
        // The truth's noise is mean-one (`draw::noise`) and the fit is a median (eq. 9 in log
        // space), so the oracle's law is the truth's median, with the truth's own spread.
        true => PowerLaw {
            a: law.a * (-sigma * sigma / 2.0).exp(),
            b: law.b,
            spread: sigma,
        },
        false => fitted,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ARIA_MAP_MS, WorkloadOptions, facebook::facebook_synthetic};

    /// A profile's `map_spread` is the earlier run's, as the live store learns it: measured on
    /// jobs with enough maps, near the law's σ; none elsewhere.
    #[test]
    fn the_earlier_run_measures_the_map_spread_where_the_model_has_one() {
        let o = WorkloadOptions::default();
        let jobs = facebook_synthetic(300, 0.0, &o);
        let (mut measured, mut none) = (Vec::new(), 0);
        for j in &jobs {
            let has_run = j.truth.maps.len() >= 3;
            match (has_run, j.profile.map_spread) {
                (true, Some(s)) => measured.push(s),
                (false, None) => none += 1,
                (run, spread) => panic!("{}: earlier run {run}, spread {spread:?}", j.id),
            }
        }
        assert!(
            measured.len() >= 20 && none >= 20,
            "{} / {none}",
            measured.len()
        );
        // Full blocks, every task from ARIA's fit: each job's σ from its own maps' draws is
        // near the fit's.
        measured.sort_by(f64::total_cmp);
        let median = measured[measured.len() / 2];
        assert!((median - ARIA_MAP_MS.sigma).abs() < 0.15, "{median}");
    }
}
