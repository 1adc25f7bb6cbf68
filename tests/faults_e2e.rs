//! Faults on a live cluster (real rm, nodemanagers and masters on 127.0.0.1): the rm killed
//! with SIGKILL right after acknowledging submissions and a kill, a MapReduce master killed
//! with SIGKILL mid-job, and more applications than the cluster has room for masters.
//! Nothing sleeps for a fixed time; waits poll with a deadline.

use std::time::Duration;

use serde_json::Value;

mod support;
use support::*;

fn sigkill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Processes whose command line has `arg` and whose environment mentions `needle`.
fn processes(arg: &str, needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes())
            && String::from_utf8_lossy(&environ).contains(needle)
        {
            pids.push(pid);
        }
    }
    pids
}

fn app_state(url: &str, id: &str) -> Value {
    get(&format!("{url}/ws/v1/cluster/apps/{id}"))["app"].clone()
}

#[test]
fn submissions_and_kills_acknowledged_just_before_a_sigkill_of_the_rm_survive_it() {
    let tmp = work_dir("yard-fault-rm");
    let mut rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let mut ids = Vec::new();
    for _ in 0..10 {
        let (code, out, err) = yard(&[
            "submit",
            "--command",
            "sleep 600",
            "--no-wait",
            "--rm",
            &url,
        ]);
        assert_eq!(code, 0, "{err}");
        ids.push(out.trim().to_owned());
    }
    let (code, _, err) = yard(&["kill", &ids[0], "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    // At once: the rm's background tick (1 s) has had no chance to save anything.
    sigkill(rm.child.id());
    let _ = rm.child.wait();

    let rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    for (i, id) in ids.iter().enumerate() {
        let app = app_state(&url, id);
        let want = if i == 0 { "KILLED" } else { "ACCEPTED" };
        assert_eq!(app["state"], want, "{id} after the restart: {app}");
    }
    drop(rm);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Submits a synthetic MapReduce job of `maps` maps of `seconds` each; returns its id.
fn synthetic(url: &str, maps: &str, seconds: &str) -> String {
    let (code, out, err) = yard(&[
        "submit",
        "synthetic",
        "--maps",
        maps,
        "--map-seconds",
        seconds,
        "--reduce-seconds",
        "0.1",
        "--policy",
        "full",
        "--deadline",
        "10m",
        "--no-wait",
        "--rm",
        url,
    ]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_owned()
}

fn finished(url: &str, id: &str) -> Value {
    eventually_for(&format!("{id} to finish"), Duration::from_secs(120), || {
        let app = app_state(url, id);
        (app["state"] == "FINISHED" || app["state"] == "FAILED" || app["state"] == "KILLED")
            .then_some(app)
    })
}

#[test]
fn a_mapreduce_master_killed_with_sigkill_gets_a_second_attempt_and_nothing_wedges() {
    let tmp = work_dir("yard-fault-master");
    let c = cluster(&tmp);
    let first = synthetic(&c.url, "8", "1");
    let victim = eventually("the first job's master running its maps", || {
        let master = processes("mr-master", &first).first().copied()?;
        (!processes("mr-task", &first).is_empty()).then_some(master)
    });
    sigkill(victim);
    // A second job arrives while the first recovers.
    let second = synthetic(&c.url, "4", "0.2");
    for id in [&first, &second] {
        let app = finished(&c.url, id);
        assert_eq!(
            (&app["state"], &app["finalStatus"]),
            (&Value::from("FINISHED"), &Value::from("SUCCEEDED")),
            "{id}: {app}"
        );
    }
    let attempts = get(&format!("{}/ws/v1/cluster/apps/{first}/appattempts", c.url));
    assert_eq!(
        attempts["appAttempts"]["appAttempt"].as_array().unwrap().len(),
        2,
        "{attempts}"
    );
    // The dead attempt's task processes are gone.
    eventually("the first attempt's tasks to stop", || {
        processes("mr-task", &first).is_empty().then_some(())
    });
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn more_applications_than_slots_all_finish_because_masters_hold_only_their_share() {
    // Six one-core slots: without the masters' cap, six masters take them all and wait
    // forever for a slot for a task.
    let tmp = work_dir("yard-fault-cap");
    let c = cluster(&tmp);
    let ids: Vec<String> = (0..6).map(|_| synthetic(&c.url, "2", "0.1")).collect();
    for id in &ids {
        let app = finished(&c.url, id);
        assert_eq!(app["finalStatus"], "SUCCEEDED", "{id}: {app}");
    }
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

