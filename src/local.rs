//! A local cluster: an rm and N nodemanagers on 127.0.0.1, as child processes of this one,
//! stopped (nodemanagers first, so they stop their containers, then the rm) when dropped.
//! `yard up` runs one in the foreground; `yard demo`, `yard replay` and `yard batch run` start
//! one for their jobs ([`Target`]: theirs, or a running rm's).

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::client::{Client, Rm};
use crate::sim::BadInput;

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
    /// Nodemanager `i` listens on this port + `i`; `None`: any free one each.
    pub(crate) nm_base_port: Option<u16>,
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
            let port = shape
                .nm_base_port
                .map_or(0, |base| base.saturating_add(i as u16));
            let args: Vec<String> = [
                "nm",
                "--rm",
                &url,
                "--bind",
                &format!("127.0.0.1:{port}"),
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

/// Where a command's jobs run (`yard replay`, `yard batch run`): a running rm (`--rm URL`), or
/// a local cluster the command started and stops at the end.
pub(crate) enum Target {
    Running {
        url: String,
        client: Client,
    },
    Local {
        cluster: LocalCluster,
        /// Its state and logs, removed at the end unless kept ([`Target::finish`]).
        dir: PathBuf,
    },
}

impl Target {
    /// The running rm at `url`, which must be of this host (yard's clusters are of one).
    pub(crate) fn running(url: &str, token_file: Option<PathBuf>) -> Result<Target> {
        let url = url.trim_end_matches('/').to_owned();
        check_loopback(&url)?;
        let client = Client::new(&Rm {
            rm: url.clone(),
            token_file,
        })?;
        Ok(Target::Running { url, client })
    }

    /// A local cluster for `command`'s jobs: `nodes` nodemanagers of `vcores` (memory for every
    /// container to be a master's: vcores bind), the rm on a free port with `rm_args`, in
    /// `yard-<command>-<pid>` under the temp directory; a spinner on stderr while it starts.
    /// Where it does not start, its logs are kept and said.
    pub(crate) fn start_local(
        command: &str,
        nodes: u32,
        vcores: u32,
        heartbeat_ms: u64,
        rm_args: Vec<String>,
    ) -> Result<Target> {
        let dir = std::env::temp_dir().join(format!("yard-{command}-{}", std::process::id()));
        let shape = Shape {
            nodes,
            memory_mb: 4096.max(u64::from(vcores) * 512),
            vcores,
            heartbeat_ms,
            rm_bind: "127.0.0.1:0".into(),
            nm_base_port: None,
            rm_args,
            dir: dir.clone(),
            home: None,
        };
        let spinner =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        spinner.enable_steady_tick(Duration::from_millis(200));
        spinner.set_message(format!(
            "starting a local cluster: an rm and {nodes} nodemanagers on 127.0.0.1"
        ));
        let started = LocalCluster::start(&shape);
        spinner.finish_and_clear();
        match started {
            Ok(cluster) => Ok(Target::Local { cluster, dir }),
            Err(e) => {
                eprintln!("logs kept in {}", dir.display());
                Err(e.context("starting the local cluster"))
            }
        }
    }

    /// The rm's address.
    pub(crate) fn url(&self) -> &str {
        match self {
            Target::Running { url, .. } => url,
            Target::Local { cluster, .. } => &cluster.url,
        }
    }

    pub(crate) fn client(&self) -> &Client {
        match self {
            Target::Running { client, .. } => client,
            Target::Local { cluster, .. } => &cluster.client,
        }
    }

    /// The local cluster's directory; `None` for a running rm.
    pub(crate) fn dir(&self) -> Option<&Path> {
        match self {
            Target::Running { .. } => None,
            Target::Local { dir, .. } => Some(dir),
        }
    }

    /// Stops a local cluster and removes its directory, or keeps it (`keep`: the run failed,
    /// or was asked to) and says where. A running rm is left as it was.
    pub(crate) fn finish(self, keep: bool) {
        if let Target::Local { cluster, dir } = self {
            drop(cluster);
            match keep {
                false => {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                true => eprintln!("logs kept in {}", dir.display()),
            }
        }
    }
}

/// `--rm` must be a loopback address: yard's clusters are of one host.
pub(crate) fn check_loopback(url: &str) -> Result<()> {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    match host {
        "127.0.0.1" | "localhost" | "[::1]" => Ok(()),
        _ => Err(BadInput(format!(
            "--rm {url}: yard runs jobs on a cluster of this host; give http://127.0.0.1:PORT"
        ))
        .into()),
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
