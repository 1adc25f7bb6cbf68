//! `GET /ws/v1/yard/history`: the cluster over the last hour as the rm sampled it on its tick
//! (the web UI's overview chart), one point a step, each the most the cluster metrics said in
//! its step.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, T0, token};
use yard_rm::cluster::Settings;
use yard_wire::auth::Principal;
use yard_wire::replies::HistoryReply;

#[tokio::test]
async fn the_history_holds_a_point_a_step_each_the_most_the_metrics_said_in_it() {
    let h = Harness::new(Settings::default());
    let empty = h.get_ok("/ws/v1/yard/history").await;
    assert_eq!(
        empty,
        json!({"history": {"stepMs": 10_000, "spanMs": 3_600_000, "points": []}})
    );
    h.node("n1:8042", 4).await;
    h.beat_and_tick("n1:8042", T0).await;
    let metrics_then = h.get_ok("/ws/v1/cluster/metrics").await["clusterMetrics"].clone();
    // Within the step: no new point, but what changed is in the step's point.
    let id = h.running(json!({}), json!({})).await;
    h.allocate(&id, 2, 0.1).await;
    h.beat_and_tick("n1:8042", T0 + 5_000).await;
    h.beat_and_tick("n1:8042", T0 + 10_000).await;
    let metrics_now = h.get_ok("/ws/v1/cluster/metrics").await["clusterMetrics"].clone();
    let reply = h.get_ok("/ws/v1/yard/history").await;
    // The reply is the wire's type, exactly.
    let typed: HistoryReply = serde_json::from_value(reply.clone()).unwrap();
    let points = &typed.history.points;
    assert_eq!(
        points.iter().map(|p| p.at_ms).collect::<Vec<_>>(),
        [T0, T0 + 10_000]
    );
    // The job started inside the first step: its point holds the most of each figure, the
    // job's; the first reading, before it, had none of it.
    assert_eq!(metrics_then["appsRunning"], 0, "{metrics_then}");
    for (point, metrics) in [
        (&reply["history"]["points"][0], &metrics_now),
        (&reply["history"]["points"][1], &metrics_now),
    ] {
        for field in [
            "allocatedMB",
            "totalMB",
            "allocatedVirtualCores",
            "totalVirtualCores",
            "containersAllocated",
            "appsRunning",
            "appsPending",
            "activeNodes",
        ] {
            assert_eq!(
                point[field], metrics[field],
                "{field}: {point} against {metrics}"
            );
        }
    }
    // The job's master and its two containers, on a 4-vcore node, in both steps.
    assert_eq!(
        (points[0].apps_running, points[0].allocated_virtual_cores),
        (1, 3)
    );
    assert_eq!(
        (points[1].apps_running, points[1].allocated_virtual_cores),
        (1, 3)
    );
    assert_eq!(points[1].total_virtual_cores, 4);
}

#[tokio::test]
async fn any_callers_token_reads_the_history_and_none_is_refused() {
    let h = Harness::new(Settings::default());
    let user = token(Principal::User { user: "bob".into() });
    let answer = h
        .call_as(Some(&user), Method::GET, "/ws/v1/yard/history", None)
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let bare = h
        .call_as(None, Method::GET, "/ws/v1/yard/history", None)
        .await;
    assert_eq!(bare.status, StatusCode::UNAUTHORIZED, "{}", bare.text);
    let body: Value = bare.json();
    assert!(body["error"].is_string(), "{body}");
}
