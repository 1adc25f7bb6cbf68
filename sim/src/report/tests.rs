use super::*;
use yard_appmaster::policy::Estimate;

/// A finished job of 10 maps: answered at 80 s (by D = 100) or, `missed`, at 120 s, from
/// all the input of its k maps; `est` is its estimate of the total at map close.
pub(crate) fn result(
    config: &'static str,
    policy: PolicyKind,
    bin: SizeBin,
    k: u32,
    k_max: u32,
    missed: bool,
    est: f64,
) -> JobResult {
    let completion = if missed { 120.0 } else { 80.0 };
    JobResult {
        job: "j".into(),
        config,
        policy,
        bin,
        maps: 10,
        k,
        k_max,
        k_max_fraction: f64::from(k_max) / 10.0,
        byte_max_fraction: f64::from(k_max) / 10.0,
        byte_max_exact: true,
        deadline: 100.0,
        completion,
        estimates: [None, Some(parts(10.0, 0.0, 0.0, est)), None],
        reforecast: None,
        phases: Some(parts(50.0, 10.0, completion - 60.0, completion)),
        processed_fraction: f64::from(k) / 10.0,
        events: 1,
        guard: 0.0,
        guard_fired: false,
        lone_map: false,
        unguarded: None,
        floor: Some(completion),
    }
}

fn parts(map: f64, shuffle: f64, reduce: f64, total: f64) -> Estimate {
    Estimate {
        map,
        shuffle,
        reduce,
        total,
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-12)
}

/// A report of two jobs, seed 1, no guard, the default model, over `rows`.
fn two_job_report(rows: &[Row], paper: Vec<Comparison>) -> Report {
    Report {
        seed: 1,
        jobs: 2,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows: rows.to_vec(),
        paper,
    }
}

fn by_bin<'a>(rows: &'a [Row], bin: &str) -> &'a Row {
    rows.iter().find(|r| r.bin == bin).unwrap()
}

#[test]
fn outcomes_are_the_shares_times_and_overruns_every_experiment_reports() {
    let dart = PolicyKind::Dart;
    let small = SizeBin::Small;
    let met = result("C1", dart, small, 4, 5, false, 80.0); // at 80 s, D = 100 s
    let late = result("C1", dart, small, 4, 5, true, 80.0); // at 120 s: 0.2 over
    let empty = result("C1", dart, small, 0, 5, false, 80.0);
    let mut hung = result("C1", dart, small, 2, 5, true, 80.0);
    hung.completion = f64::INFINITY;
    let mut later = late.clone();
    later.completion = 160.0; // 0.6 over
    let o = Outcomes::of([&met, &late, &empty, &hung, &later]);
    assert_eq!(o.jobs, 5);
    assert_eq!(
        (o.missed_fraction, o.empty_fraction, o.met_fraction),
        (0.6, 0.2, 0.2)
    );
    assert!(close(Some(o.mean_processed_fraction), 1.4 / 5.0));
    // Over the four that answered; the hung one is unanswered, its overrun left out.
    assert_eq!(o.mean_completion_s, Some(110.0));
    assert_eq!(o.unanswered, 1);
    assert!(close(Some(o.relative_deadline_exceeded), 0.8));
    assert_eq!(o.median_deadline_exceeded, Some(0.6));
    let none = Outcomes::of(Vec::<&JobResult>::new());
    assert_eq!(
        (none.jobs, none.missed_fraction, none.mean_completion_s),
        (0, 0.0, None)
    );
}

#[test]
fn statistics_by_hand() {
    assert_eq!(median(&[1.0, 2.0, 10.0]), Some(2.0));
    assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
    let v: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(percentile(&v, 0.9), Some(9.0));
    assert_eq!(percentile(&v, 0.8), Some(8.0));
    assert_eq!(percentile(&[5.0], 0.9), Some(5.0));
    assert_eq!(percentile(&[], 0.9), None);
    let s = Stats::of(vec![0.5, 0.1, 0.3, 0.2, 10.0]);
    assert_eq!((s.jobs, s.median, s.p80), (5, Some(0.3), Some(0.5)));
    assert!(close(s.mean, 11.1 / 5.0));
    assert_eq!(Stats::of(Vec::new()).mean, None);
}

