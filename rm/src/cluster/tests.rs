//! The `Cluster`'s tests through its public methods: submission, grants and their tokens,
//! lost nodes and failed attempts, kills and releases, restarts, expiry, telemetry.

use std::collections::BTreeMap;

use yard_wire::auth::{ClusterSecret, Principal};
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, ContainerEnd, ContainerStatus, HeartbeatReply, NodeContainer,
    NodeHeartbeat, RegisterNode, Resource, ResourceRequest, application_of,
};
use yard_wire::telemetry::NodeTelemetry;
use yard_wire::token::{TokenKey, verify};

use yard_cluster::app::YarnApplicationState;

use super::apps::ISSUED_TTL_MS;
use super::*;

fn key_of(node: &str) -> TokenKey {
    ClusterSecret::new(KEY).container_key(node)
}

const KEY: [u8; 32] = [9; 32];

fn cluster(nodes: &[(&str, &str)]) -> Cluster {
    let mut c = Cluster::new(Settings::default(), ClusterSecret::new(KEY), 1_000);
    for (node, rack) in nodes {
        let capability = Resource {
            memory_mb: 4096,
            vcores: 4,
        };
        c.register_node(
            1_000,
            RegisterNode {
                node_id: (*node).into(),
                rack: (*rack).into(),
                capability,
                containers: Vec::new(),
            },
        );
    }
    c
}

/// A faithful node's heartbeat: it runs every container the rm booked there, but those
/// it reports ended.
fn heartbeat(
    c: &mut Cluster,
    now: i64,
    node: &str,
    completed: Vec<ContainerStatus>,
) -> HeartbeatReply {
    let running = c
        .containers_on(node)
        .map(|(id, _)| id.clone())
        .filter(|id| !completed.iter().any(|s| s.container_id == *id))
        .collect();
    c.heartbeat(
        now,
        NodeHeartbeat {
            node_id: node.into(),
            running,
            completed,
            telemetry: NodeTelemetry::default(),
        },
    )
}

fn ended(c: &Cluster, end: ContainerEnd) -> u64 {
    c.containers_ended()
        .find(|(e, _)| *e == end)
        .map_or(0, |(_, n)| n)
}

fn ask(count: u32, at: &str) -> ResourceRequest {
    ResourceRequest {
        priority: 1,
        resource_name: at.into(),
        capability: Resource {
            memory_mb: 1024,
            vcores: 1,
        },
        num_containers: count,
        relax_locality: true,
    }
}

fn allocate(
    c: &mut Cluster,
    now: i64,
    app: &str,
    asks: Vec<ResourceRequest>,
    releases: Vec<String>,
) -> Result<AllocateReply, ClusterError> {
    c.allocate(
        now,
        AllocateRequest {
            application_id: app.into(),
            asks,
            releases,
            progress: 0.5,
            tasks: None,
            job_type: None,
            job: None,
        },
    )
}

/// Submits an application and registers its master; returns its id and master launch.
fn running_app(c: &mut Cluster) -> (String, MasterLaunch) {
    let id = c.new_application(2_000, "alice").unwrap();
    c.submit(2_000, NewApp::new(&id, "wordcount", "alice", "default"))
        .unwrap();
    let launches = c.take_master_launches();
    assert_eq!(launches.len(), 1);
    c.master_registered(&id, None).unwrap();
    (id, launches[0].clone())
}

#[test]
fn a_submitted_app_gets_a_master_with_a_valid_token_then_its_containers() {
    let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
    let (id, master) = running_app(&mut c);
    assert_eq!(id, "application_1000_0001");
    assert_eq!(master.attempt, 1);
    let t = &master.container.token;
    assert_eq!(
        verify(
            &key_of(&master.container.node_id),
            Some(t),
            &master.container.node_id,
            2_001
        ),
        Ok(())
    );
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Running
    );
    let reply = allocate(
        &mut c,
        3_000,
        &id,
        vec![ask(3, "*"), ask(2, "n2:8042")],
        vec![],
    )
    .unwrap();
    assert_eq!(reply.allocated.len(), 3);
    assert_eq!(
        reply
            .allocated
            .iter()
            .filter(|a| a.node_id == "n2:8042")
            .count(),
        2,
        "node asks first"
    );
    for a in &reply.allocated {
        assert_eq!(
            verify(&key_of(&a.node_id), Some(&a.token), &a.node_id, 3_001),
            Ok(())
        );
        assert!(
            a.container_id.starts_with("container_1000_0001_01_"),
            "{}",
            a.container_id
        );
        assert_eq!(
            application_of(&a.container_id).as_deref(),
            Some(id.as_str())
        );
    }
    // A container ends on its node: the master hears of it in its next allocate reply.
    let done = ContainerStatus {
        container_id: reply.allocated[0].container_id.clone(),
        end: ContainerEnd::Exited,
        exit_code: Some(0),
    };
    heartbeat(
        &mut c,
        4_000,
        &reply.allocated[0].node_id,
        vec![done.clone()],
    );
    let next = allocate(&mut c, 4_100, &id, vec![ask(0, "*")], vec![]).unwrap();
    assert_eq!(next.completed, vec![done]);
    assert!(next.allocated.is_empty());
}

