use super::exact::capacity_bound;
use super::*;
use crate::job::MapTruth;
use yard_appmaster::policy::PowerLaw;

/// A job: maps of these durations and outputs, reduces with these shares, reduce time
/// `a·d` (linear, so hand sums are easy) and no noise.
fn job(maps: &[(f64, u64)], shares: &[f64], bandwidth: f64, a: f64) -> JobTruth {
    JobTruth {
        maps: maps
            .iter()
            .map(|&(duration, output_bytes)| MapTruth {
                duration,
                input_bytes: 0,
                output_bytes,
                replicas: vec![0],
            })
            .collect(),
        partition_shares: shares.to_vec(),
        reduce_time: PowerLaw {
            a,
            b: 1.0,
            spread: 0.0,
        },
        reduce_noise: vec![1.0; shares.len()],
        reduce_noise_sigma: 0.0,
        shuffle_bandwidth: bandwidth,
    }
}

fn all(truth: &JobTruth) -> Vec<usize> {
    (0..truth.maps.len()).collect()
}

#[test]
fn one_map_one_container() {
    // 10 s map, 100 B at 10 B/s: shuffle ends at 20; reduce 100 B × 0.05 s/B = 5.
    let t = job(&[(10.0, 100)], &[1.0], 10.0, 0.05);
    assert_eq!(completion(&t, &[0], &[1.0]), 25.0);
    assert_eq!(mdt(&t), 25.0);
    assert_eq!(k_max(&t, &[1.0], 25.0), 1);
    assert_eq!(k_max(&t, &[1.0], 24.9), 0);
}

#[test]
fn equal_maps_in_waves() {
    // 5 maps of 4 s on 2 containers: 3 waves, last finish at 12; fast link, no reduce work.
    let t = job(&[(4.0, 0); 5], &[], 1e9, 0.0);
    assert_eq!(completion(&t, &all(&t), &[1.0, 1.0]), 12.0);
    assert_eq!(completion(&t, &[0, 1, 2, 3], &[1.0, 1.0]), 8.0);
    assert_eq!(k_max(&t, &[1.0, 1.0], 11.9), 4);
    assert_eq!(k_max(&t, &[1.0, 1.0], 12.0), 5);
    assert_eq!(k_max(&t, &[1.0, 1.0], 3.9), 0);
    // Past the exact branch (6 containers): 13 maps of 4 s are 3 waves, 12 are 2.
    let big = job(&[(4.0, 0); 13], &[], 1e9, 0.0);
    assert_eq!(completion(&big, &all(&big), &[1.0; 6]), 12.0);
    assert_eq!(k_max(&big, &[1.0; 6], 11.0), 12);
    // A slow container (4×) takes no map: one more on a normal one ends sooner.
    let mut speeds = [1.0; 6];
    speeds[5] = 4.0;
    assert_eq!(completion(&big, &all(&big), &speeds), 12.0);
    assert_eq!(k_max(&big, &speeds, 8.0), 10);
}

#[test]
fn fifo_link_delays_the_shuffle() {
    // 3 maps of 1 s on 3 containers finish together; each sends 10 B at 1 B/s: the link
    // drains at 1 + 30 = 31, then the reduce (30 B × 0.1) takes 3.
    let t = job(&[(1.0, 10); 3], &[1.0], 1.0, 0.1);
    assert_eq!(completion(&t, &all(&t), &[1.0; 3]), 34.0);
    // On one container they finish at 1, 2, 3 and still queue: 31 again.
    assert_eq!(completion(&t, &all(&t), &[1.0]), 34.0);
    // A fast link: the shuffle ends at the last finish plus one transfer.
    let fast = job(&[(1.0, 10); 3], &[1.0], 100.0, 0.1);
    assert!((completion(&fast, &all(&fast), &[1.0]) - (3.1 + 3.0)).abs() < 1e-12);
}

#[test]
fn reduces_in_waves() {
    // One map of 2 s, output 90 B over 3 equal reduces of 30 B × 0.1 = 3 s each, on 2
    // containers: the reduces take two waves (6 s) after the shuffle end at 2 + 0.9.
    let t = job(&[(2.0, 90)], &[1.0 / 3.0; 3], 100.0, 0.1);
    let c = completion(&t, &[0], &[1.0, 1.0]);
    assert!((c - (2.9 + 6.0)).abs() < 1e-9, "{c}");
    // With 3 containers one wave.
    let c3 = completion(&t, &[0], &[1.0; 3]);
    assert!((c3 - (2.9 + 3.0)).abs() < 1e-9, "{c3}");
}

#[test]
fn map_only_job_ends_with_its_last_map() {
    // No reduces: the link does not matter, even a slow one.
    let t = job(&[(3.0, 1000), (5.0, 1000)], &[], 1.0, 1.0);
    assert_eq!(completion(&t, &all(&t), &[1.0, 1.0]), 5.0);
    assert_eq!(completion(&t, &all(&t), &[1.0]), 8.0);
    assert_eq!(mdt(&t), 5.0);
}