#[test]
fn rows_by_config_policy_and_bin_with_the_paper_beside() {
    let results = vec![
        result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 80.0),
        result("C1", PolicyKind::Dart, SizeBin::Large, 10, 10, true, 60.0),
        result("C2", PolicyKind::Dart, SizeBin::Small, 5, 10, false, 88.0),
    ];
    let rows = rows(&results, &["C1", "C2"], &[PolicyKind::Dart]);
    let names: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.config, r.bin))
        .collect();
    assert_eq!(
        names,
        [
            "C1 small",
            "C1 large",
            "C1 all",
            "C1 two-plus",
            "C1 every",
            "C2 small",
            "C2 all",
            "C2 two-plus",
            "C2 every",
            "all small",
            "all large",
            "all all",
            "all two-plus",
            "all every"
        ]
    );
    let all = rows.iter().rfind(|r| r.bin == "all").unwrap();
    assert_eq!(all.jobs, 3);
    assert_eq!(all.median_deviation, Some(0.8));
    assert!(close(all.mean_deviation, 2.3 / 3.0));
    assert!((all.missed_fraction - 1.0 / 3.0).abs() < 1e-12);
    assert!((all.met_fraction - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(all.empty_fraction, 0.0);
    // |80 − 80| / 80, |120 − 60| / 120, |80 − 88| / 80 → 0, 0.5, 0.1.
    assert!(close(all.mean_estimation_error, 0.2));
    assert_eq!(all.median_estimation_error, Some(0.1));
    assert_eq!(all.p80_estimation_error, Some(0.5));
    assert_eq!(all.p90_estimation_error, Some(0.5));
    assert!(close(Some(all.mean_processed_fraction), 2.3 / 3.0));
    let c = compare(&rows, "deadlines", &["C1", "C2"]);
    let missed = c
        .iter()
        .find(|c| c.figure.metric == "missed_fraction" && c.figure.policy == "dart")
        .unwrap();
    assert_eq!(missed.simulated, Some(1.0 / 3.0));
    assert!((missed.difference.unwrap() - (1.0 / 3.0 - 0.035)).abs() < 1e-12);
    let table = markdown(&Report {
        seed: 1,
        jobs: 3,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows,
        paper: c,
    });
    assert!(
        table.contains(
            "| all | dart | all | 3 | 80.0 | 76.7 | 33.3 | 0.0 | 66.7 | 76.7 | 76.7 | 76.7 | 100.0 | 76.7 | 20.0 | 10.0 | 50.0 | 50.0 | 0.0 | 0.0 | – |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| beside the paper (jobs with k_max ≥ 1; its Dart beside both Darts) |"),
        "{table}"
    );
}

#[test]
fn partial_and_none_fits_cut_jobs_by_what_their_deadline_leaves_to_read() {
    let results = vec![
        result("C2", PolicyKind::Dart, SizeBin::Small, 4, 5, false, 80.0), // partial
        result("C2", PolicyKind::Dart, SizeBin::Large, 10, 10, false, 80.0), // all fits
        result("C2", PolicyKind::Dart, SizeBin::Small, 1, 0, true, 80.0),  // nothing fits
        result("C2", PolicyKind::Dart, SizeBin::Medium, 9, 9, true, 80.0), // partial, late
    ];
    let rows = rows(&results, &["C2"], &[PolicyKind::Dart]);
    let partial = by_bin(&rows, "partial");
    assert_eq!(partial.jobs, 2);
    assert_eq!(partial.median_deviation, Some(0.9));
    assert_eq!(partial.missed_fraction, 0.5);
    let none = by_bin(&rows, "none-fits");
    assert_eq!((none.jobs, none.median_deviation), (1, None));
    assert_eq!(none.missed_fraction, 1.0);
    assert_eq!(
        by_bin(&rows, "all").jobs,
        3,
        "the paper's population: k_max ≥ 1"
    );
    assert_eq!(
        by_bin(&rows, "small").jobs,
        1,
        "size bins count the paper's population too"
    );
    assert_eq!(by_bin(&rows, "every").jobs, 4, "every job");
    let table = markdown(&Report {
        seed: 1,
        jobs: 4,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows,
        paper: Vec::new(),
    });
    assert!(
        table.contains("| C2 | dart | partial | 2 | 90.0 |"),
        "{table}"
    );
    assert!(
        table.contains("`none-fits` the jobs where no schedule"),
        "{table}"
    );
    assert!(table.contains("count the jobs with k_max ≥ 1, the paper's"));
}

#[test]
fn every_job_ends_met_empty_or_missed_and_an_empty_answer_is_not_met() {
    let dart = PolicyKind::Dart;
    let small = SizeBin::Small;
    // Met: 4 maps, all their input, by D.
    let met = result("C1", dart, small, 4, 5, false, 80.0);
    // Empty: no map, by D.
    let no_maps = result("C1", dart, small, 0, 5, false, 80.0);
    // Empty: 3 maps ran, but Alg. 5 cut every byte of their reduce input.
    let mut all_cut = result("C1", dart, small, 3, 5, false, 80.0);
    all_cut.processed_fraction = 0.0;
    // Missed: late, from some input; and late from nothing (late first: it is missed).
    let late = result("C1", dart, small, 4, 5, true, 80.0);
    let late_empty = result("C1", dart, small, 0, 5, true, 80.0);
    let outcomes: Vec<Outcome> = [&met, &no_maps, &all_cut, &late, &late_empty]
        .iter()
        .map(|r| r.outcome())
        .collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Met,
            Outcome::Empty,
            Outcome::Empty,
            Outcome::Missed,
            Outcome::Missed
        ]
    );
    // Never finished: missed.
    let mut hung = met.clone();
    hung.completion = f64::INFINITY;
    hung.phases = None;
    assert_eq!(hung.outcome(), Outcome::Missed);
    assert_eq!(hung.estimation_error(), None);

    let results = vec![met, no_maps, all_cut, late, late_empty];
    let rows = rows(&results, &["C1"], &[dart]);
    let all = by_bin(&rows, "all");
    assert_eq!(
        (all.met_fraction, all.empty_fraction, all.missed_fraction),
        (0.2, 0.4, 0.4)
    );
    assert!((all.met_fraction + all.empty_fraction + all.missed_fraction - 1.0).abs() < 1e-12);
    // Processed: 0.4, 0, 0, 0.4, 0 over five jobs.
    assert!((all.mean_processed_fraction - 0.16).abs() < 1e-12);
    let table = markdown(&Report {
        seed: 1,
        jobs: 5,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows,
        paper: Vec::new(),
    });
    assert!(
        table.contains("| C1 | dart | all | 5 | 60.0 | 44.0 | 40.0 | 40.0 | 20.0 | 16.0 | 32.0 |"),
        "{table}"
    );
}

