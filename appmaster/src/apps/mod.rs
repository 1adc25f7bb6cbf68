//! The built-in MapReduce applications, pure functions of their input bytes, and their
//! approximate answers.
//!
//! A job runs `map` on each split it has time for, each reducer runs `reduce` on the
//! partitions it kept (all, or a `sample_partitions` draw when Dart shrinks its input), and
//! the master combines every map's [`MapStats`] and every reducer's [`ReducePartial`] with
//! `answer`. When maps or partitions were left out, the answer's totals are ratio estimates
//! with 95 % intervals ([`approx`]); when nothing was left out they are exact, and equal to
//! [`AppSpec::exact`].
//!
//! # Answers
//!
//! JSON, camelCase. Every estimated count is `{"estimate", "low", "high", "observed"}`
//! ([`Estimate`]). Always: `app`, `exact` (every map read and every partition kept), `mapsRead`,
//! `maps`, `bytesRead`, `bytes`, and `notes` (what the numbers cannot claim: one map read, a
//! reducer with one partition, reducers missing, the sampling assumption). Then:
//!
//! - wordcount: `words` (from the maps' stats), `distinctWordsSeen`, `top` `[{word, …}]`;
//! - grep: `pattern`, `matchingLines`, `lines`, `sample` `[{map, line, text}]` (the first
//!   matching lines in map order), `matches` `[{text, …}]` (the most frequent matched texts);
//! - topk: `field`, `keys` `[{key, …}]`, `lines`, `skippedLines` (observed);
//! - index: `distinctTermsSeen`, `postingsSeen`, `top` `[{term, …, postings: [{map, line}]}]`;
//! - synthetic: `records` (estimated), `outputBytes` (observed), `recordsReduced`.
//! - streaming: `mapper`, `reducer` (`"NONE"` when map-only), `output` (the reducers' stdout
//!   lines in partition order, or the maps' in map order, at most `outputCap`),
//!   `outputLines` (all they wrote), `outputCap`, `truncated`, and `bounds`: none are
//!   claimed for a user's command, whose output covers what was read (`processedFraction`),
//!   unscaled. Its `notes` say so instead of the estimator's. `reducesCut` lists the
//!   reducers the deadline guard cut while their command ran (`reduce`, `fedBytes` of
//!   `inputBytes`, `fedFraction`, `stopped`: killed after its grace), each with a note.
//!
//! Top lists are each reducer's largest keys merged by estimate (reducers' keys are disjoint),
//! ties by key. Totals come from the maps' stats over the maps that finished (k of N); a key's
//! count comes from its reducer, over the partitions it kept (its own k).
//!
//! # Modules
//!
//! - [`approx`]: the estimator; [`records`]: the partition format; [`hash`]: partitioning.
//! - No IO, no clock, no global randomness; bad input (partition bytes, specs) is an
//!   [`AppError`], never a panic.

pub mod aggregate;
mod answer;
pub mod approx;
pub mod hash;
mod maps;
pub mod part;
pub mod records;
mod reduce;
pub mod streaming;
mod text;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::policy::Rng;
pub use approx::{Estimate, Sums};
pub use records::RecordError;
use records::{APPS, Writer};

/// Most reducers a map writes for (each gets at least a header, so this bounds a map's
/// memory whatever it is asked).
pub(crate) const MAX_REDUCES: u32 = 1 << 20;

