//! Containers as OS processes: each runs in its own process group, in its own working
//! directory, with its own environment and its stdout and stderr captured to files; it is
//! stopped with SIGTERM and, after a grace period, SIGKILL to the whole group; its exit is
//! reported as a code or a signal. Where the host offers cgroup v2 with the cpu and memory
//! controllers delegated, each container also gets a cgroup with its limits; where it does
//! not, [`Cgroups::detect`] says why and containers run without limits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::data::plain_name;

/// What to run in a container.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSpec {
    /// The container id; also its directory's name (checked to be a plain file name).
    pub id: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub memory_mb: u64,
    pub vcores: u32,
}

/// How a container's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "container id {0:?} cannot name a directory: use at most 200 letters, digits, '_', '-' and '.'"
    )]
    BadId(String),
    #[error("container {0} has no command to run")]
    NoCommand(String),
    #[error("container {id}: cannot prepare {path}: {source}")]
    Prepare {
        id: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("container {id}: cannot start {program:?}: {source}")]
    Spawn {
        id: String,
        program: String,
        source: std::io::Error,
    },
}

/// Whether containers get cgroup v2 limits on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cgroups {
    /// Limits go into child cgroups of this directory.
    Available(PathBuf),
    /// No limits; the reason, for the log.
    Unavailable(String),
}

impl Cgroups {
    /// Looks for a cgroup v2 hierarchy under `root` (normally `/sys/fs/cgroup`) where the
    /// nodemanager may create children with the cpu and memory controllers.
    pub fn detect(root: &Path) -> Cgroups {
        let controllers = root.join("cgroup.controllers");
        let Ok(available) = std::fs::read_to_string(&controllers) else {
            return Cgroups::Unavailable(format!(
                "{} not found: the host has no cgroup v2 hierarchy there (cgroup v1 or none); containers run without CPU and memory limits",
                controllers.display()
            ));
        };
        let missing: Vec<&str> = ["cpu", "memory"]
            .into_iter()
            .filter(|c| !available.split_whitespace().any(|a| a == *c))
            .collect();
        if !missing.is_empty() {
            return Cgroups::Unavailable(format!(
                "cgroup v2 lacks the {} controller(s); containers run without limits",
                missing.join(" and ")
            ));
        }
        let ours = root.join("yard");
        if let Err(e) = std::fs::create_dir_all(&ours) {
            return Cgroups::Unavailable(format!(
                "cannot create {}: {e}; containers run without limits",
                ours.display()
            ));
        }
        // Each level must hand the controllers down for `memory.max` and `cpu.max` to exist in
        // the containers' cgroups, two levels below `root`.
        for parent in [root, ours.as_path()] {
            if let Err(e) = std::fs::write(parent.join("cgroup.subtree_control"), "+cpu +memory") {
                return Cgroups::Unavailable(format!(
                    "cannot delegate cpu and memory below {}: {e}; containers run without limits",
                    parent.display()
                ));
            }
        }
        Cgroups::Available(ours)
    }
}

/// A container's process while it runs.
pub struct Running {
    pub id: String,
    pub dir: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// The cgroup the container runs in, if any.
    pub cgroup: Option<PathBuf>,
    /// The size its token granted (reported again when the node re-registers).
    pub memory_mb: u64,
    pub vcores: u32,
    child: Child,
    pgid: Pid,
}

/// Starts a container under `work_root/<id>/`, with `stdout` and `stderr` files there.
pub async fn launch(
    spec: &ContainerSpec,
    work_root: &Path,
    cgroups: &Cgroups,
) -> Result<Running, LaunchError> {
    if !plain_name(&spec.id) {
        return Err(LaunchError::BadId(spec.id.clone()));
    }
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| LaunchError::NoCommand(spec.id.clone()))?;
    let dir = work_root.join(&spec.id);
    let prepare = |path: &Path, source| LaunchError::Prepare {
        id: spec.id.clone(),
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|e| prepare(&dir, e))?;
    let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
    let out = std::fs::File::create(&stdout).map_err(|e| prepare(&stdout, e))?;
    let err = std::fs::File::create(&stderr).map_err(|e| prepare(&stderr, e))?;
    let child = Command::new(program)
        .args(args)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CONTAINER_ID", &spec.id)
        .envs(&spec.env)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own process group, so stopping it stops everything it started.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            id: spec.id.clone(),
            program: program.clone(),
            source,
        })?;
    let pid = child.id().map_or(0, |p| p as i32);
    let cgroup = match cgroups {
        Cgroups::Available(root) => match limit(root, spec, pid) {
            Ok(dir) => Some(dir),
            Err(e) => {
                tracing::warn!(container = %spec.id, error = %e, "cannot limit the container with a cgroup; it runs without limits");
                None
            }
        },
        Cgroups::Unavailable(_) => None,
    };
    Ok(Running {
        id: spec.id.clone(),
        dir,
        stdout,
        stderr,
        cgroup,
        memory_mb: spec.memory_mb,
        vcores: spec.vcores,
        child,
        pgid: Pid::from_raw(pid),
    })
}

