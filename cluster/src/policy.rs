//! The cluster policies: which application's ask is served first, how many containers it may
//! hold, and whose containers are taken back for whom. Pure functions of a view of the jobs,
//! with the time passed in: the [`Scheduler`](crate::scheduler::Scheduler) calls them for the
//! live rm, and a simulator can call the same functions (or drive the whole scheduler) on a
//! virtual clock.
//!
//! Five policies ([`ClusterPolicy`]):
//! - `fifo`: arrival order, each application served as far as it asks (YARN's FIFO);
//! - `fair`: the application furthest below its weighted share of memory first (one level);
//! - `edf`: earliest deadline first, each application served as far as it asks (Hadoop's
//!   default allocation under EDF ordering: "the maximum number of available slots is
//!   allocated to each job at the head of the queue", seed 000 §III-B);
//! - `minedf`: EDF order, each job served only up to its minimum quota (ARIA's Lagrange
//!   optimum, [`aria::min_quota`]), recomputed as time passes on the remaining tasks and the
//!   remaining time; spare containers stay idle for arrivals to come (seed 000 §III-B);
//! - `minedf-wc`: MinEDF made work-conserving: spare containers go to jobs beyond their quota,
//!   and are taken back for a job that needs them, by waiting for them when the profiles
//!   predict they free up in time, else by killing above-quota tasks only (seed 000 §III-C,
//!   Alg. 1, as papers/aria.md §1.6 corrects it).
//!
//! The release rule (Alg. 1, lines 30–35) is two tiers: a freed container goes to the
//! earliest-deadline job below its quota ([`Tier::Quota`]); only when there is none, under
//! `minedf-wc`, to the earliest-deadline job that still wants one ([`Tier::Spare`]).
//!
//! A job is in one stage at a time: its maps (while any is not done), then its reduces (Alg. 1
//! gives reduce slots only to jobs whose maps are complete, lines 14 and 34; yard's masters
//! start their reduces when the map phase closes). Its quota in containers is its quota for
//! the stage it is in.
//!
//! It owns the rules only (orders, quotas, reclamation) over a view of the jobs the caller
//! builds; it keeps no state of its own and knows nothing of the scheduler or the classifier.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use yard_wire::deadline::Deadline;

use crate::aria::{self, Basis, Profile, Quota, Seconds, Target};
use crate::ids::AppId;

/// Which cluster policy the rm runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum ClusterPolicy {
    /// Earliest arrival first (YARN's FIFO scheduler).
    #[default]
    Fifo,
    /// The application furthest below its weighted fair share of memory first; ties by
    /// arrival (YARN's fair scheduler, one level, without preemption).
    Fair,
    /// Earliest deadline first, no quota.
    Edf,
    /// EDF with each job's minimum quota; spare containers idle.
    MinEdf,
    /// MinEDF, work-conserving: spare containers to jobs beyond their quota, reclaimed when
    /// an earlier deadline needs them.
    MinEdfWc,
}

impl ClusterPolicy {
    pub const ALL: [ClusterPolicy; 5] = [
        ClusterPolicy::Fifo,
        ClusterPolicy::Fair,
        ClusterPolicy::Edf,
        ClusterPolicy::MinEdf,
        ClusterPolicy::MinEdfWc,
    ];

    /// The name `--scheduler` takes.
    pub fn name(self) -> &'static str {
        match self {
            ClusterPolicy::Fifo => "fifo",
            ClusterPolicy::Fair => "fair",
            ClusterPolicy::Edf => "edf",
            ClusterPolicy::MinEdf => "minedf",
            ClusterPolicy::MinEdfWc => "minedf-wc",
        }
    }

    /// `scheduler.schedulerInfo.type`, in YARN's spelling where YARN has the scheduler.
    pub fn yarn_type(self) -> &'static str {
        match self {
            ClusterPolicy::Fifo => "fifoScheduler",
            ClusterPolicy::Fair => "fairScheduler",
            ClusterPolicy::Edf => "edfScheduler",
            ClusterPolicy::MinEdf => "minEdfScheduler",
            ClusterPolicy::MinEdfWc => "minEdfWcScheduler",
        }
    }

    /// Orders by deadline (EDF and the MinEDFs).
    pub fn by_deadline(self) -> bool {
        matches!(
            self,
            ClusterPolicy::Edf | ClusterPolicy::MinEdf | ClusterPolicy::MinEdfWc
        )
    }

    /// Limits each job to its minimum quota (in the first tier).
    pub fn uses_quota(self) -> bool {
        matches!(self, ClusterPolicy::MinEdf | ClusterPolicy::MinEdfWc)
    }

    /// Gives spare containers beyond the quotas, and takes them back.
    pub fn work_conserving(self) -> bool {
        self == ClusterPolicy::MinEdfWc
    }
}

