//! The rm fails closed on storage (issue 28): a real `yard rm` whose state database is on a
//! full disk (a 1.2 MB tmpfs, mostly filled) or turns read-only under it (`chattr +i` on an ext4 image)
//! refuses every change with a 503 naming the reason, says so in its health, puts back the
//! change whose write failed, notices by itself when room or write access returns, and after a
//! restart (SIGKILL, and SIGTERM) has every acknowledged submission and none it refused.
//! Needs root (mounts); skipped with a message where the machine refuses.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

mod support;
use support::*;

/// A mount, unmounted when dropped (lazily if still busy), even when the test fails.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .args(["-R", "-i"])
            .arg(&self.0)
            .status();
        let quiet = |args: &[&str]| {
            Command::new("umount")
                .args(args)
                .arg(&self.0)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !quiet(&[]) {
            quiet(&["-l"]);
        }
    }
}

/// Runs `program args`; `Err` with its complaint if it cannot or fails.
fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn mount(dir: &Path, args: &[&str]) -> Option<Mount> {
    std::fs::create_dir_all(dir).unwrap();
    let mut all = args.to_vec();
    all.push(dir.to_str().unwrap());
    match run("mount", &all) {
        Ok(()) => Some(Mount(dir.to_owned())),
        Err(e) => {
            eprintln!("skipped: this machine refuses the mount the test needs (root?): {e}");
            None
        }
    }
}

/// A live rm keeping its state in `dir/rm.db`, its client and its URL.
struct Rm {
    daemon: Daemon,
    url: String,
    client: Client,
}

fn start_rm(dir: &Path, profiles: &Path) -> Rm {
    let daemon = rm_in(dir, &["--profiles-db", profiles.to_str().unwrap()]);
    let url = format!("http://{}", daemon.addr);
    let client = admin_client(&url);
    Rm {
        daemon,
        url,
        client,
    }
}

impl Rm {
    fn send(&self, request: reqwest::blocking::RequestBuilder) -> (StatusCode, Value) {
        let response = request.send().unwrap();
        let status = response.status();
        (status, response.json().unwrap_or(Value::Null))
    }

    fn new_id(&self) -> (StatusCode, Option<String>) {
        let (status, v) = self.send(
            self.client
                .post(format!("{}/ws/v1/cluster/apps/new-application", self.url)),
        );
        (status, v["application-id"].as_str().map(str::to_owned))
    }

    fn fresh_id(&self) -> String {
        let (status, id) = self.new_id();
        assert_eq!(status, StatusCode::OK);
        id.unwrap()
    }

    /// A submission of 20 KB, so each needs fresh room in the database.
    fn submit(&self, id: &str) -> (StatusCode, Value) {
        let command = format!("true {}", "x".repeat(20_000));
        self.send(
            self.client
                .post(format!("{}/ws/v1/cluster/apps", self.url))
                .json(&json!({"application-id": id, "application-name": "durable",
                    "am-container-spec": {"commands": {"command": command}}})),
        )
    }

    fn kill(&self, id: &str) -> StatusCode {
        self.send(
            self.client
                .put(format!("{}/ws/v1/cluster/apps/{id}/state", self.url))
                .json(&json!({"state": "KILLED"})),
        )
        .0
    }

    fn state(&self, id: &str) -> (StatusCode, Value) {
        let (status, v) = self.send(
            self.client
                .get(format!("{}/ws/v1/cluster/apps/{id}", self.url)),
        );
        (status, v["app"]["state"].clone())
    }

    fn health(&self) -> (StatusCode, Value) {
        self.send(self.client.get(format!("{}/ws/v1/yard/health", self.url)))
    }
}

/// After a restart: every acknowledged submission is there (the first one killed), the refused
/// one is not.
fn check_after_restart(rm: &Rm, acknowledged: &[String], refused: &str, how: &str) {
    assert_eq!(rm.health().0, StatusCode::OK);
    for (i, id) in acknowledged.iter().enumerate() {
        let (status, state) = rm.state(id);
        assert_eq!(status, StatusCode::OK, "{id}, acknowledged, lost by {how}");
        if i == 0 {
            assert_eq!(state, json!("KILLED"), "{id} after {how}");
        }
    }
    assert_eq!(
        rm.state(refused).0,
        StatusCode::NOT_FOUND,
        "{refused} was refused but is there after {how}"
    );
}

