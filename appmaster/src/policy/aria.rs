//! ARIA (Verma, Cherkasova, Campbell, ICAC 2011) as Dart's evaluation uses it (§6.1; EVALUATION.md
//! "Baselines"): from the job profile and ARIA's bounds model, size the map and reduce slots
//! needed to finish *all* input by the deadline (capped at what the job is granted), then process
//! all input. No map is ever dropped or killed, nothing is speculated and no reduce input is
//! sampled; failed tasks are always retried.
//!
//! The bounds model is restated in seed 003 §II-B; its hyperbola form is seed 000 eq. (1), and
//! the minimal slots come from the Lagrange closed form (papers/aria.md §1.3–1.4). The model is
//! the rm's (`yard_cluster::aria`: one model for the rm's quotas and this master): the
//! makespans, the hyperbola and the minimum slots are its functions. What is the master's own
//! is how Dart's profile becomes ARIA's (below) and the shuffle bound ([`AriaProfile::bounds`]).
//!
//! Dart's profile (`Profile`) carries means only; ARIA's needs averages *and* maxima per phase
//! and a first-wave shuffle. How one is built from the other (see [`AriaProfile::from_spec`]):
//! - `M_avg = T_l^a`: Hadoop's locality-first assignment makes most maps of a past run
//!   node-local, so their average is the node-local duration; the remote penalty is carried by
//!   `M_max = max(T_r^a, 1.5·M_avg)` (the slowest map is at least a remote one, and at least
//!   [`MAX_OVER_AVG`] times the average).
//! - Every other maximum is [`MAX_OVER_AVG`] × its average: the profile has no maxima.
//! - The profile is of a past run of the same job with the same grant (`min(N, allotment)`
//!   containers per phase). That run's whole shuffle, `T_S = p·N_M·N_R / B` at the job's
//!   bottleneck bandwidth, is split evenly over its reduce waves `⌈N_R / S_R^past⌉`: that is
//!   `Sh_typ^avg`. The first wave's shuffle overlapped that run's map stage from the first map's
//!   end, `T_M^avg(S_M^past) − M_avg`; what is left is `Sh_1^avg` (ARIA profiles only the
//!   non-overlapping part).
//! - `R_avg = f(N_M·p)` (Dart eq. 8–9 with every map).
//!
//! The slots target `T_J^avg` (the paper's narrative: "the average of lower and upper bounds is a
//! good approximation"). A slot count capped at the grant leaves the other one re-solved on the
//! hyperbola (the fewest slots that still meet `D` under the model); when even the capped
//! allocation cannot meet `D` (`D ≤ c`), ARIA takes everything it is granted ("the jobs missing
//! their deadlines start requiring the maximum number of slots", seed 000 §IV).

use super::core::{Core, JobRun, MapState, drive, progress_of};
use super::{
    AttemptId, ContainerId, Decision, Estimate, Event, JobSpec, MapId, PolicyConfig, Profile,
    Progress, Rng, Seconds, TaskPolicy, TaskRef,
};
use yard_cluster::aria::{
    self, Durations, MAX_OVER_AVG, Target, makespan_low, makespan_up, min_quota,
};

/// ARIA's job profile (seed 003 §II-B) for `N_M` maps and `N_R` reduces. Phases the job does
/// not have (no maps, or map-only) are all zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AriaProfile {
    pub n_m: u32,
    pub n_r: u32,
    pub m_avg: Seconds,
    pub m_max: Seconds,
    /// The first reduce wave's shuffle, only the part not overlapping the map stage.
    pub sh1_avg: Seconds,
    pub sh1_max: Seconds,
    /// The shuffle of a later reduce wave.
    pub sht_avg: Seconds,
    pub sht_max: Seconds,
    pub r_avg: Seconds,
    pub r_max: Seconds,
}

