use super::*;
use crate::aria::{Durations, Profile};
use crate::policy::QuotaBasis;

const C: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

fn tasks(count: u32) -> Ask {
    Ask {
        priority: 1,
        place: Place::Any,
        size: C,
        count,
        relax_locality: true,
    }
}

/// A scheduler over one node of `slots` containers of `C`.
fn one_node(policy: ClusterPolicy, slots: u32) -> Scheduler {
    let mut s = Scheduler::new(policy);
    let mut out = Vec::new();
    s.handle_at(
        0,
        SchedEvent::NodeAdded {
            node: NodeId(0),
            rack: RackId(0),
            capacity: Resources::new(1024 * u64::from(slots), slots),
            running: Vec::new(),
        },
        &mut out,
    );
    s
}

fn at(s: &mut Scheduler, now_ms: i64, event: SchedEvent) -> Vec<Assignment> {
    let mut out = Vec::new();
    s.handle_at(now_ms, event, &mut out);
    out
}

/// A map-only job of `maps` maps of `map_s` seconds (largest 1.5×), due at `deadline_s`.
fn job(s: &mut Scheduler, now_ms: i64, app: u64, deadline_s: Option<i64>, maps: u32, map_s: f64) {
    let app = AppId(app);
    at(
        s,
        now_ms,
        SchedEvent::AppAdded {
            app,
            queue: "q".into(),
            user: String::new(),
            weight: 1.0,
        },
    );
    at(
        s,
        now_ms,
        SchedEvent::Deadline {
            app,
            deadline: deadline_s.map(|d| Deadline::from_epoch_ms(d * 1000)),
        },
    );
    at(
        s,
        now_ms,
        SchedEvent::Model {
            app,
            model: Some(JobModel {
                maps,
                reduces: 0,
                profile: Some(Profile {
                    map: Durations::new(map_s, 1.5 * map_s),
                    ..Profile::default()
                }),
            }),
        },
    );
}

fn granted(out: &[Assignment]) -> Vec<(AppId, ContainerId)> {
    out.iter()
        .filter_map(|a| match a {
            Assignment::Allocate { app, container, .. } => Some((*app, *container)),
            _ => None,
        })
        .collect()
}

fn preempted(out: &[Assignment]) -> Vec<(AppId, ContainerId)> {
    out.iter()
        .filter_map(|a| match a {
            Assignment::Preempt { app, container } => Some((*app, *container)),
            _ => None,
        })
        .collect()
}

fn complete(s: &mut Scheduler, now_ms: i64, done: &[(AppId, ContainerId)]) -> Vec<Assignment> {
    let mut out = Vec::new();
    for &(app, container) in done {
        s.handle_at(
            now_ms,
            SchedEvent::ContainerCompleted { app, container },
            &mut out,
        );
    }
    out
}

#[test]
fn edf_serves_the_earliest_deadline_first_and_fifo_the_first_arrival() {
    for policy in [ClusterPolicy::Edf, ClusterPolicy::Fifo] {
        let mut s = one_node(policy, 2);
        // App 9 holds the node; then 1 (due at 300 s), 2 (due at 100 s) and 3 (no
        // deadline) ask, in that order.
        job(&mut s, 0, 9, None, 10, 1.0);
        let held = granted(&at(
            &mut s,
            0,
            SchedEvent::Asks {
                app: AppId(9),
                asks: vec![tasks(2)],
            },
        ));
        for (app, deadline) in [(1, Some(300)), (2, Some(100)), (3, None)] {
            job(&mut s, 0, app, deadline, 10, 1.0);
            at(
                &mut s,
                0,
                SchedEvent::Asks {
                    app: AppId(app),
                    asks: vec![tasks(1)],
                },
            );
        }
        at(
            &mut s,
            0,
            SchedEvent::Asks {
                app: AppId(9),
                asks: vec![tasks(0)],
            },
        );
        let mut order = Vec::new();
        for c in held {
            order.extend(granted(&complete(&mut s, 1, &[c])).iter().map(|g| g.0.0));
        }
        let rest = s.apps.keys().copied().collect::<Vec<_>>();
        assert!(rest.len() == 4);
        let expected = if policy == ClusterPolicy::Edf {
            vec![2, 1]
        } else {
            vec![1, 2]
        };
        assert_eq!(order, expected, "{policy}");
    }
}

