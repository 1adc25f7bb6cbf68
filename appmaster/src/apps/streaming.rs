//! Hadoop Streaming's pure half: which lines a split owns (LineRecordReader's rule), the
//! mapper's `key<TAB>value` lines read into partitions, the reducer's input written as
//! sorted, grouped lines, and the commands' output kept for the answer. The commands
//! themselves run in the task process (`yard-appmaster-live`'s `task.rs`): this crate does
//! no IO.

use std::borrow::Cow;

use super::MapStats;
use super::records::Writer;
use super::text::{count_lines, lines};

/// Lines of command output an answer carries (and a map or reducer keeps for it); the rest
/// are counted, not kept, until output datasets (issue 31, item 3) hold them.
pub const OUTPUT_CAP: usize = 1000;

/// The bytes a split owns under Hadoop's LineRecordReader rule: a line belongs to the split
/// where its first byte is. `block` is the split's bytes; `starts_line` says whether a line
/// starts at its first byte (the input's first block, or the previous block ended with
/// `\n`); `next` is the input after it (the next block), which finishes the line the block's
/// end cuts. So a split that starts mid-line skips through its first `\n`, and one that ends
/// mid-line reads on to the next `\n`. A line longer than `block` and `next` together is cut
/// at `next`'s end.
pub fn owned_lines<'a>(block: &'a [u8], starts_line: bool, next: &[u8]) -> Cow<'a, [u8]> {
    let from = if starts_line {
        0
    } else {
        match block.iter().position(|&b| b == b'\n') {
            Some(i) => i + 1,
            // No line starts in this split: every byte of it belongs to an earlier one's line.
            None => return Cow::Borrowed(&[]),
        }
    };
    let own = &block[from..];
    if own.is_empty() || own.ends_with(b"\n") || next.is_empty() {
        return Cow::Borrowed(own);
    }
    let rest = next
        .iter()
        .position(|&b| b == b'\n')
        .map_or(next, |i| &next[..=i]);
    Cow::Owned([own, rest].concat())
}

/// A streaming output line as Hadoop reads it: the key up to the first tab, the value after
/// it; a line without a tab is all key, with an empty value.
pub fn key_value(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b'\t') {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, &[]),
    }
}

/// A command's stdout as the answer keeps it: its first [`OUTPUT_CAP`] lines (lossy UTF-8)
/// and how many lines it wrote in all.
pub fn output_lines(stdout: &[u8]) -> (Vec<String>, u64) {
    let kept = lines(stdout)
        .take(OUTPUT_CAP)
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    (kept, count_lines(stdout))
}

