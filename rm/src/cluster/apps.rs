//! Applications: what the rm knows of each ([`AppInfo`]) and keeps of it in the store
//! ([`AppRecord`]), issuing ids and submission, the master's register and unregister, a
//! client's deadline, kill and lifetime, and the lifecycle transitions with the actions they
//! call for (a new attempt's master asked for, an ended attempt's containers stopped).

use std::collections::BTreeMap;

use yard_wire::auth::Principal;
use yard_wire::deadline::{Deadline, DeadlineOutcome};
use yard_wire::protocol::{AllocateReply, ContainerEnd, JobProgress, JobType, Resource};

use yard_cluster::app::{
    AppAction, AppEvent, FinalApplicationStatus, Lifecycle, YarnApplicationState,
};
use yard_cluster::policy::{JobModel, JobQuota};
use yard_cluster::scheduler::{AppId, SchedEvent};

use super::{Cluster, ClusterError, Stop};

/// An application as submitted: who, where, and how to start its master (Hadoop's
/// submission context with its am-container-spec).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewApp {
    pub id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    /// When the answer is due (the submission's `deadline-ms`, or its `deadline=` tag).
    pub deadline: Option<Deadline>,
    /// Hadoop's application tags, as submitted (lower-cased, as YARN keeps them).
    pub tags: Vec<String>,
    /// Hadoop's `application-type` (YARN's default `YARN` when empty).
    pub application_type: String,
    /// The master container's resource (`resource`); `None`: the rm's `am_resource`.
    pub am_resource: Option<Resource>,
    /// `max-app-attempts`; `None` (or over the rm's) takes the rm's `am_max_attempts`.
    pub max_attempts: Option<u32>,
}

/// What YARN's application report carries beyond yard's lifecycle, kept in the store as one
/// JSON value (`applications.yarn_json`).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct YarnFields {
    /// Hadoop's `applicationType`.
    pub application_type: String,
    /// The master container's resource.
    pub am_memory_mb: u64,
    pub am_vcores: u32,
    /// When it reached a final state, ms since the epoch.
    pub finished_ms: Option<i64>,
    /// Its ended containers' resources times their lifetimes (YARN's `memorySeconds`, MB·s, and
    /// `vcoreSeconds`); the running ones' are added when reported.
    pub memory_seconds: u64,
    pub vcore_seconds: u64,
    /// YARN's `LIFETIME` timeout: killed by the rm at this time (ms since the epoch).
    pub lifetime_expiry_ms: Option<i64>,
}

/// What an application has allocated: now, and over its life so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub allocated_mb: u64,
    pub allocated_vcores: u64,
    pub memory_seconds: u64,
    pub vcore_seconds: u64,
}

impl NewApp {
    /// An application whose master command is yet to be said.
    pub fn new(id: &str, name: &str, user: &str, queue: &str) -> NewApp {
        NewApp {
            id: id.into(),
            name: name.into(),
            user: user.into(),
            queue: queue.into(),
            ..NewApp::default()
        }
    }
}

/// What the store keeps of an application: enough to report it after a restart.
#[derive(Debug, Clone, PartialEq)]
pub struct AppRecord {
    pub id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub lifecycle: Lifecycle,
    pub progress: f64,
    pub submitted_ms: i64,
    pub attempts: Vec<AttemptInfo>,
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    /// Stored as its epoch ms (`applications.deadline_ms`): records of any age read back.
    pub deadline: Option<Deadline>,
    pub result: Option<AppResult>,
    pub tags: Vec<String>,
    /// What its master registered of its work (task counts, profile), for the quotas.
    pub model: Option<JobModel>,
    pub yarn: YarnFields,
}

/// What a deadline-bound job answered: from how much of its input, the answer itself (opaque
/// to the rm: the master's JSON), and when the rm received it.
#[derive(Debug, Clone, PartialEq)]
pub struct AppResult {
    pub processed_fraction: f64,
    pub answer: serde_json::Value,
    /// The rm's clock when the answer arrived, ms since the epoch: the time its deadline
    /// outcome counts (see [`deadline_outcome`]).
    pub answered_ms: i64,
}

