//! The map output (partition) format, shared by every built-in app.
//!
//! A partition is an 18-byte header, then records, keys strictly increasing (bytewise, so
//! also as UTF-8 strings), then a 4-byte trailer:
//!
//! ```text
//! header  "yard" | version 2 (u8) | app tag (u8) | partition (u32 LE) | reduces (u32 LE) | map (u32 LE)
//! record  key length (varint) | key (UTF-8) | count (varint, ≥ 1) | index only: count line numbers
//!         | streaming only: count values, each length (varint) | bytes
//! trailer CRC-32 (IEEE, u32 LE) of the header and the records
//! ```
//!
//! Varints are unsigned LEB128 (at most 10 bytes). The app tags are 1 wordcount, 2 grep,
//! 3 topk, 4 index, 5 synthetic, 6 streaming. A key is in partition `partition_of(key, reduces)` (FNV-1a;
//! synthetic filler is spread evenly instead). Index postings are the 1-based line numbers
//! within the map's split where the term occurs, ascending: the first as is, the rest as
//! deltas (≥ 1). Streaming values are a key's values in the order its mapper wrote them. The header repeats what the reducer is told (which map, which partition) so
//! a misrouted or mixed-up partition is an error, not a wrong answer. The trailer is checked
//! before any record is read, so a partition damaged on a disk or on the wire is an error that
//! names it, not records that read wrong. Partitions never outlive their job, so the reader
//! refuses other versions (version 1 had no trailer) instead of reading them.

use thiserror::Error;

use super::hash::partition_of;

/// Bytes before the first record.
pub(crate) const HEADER_LEN: usize = 18;
/// Bytes after the last record: the CRC-32.
pub(crate) const TRAILER_LEN: usize = 4;
const MAGIC: &[u8; 4] = b"yard";
const VERSION: u8 = 2;
/// App names by tag − 1.
pub(crate) const APPS: [&str; 6] = [
    "wordcount",
    "grep",
    "topk",
    "index",
    "synthetic",
    "streaming",
];
/// The tag of the app that carries postings.
pub(crate) const INDEX_TAG: u8 = 4;
pub(crate) const SYNTHETIC_TAG: u8 = 5;
/// The tag of the app whose records carry values (Hadoop Streaming's).
pub(crate) const STREAMING_TAG: u8 = 6;

/// What is wrong with a partition, and where.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("byte {offset}: {problem}")]
pub struct RecordError {
    /// Offset into the partition.
    pub offset: usize,
    pub problem: String,
}

fn bad(offset: usize, problem: impl Into<String>) -> RecordError {
    RecordError {
        offset,
        problem: problem.into(),
    }
}

/// A partition's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The app's name (`AppSpec::name`).
    pub app: &'static str,
    pub(crate) tag: u8,
    /// Which reducer this partition is for, `0..reduces`.
    pub partition: u32,
    pub reduces: u32,
    /// The map (split index) that wrote it.
    pub map: u32,
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Values as a record holds them: their count, then each one's length and bytes.
fn put_values(out: &mut Vec<u8>, values: &[&[u8]]) {
    put_varint(out, values.len() as u64);
    for v in values {
        put_varint(out, v.len() as u64);
        out.extend_from_slice(v);
    }
}

/// Builds one map's partitions.
pub(crate) struct Writer {
    parts: Vec<Vec<u8>>,
    reduces: u32,
    records: u64,
}

impl Writer {
    pub fn new(tag: u8, map: u32, reduces: u32) -> Writer {
        let parts = (0..reduces)
            .map(|p| {
                let mut h = Vec::with_capacity(HEADER_LEN);
                h.extend_from_slice(MAGIC);
                h.push(VERSION);
                h.push(tag);
                h.extend_from_slice(&p.to_le_bytes());
                h.extend_from_slice(&reduces.to_le_bytes());
                h.extend_from_slice(&map.to_le_bytes());
                h
            })
            .collect();
        Writer {
            parts,
            reduces,
            records: 0,
        }
    }