/// A built-in application and its parameters. Serialized (serde_json) into every task's spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "app", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AppSpec {
    /// Words (maximal runs of alphanumeric chars, lowercased) counted; the answer lists the
    /// `top` most frequent.
    Wordcount { top: usize },
    /// Lines matching a regex: their count, and up to `sample` matching lines. Maps also emit
    /// each match's text, so the answer lists the `sample` most frequent matches too.
    Grep { pattern: String, sample: usize },
    /// Count lines per key, key = whitespace-separated field number `field` (0-based) of each
    /// line (lines without it are skipped and counted as such); the answer gives the `k`
    /// largest.
    Topk { field: usize, k: usize },
    /// Inverted index: word → the (map index, line number within the split) postings; the
    /// answer reports distinct terms, postings, and the `top` terms by document frequency with
    /// a few postings each. Line numbers are 1-based.
    Index { top: usize },
    /// Reproduces a trace's recorded tasks: map i emits `maps[i].output_bytes` of filler
    /// records spread evenly over the partitions; its duration is applied by the task process
    /// (not here).
    Synthetic {
        maps: Vec<SyntheticTask>,
        reduce_seconds: Vec<f64>,
    },
    /// Hadoop Streaming: each map runs `sh -c mapper` with its split's lines on stdin and
    /// writes `key<TAB>value` lines (`keys` says how a line splits and which reducer a key
    /// goes to); `combiner`, if any, runs on each of a map's partitions, sorted, and its
    /// output is what the reduce fetches; each reduce runs `sh -c reducer` once over its
    /// records sorted by key. `reducer: None` is Hadoop's `NONE`, a map-only job whose output
    /// is the maps'. `cmdenv` is added to the commands' environment; `files` are placed in
    /// each task's working directory. The task process runs the commands
    /// ([`AppSpec::map_streamed`], [`AppSpec::reducer_input`]).
    Streaming {
        mapper: String,
        #[serde(default)]
        reducer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        combiner: Option<String>,
        #[serde(default)]
        cmdenv: Vec<(String, String)>,
        #[serde(default)]
        keys: streaming::KeySettings,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<streaming::ShippedFile>,
        /// `reducer=aggregate`'s estimator (`yard.aggregate.estimator`).
        #[serde(default, skip_serializing_if = "aggregate::Estimator::is_default")]
        estimator: aggregate::Estimator,
    },
}

/// One recorded map task of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyntheticTask {
    pub seconds: f64,
    pub input_bytes: u64,
    pub output_bytes: u64,
}

/// A map's split: its index among the job's maps and its bytes (the estimator's `x_i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Split {
    pub index: u32,
    pub bytes: u64,
}

/// The whole job's input: every map, and its bytes (the estimator's N and X).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Population {
    pub maps: u32,
    pub bytes: u64,
}

/// One map task's output.
#[derive(Debug, Clone, PartialEq)]
pub struct MapOutput {
    /// One per reducer, in the [`records`] format, keys sorted.
    pub partitions: Vec<Vec<u8>>,
    pub stats: MapStats,
}

/// Per-map statistics the master carries to `answer`. Fields an app does not use are 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MapStats {
    /// Input bytes read.
    pub bytes: u64,
    /// Lines read (grep, topk, index, wordcount).
    pub lines: u64,
    /// Words read (wordcount, index).
    pub words: u64,
    /// Lines the pattern matched (grep).
    pub matching_lines: u64,
    /// Lines without the key field (topk).
    pub skipped_lines: u64,
    /// Records written over all partitions (distinct keys; filler records for synthetic).
    pub records: u64,
    /// Bytes written over all partitions, headers included.
    pub output_bytes: u64,
    /// The first matching lines (grep), at most `sample`.
    pub sample: Vec<SampleLine>,
    /// A map-only streaming job: the mapper's first stdout lines, at most
    /// [`streaming::OUTPUT_CAP`], and how many it wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_lines: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A matching line kept as an example.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleLine {
    /// 1-based, within the split.
    pub line: u64,
    /// Lossy UTF-8, cut to 1 KiB (ending in "…") when longer.
    pub text: String,
}

/// An index posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posting {
    pub map: u32,
    /// 1-based line within the map's split.
    pub line: u32,
}

/// The most characters a job kind has: the profile store's limit (`yard-profiles` checks
/// it) and the rm's on a master's registration (`jobKind`).
pub const MAX_KIND_CHARS: usize = 200;

/// `kind` as the profile store takes it: unchanged when it has at most [`MAX_KIND_CHARS`]
/// printable characters; else (a long grep pattern, long or many inputs: a job may name 101
/// datasets of up to 200 characters) its head, each control character as `?`, then `~` and
/// the first 128 bits of the whole kind's SHA-256 in hex, [`MAX_KIND_CHARS`] in all. Hashed,
/// not refused: the kind is yard's key for a job's history, not a name the user chose, and a
/// job Hadoop would run must not fail on it. The same job over the same inputs is still the
/// same kind (its runs share a profile), two jobs differing past the head are two, and the
/// head says what the job is.
pub fn fit_kind(kind: String) -> String {
    if kind.chars().count() <= MAX_KIND_CHARS && !kind.chars().any(char::is_control) {
        return kind;
    }
    let hex = streaming::sha256_hex128(kind.as_bytes());
    let head: String = kind
        .chars()
        .take(MAX_KIND_CHARS - 1 - hex.len())
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    format!("{head}~{hex}")
}

