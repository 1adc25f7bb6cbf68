//! An application's containers' logs (YARN's `yarn logs -applicationId`, over REST):
//! `GET /ws/v1/yard/apps/{id}/logs` lists them, `GET …/logs/{container}/{file}` serves one
//! (`?start=-N`: its last N bytes), for the application's owner and admins. An ended
//! container's logs come from the aggregated store ([`crate::logs`]), which its nodemanager
//! fills with `PUT …/logs/{container}/{file}` (its node credential); a running one's, or one
//! not uploaded yet, from its nodemanager, which the rm calls with the application's job token
//! (a nodemanager cannot check a user's token). A container whose node is lost and whose logs
//! were not uploaded is listed as missing, with why.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};
use yard_wire::auth::DataGrant;
use yard_wire::limits::echo;
use yard_wire::logs::{
    AppLogs, AppLogsReply, LOG_FILES, LogFile, LogSource, MissingLogs, NodeContainerLogs,
    is_log_file, start_range,
};
use yard_wire::protocol::application_of;

use super::caller::{Caller, owned};
use super::{ApiError, Reply, Rm, Route, ok_view};
use crate::cluster::NodeState;
use crate::logs::{LogStore, StoredContainer};

/// The largest upload of one log file the rm takes (a nodemanager's cap per container may
/// not exceed it).
pub const MAX_UPLOAD_BYTES: usize = 64 << 20;

/// Why a node's containers' logs are missing when it does not answer.
const SILENT: &str = "its node did not answer";

/// How long the rm waits for a nodemanager's logs before it lists them as missing.
const NODE_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) fn routes() -> Vec<Route> {
    vec![
        ("/ws/v1/yard/apps/{id}/logs", &["get"], get(app_logs)),
        (
            "/ws/v1/yard/apps/{id}/logs/{container}/{file}",
            &["get", "put"],
            get(log_file)
                .put(put_log_file)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES)),
        ),
    ]
}

/// Where a container's logs are listed (`amContainerLogs`, `logsLink`, `logUrl`): absolute
/// when the rm's URL is known.
pub(super) fn logs_link(rm: Option<&str>, app: &str, container: &str) -> String {
    format!(
        "{}/ws/v1/yard/apps/{app}/logs?container={container}",
        rm.unwrap_or_default()
    )
}

/// `?container=` of the listing: only that container's logs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Only {
    container: Option<String>,
}

fn store(rm: &Rm) -> Result<&LogStore, ApiError> {
    rm.logs.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "this rm keeps no aggregated logs (it runs without a state directory)",
            Value::Null,
        )
    })
}

fn io_error(e: std::io::Error) -> ApiError {
    let status = if e.kind() == std::io::ErrorKind::InvalidInput {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    ApiError::new(status, format!("the rm's log store: {e}"), Value::Null)
}

/// Runs the store's blocking IO off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.to_string(),
                Value::Null,
            )
        })?
        .map_err(io_error)
}

/// What the rm knows of `id`'s containers beside the store: those running (container → node),
/// the state of every node, and the job token its nodemanagers take.
struct Known {
    running: BTreeMap<String, String>,
    nodes: BTreeMap<String, NodeState>,
    job_token: String,
    /// Its masters' containers.
    masters: Vec<String>,
}

fn known(rm: &Rm, caller: &Caller, id: &str) -> Result<Known, ApiError> {
    rm.with(|c, _| {
        let app = owned(c, caller, id)?;
        let running = app
            .attempts
            .iter()
            .flat_map(|t| c.containers_of(id, t.attempt))
            .map(|(cid, m)| (cid.clone(), m.node_id.clone()))
            .collect();
        let nodes = c.nodes().map(|n| (n.node_id.clone(), n.state)).collect();
        let job_token = c.data_token(&DataGrant::Job { app: id.into() });
        let masters = app
            .attempts
            .iter()
            .map(|t| t.container_id.clone())
            .collect();
        Ok(Known {
            running,
            nodes,
            job_token,
            masters,
        })
    })
}

/// Why a node cannot give a container's logs, if it cannot.
fn unreachable_node(nodes: &BTreeMap<String, NodeState>, node: &str) -> Option<String> {
    match nodes.get(node) {
        Some(NodeState::Running) => None,
        Some(NodeState::Lost) => Some(format!(
            "node {node} was lost before it uploaded this container's logs"
        )),
        None if node.is_empty() => Some("the rm does not know its node".into()),
        None => Some(format!(
            "node {node} is unknown to the rm: it left before it uploaded this container's logs"
        )),
    }
}

