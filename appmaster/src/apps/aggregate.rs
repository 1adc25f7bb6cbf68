//! Hadoop Streaming's `-reducer aggregate`, built in, answered with 95 % intervals from the
//! blocks a deadline-bound job read.
//!
//! # What Hadoop does, and what yard keeps of it
//!
//! Hadoop's aggregate package (`org.apache.hadoop.mapred.lib.aggregate`) reads mapper lines
//! `TYPE:id<TAB>value`; the type before the first `:` names a `ValueAggregator`, and the
//! reducer writes `id<TAB>report` per `TYPE:id`, keys in sorted order. yard takes the six the
//! issue names, with Hadoop's parsing and reports:
//!
//! | type | a value | the report |
//! |---|---|---|
//! | `LongValueSum` | an integer | the sum |
//! | `DoubleValueSum` | a number | the sum, as Java prints a double (`3.0`) |
//! | `LongValueMax`, `LongValueMin` | an integer | the largest / smallest |
//! | `UniqValueCount` | any text | how many distinct values |
//! | `ValueHistogram` | `v` or `v<TAB>n` (`v` seen `n` times; the last tab splits) | distinct values, then the smallest, median (`counts[len/2]`), largest and mean count and the counts' standard deviation (population), tab-separated |
//!
//! A line whose key has no `TYPE:`, names another type (`StringValueMax`, a user class) or whose
//! value does not parse fails its map, naming the line (Hadoop fails with a
//! `NullPointerException` or a `NumberFormatException`). yard's sums are exact 128-bit integers
//! where Java's `long` wraps; a histogram count must be non-negative.
//!
//! Each map combines its lines per `TYPE:id` before the shuffle (Hadoop's
//! `ValueAggregatorCombiner`: one sum, one max, the distinct values, the histogram's counts),
//! so a map's output is a record per key, and the reducer's input holds each key's value in
//! each block it kept.
//!
//! # The estimators
//!
//! A map is a block is a sample unit, as in [`approx`](super::approx): for a key, `y_i` is its
//! block's combined figure (the block's sum; for `ValueHistogram`, the block's total count of
//! values) and `x_i` the block's bytes; a key absent from a block has `y_i = 0` there. Two
//! estimators, picked by `yard.aggregate.estimator` ([`Estimator`]; `-D` in `yard streaming`):
//!
//! - `ratio`, ApproxHadoop's plain one: the blocks read as a simple random sample, Cochran's
//!   ratio estimator (`approx`'s module documentation, Cochran 1977 ch. 6), `Ŷ = (Σy/Σx)·X`,
//!   `V̂ = N²(1 − k/N)/k · s_e²`, the interval `Ŷ ± t(0.975, k−1)·√V̂`. The reducer keeps
//!   `Σy, Σxy, Σy²` per key (`k, Σx, Σx²` are its own).
//! - `stratified` (the default): the same ratio, but each block read weighs for the stretch of
//!   the input around it, and the variance is measured between neighbours, not over the whole
//!   input. The reducer keeps each key's `(block, y)`. Derived below.
//!
//! ## The stratified estimator
//!
//! Why: on input sorted by the quantity summed (a log sorted by response size, a table by
//! amount) with heavy skew (log-normal σ ≥ 1), a few blocks at one end hold much of the
//! total. A simple random sample of 5–10 % of the blocks often holds none of them; then both
//! `Ŷ` and `s_e²` come out low together and the interval misses, whatever its width claims:
//! 0.84 coverage at 5 % for σ 1 (`coverage_table`). Position in the input is what carries
//! the trend, so stratify on it (Cochran 1977 ch. 5: the between-strata variance leaves the
//! error).
//!
//! *The sample.* Dart launches an aggregate job's maps in a position-stratified random order
//! (`policy::stratified_order`): after `2^j` launches each of `2^j` equal stretches of the
//! input holds exactly one block, uniform within it. Locality and stragglers perturb which
//! blocks end up read, so the estimator does not rely on the design's exact strata: it
//! post-stratifies on the blocks actually read.
//!
//! *The cells.* Sort the `k` blocks read by position `p_1 < … < p_k` (the map index; `N`
//! maps). Block `j`'s cell runs from midway after its predecessor to midway before its
//! successor: edges `b_0 = 0`, `b_j = (p_j + p_{j+1} + 1)/2`, `b_k = N`, size
//! `w_j = b_j − b_{j−1}` (≥ 1, `Σw = N`). Each cell is a stratum with one unit sampled.
//!
//! *The estimate* is the combined ratio estimator over these strata (Cochran §6.11):
//!
//! ```text
//! ŷ = Σ w_j y_j,  x̂ = Σ w_j x_j,  R̂ = ŷ / x̂,  Ŷ = R̂ · X
//! ```
//!
//! With equal cells it is the plain ratio; with a sample bunched in one stretch (a level of
//! the order half launched, or locality), the blocks of the sparse stretches weigh more. With
//! `x̂ = 0` the expansion estimate `ŷ` stands in.
//!
//! *The variance.* For stratified sampling with `n_h` units of `N_h`, the combined ratio's
//! variance is `Σ N_h²(1 − f_h)/n_h · S_dh²`, `d = y − R·x` (Cochran eq. 6.13). With one unit
//! a stratum (`N_h = w_j`, `n_h = 1`) that is `Σ w_j(w_j − 1) S_dj²`, and `S_dj²` cannot be
//! estimated from the cell alone. As for collapsed strata (Cochran §5A.12) and for systematic
//! samples (successive differences, Wolter, *Introduction to Variance Estimation*, 2nd ed.
//! 2007, ch. 8), it is estimated from the neighbours: `s_j² = mean over j's read neighbours of
//! (e_j − e_nb)²/2`, `e = y − R̂·x`. A neighbour's difference spans about two cells, so on a
//! trend it overstates the within-cell variance (conservative), and on unsorted input it is
//! the usual `s_e²`. `V̂ = Σ w_j(w_j − 1)·s_j²`; a cell of one block (`w = 1`) adds nothing,
//! and with every block read the answer is exact.
//!
//! *The interval.* `Ŷ ± t(0.975, ν)·√V̂` with Satterthwaite's effective degrees of freedom
//! (Cochran §5.4), `ν = (Σ c_j)² / Σ c_j²`, `c_j = w_j(w_j − 1)s_j²`, each cell's estimate
//! counted as one degree (floored, within `[1, k − 1]`). When one cell's term dominates — the
//! heavy end of sorted skewed input — `ν` falls towards 1 and the interval widens, which is
//! what holds coverage there; on unsorted input `ν ≈ k`.
//!
//! A worked example (`three_of_ten_blocks_give_the_stratified_worked_example`): `N = 10`
//! blocks of 100 bytes (`X = 1000`), blocks 1, 4, 8 read with `y = 10, 20, 40`:
//!
//! ```text
//! edges 0, 3, 6.5, 10: w = 3, 3.5, 3.5;  ŷ = 240, x̂ = 1000, R̂ = 0.24, Ŷ = 240
//! e = −14, −4, 16;  s² = 50, (50 + 200)/2 = 125, 200
//! c = 3·2·50 = 300, 3.5·2.5·125 = 1093.75, 3.5·2.5·200 = 1750;  V̂ = 3143.75
//! ν = 3143.75² / (300² + 1093.75² + 1750²) = 2.27 → 2;  t = 4.303;  Ŷ ± 241.27
//! ```
//!
//! (The plain ratio over the same blocks: `70/300·1000 = 233.3`.)
//!
//! *What it costs, measured* (`coverage_table`, 200 blocks, 1,500 samples a cell; the table
//! is in `docs/decisions/mapreduce-live.md`): on unsorted input it holds 0.949–0.957 over all
//! fractions (σ 0.5–1.5), like the ratio; on sorted input it is conservative at σ ≤ 1 (0.94 to
//! 1.00: a neighbour's difference still carries the trend), closer to 95 % than the ratio under
//! the same order; on sorted input with σ 1.5 of the log, where the largest block alone holds
//! over a tenth of the total, it covers 0.88–0.89 at 10–20 %: no sample that skips that block
//! can see it.
//!
//! - Sums (`LongValueSum`, `DoubleValueSum`) are of values of either sign, so, unlike
//!   `approx`'s counts, neither the estimate nor the lower end is raised to what was seen;
//!   with one block read the interval is unbounded both ways (`low`, `high` null).
//! - `ValueHistogram`'s total count is a count: its lower end is raised to what was seen, as
//!   `approx` does. Its report's other figures (distinct values, the counts' spread) are of
//!   what was read.
//! - Maxima, minima and distinct counts cannot be scaled: `"kind": "bound"`. The largest value
//!   seen is a lower bound of the true maximum (`low` = observed, `high` null), the smallest
//!   an upper bound of the true minimum (`high` = observed, `low` null), the distinct values
//!   seen a lower bound of the true number (`low` = observed). `estimate` is what was seen.
//! - Every block read (`k = N`): every row is exact, `low = high = observed`, whatever its kind.
//!
//! ## Two stages, and why yard's second stage adds no term
//!
//! ApproxHadoop (Goiri et al., ASPLOS 2015, §3) samples in two stages, blocks then records
//! within a block, and bounds a sum with Cochran's two-stage variance (Cochran 1977, ch. 10,
//! unequal first-stage units): `V̂ = N²(1−f₁)s₁²/n + (N/n)·Σᵢ Mᵢ²(1−f₂ᵢ)s₂ᵢ²/mᵢ`, the
//! second term the within-block sampling of `mᵢ` of `Mᵢ` records. yard's maps read every
//! record of their block (`mᵢ = Mᵢ`, `f₂ᵢ = 1`), so that term is zero. yard's other sampling is
//! Dart's Alg. 5 on the reduce side (`sample_partitions`), which keeps whole map outputs —
//! blocks — drawn uniformly from those read: a simple random sample drawn from a simple random
//! sample of the `N` blocks is itself one of size `k'` (every `k'`-subset equally likely), so
//! the one-stage formula with `k` = the blocks the reducer kept is the variance, with no extra
//! term. A reducer cut by the deadline guard stops between partitions it folds in a seeded
//! random order, which is the same kind of subsample.
//!
//! ## The random sample: launch order, locality, and blocks dropped late
//!
//! The interval assumes the blocks read are a random sample. Dart, left to itself, launches
//! maps in block order (Hadoop's), so on input sorted by the quantity summed the first blocks
//! are the smallest and the interval misses. An aggregate job's master therefore sets
//! `PolicyConfig::random_map_order`: the policy ranks the maps by a random, position-stratified
//! permutation (`policy::stratified_order`) from the master's RNG, seeded by the job's seed
//! (`yard submit` draws one when none is given and prints it: two runs read different
//! samples, and `--seed` repeats one), and each container takes its best-placed map
//! (node-local, rack-local, any) of the lowest rank. Which blocks are read then depends on the permutation and on where
//! replicas and containers are, never on the blocks' contents (yard's placement rotates blocks
//! over nodes, `yard_cluster::placement`, so no node holds one stretch of the input).
//!
//! Blocks launched but not read are of two kinds. The last launched, cut by the deadline
//! guard, were launched last because of the permutation, so they are a random subset of those
//! launched. Stragglers killed, and maps cut, are dropped for being slow: the blocks read stay
//! a random sample as long as a map's speed is unrelated to its block's figure per byte
//! (slowness from the node — the usual straggler — is). Where it is not (a mapper whose time
//! grows with the values it sums), the slow blocks are under-represented; the ratio estimator
//! already corrects for block size, and the answer's `notes` name the assumption.
//!
//! # The answer
//!
//! [`AggregateAnswer`]: `{"aggregates": [{"key", "type", "estimate", "low", "high",
//! "observed", "kind"}], "processedFraction", "output"}`, beside the fields every answer has
//! (`app`, `exact`, `mapsRead`, `maps`, `bytesRead`, `bytes`, `notes`) and streaming's
//! (`mapper`, `reducer`, `outputLines`, `outputCap`, `truncated`, `bounds`). Rows are sorted by
//! Hadoop's key `TYPE:id`, as one Hadoop reducer writes them; `output` is Hadoop's text, one
//! `id<TAB>report` line a row, of what was read (unscaled: the estimates are the rows'). At
//! most [`OUTPUT_CAP`] rows and lines; `truncated` says when there were more.
//! `processedFraction` is the share of the input's bytes the rows are built on (each key's
//! from its reducer's blocks; the mean over reducers).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::json;
use thiserror::Error;

