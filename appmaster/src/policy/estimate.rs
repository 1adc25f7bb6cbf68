//! Dart's completion-time estimator (paper §3, eq. 1–9), its revise-stage formulas (eq. 11–13)
//! and the online updates of §5.3, as plain arithmetic over a small state.
//!
//! Every time here is measured from the job's start, so `T_J` is compared with `D` directly.
//!
//! Three of yard's extensions (`dart/mod.rs` lists them all) live here, each a switch that
//! [`Estimator::paper`] turns off:
//! - `noisy_reduces` (`dart`'s `reduce_waves`; §3.3, eq. 9 and 12): `T_R` is the expected last
//!   of R lognormal reduces over `⌈R/slots⌉` waves, not the average reduce; Alg. 5 leaves room
//!   for a wave's largest draw instead of sizing to `f(d)`.
//! - [`Estimator::with_reduce_confidence`] (`reduce_confidence`; §4.2.2, eq. 12): Alg. 5 leaves
//!   room for a quantile of that largest draw.
//! - `busy_bandwidth` (§3.2, eq. 5): `V_p` over the time the link had bytes to move, not over
//!   `T_p − T_q`; none before the first reduce runs to pull them, when no byte crossed
//!   before it ([`Estimator::reduce_launched`]).

use super::{Locality, PowerLaw, PreviousRun, Profile, Seconds};

/// The estimate of the job's completion time and its parts, all measured from the job's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// `T_M`: when the map phase ends (eq. 2).
    pub map: Seconds,
    /// `T_NS`: the shuffle left after the map phase ends (eq. 3–7).
    pub shuffle: Seconds,
    /// `T_R`: the reduce phase (eq. 8–9, or eq. 13 with skew handling).
    pub reduce: Seconds,
    /// `T_J = T_M + T_NS + T_R` (eq. 1); `dart`'s `forecast_cut` under `last_moment` caps it
    /// at `D` ([`Estimate::uncapped`] is the sum before the cap).
    pub total: Seconds,
}

impl Estimate {
    /// Dart eq. (1)'s `T_J = T_M + T_NS + T_R` from the parts, before any cap at the deadline:
    /// `total` itself for every policy but `dart` under `last_moment`'s guard, whose
    /// `forecast_cut` caps `total` at `D` (the guard answers by then) while the parts stay the
    /// phases it forecasts. The error of this one measures the profile, not how early the
    /// answer came.
    pub fn uncapped(&self) -> Seconds {
        self.map + self.shuffle + self.reduce
    }
}

/// The running state the estimator needs: smoothed map durations, partition size, shuffle
/// progress and the last map-phase estimate. Updated by the policy as events arrive.
#[derive(Debug, Clone)]
pub struct Estimator {
    /// `T_l^a`, `T_r^a`, `T_m^a`: EWMA map durations, node-local / other / all (§5.3).
    pub local: Seconds,
    pub remote: Seconds,
    pub all: Seconds,
    /// The EWMA factor α (§5.3: 0.8).
    pub alpha: f64,
    /// `p`: the average partition size, bytes one map sends to one reducer.
    pub partition: f64,
    partitions_seen: u64,
    /// `T_q`: when the shuffle started (the first map completion), from job start.
    pub shuffle_start: Option<Seconds>,
    /// When the first map was launched: before `T_q` is known, the shuffle is taken to start
    /// one node-local map duration after it.
    pub first_launch: Option<Seconds>,
    /// `V_p`: bytes shuffled so far.
    pub shuffled: f64,
    /// Map output produced and not yet shuffled, and the time the shuffle had bytes to move:
    /// eq. 5's `T_p − T_q` measured where the paper assumes it (a link busy from `T_q` on).
    pub backlog: f64,
    pub busy: Seconds,
    pub busy_since: Option<Seconds>,
    /// When bytes last crossed: a busy stretch counts up to there, as its bytes do.
    pub moved_at: Option<Seconds>,
    /// The profile's shuffle bandwidth, used until eq. 5 can be measured.
    pub fallback_bandwidth: f64,
    /// Whether a reduce has been launched ([`Estimator::reduce_launched`]).
    pub reduce_seen: bool,
    /// `T_M^o`: the last updated map-phase end (eq. 2).
    pub map_end: Seconds,
    /// `R`: the number of reduce tasks.
    pub reduces: u32,
    /// `f(d) = a·d^b` (eq. 9), fitted offline by the task sampler (§5.1).
    pub reduce_time: PowerLaw,
    /// `T_R / f(d)`: how much longer the last of the job's reduces runs than `f(d)`
    /// ([`reduce_phase_factor`]); 1 for a law fitted without spread and one wave.
    pub reduce_phase: f64,
    /// How many reduces run at once: `min(R, slots)`.
    pub wave_size: u32,
    /// How much longer the last of one wave of reduces runs than `f(d)`, on average.
    pub reduce_wave: f64,
    /// What a reduce that starts now must leave room for among the others of its wave, in
    /// Alg. 5: `reduce_wave` unless a confidence is set ([`Estimator::with_reduce_confidence`]).
    pub reduce_bound: f64,
    /// `(k_i, d_{k_i})` of previous runs, for the skew estimate (eq. 13); empty disables it.
    pub previous_runs: Vec<PreviousRun>,
    /// `T_R` as the expected last of R noisy reduces over their waves (yard's reading of
    /// eq. 9, [`reduce_phase_factor`]); off ([`Estimator::without_reduce_noise`]): eq. 9 and
    /// eq. 13 as printed, at `e = 1`, one wave.
    pub noisy_reduces: bool,
    /// Eq. (5) over the time the shuffle had bytes to move (yard's); off: `V_p / (T_p − T_q)`
    /// as printed.
    pub busy_bandwidth: bool,
}

