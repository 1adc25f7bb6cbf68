//! The overload classifier (seed 002, §4.2–4.3, eq. 3–5; digest `../shared/papers/classifier.md`
//! with its corrections): a naive-Bayes model that labels placing a job's task on a node *good*
//! or *bad*, trained online from the cluster's own overloads. Sans-IO and deterministic: the
//! caller passes the time, each node's load and each job's type; it keeps no clock and draws no
//! random numbers.
//!
//! The loop, as the paper's "automatically supervised" learning:
//! 1. [`Classifier::judge`] labels (job, node) from the features now: the job's type and stage,
//!    the node's load, and how many tasks of the job's type the node already runs (the paper's
//!    CPU/IO balance per node, as a feature rather than a hard filter);
//! 2. the scheduler places only where the label is good ([`Judgement::allows`]);
//! 3. [`Classifier::assigned`] remembers the features of each placement;
//! 4. [`Classifier::observe`] takes the node's next load sample: the operator's
//!    [`OverloadRule`] on it labels every placement there made at least
//!    [`ClassifierConfig::settle_ms`] earlier, and the counts learn it.
//!
//! Corrections to the paper (digest §1.3, §5): posteriors are normalised, `g / (g + b)`, so jobs
//! with different features compare (eq. 4 drops the denominator, which is only valid for one
//! job's good-or-bad); Laplace smoothing, or one unseen feature value would force 0 forever;
//! features are discretised into a few levels, each relative to the rule's own thresholds.
//!
//! Where the paper is silent, yard decides (each documented at its item):
//! - **Unknown** while the model has fewer than [`ClassifierConfig::min_samples`] labelled
//!   placements, or the node has sent no load yet: allowed (there is nothing to learn from
//!   otherwise).
//! - **Exploration**: a node refused every time for [`ClassifierConfig::explore_after_ms`] gets
//!   the next task anyway, as a probe, and its label is learned as any other. The paper's
//!   "every job bad, assign nothing" rule is kept between probes; without them a node judged
//!   bad would be learned about only through its features, and a rule that counts a busy node
//!   as bad long after it calmed down would starve it forever.
//! - Masters are never refused: no task of a job runs before its master.
//!
//! It owns the model and each node's last load and unlabelled placements; the scheduler asks
//! it and tells it what it placed. It reads a job's stage ([`crate::policy::Stage`]) and the
//! shared keys ([`crate::ids`]), and nothing of the scheduler.

use std::collections::BTreeMap;

use crate::ids::{Bound, NodeId};
use crate::policy::Stage;
use serde::Serialize;

/// A node's load at one moment, as the rule and the classifier read it. The daemon builds it from
/// a nodemanager's heartbeat (the host's load, or its own process tree's: [`LoadSource`]); the
/// simulator from its load model.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NodeLoad {
    pub cores: u32,
    /// The 1-minute load average (or, for a process tree, the cores it keeps busy).
    pub load_1m: f64,
    /// CPU in use, 0–1 of all cores.
    pub cpu: f64,
    /// Memory free, 0–1.
    pub memory_free: f64,
    /// Disk bytes read and written per second over the node's disk rate (1: saturated).
    pub disk: f64,
}

/// Which load the rule reads: several nodemanagers on one host share its CPU and disks, so each
/// can be judged by the host's load or by its own process tree's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadSource {
    #[default]
    Host,
    Own,
}

/// The operator's overload rule (digest §1.5): fixed while the rm runs, or the learned counts
/// mean nothing. Default: the 1-minute load average above the cores, or less than 10 % of memory
/// free (the rule; the paper gives no thresholds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverloadRule {
    /// Overloaded when `load_1m > max_load_per_core × cores`.
    pub max_load_per_core: f64,
    /// Overloaded when the free memory fraction is below this.
    pub min_free_memory: f64,
    /// Overloaded when disk utilisation exceeds this (`None`: disks are not judged).
    pub max_disk: Option<f64>,
    pub source: LoadSource,
}

