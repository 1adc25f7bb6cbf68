//! The built-in apps end to end (map → reduce → answer), the estimator's coverage, the
//! partition format's robustness, reduce-input sampling, and the CLI form of a spec.

use proptest::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use serde_json::{Value, json};
use yard_appmaster::apps::hash::partition_of;
use yard_appmaster::apps::records::{Reader, reseal};
use yard_appmaster::apps::{
    AppError, AppSpec, MapOutput, MapStats, Population, ReducePartial, Split, Sums, SyntheticTask,
    sample_partitions,
};
use yard_appmaster::policy::Rng;

fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

fn spec(name: &str, params: &[&str]) -> AppSpec {
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    AppSpec::parse(name, &params).unwrap()
}

fn splits_of(splits: &[&[u8]]) -> (Vec<Split>, Population) {
    let list: Vec<Split> = splits
        .iter()
        .enumerate()
        .map(|(i, s)| Split {
            index: i as u32,
            bytes: s.len() as u64,
        })
        .collect();
    let population = Population {
        maps: list.len() as u32,
        bytes: list.iter().map(|s| s.bytes).sum(),
    };
    (list, population)
}

/// A distributed run in one process: only the maps in `read` finish, every reducer keeps all
/// their partitions (in reverse map order, to show order does not matter).
fn run(app: &AppSpec, splits: &[&[u8]], reduces: u32, read: &[u32]) -> Value {
    let (list, population) = splits_of(splits);
    let outputs: Vec<(Split, MapOutput)> = read
        .iter()
        .map(|&i| {
            let s = list[i as usize];
            (s, app.map(s, splits[i as usize], reduces).unwrap())
        })
        .collect();
    let partials: Vec<ReducePartial> = (0..reduces as usize)
        .rev()
        .map(|r| {
            let inputs: Vec<(Split, &[u8])> = outputs
                .iter()
                .rev()
                .map(|(s, o)| (*s, o.partitions[r].as_slice()))
                .collect();
            app.reduce(population, &inputs).unwrap()
        })
        .collect();
    let stats: Vec<(Split, MapStats)> = outputs.into_iter().map(|(s, o)| (s, o.stats)).collect();
    app.answer(population, &stats, &partials)
}

fn exact_count(n: u64) -> Value {
    let v = n as f64;
    json!({"estimate": v, "low": v, "high": v, "observed": n, "stdError": 0.0})
}

fn row(name: &str, key: &str, n: u64) -> Value {
    let mut v = exact_count(n);
    v[name] = json!(key);
    v
}

const STORY: [&[u8]; 4] = [
    b"The cat sat\non the mat.\n",
    b"the Cat ran\n",
    b"",
    b"dog DOG dog\n",
];

// ---------------------------------------------------------------- wordcount