impl Estimator {
    /// The estimator of a job with `reduces` reduce tasks, of which `slots` can run at once
    /// (the containers the job is promised; `None`: all of them).
    pub fn new(profile: &Profile, reduces: u32, slots: Option<u32>, alpha: f64) -> Self {
        let wave_size = wave_size(reduces, slots);
        let reduce_wave = expected_max_lognormal(profile.reduce_time.spread, wave_size);
        Estimator {
            local: profile.map_local,
            remote: profile.map_remote,
            all: profile.map_local,
            alpha,
            partition: profile.partition_bytes,
            partitions_seen: 0,
            shuffle_start: None,
            first_launch: None,
            shuffled: 0.0,
            backlog: 0.0,
            busy: 0.0,
            busy_since: None,
            moved_at: None,
            fallback_bandwidth: profile.shuffle_bandwidth,
            reduce_seen: false,
            map_end: 0.0,
            reduces,
            reduce_time: profile.reduce_time,
            reduce_phase: phase_over_waves(
                profile.reduce_time.spread,
                reduces,
                wave_size,
                reduce_wave,
            ),
            wave_size,
            reduce_wave,
            reduce_bound: reduce_wave,
            previous_runs: profile.previous_runs.clone(),
            noisy_reduces: true,
            busy_bandwidth: true,
        }
    }

    /// The paper's estimator (`dart-paper`): eq. (5) as printed and eq. (9)/(13) at `e = 1`,
    /// one wave, with Alg. 5 sizing a reduce to `f⁻¹(D − T_p)`.
    pub fn paper(profile: &Profile, reduces: u32, alpha: f64) -> Self {
        let mut e = Estimator::new(profile, reduces, None, alpha).without_reduce_noise();
        e.busy_bandwidth = false;
        e
    }

    /// Eq. (9) as printed: `T_R = f(d)` at `e = 1` ("the mean of e is 1"), the average reduce
    /// standing for the last; one wave, whatever the slots; with skew handling `T_R =
    /// f(d_{k_n})` (eq. 13) alone. Alg. 5 then sizes a reduce to `f⁻¹(D − T_p)` (eq. 12).
    /// Call before [`Estimator::with_reduce_confidence`], which it would undo.
    pub fn without_reduce_noise(mut self) -> Self {
        self.noisy_reduces = false;
        self.reduce_phase = 1.0;
        self.reduce_wave = 1.0;
        self.reduce_bound = 1.0;
        self
    }

    /// Alg. 5 sizes each reduce so that its whole wave ends by `D` with probability `q` (when
    /// the fit's spread is the truth's), not merely on average: the `q`-quantile of the
    /// largest of the wave's draws. `T_R` stays the expected largest.
    pub fn with_reduce_confidence(mut self, q: f64) -> Self {
        self.reduce_bound = quantile_max_lognormal(self.reduce_time.spread, self.wave_size, q)
            .max(self.reduce_wave);
        self
    }

    /// Alg. 5 sizes each reduce to the median reduce (eq. 12 at `e = 1`, as the paper does),
    /// whatever the wave's spread: for a run whose deadline guard cuts the reduces that run
    /// long. `T_R` stays the expected largest.
    pub fn sized_to_the_median_reduce(mut self) -> Self {
        self.reduce_bound = 1.0;
        self
    }

    /// The reduce phase Alg. 5 will leave when `room` seconds are left before `D` and `maps`
    /// map outputs reach the reduces: each reduce is cut to end by `D` at `reduce_bound`, so
    /// each candidate for the last (`last_reduce`) ends `its draw / reduce_bound` of the way —
    /// but no reduce keeps less than `min_fraction` of its input (`f(c·d) = c^b·f(d)`).
    pub fn reduce_after_sampling(
        &self,
        maps: f64,
        skew: bool,
        room: Seconds,
        min_fraction: f64,
    ) -> Seconds {
        if self.reduces == 0 || maps <= 0.0 {
            return 0.0;
        }
        let room = room.max(0.0);
        let floor = min_fraction.powf(self.reduce_time.b);
        self.last_reduce(maps, skew)
            .iter()
            .map(|&(end, draw)| end.min((room * draw / self.reduce_bound).max(end * floor)))
            .fold(0.0, f64::max)
    }

    /// The reduce phase over `maps` map outputs with no reduce cut, each candidate for the last
    /// reduce (`last_reduce`) at the draw Alg. 5 sizes its reduces to (`reduce_bound`: with
    /// `with_reduce_confidence`, the confidence's quantile of the wave's largest draw; the
    /// spread is the profile's measured one), so that it ends by then as often as Alg. 5's
    /// reduces end by `D`. `dart`'s `last_moment` leaves this much time to answer.
    pub fn reduce_bounded(&self, maps: f64, skew: bool) -> Seconds {
        if self.reduces == 0 || maps <= 0.0 {
            return 0.0;
        }
        self.last_reduce(maps, skew)
            .iter()
            .map(|&(end, draw)| match draw > 0.0 {
                true => end * (self.reduce_bound / draw).max(1.0),
                false => end,
            })
            .fold(0.0, f64::max)
    }

    /// `T_m^a` for a candidate of this locality: `T_l^a` when node-local, else `T_r^a`
    /// (eq. 2; rack-local counts as remote, the paper names only the two).
    pub fn map_duration(&self, locality: Locality) -> Seconds {
        match locality {
            Locality::NodeLocal => self.local,
            Locality::RackLocal | Locality::Remote => self.remote,
        }
    }

    /// Eq. (2): `T_M^n = max(T_M^o, T_p + T_m^a)`.
    pub fn map_phase_end(&self, t_p: Seconds, duration: Seconds) -> Seconds {
        self.map_end.max(t_p + duration)
    }