#[test]
fn a_lost_node_loses_its_containers_and_the_master_gets_another_attempt_then_fails() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    let (id, master) = running_app(&mut c);
    assert_eq!(master.container.node_id, "n1:8042");
    // The node falls silent; a second node arrives to host a new attempt.
    c.register_node(
        5_000,
        RegisterNode {
            node_id: "n2:8042".into(),
            rack: "r1".into(),
            capability: Resource {
                memory_mb: 4096,
                vcores: 4,
            },
            containers: Vec::new(),
        },
    );
    assert_eq!(c.expire(11_500), vec!["n1:8042".to_owned()]);
    assert_eq!(
        c.nodes().find(|n| n.node_id == "n1:8042").unwrap().state,
        NodeState::Lost
    );
    assert_eq!(
        ended(&c, ContainerEnd::Lost),
        1,
        "the master's container, counted once"
    );
    let relaunch = c.take_master_launches();
    assert_eq!(relaunch.len(), 1);
    assert_eq!(
        (relaunch[0].attempt, relaunch[0].container.node_id.as_str()),
        (2, "n2:8042")
    );
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Accepted
    );
    // The lost node's heartbeat is refused: it must register again.
    assert!(heartbeat(&mut c, 12_000, "n1:8042", vec![]).reregister);
    // The second attempt's master dies too: am_max_attempts = 2 → FAILED.
    let died = ContainerStatus {
        container_id: relaunch[0].container.container_id.clone(),
        end: ContainerEnd::Exited,
        exit_code: Some(1),
    };
    heartbeat(&mut c, 13_000, "n2:8042", vec![died]);
    let app = c.app(&id).unwrap();
    assert_eq!(app.lifecycle.state, YarnApplicationState::Failed);
    assert!(c.take_master_launches().is_empty());
}

#[test]
fn killing_an_app_orders_its_containers_stopped_on_their_nodes() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    let (id, master) = running_app(&mut c);
    let reply = allocate(&mut c, 3_000, &id, vec![ask(2, "*")], vec![]).unwrap();
    c.kill(&id).unwrap();
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Killed
    );
    let mut stop = heartbeat(&mut c, 4_000, "n1:8042", vec![]).stop;
    stop.sort();
    let mut expected: Vec<String> = reply
        .allocated
        .iter()
        .map(|a| a.container_id.clone())
        .chain([master.container.container_id])
        .collect();
    expected.sort();
    assert_eq!(stop, expected);
    assert!(
        heartbeat(&mut c, 5_000, "n1:8042", vec![]).stop.is_empty(),
        "told once"
    );
    assert!(matches!(c.kill(&id), Err(ClusterError::Transition(_))));
}

#[test]
fn a_released_container_is_stopped_and_its_room_reused() {
    let mut c = cluster(&[("n1:8042", "r1")]); // 4 vcores: the master's and 3
    let (id, _) = running_app(&mut c);
    let first = allocate(&mut c, 3_000, &id, vec![ask(5, "*")], vec![]).unwrap();
    assert_eq!(first.allocated.len(), 3);
    let released = first.allocated[0].container_id.clone();
    let second = allocate(
        &mut c,
        3_100,
        &id,
        vec![ask(2, "*")],
        vec![released.clone()],
    )
    .unwrap();
    assert_eq!(
        second.allocated.len(),
        1,
        "the released container's room goes to the next ask"
    );
    assert_eq!(
        heartbeat(&mut c, 3_200, "n1:8042", vec![]).stop,
        vec![released]
    );
}

