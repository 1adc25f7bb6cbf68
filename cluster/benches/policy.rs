//! The cluster policy's cost per heartbeat (issue 16 item 7): the rm's `Scheduler` with 10,
//! 1,000 and 10,000 applications waiting on 64 and 3,000 nodes (2 containers each), under
//! FIFO, EDF and MinEDF-WC. Two events are timed, as a node manager's heartbeat brings them:
//! a container completing (a slot frees, the policy picks who gets it) and the rm's tick
//! (quotas recomputed on the time left; MinEDF-WC's promised releases checked). Each figure
//! is the mean over a run of events, and its ratio to the same policy with 10 applications
//! on 64 nodes, run first in the same process: "flat" is a ratio near 1.
//! Run: `cargo bench -p yard-cluster --bench policy` (`-- --quick`: 1,000 applications at most).

use std::time::{Duration, Instant};

use yard_cluster::aria::{Durations, Profile};
use yard_cluster::policy::JobModel;
use yard_cluster::scheduler::{
    AppId, Ask, Assignment, ClusterPolicy, ContainerId, NodeId, Place, RackId, Resources,
    SchedEvent, Scheduler,
};
use yard_wire::deadline::Deadline;

const TASK: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

/// A deterministic stream of numbers (splitmix64): the benchmark needs no RNG crate.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

struct Bench {
    sched: Scheduler,
    out: Vec<Assignment>,
    /// Every running container and its app.
    running: Vec<(ContainerId, AppId)>,
    /// Containers preempted, to end at the next heartbeat.
    pending: Vec<(AppId, ContainerId)>,
    now_ms: i64,
    mix: Mix,
}

impl Bench {
    /// `apps` applications, each with a deadline an hour or two away, 100 maps and 10
    /// reduces profiled, asking for more containers than the cluster has; `nodes` nodes.
    fn new(policy: ClusterPolicy, apps: u64, nodes: u32) -> Bench {
        let mut b = Bench {
            sched: Scheduler::new(policy),
            out: Vec::new(),
            running: Vec::new(),
            pending: Vec::new(),
            now_ms: 1_000_000,
            mix: Mix(apps ^ u64::from(nodes)),
        };
        for n in 0..nodes {
            b.send(SchedEvent::NodeAdded {
                node: NodeId(n),
                rack: RackId(n / 40),
                capacity: Resources::new(2 * TASK.memory_mb, 2),
                running: Vec::new(),
            });
        }
        let profile = Profile {
            map: Durations::new(20.0, 30.0),
            first_shuffle: Durations::new(5.0, 8.0),
            typical_shuffle: Durations::new(4.0, 6.0),
            reduce: Durations::new(60.0, 90.0),
        };
        for a in 0..apps {
            let app = AppId(a);
            b.send(SchedEvent::AppAdded {
                app,
                queue: "default".into(),
                user: String::new(),
                weight: 1.0,
            });
            let deadline = b.now_ms + 3_600_000 + (b.mix.next() % 3_600_000) as i64;
            b.send(SchedEvent::Deadline {
                app,
                deadline: Some(Deadline::from_epoch_ms(deadline)),
            });
            b.send(SchedEvent::Model {
                app,
                model: Some(JobModel {
                    maps: 100,
                    reduces: 10,
                    profile: Some(profile),
                }),
            });
            b.send(SchedEvent::Asks {
                app,
                asks: vec![Ask {
                    priority: 1,
                    place: Place::Any,
                    size: TASK,
                    count: 1_000_000,
                    relax_locality: true,
                }],
            });
        }
        b
    }

    fn send(&mut self, event: SchedEvent) {
        self.out.clear();
        self.sched.handle_at(self.now_ms, event, &mut self.out);
        for a in &self.out {
            match *a {
                Assignment::Allocate { app, container, .. } => {
                    self.running.push((container, app));
                }
                Assignment::Preempt { app, container } => {
                    // The container ends at once: its node manager stops it.
                    if let Some(i) = self.running.iter().position(|&(c, _)| c == container) {
                        self.running.swap_remove(i);
                    }
                    self.pending.push((app, container));
                }
                _ => {}
            }
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let apps: &[u64] = if quick {
        &[10, 1_000]
    } else {
        &[10, 1_000, 10_000]
    };
    println!(
        "policy     apps  nodes  setup s  completion µs  ×base  tick µs  ×base  (events timed)"
    );
    for policy in [
        ClusterPolicy::Fifo,
        ClusterPolicy::Edf,
        ClusterPolicy::MinEdfWc,
    ] {
        let mut base: Option<(f64, f64)> = None;
        for &nodes in &[64u32, 3_000] {
            for &n in apps {
                let t = Instant::now();
                let mut b = Bench::new(policy, n, nodes);
                let setup = t.elapsed();
                let (completion, events) = time_completions(&mut b);
                let tick = time_ticks(&mut b);
                let (c0, t0) = *base.get_or_insert((completion, tick));
                println!(
                    "{:<9} {:>6} {:>6} {:>8.2} {:>14.1} {:>6.1} {:>8.1} {:>6.1}  ({events})",
                    policy.name(),
                    n,
                    nodes,
                    setup.as_secs_f64(),
                    completion,
                    completion / c0,
                    tick,
                    tick / t0,
                );
            }
        }
    }
}

/// Mean µs of a container completing (a random running one), for about a second.
fn time_completions(b: &mut Bench) -> (f64, u64) {
    let budget = Duration::from_secs(1);
    let t = Instant::now();
    let mut events = 0u64;
    while t.elapsed() < budget && !b.running.is_empty() {
        let i = (b.mix.next() % b.running.len() as u64) as usize;
        let (container, app) = b.running.swap_remove(i);
        b.now_ms += 7;
        b.send(SchedEvent::ContainerCompleted { app, container });
        events += 1;
    }
    (
        t.elapsed().as_secs_f64() * 1e6 / events.max(1) as f64,
        events,
    )
}

/// Mean µs of the rm's tick, a second of virtual time apart, for about a second.
fn time_ticks(b: &mut Bench) -> f64 {
    let budget = Duration::from_secs(1);
    let t = Instant::now();
    let mut events = 0u64;
    while t.elapsed() < budget {
        b.now_ms += 1_000;
        b.send(SchedEvent::Tick);
        events += 1;
        // Preempted containers ended: their masters let them go.
        for (app, container) in std::mem::take(&mut b.pending) {
            b.send(SchedEvent::ContainerCompleted { app, container });
        }
    }
    t.elapsed().as_secs_f64() * 1e6 / events.max(1) as f64
}