    /// Eq. (5): `B_J^avg = V_p / (T_p − T_q)`, with `busy_bandwidth` (yard's) over the time the
    /// shuffle had bytes to move. The paper's premise (§3.2) is a bottleneck saturated from
    /// `T_q` on, where the two coincide; when map output trickles in, `T_p − T_q` would measure
    /// how fast maps produce, not how fast the shuffle moves (a 112,000-map job's first seconds
    /// read as 41 KB/s). Before any byte moved, the profile's bandwidth (the paper leaves this
    /// open; the digest's reading, kept by `dart-paper` too).
    pub fn bandwidth(&self, t_p: Seconds) -> f64 {
        if !self.busy_bandwidth {
            // As printed: bytes shuffled over the time since the first map finished. Until a
            // byte has crossed (V_p = 0 would make T_S infinite), the profile's bandwidth.
            return match self.shuffle_start {
                Some(t_q) if self.shuffled > 0.0 && t_p > t_q => self.shuffled / (t_p - t_q),
                _ => self.fallback_bandwidth,
            };
        }
        // An open busy stretch counts up to the last bytes that crossed, not up to now: a
        // transfer still in flight has moved nothing seen yet, and its time over none of its
        // bytes read one 86 MB output in flight after a 2 MB one as 2 MB/s on a 69 MB/s link
        // (FB-2009 job2580, C1: the reforecast's shuffle at 2,130 s where it took 1.2).
        let open = match (self.busy_since, self.moved_at) {
            (Some(since), Some(moved)) => (moved - since).max(0.0),
            _ => 0.0,
        };
        let busy = self.busy + open;
        if self.shuffled > 0.0 && busy > 0.0 {
            self.shuffled / busy
        } else {
            self.fallback_bandwidth
        }
    }

    /// A map produced `bytes` of output to shuffle: the link is busy from now if it was idle.
    pub fn output_produced(&mut self, t_p: Seconds, bytes: f64) {
        if bytes <= 0.0 {
            return;
        }
        if self.backlog <= 0.0 {
            self.busy_since = Some(t_p);
        }
        self.backlog += bytes;
    }

    /// A reduce was launched at `t_p`. A shuffle is pulled by the reduces: until one runs,
    /// map output waits where it was written and no link is busy with it. When no byte had
    /// crossed before the first reduce (the live master launches its reduces once the map
    /// phase closes), the busy stretch eq. 5 divides by starts here, not at the first map's
    /// output: counted from there, the idle wait read as a slow link (the demo's reforecast
    /// put a 2 MB shuffle at 1.655 s, at 1.2 MB/s, where it took 0.06 s; issue 29). Where
    /// bytes crossed before any reduce ran (the simulator's link moves each output as its map
    /// ends), nothing changes.
    pub fn reduce_launched(&mut self, t_p: Seconds) {
        let first = !std::mem::replace(&mut self.reduce_seen, true);
        // Eq. 5 as printed (`dart-paper`) reads no busy time.
        if !first || self.shuffled > 0.0 || !self.busy_bandwidth {
            return;
        }
        if let Some(since) = self.busy_since.as_mut() {
            *since = since.max(t_p);
        }
    }

    /// The shuffle moved `bytes` (`V_p` grows); the link goes idle when nothing is left.
    pub fn bytes_shuffled(&mut self, t_p: Seconds, bytes: f64) {
        self.moved_at = Some(t_p);
        self.shuffled += bytes;
        self.backlog -= bytes;
        if self.backlog <= 0.0 {
            self.backlog = 0.0;
            if let Some(since) = self.busy_since.take() {
                self.busy += (t_p - since).max(0.0);
            }
        }
    }

    /// Eq. (3)–(7): `T_NS = (k+1)·p·R / B − (T_M^n − T_q)`, clamped at 0 (a shuffle faster than
    /// the maps produce output leaves nothing after them). `maps` is the `k+1` of the paper.
    /// Before the first map finishes, `T_q` is when the first map should finish.
    pub fn non_overlapped_shuffle(&self, maps: f64, map_end: Seconds, t_p: Seconds) -> Seconds {
        let volume = maps * self.partition * f64::from(self.reduces); // eq. (4) numerator
        if volume <= 0.0 {
            return 0.0;
        }
        let total = volume / self.bandwidth(t_p); // eq. (4)
        let expected_t_q = self.first_launch.unwrap_or(t_p) + self.local;
        let t_q = self.shuffle_start.unwrap_or(expected_t_q).min(map_end);
        let overlapped = map_end - t_q; // eq. (6)
        (total - overlapped).max(0.0) // eq. (3), (7)
    }

    /// Eq. (8) `d = (k+1)·p`, or with skew handling eq. (13): the largest reduce input scaled
    /// from previous runs, `d_{k_n} = 1/(n−1) · Σ (k_n / k_i) · d_{k_i}`. The paper calls `k_i`
    /// the largest reduce input of run i; it divides `k_n`, so it is run i's map count (the
    /// digest's correction). With no previous run, eq. (8).
    pub fn reduce_input(&self, maps: f64, skew: bool) -> f64 {
        let runs = self.previous_runs.iter().filter(|r| r.k > 0);
        let n = runs.clone().count();
        if skew && n > 0 {
            runs.map(|r| maps / f64::from(r.k) * r.max_reduce_input)
                .sum::<f64>()
                / n as f64
        } else {
            maps * self.partition
        }
    }

    /// `T_R` (eq. 9) for the last reduce to finish: the later of [`Self::last_reduce`]'s two.
    fn reduce_duration(&self, maps: f64, skew: bool) -> Seconds {
        let [many, largest] = self.last_reduce(maps, skew);
        many.0.max(largest.0)
    }

