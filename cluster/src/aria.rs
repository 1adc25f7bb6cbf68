//! ARIA's bounds model and the minimum quota (seed 000 §II and eq. 1; the per-phase bounds as
//! seed 003 §II-B restates them; the coefficients and the Lagrange closed form as
//! `papers/aria.md` §1.2–1.4 derive and correct them). Pure arithmetic: no clock, no IO.
//!
//! A job profile gives the average and the largest duration of each phase's tasks, measured on
//! a past run and independent of the slots: maps (`M`), the first reduce wave's shuffle, only
//! the part that does not overlap the map stage (`Sh1`), a later wave's shuffle (`Sht`, the
//! "typical" shuffle) and the reduce phase (`R`). With `N_M` maps and `N_R` reduces on `S_M`
//! map and `S_R` reduce slots the job's completion is bounded below and above
//! ([`Profile::low`], [`Profile::up`]); ARIA targets their mean ([`Profile::avg`]).
//!
//! Every bound is of the form `T = a/S_M + b/S_R + c` (eq. 1, a hyperbola in the slots,
//! [`Hyperbola`]); the fewest slots `S_M + S_R` that meet a deadline `D` lie where Lagrange's
//! multipliers put them (`S_M = √a·(√a+√b)/(D−c)`, `S_R = √b·(√a+√b)/(D−c)`), rounded up and
//! clamped to the tasks and to the cluster ([`min_quota`]). MinEDF recomputes this "as the time
//! progresses and the job deadline gets closer" (seed 000 §III-B): the caller passes the
//! *remaining* tasks and the *remaining* time.
//!
//! One model for the rm and the master: the rm's MinEDF quotas and the appmaster's ARIA baseline
//! (`yard_appmaster::policy`'s `aria`) both size slots with these functions.

use serde::{Deserialize, Serialize};

/// Durations, in seconds.
pub type Seconds = f64;

/// A phase's largest task over its average, where a profile gives only the average (the
/// appmaster's ARIA baseline reads Dart's profiles with it too).
pub const MAX_OVER_AVG: f64 = 1.5;

/// The makespan of `n` tasks of average `avg` on `k` slots under greedy assignment is at least
/// `n·avg/k` (seed 000 §II).
pub fn makespan_low(n: f64, avg: Seconds, k: f64) -> Seconds {
    n * avg / k
}

/// ... and at most `(n − 1)·avg/k + max` (seed 000 §II).
pub fn makespan_up(n: f64, avg: Seconds, max: Seconds, k: f64) -> Seconds {
    (n - 1.0) * avg / k + max
}

/// The average and the largest duration of one phase's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Durations {
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub avg: Seconds,
    /// [`MAX_OVER_AVG`] × `avg` when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub max: Option<Seconds>,
}

impl Durations {
    pub fn new(avg: Seconds, max: Seconds) -> Durations {
        Durations {
            avg,
            max: Some(max),
        }
    }

    /// The largest task: as given, else [`MAX_OVER_AVG`] × the average; never below it.
    pub fn max(&self) -> Seconds {
        self.max.unwrap_or(MAX_OVER_AVG * self.avg).max(self.avg)
    }

    /// Finite, non-negative, and no more than ten years.
    fn valid(&self) -> bool {
        let ok = |x: f64| x.is_finite() && (0.0..=MAX_SECONDS).contains(&x);
        ok(self.avg) && self.max.is_none_or(ok)
    }
}

/// The longest task duration a profile may state: ten years, in seconds.
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;

/// ARIA's job profile (seed 003 §II-B). JSON, as a master registers it:
/// `{"map": {"avg": 10, "max": 15}, "firstShuffle": {...}, "typicalShuffle": {...},
/// "reduce": {...}}`, seconds; a map-only job leaves out the last three.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = JobProfile))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Profile {
    pub map: Durations,
    /// The first reduce wave's shuffle: only the part that does not overlap the map stage.
    #[serde(default)]
    pub first_shuffle: Durations,
    /// The shuffle of a later reduce wave.
    #[serde(default)]
    pub typical_shuffle: Durations,
    #[serde(default)]
    pub reduce: Durations,
}

