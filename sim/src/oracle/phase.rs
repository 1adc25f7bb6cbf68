//! One phase's schedule on containers of given speeds: one wave when every task has a
//! fastest container, else the exact search (`exact.rs`) on small instances, else LPT and, for
//! maps behind the shuffle link, SPT; and the link itself ([`drain`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::exact::Exact;
use super::{EXACT_MAX_CONTAINERS, EXACT_MAX_TASKS, Eval, Task};

/// The best schedule the oracle finds for `tasks` (in `by_duration` order) on containers with
/// `speeds` (fastest first): with a link, the time the last output has crossed it; without,
/// the makespan.
pub(super) fn phase(tasks: &[Task], speeds: &[f64], link: Option<f64>) -> Eval {
    if tasks.is_empty() {
        return Eval {
            time: 0.0,
            optimal: true,
        };
    }
    let run = run_order(tasks);
    let fastest = speeds.iter().take_while(|s| **s == speeds[0]).count();
    if run.len() <= fastest {
        // One wave on the fastest containers: every task finishes as early as it possibly can,
        // and the objective only grows with finish times.
        let mut arrivals: Vec<(f64, u64)> = run.iter().map(|t| (t.d * speeds[0], t.o)).collect();
        return Eval {
            time: drain(&mut arrivals, link),
            optimal: true,
        };
    }
    // No schedule needs more containers than tasks, and the fastest ones do at least as well.
    let speeds = &speeds[..speeds.len().min(run.len())];
    let (mut best, makespan) = lpt(&run, speeds, link);
    if let Some(bandwidth) = link {
        // SPT gets outputs onto the link early, which only pays when the link queues: when
        // LPT's shuffle ends later than its last map plus one transfer.
        let longest_transfer = run
            .iter()
            .map(|t| transfer(t.o, bandwidth))
            .fold(0.0, f64::max);
        if best > makespan + longest_transfer {
            best = best.min(spt(&run, speeds, link));
        }
    }
    if run.len() <= EXACT_MAX_TASKS && speeds.len() <= EXACT_MAX_CONTAINERS {
        return Exact::search(&run, speeds, link, best);
    }
    Eval {
        time: best,
        optimal: false,
    }
}

/// The order maps run in on a container: shortest first, ties larger output first (its bytes
/// then reach the link sooner). From `by_duration` order: each run of equal durations reversed.
fn run_order(tasks: &[Task]) -> Vec<Task> {
    let mut run = tasks.to_vec();
    for group in run.chunk_by_mut(|a, b| a.d == b.d) {
        group.reverse();
    }
    run
}

/// LPT: longest first (ties smaller output first), each to the container where it would
/// finish earliest; each container then runs its tasks shortest first. The objective and the
/// makespan.
fn lpt(run: &[Task], speeds: &[f64], link: Option<f64>) -> (f64, f64) {
    let mut pool = Pool::new(speeds);
    let placed: Vec<(u32, f64, u64)> = run
        .iter()
        .rev()
        .map(|t| {
            let (id, before, _) = pool.place(t.d);
            (id, before, t.o)
        })
        .collect();
    // Run shortest first, a task finishes when everything placed after it (all no longer) and
    // itself are done: the container's final load less what was placed before it.
    let mut arrivals: Vec<(f64, u64)> = placed
        .iter()
        .map(|&(id, before, o)| (pool.loads[id as usize] - before, o))
        .collect();
    let makespan = pool.loads.iter().copied().fold(0.0, f64::max);
    (drain(&mut arrivals, link), makespan)
}

/// SPT list scheduling: shortest first, each to the container where it finishes earliest.
fn spt(run: &[Task], speeds: &[f64], link: Option<f64>) -> f64 {
    let mut pool = Pool::new(speeds);
    let mut arrivals: Vec<(f64, u64)> = run.iter().map(|t| (pool.place(t.d).2, t.o)).collect();
    drain(&mut arrivals, link)
}

/// Containers for list scheduling, grouped by speed.
struct Pool {
    classes: Vec<Class>,
    /// Each opened container's load.
    loads: Vec<f64>,
}

/// Containers of one speed: how many are still empty, and the open ones by load (the bits of
/// a non-negative f64 order as the f64 does).
struct Class {
    speed: f64,
    unused: usize,
    open: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Pool {
    fn new(speeds: &[f64]) -> Pool {
        let mut classes: Vec<Class> = Vec::new();
        for &s in speeds {
            match classes.last_mut() {
                Some(c) if c.speed == s => c.unused += 1,
                _ => classes.push(Class {
                    speed: s,
                    unused: 1,
                    open: BinaryHeap::new(),
                }),
            }
        }
        Pool {
            classes,
            loads: Vec::new(),
        }
    }

    /// Places a task of `d` seconds (at speed 1) where it finishes earliest (ties: the faster
    /// container): its container, the container's load before and after it.
    fn place(&mut self, d: f64) -> (u32, f64, f64) {
        let mut pick: Option<(usize, f64)> = None;
        for (i, c) in self.classes.iter().enumerate() {
            let load = if c.unused > 0 {
                0.0
            } else if let Some(Reverse((bits, _))) = c.open.peek() {
                f64::from_bits(*bits)
            } else {
                continue;
            };
            let finish = load + d * c.speed;
            if pick.is_none_or(|(_, f)| finish < f) {
                pick = Some((i, finish));
            }
        }
        let (i, finish) = pick.expect("at least one container");
        let class = &mut self.classes[i];
        let id = if class.unused > 0 {
            class.unused -= 1;
            self.loads.push(0.0);
            (self.loads.len() - 1) as u32
        } else {
            class.open.pop().expect("an open container").0.1
        };
        let before = self.loads[id as usize];
        self.loads[id as usize] = finish;
        class.open.push(Reverse((finish.to_bits(), id)));
        (id, before, finish)
    }
}

/// When the last of these (finish, output bytes) arrivals has crossed the FIFO link; without
/// a link, the last finish.
pub(super) fn drain(arrivals: &mut [(f64, u64)], link: Option<f64>) -> f64 {
    let Some(bandwidth) = link else {
        return arrivals.iter().fold(0.0, |m, a| f64::max(m, a.0));
    };
    // Finish times are non-negative, so their bits order as they do.
    let key = |a: &(f64, u64)| (a.0.to_bits(), Reverse(a.1));
    if !arrivals.is_sorted_by_key(key) {
        arrivals.sort_unstable_by_key(key);
    }
    arrivals.iter().fold(0.0, |free, &(finish, bytes)| {
        free.max(finish) + transfer(bytes, bandwidth)
    })
}

pub(super) fn transfer(bytes: u64, bandwidth: f64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        bytes as f64 / bandwidth
    }
}
