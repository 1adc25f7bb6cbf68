//! The rm's web UI through its router: the page, script and style sheet served with their
//! content types to a browser's `Accept`, nothing loaded from anywhere but the rm, and the
//! script calling only GET routes the rm serves, each of which answers the admin and refuses a
//! caller without a token, as before the UI.

mod support;

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::json;
use support::{Harness, T0};
use tower::ServiceExt;
use yard_rm::cluster::Settings;
use yard_rm::ui;

/// A GET without a token, with a browser's `Accept`; status, headers, body.
async fn browse(h: &Harness, uri: &str, accept: &str) -> (StatusCode, header::HeaderMap, String) {
    let request = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .header(header::ACCEPT, accept)
        .body(Body::empty())
        .unwrap();
    let response = yard_rm::rest::router(h.rm.clone())
        .oneshot(request)
        .await
        .unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// What Chromium sends for a page, a script and a style sheet; and the narrowest a browser
/// might, which the API's JSON-only negotiation would refuse.
const ACCEPTS: [&str; 4] = [
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    "*/*",
    "text/css,*/*;q=0.1",
    "text/html",
];

#[tokio::test]
async fn the_ui_is_served_with_its_content_types_to_any_browser_without_a_token() {
    let h = Harness::new(Settings::default());
    let bodies = [ui::INDEX_HTML, ui::INDEX_HTML, ui::APP_JS, ui::STYLE_CSS];
    for ((path, content_type), body) in ui::ASSETS.iter().zip(bodies) {
        for accept in ACCEPTS {
            let (status, headers, text) = browse(&h, path, accept).await;
            assert_eq!(
                status,
                StatusCode::OK,
                "{path} with Accept {accept}: {text}"
            );
            assert_eq!(headers[header::CONTENT_TYPE], *content_type, "{path}");
            assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
            assert_eq!(text, body, "{path}");
        }
    }
    // The page may load and call this rm only.
    let (_, headers, _) = browse(&h, "/ui", ACCEPTS[0]).await;
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert_eq!(csp, ui::CONTENT_SECURITY_POLICY);
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    // `/` leads to the page.
    let (status, headers, _) = browse(&h, "/", ACCEPTS[0]).await;
    assert!(status.is_redirection(), "{status}");
    assert_eq!(headers[header::LOCATION], ui::PAGE);
    // The page names its assets, and the rm serves each.
    let served: BTreeSet<&str> = ui::ASSETS.iter().map(|(p, _)| *p).collect();
    for asset in ["/ui/app.js", "/ui/style.css"] {
        assert!(ui::INDEX_HTML.contains(&format!("\"{asset}\"")), "{asset}");
        assert!(served.contains(asset));
    }
    // Anything else under /ui is the API's usual 404, not the page.
    let (status, _, text) = browse(&h, "/ui/nothing.js", "*/*").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{text}");
}

/// Every URL an asset mentions: none may lead off the rm (the SVG namespace is a name, not a
/// fetch), and the page loads nothing but its own two assets and an empty icon.
#[test]
fn the_assets_fetch_nothing_from_outside_the_rm() {
    for (name, text) in [
        ("index.html", ui::INDEX_HTML),
        ("app.js", ui::APP_JS),
        ("style.css", ui::STYLE_CSS),
    ] {
        let outside: Vec<&str> = text
            .match_indices("//")
            .filter(|(i, _)| text[..*i].ends_with("http:") || text[..*i].ends_with("https:"))
            .map(|(i, _)| &text[i.saturating_sub(6)..(i + 30).min(text.len())])
            .filter(|url| !url.contains("//www.w3.org/2000/svg"))
            .collect();
        assert!(outside.is_empty(), "{name} names {outside:?}");
        assert!(!text.contains("@import"), "{name}");
        assert!(!text.contains("url("), "{name}");
    }
    let mut loads: Vec<&str> = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (i, _) in ui::INDEX_HTML.match_indices(attr) {
            let rest = &ui::INDEX_HTML[i + attr.len()..];
            loads.push(&rest[..rest.find('"').unwrap()]);
        }
    }
    loads.retain(|l| !l.starts_with('#'));
    loads.sort_unstable();
    assert_eq!(loads, ["/ui/app.js", "/ui/style.css", "data:,"]);
    // Values from the API go in as text, never as markup.
    assert!(!ui::APP_JS.contains("innerHTML"));
    assert!(!ui::APP_JS.contains("outerHTML"));
    assert!(!ui::APP_JS.contains("insertAdjacentHTML"));
    assert!(!ui::APP_JS.contains("document.write"));
}

/// The `/ws/v1/…` paths the script names, as written (`{id}` where an id goes).
fn script_paths() -> Vec<&'static str> {
    let js = ui::APP_JS;
    let mut paths = Vec::new();
    for (i, _) in js.match_indices("\"/ws/") {
        let rest = &js[i + 1..];
        paths.push(&rest[..rest.find('"').expect("a closed string")]);
    }
    assert_eq!(
        paths.len(),
        js.matches("/ws/").count(),
        "every API path in the script is a whole string literal (in its API table)"
    );
    paths
}