impl Default for OverloadRule {
    fn default() -> Self {
        OverloadRule {
            max_load_per_core: 1.0,
            min_free_memory: 0.10,
            max_disk: None,
            source: LoadSource::Host,
        }
    }
}

impl OverloadRule {
    pub fn overloaded(&self, l: &NodeLoad) -> bool {
        l.load_1m > self.max_load_per_core * f64::from(l.cores.max(1))
            || l.memory_free < self.min_free_memory
            || self.max_disk.is_some_and(|m| l.disk > m)
    }

    /// The rule in words, for logs and the API.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} 1-minute load > {} x cores, or free memory < {:.0} %",
            match self.source {
                LoadSource::Host => "host",
                LoadSource::Own => "own process tree",
            },
            self.max_load_per_core,
            self.min_free_memory * 100.0
        );
        if let Some(d) = self.max_disk {
            s.push_str(&format!(", or disk > {:.0} % of its rate", d * 100.0));
        }
        s
    }
}

/// The utility U(J) of eq. 3 (§4.3): which job a node serves first among those judged good.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Utility {
    /// The cluster policy's order (FIFO, fair, EDF, …) stands; the classifier only filters
    /// nodes and, among the good ones, takes the likeliest good. The default: deadlines stay
    /// the cluster policy's business.
    Policy,
    /// FCFS: U ∝ the job's age, plus ε so a job just submitted is not worth 0 (digest §1.6).
    Fcfs { epsilon_s: f64 },
    /// Maps before reduces: a job in its reduce stage is worth `reduce` (0–1) of one in its map
    /// stage. The paper gates a job's reduces until "a sufficient number" of its maps are done;
    /// yard's masters ask for reduces only once their map phase closes (Dart Alg. 5), so the
    /// gate becomes a preference between jobs [INF].
    MapFirst { reduce: f64 },
}

impl Utility {
    /// U(J) for a job of age `age_s` in `stage`.
    pub fn value(&self, age_s: f64, stage: Stage) -> f64 {
        match *self {
            Utility::Policy => 1.0,
            Utility::Fcfs { epsilon_s } => age_s.max(0.0) + epsilon_s,
            Utility::MapFirst { reduce } => match stage {
                Stage::Map => 1.0,
                Stage::Reduce => reduce,
            },
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Utility::Policy => "policy",
            Utility::Fcfs { .. } => "fcfs",
            Utility::MapFirst { .. } => "map-first",
        }
    }

    /// `policy`, `fcfs[:EPSILON_S]` or `map-first[:REDUCE]`.
    pub fn parse(s: &str) -> Result<Utility, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let number = |default: f64, lo: f64, hi: f64| -> Result<f64, String> {
            let Some(a) = arg else { return Ok(default) };
            match a.parse::<f64>() {
                Ok(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
                _ => Err(format!(
                    "utility {name:?}: {a:?} is not a number from {lo} to {hi}"
                )),
            }
        };
        match name {
            "policy" if arg.is_none() => Ok(Utility::Policy),
            "fcfs" => Ok(Utility::Fcfs {
                epsilon_s: number(1.0, 1e-9, 1e9)?,
            }),
            "map-first" => Ok(Utility::MapFirst {
                reduce: number(0.5, 0.0, 1.0)?,
            }),
            _ => Err(format!(
                "unknown utility {s:?}: use policy, fcfs[:EPSILON_S] or map-first[:REDUCE_WEIGHT]"
            )),
        }
    }
}

/// Which classifier: the paper's features and labels, or yard's (see [`YARD_FEATURES`]).
/// Both are the same naive Bayes (eq. 4–5), the same rule and the same decision (eq. 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Seed 002 as the digest reads it: [`FEATURES`], a placement labelled by its node's first
    /// sample `settle_ms` after it. The default.
    #[default]
    Paper,
    /// yard's: [`YARD_FEATURES`] — the node's load projected with this task and with the rm's
    /// own fresh count of its containers (so placements in one pass, and slots freed since the
    /// last sample, are seen), in levels that tell "at the rule's maximum" from "above it",
    /// and how full the task leaves the node; a placement labelled bad if any sample from
    /// `settle_ms` to [`YARD_LABEL_WINDOW_MS`] after it breaks the rule.
    Yard,
}

