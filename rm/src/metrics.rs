//! The rm's Prometheus metrics (`GET /metrics`, text format 0.0.4) and the scrape targets it
//! hands Prometheus (`GET /ws/v1/yard/prometheus/targets`, `http_sd` JSON).
//!
//! One [`Registry`] per rm (not the crate's global one), so tests and benchmarks that run
//! several rms in a process see only their own. What describes the cluster's state now (apps,
//! nodes and containers by state, node load, classifier verdicts, quotas, the policy's spare
//! grants and kills) is read from the [`Cluster`] at scrape time ([`RmMetrics::refresh`],
//! under the cluster's lock): the policies stay sans-IO and count nothing for the exporter.
//! What happens between scrapes (heartbeats, allocate latency, completed containers, the
//! deadline outcomes masters report) is counted by the REST handlers.
//!
//! Labels are bounded: states, policy names, verdicts, stages, node ids (one per node of the
//! cluster) and queue names (the rm's queue file's). Never an application or container id.

use std::sync::Mutex;

use prometheus::{
    Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec,
    IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};
use serde_json::Value;
use yard_wire::protocol::ContainerEnd;
use yard_wire::replies::TargetGroup;

use crate::cluster::{Cluster, NodeState};
use yard_cluster::app::YarnApplicationState;
use yard_cluster::classifier::Verdict;
use yard_cluster::policy::Stage;

/// The content type of the Prometheus text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How long the rm keeps a finished master's final figures and lists them as a target: the
/// dashboards read masters over `[10m]` windows.
pub const FINAL_FIGURES_RETENTION_MS: i64 = 600_000;
/// At most this many masters' final figures are kept, the oldest dropped first…
pub(crate) const FINAL_FIGURES_KEPT: usize = 1_000;
/// …and at most this many bytes of them in all (a master's exposition is a few KiB).
pub(crate) const FINAL_FIGURES_TOTAL_BYTES: usize = 32 << 20;
/// The largest exposition one master may leave.
pub const MAX_FINAL_FIGURES_BYTES: usize = 256 << 10;

/// The outcomes a deadline-bound job reports (`job.outcome` in its answer).
pub(crate) const OUTCOMES: [&str; 3] = ["met", "empty", "missed"];

/// The states an application's lifecycle takes (never `NEW_SAVING`: yard saves before it
/// answers a submission), with their labels: YARN's names in lower case.
fn app_state_labels() -> impl Iterator<Item = String> {
    YarnApplicationState::ALL
        .iter()
        .filter(|s| **s != YarnApplicationState::NewSaving)
        .map(|s| s.name().to_ascii_lowercase())
}

/// Every metric the rm exports.
pub struct RmMetrics {
    registry: Registry,
    /// Refresh and encode one scrape at a time (per-node series are cleared and set again).
    scrape: Mutex<()>,
    /// Time spent in the cluster's allocate call for a master (under the lock).
    pub allocate_seconds: Histogram,
    pub heartbeats: IntCounter,
    pub containers_completed: IntCounterVec,
    pub deadline_outcomes: IntCounterVec,
    pub processed_fraction: HistogramVec,
    pub estimation_error: HistogramVec,
    apps: IntGaugeVec,
    nodes: IntGaugeVec,
    containers: IntGaugeVec,
    memory: IntGaugeVec,
    vcores: IntGaugeVec,
    node_cpu: GaugeVec,
    node_load1: GaugeVec,
    node_memory_used: GaugeVec,
    node_containers: IntGaugeVec,
    classifier_nodes: IntGaugeVec,
    classifier_labels: IntCounterVec,
    quota_containers: IntGaugeVec,
    quota_apps: IntGauge,
    spare_allocations: IntCounterVec,
    spare_kills: IntCounterVec,
    policy: IntGaugeVec,
    queue_memory: IntGaugeVec,
    queue_apps: IntGaugeVec,
    queue_preempted: IntCounterVec,
    start_time: Gauge,
    /// Finished masters' last expositions (`PUT /ws/v1/yard/apps/{id}/metrics`).
    pub finals: Mutex<FinalFigures>,
}

/// One finished master's last exposition, as it sent it.
#[derive(Debug, Clone)]
pub struct Final {
    pub text: String,
    /// When the rm got it (its clock): it is kept for [`FINAL_FIGURES_RETENTION_MS`] from then.
    pub kept_ms: i64,
    /// The `host:port` Prometheus scraped the live master at: its `instance` label, kept so
    /// the final figures continue the live master's series.
    pub instance: String,
}

