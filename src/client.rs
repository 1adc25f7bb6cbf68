//! The client commands over the rm's REST API: `yard apps`, `app`, `kill`, `nodes` (and the
//! answer rendering `yard submit` shares), reading the rm's replies as `yard_wire::views`
//! types. Tables for people, `--json` for scripts. A refusal from the rm (4xx) is bad input:
//! exit 2.

use std::fmt::Write as _;

use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use serde_json::{Value, json};

use yard_cluster::placement::Holder;
use yard_rm::client::{AppsFilter, BlockingRmClient, ClientError};
use yard_wire::answer::AnswerJob;
use yard_wire::deadline::{Deadline, DeadlineOutcome};
use yard_wire::jobs::JobView;
use yard_wire::views::{
    AppList, AppStateView, AppsReply, Classifier, FinalApplicationStatus, NodeList, NodeState,
    NodesReply, OverloadView, QuotaBasis, QuotaView, YardAppReply, YardAppView, YardLoad,
    YarnApplicationState,
};

use crate::sim::BadInput;

#[derive(Args)]
pub(crate) struct Rm {
    /// The rm's base URL.
    #[arg(
        long,
        global = true,
        default_value = "http://127.0.0.1:8088",
        env = "YARD_RM"
    )]
    pub(crate) rm: String,
    /// A file holding your bearer token [default: the rm's local credentials, when run as its
    /// OS user on its host; YARD_TOKEN, if set, wins].
    #[arg(long, global = true, env = "YARD_TOKEN_FILE", value_name = "FILE")]
    pub(crate) token_file: Option<std::path::PathBuf>,
}

/// `90s`, `5m`, `1h`, `500ms`, or a bare number of seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is no duration: write 90s, 5m, 1h or 500ms"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use ms, s, m or h"
            ));
        }
    };
    if !(seconds > 0.0 && seconds < 1e9) {
        return Err(format!(
            "{s:?}: a deadline must be in the future (and within 30 years)"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

// `yard apps`: YARN's `yarn application -list`.
#[derive(Args)]
#[command(
    after_help = "Without --all or --states, only active applications (SUBMITTED, ACCEPTED, \
RUNNING), as `yarn application -list` shows. STARTED is UTC (HH:MM:SS today, else the date too); \
ELAPSED runs from submission to the end, or to now."
)]
pub(crate) struct AppsArgs {
    #[command(flatten)]
    rm: Rm,
    /// Every state, finished ones too.
    #[arg(long, conflicts_with = "states")]
    all: bool,
    /// Only these states, comma-separated (NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING,
    /// FINISHED, FAILED, KILLED) [default: SUBMITTED,ACCEPTED,RUNNING].
    #[arg(long)]
    states: Option<String>,
    /// Only these application types, comma-separated (e.g. YARN,MAPREDUCE).
    #[arg(long)]
    types: Option<String>,
    #[arg(long)]
    user: Option<String>,
    #[arg(long)]
    queue: Option<String>,
    #[arg(long)]
    limit: Option<usize>,
    #[arg(long)]
    json: bool,
}

/// The states `yarn application -list` shows without `-appStates`.
const ACTIVE_APP_STATES: [YarnApplicationState; 3] = [
    YarnApplicationState::Submitted,
    YarnApplicationState::Accepted,
    YarnApplicationState::Running,
];

/// A comma-separated list of names from `valid` (any case); bad input naming the unknown one
/// and the valid ones, as the rm's (and YARN's) refusal does.
pub(crate) fn state_list<T: Copy + std::fmt::Display>(
    what: &str,
    given: &str,
    valid: &[T],
) -> Result<Vec<T>, BadInput> {
    let names: Vec<String> = valid.iter().map(T::to_string).collect();
    let valid_names = names.join(", ");
    let mut found = Vec::new();
    for name in given.split(',').map(|s| s.trim().to_ascii_uppercase()) {
        if name.is_empty() {
            continue;
        }
        match valid.iter().find(|v| v.to_string() == name) {
            Some(v) => found.push(*v),
            None => {
                return Err(BadInput(format!(
                    "invalid {what} {name:?}: it should be one of {valid_names}"
                )));
            }
        }
    }
    if found.is_empty() {
        return Err(BadInput(format!(
            "no {what} given: name one or more of {valid_names}"
        )));
    }
    Ok(found)
}

#[derive(Args)]
pub(crate) struct AppArgs {
    #[command(flatten)]
    rm: Rm,
    /// The application id (application_…).
    id: String,
    #[arg(long)]
    json: bool,
}

/// `yard deadline ID IN`.
#[derive(Args)]
#[command(
    after_help = "The deadline is AFTER from now on this machine's clock. A MapReduce job's master \
hears it with its next call to the rm (within 0.1 s; a job on a shared scan within a second) and \
works to it from then on; one given to a job that had none brings its deadline guard. `full` reads \
everything whatever its deadline; the answer is judged against the deadline it ended with."
)]
pub(crate) struct DeadlineArgs {
    #[command(flatten)]
    rm: Rm,
    /// The application id (application_…).
    id: String,
    /// The new deadline, from now: 90s, 5m, 1h, 500ms (a bare number is seconds).
    #[arg(value_parser = parse_duration)]
    after: Duration,
    #[arg(long)]
    json: bool,
}

