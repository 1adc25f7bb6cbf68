//! The node's data directory and the HTTP routes over it (DESIGN.md "Data"):
//!
//! ```text
//! <work_dir>/data/blocks/<dataset>/<block>                          dataset blocks (PUT by clients)
//! <work_dir>/data/shuffle/<application>/<map>/<partition>           map outputs (written by tasks)
//! ```
//!
//! Every name that comes from outside is checked by [`plain_name`] before it touches a path,
//! so no request reaches a file outside these trees. Every route but the inventory needs a
//! data-plane grant signed with the cluster's data key (which the node gets when it registers):
//! an application's job token for its shuffle output and for reading blocks (Hadoop's job
//! token), a dataset's upload grant for writing (and reading) that dataset's blocks. Bodies stream both ways: a 64 MiB block
//! (or a 1 GiB one) never sits in the node's memory.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode, Uri, header::AUTHORIZATION};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use http_body_util::BodyExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_util::io::ReaderStream;
use yard_wire::auth::{DataGrant, DataKey, bearer_of};
use yard_wire::protocol::application_of;

/// The longest name a dataset, block, application, map or partition may have.
pub const MAX_NAME: usize = 200;

/// In a temporary upload's name: a character no valid name has, so a temporary file can never
/// be taken for a block nor clash with one.
const PARTIAL: char = '~';

/// Whether `s` may name a file or directory: 1 to [`MAX_NAME`] ASCII letters, digits, `_`,
/// `-` and `.`, and not `.` or `..` — no separators, no traversal, nothing to quote.
pub fn plain_name(s: &str) -> bool {
    (1..=MAX_NAME).contains(&s.len())
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Limits of the data service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSettings {
    /// The largest block a PUT may upload (413 beyond).
    pub max_block_bytes: u64,
}

impl Default for DataSettings {
    fn default() -> Self {
        // 16 × DESIGN.md's default 64 MiB block: room for larger blocks, a bound on a runaway upload.
        DataSettings {
            max_block_bytes: 1 << 30,
        }
    }
}

/// Why a container gets no data environment.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error(
        "container id {0:?} is not of YARN's form container_[e<epoch>_]<app timestamp>_<app>_<attempt>_<n>, so its application (and shuffle directory) is unknown"
    )]
    NoApplication(String),
    #[error("cannot create {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// One block in the inventory; sorts by dataset, then block.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Block {
    pub dataset: String,
    pub block: String,
    pub bytes: u64,
}

/// `<work_dir>/data`, absolute.
#[derive(Debug)]
pub struct DataDir {
    root: PathBuf,
    settings: DataSettings,
    /// The cluster's data key, once the node has registered: it checks every grant.
    key: std::sync::RwLock<Option<DataKey>>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl DataDir {
    /// Creates the data directory under `work_dir` (absolute, since containers run elsewhere)
    /// and removes uploads a previous run left half-written.
    pub fn open(work_dir: &Path, settings: DataSettings) -> io::Result<DataDir> {
        let root = work_dir.join("data");
        for sub in ["blocks", "shuffle"] {
            std::fs::create_dir_all(root.join(sub))?;
        }
        let data = DataDir {
            root: std::fs::canonicalize(root)?,
            settings,
            key: std::sync::RwLock::new(None),
        };
        for dataset in std::fs::read_dir(data.blocks_dir())?.flatten() {
            for entry in std::fs::read_dir(dataset.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if entry.file_name().to_string_lossy().contains(PARTIAL) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(data)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The key grants are checked with (the rm hands it over at registration).
    pub fn set_key(&self, key: DataKey) {
        *self.key.write().unwrap_or_else(|p| p.into_inner()) = Some(key);
    }

    fn key(&self) -> Option<DataKey> {
        self.key.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The grant the request's bearer token carries: 401 without a valid one, 503 before the
    /// node has the key to check it.
    fn grant(&self, headers: &HeaderMap) -> Result<DataGrant, ApiError> {
        let key = self.key().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node has not registered with the rm yet, so it cannot check credentials",
            )
        })?;
        let unauthorized = |e: yard_wire::auth::AuthError| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                format!("{e} (a job token or upload grant)"),
            )
        };
        let header = headers
            .get(AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or_default());
        let token = bearer_of(header).map_err(unauthorized)?;
        key.verify(token, now_ms()).map_err(unauthorized)
    }

