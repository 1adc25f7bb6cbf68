//! `yard sim` as a user runs it: the real binary, a real trace, its JSON, plots and errors.

mod support;

use std::process::Output;

use serde_json::Value;
use support::{json_of, succeeded, yard_output};

const TRACE: &str = "traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv";

#[test]
fn json_is_byte_identical_for_a_seed_and_has_the_documented_keys() {
    let args = [
        "sim", "--trace", TRACE, "--jobs", "30", "--seed", "5", "--json",
    ];
    let (a, b) = (yard_output(&args), yard_output(&args));
    succeeded(&a);
    assert_eq!(a.stdout, b.stdout);
    let report = json_of(&a);
    assert_eq!(
        (report["seed"].as_u64(), report["jobs"].as_u64()),
        (Some(5), Some(30))
    );
    // SWIM's jobs all have tasks: none is left out.
    assert_eq!(report["no_task_jobs"], 0);
    let rows = report["rows"].as_array().unwrap();
    // 4 scopes (C1, C2, C3, all) × 3 policies × at least the "all" bin.
    assert!(rows.len() >= 12, "{} rows", rows.len());
    for key in [
        "config",
        "policy",
        "bin",
        "jobs",
        "median_deviation",
        "mean_deviation",
        "missed_fraction",
        "empty_fraction",
        "met_fraction",
        "mean_processed_fraction",
        "data_vs_oracle",
        "bytes_vs_oracle",
        "bytes_oracle_exact_fraction",
        "bytes_vs_exact_oracle",
        "mean_estimation_error",
        "median_estimation_error",
        "p80_estimation_error",
        "p90_estimation_error",
        "empty_estimation_error",
        "estimation",
    ] {
        assert!(
            rows.iter().all(|r| r.get(key).is_some()),
            "a row lacks {key}"
        );
    }
    // Every job ends in exactly one outcome.
    for r in rows {
        let sum: f64 = ["missed_fraction", "empty_fraction", "met_fraction"]
            .iter()
            .map(|k| r[k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{r}");
    }
    // Per phase at three moments, with median and p80 beside the mean.
    let stats = &rows[0]["estimation"]["map_close"]["shuffle"];
    for key in ["jobs", "mean", "median", "p80"] {
        assert!(stats.get(key).is_some(), "{stats}");
    }
    assert!(rows[0]["estimation"]["start"].is_object());
    assert!(rows[0]["estimation"]["first_reduce"].is_object());
    let every = rows
        .iter()
        .find(|r| r["config"] == "C1" && r["policy"] == "dart" && r["bin"] == "every")
        .unwrap();
    assert_eq!(every["jobs"], 30);
    let all = rows
        .iter()
        .find(|r| r["config"] == "C1" && r["policy"] == "dart" && r["bin"] == "all")
        .unwrap();
    let none = rows
        .iter()
        .find(|r| r["config"] == "C1" && r["policy"] == "dart" && r["bin"] == "none-fits")
        .map_or(0, |r| r["jobs"].as_u64().unwrap());
    assert_eq!(
        all["jobs"].as_u64().unwrap() + none,
        30,
        "`all` is the jobs with k_max ≥ 1, `none-fits` the rest"
    );
    assert!(
        report["population"]
            .as_str()
            .unwrap()
            .contains("k_max >= 1")
    );
}

#[test]
fn the_table_sets_the_papers_figures_beside_its_own() {
    let out = yard_output(&["sim", "--trace", TRACE, "--jobs", "20"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("| config | policy | bin | jobs |"), "{text}");
    assert!(
        text.contains("| missed % | empty % | met % | processed % | data vs oracle % |"),
        "{text}"
    );
    assert!(text.contains("| close: map | close: shuffle |"), "{text}");
    assert!(
        text.contains("| beside the paper (jobs with k_max ≥ 1; its Dart beside both Darts) |")
            && text.contains("§6.2 Fig. 8a")
            && text.contains("§6.4 Fig. 12a"),
        "{text}"
    );
}

#[test]
fn the_stragglers_experiment_prints_table_5_beside_its_rows() {
    let out = yard_output(&[
        "sim",
        "--trace",
        TRACE,
        "--jobs",
        "20",
        "--experiment",
        "stragglers",
    ]);
    succeeded(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("8 slow nodes"), "{text}");
    for policy in ["late", "d-wor", "d-wmr", "dart-paper", "dart"] {
        assert!(
            text.contains(&format!("| C1 | {policy} |")),
            "no {policy} row"
        );
    }
    assert!(text.contains("§6.5 Table 5"), "{text}");
    // The paper's Dart sits beside both Darts.
    for dart in ["dart-paper", "dart"] {
        assert!(
            text.contains(&format!("| C1 {dart} medium | missed_fraction | 5.6 |")),
            "{text}"
        );
    }
}

#[test]
fn every_preset_runs_both_darts() {
    for preset in ["deadlines", "estimation", "stragglers", "optimizations"] {
        let out = yard_output(&[
            "sim",
            "--trace",
            TRACE,
            "--jobs",
            "8",
            "--guard",
            "0",
            "--experiment",
            preset,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{preset}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        let reports = match json.as_array() {
            Some(setups) => setups.clone(),
            None => vec![json],
        };
        for report in reports {
            let policies: Vec<&str> = report["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["policy"].as_str().unwrap())
                .collect();
            for dart in ["dart-paper", "dart"] {
                assert!(policies.contains(&dart), "{preset}: {policies:?}");
            }
        }
    }
}

#[test]
fn svg_plots_are_written() {
    let dir = std::env::temp_dir().join(format!("yard-svg-{}", std::process::id()));
    let out = yard_output(&[
        "sim",
        "--trace",
        TRACE,
        "--jobs",
        "10",
        "--svg",
        dir.to_str().unwrap(),
    ]);
    succeeded(&out);
    for name in [
        "deadlines-deviation.svg",
        "deadlines-estimation-error.svg",
        "deadlines-phase-error.svg",
        "deadlines-outcomes.svg",
    ] {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("dart"), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_are_refused_with_exit_code_2() {
    for args in [
        &["sim"][..],
        &["sim", "--trace", TRACE, "--configs", "C9"],
        &["sim", "--trace", TRACE, "--policies", "magic"],
        &["sim", "--trace", TRACE, "--failure-rate", "2"],
        &["sim", "--trace", TRACE, "--experiment", "everything"],
        &["sim", "--trace", TRACE, "--jobs", "0"],
        &["sim", "--trace", TRACE, "--guard", "-1"],
        &["sim", "--trace", TRACE, "--guard", "soon"],
        &["sim", "--trace", TRACE, "--seeds", "0"],
        &["sim", "--trace", "traces/nonexistent.tsv"],
    ] {
        let out = yard_output(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
}

#[test]
fn min_maps_keeps_only_jobs_with_that_many_maps() {
    // The first 50 FB-2009 jobs include 1-map jobs (small) and jobs of 100+ maps.
    let args = |min: &'static str| {
        [
            "sim",
            "--trace",
            TRACE,
            "--configs",
            "C1",
            "--policies",
            "dart",
            "--min-maps",
            min,
            "--json",
        ]
    };
    let bins = |out: &Output| -> Vec<(String, u64)> {
        let report = json_of(out);
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["bin"].as_str().unwrap().to_owned(),
                    r["jobs"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let everything = bins(&yard_output(&args("0")));
    assert!(
        everything.iter().any(|(b, _)| b == "small"),
        "{everything:?}"
    );
    let big = bins(&yard_output(&args("100")));
    assert!(!big.iter().any(|(b, _)| b == "small"), "{big:?}");
    let total = |rows: &[(String, u64)]| rows.iter().find(|r| r.0 == "every").unwrap().1;
    assert!(0 < total(&big) && total(&big) < total(&everything));

    let none = yard_output(&args("100000000"));
    assert_eq!(none.status.code(), Some(2));
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.contains("--min-maps"), "{err}");
}

#[test]
fn the_simulators_guard_is_the_live_masters_and_guarded_rows_sit_beside_the_unguarded() {
    assert_eq!(
        yard_sim::engine::DEFAULT_GUARD_SECONDS,
        yard_appmaster_live::master::DEFAULT_GUARD_SECONDS,
        "the simulator mirrors the live master's guard"
    );
    let run = |extra: &[&str]| -> Value {
        let mut args = vec![
            "sim",
            "--trace",
            TRACE,
            "--jobs",
            "30",
            "--configs",
            "C1",
            "--policies",
            "dart-paper,dart,full",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = yard_output(&args);
        json_of(&out)
    };
    let by_default = run(&[]);
    assert_eq!(by_default["guard"], 1.0);
    let rows = by_default["rows"].as_array().unwrap();
    let policies: Vec<&str> = rows
        .iter()
        .filter(|r| r["bin"] == "every")
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(
        policies,
        [
            "dart-paper",
            "dart-paper+guard",
            "dart",
            "dart+guard",
            "full"
        ],
        "full is never guarded"
    );
    for r in rows {
        let guarded = r["policy"].as_str().unwrap().ends_with("+guard");
        for key in [
            "guard_seconds",
            "guard_fired_fraction",
            "guard_cost",
            "guard_rescued_fraction",
        ] {
            assert_eq!(r[key].is_null(), !guarded, "{key}: {r}");
        }
    }
    let every = |policy: &str| {
        rows.iter()
            .find(|r| r["policy"] == policy && r["bin"] == "every")
            .unwrap()
    };
    // In C1 some of the first 30 FB-2009 jobs run into their deadline: the guard fires on
    // them, and none of the guarded answers comes late.
    for policy in ["dart-paper+guard", "dart+guard"] {
        let r = every(policy);
        assert!(r["guard_fired_fraction"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["missed_fraction"], 0.0, "{r}");
    }
    let off = run(&["--guard", "0"]);
    assert_eq!(off["guard"], 0.0);
    let rows = off["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| !r["policy"].as_str().unwrap().contains("guard"))
    );
    // The unguarded rows are the same with the guard on or off.
    let plain = rows
        .iter()
        .find(|r| r["policy"] == "dart" && r["bin"] == "every")
        .unwrap();
    assert_eq!(plain, every("dart"));
}

#[test]
fn seeds_print_each_figure_as_its_mean_and_spread_over_the_seeds() {
    let out = yard_output(&[
        "sim",
        "--trace",
        TRACE,
        "--jobs",
        "12",
        "--configs",
        "C1",
        "--policies",
        "dart",
        "--seed",
        "5",
        "--seeds",
        "2",
        "--json",
    ]);
    let report = json_of(&out);
    assert_eq!(report["seeds"], serde_json::json!([5, 6]));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["policy"] == "dart" && r["bin"] == "every")
        .unwrap();
    assert_eq!(row["seeds"], 2);
    let missed = row["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "missed_fraction")
        .unwrap()[1]
        .clone();
    let per_seed: Vec<f64> = runs
        .iter()
        .map(|run| {
            run["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["policy"] == "dart" && r["bin"] == "every")
                .unwrap()["missed_fraction"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let mean = (per_seed[0] + per_seed[1]) / 2.0;
    assert!(
        (missed["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
        "{missed}"
    );
    for key in ["sd", "min", "max", "seeds"] {
        assert!(missed.get(key).is_some(), "{missed}");
    }
    // A preset runs three seeds unless told otherwise; a custom run one.
    let text = String::from_utf8(
        yard_output(&[
            "sim",
            "--trace",
            TRACE,
            "--jobs",
            "6",
            "--experiment",
            "estimation",
        ])
        .stdout,
    )
    .unwrap();
    assert!(text.contains("seeds 1, 2, 3 (3 runs)"), "{text}");
    assert!(text.contains(" ± "), "{text}");
    let text =
        String::from_utf8(yard_output(&["sim", "--trace", TRACE, "--jobs", "6"]).stdout).unwrap();
    assert!(text.contains("seed 1, 6 jobs"), "{text}");
}

#[test]
fn the_simulators_model_is_selectable_and_in_the_header() {
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "--trace", TRACE, "--jobs", "10", "--guard", "0"];
        args.extend_from_slice(extra);
        let out = yard_output(&args);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let default = run(&[]);
    assert!(
        default
            .contains("progress exact, durations log-normal, profiles noisy-truth, 1 earlier run"),
        "{default}"
    );
    let harsh = run(&["--harsh"]);
    assert!(
        harsh.contains("progress noisy, durations pareto, profiles sampled, 1 earlier run"),
        "{harsh}"
    );
    assert_ne!(default, harsh);
    // Profiles from the sample runs alone, or from five earlier runs of each job: the
    // header says which, and the figures move with the profiles.
    let none = run(&["--earlier-runs", "0"]);
    assert!(
        none.contains("profiles noisy-truth, 0 earlier runs"),
        "{none}"
    );
    let five = run(&["--harsh", "--earlier-runs", "5"]);
    assert!(five.contains("profiles sampled, 5 earlier runs"), "{five}");
    let figures = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.contains("earlier run"))
            .map(str::to_owned)
            .collect()
    };
    assert_ne!(figures(&default), figures(&none));
    let bad = yard_output(&["sim", "--trace", TRACE, "--earlier-runs", "-1"]);
    assert_eq!(bad.status.code(), Some(2));
    // An ablation of yard's Dart says what it left out.
    let without = run(&["--dart-without", "wave_end,lone_map"]);
    assert!(
        without.contains("`dart` without lone_map, wave_end"),
        "{without}"
    );
    assert!(!default.contains("`dart` without"), "{default}");
    // One that `dart` leaves off, turned on.
    let with = run(&["--dart-with", "wave_fill"]);
    assert!(
        with.contains("`dart` with wave_fill") && !with.contains("`dart` without"),
        "{with}"
    );
    let one = run(&["--durations", "pareto", "--json"]);
    let json: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(json["model"]["durations"], "pareto");
    assert_eq!(json["model"]["profiles"], "noisy-truth");
    assert_eq!(json["model"]["progress"]["report_noise"], 0.0);
    for bad in [
        &["--progress", "wobbly"][..],
        &["--durations", "cauchy"],
        &["--profiles", "oracle"],
        &["--harsh", "--durations", "pareto"],
        &["--dart-without", "warp_drive"],
        &["--dart-with", "warp_drive"],
    ] {
        let mut args = vec!["sim", "--trace", TRACE];
        args.extend_from_slice(bad);
        assert_eq!(yard_output(&args).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn the_shared_cluster_prints_a_row_per_rm_and_task_policy_with_the_documented_keys() {
    let args = [
        "sim",
        "--trace",
        TRACE,
        "--shared",
        "--rm-policies",
        "fifo,minedf-wc",
        "--policies",
        "dart,full",
        "--deadline-factor",
        "1,2",
        "--time-scale",
        "0.5",
        "--json",
    ];
    let (a, b) = (yard_output(&args), yard_output(&args));
    succeeded(&a);
    assert_eq!(a.stdout, b.stdout, "a seed gives the same day");
    let report = json_of(&a);
    assert_eq!(report["jobs"].as_u64(), Some(50));
    assert_eq!(report["time_scale"].as_f64(), Some(0.5));
    let all: Vec<&Value> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["bin"] == "all")
        .collect();
    let pairs: Vec<(String, String)> = all
        .iter()
        .map(|r| (r["rm_policy"].to_string(), r["policy"].to_string()))
        .collect();
    assert_eq!(pairs.len(), 4, "{pairs:?}");
    for r in &all {
        for key in [
            "rm_policy",
            "policy",
            "jobs",
            "missed_fraction",
            "empty_fraction",
            "mean_processed_fraction",
            "mean_completion_s",
            "relative_deadline_exceeded",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
        assert_eq!(r["jobs"].as_u64(), Some(50));
        let shares = ["missed_fraction", "empty_fraction", "met_fraction"]
            .map(|k| r[k].as_f64().unwrap())
            .iter()
            .sum::<f64>();
        assert!((shares - 1.0).abs() < 1e-9, "{r}");
        if r["policy"] == "full" {
            // Full reads everything, however late.
            assert_eq!(r["empty_fraction"].as_f64(), Some(0.0), "{r}");
        }
    }
    // Bad shared flags say what to fix.
    for bad in [
        vec!["sim", "--trace", TRACE, "--shared", "--rm-policies", "lifo"],
        vec![
            "sim",
            "--trace",
            TRACE,
            "--shared",
            "--deadline-factor",
            "2,1",
        ],
        vec!["sim", "--trace", TRACE, "--shared", "--time-scale", "0"],
        vec!["sim", "--trace", TRACE, "--rm-policies", "edf"],
    ] {
        let out = yard_output(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn the_rm_policies_experiment_prints_the_documented_json_and_aria_s_table_beside() {
    let args = [
        "sim",
        "--experiment",
        "rm-policies",
        "--jobs",
        "40",
        "--runs",
        "2",
        "--interarrivals",
        "200,800",
        "--json",
    ];
    let out = yard_output(&args);
    let report = json_of(&out);
    assert_eq!(
        (report["seed"].as_u64(), report["runs"].as_u64()),
        (Some(1), Some(2))
    );
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 rm policies × 2 inter-arrival times");
    for r in rows {
        for key in [
            "rm_policy",
            "mean_interarrival_s",
            "jobs",
            "missed_fraction",
            "relative_deadline_exceeded",
            "mean_completion_s",
            "extra_map_tasks",
            "extra_reduce_tasks",
            "killed_map_tasks",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
        if r["rm_policy"] != "minedf-wc" {
            assert_eq!(r["extra_map_tasks"].as_f64(), Some(0.0), "{r}");
        }
    }
    // Only MinEDF-WC lends spare containers, and each point holds its jobs' outcomes.
    assert!(
        rows.iter()
            .any(|r| r["extra_map_tasks"].as_f64() > Some(0.0))
    );
    for r in rows {
        assert_eq!(r["jobs"].as_u64(), Some(40));
        let missed = r["missed_fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&missed), "{r}");
    }
    assert_eq!(report["paper"].as_array().unwrap().len(), 3);
    assert_eq!(report["claims"].as_array().unwrap().len(), 6);
    let text = yard_output(&args[..args.len() - 1]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Table II") && text.contains("83.79"),
        "{text}"
    );
    // A trace is not ARIA's workload.
    let out = yard_output(&["sim", "--experiment", "rm-policies", "--trace", TRACE]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_topology_file_shapes_the_shared_cluster() {
    let shape = |topology: &str| {
        let out = yard_output(&[
            "sim",
            "--trace",
            TRACE,
            "--shared",
            "--jobs",
            "5",
            "--rm-policies",
            "fifo",
            "--policies",
            "full",
            "--topology",
            topology,
            "--json",
        ]);
        succeeded(&out);
        let r = json_of(&out);
        (
            r["nodes"].as_u64().unwrap(),
            r["nodes_per_rack"].as_u64().unwrap(),
        )
    };
    // SLS's nodes.json: 19 named hosts in 5 racks (its last entry is nameless).
    assert_eq!(shape("traces/sls/nodes.json"), (19, 4));
    // A Rumen topology: 3 hosts in 2 racks.
    let dir = std::env::temp_dir().join(format!("yard-sim-topology-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rumen = dir.join("topology.json");
    std::fs::write(
        &rumen,
        r#"{"name": "<root>", "children": [
             {"name": "r1", "children": [{"name": "h1", "children": null}, {"name": "h2", "children": null}]},
             {"name": "r2", "children": [{"name": "h3", "children": null}]}]}"#,
    )
    .unwrap();
    assert_eq!(shape(rumen.to_str().unwrap()), (3, 2));
    std::fs::remove_dir_all(&dir).unwrap();
    // What is not a topology, or where a topology does not apply, is bad input.
    for bad in [
        vec!["sim", "--trace", TRACE, "--shared", "--topology", TRACE],
        vec![
            "sim",
            "--trace",
            TRACE,
            "--topology",
            "traces/sls/nodes.json",
        ],
        vec![
            "sim",
            "--trace",
            TRACE,
            "--shared",
            "--nodes",
            "4",
            "--topology",
            "traces/sls/nodes.json",
        ],
        vec![
            "sim",
            "--trace",
            TRACE,
            "--shared",
            "--topology",
            "no/such/file.json",
        ],
    ] {
        let out = yard_output(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("topology"), "{bad:?}: {err}");
    }
}
