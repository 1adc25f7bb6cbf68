//! The paper's worked examples (the digest's D1–D13, Fig. 4) and Alg. 1–5 as printed: `dart-paper`
//! holds every equation whatever yard's extensions would add, and each extension turns off by
//! its name alone.

use super::*;

/// D1 with what only yard's extensions read: reduce times that spread (σ 0.3), two slots
/// for the three reduces, and a link that moved its 6 bytes in 1 busy second of the 2
/// since `T_q` (so eq. 5 over the busy time reads 6 B/s, as printed 3 B/s). The paper's
/// numbers must not move.
fn d1_extended(kind: PolicyKind, deadline: Seconds, local: bool) -> (Run, ContainerId) {
    d1_extended_with(Variant::of(kind), PolicyConfig::default(), deadline, local)
}

const BOTH: [PolicyKind; 2] = [PolicyKind::Dart, PolicyKind::DartPaper];

#[test]
fn d2_a_remote_candidate_at_exactly_d_is_not_launched_and_becomes_local_only() {
    // T_J = 5.5 + 1.5 + 3 = 10.0, and eq. (10) is strict: 10 < 10 is false.
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.0, false);
        let out = approach(&mut run, c);
        assert_eq!(
            out,
            vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))],
            "{kind}"
        );
        assert!(!run.core.map_phase_closed(), "{kind}");
        assert_eq!(run.core.k(), 5, "{kind}");
    }
}

#[test]
fn d3_a_local_candidate_at_exactly_d_terminates_the_map_phase() {
    // Also Fig. 6 (P4): D = 10, T_p = 3, m6 local and T_J(k_6) not under D: terminated.
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.0, true);
        let out = approach(&mut run, c);
        assert_eq!(out[0], Decision::Release(c), "{kind}");
        assert!(
            matches!(out[1], Decision::CloseMapPhase { k: 5, .. }),
            "{kind}: {out:?}"
        );
        assert!(run.core.map_phase_closed(), "{kind}");
    }
}

fn launches_m6(out: &[Decision]) -> bool {
    matches!(
        out[0],
        Decision::LaunchMap {
            map: MapId(5),
            locality: Locality::Remote,
            ..
        }
    )
}

#[test]
fn d4_with_half_a_unit_more_the_candidate_is_launched() {
    for kind in BOTH {
        let (mut run, c) = d1(kind, 10.5, false);
        let out = approach(&mut run, c);
        assert!(launches_m6(&out), "{kind}: {out:?}");
        assert_eq!(run.core.k(), 6, "{kind}");
        assert_eq!(run.est.map_end, 5.5, "{kind}: T_M^o := T_M^n");
    }
}

#[test]
fn dart_paper_fig4_and_d1_every_equation_whatever_the_profile_says_of_spread_slots_and_idle_time() {
    let (run, _) = d1_extended(PolicyKind::DartPaper, 10.5, false);
    let e = &run.est;
    // Fig. 4 (P1): T_M^n = max(5, 3 + 2.5) = 5.5 for the remote candidate m6.
    assert_eq!(e.map_phase_end(NOW, e.map_duration(Locality::Remote)), 5.5);
    assert_eq!(e.bandwidth(NOW), 3.0, "eq. (5) as printed: 6 / (3 − 1)");
    // Fig. 5 (P2): the shuffle counts m6, (k+1)·p·R = 18 B: T_S = 6, T_OS = 4.5, T_NS = 1.5.
    assert_eq!(e.non_overlapped_shuffle(6.0, 5.5, NOW), 1.5);
    // Eq. (8)–(9) at e = 1: d = 6, T_R = 0.5 · 6 = 3, one wave.
    let t = e.completion(6.0, NOW, 2.5, true);
    assert_eq!((t.map, t.shuffle, t.reduce, t.total), (5.5, 1.5, 3.0, 10.0));
    // D5: with V_p = 9, B = 4.5, T_S = 4, T_NS = −0.5 → 0, T_J = 8.5.
    let mut e = e.clone();
    e.shuffled = 9.0;
    assert_eq!(e.completion(6.0, NOW, 2.5, true).total, 8.5);
    // yard's dart reads the same state otherwise: the busy link's 6 B/s, the last of three
    // noisy reduces on two slots.
    let (run, _) = d1_extended(PolicyKind::Dart, 10.5, false);
    assert_eq!(run.est.bandwidth(NOW), 6.0);
    let t = run.est.completion(6.0, NOW, 2.5, true);
    assert!(t.reduce > 3.3 && t.total > 10.5, "{t:?}");
}

