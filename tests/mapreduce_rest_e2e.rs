//! A Dart job over REST alone: a live rm and three nodemanagers on 127.0.0.1, a dataset, and
//! nothing but HTTP calls to submit the job, watch its progress and estimate against its
//! deadline, and read its answer with the processed fraction and interval.

use serde_json::Value;

mod support;
use support::*;

/// A cluster in a fresh `name` directory with 1 MiB of text as the dataset `books` (8 blocks
/// of 128 KiB), and the admin's client.
fn with_books(name: &str) -> (std::path::PathBuf, Cluster, reqwest::blocking::Client) {
    let tmp = work_dir(name);
    let c = cluster(&tmp);
    put_dataset(&c.url, &tmp, "text", "books", "1MiB", "128KiB", 2, 3);
    let http = admin_client(&c.url);
    (tmp, c, http)
}

/// Waits until the job at `location` shows its job proper running (after any task sampler):
/// the moment then, ms since the epoch.
fn once_running(http: &reqwest::blocking::Client, url: &str, location: &str) -> i64 {
    eventually_for(
        "the job proper running",
        std::time::Duration::from_secs(120),
        || {
            let v: Value = http
                .get(format!("{url}{location}"))
                .send()
                .ok()?
                .json()
                .ok()?;
            (v["job"]["progress"]["phase"] == "running").then_some(())
        },
    );
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn a_dart_job_is_submitted_watched_and_answered_over_rest_alone() {
    let (tmp, c, http) = with_books("yard-mr-rest");

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
    // Posted without a seed: the rm drew one, the master ran with it, and the answer says
    // which (to repeat the run).
    let seed = &done["spec"]["seed"];
    assert!(seed.is_u64(), "{done}");
    assert_eq!(&a["answer"]["job"]["seed"], seed, "{a}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A deadline moved while the job runs (`PUT …/deadline`) reaches its master with the next
/// allocate reply: the policy hears it (`Event::DeadlineChanged`), and the answer is judged
/// against the new deadline, not the one the job was submitted with.
/// A job submitted without a deadline is guarded once it is given one: the guard was decided
/// at launch, so a deadline set later used to find no guard and the answer came when the maps
/// were done, however late.
#[test]
fn a_deadline_given_to_a_running_job_that_had_none_brings_its_guard() {
    let (tmp, c, http) = with_books("yard-mr-given");
    // Maps of at least 3 s: none of the job proper's first maps can end by a deadline 2 s
    // after it is seen running, so only the guard can answer by then.
    let (id, location) = submit_grep_due(&http, &c.url, "given-grep", 3.0, None);
    let now_ms = once_running(&http, &c.url, &location);
    set_deadline(&http, &c.url, &id, now_ms + 2_000);
    let done = watch_job(&http, &c.url, &location, &tmp, &id, |_| {});
    let log = master_log(&tmp, &id);
    assert_eq!(done["finalStatus"], "SUCCEEDED", "{done}\n{log}");
    assert!(log.contains("the deadline moved"), "{log}");
    assert!(log.contains("the deadline guard fires"), "{log}");
    let answer: Value = http
        .get(format!("{}{location}/answer", c.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let answered = &answer["answer"];
    assert!(
        answered["processedFraction"].as_f64().unwrap() < 1.0,
        "{answered}"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_deadline_moved_while_the_job_runs_reaches_its_master_and_its_answer() {
    let (tmp, c, http) = with_books("yard-mr-moved");
    // Submitted with 600 s; maps of at least 1 s keep the job proper running a while after
    // the rm first shows it running (the move must come before its last map ends).
    let (id, location) = submit_grep(&http, &c.url, "moved-grep", 1.0);
    let now_ms = once_running(&http, &c.url, &location);
    let moved = now_ms + 1_500_000;
    set_deadline(&http, &c.url, &id, moved);
    let done = watch_job(&http, &c.url, &location, &tmp, &id, |_| {});
    let log = master_log(&tmp, &id);
    assert_eq!(done["finalStatus"], "SUCCEEDED", "{done}\n{log}");
    assert!(log.contains("the deadline moved"), "{log}");
    let answer: Value = http
        .get(format!("{}{location}/answer", c.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let job = &answer["answer"]["answer"]["job"];
    // From the master's start: the submitted deadline was under 600 s away, the moved one
    // 1,500 s from after the job proper started.
    let seconds = job["deadlineSeconds"].as_f64().unwrap();
    let policy = job["policyDeadline"].as_f64().unwrap();
    assert!(seconds > 1_400.0 && seconds < 1_600.0, "{job}");
    assert!(policy > 1_300.0 && policy <= seconds, "{job}");
    drop(c);
    let _ = std::fs::remove_dir_all(&tmp);
}