/// A bound split by phase; `total` is their sum.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Phases {
    /// `T_M`: the map stage.
    pub map: Seconds,
    /// `Sh1 + T_Sh`: the shuffle the reduce stage waits for.
    pub shuffle: Seconds,
    /// The reduce phase proper.
    pub reduce: Seconds,
    pub total: Seconds,
}

/// Which bound a quota is sized for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    Low,
    /// `T_J^avg`: "typically ... a good approximation of the job completion time" (seed 000 §II).
    #[default]
    Avg,
    Up,
}

/// `T = a/S_M + b/S_R + c` (seed 000 eq. 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyperbola {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl Hyperbola {
    /// The time on `s_m` map and `s_r` reduce slots (a term whose coefficient is 0 is 0, so a
    /// map-only job needs no reduce slot).
    pub fn at(&self, s_m: f64, s_r: f64) -> Seconds {
        let term = |k: f64, s: f64| if k == 0.0 { 0.0 } else { k / s };
        term(self.a, s_m) + term(self.b, s_r) + self.c
    }

    /// The real `(S_M, S_R)` with the least sum on `a/S_M + b/S_R = D − c` (Lagrange's
    /// multipliers; papers/aria.md §1.4): `S_M = √a·(√a + √b)/(D − c)`,
    /// `S_R = √b·(√a + √b)/(D − c)`. `None` when `D ≤ c`: no allocation meets `D`.
    pub fn lagrange(&self, d: Seconds) -> Option<(f64, f64)> {
        let left = d - self.c;
        if left.is_nan() || left <= 0.0 {
            return None;
        }
        let (ra, rb) = (self.a.max(0.0).sqrt(), self.b.max(0.0).sqrt());
        let s = ra + rb;
        Some((ra * s / left, rb * s / left))
    }
}

impl Profile {
    /// Finite, non-negative durations, none over [`MAX_SECONDS`].
    pub fn valid(&self) -> bool {
        [
            self.map,
            self.first_shuffle,
            self.typical_shuffle,
            self.reduce,
        ]
        .iter()
        .all(Durations::valid)
    }

    /// `T_J^low` of `n_m` maps and `n_r` reduces on `s_m` and `s_r` slots (seed 003 §II-B):
    /// `T_M^low = N_M·M_avg/S_M`; `T_Sh^low = (N_R/S_R − 1)·Sht_avg`;
    /// `T_R^low = Sh1_avg + T_Sh^low + N_R·R_avg/S_R`; `T_J^low = T_M^low + T_R^low`.
    /// A phase without tasks is 0; `N_R/S_R − 1` is clamped at 0 (more slots than reduces
    /// leaves no later wave: papers/aria.md §6.2).
    pub fn low(&self, n_m: u32, n_r: u32, s_m: f64, s_r: f64) -> Phases {
        let (n_m, n_r) = (f64::from(n_m), f64::from(n_r));
        let mut p = Phases::default();
        if n_m > 0.0 {
            p.map = makespan_low(n_m, self.map.avg, s_m);
        }
        if n_r > 0.0 {
            let t_sh = (n_r / s_r - 1.0).max(0.0) * self.typical_shuffle.avg;
            p.shuffle = self.first_shuffle.avg + t_sh;
            p.reduce = makespan_low(n_r, self.reduce.avg, s_r);
        }
        p.total = p.map + p.shuffle + p.reduce;
        p
    }

