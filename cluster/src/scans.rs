//! Shared scans: CIRCUMFLEX (seed 004: Wolf, Balmin, Rajan, Hildrum, Khandekar, Parekh, Wu,
//! Vernica, "CIRCUMFLEX: A Scheduling Optimizer for MapReduce Workloads Involving Shared
//! Scans"; digest `papers/circumflex.md`), with FLEX (no sharing) and BATCH (fixed windows) as
//! its baselines.
//!
//! Sans-IO and deterministic: no clock, no IO, no global state, no randomness (a caller that
//! wants any draws it from its own seeded RNG). Events in — a job arrives ([`Planner::arrive`]),
//! time passes ([`Planner::advance`]), slots are freed ([`Planner::slots_freed`]) — and
//! decisions out: which dataset's scan (which subjob, riding which jobs) gets how many map
//! slots ([`Planner::allocations`]).
//!
//! The pieces, each as the paper has them and each testable alone:
//! - **Cyclic piggybacking** (§2.2, §3.1): one scan per dataset, each block read once per
//!   cycle for every job attached to it; a job joining mid-cycle finishes with the blocks it
//!   missed after the wrap-around. Block by block: [`CyclicScan`]; as a fluid (the remaining
//!   fraction of the dataset per job): [`Planner`]. A dataset's jobs, oldest first, need nested
//!   block sets `U_1 ⊆ U_2 ⊆ … ⊆ U_K`; subjob `(d,k) = U_k \ U_{k−1}` ([`decompose`]) is relevant
//!   to `K − k + 1` jobs and completes when job `k` does; chain precedence
//!   `(d,1) ≺ (d,2) ≺ … ≺ (d,K)`.
//! - **Generalized Smith's rule** (§3.2, App. B.1) for the minisum metrics (average response
//!   time, weighted, stretch): [`generalized_smith`], with the digest's correction (`K_d^0`
//!   advances).
//! - **Backwards dynamic program** (§3.2, App. B.2) for minimax metrics: [`backwards_dp`], with
//!   the digest's correction (the last job is chosen among those with no *successor*).
//! - **Ready-list malleable packing** (§3.3, App. B.3) of the priority order onto `S` slots with
//!   a minimum and a maximum per (sub)job: [`pack`].
//! - **Epochs** (App. A.4): the schedule is recomputed on every arrival and followed exactly
//!   until the next, as the paper's simulations do (§4).
//! - **Deadlines** (yard's, issue 20 item 5; not the paper's): a job may carry a Dart deadline
//!   (seed 001): not done by then, it answers from the fraction of its dataset scanned for it
//!   and leaves ([`Outcome`]). [`Policy::CircumflexEdf`] puts the earliest deadlines' chains
//!   first where that costs no planned deadline ([`deadline_first`]): across datasets, since
//!   within one dataset's cyclic scan every read already serves every job that needs a block
//!   nobody is reading (the `every_block_is_read_once_per_cycle` property), so no block order
//!   serves any job sooner there.
//!
//! The model's units: a dataset's one full scan costs `scan_s` slot-seconds when the scan is
//! all of the map work; a job's map work is a fraction `f` of scan (shared) and `1 − f` of
//! per-job computation (not shared), so a subjob of `x` of the dataset relevant to `c` jobs
//! costs `x · scan_s · (f + (1 − f)·c)` slot-seconds ([INF], digest §2.2: the paper gives no
//! formula).

use std::collections::BTreeMap;

use serde::Serialize;

mod planner;
pub use planner::{Allocation, Planner, PlannerConfig, ScanStats};

/// Fractions of a dataset below this are done (floating-point dust).
const EPS: f64 = 1e-9;

/// The scheduling metric a planner optimises (App. A.2; §4 reports the first three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Minisum: (weighted) average response time; generalized Smith's rule.
    AvgResponse,
    /// Minisum: average stretch, response time over the job's time alone (weights `1/W_j`).
    AvgStretch,
    /// Minimax: the largest stretch; backwards dynamic program.
    MaxStretch,
    /// Minimax: the largest (weighted) response time; backwards dynamic program.
    MaxResponse,
}

impl Metric {
    /// §4's three metrics.
    pub const PAPER: [Metric; 3] = [Metric::AvgResponse, Metric::AvgStretch, Metric::MaxStretch];