    pub fn blocks_dir(&self) -> PathBuf {
        self.root.join("blocks")
    }

    /// Deletes dataset `name`'s blocks (the rm's `deleteDatasets`: removed, or a failed job's
    /// output parts); the bytes freed. A name that is not plain, or no such directory, deletes
    /// nothing.
    pub async fn delete_dataset(&self, name: &str) -> io::Result<u64> {
        if !plain_name(name) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a dataset name"),
            ));
        }
        let dir = self.blocks_dir().join(name);
        tokio::task::spawn_blocking(move || {
            let freed = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum();
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(freed),
            }
        })
        .await
        .map_err(io::Error::other)?
    }

    pub fn shuffle_dir(&self) -> PathBuf {
        self.root.join("shuffle")
    }

    /// The variables a container gets: `YARD_DATA_DIR` (the blocks, to read) and
    /// `YARD_SHUFFLE_DIR` (its application's map outputs, created here so a task can write
    /// `<map>/<partition>` into it at once).
    pub fn container_env(&self, container_id: &str) -> Result<Vec<(String, String)>, EnvError> {
        let app = application_of(container_id)
            .ok_or_else(|| EnvError::NoApplication(container_id.to_owned()))?;
        let job_token = self.key().map(|k| k.job_token(&app));
        let shuffle = self.shuffle_dir().join(app);
        std::fs::create_dir_all(&shuffle).map_err(|source| EnvError::Io {
            path: shuffle.clone(),
            source,
        })?;
        let text = |p: PathBuf| p.to_string_lossy().into_owned();
        let mut env = vec![
            ("YARD_DATA_DIR".into(), text(self.blocks_dir())),
            ("YARD_SHUFFLE_DIR".into(), text(shuffle)),
        ];
        // The application's job token: its tasks read blocks and shuffle output with it.
        env.extend(job_token.map(|t| ("YARD_JOB_TOKEN".to_owned(), t)));
        Ok(env)
    }

    /// Every block on this node, sorted.
    pub async fn inventory(&self) -> io::Result<Vec<Block>> {
        let dir = self.blocks_dir();
        tokio::task::spawn_blocking(move || scan(&dir))
            .await
            .map_err(io::Error::other)?
    }
}

/// Lists `blocks/<dataset>/<block>` files, skipping anything that is not a plain name (such
/// as an upload in progress). Entries that vanish while being listed are skipped too.
fn scan(blocks: &Path) -> io::Result<Vec<Block>> {
    let mut out = Vec::new();
    for dataset in std::fs::read_dir(blocks)?.flatten() {
        let dataset_name = dataset.file_name().to_string_lossy().into_owned();
        if !plain_name(&dataset_name) || !dataset.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dataset.path()) else {
            continue;
        };
        for entry in entries.flatten() {
            let block = entry.file_name().to_string_lossy().into_owned();
            match entry.metadata() {
                Ok(m) if m.is_file() && plain_name(&block) => out.push(Block {
                    dataset: dataset_name.clone(),
                    block,
                    bytes: m.len(),
                }),
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A refusal in the shape the nodemanager and the rm use: `{"error": …, "detail": …}`.
#[derive(Debug)]
pub struct ApiError(StatusCode, String, Value);

impl ApiError {
    pub(crate) fn new(status: StatusCode, error: impl Into<String>) -> Self {
        ApiError(status, error.into(), Value::Null)
    }

    fn io(e: io::Error) -> Self {
        let status = if e.kind() == io::ErrorKind::StorageFull {
            StatusCode::INSUFFICIENT_STORAGE
        } else {
            StatusCode::INTERNAL_SERVER_ERROR
        };
        ApiError::new(status, format!("the node's data directory failed: {e}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.1, "detail": self.2 });
        (self.0, axum::Json(body)).into_response()
    }
}

/// The URL's names, each checked by [`plain_name`] (a percent-encoded `/`, `..`, a NUL… are
/// refused here, before any path is built).
fn names<const N: usize>(
    path: Result<UrlPath<Vec<(String, String)>>, PathRejection>,
) -> Result<[String; N], ApiError> {
    let UrlPath(pairs) = path.map_err(|r| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the path cannot be read: {}", r.body_text()),
        )
    })?;
    if let Some((what, value)) = pairs.iter().find(|(_, v)| !plain_name(v)) {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!(
                "{what} {value:?} is not a plain name: use 1 to {MAX_NAME} ASCII letters, digits, '_', '-' and '.', and not '.' or '..'"
            ),
            json!({ "parameter": what, "value": value }),
        ));
    }
    let values: Vec<String> = pairs.into_iter().map(|(_, v)| v).collect();
    values.try_into().map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "route and handler disagree on the path",
        )
    })
}