#[test]
fn data_vs_oracle_leaves_out_jobs_with_k_max_zero() {
    let dart = PolicyKind::Dart;
    // k_max 5 of 10 maps (half the input), 4 read: 0.4 / 0.5; k_max 10, all read: 1.
    let a = result("C1", dart, SizeBin::Small, 4, 5, false, 80.0);
    let b = result("C1", dart, SizeBin::Small, 10, 10, false, 80.0);
    // k_max 0: the oracle reads nothing, and a policy that read 1 map (and was late) is
    // not infinitely better than it.
    let c = result("C1", dart, SizeBin::Small, 1, 0, true, 80.0);
    assert_eq!(c.data_vs_oracle(), None);
    assert!(close(a.data_vs_oracle(), 0.8));
    let rows = rows(&[a, b, c.clone()], &["C1"], &[dart]);
    assert!(close(by_bin(&rows, "every").data_vs_oracle, 0.9));
    assert!(close(by_bin(&rows, "all").data_vs_oracle, 0.9));
    let none = by_bin(&rows, "none-fits");
    assert_eq!(none.data_vs_oracle, None, "null when no job is left");
    // Processed fraction still counts the k_max = 0 job's input.
    assert!(close(Some(none.mean_processed_fraction), 0.1));
    let json = serde_json::to_value(none).unwrap();
    assert!(json["data_vs_oracle"].is_null());
    let table = markdown(&Report {
        seed: 1,
        jobs: 3,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows,
        paper: Vec::new(),
    });
    assert!(
        table.contains("| C1 | dart | none-fits | 1 | – | – | 100.0 | 0.0 | 0.0 | 10.0 | – |"),
        "{table}"
    );
}

