//! Who calls: the bearer token's principal ([`Caller`]), the scrape token ([`Scrape`]), and what
//! each principal may act on (its own applications, datasets, node, or master attempt).

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use yard_wire::auth::{AuthError, Principal, bearer_of};
use yard_wire::limits::{self, echo};

use super::{ApiError, Rm};
use crate::cluster::{AppInfo, Cluster, ClusterError};

/// Who calls: the principal of a valid bearer token. A route that takes a `Caller` refuses
/// (401) a request without one.
pub struct Caller(pub Principal);

impl FromRequestParts<Rm> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, rm: &Rm) -> Result<Self, Self::Rejection> {
        let principal = principal_of(parts, rm)?;
        // A scrape token reads metrics ([`Scrape`]'s routes) and nothing else.
        if principal == Principal::Scraper {
            return Err(ApiError::forbidden(
                "a scrape token reads only the scrape targets and metrics",
            ));
        }
        Ok(Caller(principal))
    }
}

/// The principal of the request's bearer token (401 without a valid one).
pub(super) fn principal_of(parts: &Parts, rm: &Rm) -> Result<Principal, ApiError> {
    let header = parts
        .headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().map_err(|_| AuthError::NotBearer))
        .transpose()?;
    Ok(rm.bearer.verify(bearer_of(header)?)?)
}

/// Prometheus, or an admin: the caller of the scrape targets and the final figures the rm
/// keeps for finished masters (`Principal::Scraper`, `yard auth token --scrape`). 401 without
/// a valid token, 403 with anyone else's.
pub struct Scrape;

impl FromRequestParts<Rm> for Scrape {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, rm: &Rm) -> Result<Self, Self::Rejection> {
        match principal_of(parts, rm)? {
            Principal::Scraper | Principal::Admin { .. } => Ok(Scrape),
            _ => Err(ApiError::forbidden(
                "only the scrape token (`yard auth token --scrape`) or an admin reads the scrape targets and the masters' metrics",
            )),
        }
    }
}

impl Caller {
    /// Users and admins (who own applications and datasets); not masters, not nodes.
    pub(super) fn user(&self) -> Result<&str, ApiError> {
        self.0.user().ok_or_else(|| {
            ApiError::forbidden("only a user or an admin may do this; masters and nodes may not")
        })
    }

    /// Whom a submission by the caller runs as: itself, or (an admin's only) `asked`.
    pub(super) fn submitter(&self, asked: Option<&str>) -> Result<String, ApiError> {
        let me = self.user()?;
        let user = match asked {
            Some(u) if u != me && !self.0.is_admin() => {
                return Err(ApiError::forbidden(format!(
                    "you are {me}; only an admin may submit as {}",
                    echo(u)
                )));
            }
            Some(u) => u,
            None => me,
        };
        limits::check_name("user", user)?;
        Ok(user.to_owned())
    }

    /// The caller owns `app` (its user, or an admin).
    pub(super) fn owner_of(&self, app: &AppInfo) -> Result<(), ApiError> {
        if self.0.owns(&app.user) {
            return Ok(());
        }
        Err(ApiError::forbidden(format!(
            "application {} belongs to {}; only its owner or an admin may do this",
            app.application_id, app.user
        )))
    }

    /// The caller may read `app`'s answer: its owner, an admin, or one of its masters.
    pub(super) fn reader_of(&self, app: &AppInfo) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Master { app: id, .. } if *id == app.application_id => Ok(()),
            _ => self.owner_of(app),
        }
    }

    /// The caller is the current attempt of `id`'s master.
    pub(super) fn master_of(&self, cluster: &Cluster, id: &str) -> Result<(), ApiError> {
        let Principal::Master { app, attempt } = &self.0 else {
            return Err(ApiError::forbidden(format!(
                "only application {}'s master may do this (with the token the rm gave it as YARD_TOKEN)",
                echo(id)
            )));
        };
        if app != id {
            return Err(ApiError::forbidden(format!(
                "this token is application {app}'s master's, not {}'s",
                echo(id)
            )));
        }
        match cluster.current_attempt(id) {
            None if cluster.app(id).is_none() => Err(ClusterError::UnknownApp(id.into()).into()),
            None => Err(ClusterError::NotRunning(id.into()).into()),
            Some(current) if current == *attempt => Ok(()),
            current => Err(ApiError::forbidden(format!(
                "attempt {attempt} of {id} is over (the current attempt is {}); its calls are dropped",
                current.map_or("none: the application ended".to_owned(), |c| c.to_string())
            ))),
        }
    }

    /// The caller is a nodemanager (any node): checked before a body naming the node is read.
    pub(super) fn any_node(&self) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Node { .. } => Ok(()),
            _ => Err(ApiError::forbidden(
                "only a nodemanager, with its node credential, may do this",
            )),
        }
    }

    /// The caller is a nodemanager that may act as `node`.
    pub(super) fn node(&self, node: &str) -> Result<(), ApiError> {
        match &self.0 {
            Principal::Node { node: None } => Ok(()),
            Principal::Node { node: Some(n) } if n == node => Ok(()),
            Principal::Node { node: Some(n) } => Err(ApiError::forbidden(format!(
                "this credential is node {n}'s, not {}'s",
                echo(node)
            ))),
            _ => Err(ApiError::forbidden(
                "only a nodemanager, with its node credential, may do this",
            )),
        }
    }
}

/// The application `id`, if the caller may read its answer.
pub(super) fn readable<'a>(
    c: &'a Cluster,
    caller: &Caller,
    id: &str,
) -> Result<&'a AppInfo, ApiError> {
    let app = known(c, id)?;
    caller.reader_of(app)?;
    Ok(app)
}

/// The application `id`, if the caller owns it.
pub(super) fn owned<'a>(
    c: &'a Cluster,
    caller: &Caller,
    id: &str,
) -> Result<&'a AppInfo, ApiError> {
    let app = known(c, id)?;
    caller.owner_of(app)?;
    Ok(app)
}

/// The application `id`, or the refusal for an unknown one.
fn known<'a>(c: &'a Cluster, id: &str) -> Result<&'a AppInfo, ClusterError> {
    c.app(id).ok_or_else(|| ClusterError::UnknownApp(id.into()))
}
