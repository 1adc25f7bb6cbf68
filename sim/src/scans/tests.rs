use super::deadlines::ALL_LEVELS;
use super::workload::trace_workload;
use super::*;

fn small() -> ScansSetup {
    ScansSetup {
        seeds: 1,
        arrivals: 200,
        horizon_s: 1200.0,
        levels: vec![0, 8],
        metrics: vec![Metric::AvgResponse],
        ..ScansSetup::default()
    }
}

#[test]
fn kappa_levels_span_negative_random_positive() {
    assert_eq!(kappa(0, 20), (1, false));
    assert_eq!(kappa(3, 20), (16, false));
    assert_eq!(kappa(4, 20), (20, true));
    assert_eq!(kappa(5, 20), (16, true));
    assert_eq!(kappa(8, 20), (1, true));
}

#[test]
fn perfect_correlations_tie_popularity_to_size_and_rho_scales_the_work() {
    let setup = small();
    let (ds, jobs) = workload(&setup, 8, 1);
    // Perfectly positive: the most popular is the largest, and so on down.
    assert!(ds.windows(2).all(|w| w[0].scan_s >= w[1].scan_s));
    let (neg, _) = workload(&setup, 0, 1);
    assert!(neg.windows(2).all(|w| w[0].scan_s <= w[1].scan_s));
    let work: f64 = jobs.iter().map(|j| ds[j.dataset].scan_s).sum();
    assert!((work - 0.9 * 1200.0 * 100.0).abs() < 1e-6 * work);
    assert_eq!(jobs.len(), 200);
    assert!(jobs.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
    assert_eq!(workload(&setup, 8, 1), (ds, jobs), "deterministic per seed");
}

#[test]
fn circumflex_beats_flex_and_reads_less_on_the_seeds_mix() {
    let r = run(&small(), &|_, _| {}).unwrap();
    assert_eq!(r.rows.len(), 2 * 3);
    for row in r.rows.iter().filter(|x| x.policy == "circumflex") {
        assert!(row.ratio_to_flex < 1.0, "{row:?}");
        assert!(row.work_ratio < 1.0, "{row:?}");
    }
    for row in r.rows.iter().filter(|x| x.policy == "flex") {
        assert_eq!(row.ratio_to_flex, 1.0);
    }
    let text = markdown(&r);
    assert!(text.contains("| theta1=1 theta2=1 corr=8 |"), "{text}");
}

#[test]
fn deadlines_answer_every_job_and_deadline_first_changes_the_answers() {
    let setup = ScansSetup {
        levels: vec![0, 4, 8],
        ..small()
    };
    let r = run_deadlines(&setup, &Deadlines::DEFAULT, &|_, _| {}).unwrap();
    assert_eq!(r.rows.len(), 4 * 3);
    for x in &r.rows {
        let runs = match x.workload.as_str() {
            ALL_LEVELS => 3,
            _ => 1,
        };
        assert_eq!(x.deadline_jobs + x.other_jobs, runs * 200, "{x:?}");
        assert!(x.deadline_jobs > 0 && x.other_jobs > 0, "{x:?}");
        let parts = [
            x.full_by_deadline_fraction,
            x.partial_fraction,
            x.empty_fraction,
        ];
        assert!(parts.iter().all(|f| (0.0..=1.0).contains(f)), "{x:?}");
        assert!((parts.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{x:?}");
        assert!(x.mean_processed_fraction >= x.full_by_deadline_fraction - 1e-9);
        assert!(x.mean_processed_fraction <= 1.0 - x.empty_fraction + 1e-9);
    }
    let all = |p: &str| {
        r.rows
            .iter()
            .find(|x| x.workload == ALL_LEVELS && x.policy == p)
            .unwrap()
    };
    let (c, e) = (all("circumflex"), all("circumflex-edf"));
    assert_eq!(
        c.deadline_jobs, e.deadline_jobs,
        "the same jobs and deadlines"
    );
    assert_ne!(
        (c.full_by_deadline_fraction, c.other_mean_response_s),
        (e.full_by_deadline_fraction, e.other_mean_response_s),
        "the rule was never taken"
    );
    let text = deadline_markdown(&r);
    assert!(text.contains("| all levels | circumflex-edf |"), "{text}");
}

#[test]
fn the_grid_covers_figure_6s_25_settings() {
    let setup = ScansSetup {
        arrivals: 60,
        levels: vec![0],
        ..small()
    };
    let r = run_grid(&setup, &|_, _| {}).unwrap();
    assert_eq!(r.rows.len(), 25 * 3);
    let text = grid_markdown(&r);
    assert!(text.contains("| 0.25 | 0.75 |"), "{text}");
    assert!(text.contains("Worst CIRCUMFLEX / FLEX"), "{text}");
}

#[test]
fn a_trace_with_input_paths_shares_its_datasets() {
    let tsv = "job0\t0\t0\t1099511627776\t0\t0\t/data/a\t\t\n\
                   job1\t10\t10\t1099511627776\t0\t0\t/data/a\t\t\n\
                   job2\t20\t10\t549755813888\t0\t0\t/data/b\t\t\n\
                   job3\t25\t5\t1099511627776\t0\t0\t/data/a\t\t\n";
    let w = yard_workload::parse("t.tsv", tsv.as_bytes(), &Default::default()).unwrap();
    let (ds, jobs, paths) = trace_workload(&w, 100).unwrap();
    assert_eq!((ds.len(), jobs.len(), paths), (2, 4, 2));
    let r = run_trace(&ScansSetup::default(), "t.tsv", &w).unwrap();
    let bytes = |p: &str| {
        r.rows
            .iter()
            .find(|x| x.policy == p && x.metric == "avg-response")
            .and_then(|x| x.bytes_read)
            .unwrap()
    };
    // 1 TiB on 100 slots of 64 MiB/s: 164 s a scan, so the jobs on /data/a overlap.
    assert!((bytes("flex") - 3.5 * 1099511627776.0).abs() < 1.0);
    assert!(bytes("circumflex") < bytes("flex"));
    let no_paths =
        yard_workload::parse("t.tsv", b"job0\t0\t0\t10\t0\t0\n", &Default::default()).unwrap();
    assert!(
        trace_workload(&no_paths, 100)
            .unwrap_err()
            .contains("input paths")
    );
}