#[test]
fn wordcount_exact_counts_words() {
    let app = spec("wordcount", &["top=4"]);
    let a = app.exact(&STORY, 3).unwrap();
    assert_eq!(a["app"], "wordcount");
    assert_eq!(a["exact"], true);
    assert_eq!(
        (a["mapsRead"].as_u64(), a["maps"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(a["bytes"], a["bytesRead"]);
    assert_eq!(a["words"], exact_count(12));
    assert_eq!(a["distinctWordsSeen"], 7);
    // Ties (dog and the, 3 each) go by word.
    assert_eq!(
        a["top"],
        json!([
            row("word", "dog", 3),
            row("word", "the", 3),
            row("word", "cat", 2),
            row("word", "mat", 1)
        ])
    );
    assert_eq!(a["notes"], json!([]));
}

#[test]
fn a_full_distributed_run_equals_exact_whatever_the_reducer_count() {
    for app in [
        spec("wordcount", &[]),
        spec("grep", &["pattern=[a-z]at"]),
        spec("topk", &["field=1"]),
        spec("index", &[]),
    ] {
        let exact = app.exact(&STORY, 3).unwrap();
        for reduces in [1, 2, 5] {
            assert_eq!(
                run(&app, &STORY, reduces, &[0, 1, 2, 3]),
                exact,
                "{app:?} {reduces}"
            );
        }
    }
}

#[test]
fn partitions_are_sorted_and_a_key_has_one_partition() {
    let app = spec("wordcount", &[]);
    let inputs: [&[u8]; 3] = [
        b"alpha beta gamma delta epsilon zeta eta theta iota kappa",
        b"kappa iota theta eta zeta epsilon delta gamma beta alpha lambda",
        b"mu nu xi alpha alpha",
    ];
    let reduces = 4;
    let mut home: std::collections::HashMap<String, usize> = Default::default();
    for (i, input) in inputs.iter().enumerate() {
        let split = Split {
            index: i as u32,
            bytes: input.len() as u64,
        };
        let out = app.map(split, input, reduces).unwrap();
        assert_eq!(out.partitions.len(), 4);
        let mut records = 0;
        for (p, bytes) in out.partitions.iter().enumerate() {
            let mut r = Reader::new(bytes).unwrap();
            assert_eq!(r.header().partition, p as u32);
            assert_eq!(r.header().map, i as u32);
            let mut keys = Vec::new();
            while let Some(rec) = r.next_record().unwrap() {
                keys.push(rec.key.to_owned());
            }
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
            for k in keys {
                assert_eq!(partition_of(k.as_bytes(), reduces) as usize, p);
                assert_eq!(*home.entry(k).or_insert(p), p, "same key, same partition");
                records += 1;
            }
        }
        assert_eq!(out.stats.records, records);
        let written: usize = out.partitions.iter().map(Vec::len).sum();
        assert_eq!(out.stats.output_bytes, written as u64);
    }
    // Spread: 14 words over 4 reducers do not all land in one.
    let used: std::collections::HashSet<usize> = home.values().copied().collect();
    assert!(used.len() > 1);
}

#[test]
fn half_the_maps_of_identical_blocks_estimate_the_whole_exactly() {
    // 16 bytes, so every ratio below is exact in binary.
    let block: &[u8] = b"to be or not to\n";
    let splits = [block; 10];
    let app = spec("wordcount", &["top=2"]);
    let a = run(&app, &splits, 2, &[1, 3, 4, 7, 8]);
    assert_eq!(a["exact"], false);
    assert_eq!(a["mapsRead"], 5);
    assert_eq!(a["bytesRead"], 5 * block.len());
    // Every block alike: R̂ is the truth and the residuals are 0.
    assert_eq!(
        a["words"],
        json!({"estimate": 50.0, "low": 50.0, "high": 50.0, "observed": 25, "stdError": 0.0})
    );
    assert_eq!(a["top"][0]["word"], "to");
    assert_eq!(a["top"][0]["estimate"], 20.0);
    assert_eq!(a["top"][0]["observed"], 10);
    // be, not and or tie at 10: by word.
    assert_eq!(a["top"][1]["word"], "be");
    assert!(a["notes"][0].as_str().unwrap().contains("random sample"));
}

#[test]
fn one_map_read_is_unbounded_above_and_says_so() {
    let block: &[u8] = b"a b c\n";
    let app = spec("wordcount", &[]);
    let a = run(&app, &[block; 4], 1, &[2]);
    assert_eq!(
        a["words"],
        json!({"estimate": 12.0, "low": 3.0, "high": null, "observed": 3, "stdError": null})
    );
    assert_eq!(a["top"][0]["high"], Value::Null);
    let notes = a["notes"].to_string();
    assert!(notes.contains("one map finished"), "{notes}");
    assert!(notes.contains("reducer 0 kept one partition"), "{notes}");
}

#[test]
fn no_map_read_has_no_estimate() {
    let app = spec("wordcount", &[]);
    let a = run(&app, &STORY, 2, &[]);
    assert_eq!(a["words"]["estimate"], Value::Null);
    assert_eq!(a["words"]["observed"], 0);
    assert_eq!(a["exact"], false);
    assert_eq!(a["top"], json!([]));
    assert!(a["notes"].to_string().contains("no map finished"));
}

#[test]
fn varying_blocks_give_an_interval_around_the_estimate() {
    // Words per byte differ from block to block (short and long words mixed in different
    // proportions), so the ratio estimate has residuals and its interval a width.
    let splits: Vec<Vec<u8>> = (0..8)
        .map(|i| ["w ".repeat(10 + 3 * i), "abcdefgh ".repeat(1 + i % 3)].concat())
        .map(String::into_bytes)
        .collect();
    let refs: Vec<&[u8]> = splits.iter().map(Vec::as_slice).collect();
    let app = spec("wordcount", &[]);
    let read = [0usize, 5, 7];
    let a = run(&app, &refs, 1, &read.map(|i| i as u32));
    let w = &a["words"];
    let (est, low, high, std_error) = (
        w["estimate"].as_f64().unwrap(),
        w["low"].as_f64().unwrap(),
        w["high"].as_f64().unwrap(),
        w["stdError"].as_f64().unwrap(),
    );

    // The interval computed here from its definition (Cochran ch. 6, the ratio estimator of a
    // simple random sample of k of N blocks), residual by residual, not from the crate's sums.
    let words = |b: &[u8]| std::str::from_utf8(b).unwrap().split_whitespace().count() as f64;
    let (n, k) = (splits.len() as f64, read.len() as f64);
    let total_bytes: f64 = splits.iter().map(|s| s.len() as f64).sum();
    let xs: Vec<f64> = read.iter().map(|&i| splits[i].len() as f64).collect();
    let ys: Vec<f64> = read.iter().map(|&i| words(&splits[i])).collect();
    let observed: f64 = ys.iter().sum();
    let r = observed / xs.iter().sum::<f64>();
    let expected = r * total_bytes;
    let s2: f64 = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (y - r * x).powi(2))
        .sum::<f64>()
        / (k - 1.0);
    let se = (n * n * (1.0 - k / n) / k * s2).sqrt();
    // Student's t, 0.975 quantile, 2 degrees of freedom.
    let half = 4.303 * se;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);

    assert_eq!(w["observed"], json!(observed as u64), "{a}");
    assert!(
        close(est, expected),
        "estimate {est}, expected {expected}: {a}"
    );
    assert!(
        close(std_error, se),
        "stdError {std_error}, expected {se}: {a}"
    );
    assert!(
        close(high, expected + half),
        "high {high}, expected {}: {a}",
        expected + half
    );
    assert!(
        close(low, (expected - half).max(observed)),
        "low {low}: {a}"
    );
    // Not degenerate: a real width, and the lower end not merely raised to what was seen.
    assert!(
        half > 1.0 && expected - half > observed,
        "half-width {half}: {a}"
    );
    assert!(low < est && est < high, "{a}");
    // The interval is about the estimate, not the truth: the truth here lies inside it.
    let truth: f64 = refs.iter().map(|b| words(b)).sum();
    assert!(low <= truth && truth <= high, "truth {truth}: {a}");
}

#[test]
fn a_reducer_that_samples_partitions_estimates_from_what_it_kept() {
    let splits: Vec<&[u8]> = vec![b"x y x z\n"; 12];
    let app = spec("wordcount", &[]);
    let (list, population) = splits_of(&splits);
    let outputs: Vec<MapOutput> = list
        .iter()
        .map(|&s| app.map(s, splits[s.index as usize], 1).unwrap())
        .collect();
    let sizes: Vec<u64> = outputs
        .iter()
        .map(|o| o.partitions[0].len() as u64)
        .collect();
    let keep = sample_partitions(&sizes, sizes[0] * 4, &mut rng(3));
    assert_eq!(keep.len(), 4);
    let inputs: Vec<(Split, &[u8])> = keep
        .iter()
        .map(|&i| (list[i], outputs[i].partitions[0].as_slice()))
        .collect();
    let partial = app.reduce(population, &inputs).unwrap();
    assert_eq!(partial.kept, 4);
    let stats: Vec<(Split, MapStats)> = list
        .iter()
        .zip(&outputs)
        .map(|(s, o)| (*s, o.stats.clone()))
        .collect();
    let a = app.answer(population, &stats, &[partial]);
    assert_eq!(
        a["exact"], false,
        "all maps read, but not every partition kept"
    );
    assert_eq!(a["words"], exact_count(48));
    assert_eq!(a["top"][0]["word"], "x");
    assert_eq!(a["top"][0]["observed"], 8);
    assert_eq!(a["top"][0]["estimate"], 24.0);
}

#[test]
fn a_key_missing_from_a_block_counts_as_zero_there() {
    // 8 blocks of 8 bytes; "rare" is in one of the 4 read, so it is estimated at 2, not 8.
    let splits: [&[u8]; 8] = [
        b"rare xx\n",
        b"aa bb c\n",
        b"aa bb c\n",
        b"aa bb c\n",
        b"aa bb c\n",
        b"aa bb c\n",
        b"aa bb c\n",
        b"aa bb c\n",
    ];
    let a = run(&spec("wordcount", &["top=10"]), &splits, 1, &[0, 1, 2, 3]);
    let rare = a["top"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["word"] == "rare")
        .unwrap();
    assert_eq!(rare["estimate"], 2.0);
    assert_eq!(rare["observed"], 1);
    assert!(rare["high"].as_f64().unwrap() > 2.0);
}

#[test]
fn a_missing_reducer_makes_the_answer_inexact_and_says_so() {
    let app = spec("wordcount", &[]);
    let (list, population) = splits_of(&STORY);
    let outputs: Vec<MapOutput> = list
        .iter()
        .map(|&s| app.map(s, STORY[s.index as usize], 2).unwrap())
        .collect();
    let inputs: Vec<(Split, &[u8])> = list
        .iter()
        .zip(&outputs)
        .map(|(s, o)| (*s, o.partitions[1].as_slice()))
        .collect();
    let partial = app.reduce(population, &inputs).unwrap();
    let stats: Vec<(Split, MapStats)> = list
        .iter()
        .zip(&outputs)
        .map(|(s, o)| (*s, o.stats.clone()))
        .collect();
    let a = app.answer(population, &stats, std::slice::from_ref(&partial));
    assert_eq!(a["exact"], false);
    assert_eq!(a["words"], exact_count(12));
    assert!(a["notes"].to_string().contains("1 of 2 reducers"), "{a}");
    // The same partial twice is still one reducer.
    let twice = app.answer(population, &stats, &[partial.clone(), partial]);
    assert_eq!(twice, a);
}

// ---------------------------------------------------------------- grep

#[test]
fn grep_counts_matching_lines_and_samples_them() {
    let splits: [&[u8]; 3] = [
        b"ok\nERROR disk full\nok\nERROR disk full\n",
        b"ERROR net down ERROR again\n",
        b"fine\r\nERROR disk full\r\n",
    ];
    let app = spec("grep", &["pattern=ERROR [a-z]+", "sample=3"]);
    assert_eq!(app.kind(), "grep:ERROR [a-z]+");
    let a = app.exact(&splits, 2).unwrap();
    assert_eq!(a["pattern"], "ERROR [a-z]+");
    assert_eq!(a["matchingLines"], exact_count(4));
    assert_eq!(a["lines"], exact_count(7));
    assert_eq!(
        a["sample"],
        json!([
            {"map": 0, "line": 2, "text": "ERROR disk full"},
            {"map": 0, "line": 4, "text": "ERROR disk full"},
            {"map": 1, "line": 1, "text": "ERROR net down ERROR again"},
        ])
    );
    assert_eq!(
        a["matches"],
        json!([
            row("text", "ERROR disk", 3),
            row("text", "ERROR again", 1),
            row("text", "ERROR net", 1)
        ])
    );
}

#[test]
fn grep_reads_invalid_utf8_and_cuts_long_sample_lines() {
    let mut long = b"ERROR ".to_vec();
    long.extend(std::iter::repeat_n(b'z', 3000));
    long.extend_from_slice(b"\n\xff\xfeERROR\n");
    let app = spec("grep", &["pattern=ERROR"]);
    let a = app.exact(&[&long], 1).unwrap();
    assert_eq!(a["matchingLines"]["observed"], 2);
    let first = a["sample"][0]["text"].as_str().unwrap();
    assert!(
        first.len() <= 1024 + 3 && first.ends_with('…'),
        "{}",
        first.len()
    );
    assert_eq!(a["sample"][1]["text"], "\u{fffd}\u{fffd}ERROR");
}

// ---------------------------------------------------------------- topk

#[test]
fn topk_counts_lines_by_field_and_skips_short_lines() {
    let splits: [&[u8]; 2] = [b"a x 1\nb y 2\nc x\n", b"single\n\n d\t x \n"];
    let app = spec("topk", &["field=1", "k=1"]);
    assert_eq!(app.kind(), "topk:field=1");
    let a = app.exact(&splits, 3).unwrap();
    assert_eq!(a["keys"], json!([row("key", "x", 3)]));
    assert_eq!(a["lines"], exact_count(6));
    assert_eq!(a["skippedLines"], 2);
    assert_eq!(a["field"], 1);
    let wide = spec("topk", &["field=0", "k=10"])
        .exact(&splits, 2)
        .unwrap();
    assert_eq!(wide["keys"].as_array().unwrap().len(), 5);
    assert_eq!(wide["skippedLines"], 1);
}

// ---------------------------------------------------------------- index

#[test]
fn index_lists_postings_by_map_and_line() {
    let splits: [&[u8]; 2] = [b"a b\nb c b\n", b"c\nA\n"];
    let app = spec("index", &["top=2"]);
    let a = app.exact(&splits, 2).unwrap();
    assert_eq!(a["distinctTermsSeen"], 3);
    assert_eq!(a["postingsSeen"], 6);
    let posting = |map: u32, line: u32| json!({"map": map, "line": line});
    let mut first = row("term", "a", 2);
    first["postings"] = json!([posting(0, 1), posting(1, 2)]);
    let mut second = row("term", "b", 2);
    second["postings"] = json!([posting(0, 1), posting(0, 2)]);
    assert_eq!(a["top"], json!([first, second]));
}

#[test]
fn index_shows_at_most_five_postings_the_earliest() {
    let text = "w\n".repeat(9);
    let splits: [&[u8]; 2] = [text.as_bytes(), text.as_bytes()];
    let a = spec("index", &[]).exact(&splits, 1).unwrap();
    let postings = &a["top"][0]["postings"];
    assert_eq!(postings.as_array().unwrap().len(), 5);
    assert_eq!(postings[4], json!({"map": 0, "line": 5}));
    assert_eq!(a["top"][0]["observed"], 18);
}

// ---------------------------------------------------------------- synthetic

fn synthetic() -> AppSpec {
    let task = |input_bytes, output_bytes| SyntheticTask {
        seconds: 1.0,
        input_bytes,
        output_bytes,
    };
    AppSpec::Synthetic {
        maps: vec![task(1000, 10_000), task(1000, 3_333), task(500, 0)],
        reduce_seconds: vec![2.0, 2.0, 3.0],
    }
}

#[test]
fn synthetic_maps_write_their_recorded_output_evenly() {
    let app = synthetic();
    let out = app
        .map(
            Split {
                index: 1,
                bytes: 1000,
            },
            b"",
            3,
        )
        .unwrap();
    let sizes: Vec<usize> = out.partitions.iter().map(Vec::len).collect();
    assert_eq!(sizes, [1111, 1111, 1111]);
    assert_eq!(out.stats.output_bytes, 3333);
    let err = app.map(Split { index: 3, bytes: 0 }, b"", 3).unwrap_err();
    assert_eq!(err, AppError::NoSuchMap { map: 3, maps: 3 });
    let a = app.exact(&[], 3).unwrap();
    assert_eq!(a["exact"], true);
    assert_eq!(a["bytes"], 2500);
    assert_eq!(a["outputBytes"], 10_000 + 3_333 + 66);
    // Map 0: bodies of 3312 and 3311 bytes → 33 bulk records and a short one in each
    // partition; map 1: 1089 → 10 and a short one; map 2: headers and checksums only.
    assert_eq!(a["records"], exact_count(3 * 34 + 3 * 11));
    assert_eq!(a["recordsReduced"], 3 * 34 + 3 * 11);
}

// ---------------------------------------------------------------- the estimator's coverage

#[test]
fn intervals_cover_the_true_total_about_95_percent_of_the_time() {
    let mut r = rng(2024);
    let noise = Normal::new(0.0, 1.0).unwrap();
    // 60 blocks of 40–160 kB, about 0.15 words a byte, noise growing with the block.
    let blocks: Vec<(u64, u64)> = (0..60)
        .map(|_| {
            let x = rand::RngExt::random_range(&mut r, 40_000..160_000u64);
            let y = 0.15 * x as f64 + 0.02 * x as f64 * noise.sample(&mut r);
            (x, y.max(0.0).round() as u64)
        })
        .collect();
    let population = Population {
        maps: 60,
        bytes: blocks.iter().map(|b| b.0).sum(),
    };
    let truth: u64 = blocks.iter().map(|b| b.1).sum();
    let trials = 2000;
    let mut covered = 0;
    for _ in 0..trials {
        let mut s = Sums::default();
        for i in rand::seq::index::sample(&mut r, 60, 15) {
            s.add(blocks[i].0, blocks[i].1);
        }
        let e = s.estimate(population);
        if e.low.unwrap() <= truth as f64 && truth as f64 <= e.high.unwrap() {
            covered += 1;
        }
    }
    let rate = f64::from(covered) / f64::from(trials);
    // A 95 % interval: over 2,000 trials the rate sits within ±0.02 of 0.95 (four standard
    // deviations of a binomial rate); a 90 % or a 99 % interval falls outside the band.
    assert!((0.93..=0.97).contains(&rate), "coverage {rate}");
}

// ---------------------------------------------------------------- bad partitions

fn one_partition(app: &AppSpec, input: &[u8], map: u32, reduces: u32) -> Vec<Vec<u8>> {
    let split = Split {
        index: map,
        bytes: input.len() as u64,
    };
    app.map(split, input, reduces).unwrap().partitions
}

const POP: Population = Population {
    maps: 4,
    bytes: 400,
};

fn at(map: u32) -> Split {
    Split {
        index: map,
        bytes: 100,
    }
}

#[test]
fn bad_partitions_are_errors_that_say_what_is_wrong() {
    let wc = spec("wordcount", &[]);
    let good = one_partition(&wc, b"one two three", 1, 1).remove(0);
    let reduce = |inputs: &[(Split, &[u8])]| wc.reduce(POP, inputs).unwrap_err().to_string();

    assert!(reduce(&[(at(1), &good[..10])]).contains("shorter than the 18-byte header"));
    let mut magic = good.clone();
    magic[0] = b'Y';
    assert!(reduce(&[(at(1), &magic)]).contains("magic"));
    assert!(reduce(&[(at(1), &good[..good.len() - 1])]).contains("map 1: byte"));
    assert!(reduce(&[(at(2), &good)]).contains("comes from map 1"));
    assert!(reduce(&[(at(1), &good), (at(1), &good)]).contains("given twice"));
    assert!(reduce(&[(at(9), &good)]).contains("only 4 maps"));

    let grep = one_partition(&spec("grep", &["pattern=o"]), b"one", 1, 1).remove(0);
    assert!(reduce(&[(at(1), &grep)]).contains("written by app `grep`, not `wordcount`"));

    // Partition 1 of 2 handed to the reducer of partition 0.
    let two = one_partition(&wc, b"a b c d e f g h", 0, 2);
    let three = one_partition(&wc, b"a b c d e f g h", 1, 3);
    let err = reduce(&[(at(0), &two[0]), (at(1), &three[0])]);
    assert!(err.contains("partition 0 of 3"), "{err}");

    // Any edit is a checksum error first; the edits below are resealed (their checksum
    // rewritten) to reach the checks behind it.
    let mut flipped = good.clone();
    flipped[19] ^= 1;
    let err = reduce(&[(at(1), &flipped)]);
    assert!(err.contains("partition 0 of map 1 is damaged"), "{err}");

    // A key in the wrong partition: rewrite the header's partition number.
    let mut moved = two.iter().find(|p| p.len() > 22).unwrap().clone();
    moved[6] ^= 1;
    reseal(&mut moved);
    assert!(reduce(&[(at(0), &moved)]).contains("belongs to another partition"));

    // Keys out of order: swap the two one-letter records of a one-reducer partition.
    let ab = one_partition(&wc, b"a b", 0, 1).remove(0);
    let mut ba = ab[..18].to_vec();
    ba.extend_from_slice(&[1, b'b', 1, 1, b'a', 1, 0, 0, 0, 0]);
    assert_eq!(&ab[18..24], &[1, b'a', 1, 1, b'b', 1]);
    reseal(&mut ba);
    assert!(reduce(&[(at(0), &ba)]).contains("strictly increasing"));
    let mut zero = ab.clone();
    zero[20] = 0;
    reseal(&mut zero);
    assert!(reduce(&[(at(0), &zero)]).contains("count 0"));
    let mut utf8 = ab.clone();
    utf8[19] = 0xff;
    reseal(&mut utf8);
    assert!(reduce(&[(at(0), &utf8)]).contains("UTF-8"));
}

fn any_app() -> impl Strategy<Value = AppSpec> {
    prop_oneof![
        Just(spec("wordcount", &[])),
        Just(spec("grep", &["pattern=a."])),
        Just(spec("topk", &["field=0"])),
        Just(spec("index", &[])),
        Just(synthetic()),
    ]
}

proptest! {
    #[test]
    fn random_bytes_never_panic_reduce(app in any_app(), bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert!(app.reduce(POP, &[(at(0), &bytes)]).is_err() || bytes.len() >= 18);
    }

    #[test]
    fn mutated_partitions_never_panic_reduce(
        app in any_app(),
        text in "[a-c \n]{0,60}",
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
    ) {
        let mut p = app.map(at(0), text.as_bytes(), 1).unwrap().partitions.remove(0);
        for (i, b) in edits {
            let n = p.len();
            p[i % n] = b;
        }
        p.truncate(cut % (p.len() + 1));
        // Ok or an error; what matters is that it returns.
        if let Ok(partial) = app.reduce(POP, &[(at(0), &p)]) {
            prop_assert_eq!(partial.kept, 1);
        }
    }

    #[test]
    fn maps_never_panic_and_reduce_back(app in any_app(), input in proptest::collection::vec(any::<u8>(), 0..300), reduces in 1u32..5) {
        let out = app.map(at(0), &input, reduces).unwrap();
        for p in &out.partitions {
            prop_assert!(app.reduce(POP, &[(at(0), p)]).is_ok());
        }
    }
}

// ---------------------------------------------------------------- sample_partitions

#[test]
fn sample_partitions_keeps_enough_and_is_deterministic() {
    let sizes: Vec<u64> = (0..40).map(|i| 100 + (i * 37) % 90).collect();
    let total: u64 = sizes.iter().sum();
    for keep in [1, 500, 1234, total / 2, total - 1] {
        let a = sample_partitions(&sizes, keep, &mut rng(9));
        let b = sample_partitions(&sizes, keep, &mut rng(9));
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] < w[1]), "ascending, distinct");
        let kept: u64 = a.iter().map(|&i| sizes[i]).sum();
        assert!(kept >= keep);
        // It stops at the first draw that reaches `keep`: one partition fewer falls short.
        assert!(kept < keep + sizes.iter().max().unwrap());
    }
    assert_ne!(
        sample_partitions(&sizes, total / 2, &mut rng(1)),
        sample_partitions(&sizes, total / 2, &mut rng(2))
    );
    let all: Vec<usize> = (0..40).collect();
    assert_eq!(sample_partitions(&sizes, total, &mut rng(0)), all);
    assert_eq!(sample_partitions(&sizes, u64::MAX, &mut rng(0)), all);
    assert!(sample_partitions(&sizes, 0, &mut rng(0)).is_empty());
    assert!(sample_partitions(&[], 10, &mut rng(0)).is_empty());
}