impl Variant {
    /// The features this variant's model reads, and their levels.
    pub fn features(&self) -> &'static [(&'static str, u8)] {
        match self {
            Variant::Paper => &FEATURES,
            Variant::Yard => &YARD_FEATURES,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Variant::Paper => "paper",
            Variant::Yard => "yard",
        }
    }

    /// `paper` or `yard`.
    pub fn parse(s: &str) -> Result<Variant, String> {
        match s {
            "paper" => Ok(Variant::Paper),
            "yard" => Ok(Variant::Yard),
            _ => Err(format!(
                "unknown classifier {s:?}: use paper (seed 002's features and labels) or yard \
                 (yard's: the load projected with the task, at-max split from above-max, \
                 labels over the next minute)"
            )),
        }
    }
}

/// yard's labels: a placement is bad if any of its node's samples from `settle_ms` to this
/// long after it breaks the rule. One minute: the horizon of the 1-minute load average the rule
/// reads, by when a task's own share of it has mostly shown (1 − e^−1 = 63 %). Set from that
/// definition, not from the experiment's figures.
pub(crate) const YARD_LABEL_WINDOW_MS: i64 = 60_000;

/// Everything the operator sets; fixed while the rm runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassifierConfig {
    /// The paper's classifier or yard's.
    pub variant: Variant,
    pub rule: OverloadRule,
    pub utility: Utility,
    /// Add-α smoothing of every count (1: Laplace's add-one).
    pub laplace: f64,
    /// Labelled placements the model needs before it refuses anything.
    pub min_samples: u64,
    /// A placement is labelled by the first load sample at least this long after it: a task's
    /// load shows only once it runs (the paper labels by the very next heartbeat, which in
    /// yard's 1-second heartbeats would see the node before the task started) [INF].
    pub settle_ms: i64,
    /// A node refused this long gets the next task anyway (exploration; see the module docs).
    pub explore_after_ms: i64,
    /// Labelled good when P(good | F) is at least this (the paper: g > b, i.e. 0.5).
    pub min_good: f64,
}

impl ClassifierConfig {
    /// Every setting within its range, or what to fix (named as the rm's flags name them).
    pub fn validate(&self) -> Result<(), String> {
        let r = &self.rule;
        let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
        check(
            r.max_load_per_core.is_finite() && r.max_load_per_core > 0.0,
            "--overload-max-load-per-core: give a positive number (1 = the load equals the cores)",
        )?;
        check(
            (0.0..1.0).contains(&r.min_free_memory),
            "--overload-min-free-memory: give a fraction from 0 to below 1 (0.1 = 10 %)",
        )?;
        check(
            r.max_disk.is_none_or(|d| d.is_finite() && d > 0.0),
            "--overload-max-disk: give a positive fraction of the disk rate (0.9 = 90 %)",
        )?;
        check(
            self.laplace.is_finite() && self.laplace >= 0.0,
            "the classifier's smoothing must be a number from 0 up",
        )?;
        check(
            self.settle_ms >= 0,
            "--overload-settle-ms: give a time from 0 up",
        )?;
        check(
            self.explore_after_ms > 0,
            "--overload-explore-after-ms: give a positive time",
        )?;
        check(
            (0.0..=1.0).contains(&self.min_good),
            "the classifier's good threshold must be from 0 to 1",
        )
    }
}

impl LoadSource {
    pub fn parse(s: &str) -> Result<LoadSource, String> {
        match s {
            "host" => Ok(LoadSource::Host),
            "own" => Ok(LoadSource::Own),
            _ => Err(format!(
                "unknown load source {s:?}: use host (the whole machine's load) or own (the \
                 nodemanager's process tree: its containers and what they start)"
            )),
        }
    }
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig {
            variant: Variant::Paper,
            rule: OverloadRule::default(),
            utility: Utility::Policy,
            laplace: 1.0,
            min_samples: 20,
            settle_ms: 5_000,
            explore_after_ms: 60_000,
            min_good: 0.5,
        }
    }
}

