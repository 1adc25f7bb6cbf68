//! `yard sim --experiment shared-scans` as a user runs it: the real binary, seed 004's mix and a
//! small SWIM trace with input paths, their JSON and their errors.

mod support;

use std::process::Output;

use serde_json::Value;
use support::{succeeded, yard_output as yard};

/// What a run that must succeed printed.
fn ok(out: &Output) -> String {
    succeeded(out);
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A file in a fresh directory; the directory lives as long as the returned guard.
fn file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.display().to_string())
}

#[test]
fn the_seeds_mix_prints_rows_with_ratios_to_flex() {
    let out = yard(&[
        "sim",
        "--experiment",
        "shared-scans",
        "--jobs",
        "150",
        "--seeds",
        "1",
        "--json",
    ]);
    let text = ok(&out);
    assert!(text.trim_start().starts_with("{\n  \"seed\""), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["seed"].as_u64(), Some(1));
    let rows = v["rows"].as_array().unwrap();
    // 9 correlation levels × 3 metrics × 3 policies.
    assert_eq!(rows.len(), 81);
    for row in rows {
        for key in ["policy", "workload", "metric"] {
            assert!(row[key].is_string(), "{row}");
        }
        assert!(row["mean_response_s"].as_f64().unwrap() > 0.0, "{row}");
        let ratio = row["ratio_to_flex"].as_f64().unwrap();
        match row["policy"].as_str().unwrap() {
            "flex" => assert_eq!(ratio, 1.0),
            "circumflex" | "batch" => assert!(ratio > 0.0, "{row}"),
            other => panic!("unknown policy {other}"),
        }
        assert!(
            row.get("bytes_read").is_none(),
            "bytes_read only with --trace"
        );
    }
    // The table says the same, beside the paper.
    let table = ok(&yard(&[
        "sim",
        "--experiment",
        "shared-scans",
        "--jobs",
        "100",
        "--seeds",
        "1",
    ]));
    assert!(table.contains("0.47–0.81"), "{table}");
    assert!(table.contains("### avg-response"), "{table}");
}

#[test]
fn a_trace_with_input_paths_reads_fewer_bytes_shared_than_flex() {
    // SWIM's withInputPaths shape: 8 columns and a trailing empty one. Jobs on /warehouse/a
    // overlap (1 TiB: 164 s a scan on 100 slots of 64 MiB/s).
    let tsv = "job0\t0\t0\t1099511627776\t0\t0\t/warehouse/a\t\t\n\
               job1\t20\t20\t1099511627776\t0\t0\t/warehouse/a\t/out/1\t\n\
               job2\t30\t10\t549755813888\t0\t0\t/warehouse/b\t\t\n\
               job3\t40\t10\t1099511627776\t0\t0\t/warehouse/a\t\t\n\
               job4\t50\t10\t549755813888\t0\t0\t/warehouse/b\t\t\n";
    let (_dir, trace) = file("paths.tsv", tsv);
    let text = ok(&yard(&[
        "sim",
        "--experiment",
        "shared-scans",
        "--trace",
        &trace,
        "--json",
    ]));
    let v: Value = serde_json::from_str(&text).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "3 metrics × 3 policies");
    let bytes = |policy: &str| {
        rows.iter()
            .find(|r| r["policy"] == policy && r["metric"] == "avg-response")
            .unwrap()["bytes_read"]
            .as_f64()
            .unwrap()
    };
    let tib = 1099511627776.0;
    assert!(
        (bytes("flex") - 4.0 * tib).abs() < 1.0,
        "every job reads its input"
    );
    assert!(bytes("circumflex") < bytes("flex"));
    assert!(bytes("batch") < bytes("flex"));
    let table = ok(&yard(&[
        "sim",
        "--experiment",
        "shared-scans",
        "--trace",
        &trace,
    ]));
    assert!(table.contains("bytes cut"), "{table}");
}