#[test]
fn the_script_calls_only_get_routes_the_rm_serves() {
    let paths = script_paths();
    let routes = yard_rm::rest::routes();
    let gets: BTreeSet<&str> = routes
        .iter()
        .filter(|(_, methods, _)| methods.contains(&"get"))
        .map(|(p, _, _)| *p)
        .collect();
    for path in &paths {
        assert!(
            gets.contains(path),
            "the script calls GET {path}, which the rm does not serve"
        );
    }
    // And they are documented (the OpenAPI document lists the routes; a test checks that).
    let spec: serde_json::Value = serde_json::from_str(yard_rm::rest::OPENAPI).unwrap();
    for path in &paths {
        assert!(
            spec["paths"][path]["get"].is_object(),
            "{path} in openapi.json"
        );
    }
    // What the views need: nodes, apps, and one job's estimates and answer.
    for needed in [
        "/ws/v1/cluster/metrics",
        "/ws/v1/cluster/scheduler",
        "/ws/v1/cluster/nodes",
        "/ws/v1/cluster/nodes/{id}",
        "/ws/v1/cluster/apps",
        "/ws/v1/cluster/apps/{id}",
        "/ws/v1/yard/mapreduce/jobs",
        "/ws/v1/yard/mapreduce/jobs/{id}",
        "/ws/v1/cluster/apps/{id}/appattempts",
        "/ws/v1/cluster/apps/{id}/appattempts/{attempt}",
        "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers",
        "/ws/v1/yard/history",
    ] {
        assert!(paths.contains(&needed), "{needed}");
    }
    // The UI only reads: every fetch is a GET (fetch's default; no method is ever given).
    assert!(!ui::APP_JS.contains("method:"));
    assert!(!ui::APP_JS.contains("XMLHttpRequest"));
}

/// Each route the script calls, on an empty cluster and on one with a node and a MapReduce job
/// (no deadline), answers the admin's token with JSON, and refuses no token (but
/// `cluster/info`, open as before) with 401: the UI needs no weaker API. The rm keeps its
/// containers' logs, as the daemon does beside its state directory.
#[tokio::test]
async fn every_route_the_script_calls_answers_a_token_and_refuses_none() {
    let mut h = Harness::new(Settings::default());
    let dir = tempfile::tempdir().unwrap();
    h.rm.logs = Some(
        yard_rm::logs::LogStore::open(yard_rm::logs::LogSettings::beside(
            &dir.path().join("rm.db"),
            None,
        ))
        .unwrap(),
    );
    let check = |id: Option<String>| {
        let h = &h;
        async move {
            for path in script_paths() {
                if path.contains("{id}") && id.is_none() {
                    continue;
                }
                // A node's page asks for the node; the others for the job.
                let one = if path.starts_with("/ws/v1/cluster/nodes/") {
                    "n1:8042"
                } else {
                    id.as_deref().unwrap_or("")
                };
                let uri = path
                    .replace("{id}", one)
                    .replace("{attempt}", "1")
                    .replace("{container}", "container_1700000000000_0001_01_000009")
                    .replace("{file}", "stdout");
                let (status, reply) = h.get(&uri).await;
                if path.contains("{container}") {
                    // No container ran here (logs_e2e reads real ones): the admin is told
                    // which, not refused.
                    assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {reply}");
                    // yard's error shape or YARN's RemoteException, naming it either way.
                    assert!(reply.to_string().contains("000009"), "{reply}");
                } else {
                    assert_eq!(status, StatusCode::OK, "{uri}: {reply}");
                    assert!(reply.is_object(), "{uri}: {reply}");
                }
                let bare = h.call_as(None, Method::GET, &uri, None).await;
                if path == "/ws/v1/cluster/info" {
                    assert_eq!(bare.status, StatusCode::OK, "{uri}");
                } else {
                    assert_eq!(
                        bare.status,
                        StatusCode::UNAUTHORIZED,
                        "{uri}: {}",
                        bare.text
                    );
                }
            }
        }
    };
    check(None).await;
    h.node("n1:8042", 4).await;
    h.heartbeat("n1:8042", 25.0, &[]).await;
    let (status, reply) = h
        .post(
            "/ws/v1/yard/mapreduce/jobs",
            json!({"job": {"app": "synthetic", "maps": 2, "mapSeconds": 0.5}}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{reply}");
    let id = reply["job"]["id"].as_str().unwrap().to_owned();
    assert!(reply["job"]["deadlineMs"].is_null(), "{reply}");
    h.set_now(T0 + 1_000);
    check(Some(id.clone())).await;

    // An rm that keeps no logs says why, and the app page shows that message in their place.
    let stateless = Harness::new(Settings::default());
    stateless.node("n1:8042", 4).await;
    let (status, reply) = stateless
        .post(
            "/ws/v1/yard/mapreduce/jobs",
            json!({"job": {"app": "synthetic", "maps": 2, "mapSeconds": 0.5}}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{reply}");
    let id = reply["job"]["id"].as_str().unwrap();
    let (status, reply) = stateless.get(&format!("/ws/v1/yard/apps/{id}/logs")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{reply}");
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .contains("no aggregated logs"),
        "{reply}"
    );
    assert!(ui::APP_JS.contains("The logs cannot be listed: "));
}
