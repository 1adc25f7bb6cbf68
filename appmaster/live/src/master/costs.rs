//! Live costs, measured on this cluster instead of assumed (issue 29 item 5): the answer path
//! (the policy's `Finish` to the rm accepting the result), a task's launch (a `LaunchMap` or
//! `LaunchReduce` decision to its process first reporting `started`) and a container grant
//! (the wanted count rising to the policy hearing `ContainerGranted`, i.e. the rm's grant plus
//! the runner's start) and a cut (a `CutReduce` decision to the cut reduce's report). A master loads its cluster's recent samples from the profile store at
//! start, takes its deadline margin from the answer path's p99 and the cut's lead from the
//! cut's p99 (`PolicyConfig::answer_cost`), and stores what it measured
//! once its answer is accepted.
//!
//! [`CostClock`] does the measuring: it is fed the instants (`Instant`s passed in, never read
//! here), so it is tested without a clock.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

use yard_appmaster::policy::ContainerId;
use yard_profiles::{CostSamples, LiveCost};
use yard_wire::answer::{CostQuantiles, LiveCostsView};
use yard_wire::deadline::Deadline;

/// The margin kept for the answer path when this cluster has measured none yet.
pub(super) const DEFAULT_FINISH_MARGIN: f64 = 0.3;
/// The least margin kept, however fast the answer path was measured: a p99 over few samples
/// is no promise.
pub(super) const MIN_FINISH_MARGIN: f64 = 0.03;
/// How long before the deadline `dart`'s last_moment cuts its last reduces when this cluster
/// has measured neither a cut nor an answer path yet (`PolicyConfig::answer_cost`).
pub(super) const DEFAULT_CUT_SECONDS: f64 = 0.25;
/// The most a cut takes to reach a reduce and stop it, by the task runner's own clocks: a
/// reduce's pending report hears of it at once (its reply waits for news, `waitMs`), and a
/// held reduce looks at it within `HOLD_SLICE`. With the answer path's p99 after it (the
/// reduce's report of its answer is one such call) it bounds the cut before any cut was
/// measured.
pub(super) fn cut_delivery_seconds() -> f64 {
    crate::task::HOLD_SLICE.as_secs_f64()
}
/// The least lead the cut gets, however fast cuts were measured: a p99 over few samples is no
/// promise.
pub(super) const MIN_CUT_SECONDS: f64 = 0.03;
/// The seconds the policy gets (`JobSpec::deadline`): from now to the user's deadline, less
/// the margin kept for the answer path ([`Deadline::seconds_from`]); `None` without one. The
/// master's one conversion from the wire's deadline to the policy's.
pub(super) fn policy_deadline(deadline: Option<Deadline>, now_ms: i64, margin: f64) -> Option<f64> {
    deadline.map(|d| d.seconds_from(now_ms, margin))
}

/// How a phase's deadline (the policy's seconds) follows the job's, which may move while it
/// runs: the deadline it was worked out from, at which moment and with what margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct DeadlineBasis {
    pub(super) deadline: Option<Deadline>,
    /// The phase's start, ms since the epoch: the policy's clock starts there.
    pub(super) at_ms: i64,
    pub(super) margin: f64,
}

impl DeadlineBasis {
    /// The policy's seconds for the basis's deadline ([`policy_deadline`]); `None` without one.
    pub(super) fn seconds(&self) -> Option<f64> {
        policy_deadline(self.deadline, self.at_ms, self.margin)
    }
}

/// Median and p99 of one cost's samples, seconds (nearest rank: with under 100 samples the p99
/// is the largest).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Quantiles {
    pub(super) samples: usize,
    pub(super) p50: f64,
    pub(super) p99: f64,
}

