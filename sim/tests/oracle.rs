//! The k_max oracle against brute force: every subset of maps, every assignment of maps to
//! containers in every order, every assignment of reduces, on small random jobs.

/// In a module so that `cargo test -p yard-sim oracle` runs these too.
mod oracle {
    use proptest::prelude::*;
    use proptest::test_runner::{FileFailurePersistence, RngSeed};
    use yard_appmaster::policy::PowerLaw;
    use yard_sim::oracle::{byte_bound, byte_max, completion, k_max, k_max_schedule, mdt};
    use yard_sim::{JobTruth, MapTruth};

    #[derive(Debug, Clone)]
    struct Case {
        truth: JobTruth,
        speeds: Vec<f64>,
        /// A fraction of the largest brute-force completion: the deadline.
        deadline_at: f64,
    }

    fn config(cases: u32) -> ProptestConfig {
        ProptestConfig {
            cases,
            rng_seed: RngSeed::Fixed(0x0AC1E),
            failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
            ..ProptestConfig::default()
        }
    }

    fn speed() -> impl Strategy<Value = f64> {
        prop_oneof![3 => Just(1.0), 1 => Just(4.0), 1 => 1.0f64..3.0]
    }

    /// A job of `maps` maps (durations 0.5–20 s), outputs all `output` bytes when `equal`, else
    /// drawn per map, 0–2 reduces with random shares, power and noise.
    fn case(max_maps: usize, max_containers: usize, equal: bool) -> impl Strategy<Value = Case> {
        (
            1..=max_maps,
            1..=max_containers,
            0usize..=2,
            0u64..2000,
            prop_oneof![Just(10.0f64), Just(100.0), Just(1e4)],
        )
            .prop_flat_map(move |(m, c, r, output, bandwidth)| {
                (
                    prop::collection::vec((0.5f64..20.0, 0u64..2000), m),
                    prop::collection::vec(speed(), c),
                    prop::collection::vec((0.1f64..1.0, 0.5f64..1.5), r),
                    0.0f64..0.05,
                    0.5f64..1.3,
                    0.0f64..1.1,
                )
                    .prop_map(move |(maps, speeds, reduces, a, b, deadline_at)| {
                        let total: f64 = reduces.iter().map(|r| r.0).sum();
                        Case {
                            truth: JobTruth {
                                maps: maps
                                    .into_iter()
                                    .map(|(duration, o)| MapTruth {
                                        duration,
                                        input_bytes: 0,
                                        output_bytes: if equal { output } else { o },
                                        replicas: vec![0],
                                    })
                                    .collect(),
                                partition_shares: reduces.iter().map(|r| r.0 / total).collect(),
                                reduce_time: PowerLaw { a, b, spread: 0.0 },
                                reduce_noise: reduces.iter().map(|r| r.1).collect(),
                                reduce_noise_sigma: 0.0,
                                shuffle_bandwidth: bandwidth,
                            },
                            speeds,
                            deadline_at,
                        }
                    })
            })
    }

    /// Calls `f` with every permutation of `items` (Heap's algorithm).
    fn permutations(items: &mut [usize], n: usize, f: &mut impl FnMut(&[usize])) {
        if n <= 1 {
            f(items);
            return;
        }
        for i in 0..n - 1 {
            permutations(items, n - 1, f);
            if n % 2 == 0 {
                items.swap(i, n - 1);
            } else {
                items.swap(0, n - 1);
            }
        }
        permutations(items, n - 1, f);
    }

    /// Calls `f` with every way to cut `n` items into `parts` consecutive runs (possibly empty):
    /// the cut positions, non-decreasing.
    fn cuts(n: usize, parts: usize, prefix: &mut Vec<usize>, f: &mut impl FnMut(&[usize])) {
        if prefix.len() == parts - 1 {
            f(prefix);
            return;
        }
        let from = prefix.last().copied().unwrap_or(0);
        for c in from..=n {
            prefix.push(c);
            cuts(n, parts, prefix, f);
            prefix.pop();
        }
    }