pub(super) async fn app_logs(
    State(rm): State<Rm>,
    Path(id): Path<String>,
    query: Result<Query<Only>, QueryRejection>,
    caller: Caller,
) -> Reply {
    let Query(Only { container: only }) = query?;
    let known = known(&rm, &caller, &id)?;
    let store = store(&rm)?.clone();
    let http = store.http().clone();
    let app = id.clone();
    let mut containers: BTreeMap<String, StoredContainer> =
        blocking(move || store.list(&app)).await?;
    for (cid, node) in &known.running {
        containers.entry(cid.clone()).or_default().node = node.clone();
    }
    let mut reply = AppLogs {
        application_id: id.clone(),
        files: Vec::new(),
        missing: Vec::new(),
    };
    if let Some(only) = &only {
        containers.retain(|cid, _| cid == only);
    }
    // Each container's files or why they are missing, by container (the reply's order).
    let mut listed: BTreeMap<String, Result<Vec<LogFile>, MissingLogs>> = BTreeMap::new();
    // The containers to ask their nodes about, by node.
    let mut ask: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for (cid, c) in containers {
        let master = known.masters.contains(&cid);
        if !c.files.is_empty() && !known.running.contains_key(&cid) {
            let files = c.files.iter().map(|(file, stored)| LogFile {
                container_id: cid.clone(),
                node_id: c.node.clone(),
                file: file.clone(),
                bytes: stored.bytes,
                cut: stored.cut,
                source: LogSource::Aggregated,
                master,
            });
            listed.insert(cid.clone(), Ok(files.collect()));
        } else if let Some(reason) = unreachable_node(&known.nodes, &c.node) {
            let missing = MissingLogs {
                container_id: cid.clone(),
                node_id: c.node,
                reason,
            };
            listed.insert(cid, Err(missing));
        } else {
            ask.entry(c.node).or_default().push((cid, master));
        }
    }
    // The nodes are asked at once, each about its containers in turn: a listing waits for its
    // slowest node, not for the sum of them.
    let mut asking = tokio::task::JoinSet::new();
    for (node, containers) in ask {
        let (http, token) = (http.clone(), known.job_token.clone());
        asking.spawn(async move { node_listing(&http, &node, containers, &token).await });
    }
    while let Some(done) = asking.join_next().await {
        let done = done.map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.to_string(),
                Value::Null,
            )
        })?;
        listed.extend(done);
    }
    for (_, one) in listed {
        match one {
            Ok(files) => reply.files.extend(files),
            Err(missing) => reply.missing.push(missing),
        }
    }
    ok_view(&AppLogsReply { app_logs: reply })
}

/// What node `node` lists of each of `containers` (id, whether a master's): its files, or why
/// they are missing. A node that does not answer is asked once, not once per container.
async fn node_listing(
    http: &reqwest::Client,
    node: &str,
    containers: Vec<(String, bool)>,
    token: &str,
) -> Vec<(String, Result<Vec<LogFile>, MissingLogs>)> {
    let mut silent: Option<String> = None;
    let mut out = Vec::with_capacity(containers.len());
    for (cid, master) in containers {
        let missing = |reason: String| MissingLogs {
            container_id: cid.clone(),
            node_id: node.to_owned(),
            reason,
        };
        if let Some(reason) = &silent {
            out.push((cid.clone(), Err(missing(reason.clone()))));
            continue;
        }
        let url = format!("http://{node}/ws/v1/node/containers/{cid}/logs");
        let one = match node_get(http, &url, token).await {
            Ok(body) => match serde_json::from_slice::<NodeContainerLogs>(&body) {
                Ok(listing) => Ok(listing
                    .files
                    .into_iter()
                    .map(|f| LogFile {
                        container_id: cid.clone(),
                        node_id: node.to_owned(),
                        file: f.file,
                        bytes: f.bytes,
                        cut: false,
                        source: LogSource::Node,
                        master,
                    })
                    .collect()),
                Err(e) => Err(missing(format!("its node's listing cannot be read: {e}"))),
            },
            Err(why) => {
                if why.starts_with(SILENT) {
                    silent = Some(why.clone());
                }
                Err(missing(why))
            }
        };
        out.push((cid, one));
    }
    out
}

