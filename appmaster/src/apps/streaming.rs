//! Hadoop Streaming's pure half: which lines a split owns (LineRecordReader's rule), the
//! mapper's lines read into keys and values (Hadoop's `-D` key settings, [`KeySettings`]) and
//! partitions (the hash of the key, or KeyFieldBasedPartitioner's fields of it), the
//! combiner's and reducer's input written as sorted, grouped lines, shipped files
//! ([`ShippedFile`]) checked, and the commands' output kept for the answer. The commands
//! themselves run in the task process (`yard-appmaster-live`'s `task/command.rs`): this
//! crate does no IO.
//!
//! **Malformed records.** Hadoop Streaming passes bytes; yard's shuffle keys are UTF-8 text
//! (the partition format, `records.rs`, stores and orders them as such) while values are any
//! bytes. So a key that is not valid UTF-8, from the mapper or the combiner, is a malformed
//! record and fails its task naming the command and the line, instead of being mended
//! (lossy) into another key. So is a combiner line whose key belongs to another reducer (a
//! combiner may not move records between partitions: it runs on one). A reducer's (or a
//! map-only mapper's) output is not shuffled: it is any bytes, shown lossily in the answer.

use std::borrow::Cow;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::hash::partition_of;
use super::records::Writer;
use super::text::{count_lines, lines};
use super::{AppError, MapStats};

/// Lines of command output an answer carries (and a map or reducer keeps for it); the rest
/// are counted, not kept, until output datasets (issue 31, item 3) hold them.
pub const OUTPUT_CAP: usize = 1000;

/// The most bytes a job's shipped files (`-file`) may hold together, before base64. They
/// travel inside the job, and the job in its master's environment, which Linux caps at
/// 128 KiB a string (base64 adds a third): scripts fit, data sets belong in `yard data put`.
pub const FILES_CAP: usize = 64 << 10;

/// Lines of a following block a map reads at most to finish its split's last line, in blocks
/// (`owned_lines`): a longer line fails the map saying so.
pub const LINE_BLOCKS_CAP: usize = 8;

/// The Hadoop `-D` keys a streaming job's `params` take, with what each means.
pub const KEY_PARAMS: [(&str, &str); 4] = [
    (
        "stream.map.output.field.separator",
        "the mapper's key/value separator (default TAB)",
    ),
    (
        "stream.num.map.output.key.fields",
        "how many separated fields make the key (default 1)",
    ),
    (
        "mapreduce.map.output.key.field.separator",
        "the separator KeyFieldBasedPartitioner splits the key by (default TAB)",
    ),
    (
        "mapreduce.partition.keypartitioner.options",
        "-kA[,B]: the key fields A to B pick the reducer (needs partitioner)",
    ),
];

/// The partitioner class Hadoop Streaming names with `-partitioner` that yard honours.
pub const KEY_FIELD_PARTITIONER: &str = "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner";

/// How a streaming job's mapper lines become keys and values and find their reducer:
/// Hadoop Streaming's `-D` settings of the same names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeySettings {
    /// `stream.map.output.field.separator`.
    pub separator: String,
    /// `stream.num.map.output.key.fields`: the key is the line up to this many separators.
    pub key_fields: u32,
    /// `mapreduce.map.output.key.field.separator`: the partitioner's field separator.
    pub key_field_separator: String,
    /// KeyFieldBasedPartitioner's `-kA,B` (1-based, inclusive): these fields of the key pick
    /// the reducer. `None`: the whole key does (Hadoop's HashPartitioner).
    pub partition_fields: Option<(u32, u32)>,
}

impl Default for KeySettings {
    fn default() -> KeySettings {
        KeySettings {
            separator: "\t".into(),
            key_fields: 1,
            key_field_separator: "\t".into(),
            partition_fields: None,
        }
    }
}

/// Where `sep` first occurs in `hay`: `memchr` for a one-byte separator (the TAB nearly
/// every job has), `memmem` for a longer one, not a byte-by-byte `windows` search: a line
/// without a TAB (every line a `cat` mapper writes) is searched to its end.
fn find(hay: &[u8], sep: &[u8]) -> Option<usize> {
    match sep {
        [b] => memchr::memchr(*b, hay),
        _ => memchr::memmem::find(hay, sep),
    }
}

/// The byte offset of the `n`th (1-based) `sep` in `line`, if it has that many.
fn nth(line: &[u8], sep: &[u8], n: u32) -> Option<usize> {
    let mut from = 0;
    for i in 1..=n {
        let at = from + find(&line[from..], sep)?;
        if i == n {
            return Some(at);
        }
        from = at + sep.len();
    }
    None
}

impl KeySettings {
    /// A mapper line as Hadoop's streaming reads it: the key up to the `key_fields`th
    /// separator, the value after it; a line with fewer is all key, with an empty value.
    pub fn key_value<'a>(&self, line: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        let sep = self.separator.as_bytes();
        match nth(line, sep, self.key_fields) {
            Some(i) => (&line[..i], &line[i + sep.len()..]),
            None => (line, &[]),
        }
    }

    /// The reducer of `key`: FNV-1a of the key, or of its fields `A..=B` under
    /// KeyFieldBasedPartitioner (fields past the key's last are empty, as in Hadoop).
    pub fn partition(&self, key: &[u8], reduces: u32) -> u32 {
        let Some((a, b)) = self.partition_fields else {
            return partition_of(key, reduces);
        };
        let sep = self.key_field_separator.as_bytes();
        let start = match a {
            1 => Some(0),
            _ => nth(key, sep, a - 1).map(|i| i + sep.len()),
        };
        let Some(start) = start else {
            return partition_of(b"", reduces);
        };
        let end = nth(key, sep, b).unwrap_or(key.len()).max(start);
        partition_of(&key[start..end], reduces)
    }

    /// The settings from a streaming job's `params` (`given`: key and value, by Hadoop's
    /// key), each checked; a `partitioner` param is the `-partitioner` class.
    pub(crate) fn parse(given: &[(&str, &str)]) -> Result<KeySettings, String> {
        let get = |key: &str| given.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let partitioner = get("partitioner");
        let mut k = KeySettings::default();
        let separator = |key: &str| match get(key) {
            Some("") => Err(format!(
                "{key} is empty: give the separator (one or more bytes)"
            )),
            found => Ok(found.map(str::to_owned)),
        };
        if let Some(s) = separator(KEY_PARAMS[0].0)? {
            k.separator = s;
        }
        if let Some(n) = get(KEY_PARAMS[1].0) {
            k.key_fields = n
                .parse()
                .ok()
                .filter(|&n| (1..=1000).contains(&n))
                .ok_or_else(|| {
                    format!(
                        "{}={n}: give a whole number from 1 to 1000",
                        KEY_PARAMS[1].0
                    )
                })?;
        }
        if let Some(s) = separator(KEY_PARAMS[2].0)? {
            k.key_field_separator = s;
        }
        let options = get(KEY_PARAMS[3].0);
        match (partitioner, options) {
            (None, None) => {}
            (Some(p), _) if !is_key_field_partitioner(p) => {
                return Err(format!(
                    "partitioner {p}: yard honours only {KEY_FIELD_PARTITIONER} (or none: the \
                     whole key's hash)"
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "{} needs -partitioner {KEY_FIELD_PARTITIONER}, as in Hadoop",
                    KEY_PARAMS[3].0
                ));
            }
            // Without options it partitions by the whole key, as the default does.
            (Some(_), None) => {}
            (Some(_), Some(o)) => k.partition_fields = Some(key_field_option(o)?),
        }
        Ok(k)
    }
}