use super::approx::{ratio, stratified, t975};
use super::hash::FastMap;
use super::records::{Record, Writer};
use super::streaming::{OUTPUT_CAP, key_value};
use super::text::{count_lines, lines};
use super::{AppError, AppSpec, MapStats, Population, ReducePartial, Split};

/// The reducer name that asks for Hadoop's aggregate reducer (`-reducer aggregate`).
pub const AGGREGATE: &str = "aggregate";

/// The streaming parameter (and `yard streaming`'s `-D` key) that picks the estimator.
pub const ESTIMATOR_PARAM: &str = "yard.aggregate.estimator";

/// How sums and counts are scaled from the blocks read (module documentation, "The
/// estimators").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// Cells of the blocks read by position, the combined ratio estimator over them and
    /// successive differences for the variance: holds on sorted, skewed input.
    #[default]
    Stratified,
    /// ApproxHadoop's plain one: the blocks read as a simple random sample, Cochran's ratio
    /// estimator (`approx`'s).
    Ratio,
}

impl Estimator {
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Stratified => "stratified",
            Estimator::Ratio => "ratio",
        }
    }

    /// `stratified` or `ratio`; anything else says what to write.
    pub fn parse(value: &str) -> Result<Estimator, String> {
        [Estimator::Stratified, Estimator::Ratio]
            .into_iter()
            .find(|e| e.name() == value)
            .ok_or_else(|| {
                format!(
                    "{ESTIMATOR_PARAM}={value:?}: give stratified (the default) or ratio \
                     (ApproxHadoop's plain ratio estimator)"
                )
            })
    }

    pub fn is_default(&self) -> bool {
        *self == Estimator::default()
    }
}

