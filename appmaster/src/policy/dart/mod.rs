//! Dart (Hu et al., FITEE 2017) and the variants its evaluation compares (§6.1.2): the approach
//! stage (Alg. 1) launches maps while the estimated completion time stays under the deadline;
//! the revise stage mitigates map stragglers (Alg. 3–4) and samples reduce input (Alg. 5);
//! failures and skew follow §5.2, smoothed estimates §5.3.
//!
//! `dart-paper` is the paper's algorithm: Alg. 1–5 and eq. 1–13 as printed, read as the digest
//! (`papers/dart.md`) reads them where the paper is vague or wrong. `dart` is that plus yard's
//! extensions, each an [`Extensions`] switch (the code says why where each one sits):
//! - `reduce_waves` (§3.3 eq. 9): `T_R` is the expected last of R lognormal reduces over their waves, not the average reduce; Alg. 5 (eq. 12) leaves room for a wave's largest draw.
//! - `reduce_confidence` (§4.2.2 eq. 12): Alg. 5 sizes a wave to end by `D` with `PolicyConfig::reduce_confidence`, not on average.
//! - `forecast_cut` (§3 eq. 1): the estimate (`estimate()`, `CloseMapPhase`) is cut as Alg. 5 will cut the reduces, not eq. 1's `T_J`; under `last_moment`'s guard its total is at most `D`, when the guard answers whatever still runs (`Estimate::uncapped` is eq. 1's sum of the parts before that cap). Every close carries the estimate, the guard's too.
//! - `sample_floor` (§4.2.2 Alg. 5): a reduce keeps at least `min_reduce_sample` of its input even when the time left fits less than that (both keep it when no time is left).
//! - `node_pace` (§4.2.2 eq. 12): Alg. 5 divides the time left by how much slower this job's maps ran on the reduce's node.
//! - `reduce_restart` (§4.2.2): a reduce whose rate says it ends after `D` is killed once and restarted on another node (`reduce_avoid`, parked containers); not under `cut_tail`'s guard, whose cut keeps what a late reduce folded in.
//! - `deadline_stragglers` (§4.2.1, `S`): once the map phase closed, a map whose rate says it ends after `D` is a straggler too, not only LATE's.
//! - `end_lost_races` (§4.2.1 Alg. 3): a speculative race that neither copy can win within `W` is ended, both attempts killed.
//! - `kill_on_tick` (§4.2.1 Alg. 3): the kill branches also run on every tick, not only when a container is offered.
//! - `first_map` (§4.1 Alg. 1 and eq. 10, §5.2.1): the first map need only fit with its shuffle (Alg. 5 then cuts the reduces); a failed map's restart test likewise.
//! - `lone_map` (§4.1 Alg. 1, yard's deadline guard): with no map in `k`, a map is launched when the estimate says none fits but the shortest map the profile has seen (`Profile::map_shortest`) or its law gives a 0.13 % chance, its shuffle and the least reduce Alg. 5 would leave could end by `D` — of the pending maps, the one whose input times its law's chance to end in time is largest; the guard spares a running map that will still end in time while no map is done, and kills it on a tick once it no longer will.
//! - `last_moment` (yard's deadline guard, beyond the paper): under a guard the maps stop at the last responsible moment, when the time left falls to what answering from the maps done takes (their output still on the link at eq. 5's bandwidth, the reduces over it at Alg. 5's confidence with the profile's measured spread, eq. 8–9 and 13, and `PolicyConfig::answer_cost`), not at a fixed margin; the fixed guard (`--guard-seconds`) is a floor that stops only what will no longer end in time; while no map is done no map is stopped, by the guard or by Alg. 3–4's kills, until even ending now would leave its output too late (a rate from noisy reports may call late a map that ends in time, and stopping it only makes the answer empty sooner); the last running reduces are cut `answer_cost` before `D`, not abandoned at it; and Alg. 1 admits only a map the guard would spare at its launch on the same information (`guard_spares_launch`: its mean end, its output's shuffle and the reduces at Alg. 5's confidence by the cut), so the guard stops a map the approach launched only on news (issue 29: it had stopped a wave launched 0.1 s before; of the two ways to agree, this one, since sparing what Alg. 1 admitted leaves the cut reduces less to fold by the guard's own account).
//! - `cut_tail` (§4.2.2 eq. 12, yard's deadline guard): under `last_moment`'s guard Alg. 5 sizes the reduces to the median reduce (`e = 1`, as the paper does) instead of `reduce_confidence`'s quantile of the wave's largest draw: the guard's cut at `D − answer_cost` takes the tail, and a reduce cut by time keeps the share of its input it had time for, where one sampled for a bound it seldom needs keeps less every time.
//! - `time_cut` (§4.2.2 Alg. 5, yard's deadline guard): under `cut_tail`'s guard Alg. 5 samples no reduce's input ahead: each keeps all of it, and the guard's cut at `D − answer_cost` keeps what the reduce folded by then. A sample sized from the profile's law keeps less whenever the reduce runs faster than the law says, and the law is fitted on a few sample reduces (FB-2009 two-plus jobs, seeds 1–3: bytes vs the byte oracle C1/C2/C3 91.7/95.6/89.5 % → 92.2/96.4/90.5 %; FB-2010's first 4,000 jobs, held out: 90.7/95.6/88.7 → 91.7/96.6/90.1 %; missed and empty unchanged).
//! - `wave_fill` (§4.1 Alg. 1, yard's deadline guard; off, `--dart-with` tries it): under `time_cut`'s guard a map Alg. 1 refuses still runs when its map and shuffle end before the cut and the reduces, cut at `D − answer_cost`, would fold at least as many maps' worth of output with it as without.
//! - `busy_bandwidth` (§3.2 eq. 5): the shuffle's bandwidth is `V_p` over the time the link had bytes to move, not over `T_p − T_q`; a link has none to move before a reduce runs to pull them (`Estimator::reduce_launched`: live, the reduces start after the map close, and the wait read as a slow link).
//! - `wave_end` (§3.1 eq. 2): the forecast's `T_M` is the expected *latest* end of the running maps (each from its start and progress, or the profile's duration for its locality scaled by its input, spread by `PolicyConfig::map_spread` or the job's measured spread; `running.rs`), not one mean map after the last launch; once the maps are over, when they ended.
//! - `fifo_shuffle` (§3.2 eq. 3–7): the forecast's `T_NS` is what is left on the link after the last map when each output queues at the bandwidth, first come first served (`running.rs`), not the whole output over the bandwidth less an overlap guessed from mean map times; once the maps are over, the time since they ended plus the bytes still queued.
//! - `elapsed_phases` (§3.3 eq. 1, 9): once the reduces have their input, the forecast's map and shuffle phases are the ones that happened and `T_R` runs from when the reduces started to the expected latest end of those still running (each from its start and kept input, or its progress rate), not a whole reduce phase from now.
//! - `reforecast_after_kill` (§4.2.1 Alg. 3–4 after §3 eq. 1): when `k` changes after the map phase closed (a straggler killed, a map failed or restarted), the estimate now is sent as `Decision::Reforecast`; the simulator scores the estimate in force at the answer (the close's own stays in the per-phase table and `--jobs-csv`'s `close_error`), the live master answers it as `estimateAtEnd`. It was off while eq. 5's bandwidth read an output in flight as a slow link (a fresh estimate during a large job's shuffle was off by up to 30×); with that fixed it is better on both traces in every configuration (docs/decisions/simulator.md, "The estimate re-sent after a kill").
//! - `input_scaled` (§5.3, §3 eq. 2 and 8): a finished map's time and output enter `T_m^a` and `p` over its input scale (its input over the mean map's), so a short tail split reads as a map of little input, not as a fast map with little output; the forecast's reduce input is `p` times the maps in `k` in mean maps; the straggler detector's rates are in mean maps a second, so a full block beside a finished tail split is no straggler. The paper's maps are equal blocks; a trace's or a file's last split is not (FB-2010 job158: one finished map's output put the reduce input 24 % high).
//!
//! D-WOR, D-WMR and D-WOST are `dart-paper` without the revise stage (Alg. 3–5), without its
//! reduce half (Alg. 5), and with eq. 8 instead of eq. 13: each removes only what its name says.
//! LATE keeps `dart`'s approach stage and speculates as LATE does; `full` launches every map and
//! ignores the deadline.
//!
//! Without a deadline (`JobSpec::deadline` is `None`) every test against `D` passes, as at an
//! unbounded `D`: Alg. 1 launches every map, eq. 11's window always has room for a copy (Alg. 3
//! speculates on LATE's stragglers, nothing is killed for time), Alg. 5 samples nothing, no
//! reduce or map runs late, the forecast is eq. 1's uncut, and the guard's extensions
//! (`lone_map`, `last_moment`) stay off, asking no `WakeAt`, until a deadline is given
//! (`Event::DeadlineChanged`).
//!
//! Where the paper leaves a gap, both Darts take the same reading (the digest's, where it has
//! one; docs/decisions/dart.md lists them): rack-local counts as remote in eq. 2; the profile's
//! bandwidth and an expected `T_q` before the shuffle starts, `T_NS ≥ 0`; eq. 10 strict; `e = 1`
//! in eq. 9; eq. 13's `k_i` is run i's map count, eq. 8 without a previous run; `p` a running
//! mean (§5.3); LATE's straggler rule (§2.3) as the detector; Alg. 3's `≥` and the current `k`
//! in eq. 11; Alg. 4's threshold `0.8·T_m^a`, strict; Alg. 5 keeps `min_reduce_sample` when no
//! time is left; a failed map restarts on the remote duration's test, a reduce always; with
//! only local-only maps left, the phase ends once even a node-local launch would miss `D`.

