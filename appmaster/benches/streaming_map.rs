//! A streaming map's pure path (`AppSpec::map_streamed`: the mapper's stdout read as lines,
//! keyed, partitioned, sorted and written as tag-6 partitions) over the first 2 MiB block of
//! the `streaming` bench's text as `cat` prints it, against the built-in word count's map
//! (`AppSpec::map`) over the same block, in one process: the part of issue 31's Streaming
//! overhead that is yard's own code, not the processes or pipes around it.
//! Then one reduce's pure part over the whole dataset's partitions for it (16 maps): the
//! word count's fold against a streaming reducer's input built (`reducer_input`: fold,
//! sort, write) and cut into key groups for its feed (`group_ends`).
//! Run: `cargo bench -p yard-appmaster --bench streaming_map`. Prints each side's ms and
//! ms/MB (the best of `ROUNDS`) and the ratio; figures, not assertions.

use std::hint::black_box;
use std::time::Duration;

use rand::{RngExt as _, SeedableRng as _};
use rand_distr::{Distribution as _, Zipf};
use yard_appmaster::apps::{AppSpec, Population, Split, streaming};
use yard_appmaster::policy::Rng;

mod common;

/// The block size of the `streaming` bench (`YARD_BENCH_STREAMING_BLOCK`'s default).
const BLOCK: usize = 2 << 20;
/// The `streaming` bench's input (`YARD_BENCH_STREAMING_SIZE`'s default).
const SIZE: usize = 32 << 20;
/// `-numReduceTasks` of the `streaming` bench.
const REDUCES: u32 = 2;
const VOCABULARY: usize = 20_000;
const ROUNDS: u32 = 10;
/// The piece a streaming reduce's feed is cut into (`task/command.rs`'s `CUT_PIECE`).
const CUT_PIECE: usize = 4 << 10;

/// A pronounceable word for a vocabulary rank: `yard data gen`'s (`src/data.rs`), which
/// this crate cannot call, so that the block's words and lines are the bench's.
fn word(mut rank: usize) -> String {
    const ONSETS: [&str; 16] = [
        "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "st", "tr",
    ];
    const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
    let mut w = String::new();
    while {
        w.push_str(ONSETS[rank % ONSETS.len()]);
        w.push_str(VOWELS[rank / ONSETS.len() % VOWELS.len()]);
        rank /= ONSETS.len() * VOWELS.len();
        rank != 0
    } {}
    w
}

/// The bench's dataset, `yard data gen --kind text --size 32MiB --seed 11`, cut into
/// blocks of whole lines up to [`BLOCK`] bytes as `yard data put` cuts it: lines of 6 to 15
/// Zipf-drawn words (s = 1.07).
fn blocks() -> Vec<Vec<u8>> {
    let mut rng = Rng::seed_from_u64(11);
    let zipf = Zipf::new(VOCABULARY as f64, 1.07).expect("a Zipf law");
    let words: Vec<String> = (0..VOCABULARY).map(word).collect();
    let (mut blocks, mut text, mut total) = (Vec::new(), Vec::with_capacity(BLOCK), 0);
    let mut line = String::new();
    loop {
        line.clear();
        for i in 0..rng.random_range(6..16) {
            if i > 0 {
                line.push(' ');
            }
            let rank = zipf.sample(&mut rng) as usize - 1;
            line.push_str(&words[rank.min(VOCABULARY - 1)]);
        }
        line.push('\n');
        total += line.len();
        if total > SIZE {
            blocks.push(text);
            return blocks;
        }
        if text.len() + line.len() > BLOCK {
            blocks.push(std::mem::replace(&mut text, Vec::with_capacity(BLOCK)));
        }
        text.extend_from_slice(line.as_bytes());
    }
}

/// The least time of `ROUNDS` runs of `f`.
fn best(f: impl FnMut()) -> Duration {
    common::best(ROUNDS as usize, f)
}

/// Partitions as the reduce functions take them.
fn borrowed(parts: &[(Split, Vec<u8>)]) -> Vec<(Split, &[u8])> {
    parts.iter().map(|(s, b)| (*s, b.as_slice())).collect()
}

