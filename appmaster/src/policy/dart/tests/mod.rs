//! Dart's tests, by stage: the paper's worked examples (`paper`), yard's deadline guard
//! (`guard`) and yard's other extensions (`extensions`); the fixtures they share are here.

use super::*;
use crate::policy::{
    Container, JobSpec, Location, MapId, MapSpec, NodeId, Profile, RackId, testing,
};

const NOW: Seconds = 3.0;

mod extensions;
mod guard;
mod paper;

fn at(node: u32) -> Location {
    Location {
        node: NodeId(node),
        rack: RackId(node),
    }
}

/// Maps 0–4 running (k = 5) on containers 0–4; map 5 (the paper's m6) pending with its
/// replica on node 7; container 5 offered on node 7 (local) or node 8 (remote).
fn d1(kind: PolicyKind, deadline: Seconds, local: bool) -> (Run, ContainerId) {
    d1_from(kind, d1_spec(deadline), local)
}

fn d1_spec(deadline: Seconds) -> JobSpec {
    JobSpec {
        deadline: Some(deadline),
        maps: (0..6)
            .map(|i| MapSpec {
                bytes: 1,
                replicas: vec![at(if i < 5 { i } else { 7 })],
            })
            .collect(),
        reduces: 3,
        profile: testing::d1_profile(2.5),
        allotment: None,
        recovered: Vec::new(),
    }
}

fn d1_from(kind: PolicyKind, spec: JobSpec, local: bool) -> (Run, ContainerId) {
    d1_with(Variant::of(kind), PolicyConfig::default(), spec, local)
}

fn d1_with(v: Variant, config: PolicyConfig, spec: JobSpec, local: bool) -> (Run, ContainerId) {
    let mut run = Run::new(v, config, spec, 0.0);
    let mut out = Vec::new();
    for i in 0..5 {
        run.core.grant(Container {
            id: ContainerId(i),
            at: at(i as u32),
        });
        run.core
            .launch_map(MapId(i as u32), ContainerId(i), 0.0, false, &mut out);
    }
    let offered = Container {
        id: ContainerId(5),
        at: at(if local { 7 } else { 8 }),
    };
    run.core.grant(offered);
    testing::set_d1_state(&mut run.est);
    (run, offered.id)
}

fn d1_extended_with(
    v: Variant,
    config: PolicyConfig,
    deadline: Seconds,
    local: bool,
) -> (Run, ContainerId) {
    let mut spec = d1_spec(deadline);
    spec.profile.reduce_time.spread = 0.3;
    spec.allotment = Some(2);
    let (mut run, c) = d1_with(v, config, spec, local);
    run.est.busy = 1.0;
    run.est.busy_since = None;
    run.est.backlog = 0.0;
    (run, c)
}

/// A one-map job whose mean map (10 s) does not fit `D` = 9 s, though the shortest map
/// its profile timed (6 s) does, with its shuffle and the least reduce.
fn lone_map_spec() -> JobSpec {
    let mut profile = testing::d1_profile(10.0);
    profile.map_remote = 10.0;
    profile.map_shortest = Some(6.0);
    profile.shuffle_bandwidth = 1_000.0;
    JobSpec {
        deadline: Some(9.0),
        maps: vec![MapSpec {
            bytes: 64,
            replicas: vec![at(0)],
        }],
        reduces: 1,
        profile,
        allotment: None,
        recovered: Vec::new(),
    }
}

fn send(p: &mut Dart, now: Seconds, e: Event) -> Vec<Decision> {
    use rand::SeedableRng;
    let mut out = Vec::new();
    p.handle(now, e, &mut Rng::seed_from_u64(1), &mut out);
    out
}

fn guarded() -> PolicyConfig {
    PolicyConfig {
        guarded: true,
        ..PolicyConfig::default()
    }
}

/// The map `p` launched on container 0 at node 0, if it did.
fn lone_map_started(p: &mut Dart) -> Option<AttemptId> {
    send(p, 0.0, Event::JobStarted(lone_map_spec()));
    let c = Container {
        id: ContainerId(0),
        at: at(0),
    };
    launched_maps(&send(p, 0.0, Event::ContainerGranted(c)))
        .first()
        .copied()
}

