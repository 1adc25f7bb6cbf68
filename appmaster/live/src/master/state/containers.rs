//! The rm's side of the state: containers allocated and held, a start that failed, what the
//! master asks for and the progress it reports at each allocate call.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use yard_appmaster::policy::{ContainerId, Event};
use yard_wire::protocol::{AllocateReply, Allocated, ContainerEnd, ResourceRequest};

use super::{Held, State, log_line};

impl State {
    /// The rm's reply: new containers (their runners are started by the caller), and ended
    /// ones: a container the policy held ends with whatever ran in it, and that attempt counts
    /// as failed. A container that ended `LOST` means its node is gone, and with it the map
    /// outputs there: they are re-run where a reduce still needs them.
    pub(in crate::master) fn allocated(&mut self, reply: AllocateReply) -> Vec<Allocated> {
        // A deadline is never taken away (`PUT …/deadline` sets one): an rm that says none
        // leaves the one the job has (an rm from before the field, or an app without one).
        if reply.deadline.is_some() {
            self.deadline = reply.deadline;
        }
        let mut lost_nodes = BTreeSet::new();
        for status in reply.completed {
            let Some(held) = self.containers.remove(&status.container_id) else {
                continue;
            };
            self.by_id.remove(&held.id);
            if status.end == ContainerEnd::Lost {
                lost_nodes.insert(held.http.clone());
            }
            if !held.released && held.offered {
                // The attempt in it went with it (the policy contract): its reports count no more.
                let mut ended = Vec::new();
                if let Some(job) = self.job.as_mut() {
                    for live in job.attempts.values_mut() {
                        if live.container == status.container_id && !live.ended {
                            live.ended = true;
                            ended.push(live.task);
                        }
                    }
                }
                let reason = match status.exit_code {
                    Some(code) => format!(
                        "its container {} ended ({:?}, exit code {code})",
                        status.container_id, status.end
                    ),
                    None => format!(
                        "its container {} ended ({:?})",
                        status.container_id, status.end
                    ),
                };
                let mut going = true;
                for task in ended {
                    log_line(&format!("{task:?}: {reason}"));
                    // A preemption is the cluster's choice, not the task's failure (YARN does
                    // not count it toward the attempt limit either): it runs again.
                    if status.end != ContainerEnd::Preempted {
                        going &= self.count_failure(task, &reason);
                    }
                }
                if going {
                    self.feed(Event::ContainerLost(held.id));
                }
            }
        }
        for node in lost_nodes {
            self.node_lost(&node, "its node was lost");
        }
        let mut fresh = reply.allocated;
        // The cap: a grant beyond it (asks cross grants in flight) goes back unused.
        if let Some(cap) = self.max_containers {
            let held = self.held_containers() as usize;
            let room = (cap as usize).saturating_sub(held);
            if fresh.len() > room {
                for extra in fresh.split_off(room) {
                    log_line(&format!(
                        "container {} goes back: {cap} task containers at most (maxContainers)",
                        extra.container_id
                    ));
                    self.releases.push(extra.container_id);
                }
            }
        }
        for c in &fresh {
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.by_id.insert(id, c.container_id.clone());
            self.containers.insert(
                c.container_id.clone(),
                Held {
                    id,
                    node: c.node_id.clone(),
                    http: c.node_http_address.clone(),
                    offered: false,
                    released: false,
                    orders: VecDeque::new(),
                },
            );
        }
        self.peak_containers = self.peak_containers.max(self.held_containers());
        fresh
    }

    /// Task containers held and not released.
    pub(in crate::master) fn held_containers(&self) -> u32 {
        self.containers.values().filter(|h| !h.released).count() as u32
    }

    /// A container that could not start goes back.
    pub(in crate::master) fn start_failed(&mut self, container: &str) {
        if let Some(held) = self.containers.remove(container) {
            self.by_id.remove(&held.id);
            self.releases.push(container.to_owned());
        }
    }

    /// The progress an allocate call reports: the job proper's maps done over its maps (the
    /// task sampler's are not the job's); between phases and after the job, what was last
    /// sent, 1 once stopping (it read 0 from the job's end to the stop).
    pub(in crate::master) fn progress_for_rm(&mut self) -> f64 {
        let progress = match self.job.as_ref() {
            Some(j) if !j.sampler => {
                let p = j.policy.progress();
                f64::from(p.maps_done) / f64::from(p.maps.max(1))
            }
            _ if self.stopping => 1.0,
            _ => self.progress_sent,
        };
        self.progress_sent = progress.clamp(0.0, 1.0);
        self.progress_sent
    }

    /// YARN's asks: `*` for every container wanted and not held, and node and rack asks for
    /// where unlaunched maps' replicas are (a grant there makes a node-local map possible).
    pub(in crate::master) fn asks(&self) -> Vec<ResourceRequest> {
        let want = self.job.as_ref().map_or(0, |j| j.want);
        let want = self.max_containers.map_or(want, |cap| want.min(cap));
        let held = self.held_containers();
        let outstanding = want.saturating_sub(held);
        // Each unlaunched map counts once at every node and every rack holding its block.
        let mut nodes: BTreeMap<String, u32> = BTreeMap::new();
        let mut racks: BTreeMap<String, u32> = BTreeMap::new();
        if let Some(job) = self.job.as_ref().filter(|j| j.closed.is_none()) {
            for (m, input) in job.maps.iter().enumerate() {
                if job.launched[m] {
                    continue;
                }
                let mut its_racks = BTreeSet::new();
                for node in &input.nodes {
                    *nodes.entry(node.clone()).or_default() += 1;
                    its_racks.extend(self.rack_of.get(node));
                }
                for rack in its_racks {
                    *racks.entry(rack.clone()).or_default() += 1;
                }
            }
        }
        let ask = |resource_name: String, n: u32| ResourceRequest {
            priority: 1,
            resource_name,
            capability: self.capability,
            num_containers: n.min(outstanding),
            relax_locality: true,
        };
        let mut asks: Vec<ResourceRequest> = nodes
            .into_iter()
            .chain(racks)
            .map(|(name, n)| ask(name, n))
            .collect();
        asks.push(ask("*".into(), outstanding));
        asks
    }
}