    /// The earliest completion of exactly the maps in `subset`, by brute force: every
    /// distribution of the maps over the containers as ordered runs (a permutation cut into C
    /// runs), the FIFO link simulated, then every assignment of reduces.
    fn brute_completion(truth: &JobTruth, subset: &[usize], speeds: &[f64]) -> f64 {
        let reduces = truth.partition_shares.len();
        let mut best_maps = f64::INFINITY;
        let mut order = subset.to_vec();
        let n = order.len();
        permutations(&mut order, n, &mut |perm| {
            cuts(n, speeds.len(), &mut Vec::new(), &mut |cut| {
                let mut arrivals = Vec::new();
                let mut start = 0;
                for (j, &s) in speeds.iter().enumerate() {
                    let end = cut.get(j).copied().unwrap_or(n);
                    let mut t = 0.0;
                    for &m in &perm[start..end] {
                        t += truth.maps[m].duration * s;
                        arrivals.push((t, truth.maps[m].output_bytes));
                    }
                    start = end;
                }
                let end = if reduces == 0 {
                    arrivals.iter().map(|a| a.0).fold(0.0, f64::max)
                } else {
                    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let mut free: f64 = 0.0;
                    for (finish, bytes) in arrivals {
                        free = free.max(finish) + bytes as f64 / truth.shuffle_bandwidth;
                    }
                    free
                };
                best_maps = best_maps.min(end);
            });
        });
        if reduces == 0 {
            return best_maps;
        }
        // Each reduce gets its share in whole bytes, as the engine hands it over.
        let bytes: u64 = subset.iter().map(|&m| truth.maps[m].output_bytes).sum();
        let times: Vec<f64> = (0..reduces)
            .map(|r| {
                let input = (bytes as f64 * truth.partition_shares[r]).round();
                truth.reduce_seconds(r as u32, input)
            })
            .collect();
        let c = speeds.len();
        let mut best_reduces = f64::INFINITY;
        for code in 0..c.pow(reduces as u32) {
            let mut loads = vec![0.0; c];
            let mut x = code;
            for t in &times {
                loads[x % c] += t * speeds[x % c];
                x /= c;
            }
            best_reduces = best_reduces.min(loads.iter().copied().fold(0.0, f64::max));
        }
        best_maps + best_reduces
    }

