//! The word count's reduce (`AppSpec::reduce_until`, the fold a live reduce runs after its
//! fetch) over map outputs shaped like the default demo's: 15 maps' partitions of ~80 KB for
//! one of two reduces, over a Zipf vocabulary of 20,000 words. Prints the fold's ms per MB
//! of partitions and, as the baseline in the same process, a plain `HashMap` merge of the
//! same (word, count) pairs read with the same partition reader: what merging costs with
//! nothing else done (no key checks, no estimator sums, no top list).
//! Run: `cargo bench -p yard-appmaster --bench fold`. Goal: the fold within 2× the baseline
//! (the answer's tail is the lever of the demo's live goals, issue 29).

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use rand::{RngExt as _, SeedableRng as _};
use rand_distr::{Distribution as _, Zipf};
use yard_appmaster::apps::records::Reader;
use yard_appmaster::apps::{AppSpec, Population, Split};
use yard_appmaster::policy::Rng;

mod common;

const MAPS: u32 = 15;
const REDUCES: u32 = 2;
const VOCABULARY: usize = 20_000;
/// Words a map's split holds: with this vocabulary, about 80 KB of partition per reduce.
const WORDS_PER_MAP: usize = 120_000;
const ROUNDS: u32 = 30;

/// A vocabulary of lowercase words of 3–10 letters, distinct.
fn vocabulary(rng: &mut Rng) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut words = Vec::with_capacity(VOCABULARY);
    while words.len() < VOCABULARY {
        let len = rng.random_range(3..=10);
        let w: String = (0..len)
            .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
            .collect();
        if seen.insert(w.clone()) {
            words.push(w);
        }
    }
    words
}

/// Each map's partition for reduce 0, from its split of Zipf-drawn words (12 a line).
fn partitions() -> Vec<(Split, Vec<u8>)> {
    let mut rng = Rng::seed_from_u64(29);
    let words = vocabulary(&mut rng);
    let zipf = Zipf::new(VOCABULARY as f64, 1.0).expect("a Zipf law");
    let spec = AppSpec::parse("wordcount", &[]).expect("the word count");
    (0..MAPS)
        .map(|index| {
            let mut text = String::new();
            for i in 0..WORDS_PER_MAP {
                let rank = zipf.sample(&mut rng) as usize;
                text.push_str(&words[rank.clamp(1, VOCABULARY) - 1]);
                text.push(if i % 12 == 11 { '\n' } else { ' ' });
            }
            let split = Split {
                index,
                bytes: text.len() as u64,
            };
            let out = spec
                .map(split, text.as_bytes(), REDUCES)
                .expect("the map runs");
            (
                split,
                out.partitions.into_iter().next().expect("reduce 0's"),
            )
        })
        .collect()
}

/// The least time of `ROUNDS` runs of `f`.
fn best(f: impl FnMut()) -> Duration {
    common::best(ROUNDS as usize, f)
}

fn main() {
    let parts = partitions();
    let inputs: Vec<(Split, &[u8])> = parts.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    let bytes: usize = parts.iter().map(|(_, b)| b.len()).sum();
    let mb = bytes as f64 / 1e6;
    let population = Population {
        maps: 65,
        bytes: parts.iter().map(|(s, _)| s.bytes).sum::<u64>() * 65 / u64::from(MAPS),
    };
    let spec = AppSpec::parse("wordcount", &[]).expect("the word count");
    let mut records = 0u64;
    for (_, b) in &parts {
        let mut r = Reader::new(b).expect("a partition");
        while r.next_record().expect("a record").is_some() {
            records += 1;
        }
    }
    let fold = best(|| {
        let p = spec
            .reduce_until(population, black_box(&inputs), &mut || false)
            .expect("the fold");
        black_box(p);
    });
    let merge = best(|| {
        let mut counts: HashMap<&str, u64> = HashMap::new();
        for (_, b) in black_box(&inputs) {
            let mut r = Reader::new(b).expect("a partition");
            while let Some(rec) = r.next_record().expect("a record") {
                *counts.entry(rec.key).or_default() += rec.count;
            }
        }
        black_box(counts);
    });
    let ms_per_mb = |d: Duration| d.as_secs_f64() * 1e3 / mb;
    println!(
        "{MAPS} partitions, {bytes} bytes ({:.0} KB each), {records} records, {VOCABULARY} words",
        bytes as f64 / f64::from(MAPS) / 1e3
    );
    println!(
        "fold (reduce_until): {:.2} ms, {:.2} ms/MB",
        fold.as_secs_f64() * 1e3,
        ms_per_mb(fold)
    );
    println!(
        "baseline (HashMap merge of the same pairs): {:.2} ms, {:.2} ms/MB",
        merge.as_secs_f64() * 1e3,
        ms_per_mb(merge)
    );
    println!(
        "fold / baseline: {:.2}",
        fold.as_secs_f64() / merge.as_secs_f64()
    );
}
