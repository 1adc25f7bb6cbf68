//! The two pull protocols between the daemons (DESIGN.md "Processes and protocols"): a
//! nodemanager's heartbeat to the rm, and a master's allocate call. JSON, camelCase, unknown
//! fields refused (a misspelt field is a client bug worth hearing about).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::telemetry::NodeTelemetry;
use crate::token::ContainerToken;

/// Memory and cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resource {
    pub memory_mb: u64,
    pub vcores: u32,
}

/// A nodemanager introduces itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegisterNode {
    /// `host:port` of the nodemanager's HTTP endpoint: its identity.
    pub node_id: String,
    pub rack: String,
    pub capability: Resource,
    /// Containers already on the node whose end the rm has not heard yet (after an rm restart,
    /// or a node rejoining): the rm takes them back instead of losing them (YARN's
    /// work-preserving restart).
    #[serde(default)]
    pub containers: Vec<NodeContainer>,
}

/// YARN's container id, as Hadoop's `ContainerId.toString` writes it:
/// `container_[e{epoch:02}_]{cluster timestamp}_{application:04}_{attempt:02}_{number:06}`,
/// the epoch being how many times the rm restarted on its state (left out while 0), the
/// timestamp and sequence those of the application's id. So the application is known from the
/// id alone, across rm restarts, and Hadoop's `ContainerId.fromString` reads it.
pub fn container_id(epoch: u64, application_id: &str, attempt: u32, number: u64) -> String {
    let app = application_id
        .strip_prefix("application_")
        .unwrap_or(application_id);
    match epoch {
        0 => format!("container_{app}_{attempt:02}_{number:06}"),
        e => format!("container_e{e:02}_{app}_{attempt:02}_{number:06}"),
    }
}

/// A container id's parts: (rm epoch, `application_{timestamp}_{sequence}`), or `None` for an
/// id not of [`container_id`]'s form.
fn container_parts(container_id: &str) -> Option<(u64, String)> {
    let rest = container_id.strip_prefix("container_")?;
    let parts: Vec<&str> = rest.split('_').collect();
    let (epoch, [timestamp, sequence, attempt, number]) = match parts[..] {
        [e, t, s, a, n] => (e.strip_prefix('e')?, [t, s, a, n]),
        [t, s, a, n] => ("0", [t, s, a, n]),
        _ => return None,
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if ![epoch, timestamp, sequence, attempt, number]
        .iter()
        .all(|p| digits(p))
    {
        return None;
    }
    Some((
        epoch.parse().ok()?,
        format!("application_{timestamp}_{sequence}"),
    ))
}

/// The application a container belongs to (`None` for an id not of [`container_id`]'s form).
pub fn application_of(container_id: &str) -> Option<String> {
    container_parts(container_id).map(|(_, app)| app)
}

/// The rm epoch that granted a container (`None` for an id not of [`container_id`]'s form).
pub fn epoch_of(container_id: &str) -> Option<u64> {
    container_parts(container_id).map(|(epoch, _)| epoch)
}

/// Whether `id` is an application id as Hadoop's `ApplicationId.fromString` reads it:
/// `application_{cluster timestamp}_{sequence}`, the timestamp a long and the sequence an int.
pub fn is_application_id(id: &str) -> bool {
    let Some((timestamp, sequence)) = id
        .strip_prefix("application_")
        .and_then(|rest| rest.split_once('_'))
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(timestamp)
        && digits(sequence)
        && timestamp.parse::<i64>().is_ok()
        && sequence.parse::<i32>().is_ok()
}

/// One block of a dataset and the nodes holding its replicas (first replica first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockReplicas {
    /// A plain name as a dataset's, unique in the dataset.
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = r"^([A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}|\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,198}|\.\.[A-Za-z0-9_.-]{1,198})$"
        )
    )]
    pub block: String,
    pub bytes: u64,
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub nodes: Vec<String>,
    /// The block's SHA-256, lower-case hex (64 characters; [`valid_sha256_hex`]), computed by
    /// `yard data put` as it uploads; a map task checks every replica it reads against it.
    /// `None` in block maps written before digests were recorded: those blocks are read
    /// unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: Option<String>,
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// SHA-256 of `bytes` as block maps spell it: 64 lower-case hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