/// The issue's cluster: three nodes of 2 vcores (so a master and 5 tasks fill it).
fn small_cluster() -> Cluster {
    small_cluster_with(Settings::default())
}

fn small_cluster_with(settings: Settings) -> Cluster {
    let mut c = Cluster::new(settings, ClusterSecret::new(KEY), 1_000);
    for (node, rack) in [("n1:8042", "r1"), ("n2:8042", "r1"), ("n3:8042", "r2")] {
        c.register_node(
            1_000,
            RegisterNode {
                node_id: node.into(),
                rack: rack.into(),
                capability: Resource {
                    memory_mb: 8192,
                    vcores: 2,
                },
                containers: Vec::new(),
            },
        );
    }
    c
}

/// [`small_cluster`] with one application whose master registered.
fn running_on_small_cluster() -> (Cluster, String) {
    let mut c = small_cluster();
    let (id, _) = running_app(&mut c);
    (c, id)
}

/// Every node's heartbeat, as a faithful node sends it; returns the stop orders.
fn beat_all(c: &mut Cluster, now: i64) -> BTreeMap<String, Vec<String>> {
    let nodes: Vec<String> = c.nodes().map(|n| n.node_id.clone()).collect();
    nodes
        .into_iter()
        .map(|n| {
            let stop = heartbeat(c, now, &n, vec![]).stop;
            (n, stop)
        })
        .collect()
}

#[test]
fn a_dead_master_frees_what_it_held_and_attempt_two_starts_on_a_full_cluster() {
    let mut c = small_cluster();
    let (id, master) = running_app(&mut c);
    // The master asks for more than fits: the cluster fills, asks stay outstanding.
    let tasks = allocate(&mut c, 3_000, &id, vec![ask(20, "*")], vec![]).unwrap();
    assert_eq!(tasks.allocated.len(), 5);
    assert_eq!(c.metrics().allocated_vcores, 6);
    beat_all(&mut c, 3_500);
    // kill -9 of the master: its node reports its container's end.
    let died = ContainerStatus {
        container_id: master.container.container_id.clone(),
        end: ContainerEnd::Exited,
        exit_code: Some(137),
    };
    let reply = heartbeat(&mut c, 4_000, &master.container.node_id, vec![died]);
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Accepted
    );
    // Attempt 2's master is granted at once (on the node that just made room, so it
    // starts with this very reply), and nothing else is held for the dead attempt.
    assert_eq!(reply.start.len(), 1, "attempt 2 was not granted");
    assert_eq!(reply.start[0].env["APP_ATTEMPT"], "2");
    assert_eq!(c.running_containers(&id), 1, "only attempt 2's master");
    assert_eq!(c.metrics().containers_allocated, 1);
    assert_eq!(c.metrics().allocated_vcores, 1);
    // Each node is told to stop the dead attempt's tasks there, and once.
    let mut stopped: Vec<String> = beat_all(&mut c, 4_500)
        .into_values()
        .flatten()
        .chain(reply.stop)
        .collect();
    stopped.sort();
    let mut granted: Vec<String> = tasks
        .allocated
        .iter()
        .map(|a| a.container_id.clone())
        .collect();
    granted.sort();
    assert_eq!(stopped, granted);
    assert!(beat_all(&mut c, 5_000).values().all(Vec::is_empty));
    c.check_books().unwrap();
    // The ends the nodes report later are of containers already freed: nothing changes
    // but their count, once each, as the nodes saw them.
    let killed = ended(&c, ContainerEnd::Killed);
    for repeat in 0..2 {
        for a in &tasks.allocated {
            let end = ContainerStatus {
                container_id: a.container_id.clone(),
                end: ContainerEnd::Killed,
                exit_code: None,
            };
            heartbeat(&mut c, 5_500 + repeat, &a.node_id, vec![end]);
        }
        assert_eq!(ended(&c, ContainerEnd::Killed), killed + 5);
    }
    assert_eq!(c.running_containers(&id), 1);
    c.check_books().unwrap();
}