impl fmt::Display for ClusterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ClusterPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClusterPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                format!(
                    "unknown scheduler {s:?}: use one of {}",
                    ClusterPolicy::ALL.map(ClusterPolicy::name).join(", ")
                )
            })
    }
}

/// The stage a job is in (every map done or not), as the REST views carry it.
pub use yard_wire::views::QuotaStage as Stage;

/// What a job's master said of its work: its tasks, and a profile to size them by.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobModel {
    pub maps: u32,
    pub reduces: u32,
    #[serde(default)]
    pub profile: Option<Profile>,
}

/// Why a job has the quota it has (each variant's doc says when), as the REST views carry it.
pub use yard_wire::views::QuotaBasis;

/// A job's quota in containers for the stage it is in, `None` for no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobQuota {
    pub stage: Stage,
    /// Containers the job may hold in the first tier; `None`: as many as it asks for.
    pub containers: Option<u32>,
    /// ARIA's map and reduce slots, when computed.
    pub maps: Option<u32>,
    pub reduces: Option<u32>,
    pub basis: QuotaBasis,
}

/// The stage of a job with `model` once `maps_done` maps are done: reduce when every map is.
pub(crate) fn stage_of(model: Option<JobModel>, maps_done: u32) -> Stage {
    match model {
        Some(m) if maps_done >= m.maps => Stage::Reduce,
        _ => Stage::Map,
    }
}

/// One job as the policies see it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    pub app: AppId,
    /// Arrival order (ties in every ordering).
    pub arrival: u64,
    /// When its answer is due, on the scheduler's clock (the rm's: the Unix epoch; the
    /// simulator's: its own, from 0); `None`: no deadline.
    pub deadline: Option<Deadline>,
    pub model: Option<JobModel>,
    pub maps_done: u32,
    pub reduces_done: u32,
    /// Task containers held now (not a master's, not one being preempted).
    pub running: u32,
    /// Task containers asked for and not granted.
    pub waiting: u32,
    /// Its quota, as last computed.
    pub quota: Option<JobQuota>,
}

impl JobView {
    /// The stage the job is in.
    pub fn stage(&self) -> Stage {
        stage_of(self.model, self.maps_done)
    }

    /// Containers held above the quota: the job's spare ones (0 when it has no quota).
    pub fn extra(&self) -> u32 {
        match self.quota.and_then(|q| q.containers) {
            Some(q) => self.running.saturating_sub(q),
            None => 0,
        }
    }

    /// Its tasks' average duration in the stage it is in (`M_avg^j` or `R_avg^j`), seconds.
    fn task_seconds(&self) -> Option<Seconds> {
        let p = self.model?.profile?;
        Some(match self.stage() {
            Stage::Map => p.map.avg,
            Stage::Reduce => p.reduce.avg,
        })
    }
}

/// ComputeMinResources over what is left (papers/aria.md §1.4, [INF]): the remaining tasks
/// and the remaining time, `D_J − (now − T_J^ar)` = the deadline less now.
pub(crate) fn quota_of(
    kind: ClusterPolicy,
    job: &JobView,
    now_ms: i64,
    slots: u32,
    target: Target,
) -> JobQuota {
    quota_within(kind, job, remaining_seconds(job, now_ms), slots, target)
}

/// ARIA's time left, `D_J − (now − T_J^ar)`: seconds from `now_ms` to the deadline (negative
/// once it has passed; `Deadline::seconds_from` clamps, for a task policy, which this must not).
fn remaining_seconds(job: &JobView, now_ms: i64) -> Option<Seconds> {
    job.deadline
        .map(|d| d.epoch_ms().saturating_sub(now_ms) as f64 / 1000.0)
}