#[test]
fn bytes_vs_exact_oracle_leaves_out_the_jobs_whose_oracle_is_a_bound() {
    let dart = PolicyKind::Dart;
    // 4 of an exact oracle's 5 maps: 0.8; 2 of a bound's 5: 0.4.
    let exact = result("C1", dart, SizeBin::Small, 4, 5, false, 80.0);
    let mut bound = result("C1", dart, SizeBin::Small, 2, 5, false, 80.0);
    bound.byte_max_exact = false;
    let rows = rows(&[exact, bound], &["C1"], &[dart]);
    let every = by_bin(&rows, "every");
    assert!(close(every.bytes_vs_oracle, 0.6));
    assert!(close(every.bytes_oracle_exact_fraction, 0.5));
    assert!(close(every.bytes_vs_exact_oracle, 0.8));
    assert_eq!(
        metric(every, "bytes_vs_exact_oracle"),
        every.bytes_vs_exact_oracle
    );
}

#[test]
fn an_empty_answers_estimation_error_is_reported_apart() {
    let dart = PolicyKind::Dart;
    // Answers from input: errors 0.1 and 0.3 at map close.
    let a = result("C1", dart, SizeBin::Large, 5, 5, false, 88.0);
    let b = result("C1", dart, SizeBin::Large, 5, 5, false, 104.0);
    // From nothing (every reduce byte cut), answered at once though the estimate said
    // 2,000 s: an error of 24 that measures nothing.
    let mut empty = result("C1", dart, SizeBin::Large, 1, 5, false, 2000.0);
    empty.processed_fraction = 0.0;
    // The floor is over the answers from input: 4 s and 8 s off 80 s; the empty one's
    // 40 s off is left out with its estimate.
    let (mut a, mut b) = (a, b);
    a.floor = Some(84.0);
    b.floor = Some(72.0);
    empty.floor = Some(40.0);
    let rows = rows(&[a, b, empty], &["C1"], &[dart]);
    let large = by_bin(&rows, "large");
    assert!(close(large.mean_estimation_error, 0.2));
    assert_eq!(large.median_estimation_error, Some(0.2));
    assert_eq!(large.empty_estimation_error.jobs, 1);
    assert!(close(large.empty_estimation_error.mean, 24.0));
    assert!(close(large.mean_floor_error, 0.075));
    assert!(close(large.p80_floor_error, 0.1));
    assert_eq!(
        metric(large, "median_floor_error"),
        large.median_floor_error
    );
    assert_eq!(large.estimation.map_close.total.jobs, 2);
    assert_eq!(large.empty_fraction, 1.0 / 3.0);
}

