//! `yard sim --experiment overload` as a user runs it: the real binary on a real trace, its JSON
//! (the issue's fields), its goals table, its plot and its errors.

mod support;

use std::process::Output;

use support::{json_of, succeeded, yard_in, yard_output};

const TRACE: &str = "traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv";

/// A small run: 30 jobs on 8 nodes of 4 cores.
fn small(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "sim",
        "--experiment",
        "overload",
        "--trace",
        TRACE,
        "--jobs",
        "30",
        "--nodes",
        "8",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    yard_output(&args)
}

#[test]
fn json_has_the_issues_fields_a_row_per_run_and_is_the_same_for_a_seed() {
    let args = small(&["--seeds", "1", "--seed", "2", "--json"]);
    let (a, b) = (run(&args), run(&args));
    succeeded(&a);
    assert_eq!(a.stdout, b.stdout, "a seed gives the same rows");
    let report = json_of(&a);
    assert_eq!(report["seed"].as_u64(), Some(2));
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        2,
        "fifo + dart, without and with the classifier"
    );
    assert_eq!(rows[0]["classifier"], false);
    assert_eq!(rows[1]["classifier"], true);
    for r in rows {
        for key in [
            "classifier",
            "jobs",
            "overloaded_node_seconds",
            "mean_task_slowdown",
            "relaunched_tasks",
            "missed_fraction",
            "throughput_tasks_per_s",
            "empty_fraction",
            "met_fraction",
            "rm_policy",
            "policy",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
        assert_eq!(r["jobs"].as_u64(), Some(30));
        assert_eq!(
            (r["rm_policy"].as_str(), r["policy"].as_str()),
            (Some("fifo"), Some("dart"))
        );
        let shares: f64 = ["missed_fraction", "empty_fraction", "met_fraction"]
            .iter()
            .map(|k| r[k].as_f64().unwrap())
            .sum();
        assert!((shares - 1.0).abs() < 1e-9, "{r}");
        assert!(r["overloaded_node_seconds"].as_f64().unwrap() >= 0.0);
        assert!(r["throughput_tasks_per_s"].as_f64().unwrap() > 0.0);
        assert!(r["mean_task_slowdown"].as_f64().unwrap() >= 1.0 - 1e-9);
    }
    assert_eq!(rows[0]["labelled_good"], 0, "no classifier, no labels");
    let goals = report["goals"].as_array().unwrap();
    assert_eq!(goals.len(), 1);
    for key in [
        "overload_cut",
        "overload_cut_holds",
        "throughput_loss",
        "throughput_holds",
        "missed_change",
        "deadlines_hold",
    ] {
        assert!(goals[0].get(key).is_some(), "{key}");
    }
    assert_eq!(report["nodes"].as_u64(), Some(8));
    assert_eq!(report["containers_per_node"].as_u64(), Some(4));
    assert_eq!(report["load"]["cores"].as_u64(), Some(4));
}

#[test]
fn several_seeds_print_a_list_of_reports_and_the_table_judges_the_goals() {
    let out = run(&small(&[
        "--seeds",
        "2",
        "--policies",
        "dart,full",
        "--json",
    ]));
    let reports = json_of(&out);
    let reports = reports.as_array().expect("one report per seed");
    let seeds: Vec<u64> = reports
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [1, 2]);
    for r in reports {
        assert_eq!(r["rows"].as_array().unwrap().len(), 4);
        assert_eq!(r["goals"].as_array().unwrap().len(), 2);
    }
    let text = run(&small(&["--seeds", "2"]));
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    for needle in [
        "## overload",
        "overloaded node-s",
        "Goals (issue 17)",
        "mean of 2",
        "Load model:",
    ] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
    assert!(text.contains("holds") || text.contains("fails"), "{text}");
}

