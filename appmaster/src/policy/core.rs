//! What every task policy tracks about its job — map and reduce states, attempts, held
//! containers, pending maps by locality, and `k` — so that policies only decide.
//!
//! Costs: finding a map for a container is amortised O(1) (per-node, per-rack and global
//! queues with lazy deletion); every other operation is O(1) except straggler detection, which
//! is O(r log r) in the running attempts r and runs on ticks only.

use std::collections::HashMap;

use super::{
    AttemptId, Container, ContainerId, Decision, Estimate, Event, JobSpec, Locality, Location,
    MapId, NodeId, RackId, ReduceId, Seconds, TaskRef,
};

/// One job's run under a policy, as the shared [`drive`] sees it.
pub(crate) trait JobRun {
    fn core(&self) -> &Core;
    fn core_mut(&mut self) -> &mut Core;
    /// Whether a map that left `k` (its attempt failed, or its finished output was lost) may
    /// run again now. Every map by default; Dart's estimating variants test the deadline
    /// (§5.2.1).
    fn restart_approved(&self, _now: Seconds) -> bool {
        true
    }
    /// Attempts the deadline guard leaves running (`Event::Guard`): none by default; `dart`'s
    /// `lone_map` and `last_moment` spare maps and reduces that still end in time.
    fn guard_spares(&self, _now: Seconds) -> Vec<AttemptId> {
        Vec::new()
    }
    /// The deadline guard, sparing `spare` (`Core::guard_sparing`): the map phase closes
    /// with no estimate by default; `Dart`'s closes with its estimate.
    fn guard(&mut self, _now: Seconds, spare: &[AttemptId], out: &mut Vec<Decision>) {
        self.core_mut().guard_sparing(spare, out);
    }
    /// The time the run asked for (`Decision::WakeAt`) has come. Nothing by default.
    fn wake(&mut self, _now: Seconds, _out: &mut Vec<Decision>) {}
    /// Takes an event (after `JobStarted`).
    fn event(&mut self, now: Seconds, event: Event, out: &mut Vec<Decision>);
    /// Makes every decision the run's state now calls for.
    fn settle(&mut self, now: Seconds, out: &mut Vec<Decision>);
}

/// What `Core::guard_stop` leaves for `Core::guard_cut`: the live attempts to cut once the map
/// phase is closed (a map among them is already killed, and `cut` passes it by).
#[derive(Debug)]
pub struct GuardCut(Vec<AttemptId>);

/// The `handle` every policy shares: the first `JobStarted` begins a run with `start` (which
/// also closes the map phase of a job with nothing to map), later events go to the run, and
/// after either the run settles. A second `JobStarted` is ignored. `MapOutputLost` is handled
/// here, the same way for every policy: a finished map's output is gone, so the map leaves `k`
/// and is queued to run again if the policy approves the restart, else stays dropped.
pub(crate) fn drive<R: JobRun>(
    run: &mut Option<R>,
    now: Seconds,
    event: Event,
    out: &mut Vec<Decision>,
    one_task_per_container: bool,
    start: impl FnOnce(JobSpec, &mut Vec<Decision>) -> R,
) {
    if let Event::JobStarted(spec) = event {
        if run.is_none() {
            let mut r = start(spec, out);
            r.core_mut().one_task_per_container = one_task_per_container;
            r.settle(now, out);
            *run = Some(r);
        }
        return;
    }
    if let Some(r) = run {
        match event {
            Event::MapOutputLost(map) => {
                if r.core_mut().output_lost(map) && r.restart_approved(now) {
                    r.core_mut().rerun(map, now);
                }
            }
            Event::Tick => {
                r.event(now, Event::Tick, out);
                if !r.core().progress.guarded {
                    r.core_mut().preempt_reduce_for_rerun(now, out);
                }
            }
            Event::Guard => {
                let spare = r.guard_spares(now);
                r.guard(now, &spare, out);
            }
            Event::Wake => r.wake(now, out),
            Event::DeadlineChanged(deadline) => {
                r.core_mut().spec.deadline = Some(deadline);
                r.event(now, Event::DeadlineChanged(deadline), out);
            }
            Event::Deadline => {
                r.guard(now, &[], out);
                r.core_mut().deadline(out);
            }
            Event::TaskFinished {
                attempt,
                output_bytes,
            } => {
                // A reduce the guard cut folded in only part of what it kept.
                r.core_mut().cut_reduce_finished(attempt, output_bytes);
                r.event(
                    now,
                    Event::TaskFinished {
                        attempt,
                        output_bytes,
                    },
                    out,
                );
            }
            event => r.event(now, event, out),
        }
        r.settle(now, out);
    }
}

/// `TaskPolicy::progress` for a policy holding its run in an `Option`.
pub(crate) fn progress_of<R: JobRun>(run: &Option<R>) -> Progress {
    run.as_ref().map(|r| r.core().progress).unwrap_or_default()
}

/// How long a re-run of a lost map output waits for a container before a reduce still waiting
/// for its input is killed to make room (Hadoop's reduce preemption for map re-runs).
pub(crate) const RERUN_PREEMPT_AFTER: Seconds = 5.0;

