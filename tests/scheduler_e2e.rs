//! The cluster policy on the real binary: `yard rm --scheduler NAME` (or `YARD_RM_SCHEDULER`,
//! or `scheduler` in the config file's `[rm]`), said by `GET /ws/v1/cluster/scheduler`; an
//! unknown name is bad input; `yard submit --deadline` puts the deadline in the submission and
//! `yard apps` shows it with the quota.

mod support;

use support::*;

fn policy_of(rm: &Daemon) -> String {
    let info = get(&format!("http://{}/ws/v1/cluster/scheduler", rm.addr));
    let info = &info["scheduler"]["schedulerInfo"];
    format!("{} {}", info["policy"], info["type"])
}

#[test]
fn the_scheduler_comes_from_the_flag_the_environment_or_the_config_file() {
    let tmp = work_dir("yard-scheduler");
    let db = |name: &str| tmp.join(name).to_str().unwrap().to_owned();
    let config = tmp.join("yard.toml");
    std::fs::write(
        &config,
        "[rm]\nbind = \"127.0.0.1:0\"\nscheduler = \"edf\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let plain = rm_in(&tmp, &[]);
    assert_eq!(policy_of(&plain), "\"fifo\" \"fifoScheduler\"");
    drop(plain);
    let from_file = start(&["rm", "--config", config, "--state-db", &db("f.db")]);
    assert_eq!(policy_of(&from_file), "\"edf\" \"edfScheduler\"");
    drop(from_file);
    let from_env = start_with_env(
        &["rm", "--config", config, "--state-db", &db("e.db")],
        &[("YARD_RM_SCHEDULER", "minedf")],
    );
    assert_eq!(policy_of(&from_env), "\"minedf\" \"minEdfScheduler\"");
    drop(from_env);
    let from_flag = start_with_env(
        &[
            "rm",
            "--config",
            config,
            "--state-db",
            &db("g.db"),
            "--scheduler",
            "minedf-wc",
        ],
        &[("YARD_RM_SCHEDULER", "minedf")],
    );
    assert_eq!(policy_of(&from_flag), "\"minedf-wc\" \"minEdfWcScheduler\"");
    drop(from_flag);
    // An unknown name: exit 2, one line listing the choices.
    let (code, _, stderr) = yard(&["rm", "--scheduler", "lifo", "--state-db", &db("x.db")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("lifo") && stderr.contains("fifo, fair, edf, minedf, minedf-wc"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn submit_sends_the_deadline_in_the_submission_and_apps_shows_it_with_the_quota() {
    let tmp = work_dir("yard-scheduler-apps");
    let rm = rm_in(&tmp, &["--scheduler", "minedf-wc"]);
    let url = format!("http://{}", rm.addr);
    let (code, stdout, stderr) = yard(&[
        "submit",
        "--rm",
        &url,
        "--name",
        "due",
        "--deadline",
        "10m",
        "--command",
        "exec sleep 60",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let id = stdout.trim().to_owned();
    let app = get(&format!("{url}/ws/v1/cluster/apps/{id}"));
    let deadline = app["app"]["deadlineMs"].as_i64().expect("a deadline");
    let started = app["app"]["startedTime"].as_i64().unwrap();
    assert!((590_000..=600_000).contains(&(deadline - started)), "{app}");
    // A shell master registers no job model: no quota of its own (served as EDF would).
    let (code, table, stderr) = yard(&["apps", "--rm", &url]);
    assert_eq!(code, 0, "{stderr}");
    let header = table.lines().nth(1).unwrap();
    assert!(
        header.contains("DEADLINE") && header.contains("QUOTA"),
        "{table}"
    );
    let row = table.lines().find(|l| l.contains(&id)).expect("the app");
    assert!(row.contains("in 9m") || row.contains("in 10m"), "{table}");
    let (code, _, _) = yard(&["kill", "--rm", &url, &id]);
    assert_eq!(code, 0);
    let _ = std::fs::remove_dir_all(&tmp);
}
