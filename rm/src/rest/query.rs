//! Hadoop's query parameters: a route's pairs (an unknown key is a 400), name lists, time
//! filters and `/apps`'s filter set.

use std::collections::BTreeMap;

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::http::StatusCode;
use serde_json::{Value, json};
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
}

pub(super) const APPS_PARAMS: [&str; 14] = [
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
        Ok(AppsFilter {
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

    pub(super) fn matches(&self, a: &AppInfo) -> bool {
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
    }
}