    /// The two candidates for the last reduce to finish, each as (its end after the phase
    /// starts, the draw of `e` it stands on): the job's reduces of the average input (eq. 8)
    /// at the largest of their draws over their waves (`reduce_phase_factor`), and — with skew
    /// handling — the largest reduce (eq. 13) at its mean draw. Both are lower bounds of the
    /// expected last end; with no skew the first is the larger, with much skew the second
    /// (eq. 13's largest input times the largest of R draws would count the maximum twice).
    fn last_reduce(&self, maps: f64, skew: bool) -> [(Seconds, f64); 2] {
        if !self.noisy_reduces {
            // Eq. (9) at e = 1, or with skew handling eq. (13)'s largest reduce (§5.2.2: "the
            // maximum execution time of reduce tasks as the duration of the reduce phase").
            // e = 1: "the mean of e is 1, the expected value of ln e is 0" (strictly, Jensen
            // makes E[ln e] ≤ 0; the digest reads e = 1, the median reduce of the log fit).
            let reduce = self.reduce_time.at(self.reduce_input(maps, skew));
            return [(reduce, 1.0), (0.0, 1.0)];
        }
        let typical = self.reduce_time.at(self.reduce_input(maps, false));
        let many = (typical * self.reduce_phase, self.reduce_wave);
        if !skew {
            return [many, (0.0, 1.0)];
        }
        let mean_draw = expected_max_lognormal(self.reduce_time.spread, 1);
        let largest = self.reduce_time.at(self.reduce_input(maps, true));
        [many, (largest * mean_draw, mean_draw)]
    }

    /// Eq. (1): `T_J = T_M^n + T_NS + T_R` with `maps` map outputs and a next map of `duration`.
    pub fn completion(&self, maps: f64, t_p: Seconds, duration: Seconds, skew: bool) -> Estimate {
        let map = self.map_phase_end(t_p, duration);
        let shuffle = self.non_overlapped_shuffle(maps, map, t_p);
        let reduce = if self.reduces == 0 || maps <= 0.0 {
            0.0
        } else {
            self.reduce_duration(maps, skew)
        };
        Estimate {
            map,
            shuffle,
            reduce,
            total: map + shuffle + reduce,
        }
    }

    /// How many of `maps` map outputs the answer folds, in maps, when they all reach the
    /// reduces and the phases end as `e` says, and the reduces are cut at `by`: all of them
    /// while a reduce's input (eq. 8, or eq. 13 with `skew`) fits the time the shuffle leaves
    /// at `reduce_bound` (eq. 12), else the share that fits. A map-only job answers from every
    /// map. (`wave_fill`'s test.)
    pub fn answered_maps(&self, maps: f64, e: &Estimate, by: Seconds, skew: bool) -> f64 {
        let d = self.reduce_input(maps, skew);
        if self.reduces == 0 || d <= 0.0 {
            return maps;
        }
        let room = by - e.map - e.shuffle;
        let d_max = self.reduce_time.inverse(room / self.reduce_bound);
        maps * (d_max / d).min(1.0)
    }

    /// Eq. (11): the speculative window `W = D − T_p − T_NS − T_R`, with the current `k` (a copy
    /// adds no map output) and `T_M^n = max(T_M^o, T_p + T_m^a)` for the copy.
    pub fn window(&self, k: u32, t_p: Seconds, deadline: Seconds, skew: bool) -> Seconds {
        let e = self.completion(f64::from(k), t_p, self.all, skew);
        deadline - t_p - e.shuffle - e.reduce
    }

    /// Eq. (12): `d_max = ((D − T_p) / a)^(1/b)`, the most input a reduce starting now can take
    /// and still finish by `D`, on a node running `pace` times slower than the profile (1: as
    /// the paper has it); 0 when no time is left. The reduce must fit with the largest of its
    /// wave's noise draws, not the median one, or half the reduces sized to `D` end after it
    /// (`reduce_bound`; 1 without spread, as in the paper).
    pub fn max_reduce_input(&self, t_p: Seconds, deadline: Seconds, pace: f64) -> f64 {
        self.reduce_time
            .inverse((deadline - t_p) / (pace * self.reduce_bound))
    }

    /// §5.3: `T_m^a ← α·T_m^a + (1 − α)·T_i^m` on every map completion, for the task's locality
    /// class and for all maps; `p` is the running mean of observed partition sizes.
    pub fn map_finished(&mut self, locality: Locality, duration: Seconds, partition: Option<f64>) {
        let ewma = |old: f64| self.alpha * old + (1.0 - self.alpha) * duration;
        match locality {
            Locality::NodeLocal => self.local = ewma(self.local),
            Locality::RackLocal | Locality::Remote => self.remote = ewma(self.remote),
        }
        self.all = ewma(self.all);
        if let Some(p) = partition {
            // The profile's p stands for the first observation's weight; then a plain mean.
            self.partitions_seen += 1;
            let n = self.partitions_seen as f64;
            self.partition = if n == 1.0 {
                p
            } else {
                self.partition + (p - self.partition) / n
            };
        }
    }
}

impl PowerLaw {
    /// Eq. (9): `f(d) = a·d^b·e` with `ln e = 0`, as the paper predicts: the median reduce of
    /// input `d` (the fit is in log space). The mean and the largest of many are
    /// [`reduce_phase_factor`]'s business.
    pub fn at(&self, d: f64) -> Seconds {
        if d <= 0.0 {
            0.0
        } else {
            self.a * d.powf(self.b)
        }
    }

    /// Eq. (12), the inverse of eq. (9): the input `d` with `f(d) = t`; 0 when `t ≤ 0`.
    pub fn inverse(&self, t: Seconds) -> f64 {
        if t <= 0.0 || self.a <= 0.0 || self.b <= 0.0 {
            return if t > 0.0 { f64::INFINITY } else { 0.0 };
        }
        (t / self.a).powf(1.0 / self.b)
    }

