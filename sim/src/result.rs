//! One run's result and how it is scored: what a job ended with ([`JobResult`]), its outcome
//! against the deadline, and the estimates' errors the reports tabulate ([`crate::report`]).

use yard_appmaster::policy::{Estimate, PolicyKind, Seconds};
use yard_workload::SizeBin;

/// How a job's answer ended: exactly one of three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Answered by `D` from the output of k ≥ 1 maps, with some input in it.
    Met,
    /// Answered by `D` from no input: k = 0, or every byte cut (processed fraction 0). Not a
    /// met deadline: the user got nothing.
    Empty,
    /// Answered after `D` (or never).
    Missed,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Met, Outcome::Empty, Outcome::Missed];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Met => "met",
            Outcome::Empty => "empty",
            Outcome::Missed => "missed",
        }
    }
}

/// The moments the report measures an estimate at (Dart Table 3's periods, as instants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Moment {
    /// Once the job's first containers were granted and the policy acted on them (t = 0).
    Start,
    /// When the policy closed the map phase (the estimate `CloseMapPhase` carries).
    MapClose,
    /// When the first reduce finished (just before the policy hears of it). Map and shuffle
    /// are over by then: only the reduce phase and the total are measured.
    FirstReduce,
}

impl Moment {
    pub const ALL: [Moment; 3] = [Moment::Start, Moment::MapClose, Moment::FirstReduce];

    pub fn name(self) -> &'static str {
        match self {
            Moment::Start => "start",
            Moment::MapClose => "map_close",
            Moment::FirstReduce => "first_reduce",
        }
    }

    /// Whether `phase` is still ahead (or under way) at this moment, so that an estimate of
    /// it means something.
    pub fn measures(self, phase: Phase) -> bool {
        self != Moment::FirstReduce || matches!(phase, Phase::Reduce | Phase::Total)
    }
}

/// A part of an `Estimate`, and the same part of the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// When the map phase ends, from the job's start (`T_M`).
    Map,
    /// The shuffle left after the map phase ends (`T_NS`).
    Shuffle,
    /// The reduce phase (`T_R`): from the end of the shuffle to the answer.
    Reduce,
    /// The job's completion (`T_J`).
    Total,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Map, Phase::Shuffle, Phase::Reduce, Phase::Total];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Map => "map",
            Phase::Shuffle => "shuffle",
            Phase::Reduce => "reduce",
            Phase::Total => "total",
        }
    }

    pub fn of(self, e: &Estimate) -> Seconds {
        match self {
            Phase::Map => e.map,
            Phase::Shuffle => e.shuffle,
            Phase::Reduce => e.reduce,
            Phase::Total => e.total,
        }
    }
}

/// The shortest true phase whose relative estimation error is measured: 1 ms, the resolution
/// of Hadoop's job history, where the paper's phase times come from. A shorter phase is 0 there;
/// in the simulator it is typically the last map output's transfer after the maps (or the
/// engine's rounding of event times up to the microsecond), and an error relative to 1 µs
/// (|640 s − 1 µs| / 1 µs = 6.4·10⁸) says nothing about the estimator.
pub const MEASURABLE: Seconds = 1e-3;