    /// The partition buffer `key` hashes to, counted as one more record. Callers append keys
    /// in ascending order.
    fn part_for(&mut self, key: &str) -> &mut Vec<u8> {
        let p = partition_of(key.as_bytes(), self.reduces) as usize;
        self.records += 1;
        let out = &mut self.parts[p];
        put_varint(out, key.len() as u64);
        out.extend_from_slice(key.as_bytes());
        out
    }

    /// A counted key.
    pub fn push(&mut self, key: &str, count: u64) {
        put_varint(self.part_for(key), count);
    }

    /// An index term and its 1-based line numbers, ascending and distinct.
    pub fn push_postings(&mut self, key: &str, lines: &[u32]) {
        let out = self.part_for(key);
        put_varint(out, lines.len() as u64);
        let mut prev = 0;
        for &l in lines {
            put_varint(out, u64::from(l - prev));
            prev = l;
        }
    }

    /// A streaming key and its values in partition `p` (its partitioner's choice, which
    /// may not be the key's hash). Callers append a partition's keys in ascending order.
    pub fn push_values_at(&mut self, p: u32, key: &str, values: &[&[u8]]) {
        self.records += 1;
        let out = &mut self.parts[p as usize];
        put_varint(out, key.len() as u64);
        out.extend_from_slice(key.as_bytes());
        put_values(out, values);
    }

    /// A key and its values in the partition its hash picks (`-reducer aggregate`'s keys).
    pub fn push_values(&mut self, key: &str, values: &[&[u8]]) {
        put_values(self.part_for(key), values);
    }

    /// The partition buffers (for synthetic filler, which is not hashed).
    pub fn parts_mut(&mut self) -> &mut [Vec<u8>] {
        &mut self.parts
    }

    pub fn add_records(&mut self, n: u64) {
        self.records += n;
    }

    /// The partitions, each sealed with its CRC-32 trailer, the records written, and their
    /// bytes (headers and trailers included).
    pub fn finish(mut self) -> (Vec<Vec<u8>>, u64, u64) {
        for part in &mut self.parts {
            let crc = crc32fast::hash(part);
            part.extend_from_slice(&crc.to_le_bytes());
        }
        let bytes = self.parts.iter().map(|p| p.len() as u64).sum();
        (self.parts, self.records, bytes)
    }
}

/// Rewrites the CRC-32 trailer of a partition edited in place, so that it matches the header
/// and records again. For tests that build malformed partitions on purpose, to reach the
/// checks behind the checksum; a partition shorter than its trailer is left as it is.
pub fn reseal(partition: &mut [u8]) {
    if let Some(body) = partition.len().checked_sub(TRAILER_LEN) {
        let crc = crc32fast::hash(&partition[..body]);
        partition[body..].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Reads and checks a partition.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    header: Header,
    prev: Option<&'a [u8]>,
}

/// One record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub key: &'a str,
    /// The key's count in the map's split (for index: its number of postings; for
    /// streaming: its number of values).
    pub count: u64,
    postings: &'a [u8],
}