/// The data service's routes, with their state; the daemon merges them into its router.
pub fn router(data: Arc<DataDir>) -> Router {
    Router::new()
        .route("/ws/v1/node/blocks", get(list_blocks))
        .route(
            "/ws/v1/node/blocks/{dataset}/{block}",
            get(get_block).put(put_block),
        )
        // Hadoop's ShuffleHandler serves `/mapOutput?job=&map=&reduce=`; yard names a partition
        // by path segments so the router and `names` check every part before a path is built,
        // and the URL mirrors the directory it reads.
        .route(
            "/ws/v1/node/shuffle/{application}/{map}/{partition}",
            get(get_partition),
        )
        .route("/ws/v1/node/shuffle/{application}", delete(delete_shuffle))
        // The whole node's fallback (the daemon merges this router into its own).
        .fallback(unrouted)
        .with_state(data)
}

/// Under the data routes, a path with the wrong number of segments is a name holding a `/`:
/// 400. Elsewhere, an unknown route: 404. Both in the JSON error shape.
async fn unrouted(uri: Uri) -> ApiError {
    let path = uri.path();
    if ["/ws/v1/node/blocks/", "/ws/v1/node/shuffle/"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "names cannot contain '/': blocks are /ws/v1/node/blocks/{dataset}/{block}, map outputs /ws/v1/node/shuffle/{application}/{map}/{partition}",
        );
    }
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no route {path} on this node"),
    )
}

async fn list_blocks(State(data): State<Arc<DataDir>>) -> Result<Response, ApiError> {
    let blocks = data.inventory().await.map_err(ApiError::io)?;
    Ok(axum::Json(json!({ "blocks": blocks })).into_response())
}

/// A half-written upload, removed when dropped unless it was renamed into place: an upload
/// that fails, is too large, or whose client goes away mid-body leaves nothing.
struct Partial(Option<PathBuf>);

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Streams the body into a temporary file beside the block and renames it into place, so a
/// reader sees the old block or the new one, never half of one (an open GET keeps reading
/// the file it opened).
fn forbidden(what: String) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, what)
}

async fn put_block(
    State(data): State<Arc<DataDir>>,
    headers: HeaderMap,
    path: Result<UrlPath<Vec<(String, String)>>, PathRejection>,
    mut body: Body,
) -> Result<Response, ApiError> {
    let [dataset, block] = names(path)?;
    match data.grant(&headers)? {
        DataGrant::Upload { dataset: d, .. } if d == dataset => {}
        _ => {
            return Err(forbidden(format!(
                "writing dataset {dataset}'s blocks needs its upload grant (POST /ws/v1/yard/datasets/{dataset}/upload-grant at the rm)"
            )));
        }
    }
    let limit = data.settings.max_block_bytes;
    let too_large = || {
        ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a block may have at most {limit} bytes"),
            json!({ "maxBlockBytes": limit }),
        )
    };
    // A declared Content-Length over the limit is refused before anything is written.
    if body.size_hint().lower() > limit {
        return Err(too_large());
    }
    let dir = data.blocks_dir().join(&dataset);
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(ApiError::io)?;
    static UPLOADS: AtomicU64 = AtomicU64::new(0);
    let n = UPLOADS.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{block}{PARTIAL}{n}"));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .await
        .map_err(ApiError::io)?;
    let mut partial = Partial(Some(tmp.clone()));
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("the upload broke off: {e}"),
            )
        })?;
        if let Ok(chunk) = frame.into_data() {
            bytes += chunk.len() as u64;
            if bytes > limit {
                return Err(too_large());
            }
            file.write_all(&chunk).await.map_err(ApiError::io)?;
        }
    }
    // On disk before it is visible, so a crash cannot leave a renamed but empty block.
    file.flush().await.map_err(ApiError::io)?;
    file.sync_all().await.map_err(ApiError::io)?;
    drop(file);
    let target = dir.join(&block);
    let replaced = tokio::fs::symlink_metadata(&target).await.is_ok();
    tokio::fs::rename(&tmp, &target)
        .await
        .map_err(ApiError::io)?;
    partial.0 = None;
    let status = if replaced {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let body = json!({ "dataset": dataset, "block": block, "bytes": bytes });
    Ok((status, axum::Json(body)).into_response())
}

