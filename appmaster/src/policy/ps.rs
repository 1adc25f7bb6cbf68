//! Pre-selected sampling (PS; BlinkDB-style, Agarwal et al. 2013), as Dart's evaluation uses it
//! (§6.1; EVALUATION.md "Baselines"): before the job starts, fit a linear time-vs-input model
//! from a few sample runs, pick the largest input fraction predicted to finish by the deadline,
//! and never revise it. No kills, no speculation, no reduce input sampling.
//!
//! Decisions where the papers are vague:
//! - **The model** is linear in the number of maps `k`: `T(k) = ⌈k / C⌉·T_l^a + k·p·R / B +
//!   (c₀ + c₁·k·p)`, with `C` the containers the job is granted (`allotment`, or one per map
//!   when not told), map waves of the profile's node-local duration (as ARIA's `M_avg`: most
//!   maps of a profiled run are node-local), the whole shuffle after the maps at the profile's
//!   bandwidth, and one reduce wave whose time is a straight line in its input — Dart Table 4's
//!   "Linearity" model.
//! - **The sample runs**: the line is fitted by least squares to the true reduce-time curve
//!   `f(d) = a·d^b` at [`SAMPLE_RUNS`] input sizes `d_i = (i / 5)·M·p`, `i = 1..=5`: sample
//!   runs of 20 %, 40 %, … of the input, deterministic. A line that predicts a negative reduce
//!   time (a convex `f` fitted over large inputs) counts as 0.
//! - **The fraction** is the largest `k` with `T(k) < D` (strict, as Dart's eq. 10), at least
//!   one map when there are any, so every job answers something.
//! - **Which maps**: `k` of the `M` drawn uniformly without replacement with the caller's RNG
//!   (`rand::seq::index::sample`), so a seed fixes the sample. They run as containers come, in
//!   Hadoop's locality order among the chosen (node-local, rack-local, any; lowest id first).
//! - **Failures**: a failed (or lost) chosen map always restarts; the sample is never revised.
//! - The maps not chosen are dropped before the job runs (`Core::exclude`); the map phase
//!   closes as the last chosen map launches, and `CloseMapPhase` carries `T(k)`.

use super::core::{Core, JobRun, MapState, drive, progress_of};
use super::estimate::least_squares;
use super::{
    AttemptId, ContainerId, Decision, Estimate, Event, JobSpec, MapId, PolicyConfig, Progress, Rng,
    Seconds, TaskPolicy, TaskRef,
};

/// How many sample runs the linear reduce-time model is fitted to.
pub(crate) const SAMPLE_RUNS: u32 = 5;

/// Least squares `y = c₀ + c₁·x`; with fewer than two distinct `x` the line is flat at the mean.
pub(crate) fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    least_squares(points).unwrap_or_else(|| {
        let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
        (mean, 0.0)
    })
}

/// PS's linear completion-time model (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Linear {
    /// `C`: the containers the job plans with.
    pub containers: u32,
    /// One map wave: `T_l^a`.
    pub map: Seconds,
    /// `p`: bytes one map sends to one reducer.
    pub partition: f64,
    pub reduces: u32,
    pub bandwidth: f64,
    /// Reduce time `≈ c₀ + c₁·d` for a reduce input of `d` bytes.
    pub c0: Seconds,
    pub c1: f64,
}

impl Linear {
    pub fn new(spec: &JobSpec, containers: u32) -> Linear {
        let p = &spec.profile;
        let all = spec.maps.len() as f64 * p.partition_bytes;
        let samples: Vec<(f64, f64)> = (1..=SAMPLE_RUNS)
            .map(|i| {
                let d = all * f64::from(i) / f64::from(SAMPLE_RUNS);
                (d, p.reduce_time.at(d))
            })
            .collect();
        let (c0, c1) = fit_line(&samples);
        Linear {
            containers: containers.max(1),
            map: p.map_local,
            partition: p.partition_bytes,
            reduces: spec.reduces,
            bandwidth: p.shuffle_bandwidth,
            c0,
            c1,
        }
    }

    /// `T(k)`, split by phase, from the job's start.
    pub fn predict(&self, k: u32) -> Estimate {
        let waves = k.div_ceil(self.containers);
        let map = f64::from(waves) * self.map;
        let volume = f64::from(k) * self.partition * f64::from(self.reduces);
        let shuffle = if volume > 0.0 && self.bandwidth > 0.0 {
            volume / self.bandwidth
        } else {
            0.0
        };
        let reduce = if self.reduces > 0 && k > 0 {
            (self.c0 + self.c1 * f64::from(k) * self.partition).max(0.0)
        } else {
            0.0
        };
        Estimate {
            map,
            shuffle,
            reduce,
            total: map + shuffle + reduce,
        }
    }