/// How long before its receipt at the rm an answer counts as given: none. The user reads the
/// answer from the rm, so it is given when the rm has it; an allowance for the call from the
/// master would call met what the user saw late (it was 1 s, half of a short job's deadline).
/// A master's own `job.outcome`, by its own clock, may say met for an answer that reached the
/// rm just after the deadline: the rm's `deadlineOutcome` is the one of record.
pub const ANSWER_TRANSIT_MS: i64 = 0;

/// Where an application stands against its deadline (`None`: it has none), from its deadline,
/// its answer (when the rm received it, from what fraction of the input), its end (when, and
/// whether it succeeded) and the time now; the last answer reported is the one that stands.
/// An answer is judged by the masters' rule ([`DeadlineOutcome::of_answer`]) at its receipt
/// less [`ANSWER_TRANSIT_MS`]. Without an answer: an application that succeeded answered by
/// its end, from all its input (a YARN application reports no result); one that failed or was
/// killed never will (missed); one still running has missed once the deadline has passed,
/// else it is pending.
pub fn deadline_outcome(
    deadline: Option<Deadline>,
    answer: Option<(i64, f64)>,
    end: Option<(i64, FinalApplicationStatus)>,
    now_ms: i64,
) -> Option<DeadlineOutcome> {
    let d = deadline?.epoch_ms();
    let by = |at: i64, fraction| {
        DeadlineOutcome::of_answer(d, at.saturating_sub(ANSWER_TRANSIT_MS), fraction)
    };
    Some(match (answer, end) {
        (Some((at, fraction)), _) => by(at, fraction),
        (None, Some((at, FinalApplicationStatus::Succeeded))) => by(at, 1.0),
        (None, Some(_)) => DeadlineOutcome::Missed,
        (None, None) if now_ms.saturating_sub(ANSWER_TRANSIT_MS) > d => DeadlineOutcome::Missed,
        (None, None) => DeadlineOutcome::Pending,
    })
}

impl AppInfo {
    /// [`deadline_outcome`] of this application at `now_ms`.
    pub fn deadline_outcome(&self, now_ms: i64) -> Option<DeadlineOutcome> {
        let end = self.lifecycle.state.is_final().then(|| {
            (
                self.yarn.finished_ms.unwrap_or(now_ms),
                self.lifecycle.final_status,
            )
        });
        deadline_outcome(
            self.deadline,
            self.result
                .as_ref()
                .map(|r| (r.answered_ms, r.processed_fraction)),
            end,
            now_ms,
        )
    }
}

impl AppInfo {
    pub fn record(&self) -> AppRecord {
        AppRecord {
            id: self.application_id.clone(),
            name: self.name.clone(),
            user: self.user.clone(),
            queue: self.queue.clone(),
            lifecycle: self.lifecycle.clone(),
            progress: self.progress,
            submitted_ms: self.submitted_ms,
            attempts: self.attempts.clone(),
            master_command: self.master_command.clone(),
            master_env: self.master_env.clone(),
            deadline: self.deadline,
            result: self.result.clone(),
            tags: self.tags.clone(),
            model: self.model,
            yarn: self.yarn.clone(),
        }
    }
}

/// One master attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptInfo {
    pub attempt: u32,
    pub container_id: String,
    pub node_id: String,
    pub started_ms: i64,
}

