//! The scan's state machine: what `Scan` does with each happening — a rider attaching, a
//! runner asking for its next order, a map or reduce done or failed, the deadline cut, the
//! rm's grants — and the views of it the routes serve.

use std::collections::{BTreeSet, HashMap, VecDeque};

use serde_json::{Value, json};
use yard_appmaster::apps::{AppSpec, Population};
use yard_cluster::scans::CyclicScan;
use yard_wire::deadline::Deadline;
use yard_wire::protocol::{
    AllocateReply, AllocateRequest, Allocated, Resource, ResourceRequest, TaskCounts,
};

use crate::master::MAX_TASK_FAILURES;
use crate::master::state::{MapInput, log_line};
use crate::{Done, Order, OutputRef, Reply, TaskSpec, Work};

use super::routes::kill;
use super::{Attach, Attempt, Container, Rider, Scan, Task};
impl Scan {
    /// A scan of `maps` in `order` (positions to blocks), hosted at `url` by `application`'s
    /// master; as many containers as blocks unless capped.
    pub(super) fn new(
        url: String,
        application: &str,
        maps: Vec<MapInput>,
        order: Vec<usize>,
    ) -> Scan {
        let blocks = maps.len();
        Scan {
            url,
            application: application.to_owned(),
            master_attempt: 1,
            map_min_seconds: 0.0,
            seed: 1,
            capability: Resource {
                memory_mb: 256,
                vcores: 1,
            },
            max_containers: blocks as u32,
            order,
            cyclic: CyclicScan::new(blocks),
            reads: vec![0; blocks],
            population: Population {
                maps: blocks as u32,
                bytes: maps.iter().map(|m| m.split.bytes).sum(),
            },
            maps,
            riders: Vec::new(),
            containers: HashMap::new(),
            attempts: HashMap::new(),
            next_attempt: 0,
            releases: Vec::new(),
            bytes_read: 0,
            read_seconds: 0.0,
            read_failures: HashMap::new(),
            used_nodes: BTreeSet::new(),
            closing: false,
        }
    }

    pub(super) fn attach(&mut self, body: Attach) -> Option<usize> {
        if self.closing {
            return None;
        }
        let id = self.riders.len();
        let application = body.application;
        self.riders.push(Rider {
            application: application.clone(),
            app: body.app,
            reduces: body.reduces.max(1),
            deadline: body.deadline_ms,
            guard_s: body.guard_seconds.clamp(0.0, 3_600.0),
            cut: false,
            joined_at: None,
            read: Vec::new(),
            outputs: Vec::new(),
            stats: Vec::new(),
            to_reduce: VecDeque::new(),
            partials: Vec::new(),
            reduces_done: 0,
            failures: 0,
            outcome: None,
        });
        self.cyclic.attach(id as u64);
        log_line(&format!(
            "{application} rides the scan ({} jobs so far)",
            self.riders.len()
        ));
        Some(id)
    }

    pub(super) fn task_spec(
        &self,
        attempt: &str,
        app: AppSpec,
        reduces: u32,
        work: Work,
    ) -> TaskSpec {
        TaskSpec {
            master: self.url.clone(),
            application: self.application.clone(),
            attempt: attempt.to_owned(),
            app,
            reduces,
            seed: self.seed,
            map_min_seconds: self.map_min_seconds,
            hang: false,
            writes_output: false,
            work,
        }
    }

    /// A rider's output of block `block`'s `n`-th read: one flat name per read and rider.
    pub(super) fn output_name(&self, block: usize, n: u64, rider: usize) -> String {
        format!("scan-{}-{block}-{n}-{rider}", self.master_attempt)
    }