/// Where a job stands: what `Finish` reports and `TaskPolicy::progress` returns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// Map tasks whose output will reach the answer: launched, not killed or dropped.
    pub k: u32,
    pub maps: u32,
    pub maps_done: u32,
    pub map_phase_closed: bool,
    /// Input bytes of the finished maps that count, and of the whole job.
    pub processed_bytes: u64,
    pub input_bytes: u64,
    pub reduces: u32,
    pub reduces_done: u32,
    /// Reduce input received, and what Alg. 5's sampling kept of it.
    pub reduce_input_bytes: u64,
    pub reduce_kept_bytes: u64,
    /// Maps approved to run again (a failed attempt, or a finished map whose output was lost)
    /// and not relaunched yet: not in `k` now, but their output is still to come.
    pub restarts_waiting: u32,
    /// The deadline guard fired (`Event::Guard`).
    pub guarded: bool,
    /// `dart`'s `lone_map` launched a map the estimate said would not fit, as only a guarded
    /// run does: from then on the run is not event for event its unguarded twin.
    pub lone_map: bool,
    /// Reduces the guard abandoned before they started: their keys are not in the answer.
    pub reduces_abandoned: u32,
    pub finished: bool,
}

impl Progress {
    /// The fraction of the job's input the answer is built from: the maps' share, thinned by
    /// any reduce-side sampling (or a guard's cut), and by the share of the reduces (hence of
    /// the keys, partitioned evenly) the guard abandoned.
    pub fn processed_fraction(&self) -> f64 {
        let maps = if self.input_bytes == 0 {
            f64::from(self.maps_done) / f64::from(self.maps.max(1))
        } else {
            self.processed_bytes as f64 / self.input_bytes as f64
        };
        let reduces = if self.reduce_input_bytes == 0 {
            1.0
        } else {
            self.reduce_kept_bytes as f64 / self.reduce_input_bytes as f64
        };
        let answered = if self.reduces == 0 {
            1.0
        } else {
            f64::from(self.reduces - self.reduces_abandoned.min(self.reduces))
                / f64::from(self.reduces)
        };
        maps * reduces * answered
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapState {
    Pending,
    /// Pending, but only a node-local container may take it (Dart Alg. 1).
    LocalOnly,
    /// Failed, or its output was lost; waiting to be restarted (Dart §5.2.1 approved the
    /// restart).
    Retry,
    Running,
    Done,
    /// Killed as a straggler, failed (or its output lost) and not restarted, or never
    /// launched before the map phase closed: its data is not in the answer.
    Dropped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReduceState {
    Pending,
    Running,
    Done,
    /// Never started: the guard fired first.
    Abandoned,
}

#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub task: TaskRef,
    pub container: ContainerId,
    pub node: NodeId,
    pub started: Seconds,
    pub progress: f64,
    /// When `progress` was reported.
    pub reported: Seconds,
    pub locality: Locality,
    pub speculative: bool,
    pub live: bool,
    /// A reduce told to answer from what it has (`CutReduce`).
    pub cut: bool,
    slot: usize,
}

/// What a finished attempt was.
pub(crate) struct Finished {
    pub task: TaskRef,
    pub duration: Seconds,
    pub locality: Locality,
    pub node: NodeId,
    /// Another live attempt of the same map (a speculative race's loser), to be killed.
    pub rival: Option<AttemptId>,
}

pub(crate) struct Core {
    pub spec: JobSpec,
    pub start: Seconds,
    map_state: Vec<MapState>,
    /// Maps marked local-only by Alg. 1: every later run of them (restart, speculative copy)
    /// must be node-local too.
    local_only: Vec<bool>,
    /// Live attempts per map: at most an original and one copy.
    map_attempts: Vec<[Option<AttemptId>; 2]>,
    by_node: HashMap<NodeId, Vec<MapId>>,
    by_rack: HashMap<RackId, Vec<MapId>>,
    any: Vec<MapId>,
    retry: Vec<MapId>,
    /// Per map: it waits in `retry` because its output was lost (not because it failed).
    rerun: Vec<bool>,
    /// Since when a re-run of a lost output has waited for a container with none free.
    rerun_waiting_since: Option<Seconds>,
    reduce_state: Vec<ReduceState>,
    /// The latest attempt of every reduce (where its input goes).
    reduce_attempt: Vec<Option<AttemptId>>,
    /// Per reduce, the input its latest attempt received and kept (what `progress` counts),
    /// and when the input was ready: the reduce function's start.
    reduce_io: Vec<(u64, u64)>,
    reduce_ready: Vec<Option<Seconds>>,
    /// Reduces waiting for a container, lowest id on top.
    reduce_queue: Vec<ReduceId>,
    pub attempts: Vec<Attempt>,
    /// Live attempts, in no particular order; `Attempt::slot` is each one's index here.
    live: Vec<AttemptId>,
    held: HashMap<ContainerId, (Location, Option<AttemptId>)>,
    /// Containers freed during this call, for the policy to decide on.
    pub freed: Vec<ContainerId>,
    /// `PolicyConfig::one_task_per_container`: a freed container goes back to the rm
    /// (`returned`, released with the next report) instead of to the policy.
    pub one_task_per_container: bool,
    returned: Vec<ContainerId>,
    /// Counters kept so `want` and progress are O(1).
    pending_maps: u32,
    running_maps: u32,
    /// The input bytes of the maps in `k` (running or done).
    k_input: u64,
    running_attempts: u32,
    speculative_attempts: u32,
    pub progress: Progress,
    last_want: Option<u32>,
    finish_sent: bool,
}

impl Core {
    pub fn new(spec: JobSpec, now: Seconds) -> Core {
        let maps = spec.maps.len();
        let mut by_node: HashMap<NodeId, Vec<MapId>> = HashMap::new();
        let mut by_rack: HashMap<RackId, Vec<MapId>> = HashMap::new();
        // Queues hold maps in reverse so `pop` yields the lowest id first.
        for (i, map) in spec.maps.iter().enumerate().rev() {
            let id = MapId(i as u32);
            for (r, replica) in map.replicas.iter().enumerate() {
                let node = by_node.entry(replica.node).or_default();
                if node.last() != Some(&id) {
                    node.push(id);
                }
                let seen_rack = map.replicas[..r].iter().any(|o| o.rack == replica.rack);
                if !seen_rack {
                    by_rack.entry(replica.rack).or_default().push(id);
                }
            }
        }
        let input_bytes = spec.maps.iter().map(|m| m.bytes).sum();
        let reduces = spec.reduces;
        let recovered = spec.recovered.clone();
        let mut core = Core {
            start: now,
            map_state: vec![MapState::Pending; maps],
            local_only: vec![false; maps],
            map_attempts: vec![[None; 2]; maps],
            by_node,
            by_rack,
            any: (0..maps as u32).rev().map(MapId).collect(),
            retry: Vec::new(),
            rerun: vec![false; maps],
            rerun_waiting_since: None,
            reduce_state: vec![ReduceState::Pending; reduces as usize],
            reduce_attempt: vec![None; reduces as usize],
            reduce_io: vec![(0, 0); reduces as usize],
            reduce_ready: vec![None; reduces as usize],
            reduce_queue: (0..reduces).rev().map(ReduceId).collect(),
            attempts: Vec::new(),
            live: Vec::new(),
            held: HashMap::new(),
            freed: Vec::new(),
            one_task_per_container: false,
            returned: Vec::new(),
            pending_maps: maps as u32,
            running_maps: 0,
            k_input: 0,
            running_attempts: 0,
            speculative_attempts: 0,
            progress: Progress {
                maps: maps as u32,
                input_bytes,
                reduces,
                ..Progress::default()
            },
            last_want: None,
            finish_sent: false,
            spec,
        };
        // An earlier attempt's finished maps: done before anything runs (the queues skip them
        // as they skip any map that is not pending). An unknown or repeated map is ignored.
        for r in recovered {
            if core.map_state.get(r.map.0 as usize) == Some(&MapState::Pending) {
                core.set_map_state(r.map, MapState::Done);
                core.progress.maps_done += 1;
                core.progress.processed_bytes += core.spec.maps[r.map.0 as usize].bytes;
            }
        }
        core
    }

    /// Ranks the maps by a random, position-stratified permutation drawn from `rng`
    /// ([`stratified_order`]): from now on every queue (node-local, rack-local, any) yields its
    /// maps lowest rank first, so a container still takes its best-placed map, and among those
    /// a random one. An aggregate job asks for it (`PolicyConfig::random_map_order`): the
    /// blocks a deadline lets it read must be a random sample for its intervals to hold, and
    /// block order is often the data's (a log sorted by time or value).
    pub fn randomise_map_order(&mut self, rng: &mut super::Rng) {
        let order = stratified_order(self.spec.maps.len(), rng);
        let mut rank = vec![0u32; order.len()];
        for (r, &m) in order.iter().enumerate() {
            rank[m as usize] = r as u32;
        }
        // Queues pop from the end: the lowest rank goes last.
        let by_rank =
            |q: &mut Vec<MapId>| q.sort_unstable_by_key(|m| std::cmp::Reverse(rank[m.0 as usize]));
        self.by_node.values_mut().for_each(by_rank);
        self.by_rack.values_mut().for_each(by_rank);
        by_rank(&mut self.any);
    }

    /// Seconds since the job started: Dart's `T_p`.
    pub fn elapsed(&self, now: Seconds) -> Seconds {
        now - self.start
    }

    pub fn k(&self) -> u32 {
        self.progress.k
    }

    pub fn map_phase_closed(&self) -> bool {
        self.progress.map_phase_closed
    }

    /// The input bytes of the maps in `k`.
    pub fn k_input(&self) -> u64 {
        self.k_input
    }

    pub fn map_state(&self, map: MapId) -> MapState {
        self.map_state[map.0 as usize]
    }

    fn set_map_state(&mut self, map: MapId, to: MapState) {
        let from = std::mem::replace(&mut self.map_state[map.0 as usize], to);
        let counts = |s: MapState| matches!(s, MapState::Running | MapState::Done);
        let pending = |s: MapState| matches!(s, MapState::Pending | MapState::LocalOnly);
        self.progress.k = self.progress.k + u32::from(counts(to)) - u32::from(counts(from));
        let bytes = self.spec.maps[map.0 as usize].bytes;
        self.k_input =
            self.k_input + bytes * u64::from(counts(to)) - bytes * u64::from(counts(from));
        self.pending_maps = self.pending_maps + u32::from(pending(to)) - u32::from(pending(from));
        self.running_maps = self.running_maps + u32::from(to == MapState::Running)
            - u32::from(from == MapState::Running);
    }

    /// Maps still waiting for a container (including local-only ones), and failed maps
    /// waiting to restart.
    pub fn pending_maps(&self) -> u32 {
        self.pending_maps + self.retry.len() as u32
    }

    /// Maps with an attempt running.
    pub fn maps_running(&self) -> u32 {
        self.running_maps
    }

    /// The reduce the next `launch_next_reduce` starts.
    pub fn next_reduce(&self) -> Option<ReduceId> {
        self.reduce_queue.last().copied()
    }

    pub fn pending_reduces(&self) -> u32 {
        self.reduce_queue.len() as u32
    }

    pub fn held(&self) -> u32 {
        self.held.len() as u32
    }

    /// Containers the job can use now: every running attempt, every waiting task, plus `extra`.
    pub fn want(&self, extra: u32) -> u32 {
        let waiting = if self.map_phase_closed() {
            self.retry.len() as u32 + self.pending_reduces()
        } else {
            self.pending_maps()
        };
        self.running_attempts + waiting + extra
    }

    pub fn grant(&mut self, c: Container) {
        self.held.insert(c.id, (c.at, None));
    }

    pub fn location(&self, c: ContainerId) -> Option<Location> {
        self.held.get(&c).map(|h| h.0)
    }

    /// Whether `c` is held and has nothing running on it.
    pub fn is_free(&self, c: ContainerId) -> bool {
        self.held.get(&c).is_some_and(|h| h.1.is_none())
    }

    /// The best pending map for a container at `at`: node-local (local-only maps included),
    /// then rack-local, then any (Hadoop's order; Dart leaves the choice open).
    pub fn find_map(&mut self, at: Location) -> Option<(MapId, Locality)> {
        let states = &self.map_state;
        let live = |m: &MapId, local_only_ok: bool| match states[m.0 as usize] {
            MapState::Pending => true,
            MapState::LocalOnly => local_only_ok,
            _ => false,
        };
        if let Some(queue) = self.by_node.get_mut(&at.node) {
            while let Some(m) = queue.last() {
                if live(m, true) {
                    return Some((*m, Locality::NodeLocal));
                }
                queue.pop();
            }
        }
        if let Some(queue) = self.by_rack.get_mut(&at.rack) {
            while let Some(m) = queue.last() {
                if live(m, false) {
                    return Some((*m, Locality::RackLocal));
                }
                queue.pop();
            }
        }
        while let Some(m) = self.any.last() {
            if live(m, false) {
                // A map with a replica in this rack would have been found above; the rest
                // are remote.
                return Some((*m, Locality::Remote));
            }
            self.any.pop();
        }
        None
    }

    /// The locality of `map` on a container at `at`.
    pub fn locality(&self, map: MapId, at: Location) -> Locality {
        let replicas = &self.spec.maps[map.0 as usize].replicas;
        if replicas.iter().any(|r| r.node == at.node) {
            Locality::NodeLocal
        } else if replicas.iter().any(|r| r.rack == at.rack) {
            Locality::RackLocal
        } else {
            Locality::Remote
        }
    }

    pub fn mark_local_only(&mut self, map: MapId, out: &mut Vec<Decision>) {
        self.set_map_state(map, MapState::LocalOnly);
        self.local_only[map.0 as usize] = true;
        out.push(Decision::MarkLocalOnly(map));
    }

    /// Drops a pending map before it ever runs (PS's maps outside the sample): no decision,
    /// `k` unchanged. No effect on a map in any other state.
    pub fn exclude(&mut self, map: MapId) {
        if matches!(self.map_state(map), MapState::Pending | MapState::LocalOnly) {
            self.set_map_state(map, MapState::Dropped);
        }
    }

    /// Whether `map` may run on a container at `at`: anywhere, unless it is local-only.
    pub fn may_run(&self, map: MapId, at: Location) -> bool {
        !self.local_only[map.0 as usize] || self.locality(map, at) == Locality::NodeLocal
    }

    /// The most recent failed map waiting to restart that may run at `at`.
    pub fn pop_retry(&mut self, at: Location) -> Option<MapId> {
        let i = self.retry.iter().rposition(|&m| self.may_run(m, at))?;
        let m = self.retry.remove(i);
        self.progress.restarts_waiting = self.retry.len() as u32;
        self.rerun[m.0 as usize] = false;
        Some(m)
    }

    /// The node a live reduce attempt runs on.
    pub fn reduce_node(&self, r: ReduceId) -> Option<NodeId> {
        let a = (*self.reduce_attempt.get(r.0 as usize)?)?;
        let x = &self.attempts[a.0 as usize];
        x.live.then_some(x.node)
    }

    /// The live attempts of every map racing a speculative copy: O(live attempts).
    pub fn speculative_races(&self) -> Vec<[Option<AttemptId>; 2]> {
        if self.speculative_attempts == 0 {
            return Vec::new();
        }
        self.live
            .iter()
            .map(|a| &self.attempts[a.0 as usize])
            .filter(|x| x.speculative)
            .filter_map(|x| match x.task {
                TaskRef::Map(m) => Some(self.map_attempts[m.0 as usize]),
                TaskRef::Reduce(_) => None,
            })
            .collect()
    }

    /// The map an attempt runs, if it is a map attempt.
    pub fn map_of(&self, a: AttemptId) -> Option<MapId> {
        match self.attempts[a.0 as usize].task {
            TaskRef::Map(m) => Some(m),
            TaskRef::Reduce(_) => None,
        }
    }

    fn new_attempt(
        &mut self,
        task: TaskRef,
        c: ContainerId,
        locality: Locality,
        speculative: bool,
        now: Seconds,
    ) -> AttemptId {
        let id = AttemptId(self.attempts.len() as u32);
        let slot = self.held.get_mut(&c).expect("launch on a held container");
        debug_assert!(slot.1.is_none(), "launch on a busy container");
        slot.1 = Some(id);
        let node = slot.0.node;
        self.attempts.push(Attempt {
            task,
            container: c,
            node,
            started: now,
            progress: 0.0,
            reported: now,
            locality,
            speculative,
            live: true,
            cut: false,
            slot: self.live.len(),
        });
        self.live.push(id);
        self.running_attempts += 1;
        self.speculative_attempts += u32::from(speculative);
        id
    }

    /// Launches `map` on the free container `c`. A speculative copy leaves `k` unchanged.
    pub fn launch_map(
        &mut self,
        map: MapId,
        c: ContainerId,
        now: Seconds,
        speculative: bool,
        out: &mut Vec<Decision>,
    ) {
        let at = self.location(c).expect("held container");
        let locality = self.locality(map, at);
        let attempt = self.new_attempt(TaskRef::Map(map), c, locality, speculative, now);
        let slots = &mut self.map_attempts[map.0 as usize];
        let slot = slots
            .iter_mut()
            .find(|s| s.is_none())
            .expect("at most two attempts per map");
        *slot = Some(attempt);
        if !speculative {
            self.set_map_state(map, MapState::Running);
        }
        out.push(Decision::LaunchMap {
            attempt,
            map,
            container: c,
            locality,
            speculative,
        });
    }

    /// Launches the next reduce on the free container `c`, if one is waiting.
    pub fn launch_next_reduce(
        &mut self,
        c: ContainerId,
        now: Seconds,
        out: &mut Vec<Decision>,
    ) -> bool {
        let Some(reduce) = self.reduce_queue.pop() else {
            return false;
        };
        self.reduce_state[reduce.0 as usize] = ReduceState::Running;
        let attempt = self.new_attempt(TaskRef::Reduce(reduce), c, Locality::Remote, false, now);
        self.reduce_attempt[reduce.0 as usize] = Some(attempt);
        out.push(Decision::LaunchReduce {
            attempt,
            reduce,
            container: c,
        });
        true
    }

    pub fn release(&mut self, c: ContainerId, out: &mut Vec<Decision>) {
        if self.held.remove(&c).is_some() {
            out.push(Decision::Release(c));
        }
    }

    /// Ends an attempt: frees its container (queued in `freed` when it is still held) and
    /// unlinks it from its map.
    fn end_attempt(&mut self, a: AttemptId) -> Option<&Attempt> {
        let attempt = self.attempts.get_mut(a.0 as usize).filter(|x| x.live)?;
        attempt.live = false;
        let (c, task, slot) = (attempt.container, attempt.task, attempt.slot);
        self.running_attempts -= 1;
        self.speculative_attempts -= u32::from(attempt.speculative);
        self.live.swap_remove(slot);
        if let Some(&moved) = self.live.get(slot) {
            self.attempts[moved.0 as usize].slot = slot;
        }
        if self.one_task_per_container {
            if self.held.remove(&c).is_some() {
                self.returned.push(c);
            }
        } else if let Some(slot) = self.held.get_mut(&c) {
            slot.1 = None;
            self.freed.push(c);
        }
        if let TaskRef::Map(m) = task {
            for slot in &mut self.map_attempts[m.0 as usize] {
                if *slot == Some(a) {
                    *slot = None;
                }
            }
        }
        Some(&self.attempts[a.0 as usize])
    }

    fn live_attempts(&self, map: MapId) -> impl Iterator<Item = AttemptId> + '_ {
        self.map_attempts[map.0 as usize].iter().flatten().copied()
    }

    /// Kills an attempt. A map left with no live attempt is dropped (`k` falls by one).
    pub fn kill(&mut self, a: AttemptId, out: &mut Vec<Decision>) {
        let Some(task) = self.end_attempt(a).map(|x| x.task) else {
            return;
        };
        out.push(Decision::Kill(a));
        match task {
            TaskRef::Map(m) => {
                if self.live_attempts(m).next().is_none() && self.map_state(m) == MapState::Running
                {
                    self.set_map_state(m, MapState::Dropped);
                }
            }
            TaskRef::Reduce(r) => self.requeue_reduce(r),
        }
    }

    pub fn progress_report(&mut self, a: AttemptId, progress: f64, now: Seconds) {
        if let Some(x) = self.attempts.get_mut(a.0 as usize).filter(|x| x.live) {
            x.progress = progress.clamp(0.0, 1.0).max(x.progress);
            x.reported = now;
        }
    }

    /// Records a successful attempt. `None` for an attempt that is not live (killed already, or
    /// unknown): the adapter may report a finish that raced with a kill.
    pub fn finished(&mut self, a: AttemptId, now: Seconds) -> Option<Finished> {
        let attempt = self.end_attempt(a)?;
        let (task, started, locality, node) = (
            attempt.task,
            attempt.started,
            attempt.locality,
            attempt.node,
        );
        let mut rival = None;
        match task {
            TaskRef::Map(m) => {
                rival = self.live_attempts(m).next();
                if self.map_state(m) == MapState::Running {
                    self.set_map_state(m, MapState::Done);
                    self.progress.maps_done += 1;
                    self.progress.processed_bytes += self.spec.maps[m.0 as usize].bytes;
                }
            }
            TaskRef::Reduce(r) => {
                self.reduce_state[r.0 as usize] = ReduceState::Done;
                self.progress.reduces_done += 1;
            }
        }
        Some(Finished {
            task,
            duration: now - started,
            locality,
            node,
            rival,
        })
    }

    /// Records a failed (or lost) attempt and returns its task. A map with no other live
    /// attempt leaves `k` (Dart §5.2.1: `k −= 1`); the policy then decides whether to retry it.
    pub fn failed(&mut self, a: AttemptId) -> Option<TaskRef> {
        let task = self.end_attempt(a)?.task;
        match task {
            TaskRef::Map(m) => {
                if self.live_attempts(m).next().is_none() && self.map_state(m) == MapState::Running
                {
                    self.set_map_state(m, MapState::Dropped);
                }
            }
            TaskRef::Reduce(r) => self.requeue_reduce(r),
        }
        Some(task)
    }

    /// A dropped map goes back in line to restart (`k` rises again when it is relaunched).
    pub fn retry(&mut self, map: MapId) {
        if self.map_state(map) == MapState::Dropped {
            self.set_map_state(map, MapState::Retry);
            self.retry.push(map);
            self.progress.restarts_waiting = self.retry.len() as u32;
        }
    }

    /// Queues a map whose output was lost to run again (see `preempt_reduce_for_rerun`).
    pub fn rerun(&mut self, map: MapId, now: Seconds) {
        if self.map_state(map) == MapState::Dropped {
            self.retry(map);
            self.rerun[map.0 as usize] = true;
            self.rerun_waiting_since.get_or_insert(now);
        }
    }

    /// Reduces that wait for their input may hold every container while the map whose lost
    /// output they wait for needs one, and the cluster may grant no more: once a re-run has
    /// waited `RERUN_PREEMPT_AFTER` with no container free, the newest reduce attempt still
    /// waiting for its input is killed (it queues again) and its container goes to the re-run
    /// (Hadoop preempts reduces for map re-runs the same way). Only for lost outputs: a
    /// failed map's restart gets the container its attempt freed.
    pub fn preempt_reduce_for_rerun(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        let waiting = self.retry.iter().any(|m| self.rerun[m.0 as usize]);
        if !waiting {
            self.rerun_waiting_since = None;
            return;
        }
        let since = *self.rerun_waiting_since.get_or_insert(now);
        let free = self.held.values().any(|h| h.1.is_none());
        if now - since < RERUN_PREEMPT_AFTER || free {
            return;
        }
        let victim = self
            .live
            .iter()
            .copied()
            .filter(|a| match self.attempts[a.0 as usize].task {
                TaskRef::Reduce(r) => self.reduce_ready[r.0 as usize].is_none(),
                TaskRef::Map(_) => false,
            })
            .max();
        if let Some(a) = victim {
            self.kill(a, out);
            self.rerun_waiting_since = Some(now);
        }
    }

    /// A finished map's output is gone (its node was lost, or a reducer could not fetch it):
    /// the map leaves `k` and the finished maps, as a failed one does (Dart §5.2.1), and is
    /// dropped until the policy approves a restart. Returns whether it was finished; a map in
    /// any other state (running again, waiting to, dropped) is left as it is.
    pub fn output_lost(&mut self, map: MapId) -> bool {
        if self.map_state.get(map.0 as usize) != Some(&MapState::Done) {
            return false;
        }
        self.set_map_state(map, MapState::Dropped);
        self.progress.maps_done -= 1;
        self.progress.processed_bytes -= self.spec.maps[map.0 as usize].bytes;
        true
    }

    fn requeue_reduce(&mut self, r: ReduceId) {
        if self.reduce_state[r.0 as usize] != ReduceState::Done {
            self.reduce_state[r.0 as usize] = ReduceState::Pending;
            self.reduce_ready[r.0 as usize] = None;
            self.reduce_queue.push(r);
        }
    }

    /// The container an attempt is lost with, when the cluster loses the container.
    pub fn attempt_on(&self, c: ContainerId) -> Option<AttemptId> {
        self.held.get(&c).and_then(|h| h.1)
    }

    pub fn forget(&mut self, c: ContainerId) {
        self.held.remove(&c);
    }

    /// Ends the map phase: unlaunched maps are dropped, and no map is launched again except
    /// approved restarts.
    pub fn close_map_phase(&mut self, estimate: Option<Estimate>, out: &mut Vec<Decision>) {
        if self.map_phase_closed() {
            return;
        }
        for i in 0..self.map_state.len() {
            if matches!(self.map_state[i], MapState::Pending | MapState::LocalOnly) {
                self.set_map_state(MapId(i as u32), MapState::Dropped);
            }
        }
        self.by_node.clear();
        self.by_rack.clear();
        self.any.clear();
        self.progress.map_phase_closed = true;
        out.push(Decision::CloseMapPhase {
            k: self.k(),
            estimate,
        });
    }

    /// Reduce `r`'s latest attempt has its input at `now`: `bytes`, of which it keeps `kept`.
    /// A restarted reduce's input replaces what its earlier attempt was counted with.
    pub fn reduce_input(&mut self, r: ReduceId, bytes: u64, kept: u64, now: Seconds) {
        let Some(io) = self.reduce_io.get_mut(r.0 as usize) else {
            return;
        };
        let (old_bytes, old_kept) = std::mem::replace(io, (bytes, kept));
        let p = &mut self.progress;
        p.reduce_input_bytes = p.reduce_input_bytes - old_bytes + bytes;
        p.reduce_kept_bytes = p.reduce_kept_bytes - old_kept + kept;
        self.reduce_ready[r.0 as usize] = Some(now);
    }

    /// When reduce `r`'s latest attempt had its input, and the bytes it kept; `None` while it
    /// waits for its input.
    pub fn reduce_running_since(&self, r: ReduceId) -> Option<(Seconds, u64)> {
        let ready = (*self.reduce_ready.get(r.0 as usize)?)?;
        Some((ready, self.reduce_io[r.0 as usize].1))
    }

    /// Every live attempt with its id, in no particular order.
    pub fn live_attempt_ids(&self) -> impl Iterator<Item = (AttemptId, &Attempt)> + '_ {
        self.live.iter().map(|&a| (a, &self.attempts[a.0 as usize]))
    }

