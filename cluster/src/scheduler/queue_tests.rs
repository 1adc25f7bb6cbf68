//! Capacity queues in the scheduler: maximum capacity, user limits, spare room, and preemption
//! across queues only to restore a guarantee, after the configured wait. Events in, assignments
//! out, the time passed in.

use super::*;
use crate::queues::{Acl, QueueConfig, Queues};

const C: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

/// A queue at `capacity` % with `max` % and `ulf`, running FIFO, open to all.
fn queue(name: &str, capacity: f64, max: f64, ulf: f64) -> QueueConfig {
    QueueConfig {
        name: name.into(),
        capacity,
        maximum_capacity: max,
        user_limit_factor: ulf,
        acl_submit_applications: Acl::All,
        policy: ClusterPolicy::Fifo,
    }
}

/// Two nodes of four 1 GiB containers each (8 in all) under `queues`.
fn cluster(queues: Vec<QueueConfig>, wait_ms: u64) -> Scheduler {
    let queues = Queues::new(queues, wait_ms).unwrap();
    let mut s = Scheduler::new(ClusterPolicy::Fifo).with_queues(queues);
    let mut out = Vec::new();
    for i in 0..2 {
        s.handle_at(
            0,
            SchedEvent::NodeAdded {
                node: NodeId(i),
                rack: RackId(0),
                capacity: Resources::new(4 * 1024, 4),
                running: Vec::new(),
            },
            &mut out,
        );
    }
    s
}

fn add(s: &mut Scheduler, at: i64, app: u64, queue: &str, user: &str) {
    let mut out = Vec::new();
    s.handle_at(
        at,
        SchedEvent::AppAdded {
            app: AppId(app),
            queue: queue.into(),
            user: user.into(),
            weight: 1.0,
        },
        &mut out,
    );
}

fn ask(s: &mut Scheduler, at: i64, app: u64, count: u32) -> Vec<Assignment> {
    let mut out = Vec::new();
    s.handle_at(
        at,
        SchedEvent::Asks {
            app: AppId(app),
            asks: vec![Ask {
                priority: 1,
                place: Place::Any,
                size: C,
                count,
                relax_locality: true,
            }],
        },
        &mut out,
    );
    out
}

fn tick(s: &mut Scheduler, at: i64) -> Vec<Assignment> {
    let mut out = Vec::new();
    s.handle_at(at, SchedEvent::Tick, &mut out);
    out
}

fn held(s: &Scheduler, app: u64) -> u64 {
    s.used(AppId(app)).unwrap().memory_mb / 1024
}

fn preempted(out: &[Assignment]) -> Vec<(AppId, ContainerId)> {
    out.iter()
        .filter_map(|a| match a {
            Assignment::Preempt { app, container } => Some((*app, *container)),
            _ => None,
        })
        .collect()
}

/// Ends every preempted container, as the rm does once its node reports it stopped.
fn end(s: &mut Scheduler, at: i64, gone: &[(AppId, ContainerId)]) -> Vec<Assignment> {
    let mut out = Vec::new();
    for &(app, container) in gone {
        s.handle_at(
            at,
            SchedEvent::ContainerCompleted { app, container },
            &mut out,
        );
    }
    out
}