    /// The largest `k ≤ maps` with `T(k) < deadline`; at least 1 when `maps > 0`. Without a
    /// deadline every map: the sample is the whole input.
    pub fn largest_k(&self, maps: u32, deadline: Option<Seconds>) -> u32 {
        let Some(deadline) = deadline else {
            return maps;
        };
        (1..=maps)
            .rev()
            .find(|&k| self.predict(k).total < deadline)
            .unwrap_or(maps.min(1))
    }
}

/// The PS baseline. Build with [`PolicyKind::build`](super::PolicyKind::build) or
/// [`PreselectedSampling::new`].
pub struct PreselectedSampling {
    run: Option<Run>,
    one_task_per_container: bool,
}

impl PreselectedSampling {
    /// PS takes none of the tuning in `PolicyConfig` (no EWMA, stragglers or reduce
    /// sampling), only how containers are used.
    pub fn new(config: PolicyConfig) -> PreselectedSampling {
        PreselectedSampling {
            run: None,
            one_task_per_container: config.one_task_per_container,
        }
    }

    /// The maps PS chose before the job ran, ascending (empty before `JobStarted`).
    pub fn sample(&self) -> &[MapId] {
        self.run.as_ref().map_or(&[], |r| &r.chosen)
    }
}

impl TaskPolicy for PreselectedSampling {
    fn name(&self) -> &'static str {
        "ps"
    }

    fn handle(&mut self, now: Seconds, event: Event, rng: &mut Rng, out: &mut Vec<Decision>) {
        let one_task = self.one_task_per_container;
        drive(&mut self.run, now, event, out, one_task, |spec, out| {
            let mut run = Run::new(spec, now, rng);
            if run.core.pending_maps() == 0 {
                run.close(out);
            }
            run
        });
    }

    /// `T(k)` for the chosen `k`, fixed before the job runs (PS never revises).
    fn estimate(&self, _now: Seconds) -> Option<Estimate> {
        self.run.as_ref().map(|r| r.prediction)
    }

    fn progress(&self) -> Progress {
        progress_of(&self.run)
    }
}

/// One job's run of PS.
struct Run {
    /// Maps outside the sample are excluded from the start: `Core` sees only the sample.
    core: Core,
    /// The sample, ascending.
    chosen: Vec<MapId>,
    prediction: Estimate,
    allotment: Option<u32>,
}

impl JobRun for Run {
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    fn event(&mut self, now: Seconds, event: Event, _out: &mut Vec<Decision>) {
        match event {
            // `drive` handles `JobStarted`, the guard's events and `MapOutputLost` (the map always runs
            // again).
            Event::JobStarted(_)
            | Event::MapOutputLost(_)
            | Event::Guard
            | Event::Wake
            | Event::Deadline
            | Event::DeadlineChanged(_)
            | Event::Tick
            | Event::ShuffleBytes(_) => {}
            Event::ContainerGranted(c) => {
                self.core.grant(c);
                self.core.freed.push(c.id);
            }
            Event::ContainerLost(c) => {
                let attempt = self.core.attempt_on(c);
                self.core.forget(c);
                if let Some(a) = attempt {
                    self.failed(a);
                }
            }
            Event::TaskProgress { attempt, progress } => {
                self.core.progress_report(attempt, progress, now)
            }
            Event::TaskFinished { attempt, .. } => {
                let _ = self.core.finished(attempt, now); // no speculation: no rival
            }
            Event::TaskFailed(attempt) => self.failed(attempt),
            // The sample is fixed before the job: reduce input is never thinned further.
            Event::ReduceInputReady { reduce, bytes } => {
                self.core.reduce_input(reduce, bytes, bytes, now)
            }
        }
    }

    /// Offers every freed container, then reports the wanted container count, and completion
    /// (`Core::finish` hands every container back first).
    fn settle(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        while let Some(c) = self.core.freed.pop() {
            self.offer(c, now, out);
        }
        let want = self.want();
        self.core.report(want, out);
    }
}

impl Run {
    fn new(spec: JobSpec, now: Seconds, rng: &mut Rng) -> Run {
        let maps = spec.maps.len() as u32;
        // A grant of 0 would leave nothing to run on; PS then plans with (and asks for) one.
        let allotment = spec.allotment.map(|a| a.max(1));
        let containers = allotment.unwrap_or(maps);
        let model = Linear::new(&spec, containers);
        let k = model.largest_k(maps, spec.deadline);
        let mut chosen: Vec<MapId> = rand::seq::index::sample(rng, maps as usize, k as usize)
            .into_iter()
            .map(|i| MapId(i as u32))
            .collect();
        chosen.sort_unstable();
        let mut core = Core::new(spec, now);
        let mut sampled = chosen.iter().peekable();
        for m in (0..maps).map(MapId) {
            if sampled.next_if_eq(&&m).is_none() {
                core.exclude(m);
            }
        }
        Run {
            core,
            chosen,
            prediction: model.predict(k),
            allotment,
        }
    }

