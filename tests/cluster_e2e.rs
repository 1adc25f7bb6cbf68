//! The live cluster end to end: a real rm and three real nodemanagers on 127.0.0.1 (ephemeral
//! ports), an application whose master runs as a container, a forged token refused, a kill that
//! stops the container, and a nodemanager that dies and is marked LOST. Waits poll with a
//! deadline; nothing sleeps for a fixed time.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

mod support;
use support::*;

#[test]
fn a_cluster_on_loopback_runs_a_master_refuses_forgeries_kills_and_loses_nodes() {
    let tmp = work_dir("yard-e2e");
    let rm = rm_in(&tmp, &["--node-expiry-ms", "1000"]);
    let nms: Vec<Daemon> = (0..3)
        .map(|i| nm(&rm, &tmp.join(format!("nm{i}"))))
        .collect();
    await_running(&rm, 3);

    // Submit an application whose master is a plain command.
    let http = admin_client(&format!("http://{}", rm.addr));
    let base = format!("http://{}/ws/v1/cluster", rm.addr);
    let created: Value = http
        .post(format!("{base}/apps/new-application"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = created["application-id"].as_str().unwrap().to_owned();
    let submission = json!({
        "application-id": id, "application-name": "e2e", "queue": "default",
        "am-container-spec": {"commands": {"command": "echo master of $APPLICATION_ID > master.txt; exec sleep 60"},
                              "environment": {"entry": [{"key": "MODE", "value": "e2e"}]}}
    });
    assert_eq!(
        http.post(format!("{base}/apps"))
            .json(&submission)
            .send()
            .unwrap()
            .status(),
        202
    );

    // The master runs on one nodemanager, in its own directory, with its logs.
    let (host, master) = eventually("the master container", || {
        nms.iter()
            .find_map(|n| containers_on(n).into_iter().next().map(|c| (n, c)))
    });
    let dir = PathBuf::from(master["dir"].as_str().unwrap());
    let written = eventually("the master's output", || {
        std::fs::read_to_string(dir.join("master.txt")).ok()
    });
    assert_eq!(written.trim(), format!("master of {id}"));
    assert!(
        Path::new(master["stdout"].as_str().unwrap()).exists()
            && Path::new(master["stderr"].as_str().unwrap()).exists()
    );
    let app: Value = get(&format!("{base}/apps/{id}"));
    assert_eq!(
        app["app"]["state"], "ACCEPTED",
        "the master has not registered"
    );

    // A forged token is refused by the nodemanager.
    let forged = json!({"token": {"containerId": "container_x", "nodeId": host.addr, "memoryMb": 1, "vcores": 1,
                                    "expiresMs": i64::MAX, "signature": "00".repeat(32)},
                        "command": ["/bin/true"]});
    let refused = http
        .post(format!("http://{}/ws/v1/node/containers", host.addr))
        .json(&forged)
        .send()
        .unwrap();
    assert_eq!(refused.status(), 403);
    let why: Value = refused.json().unwrap();
    assert!(
        why["error"].as_str().unwrap().contains("signature"),
        "{why}"
    );
    let missing = json!({"token": null, "command": ["/bin/true"]});
    assert_eq!(
        http.post(format!("http://{}/ws/v1/node/containers", host.addr))
            .json(&missing)
            .send()
            .unwrap()
            .status(),
        403
    );

    // Killing the application stops its container on the node.
    let killed = http
        .put(format!("{base}/apps/{id}/state"))
        .json(&json!({"state": "KILLED"}))
        .send()
        .unwrap();
    assert_eq!(killed.status(), 202);
    eventually("the master stopped", || {
        containers_on(host).is_empty().then_some(())
    });
    assert_eq!(get(&format!("{base}/apps/{id}"))["app"]["state"], "KILLED");

    // A nodemanager that dies is marked LOST.
    let victim = nms[2].addr.clone();
    drop(nms.into_iter().nth(2));
    eventually("the dead node marked LOST", || {
        node_states(&rm)
            .iter()
            .any(|(n, s)| *n == victim && s == "LOST")
            .then_some(())
    });
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn the_client_commands_submit_list_show_kill_and_say_what_went_wrong() {
    let tmp = work_dir("yard-cli");
    let rm = rm_in(&tmp, &[]);
    let node = nm(&rm, &tmp.join("nm0"));
    let url = format!("http://{}", rm.addr);
    eventually("the node", || (node_states(&rm).len() == 1).then_some(()));

    let (code, stdout, stderr) = yard(&[
        "submit",
        "--rm",
        &url,
        "--name",
        "sleeper",
        "--user",
        "bob",
        "--command",
        "exec sleep 60",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let id = stdout.trim().to_owned();
    assert!(id.starts_with("application_"), "{stdout}");

    // `yarn application -list` habits: a total line, then the active apps.
    let (_, table, _) = yard(&["apps", "--rm", &url]);
    assert!(
        table.starts_with(
            "Total number of applications (application-types: [] and states: \
             [SUBMITTED, ACCEPTED, RUNNING]):1\n"
        ),
        "{table}"
    );
    let header = table.lines().nth(1).unwrap();
    for column in ["ID", "TYPE", "STATE", "STARTED", "ELAPSED", "TRACKING-URL"] {
        assert!(header.contains(column), "{column}: {table}");
    }
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("sleeper") && l.contains("bob")),
        "{table}"
    );
    let (_, json, _) = yard(&[
        "apps",
        "--rm",
        &url,
        "--states",
        "accepted,running",
        "--json",
    ]);
    let listed: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(listed["apps"]["app"][0]["id"], id.as_str());
    let (_, shown, _) = yard(&["app", "--rm", &url, &id]);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("name") && l.ends_with("sleeper")),
        "{shown}"
    );
    // No key runs into its value, the longest ones included.
    for key in ["applicationPriority", "unmanagedApplication"] {
        assert!(
            shown.lines().any(|l| l.starts_with(&format!("{key}  "))),
            "{key}: {shown}"
        );
    }
    let (_, nodes, _) = yard(&["nodes", "--rm", &url]);
    assert!(nodes.starts_with("Total Nodes:1\n"), "{nodes}");
    assert!(
        nodes
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with(&node.addr) && l.contains("RUNNING")),
        "{nodes}"
    );
    eventually("the master running", || {
        (!containers_on(&node).is_empty()).then_some(())
    });

    assert_eq!(yard(&["kill", "--rm", &url, &id]).0, 0);
    eventually("the master stopped", || {
        containers_on(&node).is_empty().then_some(())
    });
    // Killing again, or an unknown id: the rm's own explanation, exit code 2.
    let (code, _, stderr) = yard(&["kill", "--rm", &url, &id]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("KILLED") || stderr.contains("Killed"),
        "{stderr}"
    );
    // A finished app leaves the default list; --all and --states still find it.
    let (_, active, _) = yard(&["apps", "--rm", &url]);
    assert!(
        active.starts_with("Total number") && !active.contains(&id),
        "{active}"
    );
    for filter in [&["--all"][..], &["--states", "killed"]] {
        let (code, listed, stderr) = yard(&[&["apps", "--rm", &url][..], filter].concat());
        assert_eq!(code, 0, "{stderr}");
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with(&id) && l.contains("KILLED")),
            "{filter:?}: {listed}"
        );
    }
    let (_, shown, _) = yard(&["app", "--rm", &url, &id]);
    let finished = shown
        .lines()
        .find(|l| l.starts_with("finishedTime"))
        .unwrap();
    assert!(
        finished.ends_with(" UTC") && finished.contains('-'),
        "{shown}"
    );
    // Unknown filter values: exit 2, naming the valid ones.
    for (args, valid) in [
        (&["apps", "--states", "BOGUS"][..], "RUNNING"),
        (&["nodes", "--states", "busy"][..], "DECOMMISSIONED"),
    ] {
        let (code, _, stderr) = yard(&[args, &["--rm", &url][..]].concat());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(valid), "{args:?}: {stderr}");
    }
    let (code, _, stderr) = yard(&["app", "--rm", &url, "application_0_0000"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no application application_0_0000"),
        "{stderr}"
    );
    // No rm at all: exit 1 and where it looked, said once (reqwest's wrappers repeated the
    // URL twice more).
    let (code, _, stderr) = yard(&["nodes", "--rm", "http://127.0.0.1:9"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot reach the rm at http://127.0.0.1:9: Connection refused"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("http://127.0.0.1:9").count(), 1, "{stderr}");
    // A job without its input: 2, before any call, the flag and the hint said once.
    let (code, _, stderr) = yard(&["submit", "wordcount", "--rm", "http://127.0.0.1:9"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--input: wordcount reads a dataset"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("yard data ls").count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn applications_are_still_known_after_the_rm_restarts() {
    let tmp = work_dir("yard-restart");
    let mut rm = rm_in(&tmp, &[]);
    let db = rm_db(&tmp);
    let db = db.to_str().unwrap();
    let url = format!("http://{}", rm.addr);
    let (code, stdout, stderr) = yard(&[
        "submit",
        "--rm",
        &url,
        "--name",
        "survivor",
        "--deadline",
        "1h",
        "--command",
        "exec sleep 60",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let id = stdout.trim().to_owned();
    assert_eq!(yard(&["kill", "--rm", &url, &id]).0, 0);
    // Stop the rm gracefully (SIGTERM) and start a new one on the same database.
    terminate(&mut rm);
    let again = start(&["rm", "--bind", "127.0.0.1:0", "--state-db", db]);
    let (code, shown, stderr) = yard(&[
        "app",
        "--rm",
        &format!("http://{}", again.addr),
        &id,
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let app: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        (app["app"]["name"].as_str(), app["app"]["state"].as_str()),
        (Some("survivor"), Some("KILLED"))
    );
    // The client reads its clock just before it submits, and the deadline is in the
    // submission: an hour after that, a few ms before the rm stamps the submission.
    let hour_after_submission =
        app["yard"]["deadlineMs"].as_i64().unwrap() - app["app"]["startedTime"].as_i64().unwrap();
    assert!(
        (3_590_000..=3_660_000).contains(&hour_after_submission),
        "{app}"
    );
    drop(again);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn settings_come_from_flags_then_environment_then_the_config_file() {
    let tmp = work_dir("yard-config");
    let config = tmp.join("yard.toml");
    let db = |name: &str| tmp.join(name).to_str().unwrap().to_owned();
    std::fs::write(
        &config,
        format!(
            "[rm]\nbind = \"127.0.0.1:0\"\nstate_db = \"{}\"\n",
            db("file.db")
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    // Which database the rm opened tells where its setting came from.
    let from_file = start(&["rm", "--config", config]);
    assert!(Path::new(&db("file.db")).exists(), "the file's state_db");
    drop(from_file);
    let env_db = db("env.db");
    let from_env = start_with_env(
        &["rm", "--config", config],
        &[("YARD_RM_STATE_DB", &env_db)],
    );
    assert!(
        Path::new(&env_db).exists(),
        "the environment beats the file"
    );
    drop(from_env);
    let flag_db = db("flag.db");
    let from_flag = start_with_env(
        &["rm", "--config", config, "--state-db", &flag_db],
        &[("YARD_RM_STATE_DB", &env_db)],
    );
    assert!(
        Path::new(&flag_db).exists(),
        "the flag beats the environment"
    );
    drop(from_flag);
    // A misspelt key is bad input: exit 2, naming the file and the key.
    let bad = tmp.join("bad.toml");
    std::fs::write(&bad, "[rm]\nnode_expiry = 5\n").unwrap();
    let (code, _, stderr) = yard(&["rm", "--config", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bad.toml") && stderr.contains("node_expiry"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// What each container on a nodemanager printed: (container id, stdout), read from its work dir.
fn outputs(work_dir: &Path) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = std::fs::read_dir(work_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let out = std::fs::read_to_string(e.path().join("stdout")).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), out))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn a_distributed_shell_runs_where_it_asked_hears_of_lost_nodes_and_is_killed_whole() {
    let tmp = work_dir("yard-e2e-shell");
    let rm = rm_in(&tmp, &["--node-expiry-ms", "1000"]);
    let rm_url = format!("http://{}", rm.addr);
    let dirs: Vec<PathBuf> = (0..3).map(|i| tmp.join(format!("nm{i}"))).collect();
    let mut nms: Vec<Option<Daemon>> = dirs.iter().map(|d| Some(nm(&rm, d))).collect();
    let ids: Vec<String> = nms
        .iter()
        .map(|n| n.as_ref().unwrap().addr.clone())
        .collect();
    await_running(&rm, 3);
    let on: Vec<String> = ids.iter().map(|id| format!("--on={id}")).collect();
    let shell = |extra: &[&str], command: &[&str]| {
        let mut args = vec!["shell", "--rm", &rm_url];
        args.extend(on.iter().map(String::as_str));
        args.extend(extra);
        args.push("--");
        args.extend(command);
        yard(&args)
    };

    // One container on each named node: each prints its working directory, which lies under
    // the work dir of the nodemanager that ran it.
    let (code, out, err) = shell(&[], &["/bin/sh", "-c", "pwd"]);
    assert_eq!(code, 0, "{out}{err}");
    let id = out.lines().next().unwrap().to_owned();
    assert_eq!(
        out.lines().nth(1),
        Some(format!("{id} FINISHED SUCCEEDED").as_str()),
        "{out}"
    );
    for dir in &dirs {
        let tasks: Vec<(String, String)> = outputs(dir)
            .into_iter()
            .filter(|(cid, out)| out.trim() == dir.join(cid).to_str().unwrap())
            .collect();
        assert_eq!(
            tasks.len(),
            1,
            "one task container ran in {}: {:?}",
            dir.display(),
            outputs(dir)
        );
    }
    let master_log = dirs
        .iter()
        .flat_map(|d| outputs(d))
        .find(|(_, out)| out.starts_with(&format!("registered {id}")))
        .expect("the master's log")
        .1;
    assert!(
        master_log.contains("3 containers ended, 0 failed"),
        "{master_log}"
    );
    let reported = get(&format!("{rm_url}/ws/v1/yard/apps/{id}"))["app"].clone();
    assert_eq!(reported["processedFraction"], 1.0, "{reported}");
    assert_eq!(reported["answer"], json!({"containers": 3, "succeeded": 3}));

    // A long-running shell: a node that dies under it is reported to its master as LOST, and
    // killing the application stops every container it has left.
    let (code, out, err) = shell(&["--no-wait"], &["sleep", "60"]);
    assert_eq!(code, 0, "{out}{err}");
    let id = out.trim().to_owned();
    let running = || -> Vec<usize> {
        nms.iter()
            .map(|n| n.as_ref().map_or(0, |n| containers_on(n).len()))
            .collect()
    };
    let per_node = eventually("the master and three tasks running", || {
        let r = running();
        (r.iter().sum::<usize>() == 4).then_some(r)
    });
    // The master's node runs two containers; a node with one runs only a task.
    let victim = per_node.iter().position(|&n| n == 1).unwrap();
    let master_dir = dirs[per_node.iter().position(|&n| n == 2).unwrap()].clone();
    nms[victim] = None;
    let lost = eventually("the master told of the lost task", || {
        outputs(&master_dir).into_iter().find(|(_, out)| {
            out.starts_with(&format!("registered {id}")) && out.contains("ended Lost")
        })
    });
    assert!(lost.1.contains("ended Lost exit None"), "{}", lost.1);
    let (code, _, err) = yard(&["kill", "--rm", &rm_url, &id]);
    assert_eq!(code, 0, "{err}");
    eventually("every container of the killed application stopped", || {
        (nms.iter().flatten().all(|n| containers_on(n).is_empty())).then_some(())
    });
    assert_eq!(
        get(&format!("{rm_url}/ws/v1/cluster/apps/{id}"))["app"]["state"],
        "KILLED"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_restarted_rm_takes_back_running_work_and_the_job_still_finishes() {
    let tmp = work_dir("yard-e2e-wp");
    let mut rm = rm_in(&tmp, &[]);
    let db = rm_db(&tmp);
    let db = db.to_str().unwrap();
    let (addr, url) = (rm.addr.clone(), format!("http://{}", rm.addr));
    let dirs: Vec<PathBuf> = (0..2).map(|i| tmp.join(format!("nm{i}"))).collect();
    let nms: Vec<Daemon> = dirs.iter().map(|d| nm(&rm, d)).collect();
    await_running(&rm, 2);
    // Two tasks that run until a flag file appears.
    let flag = tmp.join("go");
    let wait = format!("while [ ! -e '{}' ]; do sleep 0.05; done", flag.display());
    let (code, out, err) = yard(&[
        "shell",
        "--rm",
        &url,
        "--no-wait",
        "--on",
        &nms[0].addr,
        "--on",
        &nms[1].addr,
        "--",
        "/bin/sh",
        "-c",
        &wait,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let id = out.trim().to_owned();
    let metrics =
        |url: &str| get(&format!("{url}/ws/v1/cluster/metrics"))["clusterMetrics"].clone();
    eventually("the master and both tasks running", || {
        (nms.iter().map(|n| containers_on(n).len()).sum::<usize>() == 3
            && metrics(&url)["containersAllocated"] == 3)
            .then_some(())
    });

    // The rm goes away and comes back on the same address and database.
    terminate(&mut rm);
    let again = start(&["rm", "--bind", &addr, "--state-db", db]);
    assert_eq!(again.addr, addr);
    eventually(
        "the nodes back, with their three containers taken back",
        || {
            let m = metrics(&url);
            (m["activeNodes"] == 2 && m["containersAllocated"] == 3).then_some(())
        },
    );
    assert_eq!(
        get(&format!("{url}/ws/v1/cluster/apps/{id}"))["app"]["state"],
        "RUNNING"
    );
    assert_eq!(
        nms.iter().map(|n| containers_on(n).len()).sum::<usize>(),
        3,
        "nothing was restarted"
    );

    // The tasks end; their master hears of it through the new rm and finishes the job.
    std::fs::write(&flag, "").unwrap();
    let app = eventually("the job finished", || {
        let app = get(&format!("{url}/ws/v1/cluster/apps/{id}"))["app"].clone();
        (app["state"] == "FINISHED").then_some(app)
    });
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}");
    let master_log = dirs
        .iter()
        .flat_map(|d| outputs(d))
        .find(|(_, out)| out.starts_with(&format!("registered {id}")))
        .expect("the master's log")
        .1;
    assert!(
        master_log.contains("2 containers ended, 0 failed"),
        "{master_log}"
    );
    drop(again);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_dataset_is_split_replicated_onto_the_nodes_and_recorded() {
    let tmp = work_dir("yard-e2e-data");
    let rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let _nms: Vec<Daemon> = (0..3)
        .map(|i| nm(&rm, &tmp.join(format!("nm{i}"))))
        .collect();
    await_running(&rm, 3);
    let file = tmp.join("input.txt");
    let content: String = (0..200)
        .map(|i| format!("line {i} of the input\n"))
        .collect();
    std::fs::write(&file, &content).unwrap();

    let (code, out, err) = yard(&[
        "data",
        "put",
        "--rm",
        &url,
        "logs",
        file.to_str().unwrap(),
        "--block-size",
        "512",
        "--replication",
        "2",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, shown, err) = yard(&["data", "ls", "--rm", &url, "logs", "--json"]);
    assert_eq!(code, 0, "{err}");
    let dataset: Value = serde_json::from_str(&shown).unwrap();
    let blocks = dataset["blocks"].as_array().unwrap();
    assert!(blocks.len() >= content.len() / 512, "{dataset}");
    let grant = upload_grant(&url, "logs");
    let mut rebuilt = String::new();
    for b in blocks {
        let nodes: Vec<&str> = b["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(nodes.len(), 2, "{b}");
        assert_ne!(nodes[0], nodes[1]);
        let copies: Vec<String> = nodes
            .iter()
            .map(|n| {
                let url = format!(
                    "http://{n}/ws/v1/node/blocks/logs/{}",
                    b["block"].as_str().unwrap()
                );
                reqwest::blocking::Client::new()
                    .get(url)
                    .bearer_auth(&grant)
                    .send()
                    .unwrap()
                    .text()
                    .unwrap()
            })
            .collect();
        assert_eq!(copies[0], copies[1], "replicas are identical");
        assert_eq!(copies[0].len() as u64, b["bytes"].as_u64().unwrap());
        assert!(copies[0].ends_with('\n'), "blocks end at line ends");
        rebuilt += &copies[0];
    }
    assert_eq!(rebuilt, content, "the blocks in order are the file");

    // Bad input: a clear refusal, exit 2, and nothing recorded.
    for args in [
        vec![
            "data",
            "put",
            "--rm",
            &url,
            "bad/name",
            file.to_str().unwrap(),
        ],
        vec!["data", "put", "--rm", &url, "missing", "/no/such/file"],
        vec![
            "data",
            "put",
            "--rm",
            &url,
            "tiny",
            file.to_str().unwrap(),
            "--block-size",
            "0",
        ],
    ] {
        let (code, _, err) = yard(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("error"), "{err}");
    }
    let (_, list, _) = yard(&["data", "ls", "--rm", &url, "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&list).unwrap()["datasets"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `yard apps` has an OUTCOME column and `yard app` a `deadlineOutcome` line: every
/// application with a deadline is met, empty, missed or pending as the rm judged it, beside
/// YARN's state and final status (a late answer stays FINISHED / SUCCEEDED, and missed).
#[test]
fn yard_apps_and_yard_app_mark_each_deadline_met_empty_missed_or_pending() {
    let tmp = work_dir("yard-cli-outcome");
    // No nodemanager: no master process runs, the test stands in for the masters.
    let rm = rm_in(&tmp, &[]);
    let url = format!("http://{}", rm.addr);
    let submit = |deadline: Option<&str>| {
        let mut args = vec!["submit", "--rm", &url, "--command", "exec sleep 60"];
        if let Some(d) = deadline {
            args.extend(["--deadline", d]);
        }
        let (code, out, err) = yard(&args);
        assert_eq!(code, 0, "{err}");
        out.trim().to_owned()
    };
    let met = submit(Some("10m"));
    let empty = submit(Some("10m"));
    let pending = submit(Some("10m"));
    let late = submit(Some("1s"));
    let none = submit(None);
    finish_as_master(&tmp, &url, &met, Some(0.5), true);
    finish_as_master(&tmp, &url, &empty, Some(0.0), true);
    // Past its deadline (and the second an answer may take to arrive): missed while it runs,
    // and still missed once it answers and finishes SUCCEEDED.
    let outcome_of = |id: &str| {
        let (_, json, _) = yard(&["apps", "--rm", &url, "--all", "--json"]);
        let listed: Value = serde_json::from_str(&json).unwrap();
        listed["apps"]["app"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["deadlineOutcome"].clone())
    };
    eventually_for(
        "the late one missed",
        std::time::Duration::from_secs(60),
        || (outcome_of(&late)? == "missed").then_some(()),
    );
    finish_as_master(&tmp, &url, &late, Some(1.0), true);

    let (code, table, err) = yard(&["apps", "--rm", &url, "--all"]);
    assert_eq!(code, 0, "{err}");
    let header = table.lines().nth(1).unwrap();
    let at = header.find("OUTCOME").unwrap_or_else(|| panic!("{table}"));
    let columns = |id: &str| -> (Vec<String>, String) {
        let row = table
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {table}"));
        let words = row.split_whitespace().map(str::to_owned).collect();
        (
            words,
            row[at..].split_whitespace().next().unwrap().to_owned(),
        )
    };
    for (id, state, final_status, outcome) in [
        (&met, "FINISHED", "SUCCEEDED", "met"),
        (&empty, "FINISHED", "SUCCEEDED", "empty"),
        (&late, "FINISHED", "SUCCEEDED", "missed"),
        (&pending, "ACCEPTED", "UNDEFINED", "pending"),
        (&none, "ACCEPTED", "UNDEFINED", "-"),
    ] {
        let (words, shown) = columns(id);
        assert_eq!(shown, outcome, "{id}: {table}");
        // Beside YARN's state and final status, not instead of them.
        let state_at = words.iter().position(|w| w == final_status).unwrap();
        assert!(
            ["ACCEPTED", "RUNNING", state].contains(&words[state_at - 1].as_str()),
            "{id}: {table}"
        );
        let (_, shown, _) = yard(&["app", "--rm", &url, id]);
        let line = shown
            .lines()
            .find(|l| l.starts_with("deadlineOutcome"))
            .unwrap_or_else(|| panic!("{shown}"));
        assert_eq!(line.split_whitespace().nth(1), Some(outcome), "{shown}");
        // Its deadline once, as a UTC time with how it stands (not raw ms, not twice).
        let deadlines: Vec<&str> = shown
            .lines()
            .filter(|l| l.starts_with("deadlineMs"))
            .collect();
        assert_eq!(deadlines.len(), 1, "{shown}");
        let deadline = deadlines[0];
        match outcome {
            "-" => assert!(deadline.ends_with("  -"), "{shown}"),
            "pending" => assert!(
                deadline.ends_with(" ago)") || deadline.contains(" UTC (in "),
                "{shown}"
            ),
            ended => assert!(deadline.ends_with(&format!(" UTC ({ended})")), "{shown}"),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
