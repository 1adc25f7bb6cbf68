//! A scripted cluster for policy tests: a virtual clock, containers on nodes in racks, task
//! durations from the script, a shuffle of fixed bandwidth. It carries out every decision and
//! checks the invariants every policy must keep, after every call:
//! - no more live attempts than held containers, one attempt per container;
//! - no map launched for the first time after `CloseMapPhase` (restarts of failed maps, and
//!   re-runs of maps whose output was lost, may run);
//! - a local-only map only ever launched node-local;
//! - at most one `Finish`, and nothing launched after it;
//! - at `Finish`, the maps done are exactly the maps whose output exists (finished, and not
//!   lost since).
//!
//! Reduces get their input once the map phase is closed, no map runs or waits to run again
//! (`Progress::restarts_waiting`), and the shuffle has drained. A scripted lost output is
//! reported with `MapOutputLost` while some reduce still needs it.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};

use rand::SeedableRng;
use yard_appmaster::policy::{
    AttemptId, Container, ContainerId, Decision, Estimate, Event, JobSpec, Locality, Location,
    MapId, MapSpec, NodeId, PowerLaw, Profile, Progress, RackId, ReduceId, Rng, RunObserver,
    RunRecord, Seconds, TaskPolicy,
};

pub type MapTime = Box<dyn Fn(MapId, Locality, u32) -> Seconds>;

/// The cluster and the tasks' true behaviour.
pub struct Script {
    pub nodes: u32,
    pub racks: u32,
    pub slots_per_node: u32,
    /// The most containers the job is granted at once.
    pub allotment: u32,
    /// True duration of a map attempt: (map, locality, how many attempts of it came before).
    pub map_time: MapTime,
    /// Maps that fail: (map, attempt number) → seconds into the attempt.
    pub fail: Box<dyn Fn(MapId, u32) -> Option<Seconds>>,
    /// Map outputs that are lost (their node fails): (map, how many times it finished before)
    /// → seconds after that finish.
    pub lose_output: Box<dyn Fn(MapId, u32) -> Option<Seconds>>,
    pub reduce_time: PowerLaw,
    /// How many times slower than scripted every task runs on a node (1: a normal node).
    pub node_slowdown: Box<dyn Fn(NodeId) -> f64>,
    pub map_output: u64,
    /// Shuffle bytes per second.
    pub bandwidth: f64,
    /// Heartbeat: progress reports, grants and the policy's tick.
    pub tick: Seconds,
    /// Give up (the test fails) after this much virtual time.
    pub horizon: Seconds,
}

impl Script {
    /// `nodes` nodes in `racks` racks, `slots` containers each, every map `map_s` seconds
    /// node-local and `remote_s` otherwise.
    pub fn uniform(
        nodes: u32,
        racks: u32,
        slots: u32,
        map_s: Seconds,
        remote_s: Seconds,
    ) -> Script {
        Script {
            nodes,
            racks,
            slots_per_node: slots,
            allotment: nodes * slots,
            map_time: Box::new(move |_, loc, _| {
                if loc == Locality::NodeLocal {
                    map_s
                } else {
                    remote_s
                }
            }),
            fail: Box::new(|_, _| None),
            lose_output: Box::new(|_, _| None),
            reduce_time: PowerLaw {
                a: 1e-6,
                b: 1.0,
                spread: 0.0,
            },
            node_slowdown: Box::new(|_| 1.0),
            map_output: 1_000_000,
            bandwidth: 1e9,
            tick: 1.0,
            horizon: 100_000.0,
        }
    }

    pub fn location(&self, node: u32) -> Location {
        Location {
            node: NodeId(node),
            rack: RackId(node % self.racks),
        }
    }

    /// `maps` maps of 64 MiB, map i's one replica on node i mod nodes; `deadline` in seconds,
    /// or `None` for a job without one.
    pub fn job(
        &self,
        maps: u32,
        reduces: u32,
        deadline: impl Into<Option<Seconds>>,
        profile: Profile,
    ) -> JobSpec {
        JobSpec {
            deadline: deadline.into(),
            maps: (0..maps)
                .map(|i| MapSpec {
                    bytes: 64 << 20,
                    replicas: vec![self.location(i % self.nodes)],
                })
                .collect(),
            reduces,
            profile,
            allotment: Some(self.allotment),
            recovered: Vec::new(),
        }
    }

