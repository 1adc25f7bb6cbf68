//! An application's lifecycle, as YARN's ResourceManager runs it: NEW → SUBMITTED → ACCEPTED →
//! RUNNING → FINISHED / FAILED / KILLED, with the master relaunched after a failure up to
//! `am_max_attempts` times. A pure state machine: the daemon persists the state and carries out
//! what it says (launch a master, stop containers); an event that makes no sense in a state
//! is an error the REST layer turns into a 4xx.

/// Hadoop's `YarnApplicationState` and `FinalApplicationStatus`: the wire's, so the rm's views
/// carry the lifecycle's own state (a lifecycle is never `NEW_SAVING`: yard saves before it
/// answers a submission).
pub use yard_wire::views::{FinalApplicationStatus, YarnApplicationState};

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEvent {
    /// The client submitted the application (it was created by `new-application`).
    Submit,
    /// The scheduler admitted it to a queue; its master's container is asked for.
    Accept,
    /// The master registered with the rm.
    MasterRegistered,
    /// The master unregistered, reporting success or failure.
    MasterFinished { succeeded: bool },
    /// The master's container died without unregistering (crash, lost node).
    MasterFailed,
    /// A user killed the application.
    Kill,
}

/// What the rm must do after a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppAction {
    None,
    /// Ask for a container and launch the master in it (attempt `n`, 1-based).
    LaunchMaster {
        attempt: u32,
    },
    /// Stop every container of the application and forget its asks.
    StopContainers,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("application is {state:?}: cannot {event:?}")]
pub struct InvalidTransition {
    pub state: YarnApplicationState,
    pub event: AppEvent,
}

/// One application's lifecycle (fields named as Hadoop's app JSON names them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    pub state: YarnApplicationState,
    pub final_status: FinalApplicationStatus,
    /// Master attempts made so far.
    pub attempts: u32,
    pub max_attempts: u32,
    /// Why the application failed or was killed.
    pub diagnostics: String,
}

/// YARN's default `yarn.resourcemanager.am.max-attempts`.
pub const DEFAULT_AM_MAX_ATTEMPTS: u32 = 2;

impl Lifecycle {
    pub fn new(max_attempts: u32) -> Self {
        Lifecycle {
            state: YarnApplicationState::New,
            final_status: FinalApplicationStatus::Undefined,
            attempts: 0,
            max_attempts: max_attempts.max(1),
            diagnostics: String::new(),
        }
    }

