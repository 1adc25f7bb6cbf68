//! The rm's deadline-aware cluster policies on a live cluster (issue 16, item 6): real rm,
//! nodemanager and MapReduce masters on 127.0.0.1, synthetic jobs whose maps take a set time.
//!
//! - Two jobs compete for the one container a blocker frees: under `edf` and `minedf-wc` the
//!   later-submitted job with the earlier deadline runs first, under `fifo` the first arrival
//!   does (the contrast that shows the test can fail). Judged by which job the rm lists with a
//!   task container first, and that the other gets none before the first has run all its
//!   maps (it keeps the container across its tasks).
//! - Under `minedf-wc` a job alone on an idle cluster is lent spare containers beyond its
//!   quota; a job with an earlier deadline arrives, the rm kills above-quota tasks for it
//!   (`spareKills` in `GET /ws/v1/cluster/scheduler`) so that it runs while the other still
//!   has maps to run, and the job that lost tasks runs them again: its answer reads every map.
//!
//! Order and outcomes are judged, never durations; waits poll with generous limits.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

mod support;
use support::*;

/// The job kind every synthetic job has (its profile is the rm's model for the quota).
const KIND: &str = "synthetic";

/// One nodemanager of `vcores` one-vcore slots (tasks and masters alike take one vcore), in
/// `dir/nm0` (where [`master_log`] looks).
fn one_node(rm: &Daemon, dir: &Path, vcores: u32) -> Daemon {
    let shape = NmShape {
        memory_mb: 8192,
        vcores,
        ..NmShape::default()
    };
    nm_for(&format!("http://{}", rm.addr), &dir.join("nm0"), shape, &[])
}

/// A profile store that knows the synthetic kind: maps of 1 s, a short reduce. The rm reads
/// it for every synthetic job's quota (ARIA's model); the masters add their runs to it.
fn seed_profiles(path: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = yard_profiles::ProfileStore::open(path).await.unwrap();
        let run = yard_appmaster::policy::RunRecord {
            map_local: None,
            map_remote: Some(1.0),
            partition_bytes: Some(65_536.0),
            shuffle_bandwidth: Some(50e6),
            k: 4,
            max_reduce_input: 4 * 65_536,
            reduce_samples: vec![(65_536.0, 0.1), (262_144.0, 0.2)],
            ..Default::default()
        };
        store.add_run(KIND, 0, &run).await.unwrap();
    });
}

/// An rm under `scheduler` with a seeded profile store, no node yet; and its URL.
fn policy_rm(dir: &Path, scheduler: &str, master_share: &str) -> (Daemon, String) {
    let profiles = dir.join("profiles.db");
    seed_profiles(&profiles);
    let rm = rm_in(
        dir,
        &[
            "--scheduler",
            scheduler,
            "--profiles-db",
            profiles.to_str().unwrap(),
            "--master-share",
            master_share,
        ],
    );
    let url = format!("http://{}", rm.addr);
    (rm, url)
}

/// The rm's one nodemanager, of `vcores` slots, running.
fn with_node(rm: Daemon, url: String, dir: &Path, vcores: u32) -> Cluster {
    let nm = one_node(&rm, dir, vcores);
    await_running(&rm, 1);
    Cluster {
        rm,
        nms: vec![nm],
        url,
        profiles: dir.join("profiles.db"),
    }
}

/// Submits a synthetic job (`full`: every map, the exact answer) of `maps` one-second maps
/// and one short reduce, due `deadline` from now; its id.
fn synthetic(url: &str, maps: u32, deadline: &str) -> String {
    let (code, out, err) = yard(&[
        "submit",
        "synthetic",
        "--maps",
        &maps.to_string(),
        "--map-seconds",
        "1",
        "--reduces",
        "1",
        "--reduce-seconds",
        "0.1",
        "--policy",
        "full",
        "--deadline",
        deadline,
        "--no-wait",
        "--rm",
        url,
    ]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_owned()
}

/// `GET /ws/v1/cluster/scheduler`'s `schedulerInfo`.
fn scheduler(url: &str) -> Value {
    get(&format!("{url}/ws/v1/cluster/scheduler"))["scheduler"]["schedulerInfo"].clone()
}

/// An unfinished application as the scheduler lists it.
fn listed<'a>(info: &'a Value, id: &str) -> Option<&'a Value> {
    info["apps"]["app"]
        .as_array()?
        .iter()
        .find(|a| a["id"] == id)
}

/// Task containers the rm lists for `id` (its master's aside).
fn tasks_of(info: &Value, id: &str) -> u64 {
    listed(info, id)
        .and_then(|a| a["runningContainers"].as_u64())
        .map_or(0, |n| n.saturating_sub(1))
}

/// yard's view of an application: state, processed fraction, answer.
fn yard_app(url: &str, id: &str) -> Value {
    get(&format!("{url}/ws/v1/yard/apps/{id}"))["app"].clone()
}

