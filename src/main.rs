//! yard: the command line of a YARN-style cluster manager whose MapReduce masters meet deadlines.
//! This binary owns argument parsing, exit codes and output formatting; the work lives in the crates.

mod auth;
mod batch;
mod batch_run;
mod client;
mod daemons;
mod data;
mod data_read;
mod demo;
mod local;
mod logs;
mod queues;
mod replay;
mod shell;
mod sim;
mod streaming;
mod submit;
mod trace;
mod up;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc keeps freed pages for reuse where glibc returns them to the kernel, and faulting a
/// page back in is slow on small VMs (docs/decisions/crates.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "yard", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// yard's main job on this machine: a local cluster, a word count under a deadline too tight
    /// to read everything, run under `full` and under `dart`, side by side.
    Demo(demo::DemoArgs),
    /// A local cluster in the foreground: an rm and N nodemanagers on 127.0.0.1, with a status
    /// line, until Ctrl-C stops it all.
    Up(up::UpArgs),
    /// Read Hadoop/Facebook workload traces (SWIM, Rumen, SLS, topology, SYNTH).
    #[command(subcommand)]
    Trace(trace::TraceCommand),
    /// Replay a workload through the task policies on the simulator (the Dart paper's evaluation).
    Sim(Box<sim::SimArgs>),
    /// Batches of independent jobs: the order and pools of the shortest makespan (Johnson's
    /// rule, BalancedPools).
    #[command(subcommand)]
    Batch(batch::BatchCommand),
    /// Replay a trace's first jobs on a live cluster (a running rm, or a local one it starts) at
    /// their submit times, time-scaled, and compare them with the simulator's prediction.
    Replay(Box<replay::ReplayArgs>),
    /// Run the resource manager.
    Rm(daemons::RmArgs),
    /// Run a node manager.
    Nm(daemons::NmArgs),
    /// Run a MapReduce job (wordcount, grep, topk, index, streaming, synthetic) and print its answer, or
    /// submit an application whose master runs a command (--command) and print its id.
    Submit(submit::SubmitArgs),
    /// Run a Hadoop Streaming job (your own mapper and reducer commands) with Hadoop's options:
    /// yard streaming -input NAME -mapper CMD [-reducer CMD|NONE|aggregate] [--deadline 30s].
    Streaming(streaming::StreamingArgs),
    /// List applications.
    Apps(client::AppsArgs),
    /// Show one application.
    App(client::AppArgs),
    /// Kill an application.
    Kill(client::AppArgs),
    /// Move an application's deadline, or give it one: yard deadline ID 90s.
    Deadline(client::DeadlineArgs),
    /// Print an application's containers' logs (YARN's `yarn logs -applicationId`).
    Logs(logs::LogsArgs),
    /// List nodes.
    Nodes(client::NodesArgs),
    /// List the capacity queues: each one's capacity, maximum, use, applications and policy.
    Queues(queues::QueuesArgs),
    /// Credentials: print your bearer token, or (admins) issue one for a user or a node.
    #[command(subcommand)]
    Auth(auth::AuthCommand),
    /// Datasets on the cluster: put files as replicated blocks, list them.
    #[command(subcommand)]
    Data(data::DataCommand),
    /// Run a command in containers across the cluster (YARN's distributed shell) and wait.
    Shell(shell::ShellArgs),
    /// The master `yard shell` submits; runs in a container the rm starts.
    #[command(hide = true)]
    ShellMaster(shell::ShellMasterArgs),
    /// A MapReduce job's master; runs in a container the rm starts (`yard submit wordcount`).
    #[command(hide = true)]
    MrMaster(Box<yard_appmaster_live::master::MasterArgs>),
    /// Holds a container for a MapReduce job and runs its tasks; started by the master.
    #[command(hide = true)]
    MrRunner(yard_appmaster_live::task::RunnerArgs),
    /// One map or reduce attempt; started by a runner, its spec on stdin.
    #[command(hide = true)]
    MrTask,
}

/// Exit codes: 0 success, 1 an internal or IO failure, 2 bad input (arguments, trace files).
fn main() -> ExitCode {
    let cli = Cli::parse(); // clap exits with 2 on a usage error
    let result = match cli.command {
        Command::Demo(args) => demo::demo(args),
        Command::Up(args) => up::up(args),
        Command::Trace(command) => trace::run(command),
        Command::Sim(args) => sim::run(*args),
        Command::Batch(command) => batch::run(command),
        Command::Replay(args) => replay::run(*args),
        Command::Rm(args) => daemons::rm(args),
        Command::Nm(args) => daemons::nm(args),
        Command::Submit(args) => submit::submit(args),
        Command::Streaming(args) => streaming::streaming(args),
        Command::Apps(args) => client::apps(args),
        Command::App(args) => client::app(args),
        Command::Kill(args) => client::kill(args),
        Command::Deadline(args) => client::deadline(args),
        Command::Logs(args) => logs::logs(args),
        Command::Nodes(args) => client::nodes(args),
        Command::Queues(args) => queues::queues(args),
        Command::Auth(command) => auth::run(command),
        Command::Data(command) => data::run(command),
        Command::Shell(args) => shell::shell(args),
        Command::ShellMaster(args) => shell::master(args),
        Command::MrMaster(args) => yard_appmaster_live::master::master(*args),
        Command::MrRunner(args) => yard_appmaster_live::task::runner(args),
        Command::MrTask => yard_appmaster_live::task::task(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS; // `yard … | head` is not a failure
            }
            eprintln!("yard: error: {error:#}");
            let bad_input = error.downcast_ref::<yard_workload::TraceError>().is_some()
                || error.downcast_ref::<sim::BadInput>().is_some()
                || error.downcast_ref::<yard_wire::BadInput>().is_some();
            ExitCode::from(if bad_input { 2 } else { 1 })
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// Writes to stdout, reporting (rather than panicking on) a closed pipe.
pub(crate) fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
