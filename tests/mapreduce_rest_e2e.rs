//! A Dart job over REST alone: a live rm and three nodemanagers on 127.0.0.1, a dataset, and
//! nothing but HTTP calls to submit the job, watch its progress and estimate against its
//! deadline, and read its answer with the processed fraction and interval.

use serde_json::Value;

mod support;
use support::*;

#[test]
fn a_dart_job_is_submitted_watched_and_answered_over_rest_alone() {
    let tmp = work_dir("yard-mr-rest");
    let c = cluster(&tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);

    // Maps of at least 0.4 s each: the job runs long enough to be watched.
    let (id, location) = submit_grep(&http, &c.url, "rest-grep", 0.4);
    assert_eq!(location, format!("{JOBS}/{id}"));

    // Watch it: progress from its master, an estimate set against the deadline.
    let mut watched: Vec<Value> = Vec::new();
    let done = watch_job(&http, &c.url, &location, &tmp, &id, |job| {
        if job["progress"].is_object() {
            watched.push(job["progress"].clone());
        }
    });
    assert_eq!(
        done["finalStatus"],
        "SUCCEEDED",
        "{done}\n{}",
        master_log(&tmp, &id)
    );
    let running: Vec<&Value> = watched.iter().filter(|p| p["phase"] == "running").collect();
    assert!(
        !running.is_empty(),
        "the job proper was seen running: {watched:?}"
    );
    let last = running.last().unwrap();
    assert_eq!(last["policy"], "dart");
    assert!(
        last["maps"].as_u64().unwrap() >= 8,
        "1 MiB in 128 KiB blocks: {last}"
    );
    assert!(last["mapsDone"].as_u64() <= last["maps"].as_u64());
    assert!(
        running
            .iter()
            .any(|p| p["estimatedEndMs"].is_i64() && p["slackMs"].is_i64()),
        "an estimate against the deadline: {running:?}"
    );
    assert!(!done["estimates"].as_array().unwrap().is_empty(), "{done}");

    // The answer, with its processed fraction and interval.
    let answer: Value = http
        .get(format!("{}{location}/answer", c.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let a = &answer["answer"];
    assert_eq!(
        a["processedFraction"], 1.0,
        "a loose deadline reads everything: {a}"
    );
    let matches = &a["answer"]["matchingLines"];
    let (low, estimate, high) = (
        matches["low"].as_f64().unwrap(),
        matches["estimate"].as_f64().unwrap(),
        matches["high"].as_f64().unwrap(),
    );
    assert!(
        low <= estimate && estimate <= high && estimate > 0.0,
        "{matches}"
    );
    assert_eq!(a["answer"]["job"]["deadlineMet"], true, "{a}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