/// Whether `s` is a SHA-256 digest as block maps spell it: exactly 64 lower-case hex digits.
pub fn valid_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A dataset's block map, as the rm records it (the blocks live on the nodemanagers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dataset {
    /// The path's name: 1 to 200 letters, digits, `_`, `-` or `.`, not `.` or `..`.
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = r"^([A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}|\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,198}|\.\.[A-Za-z0-9_.-]{1,198})$"
        )
    )]
    pub name: String,
    /// Set by the rm.
    #[serde(default)]
    pub created_ms: i64,
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub blocks: Vec<BlockReplicas>,
}

/// A container a registering nodemanager already runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeContainer {
    pub container_id: String,
    pub resource: Resource,
}

/// How a container ended, as the rm tells a master (YARN's ContainerExitStatus where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContainerEnd {
    /// The process exited by itself with this code.
    Exited,
    /// Stopped by request (release, kill).
    Killed,
    /// Its node stopped heartbeating.
    Lost,
    /// Its node could not start it (the reason is in the node's log).
    LaunchFailed,
    /// Taken back by the rm for an application with an earlier deadline (YARN's PREEMPTED):
    /// the attempt in it is lost and runs again.
    Preempted,
}

impl ContainerEnd {
    pub const ALL: [ContainerEnd; 5] = [
        ContainerEnd::Exited,
        ContainerEnd::Killed,
        ContainerEnd::Lost,
        ContainerEnd::LaunchFailed,
        ContainerEnd::Preempted,
    ];

    /// Its name in lower snake case (a metric's `end` label).
    pub fn label(self) -> &'static str {
        match self {
            ContainerEnd::Exited => "exited",
            ContainerEnd::Killed => "killed",
            ContainerEnd::Lost => "lost",
            ContainerEnd::LaunchFailed => "launch_failed",
            ContainerEnd::Preempted => "preempted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerStatus {
    pub container_id: String,
    pub end: ContainerEnd,
    /// The exit code, when the process exited by itself.
    pub exit_code: Option<i32>,
}

/// Every second or so: what runs and what ended on the node, and its load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeHeartbeat {
    pub node_id: String,
    pub running: Vec<String>,
    pub completed: Vec<ContainerStatus>,
    pub telemetry: NodeTelemetry,
}

/// The rm's answer to an authenticated registration: the node's own container-token key
/// (it signs this node's container tokens only) and the cluster's data key (it checks job
/// tokens and upload grants on the data routes), both as hex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Registered {
    pub container_key: String,
    pub data_key: String,
}

/// Start a container: its token (checked by the nodemanager), its command and environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartContainer {
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub token: Option<ContainerToken>,
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeartbeatReply {
    /// Containers the node must stop (released, killed, of finished applications).
    pub stop: Vec<String>,
    /// Application masters the node must start (the rm launches masters through heartbeats).
    #[serde(default)]
    pub start: Vec<StartContainer>,
    /// Datasets whose blocks the node must delete (removed, or a failed job's output parts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete_datasets: Vec<String>,
    /// The rm does not know this node (e.g. it restarted): register again.
    pub reregister: bool,
}

/// One line of a master's ask (YARN's ResourceRequest): `resourceName` is a node id, a rack,
/// or `*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceRequest {
    pub priority: u32,
    pub resource_name: String,
    pub capability: Resource,
    pub num_containers: u32,
    #[serde(default = "yes")]
    pub relax_locality: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllocateRequest {
    pub application_id: String,
    pub asks: Vec<ResourceRequest>,
    pub releases: Vec<String>,
    /// The job's progress, 0–1.
    pub progress: f64,
    /// What a yard master says of its tasks (YARN's progress is one number): the rm's deadline
    /// policies size quotas on the work left. Optional: YARN's masters send none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TaskCounts>,
    /// The job's type, once its master knows it (seed 002 §4.1, eq. 1–2: from the kind's
    /// probes, this run's or an earlier one's in the profile store), for the rm's overload
    /// classifier. Optional: absent until a part is typed, and YARN's masters send none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_type: Option<JobType>,
    /// A yard MapReduce master's view of its job, for `GET /ws/v1/yard/mapreduce/jobs/{id}`.
    /// Optional: absent before the job starts, and YARN's masters send none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobProgress>,
}

