//! A run's containers: granting them (alone, or as the shared cluster's rm says), taking
//! them back, and which node a map goes to (node-local first, then any with room).

use yard_appmaster::policy::{AttemptId, Container, ContainerId, Event, Seconds};

use super::{Ev, LOCALITY_LOOKAHEAD, NOT_HELD, Run};

impl<'a> Run<'a> {
    /// Grants containers up to what the policy wants (at most its allotment) as soon as there is
    /// room — the rm answers pending asks at once, not on the next heartbeat — on a node holding
    /// an unlaunched map's input where one has room (the master asks node-local first), else on
    /// the next node with room.
    pub(super) fn grant(&mut self) {
        if self.shared.is_some() {
            return self.take_granted();
        }
        while self.holding < self.want.min(self.plan.containers) {
            let Some(node) = self.local_node().or_else(|| self.any_node()) else {
                return;
            };
            self.free[node as usize] -= 1;
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.held.push(node);
            self.holding += 1;
            let at = self.plan.location(node, &self.exp.cluster);
            self.call(Event::ContainerGranted(Container { id, at }));
        }
    }

    /// On a shared cluster: hands the policy what the rm granted, while it wants more; what
    /// it does not want goes back.
    fn take_granted(&mut self) {
        while self.holding < self.want {
            let Some((rm_id, node)) = self.shared.as_mut().and_then(|s| s.granted.pop_front())
            else {
                return;
            };
            let id = ContainerId(self.next_container);
            self.next_container += 1;
            self.held.push(node);
            self.holding += 1;
            if let Some(s) = self.shared.as_mut() {
                s.rm_ids.push(rm_id);
            }
            let at = self.plan.location(node, &self.exp.cluster);
            self.call(Event::ContainerGranted(Container { id, at }));
        }
        if let Some(s) = self.shared.as_mut() {
            let extra = s.granted.drain(..).map(|(rm_id, _)| rm_id);
            s.released.extend(extra);
        }
    }

    /// On a shared cluster: the rm took back the container it knows as `rm_id` (MinEDF-WC's
    /// preemption). Its attempt ends with it (`ContainerLost`: the policy runs the task again
    /// where it still wants it), and the container goes back to the rm.
    pub(crate) fn preempt(&mut self, now: Seconds, rm_id: u64) {
        self.now = self.now.max(now);
        let Some(shared) = self.shared.as_mut() else {
            return;
        };
        let Some(c) = shared.rm_ids.iter().rposition(|&id| id == rm_id) else {
            return;
        };
        if self.held[c] == NOT_HELD {
            return; // given back already: the release is on its way
        }
        shared.released.push(rm_id);
        self.held[c] = NOT_HELD;
        self.holding -= 1;
        let on_it = self.live.table.iter().enumerate().find_map(|(a, l)| {
            l.as_ref()
                .filter(|l| l.container == c as u64)
                .map(|_| AttemptId(a as u32))
        });
        if let Some(a) = on_it
            && let Some(l) = self.end(a)
            && l.map.is_some()
        {
            self.maps_running -= 1;
        }
        self.call(Event::ContainerLost(ContainerId(c as u64)));
        self.settle();
    }

    /// On a shared cluster: the rm granted containers (`SharedSide::granted`) at `now`; the
    /// policy takes what it wants.
    pub(crate) fn granted_at(&mut self, now: Seconds) {
        self.now = self.now.max(now);
        if std::mem::take(&mut self.tick_paused) {
            // The heartbeat resumes on its grid, at the next beat.
            let beat = self.exp.cluster.heartbeat;
            self.at(((self.now / beat).floor() + 1.0) * beat, Ev::Tick);
        }
        self.settle();
    }

    /// The first unlaunched maps' replica nodes (up to [`LOCALITY_LOOKAHEAD`] maps), while the
    /// map phase is open: where its asks would like containers.
    pub(crate) fn wanted_nodes(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.closed {
            return;
        }
        let maps = self.job.truth.maps.len();
        let mut m = self.unlaunched.from(0);
        for _ in 0..LOCALITY_LOOKAHEAD {
            if m >= maps {
                break;
            }
            out.extend(self.replica_nodes(m));
            m = self.unlaunched.from(m + 1);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Containers wanted and not held: what the master asks the rm for.
    pub(crate) fn outstanding(&self) -> u32 {
        self.want.saturating_sub(self.holding)
    }

    fn has_room(&self, node: u32) -> bool {
        self.free[node as usize] > 0
            && self.released_at[node as usize] + self.exp.cluster.heartbeat <= self.now
    }

    /// A node with room holding the input of one of the next few unlaunched maps.
    fn local_node(&mut self) -> Option<u32> {
        let maps = self.job.truth.maps.len();
        let mut m = self.unlaunched.from(0);
        for _ in 0..LOCALITY_LOOKAHEAD {
            if m >= maps {
                break;
            }
            if let Some(n) = self.replica_nodes(m).find(|&n| self.has_room(n)) {
                return Some(n);
            }
            m = self.unlaunched.from(m + 1);
        }
        None
    }

    fn any_node(&mut self) -> Option<u32> {
        let heartbeat = self.exp.cluster.heartbeat;
        while let Some(&(released, n)) = self.cooling.front() {
            if released + heartbeat > self.now {
                break;
            }
            self.cooling.pop_front();
            self.ready.push_back(n);
        }
        while let Some(n) = self.ready.pop_front() {
            if self.has_room(n) {
                if self.free[n as usize] > 1 {
                    self.ready.push_back(n); // room for more after this grant: its turn comes again
                }
                return Some(n);
            }
        }
        None
    }

    /// Map `m`'s replica nodes on this job's cluster (see `spec`).
    pub(super) fn replica_nodes(&self, m: usize) -> impl Iterator<Item = u32> + use<'a> {
        let base = self.exp.cluster.nodes.max(1);
        let scale = self.plan.nodes / base;
        self.job.truth.maps[m]
            .replicas
            .iter()
            .map(move |&n| n % base + base * (m as u32 % scale))
    }
}
