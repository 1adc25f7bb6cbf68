//! `dart-paper` (the paper's Algorithms 1–5 and eq. 1–13) against `dart` (yard's), on scripted
//! clusters with known task durations.
//!
//! One job per yard extension that changes a decision: on it `dart-paper` does what the paper
//! prints, `dart` what the extension adds, and `dart` less that one extension
//! (`Dart::with_extensions`) what the paper does, so the difference is that extension's. The
//! forecast's switches (`wave_end`, `fifo_shuffle`, `elapsed_phases`) change only the estimate,
//! never a decision; their tests are beside them (`policy/dart/tests/`, `policy/running.rs`),
//! as is `input_scaled`'s (it changes decisions only where maps differ in input, which these
//! scripts' equal blocks never do: `input_scaled_reads_a_finished_tail_split_…`). Then
//! the ablations: each is `dart-paper` less exactly the part its name says (D-WOR: Alg. 3–5,
//! D-WMR: Alg. 5, D-WOST: eq. 13).

mod support;

use std::str::FromStr;

use support::{Run, Script, run};
use yard_appmaster::policy::{
    Dart, Decision, Extensions, JobSpec, MapId, PolicyConfig, PolicyKind, PowerLaw, PreviousRun,
    TaskPolicy,
    estimate::{expected_max_lognormal, quantile_max_lognormal},
};

/// A scripted cluster and the job it runs.
type Job = (Script, JobSpec);

fn policy(kind: PolicyKind) -> Box<dyn TaskPolicy> {
    kind.build(PolicyConfig::default())
}

/// `kind` with yard's extensions set to `x`.
fn with(kind: PolicyKind, x: Extensions) -> Box<dyn TaskPolicy> {
    Box::new(Dart::with_extensions(kind, PolicyConfig::default(), x))
}

fn go(mut p: Box<dyn TaskPolicy>, job: &Job) -> Run {
    run(p.as_mut(), job.1.clone(), &job.0, 1)
}

fn dart(job: &Job) -> Run {
    go(policy(PolicyKind::Dart), job)
}

/// `dart` with the extension `off` turns off.
fn dart_less(job: &Job, off: impl FnOnce(&mut Extensions)) -> Run {
    let mut x = Extensions::YARD;
    off(&mut x);
    go(with(PolicyKind::Dart, x), job)
}

fn paper(job: &Job) -> Run {
    go(policy(PolicyKind::DartPaper), job)
}

fn k(r: &Run) -> u32 {
    r.progress.expect("finished").k
}

fn closed_k(r: &Run) -> u32 {
    r.closed.expect("the map phase closes").1
}

fn kills(r: &Run) -> Vec<f64> {
    r.times(|d| matches!(d, Decision::Kill(_)))
}

fn copies(r: &Run) -> usize {
    r.count(|d| {
        matches!(
            d,
            Decision::LaunchMap {
                speculative: true,
                ..
            }
        )
    })
}

const LINEAR_REDUCE: PowerLaw = PowerLaw {
    a: 2.5e-5,
    b: 1.0,
    spread: 0.0,
};

/// 40 containers, 40 node-local maps of 10 s, all launched at t = 0 (the shuffle not measured
/// yet), 8 reduces at 0.25 s per map output each: `T_R(k+1) = 0.25·(k+1)`, D = 17. The profile
/// says reduce times spread with σ `spread`; the script's reduces do not.
fn one_wave_eight_reduces(spread: f64, previous: Vec<PreviousRun>) -> Job {
    let mut s = Script::uniform(40, 1, 1, 10.0, 15.0);
    s.map_output = 800_000;
    s.reduce_time = PowerLaw {
        a: 2.5e-6,
        b: 1.0,
        spread: 0.0,
    };
    let mut profile = s.true_profile(10.0, 15.0, 8);
    profile.reduce_time.spread = spread;
    profile.previous_runs = previous;
    let spec = s.job(40, 8, 17.0, profile);
    (s, spec)
}

