//! A job's output is a dataset (issue 31 item 3), on a live cluster (127.0.0.1): a word count
//! with `--output` writes `part-r-NNNNN` parts whose `yard data cat` is exactly the words
//! counted directly; `yard data get` writes them as files; a taken output name is refused
//! before anything runs (409, exit 2); a map-only streaming job's parts are its input again;
//! a job that fails leaves no dataset; the output survives an rm restart; and `yard data rm`
//! removes a dataset and its blocks from the nodes.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

mod support;
use support::*;

/// `word<TAB>count` lines read into a map; no word twice.
fn counts_of(text: &str) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for line in text.lines() {
        let (word, count) = line.split_once('\t').expect("word<TAB>count");
        let count = count.parse().expect("a count");
        assert!(
            counts.insert(word.to_owned(), count).is_none(),
            "{word} twice"
        );
    }
    counts
}

fn apps(http: &reqwest::blocking::Client, url: &str) -> usize {
    let v: Value = http
        .get(format!("{url}/ws/v1/cluster/apps"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    v["apps"]["app"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_jobs_output_is_a_dataset_read_back_exactly_refused_when_taken_and_kept_across_restarts() {
    let tmp = work_dir("yard-outputs");
    let c = cluster(&tmp);
    // 256 KiB in 32 KiB blocks: eight maps.
    let file = put_dataset(&c.url, &tmp, "text", "books", "256KiB", "32KiB", 2, 11);
    let http = admin_client(&c.url);

    // The built-in word count, every block read, its output as the dataset `counts`.
    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "books",
        "--policy",
        "full",
        "--reduces",
        "2",
        "--output",
        "counts",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let submitted: Value = serde_json::from_str(&out).unwrap();
    let app = &submitted["app"];
    assert_eq!(app["processedFraction"], 1.0, "{app}");
    assert_eq!(
        app["answer"]["outputDataset"],
        json!({"dataset": "counts", "parts": 2, "tasks": 2, "bytes": app["answer"]["outputDataset"]["bytes"],
               "complete": true, "processedFraction": 1.0}),
        "{app}"
    );

    let (code, cat, err) = yard(&["data", "cat", "counts", "--rm", &c.url]);
    assert_eq!(code, 0, "{err}");
    let (_, exact) = exact_counts(&file);
    assert_eq!(
        counts_of(&cat),
        exact,
        "the parts hold every word's exact count"
    );
    assert_eq!(
        app["answer"]["outputDataset"]["bytes"],
        cat.len(),
        "the answer's bytes are the parts'"
    );
    // Two parts, Hadoop's names, each a reducer's keys sorted.
    let (code, ls, err) = yard(&["data", "ls", "counts", "--json", "--rm", &c.url]);
    assert_eq!(code, 0, "{err}");
    let ls: Value = serde_json::from_str(&ls).unwrap();
    let blocks: Vec<&str> = ls["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["block"].as_str().unwrap())
        .collect();
    assert_eq!(blocks, ["part-r-00000", "part-r-00001"], "{ls}");

    // `yard data get`: one file per part, together the same bytes.
    let dir = tmp.join("got");
    let get = || {
        yard(&[
            "data",
            "get",
            "counts",
            dir.to_str().unwrap(),
            "--rm",
            &c.url,
        ])
    };
    let (code, out, err) = get();
    assert_eq!(code, 0, "{out}{err}");
    let mut parts = Vec::new();
    for name in &blocks {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let keys: Vec<&str> = text
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        assert!(keys.is_sorted(), "{name}'s keys are sorted");
        parts.push(text);
    }
    assert_eq!(parts.concat(), cat);
    // It does not overwrite: bad input, exit 2.
    let (code, _, err) = get();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not overwrite"), "{err}");

    // The name is taken now: refused before anything runs, by the CLI (exit 2) and over REST
    // (409 naming it), and no application is created.
    let before = apps(&http, &c.url);
    let (code, out, err) = yard(&[
        "submit",
        "wordcount",
        "--input",
        "books",
        "--output",
        "counts",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("FileAlreadyExistsException") && err.contains("counts"),
        "{err}"
    );
    let refused = http
        .post(format!("{}{JOBS}", c.url))
        .json(
            &json!({"job": {"app": "grep", "input": "books", "params": {"pattern": "a"},
                              "output": "books.copy"}}),
        )
        .send()
        .unwrap();
    assert_eq!(refused.status().as_u16(), 202, "a free name is taken");
    let second = http
        .post(format!("{}{JOBS}", c.url))
        .json(&json!({"job": {"app": "wordcount", "input": "books", "output": "books.copy"}}))
        .send()
        .unwrap();
    assert_eq!(second.status().as_u16(), 409, "a name a running job writes");
    let body: Value = second.json().unwrap();
    assert!(
        body.to_string().contains("books.copy") && body.to_string().contains("is writing"),
        "{body}"
    );
    assert_eq!(
        apps(&http, &c.url),
        before + 1,
        "only the grep job was created"
    );

    // A map-only streaming job: each map's part is its mapper's stdout, so `cat`'s parts, in
    // order, are the input again (each line in the split where it starts).
    let (code, out, err) = yard(&[
        "streaming",
        "-input",
        "books",
        "-output",
        "lines",
        "-mapper",
        "cat",
        "-reducer",
        "NONE",
        "--policy",
        "full",
        "--json",
        "--rm",
        &c.url,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Value = serde_json::from_str(&out).unwrap();
    let (made, maps) = (
        &lines["app"]["answer"]["outputDataset"],
        &lines["app"]["answer"]["job"]["maps"],
    );
    assert_eq!(made["parts"], *maps, "a part per map: {made}");
    assert_eq!(made["complete"], true, "{made}");
    let (code, again, err) = yard(&["data", "cat", "lines", "--rm", &c.url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, std::fs::read_to_string(&file).unwrap());

    // A job that fails commits nothing: no dataset.
    let (code, out, err) = yard(&[
        "streaming",
        "-input",
        "books",
        "-output",
        "never",
        "-mapper",
        "cat",
        "-reducer",
        "echo broken >&2; exit 4",
        "--policy",
        "full",
        "--rm",
        &c.url,
    ]);
    assert_ne!(code, 0, "{out}{err}");
    let (code, _, err) = yard(&["data", "ls", "never", "--rm", &c.url]);
    assert_eq!(code, 2, "no dataset `never`: {err}");

    // The rm goes and comes back on the same address and state: the output is still there,
    // and reads back the same from the nodes.
    let addr = c.rm.addr.clone();
    let Cluster {
        mut rm, nms, url, ..
    } = c;
    terminate(&mut rm);
    let again = rm_again(&tmp, &addr);
    await_running(&again, 3);
    let (code, after, err) = yard(&["data", "cat", "counts", "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(after, cat);
    // Any dataset reads back, not only outputs: `books` as `yard data put` cut it.
    let (code, books, err) = yard(&["data", "cat", "books", "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(books, std::fs::read_to_string(&file).unwrap());
    // An unknown dataset is bad input.
    let (code, _, err) = yard(&["data", "cat", "nosuch", "--rm", &url]);
    assert_eq!(code, 2, "{err}");

    // `yard data rm`: the dataset is gone at once, and its blocks from every node with their
    // next heartbeats; the other datasets stay whole.
    let held = |dataset: &str| -> usize {
        (0..nms.len())
            .filter(|i| tmp.join(format!("nm{i}/data/blocks/{dataset}")).exists())
            .count()
    };
    assert!(held("lines") > 0, "the nodes hold the parts of `lines`");
    let (code, out, err) = yard(&["data", "rm", "lines", "--rm", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("removed lines"), "{out}");
    let (code, _, err) = yard(&["data", "ls", "lines", "--rm", &url]);
    assert_eq!(code, 2, "no dataset `lines` any more: {err}");
    eventually_for("the nodes delete `lines`", Duration::from_secs(30), || {
        (held("lines") == 0).then_some(())
    });
    let (code, after_rm, err) = yard(&["data", "cat", "counts", "--rm", &url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(after_rm, cat);
    // Again: there is nothing by that name now.
    let (code, _, err) = yard(&["data", "rm", "lines", "--rm", &url]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("lines"), "{err}");
    drop(nms);
    drop(again);
    let _ = std::fs::remove_dir_all(&tmp);
}
