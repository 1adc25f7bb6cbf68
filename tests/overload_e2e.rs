//! The overload classifier on a live cluster (issue 17, items 3–6): a real rm and two
//! nodemanagers on 127.0.0.1, one of them made busy by a CPU hog running under it (a `yard
//! shell` container that spins). The rule reads each nodemanager's own process tree (both share
//! this host, so the host's load cannot tell them apart). Short `yard shell` containers train
//! the classifier; once it calls the hogged node bad, new containers avoid it, and the nodes API
//! shows each node's verdict with the counts behind it.
//!
//! Judged by where containers ran (their directories under each nodemanager's work dir) and by
//! the API, never by durations; waits poll with generous limits.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

mod support;
use support::*;

/// A nodemanager of 4 one-vcore slots in `dir/nm{i}`.
fn node(rm: &Daemon, dir: &Path, i: usize) -> Daemon {
    // Each sample's CPU is over the time since the last: half a second smooths it.
    let shape = NmShape {
        heartbeat_ms: 500,
        ..NmShape::default()
    };
    let work = dir.join(format!("nm{i}"));
    // The test counts containers by their directories: keep all of them (the default keeps
    // the last 50, and a slow machine trains for more than that, so old ones would vanish).
    nm_for(
        &format!("http://{}", rm.addr),
        &work,
        shape,
        &["--disk-rate", "100MB/s", "--keep-finished", "100000"],
    )
}

fn node_json(url: &str, id: &str) -> Value {
    get(&format!("{url}/ws/v1/cluster/nodes/{id}"))["node"].clone()
}

/// What every training and measured container prints, to tell them from masters (a shell
/// master logs its command, so the output must differ from the command's text).
const MARK: &str = "yard-overload-task-42";

/// Runs `count` containers that print [`MARK`] and sleep a little, anywhere; waits for them.
fn batch(url: &str, count: u32) {
    let script = "echo yard-overload-task-$((6 * 7)); sleep 0.5";
    let (code, out, err) = yard(&[
        "shell",
        "--rm",
        url,
        "--count",
        &count.to_string(),
        "--wait-secs",
        "120",
        "--",
        "sh",
        "-c",
        script,
    ]);
    assert_eq!(code, 0, "yard shell: {out}{err}");
}