#[test]
fn a_slow_container() {
    // Maps 6, 2, 2 on a normal and a 4× slow container: 6 + 2 on the normal one and a 2 s
    // map on the slow one (8 s) finish at 8; everything on the normal one takes 10.
    let t = job(&[(6.0, 0), (2.0, 0), (2.0, 0)], &[], 1.0, 0.0);
    assert_eq!(completion(&t, &all(&t), &[1.0, 4.0]), 8.0);
    // One map goes to the normal container whatever the order speeds are given in.
    assert_eq!(completion(&t, &[0], &[4.0, 1.0]), 6.0);
    assert_eq!(k_max(&t, &[1.0, 4.0], 7.9), 2); // 2 + 2 on the fast container: 4
    assert_eq!(k_max(&t, &[1.0, 4.0], 8.0), 3);
}

#[test]
fn deadline_equal_to_completion_meets_it() {
    let t = job(
        &[(3.3, 7), (1.1, 13), (2.7, 5), (0.9, 11)],
        &[0.3, 0.7],
        3.7,
        0.013,
    );
    let speeds = [1.0, 1.7];
    let c = completion(&t, &all(&t), &speeds);
    assert_eq!(k_max(&t, &speeds, c), 4);
    assert!(k_max(&t, &speeds, c - 1e-9) < 4);
}

#[test]
fn mdt_hand_case() {
    // 3 maps (4, 6, 5 s; 10 B each at 5 B/s) and 2 reduces (shares 0.25/0.75 of 30 B, so
    // 7.5 and 22.5 B: 8 B and 22 B in whole bytes summing to 30, the byte left to the
    // first of the equal fractions; 1 s per B): MRA = 3. Finishes 4, 5, 6: the link frees
    // at 6, 8, 10. Reduces 8 and 22 s.
    let t = job(&[(4.0, 10), (6.0, 10), (5.0, 10)], &[0.25, 0.75], 5.0, 1.0);
    assert_eq!(t.reduce_inputs(30), vec![8, 22]);
    assert_eq!(mdt(&t), 10.0 + 22.0);
    assert_eq!(k_max(&t, &[1.0; 3], mdt(&t)), 3);
    // Just below MDT two maps fit: finishes 4, 5, link at 6, 8; reduces 5 and 15 → 23.
    assert_eq!(k_max(&t, &[1.0; 3], 0.95 * mdt(&t)), 2);
}

#[test]
fn no_containers_no_maps() {
    let t = job(&[(1.0, 1)], &[1.0], 1.0, 1.0);
    assert_eq!(k_max(&t, &[], 100.0), 0);
    assert_eq!(completion(&t, &[0], &[]), f64::INFINITY);
    assert_eq!(completion(&t, &[], &[1.0]), 0.0);
    let empty = job(&[], &[], 1.0, 1.0);
    assert_eq!(mdt(&empty), 0.0);
    assert_eq!(k_max(&empty, &[1.0], 1.0), 0);
}

#[test]
fn smaller_outputs_can_fit_more_maps() {
    // Two 1 s maps with 100 B at 10 B/s (10 s on the link) and two 1.5 s maps with 1 B:
    // by deadline 4 on 2 containers only the small-output maps fit.
    let t = job(
        &[(1.0, 100), (1.0, 100), (1.5, 1), (1.5, 1)],
        &[1.0],
        10.0,
        0.0,
    );
    assert_eq!(k_max(&t, &[1.0, 1.0], 4.0), 2);
    // The schedule reads the small-output maps, not the shortest.
    let mut t = t;
    for (m, bytes) in t.maps.iter_mut().zip([1000, 2000, 30, 40]) {
        m.input_bytes = bytes;
    }
    let best = k_max_schedule(&t, &[1.0, 1.0], 4.0);
    assert_eq!((best.k, best.input_bytes(&t)), (2, 70));
}

#[test]
fn the_k_max_schedule_reads_the_shortest_maps() {
    // Equal outputs: the k shortest, whatever order the maps come in.
    let mut t = job(&[(3.0, 1), (1.0, 1), (2.0, 1), (5.0, 1)], &[], 1.0, 0.0);
    for (m, bytes) in t.maps.iter_mut().zip([300, 100, 200, 500]) {
        m.input_bytes = bytes;
    }
    let best = k_max_schedule(&t, &[1.0], 6.0);
    assert_eq!(best.k, k_max(&t, &[1.0], 6.0));
    assert_eq!((best.k, best.maps.clone()), (3, vec![1, 2, 0]));
    assert_eq!(best.input_bytes(&t), 600);
    assert_eq!(k_max_schedule(&t, &[1.0], 0.5).maps, Vec::<usize>::new());
}

/// `job` with these input bytes per map.
fn with_inputs(mut t: JobTruth, inputs: &[u64]) -> JobTruth {
    for (m, bytes) in t.maps.iter_mut().zip(inputs) {
        m.input_bytes = *bytes;
    }
    t
}

fn bytes(t: &JobTruth, speeds: &[f64], deadline: f64) -> ByteMax {
    byte_max(t, speeds, deadline, &k_max_schedule(t, speeds, deadline))
}

