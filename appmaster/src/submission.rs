//! A MapReduce job as a client asks for it: the built-in application and its parameters, the
//! input, the task policy, the reduces, and (for `synthetic`) the tasks to imitate. One type for
//! every door: `yard submit` sends it as JSON to the rm's `POST /ws/v1/yard/mapreduce/jobs`,
//! which checks it here and starts `yard mr-master` with the job as JSON in its environment
//! ([`JOB_ENV`]), which the master reads back into this type, and its deadline on the command
//! line ([`master_args`]). No IO: whether the dataset exists is the rm's to say, whether a
//! trace parses the master's.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use yard_wire::deadline::Deadline;

use crate::apps::AppSpec;
pub use crate::apps::streaming::{FILES_CAP, ShippedFile};
use crate::policy::PolicyKind;

/// The environment variable holding a MapReduce job's master's job, as submitted (JSON): the
/// master's one source for it, and how the rm tells a MapReduce job from any other app.
pub const JOB_ENV: &str = "YARD_JOB";

/// How long before the deadline the live master's guard fires by default: time for the
/// reduces to hear it (a progress report every 0.2 s) and answer from what they have.
pub const DEFAULT_GUARD_SECONDS: f64 = 1.0;

/// The built-in applications a job may name.
pub const APPS: [&str; 6] = [
    "wordcount",
    "grep",
    "topk",
    "index",
    "synthetic",
    "streaming",
];

/// A MapReduce job, as JSON: `{"app": "grep", "input": "books", "params": {"pattern":
/// "whale"}, "policy": "dart", "reduces": 2}` (every other field has a default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapReduceJob {
    /// One of [`APPS`].
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::app))]
    pub app: String,
    /// The dataset to read (`yard data put`); every app but `synthetic` needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Further datasets read after `input` (Hadoop's repeated `-input`): their blocks are
    /// maps too, numbered on after `input`'s, and the processed fraction is over them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_inputs: Vec<String>,
    /// `streaming` only: files placed in each task's working directory (Hadoop's `-file`),
    /// at most [`FILES_CAP`] bytes together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ShippedFile>,
    /// Attempts a map (a reduce) may take before the job fails (Hadoop's
    /// `mapreduce.map.maxattempts`, `mapreduce.reduce.maxattempts`) [4].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_max_attempts: Option<u32>,
    /// The application's parameters: `pattern` for grep; `field`, `k` for topk; `top`;
    /// `mapper`, `reducer`, `cmdenv` for streaming (Hadoop Streaming's options);
    /// `kind` for synthetic (its profile store kind, [`synthetic_kind`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// The task policy.
    #[serde(
        default = "default_policy",
        serialize_with = "policy_out",
        deserialize_with = "policy_in"
    )]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::policy))]
    pub policy: PolicyKind,
    #[serde(default = "default_reduces")]
    pub reduces: u32,
    /// Seeds the master's random choices (the task sampler's blocks, reduce sampling). Left
    /// out over REST, the rm draws one and writes it into the job; the answer's `job.seed`
    /// says which, to repeat the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Memory of each task container.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// Only run the task sampler (Dart §5.1) to profile the job; no answer.
    #[serde(default)]
    pub sample_only: bool,
    /// Every map of a built-in app takes at least this many seconds (rehearsals on small data).
    #[serde(default)]
    pub map_min_seconds: f64,
    /// The deadline guard fires this long before the deadline (0: none; `full` has none).
    #[serde(default = "default_guard_seconds")]
    pub guard_seconds: f64,
    /// `synthetic` only: its maps, seconds per map, bytes each map writes, seconds per reduce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_output_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_seconds: Option<f64>,
    /// `synthetic` only: each map's own seconds, instead of `mapSeconds` for all (`maps`, if
    /// given, must match its length); with it, each map's split bytes (the estimator's
    /// weights) and output bytes, instead of 1 MiB and `mapOutputBytes` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_seconds_each: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_input_bytes_each: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_output_bytes_each: Option<Vec<u64>>,
    /// `synthetic` only: each reduce's own seconds, one per reduce (`reduces` entries),
    /// instead of `reduceSeconds` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_seconds_each: Option<Vec<f64>>,
    /// `synthetic` only: replay this trace's job (a path on the rm's host) instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace's job: its id or its index in the file [0].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_job: Option<String>,
    /// Multiplies the trace's durations [1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// Fault injection for tests: the map of this split hangs until it is killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hang_split: Option<u32>,
    /// At most this many task containers held at once (the master's own not counted); none:
    /// as many as the task policy wants. `yard batch run` caps each job at its pool's slots
    /// (BalancedPools, seed 003).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_containers: Option<u32>,
    /// Share one scan of `input` with every other shared-scan job over it (CIRCUMFLEX, seed
    /// 004): each block read once for all the jobs attached when it is read. Under `full` (or
    /// `dart` without a deadline) the job reads every block, the exact answer; under `dart`
    /// with a deadline it answers by then from the blocks read (yard's scan-deadline rule).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_scan: bool,
    /// The dataset the job's output becomes (Hadoop's `-output`): each reduce writes its part,
    /// `part-r-00000`, …, into the block store, and the master registers the parts as this
    /// dataset, owned by the job's user, when the job commits. It must not exist yet (the rm
    /// refuses the job with a 409, as Hadoop's `FileAlreadyExistsException`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// What is wrong with a job, named by its JSON field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct JobProblem {
    pub field: &'static str,
    pub problem: String,
}