    /// Applies `event`; on success the state has moved and the action says what to do.
    pub fn apply(&mut self, event: AppEvent) -> Result<AppAction, InvalidTransition> {
        use YarnApplicationState as S;
        let invalid = Err(InvalidTransition {
            state: self.state,
            event,
        });
        let action = match (self.state, event) {
            (S::New, AppEvent::Submit) => {
                self.state = S::Submitted;
                AppAction::None
            }
            (S::Submitted, AppEvent::Accept) => {
                self.state = S::Accepted;
                self.attempts = 1;
                AppAction::LaunchMaster { attempt: 1 }
            }
            (S::Accepted, AppEvent::MasterRegistered) => {
                self.state = S::Running;
                AppAction::None
            }
            // A running master registers again after an rm restart (YARN's work-preserving restart).
            (S::Running, AppEvent::MasterRegistered) => AppAction::None,
            (S::Running, AppEvent::MasterFinished { succeeded }) => {
                self.state = if succeeded { S::Finished } else { S::Failed };
                self.final_status = if succeeded {
                    FinalApplicationStatus::Succeeded
                } else {
                    FinalApplicationStatus::Failed
                };
                if !succeeded {
                    self.diagnostics = "the application master reported failure".into();
                }
                AppAction::StopContainers
            }
            (S::Accepted | S::Running, AppEvent::MasterFailed) => {
                if self.attempts < self.max_attempts {
                    // YARN relaunches the master; the job's containers of the failed attempt go.
                    self.attempts += 1;
                    self.state = S::Accepted;
                    AppAction::LaunchMaster {
                        attempt: self.attempts,
                    }
                } else {
                    self.state = S::Failed;
                    self.final_status = FinalApplicationStatus::Failed;
                    self.diagnostics = format!(
                        "the application master failed {} times (am_max_attempts = {})",
                        self.attempts, self.max_attempts
                    );
                    AppAction::StopContainers
                }
            }
            (state, AppEvent::Kill) if !state.is_final() => {
                self.state = S::Killed;
                self.final_status = FinalApplicationStatus::Killed;
                self.diagnostics = "killed by the user".into();
                AppAction::StopContainers
            }
            _ => return invalid,
        };
        Ok(action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_happy_path() {
        let mut a = Lifecycle::new(DEFAULT_AM_MAX_ATTEMPTS);
        assert_eq!(a.apply(AppEvent::Submit), Ok(AppAction::None));
        assert_eq!(
            a.apply(AppEvent::Accept),
            Ok(AppAction::LaunchMaster { attempt: 1 })
        );
        assert_eq!(a.apply(AppEvent::MasterRegistered), Ok(AppAction::None));
        assert_eq!(a.state, YarnApplicationState::Running);
        assert_eq!(
            a.apply(AppEvent::MasterFinished { succeeded: true }),
            Ok(AppAction::StopContainers)
        );
        assert_eq!(
            (a.state, a.final_status),
            (
                YarnApplicationState::Finished,
                FinalApplicationStatus::Succeeded
            )
        );
    }

    #[test]
    fn a_failed_master_is_relaunched_up_to_the_limit() {
        let mut a = Lifecycle::new(2);
        a.apply(AppEvent::Submit).unwrap();
        a.apply(AppEvent::Accept).unwrap();
        a.apply(AppEvent::MasterRegistered).unwrap();
        assert_eq!(
            a.apply(AppEvent::MasterFailed),
            Ok(AppAction::LaunchMaster { attempt: 2 })
        );
        assert_eq!(a.state, YarnApplicationState::Accepted);
        assert_eq!(
            a.apply(AppEvent::MasterFailed),
            Ok(AppAction::StopContainers)
        );
        assert_eq!(
            (a.state, a.final_status),
            (YarnApplicationState::Failed, FinalApplicationStatus::Failed)
        );
        assert!(a.diagnostics.contains("2 times"), "{}", a.diagnostics);
    }

    #[test]
    fn kill_works_until_the_end_and_nothing_moves_a_final_state() {
        for before in 0..3 {
            let mut a = Lifecycle::new(2);
            let steps = [
                AppEvent::Submit,
                AppEvent::Accept,
                AppEvent::MasterRegistered,
            ];
            for &e in &steps[..before] {
                a.apply(e).unwrap();
            }
            assert_eq!(a.apply(AppEvent::Kill), Ok(AppAction::StopContainers));
            assert_eq!(a.state, YarnApplicationState::Killed);
            for e in [
                AppEvent::Kill,
                AppEvent::Submit,
                AppEvent::MasterFailed,
                AppEvent::MasterRegistered,
            ] {
                let err = a.apply(e).unwrap_err();
                assert_eq!(err.state, YarnApplicationState::Killed);
                assert!(err.to_string().contains("Killed"), "{err}");
            }
        }
    }

    #[test]
    fn out_of_order_events_are_refused_without_moving() {
        let mut a = Lifecycle::new(2);
        assert!(a.apply(AppEvent::MasterRegistered).is_err());
        assert!(a.apply(AppEvent::Accept).is_err());
        assert_eq!(a.state, YarnApplicationState::New);
        a.apply(AppEvent::Submit).unwrap();
        assert!(
            a.apply(AppEvent::MasterFinished { succeeded: true })
                .is_err()
        );
        assert_eq!(a.state, YarnApplicationState::Submitted);
    }

    #[test]
    fn states_are_spelled_as_hadoops_rest_api_spells_them() {
        let json = serde_json::to_string(&Lifecycle::new(2)).unwrap();
        assert!(
            json.contains("\"state\":\"NEW\"") && json.contains("\"finalStatus\":\"UNDEFINED\""),
            "{json}"
        );
        assert_eq!(
            serde_json::to_string(&YarnApplicationState::Finished).unwrap(),
            "\"FINISHED\""
        );
    }
}