/// The map attempts `out` launches, in order.
fn launched_maps(out: &[Decision]) -> Vec<AttemptId> {
    out.iter()
        .filter_map(|d| match d {
            Decision::LaunchMap { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect()
}

/// Maps of 5 s anywhere, 4 bytes of output each on a fast link, and a reduce of
/// `reduce_a` seconds a byte (`f(d) = reduce_a·d`).
fn maps_of_4_bytes(reduce_a: Seconds) -> Profile {
    let mut profile = testing::d1_profile(5.0);
    profile.map_remote = 5.0;
    profile.partition_bytes = 4.0;
    profile.shuffle_bandwidth = 1_000.0;
    profile.reduce_time.a = reduce_a;
    profile
}

/// A job of `maps` 64-byte maps on node 0 and one reduce, due at `deadline`.
fn node0_job(maps: usize, deadline: Seconds, profile: Profile) -> JobSpec {
    JobSpec {
        deadline: Some(deadline),
        maps: vec![
            MapSpec {
                bytes: 64,
                replicas: vec![at(0)],
            };
            maps
        ],
        reduces: 1,
        profile,
        allotment: None,
        recovered: Vec::new(),
    }
}

/// Offers `n` containers on node 0 at time 0, one by one: the map attempts launched.
fn granted_at_zero(dart: &mut Dart, n: u64) -> Vec<AttemptId> {
    (0..n)
        .flat_map(|i| {
            let c = Container {
                id: ContainerId(i),
                at: at(0),
            };
            launched_maps(&send(dart, 0.0, Event::ContainerGranted(c)))
        })
        .collect()
}

/// The estimate a `CloseMapPhase` in `out` carried (outer `None`: no close).
fn closed_with(out: &[Decision]) -> Option<Option<Estimate>> {
    out.iter().find_map(|d| match d {
        Decision::CloseMapPhase { estimate, .. } => Some(*estimate),
        _ => None,
    })
}

fn approach(run: &mut Run, c: ContainerId) -> Vec<Decision> {
    let mut out = Vec::new();
    assert!(run.approach(c, NOW, &mut out));
    out
}

/// Reduce 0 on container 5 (node 7), its map phase closed; returns the decisions when its
/// input of `bytes` is ready at `t`.
fn reduce_ready(run: &mut Run, c: ContainerId, t: Seconds, bytes: u64) -> Vec<Decision> {
    let mut out = Vec::new();
    run.core.close_map_phase(None, &mut out);
    assert!(run.core.launch_next_reduce(c, t, &mut out));
    let mut out = Vec::new();
    run.event(
        t,
        Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes,
        },
        &mut out,
    );
    out
}

fn window(run: &Run) -> Seconds {
    run.est
        .window(run.core.k(), NOW, run.deadline().unwrap(), run.v.skew)
}

/// A wave of `n` maps of 1 byte each, all launched node-local at 0 on containers 0..n and
/// the map phase closed; 2 reduces, each map's output 2 B (p = 1) on a link of `bandwidth`
/// B/s, `f(d) = 0.5·d` with no spread; `T_l^a` 10 s. Dart's extensions `x`.
fn wave(x: Extensions, n: u32, bandwidth: f64) -> Run {
    let mut profile = testing::d1_profile(10.0);
    profile.shuffle_bandwidth = bandwidth;
    let spec = JobSpec {
        deadline: Some(1000.0),
        maps: (0..n)
            .map(|i| MapSpec {
                bytes: 1,
                replicas: vec![at(i)],
            })
            .collect(),
        reduces: 2,
        profile,
        allotment: None,
        recovered: Vec::new(),
    };
    let v = Variant {
        x,
        ..Variant::of(PolicyKind::Dart)
    };
    let mut run = Run::new(v, PolicyConfig::default(), spec, 0.0);
    let mut out = Vec::new();
    for i in 0..n {
        let c = ContainerId(u64::from(i));
        run.core.grant(Container { id: c, at: at(i) });
        run.core.launch_map(MapId(i), c, 0.0, false, &mut out);
        run.note_launch(0.0);
    }
    run.core.close_map_phase(None, &mut out);
    run
}

fn without(f: impl Fn(&mut Extensions)) -> Extensions {
    let mut x = Extensions::YARD;
    f(&mut x);
    x
}
