//! The running attempts: each one's node, container, speed and progress, as the engine
//! reports it to the policy, and which maps are still to launch.

use yard_appmaster::policy::{AttemptId, MapId, Seconds};

use super::mix;
use crate::config::{ProgressModel, RATE_SEGMENTS};

#[derive(Clone, Copy)]
pub(super) struct Live {
    pub(super) node: u32,
    /// The engine's id of its container.
    pub(super) container: u64,
    pub(super) started: Seconds,
    /// Its work: seconds at full speed (a reduce's is infinite until it has its input).
    pub(super) duration: Seconds,
    /// The share of full speed it runs at since `rated_at`, having done `work_at` seconds of
    /// work by then (1, `started` and 0 unless a node load model re-rated it: `Run::rerate`).
    pub(super) speed: f64,
    pub(super) rated_at: Seconds,
    pub(super) work_at: Seconds,
    /// The work after which its end event comes (`duration`, or where it fails), whether it
    /// succeeds there, and the µs that event is queued at: an end event at another time is
    /// stale (the attempt was re-rated since).
    pub(super) target: Seconds,
    pub(super) ok: bool,
    pub(super) end_us: u64,
    pub(super) map: Option<MapId>,
    /// A reduce's input after Alg. 5's sampling (0 until it has its input).
    pub(super) kept: u64,
    /// A reduce's index (0 for a map).
    pub(super) reduce: u32,
    /// The guard cut this reduce: it answers at once (`Ev::ReduceCut`) and gets no input.
    pub(super) cut: bool,
    /// What the attempt is, hashed with the seed: keys its speed curve and report noise.
    pub(super) key: u64,
}

impl Live {
    /// The share of its work the attempt has done at `now` (an attempt of no duration is
    /// done): the share of its run, or, when its speed varies, of the work its speeds so far
    /// did.
    pub(super) fn done(&self, now: Seconds, progress: &ProgressModel) -> f64 {
        let t = match self.duration {
            d if d > 0.0 => (self.worked(now) / d).clamp(0.0, 1.0),
            _ => return 1.0,
        };
        match progress.rate_spread {
            0.0 => t,
            spread => varying(self.key, spread, t),
        }
    }

    /// Seconds of work done by `now`: its time since it started, unless it was re-rated.
    pub(super) fn worked(&self, now: Seconds) -> Seconds {
        match self.speed == 1.0 && self.work_at == 0.0 {
            true => now - self.started,
            false => self.work_at + (now - self.rated_at) * self.speed,
        }
    }

    /// An attempt starting at `now` on `node`, running at full speed.
    pub(super) fn new(
        node: u32,
        container: u64,
        now: Seconds,
        duration: Seconds,
        map: Option<MapId>,
    ) -> Live {
        Live {
            node,
            container,
            started: now,
            duration,
            speed: 1.0,
            rated_at: now,
            work_at: 0.0,
            target: duration,
            ok: true,
            end_us: u64::MAX,
            map,
            kept: 0,
            reduce: 0,
            cut: false,
            key: 0,
        }
    }

    /// What the attempt reports at `now`: its share done, with the model's noise.
    pub(super) fn report(&self, now: Seconds, progress: &ProgressModel) -> f64 {
        let done = self.done(now, progress);
        match progress.report_noise {
            0.0 => done,
            sd => {
                let z = normal(mix(self.key, 0x7E_90_27, (now * 1e6) as u64, 0));
                (done + sd * z).clamp(0.0, 1.0)
            }
        }
    }
}

/// Live attempts, map and reduce, in a table indexed by attempt id (policies number attempts
/// from 0, so the table stays as small as the run's attempts), and the live map attempts in
/// id order for progress reports: the order a tick reports in without a tree.
#[derive(Default)]
pub(super) struct Attempts {
    pub(super) table: Vec<Option<Live>>,
    /// Map attempts as launched; an entry whose attempt has ended is dropped at the next
    /// tick. Launches come in id order, so this stays sorted; `unsorted` says one did not.
    maps: Vec<AttemptId>,
    unsorted: bool,
}