/// Finished masters' final figures, by application: a short job's master has exited before
/// Prometheus finds it, so the rm serves its last figures in its place for a while. In memory,
/// bounded in count and bytes (an rm restart forgets them, as Prometheus forgets nothing it
/// scraped).
#[derive(Debug, Default)]
pub struct FinalFigures {
    by_app: std::collections::BTreeMap<String, Final>,
    bytes: usize,
}

impl FinalFigures {
    /// Keeps `app`'s final figures (replacing any it sent before), dropping what expired and,
    /// past the caps, the oldest.
    pub fn keep(&mut self, app: &str, kept: Final) {
        let now = kept.kept_ms;
        self.bytes += kept.text.len();
        if let Some(old) = self.by_app.insert(app.to_owned(), kept) {
            self.bytes -= old.text.len();
        }
        self.expire(now);
        while self.by_app.len() > FINAL_FIGURES_KEPT || self.bytes > FINAL_FIGURES_TOTAL_BYTES {
            let oldest = self
                .by_app
                .iter()
                .min_by_key(|(_, f)| f.kept_ms)
                .map(|(a, _)| a.clone())
                .expect("over a cap, so not empty");
            let gone = self.by_app.remove(&oldest).expect("listed");
            self.bytes -= gone.text.len();
        }
    }

    /// Drops every exposition older than the retention period.
    pub fn expire(&mut self, now_ms: i64) {
        let bytes = &mut self.bytes;
        self.by_app.retain(|_, f| {
            let keep = now_ms - f.kept_ms < FINAL_FIGURES_RETENTION_MS;
            if !keep {
                *bytes -= f.text.len();
            }
            keep
        });
    }

    /// `app`'s final figures, unless they expired.
    pub fn get(&self, app: &str, now_ms: i64) -> Option<&Final> {
        self.by_app
            .get(app)
            .filter(|f| now_ms - f.kept_ms < FINAL_FIGURES_RETENTION_MS)
    }

    pub fn len(&self) -> usize {
        self.by_app.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_app.is_empty()
    }
}

impl Default for RmMetrics {
    fn default() -> Self {
        RmMetrics::new()
    }
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help)
}