impl AriaProfile {
    /// ARIA's profile from Dart's, for a past run that held `cap_m` map and `cap_r` reduce
    /// slots (each at least 1). See the module documentation for every choice made here.
    pub fn from_spec(spec: &JobSpec, cap_m: u32, cap_r: u32) -> AriaProfile {
        let n_m = spec.maps.len() as u32;
        let n_r = spec.reduces;
        let p = &spec.profile;
        let mut x = AriaProfile {
            n_m,
            n_r,
            m_avg: 0.0,
            m_max: 0.0,
            sh1_avg: 0.0,
            sh1_max: 0.0,
            sht_avg: 0.0,
            sht_max: 0.0,
            r_avg: 0.0,
            r_max: 0.0,
        };
        if n_m > 0 {
            x.m_avg = p.map_local;
            x.m_max = p.map_remote.max(MAX_OVER_AVG * p.map_local);
        }
        if n_r > 0 {
            let (fm, fr) = (f64::from(n_m), f64::from(n_r));
            let volume = p.partition_bytes * fm * fr;
            let whole = if volume > 0.0 && p.shuffle_bandwidth > 0.0 {
                volume / p.shuffle_bandwidth
            } else {
                0.0
            };
            let waves = (fr / f64::from(cap_r.max(1))).ceil();
            x.sht_avg = whole / waves;
            x.sht_max = MAX_OVER_AVG * x.sht_avg;
            // The past run's first shuffle overlapped its map stage from the first map's end.
            let map_stage = x.avg(f64::from(cap_m.max(1)), f64::from(cap_r.max(1))).map;
            let overlap = (map_stage - x.m_avg).max(0.0);
            x.sh1_avg = (x.sht_avg - overlap).max(0.0);
            x.sh1_max = MAX_OVER_AVG * x.sh1_avg;
            x.r_avg = p.reduce_time.at(fm * p.partition_bytes); // Dart eq. (8)–(9), all maps
            x.r_max = MAX_OVER_AVG * x.r_avg;
        }
        x
    }

    /// The lower and upper bounds on the job's completion with `s_m` map and `s_r` reduce slots,
    /// split as `Estimate { map: T_M, shuffle: Sh_1 + T_Sh, reduce: the reduce phase }`.
    ///
    /// The map and reduce makespans are the cluster's (`yard_cluster::aria`). The shuffle is
    /// not: `yard_cluster::aria::Profile::up` clamps `(N_R − 1)/S_R − 1` at 0 (one wave has no
    /// later one, papers/aria.md §6.2), and this keeps seed 003's bound as printed, which goes
    /// below `Sh_typ^max` when `S_R = N_R`. That keeps ARIA's estimate the hyperbola it sizes
    /// its slots by (`hyperbola_is_the_average_bound`, at every slot count), and the figures
    /// that report ARIA's estimates where they were.
    pub fn bounds(&self, s_m: f64, s_r: f64) -> (Estimate, Estimate) {
        let (n_m, n_r) = (f64::from(self.n_m), f64::from(self.n_r));
        let (mut low, mut up) = (zero(), zero());
        if self.n_m > 0 {
            // ARIA bounds (seed 003 §II-B): T_M^low = N_M·M_avg / S_M,
            // T_M^up = (N_M − 1)·M_avg / S_M + M_max (seed 003 divides by S_M twice: a typo,
            // papers/aria.md §1.2).
            low.map = makespan_low(n_m, self.m_avg, s_m);
            up.map = makespan_up(n_m, self.m_avg, self.m_max, s_m);
        }
        if self.n_r > 0 {
            // ARIA bounds (seed 003 §II-B): T_Sh^low = (N_R/S_R − 1)·Sh_typ^avg,
            // T_Sh^up = ((N_R − 1)/S_R − 1)·Sh_typ^avg + Sh_typ^max.
            let sh_low = (n_r / s_r - 1.0) * self.sht_avg;
            let sh_up = ((n_r - 1.0) / s_r - 1.0) * self.sht_avg + self.sht_max;
            // ARIA bounds (seed 003 §II-B): T_R^low = Sh_1^avg + T_Sh^low + N_R·R_avg / S_R,
            // T_R^up = Sh_1^max + T_Sh^up + (N_R − 1)·R_avg / S_R + R_max.
            low.shuffle = self.sh1_avg + sh_low;
            up.shuffle = self.sh1_max + sh_up;
            low.reduce = makespan_low(n_r, self.r_avg, s_r);
            up.reduce = makespan_up(n_r, self.r_avg, self.r_max, s_r);
        }
        // ARIA bounds (seed 003 §II-B): T_J = T_M + T_R, for each bound.
        for e in [&mut low, &mut up] {
            e.total = e.map + e.shuffle + e.reduce;
        }
        (low, up)
    }