use std::collections::{BTreeMap, HashMap};

use super::core::{Core, JobRun, MapState, drive, progress_of};
use super::running::{Ending, expected_latest, fifo_leftover};
use super::{
    AttemptId, ContainerId, Decision, Estimate, Estimator, Event, JobSpec, Locality, NodeId,
    PolicyConfig, PolicyKind, Progress, ReduceId, Rng, Seconds, TaskPolicy, TaskRef,
};

mod extensions;
mod guard;

pub use extensions::Extensions;

/// Which parts of Dart a variant runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Variant {
    /// Alg. 1's deadline test; without it every map is launched (`full`).
    approach: bool,
    /// Alg. 3–4 on map stragglers.
    revise_maps: bool,
    /// Alg. 5 on reduce input (and, with `reduce_restart`, restarting reduces that will end
    /// after `D`).
    revise_reduces: bool,
    /// Eq. (13) instead of eq. (8) for the reduce input.
    skew: bool,
    /// LATE's speculation after the approach stage.
    late: bool,
    /// yard's extensions.
    x: Extensions,
}

impl Variant {
    fn of(kind: PolicyKind) -> Variant {
        let paper = Variant {
            approach: true,
            revise_maps: true,
            revise_reduces: true,
            skew: true,
            late: false,
            x: Extensions::NONE,
        };
        match kind {
            PolicyKind::Dart => Variant {
                x: Extensions::YARD,
                ..paper
            },
            PolicyKind::DartPaper => paper,
            PolicyKind::DartWithoutRevise => Variant {
                revise_maps: false,
                revise_reduces: false,
                ..paper
            },
            PolicyKind::DartMapReviseOnly => Variant {
                revise_reduces: false,
                ..paper
            },
            PolicyKind::DartWithoutSkew => Variant {
                skew: false,
                ..paper
            },
            // yard's approach stage (its estimator), as before dart-paper existed.
            PolicyKind::Late => Variant {
                revise_maps: false,
                revise_reduces: false,
                late: true,
                x: Extensions::YARD,
                ..paper
            },
            PolicyKind::Full | PolicyKind::Aria | PolicyKind::Ps => Variant {
                approach: false,
                revise_maps: false,
                revise_reduces: false,
                skew: false,
                late: false,
                x: Extensions::YARD,
            },
        }
    }
}

/// Where a reduce stands in reduce revising (`Run::judge_reduce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Revision {
    None,
    /// Killed for running past `D`; waiting for a container to restart on.
    Waiting,
    /// Restarted; never judged again.
    Restarted,
}

/// The forecast's map spread (`wave_end`): the configured spread counts as this many maps
/// beside the job's own, and no spread above `MAX_SPREAD` is used.
const SPREAD_PRIOR: f64 = 10.0;
const MAX_SPREAD: f64 = 1.0;

/// From this progress on, a running task's rate alone says when it ends (`wave_end`,
/// `elapsed_phases`).
const TRUSTED_PROGRESS: f64 = 0.25;

/// `lone_map`: how far past `D` a spared map's expected end may fall (rounding in its rate):
/// anything later is ended by the deadline event, which the adapter sends after whatever
/// else happens in its instant.
const LONE_MAP_SLACK: Seconds = 1e-3;

/// `last_moment`: a wake this close to its moment counts as the moment (the adapter rounds
/// times to its clock).
const WAKE_SLACK: Seconds = 1e-6;

/// `lone_map`: a map is tried when its law gives it this many σ's chance (0.13 %) of ending
/// in time.
const LONE_MAP_Z: f64 = 3.0;

/// How many recently finished maps the straggler median counts.
const RECENT_MAPS: usize = 64;

/// Dart or one of its variants. Build with [`PolicyKind::build`] or [`Dart::new`].
pub struct Dart {
    kind: PolicyKind,
    variant: Variant,
    config: PolicyConfig,
    run: Option<Run>,
}

impl Dart {
    pub fn new(kind: PolicyKind, config: PolicyConfig) -> Dart {
        let mut variant = Variant::of(kind);
        if let (PolicyKind::Dart, Some(x)) = (kind, config.dart_extensions) {
            variant.x = x;
        }
        Dart {
            kind,
            variant,
            config,
            run: None,
        }
    }

    /// `kind` with yard's extensions set to `x` instead of the kind's own: e.g. `dart` less one
    /// extension, to see what that one does. The name stays the kind's.
    pub fn with_extensions(kind: PolicyKind, config: PolicyConfig, x: Extensions) -> Dart {
        let mut dart = Dart::new(kind, config);
        dart.variant.x = x;
        dart
    }
}

impl TaskPolicy for Dart {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn handle(&mut self, now: Seconds, event: Event, rng: &mut Rng, out: &mut Vec<Decision>) {
        let (variant, config) = (self.variant, &self.config);
        let before = out.len();
        drive(
            &mut self.run,
            now,
            event,
            out,
            config.one_task_per_container,
            |spec, out| {
                let mut run = Run::new(variant, config.clone(), spec, now);
                if config.random_map_order {
                    run.core.randomise_map_order(rng);
                }
                // Nothing to map (or every map recovered from an earlier master attempt).
                if run.core.pending_maps() == 0 {
                    run.core
                        .close_map_phase(Some(run.closing_estimate(now)), out);
                }
                run
            },
        );
        if let Some(run) = self.run.as_mut() {
            run.note_phases(now);
            if run.v.x.reforecast_after_kill {
                run.reforecast(now, before, out);
            }
        }
    }

    fn estimate(&self, now: Seconds) -> Option<Estimate> {
        self.run.as_ref().map(|r| r.current_estimate(now))
    }

    fn progress(&self) -> Progress {
        progress_of(&self.run)
    }
}

/// One job's run of the policy.
struct Run {
    v: Variant,
    config: PolicyConfig,
    core: Core,
    est: Estimator,
    /// `S`: the map stragglers found at the last tick, oldest attempt first.
    stragglers: Vec<AttemptId>,
    /// Progress rates (1 / duration) of the last finished maps, for the straggler median.
    recent_rates: std::collections::VecDeque<f64>,
    /// Per node, the sum and count of (map duration / the profile's duration for its
    /// locality): how the node runs this job's tasks.
    node_pace: HashMap<NodeId, (f64, u32)>,
    /// The same over every node.
    all_pace: (f64, u32),
    /// Per reduce, how far reduce revising has gone (each is revised at most once).
    reduce_revision: Vec<Revision>,
    /// Nodes a reduce ran past `D` on: a restart does not go there while another attempt runs
    /// (and will free a container elsewhere).
    reduce_avoid: Vec<NodeId>,
    /// Free containers on such nodes, held back while a restart is next in line.
    parked: Vec<ContainerId>,
    /// When the map phase last became over (closed, no map running) and, after that, when the
    /// link last had nothing left to move: the phases that happened, for the forecast.
    maps_over: Option<Seconds>,
    shuffle_over: Option<Seconds>,
    /// Count, sum and sum of squares of ln(duration / expected duration) of finished maps:
    /// the job's own spread of map times.
    map_ratios: (u32, f64, f64),
    /// `last_moment`: the time last asked for with `WakeAt` (the caller's clock), until it
    /// comes; and whether the last reduces were cut.
    wake: Option<Seconds>,
    reduces_cut: bool,
    /// `reforecast_after_kill`: the `k` of the last estimate sent after the map phase closed
    /// (`CloseMapPhase`'s, then `Reforecast`'s); whether the job has finished.
    told_k: Option<u32>,
    finished: bool,
}

