//! The experiment's workloads: the seed's Poisson arrivals over Zipf-like datasets tied by
//! the κ scheme ([`kappa`], [`workload`]), and a trace's jobs as scans of the datasets their
//! input paths name ([`trace_workload`]).

use rand::{RngExt, SeedableRng};
use yard_appmaster::policy::Rng;
use yard_cluster::scans::{Dataset, ScanJob};

use super::{SLOT_BYTES_PER_S, ScansSetup};

/// κ for a correlation level (digest §4): levels 0–3 negative with κ = 1, 6, 11, 16; 4 random
/// (κ = D); 5–8 positive with κ = 16, 11, 6, 1. `(κ, positive)`.
pub fn kappa(level: u8, datasets: usize) -> (usize, bool) {
    match level {
        0..=3 => (1 + 5 * usize::from(level), false),
        4 => (datasets, true),
        _ => (1 + 5 * usize::from(8 - level.min(8)), true),
    }
}

/// One run's datasets and jobs for the seed's experiment.
pub fn workload(setup: &ScansSetup, level: u8, seed: u64) -> (Vec<Dataset>, Vec<ScanJob>) {
    let d = setup.datasets.max(1);
    let mut rng = Rng::seed_from_u64(seed ^ (0x5eed_0004 + u64::from(level) * 0x9e37_79b9));
    // Popularity of dataset i (0 = most popular): ∝ (i+1)^−θ1.
    let pop: Vec<f64> = (0..d)
        .map(|i| ((i + 1) as f64).powf(-setup.theta1))
        .collect();
    // Size of the r-th largest (0-based): ∝ (r+1)^−θ2.
    let size_of_rank: Vec<f64> = (0..d)
        .map(|r| ((r + 1) as f64).powf(-setup.theta2))
        .collect();
    // The κ scheme: size ranks for datasets taken by decreasing (positive) or increasing
    // (negative) popularity.
    let (k, positive) = kappa(level, d);
    let mut rank = vec![usize::MAX; d];
    let mut taken = vec![false; d];
    for t in 0..d {
        let i = if positive { t } else { d - 1 - t };
        let hi = (k + t).min(d); // ranks 1..=hi, i.e. 0..hi
        let free: Vec<usize> = (0..hi).filter(|&r| !taken[r]).collect();
        let r = free[rng.random_range(0..free.len())];
        taken[r] = true;
        rank[i] = r;
    }
    let raw: Vec<f64> = (0..d).map(|i| size_of_rank[rank[i]]).collect();
    // Arrivals: a Poisson process's times given their count, and each one's dataset by
    // popularity.
    let total_pop: f64 = pop.iter().sum();
    let mut times: Vec<f64> = (0..setup.arrivals)
        .map(|_| rng.random::<f64>() * setup.horizon_s)
        .collect();
    times.sort_by(f64::total_cmp);
    let picks: Vec<usize> = times
        .iter()
        .map(|_| {
            let mut u = rng.random::<f64>() * total_pop;
            for (i, &p) in pop.iter().enumerate() {
                if u < p {
                    return i;
                }
                u -= p;
            }
            d - 1
        })
        .collect();
    // Scale the sizes: unshared map work = ρ·T·S.
    let unshared: f64 = picks.iter().map(|&i| raw[i]).sum();
    let scale = match unshared > 0.0 {
        true => setup.rho * setup.horizon_s * f64::from(setup.slots) / unshared,
        false => 1.0,
    };
    let datasets = raw
        .iter()
        .map(|&r| Dataset {
            scan_s: r * scale,
            bytes: r * scale * SLOT_BYTES_PER_S,
        })
        .collect();
    let jobs = times
        .iter()
        .zip(&picks)
        .enumerate()
        .map(|(n, (&t, &i))| ScanJob {
            id: n as u64,
            dataset: i,
            arrival_s: t,
            min_slots: 1,
            max_slots: setup.max_slots.clamp(1, setup.slots),
            weight: 1.0,
            deadline_s: None,
        })
        .collect();
    (datasets, jobs)
}

/// A trace's datasets and jobs (module doc): one dataset per input path. Errors name what to fix.
pub(crate) fn trace_workload(
    w: &yard_workload::Workload,
    max_slots: u32,
) -> Result<(Vec<Dataset>, Vec<ScanJob>, usize), String> {
    if w.jobs.is_empty() {
        return Err("the trace has no jobs".into());
    }
    let mut paths: Vec<(String, u64)> = Vec::new();
    let mut datasets: Vec<u64> = Vec::new();
    let mut of_job = Vec::with_capacity(w.jobs.len());
    for job in &w.jobs {
        let bytes = job.input_bytes();
        match &job.input_path {
            Some(p) => match paths.iter().position(|(q, _)| q == p) {
                Some(i) => {
                    let d = paths[i].1 as usize;
                    datasets[d] = datasets[d].max(bytes);
                    of_job.push(d);
                }
                None => {
                    paths.push((p.clone(), datasets.len() as u64));
                    of_job.push(datasets.len());
                    datasets.push(bytes);
                }
            },
            None => {
                of_job.push(datasets.len());
                datasets.push(bytes);
            }
        }
    }
    if paths.is_empty() {
        return Err(
            "the trace names no input paths: shared scans need SWIM's withInputPaths columns (7 to 9 columns, the 7th the input path)"
                .into(),
        );
    }
    let first = w.jobs.iter().map(|j| j.submit_ms).min().unwrap_or(0);
    let mut jobs: Vec<ScanJob> = w
        .jobs
        .iter()
        .zip(&of_job)
        .enumerate()
        .map(|(n, (j, &d))| ScanJob {
            id: n as u64,
            dataset: d,
            arrival_s: (j.submit_ms - first) as f64 / 1000.0,
            min_slots: 1,
            max_slots,
            weight: 1.0,
            deadline_s: None,
        })
        .collect();
    jobs.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let datasets = datasets
        .into_iter()
        .map(|b| {
            // A job reading nothing still takes a moment (no zero stretch denominators).
            let b = (b as f64).max(1.0);
            Dataset {
                scan_s: b / SLOT_BYTES_PER_S,
                bytes: b,
            }
        })
        .collect();
    Ok((datasets, jobs, paths.len()))
}