/// A reducer's partial answer: what it read, and its largest keys already estimated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReducePartial {
    pub app: String,
    /// Which reducer, from the partitions' headers; `None` if it kept none.
    pub partition: Option<u32>,
    pub reduces: Option<u32>,
    /// The job's maps (N) as the reducer was told.
    pub maps: u32,
    /// Partitions kept (this reducer's k).
    pub kept: u32,
    /// Σ split bytes of the maps whose partitions it kept.
    pub kept_bytes: u64,
    /// Partition bytes read.
    pub input_bytes: u64,
    /// Records read.
    pub records: u64,
    /// Σ of the records' counts (index: postings).
    pub counted: u64,
    pub distinct_keys: u64,
    /// The reducer's largest keys by estimate (as many as the answer lists), ties by key.
    pub top: Vec<TopEntry>,
    /// Streaming: the reducer command's first stdout lines, at most
    /// [`streaming::OUTPUT_CAP`], and how many it wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_lines: u64,
    /// `-reducer aggregate`: the reducer's keys, each a row and Hadoop's line, sorted by
    /// `TYPE:id`, at most [`streaming::OUTPUT_CAP`] ([`aggregate`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<aggregate::Reduced>,
    /// Streaming: the deadline guard cut the reducer's command while it ran; `None` when
    /// the command was given all its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_cut: Option<CommandCut>,
}

/// A streaming reducer's command cut by the deadline guard while it ran: its stdin (the
/// sorted `key<TAB>value` lines of the partitions the reduce kept) was closed at a key
/// boundary, so its output is of the keys it was given, each with all its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandCut {
    /// Bytes of its stdin the command was fed, of all it would have been.
    pub fed_bytes: u64,
    pub input_bytes: u64,
    /// Still running a grace period after its stdin closed, it was killed: its output is
    /// what it wrote by then, which may stop short of the keys it was fed.
    pub stopped: bool,
}

impl CommandCut {
    /// The share of its input the command was fed, 0 to 1.
    pub fn fed_fraction(&self) -> f64 {
        match self.input_bytes {
            0 => 1.0,
            all => self.fed_bytes.min(all) as f64 / all as f64,
        }
    }
}

/// One key of a reducer's top list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopEntry {
    pub key: String,
    pub estimate: Estimate,
    /// Index: the first postings in (map, line) order, at most 5.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub postings: Vec<Posting>,
}

/// What is wrong with a spec, a parameter or a partition.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AppError {
    #[error(
        "unknown app `{0}`: expected one of wordcount, grep, topk, index, streaming, or \
         synthetic (which takes --maps N or --trace FILE instead of parameters)"
    )]
    UnknownApp(String),
    #[error("app `{app}` has no parameter `{param}`: it accepts {accepted}")]
    UnknownParam {
        app: &'static str,
        param: String,
        accepted: &'static str,
    },
    #[error("app `{app}`: parameter `{param}` should be KEY=VALUE; it accepts {accepted}")]
    NotKeyValue {
        app: &'static str,
        param: String,
        accepted: &'static str,
    },
    #[error("app `{app}`: parameter `{param}` given twice")]
    DuplicateParam { app: &'static str, param: String },
    #[error("app `{app}`: `{param}` must be a non-negative integer, found `{value}`")]
    BadNumber {
        app: &'static str,
        param: String,
        value: String,
    },
    #[error("app `{app}`: `{param}` is empty; give a command")]
    EmptyParam {
        app: &'static str,
        param: &'static str,
    },
    #[error("app `{app}` needs `{param}`")]
    MissingParam {
        app: &'static str,
        param: &'static str,
    },
    #[error("invalid pattern `{pattern}`: {reason}")]
    BadPattern { pattern: String, reason: String },
    #[error("a job needs at least one reduce")]
    NoReduces,
    #[error("{what} exceeds the limit of {limit}")]
    TooLarge { what: String, limit: u64 },
    #[error("map {map} does not exist: the synthetic job has {maps} maps")]
    NoSuchMap { map: u32, maps: usize },
    #[error("partition from map {map}: the job has only {maps} maps")]
    OutsidePopulation { map: u32, maps: u32 },
    #[error("partition from map {map} given twice")]
    DuplicateInput { map: u32 },
    #[error("partition from map {map} was written by app `{found}`, not `{expected}`")]
    WrongApp {
        map: u32,
        expected: &'static str,
        found: &'static str,
    },
    #[error(
        "partition from map {map} is partition {} of {}, the others are partition {} of {}",
        found.0, found.1, expected.0, expected.1
    )]
    MixedPartitions {
        map: u32,
        found: (u32, u32),
        expected: (u32, u32),
    },
    #[error("partition from map {map}: {error}")]
    Malformed { map: u32, error: RecordError },
    #[error(
        "a streaming job's tasks run its commands: the task process calls map_streamed and \
         reducer_input"
    )]
    RunsCommands,
    /// A streaming command's output that yard's shuffle cannot carry (`streaming`'s doc).
    #[error("the {command} wrote a malformed record on its output line {line}: {problem}")]
    MalformedOutput {
        command: &'static str,
        line: u64,
        problem: String,
    },
    /// A streaming job's setting that is not one yard honours, or not well formed.
    #[error("app `streaming`: {0}")]
    BadSetting(String),
    /// A streaming command (the combiner) that failed, as the task process says.
    #[error("{0}")]
    CommandFailed(String),
    #[error("{0}")]
    Aggregate(#[from] aggregate::LineError),
}

