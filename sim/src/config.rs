//! Experiment settings: the cluster model and the deadline configurations of the Dart paper.

use serde::Serialize;

/// The simulated cluster (EVALUATION.md "Cluster model"; defaults are the Dart paper's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterConfig {
    pub nodes: u32,
    pub containers_per_node: u32,
    pub nodes_per_rack: u32,
    /// A rack-local map takes this many times its node-local duration.
    pub rack_local_factor: f64,
    /// A remote (off-rack) map takes this many times its node-local duration.
    pub remote_factor: f64,
    /// Slow nodes (stragglers, Dart §6.5: 8 of 64 VMs loaded with CPU and IO hogs).
    pub slow_nodes: u32,
    /// How much slower a task runs on a slow node.
    pub slowdown: f64,
    /// Probability that a task attempt fails (Dart §6.6), at a uniform point of its run.
    pub failure_rate: f64,
    /// Heartbeat: progress reports, container grants and policy ticks, seconds.
    pub heartbeat: f64,
    /// The shared cluster only: every job's master holds a container of its own, as a live
    /// one does, and masters together hold at most this share of the cluster (the rm's
    /// `--master-share`); a job whose master finds no room waits, its deadline running.
    /// `None`: masters take no container and start on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master_share: Option<f64>,
    /// The shared cluster only: seconds from a master getting its container (or arriving,
    /// when masters hold none) to its job asking for task containers, its deadline running.
    /// A live master spends them starting its process, registering and opening the profile
    /// store; `yard replay` sets what it measured, to predict jobs whose deadlines are
    /// about that short. 0: masters start at once.
    pub master_startup_s: f64,
    /// The shared cluster only: seconds every task attempt takes beyond its work, in the
    /// container it runs in: a live task waits for its process (and its container's, and
    /// the task runner's) to start. Set by `yard replay` as `master_startup_s` is. 0: tasks
    /// start at once.
    pub task_startup_s: f64,
    /// The shared cluster only: capacity queues, as `yard rm --queues` reads them (a queue
    /// without a policy runs the day's cluster policy); job `i` goes to the `i mod N`-th
    /// queue, each job its own user. `None`: one queue, as the rm without a queue file.
    #[serde(skip)]
    pub queues: Option<yard_cluster::queues::QueueFile>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 64,
            containers_per_node: 2,
            nodes_per_rack: 16,
            rack_local_factor: 1.2,
            remote_factor: 1.5,
            slow_nodes: 0,
            slowdown: 4.0,
            failure_rate: 0.0,
            heartbeat: 1.0,
            master_share: None,
            master_startup_s: 0.0,
            task_startup_s: 0.0,
            queues: None,
        }
    }
}

/// One of the Dart paper's deadline configurations (Table 2): containers δ·MRA, deadline μ·MDT.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeadlineConfig {
    pub name: &'static str,
    /// δ: containers granted / MRA.
    pub delta: f64,
    /// μ: deadline / MDT.
    pub mu: f64,
}

impl DeadlineConfig {
    /// C1: all the containers, a deadline too tight to read all input.
    pub const C1: DeadlineConfig = DeadlineConfig {
        name: "C1",
        delta: 1.0,
        mu: 0.95,
    };
    /// C2: half the containers, a loose deadline.
    pub const C2: DeadlineConfig = DeadlineConfig {
        name: "C2",
        delta: 0.5,
        mu: 1.6,
    };
    /// C3: the ideal: all the containers, deadline = MDT.
    pub const C3: DeadlineConfig = DeadlineConfig {
        name: "C3",
        delta: 1.0,
        mu: 1.0,
    };
    pub const ALL: [DeadlineConfig; 3] = [Self::C1, Self::C2, Self::C3];
    /// Not the paper's: a job on the shared cluster (`crate::shared`), holding what the
    /// cluster policy grants it, its deadline drawn as ARIA draws one (`U[lo, hi]·T_J`).
    pub const SHARED: DeadlineConfig = DeadlineConfig {
        name: "shared",
        delta: f64::NAN,
        mu: f64::NAN,
    };

    pub fn by_name(name: &str) -> Option<DeadlineConfig> {
        Self::ALL
            .into_iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Containers for a job with this MRA: `⌈δ·MRA⌉`, at least 1.
    pub fn containers(&self, mra: u32) -> u32 {
        ((self.delta * f64::from(mra)).ceil() as u32).max(1)
    }
}

/// How harsh the simulator is (issue 15 item 4): how tasks report progress, which law spreads
/// task durations, and what a job's profile is measured from. Every run says which it used
/// (the table's header, `--json`'s `model`). The default is the simulator as it was before
/// these switches; [`Model::HARSH`] turns all three. `earlier_runs` is how many earlier runs
/// of each recurring job its profile has seen (`WorkloadOptions::earlier_runs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Model {
    pub progress: ProgressModel,
    pub durations: TaskLaw,
    pub profiles: ProfileSource,
    pub earlier_runs: usize,
    /// An oracle, for measuring what the estimator's fit costs: every profile's reduce law
    /// is the truth's (`WorkloadOptions::oracle_reduce_law`). Absent from the JSON when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub oracle_reduce_law: bool,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            progress: ProgressModel::default(),
            durations: TaskLaw::default(),
            profiles: ProfileSource::default(),
            earlier_runs: 1,
            oracle_reduce_law: false,
        }
    }
}