impl JobRun for Run {
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// The guard closes the map phase with the estimate every other close carries
    /// (`current_estimate`, Dart eq. (1)), made once the maps it stops are gone, so that every
    /// close has one. The estimate decides nothing (only `Reforecast` reads the close, for its
    /// `k`): `dart-paper`'s decisions stay the paper's.
    fn guard(&mut self, now: Seconds, spare: &[AttemptId], out: &mut Vec<Decision>) {
        if let Some(cut) = self.core.guard_stop(spare, out) {
            if !self.core.map_phase_closed() {
                let e = self.closing_estimate(now);
                self.core.close_map_phase(Some(e), out);
            }
            self.core.guard_cut(cut, out);
        }
    }

    /// `lone_map`: while no map is done the guard's cut would answer from nothing, so the
    /// running maps that will still end in time (with their shuffle and the least reduce) are
    /// left to run. With a map done, every map goes, as the guard has it.
    /// `last_moment` spares what still ends in time (`last_moment_spares`).
    fn guard_spares(&self, now: Seconds) -> Vec<AttemptId> {
        if self.last_moment_on() {
            return self.last_moment_spares(now);
        }
        if !self.lone_map_on() || self.core.progress.maps_done > 0 {
            return Vec::new();
        }
        self.maps_in_time(now, true)
    }

    /// §5.2.1: a map that left `k` (failed, or its output lost) restarts only if `T_J` with it
    /// back (remote duration, the pessimistic case: where it will run is not known yet; the
    /// paper does not say) is under the deadline; `full` always restarts. The test is Alg. 1's
    /// (`fits`, with `first_map` where that extension is on).
    /// `last_moment`: the guard's own moment, or the last reduces' cut.
    fn wake(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        self.wake = None;
        let (true, Some(cut)) = (self.last_moment_on(), self.cut_at()) else {
            return;
        };
        let t_p = self.core.elapsed(now);
        if !self.reduces_cut && t_p >= cut - WAKE_SLACK {
            // The guard's act, as its own moment's is (`progress().guarded` says the run left
            // its unguarded twin's path).
            if !self.core.progress.guarded {
                let spare = self.last_moment_spares(now);
                self.guard(now, &spare, out);
            }
            self.reduces_cut = true;
            self.core.cut_reduces(out);
        } else if !self.core.progress.guarded
            && self
                .stop_maps_at(t_p)
                .is_some_and(|at| t_p >= at - WAKE_SLACK)
        {
            let spare = self.last_moment_spares(now);
            self.guard(now, &spare, out);
        }
    }

    fn restart_approved(&self, now: Seconds) -> bool {
        !self.v.approach || {
            let t_p = self.core.elapsed(now);
            let k_next = f64::from(self.core.k() + 1);
            let e = self
                .est
                .completion(k_next, t_p, self.est.remote, self.v.skew);
            self.fits(&e)
        }
    }

    fn event(&mut self, now: Seconds, event: Event, out: &mut Vec<Decision>) {
        let t_p = self.core.elapsed(now);
        match event {
            // Handled by `drive`.
            Event::JobStarted(_)
            | Event::MapOutputLost(_)
            | Event::Guard
            | Event::Wake
            | Event::Deadline => {}
            // `drive` set the new `D` in the spec, which every estimate reads; `settle` then
            // launches while the estimate fits it, and `ask_wake` asks for the last moment
            // anew (a moment that moved later is found not come when the earlier wake comes).
            Event::DeadlineChanged(_) => {}
            Event::ContainerGranted(c) => {
                self.core.grant(c);
                self.core.freed.push(c.id);
            }
            Event::ContainerLost(c) => {
                let attempt = self.core.attempt_on(c);
                self.core.forget(c);
                if let Some(a) = attempt {
                    self.failed(a, now);
                }
            }
            Event::TaskProgress { attempt, progress } => {
                self.core.progress_report(attempt, progress, now);
                // Under `cut_tail` the guard's cut at `D − answer_cost` keeps what a late
                // reduce folded in; a restart would throw that away for a smaller input on
                // another node (FB-2009 two-plus jobs, C1, seeds 1–3: 88.2 % of the byte
                // oracle with restarts, 91.7 % without; FB-2010's first 4,000 jobs, held
                // out: 85.1 / 90.7 %; C3 and every missed and empty figure unchanged).
                let guard_cuts = self.v.x.cut_tail && self.last_moment_on();
                if self.v.revise_reduces
                    && self.v.x.reduce_restart
                    && !guard_cuts
                    && self.core.map_phase_closed()
                {
                    self.judge_reduce(attempt, out);
                }
            }
            Event::TaskFinished {
                attempt,
                output_bytes,
            } => self.finished(attempt, output_bytes, now, out),
            Event::TaskFailed(attempt) => self.failed(attempt, now),
            Event::ShuffleBytes(bytes) => self.est.bytes_shuffled(t_p, bytes as f64),
            Event::ReduceInputReady { reduce, bytes } => {
                let mut keep = bytes;
                // `time_cut`: under `cut_tail`'s guard the cut at `D − answer_cost` keeps what
                // the reduce had time for; a sample taken ahead, from the profile's law, keeps
                // less whenever the reduce runs faster than the law says.
                let cut_keeps = self.v.x.time_cut && self.v.x.cut_tail && self.last_moment_on();
                // Alg. 5: cap the input at d_max = f⁻¹(D − T_p) (eq. 12) by uniform sampling
                // (with `node_pace`, on the reduce's node's observed pace); no cap without `D`.
                if self.v.revise_reduces
                    && !cut_keeps
                    && let Some(d_max) = self.reduce_input_cap(reduce, t_p)
                    && bytes as f64 > d_max
                {
                    // With no time left (D ≤ T_p, a case the paper does not cover) a small
                    // sample still answers; `sample_floor` (yard's) keeps that much even
                    // when the time left fits less.
                    let floor = if self.v.x.sample_floor || d_max <= 0.0 {
                        self.config.min_reduce_sample * bytes as f64
                    } else {
                        0.0
                    };
                    keep = d_max.max(floor).floor() as u64;
                    if self.v.x.sample_floor {
                        // Whole bytes, as the reduce keeps them: a reduce that has input
                        // keeps some (a cut to 0 bytes answers from nothing at once).
                        keep = keep.max(1);
                    }
                    out.push(Decision::SampleReduceInput {
                        reduce,
                        keep_bytes: keep,
                    });
                }
                self.core.reduce_input(reduce, bytes, keep, now);
                // The adapter hands reduces their input once the link drained.
                if self.maps_over.is_some() {
                    self.shuffle_over.get_or_insert(t_p);
                }
            }
            Event::Tick => {
                let judge = self.core.progress.guarded && self.core.maps_running() > 0;
                if self.last_moment_on() && judge {
                    // The guard stops waiting for a spared map once it can no longer end in
                    // time (a job may hold many thousand reduces: only the maps are judged).
                    let spared = self.spared(now, false);
                    let late: Vec<AttemptId> = self
                        .core
                        .live_attempt_ids()
                        .filter(|(a, x)| {
                            matches!(x.task, TaskRef::Map(_)) && spared.binary_search(a).is_err()
                        })
                        .map(|(a, _)| a)
                        .collect();
                    for a in late {
                        self.core.kill(a, out);
                    }
                } else if self.lone_map_on() && !self.last_moment_on() && judge {
                    // The guard stops waiting for a spared map once it will no longer end in
                    // time: the answer is then empty, but by `D`.
                    for a in self.maps_in_time(now, false) {
                        self.core.kill(a, out);
                    }
                }
                self.detect_stragglers(now);
                if self.v.revise_maps && self.core.map_phase_closed() {
                    if self.v.x.end_lost_races {
                        self.end_lost_races(now, out);
                    }
                    if self.v.x.kill_on_tick {
                        self.revise_on_tick(now, out);
                    }
                }
            }
        }
    }