/// Naive Bayes over discrete features (eq. 4–5), two classes: good and bad.
#[derive(Debug, Clone, PartialEq)]
pub struct NaiveBayes {
    levels: Vec<u8>,
    laplace: f64,
    /// Samples per class: [good, bad].
    class: [u64; 2],
    /// Per feature, per value: [good, bad].
    counts: Vec<Vec<[u64; 2]>>,
}

impl NaiveBayes {
    /// A model over features with these numbers of levels each.
    pub fn new(levels: &[u8], laplace: f64) -> Self {
        NaiveBayes {
            levels: levels.to_vec(),
            laplace: laplace.max(0.0),
            class: [0, 0],
            counts: levels
                .iter()
                .map(|&l| vec![[0, 0]; usize::from(l)])
                .collect(),
        }
    }

    pub fn learn(&mut self, features: &[u8], good: bool) {
        let c = usize::from(!good);
        self.class[c] += 1;
        for (i, &v) in features.iter().enumerate().take(self.counts.len()) {
            if let Some(slot) = self.counts[i].get_mut(usize::from(v)) {
                slot[c] += 1;
            }
        }
    }

    pub fn samples(&self) -> u64 {
        self.class[0] + self.class[1]
    }

    /// [good, bad] samples so far.
    pub fn class_counts(&self) -> [u64; 2] {
        self.class
    }

    /// [good, bad] samples in which feature `i` had value `v`.
    pub fn value_counts(&self, i: usize, v: u8) -> [u64; 2] {
        self.counts
            .get(i)
            .and_then(|c| c.get(usize::from(v)))
            .copied()
            .unwrap_or([0, 0])
    }

    /// g and b of the digest: P(class) · Π P(F_i | class) over the features `use_feature`
    /// keeps, smoothed. In logs, so many features do not underflow.
    fn log_scores(&self, features: &[u8], use_feature: impl Fn(usize) -> bool) -> [f64; 2] {
        let a = self.laplace;
        let n = self.samples() as f64;
        let mut out = [0.0; 2];
        for (c, slot) in out.iter_mut().enumerate() {
            let nc = self.class[c] as f64;
            let mut s = ((nc + a) / (n + 2.0 * a)).ln();
            for (i, &v) in features.iter().enumerate().take(self.counts.len()) {
                if !use_feature(i) {
                    continue;
                }
                let k = self.counts[i]
                    .get(usize::from(v))
                    .map_or(0.0, |x| x[c] as f64);
                s += ((k + a) / (nc + a * f64::from(self.levels[i]))).ln();
            }
            *slot = s;
        }
        out
    }

    /// P(good | F), normalised over the two classes (the digest's correction to eq. 4). `None`
    /// when both scores are zero (an unsmoothed model that never saw these values).
    pub fn p_good(&self, features: &[u8]) -> Option<f64> {
        self.p_good_over(features, |_| true)
    }

    fn p_good_over(&self, features: &[u8], use_feature: impl Fn(usize) -> bool) -> Option<f64> {
        let [g, b] = self.log_scores(features, use_feature);
        if g == f64::NEG_INFINITY && b == f64::NEG_INFINITY || g.is_nan() || b.is_nan() {
            return None;
        }
        // g / (g + b) = 1 / (1 + e^(b - g)), stable for any logs.
        Some(1.0 / (1.0 + (b - g).exp()))
    }

    /// The paper's eq. 4 numerator, U · g (un-normalised): only for showing what ranking by it
    /// would do (digest §2.2). Not used to choose, so only tests have it.
    #[cfg(test)]
    pub(crate) fn eq4_numerator(&self, features: &[u8], utility: f64) -> f64 {
        utility * self.log_scores(features, |_| true)[0].exp()
    }
}

