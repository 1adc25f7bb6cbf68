use super::*;
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

/// Digest E1: 12 blocks, jobs needing 3, 7, 10 and (just arrived) 12: subjobs 3, 4, 3, 2
/// blocks relevant to 4, 3, 2, 1 jobs; 12 block reads shared against 32 unshared.
#[test]
fn e1_decomposition() {
    let sizes = decompose(&[3.0, 7.0, 10.0, 12.0]).unwrap();
    assert_eq!(sizes, [3.0, 4.0, 3.0, 2.0]);
    let relevant: Vec<usize> = (1..=4).map(|k| 4 - k + 1).collect();
    assert_eq!(relevant, [4, 3, 2, 1]);
    assert_eq!(sizes.iter().sum::<f64>(), 12.0);
    let unshared: f64 = [3.0, 7.0, 10.0, 12.0].iter().sum();
    assert_eq!(unshared, 32.0);
    assert!(decompose(&[5.0, 3.0]).is_err(), "not nested");
}

/// E1 block by block: a cyclic scan reaching the same state needs exactly those sets.
#[test]
fn e1_cyclic_scan_reaches_the_nested_sets() {
    let mut scan = CyclicScan::new(12);
    let read = |scan: &mut CyclicScan, n: usize| {
        for _ in 0..n {
            let (b, _) = scan.next_block().unwrap();
            scan.block_done(b);
        }
    };
    scan.attach(1);
    read(&mut scan, 4);
    scan.attach(2);
    read(&mut scan, 3);
    scan.attach(3);
    read(&mut scan, 2);
    scan.attach(4);
    // Job 1 read 9 blocks, job 2 five, job 3 two, job 4 none: E1's state.
    assert_eq!(scan.remaining(), [3, 7, 10, 12]);
    let sizes = decompose(&[3.0, 7.0, 10.0, 12.0]).unwrap();
    assert_eq!(sizes, [3.0, 4.0, 3.0, 2.0]);
    // Reading on: the next 3 blocks finish job 1 and serve all four.
    for _ in 0..3 {
        let (b, riders) = scan.next_block().unwrap();
        assert_eq!(riders, [1, 2, 3, 4]);
        let done = scan.block_done(b);
        assert!(done.is_empty() || done == [1]);
    }
    assert_eq!(scan.remaining(), [4, 7, 9]);
    let u = scan.needed();
    for k in 1..u.len() {
        assert!(
            u[k - 1].iter().all(|b| u[k].contains(b)),
            "U_{k} ⊆ U_{}",
            k + 1
        );
    }
}

/// A lost read counts for nobody and is read again; a job that leaves stops riding.
#[test]
fn an_abandoned_read_comes_round_again_and_a_detached_job_rides_no_more() {
    let mut scan = CyclicScan::new(3);
    scan.attach(1);
    scan.attach(2);
    assert_eq!(scan.waiting(), 3);
    let (b0, riders) = scan.next_block().unwrap();
    assert_eq!((b0, riders), (0, vec![1, 2]));
    assert_eq!(scan.waiting(), 2, "block 0 is being read");
    scan.abandon(b0);
    assert_eq!(scan.remaining(), [3, 3], "the lost read counted for nobody");
    assert_eq!(scan.waiting(), 3);
    let (b1, _) = scan.next_block().unwrap();
    scan.detach(2);
    assert!(scan.block_done(b1).is_empty());
    assert_eq!(scan.remaining(), [2]);
    let (b2, riders) = scan.next_block().unwrap();
    assert_eq!((b2, riders), (2, vec![1]));
    scan.block_done(b2);
    // The wrap-around finds the abandoned block.
    let (again, _) = scan.next_block().unwrap();
    assert_eq!(again, b0);
    assert_eq!(scan.block_done(again), [1]);
    assert_eq!(scan.waiting(), 0);
}

/// Digest E2: chains A (4, 1) and B (3), unit weights: A1, A2, B for Σ w·C = 17, which brute
/// force confirms; plain Smith on the heads would give 18.
#[test]
fn e2_generalized_smith() {
    let chains = vec![vec![(4.0, 1.0), (1.0, 1.0)], vec![(3.0, 1.0)]];
    let order = generalized_smith(&chains);
    assert_eq!(order, [(0, 0), (0, 1), (1, 0)]);
    assert_eq!(weighted_completion(&chains, &order), 17.0);
    assert_eq!(brute_force(&chains), 17.0);
    assert_eq!(
        weighted_completion(&chains, &[(1, 0), (0, 0), (0, 1)]),
        18.0
    );
    assert_eq!(
        weighted_completion(&chains, &[(0, 0), (1, 0), (0, 1)]),
        19.0
    );
}