async fn get_block(
    State(data): State<Arc<DataDir>>,
    headers: HeaderMap,
    path: Result<UrlPath<Vec<(String, String)>>, PathRejection>,
) -> Result<Response, ApiError> {
    let [dataset, block] = names(path)?;
    match data.grant(&headers)? {
        DataGrant::Job { .. } => {}
        DataGrant::Upload { dataset: d, .. } | DataGrant::Read { dataset: d, .. }
            if d == dataset => {}
        DataGrant::Upload { .. } | DataGrant::Read { .. } => {
            return Err(forbidden(format!(
                "this grant is for another dataset than {dataset}"
            )));
        }
    }
    let file = data.blocks_dir().join(&dataset).join(&block);
    stream(&file, || {
        format!("no block {block} of dataset {dataset} on this node")
    })
    .await
}

/// A map output partition. The master fetches it only after the map reported success, so
/// the file is complete by then.
/// The request carries `app`'s job token.
pub(crate) fn job_of(data: &DataDir, headers: &HeaderMap, app: &str) -> Result<(), ApiError> {
    match data.grant(headers)? {
        DataGrant::Job { app: a } if a == app => Ok(()),
        _ => Err(forbidden(format!(
            "{app}'s map outputs need {app}'s job token (its containers get it as YARD_JOB_TOKEN)"
        ))),
    }
}

async fn get_partition(
    State(data): State<Arc<DataDir>>,
    headers: HeaderMap,
    path: Result<UrlPath<Vec<(String, String)>>, PathRejection>,
) -> Result<Response, ApiError> {
    let [app, map, partition] = names(path)?;
    job_of(&data, &headers, &app)?;
    let file = data.shuffle_dir().join(&app).join(&map).join(&partition);
    stream(&file, || {
        format!("no partition {partition} of map {map} of {app} on this node")
    })
    .await
}

/// Removes an application's map outputs (its master calls this when the job ends).
async fn delete_shuffle(
    State(data): State<Arc<DataDir>>,
    headers: HeaderMap,
    path: Result<UrlPath<Vec<(String, String)>>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let [app] = names(path)?;
    job_of(&data, &headers, &app)?;
    // remove_dir_all removes a symlink itself, never what it points to.
    match tokio::fs::remove_dir_all(data.shuffle_dir().join(app)).await {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(StatusCode::NO_CONTENT),
        Err(e) => Err(ApiError::io(e)),
    }
}

