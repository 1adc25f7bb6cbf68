//! SWIM's job-level TSV (FB-2009, FB-2010): `job<N>`, submit s, gap s, input, shuffle and output
//! bytes, and in some files input and output paths. No header; every line has as many columns
//! as the first, which has 6 to 9:
//!
//! - 6: the byte columns only (the `FB-20xx_samples_24_times_1hr_0.tsv` files);
//! - 7: plus column 7, the input path (the traces README's `anonymized_input_path`);
//! - 8: plus column 8, the output path (`Additional_Workloads_Placeholder.tsv`);
//! - 9: the same 8 and a trailing empty field, as SWIM's `…_withInputPaths_0.tsv` files write
//!   each line (`…\t<input>\t<output>\t`). Column 9 must be empty: anything in it would be
//!   data yard does not know what to do with, and nothing is dropped silently.
//!
//! An empty path column (the output path often is) is `None`.
//!
//! The file has no tasks, so they are derived the way SWIM's replayer (`GenerateReplayScript`)
//! derives them: one map task per input block (at least one), and, for jobs that shuffle,
//! `round((shuffle + output) / reduce_bytes)` reduce tasks (at least one) sharing the shuffle
//! bytes evenly. Durations are not in the trace and stay `None`.

use crate::error::{Position, TraceError, expected};
use crate::{Format, Job, ReadOptions, Task, TaskGroup, Workload};

const COLUMNS: [&str; 9] = [
    "new_unique_job_id",
    "submit_time_seconds",
    "inter_job_submit_gap_seconds",
    "map_input_bytes",
    "shuffle_bytes",
    "reduce_output_bytes",
    "anonymized_input_path",
    "anonymized_output_path",
    "trailing empty field",
];

/// The column counts a first line may have (see the module docs).
const WIDTHS: std::ops::RangeInclusive<usize> = 6..=9;

pub(crate) fn parse(
    file: &str,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Workload, TraceError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .has_headers(false)
        .flexible(true)
        .quoting(false)
        .from_reader(bytes);
    let mut workload = Workload::new(Format::Swim);
    // One job a line: sizing the vector once saves copying it as it grows.
    workload
        .jobs
        .reserve(bytes.iter().filter(|&&b| b == b'\n').count() + 1);
    let mut record = csv::ByteRecord::new();
    let mut width = None;
    // csv's own line numbers miss blank lines and CRLF ends, and the byte where it says a
    // record begins is where the previous one ended, before any line ends between them; so
    // lines are counted here, from the record's first byte that is not a line end.
    let mut lines = Lines::default();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = lines.of(bytes, reader.position().byte());
                return Err(TraceError::new(file, Position::Line(line), e.to_string()));
            }
        }
        let line = lines.of(bytes, record.position().map_or(0, |p| p.byte()));
        if record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace) {
            continue; // a blank line carries no job
        }
        let columns = record.len();
        let want = *width.get_or_insert(columns);
        if !WIDTHS.contains(&columns) || columns != want {
            let what = if want == columns {
                "6 to 9 tab-separated columns".to_owned()
            } else {
                format!("{want} tab-separated columns like the first line")
            };
            return Err(TraceError::new(
                file,
                Position::Line(line),
                format!("expected {what}, found {columns}"),
            ));
        }
        let job = read_job(&record, options).map_err(|(column, problem)| {
            TraceError::new(file, Position::Line(line), problem).field(format!(
                "column {} ({})",
                column + 1,
                COLUMNS[column]
            ))
        })?;
        workload.jobs.push(job);
    }
    Ok(workload)
}

/// 1-based line numbers of byte offsets that only grow, in time linear in the file.
#[derive(Default)]
struct Lines {
    offset: usize,
    newlines: u64,
}

impl Lines {
    /// The line of the first byte at or after `offset` that is not `\r` or `\n`.
    fn of(&mut self, bytes: &[u8], offset: u64) -> u64 {
        let offset = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let offset = bytes[offset..]
            .iter()
            .position(|b| !matches!(b, b'\r' | b'\n'))
            .map_or(bytes.len(), |skip| offset + skip);
        if offset < self.offset {
            *self = Lines::default(); // never happens; correct all the same
        }
        let newlines = bytes[self.offset..offset].iter().filter(|&&b| b == b'\n');
        self.newlines += newlines.count() as u64;
        self.offset = offset;
        self.newlines + 1
    }
}

