//! The policy's side of a run: events handed to it and its decisions carried out (launches,
//! kills, cuts, the answer); what tasks did is noted for a node load model, if one listens.

use yard_appmaster::policy::{Decision, Event, Locality};

use super::{Ev, Live, NOT_HELD, Note, Run, event_us, mix};

impl Run<'_> {
    pub(super) fn call(&mut self, event: Event) {
        self.events += 1;
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        self.policy.handle(self.now, event, &mut self.rng, &mut out);
        for d in &out {
            self.apply(d);
        }
        if let Some(log) = self.log.as_mut() {
            log.extend(out.iter().map(|d| (self.now, d.clone())));
        }
        self.out = out;
    }

    fn apply(&mut self, d: &Decision) {
        match *d {
            Decision::Want(n) => self.want = n,
            Decision::WakeAt(at) => {
                // After the rest of its instant (rounded down: never after the moment), before
                // the deadline of that instant.
                self.wake = Some(at.to_bits());
                self.queue
                    .push_last(at.max(self.now), 0, Ev::Wake(at.to_bits()));
            }
            Decision::LaunchMap {
                attempt,
                map,
                container,
                locality,
                ..
            } => {
                let node = self.held[container.0 as usize];
                let m = map.0 as usize;
                self.unlaunched.launch(m);
                let factor = match locality {
                    Locality::NodeLocal => 1.0,
                    Locality::RackLocal => self.exp.cluster.rack_local_factor,
                    Locality::Remote => self.exp.cluster.remote_factor,
                };
                let truth = &self.job.truth.maps[m];
                let (input, output) = (truth.input_bytes, truth.output_bytes);
                let duration = truth.duration * factor * self.speed(node);
                let nth = self.attempts_of[m];
                self.attempts_of[m] += 1;
                if nth > 0 {
                    self.relaunched += 1;
                }
                let task = (m as u64) << 16 | u64::from(nth);
                let key = mix(self.exp.seed, 0xC0_12E, self.index, task);
                let (target, ok) = match self.failure(0x0FA1_13A9, task, duration) {
                    Some(t) => (t, false),
                    None => (duration, true),
                };
                let end = self.now + target;
                self.at(end, Ev::MapEnd(attempt, ok));
                self.maps_running += 1;
                let mut live = Live::new(node, container.0, self.now, duration, Some(map));
                live.target = target;
                live.ok = ok;
                live.end_us = event_us(end);
                live.key = key;
                self.live.insert(attempt, live);
                self.note(|| Note::Began {
                    attempt,
                    node,
                    map: true,
                    input,
                    output: Some(output),
                    work: duration,
                });
            }
            Decision::LaunchReduce {
                attempt,
                reduce,
                container,
            } => {
                let node = self.held[container.0 as usize];
                if let Some(n) = self.reduce_launches.get_mut(reduce.0 as usize) {
                    if *n > 0 {
                        self.relaunched += 1;
                    }
                    *n += 1;
                }
                // Its key is set with its input.
                let live = Live::new(node, container.0, self.now, f64::INFINITY, None);
                self.live.insert(attempt, live);
                self.waiting.push((attempt, reduce));
            }
            Decision::SampleReduceInput { reduce, keep_bytes } => {
                if let Some(kept) = self.kept.get_mut(reduce.0 as usize) {
                    *kept = Some(keep_bytes);
                }
            }
            Decision::Release(c) => {
                let node = self
                    .held
                    .get_mut(c.0 as usize)
                    .map(|n| std::mem::replace(n, NOT_HELD));
                if let Some(node) = node.filter(|&n| n != NOT_HELD) {
                    self.holding -= 1;
                    if let Some(s) = self.shared.as_mut() {
                        s.released.push(s.rm_ids[c.0 as usize]);
                        return;
                    }
                    self.free[node as usize] += 1;
                    self.released_at[node as usize] = self.now;
                    self.cooling.push_back((self.now, node));
                }
            }
            Decision::MarkLocalOnly(_) => {}
            // The guard cut a reduce: running its function, it answers now from what it has
            // folded in, its share done × the input it kept; still waiting for its input, it
            // answers from none of it once the input has come (`feed_reduces`), as the task
            // runner's synthetic reduce does live. In this model all of a reduce's work is
            // after its input.
            Decision::CutReduce { attempt, .. } => {
                let now = self.now;
                if let Some(l) = self.live.get_mut(attempt).filter(|l| !l.cut) {
                    l.cut = true;
                    if l.duration.is_finite() {
                        let done = l.done(now, &self.exp.model.progress);
                        let folded = (l.kept as f64 * done).floor() as u64;
                        self.queue.push(now, Ev::ReduceCut(attempt, folded));
                    }
                }
            }
            Decision::CloseMapPhase { estimate, .. } => {
                self.closed = true;
                self.estimate = estimate;
            }
            Decision::Reforecast { estimate, .. } => {
                if self.finished.is_none() {
                    self.reforecast = Some(estimate);
                }
            }
            Decision::Kill(a) => {
                if let Some(l) = self.end(a) {
                    self.killed += 1;
                    if l.map.is_some() {
                        self.maps_running -= 1;
                    }
                }
            }
            Decision::Finish(_) => self.finished = Some(self.now),
        }
    }

    /// Tells a node load model, if one listens, what a task did.
    pub(super) fn note(&mut self, note: impl FnOnce() -> Note) {
        if let Some(notes) = self.shared.as_mut().and_then(|s| s.notes.as_mut()) {
            notes.push(note());
        }
    }
}
