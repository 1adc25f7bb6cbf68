//! A small driver for policies' unit tests: grants what the policy wants, one container at a
//! time on nodes round-robin, then finishes the oldest running attempt, one second apart;
//! optionally fails the first attempt of one map. It records every decision.

use std::collections::{HashSet, VecDeque};

use rand::SeedableRng;

use super::{
    AttemptId, Container, ContainerId, Decision, Estimator, Event, JobSpec, Location, MapId,
    NodeId, PowerLaw, Profile, RackId, Rng, Seconds, TaskPolicy, TaskRef,
};

/// The profile of the Dart paper's worked state (digest D1): `p = 1`, `T_r^a = 2.5`,
/// `f(d) = 0.5·d`, with `map_local` as `T_l^a`.
pub(crate) fn d1_profile(map_local: Seconds) -> Profile {
    Profile {
        map_local,
        map_remote: 2.5,
        map_shortest: None,
        map_spread: None,
        partition_bytes: 1.0,
        shuffle_bandwidth: 1.0,
        reduce_time: PowerLaw {
            a: 0.5,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    }
}

/// D1's shuffle and map-phase state at `T_p = 3`: `T_q = 1`, `V_p = 6`, `T_M^o = 5`, the link
/// busy since `T_q` (the paper's premise) with one byte still to cross.
pub(crate) fn set_d1_state(e: &mut Estimator) {
    e.shuffle_start = Some(1.0);
    e.shuffled = 6.0;
    e.busy_since = Some(1.0);
    e.moved_at = Some(3.0); // D1 is at T_p = 3: its 6 bytes crossed by then
    e.backlog = 1.0;
    e.map_end = 5.0;
}

/// Node `node`, four nodes to a rack.
pub(crate) fn at(node: u32) -> Location {
    Location {
        node: NodeId(node),
        rack: RackId(node / 4),
    }
}

pub(crate) struct Driver<P: TaskPolicy> {
    pub policy: P,
    rng: Rng,
    pub now: Seconds,
    pub want: u32,
    pub held: HashSet<ContainerId>,
    pub running: VecDeque<(AttemptId, TaskRef)>,
    next: u64,
    pub log: Vec<Decision>,
    /// The most map and reduce attempts, and containers, held at once.
    pub max_maps: u32,
    pub max_reduces: u32,
    pub max_held: u32,
    /// Fail the next attempt of this map.
    pub fail_once: Option<MapId>,
    /// What every map outputs and every reduce receives, bytes.
    pub map_output: u64,
    pub reduce_input: u64,
}

impl<P: TaskPolicy> Driver<P> {
    pub fn new(policy: P, spec: JobSpec, seed: u64) -> Self {
        let mut d = Driver {
            policy,
            rng: Rng::seed_from_u64(seed),
            now: 0.0,
            want: 0,
            held: HashSet::new(),
            running: VecDeque::new(),
            next: 0,
            log: Vec::new(),
            max_maps: 0,
            max_reduces: 0,
            max_held: 0,
            fail_once: None,
            map_output: 200,
            reduce_input: 400,
        };
        d.send(Event::JobStarted(spec));
        d
    }

    pub fn send(&mut self, e: Event) -> Vec<Decision> {
        assert!(!self.finished(), "event after Finish");
        let mut out = Vec::new();
        self.policy.handle(self.now, e, &mut self.rng, &mut out);
        for d in &out {
            match d {
                Decision::Want(n) => self.want = *n,
                Decision::LaunchMap { attempt, map, .. } => {
                    self.running.push_back((*attempt, TaskRef::Map(*map)))
                }
                Decision::LaunchReduce {
                    attempt, reduce, ..
                } => self.running.push_back((*attempt, TaskRef::Reduce(*reduce))),
                Decision::Release(c) => assert!(self.held.remove(c), "release of {c:?}"),
                _ => {}
            }
        }
        let count = |map: bool| {
            self.running
                .iter()
                .filter(|x| matches!(x.1, TaskRef::Map(_)) == map)
                .count() as u32
        };
        self.max_maps = self.max_maps.max(count(true));
        self.max_reduces = self.max_reduces.max(count(false));
        self.max_held = self.max_held.max(self.held.len() as u32);
        self.log.extend(out.iter().cloned());
        out
    }

    pub fn grant(&mut self) -> Vec<Decision> {
        let id = ContainerId(self.next);
        self.held.insert(id);
        let node = (self.next % 16) as u32;
        self.next += 1;
        self.send(Event::ContainerGranted(Container { id, at: at(node) }))
    }

    /// Grants containers until the policy holds what it wants.
    pub fn grant_wanted(&mut self) {
        while (self.held.len() as u32) < self.want && !self.finished() {
            self.grant();
        }
    }

    /// A second later, finishes the oldest running attempt whose task `pick` accepts (a
    /// reduce gets its input first), and returns it.
    pub fn finish_where(&mut self, pick: impl Fn(TaskRef) -> bool) -> (AttemptId, TaskRef) {
        let i = self
            .running
            .iter()
            .position(|x| pick(x.1))
            .expect("such an attempt runs");
        let (a, task) = self.running.remove(i).expect("in range");
        self.now += 1.0;
        self.complete(a, task);
        (a, task)
    }

    /// `a` ends well: a reduce gets its input first, then the attempt finishes.
    fn complete(&mut self, a: AttemptId, task: TaskRef) {
        if let TaskRef::Reduce(reduce) = task {
            let bytes = self.reduce_input;
            self.send(Event::ReduceInputReady { reduce, bytes });
        }
        let output_bytes = self.map_output;
        self.send(Event::TaskFinished {
            attempt: a,
            output_bytes,
        });
    }

    /// The `Finish` decision's progress, once made.
    pub fn finish(&self) -> Option<super::Progress> {
        self.log.iter().find_map(|d| match d {
            Decision::Finish(p) => Some(*p),
            _ => None,
        })
    }

    pub fn finished(&self) -> bool {
        self.log.iter().any(|d| matches!(d, Decision::Finish(_)))
    }

    /// Runs the job to its `Finish`.
    pub fn run(&mut self) {
        for _ in 0..10_000 {
            if self.finished() {
                return;
            }
            if (self.held.len() as u32) < self.want {
                self.grant();
                continue;
            }
            let (a, task) = self
                .running
                .pop_front()
                .expect("stuck with nothing running");
            self.now += 1.0;
            if let TaskRef::Map(m) = task
                && self.fail_once == Some(m)
            {
                self.fail_once = None;
                self.send(Event::TaskFailed(a));
                continue;
            }
            self.complete(a, task);
        }
        panic!("no finish");
    }

    pub fn launched_maps(&self) -> Vec<MapId> {
        self.log
            .iter()
            .filter_map(|d| match d {
                Decision::LaunchMap { map, .. } => Some(*map),
                _ => None,
            })
            .collect()
    }

    /// The baselines (ARIA, PS) never revise: no kill, no speculative copy, no reduce
    /// sampling, ever.
    pub fn assert_never_revises(&self) {
        let revises = |x: &Decision| {
            matches!(
                x,
                Decision::Kill(_)
                    | Decision::SampleReduceInput { .. }
                    | Decision::LaunchMap {
                        speculative: true,
                        ..
                    }
            )
        };
        assert_eq!(self.count(revises), 0, "{:?}", self.log);
    }

    pub fn count(&self, f: impl Fn(&Decision) -> bool) -> usize {
        self.log.iter().filter(|d| f(d)).count()
    }
}
