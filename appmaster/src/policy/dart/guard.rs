//! yard's deadline guard inside Dart (beyond the paper): `lone_map`, a first map launched when
//! the estimate says none fits but one could, and `last_moment`, the maps stopped when the time
//! left falls to what answering from what is done takes, and which running tasks are spared.

use super::super::core::MapState;
use super::super::estimate::normal_cdf;
use super::super::{AttemptId, Decision, Estimate, Locality, Location, MapId, Seconds, TaskRef};
use super::{LONE_MAP_SLACK, LONE_MAP_Z, Run, WAKE_SLACK, last_moment_on};

impl Run {
    /// Whether `lone_map` (yard's) runs: it needs Alg. 5, which cuts the reduces to the time
    /// the map leaves.
    pub(super) fn lone_map_on(&self) -> bool {
        self.v.x.lone_map && self.config.guarded && self.v.revise_reduces && self.v.approach
    }

    /// Whether `last_moment` (yard's) runs: under a guard, with Alg. 5 (which sizes the
    /// reduces to the time the guard leaves them), once the job has a deadline.
    pub(super) fn last_moment_on(&self) -> bool {
        last_moment_on(self.v, &self.config) && self.deadline().is_some()
    }

    /// `last_moment`: when (from the job's start) the last running reduces are cut, so that
    /// their partial answers arrive by `D`; `None` without a deadline (nothing is cut).
    pub(super) fn cut_at(&self) -> Option<Seconds> {
        self.deadline()
            .map(|d| d - self.config.answer_cost.max(0.0))
    }

    /// `last_moment`: when (from the job's start) the guard stops the maps: once the time left
    /// falls to what answering from the maps done takes — their output still on the link
    /// (eq. 5's bandwidth), the reduces over it at Alg. 5's confidence (eq. 8–9, 13;
    /// `Estimator::reduce_bounded`), and the cut's answer. `None` while no map is done
    /// (stopping then would answer from nothing: the maps run while they could end in time)
    /// or once no map runs or will be launched, and without a deadline.
    pub(super) fn stop_maps_at(&self, t_p: Seconds) -> Option<Seconds> {
        let cut = self.cut_at()?;
        let done = self.core.progress.maps_done;
        let over = self.core.map_phase_closed() && self.core.maps_running() == 0;
        if done == 0 || over {
            return None;
        }
        let answer = self.shuffle_left(t_p) + self.est.reduce_bounded(f64::from(done), self.v.skew);
        Some(cut - answer)
    }

    /// The output still to cross the link, at eq. 5's bandwidth.
    pub(super) fn shuffle_left(&self, t_p: Seconds) -> Seconds {
        let bandwidth = self.est.bandwidth(t_p);
        match bandwidth > 0.0 {
            true => self.est.backlog.max(0.0) / bandwidth,
            false => 0.0,
        }
    }

    /// `last_moment`: asks to be woken at the next moment of its own — the guard's
    /// (`stop_maps_at`) until it fired, then the last reduces' cut. A moment that moved later
    /// is not asked again: the earlier wake finds it not come yet and asks anew. Nothing
    /// without a deadline: no moment is due.
    pub(super) fn ask_wake(&mut self, now: Seconds, out: &mut Vec<Decision>) {
        let Some(cut) = self.cut_at() else {
            return;
        };
        let t_p = self.core.elapsed(now);
        let stop = match self.core.progress.guarded {
            false => self.stop_maps_at(t_p),
            true => None,
        };
        let at = match (stop, self.reduces_cut) {
            (Some(stop), _) => stop.min(cut),
            (None, false) => cut,
            (None, true) => return,
        };
        let at = self.core.start + at.max(t_p);
        if self.wake.is_none_or(|asked| at < asked - WAKE_SLACK) {
            self.wake = Some(at);
            out.push(Decision::WakeAt(at));
        }
    }

    /// `last_moment`: the attempts the guard leaves running. While no map is done, every map
    /// whose output could still be answered were it to end now: stopping one sooner gains
    /// nothing. Once
    /// some are done, a map whose expected end (`running.rs`, given it has not ended), its
    /// output's shuffle and the reduces over every output by then (`reduce_bounded`) fit
    /// before the cut. And every running reduce expected to end before the cut, or still
    /// waiting for its input (it is cut at the cut if it has not ended). In attempt order.
    /// Without a deadline nothing is late: every live attempt.
    pub(super) fn last_moment_spares(&self, now: Seconds) -> Vec<AttemptId> {
        self.spared(now, true)
    }