/// The quota of `job` were `d` seconds left (`None`: no deadline), on a cluster of `slots`.
fn quota_within(
    kind: ClusterPolicy,
    job: &JobView,
    d: Option<Seconds>,
    slots: u32,
    target: Target,
) -> JobQuota {
    let stage = job.stage();
    let unlimited = |basis| JobQuota {
        stage,
        containers: None,
        maps: None,
        reduces: None,
        basis,
    };
    if !kind.uses_quota() {
        return unlimited(QuotaBasis::NoModel);
    }
    let Some(d) = d else {
        return if kind.work_conserving() {
            JobQuota {
                containers: Some(0),
                ..unlimited(QuotaBasis::NoDeadline)
            }
        } else {
            unlimited(QuotaBasis::NoDeadline)
        };
    };
    let Some((model, profile)) = job.model.and_then(|m| Some((m, m.profile?))) else {
        return unlimited(QuotaBasis::NoModel);
    };
    let n_m = model.maps.saturating_sub(job.maps_done);
    let n_r = model.reduces.saturating_sub(job.reduces_done);
    let Quota {
        maps,
        reduces,
        basis,
    } = aria::min_quota(&profile, n_m, n_r, d, (slots, slots), target);
    if basis == Basis::Done {
        // The model says nothing is left: whatever is still asked is beyond it.
        return unlimited(QuotaBasis::Done);
    }
    JobQuota {
        stage,
        containers: Some(match stage {
            Stage::Map => maps,
            Stage::Reduce => reduces,
        }),
        maps: Some(maps),
        reduces: Some(reduces),
        basis: match basis {
            Basis::Feasible => QuotaBasis::Feasible,
            Basis::Infeasible | Basis::Done => QuotaBasis::Infeasible,
        },
    }
}

/// Where a job stands in the release rule (seed 000 Alg. 1, lines 30–35).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    /// Below its quota (or without one): served first, in the policy's order (lines 31, 34).
    Quota,
    /// At or above its quota, under `minedf-wc`: a spare container (lines 32, 35).
    Spare,
}

/// The tier a job with `running` task containers wanting more is served in, if any.
pub(crate) fn tier(kind: ClusterPolicy, quota: Option<&JobQuota>, running: u32) -> Option<Tier> {
    match quota.and_then(|q| q.containers) {
        Some(q) if running >= q => kind.work_conserving().then_some(Tier::Spare),
        _ => Some(Tier::Quota),
    }
}

/// When a job is due, in EDF's order: every deadline (earliest first) before none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Due {
    At(Deadline),
    Never,
}

/// The EDF key: deadline (none last), then arrival.
pub(crate) fn edf_key(deadline: Option<Deadline>, arrival: u64) -> (Due, u64) {
    (deadline.map_or(Due::Never, Due::At), arrival)
}

/// What Alg. 1 knows of the cluster when it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClusterState {
    pub kind: ClusterPolicy,
    /// `F`: containers free for the new job now (for the stage it is in; one pool of
    /// containers serves both stages on a live cluster), plus those already being taken back.
    pub free: u32,
    pub now_ms: i64,
    /// Containers the whole cluster holds: the cap of every quota.
    pub slots: u32,
    pub target: Target,
}

/// What MinEDF-WC decides for a job short of its quota (Alg. 1, lines 1–29).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reclaim {
    /// The free containers cover its quota (line 4).
    Fits,
    /// Containers that other jobs hold above their quotas free up soon enough: wait until
    /// `until_ms` for them (lines 6–21).
    Wait { until_ms: i64 },
    /// Kill this many above-quota tasks of each job, latest deadline first (lines 22–29).
    Kill(Vec<(AppId, u32)>),
    /// Not even every spare container would do: the job gets what frees up, in EDF order.
    Short,
}

