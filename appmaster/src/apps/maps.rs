//! The map functions. Each combines in memory (one record per distinct key per map, as a
//! Hadoop combiner would), sorts the keys once, and streams them into their partitions, which
//! come out sorted because a sorted sequence split by hash stays sorted.

use std::borrow::Cow;

use super::hash::KeyTable;
use super::records::{HEADER_LEN, TRAILER_LEN, Writer};
use super::text::{count_lines, for_each_word, lines, lowercase};
use super::{AppError, MapStats, SampleLine, SyntheticTask};

/// Longest sample line kept, in bytes; longer ones are cut at a character boundary and end
/// with "…".
const SAMPLE_LINE_BYTES: usize = 1024;

/// Sorts `(key, value)` pairs by key and merges equal keys (distinct raw keys can normalize
/// to the same key: "The" and "the", or two invalid byte strings made lossy).
fn sorted_merged<V>(
    pairs: Vec<(Cow<'_, str>, V)>,
    mut merge: impl FnMut(&mut V, V),
) -> Vec<(Cow<'_, str>, V)> {
    // Comparing the first 16 bytes as a number (big-endian, zero-padded: the same order as the
    // bytes) settles almost every comparison without a memcmp call.
    let mut keyed: Vec<(u128, Cow<'_, str>, V)> =
        pairs.into_iter().map(|(k, v)| (prefix(&k), k, v)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut out: Vec<(Cow<'_, str>, V)> = Vec::with_capacity(keyed.len());
    for (_, k, v) in keyed {
        match out.last_mut() {
            Some(last) if last.0 == k => merge(&mut last.1, v),
            _ => out.push((k, v)),
        }
    }
    out
}

fn prefix(key: &str) -> u128 {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    b[..n].copy_from_slice(&key.as_bytes()[..n]);
    u128::from_be_bytes(b)
}

fn write_counts(
    w: &mut Writer,
    raw: KeyTable<'_, u64>,
    normalize: impl for<'b> Fn(&'b [u8]) -> Cow<'b, str>,
) {
    let pairs = raw.into_pairs(normalize);
    for (k, c) in sorted_merged(pairs, |a, b| *a += b) {
        w.push(&k, c);
    }
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

pub(crate) fn wordcount(input: &[u8], w: &mut Writer) -> MapStats {
    let mut raw: KeyTable<'_, u64> = KeyTable::new();
    let mut words = 0u64;
    for_each_word(input, |start, end| {
        words += 1;
        *raw.get_at(input, start, end) += 1;
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
    let mut raw: KeyTable<'_, u64> = KeyTable::new();
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
            *raw.get(m.as_bytes()) += 1;
        }
    }
    write_counts(w, raw, lossy);
    Ok(stats)
}

/// Counts lines by their whitespace-separated field `field`.
pub(crate) fn topk(field: usize, input: &[u8], w: &mut Writer) -> MapStats {
    let mut raw: KeyTable<'_, u64> = KeyTable::new();
    let mut stats = MapStats::default();
    for line in lines(input) {
        stats.lines += 1;
        let key = line
            .split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())
            .nth(field);
        match key {
            Some(k) => *raw.get(k) += 1,
            None => stats.skipped_lines += 1,
        }
    }
    write_counts(w, raw, lossy);
    stats
}

/// Term → the 1-based lines of the split it occurs on (once per line).
/// An index term while its split is read: its number (from 1), and the last line it was
/// seen on (0 for none).
#[derive(Default)]
struct Term {
    id: u32,
    last: u32,
}

pub(crate) fn index(input: &[u8], w: &mut Writer) -> Result<MapStats, AppError> {
    let mut stats = MapStats {
        lines: count_lines(input),
        ..MapStats::default()
    };
    // Words are at least one byte and a separator apart, so term numbers fit in u32 too.
    if stats.lines > u64::from(u32::MAX) || input.len() as u64 > 2 * u64::from(u32::MAX) {
        return Err(AppError::TooLarge {
            what: format!(
                "an index split of {} bytes and {} lines",
                input.len(),
                stats.lines
            ),
            limit: u64::from(u32::MAX),
        });
    }
    // One pass over the words; the line number advances by the newlines between them (words
    // never contain one), which numbers lines as `text::lines` does. Postings go to one list
    // in input order (a push per term per line into its own Vec missed the cache every time).
    let mut terms: KeyTable<'_, Term> = KeyTable::new();
    let mut postings: Vec<(u32, u32)> = Vec::new();
    let (mut line, mut scanned, mut ids) = (1u32, 0, 0u32);
    for_each_word(input, |start, end| {
        stats.words += 1;
        let gap = input[scanned..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        line += gap as u32;
        scanned = end;
        let term = terms.get_at(input, start, end);
        if term.id == 0 {
            ids += 1;
            term.id = ids;
        }
        if term.last != line {
            term.last = line;
            postings.push((term.id, line));
        }
    });
    // Group the lines by term (a counting sort, stable, so each group stays ascending).
    let mut offsets = vec![0usize; ids as usize + 2];
    for &(id, _) in &postings {
        offsets[id as usize + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let mut grouped = vec![0u32; postings.len()];
    let mut next = offsets.clone();
    for (id, line) in postings {
        grouped[next[id as usize]] = line;
        next[id as usize] += 1;
    }
    let pairs = terms
        .into_pairs(lowercase)
        .into_iter()
        .map(|(k, t)| {
            (
                k,
                grouped[offsets[t.id as usize]..offsets[t.id as usize + 1]].to_vec(),
            )
        })
        .collect();
    let merged = sorted_merged(pairs, |a, b| *a = merge_sorted(a, &b));
    for (term, lines) in merged {
        w.push_postings(&term, &lines);
    }
    Ok(stats)
}

/// The union of two ascending lists of distinct lines.
fn merge_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Filler records: `task.output_bytes` in all, partitions (headers and checksums included) as
/// even as the bytes allow — the first `output_bytes % reduces` one byte larger. A partition
/// smaller than its header and checksum is just those, and a one-byte record body cannot be
/// written, so a partition may be up to `HEADER_LEN + TRAILER_LEN` bytes over or one byte
/// under its share.
pub(crate) fn synthetic(task: &SyntheticTask, w: &mut Writer) -> Result<MapStats, AppError> {
    let parts = w.parts_mut();
    let r = parts.len() as u64;
    let mut records = 0;
    for (p, out) in parts.iter_mut().enumerate() {
        let share = task.output_bytes / r + u64::from((p as u64) < task.output_bytes % r);
        let body = share.saturating_sub((HEADER_LEN + TRAILER_LEN) as u64);
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
    fn sorting_by_prefix_then_key_is_byte_order() {
        let keys = [
            "b",
            "a\0",
            "a",
            "ab",
            "",
            "aaaaaaaaaaaaaaaab",
            "aaaaaaaaaaaaaaaaa",
            "é",
        ];
        let pairs = keys.iter().map(|k| (Cow::Borrowed(*k), 1)).collect();
        let got: Vec<_> = sorted_merged(pairs, |a, b| *a += b)
            .into_iter()
            .map(|(k, _)| k.into_owned())
            .collect();
        let mut want: Vec<_> = keys.iter().map(|k| k.to_string()).collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn merge_sorted_is_a_union() {
        assert_eq!(
            merge_sorted(&[1, 4, 6], &[2, 4, 9, 10]),
            [1, 2, 4, 6, 9, 10]
        );
        assert_eq!(merge_sorted(&[], &[3]), [3]);
    }

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
