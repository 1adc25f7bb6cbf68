//! A built-in application's output part (`-output`): the reducer's keys, sorted, one
//! `key<TAB>count` line each, as Hadoop's word count writes its `part-r-NNNNN` (for grep, the
//! matching lines; for topk and index, every key the reducer holds, not only its top: the
//! answer keeps the top). The counts are those *read*: when Dart reads part of the input, the
//! part is of that part, and the answer's `processedFraction` says how much (the answer's
//! estimates scale; a dataset of raw counts does not pretend to).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::records::Reader;
use super::{AppError, Split};

/// The part of a reducer that folded `inputs` (the partitions it kept, in any order): every
/// key with the sum of its counts, in byte order of the keys.
pub fn part_lines(inputs: &[(Split, &[u8])]) -> Result<Vec<u8>, AppError> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for &(split, bytes) in inputs {
        let malformed = |error| AppError::Malformed {
            map: split.index,
            error,
        };
        let mut reader = Reader::new(bytes).map_err(malformed)?;
        while let Some(rec) = reader.next_record().map_err(malformed)? {
            let sum = counts.entry(rec.key).or_default();
            *sum = sum.saturating_add(rec.count);
        }
    }
    let mut out = String::new();
    for (key, count) in counts {
        let _ = writeln!(out, "{key}\t{count}");
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::AppSpec;
    use super::*;

    #[test]
    fn a_word_counts_part_is_its_keys_sorted_with_their_summed_counts() {
        let spec = AppSpec::parse("wordcount", &[]).unwrap();
        let splits = [b"b a b\n".as_slice(), b"a c\nb\n".as_slice()];
        let outputs: Vec<_> = splits
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let split = Split {
                    index: i as u32,
                    bytes: text.len() as u64,
                };
                (
                    split,
                    spec.map(split, text, 1).unwrap().partitions.remove(0),
                )
            })
            .collect();
        let inputs: Vec<(Split, &[u8])> = outputs.iter().map(|(s, b)| (*s, b.as_slice())).collect();
        assert_eq!(part_lines(&inputs).unwrap(), b"a\t2\nb\t3\nc\t1\n");
        // The same keys whatever order the partitions come in; only those given count.
        let reversed: Vec<_> = inputs.iter().rev().copied().collect();
        assert_eq!(part_lines(&reversed).unwrap(), b"a\t2\nb\t3\nc\t1\n");
        assert_eq!(part_lines(&inputs[1..]).unwrap(), b"a\t1\nb\t1\nc\t1\n");
    }

    #[test]
    fn a_damaged_partition_is_an_error_naming_its_map() {
        let split = Split { index: 3, bytes: 1 };
        let e = part_lines(&[(split, b"garbage".as_slice())]).unwrap_err();
        assert!(matches!(e, AppError::Malformed { map: 3, .. }), "{e}");
    }
}
