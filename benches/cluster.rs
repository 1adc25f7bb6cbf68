//! The live cluster's speed on loopback. (1) Allocation throughput: an rm with 100 simulated
//! nodemanagers (16 vcores each) and 50 masters asking at once over HTTP, each releasing what
//! it got and asking again; containers granted per second. The same rounds against the
//! sans-IO `Cluster`, in the same process, are the baseline. (2) Ask → running: a master asks
//! for one container on a real nodemanager, starts `/bin/true` in it with its token, and the
//! time until the nodemanager has spawned the process is measured (p50/p99).
//! (3) Load: 1,000 submissions (new-application, then submit) from 50 concurrent clients,
//! each acknowledged only after its commit to the state store; all must be listed afterwards,
//! and the API calls' p50/p99 latency is printed.
//! Goals: ≥ 5,000 containers/s; ask → running < 50 ms p99.
//! Run: `cargo bench --bench cluster` (`-- --quick` for a short run).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use yard_nodemanager::daemon::NmOptions;
use yard_rm::cluster::{Cluster, NewApp, Settings};
use yard_rm::credentials::load_or_create_secret;
use yard_rm::daemon::RmOptions;
use yard_wire::auth::{ClusterSecret, Principal};
use yard_wire::protocol::{AllocateRequest, RegisterNode, Resource};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: u32 = 100;
const MASTERS: usize = 50;
const ASK: u32 = 16;

/// An allocate body asking for `count` containers on `node`, or anywhere when `node` is `None`.
/// YARN's bookkeeping: the `*` count is the total wanted; a node ask says where, and
/// `relaxLocality: false` on `*` keeps the grants there.
fn ask(app: &str, count: u32, node: Option<&str>, releases: Vec<String>) -> Value {
    let size = json!({"memoryMb": 256, "vcores": 1});
    let mut asks = vec![
        json!({"priority": 1, "resourceName": "*", "capability": size,
                               "numContainers": count, "relaxLocality": node.is_none()}),
    ];
    if let Some(node) = node {
        asks.push(json!({"priority": 1, "resourceName": node, "capability": size, "numContainers": count}));
    }
    json!({"applicationId": app, "progress": 0.5, "releases": releases, "asks": asks})
}