// `yard nodes`: each node with its capacity and its last load sample.
#[derive(Args)]
#[command(
    after_help = "LOAD is the 1-minute load average per logical CPU (1.00: as many \
runnable tasks as CPUs); CPU and MEM the host's CPU and memory in use; DISK R+W the bytes its \
disks read and wrote per second; -: no sample yet. --json has all the rm reports of each node \
(resourceUtilization, yardLoad). Without --all or --states, only RUNNING nodes, as `yarn node -list` shows."
)]
pub(crate) struct NodesArgs {
    #[command(flatten)]
    rm: Rm,
    /// Every state, LOST nodes too.
    #[arg(long, conflicts_with = "states")]
    all: bool,
    /// Only these states, comma-separated (NEW, RUNNING, UNHEALTHY, DECOMMISSIONING,
    /// DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN) [default: RUNNING].
    #[arg(long)]
    states: Option<String>,
    #[arg(long)]
    json: bool,
}

/// The CLI's face of the rm client (`yard_rm::client`): blocking, with the credential found
/// for the rm, and a refusal (4xx) turned into [`BadInput`] with the rm's own explanation.
pub(crate) struct Client {
    rm: BlockingRmClient,
}

impl Client {
    pub(crate) fn new(rm: &Rm) -> Result<Self> {
        let base = rm.rm.trim_end_matches('/');
        let token = crate::auth::bearer_for(base, rm.token_file.as_deref())?;
        Ok(Self::with_token(base, token))
    }

    /// A client of the rm at `url` that sends `token`.
    pub(crate) fn with_token(url: &str, token: Option<String>) -> Self {
        Client {
            rm: BlockingRmClient::new(url, token).expect("a current-thread runtime starts"),
        }
    }

    /// The bearer token this client sends, if it found one.
    pub(crate) fn token(&self) -> Option<&str> {
        self.rm.token()
    }

    /// Sends a request; a 4xx becomes [`BadInput`] carrying the rm's own explanation.
    pub(crate) fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        self.rm.call(method, path, body.as_ref()).map_err(refusal)
    }

    /// One of the typed calls (`apps`, `app`, `nodes`, `kill`, …), a 4xx turned into
    /// [`BadInput`] as [`Client::call`]'s.
    pub(crate) fn typed<T>(
        &self,
        call: impl FnOnce(&BlockingRmClient) -> Result<T, ClientError>,
    ) -> Result<T> {
        call(&self.rm).map_err(refusal)
    }
}

/// A refusal (4xx) is bad input, with the rm's own explanation.
fn refusal(e: ClientError) -> anyhow::Error {
    match e {
        ClientError::Unauthorized { error } => BadInput(format!(
            "the rm refused: {error}; {}",
            crate::auth::NO_CREDENTIAL_HINT
        ))
        .into(),
        refused @ ClientError::Refused { .. } => BadInput(refused.to_string()).into(),
        other => anyhow::Error::from(other),
    }
}