    pub fn name(self) -> &'static str {
        match self {
            Metric::AvgResponse => "avg-response",
            Metric::AvgStretch => "avg-stretch",
            Metric::MaxStretch => "max-stretch",
            Metric::MaxResponse => "max-response",
        }
    }

    pub fn parse(s: &str) -> Result<Metric, String> {
        [
            Metric::AvgResponse,
            Metric::AvgStretch,
            Metric::MaxStretch,
            Metric::MaxResponse,
        ]
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| {
            format!("unknown metric {s:?}: avg-response, avg-stretch, max-stretch, max-response")
        })
    }

    /// Minimax (backwards DP) rather than minisum (generalized Smith).
    pub fn is_minimax(self) -> bool {
        matches!(self, Metric::MaxStretch | Metric::MaxResponse)
    }
}

/// How jobs over the same dataset are scanned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "policy")]
pub enum Policy {
    /// Cyclic piggybacking plus the generalized FLEX allocation (the paper's scheme).
    Circumflex,
    /// CIRCUMFLEX whose priority order then puts deadline jobs first where that costs no other
    /// job its planned deadline ([`deadline_first`], on every re-plan). Without deadlines it
    /// is CIRCUMFLEX.
    CircumflexEdf,
    /// FLEX (§4's baseline): no sharing, every job scans its dataset itself; the same priority
    /// rules on jobs (chains of one) and the same packing.
    Flex,
    /// BATCH (§4): a job waits for the end of its dataset's window of `window_s` seconds
    /// (dataset `d` of `D`'s windows start at `d·W/D`, "offset evenly"); each window's jobs
    /// share one scan, and FLEX schedules the batches.
    Batch { window_s: f64 },
}

impl Policy {
    /// The paper's window: 2 minutes (§4).
    pub const BATCH_WINDOW_S: f64 = 120.0;

    pub fn name(self) -> &'static str {
        match self {
            Policy::Circumflex => "circumflex",
            Policy::CircumflexEdf => "circumflex-edf",
            Policy::Flex => "flex",
            Policy::Batch { .. } => "batch",
        }
    }
}

/// A dataset: what one full scan of it costs and reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dataset {
    /// Slot-seconds of one full scan by one job alone.
    pub scan_s: f64,
    /// Bytes one full scan reads.
    pub bytes: f64,
}

/// A map job scanning one dataset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScanJob {
    pub id: u64,
    pub dataset: usize,
    pub arrival_s: f64,
    /// `m_j`: the slots FAIR/FLEX guarantee it (App. A.1).
    pub min_slots: u32,
    /// `M_j`: the most slots it may hold.
    pub max_slots: u32,
    /// The metric's weight `w_j` (1: unweighted).
    pub weight: f64,
    /// A Dart deadline, absolute seconds: not done by then, the job answers from what has been
    /// scanned for it and leaves. `None`: it runs to the end.
    pub deadline_s: Option<f64>,
}

/// A job's map phase done, or cut short by its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Completion {
    pub job: u64,
    pub dataset: usize,
    pub arrival_s: f64,
    /// When it answered: at the end of its scan, or at its deadline.
    pub finish_s: f64,
    /// The fraction of its dataset scanned for it when it answered (Dart's processed fraction):
    /// 1 unless its deadline cut it short.
    pub processed: f64,
    pub deadline_s: Option<f64>,
}

/// How a deadline job answered, in Dart's terms (seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Its whole dataset scanned by its deadline.
    Full,
    /// At its deadline from the fraction `0 < f < 1` scanned so far: met, approximately.
    Partial,
    /// At its deadline with nothing scanned: no answer, not met.
    Empty,
}

impl Completion {
    fn of(job: &ScanJob, finish_s: f64, processed: f64) -> Completion {
        Completion {
            job: job.id,
            dataset: job.dataset,
            arrival_s: job.arrival_s,
            finish_s,
            processed: processed.clamp(0.0, 1.0),
            deadline_s: job.deadline_s,
        }
    }

    pub fn response_s(&self) -> f64 {
        self.finish_s - self.arrival_s
    }

    /// How it answered against its deadline; `None` without one.
    pub fn outcome(&self) -> Option<Outcome> {
        self.deadline_s?;
        Some(match self.processed {
            p if p >= 1.0 - EPS => Outcome::Full,
            p if p > EPS => Outcome::Partial,
            _ => Outcome::Empty,
        })
    }
}

