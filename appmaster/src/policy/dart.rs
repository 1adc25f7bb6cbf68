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
//! - `last_moment` (yard's deadline guard, beyond the paper): under a guard the maps stop at the last responsible moment, when the time left falls to what answering from the maps done takes (their output still on the link at eq. 5's bandwidth, the reduces over it at Alg. 5's confidence with the profile's measured spread, eq. 8–9 and 13, and `PolicyConfig::answer_cost`), not at a fixed margin; the fixed guard (`--guard-seconds`) is a floor that stops only what will no longer end in time; while no map is done no map is stopped, by the guard or by Alg. 3–4's kills, until even ending now would leave its output too late (a rate from noisy reports may call late a map that ends in time, and stopping it only makes the answer empty sooner); the last running reduces are cut `answer_cost` before `D`, not abandoned at it.
//! - `cut_tail` (§4.2.2 eq. 12, yard's deadline guard): under `last_moment`'s guard Alg. 5 sizes the reduces to the median reduce (`e = 1`, as the paper does) instead of `reduce_confidence`'s quantile of the wave's largest draw: the guard's cut at `D − answer_cost` takes the tail, and a reduce cut by time keeps the share of its input it had time for, where one sampled for a bound it seldom needs keeps less every time.
//! - `time_cut` (§4.2.2 Alg. 5, yard's deadline guard): under `cut_tail`'s guard Alg. 5 samples no reduce's input ahead: each keeps all of it, and the guard's cut at `D − answer_cost` keeps what the reduce folded by then. A sample sized from the profile's law keeps less whenever the reduce runs faster than the law says, and the law is fitted on a few sample reduces (FB-2009 two-plus jobs, seeds 1–3: bytes vs the byte oracle C1/C2/C3 91.7/95.6/89.5 % → 92.2/96.4/90.5 %; FB-2010's first 4,000 jobs, held out: 90.7/95.6/88.7 → 91.7/96.6/90.1 %; missed and empty unchanged).
//! - `wave_fill` (§4.1 Alg. 1, yard's deadline guard; off, `--dart-with` tries it): under `time_cut`'s guard a map Alg. 1 refuses still runs when its map and shuffle end before the cut and the reduces, cut at `D − answer_cost`, would fold at least as many maps' worth of output with it as without.
//! - `busy_bandwidth` (§3.2 eq. 5): the shuffle's bandwidth is `V_p` over the time the link had bytes to move, not over `T_p − T_q`.
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
use super::estimate::normal_cdf;
use super::running::{Ending, expected_latest, fifo_leftover};
use super::{
    AttemptId, ContainerId, Decision, Estimate, Estimator, Event, JobSpec, Locality, NodeId,
    PolicyConfig, PolicyKind, Progress, ReduceId, Rng, Seconds, TaskPolicy, TaskRef,
};

/// yard's extensions of the paper's Dart, one switch each (the module docs say what each does
/// and which part of the paper it departs from). `dart` runs [`Extensions::YARD`], `dart-paper`
/// and its ablations [`Extensions::NONE`]; [`Dart::with_extensions`] runs any other mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extensions {
    pub reduce_waves: bool,
    pub reduce_confidence: bool,
    pub forecast_cut: bool,
    pub sample_floor: bool,
    pub node_pace: bool,
    pub reduce_restart: bool,
    pub deadline_stragglers: bool,
    pub end_lost_races: bool,
    pub kill_on_tick: bool,
    pub first_map: bool,
    pub lone_map: bool,
    pub last_moment: bool,
    pub busy_bandwidth: bool,
    pub wave_end: bool,
    pub fifo_shuffle: bool,
    pub elapsed_phases: bool,
    pub cut_tail: bool,
    pub time_cut: bool,
    pub wave_fill: bool,
    pub reforecast_after_kill: bool,
    pub input_scaled: bool,
}

impl Extensions {
    /// Every switch's name, as the fields spell them.
    pub const NAMES: [&'static str; 21] = [
        "reduce_waves",
        "reduce_confidence",
        "forecast_cut",
        "sample_floor",
        "node_pace",
        "reduce_restart",
        "deadline_stragglers",
        "end_lost_races",
        "kill_on_tick",
        "first_map",
        "lone_map",
        "last_moment",
        "busy_bandwidth",
        "wave_end",
        "fifo_shuffle",
        "elapsed_phases",
        "cut_tail",
        "time_cut",
        "wave_fill",
        "reforecast_after_kill",
        "input_scaled",
    ];

    /// These extensions with the one named `name` off (an ablation: what that one does).
    pub fn without(self, name: &str) -> Result<Extensions, String> {
        self.set(name, false)
    }

    /// These extensions with the one named `name` on (one that is off by default, tried).
    pub fn with(self, name: &str) -> Result<Extensions, String> {
        self.set(name, true)
    }

    fn set(mut self, name: &str, on: bool) -> Result<Extensions, String> {
        let x = &mut self;
        let switch = match name {
            "reduce_waves" => &mut x.reduce_waves,
            "reduce_confidence" => &mut x.reduce_confidence,
            "forecast_cut" => &mut x.forecast_cut,
            "sample_floor" => &mut x.sample_floor,
            "node_pace" => &mut x.node_pace,
            "reduce_restart" => &mut x.reduce_restart,
            "deadline_stragglers" => &mut x.deadline_stragglers,
            "end_lost_races" => &mut x.end_lost_races,
            "kill_on_tick" => &mut x.kill_on_tick,
            "first_map" => &mut x.first_map,
            "lone_map" => &mut x.lone_map,
            "last_moment" => &mut x.last_moment,
            "busy_bandwidth" => &mut x.busy_bandwidth,
            "wave_end" => &mut x.wave_end,
            "fifo_shuffle" => &mut x.fifo_shuffle,
            "elapsed_phases" => &mut x.elapsed_phases,
            "cut_tail" => &mut x.cut_tail,
            "time_cut" => &mut x.time_cut,
            "wave_fill" => &mut x.wave_fill,
            "reforecast_after_kill" => &mut x.reforecast_after_kill,
            "input_scaled" => &mut x.input_scaled,
            _ => {
                return Err(format!(
                    "unknown extension {name:?}; expected one of {}",
                    Self::NAMES.join(", ")
                ));
            }
        };
        *switch = on;
        Ok(self)
    }

