//! Shared scans, live (issue 20 item 4): two word counts over one dataset on one scan. The
//! second joins mid-cycle; every block both still need is read once for both, the blocks it
//! missed are read again after the wrap-around, and both answers are exact.

use std::time::Duration;

use serde_json::Value;

mod support;
use support::*;

/// `yard submit wordcount --shared-scan … --no-wait`: the application's id.
fn shared_wordcount(c: &Cluster) -> String {
    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "text",
        "--shared-scan",
        // One read at a time, each at least a second: the scan is slow enough to join.
        "--max-containers",
        "1",
        "--map-min-seconds",
        "1",
        "--param",
        "top=20",
        "--no-wait",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_owned()
}

fn scans(c: &Cluster) -> Vec<Value> {
    get(&format!("{}/ws/v1/yard/mapreduce/scans", c.url))["scans"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn two_word_counts_share_one_scan_reading_each_block_once_for_both() {
    let tmp = work_dir("yard-shared-scan");
    // Masters may hold half the cluster: both jobs' masters run at once.
    let c = cluster_with(&tmp, &["--master-share", "0.5"]);
    let file = put_dataset(&c.url, &tmp, "text", "text", "1536KiB", "128KiB", 2, 7);
    let (total, counts) = exact_counts(&file);

    let first = shared_wordcount(&c);
    // The first job hosts the scan; the second is submitted once two blocks are read.
    let host = eventually_for("the scan's host", Duration::from_secs(120), || {
        scans(&c).into_iter().find(|s| s["host"] == first.as_str())
    });
    assert_eq!(host["dataset"], "text", "{host}");
    let status_url = format!("{}/status", host["url"].as_str().unwrap());
    eventually_for("two blocks read", Duration::from_secs(120), || {
        let status = get(&status_url);
        (numbers(&status["blockReads"]).iter().sum::<u64>() >= 2).then_some(())
    });
    let second = shared_wordcount(&c);

    let answer = |id: &str| {
        eventually_for("the answer", Duration::from_secs(300), || {
            let view = get(&format!("{}/ws/v1/yard/apps/{id}", c.url));
            view["app"]["answer"]
                .is_object()
                .then(|| view["app"].clone())
        })
    };
    let (a, b) = (answer(&first), answer(&second));
    for app in [&a, &b] {
        let answer = &app["answer"];
        assert_eq!(app["processedFraction"], 1.0, "{app}");
        assert_eq!(answer["exact"], true, "{answer}");
        assert_eq!(answer["words"]["observed"], total, "{answer}");
        for row in answer["top"].as_array().unwrap() {
            let word = row["word"].as_str().unwrap();
            assert_eq!(row["observed"], counts[word], "{word}: {answer}");
        }
        assert_eq!(answer["job"]["policy"], "full", "{answer}");
        assert_eq!(
            answer["job"]["sharedScan"]["host"],
            first.as_str(),
            "{answer}"
        );
    }
    // The host read its blocks in order; the second job joined mid-cycle at block j and was
    // read j, j+1, …, then after the wrap-around the blocks it had missed.
    let (scan_a, scan_b) = (
        &a["answer"]["job"]["sharedScan"],
        &b["answer"]["job"]["sharedScan"],
    );
    // Blocks end at line ends: about 12 of 128 KiB.
    let blocks = a["answer"]["job"]["maps"].as_u64().unwrap();
    assert!(blocks >= 12, "{blocks} blocks");
    assert_eq!(
        numbers(&scan_a["blocksReadForIt"]),
        (0..blocks).collect::<Vec<_>>(),
        "{scan_a}"
    );
    let j = scan_b["joinedAtBlock"].as_u64().unwrap();
    assert!((2..blocks).contains(&j), "joined at {j}: {scan_b}");
    let cyclic: Vec<u64> = (j..blocks).chain(0..j).collect();
    assert_eq!(numbers(&scan_b["blocksReadForIt"]), cyclic, "{scan_b}");
    // The second job's view is the scan's last: each block it shared was read once for both,
    // each block it missed once more for it alone: blocks + j reads, against 2 × blocks
    // unshared.
    let reads = numbers(&scan_b["blockReads"]);
    let expected: Vec<u64> = (0..blocks).map(|b| if b < j { 2 } else { 1 }).collect();
    assert_eq!(reads, expected, "{scan_b}");
    let size = std::fs::metadata(&file).unwrap().len();
    let bytes = scan_b["bytesRead"].as_u64().unwrap();
    assert!(
        bytes > size && bytes < 2 * size,
        "{bytes} bytes read of {size}: {scan_b}"
    );

    // Both applications end, and the scan with them: the dataset is free for the next host.
    for id in [&first, &second] {
        eventually_for("the job's end", Duration::from_secs(60), || {
            let view = get(&format!("{}/ws/v1/yard/apps/{id}", c.url));
            (view["app"]["finalStatus"] == "SUCCEEDED").then_some(())
        });
    }
    assert!(scans(&c).is_empty(), "{:?}", scans(&c));
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_shared_scan_under_another_policy_or_without_a_dataset_is_refused_with_what_to_fix() {
    for (args, says) in [
        (
            vec![
                "submit",
                "wordcount",
                "--input",
                "text",
                "--shared-scan",
                "--policy",
                "aria",
            ],
            "runs under full",
        ),
        (
            vec!["submit", "synthetic", "--maps", "2", "--shared-scan"],
            "no scan to share",
        ),
    ] {
        let (code, _, err) = yard(&[&args[..], &["--rm", "http://127.0.0.1:9"]].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
