//! Containers' logs on their node: served while a container runs and after (Hadoop's NM REST
//! names: `GET /ws/v1/node/containers/{id}/logs` lists, `…/logs/{file}` serves one, `?start=-N`
//! its last N bytes), and uploaded to the rm when the container ends (YARN's log aggregation),
//! cut to a per-container cap, so they outlive the node's pruning (`--keep-finished`) and the
//! node itself.
//!
//! Only `stdout` and `stderr` are logs ([`LOG_FILES`]): a container's directory holds whatever
//! its command wrote, which these routes do not serve. A reader needs the application's job
//! token, as its shuffle output does: the node holds no key to check a user's bearer token, so
//! users read through the rm, which checks theirs and calls here with the job token.

use std::io::SeekFrom;
use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;
use yard_wire::logs::{LOG_FILES, NodeContainerLogs, NodeLogFile, is_log_file, start_range};
use yard_wire::protocol::application_of;

use crate::data::{ApiError, DataDir, job_of, plain_name};

/// Where log aggregation sends what, and how much of each container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogAggregation {
    /// `yarn.log-aggregation-enable`: upload each ended container's logs to the rm.
    pub enabled: bool,
    /// The most bytes of one container's logs uploaded, shared equally by its files; beyond
    /// it a file keeps its last bytes and says it was cut.
    pub max_bytes_per_container: u64,
}

impl Default for LogAggregation {
    fn default() -> Self {
        LogAggregation {
            enabled: true,
            max_bytes_per_container: yard_wire::logs::DEFAULT_MAX_BYTES_PER_CONTAINER,
        }
    }
}

/// The container's directory under `work_dir`, once its id is a plain name of an application's
/// container and the caller holds that application's job token.
pub(crate) fn container_dir(
    work_dir: &Path,
    data: &DataDir,
    headers: &HeaderMap,
    container: &str,
) -> Result<PathBuf, ApiError> {
    let app = application_of(container).filter(|_| plain_name(container));
    let Some(app) = app else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "{container:?} is not a container id (container_[e<epoch>_]<timestamp>_<app>_<attempt>_<n>)"
            ),
        ));
    };
    job_of(data, headers, &app)?;
    Ok(work_dir.join(container))
}

fn no_logs(container: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no logs of {container} on this node: it did not run here, or its directory was pruned (--keep-finished); ended containers' logs are at the rm (yard logs)"
        ),
    )
}

/// The container's log files and their sizes.
pub(crate) async fn list(
    dir: &Path,
    container: &str,
    running: bool,
) -> Result<Json<NodeContainerLogs>, ApiError> {
    if !tokio::fs::metadata(dir).await.is_ok_and(|m| m.is_dir()) {
        return Err(no_logs(container));
    }
    let mut files = Vec::new();
    for file in LOG_FILES {
        if let Ok(m) = tokio::fs::symlink_metadata(dir.join(file)).await
            && m.is_file()
        {
            files.push(NodeLogFile {
                file: file.to_owned(),
                bytes: m.len(),
            });
        }
    }
    Ok(Json(NodeContainerLogs {
        container_id: container.to_owned(),
        running,
        files,
    }))
}

/// One log file, from `start` as Hadoop's `?start=` reads it (negative: the last bytes).
pub(crate) async fn serve(
    dir: &Path,
    container: &str,
    file: &str,
    start: Option<i64>,
) -> Result<Response, ApiError> {
    if !is_log_file(file) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "{file:?} is not a log file: a container's logs are {}",
                LOG_FILES.join(" and ")
            ),
        ));
    }
    let opened = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(dir.join(file))
        .await;
    let mut f = opened.map_err(|_| no_logs(container))?;
    let len = f.metadata().await.map_err(|_| no_logs(container))?.len();
    let range = start_range(start, len);
    f.seek(SeekFrom::Start(range.start))
        .await
        .map_err(|_| no_logs(container))?;
    let n = range.end - range.start;
    let headers = [
        (CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
        (CONTENT_LENGTH, n.to_string()),
    ];
    let body = Body::from_stream(ReaderStream::with_capacity(f.take(n), 64 << 10));
    Ok((headers, body).into_response())
}

/// The last `cap` bytes of `path` (all of a shorter file) and the file's length.
pub fn tail(path: &Path, cap: u64) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::{Read, Seek};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let from = len.saturating_sub(cap);
    f.seek(SeekFrom::Start(from))?;
    let mut kept = Vec::with_capacity((len - from) as usize);
    f.take(len - from).read_to_end(&mut kept)?;
    Ok((kept, len))
}

/// Who uploads to which rm: the node, its credential and HTTP client.
pub(crate) struct Uploader<'a> {
    pub http: &'a reqwest::Client,
    pub rm: &'a str,
    pub credential: &'a str,
    pub node: &'a str,
}

/// Uploads an ended container's logs to the rm, each file cut to its share of the cap,
/// retrying while the rm is unreachable (it may be restarting) for about `patience`.
pub(crate) async fn upload(
    to: &Uploader<'_>,
    dir: &Path,
    container: &str,
    settings: &LogAggregation,
    patience: Duration,
) -> Result<(), String> {
    let Uploader {
        http,
        rm,
        credential,
        node,
    } = to;
    let app = application_of(container).ok_or("not an application's container")?;
    let share = settings.max_bytes_per_container / LOG_FILES.len() as u64;
    for file in LOG_FILES {
        let path = dir.join(file);
        let (kept, total) = match tokio::task::spawn_blocking({
            let path = path.clone();
            move || tail(&path, share)
        })
        .await
        {
            Ok(Ok(read)) => read,
            // A container that never started has no files: nothing to keep.
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Ok(Err(e)) => return Err(format!("{}: {e}", path.display())),
            Err(e) => return Err(e.to_string()),
        };
        let url = format!(
            "{rm}/ws/v1/yard/apps/{app}/logs/{container}/{file}?node={node}&bytes={total}&cap={}",
            settings.max_bytes_per_container
        );
        let mut wait = Duration::from_millis(250);
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let sent = http
                .put(&url)
                .bearer_auth(credential)
                .header(CONTENT_TYPE.as_str(), "application/octet-stream")
                .body(kept.clone())
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => break,
                // The rm refused it for good (a 4xx): retrying would not change its mind.
                Ok(r) if r.status().is_client_error() => {
                    let status = r.status();
                    return Err(format!(
                        "{url} answered {status}: {}",
                        r.text().await.unwrap_or_default()
                    ));
                }
                outcome if tokio::time::Instant::now() >= deadline => {
                    return Err(format!("{url}: gave up: {outcome:?}"));
                }
                _ => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(tail(&path, 4).unwrap(), (b"6789".to_vec(), 10));
        assert_eq!(tail(&path, 40).unwrap(), (b"0123456789".to_vec(), 10));
    }
}
