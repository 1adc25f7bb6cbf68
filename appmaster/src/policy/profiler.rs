//! Where a job's [`Profile`] comes from (Dart §5.1): the task sampler runs sample reduces at a
//! few input sizes before the job to fit `f(d) = a·d^b` (eq. 9); the job profiler keeps what
//! earlier runs of the recurring job measured — map durations by locality, partition size,
//! shuffle bandwidth, and `(k_i, d_{k_i})` for the skew estimate (eq. 13).
//!
//! Both are plain values: [`RunObserver`] watches the same events and decisions a policy sees
//! and sums a run up in a [`RunRecord`]; [`Profiler`] turns records and samples into the next
//! run's profile. Where they are stored (SQLite) is the profile store's business (issue 7).

use std::collections::HashMap;

use super::{
    AttemptId, Decision, Event, Locality, PowerLaw, PreviousRun, Profile, ReduceId, Seconds,
};

/// What one finished run measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunRecord {
    /// Mean duration of successful node-local maps, and of the others.
    pub map_local: Option<Seconds>,
    pub map_remote: Option<Seconds>,
    /// The shortest successful node-local map, and σ of ln(duration) over the node-local
    /// maps (with at least `SPREAD_MIN_MAPS` of them): what `lone_map` and the forecast's
    /// spread learn from the kind's earlier runs.
    pub map_shortest: Option<Seconds>,
    pub map_spread: Option<f64>,
    /// Mean bytes one map sent to one reducer.
    pub partition_bytes: Option<f64>,
    /// Shuffle bytes over the time from the first to the last transfer.
    pub shuffle_bandwidth: Option<f64>,
    /// Map outputs in the answer, and the largest reduce input (eq. 13's `k_i`, `d_{k_i}`).
    pub k: u32,
    pub max_reduce_input: u64,
    /// `(input bytes, seconds)` of every reduce that ran: more points for `f(d)`.
    pub reduce_samples: Vec<(f64, Seconds)>,
}

/// A run measures its maps' spread once it has this many node-local ones.
pub const SPREAD_MIN_MAPS: u64 = 3;

/// A running mean.
#[derive(Debug, Clone, Copy, Default)]
struct Mean {
    sum: f64,
    n: u64,
}

impl Mean {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }

    fn get(self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
}

/// Watches one run's events and decisions (in the order the policy saw and made them) and
/// sums it up. It owns no clock: times come with the events.
#[derive(Debug, Default)]
pub struct RunObserver {
    reduces: u32,
    /// Each map's input over the job's mean map input (as `dart` scales a map's expected
    /// time), from `JobStarted`.
    scales: Vec<f64>,
    /// Live attempts: start, locality and input scale (maps) or reduce id.
    maps: HashMap<AttemptId, (Seconds, Locality, f64)>,
    reduce_attempts: HashMap<AttemptId, ReduceId>,
    /// When each reduce got its input, and how much it kept.
    reduce_ready: HashMap<ReduceId, (Seconds, u64)>,
    local: Mean,
    remote: Mean,
    /// ln(duration / input scale) of node-local maps: their mean and mean square (the spread
    /// of a map's time about what its input makes it, not of the inputs' sizes: a job's small
    /// tail split would otherwise read as a spread of 2 in ln), and the shortest duration.
    local_ln: Mean,
    local_ln_sq: Mean,
    shortest: Option<Seconds>,
    partition: Mean,
    shuffle_bytes: f64,
    shuffle_window: Option<(Seconds, Seconds)>,
    /// Bytes the reduces fetched and the seconds some reduce was fetching (`fetched`), and
    /// the end of the last fetch counted.
    fetch: (f64, Seconds),
    fetched_until: Option<Seconds>,
    record: RunRecord,
}

impl RunObserver {
    pub fn new() -> Self {
        RunObserver::default()
    }