/// 8 containers, 40 node-local maps of 10 s (five waves), 2 reduces; each 100 kB output
/// crosses the 1 GB/s link in 0.1 ms, so the link idles almost all the time. D = 35.
fn five_waves_trickling_output() -> Job {
    let mut s = Script::uniform(8, 1, 1, 10.0, 15.0);
    s.map_output = 100_000;
    let spec = s.job(40, 2, 35.0, s.true_profile(10.0, 15.0, 2));
    (s, spec)
}

/// Four maps the profile says take 10 s run 22 s; one reduce of their 400 kB at 2.5e-5 s/B gets
/// its input at t = 23. The profile's reduce law spreads with σ `spread`; the script's does not.
fn slow_maps_one_reduce(deadline: f64, spread: f64) -> Job {
    let mut s = Script::uniform(4, 1, 1, 22.0, 22.0);
    s.map_output = 100_000;
    s.reduce_time = LINEAR_REDUCE;
    let mut profile = s.true_profile(10.0, 10.0, 1);
    profile.reduce_time.spread = spread;
    let spec = s.job(4, 1, deadline, profile);
    (s, spec)
}

/// One 10 s map, one reduce of its 400 kB (10 s), D = 15: `T_J(1) = 20`.
fn one_map_over_its_deadline() -> Job {
    let mut s = Script::uniform(1, 1, 1, 10.0, 10.0);
    s.map_output = 400_000;
    s.reduce_time = LINEAR_REDUCE;
    let spec = s.job(1, 1, 15.0, s.true_profile(10.0, 10.0, 1));
    (s, spec)
}

/// One container; map 0 takes 10 s, then map 1 takes 60 s where the profile says 10. D = 25.
fn lone_straggler_after_its_wave() -> Job {
    let mut s = Script::uniform(1, 1, 1, 10.0, 10.0);
    s.map_output = 0;
    s.map_time = Box::new(|m, _, _| if m.0 == 1 { 60.0 } else { 10.0 });
    let spec = s.job(2, 0, 25.0, s.true_profile(10.0, 10.0, 0));
    (s, spec)
}

/// 4 containers, 8 maps of 10 s, but map 3 takes 60 s wherever it runs. D = 40.
fn map_slow_wherever_it_runs() -> Job {
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.map_output = 100_000;
    s.map_time = Box::new(|m, _, _| if m == MapId(3) { 60.0 } else { 10.0 });
    let spec = s.job(8, 1, 40.0, s.true_profile(10.0, 10.0, 1));
    (s, spec)
}

/// 4 containers, 8 maps of 10 s; map 3's first attempt crawls for 60 s (a copy runs 10 s).
fn straggler(deadline: f64) -> Job {
    let mut s = Script::uniform(4, 1, 1, 10.0, 10.0);
    s.map_output = 100_000;
    s.map_time = Box::new(|m, _, nth| {
        if m == MapId(3) && nth == 0 {
            60.0
        } else {
            10.0
        }
    });
    let spec = s.job(8, 1, deadline, s.true_profile(10.0, 10.0, 1));
    (s, spec)
}

/// Four maps in one wave, map 3 the longest draw: 15 s where the others take 10. D = 14.
fn longest_draw_of_a_wave() -> Job {
    let mut s = Script::uniform(4, 1, 1, 10.0, 15.0);
    s.map_time = Box::new(|m, _, _| if m.0 == 3 { 15.0 } else { 10.0 });
    let spec = s.job(4, 0, 14.0, s.true_profile(10.0, 15.0, 0));
    (s, spec)
}

/// 3 nodes, node 2 4× slow and no map runs there; 2 maps, 2 reduces of 400 kB. D = 30.
fn reduce_on_an_unmeasured_slow_node() -> Job {
    let mut s = Script::uniform(3, 1, 1, 10.0, 15.0);
    s.map_output = 400_000;
    s.reduce_time = LINEAR_REDUCE;
    s.node_slowdown = Box::new(|n| if n.0 == 2 { 4.0 } else { 1.0 });
    let spec = s.job(2, 2, 30.0, s.true_profile(10.0, 15.0, 2));
    (s, spec)
}