    /// `last_moment_spares`, of the maps only unless `with_reduces`.
    pub(super) fn spared(&self, now: Seconds, with_reduces: bool) -> Vec<AttemptId> {
        let t_p = self.core.elapsed(now);
        let by = self.cut_at();
        let in_time = |end: Seconds| by.is_none_or(|by| end <= by);
        let done = self.core.progress.maps_done;
        let start = self.core.start;
        let sigma = self.map_spread();
        let bandwidth = self.est.bandwidth(t_p);
        let with_running = f64::from(done + self.core.maps_running());
        let answer = self.est.reduce_bounded(with_running, self.v.skew);
        let least = self.least_reduce();
        let law = self.est.reduce_time;
        let mean_of_median = (law.spread * law.spread / 2.0).exp();
        let folds_more = self.worth_waiting_for(now);
        let mut spare: Vec<AttemptId> = self
            .core
            .live_attempt_ids()
            .filter(|(id, x)| match x.task {
                TaskRef::Map(m) => {
                    let scale = self.input_scale(m);
                    let shuffle = self.output_shuffle(scale, bandwidth);
                    let mean = self.est.map_duration(x.locality) * scale;
                    let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                    if done == 0 {
                        // While none is done, a map is stopped only once even ending now
                        // would be too late: its rate, from noisy reports at a varying speed,
                        // may call late a map that ends in time (the harsh model's C3 one-map
                        // jobs, at zero slack, answered empty for 10 % of them), and stopping
                        // it sooner only makes the answer empty sooner.
                        in_time(t_p + shuffle + least)
                    } else {
                        in_time(e.expected_end() + shuffle + answer)
                            || folds_more.binary_search(id).is_ok()
                    }
                }
                TaskRef::Reduce(_) if !with_reduces => false,
                TaskRef::Reduce(r) => {
                    let Some((ready, kept)) = self.core.reduce_running_since(r) else {
                        // Waiting for its input: cut now it would answer from none of it; it
                        // gets the outputs done, Alg. 5 sizes it to the time left, and the
                        // last cut stops it if it runs late.
                        return true;
                    };
                    let mean = law.at(kept as f64) * mean_of_median;
                    let e = Run::ending(x, ready - start, mean, law.spread, t_p, start);
                    in_time(e.expected_end())
                }
            })
            .map(|(id, _)| id)
            .collect();
        spare.sort_unstable();
        spare
    }

    /// `last_moment`, in Alg. 1: whether the guard would spare a map launched now, of input
    /// `scale` times the mean map's and mean duration `duration` here, on what is known now —
    /// `spared`'s rule for a map that starts at `t_p` (its expected end is `t_p + duration`
    /// times its scale). The approach admits only such a map, so that the guard never stops
    /// what the approach just launched unless news came since (a map slower than its mean, a
    /// link slower than measured): Alg. 1's `T_J(k+1) < D` counts the reduces at the median
    /// and ends at `D`, the guard's spare at Alg. 5's confidence and ends at the cut,
    /// `answer_cost` before `D`, and between the two the guard killed a wave the approach had
    /// just launched (the demo, issue 29: three maps launched 0.1 s before the guard's moment,
    /// killed at it). Sparing what the approach admitted instead would hold the reduces for
    /// outputs that, by the guard's own account, leave them less to fold by the cut.
    pub(super) fn guard_spares_launch(&self, scale: f64, duration: Seconds, t_p: Seconds) -> bool {
        // Without a deadline the guard stops nothing.
        let (true, Some(by)) = (self.last_moment_on(), self.cut_at()) else {
            return true;
        };
        let shuffle = self.output_shuffle(scale, self.est.bandwidth(t_p));
        let done = self.core.progress.maps_done;
        if done == 0 {
            return t_p + shuffle + self.least_reduce() <= by;
        }
        let with_it = f64::from(done + self.core.maps_running() + 1);
        let answer = self.est.reduce_bounded(with_it, self.v.skew);
        t_p + duration * scale + shuffle + answer <= by
    }

