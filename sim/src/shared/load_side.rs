//! The node load model's side of a shared day (`crate::load`, `crate::overload`): every
//! node's hogs, the classifier on the rm, and the model's wake-ups.

use std::collections::BTreeMap;

use yard_appmaster::policy::AttemptId;
use yard_appmaster::typing::Probe;
use yard_cluster::classifier::NodeLoad;
use yard_cluster::ids::Bound;
use yard_cluster::scheduler::{AppId, ClusterPolicy as RmPolicy, NodeId, SchedEvent, Scheduler};

use super::{Day, NO_HOG, Wake, us};
use crate::engine::{Note, mix};
use crate::load::{Demand, LOAD_FREQ, Node};
use crate::overload::{LoadSetup, LoadSide, LoadStats, Running};

/// The node load model's side of a day (`crate::load`, `crate::overload`).
impl Day<'_> {
    /// Puts the node load model on the day: every node's hogs drawn from a stream of its own
    /// (the seed and the node: the same hogs whatever the day places), the classifier on the
    /// rm when the setup has one, and the model's wake-ups queued.
    pub(super) fn with_load(&mut self, setup: &LoadSetup) {
        use rand::SeedableRng;
        let plain = std::mem::replace(&mut self.sched, Scheduler::new(RmPolicy::Fifo));
        self.sched = plain.with_placement(setup.placement);
        if let Some(config) = setup.classifier {
            let plain = std::mem::replace(&mut self.sched, Scheduler::new(RmPolicy::Fifo));
            self.sched = plain.with_overload_classifier(config);
        }
        let nodes: Vec<_> = (0..self.exp.cluster.nodes.max(1))
            .map(|n| match setup.scripted_hogs.as_ref() {
                Some(hogs) => {
                    let [cpu, io] = hogs.get(n as usize).copied().unwrap_or([NO_HOG; 2]);
                    Node::scripted(setup.load, cpu, io)
                }
                None => {
                    let rng = yard_appmaster::policy::Rng::seed_from_u64(mix(
                        self.exp.seed,
                        0x4065,
                        u64::from(n),
                        0,
                    ));
                    Node::new(setup.load, rng)
                }
            })
            .collect();
        for (n, node) in nodes.iter().enumerate() {
            if node.next_switch().is_finite() {
                self.wake(us(node.next_switch()), Wake::Hog(n as u32));
            }
        }
        self.wake(us(LOAD_FREQ), Wake::LoadTick);
        self.wake(us(setup.load.heartbeat), Wake::NodeBeat);
        self.load = Some(LoadSide {
            setup: setup.clone(),
            nodes,
            running: BTreeMap::new(),
            typed: vec![[None, None]; self.jobs.len()],
            stats: LoadStats::default(),
        });
    }

    /// Linux's 5-second load-average update on every node, and the overload count.
    pub(super) fn load_tick(&mut self) {
        let going = self.going();
        let Some(l) = self.load.as_mut() else {
            return;
        };
        if !going {
            return; // the day is over: nothing is counted after its last answer
        }
        let now = self.now_us as f64 / 1e6;
        let minute = ((now - LOAD_FREQ).max(0.0) / 60.0).floor() as usize;
        l.stats.unavoidable_node_seconds +=
            LOAD_FREQ * f64::from(crate::overload::unavoidable(&l.nodes));
        for node in &mut l.nodes {
            node.tick_load_average();
            if node.cpu_hog.on || node.io_hog.on {
                l.stats.hogged_node_seconds += LOAD_FREQ;
            }
            if l.setup.rule.overloaded(&node.sample()) {
                l.stats.overloaded_node_seconds += LOAD_FREQ;
                let placed = node.hog_on_since().is_some_and(|since| {
                    node.tasks()
                        .any(|(key, _)| l.running.get(key).is_some_and(|r| r.began >= since))
                });
                if placed {
                    l.stats.overloaded_placed_on_hog += LOAD_FREQ;
                }
                let m = &mut l.stats.overloaded_per_minute;
                if m.len() <= minute {
                    m.resize(minute + 1, 0.0);
                }
                m[minute] += LOAD_FREQ;
            }
        }
        self.wake(self.now_us + us(LOAD_FREQ), Wake::LoadTick);
    }

    /// Every node's heartbeat: its load to the rm (which ignores it without a classifier).
    pub(super) fn node_beat(&mut self) {
        let Some(l) = self.load.as_ref() else {
            return;
        };
        let every = us(l.setup.load.heartbeat);
        let loads: Vec<NodeLoad> = l.nodes.iter().map(Node::sample).collect();
        for (n, load) in loads.into_iter().enumerate() {
            self.rm(SchedEvent::NodeLoad {
                node: NodeId(n as u32),
                load,
            });
        }
        if self.going() {
            self.wake(self.now_us + every, Wake::NodeBeat);
        }
    }

    /// A hog on node `n` switches: its tasks are re-rated.
    pub(super) fn switch_hogs(&mut self, n: u32) {
        let going = self.going();
        let Some(node) = self.load.as_mut().and_then(|l| l.nodes.get_mut(n as usize)) else {
            return;
        };
        node.switch_hogs(node.next_switch());
        let next = node.next_switch();
        self.rerate_node(n);
        if going && next.is_finite() {
            self.wake(us(next).max(self.now_us), Wake::Hog(n));
        }
    }

    /// Re-rates every task on node `n` whose speed its node's demand changed.
    fn rerate_node(&mut self, n: u32) {
        let Some(l) = self.load.as_mut() else {
            return;
        };
        let Some(node) = l.nodes.get(n as usize) else {
            return;
        };
        let mut changed = Vec::new();
        for &(key, demand) in node.tasks() {
            let speed = node.speed(demand.bound);
            if let Some(r) = l.running.get_mut(&key)
                && r.speed != speed
            {
                r.speed = speed;
                changed.push((key, speed));
            }
        }
        for ((j, a), speed) in changed {
            let local = self.local(j);
            if let Some(run) = self.runs[j].as_mut() {
                run.rerate(local, a, speed);
                self.dirty.push(j);
            }
        }
    }

    /// Takes job `i`'s notes of tasks that began and ended on their nodes: their demand on and
    /// off the nodes (re-rating the others there), the slowdown of those that finished, and the
    /// job's types from its first finished map and reduce (told to the rm).
    pub(super) fn take_notes(&mut self, i: usize) {
        let Some(notes) = self.runs[i]
            .as_mut()
            .and_then(|r| r.shared.as_mut())
            .and_then(|s| s.notes.as_mut())
            .filter(|n| !n.is_empty())
            .map(std::mem::take)
        else {
            return;
        };
        let now = self.now_us as f64 / 1e6;
        for note in notes {
            let Some(l) = self.load.as_mut() else {
                return;
            };
            let cfg = l.setup.load;
            match note {
                Note::Began {
                    attempt,
                    node,
                    map,
                    input,
                    output,
                    work,
                } => {
                    let ratio = l.setup.reduce_output_ratio.get(i).copied().unwrap_or(1.0);
                    let output = output.unwrap_or((input as f64 * ratio) as u64);
                    let demand = Demand::of(&cfg, input as f64, output as f64, work);
                    let Some(on) = l.nodes.get_mut(node as usize) else {
                        continue;
                    };
                    l.stats.tasks_begun += 1;
                    l.stats.io_tasks_begun += u64::from(demand.bound == Bound::Io);
                    let hogged = on.cpu_hog.on || on.io_hog.on;
                    l.stats.began_on_hogged += u64::from(hogged);
                    on.add((i, attempt), demand);
                    l.running.insert(
                        (i, attempt),
                        Running {
                            node,
                            map,
                            input,
                            output,
                            work,
                            speed: 1.0,
                            began: now,
                        },
                    );
                    self.rerate_node(node);
                }
                Note::Ended {
                    attempt,
                    node,
                    finished,
                    elapsed,
                } => {
                    if let Some(on) = l.nodes.get_mut(node as usize) {
                        on.remove((i, attempt));
                    }
                    let Some(r) = l.running.remove(&(i, attempt)) else {
                        continue;
                    };
                    l.stats.busy_seconds += elapsed;
                    let mut typed = None;
                    if finished {
                        if r.work >= crate::engine::MEASURABLE {
                            l.stats.slowdown_sum += elapsed / r.work;
                            l.stats.slowdown_tasks += 1;
                        }
                        let part = usize::from(!r.map);
                        let probe = Probe {
                            input_bytes: r.input as f64,
                            output_bytes: r.output as f64,
                            seconds: elapsed,
                        };
                        if l.typed[i][part].is_none()
                            && let Some(bound) = probe.bound(cfg.disk_rate)
                        {
                            l.typed[i][part] = Some(bound);
                            l.stats.typed[part][usize::from(bound == Bound::Io)] += 1;
                            typed = Some(l.typed[i]);
                        }
                    }
                    self.rerate_node(node);
                    if let Some([map, reduce]) = typed {
                        self.rm(SchedEvent::JobType {
                            app: AppId(i as u64),
                            map,
                            reduce,
                        });
                    }
                }
            }
        }
    }

    /// Job `i` is gone: whatever of it still runs leaves its nodes.
    pub(super) fn leave_nodes(&mut self, i: usize) {
        let Some(l) = self.load.as_mut() else {
            return;
        };
        let left: Vec<(AttemptId, Running)> = l
            .running
            .range((i, AttemptId(0))..(i + 1, AttemptId(0)))
            .map(|(&(_, a), &r)| (a, r))
            .collect();
        let mut nodes = Vec::new();
        for (a, r) in left {
            l.running.remove(&(i, a));
            if let Some(on) = l.nodes.get_mut(r.node as usize) {
                on.remove((i, a));
            }
            nodes.push(r.node);
        }
        nodes.sort_unstable();
        nodes.dedup();
        for n in nodes {
            self.rerate_node(n);
        }
    }
}
