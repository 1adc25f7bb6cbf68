//! Hadoop Streaming on a live cluster (127.0.0.1): a word count whose mapper and reducer are
//! the user's own `sh`/`awk` commands, submitted over REST, equals the words counted directly;
//! a mapper that fails fails the job with its exit code and stderr in the diagnostics.

use std::collections::HashMap;

use serde_json::{Value, json};

mod support;
use support::*;

/// Submits `params` as a streaming job over `books` under `full` with 2 reduces; the job's
/// last view and its `Location`.
fn run_streaming(
    http: &reqwest::blocking::Client,
    c: &Cluster,
    tmp: &std::path::Path,
    name: &str,
    params: Value,
) -> (Value, String) {
    let job = json!({"app": "streaming", "input": "books", "params": params,
                     "policy": "full", "reduces": 2});
    let submitted = http
        .post(format!("{}{JOBS}", c.url))
        .json(&json!({"job": job, "name": name}))
        .send()
        .unwrap();
    assert_eq!(
        submitted.status().as_u16(),
        202,
        "{}",
        submitted.text().unwrap()
    );
    let location = submitted.headers()["location"].to_str().unwrap().to_owned();
    let view: Value = submitted.json().unwrap();
    let id = view["job"]["id"].as_str().unwrap().to_owned();
    let done = watch_job(http, &c.url, &location, tmp, &id, |_| {});
    (done, location)
}

#[test]
fn a_streaming_word_count_equals_the_words_counted_and_a_failing_mapper_says_why() {
    let tmp = work_dir("yard-streaming");
    let c = cluster(&tmp);
    // 256 KiB in 32 KiB blocks: eight maps.
    let file = put_dataset(&c.url, &tmp, "text", "books", "256KiB", "32KiB", 2, 5);
    let http = admin_client(&c.url);

    // Words as the built-in wordcount finds them (ASCII text: alphanumeric runs, lowercased).
    let mapper = r#"tr -cs 'A-Za-z0-9' '\n' | tr 'A-Z' 'a-z' | awk 'NF { print $0 "\t1" }'"#;
    // Counts its key's consecutive lines: it relies on the shuffle's grouping.
    let reducer = r#"awk -F '\t' '$1 != k { if (NR > 1) print k "\t" n; k = $1; n = 0 } { n += $2 } END { if (NR) print k "\t" n }'"#;
    let (done, location) = run_streaming(
        &http,
        &c,
        &tmp,
        "streaming-wordcount",
        json!({"mapper": mapper, "reducer": reducer, "cmdenv": "LC_ALL=C"}),
    );
    assert_eq!(done["finalStatus"], "SUCCEEDED", "{done}");
    let answer: Value = http
        .get(format!("{}{location}/answer", c.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let a = &answer["answer"];
    assert_eq!(a["processedFraction"], 1.0, "{a}");
    let a = &a["answer"];
    assert_eq!(a["bounds"], "none: a user reducer", "{a}");
    let (_, exact) = exact_counts(&file);
    assert_eq!(
        a["outputLines"],
        exact.len(),
        "one line per distinct word: {a}"
    );
    let output = a["output"].as_array().unwrap();
    assert_eq!(output.len(), exact.len().min(1000), "{a}");
    let mut seen: HashMap<String, u64> = HashMap::new();
    for line in output {
        let (word, count) = line.as_str().unwrap().split_once('\t').unwrap();
        assert!(
            seen.insert(word.to_owned(), count.parse().unwrap())
                .is_none(),
            "{word} twice"
        );
    }
    for (word, count) in &seen {
        assert_eq!(exact.get(word), Some(count), "{word}");
    }

    // The same job with Hadoop's options on yard's command line: the same output.
    let (code, out, err) = yard(&[
        "streaming",
        "-input",
        "books",
        "-mapper",
        mapper,
        "-reducer",
        reducer,
        "-numReduceTasks",
        "2",
        "-cmdenv",
        "LC_ALL=C",
        "--policy",
        "full",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let cli: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(cli["app"]["answer"]["output"], a["output"], "{cli}");
    // An option yard does not take yet is named, before anything is submitted.
    // Map-only under Dart with a deadline: the maps' lines are the output, in map order.
    let (code, out, err) = yard(&[
        "streaming",
        "-input",
        "books",
        "-mapper",
        "cat",
        "-reducer",
        "NONE",
        "--deadline",
        "120s",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let dart: Value = serde_json::from_str(&out).unwrap();
    let app = &dart["app"];
    assert_eq!(app["spec"]["policy"], "dart", "{app}");
    assert_eq!(app["answer"]["bounds"], "none: a user mapper", "{app}");
    let fraction = app["processedFraction"].as_f64().unwrap_or_default();
    assert!(fraction > 0.0, "{app}");
    // A loose deadline reads every block (as a rule; a slow host may leave some).
    if fraction == 1.0 {
        let text = std::fs::read_to_string(&file).unwrap();
        let first: Vec<&str> = text.lines().take(1000).collect();
        assert_eq!(app["answer"]["output"], json!(first), "{app}");
    }

    let (code, _, err) = yard(&[
        "streaming",
        "-input",
        "books",
        "-combiner",
        "cat",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown option -combiner"), "{err}");

    let (done, _) = run_streaming(
        &http,
        &c,
        &tmp,
        "streaming-fails",
        json!({"mapper": "echo oops >&2; exit 3", "reducer": "NONE"}),
    );
    assert_eq!(done["finalStatus"], "FAILED", "{done}");
    let id = done["id"].as_str().unwrap();
    let report: Value = http
        .get(format!("{}/ws/v1/cluster/apps/{id}", c.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let diagnostics = report["app"]["diagnostics"].as_str().unwrap();
    assert!(
        diagnostics.contains("exited with code 3") && diagnostics.contains("oops"),
        "{diagnostics}\n{}",
        master_log(&tmp, id)
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