    /// A runner asks for work: a finished rider's reduce first (its answer is nearest), then
    /// the scan's next read; nothing once no job needs anything (the container goes back).
    pub(super) fn next_order(&mut self, container: &str) -> Option<Order> {
        let Some(held) = self.containers.get(container) else {
            return Some(Order::Exit);
        };
        if held.released || self.closing {
            return Some(Order::Exit);
        }
        let name = format!("scan-{}", self.next_attempt);
        let (task, riders, spec) = if let Some((rider, reduce)) = self.pending_reduce() {
            let r = &self.riders[rider];
            let work = Work::Reduce {
                reduce,
                population: self.population,
            };
            let spec = self.task_spec(&name, r.app.clone(), r.reduces, work);
            (Task::Reduce { rider, reduce }, Vec::new(), spec)
        } else if let Some((position, riders)) = self.cyclic.next_block() {
            let block = self.order[position];
            let riders: Vec<usize> = riders.into_iter().map(|r| r as usize).collect();
            let input = &self.maps[block];
            let work = Work::ScanMap {
                split: input.split,
                block: input.block.clone()?,
                riders: riders
                    .iter()
                    .map(|&r| crate::ScanRider {
                        app: self.riders[r].app.clone(),
                        reduces: self.riders[r].reduces,
                        output: self.output_name(block, self.next_attempt, r),
                    })
                    .collect(),
            };
            let first = &self.riders[riders[0]];
            let spec = self.task_spec(&name, first.app.clone(), first.reduces, work);
            (Task::Read(position), riders, spec)
        } else if self.idle() {
            self.release(container);
            return Some(Order::Exit);
        } else {
            return None;
        };
        self.next_attempt += 1;
        let held = self.containers.get_mut(container)?;
        held.running = Some(name.clone());
        self.used_nodes.insert(held.http.clone());
        self.attempts.insert(
            name,
            Attempt {
                task,
                riders,
                container: container.to_owned(),
            },
        );
        Some(Order::Run {
            task: Box::new(spec),
        })
    }

    /// A deadline moved, or given to a job that had none, while the job rides (`PUT
    /// …/deadline`, heard by its master from the rm): the scan-deadline rule works to it from
    /// now on. A job that stopped riding or has its answer keeps what it has. Whether it moved.
    pub(super) fn move_deadline(&mut self, rider: usize, deadline: Deadline) -> bool {
        let Some(r) = self.riders.get_mut(rider) else {
            return false;
        };
        if r.deadline == Some(deadline) || r.cut || r.outcome.is_some() {
            return false;
        }
        log_line(&format!(
            "{}: the deadline moved to {deadline} (was {})",
            r.application,
            r.deadline.map_or("none".into(), |d| d.to_string())
        ));
        r.deadline = Some(deadline);
        true
    }

    /// Yard's scan-deadline rule: a job with a deadline stops riding once the time left is
    /// under its guard plus two reads' time (the mean read so far; a second before any), and
    /// its reduces run at once on the blocks read for it. Whether any job stopped.
    pub(super) fn cut_due(&mut self, now_ms: i64) -> bool {
        let reads: u32 = self.reads.iter().sum();
        let read_s = match reads {
            0 => 1.0,
            n => self.read_seconds / f64::from(n),
        };
        let mut any = false;
        for (id, r) in self.riders.iter_mut().enumerate() {
            let Some(deadline) = r.deadline else {
                continue;
            };
            let reducing = !r.to_reduce.is_empty() || r.reduces_done > 0;
            if r.cut || r.outcome.is_some() || reducing || r.read.len() == self.maps.len() {
                continue;
            }
            let left_s = (deadline.epoch_ms() - now_ms) as f64 / 1000.0;
            if left_s > r.guard_s + 2.0 * read_s {
                continue;
            }
            log_line(&format!(
                "{}: {left_s:.1} s to its deadline: it stops riding with {} of {} blocks; its reduces run",
                r.application,
                r.read.len(),
                self.maps.len()
            ));
            r.cut = true;
            r.to_reduce = (0..r.reduces).collect();
            self.cyclic.detach(id as u64);
            any = true;
        }
        any
    }

    pub(super) fn pending_reduce(&mut self) -> Option<(usize, u32)> {
        let (rider, r) = self
            .riders
            .iter_mut()
            .enumerate()
            .find(|(_, r)| r.outcome.is_none() && !r.to_reduce.is_empty())?;
        Some((rider, r.to_reduce.pop_front()?))
    }

    /// No read waits and no reduce waits or runs: a container has nothing to do.
    pub(super) fn idle(&self) -> bool {
        self.cyclic.waiting() == 0
            && self.riders.iter().all(|r| r.to_reduce.is_empty())
            && self.attempts.is_empty()
    }

