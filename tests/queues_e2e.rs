//! Capacity queues on the real binaries (issue 35's "Done when"): `yard rm --queues FILE` with
//! two teams' queues, a nodemanager pair on 127.0.0.1; team A's flood of distributed-shell
//! containers fills the cluster, team B's job then gets its guaranteed half back once the
//! preemption wait is over; `yard queues` shows both; a bad file and an unknown queue exit 2.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::*;

/// The preemption wait the test's rm runs with, ms: short, so the test is.
const WAIT_MS: u64 = 2_000;

fn queue_file(dir: &std::path::Path) -> String {
    let path = dir.join("queues.toml");
    std::fs::write(
        &path,
        format!(
            "[preemption]\nmax_wait_before_kill = {WAIT_MS}\n\n\
             [[queue]]\nname = \"team-a\"\ncapacity = 50\nuser-limit-factor = 2\n\n\
             [[queue]]\nname = \"team-b\"\ncapacity = 50\nuser-limit-factor = 2\npolicy = \"edf\"\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

/// The queues as `GET /ws/v1/cluster/scheduler` lists them.
fn queues(url: &str) -> Vec<Value> {
    get(&format!("{url}/ws/v1/cluster/scheduler"))["scheduler"]["schedulerInfo"]["queues"]["queue"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn used_mb(url: &str, queue: usize) -> u64 {
    queues(url)[queue]["resourcesUsed"]["memory"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn a_flood_cannot_hold_another_teams_guarantee_past_the_preemption_wait() {
    let tmp = work_dir("yard-queues");
    let file = queue_file(&tmp);
    let rm = rm_in(&tmp, &["--queues", &file, "--master-share", "0.5"]);
    let url = format!("http://{}", rm.addr);
    let shape = NmShape {
        memory_mb: 2048,
        vcores: 4,
        ..NmShape::default()
    };
    let _nms: Vec<Daemon> = (0..2)
        .map(|i| nm_for(&url, &tmp.join(format!("nm{i}")), shape, &[]))
        .collect();
    await_running(&rm, 2);
    let info = get(&format!("{url}/ws/v1/cluster/scheduler"));
    assert_eq!(
        info["scheduler"]["schedulerInfo"]["type"],
        "capacityScheduler"
    );
    // An unknown queue: exit 2, the rm's reason naming it.
    let (code, _, stderr) = yard(&[
        "shell",
        "--rm",
        &url,
        "--queue",
        "team-c",
        "--no-wait",
        "--",
        "true",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no queue team-c: the queues are team-a, team-b"),
        "{stderr}"
    );
    // Team A floods: its master and seven 512 MiB containers fill the 4 GiB cluster.
    let shell = |queue: &str, count: &str| {
        let (code, out, err) = yard(&[
            "shell",
            "--rm",
            &url,
            "--queue",
            queue,
            "--count",
            count,
            "--memory-mb",
            "512",
            "--no-wait",
            "--",
            "sleep",
            "600",
        ]);
        assert_eq!(code, 0, "{err}");
        out.trim().to_owned()
    };
    let a = shell("team-a", "16");
    eventually("team-a holding the whole cluster", || {
        (used_mb(&url, 0) == 4096).then_some(())
    });
    // Team B asks for its half: a master and three containers. Its guarantee comes back
    // within the wait (twice: its master's, then its tasks') and the heartbeats that follow.
    let b = shell("team-b", "3");
    eventually_for(
        "team-b holding its guaranteed half",
        Duration::from_millis(2 * WAIT_MS) + Duration::from_secs(30),
        || (used_mb(&url, 1) == 2048).then_some(()),
    );
    let q = queues(&url);
    assert_eq!(q[0]["resourcesUsed"]["memory"], 2048, "{q:?}");
    assert!(q[0]["preemptedContainers"].as_u64().unwrap() >= 4, "{q:?}");
    // `yard queues`: both teams at their half.
    let (code, table, stderr) = yard(&["queues", "--rm", &url]);
    assert_eq!(code, 0, "{stderr}");
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("QUEUE") && header.contains("POLICY"),
        "{table}"
    );
    let row_b = table
        .lines()
        .find(|l| l.starts_with("team-b"))
        .expect("team-b");
    assert!(
        row_b.contains("50% (100%)") && row_b.trim_end().ends_with("edf"),
        "{table}"
    );
    for id in [&a, &b] {
        let (code, _, stderr) = yard(&["kill", "--rm", &url, id]);
        assert_eq!(code, 0, "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_bad_queue_file_is_refused_at_start_saying_what_to_fix() {
    let tmp = work_dir("yard-queues-bad");
    let path = tmp.join("queues.toml");
    let db = tmp.join("rm.db");
    // `yard rm` on a queue file of `text`: its exit code and stderr.
    let start = |text: &str| {
        std::fs::write(&path, text).unwrap();
        let (code, _, stderr) = yard(&[
            "rm",
            "--queues",
            path.to_str().unwrap(),
            "--state-db",
            db.to_str().unwrap(),
        ]);
        (code, stderr)
    };
    let (code, stderr) =
        start("[[queue]]\nname = \"a\"\ncapacity = 60\n\n[[queue]]\nname = \"b\"\ncapacity = 30\n");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the queues' capacities sum to 90 %, not 100 (a 60, b 30)"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, stderr) = start("[[queue]]\nname = \"a\"\ncapacity = 100\nmax = 3\n");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown field `max`"), "{stderr}");
    let _ = std::fs::remove_dir_all(&tmp);
}