    /// Fits `ln f = ln a + b·ln d + ln e` by ordinary least squares over samples `(d, f(d))`
    /// (§3.3: the task sampler runs sample reduces at several input sizes), and `ln e`'s
    /// standard deviation from the residuals (0 with two samples: a line through two points
    /// has none). Samples with `d ≤ 0` or `f ≤ 0` have no logarithm and are skipped; `None`
    /// without two distinct sizes.
    pub fn fit(samples: &[(f64, Seconds)]) -> Option<PowerLaw> {
        let logs: Vec<(f64, f64)> = samples
            .iter()
            .filter(|(d, f)| *d > 0.0 && *f > 0.0 && d.is_finite() && f.is_finite())
            .map(|(d, f)| (d.ln(), f.ln()))
            .collect();
        let (ln_a, b) = least_squares(&logs)?;
        let squares: f64 = logs.iter().map(|(x, y)| (y - ln_a - b * x).powi(2)).sum();
        let spread = match logs.len() {
            n if n > 2 => (squares / (n - 2) as f64).sqrt(),
            _ => 0.0,
        };
        Some(PowerLaw {
            a: ln_a.exp(),
            b,
            spread,
        })
    }
}

/// `T_R / f(d)` for `reduces` reduces of which `slots` run at once, when each takes
/// `f(d)·e` with `ln e ~ N(0, spread²)` around the fitted curve.
///
/// yard's reading of eq. (9). The paper defines `T_R` as "the execution time of the last
/// reduce task" and estimates it as the average one (§3.3). With independent noise the last
/// of R reduces ends at the *largest* of R draws, not at their mean: for R = 545 and a spread
/// of 0.2 that is 1.8× the mean. And eq. (9) assumes one wave; with fewer slots than reduces
/// the phase runs `w = ⌈R / slots⌉` waves. So: `(w − 1)·E[e] + E[max of min(R, slots) e]`,
/// every earlier wave at its mean and the last one at its largest. With no spread and one
/// wave this is 1: the paper's eq. (9).
pub fn reduce_phase_factor(spread: f64, reduces: u32, slots: Option<u32>) -> f64 {
    let wave = wave_size(reduces, slots);
    phase_over_waves(spread, reduces, wave, expected_max_lognormal(spread, wave))
}

/// [`reduce_phase_factor`] given the wave size and the expected largest draw of a wave
/// (`Estimator::new` has both already; the quadrature is not run twice).
fn phase_over_waves(spread: f64, reduces: u32, wave: u32, last_wave: f64) -> f64 {
    if reduces == 0 {
        return 1.0;
    }
    let waves = reduces.div_ceil(wave);
    f64::from(waves - 1) * expected_max_lognormal(spread, 1) + last_wave
}

/// How many of `reduces` run at once on `slots` containers (`None`: all of them); at least 1.
fn wave_size(reduces: u32, slots: Option<u32>) -> u32 {
    slots.unwrap_or(reduces).clamp(1, reduces.max(1))
}

