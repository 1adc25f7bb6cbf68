//! The simulator's prediction of a replay: the simulated cluster that stands for the live
//! one ([`experiment`]), the start-up costs it gives masters and tasks ([`Startup`]: the
//! flags', else what the live jobs measured), and the same jobs' day on it ([`predict`]).

use serde::Serialize;
use yard_appmaster::policy::{Extensions, PolicyConfig, Seconds};
use yard_sim::shared::{self, SharedJob, SharedResult};
use yard_sim::{ClusterConfig, Experiment, Model};

use super::ReplayArgs;
use super::live::LiveResult;
use super::report::median;

/// The simulated cluster that stands for the live one: `nodes` × `containers`, masters in
/// containers of their own within `master_share`, heartbeats as the nodemanagers', and a map
/// taking its time wherever it runs (a live synthetic map sleeps its seconds on any node: no
/// rack or remote penalty).
pub(super) fn experiment(
    nodes: u32,
    containers: u32,
    heartbeat_ms: u64,
    seed: u64,
    guard: f64,
    master_share: f64,
) -> Experiment {
    Experiment {
        cluster: ClusterConfig {
            nodes,
            containers_per_node: containers,
            rack_local_factor: 1.0,
            remote_factor: 1.0,
            heartbeat: heartbeat_ms as f64 / 1000.0,
            master_share: Some(master_share),
            ..ClusterConfig::default()
        },
        // The live master's `dart` (`Extensions::LIVE`), so that the prediction runs its policy.
        policy: PolicyConfig {
            dart_extensions: Some(Extensions::LIVE),
            ..PolicyConfig::default()
        },
        seed,
        guard,
        model: Model::default(),
    }
}

/// The start-up costs the prediction uses: the flags', else the medians over the live jobs
/// that measured them (0 when none did).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Startup {
    pub(super) master_s: f64,
    pub(super) task_s: f64,
    /// `measured`, `flag`, or `unmeasured` (0: no live job measured it); `master …, task …`
    /// when the two differ.
    pub(super) source: String,
}

impl Startup {
    pub(super) fn of(args: &ReplayArgs, live: &[LiveResult]) -> Startup {
        let cost = |flag: Option<f64>, of: fn(&LiveResult) -> Option<Seconds>| {
            if let Some(x) = flag {
                return (x, "flag");
            }
            let mut xs: Vec<f64> = live.iter().filter_map(of).collect();
            xs.sort_by(f64::total_cmp);
            match xs.is_empty() {
                true => (0.0, "unmeasured"),
                false => (median(&xs), "measured"),
            }
        };
        let (master_s, m) = cost(args.master_startup_s, |r| r.master_startup);
        let (task_s, t) = cost(args.task_startup_s, |r| r.task_startup);
        Startup {
            master_s,
            task_s,
            source: match m == t {
                true => m.to_owned(),
                false => format!("master {m}, task {t}"),
            },
        }
    }
}

/// The prediction, with the start-up costs the live jobs just measured (or the flags'): its
/// deadlines are the live jobs', drawn on the cluster without them.
pub(super) fn predict(
    args: &ReplayArgs,
    mut exp: Experiment,
    prepared: &[SharedJob],
    live: &[LiveResult],
) -> (Vec<SharedResult>, Startup) {
    let startup = Startup::of(args, live);
    exp.cluster.master_startup_s = startup.master_s;
    exp.cluster.task_startup_s = startup.task_s;
    let (sim_results, _) = shared::simulate_day(prepared, args.scheduler, args.policy, &exp);
    (sim_results, startup)
}