/// Puts `pid` in a new cgroup with the container's memory and CPU limits.
fn limit(root: &Path, spec: &ContainerSpec, pid: i32) -> std::io::Result<PathBuf> {
    let dir = root.join(&spec.id);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("memory.max"),
        (spec.memory_mb * 1024 * 1024).to_string(),
    )?;
    // vcores × a 100 ms period of CPU per 100 ms.
    std::fs::write(
        dir.join("cpu.max"),
        format!("{} 100000", u64::from(spec.vcores.max(1)) * 100_000),
    )?;
    std::fs::write(dir.join("cgroup.procs"), pid.to_string())?;
    Ok(dir)
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

impl Running {
    /// The container's process id (its process group's id too), for telemetry.
    pub fn pid(&self) -> u32 {
        self.pgid.as_raw() as u32
    }

    /// Waits for the process to end.
    pub async fn wait(&mut self) -> std::io::Result<Exit> {
        let exit = self.child.wait().await.map(exit_of)?;
        self.end_group();
        Ok(exit)
    }

    /// Whether it has ended, without waiting.
    pub fn try_exit(&mut self) -> std::io::Result<Option<Exit>> {
        let exit = self.child.try_wait()?.map(exit_of);
        if exit.is_some() {
            self.end_group();
        }
        Ok(exit)
    }

    /// A container is over when its first process is: whatever it left running in its process
    /// group (a master's child whose shell was killed, a task's helper) is killed too, as YARN
    /// kills a container's process tree. Otherwise an orphaned master runs on beside the next
    /// attempt.
    fn end_group(&self) {
        let _ = killpg(self.pgid, Signal::SIGKILL); // ESRCH when nothing is left: fine
    }

    /// SIGTERM to the container's process group; SIGKILL to the group if it is still running
    /// after `grace`. Returns how the process ended.
    pub async fn stop(&mut self, grace: Duration) -> std::io::Result<Exit> {
        if let Some(exit) = self.try_exit()? {
            return Ok(exit);
        }
        let _ = killpg(self.pgid, Signal::SIGTERM); // it may have just ended: nothing to do then
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status.map(exit_of),
            Err(_) => {
                let _ = killpg(self.pgid, Signal::SIGKILL);
                self.wait().await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, script: &str) -> ContainerSpec {
        ContainerSpec {
            id: id.into(),
            command: vec!["/bin/sh".into(), "-c".into(), script.into()],
            env: BTreeMap::from([("GREETING".to_owned(), "hello".to_owned())]),
            memory_mb: 256,
            vcores: 1,
        }
    }

    /// Polls `cond` until it holds or a generous deadline passes (no fixed sleeps).
    async fn eventually(cond: impl Fn() -> bool) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if cond() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cond()
    }

    fn no_cgroups() -> Cgroups {
        Cgroups::Unavailable("tests".into())
    }

    #[tokio::test]
    async fn what_a_container_leaves_running_ends_with_it() {
        let root = tempfile::tempdir().unwrap();
        let mut c = launch(
            &spec("c_orphan", "sleep 600 & echo $! > child.pid; exit 0"),
            root.path(),
            &no_cgroups(),
        )
        .await
        .unwrap();
        assert_eq!(c.wait().await.unwrap(), Exit::Code(0));
        let pid: i32 = std::fs::read_to_string(root.path().join("c_orphan/child.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Gone (or a zombie awaiting its reaper): no longer running.
        let running = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.split(") ").nth(1).unwrap_or("").starts_with('Z'))
        };
        assert!(
            eventually(|| !running()).await,
            "the background sleep outlived its container"
        );
    }