#[test]
fn killing_an_app_with_asks_outstanding_leaves_nothing_booked_and_the_next_app_runs() {
    let (mut c, id) = running_on_small_cluster();
    let tasks = allocate(&mut c, 3_000, &id, vec![ask(20, "*")], vec![]).unwrap();
    assert_eq!(tasks.allocated.len(), 5);
    c.kill(&id).unwrap();
    let m = c.metrics();
    assert_eq!(
        (m.containers_allocated, m.allocated_mb, m.allocated_vcores),
        (0, 0, 0)
    );
    assert_eq!(c.running_containers(&id), 0);
    for n in ["n1:8042", "n2:8042", "n3:8042"] {
        assert_eq!(c.containers_on(n).count(), 0, "{n}");
    }
    c.check_books().unwrap();
    // The next user's application gets its master at once.
    let next = c.new_application(6_000, "bob").unwrap();
    c.submit(6_000, NewApp::new(&next, "wordcount", "bob", "default"))
        .unwrap();
    assert_eq!(c.take_master_launches().len(), 1);
}

#[test]
fn a_node_that_drops_a_container_without_an_end_loses_it_and_one_it_runs_unbooked_is_stopped() {
    let (mut c, id) = running_on_small_cluster();
    let asks = vec![ask(1, "*"), ask(1, "n2:8042")];
    let tasks = allocate(&mut c, 3_000, &id, asks, vec![]).unwrap();
    let task = tasks.allocated[0].container_id.clone();
    assert_eq!(tasks.allocated[0].node_id, "n2:8042");
    // Granted, not yet started: the node does not list it, and it stays booked.
    let silent = NodeHeartbeat {
        node_id: "n2:8042".into(),
        running: vec![],
        completed: vec![],
        telemetry: NodeTelemetry::default(),
    };
    c.heartbeat(3_100, silent.clone());
    assert!(c.container(&task).is_some());
    // Started: the node lists it; then it vanishes with no end reported: LOST, and its
    // master hears of it.
    c.heartbeat(
        3_200,
        NodeHeartbeat {
            running: vec![task.clone()],
            ..silent.clone()
        },
    );
    c.heartbeat(3_300, silent.clone());
    assert!(c.container(&task).is_none());
    assert_eq!(ended(&c, ContainerEnd::Lost), 1);
    let reply = allocate(&mut c, 3_400, &id, vec![], vec![]).unwrap();
    assert_eq!(reply.completed.len(), 1);
    assert_eq!(reply.completed[0].end, ContainerEnd::Lost);
    // A container the book does not hold, running on a node, is told to stop.
    let stray = "container_1000_0001_01_000099".to_owned();
    let reply = c.heartbeat(
        3_500,
        NodeHeartbeat {
            running: vec![stray.clone()],
            ..silent
        },
    );
    assert_eq!(reply.stop, vec![stray]);
    c.check_books().unwrap();
}

#[test]
fn a_released_container_is_told_to_its_master_once_and_counted_once() {
    let (mut c, id) = running_on_small_cluster();
    let tasks = allocate(&mut c, 3_000, &id, vec![ask(1, "*")], vec![]).unwrap();
    let released = tasks.allocated[0].clone();
    let reply = allocate(
        &mut c,
        3_100,
        &id,
        vec![],
        vec![released.container_id.clone()],
    )
    .unwrap();
    assert_eq!(reply.completed.len(), 1);
    assert_eq!(reply.completed[0].end, ContainerEnd::Killed);
    assert_eq!(ended(&c, ContainerEnd::Killed), 1);
    // Its node's own report of the kill changes nothing.
    let end = ContainerStatus {
        container_id: released.container_id.clone(),
        end: ContainerEnd::Killed,
        exit_code: None,
    };
    heartbeat(&mut c, 3_200, &released.node_id, vec![end]);
    assert_eq!(ended(&c, ContainerEnd::Killed), 1);
    assert!(
        allocate(&mut c, 3_300, &id, vec![], vec![])
            .unwrap()
            .completed
            .is_empty()
    );
    c.check_books().unwrap();
}