/// What the rm knows of an application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppInfo {
    pub application_id: String,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub lifecycle: Lifecycle,
    pub progress: f64,
    pub submitted_ms: i64,
    /// The master's container of the current attempt, once granted.
    pub master: Option<String>,
    /// Every master attempt's container, oldest first (Hadoop's appattempts).
    pub attempts: Vec<AttemptInfo>,
    /// How to start the master: its command and environment.
    pub master_command: Vec<String>,
    pub master_env: BTreeMap<String, String>,
    /// When the client wants the answer (yard's, not Hadoop's).
    pub deadline: Option<Deadline>,
    pub result: Option<AppResult>,
    pub tags: Vec<String>,
    /// What its master registered of its work, for the quotas.
    pub model: Option<JobModel>,
    /// Its quota under the cluster policy, as last computed (`None` under a policy without
    /// quotas).
    pub quota: Option<JobQuota>,
    /// Where the current master serves its own status, if it said (not kept across restarts:
    /// a master that survives one registers again).
    pub tracking_url: Option<String>,
    /// When the master last called (register or allocate), for the liveness check.
    pub master_seen_ms: i64,
    /// Its map and reduce types, as its master last said (seed 002 eq. 1–2; not kept across
    /// restarts: the master says it with every allocate).
    pub job_type: Option<JobType>,
    /// A MapReduce master's view of its job, as it last said (not kept across restarts: the
    /// master says it with every allocate).
    pub job_progress: Option<ProgressSeen>,
    /// When the job's estimate said it would answer, over time (at most one point a second,
    /// thinned to [`ESTIMATE_POINTS`] over the whole run).
    pub estimates: Vec<EstimatePoint>,
    /// YARN's report fields yard keeps (type, master resource, end, resource-seconds,
    /// lifetime).
    pub yarn: YarnFields,
    /// Granted or completed since the master last asked: its next allocate reply.
    pub(super) pending: AllocateReply,
}

/// A master's [`JobProgress`] and when the rm heard it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressSeen {
    pub progress: JobProgress,
    pub at_ms: i64,
    /// When the policy's estimate says the answer comes, on the rm's clock: now, plus the
    /// estimate less the time the phase has run.
    pub estimated_end_ms: Option<i64>,
}

/// One point of a job's estimate over time (the wire's type: the job view shows them as kept).
pub use yard_wire::jobs::EstimatePoint;

/// The most estimate points an application keeps: past it every other one goes, so the
/// points span the whole run at half the density.
pub const ESTIMATE_POINTS: usize = 512;

impl ProgressSeen {
    fn new(progress: JobProgress, at_ms: i64) -> ProgressSeen {
        let estimated_end_ms = progress.estimate_seconds.map(|e| {
            let left_ms = (e - progress.elapsed_seconds) * 1000.0;
            at_ms.saturating_add(left_ms.clamp(-1e15, 1e15) as i64)
        });
        ProgressSeen {
            progress,
            at_ms,
            estimated_end_ms,
        }
    }
}

/// A master's progress numbers are times and counts: anything else is a bug to refuse.
pub(super) fn check_progress(p: &JobProgress) -> Result<(), String> {
    let seconds = |x: f64| x.is_finite() && x >= 0.0;
    if !seconds(p.elapsed_seconds) || !p.estimate_seconds.is_none_or(seconds) {
        return Err(format!(
            "job.elapsedSeconds and job.estimateSeconds are seconds from 0 up (got {} and {:?})",
            p.elapsed_seconds, p.estimate_seconds
        ));
    }
    if p.maps_done > p.maps || p.reduces_done > p.reduces || p.processed_bytes > p.input_bytes {
        return Err(format!(
            "job counts done exceed their totals (maps {}/{}, reduces {}/{}, bytes {}/{})",
            p.maps_done, p.maps, p.reduces_done, p.reduces, p.processed_bytes, p.input_bytes
        ));
    }
    Ok(())
}

impl AppInfo {
    pub(super) fn heard(&mut self, progress: JobProgress, now_ms: i64) {
        let seen = ProgressSeen::new(progress, now_ms);
        if let Some(end) = seen.estimated_end_ms
            && self
                .estimates
                .last()
                .is_none_or(|p| now_ms - p.at_ms >= 1_000)
        {
            if self.estimates.len() >= ESTIMATE_POINTS {
                let mut i = 0;
                self.estimates.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
            }
            self.estimates.push(EstimatePoint {
                at_ms: now_ms,
                estimated_end_ms: end,
            });
        }
        self.job_progress = Some(seen);
    }
}

/// How long an issued application id may wait for its submission.
pub(super) const ISSUED_TTL_MS: i64 = 3_600_000;
/// The most issued, unsubmitted application ids at once (each is a few bytes; the cap bounds a
/// client that asks in a loop).
pub const MAX_ISSUED: usize = 10_000;