impl RmMetrics {
    pub fn new() -> RmMetrics {
        let registry = Registry::new();
        let reg = |c: Box<dyn prometheus::core::Collector>| {
            registry.register(c).expect("metric names are unique");
        };
        let int_gauges = |name: &str, help: &str, labels: &[&str]| {
            let g = IntGaugeVec::new(opts(name, help), labels).expect("valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let gauges = |name: &str, help: &str, labels: &[&str]| {
            let g = GaugeVec::new(opts(name, help), labels).expect("valid metric");
            reg(Box::new(g.clone()));
            g
        };
        let counters = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(opts(name, help), labels).expect("valid metric");
            reg(Box::new(c.clone()));
            c
        };
        let histograms = |name: &str, help: &str, labels: &[&str], buckets: Vec<f64>| {
            let h = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
                .expect("valid metric");
            reg(Box::new(h.clone()));
            h
        };
        let allocate_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "yard_rm_allocate_duration_seconds",
                "Time the rm spends placing containers for one master's allocate call",
            )
            .buckets(prometheus::exponential_buckets(25e-6, 2.0, 16).expect("valid buckets")),
        )
        .expect("valid metric");
        reg(Box::new(allocate_seconds.clone()));
        let heartbeats = IntCounter::new(
            "yard_rm_node_heartbeats_total",
            "Nodemanager heartbeats the rm accepted",
        )
        .expect("valid metric");
        reg(Box::new(heartbeats.clone()));
        let quota_apps = IntGauge::new(
            "yard_rm_quota_apps",
            "Running applications the cluster policy gave a quota",
        )
        .expect("valid metric");
        reg(Box::new(quota_apps.clone()));
        let start_time = Gauge::new(
            "yard_rm_start_time_seconds",
            "When the rm started, seconds since the Unix epoch",
        )
        .expect("valid metric");
        reg(Box::new(start_time.clone()));
        let m = RmMetrics {
            allocate_seconds,
            heartbeats,
            containers_completed: counters(
                "yard_rm_containers_completed_total",
                "Containers that ended, by how: as nodemanagers reported, or LOST with their node",
                &["end"],
            ),
            deadline_outcomes: counters(
                "yard_rm_deadline_outcomes_total",
                "Deadline-bound MapReduce jobs by their master's task policy and outcome",
                &["policy", "outcome"],
            ),
            processed_fraction: histograms(
                "yard_rm_processed_fraction_ratio",
                "The share of its input a MapReduce job's answer was computed from",
                &["policy"],
                // Written out: `linear_buckets` would give bounds like 0.30000000000000004.
                vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0],
            ),
            estimation_error: histograms(
                "yard_rm_estimation_error_ratio",
                "|estimate at map-phase close - job time| / job time, per MapReduce job",
                &["policy"],
                vec![0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0],
            ),
            apps: int_gauges("yard_rm_apps", "Applications by state", &["state"]),
            nodes: int_gauges("yard_rm_nodes", "Nodes by state", &["state"]),
            containers: int_gauges(
                "yard_rm_containers",
                "Live containers by kind (master or task)",
                &["kind"],
            ),
            memory: int_gauges(
                "yard_rm_memory_bytes",
                "Memory of the running nodes: total and allocated",
                &["kind"],
            ),
            vcores: int_gauges(
                "yard_rm_vcores",
                "Virtual cores of the running nodes: total and allocated",
                &["kind"],
            ),
            node_cpu: gauges(
                "yard_rm_node_cpu_ratio",
                "A node's CPU in use, 0 to 1, as it last reported",
                &["node"],
            ),
            node_load1: gauges(
                "yard_rm_node_load1",
                "A node's one-minute load average, as it last reported",
                &["node"],
            ),
            node_memory_used: gauges(
                "yard_rm_node_memory_used_bytes",
                "A node's memory in use, as it last reported",
                &["node"],
            ),
            node_containers: int_gauges(
                "yard_rm_node_containers",
                "Containers the rm placed on a node and has not seen end",
                &["node"],
            ),
            classifier_nodes: int_gauges(
                "yard_rm_classifier_nodes",
                "Running nodes by the overload classifier's verdict (all 0 while it is off)",
                &["verdict"],
            ),
            classifier_labels: counters(
                "yard_rm_classifier_labels_total",
                "Placements the overload classifier labelled from load samples, by label",
                &["label"],
            ),
            quota_containers: int_gauges(
                "yard_rm_quota_containers",
                "Containers the cluster policy's quotas allow running applications, by stage (a quota without a limit adds none)",
                &["stage"],
            ),
            quota_apps,
            spare_allocations: counters(
                "yard_rm_spare_allocations_total",
                "Containers the cluster policy granted beyond a job's quota, by the job's stage",
                &["stage"],
            ),
            spare_kills: counters(
                "yard_rm_spare_kills_total",
                "Above-quota containers the cluster policy took back by killing their tasks",
                &["stage"],
            ),
            policy: int_gauges(
                "yard_rm_cluster_policy_info",
                "The rm's cluster policy (1 for the one in force)",
                &["policy"],
            ),
            queue_memory: int_gauges(
                "yard_rm_queue_memory_bytes",
                "A capacity queue's memory: allocated to its applications, guaranteed (its capacity) and its maximum",
                &["queue", "kind"],
            ),
            queue_apps: int_gauges(
                "yard_rm_queue_apps",
                "A capacity queue's unfinished applications: running, or pending their master",
                &["queue", "state"],
            ),
            queue_preempted: counters(
                "yard_rm_queue_preempted_containers_total",
                "Containers taken back from a capacity queue to restore other queues' guarantees",
                &["queue"],
            ),
            start_time,
            registry,
            scrape: Mutex::new(()),
            finals: Mutex::default(),
        };
        // Label sets known in advance start at 0, so no series appears late.
        for state in app_state_labels() {
            m.apps.with_label_values(&[state.as_str()]);
        }
        for state in ["running", "lost"] {
            m.nodes.with_label_values(&[state]);
        }
        for kind in ["master", "task"] {
            m.containers.with_label_values(&[kind]);
        }
        for verdict in ["good", "bad", "unknown"] {
            m.classifier_nodes.with_label_values(&[verdict]);
        }
        for label in ["good", "bad"] {
            m.classifier_labels.with_label_values(&[label]);
        }
        for stage in ["map", "reduce"] {
            m.quota_containers.with_label_values(&[stage]);
            m.spare_allocations.with_label_values(&[stage]);
            m.spare_kills.with_label_values(&[stage]);
        }
        for end in ContainerEnd::ALL.map(ContainerEnd::label) {
            m.containers_completed.with_label_values(&[end]);
        }
        for policy in yard_appmaster::policy::PolicyKind::ALL {
            for outcome in OUTCOMES {
                m.deadline_outcomes
                    .with_label_values(&[policy.name(), outcome]);
            }
        }
        m
    }

    /// The metrics of an rm started at `started_ms` (ms since the epoch).
    pub fn started_at(started_ms: i64) -> RmMetrics {
        let m = RmMetrics::new();
        m.started(started_ms);
        m
    }

    /// Sets the rm's start time (ms since the epoch).
    pub fn started(&self, started_ms: i64) {
        self.start_time.set(started_ms as f64 / 1000.0);
    }

    /// Counts a MapReduce job's answer (once per job: its first result). `answer` is the
    /// master's JSON: `job.policy`, `job.outcome`, `job.estimateAtClose`, `job.jobSeconds`.
    /// `judged`: the rm's own outcome of the answer (`deadlineOutcome`, the one of record),
    /// counted instead of the master's where the application has a deadline.
    pub fn job_answered(&self, processed_fraction: f64, answer: &Value, judged: Option<&str>) {
        let job = &answer["job"];
        let Some(policy) = job["policy"].as_str() else {
            return;
        };
        // A master names its policy; anything but a known name is one bounded label.
        let policy = yard_appmaster::policy::PolicyKind::ALL
            .iter()
            .map(|p| p.name())
            .find(|name| *name == policy)
            .unwrap_or("other");
        let outcome = judged.or(job["outcome"].as_str());
        if let Some(outcome) = outcome.filter(|o| OUTCOMES.contains(o)) {
            self.deadline_outcomes
                .with_label_values(&[policy, outcome])
                .inc();
        }
        self.processed_fraction
            .with_label_values(&[policy])
            .observe(processed_fraction);
        if let (Some(estimate), Some(seconds)) =
            (job["estimateAtClose"].as_f64(), job["jobSeconds"].as_f64())
            && seconds > 0.0
            && estimate.is_finite()
        {
            self.estimation_error
                .with_label_values(&[policy])
                .observe((estimate - seconds).abs() / seconds);
        }
    }

    /// Reads the cluster's state into the gauges (and the policy's own counts into their
    /// counters). Called under the cluster's lock; linear in applications and nodes.
    pub fn refresh(&self, c: &Cluster) {
        let mut apps: std::collections::BTreeMap<String, i64> =
            app_state_labels().map(|l| (l, 0)).collect();
        let (mut masters, mut tasks) = (0i64, 0i64);
        let (mut quota_map, mut quota_reduce, mut quota_apps) = (0i64, 0i64, 0i64);
        let m = c.metrics();
        for a in c.apps() {
            if let Some(n) = apps.get_mut(&a.lifecycle.state.name().to_ascii_lowercase()) {
                *n += 1;
            }
            let master = a.master.as_ref().filter(|m| c.container(m).is_some());
            masters += i64::from(master.is_some());
            tasks += c.running_containers(&a.application_id) as i64 - i64::from(master.is_some());
            if a.lifecycle.state == YarnApplicationState::Running
                && let Some(q) = a.quota
            {
                quota_apps += 1;
                let n = i64::from(q.containers.unwrap_or(0));
                match q.stage {
                    Stage::Map => quota_map += n,
                    Stage::Reduce => quota_reduce += n,
                }
            }
        }
        for (state, n) in apps {
            self.apps.with_label_values(&[state.as_str()]).set(n);
        }
        self.containers.with_label_values(&["master"]).set(masters);
        self.containers.with_label_values(&["task"]).set(tasks);
        self.quota_containers
            .with_label_values(&["map"])
            .set(quota_map);
        self.quota_containers
            .with_label_values(&["reduce"])
            .set(quota_reduce);
        self.quota_apps.set(quota_apps);
        self.nodes
            .with_label_values(&["running"])
            .set(m.active_nodes as i64);
        self.nodes
            .with_label_values(&["lost"])
            .set(m.lost_nodes as i64);
        const MB: i64 = 1 << 20;
        self.memory
            .with_label_values(&["total"])
            .set(m.total_mb as i64 * MB);
        self.memory
            .with_label_values(&["allocated"])
            .set(m.allocated_mb as i64 * MB);
        self.vcores
            .with_label_values(&["total"])
            .set(m.total_vcores as i64);
        self.vcores
            .with_label_values(&["allocated"])
            .set(m.allocated_vcores as i64);
        // Per node: nodes that left the cluster's books leave the exporter too.
        self.node_cpu.reset();
        self.node_load1.reset();
        self.node_memory_used.reset();
        self.node_containers.reset();
        let mut verdicts = [0i64; 3];
        for n in c.nodes().filter(|n| n.state == NodeState::Running) {
            let id = n.node_id.as_str();
            self.node_containers
                .with_label_values(&[id])
                .set(c.containers_on(&n.node_id).count() as i64);
            if n.telemetry_ms.is_some() {
                let t = &n.telemetry;
                self.node_cpu
                    .with_label_values(&[id])
                    .set(t.cpu_percent / 100.0);
                self.node_load1.with_label_values(&[id]).set(t.load_1m);
                self.node_memory_used
                    .with_label_values(&[id])
                    .set(t.memory_used_bytes as f64);
            }
            if let Some(o) = c.node_overload(id) {
                verdicts[match o.verdict {
                    Verdict::Good => 0,
                    Verdict::Bad => 1,
                    Verdict::Unknown => 2,
                }] += 1;
            }
        }
        for (verdict, n) in ["good", "bad", "unknown"].into_iter().zip(verdicts) {
            self.classifier_nodes.with_label_values(&[verdict]).set(n);
        }
        for (end, n) in c.containers_ended() {
            mirror(
                &self.containers_completed.with_label_values(&[end.label()]),
                n,
            );
        }
        let report = c.scheduler_report();
        self.policy.reset();
        self.policy
            .with_label_values(&[report.policy.name()])
            .set(1);
        let s = report.spare;
        mirror(
            &self.spare_allocations.with_label_values(&["map"]),
            s.spare_map_allocations,
        );
        mirror(
            &self.spare_allocations.with_label_values(&["reduce"]),
            s.spare_allocations.saturating_sub(s.spare_map_allocations),
        );
        mirror(
            &self.spare_kills.with_label_values(&["map"]),
            s.spare_map_kills,
        );
        mirror(
            &self.spare_kills.with_label_values(&["reduce"]),
            s.spare_kills.saturating_sub(s.spare_map_kills),
        );
        if let Some(o) = report.overload {
            mirror(&self.classifier_labels.with_label_values(&["good"]), o.good);
            mirror(&self.classifier_labels.with_label_values(&["bad"]), o.bad);
        }
        self.refresh_queues(c, &report.queues, m.total_mb);
    }

    /// Each capacity queue's memory, applications and preemptions (the queues are the rm's
    /// configuration: a bounded label set).
    fn refresh_queues(
        &self,
        c: &Cluster,
        usage: &[yard_cluster::scheduler::QueueUsage],
        total_mb: u64,
    ) {
        let queues = c.queues();
        let n = queues.len();
        let (mut allocated, mut running, mut pending) =
            (vec![0u64; n], vec![0i64; n], vec![0i64; n]);
        for a in c.apps().filter(|a| !a.lifecycle.state.is_final()) {
            let q = queues.index_of(&a.queue);
            // What it holds now (the time only counts its memory-seconds).
            allocated[q] += c.usage(&a.application_id, 0).allocated_mb;
            match a.lifecycle.state {
                YarnApplicationState::Running => running[q] += 1,
                _ => pending[q] += 1,
            }
        }
        const MB: i64 = 1 << 20;
        let share = |pct: f64| (total_mb as f64 * pct / 100.0) as i64 * MB;
        for (i, q) in queues.all().iter().enumerate() {
            let name = q.name.as_str();
            let memory =
                |kind: &str, v: i64| self.queue_memory.with_label_values(&[name, kind]).set(v);
            memory("allocated", allocated[i] as i64 * MB);
            memory("guaranteed", share(q.capacity));
            memory("maximum", share(q.maximum_capacity));
            self.queue_apps
                .with_label_values(&[name, "running"])
                .set(running[i]);
            self.queue_apps
                .with_label_values(&[name, "pending"])
                .set(pending[i]);
            if let Some(u) = usage.get(i) {
                mirror(
                    &self.queue_preempted.with_label_values(&[name]),
                    u.preempted,
                );
            }
        }
    }

    /// One scrape: the cluster's state read under its lock (`with` takes it), then every
    /// metric in the text format.
    pub fn scrape(&self, with: impl FnOnce(&dyn Fn(&Cluster))) -> String {
        let _one = self.scrape.lock().unwrap_or_else(|p| p.into_inner());
        with(&|c| self.refresh(c));
        self.encode()
    }

    /// Every metric in the Prometheus text format, as they stand.
    pub fn encode(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "cannot encode the metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// A counter kept by the cluster policy, copied into the exporter's: it only goes up.
fn mirror(counter: &prometheus::IntCounter, total: u64) {
    let have = counter.get();
    if total > have {
        counter.inc_by(total - have);
    }
}

/// Where the final figures of finished application `app`'s master are served.
pub(crate) fn final_figures_path(app: &str) -> String {
    format!("/ws/v1/yard/apps/{app}/metrics")
}

/// Prometheus' `http_sd` answer: every running nodemanager and every running master that
/// registered a tracking URL, scraped where they listen; and every finished master whose final
/// figures the rm keeps, scraped at the rm (`rm_addr`, `host:port`) on
/// [`final_figures_path`] under the `instance` the live master had, so its series go on
/// (a short job's master is gone before Prometheus first looks). The labels name the
/// component only: an application id would be an unbounded label on every series Prometheus
/// scrapes from it (the path is a target's address, not a label it keeps).
pub fn targets(
    c: &Cluster,
    finals: &mut FinalFigures,
    rm_addr: &str,
    now_ms: i64,
) -> Vec<TargetGroup> {
    finals.expire(now_ms);
    let nodes: Vec<String> = c
        .nodes()
        .filter(|n| n.state == NodeState::Running)
        .map(|n| n.node_id.clone())
        .collect();
    let masters: Vec<String> = c
        .apps()
        .filter(|a| {
            !a.lifecycle.state.is_final() && finals.get(&a.application_id, now_ms).is_none()
        })
        .filter_map(|a| a.tracking_url.as_deref().and_then(host_port))
        .map(str::to_owned)
        .collect();
    let group = |targets: Vec<String>, labels: &[(&str, String)]| TargetGroup {
        targets,
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    };
    let mut groups = Vec::new();
    if !nodes.is_empty() {
        groups.push(group(nodes, &[("yard_component", "nodemanager".into())]));
    }
    if !masters.is_empty() {
        groups.push(group(masters, &[("yard_component", "mr_master".into())]));
    }
    for (app, f) in &finals.by_app {
        groups.push(group(
            vec![rm_addr.to_owned()],
            &[
                ("yard_component", "mr_master".into()),
                ("instance", f.instance.clone()),
                ("__metrics_path__", final_figures_path(app)),
            ],
        ));
    }
    groups
}

/// `host:port` of an `http://host:port/...` URL (Prometheus' target form).
pub(crate) fn host_port(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("http://")?;
    let end = rest.find('/').unwrap_or(rest.len());
    Some(&rest[..end]).filter(|h| !h.is_empty())
}

/// One sample of a scrape: its name, labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub value: f64,
}