    /// Offers every freed container, then reports the wanted container count, and completion
    /// (after handing every container back).
    fn settle(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        while let Some(c) = self.core.freed.pop() {
            self.offer(c, now, out);
        }
        self.unpark(now, out);
        // Revising needs a container per straggler (Alg. 3 runs on container offers).
        let extra = if self.core.map_phase_closed() && (self.v.revise_maps || self.v.late) {
            self.stragglers.len() as u32
        } else {
            0
        };
        self.core.report(self.core.want(extra), out);
        if self.last_moment_on() && !self.core.done() {
            self.ask_wake(now, out);
        }
    }
}

impl Run {
    fn new(v: Variant, config: PolicyConfig, spec: JobSpec, now: Seconds) -> Run {
        let reduces = spec.reduces;
        let mut est = Estimator::new(
            &spec.profile,
            spec.reduces,
            spec.allotment,
            config.ewma_alpha,
        );
        if !v.x.reduce_waves {
            est = est.without_reduce_noise(); // eq. (9) at e = 1, one wave
        }
        if v.x.reduce_confidence {
            est = est.with_reduce_confidence(config.reduce_confidence);
        }
        if v.x.cut_tail && last_moment_on(v, &config) {
            // The guard cuts the last reduces at `D − answer_cost` and counts what they folded
            // in: that, not Alg. 5's bound, keeps the deadline, so Alg. 5 sizes to the median
            // reduce as the paper does. A reduce cut by time keeps the share of its input it
            // had time for; one sampled for a bound it seldom needs keeps less every time.
            est = est.sized_to_the_median_reduce();
        }
        est.busy_bandwidth = v.x.busy_bandwidth;
        Run {
            v,
            config,
            core: Core::new(spec, now),
            est,
            stragglers: Vec::new(),
            recent_rates: std::collections::VecDeque::new(),
            node_pace: HashMap::new(),
            all_pace: (0.0, 0),
            reduce_revision: vec![Revision::None; reduces as usize],
            reduce_avoid: Vec::new(),
            parked: Vec::new(),
            maps_over: None,
            shuffle_over: None,
            map_ratios: (0, 0.0, 0.0),
            wake: None,
            reduces_cut: false,
            told_k: None,
            finished: false,
        }
    }

    /// `D`, if the job has one (the module documentation says what runs without).
    fn deadline(&self) -> Option<Seconds> {
        self.core.spec.deadline
    }

    /// `T_J` with no further map: what the job is heading for now (eq. 1). With Alg. 5 on and
    /// `forecast_cut` (yard's), a reduce phase that would run past `D` is cut as Alg. 5 will cut
    /// it. Alg. 1 and eq. 11 use the uncut `T_J`; this is only the policy's forecast. With
    /// `wave_end`, `fifo_shuffle` and `elapsed_phases` (yard's) its parts come from the
    /// running tasks (`running.rs`) instead of eq. 2, eq. 3–7 and a reduce phase from now.
    fn current_estimate(&self, now: Seconds) -> Estimate {
        let launches_over = self.core.map_phase_closed() || self.core.pending_maps() == 0;
        self.estimate_with(now, launches_over)
    }

    /// The estimate a close carries: no map will launch after it.
    fn closing_estimate(&self, now: Seconds) -> Estimate {
        self.estimate_with(now, true)
    }

    /// [`Run::current_estimate`], told whether maps may still launch (`launches_over`: the
    /// phase is closed, or closing now, or every map is out).
    fn estimate_with(&self, now: Seconds, launches_over: bool) -> Estimate {
        let (t_p, k) = (self.core.elapsed(now), self.k_in_mean_maps());
        let mut e = self.est.completion(k, t_p, 0.0, self.v.skew);
        let x = self.v.x;
        if x.wave_end || x.fifo_shuffle {
            let maps = self.running_maps(t_p);
            if x.wave_end {
                let endings: Vec<Ending> = maps.iter().map(|m| m.0).collect();
                if let Some(over) = self.maps_over {
                    e.map = over;
                } else if let Some(latest) = expected_latest(&endings) {
                    // Dart eq. (2)'s T_M^o stands for launches to come while the phase is
                    // open. Once none can come it is only the last launch's end at an
                    // unscaled T_m^a: a 20 MB tail split launched last read as a full map
                    // (FB-2010 job450: 1,692 s forecast, 1,058 s taken).
                    let floor = if launches_over { t_p } else { e.map };
                    e.map = latest.max(floor);
                }
            }
            if x.fifo_shuffle && self.core.spec.reduces > 0 {
                // Dart eq. (3)–(7) replaced: the link as a FIFO of the outputs still to come;
                // the bandwidth is eq. (5)'s.
                let bandwidth = self.est.bandwidth(t_p);
                let queued = self.est.backlog.max(0.0);
                let fifo = fifo_leftover(&maps, t_p, queued, bandwidth);
                e.shuffle = match (self.maps_over, self.shuffle_over, fifo) {
                    (Some(m), Some(s), _) => s - m,
                    (Some(m), None, _) => t_p - m + queued / bandwidth,
                    (None, _, Some(left)) => left,
                    (None, _, None) => queued / bandwidth,
                };
            }
        }
        // Without a deadline Alg. 5 cuts nothing: eq. 9's reduce phase stands.
        if self.v.revise_reduces
            && self.v.x.forecast_cut
            && let Some(d) = self.deadline()
        {
            let room = d - e.map - e.shuffle;
            // The cut Alg. 5 makes keeps whole bytes, at least one with `sample_floor`: a
            // reduce of d bytes keeps at least 1/d of them.
            let mut floor = self.config.min_reduce_sample;
            let d = self.est.reduce_input(k, false);
            if self.v.x.sample_floor && d > 0.0 {
                floor = floor.max(1.0 / d).min(1.0);
            }
            e.reduce = self.est.reduce_after_sampling(k, self.v.skew, room, floor);
        }
        // Dart eq. (1) with the phases that happened, and eq. (9)'s f for each running reduce.
        if let (true, Some(m), Some(s)) = (x.elapsed_phases, self.maps_over, self.shuffle_over)
            && self.core.spec.reduces > 0
        {
            e.map = m;
            e.shuffle = s - m;
            let latest = expected_latest(&self.running_reduces(t_p)).unwrap_or(t_p);
            e.reduce = latest.max(t_p) - s;
        }
        e.total = e.map + e.shuffle + e.reduce;
        if self.v.x.forecast_cut
            && self.last_moment_on()
            && let Some(d) = self.deadline()
        {
            // The guard answers by `D` whatever runs then: it stops the maps and cuts the
            // reduces (the parts stay the uncut phases).
            e.total = e.total.min(d);
        }
        e
    }

    /// Notes when the map phase became over (closed, no map running) and, after that, when
    /// the link had nothing left to move, as the simulator's report times the true phases; a
    /// map that runs again reopens both.
    fn note_phases(&mut self, now: Seconds) {
        let t_p = self.core.elapsed(now);
        let over = self.core.map_phase_closed() && self.core.maps_running() == 0;
        match (over, self.maps_over) {
            (true, None) => self.maps_over = Some(t_p),
            (false, Some(_)) => {
                self.maps_over = None;
                self.shuffle_over = None;
            }
            _ => {}
        }
        if self.maps_over.is_some() && self.est.backlog <= 0.0 {
            self.shuffle_over.get_or_insert(t_p);
        }
    }