/// `W_j`, the job's minimum response time alone (App. A.2, the stretch denominator): its scan
/// on `min(M_j, S)` slots.
pub fn isolated_s(job: &ScanJob, dataset: &Dataset, slots: u32) -> f64 {
    dataset.scan_s / f64::from(job.max_slots.min(slots).max(1))
}

// ---------------------------------------------------------------------------------------------
// Cyclic piggybacking, block by block (§2.2, App. C).

/// One dataset's circular scan, block by block: the live form of cyclic piggybacking. Each
/// attached job holds a bit per block ("scanned for me", §2.2); one read of a block serves every
/// job attached when the read starts ("the bus leaves the station", App. C); a job finishes when
/// all its bits are set. The cursor walks the blocks cyclically, so a job that joins mid-cycle
/// gets the rest of this cycle and then, after the wrap-around, the blocks it missed.
#[derive(Debug, Clone)]
pub struct CyclicScan {
    blocks: usize,
    cursor: usize,
    /// Attached jobs, oldest first, with their bits.
    jobs: Vec<(u64, Vec<bool>)>,
    /// Blocks being read, with the jobs riding each read.
    in_flight: BTreeMap<usize, Vec<u64>>,
}

impl CyclicScan {
    pub fn new(blocks: usize) -> CyclicScan {
        CyclicScan {
            blocks,
            cursor: 0,
            jobs: Vec::new(),
            in_flight: BTreeMap::new(),
        }
    }

    /// A job attaches: it needs every block, and can start at once (no batching latency).
    pub fn attach(&mut self, job: u64) {
        self.jobs.push((job, vec![false; self.blocks]));
    }

    /// The attached jobs, oldest first.
    pub fn jobs(&self) -> impl Iterator<Item = u64> + '_ {
        self.jobs.iter().map(|(j, _)| *j)
    }

    /// `|U_k|`: the blocks each attached job (oldest first) still needs, counting a block in
    /// flight for it as still needed.
    pub fn remaining(&self) -> Vec<usize> {
        self.jobs
            .iter()
            .map(|(_, bits)| bits.iter().filter(|b| !**b).count())
            .collect()
    }

    /// `U_k` as block indices, oldest job first.
    pub fn needed(&self) -> Vec<Vec<usize>> {
        self.jobs
            .iter()
            .map(|(_, bits)| (0..self.blocks).filter(|&b| !bits[b]).collect())
            .collect()
    }

    /// A slot is free: the next block to read, from the cursor on, that some attached job still
    /// needs and nobody is reading, with the jobs it will serve. `None` when there is none.
    pub fn next_block(&mut self) -> Option<(usize, Vec<u64>)> {
        for step in 0..self.blocks {
            let b = (self.cursor + step) % self.blocks;
            if self.in_flight.contains_key(&b) {
                continue;
            }
            let riders: Vec<u64> = self
                .jobs
                .iter()
                .filter(|(_, bits)| !bits[b])
                .map(|(j, _)| *j)
                .collect();
            if riders.is_empty() {
                continue;
            }
            self.cursor = (b + 1) % self.blocks;
            self.in_flight.insert(b, riders.clone());
            return Some((b, riders));
        }
        None
    }

    /// Blocks some attached job still needs that nobody is reading: the reads a free slot
    /// could start now.
    pub fn waiting(&self) -> usize {
        (0..self.blocks)
            .filter(|b| !self.in_flight.contains_key(b))
            .filter(|&b| self.jobs.iter().any(|(_, bits)| !bits[b]))
            .count()
    }

    /// Block `block`'s read failed (its task or container was lost): it counts for nobody, and
    /// the cursor finds it again on its next round.
    pub fn abandon(&mut self, block: usize) {
        self.in_flight.remove(&block);
    }

    /// Job `job` leaves before it has every block (it failed or was killed); reads in flight
    /// go on for the others.
    pub fn detach(&mut self, job: u64) {
        self.jobs.retain(|(j, _)| *j != job);
        for riders in self.in_flight.values_mut() {
            riders.retain(|j| *j != job);
        }
    }

    /// Block `block`'s read finished: it counts for every job that rode it. Returns the jobs now
    /// done (detached), oldest first.
    pub fn block_done(&mut self, block: usize) -> Vec<u64> {
        let riders = self.in_flight.remove(&block).unwrap_or_default();
        for (j, bits) in &mut self.jobs {
            if riders.contains(j) {
                bits[block] = true;
            }
        }
        let (done, left): (Vec<_>, Vec<_>) = std::mem::take(&mut self.jobs)
            .into_iter()
            .partition(|(_, bits)| bits.iter().all(|b| *b));
        self.jobs = left;
        done.into_iter().map(|(j, _)| j).collect()
    }
}

