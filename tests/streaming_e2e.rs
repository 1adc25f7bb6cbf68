//! Hadoop Streaming on a live cluster (127.0.0.1): a word count whose mapper and reducer are
//! the user's own `sh`/`awk` commands, submitted over REST, equals the words counted directly;
//! a mapper that fails fails the job with its exit code and stderr in the diagnostics. With
//! Hadoop's options: a shipped Python mapper over two inputs whose lines cross blocks, map
//! only (every line once, no reduce started); a combiner, key fields and KeyFieldBasedPartitioner;
//! malformed records, a missing command and bad options as the user sees them.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt as _;

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
        "-inputformat",
        "x",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown option -inputformat"), "{err}");

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

/// `yard streaming ARGS --rm URL --json`: the exit code, the app's JSON (`Null` when it
/// printed none) and stderr.
fn streaming(c: &Cluster, dir: &std::path::Path, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["streaming"];
    all.extend(args);
    all.extend(["--json", "--rm", &c.url]);
    // In `dir`, where the shipped scripts are, as the user's shell would be.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yard"))
        .args(&all)
        .current_dir(dir)
        .env("YARD_HOME", yard_home())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json, err)
}

/// The diagnostics of the application `app` (`yard streaming --json`'s) at the rm.
fn diagnostics_of(c: &Cluster, app: &Value) -> String {
    let diagnostics = app_diagnostics(&c.url, app["app"]["id"].as_str().unwrap());
    // The job's own view (yard streaming --json prints it) says the same.
    assert_eq!(app["app"]["diagnostics"], diagnostics.as_str(), "{app}");
    diagnostics
}

/// `text` put as dataset `name` in blocks of `block` (a line longer than a block is cut
/// where the block ends, so lines cross blocks).
fn put_text(c: &Cluster, dir: &std::path::Path, name: &str, text: &str, block: &str) {
    let file = dir.join(format!("{name}.txt"));
    std::fs::write(&file, text).unwrap();
    put_file(&c.url, &file, name, block, 2);
}

/// The diagnostics of a streaming job over `short` whose `mapper` fails, each map given
/// `attempts`: it exits 1.
fn failed_mapper(
    c: &Cluster,
    dir: &std::path::Path,
    mapper: &str,
    attempts: u32,
) -> (Value, String) {
    let attempts = format!("mapreduce.map.maxattempts={attempts}");
    let args = [
        "-input", "short", "-mapper", mapper, "-D", &attempts, "--policy", "full",
    ];
    let (code, app, err) = streaming(c, dir, &args);
    assert_eq!(code, 1, "{err}");
    let diagnostics = diagnostics_of(c, &app);
    (app, diagnostics)
}

