//! The Rumen reader on the staged traces. Every expected figure was computed independently with
//! a Python script (json.JSONDecoder.raw_decode over the concatenated objects), not with this
//! reader; most also match traces/README.md section 2.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::Instant;

use yard_workload::{Format, Millis, NodeId, Outcome, ReadOptions, Task, Workload};

fn read(name: &str) -> Workload {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces/rumen")
        .join(name);
    let options = ReadOptions {
        format: Some(Format::Rumen),
        ..Default::default()
    };
    yard_workload::read_file(&path, &options).unwrap_or_else(|e| panic!("{e}"))
}

fn maps(w: &Workload) -> impl Iterator<Item = &Task> {
    w.jobs.iter().flat_map(|j| j.map_tasks())
}

fn reduces(w: &Workload) -> impl Iterator<Item = &Task> {
    w.jobs.iter().flat_map(|j| j.reduce_tasks())
}

fn range<'a>(tasks: impl Iterator<Item = &'a Task>) -> (Millis, Millis) {
    let d: Vec<Millis> = tasks.filter_map(|t| t.duration_ms).collect();
    (*d.iter().min().unwrap(), *d.iter().max().unwrap())
}

fn attempt_hosts(w: &Workload) -> HashSet<NodeId> {
    maps(w)
        .chain(reduces(w))
        .flat_map(|t| &t.attempts)
        .filter_map(|a| a.host)
        .collect()
}

fn name(w: &Workload, id: NodeId) -> &str {
    &w.topology.node(id).name
}

fn no_backslashes(w: &Workload) {
    for n in &w.topology.nodes {
        assert!(!n.name.contains('\\'), "{}", n.name);
    }
    for r in &w.topology.racks {
        assert!(!r.contains('\\'), "{r}");
    }
}

#[test]
fn rumen_folder_input_trace() {
    let w = read("folder-input-trace.json");
    assert_eq!(w.format, Format::Rumen);
    assert_eq!(w.jobs.len(), 59);
    assert_eq!(maps(&w).count(), 787);
    assert_eq!(
        reduces(&w).count(),
        321,
        "setup/cleanup tasks are not counted"
    );
    let users: BTreeSet<_> = w.jobs.iter().filter_map(|j| j.user.as_deref()).collect();
    assert_eq!(users, BTreeSet::from(["geek1", "geek2", "geek3", "geek4"]));
    assert!(w.jobs.iter().all(|j| j.outcome == Outcome::Succeeded));
    assert!(w.jobs.iter().all(|j| j.name.is_none() && j.queue.is_none()));
    assert_eq!(w.jobs.iter().filter(|j| j.reduces.is_empty()).count(), 43);
    assert_eq!(w.jobs.iter().map(|j| j.map_count()).max(), Some(200));
    assert_eq!(w.jobs.iter().map(|j| j.reduce_count()).max(), Some(200));

    let first = &w.jobs[0];
    assert_eq!(first.id, "job_200910281128_10000");
    assert_eq!(
        (first.submit_ms, first.start_ms, first.finish_ms),
        (1256811828131, Some(1256811834890), Some(1256811846597))
    );
    // Jobs stay in file order (by job id), which is not quite submit order here.
    assert!(w.jobs[2].submit_ms < w.jobs[1].submit_ms);
    assert_eq!(w.origin_ms(), Some(1256811828131));

    // One successful attempt per task, so each duration is that attempt's.
    let all: Vec<&Task> = maps(&w).chain(reduces(&w)).collect();
    assert!(all.iter().all(|t| t.attempts.len() == 1
        && t.attempts[0].outcome == Outcome::Succeeded
        && t.status == Outcome::Succeeded
        && t.host == t.attempts[0].host
        && t.host.is_some()));
    assert_eq!(range(maps(&w)), (1893, 239772));
    assert_eq!(range(reduces(&w)), (8498, 540962));

    // Map inputBytes is -1 throughout; 587 maps get their size from hdfsBytesRead, the 200
    // maps of the largest job record neither.
    assert_eq!(maps(&w).filter(|t| t.bytes.is_some()).count(), 587);
    assert_eq!(
        w.jobs.iter().map(|j| j.input_bytes()).sum::<u64>(),
        49330576670
    );
    assert!(reduces(&w).all(|t| t.bytes.is_some()));
    assert_eq!(reduces(&w).filter_map(|t| t.bytes).sum::<u64>(), 4897041777);

    // The README's "834 hosts in 72 racks" counts the hosts of all attempts, setup and cleanup
    // included. Map and reduce attempts ran on 784 of them (the same 72 racks); the split
    // locations in preferredLocations name 1176 hosts, many of which ran nothing, and 13 more
    // racks. Together: 1655 nodes in 85 racks, every one placed in a rack.
    let ran = attempt_hosts(&w);
    assert_eq!(ran.len(), 784);
    let ran_racks: HashSet<_> = ran.iter().map(|&h| w.topology.node(h).rack).collect();
    assert_eq!(ran_racks.len(), 72);
    let preferred: HashSet<NodeId> = all
        .iter()
        .flat_map(|t| t.preferred.iter().copied())
        .collect();
    assert_eq!(preferred.len(), 1176);
    assert_eq!(all.iter().map(|t| t.preferred.len()).sum::<usize>(), 1623);
    assert_eq!(w.topology.nodes.len(), 1655);
    assert_eq!(w.topology.racks.len(), 85);
    assert!(w.topology.nodes.iter().all(|n| n.rack.is_some()));
    no_backslashes(&w);
    let h = first.maps[0].task.host.unwrap();
    assert_eq!(name(&w, h), "node43349.gold.grid.megatron.com");
    assert_eq!(
        w.topology.rack_name(w.topology.node(h).rack.unwrap()),
        "192.13.176.0"
    );
}

