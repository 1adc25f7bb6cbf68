//! The exact branch and bound over every assignment of a phase's tasks to containers (the
//! module documentation's case 2), with its capacity lower bound ([`capacity_bound`]).

use super::phase::{drain, transfer};
use super::{Eval, NODE_BUDGET, Task};

/// The earliest T with `Σ_j max(0, T − load_j) / speed_j ≥ work`: no schedule finishes `work`
/// more seconds (at speed 1) on these containers before it.
pub(super) fn capacity_bound(loads: &[f64], speeds: &[f64], work: f64) -> f64 {
    let mut by_load: Vec<(f64, f64)> = loads.iter().copied().zip(speeds.iter().copied()).collect();
    by_load.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rate, mut base) = (0.0, 0.0);
    let mut t = 0.0;
    for (i, &(load, speed)) in by_load.iter().enumerate() {
        rate += 1.0 / speed;
        base += load / speed;
        t = (work + base) / rate;
        if by_load.get(i + 1).is_none_or(|next| t <= next.0) {
            break;
        }
    }
    t
}

/// Branch and bound over every assignment of tasks to containers, longest first (the order
/// that prunes best); each container runs its tasks in run order, so a task placed later (no
/// longer) runs before the ones already there.
pub(super) struct Exact<'a> {
    /// Longest first: the reverse of run order.
    tasks: Vec<Task>,
    speeds: &'a [f64],
    link: Option<f64>,
    /// Work (speed-1 seconds) of tasks `i..`.
    suffix_work: Vec<f64>,
    /// The smallest transfer of any task: the last output to arrive still crosses the link.
    least_transfer: f64,
    /// For each depth i, lower bounds on the arrivals of tasks `i..` (see `bound`): by rank,
    /// and (when their outputs differ) by task.
    early: Vec<Vec<(f64, u64)>>,
    alone: Vec<Option<Vec<(f64, u64)>>>,
    placed: Vec<(f64, u64)>,
    /// Each container's tasks, in placement order (so run order reversed), and load.
    lists: Vec<Vec<Task>>,
    loads: Vec<f64>,
    arrivals: Vec<(f64, u64)>,
    best: f64,
    nodes: u64,
}

impl<'a> Exact<'a> {
    /// The optimum over every assignment (optimal unless the node budget ran out), or `upper`
    /// when nothing beats it.
    pub(super) fn search(run: &[Task], speeds: &'a [f64], link: Option<f64>, upper: f64) -> Eval {
        let tasks: Vec<Task> = run.iter().rev().copied().collect();
        let mut suffix_work = vec![0.0; tasks.len() + 1];
        for i in (0..tasks.len()).rev() {
            suffix_work[i] = suffix_work[i + 1] + tasks[i].d;
        }
        let least_transfer = match link {
            Some(bw) => tasks
                .iter()
                .map(|t| transfer(t.o, bw))
                .fold(f64::INFINITY, f64::min),
            None => 0.0,
        };
        let rate: f64 = speeds.iter().map(|s| 1.0 / s).sum();
        let early = (0..=tasks.len())
            .map(|i| {
                // The j-th to finish of tasks `i..` finishes no earlier than the j shortest of
                // them could on all the containers, nor than the j-th shortest alone on the
                // fastest; the link is kindest with the largest outputs first.
                let mut ascending: Vec<Task> = tasks[i..].to_vec();
                ascending.reverse();
                let mut outputs: Vec<u64> = ascending.iter().map(|t| t.o).collect();
                outputs.sort_unstable_by(|a, b| b.cmp(a));
                let mut work = 0.0;
                ascending
                    .iter()
                    .zip(outputs)
                    .map(|(t, o)| {
                        work += t.d;
                        ((work / rate).max(t.d * speeds[0]), o)
                    })
                    .collect()
            })
            .collect();
        let alone = (0..=tasks.len())
            .map(|i| {
                let rest = &tasks[i..];
                let differ = rest.windows(2).any(|w| w[0].o != w[1].o);
                differ.then(|| rest.iter().map(|t| (t.d * speeds[0], t.o)).collect())
            })
            .collect();
        let mut e = Exact {
            speeds,
            link,
            suffix_work,
            least_transfer,
            early,
            alone,
            placed: Vec::with_capacity(tasks.len()),
            lists: vec![Vec::with_capacity(tasks.len()); speeds.len()],
            loads: vec![0.0; speeds.len()],
            arrivals: Vec::with_capacity(tasks.len()),
            best: upper,
            nodes: 0,
            tasks,
        };
        e.dfs(0);
        Eval {
            time: e.best,
            optimal: e.nodes <= NODE_BUDGET,
        }
    }

    fn dfs(&mut self, i: usize) {
        self.nodes += 1;
        if self.nodes > NODE_BUDGET {
            return;
        }
        let value = self.bound(i);
        if i == self.tasks.len() {
            // With every task placed the bound is the schedule's objective.
            if value < self.best {
                self.best = value;
            }
            return;
        }
        if value >= self.best {
            return;
        }
        let task = self.tasks[i];
        for j in 0..self.speeds.len() {
            let (load, speed) = (self.loads[j], self.speeds[j]);
            // Containers with the same speed and the same future are interchangeable: without
            // a link that is the same load, with one the same tasks.
            let twin = (0..j).any(|k| {
                self.speeds[k] == speed
                    && match self.link {
                        None => self.loads[k] == load,
                        Some(_) => self.lists[k] == self.lists[j],
                    }
            });
            if twin {
                continue;
            }
            let finish = load + task.d * speed;
            if finish >= self.best {
                continue;
            }
            self.loads[j] = finish;
            self.lists[j].push(task);
            self.dfs(i + 1);
            self.lists[j].pop();
            self.loads[j] = load;
        }
    }

    /// A lower bound on every completion of the partial schedule (tasks `..i` placed), and
    /// its objective when every task is placed. Tasks yet to be placed run before the placed
    /// ones on their container, so placed tasks only finish later than they do now. Each task
    /// yet to be placed finishes no earlier than alone on the fastest container; and the j-th
    /// of them to finish does so no earlier than the capacity of all the containers allows the
    /// j shortest of them to, nor than the j-th shortest alone on the fastest container, so,
    /// whichever tasks those are, the link drains no earlier than with the largest outputs at
    /// the earliest of those times (a larger output arriving earlier never delays the drain).
    /// And the last finish is no earlier than the containers' capacity allows, its output
    /// still to cross the link.
    fn bound(&mut self, i: usize) -> f64 {
        self.placed.clear();
        for (list, &speed) in self.lists.iter().zip(self.speeds) {
            let mut t = 0.0;
            for task in list.iter().rev() {
                t += task.d * speed;
                self.placed.push((t, task.o));
            }
        }
        self.arrivals.clone_from(&self.placed);
        self.arrivals.extend_from_slice(&self.early[i]);
        let mut bound = drain(&mut self.arrivals, self.link);
        if i == self.tasks.len() {
            return bound;
        }
        if let (Some(alone), Some(_)) = (&self.alone[i], self.link) {
            self.arrivals.clone_from(&self.placed);
            self.arrivals.extend_from_slice(alone);
            bound = bound.max(drain(&mut self.arrivals, self.link));
        }
        let by_capacity = capacity_bound(&self.loads, self.speeds, self.suffix_work[i]);
        bound.max(by_capacity + self.least_transfer)
    }
}