/// One run's outcome: what EVALUATION.md's tables are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub job: String,
    pub config: &'static str,
    pub policy: PolicyKind,
    pub bin: SizeBin,
    pub maps: u32,
    pub k: u32,
    pub k_max: u32,
    /// The share of the input the k_max schedule reads (`Plan::k_max_fraction`).
    pub k_max_fraction: f64,
    /// The byte oracle's share of the input and whether it is exact (`Plan::byte_max_fraction`).
    pub byte_max_fraction: f64,
    pub byte_max_exact: bool,
    pub deadline: Seconds,
    /// From the job's start to its `Finish`; infinite if the policy never finished.
    pub completion: Seconds,
    /// The policy's estimate at each [`Moment`] (indexed as `Moment::ALL`), from the job's
    /// start; `None` where the moment never came or the policy made none.
    pub estimates: [Option<Estimate>; 3],
    /// The policy's last `Reforecast` after the map close (`dart`'s `reforecast_after_kill`),
    /// before its answer; `None` where it sent none.
    pub reforecast: Option<Estimate>,
    /// The true phases, as the engine saw them, in an `Estimate`'s terms: `map` when the
    /// map phase ended (closed, and no map attempt running), `shuffle` from then until the
    /// last counted output crossed the link, `reduce` from then to the answer, `total` the
    /// completion. `None` if the policy never finished.
    pub phases: Option<Estimate>,
    /// Input bytes whose records reached the answer over all input bytes, after every cut
    /// (maps not run, reduce input sampled): `Progress::processed_fraction`.
    pub processed_fraction: f64,
    /// Events the engine handed to the policy.
    pub events: u64,
    /// Seconds before the deadline the run was guarded at; 0 when it was not (no guard, or
    /// `full`).
    pub guard: Seconds,
    /// The guard fired (`Progress::guarded`): the job had not finished `guard` seconds before
    /// its deadline.
    pub guard_fired: bool,
    /// The run launched a map on its best case (`dart`'s `lone_map`, guarded runs only): it
    /// left its unguarded twin's path before any guard fired.
    pub lone_map: bool,
    /// For a guarded run, the same job, configuration and policy without the guard: what the
    /// guard's cost and benefit are measured against. Set by `experiment::run_job`.
    pub unguarded: Option<Unguarded>,
    /// The floor estimate of the completion (`crate::floor`): the median completion over
    /// redraws of the reduces' noise, all else as it ran. `None` if the job never finished or
    /// ran on a shared cluster.
    pub floor: Option<Seconds>,
}

impl JobResult {
    /// The row label of the run: the policy's name, with `+guard` when it was guarded.
    pub fn label(&self) -> String {
        label(self.policy, self.guard > 0.0)
    }

    /// The unguarded twin of a guarded run whose guard never fired and that never launched a
    /// map on its best case: until then, a guarded run is event for event the unguarded one.
    pub fn as_unguarded(&self) -> JobResult {
        debug_assert!(!self.guard_fired && !self.lone_map);
        JobResult {
            guard: 0.0,
            unguarded: None,
            ..self.clone()
        }
    }

    /// The processed fraction the guard cost this job: its unguarded twin's less this run's
    /// (0 when the guard did not fire; negative where the guard let more in). `None` for a run
    /// without the guard or without a twin.
    pub fn guard_cost(&self) -> Option<f64> {
        let twin = self.unguarded?;
        Some(twin.processed_fraction - self.processed_fraction)
    }

    /// The guard turned a missed deadline into a met one (an answer by D from some input).
    /// `None` for a run without the guard or without a twin.
    pub fn guard_rescued(&self) -> Option<bool> {
        let twin = self.unguarded?;
        Some(twin.outcome == Outcome::Missed && self.outcome() == Outcome::Met)
    }

    /// The job finished after its deadline (its answer came late).
    pub fn missed(&self) -> bool {
        self.completion > self.deadline + 1e-9
    }

    /// The answer was built from no input: no map reached it, or every byte was cut.
    pub fn from_nothing(&self) -> bool {
        self.k == 0 || self.processed_fraction <= 0.0
    }

    /// Met, empty or missed: exactly one.
    pub fn outcome(&self) -> Outcome {
        if self.missed() {
            Outcome::Missed
        } else if self.from_nothing() {
            Outcome::Empty
        } else {
            Outcome::Met
        }
    }

    /// k / k_max; `None` when no map could fit (k_max = 0).
    pub fn deviation(&self) -> Option<f64> {
        (self.k_max > 0).then(|| f64::from(self.k) / f64::from(self.k_max))
    }

    /// Processed input over the input the k_max schedule reads; `None` when k_max = 0.
    pub fn data_vs_oracle(&self) -> Option<f64> {
        (self.k_max > 0 && self.k_max_fraction > 0.0)
            .then(|| self.processed_fraction / self.k_max_fraction)
    }