/// The scenario, over a fault that `arm` starts (after three acknowledged submissions),
/// `settle` completes once a write has failed, and `mend` ends; `strict` when the fault
/// refuses every write, however small.
fn fails_closed_and_recovers(
    name: &str,
    strict: bool,
    dir: &Path,
    arm: impl Fn(),
    settle: impl Fn(),
    mend: impl Fn(),
) {
    let profiles = work_dir(&format!("{name}-profiles")).join("profiles.db");
    let mut rm = start_rm(dir, &profiles);
    let mut acknowledged = Vec::new();
    for _ in 0..3 {
        let id = rm.fresh_id();
        assert_eq!(rm.submit(&id).0, StatusCode::ACCEPTED);
        acknowledged.push(id);
    }
    let spare = rm.fresh_id();

    arm();
    // Submit until a write fails: the first 503.
    let mut refused = None;
    for _ in 0..200 {
        let id = rm.fresh_id();
        let (status, why) = rm.submit(&id);
        if status == StatusCode::ACCEPTED {
            acknowledged.push(id);
            continue;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
        eprintln!(
            "{name}: refused after {} acknowledged: {why}",
            acknowledged.len()
        );
        refused = Some(id);
        break;
    }
    let refused = refused.expect("a write failed");
    settle();
    assert_eq!(
        rm.state(&refused).0,
        StatusCode::NOT_FOUND,
        "the refused submission is not kept in memory"
    );

    if strict {
        // Every change is refused until the fault ends, and health says why. (Watched for
        // three probe intervals: the probe must not find a failing store healthy.)
        let watched = Instant::now();
        while watched.elapsed() < Duration::from_secs(3) {
            let (status, health) = rm.health();
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");
            assert!(health["detail"].is_string(), "the reason: {health}");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(rm.new_id().0, StatusCode::SERVICE_UNAVAILABLE);
        let (status, why) = rm.submit(&spare);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
        assert!(why.to_string().contains("accepts no changes"), "{why}");
        assert_eq!(rm.kill(&acknowledged[0]), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(rm.state(&acknowledged[0]).1, json!("ACCEPTED"));
    } else {
        // A full disk may still take a small write (SQLite reuses the room its failed one
        // took in the WAL), which the probe then finds healthy: honest, as that write is
        // saved. A submission is not small: over three probe intervals, each is refused.
        let watched = Instant::now();
        while watched.elapsed() < Duration::from_secs(3) {
            let (status, why) = rm.submit(&spare);
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{why}");
            assert_eq!(rm.state(&spare).0, StatusCode::NOT_FOUND);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    // The fault ends: the rm finds out by itself, with no request and no restart.
    mend();
    eventually("the rm healthy again by itself", || {
        (rm.health().0 == StatusCode::OK).then_some(())
    });
    assert_eq!(rm.submit(&spare).0, StatusCode::ACCEPTED);
    acknowledged.push(spare);
    for _ in 0..3 {
        let id = rm.fresh_id();
        assert_eq!(rm.submit(&id).0, StatusCode::ACCEPTED);
        acknowledged.push(id);
    }
    // 202, not 200: the refused kill did not leave it KILLED.
    assert_eq!(rm.kill(&acknowledged[0]), StatusCode::ACCEPTED);

    // SIGKILL, then SIGTERM: nothing acknowledged lost, nothing refused there.
    let pid = rm.daemon.child.id().to_string();
    run("kill", &["-KILL", &pid]).unwrap();
    let _ = rm.daemon.child.wait();
    drop(rm);
    let mut rm = start_rm(dir, &profiles);
    check_after_restart(&rm, &acknowledged, &refused, "SIGKILL");
    for _ in 0..2 {
        let id = rm.fresh_id();
        assert_eq!(rm.submit(&id).0, StatusCode::ACCEPTED);
        acknowledged.push(id);
    }
    terminate(&mut rm.daemon);
    drop(rm);
    let rm = start_rm(dir, &profiles);
    check_after_restart(&rm, &acknowledged, &refused, "SIGTERM");
    drop(rm);
    let _ = std::fs::remove_dir_all(profiles.parent().unwrap());
}

#[test]
fn a_full_disk_under_a_running_rm_fails_closed_and_it_recovers_when_room_returns() {
    let work = work_dir("yard-full-disk");
    let dir = work.join("state");
    let Some(mounted) = mount(&dir, &["-t", "tmpfs", "-o", "size=1200k", "tmpfs"]) else {
        return;
    };
    let filler = dir.join("filler");
    let top_up = dir.join("top-up");
    fails_closed_and_recovers(
        "full-disk",
        false,
        &dir,
        || std::fs::write(&filler, vec![0u8; 800 * 1024]).unwrap(),
        // Whatever room the rm's failed write left (it may have given some back) is taken too.
        || {
            use std::io::Write;
            let mut f = std::fs::File::create(&top_up).unwrap();
            while f.write_all(&[0u8; 4096]).is_ok() {}
        },
        || {
            std::fs::remove_file(&filler).unwrap();
            std::fs::remove_file(&top_up).unwrap();
        },
    );
    drop(mounted);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_state_db_made_read_only_under_a_running_rm_fails_closed_and_it_recovers_when_writable() {
    // `chattr +i` on ext4 refuses writes even through descriptors already open (tmpfs's does
    // not, and Linux refuses to remount read-only under open writers).
    let work = work_dir("yard-read-only");
    let image = work.join("disk.ext4");
    let made = std::fs::File::create(&image)
        .and_then(|f| f.set_len(16 << 20))
        .map_err(|e| e.to_string())
        .and_then(|()| run("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()]));
    if let Err(e) = made {
        eprintln!("skipped: cannot make an ext4 image: {e}");
        return;
    }
    let dir = work.join("state");
    let Some(mounted) = mount(&dir, &["-o", "loop", image.to_str().unwrap()]) else {
        return;
    };
    let probe = dir.join("probe");
    std::fs::write(&probe, b"x").unwrap();
    let immutable = run("chattr", &["+i", probe.to_str().unwrap()]);
    let _ = run("chattr", &["-i", probe.to_str().unwrap()]);
    let _ = std::fs::remove_file(&probe);
    if let Err(e) = immutable {
        eprintln!("skipped: cannot make a file immutable here: {e}");
        return;
    }
    let files = || {
        ["rm.db", "rm.db-wal", ""].map(|f| {
            dir.join(f)
                .to_str()
                .unwrap()
                .trim_end_matches('/')
                .to_owned()
        })
    };
    let chattr = |flag: &str| {
        for f in files() {
            if Path::new(&f).exists() {
                run("chattr", &[flag, &f]).unwrap();
            }
        }
    };
    fails_closed_and_recovers(
        "read-only",
        true,
        &dir,
        || chattr("+i"),
        || {},
        || chattr("-i"),
    );
    drop(mounted);
    let _ = std::fs::remove_dir_all(&work);
}
