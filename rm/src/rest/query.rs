//! Hadoop's query parameters: a route's pairs (an unknown key is a 400), name lists, time
//! filters and `/apps`'s filter set, with yard's own beside YARN's where YARN has none: `search`
//! (id or name), `outcome` (the deadline's), `sort` and `offset` (the web UI pages the list on
//! the rm rather than fetch every application).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::http::StatusCode;
use serde_json::{Value, json};
use yard_wire::deadline::DeadlineOutcome;
use yard_wire::limits::echo;
use yard_wire::views::{FinalApplicationStatus, YarnApplicationState};

use super::ApiError;
use crate::cluster::AppInfo;

/// A route's query: its pairs in order; a key the route does not take is a 400 naming it
/// (YARN would ignore it, and a filter the caller believes applied would silently not be).
pub(super) fn query_pairs(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    known: &[&str],
) -> Result<BTreeMap<String, String>, ApiError> {
    let Query(pairs) = query?;
    let mut out = BTreeMap::new();
    for (key, value) in pairs {
        // Hadoop's pseudo authentication; yard authenticates by bearer token.
        if key == "user.name" {
            continue;
        }
        if !known.contains(&key.as_str()) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("unknown query parameter {:?}", echo(&key)),
                json!({ "known": known }),
            ));
        }
        // An empty value is no filter, as in Hadoop's `/apps` (`finalStatus=&limit=` lists
        // every app).
        if value.is_empty() {
            continue;
        }
        if out.insert(key.clone(), value).is_some() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("query parameter {:?} given twice", echo(&key)),
                Value::Null,
            ));
        }
    }
    Ok(out)
}

pub(super) fn bad_query(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, message, Value::Null)
}

