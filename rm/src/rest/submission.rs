//! Submitting an application (`POST /ws/v1/cluster/apps`): Hadoop's submission context read
//! and checked field by field (master resource, tags, deadline, launch context), then the
//! application created and committed.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::Value;
use yard_wire::deadline::Deadline;
use yard_wire::limits::{self, FieldError, echo};
use yard_wire::protocol::Resource;

use super::caller::Caller;
use super::{ApiError, Host, Reply, Rm, app_location};
use crate::cluster::{NewApp, Touch};

/// Hadoop's application submission context, the fields yard reads.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct Submission {
    application_id: String,
    #[serde(default)]
    application_name: String,
    #[serde(default = "default_queue")]
    queue: String,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    am_container_spec: AmContainerSpec,
    /// yard's: when the answer is due, ms since the epoch (a number). Read as a JSON value so
    /// a wrong one is a 400 naming the field, not a shape error.
    #[serde(default)]
    deadline_ms: Option<Value>,
    /// Hadoop's `{"tag": ["a", "b"]}` (also `{"tag": "a"}` or a plain list). A tag
    /// `deadline=<epoch ms>` is the deadline, for YARN clients.
    #[serde(default)]
    application_tags: Option<Value>,
    /// The master's container: `{"memory": MB, "vCores": N}`.
    #[serde(default)]
    resource: Option<Value>,
    #[serde(default)]
    max_app_attempts: Option<Value>,
    #[serde(default)]
    application_type: Option<String>,
    /// Capped to the cluster's maximum priority, 0 (YARN's default).
    #[serde(default)]
    priority: Option<Value>,
    #[serde(default, rename = "unmanaged-AM")]
    unmanaged_am: Option<bool>,
    #[serde(default)]
    keep_containers_across_application_attempts: Option<bool>,
    #[serde(default)]
    reservation_id: Option<String>,
}

/// The longest application type YARN keeps.
pub(super) const MAX_TYPE_LEN: usize = 20;

/// A submission's field as a whole number in `range`; 400 naming it otherwise.
pub(super) fn whole(
    field: &str,
    v: &Value,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, ApiError> {
    v.as_i64().filter(|n| range.contains(n)).ok_or_else(|| {
        FieldError {
            field: field.into(),
            problem: format!(
                "{v} is not a whole number from {} to {}",
                range.start(),
                range.end()
            ),
        }
        .into()
    })
}

/// The master's resource: `{"memory", "vCores"}`, each at least 1 and at most the largest
/// node's (YARN's maximum-resource-capability).
pub(super) fn master_resource(v: &Value, max: Resource) -> Result<Resource, ApiError> {
    let Some(o) = v.as_object() else {
        return Err(FieldError {
            field: "resource".into(),
            problem: "write {\"memory\": MB, \"vCores\": N}".into(),
        }
        .into());
    };
    if let Some(k) = o.keys().find(|k| *k != "memory" && *k != "vCores") {
        return Err(FieldError {
            field: format!("resource.{k}"),
            problem: "resource takes memory (MB) and vCores".into(),
        }
        .into());
    }
    let field = |name: &str, max: i64| -> Result<i64, ApiError> {
        let v = o.get(name).ok_or_else(|| -> ApiError {
            FieldError {
                field: format!("resource.{name}"),
                problem: "missing".into(),
            }
            .into()
        })?;
        let n = whole(&format!("resource.{name}"), v, 1..=i64::MAX)?;
        if n > max {
            return Err(FieldError {
                field: format!("resource.{name}"),
                problem: format!(
                    "{n} is over the cluster's maximum-resource-capability ({max}: its largest node)"
                ),
            }
            .into());
        }
        Ok(n)
    };
    let memory_mb = field("memory", i64::try_from(max.memory_mb).unwrap_or(i64::MAX))?;
    let vcores = field("vCores", i64::from(max.vcores))?;
    Ok(Resource {
        memory_mb: u64::try_from(memory_mb).unwrap_or(0),
        vcores: u32::try_from(vcores).unwrap_or(0),
    })
}

/// YARN's launch-context expansion in a master command: `{{VAR}}` → `$VAR`, `<CPS>` → `:`,
/// `<LOG_DIR>` → the container's directory (where the nodemanager keeps its logs: the
/// command runs there).
pub(super) fn expand(text: &str) -> String {
    let mut out = text.replace("<LOG_DIR>", "$PWD").replace("<CPS>", ":");
    while let Some(at) = out.find("{{") {
        let Some(len) = out[at + 2..].find("}}") else {
            break;
        };
        let name = out[at + 2..at + 2 + len].to_owned();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            break;
        }
        out.replace_range(at..at + 4 + len, &format!("${{{name}}}"));
    }
    out
}

/// Whether a value uses YARN's launch-context expansion (so must pass through the shell).
pub(super) fn expands(text: &str) -> bool {
    text.contains("{{") || text.contains("<CPS>") || text.contains("<LOG_DIR>")
}

/// A shell word that is `text` inside double quotes, `$` left to expand.
pub(super) fn double_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        if matches!(ch, '"' | '\\' | '`') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
    out
}