/// Subjob sizes from the blocks each job still needs, oldest job first (§3.1): subjob `k` is
/// `|U_k| − |U_{k−1}|` blocks, relevant to the `K − k + 1` jobs from the `k`-th on. The
/// counts must be nested (non-decreasing); a job needing fewer than the one before is an error.
pub fn decompose(remaining: &[f64]) -> Result<Vec<f64>, String> {
    let mut prev = 0.0;
    let mut out = Vec::with_capacity(remaining.len());
    for (k, &r) in remaining.iter().enumerate() {
        if r + EPS < prev {
            return Err(format!(
                "job {} needs {r} blocks, fewer than the older job before it ({prev}): not nested",
                k + 1
            ));
        }
        out.push((r - prev).max(0.0));
        prev = r.max(prev);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Step 1: a priority order (§3.2).

/// Generalized Smith's rule (App. B.1) over chains of `(p, w)`: repeatedly take, over every
/// chain, the prefix of its remaining subjobs with the smallest ratio `Σp / Σw`, and schedule
/// that prefix. Optimal for `1|chains|Σ w_j C_j` (Sidney). Returns `(chain, index)` in
/// schedule order. [ERR, digest §2.3] the printed code never advances `K_d^0`; here it does.
/// Ties: the lowest chain index, and within a chain the longest prefix (digest [AMB]).
pub(crate) fn generalized_smith(chains: &[Vec<(f64, f64)>]) -> Vec<(usize, usize)> {
    // The best prefix of chain `d` from `start`: (ratio, end exclusive).
    let best = |d: usize, start: usize| -> Option<(f64, usize)> {
        let (mut p, mut w) = (0.0, 0.0);
        let mut found: Option<(f64, usize)> = None;
        for (i, &(pi, wi)) in chains[d].iter().enumerate().skip(start) {
            p += pi;
            w += wi;
            let r = if w > 0.0 { p / w } else { f64::INFINITY };
            if found.is_none_or(|(b, _)| r <= b) {
                found = Some((r, i + 1));
            }
        }
        found
    };
    let mut start = vec![0usize; chains.len()];
    let mut cache: Vec<Option<(f64, usize)>> = (0..chains.len()).map(|d| best(d, 0)).collect();
    let total: usize = chains.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    while out.len() < total {
        let mut pick: Option<(usize, f64, usize)> = None;
        for (d, c) in cache.iter().enumerate() {
            if let Some((r, end)) = *c
                && pick.is_none_or(|(_, b, _)| r < b)
            {
                pick = Some((d, r, end));
            }
        }
        let Some((d, _, end)) = pick else { break };
        out.extend((start[d]..end).map(|i| (d, i)));
        start[d] = end;
        cache[d] = best(d, end);
    }
    out
}

/// The backwards dynamic program (Lawler's rule for `1|prec|f_max`, App. B.2) over jobs with
/// processing times `p` and predecessors `preds`: the job scheduled last among those left is,
/// of the jobs with no successor left, the one with the smallest cost `cost(j, P)` at
/// `P = Σ p` of those left. Optimal for any non-decreasing costs. Returns the order, first job
/// first. [ERR, digest §2.4] the printed code takes jobs with no *predecessor*, which breaks
/// precedence (worked example E3b).
pub(crate) fn backwards_dp(
    p: &[f64],
    preds: &[Vec<usize>],
    cost: impl Fn(usize, f64) -> f64,
) -> Vec<usize> {
    let n = p.len();
    let mut left = vec![true; n];
    // Successors still left, per job.
    let mut succ_left = vec![0usize; n];
    for ps in preds {
        for &q in ps {
            succ_left[q] += 1;
        }
    }
    let mut total: f64 = p.iter().sum();
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let mut pick: Option<(usize, f64)> = None;
        for j in (0..n).filter(|&j| left[j] && succ_left[j] == 0) {
            let c = cost(j, total);
            if pick.is_none_or(|(_, b)| c < b) {
                pick = Some((j, c));
            }
        }
        let Some((j, _)) = pick else { break }; // a cycle: not a precedence order
        left[j] = false;
        total -= p[j];
        for &q in &preds[j] {
            succ_left[q] -= 1;
        }
        order.push(j);
    }
    order.reverse();
    order
}

// ---------------------------------------------------------------------------------------------
// Step 2: ready-list malleable packing (§3.3, App. B.3).

/// A (sub)job to pack: its work in slot-seconds, its slot bounds and its predecessors.
#[derive(Debug, Clone, PartialEq)]
pub struct PackJob {
    pub work: f64,
    pub min: u32,
    pub max: u32,
    pub preds: Vec<usize>,
}

/// One interval of a malleable schedule: `[start, end)`, the slots each job holds, and the job
/// that finishes at `end`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    pub start: f64,
    pub end: f64,
    pub alloc: Vec<(usize, u32)>,
    pub finishes: usize,
}

