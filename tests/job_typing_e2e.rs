//! Job typing end to end (issue 17 item 2, seed 002 eq. 1–2): the first run of a job kind types
//! its map and reduce part by its first finished map and reduce and stores the type; the next
//! run starts typed (no probes) and its allocate requests carry the type. Nothing here depends
//! on how fast the machine is: which bound a part gets is read from the store, never assumed.

use std::path::Path;

use serde_json::Value;
use yard_appmaster::typing::{DEFAULT_DISK_RATE_BYTES_PER_S, KindType, PartType};
use yard_cluster::ids::Bound;

mod support;
use support::*;

const KIND: &str = "wordcount@text";

/// `yard submit wordcount --input text --policy full --json`: yard's view of the finished app.
fn wordcount(c: &Cluster) -> Value {
    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "text",
        "--policy",
        "full",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "yard submit failed: {err}\n{out}");
    let app: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(app["app"]["finalStatus"], "SUCCEEDED", "{app}");
    app["app"].clone()
}

fn stored_type(profiles: &Path) -> KindType {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            yard_profiles::ProfileStore::open(profiles)
                .await
                .unwrap()
                .load_type(KIND)
                .await
                .unwrap()
        })
}

/// The part is typed by eq. 2 from what it stored, and the answer shows the same.
fn consistent(part: &PartType, shown: &Value, from_store: bool) {
    let q = (part.probe.input_bytes + part.probe.output_bytes) / part.probe.seconds;
    assert!((q - part.demand).abs() <= 1e-9 * q.max(1.0), "{part:?}");
    let bound = if part.demand < part.disk_rate {
        Bound::Cpu
    } else {
        Bound::Io
    };
    assert_eq!(part.bound, bound, "{part:?}");
    assert!(part.disk_rate > 0.0, "{part:?}");
    if part.rate_source.name() == "default" {
        assert_eq!(part.disk_rate, DEFAULT_DISK_RATE_BYTES_PER_S);
    }
    assert_eq!(shown["bound"], part.bound.name(), "{shown}");
    assert_eq!(shown["diskRateSource"], part.rate_source.name(), "{shown}");
    assert_eq!(shown["diskRateBytesPerS"], part.disk_rate, "{shown}");
    assert_eq!(shown["recordedMs"], part.recorded_ms, "{shown}");
    assert_eq!(shown["fromStore"], from_store, "{shown}");
}

#[test]
fn a_kinds_first_run_types_it_and_the_next_run_starts_typed_and_tells_the_rm() {
    let tmp = work_dir("yard-job-typing");
    let c = cluster(&tmp);
    put_dataset(&c.url, &tmp, "text", "text", "512KiB", "128KiB", 2, 7);
    assert_eq!(stored_type(&c.profiles), KindType::default(), "a new kind");

    // The first run: its first map and first reduce are the probes.
    let first = wordcount(&c);
    let id = first["id"].as_str().unwrap().to_owned();
    let shown = &first["answer"]["job"]["jobType"];
    let typed = stored_type(&c.profiles);
    eprintln!("{KIND}: {}", typed.describe());
    let (map, reduce) = (
        typed.map.expect("the map part is typed"),
        typed.reduce.expect("the reduce part is typed"),
    );
    consistent(&map, &shown["map"], false);
    consistent(&reduce, &shown["reduce"], false);
    assert_eq!(shown["summary"], typed.describe(), "{shown}");
    let log = master_log(&tmp, &id);
    assert!(log.contains(" is the map probe ("), "{log}");
    assert!(log.contains(" is the reduce probe ("), "{log}");
    if map.rate_source.name() == "default" {
        assert!(log.contains("gave no disk rate"), "{log}");
    }
    let both = format!(
        r#"allocate requests carry jobType {{"map":"{}","reduce":"{}"}}"#,
        map.bound.name(),
        reduce.bound.name()
    );

    // The second run: typed from the store before its first allocate request; no probes, and
    // the store is unchanged.
    let second = wordcount(&c);
    let id = second["id"].as_str().unwrap().to_owned();
    let shown = &second["answer"]["job"]["jobType"];
    consistent(&map, &shown["map"], true);
    consistent(&reduce, &shown["reduce"], true);
    assert_eq!(stored_type(&c.profiles), typed, "a kind keeps its type");
    let log = master_log(&tmp, &id);
    assert!(!log.contains(" probe ("), "{log}");
    let carried: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("allocate requests carry jobType"))
        .collect();
    assert_eq!(
        carried.len(),
        1,
        "one type, from the first request on: {log}"
    );
    assert!(carried[0].ends_with(&both), "{log}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