/// The grep pattern, compiled for bytes (input need not be UTF-8).
fn compile(pattern: &str) -> Result<regex::bytes::Regex, AppError> {
    regex::bytes::Regex::new(pattern).map_err(|e| AppError::BadPattern {
        pattern: pattern.to_owned(),
        reason: e.to_string(),
    })
}

/// (name, parameters, what `parse` accepts) for the apps made from a name.
const PARSED: [(&str, &[&str], &str); 5] = [
    ("wordcount", &["top"], "top=N (default 20)"),
    (
        "grep",
        &["pattern", "sample"],
        "pattern=REGEX (required), sample=N (default 10)",
    ),
    (
        "topk",
        &["field", "k"],
        "field=N (default 0), k=N (default 10)",
    ),
    ("index", &["top"], "top=N (default 20)"),
    (
        "streaming",
        &[
            "mapper",
            "reducer",
            "combiner",
            "cmdenv",
            "partitioner",
            streaming::KEY_PARAMS[0].0,
            streaming::KEY_PARAMS[1].0,
            streaming::KEY_PARAMS[2].0,
            streaming::KEY_PARAMS[3].0,
            aggregate::ESTIMATOR_PARAM,
        ],
        "mapper=CMD (required), reducer=CMD, NONE or aggregate (default cat, Hadoop's identity \
         reducer), \
         combiner=CMD, cmdenv=K=V (one a line), partitioner=CLASS, and Hadoop's \
         stream.map.output.field.separator, stream.num.map.output.key.fields, \
         mapreduce.map.output.key.field.separator, mapreduce.partition.keypartitioner.options; \
         with reducer=aggregate, yard.aggregate.estimator=stratified|ratio",
    ),
];