#[test]
fn the_byte_oracle_reads_the_most_bytes_not_the_most_maps() {
    // One slot, map-only: two 1 s maps of 10 B or one 2 s map of 100 B by D = 2. k_max
    // reads the two short maps (20 B); the byte oracle the long one.
    let t = with_inputs(
        job(&[(1.0, 0), (1.0, 0), (2.0, 0)], &[], 1.0, 0.0),
        &[10, 10, 100],
    );
    let best = k_max_schedule(&t, &[1.0], 2.0);
    assert_eq!((best.k, best.input_bytes(&t)), (2, 20));
    assert_eq!(
        bytes(&t, &[1.0], 2.0),
        ByteMax {
            bytes: 100,
            exact: true
        }
    );
    // By D = 4 everything fits: all 120 B, exact.
    assert_eq!(bytes(&t, &[1.0], 4.0).bytes, 120);
    // By D = 0.5 nothing: 0, exact.
    assert_eq!(
        bytes(&t, &[1.0], 0.5),
        ByteMax {
            bytes: 0,
            exact: true
        }
    );
}

#[test]
fn the_byte_oracle_counts_the_link_and_the_reduces() {
    // One map of 1 s with 100 B of output at 10 B/s and a reduce of 0.05 s a byte: alone it
    // completes at 1 + 10 + 5 = 16. By D = 15 it cannot be read: 0, exact (every subset
    // was ruled out by an exact schedule).
    let t = with_inputs(job(&[(1.0, 100)], &[1.0], 10.0, 0.05), &[64]);
    assert_eq!(completion(&t, &[0], &[1.0]), 16.0);
    assert_eq!(
        bytes(&t, &[1.0], 15.0),
        ByteMax {
            bytes: 0,
            exact: true
        }
    );
    assert_eq!(bytes(&t, &[1.0], 16.0).bytes, 64);
}

#[test]
fn a_set_the_lower_bound_rules_out_leaves_the_byte_oracle_exact() {
    // One slot; maps of 1 s with 10 B out (input 50 B) and of 2 s with 20 B out (60 B), a
    // fast link, one reduce of 0.1 s a byte. Alone they complete at 2.01 and 4.02; the pair
    // at best 6.02, past D = 5. Slot time would hold both (the fractional bound is 110 B),
    // and unequal outputs on one slot leave the schedule search unproven, but the lower
    // bound (3 s of maps, a transfer, 3 s of reduce) rules the pair out: the most is the
    // 60 B map, exact, not the pair's 110 B as an unproven bound.
    let t = with_inputs(job(&[(1.0, 10), (2.0, 20)], &[1.0], 1000.0, 0.1), &[50, 60]);
    assert_eq!(
        bytes(&t, &[1.0], 5.0),
        ByteMax {
            bytes: 60,
            exact: true
        }
    );
    // Each map on a container of its own has no run to order: the search alone is exact.
    assert!(bytes(&t, &[1.0, 1.0], 3.0).exact);
}

#[test]
fn the_byte_bound_is_the_fractional_knapsack_of_slot_time() {
    // Map-only, two containers of speed 1 by D = 3: 6 s of slot time. Maps of 4 s / 40 B
    // (10 B/s), 4 s / 20 B (5 B/s) and 1 s / 30 B (30 B/s): the 1 s map, then 5 s of the
    // 4 s / 40 B map is more than it has: all of it (40), then 1 s of the third (5).
    let t = with_inputs(
        job(&[(4.0, 0), (4.0, 0), (1.0, 0)], &[], 1.0, 0.0),
        &[40, 20, 30],
    );
    assert_eq!(byte_bound(&t, &[0, 1, 2], &[1.0, 1.0], 3.0), 75);
    // Nothing eligible, nothing to read.
    assert_eq!(byte_bound(&t, &[], &[1.0, 1.0], 3.0), 0);
    // Equal inputs: rounded down to a whole number of maps (6 s of 4 s maps: 1.5 maps).
    let eq = with_inputs(job(&[(4.0, 0); 3], &[], 1.0, 0.0), &[8, 8, 8]);
    assert_eq!(byte_bound(&eq, &[0, 1, 2], &[1.0, 1.0], 3.0), 8);
    // With reduces the link caps it: outputs of 100 B at 10 B/s, the first map done at 1 s,
    // so by D = 11 at most 100 B cross: one map's worth of input.
    let link = with_inputs(job(&[(1.0, 100); 3], &[1.0], 10.0, 0.0), &[5, 5, 5]);
    assert_eq!(byte_bound(&link, &[0, 1, 2], &[1.0; 3], 11.0), 5);
}

#[test]
fn capacity_bound_levels_the_loads() {
    // Loads 0 and 4 at speed 1, 6 s of work: level at 5.
    assert_eq!(capacity_bound(&[0.0, 4.0], &[1.0, 1.0], 6.0), 5.0);
    // Not enough to reach the second: 3 s on the first.
    assert_eq!(capacity_bound(&[0.0, 4.0], &[1.0, 1.0], 3.0), 3.0);
    // A 2× slow container at load 0 with a normal one: rate 1.5, 6 s → 4.
    assert_eq!(capacity_bound(&[0.0, 0.0], &[1.0, 2.0], 6.0), 4.0);
}
