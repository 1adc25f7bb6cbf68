//! `yard trace inspect` as a user runs it: the real binary on every shipped trace, and on bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the yard binary runs")
}

fn inspect_json(file: &str) -> Value {
    let out = yard(&["trace", "inspect", file, "--json"]);
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON object")
}

/// The figures `traces/README.md` documents for each file (jobs, maps, reduces, input bytes),
/// and for SWIM the tasks derived at one map per 64 MiB block. `None`: the file does not say.
#[allow(clippy::type_complexity)]
const SHIPPED: &[(&str, &str, u64, Option<u64>, Option<u64>, Option<u64>)] = &[
    // file, format, jobs, map tasks, reduce tasks, input bytes
    (
        "swim/FB-2009_samples_24_times_1hr_0.tsv",
        "swim",
        5894,
        Some(406_005),
        Some(349_978),
        Some(26_886_497_357_605),
    ),
    (
        "swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv",
        "swim",
        50,
        Some(290),
        Some(367),
        Some(16_208_585_408),
    ),
    (
        "swim/FB-2010_samples_24_times_1hr_0.tsv",
        "swim",
        24442,
        Some(16_150_741),
        Some(9_319_130),
        Some(1_082_621_755_403_831),
    ),
    (
        "swim/Additional_Workloads_Placeholder.tsv",
        "swim",
        10,
        Some(1825),
        Some(69),
        Some(121_902_716_203),
    ),
    (
        "rumen/folder-input-trace.json",
        "rumen",
        59,
        Some(787),
        Some(321),
        None,
    ),
    (
        "rumen/2jobs2min-rumen-jh.json",
        "rumen",
        3,
        Some(193),
        Some(0),
        None,
    ),
    (
        "rumen/counters-test-trace.json",
        "rumen",
        2,
        Some(4),
        Some(10),
        None,
    ),
    (
        "rumen/gridmix-wordcount.json",
        "rumen",
        1,
        Some(3),
        Some(1),
        None,
    ),
    ("sls/inputsls.json", "sls", 2, Some(5), Some(0), None),
    ("sls/sls_dag.json", "sls", 2, Some(5), Some(0), None),
    ("sls/syn.json", "synth", 10, None, None, None),
    ("sls/syn_generic.json", "synth", 10, None, None, None),
    ("sls/syn_stream.json", "synth", 5, None, None, None),
    ("sls/nodes.json", "topology", 0, Some(0), Some(0), Some(0)),
    (
        "sls/nodes-with-resources.json",
        "topology",
        0,
        Some(0),
        Some(0),
        Some(0),
    ),
];

#[test]
fn every_shipped_trace_is_read_with_its_documented_figures() {
    for &(file, format, jobs, maps, reduces, input) in SHIPPED {
        let path = format!("traces/{file}");
        let s = inspect_json(&path);
        assert_eq!(s["format"], format, "{file}: detected format");
        assert_eq!(s["jobs"], jobs, "{file}: jobs");
        for (key, want) in [
            ("map_tasks", maps),
            ("reduce_tasks", reduces),
            ("input_bytes", input),
        ] {
            if let Some(want) = want {
                assert_eq!(s[key], want, "{file}: {key}");
            }
        }
        assert!(
            s["span_s"].as_f64().is_some_and(|v| v >= 0.0),
            "{file}: span_s"
        );
    }
}

