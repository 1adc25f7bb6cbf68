//! The reduce function, shared by the apps: merge the kept partitions per key, keep the
//! estimator's sums per key, and hand back the reducer's top keys already estimated.

use super::approx::Sums;
use super::hash::FastMap;
use super::records::{INDEX_TAG, Reader, Record, RecordError, STREAMING_TAG, SYNTHETIC_TAG};
use super::{AppError, AppSpec, Population, Posting, ReducePartial, Split, TopEntry};

/// Postings an index answer shows per term.
const POSTINGS_SHOWN: usize = 5;

/// One key's share of the estimator's sums (`k, Σx, Σx²` are the reducer's).
#[derive(Default)]
struct Acc {
    y: u64,
    xy: f64,
    y2: f64,
    postings: Vec<Posting>,
}

pub(crate) fn reduce(
    spec: &AppSpec,
    population: Population,
    inputs: &[(Split, &[u8])],
) -> Result<ReducePartial, AppError> {
    // In map order, as it always was: the same sums to the last bit whatever order the
    // partitions arrived in.
    let mut order: Vec<(Split, &[u8])> = inputs.to_vec();
    order.sort_by_key(|(s, _)| s.index);
    fold(spec, population, &order, &mut || false)
}

/// The reduce over `inputs` in the order given, asking `cut` before each partition after the
/// first (a cut reduce answers from something): once it says yes, the partitions not yet
/// folded are left out and the partial is of those folded (its `kept`, `kept_bytes` and
/// `input_bytes` say which, and the estimates are scaled from them). Given in a random
/// order, what a cut leaves is still a random sample of blocks.
/// Uncut, the order changes nothing but the last bits of sums past 2⁵³: the index keeps each
/// term's lowest (map, line) postings whatever the order.
pub(crate) fn fold(
    spec: &AppSpec,
    population: Population,
    inputs: &[(Split, &[u8])],
    cut: &mut dyn FnMut() -> bool,
) -> Result<ReducePartial, AppError> {
    fold_with(spec, population, inputs, cut, &mut |_, _| {})
}

