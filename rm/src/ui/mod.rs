//! The rm's web UI: one page (`/ui`) with a small script and a style sheet, embedded in the
//! binary, that draws the cluster from the rm's own REST API and redraws it every few seconds:
//! an overview (cluster metrics, the scheduler's policy, counts), the nodes (load, CPU, memory,
//! disk, the overload classifier's verdict and counts), the applications (deadline, quota,
//! progress, processed fraction) and one application (its master's estimate of the job's end
//! over time against the deadline, maps done of launched, the answer with its processed
//! fraction and 95 % intervals, diagnostics).
//!
//! The assets carry no data and need no token; every figure the page shows comes from the
//! API, with the API's own bearer token, which the page asks for once (or takes from the URL's
//! `#token=…`) and keeps in the tab's `sessionStorage`. The API's authentication is unchanged:
//! the UI sees exactly what its token may read. A `Content-Security-Policy` lets the page load
//! and fetch from the rm only.
//!
//! These routes are not part of the REST API (nor of its OpenAPI document): they are merged
//! into the router beside it, outside its JSON-only content negotiation.

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

/// The page.
pub const INDEX_HTML: &str = include_str!("index.html");
/// The script: the views, the API calls, the chart.
pub const APP_JS: &str = include_str!("app.js");
/// The style sheet.
pub const STYLE_CSS: &str = include_str!("style.css");

/// Where the page is.
pub const PAGE: &str = "/ui";

/// What the page may load and call: this rm only (the icon is an empty `data:` URL).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Every path the UI serves, with its content type (`/` redirects to [`PAGE`]).
pub const ASSETS: [(&str, &str); 4] = [
    ("/ui", "text/html; charset=utf-8"),
    ("/ui/", "text/html; charset=utf-8"),
    ("/ui/app.js", "text/javascript; charset=utf-8"),
    ("/ui/style.css", "text/css; charset=utf-8"),
];

/// The UI's routes, for any router state (they read none).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { Redirect::to(PAGE) }))
        .route("/ui", get(page))
        .route("/ui/", get(page))
        .route("/ui/app.js", get(|| async { asset(ASSETS[2].1, APP_JS) }))
        .route(
            "/ui/style.css",
            get(|| async { asset(ASSETS[3].1, STYLE_CSS) }),
        )
}

async fn page() -> Response {
    let mut response = asset(ASSETS[0].1, INDEX_HTML);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    // The token rides in the fragment, which no browser sends; nor does this say where from.
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        header::HeaderValue::from_static("DENY"),
    );
    response
}

/// An embedded asset: revalidated on every load, so a new rm's page is never a stale one.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}