    /// `T_J^avg = (T_J^low + T_J^up) / 2` (seed 003 §II-B), phase by phase.
    pub fn avg(&self, s_m: f64, s_r: f64) -> Estimate {
        let (l, u) = self.bounds(s_m, s_r);
        Estimate {
            map: (l.map + u.map) / 2.0,
            shuffle: (l.shuffle + u.shuffle) / 2.0,
            reduce: (l.reduce + u.reduce) / 2.0,
            total: (l.total + u.total) / 2.0,
        }
    }

    /// ARIA's profile in the cluster's model (`yard_cluster::aria::Profile`), every maximum
    /// given: its hyperbola (`T_J^avg`, `Target::Avg`) is the one [`AriaProfile::min_slots`] sizes by.
    fn model(&self) -> aria::Profile {
        aria::Profile {
            map: Durations::new(self.m_avg, self.m_max),
            first_shuffle: Durations::new(self.sh1_avg, self.sh1_max),
            typical_shuffle: Durations::new(self.sht_avg, self.sht_max),
            reduce: Durations::new(self.r_avg, self.r_max),
        }
    }

    /// ARIA's `ComputeMinResources(J, D)` targeting `T_J^avg`, with at most `cap_m` map and
    /// `cap_r` reduce slots: the cluster's [`min_quota`] (the Lagrange optimum rounded up, each
    /// count in `[1, cap]`, 0 for a phase the job does not have; a capped count leaves the
    /// other re-solved on the hyperbola; if nothing meets `D`, both caps). Without a deadline
    /// any allocation finishes in time and the fewest slots win: one per phase the job has
    /// (the Lagrange optimum's limit as `D` grows, which the bound of one slot rounds up to).
    pub fn min_slots(&self, deadline: Option<Seconds>, cap_m: u32, cap_r: u32) -> (u32, u32) {
        let Some(deadline) = deadline else {
            return (self.n_m.min(1), self.n_r.min(1));
        };
        let q = min_quota(
            &self.model(),
            self.n_m,
            self.n_r,
            deadline,
            (cap_m, cap_r),
            Target::Avg,
        );
        (q.maps, q.reduces)
    }
}

fn zero() -> Estimate {
    Estimate {
        map: 0.0,
        shuffle: 0.0,
        reduce: 0.0,
        total: 0.0,
    }
}

/// ARIA's profile for the rm's quotas (`yard_cluster::aria`) from Dart's (the profile store's,
/// or a simulated job's), for `maps` maps and `reduces` reduces: how the rm reads a job kind's
/// stored profile (`yard_rm::profiles`) and how the shared-cluster simulator registers a job.
/// Dart's profile has means only; as [`AriaProfile::from_spec`] reads it, but for a job about
/// to run rather than a past run with the same grant:
/// - `M_avg = T_l^a` (most maps of a past run are node-local; `T_r^a` when no map was, as for
///   a synthetic job), `M_max = max(T_r^a, 1.5·M_avg)`;
/// - a reducer's input is `d = p·N_M` (a partition from every map), and its shuffle `d / B` at
///   the job's measured bandwidth. yard's masters start reduces when the map phase closes, so
///   no shuffle overlaps the maps: the first wave's shuffle is a whole one (`Sh1 = Sht`);
/// - `R_avg = f(d)` (Dart eq. 8–9 with every map);
/// - every other maximum is [`MAX_OVER_AVG`] × its average.
///
/// `None` for a profile without a measured map time (nothing is invented).
pub fn aria_profile(p: &Profile, maps: u32, reduces: u32) -> Option<aria::Profile> {
    let measured = |x: f64| x.is_finite() && x >= 0.0;
    // Runs whose maps were all remote (a synthetic job reads no blocks) measured no local map.
    let m_avg = [p.map_local, p.map_remote]
        .into_iter()
        .find(|x| measured(*x))?;
    let m_max = if p.map_remote.is_finite() {
        p.map_remote.max(MAX_OVER_AVG * m_avg)
    } else {
        MAX_OVER_AVG * m_avg
    };
    let mut profile = aria::Profile {
        map: Durations::new(m_avg, m_max),
        ..aria::Profile::default()
    };
    if reduces > 0 {
        let d = p.partition_bytes.max(0.0) * f64::from(maps);
        let shuffle = if p.shuffle_bandwidth > 0.0 && d.is_finite() {
            d / p.shuffle_bandwidth
        } else {
            0.0
        };
        let reduce = p.reduce_time.at(d);
        let phase = |avg: f64| {
            let avg = if avg.is_finite() { avg.max(0.0) } else { 0.0 };
            Durations::new(avg, MAX_OVER_AVG * avg)
        };
        profile.first_shuffle = phase(shuffle);
        profile.typical_shuffle = phase(shuffle);
        profile.reduce = phase(reduce);
    }
    profile.valid().then_some(profile)
}