    /// Processed input over the byte oracle's (`Plan::byte_max_fraction`), capped at 1 (a late
    /// answer may have read more than any schedule could by D); `None` when the oracle reads
    /// nothing. Below the true share where the oracle is only a bound, never above it.
    pub fn bytes_vs_oracle(&self) -> Option<f64> {
        (self.byte_max_fraction > 0.0)
            .then(|| (self.processed_fraction / self.byte_max_fraction).min(1.0))
    }

    /// The policy's estimate at `moment`.
    pub fn estimate(&self, moment: Moment) -> Option<Estimate> {
        let i = Moment::ALL.iter().position(|m| *m == moment)?;
        self.estimates[i]
    }

    /// `|T − T̂| / T` for one phase of the estimate made at `moment`, T the true phase. `None`
    /// when there was no estimate, the job never finished, the phase was over at that moment
    /// ([`Moment::measures`]), or the true phase took less than [`MEASURABLE`] (a map-only
    /// job's shuffle and reduce take none: the relative error of nothing is undefined).
    pub fn phase_error(&self, moment: Moment, phase: Phase) -> Option<f64> {
        if !moment.measures(phase) {
            return None;
        }
        let truth = phase.of(self.phases.as_ref()?);
        let estimate = phase.of(&self.estimate(moment)?);
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// The estimate in force when the job answered: the last `Reforecast` after the map
    /// close, else the close's own. Only where the close carried one, so that a re-sent
    /// estimate scores the same jobs as the close's would.
    pub fn estimate_in_force(&self) -> Option<Estimate> {
        let close = self.estimate(Moment::MapClose)?;
        Some(self.reforecast.unwrap_or(close))
    }

    /// |T − T̂| / T of the estimate in force at the answer (EVALUATION.md's estimation error
    /// at map close, re-sent after the close when `k` changed and the policy says so:
    /// `reforecast_after_kill`; without a `Reforecast`, the close's).
    pub fn estimation_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let estimate = self.estimate_in_force()?.total;
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// [`JobResult::estimation_error`] of the estimate's uncapped total
    /// ([`Estimate::uncapped`]: Dart eq. (1)'s parts summed, before `forecast_cut`'s cap at D):
    /// how far the profile was off, not how early the guard answered.
    pub fn uncapped_estimation_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let estimate = self.estimate_in_force()?.uncapped();
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - estimate).abs() / truth)
    }

    /// [`JobResult::estimation_error`] of an estimate the cap at D left alone (its total is
    /// eq. (1)'s sum of the parts): the jobs whose forecast ended before D, where neither the
    /// cap nor the guard's cut it foresaw decides the error.
    pub fn under_d_estimation_error(&self) -> Option<f64> {
        let e = self.estimate_in_force()?;
        (e.total >= e.uncapped())
            .then(|| self.estimation_error())
            .flatten()
    }

    /// |T − T̂_floor| / T of the floor estimate (`crate::floor`): the error no estimate made
    /// at map close can avoid on this model, as it cannot know the reduces' noise draws.
    /// `None` where the floor is, or where the job's true time is under [`MEASURABLE`].
    pub fn floor_error(&self) -> Option<f64> {
        let truth = self.phases.as_ref()?.total;
        let floor = self.floor?;
        (truth >= MEASURABLE && truth.is_finite()).then(|| (truth - floor).abs() / truth)
    }

    /// |T − T̂| / T of the estimate the map close carried, whatever came after it.
    pub fn close_estimation_error(&self) -> Option<f64> {
        self.phase_error(Moment::MapClose, Phase::Total)
    }
}

/// What the unguarded twin of a guarded run ended with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unguarded {
    pub processed_fraction: f64,
    pub outcome: Outcome,
}

/// A row's label for `policy`, with or without the guard: `dart`, `dart+guard`.
pub fn label(policy: PolicyKind, guarded: bool) -> String {
    match guarded {
        true => format!("{}+guard", policy.name()),
        false => policy.name().to_owned(),
    }
}
