//! The virtual clock's event queue: what can happen to a run ([`Ev`]) in (time in µs, order
//! pushed) order, the guard and the deadline last in their microsecond.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use yard_appmaster::policy::{AttemptId, Seconds};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ev {
    Tick,
    MapEnd(AttemptId, bool),
    ReduceEnd(AttemptId, bool),
    Shuffled(u64),
    /// The deadline guard (`Event::Guard`) and the deadline itself (`Event::Deadline`).
    Guard,
    Deadline,
    /// A reduce the guard cut answers, having folded in this many bytes.
    ReduceCut(AttemptId, u64),
    /// The time the policy asked for (`Decision::WakeAt`), as its `f64` bits.
    Wake(u64),
}

/// The event queue, in (time in µs, sequence number) order — the order one heap of every
/// event would pop them in — kept as three queues so the heap holds task ends only: a job's
/// shuffle link is a FIFO, so its `Shuffled` events come in time order and wait in a plain
/// queue, and there is at most one tick pending. An event that would break a queue's order
/// goes to the heap instead, so the order never depends on that reasoning.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) seq: u64,
    pub(super) heap: BinaryHeap<Reverse<(u128, Ev)>>,
    pub(super) fifo: VecDeque<(u128, Ev)>,
    pub(super) tick: Option<u128>,
}

impl Queue {
    /// Schedules `ev` at `t` seconds, rounded up to the microsecond: the engine is never
    /// faster than the oracle's sums.
    pub(super) fn push(&mut self, t: Seconds, ev: Ev) {
        self.seq += 1;
        let key = u128::from(event_us(t)) << 64 | u128::from(self.seq);
        match ev {
            Ev::Tick if self.tick.is_none() => self.tick = Some(key),
            Ev::Shuffled(_) if self.fifo.back().is_none_or(|&(k, _)| k < key) => {
                self.fifo.push_back((key, ev));
            }
            _ => self.heap.push(Reverse((key, ev))),
        }
    }

    /// Schedules `ev` at `t` seconds rounded *down* to the microsecond, after every other event
    /// of that microsecond (`rank` orders such events among themselves): the guard and the
    /// deadline, which must not come after the instant they stand for.
    pub(super) fn push_last(&mut self, t: Seconds, rank: u64, ev: Ev) {
        let us = (t.max(0.0) * 1e6).floor() as u64;
        let key = u128::from(us) << 64 | u128::from(u64::MAX - 8 + rank.min(8));
        self.heap.push(Reverse((key, ev)));
    }

    /// The time of the next event in µs, if any.
    pub(super) fn peek(&self) -> Option<u64> {
        let heap = self.heap.peek().map_or(u128::MAX, |Reverse((k, _))| *k);
        let fifo = self.fifo.front().map_or(u128::MAX, |(k, _)| *k);
        let key = heap.min(fifo).min(self.tick.unwrap_or(u128::MAX));
        (key != u128::MAX).then_some((key >> 64) as u64)
    }

    /// The next event and its time in µs.
    pub(super) fn pop(&mut self) -> Option<(u64, Ev)> {
        let heap = self.heap.peek().map_or(u128::MAX, |Reverse((k, _))| *k);
        let fifo = self.fifo.front().map_or(u128::MAX, |(k, _)| *k);
        let tick = self.tick.unwrap_or(u128::MAX);
        let (key, ev) = if tick < heap && tick < fifo {
            (self.tick.take()?, Ev::Tick)
        } else if fifo < heap {
            self.fifo.pop_front()?
        } else {
            self.heap.pop()?.0
        };
        Some(((key >> 64) as u64, ev))
    }
}

/// The µs an event due at `t` seconds is queued at: rounded up, so the engine is never faster
/// than the oracle's sums.
pub(super) fn event_us(t: Seconds) -> u64 {
    (t * 1e6).ceil() as u64
}
