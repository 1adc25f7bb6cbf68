//! The job's answer: totals estimated from the maps' statistics, top lists merged from the
//! reducers' partials, and notes that say what the numbers can and cannot claim.

use serde_json::{Map, Value, json};

use super::approx::{Estimate, Sums};
use super::{AppSpec, MapStats, Population, ReducePartial, Split};

fn estimate_fields(e: &Estimate, into: &mut Map<String, Value>) {
    into.insert("estimate".into(), json!(e.estimate));
    into.insert("low".into(), json!(e.low));
    into.insert("high".into(), json!(e.high));
    into.insert("observed".into(), json!(e.observed));
    into.insert("stdError".into(), json!(e.std_error));
}

fn estimate_json(e: &Estimate) -> Value {
    let mut m = Map::new();
    estimate_fields(e, &mut m);
    Value::Object(m)
}

/// The `n` largest estimates over all reducers (their keys are disjoint), ties by key; each
/// `{name: key, estimate…}` plus the postings when there are any.
fn merge_top(parts: &[&ReducePartial], n: usize, name: &str) -> Value {
    let mut all: Vec<_> = parts.iter().flat_map(|p| &p.top).collect();
    let value = |e: &Estimate| e.estimate.unwrap_or(-1.0);
    all.sort_by(|a, b| {
        value(&b.estimate)
            .total_cmp(&value(&a.estimate))
            .then_with(|| a.key.cmp(&b.key))
    });
    all.truncate(n);
    let rows = all.into_iter().map(|t| {
        let mut m = Map::new();
        m.insert(name.into(), json!(t.key));
        estimate_fields(&t.estimate, &mut m);
        if !t.postings.is_empty() {
            m.insert("postings".into(), json!(t.postings));
        }
        Value::Object(m)
    });
    Value::Array(rows.collect())
}

