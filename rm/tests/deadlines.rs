//! Deadlines and the cluster policies over the rm's HTTP surface: a deadline is part of the
//! submission (yard's `deadline-ms`, or Hadoop's application tag `deadline=<epoch ms>`), bad
//! ones are 400s naming the field and change nothing, a registering master's job model gives
//! its quota, `GET /ws/v1/cluster/scheduler` says which policy runs and every quota, a
//! preempted container reaches its master as PREEMPTED, and all of it survives a restart.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, SECRET, T0, granted};
use yard_cluster::policy::{ClusterPolicy, JobModel};
use yard_rm::cluster::{Cluster, NewApp, Settings};
use yard_rm::store::Store;
use yard_wire::auth::ClusterSecret;
use yard_wire::deadline::Deadline;
use yard_wire::protocol::{RegisterNode, Resource};

/// An rm scheduling with `scheduler`, masters held to half the cluster.
fn harness(scheduler: ClusterPolicy) -> Harness {
    Harness::new(Settings {
        scheduler,
        master_share: 0.5,
        ..Settings::default()
    })
}

/// A job of `maps` maps of `seconds` each (largest 1.5×), map-only.
fn model(maps: u32, seconds: f64) -> Value {
    json!({"maps": maps, "reduces": 0,
           "profile": {"map": {"avg": seconds, "max": 1.5 * seconds}}})
}