fn weighted_completion(chains: &[Vec<(f64, f64)>], order: &[(usize, usize)]) -> f64 {
    let mut t = 0.0;
    order
        .iter()
        .map(|&(d, i)| {
            t += chains[d][i].0;
            chains[d][i].1 * t
        })
        .sum()
}

/// The best Σ w·C over every order that keeps each chain's order.
fn brute_force(chains: &[Vec<(f64, f64)>]) -> f64 {
    fn go(chains: &[Vec<(f64, f64)>], next: &mut Vec<usize>, t: f64, acc: f64, best: &mut f64) {
        let mut any = false;
        for d in 0..chains.len() {
            if next[d] < chains[d].len() {
                any = true;
                let (p, w) = chains[d][next[d]];
                next[d] += 1;
                go(chains, next, t + p, acc + w * (t + p), best);
                next[d] -= 1;
            }
        }
        if !any {
            *best = best.min(acc);
        }
    }
    let mut best = f64::INFINITY;
    go(chains, &mut vec![0; chains.len()], 0.0, 0.0, &mut best);
    best
}

/// Digest E3a: independent jobs p = (2, 3, 1), due (3, 6, 2), lateness: order 3, 1, 2.
#[test]
fn e3a_backwards_dp_independent() {
    let p = [2.0, 3.0, 1.0];
    let due = [3.0, 6.0, 2.0];
    let order = backwards_dp(&p, &[vec![], vec![], vec![]], |j, c| c - due[j]);
    assert_eq!(order, [2, 0, 1]);
    assert_eq!(max_lateness(&p, &due, &order), 0.0);
}

/// Digest E3b: A1 ≺ A2 (p 2 due 10; p 1 due 3), B (p 2 due 4): A1, A2, B with Lmax 1; the
/// printed rule (no predecessors) would put A1 last, against precedence.
#[test]
fn e3b_backwards_dp_with_a_chain() {
    let p = [2.0, 1.0, 2.0];
    let due = [10.0, 3.0, 4.0];
    let preds = [vec![], vec![0], vec![]];
    let order = backwards_dp(&p, &preds, |j, c| c - due[j]);
    assert_eq!(order, [0, 1, 2]);
    assert_eq!(max_lateness(&p, &due, &order), 1.0);
}

