//! What the tasks tell the master over the umbilical (progress, done, failed, outputs, fetch
//! failures, shuffle and reduce readiness), each turned into the policy's event.

use std::time::Instant;

use serde_json::json;
use yard_appmaster::policy::{
    Container, Decision, Event, Location, MapId, NodeId, Profiler, RackId, TaskRef,
};

use super::{State, kill, log_line, output_name};
use crate::master::recovery::KeptMap;
use crate::{Done, Order, OutputRef, Outputs, Reply};

impl State {
    /// A runner asks for work: the first time, the policy hears of its container.
    pub(in crate::master) fn next_order(&mut self, container: &str) -> Option<Order> {
        let failing = self.job.as_ref().is_some_and(|j| j.fatal.is_some());
        let Some(held) = self.containers.get_mut(container) else {
            return Some(Order::Exit);
        };
        if held.released || failing {
            return Some(Order::Exit);
        }
        if !held.offered && self.job.is_some() {
            held.offered = true;
            let at = self.locations.get(&held.node).copied().unwrap_or(Location {
                node: NodeId(u32::MAX),
                rack: RackId(u32::MAX),
            });
            let id = held.id;
            if let Some(job) = self.job.as_ref().filter(|j| j.attempts.len() < 6) {
                // The first containers, for the log: when the maps could begin.
                log_line(&format!("{:.3} s: container {} offered", job.now(), id.0));
            }
            self.costs.granted(id, Instant::now());
            self.feed(Event::ContainerGranted(Container { id, at }));
        }
        self.containers.get_mut(container)?.orders.pop_front()
    }

    pub(in crate::master) fn progress(&mut self, name: &str, progress: f64) -> Reply {
        if let Some(attempt) = self.attempt(name)
            && self.job.as_ref().is_some_and(|j| j.live(attempt).is_some())
        {
            self.feed(Event::TaskProgress { attempt, progress });
        }
        self.standing(name)
    }

    /// What attempt `name` is to be told now, without feeding the policy (a long-poll asks
    /// again at every change): to stop (killed, or not of this job), to answer (cut), or
    /// nothing.
    pub(in crate::master) fn standing(&self, name: &str) -> Reply {
        match self.attempt(name) {
            Some(attempt) if self.job.as_ref().is_some_and(|j| j.live(attempt).is_some()) => {
                Reply {
                    cut: self.job.as_ref().is_some_and(|j| j.cut.contains(&attempt)),
                    ..Reply::default()
                }
            }
            _ => kill(),
        }
    }