/// `Φ(x)`, the standard normal distribution function.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// `E[max of n draws of exp(σ·Z)]`, Z standard normal:
/// `∫ exp(σx) · n·φ(x)·Φ(x)^(n−1) dx`, by Simpson's rule (the density of the largest of n).
pub fn expected_max_lognormal(sigma: f64, n: u32) -> f64 {
    if sigma <= 0.0 || n == 0 {
        return 1.0;
    }
    if n == 1 {
        return (sigma * sigma / 2.0).exp();
    }
    let n = f64::from(n);
    let integrand = |x: f64| {
        let pdf = (-x * x / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (sigma * x).exp() * n * pdf * normal_cdf(x).powf(n - 1.0)
    };
    // The largest of n lies above −8; exp(σx)·φ(x) is φ(x − σ) up to a constant, so 9 past σ
    // leaves nothing. 400 steps of at most 0.06: the largest of 10⁹ still has a spread of 0.2.
    let (lo, hi) = (-8.0, 9.0 + sigma);
    let steps = 400;
    let h = (hi - lo) / f64::from(steps);
    let inner: f64 = (1..steps)
        .map(|i| {
            let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
            weight * integrand(lo + h * f64::from(i))
        })
        .sum();
    (integrand(lo) + inner + integrand(hi)) * h / 3.0
}

/// The `q`-quantile of the largest of `n` draws of `exp(σ·Z)`: `exp(σ·Φ⁻¹(q^(1/n)))`, since
/// all `n` stay under `x` with probability `Φ(ln x / σ)^n`.
pub fn quantile_max_lognormal(sigma: f64, n: u32, q: f64) -> f64 {
    if sigma <= 0.0 || n == 0 {
        return 1.0;
    }
    let p = q.clamp(1e-12, 1.0 - 1e-12).powf(1.0 / f64::from(n));
    (sigma * normal_quantile(p)).exp()
}

/// `Φ⁻¹(p)` by bisection (once per job; 1e-10 is plenty).
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Ordinary least squares `y = c₀ + c₁·x`: `(c₀, c₁)`, or `None` without two distinct `x`.
pub(crate) fn least_squares(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if points.len() < 2 || sxx <= f64::EPSILON * mean_x.abs().max(1.0) {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let c1 = sxy / sxx;
    Some((mean_y - c1 * mean_x, c1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// The digest's D1: `k=5, p=1, R=3, T_p=3, T_q=1, V_p=6, T_M^o=5, T_r^a=2.5`, `a=0.5, b=1`.
    fn d1_profile() -> Profile {
        testing::d1_profile(2.0)
    }

    fn d1() -> Estimator {
        let mut e = Estimator::new(&d1_profile(), 3, None, 0.8);
        testing::set_d1_state(&mut e);
        e
    }

    #[test]
    fn fig4_map_phase_end_is_max_of_old_and_new() {
        // Dart Fig. 4: T_M^n = max(5, 3 + 2.5) = 5.5 for the remote candidate m6.
        let e = d1();
        assert_eq!(e.map_phase_end(3.0, e.map_duration(Locality::Remote)), 5.5);
        // A local candidate (T_l^a = 2) ends before the running remote one: T_M stays 5.
        assert_eq!(
            e.map_phase_end(3.0, e.map_duration(Locality::NodeLocal)),
            5.0
        );
    }

    #[test]
    fn d1_every_equation_by_hand() {
        let e = d1();
        assert_eq!(e.bandwidth(3.0), 3.0); // eq. (5): 6 / (3 − 1)
        // Fig. 5 / eq. (4): the shuffle volume counts the candidate: (k+1)·p·R = 6·1·3 = 18,
        // so T_S = 18 / 3 = 6; T_OS = 5.5 − 1 = 4.5 (eq. 6); T_NS = 1.5 (eq. 3, 7).
        assert!(close(e.non_overlapped_shuffle(6.0, 5.5, 3.0), 1.5));
        assert_eq!(e.reduce_input(6.0, false), 6.0); // eq. (8): d = (k+1)·p
        assert_eq!(e.reduce_time.at(6.0), 3.0); // eq. (9): 0.5 · 6^1
        let t = e.completion(6.0, 3.0, 2.5, false); // eq. (1)
        assert!(close(t.map, 5.5) && close(t.shuffle, 1.5) && close(t.reduce, 3.0));
        assert!(close(t.total, 10.0));
    }

    #[test]
    fn eq5_measures_the_time_the_shuffle_had_bytes_to_move() {
        let mut e = d1();
        e.busy_since = None;
        e.backlog = 0.0;
        e.shuffled = 0.0;
        // 10 bytes produced at 1, moved by 3; idle until 8; 10 more produced at 8, moved by 10.
        e.output_produced(1.0, 10.0);
        e.bytes_shuffled(3.0, 10.0);
        assert_eq!(
            e.bandwidth(8.0),
            5.0,
            "idle time does not count: 10 B / 2 s"
        );
        e.output_produced(8.0, 10.0);
        assert_eq!(
            e.bandwidth(9.0),
            5.0,
            "a transfer in flight since 8 has moved nothing seen: its second does not count yet"
        );
        e.output_produced(9.0, 10.0);
        e.bytes_shuffled(10.0, 10.0);
        assert_eq!(
            e.bandwidth(11.0),
            5.0,
            "20 B over 4 busy seconds, 10 B still queued"
        );
        e.bytes_shuffled(12.0, 10.0);
        assert_eq!(e.bandwidth(20.0), 5.0, "30 B over 6 busy seconds");
    }

    #[test]
    fn the_papers_estimator_reads_eq5_over_t_p_minus_t_q_and_eq9_and_12_at_e_1() {
        // D1 with a spread of reduce times and an idle link, neither of which the paper reads.
        let mut profile = d1_profile();
        profile.reduce_time.spread = 0.3;
        let mut e = Estimator::paper(&profile, 3, 0.8);
        testing::set_d1_state(&mut e);
        let t = e.completion(6.0, 3.0, 2.5, false);
        assert!(close(t.map, 5.5) && close(t.shuffle, 1.5) && close(t.reduce, 3.0));
        assert!(close(t.total, 10.0), "D1: {t:?}");
        // The last byte crosses at 3; the link idles until 8. As printed, eq. (5) divides by
        // T_p − T_q all the same: 7 B over 7 s; yard's, over the 2 busy seconds.
        e.bytes_shuffled(3.0, 1.0);
        assert_eq!(e.bandwidth(8.0), 1.0);
        let mut yard = Estimator::new(&profile, 3, None, 0.8);
        testing::set_d1_state(&mut yard);
        yard.bytes_shuffled(3.0, 1.0);
        assert_eq!(yard.bandwidth(8.0), 3.5);
        // D8: eq. (12) sizes a reduce to f⁻¹(D − T_p) = 6, whatever the spread.
        assert!(close(e.max_reduce_input(7.0, 10.0, 1.0), 6.0));
        assert!(yard.max_reduce_input(7.0, 10.0, 1.0) < 6.0);
        // Before the first map finished, the profile's bandwidth (the digest's reading).
        e.shuffle_start = None;
        assert_eq!(e.bandwidth(0.5), 1.0);
    }

    #[test]
    fn d5_a_fast_shuffle_leaves_nothing_after_the_maps() {
        // D1 with V_p = 9: B = 4.5, T_S = 4, raw T_NS = 4 − 4.5 = −0.5 → clamped to 0.
        let mut e = d1();
        e.shuffled = 9.0;
        let t = e.completion(6.0, 3.0, 2.5, false);
        assert_eq!(t.shuffle, 0.0);
        assert!(close(t.total, 8.5));
    }

    #[test]
    fn before_the_first_map_finishes_the_profile_bandwidth_and_earliest_shuffle_start_are_used() {
        let mut e = d1();
        e.shuffle_start = None;
        e.shuffled = 0.0;
        e.busy_since = None;
        assert_eq!(e.bandwidth(0.0), 1.0);
        // 2 maps · p 1 · R 3 = 6 bytes at 1 B/s; T_q ≈ 0 + T_l^a = 2; T_M^n = 2.5 → T_OS = 0.5.
        assert!(close(e.non_overlapped_shuffle(2.0, 2.5, 0.0), 5.5));
        // With the first map launched at −1 (T_q ≈ 1), the overlap is 1.5.
        e.first_launch = Some(-1.0);
        assert!(close(e.non_overlapped_shuffle(2.0, 2.5, 0.0), 4.5));
    }

    #[test]
    fn d6_power_law_fit_recovers_a_and_b() {
        // (d, f) = (1, 2), (4, 4), (16, 8): f = 2·d^0.5.
        let f = PowerLaw::fit(&[(1.0, 2.0), (4.0, 4.0), (16.0, 8.0)]).unwrap();
        assert!(close(f.a, 2.0) && close(f.b, 0.5), "{f:?}");
        assert!(
            PowerLaw::fit(&[(3.0, 1.0), (3.0, 2.0)]).is_none(),
            "one size fits no slope"
        );
        assert!(
            PowerLaw::fit(&[(0.0, 1.0), (2.0, 1.0)]).is_none(),
            "d = 0 has no logarithm"
        );
    }

    #[test]
    fn power_law_fit_is_close_under_multiplicative_noise_with_mean_one() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, LogNormal};
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
        // e ~ LN(−σ²/2, σ) has mean 1, as eq. (9) requires.
        let sigma: f64 = 0.1;
        let noise = LogNormal::new(-sigma * sigma / 2.0, sigma).unwrap();
        let samples: Vec<(f64, f64)> = (1..=200)
            .map(|i| {
                let d = f64::from(i) * 1e6;
                (d, 3e-4 * d.powf(0.8) * noise.sample(&mut rng))
            })
            .collect();
        let f = PowerLaw::fit(&samples).unwrap();
        assert!((f.b - 0.8).abs() < 0.02, "{f:?}");
        assert!((f.a / 3e-4 - 1.0).abs() < 0.3, "{f:?}");
        assert!((f.spread - sigma).abs() < 0.015, "ln e's spread: {f:?}");
        let exact = PowerLaw::fit(&[(1.0, 2.0), (4.0, 4.0), (16.0, 8.0)]).unwrap();
        assert!(exact.spread < 1e-12, "points on the curve: {exact:?}");
    }

    #[test]
    fn the_largest_of_n_lognormal_draws_matches_monte_carlo() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(11);
        for (sigma, n) in [(0.2, 1), (0.2, 2), (0.2, 545), (1.0, 10), (0.5, 5000)] {
            let trials = (1_000_000 / n).clamp(500, 4000);
            let maxima: Vec<f64> = (0..trials)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let z: f64 = StandardNormal.sample(&mut rng);
                            (sigma * z).exp()
                        })
                        .fold(0.0, f64::max)
                })
                .collect();
            let t = f64::from(trials);
            let mean = maxima.iter().sum::<f64>() / t;
            let var = maxima.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (t - 1.0);
            let quadrature = expected_max_lognormal(sigma, n);
            // Four standard errors of the Monte Carlo mean.
            assert!(
                (quadrature - mean).abs() < 4.0 * (var / t).sqrt(),
                "σ {sigma}, n {n}: {quadrature} vs Monte Carlo {mean} ± {}",
                (var / t).sqrt()
            );
        }
        // One draw: the lognormal's mean; no spread: every draw is 1.
        assert!(close(expected_max_lognormal(0.3, 1), (0.045f64).exp()));
        assert_eq!(expected_max_lognormal(0.0, 1000), 1.0);
        // The largest of 545 draws with σ 0.2 is ~1.8× their mean (job261 of FB-2009).
        let ratio = expected_max_lognormal(0.2, 545) / expected_max_lognormal(0.2, 1);
        assert!((ratio - 1.81).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn the_reduce_phase_is_its_earlier_waves_at_their_mean_and_its_last_at_its_largest() {
        let mean = expected_max_lognormal(0.2, 1);
        // No spread, one wave: eq. (9) as the paper has it.
        assert_eq!(reduce_phase_factor(0.0, 8, None), 1.0);
        assert_eq!(reduce_phase_factor(0.0, 8, Some(100)), 1.0);
        // No spread, 8 reduces on 3 slots: three waves.
        assert_eq!(reduce_phase_factor(0.0, 8, Some(3)), 3.0);
        // With spread: the last wave is the largest of the 3 that run together.
        let three = reduce_phase_factor(0.2, 8, Some(3));
        assert!(close(three, 2.0 * mean + expected_max_lognormal(0.2, 3)));
        assert!(
            reduce_phase_factor(0.2, 8, None) > mean,
            "the last of 8 is later than the mean"
        );
        assert_eq!(
            reduce_phase_factor(0.2, 0, None),
            1.0,
            "no reduces: nothing to scale"
        );
    }

    #[test]
    fn the_estimate_counts_the_last_of_many_noisy_reduces() {
        // D1 with a law that has spread: T_R is f(d) times the largest of 3 draws.
        let mut profile = d1_profile();
        profile.reduce_time.spread = 0.2;
        let e = Estimator::new(&profile, 3, None, 0.8);
        let t = e.completion(6.0, 3.0, 2.5, false);
        assert!(close(t.reduce, 3.0 * expected_max_lognormal(0.2, 3)));
        // Two slots for three reduces: a wave at the mean, then the largest of two.
        let e = Estimator::new(&profile, 3, Some(2), 0.8);
        let t = e.completion(6.0, 3.0, 2.5, false);
        let two_waves = expected_max_lognormal(0.2, 1) + expected_max_lognormal(0.2, 2);
        assert!(close(t.reduce, 3.0 * two_waves));
    }

    #[test]
    fn d7_d8_inverse_gives_the_largest_reduce_input() {
        // Eq. (12): a = 2, b = 0.5, D − T_p = 10 → d_max = (10/2)^2 = 25.
        assert!(close(
            PowerLaw {
                a: 2.0,
                b: 0.5,
                spread: 0.0
            }
            .inverse(10.0),
            25.0
        ));
        // D8: a = 0.5, b = 1, D = 10, T_p = 7 → d_max = 6.
        let mut e = d1();
        e.reduce_time = PowerLaw {
            a: 0.5,
            b: 1.0,
            spread: 0.0,
        };
        assert!(close(e.max_reduce_input(7.0, 10.0, 1.0), 6.0));
        // On a node twice as slow, the 3 s left fit half of it.
        assert!(close(e.max_reduce_input(7.0, 10.0, 2.0), 3.0));
        assert_eq!(
            e.max_reduce_input(10.0, 10.0, 1.0),
            0.0,
            "no time left, no input"
        );
    }

    #[test]
    fn alg5_leaves_room_for_the_largest_of_a_wave_of_noisy_reduces() {
        // D8 with spread 0.2 and 4 reduces in one wave: the 3 s left are shared out as T_R is
        // estimated, the largest of 4 draws; on 2 slots, the largest of 2.
        let mut profile = d1_profile();
        profile.reduce_time.spread = 0.2;
        let e = Estimator::new(&profile, 4, None, 0.8);
        let wave = expected_max_lognormal(0.2, 4);
        assert!(close(e.max_reduce_input(7.0, 10.0, 1.0), 6.0 / wave));
        let e = Estimator::new(&profile, 4, Some(2), 0.8);
        let wave = expected_max_lognormal(0.2, 2);
        assert!(close(e.max_reduce_input(7.0, 10.0, 1.0), 6.0 / wave));
    }

    #[test]
    fn with_skew_the_last_reduce_is_the_largest_at_its_mean_or_the_many_at_their_largest() {
        let mut profile = d1_profile();
        profile.reduce_time.spread = 0.2;
        let (mean, max8) = (
            expected_max_lognormal(0.2, 1),
            expected_max_lognormal(0.2, 8),
        );
        let run = |max_reduce_input| PreviousRun {
            k: 6,
            max_reduce_input,
        };
        // Eq. 8: d = 6·1 = 6, f = 3. A previous run as even as eq. 8: the 8 at their largest.
        profile.previous_runs = vec![run(6.0)];
        let e = Estimator::new(&profile, 8, None, 0.8);
        assert!(close(e.completion(6.0, 3.0, 2.5, true).reduce, 3.0 * max8));
        // A largest partition 10× the average: that reduce, at its mean draw, ends last.
        profile.previous_runs = vec![run(60.0)];
        let e = Estimator::new(&profile, 8, None, 0.8);
        assert!(close(e.completion(6.0, 3.0, 2.5, true).reduce, 30.0 * mean));
        // Without skew handling, eq. 8 and the largest of 8 (D-WOST).
        assert!(close(e.completion(6.0, 3.0, 2.5, false).reduce, 3.0 * max8));
    }

    #[test]
    fn with_a_confidence_alg5_sizes_a_wave_to_end_by_d_that_often() {
        // The 0.95-quantile of the largest of n: Φ(ln x / σ)^n = 0.95.
        let x = quantile_max_lognormal(0.2, 4, 0.95);
        assert!(
            (normal_cdf(x.ln() / 0.2).powi(4) - 0.95).abs() < 1e-9,
            "{x}"
        );
        // One draw at 0.5 is the median: ln x = 0.
        assert!(quantile_max_lognormal(0.3, 1, 0.5).ln().abs() < 1e-9);
        let mut profile = d1_profile();
        profile.reduce_time.spread = 0.2;
        let e = Estimator::new(&profile, 4, None, 0.8).with_reduce_confidence(0.95);
        assert!(close(e.max_reduce_input(7.0, 10.0, 1.0), 6.0 / x));
        // Alg. 5's cut as forecast: 3 s left, cut at the bound, the expected last ends earlier.
        let wave = expected_max_lognormal(0.2, 4);
        // D1's f(6) = 3, at the largest of 4: cut to 3 s left, it ends 3·wave/x in.
        assert!(close(
            e.reduce_after_sampling(6.0, false, 3.0, 0.0),
            3.0 * wave / x
        ));
        let uncut = e.completion(6.0, 3.0, 2.5, false).reduce;
        assert_eq!(
            e.reduce_after_sampling(6.0, false, 100.0, 0.0),
            uncut,
            "nothing to cut"
        );
        // A confidence below the expected largest never sizes reduces above the average case.
        let low = Estimator::new(&profile, 4, None, 0.8).with_reduce_confidence(0.1);
        assert_eq!(low.reduce_bound, low.reduce_wave);
    }

    #[test]
    fn d9_skew_scales_the_largest_reduce_input_of_previous_runs() {
        // Eq. (13): runs (10, 100) and (20, 220), k_n = 15: ½(1.5·100 + 0.75·220) = 157.5.
        let mut e = d1();
        e.previous_runs = vec![
            PreviousRun {
                k: 10,
                max_reduce_input: 100.0,
            },
            PreviousRun {
                k: 20,
                max_reduce_input: 220.0,
            },
        ];
        assert!(close(e.reduce_input(15.0, true), 157.5));
        assert_eq!(
            e.reduce_input(15.0, false),
            15.0,
            "without skew handling, eq. (8)"
        );
    }

    #[test]
    fn d10_ewma_and_running_partition_mean() {
        // §5.3: T_m^a = 2.5, a map took 4, α = 0.8 → 0.8·2.5 + 0.2·4 = 2.8.
        let mut e = d1();
        e.all = 2.5;
        e.remote = 2.5;
        e.map_finished(Locality::Remote, 4.0, Some(3.0));
        assert!(close(e.all, 2.8) && close(e.remote, 2.8));
        assert_eq!(e.local, 2.0, "the other locality class is untouched");
        e.map_finished(Locality::NodeLocal, 2.0, Some(5.0));
        assert_eq!(e.partition, 4.0);
    }

    #[test]
    fn d11_window_with_the_current_k() {
        // W = D − T_p − T_NS − T_R (eq. 11) for D = 10, T_p = 3, with k = 5 outputs.
        let mut e = d1();
        e.all = 2.5;
        let t = e.completion(5.0, 3.0, 2.5, false);
        let w = e.window(5, 3.0, 10.0, false);
        assert!(close(w, 10.0 - 3.0 - t.shuffle - t.reduce));
        assert!(close(t.reduce, 2.5)); // 0.5 · 5
    }

    #[test]
    fn the_estimate_never_decreases_as_k_grows() {
        let e = d1();
        let mut last = 0.0;
        for k in 0..50 {
            let t = e.completion(f64::from(k), 3.0, 2.5, false).total;
            assert!(t >= last, "k = {k}: {t} < {last}");
            last = t;
        }
    }
}