/// The bench's job has no combiner.
fn no_combiner(_: u32, _: &[u8]) -> Result<Vec<u8>, String> {
    unreachable!("no combiner")
}

/// Prints `a` and `b` (ms and ms/MB over `bytes`) and their ratio.
fn compare(what: &str, bytes: usize, (a, da): (&str, Duration), (b, db): (&str, Duration)) {
    let mb = bytes as f64 / 1e6;
    println!("{what}: {bytes} bytes; best of {ROUNDS}");
    for (name, d) in [(a, da), (b, db)] {
        println!(
            "  {name:>52}: {:7.2} ms, {:6.2} ms/MB",
            d.as_secs_f64() * 1e3,
            d.as_secs_f64() * 1e3 / mb
        );
    }
    println!("  ratio: {:.2}", db.as_secs_f64() / da.as_secs_f64());
}

fn main() {
    let blocks = blocks();
    let splits: Vec<Split> = (0..blocks.len())
        .map(|i| Split {
            index: i as u32,
            bytes: blocks[i].len() as u64,
        })
        .collect();
    let wordcount = AppSpec::parse("wordcount", &[]).expect("the word count");
    let streaming = AppSpec::parse("streaming", &["mapper=cat".into(), "reducer=wc -l".into()])
        .expect("a streaming job");

    // One map: `cat` prints its input, so the mapper's stdout is the block.
    let (split, input) = (splits[0], &blocks[0]);
    let built_in = best(|| {
        black_box(
            wordcount
                .map(split, black_box(input), REDUCES)
                .expect("the map"),
        );
    });
    let streamed = best(|| {
        let out = streaming
            .map_streamed(split, input, black_box(input), REDUCES, &mut no_combiner)
            .expect("the map");
        black_box(out);
    });
    let lines = input.iter().filter(|&&b| b == b'\n').count();
    compare(
        &format!("one map over a block of {lines} lines, {REDUCES} reduces"),
        input.len(),
        ("wordcount map (AppSpec::map)", built_in),
        ("streaming map of cat's stdout (map_streamed)", streamed),
    );

    // One reduce (the first of two) over every map's partition for it, in map order: the
    // word count's fold against a streaming reduce's pure part, its command's stdin sorted
    // and written (`reducer_input`) and cut into key groups for its feed (`group_ends`).
    let population = Population {
        maps: blocks.len() as u32,
        bytes: blocks.iter().map(|b| b.len() as u64).sum(),
    };
    // Each map's partition for reduce 0.
    let partitions = |spec: &AppSpec| -> Vec<(Split, Vec<u8>)> {
        splits
            .iter()
            .zip(&blocks)
            .map(|(&split, block)| {
                let out = spec
                    .map_streamed(split, block, block, REDUCES, &mut no_combiner)
                    .expect("the map");
                (
                    split,
                    out.partitions.into_iter().next().expect("reduce 0's"),
                )
            })
            .collect()
    };
    let (counted, streamed) = (partitions(&wordcount), partitions(&streaming));
    let (counted, streamed) = (borrowed(&counted), borrowed(&streamed));
    let fold = best(|| {
        let partial = wordcount
            .reduce_until(population, black_box(&counted), &mut || false)
            .expect("the fold");
        black_box(partial);
    });
    let mut stdin_bytes = 0;
    let fed = best(|| {
        let (partial, stdin) = streaming
            .reducer_input(population, black_box(&streamed), &mut || false)
            .expect("the fold");
        black_box(streaming::group_ends(&stdin, CUT_PIECE));
        stdin_bytes = stdin.len();
        black_box(partial);
    });
    compare(
        &format!(
            "one reduce over {} maps' partitions ({stdin_bytes} bytes of reducer stdin)",
            blocks.len()
        ),
        population.bytes as usize / REDUCES as usize,
        ("wordcount fold (reduce_until)", fold),
        ("streaming reducer_input + group_ends", fed),
    );
}