/// Issue 35's "Done when", at the pure level: team A floods an idle cluster and holds all of
/// it; team B submits; B waits out the preemption wait, then A's newest containers are taken
/// back and B gets its guaranteed half, and no more is taken.
#[test]
fn a_flood_cannot_hold_another_queues_guarantee_past_the_wait() {
    let wait = 15_000;
    let mut s = cluster(
        vec![queue("a", 50.0, 100.0, 2.0), queue("b", 50.0, 100.0, 2.0)],
        wait,
    );
    add(&mut s, 0, 1, "a", "alice");
    let out = ask(&mut s, 0, 1, 100);
    assert_eq!(
        out.len(),
        8,
        "an idle cluster's spare room goes to a, up to its maximum"
    );
    assert_eq!(held(&s, 1), 8);
    add(&mut s, 1_000, 2, "b", "bob");
    let out = ask(&mut s, 1_000, 2, 100);
    assert!(
        out.is_empty(),
        "no room, and nothing taken before the wait: {out:?}"
    );
    assert!(preempted(&tick(&mut s, 1_000 + wait as i64 - 1)).is_empty());
    let out = tick(&mut s, 1_000 + wait as i64);
    let gone = preempted(&out);
    assert_eq!(
        gone.len(),
        4,
        "exactly b's guarantee is taken back: {out:?}"
    );
    assert!(gone.iter().all(|(app, _)| *app == AppId(1)));
    // Newest first: a's last four grants (ids 5..=8).
    let mut ids: Vec<u64> = gone.iter().map(|(_, c)| c.0).collect();
    ids.sort();
    assert_eq!(ids, vec![5, 6, 7, 8]);
    assert!(
        preempted(&tick(&mut s, 1_000 + wait as i64 + 500)).is_empty(),
        "taken once"
    );
    let out = end(&mut s, 17_000, &gone);
    assert_eq!(
        out.iter()
            .filter(|a| matches!(a, Assignment::Allocate { app: AppId(2), .. }))
            .count(),
        4,
        "the freed room goes to b, furthest below its guarantee: {out:?}"
    );
    assert_eq!((held(&s, 1), held(&s, 2)), (4, 4));
    // Both at their guarantees now: however long b waits, a keeps its half.
    assert!(preempted(&tick(&mut s, 100_000)).is_empty());
    let usage = s.queue_usage();
    assert_eq!(usage[0].preempted, 4);
    assert_eq!(usage[1].used.memory_mb, 4 * 1024);
}

#[test]
fn a_queue_never_passes_its_maximum_capacity() {
    let mut s = cluster(
        vec![queue("a", 50.0, 75.0, 2.0), queue("b", 50.0, 100.0, 1.0)],
        15_000,
    );
    add(&mut s, 0, 1, "a", "alice");
    let out = ask(&mut s, 0, 1, 100);
    assert_eq!(
        out.len(),
        6,
        "75 % of 8: two containers stay idle, b is empty"
    );
    assert_eq!(s.queue_usage()[0].used.memory_mb, 6 * 1024);
    // Freed and asked again: still 6.
    let out = tick(&mut s, 60_000);
    assert!(
        out.is_empty(),
        "nothing preempted for a queue above its guarantee"
    );
    add(&mut s, 0, 2, "a", "carol");
    assert!(
        ask(&mut s, 0, 2, 5).is_empty(),
        "another user, the same queue maximum"
    );
}

#[test]
fn a_user_holds_at_most_user_limit_factor_times_the_queues_capacity() {
    let mut s = cluster(
        vec![queue("a", 50.0, 100.0, 1.0), queue("b", 50.0, 100.0, 1.0)],
        15_000,
    );
    add(&mut s, 0, 1, "a", "alice");
    add(&mut s, 0, 2, "a", "alice");
    add(&mut s, 0, 3, "a", "carol");
    assert_eq!(ask(&mut s, 0, 1, 3).len(), 3);
    assert_eq!(
        ask(&mut s, 0, 2, 3).len(),
        1,
        "alice: 4 of 8 in all, her limit"
    );
    assert_eq!(
        ask(&mut s, 0, 3, 9).len(),
        4,
        "carol takes the rest, up to the maximum"
    );
}