    /// `wave_fill`'s keeping rule (under `time_cut`'s guard; empty otherwise): the running maps
    /// worth waiting for by the cut's rule — the ones expected to end first, as many as make
    /// the reduces, cut at `D − answer_cost`, fold the most maps' worth (each map's expected
    /// end, with its output's shuffle, ends the map phase if it is the last kept; its output
    /// adds to the reduces' input; `Estimator::answered_maps`). The rule Alg. 1's
    /// `fills_wave` admits a map by: Alg. 3–4's kills and the guard's spares judge the maps it
    /// admitted by it too, not by whether the whole reduce still fits. In attempt order.
    pub(super) fn worth_waiting_for(&self, now: Seconds) -> Vec<AttemptId> {
        let x = self.v.x;
        let on = x.wave_fill && x.time_cut && x.cut_tail && self.last_moment_on();
        let (true, Some(by)) = (on, self.cut_at()) else {
            return Vec::new();
        };
        let t_p = self.core.elapsed(now);
        let (start, sigma) = (self.core.start, self.map_spread());
        let bandwidth = self.est.bandwidth(t_p);
        let ends: Vec<(AttemptId, Seconds)> = self
            .core
            .live_attempt_ids()
            .filter_map(|(id, x)| match x.task {
                TaskRef::Map(m) => {
                    let scale = self.input_scale(m);
                    let mean = self.est.map_duration(x.locality) * scale;
                    let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                    Some((id, e.expected_end() + self.output_shuffle(scale, bandwidth)))
                }
                TaskRef::Reduce(_) => None,
            })
            .collect();
        let skew = self.v.skew;
        let done = f64::from(self.core.progress.maps_done);
        // Judged as a group, in the order they are expected to end: waiting for the first j
        // ends the map phase at the j-th end; the j that folds the most is kept (the most
        // maps among equals), the rest are not worth waiting for. Judged one at a time, every
        // map but the latest looked worth keeping and the guard never stopped a wave of
        // thousands (FB-2010's job403 answered empty at D).
        let mut ends = ends;
        ends.sort_by(|a, b| a.1.total_cmp(&b.1));
        let folded = |maps: f64, end: Seconds| {
            let phases = Estimate {
                map: end,
                shuffle: 0.0,
                reduce: 0.0,
                total: end,
            };
            self.est.answered_maps(maps, &phases, by, skew)
        };
        let mut best = (folded(done, t_p), 0);
        for (j, &(_, end)) in ends.iter().enumerate() {
            let value = folded(done + (j + 1) as f64, end.max(t_p));
            if value >= best.0 {
                best = (value, j + 1);
            }
        }
        let mut keep: Vec<AttemptId> = ends[..best.1].iter().map(|(a, _)| *a).collect();
        keep.sort_unstable();
        keep
    }

    /// `lone_map`, in Alg. 1: with no map in `k`, when the estimate says not even one map
    /// fits, the candidate is launched if, at the shortest map the profile has seen (scaled
    /// by its input and locality as `T_l^a` is) or the shortest its law gives a 0.13 % chance
    /// (whichever is shorter), it could end with its shuffle and the least
    /// reduce Alg. 5 would leave (`min_reduce_sample` of one map's reduce input, at the fit's
    /// median) by `D`. An empty answer is right only when nothing could have been read; a
    /// map that then runs long is the guard's (and `kill_on_tick`'s) to stop. Alg. 1 as
    /// printed tests the mean map (`dart-paper`). Without a deadline any map fits.
    pub(super) fn lone_map_fits(&self, m: MapId, locality: Locality, t_p: Seconds) -> bool {
        if !self.lone_map_on() || self.core.k() > 0 {
            return false;
        }
        let scale = self.input_scale(m);
        // The map's law (its profile duration, spread by `map_spread`) gives this short a map
        // a 0.13 % chance (`LONE_MAP_Z` σ below the median of a mean-one log-normal).
        let sigma = self.map_spread();
        let low = (-sigma * sigma / 2.0 - LONE_MAP_Z * sigma).exp();
        let by_law = self.est.map_duration(locality) * scale * low;
        let profile = &self.core.spec.profile;
        let remote = profile.map_remote / profile.map_local;
        let away = match locality {
            Locality::NodeLocal => 1.0,
            _ if remote.is_finite() && remote > 0.0 => remote,
            _ => 1.0,
        };
        let seen = profile
            .map_shortest
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(f64::INFINITY, |s| s * away * scale);
        let duration = by_law.min(seen);
        let e = self.est.completion(1.0, t_p, duration, self.v.skew);
        let end = e.map + e.shuffle + self.least_reduce();
        self.deadline().is_none_or(|d| end < d)
    }