/// 2 nodes, node 1 3× slow, and a map of the job runs there first; the reduce lands there.
fn reduce_on_a_measured_slow_node() -> Job {
    let mut s = Script::uniform(2, 1, 1, 10.0, 15.0);
    s.map_output = 100_000;
    s.reduce_time = LINEAR_REDUCE;
    s.node_slowdown = Box::new(|n| if n.0 == 1 { 3.0 } else { 1.0 });
    let spec = s.job(4, 1, 50.0, s.true_profile(10.0, 15.0, 1));
    (s, spec)
}

fn finished(r: &Run) -> f64 {
    r.finished_at.expect("finishes")
}

#[test]
fn dart_paper_is_selectable_wherever_dart_is() {
    let kind = PolicyKind::from_str("dart-paper").unwrap();
    assert_eq!(kind, PolicyKind::DartPaper);
    assert_eq!(
        PolicyKind::from_str("DART-PAPER"),
        Ok(PolicyKind::DartPaper)
    );
    assert!(PolicyKind::ALL.contains(&kind));
    assert_eq!(kind.to_string(), "dart-paper");
    assert_eq!(policy(kind).name(), "dart-paper");
    let err = PolicyKind::from_str("dart-papers").unwrap_err();
    assert!(err.contains("dart-paper"), "{err}");
}

#[test]
fn reduce_waves_dart_leaves_room_for_the_last_of_eight_noisy_reduces() {
    // Eq. (9) at e = 1: 10 + 0.25·(k+1) < 17 up to k+1 = 27 (one wave, all at t = 0). dart's
    // T_R is the largest of 8 draws at σ 0.5, 2.14× f(d): 10 + 0.535·(k+1) < 17 up to 13.
    let job = one_wave_eight_reduces(0.5, Vec::new());
    let f = expected_max_lognormal(0.5, 8);
    assert!((f - 2.14).abs() < 0.01, "{f}");
    let p = paper(&job);
    assert_eq!(closed_k(&p), 27);
    // The script's reduces do not spread: the paper's reduce ends by D (Alg. 5 trims the
    // second it loses to the reduce starting on the next heartbeat).
    assert!(finished(&p) <= 17.0 + 1e-6, "{:?}", p.finished_at);
    let d = dart(&job);
    assert_eq!(closed_k(&d), 13);
    let without = dart_less(&job, |x| x.reduce_waves = false);
    assert_eq!(closed_k(&without), 27);
}

#[test]
fn reduce_confidence_dart_sizes_a_reduce_for_the_95th_percentile_the_paper_for_f_inverse() {
    // The reduce gets its 400 kB at t = 23 with 7 s left: eq. (12) keeps 7 / 2.5e-5 = 280 kB,
    // which the script (no spread) reduces by exactly D. The profile's σ 0.3 makes dart keep
    // 280 kB / exp(0.3·Φ⁻¹(0.95)); without reduce_confidence, 280 kB / E[e] (reduce_waves).
    let job = slow_maps_one_reduce(30.0, 0.3);
    let p = paper(&job);
    assert_eq!(p.sampled(), vec![280_000]);
    assert_eq!(p.finished_at, Some(30.0));
    let q = quantile_max_lognormal(0.3, 1, 0.95);
    assert!((q - (0.3f64 * 1.644854).exp()).abs() < 1e-5, "{q}");
    assert_eq!(dart(&job).sampled(), vec![(280_000.0 / q).floor() as u64]);
    let without = dart_less(&job, |x| x.reduce_confidence = false);
    let mean = expected_max_lognormal(0.3, 1);
    assert_eq!(without.sampled(), vec![(280_000.0 / mean).floor() as u64]);
}

