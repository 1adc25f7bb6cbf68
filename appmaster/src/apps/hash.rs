//! Hashes: a stable one for partitioning (the same on every process, platform and run), and a
//! fast one for the maps' in-memory tables (std's SipHash costs more than the word scan).

use std::borrow::Cow;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a, 64 bits, over `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The reducer (`0..reduces`) a key goes to: FNV-1a-64 of its UTF-8 bytes, modulo `reduces`.
/// `reduces` must be at least 1.
pub fn partition_of(key: &[u8], reduces: u32) -> u32 {
    (fnv1a(key) % u64::from(reduces.max(1))) as u32
}

/// A multiply-rotate hasher in the style of rustc's FxHasher, eight bytes at a time. Not
/// DoS-resistant, which is fine for a job's own input; never used for partitioning.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = self.0.wrapping_add(word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        // hashbrown takes the top 7 bits as a tag and the low bits as the bucket: mix both.
        self.0.rotate_left(26)
    }
}

pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A map's per-key table over byte strings borrowed from its input. Keys of up to 15 bytes —
/// nearly every word — are packed into a `u128` (bytes, then the length in the top byte), so a
/// lookup hashes and compares two words in the table instead of chasing the first occurrence
/// back into a many-megabyte input (which made memcmp's cache misses half of wordcount).
pub(crate) struct KeyTable<'a, V> {
    short: FastMap<u128, V>,
    long: FastMap<&'a [u8], V>,
}

/// `input[start..end]` packed, if at most 15 bytes. Where 16 bytes can be read from `start`,
/// one load and a mask do it: copying a variable number of bytes into a buffer and reading it
/// back as one number stalls on store forwarding.
fn pack(input: &[u8], start: usize, end: usize) -> Option<u128> {
    let len = end - start;
    if len > 15 {
        return None;
    }
    let bytes = match input.get(start..start + 16).map(<[u8; 16]>::try_from) {
        Some(Ok(b)) => u128::from_le_bytes(b) & ((1u128 << (8 * len)) - 1),
        _ => {
            let mut b = [0u8; 16];
            b[..len].copy_from_slice(&input[start..end]);
            u128::from_le_bytes(b)
        }
    };
    Some(bytes | (len as u128) << 120)
}

impl<'a, V: Default> KeyTable<'a, V> {
    pub fn new() -> Self {
        KeyTable {
            short: FastMap::default(),
            long: FastMap::default(),
        }
    }

    /// The value for the key `input[start..end]`, inserted as `V::default()` if new.
    pub fn get_at(&mut self, input: &'a [u8], start: usize, end: usize) -> &mut V {
        match pack(input, start, end) {
            Some(k) => self.short.entry(k).or_default(),
            None => self.long.entry(&input[start..end]).or_default(),
        }
    }

    /// The value for `key`, inserted as `V::default()` if new.
    pub fn get(&mut self, key: &'a [u8]) -> &mut V {
        self.get_at(key, 0, key.len())
    }

    /// Every key, normalized (short keys come back owned), with its value; unordered.
    pub fn into_pairs(
        self,
        normalize: impl for<'b> Fn(&'b [u8]) -> Cow<'b, str>,
    ) -> Vec<(Cow<'a, str>, V)> {
        let mut out = Vec::with_capacity(self.short.len() + self.long.len());
        for (k, v) in self.short {
            let b = k.to_le_bytes();
            let key = normalize(&b[..usize::from(b[15])]).into_owned();
            out.push((Cow::Owned(key), v));
        }
        for (k, v) in self.long {
            out.push((normalize(k), v));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn partition_of_is_in_range() {
        for r in 1..9 {
            for w in ["", "a", "the", "ünïcode"] {
                assert!(partition_of(w.as_bytes(), r) < r);
            }
        }
        assert_eq!(partition_of(b"x", 0), 0);
    }

    #[test]
    fn key_tables_keep_short_and_long_keys_apart_and_whole() {
        let keys: [&[u8]; 6] = [
            b"",
            b"\0",
            b"\0\0",
            b"fifteen bytes!!",
            b"sixteen bytes!!!",
            b"a",
        ];
        let mut t: KeyTable<'_, u32> = KeyTable::new();
        let all: Vec<u8> = keys.concat();
        let mut at = 0;
        for (i, k) in keys.iter().enumerate() {
            *t.get(k) += i as u32 + 1;
            // The same key read in place, with (or, at the end, without) bytes after it.
            *t.get_at(&all, at, at + k.len()) += 100;
            at += k.len();
        }
        let mut pairs = t.into_pairs(String::from_utf8_lossy);
        pairs.sort();
        let want: Vec<(Cow<'_, str>, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (String::from_utf8_lossy(k), i as u32 + 101))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(pairs, want);
    }
}