    pub fn live_attempts_now(&self) -> impl Iterator<Item = &Attempt> + '_ {
        self.live.iter().map(|a| &self.attempts[a.0 as usize])
    }

    /// Whether reduce `r` is over: finished, or abandoned at the deadline.
    pub fn reduce_over(&self, r: ReduceId) -> bool {
        matches!(
            self.reduce_state[r.0 as usize],
            ReduceState::Done | ReduceState::Abandoned
        )
    }

    /// Reduce `r`'s latest attempt, while it runs.
    pub fn reduce_attempt_live(&self, r: ReduceId) -> Option<&Attempt> {
        let a = self.reduce_attempt.get(r.0 as usize).copied().flatten()?;
        self.attempts.get(a.0 as usize).filter(|x| x.live)
    }

    /// The reduce an attempt runs, if it is a reduce attempt.
    pub fn reduce_of(&self, a: AttemptId) -> Option<ReduceId> {
        match self.attempts.get(a.0 as usize)?.task {
            TaskRef::Reduce(r) => Some(r),
            TaskRef::Map(_) => None,
        }
    }

    /// Attempts running now, maps and reduces.
    pub fn running(&self) -> u32 {
        self.running_attempts
    }

    /// The deadline guard (`Event::Guard`; at `Event::Deadline` with nothing spared), leaving the attempts in `spare` running (spared maps stay in `k`):
    /// while any map is spared no reduce is cut, since every reduce still waits for its
    /// output, and a spared reduce is left to end (the policy kills a spared map that will no
    /// longer end in time and cuts a spared reduce at its own last moment; the deadline ends
    /// whatever still runs).
    pub fn guard_sparing(&mut self, spare: &[AttemptId], out: &mut Vec<Decision>) {
        if let Some(cut) = self.guard_stop(spare, out) {
            self.close_map_phase(None, out);
            self.guard_cut(cut, out);
        }
    }

    /// The guard's first half (`guard_sparing` is `guard_stop`, `close_map_phase`, then
    /// `guard_cut`): the maps not spared are killed and restarts dropped. `None` when the
    /// guard already fired. A policy that closes with its estimate computes it between the two
    /// halves, from the maps that are left.
    pub fn guard_stop(&mut self, spare: &[AttemptId], out: &mut Vec<Decision>) -> Option<GuardCut> {
        if self.progress.guarded {
            return None;
        }
        self.progress.guarded = true;
        let mut live: Vec<AttemptId> = self.live.clone();
        live.sort_unstable();
        let mut spare = spare.to_vec();
        spare.sort_unstable();
        let spare = |a: &AttemptId| spare.binary_search(a).is_ok();
        let mut spared = false;
        for &a in &live {
            if let TaskRef::Map(_) = self.attempts[a.0 as usize].task {
                if spare(&a) {
                    spared = true;
                } else {
                    self.kill(a, out);
                }
            }
        }
        for m in std::mem::take(&mut self.retry) {
            self.rerun[m.0 as usize] = false;
            self.set_map_state(m, MapState::Dropped);
        }
        self.progress.restarts_waiting = 0;
        self.rerun_waiting_since = None;
        let kept: Vec<AttemptId> = live.into_iter().filter(|a| !spared && !spare(a)).collect();
        Some(GuardCut(kept))
    }

    /// The guard's second half, after the map phase closed: every reduce `guard_stop` did not
    /// spare is cut (none while a map is spared).
    pub fn guard_cut(&mut self, cut: GuardCut, out: &mut Vec<Decision>) {
        for a in cut.0 {
            self.cut(a, out);
        }
    }

    /// Tells reduce attempt `a` to answer from what it has folded in (`CutReduce`), once.
    fn cut(&mut self, a: AttemptId, out: &mut Vec<Decision>) {
        let x = &mut self.attempts[a.0 as usize];
        if let (TaskRef::Reduce(reduce), true, false) = (x.task, x.live, x.cut) {
            x.cut = true;
            out.push(Decision::CutReduce { attempt: a, reduce });
        }
    }

    /// Cuts every running reduce (`cut`): the last moment a partial answer can still arrive.
    pub fn cut_reduces(&mut self, out: &mut Vec<Decision>) {
        let mut live: Vec<AttemptId> = self.live.clone();
        live.sort_unstable();
        for a in live {
            self.cut(a, out);
        }
    }

    /// The deadline (`Event::Deadline`): every live attempt is killed and every reduce not
    /// finished abandoned, its input taken out of the processed fraction's reduce share.
    pub fn deadline(&mut self, out: &mut Vec<Decision>) {
        let mut live: Vec<AttemptId> = self.live.clone();
        live.sort_unstable();
        for a in live {
            self.kill(a, out); // a reduce goes back to the queue
        }
        for r in std::mem::take(&mut self.reduce_queue) {
            self.reduce_state[r.0 as usize] = ReduceState::Abandoned;
            self.progress.reduces_abandoned += 1;
            self.reduce_input(r, 0, 0, self.start);
        }
    }

    /// A reduce attempt the guard cut finished having folded in `folded` bytes: what it kept
    /// is at most that (a reduce whose input never became ready counts what it folded).
    pub fn cut_reduce_finished(&mut self, a: AttemptId, folded: u64) {
        if !self.progress.guarded {
            return;
        }
        // A reduce the guard spared (or that ended before its cut came) answered in full.
        let Some(TaskRef::Reduce(r)) = self
            .attempts
            .get(a.0 as usize)
            .filter(|x| x.live && x.cut)
            .map(|x| x.task)
        else {
            return;
        };
        let (bytes, kept) = self.reduce_io[r.0 as usize];
        if folded < kept || self.reduce_ready[r.0 as usize].is_none() {
            let bytes = bytes.max(folded);
            let ready = self.reduce_ready[r.0 as usize].unwrap_or(self.start);
            self.reduce_input(r, bytes, folded.min(bytes), ready);
        }
    }

    /// Whether the job is done: the map phase is closed and every counted task finished.
    pub fn done(&self) -> bool {
        let maps_done = self.running_maps == 0 && self.retry.is_empty();
        let reduces_done =
            self.progress.reduces_done + self.progress.reduces_abandoned == self.spec.reduces;
        self.map_phase_closed() && maps_done && reduces_done
    }

    /// Ends a call: reports the containers wanted (`want`, or 0 once the job is done) when that
    /// changed, and, once the job is done, hands every container back and reports `Finish`.
    pub fn report(&mut self, want: u32, out: &mut Vec<Decision>) {
        // Given back as their attempts ended (one task per container), before the count that
        // asks for others.
        out.extend(self.returned.drain(..).map(Decision::Release));
        let done = self.done();
        let want = if done { 0 } else { want };
        if self.last_want != Some(want) {
            self.last_want = Some(want);
            out.push(Decision::Want(want));
        }
        if done {
            self.finish(out);
        }
    }

    /// Hands back every held container (they are all idle when the job is done), in id
    /// order, and reports `Finish` — once.
    fn finish(&mut self, out: &mut Vec<Decision>) {
        if self.finish_sent {
            return;
        }
        self.finish_sent = true;
        let mut held: Vec<ContainerId> = self.held.keys().copied().collect();
        held.sort_unstable();
        for c in held {
            self.release(c, out);
        }
        self.progress.finished = true;
        out.push(Decision::Finish(self.progress));
    }

    /// Live map attempts that are the only attempt of their map, in attempt order (so every
    /// decision drawn from them is deterministic). O(r log r) in the live attempts.
    pub fn lone_map_attempts(&self) -> Vec<AttemptId> {
        let mut lone: Vec<AttemptId> = self
            .live
            .iter()
            .copied()
            .filter(|a| match self.attempts[a.0 as usize].task {
                TaskRef::Map(m) => self.live_attempts(m).count() == 1,
                TaskRef::Reduce(_) => false,
            })
            .collect();
        lone.sort_unstable();
        lone
    }

    pub fn attempt(&self, a: AttemptId) -> &Attempt {
        &self.attempts[a.0 as usize]
    }

    /// Live speculative copies.
    pub fn speculative_running(&self) -> u32 {
        self.speculative_attempts
    }
}