/// The ARIA baseline. Build with [`PolicyKind::build`](super::PolicyKind::build) or [`Aria::new`].
pub struct Aria {
    run: Option<Run>,
    one_task_per_container: bool,
}

impl Aria {
    /// ARIA takes none of the tuning in `PolicyConfig` (it has no EWMA, stragglers or
    /// sampling), only how containers are used.
    pub fn new(config: PolicyConfig) -> Aria {
        Aria {
            run: None,
            one_task_per_container: config.one_task_per_container,
        }
    }
}

impl TaskPolicy for Aria {
    fn name(&self) -> &'static str {
        "aria"
    }

    fn handle(&mut self, now: Seconds, event: Event, _rng: &mut Rng, out: &mut Vec<Decision>) {
        let one_task = self.one_task_per_container;
        drive(&mut self.run, now, event, out, one_task, |spec, out| {
            let mut run = Run::new(spec, now);
            if run.unlaunched == 0 {
                run.close(out);
            }
            run
        });
    }

    /// ARIA's `T_J^avg`: planned at the start, revised once when the map phase closes to the map
    /// slots ARIA actually held. It does not move with time: ARIA's model is static.
    fn estimate(&self, _now: Seconds) -> Option<Estimate> {
        self.run.as_ref().map(|r| r.prediction)
    }

    fn progress(&self) -> Progress {
        progress_of(&self.run)
    }
}

