//! Promises about the repository itself: shipped traces are the upstream bytes, and CI runs
//! exactly the test command the README gives.

use std::path::Path;

use sha2::{Digest, Sha256};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `traces/README.md` table row naming a shipped file carries its SHA-256; check them all.
#[test]
fn shipped_traces_match_the_documented_sha256() {
    let readme = read("traces/README.md");
    let mut checked = 0;
    for line in readme.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line
            .split('|')
            .map(|c| c.trim().trim_matches('`'))
            .collect();
        let Some(sha) = cells
            .iter()
            .find(|c| c.len() == 64 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        else {
            continue;
        };
        let file = root().join("traces").join(cells[1]);
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(&digest, sha, "{} differs from upstream", cells[1]);
        checked += 1;
    }
    assert_eq!(
        checked, 15,
        "every shipped trace file has a documented digest"
    );
}

/// The README's test command, as the one line in its second fenced block, is what CI runs.
#[test]
fn ci_runs_the_readme_test_command() {
    let readme = read("README.md");
    let blocks: Vec<&str> = readme.split("```").skip(1).step_by(2).collect();
    assert!(blocks.len() >= 2, "README opens with two command blocks");
    let command = blocks[1]
        .lines()
        .skip(1) // the info string, e.g. `sh`
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .expect("a test command")
        .trim();
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run must call `{command}` as README.md says"
    );
}

/// The policies are sans-IO by construction: the crates that hold them (`yard-cluster`,
/// `yard-appmaster`, `yard-sim`) depend on nothing that does IO or keeps time (no async runtime,
/// no HTTP, no database, nor the daemons' crates), and their sources never name the clock (nor,
/// for the policies, files or sockets). The processes around them live in `yard-rm` and
/// `yard-appmaster-live` (as `quinn` around `quinn-proto`).
#[test]
fn the_policy_crates_depend_on_nothing_that_does_io() {
    let io_crates = [
        "tokio",
        "reqwest",
        "axum",
        "hyper",
        "sqlx",
        "sysinfo",
        "mio",
        "async-std",
    ];
    for manifest in [
        "cluster/Cargo.toml",
        "appmaster/Cargo.toml",
        "sim/Cargo.toml",
    ] {
        let text = read(manifest);
        let deps = text
            .split("[dependencies]")
            .nth(1)
            .expect("a [dependencies] table")
            .split("\n[")
            .next()
            .unwrap();
        for line in deps.lines() {
            let name = line.split(['=', ' ', '.']).next().unwrap_or("").trim();
            assert!(
                !io_crates.contains(&name) && !name.ends_with("-live") && name != "yard-rm",
                "{manifest} depends on {name}: the policies must stay free of IO"
            );
        }
    }
    // The policies and apps: no clock, no global randomness, no files, no network. The
    // simulator (an adapter that writes its reports) may write files but keeps no clock.
    let everything = &[
        "Instant::now",
        "SystemTime::now",
        "thread_rng",
        "std::net",
        "std::fs",
    ][..];
    for (dir, banned) in [
        ("cluster/src", everything),
        ("appmaster/src", everything),
        ("sim/src", &everything[..3]),
    ] {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for clock in banned {
                        assert!(
                            !text.contains(clock),
                            "{} uses {clock}: policies take time and randomness from their caller",
                            path.display()
                        );
                    }
                }
            }
        }
    }
}

/// Test helpers other crates' tests use (`yard_rm::metrics::value_of`, `sum_of`) sit behind
/// `yard-rm`'s `testing` feature, and only dev-dependencies enable it: a production build of
/// any crate does not carry them.
#[test]
fn test_helpers_are_behind_a_feature_only_dev_dependencies_enable() {
    assert!(
        read("rm/Cargo.toml").contains("\ntesting = []\n"),
        "yard-rm has a `testing` feature"
    );
    let members = [
        "",
        "workload/",
        "wire/",
        "cluster/",
        "rm/",
        "nodemanager/",
        "appmaster/",
        "appmaster/live/",
        "profiles/",
        "sim/",
    ];
    for member in members {
        let manifest = format!("{member}Cargo.toml");
        let mut section = "";
        for line in read(&manifest).lines() {
            if line.starts_with('[') {
                section = line;
            } else if line.contains("\"testing\"") {
                assert_eq!(section, "[dev-dependencies]", "{manifest}: {line}");
            }
        }
    }
    let metrics = read("rm/src/metrics.rs");
    for helper in ["pub fn value_of(", "pub fn sum_of("] {
        let at = metrics.find(helper).expect(helper);
        assert!(
            metrics[..at]
                .trim_end()
                .ends_with("#[cfg(any(test, feature = \"testing\"))]"),
            "{helper} is behind `testing`"
        );
    }
}