    pub fn event(&mut self, now: Seconds, event: &Event) {
        match event {
            Event::JobStarted(spec) => {
                self.reduces = spec.reduces;
                let total: u64 = spec.maps.iter().map(|m| m.bytes).sum();
                let mean = total as f64 / spec.maps.len().max(1) as f64;
                self.scales = spec
                    .maps
                    .iter()
                    .map(|m| match mean > 0.0 {
                        true => (m.bytes as f64 / mean).max(0.01),
                        false => 1.0,
                    })
                    .collect();
            }
            Event::TaskFinished {
                attempt,
                output_bytes,
            } => {
                if let Some((started, locality, scale)) = self.maps.remove(attempt) {
                    let took = now - started;
                    match locality {
                        Locality::NodeLocal => {
                            self.local.add(took);
                            if took > 0.0 {
                                let ln = (took / scale).ln();
                                self.local_ln.add(ln);
                                self.local_ln_sq.add(ln * ln);
                                self.shortest =
                                    Some(self.shortest.map_or(took, |s: f64| s.min(took)));
                            }
                        }
                        _ => self.remote.add(took),
                    }
                    if self.reduces > 0 {
                        self.partition
                            .add(*output_bytes as f64 / f64::from(self.reduces));
                    }
                } else if let Some(r) = self.reduce_attempts.remove(attempt)
                    && let Some((ready, kept)) = self.reduce_ready.remove(&r)
                {
                    self.record.reduce_samples.push((kept as f64, now - ready));
                }
            }
            Event::TaskFailed(a) => {
                self.maps.remove(a);
                self.reduce_attempts.remove(a);
            }
            Event::ShuffleBytes(bytes) => {
                self.shuffle_bytes += *bytes as f64;
                let (first, _) = self.shuffle_window.unwrap_or((now, now));
                self.shuffle_window = Some((first, now));
            }
            Event::ReduceInputReady { reduce, bytes } => {
                self.reduce_ready.insert(*reduce, (now, *bytes));
                self.record.max_reduce_input = self.record.max_reduce_input.max(*bytes);
            }
            _ => {}
        }
    }

    pub fn decisions(&mut self, now: Seconds, decisions: &[Decision]) {
        for d in decisions {
            match *d {
                Decision::LaunchMap {
                    attempt,
                    locality,
                    map,
                    ..
                } => {
                    let scale = self.scales.get(map.0 as usize).copied().unwrap_or(1.0);
                    self.maps.insert(attempt, (now, locality, scale));
                }
                Decision::LaunchReduce {
                    attempt, reduce, ..
                } => {
                    self.reduce_attempts.insert(attempt, reduce);
                }
                Decision::SampleReduceInput { reduce, keep_bytes } => {
                    if let Some(ready) = self.reduce_ready.get_mut(&reduce) {
                        ready.1 = keep_bytes;
                    }
                }
                Decision::Kill(a) => {
                    self.maps.remove(&a);
                    self.reduce_attempts.remove(&a);
                }
                Decision::Finish(p) => self.record.k = p.k,
                _ => {}
            }
        }
    }

    /// A reduce fetched `bytes` of map output in the `seconds` up to `now` (the live task
    /// runner times its fetches). Where any were timed, the run's bandwidth is their bytes
    /// over the time some reduce was fetching: the window from the first shuffled byte to the
    /// last measures when outputs became fetchable and when the reduces came for them (on a
    /// live cluster, after the maps freed their containers), not the link. The time is the
    /// union of the fetches' spans, not their sum: the profile's bandwidth stands in for eq.
    /// 5's `B_J^avg`, the job's aggregate, and two reduces fetching side by side move twice
    /// the bytes in the same seconds (summed, the demo's profile read its two reduces' shuffle
    /// at half its speed, and the guard stopped the maps a wave early; issue 29). Spans are
    /// reported as they end, so one that ends before the last counted adds only what it
    /// reaches past it.
    pub fn fetched(&mut self, now: Seconds, bytes: u64, seconds: Seconds) {
        if seconds > 0.0 && bytes > 0 {
            let from = self
                .fetched_until
                .map_or(now - seconds, |u| u.max(now - seconds));
            self.fetch.0 += bytes as f64;
            self.fetch.1 += (now - from).max(0.0);
            self.fetched_until = Some(self.fetched_until.map_or(now, |u| u.max(now)));
        }
    }

    /// The run summed up.
    pub fn record(&self) -> RunRecord {
        let window = self.shuffle_window.and_then(|(first, last)| {
            (last > first && self.shuffle_bytes > 0.0).then(|| self.shuffle_bytes / (last - first))
        });
        let bandwidth = match self.fetch {
            (bytes, seconds) if seconds > 0.0 => Some(bytes / seconds),
            _ => window,
        };
        let n = self.local_ln.n;
        let spread = match (
            n >= SPREAD_MIN_MAPS,
            self.local_ln.get(),
            self.local_ln_sq.get(),
        ) {
            (true, Some(m), Some(sq)) => {
                // The sample variance of ln(duration).
                let var = (sq - m * m) * n as f64 / (n - 1) as f64;
                Some(var.max(0.0).sqrt())
            }
            _ => None,
        };
        RunRecord {
            map_local: self.local.get(),
            map_remote: self.remote.get(),
            map_shortest: self.shortest,
            map_spread: spread,
            partition_bytes: self.partition.get(),
            shuffle_bandwidth: bandwidth,
            ..self.record.clone()
        }
    }
}