impl Cluster {
    /// The attempt whose master may act for `id` now: the latest, while the application runs
    /// or waits for that master.
    pub fn current_attempt(&self, id: &str) -> Option<u32> {
        self.apps
            .get(id)
            .filter(|a| !a.lifecycle.state.is_final())
            .map(|a| a.lifecycle.attempts)
    }

    pub fn apps(&self) -> impl Iterator<Item = &AppInfo> {
        self.apps.values()
    }

    pub fn app(&self, id: &str) -> Option<&AppInfo> {
        self.apps.get(id)
    }

    /// `new-application`: an id for an application `owner` is about to submit. Only ids issued
    /// here may be submitted, by their owner (or an admin), once; one not submitted within an
    /// hour lapses, and at most [`MAX_ISSUED`] wait at once.
    pub fn new_application(&mut self, now_ms: i64, owner: &str) -> Result<String, ClusterError> {
        self.issued
            .retain(|_, (_, issued_ms)| now_ms - *issued_ms <= ISSUED_TTL_MS);
        if self.issued.len() >= MAX_ISSUED {
            return Err(ClusterError::TooManyIssued(self.issued.len()));
        }
        let id = format!("application_{}_{:04}", self.epoch, self.next_app);
        self.next_app += 1;
        self.issued.insert(id.clone(), (owner.to_owned(), now_ms));
        Ok(id)
    }

    /// [`Cluster::submit`] by `caller`, who must be the one the id was issued to (or an admin).
    pub fn submit_issued(
        &mut self,
        now_ms: i64,
        new: NewApp,
        caller: &Principal,
    ) -> Result<(), ClusterError> {
        if let Some((owner, _)) = self.issued.get(&new.id)
            && !caller.owns(owner)
        {
            return Err(ClusterError::IssuedToOther {
                id: new.id,
                owner: owner.clone(),
                caller: caller.user().unwrap_or("?").to_owned(),
            });
        }
        self.check_queue(&new.queue, &new.user, caller.is_admin())?;
        self.submit(now_ms, new)
    }

    /// Whether `user` may submit to `queue`: it must exist, and its acl-submit-applications
    /// admit the user (an `admin` caller may submit to any queue).
    pub fn check_queue(&self, queue: &str, user: &str, admin: bool) -> Result<(), ClusterError> {
        Ok(self.scheduler.queues().check_submit(queue, user, admin)?)
    }

    /// The capacity queues (one, `default`, without a queue file).
    pub fn queues(&self) -> &yard_cluster::queues::Queues {
        self.scheduler.queues()
    }

    /// Submits an application whose id this rm issued; it is accepted at once and its
    /// master's container asked for.
    pub fn submit(&mut self, now_ms: i64, new: NewApp) -> Result<(), ClusterError> {
        let NewApp {
            id,
            name,
            user,
            queue,
            master_command: command,
            master_env: env,
            deadline,
            tags,
            application_type,
            am_resource,
            max_attempts,
        } = new;
        let (id, name, user, queue) = (id.as_str(), name.as_str(), user.as_str(), queue.as_str());
        self.now_ms = now_ms;
        if self.apps.contains_key(id) {
            return Err(ClusterError::AlreadySubmitted(id.to_owned()));
        }
        if self.issued.remove(id).is_none() {
            return Err(ClusterError::NotIssued(id.to_owned()));
        }
        // YARN's rule: a submission's max-app-attempts counts when it is 1 to the rm's own.
        let attempts = match max_attempts {
            Some(n) if (1..=self.settings.am_max_attempts).contains(&n) => n,
            _ => self.settings.am_max_attempts,
        };
        let mut lifecycle = Lifecycle::new(attempts);
        lifecycle.apply(AppEvent::Submit)?;
        let am = am_resource.unwrap_or(self.settings.am_resource);
        let yarn = YarnFields {
            application_type: if application_type.is_empty() {
                "YARN".into()
            } else {
                application_type
            },
            am_memory_mb: am.memory_mb,
            am_vcores: am.vcores,
            ..YarnFields::default()
        };
        let app = AppId(self.app_index.len() as u64 + 1);
        self.app_index.insert(app, id.to_owned());
        self.app_ids.insert(id.to_owned(), app);
        self.apps.insert(
            id.to_owned(),
            AppInfo {
                application_id: id.to_owned(),
                name: name.to_owned(),
                user: user.to_owned(),
                queue: queue.to_owned(),
                lifecycle,
                progress: 0.0,
                submitted_ms: now_ms,
                master: None,
                attempts: Vec::new(),
                master_command: command,
                master_env: env,
                deadline,
                result: None,
                tags,
                model: None,
                yarn,
                quota: None,
                master_seen_ms: now_ms,
                tracking_url: None,
                job_type: None,
                job_progress: None,
                estimates: Vec::new(),
                pending: AllocateReply::default(),
            },
        );
        self.schedule(SchedEvent::AppAdded {
            app,
            queue: queue.to_owned(),
            user: user.to_owned(),
            weight: 1.0,
        });
        if let Some(d) = deadline {
            self.schedule(SchedEvent::Deadline {
                app,
                deadline: Some(d),
            });
        }
        self.transition(id, AppEvent::Accept)
    }