#[test]
fn dart_paper_d2_to_d4_hold_whatever_the_profile_says_of_spread_slots_and_idle_time() {
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, false);
    let out = approach(&mut run, c);
    assert_eq!(
        out,
        vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
    );
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = approach(&mut run, c);
    assert!(matches!(out[1], Decision::CloseMapPhase { k: 5, .. }));
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.5, false);
    let out = approach(&mut run, c);
    assert!(launches_m6(&out), "{out:?}");
    assert_eq!((run.core.k(), run.est.map_end), (6, 5.5));
    // dart leaves room for the last of its noisy reduces: m6 does not fit by 10.5.
    let (mut run, c) = d1_extended(PolicyKind::Dart, 10.5, false);
    let out = approach(&mut run, c);
    assert_eq!(
        out,
        vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
    );
}

#[test]
fn dart_paper_d7_d8_alg5_samples_to_what_f_inverse_of_the_time_left_allows() {
    // D8: a = 0.5, b = 1, D = 10, T_p = 7: d_max = 3 / 0.5 = 6 (eq. 12). d_i = 8 is sampled
    // to 6; d_i = 5 is left as it is.
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 8);
    let six = Decision::SampleReduceInput {
        reduce: ReduceId(0),
        keep_bytes: 6,
    };
    assert_eq!(out, vec![six.clone()]);
    let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 5);
    assert!(
        !out.iter()
            .any(|d| matches!(d, Decision::SampleReduceInput { .. })),
        "{out:?}"
    );
    // dart sizes the reduce for the largest draw of its wave: it keeps less.
    let (mut run, c) = d1_extended(PolicyKind::Dart, 10.0, true);
    let out = reduce_ready(&mut run, c, 7.0, 8);
    assert!(
        matches!(out[..], [Decision::SampleReduceInput { keep_bytes, .. }] if keep_bytes < 6),
        "{out:?}"
    );
}

#[test]
fn dart_paper_d9_d10_skew_is_the_largest_reduce_at_e_1_and_the_ewma_is_section_5_3() {
    use crate::policy::PreviousRun;
    let (mut run, _) = d1_extended(PolicyKind::DartPaper, 10.0, true);
    run.est.previous_runs = vec![
        PreviousRun {
            k: 10,
            max_reduce_input: 100.0,
        },
        PreviousRun {
            k: 20,
            max_reduce_input: 220.0,
        },
    ];
    // Eq. (13), k_n = 15: d = ½(1.5·100 + 0.75·220) = 157.5, T_R = f(157.5) = 78.75.
    assert_eq!(run.est.reduce_input(15.0, true), 157.5);
    assert_eq!(run.est.completion(15.0, NOW, 2.5, true).reduce, 78.75);
    // D-WOST's eq. (8): d = 15 · 1, T_R = 7.5.
    assert_eq!(run.est.completion(15.0, NOW, 2.5, false).reduce, 7.5);
    // D10: T_m^a = 2.5, a map took 4 → 0.8 · 2.5 + 0.2 · 4 = 2.8.
    run.est.map_finished(Locality::Remote, 4.0, Some(1.0));
    assert!((run.est.all - 2.8).abs() < 1e-12 && (run.est.remote - 2.8).abs() < 1e-12);
}

#[test]
fn an_extension_is_turned_off_by_its_name_and_only_it() {
    for name in Extensions::NAMES {
        let (x, base) = match Extensions::YARD.on().contains(&name) {
            true => (Extensions::YARD.without(name).unwrap(), Extensions::YARD),
            // Off in `dart`: turned on by name, and off again by name.
            false => {
                let on = Extensions::YARD.with(name).unwrap();
                assert_eq!(on.against(Extensions::YARD), (vec![], vec![name]));
                (on.without(name).unwrap(), on)
            }
        };
        assert_eq!(x.against(base), (vec![name], vec![]));
        assert_eq!(Extensions::NONE.without(name), Ok(Extensions::NONE));
    }
    assert_eq!(Extensions::YARD.off(), ["wave_fill"]);
    assert_eq!(Extensions::NONE.off().len(), Extensions::NAMES.len());
    assert!(Extensions::YARD.without("warp_drive").is_err());
    // `dart` runs the mix it is given; other kinds ignore it.
    let config = PolicyConfig {
        dart_extensions: Some(Extensions::YARD.without("lone_map").unwrap()),
        ..guarded()
    };
    let mut dart = Dart::new(PolicyKind::Dart, config.clone());
    assert_eq!(lone_map_started(&mut dart), None, "lone_map is off");
    let mut paper = Dart::new(PolicyKind::DartPaper, config);
    assert_eq!(paper.variant.x, Extensions::NONE);
    assert_eq!(lone_map_started(&mut paper), None);
}

