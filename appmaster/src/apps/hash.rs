//! Hashes: a stable one for partitioning (the same on every process, platform and run), and a
//! fast one for the maps' in-memory tables (std's SipHash costs more than the word scan).

use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a, 64 bits, over `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
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

    fn finish(&self) -> u64 {
        // hashbrown takes the top 7 bits as a tag and the low bits as the bucket: mix both.
        self.0.rotate_left(26)
    }
}

pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FastHasher>>;

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
}