/// A random order of `n` blocks in which every prefix is spread over the input: a stratified
/// sample by position (Cochran 1977, ch. 5), so the blocks a deadline lets a job read cover
/// the input's stretches evenly, and on input sorted by the quantity summed the sample holds
/// blocks from both ends (`apps::aggregate`, "The launch order").
///
/// Dyadic refinement: the first block is uniform over `[0, n)`. Then, level by level, each
/// stretch that holds one drawn block is halved, and a block uniform over the half that holds
/// none is drawn; a level's new blocks come in a random order. After `2^j` blocks every one of
/// the `2^j` stretches of the level holds exactly one block, uniform within it and independent
/// of the others' (a stratified random sample, one unit a stratum); a prefix between two
/// levels is the coarser level's sample and a random subset of the finer level's additions.
/// Every block comes once: the stretches end as single blocks, each its own draw.
pub fn stratified_order(n: usize, rng: &mut super::Rng) -> Vec<u32> {
    use rand::RngExt;
    use rand::seq::SliceRandom;
    if n == 0 {
        return Vec::new();
    }
    let first = rng.random_range(0..n as u32);
    let mut order = vec![first];
    // (start, end, the block drawn in it), the stretches of the current level.
    let mut stretches = vec![(0u32, n as u32, first)];
    while order.len() < n {
        let mut finer = Vec::with_capacity(stretches.len() * 2);
        let mut added = Vec::with_capacity(stretches.len());
        for (a, b, drawn) in stretches {
            if b - a < 2 {
                finer.push((a, b, drawn));
                continue;
            }
            let mid = a + (b - a) / 2;
            let (kept, (c, d)) = if drawn < mid {
                ((a, mid, drawn), (mid, b))
            } else {
                ((mid, b, drawn), (a, mid))
            };
            let new = rng.random_range(c..d);
            finer.push(kept);
            finer.push((c, d, new));
            added.push(new);
        }
        added.shuffle(rng);
        order.extend(added);
        stretches = finer;
    }
    order
}

#[cfg(test)]
mod tests;