/// MinEDF-WC's reclamation for `new` (seed 000 Alg. 1 as papers/aria.md §1.6 corrects it):
///
/// 1. line 2: its quota for the time left; line 4: enough free containers → [`Reclaim::Fits`];
/// 2. lines 6–21, *predict before kill*: the other jobs, shortest tasks first (`M_avg^j` in
///    their map stage, `R_avg^j` in their reduce stage), each adds its above-quota
///    containers to `F` (they free up as their tasks end, in about one task's time), and
///    `new`'s quota is recomputed with that much less time (`D − M_avg^j`; the paper writes
///    the result into job j's quota: an error the digest corrects); once it fits →
///    [`Reclaim::Wait`] until then. Skipped when `predict` is false (the predicted releases
///    did not come: a live master keeps its container for its next task);
/// 3. lines 22–29, the last resort: with the full time left again [INF], kill above-quota
///    tasks only, of the latest deadline first [INF], and only as many as `new` still lacks
///    [INF: the paper kills every extra of each job in turn; the extras beyond the shortfall
///    would only run again] → [`Reclaim::Kill`]; if even every extra is not enough,
///    [`Reclaim::Short`] (nothing is killed for a deadline that cannot be met that way).
///
/// `at.free` is what is free now plus what is already being taken back. Jobs without a quota
/// (no model) hold no extras; a job without a deadline under `minedf-wc` has quota 0, so all
/// its containers are extras.
pub(crate) fn reclaim(
    new: &JobView,
    others: &[&JobView],
    at: ClusterState,
    predict: bool,
) -> Reclaim {
    let ClusterState {
        kind,
        free,
        now_ms,
        slots,
        target,
    } = at;
    let d = remaining_seconds(new, now_ms);
    let need = |d: Option<Seconds>| {
        quota_within(kind, new, d, slots, target)
            .containers
            .unwrap_or(0)
            .saturating_sub(new.running)
    };
    // Line 4 (with `≤`, the natural test; the paper prints a strict `<` [AMB]).
    if need(d) <= free {
        return Reclaim::Fits;
    }
    if predict && let Some(d) = d {
        // Line 6: shortest tasks first.
        let mut by_duration: Vec<(&JobView, Seconds)> = others
            .iter()
            .filter_map(|j| Some((*j, j.task_seconds()?)))
            .collect();
        by_duration.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.arrival.cmp(&b.0.arrival)));
        let mut f = free;
        for (j, seconds) in by_duration {
            let extra = j.extra();
            if extra == 0 {
                continue;
            }
            // Lines 10–11 (16–17): j's spare containers free up as its tasks end.
            f = f.saturating_add(extra);
            // Lines 12–13 (18–19): less time for `new`, by one of j's tasks; it must still
            // meet its deadline (an infeasible quota is "everything", which may well fit).
            let later = quota_within(kind, new, Some(d - seconds), slots, target);
            if later.basis == QuotaBasis::Feasible && need(Some(d - seconds)) <= f {
                return Reclaim::Wait {
                    until_ms: now_ms.saturating_add((seconds * 1000.0).ceil() as i64),
                };
            }
        }
    }
    // Lines 22–29: kill spare tasks, latest deadline first; with the full time again.
    let mut short = need(d).saturating_sub(free);
    let mut victims: Vec<&JobView> = others.iter().copied().filter(|j| j.extra() > 0).collect();
    victims.sort_by_key(|j| std::cmp::Reverse(edf_key(j.deadline, j.arrival)));
    let spare: u32 = victims.iter().map(|j| j.extra()).sum();
    if spare < short {
        return Reclaim::Short;
    }
    let mut kills = Vec::new();
    for j in victims {
        if short == 0 {
            break;
        }
        let k = j.extra().min(short);
        kills.push((j.app, k));
        short -= k;
    }
    Reclaim::Kill(kills)
}

/// Counts of MinEDF-WC's spare containers (seed 000 §IV-A, metrics 4 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpareCounts {
    /// Containers granted beyond a job's quota.
    pub spare_allocations: u64,
    /// Above-quota containers taken back by killing their tasks.
    pub spare_kills: u64,
    /// Of the allocations, those to a job in its map stage (ARIA's "extra map tasks"; the
    /// rest were in their reduce stage), and of the kills, those of a job in its map stage
    /// (ARIA's "map tasks killed").
    pub spare_map_allocations: u64,
    pub spare_map_kills: u64,
}

