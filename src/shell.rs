//! `yard shell`: YARN's distributed shell. The client submits an application whose master is
//! `yard shell-master`; the master registers with the rm, asks for containers (anywhere, or
//! one on each named node), starts the command in each on its nodemanager with the container's
//! token, waits for them all to end and unregisters, succeeded when every one exited 0.
//! The smallest real master: it exercises the whole allocate → start → complete protocol.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use yard_wire::protocol::{AllocateReply, AllocateRequest, Resource, ResourceRequest};
use yard_wire::views::FinalApplicationStatus;

use crate::client::{Client, Rm};
use crate::sim::BadInput;
use crate::submit::sh_quote;

#[derive(Args)]
pub(crate) struct ShellArgs {
    #[command(flatten)]
    rm: Rm,
    #[command(flatten)]
    shape: Shape,
    #[arg(long, default_value = "yard-shell")]
    name: String,
    #[arg(long, default_value = "default")]
    queue: String,
    /// Submit as this user (admins only; a user submits as itself) [default: the user your
    /// token names].
    #[arg(long)]
    user: Option<String>,
    /// Print the application id and return without waiting for it to end.
    #[arg(long)]
    no_wait: bool,
    /// Give up waiting (the application keeps running) after this many seconds.
    #[arg(long, default_value_t = 600)]
    wait_secs: u64,
    /// The command, run as is (no shell) in every container.
    #[arg(trailing_var_arg = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

/// Where and how big the containers are: shared by the client and the master it starts.
#[derive(Args, Clone)]
pub(crate) struct Shape {
    /// Containers to run the command in, anywhere.
    #[arg(long, default_value_t = 1, conflicts_with = "on")]
    count: u32,
    /// Run one container on this node (repeat the flag for several nodes).
    #[arg(long, value_name = "NODE")]
    on: Vec<String>,
    #[arg(long, default_value_t = 128)]
    memory_mb: u64,
    #[arg(long, default_value_t = 1)]
    vcores: u32,
}

impl Shape {
    fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--memory-mb={}", self.memory_mb),
            format!("--vcores={}", self.vcores),
        ];
        if self.on.is_empty() {
            args.push(format!("--count={}", self.count));
        }
        args.extend(self.on.iter().map(|n| format!("--on={n}")));
        args
    }

    fn total(&self) -> u32 {
        if self.on.is_empty() {
            self.count
        } else {
            self.on.len() as u32
        }
    }
}