    /// `reforecast_after_kill` (Dart §4.2.1 Alg. 3–4 after eq. 1): the revise stage kills
    /// stragglers after the map phase closed, and each kill lowers `k` (a failed map's too;
    /// a restart raises it), so the estimate the close carried describes a job that no longer
    /// runs. When `k` differs from the one the last estimate was sent with, the estimate now
    /// (eq. 1 with the current `k`, as `estimate()` gives it) is sent as `Reforecast`; never
    /// after the job's `Finish`. `before` is where this call's decisions begin in `out`.
    fn reforecast(&mut self, now: Seconds, before: usize, out: &mut Vec<Decision>) {
        for d in &out[before..] {
            match d {
                Decision::CloseMapPhase { k, .. } => self.told_k = Some(*k),
                Decision::Finish(_) => self.finished = true,
                _ => {}
            }
        }
        let k = self.core.k();
        if self.finished || self.told_k.is_none_or(|told| told == k) {
            return;
        }
        self.told_k = Some(k);
        out.push(Decision::Reforecast {
            k,
            estimate: self.current_estimate(now),
        });
    }

    /// `k` counted in maps of the mean input under `input_scaled` (the estimator's `p` is a
    /// mean map's output then), else in maps.
    fn k_in_mean_maps(&self) -> f64 {
        let k = f64::from(self.core.k());
        let (maps, total) = (self.core.spec.maps.len(), self.core.progress.input_bytes);
        if !self.v.x.input_scaled || maps == 0 || total == 0 {
            return k;
        }
        self.core.k_input() as f64 / (total as f64 / maps as f64)
    }

    /// Map `m` in maps of the mean input under `input_scaled` (its input scale), else 1.
    fn per_mean_map(&self, m: super::MapId) -> f64 {
        match self.v.x.input_scaled {
            true => self.input_scale(m),
            false => 1.0,
        }
    }

    /// Map `m`'s input over the mean input of the job's maps: how much longer than the
    /// profile's (mean) map it should take, and how much more output it should make.
    fn input_scale(&self, m: super::MapId) -> f64 {
        let maps = &self.core.spec.maps;
        let total: u64 = self.core.progress.input_bytes;
        if total == 0 || maps.is_empty() {
            return 1.0;
        }
        let mean = total as f64 / maps.len() as f64;
        (maps[m.0 as usize].bytes as f64 / mean).max(0.01)
    }

    /// σ of ln(map duration): the configured one, pulled towards the job's own as its maps
    /// finish (with the weight of `SPREAD_PRIOR` maps: a few heavy-tailed draws would
    /// otherwise make the latest of a large wave absurd), at most `MAX_SPREAD`.
    fn map_spread(&self) -> f64 {
        // What the kind's earlier runs measured, else the configured spread.
        let prior = self
            .core
            .spec
            .profile
            .map_spread
            .unwrap_or(self.config.map_spread);
        let (n, sum, squares) = self.map_ratios;
        if n < 3 {
            // The cap holds for the prior too: a profile's spread of 1.95 (FB-2009 job2432,
            // a 2 MB tail split beside 150 MB maps, before the profiler scaled durations by
            // input) put the latest of six maps at 5,613 s where they took 10.
            return prior.min(MAX_SPREAD);
        }
        let n = f64::from(n);
        let own = ((squares - sum * sum / n) / (n - 1.0)).max(0.0);
        let pooled = (n * own + SPREAD_PRIOR * prior * prior) / (n + SPREAD_PRIOR);
        pooled.sqrt().min(MAX_SPREAD)
    }

    /// A running attempt's end, given it has not ended: from its start and `mean` seconds
    /// (the profile's) or, once it reported progress `p`, from its rate, trusted in full
    /// from `TRUSTED_PROGRESS` on and blended with the mean (in log) below it: an early
    /// report, or a noisy one, says little (a reduce at 0.3 % after a second would otherwise
    /// end in minutes). The spread narrows as it goes.
    fn ending(
        x: &super::core::Attempt,
        from: Seconds,
        mean: Seconds,
        sigma: f64,
        t_p: Seconds,
        start: Seconds,
    ) -> Ending {
        let reported = x.reported - start;
        if x.progress > 0.0 && reported > from && mean > 0.0 {
            let by_rate = (reported - from) / x.progress;
            let by_mean = mean.max(t_p - from);
            let w = (x.progress / TRUSTED_PROGRESS).min(1.0);
            let total = (w * by_rate.ln() + (1.0 - w) * by_mean.ln()).exp();
            return Ending {
                from: t_p,
                left: (from + total - t_p).max(0.0),
                sigma: sigma * (1.0 - x.progress),
                after: t_p,
            };
        }
        Ending {
            from,
            left: mean,
            sigma,
            after: t_p,
        }
    }

    /// The running maps' ends and expected outputs (a map with a speculative copy ends with
    /// the copy expected to end first).
    fn running_maps(&self, t_p: Seconds) -> Vec<(Ending, f64)> {
        let sigma = self.map_spread();
        let start = self.core.start;
        let output = self.est.partition * f64::from(self.core.spec.reduces);
        // Ordered by map, so that ties in `from` keep one order and the sums over the
        // endings are the same float for float in every process (a HashMap's order is not).
        let mut by_map: BTreeMap<super::MapId, (Ending, f64)> = BTreeMap::new();
        for x in self.core.live_attempts_now() {
            let TaskRef::Map(m) = x.task else { continue };
            let scale = self.input_scale(m);
            let mean = self.est.map_duration(x.locality) * scale;
            let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
            let mean_end = |e: &Ending| e.from.max(e.after) + e.left;
            by_map
                .entry(m)
                .and_modify(|old| {
                    if mean_end(&e) < mean_end(&old.0) {
                        old.0 = e;
                    }
                })
                .or_insert((e, output * scale));
        }
        let mut v: Vec<(Ending, f64)> = by_map.into_values().collect();
        v.sort_by(|a, b| a.0.from.total_cmp(&b.0.from));
        v
    }

    /// The ends of the reduces not over: each running one from when it had its input and
    /// `f` of what it kept (the fit's median, made a mean), or its progress rate; one still
    /// waiting for its input or a container from now, at the mean kept input of the others.
    fn running_reduces(&self, t_p: Seconds) -> Vec<Ending> {
        let law = self.est.reduce_time;
        let sigma = law.spread;
        let mean_of_median = (sigma * sigma / 2.0).exp();
        let start = self.core.start;
        let mut kept_sum = 0.0;
        let mut kept_n = 0.0;
        let mut waiting = 0;
        let mut out = Vec::new();
        for r in 0..self.core.spec.reduces {
            let r = ReduceId(r);
            if self.core.reduce_over(r) {
                continue;
            }
            let running = self.core.reduce_attempt_live(r);
            match (self.core.reduce_running_since(r), running) {
                (Some((ready, kept)), Some(x)) => {
                    kept_sum += kept as f64;
                    kept_n += 1.0;
                    let mean = law.at(kept as f64) * mean_of_median;
                    out.push(Run::ending(x, ready - start, mean, sigma, t_p, start));
                }
                _ => waiting += 1,
            }
        }
        if waiting > 0 {
            let kept = if kept_n > 0.0 {
                kept_sum / kept_n
            } else {
                self.est.reduce_input(f64::from(self.core.k()), false)
            };
            let mean = law.at(kept) * mean_of_median;
            out.extend((0..waiting).map(|_| Ending {
                from: t_p,
                left: mean,
                sigma,
                after: t_p,
            }));
        }
        out
    }