/// The master's own status (its tracking URL, which takes the job's token), once it serves
/// one; the cluster's rm runs in `dir`.
fn master_status(url: &str, dir: &Path, id: &str) -> Option<Value> {
    let tracking = yard_app(url, id)["trackingUrl"].as_str()?.to_owned();
    let status = get_as(&tracking, &job_token(dir, id));
    (!status.is_null()).then_some(status)
}

fn is_final(app: &Value) -> bool {
    matches!(
        app["state"].as_str(),
        Some("FINISHED" | "FAILED" | "KILLED")
    )
}

/// Asserts `id` succeeded with an answer from every one of its `maps` maps.
fn read_everything(url: &str, id: &str, maps: u32) -> Value {
    let app = yard_app(url, id);
    let cluster = get(&format!("{url}/ws/v1/cluster/apps/{id}"))["app"].clone();
    assert_eq!(cluster["finalStatus"], "SUCCEEDED", "{id}: {cluster} {app}");
    assert_eq!(app["processedFraction"], json!(1.0), "{id}: {app}");
    let job = &app["answer"]["job"];
    assert_eq!(
        (&job["k"], &job["maps"]),
        (&json!(maps), &json!(maps)),
        "{app}"
    );
    app
}

/// A blocker holds the only free container; job A (deadline in 10 min) is submitted, then job
/// B (deadline in 5 min); both masters run and ask for tasks. The blocker is killed: its
/// container is the one A and B compete for, and the one that gets it keeps it across its
/// tasks (container reuse) until it has answered. `edf` and `minedf-wc` must serve B first,
/// `fifo` A.
fn compete(name: &str, policy: &str) {
    let tmp = work_dir(name);
    let (rm, url) = policy_rm(&tmp, policy, "1.0");
    // All three wait when the node joins, so their masters are placed at once and fill its
    // three slots (masters may fill the node): no task of A runs before B's master does.
    let blocker = submit_command(&url, "sleep 600");
    let maps = 2;
    let a = synthetic(&url, maps, "10m");
    let b = synthetic(&url, maps, "5m");
    let c = with_node(rm, url, &tmp, 3);
    eventually("the blocker to hold its container", || {
        let info = scheduler(&c.url);
        (listed(&info, &blocker)?["runningContainers"] == 1).then_some(())
    });
    // Both masters run their job (the policy wants a container per map) and have called the
    // rm with their asks many times over (every 100 ms): seen by the master's own clock.
    let asking = |s: &Option<Value>| {
        s.as_ref().is_some_and(|s| {
            s["phase"] == "running" && s["elapsedSeconds"].as_f64().is_some_and(|t| t >= 1.5)
        })
    };
    let give_up = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let statuses = [
            master_status(&c.url, &tmp, &a),
            master_status(&c.url, &tmp, &b),
        ];
        if statuses.iter().all(asking) {
            break;
        }
        if std::time::Instant::now() > give_up {
            panic!(
                "timed out waiting for both jobs to ask for tasks: {statuses:?}\n{}\nA's master: {}\nB's master: {}",
                scheduler(&c.url),
                master_log(&tmp, &a),
                master_log(&tmp, &b)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let info = scheduler(&c.url);
    assert_eq!(
        (tasks_of(&info, &a), tasks_of(&info, &b)),
        (0, 0),
        "no room for a task before the blocker goes: {info}"
    );
    if policy == "minedf-wc" {
        // Both have ARIA's model, so their quotas (not plain EDF) decide.
        for id in [&a, &b] {
            let app = listed(&info, id).unwrap();
            assert_eq!(app["profiled"], true, "{info}");
            assert!(app["quota"]["containers"].as_u64() >= Some(1), "{info}");
        }
    }
    let (code, _, err) = yard(&["kill", "--rm", &c.url, &blocker]);
    assert_eq!(code, 0, "{err}");

    let (winner, loser) = if policy == "fifo" { (&a, &b) } else { (&b, &a) };
    let label = |id: &String| {
        if *id == a {
            "A (due in 10 min)"
        } else {
            "B (due in 5 min)"
        }
    };
    // The first poll in which the rm lists each job with a task container; and the progress
    // (maps done) the other job had reported by the time the loser got its first.
    let (mut polls, mut first) = (0usize, [None, None]);
    let mut winner_progress_then = None;
    // What the rm said, each time it changed: (tasks, progress) of A and B, spare kills.
    let mut timeline: Vec<String> = Vec::new();
    eventually_for("both jobs to finish", Duration::from_secs(90), || {
        let info = scheduler(&c.url);
        let progress = |id: &str| {
            get(&format!("{}/ws/v1/cluster/apps/{id}", c.url))["app"]["progress"].clone()
        };
        let now = format!(
            "A {} tasks {}%, B {} tasks {}%, spare kills {}",
            tasks_of(&info, &a),
            progress(&a),
            tasks_of(&info, &b),
            progress(&b),
            info["spareKills"]
        );
        if timeline.last() != Some(&now) {
            timeline.push(now);
        }
        for (seen, id) in first.iter_mut().zip([winner, loser]) {
            if seen.is_none() && tasks_of(&info, id) > 0 {
                *seen = Some(polls);
                if id == loser {
                    // Read after the loser's grant: what the winner had said by then.
                    winner_progress_then =
                        get(&format!("{}/ws/v1/cluster/apps/{winner}", c.url))["app"]["progress"]
                            .as_f64();
                }
            }
        }
        polls += 1;
        (is_final(&yard_app(&c.url, &a)) && is_final(&yard_app(&c.url, &b))).then_some(())
    });
    let [in_winner, in_loser] = first;
    assert!(
        in_winner.is_some() && in_winner < in_loser,
        "under {policy}, {} should get the freed container before {} (first poll with a task \
         container: {:?} and {:?}): {:#?}",
        label(winner),
        label(loser),
        in_winner,
        in_loser,
        timeline,
    );
    // It kept the container across its tasks: the other got one only once the winner's
    // maps were all done (its progress, sent with the release).
    assert_eq!(
        winner_progress_then,
        Some(100.0),
        "under {policy}, {} got a container before {} had run all its maps: {timeline:#?}\nA's master: {}\nB's master: {}",
        label(loser),
        label(winner),
        master_log(&tmp, &a),
        master_log(&tmp, &b),
    );
    for id in [&a, &b] {
        read_everything(&c.url, id, maps);
    }
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn under_edf_the_earlier_deadline_gets_the_freed_container_first() {
    compete("yard-policies-edf", "edf");
}

#[test]
fn under_minedf_wc_the_earlier_deadline_gets_the_freed_container_first() {
    compete("yard-policies-minedf-wc", "minedf-wc");
}

#[test]
fn under_fifo_the_first_arrival_gets_it_whatever_its_deadline() {
    compete("yard-policies-fifo", "fifo");
}

#[test]
fn minedf_wc_kills_above_quota_tasks_for_an_earlier_deadline_and_their_job_runs_them_again() {
    let tmp = work_dir("yard-policies-kill");
    // Six slots, masters up to half of them: A's master and five tasks fill the node.
    let (rm, url) = policy_rm(&tmp, "minedf-wc", "0.5");
    let c = with_node(rm, url, &tmp, 6);
    let a_maps = 48;
    let a = synthetic(&c.url, a_maps, "10m");
    // Alone on an idle cluster, A takes every slot: its quota (a loose deadline needs one
    // container), the rest lent beyond it.
    let info = eventually_for("A to fill the node", Duration::from_secs(60), || {
        let info = scheduler(&c.url);
        (tasks_of(&info, &a) == 5).then_some(info)
    });
    let quota = listed(&info, &a).unwrap()["quota"]["containers"].as_u64();
    assert!(quota.is_some_and(|q| q < 5), "A's quota: {info}");
    assert!(info["spareAllocations"].as_u64() >= Some(1), "{info}");
    assert_eq!(info["spareKills"], 0, "{info}");

    // B, due in a minute, arrives on the full node.
    let b_maps = 4;
    let b = synthetic(&c.url, b_maps, "60s");
    // A keeps its containers while it has maps to run (container reuse): B can get one
    // before A's maps are done only by MinEDF-WC taking it back.
    let mut a_progress_then = None;
    let mut timeline: Vec<String> = Vec::new();
    eventually_for("both jobs to finish", Duration::from_secs(120), || {
        let info = scheduler(&c.url);
        let a_progress =
            get(&format!("{}/ws/v1/cluster/apps/{a}", c.url))["app"]["progress"].as_f64();
        let now = format!(
            "A {} tasks {:?}%, B {} tasks, quotas {} / {}, spare kills {}",
            tasks_of(&info, &a),
            a_progress,
            tasks_of(&info, &b),
            listed(&info, &a).map_or(Value::Null, |x| x["quota"]["containers"].clone()),
            listed(&info, &b).map_or(Value::Null, |x| x["quota"]["containers"].clone()),
            info["spareKills"]
        );
        if timeline.last() != Some(&now) {
            timeline.push(now);
        }
        if a_progress_then.is_none() && tasks_of(&info, &b) > 0 {
            a_progress_then = a_progress;
        }
        (is_final(&yard_app(&c.url, &a)) && is_final(&yard_app(&c.url, &b))).then_some(())
    });
    let info = scheduler(&c.url);
    assert!(
        info["spareKills"].as_u64() >= Some(1) && info["spareMapKills"].as_u64() >= Some(1),
        "{info}\n{timeline:#?}"
    );
    // The earlier deadline was served while A still had maps to run, and met.
    assert!(
        a_progress_then.is_some_and(|p| p < 100.0),
        "B got its first task container when A's progress was {a_progress_then:?}: {timeline:#?}"
    );
    let b_view = read_everything(&c.url, &b, b_maps);
    assert_eq!(b_view["answer"]["job"]["deadlineMet"], true, "{b_view}");
    // A lost running tasks to the kills and ran them again: still every map read.
    read_everything(&c.url, &a, a_maps);
    let log = master_log(&tmp, &a);
    assert!(
        log.contains("Preempted"),
        "A's master saw a preemption: {log}"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