fn ids(reply: &Value) -> Vec<String> {
    reply["allocated"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["containerId"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The same rounds against the sans-IO core: what HTTP costs on top.
fn baseline(rounds: usize) -> f64 {
    let mut c = Cluster::new(Settings::default(), ClusterSecret::new([1; 32]), 0);
    for n in 0..NODES {
        c.register_node(
            0,
            RegisterNode {
                node_id: format!("n{n}:1"),
                rack: "r".into(),
                capability: Resource {
                    memory_mb: 65_536,
                    vcores: 16,
                },
                containers: Vec::new(),
            },
        );
    }
    let apps: Vec<String> = (0..MASTERS)
        .map(|_| {
            let id = c.new_application(0, "u").unwrap();
            c.submit(0, NewApp::new(&id, "bench", "u", "q")).unwrap();
            c.master_registered(&id, None).unwrap();
            id
        })
        .collect();
    let mut held: Vec<Vec<String>> = vec![Vec::new(); MASTERS];
    let (t, mut granted) = (Instant::now(), 0u64);
    for _ in 0..rounds {
        for (i, app) in apps.iter().enumerate() {
            let req: AllocateRequest =
                serde_json::from_value(ask(app, ASK, None, std::mem::take(&mut held[i]))).unwrap();
            let reply = c.allocate(0, req).unwrap();
            granted += reply.allocated.len() as u64;
            held[i] = reply
                .allocated
                .into_iter()
                .map(|a| a.container_id)
                .collect();
        }
    }
    granted as f64 / t.elapsed().as_secs_f64()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let tmp = std::env::temp_dir().join(format!("yard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let rm_options = RmOptions {
        bind: ([127, 0, 0, 1], 0).into(),
        state_db: tmp.join("rm.db"),
        secret_file: tmp.join("rm.secret"),
        yard_home: None,
        admin_user: "bench".into(),
        settings: Settings::default(),
        tick: Duration::from_millis(500),
        master_env: Default::default(),
        profiles_db: None,
        logs: yard_rm::logs::LogSettings::beside(&tmp.join("rm.db"), None),
    };
    tokio::spawn(yard_rm::daemon::serve(
        rm_options,
        move |a| tx.send(a).unwrap(),
        std::future::pending(),
    ));
    let rm = format!("http://{}", rx.await.unwrap());
    // The bench is the rm's operator: it reads the secret the rm created and mints tokens.
    let bearer = load_or_create_secret(&tmp.join("rm.secret"))
        .unwrap()
        .bearer_key();
    let admin = bearer.issue(&Principal::Admin {
        user: "bench".into(),
    });
    let node_credential = bearer.issue(&Principal::Node { node: None });
    let master = |app: &str| {
        bearer.issue(&Principal::Master {
            app: app.into(),
            attempt: 1,
        })
    };
    let http = reqwest::Client::new();
    let post = |url: String, token: String, body: Value| {
        let http = http.clone();
        async move {
            http.post(url)
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };

    // (1) Throughput: 100 simulated nodes, 50 masters.
    for n in 0..NODES {
        post(format!("{rm}/ws/v1/yard/nodes"), node_credential.clone(), json!({"nodeId": format!("sim{n}:1"), "rack": "r", "capability": {"memoryMb": 65536, "vcores": 16}})).await;
    }
    let mut apps = Vec::new();
    for _ in 0..MASTERS {
        let id = post(
            format!("{rm}/ws/v1/cluster/apps/new-application"),
            admin.clone(),
            json!({}),
        )
        .await["application-id"]
            .as_str()
            .unwrap()
            .to_owned();
        http.post(format!("{rm}/ws/v1/cluster/apps"))
            .bearer_auth(&admin)
            .json(&json!({"application-id": id}))
            .send()
            .await
            .unwrap();
        post(
            format!("{rm}/ws/v1/yard/apps/{id}/register"),
            master(&id),
            json!({}),
        )
        .await;
        apps.push(id);
    }
    let rounds = if quick { 20 } else { 200 };
    let granted = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let masters: Vec<_> = apps
        .iter()
        .cloned()
        .map(|app| {
            let (rm, http, granted) = (rm.clone(), http.clone(), granted.clone());
            let token = master(&app);
            tokio::spawn(async move {
                let mut held = Vec::new();
                for _ in 0..rounds {
                    let reply: Value = http
                        .post(format!("{rm}/ws/v1/yard/apps/{app}/allocate"))
                        .bearer_auth(&token)
                        .json(&ask(&app, ASK, None, std::mem::take(&mut held)))
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    held = ids(&reply);
                    granted.fetch_add(held.len() as u64, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for m in masters {
        m.await.unwrap();
    }
    let http_rate = granted.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64();
    let core_rate = baseline(rounds);
    println!(
        "allocation, {NODES} nodes, {MASTERS} masters asking {ASK} containers a round, {rounds} rounds:"
    );
    println!(
        "  over HTTP            {http_rate:>12.0} containers/s   goal ≥ 5,000: {}",
        if http_rate >= 5000.0 { "met" } else { "MISSED" }
    );
    println!(
        "  sans-IO core         {core_rate:>12.0} containers/s   (baseline; HTTP keeps {:.1} % of it)",
        100.0 * http_rate / core_rate
    );

    // (2) Ask → running on a real nodemanager.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let nm_options = NmOptions {
        bind: ([127, 0, 0, 1], 0).into(),
        rm: rm.clone(),
        rack: "r".into(),
        capability: Resource {
            memory_mb: 8192,
            vcores: 8,
        },
        work_dir: tmp.join("nm"),
        heartbeat: Duration::from_millis(100),
        stop_grace: Duration::from_secs(1),
        credential: node_credential.clone(),
        keep_finished: 10,
        logs: Default::default(),
        // Set, not measured: no disk probe before the timed runs.
        disk_rate: Some(200e6),
    };
    tokio::spawn(yard_nodemanager::daemon::serve(
        nm_options,
        move |a| tx.send(a).unwrap(),
        std::future::pending(),
    ));
    let nm = rx.await.unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !http
        .get(format!("http://{nm}/ws/v1/node/info"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["nodeInfo"]["registered"]
        .as_bool()
        .unwrap_or(false)
    {
        assert!(
            Instant::now() < deadline,
            "the nodemanager never registered"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let app = &apps[0];
    let samples = if quick { 30 } else { 300 };
    let mut latencies = Vec::with_capacity(samples);
    let mut held: Vec<String> = Vec::new();
    for _ in 0..samples {
        let t = Instant::now();
        let reply: Value = post(
            format!("{rm}/ws/v1/yard/apps/{app}/allocate"),
            master(app),
            ask(app, 1, Some(&nm), std::mem::take(&mut held)),
        )
        .await;
        let Some(container) = reply["allocated"]
            .as_array()
            .and_then(|a| a.first())
            .cloned()
        else {
            panic!("no container on {nm}: {reply}");
        };
        let start = json!({"token": container["token"], "command": ["/bin/true"]});
        let started = http
            .post(format!("http://{nm}/ws/v1/node/containers"))
            .json(&start)
            .send()
            .await
            .unwrap();
        assert_eq!(started.status(), 201, "{:?}", started.text().await);
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        held = vec![container["containerId"].as_str().unwrap().to_owned()];
    }
    latencies.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
    println!(
        "ask → running on a real nodemanager ({} samples): p50 {p50:.2} ms, p99 {p99:.2} ms   goal p99 < 50 ms: {}",
        latencies.len(),
        if p99 < 50.0 { "met" } else { "MISSED" }
    );

    // (3) Load: 1,000 submissions from 50 concurrent clients, each acknowledged only once it is
    // committed (fsync'd) to the state store; every one must be there afterwards.
    let (clients, each) = if quick { (10, 10) } else { (50, 20) };
    let before = apps_count(&http, &rm, &admin).await;
    let t = Instant::now();
    let submitters: Vec<_> = (0..clients)
        .map(|_| {
            let (rm, http, admin) = (rm.clone(), http.clone(), admin.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(2 * each);
                for _ in 0..each {
                    let start = Instant::now();
                    let id: Value = http
                        .post(format!("{rm}/ws/v1/cluster/apps/new-application"))
                        .bearer_auth(&admin)
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    latencies.push(start.elapsed().as_secs_f64() * 1e3);
                    let id = id["application-id"].as_str().unwrap().to_owned();
                    let start = Instant::now();
                    let status = http
                        .post(format!("{rm}/ws/v1/cluster/apps"))
                        .bearer_auth(&admin)
                        .json(&json!({"application-id": id, "application-name": "load"}))
                        .send()
                        .await
                        .unwrap()
                        .status();
                    assert_eq!(status, 202);
                    latencies.push(start.elapsed().as_secs_f64() * 1e3);
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for s in submitters {
        latencies.extend(s.await.unwrap());
    }
    let took = t.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let stored = apps_count(&http, &rm, &admin).await - before;
    println!(
        "{} submissions from {clients} concurrent clients: {stored} accounted for, {:.0} submissions/s; API calls p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        clients * each,
        (clients * each) as f64 / took,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0.0),
    );
    assert_eq!(
        stored,
        clients * each,
        "every acknowledged submission is listed"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

async fn apps_count(http: &reqwest::Client, rm: &str, admin: &str) -> usize {
    let apps: Value = http
        .get(format!("{rm}/ws/v1/cluster/apps"))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    apps["apps"]["app"].as_array().map_or(0, Vec::len)
}