pub(crate) fn print_json(v: &Value) -> Result<()> {
    crate::print(&(serde_json::to_string_pretty(v)? + "\n"))?;
    Ok(())
}

/// A typed reply as `--json` prints it: through [`Value`], whose keys are sorted, as the rm
/// sends them.
pub(crate) fn print_view(v: &impl Serialize) -> Result<()> {
    print_json(&serde_json::to_value(v)?)
}

/// Left-aligned columns wide enough for their widest cell.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        line(row.clone());
    }
    out
}

pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Client {
    /// The nodes the rm lists as RUNNING, with their racks.
    pub(crate) fn running_nodes(&self) -> Result<Vec<Holder>> {
        let nodes = self.typed(|rm| rm.nodes(&[NodeState::Running]))?;
        Ok(nodes
            .into_iter()
            .map(|n| Holder {
                node: n.id,
                rack: n.rack,
            })
            .collect())
    }

    /// Asks the rm for an id and submits an application whose master runs `command` (under
    /// `/bin/sh -c`); returns the id.
    pub(crate) fn submit(
        &self,
        name: &str,
        queue: &str,
        user: Option<&str>,
        command: &str,
    ) -> Result<String> {
        self.submit_by(name, queue, user, command, None)
    }

    /// [`Client::submit`] with a deadline, sent in the submission itself (`deadline-ms`): the
    /// rm's deadline policies see it from the first moment.
    pub(crate) fn submit_by(
        &self,
        name: &str,
        queue: &str,
        user: Option<&str>,
        command: &str,
        deadline: Option<Deadline>,
    ) -> Result<String> {
        let id = self.typed(|rm| rm.new_application())?.application_id;
        let mut submission = json!({
            "application-id": id,
            "application-name": name,
            "queue": queue,
            "am-container-spec": {"commands": {"command": command}},
        });
        // Without one, the rm takes the user the token names.
        if let Some(user) = user {
            submission["user"] = json!(user);
        }
        if let Some(deadline) = deadline {
            submission["deadline-ms"] = json!(deadline);
        }
        self.call(
            reqwest::Method::POST,
            "/ws/v1/cluster/apps",
            Some(submission),
        )?;
        Ok(id)
    }
}

pub(crate) fn apps(args: AppsArgs) -> Result<()> {
    // Checked here too, so the refusal names the valid states even from an older rm.
    let states = match (&args.states, args.all) {
        (Some(given), _) => state_list("application state", given, YarnApplicationState::ALL)?,
        (None, true) => YarnApplicationState::ALL.to_vec(),
        (None, false) => ACTIVE_APP_STATES.to_vec(),
    };
    let types: Vec<String> = args
        .types
        .iter()
        .flat_map(|t| t.split(','))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    let filter = AppsFilter {
        // Without --all the rm is asked for these states (YARN's default list); with it, for
        // every state.
        states: if args.all { Vec::new() } else { states.clone() },
        application_types: types.clone(),
        user: args.user,
        queue: args.queue,
        limit: args.limit,
    };
    let apps = Client::new(&args.rm)?.typed(|rm| rm.apps(&filter))?;
    if args.json {
        return print_view(&AppsReply {
            apps: AppList {
                total: apps.len() as u64,
                app: apps,
            },
        });
    }
    let now = crate::submit::epoch_ms();
    let rows: Vec<Vec<String>> = apps
        .iter()
        .map(|a| {
            vec![
                a.id.clone(),
                a.name.clone(),
                a.application_type.clone(),
                a.user.clone(),
                a.queue.clone(),
                a.state.to_string(),
                a.final_status.to_string(),
                outcome_text(a.deadline_outcome).into(),
                format!("{:.0} %", a.progress),
                clock_text(a.started_time, now),
                elapsed_text(a.elapsed_time),
                deadline_text(a.deadline_ms.map(Deadline::epoch_ms), now),
                quota_text(a.quota.as_ref()),
                match a.tracking_url.as_str() {
                    "" => "-".into(),
                    url => url.to_owned(),
                },
            ]
        })
        .collect();
    let mut out = format!(
        "Total number of applications (application-types: [{}] and states: [{}]):{}\n",
        types.join(", "),
        states
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", "),
        rows.len()
    );
    out.push_str(&table(
        &[
            "ID",
            "NAME",
            "TYPE",
            "USER",
            "QUEUE",
            "STATE",
            "FINAL",
            "OUTCOME",
            "PROGRESS",
            "STARTED",
            "ELAPSED",
            "DEADLINE",
            "QUOTA",
            "TRACKING-URL",
        ],
        &rows,
    ));
    crate::print(&out)?;
    Ok(())
}

