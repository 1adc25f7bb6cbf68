//! `yard batch plan` and `yard sim --experiment makespan` as a user runs them: the real binary,
//! CSV files of the seed's worked examples, their JSON and their errors.

mod support;

use serde_json::Value;
use support::{json_of, succeeded, yard_output};

/// A CSV in a fresh directory; the directory lives as long as the returned guard.
fn csv(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch.csv");
    std::fs::write(&path, text).unwrap();
    (dir, path.display().to_string())
}

/// Seed 003's Fig. 4: five jobs of (map stage, reduce stage) seconds on the whole cluster.
const FIVE: &str = "job,map_stage_s,reduce_stage_s\nJ1,4,5\nJ2,1,4\nJ3,30,4\nJ4,6,30\nJ5,2,3\n";

fn ids(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

#[test]
fn the_five_jobs_plan_johnsons_order_for_47_against_78_reversed() {
    let (_dir, file) = csv(FIVE);
    let out = yard_output(&["batch", "plan", &file, "--slots", "30", "--json"]);
    succeeded(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    // Exactly these three keys first, in this order.
    assert!(text.trim_start().starts_with("{\n  \"order\""), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    // Top-level keys sit at two spaces of indentation in the pretty JSON.
    let at = |key: &str| text.find(&format!("\n  \"{key}\":")).unwrap();
    assert!(at("order") < at("pools") && at("pools") < at("predicted_makespan_s"));
    assert!(
        at("predicted_makespan_s") < at("policy"),
        "extra fields come after"
    );
    assert_eq!(ids(&v["order"]), ["J2", "J5", "J1", "J4", "J3"]);
    assert_eq!(v["predicted_makespan_s"].as_f64(), Some(47.0));
    let pools = v["pools"].as_array().unwrap();
    assert_eq!(pools.len(), 1);
    assert_eq!(pools[0]["slots"].as_u64(), Some(30));
    assert_eq!(ids(&pools[0]["jobs"]), ["J2", "J5", "J1", "J4", "J3"]);
    assert_eq!(
        v["reverse_johnson"]["predicted_makespan_s"].as_f64(),
        Some(78.0)
    );
    // The header is optional, and the table says the same.
    let (_dir, bare) = csv(&FIVE.replace("job,map_stage_s,reduce_stage_s\n", ""));
    let out = yard_output(&["batch", "plan", &bare, "--slots", "30"]);
    succeeded(&out);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("Order: J2 J5 J1 J4 J3"), "{table}");
    assert!(table.contains("predicted makespan 47.0 s"), "{table}");
    assert!(table.contains("| reverse-johnson | 78.0 |"), "{table}");
}

#[test]
fn two_jobs_plan_24_and_scenario_2_plans_two_pools_of_40() {
    let (_dir, file) = csv("J1,20,2\nJ2,2,20\n");
    let out = yard_output(&["batch", "plan", &file, "--json"]);
    let v = json_of(&out);
    assert_eq!(ids(&v["order"]), ["J2", "J1"]);
    assert_eq!(v["predicted_makespan_s"].as_f64(), Some(24.0));
    assert_eq!(
        v["reverse_johnson"]["predicted_makespan_s"].as_f64(),
        Some(42.0)
    );
    // Seed 003 §III-C, Scenario 2: J3 and J4 have 20 + 20 tasks, the others 30 + 30.
    let (_dir, file) = csv("job,map_stage_s,reduce_stage_s,map_tasks,reduce_tasks\n\
         J1,4,5,30,30\nJ2,1,4,30,30\nJ3,30,4,20,20\nJ4,6,30,20,20\nJ5,2,3,30,30\n");
    let out = yard_output(&["batch", "plan", &file, "--slots", "30", "--json"]);
    let v = json_of(&out);
    assert_eq!(v["predicted_makespan_s"].as_f64(), Some(40.0));
    assert_eq!(v["johnson"]["predicted_makespan_s"].as_f64(), Some(47.0));
    let pools = v["pools"].as_array().unwrap();
    assert_eq!(pools.len(), 2);
    assert_eq!(
        (pools[0]["slots"].as_u64(), ids(&pools[0]["jobs"])),
        (Some(20), vec!["J4", "J3"])
    );
    assert_eq!(
        (pools[1]["slots"].as_u64(), ids(&pools[1]["jobs"])),
        (Some(10), vec!["J2", "J5", "J1"])
    );
}

#[test]
fn a_trace_is_planned_from_the_jobs_the_simulator_derives() {
    let args = [
        "batch",
        "plan",
        "--trace",
        "traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv",
        "--jobs",
        "12",
        "--slots",
        "20",
        "--json",
    ];
    let (a, b) = (yard_output(&args), yard_output(&args));
    succeeded(&a);
    assert_eq!(a.stdout, b.stdout, "a seed plans the same");
    let v = json_of(&a);
    assert_eq!(v["order"].as_array().unwrap().len(), 12);
    let planned = v["predicted_makespan_s"].as_f64().unwrap();
    assert!(planned > 0.0);
    assert!(planned <= v["johnson"]["predicted_makespan_s"].as_f64().unwrap());
}

#[test]
fn bad_files_and_flags_exit_2_saying_what_to_fix() {
    for (text, says) in [
        ("J1,4,x\n", "batch.csv:1: field `reduce_stage_s`"),
        ("J1,4\n", "expected 3 fields"),
        ("J1,4,5\nJ1,1,2\n", "batch.csv:2: field `job`"),
        ("J1,4,5,0,1\n", "field `map_tasks`"),
        ("", "no jobs"),
        ("J1,nan,5\n", "field `map_stage_s`"),
    ] {
        let (_dir, file) = csv(text);
        let out = yard_output(&["batch", "plan", &file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {err}");
        assert!(err.contains(says), "{text:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (_dir, file) = csv(FIVE);
    for (args, says) in [
        (vec!["batch", "plan", "no-such-file.csv"], "cannot read it"),
        (vec!["batch", "plan", &file, "--slots", "0"], "--slots"),
        (
            vec!["batch", "plan", &file, "--jobs", "3"],
            "--jobs is for --trace",
        ),
        (vec!["batch", "plan"], "FILE"),
        (
            vec![
                "batch",
                "plan",
                "--trace",
                "traces/swim/FB-2009_samples_24_times_1hr_0.tsv",
            ],
            "give --jobs N",
        ),
        (
            vec!["sim", "--experiment", "makespan", "--cluster-sizes", "0"],
            "--cluster-sizes",
        ),
        (
            vec!["sim", "--experiment", "makespan", "--synthetic"],
            "seed 003's own workloads",
        ),
        (
            vec!["sim", "--synthetic", "--cluster-sizes", "10"],
            "--cluster-sizes is for --experiment makespan",
        ),
    ] {
        let out = yard_output(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn the_makespan_experiment_prints_the_documented_json_and_the_papers_claims() {
    let args = [
        "sim",
        "--experiment",
        "makespan",
        "--jobs",
        "12",
        "--cluster-sizes",
        "8,32",
        "--seeds",
        "2",
        "--seed",
        "4",
        "--json",
    ];
    let out = yard_output(&args);
    let v = json_of(&out);
    assert_eq!(v["seed"].as_u64(), Some(4));
    assert!(v["model"].as_str().unwrap().contains("slot-level"));
    let rows = v["rows"].as_array().unwrap();
    // 6 workloads (the shipped FB-2009 day is here) × 2 sizes × 4 policies.
    assert_eq!(rows.len(), 6 * 2 * 4);
    for r in rows {
        for key in ["policy", "workload", "nodes", "slots", "jobs", "makespan_s"] {
            assert!(r.get(key).is_some(), "a row lacks {key}: {r}");
        }
        assert!(r["makespan_s"].as_f64().unwrap() > 0.0);
        assert_eq!(r["seeds"].as_u64(), Some(2));
    }
    for policy in ["random", "johnson", "reverse-johnson", "balanced-pools"] {
        assert!(rows.iter().any(|r| r["policy"] == policy), "{policy}");
    }
    for w in [
        "yahoo-unimodal",
        "yahoo-bimodal",
        "synthetic-unimodal",
        "synthetic-bimodal",
        "facebook-table-i",
        "fb-swim",
    ] {
        assert!(rows.iter().any(|r| r["workload"] == w), "{w}");
    }
    // BalancedPools starts from Johnson's plan: never longer, seed by seed and so on average.
    for bp in rows.iter().filter(|r| r["policy"] == "balanced-pools") {
        let johnson = rows
            .iter()
            .find(|r| {
                r["policy"] == "johnson"
                    && r["workload"] == bp["workload"]
                    && r["nodes"] == bp["nodes"]
            })
            .unwrap();
        assert!(bp["makespan_s"].as_f64() <= johnson["makespan_s"].as_f64());
    }
    assert!(!v["claims"].as_array().unwrap().is_empty());
    assert!(v["goal_met"].is_boolean());
    // The table says which model and which jobs, and sets the paper's words beside.
    let text_args: Vec<&str> = args.iter().copied().filter(|a| *a != "--json").collect();
    let out = yard_output(&text_args);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Model: the paper's task/slot-level model"),
        "{text}"
    );
    assert!(text.contains("Batches of 12 jobs per workload"), "{text}");
    assert!(text.contains("(§IV-B, Fig. 7a)"), "{text}");
    assert!(text.contains("Goal (issue 20)"), "{text}");
}

#[test]
fn the_makespan_experiment_writes_an_svg_per_workload() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().display().to_string();
    let out = yard_output(&[
        "sim",
        "--experiment",
        "makespan",
        "--jobs",
        "6",
        "--cluster-sizes",
        "4,16",
        "--seeds",
        "1",
        "--svg",
        &svg,
    ]);
    succeeded(&out);
    for w in [
        "synthetic-bimodal",
        "yahoo-unimodal",
        "facebook-table-i",
        "fb-swim",
    ] {
        let path = dir.path().join(format!("makespan-{w}.svg"));
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", path.display());
    }
}