/// How far a MapReduce job is, as its master sees it with each allocate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobProgress {
    /// Which of the master's runs the counts are of.
    pub phase: JobPhase,
    /// The task policy.
    pub policy: String,
    pub maps: u32,
    pub maps_launched: u32,
    pub maps_done: u32,
    /// Maps whose output will reach the answer (Dart's k).
    pub k: u32,
    /// No further map will be launched (Dart's approach stage is over).
    pub map_phase_closed: bool,
    pub reduces: u32,
    pub reduces_done: u32,
    /// Input bytes of the finished maps that count, and of the whole input.
    pub processed_bytes: u64,
    pub input_bytes: u64,
    /// The deadline guard has fired: maps stopped, reduces answer from what they have.
    pub guarded: bool,
    /// Seconds since this phase started, and the policy's estimate of the phase's length
    /// (absent where the policy makes none).
    pub elapsed_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_seconds: Option<f64>,
}

/// Which run of a job its master reports: the task sampler's (Dart §5.1: a few maps and
/// reduces at geometric input sizes, for a job kind the profile store does not know), or the
/// job proper's. A master reports no progress before either starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum JobPhase {
    /// The task sampler (its counts are the sample's, not the job's).
    Sampling,
    /// The job proper.
    Running,
}

impl JobPhase {
    /// The name the JSON carries.
    pub fn name(self) -> &'static str {
        match self {
            JobPhase::Sampling => "sampling",
            JobPhase::Running => "running",
        }
    }
}

/// Whether a job's map part and reduce part are CPU- or IO-bound; a part not yet typed is
/// absent (or `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobType {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<TaskBound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce: Option<TaskBound>,
}

/// What a part's tasks are bound by: `"cpu"` or `"io"` (`yard_cluster::ids::Bound`, the
/// classifier's job feature, is this type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TaskBound {
    Cpu,
    Io,
}

impl TaskBound {
    /// The name the JSON carries.
    pub fn name(self) -> &'static str {
        match self {
            TaskBound::Cpu => "cpu",
            TaskBound::Io => "io",
        }
    }

    pub fn parse(s: &str) -> Option<TaskBound> {
        match s {
            "cpu" => Some(TaskBound::Cpu),
            "io" => Some(TaskBound::Io),
            _ => None,
        }
    }
}

/// A job's tasks as its master counts them, for the rm's quota (ARIA's model of the work left).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskCounts {
    /// Maps finished that count toward the answer.
    pub maps_done: u32,
    /// Maps the job will run in all: every map until Dart closes its map phase, then `k`.
    pub maps_to_run: u32,
    pub reduces_done: u32,
}

/// A master unregisters (`POST /ws/v1/yard/apps/{id}/unregister`) with its final status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Unregister {
    pub succeeded: bool,
    /// Hadoop's FinishApplicationMasterRequest diagnostics: why the master failed (or anything
    /// it has to say), kept in the application's diagnostics after YARN's message; cut to
    /// `limits::MAX_DIAGNOSTICS_CHARS` characters.
    #[serde(default)]
    pub diagnostics: String,
}

/// A master's answer, put to the rm (`PUT /ws/v1/yard/apps/{id}/result`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MasterAnswer {
    /// The share of the input the answer is from, 0 to 1.
    pub processed_fraction: f64,
    /// The master's answer, any JSON (opaque to the rm).
    pub answer: serde_json::Value,
}

/// What a master keeps for its application's next attempt (`PUT
/// /ws/v1/yard/apps/{id}/recovery`): entries by key, each a JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RecoveryEntries {
    /// Key (1 to 255 printable ASCII characters) → a JSON object of at most 8,192 bytes.
    pub entries: BTreeMap<String, serde_json::Value>,
}

