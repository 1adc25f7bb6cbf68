//! A streaming attempt's commands (Hadoop Streaming's mapper, combiner and reducer): the
//! attempt's working directory with the job's shipped files ([`Workplace`]), each command run
//! as `sh -c` in a process group of its own that a kill of the attempt ends whole
//! ([`stop_command`]), fed from a thread, and a reducer's feed cut at a key boundary when the
//! deadline guard cuts its reduce ([`run_command_until`]).

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use yard_appmaster::apps::{CommandCut, streaming};

use super::HOLD_SLICE;

/// A streaming reduce cut by the deadline guard while its command runs stops feeding the
/// command's stdin at the next key group at least this many bytes on
/// (`streaming::group_ends`), and its pipe holds this much (Linux's default is 64 KiB): a
/// cut leaves about twice this queued for the command to read before its input ends.
const CUT_PIECE: usize = 4 << 10;
/// Once a cut closed its stdin, how long a reducer's command has to write its last lines (its
/// last group, awk's `END`) before its process group is killed and what it wrote by then is
/// the reduce's answer.
const CUT_GRACE: Duration = Duration::from_millis(500);

/// The process group of the streaming command this attempt runs now (0: none): a kill
/// from the master reaches it, not only this process (`killed`).
static COMMAND_GROUP: AtomicI32 = AtomicI32::new(0);

/// Ends the running streaming command's process group, if one runs.
pub(super) fn stop_command() {
    let group = COMMAND_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(group),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Lines of a failed command's stderr its task's failure reason carries.
const STDERR_TAIL_LINES: usize = 10;

/// A streaming attempt's working directory: `task-<attempt>` under the container's, holding
/// the job's shipped files (Hadoop's `-file`), and first on the commands' `PATH`, so that
/// `-mapper m.py -file m.py` runs the shipped script as Hadoop does. Removed when the
/// attempt is done with it.
pub(super) struct Workplace {
    dir: PathBuf,
}

impl Workplace {
    pub(super) fn new(attempt: &str, files: &[streaming::ShippedFile]) -> Result<Workplace> {
        let here = std::env::current_dir().context("the task's working directory")?;
        Workplace::under(&here, attempt, files)
    }

    fn under(base: &Path, attempt: &str, files: &[streaming::ShippedFile]) -> Result<Workplace> {
        let dir = base.join(format!("task-{attempt}"));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let place = Workplace { dir };
        for f in files {
            let bytes = f.bytes().map_err(|e| anyhow!("shipped file {e}"))?;
            let path = place.dir.join(&f.name);
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
            if f.executable {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .with_context(|| format!("making {} executable", path.display()))?;
            }
        }
        Ok(place)
    }

    /// `command` run here ([`run_command`]), with this directory first on its `PATH`.
    pub(super) fn run(
        &self,
        what: &str,
        command: &str,
        env: &[(String, String)],
        stdin: &[u8],
    ) -> Result<Vec<u8>> {
        let path = self.path()?;
        run_command(what, command, (env, &self.dir, &path), stdin)
    }

    /// [`Self::run`] for a reducer, whose feed stops at a key boundary once `cut` says so
    /// ([`run_command_until`], whose log line says how much it was given); and how much, if
    /// it was cut.
    pub(super) fn run_until(
        &self,
        what: &str,
        command: &str,
        env: &[(String, String)],
        stdin: &[u8],
        cut: Box<dyn Fn() -> bool + Send>,
    ) -> Result<(Vec<u8>, Option<CommandCut>)> {
        let path = self.path()?;
        run_command_until(what, command, (env, &self.dir, &path), stdin, Some(cut))
            .map(|(stdout, _, cut)| (stdout, cut))
    }

    /// This directory first on the commands' `PATH`.
    fn path(&self) -> Result<std::ffi::OsString> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::join_paths(std::iter::once(self.dir.clone()).chain(std::env::split_paths(&path)))
            .context("the commands' PATH")
    }
}

impl Drop for Workplace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What `sh` says with its exit code when it could not run a command, and what to do.
fn exit_hint(code: i32) -> &'static str {
    match code {
        127 => {
            " (sh's code for a command not found: ship a script with -file NAME, or name a \
             program on the nodes' PATH)"
        }
        126 => {
            " (sh's code for a command found but not executable: chmod +x the script before \
             shipping it, or run it through its interpreter, e.g. python3 m.py)"
        }
        _ => "",
    }
}

/// Runs `sh -c command` (Hadoop Streaming's mapper, combiner or reducer) in `dir` with `env`
/// added to its environment and `path` as its `PATH`, and `stdin` as its input; its stdout.
/// Its stderr goes on to this task's stderr (the container's log) as it is, and a command
/// that exits non-zero is an error with its exit code and the last lines of its stderr.
fn run_command(
    what: &str,
    command: &str,
    place: (&[(String, String)], &Path, &std::ffi::OsStr),
    stdin: &[u8],
) -> Result<Vec<u8>> {
    run_command_until(what, command, place, stdin, None).map(|(stdout, ..)| stdout)
}

