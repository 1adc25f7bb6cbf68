//! Node telemetry end to end (issue 17 items 1 and 6): real rm and nodemanager processes on
//! 127.0.0.1. A running nodemanager's load reaches `GET /ws/v1/cluster/nodes` (YARN's
//! `resourceUtilization`, yard's `yardLoad` with the disk rate it measured at start, its own
//! process tree and a busy container's), `/nodes/{id}` has its recent history, `yard nodes`
//! shows it, and after an rm restart the last known load is still shown. A bad `--disk-rate`
//! is exit code 2.

mod support;

use serde_json::Value;
use support::*;

/// The node's entry in `GET /ws/v1/cluster/nodes`, once `f` accepts it.
fn node_where(rm_url: &str, node: &str, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    eventually(what, || {
        let list = get(&format!("{rm_url}/ws/v1/cluster/nodes"));
        list["nodes"]["node"]
            .as_array()?
            .iter()
            .find(|n| n["id"] == node)
            .filter(|n| f(n))
            .cloned()
    })
}

#[test]
fn a_running_nodes_load_shows_in_the_api_and_in_yard_nodes_and_outlives_an_rm_restart() {
    let tmp = work_dir("yard-telemetry-e2e");
    let mut rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let measured = nm(&rm, &tmp.join("nm0")); // no --disk-rate: measured at start
    let set = nm_for(
        &url,
        &tmp.join("nm1"),
        NmShape::default(),
        &["--disk-rate", "250MB/s"],
    );
    await_running(&rm, 2);

    // The measured node: YARN's object and yard's load, with a positive disk rate.
    let n = node_where(&url, &measured.addr, "the measured node's load", |n| {
        n["yardLoad"].is_object()
    });
    let u = &n["resourceUtilization"];
    for key in [
        "nodePhysicalMemoryMB",
        "nodeVirtualMemoryMB",
        "nodeCPUUsage",
        "aggregatedContainersPhysicalMemoryMB",
        "aggregatedContainersVirtualMemoryMB",
        "containersCPUUsage",
    ] {
        assert!(u[key].is_number(), "{key} in {u}");
    }
    assert!(u["nodePhysicalMemoryMB"].as_u64() > Some(0), "{u}");
    let load = &n["yardLoad"];
    assert!(load["diskIoRateBytesPerS"].as_f64() > Some(0.0), "{load}");
    assert!(load["cores"].as_u64() >= Some(1), "{load}");
    assert!(load["memoryTotalBytes"].as_u64() > Some(0), "{load}");
    assert!(load["sampledAt"].as_i64() > Some(0), "{load}");
    // Its own process tree: at least the nodemanager itself.
    assert!(load["own"]["processes"].as_u64() >= Some(1), "{load}");
    assert!(load["own"]["rssBytes"].as_u64() > Some(0), "{load}");
    // The other node reports the rate its operator set.
    let other = node_where(&url, &set.addr, "the other node's load", |n| {
        n["yardLoad"].is_object()
    });
    assert_eq!(other["yardLoad"]["diskIoRateBytesPerS"], 250e6);

    // A spinning container on the measured node: its process tree's CPU shows, inside the
    // node's own tree.
    let on = format!("--on={}", measured.addr);
    let (code, out, err) = yard(&[
        "shell",
        "--rm",
        &url,
        &on,
        "--no-wait",
        "--",
        "/bin/sh",
        "-c",
        "while :; do :; done",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let app = out.trim().to_owned();
    let _spinner = ProcessesOf::app(&app);
    let busy = node_where(&url, &measured.addr, "the spinning container's CPU", |n| {
        n["yardLoad"]["containers"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["cpuPercent"].as_f64() > Some(0.0)))
    });
    let containers = busy["yardLoad"]["containers"].as_array().unwrap();
    assert!(
        containers
            .iter()
            .all(|c| c["rssBytes"].as_u64() > Some(0) && c["readBytesPerS"].is_number()),
        "{containers:?}"
    );
    assert!(
        busy["yardLoad"]["own"]["processes"].as_u64() > Some(1),
        "{busy}"
    );
    assert!(
        busy["resourceUtilization"]["aggregatedContainersPhysicalMemoryMB"].is_u64(),
        "{busy}"
    );
    // The node's own route has its recent samples, oldest first.
    let one = get(&format!("{url}/ws/v1/cluster/nodes/{}", measured.addr));
    let history = one["node"]["yardLoadHistory"].as_array().unwrap();
    assert!(!history.is_empty() && history.len() <= 60, "{one}");
    let times: Vec<i64> = history
        .iter()
        .map(|p| p["time"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");

    // `yard nodes`: the load columns, filled for both nodes, within 100 columns.
    let (code, table, err) = yard(&["nodes", "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    let header = table.lines().nth(1).unwrap();
    for column in ["LOAD", "CPU", "MEM", "DISK R+W"] {
        assert!(header.contains(column), "{table}");
    }
    for node in [&measured.addr, &set.addr] {
        let row = table
            .lines()
            .find(|l| l.starts_with(node.as_str()))
            .unwrap_or_else(|| panic!("{node} in {table}"));
        assert!(row.contains('%') && row.ends_with("B/s"), "{row}");
        assert!(row.chars().count() <= 100, "{row}");
    }
    let (_, json, _) = yard(&["nodes", "--rm", &url, "--json"]);
    let listed: Value = serde_json::from_str(&json).unwrap();
    assert!(
        listed["nodes"]["node"][0]["yardLoad"].is_object()
            && listed["nodes"]["node"][0]["resourceUtilization"].is_object(),
        "{json}"
    );
    assert_eq!(yard(&["kill", "--rm", &url, &app]).0, 0);

    // The rm restarts (a new port: the nodemanagers cannot find it): each node's last known
    // load is still shown, the node LOST until it comes back.
    let before = get(&format!("{url}/ws/v1/cluster/nodes/{}", measured.addr))["node"]["yardLoad"]
        ["sampledAt"]
        .as_i64()
        .unwrap();
    terminate(&mut rm);
    let rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let n = get(&format!("{url}/ws/v1/cluster/nodes/{}", measured.addr));
    assert_eq!(n["node"]["state"], "LOST", "{n}");
    let restored = n["node"]["yardLoad"]["sampledAt"].as_i64().unwrap();
    assert!(
        restored >= before,
        "the last sample stored: {restored} vs {before}"
    );
    assert!(n["node"]["yardLoad"]["diskIoRateBytesPerS"].as_f64() > Some(0.0));
    // LOST nodes are listed with --all (by default only RUNNING ones, as `yarn node -list`).
    let (_, running, _) = yard(&["nodes", "--rm", &url]);
    assert!(running.starts_with("Total Nodes:0\n"), "{running}");
    let (code, table, err) = yard(&["nodes", "--rm", &url, "--all"]);
    assert_eq!(code, 0, "{err}");
    let row = table
        .lines()
        .find(|l| l.starts_with(measured.addr.as_str()))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains("LOST") && row.contains('%') && row.ends_with("B/s"),
        "{table}"
    );
    drop((measured, set, rm));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_bad_disk_rate_is_exit_code_2_saying_what_to_write() {
    for (rate, says) in [
        ("fast", "200MB/s"),
        ("12XB/s", "200MB/s"),
        ("0", "above 0"),
        ("-5MB/s", "200MB/s"),
        ("5TB/s", "at most 1TB/s"),
    ] {
        let flag = format!("--disk-rate={rate}");
        let (code, _, stderr) = yard(&["nm", &flag]);
        assert_eq!(code, 2, "{rate}: {stderr}");
        assert!(
            stderr.contains("--disk-rate") && stderr.contains(says),
            "{rate}: {stderr}"
        );
    }
}