/// The paper's eq. 3 over jobs for one node: among candidates `(features, U)` labelled good
/// (P(good | F) above `min_good`), the one with the largest U · P(good | F); `None` when every
/// one is bad (then nothing is placed: digest §5, item 3).
pub fn pick(model: &NaiveBayes, candidates: &[(&[u8], f64)], min_good: f64) -> Option<usize> {
    candidates
        .iter()
        .enumerate()
        .filter_map(|(i, (f, u))| {
            let p = model.p_good(f)?;
            (p >= min_good).then_some((i, u * p))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(i, _)| i)
}

/// What a job brings to a placement: its type in the stage it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobFeatures {
    pub stage: Stage,
    /// `None` until the job kind's probes have typed it.
    pub bound: Option<Bound>,
}

/// The features, in order, and their levels. Node features are relative to the rule's
/// thresholds, so "high" means "near what the operator calls overloaded".
pub(crate) const FEATURES: [(&str, u8); 7] = [
    ("job type", 3),       // unknown, cpu, io
    ("job stage", 2),      // map, reduce
    ("load per core", 4),  // < 1/2, < 3/4, < 1, ≥ 1 of the rule's maximum
    ("cpu busy", 4),       // < 25 %, < 50 %, < 75 %, ≥ 75 %
    ("memory free", 4),    // ≥ 4×, ≥ 2×, ≥ 1× the rule's minimum, below it
    ("disk busy", 4),      // < 25 %, < 50 %, < 75 %, ≥ 75 % of the disk rate
    ("same type here", 4), // tasks of the job's type on the node per core: 0, < ½, < 1, ≥ 1
];

/// yard's features ([`Variant::Yard`]), in order, and their levels: the paper's, but for the
/// load, read as what the node would carry with this task, and one more, how full the task
/// leaves the node. Why (docs/results.md, "Overloaded nodes"): a full node of 4 tasks on 4 cores is at
/// the rule's edge, and the paper's top level "≥ the rule's maximum" puts a node running
/// exactly its cores (every full node that just freed a slot reads so, the average lagging)
/// with the overloaded ones; and its load is the last sample's, so every task placed in one
/// pass, or since that sample, lands on a node read as if they were not there.
pub(crate) const YARD_FEATURES: [(&str, u8); 8] = [
    ("job type", 3),
    ("job stage", 2),
    // P = the node's load from outside the rm's containers (its last 1-minute load less the
    // containers the rm had there then, ≥ 0) + the rm's containers there now + this task, over
    // M = the rule's maximum: P ≤ M/2, P ≤ M − 1 (room for another after it), P ≤ M (at max:
    // this task brings it within one task of the cores), P > M (above: the rule would break if
    // the outside load stays).
    ("projected load", 4),
    ("cpu busy", 4),
    ("memory free", 4),
    ("disk busy", 4),
    ("same type here", 4),
    // The rm's containers there with this one, per core: ≤ ½, < 1, ≥ 1 (full: at the edge).
    ("fill with it", 3),
];

/// A placement's features by name, each a level (see [`FEATURES`] and [`YARD_FEATURES`]).
/// [`Features::encode`] is their one positional encoding, the order the model counts them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features {
    pub job_type: u8,
    pub job_stage: u8,
    /// The paper's load per core, or yard's projected load.
    pub load: u8,
    pub cpu_busy: u8,
    pub memory_free: u8,
    pub disk_busy: u8,
    pub same_type_here: u8,
    /// yard's eighth; `None` for the paper's seven.
    pub fill_with_it: Option<u8>,
}

/// Where the node's own features (load, CPU, memory, disk) sit in [`Features::encode`].
const NODE_FEATURES: std::ops::Range<usize> = 2..6;

impl Features {
    /// The model's input, in the order of [`FEATURES`] and [`YARD_FEATURES`]: the paper's
    /// seven and a 0 where it has no eighth (its model reads seven), or yard's eight.
    pub fn encode(&self) -> [u8; 8] {
        [
            self.job_type,
            self.job_stage,
            self.load,
            self.cpu_busy,
            self.memory_free,
            self.disk_busy,
            self.same_type_here,
            self.fill_with_it.unwrap_or(0),
        ]
    }
}

/// What the rm itself knows of a node at a placement, beside its last load sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeContainers {
    /// Task containers there of jobs of the job's type (the paper's CPU/IO balance).
    pub same_type: u32,
    /// Every container the rm has there now, this pass's placements included (yard's only).
    pub containers: u32,
}