/// [`run_command`], how many bytes of `stdin` the command was given, and, if it was cut, the
/// cut. With `cut` (a
/// reducer's, asked every [`HOLD_SLICE`]), the feed goes in pieces of whole key groups
/// ([`streaming::group_ends`]); once cut, it stops after its piece and closes the command's
/// stdin, so the command answers for the keys it was given, each with all its values, as the
/// built-in reduce answers from the partitions it folded. A command still running
/// [`CUT_GRACE`] after the cut is killed, and what it wrote by then is its output, not an
/// error.
fn run_command_until(
    what: &str,
    command: &str,
    (env, dir, path): (&[(String, String)], &Path, &std::ffi::OsStr),
    stdin: &[u8],
    cut: Option<Box<dyn Fn() -> bool + Send>>,
) -> Result<(Vec<u8>, usize, Option<CommandCut>)> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own, which a kill of the attempt ends whole (`killed`).
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start the {what} `{command}` with sh"))?;
    let group = child.id() as i32;
    COMMAND_GROUP.store(group, Ordering::SeqCst);
    // Fed from a thread: a command that writes before it has read all of its input would
    // otherwise block on a full pipe while this waits to write.
    let mut input = child.stdin.take().expect("a piped stdin");
    let ends = match &cut {
        Some(_) => {
            // A pipe of one page, not 64 KiB: what a cut cannot take back is small. Where the
            // kernel refuses, the cut is heard later, not wrongly.
            let _ = nix::fcntl::fcntl(&input, nix::fcntl::FcntlArg::F_SETPIPE_SZ(CUT_PIECE as i32));
            streaming::group_ends(stdin, CUT_PIECE)
        }
        None => vec![stdin.len()],
    };
    let (stdin, total) = (stdin.to_vec(), stdin.len());
    // The cut is watched apart from the feed, which may be blocked writing to a slow
    // command: once cut, the feed stops at its next piece, and the command has
    // [`CUT_GRACE`] to end before its group is killed.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ended, end_heard) = std::sync::mpsc::channel::<()>();
    let watchdog = cut.map(|cut| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            use std::sync::mpsc::RecvTimeoutError::Timeout;
            while matches!(end_heard.recv_timeout(HOLD_SLICE), Err(Timeout)) {
                if cut() {
                    stop.store(true, Ordering::SeqCst);
                    if matches!(end_heard.recv_timeout(CUT_GRACE), Err(Timeout)) {
                        // Its own group (not `COMMAND_GROUP`'s): it is not yet reaped, as
                        // `run_command_until` still waits for it.
                        let _ = nix::sys::signal::killpg(
                            nix::unistd::Pid::from_raw(group),
                            nix::sys::signal::Signal::SIGKILL,
                        );
                        return true;
                    }
                    return false;
                }
            }
            false
        })
    });
    let feeder = std::thread::spawn({
        let stop = stop.clone();
        move || {
            // Every byte that reached the pipe counts, the part of a piece a command killed
            // after a cut had taken too: it may have read and answered from it (a count of
            // whole pieces only said 24,738 bytes of a reducer that had written 894 lines of
            // 30-byte keys).
            let mut fed = 0;
            'pieces: for end in ends {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                while fed < end {
                    match input.write(&stdin[fed..end]) {
                        Ok(n) if n > 0 => fed += n,
                        // A command that ends without reading all of its input is not an
                        // error (`head`); nor is one killed after a cut.
                        _ => break 'pieces,
                    }
                }
            }
            fed
        }
    });
    let mut err = child.stderr.take().expect("a piped stderr");
    let tail = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = err.read_to_end(&mut all);
        let _ = std::io::stderr().write_all(&all);
        all
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .expect("a piped stdout")
        .read_to_end(&mut stdout)
        .with_context(|| format!("reading the {what}'s stdout"))?;
    let status = child.wait();
    COMMAND_GROUP.store(0, Ordering::SeqCst);
    drop(ended);
    let status = status.with_context(|| format!("waiting for the {what}"))?;
    let fed = feeder.join().unwrap_or(0);
    let stopped = watchdog.is_some_and(|w| w.join().unwrap_or(false));
    let was_cut = stop.load(Ordering::SeqCst);
    let stderr = tail.join().unwrap_or_default();
    if status.success() || stopped {
        if was_cut {
            eprintln!(
                "task: the {what} was cut after {fed} of {} input bytes ({}){}",
                total,
                if stopped {
                    "to where it was stopped"
                } else {
                    "whole keys"
                },
                if stopped {
                    format!(
                        "; still running {} ms later, it was stopped: its output is what it \
                         wrote by then",
                        CUT_GRACE.as_millis()
                    )
                } else {
                    String::new()
                }
            );
        }
        let cut = was_cut.then_some(CommandCut {
            fed_bytes: fed as u64,
            input_bytes: total as u64,
            stopped,
        });
        return Ok((stdout, fed, cut));
    }
    let stderr = String::from_utf8_lossy(&stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let last = lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join("\n");
    let how = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => format!("exited with code {code}{}", exit_hint(code)),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "ended abnormally".into(),
    };
    bail!("the {what} `{command}` {how}; its stderr ends: {last}")
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;

    /// Held by the tests that run commands: `stop_command` ends whichever runs.
    static COMMANDS: Mutex<()> = Mutex::new(());

    #[test]
    fn a_kill_ends_the_command_s_whole_process_group() {
        let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let running = std::thread::spawn({
            let dir = dir.path().to_owned();
            move || {
                let started = Instant::now();
                // The background sleep holds stdout open: were only sh killed, the read
                // would wait for it.
                let out = run_command("mapper", "sleep 1000 & wait", (&[], &dir, &path), b"");
                (out, started.elapsed())
            }
        });
        while COMMAND_GROUP.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop_command();
        let (out, took) = running.join().unwrap();
        let err = format!("{:#}", out.unwrap_err());
        assert!(err.contains("was killed by signal 9"), "{err}");
        assert!(took < Duration::from_secs(500), "{took:?}");
        assert_eq!(COMMAND_GROUP.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_reducer_cut_while_it_runs_answers_for_the_whole_keys_it_was_given() {
        let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        // Three values of each of 9000 keys, sorted as a reduce feeds them: several pieces.
        let records: Vec<(String, &[u8])> = (0..27_000)
            .map(|i| (format!("k{:05}", i / 3), &b"1"[..]))
            .collect();
        let stdin =
            streaming::reducer_input(records.iter().map(|(k, v)| (k.as_str(), *v)).collect());
        let ends = streaming::group_ends(&stdin, CUT_PIECE);
        assert!(ends.len() > 2, "{ends:?}");
        // The command waits (its pipe full, the feed blocked) until the cut, which the test
        // makes as it lets it go on.
        let go = dir.path().join("go");
        let cut = {
            let go = go.clone();
            Box::new(move || {
                std::fs::write(&go, b"").unwrap();
                true
            })
        };
        let count = r#"while [ ! -e go ]; do sleep 0.01; done; awk -F '\t' '{ n[$1]++; lines++ } END { for (k in n) if (n[k] != 3) bad++; print lines, length(n), bad + 0 }'"#;
        let (out, fed, said) = run_command_until(
            "reducer",
            count,
            (&[], dir.path(), &path),
            &stdin,
            Some(cut),
        )
        .unwrap();
        assert!(
            fed < stdin.len() && ends.contains(&fed),
            "{fed} of {ends:?}"
        );
        // The cut, as the answer will say it: what was fed, of what there was.
        assert_eq!(
            said,
            Some(CommandCut {
                fed_bytes: fed as u64,
                input_bytes: stdin.len() as u64,
                stopped: false
            })
        );
        let lines = stdin[..fed].iter().filter(|&&b| b == b'\n').count();
        // It answered (its END ran) from every line it was given, each key with all three
        // of its values.
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{lines} {} 0\n", lines / 3)
        );
        // Uncut (and let go at once), the same command reads it all.
        let never = Box::new(|| false);
        let (out, fed, said) = run_command_until(
            "reducer",
            count,
            (&[], dir.path(), &path),
            &stdin,
            Some(never),
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(
            (out, fed, said),
            (b"27000 9000 0\n".to_vec(), stdin.len(), None)
        );

        // One that goes on after its input ends is stopped: what it wrote is its output.
        let started = Instant::now();
        let (out, fed, said) = run_command_until(
            "reducer",
            "cat > /dev/null; echo so far; sleep 1000",
            (&[], dir.path(), &path),
            &stdin,
            Some(Box::new(|| true)),
        )
        .unwrap();
        assert_eq!(out, b"so far\n");
        assert!(fed <= stdin.len());
        assert!(said.is_some_and(|c| c.stopped), "{said:?}");
        assert!(started.elapsed() < Duration::from_secs(500));
        assert_eq!(COMMAND_GROUP.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_shipped_file_is_in_the_attempt_s_directory_and_on_its_path() {
        let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
        let f = streaming::ShippedFile::new("hello.sh", b"#!/bin/sh\necho hi $1\n", true);
        let base = tempfile::tempdir().unwrap();
        let place = Workplace::under(base.path(), "m-test-1", &[f]).unwrap();
        let out = place.run("mapper", "hello.sh there", &[], b"").unwrap();
        assert_eq!(out, b"hi there\n");
        let err = format!(
            "{:#}",
            place
                .run("mapper", "nowhere-to-be-found", &[], b"")
                .unwrap_err()
        );
        assert!(
            err.contains("code 127 (sh's code for a command not found"),
            "{err}"
        );
        let dir = place.dir.clone();
        drop(place);
        assert!(!dir.exists());
    }
}