    /// Every job attached has its answer (or failed): nothing keeps the scan going.
    pub(super) fn all_answered(&self) -> bool {
        self.riders.iter().all(|r| r.outcome.is_some())
    }

    pub(super) fn release(&mut self, container: &str) {
        if let Some(held) = self.containers.get_mut(container)
            && !held.released
        {
            held.released = true;
            self.releases.push(container.to_owned());
        }
    }

    /// The attempt `name` ended, well or not: its container is free again.
    pub(super) fn end(&mut self, name: &str) -> Option<Attempt> {
        let attempt = self.attempts.remove(name)?;
        if let Some(held) = self.containers.get_mut(&attempt.container) {
            held.running = None;
        }
        Some(attempt)
    }

    pub(super) fn done(&mut self, name: &str, done: Done) -> Reply {
        let Some(attempt) = self.end(name) else {
            return kill();
        };
        let node = self
            .containers
            .get(&attempt.container)
            .map(|h| h.http.clone())
            .unwrap_or_default();
        match attempt.task {
            Task::Read(position) => {
                let block = self.order[position];
                let split = self.maps[block].split;
                let n: u64 = name.trim_start_matches("scan-").parse().unwrap_or_default();
                self.reads[block] += 1;
                if let Some(m) = &done.measured {
                    self.bytes_read += m.input_bytes;
                    self.read_seconds += m.seconds;
                }
                for (i, &r) in attempt.riders.iter().enumerate() {
                    let output = self.output_name(block, n, r);
                    let rider = &mut self.riders[r];
                    if rider.cut {
                        continue; // its reduces run on what it had when it stopped
                    }
                    rider.joined_at.get_or_insert(block);
                    rider.read.push(block);
                    rider.outputs.push(OutputRef {
                        split,
                        node: node.clone(),
                        output,
                    });
                    if let Some(stats) = done.riders.get(i) {
                        rider.stats.push((split, stats.clone()));
                    }
                }
                for r in self.cyclic.block_done(position) {
                    let rider = &mut self.riders[r as usize];
                    log_line(&format!(
                        "{} has every block ({} read for it, from block {}): its {} reduces run",
                        rider.application,
                        rider.read.len(),
                        rider.joined_at.unwrap_or(0),
                        rider.reduces
                    ));
                    rider.to_reduce = (0..rider.reduces).collect();
                }
            }
            Task::Reduce { rider, .. } => {
                let r = &mut self.riders[rider];
                r.partials.extend(done.partial);
                r.reduces_done += 1;
                if r.reduces_done == r.reduces && r.outcome.is_none() {
                    let answer = r.app.answer(self.population, &r.stats, &r.partials);
                    r.outcome = Some(Ok(answer));
                }
            }
        }
        Reply::default()
    }

    /// An attempt failed (its task's report, or its container ended under it).
    pub(super) fn failed(&mut self, name: &str, reason: &str) {
        let Some(attempt) = self.end(name) else {
            return;
        };
        log_line(&format!("{name} ({:?}) failed: {reason}", attempt.task));
        match attempt.task {
            Task::Read(position) => {
                self.cyclic.abandon(position);
                let block = self.order[position];
                let failures = self.read_failures.entry(block).or_default();
                *failures += 1;
                if *failures >= MAX_TASK_FAILURES {
                    let why = format!(
                        "block {block} could not be read {MAX_TASK_FAILURES} times; the last: {reason}"
                    );
                    for r in attempt.riders {
                        self.fail(r, &why);
                    }
                }
            }
            Task::Reduce { rider, reduce } => {
                let r = &mut self.riders[rider];
                r.failures += 1;
                if r.failures >= MAX_TASK_FAILURES {
                    self.fail(
                        rider,
                        &format!("its reduce {reduce} failed {MAX_TASK_FAILURES} times; the last: {reason}"),
                    );
                } else {
                    r.to_reduce.push_back(reduce);
                }
            }
        }
    }