/// The most application tags, and the longest (YARN's defaults).
pub(super) const MAX_TAGS: usize = 10;

pub(super) const MAX_TAG_LEN: usize = 100;

/// Hadoop's application tags in any of their JSON shapes; 400 naming `application-tags` for
/// anything else.
pub(super) fn tags_of(v: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let bad = |problem: String| -> ApiError {
        FieldError {
            field: "application-tags".into(),
            problem,
        }
        .into()
    };
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(o)) => match o.get("tag") {
            _ if o.keys().any(|k| k != "tag") => {
                return Err(bad("write {\"tag\": [\"a\", \"b\"]}".into()));
            }
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(t) => t,
        },
        Some(other) => other,
    };
    let tags: Vec<&Value> = match list {
        Value::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    if tags.len() > MAX_TAGS {
        return Err(bad(format!("{} tags, over {MAX_TAGS}", tags.len())));
    }
    tags.into_iter()
        .map(|t| {
            let t = t
                .as_str()
                .ok_or_else(|| bad(format!("{t} is not a string")))?
                .trim();
            if t.is_empty()
                || t.len() > MAX_TAG_LEN
                || !t.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
            {
                return Err(bad(format!(
                    "{:?}: a tag is 1 to {MAX_TAG_LEN} printable ASCII characters",
                    echo(t)
                )));
            }
            Ok(t.to_owned())
        })
        .collect()
}

/// A deadline from outside: ms since the epoch, in range and after `now_ms`.
pub(super) fn check_deadline(field: &str, ms: i64, now_ms: i64) -> Result<Deadline, ApiError> {
    let bad = |problem: String| -> ApiError {
        FieldError {
            field: field.into(),
            problem,
        }
        .into()
    };
    if !(1..=limits::MAX_TIME_MS).contains(&ms) {
        return Err(bad(format!(
            "{ms} is outside 1..={}: a deadline is milliseconds since the Unix epoch",
            limits::MAX_TIME_MS
        )));
    }
    if ms <= now_ms {
        return Err(bad(format!(
            "{ms} is in the past (the rm's clock reads {now_ms}): a deadline is milliseconds since the Unix epoch, in the future"
        )));
    }
    Ok(Deadline::from_epoch_ms(ms))
}

/// The submission's deadline: `deadline-ms`, else a `deadline=<epoch ms>` tag; both must agree.
pub(super) fn submitted_deadline(
    body: Option<&Value>,
    tags: &[String],
    now_ms: i64,
) -> Result<Option<Deadline>, ApiError> {
    let from_body = match body {
        None | Some(Value::Null) => None,
        Some(v) => {
            let ms = v.as_i64().ok_or_else(|| -> ApiError {
                FieldError {
                    field: "deadline-ms".into(),
                    problem: format!(
                        "{v} is not a whole number of milliseconds since the Unix epoch"
                    ),
                }
                .into()
            })?;
            Some(check_deadline("deadline-ms", ms, now_ms)?)
        }
    };
    let mut from_tags = None;
    for t in tags {
        let Some((key, value)) = t.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("deadline") {
            continue;
        }
        let ms: i64 = value.trim().parse().map_err(|_| -> ApiError {
            FieldError {
                field: "application-tags".into(),
                problem: format!(
                    "{:?}: deadline=<ms since the Unix epoch> takes a whole number",
                    echo(t)
                ),
            }
            .into()
        })?;
        let ms = check_deadline("application-tags", ms, now_ms)?;
        if from_tags.is_some_and(|d| d != ms) {
            return Err(FieldError {
                field: "application-tags".into(),
                problem: "two deadline= tags that differ".into(),
            }
            .into());
        }
        from_tags = Some(ms);
    }
    match (from_body, from_tags) {
        (Some(b), Some(t)) if b != t => Err(FieldError {
            field: "deadline-ms".into(),
            problem: format!("{b} differs from the tag deadline={t}; give one deadline"),
        }
        .into()),
        (b, t) => Ok(b.or(t)),
    }
}

/// Hadoop's `am-container-spec`: `{"commands": {"command": "..."}, "environment": {"entry":
/// [{"key", "value"}]}}`. The command runs under `/bin/sh -c`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub(super) struct AmContainerSpec {
    #[serde(default)]
    commands: Option<Commands>,
    #[serde(default)]
    environment: Option<Environment>,
    /// yard localizes nothing: a submission that needs files put first is refused.
    #[serde(default)]
    local_resources: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct Commands {
    /// One command, or several (run one after the other, as YARN joins them).
    command: Value,
}

#[derive(Deserialize)]
pub(super) struct Environment {
    #[serde(default)]
    entry: Vec<Entry>,
}

#[derive(Deserialize)]
pub(super) struct Entry {
    key: String,
    value: String,
}

pub(super) fn default_queue() -> String {
    "default".into()
}

