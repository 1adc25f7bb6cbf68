//! A job as the simulator runs it: what the policy is told (`JobSpec`, with a profile from
//! sample runs) and the truth it is not (every task's real duration, the shuffle's real
//! bandwidth, reduce skew and noise). Workload builders make these; the engine and the k_max
//! oracle consume them.

use yard_appmaster::policy::{PowerLaw, Profile, Seconds};

/// One map task's truth.
#[derive(Debug, Clone, PartialEq)]
pub struct MapTruth {
    /// Seconds the map takes node-local on a normal node (rack-local and remote runs, and
    /// slow nodes, scale it: see `ClusterConfig`).
    pub duration: Seconds,
    pub input_bytes: u64,
    /// Bytes of output, spread over the reduces by `JobTruth::partition_shares`.
    pub output_bytes: u64,
    /// Nodes (indices into the cluster) holding the input split's replicas.
    pub replicas: Vec<u32>,
}

/// What the simulator knows about a job and the policy does not.
#[derive(Debug, Clone, PartialEq)]
pub struct JobTruth {
    pub maps: Vec<MapTruth>,
    /// Each reduce's share of every map's output; sums to 1 (uniform without skew, Zipf with).
    pub partition_shares: Vec<f64>,
    /// `f(d) = a·d^b` with each reduce's multiplicative noise `e_r` (mean 1, Dart eq. 9).
    pub reduce_time: PowerLaw,
    pub reduce_noise: Vec<f64>,
    /// σ of `ln e_r`: the spread the noise was drawn with (or, for recorded reduce times, the
    /// spread of theirs). The simulator's floor estimate (`crate::floor`) redraws `e_r` with it.
    pub reduce_noise_sigma: f64,
    /// The job's shuffle bottleneck, bytes per second.
    pub shuffle_bandwidth: f64,
}

impl JobTruth {
    pub fn reduces(&self) -> u32 {
        self.partition_shares.len() as u32
    }

    /// Every reduce's input in whole bytes when the counted maps output `total` bytes: its
    /// share of them, rounded so that the inputs sum to `total` exactly ([`split_by_shares`]).
    /// The engine hands reduces these (`ReduceInputReady`) and the oracle times them.
    pub fn reduce_inputs(&self, total: u64) -> Vec<u64> {
        split_by_shares(total, &self.partition_shares)
    }

    /// The true time of reduce `r` on `bytes` of input. (The oracle's `reduce_times` computes
    /// the same product, reusing `f(d)` across reduces of equal input: change both together.)
    pub fn reduce_seconds(&self, r: u32, bytes: f64) -> Seconds {
        self.reduce_time.at(bytes) * self.reduce_noise[r as usize]
    }
}

/// A job ready to simulate. Deadline and containers are set per experiment configuration
/// (C1–C3) from the job's MDT and MRA, so they are not here.
#[derive(Debug, Clone, PartialEq)]
pub struct SimJob {
    pub id: String,
    /// Seconds after the workload's start.
    pub submit: Seconds,
    pub truth: JobTruth,
    /// What the policy is told: measured on sample runs of the same job shape (Dart §5.1),
    /// never copied from `truth`.
    pub profile: Profile,
}

impl SimJob {
    pub fn maps(&self) -> u32 {
        self.truth.maps.len() as u32
    }

    pub fn reduces(&self) -> u32 {
        self.truth.reduces()
    }

    /// Map and reduce tasks: what the size bins count.
    pub fn tasks(&self) -> u64 {
        u64::from(self.maps()) + u64::from(self.reduces())
    }

    /// Its task-seconds: every map node-local on a normal node, every reduce on its whole
    /// input; what it would take on one container.
    pub fn task_seconds(&self) -> Seconds {
        let t = &self.truth;
        let maps: f64 = t.maps.iter().map(|m| m.duration).sum();
        let output: u64 = t.maps.iter().map(|m| m.output_bytes).sum();
        let reduces: f64 = t
            .reduce_inputs(output)
            .iter()
            .enumerate()
            .map(|(r, &d)| t.reduce_seconds(r as u32, d as f64))
            .sum();
        maps + reduces
    }

    /// MRA (EVALUATION.md): containers enough that every task of a phase starts at once.
    pub fn mra(&self) -> u32 {
        self.maps().max(self.reduces()).max(1)
    }
}