/// A comma-separated list of names from `valid` (case-insensitive, as YARN's names are
/// upper case); 400 naming the bad one and the valid ones.
pub(super) fn name_list<T: Copy + std::fmt::Display>(
    param: &str,
    given: &str,
    valid: &[T],
) -> Result<Vec<T>, ApiError> {
    given
        .split(',')
        .map(|s| s.trim().to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .map(|s| {
            valid
                .iter()
                .copied()
                .find(|v| v.to_string() == s)
                .ok_or_else(|| {
                    bad_query(format!(
                        "Invalid {param} {} specified. It should be one of {}",
                        echo(&s),
                        names(valid)
                    ))
                })
        })
        .collect()
}

/// `valid`'s names, as an error lists them.
fn names<T: std::fmt::Display>(valid: &[T]) -> String {
    let names: Vec<String> = valid.iter().map(T::to_string).collect();
    names.join(", ")
}

/// A time filter: ms since the epoch, not negative.
pub(super) fn time_param(q: &BTreeMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    q.get(key)
        .map(|v| {
            v.trim()
                .parse::<i64>()
                .ok()
                .filter(|t| *t >= 0)
                .ok_or_else(|| {
                    bad_query(format!(
                        "{key}={:?}: a time is milliseconds since the Unix epoch, 0 or more",
                        echo(v)
                    ))
                })
        })
        .transpose()
}

/// A `[begin, end]` time range from two filters; 400 when end is before begin.
pub(super) fn time_range(
    q: &BTreeMap<String, String>,
    begin: &str,
    end: &str,
) -> Result<Option<(i64, i64)>, ApiError> {
    let (b, e) = (time_param(q, begin)?, time_param(q, end)?);
    if b.is_none() && e.is_none() {
        return Ok(None);
    }
    let (b, e) = (b.unwrap_or(0), e.unwrap_or(i64::MAX));
    if e < b {
        return Err(bad_query(format!("{end} ({e}) is before {begin} ({b})")));
    }
    Ok(Some((b, e)))
}

/// A comma-separated list, trimmed and lower-cased (YARN matches types and tags so).
pub(super) fn lower_list(v: Option<&String>) -> Vec<String> {
    v.map(|v| {
        v.split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Hadoop's `/apps` filters, every one honoured; a value that makes no sense is a 400.
pub(super) struct AppsFilter {
    states: Vec<YarnApplicationState>,
    final_status: Option<FinalApplicationStatus>,
    user: Option<String>,
    queue: Option<String>,
    name: Option<String>,
    pub(super) limit: usize,
    started: Option<(i64, i64)>,
    finished: Option<(i64, i64)>,
    types: Vec<String>,
    tags: Vec<String>,
    pub(super) deselects: Vec<String>,
    /// yard's: a case-insensitive part of the id or the name.
    search: Option<String>,
    /// yard's: the deadline outcomes wanted (`None`: no deadline).
    outcomes: Vec<Option<DeadlineOutcome>>,
    /// yard's: the order, and whether it is descending; `None` keeps the rm's (by id).
    sort: Option<(SortKey, bool)>,
    /// yard's: how many matching applications to skip before `limit` counts.
    offset: usize,
}

/// What yard's `sort` orders applications by: an application report's field, as YARN names
/// it. Ties go by id, so pages do not overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortKey {
    Id,
    Name,
    User,
    Queue,
    ApplicationType,
    State,
    StartedTime,
    FinishedTime,
    Progress,
    DeadlineMs,
}

/// `sort`'s names, in [`SortKey`]'s order.
const SORT_KEYS: [(&str, SortKey); 10] = [
    ("id", SortKey::Id),
    ("name", SortKey::Name),
    ("user", SortKey::User),
    ("queue", SortKey::Queue),
    ("applicationType", SortKey::ApplicationType),
    ("state", SortKey::State),
    ("startedTime", SortKey::StartedTime),
    ("finishedTime", SortKey::FinishedTime),
    ("progress", SortKey::Progress),
    ("deadlineMs", SortKey::DeadlineMs),
];

/// `outcome`'s names: the rm's deadline outcomes, and `none` for no deadline.
const OUTCOMES: [&str; 5] = ["met", "empty", "missed", "pending", "none"];

impl SortKey {
    fn compare(self, a: &AppInfo, b: &AppInfo) -> Ordering {
        match self {
            SortKey::Id => id_order(&a.application_id).cmp(&id_order(&b.application_id)),
            // As a reader orders names: whatever their case.
            SortKey::Name => {
                (a.name.to_lowercase(), &a.name).cmp(&(b.name.to_lowercase(), &b.name))
            }
            SortKey::User => a.user.cmp(&b.user),
            SortKey::Queue => a.queue.cmp(&b.queue),
            SortKey::ApplicationType => a.yarn.application_type.cmp(&b.yarn.application_type),
            SortKey::State => a.lifecycle.state.name().cmp(b.lifecycle.state.name()),
            SortKey::StartedTime => a.submitted_ms.cmp(&b.submitted_ms),
            // Unfinished (0 in the report) first, as the report's number sorts.
            SortKey::FinishedTime => a.yarn.finished_ms.cmp(&b.yarn.finished_ms),
            SortKey::Progress => a.progress.total_cmp(&b.progress),
            // No deadline sorts after every deadline.
            SortKey::DeadlineMs => {
                let at = |x: &AppInfo| x.deadline.map_or(i64::MAX, |d| d.epoch_ms());
                at(a).cmp(&at(b))
            }
        }
    }
}

/// An id in issue order: `application_<cluster timestamp>_<sequence>` by its numbers (the
/// sequence outgrows its four digits), anything else after, by text.
fn id_order(id: &str) -> (i64, u64, &str) {
    let numbers = id.strip_prefix("application_").and_then(|rest| {
        let (ts, seq) = rest.split_once('_')?;
        Some((ts.parse().ok()?, seq.parse().ok()?))
    });
    let (ts, seq) = numbers.unwrap_or((i64::MAX, u64::MAX));
    (ts, seq, id)
}

pub(super) const APPS_PARAMS: [&str; 18] = [
    "state",
    "states",
    "finalStatus",
    "user",
    "queue",
    "limit",
    "startedTimeBegin",
    "startedTimeEnd",
    "finishedTimeBegin",
    "finishedTimeEnd",
    "applicationTypes",
    "applicationTags",
    "name",
    "deSelects",
    "search",
    "outcome",
    "sort",
    "offset",
];

/// What `deSelects` may leave out (YARN's `DeSelectType`).
pub(super) const DESELECTS: [&str; 5] = [
    "resourceRequests",
    "timeouts",
    "appNodeLabelExpression",
    "amNodeLabelExpression",
    "resourceInfo",
];

impl AppsFilter {
    pub(super) fn parse(q: &BTreeMap<String, String>) -> Result<AppsFilter, ApiError> {
        let mut states = Vec::new();
        for key in ["states", "state"] {
            if let Some(v) = q.get(key) {
                states.extend(name_list(
                    "application-state",
                    v,
                    YarnApplicationState::ALL,
                )?);
            }
        }
        let final_status = q
            .get("finalStatus")
            .map(|v| {
                let v = v.trim().to_ascii_uppercase();
                let all = FinalApplicationStatus::ALL;
                all.iter().copied().find(|f| f.name() == v).ok_or_else(|| {
                    bad_query(format!(
                        "Invalid finalStatus {v} specified. It should be one of {}",
                        names(all)
                    ))
                })
            })
            .transpose()?;
        let limit = match q.get("limit") {
            None => usize::MAX,
            Some(v) => v
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or_else(|| {
                    bad_query(format!(
                        "limit={:?}: limit value must be greater then 0",
                        echo(v)
                    ))
                })?,
        };
        let deselects: Vec<String> = q
            .get("deSelects")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        DESELECTS
                            .iter()
                            .find(|d| d.eq_ignore_ascii_case(s))
                            .map(|d| (*d).to_owned())
                            .ok_or_else(|| {
                                bad_query(format!(
                                    "Invalid deSelects string {s}; valid ones are {}",
                                    DESELECTS.join(", ")
                                ))
                            })
                    })
                    .collect::<Result<_, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let offset = match q.get("offset") {
            None => 0,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or_else(|| {
                    bad_query(format!(
                        "offset={:?}: offset is how many matching applications to skip, a whole number, 0 or more",
                        echo(v)
                    ))
                })?,
        };
        let sort = q
            .get("sort")
            .map(|v| {
                let v = v.trim();
                let (name, descending) = match v.strip_prefix('-') {
                    Some(name) => (name, true),
                    None => (v, false),
                };
                SORT_KEYS
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, key)| (*key, descending))
                    .ok_or_else(|| {
                        let keys: Vec<&str> = SORT_KEYS.iter().map(|(n, _)| *n).collect();
                        bad_query(format!(
                            "sort={:?}: sort by one of {}, with a leading - for descending (sort=-startedTime)",
                            echo(v),
                            keys.join(", ")
                        ))
                    })
            })
            .transpose()?;
        let outcomes = lower_list(q.get("outcome"))
            .into_iter()
            .map(|o| {
                DeadlineOutcome::ALL
                    .into_iter()
                    .find(|d| d.name() == o)
                    .map(Some)
                    .or_else(|| (o == "none").then_some(None))
                    .ok_or_else(|| {
                        bad_query(format!(
                            "outcome={:?}: give one or more of {}, comma-separated (none: no deadline)",
                            echo(&o),
                            OUTCOMES.join(", ")
                        ))
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(AppsFilter {
            search: q
                .get("search")
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty()),
            outcomes,
            sort,
            offset,
            states,
            final_status,
            user: q.get("user").cloned(),
            queue: q.get("queue").cloned(),
            name: q.get("name").cloned(),
            limit,
            started: time_range(q, "startedTimeBegin", "startedTimeEnd")?,
            finished: time_range(q, "finishedTimeBegin", "finishedTimeEnd")?,
            types: lower_list(q.get("applicationTypes")),
            tags: lower_list(q.get("applicationTags")),
            deselects,
        })
    }

    /// The page of `apps` the filters ask for, at `now` (a deadline's outcome moves with
    /// it), and how many matched before `offset` and `limit`.
    pub(super) fn page<'a>(
        &self,
        apps: impl Iterator<Item = &'a AppInfo>,
        now: i64,
    ) -> (Vec<&'a AppInfo>, u64) {
        let mut matched: Vec<&AppInfo> = apps.filter(|a| self.matches(a, now)).collect();
        if let Some((key, descending)) = self.sort {
            matched.sort_by(|a, b| {
                let by = key.compare(a, b);
                let by = if descending { by.reverse() } else { by };
                by.then_with(|| id_order(&a.application_id).cmp(&id_order(&b.application_id)))
            });
        }
        let total = matched.len() as u64;
        let page = matched
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .collect();
        (page, total)
    }

    fn matches(&self, a: &AppInfo, now: i64) -> bool {
        let finished = a.yarn.finished_ms.unwrap_or(0);
        (self.states.is_empty() || self.states.contains(&a.lifecycle.state))
            && self
                .final_status
                .is_none_or(|f| f == a.lifecycle.final_status)
            && self.user.as_ref().is_none_or(|u| *u == a.user)
            && self.queue.as_ref().is_none_or(|q| *q == a.queue)
            && self.name.as_ref().is_none_or(|n| *n == a.name)
            && self
                .started
                .is_none_or(|(b, e)| (b..=e).contains(&a.submitted_ms))
            && self
                .finished
                .is_none_or(|(b, e)| (b..=e).contains(&finished))
            && (self.types.is_empty()
                || self
                    .types
                    .contains(&a.yarn.application_type.to_ascii_lowercase()))
            && (self.tags.is_empty()
                || a.tags
                    .iter()
                    .any(|t| self.tags.contains(&t.to_ascii_lowercase())))
            && self.search.as_ref().is_none_or(|s| {
                a.application_id.to_lowercase().contains(s) || a.name.to_lowercase().contains(s)
            })
            && (self.outcomes.is_empty() || self.outcomes.contains(&a.deadline_outcome(now)))
    }
}
