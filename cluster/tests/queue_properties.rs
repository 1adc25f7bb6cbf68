//! Whatever happens, capacity queues hold: no grant takes a queue past its maximum capacity or
//! a user past their limit, preemption across queues never takes a master nor a queue below its
//! own guarantee, and the same events give the same decisions.

mod arb_steps;

use arb_steps::{SIZE, Shape, Step, World, events, placing_step};
use proptest::prelude::*;
use yard_cluster::queues::{Acl, QueueConfig, Queues};
use yard_cluster::scheduler::{AppId, Assignment, ClusterPolicy, SchedEvent, Scheduler};

/// Six nodes of up to four containers; masters' and tasks' asks.
const SHAPE: Shape = Shape {
    nodes: 6,
    capacity: 5,
    priorities: 0..3,
};

/// Queue `a` (40 %, at most 60 %; one user up to 60 %) and `b` (60 %, up to all of it; one
/// user up to 60 %), both FIFO, a 2 s preemption wait.
fn queues() -> Queues {
    let q = |name: &str, capacity: f64, max: f64, ulf: f64| QueueConfig {
        name: name.into(),
        capacity,
        maximum_capacity: max,
        user_limit_factor: ulf,
        acl_submit_applications: Acl::All,
        policy: ClusterPolicy::Fifo,
    };
    Queues::new(
        vec![q("a", 40.0, 60.0, 1.5), q("b", 60.0, 100.0, 1.0)],
        2_000,
    )
    .unwrap()
}

/// App `a`'s queue (even: `a`, odd: `b`) and user (three users across both).
fn queue_of(app: AppId) -> usize {
    (app.0 % 2) as usize
}

fn user_of(app: AppId) -> String {
    format!("u{}", app.0 % 3)
}

/// `pct` of `total_mb`, as the scheduler rounds it.
fn share(total_mb: u64, pct: f64) -> u64 {
    if pct >= 100.0 {
        total_mb
    } else {
        (total_mb as f64 * pct / 100.0) as u64
    }
}

/// Runs the steps, checking every assignment as it comes; returns them all.
fn run(steps: &[Step]) -> Vec<Assignment> {
    let config = queues();
    let mut s = Scheduler::new(ClusterPolicy::Fifo).with_queues(config.clone());
    let mut w = World::default();
    let mut all = Vec::new();
    for st in steps {
        for mut event in events(&mut w, st) {
            if let SchedEvent::AppAdded {
                app, queue, user, ..
            } = &mut event
            {
                *queue = config.all()[queue_of(*app)].name.clone();
                *user = user_of(*app);
            }
            let mut out = Vec::new();
            s.handle_at(w.now, event, &mut out);
            for a in &out {
                let total = w.capacity.values().sum::<u64>() * SIZE.memory_mb;
                // What each queue holds (preempted containers until they end), before `a`.
                let held = |w: &World, q: usize, only: &dyn Fn(AppId) -> bool| {
                    w.live
                        .iter()
                        .filter(|l| queue_of(l.app) == q && only(l.app))
                        .count() as u64
                        * SIZE.memory_mb
                };
                match *a {
                    Assignment::Preempt { app, container } => {
                        let q = queue_of(app);
                        let l = w.live.iter().find(|l| l.container == container);
                        assert!(l.is_some_and(|l| !l.master), "a master preempted");
                        let giving = w
                            .live
                            .iter()
                            .filter(|l| queue_of(l.app) == q && w.preempting.contains(&l.container))
                            .count() as u64
                            * SIZE.memory_mb;
                        let guarantee = share(total, config.all()[q].capacity);
                        assert!(
                            held(&w, q, &|_| true) - giving >= guarantee + SIZE.memory_mb,
                            "queue {q} preempted below its guarantee {guarantee}"
                        );
                        assert!(w.preempting.insert(container), "preempted twice");
                    }
                    Assignment::Allocate { app, .. } => {
                        w.take(ClusterPolicy::Fifo, std::slice::from_ref(a));
                        let (q, c) = (queue_of(app), &config.all()[queue_of(app)]);
                        let used = held(&w, q, &|_| true);
                        let max = share(total, c.maximum_capacity);
                        assert!(used <= max, "queue {q} holds {used} MB > its maximum {max}");
                        let user = user_of(app);
                        let mine = held(&w, q, &|x| user_of(x) == user);
                        let limit = share(total, c.user_limit());
                        assert!(mine <= limit, "{user} holds {mine} MB in {q} > {limit}");
                    }
                    _ => w.take(ClusterPolicy::Fifo, std::slice::from_ref(a)),
                }
            }
            all.extend(out);
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn queues_keep_their_limits_and_decisions_repeat(
        steps in prop::collection::vec(
            prop_oneof![
                6 => placing_step(&SHAPE),
                1 => (0i64..5_000).prop_map(Step::Advance),
            ],
            0..80,
        ),
    ) {
        prop_assert_eq!(run(&steps), run(&steps));
    }
}