/// `total` bytes split in proportion to `shares` (equally when they do not sum to a positive
/// number), in whole bytes that sum to `total` exactly: each part is its exact share rounded
/// down, and the bytes left go one each to the parts with the largest fractions, the lower
/// index first among equal ones (the largest-remainder method). Equal shares thus give the
/// first `total % n` parts one byte more, as the SWIM reader shares a job's bytes among its
/// reduces. Rounding each share on its own would lose or invent bytes: 12,866 bytes over
/// 11,206 equal reduces rounded to 1 byte each, 13 % of them gone.
pub(crate) fn split_by_shares(total: u64, shares: &[f64]) -> Vec<u64> {
    let n = shares.len();
    if n == 0 {
        return Vec::new();
    }
    let sum: f64 = shares.iter().sum();
    let equal = !(sum.is_finite() && sum > 0.0);
    let exact: Vec<f64> = shares
        .iter()
        .map(|&s| match equal {
            true => total as f64 / n as f64,
            false => total as f64 * (s.max(0.0) / sum),
        })
        .collect();
    let mut parts: Vec<u64> = exact
        .iter()
        .map(|x| x.floor().clamp(0.0, total as f64) as u64)
        .collect();
    let given: u128 = parts.iter().map(|&p| u128::from(p)).sum();
    // Largest fractions first; the lower index first among equal ones.
    let mut order: Vec<usize> = (0..n).collect();
    let fraction = |i: usize| exact[i] - parts[i] as f64;
    order.sort_by(|&a, &b| fraction(b).total_cmp(&fraction(a)).then(a.cmp(&b)));
    if given <= u128::from(total) {
        let mut left = u128::from(total) - given;
        // At most one byte each, unless floating point lost more than a byte somewhere.
        while left > 0 {
            for &i in &order {
                if left == 0 {
                    break;
                }
                parts[i] += 1;
                left -= 1;
            }
        }
    } else {
        // Floating point gave more than there is: take it back from the smallest fractions.
        let mut over = given - u128::from(total);
        while over > 0 {
            for &i in order.iter().rev() {
                if over == 0 {
                    break;
                }
                if parts[i] > 0 {
                    parts[i] -= 1;
                    over -= 1;
                }
            }
        }
    }
    parts
}

#[cfg(test)]
impl SimJob {
    /// A scripted job for tests: maps of the given node-local durations reading 100 bytes
    /// on node 0 and writing 1000, `reduces` reduces taking 1 ms a byte, a 1000 B/s link, and
    /// a profile that knows it (maps 10 s node-local, 15 s remote).
    pub(crate) fn scripted(id: &str, submit: Seconds, durations: &[f64], reduces: u32) -> SimJob {
        SimJob {
            id: id.into(),
            submit,
            truth: JobTruth {
                maps: durations
                    .iter()
                    .map(|&d| MapTruth {
                        duration: d,
                        input_bytes: 100,
                        output_bytes: 1000,
                        replicas: vec![0],
                    })
                    .collect(),
                partition_shares: vec![1.0 / f64::from(reduces.max(1)); reduces as usize],
                reduce_time: PowerLaw {
                    a: 0.001,
                    b: 1.0,
                    spread: 0.0,
                },
                reduce_noise: vec![1.0; reduces as usize],
                reduce_noise_sigma: 0.0,
                shuffle_bandwidth: 1000.0,
            },
            profile: Profile {
                map_local: 10.0,
                map_remote: 15.0,
                map_shortest: None,
                map_spread: None,
                partition_bytes: 1000.0 / f64::from(reduces.max(1)),
                shuffle_bandwidth: 1000.0,
                reduce_time: PowerLaw {
                    a: 0.001,
                    b: 1.0,
                    spread: 0.0,
                },
                previous_runs: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_split_whole_bytes_that_sum_to_the_total() {
        // FB-2010's job2719: 12,866 bytes over 11,206 equal reduces. Rounded one by one, each
        // got 1 byte and 1,660 bytes vanished; split, the first 1,660 get 2.
        let parts = split_by_shares(12_866, &vec![1.0 / 11_206.0; 11_206]);
        assert_eq!(parts.iter().sum::<u64>(), 12_866);
        assert!(parts[..1_660].iter().all(|&p| p == 2));
        assert!(parts[1_660..].iter().all(|&p| p == 1));
        // Equal shares: the first total % n get a byte more, as the SWIM reader gives them.
        assert_eq!(split_by_shares(7, &[1.0 / 3.0; 3]), vec![3, 2, 2]);
        assert_eq!(split_by_shares(4, &[1.0 / 3.0; 3]), vec![2, 1, 1]);
        // Unequal shares: the largest fractions get the bytes left.
        assert_eq!(split_by_shares(10, &[0.25, 0.75]), vec![3, 7]);
        assert_eq!(split_by_shares(10, &[0.14, 0.43, 0.43]), vec![2, 4, 4]);
        assert_eq!(split_by_shares(0, &[0.5, 0.5]), vec![0, 0]);
        assert!(split_by_shares(5, &[]).is_empty());
        assert_eq!(
            split_by_shares(5, &[0.0, 0.0]),
            vec![3, 2],
            "no weights: equal"
        );
        // Zipf shares of many reduces and huge totals still sum exactly.
        let zipf: Vec<f64> = {
            let w: Vec<f64> = (1..=545).map(|r| f64::from(r).powf(-1.0)).collect();
            let t: f64 = w.iter().sum();
            w.into_iter().map(|x| x / t).collect()
        };
        for total in [1, 544, 545, 999_983, 3 << 40, u64::MAX / 3] {
            let parts = split_by_shares(total, &zipf);
            let sum: u128 = parts.iter().map(|&p| u128::from(p)).sum();
            assert_eq!(sum, u128::from(total), "{total}");
            for (p, s) in parts.iter().zip(&zipf) {
                assert!((*p as f64 - total as f64 * s).abs() <= 1.0 + total as f64 * 1e-12);
            }
        }
    }
}
