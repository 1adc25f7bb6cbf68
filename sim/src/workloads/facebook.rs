//! ARIA's synthetic Facebook workload (papers/aria.md §4, Table I): 1000 jobs in ten size
//! bins, every task's duration drawn from the log-normals ARIA fitted to Facebook's tasks,
//! exponential inter-arrival times.

use rand::RngExt;
use rand::seq::SliceRandom;
use rand_distr::Exp1;
use yard_appmaster::policy::{Rng, Seconds};

use super::draw::{self, MapLaw};
use super::reduce::Reduces;
use super::{ARIA_MAP_MS, ARIA_REDUCE_MS, Draft, MapDraft, WorkloadOptions, realise};
use crate::job::SimJob;

/// One row of ARIA's Table I: jobs with `maps` map and `reduces` reduce tasks (0: map-only,
/// the table's "NA"), `jobs` of them in the 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FacebookBin {
    pub maps: u32,
    pub reduces: u32,
    pub jobs: u32,
}

const fn bin(maps: u32, reduces: u32, jobs: u32) -> FacebookBin {
    FacebookBin {
        maps,
        reduces,
        jobs,
    }
}

/// ARIA's Table I, bins 1–10.
pub const FACEBOOK_TABLE_I: [FacebookBin; 10] = [
    bin(1, 0, 380),
    bin(2, 0, 160),
    bin(10, 3, 140),
    bin(50, 0, 80),
    bin(100, 0, 60),
    bin(200, 50, 60),
    bin(400, 0, 40),
    bin(800, 180, 40),
    bin(2400, 360, 20),
    bin(4800, 0, 20),
];

/// `jobs` jobs of ARIA's synthetic Facebook workload.
///
/// - Bins: Table I's shares apportioned to `jobs` by largest remainder (exactly Table I's
///   counts for 1000 jobs, and for any multiple of it), in an order shuffled with the seed.
///   Apportioning rather than drawing each bin keeps the mix the paper's: drawing would move
///   the twenty 4800-map jobs by ±4 from run to run.
/// - Tasks: every map from LN(9.9511, 1.6764) ms and every reduce from LN(12.375, 1.6262) ms,
///   independently, as ARIA draws them; each map reads one block (`block_bytes`) and writes
///   `output_ratio` of it, shared evenly by the reduces. `f(d) = a·d^b` with `b` from
///   `reduce_exponent` and `a` so that the drawn times are the reduces' full-input times
///   with mean-one noise.
/// - Arrivals: the first job at 0 s, then exponential gaps of mean `mean_interarrival_s`
///   (all at 0 when it is not positive).
pub fn facebook_synthetic(
    jobs: usize,
    mean_interarrival_s: f64,
    options: &WorkloadOptions,
) -> Vec<SimJob> {
    let mut rng = options.rng();
    let bins = bin_order(jobs, &mut rng);
    let mut submit = 0.0;
    bins.into_iter()
        .enumerate()
        .map(|(i, bin)| {
            if i > 0 && mean_interarrival_s > 0.0 {
                submit += mean_interarrival_s * rng.sample::<f64, _>(Exp1);
            }
            let draft = draft(format!("fb{i}"), submit, bin, &mut rng, options);
            realise(draft, &mut rng, options)
        })
        .collect()
}

/// Table I's bins for `jobs` jobs (largest-remainder apportionment, ties to the lower bin),
/// shuffled.
fn bin_order(jobs: usize, rng: &mut Rng) -> Vec<FacebookBin> {
    let table: u64 = FACEBOOK_TABLE_I.iter().map(|b| u64::from(b.jobs)).sum();
    let quota = |b: &FacebookBin| jobs as u64 * u64::from(b.jobs);
    let mut counts: Vec<u64> = FACEBOOK_TABLE_I.iter().map(|b| quota(b) / table).collect();
    let mut by_remainder: Vec<usize> = (0..FACEBOOK_TABLE_I.len()).collect();
    by_remainder.sort_by_key(|&i| std::cmp::Reverse(quota(&FACEBOOK_TABLE_I[i]) % table));
    let short = jobs as u64 - counts.iter().sum::<u64>();
    for &i in by_remainder.iter().take(short as usize) {
        counts[i] += 1;
    }
    let mut order: Vec<FacebookBin> = FACEBOOK_TABLE_I
        .iter()
        .zip(counts)
        .flat_map(|(&b, n)| std::iter::repeat_n(b, n as usize))
        .collect();
    order.shuffle(rng);
    order
}

fn draft(
    id: String,
    submit: Seconds,
    bin: FacebookBin,
    rng: &mut Rng,
    o: &WorkloadOptions,
) -> Draft {
    let block = o.block_bytes;
    let maps = (0..bin.maps)
        .map(|_| MapDraft {
            input: Some(block),
            duration: None,
            replicas: Vec::new(),
        })
        .collect();
    // Every task independently from ARIA's fit: the law's mean with ARIA's σ is exactly it.
    let map_law = MapLaw {
        mean: ARIA_MAP_MS.mean_seconds(),
        sigma: ARIA_MAP_MS.sigma,
        per_block: false,
    };
    let reduces = match bin.reduces {
        0 => Reduces::None,
        r => {
            let shuffle = f64::from(bin.maps) * block as f64 * o.output_ratio;
            let input = (shuffle / f64::from(r)) as u64;
            let times = (0..r).map(|_| Some(draw::seconds(rng, ARIA_REDUCE_MS)));
            Reduces::Timed {
                reduces: times.map(|t| (input, t)).collect(),
                fallback_b: draw::uniform(rng, o.reduce_exponent),
            }
        }
    };
    Draft {
        id,
        submit,
        maps,
        map_law,
        reduces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn counts(jobs: usize) -> Vec<usize> {
        let order = bin_order(jobs, &mut Rng::seed_from_u64(5));
        assert_eq!(order.len(), jobs);
        FACEBOOK_TABLE_I
            .iter()
            .map(|b| order.iter().filter(|o| *o == b).count())
            .collect()
    }

    #[test]
    fn table_one_sums_to_a_thousand_jobs() {
        assert_eq!(FACEBOOK_TABLE_I.iter().map(|b| b.jobs).sum::<u32>(), 1000);
    }

    #[test]
    fn bins_are_table_ones_counts_apportioned() {
        let table: Vec<usize> = FACEBOOK_TABLE_I.iter().map(|b| b.jobs as usize).collect();
        assert_eq!(counts(1000), table);
        assert_eq!(
            counts(2000),
            table.iter().map(|n| 2 * n).collect::<Vec<_>>()
        );
        assert_eq!(counts(10), vec![4, 2, 1, 1, 1, 1, 0, 0, 0, 0]);
        assert_eq!(counts(0), vec![0; 10]);
    }

    #[test]
    fn the_order_is_shuffled() {
        let order = bin_order(1000, &mut Rng::seed_from_u64(5));
        assert!(order[..100].iter().any(|b| b.maps != 1));
        assert!(order[900..].iter().any(|b| b.maps == 1));
    }
}