impl From<u32> for NodeContainers {
    /// Only the paper's balance (`same_type`): what [`Variant::Paper`] reads.
    fn from(same_type: u32) -> NodeContainers {
        NodeContainers {
            same_type,
            containers: 0,
        }
    }
}

/// yard's features ([`YARD_FEATURES`]) of placing a task of `job` on a node whose last sample
/// was `l`, taken while the rm had `containers_at_sample` containers there.
pub(crate) fn yard_features(
    rule: &OverloadRule,
    job: JobFeatures,
    l: &NodeLoad,
    containers_at_sample: u32,
    here: NodeContainers,
) -> Features {
    let p = features(rule, job, l, here.same_type);
    let cores = f64::from(l.cores.max(1));
    let max = rule.max_load_per_core * cores;
    let outside = (l.load_1m - f64::from(containers_at_sample)).max(0.0);
    let projected = outside + f64::from(here.containers) + 1.0;
    let load = if projected <= max / 2.0 {
        0
    } else if projected <= max - 1.0 {
        1
    } else if projected <= max {
        2
    } else {
        3
    };
    let fill = (f64::from(here.containers) + 1.0) / cores;
    let fill = if fill <= 0.5 {
        0
    } else if fill < 1.0 {
        1
    } else {
        2
    };
    Features {
        load,
        fill_with_it: Some(fill),
        ..p
    }
}

fn level(x: f64, bounds: [f64; 3]) -> u8 {
    bounds.iter().take_while(|&&b| x >= b).count() as u8
}

/// The discrete features of placing a task of `job` on a node with load `l` that runs
/// `same_type` tasks of the job's type.
pub fn features(rule: &OverloadRule, job: JobFeatures, l: &NodeLoad, same_type: u32) -> Features {
    let cores = f64::from(l.cores.max(1));
    let load = l.load_1m / (rule.max_load_per_core * cores).max(f64::MIN_POSITIVE);
    let min_free = rule.min_free_memory.max(f64::MIN_POSITIVE);
    Features {
        job_type: match job.bound {
            None => 0,
            Some(Bound::Cpu) => 1,
            Some(Bound::Io) => 2,
        },
        job_stage: match job.stage {
            Stage::Map => 0,
            Stage::Reduce => 1,
        },
        load: level(load, [0.5, 0.75, 1.0]),
        cpu_busy: level(l.cpu, [0.25, 0.5, 0.75]),
        memory_free: 3 - level(l.memory_free / min_free, [1.0, 2.0, 4.0]),
        disk_busy: level(l.disk, [0.25, 0.5, 0.75]),
        same_type_here: level(f64::from(same_type) / cores, [f64::MIN_POSITIVE, 0.5, 1.0]),
        fill_with_it: None,
    }
}

/// A node's verdict as the API shows it.
pub use yard_wire::views::Verdict;
use yard_wire::views::{FeatureCount, OverloadModel};

/// The classifier's answer for one placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judgement {
    /// Too little learned, or no load from the node yet: allowed.
    Unknown,
    Good {
        p_good: f64,
    },
    Bad {
        p_good: f64,
    },
    /// Bad, but the node has been refused for [`ClassifierConfig::explore_after_ms`]: a probe.
    Explore {
        p_good: f64,
    },
}

impl Judgement {
    pub fn allows(&self) -> bool {
        !matches!(self, Judgement::Bad { .. })
    }