/// Every job's quota, for reports: by application.
pub type Quotas = BTreeMap<AppId, JobQuota>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aria::Durations;

    fn profile(map: f64, reduce: f64) -> Profile {
        Profile {
            map: Durations::new(map, map * 1.5),
            first_shuffle: Durations::new(0.0, 0.0),
            typical_shuffle: Durations::new(0.0, 0.0),
            reduce: Durations::new(reduce, reduce * 1.5),
        }
    }

    fn job(app: u64, deadline_s: Option<i64>, maps: u32, map_s: f64) -> JobView {
        JobView {
            app: AppId(app),
            arrival: app,
            deadline: deadline_s.map(|s| Deadline::from_epoch_ms(s * 1000)),
            model: Some(JobModel {
                maps,
                reduces: 0,
                profile: Some(profile(map_s, 0.0)),
            }),
            maps_done: 0,
            reduces_done: 0,
            running: 0,
            waiting: maps,
            quota: None,
        }
    }

    /// A cluster of 64 containers at t = 0 under MinEDF-WC, `free` of them free.
    fn state(free: u32) -> ClusterState {
        ClusterState {
            kind: ClusterPolicy::MinEdfWc,
            free,
            now_ms: 0,
            slots: 64,
            target: Target::Avg,
        }
    }

    fn with_quota(mut j: JobView, kind: ClusterPolicy, now_ms: i64) -> JobView {
        j.quota = Some(quota_of(kind, &j, now_ms, 64, Target::Avg));
        j
    }

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_choices() {
        for p in ClusterPolicy::ALL {
            assert_eq!(p.name().parse::<ClusterPolicy>(), Ok(p));
        }
        assert_eq!(
            "MinEDF-WC".parse::<ClusterPolicy>(),
            Ok(ClusterPolicy::MinEdfWc)
        );
        let e = "lifo".parse::<ClusterPolicy>().unwrap_err();
        assert!(e.contains("fifo, fair, edf, minedf, minedf-wc"), "{e}");
    }

    #[test]
    fn minedf_gives_the_minimum_quota_of_what_is_left() {
        // 100 maps of 10 s (max 15), 100 s left: avg a = 995, c = 7.5 → ⌈995/92.5⌉ = 11.
        let j = job(1, Some(100), 100, 10.0);
        let q = quota_of(ClusterPolicy::MinEdf, &j, 0, 64, Target::Avg);
        assert_eq!((q.containers, q.basis), (Some(11), QuotaBasis::Feasible));
        // Half the maps done half-way: ⌈(50−0.5)·10/(50−7.5)⌉ = 12.
        let half = JobView {
            maps_done: 50,
            ..j.clone()
        };
        let q = quota_of(ClusterPolicy::MinEdf, &half, 50_000, 64, Target::Avg);
        assert_eq!(q.containers, Some(12));
        // Past the deadline: everything it can use.
        let q = quota_of(ClusterPolicy::MinEdf, &j, 200_000, 64, Target::Avg);
        assert_eq!((q.containers, q.basis), (Some(64), QuotaBasis::Infeasible));
        // EDF and FIFO have no quota.
        assert_eq!(
            quota_of(ClusterPolicy::Edf, &j, 0, 64, Target::Avg).containers,
            None
        );
    }

    #[test]
    fn a_job_the_rm_cannot_model_has_no_quota_and_one_without_deadline_runs_on_spare() {
        let mut j = job(1, Some(100), 10, 1.0);
        j.model = None;
        let q = quota_of(ClusterPolicy::MinEdfWc, &j, 0, 64, Target::Avg);
        assert_eq!((q.containers, q.basis), (None, QuotaBasis::NoModel));
        let j = job(1, None, 10, 1.0);
        let q = quota_of(ClusterPolicy::MinEdfWc, &j, 0, 64, Target::Avg);
        assert_eq!((q.containers, q.basis), (Some(0), QuotaBasis::NoDeadline));
        assert_eq!(
            tier(ClusterPolicy::MinEdfWc, Some(&q), 0),
            Some(Tier::Spare)
        );
        let q = quota_of(ClusterPolicy::MinEdf, &j, 0, 64, Target::Avg);
        assert_eq!((q.containers, q.basis), (None, QuotaBasis::NoDeadline));
    }

    #[test]
    fn the_release_rule_has_two_tiers_under_minedf_wc_and_one_under_minedf() {
        let q = JobQuota {
            stage: Stage::Map,
            containers: Some(3),
            maps: Some(3),
            reduces: Some(0),
            basis: QuotaBasis::Feasible,
        };
        for kind in [ClusterPolicy::MinEdf, ClusterPolicy::MinEdfWc] {
            assert_eq!(tier(kind, Some(&q), 2), Some(Tier::Quota));
        }
        assert_eq!(tier(ClusterPolicy::MinEdf, Some(&q), 3), None);
        assert_eq!(
            tier(ClusterPolicy::MinEdfWc, Some(&q), 3),
            Some(Tier::Spare)
        );
        assert_eq!(tier(ClusterPolicy::Edf, None, 1000), Some(Tier::Quota));
    }

    #[test]
    fn the_stage_follows_the_maps() {
        let mut j = job(1, Some(100), 4, 1.0);
        assert_eq!(j.stage(), Stage::Map);
        j.maps_done = 4;
        assert_eq!(j.stage(), Stage::Reduce);
    }

    #[test]
    fn enough_free_containers_fit_without_touching_anyone() {
        let new = with_quota(job(2, Some(100), 100, 10.0), ClusterPolicy::MinEdfWc, 0);
        assert_eq!(reclaim(&new, &[], state(11), true), Reclaim::Fits);
    }

    #[test]
    fn predict_before_kill_waits_when_spare_containers_free_up_in_time() {
        // The new job needs 11 containers for 100 s; none is free. Job 1 (later deadline)
        // holds 20, quota 5: its 15 extras free up as its 2 s maps end. With 98 s left the
        // new job needs ⌈995/90.5⌉ = 11 ≤ 15: wait, about one of job 1's maps.
        let kind = ClusterPolicy::MinEdfWc;
        let mut busy = with_quota(job(1, Some(10_000), 1000, 2.0), kind, 0);
        busy.running = 20;
        busy.quota.as_mut().unwrap().containers = Some(5);
        let new = with_quota(job(2, Some(100), 100, 10.0), kind, 0);
        let r = reclaim(&new, &[&busy], state(0), true);
        assert_eq!(r, Reclaim::Wait { until_ms: 2_000 });
    }

    #[test]
    fn when_waiting_is_not_enough_only_above_quota_tasks_are_killed_latest_deadline_first() {
        let kind = ClusterPolicy::MinEdfWc;
        // Two jobs with long maps (600 s): waiting for them takes longer than the new job
        // has. Job 1: deadline 5000 s, 8 held, quota 6 (2 extra). Job 3: deadline 9000 s,
        // 6 held, quota 1 (5 extra). The new job needs 11 and 4 are free: 7 short.
        let mut a = with_quota(job(1, Some(5_000), 100, 600.0), kind, 0);
        a.running = 8;
        a.quota.as_mut().unwrap().containers = Some(6);
        let mut b = with_quota(job(3, Some(9_000), 100, 600.0), kind, 0);
        b.running = 6;
        b.quota.as_mut().unwrap().containers = Some(1);
        let new = with_quota(job(2, Some(100), 100, 10.0), kind, 0);
        let r = reclaim(&new, &[&a, &b], state(4), true);
        // Latest deadline first (job 3: all 5 extras), then 2 of job 1's; never a quota task.
        assert_eq!(r, Reclaim::Kill(vec![(AppId(3), 5), (AppId(1), 2)]));
        // Not predicting (the promised releases did not come): straight to the kills.
        let mut quick = a.clone();
        quick.model.as_mut().unwrap().profile = Some(profile(1.0, 0.0));
        let r = reclaim(&new, &[&quick, &b], state(4), false);
        assert!(matches!(r, Reclaim::Kill(_)), "{r:?}");
        // Too few extras in all: nothing is killed.
        let r = reclaim(&new, &[&a], state(4), true);
        assert_eq!(r, Reclaim::Short);
    }
}