/// The minima of the ready jobs (in priority order) fitted into `slots` when they sum to more
/// ([AMB, digest §2.5] the paper does not say how): each scaled by `slots / Σm`, rounded down,
/// and the slots left given back one by one in priority order.
pub(crate) fn normalise_minima(mins: &[u32], slots: u32) -> Vec<u32> {
    let sum: u64 = mins.iter().map(|&m| u64::from(m)).sum();
    if sum <= u64::from(slots) {
        return mins.to_vec();
    }
    let mut out: Vec<u32> = mins
        .iter()
        .map(|&m| (u64::from(m) * u64::from(slots) / sum) as u32)
        .collect();
    let mut left = slots - out.iter().sum::<u32>();
    for (o, &m) in out.iter_mut().zip(mins) {
        if left == 0 {
            break;
        }
        if *o < m {
            *o += 1;
            left -= 1;
        }
    }
    out
}

/// Ready-list malleable packing (App. B.3) of `jobs` in `priority` order (a topological
/// order) onto `slots` slots. Each interval: every ready job (all predecessors done) gets its
/// minimum (normalised when they exceed `slots`), the slack goes in priority order up to each
/// job's maximum — some slots stay idle when every ready job is at its maximum — and the
/// interval ends when the first job finishes (ties to the higher priority); its successors
/// become ready. [AMB/ERR, digest §2.5] only *ready* jobs hold slots, and the slack loop ends
/// when the ready jobs run out.
pub fn pack(slots: u32, jobs: &[PackJob], priority: &[usize]) -> Vec<Interval> {
    let n = jobs.len();
    let mut rank = vec![usize::MAX; n];
    for (r, &j) in priority.iter().enumerate() {
        rank[j] = r;
    }
    let mut rem: Vec<f64> = jobs.iter().map(|j| j.work.max(0.0)).collect();
    let mut preds_left: Vec<usize> = jobs.iter().map(|j| j.preds.len()).collect();
    let mut succs = vec![Vec::new(); n];
    for (j, job) in jobs.iter().enumerate() {
        for &q in &job.preds {
            succs[q].push(j);
        }
    }
    let mut ready: Vec<usize> = priority
        .iter()
        .copied()
        .filter(|&j| preds_left[j] == 0)
        .collect();
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    while !ready.is_empty() {
        let mins: Vec<u32> = ready.iter().map(|&j| jobs[j].min).collect();
        let mut alloc = normalise_minima(&mins, slots);
        let mut slack = slots - alloc.iter().sum::<u32>();
        for (a, &j) in alloc.iter_mut().zip(&ready) {
            if slack == 0 {
                break;
            }
            let add = slack.min(jobs[j].max.max(jobs[j].min).saturating_sub(*a));
            *a += add;
            slack -= add;
        }
        // The first to finish; a job with no work left finishes at once.
        let mut first: Option<(usize, f64)> = None;
        for (i, &j) in ready.iter().enumerate() {
            let dt = match (rem[j] <= EPS, alloc[i]) {
                (true, _) => 0.0,
                (false, 0) => continue,
                (false, a) => rem[j] / f64::from(a),
            };
            if first.is_none_or(|(_, b)| dt < b) {
                first = Some((i, dt));
            }
        }
        let Some((i, dt)) = first else { break }; // no slots at all
        let done = ready[i];
        for (k, &j) in ready.iter().enumerate() {
            rem[j] -= f64::from(alloc[k]) * dt;
        }
        rem[done] = 0.0;
        out.push(Interval {
            start: t,
            end: t + dt,
            alloc: ready.iter().copied().zip(alloc).collect(),
            finishes: done,
        });
        t += dt;
        ready.remove(i);
        for &s in &succs[done] {
            preds_left[s] -= 1;
            if preds_left[s] == 0 {
                let at = ready.partition_point(|&r| rank[r] < rank[s]);
                ready.insert(at, s);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Deadlines across datasets (yard's, issue 20 item 5).

/// The deadline-first rule of [`Policy::CircumflexEdf`]: `order` (the metric's priority order
/// over chain-ordered `jobs`, one predecessor each at most) changed so that deadline jobs'
/// chains go first where that costs no deadline the schedule meets. `due[k] = (i, left)`: a
/// job completing with subjob `i` has its deadline `left` seconds from the schedule's start.
///
/// A job *meets* its deadline under an order when, in the ready-list packing of that order onto
/// `slots` ([`pack`]), its subjob finishes by then (whole, not Dart's partial answer). The
/// rule: take the due jobs by deadline, earliest first; one that the current order misses is
/// *promoted* — its subjob and the chain subjobs before it not yet promoted move to the front,
/// after those promoted before it (so promoted work runs earliest deadline first) — and the
/// promotion is kept only if the job then meets its deadline and every job that met its
/// deadline before still does. It is skipped untried when its chain up to it, each subjob alone
/// on its maximum slots, cannot end by its deadline. So the result meets every deadline
/// `order` meets, and more where the packing allows; jobs without deadlines get no such
/// guarantee (the rule may delay them: a cost it does not weigh). One packing per job tried.
pub fn deadline_first(
    slots: u32,
    jobs: &[PackJob],
    due: &[(usize, f64)],
    mut order: Vec<usize>,
) -> Vec<usize> {
    let meets = |order: &[usize]| meets_deadlines(slots, jobs, due, order);
    let mut by_deadline: Vec<usize> = (0..due.len()).collect();
    by_deadline.sort_by(|&a, &b| due[a].1.total_cmp(&due[b].1));
    let mut met = meets(&order);
    let mut front = 0;
    for k in by_deadline {
        let (i, left) = due[k];
        if met[k] {
            continue;
        }
        // Its chain up to it, first subjob first.
        let mut chain = vec![i];
        while let Some(&q) = chain.last().and_then(|&x| jobs[x].preds.first()) {
            chain.push(q);
        }
        chain.reverse();
        let alone: f64 = chain
            .iter()
            .map(|&x| jobs[x].work / f64::from(jobs[x].max.clamp(1, slots)))
            .sum();
        if !by_deadline_s(alone, left) {
            continue;
        }
        chain.retain(|x| !order[..front].contains(x));
        let mut tried = order[..front].to_vec();
        tried.extend(&chain);
        tried.extend(order[front..].iter().filter(|x| !chain.contains(x)));
        let now_met = meets(&tried);
        if now_met[k] && met.iter().zip(&now_met).all(|(was, is)| !was || *is) {
            front += chain.len();
            order = tried;
            met = now_met;
        }
    }
    order
}

/// Per `due` job ([`deadline_first`]), whether `order`'s packing finishes it by its deadline.
fn meets_deadlines(
    slots: u32,
    jobs: &[PackJob],
    due: &[(usize, f64)],
    order: &[usize],
) -> Vec<bool> {
    let mut end = vec![f64::INFINITY; jobs.len()];
    for iv in pack(slots, jobs, order) {
        end[iv.finishes] = iv.end;
    }
    due.iter()
        .map(|&(i, left)| by_deadline_s(end[i], left))
        .collect()
}

/// `t ≤ deadline` up to floating-point dust.
fn by_deadline_s(t: f64, deadline: f64) -> bool {
    t <= deadline + EPS * deadline.abs().max(1.0)
}

#[cfg(test)]
mod tests;