/// The marked containers that ran under the nodemanager working in `work`.
fn marked(work: &Path) -> usize {
    std::fs::read_dir(work)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("stdout")).is_ok_and(|s| s.contains(MARK))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn tasks_avoid_the_node_a_cpu_hog_overloads_once_the_classifier_has_learned() {
    let dir = work_dir("overload-e2e");
    // Overloaded: the nodemanager's own tree keeps more than 0.0625 x 4 = 0.25 cores busy (two
    // spinning loops keep about 2 busy on an idle host, and more than 0.5 however busy the
    // test machine is; the nodemanager and sleeping containers keep about 0.05).
    let rm = rm_in(
        &dir,
        &[
            // The hog's master and a batch's run side by side.
            "--master-share",
            "0.5",
            "--overload-classifier",
            "on",
            "--overload-load-source",
            "own",
            "--overload-max-load-per-core",
            "0.0625",
            "--overload-min-samples",
            "6",
            "--overload-settle-ms",
            "500",
            // No probes during the test: what it measures is the model's own verdict.
            "--overload-explore-after-ms",
            "3600000",
        ],
    );
    let url = format!("http://{}", rm.addr);
    let nms = [node(&rm, &dir, 0), node(&rm, &dir, 1)];
    await_running(&rm, 2);
    let (calm, hot) = (nms[0].addr.clone(), nms[1].addr.clone());
    assert_eq!(
        node_json(&url, &hot)["overload"]["verdict"],
        "unknown",
        "nothing learned yet"
    );

    // The hog: two spinning loops in one 2-vcore container on the hot node, left running.
    let (code, out, err) = yard(&[
        "shell",
        "--rm",
        &url,
        "--on",
        &hot,
        "--vcores",
        "2",
        "--no-wait",
        "--",
        "sh",
        "-c",
        "while :; do :; done & while :; do :; done",
    ]);
    assert_eq!(code, 0, "the hog: {out}{err}");
    let _hog = ProcessesOf::app(out.trim());
    eventually_for(
        "the hog's load on its node",
        Duration::from_secs(60),
        || {
            let busy = node_json(&url, &hot)["yardLoad"]["own"]["cpuPercent"].as_f64()?;
            (busy > 50.0).then_some(())
        },
    );

    // Training: short containers anywhere until the classifier calls the hot node bad.
    let mut verdicts = (Value::Null, Value::Null);
    for _ in 0..30 {
        batch(&url, 6);
        verdicts = (
            node_json(&url, &hot)["overload"]["verdict"].clone(),
            node_json(&url, &calm)["overload"]["verdict"].clone(),
        );
        if verdicts == ("bad".into(), "good".into()) {
            break;
        }
    }
    assert_eq!(
        verdicts,
        ("bad".into(), "good".into()),
        "hot, calm: {}",
        node_json(&url, &hot)["overload"]
    );
    let hot_view = node_json(&url, &hot)["overload"].clone();
    eprintln!(
        "learned: hot {hot_view}\ncalm {}",
        node_json(&url, &calm)["overload"]
    );
    assert_eq!(hot_view["classifier"], "on");
    assert_eq!(hot_view["overloaded"], true, "{hot_view}");
    assert!(hot_view["labelledBad"].as_u64().unwrap() > 0, "{hot_view}");
    assert!(hot_view["pGood"].as_f64().unwrap() < 0.5, "{hot_view}");
    let calm_view = node_json(&url, &calm)["overload"].clone();
    assert!(
        calm_view["labelledGood"].as_u64().unwrap() > 0,
        "{calm_view}"
    );
    // The operator sees the verdicts in `yard nodes`.
    let (code, table, err) = yard(&["nodes", "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    for (node, verdict) in [(&hot, " bad "), (&calm, " good ")] {
        let row = table.lines().find(|l| l.starts_with(node.as_str()));
        assert!(
            row.is_some_and(|r| r.contains(verdict)),
            "{verdict} for {node}: {table}"
        );
    }
    let scheduler = get(&format!("{url}/ws/v1/cluster/scheduler"));
    let counts = &scheduler["scheduler"]["schedulerInfo"]["overloadClassifier"];
    assert!(
        counts["good"].as_u64().unwrap() + counts["bad"].as_u64().unwrap() >= 6,
        "{counts}"
    );
    assert!(
        counts["rule"]
            .as_str()
            .unwrap()
            .contains("own process tree"),
        "{counts}"
    );

    // After learning: where do new containers go?
    let before = (marked(&dir.join("nm0")), marked(&dir.join("nm1")));
    for _ in 0..3 {
        batch(&url, 6);
    }
    let after = (marked(&dir.join("nm0")), marked(&dir.join("nm1")));
    let (on_calm, on_hot) = (after.0 - before.0, after.1 - before.1);
    eprintln!("after learning: {on_calm} containers on the calm node, {on_hot} on the hot one");
    assert_eq!(on_calm + on_hot, 18);
    assert!(
        on_calm * 10 >= (on_calm + on_hot) * 8,
        "at least 80 % avoid the hot node: {on_calm} calm, {on_hot} hot"
    );
}

#[test]
fn classifier_flags_out_of_range_or_without_the_classifier_exit_2() {
    for (args, says) in [
        (
            vec!["--overload-classifier", "maybe"],
            "unknown classifier \"maybe\"",
        ),
        (
            vec!["--overload-utility", "fcfs"],
            "--overload-classifier on",
        ),
        (
            vec!["--overload-classifier", "on", "--overload-utility", "lifo"],
            "unknown utility",
        ),
        (
            vec![
                "--overload-classifier",
                "on",
                "--overload-load-source",
                "vm",
            ],
            "--overload-load-source",
        ),
        (
            vec![
                "--overload-classifier",
                "on",
                "--overload-min-free-memory",
                "1.5",
            ],
            "--overload-min-free-memory",
        ),
    ] {
        let dir = work_dir("overload-flags");
        let db = dir.join("rm.db");
        let mut all = vec![
            "rm",
            "--bind",
            "127.0.0.1:0",
            "--state-db",
            db.to_str().unwrap(),
        ];
        all.extend(args.iter().copied());
        let (code, out, err) = yard(&all);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