/// Hadoop's aggregators that yard takes, by their Hadoop names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AggregateType {
    LongValueSum,
    DoubleValueSum,
    LongValueMax,
    LongValueMin,
    UniqValueCount,
    ValueHistogram,
}

impl AggregateType {
    pub const ALL: [AggregateType; 6] = [
        AggregateType::LongValueSum,
        AggregateType::DoubleValueSum,
        AggregateType::LongValueMax,
        AggregateType::LongValueMin,
        AggregateType::UniqValueCount,
        AggregateType::ValueHistogram,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AggregateType::LongValueSum => "LongValueSum",
            AggregateType::DoubleValueSum => "DoubleValueSum",
            AggregateType::LongValueMax => "LongValueMax",
            AggregateType::LongValueMin => "LongValueMin",
            AggregateType::UniqValueCount => "UniqValueCount",
            AggregateType::ValueHistogram => "ValueHistogram",
        }
    }

    fn parse(name: &str) -> Option<AggregateType> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the estimator scales this aggregator's figure, or it is reported as seen.
    pub fn kind(self) -> Kind {
        match self {
            AggregateType::LongValueSum
            | AggregateType::DoubleValueSum
            | AggregateType::ValueHistogram => Kind::Estimate,
            AggregateType::LongValueMax
            | AggregateType::LongValueMin
            | AggregateType::UniqValueCount => Kind::Bound,
        }
    }
}