fn problem(field: &'static str, problem: impl Into<String>) -> JobProblem {
    JobProblem {
        field,
        problem: problem.into(),
    }
}

fn default_policy() -> PolicyKind {
    PolicyKind::Dart
}
fn default_reduces() -> u32 {
    2
}
fn default_seed() -> u64 {
    1
}
fn default_memory_mb() -> u64 {
    256
}
fn default_guard_seconds() -> f64 {
    DEFAULT_GUARD_SECONDS
}

fn policy_out<S: Serializer>(p: &PolicyKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

fn policy_in<'de, D: Deserializer<'de>>(d: D) -> Result<PolicyKind, D::Error> {
    let name = String::deserialize(d)?;
    name.parse().map_err(serde::de::Error::custom)
}

/// The most reduces a job may ask for: more is a typo, not a job.
pub(crate) const MAX_REDUCES: u32 = 10_000;

/// The most attempts `mapMaxAttempts` and `reduceMaxAttempts` may allow.
pub const MAX_ATTEMPTS: u32 = 100;

/// The most datasets `moreInputs` may name.
pub const MAX_MORE_INPUTS: usize = 100;

/// The most task containers `maxContainers` may name: more is a typo, not a cap.
pub(crate) const MAX_CONTAINERS: u32 = 100_000;

/// The most entries a per-task list (`mapSecondsEach`, …) may hold: the lists travel in the
/// master's command line and environment, which Linux caps at 128 KiB a string.
pub const MAX_EACH: usize = 2_000;

impl MapReduceJob {
    /// A job of `app` over `input` with every default.
    pub fn new(app: &str, input: Option<&str>) -> MapReduceJob {
        MapReduceJob {
            app: app.into(),
            input: input.map(Into::into),
            more_inputs: Vec::new(),
            files: Vec::new(),
            map_max_attempts: None,
            reduce_max_attempts: None,
            params: BTreeMap::new(),
            policy: default_policy(),
            reduces: default_reduces(),
            seed: default_seed(),
            memory_mb: default_memory_mb(),
            sample_only: false,
            map_min_seconds: 0.0,
            guard_seconds: default_guard_seconds(),
            maps: None,
            map_seconds: None,
            map_output_bytes: None,
            reduce_seconds: None,
            map_seconds_each: None,
            map_input_bytes_each: None,
            map_output_bytes_each: None,
            reduce_seconds_each: None,
            trace: None,
            trace_job: None,
            time_scale: None,
            hang_split: None,
            max_containers: None,
            shared_scan: false,
            output: None,
        }
    }

    /// Everything the master would refuse, refused before anything starts.
    /// An output dataset is named as every dataset is, and only a job that reduces what it
    /// reads writes one.
    fn validate_output(&self, output: &str) -> Result<(), JobProblem> {
        let plain = (1..=200).contains(&output.len())
            && output != "."
            && output != ".."
            && output
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !plain {
            return Err(problem(
                "output",
                format!(
                    "{output:?}: name the output dataset with 1 to 200 letters, digits, '_', '-' or '.'"
                ),
            ));
        }
        let refused = if self.app == "synthetic" {
            Some("a synthetic job computes nothing to write")
        } else if self.shared_scan {
            Some("a job on a shared scan answers inline only")
        } else if self.sample_only {
            Some("a sample-only run writes no output")
        } else {
            None
        };
        match refused {
            Some(why) => Err(problem("output", format!("{why}: leave it out"))),
            None if self.input.as_deref() == Some(output) => Err(problem(
                "output",
                format!("{output} is the job's input: name a new dataset"),
            )),
            None => Ok(()),
        }
    }

    pub fn validate(&self) -> Result<(), JobProblem> {
        if !APPS.contains(&self.app.as_str()) {
            return Err(problem(
                "app",
                format!(
                    "unknown app {:?}; expected one of {}",
                    self.app,
                    APPS.join(", ")
                ),
            ));
        }
        let synthetic_fields = [
            ("maps", self.maps.is_some()),
            ("mapSeconds", self.map_seconds.is_some()),
            ("mapOutputBytes", self.map_output_bytes.is_some()),
            ("reduceSeconds", self.reduce_seconds.is_some()),
            ("mapSecondsEach", self.map_seconds_each.is_some()),
            ("mapInputBytesEach", self.map_input_bytes_each.is_some()),
            ("mapOutputBytesEach", self.map_output_bytes_each.is_some()),
            ("reduceSecondsEach", self.reduce_seconds_each.is_some()),
            ("trace", self.trace.is_some()),
            ("traceJob", self.trace_job.is_some()),
            ("timeScale", self.time_scale.is_some()),
        ];
        if self.app == "synthetic" {
            if self.input.is_some() {
                return Err(problem(
                    "input",
                    "synthetic jobs read no dataset; leave it out",
                ));
            }
            self.validate_synthetic()?;
        } else {
            if let Some((field, _)) = synthetic_fields.iter().find(|(_, given)| *given) {
                return Err(problem(
                    field,
                    format!("only synthetic jobs take it, not {}", self.app),
                ));
            }
            AppSpec::parse(&self.app, &self.param_list())
                .map_err(|e| problem("params", e.to_string()))?;
            match self.input.as_deref() {
                None | Some("") => {
                    return Err(problem(
                        "input",
                        format!("{} reads a dataset: name it (see `yard data ls`)", self.app),
                    ));
                }
                Some(_) => {}
            }
        }
        if !(1..=MAX_REDUCES).contains(&self.reduces) {
            return Err(problem(
                "reduces",
                format!("{} is outside 1 to {MAX_REDUCES}", self.reduces),
            ));
        }
        if self.memory_mb == 0 {
            return Err(problem(
                "memoryMb",
                "a task needs some memory: give at least 1",
            ));
        }
        if !(0.0..=3_600.0).contains(&self.guard_seconds) {
            return Err(problem(
                "guardSeconds",
                format!("{} is outside 0 to 3600", self.guard_seconds),
            ));
        }
        if !(0.0..=86_400.0).contains(&self.map_min_seconds) {
            return Err(problem(
                "mapMinSeconds",
                format!("{} is outside 0 to 86400", self.map_min_seconds),
            ));
        }
        if let Some(output) = &self.output {
            self.validate_output(output)?;
        }
        if self.shared_scan {
            if self.app == "streaming" {
                return Err(problem(
                    "sharedScan",
                    "a streaming job's mapper runs as its own command, not on a shared scan: \
                     leave sharedScan out",
                ));
            }
            if self.app == "synthetic" {
                return Err(problem(
                    "sharedScan",
                    "a synthetic job reads no dataset, so it has no scan to share",
                ));
            }
            if !matches!(self.policy, PolicyKind::Full | PolicyKind::Dart) || self.sample_only {
                return Err(problem(
                    "sharedScan",
                    "a job on a shared scan runs under full (every block, the exact answer) or \
                     dart (by its deadline, from the blocks read): give one of those, without \
                     sampleOnly",
                ));
            }
        }
        for (field, n) in [
            ("mapMaxAttempts", self.map_max_attempts),
            ("reduceMaxAttempts", self.reduce_max_attempts),
        ] {
            if let Some(n) = n
                && !(1..=MAX_ATTEMPTS).contains(&n)
            {
                return Err(problem(
                    field,
                    format!("{n} is outside 1 to {MAX_ATTEMPTS} (leave it out for 4, Hadoop's)"),
                ));
            }
        }
        if !self.files.is_empty() {
            if self.app != "streaming" {
                return Err(problem(
                    "files",
                    format!("only streaming jobs ship files, not {}", self.app),
                ));
            }
            crate::apps::streaming::check_files(&self.files).map_err(|e| problem("files", e))?;
        }
        if !self.more_inputs.is_empty() {
            if self.shared_scan {
                return Err(problem(
                    "moreInputs",
                    "a shared scan reads one dataset: leave moreInputs out",
                ));
            }
            if self.app == "synthetic" {
                return Err(problem("moreInputs", "synthetic jobs read no dataset"));
            }
            if self.more_inputs.len() > MAX_MORE_INPUTS {
                return Err(problem(
                    "moreInputs",
                    format!(
                        "{} datasets; at most {MAX_MORE_INPUTS}",
                        self.more_inputs.len()
                    ),
                ));
            }
            let mut seen: Vec<&str> = self.input.iter().map(String::as_str).collect();
            for name in &self.more_inputs {
                if name.is_empty() || seen.contains(&name.as_str()) {
                    return Err(problem(
                        "moreInputs",
                        format!("{name:?}: name each dataset once (and input not again)"),
                    ));
                }
                seen.push(name);
            }
        }
        if let Some(n) = self.max_containers
            && !(1..=MAX_CONTAINERS).contains(&n)
        {
            return Err(problem(
                "maxContainers",
                format!(
                    "{n} is outside 1 to {MAX_CONTAINERS} task containers (leave it out for no cap)"
                ),
            ));
        }
        Ok(())
    }

    fn validate_synthetic(&self) -> Result<(), JobProblem> {
        if let Some(key) = self.params.keys().find(|k| *k != "kind") {
            return Err(problem(
                "params",
                format!("synthetic jobs take one parameter, kind, not {key:?}"),
            ));
        }
        if let Some(name) = self.params.get("kind")
            && !valid_kind_name(name)
        {
            return Err(problem(
                "params",
                format!("kind {name:?}: name it with 1 to 100 letters, digits, '-', '_' or '.'"),
            ));
        }
        if self.trace.is_some() {
            for (field, given) in [
                ("maps", self.maps.is_some()),
                ("mapSeconds", self.map_seconds.is_some()),
                ("mapOutputBytes", self.map_output_bytes.is_some()),
                ("reduceSeconds", self.reduce_seconds.is_some()),
                ("mapSecondsEach", self.map_seconds_each.is_some()),
                ("mapInputBytesEach", self.map_input_bytes_each.is_some()),
                ("mapOutputBytesEach", self.map_output_bytes_each.is_some()),
                ("reduceSecondsEach", self.reduce_seconds_each.is_some()),
            ] {
                if given {
                    return Err(problem(
                        field,
                        "a trace's job brings its own tasks; leave it out",
                    ));
                }
            }
            if let Some(x) = self.time_scale
                && !(x.is_finite() && x > 0.0)
            {
                return Err(problem(
                    "timeScale",
                    format!("{x} is not a positive number"),
                ));
            }
            return Ok(());
        }
        if self.trace_job.is_some() || self.time_scale.is_some() {
            let field = if self.trace_job.is_some() {
                "traceJob"
            } else {
                "timeScale"
            };
            return Err(problem(field, "only with a trace"));
        }
        self.validate_each()?;
        let maps = self
            .map_seconds_each
            .as_ref()
            .map_or(self.maps.unwrap_or(0) as usize, Vec::len);
        if maps == 0 {
            return Err(problem(
                "maps",
                "a synthetic job needs maps: give at least 1",
            ));
        }
        for (field, x) in [
            ("mapSeconds", self.map_seconds),
            ("reduceSeconds", self.reduce_seconds),
        ] {
            if let Some(x) = x
                && !(0.0..=86_400.0).contains(&x)
            {
                return Err(problem(field, format!("{x} is outside 0 to 86400 seconds")));
            }
        }
        Ok(())
    }

    /// The per-task lists: each with its single-value twin left out, of the length its tasks
    /// have, every entry in range.
    fn validate_each(&self) -> Result<(), JobProblem> {
        let lists = [
            (
                "mapSecondsEach",
                self.map_seconds_each.as_ref().map(Vec::len),
            ),
            (
                "mapInputBytesEach",
                self.map_input_bytes_each.as_ref().map(Vec::len),
            ),
            (
                "mapOutputBytesEach",
                self.map_output_bytes_each.as_ref().map(Vec::len),
            ),
            (
                "reduceSecondsEach",
                self.reduce_seconds_each.as_ref().map(Vec::len),
            ),
        ];
        for (field, len) in lists {
            match len {
                Some(0) => return Err(problem(field, "an empty list: give one entry per task")),
                Some(n) if n > MAX_EACH => {
                    return Err(problem(
                        field,
                        format!(
                            "{n} entries; at most {MAX_EACH} (a replay of larger jobs needs another route)"
                        ),
                    ));
                }
                _ => {}
            }
        }
        for (field, twin, both) in [
            (
                "mapSecondsEach",
                "mapSeconds",
                self.map_seconds_each.is_some() && self.map_seconds.is_some(),
            ),
            (
                "mapOutputBytesEach",
                "mapOutputBytes",
                self.map_output_bytes_each.is_some() && self.map_output_bytes.is_some(),
            ),
            (
                "reduceSecondsEach",
                "reduceSeconds",
                self.reduce_seconds_each.is_some() && self.reduce_seconds.is_some(),
            ),
        ] {
            if both {
                return Err(problem(field, format!("give {twin} or {field}, not both")));
            }
        }
        if let Some(each) = &self.map_seconds_each {
            if let Some(maps) = self.maps
                && maps as usize != each.len()
            {
                return Err(problem(
                    "mapSecondsEach",
                    format!("{} entries for {maps} maps", each.len()),
                ));
            }
            for (field, len) in [
                (
                    "mapInputBytesEach",
                    self.map_input_bytes_each.as_ref().map(Vec::len),
                ),
                (
                    "mapOutputBytesEach",
                    self.map_output_bytes_each.as_ref().map(Vec::len),
                ),
            ] {
                if let Some(n) = len.filter(|&n| n != each.len()) {
                    return Err(problem(
                        field,
                        format!("{n} entries for {} maps (mapSecondsEach)", each.len()),
                    ));
                }
            }
        } else if let Some(field) = [
            ("mapInputBytesEach", self.map_input_bytes_each.is_some()),
            ("mapOutputBytesEach", self.map_output_bytes_each.is_some()),
        ]
        .iter()
        .find_map(|(f, given)| given.then_some(*f))
        {
            return Err(problem(field, "only with mapSecondsEach"));
        }
        if let Some(each) = &self.reduce_seconds_each
            && each.len() != self.reduces as usize
        {
            return Err(problem(
                "reduceSecondsEach",
                format!(
                    "{} entries for {} reduces (set reduces to match)",
                    each.len(),
                    self.reduces
                ),
            ));
        }
        for (field, list) in [
            ("mapSecondsEach", &self.map_seconds_each),
            ("reduceSecondsEach", &self.reduce_seconds_each),
        ] {
            if let Some(x) = list
                .iter()
                .flatten()
                .find(|x| !(0.0..=86_400.0).contains(*x))
            {
                return Err(problem(field, format!("{x} is outside 0 to 86400 seconds")));
            }
        }
        Ok(())
    }

    /// Every dataset the job reads, in map order: `input`, then `moreInputs`.
    pub fn inputs(&self) -> Vec<&str> {
        self.input
            .iter()
            .chain(&self.more_inputs)
            .map(String::as_str)
            .collect()
    }

    /// The application's parameters as `key=value`, in key order ([`AppSpec::parse`],
    /// [`synthetic_kind`]).
    pub fn param_list(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// The master's arguments after its program: `mr-master`, and the deadline if there is one.
/// The job is not among them: the master reads it from [`JOB_ENV`]; the deadline is not part
/// of the job (the rm sets it on its own clock).
pub fn master_args(deadline: Option<Deadline>) -> Vec<String> {
    let mut args = vec!["mr-master".to_owned()];
    args.extend(deadline.map(|d| format!("--deadline-ms={d}")));
    args
}

/// A master command an rm stored before the job was typed (`mr-master` followed by every job
/// flag, `--app=wordcount --policy=dart …`), in today's form with its deadline kept: an rm
/// upgraded across a restart starts the masters of the jobs it restores with it, since today's
/// master refuses those flags and reads the job from [`JOB_ENV`], which such an rm set too.
/// `None` when `command` is today's already, or not a MapReduce master's.
pub fn upgraded_master_command(command: &[String]) -> Option<Vec<String>> {
    let at = command.iter().position(|a| a == "mr-master")?;
    let flags = &command[at + 1..];
    let deadline = |f: &String| f.strip_prefix("--deadline-ms=").map(str::to_owned);
    if flags.iter().all(|f| deadline(f).is_some()) {
        return None;
    }
    let kept = flags
        .iter()
        .find_map(deadline)
        .and_then(|d| d.parse::<Deadline>().ok());
    let mut upgraded = command[..at].to_vec();
    upgraded.extend(master_args(kept));
    Some(upgraded)
}

/// A synthetic job's `kind` parameter: 1 to 100 ASCII letters, digits, `-`, `_`, `.`.
fn valid_kind_name(name: &str) -> bool {
    (1..=100).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// The profile store's kind of a synthetic job with parameters `params` (`key=value`, as the
/// master gets them): `synthetic:NAME` for `kind=NAME`, so that jobs imitating different
/// work (a trace's jobs, say) each keep a history of their own; `synthetic` without one.
/// `None` for a name [`MapReduceJob::validate`] refuses.
pub fn synthetic_kind(params: &[String]) -> Option<String> {
    let name = params.iter().rev().find_map(|p| p.strip_prefix("kind="));
    match name {
        None => Some("synthetic".into()),
        Some(n) if valid_kind_name(n) => Some(format!("synthetic:{n}")),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(json: &str) -> Result<MapReduceJob, String> {
        let job: MapReduceJob = serde_json::from_str(json).map_err(|e| e.to_string())?;
        job.validate().map_err(|e| e.to_string())?;
        Ok(job)
    }

    #[test]
    fn an_output_is_a_plain_new_name_of_a_job_that_reduces() {
        let j = job(r#"{"app": "wordcount", "input": "books", "output": "counts"}"#).unwrap();
        assert_eq!(j.output.as_deref(), Some("counts"));
        for (bad, says) in [
            (r#""input": "books", "output": "../x""#, "letters, digits"),
            (r#""input": "books", "output": """#, "letters, digits"),
            (r#""input": "books", "output": "books""#, "the job's input"),
            (
                r#""input": "books", "output": "o", "sampleOnly": true"#,
                "sample-only",
            ),
            (
                r#""input": "books", "output": "o", "sharedScan": true"#,
                "shared scan",
            ),
        ] {
            let e = job(&format!(r#"{{"app": "wordcount", {bad}}}"#)).unwrap_err();
            assert!(e.starts_with("output: ") && e.contains(says), "{bad}: {e}");
        }
        let e = job(r#"{"app": "synthetic", "maps": 2, "output": "o"}"#).unwrap_err();
        assert!(e.contains("synthetic job computes nothing"), "{e}");
    }

    #[test]
    fn a_minimal_job_takes_every_default() {
        let j = job(r#"{"app": "wordcount", "input": "books"}"#).unwrap();
        assert_eq!(j, MapReduceJob::new("wordcount", Some("books")));
        assert_eq!(j.policy, PolicyKind::Dart);
        assert_eq!(j.guard_seconds, DEFAULT_GUARD_SECONDS);
    }

    #[test]
    fn a_master_command_stored_before_the_job_was_typed_is_upgraded_with_its_deadline() {
        // As the rm at b59659c wrote one (`MapReduceJob::master_args` then).
        let old: Vec<String> = [
            "/usr/bin/yard",
            "mr-master",
            "--app=wordcount",
            "--policy=dart",
            "--reduces=2",
            "--seed=1",
            "--memory-mb=512",
            "--input=books",
            "--deadline-ms=1800000000000",
            "--guard-seconds=1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            upgraded_master_command(&old).unwrap(),
            ["/usr/bin/yard", "mr-master", "--deadline-ms=1800000000000"]
        );
        let mut no_deadline = old.clone();
        no_deadline.retain(|a| !a.starts_with("--deadline-ms"));
        assert_eq!(
            upgraded_master_command(&no_deadline).unwrap(),
            ["/usr/bin/yard", "mr-master"]
        );
        // Today's command, and a command that is not a MapReduce master's, stay as they are.
        let today = [vec!["/usr/bin/yard".to_owned()], master_args(None)].concat();
        assert_eq!(upgraded_master_command(&today), None);
        let mut dated = today.clone();
        dated.push("--deadline-ms=5".into());
        assert_eq!(upgraded_master_command(&dated), None);
        assert_eq!(upgraded_master_command(&["sh".into(), "-c".into()]), None);
    }

    #[test]
    fn the_master_command_carries_the_deadline_only() {
        let d = Deadline::from_epoch_ms(1_800_000_000_000);
        assert_eq!(
            master_args(Some(d)),
            ["mr-master", "--deadline-ms=1800000000000"]
        );
        assert_eq!(master_args(None), ["mr-master"]);
    }

    #[test]
    fn a_job_round_trips_through_json() {
        let j = job(
            r#"{"app": "grep", "input": "books", "params": {"pattern": "whale"},
                "policy": "dart-paper", "reduces": 3, "guardSeconds": 0}"#,
        )
        .unwrap();
        let again: MapReduceJob =
            serde_json::from_value(serde_json::to_value(&j).unwrap()).unwrap();
        assert_eq!(again, j);
        assert_eq!(j.param_list(), ["pattern=whale"]);
    }

    #[test]
    fn a_synthetic_job_names_its_own_profile_kind_and_nothing_else() {
        let j =
            job(r#"{"app": "synthetic", "maps": 2, "mapSeconds": 1, "params": {"kind": "job7"}}"#)
                .unwrap();
        assert_eq!(
            synthetic_kind(&j.param_list()).as_deref(),
            Some("synthetic:job7")
        );
        assert_eq!(synthetic_kind(&[]).as_deref(), Some("synthetic"));
        assert_eq!(synthetic_kind(&["kind=a b".into()]), None);
        for (bad, why) in [
            (r#"{"colour": "red"}"#, "one parameter, kind"),
            (r#"{"kind": ""}"#, "1 to 100"),
            (r#"{"kind": "a/b"}"#, "1 to 100"),
        ] {
            let e = job(&format!(
                r#"{{"app": "synthetic", "maps": 1, "mapSeconds": 1, "params": {bad}}}"#
            ))
            .unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn synthetic_jobs_carry_their_tasks() {
        let j = job(r#"{"app": "synthetic", "maps": 4, "mapSeconds": 0.5}"#).unwrap();
        assert_eq!((j.maps, j.map_seconds), (Some(4), Some(0.5)));
        let t = job(r#"{"app": "synthetic", "trace": "/t.json", "timeScale": 0.01}"#).unwrap();
        assert_eq!(t.trace.as_deref(), Some("/t.json"));
        assert_eq!((t.trace_job.as_deref(), t.time_scale), (None, Some(0.01)));
    }

    #[test]
    fn synthetic_jobs_may_give_every_task_its_own_time_and_bytes() {
        let j = job(
            r#"{"app": "synthetic", "mapSecondsEach": [0.5, 1.25], "mapInputBytesEach": [64, 32],
                "mapOutputBytesEach": [10, 0], "reduces": 1, "reduceSecondsEach": [2]}"#,
        )
        .unwrap();
        assert_eq!(j.map_seconds_each, Some(vec![0.5, 1.25]));
        assert_eq!(j.map_input_bytes_each, Some(vec![64, 32]));
        assert_eq!(j.map_output_bytes_each, Some(vec![10, 0]));
        assert_eq!(j.reduce_seconds_each, Some(vec![2.0]));
        let again: MapReduceJob =
            serde_json::from_value(serde_json::to_value(&j).unwrap()).unwrap();
        assert_eq!(again, j);
        for (json, field) in [
            (
                r#"{"app": "synthetic", "mapSecondsEach": []}"#,
                "mapSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "maps": 3, "mapSecondsEach": [1, 2]}"#,
                "mapSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "mapSeconds": 1, "mapSecondsEach": [1]}"#,
                "mapSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "mapSecondsEach": [-1]}"#,
                "mapSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "mapSecondsEach": [1], "mapInputBytesEach": [1, 2]}"#,
                "mapInputBytesEach",
            ),
            (
                r#"{"app": "synthetic", "maps": 1, "mapOutputBytesEach": [1]}"#,
                "mapOutputBytesEach",
            ),
            (
                r#"{"app": "synthetic", "maps": 1, "reduceSecondsEach": [1]}"#,
                "reduceSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "maps": 1, "reduces": 1, "reduceSecondsEach": [1e9]}"#,
                "reduceSecondsEach",
            ),
            (
                r#"{"app": "synthetic", "trace": "t", "mapSecondsEach": [1]}"#,
                "mapSecondsEach",
            ),
            (
                r#"{"app": "wordcount", "input": "b", "reduceSecondsEach": [1, 1]}"#,
                "reduceSecondsEach",
            ),
        ] {
            let err = job(json).expect_err(json);
            assert!(err.starts_with(&format!("{field}: ")), "{json}: {err}");
        }
    }

    #[test]
    fn a_shared_scan_reads_a_dataset_under_full_and_reaches_the_master() {
        let j = job(r#"{"app": "wordcount", "input": "b", "policy": "full", "sharedScan": true}"#)
            .unwrap();
        assert!(j.shared_scan);
        let dart = job(r#"{"app": "wordcount", "input": "b", "sharedScan": true}"#).unwrap();
        assert_eq!(dart.policy, PolicyKind::Dart);
        for json in [
            r#"{"app": "wordcount", "input": "b", "policy": "aria", "sharedScan": true}"#,
            r#"{"app": "synthetic", "maps": 2, "policy": "full", "sharedScan": true}"#,
        ] {
            let err = job(json).expect_err(json);
            assert!(err.starts_with("sharedScan: "), "{json}: {err}");
        }
        let plain = job(r#"{"app": "wordcount", "input": "b"}"#).unwrap();
        assert!(
            !serde_json::to_string(&plain)
                .unwrap()
                .contains("sharedScan")
        );
    }

    #[test]
    fn a_streaming_job_ships_files_reads_several_inputs_and_limits_its_attempts() {
        let file = ShippedFile::new("m.py", b"print(1)\n", true);
        let j = job(&format!(
            r#"{{"app": "streaming", "input": "a", "moreInputs": ["b", "c"],
                "params": {{"mapper": "python3 m.py"}}, "files": [{}],
                "mapMaxAttempts": 1, "reduceMaxAttempts": 2}}"#,
            serde_json::to_string(&file).unwrap()
        ))
        .unwrap();
        assert_eq!(j.inputs(), ["a", "b", "c"]);
        assert_eq!(j.files, std::slice::from_ref(&file));
        assert_eq!(
            (j.map_max_attempts, j.reduce_max_attempts),
            (Some(1), Some(2))
        );
        let again: MapReduceJob =
            serde_json::from_value(serde_json::to_value(&j).unwrap()).unwrap();
        assert_eq!(again, j);
        let file = serde_json::to_string(&file).unwrap();
        for (json, field) in [
            (
                format!(r#"{{"app": "wordcount", "input": "a", "files": [{file}]}}"#),
                "files",
            ),
            (
                r#"{"app": "streaming", "input": "a", "params": {"mapper": "cat"},
                    "files": [{"name": "x", "contentBase64": "%%"}]}"#
                    .into(),
                "files",
            ),
            (
                r#"{"app": "wordcount", "input": "a", "moreInputs": ["a"]}"#.into(),
                "moreInputs",
            ),
            (
                r#"{"app": "wordcount", "input": "a", "moreInputs": ["b"], "policy": "full",
                    "sharedScan": true}"#
                    .into(),
                "moreInputs",
            ),
            (
                r#"{"app": "wordcount", "input": "a", "mapMaxAttempts": 0}"#.into(),
                "mapMaxAttempts",
            ),
            (
                r#"{"app": "wordcount", "input": "a", "reduceMaxAttempts": 101}"#.into(),
                "reduceMaxAttempts",
            ),
        ] {
            let err = job(&json).expect_err(&json);
            assert!(err.starts_with(&format!("{field}: ")), "{json}: {err}");
        }
    }

    #[test]
    fn max_containers_caps_any_job_and_reaches_the_master() {
        let j = job(r#"{"app": "synthetic", "maps": 4, "maxContainers": 2}"#).unwrap();
        assert_eq!(j.max_containers, Some(2));
        let again: MapReduceJob =
            serde_json::from_value(serde_json::to_value(&j).unwrap()).unwrap();
        assert_eq!(again, j);
        let w = job(r#"{"app": "wordcount", "input": "b", "maxContainers": 1}"#).unwrap();
        assert_eq!(w.max_containers, Some(1));
        // Absent: no cap.
        let none = job(r#"{"app": "synthetic", "maps": 4}"#).unwrap();
        assert_eq!(none.max_containers, None);
        assert!(
            !serde_json::to_string(&none)
                .unwrap()
                .contains("maxContainers")
        );
        for json in [
            r#"{"app": "synthetic", "maps": 4, "maxContainers": 0}"#,
            r#"{"app": "synthetic", "maps": 4, "maxContainers": 100001}"#,
        ] {
            let err = job(json).expect_err(json);
            assert!(err.starts_with("maxContainers: "), "{json}: {err}");
            assert!(err.contains("leave it out"), "{json}: {err}");
        }
        // Not a count at all: serde's error names the field.
        for json in [
            r#"{"app": "synthetic", "maps": 4, "maxContainers": -1}"#,
            r#"{"app": "synthetic", "maps": 4, "maxContainers": "2"}"#,
        ] {
            let err = job(json).expect_err(json);
            assert!(
                err.contains("maxContainers") || err.contains("invalid"),
                "{json}: {err}"
            );
        }
    }

    /// Every bad job is refused with the field to fix.
    #[test]
    fn bad_jobs_name_the_field_to_fix() {
        for (json, field) in [
            (r#"{"app": "sort", "input": "b"}"#, "app"),
            (r#"{"app": "wordcount"}"#, "input"),
            (r#"{"app": "wordcount", "input": ""}"#, "input"),
            (r#"{"app": "grep", "input": "b"}"#, "params"),
            (r#"{"app": "streaming", "input": "b"}"#, "params"),
            (
                r#"{"app": "streaming", "input": "b", "params": {"mapper": "cat"}, "sharedScan": true}"#,
                "sharedScan",
            ),
            (
                r#"{"app": "wordcount", "input": "b", "params": {"colour": "red"}}"#,
                "params",
            ),
            (r#"{"app": "wordcount", "input": "b", "maps": 3}"#, "maps"),
            (
                r#"{"app": "wordcount", "input": "b", "reduces": 0}"#,
                "reduces",
            ),
            (
                r#"{"app": "wordcount", "input": "b", "memoryMb": 0}"#,
                "memoryMb",
            ),
            (
                r#"{"app": "wordcount", "input": "b", "guardSeconds": -1}"#,
                "guardSeconds",
            ),
            (
                r#"{"app": "wordcount", "input": "b", "mapMinSeconds": 1e9}"#,
                "mapMinSeconds",
            ),
            (r#"{"app": "synthetic"}"#, "maps"),
            (r#"{"app": "synthetic", "maps": 0}"#, "maps"),
            (r#"{"app": "synthetic", "input": "b", "maps": 2}"#, "input"),
            (
                r#"{"app": "synthetic", "maps": 2, "mapSeconds": -1}"#,
                "mapSeconds",
            ),
            (
                r#"{"app": "synthetic", "maps": 2, "timeScale": 2}"#,
                "timeScale",
            ),
            (r#"{"app": "synthetic", "trace": "t", "maps": 2}"#, "maps"),
            (
                r#"{"app": "synthetic", "trace": "t", "timeScale": 0}"#,
                "timeScale",
            ),
        ] {
            let err = job(json).expect_err(json);
            assert!(err.starts_with(&format!("{field}: ")), "{json}: {err}");
        }
        // Shape errors are serde's, and name the field or the value too.
        let err = job(r#"{"app": "wordcount", "input": "b", "policy": "fastest"}"#).unwrap_err();
        assert!(err.contains("unknown policy \"fastest\""), "{err}");
        let err = job(r#"{"app": "wordcount", "input": "b", "reduce": 2}"#).unwrap_err();
        assert!(err.contains("unknown field `reduce`"), "{err}");
    }
}