#[test]
fn sample_partitions_is_uniform() {
    let sizes = [10u64; 10];
    let mut r = rng(77);
    let mut hits = [0u32; 10];
    for _ in 0..3000 {
        for i in sample_partitions(&sizes, 30, &mut r) {
            hits[i] += 1;
        }
    }
    // Each partition is kept with probability 0.3: 900 ± 4σ (σ ≈ 25).
    assert!(hits.iter().all(|&h| (800..=1000).contains(&h)), "{hits:?}");
}

// ---------------------------------------------------------------- specs

fn parse_err(name: &str, params: &[&str]) -> String {
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    AppSpec::parse(name, &params).unwrap_err().to_string()
}

#[test]
fn parse_fills_defaults_and_names_what_it_accepts() {
    assert_eq!(spec("wordcount", &[]), AppSpec::Wordcount { top: 20 });
    assert_eq!(
        spec("grep", &["pattern=a=b"]),
        AppSpec::Grep {
            pattern: "a=b".into(),
            sample: 10
        }
    );
    assert_eq!(spec("topk", &["k=3"]), AppSpec::Topk { field: 0, k: 3 });
    assert_eq!(spec("index", &["top=7"]), AppSpec::Index { top: 7 });

    let e = parse_err("wc", &[]);
    assert!(e.contains("wordcount, grep, topk, index"), "{e}");
    let e = parse_err("topk", &["feild=2"]);
    assert!(
        e.contains("`feild`") && e.contains("field=N") && e.contains("k=N"),
        "{e}"
    );
    assert!(parse_err("grep", &[]).contains("needs `pattern=REGEX`"));
    assert!(parse_err("grep", &["pattern=("]).contains("invalid pattern `(`"));
    assert!(parse_err("wordcount", &["top=-1"]).contains("non-negative integer, found `-1`"));
    assert!(parse_err("wordcount", &["top"]).contains("KEY=VALUE"));
    assert!(parse_err("index", &["top=1", "top=2"]).contains("given twice"));
}