#[test]
fn bad_input_exits_2_and_says_what_to_fix() {
    let out = yard(&["sim", "--experiment", "shared-scan"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("shared-scans"),
        "the error lists the experiments"
    );
    let out = yard(&["sim", "--experiment", "shared-scans", "--jobs", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs"));
    let out = yard(&["sim", "--experiment", "shared-scans", "--synthetic"]);
    assert_eq!(out.status.code(), Some(2));
    let out = yard(&[
        "sim",
        "--experiment",
        "shared-scans",
        "--cluster-sizes",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = yard(&["sim", "--experiment", "makespan", "--grid"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--grid is for --experiment shared-scans")
    );
    // A trace without input paths has no datasets to share.
    let (_dir, trace) = file("bare.tsv", "job0\t0\t0\t100\t0\t0\njob1\t5\t5\t100\t0\t0\n");
    let out = yard(&["sim", "--experiment", "shared-scans", "--trace", &trace]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("input paths"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_deadline_variant_reports_three_policies_over_the_deadline_jobs() {
    let args = [
        "sim",
        "--experiment",
        "shared-scans",
        "--deadlines",
        "0.5",
        "--jobs",
        "150",
        "--seeds",
        "1",
    ];
    let v: Value = serde_json::from_str(&ok(&yard(&[&args[..], &["--json"]].concat()))).unwrap();
    assert_eq!(
        v["deadlines"]["slack_hi"].as_f64(),
        Some(3.0),
        "default 1,3"
    );
    let rows = v["rows"].as_array().unwrap();
    // 9 correlation levels and all of them together, × 3 policies.
    assert_eq!(rows.len(), 30);
    let num = |row: &Value, key: &str| row[key].as_f64().unwrap_or_else(|| panic!("{key}: {row}"));
    for row in rows {
        assert!(
            row["workload"].is_string() && row["metric"] == "avg-response",
            "{row}"
        );
        let parts = [
            "full_by_deadline_fraction",
            "partial_fraction",
            "empty_fraction",
        ];
        for key in parts.iter().chain(&["mean_processed_fraction"]) {
            assert!((0.0..=1.0).contains(&num(row, key)), "{key}: {row}");
        }
        assert!((parts.iter().map(|k| num(row, k)).sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(num(row, "other_mean_response_s") > 0.0, "{row}");
        let jobs = num(row, "deadline_jobs") + num(row, "other_jobs");
        let level_jobs = match row["workload"] == "all levels" {
            true => 9.0 * 150.0,
            false => 150.0,
        };
        assert_eq!(jobs, level_jobs, "{row}");
    }
    let of =
        |policy: &str| -> Vec<&Value> { rows.iter().filter(|r| r["policy"] == policy).collect() };
    let (flex, circ, edf) = (of("flex"), of("circumflex"), of("circumflex-edf"));
    assert_eq!((flex.len(), circ.len(), edf.len()), (10, 10, 10));
    for (c, e) in circ.iter().zip(&edf) {
        assert_eq!(c["workload"], e["workload"]);
        assert_eq!(c["deadline_jobs"], e["deadline_jobs"], "the same jobs");
    }
    // The rule is taken somewhere: CIRCUMFLEX-EDF answers differently from CIRCUMFLEX.
    let figures = |r: &Value| {
        (
            num(r, "full_by_deadline_fraction"),
            num(r, "other_mean_response_s"),
        )
    };
    assert!(circ.iter().zip(&edf).any(|(c, e)| figures(c) != figures(e)));
    // The table says which jobs each figure is over; the slack follows --deadline-factor.
    let table = ok(&yard(&[&args[..], &["--deadline-factor", "2,4"]].concat()));
    assert!(table.contains("over the deadline jobs"), "{table}");
    assert!(table.contains("U[2, 4]"), "{table}");
    assert!(table.contains("| all levels | circumflex-edf |"), "{table}");
    for bad in [
        &["sim", "--experiment", "shared-scans", "--deadlines", "0"][..],
        &["sim", "--experiment", "makespan", "--deadlines", "0.5"],
        &[
            "sim",
            "--experiment",
            "shared-scans",
            "--deadlines",
            "0.5",
            "--grid",
        ],
    ] {
        let out = yard(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--deadlines"),
            "{bad:?}"
        );
    }
}
