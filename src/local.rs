//! A local cluster: an rm and N nodemanagers on 127.0.0.1, as child processes of this one,
//! stopped (nodemanagers first, so they stop their containers, then the rm) when dropped.
//! `yard up` runs one in the foreground; `yard demo` and `yard replay` start one for their jobs.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::client::Client;

/// The daemons this process started and has not stopped, by pid, in the order they started:
/// what [`stop_started`] stops when an interrupt leaves no time for their `Drop`s.
/// `None` once [`stop_started`] began: a daemon started after that is stopped at once.
static STARTED: Mutex<Option<Vec<i32>>> = Mutex::new(Some(Vec::new()));

fn started() -> std::sync::MutexGuard<'static, Option<Vec<i32>>> {
    STARTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether [`stop_started`] has begun: an interrupt is stopping this process's daemons, so a
/// start or a request that failed meanwhile failed because of it, not on its own.
pub(crate) fn interrupted() -> bool {
    started().is_none()
}

/// Stops every daemon this process started and has not stopped, the last started first (a
/// local cluster's nodemanagers stop their containers before its rm goes), each given 10 s
/// after its SIGTERM: for a command interrupted while its local cluster runs, which exits
/// without running its `Drop`s.
pub(crate) fn stop_started() {
    use nix::sys::signal::{Signal, kill};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    let pids = started().take().unwrap_or_default();
    for pid in pids.into_iter().rev().map(nix::unistd::Pid::from_raw) {
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(WaitStatus::StillAlive) => {
                    let _ = kill(pid, Signal::SIGKILL);
                    let _ = waitpid(pid, None);
                    break;
                }
                _ => break,
            }
        }
    }
}

/// A daemon this process started; stopped (SIGTERM, then SIGKILL after 10 s) when dropped.
pub(crate) struct Daemon {
    child: Child,
    pub(crate) addr: String,
    pub(crate) log: PathBuf,
}

impl Daemon {
    /// `yard ARGS` in its own process group (a Ctrl-C at the terminal reaches only the parent,
    /// which stops its daemons in order), logging to `log`; returns once it says
    /// `listening on ADDR`.
    fn start(exe: &Path, home: Option<&Path>, args: &[String], log: &Path) -> Result<Daemon> {
        let mut command = Command::new(exe);
        command
            .args(args)
            .env(
                "YARD_LOG",
                std::env::var("YARD_LOG").unwrap_or("warn".into()),
            )
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log)?)
            .process_group(0);
        if let Some(home) = home {
            command.env("YARD_HOME", home);
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("starting yard {}", args.join(" ")))?;
        match started().as_mut() {
            Some(pids) => pids.push(child.id() as i32),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("interrupted: yard {} not started", args.join(" "));
            }
        }
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .context("reading the daemon's address")?;
        let Some(addr) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            let said = std::fs::read_to_string(log).unwrap_or_default();
            bail!(
                "yard {} did not start: {}",
                args.join(" "),
                said.lines().last().unwrap_or("(no output)").trim()
            );
        };
        Ok(Daemon {
            addr: addr.to_owned(),
            log: log.to_owned(),
            child,
        })
    }

    /// Whether it has exited (and how), without waiting.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let raw = self.child.id() as i32;
        if let Some(pids) = started().as_mut() {
            pids.retain(|p| *p != raw);
        }
        let pid = nix::unistd::Pid::from_raw(raw);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a local cluster is made of.
pub(crate) struct Shape {
    pub(crate) nodes: u32,
    pub(crate) memory_mb: u64,
    pub(crate) vcores: u32,
    pub(crate) heartbeat_ms: u64,
    /// Where the rm listens (port 0: any free one).
    pub(crate) rm_bind: String,
    /// More flags for the rm (`--scheduler edf`, `--overload-classifier on`, …).
    pub(crate) rm_args: Vec<String>,
    /// State, logs and the nodemanagers' work directories.
    pub(crate) dir: PathBuf,
    /// The daemons' `YARD_HOME` (where the rm leaves its credentials); `None`: the user's.
    pub(crate) home: Option<PathBuf>,
}

pub(crate) struct LocalCluster {
    /// Dropped first: a nodemanager stops its containers before the rm goes.
    pub(crate) nms: Vec<Daemon>,
    pub(crate) rm: Daemon,
    pub(crate) url: String,
    pub(crate) client: Client,
}

impl LocalCluster {
    /// Starts the rm, then the nodemanagers, and waits (up to 30 s) until every node runs.
    pub(crate) fn start(shape: &Shape) -> Result<LocalCluster> {
        let exe = std::env::current_exe().context("cannot find the yard binary")?;
        std::fs::create_dir_all(&shape.dir)
            .with_context(|| format!("creating {}", shape.dir.display()))?;
        let home = shape.home.as_deref();
        let dir = |name: &str| shape.dir.join(name).display().to_string();
        let mut rm_args: Vec<String> = vec![
            "rm".into(),
            "--bind".into(),
            shape.rm_bind.clone(),
            "--state-db".into(),
            dir("rm.db"),
            "--profiles-db".into(),
            dir("profiles.db"),
        ];
        rm_args.extend(shape.rm_args.iter().cloned());
        let rm = Daemon::start(&exe, home, &rm_args, &shape.dir.join("rm.log"))?;
        let url = format!("http://{}", rm.addr);
        let mut nms = Vec::new();
        for i in 0..shape.nodes {
            let args: Vec<String> = [
                "nm",
                "--rm",
                &url,
                "--bind",
                "127.0.0.1:0",
                "--heartbeat-ms",
                &shape.heartbeat_ms.to_string(),
                "--work-dir",
                &dir(&format!("nm{i}")),
                "--memory-mb",
                &shape.memory_mb.to_string(),
                "--vcores",
                &shape.vcores.to_string(),
            ]
            .map(String::from)
            .to_vec();
            let log = shape.dir.join(format!("nm{i}.log"));
            nms.push(Daemon::start(&exe, home, &args, &log)?);
        }
        let token = match home {
            Some(home) => yard_rm::credentials::find_local_in(home, &url),
            None => yard_rm::credentials::find_local(&url),
        }
        .map(|c| c.token);
        let client = Client::with_token(&url, token);
        let cluster = LocalCluster {
            nms,
            rm,
            url,
            client,
        };
        let started = Instant::now();
        while cluster.client.running_nodes().map_or(0, |n| n.len()) < shape.nodes as usize {
            if started.elapsed() > Duration::from_secs(30) {
                bail!(
                    "the nodemanagers did not join the rm in 30 s (logs in {})",
                    shape.dir.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(cluster)
    }

    /// A daemon that has exited by itself: its log and how it ended.
    pub(crate) fn exited(&mut self) -> Option<(PathBuf, std::process::ExitStatus)> {
        std::iter::once(&mut self.rm)
            .chain(self.nms.iter_mut())
            .find_map(|d| d.exited().map(|s| (d.log.clone(), s)))
    }
}

/// Ctrl-C and SIGTERM, heard from the start, so that a local cluster is stopped (its daemons
/// run in their own process groups and do not hear the terminal's Ctrl-C). Registered here,
/// before anything starts: a Ctrl-C from then on is heard.
pub(crate) fn stop_channel() -> Result<mpsc::Receiver<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, rx) = mpsc::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut term, mut int) = {
        let _in = runtime.enter();
        (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
        )
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
            let _ = tx.send(());
        })?;
    Ok(rx)
}
