//! Containers' logs end to end (issue 31 item 6): real daemons on 127.0.0.1, a `yard shell`
//! whose command writes known lines to stdout and stderr; `yard shell` prints them, `yard logs`
//! shows them after the application ended, after its node is gone and after an rm restart,
//! to its owner only; a node lost before it uploaded is named in the listing.

mod support;

use std::process::Command;

use serde_json::Value;
use support::*;
use yard_wire::auth::Principal;

/// `yard logs` with `token` as the caller's bearer token.
fn logs_as(token: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yard"))
        .arg("logs")
        .args(args)
        .env("YARD_HOME", yard_home())
        .env("YARD_TOKEN", token)
        .output()
        .expect("yard runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The listing's files as (container, file, source), once `done` holds of it.
fn listing_when(url: &str, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    eventually(what, || {
        let listing = get(&format!("{url}/ws/v1/yard/apps/{id}/logs"))["appLogs"].clone();
        done(&listing).then_some(listing)
    })
}

fn files(listing: &Value) -> Vec<&Value> {
    listing["files"]
        .as_array()
        .map(|f| f.iter().collect())
        .unwrap_or_default()
}

/// An rm (with `rm_flags`) and one nodemanager in a fresh `name` directory, and a `yard shell`
/// (with `shell_flags`) whose container runs `script`: the directory, the daemons, the rm's
/// URL and what the shell printed.
fn shell_on_one_node(
    name: &str,
    rm_flags: &[&str],
    shell_flags: &[&str],
    script: &str,
) -> (std::path::PathBuf, Daemon, Daemon, String, String) {
    let tmp = work_dir(name);
    let rm = rm_in(&tmp, rm_flags);
    let url = format!("http://{}", rm.addr);
    let node = nm(&rm, &tmp.join("nm0"));
    await_running(&rm, 1);
    let mut args = vec!["shell", "--rm", &url];
    args.extend(shell_flags);
    args.extend(["--", "/bin/sh", "-c", script]);
    let (code, out, err) = yard(&args);
    assert_eq!(code, 0, "{out}{err}");
    (tmp, rm, node, url, out)
}

#[test]
fn a_shells_output_is_printed_kept_after_it_ends_and_an_rm_restart_and_shown_to_its_owner_only() {
    let (tmp, mut rm, node, url, out) = shell_on_one_node(
        "yard-e2e-logs",
        &[],
        &[],
        "echo out-line-1; echo err-line-1 >&2; echo out-line-2",
    );
    let id = out.lines().next().unwrap().to_owned();
    let _leftovers = ProcessesOf::app(&id);
    // The final status, then the command's stdout under its header (not its stderr).
    let status = out.find(&format!("{id} FINISHED SUCCEEDED\n")).expect(&out);
    let output = out.find("out-line-1\nout-line-2\n").expect(&out);
    assert!(status < output, "{out}");
    assert!(out.contains(": stdout ("), "{out}");
    assert!(!out.contains("err-line-1"), "{out}");

    // Every file of the master and of the command's container aggregated at the rm.
    let listing = listing_when(&url, &id, "the logs aggregated", |l| {
        let f = files(l);
        f.len() == 4 && f.iter().all(|f| f["source"] == "aggregated")
    });
    assert_eq!(listing["missing"], serde_json::json!([]), "{listing}");
    assert_eq!(
        files(&listing)
            .iter()
            .filter(|f| f["master"] == true)
            .count(),
        2,
        "{listing}"
    );
    let command_stderr = files(&listing)
        .into_iter()
        .find(|f| f["master"] == false && f["file"] == "stderr")
        .cloned()
        .expect("the command's stderr");
    assert_eq!(command_stderr["bytes"], "err-line-1\n".len(), "{listing}");
    assert_eq!(command_stderr["cut"], false);

    let shown = |url: &str| {
        let (code, out, err) = yard(&["logs", "--rm", url, &id]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("out-line-1\nout-line-2\n"), "{out}");
        assert!(out.contains("err-line-1\n"), "{out}");
        assert_eq!(out.matches("==> container_").count(), 4, "{out}");
        out
    };
    shown(&url);
    // One container, its last line.
    let container = command_stderr["containerId"].as_str().unwrap();
    // A log file is text, served to a client that accepts only text (the rm's JSON routes
    // answer such a client 406).
    let plain = admin_client(&url)
        .get(format!(
            "{url}/ws/v1/yard/apps/{id}/logs/{container}/stderr"
        ))
        .header("Accept", "text/plain")
        .send()
        .unwrap();
    assert_eq!(plain.status().as_u16(), 200);
    assert_eq!(plain.text().unwrap(), "err-line-1\n");
    let (code, out, err) = yard(&[
        "logs",
        "--rm",
        &url,
        &id,
        "--container",
        container,
        "--tail",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("out-line-2\n") && !out.contains("out-line-1"),
        "{out}"
    );

    // The node and the rm go; a new rm on the same state still shows them.
    drop(node);
    terminate(&mut rm);
    let again = rm_in(&tmp, &[]);
    let again_url = format!("http://{}", again.addr);
    shown(&again_url);

    // Someone else: refused (403), bad input (exit 2); an unknown application likewise.
    let mallory = cluster_secret(&tmp).bearer_key().issue(&Principal::User {
        user: "mallory".into(),
    });
    let (code, out, err) = logs_as(&mallory, &["--rm", &again_url, &id]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("only its owner or an admin"), "{err}");
    assert!(!out.contains("out-line-1"), "{out}");
    let unknown = "application_1_9999";
    let (code, _, err) = yard(&["logs", "--rm", &again_url, unknown]);
    assert_eq!(code, 2, "{err}");
    // An rm that is not there: 1, as other commands.
    drop(again);
    let (code, _, err) = yard(&["logs", "--rm", &again_url, &id]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot reach the rm"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_running_containers_logs_come_from_its_node_and_a_lost_node_is_named() {
    let (tmp, _rm, node, url, out) = shell_on_one_node(
        "yard-e2e-logs-lost",
        &["--node-expiry-ms", "1000"],
        &["--no-wait"],
        "echo still-running; exec sleep 60",
    );
    let id = out.trim().to_owned();
    let _leftovers = ProcessesOf::app(&id);

    // While it runs: read from its nodemanager.
    eventually("the running command's line", || {
        let (code, out, _) = yard(&["logs", "--rm", &url, &id]);
        (code == 0 && out.contains("still-running\n") && out.contains("from its nodemanager"))
            .then_some(())
    });

    // Its node dies before the containers end: nothing was uploaded, and the listing says why.
    drop(node);
    // (Until the rm calls it lost, the listing says the node does not answer.)
    let lost = |m: &Value| {
        m["reason"]
            .as_str()
            .unwrap()
            .contains("was lost before it uploaded")
    };
    let listing = listing_when(&url, &id, "the lost node named", |l| {
        l["missing"]
            .as_array()
            .is_some_and(|m| m.len() == 2 && m.iter().all(lost))
    });
    assert_eq!(listing["files"], serde_json::json!([]), "{listing}");
    let (code, out, err) = yard(&["logs", "--rm", &url, &id]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("logs missing: node"), "{out}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn aggregated_logs_go_after_the_retention() {
    let (tmp, _rm, _node, url, out) = shell_on_one_node(
        "yard-e2e-logs-retain",
        &["--log-aggregation-retain-seconds", "5"],
        &[],
        "echo short-lived",
    );
    let id = out.lines().next().unwrap().to_owned();
    let _leftovers = ProcessesOf::app(&id);
    listing_when(&url, &id, "the logs aggregated", |l| {
        let f = files(l);
        f.len() == 4 && f.iter().all(|f| f["source"] == "aggregated")
    });
    let kept = std::path::PathBuf::from(format!("{}.app-logs", rm_db(&tmp).display())).join(&id);
    assert!(kept.is_dir(), "{}", kept.display());
    eventually("the logs removed after 5 s", || {
        (!kept.exists()
            && files(&get(&format!("{url}/ws/v1/yard/apps/{id}/logs"))["appLogs"]).is_empty())
        .then_some(())
    });
    let _ = std::fs::remove_dir_all(&tmp);
}