pub(crate) fn answer(
    spec: &AppSpec,
    population: Population,
    maps: &[(Split, MapStats)],
    reduces: &[ReducePartial],
) -> Value {
    let n = population.maps;
    // A map listed twice counts once; one outside the job is not part of its sample.
    let mut read: Vec<&(Split, MapStats)> = maps.iter().filter(|(s, _)| s.index < n).collect();
    read.sort_by_key(|(s, _)| s.index);
    read.dedup_by_key(|(s, _)| s.index);
    let k = read.len() as u32;
    let bytes_read: u64 = read.iter().map(|(s, _)| s.bytes).sum();
    let total = |field: fn(&MapStats) -> u64| {
        let mut s = Sums::default();
        for (split, stats) in &read {
            s.add(split.bytes, field(stats));
        }
        estimate_json(&s.estimate(population))
    };
    let observed = |field: fn(&MapStats) -> u64| read.iter().map(|(_, s)| field(s)).sum::<u64>();

    let mut parts: Vec<&ReducePartial> = reduces.iter().collect();
    // A partition reported twice counts once (its keys would otherwise be listed twice).
    parts.sort_by_key(|p| p.partition.unwrap_or(u32::MAX));
    parts.dedup_by_key(|p| p.partition);
    let reducers = parts.iter().find_map(|p| p.reduces);
    let reported = parts.iter().filter(|p| p.partition.is_some()).count();
    let every_partition = reducers.is_some_and(|r| {
        reported == r as usize && parts.iter().all(|p| p.reduces == Some(r) && p.kept >= n)
    });
    let exact = n == 0 || (k == n && every_partition);

    let mut notes: Vec<String> = Vec::new();
    if !exact && k > 0 {
        notes.push(format!(
            "estimates scale what {k} of {n} maps read up to the whole input; they assume the \
             maps read are a random sample of its blocks (the input is not ordered by what is \
             counted)"
        ));
    }
    if n > 0 && k == 0 {
        notes.push("no map finished: there is nothing to estimate from".into());
    } else if k == 1 && n > 1 {
        notes.push(
            "one map finished: totals have no variance estimate, so their intervals are \
             unbounded above (high = null)"
                .into(),
        );
    }
    for p in &parts {
        let Some(id) = p.partition else { continue };
        if p.kept == 1 && n > 1 {
            notes.push(format!(
                "reducer {id} kept one partition: its keys' intervals are unbounded above"
            ));
        }
    }
    match reducers {
        Some(r) if reported < r as usize => notes.push(format!(
            "{reported} of {r} reducers reported partitions: the others' keys are missing from \
             the lists"
        )),
        None if n > 0 && k > 0 => {
            notes.push("no reducer reported a partition: the lists are empty".into());
        }
        _ => {}
    }

    let mut v = json!({
        "app": spec.name(),
        "exact": exact,
        "mapsRead": k,
        "maps": n,
        "bytesRead": bytes_read,
        "bytes": population.bytes,
    });
    let sum = |f: fn(&ReducePartial) -> u64| parts.iter().map(|p| f(p)).sum::<u64>();
    let fields: Vec<(&str, Value)> = match spec {
        AppSpec::Wordcount { top } => vec![
            ("words", total(|s| s.words)),
            ("distinctWordsSeen", json!(sum(|p| p.distinct_keys))),
            ("top", merge_top(&parts, *top, "word")),
        ],
        AppSpec::Grep { pattern, sample } => {
            let lines: Vec<Value> = read
                .iter()
                .flat_map(|(split, s)| {
                    s.sample
                        .iter()
                        .map(move |l| json!({"map": split.index, "line": l.line, "text": l.text}))
                })
                .take(*sample)
                .collect();
            vec![
                ("pattern", json!(pattern)),
                ("matchingLines", total(|s| s.matching_lines)),
                ("lines", total(|s| s.lines)),
                ("sample", Value::Array(lines)),
                ("matches", merge_top(&parts, *sample, "text")),
            ]
        }
        AppSpec::Topk { field, k: top } => vec![
            ("field", json!(field)),
            ("keys", merge_top(&parts, *top, "key")),
            ("lines", total(|s| s.lines)),
            ("skippedLines", json!(observed(|s| s.skipped_lines))),
        ],
        AppSpec::Index { top } => vec![
            ("distinctTermsSeen", json!(sum(|p| p.distinct_keys))),
            ("postingsSeen", json!(sum(|p| p.counted))),
            ("top", merge_top(&parts, *top, "term")),
        ],
        AppSpec::Synthetic { .. } => vec![
            ("records", total(|s| s.records)),
            ("outputBytes", json!(observed(|s| s.output_bytes))),
            ("recordsReduced", json!(sum(|p| p.records))),
        ],
        AppSpec::Streaming {
            mapper, reducer, ..
        } => {
            // A user's command is not a count the estimator can scale: its output is of what
            // was read, and the notes say only that.
            notes = vec![format!(
                "the output is the commands' over what {k} of {n} maps read, not scaled: no \
                 bounds are claimed for a user's command"
            )];
            let (kept, lines): (Vec<&String>, u64) = match reducer {
                None => (
                    read.iter().flat_map(|(_, s)| &s.output).collect(),
                    observed(|s| s.output_lines),
                ),
                Some(_) => (
                    parts.iter().flat_map(|p| &p.output).collect(),
                    sum(|p| p.output_lines),
                ),
            };
            // Reducers the deadline guard cut while their command ran: the command answered
            // for the keys it was fed, and the processed fraction counts only those (the
            // task reports its kept bytes thinned by the share fed).
            let mut cut = Vec::new();
            for p in &parts {
                let (Some(id), Some(c)) = (p.partition, p.command_cut) else {
                    continue;
                };
                let fed = c.fed_fraction();
                notes.push(format!(
                    "the deadline guard cut reducer {id} while its command ran: it was fed \
                     {:.1} % of its input ({} of {} bytes, {}), so its output is of \
                     those keys{}; processedFraction counts only what it was fed",
                    fed * 100.0,
                    c.fed_bytes,
                    c.input_bytes,
                    if c.stopped {
                        "to where it was stopped"
                    } else {
                        "whole keys"
                    },
                    if c.stopped {
                        ", as far as it got before it was stopped"
                    } else {
                        ""
                    }
                ));
                cut.push(json!({"reduce": id, "fedBytes": c.fed_bytes,
                    "inputBytes": c.input_bytes, "fedFraction": fed, "stopped": c.stopped}));
            }
            let cap = super::streaming::OUTPUT_CAP;
            let output: Vec<&String> = kept.into_iter().take(cap).collect();
            vec![
                ("reducesCut", Value::Array(cut)),
                ("mapper", json!(mapper)),
                ("reducer", json!(reducer.as_deref().unwrap_or("NONE"))),
                ("truncated", json!(lines > output.len() as u64)),
                ("output", json!(output)),
                ("outputLines", json!(lines)),
                ("outputCap", json!(cap)),
                (
                    "bounds",
                    json!(match reducer {
                        None => "none: a user mapper",
                        Some(_) => "none: a user reducer",
                    }),
                ),
            ]
        }
    };
    if let Value::Object(m) = &mut v {
        for (key, value) in fields {
            m.insert(key.into(), value);
        }
        m.insert("notes".into(), json!(notes));
    }
    v
}
