//! The one client of the rm's REST API, async ([`RmClient`]: the MapReduce master, anything
//! on tokio) with a blocking face ([`BlockingRmClient`]: the CLI). It sends the caller's bearer
//! token and turns the rm's answers into values or [`ClientError`]s that keep the rm's own
//! explanation (its `{"error", "detail"}` body).

use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Why a call did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the rm at {base}: {source}")]
    Unreachable {
        base: String,
        #[source]
        source: reqwest::Error,
    },
    /// 401: no credential, or one the rm does not accept.
    #[error("the rm refused: {error}")]
    Unauthorized { error: String },
    /// Any other 4xx: the request was wrong; `error` and `detail` say how.
    #[error("the rm refused: {error}{}", detail_text(.detail))]
    Refused {
        status: StatusCode,
        error: String,
        detail: Value,
    },
    /// 5xx, or an answer that is not JSON where JSON was due.
    #[error("{url} answered {status}: {body}")]
    Failed {
        url: String,
        status: StatusCode,
        body: Value,
    },
}

fn detail_text(detail: &Value) -> String {
    match detail {
        Value::Null => String::new(),
        Value::String(s) => format!(" ({s})"),
        other => format!(" ({other})"),
    }
}

/// A client of the rm at one base URL, with one credential.
#[derive(Clone)]
pub struct RmClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl RmClient {
    /// A client of the rm at `base` (e.g. `http://127.0.0.1:8088`) that sends `token`.
    pub fn new(base: &str, token: Option<String>) -> RmClient {
        RmClient {
            base: base.trim_end_matches('/').to_owned(),
            token,
            http: reqwest::Client::new(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The bearer token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The HTTP client underneath (for calls to other daemons, e.g. nodemanagers).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends a request and returns the status and the JSON body (`Null` when there is none),
    /// whatever the status: for callers that judge it themselves.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                base: self.base.clone(),
                source,
            })?;
        let status = response.status();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    }

    /// Sends a request; anything but a 2xx is an error carrying the rm's explanation.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let (status, value) = self.send(method, path, body).await?;
        judge(&self.base, path, status, value)
    }
}

/// A 2xx's body, or the error the status and body make.
fn judge(base: &str, path: &str, status: StatusCode, value: Value) -> Result<Value, ClientError> {
    // Hadoop's routes refuse in YARN's `RemoteException` shape (its message, and yard's
    // detail beside it), yard's own as `{"error", "detail"}`.
    let remote = value.get("RemoteException").filter(|r| r.is_object());
    let error = || {
        remote
            .and_then(|r| r["message"].as_str())
            .or_else(|| value["error"].as_str())
            .unwrap_or("refused")
            .to_owned()
    };
    if status.is_success() {
        Ok(value)
    } else if status == StatusCode::UNAUTHORIZED {
        Err(ClientError::Unauthorized { error: error() })
    } else if status.is_client_error() {
        Err(ClientError::Refused {
            status,
            error: error(),
            // The message already says it; the detail is for callers that read fields.
            detail: match remote {
                Some(r) if r["message"].is_string() => Value::Null,
                _ => value["detail"].clone(),
            },
        })
    } else {
        Err(ClientError::Failed {
            url: format!("{base}{path}"),
            status,
            body: value,
        })
    }
}

/// [`RmClient`] for code that is not async: each call runs on a runtime of its own. Not for
/// use inside an async context (as `reqwest::blocking`).
pub struct BlockingRmClient {
    inner: RmClient,
    runtime: tokio::runtime::Runtime,
}

impl BlockingRmClient {
    pub fn new(base: &str, token: Option<String>) -> std::io::Result<BlockingRmClient> {
        Ok(BlockingRmClient {
            inner: RmClient::new(base, token),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        })
    }

    pub fn base(&self) -> &str {
        self.inner.base()
    }

    pub fn token(&self) -> Option<&str> {
        self.inner.token()
    }

    pub fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        self.runtime.block_on(self.inner.send(method, path, body))
    }

    pub fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        self.runtime.block_on(self.inner.call(method, path, body))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_become_values_or_errors_that_keep_the_rms_explanation() {
        let ok = judge("http://rm", "/x", StatusCode::OK, json!({"a": 1}));
        assert_eq!(ok.unwrap(), json!({"a": 1}));
        let refused = judge(
            "http://rm",
            "/x",
            StatusCode::BAD_REQUEST,
            json!({"error": "field `vcores`: 0 is outside 1..=1024", "detail": {"field": "vcores"}}),
        )
        .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the rm refused: field `vcores`: 0 is outside 1..=1024 ({\"field\":\"vcores\"})"
        );
        let yarn = judge(
            "http://rm",
            "/ws/v1/cluster/apps",
            StatusCode::BAD_REQUEST,
            json!({"RemoteException": {"exception": "BadRequestException", "message": "Invalid application-state BOGUS specified", "javaClassName": "org.apache.hadoop.yarn.webapp.BadRequestException", "detail": null}}),
        )
        .unwrap_err();
        assert_eq!(
            yarn.to_string(),
            "the rm refused: Invalid application-state BOGUS specified"
        );
        let who = judge("http://rm", "/x", StatusCode::UNAUTHORIZED, Value::Null).unwrap_err();
        assert!(matches!(who, ClientError::Unauthorized { .. }), "{who}");
        let down = judge(
            "http://rm",
            "/x",
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "disk"}),
        )
        .unwrap_err();
        assert!(
            down.to_string().starts_with("http://rm/x answered 503"),
            "{down}"
        );
    }
}