#[test]
fn the_uncapped_estimates_p80_error_stands_beside_the_capped_one() {
    let dart = PolicyKind::Dart;
    // Truth 80 s. Capped at D = 100 s, the parts summing to 160 s: errors 0.25 and 1.
    let mut capped = result("C1", dart, SizeBin::Large, 5, 5, false, 100.0);
    capped.estimates[1] = Some(parts(100.0, 20.0, 40.0, 100.0));
    // Uncapped: the total is the parts' sum, 88 s: 0.1 both ways.
    let mut free = result("C1", dart, SizeBin::Large, 5, 5, false, 88.0);
    free.estimates[1] = Some(parts(60.0, 8.0, 20.0, 88.0));
    assert_eq!(capped.estimation_error(), Some(0.25));
    assert_eq!(capped.uncapped_estimation_error(), Some(1.0));
    let rows = rows(&[capped, free], &["C1"], &[dart]);
    let all = by_bin(&rows, "all");
    assert_eq!(all.p80_estimation_error, Some(0.25));
    assert_eq!(all.p80_estimation_error_uncapped, Some(1.0));
    assert_eq!(metric(all, "p80_estimation_error_uncapped"), Some(1.0));
    let table = markdown(&two_job_report(&rows, Vec::new()));
    assert!(
        table.contains("p80 est. err % at map close, as answered → uncapped")
            && table.contains(
                "C1 dart 25.0 → 100.0 (10.0 over the 50.0 % under D; the close's own 25.0)"
            ),
        "{table}"
    );
}

#[test]
fn the_closes_own_error_stands_beside_the_estimate_in_force() {
    let dart = PolicyKind::Dart;
    // Truth 80 s. The close said 100 s (0.25 off); a kill after it re-sent 84 s (0.05).
    let mut resent = result("C1", dart, SizeBin::Large, 5, 5, false, 100.0);
    resent.estimates[1] = Some(parts(70.0, 10.0, 20.0, 100.0));
    resent.reforecast = Some(parts(60.0, 8.0, 16.0, 84.0));
    // No re-send: the close's 88 s is in force (0.1 off).
    let mut kept = result("C1", dart, SizeBin::Large, 5, 5, false, 88.0);
    kept.estimates[1] = Some(parts(60.0, 8.0, 20.0, 88.0));
    assert_eq!(resent.close_estimation_error(), Some(0.25));
    assert!(close(resent.estimation_error(), 0.05));
    let rows = rows(&[resent, kept], &["C1"], &[dart]);
    let all = by_bin(&rows, "all");
    assert!(close(all.p80_estimation_error, 0.1));
    assert_eq!(all.p80_close_estimation_error, Some(0.25));
    assert_eq!(metric(all, "p80_close_estimation_error"), Some(0.25));
    let table = markdown(&two_job_report(&rows, Vec::new()));
    assert!(table.contains("the close's own 25.0)"), "{table}");
}