#[test]
fn forecast_cut_dart_forecasts_the_reduce_alg5_will_leave_the_paper_eq1() {
    // The one-map job under dart (first_map): at map close eq. (1) says 10 + 0 + 10 = 20; Alg. 5
    // will cut the reduce to end at D, and dart's forecast says 15.
    let job = one_map_over_its_deadline();
    let total = |r: &Run| r.closed.unwrap().2.unwrap().total;
    let d = dart(&job);
    assert!((total(&d) - 15.0).abs() < 1e-3, "{:?}", d.closed);
    let without = dart_less(&job, |x| x.forecast_cut = false);
    assert!(
        (total(&without) - 20.0).abs() < 1e-3,
        "{:?}",
        without.closed
    );
    // The decisions are the same: only the forecast moved.
    assert_eq!(without.sampled(), d.sampled());
    assert_eq!(without.finished_at, d.finished_at);
}

#[test]
fn sample_floor_dart_keeps_one_percent_where_the_time_left_fits_half_of_that() {
    // D = 23.05: the reduce's input comes at 23 with 0.05 s left, d_max = 2000 B of 400 kB.
    // The paper keeps d_max and ends at D; dart keeps its floor, 1 %, and ends 0.05 s late.
    let job = slow_maps_one_reduce(23.05, 0.0);
    let p = paper(&job);
    let [kept] = p.sampled()[..] else {
        panic!("{:?}", p.sampled())
    };
    assert!(kept.abs_diff(2000) <= 1, "{kept}");
    assert!(finished(&p) <= 23.05 + 1e-6);
    let d = dart(&job);
    assert_eq!(d.sampled(), vec![4000]);
    assert!(finished(&d) > 23.05);
    let without = dart_less(&job, |x| x.sample_floor = false);
    assert_eq!(without.sampled(), p.sampled());
}

#[test]
fn sample_floor_dart_keeps_a_whole_byte_where_the_time_left_fits_less_than_one() {
    // FB-2010's job2719 in miniature: one map whose single byte of output is the reduce's
    // input, and a reduce so slow (100 s a byte) that d_max at D = 30 is a fifth of a byte.
    // Cut to 0 bytes, the reduce answers from nothing at once (an empty answer, and an
    // estimate thousands of times off); dart keeps the byte, and its forecast says so.
    let mut s = Script::uniform(1, 1, 1, 10.0, 10.0);
    s.map_output = 1;
    s.reduce_time = PowerLaw {
        a: 100.0,
        b: 1.0,
        spread: 0.0,
    };
    let spec = s.job(1, 1, 30.0, s.true_profile(10.0, 10.0, 1));
    let job = (s, spec);
    let d = dart(&job);
    // (Past D, `reduce_restart` runs it once more elsewhere: with the byte again.)
    assert!(
        !d.sampled().is_empty() && d.sampled().iter().all(|&kept| kept == 1),
        "{:?}",
        d.sampled()
    );
    let p = d.progress.expect("finished");
    assert_eq!(p.processed_fraction(), 1.0);
    // The forecast at map close counts the whole byte's 100 s, not a fifth of it.
    let forecast = d.closed.expect("closes").2.expect("an estimate").total;
    assert!(forecast >= 110.0, "{forecast}");
    let without = dart_less(&job, |x| x.sample_floor = false);
    assert_eq!(without.sampled(), vec![0]);
    assert_eq!(
        without.progress.expect("finished").processed_fraction(),
        0.0
    );
}

#[test]
fn node_pace_dart_sizes_a_reduce_on_a_slow_node_for_that_node() {
    // The reduce lands on node 1, where the job's maps ran 3× slower. dart keeps what that pace
    // can reduce by D; on the profile's pace Alg. 5 keeps all 400 kB, a 30 s reduce: late.
    let job = reduce_on_a_measured_slow_node();
    let d = dart(&job);
    assert_eq!(d.sampled(), vec![186_666]);
    assert!(finished(&d) <= 50.0);
    let without = dart_less(&job, |x| x.node_pace = false);
    assert!(
        without.sampled().first() != Some(&186_666),
        "{:?}",
        without.sampled()
    );
    assert!(finished(&without) > 50.0);
    // dart-paper does not reach that state: eq. (5) as printed reads the slow node's late
    // output as a slow shuffle and ends the map phase at k = 3, with the reduce on node 0.
    // Given yard's bandwidth, the paper keeps all 400 kB on node 1 and misses; node_pace on
    // top makes it dart.
    let p = paper(&job);
    assert_eq!((closed_k(&p), p.sampled()), (3, vec![]));
    let busy = Extensions {
        busy_bandwidth: true,
        ..Extensions::NONE
    };
    let p = go(with(PolicyKind::DartPaper, busy), &job);
    assert_eq!((closed_k(&p), p.sampled()), (4, vec![]));
    assert!(finished(&p) > 50.0);
    let p = go(
        with(
            PolicyKind::DartPaper,
            Extensions {
                node_pace: true,
                ..busy
            },
        ),
        &job,
    );
    assert_eq!(p.sampled(), vec![186_666]);
    assert!(finished(&p) <= 50.0);
}