impl Attempts {
    pub(super) fn insert(&mut self, a: AttemptId, live: Live) {
        let i = a.0 as usize;
        if i >= self.table.len() {
            self.table.resize(i + 1, None);
        }
        self.table[i] = Some(live);
        if live.map.is_some() {
            // `<=`: an id used again would otherwise be listed twice.
            if self.maps.last().is_some_and(|last| a <= *last) {
                self.unsorted = true;
            }
            self.maps.push(a);
        }
    }

    pub(super) fn get(&self, a: AttemptId) -> Option<&Live> {
        self.table.get(a.0 as usize)?.as_ref()
    }

    pub(super) fn get_mut(&mut self, a: AttemptId) -> Option<&mut Live> {
        self.table.get_mut(a.0 as usize)?.as_mut()
    }

    pub(super) fn remove(&mut self, a: AttemptId) -> Option<Live> {
        self.table.get_mut(a.0 as usize)?.take()
    }

    /// Appends every live map attempt's progress report at `now` to `reports`, in id order
    /// (what a `BTreeMap` by id would iterate), dropping ended attempts from the list in the
    /// same pass.
    pub(super) fn progress(
        &mut self,
        now: Seconds,
        model: &ProgressModel,
        reports: &mut Vec<(AttemptId, f64)>,
    ) {
        if self.unsorted {
            self.maps.sort_unstable();
            self.maps.dedup();
            self.unsorted = false;
        }
        let table = &self.table;
        self.maps.retain(|&a| match table[a.0 as usize] {
            Some(l) if l.map.is_some() => {
                reports.push((a, l.report(now, model)));
                true
            }
            _ => false,
        });
    }
}

/// The lowest unlaunched map at or after any index, in amortised near-O(1): `next[m]` points
/// at or before the first unlaunched map from `m` on (itself while `m` is unlaunched), with
/// paths halved as they are walked. A grant looks at the first few unlaunched maps, and maps
/// launch out of order (node-local first), so scanning a `launched` flag per map would cost
/// up to O(M) per grant.
pub(super) struct Unlaunched {
    next: Vec<u32>,
}

impl Unlaunched {
    pub(super) fn new(maps: usize) -> Self {
        Unlaunched {
            next: (0..=maps as u32).collect(),
        }
    }

    pub(super) fn launch(&mut self, m: usize) {
        if self.next[m] == m as u32 {
            self.next[m] = m as u32 + 1;
        }
    }

    /// The first unlaunched map at or after `m`; the map count when there is none.
    pub(super) fn from(&mut self, m: usize) -> usize {
        let mut i = m;
        while self.next[i] as usize != i {
            let up = self.next[i] as usize;
            self.next[i] = self.next[up];
            i = up;
        }
        i
    }
}

/// A standard normal draw from 64 random bits (Box–Muller on their two halves).
pub(super) fn normal(x: u64) -> f64 {
    let u1 = ((x >> 32) as f64 + 0.5) / 4_294_967_296.0;
    let u2 = ((x & 0xFFFF_FFFF) as f64) / 4_294_967_296.0;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The share of its work done after the share `t` of its run by a task whose speed in each
/// of `RATE_SEGMENTS` equal parts of its run is a mean-one log-normal factor of spread
/// `spread`, drawn from `key`: 0 at 0, 1 at 1, rising at each part's speed.
pub(super) fn varying(key: u64, spread: f64, t: f64) -> f64 {
    let mut rates = [0.0; RATE_SEGMENTS];
    for (i, r) in rates.iter_mut().enumerate() {
        let z = normal(mix(key, 0x5_9EED, i as u64, 0));
        *r = (spread * z - spread * spread / 2.0).exp();
    }
    let total: f64 = rates.iter().sum();
    let x = t * RATE_SEGMENTS as f64;
    let whole = (x.floor() as usize).min(RATE_SEGMENTS);
    let mut work: f64 = rates[..whole].iter().sum();
    if whole < RATE_SEGMENTS {
        work += rates[whole] * (x - whole as f64);
    }
    (work / total).clamp(0.0, 1.0)
}