#[derive(Args)]
pub(crate) struct ShellMasterArgs {
    #[command(flatten)]
    shape: Shape,
    /// Milliseconds between allocate calls (YARN's masters use 1 s).
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// How long an unreachable rm (restarting) is tried again before the master gives up.
    #[arg(long, default_value_t = 60)]
    rm_patience_secs: u64,
    #[arg(trailing_var_arg = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

pub(crate) fn shell(args: ShellArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    if args.shape.total() == 0 {
        return Err(BadInput("--count must be at least 1".into()).into());
    }
    if !args.shape.on.is_empty() {
        let running: BTreeSet<String> = client
            .running_nodes()?
            .into_iter()
            .map(|h| h.node)
            .collect();
        if let Some(missing) = args.shape.on.iter().find(|n| !running.contains(*n)) {
            let known: Vec<&str> = running.iter().map(String::as_str).collect();
            return Err(BadInput(format!(
                "--on {missing}: no running node has that id (running: {})",
                known.join(", ")
            ))
            .into());
        }
    }
    let exe = std::env::current_exe().context("cannot find the yard binary to run the master")?;
    let master: Vec<String> = [exe.display().to_string(), "shell-master".into()]
        .into_iter()
        .chain(args.shape.to_args())
        .chain(["--".into()])
        .chain(args.command.iter().cloned())
        .collect();
    let command = master
        .iter()
        .map(|a| sh_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let id = client.submit(&args.name, &args.queue, args.user.as_deref(), &command)?;
    crate::print(&format!("{id}\n"))?;
    if args.no_wait {
        return Ok(());
    }
    let deadline = Instant::now() + Duration::from_secs(args.wait_secs);
    loop {
        let app = client.typed(|rm| rm.app(&id))?;
        let state = app.state;
        if state.is_final() {
            let status = app.final_status;
            crate::print(&format!("{id} {state} {status}\n"))?;
            print_output(&client, &id, args.shape.total());
            if status != FinalApplicationStatus::Succeeded {
                bail!("{id} ended {state} {status}; its containers' logs: yard logs {id}");
            }
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{id} is still {state} after {} s; it keeps running (`yard kill {id}` stops it)",
                args.wait_secs
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The commands' stdout (not the master's), as `yard logs` prints it, once every command
/// container's is listed (its node uploads it as it ends, within moments); only a warning if
/// it cannot be read (the application's status is the answer).
fn print_output(client: &Client, id: &str, containers: u32) {
    let command_output = |f: &yard_wire::logs::LogFile| !f.master && f.file == "stdout";
    let patience = Instant::now() + Duration::from_secs(30);
    let printed = loop {
        let listing = client.typed(|rm| rm.app_logs(id, None));
        let listed = listing.as_ref().map_or(0, |l| {
            l.files.iter().filter(|f| command_output(f)).count() + l.missing.len()
        });
        if listed >= containers as usize || Instant::now() > patience {
            break listing.and_then(|l| crate::logs::print_logs(client, &l, command_output, None));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if let Err(e) = printed {
        eprintln!("yard: warning: cannot print the commands' output ({e:#}); try yard logs {id}");
    }
}

/// The master's asks: YARN's absolute counts, `*` the total still wanted; with `--on`, node
/// asks say where, and `*` does not relax locality.
fn asks(shape: &Shape, granted_on: &BTreeMap<String, u32>, granted: u32) -> Vec<ResourceRequest> {
    let capability = Resource {
        memory_mb: shape.memory_mb,
        vcores: shape.vcores,
    };
    let ask = |resource_name: &str, num_containers: u32, relax_locality: bool| ResourceRequest {
        priority: 1,
        resource_name: resource_name.into(),
        capability,
        num_containers,
        relax_locality,
    };
    let mut wanted: BTreeMap<&str, u32> = BTreeMap::new();
    for node in &shape.on {
        *wanted.entry(node).or_default() += 1;
    }
    let mut asks: Vec<ResourceRequest> = wanted
        .into_iter()
        .map(|(node, n)| {
            ask(
                node,
                n.saturating_sub(granted_on.get(node).copied().unwrap_or(0)),
                false,
            )
        })
        .collect();
    asks.push(ask(
        "*",
        shape.total().saturating_sub(granted),
        shape.on.is_empty(),
    ));
    asks
}

/// Runs inside the master container the rm started: `YARD_RM` and `APPLICATION_ID` say where.
pub(crate) fn master(args: ShellMasterArgs) -> Result<()> {
    let env = |name: &str| {
        std::env::var(name).with_context(|| {
            format!("{name} is not set: `yard shell-master` runs in a container the rm starts (use `yard shell`)")
        })
    };
    let (rm, app) = (env("YARD_RM")?, env("APPLICATION_ID")?);
    let http = reqwest::blocking::Client::new();
    // The master's own credential, from the rm: good for this application's attempt only.
    let token = std::env::var("YARD_TOKEN").unwrap_or_default();
    let send = |method: reqwest::Method, url: &str, body: &Value| -> Result<Value> {
        let response = http
            .request(method, url)
            .bearer_auth(&token)
            .json(body)
            .send()
            .with_context(|| format!("cannot reach {url}"))?;
        let status = response.status();
        let value: Value = response.json().unwrap_or(Value::Null);
        anyhow::ensure!(status.is_success(), "{url} answered {status}: {value}");
        Ok(value)
    };
    // The rm may be restarting (work-preserving): keep trying it for a while, as YARN's
    // masters do, rather than failing a job whose containers still run.
    let patience = Duration::from_secs(args.rm_patience_secs);
    let post = |url: &str, body: &Value| send(reqwest::Method::POST, url, body);
    let to_rm = |method: reqwest::Method, path: &str, body: &Value| -> Result<Value> {
        let (url, give_up) = (format!("{rm}{path}"), Instant::now() + patience);
        loop {
            match send(method.clone(), &url, body) {
                Err(e) if Instant::now() < give_up && is_unreachable(&e) => {
                    eprintln!("the rm is unreachable ({e:#}); trying again");
                    std::thread::sleep(Duration::from_millis(args.interval_ms));
                }
                other => return other,
            }
        }
    };
    to_rm(
        reqwest::Method::POST,
        &format!("/ws/v1/yard/apps/{app}/register"),
        &json!({}),
    )?;
    println!(
        "registered {app} with {rm}; running {:?} in {} containers",
        args.command,
        args.shape.total()
    );

    let total = args.shape.total();
    let (mut granted, mut granted_on) = (0u32, BTreeMap::<String, u32>::new());
    let mut running = BTreeSet::new();
    let (mut ended, mut failed) = (0u32, 0u32);
    let mut releases = Vec::new();
    while ended < total {
        let request = AllocateRequest {
            application_id: app.clone(),
            asks: asks(&args.shape, &granted_on, granted),
            releases: std::mem::take(&mut releases),
            progress: f64::from(ended) / f64::from(total),
            tasks: None,
            job_type: None,
            job: None,
        };
        let reply: AllocateReply = serde_json::from_value(to_rm(
            reqwest::Method::POST,
            &format!("/ws/v1/yard/apps/{app}/allocate"),
            &serde_json::to_value(&request)?,
        )?)
        .context("the rm's allocate reply")?;
        for container in reply.allocated {
            // Asks are absolute counts, so one sent before the rm's last grants reached us can
            // be granted twice (YARN's masters meet this too): extras go straight back.
            if granted >= total {
                releases.push(container.container_id);
                continue;
            }
            granted += 1;
            *granted_on.entry(container.node_id.clone()).or_default() += 1;
            let start = json!({"token": container.token, "command": args.command});
            match post(
                &format!("{}/ws/v1/node/containers", container.node_http_address),
                &start,
            ) {
                Ok(_) => {
                    println!(
                        "{} started on {}",
                        container.container_id, container.node_id
                    );
                    running.insert(container.container_id);
                }
                Err(e) => {
                    // Granted but never ran: it counts as failed, and goes back to the rm.
                    eprintln!(
                        "{} could not start on {}: {e:#}",
                        container.container_id, container.node_id
                    );
                    (ended, failed) = (ended + 1, failed + 1);
                    releases.push(container.container_id);
                }
            }
        }
        for status in reply.completed {
            if running.remove(&status.container_id) {
                ended += 1;
                let ok = status.exit_code == Some(0);
                failed += u32::from(!ok);
                println!(
                    "{} ended {:?} exit {:?}",
                    status.container_id, status.end, status.exit_code
                );
            }
        }
        if ended < total {
            std::thread::sleep(Duration::from_millis(args.interval_ms));
        }
    }
    let succeeded = failed == 0;
    // A shell's "answer": how many of its containers exited 0.
    let result = json!({
        "processedFraction": f64::from(total - failed) / f64::from(total),
        "answer": {"containers": total, "succeeded": total - failed},
    });
    to_rm(
        reqwest::Method::PUT,
        &format!("/ws/v1/yard/apps/{app}/result"),
        &result,
    )?;
    // Logged before unregistering: once the rm says FINISHED, the log is complete.
    println!("{total} containers ended, {failed} failed");
    to_rm(
        reqwest::Method::POST,
        &format!("/ws/v1/yard/apps/{app}/unregister"),
        &json!({ "succeeded": succeeded }),
    )?;
    if !succeeded {
        bail!("{failed} of {total} containers failed");
    }
    Ok(())
}

/// A connection that could not be made (nothing listens yet), as opposed to a refusal.
fn is_unreachable(e: &anyhow::Error) -> bool {
    e.downcast_ref::<reqwest::Error>()
        .is_some_and(|e| e.is_connect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(count: u32, on: &[&str]) -> Shape {
        Shape {
            count,
            on: on.iter().map(|s| s.to_string()).collect(),
            memory_mb: 128,
            vcores: 1,
        }
    }

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        let out = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                &format!("printf %s {}", sh_quote("it's a 'test' $HOME")),
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "it's a 'test' $HOME"
        );
    }

    #[test]
    fn asks_count_down_per_node_and_in_total() {
        let s = shape(1, &["a:1", "b:1", "a:1"]);
        let counts = |asks: Vec<ResourceRequest>| -> Vec<(String, u32, bool)> {
            asks.into_iter()
                .map(|a| (a.resource_name, a.num_containers, a.relax_locality))
                .collect()
        };
        assert_eq!(
            counts(asks(&s, &BTreeMap::new(), 0)),
            [
                ("a:1".into(), 2, false),
                ("b:1".into(), 1, false),
                ("*".into(), 3, false)
            ]
        );
        let granted = BTreeMap::from([("a:1".to_string(), 1)]);
        assert_eq!(
            counts(asks(&s, &granted, 1)),
            [
                ("a:1".into(), 1, false),
                ("b:1".into(), 1, false),
                ("*".into(), 2, false)
            ]
        );
        assert_eq!(
            counts(asks(&shape(4, &[]), &BTreeMap::new(), 1)),
            [("*".into(), 3, true)]
        );
    }
}