#[test]
fn reduce_restart_dart_restarts_a_reduce_that_will_end_after_d_the_paper_waits() {
    // Reduce 0 lands on node 2 (4× slow, no map ran there): 40 s from t = 11. dart kills it at
    // 16 and restarts it on node 0 on what the time left allows; the paper waits until 51.
    let job = reduce_on_an_unmeasured_slow_node();
    let d = dart(&job);
    assert_eq!((kills(&d), d.sampled()), (vec![16.0], vec![360_000]));
    assert!(finished(&d) <= 30.0 + 1e-6);
    let p = paper(&job);
    assert_eq!((kills(&p), p.sampled()), (vec![], vec![]));
    assert_eq!(p.finished_at, Some(51.0));
    let without = dart_less(&job, |x| x.reduce_restart = false);
    assert_eq!(without.finished_at, Some(51.0));
}

#[test]
fn deadline_stragglers_dart_revises_a_map_that_ends_after_d_though_no_late_straggler() {
    // Map 3 runs at 2/3 of the median rate, not under half: no straggler by LATE's rule, the
    // paper's, so the paper waits for it (15 > D = 14). dart kills it at t = 5.
    let job = longest_draw_of_a_wave();
    let d = dart(&job);
    assert_eq!(
        (kills(&d), k(&d), d.finished_at),
        (vec![5.0], 3, Some(10.0))
    );
    let p = paper(&job);
    assert_eq!((kills(&p), k(&p), p.finished_at), (vec![], 4, Some(15.0)));
    let without = dart_less(&job, |x| x.deadline_stragglers = false);
    assert_eq!(without.finished_at, Some(15.0));
}

#[test]
fn end_lost_races_dart_ends_a_race_neither_copy_can_win_the_paper_lets_it_run() {
    // Both copy map 3 at t = 20 (W ≥ T_m^a); it takes 60 s wherever it runs. dart sees neither
    // copy end within W and kills both (k = 7); the paper waits for the original, until 60.
    let job = map_slow_wherever_it_runs();
    let copied_at = |r: &Run| {
        r.times(|d| {
            matches!(
                d,
                Decision::LaunchMap {
                    speculative: true,
                    map: MapId(3),
                    ..
                }
            )
        })
    };
    let d = dart(&job);
    assert_eq!(copied_at(&d), [20.0]);
    assert_eq!(copied_at(&paper(&job)), [20.0]);
    assert_eq!((copies(&d), kills(&d), k(&d)), (1, vec![21.0, 21.0], 7));
    assert!(finished(&d) < 40.0);
    let p = paper(&job);
    assert_eq!((copies(&p), kills(&p), k(&p)), (1, vec![60.0], 8));
    assert!(finished(&p) > 60.0);
    let without = dart_less(&job, |x| x.end_lost_races = false);
    assert_eq!((kills(&without), k(&without)), (vec![60.0], 8));
}