    /// A profile that knows the script's true behaviour.
    pub fn true_profile(&self, map_s: Seconds, remote_s: Seconds, reduces: u32) -> Profile {
        Profile {
            map_local: map_s,
            map_remote: remote_s,
            map_shortest: None,
            map_spread: None,
            partition_bytes: self.map_output as f64 / f64::from(reduces.max(1)),
            shuffle_bandwidth: self.bandwidth,
            reduce_time: self.reduce_time,
            previous_runs: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Tick,
    MapDone(AttemptId),
    MapFailed(AttemptId),
    ReduceDone(AttemptId),
    /// A map's output has crossed the shuffle link.
    Shuffled(u64),
    /// The output of a map's nth finish is lost.
    OutputLost(MapId, u32),
}

struct Live {
    container: ContainerId,
    started: Seconds,
    duration: Seconds,
    map: Option<MapId>,
    reduce: Option<ReduceId>,
}

/// What a run produced.
pub struct Run {
    pub log: Vec<(Seconds, Decision)>,
    pub finished_at: Option<Seconds>,
    pub progress: Option<Progress>,
    pub closed: Option<(Seconds, u32, Option<Estimate>)>,
    /// The run as the job profiler saw it.
    pub record: RunRecord,
}

impl Run {
    pub fn count(&self, f: impl Fn(&Decision) -> bool) -> usize {
        self.log.iter().filter(|(_, d)| f(d)).count()
    }

    /// When each decision matching `f` was made, in order.
    pub fn times(&self, f: impl Fn(&Decision) -> bool) -> Vec<Seconds> {
        self.log
            .iter()
            .filter(|(_, d)| f(d))
            .map(|(t, _)| *t)
            .collect()
    }

    /// The input each `SampleReduceInput` kept, in decision order.
    pub fn sampled(&self) -> Vec<u64> {
        self.log
            .iter()
            .filter_map(|(_, d)| match d {
                Decision::SampleReduceInput { keep_bytes, .. } => Some(*keep_bytes),
                _ => None,
            })
            .collect()
    }
}

/// Runs a job to its end (or the horizon) and checks the invariants on the way.
pub fn run(policy: &mut dyn TaskPolicy, spec: JobSpec, script: &Script, seed: u64) -> Run {
    Driver::new(script, &spec, seed).go(policy, spec)
}

struct Driver<'a> {
    s: &'a Script,
    rng: Rng,
    now: Seconds,
    seq: u64,
    queue: BinaryHeap<Reverse<(u64, u64, Kind)>>,
    /// Every container slot in grant order, and which are held.
    slots: Vec<Location>,
    next_slot: usize,
    held: BTreeMap<ContainerId, Option<AttemptId>>,
    want: u32,
    live: HashMap<AttemptId, Live>,
    attempts_of: HashMap<MapId, u32>,
    launched: BTreeSet<MapId>,
    local_only: BTreeSet<MapId>,
    maps_running: u32,
    closed: bool,
    finished: bool,
    /// The shuffle link: free again at this time; bytes still crossing it.
    link_free_at: Seconds,
    in_flight: u64,
    maps_done_output: u64,
    /// Each map's existing output: which of its finishes made it.
    outputs: BTreeMap<MapId, u32>,
    finishes_of: HashMap<MapId, u32>,
    ready_sent: BTreeSet<ReduceId>,
    kept: HashMap<ReduceId, u64>,
    reduces: u32,
    out: Run,
    observer: RunObserver,
}

fn key(t: Seconds) -> u64 {
    (t * 1e6).round() as u64
}

impl<'a> Driver<'a> {
    fn new(s: &'a Script, spec: &JobSpec, seed: u64) -> Self {
        let mut slots = Vec::new();
        for slot in 0..s.slots_per_node {
            for node in 0..s.nodes {
                let _ = slot;
                slots.push(s.location(node));
            }
        }
        Driver {
            s,
            rng: Rng::seed_from_u64(seed),
            now: 0.0,
            seq: 0,
            queue: BinaryHeap::new(),
            slots,
            next_slot: 0,
            held: BTreeMap::new(),
            want: 0,
            live: HashMap::new(),
            attempts_of: HashMap::new(),
            launched: BTreeSet::new(),
            local_only: BTreeSet::new(),
            maps_running: 0,
            closed: false,
            finished: false,
            link_free_at: 0.0,
            in_flight: 0,
            maps_done_output: 0,
            outputs: BTreeMap::new(),
            finishes_of: HashMap::new(),
            ready_sent: BTreeSet::new(),
            kept: HashMap::new(),
            reduces: spec.reduces,
            out: Run {
                log: Vec::new(),
                finished_at: None,
                progress: None,
                closed: None,
                record: RunRecord::default(),
            },
            observer: RunObserver::new(),
        }
    }

    fn at(&mut self, t: Seconds, kind: Kind) {
        self.seq += 1;
        self.queue.push(Reverse((key(t), self.seq, kind)));
    }