    /// The master registered: the application runs.
    pub fn master_registered(
        &mut self,
        id: &str,
        tracking_url: Option<String>,
    ) -> Result<(), ClusterError> {
        self.transition(id, AppEvent::MasterRegistered)?;
        let now = self.now_ms;
        if let Some(app) = self.apps.get_mut(id) {
            app.master_seen_ms = now;
            app.tracking_url = tracking_url;
        }
        Ok(())
    }

    /// The master unregistered at `now_ms` with its final status and its diagnostics (YARN's
    /// FinishApplicationMasterRequest: why it failed, kept in the application's diagnostics).
    pub fn master_finished(
        &mut self,
        now_ms: i64,
        id: &str,
        succeeded: bool,
        diagnostics: &str,
    ) -> Result<(), ClusterError> {
        self.now_ms = now_ms;
        self.transition(id, AppEvent::MasterFinished { succeeded })?;
        self.debug_check();
        let said = diagnostics.trim();
        if let Some(app) = self.apps.get_mut(id)
            && !said.is_empty()
        {
            let d = &mut app.lifecycle.diagnostics;
            *d = if d.is_empty() {
                said.to_owned()
            } else {
                format!("{d}: {said}")
            };
        }
        Ok(())
    }

    /// The client says when it wants the answer (any time before the application ends).
    pub fn set_deadline(&mut self, id: &str, deadline: Deadline) -> Result<(), ClusterError> {
        self.change_unfinished(id, |app| app.deadline = Some(deadline))?;
        let app = self.app_of(id);
        self.schedule(SchedEvent::Deadline {
            app,
            deadline: Some(deadline),
        });
        Ok(())
    }

    /// What the running master of `id` says of its work (task counts, a profile): the
    /// policies size its quota by it. Kept across rm restarts.
    pub fn set_model(&mut self, id: &str, model: JobModel) -> Result<(), ClusterError> {
        self.change_unfinished(id, |app| app.model = Some(model))?;
        let app = self.app_of(id);
        self.schedule(SchedEvent::Model {
            app,
            model: Some(model),
        });
        Ok(())
    }

    /// Changes application `id` with `f` unless it has ended, and marks it for the store.
    fn change_unfinished(
        &mut self,
        id: &str,
        f: impl FnOnce(&mut AppInfo),
    ) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state.is_final() {
            return Err(ClusterError::Ended(id.into()));
        }
        f(app);
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    /// A running master reports its answer (again, as it improves); the last one stands.
    pub fn report_result(&mut self, id: &str, result: AppResult) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state != YarnApplicationState::Running {
            return Err(ClusterError::NotRunning(id.into()));
        }
        app.result = Some(result);
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    pub fn kill(&mut self, id: &str) -> Result<(), ClusterError> {
        self.transition(id, AppEvent::Kill)?;
        self.debug_check();
        Ok(())
    }