/// Ms since the epoch as `YYYY-MM-DD HH:MM:SS` in UTC; `-` for YARN's 0 (not yet).
pub(crate) fn date_time_text(ms: i64) -> String {
    if ms <= 0 {
        return "-".into();
    }
    let at = std::time::UNIX_EPOCH + Duration::from_millis(ms as u64);
    // `2026-11-24T12:57:05Z` → `2026-11-24 12:57:05`.
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replacen('T', " ", 1)
        .trim_end_matches('Z')
        .to_owned()
}

/// A moment as a table cell, in UTC: `HH:MM:SS` on `now_ms`'s day, else with the date;
/// `-` for YARN's 0.
pub(crate) fn clock_text(ms: i64, now_ms: i64) -> String {
    let full = date_time_text(ms);
    if ms > 0 && ms.div_euclid(86_400_000) == now_ms.div_euclid(86_400_000) {
        full[11..].to_owned()
    } else {
        full
    }
}

/// A span of ms for people: `42s`, `1m 05s`, `2h 03m`, `3d 04h`.
pub(crate) fn elapsed_text(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// A deadline for people, against `now_ms`: `in 1m30s`, `12s ago`, or `-` for none.
pub(crate) fn deadline_text(deadline_ms: Option<i64>, now_ms: i64) -> String {
    let Some(d) = deadline_ms else {
        return "-".into();
    };
    let left = d.saturating_sub(now_ms) / 1000;
    let span = |s: i64| {
        let s = s.unsigned_abs();
        match s {
            0..60 => format!("{s}s"),
            60..3600 => format!("{}m{:02}s", s / 60, s % 60),
            3600..86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
            _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
        }
    };
    if left >= 0 {
        format!("in {}", span(left))
    } else {
        format!("{} ago", span(left))
    }
}

/// `yard app`'s deadline: when (UTC), and beside it how it ended (`met`, `missed`, …) or, while
/// pending, how far off it is; `-` without one. Once, not as raw ms beside yard's own copy.
fn deadline_line(
    deadline: Option<Deadline>,
    outcome: Option<DeadlineOutcome>,
    now_ms: i64,
) -> String {
    let Some(ms) = deadline.map(Deadline::epoch_ms) else {
        return "-".into();
    };
    let standing = match outcome {
        None | Some(DeadlineOutcome::Pending) => deadline_text(Some(ms), now_ms),
        ended => outcome_text(ended).into(),
    };
    format!("{} UTC ({standing})", date_time_text(ms))
}

/// Where an application stands against its deadline, as the rm judged it (`deadlineOutcome`):
/// `met`, `empty`, `missed` or `pending`; `-` without a deadline.
pub(crate) fn outcome_text(outcome: Option<DeadlineOutcome>) -> &'static str {
    outcome.map_or("-", DeadlineOutcome::name)
}

/// An application's quota under the rm's policy: containers, and why when it is not the
/// fewest that meet the deadline (`-`: no quota).
pub(crate) fn quota_text(quota: Option<&QuotaView>) -> String {
    let Some(q) = quota else {
        return "-".into();
    };
    match (q.containers, q.basis) {
        (Some(n), QuotaBasis::Feasible) => n.to_string(),
        (Some(n), QuotaBasis::NoDeadline) => format!("{n} (spare only)"),
        (Some(n), why) => format!("{n} ({why})"),
        (None, why) => format!("- ({why})"),
    }
}