    fn finished(&mut self, a: AttemptId, output_bytes: u64, now: Seconds, out: &mut Vec<Decision>) {
        let Some(f) = self.core.finished(a, now) else {
            return;
        };
        self.stragglers.retain(|&s| s != a);
        if let TaskRef::Map(m) = f.task {
            let t_p = self.core.elapsed(now);
            // T_q: the shuffle starts with the first map output (eq. 5–7).
            self.est.shuffle_start.get_or_insert(t_p);
            let reduces = self.core.spec.reduces;
            // `input_scaled`: what a map of the mean input would have taken and output.
            let per_mean = self.per_mean_map(m);
            let partition =
                (reduces > 0).then(|| output_bytes as f64 / f64::from(reduces) / per_mean);
            if reduces > 0 {
                self.est.output_produced(t_p, output_bytes as f64);
            }
            // Timed against the profile, a fixed yardstick (the EWMA moves as maps finish).
            let expected = self.core.spec.profile.map_duration(f.locality);
            if self.v.x.node_pace && expected > 0.0 {
                let ratio = f.duration / per_mean / expected;
                let pace = self.node_pace.entry(f.node).or_insert((0.0, 0));
                *pace = (pace.0 + ratio, pace.1 + 1);
                self.all_pace = (self.all_pace.0 + ratio, self.all_pace.1 + 1);
            }
            self.est
                .map_finished(f.locality, f.duration / per_mean, partition); // §5.3
            let expected = expected * self.input_scale(m);
            if f.duration > 0.0 && expected > 0.0 {
                let r = (f.duration / expected).ln();
                let (n, sum, squares) = self.map_ratios;
                self.map_ratios = (n + 1, sum + r, squares + r * r);
            }
            if f.duration > 0.0 {
                if self.recent_rates.len() == RECENT_MAPS {
                    self.recent_rates.pop_front();
                }
                self.recent_rates.push_back(per_mean / f.duration);
            }
            if let Some(rival) = f.rival {
                // A speculative race is decided: the slower copy goes.
                self.stragglers.retain(|&s| s != rival);
                self.core.kill(rival, out);
            }
        }
    }

    /// §5.2.1: a failed map leaves `k`; it restarts only if the estimate with it is still
    /// under the deadline (`k` returns when it is relaunched). Failed reduces always restart.
    fn failed(&mut self, a: AttemptId, now: Seconds) {
        self.stragglers.retain(|&s| s != a);
        let Some(TaskRef::Map(m)) = self.core.failed(a) else {
            return;
        };
        if self.core.map_state(m) != MapState::Dropped {
            return; // a speculative copy still runs
        }
        if self.restart_approved(now) {
            self.core.retry(m);
        }
    }

    fn offer(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) {
        if !self.core.is_free(c) {
            return;
        }
        let at = self.core.location(c).expect("offered containers are held");
        if let Some(m) = self.core.pop_retry(at) {
            self.core.launch_map(m, c, now, false, out);
            self.note_launch(now);
            return;
        }
        if !self.core.map_phase_closed() && self.approach(c, now, out) {
            return;
        }
        // Under the guard no map starts, copies included (a map `lone_map` spared runs alone).
        let guarded = self.core.progress.guarded;
        if !guarded && self.v.revise_maps && self.revise(c, now, out) {
            return;
        }
        if !guarded && self.v.late && self.late(c, now, out) {
            return;
        }
        let next = self.core.next_reduce();
        if let Some(r) = next.filter(|&r| self.restart_waits(r)) {
            if self.core.running() > 0 && self.reduce_avoid.contains(&at.node) {
                self.parked.push(c); // see `judge_reduce`
                return;
            }
            self.reduce_revision[r.0 as usize] = Revision::Restarted;
        }
        if self.core.launch_next_reduce(c, now, out) {
            // The link is busy only once a reduce pulls (eq. 5's busy time).
            self.est.reduce_launched(self.core.elapsed(now));
        } else {
            self.core.release(c, out);
        }
    }

    /// Whether reduce `r` was killed for running past `D` and waits to restart.
    fn restart_waits(&self, r: ReduceId) -> bool {
        self.reduce_revision[r.0 as usize] == Revision::Waiting
    }

    /// Parked containers are offered again once no restart is next in line, or nothing else
    /// runs to free a better one.
    fn unpark(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        if self.parked.is_empty() {
            return;
        }
        let restart_next = self
            .core
            .next_reduce()
            .is_some_and(|r| self.restart_waits(r));
        if restart_next && self.core.running() > 0 {
            return;
        }
        for c in std::mem::take(&mut self.parked) {
            self.offer(c, now, out);
        }
    }

    /// Keeps `T_M^o` (eq. 2) and the shuffle's expected start current after a launch that
    /// did not go through the approach test (restarts, `full`).
    fn note_launch(&mut self, now: Seconds) {
        let t_p = self.core.elapsed(now);
        let at = self
            .core
            .attempts
            .last()
            .map_or(Locality::Remote, |a| a.locality);
        self.est.map_end = self.est.map_phase_end(t_p, self.est.map_duration(at));
        self.est.first_launch.get_or_insert(t_p);
    }

    /// Alg. 1, for one container. Returns whether the container was used or released; `false`
    /// means the map phase is over and the container is free for the revise stage or a reduce.
    fn approach(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) -> bool {
        let at = self.core.location(c).expect("offered containers are held");
        let t_p = self.core.elapsed(now);
        let Some((m, locality)) = self.core.find_map(at) else {
            if self.core.pending_maps() == 0 {
                let e = self.closing_estimate(now);
                self.core.close_map_phase(Some(e), out); // every map is launched
                return false;
            }
            // Only local-only maps are left, none of them local here. Alg. 1's reasoning (a local
            // task that does not fit means none will) applied to the best case: if even a
            // node-local launch now would miss D, no later one can — terminate. Else wait for a
            // node-local container. The paper has no rule here (the digest, §2.1: the phase may
            // never end); `dart-paper` keeps this one, the earliest moment Alg. 1 would end the
            // phase anyway once a node-local container came.
            self.core.release(c, out);
            let k_next = f64::from(self.core.k() + 1);
            let best = self
                .est
                .completion(k_next, t_p, self.est.local, self.v.skew);
            if !self.v.approach || !self.admits(&best, t_p, (1.0, self.est.local)) {
                let e = self.closing_estimate(now);
                self.core.close_map_phase(Some(e), out);
            }
            return true;
        };
        if !self.v.approach {
            self.core.launch_map(m, c, now, false, out);
            self.note_launch(now);
            if self.core.pending_maps() == 0 {
                // Closed at the last launch, not at the next container offered: with a
                // container per task none is offered until one is granted anew.
                let e = self.closing_estimate(now);
                self.core.close_map_phase(Some(e), out);
            }
            return true;
        }
        // Alg. 1 line 3: T_J with the candidate counted (k+1) and its locality on c (eq. 1–9).
        let k_next = f64::from(self.core.k() + 1);
        let e = self
            .est
            .completion(k_next, t_p, self.est.map_duration(locality), self.v.skew);
        let candidate = (self.input_scale(m), self.est.map_duration(locality));
        let fits = self.admits(&e, t_p, candidate);
        let lone = match fits {
            true => None,
            false => self.lone_map_pick(m, at, t_p),
        };
        if fits || lone.is_some() {
            self.core.progress.lone_map |= !fits;
            let (m, e) = match lone {
                Some((m, duration)) => (m, self.est.completion(k_next, t_p, duration, self.v.skew)),
                None => (m, e),
            };
            // Alg. 1 lines 4–5.
            self.core.launch_map(m, c, now, false, out);
            self.est.map_end = e.map; // T_M^o := T_M^n
            self.est.first_launch.get_or_insert(t_p);
            if self.core.pending_maps() == 0 {
                let e = self.closing_estimate(now);
                self.core.close_map_phase(Some(e), out);
            }
        } else if locality == Locality::NodeLocal
            || self.core.spec.maps[m.0 as usize].replicas.is_empty()
        {
            // Alg. 1 lines 6–8: a local task that does not fit means none will: terminate. A
            // map whose input is on no node (a synthetic task) is never local: where it is now
            // is its best case, so the same holds. Marking it local-only would only have every
            // container offered and handed back, one per map, before the phase closes. (The
            // paper's maps all read HDFS blocks; `dart-paper` reads it the same way.)
            self.core.release(c, out);
            let e = self.closing_estimate(now);
            self.core.close_map_phase(Some(e), out);
        } else {
            // Alg. 1 lines 9–11: a remote task may still fit on a node-local container later.
            self.core.release(c, out);
            self.core.mark_local_only(m, out);
        }
        true
    }

    /// Alg. 1's test for the next map, `T_J(k+1) < D` (eq. 10, strictly under `D`: eq. 10 prints
    /// `argmax_k T_J(k)`, the digest reads the intent, the largest `k` under `D`) — except for
    /// the first map when Alg. 5 runs: it need only finish and shuffle by `D`, since Alg. 5
    /// then sizes the reduces to the time left, and an answer from part of one map's output
    /// beats none. Alg. 1 as printed answers every job whose whole estimate exceeds `D` (most
    /// one-map jobs under a tight deadline) with nothing, at once. (A yard extension:
    /// `first_map`.)
    /// Without a deadline every map fits.
    fn fits(&self, e: &Estimate) -> bool {
        let first_map = self.v.x.first_map && self.v.revise_reduces && self.core.k() == 0;
        self.deadline()
            .is_none_or(|d| e.total < d || (first_map && e.map + e.shuffle < d))
    }