fn is_key_field_partitioner(class: &str) -> bool {
    [
        KEY_FIELD_PARTITIONER,
        "org.apache.hadoop.mapreduce.lib.partition.KeyFieldBasedPartitioner",
        "KeyFieldBasedPartitioner",
    ]
    .contains(&class)
}

/// KeyFieldBasedPartitioner's options, `-kA[,B]` (field numbers; B defaults to the key's
/// end). Character positions (`-k1.2`) and flags (`n`, `r`) are refused by name.
fn key_field_option(option: &str) -> Result<(u32, u32), String> {
    let bad = |why: &str| {
        format!(
            "{}={option:?}: {why}; yard takes -kA or -kA,B (whole fields, 1-based)",
            KEY_PARAMS[3].0
        )
    };
    let spec = option
        .trim()
        .strip_prefix("-k")
        .ok_or_else(|| bad("not a -k option"))?;
    if spec.contains(|c: char| c == '.' || c.is_ascii_alphabetic()) {
        return Err(bad("character positions and flags are not honoured"));
    }
    let field = |s: &str| s.parse::<u32>().ok().filter(|&n| n >= 1);
    let (a, b) = match spec.split_once(',') {
        Some((a, b)) => (field(a), field(b)),
        None => (field(spec), Some(u32::MAX)),
    };
    match (a, b) {
        (Some(a), Some(b)) if a <= b => Ok((a, b)),
        _ => Err(bad("the fields are not numbers from 1 with A <= B")),
    }
}

/// A file shipped with a streaming job (`-file PATH`): placed in each task's working
/// directory under `name`, executable if it was where the job was submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShippedFile {
    /// The file's name in the task's working directory: a plain name, no `/`.
    pub name: String,
    /// Its bytes, base64 (RFC 4648, with padding).
    pub content_base64: String,
    /// Whether the task may run it as a command (`chmod +x`).
    #[serde(default)]
    pub executable: bool,
}

impl ShippedFile {
    /// A file of `bytes` named `name`.
    pub fn new(name: &str, bytes: &[u8], executable: bool) -> ShippedFile {
        ShippedFile {
            name: name.to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            executable,
        }
    }

    /// Its bytes; an error saying why for content that is not base64.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.content_base64)
            .map_err(|e| format!("{}: contentBase64 is not base64: {e}", self.name))
    }
}

/// Whether `name` may be a file's name in a task's working directory.
fn plain_file_name(name: &str) -> bool {
    (1..=255).contains(&name.len()) && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// Checks a job's shipped files: plain, distinct names, base64 content, at most
/// [`FILES_CAP`] bytes together. The error says what to fix.
pub fn check_files(files: &[ShippedFile]) -> Result<(), String> {
    let mut total = 0usize;
    for (i, f) in files.iter().enumerate() {
        if !plain_file_name(&f.name) {
            return Err(format!(
                "{:?}: a shipped file's name is a plain file name (no '/', 1 to 255 bytes)",
                f.name
            ));
        }
        if files[..i].iter().any(|g| g.name == f.name) {
            return Err(format!("{} is shipped twice", f.name));
        }
        total += f.bytes()?.len();
    }
    if total > FILES_CAP {
        return Err(format!(
            "the shipped files hold {total} bytes together; the cap is {FILES_CAP} bytes \
             (they travel in the job): put data in a dataset (`yard data put`) instead"
        ));
    }
    Ok(())
}

/// The bytes a split owns under Hadoop's LineRecordReader rule: a split other than its
/// input's first skips through its first `\n` (that line is the previous split's), and every
/// split reads on past its end through the first `\n` after it: the line that starts at or
/// before its end and finishes later. `block` is the split's bytes, `first` whether it is its
/// input's first, `after` the input after it (the following blocks) as far as known; at
/// least through its first `\n` ([`line_end`]), else to the input's end. A split that is
/// not first and holds no `\n` owns nothing: its bytes are all an earlier split's line.
pub fn owned_lines<'a>(block: &'a [u8], first: bool, after: &[u8]) -> Cow<'a, [u8]> {
    let from = if first {
        0
    } else {
        match line_end(block) {
            Some(i) => i + 1,
            None => return Cow::Borrowed(&[]),
        }
    };
    let own = &block[from..];
    let rest = line_end(after).map_or(after, |i| &after[..=i]);
    if rest.is_empty() {
        Cow::Borrowed(own)
    } else {
        Cow::Owned([own, rest].concat())
    }
}

