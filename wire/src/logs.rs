//! Containers' logs (YARN's log aggregation): what a nodemanager lists of a container's log
//! files (`GET /ws/v1/node/containers/{id}/logs`), and what the rm lists of an application's
//! (`GET /ws/v1/yard/apps/{id}/logs`): each file's container, node, size and whether it was
//! cut, where it is read from, and the containers whose logs are missing and why.

use serde::{Deserialize, Serialize};

/// The files a container writes its output to: the only files the log routes serve (a
/// container's directory holds whatever its command wrote there, which is not a log).
pub const LOG_FILES: [&str; 2] = ["stdout", "stderr"];

/// The per-container cap of aggregated logs by default (10 MiB), shared equally by its files.
pub const DEFAULT_MAX_BYTES_PER_CONTAINER: u64 = 10 << 20;

/// How long the rm keeps an ended application's aggregated logs by default: 7 days, as
/// `yarn.log-aggregation.retain-seconds` is commonly set.
pub const DEFAULT_RETAIN_SECONDS: u64 = 7 * 24 * 3600;

/// Whether `file` is one of [`LOG_FILES`].
pub fn is_log_file(file: &str) -> bool {
    LOG_FILES.contains(&file)
}

/// One log file of a container on its nodemanager.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeLogFile {
    pub file: String,
    pub bytes: u64,
}

/// A nodemanager's answer to `GET /ws/v1/node/containers/{id}/logs` (Hadoop's
/// `containerLogsInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeContainerLogs {
    pub container_id: String,
    /// Whether the container still runs there (its files still grow).
    pub running: bool,
    pub files: Vec<NodeLogFile>,
}

/// Where a log file is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum LogSource {
    /// The rm's aggregated store: the container ended and its node uploaded it.
    Aggregated,
    /// The container's nodemanager: it runs, or its node has not uploaded it yet.
    Node,
}

/// One log file of one of an application's containers, as the rm lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogFile {
    pub container_id: String,
    pub node_id: String,
    pub file: String,
    /// How many bytes the container wrote to it (so far, when read from its node).
    pub bytes: u64,
    /// Whether the aggregated copy was cut to the per-container cap (its text then starts
    /// with a line saying how much was dropped).
    pub cut: bool,
    pub source: LogSource,
    /// Whether the container ran one of the application's masters.
    pub master: bool,
}

/// A container whose logs cannot be read, and why (its node was lost before it uploaded them,
/// or does not answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MissingLogs {
    pub container_id: String,
    pub node_id: String,
    pub reason: String,
}

/// The rm's answer to `GET /ws/v1/yard/apps/{id}/logs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppLogs {
    pub application_id: String,
    /// Sorted by container, then file.
    pub files: Vec<LogFile>,
    pub missing: Vec<MissingLogs>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppLogsReply {
    pub app_logs: AppLogs,
}

/// The rm's answer to a nodemanager's upload (`PUT …/logs/{container}/{file}`): what it
/// stored, and whether it cut the text to the cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogStored {
    pub bytes: u64,
    pub cut: bool,
}

/// The line an aggregated log starts with when its head was cut: `kept` of `total` bytes
/// remain (the last ones, where a failure's cause usually is).
pub fn cut_note(total: u64, kept: u64, cap: u64) -> String {
    format!(
        "[yard: log cut to its last {kept} of {total} bytes: the cap is {cap} bytes a container (the nodemanager's --log-aggregation-max-bytes)]\n"
    )
}

/// `?start=N` as Hadoop's nodemanager takes it: from byte `N`, or with `N < 0` the last `-N`
/// bytes; the byte range of a `len`-byte file it selects.
pub fn start_range(start: Option<i64>, len: u64) -> std::ops::Range<u64> {
    match start {
        None => 0..len,
        Some(s) if s < 0 => len.saturating_sub(s.unsigned_abs())..len,
        Some(s) => (s as u64).min(len)..len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_selects_hadoops_ranges() {
        assert_eq!(start_range(None, 10), 0..10);
        assert_eq!(start_range(Some(-4), 10), 6..10);
        assert_eq!(start_range(Some(-40), 10), 0..10);
        assert_eq!(start_range(Some(3), 10), 3..10);
        assert_eq!(start_range(Some(30), 10), 10..10);
    }

    #[test]
    fn the_listing_reads_back() {
        let reply = AppLogsReply {
            app_logs: AppLogs {
                application_id: "application_1_0001".into(),
                files: vec![LogFile {
                    container_id: "container_1_0001_01_000001".into(),
                    node_id: "127.0.0.1:1".into(),
                    file: "stdout".into(),
                    bytes: 3,
                    cut: false,
                    source: LogSource::Aggregated,
                    master: true,
                }],
                missing: vec![],
            },
        };
        let text = serde_json::to_string(&reply).unwrap();
        assert!(text.contains("\"source\":\"aggregated\""), "{text}");
        assert_eq!(serde_json::from_str::<AppLogsReply>(&text).unwrap(), reply);
    }
}
