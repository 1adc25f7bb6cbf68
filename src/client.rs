//! The client commands over the rm's REST API: `yard submit`, `apps`, `app`, `kill`, `nodes`.
//! Tables for people, `--json` for scripts. A refusal from the rm (4xx) is bad input: exit 2.

use std::fmt::Write as _;

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use yard_rm::placement::Holder;

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

#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    rm: Rm,
    /// A built-in MapReduce application: wordcount, grep, topk, index, synthetic. The command
    /// waits for the answer and prints it (with --no-wait, only the id).
    #[arg(value_name = "APP", required_unless_present = "command")]
    app: Option<String>,
    /// Instead of an APP: the command the application's master runs (under /bin/sh -c).
    #[arg(long, conflicts_with = "app")]
    command: Option<String>,
    #[command(flatten)]
    job: crate::mapreduce::submit::JobArgs,
    /// The application's name [default: the APP, or yard-app].
    #[arg(long)]
    name: Option<String>,
    #[arg(long, default_value = "default")]
    queue: String,
    /// Submit as this user (admins only; a user submits as itself) [default: the user your
    /// token names].
    #[arg(long)]
    user: Option<String>,
    /// When the answer is wanted, from now: 90s, 5m, 1h, 500ms (a bare number is seconds).
    #[arg(long, value_parser = parse_duration)]
    deadline: Option<Duration>,
    /// Print the id and return at once (an APP's answer is then read with `yard app ID`).
    #[arg(long)]
    no_wait: bool,
    /// Give up waiting for an APP's answer (the job keeps running) after this many seconds.
    #[arg(long, default_value_t = 3600)]
    wait_secs: u64,
    /// Print yard's view of the finished application (answer included) as JSON.
    #[arg(long)]
    json: bool,
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

#[derive(Args)]
pub(crate) struct AppsArgs {
    #[command(flatten)]
    rm: Rm,
    /// Only these states, comma-separated (e.g. RUNNING,ACCEPTED).
    #[arg(long)]
    states: Option<String>,
    #[arg(long)]
    user: Option<String>,
    #[arg(long)]
    queue: Option<String>,
    #[arg(long)]
    limit: Option<usize>,
    #[arg(long)]
    json: bool,
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

#[derive(Args)]
pub(crate) struct NodesArgs {
    #[command(flatten)]
    rm: Rm,
    #[arg(long)]
    json: bool,
}

pub(crate) struct Client {
    base: String,
    http: reqwest::blocking::Client,
    token: Option<String>,
}

impl Client {
    pub(crate) fn new(rm: &Rm) -> Result<Self> {
        let base = rm.rm.trim_end_matches('/').to_owned();
        Ok(Client {
            token: crate::auth::bearer_for(&base, rm.token_file.as_deref())?,
            base,
            http: reqwest::blocking::Client::new(),
        })
    }

    /// A client of the rm at `url` that sends `token`.
    pub(crate) fn with_token(url: &str, token: Option<String>) -> Self {
        Client {
            base: url.trim_end_matches('/').to_owned(),
            http: reqwest::blocking::Client::new(),
            token,
        }
    }

    /// The bearer token this client sends, if it found one.
    pub(crate) fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Sends a request; a 4xx becomes [`BadInput`] carrying the rm's own explanation.
    pub(crate) fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .with_context(|| format!("cannot reach the rm at {}", self.base))?;
        let status = response.status();
        let value: Value = response.json().unwrap_or(Value::Null);
        if status == reqwest::StatusCode::UNAUTHORIZED {
            let error = value["error"].as_str().unwrap_or("no valid credential");
            let hint = crate::auth::NO_CREDENTIAL_HINT;
            return Err(BadInput(format!("the rm refused: {error}; {hint}")).into());
        }
        if status.is_client_error() {
            let error = value["error"].as_str().unwrap_or("refused").to_owned();
            let detail = match &value["detail"] {
                Value::Null => String::new(),
                Value::String(s) => format!(" ({s})"),
                other => format!(" ({other})"),
            };
            return Err(BadInput(format!("the rm refused: {error}{detail}")).into());
        }
        anyhow::ensure!(status.is_success(), "{url} answered {status}");
        Ok(value)
    }
}