/// What a row's numbers claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = AggregateKind))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A total scaled from the blocks read, with a 95 % interval.
    Estimate,
    /// What was seen: a one-sided bound of the true value (see the module documentation).
    Bound,
}

/// One `TYPE:id` of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Aggregate {
    /// The id after `TYPE:`, as Hadoop's output names it.
    pub key: String,
    #[serde(rename = "type")]
    pub aggregator: AggregateType,
    /// The scaled total (`kind` estimate) or what was seen (`kind` bound). Always sent, as
    /// the interval's ends are (`null` when unknown): required in the schema.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub estimate: Option<f64>,
    /// The interval's ends; `null` where unbounded on that side.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub low: Option<f64>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub high: Option<f64>,
    /// What the blocks read held: the sum, the histogram's count of values, the max, the min,
    /// the distinct values. As a JSON number (exact to 2⁵³; `output` has every digit).
    pub observed: f64,
    pub kind: Kind,
}

/// The answer's fixed part (module documentation, "The answer").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AggregateAnswer {
    pub aggregates: Vec<Aggregate>,
    pub processed_fraction: f64,
    /// Hadoop's aggregate reducer's text, `id<TAB>report` a line, of what was read.
    pub output: Vec<String>,
}

/// One key as a reducer reports it to the master: its row and Hadoop's report line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reduced {
    pub aggregate: Aggregate,
    pub line: String,
}

/// A mapper output line the aggregate reducer cannot take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the mapper's output line {line} ({text:?}): {problem}")]
pub struct LineError {
    /// 1-based, in the map's stdout.
    pub line: u64,
    /// The line, cut to 200 characters.
    pub text: String,
    pub problem: String,
}

/// One key's figure, combined over values: Hadoop's `ValueAggregator` state.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Sum(i128),
    DoubleSum(f64),
    Max(Option<i64>),
    Min(Option<i64>),
    Uniq(BTreeSet<Vec<u8>>),
    Histogram(BTreeMap<Vec<u8>, u64>),
}

impl Value {
    fn new(t: AggregateType) -> Value {
        match t {
            AggregateType::LongValueSum => Value::Sum(0),
            AggregateType::DoubleValueSum => Value::DoubleSum(0.0),
            AggregateType::LongValueMax => Value::Max(None),
            AggregateType::LongValueMin => Value::Min(None),
            AggregateType::UniqValueCount => Value::Uniq(BTreeSet::new()),
            AggregateType::ValueHistogram => Value::Histogram(BTreeMap::new()),
        }
    }