pub(super) async fn submit(
    State(rm): State<Rm>,
    Host(host): Host,
    caller: Caller,
    body: Result<Json<Submission>, JsonRejection>,
) -> Reply {
    caller.user()?;
    let Json(s) = body?;
    let user = caller.submitter(s.user.as_deref())?;
    limits::check_name("queue", &s.queue)?;
    if s.application_name.len() > 1024 {
        return Err(FieldError {
            field: "application-name".into(),
            problem: format!("{} characters, over 1024", s.application_name.len()),
        }
        .into());
    }
    let tags = tags_of(s.application_tags.as_ref())?;
    let deadline = submitted_deadline(s.deadline_ms.as_ref(), &tags, (rm.clock)())?;
    let spec = s.am_container_spec;
    if s.unmanaged_am == Some(true) {
        return Err(FieldError {
            field: "unmanaged-AM".into(),
            problem: "yard runs every master in a container; an unmanaged master is not supported"
                .into(),
        }
        .into());
    }
    if s.keep_containers_across_application_attempts == Some(true) {
        return Err(FieldError {
            field: "keep-containers-across-application-attempts".into(),
            problem: "yard stops an attempt's containers when the next one starts".into(),
        }
        .into());
    }
    if s.reservation_id.as_deref().is_some_and(|r| !r.is_empty()) {
        return Err(FieldError {
            field: "reservation-id".into(),
            problem: "yard has no reservation system".into(),
        }
        .into());
    }
    let has_entries = |v: &Value| match v {
        Value::Null => false,
        Value::Object(o) => o.values().any(|e| match e {
            Value::Array(a) => !a.is_empty(),
            Value::Null => false,
            _ => true,
        }),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    };
    if spec.local_resources.as_ref().is_some_and(has_entries) {
        return Err(FieldError {
            field: "am-container-spec.local-resources".into(),
            problem: "yard localizes no files: put them on the nodes (or in a dataset) and name their paths in the command".into(),
        }
        .into());
    }
    let application_type = s.application_type.unwrap_or_default();
    if application_type.chars().count() > MAX_TYPE_LEN
        || application_type.chars().any(char::is_control)
    {
        return Err(FieldError {
            field: "application-type".into(),
            problem: format!(
                "{:?}: at most {MAX_TYPE_LEN} printable characters",
                echo(&application_type)
            ),
        }
        .into());
    }
    let max_attempts = s
        .max_app_attempts
        .as_ref()
        .filter(|v| !v.is_null())
        .map(|v| {
            whole(
                "max-app-attempts",
                v,
                i64::from(i32::MIN)..=i64::from(i32::MAX),
            )
        })
        .transpose()?
        // YARN: 0 or less takes the cluster's default.
        .and_then(|n| u32::try_from(n).ok().filter(|n| *n >= 1));
    if let Some(p) = s.priority.as_ref().filter(|v| !v.is_null()) {
        whole("priority", p, i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    }
    let max = rm.with(|c, _| c.max_resource());
    let am_resource = s
        .resource
        .as_ref()
        .filter(|v| !v.is_null())
        .map(|v| master_resource(v, max))
        .transpose()?;
    let commands: Vec<String> = match spec.commands.map(|c| c.command) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(c)) => vec![c],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_owned).ok_or_else(|| -> ApiError {
                    FieldError {
                        field: "am-container-spec.commands.command".into(),
                        problem: format!("{i} is not a string"),
                    }
                    .into()
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(FieldError {
                field: "am-container-spec.commands.command".into(),
                problem: format!("{other} is neither a command nor a list of them"),
            }
            .into());
        }
    };
    let entries = spec.environment.map(|e| e.entry).unwrap_or_default();
    limits::check_len("am-container-spec.environment", entries.len())?;
    // Variables that use YARN's expansion are exported by the master's shell (as YARN's
    // launch script does), so `{{CLASSPATH}}<CPS>./*` reads the container's own CLASSPATH.
    let mut exports = Vec::new();
    let mut env = BTreeMap::new();
    for Entry { key, value } in entries {
        if key.is_empty()
            || key.starts_with(|c: char| c.is_ascii_digit())
            || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(FieldError {
                field: "am-container-spec.environment".into(),
                problem: format!(
                    "{:?} is not a variable name (letters, digits, '_')",
                    echo(&key)
                ),
            }
            .into());
        }
        if expands(&value) {
            exports.push(format!("export {key}={}; ", double_quoted(&expand(&value))));
        }
        env.insert(key, value.replace("<CPS>", ":"));
    }
    let command = if commands.is_empty() {
        Vec::new()
    } else {
        let joined = commands
            .iter()
            .map(|c| expand(c))
            .collect::<Vec<_>>()
            .join(" ");
        vec![
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            format!("{}{joined}", exports.concat()),
        ]
    };
    let new = NewApp {
        id: s.application_id.clone(),
        name: s.application_name,
        user,
        queue: s.queue,
        master_command: command,
        master_env: env,
        deadline,
        tags,
        application_type,
        am_resource,
        max_attempts,
    };
    rm.commit(Touch::App(new.id.clone()), |c, now| {
        // Submitting again what is already accepted (a retry after a 503 or a lost reply)
        // succeeds once it is committed.
        if let Some(app) = c.app(&new.id)
            && app.user == new.user
            && app.name == new.name
        {
            return Ok(());
        }
        c.submit_issued(now, new, &caller.0)
    })
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        [(header::LOCATION, app_location(&host, &s.application_id))],
    )
        .into_response())
}