#[test]
fn the_least_used_queue_against_its_guarantee_is_served_first() {
    let mut s = cluster(
        vec![queue("a", 25.0, 100.0, 4.0), queue("b", 75.0, 100.0, 4.0)],
        15_000,
    );
    add(&mut s, 0, 1, "a", "alice");
    add(&mut s, 0, 2, "b", "bob");
    assert_eq!(ask(&mut s, 0, 1, 8).len(), 8);
    assert_eq!(ask(&mut s, 0, 2, 8).len(), 0);
    // Four containers end at once: b (0 of 6) is served before a (4 of 2) asks again.
    let out = end(
        &mut s,
        1_000,
        &(5..=8)
            .map(|c| (AppId(1), ContainerId(c)))
            .collect::<Vec<_>>(),
    );
    let _ = ask(&mut s, 1_000, 1, 4);
    assert_eq!(
        out.iter()
            .filter(|a| matches!(a, Assignment::Allocate { app: AppId(2), .. }))
            .count(),
        4
    );
    // b is short of its guarantee (6) by 2; a is above its own (2) by 2: exactly that comes back.
    let gone = preempted(&tick(&mut s, 16_000));
    assert_eq!(gone.len(), 2);
    let _ = end(&mut s, 16_500, &gone);
    assert_eq!((held(&s, 1), held(&s, 2)), (2, 6));
}

#[test]
fn preemption_never_takes_a_queue_below_its_own_guarantee() {
    let mut s = cluster(
        vec![queue("a", 50.0, 100.0, 2.0), queue("b", 50.0, 100.0, 2.0)],
        1_000,
    );
    add(&mut s, 0, 1, "a", "alice");
    add(&mut s, 0, 2, "b", "bob");
    assert_eq!(ask(&mut s, 0, 2, 3).len(), 3);
    assert_eq!(ask(&mut s, 0, 1, 100).len(), 5, "a takes b's idle room");
    let _ = ask(&mut s, 0, 2, 4);
    let gone = preempted(&tick(&mut s, 5_000));
    assert_eq!(
        gone.len(),
        1,
        "a is one above its guarantee: one back, not b's whole ask"
    );
    assert!(gone.iter().all(|(app, _)| *app == AppId(1)));
}

#[test]
fn minedf_wc_lends_only_up_to_its_queues_maximum() {
    let mut q = queue("a", 50.0, 50.0, 1.0);
    q.policy = ClusterPolicy::MinEdfWc;
    let mut s = cluster(vec![q, queue("b", 50.0, 100.0, 1.0)], 15_000);
    add(&mut s, 0, 1, "a", "alice");
    // No deadline under MinEDF-WC: quota 0, every container a spare one.
    assert_eq!(ask(&mut s, 0, 1, 8).len(), 4);
    assert_eq!(s.spare_counts().spare_allocations, 4);
}

/// Without a queue file: one `default` queue at 100 % whatever the applications name, and the
/// same decisions as a scheduler that never heard of queues (no limit, no preemption).
#[test]
fn without_a_queue_file_one_queue_takes_the_whole_cluster() {
    let mut s = Scheduler::new(ClusterPolicy::Fifo);
    let mut out = Vec::new();
    s.handle_at(
        0,
        SchedEvent::NodeAdded {
            node: NodeId(0),
            rack: RackId(0),
            capacity: Resources::new(8 * 1024, 8),
            running: Vec::new(),
        },
        &mut out,
    );
    assert!(!s.queues().configured());
    add(&mut s, 0, 1, "anything", "alice");
    add(&mut s, 0, 2, "other", "bob");
    assert_eq!(ask(&mut s, 0, 1, 8).len(), 8, "alice alone takes it all");
    assert!(ask(&mut s, 0, 2, 8).is_empty());
    assert!(preempted(&tick(&mut s, 3_600_000)).is_empty());
    assert_eq!(s.queue_usage().len(), 1);
    assert_eq!(s.queue_usage()[0].used.memory_mb, 8 * 1024);
    // Its room goes to bob's waiting app when alice's ends; the queue is empty once both have.
    let mut out = Vec::new();
    s.handle_at(0, SchedEvent::AppRemoved(AppId(1)), &mut out);
    assert_eq!(out.len(), 8);
    assert_eq!(held(&s, 2), 8);
    s.handle_at(0, SchedEvent::AppRemoved(AppId(2)), &mut out);
    assert_eq!(s.queue_usage()[0].used, Resources::default());
}