    /// Hadoop's `addNextValue`: one mapper value, or one value of a map's combined output
    /// (which is written in the same syntax).
    fn add(&mut self, raw: &[u8]) -> Result<(), String> {
        let text = || String::from_utf8_lossy(raw);
        let integer = || {
            text()
                .parse::<i64>()
                .map_err(|_| format!("the value {:?} is not an integer", text().as_ref()))
        };
        match self {
            Value::Sum(sum) => {
                let v: i128 = text()
                    .parse()
                    .map_err(|_| format!("the value {:?} is not an integer", text().as_ref()))?;
                *sum = sum.checked_add(v).ok_or("the sum overflows 128 bits")?;
            }
            Value::DoubleSum(sum) => {
                let v: f64 = text()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| {
                        format!("the value {:?} is not a finite number", text().as_ref())
                    })?;
                *sum += v;
            }
            Value::Max(max) => {
                let v = integer()?;
                *max = Some(max.map_or(v, |m| m.max(v)));
            }
            Value::Min(min) => {
                let v = integer()?;
                *min = Some(min.map_or(v, |m| m.min(v)));
            }
            Value::Uniq(seen) => {
                seen.insert(raw.to_vec());
            }
            Value::Histogram(counts) => {
                let (value, n) = match raw.iter().rposition(|&b| b == b'\t') {
                    Some(i) => {
                        let n = String::from_utf8_lossy(&raw[i + 1..]);
                        let n: u64 = n.parse().map_err(|_| {
                            format!(
                                "the count {:?} after the value's last tab is not a \
                                 non-negative integer",
                                n.as_ref()
                            )
                        })?;
                        (&raw[..i], n)
                    }
                    None => (raw, 1),
                };
                let count = counts.entry(value.to_vec()).or_default();
                *count = count.checked_add(n).ok_or("the count overflows 64 bits")?;
            }
        }
        Ok(())
    }

    /// Adds another block's state of the same type.
    fn merge(&mut self, other: Value) {
        match (self, other) {
            (Value::Sum(a), Value::Sum(b)) => *a = a.saturating_add(b),
            (Value::DoubleSum(a), Value::DoubleSum(b)) => *a += b,
            (Value::Max(a), Value::Max(b)) => *a = (*a).max(b),
            (Value::Min(a), Value::Min(b)) => {
                // `None < Some` in Option's order: the least of the values present.
                *a = match (*a, b) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                }
            }
            (Value::Uniq(a), Value::Uniq(b)) => a.extend(b),
            (Value::Histogram(a), Value::Histogram(b)) => {
                for (v, n) in b {
                    let count = a.entry(v).or_default();
                    *count = count.saturating_add(n);
                }
            }
            _ => {}
        }
    }

    /// The map's combined output (Hadoop's `getCombinerOutput`), as values the reducer
    /// [`Value::add`]s back.
    fn combined(&self) -> Vec<Vec<u8>> {
        match self {
            Value::Sum(s) => vec![s.to_string().into_bytes()],
            // Rust prints an f64 so that it parses back to the same bits.
            Value::DoubleSum(s) => vec![s.to_string().into_bytes()],
            Value::Max(m) | Value::Min(m) => m.iter().map(|m| m.to_string().into_bytes()).collect(),
            Value::Uniq(seen) => seen.iter().cloned().collect(),
            Value::Histogram(counts) => counts
                .iter()
                .map(|(v, n)| [v.as_slice(), b"\t", n.to_string().as_bytes()].concat())
                .collect(),
        }
    }

    /// The figure the row reports and, for sums and counts, the estimator's `y`.
    fn figure(&self) -> f64 {
        match self {
            Value::Sum(s) => *s as f64,
            Value::DoubleSum(s) => *s,
            Value::Max(m) | Value::Min(m) => m.map_or(0.0, |m| m as f64),
            Value::Uniq(seen) => seen.len() as f64,
            Value::Histogram(counts) => counts.values().map(|&n| n as f64).sum(),
        }
    }

    /// Hadoop's `getReport`.
    fn report(&self) -> String {
        match self {
            Value::Sum(s) => s.to_string(),
            Value::DoubleSum(s) => java_double(*s),
            Value::Max(m) | Value::Min(m) => m.map_or_else(String::new, |m| m.to_string()),
            Value::Uniq(seen) => seen.len().to_string(),
            Value::Histogram(counts) => {
                let mut c: Vec<u64> = counts.values().copied().collect();
                c.sort_unstable();
                let mut out = c.len().to_string();
                if let (Some(first), Some(last)) = (c.first(), c.last()) {
                    let n = c.len() as f64;
                    let mean = c.iter().map(|&v| v as f64).sum::<f64>() / n;
                    let var = c.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
                    out += &format!(
                        "\t{first}\t{}\t{last}\t{}\t{}",
                        c[c.len() / 2],
                        java_double(mean),
                        java_double(var.sqrt())
                    );
                }
                out
            }
        }
    }
}

