//! `yard batch run` (issue 20 item 2, live): a three-job batch planned by BalancedPools, run
//! on a local cluster it starts itself, every job answered, submitted in the plan's order and
//! pools, each master held to its pool's slots (`maxContainers`); bad flags exit 2. Nothing
//! here compares measured and predicted times (they depend on the machine's speed).

mod support;

use serde_json::Value;
use support::*;

/// Three jobs on 3 slots, `job,map_stage_s,reduce_stage_s,map_tasks,reduce_tasks`:
/// BalancedPools runs B then A on 2 slots beside C (3 maps) on 1, a predicted 8 s against
/// Johnson's 9 on the whole cluster.
const BATCH: &str = "A,4,2,2,2\nB,2,4,2,2\nC,1,4,3,1\n";

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_batch_runs_live_in_the_plans_order_and_pools_each_job_capped_at_its_pools_slots() {
    let dir = work_dir("yard-batch-run");
    let file = dir.join("batch.csv");
    std::fs::write(&file, BATCH).unwrap();
    let file = file.to_str().unwrap();
    let (code, plan, err) = yard(&["batch", "plan", file, "--slots", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    let plan: Value = serde_json::from_str(&plan).expect(&plan);

    let (code, out, err) = yard(&[
        "batch",
        "run",
        file,
        "--slots",
        "3",
        "--time-scale",
        "0.5",
        "--nodes",
        "2",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}\n{out}");
    let run: Value = serde_json::from_str(&out).expect(&out);
    // The documented keys, and the plan's order and pools.
    for key in [
        "order",
        "pools",
        "predicted_makespan_s",
        "measured_makespan_s",
    ] {
        assert!(run.get(key).is_some(), "{key}: {run}");
    }
    assert_eq!(ids(&run["order"]), ids(&plan["order"]), "{run}");
    let pools = run["pools"].as_array().unwrap();
    assert_eq!(
        pools.len(),
        plan["pools"].as_array().unwrap().len(),
        "{run}"
    );
    let predicted = run["predicted_makespan_s"].as_f64().unwrap();
    let planned = plan["predicted_makespan_s"].as_f64().unwrap();
    assert!((predicted - 0.5 * planned).abs() < 1e-9, "{run}");
    assert!(run["measured_makespan_s"].as_f64().unwrap() > 0.0, "{run}");
    // The two-stage flow shop's makespan: no shorter than the task-level prediction here.
    assert!(
        run["flow_shop_makespan_s"].as_f64().unwrap() >= predicted,
        "{run}"
    );
    // Every job answered.
    let jobs = run["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "{run}");
    assert_eq!(run["answered"], 3, "{run}");
    assert_eq!(run["unanswered"], 0, "{run}");
    // Within each pool, the jobs were submitted in the pool's order.
    let submitted = ids(&run["submitted"]);
    assert_eq!(submitted.len(), 3, "{run}");
    for (p, pool) in pools.iter().enumerate() {
        assert_eq!(pool["jobs"], plan["pools"][p]["jobs"], "{run}");
        let members = ids(&pool["jobs"]);
        let in_submission: Vec<String> = submitted
            .iter()
            .filter(|j| members.contains(j))
            .cloned()
            .collect();
        assert_eq!(in_submission, members, "pool {p}: {run}");
        assert!(pool["measured_makespan_s"].as_f64().unwrap() > 0.0, "{run}");
    }
    for job in jobs {
        assert_eq!(job["state"], "FINISHED", "{job}");
        assert_eq!(job["answered"], true, "{job}");
        let pool = job["pool"].as_u64().unwrap() as usize;
        let cap = job["max_containers"].as_u64().unwrap();
        assert_eq!(cap, pools[pool]["slots"].as_u64().unwrap(), "{job}");
        // The master held at least one task container and never more than the cap.
        let peak = job["peak_containers"].as_u64().expect("the master's peak");
        assert!((1..=cap).contains(&peak), "{job}");
        let (s, m, a) = (
            job["submitted_s"].as_f64().unwrap(),
            job["map_stage_done_s"].as_f64().unwrap(),
            job["answered_s"].as_f64().unwrap(),
        );
        assert!(s <= m && m <= a, "{job}");
    }
    // In each pool, a job was submitted only once the previous one's map stage was done.
    for pool in pools {
        let members = ids(&pool["jobs"]);
        let at = |id: &str, key: &str| {
            jobs.iter().find(|j| j["id"] == id).unwrap()[key]
                .as_f64()
                .unwrap()
        };
        for w in members.windows(2) {
            assert!(
                at(&w[1], "submitted_s") >= at(&w[0], "map_stage_done_s"),
                "{} before {}'s maps were done: {run}",
                w[1],
                w[0]
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_batches_and_flags_exit_2_with_what_to_fix_and_an_unreachable_rm_1() {
    let dir = work_dir("yard-batch-run-bad");
    let good = dir.join("good.csv");
    std::fs::write(&good, BATCH).unwrap();
    let good = good.to_str().unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "A,1,x\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["batch", "run", bad.to_str().unwrap()],
            "field `reduce_stage_s`",
        ),
        (vec!["batch", "run", "/no/such/batch.csv"], "cannot read"),
        (vec!["batch", "run", good, "--order", "shortest"], "--order"),
        (vec!["batch", "run", good, "--time-scale", "0"], "1/60"),
        (vec!["batch", "run", good, "--slots", "0"], "--slots"),
        (
            vec!["batch", "run", good, "--slots", "65"],
            "at most 64 slots",
        ),
        (
            vec!["batch", "run", good, "--rm", "http://10.1.2.3:8088"],
            "127.0.0.1",
        ),
        (vec!["batch", "run"], "FILE"),
    ];
    for (args, says) in cases {
        let (code, _, err) = yard(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // An rm that is not there: 1, as from every client command, said once.
    let (code, _, err) = yard(&["batch", "run", good, "--rm", "http://127.0.0.1:1"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.matches("cannot reach the rm at http://127.0.0.1:1")
            .count(),
        1,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cluster smaller than the plan's pools is used, with a warning that the measured makespan
/// will say more about the cluster than about the plan.
#[test]
fn a_cluster_too_small_for_the_plan_is_warned_of_and_still_runs_the_batch() {
    let dir = work_dir("yard-batch-run-small");
    let file = dir.join("batch.csv");
    std::fs::write(&file, "A,1,1,1,1\nB,1,1,1,1\n").unwrap();
    let rm = rm_in(&dir, &["--master-share", "0.5"]);
    let url = format!("http://{}", rm.addr);
    let shape = NmShape {
        vcores: 4,
        ..NmShape::default()
    };
    let _nm = nm_for(&url, &dir.join("nm"), shape, &[]);
    await_running(&rm, 1);
    let (code, out, err) = yard(&[
        "batch",
        "run",
        file.to_str().unwrap(),
        "--slots",
        "2",
        "--time-scale",
        "0.1",
        "--rm",
        &url,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}\n{out}");
    // 2 × 2 task slots and a master per pool: 5 or 6 vcores wanted, 4 there.
    assert!(err.contains("has 4 vcores; the plan wants"), "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).expect(&out);
    assert_eq!(run["answered"], 2, "{run}");
    let _ = std::fs::remove_dir_all(&dir);
}