/// A map's partitions from its mapper's stdout: each line's key partitioned as the built-in
/// apps' keys are (keys as lossy UTF-8), every value of a key kept in the order written.
/// Map-only (`map_only`): no records; the lines are the map's output, kept in its stats.
pub(crate) fn map(input: &[u8], stdout: &[u8], map_only: bool, w: &mut Writer) -> MapStats {
    let mut stats = MapStats {
        lines: count_lines(input),
        ..MapStats::default()
    };
    if map_only {
        (stats.output, stats.output_lines) = output_lines(stdout);
        return stats;
    }
    let mut pairs: Vec<(Cow<'_, str>, &[u8])> = lines(stdout)
        .map(|l| {
            let (k, v) = key_value(l);
            (String::from_utf8_lossy(k), v)
        })
        .collect();
    // Stable: a key's values stay in the order the mapper wrote them.
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut values: Vec<&[u8]> = Vec::new();
    for (i, (key, value)) in pairs.iter().enumerate() {
        values.push(value);
        if pairs.get(i + 1).is_none_or(|(next, _)| next != key) {
            w.push_values(key, &values);
            values.clear();
        }
    }
    stats
}

/// The reducer's stdin from its records, `(key, value)` in any order: sorted by key (stable,
/// so a key's values keep their order), one `key<TAB>value` line each, so equal keys are
/// consecutive as Hadoop streams them.
pub(crate) fn reducer_input(mut records: Vec<(&str, &[u8])>) -> Vec<u8> {
    records.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = Vec::new();
    for (key, value) in records {
        out.extend_from_slice(key.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(value);
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_line_belongs_to_the_split_where_it_starts() {
        // "one\ntwo\nthree\n" cut into blocks of 5: "one\nt" "wo\nth" "ree\n".
        let (a, b, c) = (&b"one\nt"[..], &b"wo\nth"[..], &b"ree\n"[..]);
        assert_eq!(&*owned_lines(a, true, b), b"one\ntwo\n");
        assert_eq!(&*owned_lines(b, false, c), b"three\n");
        assert_eq!(&*owned_lines(c, false, b""), b"");
        // A block that starts a line keeps its first line; a whole-lines block is itself.
        assert_eq!(&*owned_lines(b"x\ny\n", true, b"z\n"), b"x\ny\n");
        // No line starts in the block: it owns nothing.
        assert_eq!(&*owned_lines(b"long", false, b"er\nz\n"), b"");
        // The last block without a final newline keeps its last line.
        assert_eq!(&*owned_lines(b"a\nb", true, b""), b"a\nb");
        // Every line is owned exactly once, whatever the block size.
        let text = b"alpha\nbe\n\ngamma delta\ne\n";
        for size in 1..text.len() {
            let blocks: Vec<&[u8]> = text.chunks(size).collect();
            let mut all = Vec::new();
            for (i, block) in blocks.iter().enumerate() {
                let starts = i == 0 || blocks[i - 1].ends_with(b"\n");
                let next: Vec<u8> = blocks[i + 1..].concat();
                all.extend_from_slice(&owned_lines(block, starts, &next));
            }
            assert_eq!(all, text, "blocks of {size}");
        }
    }

    #[test]
    fn keys_end_at_the_first_tab() {
        assert_eq!(key_value(b"k\tv"), (&b"k"[..], &b"v"[..]));
        assert_eq!(key_value(b"k\tv\tw"), (&b"k"[..], &b"v\tw"[..]));
        assert_eq!(key_value(b"no tab"), (&b"no tab"[..], &b""[..]));
        assert_eq!(key_value(b"\tv"), (&b""[..], &b"v"[..]));
    }

    #[test]
    fn the_reducer_sees_equal_keys_together() {
        let input = reducer_input(vec![("b", b"1"), ("a", b"2"), ("b", b"3"), ("a", b"")]);
        assert_eq!(input, b"a\t2\na\t\nb\t1\nb\t3\n");
    }

    #[test]
    fn records_go_to_their_key_s_reducer_grouped_and_the_answer_says_no_bounds() {
        use crate::apps::{AppSpec, Population, Split};
        let spec = AppSpec::parse("streaming", &["mapper=cat".into()]).unwrap();
        assert_eq!(
            spec,
            AppSpec::Streaming {
                mapper: "cat".into(),
                reducer: Some("cat".into()),
                cmdenv: vec![]
            }
        );
        let population = Population { maps: 2, bytes: 20 };
        let outs: Vec<_> = [&b"b\t1\na\t2\nlone\n"[..], b"a\t3\nb\t4\n"]
            .iter()
            .enumerate()
            .map(|(i, stdout)| {
                let split = Split {
                    index: i as u32,
                    bytes: 10,
                };
                (split, spec.map_streamed(split, b"in\n", stdout, 2).unwrap())
            })
            .collect();
        let mut all = Vec::new();
        let mut partials = Vec::new();
        for r in 0..2 {
            let inputs: Vec<(Split, &[u8])> = outs
                .iter()
                .map(|(s, o)| (*s, o.partitions[r].as_slice()))
                .collect();
            let (mut partial, stdin) = spec
                .reducer_input(population, &inputs, &mut || false)
                .unwrap();
            let text = String::from_utf8(stdin).unwrap();
            // Each key in one reducer, its values consecutive, in map order.
            for line in text.lines() {
                let key = line.split('\t').next().unwrap();
                assert_eq!(crate::apps::hash::partition_of(key.as_bytes(), 2), r as u32);
            }
            all.extend(text.lines().map(str::to_owned));
            (partial.output, partial.output_lines) = output_lines(text.as_bytes());
            partials.push(partial);
        }
        all.sort();
        assert_eq!(all, ["a\t2", "a\t3", "b\t1", "b\t4", "lone\t"]);
        let maps: Vec<_> = outs.iter().map(|(s, o)| (*s, o.stats.clone())).collect();
        let answer = spec.answer(population, &maps, &partials);
        assert_eq!(answer["bounds"], "none: a user reducer");
        assert_eq!(answer["outputLines"], 5);
        assert_eq!(answer["truncated"], false);
        assert_eq!(answer["output"].as_array().unwrap().len(), 5);
        // Map-only: the maps' lines are the output, in map order.
        let none =
            AppSpec::parse("streaming", &["mapper=cat".into(), "reducer=NONE".into()]).unwrap();
        let split = Split {
            index: 0,
            bytes: 10,
        };
        let out = none.map_streamed(split, b"x\n", b"k\tv\nw\n", 1).unwrap();
        assert_eq!(out.stats.output, ["k\tv", "w"]);
        let answer = none.answer(
            Population { maps: 1, bytes: 10 },
            &[(split, out.stats)],
            &[],
        );
        assert_eq!(answer["output"], json!(["k\tv", "w"]));
        assert_eq!(answer["bounds"], "none: a user mapper");
    }

    #[test]
    fn streaming_params_are_checked_by_name() {
        use crate::apps::{AppError, AppSpec};
        assert!(matches!(
            AppSpec::parse("streaming", &[]),
            Err(AppError::MissingParam {
                param: "mapper=CMD",
                ..
            })
        ));
        assert!(matches!(
            AppSpec::parse("streaming", &["mapper= ".into()]),
            Err(AppError::EmptyParam {
                param: "mapper",
                ..
            })
        ));
        let env = AppSpec::parse(
            "streaming",
            &["mapper=cat".into(), "cmdenv=A=1\nB=x=y".into()],
        );
        assert!(matches!(env, Ok(AppSpec::Streaming { cmdenv, .. })
            if cmdenv == [("A".to_owned(), "1".to_owned()), ("B".to_owned(), "x=y".to_owned())]));
        assert!(AppSpec::parse("streaming", &["mapper=cat".into(), "cmdenv=oops".into()]).is_err());
    }

    #[test]
    fn output_is_capped_and_counted() {
        let many: Vec<u8> = (0..OUTPUT_CAP + 5)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let (kept, total) = output_lines(&many);
        assert_eq!((kept.len(), total), (OUTPUT_CAP, OUTPUT_CAP as u64 + 5));
        assert_eq!(kept[0], "0");
    }
}