/// A double as Java's `Double.toString` prints it: at least one decimal (`3.0`), and
/// scientific notation (`1.0E7`, `1.5E-4`) outside [10⁻³, 10⁷).
fn java_double(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = v.to_string();
        return if s.contains('.') { s } else { s + ".0" };
    }
    // Rust's `{:e}` is the shortest round-trip digits, `1.5e-4`; Java's mantissa keeps ".0".
    let s = format!("{v:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_owned()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

/// `TYPE:id` split at the first `:` (Hadoop's `ValueAggregatorDescriptor.TYPE_SEPARATOR`).
fn typed_key(key: &str) -> Result<(AggregateType, &str), String> {
    let Some((name, id)) = key.split_once(':') else {
        return Err(
            "no aggregator type: aggregate's mapper writes TYPE:key<TAB>value, e.g. \
             LongValueSum:hits\t1"
                .into(),
        );
    };
    let t = AggregateType::parse(name).ok_or_else(|| {
        let names: Vec<&str> = AggregateType::ALL.iter().map(|t| t.name()).collect();
        format!(
            "unknown aggregator type {name:?}: yard's aggregate takes {}",
            names.join(", ")
        )
    })?;
    Ok((t, id))
}

/// A map's partitions from its mapper's stdout: its lines combined per `TYPE:id`, one record a
/// key (its combined values), partitioned by the whole `TYPE:id` as Hadoop's are.
pub(crate) fn map(input: &[u8], stdout: &[u8], w: &mut Writer) -> Result<MapStats, LineError> {
    let mut keys: BTreeMap<String, Value> = BTreeMap::new();
    for (i, line) in lines(stdout).enumerate() {
        let failed = |problem: String| {
            let text: String = String::from_utf8_lossy(line).chars().take(200).collect();
            LineError {
                line: i as u64 + 1,
                text,
                problem,
            }
        };
        let (key, value) = key_value(line);
        let key = String::from_utf8_lossy(key);
        let (t, _) = typed_key(&key).map_err(failed)?;
        if !keys.contains_key(key.as_ref()) {
            keys.insert(key.clone().into_owned(), Value::new(t));
        }
        let state = keys.get_mut(key.as_ref()).expect("inserted above");
        state.add(value).map_err(failed)?;
    }
    for (key, value) in &keys {
        let combined = value.combined();
        let values: Vec<&[u8]> = combined.iter().map(Vec::as_slice).collect();
        w.push_values(key, &values);
    }
    Ok(MapStats {
        lines: count_lines(input),
        output_lines: count_lines(stdout),
        ..MapStats::default()
    })
}

/// One key at a reducer: what was seen over its blocks, and the estimators' sums and blocks.
struct Acc {
    seen: Value,
    y: f64,
    xy: f64,
    y2: f64,
    /// `(map, y)` of each block the key is in: the stratified estimator's, by position.
    blocks: Vec<(u32, f64)>,
}

/// The aggregate reducer over the partitions kept, in the order given, asking `cut` as
/// [`AppSpec::reduce_until`] does: every key's row (its estimate from the blocks folded) and
/// Hadoop's line, sorted by `TYPE:id`, at most [`OUTPUT_CAP`] of them in `aggregates`
/// (`distinct_keys` counts them all).
pub(crate) fn reduce(
    spec: &AppSpec,
    population: Population,
    inputs: &[(Split, &[u8])],
    cut: &mut dyn FnMut() -> bool,
) -> Result<ReducePartial, AppError> {
    let mut accs: FastMap<&str, Acc> = FastMap::default();
    let mut bad: Option<AppError> = None;
    let mut partial =
        super::reduce::fold_with(spec, population, inputs, cut, &mut |split, rec| {
            if bad.is_none() {
                if let Err(e) = fold_record(&mut accs, split, rec) {
                    bad = Some(e);
                }
            }
        })?;
    if let Some(e) = bad {
        return Err(e);
    }
    // The blocks folded are the first `kept` given (a cut stops between partitions).
    let folded = &inputs[..partial.kept as usize];
    let x: f64 = folded.iter().map(|(s, _)| s.bytes as f64).sum();
    let x2: f64 = folded.iter().map(|(s, _)| (s.bytes as f64).powi(2)).sum();
    let k = partial.kept;
    let estimator = match spec {
        AppSpec::Streaming { estimator, .. } => *estimator,
        _ => Estimator::default(),
    };
    // The blocks folded by position, for the stratified estimator.
    let mut positions: Vec<(u32, f64)> = folded
        .iter()
        .map(|(s, _)| (s.index, s.bytes as f64))
        .collect();
    positions.sort_unstable_by_key(|p| p.0);
    let mut keys: Vec<(&str, Acc)> = accs.into_iter().collect();
    keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
    keys.truncate(OUTPUT_CAP);
    partial.aggregates = keys
        .into_iter()
        .map(|(key, mut acc)| {
            let (t, id) = typed_key(key).unwrap_or((AggregateType::LongValueSum, key));
            // Only the estimates' fit is needed, and only short of every block.
            let fit = if t.kind() == Kind::Bound || k >= population.maps {
                (acc.seen.figure(), None)
            } else {
                match estimator {
                    Estimator::Ratio => {
                        let (estimate, v) =
                            ratio([f64::from(k), x, x2, acc.y, acc.xy, acc.y2], population);
                        (estimate, v.map(|v| (v, k.saturating_sub(1))))
                    }
                    Estimator::Stratified => {
                        acc.blocks.sort_unstable_by_key(|b| b.0);
                        stratified(&by_position(&positions, &acc.blocks), population)
                    }
                }
            };
            Reduced {
                line: format!("{id}\t{}", acc.seen.report()),
                aggregate: row(t, id, &acc.seen, k, fit, population),
            }
        })
        .collect();
    Ok(partial)
}

/// Every block folded as `(position, x, y)` in position order, with the key's `y` where it
/// is in the block and 0 where it is not; `blocks` is the key's `(map, y)`, sorted.
fn by_position(positions: &[(u32, f64)], blocks: &[(u32, f64)]) -> Vec<(u32, f64, f64)> {
    let mut at = blocks.iter().peekable();
    positions
        .iter()
        .map(|&(map, x)| {
            let mut y = 0.0;
            while let Some(&&(m, v)) = at.peek() {
                if m > map {
                    break;
                }
                if m == map {
                    y += v;
                }
                at.next();
            }
            (map, x, y)
        })
        .collect()
}

/// One map's record for a key: its combined values read back into the key's state and sums.
fn fold_record<'a>(
    accs: &mut FastMap<&'a str, Acc>,
    split: Split,
    rec: Record<'a>,
) -> Result<(), AppError> {
    let malformed = |problem: String| AppError::Malformed {
        map: split.index,
        error: super::records::RecordError { offset: 0, problem },
    };
    let (t, _) = typed_key(rec.key).map_err(malformed)?;
    let mut block = Value::new(t);
    for v in rec.values() {
        block
            .add(v)
            .map_err(|e| malformed(format!("key {:?}: {e}", rec.key)))?;
    }
    let y = block.figure();
    let x = split.bytes as f64;
    let acc = accs.entry(rec.key).or_insert_with(|| Acc {
        seen: Value::new(t),
        y: 0.0,
        xy: 0.0,
        y2: 0.0,
        blocks: Vec::new(),
    });
    acc.seen.merge(block);
    acc.y += y;
    acc.xy += x * y;
    acc.y2 += y * y;
    acc.blocks.push((split.index, y));
    Ok(())
}