/// A nodemanager's answer to a GET with the job token; any failure as the reason to list.
async fn node_get(http: &reqwest::Client, url: &str, token: &str) -> Result<Bytes, String> {
    let reply = http
        .get(url)
        .bearer_auth(token)
        .timeout(NODE_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("{SILENT}: {e}"))?;
    let status = reply.status();
    let body = reply
        .bytes()
        .await
        .map_err(|e| format!("its node's answer broke off: {e}"))?;
    if !status.is_success() {
        let why = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
        return Err(format!("its node answered {status}: {why}"));
    }
    Ok(body)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Start {
    start: Option<i64>,
}

fn check_names(id: &str, container: &str, file: &str) -> Result<(), ApiError> {
    if application_of(container).as_deref() != Some(id) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("{} is not a container of {}", echo(container), echo(id)),
            Value::Null,
        ));
    }
    if !is_log_file(file) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "{} is not a log file: a container's logs are {}",
                echo(file),
                LOG_FILES.join(" and ")
            ),
            Value::Null,
        ));
    }
    Ok(())
}

fn text(bytes: Bytes) -> Reply {
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], bytes).into_response())
}

pub(super) async fn log_file(
    State(rm): State<Rm>,
    Path((id, container, file)): Path<(String, String, String)>,
    query: Result<Query<Start>, QueryRejection>,
    caller: Caller,
) -> Reply {
    let Query(Start { start }) = query?;
    let known = known(&rm, &caller, &id)?;
    check_names(&id, &container, &file)?;
    let store = store(&rm)?.clone();
    let http = store.http().clone();
    let (app, c, f) = (id.clone(), container.clone(), file.clone());
    let (stored, noted) = blocking(move || {
        let stored = store.read(&app, &c, &f)?;
        Ok((stored, store.node_of(&app, &c)))
    })
    .await?;
    if let Some(all) = stored.filter(|_| !known.running.contains_key(&container)) {
        let range = start_range(start, all.len() as u64);
        return text(Bytes::from(all).slice(range.start as usize..range.end as usize));
    }
    let Some(node) = known.running.get(&container).cloned().or(noted) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("the rm knows no logs of {}", echo(&container)),
            json!("see GET /ws/v1/yard/apps/{id}/logs for the containers it knows"),
        ));
    };
    if let Some(reason) = unreachable_node(&known.nodes, &node) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, reason, Value::Null));
    }
    let mut url = format!("http://{node}/ws/v1/node/containers/{container}/logs/{file}");
    if let Some(s) = start {
        url.push_str(&format!("?start={s}"));
    }
    let body = node_get(&http, &url, &known.job_token)
        .await
        .map_err(|why| ApiError::new(StatusCode::BAD_GATEWAY, why, Value::Null))?;
    text(body)
}

/// An upload's query: the node it comes from, how many bytes the container wrote, and the
/// node's per-container cap.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Upload {
    node: String,
    bytes: u64,
    cap: u64,
}

pub(super) async fn put_log_file(
    State(rm): State<Rm>,
    Path((id, container, file)): Path<(String, String, String)>,
    query: Result<Query<Upload>, QueryRejection>,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Reply {
    caller.any_node()?;
    let Query(upload) = query?;
    caller.node(&upload.node)?;
    check_names(&id, &container, &file)?;
    rm.with(|c, _| {
        c.app(&id)
            .map(drop)
            .ok_or_else(|| crate::cluster::ClusterError::UnknownApp(id.clone()))
    })?;
    let kept = body.map_err(|r| {
        ApiError::new(
            r.status(),
            format!("the log upload cannot be read: {}", r.body_text()),
            json!({ "maxBytes": MAX_UPLOAD_BYTES }),
        )
    })?;
    let store = store(&rm)?.clone();
    let node = upload.node;
    let (a, c) = (id.clone(), container.clone());
    let s = store.clone();
    if let Some(ran) = blocking(move || Ok(s.node_of(&a, &c))).await?
        && ran != node
    {
        return Err(ApiError::forbidden(format!(
            "{container} ran on node {ran}, not on {}: only its node uploads its logs",
            echo(&node)
        )));
    }
    let stored = blocking(move || {
        store.put(
            &id,
            &container,
            &node,
            &file,
            upload.bytes.max(kept.len() as u64),
            upload.cap,
            &kept,
        )
    })
    .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(yard_wire::logs::LogStored {
            bytes: stored.bytes,
            cut: stored.cut,
        }),
    )
        .into_response())
}