#[test]
fn specs_round_trip_through_json_and_name_their_kind() {
    for (app, kind) in [
        (spec("wordcount", &[]), "wordcount"),
        (spec("grep", &["pattern=ERROR"]), "grep:ERROR"),
        (spec("topk", &["field=6", "k=3"]), "topk:field=6"),
        (spec("index", &[]), "index"),
        (synthetic(), "synthetic"),
    ] {
        assert_eq!(app.kind(), kind);
        assert!(kind.starts_with(app.name()));
        let text = serde_json::to_string(&app).unwrap();
        assert_eq!(
            serde_json::from_str::<AppSpec>(&text).unwrap(),
            app,
            "{text}"
        );
    }
    let v = serde_json::to_value(spec("topk", &[])).unwrap();
    assert_eq!(v, json!({"app": "topk", "field": 0, "k": 10}));
    assert!(
        serde_json::from_value::<AppSpec>(json!({"app": "topk", "field": 0, "k": 1, "x": 1}))
            .is_err()
    );
}

#[test]
fn partials_and_stats_cross_processes_as_json() {
    let app = spec("index", &[]);
    let out = app.map(at(0), b"a b\na\n", 2).unwrap();
    let stats: MapStats =
        serde_json::from_str(&serde_json::to_string(&out.stats).unwrap()).unwrap();
    assert_eq!(stats, out.stats);
    let partial = app.reduce(POP, &[(at(0), &out.partitions[0])]).unwrap();
    let back: ReducePartial =
        serde_json::from_str(&serde_json::to_string(&partial).unwrap()).unwrap();
    assert_eq!(back, partial);
}