#[test]
fn masters_are_placed_before_any_task_whatever_the_order() {
    let mut s = one_node(ClusterPolicy::Edf, 10).with_master_share(1.0);
    job(&mut s, 0, 1, Some(100), 10, 1.0);
    job(&mut s, 0, 2, Some(900), 10, 1.0);
    // App 1 (earlier deadline) asks for everything; app 2's master still gets a container.
    at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(9)],
        },
    );
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![Ask {
                priority: MASTER_PRIORITY,
                ..tasks(1)
            }],
        },
    );
    assert_eq!(granted(&out).len(), 1, "{out:?}");
    // With the node full, a master waiting and a task waiting: the freed container goes to
    // the master.
    let mut s = one_node(ClusterPolicy::Edf, 1);
    job(&mut s, 0, 1, Some(100), 10, 1.0);
    job(&mut s, 0, 2, Some(900), 10, 1.0);
    let held = granted(&at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(2)],
        },
    ));
    at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![Ask {
                priority: MASTER_PRIORITY,
                ..tasks(1)
            }],
        },
    );
    let out = complete(&mut s, 1, &held);
    assert!(
        matches!(
            out[..],
            [Assignment::Allocate {
                app: AppId(2),
                priority: MASTER_PRIORITY,
                ..
            }]
        ),
        "{out:?}"
    );
}

#[test]
fn minedf_gives_the_minimum_quota_and_leaves_the_rest_idle() {
    let mut s = one_node(ClusterPolicy::MinEdf, 20);
    // 100 maps of 10 s (max 15) due in 100 s: ⌈995 / (100 − 7.5)⌉ = 11 (ARIA's T^avg).
    job(&mut s, 0, 1, Some(100), 100, 10.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(100)],
        },
    );
    assert_eq!(granted(&out).len(), 11);
    let q = s.quota(AppId(1)).unwrap();
    assert_eq!((q.containers, q.basis), (Some(11), QuotaBasis::Feasible));
    assert_eq!(s.free_on(NodeId(0)), Some(Resources::new(9 * 1024, 9)));
    // Time passes with nothing done: 50 s left for the same 100 maps needs
    // ⌈995 / 42.5⌉ = 24, more than the node: everything it can use (infeasible).
    let out = at(&mut s, 50_000, SchedEvent::Tick);
    assert!(
        out.iter().any(|a| matches!(a, Assignment::Quota { quota, .. } if quota.basis == QuotaBasis::Infeasible)),
        "{out:?}"
    );
    assert_eq!(granted(&out).len(), 9);
    // Progress shrinks it again: 95 maps done with 50 s left needs ⌈45 / 42.5⌉ = 2.
    let out = at(
        &mut s,
        50_000,
        SchedEvent::Progress {
            app: AppId(1),
            maps_done: 95,
            reduces_done: 0,
        },
    );
    assert!(
        out.iter()
            .any(|a| matches!(a, Assignment::Quota { quota, .. } if quota.containers == Some(2))),
        "{out:?}"
    );
}

#[test]
fn minedf_wc_lends_spare_containers_then_kills_only_above_quota_tasks_for_an_earlier_deadline() {
    let mut s = one_node(ClusterPolicy::MinEdfWc, 20);
    // Job 1: 1000 maps of 600 s, due in 10⁶ s: quota 1, the other 19 are spare.
    job(&mut s, 0, 1, Some(1_000_000), 1000, 600.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(1000)],
        },
    );
    let held = granted(&out);
    assert_eq!(held.len(), 20);
    assert_eq!(s.quota(AppId(1)).unwrap().containers, Some(1));
    assert_eq!(s.spare_counts().spare_allocations, 19);
    // Job 2: 100 maps of 10 s due in 100 s needs 11 now. Job 1's maps end in 600 s, too
    // late to wait for: 11 of its spare tasks are killed, the newest first.
    job(&mut s, 0, 2, Some(100), 100, 10.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![tasks(100)],
        },
    );
    let killed = preempted(&out);
    assert_eq!(killed.len(), 11, "{out:?}");
    assert!(killed.iter().all(|(app, _)| *app == AppId(1)));
    let newest: Vec<_> = held.iter().rev().take(11).copied().collect();
    assert_eq!(killed, newest);
    assert_eq!(s.spare_counts().spare_kills, 11);
    // Job 1 keeps more than its quota; nothing is placed on the preempted containers
    // until they have ended; then job 2 gets them.
    assert_eq!(s.view(AppId(1)).unwrap().running, 9);
    assert_eq!(s.free_on(NodeId(0)), Some(Resources::default()));
    let out = complete(&mut s, 1_000, &killed);
    assert_eq!(granted(&out).iter().filter(|g| g.0 == AppId(2)).count(), 11);
    assert!(granted(&out).iter().all(|g| g.0 == AppId(2)));
    // A later tick kills nothing more: job 2 has its quota.
    assert!(preempted(&at(&mut s, 2_000, SchedEvent::Tick)).is_empty());
}