    pub(super) fn fail(&mut self, rider: usize, why: &str) {
        let r = &mut self.riders[rider];
        if r.outcome.is_none() {
            log_line(&format!("{} fails: {why}", r.application));
            r.outcome = Some(Err(why.to_owned()));
            r.to_reduce.clear();
            self.cyclic.detach(rider as u64);
        }
    }

    /// A rider's view, for its master: how far it is, and its answer once there is one.
    pub(super) fn rider_view(&self, rider: usize) -> Value {
        let r = &self.riders[rider];
        json!({
            "blocks": self.maps.len(),
            "blocksRead": r.read.len(),
            "processedFraction": r.read.len() as f64 / self.maps.len().max(1) as f64,
            "cutByDeadline": r.cut,
            "reducesDone": r.reduces_done,
            "answer": match &r.outcome {
                Some(Ok(answer)) => answer.clone(),
                _ => Value::Null,
            },
            "error": match &r.outcome {
                Some(Err(why)) => json!(why),
                _ => Value::Null,
            },
            "scan": self.scan_view(rider),
        })
    }

    /// The scan as one rider saw it: where it joined, what was read for it and for all.
    pub(super) fn scan_view(&self, rider: usize) -> Value {
        let r = &self.riders[rider];
        json!({
            "host": self.application,
            "jobs": self.riders.len(),
            "joinedAtBlock": r.joined_at,
            "blocksReadForIt": r.read,
            "scanOrder": self.order,
            // Every read the host made so far, for every job: each block once per cycle.
            "blockReads": self.reads,
            "bytesRead": self.bytes_read,
        })
    }

    pub(super) fn status(&self) -> Value {
        json!({
            "sharedScan": true,
            "application": self.application,
            "blocks": self.maps.len(),
            "blockReads": self.reads,
            "bytesRead": self.bytes_read,
            "closing": self.closing,
            "jobs": self.riders.iter().map(|r| json!({
                "application": r.application,
                "blocksRead": r.read.len(),
                "reducesDone": r.reduces_done,
                "answered": r.outcome.is_some(),
                "deadlineMs": r.deadline.map(Deadline::epoch_ms),
            })).collect::<Vec<_>>(),
        })
    }

    pub(super) fn held(&self) -> u32 {
        self.containers.values().filter(|h| !h.released).count() as u32
    }

    /// The next allocate call: a container for every read or reduce that could start now,
    /// up to the cap, and the host's own job's progress.
    pub(super) fn allocate_request(&mut self) -> AllocateRequest {
        let waiting = self.cyclic.waiting() as u32
            + self
                .riders
                .iter()
                .map(|r| r.to_reduce.len() as u32)
                .sum::<u32>();
        let busy = self.attempts.len() as u32;
        let want = (waiting + busy).min(self.max_containers);
        let outstanding = want.saturating_sub(self.held());
        let own = &self.riders[0];
        let total = self.maps.len().max(1) as u32;
        AllocateRequest {
            application_id: self.application.clone(),
            asks: vec![ResourceRequest {
                priority: 1,
                resource_name: "*".into(),
                capability: self.capability,
                num_containers: outstanding,
                relax_locality: true,
            }],
            releases: std::mem::take(&mut self.releases),
            progress: f64::from(own.read.len() as u32) / f64::from(total),
            tasks: Some(TaskCounts {
                maps_done: own.read.len() as u32,
                maps_to_run: total,
                reduces_done: own.reduces_done,
            }),
            job_type: None,
            job: None,
        }
    }

    pub(super) fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
        for status in reply.completed {
            let Some(held) = self.containers.remove(&status.container_id) else {
                continue;
            };
            if let Some(name) = held.running {
                let why = format!(
                    "its container {} ended ({:?})",
                    status.container_id, status.end
                );
                self.failed(&name, &why);
            }
        }
        let mut fresh = reply.allocated;
        let room = self.max_containers.saturating_sub(self.held()) as usize;
        for extra in fresh.split_off(room.min(fresh.len())) {
            self.releases.push(extra.container_id);
        }
        for c in &fresh {
            self.containers.insert(
                c.container_id.clone(),
                Container {
                    http: c.node_http_address.clone(),
                    released: false,
                    running: None,
                },
            );
        }
        fresh
    }
}