    /// How much a placement here is worth against other nodes: P(good), unknown as ½.
    pub fn p_good(&self) -> f64 {
        match *self {
            Judgement::Unknown => 0.5,
            Judgement::Good { p_good }
            | Judgement::Bad { p_good }
            | Judgement::Explore { p_good } => p_good,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct NodeRecord {
    /// The last load sample and when it came.
    load: Option<(i64, NodeLoad)>,
    /// Placements not yet labelled: when, their features, and (yard's labels) whether a
    /// sample since broke the rule.
    pending: Vec<(i64, Features, bool)>,
    /// The rm's containers on the node when its last sample came (yard's features).
    containers_at_sample: u32,
    /// Placements since the last sample.
    placed_since_sample: u32,
    labelled: [u64; 2],
    /// Refused every time since then.
    refused_since: Option<i64>,
    probes: u64,
}

/// A node as the API shows it: the verdict for a task of an untyped job there now (the node's
/// features only), and what the classifier has learned of it, in the wire's own type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeOverload {
    pub verdict: Verdict,
    #[serde(flatten)]
    pub model: OverloadModel,
}

/// The model's totals, for the API.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCounts {
    pub good: u64,
    pub bad: u64,
    pub min_samples: u64,
    pub rule: String,
    pub utility: &'static str,
}

/// The classifier: the model, and per node its last load and unlabelled placements.
#[derive(Debug, Clone)]
pub struct Classifier {
    config: ClassifierConfig,
    model: NaiveBayes,
    nodes: BTreeMap<NodeId, NodeRecord>,
}

impl Classifier {
    pub fn new(config: ClassifierConfig) -> Self {
        let levels: Vec<u8> = config.variant.features().iter().map(|(_, l)| *l).collect();
        Classifier {
            model: NaiveBayes::new(&levels, config.laplace),
            config,
            nodes: BTreeMap::new(),
        }
    }

    pub fn config(&self) -> &ClassifierConfig {
        &self.config
    }

    pub fn model(&self) -> &NaiveBayes {
        &self.model
    }

    pub fn counts(&self) -> ModelCounts {
        let [good, bad] = self.model.class_counts();
        ModelCounts {
            good,
            bad,
            min_samples: self.config.min_samples,
            rule: self.config.rule.describe(),
            utility: self.config.utility.name(),
        }
    }

    /// A node's load at `now_ms`: labels its placements made at least `settle_ms` before by the
    /// rule on this load, and learns them. Returns how many were labelled.
    pub fn observe(&mut self, now_ms: i64, node: NodeId, load: NodeLoad) -> usize {
        self.observe_with(now_ms, node, load, 0)
    }

    /// [`Classifier::observe`], with the rm's containers on the node as the sample came (what
    /// yard's features take from its load as not the rm's).
    ///
    /// Labels: the paper's (eq. 3's feedback, digest §1.3): the rule on the first sample at
    /// least `settle_ms` after the placement. yard's: bad as soon as a sample from `settle_ms`
    /// on breaks the rule, good once [`YARD_LABEL_WINDOW_MS`] passed without one.
    pub fn observe_with(
        &mut self,
        now_ms: i64,
        node: NodeId,
        load: NodeLoad,
        containers: u32,
    ) -> usize {
        let overloaded = self.config.rule.overloaded(&load);
        let settle = self.config.settle_ms;
        let variant = self.config.variant;
        let rec = self.nodes.entry(node).or_default();
        rec.load = Some((now_ms, load));
        rec.containers_at_sample = containers;
        rec.placed_since_sample = 0;
        let mut due: Vec<(Features, bool)> = Vec::new();
        rec.pending.retain_mut(|(at, f, bad)| {
            let age = now_ms - *at;
            if age < settle {
                return true;
            }
            let label = match variant {
                Variant::Paper => Some(overloaded),
                Variant::Yard => {
                    *bad |= overloaded;
                    (*bad || age >= YARD_LABEL_WINDOW_MS).then_some(*bad)
                }
            };
            match label {
                Some(bad) => {
                    due.push((*f, bad));
                    false
                }
                None => true,
            }
        });
        for (f, bad) in &due {
            rec.labelled[usize::from(*bad)] += 1;
            self.model.learn(&f.encode(), !bad);
        }
        due.len()
    }

    /// A node left: its unlabelled placements are dropped (there will be no sample to label
    /// them by).
    pub fn forget(&mut self, node: NodeId) {
        self.nodes.remove(&node);
    }