/// One job's run of ARIA.
struct Run {
    core: Core,
    profile: AriaProfile,
    /// `S_M`, `S_R`: the most maps and reduces ARIA runs at once.
    s_m: u32,
    s_r: u32,
    /// What the job was granted, if it was told.
    allotment: Option<u32>,
    /// Maps never launched yet; the map phase closes when it reaches 0.
    unlaunched: u32,
    /// The most maps that ran at once: the map slots ARIA actually held.
    peak_maps: u32,
    prediction: Estimate,
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
                // No speculation, so no rival to kill.
                let _ = self.core.finished(attempt, now);
            }
            Event::TaskFailed(attempt) => self.failed(attempt),
            // ARIA never samples reduce input: all of it is kept.
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
    fn new(spec: JobSpec, now: Seconds) -> Run {
        let n_m = spec.maps.len() as u32;
        // A grant of 0 would leave nothing to run on; ARIA then asks for one container.
        let allotment = spec.allotment.map(|a| a.max(1));
        let grant = |n: u32| allotment.map_or(n, |a| n.min(a)).max(1);
        let (cap_m, cap_r) = (grant(n_m), grant(spec.reduces));
        let profile = AriaProfile::from_spec(&spec, cap_m, cap_r);
        let (s_m, s_r) = profile.min_slots(spec.deadline, cap_m, cap_r);
        let prediction = profile.avg(f64::from(s_m.max(1)), f64::from(s_r.max(1)));
        let core = Core::new(spec, now);
        Run {
            // Maps an earlier master attempt finished are not launched again.
            unlaunched: core.pending_maps(),
            core,
            profile,
            s_m,
            s_r,
            allotment,
            peak_maps: 0,
            prediction,
        }
    }

    fn running_reduces(&self) -> u32 {
        self.core.spec.reduces - self.core.progress.reduces_done - self.core.pending_reduces()
    }

    /// A failed map always restarts (ARIA processes all input); `Core` requeues reduces itself.
    fn failed(&mut self, a: AttemptId) {
        if let Some(TaskRef::Map(m)) = self.core.failed(a)
            && self.core.map_state(m) == MapState::Dropped
        {
            self.core.retry(m);
        }
    }

    /// Maps running now: ARIA never speculates or kills, so every counted map that is not done
    /// is running.
    fn running_maps(&self) -> u32 {
        self.core.k() - self.core.progress.maps_done
    }

    /// At most `S_M` maps (running or waiting) during the map phase; after it, the maps still
    /// running or restarting plus at most `S_R` reduces; never more than the grant.
    fn want(&self) -> u32 {
        let want = if self.core.map_phase_closed() {
            let maps = self.running_maps() + self.core.pending_maps(); // restarts only
            let reduces = self.running_reduces() + self.core.pending_reduces();
            maps + reduces.min(self.s_r)
        } else {
            // Only maps run before the map phase closes.
            self.core.want(0).min(self.s_m)
        };
        self.allotment.map_or(want, |a| want.min(a))
    }

    fn offer(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) {
        if !self.core.is_free(c) {
            return;
        }
        let at = self.core.location(c).expect("offered containers are held");
        let maps_room = self.running_maps() < self.s_m;
        if maps_room && let Some(m) = self.core.pop_retry(at) {
            self.launch(m, c, now, out);
            return;
        }
        if !self.core.map_phase_closed() {
            if maps_room {
                let at = self.core.location(c).expect("offered containers are held");
                if let Some((m, _)) = self.core.find_map(at) {
                    self.launch(m, c, now, out);
                    self.unlaunched -= 1;
                    if self.unlaunched == 0 {
                        self.close(out); // every map is launched
                    }
                    return;
                }
                // Unreachable while `unlaunched` counts the pending maps; close rather than stall.
                self.close(out);
            } else {
                self.core.release(c, out); // more than S_M: ARIA holds no spare container
                return;
            }
        }
        if self.running_reduces() < self.s_r && self.core.launch_next_reduce(c, now, out) {
            return;
        }
        self.core.release(c, out);
    }

    fn launch(&mut self, m: MapId, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) {
        self.core.launch_map(m, c, now, false, out);
        self.peak_maps = self.peak_maps.max(self.running_maps());
    }

    /// Closes the map phase with ARIA's honest prediction: `T_J^avg` with the map slots it
    /// actually held (the most maps that ran at once; the plan if none ran) and its `S_R`.
    fn close(&mut self, out: &mut Vec<Decision>) {
        let s_m = if self.peak_maps > 0 {
            self.peak_maps
        } else {
            self.s_m
        };
        self.prediction = self
            .profile
            .avg(f64::from(s_m.max(1)), f64::from(self.s_r.max(1)));
        self.core.close_map_phase(Some(self.prediction), out);
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::policy::testing::{self, at};
    use crate::policy::{MapSpec, PowerLaw, Profile};

    type Driver = testing::Driver<Aria>;

    fn new_driver(spec: JobSpec) -> Driver {
        testing::Driver::new(Aria::new(PolicyConfig::default()), spec, 1)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * a.abs().max(1.0)
    }

    /// `T_J^avg` as the hyperbola `a/S_M + b/S_R + c` the slots are sized by.
    fn hyperbola(p: &AriaProfile) -> yard_cluster::aria::Hyperbola {
        p.model().hyperbola(p.n_m, p.n_r, Target::Avg)
    }

    /// papers/aria.md §3: M 10/15, Sh1 5/8, Sht 4/6, R 6/9; N_M = 100, N_R = 20.
    fn digest() -> AriaProfile {
        AriaProfile {
            n_m: 100,
            n_r: 20,
            m_avg: 10.0,
            m_max: 15.0,
            sh1_avg: 5.0,
            sh1_max: 8.0,
            sht_avg: 4.0,
            sht_max: 6.0,
            r_avg: 6.0,
            r_max: 9.0,
        }
    }

    #[test]
    fn digest_bounds_by_hand() {
        // papers/aria.md §3 with S_M = 20, S_R = 10: T_M 50 / 64.5, T_R 21 / 38,
        // T_J 71 / 102.5 / 86.75.
        let (l, u) = digest().bounds(20.0, 10.0);
        assert!(close(l.map, 50.0) && close(u.map, 64.5), "{l:?} {u:?}");
        assert!(close(l.shuffle + l.reduce, 21.0) && close(u.shuffle + u.reduce, 38.0));
        assert!(close(l.shuffle, 5.0 + 4.0) && close(u.shuffle, 8.0 + 9.6)); // T_Sh 4 / 9.6
        assert!(close(l.total, 71.0) && close(u.total, 102.5));
        assert!(close(digest().avg(20.0, 10.0).total, 86.75));
    }

    #[test]
    fn hyperbola_is_the_average_bound() {
        // a = 995, b = 195, c = 17.5 (papers/aria.md §3, target avg).
        let p = digest();
        let h = hyperbola(&p);
        assert!(
            close(h.a, 995.0) && close(h.b, 195.0) && close(h.c, 17.5),
            "{h:?}"
        );
        for (s_m, s_r) in [(1.0, 1.0), (7.0, 3.0), (20.0, 10.0), (100.0, 20.0)] {
            let t = h.a / s_m + h.b / s_r + h.c;
            assert!(close(p.avg(s_m, s_r).total, t), "({s_m}, {s_r})");
        }
    }

    #[test]
    fn digest_lagrange_slots_by_hand() {
        // D = 120: D' = 102.5, √a = 31.5436, √b = 13.9642, S_M = √a(√a+√b)/D' = 14.0047,
        // S_R = √b(√a+√b)/D' = 6.1998 → (15, 7).
        let p = digest();
        let (s_m, s_r) = hyperbola(&p).lagrange(120.0).unwrap();
        assert!((s_m - 14.0047).abs() < 1e-4 && (s_r - 6.1998).abs() < 1e-4);
        assert!(
            close(p.avg(s_m, s_r).total, 120.0),
            "the optimum lies on the deadline"
        );
        assert_eq!(p.min_slots(Some(120.0), 100, 20), (15, 7));
        // D = 86.75 (= T_J^avg at (20, 10)): (20.7290, 9.1766) → (21, 10).
        assert_eq!(p.min_slots(Some(86.75), 100, 20), (21, 10));
    }

    #[test]
    fn capped_slots_resolve_the_other_phase_and_infeasible_takes_the_caps() {
        let p = digest();
        // S_M capped at 10: S_R = b / (D' − a/10) = 195 / (102.5 − 99.5) = 65 → capped at 20.
        assert_eq!(p.min_slots(Some(120.0), 10, 20), (10, 20));
        // S_M capped at 12: 195 / (102.5 − 82.9167) = 9.957 → 10.
        assert_eq!(p.min_slots(Some(120.0), 12, 20), (12, 10));
        // D ≤ c = 17.5: nothing meets it; everything granted.
        assert_eq!(p.min_slots(Some(17.0), 30, 8), (30, 8));
        assert_eq!(p.min_slots(Some(17.0), 500, 500), (100, 20));
    }

    #[test]
    fn map_only_job_needs_a_over_d_map_slots() {
        // b = 0: S_M = a / (D − c), c = M_max / 2 (papers/aria.md §1.4).
        let p = AriaProfile {
            n_r: 0,
            sh1_avg: 0.0,
            sh1_max: 0.0,
            sht_avg: 0.0,
            sht_max: 0.0,
            r_avg: 0.0,
            r_max: 0.0,
            ..digest()
        };
        let h = hyperbola(&p);
        assert!(close(h.b, 0.0) && close(h.c, 7.5));
        // a = 995, D = 107.5 → S_M = 995 / 100 = 9.95 → 10.
        assert_eq!(p.min_slots(Some(107.5), 100, 100), (10, 0));
        let e = p.avg(10.0, 0.0);
        assert!(e.shuffle == 0.0 && e.reduce == 0.0 && close(e.total, 99.5 + 7.5));
    }

    /// `maps` maps of 100 bytes, map i replicated on node i mod 8.
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
                map_remote: 12.0,
                map_shortest: None,
                map_spread: None,
                partition_bytes: 100.0,
                shuffle_bandwidth: 20.0,
                reduce_time: PowerLaw {
                    a: 0.05,
                    b: 1.0,
                    spread: 0.0,
                },
                previous_runs: Vec::new(),
            },
            allotment,
            recovered: Vec::new(),
        }
    }

    #[test]
    fn from_spec_profile_and_slots_by_hand() {
        // N_M = 4, N_R = 2, T_l = 10, T_r = 12, p = 100, B = 20, f(d) = 0.05·d, no allotment:
        // M_avg = 10, M_max = max(12, 15) = 15. The past run held 4 maps, 2 reduces (one wave):
        // T_S = 100·4·2 / 20 = 40 = Sh_typ^avg, Sh_typ^max = 60. Its map stage T_M^avg(4) =
        // (10 + 7.5 + 15)/2 = 16.25, overlap 6.25 → Sh_1^avg = 33.75, Sh_1^max = 50.625.
        // R_avg = 0.05·400 = 20, R_max = 30.
        let s = spec(4, 2, 0.0, None);
        let p = AriaProfile::from_spec(&s, 4, 2);
        let want = AriaProfile {
            n_m: 4,
            n_r: 2,
            m_avg: 10.0,
            m_max: 15.0,
            sh1_avg: 33.75,
            sh1_max: 50.625,
            sht_avg: 40.0,
            sht_max: 60.0,
            r_avg: 20.0,
            r_max: 30.0,
        };
        assert_eq!(p, want);
        // a = 10·3.5 = 35, b = (40 + 20)·1.5 = 90,
        // c = ((33.75 − 40) + (15 + 50.625 − 40 + 60 + 30)) / 2 = 54.6875.
        let h = hyperbola(&p);
        assert!(
            close(h.a, 35.0) && close(h.b, 90.0) && close(h.c, 54.6875),
            "{h:?}"
        );
        // D = c + 80: S_M = √35(√35+√90)/80 = 1.139 → 2, S_R = √90(√35+√90)/80 = 1.826 → 2.
        assert_eq!(p.min_slots(Some(54.6875 + 80.0), 4, 2), (2, 2));
        // A grant of 2 halves the past run's reduce waves: ⌈2/1⌉ = 2 → Sh_typ^avg = 20.
        assert_eq!(AriaProfile::from_spec(&s, 4, 1).sht_avg, 20.0);
    }

    fn dart() -> Profile {
        Profile {
            map_local: 2.0,
            map_remote: 5.0,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 1000.0,
            shuffle_bandwidth: 10_000.0,
            reduce_time: PowerLaw {
                a: 0.001,
                b: 1.0,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        }
    }

    #[test]
    fn darts_means_become_arias_phases() {
        let p = aria_profile(&dart(), 100, 4).unwrap();
        assert_eq!(p.map, Durations::new(2.0, 5.0));
        // A reducer reads 1000 × 100 bytes: 10 s at 10 kB/s, and f(d) = 0.001·d = 100 s.
        assert_eq!(p.typical_shuffle, Durations::new(10.0, 15.0));
        assert_eq!(p.first_shuffle, p.typical_shuffle);
        assert_eq!(p.reduce, Durations::new(100.0, 150.0));
        // Map-only: no reduce phases.
        let p = aria_profile(&dart(), 100, 0).unwrap();
        assert_eq!(p.reduce, Durations::default());
        // Only remote maps measured: their mean is the average.
        let remote = Profile {
            map_local: f64::NAN,
            ..dart()
        };
        assert_eq!(
            aria_profile(&remote, 100, 4).unwrap().map,
            Durations::new(5.0, 7.5)
        );
        // Nothing measured for the maps: no profile.
        let unknown = Profile {
            map_remote: f64::NAN,
            ..remote
        };
        assert_eq!(aria_profile(&unknown, 100, 4), None);
    }

    #[test]
    fn wants_its_slots_and_predicts_t_j_avg_by_hand() {
        let mut d = new_driver(spec(4, 2, 54.6875 + 80.0, None));
        assert_eq!(d.policy.run.as_ref().map(|r| (r.s_m, r.s_r)), Some((2, 2)));
        assert_eq!(d.log, vec![Decision::Want(2)]);
        // T_J^avg(2, 2): T_M = (20 + 30)/2 = 25; shuffle (33.75 + 0 + 50.625 + 40)/2 = 62.1875;
        // reduce (20 + 40)/2 ... = ((2·20/2) + (1·20/2 + 30))/2 = 30; total 117.1875.
        let e = d.policy.estimate(0.0).unwrap();
        assert!(close(e.map, 25.0) && close(e.shuffle, 62.1875) && close(e.reduce, 30.0));
        assert!(close(e.total, 117.1875) && e.total < 134.6875);
        d.run();
        d.assert_never_revises();
        assert_eq!(d.max_maps, 2, "ARIA runs at most S_M maps at once");
        assert_eq!(d.max_reduces, 2);
        let closes: Vec<_> = d
            .log
            .iter()
            .filter_map(|x| match x {
                Decision::CloseMapPhase { k, estimate } => Some((*k, *estimate)),
                _ => None,
            })
            .collect();
        assert_eq!(
            closes,
            vec![(4, Some(e))],
            "held 2 map slots: the plan's prediction"
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
        let p = d.policy.progress();
        assert!(p.finished && p.k == 4 && p.maps_done == 4 && p.reduces_done == 2);
        assert_eq!(p.processed_fraction(), 1.0);
    }

    #[test]
    fn too_tight_a_deadline_launches_every_map_on_the_whole_grant() {
        let mut d = new_driver(spec(20, 3, 1.0, Some(5)));
        assert_eq!(d.policy.run.as_ref().map(|r| (r.s_m, r.s_r)), Some((5, 3)));
        assert_eq!(d.log, vec![Decision::Want(5)]);
        // The RM grants more than asked: the spare containers go straight back.
        for _ in 0..7 {
            d.grant();
        }
        assert_eq!(d.count(|x| matches!(x, Decision::Release(_))), 2);
        d.run();
        d.assert_never_revises();
        let mut maps = d.launched_maps();
        maps.sort();
        assert_eq!(
            maps,
            (0..20).map(MapId).collect::<Vec<_>>(),
            "each map once"
        );
        assert_eq!(d.max_maps, 5);
        assert!(d.max_held <= 5, "never holds more than the grant");
        assert!(
            d.log
                .iter()
                .all(|x| !matches!(x, Decision::Want(n) if *n > 5))
        );
        assert_eq!(
            d.count(|x| matches!(x, Decision::CloseMapPhase { k: 20, .. })),
            1
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
        assert_eq!(
            d.count(|x| matches!(x, Decision::SampleReduceInput { .. })),
            0
        );
        assert_eq!(d.policy.progress().processed_fraction(), 1.0);
        // The contract: Want(0), every container handed back, then Finish, last.
        assert!(matches!(d.log.last(), Some(Decision::Finish(_))));
        assert!(d.held.is_empty() && d.want == 0);
    }

    #[test]
    fn reduces_wait_for_the_map_phase_to_close() {
        let mut d = new_driver(spec(6, 2, 1e6, None));
        d.run();
        d.assert_never_revises();
        let close_at = d
            .log
            .iter()
            .position(|x| matches!(x, Decision::CloseMapPhase { .. }))
            .unwrap();
        let first_reduce = d
            .log
            .iter()
            .position(|x| matches!(x, Decision::LaunchReduce { .. }))
            .unwrap();
        assert!(close_at < first_reduce);
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
    }

    #[test]
    fn failed_maps_and_lost_containers_are_always_retried() {
        let mut d = new_driver(spec(6, 1, 1.0, Some(2)));
        d.fail_once = Some(MapId(0));
        d.run();
        d.assert_never_revises();
        let m0 = d.launched_maps().iter().filter(|&&m| m == MapId(0)).count();
        assert_eq!(m0, 2, "map 0 relaunched after its failure");
        let p = d.policy.progress();
        assert!(p.finished && p.k == 6 && p.maps_done == 6);

        // A container lost with its attempt: the map comes back on the next container.
        let mut d = new_driver(spec(2, 0, 1e6, Some(1)));
        d.grant();
        d.running.clear(); // the attempt goes with its container
        let c = *d.held.iter().next().unwrap();
        d.held.remove(&c);
        d.send(Event::ContainerLost(c));
        d.run();
        d.assert_never_revises();
        let mut maps = d.launched_maps();
        maps.sort();
        assert_eq!(maps, vec![MapId(0), MapId(0), MapId(1)]);
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
    }

    #[test]
    fn an_empty_job_finishes_at_once() {
        let d = new_driver(spec(0, 0, 10.0, None));
        assert_eq!(
            d.count(|x| matches!(x, Decision::CloseMapPhase { k: 0, .. })),
            1
        );
        assert_eq!(d.count(|x| matches!(x, Decision::Finish(_))), 1);
        assert_eq!(d.policy.name(), "aria");
    }
}
