//! The cost of one scheduling decision, for jobs of 10, 1,000 and 100,000 map tasks: a job
//! runs through Dart on 100 nodes × 2 containers (every map finishing in the same virtual
//! time, each finish freeing a container that the policy fills with the next map), and the
//! time spent inside `handle` is divided by the decisions it made. The 10-map job is the
//! baseline the others are compared with, in the same process.
//! Run: `cargo bench -p yard-appmaster --bench decision`. Goal: flat in the job size, and
//! under 2 µs per decision at 100,000 maps.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use yard_appmaster::policy::{
    AttemptId, Container, ContainerId, Decision, Event, JobSpec, Location, MapSpec, NodeId,
    PolicyConfig, PolicyKind, PowerLaw, Profile, RackId, Rng,
};

const NODES: u32 = 100;
const SLOTS: u32 = 2;
const RACKS: u32 = 10;

fn location(node: u32) -> Location {
    Location {
        node: NodeId(node),
        rack: RackId(node % RACKS),
    }
}

fn spec(maps: u32) -> JobSpec {
    JobSpec {
        // No deadline: Alg. 1 admits every map, so every map's decision is measured.
        deadline: None,
        maps: (0..maps)
            .map(|i| MapSpec {
                bytes: 64 << 20,
                replicas: (0..3).map(|r| location((i * 7 + r * 31) % NODES)).collect(),
            })
            .collect(),
        reduces: 10,
        profile: Profile {
            map_local: 10.0,
            map_remote: 15.0,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 1e6,
            shuffle_bandwidth: 1e8,
            reduce_time: PowerLaw {
                a: 1e-6,
                b: 1.0,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        },
        allotment: Some(NODES * SLOTS),
        recovered: Vec::new(),
    }
}

/// Runs one job; returns (time inside `handle`, decisions made, calls).
fn job(maps: u32) -> (Duration, u64, u64) {
    let mut policy = PolicyKind::Dart.build(PolicyConfig::default());
    let mut rng = Rng::seed_from_u64(1);
    let mut out = Vec::with_capacity(64);
    let (mut spent, mut decisions, mut calls) = (Duration::ZERO, 0u64, 0u64);
    let mut running: Vec<AttemptId> = Vec::new();
    let mut now = 0.0;
    let mut call =
        |event: Event, now: f64, out: &mut Vec<Decision>, running: &mut Vec<AttemptId>| {
            out.clear();
            let t = Instant::now();
            policy.handle(now, event, &mut rng, out);
            spent += t.elapsed();
            calls += 1;
            decisions += out.len() as u64;
            for d in out.iter() {
                match d {
                    Decision::LaunchMap { attempt, .. }
                    | Decision::LaunchReduce { attempt, .. } => running.push(*attempt),
                    Decision::Finish(_) => running.clear(),
                    _ => {}
                }
            }
            black_box(&out);
        };
    call(Event::JobStarted(spec(maps)), now, &mut out, &mut running);
    for i in 0..NODES * SLOTS {
        let c = Container {
            id: ContainerId(u64::from(i)),
            at: location(i % NODES),
        };
        call(Event::ContainerGranted(c), now, &mut out, &mut running);
    }
    // Finish the oldest running task, one at a time, until the job is done.
    let mut next = 0;
    while next < running.len() {
        now += 10.0 / f64::from(NODES * SLOTS);
        let attempt = running[next];
        next += 1;
        call(
            Event::TaskFinished {
                attempt,
                output_bytes: 10_000_000,
            },
            now,
            &mut out,
            &mut running,
        );
        if next % 64 == 0 {
            call(Event::Tick, now, &mut out, &mut running);
        }
    }
    (spent, decisions, calls)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!(
        "{:>9} {:>12} {:>10} {:>14} {:>12} {:>10}",
        "maps", "decisions", "calls", "ns/decision", "ns/call", "vs 10 maps"
    );
    let mut baseline = None;
    for maps in [10u32, 1_000, 100_000] {
        // Repeat small jobs so every size measures a comparable number of decisions.
        let repeats = if quick {
            1
        } else {
            (200_000 / maps).clamp(1, 20_000)
        };
        let (mut spent, mut decisions, mut calls) = (Duration::ZERO, 0, 0);
        for _ in 0..repeats {
            let (s, d, c) = job(maps);
            spent += s;
            decisions += d;
            calls += c;
        }
        let per_decision = spent.as_nanos() as f64 / decisions as f64;
        let ratio = per_decision / *baseline.get_or_insert(per_decision);
        println!(
            "{maps:>9} {decisions:>12} {calls:>10} {per_decision:>14.0} {:>12.0} {ratio:>10.2}",
            spent.as_nanos() as f64 / calls as f64
        );
    }
    println!("goal: under 2000 ns per decision at 100,000 maps, and flat in the job size");
}