#[test]
fn rumen_2jobs2min() {
    let w = read("2jobs2min-rumen-jh.json");
    assert_eq!(w.jobs.len(), 3);
    assert_eq!(maps(&w).count(), 193);
    assert_eq!(reduces(&w).count(), 0);
    let ids: Vec<_> = w.jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "job_1369942127770_1205",
            "job_1369942127770_1206",
            "job_1369942127770_1207"
        ]
    );
    for j in &w.jobs {
        assert_eq!(j.user.as_deref(), Some("jenkins"));
        assert_eq!(j.queue.as_deref(), Some("sls_queue_1"));
        assert_eq!(j.name.as_deref(), Some("TeraGen"));
        assert_eq!(j.outcome, Outcome::Succeeded);
    }
    assert_eq!(w.jobs[0].map_count(), 96);
    assert_eq!(w.jobs[1].map_count(), 96);
    assert_eq!(w.jobs[2].submit_ms, w.jobs[0].submit_ms + 1_000_000);

    // The YARN-4612 fixture: one KILLED map that never got an attempt. Its task-level span
    // (19.153 s) is scheduling-to-kill, not a run time, so it has no duration.
    let killed = &w.jobs[2].maps[0].task;
    assert_eq!(w.jobs[2].map_count(), 1);
    assert_eq!(killed.status, Outcome::Killed);
    assert!(killed.attempts.is_empty());
    assert_eq!(killed.duration_ms, None);
    assert_eq!(killed.host, None);
    assert_eq!(killed.bytes, None);
    assert_eq!(killed.start_ms, Some(1371223059053));

    let ran: Vec<&Task> = maps(&w).filter(|t| !t.attempts.is_empty()).collect();
    assert_eq!(ran.len(), 192);
    assert!(ran.iter().all(|t| t.attempts.len() == 1
        && t.attempts[0].outcome == Outcome::Succeeded
        && t.duration_ms.is_some()));
    assert_eq!(range(ran.into_iter()), (11143, 47021));

    assert_eq!(w.topology.racks, ["default-rack"]);
    let hosts: BTreeSet<_> = w.topology.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        hosts,
        BTreeSet::from([
            "a2115.smile.com",
            "a2116.smile.com",
            "a2117.smile.com",
            "a2118.smile.com"
        ])
    );
    assert!(w.topology.nodes.iter().all(|n| n.rack.is_some()));
    assert_eq!(attempt_hosts(&w).len(), 4);
}