/// Builds profiles from the task sampler's samples and earlier runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Profiler {
    /// What to assume where nothing has been measured yet.
    pub defaults: Profile,
    /// `(d, f(d))` from sample reduces and from earlier runs' reduces.
    pub reduce_samples: Vec<(f64, Seconds)>,
    /// Earlier runs, oldest first.
    pub runs: Vec<RunRecord>,
}

/// How many recent runs the profile averages over: recurring jobs drift as their data grows.
pub const RECENT_RUNS: usize = 5;

impl Profiler {
    pub fn new(defaults: Profile) -> Self {
        Profiler {
            defaults,
            reduce_samples: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// The task sampler's plan: `n` sample reduce inputs spread geometrically over
    /// `(0, total]` (the power law is fitted in log space, so log-spaced sizes weigh each
    /// decade alike), largest last.
    pub fn sample_sizes(total: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| total / 2f64.powi((n - 1 - i) as i32 * 2))
            .collect()
    }

    pub fn add_run(&mut self, record: RunRecord) {
        self.reduce_samples
            .extend(record.reduce_samples.iter().copied());
        self.runs.push(record);
    }

    /// The profile for the next run: the recent runs' means where measured (map times pooled
    /// over their maps), `f(d)` fitted to every sample (the defaults' where no fit is
    /// possible), and every run's `(k, d_max)`.
    pub fn profile(&self) -> Profile {
        let recent = &self.runs[self.runs.len().saturating_sub(RECENT_RUNS)..];
        let mean = |f: fn(&RunRecord) -> Option<f64>, default: f64| {
            let mut m = Mean::default();
            recent.iter().filter_map(f).for_each(|x| m.add(x));
            m.get().unwrap_or(default)
        };
        // `T_l^a`, `T_r^a` (Dart §5.3: from the previous executions): every recent run's maps
        // pooled, each run's mean weighted by its map count `k` (at least 1), so a run of one
        // map moves them as one map does and a run of a hundred as a hundred.
        let pooled = |f: fn(&RunRecord) -> Option<f64>, default: f64| {
            let (sum, n) = recent
                .iter()
                .filter_map(|r| f(r).map(|x| (x, f64::from(r.k.max(1)))))
                .fold((0.0, 0.0), |(s, n), (x, w)| (s + x * w, n + w));
            match n > 0.0 {
                true => sum / n,
                false => default,
            }
        };
        let d = &self.defaults;
        Profile {
            map_local: pooled(|r| r.map_local, d.map_local),
            map_remote: pooled(|r| r.map_remote, d.map_remote),
            // The shortest map any recent run timed; their spreads pooled as their map times
            // are (a sampler run's spread from 3 maps weighed as much as a run's of 273 put
            // FB-2009 job1510's σ at 0.30 where its maps' is about 0.22, and the expected last
            // of a wave of 273 at 160 s where it came at 115).
            map_shortest: recent
                .iter()
                .filter_map(|r| r.map_shortest)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
                .or(d.map_shortest),
            map_spread: recent
                .iter()
                .any(|r| r.map_spread.is_some())
                .then(|| pooled(|r| r.map_spread, 0.0))
                .or(d.map_spread),
            partition_bytes: mean(|r| r.partition_bytes, d.partition_bytes),
            shuffle_bandwidth: mean(|r| r.shuffle_bandwidth, d.shuffle_bandwidth),
            reduce_time: PowerLaw::fit(&self.reduce_samples).unwrap_or(d.reduce_time),
            previous_runs: self
                .runs
                .iter()
                .filter(|r| r.k > 0 && r.max_reduce_input > 0)
                .map(|r| PreviousRun {
                    k: r.k,
                    max_reduce_input: r.max_reduce_input as f64,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{ContainerId, JobSpec, MapId, Progress, ReduceId};

    fn defaults() -> Profile {
        Profile {
            map_local: 1.0,
            map_remote: 2.0,
            map_shortest: None,
            map_spread: None,
            partition_bytes: 3.0,
            shuffle_bandwidth: 4.0,
            reduce_time: PowerLaw {
                a: 1.0,
                b: 1.0,
                spread: 0.0,
            },
            previous_runs: Vec::new(),
        }
    }

    #[test]
    fn the_sampler_spreads_sizes_geometrically_up_to_the_whole_input() {
        assert_eq!(Profiler::sample_sizes(64.0, 3), vec![4.0, 16.0, 64.0]);
        assert!(Profiler::sample_sizes(1.0, 0).is_empty());
    }

    #[test]
    fn a_profile_with_nothing_measured_is_the_defaults() {
        assert_eq!(Profiler::new(defaults()).profile(), defaults());
    }

    #[test]
    fn sampled_reduces_fit_the_power_law_and_runs_average_over_the_recent_ones() {
        let mut p = Profiler::new(defaults());
        for d in Profiler::sample_sizes(1e9, 5) {
            p.reduce_samples.push((d, 3e-4 * d.powf(0.7)));
        }
        for i in 0..7 {
            p.add_run(RunRecord {
                map_local: Some(f64::from(i)),
                partition_bytes: None,
                k: 10 + i as u32,
                max_reduce_input: 100,
                ..RunRecord::default()
            });
        }
        let profile = p.profile();
        assert!(
            (profile.reduce_time.b - 0.7).abs() < 1e-9,
            "{:?}",
            profile.reduce_time
        );
        assert!((profile.reduce_time.a / 3e-4 - 1.0).abs() < 1e-6);
        // The last five runs: 2, 3, 4, 5, 6 s, of 12, 13, 14, 15, 16 maps, pooled.
        let pooled = (2.0 * 12.0 + 3.0 * 13.0 + 4.0 * 14.0 + 5.0 * 15.0 + 6.0 * 16.0) / 70.0;
        assert!(
            (profile.map_local - pooled).abs() < 1e-12,
            "{}",
            profile.map_local
        );
        assert_eq!(profile.partition_bytes, 3.0, "never measured: the default");
        assert_eq!(profile.previous_runs.len(), 7);
        assert_eq!(
            profile.previous_runs[0],
            PreviousRun {
                k: 10,
                max_reduce_input: 100.0
            }
        );
    }

    /// Map `i` launched node-local at 0 and finished at `took[i]`, for each `i`.
    fn node_local_maps_took(o: &mut RunObserver, took: &[f64]) {
        for (a, &t) in (0u32..).zip(took) {
            let launch = Decision::LaunchMap {
                attempt: AttemptId(a),
                map: MapId(a),
                container: ContainerId(u64::from(a)),
                locality: Locality::NodeLocal,
                speculative: false,
            };
            o.decisions(0.0, &[launch]);
            let done = Event::TaskFinished {
                attempt: AttemptId(a),
                output_bytes: 0,
            };
            o.event(t, &done);
        }
    }

    #[test]
    fn runs_teach_the_next_profile_their_shortest_map_and_spread() {
        // Node-local maps of e^0, e^1, e^2 s: ln-times 0, 1, 2, sample σ 1.
        let mut o = RunObserver::new();
        node_local_maps_took(&mut o, &[1.0, 1f64.exp(), 2f64.exp()]);
        let first = o.record();
        assert_eq!(first.map_shortest, Some(1.0));
        assert!((first.map_spread.unwrap() - 1.0).abs() < 1e-9, "{first:?}");
        // Two maps are too few to measure a spread.
        let few = RunRecord {
            map_shortest: Some(0.5),
            ..RunRecord::default()
        };
        let mut p = Profiler::new(defaults());
        assert_eq!(
            (p.profile().map_shortest, p.profile().map_spread),
            (None, None)
        );
        p.add_run(first);
        p.add_run(few);
        let profile = p.profile();
        assert_eq!(
            profile.map_shortest,
            Some(0.5),
            "the shortest of the recent runs"
        );
        assert_eq!(
            profile.map_spread,
            Some(1.0),
            "pooled over those that measured one"
        );
    }

    #[test]
    fn the_spread_is_of_a_maps_time_about_its_input_and_runs_pool_it_by_their_maps() {
        // Maps of 1, 2 and 3 units of input taking 1, 2 and 3 s (a tail split beside full
        // blocks): each as long as its input makes it, spread 0, where their raw times'
        // would be 0.55.
        let mut o = RunObserver::new();
        let maps = [1u64, 2, 3].map(|bytes| crate::policy::MapSpec {
            bytes,
            replicas: Vec::new(),
        });
        let spec = JobSpec {
            deadline: Some(100.0),
            maps: maps.to_vec(),
            reduces: 0,
            profile: defaults(),
            allotment: None,
            recovered: Vec::new(),
        };
        o.event(0.0, &Event::JobStarted(spec));
        node_local_maps_took(&mut o, &[1.0, 2.0, 3.0]);
        let scaled = o.record();
        assert!(scaled.map_spread.unwrap() < 1e-9, "{scaled:?}");
        // A run of 3 maps with spread 1 beside one of 297 with spread 0: pooled by maps.
        let mut p = Profiler::new(defaults());
        for (k, spread) in [(3, 1.0), (297, 0.0)] {
            p.add_run(RunRecord {
                k,
                map_spread: Some(spread),
                ..RunRecord::default()
            });
        }
        assert!((p.profile().map_spread.unwrap() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn the_observer_sums_a_run_up_from_its_events_and_decisions() {
        let mut o = RunObserver::new();
        let spec = JobSpec {
            deadline: Some(100.0),
            maps: Vec::new(),
            reduces: 2,
            profile: defaults(),
            allotment: None,
            recovered: Vec::new(),
        };
        o.event(0.0, &Event::JobStarted(spec));
        let launch = |a: u32, locality| Decision::LaunchMap {
            attempt: AttemptId(a),
            map: MapId(a),
            container: ContainerId(u64::from(a)),
            locality,
            speculative: false,
        };
        o.decisions(
            0.0,
            &[
                launch(0, Locality::NodeLocal),
                launch(1, Locality::Remote),
                launch(2, Locality::NodeLocal),
            ],
        );
        o.event(
            10.0,
            &Event::TaskFinished {
                attempt: AttemptId(0),
                output_bytes: 100,
            },
        );
        o.event(11.0, &Event::ShuffleBytes(100));
        o.event(
            12.0,
            &Event::TaskFinished {
                attempt: AttemptId(2),
                output_bytes: 300,
            },
        );
        o.event(
            15.0,
            &Event::TaskFinished {
                attempt: AttemptId(1),
                output_bytes: 200,
            },
        );
        o.event(16.0, &Event::ShuffleBytes(500));
        o.decisions(
            16.0,
            &[Decision::LaunchReduce {
                attempt: AttemptId(3),
                reduce: ReduceId(0),
                container: ContainerId(0),
            }],
        );
        o.event(
            17.0,
            &Event::ReduceInputReady {
                reduce: ReduceId(0),
                bytes: 300,
            },
        );
        o.decisions(
            17.0,
            &[Decision::SampleReduceInput {
                reduce: ReduceId(0),
                keep_bytes: 200,
            }],
        );
        o.event(
            21.0,
            &Event::TaskFinished {
                attempt: AttemptId(3),
                output_bytes: 0,
            },
        );
        o.decisions(
            21.0,
            &[Decision::Finish(Progress {
                k: 3,
                ..Progress::default()
            })],
        );
        let r = o.record();
        assert_eq!(r.map_local, Some(11.0)); // (10 + 12) / 2
        assert_eq!(r.map_remote, Some(15.0));
        assert_eq!(r.partition_bytes, Some(100.0)); // (50 + 150 + 100) / 3
        assert_eq!(r.shuffle_bandwidth, Some(120.0)); // 600 bytes over 11 → 16
        assert_eq!((r.k, r.max_reduce_input), (3, 300));
        assert_eq!(r.reduce_samples, vec![(200.0, 4.0)]);
        // Fetches the reduces timed are the link's speed, not the window: 600 bytes in 0.5 s.
        o.fetched(30.0, 100, 0.1);
        o.fetched(31.0, 500, 0.4);
        o.fetched(31.5, 7, 0.0); // untimed: not counted
        assert_eq!(o.record().shuffle_bandwidth, Some(1200.0));
    }

    #[test]
    fn reduces_fetching_side_by_side_measure_the_jobs_bandwidth_not_one_reduces() {
        let mut o = RunObserver::new();
        // Two reduces fetch 100 bytes each over the same 0.1 s, then one fetches 100 more
        // alone: 300 bytes while some reduce fetched for 0.2 s (summed, 0.3 s: 1,000 B/s).
        o.fetched(1.0, 100, 0.1);
        o.fetched(1.0, 100, 0.1);
        o.fetched(1.2, 100, 0.1);
        let b = o.record().shuffle_bandwidth.unwrap();
        assert!((b - 1500.0).abs() < 1e-6, "{b}");
        // A span reported late, inside the ones counted, adds its bytes and no time; one
        // reaching past them adds the part past them.
        o.fetched(1.15, 150, 0.1);
        o.fetched(1.25, 150, 0.1);
        let b = o.record().shuffle_bandwidth.unwrap();
        assert!((b - 600.0 / 0.25).abs() < 1e-6, "{b}");
    }
}
