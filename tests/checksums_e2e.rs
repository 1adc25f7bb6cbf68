//! Block checksums end to end: `yard data put` records each block's SHA-256 in the block map,
//! and a map whose local replica is damaged reads another replica with the recorded digest,
//! so the job's answer stays exact. An rm and three nodemanagers on 127.0.0.1; nothing here
//! depends on how fast the machine is.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

mod support;
use support::*;

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `yard data gen` a text file of `size`, then `yard data put NAME` it in `block`-sized blocks
/// with `replication` replicas; returns the file.
fn put_text(
    c: &Cluster,
    dir: &Path,
    name: &str,
    size: &str,
    block: &str,
    replication: u32,
) -> PathBuf {
    put_dataset(&c.url, dir, "text", name, size, block, replication, 11)
}

/// The dataset's block map as the rm lists it (`yard data ls NAME --json`).
fn block_map(c: &Cluster, name: &str) -> Vec<Value> {
    let (code, out, err) = yard(&["data", "ls", name, "--json", "--rm", &c.url]);
    assert_eq!(code, 0, "{err}");
    let map: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    map["blocks"].as_array().cloned().unwrap_or_default()
}

/// Where nodemanager `node` (`host:port`) keeps its replica of `dataset/block`.
fn replica_path(c: &Cluster, dir: &Path, node: &str, dataset: &str, block: &str) -> PathBuf {
    let i = c
        .nms
        .iter()
        .position(|nm| nm.addr == node)
        .unwrap_or_else(|| panic!("{node} is none of the test's nodemanagers"));
    dir.join(format!("nm{i}"))
        .join("data/blocks")
        .join(dataset)
        .join(block)
}

/// Changes one letter of the replica at `path` (same size, so only the digest tells); its
/// new bytes.
fn damage(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.iter().position(u8::is_ascii_lowercase).unwrap();
    bytes[at] = if bytes[at] == b'z' {
        b'y'
    } else {
        bytes[at] + 1
    };
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn data_put_records_each_blocks_sha256_and_every_replica_matches_it() {
    let tmp = work_dir("yard-checksums-put");
    let c = cluster(&tmp);
    let file = put_text(&c, &tmp, "digested", "300KiB", "64KiB", 2);
    let text = std::fs::read(&file).unwrap();

    let blocks = block_map(&c, "digested");
    assert!(blocks.len() >= 5, "{blocks:?}");
    let mut offset = 0;
    for b in &blocks {
        let len = b["bytes"].as_u64().unwrap() as usize;
        let expected = sha256_hex(&text[offset..offset + len]);
        offset += len;
        assert_eq!(b["sha256"], expected.as_str(), "{b}");
        let nodes = b["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 2, "{b}");
        for node in nodes {
            let path = replica_path(
                &c,
                &tmp,
                node.as_str().unwrap(),
                "digested",
                b["block"].as_str().unwrap(),
            );
            let replica = std::fs::read(&path).unwrap();
            assert_eq!(sha256_hex(&replica), expected, "{}", path.display());
        }
    }
    assert_eq!(offset, text.len(), "the blocks cover the file");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// What every task and master on the test's nodemanagers wrote to stderr.
fn container_logs(dir: &Path) -> String {
    let mut logs = String::new();
    for i in 0..3 {
        let Ok(entries) = std::fs::read_dir(dir.join(format!("nm{i}"))) else {
            continue;
        };
        for e in entries.flatten() {
            logs += &std::fs::read_to_string(e.path().join("stderr")).unwrap_or_default();
        }
    }
    logs
}

#[test]
fn maps_whose_local_replica_is_damaged_read_a_good_replica_and_the_count_stays_exact() {
    let tmp = work_dir("yard-checksums-fallback");
    let c = cluster(&tmp);
    // Three replicas on three nodes: every map is node-local wherever it runs.
    let file = put_text(&c, &tmp, "damaged", "1MiB", "64KiB", 3);
    let (total, counts) = exact_counts(&file);
    let blocks = block_map(&c, "damaged");
    assert!(blocks.len() >= 16, "{}", blocks.len());

    // Block i keeps its only good replica on its (i mod 3)-th node: the other two copies get
    // one letter changed (same size, so only the digest tells). A map reading block i on
    // either of those nodes finds its local copy damaged; that every map ran where its block
    // is good would be a 1 in 3¹⁶ chance at most.
    let mut damaged = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let block = b["block"].as_str().unwrap();
        let nodes: Vec<&str> = b["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(nodes.len(), 3);
        for (j, node) in nodes.iter().enumerate() {
            if j == i % 3 {
                continue;
            }
            let bytes = damage(&replica_path(&c, &tmp, node, "damaged", block));
            assert_ne!(Some(sha256_hex(&bytes).as_str()), b["sha256"].as_str());
            damaged.push(format!("block damaged/{block}"));
        }
    }

    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "damaged",
        "--deadline",
        "10m",
        "--param",
        "top=20",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "yard submit failed: {err}\n{out}");
    let app: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(app["app"]["finalStatus"], "SUCCEEDED", "{app}");
    let answer = &app["app"]["answer"];
    assert_eq!(answer["exact"], true, "{answer}");
    assert_eq!(answer["words"]["observed"], total, "{answer}");
    for row in answer["top"].as_array().unwrap() {
        let word = row["word"].as_str().unwrap();
        assert_eq!(row["observed"], counts[word], "{word}");
    }

    // The maps said which copies they refused, with both digests, and went on.
    let logs = container_logs(&tmp);
    let refused: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("is damaged: sha256 "))
        .collect();
    assert!(!refused.is_empty(), "no map met a damaged replica:\n{logs}");
    for line in &refused {
        assert!(damaged.iter().any(|d| line.contains(d.as_str())), "{line}");
        assert!(line.contains("the block map records "), "{line}");
        assert!(line.ends_with("trying the next replica"), "{line}");
    }
    assert!(!logs.contains("no replica of block"), "{logs}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A job whose only copy of a block is damaged fails: its master says why (a map failed on
/// every attempt), and the reason reaches the application's diagnostics (YARN's field) after
/// the rm's own message.
#[test]
fn a_failed_jobs_diagnostics_carry_its_masters_reason() {
    let tmp = work_dir("yard-checksums-diagnostics");
    let c = cluster(&tmp);
    put_text(&c, &tmp, "ruined", "64KiB", "64KiB", 1);
    let blocks = block_map(&c, "ruined");
    assert_eq!(blocks.len(), 1);
    let block = blocks[0]["block"].as_str().unwrap();
    let node = blocks[0]["nodes"][0].as_str().unwrap();
    damage(&replica_path(&c, &tmp, node, "ruined", block));

    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "ruined",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_ne!(code, 0, "the job cannot succeed: {out}");
    let app: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(app["app"]["finalStatus"], "FAILED", "{app}");
    let id = app["app"]["id"].as_str().unwrap();
    let diagnostics = app_diagnostics(&c.url, id);
    assert!(
        diagnostics.starts_with("the application master reported failure: ")
            && diagnostics.contains("failed 4 times"),
        "{diagnostics}\n{}",
        master_log(&tmp, id)
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
