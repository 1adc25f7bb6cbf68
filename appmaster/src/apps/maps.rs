//! The map functions. Each combines in memory (one record per distinct key per map, as a
//! Hadoop combiner would), sorts the keys once, and streams them into their partitions, which
//! come out sorted because a sorted sequence split by hash stays sorted.

use std::borrow::Cow;

use super::hash::FastMap;
use super::records::{HEADER_LEN, Writer};
use super::text::{count_lines, for_each_word, lines, lowercase};
use super::{AppError, MapStats, SampleLine, SyntheticTask};

/// Longest sample line kept, in bytes; longer ones are cut at a character boundary and end
/// with "…".
pub(crate) const SAMPLE_LINE_BYTES: usize = 1024;

/// Sorts `(key, value)` pairs by key and merges equal keys (distinct raw keys can normalize
/// to the same key: "The" and "the", or two invalid byte strings made lossy).
fn sorted_merged<V>(
    mut pairs: Vec<(Cow<'_, str>, V)>,
    mut merge: impl FnMut(&mut V, V),
) -> Vec<(Cow<'_, str>, V)> {
    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Cow<'_, str>, V)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        match out.last_mut() {
            Some(last) if last.0 == k => merge(&mut last.1, v),
            _ => out.push((k, v)),
        }
    }
    out
}

fn write_counts<'a>(
    w: &mut Writer,
    raw: FastMap<&'a [u8], u64>,
    normalize: impl Fn(&'a [u8]) -> Cow<'a, str>,
) {
    let pairs = raw.into_iter().map(|(k, c)| (normalize(k), c)).collect();
    for (k, c) in sorted_merged(pairs, |a, b| *a += b) {
        w.push(&k, c);
    }
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

pub(crate) fn wordcount(input: &[u8], w: &mut Writer) -> MapStats {
    let mut raw: FastMap<&[u8], u64> = FastMap::default();
    let mut words = 0u64;
    for_each_word(input, |word| {
        words += 1;
        *raw.entry(word).or_insert(0) += 1;
    });
    write_counts(w, raw, lowercase);
    MapStats {
        lines: count_lines(input),
        words,
        ..MapStats::default()
    }
}

fn sample_line(line: u64, text: &[u8]) -> SampleLine {
    let text = String::from_utf8_lossy(text);
    if text.len() <= SAMPLE_LINE_BYTES {
        return SampleLine {
            line,
            text: text.into_owned(),
        };
    }
    let mut cut = SAMPLE_LINE_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    SampleLine {
        line,
        text: format!("{}…", &text[..cut]),
    }
}

/// Counts matching lines; emits each match's text with its count (Hadoop's Grep example).
pub(crate) fn grep(
    pattern: &str,
    sample: usize,
    input: &[u8],
    w: &mut Writer,
) -> Result<MapStats, AppError> {
    let re = super::compile(pattern)?;
    let mut raw: FastMap<&[u8], u64> = FastMap::default();
    let mut stats = MapStats::default();
    for line in lines(input) {
        stats.lines += 1;
        let mut found = re.find_iter(line).peekable();
        if found.peek().is_none() {
            continue;
        }
        stats.matching_lines += 1;
        if stats.sample.len() < sample {
            stats.sample.push(sample_line(stats.lines, line));
        }
        for m in found {
            *raw.entry(m.as_bytes()).or_insert(0) += 1;
        }
    }
    write_counts(w, raw, lossy);
    Ok(stats)
}

/// Counts lines by their whitespace-separated field `field`.
pub(crate) fn topk(field: usize, input: &[u8], w: &mut Writer) -> MapStats {
    let mut raw: FastMap<&[u8], u64> = FastMap::default();
    let mut stats = MapStats::default();
    for line in lines(input) {
        stats.lines += 1;
        let key = line
            .split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())
            .nth(field);
        match key {
            Some(k) => *raw.entry(k).or_insert(0) += 1,
            None => stats.skipped_lines += 1,
        }
    }
    write_counts(w, raw, lossy);
    stats
}

/// Term → the 1-based lines of the split it occurs on (once per line).
pub(crate) fn index(input: &[u8], w: &mut Writer) -> Result<MapStats, AppError> {
    let mut raw: FastMap<&[u8], Vec<u32>> = FastMap::default();
    let mut stats = MapStats::default();
    for line in lines(input) {
        stats.lines += 1;
        let n = u32::try_from(stats.lines).map_err(|_| AppError::TooLarge {
            what: "an index split's line count".into(),
            limit: u64::from(u32::MAX),
        })?;
        for_each_word(line, |word| {
            stats.words += 1;
            let postings = raw.entry(word).or_default();
            if postings.last() != Some(&n) {
                postings.push(n);
            }
        });
    }
    let pairs = raw.into_iter().map(|(k, v)| (lowercase(k), v)).collect();
    let merged = sorted_merged(pairs, |a, mut b| {
        a.append(&mut b);
        a.sort_unstable();
        a.dedup();
    });
    for (term, postings) in merged {
        w.push_postings(&term, &postings);
    }
    Ok(stats)
}

/// Filler records: `task.output_bytes` in all, partitions (headers included) as even as the
/// bytes allow — the first `output_bytes % reduces` one byte larger. A partition smaller than
/// the header is just the header, and a one-byte record body cannot be written, so a
/// partition may be up to `HEADER_LEN` bytes over or one byte under its share.
pub(crate) fn synthetic(task: &SyntheticTask, w: &mut Writer) -> Result<MapStats, AppError> {
    let parts = w.parts_mut();
    let r = parts.len() as u64;
    let mut records = 0;
    for (p, out) in parts.iter_mut().enumerate() {
        let share = task.output_bytes / r + u64::from((p as u64) < task.output_bytes % r);
        let body = share.saturating_sub(HEADER_LEN as u64);
        let too_large = || AppError::TooLarge {
            what: format!("a synthetic partition of {share} bytes"),
            limit: isize::MAX as u64,
        };
        let body_len = usize::try_from(body).map_err(|_| too_large())?;
        out.try_reserve_exact(body_len).map_err(|_| too_large())?;
        records += fill(out, body);
    }
    w.add_records(records);
    Ok(MapStats::default())
}

/// Bytes of one bulk filler record: a 98-byte key, its length and the count 1.
const FILLER: u64 = 100;

/// Appends exactly `body` bytes of records (`body` ≠ 1), keys strictly increasing: first a
/// short record of zeros to make up the remainder, then numbered 100-byte records.
fn fill(out: &mut Vec<u8>, body: u64) -> u64 {
    if body < 2 {
        return 0;
    }
    // bulk·100 + rem = body with rem in 2..=101, so the short record's key is 0–99 bytes.
    let bulk = (body - 2) / FILLER;
    let rem = body - bulk * FILLER;
    let key_len = (rem - 2) as usize;
    out.push(key_len as u8);
    out.resize(out.len() + key_len, b'0');
    out.push(1);
    let pad = [b'x'; FILLER as usize];
    for i in 1..=bulk {
        out.push((FILLER - 2) as u8);
        let number = format!("{i:012}");
        out.extend_from_slice(number.as_bytes());
        out.extend_from_slice(&pad[..(FILLER - 2) as usize - number.len()]);
        out.push(1);
    }
    1 + bulk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_writes_exactly_the_body() {
        for body in [0, 2, 3, 50, 101, 102, 103, 201, 202, 1000, 12_345] {
            let mut out = Vec::new();
            let n = fill(&mut out, body);
            assert_eq!(out.len() as u64, body, "body {body}");
            assert_eq!(n, if body < 2 { 0 } else { 1 + (body - 2) / 100 });
        }
    }
}