/// A master asks who scans a dataset (`POST /ws/v1/yard/mapreduce/scans/{dataset}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JoinScan {
    /// The asking master's umbilical base URL (`http://` or `https://`, at most 200
    /// characters), where jobs attach if it hosts.
    pub url: String,
}

/// A container granted to a master, with the token its nodemanager will check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Allocated {
    pub container_id: String,
    pub node_id: String,
    /// Where the master reaches the nodemanager (`http://host:port`).
    pub node_http_address: String,
    pub resource: Resource,
    pub priority: u32,
    pub token: ContainerToken,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllocateReply {
    pub allocated: Vec<Allocated>,
    pub completed: Vec<ContainerStatus>,
    /// The application's deadline as the rm holds it now (absent: it has none). Someone may
    /// change it while the job runs (`PUT …/deadline`): the master then tells its policy
    /// (`Event::DeadlineChanged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub deadline: Option<crate::deadline::Deadline>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn block_digests_are_sha256_in_lower_case_hex() {
        // FIPS 180-2's "abc" and the empty message.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let empty = sha256_hex(b"");
        assert_eq!(
            empty,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(valid_sha256_hex(&empty));
    }

    use super::*;

    #[test]
    fn a_block_digest_is_64_lower_case_hex_digits_and_optional_on_the_wire() {
        let digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(valid_sha256_hex(digest));
        for bad in [
            "",
            &digest[1..],
            &format!("{digest}0"),
            &digest.to_uppercase(),
            &digest.replace('e', "g"),
        ] {
            assert!(!valid_sha256_hex(bad), "{bad}");
        }
        let old: BlockReplicas =
            serde_json::from_str(r#"{"block": "b000000", "bytes": 3, "nodes": ["n:1"]}"#).unwrap();
        assert_eq!(old.sha256, None, "block maps without digests still read");
        assert!(!serde_json::to_string(&old).unwrap().contains("sha256"));
        let new = BlockReplicas {
            sha256: Some(digest.into()),
            ..old
        };
        let json = serde_json::to_string(&new).unwrap();
        assert!(json.contains(r#""sha256":"e3b0"#), "{json}");
        assert_eq!(serde_json::from_str::<BlockReplicas>(&json).unwrap(), new);
    }

    #[test]
    fn a_job_phase_is_one_the_master_reports_by_its_name() {
        let progress = |phase: &str| {
            serde_json::from_value::<JobProgress>(serde_json::json!({"phase": phase,
                "policy": "dart", "maps": 2, "mapsLaunched": 1, "mapsDone": 0, "k": 2,
                "mapPhaseClosed": false, "reduces": 1, "reducesDone": 0, "processedBytes": 0,
                "inputBytes": 10, "guarded": false, "elapsedSeconds": 0.5}))
        };
        for phase in [JobPhase::Sampling, JobPhase::Running] {
            let p = progress(phase.name()).unwrap();
            assert_eq!(p.phase, phase);
            assert_eq!(serde_json::to_value(&p).unwrap()["phase"], phase.name());
        }
        // The master's status page says `starting`, and the metrics' label `job`: neither is
        // a phase the allocate protocol carries.
        for other in ["starting", "job", "Running", ""] {
            let e = progress(other).unwrap_err().to_string();
            assert!(e.contains("unknown variant"), "{other}: {e}");
        }
    }

    #[test]
    fn a_container_id_names_its_application() {
        // Hadoop's own examples (ContainerId's javadoc and TestContainerId).
        assert_eq!(
            container_id(0, "application_1410901177871_0001", 1, 5),
            "container_1410901177871_0001_01_000005"
        );
        assert_eq!(
            container_id(17, "application_1410901177871_0001", 1, 5),
            "container_e17_1410901177871_0001_01_000005"
        );
        assert_eq!(
            container_id(3, "application_1_0042", 2, 1_234_567),
            "container_e03_1_0042_02_1234567"
        );
        for (id, epoch) in [
            ("container_e17_1700_0042_01_000007", 17),
            ("container_1700_0042_01_000007", 0),
            ("container_e03_1700_0042_01_000007", 3),
        ] {
            assert_eq!(application_of(id).as_deref(), Some("application_1700_0042"));
            assert_eq!(epoch_of(id), Some(epoch), "{id}");
        }
        for bad in [
            "container_1700_0042_01",
            "container_e1_2_3_4",
            "container_e1_2_x_4_5",
            "container_x1_2_3_4_5",
            "container_e_2_3_4_5",
            "container_e1_2_3_4_5_6",
            "",
        ] {
            assert_eq!(application_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn asks_read_as_yarn_writes_them_and_refuse_misspellings() {
        let json = r#"{"applicationId": "application_1_0001", "progress": 0.5, "releases": [],
            "asks": [{"priority": 1, "resourceName": "*", "capability": {"memoryMb": 1024, "vcores": 1},
                      "numContainers": 3}]}"#;
        let r: AllocateRequest = serde_json::from_str(json).unwrap();
        assert_eq!(r.asks[0].num_containers, 3);
        assert!(r.asks[0].relax_locality, "YARN's default");
        let typo = json.replace("numContainers", "numContainer");
        let err = serde_json::from_str::<AllocateRequest>(&typo)
            .unwrap_err()
            .to_string();
        assert!(err.contains("numContainer"), "{err}");
    }

    #[test]
    fn the_job_type_rides_an_allocate_request_when_known_and_old_requests_still_read() {
        let old = r#"{"applicationId": "application_1_0001", "progress": 0.5, "releases": [],
            "asks": [], "tasks": {"mapsDone": 1, "mapsToRun": 3, "reducesDone": 0}}"#;
        let r: AllocateRequest = serde_json::from_str(old).unwrap();
        assert_eq!(r.job_type, None, "a request without it reads");
        assert!(!serde_json::to_string(&r).unwrap().contains("jobType"));

        let typed = AllocateRequest {
            job_type: Some(JobType {
                map: Some(TaskBound::Io),
                reduce: None,
            }),
            ..r
        };
        let json = serde_json::to_string(&typed).unwrap();
        assert!(json.contains(r#""jobType":{"map":"io"}"#), "{json}");
        assert_eq!(
            serde_json::from_str::<AllocateRequest>(&json).unwrap(),
            typed
        );

        let both: JobType = serde_json::from_str(r#"{"map": "cpu", "reduce": "io"}"#).unwrap();
        assert_eq!(
            (both.map, both.reduce),
            (Some(TaskBound::Cpu), Some(TaskBound::Io))
        );
        let unknown: JobType = serde_json::from_str(r#"{"map": null}"#).unwrap();
        assert_eq!(unknown, JobType::default());
        for bad in [
            r#"{"map": "disk"}"#,
            r#"{"maps": "io"}"#,
            r#"{"map": "IO"}"#,
        ] {
            assert!(serde_json::from_str::<JobType>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn application_ids_are_hadoops_form() {
        for good in [
            "application_1000_0001",
            "application_1410901177871_12345",
            "application_0_0",
        ] {
            assert!(is_application_id(good), "{good}");
        }
        for bad in [
            "",
            "application_",
            "application_1000",
            "application_1000_",
            "application__0001",
            "application_1000_0001_1",
            "application_-1_0001",
            "application_1000_99999999999",
            "app_1000_0001",
            "container_1000_0001_01_000001",
        ] {
            assert!(!is_application_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_heartbeat_round_trips() {
        let hb = NodeHeartbeat {
            node_id: "127.0.0.1:8042".into(),
            running: vec!["container_1".into()],
            completed: vec![ContainerStatus {
                container_id: "container_0".into(),
                end: ContainerEnd::Exited,
                exit_code: Some(0),
            }],
            telemetry: NodeTelemetry::default(),
        };
        let json = serde_json::to_string(&hb).unwrap();
        assert!(json.contains("\"end\":\"EXITED\""), "{json}");
        assert_eq!(serde_json::from_str::<NodeHeartbeat>(&json).unwrap(), hb);
    }
}