    /// `lone_map`'s candidate on a container at `at`: the pending map whose input times its
    /// chance to end in time is the largest — the expected input a lone map brings to the
    /// answer — if its best case fits (`lone_map_fits`). The chance is its law's (its
    /// profile duration there, by input and locality, spread by `map_spread`) of ending
    /// with its shuffle and the least reduce by `D`. A lone map is all the answer will hold:
    /// the map the locality queue offers (`m`, kept on ties) may be the job's longest, or
    /// one with no input. Runs once per job at most: after it, `k` is 1. None without a
    /// deadline, where every map fits (`fits`) and no lone map is needed.
    pub(super) fn lone_map_pick(
        &self,
        m: MapId,
        at: Location,
        t_p: Seconds,
    ) -> Option<(MapId, Seconds)> {
        let d = self.deadline()?;
        if !self.lone_map_on() || self.core.k() > 0 {
            return None;
        }
        let sigma = self.map_spread().max(1e-6);
        let bandwidth = self.est.bandwidth(t_p);
        let budget = d - t_p - self.least_reduce();
        let value = |m: MapId| {
            let locality = self.core.locality(m, at);
            let scale = self.input_scale(m);
            let mean = self.est.map_duration(locality) * scale;
            let left = budget - self.output_shuffle(scale, bandwidth);
            let chance = match left > 0.0 && mean > 0.0 {
                // ln(duration) ~ N(ln mean − σ²/2, σ²): a mean-one log-normal's.
                true => normal_cdf(((left / mean).ln() + sigma * sigma / 2.0) / sigma),
                false => 0.0,
            };
            let bytes = self.core.spec.maps[m.0 as usize].bytes as f64;
            (bytes * chance, mean, locality)
        };
        let (mut best, (mut best_value, mut mean, mut locality)) = (m, value(m));
        for i in 0..self.core.spec.maps.len() {
            let other = MapId(i as u32);
            if other == m || self.core.map_state(other) != MapState::Pending {
                continue;
            }
            let (v, other_mean, other_locality) = value(other);
            if v > best_value {
                (best, best_value, mean, locality) = (other, v, other_mean, other_locality);
            }
        }
        self.lone_map_fits(best, locality, t_p)
            .then_some((best, mean))
    }

    /// The time one map's output takes on the link at `bandwidth`, the map's input being
    /// `scale` times the mean map's (eq. 4 for one map).
    pub(super) fn output_shuffle(&self, scale: f64, bandwidth: f64) -> Seconds {
        let output = self.est.partition * f64::from(self.core.spec.reduces) * scale;
        match output > 0.0 && bandwidth > 0.0 {
            true => output / bandwidth,
            false => 0.0,
        }
    }

    /// The least reduce Alg. 5 leaves one map's output: `min_reduce_sample` of its largest
    /// reduce input, at the fit's median (eq. 9 at `e = 1`).
    pub(super) fn least_reduce(&self) -> Seconds {
        if self.core.spec.reduces == 0 {
            return 0.0;
        }
        let d = self.est.reduce_input(1.0, self.v.skew);
        self.est.reduce_time.at(self.config.min_reduce_sample * d)
    }

    /// The live map attempts that will (`in_time`) or will not end in time: each one's
    /// expected end (from its progress rate, or one profile duration from its start; the
    /// forecast's `ending`), then its output's shuffle at the measured bandwidth and the least
    /// reduce Alg. 5 would leave, by `D` (within `LONE_MAP_SLACK`: the guard's deadline event
    /// ends anything later; without a deadline every map ends in time). In attempt order.
    pub(super) fn maps_in_time(&self, now: Seconds, in_time: bool) -> Vec<AttemptId> {
        let t_p = self.core.elapsed(now);
        let start = self.core.start;
        let sigma = self.map_spread();
        let reduces = f64::from(self.core.spec.reduces);
        let bandwidth = self.est.bandwidth(t_p);
        let reduce = self.least_reduce();
        let mut maps: Vec<AttemptId> = self
            .core
            .live_attempt_ids()
            .filter_map(|(id, x)| {
                let TaskRef::Map(m) = x.task else {
                    return None;
                };
                let scale = self.input_scale(m);
                let mean = self.est.map_duration(x.locality) * scale;
                let e = Run::ending(x, x.started - start, mean, sigma, t_p, start);
                let end = e.from.max(e.after) + e.left;
                let output = self.est.partition * reduces * scale;
                let shuffle = if output > 0.0 && bandwidth > 0.0 {
                    output / bandwidth
                } else {
                    0.0
                };
                let fits = self
                    .deadline()
                    .is_none_or(|d| end + shuffle + reduce <= d + LONE_MAP_SLACK);
                (fits == in_time).then_some(id)
            })
            .collect();
        maps.sort_unstable();
        maps
    }
}