#[tokio::test]
async fn the_deadline_comes_with_the_submission_in_its_body_or_as_a_hadoop_tag() {
    let h = harness(ClusterPolicy::Edf);
    let due = T0 + 90_000;
    let id = h.new_id().await;
    let (status, why) = h.submit(&id, json!({"deadline-ms": due})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{why}");
    assert_eq!(h.app(&id).await["deadlineMs"], due);
    let (_, yard) = h.get(&format!("/ws/v1/yard/apps/{id}")).await;
    assert_eq!(yard["app"]["deadlineMs"], due);
    // A YARN client sets it as a tag; the tags are kept and shown as YARN shows them.
    let tagged = h.new_id().await;
    let tags =
        json!({"application-tags": {"tag": ["team=search", format!("deadline={}", due + 1)]}});
    assert_eq!(h.submit(&tagged, tags).await.0, StatusCode::ACCEPTED);
    let app = h.app(&tagged).await;
    assert_eq!(app["deadlineMs"], due + 1);
    assert_eq!(
        app["applicationTags"],
        format!("team=search,deadline={}", due + 1)
    );
    // One tag as a bare string, or a plain list; the same deadline twice is one deadline.
    for (i, tags) in [
        json!({"tag": format!("deadline={due}")}),
        json!([format!("DEADLINE = {due}")]),
    ]
    .into_iter()
    .enumerate()
    {
        let id = h.new_id().await;
        let body = json!({"application-tags": tags, "deadline-ms": due});
        let (status, why) = h.submit(&id, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{i}: {why}");
        assert_eq!(h.app(&id).await["deadlineMs"], due);
    }
    // No deadline at all is fine; the list shows null.
    let plain = h.new_id().await;
    assert_eq!(h.submit(&plain, json!({})).await.0, StatusCode::ACCEPTED);
    let (_, list) = h.get("/ws/v1/cluster/apps").await;
    let listed = list["apps"]["app"].as_array().unwrap();
    assert_eq!(listed.len(), 5);
    let of = |id: &str| listed.iter().find(|a| a["id"] == id).unwrap().clone();
    assert_eq!(of(&id)["deadlineMs"], due);
    assert_eq!(of(&plain)["deadlineMs"], Value::Null);
    // The second call still works, and moves the deadline.
    let (status, moved) = h
        .call(
            Method::PUT,
            &format!("/ws/v1/yard/apps/{plain}/deadline"),
            Some(json!({"deadlineMs": due})),
        )
        .await;
    assert_eq!(
        (status, &moved["app"]["deadlineMs"]),
        (StatusCode::OK, &json!(due))
    );
}

#[tokio::test]
async fn bad_deadlines_are_400s_naming_the_field_and_submit_nothing() {
    let h = harness(ClusterPolicy::MinEdfWc);
    let id = h.new_id().await;
    let past = T0 - 1;
    let cases = [
        (json!({"deadline-ms": past}), "deadline-ms", "past"),
        (json!({"deadline-ms": T0}), "deadline-ms", "past"),
        (
            json!({"deadline-ms": "soon"}),
            "deadline-ms",
            "whole number",
        ),
        (
            json!({"deadline-ms": "1800000000000"}),
            "deadline-ms",
            "whole number",
        ),
        (
            json!({"deadline-ms": 1.8e12 + 0.5}),
            "deadline-ms",
            "whole number",
        ),
        (json!({"deadline-ms": 1e300}), "deadline-ms", "whole number"),
        (json!({"deadline-ms": -5}), "deadline-ms", "outside"),
        (json!({"deadline-ms": i64::MAX}), "deadline-ms", "outside"),
        (
            json!({"deadline-ms": {"at": 5}}),
            "deadline-ms",
            "whole number",
        ),
        (
            json!({"application-tags": {"tag": ["deadline=tomorrow"]}}),
            "application-tags",
            "whole number",
        ),
        (
            json!({"application-tags": {"tag": [format!("deadline={past}")]}}),
            "application-tags",
            "past",
        ),
        (
            json!({"application-tags": {"tag": ["deadline=99999999999999999999"]}}),
            "application-tags",
            "whole number",
        ),
        (
            json!({"application-tags": {"tag": [format!("deadline={}", T0 + 5_000), format!("deadline={}", T0 + 6_000)]}}),
            "application-tags",
            "differ",
        ),
        (
            json!({"deadline-ms": T0 + 5_000, "application-tags": [format!("deadline={}", T0 + 6_000)]}),
            "deadline-ms",
            "differs",
        ),
        (
            json!({"application-tags": {"tag": [5]}}),
            "application-tags",
            "not a string",
        ),
        (
            json!({"application-tags": {"tags": ["a"]}}),
            "application-tags",
            "tag",
        ),
        (
            json!({"application-tags": {"tag": [""]}}),
            "application-tags",
            "printable",
        ),
        (
            json!({"application-tags": {"tag": ["x".repeat(101)]}}),
            "application-tags",
            "printable",
        ),
        (
            json!({"application-tags": {"tag": ["a\u{7}b"]}}),
            "application-tags",
            "printable",
        ),
        (
            json!({"application-tags": (0..11).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
            "application-tags",
            "over 10",
        ),
    ];
    for (body, field, says) in cases {
        let (status, why) = h.submit(&id, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {why}");
        assert_eq!(
            why["RemoteException"]["detail"]["field"], field,
            "{body}: {why}"
        );
        assert!(
            why["RemoteException"]["message"]
                .as_str()
                .unwrap()
                .contains(says),
            "{body}: {why}"
        );
    }
    // Nothing was submitted: the id is still free for a good submission.
    let (_, list) = h.get("/ws/v1/cluster/apps").await;
    assert_eq!(list["apps"]["app"].as_array().unwrap().len(), 0);
    let (status, why) = h.submit(&id, json!({"deadline-ms": T0 + 1})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{why}");
}

#[tokio::test]
async fn the_scheduler_route_says_which_policy_runs_and_each_apps_quota() {
    for policy in ClusterPolicy::ALL {
        let h = harness(policy);
        h.node("n1:8042", 20).await;
        let (_, info) = h.get("/ws/v1/cluster/scheduler").await;
        let info = &info["scheduler"]["schedulerInfo"];
        assert_eq!(info["type"], policy.yarn_type(), "{info}");
        assert_eq!(info["policy"], policy.name());
        assert_eq!(info["numNodes"], 1);
        assert_eq!(info["totalNodeCapacity"], 20 * 1024);
    }
    let h = harness(ClusterPolicy::MinEdf);
    h.node("n1:8042", 20).await;
    // 100 maps of 10 s due in 100 s: ARIA's T^avg needs ⌈995 / 92.5⌉ = 11 containers.
    let (id, registered) = h
        .registered(json!({"deadline-ms": T0 + 100_000}), model(100, 10.0))
        .await;
    assert_eq!(registered["quota"]["containers"], 11, "{registered}");
    assert_eq!(registered["quota"]["basis"], "feasible");
    let reply = h.allocate(&id, 100, 0.0).await;
    assert_eq!(reply["allocated"].as_array().unwrap().len(), 11);
    let (_, info) = h.get("/ws/v1/cluster/scheduler").await;
    let apps = info["scheduler"]["schedulerInfo"]["apps"]["app"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0]["id"], id);
    assert_eq!(apps[0]["deadlineMs"], T0 + 100_000);
    assert_eq!(apps[0]["quota"]["containers"], 11);
    assert_eq!(apps[0]["quota"]["stage"], "map");
    assert_eq!(apps[0]["profiled"], true);
    assert_eq!(h.app(&id).await["quota"]["containers"], 11);
    // The quota follows the master's progress (maps done over maps) and the time left.
    h.set_now(T0 + 50_000);
    h.allocate(&id, 100, 0.95).await;
    let quota = &h.app(&id).await["quota"];
    assert_eq!(
        (quota["containers"].as_u64(), &quota["basis"]),
        (Some(2), &json!("feasible"))
    );
    // A master that registers no model: no quota of its own (served as EDF would).
    let (_, registered) = h
        .registered(json!({"deadline-ms": T0 + 200_000}), json!({}))
        .await;
    assert_eq!(registered["quota"]["basis"], "no-model", "{registered}");
}

#[tokio::test]
async fn a_registration_with_a_bad_model_is_a_400_naming_the_field() {
    let h = harness(ClusterPolicy::MinEdf);
    h.node("n1:8042", 4).await;
    let id = h.new_id().await;
    assert_eq!(
        h.submit(&id, json!({"deadline-ms": T0 + 60_000})).await.0,
        StatusCode::ACCEPTED
    );
    h.rm.cluster.lock().unwrap().take_master_launches();
    let register = format!("/ws/v1/yard/apps/{id}/register");
    for (body, field) in [
        (json!({"maps": 4}), "reduces"),
        (json!({"reduces": 4}), "maps"),
        (json!({"jobKind": "wordcount@text"}), "maps"),
        (json!({"maps": 20_000_000, "reduces": 1}), "maps"),
        (json!({"maps": 1, "reduces": 1, "jobKind": ""}), "jobKind"),
        (
            json!({"maps": 1, "reduces": 1, "profile": {"map": {"avg": -1.0}}}),
            "profile",
        ),
        (
            json!({"maps": 1, "reduces": 1, "profile": {"map": {"avg": 1.0, "max": 1e300}}}),
            "profile",
        ),
    ] {
        let (status, why) = h.post(&register, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {why}");
        assert_eq!(why["detail"]["field"], field, "{body}: {why}");
    }
    for body in [
        json!({"maps": 1, "reduces": 1, "profile": {"map": {"avg": 1.0}, "shuffle": {}}}),
        json!({"maps": -1, "reduces": 1}),
        json!({"maps": "many", "reduces": 1}),
        json!({"maps": 1, "reduces": 1, "profile": {"map": {"avg": "slow"}}}),
    ] {
        let (status, why) = h.post(&register, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {why}");
    }
    // None of it registered the master.
    assert_eq!(h.app(&id).await["state"], "ACCEPTED");
    let (status, reply) = h.post(&register, model(8, 1.0)).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(h.app(&id).await["state"], "RUNNING");
}

fn heartbeat(completed: Value) -> Value {
    json!({"nodeId": "n1:8042", "running": [], "completed": completed,
        "telemetry": {"cpuPercent": 0.0, "load1m": 0.0, "load5m": 0.0, "load15m": 0.0,
        "memoryTotalBytes": 1, "memoryUsedBytes": 1, "diskReadBytesPerS": 0.0,
        "diskWriteBytesPerS": 0.0, "netRxBytesPerS": 0.0, "netTxBytesPerS": 0.0,
        "containers": []}})
}

/// The containers a master heard were preempted, sorted.
fn preempted(reply: &Value) -> Vec<String> {
    let mut ids: Vec<String> = reply["completed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["end"] == "PREEMPTED")
        .map(|c| c["containerId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn a_preempted_container_reaches_its_master_as_preempted_and_goes_to_the_earlier_deadline() {
    let h = harness(ClusterPolicy::MinEdfWc);
    h.node("n1:8042", 10).await;
    // Job A, without a deadline, runs on spare containers only: all 9 its master leaves.
    let (a, _) = h.registered(json!({}), model(100, 600.0)).await;
    let reply = h.allocate(&a, 100, 0.0).await;
    let held: Vec<String> = granted(&reply);
    assert_eq!(held.len(), 9);
    // Job B arrives, due in 100 s: its master finds no room, so one spare container (A's
    // newest) is taken back for it. A's master hears it; the node is told to stop it.
    let b = h.new_id().await;
    let (status, why) = h.submit(&b, json!({"deadline-ms": T0 + 100_000})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{why}");
    let first = preempted(&h.allocate(&a, 100, 0.0).await);
    assert_eq!(first, vec![held[8].clone()]);
    // Freed at once (YARN frees what it kills and lets the node catch up): the same
    // heartbeat reply that tells the node to stop it starts B's master in its room.
    let (_, reply) = h
        .post("/ws/v1/yard/nodes/heartbeat", heartbeat(json!([])))
        .await;
    assert_eq!(reply["stop"], json!(first));
    assert_eq!(reply["start"].as_array().unwrap().len(), 1, "{reply}");
    // The node's later report of the kill changes nothing, and is not counted again.
    let ended = |ids: &[String]| -> Value {
        ids.iter()
            .map(|c| json!({"containerId": c, "end": "KILLED"}))
            .collect()
    };
    let (_, reply) = h
        .post("/ws/v1/yard/nodes/heartbeat", heartbeat(ended(&first)))
        .await;
    assert!(reply["start"].as_array().unwrap().is_empty(), "{reply}");
    // The node saw a kill; the rm's metrics count what it was: a preemption.
    h.rm.metrics.refresh(&h.rm.cluster.lock().unwrap());
    let counted = |end: &str| {
        h.rm.metrics
            .containers_completed
            .with_label_values(&[end])
            .get()
    };
    assert_eq!((counted("preempted"), counted("killed")), (1, 0));
    // B's master registers 4 maps of 60 s: ⌈(4 − 0.5)·60 / (100 − 45)⌉ = 4 containers.
    let (status, registered) = h
        .post(&format!("/ws/v1/yard/apps/{b}/register"), model(4, 60.0))
        .await;
    assert_eq!(status, StatusCode::OK, "{registered}");
    assert_eq!(registered["quota"]["containers"], 4, "{registered}");
    // A's maps take 600 s: waiting for them is no use, so 4 more of its spare containers are
    // preempted, the newest first, and freed at once: B's ask is met in its own call. A keeps
    // the rest, and hears of the preemptions in its next reply.
    let reply = h.allocate(&b, 4, 0.0).await;
    assert_eq!(reply["allocated"].as_array().unwrap().len(), 4, "{reply}");
    let second = preempted(&h.allocate(&a, 100, 0.0).await);
    let mut newest: Vec<String> = held[4..8].to_vec();
    newest.sort_unstable();
    assert_eq!(second, newest);
    let (_, info) = h.get("/ws/v1/cluster/scheduler").await;
    let info = &info["scheduler"]["schedulerInfo"];
    assert_eq!(
        (&info["spareKills"], &info["spareAllocations"]),
        (&json!(5), &json!(9))
    );
    h.post("/ws/v1/yard/nodes/heartbeat", heartbeat(ended(&second)))
        .await;
    // A hears of each preemption once, not again when the node reports the end.
    let reply = h.allocate(&a, 100, 0.0).await;
    assert!(reply["completed"].as_array().unwrap().is_empty(), "{reply}");
}

#[tokio::test]
async fn deadlines_tags_and_models_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("rm.db")).await.unwrap();
    let settings = Settings {
        scheduler: ClusterPolicy::MinEdf,
        ..Settings::default()
    };
    let mut before = Cluster::new(settings.clone(), ClusterSecret::new(SECRET), T0);
    let node = RegisterNode {
        node_id: "n1:8042".into(),
        rack: "r1".into(),
        capability: Resource {
            memory_mb: 20 * 1024,
            vcores: 20,
        },
        containers: Vec::new(),
    };
    before.register_node(T0, node.clone());
    let id = before.new_application(T0, "alice").unwrap();
    let mut new = NewApp::new(&id, "job", "alice", "default");
    new.deadline = Some(Deadline::from_epoch_ms(T0 + 100_000));
    new.tags = vec!["deadline=1".into(), "team=x".into()];
    before.submit(T0, new).unwrap();
    before.master_registered(&id, None).unwrap();
    let model: JobModel = serde_json::from_value(model(100, 10.0)).unwrap();
    before.set_model(&id, model).unwrap();
    let quota = before.app(&id).unwrap().quota;
    assert_eq!(quota.and_then(|q| q.containers), Some(11));
    store.save_changes(&before.take_changes()).await.unwrap();
    drop(store);
    let store = Store::open(&dir.path().join("rm.db")).await.unwrap();
    let (apps, nodes) = store.load().await.unwrap();
    let mut after = Cluster::new(settings, ClusterSecret::new(SECRET), T0 + 1);
    after.restore(apps, nodes);
    after.register_node(T0 + 1, node);
    let app = after.app(&id).unwrap();
    assert_eq!(app.deadline, Some(Deadline::from_epoch_ms(T0 + 100_000)));
    assert_eq!(app.tags, vec!["deadline=1".to_owned(), "team=x".to_owned()]);
    assert_eq!(app.model, Some(model));
    assert_eq!(app.quota.and_then(|q| q.containers), Some(11));
}

#[tokio::test]
async fn a_master_that_names_its_job_kind_gets_a_quota_from_the_profile_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.db");
    let store = yard_profiles::ProfileStore::open(&path).await.unwrap();
    // An earlier run of the kind: node-local maps of 10 s; map-only here.
    let run = yard_appmaster::policy::RunRecord {
        map_local: Some(10.0),
        map_remote: Some(15.0),
        ..Default::default()
    };
    store.add_run("wordcount@text", 0, &run).await.unwrap();
    let mut h = harness(ClusterPolicy::MinEdf);
    h.rm.profiles = Some(yard_rm::profiles::Profiles::at(&path));
    h.node("n1:8042", 20).await;
    // 100 maps of 10 s (largest 15), due in 100 s: 11 containers, as with a registered profile.
    let job = json!({"maps": 100, "reduces": 0, "jobKind": "wordcount@text"});
    let (_, registered) = h
        .registered(json!({"deadline-ms": T0 + 100_000}), job)
        .await;
    assert_eq!(registered["quota"]["containers"], 11, "{registered}");
    // A kind the store has never run: no profile, no quota of its own.
    let job = json!({"maps": 100, "reduces": 0, "jobKind": "grep@text"});
    let (_, registered) = h
        .registered(json!({"deadline-ms": T0 + 100_000}), job)
        .await;
    assert_eq!(registered["quota"]["basis"], "no-model", "{registered}");
}

/// A yard master's own task counts size the quota on the work really left: once Dart has
/// closed its map phase at k = 20 of 100 maps, the 80 it will never run are not work.
#[tokio::test]
async fn a_masters_task_counts_size_its_quota_on_the_maps_it_will_still_run() {
    let quota_after = |tasks: Option<Value>| async move {
        let h = harness(ClusterPolicy::MinEdf);
        h.node("n1:8042", 40).await;
        let (id, _) = h
            .registered(json!({"deadline-ms": T0 + 100_000}), model(100, 10.0))
            .await;
        h.set_now(T0 + 50_000);
        let mut body = json!({"applicationId": id, "progress": 0.1, "releases": [], "asks": []});
        if let Some(t) = tasks {
            body["tasks"] = t;
        }
        let (status, reply) = h
            .post(&format!("/ws/v1/yard/apps/{id}/allocate"), body)
            .await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        h.app(&id).await["quota"]["containers"].as_u64().unwrap()
    };
    // Progress alone (0.1 of 100 maps): 90 maps of 10 s in the 50 s left.
    let by_progress = quota_after(None).await;
    // The master's counts: 10 done of the 20 it will run.
    let by_counts = quota_after(Some(
        json!({"mapsDone": 10, "mapsToRun": 20, "reducesDone": 0}),
    ))
    .await;
    assert!(
        by_counts < by_progress && by_counts >= 2,
        "{by_counts} vs {by_progress}"
    );

    let h = harness(ClusterPolicy::MinEdf);
    h.node("n1:8042", 40).await;
    let (id, _) = h
        .registered(json!({"deadline-ms": T0 + 100_000}), model(100, 10.0))
        .await;
    let body = json!({"applicationId": id, "progress": 0.1, "releases": [], "asks": [],
        "tasks": {"mapsDone": 30, "mapsToRun": 20, "reducesDone": 0}});
    let (status, reply) = h
        .post(&format!("/ws/v1/yard/apps/{id}/allocate"), body)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("tasks.mapsDone"),
        "{reply}"
    );
}

/// Where an application stands against its deadline, as `/ws/v1/yard/apps/{id}` and YARN's app
/// list (`deadlineOutcome`, yard's field) both say it.
async fn outcome(h: &Harness, id: &str) -> Value {
    let (status, yard) = h.get(&format!("/ws/v1/yard/apps/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{yard}");
    let listed = h.get_ok("/ws/v1/cluster/apps").await;
    let in_list = listed["apps"]["app"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {listed}"))["deadlineOutcome"]
        .clone();
    assert_eq!(yard["app"]["deadlineOutcome"], in_list, "{id}");
    assert_eq!(h.app(id).await["deadlineOutcome"], in_list, "{id}");
    in_list
}

/// The master of `id` answers from `fraction` of the input at the rm's time `at`.
async fn answer(h: &Harness, id: &str, fraction: f64, at: i64) {
    h.set_now(at);
    let (status, reply) = h
        .put(
            &format!("/ws/v1/yard/apps/{id}/result"),
            json!({"processedFraction": fraction, "answer": {"lines": 3}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

/// The master of `id` unregisters at `at`.
async fn unregister(h: &Harness, id: &str, succeeded: bool, at: i64) {
    h.set_now(at);
    let (status, reply) = h
        .post(
            &format!("/ws/v1/yard/apps/{id}/unregister"),
            json!({"succeeded": succeeded}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

#[tokio::test]
async fn every_application_with_a_deadline_is_met_empty_missed_or_pending_beside_its_state() {
    use yard_rm::cluster::ANSWER_TRANSIT_MS;
    let h = harness(ClusterPolicy::Edf);
    h.node("n1:8042", 64).await;
    let due = T0 + 60_000;
    let with_deadline = || json!({"deadline-ms": due});
    let mut ids = Vec::new();
    for _ in 0..9 {
        ids.push(h.running(with_deadline(), json!({})).await);
    }
    let none = h.running(json!({}), json!({})).await;
    for id in &ids {
        assert_eq!(outcome(&h, id).await, "pending", "{id}");
    }
    assert_eq!(outcome(&h, &none).await, Value::Null);

    // Answered by the deadline from some input, then finished: met.
    answer(&h, &ids[0], 0.4, T0 + 30_000).await;
    unregister(&h, &ids[0], true, T0 + 30_010).await;
    // From no input: empty, not met.
    answer(&h, &ids[1], 0.0, T0 + 30_000).await;
    unregister(&h, &ids[1], true, T0 + 30_010).await;
    // The rm receives an answer given at the deadline a little later: it counts as in time.
    answer(&h, &ids[2], 1.0, due + ANSWER_TRANSIT_MS).await;
    // Ended successfully by the deadline without reporting an answer (a YARN application):
    // its end is its answer, from all its input.
    unregister(&h, &ids[3], true, T0 + 20_000).await;
    // Failed or killed before the deadline without an answer: none will come.
    unregister(&h, &ids[4], false, T0 + 20_000).await;
    h.set_now(T0 + 20_000);
    let (status, reply) = h
        .put(
            &format!("/ws/v1/cluster/apps/{}/state", ids[5]),
            json!({"state": "KILLED"}),
        )
        .await;
    assert!(status.is_success(), "{reply}");
    for (id, expected) in [
        (&ids[0], "met"),
        (&ids[1], "empty"),
        (&ids[2], "met"),
        (&ids[3], "met"),
        (&ids[4], "missed"),
        (&ids[5], "missed"),
        (&ids[6], "pending"),
    ] {
        assert_eq!(outcome(&h, id).await, expected, "{id}");
    }
    assert_eq!(h.app(&ids[0]).await["state"], "FINISHED");
    assert_eq!(h.app(&ids[0]).await["finalStatus"], "SUCCEEDED");

    // Past the deadline (and the transit allowance): still running without an answer is
    // missed; an answer now is late, and stays missed though the job finishes SUCCEEDED.
    h.set_now(due + ANSWER_TRANSIT_MS + 1);
    assert_eq!(outcome(&h, &ids[6]).await, "missed");
    answer(&h, &ids[7], 1.0, due + ANSWER_TRANSIT_MS + 1).await;
    unregister(&h, &ids[7], true, due + 5_000).await;
    // Ending successfully after the deadline without an answer: missed.
    unregister(&h, &ids[8], true, due + 3_000).await;
    for id in &ids[6..] {
        assert_eq!(outcome(&h, id).await, "missed", "{id}");
    }
    let late = h.app(&ids[7]).await;
    assert_eq!(
        (&late["state"], &late["finalStatus"]),
        (&json!("FINISHED"), &json!("SUCCEEDED")),
        "YARN's state and final status stay as they are beside the outcome: {late}"
    );
    // The ended ones do not change as time passes; met and empty stay so.
    h.set_now(due + 600_000);
    for (id, expected) in [(&ids[0], "met"), (&ids[1], "empty"), (&ids[3], "met")] {
        assert_eq!(outcome(&h, id).await, expected, "{id}");
    }
    assert_eq!(outcome(&h, &none).await, Value::Null);
}

/// Every field of YARN's app object and of yard's app view is in the OpenAPI document, the
/// deadline outcome with its four values among them.
#[tokio::test]
async fn the_openapi_document_describes_every_app_field_and_the_deadline_outcome() {
    use std::collections::BTreeSet;
    let spec: Value = serde_json::from_str(yard_rm::rest::OPENAPI).unwrap();
    let schemas = &spec["components"]["schemas"];
    let keys = |v: &Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let h = harness(ClusterPolicy::Edf);
    h.node("n1:8042", 4).await;
    let id = h
        .running(json!({"deadline-ms": T0 + 60_000}), json!({}))
        .await;
    let app = h.app(&id).await;
    assert_eq!(keys(&app), keys(&schemas["AppView"]["properties"]));
    let yard = h.get_ok(&format!("/ws/v1/yard/apps/{id}")).await;
    let documented = &schemas["YardAppView"]["properties"];
    assert_eq!(keys(&yard["app"]), keys(documented));
    let outcome = json!([{"$ref": "#/components/schemas/DeadlineOutcome"}]);
    for schema in [&schemas["AppView"]["properties"], documented] {
        assert_eq!(schema["deadlineOutcome"]["allOf"], outcome);
    }
    let values = schemas["DeadlineOutcome"]["enum"].as_array().unwrap();
    for o in yard_wire::deadline::DeadlineOutcome::ALL {
        assert!(values.contains(&json!(o.name())), "{o:?} in {values:?}");
    }
}
