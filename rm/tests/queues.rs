//! Capacity queues through the rm's routes: submissions name a queue (an unknown one, or one
//! whose ACL refuses the user, is a 400 naming it), `/ws/v1/cluster/scheduler` lists the
//! queues in YARN's capacity-scheduler shape, and a queue's guarantee comes back from a flood
//! after the preemption wait, no sooner.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, granted, token};
use yard_cluster::policy::ClusterPolicy;
use yard_cluster::queues::{QueueFile, Queues};
use yard_rm::cluster::Settings;
use yard_wire::auth::Principal;

const WAIT_MS: i64 = 15_000;

/// team-a (50 %, alice and bob only, one user may take the whole cluster) and team-b (50 %,
/// anyone, running EDF).
fn queues() -> Queues {
    // The file's tables, as JSON (the rm's tests read no TOML; `yard rm --queues` does).
    let file: QueueFile = serde_json::from_value(json!({
        "preemption": {"max_wait_before_kill": 15000},
        "queue": [
            {"name": "team-a", "capacity": 50, "user-limit-factor": 2,
             "acl-submit-applications": "alice,bob"},
            {"name": "team-b", "capacity": 50, "maximum-capacity": 100, "user-limit-factor": 2,
             "policy": "edf"},
        ],
    }))
    .unwrap();
    file.into_queues(ClusterPolicy::Fifo).unwrap()
}

/// Two nodes of 4 GiB and 4 cores under [`queues`], started at 1 s; masters may hold half the
/// cluster (two teams' masters at once), nodes never expire (the test moves the clock).
fn harness() -> Harness {
    let settings = Settings {
        queues: Some(queues()),
        master_share: 0.5,
        node_expiry_ms: 3_600_000,
        ..Settings::default()
    };
    Harness::at(settings, 1_000)
}