#[test]
fn a_granted_container_never_started_is_taken_back_after_the_allocation_expiry() {
    let expiry = 5_000;
    let mut c = small_cluster_with(Settings {
        allocation_expiry_ms: expiry,
        ..Settings::default()
    });
    let (id, _) = running_app(&mut c);
    beat_all(&mut c, 2_500); // the master runs
    let tasks = allocate(&mut c, 3_000, &id, vec![ask(2, "*")], vec![]).unwrap();
    let unstarted = tasks.allocated[0].container_id.clone();
    let started = tasks.allocated[1].container_id.clone();
    // Every node lists what it runs: all but the one never started.
    let nodes: Vec<String> = c.nodes().map(|n| n.node_id.clone()).collect();
    let beat = |c: &mut Cluster, now: i64| {
        for node in &nodes {
            let running = c
                .containers_on(node)
                .map(|(id, _)| id.clone())
                .filter(|id| *id != unstarted)
                .collect();
            c.heartbeat(
                now,
                NodeHeartbeat {
                    node_id: node.clone(),
                    running,
                    completed: vec![],
                    telemetry: NodeTelemetry::default(),
                },
            );
        }
    };
    beat(&mut c, 3_100);
    c.expire(3_000 + expiry);
    assert!(c.container(&unstarted).is_some(), "not yet");
    allocate(&mut c, 3_000 + expiry, &id, vec![], vec![]).unwrap();
    beat(&mut c, 3_001 + expiry);
    c.expire(3_001 + expiry);
    assert!(c.container(&unstarted).is_none());
    assert!(c.container(&started).is_some());
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Running
    );
    let reply = allocate(&mut c, 3_002 + expiry, &id, vec![], vec![]).unwrap();
    assert_eq!(reply.completed.len(), 1);
    assert_eq!(reply.completed[0].container_id, unstarted);
    c.check_books().unwrap();
}

#[test]
fn bad_calls_say_what_is_wrong_and_change_nothing() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    assert!(matches!(
        allocate(&mut c, 1, "application_1000_0099", vec![], vec![]),
        Err(ClusterError::UnknownApp(_))
    ));
    let id = c.new_application(2_000, "alice").unwrap();
    c.submit(2_000, NewApp::new(&id, "x", "u", "q")).unwrap();
    assert!(matches!(
        c.submit(2_000, NewApp::new(&id, "x", "u", "q")),
        Err(ClusterError::AlreadySubmitted(_))
    ));
    assert!(
        matches!(
            allocate(&mut c, 3_000, &id, vec![], vec![]),
            Err(ClusterError::NotRunning(_))
        ),
        "master not registered yet"
    );
    c.master_registered(&id, None).unwrap();
    // A node the rm does not know (yet) is no error: the ask waits for it to join.
    allocate(
        &mut c,
        3_000,
        &id,
        vec![ask(1, "*"), ask(1, "nowhere")],
        vec![],
    )
    .expect("an ask for an unknown node is kept waiting, not refused");
    let zero = ResourceRequest {
        priority: 0,
        ..ask(1, "*")
    };
    assert!(
        allocate(&mut c, 3_000, &id, vec![zero], vec![])
            .unwrap_err()
            .to_string()
            .contains("priority 0")
    );
    // Nothing was asked by the refused calls.
    assert!(
        allocate(&mut c, 3_000, &id, vec![], vec![])
            .unwrap()
            .allocated
            .is_empty()
    );
    assert!(heartbeat(&mut c, 3_000, "stranger:1", vec![]).reregister);
}