    /// `T_J^up` (seed 003 §II-B, with the digest's correction of `T_M^up`, which seed 003
    /// prints divided by `S_M` twice): `T_M^up = (N_M − 1)·M_avg/S_M + M_max`;
    /// `T_Sh^up = ((N_R − 1)/S_R − 1)·Sht_avg + Sht_max`;
    /// `T_R^up = Sh1_max + T_Sh^up + (N_R − 1)·R_avg/S_R + R_max`. Clamped as [`Profile::low`].
    pub fn up(&self, n_m: u32, n_r: u32, s_m: f64, s_r: f64) -> Phases {
        let (n_m, n_r) = (f64::from(n_m), f64::from(n_r));
        let mut p = Phases::default();
        if n_m > 0.0 {
            p.map = makespan_up(n_m, self.map.avg, self.map.max(), s_m);
        }
        if n_r > 0.0 {
            let t_sh = ((n_r - 1.0) / s_r - 1.0).max(0.0) * self.typical_shuffle.avg
                + self.typical_shuffle.max();
            p.shuffle = self.first_shuffle.max() + t_sh;
            p.reduce = makespan_up(n_r, self.reduce.avg, self.reduce.max(), s_r);
        }
        p.total = p.map + p.shuffle + p.reduce;
        p
    }

    /// `T_J^avg = (T_J^low + T_J^up)/2` (seed 003 §II-B), phase by phase.
    pub fn avg(&self, n_m: u32, n_r: u32, s_m: f64, s_r: f64) -> Phases {
        let (l, u) = (self.low(n_m, n_r, s_m, s_r), self.up(n_m, n_r, s_m, s_r));
        let mid = |a: f64, b: f64| (a + b) / 2.0;
        Phases {
            map: mid(l.map, u.map),
            shuffle: mid(l.shuffle, u.shuffle),
            reduce: mid(l.reduce, u.reduce),
            total: mid(l.total, u.total),
        }
    }

    /// The bound `target` as eq. (1)'s hyperbola (papers/aria.md §1.3, from expanding the
    /// bounds): `A = M_avg`, `B = Sht_avg + R_avg`; low: `a = A·N_M`, `b = B·N_R`,
    /// `c = Sh1_avg − Sht_avg`; up: `a = A·(N_M − 1)`, `b = B·(N_R − 1)`,
    /// `c = M_max + Sh1_max − Sht_avg + Sht_max + R_max`; avg: their means. A phase without
    /// tasks adds nothing (a map-only job has `b = 0` and no reduce constants).
    pub fn hyperbola(&self, n_m: u32, n_r: u32, target: Target) -> Hyperbola {
        let (fm, fr) = (f64::from(n_m), f64::from(n_r));
        let mut low = Hyperbola {
            a: 0.0,
            b: 0.0,
            c: 0.0,
        };
        let mut up = low;
        if n_m > 0 {
            let a = self.map.avg;
            low.a = a * fm;
            up.a = a * (fm - 1.0);
            up.c += self.map.max();
        }
        if n_r > 0 {
            let b = self.typical_shuffle.avg + self.reduce.avg;
            low.b = b * fr;
            up.b = b * (fr - 1.0);
            low.c += self.first_shuffle.avg - self.typical_shuffle.avg;
            up.c += self.first_shuffle.max() - self.typical_shuffle.avg
                + self.typical_shuffle.max()
                + self.reduce.max();
        }
        match target {
            Target::Low => low,
            Target::Up => up,
            Target::Avg => Hyperbola {
                a: (low.a + up.a) / 2.0,
                b: (low.b + up.b) / 2.0,
                c: (low.c + up.c) / 2.0,
            },
        }
    }
}

/// Whether a quota meets the deadline under the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The fewest slots that meet the deadline (the Lagrange optimum, rounded up).
    Feasible,
    /// No allocation within the tasks and the cluster meets the deadline (or it has passed):
    /// the job gets the most it can use, "the jobs missing their deadlines start requiring the
    /// maximum number of map/reduce slots" (seed 000 §IV-C).
    Infeasible,
    /// Nothing is left to run.
    Done,
}

/// A job's minimum quota: map and reduce slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quota {
    pub maps: u32,
    pub reduces: u32,
    pub basis: Basis,
}

/// Rounds a real slot count up, forgiving float noise (20.000000001 is 20).
fn ceil(x: f64) -> u32 {
    let r = (x - 1e-9).ceil();
    if r.is_nan() || r <= 0.0 {
        0
    } else if r >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        r as u32
    }
}