    /// The features of a placement on `node` now, by the variant's; `None` before its first
    /// load sample.
    pub fn features(
        &self,
        node: NodeId,
        job: JobFeatures,
        here: impl Into<NodeContainers>,
    ) -> Option<Features> {
        let rec = self.nodes.get(&node)?;
        let (_, load) = rec.load?;
        let here = here.into();
        Some(match self.config.variant {
            Variant::Paper => features(&self.config.rule, job, &load, here.same_type),
            Variant::Yard => yard_features(
                &self.config.rule,
                job,
                &load,
                rec.containers_at_sample,
                here,
            ),
        })
    }

    /// Labels a placement of `job` on `node` now. Pure: refusals are recorded by
    /// [`Classifier::refused`], placements by [`Classifier::assigned`].
    pub fn judge(
        &self,
        now_ms: i64,
        node: NodeId,
        job: JobFeatures,
        here: impl Into<NodeContainers>,
    ) -> Judgement {
        let Some(f) = self.features(node, job, here) else {
            return Judgement::Unknown;
        };
        if self.model.samples() < self.config.min_samples {
            return Judgement::Unknown;
        }
        let Some(p_good) = self.model.p_good(&f.encode()) else {
            return Judgement::Unknown;
        };
        if p_good >= self.config.min_good {
            return Judgement::Good { p_good };
        }
        let since = self.nodes.get(&node).and_then(|r| r.refused_since);
        if since.is_some_and(|t| now_ms - t >= self.config.explore_after_ms) {
            Judgement::Explore { p_good }
        } else {
            Judgement::Bad { p_good }
        }
    }

    /// `node` was refused a task at `now_ms` (it had room).
    pub fn refused(&mut self, now_ms: i64, node: NodeId) {
        let rec = self.nodes.entry(node).or_default();
        rec.refused_since.get_or_insert(now_ms);
    }

    /// A task was placed on `node` at `now_ms` with these features (from
    /// [`Classifier::features`]; `None` learns nothing): it waits for its label. A placement
    /// ends the node's refusal, so a probe is followed by `explore_after_ms` of the model's
    /// own verdicts.
    pub fn assigned(&mut self, now_ms: i64, node: NodeId, features: Option<Features>, probe: bool) {
        let rec = self.nodes.entry(node).or_default();
        rec.refused_since = None;
        rec.placed_since_sample += 1;
        if probe {
            rec.probes += 1;
        }
        if let Some(f) = features {
            rec.pending.push((now_ms, f, false));
        }
    }

    /// The node's verdict for a task of an untyped job now, and the counts behind it.
    pub fn node(&self, node: NodeId) -> NodeOverload {
        let rec = self.nodes.get(&node).cloned().unwrap_or_default();
        let load = rec.load.map(|(_, l)| l);
        let job = JobFeatures {
            stage: Stage::Map,
            bound: None,
        };
        // yard's: the rm's containers there taken as those at the sample and placed since.
        let here = NodeContainers {
            same_type: 0,
            containers: rec.containers_at_sample + rec.placed_since_sample,
        };
        let f = self.features(node, job, here).map(|f| f.encode());
        let p_good = f
            .filter(|_| self.model.samples() >= self.config.min_samples)
            .and_then(|f| self.model.p_good_over(&f, |i| NODE_FEATURES.contains(&i)));
        let verdict = match p_good {
            None => Verdict::Unknown,
            Some(p) if p >= self.config.min_good => Verdict::Good,
            Some(_) => Verdict::Bad,
        };
        let model = OverloadModel {
            p_good,
            overloaded: load.map(|l| self.config.rule.overloaded(&l)),
            labelled_good: rec.labelled[0],
            labelled_bad: rec.labelled[1],
            pending: rec.pending.len() as u64,
            probes: rec.probes,
            refused_since_ms: rec.refused_since,
            features: f
                .map(|f| {
                    NODE_FEATURES
                        .map(|i| {
                            let [good, bad] = self.model.value_counts(i, f[i]);
                            FeatureCount {
                                name: self.config.variant.features()[i].0.to_owned(),
                                level: f[i],
                                good,
                                bad,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        NodeOverload { verdict, model }
    }
}

#[cfg(test)]
mod tests;