#[test]
fn minedf_wc_predicts_before_it_kills() {
    let mut s = one_node(ClusterPolicy::MinEdfWc, 20);
    // Job 1's maps take 2 s: its 19 spare containers free up long before job 2's deadline.
    job(&mut s, 0, 1, Some(1_000_000), 1000, 2.0);
    at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(1000)],
        },
    );
    job(&mut s, 0, 2, Some(100), 100, 10.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![tasks(100)],
        },
    );
    assert!(preempted(&out).is_empty(), "waiting is enough: {out:?}");
    // A container freed goes to job 2 (below its quota) before job 1's spare tier.
    let one = s.apps[&AppId(1)]
        .containers
        .iter()
        .next_back()
        .copied()
        .unwrap();
    let out = complete(&mut s, 1_000, &[(AppId(1), one)]);
    assert_eq!(
        granted(&out).iter().map(|g| g.0).collect::<Vec<_>>(),
        vec![AppId(2)]
    );
    // The releases did not come (a live master keeps its containers for its next task):
    // once the predicted time has passed, the shortfall is reclaimed by killing. By then
    // 97.5 s are left: the quota is ⌈995 / 90⌉ = 12, and job 2 holds 1.
    assert!(preempted(&at(&mut s, 1_500, SchedEvent::Tick)).is_empty());
    let out = at(&mut s, 2_500, SchedEvent::Tick);
    assert_eq!(s.quota(AppId(2)).unwrap().containers, Some(12));
    let killed = preempted(&out);
    assert_eq!(killed.len(), 11, "{out:?}");
    assert!(killed.iter().all(|(app, _)| *app == AppId(1)));
}

#[test]
fn an_infeasible_deadline_asks_for_everything_and_kills_nothing() {
    let mut s = one_node(ClusterPolicy::MinEdfWc, 20);
    job(&mut s, 0, 1, Some(1_000_000), 1000, 600.0);
    at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(1000)],
        },
    );
    // 100 maps of 10 s cannot end in 5 s on any allocation: the quota is all the job can
    // use (ARIA: "jobs missing their deadlines start requiring the maximum"), but killing
    // other jobs' work would not save it.
    job(&mut s, 0, 2, Some(5), 100, 10.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![tasks(100)],
        },
    );
    assert!(preempted(&out).is_empty(), "{out:?}");
    let q = s.quota(AppId(2)).unwrap();
    assert_eq!((q.containers, q.basis), (Some(20), QuotaBasis::Infeasible));
    // It is served first (earliest deadline, below its quota) as containers free up.
    let one = s.apps[&AppId(1)]
        .containers
        .iter()
        .next_back()
        .copied()
        .unwrap();
    let out = complete(&mut s, 1_000, &[(AppId(1), one)]);
    assert_eq!(
        granted(&out).iter().map(|g| g.0).collect::<Vec<_>>(),
        vec![AppId(2)]
    );
}

#[test]
fn a_job_without_deadline_runs_on_spare_containers_under_minedf_wc() {
    let mut s = one_node(ClusterPolicy::MinEdfWc, 4);
    job(&mut s, 0, 1, None, 10, 600.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(1),
            asks: vec![tasks(10)],
        },
    );
    assert_eq!(granted(&out).len(), 4);
    assert_eq!(s.spare_counts().spare_allocations, 4);
    assert_eq!(s.quota(AppId(1)).unwrap().basis, QuotaBasis::NoDeadline);
    // A job with a deadline takes them back: all four are spare.
    job(&mut s, 0, 2, Some(100), 2, 60.0);
    let out = at(
        &mut s,
        0,
        SchedEvent::Asks {
            app: AppId(2),
            asks: vec![tasks(2)],
        },
    );
    assert_eq!(preempted(&out).len(), 2, "{out:?}");
}