    /// Every subset's brute-force completion, by bitmask.
    fn brute_all(truth: &JobTruth, speeds: &[f64]) -> Vec<(Vec<usize>, f64)> {
        let m = truth.maps.len();
        (0u32..1 << m)
            .map(|mask| {
                let subset: Vec<usize> = (0..m).filter(|i| mask & (1 << i) != 0).collect();
                let c = brute_completion(truth, &subset, speeds);
                (subset, c)
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    fn deadline(case: &Case, all: &[(Vec<usize>, f64)]) -> f64 {
        let top = all.iter().map(|s| s.1).fold(0.0, f64::max);
        case.deadline_at * top
    }

    proptest! {
        #![proptest_config(config(192))]

        /// Equal outputs: the oracle's completion of every subset is the brute-force optimum, and
        /// its k_max is the true one.
        #[test]
        fn k_max_is_exact_against_brute_force(case in case(6, 3, true)) {
            let all = brute_all(&case.truth, &case.speeds);
            for (subset, brute) in &all {
                let oracle = completion(&case.truth, subset, &case.speeds);
                prop_assert!(close(oracle, *brute), "subset {subset:?}: oracle {oracle}, brute {brute}");
            }
            let d = deadline(&case, &all);
            let truth_k = all.iter().filter(|s| s.1 <= d).map(|s| s.0.len()).max().unwrap_or(0);
            prop_assert_eq!(k_max(&case.truth, &case.speeds, d) as usize, truth_k, "deadline {}", d);
        }

        /// Unequal outputs: the oracle's answers are schedules that exist (never better than brute
        /// force), so its k_max never exceeds the true one.
        #[test]
        fn k_max_is_achievable_with_unequal_outputs(case in case(5, 3, false)) {
            let all = brute_all(&case.truth, &case.speeds);
            for (subset, brute) in &all {
                let oracle = completion(&case.truth, subset, &case.speeds);
                prop_assert!(oracle >= brute - 1e-9 * brute.max(1.0), "subset {subset:?}: oracle {oracle} < brute {brute}");
            }
            let d = deadline(&case, &all);
            let truth_k = all.iter().filter(|s| s.1 <= d).map(|s| s.0.len()).max().unwrap_or(0);
            prop_assert!(k_max(&case.truth, &case.speeds, d) as usize <= truth_k);
        }

        /// The byte oracle against brute force (the most input bytes of any subset whose
        /// brute-force completion meets the deadline): never below it; equal to it where it
        /// says exact; and the fractional bound over all maps never below it either.
        #[test]
        fn byte_max_is_exact_or_a_bound_against_brute_force(
            case in case(5, 3, false),
            inputs in prop::collection::vec(0u64..1000, 5),
        ) {
            let mut t = case.truth.clone();
            for (m, b) in t.maps.iter_mut().zip(&inputs) {
                m.input_bytes = *b;
            }
            let all = brute_all(&t, &case.speeds);
            let d = deadline(&case, &all);
            let optimum = all
                .iter()
                .filter(|s| s.1 <= d)
                .map(|s| s.0.iter().map(|&i| t.maps[i].input_bytes).sum::<u64>())
                .max()
                .unwrap_or(0);
            let got = byte_max(&t, &case.speeds, d, &k_max_schedule(&t, &case.speeds, d));
            prop_assert!(got.bytes >= optimum, "{got:?} below the optimum {optimum} (deadline {d})");
            if got.exact {
                prop_assert_eq!(got.bytes, optimum, "exact, deadline {}", d);
            }
            let every: Vec<usize> = (0..t.maps.len()).collect();
            let bound = byte_bound(&t, &every, &case.speeds, d);
            prop_assert!(bound >= optimum, "bound {bound} below the optimum {optimum}");
        }

        /// With MRA containers of speed 1 and the deadline at MDT, every map fits; and MDT does not
        /// depend on the order the maps are listed in.
        #[test]
        fn all_maps_fit_by_mdt_under_mra(case in case(40, 1, false)) {
            let t = &case.truth;
            let mra = t.maps.len().max(t.partition_shares.len()).max(1);
            let d = mdt(t);
            prop_assert_eq!(k_max(t, &vec![1.0; mra], d) as usize, t.maps.len());
            let mut reversed = t.clone();
            reversed.maps.reverse();
            prop_assert_eq!(mdt(&reversed), d);
        }

        /// Larger jobs (the list-scheduling branch): the k shortest maps the oracle reports do
        /// finish by the deadline, and a deadline at a k-map completion admits at least k maps.
        #[test]
        fn k_max_fits_on_larger_jobs(case in case(60, 9, true), at in 0.0f64..1.0) {
            let t = &case.truth;
            let mut shortest: Vec<usize> = (0..t.maps.len()).collect();
            shortest.sort_by(|&a, &b| t.maps[a].duration.total_cmp(&t.maps[b].duration));
            let full = completion(t, &shortest, &case.speeds);
            let d = case.deadline_at * full;
            let k = k_max(t, &case.speeds, d) as usize;
            if k > 0 {
                prop_assert!(completion(t, &shortest[..k], &case.speeds) <= d);
            }
            let j = ((at * t.maps.len() as f64) as usize).max(1);
            let dj = completion(t, &shortest[..j], &case.speeds);
            prop_assert!(k_max(t, &case.speeds, dj) as usize >= j);
        }
    }

    /// A job of `m` maps with log-normal-ish durations (deterministic), outputs proportional to
    /// duration, 50 reduces.
    fn big_job(m: usize) -> JobTruth {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let maps = (0..m)
            .map(|_| {
                let duration = 20.0 * (1.5 * (next() - 0.5)).exp();
                MapTruth {
                    duration,
                    input_bytes: 64 << 20,
                    output_bytes: (duration * 1e6) as u64,
                    replicas: vec![0],
                }
            })
            .collect();
        JobTruth {
            maps,
            partition_shares: vec![1.0 / 50.0; 50],
            reduce_time: PowerLaw {
                a: 1e-6,
                b: 1.0,
                spread: 0.0,
            },
            reduce_noise: vec![1.0; 50],
            reduce_noise_sigma: 0.0,
            shuffle_bandwidth: 5e8,
        }
    }

    /// A 100,000-map job under C1 (MRA containers, 0.95·MDT) and C2 (half the containers, 1.6·MDT,
    /// an eighth of them slow): the search terminates.
    #[test]
    fn a_hundred_thousand_maps() {
        let t = big_job(100_000);
        let d = mdt(&t);
        let c1 = k_max(&t, &vec![1.0; 100_000], 0.95 * d);
        assert!(c1 > 0 && c1 < 100_000, "{c1}");
        let c2: Vec<f64> = (0..50_000)
            .map(|i| if i % 8 == 0 { 4.0 } else { 1.0 })
            .collect();
        let k = k_max(&t, &c2, 1.6 * d);
        assert!(k > 0 && k <= 100_000, "{k}");
    }

    /// `cargo test --release -p yard-sim --test oracle -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn timing_a_hundred_thousand_maps() {
        let t = big_job(100_000);
        let start = std::time::Instant::now();
        let d = mdt(&t);
        println!("mdt {d:.1} s in {:?}", start.elapsed());
        let mut independent = t.clone();
        for (i, m) in independent.maps.iter_mut().enumerate() {
            m.output_bytes = (i as u64 * 7919 % 100_000) * 400;
        }
        let mut map_bound = t.clone();
        map_bound.shuffle_bandwidth = 1e12;
        map_bound.reduce_time.a = 1e-9;
        let jobs = [
            (&t, "outputs ∝ duration"),
            (&independent, "outputs independent"),
            (&map_bound, "map-bound"),
        ];
        for (job, name) in jobs {
            let d = mdt(job);
            for (containers, slow, mu) in [
                (100_000, false, 0.95),
                (100_000, true, 0.95),
                (50_000, true, 1.6),
                (50_000, false, 0.8),
                (50_000, false, 1.3),
                (5_000, true, 0.8),
                (5_000, false, 12.0),
            ] {
                let speeds: Vec<f64> = (0..containers)
                    .map(|i| if slow && i % 8 == 0 { 4.0 } else { 1.0 })
                    .collect();
                let start = std::time::Instant::now();
                let k = k_max(job, &speeds, mu * d);
                println!(
                    "{name}: C {containers} slow {slow} μ {mu}: k_max {k} in {:?}",
                    start.elapsed()
                );
            }
        }
    }
}