    /// Alg. 1's test ([`Self::fits`]), or `wave_fill`'s (yard's): under `time_cut`'s guard a
    /// candidate the test refuses still runs when its map and shuffle end before the cut and
    /// the reduces, over every output by then and cut at `D − answer_cost`, fold at least as
    /// many maps' worth as without it (`Estimator::answered_maps`). The test counts the uncut
    /// `T_J(k+1)`, so at C3's zero slack an unbiased forecast refuses a job's last map half
    /// the time though it runs in the wave already running; the guard's last moment stops it
    /// if it runs long, and the cut takes the reduces' tail.
    ///
    /// Under `last_moment`'s guard a candidate Alg. 1 admits must also be one the guard
    /// would spare were it to judge it now (`guard_spares_launch`): `candidate` is its input
    /// in mean maps and its mean duration here.
    fn admits(&self, next: &Estimate, t_p: Seconds, candidate: (f64, Seconds)) -> bool {
        let (scale, duration) = candidate;
        (self.fits(next) && self.guard_spares_launch(scale, duration, t_p))
            || self.fills_wave(next, t_p)
    }

    fn fills_wave(&self, next: &Estimate, t_p: Seconds) -> bool {
        let x = self.v.x;
        let on = x.wave_fill && x.time_cut && x.cut_tail && self.last_moment_on();
        let (true, Some(by)) = (on, self.cut_at()) else {
            return false;
        };
        if self.core.k() == 0 || next.map + next.shuffle >= by {
            return false;
        }
        let k = f64::from(self.core.k());
        // The phases as they stand, no map added (a launch of no time moves no map end).
        let now = self.est.completion(k, t_p, 0.0, self.v.skew);
        let skew = self.v.skew;
        self.est.answered_maps(k + 1.0, next, by, skew) >= self.est.answered_maps(k, &now, by, skew)
    }

    /// Alg. 3 (and Alg. 4), for one container after the map phase closed. Returns whether the
    /// container took a speculative copy; after a kill it stays free for a reduce.
    fn revise(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) -> bool {
        if self.stragglers.is_empty() {
            return false;
        }
        let t_ma = self.est.all;
        // Without a deadline the window is unbounded: always room for a copy.
        let w = self.window(now);
        if w.is_none_or(|w| w >= t_ma) {
            // Alg. 3 lines 6–8: time for a copy of the straggler with the most time left
            // (findMaxRemainingTime) that may run on c; k unchanged. `≥` is the pseudo-code's
            // (the prose says "larger than"); the digest follows the pseudo-code.
            let at = self.core.location(c);
            let Some((i, m)) = self.longest_remaining(now, at) else {
                return false;
            };
            self.stragglers.remove(i);
            self.core.launch_map(m, c, now, true, out);
            return true;
        }
        if let Some(w) = w {
            self.kill_stragglers(w, now, out);
        }
        false
    }

    /// Eq. (11)'s window `W` now, with the current `k`; `None` (unbounded) without a deadline.
    fn window(&self, now: Seconds) -> Option<Seconds> {
        let t_p = self.core.elapsed(now);
        let (k, skew) = (self.core.k(), self.v.skew);
        self.deadline().map(|d| self.est.window(k, t_p, d, skew))
    }

    /// Alg. 3's kill branches when the window `w` has no room for a copy (`w < T_m^a`).
    fn kill_stragglers(&mut self, w: Seconds, now: Seconds, out: &mut Vec<Decision>) {
        let t_ma = self.est.all;
        // `last_moment`: while no map is done, a straggler may be all the answer will hold;
        // the guard judges it (`spared`) and stops it once even ending now would be too late.
        // Killing it sooner only makes the answer empty sooner.
        // `wave_fill`: a map whose output the cut reduce still folds with more to show is
        // not Alg. 3–4's to kill (`worth_waiting_for`); the guard stops it if that changes.
        let spared = match self.last_moment_on() && self.core.progress.maps_done == 0 {
            true => self.spared(now, false),
            false => self.worth_waiting_for(now),
        };
        let killable = |s: &AttemptId| spared.binary_search(s).is_err();
        if w > 0.0 {
            let Some((i, _)) = self.longest_remaining(now, None) else {
                return;
            };
            let s = self.stragglers[i];
            if !killable(&s) {
                return;
            }
            // Alg. 3 lines 9–11: no time for a copy; the slowest straggler goes (k − 1).
            self.stragglers.remove(i);
            self.core.kill(s, out);
        } else {
            // Alg. 4: T_J is past D; kill every straggler with T_rem > StragglingsThreshold,
            // 0.8·T_m^a as §6.5 has it (§4.2.1's "80th percentile of the average duration" is
            // garbled; the digest reads §6.5).
            let threshold = self.config.straggler_threshold * t_ma;
            let (kill, keep): (Vec<AttemptId>, Vec<AttemptId>) = self
                .stragglers
                .iter()
                .partition(|&&s| killable(&s) && self.remaining(s, now) > threshold);
            self.stragglers = keep;
            for s in kill {
                self.core.kill(s, out);
            }
        }
    }

    /// Alg. 3 runs as containers are offered, since a copy needs one; a kill does not. When
    /// the window has no room for a copy, the kill is made on the tick, not when some other
    /// task happens to free a container: a job whose last map is its straggler (a one-map
    /// job, above all) has no other task to free one. (A yard extension: `kill_on_tick`.)
    fn revise_on_tick(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        if self.stragglers.is_empty() {
            return;
        }
        // Eq. (11); without a deadline the window is unbounded and nothing is killed for time.
        if let Some(w) = self.window(now)
            && w < self.est.all
        {
            self.kill_stragglers(w, now, out);
        }
    }

    /// LATE (Zaharia et al., OSDI 2008): copy the straggler with the longest time left, on a node
    /// not itself running a straggler, while copies stay under SpeculativeCap. Never kills.
    fn late(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) -> bool {
        if self.stragglers.is_empty() {
            return false;
        }
        let cap =
            ((self.config.speculative_cap * f64::from(self.core.held())).floor() as u32).max(1);
        let node = self.core.location(c).map(|l| l.node);
        let slow_node = self
            .stragglers
            .iter()
            .any(|&s| Some(self.core.attempt(s).node) == node);
        if self.core.speculative_running() >= cap || slow_node {
            return false;
        }
        let Some((i, m)) = self.longest_remaining(now, self.core.location(c)) else {
            return false;
        };
        self.stragglers.remove(i);
        self.core.launch_map(m, c, now, true, out);
        true
    }

    /// The straggler with the most time left (ties: the oldest attempt): its index in `S` and
    /// its map. With `on`, only stragglers whose map may run there (local-only maps stay
    /// node-local, copies included).
    fn longest_remaining(
        &self,
        now: Seconds,
        on: Option<super::Location>,
    ) -> Option<(usize, super::MapId)> {
        let mut best: Option<(usize, super::MapId, Seconds)> = None;
        for (i, &s) in self.stragglers.iter().enumerate() {
            let Some(m) = self.core.map_of(s) else {
                continue;
            };
            if on.is_some_and(|at| !self.core.may_run(m, at)) {
                continue;
            }
            let left = self.remaining(s, now);
            if best.is_none_or(|b| left > b.2) {
                best = Some((i, m, left));
            }
        }
        best.map(|(i, m, _)| (i, m))
    }

    /// `T_s^rem` of a map attempt (§5.3 (a)).
    fn remaining(&self, a: AttemptId, now: Seconds) -> Seconds {
        let x = self.core.attempt(a);
        remaining(x.progress, now - x.started)
    }