/// A scrape in Prometheus' text format (0.0.4), checked: every line a `# HELP`/`# TYPE`
/// comment or a sample whose names, label quoting and value parse; every sample of a family
/// whose `# TYPE` came first (at most once); no sample twice; counters not negative; a
/// histogram's buckets cumulative up to `le="+Inf"`, which equals its `_count`. The
/// `prometheus` crate writes this format but does not read it; tests check each daemon's
/// `/metrics` with this (and with `promtool check metrics` where installed).
pub fn parse_text(text: &str) -> Result<Vec<Sample>, String> {
    use std::collections::{BTreeMap, BTreeSet};
    let metric_name = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    let label_name = |s: &str| metric_name(s) && !s.contains(':');
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut samples = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |why: String| format!("line {}: {why}: {line:?}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.trim_start().splitn(3, ' ');
            match (words.next(), words.next(), words.next()) {
                (Some("TYPE"), Some(name), Some(kind)) => {
                    if !metric_name(name) {
                        return Err(at("a bad metric name".into()));
                    }
                    if !["counter", "gauge", "histogram", "summary", "untyped"]
                        .contains(&kind.trim())
                    {
                        return Err(at(format!("unknown type {kind}")));
                    }
                    if types.insert(name.into(), kind.trim().into()).is_some() {
                        return Err(at("a second TYPE for the family".into()));
                    }
                    if samples
                        .iter()
                        .any(|s: &Sample| family_of(&s.name, &types) == name)
                    {
                        return Err(at("TYPE after the family's samples".into()));
                    }
                }
                (Some("HELP"), Some(name), _) if metric_name(name) => {}
                (Some("HELP" | "TYPE"), ..) => return Err(at("a malformed HELP or TYPE".into())),
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
        let name = &line[..name_end];
        if !metric_name(name) {
            return Err(at("a bad metric name".into()));
        }
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut chars = inner.char_indices().peekable();
            let close;
            loop {
                let start = match chars.peek() {
                    Some((_, '}')) => {
                        close = chars.next().map_or(0, |(j, _)| j);
                        break;
                    }
                    Some((j, _)) => *j,
                    None => return Err(at("unclosed labels".into())),
                };
                let eq = inner[start..]
                    .find('=')
                    .ok_or_else(|| at("a label without =".into()))?;
                let key = inner[start..start + eq].trim();
                if !label_name(key) {
                    return Err(at(format!("a bad label name {key:?}")));
                }
                while chars.peek().is_some_and(|(j, _)| *j <= start + eq) {
                    chars.next();
                }
                if chars.next().map(|(_, c)| c) != Some('"') {
                    return Err(at("a label value not quoted".into()));
                }
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, c @ ('\\' | '"'))) => value.push(c),
                            _ => return Err(at("a bad escape in a label value".into())),
                        },
                        Some((_, '"')) => break,
                        Some((_, c)) => value.push(c),
                        None => return Err(at("an unclosed label value".into())),
                    }
                }
                if labels.insert(key.to_owned(), value).is_some() {
                    return Err(at(format!("label {key} twice")));
                }
                if chars.peek().is_some_and(|(_, c)| *c == ',') {
                    chars.next();
                }
            }
            rest = &inner[close + 1..];
        }
        let mut fields = rest.split_whitespace();
        let value = match fields.next() {
            Some("+Inf") => f64::INFINITY,
            Some("-Inf") => f64::NEG_INFINITY,
            Some("NaN") => f64::NAN,
            Some(v) => v
                .parse::<f64>()
                .map_err(|_| at(format!("a bad value {v}")))?,
            None => return Err(at("no value".into())),
        };
        if let Some(ts) = fields.next()
            && ts.parse::<i64>().is_err()
        {
            return Err(at("a bad timestamp".into()));
        }
        if fields.next().is_some() {
            return Err(at("more than a value and a timestamp".into()));
        }
        let family = family_of(name, &types);
        let Some(kind) = types.get(family) else {
            return Err(at("a sample before its family's TYPE".into()));
        };
        if kind == "counter" && (value.is_nan() || value < 0.0) {
            return Err(at("a counter below 0".into()));
        }
        if kind == "histogram" && name.ends_with("_bucket") && !labels.contains_key("le") {
            return Err(at("a bucket without le".into()));
        }
        if !seen.insert((name.to_owned(), labels.clone())) {
            return Err(at("the same sample twice".into()));
        }
        samples.push(Sample {
            name: name.into(),
            labels,
            value,
        });
    }
    // Histograms: cumulative buckets, up to +Inf, which is the count.
    for (family, kind) in &types {
        if kind != "histogram" {
            continue;
        }
        let bucket = format!("{family}_bucket");
        /// Each series' buckets (`le`, count), by its labels but `le`.
        type Series = BTreeMap<Vec<(String, String)>, Vec<(f64, f64)>>;
        let mut series: Series = BTreeMap::new();
        for s in samples.iter().filter(|s| s.name == bucket) {
            let le = s.labels["le"].as_str();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse()
                    .map_err(|_| format!("{family}: a bad le {le:?}"))?
            };
            let rest = s.labels.iter().filter(|(k, _)| *k != "le");
            series
                .entry(rest.map(|(k, v)| (k.clone(), v.clone())).collect())
                .or_default()
                .push((le, s.value));
        }
        for (labels, mut buckets) in series {
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            if buckets.windows(2).any(|w| w[1].1 < w[0].1) {
                return Err(format!("{family}{labels:?}: buckets not cumulative"));
            }
            let inf = buckets.last().filter(|b| b.0 == f64::INFINITY);
            let count = samples.iter().find(|s| {
                s.name == format!("{family}_count")
                    && s.labels
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .eq(labels.clone())
            });
            match (inf, count) {
                (Some(inf), Some(count)) if inf.1 == count.value => {}
                _ => {
                    return Err(format!(
                        "{family}{labels:?}: +Inf bucket missing or not _count"
                    ));
                }
            }
        }
    }
    Ok(samples)
}