/// ComputeMinResources (seed 000 Alg. 1, line 2; papers/aria.md §1.4): the fewest map and
/// reduce slots with which `n_m` maps and `n_r` reduces of `profile` end within `d` seconds
/// under the `target` bound, each at least 1 where there are tasks and at most
/// `min(tasks, cap)`.
///
/// The real optimum is rounded up (either coordinate rounded up only shortens the job). When
/// rounding or the caps push one coordinate past its limit, it is set to the limit and the
/// other re-solved on the hyperbola (the fewest slots that still meet `d`). When no
/// allocation within the limits meets `d` (`d ≤ c`, or the re-solve fails), the quota is the
/// limits themselves, [`Basis::Infeasible`].
pub fn min_quota(
    profile: &Profile,
    n_m: u32,
    n_r: u32,
    d: Seconds,
    (cap_m, cap_r): (u32, u32),
    target: Target,
) -> Quota {
    if n_m == 0 && n_r == 0 {
        return Quota {
            maps: 0,
            reduces: 0,
            basis: Basis::Done,
        };
    }
    let (max_m, max_r) = (n_m.min(cap_m), n_r.min(cap_r));
    let most = Quota {
        maps: max_m,
        reduces: max_r,
        basis: Basis::Infeasible,
    };
    // A stage with tasks and no slot at all cannot run.
    if (n_m > 0 && max_m == 0) || (n_r > 0 && max_r == 0) {
        return most;
    }
    let h = profile.hyperbola(n_m, n_r, target);
    let Some((sm, sr)) = h.lagrange(d) else {
        return most;
    };
    let left = d - h.c;
    let at_least = |n: u32, x: u32| if n > 0 { x.max(1) } else { 0 };
    let mut s_m = at_least(n_m, ceil(sm));
    let mut s_r = at_least(n_r, ceil(sr));
    // One coordinate at its limit: the other from a/S_M + b/S_R = D − c.
    let other = |coef: f64, rest: f64| (rest > 0.0).then(|| ceil(coef / rest));
    if s_m > max_m {
        s_m = max_m;
        match other(h.b, left - h.a / f64::from(max_m)) {
            Some(r) => s_r = at_least(n_r, r),
            None => return most,
        }
    }
    if s_r > max_r {
        s_r = max_r;
        match other(
            h.a,
            left - if n_r > 0 { h.b / f64::from(max_r) } else { 0.0 },
        ) {
            Some(m) => s_m = at_least(n_m, m),
            None => return most,
        }
    }
    if s_m > max_m || s_r > max_r {
        return most;
    }
    Quota {
        maps: s_m,
        reduces: s_r,
        basis: Basis::Feasible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// papers/aria.md §3's profile.
    fn profile() -> Profile {
        Profile {
            map: Durations::new(10.0, 15.0),
            first_shuffle: Durations::new(5.0, 8.0),
            typical_shuffle: Durations::new(4.0, 6.0),
            reduce: Durations::new(6.0, 9.0),
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn greedy_makespan_bounds_sanity() {
        // papers/aria.md §3: n = 10, avg = 4, max = 7, k = 3 → 13.33 and 19.
        assert!(close(makespan_low(10.0, 4.0, 3.0), 13.333, 1e-3));
        assert!(close(makespan_up(10.0, 4.0, 7.0, 3.0), 19.0, 1e-9));
    }

    #[test]
    fn the_bounds_on_the_digests_worked_example() {
        // N_M = 100, N_R = 20, S_M = 20, S_R = 10 (papers/aria.md §3).
        let p = profile();
        let (l, u, a) = (
            p.low(100, 20, 20.0, 10.0),
            p.up(100, 20, 20.0, 10.0),
            p.avg(100, 20, 20.0, 10.0),
        );
        assert!(close(l.map, 50.0, 1e-9) && close(u.map, 64.5, 1e-9));
        // T_Sh^low = 4, T_Sh^up = 9.6; T_R = Sh1 + T_Sh + reduces: 21 and 38.
        assert!(close(l.shuffle - 5.0, 4.0, 1e-9) && close(u.shuffle - 8.0, 9.6, 1e-9));
        assert!(close(l.shuffle + l.reduce, 21.0, 1e-9));
        assert!(close(u.shuffle + u.reduce, 38.0, 1e-9));
        assert!(close(l.total, 71.0, 1e-9));
        assert!(close(u.total, 102.5, 1e-9));
        assert!(close(a.total, 86.75, 1e-9));
    }

    #[test]
    fn the_hyperbola_is_the_bounds_expanded() {
        let p = profile();
        let low = p.hyperbola(100, 20, Target::Low);
        let up = p.hyperbola(100, 20, Target::Up);
        let avg = p.hyperbola(100, 20, Target::Avg);
        // A, B, C^low; C^up: 10, 10, 1; 34 (papers/aria.md §3).
        assert_eq!((low.a, low.b, low.c), (1000.0, 200.0, 1.0));
        assert_eq!((up.a, up.b, up.c), (990.0, 190.0, 34.0));
        assert_eq!((avg.a, avg.b, avg.c), (995.0, 195.0, 17.5));
        for (h, bound) in [
            (low, p.low(100, 20, 20.0, 10.0)),
            (up, p.up(100, 20, 20.0, 10.0)),
            (avg, p.avg(100, 20, 20.0, 10.0)),
        ] {
            assert!(close(h.at(20.0, 10.0), bound.total, 1e-9), "{h:?}");
        }
    }

    #[test]
    fn lagrange_on_the_digests_worked_examples() {
        let p = profile();
        // (target, D) → real optimum and its rounding up (papers/aria.md §3's table).
        let cases = [
            (Target::Low, 71.0, (20.6745, 9.2459), (21, 10)),
            (Target::Avg, 86.75, (20.7290, 9.1766), (21, 10)),
            (Target::Up, 102.5, (20.7840, 9.1052), (21, 10)),
            (Target::Avg, 120.0, (14.0047, 6.1998), (15, 7)),
        ];
        for (target, d, (sm, sr), (qm, qr)) in cases {
            let h = p.hyperbola(100, 20, target);
            let (x, y) = h.lagrange(d).unwrap();
            assert!(
                close(x, sm, 1e-4) && close(y, sr, 1e-4),
                "{target:?}: {x} {y}"
            );
            // Plugged back in, the optimum meets D exactly.
            assert!(close(h.at(x, y), d, 1e-9));
            // ... and it needs no more slots than any feasible integer pair, e.g. (20, 10).
            assert!(x + y <= 30.0);
            let q = min_quota(&p, 100, 20, d, (64, 64), target);
            assert_eq!((q.maps, q.reduces, q.basis), (qm, qr, Basis::Feasible));
            assert!(h.at(f64::from(q.maps), f64::from(q.reduces)) <= d + 1e-9);
        }
    }

    #[test]
    fn a_capped_stage_re_solves_the_other_on_the_hyperbola() {
        // 20 map slots only: T^low = 71 needs 1000/20 + 200/S_R + 1 ≤ 71 → S_R = 10.
        let q = min_quota(&profile(), 100, 20, 71.0, (20, 64), Target::Low);
        assert_eq!((q.maps, q.reduces, q.basis), (20, 10, Basis::Feasible));
        // 9 reduce slots only: 200/9 leaves 70 − 22.2 for the maps → S_M = ⌈1000/47.78⌉ = 21.
        let q = min_quota(&profile(), 100, 20, 71.0, (64, 9), Target::Low);
        assert_eq!((q.maps, q.reduces, q.basis), (21, 9, Basis::Feasible));
        // 2 reduce slots: 200/2 alone is past D − c = 70, whatever the maps get.
        let q = min_quota(&profile(), 100, 20, 71.0, (64, 2), Target::Low);
        assert_eq!((q.maps, q.reduces, q.basis), (64, 2, Basis::Infeasible));
    }

    #[test]
    fn the_infeasible_case_asks_for_everything_it_can_use() {
        let p = profile();
        // D ≤ c: no allocation meets it (avg's c is 17.5).
        for d in [17.5, 10.0, 0.0, -5.0, f64::NAN] {
            let q = min_quota(&p, 100, 20, d, (64, 16), Target::Avg);
            assert_eq!(
                (q.maps, q.reduces, q.basis),
                (64, 16, Basis::Infeasible),
                "{d}"
            );
        }
        // Feasible in reals but not within the cluster: also everything.
        let q = min_quota(&p, 100, 20, 30.0, (64, 16), Target::Avg);
        assert_eq!((q.maps, q.reduces, q.basis), (64, 16, Basis::Infeasible));
        // A cluster without slots for a stage cannot run it.
        let q = min_quota(&p, 100, 20, 1e6, (0, 16), Target::Avg);
        assert_eq!(q.basis, Basis::Infeasible);
    }

    #[test]
    fn a_map_only_job_needs_no_reduce_slot() {
        let p = Profile {
            map: Durations::new(10.0, 15.0),
            ..Profile::default()
        };
        let h = p.hyperbola(100, 0, Target::Low);
        assert_eq!((h.b, h.c), (0.0, 0.0));
        // S_M = a/(D − c) (papers/aria.md §1.4).
        let (sm, sr) = h.lagrange(100.0).unwrap();
        assert!(close(sm, 10.0, 1e-9) && sr == 0.0);
        let q = min_quota(&p, 100, 0, 100.0, (64, 64), Target::Low);
        assert_eq!((q.maps, q.reduces, q.basis), (10, 0, Basis::Feasible));
        let up = p.up(100, 0, 10.0, 0.0);
        assert!(close(up.total, 99.0 + 15.0, 1e-9) && up.shuffle == 0.0);
    }

    #[test]
    fn the_reduce_stage_alone_needs_only_reduce_slots() {
        // Every map done: the remaining work is 20 reduces.
        let h = profile().hyperbola(0, 20, Target::Low);
        assert_eq!(h.a, 0.0);
        let q = min_quota(&profile(), 0, 20, 41.0, (64, 64), Target::Low);
        // 200/S_R + 1 ≤ 41 → S_R = 5.
        assert_eq!((q.maps, q.reduces, q.basis), (0, 5, Basis::Feasible));
        let q = min_quota(&profile(), 0, 0, 41.0, (64, 64), Target::Low);
        assert_eq!(q.basis, Basis::Done);
    }

    #[test]
    fn the_quota_grows_as_the_deadline_nears() {
        // MinEDF recomputes on the remaining tasks and time: the same 100 maps with less time
        // need more slots, until none suffice.
        let p = profile();
        let mut last = 0;
        for d in [400.0, 200.0, 120.0, 90.0, 60.0, 40.0] {
            let q = min_quota(&p, 100, 20, d, (64, 64), Target::Avg);
            assert!(q.maps + q.reduces >= last, "{d}: {q:?}");
            last = q.maps + q.reduces;
        }
        assert_eq!(
            min_quota(&p, 100, 20, 40.0, (64, 64), Target::Avg).basis,
            Basis::Infeasible
        );
    }

    #[test]
    fn the_shuffle_term_never_goes_negative() {
        // More reduce slots than reduces: no later wave, not a negative one.
        let l = profile().low(100, 5, 20.0, 10.0);
        assert!(close(l.shuffle, 5.0, 1e-9), "{l:?}");
        let u = profile().up(100, 5, 20.0, 10.0);
        assert!(close(u.shuffle, 8.0 + 6.0, 1e-9), "{u:?}");
    }

    #[test]
    fn profiles_from_outside_are_checked() {
        assert!(profile().valid());
        let mut p = profile();
        p.reduce.avg = f64::NAN;
        assert!(!p.valid());
        p.reduce.avg = -1.0;
        assert!(!p.valid());
        p.reduce = Durations {
            avg: 1.0,
            max: Some(f64::INFINITY),
        };
        assert!(!p.valid());
        // The largest is never below the average.
        assert_eq!(Durations::new(5.0, 1.0).max(), 5.0);
        assert_eq!(
            Durations {
                avg: 2.0,
                max: None
            }
            .max(),
            3.0
        );
    }
}