#[test]
fn per_phase_errors_at_each_moment_compare_each_part_with_the_truth() {
    let dart = PolicyKind::Dart;
    let mut r = result("C1", dart, SizeBin::Medium, 5, 5, false, 80.0);
    // Truth: maps end at 50, 10 s of shuffle left, reduces 20 s, done at 80.
    r.estimates = [
        Some(parts(40.0, 5.0, 25.0, 70.0)), // start: 0.2, 0.5, 0.25, 0.125
        Some(parts(55.0, 10.0, 20.0, 85.0)), // close: 0.1, 0, 0, 0.0625
        Some(parts(70.0, 0.0, 30.0, 100.0)), // first reduce: reduce 0.5, total 0.25
    ];
    let mut map_only = result("C1", dart, SizeBin::Medium, 5, 5, false, 80.0);
    map_only.phases = Some(parts(80.0, 0.0, 0.0, 80.0));
    map_only.estimates = [None, Some(parts(60.0, 1.0, 0.0, 60.0)), None];
    assert_eq!(map_only.phase_error(Moment::MapClose, Phase::Shuffle), None);
    assert_eq!(
        map_only.phase_error(Moment::MapClose, Phase::Map),
        Some(0.25)
    );
    assert_eq!(
        r.phase_error(Moment::FirstReduce, Phase::Map),
        None,
        "over by then"
    );
    let rows = rows(&[r, map_only], &["C1"], &[dart]);
    let e = &by_bin(&rows, "medium").estimation;
    let mean = |m: Moment, p: Phase| e.get(m).get(p).mean;
    assert!(close(mean(Moment::Start, Phase::Map), 0.2));
    assert!(close(mean(Moment::Start, Phase::Shuffle), 0.5));
    assert!(close(mean(Moment::Start, Phase::Reduce), 0.25));
    assert!(close(mean(Moment::Start, Phase::Total), 0.125));
    assert_eq!(
        e.start.total.jobs, 1,
        "the map-only job made no estimate at start"
    );
    assert!(close(mean(Moment::MapClose, Phase::Map), 0.175)); // 0.1 and 0.25
    assert_eq!(
        e.map_close.shuffle.jobs, 1,
        "a map-only job's shuffle is left out"
    );
    assert!(close(
        mean(Moment::MapClose, Phase::Total),
        (0.0625 + 0.25) / 2.0
    ));
    assert_eq!(e.first_reduce.map.jobs, 0);
    assert!(close(mean(Moment::FirstReduce, Phase::Reduce), 0.5));
    assert!(close(mean(Moment::FirstReduce, Phase::Total), 0.25));
    let row = by_bin(&rows, "medium");
    assert!(close(metric(row, "start.shuffle.mean"), 0.5));
    assert!(close(metric(row, "map_close.map.median"), 0.175));
    assert_eq!(metric(row, "first_reduce.map.p80"), None);
    let table = markdown(&two_job_report(
        &rows,
        compare(&rows, "estimation", &["C1"]),
    ));
    assert!(
        table.contains(
            "| C1 | dart | medium | 20.0 / 20.0 / 20.0 | 50.0 / 50.0 / 50.0 | 25.0 / 25.0 / 25.0 | 12.5 / 12.5 / 12.5 |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| – | – |")
            || table.contains("| 50.0 / 50.0 / 50.0 | 25.0 / 25.0 / 25.0 |")
    );
    assert!(table.contains("§6.4 Table 3 (RS–RE)"), "{table}");
}

#[test]
fn the_papers_deviation_figures_sit_beside_c1_and_c2_pooled_not_beside_c3() {
    // §6.3 pools C1 and C2; a C3 job (k/k_max = 1) must not lift the figure.
    let results = vec![
        result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 80.0),
        result("C2", PolicyKind::Dart, SizeBin::Small, 6, 10, false, 80.0),
        result("C3", PolicyKind::Dart, SizeBin::Small, 10, 10, false, 80.0),
    ];
    let configs = ["C1", "C2", "C3"];
    let all_three = rows(&results, &configs, &[PolicyKind::Dart]);
    let scopes: Vec<&str> = all_three
        .iter()
        .filter(|r| r.bin == "all" || r.bin == "small")
        .map(|r| r.config.as_str())
        .collect();
    assert_eq!(
        scopes,
        [
            "C1", "C1", "C2", "C2", "C3", "C3", "C1+C2", "C1+C2", "all", "all"
        ]
    );
    let c = compare(&all_three, "deadlines", &configs);
    let deviation = c
        .iter()
        .find(|c| c.figure.metric == "mean_deviation" && c.figure.bin == "all")
        .unwrap();
    assert_eq!(deviation.figure.config, "C1+C2");
    assert!((deviation.simulated.unwrap() - 0.7).abs() < 1e-12);
    // With exactly C1 and C2, "all" is the pool.
    let two = rows(&results[..2], &["C1", "C2"], &[PolicyKind::Dart]);
    let c = compare(&two, "deadlines", &["C1", "C2"]);
    let deviation = c
        .iter()
        .find(|c| c.figure.metric == "mean_deviation" && c.figure.bin == "all")
        .unwrap();
    assert!((deviation.simulated.unwrap() - 0.7).abs() < 1e-12);
}