    /// Reduce revising, on each progress report of reduce attempt `a`: a reduce whose
    /// progress rate says it ends after `D` is killed and queued again, once. Its restart
    /// waits for a container on another node than any a reduce ran late on, while another
    /// attempt runs to free one (containers offered there meanwhile are parked, not released,
    /// so the job does not hand a slow node back only to be granted it again); Alg. 5 samples
    /// its input to the time then left.
    ///
    /// Why: Alg. 5 sizes a reduce at its start for a node of the profile's speed; one that
    /// lands on a node slowed since (§6.5's hogs), or where the job ran no map to measure,
    /// runs several times longer, and the job misses `D` by that much. A reduce is judged once
    /// it ran `straggler_min_age` of what the profile expects for its input, as maps are,
    /// on its rate as of the report. (A yard extension, `reduce_restart`; the paper's reduce
    /// revising is Alg. 5 alone.)
    fn judge_reduce(&mut self, a: AttemptId, out: &mut Vec<Decision>) {
        let Some(r) = self.core.reduce_of(a) else {
            return;
        };
        let Some((ready, kept)) = self.core.reduce_running_since(r) else {
            return;
        };
        let x = self.core.attempt(a);
        if !x.live || self.reduce_revision[r.0 as usize] != Revision::None {
            return;
        }
        // No progress yet says nothing of its rate (a report may predate its input).
        let age = x.reported - ready;
        let expected = self.core.spec.profile.reduce_time.at(kept as f64);
        if age <= 0.0 || x.progress <= 0.0 || age < self.config.straggler_min_age * expected {
            return;
        }
        // Without a deadline no reduce runs late.
        if let Some(d) = self.deadline()
            && x.reported + remaining(x.progress, age) > self.core.start + d
        {
            let node = x.node;
            self.reduce_revision[r.0 as usize] = Revision::Waiting;
            if !self.reduce_avoid.contains(&node) {
                self.reduce_avoid.push(node);
            }
            self.core.kill(a, out);
        }
    }

    /// Eq. (12) on the node the reduce runs on: `d_max = f⁻¹((D − T_p) / pace)`, where `pace`
    /// is how much slower this job's maps ran on that node than on the other nodes (each map
    /// timed against the profile's `T_l^a` or `T_r^a`, by its locality). It is never below 1
    /// — a fast node does not stretch the profile — and 1 where no map of the job ran, or
    /// none ran elsewhere. Alg. 5 as printed assumes every node runs at the profile's speed,
    /// so a reduce that lands on a loaded node (§6.5's stragglers) gets an input it cannot
    /// finish by `D`; the maps have already measured the node, so yard uses what they
    /// measured. (A yard extension, not in the paper: `node_pace`. Without it no map is timed,
    /// so `pace` is 1: eq. 12 as printed.)
    /// `None` without a deadline: no cap.
    fn reduce_input_cap(&self, reduce: ReduceId, t_p: Seconds) -> Option<f64> {
        let d = self.deadline()?;
        let (all, n_all) = self.all_pace;
        let pace = self
            .core
            .reduce_node(reduce)
            .and_then(|n| self.node_pace.get(&n))
            .filter(|&&(_, n)| n < n_all)
            .map_or(1.0, |&(sum, n)| {
                let elsewhere = (all - sum) / f64::from(n_all - n);
                (sum / f64::from(n) / elsewhere).max(1.0)
            });
        Some(self.est.max_reduce_input(t_p, d, pace))
    }

    /// Alg. 3 copies a straggler on the premise that the copy runs at the job's average speed.
    /// When neither copy can now end within the window `W` (eq. 11) — the straggling was in the
    /// task, not its node, or the copy landed on a slow node too — the map can no longer reach
    /// the answer in time: both attempts go and `k` falls by one, as Alg. 3 would have done had
    /// it known. Past `D` (`W ≤ 0`), Alg. 4's threshold spares races about to end. Runs on each
    /// tick, since a race needs no container to be judged. (A yard extension, not in the paper:
    /// `end_lost_races`.)
    fn end_lost_races(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        let races = self.core.speculative_races();
        if races.is_empty() {
            return;
        }
        // Without a deadline the window is unbounded: every race can still be won.
        let Some(w) = self.window(now) else {
            return;
        };
        let bar = if w > 0.0 {
            w
        } else {
            self.config.straggler_threshold * self.est.all
        };
        for pair in races {
            let left = pair
                .iter()
                .flatten()
                .map(|&a| {
                    // A copy that has not reported yet is taken at Alg. 3's own premise.
                    let x = self.core.attempt(a);
                    match self.remaining(a, now) {
                        r if r.is_finite() => r,
                        _ => (x.started + self.est.map_duration(x.locality) - now).max(0.0),
                    }
                })
                .fold(f64::INFINITY, f64::min);
            if left > bar {
                for &a in pair.iter().flatten() {
                    self.core.kill(a, out);
                }
            }
        }
    }

    /// `S`: lone map attempts whose progress rate is below `straggler_rate` × the median rate of
    /// the phase (LATE's rule, §2.3; Dart gives no detector of its own), judged once they ran
    /// `straggler_min_age` × `T_m^a`. The median is over the running attempts *and* the last
    /// [`RECENT_MAPS`] finished maps: running ones alone leave a lone last straggler as its own
    /// median, finished ones alone (or the EWMA `T_m^a`) are biased fast early in a wave, when
    /// only the quickest maps have finished.
    fn detect_stragglers(&mut self, now: Seconds) {
        self.stragglers.clear();
        if !(self.v.revise_maps || self.v.late) || self.core.maps_running() == 0 {
            return;
        }
        let min_age = self.config.straggler_min_age * self.est.all;
        let running: Vec<(AttemptId, f64)> = self
            .core
            .lone_map_attempts()
            .into_iter()
            .filter_map(|a| {
                let x = self.core.attempt(a);
                let age = now - x.started;
                // In mean maps a second under `input_scaled`: a full block beside a
                // finished tail split is no straggler.
                let per_mean = match x.task {
                    TaskRef::Map(m) => self.per_mean_map(m),
                    TaskRef::Reduce(_) => 1.0,
                };
                (age > 0.0).then(|| (a, x.progress * per_mean / age))
            })
            .collect();
        let mut rates: Vec<f64> = running
            .iter()
            .map(|r| r.1)
            .chain(self.recent_rates.iter().copied())
            .collect();
        if rates.is_empty() {
            return;
        }
        let mid = rates.len() / 2;
        let median = *rates.select_nth_unstable_by(mid, f64::total_cmp).1;
        let bar = self.config.straggler_rate * median;
        // Revising, a map whose rate says it ends after D is one too: the revise stage is to
        // "make sure that the real job completion time is less than the deadline" (§4), and
        // a map at 1.5× the median, the longest draw of a wave, is no LATE straggler but
        // still ends the job late. (A yard extension: `deadline_stragglers`.)
        let due =
            self.v.x.deadline_stragglers && self.v.revise_maps && self.core.map_phase_closed();
        // Without a deadline no map ends late.
        let deadline = self.deadline().map(|d| self.core.start + d);
        self.stragglers = running
            .into_iter()
            .filter(|&(a, rate)| {
                let x = self.core.attempt(a);
                let age = now - x.started;
                let late = due && deadline.is_some_and(|d| now + remaining(x.progress, age) > d);
                age >= min_age && (rate < bar || late)
            })
            .map(|(a, _)| a)
            .collect();
    }
}

/// Whether `last_moment` (yard's) runs for variant `v` under `config`: under a guard, with
/// Alg. 5 (which sizes the reduces to the time the guard leaves them). `Run::last_moment_on`
/// also wants a deadline; this is the configuration's half, which sizes the estimator at the
/// start (a deadline may come later).
fn last_moment_on(v: Variant, config: &PolicyConfig) -> bool {
    v.x.last_moment && config.guarded && v.revise_reduces && v.approach
}

/// Time left from the progress rate: (1 − progress) / (progress / running time); infinite
/// before any progress.
fn remaining(progress: f64, age: Seconds) -> Seconds {
    if progress <= 0.0 || age <= 0.0 {
        return f64::INFINITY;
    }
    (1.0 - progress) * age / progress
}

/// The paper's worked state (digest D1: `k = 5, p = 1, R = 3, T_p = 3, T_q = 1, V_p = 6,
/// T_M^o = 5, T_m^a = 2.5, a = 0.5, b = 1`), set up directly so Alg. 1, 3 and 4 can be checked
/// at their boundaries.
#[cfg(test)]
mod tests;