#[test]
fn a_restarted_rm_takes_back_what_rejoining_nodes_run_and_stops_orphans() {
    // On n1 (4 GiB) a 512 MiB master and three 1 GiB tasks fill 3.5 GiB.
    let mut before = cluster(&[("n1:8042", "r1")]);
    let (id, master) = running_app(&mut before);
    let tasks: Vec<String> = allocate(&mut before, 3_000, &id, vec![ask(3, "*")], vec![])
        .unwrap()
        .allocated
        .into_iter()
        .map(|a| a.container_id)
        .collect();
    assert_eq!(tasks.len(), 3);
    let (apps, nodes) = before.take_dirty();

    let mut after = Cluster::new(Settings::default(), ClusterSecret::new(KEY), 9_000);
    after.set_restart_epoch(1);
    after.restore(apps, nodes);
    let held = |id: &str, memory_mb| NodeContainer {
        container_id: id.into(),
        resource: Resource {
            memory_mb,
            vcores: 1,
        },
    };
    let orphan = "container_e1000_1000_0099_01_000042"; // an application never submitted
    let mut reported: Vec<NodeContainer> = tasks.iter().map(|t| held(t, 1024)).collect();
    reported.extend([
        held(&master.container.container_id, 512),
        held(orphan, 64),
        held("garbage", 64),
    ]);
    after.register_node(
        10_000,
        RegisterNode {
            node_id: "n1:8042".into(),
            rack: "r1".into(),
            capability: Resource {
                memory_mb: 4096,
                vcores: 8,
            },
            containers: reported,
        },
    );
    let app = after.app(&id).unwrap();
    assert_eq!(
        app.master.as_deref(),
        Some(master.container.container_id.as_str())
    );
    assert_eq!(after.running_containers(&id), 4);
    assert_eq!(after.metrics().allocated_mb, 512 + 3 * 1024);
    let stop = heartbeat(&mut after, 10_100, "n1:8042", vec![]).stop;
    assert_eq!(stop, [orphan.to_owned(), "garbage".to_owned()]);

    // The master re-registers and asks again: only the room left (512 MiB) is granted, as a
    // 512 MiB container; a 1 GiB one does not fit.
    after.master_registered(&id, None).unwrap();
    let small = |count| ResourceRequest {
        capability: Resource {
            memory_mb: 512,
            vcores: 1,
        },
        ..ask(count, "*")
    };
    assert!(
        allocate(&mut after, 10_200, &id, vec![ask(1, "*")], vec![])
            .unwrap()
            .allocated
            .is_empty()
    );
    let granted = allocate(&mut after, 10_300, &id, vec![small(2)], vec![])
        .unwrap()
        .allocated;
    assert_eq!(granted.len(), 1);
    assert!(
        granted[0]
            .container_id
            .starts_with("container_e01_1000_0001_"),
        "{}",
        granted[0].container_id
    );

    // A recovered task ends: its master hears of it.
    let ended = ContainerStatus {
        container_id: tasks[0].clone(),
        end: ContainerEnd::Exited,
        exit_code: Some(0),
    };
    heartbeat(&mut after, 10_400, "n1:8042", vec![ended.clone()]);
    let reply = allocate(&mut after, 10_500, &id, vec![], vec![]).unwrap();
    assert_eq!(reply.completed, [ended]);
}

#[test]
fn a_registered_master_that_falls_silent_fails_its_attempt() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    let (id, master) = running_app(&mut c);
    let expiry = Settings::default().am_expiry_ms;
    allocate(&mut c, 3_000, &id, vec![], vec![]).unwrap();
    // The node stays alive; the master calls once more, then never again.
    heartbeat(&mut c, 3_000 + expiry, "n1:8042", vec![]);
    allocate(&mut c, 3_000 + expiry, &id, vec![], vec![]).unwrap();
    heartbeat(&mut c, 3_000 + 2 * expiry, "n1:8042", vec![]);
    c.expire(3_000 + 2 * expiry);
    assert_eq!(
        c.app(&id).unwrap().lifecycle.state,
        YarnApplicationState::Running,
        "silent for exactly the expiry"
    );
    heartbeat(&mut c, 3_001 + 2 * expiry, "n1:8042", vec![]);
    c.expire(3_001 + 2 * expiry);
    let app = c.app(&id).unwrap();
    assert_eq!(
        (app.lifecycle.state, app.lifecycle.attempts),
        (YarnApplicationState::Accepted, 2)
    );
    let reply = heartbeat(&mut c, 3_002 + 2 * expiry, "n1:8042", vec![]);
    assert!(
        reply.stop.contains(&master.container.container_id),
        "{reply:?}"
    );
    assert_eq!(reply.start.len(), 1, "the second attempt's master starts");
}

#[test]
fn a_master_launch_waiting_for_a_node_that_dies_is_replaced_not_started_twice() {
    let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
    let id = c.new_application(2_000, "alice").unwrap();
    c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
        .unwrap();
    let first = c.app(&id).unwrap().master.clone().unwrap();
    let first_node = c.app(&id).unwrap().attempts[0].node_id.clone();
    let other = if first_node == "n1:8042" {
        "n2:8042"
    } else {
        "n1:8042"
    };
    // The master's node falls silent before its heartbeat could start it; the other lives.
    heartbeat(&mut c, 11_000, other, vec![]);
    assert_eq!(c.expire(12_000), vec![first_node.clone()]);
    let app = c.app(&id).unwrap();
    assert_eq!(app.lifecycle.attempts, 2);
    let second = app.master.clone().unwrap();
    assert_ne!(first, second);
    // The node comes back: it is not told to start the first attempt's master.
    c.register_node(
        13_000,
        RegisterNode {
            node_id: first_node.clone(),
            rack: "r1".into(),
            capability: Resource {
                memory_mb: 4096,
                vcores: 4,
            },
            containers: Vec::new(),
        },
    );
    let back = heartbeat(&mut c, 13_100, &first_node, vec![]);
    assert!(back.start.is_empty(), "{back:?}");
    let started = heartbeat(&mut c, 13_200, other, vec![]);
    let ids: Vec<String> = started
        .start
        .iter()
        .filter_map(|s| s.token.as_ref().map(|t| t.container_id.clone()))
        .collect();
    assert_eq!(ids, vec![second]);
    assert_eq!(started.start[0].env["APP_ATTEMPT"], "2");
    assert!(started.start[0].env["YARD_TOKEN"].starts_with("yard1."));
}