fn print_json(v: &Value) -> Result<()> {
    crate::print(&(serde_json::to_string_pretty(v)? + "\n"))?;
    Ok(())
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

pub(crate) fn submit(args: SubmitArgs) -> Result<()> {
    use crate::mapreduce::submit;
    let client = Client::new(&args.rm)?;
    let name = args
        .name
        .clone()
        .or_else(|| args.app.clone())
        .unwrap_or_else(|| "yard-app".into());
    let owner = (name.as_str(), args.queue.as_str(), args.user.as_deref());
    let Some(app) = &args.app else {
        let command = args.command.as_deref().unwrap_or_default();
        let id = client.submit(owner.0, owner.1, owner.2, command)?;
        if let Some(after) = args.deadline {
            let deadline_ms = submit::epoch_ms() + after.as_millis() as i64;
            client.call(
                reqwest::Method::PUT,
                &format!("/ws/v1/yard/apps/{id}/deadline"),
                Some(json!({ "deadlineMs": deadline_ms })),
            )?;
        }
        crate::print(&format!("{id}\n"))?;
        return Ok(());
    };
    let job = submit::submit_job(&client, app, &args.job, args.deadline, owner)?;
    if args.no_wait {
        crate::print(&format!("{}\n", job.id))?;
        return Ok(());
    }
    eprintln!("submitted {}", job.id);
    let finished = submit::wait(&client, &job, Duration::from_secs(args.wait_secs))?;
    if args.json {
        print_json(&finished)?;
    } else {
        crate::print(&submit::render(&finished))?;
    }
    let status = text(&finished["app"]["finalStatus"]);
    if status != "SUCCEEDED" {
        anyhow::bail!(
            "{} ended {status}; see its master's log on the nodemanager",
            job.id
        );
    }
    Ok(())
}

impl Client {
    /// The nodes the rm lists as RUNNING, with their racks.
    pub(crate) fn running_nodes(&self) -> Result<Vec<Holder>> {
        let nodes = self.call(reqwest::Method::GET, "/ws/v1/cluster/nodes", None)?;
        Ok(nodes["nodes"]["node"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["state"] == "RUNNING")
            .map(|n| Holder {
                node: text(&n["id"]),
                rack: text(&n["rack"]),
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
        let created = self.call(
            reqwest::Method::POST,
            "/ws/v1/cluster/apps/new-application",
            None,
        )?;
        let id = text(&created["application-id"]);
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
        self.call(
            reqwest::Method::POST,
            "/ws/v1/cluster/apps",
            Some(submission),
        )?;
        Ok(id)
    }
}

pub(crate) fn apps(args: AppsArgs) -> Result<()> {
    let mut query = Vec::new();
    for (key, value) in [
        ("states", args.states),
        ("user", args.user),
        ("queue", args.queue),
        ("limit", args.limit.map(|l| l.to_string())),
    ] {
        if let Some(v) = value {
            query.push(format!("{key}={v}"));
        }
    }
    let path = format!(
        "/ws/v1/cluster/apps{}{}",
        if query.is_empty() { "" } else { "?" },
        query.join("&")
    );
    let reply = Client::new(&args.rm)?.call(reqwest::Method::GET, &path, None)?;
    if args.json {
        return print_json(&reply);
    }
    let rows: Vec<Vec<String>> = reply["apps"]["app"]
        .as_array()
        .map(|apps| {
            apps.iter()
                .map(|a| {
                    ["id", "name", "user", "queue", "state", "finalStatus"]
                        .iter()
                        .map(|k| text(&a[*k]))
                        .chain([format!("{:.0} %", a["progress"].as_f64().unwrap_or(0.0))])
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    crate::print(&table(
        &["ID", "NAME", "USER", "QUEUE", "STATE", "FINAL", "PROGRESS"],
        &rows,
    ))?;
    Ok(())
}

pub(crate) fn app(args: AppArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    let mut reply = client.call(
        reqwest::Method::GET,
        &format!("/ws/v1/cluster/apps/{}", args.id),
        None,
    )?;
    // Hadoop's report, then what it lacks (deadline, processed fraction, answer).
    let yard = client.call(
        reqwest::Method::GET,
        &format!("/ws/v1/yard/apps/{}", args.id),
        None,
    )?;
    reply["yard"] = yard["app"].clone();
    if args.json {
        return print_json(&reply);
    }
    let mut out = String::new();
    if let Some(fields) = reply["app"].as_object() {
        for (k, v) in fields {
            let _ = writeln!(out, "{k:<18}{}", text(v));
        }
    }
    if reply["yard"]["answer"]["job"].is_object() {
        // A MapReduce job's answer, as `yard submit` prints it.
        let _ = writeln!(
            out,
            "deadlineMs        {}",
            text(&reply["yard"]["deadlineMs"])
        );
        out.push('\n');
        out.push_str(&crate::mapreduce::submit::render(
            &json!({ "app": reply["yard"] }),
        ));
    } else {
        for k in ["deadlineMs", "processedFraction", "answer"] {
            let _ = writeln!(out, "{k:<18}{}", text(&reply["yard"][k]));
        }
    }
    crate::print(&out)?;
    Ok(())
}

pub(crate) fn kill(args: AppArgs) -> Result<()> {
    let path = format!("/ws/v1/cluster/apps/{}/state", args.id);
    let client = Client::new(&args.rm)?;
    // The rm takes a second kill as a retry of the first; a person is told it is done already.
    let state = client.call(reqwest::Method::GET, &path, None)?;
    if let Some(ended @ ("KILLED" | "FINISHED" | "FAILED")) = state["state"].as_str() {
        return Err(BadInput(format!(
            "application {} has already ended: it is {ended}",
            args.id
        ))
        .into());
    }
    let reply = client.call(
        reqwest::Method::PUT,
        &path,
        Some(json!({"state": "KILLED"})),
    )?;
    if args.json {
        return print_json(&reply);
    }
    crate::print(&format!("{} killed\n", args.id))?;
    Ok(())
}

pub(crate) fn nodes(args: NodesArgs) -> Result<()> {
    let reply = Client::new(&args.rm)?.call(reqwest::Method::GET, "/ws/v1/cluster/nodes", None)?;
    if args.json {
        return print_json(&reply);
    }
    let rows: Vec<Vec<String>> = reply["nodes"]["node"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|n| {
                    vec![
                        text(&n["id"]),
                        text(&n["rack"]),
                        text(&n["state"]),
                        text(&n["numContainers"]),
                        format!("{} MB", text(&n["totalResource"]["memory"])),
                        text(&n["totalResource"]["vCores"]),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    crate::print(&table(
        &["NODE", "RACK", "STATE", "CONTAINERS", "MEMORY", "VCORES"],
        &rows,
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