/// One line → one job; errors carry the 0-based column and the problem.
fn read_job(record: &csv::ByteRecord, options: &ReadOptions) -> Result<Job, (usize, String)> {
    let id = &record[0];
    if id.is_empty() {
        return Err((
            0,
            "expected a job id such as `job0`, found an empty column".into(),
        ));
    }
    let submit_s = integer(record, 1)?;
    integer(record, 2)?; // the gap is column 2 minus the previous line's; column 2 is the truth
    let input = integer(record, 3)?;
    let shuffle = integer(record, 4)?;
    let output = integer(record, 5)?;
    let submit_ms = (submit_s as i64)
        .checked_mul(1000)
        .ok_or((1, format!("{submit_s} seconds is too large a submit time")))?;
    // A path column that is absent or empty is no path.
    let text = |i: usize| {
        record
            .get(i)
            .filter(|raw| !raw.is_empty())
            .map(|raw| String::from_utf8_lossy(raw).into_owned())
    };
    if let Some(extra) = record.get(8).filter(|raw| !raw.is_empty()) {
        return Err((8, expected("an empty column", extra)));
    }
    Ok(Job {
        id: String::from_utf8_lossy(id).into_owned(),
        submit_ms,
        maps: map_tasks(input, options.block_bytes),
        reduces: reduce_tasks(shuffle, output, options.reduce_bytes),
        shuffle_bytes: Some(shuffle),
        output_bytes: Some(output),
        input_path: text(6),
        output_path: text(7),
        ..Job::default()
    })
}

/// A non-negative decimal integer that fits in i64 (so it also fits a millisecond clock).
fn integer(record: &csv::ByteRecord, column: usize) -> Result<u64, (usize, String)> {
    let raw = &record[column];
    let value = (!raw.is_empty())
        .then_some(0i64)
        .and_then(|start| {
            raw.iter().try_fold(start, |v, &b| {
                let digit = b.wrapping_sub(b'0');
                (digit < 10).then_some(())?;
                v.checked_mul(10)?.checked_add(i64::from(digit))
            })
        })
        .ok_or_else(|| (column, expected("a non-negative integer", raw)))?;
    Ok(value as u64)
}

/// One map per block, at least one: SWIM raises an empty input to one block's worth of work;
/// we keep the recorded 0 bytes and let the consumer decide what an empty split costs.
fn map_tasks(input: u64, block: u64) -> Vec<TaskGroup> {
    if input == 0 {
        return vec![TaskGroup::one(sized(0))];
    }
    // Full blocks and one partial tail block.
    groups([
        (input / block, block),
        (u64::from(input % block > 0), input % block),
    ])
}

/// `round((shuffle + output) / per_reduce)` reduces, at least one, when the job shuffles.
/// SWIM's own parser moves map-only jobs' bytes to the output column and writes 0 shuffle,
/// so 0 shuffle bytes means a map-only job.
fn reduce_tasks(shuffle: u64, output: u64, per_reduce: u64) -> Vec<TaskGroup> {
    if shuffle == 0 {
        return Vec::new();
    }
    let total = shuffle as u128 + output as u128;
    let per = per_reduce as u128;
    let count = ((total + per / 2) / per).clamp(1, u64::MAX as u128) as u64;
    shares(shuffle, count)
}

/// `total` bytes shared evenly by `count` tasks, the first `total % count` one byte more.
fn shares(total: u64, count: u64) -> Vec<TaskGroup> {
    let (base, extra) = (total / count, total % count);
    groups([(extra, base + 1), (count - extra, base)])
}

/// `(count, bytes)` pairs as task groups, empty ones dropped. Sized exactly: on a day of
/// FB-2010 this is a fifth of the parse time.
fn groups(pairs: [(u64, u64); 2]) -> Vec<TaskGroup> {
    let mut groups = Vec::with_capacity(pairs.iter().filter(|p| p.0 > 0).count());
    for (count, bytes) in pairs {
        if count > 0 {
            groups.push(TaskGroup {
                count,
                task: sized(bytes),
            });
        }
    }
    groups
}