fn max_lateness(p: &[f64], due: &[f64], order: &[usize]) -> f64 {
    let mut t = 0.0;
    order
        .iter()
        .map(|&j| {
            t += p[j];
            t - due[j]
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Digest E4: S = 10, J1 (20, 2, 6), J2 (30, 2, 10), J3 (12, 1, 3).
#[test]
fn e4_packing_without_precedence() {
    let jobs = [(20.0, 2, 6), (30.0, 2, 10), (12.0, 1, 3)].map(|(work, min, max)| PackJob {
        work,
        min,
        max,
        preds: vec![],
    });
    let iv = pack(10, &jobs, &[0, 1, 2]);
    assert_eq!(iv.len(), 3);
    assert_eq!(iv[0].alloc, [(0, 6), (1, 3), (2, 1)]);
    assert_eq!(iv[0].finishes, 0);
    assert!(close(iv[0].end, 10.0 / 3.0));
    assert_eq!(iv[1].alloc, [(1, 9), (2, 1)]);
    assert!(close(iv[1].end, 50.0 / 9.0));
    assert_eq!(iv[2].alloc, [(2, 3)], "7 slots idle: J3 is at its maximum");
    assert!(close(iv[2].end, 208.0 / 27.0));
}

/// Digest E5: S = 10, priority A1, B, A2 with A1 ≺ A2, each work 10, m 1, M 10.
#[test]
fn e5_packing_with_a_chain() {
    let job = |preds| PackJob {
        work: 10.0,
        min: 1,
        max: 10,
        preds,
    };
    // 0 = A1, 1 = A2, 2 = B.
    let jobs = [job(vec![]), job(vec![0]), job(vec![])];
    let iv = pack(10, &jobs, &[0, 2, 1]);
    assert_eq!(iv[0].alloc, [(0, 9), (2, 1)]);
    assert!(close(iv[0].end, 10.0 / 9.0));
    assert_eq!(iv[1].alloc, [(2, 9), (1, 1)]);
    assert!(close(iv[1].end, 170.0 / 81.0));
    assert_eq!(iv[2].alloc, [(1, 10)]);
    assert!(close(iv[2].end, 3.0));
}

#[test]
fn minima_are_normalised_into_the_slots() {
    assert_eq!(normalise_minima(&[2, 2, 1], 10), [2, 2, 1]);
    assert_eq!(normalise_minima(&[1; 5], 3), [1, 1, 1, 0, 0]);
    let n = normalise_minima(&[10, 10, 5], 10);
    assert_eq!(n.iter().sum::<u32>(), 10);
    assert!(n.iter().zip([10, 10, 5]).all(|(a, b)| *a <= b));
}

fn config(policy: Policy, metric: Metric, slots: u32) -> PlannerConfig {
    PlannerConfig {
        slots,
        metric,
        policy,
        scan_fraction: 1.0,
    }
}

fn job(id: u64, dataset: usize, arrival_s: f64) -> ScanJob {
    ScanJob {
        id,
        dataset,
        arrival_s,
        min_slots: 1,
        max_slots: 100,
        weight: 1.0,
        deadline_s: None,
    }
}

fn run(
    policy: Policy,
    metric: Metric,
    jobs: &[ScanJob],
    datasets: &[Dataset],
) -> (Vec<Completion>, ScanStats) {
    let mut p = Planner::new(config(policy, metric, 10), datasets.to_vec()).unwrap();
    let mut done = Vec::new();
    for &j in jobs {
        done.extend(p.arrive(j).unwrap());
    }
    done.extend(p.advance(f64::INFINITY));
    assert_eq!(p.active(), 0);
    (done, p.stats().clone())
}

/// Two jobs on one dataset: the second joins half-way and rides the rest of the cycle, then
/// finishes with the half it missed (§2.2); it reads 1.5 datasets, not 2.
#[test]
fn a_second_job_rides_the_scan_and_finishes_after_the_wrap_around() {
    let ds = [Dataset {
        scan_s: 100.0,
        bytes: 1000.0,
    }];
    let jobs = [job(1, 0, 0.0), job(2, 0, 5.0)];
    let (done, stats) = run(Policy::Circumflex, Metric::AvgResponse, &jobs, &ds);
    assert_eq!(done.len(), 2);
    // 10 slots: a full scan takes 10 s. Job 1 at 10, job 2 at 15.
    assert!(close(done[0].finish_s, 10.0) && done[0].job == 1);
    assert!(close(done[1].finish_s, 15.0) && done[1].job == 2);
    assert!(close(stats.bytes_read, 1500.0));
    assert!(close(stats.work_s, 150.0));
    let (done, stats) = run(Policy::Flex, Metric::AvgResponse, &jobs, &ds);
    assert_eq!(done.len(), 2);
    assert!(close(stats.bytes_read, 2000.0));
    let (_, stats) = run(
        Policy::Batch { window_s: 120.0 },
        Metric::AvgResponse,
        &jobs,
        &ds,
    );
    assert!(close(stats.bytes_read, 1000.0), "one batch, one scan");
    assert_eq!(stats.max_sharing, [2]);
}

/// BATCH waits for the window's end: dataset 0 of 2 has windows at 0, 120, …; dataset 1 at
/// 60, 180, … (offset evenly, §4).
#[test]
fn batch_windows_are_offset_per_dataset() {
    let ds = [Dataset {
        scan_s: 10.0,
        bytes: 1.0,
    }; 2];
    let jobs = [job(1, 0, 10.0), job(2, 1, 10.0)];
    let (done, _) = run(
        Policy::Batch { window_s: 120.0 },
        Metric::AvgResponse,
        &jobs,
        &ds,
    );
    let at = |id| done.iter().find(|c| c.job == id).unwrap().finish_s;
    assert!(close(at(2), 61.0), "{done:?}");
    assert!(close(at(1), 121.0), "{done:?}");
}

#[test]
fn the_planner_allocates_the_head_subjob_and_fills_freed_slots() {
    let ds = [Dataset {
        scan_s: 100.0,
        bytes: 1.0,
    }; 2];
    let mut p = Planner::new(
        config(Policy::Circumflex, Metric::AvgResponse, 10),
        ds.to_vec(),
    )
    .unwrap();
    p.arrive(job(1, 0, 0.0)).unwrap();
    p.arrive(job(2, 1, 0.0)).unwrap();
    p.arrive(job(3, 0, 1.0)).unwrap();
    let a = p.allocations();
    assert_eq!(a.iter().map(|a| a.slots).sum::<u32>(), 10);
    let d0 = a.iter().find(|a| a.dataset == 0).unwrap();
    assert_eq!(d0.jobs, [1, 3], "one read serves both jobs of dataset 0");
    let picks = p.slots_freed(&[0, 0], 10);
    assert_eq!(picks.len(), 10);
    for (i, t) in a.iter().enumerate() {
        assert_eq!(picks.iter().filter(|&&x| x == i).count() as u32, t.slots);
    }
    assert!(p.slots_freed(&[a[0].slots, a[1].slots], 3).is_empty());
    assert!(p.arrive(job(9, 7, 2.0)).is_err(), "an unknown dataset");
}

/// Two datasets, S = 10: A scans 20 slot-seconds, B 100 with its deadline at `b_due`; A's
/// deadline is `a_due`. Both arrive at 0.
fn two_scans(policy: Policy, a_due: Option<f64>, b_due: f64) -> Vec<Completion> {
    let ds = [20.0, 100.0].map(|scan_s| Dataset { scan_s, bytes: 1.0 });
    let a = ScanJob {
        deadline_s: a_due,
        ..job(1, 0, 0.0)
    };
    let b = ScanJob {
        deadline_s: Some(b_due),
        ..job(2, 1, 0.0)
    };
    let (mut done, _) = run(policy, Metric::AvgResponse, &[a, b], &ds);
    done.sort_by_key(|c| c.job);
    done
}

/// Smith runs the short A first (9 slots, B its minimum 1): A at 20/9 s, B at 12 s, past its
/// deadline 11.5, so B answers at 11.5 from 95 % of its dataset. Deadline-first runs B first
/// (9 slots): B whole at 100/9 s, A at 12 s; A has no deadline to lose, so it is taken.
#[test]
fn deadline_first_wins_a_deadline_that_costs_none() {
    let paper = two_scans(Policy::Circumflex, None, 11.5);
    assert!(close(paper[0].finish_s, 20.0 / 9.0));
    assert!(close(paper[1].finish_s, 11.5) && close(paper[1].processed, 0.95));
    assert_eq!(paper[1].outcome(), Some(Outcome::Partial));
    assert_eq!(paper[0].outcome(), None, "no deadline");
    let edf = two_scans(Policy::CircumflexEdf, None, 11.5);
    assert!(close(edf[1].finish_s, 100.0 / 9.0), "{edf:?}");
    assert_eq!(edf[1].outcome(), Some(Outcome::Full));
    assert!(
        close(edf[0].finish_s, 12.0),
        "the cost, to a job without a deadline"
    );
}

/// The same with A due at 3 s: B first would end A at 12 s, costing A the deadline the
/// paper's order meets, so the order stays the paper's.
#[test]
fn deadline_first_is_not_taken_when_it_would_cost_a_deadline() {
    let edf = two_scans(Policy::CircumflexEdf, Some(3.0), 11.5);
    assert_eq!(edf, two_scans(Policy::Circumflex, Some(3.0), 11.5));
    assert_eq!(edf[0].outcome(), Some(Outcome::Full));
    assert_eq!(edf[1].outcome(), Some(Outcome::Partial));
}

/// A job whose deadline comes before any of its dataset is scanned answers empty: under
/// BATCH while it waits for its window, or due on arrival.
#[test]
fn a_deadline_before_any_scan_gives_an_empty_answer() {
    let ds = [Dataset {
        scan_s: 10.0,
        bytes: 1.0,
    }];
    let waits = ScanJob {
        deadline_s: Some(50.0),
        ..job(1, 0, 10.0)
    };
    let late = ScanJob {
        deadline_s: Some(60.0),
        ..job(2, 0, 70.0)
    };
    let (done, stats) = run(
        Policy::Batch { window_s: 120.0 },
        Metric::AvgResponse,
        &[waits, late],
        &ds,
    );
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|c| c.outcome() == Some(Outcome::Empty)));
    assert!(close(done[0].finish_s, 50.0) && close(done[1].finish_s, 70.0));
    assert_eq!(stats.bytes_read, 0.0, "no window ran");
}

proptest! {
    /// The deadline-first order meets every deadline the order it starts from meets.
    #[test]
    fn deadline_first_keeps_every_deadline_met(
        spec in proptest::collection::vec((1u32..50, 0u32..3, 1u32..12, any::<bool>(), proptest::option::of(1u32..60)), 1..8),
        slots in 1u32..16,
    ) {
        let jobs: Vec<PackJob> = spec
            .iter()
            .enumerate()
            .map(|(i, &(w, m, extra, chained, _))| PackJob {
                work: f64::from(w),
                min: m,
                max: m + extra,
                preds: if chained && i > 0 { vec![i - 1] } else { vec![] },
            })
            .collect();
        let due: Vec<(usize, f64)> = spec
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, f64::from(s.4?))))
            .collect();
        let order: Vec<usize> = (0..jobs.len()).rev().collect();
        let before = meets_deadlines(slots, &jobs, &due, &order);
        let edf = deadline_first(slots, &jobs, &due, order);
        let mut sorted = edf.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..jobs.len()).collect::<Vec<_>>());
        let after = meets_deadlines(slots, &jobs, &due, &edf);
        for (b, a) in before.iter().zip(&after) {
            prop_assert!(!b || *a, "a deadline lost: {before:?} → {after:?}");
        }
    }

    /// Generalized Smith is optimal on chains (Sidney): brute force agrees on tiny instances.
    #[test]
    fn smith_is_optimal_on_chains(
        chains in proptest::collection::vec(
            proptest::collection::vec((1u32..20, 1u32..5), 1..4), 1..4)
    ) {
        let chains: Vec<Vec<(f64, f64)>> = chains
            .into_iter()
            .map(|c| c.into_iter().map(|(p, w)| (f64::from(p), f64::from(w))).collect())
            .collect();
        let order = generalized_smith(&chains);
        prop_assert_eq!(order.len(), chains.iter().map(Vec::len).sum::<usize>());
        // Chain order kept.
        for (d, chain) in chains.iter().enumerate() {
            let idx: Vec<usize> = order.iter().filter(|(c, _)| *c == d).map(|(_, i)| *i).collect();
            prop_assert_eq!(idx, (0..chain.len()).collect::<Vec<_>>());
        }
        let got = weighted_completion(&chains, &order);
        prop_assert!(got <= brute_force(&chains) + 1e-9);
    }

    /// Packing respects each job's minimum (when they fit) and maximum, the slots and the
    /// precedence, and does all the work.
    #[test]
    fn packing_respects_bounds_slots_and_precedence(
        spec in proptest::collection::vec((1u32..50, 0u32..4, 1u32..12, any::<bool>()), 1..8),
        slots in 1u32..16,
    ) {
        let jobs: Vec<PackJob> = spec
            .iter()
            .enumerate()
            .map(|(i, &(w, m, extra, chained))| PackJob {
                work: f64::from(w),
                min: m,
                max: m + extra,
                preds: if chained && i > 0 { vec![i - 1] } else { vec![] },
            })
            .collect();
        let priority: Vec<usize> = (0..jobs.len()).collect();
        let iv = pack(slots, &jobs, &priority);
        prop_assert_eq!(iv.len(), jobs.len());
        let mut done = vec![f64::NAN; jobs.len()];
        let mut work = vec![0.0; jobs.len()];
        for i in &iv {
            let total: u32 = i.alloc.iter().map(|(_, a)| a).sum();
            prop_assert!(total <= slots);
            let mins: u32 = i.alloc.iter().map(|(j, _)| jobs[*j].min).sum();
            for &(j, a) in &i.alloc {
                prop_assert!(a <= jobs[j].max);
                if mins <= slots {
                    prop_assert!(a >= jobs[j].min);
                }
                for &q in &jobs[j].preds {
                    prop_assert!(done[q] <= i.start + 1e-9, "a job before its predecessor");
                }
                work[j] += f64::from(a) * (i.end - i.start);
            }
            done[i.finishes] = i.end;
        }
        for (j, job) in jobs.iter().enumerate() {
            prop_assert!((work[j] - job.work).abs() < 1e-6 * job.work.max(1.0));
        }
    }

    /// Block by block: each job gets every block exactly once; while the jobs overlap, no
    /// block is read twice in a cycle, so the reads are at most the unshared reads and, for
    /// jobs all attached at the start, exactly one pass; every read serves every job that
    /// needs a block nobody is reading.
    #[test]
    fn every_block_is_read_once_per_cycle(
        blocks in 1usize..20,
        attach in proptest::collection::vec(0usize..40, 1..6),
        slots in 1usize..4,
    ) {
        let mut scan = CyclicScan::new(blocks);
        let mut attach = attach;
        attach.sort_unstable();
        let mut got: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        let mut reads = 0usize;
        let mut step = 0usize;
        let mut next = 0usize;
        let mut flight: Vec<usize> = Vec::new();
        let mut finished = 0;
        loop {
            while next < attach.len() && attach[next] <= step {
                scan.attach(next as u64);
                next += 1;
            }
            while flight.len() < slots {
                // Each job misses the arc from the cursor back to where it joined (and reads
                // in flight it did not ride), so the cursor's next block serves every job
                // that needs any block nobody is reading: within one dataset no order could
                // serve a job (say, the earliest deadline's) sooner.
                let waiting: Vec<u64> = scan
                    .jobs()
                    .zip(scan.needed())
                    .filter(|(_, u)| u.iter().any(|b| !flight.contains(b)))
                    .map(|(j, _)| j)
                    .collect();
                let Some((b, riders)) = scan.next_block() else { break };
                prop_assert_eq!(&riders, &waiting);
                for r in riders {
                    got.entry(r).or_default().push(b);
                }
                reads += 1;
                flight.push(b);
            }
            if let Some(b) = (!flight.is_empty()).then(|| flight.remove(0)) {
                finished += scan.block_done(b).len();
            }
            step += 1;
            if next == attach.len() && flight.is_empty() && scan.jobs().next().is_none() {
                break;
            }
            prop_assert!(step < 10_000);
        }
        prop_assert_eq!(finished, attach.len());
        for (_, mut bs) in got {
            bs.sort_unstable();
            prop_assert_eq!(bs, (0..blocks).collect::<Vec<_>>());
        }
        prop_assert!(reads <= blocks * attach.len());
        if attach.iter().all(|&a| a == 0) {
            prop_assert_eq!(reads, blocks);
        }
    }

    /// The planner answers every job once under every policy and metric; a job with a
    /// deadline answers by it, from a fraction in [0, 1], one without from all its dataset,
    /// no sooner than its time alone. Without deadlines CIRCUMFLEX-EDF is CIRCUMFLEX, and
    /// CIRCUMFLEX and BATCH never read more than FLEX.
    #[test]
    fn planner_finishes_everything(
        arrivals in proptest::collection::vec((0usize..3, 0u32..50, proptest::option::of(0u32..40)), 1..12),
        metric in 0usize..4,
    ) {
        let metric = [Metric::AvgResponse, Metric::AvgStretch, Metric::MaxStretch, Metric::MaxResponse][metric];
        let ds = [
            Dataset { scan_s: 50.0, bytes: 5.0 },
            Dataset { scan_s: 200.0, bytes: 20.0 },
            Dataset { scan_s: 10.0, bytes: 1.0 },
        ];
        let mut jobs: Vec<ScanJob> = arrivals
            .iter()
            .enumerate()
            .map(|(i, &(d, t, due))| ScanJob {
                deadline_s: due.map(|s| f64::from(t + s)),
                ..job(i as u64, d, f64::from(t))
            })
            .collect();
        jobs.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        let mut bytes = Vec::new();
        let mut answers = Vec::new();
        for policy in [Policy::Circumflex, Policy::Flex, Policy::Batch { window_s: 20.0 }, Policy::CircumflexEdf] {
            let (mut done, stats) = run(policy, metric, &jobs, &ds);
            done.sort_by_key(|c| c.job);
            prop_assert_eq!(done.iter().map(|c| c.job).collect::<Vec<_>>(), (0..jobs.len() as u64).collect::<Vec<_>>());
            for c in &done {
                let j = jobs.iter().find(|j| j.id == c.job).unwrap();
                prop_assert!((0.0..=1.0).contains(&c.processed));
                match j.deadline_s {
                    Some(d) => prop_assert!(c.finish_s <= d.max(j.arrival_s) + 1e-6, "{c:?} after its deadline"),
                    None => {
                        prop_assert_eq!(c.processed, 1.0);
                        let alone = isolated_s(j, &ds[j.dataset], 10);
                        prop_assert!(c.response_s() >= alone - 1e-6, "{c:?} faster than alone {alone}");
                    }
                }
            }
            bytes.push(stats.bytes_read);
            answers.push(done);
        }
        if jobs.iter().all(|j| j.deadline_s.is_none()) {
            prop_assert_eq!(&answers[3], &answers[0]);
            let flex: f64 = jobs.iter().map(|j| ds[j.dataset].bytes).sum();
            prop_assert!((bytes[1] - flex).abs() < 1e-6 * flex);
            prop_assert!(bytes[0] <= bytes[1] + 1e-6);
            prop_assert!(bytes[2] <= bytes[1] + 1e-6);
        }
    }
}