pub(crate) fn app(args: AppArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    // Hadoop's report, then what it lacks (deadline, processed fraction, answer).
    let app = client.typed(|rm| rm.app(&args.id))?;
    let yard = client.typed(|rm| rm.yard_app(&args.id))?;
    if args.json {
        return print_view(&json!({ "app": app, "yard": yard }));
    }
    let mut out = String::new();
    let now = crate::submit::epoch_ms();
    // Every field of Hadoop's report, by its wire name (sorted, as `--json` shows them).
    let fields = match serde_json::to_value(&app)? {
        Value::Object(fields) => fields,
        _ => Default::default(),
    };
    // Keys padded to the longest and two spaces, so that no key runs into its value
    // ("applicationPriority0" at a fixed 18).
    let width = fields
        .keys()
        .map(|k| k.len())
        .max()
        .unwrap_or(0)
        .max("processedFraction".len())
        + 2;
    for (k, v) in &fields {
        // Times as people read them (UTC), the raw ms in --json.
        let shown = match (k.as_str(), v.as_i64()) {
            ("startedTime" | "finishedTime", Some(ms)) => match date_time_text(ms) {
                t if ms > 0 => format!("{t} UTC"),
                dash => dash,
            },
            ("elapsedTime", Some(ms)) => elapsed_text(ms),
            ("deadlineMs", _) => deadline_line(yard.deadline_ms, yard.deadline_outcome, now),
            ("deadlineOutcome", _) => outcome_text(app.deadline_outcome).into(),
            ("trackingUrl" | "applicationType", _) if text(v).is_empty() => "-".into(),
            _ => text(v),
        };
        let _ = writeln!(out, "{k:<width$}{shown}");
    }
    if yard.answer.as_ref().and_then(AnswerJob::of).is_some() {
        // A MapReduce job's answer, as `yard submit` prints it.
        out.push('\n');
        out.push_str(&render(&Finished::from(&yard)));
    } else {
        let fraction = text(&json!(yard.processed_fraction));
        let _ = writeln!(out, "{:<width$}{fraction}", "processedFraction");
        let answer = yard.answer.as_ref().map(text).unwrap_or_default();
        let _ = writeln!(out, "{:<width$}{answer}", "answer");
    }
    crate::print(&out)?;
    Ok(())
}

/// Bad input if application `id` has ended: there is nothing left to change.
fn not_ended(client: &Client, id: &str) -> Result<()> {
    let state = client.typed(|rm| rm.app_state(id))?;
    if state.is_final() {
        return Err(BadInput(format!("application {id} has already ended: it is {state}")).into());
    }
    Ok(())
}

pub(crate) fn kill(args: AppArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    // The rm takes a second kill as a retry of the first; a person is told it is done already.
    not_ended(&client, &args.id)?;
    let state = client.typed(|rm| rm.kill(&args.id))?;
    if args.json {
        return print_view(&AppStateView { state });
    }
    crate::print(&format!("{} killed\n", args.id))?;
    Ok(())
}

/// Moves an application's deadline, or gives it one (`PUT /ws/v1/yard/apps/{id}/deadline`).
pub(crate) fn deadline(args: DeadlineArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    not_ended(&client, &args.id)?;
    let now = crate::submit::epoch_ms();
    let at = Deadline::after(now, args.after.as_millis().min(i64::MAX as u128) as i64);
    let app = client.typed(|rm| rm.set_deadline(&args.id, at))?;
    if args.json {
        return print_view(&YardAppReply { app });
    }
    crate::print(&format!(
        "{}: deadline {} ({} UTC)\n",
        args.id,
        deadline_text(app.deadline_ms.map(Deadline::epoch_ms), now),
        date_time_text(at.epoch_ms())
    ))?;
    Ok(())
}