#[test]
fn the_table_covers_every_trace_file_that_ships() {
    let mut shipped = Vec::new();
    for dir in ["swim", "rumen", "sls"] {
        for entry in std::fs::read_dir(root().join("traces").join(dir)).unwrap() {
            shipped.push(format!(
                "{dir}/{}",
                entry.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    shipped.sort();
    let mut tested: Vec<String> = SHIPPED.iter().map(|s| s.0.to_owned()).collect();
    tested.sort();
    assert_eq!(shipped, tested);
}

#[test]
fn documented_spans_and_topologies() {
    // README: FB-2009 submit times 49 … 86404 s; folder-input 10:23:48 → 10:40:54 (1026 s).
    assert_eq!(
        inspect_json("traces/swim/FB-2009_samples_24_times_1hr_0.tsv")["span_s"],
        86355.0
    );
    let folder = inspect_json("traces/rumen/folder-input-trace.json");
    let span = folder["span_s"].as_f64().unwrap();
    assert!(
        (1025.0..=1027.0).contains(&span),
        "folder-input span {span}"
    );
    // The README's 834 hosts in 72 racks count task attempts only; the topology also holds the
    // hosts that preferredLocations name (input block replicas): 1655 nodes in 85 racks.
    assert_eq!(
        (folder["racks"].as_u64(), folder["nodes"].as_u64()),
        (Some(85), Some(1655))
    );
    let nodes = inspect_json("traces/sls/nodes.json");
    assert_eq!(
        (nodes["racks"].as_u64(), nodes["nodes"].as_u64()),
        (Some(5), Some(19))
    );
    let killed = inspect_json("traces/rumen/counters-test-trace.json");
    assert_eq!(killed["killed"]["attempts"], 3);
}

#[test]
fn the_block_size_flag_changes_the_map_count() {
    let out = yard(&[
        "trace",
        "inspect",
        "traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv",
        "--json",
        "--block-size",
        "128MiB",
    ]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(s["map_tasks"].as_u64().unwrap() < 290);
    assert_eq!(s["input_bytes"], 16_208_585_408u64);
}

#[test]
fn the_table_names_the_figures() {
    let out = yard(&["trace", "inspect", "traces/rumen/gridmix-wordcount.json"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for label in [
        "jobs",
        "map tasks",
        "reduce tasks",
        "input bytes",
        "time span",
        "size bins",
        "failed",
        "killed",
        "input paths",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(label)),
            "no `{label}` row in:\n{text}"
        );
    }
}

#[test]
fn inspect_counts_distinct_input_paths() {
    // SWIM's withInputPaths shape: 9 fields, output path often empty, a trailing empty field.
    let content = concat!(
        "job0\t9\t9\t1762\t0\t14347\t/warehouse/a\t\t\n",
        "job1\t18\t9\t970\t609\t697\t/warehouse/b\t/out/1\t\n",
        "job2\t20\t2\t5\t0\t0\t/warehouse/a\t\t\n",
        "job3\t21\t1\t5\t0\t0\t\t\t\n",
    );
    let dir = std::env::temp_dir().join(format!("yard-test-{}-paths", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("paths.tsv");
    std::fs::write(&path, content).unwrap();
    let file = path.to_str().unwrap();
    let s = inspect_json(file);
    let table = yard(&["trace", "inspect", file]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(s["format"], "swim");
    assert_eq!(s["jobs"], 4);
    assert_eq!(s["input_paths"], 2);
    assert_eq!(s["jobs_with_input_path"], 3);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("input paths")
                && l.ends_with("2 distinct (3 of 4 jobs record one)")),
        "no `input paths` row in:\n{text}"
    );
}

#[test]
fn shipped_traces_count_their_input_paths() {
    // Additional_Workloads_Placeholder.tsv: columns 7–8 are inputPath1…10 / outputPath1…10.
    let placeholder = inspect_json("traces/swim/Additional_Workloads_Placeholder.tsv");
    assert_eq!(placeholder["input_paths"], 10);
    assert_eq!(placeholder["jobs_with_input_path"], 10);
    let fb = inspect_json("traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
    assert_eq!(fb["input_paths"], 0);
    let out = yard(&[
        "trace",
        "inspect",
        "traces/swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("input paths") && l.ends_with("none recorded")),
        "{text}"
    );
}

/// Writes `content` to a temporary file named `name` and runs inspect on it.
fn inspect_bad(name: &str, content: &[u8], extra: &[&str]) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("yard-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, content).unwrap();
    let mut args = vec!["trace", "inspect", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = yard(&args);
    std::fs::remove_dir_all(&dir).unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_one_line_naming_file_place_and_field_with_exit_code_2() {
    let folder = std::fs::read(root().join("traces/rumen/folder-input-trace.json")).unwrap();
    // name, content, extra flags, what the message must contain
    type Case<'a> = (&'a str, Vec<u8>, &'a [&'a str], &'a [&'a str]);
    let cases: Vec<Case> = vec![
        ("truncated.json", folder[..5000].to_vec(), &[], &["truncated.json:", "EOF"]),
        ("columns.tsv", b"job0\t1\t1\t5\t0\t0\njob1\t2\t1\t5\n".to_vec(), &[], &["columns.tsv:2:", "6 tab-separated columns", "found 4"]),
        ("number.tsv", b"job0\t1\t1\tmany\t0\t0\n".to_vec(), &[], &["number.tsv:1:", "map_input_bytes", "\"many\""]),
        ("mixed.tsv", b"job0\t1\t1\t5\t0\t0\ti\t\t\n\njob1\t2\t1\t5\t0\t0\ti\to\n".to_vec(), &[], &["mixed.tsv:3:", "9 tab-separated columns like the first line", "found 8"]),
        ("ninth.tsv", b"job0\t1\t1\t5\t0\t0\ti\t\tx\n".to_vec(), &[], &["ninth.tsv:1:", "column 9", "expected an empty column"]),
        ("unknown.txt", b"hello, world\n".to_vec(), &[], &["unknown.txt:1:", "--format"]),
        ("empty.tsv", Vec::new(), &[], &["empty.tsv", "empty"]),
        ("forced.tsv", b"job0\t1\t1\t5\t0\t0\n".to_vec(), &["--format", "rumen"], &["forced.tsv:1:1"]),
        (
            "type.json",
            br#"{"jobID": "j", "submitTime": 1, "mapTasks": [{"startTime": "soon", "attempts": []}]}"#.to_vec(),
            &[],
            &["type.json:1:", "mapTasks[0].startTime"],
        ),
        (
            "rumen-topology-as-sls.json",
            RUMEN_TOPOLOGY.as_bytes().to_vec(),
            &["--format", "topology"],
            &["missing field `rack`", "--format rumen-topology"],
        ),
        (
            "deeper.json",
            br#"{"name": "<root>", "children": [{"name": "dc", "children": [{"name": "r", "children": [{"name": "h"}]}]}]}"#.to_vec(),
            &[],
            &["deeper.json:1:", "children[0].children[0].children", "to be a leaf"],
        ),
    ];
    for (name, content, extra, wants) in cases {
        let (code, stderr) = inspect_bad(name, &content, extra);
        assert_eq!(code, 2, "{name}: exit code; stderr: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: one line, got: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        for want in wants {
            assert!(stderr.contains(want), "{name}: `{want}` not in: {stderr}");
        }
    }
}

/// A Rumen topology as its `TopologyBuilder` writes one (hand-written: two racks, three hosts).
const RUMEN_TOPOLOGY: &str = r#"{
  "name" : "<root>",
  "children" : [ {
    "name" : "194.6.129",
    "children" : [ { "name" : "cluster1040.example.com", "children" : null },
                   { "name" : "cluster1041.example.com", "children" : null } ]
  }, {
    "name" : "194.6.130",
    "children" : [ { "name" : "cluster1100.example.com", "children" : null } ]
  } ]
}
"#;

#[test]
fn a_rumen_topology_is_detected_and_read_as_racks_and_hosts() {
    let dir = std::env::temp_dir().join(format!("yard-test-{}-rumen-topology", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("topology.json");
    std::fs::write(&path, RUMEN_TOPOLOGY).unwrap();
    let v = inspect_json(path.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(v["format"], "rumen-topology", "{v}");
    assert_eq!(
        (&v["racks"], &v["nodes"], &v["jobs"]),
        (&json!(2), &json!(3), &json!(0)),
        "{v}"
    );
}