impl AppSpec {
    /// Parses the CLI form: name + key=value params, e.g. `("grep", &["pattern=ERROR"])`,
    /// `("topk", &["field=6", "k=10"])`, `("wordcount", &[])`. Defaults: top 20, sample 10,
    /// k 10, field 0. An unknown name or parameter is an error listing what is accepted; a
    /// grep pattern that does not compile is an error here already.
    pub fn parse(name: &str, params: &[String]) -> Result<AppSpec, AppError> {
        let Some(&(app, keys, accepted)) = PARSED.iter().find(|(n, _, _)| *n == name) else {
            return Err(AppError::UnknownApp(name.to_owned()));
        };
        let mut given: Vec<(&str, &str)> = Vec::new();
        for p in params {
            let Some((key, value)) = p.split_once('=') else {
                return Err(AppError::NotKeyValue {
                    app,
                    param: p.clone(),
                    accepted,
                });
            };
            if !keys.contains(&key) {
                return Err(AppError::UnknownParam {
                    app,
                    param: key.to_owned(),
                    accepted,
                });
            }
            if given.iter().any(|(k, _)| *k == key) {
                return Err(AppError::DuplicateParam {
                    app,
                    param: key.to_owned(),
                });
            }
            given.push((key, value));
        }
        let get = |key: &str| given.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let number = |key: &str, default: usize| match get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| AppError::BadNumber {
                app,
                param: key.to_owned(),
                value: v.to_owned(),
            }),
        };
        Ok(match app {
            "wordcount" => AppSpec::Wordcount {
                top: number("top", 20)?,
            },
            "grep" => {
                let pattern = get("pattern").ok_or(AppError::MissingParam {
                    app,
                    param: "pattern=REGEX",
                })?;
                compile(pattern)?;
                AppSpec::Grep {
                    pattern: pattern.to_owned(),
                    sample: number("sample", 10)?,
                }
            }
            "topk" => AppSpec::Topk {
                field: number("field", 0)?,
                k: number("k", 10)?,
            },
            "streaming" => {
                let command = |param: &'static str, default: Option<&str>| match get(param)
                    .or(default)
                    .map(str::trim)
                {
                    Some("") => Err(AppError::EmptyParam { app, param }),
                    found => Ok(found.map(str::to_owned)),
                };
                let mapper = command("mapper", None)?.ok_or(AppError::MissingParam {
                    app,
                    param: "mapper=CMD",
                })?;
                let reducer = command("reducer", Some("cat"))?.filter(|r| r != "NONE");
                let combiner = command("combiner", None)?;
                if combiner.is_some() && reducer.is_none() {
                    return Err(AppError::BadSetting(
                        "a combiner runs before reducers, and reducer=NONE has none: leave \
                         the combiner out"
                            .into(),
                    ));
                }
                let keys = streaming::KeySettings::parse(&given).map_err(AppError::BadSetting)?;
                if reducer.as_deref() == Some(aggregate::AGGREGATE)
                    && (combiner.is_some() || keys != streaming::KeySettings::default())
                {
                    return Err(AppError::BadSetting(
                        "reducer=aggregate combines and partitions its own keys (Hadoop's \
                         aggregate package): leave out the combiner and the key settings"
                            .into(),
                    ));
                }
                let estimator = match get(aggregate::ESTIMATOR_PARAM) {
                    None => aggregate::Estimator::default(),
                    Some(_) if reducer.as_deref() != Some(aggregate::AGGREGATE) => {
                        return Err(AppError::BadSetting(format!(
                            "{} picks reducer=aggregate's estimator: leave it out with \
                             another reducer",
                            aggregate::ESTIMATOR_PARAM
                        )));
                    }
                    Some(v) => aggregate::Estimator::parse(v).map_err(AppError::BadSetting)?,
                };
                let cmdenv = get("cmdenv")
                    .unwrap_or_default()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| match l.split_once('=') {
                        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
                        _ => Err(AppError::NotKeyValue {
                            app,
                            param: format!("cmdenv={l}"),
                            accepted,
                        }),
                    })
                    .collect::<Result<_, _>>()?;
                AppSpec::Streaming {
                    mapper,
                    reducer,
                    combiner,
                    cmdenv,
                    keys,
                    files: Vec::new(),
                    estimator,
                }
            }
            _ => AppSpec::Index {
                top: number("top", 20)?,
            },
        })
    }

    /// The job kind for the profile store: the app name plus the parameters that change
    /// cost, e.g. "wordcount", "grep:ERROR", "topk:field=6"; a streaming job's is a hash of
    /// what its tasks run ([`streaming::kind`] says what, and why not the reduce count).
    pub fn kind(&self) -> String {
        match self {
            AppSpec::Grep { pattern, .. } => format!("grep:{pattern}"),
            AppSpec::Topk { field, .. } => format!("topk:field={field}"),
            // What its tasks run is what it costs: the same script is the same kind. The
            // aggregate's estimator is arithmetic on the answer's side, not a cost.
            AppSpec::Streaming {
                mapper,
                reducer,
                combiner,
                cmdenv,
                keys,
                files,
                estimator: _,
            } => streaming::kind(&streaming::KindParts {
                mapper,
                reducer: reducer.as_deref(),
                combiner: combiner.as_deref(),
                cmdenv,
                keys,
                files,
            }),
            _ => self.name().to_owned(),
        }
    }

    /// The job's kind in the profile store: [`Self::kind`]; for a streaming job that reduces,
    /// `:reduces=N`; then `@` and its inputs joined by `+`; at most [`MAX_KIND_CHARS`]
    /// ([`fit_kind`]). A recurring job is the same app, parameters and inputs.
    ///
    /// The reduce count is in a streaming job's kind because what the profile keeps of the
    /// reduces is per reducer: `p` (`partition_bytes`, the bytes one map sends one reducer)
    /// and eq. 13's largest reduce input. A second run with another `-numReduceTasks` would
    /// forecast its reduces from the first run's sizes, off by the ratio of the counts.
    /// Storing them per map output byte instead would fix every kind, but change what every
    /// stored profile means, built-in jobs' and their histories included; streaming kinds
    /// are new, so the count joins them and built-in kinds stay as stored. Another count is
    /// another kind, which runs the task sampler once. A map-only job has no reducer: no
    /// count.
    pub fn job_kind(&self, reduces: u32, inputs: &[&str]) -> String {
        let mut kind = self.kind();
        if matches!(
            self,
            AppSpec::Streaming {
                reducer: Some(_),
                ..
            }
        ) {
            kind = format!("{kind}:reduces={reduces}");
        }
        if !inputs.is_empty() {
            kind = format!("{kind}@{}", inputs.join("+"));
        }
        fit_kind(kind)
    }

    /// A streaming job with `-reducer aggregate`: Hadoop's aggregate reducer, built in
    /// ([`aggregate`]), instead of a command.
    pub fn is_aggregate(&self) -> bool {
        matches!(self, AppSpec::Streaming { reducer: Some(r), .. } if r == aggregate::AGGREGATE)
    }

    /// The app's short name ("wordcount", "grep", "topk", "index", "synthetic").
    pub fn name(&self) -> &'static str {
        APPS[usize::from(self.tag()) - 1]
    }

    /// The app's tag in partition headers.
    fn tag(&self) -> u8 {
        match self {
            AppSpec::Wordcount { .. } => 1,
            AppSpec::Grep { .. } => 2,
            AppSpec::Topk { .. } => 3,
            AppSpec::Index { .. } => 4,
            AppSpec::Synthetic { .. } => 5,
            AppSpec::Streaming { .. } => 6,
        }
    }

    /// How many keys the answer lists.
    fn top_len(&self) -> usize {
        match self {
            AppSpec::Wordcount { top } | AppSpec::Index { top } => *top,
            AppSpec::Grep { sample, .. } => *sample,
            AppSpec::Topk { k, .. } => *k,
            AppSpec::Synthetic { .. } | AppSpec::Streaming { .. } => 0,
        }
    }

    /// One map task over its split's bytes (whole lines; a split may be empty). Returns
    /// `reduces` partitions (hash-partitioned by key, each sorted by key) and the map's
    /// statistics. `reduces` must be in `1..=MAX_REDUCES`.
    pub fn map(&self, split: Split, input: &[u8], reduces: u32) -> Result<MapOutput, AppError> {
        if reduces == 0 {
            return Err(AppError::NoReduces);
        }
        if reduces > MAX_REDUCES {
            return Err(AppError::TooLarge {
                what: format!("{reduces} reduces"),
                limit: MAX_REDUCES.into(),
            });
        }
        let mut w = Writer::new(self.tag(), split.index, reduces);
        let mut stats = match self {
            AppSpec::Wordcount { .. } => maps::wordcount(input, &mut w),
            AppSpec::Grep { pattern, sample } => maps::grep(pattern, *sample, input, &mut w)?,
            AppSpec::Topk { field, .. } => maps::topk(*field, input, &mut w),
            AppSpec::Index { .. } => maps::index(input, &mut w)?,
            AppSpec::Synthetic { maps: tasks, .. } => {
                let task = tasks.get(split.index as usize).ok_or(AppError::NoSuchMap {
                    map: split.index,
                    maps: tasks.len(),
                })?;
                maps::synthetic(task, &mut w)?
            }
            AppSpec::Streaming { .. } => return Err(AppError::RunsCommands),
        };
        let (partitions, records, bytes) = w.finish();
        stats.bytes = input.len() as u64;
        stats.records = records;
        stats.output_bytes = bytes;
        Ok(MapOutput { partitions, stats })
    }

    /// A streaming map: its partitions (or, map-only, its output lines in its stats) from
    /// its split's `input` and what its mapper wrote to `stdout` for it. With a combiner,
    /// `combine(p, stdin)` runs it over partition `p`'s records (sorted `key<TAB>value`
    /// lines; empty partitions are not combined) and its output is the partition's records.
    /// Any other app is [`Self::map`]'s. A map-only job has `reduces` 0.
    pub fn map_streamed(
        &self,
        split: Split,
        input: &[u8],
        stdout: &[u8],
        reduces: u32,
        combine: &mut streaming::Combine<'_>,
    ) -> Result<MapOutput, AppError> {
        let AppSpec::Streaming {
            reducer,
            combiner,
            keys,
            ..
        } = self
        else {
            return self.map(split, input, reduces);
        };
        let map_only = reducer.is_none();
        let reduces = if map_only { 0 } else { reduces };
        if reduces == 0 && !map_only {
            return Err(AppError::NoReduces);
        }
        if reduces > MAX_REDUCES {
            return Err(AppError::TooLarge {
                what: format!("{reduces} reduces"),
                limit: MAX_REDUCES.into(),
            });
        }
        let mut w = Writer::new(self.tag(), split.index, reduces);
        let mut stats = if self.is_aggregate() {
            // Hadoop's aggregate combiner is built in: the map folds its lines per key.
            aggregate::map(input, stdout, &mut w)?
        } else {
            // Map-only output is not shuffled: its lines are kept as they are.
            let mut parts = if map_only {
                Vec::new()
            } else {
                streaming::partitioned("mapper", stdout, keys, reduces)?
            };
            let mut outs: Vec<Vec<u8>> = Vec::new();
            if combiner.is_some() {
                for (p, records) in parts.iter().enumerate() {
                    outs.push(if records.is_empty() {
                        Vec::new()
                    } else {
                        combine(p as u32, &streaming::reducer_input(records.clone()))
                            .map_err(AppError::CommandFailed)?
                    });
                }
                parts = outs
                    .iter()
                    .enumerate()
                    .map(|(p, out)| streaming::combined(out, keys, p as u32, reduces))
                    .collect::<Result<_, _>>()?;
            }
            streaming::map(input, stdout, &parts, map_only, &mut w)
        };
        let (partitions, records, bytes) = w.finish();
        stats.bytes = input.len() as u64;
        stats.records = records;
        stats.output_bytes = bytes;
        Ok(MapOutput { partitions, stats })
    }

    /// The reducer a key goes to: its hash, or for a streaming job its partitioner's choice.
    pub(crate) fn partition_of(&self, key: &[u8], reduces: u32) -> u32 {
        match self {
            AppSpec::Streaming { keys, .. } => keys.partition(key, reduces),
            _ => hash::partition_of(key, reduces),
        }
    }

    /// Whether the job's maps write no partitions (a streaming job with `reducer: None`):
    /// it runs no reduce at all.
    pub fn map_only(&self) -> bool {
        matches!(self, AppSpec::Streaming { reducer: None, .. })
    }

    /// A streaming reduce's fold ([`Self::reduce_until`]) and its command's stdin: the
    /// records of the partitions folded, sorted by key, one `key<TAB>value` line each.
    /// Set the partial's `output` from the command's stdout ([`streaming::output_lines`]).
    pub fn reducer_input(
        &self,
        population: Population,
        inputs: &[(Split, &[u8])],
        cut: &mut dyn FnMut() -> bool,
    ) -> Result<(ReducePartial, Vec<u8>), AppError> {
        let mut records: Vec<(&str, &[u8])> = Vec::new();
        let mut partial = reduce::fold_with(self, population, inputs, cut, &mut |_, rec| {
            records.extend(rec.values().map(|v| (rec.key, v)));
        })?;
        // The fold keeps no table of keys for a user reducer (reduce.rs): the sort counts them.
        let (stdin, keys) = streaming::sorted_input(&records);
        partial.distinct_keys = keys;
        Ok((partial, stdin))
    }

    /// One reduce task over the partitions it kept (one per map, tagged with the map's
    /// split), for the population of the whole job. Returns this reducer's partial answer.
    /// Every partition is checked (format, app, map, partition, key order and routing).
    pub fn reduce(
        &self,
        population: Population,
        inputs: &[(Split, &[u8])],
    ) -> Result<ReducePartial, AppError> {
        if self.is_aggregate() {
            return aggregate::reduce(self, population, inputs, &mut || false);
        }
        reduce::reduce(self, population, inputs)
    }

    /// [`Self::reduce`] over `inputs` in the order given, asking `cut` before each partition
    /// after the first: once it says yes the rest are left out, and the partial is of the
    /// partitions folded (`kept`, `kept_bytes`, `input_bytes`; the estimates scale from
    /// them). Give the partitions in a random order, and what a cut leaves is a random
    /// sample of blocks.
    pub fn reduce_until(
        &self,
        population: Population,
        inputs: &[(Split, &[u8])],
        cut: &mut dyn FnMut() -> bool,
    ) -> Result<ReducePartial, AppError> {
        if self.is_aggregate() {
            return aggregate::reduce(self, population, inputs, cut);
        }
        reduce::fold(self, population, inputs, cut)
    }

    /// The job's answer from every finished map's stats and every reducer's partial (JSON,
    /// camelCase; docs/decisions/mapreduce-live.md). A map listed twice counts once; maps outside the
    /// population are ignored.
    pub fn answer(
        &self,
        population: Population,
        maps: &[(Split, MapStats)],
        reduces: &[ReducePartial],
    ) -> serde_json::Value {
        if self.is_aggregate() {
            return aggregate::answer(self, population, maps, reduces);
        }
        answer::answer(self, population, maps, reduces)
    }

    /// The exact answer, computed in one process over every split's bytes: map, reduce and
    /// answer with all splits (split `i` is map `i`). Synthetic jobs ignore `splits` and use
    /// their recorded maps, with the recorded input bytes as split sizes.
    pub fn exact(&self, splits: &[&[u8]], reduces: u32) -> Result<serde_json::Value, AppError> {
        if reduces == 0 {
            return Err(AppError::NoReduces);
        }
        let sizes: Vec<u64> = match self {
            AppSpec::Synthetic { maps, .. } => maps.iter().map(|m| m.input_bytes).collect(),
            _ => splits.iter().map(|s| s.len() as u64).collect(),
        };
        let count = u32::try_from(sizes.len()).map_err(|_| AppError::TooLarge {
            what: format!("{} maps", sizes.len()),
            limit: u32::MAX.into(),
        })?;
        let population = Population {
            maps: count,
            bytes: sizes.iter().sum(),
        };
        let mut done = Vec::with_capacity(sizes.len());
        let mut outputs = Vec::with_capacity(sizes.len());
        for (i, &bytes) in sizes.iter().enumerate() {
            let split = Split {
                index: i as u32,
                bytes,
            };
            let out = self.map(split, splits.get(i).copied().unwrap_or_default(), reduces)?;
            done.push((split, out.stats));
            outputs.push(out.partitions);
        }
        let mut partials = Vec::with_capacity(reduces as usize);
        for r in 0..reduces as usize {
            let inputs: Vec<(Split, &[u8])> = done
                .iter()
                .zip(&outputs)
                .map(|((split, _), parts)| (*split, parts[r].as_slice()))
                .collect();
            partials.push(self.reduce(population, &inputs)?);
        }
        Ok(self.answer(population, &done, &partials))
    }
}

