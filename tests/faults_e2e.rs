//! Faults on a live cluster (real rm, nodemanagers and masters on 127.0.0.1): the rm killed
//! with SIGKILL right after acknowledging submissions and a kill, a MapReduce master killed
//! with SIGKILL mid-job, and more applications than the cluster has room for masters.
//! Nothing sleeps for a fixed time; waits poll with a deadline.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

mod support;
use support::*;

fn sigkill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// How many master attempts application `id` has had.
fn attempts_of(url: &str, id: &str) -> usize {
    let attempts = get(&format!("{url}/ws/v1/cluster/apps/{id}/appattempts"));
    attempts["appAttempts"]["appAttempt"]
        .as_array()
        .map_or(0, Vec::len)
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
        ids.push(submit_command(&url, "sleep 600"));
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
    synthetic_with(url, maps, seconds, &[])
}

/// [`synthetic`] with `extra` arguments.
fn synthetic_with(url: &str, maps: &str, seconds: &str, extra: &[&str]) -> String {
    let mut args = vec![
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
    ];
    args.extend(extra);
    let (code, out, err) = yard(&args);
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
    // The master's container process, as its nodemanager lists it (an operator's view).
    let suffix = first.trim_start_matches("application_").to_owned();
    let victim = eventually("the first job's master with some maps done", || {
        // At least two of eight maps finished (the master reports progress as maps done).
        if app_state(&c.url, &first)["progress"].as_f64()? < 25.0 {
            return None;
        }
        c.nms.iter().flat_map(containers_on).find_map(|k| {
            let id = k["id"].as_str()?;
            (id.contains(&suffix) && id.ends_with("_01_000001")).then(|| k["pid"].as_u64())?
        })
    });
    let master = processes("mr-master", &first);
    assert_eq!(master.len(), 1);
    // The master keeps each finished map at the rm within its next allocate round (100 ms).
    std::thread::sleep(Duration::from_millis(500));
    sigkill(victim as u32);
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
    assert_eq!(attempts_of(&c.url, &first), 2);
    // Attempt 2 took back the maps attempt 1 had finished (their outputs stayed on the
    // nodemanagers) and ran only the rest: the answer still covers all eight.
    let view = get(&format!("{}/ws/v1/yard/apps/{first}", c.url));
    let job = &view["app"]["answer"]["job"];
    let recovered = job["recoveredMaps"].as_u64().unwrap_or(0);
    assert!((2..8).contains(&recovered), "{view}");
    assert_eq!(
        (&job["k"], &view["app"]["processedFraction"]),
        (&json!(8), &json!(1.0)),
        "{view}"
    );
    // Nothing of the dead attempt runs on: not its master (whose shell was killed under it)
    // nor its tasks.
    eventually("the first attempt's processes to stop", || {
        let left = processes("mr-task", &first).len() + processes("mr-master", &first).len();
        (left == 0).then_some(())
    });
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn more_applications_than_slots_all_finish_because_masters_hold_only_their_share() {
    // Six one-core slots: without the masters' cap, six masters take them all and wait
    // forever for a slot for a task.
    // The jobs are all waiting when the nodes join, so every master could be placed at once.
    let tmp = work_dir("yard-fault-cap");
    let rm = rm_in(
        &tmp,
        &["--profiles-db", tmp.join("profiles.db").to_str().unwrap()],
    );
    let url = format!("http://{}", rm.addr);
    let ids: Vec<String> = (0..6).map(|_| synthetic(&url, "2", "0.1")).collect();
    let nms = nms_of(&tmp, &url);
    await_running(&rm, 3);
    for id in &ids {
        let app = finished(&url, id);
        assert_eq!(app["finalStatus"], "SUCCEEDED", "{id}: {app}");
    }
    drop(nms);
    drop(rm);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_nodemanager_killed_mid_job_loses_map_outputs_that_are_run_again_and_the_job_is_exact() {
    let tmp = work_dir("yard-fault-nm");
    let mut c = cluster_with(&tmp, &["--node-expiry-ms", "1500"]);
    let id = synthetic(&c.url, "12", "0.6");
    let suffix = id.trim_start_matches("application_").to_owned();
    let hosts_master = |nm: &Daemon| {
        containers_on(nm).iter().any(|k| {
            k["id"]
                .as_str()
                .is_some_and(|i| i.contains(&suffix) && i.ends_with("_01_000001"))
        })
    };
    // Once some maps have finished, a node that is not the master's dies with their outputs.
    let victim = eventually("finished maps and a node without the master", || {
        let progress = app_state(&c.url, &id)["progress"].as_f64()?;
        if progress < 25.0 {
            return None;
        }
        c.nms
            .iter()
            .position(|n| !hosts_master(n) && !containers_on(n).is_empty())
    });
    let mut dead = c.nms.remove(victim);
    sigkill(dead.child.id());
    let _ = dead.child.wait();
    let app = finished(&c.url, &id);
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}");
    let view = get(&format!("{}/ws/v1/yard/apps/{id}", c.url));
    assert_eq!(view["app"]["processedFraction"], 1.0, "{view}");
    assert_eq!(view["app"]["answer"]["job"]["k"], 12, "{view}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_node_back_from_the_dead_stops_the_master_that_was_placed_again_elsewhere() {
    let tmp = work_dir("yard-fault-return");
    let c = cluster_with(&tmp, &["--node-expiry-ms", "1000"]);
    let id = submit_command(&c.url, "sleep 600");
    let suffix = id.trim_start_matches("application_").to_owned();
    let masters_on = |nm: &Daemon| {
        containers_on(nm)
            .iter()
            .filter_map(|k| k["id"].as_str().map(str::to_owned))
            .filter(|k| k.contains(&suffix))
            .collect::<Vec<_>>()
    };
    let host = eventually("the first master", || {
        c.nms.iter().position(|n| !masters_on(n).is_empty())
    });
    let first = masters_on(&c.nms[host])[0].clone();
    // The node freezes: the rm loses it and places the master again on another node.
    let pid = c.nms[host].child.id().to_string();
    let signal = |s: &str| {
        assert!(
            std::process::Command::new("kill")
                .args([s, &pid])
                .status()
                .unwrap()
                .success()
        )
    };
    signal("-STOP");
    let second = eventually_for(
        "the second attempt's master",
        Duration::from_secs(60),
        || {
            c.nms
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != host)
                .find_map(|(_, n)| masters_on(n).into_iter().next())
        },
    );
    assert_ne!(first, second);
    // It comes back: it is told to stop the first master, and starts nothing of this app.
    signal("-CONT");
    eventually_for(
        "the returned node to stop its stale master",
        Duration::from_secs(60),
        || masters_on(&c.nms[host]).is_empty().then_some(()),
    );
    assert_eq!(attempts_of(&c.url, &id), 2);
    let running: usize = c.nms.iter().map(|n| masters_on(n).len()).sum();
    assert_eq!(running, 1, "one master of the application runs");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Once a map has finished (and long before the last one does, so before any reduce
/// fetches), `harm` is done to its output on its node's disk; the reducer reports the output
/// it cannot use, the master runs the map again, and the job's answer is still exact.
fn a_harmed_map_output_is_run_again(name: &str, harm: impl Fn(&Path) -> bool) {
    let tmp = work_dir(name);
    let c = cluster(&tmp);
    // One reduce, so a map's output is one partition, whole once it has its final name and
    // its CRC-32 trailer checks: an output still being written or renamed (`.0.tmp`) is left
    // alone (harming it fails the map, not a fetch).
    let id = synthetic_with(&c.url, "12", "0.6", &["--reduces", "1"]);
    let whole = |map: &Path| {
        let parts: Vec<_> = std::fs::read_dir(map)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        let named = |p: &Path| p.file_name().is_some_and(|n| n == "0");
        parts.len() == 1
            && named(&parts[0])
            && std::fs::read(&parts[0])
                .is_ok_and(|bytes| yard_appmaster::apps::records::Reader::new(&bytes).is_ok())
    };
    let harmed = eventually("a finished map's output", || {
        (0..3).find_map(|i| {
            let dir = tmp.join(format!("nm{i}/data/shuffle/{id}"));
            let map = std::fs::read_dir(dir)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|m| whole(m))?;
            harm(&map).then_some(map)
        })
    });
    let app = finished(&c.url, &id);
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app} (harmed {harmed:?})");
    let view = get(&format!("{}/ws/v1/yard/apps/{id}", c.url));
    assert_eq!(view["app"]["processedFraction"], 1.0, "{view}");
    assert_eq!(view["app"]["answer"]["job"]["k"], 12, "{view}");
    let log = master_log(&tmp, &id);
    assert!(
        log.contains("could not fetch"),
        "the reducer reported it: {log}"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_map_output_that_cannot_be_fetched_is_run_again_and_the_job_is_exact() {
    a_harmed_map_output_is_run_again("yard-fault-fetch", |map| {
        std::fs::remove_dir_all(map).is_ok()
    });
}

#[test]
fn a_damaged_map_output_is_run_again_and_the_job_is_exact() {
    a_harmed_map_output_is_run_again("yard-fault-damaged", |map| {
        // One byte of each of its partitions flipped (past the 18-byte header).
        let Ok(parts) = std::fs::read_dir(map) else {
            return false;
        };
        let mut any = false;
        for part in parts.flatten() {
            let Ok(mut bytes) = std::fs::read(part.path()) else {
                continue;
            };
            if let Some(b) = bytes.get_mut(20) {
                *b ^= 0x5a;
                any |= std::fs::write(part.path(), bytes).is_ok();
            }
        }
        any
    });
}

/// Whether this machine lets the tests make a read-only mount in a private mount namespace
/// (root with CAP_SYS_ADMIN: CI runs so).
fn private_mounts_work() -> bool {
    std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn an_rm_whose_state_disk_is_read_only_says_so_and_exits_and_nothing_stored_is_lost() {
    if !private_mounts_work() {
        eprintln!("skipped: this machine cannot make private read-only mounts (needs root)");
        return;
    }
    let tmp = work_dir("yard-fault-readonly");
    let db = rm_db(&tmp);
    let rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let ids: Vec<String> = (0..3).map(|_| submit_command(&url, "sleep 600")).collect();
    let mut rm = rm;
    sigkill(rm.child.id());
    let _ = rm.child.wait();
    drop(rm);
    let before = std::fs::read(&db).unwrap();

    // The same rm on the same file, in a mount namespace where the file's directory is a
    // read-only bind mount of itself: a clear error and exit code 1 (it used to die of SIGBUS).
    let script = r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$1" rm --bind 127.0.0.1:0 --state-db "$0/rm.db""#;
    let out = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .arg(&tmp)
        .arg(env!("CARGO_BIN_EXE_yard"))
        .env("YARD_HOME", yard_home())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot be written")
            && err.contains("Read-only file system")
            && err.contains("--state-db"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the file is left as it is"
    );

    // Writable again: everything stored is back.
    let again = rm_in(&tmp, &[]);
    let url = format!("http://{}", again.addr);
    for id in &ids {
        assert_eq!(app_state(&url, id)["id"], json!(id), "{id} survived");
    }
    drop(again);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The rm's container book, as its test hook shows it: whether its invariants hold, and the
/// containers it books on each running node.
fn books(url: &str) -> (bool, Value, Vec<(String, Vec<String>)>) {
    let b = get(&format!("{url}/ws/v1/yard/books"))["books"].clone();
    let nodes = b["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["state"] == "RUNNING")
        .map(|n| {
            let mut ids: Vec<String> = n["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect();
            ids.sort();
            (n["nodeId"].as_str().unwrap_or_default().to_owned(), ids)
        })
        .collect();
    (b["consistent"] == true, b["problem"].clone(), nodes)
}

/// Once the cluster is quiet, the rm books on each node exactly what its nodemanager runs.
fn books_equal_what_nodes_run(c: &Cluster, seed: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (consistent, problem, mut booked) = books(&c.url);
        assert!(consistent, "seed {seed}: the books disagree: {problem}");
        let mut running: Vec<(String, Vec<String>)> = c
            .nms
            .iter()
            .map(|nm| {
                let info = get(&format!("http://{}/ws/v1/node/info", nm.addr));
                let node = info["nodeInfo"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let mut ids: Vec<String> = containers_on(nm)
                    .iter()
                    .filter_map(|k| k["id"].as_str().map(str::to_owned))
                    .collect();
                ids.sort();
                (node, ids)
            })
            .collect();
        running.sort();
        booked.sort();
        if booked == running {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "seed {seed}: the rm books {booked:?}, the nodes run {running:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The seed of a randomized fault test, printed, and its generator: `YARD_FAULT_SEED=N`
/// replays one, else the clock picks it.
fn fault_seed() -> (u64, rand::rngs::ChaCha8Rng) {
    use rand::SeedableRng;
    let seed = std::env::var("YARD_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("fault seed {seed} (replay with YARD_FAULT_SEED={seed})");
    (seed, rand::rngs::ChaCha8Rng::seed_from_u64(seed))
}

/// Seeded, randomized faults on a full cluster (3 nodes of 2 slots: a job's master and five
/// tasks fill it): each round a job that asks for more than fits, and at a random moment
/// either its master is killed with SIGKILL or the job is killed (`yard kill`). After every
/// round the dead master's attempt 2 finishes the job (or the killed job stays KILLED), the
/// next job still runs (nothing is wedged), and the rm's container book equals what the
/// nodemanagers run. The seed is printed; `YARD_FAULT_SEED=N` replays one.
#[test]
fn seeded_master_deaths_and_kills_on_a_full_cluster_leave_the_books_equal_to_what_nodes_run() {
    use rand::RngExt;
    let (seed, mut rng) = fault_seed();
    let tmp = work_dir("yard-fault-books");
    let c = cluster(&tmp);
    for round in 0..3 {
        // Long enough (6 waves of 1 s maps on 5 slots) that the fault always lands mid-job.
        let job = synthetic(&c.url, "30", "1");
        let _cleanup = ProcessesOf::app(&job);
        // The job holds the whole cluster: its master and five tasks.
        eventually_for(
            &format!("round {round}: {job} to fill the cluster (seed {seed})"),
            Duration::from_secs(60),
            || {
                let n: usize = c.nms.iter().map(|nm| containers_on(nm).len()).sum();
                (n == 6).then_some(())
            },
        );
        std::thread::sleep(Duration::from_millis(rng.random_range(0..2_500)));
        let kill_master = rng.random_bool(0.5);
        if kill_master {
            let attempts = get(&format!("{}/ws/v1/cluster/apps/{job}/appattempts", c.url));
            let am = attempts["appAttempts"]["appAttempt"][0]["containerId"].clone();
            let master = c
                .nms
                .iter()
                .flat_map(containers_on)
                .find_map(|k| (k["id"] == am).then(|| k["pid"].as_u64())?);
            let pid = master.unwrap_or_else(|| panic!("seed {seed}: no master of {job}"));
            sigkill(pid as u32);
        } else {
            let (code, _, err) = yard(&["kill", &job, "--rm", &c.url]);
            assert_eq!(code, 0, "seed {seed}: {err}");
        }
        let app = finished(&c.url, &job);
        let want = if kill_master { "FINISHED" } else { "KILLED" };
        assert_eq!(app["state"], want, "seed {seed}, round {round}: {app}");
        if kill_master {
            assert_eq!(attempts_of(&c.url, &job), 2, "seed {seed}");
        }
        books_equal_what_nodes_run(&c, seed);
        let metrics = get(&format!("{}/ws/v1/cluster/metrics", c.url))["clusterMetrics"].clone();
        assert_eq!(
            (
                &metrics["containersAllocated"],
                &metrics["allocatedVirtualCores"]
            ),
            (&json!(0), &json!(0)),
            "seed {seed}: {metrics}"
        );
    }
    // Nothing is wedged: a short job still runs to its end.
    let last = synthetic(&c.url, "2", "0.2");
    assert_eq!(finished(&c.url, &last)["state"], "FINISHED", "seed {seed}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Seeded, randomized dataset puts and removals (`yard data put`, `yard data rm`), each
/// acknowledged one followed at random by a SIGKILL of the rm and its restart on the same
/// address and state: nothing acknowledged is lost. After the rounds, `yard data ls` lists
/// exactly the datasets put and not removed, each reads back as it was put, and the nodes
/// hold blocks of those and of no removed one (a removal the rm had not yet told the nodes
/// when it died is told by the restarted rm). The seed is printed; `YARD_FAULT_SEED=N`
/// replays one.
#[test]
fn seeded_puts_removals_and_rm_kills_leave_the_nodes_holding_exactly_the_listed_datasets() {
    use rand::RngExt;
    use rand::seq::IndexedRandom;
    let (seed, mut rng) = fault_seed();
    let tmp = work_dir("yard-fault-datasets");
    let Cluster {
        mut rm, nms, url, ..
    } = cluster(&tmp);
    let addr = rm.addr.clone();
    // Three small texts, each put under several names.
    let files: Vec<std::path::PathBuf> = (0..3)
        .map(|i| {
            let file = tmp.join(format!("text{i}.txt"));
            let (code, _, err) = yard(&[
                "data",
                "gen",
                "--kind",
                "text",
                "--size",
                "48KiB",
                "--seed",
                &i.to_string(),
                "--out",
                file.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{err}");
            file
        })
        .collect();
    // Name → the file it holds: the datasets acknowledged and not removed.
    let mut live: std::collections::BTreeMap<String, std::path::PathBuf> = Default::default();
    let mut removed: Vec<String> = Vec::new();
    for round in 0..10 {
        let put = live.len() < 2 || (live.len() < 5 && rng.random_bool(0.6));
        if put {
            let name = format!("d{round}");
            let file = files.choose(&mut rng).unwrap().clone();
            let replication = rng.random_range(1..=2u32);
            put_file(&url, &file, &name, "16KiB", replication);
            live.insert(name, file);
        } else {
            let names: Vec<String> = live.keys().cloned().collect();
            let name = names.choose(&mut rng).unwrap().clone();
            let (code, out, err) = yard(&["data", "rm", &name, "--rm", &url]);
            assert_eq!(code, 0, "seed {seed}, round {round}: {out}{err}");
            live.remove(&name);
            removed.push(name);
        }
        if rng.random_bool(0.4) {
            // At once: the acknowledgement is all there is; the rm's tick has saved nothing.
            sigkill(rm.child.id());
            let _ = rm.child.wait();
            rm = rm_again(&tmp, &addr);
            await_running(&rm, 3);
        }
    }
    let (code, out, err) = yard(&["data", "ls", "--json", "--rm", &url]);
    assert_eq!(code, 0, "seed {seed}: {err}");
    let listed: Vec<String> = serde_json::from_str::<Value>(&out).unwrap()["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = live.keys().cloned().collect();
    assert_eq!(listed, want, "seed {seed}: the rm lists");
    for (name, file) in &live {
        let (code, text, err) = yard(&["data", "cat", name, "--rm", &url]);
        assert_eq!(code, 0, "seed {seed}: {name}: {err}");
        assert!(
            text == std::fs::read_to_string(file).unwrap(),
            "seed {seed}: {name} reads back otherwise than it was put"
        );
    }
    let held = |name: &str| -> usize {
        (0..nms.len())
            .filter(|i| tmp.join(format!("nm{i}/data/blocks/{name}")).exists())
            .count()
    };
    eventually_for(
        &format!("seed {seed}: the nodes delete every removed dataset {removed:?}"),
        Duration::from_secs(30),
        || removed.iter().all(|n| held(n) == 0).then_some(()),
    );
    for name in live.keys() {
        assert!(held(name) > 0, "seed {seed}: no node holds {name}");
    }
    drop(nms);
    drop(rm);
    let _ = std::fs::remove_dir_all(&tmp);
}