    fn go(mut self, policy: &mut dyn TaskPolicy, spec: JobSpec) -> Run {
        self.call(policy, Event::JobStarted(spec));
        self.grant(policy);
        self.at(self.s.tick, Kind::Tick);
        while let Some(Reverse((t, _, kind))) = self.queue.pop() {
            if self.finished {
                break;
            }
            self.now = t as f64 / 1e6;
            if self.now > self.s.horizon {
                for (t, d) in self.out.log.iter().rev().take(30).rev() {
                    eprintln!("{t:8.2} {d:?}");
                }
                panic!("the job did not finish by the horizon");
            }
            match kind {
                Kind::Tick => self.tick(policy),
                Kind::MapDone(a) => {
                    if let Some(live) = self.end(a) {
                        self.maps_running -= 1;
                        let map = live.map.expect("a map attempt");
                        let nth = self.finishes_of.entry(map).or_default();
                        let nth_finish = *nth;
                        *nth += 1;
                        self.outputs.insert(map, nth_finish);
                        if let Some(t) = (self.s.lose_output)(map, nth_finish) {
                            self.at(self.now + t, Kind::OutputLost(map, nth_finish));
                        }
                        let output_bytes = self.s.map_output;
                        self.maps_done_output += output_bytes;
                        // The output queues for the shuffle link (FIFO, fixed bandwidth).
                        let start = self.link_free_at.max(self.now);
                        self.link_free_at = start + output_bytes as f64 / self.s.bandwidth;
                        self.in_flight += output_bytes;
                        self.at(self.link_free_at, Kind::Shuffled(output_bytes));
                        self.call(
                            policy,
                            Event::TaskFinished {
                                attempt: a,
                                output_bytes,
                            },
                        );
                    }
                }
                Kind::MapFailed(a) => {
                    if self.end(a).is_some() {
                        self.maps_running -= 1;
                        self.call(policy, Event::TaskFailed(a));
                    }
                }
                Kind::OutputLost(map, nth_finish) => {
                    let needed = (self.ready_sent.len() as u32) < self.reduces;
                    if self.outputs.get(&map) == Some(&nth_finish) && needed {
                        self.outputs.remove(&map);
                        self.maps_done_output -= self.s.map_output;
                        self.call(policy, Event::MapOutputLost(map));
                    }
                }
                Kind::Shuffled(bytes) => {
                    self.in_flight -= bytes;
                    self.call(policy, Event::ShuffleBytes(bytes));
                }
                Kind::ReduceDone(a) => {
                    if self.end(a).is_some() {
                        self.call(
                            policy,
                            Event::TaskFinished {
                                attempt: a,
                                output_bytes: 0,
                            },
                        );
                    }
                }
            }
        }
        self.out.progress = Some(policy.progress());
        self.out.record = self.observer.record();
        self.out
    }

    fn tick(&mut self, policy: &mut dyn TaskPolicy) {
        let mut reports: Vec<(AttemptId, f64)> = self
            .live
            .iter()
            .map(|(a, l)| (*a, ((self.now - l.started) / l.duration).clamp(0.0, 1.0)))
            .collect();
        reports.sort_by_key(|r| r.0);
        for (attempt, progress) in reports {
            self.call(policy, Event::TaskProgress { attempt, progress });
        }
        self.call(policy, Event::Tick);
        // Reduces get their input once every counted map is done and the shuffle drained.
        let restarts = policy.progress().restarts_waiting;
        if self.closed && self.maps_running == 0 && restarts == 0 && self.in_flight == 0 {
            let ready: Vec<(AttemptId, ReduceId)> = self
                .live
                .iter()
                .filter_map(|(a, l)| l.reduce.map(|r| (*a, r)))
                .filter(|(_, r)| !self.ready_sent.contains(r))
                .collect::<BTreeMap<_, _>>()
                .into_iter()
                .collect();
            for (a, r) in ready {
                self.ready_sent.insert(r);
                let bytes = self.maps_done_output / u64::from(self.reduces.max(1));
                self.call(policy, Event::ReduceInputReady { reduce: r, bytes });
                let kept = self.kept.remove(&r).unwrap_or(bytes);
                let node = self.slots[self.live[&a].container.0 as usize].node;
                let t = self.s.reduce_time.a
                    * (kept as f64).powf(self.s.reduce_time.b)
                    * (self.s.node_slowdown)(node);
                // Its progress counts from here: the reduce function starts on its input.
                if let Some(l) = self.live.get_mut(&a) {
                    l.started = self.now;
                    l.duration = t;
                }
                self.at(self.now + t, Kind::ReduceDone(a));
            }
        }
        self.grant(policy);
        if !self.finished {
            self.at(self.now + self.s.tick, Kind::Tick);
        }
    }