pub(crate) fn nodes(args: NodesArgs) -> Result<()> {
    let states: Vec<NodeState> = match (&args.states, args.all) {
        (Some(given), _) => state_list("node state", given, NodeState::ALL)?,
        (None, true) => Vec::new(),
        (None, false) => vec![NodeState::Running],
    };
    let nodes = Client::new(&args.rm)?.typed(|rm| rm.nodes(&states))?;
    if args.json {
        return print_view(&NodesReply {
            nodes: NodeList { node: nodes },
        });
    }
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let mut row = vec![
                n.id.clone(),
                n.rack.clone(),
                n.state.to_string(),
                n.num_containers.to_string(),
                format!(
                    "{} MB/{} vc",
                    n.total_resource.memory, n.total_resource.v_cores
                ),
                verdict_cell(&n.overload),
            ];
            row.extend(load_cells(n.yard_load.as_ref()));
            row
        })
        .collect();
    let mut out = format!("Total Nodes:{}\n", rows.len());
    out.push_str(&table(
        &[
            "NODE",
            "RACK",
            "STATE",
            "CONTAINERS",
            "CAPACITY",
            "VERDICT",
            "LOAD",
            "CPU",
            "MEM",
            "DISK R+W",
        ],
        &rows,
    ));
    crate::print(&out)?;
    Ok(())
}

/// The overload classifier's verdict on a node: `good`, `bad`, `unknown` (too little learned,
/// or no load yet), or `-` when the classifier is off.
fn verdict_cell(overload: &OverloadView) -> String {
    match overload.classifier {
        Classifier::On => overload.verdict.to_string(),
        Classifier::Off => "-".to_owned(),
    }
}

/// A node's last load sample as `yard nodes` shows it: 1-minute load per logical CPU, CPU and
/// memory in use, disk bytes read and written per second; `-` where the rm has no value.
pub(crate) fn load_cells(load: Option<&YardLoad>) -> [String; 4] {
    let dash = || "-".to_owned();
    let percent = |v: Option<f64>| v.map_or_else(dash, |p| format!("{p:.0}%"));
    [
        load.and_then(|l| l.load_per_core)
            .map_or_else(dash, |l| format!("{l:.2}")),
        percent(load.map(|l| l.sample.cpu_percent)),
        percent(load.map(|l| l.memory_used_fraction * 100.0)),
        load.map_or_else(dash, |l| {
            let bytes = l.sample.disk_read_bytes_per_s + l.sample.disk_write_bytes_per_s;
            format!("{}/s", human_rate(bytes))
        }),
    ]
}

/// Bytes in decimal units as people read a rate: `0 B`, `512 kB`, `1.2 MB`, `12 MB`.
pub(crate) fn human_rate(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes.max(0.0);
    let mut unit = 0;
    while value >= 999.5 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit > 0 && value < 9.95 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// An estimated quantity as one line: `12,345 (95 % CI 12,000 – 12,700; seen 6,100)`.
pub(crate) fn estimate_text(v: &Value) -> String {
    let num = |v: &Value| v.as_f64().map(|x| format!("{:.0}", x));
    match (num(&v["estimate"]), num(&v["low"]), num(&v["high"])) {
        (Some(e), Some(l), Some(h)) if l == h && l == e => e,
        (Some(e), Some(l), Some(h)) => format!("{e} (95 % CI {l} – {h}; seen {})", v["observed"]),
        (Some(e), Some(l), None) => format!("{e} (at least {l}; too few blocks for a bound)"),
        _ => format!("none (seen {})", v["observed"]),
    }
}

fn is_estimate(v: &Value) -> bool {
    v.get("estimate").is_some() && v.get("observed").is_some()
}

/// What [`render`] shows of an application with an answer: yard's view of it, or its view
/// as a MapReduce job.
pub(crate) struct Finished<'a> {
    id: &'a str,
    state: YarnApplicationState,
    final_status: FinalApplicationStatus,
    /// The rm's judgement (a job's view carries none: the master's own is shown).
    deadline_outcome: Option<DeadlineOutcome>,
    processed_fraction: Option<f64>,
    /// The master's answer, its own JSON.
    answer: Option<&'a Value>,
}

