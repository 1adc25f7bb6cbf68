//! A deadline, and an application's answer against it: one type from `yard submit` through the
//! client, the rm's submission parsing and the master's command line to the master's edge,
//! where [`Deadline::seconds_from`] turns it into the policy's seconds; one rule for every
//! process that judges an answer, the MapReduce master in its answer (`job.outcome`, by its
//! own clock) and the rm in its application views (`deadlineOutcome`, by its receipt of the
//! answer). "No deadline" is `Option::None`, never a number.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::limits::MAX_TIME_MS;

/// When an answer is due: milliseconds since the Unix epoch. On the wire it is the bare
/// integer the protocols carry (`deadline-ms`, `deadlineMs`, `--deadline-ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Deadline(i64);

impl Deadline {
    /// The deadline at `ms` since the Unix epoch; whoever reads it from outside checks the
    /// range (and the rm, that it is ahead of its clock) with its own field's name.
    pub const fn from_epoch_ms(ms: i64) -> Deadline {
        Deadline(ms)
    }

    /// `after_ms` from `now_ms` (a relative deadline, such as `deadlineInMs`, made absolute).
    pub const fn after(now_ms: i64, after_ms: i64) -> Deadline {
        Deadline(now_ms.saturating_add(after_ms))
    }

    pub const fn epoch_ms(self) -> i64 {
        self.0
    }

    /// The seconds from `now_ms` to the deadline less `margin` seconds, and at least 1 ms so
    /// that a deadline already past still closes a phase at once: what a sans-IO policy that
    /// counts seconds from its own start is given.
    pub fn seconds_from(self, now_ms: i64, margin: f64) -> f64 {
        ((self.0 - now_ms) as f64 / 1000.0 - margin).max(0.001)
    }
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A deadline from a command line: a whole number of ms since the Unix epoch, in range.
impl FromStr for Deadline {
    type Err = String;

    fn from_str(s: &str) -> Result<Deadline, String> {
        match s.trim().parse::<i64>() {
            Ok(ms) if (1..=MAX_TIME_MS).contains(&ms) => Ok(Deadline(ms)),
            _ => Err(format!(
                "{s:?}: a deadline is a whole number of milliseconds since the Unix epoch, 1 to {MAX_TIME_MS}"
            )),
        }
    }
}

/// Where an application with a deadline stands against it, beside YARN's state and final
/// status. `met`: answered by the deadline from some input; `empty`: answered by it from no
/// input (processed fraction 0), not a met deadline; `missed`: answered after it, or ended
/// without an answer after it (or failed or killed without one), or still running past it;
/// `pending`: not answered, the deadline still ahead. An answer counts at the rm's receipt
/// less 1 s for its transit; an application that succeeded without reporting an answer
/// answered when it ended, from all its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DeadlineOutcome {
    /// Answered by the deadline from some input.
    Met,
    /// Answered by the deadline from no input (processed fraction 0): not a met deadline, the
    /// user got nothing.
    Empty,
    /// Answered after the deadline, or never will be by it.
    Missed,
    /// Not answered, and the deadline is still ahead.
    Pending,
}

impl DeadlineOutcome {
    pub const ALL: [DeadlineOutcome; 4] = [
        DeadlineOutcome::Met,
        DeadlineOutcome::Empty,
        DeadlineOutcome::Missed,
        DeadlineOutcome::Pending,
    ];

    /// The name the JSON carries.
    pub fn name(self) -> &'static str {
        match self {
            DeadlineOutcome::Met => "met",
            DeadlineOutcome::Empty => "empty",
            DeadlineOutcome::Missed => "missed",
            DeadlineOutcome::Pending => "pending",
        }
    }

    /// An answer at `answered_ms` from `fraction` of the input, against `deadline_ms`: missed
    /// after it; by it, empty from no input and met from some.
    pub fn of_answer(deadline_ms: i64, answered_ms: i64, fraction: f64) -> DeadlineOutcome {
        if answered_ms > deadline_ms {
            DeadlineOutcome::Missed
        } else if fraction <= 0.0 {
            DeadlineOutcome::Empty
        } else {
            DeadlineOutcome::Met
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_the_bare_integer_on_the_wire_and_seconds_less_the_margin_for_a_policy() {
        let d = Deadline::from_epoch_ms(11_000);
        assert_eq!(serde_json::to_value(d).unwrap(), serde_json::json!(11_000));
        assert_eq!(serde_json::from_str::<Deadline>("11000").unwrap(), d);
        assert!(serde_json::from_str::<Deadline>("\"11000\"").is_err());
        assert_eq!(
            serde_json::from_str::<Option<Deadline>>("null").unwrap(),
            None
        );
        assert_eq!(Deadline::after(1_000, 10_000), d);
        assert_eq!(d.to_string().parse::<Deadline>(), Ok(d));
        for bad in ["", "soon", "0", "-5", "1.5", "253402300800000"] {
            let e = bad.parse::<Deadline>().unwrap_err();
            assert!(
                e.contains("milliseconds since the Unix epoch"),
                "{bad}: {e}"
            );
        }
        assert_eq!(d.seconds_from(1_000, 0.3), 9.7);
        assert_eq!(d.seconds_from(1_000, 0.05), 9.95);
        // Past, or nearer than the margin: 1 ms, never zero or less.
        assert_eq!(
            Deadline::from_epoch_ms(1_000).seconds_from(2_000, 0.3),
            0.001
        );
        assert_eq!(
            Deadline::from_epoch_ms(1_100).seconds_from(1_000, 0.3),
            0.001
        );
    }

    #[test]
    fn an_answer_by_the_deadline_is_met_only_from_some_input() {
        use DeadlineOutcome::*;
        assert_eq!(DeadlineOutcome::of_answer(100, 100, 0.5), Met);
        assert_eq!(DeadlineOutcome::of_answer(100, 99, 1.0), Met);
        assert_eq!(DeadlineOutcome::of_answer(100, 100, 0.0), Empty);
        assert_eq!(DeadlineOutcome::of_answer(100, 101, 1.0), Missed);
        assert_eq!(DeadlineOutcome::of_answer(100, 101, 0.0), Missed);
        for o in DeadlineOutcome::ALL {
            assert_eq!(serde_json::to_value(o).unwrap(), o.name());
        }
    }
}