/// Where the first line of `bytes` ends: the offset of its first `\n`.
pub fn line_end(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// A streaming output line as Hadoop reads it by default: the key up to the first tab, the
/// value after it; a line without a tab is all key, with an empty value.
pub fn key_value(line: &[u8]) -> (&[u8], &[u8]) {
    // Not through `KeySettings::default()`, which allocates its separators on every line.
    match memchr::memchr(b'\t', line) {
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

/// Runs a streaming job's combiner over partition `p`'s records (its stdin): its stdout,
/// or why it failed.
pub type Combine<'a> = dyn FnMut(u32, &[u8]) -> Result<Vec<u8>, String> + 'a;

/// One partition's records, `(key, value)`, sorted by key (stably: a key's values in the
/// order written).
pub type Records<'a> = Vec<(&'a str, &'a [u8])>;

/// A command's output lines read as records by `keys` into `reduces` partitions, each sorted
/// by key. `command` names the writer for a malformed line's error (see the module doc).
pub(crate) fn partitioned<'a>(
    command: &'static str,
    stdout: &'a [u8],
    keys: &KeySettings,
    reduces: u32,
) -> Result<Vec<Records<'a>>, AppError> {
    let mut parts: Vec<Vec<Headed<'a>>> = vec![Vec::new(); reduces as usize];
    for (i, line) in lines(stdout).enumerate() {
        let (k, v) = keys.key_value(line);
        let key = utf8_key(command, i, k)?;
        parts[keys.partition(k, reduces) as usize].push((head(k), key, v));
    }
    Ok(parts.into_iter().map(sorted).collect())
}

/// A record with its key's [`head`], which the sort compares first.
type Headed<'a> = (u64, &'a str, &'a [u8]);

/// A key's first eight bytes as one number, big-endian and zero-padded: for keys `a < b`,
/// `head(a) <= head(b)`, so heads that differ order their keys, and only equal heads need
/// the keys' bytes. Most comparisons of a sort then read no key from the command's output
/// (megabytes, far out of cache) nor call `memcmp`.
fn head(key: &[u8]) -> u64 {
    let mut eight = [0u8; 8];
    let n = key.len().min(8);
    eight[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(eight)
}

/// `records` sorted by key, stably (a key's values keep their order), heads first.
fn sorted(mut records: Vec<Headed<'_>>) -> Records<'_> {
    records.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    records.into_iter().map(|(_, k, v)| (k, v)).collect()
}

/// [`sorted`] of records without their heads.
fn sort_records<'a>(records: &[(&'a str, &'a [u8])]) -> Records<'a> {
    sorted(
        records
            .iter()
            .map(|&(k, v)| (head(k.as_bytes()), k, v))
            .collect(),
    )
}

/// A combiner's output for partition `p`, read as records (TAB and one key field, as a
/// reducer's output is read), sorted by key; a key that belongs to another partition is
/// malformed.
pub(crate) fn combined<'a>(
    stdout: &'a [u8],
    keys: &KeySettings,
    p: u32,
    reduces: u32,
) -> Result<Records<'a>, AppError> {
    let mut records = Vec::new();
    for (i, line) in lines(stdout).enumerate() {
        let (k, v) = key_value(line);
        let key = utf8_key("combiner", i, k)?;
        let home = keys.partition(k, reduces);
        if home != p {
            return Err(AppError::MalformedOutput {
                command: "combiner",
                line: i as u64 + 1,
                problem: format!(
                    "key {key:?} belongs to reducer {home}, not {p}, whose records the combiner \
                     was given: a combiner must keep its input's keys"
                ),
            });
        }
        records.push((head(k), key, v));
    }
    Ok(sorted(records))
}

fn utf8_key<'a>(command: &'static str, i: usize, key: &'a [u8]) -> Result<&'a str, AppError> {
    std::str::from_utf8(key).map_err(|e| AppError::MalformedOutput {
        command,
        line: i as u64 + 1,
        problem: format!(
            "its key is not valid UTF-8 (byte {} of it, {:?}): yard's shuffle keys are UTF-8 \
             text (values may be any bytes)",
            e.valid_up_to(),
            String::from_utf8_lossy(key)
        ),
    })
}

/// A map's stats and partitions from its records, one sorted [`Records`] per partition:
/// a key's values grouped into one record. Map-only (`map_only`): no records; `stdout`'s
/// lines are the map's output, kept in its stats.
pub(crate) fn map(
    input: &[u8],
    stdout: &[u8],
    parts: &[Records<'_>],
    map_only: bool,
    w: &mut Writer,
) -> MapStats {
    let mut stats = MapStats {
        lines: count_lines(input),
        ..MapStats::default()
    };
    if map_only {
        (stats.output, stats.output_lines) = output_lines(stdout);
        return stats;
    }
    let mut values: Vec<&[u8]> = Vec::new();
    for (p, pairs) in parts.iter().enumerate() {
        for (i, (key, value)) in pairs.iter().enumerate() {
            values.push(value);
            if pairs.get(i + 1).is_none_or(|(next, _)| next != key) {
                w.push_values_at(p as u32, key, &values);
                values.clear();
            }
        }
    }
    stats
}

/// The reducer's (or a combiner's) stdin from its records, `(key, value)` in any order:
/// sorted by key (stable, so a key's values keep their order), one `key<TAB>value` line
/// each, so equal keys are consecutive as Hadoop streams them.
pub fn reducer_input(records: Vec<(&str, &[u8])>) -> Vec<u8> {
    sorted_input(&records).0
}

/// [`reducer_input`], and how many distinct keys it holds.
pub(crate) fn sorted_input(records: &[(&str, &[u8])]) -> (Vec<u8>, u64) {
    let records = sort_records(records);
    let bytes = records.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    let mut out = Vec::with_capacity(bytes);
    let mut keys = 0;
    for (i, (key, value)) in records.iter().enumerate() {
        if i == 0 || records[i - 1].0 != *key {
            keys += 1;
        }
        out.extend_from_slice(key.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(value);
        out.push(b'\n');
    }
    (out, keys)
}

/// Where a reducer's stdin ([`reducer_input`]) may be cut so that every key the command
/// reads, it reads whole: offsets just past a line whose next line has another key, at
/// least `every` bytes apart, the input's end last. A reduce cut by the deadline guard
/// while its command runs stops feeding at the next of these and closes the command's
/// stdin, so the command answers (its `END`, its last group) for the keys it was given,
/// each with all of its values. Keys are compared up to the line's first TAB, as written;
/// a key with a TAB in it only makes a group longer, never splits one.
pub fn group_ends(input: &[u8], every: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let (mut from, mut last) = (0, 0);
    let mut previous: Option<&[u8]> = None;
    while from < input.len() {
        let end = line_end(&input[from..]).map_or(input.len(), |i| from + i + 1);
        let line = &input[from..end];
        let this = memchr::memchr(b'\t', line).map_or(line, |tab| &line[..tab]);
        if previous.is_some_and(|p| p != this) && from - last >= every.max(1) {
            ends.push(from);
            last = from;
        }
        previous = Some(this);
        from = end;
    }
    if ends.last() != Some(&input.len()) && !input.is_empty() {
        ends.push(input.len());
    }
    ends
}

/// The parts of a streaming job that decide what its tasks run, and so what they cost: the
/// job kind ([`kind`]) hashes them. Borrowed from the job's [`AppSpec`](super::AppSpec).
pub(crate) struct KindParts<'a> {
    pub mapper: &'a str,
    pub reducer: Option<&'a str>,
    pub combiner: Option<&'a str>,
    pub cmdenv: &'a [(String, String)],
    pub keys: &'a KeySettings,
    pub files: &'a [ShippedFile],
}

/// A streaming job's kind for the profile store (issue 31, item 4): `streaming:` and the
/// first 128 bits of SHA-256, in hex, over everything that changes what its tasks run:
///
/// - the mapper, reducer (`NONE` for map-only) and combiner commands, as given;
/// - the shipped files, each its name, execute bit and bytes, **ordered by name**: Hadoop
///   places `-file`/`-files` in the task's working directory by name (the distributed
///   cache is a set), so the order they were listed in changes nothing that runs;
/// - `-cmdenv`, as the environment the commands get (a later value of a name replaces an
///   earlier one, as the task applies them), ordered by name. Hashed because scripts take
///   their parameters there (a mode, a threshold, a sample rate), so a changed variable may
///   run another code path at another cost; a needless cold start costs one sampler run,
///   a wrong profile a missed deadline;
/// - the key settings (`-D` separators, key fields, KeyFieldBasedPartitioner's fields):
///   they change which records a reducer groups, so what the reducer's command reads.
///
/// Not hashed: the reduce count, which is the job's (`MapReduceJob::reduces`), not the
/// app's: [`AppSpec::job_kind`](super::AppSpec::job_kind) adds it to the kind in the clear,
/// and says why (the profile's partition size is per reducer). Every field is
/// length-prefixed, so no two different jobs encode alike. SHA-256 rather than
/// the shuffle's FNV-1a: the kind is chosen by whoever writes the script, and two scripts
/// sharing a profile by a crafted collision would forecast one from the other.
pub(crate) fn kind(parts: &KindParts<'_>) -> String {
    use sha2::{Digest, Sha256};
    fn field(h: &mut Sha256, bytes: &[u8]) {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let mut h = Sha256::new();
    field(&mut h, b"yard streaming kind 1");
    field(&mut h, parts.mapper.as_bytes());
    field(&mut h, parts.reducer.unwrap_or("NONE").as_bytes());
    // Present or not is part of it: `Some("")` cannot be given, but keep them apart anyway.
    match parts.combiner {
        Some(c) => field(&mut h, &[b"1", c.as_bytes()].concat()),
        None => field(&mut h, b"0"),
    }
    let env: std::collections::BTreeMap<&str, &str> = parts
        .cmdenv
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    field(&mut h, &(env.len() as u64).to_le_bytes());
    for (k, v) in env {
        field(&mut h, k.as_bytes());
        field(&mut h, v.as_bytes());
    }
    let k = parts.keys;
    field(&mut h, k.separator.as_bytes());
    field(&mut h, &k.key_fields.to_le_bytes());
    field(&mut h, k.key_field_separator.as_bytes());
    match k.partition_fields {
        Some((a, b)) => field(&mut h, &[a.to_le_bytes(), b.to_le_bytes()].concat()),
        None => field(&mut h, b""),
    }
    let mut files: Vec<&ShippedFile> = parts.files.iter().collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    field(&mut h, &(files.len() as u64).to_le_bytes());
    for f in files {
        field(&mut h, f.name.as_bytes());
        field(&mut h, &[u8::from(f.executable)]);
        // A checked job's files decode; one that does not is hashed as it came.
        match f.bytes() {
            Ok(bytes) => field(&mut h, &bytes),
            Err(_) => field(&mut h, f.content_base64.as_bytes()),
        }
    }
    format!("streaming:{}", hex128(&h.finalize()))
}

/// The first 128 bits of a SHA-256 digest, in hex: enough to keep kinds apart.
fn hex128(digest: &[u8]) -> String {
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// [`hex128`] of `bytes`' SHA-256 (a kind too long for the store, [`super::fit_kind`]).
pub(crate) fn sha256_hex128(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex128(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apps::{AppSpec, Population, Split};

    fn no_combiner(_: u32, _: &[u8]) -> Result<Vec<u8>, String> {
        unreachable!("no combiner")
    }

    /// Every split's owned lines, in split order, as the live maps read them: split `i`
    /// given the input after it.
    fn every_split(blocks: &[&[u8]]) -> Vec<u8> {
        let mut all = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let after: Vec<u8> = blocks[i + 1..].concat();
            all.extend_from_slice(&owned_lines(block, i == 0, &after));
        }
        all
    }

    #[test]
    fn a_line_belongs_to_the_split_where_it_starts() {
        // "one\ntwo\nthree\n" cut into blocks of 5: "one\nt" "wo\nth" "ree\n".
        let (a, b, c) = (&b"one\nt"[..], &b"wo\nth"[..], &b"ree\n"[..]);
        assert_eq!(&*owned_lines(a, true, b"wo\nthree\n"), b"one\ntwo\n");
        assert_eq!(&*owned_lines(b, false, c), b"three\n");
        assert_eq!(&*owned_lines(c, false, b""), b"");
        // A block ending with a line's end reads the next block's first line, which that
        // block skips (LineRecordReader reads a line starting at its end).
        assert_eq!(&*owned_lines(b"x\ny\n", true, b"z\nw\n"), b"x\ny\nz\n");
        assert_eq!(&*owned_lines(b"z\nw\n", false, b""), b"w\n");
        // No line starts in the block: it owns nothing.
        assert_eq!(&*owned_lines(b"long", false, b"er\nz\n"), b"");
        // The last block without a final newline keeps its last line.
        assert_eq!(&*owned_lines(b"a\nb", true, b""), b"a\nb");
        // A line longer than several blocks is the first's whole.
        assert_eq!(
            every_split(&[b"ab", b"cd", b"ef", b"\ng", b"h\n"]),
            b"abcdef\ngh\n"
        );
        assert_eq!(&*owned_lines(b"ab", true, b"cdef\ng"), b"abcdef\n");
        // Every line is owned exactly once, whatever the block size.
        let text = b"alpha\nbe\n\ngamma delta\ne\nlast";
        for size in 1..=text.len() {
            let blocks: Vec<&[u8]> = text.chunks(size).collect();
            assert_eq!(every_split(&blocks), text, "blocks of {size}");
        }
    }

    #[test]
    fn keys_end_at_the_first_tab() {
        assert_eq!(key_value(b"k\tv"), (&b"k"[..], &b"v"[..]));
        assert_eq!(key_value(b"k\tv\tw"), (&b"k"[..], &b"v\tw"[..]));
        assert_eq!(key_value(b"no tab"), (&b"no tab"[..], &b""[..]));
        assert_eq!(key_value(b"\tv"), (&b""[..], &b"v"[..]));
    }

    fn settings(params: &[(&str, &str)]) -> Result<KeySettings, String> {
        KeySettings::parse(params)
    }

    #[test]
    fn key_fields_and_their_separator_make_the_key_as_in_hadoop() {
        let k = settings(&[
            ("stream.map.output.field.separator", "."),
            ("stream.num.map.output.key.fields", "2"),
        ])
        .unwrap();
        assert_eq!(k.key_value(b"a.b.c.d"), (&b"a.b"[..], &b"c.d"[..]));
        // Fewer separators than key fields: all key.
        assert_eq!(k.key_value(b"a.b"), (&b"a.b"[..], &b""[..]));
        let multi = settings(&[("stream.map.output.field.separator", "::")]).unwrap();
        assert_eq!(multi.key_value(b"a::b::c"), (&b"a"[..], &b"b::c"[..]));
        for (bad, why) in [
            (("stream.num.map.output.key.fields", "0"), "1 to 1000"),
            (("stream.map.output.field.separator", ""), "empty"),
            (
                ("mapreduce.partition.keypartitioner.options", "-k1,1"),
                "needs -partitioner",
            ),
        ] {
            let err = settings(&[bad]).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        let p = |o: &str| {
            settings(&[
                ("partitioner", KEY_FIELD_PARTITIONER),
                ("mapreduce.partition.keypartitioner.options", o),
            ])
        };
        assert_eq!(p("-k1,1").unwrap().partition_fields, Some((1, 1)));
        assert_eq!(p("-k2").unwrap().partition_fields, Some((2, u32::MAX)));
        for bad in ["-k1.2,1", "-k1n", "-k2,1", "-k0", "k1", "-k"] {
            assert!(p(bad).is_err(), "{bad}");
        }
        let err = settings(&[("partitioner", "org.example.Mine")]).unwrap_err();
        assert!(err.contains("honours only"), "{err}");
    }

    #[test]
    fn key_field_partitioning_sends_keys_equal_in_their_fields_to_one_reducer() {
        let k = settings(&[
            ("stream.map.output.field.separator", "."),
            ("stream.num.map.output.key.fields", "2"),
            ("mapreduce.map.output.key.field.separator", "."),
            ("partitioner", KEY_FIELD_PARTITIONER),
            ("mapreduce.partition.keypartitioner.options", "-k1,1"),
        ])
        .unwrap();
        for reduces in [2, 3, 7] {
            let home = k.partition(b"user1", reduces);
            for key in [&b"user1.a"[..], b"user1.b", b"user1.zzz"] {
                assert_eq!(k.partition(key, reduces), home, "{key:?}");
            }
            assert_eq!(home, partition_of(b"user1", reduces));
        }
        // Fields 2..=2 of a one-field key: empty, as in Hadoop.
        let second = KeySettings {
            partition_fields: Some((2, 2)),
            key_field_separator: ".".into(),
            ..KeySettings::default()
        };
        assert_eq!(second.partition(b"a", 5), partition_of(b"", 5));
        assert_eq!(second.partition(b"a.b.c", 5), partition_of(b"b", 5));
    }

    #[test]
    fn the_reducer_sees_equal_keys_together() {
        let input = reducer_input(vec![("b", b"1"), ("a", b"2"), ("b", b"3"), ("a", b"")]);
        assert_eq!(input, b"a\t2\na\t\nb\t1\nb\t3\n");
    }

    fn streaming(params: &[&str]) -> AppSpec {
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        AppSpec::parse("streaming", &params).unwrap()
    }

    #[test]
    fn records_go_to_their_key_s_reducer_grouped_and_the_answer_says_no_bounds() {
        let spec = streaming(&["mapper=cat"]);
        assert!(
            matches!(&spec, AppSpec::Streaming { reducer: Some(r), combiner: None, .. } if r == "cat")
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
                let out = spec.map_streamed(split, b"in\n", stdout, 2, &mut no_combiner);
                (split, out.unwrap())
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
        // Map-only: no partitions at all, whatever the reduces asked; the maps' lines are the
        // output, in map order.
        let none = streaming(&["mapper=cat", "reducer=NONE"]);
        assert!(none.map_only() && !spec.map_only());
        let split = Split {
            index: 0,
            bytes: 10,
        };
        for reduces in [0, 3] {
            let out = none
                .map_streamed(split, b"x\n", b"k\tv\nw\n", reduces, &mut no_combiner)
                .unwrap();
            assert!(out.partitions.is_empty());
            assert_eq!(out.stats.output, ["k\tv", "w"]);
        }
        let out = none
            .map_streamed(split, b"x\n", b"k\tv\nw\n", 0, &mut no_combiner)
            .unwrap();
        let answer = none.answer(
            Population { maps: 1, bytes: 10 },
            &[(split, out.stats)],
            &[],
        );
        assert_eq!(answer["output"], json!(["k\tv", "w"]));
        assert_eq!(answer["bounds"], "none: a user mapper");
    }

    #[test]
    fn a_combiner_s_output_is_what_the_reduce_reads() {
        let spec = streaming(&["mapper=cat", "combiner=uniq -c"]);
        let split = Split {
            index: 0,
            bytes: 10,
        };
        let mut seen: Vec<(u32, String)> = Vec::new();
        // A combiner that sums each key's values: its input is each partition's records,
        // sorted, as a reducer's.
        let mut sum = |p: u32, stdin: &[u8]| {
            let text = String::from_utf8(stdin.to_vec()).unwrap();
            seen.push((p, text.clone()));
            let mut out = String::new();
            let mut counts: Vec<(String, u64)> = Vec::new();
            for line in text.lines() {
                let (k, v) = line.split_once('\t').unwrap();
                match counts.last_mut() {
                    Some((last, n)) if last == k => *n += v.parse::<u64>().unwrap(),
                    _ => counts.push((k.to_owned(), v.parse().unwrap())),
                }
            }
            for (k, n) in counts {
                out.push_str(&format!("{k}\t{n}\n"));
            }
            Ok(out.into_bytes())
        };
        let out = spec
            .map_streamed(split, b"", b"b\t1\na\t1\nb\t2\na\t5\n", 2, &mut sum)
            .unwrap();
        for (p, text) in &seen {
            for line in text.lines() {
                let key = line.split('\t').next().unwrap();
                assert_eq!(partition_of(key.as_bytes(), 2), *p, "{text}");
            }
        }
        assert_eq!(
            seen.iter().map(|(_, t)| t.lines().count()).sum::<usize>(),
            4
        );
        let population = Population { maps: 1, bytes: 10 };
        let mut read = Vec::new();
        for r in 0..2 {
            let (_, stdin) = spec
                .reducer_input(population, &[(split, &out.partitions[r])], &mut || false)
                .unwrap();
            read.extend(String::from_utf8(stdin).unwrap().lines().map(str::to_owned));
        }
        read.sort();
        assert_eq!(read, ["a\t6", "b\t3"]);

        // A combiner that moves a key to another reducer, or fails, fails the map.
        let mut moves = |_: u32, _: &[u8]| Ok(b"a\t1\nb\t1\n".to_vec());
        let err = spec
            .map_streamed(split, b"", b"a\t1\nb\t1\n", 2, &mut moves)
            .unwrap_err();
        assert!(
            err.to_string().contains("must keep its input's keys"),
            "{err}"
        );
        let mut fails = |_: u32, _: &[u8]| Err("the combiner `x` exited with code 1".to_owned());
        let err = spec
            .map_streamed(split, b"", b"a\t1\n", 2, &mut fails)
            .unwrap_err();
        assert_eq!(err.to_string(), "the combiner `x` exited with code 1");
        // No reducer, no combiner.
        let refused = AppSpec::parse(
            "streaming",
            &[
                "mapper=cat".into(),
                "reducer=NONE".into(),
                "combiner=cat".into(),
            ],
        );
        assert!(refused.is_err());
    }

    #[test]
    fn a_key_that_is_not_utf8_is_a_malformed_record_naming_the_line() {
        let spec = streaming(&["mapper=cat"]);
        let split = Split {
            index: 0,
            bytes: 10,
        };
        let err = spec
            .map_streamed(split, b"", b"ok\t1\n\xff\xfe\t2\n", 2, &mut no_combiner)
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("the mapper wrote a malformed record on its output line 2: its key is not valid UTF-8"),
            "{text}"
        );
        // Values may be any bytes.
        let out = spec
            .map_streamed(split, b"", b"k\t\xff\n", 2, &mut no_combiner)
            .unwrap();
        assert_eq!(out.stats.records, 1);
    }

    #[test]
    fn key_field_partitioning_reaches_the_reducer_and_its_check() {
        let spec = streaming(&[
            "mapper=cat",
            "stream.map.output.field.separator=.",
            "stream.num.map.output.key.fields=2",
            "mapreduce.map.output.key.field.separator=.",
            "partitioner=org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner",
            "mapreduce.partition.keypartitioner.options=-k1,1",
        ]);
        let split = Split {
            index: 0,
            bytes: 10,
        };
        let stdout: Vec<u8> = (0..40)
            .flat_map(|i| format!("u{}.s{i}.v\n", i % 4).into_bytes())
            .collect();
        let out = spec
            .map_streamed(split, b"", &stdout, 3, &mut no_combiner)
            .unwrap();
        let population = Population { maps: 1, bytes: 10 };
        let mut users: Vec<Vec<String>> = Vec::new();
        for r in 0..3 {
            let (_, stdin) = spec
                .reducer_input(population, &[(split, &out.partitions[r])], &mut || false)
                .unwrap();
            let text = String::from_utf8(stdin).unwrap();
            let mut here: Vec<String> = text
                .lines()
                .map(|l| l.split('.').next().unwrap().to_owned())
                .collect();
            // The key is two fields, the value the rest after the second separator.
            assert!(text.lines().all(|l| l.ends_with("\tv")), "{text}");
            here.dedup();
            users.push(here);
        }
        let mut all: Vec<String> = users.concat();
        all.sort();
        // Each user's keys in one reducer only.
        assert_eq!(all, ["u0", "u1", "u2", "u3"]);
    }

    #[test]
    fn streaming_params_are_checked_by_name() {
        use crate::apps::AppError;
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
        let err = AppSpec::parse(
            "streaming",
            &["mapper=cat".into(), "mapreduce.job.queuename=x".into()],
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("stream.num.map.output.key.fields"),
            "{err}"
        );
    }

    #[test]
    fn shipped_files_are_plain_distinct_and_capped() {
        let f = ShippedFile::new("m.py", b"print(1)\n", true);
        assert_eq!(f.bytes().unwrap(), b"print(1)\n");
        assert!(check_files(std::slice::from_ref(&f)).is_ok());
        assert!(
            check_files(&[f.clone(), f.clone()])
                .unwrap_err()
                .contains("twice")
        );
        for bad in ["", "a/b", "..", "."] {
            let err = check_files(&[ShippedFile::new(bad, b"", false)]).unwrap_err();
            assert!(err.contains("plain file name"), "{bad}: {err}");
        }
        let big = ShippedFile::new("big", &vec![0; FILES_CAP + 1], false);
        let err = check_files(&[big]).unwrap_err();
        assert!(
            err.contains(&format!("the cap is {FILES_CAP} bytes")),
            "{err}"
        );
        let garbled = ShippedFile {
            content_base64: "!!".into(),
            ..f
        };
        assert!(check_files(&[garbled]).unwrap_err().contains("not base64"));
    }

    /// One map's mapper output for the shuffle's property: `(key, value)` lines.
    type Written = Vec<(String, Vec<u8>)>;

    /// The shuffle of `maps` (each map's lines as written) into `reduces` reducers under
    /// `spec`: each reducer's stdin, as `(key, value)` lines in the order it reads them.
    fn shuffled(spec: &AppSpec, maps: &[Written], reduces: u32) -> Vec<Vec<(String, Vec<u8>)>> {
        let population = Population {
            maps: maps.len() as u32,
            bytes: 10 * maps.len() as u64,
        };
        let outs: Vec<(Split, Vec<Vec<u8>>)> = maps
            .iter()
            .enumerate()
            .map(|(i, lines)| {
                let stdout: Vec<u8> = lines
                    .iter()
                    .flat_map(|(k, v)| [k.as_bytes(), b"\t", v, b"\n"].concat())
                    .collect();
                let split = Split {
                    index: i as u32,
                    bytes: 10,
                };
                let out = spec
                    .map_streamed(split, b"", &stdout, reduces, &mut no_combiner)
                    .unwrap();
                (split, out.partitions)
            })
            .collect();
        (0..reduces as usize)
            .map(|r| {
                // In map order, as a reduce that keeps every partition folds them.
                let inputs: Vec<(Split, &[u8])> =
                    outs.iter().map(|(s, p)| (*s, p[r].as_slice())).collect();
                let (_, stdin) = spec
                    .reducer_input(population, &inputs, &mut || false)
                    .unwrap();
                lines(&stdin)
                    .map(|l| {
                        let (k, v) = key_value(l);
                        (String::from_utf8(k.to_vec()).unwrap(), v.to_vec())
                    })
                    .collect()
            })
            .collect()
    }

    proptest::proptest! {
        /// Item 7: whatever the maps write, every key reaches exactly one reducer (with
        /// KeyFieldBasedPartitioner, every key sharing its first field does), a reducer reads
        /// its keys sorted with equal keys together, and a key's values arrive all, in map
        /// order and within a map in the order written.
        #[test]
        fn the_shuffle_groups_each_key_in_one_reducer_in_order(
            maps in proptest::collection::vec(
                proptest::collection::vec(
                    ("[ab\u{e9}]{0,2}(\\.[xy]{0,2})?", proptest::collection::vec(
                        proptest::prelude::Strategy::prop_filter(
                            proptest::prelude::any::<u8>(),
                            // A line's end; a CR before it is dropped as Hadoop's LineReader
                            // drops it.
                            "one line",
                            |b: &u8| *b != b'\n' && *b != b'\r',
                        ),
                        0..4,
                    )),
                    0..12,
                ),
                1..5,
            ),
            reduces in 1u32..5,
            by_first_field in proptest::prelude::any::<bool>(),
        ) {
            let spec = if by_first_field {
                streaming(&[
                    "mapper=cat",
                    "mapreduce.map.output.key.field.separator=.",
                    &format!("partitioner={KEY_FIELD_PARTITIONER}"),
                    "mapreduce.partition.keypartitioner.options=-k1,1",
                ])
            } else {
                streaming(&["mapper=cat"])
            };
            let read = shuffled(&spec, &maps, reduces);
            let group = |k: &str| -> String {
                if by_first_field { k.split('.').next().unwrap().to_owned() } else { k.to_owned() }
            };
            let mut home: std::collections::HashMap<String, usize> = Default::default();
            for (r, lines) in read.iter().enumerate() {
                for pair in lines.windows(2) {
                    proptest::prop_assert!(pair[0].0 <= pair[1].0, "reducer {r} unsorted");
                }
                for (k, _) in lines {
                    let at = *home.entry(group(k)).or_insert(r);
                    proptest::prop_assert_eq!(at, r, "{:?} in two reducers", k);
                }
            }
            let mut want: std::collections::BTreeMap<String, Vec<Vec<u8>>> = Default::default();
            for lines in &maps {
                for (k, v) in lines {
                    want.entry(k.clone()).or_default().push(v.clone());
                }
            }
            let mut got: std::collections::BTreeMap<String, Vec<Vec<u8>>> = Default::default();
            for (k, v) in read.into_iter().flatten() {
                got.entry(k).or_default().push(v);
            }
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_reducer_s_input_is_cut_only_between_keys() {
        let input = reducer_input(vec![
            ("a", b"1"),
            ("b", b"2"),
            ("a", b"3"),
            ("c", b"4"),
            ("b", b"5"),
        ]);
        assert_eq!(input, b"a\t1\na\t3\nb\t2\nb\t5\nc\t4\n");
        // Every group boundary, then at least 8 bytes apart; the end always.
        assert_eq!(group_ends(&input, 1), [8, 16, 20]);
        assert_eq!(group_ends(&input, 9), [16, 20]);
        assert_eq!(group_ends(&input, 1000), [20]);
        for every in [0, 1, 5, 9, 100] {
            let ends = group_ends(&input, every);
            let mut from = 0;
            for &end in &ends {
                // Each piece holds whole keys: none of its keys is in the next.
                let piece = std::str::from_utf8(&input[from..end]).unwrap();
                let rest = std::str::from_utf8(&input[end..]).unwrap();
                for line in piece.lines() {
                    let key = line.split('\t').next().unwrap();
                    assert!(!rest.lines().any(|l| l.starts_with(&format!("{key}\t"))));
                }
                from = end;
            }
        }
        assert!(group_ends(b"", 1).is_empty());
        // A last line without its newline still ends the input.
        assert_eq!(group_ends(b"a\t1\nb", 1), [4, 5]);
    }

    /// `streaming(params)` with `files` shipped, as the master builds it from a job.
    fn shipping(params: &[&str], files: &[ShippedFile]) -> AppSpec {
        let mut spec = streaming(params);
        if let AppSpec::Streaming { files: f, .. } = &mut spec {
            *f = files.to_vec();
        }
        spec
    }

    #[test]
    fn a_kind_is_what_the_tasks_run_files_as_a_set() {
        let m = ShippedFile::new("m.py", b"print(1)\n", true);
        let words = ShippedFile::new("words.txt", b"a\nb\n", false);
        let base = ["mapper=python3 m.py", "reducer=uniq -c"];
        let kind = shipping(&base, &[m.clone(), words.clone()]).kind();
        assert!(kind.starts_with("streaming:"), "{kind}");
        assert_eq!(kind.len(), "streaming:".len() + 32, "{kind}");
        // The same everything: the same kind; the files in another order too (Hadoop puts
        // them in the working directory by name: a set).
        assert_eq!(shipping(&base, &[m.clone(), words.clone()]).kind(), kind);
        assert_eq!(shipping(&base, &[words.clone(), m.clone()]).kind(), kind);
        // A cmdenv given twice is the environment the commands get: the later value.
        let env = |e: &str| {
            shipping(
                &[base[0], base[1], &format!("cmdenv={e}")],
                std::slice::from_ref(&m),
            )
            .kind()
        };
        assert_eq!(env("A=1\nB=2"), env("B=2\nA=1"));
        assert_eq!(env("A=0\nA=1"), env("A=1"));
        // Anything else that changes what runs is another kind.
        let other_bytes = ShippedFile::new("m.py", b"print(2)\n", true);
        let renamed = ShippedFile::new("n.py", b"print(1)\n", true);
        let not_exec = ShippedFile::new("m.py", b"print(1)\n", false);
        // The base job with `extra` settings, shipping both files.
        let with = |extra: &[&str]| {
            let params: Vec<&str> = base.iter().chain(extra).copied().collect();
            shipping(&params, &[m.clone(), words.clone()]).kind()
        };
        let partitioner = format!("partitioner={KEY_FIELD_PARTITIONER}");
        let mut others = vec![
            shipping(&base, &[other_bytes, words.clone()]).kind(),
            shipping(&base, &[renamed, words.clone()]).kind(),
            shipping(&base, &[not_exec, words.clone()]).kind(),
            shipping(&base, std::slice::from_ref(&m)).kind(),
            shipping(&base, &[]).kind(),
            shipping(
                &["mapper=python3 m.py", "reducer=uniq"],
                &[m.clone(), words.clone()],
            )
            .kind(),
            shipping(
                &["mapper=python3 m.py", "reducer=NONE"],
                &[m.clone(), words.clone()],
            )
            .kind(),
            shipping(&["mapper=python3 m.py"], &[m.clone(), words.clone()]).kind(),
            with(&["combiner=uniq -c"]),
            env("A=1"),
            env("A=2"),
            env("A=1\nB=2"),
            with(&["stream.num.map.output.key.fields=2"]),
            with(&["stream.map.output.field.separator=,"]),
            with(&["mapreduce.map.output.key.field.separator=."]),
            with(&[
                &partitioner,
                "mapreduce.partition.keypartitioner.options=-k1,1",
            ]),
            with(&[
                &partitioner,
                "mapreduce.partition.keypartitioner.options=-k1,2",
            ]),
        ];
        others.push(kind);
        let distinct: std::collections::HashSet<&String> = others.iter().collect();
        assert_eq!(distinct.len(), others.len(), "{others:#?}");
        // Fields are length-prefixed: moving bytes between the mapper and the reducer is
        // another job, and another kind.
        assert_ne!(
            streaming(&["mapper=a b", "reducer=c"]).kind(),
            streaming(&["mapper=a", "reducer=b c"]).kind()
        );
    }

    /// A streaming job that reduces has its reduce count in its kind, in the clear (the
    /// profile's partition size is per reducer); a map-only job and a built-in one have not,
    /// so built-in kinds stay as the store has them.
    #[test]
    fn a_job_kind_has_the_reduce_count_of_a_streaming_job_that_reduces() {
        let job = streaming(&["mapper=cat", "reducer=uniq -c"]);
        let two = job.job_kind(2, &["books"]);
        assert_eq!(two, format!("{}:reduces=2@books", job.kind()));
        assert_ne!(job.job_kind(4, &["books"]), two);
        assert_eq!(
            job.job_kind(2, &["books"]),
            two,
            "the same run: the same kind"
        );
        let aggregate = streaming(&["mapper=cat", "reducer=aggregate"]);
        assert!(aggregate.job_kind(3, &["b"]).ends_with(":reduces=3@b"));
        let map_only = streaming(&["mapper=cat", "reducer=NONE"]);
        assert_eq!(
            map_only.job_kind(2, &["a", "b"]),
            format!("{}@a+b", map_only.kind())
        );
        assert_eq!(
            map_only.job_kind(4, &["a", "b"]),
            map_only.job_kind(2, &["a", "b"])
        );
        let wordcount = AppSpec::parse("wordcount", &[]).unwrap();
        assert_eq!(wordcount.job_kind(2, &["books"]), "wordcount@books");
        assert_eq!(wordcount.job_kind(7, &["books"]), "wordcount@books");
    }

    /// A kind over the store's limit (many long inputs, a long pattern) keeps its head and
    /// hashes the whole into its tail: the store takes it, the same job is the same kind,
    /// and a job differing past the head is another.
    #[test]
    fn a_kind_over_the_store_s_limit_keeps_its_head_and_hashes_the_rest() {
        let stored = |k: &str| {
            !k.is_empty()
                && k.chars().count() <= super::super::MAX_KIND_CHARS
                && !k.chars().any(char::is_control)
        };
        let wordcount = AppSpec::parse("wordcount", &[]).unwrap();
        // The most a job may name: 101 datasets of 200 characters.
        let names: Vec<String> = (0..101).map(|i| format!("{i:x>200}")).collect();
        let inputs: Vec<&str> = names.iter().map(String::as_str).collect();
        let kind = wordcount.job_kind(2, &inputs);
        assert!(stored(&kind), "{kind}");
        assert_eq!(kind.chars().count(), super::super::MAX_KIND_CHARS);
        assert!(kind.starts_with("wordcount@xxxx"), "{kind}");
        assert_eq!(wordcount.job_kind(2, &inputs), kind);
        let mut other = inputs.clone();
        other[100] = "another";
        assert_ne!(wordcount.job_kind(2, &other), kind);
        // At the limit a kind is as it was; one character over, it is fitted.
        let fits = "d".repeat(super::super::MAX_KIND_CHARS - "wordcount@".len());
        assert_eq!(wordcount.job_kind(2, &[&fits]), format!("wordcount@{fits}"));
        let over = format!("{fits}d");
        let fitted = wordcount.job_kind(2, &[&over]);
        assert!(stored(&fitted) && fitted.contains('~'), "{fitted}");
        // A streaming kind with its count, over many inputs: fitted too.
        let job = streaming(&["mapper=cat", "reducer=uniq"]);
        assert!(stored(&job.job_kind(3, &inputs)));
        assert!(job.job_kind(3, &inputs).starts_with("streaming:"));
        // A control character (a newline in a grep pattern) would be refused: fitted.
        let grep = AppSpec::parse("grep", &["pattern=a\nb".to_owned()]).unwrap();
        let kind = grep.job_kind(2, &["b"]);
        assert!(stored(&kind) && kind.starts_with("grep:a?b@b~"), "{kind}");
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

    /// The map's pure path as it was before issue 31's overhead work, kept as the oracle of
    /// the fast one: separators found by `windows`, keys sorted as `&str`s, stably.
    mod before {
        use super::super::{KeySettings, Records, lines, utf8_key};
        use crate::apps::AppError;

        fn nth(line: &[u8], sep: &[u8], n: u32) -> Option<usize> {
            let mut from = 0;
            for i in 1..=n {
                let at = from + line[from..].windows(sep.len()).position(|w| w == sep)?;
                if i == n {
                    return Some(at);
                }
                from = at + sep.len();
            }
            None
        }

        fn key_value<'a>(k: &KeySettings, line: &'a [u8]) -> (&'a [u8], &'a [u8]) {
            let sep = k.separator.as_bytes();
            match nth(line, sep, k.key_fields) {
                Some(i) => (&line[..i], &line[i + sep.len()..]),
                None => (line, &[]),
            }
        }

        pub(super) fn partitioned<'a>(
            stdout: &'a [u8],
            keys: &KeySettings,
            reduces: u32,
        ) -> Result<Vec<Records<'a>>, AppError> {
            let mut parts: Vec<Records<'a>> = vec![Vec::new(); reduces as usize];
            for (i, line) in lines(stdout).enumerate() {
                let (k, v) = key_value(keys, line);
                let key = utf8_key("mapper", i, k)?;
                // The partitioner itself was not changed: the old path called it.
                parts[keys.partition(k, reduces) as usize].push((key, v));
            }
            for part in &mut parts {
                part.sort_by(|a, b| a.0.cmp(b.0));
            }
            Ok(parts)
        }

        pub(super) fn reducer_input(mut records: Vec<(&str, &[u8])>) -> Vec<u8> {
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
    }

    proptest::proptest! {
        /// Issue 31's fast map path (`memchr` separators, keys sorted by their heads first)
        /// is the old one to the byte: the same records in the same partitions in the same
        /// order, the same partitions written, the same reducer input, the same error for a
        /// key that is not UTF-8; over keys that share heads, are shorter than eight bytes,
        /// hold NULs (a head's padding), CRs and the separators.
        #[test]
        fn the_fast_map_path_is_the_old_one_to_the_byte(
            lines in proptest::collection::vec("[ab\\t.:\\x00\\r\u{e9}]{0,12}", 0..40),
            poisoned in proptest::collection::vec(proptest::bool::weighted(0.02), 40),
            separator in proptest::sample::select(vec!["\t", ".", "::"]),
            key_fields in 1u32..4,
            field_separator in proptest::sample::select(vec!["\t", ".", "a:"]),
            fields in proptest::option::of((1u32..4, 0u32..3)),
            reduces in 1u32..5,
            last_newline in proptest::bool::ANY,
        ) {
            let keys = KeySettings {
                separator: separator.into(),
                key_fields,
                key_field_separator: field_separator.into(),
                partition_fields: fields.map(|(a, more)| (a, a + more)),
            };
            let mut stdout = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                stdout.extend_from_slice(line.as_bytes());
                if poisoned[i] {
                    // Not UTF-8: in a key, a malformed record; in a value, bytes.
                    stdout.push(0xff);
                }
                if i + 1 < lines.len() || last_newline {
                    stdout.push(b'\n');
                }
            }
            let old = before::partitioned(&stdout, &keys, reduces);
            let new = partitioned("mapper", &stdout, &keys, reduces);
            let (old, new) = match (old, new) {
                (Ok(old), Ok(new)) => (old, new),
                (Err(old), Err(new)) => {
                    proptest::prop_assert_eq!(old.to_string(), new.to_string());
                    return Ok(());
                }
                (old, new) => {
                    return Err(proptest::test_runner::TestCaseError::fail(format!(
                        "before {old:?}, now {new:?}"
                    )));
                }
            };
            proptest::prop_assert_eq!(&old, &new);
            let mut spec = streaming(&["mapper=cat"]);
            if let AppSpec::Streaming { keys: k, .. } = &mut spec {
                *k = keys.clone();
            }
            let split = Split { index: 3, bytes: 10 };
            let written = spec
                .map_streamed(split, b"in\n", &stdout, reduces, &mut no_combiner)
                .unwrap();
            let mut w = Writer::new(spec.tag(), split.index, reduces);
            map(b"in\n", &stdout, &old, false, &mut w);
            proptest::prop_assert_eq!(written.partitions, w.finish().0);
            // The records as a reducer gets them, in the order written (a key's values in
            // that order): the same stdin.
            let mut records: Vec<(&str, &[u8])> = Vec::new();
            for line in super::lines(&stdout) {
                let (k, v) = keys.key_value(line);
                records.push((std::str::from_utf8(k).unwrap(), v));
            }
            let (stdin, keys) = sorted_input(&records);
            let distinct: std::collections::BTreeSet<&str> = records.iter().map(|r| r.0).collect();
            proptest::prop_assert_eq!(keys, distinct.len() as u64);
            proptest::prop_assert_eq!(stdin, before::reducer_input(records));
        }
    }
}
