//! `GET /metrics` with 1,000 applications known on 64 nodes (issue 19's goal: a scrape in
//! under 10 ms), against two baselines over the same state in the same process: Hadoop's
//! `GET /ws/v1/cluster/metrics` (counts over apps and nodes, in JSON) and
//! `GET /ws/v1/cluster/apps` (every application listed). All three go through the rm's router
//! (no credential for `/metrics`, an admin's for the others), so the ratios compare the work
//! of the handlers. Prints the median and p99 of each, in ms, and the ratios of the medians.
//! Run: `cargo bench -p yard-rm --features daemon --bench metrics` (`-- --quick`: fewer rounds).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use axum::http::Method;
use serde_json::json;
use support::{Harness, T0};
use yard_cluster::classifier::ClassifierConfig;
use yard_cluster::policy::ClusterPolicy;
use yard_rm::cluster::Settings;

const NODES: usize = 64;
const APPS: usize = 1_000;

/// 64 nodes with load; 1,000 applications: a third running with two task containers each,
/// a third finished with an answer, a third waiting.
async fn cluster() -> Harness {
    let h = Harness::new(Settings {
        scheduler: ClusterPolicy::MinEdf,
        master_share: 0.5,
        overload: Some(ClassifierConfig::default()),
        ..Settings::default()
    });
    let nodes: Vec<String> = (0..NODES)
        .map(|i| format!("10.0.{}.{}:8042", i / 250, i % 250))
        .collect();
    for n in &nodes {
        h.node(n, 32).await;
        h.heartbeat(n, 40.0, &[]).await;
    }
    for i in 0..APPS {
        let deadline = json!({"deadline-ms": T0 + 600_000 + i as i64});
        match i % 3 {
            0 => {
                let model = json!({"maps": 20, "reduces": 2, "trackingUrl": format!("http://10.1.0.1:{}/status", 20_000 + i),
                                   "profile": {"map": {"avg": 5.0, "max": 8.0}}});
                let id = h.running(deadline, model).await;
                h.allocate(&id, 2, 0.1).await;
            }
            1 => {
                let id = h.running(deadline, json!({})).await;
                h.put(
                    &format!("/ws/v1/yard/apps/{id}/result"),
                    json!({"processedFraction": 0.8, "answer": {"job": {"policy": "dart",
                           "outcome": "met", "estimateAtClose": 9.0, "jobSeconds": 10.0}}}),
                )
                .await;
                h.post(
                    &format!("/ws/v1/yard/apps/{id}/unregister"),
                    json!({"succeeded": true}),
                )
                .await;
            }
            _ => {
                h.submitted(deadline).await;
            }
        }
    }
    for n in &nodes {
        h.heartbeat(n, 60.0, &[]).await;
    }
    h
}

/// Median and p99 of `rounds` timed runs of `f` (after a few untimed ones), in ms.
async fn time<F, Fut>(rounds: usize, mut f: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    for _ in 0..5 {
        std::hint::black_box(f().await);
    }
    let mut ms: Vec<f64> = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        std::hint::black_box(f().await);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 30 } else { 300 };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let built = Instant::now();
        let h = cluster().await;
        let scrape = h.call_as(None, Method::GET, "/metrics", None).await;
        assert!(scrape.status.is_success(), "{}", scrape.text);
        let samples = yard_rm::metrics::parse_text(&scrape.text).expect("a valid scrape");
        let apps = yard_rm::metrics::sum_of(&samples, "yard_rm_apps");
        assert_eq!(apps as usize, APPS, "the rm knows every application");
        println!(
            "state: {APPS} apps, {NODES} nodes (built in {:.1} s); a scrape is {} bytes, {} samples",
            built.elapsed().as_secs_f64(),
            scrape.text.len(),
            samples.len()
        );
        let admin = h.rightful("/ws/v1/cluster/metrics");
        let get = |uri: &'static str, bearer: Option<String>| {
            let h = &h;
            move || {
                let bearer = bearer.clone();
                async move {
                    let a = h.call_as(bearer.as_deref(), Method::GET, uri, None).await;
                    assert!(a.status.is_success(), "{uri}: {}", a.status);
                    a.text.len()
                }
            }
        };
        let metrics = time(rounds, get("/metrics", None)).await;
        let direct = time(rounds, || async {
            h.rm.metrics
                .scrape(|refresh| refresh(&h.rm.cluster.lock().unwrap()))
                .len()
        })
        .await;
        let cluster_metrics = time(rounds, get("/ws/v1/cluster/metrics", Some(admin.clone()))).await;
        let cluster_apps = time(rounds, get("/ws/v1/cluster/apps", Some(admin.clone()))).await;
        let row = |what: &str, (p50, p99): (f64, f64)| {
            println!(
                "{what:<40} median {p50:>8.3} ms   p99 {p99:>8.3} ms   ×{:>6.2} of cluster/metrics   ×{:>5.2} of cluster/apps",
                p50 / cluster_metrics.0,
                p50 / cluster_apps.0
            );
        };
        row("GET /metrics", metrics);
        row("RmMetrics::scrape (no HTTP)", direct);
        row("GET /ws/v1/cluster/metrics (baseline)", cluster_metrics);
        row("GET /ws/v1/cluster/apps (baseline)", cluster_apps);
        let goal = Duration::from_millis(10).as_secs_f64() * 1e3;
        println!(
            "goal: a scrape under {goal:.0} ms with {APPS} apps: {} (p99 {:.3} ms)",
            if metrics.0 < goal { "met" } else { "NOT met" },
            metrics.1
        );
    });
}