#[test]
fn a_master_its_node_could_not_start_fails_over_instead_of_holding_its_room() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    let id = c.new_application(2_000, "alice").unwrap();
    c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
        .unwrap();
    let launch = heartbeat(&mut c, 2_100, "n1:8042", vec![]).start;
    let container = launch[0].token.as_ref().unwrap().container_id.clone();
    let failed = ContainerStatus {
        container_id: container,
        end: ContainerEnd::LaunchFailed,
        exit_code: None,
    };
    // The reply that hears of the failure already carries the next attempt's master.
    let next = heartbeat(&mut c, 2_200, "n1:8042", vec![failed]).start;
    let app = c.app(&id).unwrap();
    assert_eq!(
        (app.lifecycle.state, app.lifecycle.attempts),
        (YarnApplicationState::Accepted, 2)
    );
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].env["APP_ATTEMPT"], "2");
}

#[test]
fn masters_hold_at_most_their_share_and_one_always_runs() {
    // Two nodes of 4 vcores: 10 % is 0.8 vcores, so one 1-vcore master at a time.
    let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
    let ids: Vec<String> = (0..3)
        .map(|_| {
            let id = c.new_application(2_000, "alice").unwrap();
            c.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
                .unwrap();
            id
        })
        .collect();
    let with_master = |c: &Cluster| {
        ids.iter()
            .filter(|i| c.app(i).unwrap().master.is_some())
            .count()
    };
    assert_eq!(with_master(&c), 1);
    // The first finishes: the next master gets its room.
    c.master_registered(&ids[0], None).unwrap();
    c.master_finished(0, &ids[0], true, "").unwrap();
    assert_eq!(with_master(&c), 1);
    assert!(c.app(&ids[1]).unwrap().master.is_some());
    // A larger share admits more at once.
    let settings = Settings {
        master_share: 0.5,
        ..Settings::default()
    };
    let mut wide = Cluster::new(settings, ClusterSecret::new(KEY), 1_000);
    for n in ["n1:8042", "n2:8042"] {
        wide.register_node(
            1_000,
            RegisterNode {
                node_id: n.into(),
                rack: "r1".into(),
                capability: Resource {
                    memory_mb: 4096,
                    vcores: 4,
                },
                containers: Vec::new(),
            },
        );
    }
    let mut admitted = 0;
    for _ in 0..6 {
        let id = wide.new_application(2_000, "alice").unwrap();
        wide.submit(2_000, NewApp::new(&id, "job", "alice", "q"))
            .unwrap();
        admitted += usize::from(wide.app(&id).unwrap().master.is_some());
    }
    assert_eq!(admitted, 4, "4 of 8 vcores");
}

#[test]
fn only_issued_ids_are_submitted_once_and_unsubmitted_ones_lapse() {
    let mut c = cluster(&[("n1:8042", "r1")]);
    assert!(matches!(
        c.submit(2_000, NewApp::new("application_1000_0001", "x", "u", "q")),
        Err(ClusterError::NotIssued(_))
    ));
    let id = c.new_application(2_000, "alice").unwrap();
    let bob = Principal::User { user: "bob".into() };
    assert!(matches!(
        c.submit_issued(2_000, NewApp::new(&id, "x", "bob", "q"), &bob),
        Err(ClusterError::IssuedToOther { .. })
    ));
    // An hour later it has lapsed.
    c.new_application(2_000 + ISSUED_TTL_MS + 1, "alice")
        .unwrap();
    assert!(matches!(
        c.submit(
            2_000 + ISSUED_TTL_MS + 2,
            NewApp::new(&id, "x", "alice", "q")
        ),
        Err(ClusterError::NotIssued(_))
    ));
}