/// Dart Alg. 5 carried out: choose map partitions uniformly at random (whole partitions, so a
/// reducer's input stays a random sample of blocks and the estimator stays valid) until at
/// least `keep_bytes` are kept — all of them when `keep_bytes` ≥ the total, none when it is 0
/// and the total is not. Returns indices into `sizes`, ascending; deterministic given the rng.
///
/// The draw is a random permutation cut where the bytes first reach `keep_bytes`, so its size
/// depends on the sizes drawn; with partitions of similar size (blocks) that is a simple
/// random sample for all practical purposes.
pub fn sample_partitions(sizes: &[u64], keep_bytes: u64, rng: &mut Rng) -> Vec<usize> {
    let total: u128 = sizes.iter().map(|&s| u128::from(s)).sum();
    let keep = u128::from(keep_bytes);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    if keep >= total {
        return order;
    }
    // A partial Fisher–Yates shuffle; it stops before running out because keep < total.
    let mut kept = 0u128;
    let mut chosen = 0;
    while kept < keep && chosen < order.len() {
        let j = rng.random_range(chosen..order.len());
        order.swap(chosen, j);
        kept += u128::from(sizes[order[chosen]]);
        chosen += 1;
    }
    order.truncate(chosen);
    order.sort_unstable();
    order
}