#[test]
fn each_ablation_is_dart_paper_less_exactly_its_part() {
    let paper = Variant::of(PolicyKind::DartPaper);
    assert_eq!(
        paper,
        Variant {
            approach: true,
            revise_maps: true,
            revise_reduces: true,
            skew: true,
            late: false,
            x: Extensions::NONE,
        }
    );
    let of = Variant::of;
    assert_eq!(
        of(PolicyKind::DartWithoutRevise),
        Variant {
            revise_maps: false,
            revise_reduces: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::DartMapReviseOnly),
        Variant {
            revise_reduces: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::DartWithoutSkew),
        Variant {
            skew: false,
            ..paper
        }
    );
    assert_eq!(
        of(PolicyKind::Dart),
        Variant {
            x: Extensions::YARD,
            ..paper
        }
    );
}

/// D1 after the map phase closed, with maps 0–2 as stragglers whose remaining times are
/// 1.5, 2.0 and 3.0 (progress ½ after 1.5, 2.0 and 3.0 s).
fn revise_state(kind: PolicyKind, deadline: Seconds) -> (Run, ContainerId) {
    let (mut run, c) = d1(kind, deadline, false);
    let mut out = Vec::new();
    run.core.close_map_phase(None, &mut out);
    for (i, age) in [1.5, 2.0, 3.0].into_iter().enumerate() {
        let a = AttemptId(i as u32);
        run.core.attempts[i].started = NOW - age;
        run.core.progress_report(a, 0.5, NOW);
        run.stragglers.push(a);
    }
    (run, c)
}

#[test]
fn d11_a_window_of_t_ma_speculates_the_straggler_with_most_time_left() {
    // Eq. (11) with k = 5: T_NS = 0.5, T_R = 2.5; D = 8.5 makes W = 2.5 = T_m^a (≥: copy).
    // Fig. 6 (P5): a copy of the straggler keeps k = 5.
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 8.5);
        assert!((window(&run) - 2.5).abs() < 1e-12, "{kind}");
        let mut out = Vec::new();
        assert!(run.revise(c, NOW, &mut out), "{kind}");
        assert!(
            matches!(
                out[..],
                [Decision::LaunchMap {
                    map: MapId(2),
                    speculative: true,
                    ..
                }]
            ),
            "{kind}: {out:?}"
        );
        assert_eq!(run.core.k(), 5, "{kind}: a copy leaves k unchanged");
    }
}

#[test]
fn d12_a_window_under_t_ma_kills_the_straggler_with_most_time_left() {
    // Fig. 6 (P5): killing the straggler makes k = 4.
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 8.0); // W = 2.0
        let mut out = Vec::new();
        assert!(
            !run.revise(c, NOW, &mut out),
            "{kind}: the container stays free"
        );
        assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
        assert_eq!(run.core.k(), 4, "{kind}");
    }
}

#[test]
fn d13_no_window_kills_every_straggler_over_the_threshold_strictly() {
    // W = −1.5: Alg. 4 with StragglingsThreshold 0.8 · 2.5 = 2.0 kills only T_rem = 3.0
    // (T_rem = 2.0 is not > 2.0).
    for kind in BOTH {
        let (mut run, c) = revise_state(kind, 4.5);
        assert!(window(&run) <= 0.0, "{kind}");
        let mut out = Vec::new();
        assert!(!run.revise(c, NOW, &mut out), "{kind}");
        assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
        assert_eq!(run.core.k(), 4, "{kind}");
        assert_eq!(run.stragglers, vec![AttemptId(0), AttemptId(1)], "{kind}");
    }
}