    /// Sets (or with `None` lifts) YARN's `LIFETIME` timeout of an unfinished application.
    pub fn set_lifetime(&mut self, id: &str, expiry_ms: Option<i64>) -> Result<(), ClusterError> {
        let app = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.into()))?;
        if app.lifecycle.state.is_final() {
            return Err(ClusterError::Ended(id.into()));
        }
        app.yarn.lifetime_expiry_ms = expiry_ms;
        self.dirty_apps.insert(id.into());
        Ok(())
    }

    pub(super) fn app_of(&self, id: &str) -> AppId {
        self.app_ids[id]
    }

    pub(super) fn transition(&mut self, id: &str, event: AppEvent) -> Result<(), ClusterError> {
        let info = self
            .apps
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownApp(id.to_owned()))?;
        let action = info.lifecycle.apply(event)?;
        if info.lifecycle.state.is_final() && info.yarn.finished_ms.is_none() {
            info.yarn.finished_ms = Some(self.now_ms);
        }
        if info.lifecycle.state.is_final() {
            // Its recovery entries are of no use any more (the store drops them with the
            // application's final record).
            self.recovery.remove(id);
        }
        self.dirty_apps.insert(id.to_owned());
        match &mut self.held {
            Some((held_for, actions)) if held_for == id => actions.push(action),
            _ => self.act(id, action),
        }
        Ok(())
    }

    /// Carries out what a transition of `id` calls for.
    pub(super) fn act(&mut self, id: &str, action: AppAction) {
        let app = self.app_of(id);
        match action {
            AppAction::None => {}
            AppAction::LaunchMaster { .. } => {
                // A new attempt: the dead attempt's asks go first (else the room its
                // containers leave would be granted straight back to them, for a master that
                // is gone), then its containers, then the new master is asked for.
                self.schedule(SchedEvent::AsksWithdrawn(app));
                self.stop_all(id);
                self.ask_master(app);
            }
            AppAction::StopContainers => {
                // The scheduler forgets the application (its asks and its holdings) before
                // the book frees its containers, for the same reason.
                self.schedule(SchedEvent::AppRemoved(app));
                self.stop_all(id);
                self.delete_uncommitted_output(id);
            }
        }
    }

    /// Ends every container of `id`: freed now, its node told to stop it.
    pub(super) fn stop_all(&mut self, id: &str) {
        if let Some(info) = self.apps.get_mut(id) {
            info.master = None;
        }
        let held: Vec<String> = self.book.of_app(id).map(|(c, _)| c.clone()).collect();
        for c in held {
            self.free(&c, ContainerEnd::Killed, Stop::Yes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_outcome_is_judged_at_the_answers_receipt_less_its_transit() {
        use DeadlineOutcome::*;
        let d = 10_000;
        let t = ANSWER_TRANSIT_MS;
        let judge =
            |answer, end, now| deadline_outcome(Some(Deadline::from_epoch_ms(d)), answer, end, now);
        assert_eq!(deadline_outcome(None, Some((1, 1.0)), None, 0), None);
        assert_eq!(judge(Some((d + t, 0.3)), None, d + t), Some(Met));
        assert_eq!(judge(Some((d + t + 1, 0.3)), None, d + t + 1), Some(Missed));
        assert_eq!(judge(Some((d, 0.0)), None, d), Some(Empty));
        // The answer stands whatever the end.
        let failed = Some((d + 50_000, FinalApplicationStatus::Failed));
        assert_eq!(judge(Some((d, 0.5)), failed, d + 60_000), Some(Met));
        // No answer: a successful end is the answer; any other end, none will come.
        let succeeded = |at| Some((at, FinalApplicationStatus::Succeeded));
        assert_eq!(judge(None, succeeded(d - 1), d + 60_000), Some(Met));
        assert_eq!(judge(None, succeeded(d + t + 1), d + t + 1), Some(Missed));
        for end in [
            FinalApplicationStatus::Failed,
            FinalApplicationStatus::Killed,
        ] {
            assert_eq!(judge(None, Some((0, end)), 0), Some(Missed));
        }
        // Running: pending until the deadline and the transit allowance have passed.
        assert_eq!(judge(None, None, d + t), Some(Pending));
        assert_eq!(judge(None, None, d + t + 1), Some(Missed));
    }
}