fn sized(bytes: u64) -> Task {
    Task {
        bytes: Some(bytes),
        ..Task::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB64: u64 = 64 << 20;

    fn read(text: &str) -> Result<Workload, TraceError> {
        parse("t.tsv", text.as_bytes(), &ReadOptions::default())
    }

    #[test]
    fn a_line_becomes_a_job_with_block_maps_and_swim_reduces() {
        let w = read("job0\t49\t49\t201326593\t100\t134217628\n").unwrap();
        let job = &w.jobs[0];
        assert_eq!((job.id.as_str(), job.submit_ms), ("job0", 49_000));
        // 3 full blocks and a 1-byte tail.
        assert_eq!(job.map_count(), 4);
        assert_eq!(job.input_bytes(), 201_326_593);
        assert_eq!(job.map_tasks().last().unwrap().bytes, Some(1));
        // (100 + 134217628) / 64 MiB = 2.0000…: two reduces of 50 shuffle bytes.
        assert_eq!(job.reduce_count(), 2);
        assert!(job.reduce_tasks().all(|t| t.bytes == Some(50)));
        assert_eq!(job.output_bytes, Some(134_217_628));
        assert!(job.map_tasks().all(|t| t.duration_ms.is_none()));
    }

    #[test]
    fn zero_input_is_one_empty_map_and_zero_shuffle_is_map_only() {
        let w = read("job0\t1\t1\t0\t0\t99\n").unwrap();
        assert_eq!(w.jobs[0].map_count(), 1);
        assert_eq!(w.jobs[0].input_bytes(), 0);
        assert_eq!(w.jobs[0].reduce_count(), 0);
    }

    #[test]
    fn a_small_shuffle_still_gets_one_reduce_and_bytes_are_conserved() {
        let w = read("job0\t1\t1\t10\t7\t0\n").unwrap();
        assert_eq!(w.jobs[0].reduce_count(), 1);
        let groups = shares(10, 3);
        let sizes: Vec<_> = groups
            .iter()
            .map(|g| (g.count, g.task.bytes.unwrap()))
            .collect();
        assert_eq!(sizes, vec![(1, 4), (2, 3)]);
    }

    #[test]
    fn block_size_is_an_option() {
        let opts = ReadOptions {
            block_bytes: 10,
            ..ReadOptions::default()
        };
        let w = parse("t", b"job0\t1\t1\t25\t0\t0\n", &opts).unwrap();
        assert_eq!(w.jobs[0].map_count(), 3);
        assert_eq!(MIB64, ReadOptions::default().block_bytes);
    }

    #[test]
    fn eight_columns_carry_paths_and_blank_lines_are_skipped() {
        let w =
            read("job0\t9\t9\t1\t0\t0\tinputPath1\toutputPath1\n\njob1\t10\t1\t1\t0\t0\ti2\to2\n")
                .unwrap();
        assert_eq!(w.jobs.len(), 2);
        assert_eq!(w.jobs[1].input_path.as_deref(), Some("i2"));
        assert_eq!(w.jobs[0].output_path.as_deref(), Some("outputPath1"));
    }

    #[test]
    fn nine_fields_with_input_paths_an_empty_output_and_a_trailing_tab_are_read() {
        // The shape of SWIM's `FB-2010_samples_24_times_1hr_withInputPaths_0.tsv` lines.
        let w = read(concat!(
            "job0\t9\t9\t1762\t0\t14347\t/user/hive/warehouse/a\t\t\n",
            "job1\t18\t9\t970\t609\t697\t/user/hive/warehouse/a\toutputPath2\t\n",
            "job2\t20\t2\t5\t0\t0\t\t\t\n",
        ))
        .unwrap();
        assert_eq!(w.jobs.len(), 3);
        let (j0, j1, j2) = (&w.jobs[0], &w.jobs[1], &w.jobs[2]);
        assert_eq!((j0.id.as_str(), j0.submit_ms), ("job0", 9_000));
        assert_eq!(j0.input_bytes(), 1762);
        assert_eq!(j0.output_bytes, Some(14_347));
        assert_eq!(j0.input_path.as_deref(), Some("/user/hive/warehouse/a"));
        assert_eq!(j0.output_path, None, "an empty output path is None");
        assert_eq!(j1.input_path, j0.input_path);
        assert_eq!(j1.output_path.as_deref(), Some("outputPath2"));
        assert_eq!(
            (j2.input_path.clone(), j2.output_path.clone()),
            (None, None)
        );
    }

    #[test]
    fn seven_columns_are_an_input_path_only() {
        let w = read("job0\t1\t1\t5\t0\t0\tinputPath1\njob1\t2\t1\t5\t0\t0\t\n").unwrap();
        assert_eq!(w.jobs[0].input_path.as_deref(), Some("inputPath1"));
        assert_eq!(w.jobs[0].output_path, None);
        assert_eq!(w.jobs[1].input_path, None, "an empty input path is None");
    }

    #[test]
    fn a_ninth_column_must_be_empty_and_ten_are_too_many() {
        let e = read("job0\t1\t1\t5\t0\t0\ti\to\t\njob1\t2\t1\t5\t0\t0\ti\to\tx\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.tsv:2: field `column 9 (trailing empty field)`: expected an empty column, found \"x\""
        );
        let e = read("job0\t1\t1\t5\t0\t0\ti\to\t\t\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.tsv:1: expected 6 to 9 tab-separated columns, found 10"
        );
    }

    #[test]
    fn mixed_column_counts_are_an_error_naming_the_line() {
        let nine = "job0\t1\t1\t5\t0\t0\ti\t\t\n";
        for (other, found) in [
            ("job1\t2\t1\t5\t0\t0\n", 6),
            ("job1\t2\t1\t5\t0\t0\ti\n", 7),
            ("job1\t2\t1\t5\t0\t0\ti\to\n", 8),
        ] {
            let e = read(&format!("{nine}\n{other}")).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "t.tsv:3: expected 9 tab-separated columns like the first line, found {found}"
                )
            );
        }
        let e = read(&format!("job0\t1\t1\t5\t0\t0\ti\to\n{nine}")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.tsv:2: expected 8 tab-separated columns like the first line, found 9"
        );
    }

    #[test]
    fn errors_name_line_column_and_what_was_expected() {
        let e = read("job0\t1\t1\t5\t0\t0\njob1\t2\t1\tx5\t0\t0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.tsv:2: field `column 4 (map_input_bytes)`: expected a non-negative integer, found \"x5\""
        );
        let e = read("job0\t1\t1\t5\t0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.tsv:1: expected 6 to 9 tab-separated columns, found 5"
        );
        let e = read("job0\t1\t1\t5\t0\t0\njob1\t1\t1\t5\t0\t0\ta\tb\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("6 tab-separated columns like the first line"),
            "{e}"
        );
        let e = read("job0\t-1\t1\t5\t0\t0\n").unwrap_err();
        assert_eq!(e.at, Position::Line(1));
        assert!(read("job0\t99999999999999999999\t1\t5\t0\t0\n").is_err());
        assert!(
            read("job0\t9223372036854776\t1\t5\t0\t0\n").is_err(),
            "ms overflow"
        );
        assert!(read("\t1\t1\t5\t0\t0\n").is_err());
    }

    #[test]
    fn error_lines_count_blank_lines_and_crlf_ends() {
        for (text, line) in [
            ("job0\t1\t1\t5\t0\t0\n\njob1\t2\t1\tx\t0\t0\n", 3),
            ("job0\t1\t1\t5\t0\t0\n\n\n\njob1\t2\t1\tx\t0\t0\n", 5),
            ("job0\t1\t1\t5\t0\t0\r\njob1\t2\t1\tx\t0\t0\r\n", 2),
            ("job0\t1\t1\t5\t0\t0\r\n\r\njob1\t2\t1\tx\t0\t0\n", 3),
            ("\n\njob1\t2\t1\tx\t0\t0\n", 3),
        ] {
            assert_eq!(read(text).unwrap_err().at, Position::Line(line), "{text:?}");
        }
    }

    #[test]
    fn crlf_line_ends_are_read() {
        let w = read("job0\t1\t1\t5\t0\t0\r\njob1\t2\t1\t5\t0\t0\r\n").unwrap();
        assert_eq!(w.jobs.len(), 2);
        assert_eq!(w.jobs[1].output_bytes, Some(0));
    }
}