#[test]
fn hadoop_s_options_shipped_scripts_combiners_key_fields_and_failures_as_a_user_sees_them() {
    let tmp = work_dir("yard-streaming-options");
    let c = cluster(&tmp);
    // Lines up to 2.5 blocks long, cut by `yard data put` wherever a block ends; a second,
    // short input.
    let long: String = (0..40)
        .map(|i| match i % 6 {
            0 => format!("{i} {}\n", "x".repeat(2500 + i * 13)),
            _ => format!("{i} short\n"),
        })
        .collect();
    put_text(&c, &tmp, "long", &long, "1KiB");
    let short: String = (0..15).map(|i| format!("s{i} tail\n")).collect();
    put_text(&c, &tmp, "short", &short, "64B");

    // A shipped Python mapper, map-only over both inputs: every line once, whole.
    let script = tmp.join("m.py");
    std::fs::write(
        &script,
        "import sys\nfor line in sys.stdin:\n    line = line.rstrip('\\n')\n    print('%d\\t%s' % (len(line), line[:12]))\n",
    )
    .unwrap();
    let (code, app, err) = streaming(
        &c,
        &tmp,
        &[
            "-input",
            "long",
            "-input",
            "short",
            "-mapper",
            "python3 m.py",
            "-file",
            "m.py",
            "-reducer",
            "NONE",
            "--policy",
            "full",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let app = &app["app"];
    assert_eq!(app["processedFraction"], 1.0, "{app}");
    let mut got: Vec<String> = app["answer"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    let mut want: Vec<String> = long
        .lines()
        .chain(short.lines())
        .map(|l| format!("{}\t{}", l.len(), &l[..l.len().min(12)]))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "every line exactly once, whole");
    let id = app["id"].as_str().unwrap();
    let log = master_log(&tmp, id);
    assert!(
        !log.contains("reduce 0 launched"),
        "a map-only job starts no reduce: {log}"
    );

    // A combiner whose output is what the reduces read ("c" + its sum), two-field keys
    // (user.item), each user's keys on one reducer (-k1,1), three reduces.
    let events: String = (0..300)
        .map(|i| format!("u{} i{}\n", i % 7, i % 5))
        .collect();
    put_text(&c, &tmp, "events", &events, "512B");
    let (code, app, err) = streaming(
        &c,
        &tmp,
        &[
            "-input",
            "events",
            "-mapper",
            r#"awk '{ print $1 "." $2 ".1" }'"#,
            "-combiner",
            r#"awk -F '\t' '{ n[$1] += $2 } END { for (k in n) print k "\tc" n[k] }'"#,
            "-reducer",
            r#"awk -F '\t' '{ split($1, a, "."); n[a[1]] += substr($2, 2) } END { for (u in n) print u "\t" n[u] }'"#,
            "-D",
            "stream.map.output.field.separator=.",
            "-D",
            "stream.num.map.output.key.fields=2",
            "-D",
            "mapreduce.map.output.key.field.separator=.",
            "-D",
            "mapreduce.partition.keypartitioner.options=-k1,1",
            "-partitioner",
            "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner",
            "-D",
            "mapreduce.job.reduces=3",
            "--policy",
            "full",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let app = &app["app"];
    assert_eq!(app["spec"]["reduces"], 3, "{app}");
    let mut users: Vec<String> = app["answer"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    users.sort();
    // Each user once (all its keys met in one reducer), its events all counted (the
    // combiner's "c" sums read back).
    let want: Vec<String> = (0..7)
        .map(|u| format!("u{u}\t{}", (0..300).filter(|i| i % 7 == u).count()))
        .collect();
    assert_eq!(users, want, "{app}");

    // Malformed records: a key that is not UTF-8 fails the map, once (maxattempts 1), the
    // reason in the diagnostics.
    let (_, diagnostics) = failed_mapper(&c, &tmp, r"printf 'ok\t1\n\377\376\t2\n'", 1);
    assert!(
        diagnostics.contains("the mapper wrote a malformed record on its output line 2")
            && diagnostics.contains("not valid UTF-8")
            && diagnostics.contains("failed 1 times (the limit is 1)"),
        "{diagnostics}"
    );
    // A command that is nowhere: sh's 127, explained.
    let (app, diagnostics) = failed_mapper(&c, &tmp, "no-such-mapper", 2);
    assert!(
        diagnostics.contains("exited with code 127 (sh's code for a command not found")
            && diagnostics.contains("no-such-mapper")
            && diagnostics.contains("the limit is 2"),
        "{diagnostics}"
    );
    let (code, out, _) = yard(&["app", app["app"]["id"].as_str().unwrap(), "--rm", &c.url]);
    assert!(out.contains("code 127"), "{code}: {out}");

    // Refused before submission, exit 2.
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (args, says) in [
        (
            &["-input", "short", "-mapper", "m.py", "-file", "m.py"][..],
            "not executable: chmod +x",
        ),
        (
            &["-input", "short", "-mapper", "cat", "-file", "gone.py"][..],
            "--file gone.py: cannot read it",
        ),
        (
            &["-input", "short", "-mapper", "./gone.py"][..],
            "add -file gone.py",
        ),
        (
            &[
                "-input",
                "short",
                "-mapper",
                "cat",
                "-D",
                "mapreduce.job.queuename=q",
            ][..],
            "not a setting yard honours",
        ),
        (
            &["-input", "short", "-mapper", "cat", "-input", "nothing"][..],
            "no dataset nothing",
        ),
    ] {
        let (code, _, err) = streaming(&c, &tmp, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A reduce cut by the deadline guard while its command runs: the command's stdin ends at a
/// key boundary and the reduce answers with what the command wrote. Before, only a kill
/// reached it: past the deadline the answer went without it (abandoned, no output).
#[test]
fn a_reducer_cut_by_the_guard_while_it_runs_answers_with_what_it_wrote() {
    let tmp = work_dir("yard-streaming-cut");
    let c = cluster(&tmp);
    // 2,000 keys of 30 bytes in 4 KiB blocks: fifteen maps, three for the task sampler.
    let keys = 2000;
    let text: String = (0..keys)
        .map(|i| format!("k{i:05} {}\n", "x".repeat(22)))
        .collect();
    put_text(&c, &tmp, "keys", &text, "4KiB");
    // Writes a line per key as it reads it; fast for the first 600 (the sampler's reduces
    // read fewer), then 50 ms a key: the whole input would take over a minute.
    let reducer = "n=0; while read -r line; do n=$((n+1)); echo \"$n\"; \
                   if [ $n -gt 600 ]; then sleep 0.05; fi; done";
    let (code, app, err) = streaming(
        &c,
        &tmp,
        &[
            "-input",
            "keys",
            "-mapper",
            "cat",
            "-reducer",
            reducer,
            "-numReduceTasks",
            "1",
            "--deadline",
            "25s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let app = &app["app"];
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}");
    let answer = &app["answer"];
    let job = &answer["job"];
    assert_eq!(job["guardFired"], true, "{job}");
    assert_eq!(job["reducesAbandoned"], 0, "the cut reduce answered: {job}");
    let lines = answer["outputLines"].as_u64().unwrap();
    assert!(lines > 0 && lines < keys, "{lines} lines: {answer}");
    // What it wrote, in order, up to where it was stopped.
    let output: Vec<&str> = answer["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let counted: Vec<String> = (1..=output.len()).map(|n| n.to_string()).collect();
    assert_eq!(output, counted, "{answer}");
    // And the answer says it was cut: which reducer, how much of its input its command was
    // fed (it wrote a line per key, so at least its lines' worth), in a note too, and the
    // processed fraction counts only that.
    let cut = answer["reducesCut"].as_array().unwrap();
    assert_eq!(cut.len(), 1, "{answer}");
    assert_eq!(cut[0]["reduce"], 0, "{answer}");
    let (fed, input) = (
        cut[0]["fedBytes"].as_u64().unwrap(),
        cut[0]["inputBytes"].as_u64().unwrap(),
    );
    let share = cut[0]["fedFraction"].as_f64().unwrap();
    assert!(fed < input && share < 1.0, "{answer}");
    assert!(
        fed / 30 >= lines,
        "{lines} lines from {fed} bytes: {answer}"
    );
    assert!(
        answer["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("cut reducer 0 while its command ran")),
        "{answer}"
    );
    let processed = job["processedFraction"].as_f64().unwrap();
    assert!(processed <= share + 1e-3, "{processed} > {share}: {job}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
