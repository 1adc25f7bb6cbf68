use yard_appmaster::policy::{NodeId, PowerLaw, RackId};
use yard_wire::protocol::{
    AllocateReply, Allocated, ContainerEnd, ContainerStatus, JobType, ResourceRequest, TaskBound,
};
use yard_wire::token::ContainerToken;

use super::super::recovery::recoverable;
use super::super::typing::job_type_view;
use super::*;
use crate::Done;
use crate::master::MAX_TASK_FAILURES;

/// Three nodes in two racks; three maps, each on two of them.
/// A profile of 1 s maps, 10-byte partitions and a linear reduce of 1 ms per byte.
fn test_profile() -> Profile {
    Profile {
        map_local: 1.0,
        map_remote: 1.0,
        map_shortest: None,
        map_spread: None,
        partition_bytes: 10.0,
        shuffle_bandwidth: 1e6,
        reduce_time: PowerLaw {
            a: 1e-3,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    }
}

pub(in crate::master) fn state() -> State {
    state_recovering(|_| Vec::new())
}

/// [`state`] for a master attempt that takes back `recovered(maps)`.
fn state_recovering(recovered: impl FnOnce(&[MapInput]) -> Vec<Recovered>) -> State {
    let nodes = [("a:1", 0, "r1"), ("b:1", 1, "r1"), ("c:1", 2, "r2")];
    let locations = nodes
        .iter()
        .map(|(n, i, r)| {
            let rack = RackId(u32::from(*r == "r2"));
            (
                n.to_string(),
                Location {
                    node: NodeId(*i),
                    rack,
                },
            )
        })
        .collect();
    let racks = nodes
        .iter()
        .map(|(n, _, r)| (n.to_string(), r.to_string()))
        .collect();
    let app = AppSpec::parse("wordcount", &[]).unwrap();
    let capability = Resource {
        memory_mb: 256,
        vcores: 1,
    };
    let mut s = State::new(
        "http://m".into(),
        "application_1_0001".into(),
        app,
        1,
        7,
        capability,
        (locations, racks),
    );
    let on = |names: &[&str], s: &State| MapInput {
        split: Split {
            index: 0,
            bytes: 100,
        },
        block: None,
        at: names.iter().map(|n| s.locations[*n]).collect(),
        nodes: names.iter().map(|n| n.to_string()).collect(),
    };
    let mut maps = vec![
        on(&["a:1", "b:1"], &s),
        on(&["b:1", "c:1"], &s),
        on(&["a:1", "c:1"], &s),
    ];
    for (i, m) in maps.iter_mut().enumerate() {
        m.split.index = i as u32;
    }
    let recovered = recovered(&maps);
    s.start_phase(Phase {
        policy: PolicyKind::Full,
        maps,
        population: Population {
            maps: 3,
            bytes: 300,
        },
        profile: test_profile(),
        basis: Some(basis_in(100_000)),
        sampler: false,
        recovered,
        guard: None,
        answer_cost: 0.25,
        warm_launch: None,
    });
    s
}

pub(in crate::master) fn granted(id: &str, node: &str) -> Allocated {
    Allocated {
        container_id: id.into(),
        node_id: node.into(),
        node_http_address: format!("http://{node}"),
        resource: Resource {
            memory_mb: 256,
            vcores: 1,
        },
        priority: 1,
        token: ContainerToken {
            container_id: id.into(),
            node_id: node.into(),
            memory_mb: 256,
            vcores: 1,
            expires_ms: 0,
            signature: String::new(),
        },
    }
}

fn counts(asks: &[ResourceRequest]) -> BTreeMap<String, u32> {
    asks.iter()
        .map(|a| (a.resource_name.clone(), a.num_containers))
        .collect()
}

#[test]
fn asks_name_every_node_and_rack_holding_an_unlaunched_map() {
    let s = state();
    let want = s.job.as_ref().unwrap().want;
    assert!(want >= 3, "full wants a container per map: {want}");
    let asks = counts(&s.asks());
    assert_eq!(asks["*"], want);
    assert_eq!((asks["a:1"], asks["b:1"], asks["c:1"]), (2, 2, 2));
    // A map on a and b counts once for r1.
    assert_eq!((asks["r1"], asks["r2"]), (3, 2));
}

#[test]
fn the_policy_is_told_the_container_cap_or_the_clusters_task_slots_as_its_allotment() {
    // ARIA sizes its want by the allotment (`min(N, allotment)`): told the cap or the
    // cluster's task slots, it wants no more than the fewer; untold, what its deadline
    // needs.
    let want = |cap: Option<u32>, slots: Option<u32>| {
        let mut s = state();
        s.max_containers = cap;
        s.cluster_slots = slots;
        let job = s.job.as_ref().unwrap();
        let phase = Phase {
            policy: PolicyKind::Aria,
            maps: job.maps.clone(),
            population: job.population,
            profile: test_profile(),
            // Three maps of a second by 1.5 s: a container each.
            basis: Some(basis_in(1_500)),
            sampler: false,
            recovered: Vec::new(),
            guard: None,
            answer_cost: 0.25,
            warm_launch: None,
        };
        s.start_phase(phase);
        s.job.as_ref().unwrap().want
    };
    assert!(want(None, None) > 1, "{}", want(None, None));
    assert_eq!(want(Some(1), None), 1);
    // No cap: the cluster's one task slot (the demo at scale) is the allotment.
    assert_eq!(want(None, Some(1)), 1);
    assert_eq!(want(Some(1), Some(5)), 1);
    assert_eq!(want(Some(4), Some(2)), 2);
}

/// A job without a deadline: its policy is told none (ARIA then asks for the fewest slots,
/// one, where a deadline sized it above), its deadline gauge has no series and its status
/// says `null` — no far number stands for "none".
#[test]
fn a_job_without_a_deadline_tells_its_policy_none_and_shows_none() {
    let mut s = state();
    let job = s.job.as_ref().unwrap();
    s.start_phase(Phase {
        policy: PolicyKind::Aria,
        maps: job.maps.clone(),
        population: job.population,
        profile: test_profile(),
        basis: Some(DeadlineBasis {
            deadline: None,
            ..basis_in(1_500)
        }),
        sampler: false,
        recovered: Vec::new(),
        guard: Some(1.0),
        answer_cost: 0.25,
        warm_launch: None,
    });
    let job = s.job.as_ref().unwrap();
    assert_eq!(job.deadline, None);
    assert_eq!(job.want, 1, "ARIA without a deadline: one slot");
    assert!(
        !scrape(&s)
            .keys()
            .any(|k| k.starts_with("yard_mr_master_deadline_seconds")),
        "{:?}",
        scrape(&s)
    );
    assert_eq!(s.status()["deadline"], Value::Null);
}

#[test]
fn max_containers_caps_the_asks_and_sends_an_over_grant_back() {
    let mut s = state();
    s.max_containers = Some(2);
    assert!(s.job.as_ref().unwrap().want > 2);
    let asks = counts(&s.asks());
    assert!(asks.values().all(|&n| n <= 2), "{asks:?}");
    assert_eq!(asks["*"], 2);
    // Three granted (asks crossed grants in flight): the third goes straight back.
    let fresh = s.allocated(AllocateReply {
        allocated: vec![
            granted("c1", "a:1"),
            granted("c2", "b:1"),
            granted("c3", "c:1"),
        ],
        completed: Vec::new(),
        deadline: None,
    });
    let ids: Vec<&str> = fresh.iter().map(|c| c.container_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(s.releases, ["c3"]);
    assert_eq!((s.held_containers(), s.peak_containers), (2, 2));
    assert_eq!(counts(&s.asks())["*"], 0, "nothing more while 2 are held");
}

#[test]
fn a_runner_gets_a_local_map_then_its_output_is_listed_for_the_reducers() {
    let mut s = state();
    let fresh = s.allocated(AllocateReply {
        allocated: vec![granted("c1", "c:1")],
        completed: Vec::new(),
        deadline: None,
    });
    assert_eq!(fresh.len(), 1);
    // The policy hears of the container only when its runner asks: then a map runs there.
    let Some(Order::Run { task }) = s.next_order("c1") else {
        panic!("a task for the runner");
    };
    let Work::Map { split, output, .. } = &task.work else {
        panic!("a map first");
    };
    assert!(
        matches!(split.index, 1 | 2),
        "a map with a replica on c: {split:?}"
    );
    assert!(
        s.asks()
            .iter()
            .all(|a| a.resource_name != "c:1" || a.num_containers == 1)
    );
    assert_eq!(
        s.outputs(&task.attempt, 0).map(|o| o.outputs.len()),
        None,
        "nothing yet"
    );
    assert!(!s.started(&task.attempt).kill);
    let done = done(30);
    assert!(!s.done(&task.attempt, done.clone()).kill);
    // Done, it is no longer live: its progress long-poll is answered `kill`, which the task,
    // having finished, takes as the end of its reports, not a kill (`task::heard`).
    assert!(s.standing(&task.attempt).kill);
    // A second report of the same attempt is told to stop, and counts nothing.
    assert!(s.done(&task.attempt, done).kill);
    let job = s.job.as_ref().unwrap();
    assert_eq!(job.outputs.len(), 1);
    assert_eq!(job.outputs[0].node, "http://c:1");
    assert_eq!(&job.outputs[0].output, output);
    assert_eq!(job.policy.progress().maps_done, 1);
}

#[test]
fn the_task_samplers_maps_are_timed_from_their_process_start_plus_a_warm_launch() {
    let done = done(30);
    // A cold launch takes longer than this whole test: a map timed from its launch
    // decision would take less than `WARM`, one timed from its start `WARM` and more.
    const WARM: f64 = 1000.0;
    // A cluster that has measured no launch: the sampler's maps are timed from their
    // launch decision, as every other run's.
    for (sampler, warm) in [(false, Some(WARM)), (true, Some(WARM)), (true, None)] {
        let from_start = sampler && warm.is_some();
        let mut s = state();
        let job = s.job.as_mut().unwrap();
        job.sampler = sampler;
        job.warm_launch = warm;
        s.allocated(AllocateReply {
            allocated: vec![granted("c1", "c:1")],
            completed: Vec::new(),
            deadline: None,
        });
        let Some(Order::Run { task }) = s.next_order("c1") else {
            panic!("a task for the runner");
        };
        let job = s.job.as_ref().unwrap();
        assert_eq!(job.unstarted.len(), usize::from(from_start));
        assert!(!s.started(&task.attempt).kill);
        assert!(s.job.as_ref().unwrap().unstarted.is_empty());
        assert!(!s.done(&task.attempt, done.clone()).kill);
        let took = s.job.as_ref().unwrap().observer.record().map_local;
        let took = took.expect("a node-local map was timed");
        match from_start {
            true => assert!((WARM..WARM + 60.0).contains(&took), "{took}"),
            false => assert!(took < WARM, "{took}"),
        }
    }
}

/// The entries attempt 1 would have kept at the rm, as the rm hands them back.
fn kept_entries(s: &State) -> serde_json::Map<String, Value> {
    s.unsent
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn a_second_master_attempt_lists_the_first_ones_outputs_and_runs_only_the_other_maps() {
    let mut first = state();
    first.allocated(AllocateReply {
        allocated: vec![granted("c1", "c:1")],
        completed: Vec::new(),
        deadline: None,
    });
    let Some(Order::Run { task }) = first.next_order("c1") else {
        panic!("a task for the runner");
    };
    let Work::Map { split, output, .. } = task.work.clone() else {
        panic!("a map first");
    };
    assert_eq!(
        output,
        format!("1.1-{}", split.index),
        "named for attempt and phase"
    );
    assert!(
        kept_entries(&first).is_empty(),
        "nothing to keep before a map is done"
    );
    assert!(!first.done(&task.attempt, done(30)).kill);
    let kept = kept_entries(&first);
    assert_eq!(kept.len(), 1, "{kept:?}");

    // The master dies; its next attempt starts from what the rm kept.
    let mut second = state_recovering(|maps| recoverable(&kept, maps));
    second.master_attempt = 2;
    let job = second.job.as_ref().unwrap();
    assert_eq!(job.recovered, 1);
    assert_eq!(
        (
            job.outputs.len(),
            job.outputs[0].node.as_str(),
            job.outputs[0].output.as_str()
        ),
        (1, "http://c:1", output.as_str()),
        "listed for the reducers from the start"
    );
    let p = job.policy.progress();
    assert_eq!((p.k, p.maps_done), (1, 1));
    // Containers on every node: only the two other maps run, under new output names.
    second.allocated(AllocateReply {
        allocated: vec![
            granted("d1", "a:1"),
            granted("d2", "b:1"),
            granted("d3", "c:1"),
        ],
        completed: Vec::new(),
        deadline: None,
    });
    let mut ran = Vec::new();
    for c in ["d1", "d2", "d3"] {
        if let Some(Order::Run { task }) = second.next_order(c)
            && let Work::Map { split, output, .. } = &task.work
        {
            assert!(output.starts_with("2."), "{output}");
            ran.push(split.index);
        }
    }
    ran.sort_unstable();
    let mut others: Vec<u32> = (0..3).filter(|&i| i != split.index).collect();
    others.sort_unstable();
    assert_eq!(ran, others);
}

#[test]
fn a_lost_output_is_kept_as_lost_so_a_next_attempt_runs_its_map_again() {
    let mut s = state();
    let task = granted_task(&mut s, "c1", "c:1");
    assert!(!s.done(&task.attempt, done(30)).kill);
    s.node_lost("http://c:1", "its node was lost");
    let kept = kept_entries(&s);
    assert_eq!(kept.len(), 1, "the same key, now saying lost: {kept:?}");
    let back = state_recovering(|maps| recoverable(&kept, maps));
    assert_eq!(back.job.as_ref().unwrap().recovered, 0);
}

#[test]
fn a_container_that_ends_under_a_task_is_lost_to_the_policy() {
    let mut s = state();
    let task = granted_task(&mut s, "c1", "a:1");
    s.allocated(AllocateReply {
        allocated: Vec::new(),
        completed: vec![ContainerStatus {
            container_id: "c1".into(),
            end: yard_wire::protocol::ContainerEnd::Lost,
            exit_code: None,
        }],
        deadline: None,
    });
    // The attempt went with it: its reports are refused, and the map waits for another
    // container.
    assert!(s.progress(&task.attempt, 0.5).kill);
    assert!(s.containers.is_empty());
    assert_eq!(s.job.as_ref().unwrap().policy.progress().maps_done, 0);
    assert!(counts(&s.asks())["*"] >= 3);
}

/// Container `id` on `node` granted to `s`, and the task its runner is given first.
pub(in crate::master) fn granted_task(s: &mut State, id: &str, node: &str) -> Box<TaskSpec> {
    s.allocated(AllocateReply {
        allocated: vec![granted(id, node)],
        completed: Vec::new(),
        deadline: None,
    });
    run_order(s.next_order(id))
}

fn run_order(order: Option<Order>) -> Box<TaskSpec> {
    match order {
        Some(Order::Run { task }) => task,
        other => panic!("a task to run: {other:?}"),
    }
}

fn done(bytes: u64) -> Done {
    Done {
        output_bytes: bytes,
        stats: None,
        partial: None,
        riders: Vec::new(),
        measured: None,
    }
}

pub(in crate::master) fn ended(
    container: &str,
    end: ContainerEnd,
    exit_code: Option<i32>,
) -> AllocateReply {
    AllocateReply {
        allocated: Vec::new(),
        completed: vec![ContainerStatus {
            container_id: container.into(),
            end,
            exit_code,
        }],
        deadline: None,
    }
}

#[test]
fn the_progress_sent_to_the_rm_never_goes_back_when_the_job_ends() {
    let mut s = state();
    assert_eq!(s.progress_for_rm(), 0.0);
    s.allocated(AllocateReply {
        allocated: vec![granted("c1", "a:1")],
        completed: Vec::new(),
        deadline: None,
    });
    for i in 1..=3u32 {
        let task = run_order(s.next_order("c1"));
        assert!(matches!(task.work, Work::Map { .. }), "map {i}");
        s.done(&task.attempt, done(10));
        assert_eq!(s.progress_for_rm(), f64::from(i) / 3.0);
    }
    // `run_phase` takes the finished job: until the master stops, the rm still hears 1.
    s.job = None;
    assert_eq!(s.progress_for_rm(), 1.0);
}

#[test]
fn a_task_that_failed_four_times_is_not_run_again_and_fails_the_job_at_once() {
    // Testers saw tasks fail 13–32 times: the cap was noticed only at the next tick, and
    // meanwhile the policy restarted the task, which failed again within milliseconds.
    let mut s = state();
    s.allocated(AllocateReply {
        allocated: vec![granted("c1", "a:1")],
        completed: Vec::new(),
        deadline: None,
    });
    let mut order = s.next_order("c1");
    let mut map = None;
    for _ in 0..MAX_TASK_FAILURES {
        let task = run_order(order);
        let Work::Map { split, .. } = task.work else {
            panic!("a map");
        };
        assert!(map.is_none_or(|m| m == split.index), "the same map again");
        map = Some(split.index);
        s.failed(&task.attempt, "exit code 1");
        order = s.next_order("c1");
    }
    assert!(
        matches!(order, Some(Order::Exit)),
        "no fifth attempt: {order:?}"
    );
    let job = s.job.as_ref().unwrap();
    let fatal = job.fatal.clone().expect("the job fails");
    assert!(fatal.contains("failed 4 times"), "{fatal}");
    assert!(fatal.contains("exit code 1"), "{fatal}");
    assert_eq!(
        job.failures.values().copied().max(),
        Some(MAX_TASK_FAILURES)
    );
}

#[test]
fn preempted_attempts_run_again_without_counting_toward_the_limit() {
    let mut s = state();
    for round in 0..6 {
        let c = format!("p{round}");
        s.allocated(AllocateReply {
            allocated: vec![granted(&c, "a:1")],
            completed: Vec::new(),
            deadline: None,
        });
        let Some(Order::Run { .. }) = s.next_order(&c) else {
            panic!("round {round}: a task for the runner");
        };
        s.allocated(ended(&c, ContainerEnd::Preempted, None));
        let job = s.job.as_ref().unwrap();
        assert!(job.fatal.is_none(), "round {round}: {:?}", job.fatal);
        assert!(job.failures.is_empty(), "round {round}: {:?}", job.failures);
    }
}

#[test]
fn attempts_lost_with_their_containers_count_toward_the_limit() {
    let mut s = state();
    let mut maps = BTreeSet::new();
    for i in 0..MAX_TASK_FAILURES {
        let c = format!("c{i}");
        assert!(s.job.as_ref().unwrap().fatal.is_none());
        s.allocated(AllocateReply {
            allocated: vec![granted(&c, "a:1")],
            completed: Vec::new(),
            deadline: None,
        });
        let task = run_order(s.next_order(&c));
        let Work::Map { split, .. } = task.work else {
            panic!("a map");
        };
        maps.insert(split.index);
        // The container dies under the attempt (the nodemanager killed it, say).
        s.allocated(ended(&c, ContainerEnd::Exited, Some(137)));
    }
    assert_eq!(maps.len(), 1, "the lost map restarts first: {maps:?}");
    let fatal = s
        .job
        .as_ref()
        .unwrap()
        .fatal
        .clone()
        .expect("the job fails");
    assert!(fatal.contains("failed 4 times"), "{fatal}");
    assert!(fatal.contains("exit code 137"), "{fatal}");
}

/// Runs the three maps, one per node (map 0 on a, 1 on b, 2 on c), to their end: the
/// reduce then runs on a's container, b's and c's are handed back. Returns the reduce's
/// attempt name.
fn maps_done(s: &mut State) -> String {
    s.allocated(AllocateReply {
        allocated: vec![
            granted("c1", "a:1"),
            granted("c2", "b:1"),
            granted("c3", "c:1"),
        ],
        completed: Vec::new(),
        deadline: None,
    });
    let tasks: Vec<_> = ["c1", "c2", "c3"]
        .iter()
        .map(|c| run_order(s.next_order(c)))
        .collect();
    for task in &tasks {
        assert!(!s.done(&task.attempt, done(30)).kill);
    }
    let job = s.job.as_ref().unwrap();
    let at: Vec<_> = job
        .outputs
        .iter()
        .map(|o| (o.split.index, o.node.as_str()))
        .collect();
    assert_eq!(
        at,
        [(0, "http://a:1"), (1, "http://b:1"), (2, "http://c:1")]
    );
    let reduce = run_order(s.next_order("c1"));
    assert!(matches!(reduce.work, Work::Reduce { .. }));
    assert!(s.outputs(&reduce.attempt, 0).unwrap().complete);
    reduce.attempt
}

fn rerun_until_complete(s: &mut State, reduce: &str, container: &str, node: &str) -> u32 {
    s.allocated(AllocateReply {
        allocated: vec![granted(container, node)],
        completed: Vec::new(),
        deadline: None,
    });
    let task = run_order(s.next_order(container));
    let Work::Map { split, .. } = task.work else {
        panic!("the lost map runs again");
    };
    assert!(
        s.outputs(reduce, 3).is_none(),
        "nothing listed before the re-run is done"
    );
    assert!(!s.done(&task.attempt, done(30)).kill);
    let listed = s.outputs(reduce, 3).expect("the re-run's output");
    assert!(listed.complete);
    assert_eq!(listed.outputs.len(), 1);
    assert_eq!(listed.outputs[0].split.index, split.index);
    assert_eq!(listed.outputs[0].node, format!("http://{node}"));
    split.index
}

#[test]
fn a_lost_node_reruns_exactly_the_finished_maps_whose_outputs_were_there() {
    let mut s = state();
    let reduce = maps_done(&mut s);
    // Node b is lost: the rm completes its container (handed back, not yet ended) LOST.
    s.allocated(ended("c2", ContainerEnd::Lost, None));
    let job = s.job.as_ref().unwrap();
    let p = job.policy.progress();
    assert_eq!((p.k, p.maps_done, p.restarts_waiting), (2, 2, 1));
    let mut current: Vec<_> = job.output_at.keys().map(|m| m.0).collect();
    current.sort_unstable();
    assert_eq!(current, [0, 2]);
    // The reducer is not told the outputs are complete: the lost one is still to come.
    let listed = s.outputs(&reduce, 0).unwrap();
    assert!(!listed.complete);
    assert!(counts(&s.asks())["*"] >= 1, "a container for the re-run");
    assert_eq!(rerun_until_complete(&mut s, &reduce, "c4", "c:1"), 1);
    let p = s.job.as_ref().unwrap().policy.progress();
    assert_eq!((p.k, p.maps_done, p.restarts_waiting), (3, 3, 0));
}

#[test]
fn a_reducer_that_cannot_fetch_an_output_has_its_map_run_again() {
    let mut s = state();
    let reduce = maps_done(&mut s);
    let refused = "connection refused";
    assert!(!s.fetch_failed(&reduce, "1.1-2", "http://c:1", refused).kill);
    let job = s.job.as_ref().unwrap();
    assert_eq!(job.policy.progress().restarts_waiting, 1);
    assert_eq!(job.failures[&TaskRef::Map(MapId(2))], 1);
    // The same report again (another fetch of the stale entry) changes nothing.
    assert!(!s.fetch_failed(&reduce, "1.1-2", "http://c:1", refused).kill);
    assert_eq!(s.job.as_ref().unwrap().failures[&TaskRef::Map(MapId(2))], 1);
    // Only a live reduce attempt may report.
    assert!(s.fetch_failed("1-0", "1-0", "http://a:1", refused).kill);
    assert!(s.fetch_failed("9-9", "1-0", "http://a:1", refused).kill);
    assert_eq!(rerun_until_complete(&mut s, &reduce, "c4", "b:1"), 2);
}

#[test]
fn a_lost_output_no_reduce_still_needs_is_not_run_again() {
    let mut s = state();
    let reduce = maps_done(&mut s);
    assert!(!s.ready(&reduce, 90).kill);
    s.allocated(ended("c2", ContainerEnd::Lost, None));
    let p = s.job.as_ref().unwrap().policy.progress();
    assert_eq!((p.k, p.maps_done, p.restarts_waiting), (3, 3, 0));
}

fn measured(input: u64, output: u64, seconds: f64, rate: Option<&str>) -> Done {
    Done {
        measured: Some(crate::Measured {
            input_bytes: input,
            output_bytes: output,
            seconds,
            disk_rate_env: rate.map(str::to_owned),
            tail: None,
        }),
        ..done(output)
    }
}

const MB: u64 = 1_000_000;

#[test]
fn the_first_finished_map_and_reduce_type_an_untyped_kind_and_every_allocate_carries_it() {
    use yard_appmaster::typing::{Part, RateSource};
    let mut s = state();
    assert_eq!(s.allocate_request().job_type, None, "unknown until typed");
    s.allocated(AllocateReply {
        allocated: vec![
            granted("c1", "a:1"),
            granted("c2", "b:1"),
            granted("c3", "c:1"),
        ],
        completed: Vec::new(),
        deadline: None,
    });
    let maps: Vec<_> = ["c1", "c2", "c3"]
        .iter()
        .map(|c| run_order(s.next_order(c)))
        .collect();
    // A task that did not measure itself (an older task binary) is no probe.
    assert!(!s.done(&maps[2].attempt, done(30)).kill);
    assert_eq!(s.allocate_request().job_type, None);
    // The first that did: 64 + 64 MB in 2 s on a 50 MB/s disk, IO-bound.
    let io = measured(64 * MB, 64 * MB, 2.0, Some("50000000"));
    assert!(!s.done(&maps[1].attempt, io).kill);
    let io_map = JobType {
        map: Some(TaskBound::Io),
        reduce: None,
    };
    assert_eq!(s.allocate_request().job_type, Some(io_map));
    // A later map, however CPU-bound, is no probe.
    let cpu = measured(MB, 0, 100.0, Some("50000000"));
    assert!(!s.done(&maps[0].attempt, cpu).kill);
    assert_eq!(s.allocate_request().job_type, Some(io_map));
    // Nothing waited for the probe: every map ran beside it.
    assert_eq!(s.job.as_ref().unwrap().policy.progress().maps_done, 3);
    // The reduce's node gave no usable rate: typed against the default, and it says so.
    let reduce = ["c1", "c2", "c3"]
        .iter()
        .find_map(|c| match s.next_order(c) {
            Some(Order::Run { task }) => Some(task),
            _ => None,
        })
        .expect("the reduce runs in one of the containers");
    assert!(matches!(reduce.work, Work::Reduce { .. }));
    let r = measured(8 * MB, 1_000, 8.0, Some("fast"));
    assert!(!s.done(&reduce.attempt, r).kill);
    assert_eq!(
        s.allocate_request().job_type,
        Some(JobType {
            map: Some(TaskBound::Io),
            reduce: Some(TaskBound::Cpu),
        })
    );
    let unsaved = s.typing.take_unsaved();
    assert_eq!(
        unsaved.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        [Part::Map, Part::Reduce]
    );
    assert_eq!(unsaved[0].1.disk_rate, 50e6);
    assert_eq!(unsaved[1].1.rate_source, RateSource::Default);
    let shown = serde_json::to_value(job_type_view(&s.typing)).unwrap();
    assert_eq!(shown["map"]["bound"], "io");
    assert_eq!(shown["map"]["fromStore"], false);
    assert_eq!(shown["reduce"]["diskRateSource"], "default");
    assert!(
        shown["summary"]
            .as_str()
            .unwrap()
            .starts_with("map: io-bound (q = 64 MB/s against a 50 MB/s disk); reduce: cpu-bound"),
        "{shown}"
    );
    assert_eq!(s.status()["jobType"], shown["summary"]);
}

#[test]
fn a_kind_typed_in_the_store_is_typed_from_its_first_allocate_and_has_no_probes() {
    use yard_appmaster::typing::{KindType, PartType, Probe, Typing};
    let mut s = state();
    let stored = PartType::of(
        Probe {
            input_bytes: 64e6,
            output_bytes: 32e6,
            seconds: 8.0,
        },
        Some(50e6),
        1,
    )
    .unwrap();
    s.typing = Typing::new(KindType {
        map: Some(stored),
        reduce: None,
    });
    let cpu_map = JobType {
        map: Some(TaskBound::Cpu),
        reduce: None,
    };
    assert_eq!(s.allocate_request().job_type, Some(cpu_map));
    s.allocated(AllocateReply {
        allocated: vec![granted("c1", "a:1")],
        completed: Vec::new(),
        deadline: None,
    });
    let map = run_order(s.next_order("c1"));
    let io = measured(64 * MB, 64 * MB, 1.0, Some("50000000"));
    assert!(!s.done(&map.attempt, io).kill);
    assert_eq!(s.allocate_request().job_type, Some(cpu_map), "kept");
    assert!(s.typing.take_unsaved().is_empty(), "nothing new to store");
    assert!(job_type_view(&s.typing).map.unwrap().from_store);
}

/// The series of one scrape, `name{labels}` → value.
fn scrape(s: &State) -> BTreeMap<String, f64> {
    let text = s.metrics.scrape(s);
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_owned(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_metrics_count_the_policys_decisions_and_read_the_job_at_scrape_time() {
    let mut s = state();
    let before = scrape(&s);
    for decision in super::super::metrics::DECISIONS {
        let series =
            format!("yard_mr_master_decisions_total{{decision=\"{decision}\",policy=\"full\"}}");
        assert_eq!(before.get(&series), Some(&0.0), "{series} in {before:#?}");
    }
    assert_eq!(
        before["yard_mr_master_maps{policy=\"full\",state=\"pending\"}"],
        3.0
    );
    assert_eq!(
        before["yard_mr_master_deadline_seconds{policy=\"full\"}"],
        100.0
    );
    assert_eq!(
        before["yard_mr_master_info{phase=\"job\",policy=\"full\"}"],
        1.0
    );
    let task = granted_task(&mut s, "c1", "c:1");
    assert!(!s.started(&task.attempt).kill);
    let running = scrape(&s);
    assert_eq!(
        running["yard_mr_master_decisions_total{decision=\"launch\",policy=\"full\"}"],
        1.0
    );
    assert_eq!(
        running["yard_mr_master_maps{policy=\"full\",state=\"running\"}"],
        1.0
    );
    assert_eq!(running["yard_mr_master_containers"], 1.0);
    let done = done(30);
    assert!(!s.done(&task.attempt, done).kill);
    let after = scrape(&s);
    let maps =
        |state: &str| after[&format!("yard_mr_master_maps{{policy=\"full\",state=\"{state}\"}}")];
    assert_eq!(
        (
            maps("pending"),
            maps("running"),
            maps("done"),
            maps("dropped")
        ),
        (1.0, 1.0, 1.0, 0.0),
        "the freed container runs the next map at once"
    );
    assert_eq!(
        after["yard_mr_master_decisions_total{decision=\"launch\",policy=\"full\"}"],
        2.0
    );
    assert_eq!(
        after["yard_mr_master_reduces{policy=\"full\",state=\"pending\"}"],
        1.0
    );
    assert!(after["yard_mr_master_processed_ratio{policy=\"full\"}"] > 0.0);
    // No label names the job, its application or a container.
    let text = s.metrics.scrape(&s);
    for id in ["application_1_0001", "c1", "0001"] {
        assert!(!text.contains(&format!("\"{id}\"")), "{id} in\n{text}");
    }
    for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
        assert!(line.starts_with("# TYPE yard_mr_master_"), "{line}");
    }
}

/// A phase's deadline `ms` after its start, with no margin.
fn basis_in(ms: i64) -> DeadlineBasis {
    DeadlineBasis {
        deadline: Some(Deadline::from_epoch_ms(1_000_000 + ms)),
        at_ms: 1_000_000,
        margin: 0.0,
    }
}