    /// The switches that are off.
    pub fn off(self) -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| self.without(n) == Ok(self))
            .collect()
    }

    /// The switches that are on.
    pub fn on(self) -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| self.with(n) == Ok(self))
            .collect()
    }

    /// How these differ from `base`: the switches off here that are on there, and those on
    /// here that are off there.
    pub fn against(self, base: Extensions) -> (Vec<&'static str>, Vec<&'static str>) {
        let (off, on) = (self.off(), self.on());
        (
            off.into_iter().filter(|n| base.on().contains(n)).collect(),
            on.into_iter().filter(|n| base.off().contains(n)).collect(),
        )
    }

    /// Every extension: yard's `dart`.
    pub const YARD: Extensions = Extensions {
        reduce_waves: true,
        reduce_confidence: true,
        forecast_cut: true,
        sample_floor: true,
        node_pace: true,
        reduce_restart: true,
        deadline_stragglers: true,
        end_lost_races: true,
        kill_on_tick: true,
        first_map: true,
        lone_map: true,
        last_moment: true,
        busy_bandwidth: true,
        wave_end: true,
        fifo_shuffle: true,
        elapsed_phases: true,
        cut_tail: true,
        time_cut: true,
        wave_fill: false,
        reforecast_after_kill: true,
        input_scaled: true,
    };

    /// `dart` on the live master: every extension, as `YARD`. `cut_tail`'s premises, that a
    /// reduce cut by time answers from what it folded in and that the reduces run in the
    /// waves the policy plans, hold live since built-in reduces stop fetching and folding
    /// when cut (`AppSpec::reduce_until`) and the master tells the policy its cluster's task
    /// slots as the allotment. Before both, `yard demo --size 2560MiB --nodes 1 --vcores 2`
    /// on a quiet machine read 49 % of what `full` had read by `D` with it and 98 % without
    /// it, so it was off live. After both (one run each per setting, load 7–13, docs/results.md *The
    /// demo at scale*): at 5 GiB on one slot 66 % of `full`'s read with it, 67 % without;
    /// in the default demo 75–95 % with it (2 runs), 33–70 % without (3 runs); every
    /// deadline met.
    pub const LIVE: Extensions = Extensions {
        cut_tail: true,
        ..Extensions::YARD
    };

    /// None: the paper's algorithm (`dart-paper`).
    pub const NONE: Extensions = Extensions {
        reduce_waves: false,
        reduce_confidence: false,
        forecast_cut: false,
        sample_floor: false,
        node_pace: false,
        reduce_restart: false,
        deadline_stragglers: false,
        end_lost_races: false,
        kill_on_tick: false,
        first_map: false,
        lone_map: false,
        last_moment: false,
        busy_bandwidth: false,
        wave_end: false,
        fifo_shuffle: false,
        elapsed_phases: false,
        cut_tail: false,
        time_cut: false,
        wave_fill: false,
        reforecast_after_kill: false,
        input_scaled: false,
    };
}

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

    fn handle(&mut self, now: Seconds, event: Event, _rng: &mut Rng, out: &mut Vec<Decision>) {
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
        if !self.last_moment_on() {
            return;
        }
        let t_p = self.core.elapsed(now);
        if !self.reduces_cut && t_p >= self.cut_at() - WAKE_SLACK {
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
                if self.v.revise_reduces && !cut_keeps {
                    // Alg. 5: cap the input at d_max = f⁻¹(D − T_p) (eq. 12) by uniform sampling
                    // (with `node_pace`, on the reduce's node's observed pace).
                    let d_max = self.reduce_input_cap(reduce, t_p);
                    if bytes as f64 > d_max {
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

    fn deadline(&self) -> Seconds {
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
        if self.v.revise_reduces && self.v.x.forecast_cut {
            let room = self.deadline() - e.map - e.shuffle;
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
        if self.v.x.forecast_cut && self.last_moment_on() {
            // The guard answers by `D` whatever runs then: it stops the maps and cuts the
            // reduces (the parts stay the uncut phases).
            e.total = e.total.min(self.deadline());
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
        if !self.core.launch_next_reduce(c, now, out) {
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
            if !self.v.approach || !self.admits(&best, t_p) {
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
        let fits = self.admits(&e, t_p);
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
    fn fits(&self, e: &Estimate) -> bool {
        let first_map = self.v.x.first_map && self.v.revise_reduces && self.core.k() == 0;
        e.total < self.deadline() || (first_map && e.map + e.shuffle < self.deadline())
    }

    /// Alg. 1's test ([`Self::fits`]), or `wave_fill`'s (yard's): under `time_cut`'s guard a
    /// candidate the test refuses still runs when its map and shuffle end before the cut and
    /// the reduces, over every output by then and cut at `D − answer_cost`, fold at least as
    /// many maps' worth as without it (`Estimator::answered_maps`). The test counts the uncut
    /// `T_J(k+1)`, so at C3's zero slack an unbiased forecast refuses a job's last map half
    /// the time though it runs in the wave already running; the guard's last moment stops it
    /// if it runs long, and the cut takes the reduces' tail.
    fn admits(&self, next: &Estimate, t_p: Seconds) -> bool {
        self.fits(next) || self.fills_wave(next, t_p)
    }

    fn fills_wave(&self, next: &Estimate, t_p: Seconds) -> bool {
        let by = self.cut_at();
        let x = self.v.x;
        if !(x.wave_fill && x.time_cut && x.cut_tail && self.last_moment_on())
            || self.core.k() == 0
            || next.map + next.shuffle >= by
        {
            return false;
        }
        let k = f64::from(self.core.k());
        // The phases as they stand, no map added (a launch of no time moves no map end).
        let now = self.est.completion(k, t_p, 0.0, self.v.skew);
        let skew = self.v.skew;
        self.est.answered_maps(k + 1.0, next, by, skew) >= self.est.answered_maps(k, &now, by, skew)
    }

    /// Whether `lone_map` (yard's) runs: it needs Alg. 5, which cuts the reduces to the time
    /// the map leaves.
    fn lone_map_on(&self) -> bool {
        self.v.x.lone_map && self.config.guarded && self.v.revise_reduces && self.v.approach
    }

    /// Whether `last_moment` (yard's) runs: under a guard, with Alg. 5 (which sizes the
    /// reduces to the time the guard leaves them).
    fn last_moment_on(&self) -> bool {
        last_moment_on(self.v, &self.config)
    }

    /// `last_moment`: when (from the job's start) the last running reduces are cut, so that
    /// their partial answers arrive by `D`.
    fn cut_at(&self) -> Seconds {
        self.deadline() - self.config.answer_cost.max(0.0)
    }

    /// `last_moment`: when (from the job's start) the guard stops the maps: once the time left
    /// falls to what answering from the maps done takes — their output still on the link
    /// (eq. 5's bandwidth), the reduces over it at Alg. 5's confidence (eq. 8–9, 13;
    /// `Estimator::reduce_bounded`), and the cut's answer. `None` while no map is done
    /// (stopping then would answer from nothing: the maps run while they could end in time)
    /// or once no map runs or will be launched.
    fn stop_maps_at(&self, t_p: Seconds) -> Option<Seconds> {
        let done = self.core.progress.maps_done;
        let over = self.core.map_phase_closed() && self.core.maps_running() == 0;
        if done == 0 || over {
            return None;
        }
        let answer = self.shuffle_left(t_p) + self.est.reduce_bounded(f64::from(done), self.v.skew);
        Some(self.cut_at() - answer)
    }

    /// The output still to cross the link, at eq. 5's bandwidth.
    fn shuffle_left(&self, t_p: Seconds) -> Seconds {
        let bandwidth = self.est.bandwidth(t_p);
        match bandwidth > 0.0 {
            true => self.est.backlog.max(0.0) / bandwidth,
            false => 0.0,
        }
    }

    /// `last_moment`: asks to be woken at the next moment of its own — the guard's
    /// (`stop_maps_at`) until it fired, then the last reduces' cut. A moment that moved later
    /// is not asked again: the earlier wake finds it not come yet and asks anew.
    fn ask_wake(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        let t_p = self.core.elapsed(now);
        let stop = match self.core.progress.guarded {
            false => self.stop_maps_at(t_p),
            true => None,
        };
        let at = match (stop, self.reduces_cut) {
            (Some(stop), _) => stop.min(self.cut_at()),
            (None, false) => self.cut_at(),
            (None, true) => return,
        };
        let at = self.core.start + at.max(t_p);
        if self.wake.is_none_or(|asked| at < asked - WAKE_SLACK) {
            self.wake = Some(at);
            out.push(Decision::WakeAt(at));
        }
    }

    /// `last_moment`: the attempts the guard leaves running. While no map is done, every map
    /// whose output could still be answered were it to end now: stopping one sooner gains
    /// nothing. Once
    /// some are done, a map whose expected end (`running.rs`, given it has not ended), its
    /// output's shuffle and the reduces over every output by then (`reduce_bounded`) fit
    /// before the cut. And every running reduce expected to end before the cut, or still
    /// waiting for its input (it is cut at the cut if it has not ended). In attempt order.
    fn last_moment_spares(&self, now: Seconds) -> Vec<AttemptId> {
        self.spared(now, true)
    }

    /// `last_moment_spares`, of the maps only unless `with_reduces`.
    fn spared(&self, now: Seconds, with_reduces: bool) -> Vec<AttemptId> {
        let t_p = self.core.elapsed(now);
        let by = self.cut_at();
        let done = self.core.progress.maps_done;
        let start = self.core.start;
        let sigma = self.map_spread();
        let bandwidth = self.est.bandwidth(t_p);
        let with_running = f64::from(done + self.core.maps_running());
        let answer = self.est.reduce_bounded(with_running, self.v.skew);
        let least = self.least_reduce();
        let law = self.est.reduce_time;
        let mean_of_median = (law.spread * law.spread / 2.0).exp();
        let folds_more = self.worth_waiting_for(now);
        let mut spare: Vec<AttemptId> = self
            .core
            .live_attempt_ids()
            .filter(|(id, x)| match x.task {
                TaskRef::Map(m) => {
                    let scale = self.input_scale(m);
                    let shuffle = self.output_shuffle(scale, bandwidth);
                    let mean = self.est.map_duration(x.locality) * scale;
                    let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                    if done == 0 {
                        // While none is done, a map is stopped only once even ending now
                        // would be too late: its rate, from noisy reports at a varying speed,
                        // may call late a map that ends in time (the harsh model's C3 one-map
                        // jobs, at zero slack, answered empty for 10 % of them), and stopping
                        // it sooner only makes the answer empty sooner.
                        t_p + shuffle + least <= by
                    } else {
                        e.expected_end() + shuffle + answer <= by
                            || folds_more.binary_search(id).is_ok()
                    }
                }
                TaskRef::Reduce(_) if !with_reduces => false,
                TaskRef::Reduce(r) => {
                    let Some((ready, kept)) = self.core.reduce_running_since(r) else {
                        // Waiting for its input: cut now it would answer from none of it; it
                        // gets the outputs done, Alg. 5 sizes it to the time left, and the
                        // last cut stops it if it runs late.
                        return true;
                    };
                    let mean = law.at(kept as f64) * mean_of_median;
                    let e = Run::ending(x, ready - start, mean, law.spread, t_p, start);
                    e.expected_end() <= by
                }
            })
            .map(|(id, _)| id)
            .collect();
        spare.sort_unstable();
        spare
    }

    /// `wave_fill`'s keeping rule (under `time_cut`'s guard; empty otherwise): the running maps
    /// worth waiting for by the cut's rule — the ones expected to end first, as many as make
    /// the reduces, cut at `D − answer_cost`, fold the most maps' worth (each map's expected
    /// end, with its output's shuffle, ends the map phase if it is the last kept; its output
    /// adds to the reduces' input; `Estimator::answered_maps`). The rule Alg. 1's
    /// `fills_wave` admits a map by: Alg. 3–4's kills and the guard's spares judge the maps it
    /// admitted by it too, not by whether the whole reduce still fits. In attempt order.
    fn worth_waiting_for(&self, now: Seconds) -> Vec<AttemptId> {
        let x = self.v.x;
        if !(x.wave_fill && x.time_cut && x.cut_tail && self.last_moment_on()) {
            return Vec::new();
        }
        let t_p = self.core.elapsed(now);
        let (start, sigma) = (self.core.start, self.map_spread());
        let bandwidth = self.est.bandwidth(t_p);
        let ends: Vec<(AttemptId, Seconds)> = self
            .core
            .live_attempt_ids()
            .filter_map(|(id, x)| match x.task {
                TaskRef::Map(m) => {
                    let scale = self.input_scale(m);
                    let mean = self.est.map_duration(x.locality) * scale;
                    let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                    Some((id, e.expected_end() + self.output_shuffle(scale, bandwidth)))
                }
                TaskRef::Reduce(_) => None,
            })
            .collect();
        let (by, skew) = (self.cut_at(), self.v.skew);
        let done = f64::from(self.core.progress.maps_done);
        // Judged as a group, in the order they are expected to end: waiting for the first j
        // ends the map phase at the j-th end; the j that folds the most is kept (the most
        // maps among equals), the rest are not worth waiting for. Judged one at a time, every
        // map but the latest looked worth keeping and the guard never stopped a wave of
        // thousands (FB-2010's job403 answered empty at D).
        let mut ends = ends;
        ends.sort_by(|a, b| a.1.total_cmp(&b.1));
        let folded = |maps: f64, end: Seconds| {
            let phases = Estimate {
                map: end,
                shuffle: 0.0,
                reduce: 0.0,
                total: end,
            };
            self.est.answered_maps(maps, &phases, by, skew)
        };
        let mut best = (folded(done, t_p), 0);
        for (j, &(_, end)) in ends.iter().enumerate() {
            let value = folded(done + (j + 1) as f64, end.max(t_p));
            if value >= best.0 {
                best = (value, j + 1);
            }
        }
        let mut keep: Vec<AttemptId> = ends[..best.1].iter().map(|(a, _)| *a).collect();
        keep.sort_unstable();
        keep
    }

    /// `lone_map`, in Alg. 1: with no map in `k`, when the estimate says not even one map
    /// fits, the candidate is launched if, at the shortest map the profile has seen (scaled
    /// by its input and locality as `T_l^a` is) or the shortest its law gives a 0.13 % chance
    /// (whichever is shorter), it could end with its shuffle and the least
    /// reduce Alg. 5 would leave (`min_reduce_sample` of one map's reduce input, at the fit's
    /// median) by `D`. An empty answer is right only when nothing could have been read; a
    /// map that then runs long is the guard's (and `kill_on_tick`'s) to stop. Alg. 1 as
    /// printed tests the mean map (`dart-paper`).
    fn lone_map_fits(&self, m: super::MapId, locality: Locality, t_p: Seconds) -> bool {
        if !self.lone_map_on() || self.core.k() > 0 {
            return false;
        }
        let scale = self.input_scale(m);
        // The map's law (its profile duration, spread by `map_spread`) gives this short a map
        // a 0.13 % chance (`LONE_MAP_Z` σ below the median of a mean-one log-normal).
        let sigma = self.map_spread();
        let low = (-sigma * sigma / 2.0 - LONE_MAP_Z * sigma).exp();
        let by_law = self.est.map_duration(locality) * scale * low;
        let profile = &self.core.spec.profile;
        let remote = profile.map_remote / profile.map_local;
        let away = match locality {
            Locality::NodeLocal => 1.0,
            _ if remote.is_finite() && remote > 0.0 => remote,
            _ => 1.0,
        };
        let seen = profile
            .map_shortest
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(f64::INFINITY, |s| s * away * scale);
        let duration = by_law.min(seen);
        let e = self.est.completion(1.0, t_p, duration, self.v.skew);
        e.map + e.shuffle + self.least_reduce() < self.deadline()
    }

    /// `lone_map`'s candidate on a container at `at`: the pending map whose input times its
    /// chance to end in time is the largest — the expected input a lone map brings to the
    /// answer — if its best case fits (`lone_map_fits`). The chance is its law's (its
    /// profile duration there, by input and locality, spread by `map_spread`) of ending
    /// with its shuffle and the least reduce by `D`. A lone map is all the answer will hold:
    /// the map the locality queue offers (`m`, kept on ties) may be the job's longest, or
    /// one with no input. Runs once per job at most: after it, `k` is 1.
    fn lone_map_pick(
        &self,
        m: super::MapId,
        at: super::Location,
        t_p: Seconds,
    ) -> Option<(super::MapId, Seconds)> {
        if !self.lone_map_on() || self.core.k() > 0 {
            return None;
        }
        let sigma = self.map_spread().max(1e-6);
        let bandwidth = self.est.bandwidth(t_p);
        let budget = self.deadline() - t_p - self.least_reduce();
        let value = |m: super::MapId| {
            let locality = self.core.locality(m, at);
            let scale = self.input_scale(m);
            let mean = self.est.map_duration(locality) * scale;
            let left = budget - self.output_shuffle(scale, bandwidth);
            let chance = match left > 0.0 && mean > 0.0 {
                // ln(duration) ~ N(ln mean − σ²/2, σ²): a mean-one log-normal's.
                true => normal_cdf(((left / mean).ln() + sigma * sigma / 2.0) / sigma),
                false => 0.0,
            };
            let bytes = self.core.spec.maps[m.0 as usize].bytes as f64;
            (bytes * chance, mean, locality)
        };
        let (mut best, (mut best_value, mut mean, mut locality)) = (m, value(m));
        for i in 0..self.core.spec.maps.len() {
            let other = super::MapId(i as u32);
            if other == m || self.core.map_state(other) != MapState::Pending {
                continue;
            }
            let (v, other_mean, other_locality) = value(other);
            if v > best_value {
                (best, best_value, mean, locality) = (other, v, other_mean, other_locality);
            }
        }
        self.lone_map_fits(best, locality, t_p)
            .then_some((best, mean))
    }

    /// The time one map's output takes on the link at `bandwidth`, the map's input being
    /// `scale` times the mean map's (eq. 4 for one map).
    fn output_shuffle(&self, scale: f64, bandwidth: f64) -> Seconds {
        let output = self.est.partition * f64::from(self.core.spec.reduces) * scale;
        match output > 0.0 && bandwidth > 0.0 {
            true => output / bandwidth,
            false => 0.0,
        }
    }

    /// The least reduce Alg. 5 leaves one map's output: `min_reduce_sample` of its largest
    /// reduce input, at the fit's median (eq. 9 at `e = 1`).
    fn least_reduce(&self) -> Seconds {
        if self.core.spec.reduces == 0 {
            return 0.0;
        }
        let d = self.est.reduce_input(1.0, self.v.skew);
        self.est.reduce_time.at(self.config.min_reduce_sample * d)
    }

    /// The live map attempts that will (`in_time`) or will not end in time: each one's
    /// expected end (from its progress rate, or one profile duration from its start; the
    /// forecast's `ending`), then its output's shuffle at the measured bandwidth and the least
    /// reduce Alg. 5 would leave, by `D` (within `LONE_MAP_SLACK`: the guard's deadline event
    /// ends anything later). In attempt order.
    fn maps_in_time(&self, now: Seconds, in_time: bool) -> Vec<AttemptId> {
        let t_p = self.core.elapsed(now);
        let start = self.core.start;
        let sigma = self.map_spread();
        let reduces = f64::from(self.core.spec.reduces);
        let bandwidth = self.est.bandwidth(t_p);
        let reduce = self.least_reduce();
        let mut maps: Vec<AttemptId> = self
            .core
            .live_attempt_ids()
            .filter_map(|(id, x)| {
                let TaskRef::Map(m) = x.task else {
                    return None;
                };
                let scale = self.input_scale(m);
                let mean = self.est.map_duration(x.locality) * scale;
                let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                let end = e.from.max(e.after) + e.left;
                let output = self.est.partition * reduces * scale;
                let shuffle = if output > 0.0 && bandwidth > 0.0 {
                    output / bandwidth
                } else {
                    0.0
                };
                let fits = end + shuffle + reduce <= self.deadline() + LONE_MAP_SLACK;
                (fits == in_time).then_some(id)
            })
            .collect();
        maps.sort_unstable();
        maps
    }

    /// Alg. 3 (and Alg. 4), for one container after the map phase closed. Returns whether the
    /// container took a speculative copy; after a kill it stays free for a reduce.
    fn revise(&mut self, c: ContainerId, now: Seconds, out: &mut Vec<Decision>) -> bool {
        if self.stragglers.is_empty() {
            return false;
        }
        let t_p = self.core.elapsed(now);
        let w = self
            .est
            .window(self.core.k(), t_p, self.deadline(), self.v.skew); // eq. (11)
        let t_ma = self.est.all;
        if w >= t_ma {
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
        self.kill_stragglers(w, now, out);
        false
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
        let t_p = self.core.elapsed(now);
        let w = self
            .est
            .window(self.core.k(), t_p, self.deadline(), self.v.skew); // eq. (11)
        if w < self.est.all {
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
        if x.reported + remaining(x.progress, age) > self.core.start + self.deadline() {
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
    fn reduce_input_cap(&self, reduce: ReduceId, t_p: Seconds) -> f64 {
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
        self.est.max_reduce_input(t_p, self.deadline(), pace)
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
        let t_p = self.core.elapsed(now);
        let w = self
            .est
            .window(self.core.k(), t_p, self.deadline(), self.v.skew);
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
        let deadline = self.core.start + self.deadline();
        self.stragglers = running
            .into_iter()
            .filter(|&(a, rate)| {
                let x = self.core.attempt(a);
                let age = now - x.started;
                let late = due && now + remaining(x.progress, age) > deadline;
                age >= min_age && (rate < bar || late)
            })
            .map(|(a, _)| a)
            .collect();
    }
}

/// Whether `last_moment` (yard's) runs for variant `v` under `config`: under a guard, with
/// Alg. 5 (which sizes the reduces to the time the guard leaves them).
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
mod tests {
    use super::*;
    use crate::policy::{
        Container, JobSpec, Location, MapId, MapSpec, NodeId, Profile, RackId, testing,
    };

    const NOW: Seconds = 3.0;

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
            deadline,
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

    /// D1 with what only yard's extensions read: reduce times that spread (σ 0.3), two slots
    /// for the three reduces, and a link that moved its 6 bytes in 1 busy second of the 2
    /// since `T_q` (so eq. 5 over the busy time reads 6 B/s, as printed 3 B/s). The paper's
    /// numbers must not move.
    fn d1_extended(kind: PolicyKind, deadline: Seconds, local: bool) -> (Run, ContainerId) {
        d1_extended_with(Variant::of(kind), PolicyConfig::default(), deadline, local)
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

    const BOTH: [PolicyKind; 2] = [PolicyKind::Dart, PolicyKind::DartPaper];

    /// A one-map job whose mean map (10 s) does not fit `D` = 9 s, though the shortest map
    /// its profile timed (6 s) does, with its shuffle and the least reduce.
    fn lone_map_spec() -> JobSpec {
        let mut profile = testing::d1_profile(10.0);
        profile.map_remote = 10.0;
        profile.map_shortest = Some(6.0);
        profile.shuffle_bandwidth = 1_000.0;
        JobSpec {
            deadline: 9.0,
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

    /// The map `p` launched on container 0 at node 0, if it did.
    fn guarded() -> PolicyConfig {
        PolicyConfig {
            guarded: true,
            ..PolicyConfig::default()
        }
    }

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

    /// `dart` with a guard, its lone map launched and `progress` done at 7 s, then the guard
    /// at 8 s (D = 9 s): the policy, the map's attempt and the guard's decisions.
    fn lone_map_at_the_guard(progress: f64) -> (Dart, AttemptId, Vec<Decision>) {
        let mut dart = Dart::new(PolicyKind::Dart, guarded());
        let a = lone_map_started(&mut dart).expect("dart launches the lone map");
        send(
            &mut dart,
            7.0,
            Event::TaskProgress {
                attempt: a,
                progress,
            },
        );
        let out = send(&mut dart, 8.0, Event::Guard);
        (dart, a, out)
    }

    #[test]
    fn lone_map_runs_a_map_that_fits_by_d_and_the_guard_lets_it_end() {
        // At 7 s it is 7/8.5 done: it will end at 8.5 s, before D = 9 s.
        let (mut dart, a, out) = lone_map_at_the_guard(7.0 / 8.5);
        assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
        assert!(dart.progress().guarded && dart.progress().k == 1);
        let out = send(
            &mut dart,
            8.5,
            Event::TaskFinished {
                attempt: a,
                output_bytes: 1,
            },
        );
        let reduce = out
            .iter()
            .find_map(|d| match d {
                Decision::LaunchReduce { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .expect("the reduce runs on the freed container");
        send(&mut dart, 8.5, Event::ShuffleBytes(1));
        send(
            &mut dart,
            8.5,
            Event::ReduceInputReady {
                reduce: ReduceId(0),
                bytes: 1,
            },
        );
        let p = finished_job(&mut dart, 8.8, reduce, 1);
        assert!(p.processed_fraction() > 0.0, "not empty: {p:?}");
        assert_eq!((p.k, p.maps_done, p.processed_bytes), (1, 1, 64));

        // The paper's Alg. 1 on the same events refuses: T_J(1) > D, an empty answer.
        let mut paper = Dart::new(PolicyKind::DartPaper, guarded());
        assert_eq!(lone_map_started(&mut paper), None);
        assert!(paper.progress().map_phase_closed && paper.progress().k == 0);
        // And `dart` less the switch refuses as well.
        let x = Extensions {
            lone_map: false,
            ..Extensions::YARD
        };
        let mut without = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
        assert_eq!(lone_map_started(&mut without), None);
        // And so does `dart` in a run with no guard to stop waiting for the map by `D`: there
        // a map that ran long would be a miss.
        let mut unguarded = Dart::new(PolicyKind::Dart, PolicyConfig::default());
        assert_eq!(lone_map_started(&mut unguarded), None);
    }

    /// `last_moment`'s job: `maps` maps of 5 s on node 0, each writing 4 bytes to the one reduce
    /// (`f(d) = 0.5·d`: 2 s of reduce per map), D = 20 s; `dart` with a guard, every map
    /// launched at 0 on containers of node 0. The policy, the maps' attempts and the last
    /// decisions.
    fn last_moment_job(maps: usize) -> (Dart, Vec<AttemptId>) {
        let profile = maps_of_4_bytes(0.5);
        let mut dart = Dart::new(PolicyKind::Dart, guarded());
        send(
            &mut dart,
            0.0,
            Event::JobStarted(node0_job(maps, 20.0, profile)),
        );
        let launched = granted_at_zero(&mut dart, maps as u64);
        assert_eq!(launched.len(), maps, "every map fits");
        (dart, launched)
    }

    /// The last task `attempt` finishes at `now` having output `output_bytes`: the job's
    /// `Finish`.
    fn finished_job(
        dart: &mut Dart,
        now: Seconds,
        attempt: AttemptId,
        output_bytes: u64,
    ) -> Progress {
        let out = send(
            dart,
            now,
            Event::TaskFinished {
                attempt,
                output_bytes,
            },
        );
        match out.last() {
            Some(Decision::Finish(p)) => *p,
            _ => panic!("{out:?}"),
        }
    }

    fn wake_asked(out: &[Decision]) -> Option<Seconds> {
        out.iter().rev().find_map(|d| match d {
            Decision::WakeAt(t) => Some(*t),
            _ => None,
        })
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
            deadline,
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

    fn launched_reduce(out: &[Decision]) -> AttemptId {
        out.iter()
            .find_map(|d| match d {
                Decision::LaunchReduce { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .expect("the reduce runs on the freed container")
    }

    #[test]
    fn last_moment_stops_the_maps_when_the_time_left_falls_to_answering_from_what_is_done() {
        let (mut dart, maps) = last_moment_job(2);
        // Nothing done yet: stopping would answer from nothing, so the only moment is the
        // last reduces' cut, at D (the simulator's answer cost is 0).
        let out = send(&mut dart, 1.0, Event::Tick);
        assert!(
            !out.iter().any(|d| matches!(d, Decision::Kill(_))),
            "{out:?}"
        );
        let out = send(
            &mut dart,
            5.0,
            Event::TaskFinished {
                attempt: maps[0],
                output_bytes: 4,
            },
        );
        // One map done: its 4 bytes take 2 s to reduce (and a few ms to shuffle), so the maps
        // stop at about 18 s: D less the answer from what is done.
        let stop = wake_asked(&out).expect("the guard's own moment is asked for");
        assert!((17.9..18.0).contains(&stop), "{stop}");
        // The second map hangs (no tick comes to judge it a straggler): at the moment it is
        // killed (its end and a reduce over both outputs no longer fit), and the reduce
        // answers from the first.
        let out = send(&mut dart, stop, Event::Wake);
        assert!(out.contains(&Decision::Kill(maps[1])), "{out:?}");
        let p = dart.progress();
        assert!(p.guarded && p.map_phase_closed && p.k == 1, "{p:?}");
        // `dart-paper` asks for no moment of its own.
        let mut paper = Dart::new(PolicyKind::DartPaper, guarded());
        send(&mut paper, 0.0, Event::JobStarted(lone_map_spec()));
        let out = send(&mut paper, 0.0, Event::Tick);
        assert_eq!(wake_asked(&out), None);
    }

    /// The one-map `last_moment_job` with its map done at 5 s and its reduce running on its
    /// 4 bytes (2 s), then the fixed guard at 6 s: the policy, the reduce and what the guard
    /// decided.
    fn reduce_at_the_floor_guard() -> (Dart, AttemptId, Vec<Decision>) {
        let (mut dart, maps) = last_moment_job(1);
        let out = send(
            &mut dart,
            5.0,
            Event::TaskFinished {
                attempt: maps[0],
                output_bytes: 4,
            },
        );
        let reduce = launched_reduce(&out);
        send(&mut dart, 5.0, Event::ShuffleBytes(4));
        send(
            &mut dart,
            5.0,
            Event::ReduceInputReady {
                reduce: ReduceId(0),
                bytes: 4,
            },
        );
        let out = send(&mut dart, 6.0, Event::Guard);
        (dart, reduce, out)
    }

    #[test]
    fn last_moment_spares_a_reduce_that_ends_in_time_and_counts_it_in_full() {
        let (mut dart, reduce, out) = reduce_at_the_floor_guard();
        assert!(
            !out.iter().any(|d| matches!(d, Decision::CutReduce { .. })),
            "a reduce that ends at 7 s is not cut at 6 s: {out:?}"
        );
        // It ends in full (the simulator reports no bytes for a reduce it did not cut).
        let p = finished_job(&mut dart, 7.0, reduce, 0);
        assert_eq!(p.processed_fraction(), 1.0, "{p:?}");
    }

    #[test]
    fn last_moment_cuts_the_last_reduces_answer_cost_before_d() {
        let (mut dart, reduce, out) = reduce_at_the_floor_guard();
        // The reduce hangs. Its cut is asked for at D less the answer's cost (0 here).
        let cut = wake_asked(&out).or(dart.run.as_ref().and_then(|r| r.wake));
        assert_eq!(cut, Some(20.0));
        let out = send(&mut dart, 19.0, Event::Tick);
        assert!(!out.iter().any(|d| matches!(d, Decision::CutReduce { .. })));
        let out = send(&mut dart, 20.0, Event::Wake);
        assert!(
            out.contains(&Decision::CutReduce {
                attempt: reduce,
                reduce: ReduceId(0)
            }),
            "{out:?}"
        );
        // It folded in half its input: the answer says so.
        let p = finished_job(&mut dart, 20.0, reduce, 2);
        assert_eq!(p.processed_fraction(), 0.5, "{p:?}");
        // With a cost, the cut comes that much earlier.
        let config = PolicyConfig {
            answer_cost: 0.5,
            ..guarded()
        };
        let mut costly = Dart::new(PolicyKind::Dart, config);
        let out = send(&mut costly, 0.0, Event::JobStarted(lone_map_spec()));
        assert_eq!(wake_asked(&out), Some(8.5), "D = 9 s less 0.5 s: {out:?}");
    }

    #[test]
    fn while_no_map_is_done_the_guard_stops_a_map_only_once_ending_now_would_be_too_late() {
        // Half done at 7 s: its rate says it ends at 14 s, after D = 9 s. But it is all the
        // answer could hold, and a rate can be wrong: the guard and the ticks leave it running
        // while its output, were it to end now, could still be answered by D.
        let (mut dart, a, out) = lone_map_at_the_guard(0.5);
        assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
        let out = send(&mut dart, 8.0, Event::Tick);
        assert!(!out.contains(&Decision::Kill(a)), "{out:?}");
        assert_eq!(dart.progress().k, 1);
        // Once even ending now leaves its shuffle and least reduce no time before D (both a
        // few milliseconds here): stopped on the tick.
        let out = send(&mut dart, 9.0, Event::Tick);
        assert!(out.contains(&Decision::Kill(a)), "{out:?}");
        assert_eq!(dart.progress().k, 0);
    }

    /// The estimate a `CloseMapPhase` in `out` carried (outer `None`: no close).
    fn closed_with(out: &[Decision]) -> Option<Option<Estimate>> {
        out.iter().find_map(|d| match d {
            Decision::CloseMapPhase { estimate, .. } => Some(*estimate),
            _ => None,
        })
    }

    #[test]
    fn a_profiles_map_spread_is_capped_before_the_jobs_own_maps_have_ended() {
        // Four 5 s maps launched at once, D far off: at the close, the expected last of them
        // is the same with a profile's spread of 5 as with the cap's 1.
        let close_map = |spread: f64| {
            let mut profile = maps_of_4_bytes(0.5);
            profile.map_spread = Some(spread);
            let mut dart = Dart::new(PolicyKind::Dart, PolicyConfig::default());
            send(
                &mut dart,
                0.0,
                Event::JobStarted(node0_job(4, 1e4, profile)),
            );
            let mut out = Vec::new();
            for i in 0..4 {
                let c = Container {
                    id: ContainerId(i),
                    at: at(0),
                };
                out.extend(send(&mut dart, 0.0, Event::ContainerGranted(c)));
            }
            out.iter()
                .find_map(|d| match d {
                    Decision::CloseMapPhase { estimate, .. } => *estimate,
                    _ => None,
                })
                .expect("every map launched closes the map phase")
                .map
        };
        let capped = close_map(MAX_SPREAD);
        assert!(capped > 5.0 && capped < 1e3, "{capped}");
        assert_eq!(close_map(5.0), capped);
        assert!(close_map(0.3) < capped);
    }

    #[test]
    fn input_scaled_reads_a_finished_tail_split_as_a_small_map_not_a_fast_one() {
        // Maps of 64 and 16 bytes (5 s and 4 bytes of output for the mean 40), both at 0: the
        // tail ends at 2 s with its 4 bytes (a mean map's 10, for its 0.4 of one); at 4 s the
        // full map is half done (8 s in all, on pace).
        let after_the_tail = |x: Extensions| {
            let mut spec = node0_job(2, 1e4, maps_of_4_bytes(0.5));
            spec.maps[1].bytes = 16;
            let mut dart = Dart::with_extensions(PolicyKind::Dart, PolicyConfig::default(), x);
            send(&mut dart, 0.0, Event::JobStarted(spec));
            let maps = granted_at_zero(&mut dart, 2);
            let tail = Event::TaskFinished {
                attempt: maps[1],
                output_bytes: 4,
            };
            send(&mut dart, 2.0, tail);
            let run = dart.run.as_mut().unwrap();
            run.core.progress_report(maps[0], 0.5, 4.0);
            run.detect_stragglers(4.0);
            let reduce_input = run.est.reduce_input(run.k_in_mean_maps(), false);
            (run.est.local, reduce_input, run.stragglers.len())
        };
        // In mean maps: T_l^a stays 5 s, the reduce input is both maps' 20 bytes, and the
        // full map runs at the tail's pace.
        let (local, reduce_input, stragglers) = after_the_tail(Extensions::YARD);
        assert!((local - 5.0).abs() < 1e-9, "T_l^a {local}");
        assert!((reduce_input - 20.0).abs() < 1e-9, "{reduce_input}");
        assert_eq!(stragglers, 0, "the full map is on pace");
        // As the paper reads it: a fast map with little output, and the full map a straggler
        // at a quarter of the tail's rate.
        let paper = Extensions::YARD.without("input_scaled").unwrap();
        let (local, reduce_input, stragglers) = after_the_tail(paper);
        assert!((local - 4.4).abs() < 1e-9, "T_l^a {local}");
        assert!((reduce_input - 8.0).abs() < 1e-9, "{reduce_input}");
        assert_eq!(stragglers, 1);
    }

    #[test]
    fn a_close_after_the_last_launch_ends_the_map_phase_with_the_running_maps_scaled_by_input() {
        // Maps of 64, 64 and 16 bytes (5 s for the mean 48 bytes), two containers: maps 0
        // and 1 run from 0; at 6 s map 0 is done and the 16-byte tail split takes its
        // container, the last launch. The phase ends with the later of map 1 (about 6.7 s on
        // average, 6 s gone) and the tail (about 1.7 s from 6) — not at eq. (2)'s 6 + 5 s,
        // which reads the tail as a whole map (FB-2010 job450: 1,692 s forecast, 1,058 taken).
        let mut spec = node0_job(3, 1e4, maps_of_4_bytes(0.5));
        spec.reduces = 0;
        spec.maps[2].bytes = 16;
        let mut dart = Dart::new(PolicyKind::Dart, PolicyConfig::default());
        send(&mut dart, 0.0, Event::JobStarted(spec));
        let maps = granted_at_zero(&mut dart, 2);
        assert_eq!(maps.len(), 2);
        let out = send(
            &mut dart,
            6.0,
            Event::TaskFinished {
                attempt: maps[0],
                output_bytes: 0,
            },
        );
        assert_eq!(launched_maps(&out).len(), 1, "{out:?}");
        let close = closed_with(&out)
            .flatten()
            .expect("the last launch closes with an estimate");
        assert!(
            close.map > 6.5 && close.map < 9.5,
            "the map phase at close: {close:?}"
        );
    }

    #[test]
    fn the_guards_close_carries_the_estimate_and_its_uncapped_total_passes_d() {
        // Four maps of 5 s, D = 20 s, two containers: two maps run, two wait. At 15 s both
        // running maps are a tenth done (their rates say they end long after D); the guard at
        // 16 s, with no map done, spares them and closes the map phase.
        let at_the_guard = |kind: PolicyKind| {
            let mut dart = Dart::new(kind, guarded());
            let job = node0_job(4, 20.0, maps_of_4_bytes(0.5));
            send(&mut dart, 0.0, Event::JobStarted(job));
            let maps = granted_at_zero(&mut dart, 2);
            assert_eq!(maps.len(), 2, "{kind:?}");
            for attempt in maps {
                let progress = Event::TaskProgress {
                    attempt,
                    progress: 0.1,
                };
                send(&mut dart, 15.0, progress);
            }
            assert!(!dart.progress().map_phase_closed, "{kind:?}");
            let out = send(&mut dart, 16.0, Event::Guard);
            assert!(dart.progress().map_phase_closed, "{kind:?}");
            closed_with(&out)
                .expect("the guard closes the map phase")
                .expect("with the policy's estimate")
        };
        // `forecast_cut` under `last_moment`: the total is at most D; Dart eq. (1)'s sum of
        // the parts is not, and the parts are the uncut phases.
        let e = at_the_guard(PolicyKind::Dart);
        assert_eq!(e.total, 20.0, "{e:?}");
        assert!(e.map > 40.0 && e.uncapped() > e.total, "{e:?}");
        assert_eq!(e.uncapped(), e.map + e.shuffle + e.reduce);
        // `dart-paper`'s guard stops both maps (k = 0) and its close carries eq. (1)'s T_J of
        // what is left, uncapped: the total is the parts' sum.
        let e = at_the_guard(PolicyKind::DartPaper);
        assert_eq!(e.total, e.uncapped(), "{e:?}");
    }

    #[test]
    fn lone_map_without_last_moment_the_guard_stops_a_map_that_will_not_end_in_time() {
        let at_the_guard = |progress: f64| {
            let x = Extensions::YARD.without("last_moment").unwrap();
            let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
            let a = lone_map_started(&mut dart).expect("dart launches the lone map");
            let progress = Event::TaskProgress {
                attempt: a,
                progress,
            };
            send(&mut dart, 7.0, progress);
            let out = send(&mut dart, 8.0, Event::Guard);
            (dart, a, out)
        };
        // Half done at 7 s: it ends at 14 s, after D. The guard kills it.
        let (_, a, out) = at_the_guard(0.5);
        assert!(out.contains(&Decision::Kill(a)), "{out:?}");
        // Spared at the guard (ends at 8.5 s), then slowed: killed on the next tick.
        let (mut dart, a, out) = at_the_guard(7.0 / 8.5);
        assert!(!out.contains(&Decision::Kill(a)));
        send(
            &mut dart,
            8.4,
            Event::TaskProgress {
                attempt: a,
                progress: 0.83,
            },
        );
        let out = send(&mut dart, 8.4, Event::Tick);
        assert!(out.contains(&Decision::Kill(a)), "{out:?}");
        assert_eq!(dart.progress().k, 0);
    }

    #[test]
    fn lone_map_launches_the_map_likeliest_to_bring_the_most_input() {
        // Maps on node 0, one with 4× the other's input, in either order, and one with none:
        // only the short one's best case fits D = 9 s, the locality queue offers one of them
        // first, and a map with no input would answer from nothing.
        for short in [0, 1] {
            let mut spec = lone_map_spec();
            let map = |bytes| MapSpec {
                bytes,
                replicas: vec![at(0)],
            };
            spec.maps = match short {
                0 => vec![map(32), map(128), map(0)],
                _ => vec![map(128), map(32), map(0)],
            };
            for x in [
                Extensions::YARD,
                Extensions::YARD.without("lone_map").unwrap(),
            ] {
                let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
                send(&mut dart, 0.0, Event::JobStarted(spec.clone()));
                let c = Container {
                    id: ContainerId(0),
                    at: at(0),
                };
                let out = send(&mut dart, 0.0, Event::ContainerGranted(c));
                let launched: Vec<MapId> = out
                    .iter()
                    .filter_map(|d| match d {
                        Decision::LaunchMap { map, .. } => Some(*map),
                        _ => None,
                    })
                    .collect();
                match x.lone_map {
                    true => assert_eq!(launched, vec![MapId(short)], "{out:?}"),
                    false => assert!(launched.is_empty(), "{out:?}"),
                }
            }
        }
    }

    fn approach(run: &mut Run, c: ContainerId) -> Vec<Decision> {
        let mut out = Vec::new();
        assert!(run.approach(c, NOW, &mut out));
        out
    }

    #[test]
    fn d2_a_remote_candidate_at_exactly_d_is_not_launched_and_becomes_local_only() {
        // T_J = 5.5 + 1.5 + 3 = 10.0, and eq. (10) is strict: 10 < 10 is false.
        for kind in BOTH {
            let (mut run, c) = d1(kind, 10.0, false);
            let out = approach(&mut run, c);
            assert_eq!(
                out,
                vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))],
                "{kind}"
            );
            assert!(!run.core.map_phase_closed(), "{kind}");
            assert_eq!(run.core.k(), 5, "{kind}");
        }
    }

    #[test]
    fn d3_a_local_candidate_at_exactly_d_terminates_the_map_phase() {
        // Also Fig. 6 (P4): D = 10, T_p = 3, m6 local and T_J(k_6) not under D: terminated.
        for kind in BOTH {
            let (mut run, c) = d1(kind, 10.0, true);
            let out = approach(&mut run, c);
            assert_eq!(out[0], Decision::Release(c), "{kind}");
            assert!(
                matches!(out[1], Decision::CloseMapPhase { k: 5, .. }),
                "{kind}: {out:?}"
            );
            assert!(run.core.map_phase_closed(), "{kind}");
        }
    }

    fn launches_m6(out: &[Decision]) -> bool {
        matches!(
            out[0],
            Decision::LaunchMap {
                map: MapId(5),
                locality: Locality::Remote,
                ..
            }
        )
    }

    #[test]
    fn d4_with_half_a_unit_more_the_candidate_is_launched() {
        for kind in BOTH {
            let (mut run, c) = d1(kind, 10.5, false);
            let out = approach(&mut run, c);
            assert!(launches_m6(&out), "{kind}: {out:?}");
            assert_eq!(run.core.k(), 6, "{kind}");
            assert_eq!(run.est.map_end, 5.5, "{kind}: T_M^o := T_M^n");
        }
    }

    #[test]
    fn dart_paper_fig4_and_d1_every_equation_whatever_the_profile_says_of_spread_slots_and_idle_time()
     {
        let (run, _) = d1_extended(PolicyKind::DartPaper, 10.5, false);
        let e = &run.est;
        // Fig. 4 (P1): T_M^n = max(5, 3 + 2.5) = 5.5 for the remote candidate m6.
        assert_eq!(e.map_phase_end(NOW, e.map_duration(Locality::Remote)), 5.5);
        assert_eq!(e.bandwidth(NOW), 3.0, "eq. (5) as printed: 6 / (3 − 1)");
        // Fig. 5 (P2): the shuffle counts m6, (k+1)·p·R = 18 B: T_S = 6, T_OS = 4.5, T_NS = 1.5.
        assert_eq!(e.non_overlapped_shuffle(6.0, 5.5, NOW), 1.5);
        // Eq. (8)–(9) at e = 1: d = 6, T_R = 0.5 · 6 = 3, one wave.
        let t = e.completion(6.0, NOW, 2.5, true);
        assert_eq!((t.map, t.shuffle, t.reduce, t.total), (5.5, 1.5, 3.0, 10.0));
        // D5: with V_p = 9, B = 4.5, T_S = 4, T_NS = −0.5 → 0, T_J = 8.5.
        let mut e = e.clone();
        e.shuffled = 9.0;
        assert_eq!(e.completion(6.0, NOW, 2.5, true).total, 8.5);
        // yard's dart reads the same state otherwise: the busy link's 6 B/s, the last of three
        // noisy reduces on two slots.
        let (run, _) = d1_extended(PolicyKind::Dart, 10.5, false);
        assert_eq!(run.est.bandwidth(NOW), 6.0);
        let t = run.est.completion(6.0, NOW, 2.5, true);
        assert!(t.reduce > 3.3 && t.total > 10.5, "{t:?}");
    }

    #[test]
    fn dart_paper_d2_to_d4_hold_whatever_the_profile_says_of_spread_slots_and_idle_time() {
        let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, false);
        let out = approach(&mut run, c);
        assert_eq!(
            out,
            vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
        );
        let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
        let out = approach(&mut run, c);
        assert!(matches!(out[1], Decision::CloseMapPhase { k: 5, .. }));
        let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.5, false);
        let out = approach(&mut run, c);
        assert!(launches_m6(&out), "{out:?}");
        assert_eq!((run.core.k(), run.est.map_end), (6, 5.5));
        // dart leaves room for the last of its noisy reduces: m6 does not fit by 10.5.
        let (mut run, c) = d1_extended(PolicyKind::Dart, 10.5, false);
        let out = approach(&mut run, c);
        assert_eq!(
            out,
            vec![Decision::Release(c), Decision::MarkLocalOnly(MapId(5))]
        );
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

    /// D8 under `dart` with extensions `x`: the reduce's 8 bytes ready at `T_p = 7`, D = 10.
    fn d8_reduce_ready(x: Extensions, config: PolicyConfig) -> (Run, Vec<Decision>) {
        let v = Variant {
            x,
            ..Variant::of(PolicyKind::Dart)
        };
        let (mut run, c) = d1_extended_with(v, config, 10.0, true);
        let out = reduce_ready(&mut run, c, 7.0, 8);
        (run, out)
    }

    #[test]
    fn dart_paper_d7_d8_alg5_samples_to_what_f_inverse_of_the_time_left_allows() {
        // D8: a = 0.5, b = 1, D = 10, T_p = 7: d_max = 3 / 0.5 = 6 (eq. 12). d_i = 8 is sampled
        // to 6; d_i = 5 is left as it is.
        let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
        let out = reduce_ready(&mut run, c, 7.0, 8);
        let six = Decision::SampleReduceInput {
            reduce: ReduceId(0),
            keep_bytes: 6,
        };
        assert_eq!(out, vec![six.clone()]);
        let (mut run, c) = d1_extended(PolicyKind::DartPaper, 10.0, true);
        let out = reduce_ready(&mut run, c, 7.0, 5);
        assert!(
            !out.iter()
                .any(|d| matches!(d, Decision::SampleReduceInput { .. })),
            "{out:?}"
        );
        // dart sizes the reduce for the largest draw of its wave: it keeps less.
        let (mut run, c) = d1_extended(PolicyKind::Dart, 10.0, true);
        let out = reduce_ready(&mut run, c, 7.0, 8);
        assert!(
            matches!(out[..], [Decision::SampleReduceInput { keep_bytes, .. }] if keep_bytes < 6),
            "{out:?}"
        );
    }

    /// Two one-byte maps on nodes 0 and 1, one reduce, `D` = 5.5 s: both launch at once and
    /// the map phase closes with `k` = 2. Map 0 ends at 2 s; map 1 is 5 % done at 3 s, so its
    /// rate says it ends at 60 s, after `D`, and with no time left for a copy a tick kills it
    /// (Alg. 3–4, `deadline_stragglers`, `kill_on_tick`). Every decision after the close, with `x` as the extensions.
    fn killed_after_the_close(x: Extensions) -> (Vec<Decision>, Vec<Decision>) {
        let config = PolicyConfig {
            dart_extensions: Some(x),
            ..PolicyConfig::default()
        };
        let mut dart = Dart::new(PolicyKind::Dart, config);
        let spec = JobSpec {
            deadline: 5.5,
            maps: (0..2)
                .map(|i| MapSpec {
                    bytes: 1,
                    replicas: vec![at(i)],
                })
                .collect(),
            reduces: 1,
            profile: testing::d1_profile(2.0),
            allotment: None,
            recovered: Vec::new(),
        };
        let mut before = send(&mut dart, 0.0, Event::JobStarted(spec));
        for i in 0..2 {
            let c = Container {
                id: ContainerId(i),
                at: at(i as u32),
            };
            before.extend(send(&mut dart, 0.0, Event::ContainerGranted(c)));
        }
        let maps = launched_maps(&before);
        assert_eq!(maps.len(), 2, "{before:?}");
        let mut after = send(
            &mut dart,
            2.0,
            Event::TaskFinished {
                attempt: maps[0],
                output_bytes: 1,
            },
        );
        after.extend(send(
            &mut dart,
            3.0,
            Event::TaskProgress {
                attempt: maps[1],
                progress: 0.05,
            },
        ));
        after.extend(send(&mut dart, 3.0, Event::Tick));
        assert!(after.contains(&Decision::Kill(maps[1])), "{after:?}");
        assert_eq!(dart.progress().k, 1);
        (before, after)
    }

    #[test]
    fn reforecast_after_kill_sends_a_fresh_estimate_when_a_kill_after_the_close_lowers_k() {
        let on = Extensions::YARD.with("reforecast_after_kill").unwrap();
        let (before, after) = killed_after_the_close(on);
        let close = before
            .iter()
            .find_map(|d| match d {
                Decision::CloseMapPhase { k, estimate } => Some((*k, estimate.unwrap())),
                _ => None,
            })
            .expect("the map phase closed at the launches");
        assert_eq!(close.0, 2);
        let fresh: Vec<(u32, Estimate)> = after
            .iter()
            .filter_map(|d| match d {
                Decision::Reforecast { k, estimate } => Some((*k, *estimate)),
                _ => None,
            })
            .collect();
        assert_eq!(fresh.len(), 1, "{after:?}");
        let (k, e) = fresh[0];
        assert_eq!(k, 1);
        // The map phase is over at the kill, 3 s (`wave_end`), and the reduce has one map's
        // byte to fold (f(1) = 0.5 s), where the close counted two.
        assert_eq!((e.map, e.reduce), (3.0, 0.5), "{e:?}");
        assert!(close.1.reduce > e.reduce, "{e:?} against {:?}", close.1);
        // After the kill, nothing changes k: no second one.
        let off = Extensions::YARD.without("reforecast_after_kill").unwrap();
        let (_, after) = killed_after_the_close(off);
        assert!(
            !after
                .iter()
                .any(|d| matches!(d, Decision::Reforecast { .. })),
            "{after:?}"
        );
    }

    #[test]
    fn the_live_master_runs_every_extension_cut_tail_too() {
        assert_eq!(Extensions::LIVE, Extensions::YARD);
    }

    #[test]
    fn cut_tail_sizes_the_reduces_to_the_median_reduce_under_the_guard() {
        let kept = |x: Extensions, config: PolicyConfig| match d8_reduce_ready(x, config).1[..] {
            [Decision::SampleReduceInput { keep_bytes, .. }] => keep_bytes,
            ref out => panic!("{out:?}"),
        };
        let unguarded = kept(Extensions::YARD, PolicyConfig::default());
        // Unguarded, dart sizes for its wave's largest draw at `reduce_confidence`: under D8's 6.
        assert!(unguarded < 6, "{unguarded}");
        // Under the guard, which cuts a reduce that runs long, eq. 12 at e = 1: D8's 6 bytes
        // (with `time_cut` off: on, nothing is sampled ahead).
        let sampling = Extensions::YARD.without("time_cut").unwrap();
        assert_eq!(kept(sampling, guarded()), 6);
        // Without the switch, or without `last_moment` (whose cut takes the tail), the bound.
        for off in ["cut_tail", "last_moment"] {
            let x = Extensions::YARD.without(off).unwrap();
            assert_eq!(kept(x, guarded()), unguarded, "{off}");
            assert_eq!(kept(x.without("time_cut").unwrap(), guarded()), unguarded);
        }
    }

    /// Two maps of 5 s on two containers, one reduce of 2.5 s a byte over 4 bytes a map, D
    /// 20: `T_J(2)` (the two maps' wave, 20 s of reduce) passes D, `T_J(1)` (15 s) does not.
    /// The maps launched.
    fn fill_launches(x: Extensions, config: PolicyConfig) -> usize {
        let profile = maps_of_4_bytes(2.5);
        let mut dart = Dart::with_extensions(PolicyKind::Dart, config, x);
        send(
            &mut dart,
            0.0,
            Event::JobStarted(node0_job(2, 20.0, profile)),
        );
        granted_at_zero(&mut dart, 2).len()
    }

    #[test]
    fn wave_fill_runs_a_refused_map_whose_output_the_cut_reduce_still_folds() {
        let fill = Extensions::YARD.with("wave_fill").unwrap();
        // Alg. 1 refuses the second map: T_J(2) > D.
        assert_eq!(fill_launches(Extensions::YARD, guarded()), 1);
        // Under the guard the reduce cut at D folds 14 s / 2.5 s of the 8 bytes, 1.4 maps'
        // worth, where one map's 4 bytes fold whole: the second map runs in the same wave.
        assert_eq!(fill_launches(fill, guarded()), 2);
        // No guard, no cut: Alg. 5 would sample, the paper's test stands.
        assert_eq!(fill_launches(fill, PolicyConfig::default()), 1);
        // Nor without `time_cut`, whose reduce the cut, not a sample, sizes.
        assert_eq!(
            fill_launches(fill.without("time_cut").unwrap(), guarded()),
            1
        );
    }

    #[test]
    fn wave_fill_keeps_a_straggler_whose_output_the_cut_reduce_still_folds() {
        // Two maps of 5 s, one reduce of 1.7 s a byte over 4 bytes a map, D 20: both fit.
        // At 3 s one map is done and the other, at a quarter, a straggler (LATE: under half
        // the typical rate) that will end at 12 s. Eq. 11's window with both, 20 − 3 − 13.6,
        // leaves no room for a copy (under `T_m^a`), so Alg. 3 kills it. By the cut's rule
        // it stays: ending at 12, the reduce cut at D folds 8 / 1.7 of its 8 bytes, 1.18
        // maps' worth, against one map without it.
        let kills = |x: Extensions| {
            let profile = maps_of_4_bytes(1.7);
            let mut dart = Dart::with_extensions(PolicyKind::Dart, guarded(), x);
            send(
                &mut dart,
                0.0,
                Event::JobStarted(node0_job(2, 20.0, profile)),
            );
            let maps = granted_at_zero(&mut dart, 2);
            assert_eq!(maps.len(), 2);
            let mut out = send(
                &mut dart,
                3.0,
                Event::TaskFinished {
                    attempt: maps[0],
                    output_bytes: 4,
                },
            );
            out.extend(send(
                &mut dart,
                3.0,
                Event::TaskProgress {
                    attempt: maps[1],
                    progress: 0.25,
                },
            ));
            out.extend(send(&mut dart, 3.0, Event::Tick));
            out.iter()
                .any(|d| matches!(d, Decision::Kill(a) if *a == maps[1]))
        };
        assert!(kills(Extensions::YARD), "Alg. 3 kills the straggler");
        assert!(!kills(Extensions::YARD.with("wave_fill").unwrap()));
    }

    #[test]
    fn time_cut_leaves_a_reduces_input_whole_for_the_guards_cut() {
        let ready = |x: Extensions, config: PolicyConfig| {
            let (run, out) = d8_reduce_ready(x, config);
            let kept = run.core.reduce_running_since(ReduceId(0)).map(|(_, k)| k);
            (out, kept)
        };
        let on = Extensions::YARD.with("time_cut").unwrap();
        // D8: eq. 12 leaves room for 6 of the 8 bytes; under the guard, whose cut at
        // `D − answer_cost` keeps what the reduce folded by then, all 8 are kept.
        let (out, kept) = ready(on, guarded());
        assert!(
            !out.iter()
                .any(|d| matches!(d, Decision::SampleReduceInput { .. })),
            "{out:?}"
        );
        assert_eq!(kept, Some(8));
        // No guard, no cut: Alg. 5 samples as before.
        let (out, kept) = ready(on, PolicyConfig::default());
        assert!(
            matches!(out[..], [Decision::SampleReduceInput { keep_bytes, .. }] if keep_bytes < 6)
        );
        assert!(kept.is_some_and(|k| k < 6), "{kept:?}");
        // Without `cut_tail` the guard does not count on its cut: sampled.
        let (out, _) = ready(on.without("cut_tail").unwrap(), guarded());
        assert!(
            matches!(out[..], [Decision::SampleReduceInput { .. }]),
            "{out:?}"
        );
    }

    #[test]
    fn under_the_guard_the_forecast_answers_by_d() {
        let v = Variant::of(PolicyKind::Dart);
        let (free, _) = d1_extended_with(v, PolicyConfig::default(), 5.0, true);
        let uncut = free.current_estimate(0.0);
        assert!(uncut.total > 5.0, "{uncut:?}");
        let (guarded, _) = d1_extended_with(v, guarded(), 5.0, true);
        let e = guarded.current_estimate(0.0);
        assert_eq!(e.total, 5.0, "{e:?}");
        assert_eq!((e.map, e.shuffle), (uncut.map, uncut.shuffle));
    }

    #[test]
    fn dart_paper_d9_d10_skew_is_the_largest_reduce_at_e_1_and_the_ewma_is_section_5_3() {
        use crate::policy::PreviousRun;
        let (mut run, _) = d1_extended(PolicyKind::DartPaper, 10.0, true);
        run.est.previous_runs = vec![
            PreviousRun {
                k: 10,
                max_reduce_input: 100.0,
            },
            PreviousRun {
                k: 20,
                max_reduce_input: 220.0,
            },
        ];
        // Eq. (13), k_n = 15: d = ½(1.5·100 + 0.75·220) = 157.5, T_R = f(157.5) = 78.75.
        assert_eq!(run.est.reduce_input(15.0, true), 157.5);
        assert_eq!(run.est.completion(15.0, NOW, 2.5, true).reduce, 78.75);
        // D-WOST's eq. (8): d = 15 · 1, T_R = 7.5.
        assert_eq!(run.est.completion(15.0, NOW, 2.5, false).reduce, 7.5);
        // D10: T_m^a = 2.5, a map took 4 → 0.8 · 2.5 + 0.2 · 4 = 2.8.
        run.est.map_finished(Locality::Remote, 4.0, Some(1.0));
        assert!((run.est.all - 2.8).abs() < 1e-12 && (run.est.remote - 2.8).abs() < 1e-12);
    }

    #[test]
    fn an_extension_is_turned_off_by_its_name_and_only_it() {
        for name in Extensions::NAMES {
            let (x, base) = match Extensions::YARD.on().contains(&name) {
                true => (Extensions::YARD.without(name).unwrap(), Extensions::YARD),
                // Off in `dart`: turned on by name, and off again by name.
                false => {
                    let on = Extensions::YARD.with(name).unwrap();
                    assert_eq!(on.against(Extensions::YARD), (vec![], vec![name]));
                    (on.without(name).unwrap(), on)
                }
            };
            assert_eq!(x.against(base), (vec![name], vec![]));
            assert_eq!(Extensions::NONE.without(name), Ok(Extensions::NONE));
        }
        assert_eq!(Extensions::YARD.off(), ["wave_fill"]);
        assert_eq!(Extensions::NONE.off().len(), Extensions::NAMES.len());
        assert!(Extensions::YARD.without("warp_drive").is_err());
        // `dart` runs the mix it is given; other kinds ignore it.
        let config = PolicyConfig {
            dart_extensions: Some(Extensions::YARD.without("lone_map").unwrap()),
            ..guarded()
        };
        let mut dart = Dart::new(PolicyKind::Dart, config.clone());
        assert_eq!(lone_map_started(&mut dart), None, "lone_map is off");
        let mut paper = Dart::new(PolicyKind::DartPaper, config);
        assert_eq!(paper.variant.x, Extensions::NONE);
        assert_eq!(lone_map_started(&mut paper), None);
    }

    #[test]
    fn each_ablation_is_dart_paper_less_exactly_its_part() {
        let paper = Variant::of(PolicyKind::DartPaper);
        assert_eq!(
            paper,
            Variant {
                approach: true,
                revise_maps: true,
                revise_reduces: true,
                skew: true,
                late: false,
                x: Extensions::NONE,
            }
        );
        let of = Variant::of;
        assert_eq!(
            of(PolicyKind::DartWithoutRevise),
            Variant {
                revise_maps: false,
                revise_reduces: false,
                ..paper
            }
        );
        assert_eq!(
            of(PolicyKind::DartMapReviseOnly),
            Variant {
                revise_reduces: false,
                ..paper
            }
        );
        assert_eq!(
            of(PolicyKind::DartWithoutSkew),
            Variant {
                skew: false,
                ..paper
            }
        );
        assert_eq!(
            of(PolicyKind::Dart),
            Variant {
                x: Extensions::YARD,
                ..paper
            }
        );
    }

    #[test]
    fn a_reduce_is_judged_on_its_rate_once_it_reports_progress_and_only_once() {
        // D1 with D = 10.5; reduce 0 on container 5 gets 2 B at t = 4 (f = 1 s, judged from
        // 0.5 s on).
        let (mut run, c) = d1(PolicyKind::Dart, 10.5, true);
        let mut out = Vec::new();
        run.core.close_map_phase(None, &mut out);
        assert!(run.core.launch_next_reduce(c, NOW, &mut out));
        let a = AttemptId(run.core.attempts.len() as u32 - 1);
        let ready = Event::ReduceInputReady {
            reduce: ReduceId(0),
            bytes: 2,
        };
        run.event(4.0, ready.clone(), &mut out);
        let kills = |run: &mut Run, t: Seconds, progress: f64| {
            let mut out = Vec::new();
            run.event(
                t,
                Event::TaskProgress {
                    attempt: a,
                    progress,
                },
                &mut out,
            );
            out.iter()
                .filter(|d| matches!(d, Decision::Kill(_)))
                .count()
        };
        // No progress yet says nothing of the rate (a report may predate the input).
        assert_eq!(kills(&mut run, 6.0, 0.0), 0);
        // 40 % in 2 s: it ends at 9, before D.
        assert_eq!(kills(&mut run, 6.0, 0.4), 0);
        // 45 % in 4 s: it ends at 4 + 8.9, after D: killed and queued again.
        assert_eq!(kills(&mut run, 8.0, 0.45), 1);
        assert_eq!(run.core.next_reduce(), Some(ReduceId(0)));
        assert!(run.restart_waits(ReduceId(0)) && run.reduce_avoid == [NodeId(7)]);
        // Its restart, however slow, is not killed again.
        assert!(run.core.launch_next_reduce(c, 8.0, &mut out));
        let a = AttemptId(run.core.attempts.len() as u32 - 1);
        run.event(8.0, ready, &mut out);
        let mut out = Vec::new();
        run.event(
            10.0,
            Event::TaskProgress {
                attempt: a,
                progress: 0.01,
            },
            &mut out,
        );
        assert!(
            !out.iter().any(|d| matches!(d, Decision::Kill(_))),
            "{out:?}"
        );
    }

    #[test]
    fn under_cut_tails_guard_a_late_reduce_is_left_to_the_cut_not_restarted() {
        let kills_of_a_late_reduce = |x: Extensions| {
            let v = Variant {
                x,
                ..Variant::of(PolicyKind::Dart)
            };
            let (mut run, c) = d1_with(v, guarded(), d1_spec(10.5), true);
            let mut out = Vec::new();
            run.core.close_map_phase(None, &mut out);
            assert!(run.core.launch_next_reduce(c, NOW, &mut out));
            let a = AttemptId(run.core.attempts.len() as u32 - 1);
            let ready = Event::ReduceInputReady {
                reduce: ReduceId(0),
                bytes: 2,
            };
            run.event(4.0, ready, &mut out);
            // 45 % in 4 s: its rate says it ends at 12.9 s, after D.
            let mut out = Vec::new();
            let report = Event::TaskProgress {
                attempt: a,
                progress: 0.45,
            };
            run.event(8.0, report, &mut out);
            out.iter()
                .filter(|d| matches!(d, Decision::Kill(_)))
                .count()
        };
        // The guard's cut keeps what it folded in by D − answer_cost.
        assert_eq!(kills_of_a_late_reduce(Extensions::YARD), 0);
        // Without `cut_tail` the guard does not count on the cut: restarted elsewhere.
        let without = Extensions::YARD.without("cut_tail").unwrap();
        assert_eq!(kills_of_a_late_reduce(without), 1);
    }

    /// D1 after the map phase closed, with maps 0–2 as stragglers whose remaining times are
    /// 1.5, 2.0 and 3.0 (progress ½ after 1.5, 2.0 and 3.0 s).
    fn revise_state(kind: PolicyKind, deadline: Seconds) -> (Run, ContainerId) {
        let (mut run, c) = d1(kind, deadline, false);
        let mut out = Vec::new();
        run.core.close_map_phase(None, &mut out);
        for (i, age) in [1.5, 2.0, 3.0].into_iter().enumerate() {
            let a = AttemptId(i as u32);
            run.core.attempts[i].started = NOW - age;
            run.core.progress_report(a, 0.5, NOW);
            run.stragglers.push(a);
        }
        (run, c)
    }

    fn window(run: &Run) -> Seconds {
        run.est
            .window(run.core.k(), NOW, run.deadline(), run.v.skew)
    }

    #[test]
    fn d11_a_window_of_t_ma_speculates_the_straggler_with_most_time_left() {
        // Eq. (11) with k = 5: T_NS = 0.5, T_R = 2.5; D = 8.5 makes W = 2.5 = T_m^a (≥: copy).
        // Fig. 6 (P5): a copy of the straggler keeps k = 5.
        for kind in BOTH {
            let (mut run, c) = revise_state(kind, 8.5);
            assert!((window(&run) - 2.5).abs() < 1e-12, "{kind}");
            let mut out = Vec::new();
            assert!(run.revise(c, NOW, &mut out), "{kind}");
            assert!(
                matches!(
                    out[..],
                    [Decision::LaunchMap {
                        map: MapId(2),
                        speculative: true,
                        ..
                    }]
                ),
                "{kind}: {out:?}"
            );
            assert_eq!(run.core.k(), 5, "{kind}: a copy leaves k unchanged");
        }
    }

    #[test]
    fn d12_a_window_under_t_ma_kills_the_straggler_with_most_time_left() {
        // Fig. 6 (P5): killing the straggler makes k = 4.
        for kind in BOTH {
            let (mut run, c) = revise_state(kind, 8.0); // W = 2.0
            let mut out = Vec::new();
            assert!(
                !run.revise(c, NOW, &mut out),
                "{kind}: the container stays free"
            );
            assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
            assert_eq!(run.core.k(), 4, "{kind}");
        }
    }

    #[test]
    fn d13_no_window_kills_every_straggler_over_the_threshold_strictly() {
        // W = −1.5: Alg. 4 with StragglingsThreshold 0.8 · 2.5 = 2.0 kills only T_rem = 3.0
        // (T_rem = 2.0 is not > 2.0).
        for kind in BOTH {
            let (mut run, c) = revise_state(kind, 4.5);
            assert!(window(&run) <= 0.0, "{kind}");
            let mut out = Vec::new();
            assert!(!run.revise(c, NOW, &mut out), "{kind}");
            assert_eq!(out, vec![Decision::Kill(AttemptId(2))], "{kind}");
            assert_eq!(run.core.k(), 4, "{kind}");
            assert_eq!(run.stragglers, vec![AttemptId(0), AttemptId(1)], "{kind}");
        }
    }

    /// A wave of `n` maps of 1 byte each, all launched node-local at 0 on containers 0..n and
    /// the map phase closed; 2 reduces, each map's output 2 B (p = 1) on a link of `bandwidth`
    /// B/s, `f(d) = 0.5·d` with no spread; `T_l^a` 10 s. Dart's extensions `x`.
    fn wave(x: Extensions, n: u32, bandwidth: f64) -> Run {
        let mut profile = testing::d1_profile(10.0);
        profile.shuffle_bandwidth = bandwidth;
        let spec = JobSpec {
            deadline: 1000.0,
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

    #[test]
    fn wave_end_puts_the_map_phase_at_the_longest_map_of_the_wave() {
        use crate::policy::estimate::expected_max_lognormal;
        // 20 maps of 10 s on average launched at 0: eq. (2) says 10; the wave ends with the
        // longest of 20 draws at σ 0.3 (`PolicyConfig::map_spread`), about 17.
        let paper = wave(without(|x| x.wave_end = false), 20, 100.0);
        assert_eq!(paper.current_estimate(0.0).map, 10.0);
        let yard = wave(Extensions::YARD, 20, 100.0);
        let longest = 10.0 * expected_max_lognormal(0.3, 20) * (-0.045f64).exp();
        let m = yard.current_estimate(0.0).map;
        assert!((m - longest).abs() < 0.1 && m > 16.0, "{m} vs {longest}");
        // At 5 s every map reports half done but map 7, a quarter: it ends at 20.
        let mut yard = yard;
        for i in 0..20 {
            let p = if i == 7 { 0.25 } else { 0.5 };
            yard.core.progress_report(AttemptId(i), p, 5.0);
        }
        let m = yard.current_estimate(5.0).map;
        assert!((m - 20.0).abs() < 0.01, "{m}");
        let mut paper = paper;
        for i in 0..20 {
            paper.core.progress_report(AttemptId(i), 0.5, 5.0);
        }
        assert_eq!(
            paper.current_estimate(5.0).map,
            10.0,
            "eq. (2) reads no progress"
        );
        // Once the last map ended (at 21), the phase ended then, whenever asked.
        let mut out = Vec::new();
        for i in 0..20 {
            yard.event(
                21.0,
                Event::TaskFinished {
                    attempt: AttemptId(i),
                    output_bytes: 2,
                },
                &mut out,
            );
        }
        yard.note_phases(21.0);
        assert_eq!(yard.current_estimate(30.0).map, 21.0);
    }

    #[test]
    fn fifo_shuffle_leaves_the_last_output_when_the_link_keeps_up() {
        // 20 outputs of 2 B on a 100 B/s link: each crosses in 0.02 s, while the maps end
        // seconds apart. Eq. (3)–(7) take the 40 B over the link less an overlap from T_q (one
        // map after the first launch, 10) to T_M (10): 0.4 s.
        let paper = wave(without(|x| x.fifo_shuffle = false), 20, 100.0);
        assert!((paper.current_estimate(0.0).shuffle - 0.4).abs() < 1e-9);
        let yard = wave(Extensions::YARD, 20, 100.0);
        let s = yard.current_estimate(0.0).shuffle;
        assert!((s - 0.02).abs() < 1e-6, "{s}");
        // A link of 0.1 B/s cannot keep up: 400 s of output, all but the ~10 s the maps' ends
        // spread over left after them.
        let yard = wave(Extensions::YARD, 20, 0.1);
        let e = yard.current_estimate(0.0);
        assert!(e.shuffle > 380.0 && e.shuffle < 400.0, "{e:?}");
        // After the maps: the time since they ended and what is still queued.
        let mut yard = wave(Extensions::YARD, 2, 0.1);
        let mut out = Vec::new();
        for i in 0..2 {
            yard.event(
                10.0,
                Event::TaskFinished {
                    attempt: AttemptId(i),
                    output_bytes: 2,
                },
                &mut out,
            );
        }
        yard.note_phases(10.0);
        yard.event(12.0, Event::ShuffleBytes(3), &mut out);
        yard.note_phases(12.0);
        // The link moved 3 B in the 2 s it had bytes: 1.5 B/s (eq. 5 over busy time).
        let s = yard.current_estimate(12.0).shuffle;
        assert!(
            (s - (2.0 + 1.0 / 1.5)).abs() < 1e-6,
            "2 s since the maps, 1 B left at 1.5 B/s: {s}"
        );
    }

    #[test]
    fn elapsed_phases_counts_the_reduce_phase_from_when_the_reduces_started() {
        // Two maps end at 10; their 8 B cross by 12; reduce 0 gets 4 B and reduce 1 gets 16 B
        // at 12: f = 2 s and 8 s, the job ends at 20.
        let run = |x: Extensions| {
            let mut run = wave(x, 2, 2.0);
            let mut out = Vec::new();
            for i in 0..2 {
                run.event(
                    10.0,
                    Event::TaskFinished {
                        attempt: AttemptId(i),
                        output_bytes: 4,
                    },
                    &mut out,
                );
                let c = ContainerId(u64::from(10 + i));
                run.core.grant(Container {
                    id: c,
                    at: at(10 + i),
                });
                assert!(run.core.launch_next_reduce(c, 10.0, &mut out));
            }
            run.note_phases(10.0);
            run.event(12.0, Event::ShuffleBytes(8), &mut out);
            run.note_phases(12.0);
            for (r, bytes) in [(0, 4), (1, 16)] {
                let reduce = ReduceId(r);
                run.event(12.0, Event::ReduceInputReady { reduce, bytes }, &mut out);
            }
            run
        };
        // Eq. (1) at 12.5 with none of the three: the map phase "ends" now, and a whole reduce
        // of the average input (eq. 8: 2 maps × 2 B, f = 2 s) follows.
        let old = Extensions {
            wave_end: false,
            fifo_shuffle: false,
            elapsed_phases: false,
            ..Extensions::YARD
        };
        let e = run(old).current_estimate(12.5);
        assert!(e.map == 12.5 && e.reduce == 2.0, "{e:?}");
        // With the maps' and the link's own history, the average reduce still ends at 14.
        let e = run(without(|x| x.elapsed_phases = false)).current_estimate(12.5);
        assert_eq!(
            (e.map, e.shuffle, e.reduce, e.total),
            (10.0, 2.0, 2.0, 14.0)
        );
        // The reduces' own inputs say 20; reduce 1's progress, a quarter at 16, says 28.
        let mut yard = run(Extensions::YARD);
        let e = yard.current_estimate(12.5);
        assert_eq!((e.map, e.shuffle), (10.0, 2.0), "{e:?}");
        assert!(
            (e.reduce - 8.0).abs() < 1e-9 && (e.total - 20.0).abs() < 1e-9,
            "{e:?}"
        );
        yard.core.progress_report(AttemptId(3), 0.25, 16.0); // maps 0–1, reduces 2–3
        let e = yard.current_estimate(16.0);
        assert!((e.total - 28.0).abs() < 1e-9, "{e:?}");
    }
}