    /// A failed chosen map always restarts; `Core` requeues reduces itself.
    fn failed(&mut self, a: AttemptId) {
        if let Some(TaskRef::Map(m)) = self.core.failed(a)
            && self.core.map_state(m) == MapState::Dropped
        {
            self.core.retry(m);
        }
    }

    /// Every running or waiting task of the sample, within the grant.
    fn want(&self) -> u32 {
        let want = self.core.want(0);
        self.allotment.map_or(want, |a| want.min(a))
    }

    fn offer(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) {
        if !self.core.is_free(c) {
            return;
        }
        let at = self.core.location(c).expect("offered containers are held");
        if let Some(m) = self.core.pop_retry(at) {
            self.core.launch_map(m, c, now, false, out);
            return;
        }
        if !self.core.map_phase_closed() {
            if let Some((m, _)) = self.core.find_map(at) {
                self.core.launch_map(m, c, now, false, out);
                if self.core.pending_maps() == 0 {
                    self.close(out); // the whole sample is launched
                }
                return;
            }
            self.close(out); // only when the sample was empty
        }
        if !self.core.launch_next_reduce(c, now, out) {
            self.core.release(c, out);
        }
    }

    fn close(&mut self, out: &mut Vec<Decision>) {
        self.core.close_map_phase(Some(self.prediction), out);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::SeedableRng;

    use super::*;
    use crate::policy::Locality;
    use crate::policy::testing::{self, at};
    use crate::policy::{Container, MapSpec, PowerLaw, Profile};

    type Driver = testing::Driver<PreselectedSampling>;

    fn new_driver(spec: JobSpec, seed: u64) -> Driver {
        let mut d = testing::Driver::new(
            PreselectedSampling::new(PolicyConfig::default()),
            spec,
            seed,
        );
        (d.map_output, d.reduce_input) = (1, 10);
        d
    }

    /// `maps` maps of 100 bytes (map i on node i mod 8); T_l = 10, p = 1, B = 1, f(d) = d².
    fn spec(maps: u32, reduces: u32, deadline: Seconds, allotment: Option<u32>) -> JobSpec {
        JobSpec {
            deadline: Some(deadline),
            maps: (0..maps)
                .map(|i| MapSpec {
                    bytes: 100,
                    replicas: vec![at(i % 8)],
                })
                .collect(),
            reduces,
            profile: Profile {
                map_local: 10.0,
                map_remote: 15.0,
                map_shortest: None,
                map_spread: None,
                partition_bytes: 1.0,
                shuffle_bandwidth: 1.0,
                reduce_time: PowerLaw {
                    a: 1.0,
                    b: 2.0,
                    spread: 0.0,
                },
                previous_runs: Vec::new(),
            },
            allotment,
            recovered: Vec::new(),
        }
    }

    #[test]
    fn linear_fit_by_hand() {
        // y = x² at x = 1..5: x̄ = 3, ȳ = 11, Sxx = 10, Sxy = 60 → c₁ = 6, c₀ = 11 − 18 = −7.
        let pts: Vec<(f64, f64)> = (1..=5).map(|x| (f64::from(x), f64::from(x * x))).collect();
        assert_eq!(fit_line(&pts), (-7.0, 6.0));
        assert_eq!(
            fit_line(&[(0.0, 2.0), (0.0, 4.0)]),
            (3.0, 0.0),
            "no spread: flat"
        );
        assert_eq!(fit_line(&[]), (0.0, 0.0));
    }

    #[test]
    fn picks_the_largest_k_by_hand() {
        // M = 5, p = 1: samples at d = 1..5 of f(d) = d² → reduce ≈ −7 + 6·k (≥ 0).
        // C = 2, T_l = 10, R = 1, B = 1: T(k) = 10·⌈k/2⌉ + k + max(0, 6k − 7):
        // T(1) = 11, T(2) = 17, T(3) = 34, T(4) = 41, T(5) = 58.
        let m = Linear::new(&spec(5, 1, 0.0, Some(2)), 2);
        assert_eq!((m.c0, m.c1), (-7.0, 6.0));
        let totals: Vec<f64> = (1..=5).map(|k| m.predict(k).total).collect();
        assert_eq!(totals, vec![11.0, 17.0, 34.0, 41.0, 58.0]);
        let e = m.predict(3);
        assert_eq!((e.map, e.shuffle, e.reduce), (20.0, 3.0, 11.0));
        for (deadline, k) in [(40.0, 3), (41.0, 3), (41.5, 4), (5.0, 1), (1e3, 5)] {
            assert_eq!(m.largest_k(5, Some(deadline)), k, "D = {deadline}");
        }
        assert_eq!(m.largest_k(0, Some(1e3)), 0);
        // Not told the grant: one container per map, a single wave: T(5) = 10 + 5 + 23 = 38.
        let mut rng = Rng::seed_from_u64(1);
        let run = Run::new(spec(5, 1, 40.0, None), 0.0, &mut rng);
        assert_eq!(run.chosen.len(), 5, "five maps sampled");
        assert_eq!(run.prediction.total, 38.0);
    }

    #[test]
    fn the_sample_is_fixed_by_the_seed() {
        // 100 maps on 10 containers, D = 200: T(k) = 10·⌈k/10⌉ + k + f-line(k) picks 0 < k < 100.
        let job = || spec(100, 1, 200.0, Some(10));
        let a = new_driver(job(), 1).policy.sample().to_vec();
        let k = a.len();
        assert!(k > 1 && k < 100, "k = {k}");
        assert_eq!(
            new_driver(job(), 1).policy.sample().to_vec(),
            a,
            "same seed, same sample"
        );
        let b = new_driver(job(), 2).policy.sample().to_vec();
        assert_eq!(b.len(), k, "k does not depend on the seed");
        assert_ne!(b, a, "another seed, another sample");
    }

    #[test]
    fn only_the_sample_runs_and_the_job_finishes_once() {
        let mut d = new_driver(spec(100, 2, 200.0, Some(10)), 7);
        let chosen = d.policy.sample().to_vec();
        d.fail_once = Some(chosen[3]);
        d.run();
        d.assert_never_revises();
        let launched: BTreeSet<MapId> = d.launched_maps().into_iter().collect();
        assert_eq!(
            launched,
            chosen.iter().copied().collect(),
            "the sample, all of it"
        );
        assert_eq!(
            d.launched_maps().len(),
            chosen.len() + 1,
            "each chosen map once, the failed one twice"
        );
        let k = chosen.len() as u32;
        let e = d.policy.estimate(0.0);
        let closes: Vec<_> = d
            .log
            .iter()
            .filter(|x| matches!(x, Decision::CloseMapPhase { .. }))
            .collect();
        assert_eq!(
            closes,
            vec![&Decision::CloseMapPhase { k, estimate: e }],
            "closed once, with T(k)"
        );
        assert!(e.unwrap().total < 200.0);
        assert!(
            d.log
                .iter()
                .all(|x| !matches!(x, Decision::Want(n) if *n > 10))
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
        assert!(matches!(d.log.last(), Some(Decision::Finish(_))));
        assert!(d.held.is_empty() && d.want == 0);
        let p = d.policy.progress();
        assert!(p.finished && p.k == k && p.maps_done == k && p.reduces_done == 2);
        assert_eq!(p.processed_fraction(), f64::from(k) / 100.0);
    }

    #[test]
    fn prefers_a_node_local_chosen_map() {
        // Every map chosen (loose deadline); a container on node 3 takes map 3 first.
        let mut d = new_driver(spec(16, 0, 1e6, Some(4)), 1);
        d.held.insert(ContainerId(9));
        d.send(Event::ContainerGranted(Container {
            id: ContainerId(9),
            at: at(3),
        }));
        assert!(d.log.iter().any(|x| matches!(
            x,
            Decision::LaunchMap {
                map: MapId(3),
                locality: Locality::NodeLocal,
                ..
            }
        )));
    }

    #[test]
    fn a_deadline_too_tight_still_runs_one_map() {
        let mut d = new_driver(spec(10, 1, 1.0, Some(3)), 3);
        assert_eq!(d.policy.sample().to_vec().len(), 1);
        d.run();
        d.assert_never_revises();
        assert_eq!(d.launched_maps(), d.policy.sample().to_vec());
        assert_eq!(
            d.count(|x| matches!(x, Decision::CloseMapPhase { k: 1, .. })),
            1
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
    }

    #[test]
    fn an_empty_job_finishes_at_once() {
        let d = new_driver(spec(0, 0, 10.0, None), 1);
        assert_eq!(
            d.count(|x| matches!(x, Decision::CloseMapPhase { k: 0, .. })),
            1
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
        assert_eq!(d.policy.name(), "ps");
    }
}