impl Quantiles {
    pub(super) fn of(samples: &[f64]) -> Option<Quantiles> {
        let mut s: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if s.is_empty() {
            return None;
        }
        s.sort_by(f64::total_cmp);
        let rank = |q: f64| s[((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        Some(Quantiles {
            samples: s.len(),
            p50: rank(0.5),
            p99: rank(0.99),
        })
    }

    fn view(q: Option<Quantiles>) -> Option<CostQuantiles> {
        q.map(|q| CostQuantiles {
            samples: q.samples as u64,
            p50: q.p50,
            p99: q.p99,
        })
    }

    fn text(q: Option<Quantiles>) -> String {
        q.map_or("not measured".into(), |q| {
            format!(
                "p50 {:.3} s p99 {:.3} s ({} samples)",
                q.p50, q.p99, q.samples
            )
        })
    }
}

/// This cluster's live costs: each one's median and p99 (`None`: not measured yet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct LiveCosts {
    pub(super) answer: Option<Quantiles>,
    pub(super) launch: Option<Quantiles>,
    pub(super) grant: Option<Quantiles>,
    pub(super) cut: Option<Quantiles>,
}

impl LiveCosts {
    pub(super) fn of(samples: &CostSamples) -> LiveCosts {
        LiveCosts {
            answer: Quantiles::of(&samples.answer),
            launch: Quantiles::of(&samples.launch),
            grant: Quantiles::of(&samples.grant),
            cut: Quantiles::of(&samples.cut),
        }
    }

    /// What the master keeps of the deadline for its answer: the answer path's p99, at least
    /// [`MIN_FINISH_MARGIN`]; [`DEFAULT_FINISH_MARGIN`] while nothing was measured.
    pub(super) fn finish_margin(&self) -> f64 {
        self.answer
            .map_or(DEFAULT_FINISH_MARGIN, |a| a.p99.max(MIN_FINISH_MARGIN))
    }

    /// How long before the deadline the last reduces are cut (`PolicyConfig::answer_cost`):
    /// the cut's p99, at least [`MIN_CUT_SECONDS`]; while no cut was measured, the cut's
    /// bound from what was: its delivery (`cut_delivery_seconds`) and the answer path's p99
    /// (a cluster's first deadline run has cut nothing: the task sampler and `full` never
    /// cut); [`DEFAULT_CUT_SECONDS`] while neither was measured.
    pub(super) fn cut_lead(&self) -> f64 {
        match (self.cut, self.answer) {
            (Some(c), _) => c.p99.max(MIN_CUT_SECONDS),
            (None, Some(a)) => (cut_delivery_seconds() + a.p99).max(MIN_CUT_SECONDS),
            (None, None) => DEFAULT_CUT_SECONDS,
        }
    }

    /// "answer p50 … p99 …, launch …, grant …, cut …".
    pub(super) fn describe(&self) -> String {
        format!(
            "answer {}, launch {}, grant {}, cut {}",
            Quantiles::text(self.answer),
            Quantiles::text(self.launch),
            Quantiles::text(self.grant),
            Quantiles::text(self.cut),
        )
    }

    /// The answer's `liveCosts`: each cost's samples, p50 and p99 in seconds, the margin
    /// this run kept (`finishMargin`) and its cut's lead (`cutLead`), both from the costs
    /// loaded at its start.
    pub(super) fn view(&self, finish_margin: f64, cut_lead: f64) -> LiveCostsView {
        LiveCostsView {
            answer: Quantiles::view(self.answer),
            launch: Quantiles::view(self.launch),
            grant: Quantiles::view(self.grant),
            cut: Quantiles::view(self.cut),
            finish_margin,
            cut_lead,
        }
    }
}

/// Measures this master's launches and grants as they happen, and keeps them until stored.
#[derive(Debug, Default)]
pub(super) struct CostClock {
    /// When each container not yet granted was asked for, oldest first.
    asked: VecDeque<Instant>,
    /// Containers the policy was told of once: a container offered again (to a later phase)
    /// is no new grant.
    granted: HashSet<ContainerId>,
    /// Attempts launched whose process has not reported yet, by name.
    launched: HashMap<String, Instant>,
    /// Reduce attempts cut (`CutReduce`) that have not reported their answer yet, by name.
    cut: HashMap<String, Instant>,
    /// What was measured, seconds.
    pub(super) measured: CostSamples,
}

impl CostClock {
    /// A new phase: asks of the last one are no more.
    pub(super) fn phase_started(&mut self) {
        self.asked.clear();
    }

    /// The policy wants `want` containers and holds `held`: asks are added (now) or the newest
    /// dropped so that one is pending per container wanted and not held. Returns whether the
    /// pending asks rose (the rm is to be called at once).
    pub(super) fn wanted(&mut self, want: u32, held: u32, now: Instant) -> bool {
        let pending = want.saturating_sub(held) as usize;
        let rose = pending > self.asked.len();
        self.asked.resize(pending, now);
        rose
    }

    /// The policy heard of container `id`: the oldest pending ask is answered.
    pub(super) fn granted(&mut self, id: ContainerId, now: Instant) {
        if self.granted.insert(id)
            && let Some(asked) = self.asked.pop_front()
        {
            self.measured
                .grant
                .push(now.saturating_duration_since(asked).as_secs_f64());
        }
    }

    pub(super) fn launched(&mut self, attempt: String, now: Instant) {
        self.launched.insert(attempt, now);
    }

    /// The attempt's process reported for the first time.
    pub(super) fn started(&mut self, attempt: &str, now: Instant) {
        if let Some(at) = self.launched.remove(attempt) {
            self.measured
                .launch
                .push(now.saturating_duration_since(at).as_secs_f64());
        }
    }

    /// The policy cut this reduce attempt: it is to answer from what it has.
    pub(super) fn cut(&mut self, attempt: String, now: Instant) {
        self.cut.entry(attempt).or_insert(now);
    }

    /// The attempt reported done: if it was cut, its cut's cost is measured.
    pub(super) fn reported(&mut self, attempt: &str, now: Instant) {
        if let Some(at) = self.cut.remove(attempt) {
            self.measured
                .cut
                .push(now.saturating_duration_since(at).as_secs_f64());
        }
    }

    /// The answer path of this run, from the policy's `Finish` to the rm's acceptance.
    pub(super) fn answered(&mut self, finished: Instant, accepted: Instant) {
        self.measured
            .answer
            .push(accepted.saturating_duration_since(finished).as_secs_f64());
    }

    /// The samples `stored` with this run's measured ones after them.
    pub(super) fn with_stored(&self, stored: &CostSamples) -> CostSamples {
        let mut all = stored.clone();
        for cost in LiveCost::ALL {
            all.of_mut(cost).extend(self.measured.of(cost));
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_policy_deadline_keeps_the_margin_and_never_goes_below_a_millisecond() {
        // Dart's D is counted from the phase's start: 10 s away, 0.3 s kept for the answer.
        let at = |ms| Some(Deadline::from_epoch_ms(ms));
        assert_eq!(policy_deadline(at(11_000), 1_000, 0.3), Some(9.7));
        assert_eq!(policy_deadline(at(11_000), 1_000, 0.05), Some(9.95));
        // Past, or eaten by the margin: the policy still gets a positive deadline.
        assert_eq!(policy_deadline(at(1_000), 2_000, 0.3), Some(0.001));
        assert_eq!(policy_deadline(at(1_100), 1_000, 0.3), Some(0.001));
        // No deadline is none for the policy too, whatever the margin.
        assert_eq!(policy_deadline(None, 1_000, 0.3), None);
    }

    #[test]
    fn quantiles_are_nearest_rank_and_ignore_what_is_not_a_number() {
        assert_eq!(Quantiles::of(&[]), None);
        assert_eq!(Quantiles::of(&[f64::NAN]), None);
        let q = Quantiles::of(&[0.4, 0.1, 0.3, 0.2, f64::INFINITY]).unwrap();
        assert_eq!((q.samples, q.p50, q.p99), (4, 0.2, 0.4));
        let hundred: Vec<f64> = (1..=200).map(f64::from).collect();
        let q = Quantiles::of(&hundred).unwrap();
        assert_eq!((q.p50, q.p99), (100.0, 198.0));
    }

    #[test]
    fn the_margin_is_the_measured_answer_p99_with_a_floor_and_the_default_before_any() {
        let none = LiveCosts::default();
        assert_eq!(none.finish_margin(), DEFAULT_FINISH_MARGIN);
        let slow = LiveCosts::of(&CostSamples {
            answer: vec![0.08, 0.12, 0.5],
            ..Default::default()
        });
        assert_eq!(slow.finish_margin(), 0.5);
        let fast = LiveCosts::of(&CostSamples {
            answer: vec![0.01, 0.02],
            ..Default::default()
        });
        assert_eq!(fast.finish_margin(), MIN_FINISH_MARGIN);
        let text = slow.describe();
        assert!(
            text.starts_with("answer p50 0.120 s p99 0.500 s (3 samples), launch not measured"),
            "{text}"
        );
        let view = serde_json::to_value(slow.view(0.5, 0.25)).unwrap();
        assert_eq!(view["answer"]["p50"], 0.12);
        assert_eq!(view["grant"], serde_json::Value::Null);
        assert_eq!(view["cutLead"], 0.25);
    }

    #[test]
    fn grants_answer_the_oldest_ask_once_per_container_and_launches_their_start() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut c = CostClock::default();
        assert!(c.wanted(2, 0, at(0)));
        assert!(!c.wanted(2, 0, at(10)), "the same want asks nothing new");
        assert!(c.wanted(3, 0, at(20)));
        c.granted(ContainerId(0), at(50));
        c.granted(ContainerId(0), at(60)); // offered again: no new grant
        // One held, two wanted: the newest ask (at 20 ms) goes.
        assert!(!c.wanted(2, 1, at(70)));
        c.granted(ContainerId(1), at(100));
        c.granted(ContainerId(2), at(110)); // asked for by nobody now
        assert_eq!(c.measured.grant, [0.05, 0.1]);

        c.launched("2-0".into(), at(100));
        c.started("2-0", at(130));
        c.started("2-0", at(140)); // only its first report
        c.started("2-9", at(140)); // never launched here
        assert_eq!(c.measured.launch.len(), 1);
        assert!((c.measured.launch[0] - 0.03).abs() < 1e-9);

        // A cut reduce: from the cut to its report, once; an uncut one measures nothing.
        c.cut("2-5".into(), at(150));
        c.cut("2-5".into(), at(160)); // cut again: the first cut counts
        c.reported("2-6", at(170));
        c.reported("2-5", at(190));
        c.reported("2-5", at(200));
        assert_eq!(c.measured.cut.len(), 1);
        assert!((c.measured.cut[0] - 0.04).abs() < 1e-9);

        c.answered(at(200), at(240));
        let stored = CostSamples {
            answer: vec![1.0],
            ..Default::default()
        };
        let all = c.with_stored(&stored);
        assert_eq!(all.answer.len(), 2);
        assert_eq!(all.answer[0], 1.0);
        assert_eq!(all.grant, [0.05, 0.1]);
        assert_eq!(all.cut.len(), 1);
    }

    #[test]
    fn the_cut_lead_is_the_measured_cut_p99_with_a_floor_and_the_default_before_any() {
        assert_eq!(LiveCosts::default().cut_lead(), DEFAULT_CUT_SECONDS);
        let slow = LiveCosts::of(&CostSamples {
            cut: vec![0.02, 0.09, 0.4],
            ..Default::default()
        });
        assert_eq!(slow.cut_lead(), 0.4);
        let fast = LiveCosts::of(&CostSamples {
            cut: vec![0.01],
            ..Default::default()
        });
        assert_eq!(fast.cut_lead(), MIN_CUT_SECONDS);
        assert!(
            slow.describe()
                .ends_with("cut p50 0.090 s p99 0.400 s (3 samples)")
        );
    }

    #[test]
    fn before_any_cut_the_lead_is_the_cuts_delivery_and_the_measured_answer_path() {
        // A cluster's first dart run: the sampler and `full` measured an answer path, no cut.
        let answered = LiveCosts::of(&CostSamples {
            answer: vec![0.004, 0.012],
            ..Default::default()
        });
        let lead = answered.cut_lead();
        assert!((lead - (0.02 + 0.012)).abs() < 1e-9, "{lead}");
        assert!(lead < DEFAULT_CUT_SECONDS);
        // A slow answer path widens it; a measured cut decides it.
        let slow = LiveCosts::of(&CostSamples {
            answer: vec![0.4],
            ..Default::default()
        });
        assert!((slow.cut_lead() - 0.42).abs() < 1e-9);
        let cut = LiveCosts::of(&CostSamples {
            answer: vec![0.4],
            cut: vec![0.12],
            ..Default::default()
        });
        assert_eq!(cut.cut_lead(), 0.12);
    }
}