#[test]
fn kill_on_tick_dart_kills_a_straggler_no_container_will_be_offered_for() {
    // Map 1 (60 s) is a LATE straggler from t = 15; the job's one container is busy with it,
    // so Alg. 3, run on container offers, never runs. dart's tick kills it once W = 25 − T_p
    // falls under T_m^a = 10 (t = 16); the paper waits until 70.
    let job = lone_straggler_after_its_wave();
    let d = dart(&job);
    assert_eq!(
        (kills(&d), k(&d), d.finished_at),
        (vec![16.0], 1, Some(16.0))
    );
    let p = paper(&job);
    assert_eq!((kills(&p), k(&p), p.finished_at), (vec![], 2, Some(70.0)));
    let without = dart_less(&job, |x| x.kill_on_tick = false);
    assert_eq!(without.finished_at, Some(70.0));
}

#[test]
fn first_map_dart_runs_a_one_map_job_over_its_deadline_the_paper_answers_nothing() {
    // T_J(1) = 20 > D = 15: Alg. 1 as printed launches nothing (k = 0). dart launches the map
    // (it and its shuffle fit) and Alg. 5 cuts the reduce to the 4 s left.
    let job = one_map_over_its_deadline();
    let d = dart(&job);
    assert_eq!((closed_k(&d), k(&d), d.sampled()), (1, 1, vec![160_000]));
    let p = paper(&job);
    assert_eq!((closed_k(&p), k(&p)), (0, 0));
    assert_eq!(p.closed.unwrap().0, 0.0, "at once");
    let without = dart_less(&job, |x| x.first_map = false);
    assert_eq!(k(&without), 0);
}

#[test]
fn busy_bandwidth_dart_measures_the_link_the_paper_how_fast_maps_produce_output() {
    // At t = 20, 8 outputs of 100 kB crossed since T_q = 10: eq. (5) as printed reads 80 kB/s,
    // so T_S = (k+1)·100 kB / 80 kB/s and T_NS = 1.25·(k+1) − 20; with T_M^n = 30 and
    // T_R = 0.05·(k+1), T_J = 10 + 1.3·(k+1) < 35 up to k+1 = 19. dart measures the link
    // over its busy 0.8 ms (1 GB/s, T_NS = 0) and reads 24 maps (three waves).
    let job = five_waves_trickling_output();
    let p = paper(&job);
    assert_eq!((p.closed.unwrap().0, closed_k(&p)), (20.0, 19));
    assert!(finished(&p) < 35.0);
    let d = dart(&job);
    assert_eq!((d.closed.unwrap().0, closed_k(&d)), (30.0, 24));
    let without = dart_less(&job, |x| x.busy_bandwidth = false);
    assert_eq!(closed_k(&without), 19);
}

/// Every scripted job of this file.
fn jobs() -> Vec<(&'static str, Job)> {
    vec![
        ("one wave", one_wave_eight_reduces(0.5, Vec::new())),
        ("five waves", five_waves_trickling_output()),
        ("slow maps", slow_maps_one_reduce(30.0, 0.3)),
        ("no time left", slow_maps_one_reduce(23.05, 0.0)),
        ("one map", one_map_over_its_deadline()),
        ("lone straggler", lone_straggler_after_its_wave()),
        ("slow map", map_slow_wherever_it_runs()),
        ("straggler, copy", straggler(60.0)),
        ("straggler, kill", straggler(30.0)),
        ("longest draw", longest_draw_of_a_wave()),
        ("unmeasured node", reduce_on_an_unmeasured_slow_node()),
        ("measured node", reduce_on_a_measured_slow_node()),
    ]
}

fn revises(d: &Decision) -> bool {
    matches!(
        d,
        Decision::Kill(_)
            | Decision::SampleReduceInput { .. }
            | Decision::LaunchMap {
                speculative: true,
                ..
            }
    )
}

fn without_wants(r: &Run) -> Vec<(f64, Decision)> {
    let log = r
        .log
        .iter()
        .filter(|(_, d)| !matches!(d, Decision::Want(_)));
    log.cloned().collect()
}

fn samples(d: &Decision) -> bool {
    matches!(d, Decision::SampleReduceInput { .. })
}