impl<'a> From<&'a YardAppView> for Finished<'a> {
    fn from(a: &'a YardAppView) -> Self {
        Finished {
            id: &a.id,
            state: a.state,
            final_status: a.final_status,
            deadline_outcome: a.deadline_outcome,
            processed_fraction: a.processed_fraction,
            answer: a.answer.as_ref(),
        }
    }
}

impl<'a> From<&'a JobView> for Finished<'a> {
    fn from(j: &'a JobView) -> Self {
        Finished {
            id: &j.id,
            state: j.state,
            final_status: j.final_status,
            deadline_outcome: None,
            processed_fraction: j.processed_fraction,
            answer: j.answer.as_ref(),
        }
    }
}

/// The answer for people: the job's line, then every estimated quantity, then top lists.
pub(crate) fn render(a: &Finished) -> String {
    let answer = a.answer.unwrap_or(&Value::Null);
    let mut out = String::new();
    let _ = writeln!(out, "{} {} {}", a.id, a.state, a.final_status);
    if let Some(job) = AnswerJob::of(answer) {
        // The rm's judgement when it gave one (it is the one `yard apps` shows), else the
        // master's own.
        let met = match a.deadline_outcome.or(job.times.outcome) {
            Some(DeadlineOutcome::Met) => "deadline met",
            Some(DeadlineOutcome::Empty) => "deadline NOT met: answered in time from no input",
            Some(DeadlineOutcome::Missed) => "deadline MISSED",
            Some(DeadlineOutcome::Pending) => "deadline pending",
            None => "no deadline",
        };
        let _ = writeln!(
            out,
            "policy {} · finished in {:.1} s{} · {met}",
            job.policy,
            job.times.completion_seconds,
            job.times
                .deadline_seconds
                .map(|d| format!(" of {d:.1} s"))
                .unwrap_or_default(),
        );
        let exact = if answer["exact"] == true {
            " · exact answer"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "processed {:.1} % of the input ({} of {} maps){exact}",
            100.0 * a.processed_fraction.unwrap_or(0.0),
            job.k,
            job.maps,
        );
    }
    if let Some(o) = answer["outputDataset"].as_object() {
        let missing = if o.get("complete") == Some(&Value::Bool(false)) {
            " (incomplete: reduces left unanswered by the deadline)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "output: dataset {}, {} of {} parts, {} bytes{missing} · yard data cat {}",
            text(&o["dataset"]),
            o["parts"],
            o["tasks"],
            o["bytes"],
            text(&o["dataset"]),
        );
    }
    let Some(fields) = answer.as_object() else {
        return out;
    };
    for (key, value) in fields {
        if is_estimate(value) {
            let _ = writeln!(out, "{key}: {}", estimate_text(value));
        }
    }
    for (key, value) in fields {
        let Some(rows) = value.as_array().filter(|r| !r.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "{key}:");
        for row in rows {
            let label = match row {
                Value::String(line) => line.clone(),
                _ => row
                    .as_object()
                    .and_then(|o| o.iter().find(|(_, v)| v.is_string()))
                    .map(|(_, v)| text(v))
                    .unwrap_or_else(|| row.to_string()),
            };
            if is_estimate(row) {
                let _ = writeln!(out, "  {label:<20} {}", estimate_text(row));
            } else {
                let _ = writeln!(out, "  {label}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_load_reads_in_short_cells() {
        let load = |per_core, cpu, memory, read, write| YardLoad {
            sample: yard_wire::telemetry::NodeTelemetry {
                cpu_percent: cpu,
                disk_read_bytes_per_s: read,
                disk_write_bytes_per_s: write,
                ..Default::default()
            },
            sampled_at: 1,
            load_per_core: per_core,
            memory_used_fraction: memory,
        };
        let busy = load(Some(1.5), 37.4, 0.755, 9e6, 3e6);
        assert_eq!(load_cells(Some(&busy)), ["1.50", "37%", "76%", "12 MB/s"]);
        assert_eq!(load_cells(None), ["-", "-", "-", "-"]);
        let unknown_cores = load(None, 0.0, 0.0, 0.0, 0.0);
        assert_eq!(load_cells(Some(&unknown_cores)), ["-", "0%", "0%", "0 B/s"]);
        for (bytes, shown) in [
            (0.0, "0 B"),
            (999.0, "999 B"),
            (999.6, "1.0 kB"),
            (1_234.0, "1.2 kB"),
            (512e3, "512 kB"),
            (1.25e6, "1.2 MB"),
            (12e6, "12 MB"),
            (2.5e9, "2.5 GB"),
            (3e15, "3000 TB"),
        ] {
            assert_eq!(human_rate(bytes), shown, "{bytes}");
        }
    }

    #[test]
    fn deadlines_and_quotas_read_as_people_read_them() {
        let now = 1_000_000;
        assert_eq!(deadline_text(Some(now + 90_000), now), "in 1m30s");
        assert_eq!(deadline_text(Some(now - 12_000), now), "12s ago");
        assert_eq!(deadline_text(Some(now + 7_200_000), now), "in 2h00m");
        assert_eq!(deadline_text(None, now), "-");
        let q = |containers, basis| QuotaView {
            stage: yard_wire::views::QuotaStage::Map,
            containers,
            maps: None,
            reduces: None,
            basis,
        };
        assert_eq!(quota_text(Some(&q(Some(11), QuotaBasis::Feasible))), "11");
        let infeasible = q(Some(64), QuotaBasis::Infeasible);
        assert_eq!(quota_text(Some(&infeasible)), "64 (infeasible)");
        let spare = q(Some(0), QuotaBasis::NoDeadline);
        assert_eq!(quota_text(Some(&spare)), "0 (spare only)");
        assert_eq!(
            quota_text(Some(&q(None, QuotaBasis::NoModel))),
            "- (no-model)"
        );
        assert_eq!(quota_text(None), "-");
    }

    #[test]
    fn times_and_spans_read_as_people_read_them() {
        // 2026-11-24 12:57:05.250 UTC.
        let t = 1_795_525_025_250;
        assert_eq!(date_time_text(t), "2026-11-24 12:57:05");
        assert_eq!(date_time_text(0), "-");
        assert_eq!(date_time_text(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(date_time_text(1), "1970-01-01 00:00:00");
        assert_eq!(clock_text(t, t + 3_600_000), "12:57:05");
        assert_eq!(clock_text(t, t + 86_400_000), "2026-11-24 12:57:05");
        assert_eq!(clock_text(0, t), "-");
        for (ms, shown) in [
            (0, "0s"),
            (-5, "0s"),
            (42_999, "42s"),
            (65_000, "1m 05s"),
            (3_599_000, "59m 59s"),
            (7_380_000, "2h 03m"),
            (273_600_000, "3d 04h"),
        ] {
            assert_eq!(elapsed_text(ms), shown, "{ms}");
        }
    }

    #[test]
    fn state_filters_name_the_valid_states() {
        assert_eq!(
            state_list(
                "application state",
                "running, accepted",
                YarnApplicationState::ALL
            )
            .unwrap(),
            [
                YarnApplicationState::Running,
                YarnApplicationState::Accepted
            ]
        );
        let err = state_list(
            "application state",
            "RUNNING,BOGUS",
            YarnApplicationState::ALL,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("\"BOGUS\""), "{err}");
        for state in YarnApplicationState::ALL {
            assert!(err.contains(state.name()), "{err}");
        }
        assert!(state_list("node state", " , ", NodeState::ALL).is_err());
        assert_eq!(
            state_list("node state", "lost", NodeState::ALL).unwrap(),
            [NodeState::Lost]
        );
    }

    #[test]
    fn durations_read_as_people_write_them() {
        for (text, secs) in [
            ("90s", 90.0),
            ("5m", 300.0),
            ("1h", 3600.0),
            ("500ms", 0.5),
            ("42", 42.0),
            ("1.5m", 90.0),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_secs_f64(secs)),
                "{text}"
            );
        }
        for bad in ["", "s", "5 parsecs", "-3s", "0", "1e99h", "1y"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(
                err.contains(bad.trim()) || err.contains("future"),
                "{bad}: {err}"
            );
        }
    }
}
