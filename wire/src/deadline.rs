//! An application's answer against its deadline: one rule for every process that judges it,
//! the MapReduce master in its answer (`job.outcome`, by its own clock) and the rm in its
//! application views (`deadlineOutcome`, by its receipt of the answer).

use serde::{Deserialize, Serialize};

/// Where an application with a deadline stands against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