    #[tokio::test]
    async fn a_container_runs_in_its_own_directory_with_its_env_and_logs() {
        let root = tempfile::tempdir().unwrap();
        let mut c = launch(
            &spec(
                "c_1",
                "echo $GREETING $CONTAINER_ID; pwd; echo oops >&2; exit 3",
            ),
            root.path(),
            &no_cgroups(),
        )
        .await
        .unwrap();
        assert!(c.pid() > 0);
        assert_eq!(c.wait().await.unwrap(), Exit::Code(3));
        let out = std::fs::read_to_string(&c.stdout).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("hello c_1"));
        let dir = std::fs::canonicalize(root.path().join("c_1")).unwrap();
        assert_eq!(lines.next().map(PathBuf::from), Some(dir));
        assert_eq!(std::fs::read_to_string(&c.stderr).unwrap(), "oops\n");
    }

    #[tokio::test]
    async fn stop_sends_sigterm_first() {
        let root = tempfile::tempdir().unwrap();
        let mut c = launch(&spec("c_2", "exec sleep 60"), root.path(), &no_cgroups())
            .await
            .unwrap();
        let exit = c.stop(Duration::from_secs(30)).await.unwrap();
        assert_eq!(exit, Exit::Signal(Signal::SIGTERM as i32));
    }

    #[tokio::test]
    async fn a_container_that_ignores_sigterm_is_killed_with_its_children() {
        let root = tempfile::tempdir().unwrap();
        // The shell ignores SIGTERM and has a child; both must go.
        let script = "trap '' TERM; sleep 60 & echo $! > child.pid; wait";
        let mut c = launch(&spec("c_3", script), root.path(), &no_cgroups())
            .await
            .unwrap();
        let pid_file = root.path().join("c_3/child.pid");
        let written = || std::fs::read_to_string(&pid_file).is_ok_and(|s| !s.trim().is_empty());
        assert!(
            eventually(written).await,
            "the container never started its child"
        );
        let exit = c.stop(Duration::from_millis(100)).await.unwrap();
        assert_eq!(exit, Exit::Signal(Signal::SIGKILL as i32));
        let child: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The child got the group's signal: gone, or a zombie waiting to be reaped by init.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .map_or(true, |s| s.contains(") Z "))
        };
        let alive = !eventually(gone).await;
        assert!(!alive, "the container's child {child} outlived it");
    }

    #[tokio::test]
    async fn bad_specs_are_refused_before_anything_runs() {
        let root = tempfile::tempdir().unwrap();
        for id in ["", "..", "a/b", "x y"] {
            let err = launch(&spec(id, "true"), root.path(), &no_cgroups())
                .await
                .err()
                .unwrap();
            assert!(matches!(err, LaunchError::BadId(_)), "{id:?}: {err}");
        }
        let empty = ContainerSpec {
            command: vec![],
            ..spec("c_4", "")
        };
        assert!(matches!(
            launch(&empty, root.path(), &no_cgroups()).await,
            Err(LaunchError::NoCommand(_))
        ));
        let missing = ContainerSpec {
            command: vec!["/no/such/program".into()],
            ..spec("c_5", "")
        };
        let err = launch(&missing, root.path(), &no_cgroups())
            .await
            .err()
            .unwrap();
        assert!(err.to_string().contains("/no/such/program"), "{err}");
    }

    #[test]
    fn cgroup_detection_says_why_it_falls_back() {
        let root = tempfile::tempdir().unwrap();
        match Cgroups::detect(root.path()) {
            Cgroups::Unavailable(why) => assert!(
                why.contains("cgroup.controllers") && why.contains("without"),
                "{why}"
            ),
            other => panic!("an empty directory is no cgroup hierarchy: {other:?}"),
        }
        std::fs::write(root.path().join("cgroup.controllers"), "cpu io").unwrap();
        let Cgroups::Unavailable(why) = Cgroups::detect(root.path()) else {
            panic!()
        };
        assert!(why.contains("memory"), "{why}");
        // On this machine: whatever the host offers, detection answers without panicking.
        let _ = Cgroups::detect(Path::new("/sys/fs/cgroup"));
    }

    /// What the launcher writes into a cgroup v2 tree, checked on a stand-in directory (this
    /// host has cgroup v1, so the kernel's enforcement itself is not exercised here).
    #[tokio::test]
    async fn on_cgroup_v2_a_container_gets_its_limits_and_its_process() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("cgroup.controllers"),
            "cpuset cpu io memory pids",
        )
        .unwrap();
        let cgroups = Cgroups::detect(root.path());
        let Cgroups::Available(ours) = &cgroups else {
            panic!("a hierarchy with cpu and memory is usable: {cgroups:?}")
        };
        for level in [root.path(), ours.as_path()] {
            let delegated = std::fs::read_to_string(level.join("cgroup.subtree_control")).unwrap();
            assert_eq!(delegated, "+cpu +memory", "{}", level.display());
        }
        let mut c = spec("container_e1_2_0003_01_000004", "exec sleep 60");
        (c.memory_mb, c.vcores) = (256, 2);
        let work = tempfile::tempdir().unwrap();
        let mut running = launch(&c, work.path(), &cgroups).await.unwrap();
        let dir = running.cgroup.clone().expect("a cgroup");
        assert_eq!(dir, ours.join(&c.id));
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(read("memory.max"), (256u64 << 20).to_string());
        assert_eq!(read("cpu.max"), "200000 100000");
        assert_eq!(read("cgroup.procs"), running.pid().to_string());
        running.stop(Duration::from_secs(1)).await.unwrap();
    }
}