/// A key's row from what was seen over `k` blocks and the estimator's fit: `Ŷ` and, from two
/// blocks on, `V̂` and the interval's degrees of freedom.
fn row(
    t: AggregateType,
    id: &str,
    seen: &Value,
    k: u32,
    fit: (f64, Option<(f64, u32)>),
    population: Population,
) -> Aggregate {
    let observed = seen.figure();
    let exact = k >= population.maps;
    let (estimate, low, high) = match t.kind() {
        _ if exact => (Some(observed), Some(observed), Some(observed)),
        Kind::Estimate => {
            let (estimate, variance) = fit;
            // A histogram's total is a count, which cannot be below what was seen; a sum
            // of values of either sign can.
            let floor = if t == AggregateType::ValueHistogram {
                observed
            } else {
                f64::NEG_INFINITY
            };
            let estimate = estimate.max(floor);
            match variance {
                Some((v, df)) => {
                    let half = t975(df) * v.sqrt();
                    (
                        Some(estimate),
                        Some((estimate - half).max(floor)),
                        Some(estimate + half),
                    )
                }
                None => (Some(estimate), Some(floor).filter(|f| f.is_finite()), None),
            }
        }
        Kind::Bound => match t {
            AggregateType::LongValueMin => (Some(observed), None, Some(observed)),
            _ => (Some(observed), Some(observed), None),
        },
    };
    Aggregate {
        key: id.to_owned(),
        aggregator: t,
        estimate,
        low,
        high,
        observed,
        kind: t.kind(),
    }
}