#[test]
fn d_wor_never_kills_speculates_or_samples_and_its_approach_stage_is_dart_papers() {
    let mut same = 0;
    for (name, job) in jobs() {
        let p = paper(&job);
        let wor = go(policy(PolicyKind::DartWithoutRevise), &job);
        // A race's loser is killed by whoever runs races; D-WOR runs none.
        assert_eq!(wor.count(revises), 0, "{name}: {:#?}", wor.log);
        // The approach stage is the same: the map phase closes when, with what k and estimate
        // dart-paper's does.
        assert_eq!(wor.closed, p.closed, "{name}");
        // Where dart-paper revises nothing, D-WOR is dart-paper decision for decision, but for
        // the container dart-paper asks for while it sees a straggler (Alg. 3 needs one to
        // copy it on; D-WOR looks for none).
        if p.count(revises) == 0 {
            assert_eq!(without_wants(&wor), without_wants(&p), "{name}");
            same += 1;
        }
    }
    assert!(same >= 4, "{same} jobs where dart-paper revises nothing");
    // The paper's revise stage at work, and D-WOR without it: the straggler costs D.
    let job = straggler(30.0);
    let (p, wor) = (paper(&job), go(policy(PolicyKind::DartWithoutRevise), &job));
    assert_eq!((kills(&p), k(&p)), (vec![20.0], 6));
    assert!(finished(&p) < 30.0 && finished(&wor) > 60.0);
}

#[test]
fn d_wmr_never_samples_reduce_input_and_otherwise_is_dart_paper() {
    let mut revised_maps = 0;
    for (name, job) in jobs() {
        let p = paper(&job);
        let wmr = go(policy(PolicyKind::DartMapReviseOnly), &job);
        assert_eq!(wmr.count(samples), 0, "{name}: {:#?}", wmr.log);
        assert_eq!(wmr.closed, p.closed, "{name}");
        // Where dart-paper samples nothing, D-WMR is dart-paper, map revising included.
        if p.count(samples) == 0 {
            assert_eq!(wmr.log, p.log, "{name}");
            revised_maps += usize::from(p.count(revises) > 0);
        }
    }
    assert!(revised_maps >= 3, "the straggler jobs revise maps");
    // Alg. 5 at work, and D-WMR without it: the reduce keeps all 400 kB and ends after D.
    let job = slow_maps_one_reduce(30.0, 0.0);
    let (p, wmr) = (paper(&job), go(policy(PolicyKind::DartMapReviseOnly), &job));
    assert_eq!(p.sampled(), vec![280_000]);
    assert_eq!(p.finished_at, Some(30.0));
    assert_eq!(wmr.finished_at, Some(33.0));
}

#[test]
fn d_wost_uses_eq_8_where_dart_paper_uses_eq_13_and_is_otherwise_dart_paper() {
    // No previous run: eq. (13) has nothing to scale and falls back to eq. (8), so D-WOST is
    // dart-paper decision for decision.
    for (name, job) in jobs() {
        let (p, wost) = (paper(&job), go(policy(PolicyKind::DartWithoutSkew), &job));
        assert_eq!(wost.log, p.log, "{name}");
    }
    // A previous run whose largest reduce took 3× the average partitions: eq. (13) says
    // d = 3·(k+1)·p, T_R = 0.75·(k+1), so 10 + 0.75·(k+1) < 17 up to k+1 = 9; eq. (8) says
    // d = (k+1)·p, 10 + 0.25·(k+1) < 17 up to 27. At map close both forecast T_R = 6.75.
    let skewed = vec![PreviousRun {
        k: 40,
        max_reduce_input: 3.0 * 40.0 * 100_000.0,
    }];
    let job = one_wave_eight_reduces(0.0, skewed);
    let (p, wost) = (paper(&job), go(policy(PolicyKind::DartWithoutSkew), &job));
    let reduce = |r: &Run| r.closed.unwrap().2.unwrap().reduce;
    assert_eq!(closed_k(&p), 9);
    assert_eq!(closed_k(&wost), 27);
    assert!((reduce(&p) - 6.75).abs() < 1e-9 && (reduce(&wost) - 6.75).abs() < 1e-9);
}