#[test]
fn zero_reduces_is_an_error() {
    assert_eq!(
        spec("wordcount", &[]).map(at(0), b"x", 0).unwrap_err(),
        AppError::NoReduces
    );
    assert_eq!(
        spec("wordcount", &[]).exact(&STORY, 0).unwrap_err(),
        AppError::NoReduces
    );
}

// ---------------------------------------------------------------- a reduce cut while folding

/// `app`'s map outputs of `splits` for one reducer, and its inputs in the order of `order`.
fn reducer_inputs<'a>(
    app: &AppSpec,
    splits: &[&[u8]],
    outputs: &'a mut Vec<(Split, MapOutput)>,
    order: &[usize],
) -> Vec<(Split, &'a [u8])> {
    let (list, _) = splits_of(splits);
    *outputs = list
        .iter()
        .map(|&s| (s, app.map(s, splits[s.index as usize], 1).unwrap()))
        .collect();
    order
        .iter()
        .map(|&i| (outputs[i].0, outputs[i].1.partitions[0].as_slice()))
        .collect()
}

#[test]
fn a_reduce_cut_while_folding_answers_from_the_partitions_it_folded() {
    let texts: Vec<String> = (0..6)
        .map(|i| format!("the cat {}\nsat on the mat\n", "a ".repeat(i + 1)))
        .collect();
    let splits: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    let (_, population) = splits_of(&splits);
    let app = spec("wordcount", &["top=3"]);
    let mut outputs = Vec::new();
    let inputs = reducer_inputs(&app, &splits, &mut outputs, &[4, 1, 5, 0, 3, 2]);
    // The cut comes before the fourth partition: asked before each one after the first.
    let (cut, asked) = cut_at_the_third_ask(&app, population, &inputs);
    assert_eq!(asked, 3);
    let folded = &inputs[..3];
    assert_eq!(cut.kept, 3);
    assert_eq!(
        cut.kept_bytes,
        folded.iter().map(|(s, _)| s.bytes).sum::<u64>()
    );
    assert_eq!(
        cut.input_bytes,
        folded.iter().map(|(_, b)| b.len() as u64).sum::<u64>()
    );
    // Just what a reduce of those three alone answers: its estimates scale from them.
    assert_eq!(cut, app.reduce(population, folded).unwrap());
    let whole = app.reduce(population, &inputs).unwrap();
    assert_eq!(whole.kept, 6);
    assert!(cut.counted < whole.counted);
    // Cut from the start, it still folds one partition: an answer from something.
    let first = app.reduce_until(population, &inputs, &mut || true).unwrap();
    assert_eq!(first, app.reduce(population, &inputs[..1]).unwrap());
    // Never cut, the order is the reduce's own business: the same partial as in map order.
    assert_eq!(
        app.reduce_until(population, &inputs, &mut || false)
            .unwrap(),
        whole
    );
}