/// The job's answer: streaming's common fields ([`super::answer`]) with the aggregate
/// reducer's rows, `processedFraction`, Hadoop's `output`, and notes of their own.
pub(crate) fn answer(
    spec: &AppSpec,
    population: Population,
    maps: &[(Split, MapStats)],
    reduces: &[ReducePartial],
) -> serde_json::Value {
    let mut v = super::answer::answer(spec, population, maps, reduces);
    let mut parts: Vec<&ReducePartial> = reduces.iter().collect();
    // A partition reported twice counts once, as in every answer.
    parts.sort_by_key(|p| p.partition.unwrap_or(u32::MAX));
    parts.dedup_by_key(|p| p.partition);
    let mut rows: Vec<(String, &Reduced)> = parts
        .iter()
        .flat_map(|p| &p.aggregates)
        .map(|r| {
            (
                format!("{}:{}", r.aggregate.aggregator.name(), r.aggregate.key),
                r,
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let keys: u64 = parts.iter().map(|p| p.distinct_keys).sum();
    rows.truncate(OUTPUT_CAP);
    let x = population.bytes as f64;
    let processed_fraction = if population.maps == 0 || x == 0.0 {
        1.0
    } else if parts.is_empty() {
        0.0
    } else {
        let kept: f64 = parts.iter().map(|p| p.kept_bytes as f64).sum();
        (kept / (parts.len() as f64 * x)).min(1.0)
    };
    let fixed = AggregateAnswer {
        aggregates: rows.iter().map(|(_, r)| r.aggregate.clone()).collect(),
        processed_fraction,
        output: rows.iter().map(|(_, r)| r.line.clone()).collect(),
    };
    let exact = v["exact"].as_bool().unwrap_or(false);
    let (k, n) = (v["mapsRead"].as_u64().unwrap_or(0), population.maps);
    let estimator = match spec {
        AppSpec::Streaming { estimator, .. } => *estimator,
        _ => Estimator::default(),
    };
    let mut notes = Vec::new();
    if k == 0 && n > 0 {
        notes.push("no map finished: there is nothing to estimate from".to_owned());
    } else if !exact {
        notes.push(format!(
            "sums (LongValueSum, DoubleValueSum) and ValueHistogram's counts of values are \
             scaled from the {k} of {n} blocks read, with 95 % intervals ({} estimator); they \
             assume the blocks read are a random sample (the maps were launched in a random \
             order, stratified by position) and that no map was dropped for what its block \
             holds",
            estimator.name()
        ));
        notes.push(
            "maxima, minima and distinct counts are what was read: bounds (kind: bound), not \
             estimates; output is Hadoop's text over what was read, unscaled"
                .into(),
        );
    }
    let reported = parts.iter().filter(|p| p.partition.is_some()).count();
    match parts.iter().find_map(|p| p.reduces) {
        Some(r) if reported < r as usize => notes.push(format!(
            "{reported} of {r} reducers answered (the others were abandoned at the deadline): \
             their keys are missing from aggregates and output"
        )),
        None if k > 0 => notes.push("no reducer answered: there are no rows".into()),
        _ => {}
    }
    if k == 1 && n > 1 {
        notes.push("one block read: the sums' intervals are unbounded (low, high null)".into());
    }
    if let Some(m) = v.as_object_mut() {
        if let Ok(serde_json::Value::Object(f)) = serde_json::to_value(&fixed) {
            m.extend(f);
        }
        m.insert("keys".into(), json!(keys));
        m.insert("estimator".into(), json!(estimator.name()));
        m.insert("outputLines".into(), json!(keys));
        m.insert("truncated".into(), json!(keys > fixed.output.len() as u64));
        m.insert(
            "bounds".into(),
            json!(
                "95 % intervals on sums and counts; maxima, minima and distinct counts are \
                 bounds"
            ),
        );
        m.insert("notes".into(), json!(notes));
    }
    v
}

#[cfg(test)]
mod tests;