/// [`fold`], handing every streaming record read to `each` as well, with the split it came
/// from (the reducer command's input: its values; their number is the key's count here; the
/// aggregate reducer's blocks).
pub(crate) fn fold_with<'a>(
    spec: &AppSpec,
    population: Population,
    inputs: &[(Split, &'a [u8])],
    cut: &mut dyn FnMut() -> bool,
    each: &mut dyn FnMut(Split, Record<'a>),
) -> Result<ReducePartial, AppError> {
    let tag = spec.tag();
    let mut maps: Vec<u32> = inputs.iter().map(|(s, _)| s.index).collect();
    maps.sort_unstable();
    if let Some(w) = maps.windows(2).find(|w| w[0] == w[1]) {
        return Err(AppError::DuplicateInput { map: w[0] });
    }
    let order: Vec<&(Split, &'a [u8])> = inputs.iter().collect();
    // A user reducer's answer is its command's output, no estimates: a table of its keys'
    // sums (hundreds of thousands for a `cat` mapper) was most of its fold (issue 31's
    // overhead), so it keeps none, and its caller counts its keys as it sorts them
    // (`AppSpec::reducer_input`).
    let user_reducer = tag == STREAMING_TAG && !spec.is_aggregate();
    let mut blocks = Sums::default();
    let mut accs: FastMap<&str, Acc> = FastMap::default();
    let mut partial = ReducePartial {
        app: spec.name().to_owned(),
        partition: None,
        reduces: None,
        maps: population.maps,
        kept: 0,
        kept_bytes: 0,
        input_bytes: 0,
        records: 0,
        counted: 0,
        distinct_keys: 0,
        top: Vec::new(),
        output: Vec::new(),
        output_lines: 0,
        aggregates: Vec::new(),
        command_cut: None,
    };
    for &&(split, bytes) in &order {
        // At least one partition: a cut reduce answers from something.
        if partial.kept > 0 && cut() {
            break;
        }
        let map = split.index;
        if map >= population.maps {
            return Err(AppError::OutsidePopulation {
                map,
                maps: population.maps,
            });
        }
        let malformed = |error| AppError::Malformed { map, error };
        let mut reader = Reader::new(bytes).map_err(malformed)?;
        let h = reader.header();
        if h.tag != tag {
            return Err(AppError::WrongApp {
                map,
                expected: spec.name(),
                found: h.app,
            });
        }
        if h.map != map {
            return Err(malformed(RecordError {
                offset: 14,
                problem: format!("the header says it comes from map {}", h.map),
            }));
        }
        match (partial.partition, partial.reduces) {
            (Some(p), Some(r)) if (p, r) != (h.partition, h.reduces) => {
                return Err(AppError::MixedPartitions {
                    map,
                    found: (h.partition, h.reduces),
                    expected: (p, r),
                });
            }
            _ => {
                partial.partition = Some(h.partition);
                partial.reduces = Some(h.reduces);
            }
        }
        blocks.add(split.bytes, 0);
        partial.kept += 1;
        partial.kept_bytes = partial.kept_bytes.saturating_add(split.bytes);
        partial.input_bytes += bytes.len() as u64;
        let x = split.bytes as f64;
        loop {
            let at = reader.offset();
            let Some(rec) = reader.next_record().map_err(malformed)? else {
                break;
            };
            partial.records += 1;
            // Every key's Σy is at most this, so checking it here covers them all.
            partial.counted = partial.counted.checked_add(rec.count).ok_or_else(|| {
                malformed(RecordError {
                    offset: at,
                    problem: "counts add up to more than 2⁶⁴".into(),
                })
            })?;
            if tag == SYNTHETIC_TAG {
                continue;
            }
            if spec.partition_of(rec.key.as_bytes(), h.reduces) != h.partition {
                return Err(malformed(RecordError {
                    offset: at,
                    problem: format!("key {:?} belongs to another partition", rec.key),
                }));
            }
            if tag == STREAMING_TAG {
                each(split, rec);
                if user_reducer {
                    continue;
                }
            }
            let acc = accs.entry(rec.key).or_default();
            let y = rec.count as f64;
            acc.y += rec.count;
            acc.xy += x * y;
            acc.y2 += y * y;
            if tag == INDEX_TAG {
                // The term's lowest (map, line) postings: a map's lines come in order, so
                // its first few are all it can add.
                acc.postings.extend(
                    rec.lines()
                        .take(POSTINGS_SHOWN)
                        .map(|line| Posting { map, line }),
                );
                acc.postings.sort_unstable_by_key(|p| (p.map, p.line));
                acc.postings.truncate(POSTINGS_SHOWN);
            }
        }
    }
    partial.distinct_keys = if tag == SYNTHETIC_TAG {
        partial.records
    } else {
        accs.len() as u64
    };
    partial.top = top(accs, spec.top_len(), blocks, population);
    Ok(partial)
}

/// The `n` keys with the largest estimates. Within one reducer every key's estimate is its Σy
/// times the same factor, so ranking by Σy (ties by key) ranks by estimate.
fn top(accs: FastMap<&str, Acc>, n: usize, blocks: Sums, population: Population) -> Vec<TopEntry> {
    if n == 0 {
        return Vec::new();
    }
    let mut entries: Vec<(&str, Acc)> = accs.into_iter().collect();
    let rank = |a: &(&str, Acc), b: &(&str, Acc)| b.1.y.cmp(&a.1.y).then_with(|| a.0.cmp(b.0));
    if entries.len() > n {
        entries.select_nth_unstable_by(n - 1, rank);
        entries.truncate(n);
    }
    entries.sort_unstable_by(rank);
    entries
        .into_iter()
        .map(|(key, acc)| TopEntry {
            key: key.to_owned(),
            estimate: Sums {
                y: acc.y,
                xy: acc.xy,
                y2: acc.y2,
                ..blocks
            }
            .estimate(population),
            postings: acc.postings,
        })
        .collect()
}