    pub(in crate::master) fn done(&mut self, name: &str, done: Done) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(job) = self.job.as_mut() else {
            return kill();
        };
        let Some(live) = job.attempts.get_mut(&attempt).filter(|l| !l.ended) else {
            return kill();
        };
        live.ended = true;
        self.freed_at.insert(live.container.clone(), Instant::now());
        self.costs.reported(name, Instant::now());
        match live.task {
            TaskRef::Map(map) => {
                let node = self
                    .containers
                    .get(&live.container)
                    .map(|h| h.http.clone())
                    .unwrap_or_default();
                let input = &job.maps[map.0 as usize];
                let split = input.split;
                if !job.output_at.contains_key(&map) {
                    let output = OutputRef {
                        split,
                        node,
                        output: output_name(self.master_attempt, job.phase, split),
                    };
                    if !job.sampler {
                        let kept = KeptMap {
                            split: split.index,
                            bytes: split.bytes,
                            block: input.block.as_ref().map(|b| b.block.clone()),
                            output: Some(output.clone()),
                            output_bytes: done.output_bytes,
                            stats: done.stats.clone(),
                        };
                        self.unsent.insert(kept.key(), json!(kept));
                    }
                    job.output_at.insert(map, job.outputs.len());
                    job.outputs.push(output);
                    job.read
                        .push((job.started.elapsed().as_secs_f64(), split.bytes));
                    if let Some(stats) = done.stats {
                        job.stats.push((split, stats));
                    }
                }
            }
            TaskRef::Reduce(reduce) => {
                job.inputs_in.insert(reduce);
                job.partials.extend(done.partial)
            }
        }
        let task = live.task;
        if let (TaskRef::Reduce(reduce), Some(t)) =
            (task, done.measured.as_ref().and_then(|m| m.tail))
        {
            log_line(&format!(
                "{:.3} s: reduce {} reported: fetch {:.3} s, fold {:.3} s ({}), output part {:.3} s",
                job.now(),
                reduce.0,
                t.fetch_seconds,
                t.fold_seconds,
                t.fold_rate(done.output_bytes),
                t.write_seconds
            ));
        }
        job.output.accepted(task, attempt);
        if let Some(measured) = &done.measured {
            self.probe(task, measured);
        }
        self.feed(Event::TaskFinished {
            attempt,
            output_bytes: done.output_bytes,
        });
        Reply::default()
    }

    pub(in crate::master) fn failed(&mut self, name: &str, reason: &str) {
        let Some(attempt) = self.attempt(name) else {
            return;
        };
        let Some(live) = self
            .job
            .as_mut()
            .and_then(|j| j.attempts.get_mut(&attempt))
            .filter(|l| !l.ended)
        else {
            return;
        };
        live.ended = true;
        let task = live.task;
        self.freed_at.insert(live.container.clone(), Instant::now());
        log_line(&format!("attempt {name} failed: {reason}"));
        if self.count_failure(task, reason) {
            self.feed(Event::TaskFailed(attempt));
        }
    }

    /// Counts a failed attempt of `task` (Hadoop's `maxattempts`): at the
    /// `max_attempts`th (a map's or a reduce's) the job fails, with this failure as its diagnostic, before the
    /// policy can restart the task again. Returns whether the job goes on.
    pub(in crate::master) fn count_failure(&mut self, task: TaskRef, reason: &str) -> bool {
        let Some(job) = self.job.as_mut().filter(|j| j.fatal.is_none()) else {
            return false;
        };
        let limit = match task {
            TaskRef::Map(_) => self.max_attempts.0,
            TaskRef::Reduce(_) => self.max_attempts.1,
        };
        let failures = job.failures.entry(task).or_default();
        *failures += 1;
        if *failures < limit {
            return true;
        }
        let what = match task {
            TaskRef::Map(m) => {
                format!("map {} (split {})", m.0, job.maps[m.0 as usize].split.index)
            }
            TaskRef::Reduce(r) => format!("reduce {}", r.0),
        };
        let fatal = format!(
            "{what} failed {failures} times (the limit is {limit}), the last: {reason} \
             (see the task's log in its container)"
        );
        log_line(&format!("the job fails: {fatal}"));
        job.fatal = Some(fatal);
        false
    }

    /// A finished map's output is gone (its node was lost, or a reducer could not fetch it
    /// from there): unless every reduce already has its input, it counts as a failure of the
    /// map, is no longer listed as current, and the policy hears `MapOutputLost` — it re-runs
    /// the map or drops it. Reducers are told the outputs are complete only once the re-run
    /// is done (or the map dropped). A map whose output is not the current one is ignored.
    fn output_lost(&mut self, map: MapId, why: &str) {
        let reduces = self.reduces as usize;
        let Some(job) = self.job.as_mut() else {
            return;
        };
        let Some(&i) = job.output_at.get(&map) else {
            return;
        };
        if job.inputs_in.len() >= reduces {
            return; // no reduce needs it
        }
        job.output_at.remove(&map);
        let lost = job.outputs[i].clone();
        if !job.sampler {
            let input = &job.maps[map.0 as usize];
            let kept = KeptMap {
                split: lost.split.index,
                bytes: lost.split.bytes,
                block: input.block.as_ref().map(|b| b.block.clone()),
                output: None,
                output_bytes: 0,
                stats: None,
            };
            self.unsent.insert(kept.key(), json!(kept));
        }
        // Its map's statistics go with it; a re-run reports them again.
        job.stats
            .retain(|(split, _)| split.index != lost.split.index);
        log_line(&format!(
            "{:.3} s: the output of map {} at {} is lost ({why}); it runs again if the policy approves",
            job.now(),
            map.0,
            lost.node
        ));
        if self.count_failure(
            TaskRef::Map(map),
            &format!("its output at {} was lost: {why}", lost.node),
        ) {
            self.feed(Event::MapOutputLost(map));
        }
    }

    /// Every current map output on the nodemanager `node` (`http://host:port`) is lost.
    pub(in crate::master) fn node_lost(&mut self, node: &str, why: &str) {
        let Some(job) = self.job.as_ref() else {
            return;
        };
        let mut there: Vec<MapId> = job
            .output_at
            .iter()
            .filter(|&(_, &i)| job.outputs[i].node == node)
            .map(|(&m, _)| m)
            .collect();
        there.sort_unstable();
        for map in there {
            self.output_lost(map, why);
        }
    }

    /// A reducer could not fetch `output` from `node` (after its retries): Hadoop's
    /// fetch-failure notification. If that is the map's current output, it is lost; the
    /// reducer then waits for the re-run's output (or for the list to complete without it).
    pub(in crate::master) fn fetch_failed(
        &mut self,
        name: &str,
        output: &str,
        node: &str,
        reason: &str,
    ) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(job) = self.job.as_ref() else {
            return kill();
        };
        let Some(TaskRef::Reduce(reduce)) = job.live(attempt).map(|l| l.task) else {
            return kill();
        };
        let current = job
            .output_at
            .iter()
            .find(|&(_, &i)| job.outputs[i].output == output && job.outputs[i].node == node)
            .map(|(&m, _)| m);
        match current {
            Some(map) => self.output_lost(
                map,
                &format!("reduce {} could not fetch it: {reason}", reduce.0),
            ),
            None => log_line(&format!(
                "reduce {} could not fetch {output} from {node} ({reason}): not a current output, ignored",
                reduce.0
            )),
        }
        Reply::default()
    }

    /// A task process started: the scheduling overhead of its container, if it was freed by
    /// an earlier attempt (a fresh container's first task counts the runner's start instead).
    pub(in crate::master) fn started(&mut self, name: &str) -> Reply {
        let Some(container) = self
            .attempt(name)
            .and_then(|a| self.job.as_ref()?.live(a))
            .map(|l| l.container.clone())
        else {
            return kill();
        };
        if let Some(freed) = self.freed_at.remove(&container) {
            self.overheads.push(freed.elapsed().as_secs_f64());
        }
        self.costs.started(name, Instant::now());
        let attempt = self.attempt(name);
        if let Some(job) = self.job.as_mut()
            && let Some(launch) = attempt.and_then(|a| job.unstarted.remove(&a))
        {
            // Only differences of the observer's times count: before the phase's start is fine.
            let at = job.now() - job.warm_launch.unwrap_or(0.0);
            job.observer.decisions(at, &[launch]);
        }
        Reply::default()
    }

    pub(in crate::master) fn outputs(&self, name: &str, from: usize) -> Option<Outputs> {
        let attempt = self.attempt(name);
        let job = self.job.as_ref()?;
        if attempt.and_then(|a| job.live(a)).is_none() {
            return Some(Outputs {
                outputs: Vec::new(),
                complete: true,
                kill: true,
            });
        }
        let complete = job.outputs_complete();
        let new = job.outputs.get(from..).unwrap_or_default();
        (complete || !new.is_empty()).then(|| Outputs {
            outputs: new.to_vec(),
            complete,
            kill: false,
        })
    }

    /// A reduce fetched `bytes` of map output, in `seconds` when it timed them (the profile's
    /// bandwidth: `RunObserver::fetched`).
    pub(in crate::master) fn shuffled(
        &mut self,
        name: &str,
        bytes: u64,
        seconds: Option<f64>,
    ) -> Reply {
        match self.attempt(name) {
            Some(a) if self.job.as_ref().is_some_and(|j| j.live(a).is_some()) => {
                if let (Some(seconds), Some(job)) = (seconds, self.job.as_mut()) {
                    let now = job.now();
                    job.observer.fetched(now, bytes, seconds);
                }
                self.feed(Event::ShuffleBytes(bytes));
                self.metrics.shuffled(bytes);
                Reply::default()
            }
            _ => kill(),
        }
    }

    pub(in crate::master) fn ready(&mut self, name: &str, bytes: u64) -> Reply {
        let Some(attempt) = self.attempt(name) else {
            return kill();
        };
        let Some(TaskRef::Reduce(reduce)) = self
            .job
            .as_ref()
            .and_then(|j| j.live(attempt))
            .map(|l| l.task)
        else {
            return kill();
        };
        self.feed(Event::ReduceInputReady { reduce, bytes });
        let Some(job) = self.job.as_mut() else {
            return kill();
        };
        job.inputs_in.insert(reduce);
        let keep = if job.sampler {
            // The task sampler's reduces take geometric shares of their input, so that
            // f(d) = a·d^b can be fitted (Dart §5.1, eq. 9).
            let sizes = Profiler::sample_sizes(bytes as f64, self.reduces.max(1) as usize);
            let keep = sizes[reduce.0 as usize % sizes.len()].round() as u64;
            let now = job.now();
            job.observer.decisions(
                now,
                &[Decision::SampleReduceInput {
                    reduce,
                    keep_bytes: keep,
                }],
            );
            keep
        } else {
            job.keep.remove(&reduce).unwrap_or(bytes)
        };
        log_line(&format!(
            "{:.3} s: reduce {} has {bytes} bytes, keeps {keep}",
            job.now(),
            reduce.0
        ));
        Reply {
            keep_bytes: Some(keep),
            cut: job.cut.contains(&attempt),
            ..Reply::default()
        }
    }
}