#[test]
fn the_papers_figures_are_over_jobs_with_k_max_of_one_or_more() {
    // A none-fits job that Dart misses does not count in Fig. 8a's figure; it is in
    // `none-fits` and `every`.
    let results = vec![
        result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 80.0),
        result("C1", PolicyKind::Dart, SizeBin::Small, 1, 0, true, 80.0),
    ];
    let rows = rows(&results, &["C1"], &[PolicyKind::Dart]);
    let c = compare(&rows, "deadlines", &["C1"]);
    let missed = c
        .iter()
        .find(|c| c.figure.metric == "missed_fraction" && c.figure.policy == "dart")
        .unwrap();
    assert_eq!(missed.simulated, Some(0.0));
    assert_eq!(by_bin(&rows, "every").missed_fraction, 0.5);
}

#[test]
fn the_papers_dart_sits_beside_both_darts_and_its_ablations_beside_dart_paper() {
    let (paper, dart, wost) = (
        PolicyKind::DartPaper,
        PolicyKind::Dart,
        PolicyKind::DartWithoutSkew,
    );
    let results = vec![
        result("C1", paper, SizeBin::Small, 8, 10, true, 80.0),
        result("C1", dart, SizeBin::Small, 8, 10, false, 80.0),
        result("C1", wost, SizeBin::Small, 8, 10, true, 80.0),
        result("C1", wost, SizeBin::Small, 8, 10, false, 80.0),
    ];
    let rows = rows(&results, &["C1"], &[paper, dart, wost]);
    let c = compare(&rows, "skew", &["C1"]);
    let missed: Vec<(&str, Option<&str>, Option<f64>)> = c
        .iter()
        .filter(|c| c.figure.metric == "missed_fraction")
        .map(|c| (c.yard_policy, c.yard_versus, c.simulated))
        .collect();
    // Missed: dart-paper 1, dart 0, d-wost 0.5.
    assert_eq!(
        missed,
        [
            ("dart-paper", Some("d-wost"), Some(1.0 - 1.0 / 0.5)),
            ("dart", Some("d-wost"), Some(1.0)),
        ]
    );
    let table = markdown(&two_job_report(&rows, c));
    assert!(
        table.contains(
            "| all dart-paper all | missed_fraction reduction vs d-wost | 58.3 | -100.0 |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| all dart all | missed_fraction reduction vs d-wost | 58.3 | 100.0 |"),
        "{table}"
    );
}

#[test]
fn relative_figures_compare_two_policies() {
    let results = vec![
        result("C1", PolicyKind::Dart, SizeBin::Small, 8, 10, false, 88.0), // error 0.1
        result("C1", PolicyKind::Aria, SizeBin::Small, 8, 10, false, 64.0), // error 0.2
    ];
    let rows = rows(&results, &["C1"], &[PolicyKind::Dart, PolicyKind::Aria]);
    let c: Vec<Comparison> = compare(&rows, "estimation", &["C1"])
        .into_iter()
        .filter(|c| c.figure.metric == "mean_estimation_error")
        .collect();
    assert_eq!(c.len(), 1);
    assert!(
        (c[0].simulated.unwrap() - 0.5).abs() < 1e-12,
        "1 − 0.1 / 0.2"
    );
    let table = markdown(&Report {
        seed: 1,
        jobs: 1,
        population: POPULATION,
        no_task_jobs: 0,
        guard: 0.0,
        model: Model::default(),
        rows,
        paper: c,
    });
    assert!(
        table.contains("mean_estimation_error reduction vs aria | 55.8 | 50.0 | -5.8 |"),
        "{table}"
    );
}