#[test]
fn the_plot_of_overloaded_node_seconds_is_written() {
    let dir = std::env::temp_dir().join(format!("yard-overload-svg-{}", std::process::id()));
    let dir_s = dir.to_string_lossy().to_string();
    let out = run(&small(&["--seeds", "1", "--svg", &dir_s]));
    succeeded(&out);
    let svg = std::fs::read_to_string(dir.join("overload.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("classifier on") && svg.contains("classifier off")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_exit_2_and_say_what_to_fix() {
    let cases: Vec<(Vec<String>, &str)> = vec![
        (small(&["--overload-settle-ms=-1"]), "--overload-settle-ms"),
        (
            small(&["--overload-utility", "magic"]),
            "--overload-utility",
        ),
        (
            small(&["--overload-max-load-per-core", "0"]),
            "--overload-max-load-per-core",
        ),
        (small(&["--nodes", "0"]), "--nodes"),
        (small(&["--rm-policies", "lifo"]), "lifo"),
        (small(&["--containers", "shared"]), "--containers"),
        (
            ["sim", "--trace", TRACE, "--overload-settle-ms", "5000"]
                .map(String::from)
                .to_vec(),
            "--experiment overload",
        ),
        (
            ["sim", "--trace", TRACE, "--nodes", "8"]
                .map(String::from)
                .to_vec(),
            "--shared or --experiment overload",
        ),
        (
            [
                "sim",
                "--experiment",
                "overload",
                "--trace",
                "traces/nonexistent.tsv",
            ]
            .map(String::from)
            .to_vec(),
            "nonexistent",
        ),
        (
            ["sim", "--experiment", "overlord"]
                .map(String::from)
                .to_vec(),
            "overload",
        ),
    ];
    for (args, says) in cases {
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?} should say {says}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // Run away from the repository, the default trace is not there: say so.
    let out = yard_in(&std::env::temp_dir(), &["sim", "--experiment", "overload"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--trace FILE or --synthetic"), "{stderr}");
}

#[test]
fn variants_run_beside_the_reference_and_name_themselves_in_the_json() {
    let args = small(&[
        "--seeds",
        "1",
        "--overload-variants",
        "yard,spread,paper",
        "--json",
    ]);
    let out = run(&args);
    let report = json_of(&out);
    let rows = report["rows"].as_array().unwrap();
    let named: Vec<(&str, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap(),
                r["classifier"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            ("off", false),
            ("yard", true),
            ("spread", false),
            ("paper", true)
        ]
    );
    for r in rows {
        for key in [
            "jobs",
            "overloaded_node_seconds",
            "throughput_tasks_per_s",
            "unavoidable_node_seconds",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
    }
    let goals = report["goals"].as_array().unwrap();
    let judged: Vec<&str> = goals
        .iter()
        .map(|g| g["variant"].as_str().unwrap())
        .collect();
    assert_eq!(judged, ["yard", "spread", "paper"]);
    assert!(goals.iter().all(|g| g.get("oracle_ceiling").is_some()));
}

#[test]
fn a_bad_variant_or_classifier_name_exits_2_and_says_which_there_are() {
    let out = run(&small(&["--overload-variants", "paper,bayes"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--overload-variants")
            && stderr.contains("bayes")
            && stderr.contains("spread"),
        "{stderr}"
    );
    let out = yard_output(&["sim", "--trace", TRACE, "--overload-variants", "yard"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--experiment overload"));

    // yard rm: the name is checked before anything starts.
    let out = yard_output(&["rm", "--overload-classifier", "bayes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--overload-classifier")
            && stderr.contains("yard")
            && stderr.contains("paper"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The same in the config file.
    let dir = std::env::temp_dir().join(format!("yard-overload-variant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("yard.toml");
    std::fs::write(&config, "[rm]\noverload_classifier = \"bayes\"\n").unwrap();
    let out = yard_output(&["rm", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("overload_classifier"), "{stderr}");
    // yard and paper are taken: the next setting is what stops these (no rm is started).
    for name in ["yard", "paper", "on"] {
        let out = yard_output(&[
            "rm",
            "--overload-classifier",
            name,
            "--overload-settle-ms=-1",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains("--overload-settle-ms"), "{name}: {stderr}");
    }
    std::fs::write(
        &config,
        "[rm]\noverload_classifier = \"yard\"\noverload_settle_ms = -1\n",
    )
    .unwrap();
    let out = yard_output(&["rm", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("settle"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