#[test]
fn a_node_back_from_the_dead_is_told_to_stop_what_ran_there_before() {
    let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
    let (id, master) = running_app(&mut c);
    let (host, other) = if master.container.node_id == "n1:8042" {
        ("n1:8042", "n2:8042")
    } else {
        ("n2:8042", "n1:8042")
    };
    heartbeat(&mut c, 11_000, other, vec![]);
    assert_eq!(c.expire(12_000), vec![host.to_owned()]);
    assert_eq!(c.app(&id).unwrap().lifecycle.attempts, 2);
    // It returns, still running the first attempt's master.
    c.register_node(
        13_000,
        RegisterNode {
            node_id: host.into(),
            rack: "r1".into(),
            capability: Resource {
                memory_mb: 4096,
                vcores: 4,
            },
            containers: vec![NodeContainer {
                container_id: master.container.container_id.clone(),
                resource: Resource {
                    memory_mb: 512,
                    vcores: 1,
                },
            }],
        },
    );
    let reply = heartbeat(&mut c, 13_100, host, vec![]);
    assert_eq!(reply.stop, vec![master.container.container_id.clone()]);
    assert!(reply.start.is_empty());
    assert_ne!(
        c.app(&id).unwrap().master.as_deref(),
        Some(master.container.container_id.as_str())
    );
}

#[test]
fn heartbeats_fill_each_nodes_history_and_a_rejoining_node_keeps_its_last_load() {
    let mut c = cluster(&[("n1:8042", "r1"), ("n2:8042", "r1")]);
    let beat = |c: &mut Cluster, now: i64, node: &str, load: f64| {
        c.heartbeat(
            now,
            NodeHeartbeat {
                node_id: node.into(),
                running: vec![],
                completed: vec![],
                telemetry: NodeTelemetry {
                    load_1m: load,
                    cores: 4,
                    ..NodeTelemetry::default()
                },
            },
        )
    };
    assert_eq!(c.node("n1:8042").unwrap().telemetry_ms, None);
    assert_eq!(c.telemetry_history("n1:8042").count(), 0);
    for i in 0..100 {
        beat(&mut c, 2_000 + i * 10, "n1:8042", i as f64);
    }
    beat(&mut c, 5_000, "n2:8042", 7.0);
    let n1: Vec<(i64, f64)> = c
        .telemetry_history("n1:8042")
        .map(|(at, t)| (at, t.load_1m))
        .collect();
    assert_eq!(n1.len(), TELEMETRY_HISTORY);
    assert_eq!(n1[0], (2_000 + 40 * 10, 40.0));
    assert_eq!(n1.last(), Some(&(2_990, 99.0)));
    assert!(n1.windows(2).all(|w| w[0].0 < w[1].0), "oldest first");
    let n2: Vec<f64> = c
        .telemetry_history("n2:8042")
        .map(|(_, t)| t.load_1m)
        .collect();
    assert_eq!(n2, [7.0]);
    assert_eq!(c.telemetry_history("nowhere:1").count(), 0);
    let node = c.node("n1:8042").unwrap();
    assert_eq!(
        (node.telemetry_ms, node.telemetry.load_1m),
        (Some(2_990), 99.0)
    );
    // A node unknown to the rm (it must register again) adds nothing.
    beat(&mut c, 6_000, "n3:8042", 1.0);
    assert_eq!(c.telemetry_history("n3:8042").count(), 0);
    // Registering again keeps the last known load and the history.
    c.register_node(
        7_000,
        RegisterNode {
            node_id: "n1:8042".into(),
            rack: "r1".into(),
            capability: Resource {
                memory_mb: 4096,
                vcores: 4,
            },
            containers: Vec::new(),
        },
    );
    let node = c.node("n1:8042").unwrap();
    assert_eq!(
        (node.telemetry_ms, node.telemetry.load_1m),
        (Some(2_990), 99.0)
    );
    assert_eq!(c.telemetry_history("n1:8042").count(), TELEMETRY_HISTORY);
    // The store gets the last sample with the node.
    let stored = c.take_changes().nodes;
    assert!(stored.iter().any(|n| n.node_id == "n1:8042"
        && n.telemetry_ms == Some(2_990)
        && n.telemetry.load_1m == 99.0));
}