    /// Grants free slots, round-robin, up to what the policy wants and the allotment allows.
    fn grant(&mut self, policy: &mut dyn TaskPolicy) {
        let mut tries = 0;
        while (self.held.len() as u32) < self.want.min(self.s.allotment) && tries < self.slots.len()
        {
            tries += 1;
            let i = self.next_slot;
            self.next_slot = (self.next_slot + 1) % self.slots.len();
            let id = ContainerId(i as u64);
            if self.held.contains_key(&id) {
                continue;
            }
            self.held.insert(id, None);
            let at = self.slots[i];
            self.call(policy, Event::ContainerGranted(Container { id, at }));
        }
    }

    fn end(&mut self, a: AttemptId) -> Option<Live> {
        let live = self.live.remove(&a)?;
        if let Some(slot) = self.held.get_mut(&live.container) {
            *slot = None;
        }
        Some(live)
    }

    fn call(&mut self, policy: &mut dyn TaskPolicy, event: Event) {
        let mut decisions = Vec::new();
        self.observer.event(self.now, &event);
        policy.handle(self.now, event, &mut self.rng, &mut decisions);
        self.observer.decisions(self.now, &decisions);
        for d in decisions {
            self.apply(&d);
            self.out.log.push((self.now, d));
        }
        // One attempt per held container, never more attempts than containers.
        assert!(
            self.live.len() <= self.held.len(),
            "more running tasks than containers"
        );
        for l in self.live.values() {
            assert!(
                self.held.contains_key(&l.container),
                "a task runs on a container not held"
            );
        }
    }

    fn apply(&mut self, d: &Decision) {
        assert!(!self.finished, "decision after Finish: {d:?}");
        match *d {
            Decision::Want(n) => self.want = n,
            // Asked only under a guard, which this harness never runs.
            Decision::WakeAt(_) => {}
            Decision::LaunchMap {
                attempt,
                map,
                container,
                locality,
                speculative,
            } => {
                self.occupy(container, attempt);
                if !speculative {
                    assert!(
                        !self.closed || self.launched.contains(&map),
                        "new map {map:?} launched after CloseMapPhase"
                    );
                }
                if self.local_only.contains(&map) {
                    assert_eq!(
                        locality,
                        Locality::NodeLocal,
                        "local-only {map:?} launched {locality:?}"
                    );
                }
                self.launched.insert(map);
                let n = self.attempts_of.entry(map).or_default();
                let nth = *n;
                *n += 1;
                let node = self.slots[container.0 as usize].node;
                let duration = (self.s.map_time)(map, locality, nth) * (self.s.node_slowdown)(node);
                match (self.s.fail)(map, nth) {
                    Some(t) if t < duration => self.at(self.now + t, Kind::MapFailed(attempt)),
                    _ => self.at(self.now + duration, Kind::MapDone(attempt)),
                }
                self.maps_running += 1;
                self.live.insert(
                    attempt,
                    Live {
                        container,
                        started: self.now,
                        duration,
                        map: Some(map),
                        reduce: None,
                    },
                );
            }
            Decision::LaunchReduce {
                attempt,
                reduce,
                container,
            } => {
                self.occupy(container, attempt);
                // The duration is known once the input is (ReduceInputReady).
                self.live.insert(
                    attempt,
                    Live {
                        container,
                        started: self.now,
                        duration: f64::INFINITY,
                        map: None,
                        reduce: Some(reduce),
                    },
                );
                self.ready_sent.remove(&reduce);
            }
            Decision::SampleReduceInput { reduce, keep_bytes } => {
                self.kept.insert(reduce, keep_bytes);
            }
            Decision::Release(c) => {
                let slot = self.held.remove(&c).expect("released a container not held");
                assert!(slot.is_none(), "released a busy container");
            }
            Decision::MarkLocalOnly(m) => {
                self.local_only.insert(m);
            }
            // The scripted driver sends no guard events.
            Decision::CutReduce { .. } => panic!("a reduce cut without a guard"),
            Decision::CloseMapPhase { k, estimate } => {
                assert!(!self.closed, "map phase closed twice");
                self.closed = true;
                self.out.closed = Some((self.now, k, estimate));
            }
            Decision::Reforecast { .. } => {
                assert!(self.closed, "a reforecast before the map phase closed");
            }
            Decision::Kill(a) => {
                if let Some(l) = self.end(a) {
                    if l.map.is_some() {
                        self.maps_running -= 1;
                    }
                }
            }
            Decision::Finish(p) => {
                assert_eq!(
                    p.maps_done as usize,
                    self.outputs.len(),
                    "the maps done are the maps with an output: {:?}",
                    self.outputs
                );
                self.finished = true;
                self.out.finished_at = Some(self.now);
                self.out.progress = Some(p);
            }
        }
    }

    fn occupy(&mut self, c: ContainerId, a: AttemptId) {
        let slot = self
            .held
            .get_mut(&c)
            .expect("launch on a container not held");
        assert!(slot.is_none(), "launch on a busy container");
        *slot = Some(a);
    }
}
