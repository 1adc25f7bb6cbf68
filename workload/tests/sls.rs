//! The shipped Hadoop SLS samples (`traces/sls/`): SLS traces, topology files and SYNTH configs.
//! Expected figures were taken from the JSON with python3, not from the parser.

use std::path::{Path, PathBuf};

use yard_workload::{Format, Job, Outcome, ReadOptions, Workload, read_file};

fn path(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/sls")).join(name)
}

fn read(name: &str, format: Format, seed: Option<u64>) -> Workload {
    let options = ReadOptions {
        format: Some(format),
        seed,
        ..Default::default()
    };
    read_file(&path(name), &options).unwrap_or_else(|e| panic!("{e}"))
}

fn host(w: &Workload, job: &Job, map: usize) -> String {
    let task = job.map_tasks().nth(map).unwrap();
    let node = w.topology.node(task.host.unwrap());
    format!(
        "/{}/{}",
        w.topology.rack_name(node.rack.unwrap()),
        node.name
    )
}

fn check_sls_sample(w: &Workload) {
    assert_eq!(w.format, Format::Sls);
    assert_eq!(w.jobs.len(), 2);
    let (a, b) = (&w.jobs[0], &w.jobs[1]);
    assert_eq!(
        (a.id.as_str(), a.queue.as_deref(), a.user.as_deref()),
        ("job_1", Some("sls_queue_1"), Some("default"))
    );
    assert_eq!(
        (b.id.as_str(), b.queue.as_deref()),
        ("job_2", Some("sls_queue_2"))
    );
    assert_eq!(
        (a.submit_ms, a.start_ms, a.finish_ms),
        (0, Some(0), Some(95375))
    );
    assert_eq!(
        (b.submit_ms, b.start_ms, b.finish_ms),
        (105204, Some(105204), Some(197256))
    );
    assert_eq!(
        (
            a.map_count(),
            a.reduce_count(),
            b.map_count(),
            b.reduce_count()
        ),
        (3, 0, 2, 0)
    );
    let durations = |j: &Job| {
        j.map_tasks()
            .map(|t| t.duration_ms.unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(durations(a), [23707 - 6664, 21593 - 6665, 86613 - 68770]);
    assert_eq!(durations(b), [133985 - 111822, 131377 - 111788]);
    let starts: Vec<_> = a.map_tasks().map(|t| t.start_ms.unwrap()).collect();
    assert_eq!(starts, [6664, 6665, 68770]);
    assert!(
        w.jobs
            .iter()
            .flat_map(Job::map_tasks)
            .all(|t| t.status == Outcome::Succeeded)
    );
    assert_eq!(host(w, a, 1), "/default-rack/node3");
    assert_eq!(host(w, b, 1), "/default-rack/node2");
    assert_eq!(w.topology.racks, ["default-rack"]);
    let nodes: Vec<_> = w.topology.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, ["node1", "node3", "node2"]);
}

#[test]
fn sls_inputsls_json() {
    check_sls_sample(&read("inputsls.json", Format::Sls, None));
}

#[test]
fn sls_dag_json_reads_like_inputsls() {
    let dag = read("sls_dag.json", Format::Sls, None);
    check_sls_sample(&dag);
    assert_eq!(dag.jobs, read("inputsls.json", Format::Sls, None).jobs);
}

#[test]
fn topology_nodes_json_skips_the_empty_entry() {
    let w = read("nodes.json", Format::Topology, None);
    assert_eq!(w.format, Format::Topology);
    assert!(w.jobs.is_empty());
    let t = &w.topology;
    assert_eq!(t.racks, ["rack1", "rack2", "rack3", "rack4", "rack5"]);
    assert_eq!(t.nodes.len(), 19);
    for (i, node) in t.nodes.iter().enumerate() {
        assert_eq!(node.name, format!("node{}", i + 1));
        assert_eq!(
            t.rack_name(node.rack.unwrap()),
            format!("rack{}", i / 4 + 1)
        );
    }
}

#[test]
fn topology_nodes_with_resources_json() {
    let w = read("nodes-with-resources.json", Format::Topology, None);
    let t = &w.topology;
    assert_eq!((t.racks.len(), t.nodes.len()), (1, 4));
    let node = |name: &str| t.node(t.find(name).unwrap());
    assert_eq!(
        (node("node1").memory_mb, node("node1").vcores),
        (Some(2048), Some(6))
    );
    assert_eq!(
        (node("node2").memory_mb, node("node2").vcores),
        (None, None)
    );
    assert_eq!(
        (node("node4").memory_mb, node("node4").vcores),
        (Some(6144), Some(12))
    );
    assert_eq!(node("node3").labels, ["label1", "label2(exclusive=false)"]);
    assert_eq!(node("node4").labels, ["label1", "label2(exclusive=false)"]);
    assert!(node("node1").labels.is_empty());
}

/// What every SYNTH sample shares: queue, user, sorted whole-second submits in [1 s, 60 s),
/// ids in order, SLS's round-robin 20 nodes in 5 racks.
fn check_synth_common(w: &Workload, jobs: usize) {
    assert_eq!(w.format, Format::Synth);
    assert_eq!(w.jobs.len(), jobs);
    for (n, j) in w.jobs.iter().enumerate() {
        assert_eq!(j.id, format!("job_{n}"));
        assert_eq!(j.name.as_deref(), Some(format!("class_1_{n:06}").as_str()));
        assert_eq!(
            (j.queue.as_deref(), j.user.as_deref()),
            (Some("sls_queue_1"), Some("foobar"))
        );
        assert!(
            (1000..60_000).contains(&j.submit_ms) && j.submit_ms % 1000 == 0,
            "{}",
            j.submit_ms
        );
    }
    assert!(w.jobs.windows(2).all(|p| p[0].submit_ms <= p[1].submit_ms));
    let t = &w.topology;
    assert_eq!(t.racks, ["rack0", "rack1", "rack2", "rack3", "rack4"]);
    assert_eq!(t.nodes.len(), 20);
    assert_eq!(
        t.rack_name(t.node(t.find("node7").unwrap()).rack.unwrap()),
        "rack2"
    );
}

/// syn.json and syn_generic.json describe the same class: 5±1 maps of 10±2 ms, 5±1 reduces of
/// 20±4 ms, 60±5 s jobs with a deadline factor of 10.
fn check_mr_class(w: &Workload) {
    for j in &w.jobs {
        assert!((1..=15).contains(&j.map_count()), "{}", j.map_count());
        assert!(j.reduce_count() <= 15, "{}", j.reduce_count());
        assert!(
            j.map_tasks()
                .all(|t| (1..=30).contains(&t.duration_ms.unwrap()))
        );
        assert!(
            j.reduce_tasks()
                .all(|t| (1..=60).contains(&t.duration_ms.unwrap()))
        );
        let slack = j.deadline_ms.unwrap() - j.submit_ms;
        assert!((300_000..=1_200_000).contains(&slack), "{slack}");
    }
    let maps: u64 = w.jobs.iter().map(Job::map_count).sum();
    assert!((20..=80).contains(&maps), "{maps} maps over 10 jobs of ~5");
}

#[test]
fn synth_syn_json_flat_keys() {
    let w = read("syn.json", Format::Synth, None);
    check_synth_common(&w, 10);
    check_mr_class(&w);
}

#[test]
fn synth_syn_generic_json() {
    let w = read("syn_generic.json", Format::Synth, None);
    check_synth_common(&w, 10);
    check_mr_class(&w);
    for j in &w.jobs {
        // A constant factor 10 × a whole number of seconds.
        assert_eq!((j.deadline_ms.unwrap() - j.submit_ms) % 10_000, 0);
    }
}

#[test]
fn synth_syn_stream_json() {
    let w = read("syn_stream.json", Format::Synth, None);
    check_synth_common(&w, 5);
    for j in &w.jobs {
        assert_eq!(
            j.submit_ms, 1000,
            "the only bucket with weight is [1 s, 2 s)"
        );
        assert_eq!((j.map_count(), j.reduce_count()), (2, 0));
        assert!(j.map_tasks().all(|t| t.duration_ms == Some(60_000)));
        let slack = j.deadline_ms.unwrap() - j.submit_ms;
        assert!(
            slack % 10_000 == 0 && (150_000..=500_000).contains(&slack),
            "{slack}"
        );
    }
}

#[test]
fn synth_expansion_is_deterministic_by_seed() {
    for name in ["syn.json", "syn_generic.json", "syn_stream.json"] {
        let a = read(name, Format::Synth, None);
        assert_eq!(a, read(name, Format::Synth, None), "{name}");
        assert_eq!(
            a,
            read(name, Format::Synth, Some(2)),
            "{name}: rand_seed 2 is the default"
        );
    }
    for name in ["syn.json", "syn_generic.json"] {
        let a = read(name, Format::Synth, Some(11));
        assert_eq!(a, read(name, Format::Synth, Some(11)));
        assert_ne!(a.jobs, read(name, Format::Synth, Some(12)).jobs, "{name}");
    }
    // syn_stream.json draws only its job durations; the seed still shows there.
    let deadlines = |seed| {
        read("syn_stream.json", Format::Synth, Some(seed))
            .jobs
            .iter()
            .map(|j| j.deadline_ms)
            .collect::<Vec<_>>()
    };
    assert_ne!(deadlines(11), deadlines(12));
}

#[test]
fn sls_samples_are_detected() {
    for (name, format) in [
        ("inputsls.json", Format::Sls),
        ("sls_dag.json", Format::Sls),
        ("nodes.json", Format::Topology),
        ("nodes-with-resources.json", Format::Topology),
        ("syn.json", Format::Synth),
        ("syn_generic.json", Format::Synth),
        ("syn_stream.json", Format::Synth),
    ] {
        let w = read_file(&path(name), &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.format, format, "{name}");
    }
}