/// The family a sample belongs to: its name, or a histogram's or summary's name without
/// `_bucket`, `_sum` or `_count`.
fn family_of<'a>(name: &'a str, types: &std::collections::BTreeMap<String, String>) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix)
            && types
                .get(base)
                .is_some_and(|k| k == "histogram" || k == "summary")
        {
            return base;
        }
    }
    name
}

// Test helpers (the rm itself looks up no sample): its tests, the workspace's end-to-end tests and
// benches enable `testing`, so a production build does not carry them.
/// The value of the sample named `name` whose labels include `labels`, if one is.
#[cfg(any(test, feature = "testing"))]
pub fn value_of(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
}

/// The sum of every sample named `name`.
#[cfg(any(test, feature = "testing"))]
pub fn sum_of(samples: &[Sample], name: &str) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .map(|s| s.value)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kept(text: &str, at: i64) -> Final {
        Final {
            text: text.into(),
            kept_ms: at,
            instance: "127.0.0.1:1".into(),
        }
    }

    #[test]
    fn final_figures_are_bounded_in_count_and_bytes_oldest_dropped_first() {
        let mut f = FinalFigures::default();
        for i in 0..=FINAL_FIGURES_KEPT as i64 {
            f.keep(&format!("app_{i}"), kept("x", i));
        }
        assert_eq!(f.len(), FINAL_FIGURES_KEPT);
        assert!(f.get("app_0", 0).is_none(), "the oldest went");
        assert!(f.get("app_1", 1).is_some());
        // Replacing one counts its bytes once.
        f.keep("app_1", kept("yy", 2));
        assert_eq!(f.bytes, FINAL_FIGURES_KEPT + 1);
        // Bytes: big expositions push the oldest out.
        let mut f = FinalFigures::default();
        let big = "x".repeat(MAX_FINAL_FIGURES_BYTES);
        let fit = FINAL_FIGURES_TOTAL_BYTES / MAX_FINAL_FIGURES_BYTES;
        for i in 0..=fit as i64 {
            f.keep(&format!("app_{i}"), kept(&big, i));
        }
        assert_eq!(f.len(), fit);
        assert!(f.bytes <= FINAL_FIGURES_TOTAL_BYTES);
        assert!(f.get("app_0", 0).is_none());
        // And they expire.
        f.expire(FINAL_FIGURES_RETENTION_MS + 1);
        assert_eq!(
            (f.len(), f.bytes),
            (fit - 1, (fit - 1) * MAX_FINAL_FIGURES_BYTES)
        );
        f.expire(FINAL_FIGURES_RETENTION_MS + fit as i64 + 1);
        assert!(f.is_empty() && f.bytes == 0);
    }

    #[test]
    fn the_checker_takes_the_encoders_output_and_refuses_broken_text() {
        let m = RmMetrics::new();
        m.allocate_seconds.observe(0.001);
        m.job_answered(
            0.5,
            &json!({"job": {"policy": "dart", "outcome": "met", "estimateAtClose": 9.0, "jobSeconds": 10.0}}),
            None,
        );
        let samples = parse_text(&m.encode()).unwrap();
        assert_eq!(
            value_of(
                &samples,
                "yard_rm_deadline_outcomes_total",
                &[("policy", "dart"), ("outcome", "met")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value_of(
                &samples,
                "yard_rm_estimation_error_ratio_sum",
                &[("policy", "dart")]
            ),
            Some(0.1)
        );
        for bad in [
            "x 1\n",
            "# TYPE x counter\nx -1\n",
            "# TYPE x gauge\nx{a=\"1} 2\n",
            "# TYPE x gauge\nx{a=1} 2\n",
            "# TYPE x gauge\nx 1\nx 2\n",
            "# TYPE x gauge\nx one\n",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n",
        ] {
            assert!(parse_text(bad).is_err(), "{bad}");
        }
        let good = "# HELP x a \"thing\"\n# TYPE x gauge\nx{a=\"q\\\"uote\",b=\"2\"} 1.5e3\n";
        let s = parse_text(good).unwrap();
        assert_eq!(s[0].labels["a"], "q\"uote");
        assert_eq!(s[0].value, 1500.0);
    }

    #[test]
    fn a_policy_a_master_makes_up_is_one_label() {
        let m = RmMetrics::new();
        m.job_answered(
            0.2,
            &json!({"job": {"policy": "job_0001", "outcome": "met"}}),
            None,
        );
        m.job_answered(
            0.2,
            &json!({"job": {"policy": "dart", "outcome": "nonsense"}}),
            None,
        );
        let samples = parse_text(&m.encode()).unwrap();
        assert!(
            !samples
                .iter()
                .any(|s| s.labels.values().any(|v| v == "job_0001"))
        );
        assert_eq!(
            value_of(
                &samples,
                "yard_rm_deadline_outcomes_total",
                &[("policy", "other"), ("outcome", "met")]
            ),
            Some(1.0)
        );
    }

    #[test]
    fn targets_are_host_and_port() {
        assert_eq!(
            host_port("http://127.0.0.1:4000/status"),
            Some("127.0.0.1:4000")
        );
        assert_eq!(host_port("http://h:1"), Some("h:1"));
        assert_eq!(host_port("ftp://h:1"), None);
    }
}