/// Streams a regular file in 64 KiB chunks; anything else (absent, a directory, a symlink a
/// task planted) is a 404.
async fn stream(path: &Path, missing: impl FnOnce() -> String) -> Result<Response, ApiError> {
    let absent = || ApiError::new(StatusCode::NOT_FOUND, missing());
    let opened = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .await;
    let file = match opened {
        Ok(f) => f,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) || e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) =>
        {
            return Err(absent());
        }
        Err(e) => return Err(ApiError::io(e)),
    };
    let meta = file.metadata().await.map_err(ApiError::io)?;
    if !meta.is_file() {
        return Err(absent());
    }
    let headers = [
        (CONTENT_TYPE, "application/octet-stream".to_owned()),
        (CONTENT_LENGTH, meta.len().to_string()),
    ];
    let body = Body::from_stream(ReaderStream::with_capacity(file, 64 << 10));
    Ok((headers, body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{Method, Request};
    use tower::ServiceExt;

    fn key() -> DataKey {
        yard_wire::auth::ClusterSecret::new([5; 32]).data_key()
    }

    fn setup(max_block_bytes: u64) -> (tempfile::TempDir, Arc<DataDir>, Router) {
        let work = tempfile::tempdir().unwrap();
        let data = Arc::new(DataDir::open(work.path(), DataSettings { max_block_bytes }).unwrap());
        data.set_key(key());
        let router = router(data.clone());
        (work, data, router)
    }

    /// The grant the rightful caller of `uri` holds: the dataset's upload grant for blocks,
    /// the application's job token for map outputs.
    fn rightful(uri: &str) -> Option<String> {
        let parts: Vec<&str> = uri.split('/').collect();
        match parts.get(4..6)? {
            ["blocks", dataset] => Some(key().issue(&DataGrant::Upload {
                dataset: (*dataset).to_owned(),
                expires_ms: i64::MAX,
            })),
            ["shuffle", app] => Some(key().job_token(app)),
            _ => None,
        }
    }

    async fn call(router: &Router, method: Method, uri: &str, body: Body) -> (StatusCode, Vec<u8>) {
        let mut request = Request::builder().method(method).uri(uri);
        if let Some(token) = rightful(uri) {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(body).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, bytes.to_vec())
    }

    fn error_of(body: &[u8]) -> String {
        let v: Value = serde_json::from_slice(body).expect("a JSON error body");
        assert!(v.get("detail").is_some(), "{v}");
        v["error"].as_str().expect("an error message").to_owned()
    }

    /// Every path under `dir` with its size (0 for directories), sorted.
    fn tree(dir: &Path) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            out.push((entry.path(), if meta.is_dir() { 0 } else { meta.len() }));
            if meta.is_dir() {
                out.extend(tree(&entry.path()));
            }
        }
        out.sort();
        out
    }

    fn files(dir: &Path) -> Vec<PathBuf> {
        let all = tree(dir);
        all.into_iter()
            .filter(|(p, _)| p.is_file())
            .map(|(p, _)| p)
            .collect()
    }

    /// Deterministic bytes that are not a repeating pattern of short period.
    fn noise(len: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// A body in chunks of `chunk` bytes with no declared length, as a chunked upload.
    fn chunked(bytes: Vec<u8>, chunk: usize) -> Body {
        Body::from_stream(ReaderStream::with_capacity(io::Cursor::new(bytes), chunk))
    }

    #[test]
    fn plain_names_and_applications() {
        for ok in ["a", "block-0001", "x.y_z", "...", &"n".repeat(MAX_NAME)] {
            assert!(plain_name(ok), "{ok:?}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "a b",
            "a\0",
            "é",
            "a~1",
            &"n".repeat(MAX_NAME + 1),
        ] {
            assert!(!plain_name(bad), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_multi_mib_block_round_trips_byte_for_byte_and_is_listed() {
        let (_work, data, router) = setup(64 << 20);
        let bytes = noise(5 << 20 | 12345);
        let uri = "/ws/v1/node/blocks/words/blk_0";
        let (status, body) = call(&router, Method::PUT, uri, chunked(bytes.clone(), 100_000)).await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "{}",
            String::from_utf8_lossy(&body)
        );
        let request = Request::get(uri)
            .header(AUTHORIZATION, format!("Bearer {}", key().job_token("app")))
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[CONTENT_LENGTH], bytes.len().to_string());
        let got = response.into_body().collect().await.unwrap().to_bytes();
        assert!(got[..] == bytes[..], "the block came back different");
        assert_eq!(
            files(&data.blocks_dir()),
            vec![data.blocks_dir().join("words/blk_0")]
        );
    }

    #[tokio::test]
    async fn deleting_a_dataset_removes_its_blocks_and_no_others() {
        let (_work, data, router) = setup(1 << 20);
        for (uri, body) in [("a/1", "111"), ("a/2", "22"), ("b/1", "1")] {
            let uri = format!("/ws/v1/node/blocks/{uri}");
            let (status, _) = call(&router, Method::PUT, &uri, Body::from(body)).await;
            assert_eq!(status, StatusCode::CREATED);
        }
        assert_eq!(data.delete_dataset("a").await.unwrap(), 5);
        assert_eq!(
            files(&data.blocks_dir()),
            vec![data.blocks_dir().join("b/1")]
        );
        // Again, or one never held: nothing to delete.
        assert_eq!(data.delete_dataset("a").await.unwrap(), 0);
        // A name that would leave the blocks directory deletes nothing.
        for bad in ["..", "", "b/../b", "."] {
            assert!(data.delete_dataset(bad).await.is_err(), "{bad:?}");
        }
        assert_eq!(files(&data.blocks_dir()).len(), 1);
    }

    #[tokio::test]
    async fn a_second_put_replaces_the_block() {
        let (_work, data, router) = setup(1 << 20);
        let uri = "/ws/v1/node/blocks/d/b";
        let (status, _) = call(&router, Method::PUT, uri, Body::from("first version")).await;
        assert_eq!(status, StatusCode::CREATED);
        let (status, body) = call(&router, Method::PUT, uri, Body::from("second")).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v, json!({"dataset": "d", "block": "b", "bytes": 6}));
        assert_eq!(
            call(&router, Method::GET, uri, Body::empty()).await,
            (StatusCode::OK, b"second".to_vec())
        );
        assert_eq!(
            files(&data.blocks_dir()).len(),
            1,
            "no temporary file is left"
        );
    }

    #[tokio::test]
    async fn the_inventory_lists_blocks_sorted_and_absent_ones_are_404() {
        let (_work, data, router) = setup(1 << 20);
        assert_eq!(
            call(&router, Method::GET, "/ws/v1/node/blocks", Body::empty()).await,
            (StatusCode::OK, br#"{"blocks":[]}"#.to_vec())
        );
        for (uri, body) in [("b/2", "22"), ("a/1", "1"), ("b/10", "")] {
            let (status, _) = call(
                &router,
                Method::PUT,
                &format!("/ws/v1/node/blocks/{uri}"),
                Body::from(body),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED);
        }
        // Leftovers that are not blocks: an upload in progress, a stray directory.
        std::fs::write(data.blocks_dir().join("a/1~99"), "partial").unwrap();
        std::fs::create_dir(data.blocks_dir().join("a/sub")).unwrap();
        let (status, body) = call(&router, Method::GET, "/ws/v1/node/blocks", Body::empty()).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            json!({"blocks": [
                {"dataset": "a", "block": "1", "bytes": 1},
                {"dataset": "b", "block": "10", "bytes": 0},
                {"dataset": "b", "block": "2", "bytes": 2},
            ]})
        );
        let (status, body) = call(
            &router,
            Method::GET,
            "/ws/v1/node/blocks/a/2",
            Body::empty(),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(error_of(&body).contains("no block 2 of dataset a"));
        let (status, _) = call(
            &router,
            Method::GET,
            "/ws/v1/node/blocks/a/sub",
            Body::empty(),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "a directory is no block");
        // A restart sweeps the upload that never finished.
        DataDir::open(&data.root().join(".."), DataSettings::default()).unwrap();
        assert!(!data.blocks_dir().join("a/1~99").exists());
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413_and_leave_nothing() {
        let (_work, data, router) = setup(1024);
        let uri = "/ws/v1/node/blocks/d/big";
        // Declared too large: refused before reading.
        let (status, body) = call(&router, Method::PUT, uri, Body::from(vec![7u8; 1025])).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(error_of(&body).contains("1024"));
        // Undeclared: refused once the count passes the limit, the partial file removed.
        let (status, _) = call(&router, Method::PUT, uri, chunked(vec![7u8; 3 * 512], 512)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(files(data.root()), Vec::<PathBuf>::new());
        // Exactly the limit is fine.
        let (status, _) = call(&router, Method::PUT, uri, chunked(vec![7u8; 1024], 500)).await;
        assert_eq!(status, StatusCode::CREATED);
    }

    #[tokio::test]
    async fn traversal_and_bad_names_are_400_and_touch_nothing() {
        let (work, data, router) = setup(1 << 20);
        std::fs::write(work.path().join("secret"), "keep").unwrap();
        let (status, _) = call(
            &router,
            Method::PUT,
            "/ws/v1/node/blocks/d/b",
            Body::from("x"),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
        std::fs::create_dir_all(data.shuffle_dir().join("app/m")).unwrap();
        std::fs::write(data.shuffle_dir().join("app/m/0"), "out").unwrap();
        let before = tree(work.path());
        let long = "n".repeat(MAX_NAME + 1);
        let cases = [
            (Method::PUT, "/ws/v1/node/blocks/../secret".to_owned()),
            (Method::PUT, "/ws/v1/node/blocks/d/..".to_owned()),
            (Method::PUT, "/ws/v1/node/blocks/%2e%2e/secret".to_owned()),
            (
                Method::PUT,
                "/ws/v1/node/blocks/..%2F..%2F/secret".to_owned(),
            ),
            (
                Method::PUT,
                "/ws/v1/node/blocks/d/%2Fetc%2Fpasswd".to_owned(),
            ),
            (Method::PUT, "/ws/v1/node/blocks/d/a/b".to_owned()),
            (Method::PUT, "/ws/v1/node/blocks/d/b%00".to_owned()),
            (Method::PUT, "/ws/v1/node/blocks/d/b%20c".to_owned()),
            (Method::PUT, "/ws/v1/node/blocks/d/%FF".to_owned()),
            (Method::PUT, format!("/ws/v1/node/blocks/d/{long}")),
            (Method::GET, "/ws/v1/node/blocks/../secret".to_owned()),
            (
                Method::GET,
                "/ws/v1/node/blocks/d/..%2F..%2F..%2Fsecret".to_owned(),
            ),
            (Method::GET, "/ws/v1/node/blocks/.%2E/secret".to_owned()),
            (Method::GET, "/ws/v1/node/shuffle/../blocks/d/b".to_owned()),
            (
                Method::GET,
                "/ws/v1/node/shuffle/app/..%2F..%2Fblocks%2Fd/b".to_owned(),
            ),
            (Method::GET, "/ws/v1/node/shuffle/app/m/0/x".to_owned()),
            (Method::DELETE, "/ws/v1/node/shuffle/..".to_owned()),
            (Method::DELETE, "/ws/v1/node/shuffle/.".to_owned()),
            (Method::DELETE, "/ws/v1/node/shuffle/%2E%2E".to_owned()),
            (Method::DELETE, "/ws/v1/node/shuffle/app%2Fm".to_owned()),
            (Method::DELETE, "/ws/v1/node/shuffle/app/m".to_owned()),
        ];
        for (method, uri) in cases {
            let (status, body) = call(&router, method.clone(), &uri, Body::from("evil")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{method} {uri}");
            let error = error_of(&body);
            assert!(!error.is_empty(), "{method} {uri}");
        }
        assert_eq!(
            tree(work.path()),
            before,
            "a refused request changed the disk"
        );
        assert_eq!(
            std::fs::read_to_string(work.path().join("secret")).unwrap(),
            "keep"
        );
    }

    #[tokio::test]
    async fn map_outputs_are_served_and_deleted_per_application() {
        let (work, data, router) = setup(1 << 20);
        let env = data.container_env("container_e9_7_0003_01_000002").unwrap();
        let shuffle = env[1].1.clone();
        assert_eq!(
            env[2],
            (
                "YARD_JOB_TOKEN".into(),
                key().job_token("application_7_0003")
            )
        );
        assert_eq!(
            PathBuf::from(&shuffle),
            data.shuffle_dir().join("application_7_0003")
        );
        std::fs::create_dir_all(format!("{shuffle}/m1")).unwrap();
        std::fs::write(format!("{shuffle}/m1/0"), "abc").unwrap();
        std::fs::create_dir_all(data.shuffle_dir().join("application_7_0004/m1")).unwrap();
        // A task's symlink does not make the node serve what it points to.
        std::fs::write(work.path().join("secret"), "keep").unwrap();
        std::os::unix::fs::symlink(work.path().join("secret"), format!("{shuffle}/m1/1")).unwrap();
        let uri = "/ws/v1/node/shuffle/application_7_0003/m1/0";
        assert_eq!(
            call(&router, Method::GET, uri, Body::empty()).await,
            (StatusCode::OK, b"abc".to_vec())
        );
        for absent in [
            "application_7_0003/m1/1",
            "application_7_0003/m1/2",
            "application_7_0003/m2/0",
            "application_9_0001/m1/0",
            "application_7_0003/m1/0/x",
        ] {
            let (status, body) = call(
                &router,
                Method::GET,
                &format!("/ws/v1/node/shuffle/{absent}"),
                Body::empty(),
            )
            .await;
            let expected = if absent.ends_with("/x") {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::NOT_FOUND
            };
            assert_eq!(status, expected, "{absent}");
            error_of(&body);
        }
        for _ in 0..2 {
            let (status, body) = call(
                &router,
                Method::DELETE,
                "/ws/v1/node/shuffle/application_7_0003",
                Body::empty(),
            )
            .await;
            assert_eq!(status, StatusCode::NO_CONTENT);
            assert!(body.is_empty());
        }
        assert_eq!(
            call(&router, Method::GET, uri, Body::empty()).await.0,
            StatusCode::NOT_FOUND
        );
        assert!(!data.shuffle_dir().join("application_7_0003").exists());
        assert!(
            data.shuffle_dir().join("application_7_0004/m1").exists(),
            "another application's outputs stay"
        );
        assert_eq!(
            std::fs::read_to_string(work.path().join("secret")).unwrap(),
            "keep"
        );
    }
}