impl Model {
    /// Noisy progress at a varying speed, Pareto task spreads, profiles from sample runs only.
    pub const HARSH: Model = Model {
        progress: ProgressModel::NOISY,
        durations: TaskLaw::Pareto,
        profiles: ProfileSource::Sampled,
        earlier_runs: 1,
        oracle_reduce_law: false,
    };

    /// One line for a header: `progress exact, durations log-normal, profiles noisy-truth,
    /// 1 earlier run`.
    pub fn describe(&self) -> String {
        let runs = match self.earlier_runs {
            1 => "1 earlier run".to_owned(),
            n => format!("{n} earlier runs"),
        };
        let oracle = match self.oracle_reduce_law {
            true => ", the truth's reduce law (an oracle)",
            false => "",
        };
        format!(
            "progress {}, durations {}, profiles {}, {runs}{oracle}",
            self.progress.name(),
            self.durations.name(),
            self.profiles.name()
        )
    }
}

/// How a running task's progress reports relate to its true progress.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProgressModel {
    /// σ of the log of the task's speed in each of [`RATE_SEGMENTS`] equal parts of its run
    /// (independent, mean-one log-normal factors): a task's speed varies over its life, and
    /// its progress is the share of its work done. 0: one speed, progress linear in time.
    /// The task still ends when its duration says.
    pub rate_spread: f64,
    /// Standard deviation of the normal noise added to each report (the sum clamped to
    /// [0, 1]). 0: reports are exact.
    pub report_noise: f64,
}

/// The parts of a task's run whose speeds [`ProgressModel::rate_spread`] draws.
pub(crate) const RATE_SEGMENTS: usize = 4;

impl ProgressModel {
    /// Exact reports of progress linear in time (the simulator before issue 15).
    pub const EXACT: ProgressModel = ProgressModel {
        rate_spread: 0.0,
        report_noise: 0.0,
    };
    /// A task's speed varies by a factor of about e^±0.5 between quarters of its run; each
    /// report is off by 5 points (sd).
    pub const NOISY: ProgressModel = ProgressModel {
        rate_spread: 0.5,
        report_noise: 0.05,
    };

    pub fn name(&self) -> String {
        match *self {
            ProgressModel::EXACT => "exact".to_owned(),
            ProgressModel::NOISY => "noisy".to_owned(),
            p => format!(
                "rate spread {} report noise {}",
                p.rate_spread, p.report_noise
            ),
        }
    }

    pub fn parse(s: &str) -> Result<ProgressModel, String> {
        match s {
            "exact" => Ok(ProgressModel::EXACT),
            "noisy" => Ok(ProgressModel::NOISY),
            _ => Err(format!(
                "unknown progress model {s:?}; expected exact or noisy"
            )),
        }
    }
}

impl Default for ProgressModel {
    fn default() -> Self {
        ProgressModel::EXACT
    }
}

/// The law that spreads a job's task durations around their mean (maps around the job's map
/// time, reduces' noise `e_r` around `f(d)`), at the spread the workload asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TaskLaw {
    /// Mean-one log-normal, LN(−σ²/2, σ): the law Dart's estimator assumes for reduces.
    #[default]
    LogNormal,
    /// Mean-one Pareto with the coefficient of variation of that log-normal: the same mean
    /// and spread, a polynomial tail (shape α = 1 + √(1 + 1/CV²), 4.4 at σ 0.3) and a floor
    /// at (α − 1)/α of the mean.
    Pareto,
}

impl TaskLaw {
    pub fn name(self) -> &'static str {
        match self {
            TaskLaw::LogNormal => "log-normal",
            TaskLaw::Pareto => "pareto",
        }
    }

    pub fn parse(s: &str) -> Result<TaskLaw, String> {
        match s {
            "log-normal" | "lognormal" => Ok(TaskLaw::LogNormal),
            "pareto" => Ok(TaskLaw::Pareto),
            _ => Err(format!(
                "unknown duration law {s:?}; expected log-normal or pareto"
            )),
        }
    }
}

/// What a job's profile (what the policy is told) is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileSource {
    /// Task times from sample runs, but the output per map from the truth's own total and the
    /// shuffle bandwidth as the truth's times 10 % noise (the simulator before issue 15).
    #[default]
    NoisyTruth,
    /// Everything from sample runs: the output ratio measured on a few of the job's maps
    /// (whose output ratios vary, σ `task_spread`), the bandwidth as the job profiler
    /// measures it on their transfers (bytes over the first to the last arrival).
    Sampled,
}

impl ProfileSource {
    pub fn name(self) -> &'static str {
        match self {
            ProfileSource::NoisyTruth => "noisy-truth",
            ProfileSource::Sampled => "sampled",
        }
    }

    pub fn parse(s: &str) -> Result<ProfileSource, String> {
        match s {
            "noisy-truth" => Ok(ProfileSource::NoisyTruth),
            "sampled" => Ok(ProfileSource::Sampled),
            _ => Err(format!(
                "unknown profile source {s:?}; expected noisy-truth or sampled"
            )),
        }
    }
}