impl<'a> Record<'a> {
    /// Index postings: the 1-based line numbers within the split, ascending (empty for the
    /// other apps).
    pub fn lines(&self) -> impl Iterator<Item = u32> + 'a {
        let mut r = Cursor {
            buf: self.postings,
            pos: 0,
        };
        let mut line = 0u32;
        std::iter::from_fn(move || {
            let d = r.varint().ok()?;
            line = line.checked_add(u32::try_from(d).ok()?)?;
            Some(line)
        })
    }

    /// Streaming values, in the order the mapper wrote them (empty for the other apps).
    pub fn values(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let mut r = Cursor {
            buf: self.postings,
            pos: 0,
        };
        std::iter::from_fn(move || {
            let len = r.varint().ok()?;
            r.take(len)
        })
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn varint(&mut self) -> Result<u64, RecordError> {
        let start = self.pos;
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(bad(start, "truncated number"));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(bad(start, "number does not fit in 64 bits"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn take(&mut self, n: u64) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(usize::try_from(n).ok()?)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

impl<'a> Reader<'a> {
    /// Checks the header and the checksum (over the whole partition: no record is read from
    /// a partition whose bytes are not the ones its map wrote).
    pub fn new(buf: &'a [u8]) -> Result<Reader<'a>, RecordError> {
        if buf.len() < HEADER_LEN {
            return Err(bad(
                buf.len(),
                format!(
                    "{} bytes is shorter than the {HEADER_LEN}-byte header",
                    buf.len()
                ),
            ));
        }
        if &buf[..4] != MAGIC {
            return Err(bad(0, "not a yard partition (no \"yard\" magic)"));
        }
        if buf[4] != VERSION {
            return Err(bad(
                4,
                format!(
                    "format version {}, expected {VERSION}: map outputs are not kept across \
                     yard versions (run the job again)",
                    buf[4]
                ),
            ));
        }
        if buf.len() < HEADER_LEN + TRAILER_LEN {
            return Err(bad(
                buf.len(),
                format!("the partition ends before its {TRAILER_LEN}-byte checksum"),
            ));
        }
        let u32_at =
            |at: usize| u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        let (partition, reduces, map) = (u32_at(6), u32_at(10), u32_at(14));
        let body = buf.len() - TRAILER_LEN;
        let (stored, computed) = (u32_at(body), crc32fast::hash(&buf[..body]));
        if stored != computed {
            return Err(bad(
                body,
                format!(
                    "partition {partition} of map {map} is damaged: its checksum says CRC-32 \
                     {stored:08x}, its {body} bytes give {computed:08x}"
                ),
            ));
        }
        let buf = &buf[..body];
        let tag = buf[5];
        let Some(app) = APPS.get(usize::from(tag).wrapping_sub(1)) else {
            return Err(bad(5, format!("unknown app tag {tag}")));
        };
        if partition >= reduces {
            return Err(bad(
                6,
                format!("partition {partition} is not below the reduce count {reduces}"),
            ));
        }
        Ok(Reader {
            buf,
            pos: HEADER_LEN,
            header: Header {
                app,
                tag,
                partition,
                reduces,
                map,
            },
            prev: None,
        })
    }

    pub fn header(&self) -> Header {
        self.header
    }

    /// Where the next record starts.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The next record, `None` at the end; checks lengths, UTF-8, key order, counts and
    /// postings.
    pub fn next_record(&mut self) -> Result<Option<Record<'a>>, RecordError> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let mut c = Cursor {
            buf: self.buf,
            pos: self.pos,
        };
        let start = c.pos;
        let len = c.varint()?;
        let key = c
            .take(len)
            .ok_or_else(|| bad(start, format!("key of {len} bytes runs past the end")))?;
        if self.prev.is_some_and(|p| p >= key) {
            return Err(bad(start, "keys are not in strictly increasing order"));
        }
        let key_str = std::str::from_utf8(key).map_err(|_| bad(start, "key is not valid UTF-8"))?;
        let at = c.pos;
        let count = c.varint()?;
        if count == 0 {
            return Err(bad(at, "a record with count 0"));
        }
        let postings_start = c.pos;
        if self.header.tag == INDEX_TAG {
            let mut line = 0u64;
            for _ in 0..count {
                let at = c.pos;
                let d = c.varint()?;
                if d == 0 {
                    return Err(bad(at, "postings are not strictly increasing"));
                }
                line = line.saturating_add(d);
                if line > u64::from(u32::MAX) {
                    return Err(bad(at, "line number does not fit in 32 bits"));
                }
            }
        } else if self.header.tag == STREAMING_TAG {
            for _ in 0..count {
                let at = c.pos;
                let len = c.varint()?;
                c.take(len)
                    .ok_or_else(|| bad(at, format!("value of {len} bytes runs past the end")))?;
            }
        }
        let postings = &self.buf[postings_start..c.pos];
        self.pos = c.pos;
        self.prev = Some(key);
        Ok(Some(Record {
            key: key_str,
            count,
            postings,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut c = Cursor { buf: &b, pos: 0 };
            assert_eq!(c.varint(), Ok(v));
            assert_eq!(c.pos, b.len());
        }
        let mut c = Cursor {
            buf: &[0xff; 11],
            pos: 0,
        };
        assert!(c.varint().is_err());
    }

    #[test]
    fn a_written_partition_reads_back() {
        let mut w = Writer::new(INDEX_TAG, 3, 1);
        w.push_postings("a", &[1, 4, 9]);
        w.push_postings("b", &[2]);
        let (parts, records, bytes) = w.finish();
        assert_eq!((records, bytes), (2, parts[0].len() as u64));
        let mut r = Reader::new(&parts[0]).unwrap();
        assert_eq!(r.header().map, 3);
        let a = r.next_record().unwrap().unwrap();
        assert_eq!((a.key, a.count), ("a", 3));
        assert_eq!(a.lines().collect::<Vec<_>>(), [1, 4, 9]);
        let b = r.next_record().unwrap().unwrap();
        assert_eq!(b.lines().collect::<Vec<_>>(), [2]);
        assert_eq!(r.next_record(), Ok(None));
    }

    #[test]
    fn one_flipped_byte_anywhere_is_a_checksum_error_that_names_the_partition() {
        let mut w = Writer::new(INDEX_TAG, 7, 3);
        for key in ["alpha", "beta", "gamma", "delta", "epsilon"] {
            w.push_postings(key, &[2, 3]);
        }
        let (parts, _, _) = w.finish();
        let (p, part) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| p.len() > HEADER_LEN + TRAILER_LEN)
            .unwrap();
        assert!(Reader::new(part).is_ok());
        let body = part.len() - TRAILER_LEN;
        // Past the magic and version (checked first, as what the bytes are): the partition
        // number, a record, the trailer.
        for at in [6, HEADER_LEN, body - 1, body, part.len() - 1] {
            for bit in [0x01, 0x80] {
                let mut damaged = part.clone();
                damaged[at] ^= bit;
                let err = Reader::new(&damaged).unwrap_err();
                assert_eq!(err.offset, body, "{err}");
                let p = if at == 6 { p ^ usize::from(bit) } else { p };
                assert!(
                    err.problem
                        .starts_with(&format!("partition {p} of map 7 is damaged")),
                    "{err}"
                );
                assert!(err.problem.contains("CRC-32"), "{err}");
            }
        }
        // A damaged record, resealed, reaches the record checks again.
        let mut resealed = part.clone();
        resealed[HEADER_LEN] = 0xff;
        reseal(&mut resealed);
        let mut r = Reader::new(&resealed).unwrap();
        assert!(r.next_record().is_err());
    }

    #[test]
    fn the_trailer_is_not_a_record_and_older_versions_are_refused() {
        let mut w = Writer::new(1, 0, 1);
        w.push("a", 2);
        let (mut parts, records, bytes) = w.finish();
        let part = parts.remove(0);
        assert_eq!((records, bytes), (1, part.len() as u64));
        assert_eq!(part.len(), HEADER_LEN + 3 + TRAILER_LEN);
        let mut r = Reader::new(&part).unwrap();
        assert_eq!(
            r.next_record().unwrap().map(|r| (r.key, r.count)),
            Some(("a", 2))
        );
        assert_eq!(r.next_record(), Ok(None));

        let empty = Writer::new(1, 0, 1).finish().0.remove(0);
        assert_eq!(empty.len(), HEADER_LEN + TRAILER_LEN);
        assert_eq!(Reader::new(&empty).unwrap().next_record(), Ok(None));
        assert!(
            Reader::new(&empty[..HEADER_LEN])
                .unwrap_err()
                .problem
                .contains("checksum")
        );

        // Version 1: the same header and records, no trailer.
        let mut v1 = part[..part.len() - TRAILER_LEN].to_vec();
        v1[4] = 1;
        let err = Reader::new(&v1).unwrap_err();
        assert_eq!(err.offset, 4);
        assert!(
            err.problem.contains("format version 1, expected 2"),
            "{err}"
        );
    }
}