fn message(v: &Value) -> String {
    v["RemoteException"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_submission_to_an_unknown_or_refusing_queue_is_a_400_naming_it() {
    let h = harness();
    let id = h.new_id().await;
    let (status, v) = h.submit(&id, json!({"queue": "team-c"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(
        message(&v),
        "no queue team-c: the queues are team-a, team-b"
    );
    // Without a queue it goes to `default`, which this rm does not have.
    let (status, v) = h.submit(&id, json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(message(&v).starts_with("no queue default"), "{v}");
    // carol, as herself: team-a's ACL lists alice and bob only.
    let carol = token(Principal::User {
        user: "carol".into(),
    });
    let issued = h
        .call_as(
            Some(&carol),
            Method::POST,
            "/ws/v1/cluster/apps/new-application",
            Some(json!({})),
        )
        .await
        .json();
    let carol_id = issued["application-id"].as_str().unwrap();
    let body = json!({"application-id": carol_id, "application-name": "job", "queue": "team-a"});
    let refused = h
        .call_as(
            Some(&carol),
            Method::POST,
            "/ws/v1/cluster/apps",
            Some(body),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
    assert_eq!(
        message(&refused.json()),
        "user carol may not submit to queue team-a: its acl-submit-applications is \"alice,bob\""
    );
    let body = json!({"application-id": carol_id, "application-name": "job", "queue": "team-b"});
    let taken = h
        .call_as(
            Some(&carol),
            Method::POST,
            "/ws/v1/cluster/apps",
            Some(body),
        )
        .await;
    assert_eq!(taken.status, StatusCode::ACCEPTED, "{}", taken.text);
    // alice may; so may an admin, for anyone.
    assert_eq!(
        h.submit(&id, json!({"queue": "team-a"})).await.0,
        StatusCode::ACCEPTED
    );
    let other = h.new_id().await;
    assert_eq!(
        h.submit(&other, json!({"queue": "team-a", "user": "dave"}))
            .await
            .0,
        StatusCode::ACCEPTED
    );
    // yard's MapReduce jobs are checked before an id is spent on them.
    let job = json!({"job": {"app": "wordcount", "input": "books"}, "queue": "team-c"});
    let (status, v) = h.post("/ws/v1/yard/mapreduce/jobs", job).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(
        v["error"], "no queue team-c: the queues are team-a, team-b",
        "{v}"
    );
}

#[tokio::test]
async fn the_scheduler_lists_the_queues_as_yarns_capacity_scheduler() {
    let h = harness();
    h.node("n1:8042", 4).await;
    h.node("n2:8042", 4).await;
    let a = h.running(json!({"queue": "team-a"}), json!({})).await;
    assert_eq!(granted(&h.allocate(&a, 2, 0.1).await).len(), 2);
    let info = &h.get_ok("/ws/v1/cluster/scheduler").await["scheduler"]["schedulerInfo"];
    assert_eq!(info["type"], "capacityScheduler");
    assert_eq!(info["queueName"], "root");
    let q = info["queues"]["queue"].as_array().unwrap();
    assert_eq!(q.len(), 2);
    let (ta, tb) = (&q[0], &q[1]);
    assert_eq!(ta["queueName"], "team-a");
    assert_eq!(ta["queuePath"], "root.team-a");
    assert_eq!(ta["type"], "capacitySchedulerLeafQueueInfo");
    assert_eq!(ta["capacity"], 50.0);
    assert_eq!(ta["maxCapacity"], 100.0);
    assert_eq!(ta["absoluteCapacity"], 50.0);
    assert_eq!(ta["userLimitFactor"], 2.0);
    assert_eq!(ta["policy"], "fifo");
    assert_eq!(tb["policy"], "edf");
    assert_eq!(
        (
            ta["numApplications"].as_u64(),
            ta["numActiveApplications"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(ta["numContainers"], 3, "its master and two tasks");
    // 2.5 GiB of 8: 31.25 % of the cluster, 62.5 % of the queue's half.
    assert_eq!(ta["resourcesUsed"]["memory"], 2560);
    assert_eq!(ta["absoluteUsedCapacity"], 31.25);
    assert_eq!(ta["usedCapacity"], 62.5);
    assert_eq!(tb["numApplications"], 0);
    assert_eq!(tb["usedCapacity"], 0.0);
}

/// Issue 35's "Done when" through the rm: alice's flood in team-a holds the cluster; bob's job
/// in team-b gets nothing until the wait is over, then team-a's newest containers are taken
/// back (its master hears they were preempted) and team-b holds its guarantee, less what one
/// more 1 GiB container would take team-a below its own.
/// Registers node `id` with 4 GiB and 16 cores: memory, not cores, is what fills up.
async fn node(h: &Harness, id: &str) {
    let body = json!({"nodeId": id, "rack": "r1",
        "capability": {"memoryMb": 4096, "vcores": 16}});
    let (status, reply) = h.post("/ws/v1/yard/nodes", body).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

#[tokio::test]
async fn a_flood_gives_back_another_queues_guarantee_after_the_wait() {
    let h = harness();
    node(&h, "n1:8042").await;
    node(&h, "n2:8042").await;
    let a = h.running(json!({"queue": "team-a"}), json!({})).await;
    // 8 GiB less its master's 512 MiB: seven 1 GiB tasks.
    assert_eq!(granted(&h.allocate(&a, 100, 0.1).await).len(), 7);
    h.set_now(2_000);
    let b = h
        .running(json!({"queue": "team-b", "user": "bob"}), json!({}))
        .await;
    assert!(granted(&h.allocate(&b, 4, 0.1).await).is_empty());
    let expire = |t: i64| {
        h.set_now(t);
        h.rm.cluster.lock().unwrap().expire(t);
    };
    expire(2_000 + WAIT_MS - 1);
    assert!(
        granted(&h.allocate(&b, 4, 0.1).await).is_empty(),
        "not before the wait"
    );
    expire(2_000 + WAIT_MS);
    let got = granted(&h.allocate(&b, 4, 0.1).await);
    // team-a held 7.5 GiB against a 4 GiB guarantee: 3.5 GiB above it, three whole containers.
    assert_eq!(got.len(), 3, "{got:?}");
    let told = h.allocate(&a, 0, 0.2).await;
    let preempted: Vec<&Value> = told["completed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["end"] == "PREEMPTED")
        .collect();
    assert_eq!(preempted.len(), 3, "{told}");
    let info = &h.get_ok("/ws/v1/cluster/scheduler").await["scheduler"]["schedulerInfo"];
    let q = info["queues"]["queue"].as_array().unwrap();
    assert_eq!(q[0]["preemptedContainers"], 3);
    assert_eq!(q[1]["resourcesUsed"]["memory"], 512 + 3 * 1024);
    // Nothing more is taken however long team-b waits: team-a is at its guarantee's edge.
    expire(2_000 + 10 * WAIT_MS);
    let q = &h.get_ok("/ws/v1/cluster/scheduler").await["scheduler"]["schedulerInfo"]["queues"]["queue"];
    assert_eq!(q[0]["preemptedContainers"], 3);
}