#[test]
fn rumen_counters_test_trace() {
    let w = read("counters-test-trace.json");
    assert_eq!(w.jobs.len(), 2);
    assert_eq!(maps(&w).count(), 4);
    assert_eq!(reduces(&w).count(), 10);
    assert!(
        w.jobs
            .iter()
            .all(|j| j.map_count() == 2 && j.reduce_count() == 5)
    );
    let attempts: Vec<_> = maps(&w)
        .chain(reduces(&w))
        .flat_map(|t| &t.attempts)
        .collect();
    assert_eq!(attempts.len(), 17);
    assert_eq!(
        attempts
            .iter()
            .filter(|a| a.outcome == Outcome::Killed)
            .count(),
        3
    );
    assert_eq!(
        maps(&w)
            .chain(reduces(&w))
            .filter(|t| t.attempts.len() > 1)
            .count(),
        3
    );
    assert!(
        maps(&w)
            .chain(reduces(&w))
            .all(|t| t.status == Outcome::Succeeded)
    );

    // task_201002080801_40864_m_000001: the KILLED attempt started first but is listed after
    // the SUCCESS one (file order is not start order); it carries a bare host name, no rack.
    // The task takes the successful attempt's duration and host, not the last-listed one's.
    let t = &w.jobs[0].maps[1].task;
    assert_eq!(t.attempts.len(), 2);
    assert_eq!(t.attempts[1].outcome, Outcome::Killed);
    assert_eq!(t.duration_ms, Some(1265814237270 - 1265814234492));
    assert_eq!(
        name(&w, t.host.unwrap()),
        "node40488.gold.cloud.megacorp.com"
    );
    let killed_host = t.attempts[1].host.unwrap();
    assert_eq!(name(&w, killed_host), "node43617.gold.cloud.megacorp.com");
    assert_eq!(w.topology.node(killed_host).rack, None);

    assert_eq!(range(maps(&w)), (2611, 3237));
    assert_eq!(range(reduces(&w)), (9146, 223509));
    assert_eq!(maps(&w).filter_map(|t| t.bytes).sum::<u64>(), 5186);
    assert_eq!(reduces(&w).filter_map(|t| t.bytes).sum::<u64>(), 2024);

    // Attempts name 13 hosts; split locations add 10 more. The 3 hosts known only from the
    // KILLED attempts' bare hostName have no rack.
    assert_eq!(attempt_hosts(&w).len(), 13);
    assert_eq!(w.topology.nodes.len(), 23);
    assert_eq!(w.topology.racks.len(), 15);
    assert_eq!(
        w.topology.nodes.iter().filter(|n| n.rack.is_none()).count(),
        3
    );
    no_backslashes(&w);
    // Job names are kept verbatim, anonymizer escapes included.
    assert_eq!(
        w.jobs[0].name.as_deref(),
        Some(r"[DOTS-PROD-job_name-DAILY/20100210] - data\.transform")
    );
}

#[test]
fn rumen_gridmix_wordcount() {
    let w = read("gridmix-wordcount.json");
    assert_eq!(w.jobs.len(), 1);
    let j = &w.jobs[0];
    assert_eq!(j.id, "job_201009241532_0001");
    assert_eq!(j.name.as_deref(), Some("WordCount"));
    assert_eq!(j.user.as_deref(), Some("johndoe"));
    assert_eq!(j.queue.as_deref(), Some("default"));
    assert_eq!(
        (j.submit_ms, j.start_ms, j.finish_ms),
        (1285322645148, Some(1285322645614), Some(1285322675837))
    );
    assert_eq!((j.map_count(), j.reduce_count()), (3, 1));
    assert_eq!(j.input_bytes(), 1445391);
    assert_eq!(j.maps[0].task.bytes, Some(704270));
    assert_eq!(
        j.maps[0].task.duration_ms,
        Some(1285322658262 - 1285322651366)
    );
    assert_eq!(range(maps(&w)), (4058, 6896));
    let r = &j.reduces[0].task;
    assert_eq!((r.bytes, r.duration_ms), (Some(127823), Some(9952)));

    assert_eq!(w.topology.nodes.len(), 1);
    assert_eq!(w.topology.nodes[0].name, "foo.example.com");
    assert_eq!(w.topology.racks, ["default-rack"]);
    let foo = w.topology.find("foo.example.com");
    assert!(j.map_tasks().chain(j.reduce_tasks()).all(|t| t.host == foo));
    assert!(j.map_tasks().all(|t| t.preferred == [foo.unwrap()]));
    assert!(j.reduce_tasks().all(|t| t.preferred.is_empty()));
}

#[test]
fn rumen_truncated_file_errors() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../traces/rumen/gridmix-wordcount.json"
    );
    let bytes = std::fs::read(path).unwrap();
    let options = ReadOptions {
        format: Some(Format::Rumen),
        ..Default::default()
    };
    for cut in [1, 100, bytes.len() / 2, bytes.len() - 2] {
        let e = yard_workload::parse("cut.json", &bytes[..cut], &options).unwrap_err();
        assert_eq!(e.file, "cut.json");
    }
}

/// Throughput check: `cargo test --release -p yard-workload --test rumen -- --ignored --nocapture`.
#[test]
#[ignore]
fn rumen_throughput_folder_input() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../traces/rumen/folder-input-trace.json"
    );
    let bytes = std::fs::read(path).unwrap();
    let options = ReadOptions {
        format: Some(Format::Rumen),
        ..Default::default()
    };
    let rounds = 50;
    let t = Instant::now();
    for _ in 0..rounds {
        let w = yard_workload::parse("f.json", &bytes, &options).unwrap();
        assert_eq!(w.jobs.len(), 59);
    }
    let secs = t.elapsed().as_secs_f64();
    let mbps = (bytes.len() * rounds) as f64 / secs / 1e6;
    println!("folder-input-trace.json: {mbps:.0} MB/s");
    assert!(mbps >= 50.0, "{mbps:.1} MB/s");
}