#[test]
fn an_index_folded_in_any_order_lists_each_terms_lowest_postings() {
    // Seven maps of the same lines: the term is in every line, more than five postings.
    let text = "w x\nw\ny w\n";
    let splits: Vec<&[u8]> = (0..7).map(|_| text.as_bytes()).collect();
    let (_, population) = splits_of(&splits);
    let app = spec("index", &["top=3"]);
    let mut outputs = Vec::new();
    let inputs = reducer_inputs(&app, &splits, &mut outputs, &[6, 3, 5, 0, 2, 1, 4]);
    // Uncut, any order lists what map order does: w's first five are maps 0 and 1's.
    let shuffled = app
        .reduce_until(population, &inputs, &mut || false)
        .unwrap();
    assert_eq!(shuffled, app.reduce(population, &inputs).unwrap());
    let w = shuffled.top.iter().find(|e| e.key == "w").unwrap();
    let at: Vec<(u32, u32)> = w.postings.iter().map(|p| (p.map, p.line)).collect();
    assert_eq!(at, [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2)]);
    // Cut after three maps (6, 3, 5): the lowest postings among those.
    let (cut, _) = cut_at_the_third_ask(&app, population, &inputs);
    assert_eq!(cut.kept, 3);
    for entry in &cut.top {
        assert!(!entry.postings.is_empty());
        assert!(
            entry.postings.iter().all(|p| [3, 5, 6].contains(&p.map)),
            "{entry:?}"
        );
        let mut sorted = entry.postings.clone();
        sorted.sort_by_key(|p| (p.map, p.line));
        assert_eq!(entry.postings, sorted);
        assert_eq!(entry.postings[0].map, 3, "{entry:?}");
    }
}

/// `reduce_until` with a cut that says yes at its third ask (before the fourth partition),
/// and how often it was asked.
fn cut_at_the_third_ask(
    app: &AppSpec,
    population: Population,
    inputs: &[(Split, &[u8])],
) -> (ReducePartial, u32) {
    let mut asked = 0;
    let cut = app
        .reduce_until(population, inputs, &mut || {
            asked += 1;
            asked >= 3
        })
        .unwrap();
    (cut, asked)
}
