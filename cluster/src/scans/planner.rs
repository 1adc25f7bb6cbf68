//! The shared-scan planner: events in (arrivals, time, freed slots), decisions out (which
//! scan gets how many map slots), re-planned each epoch by CIRCUMFLEX, FLEX or BATCH.

use serde::Serialize;

use super::{
    Completion, Dataset, EPS, Metric, PackJob, Policy, ScanJob, backwards_dp, deadline_first,
    generalized_smith, isolated_s, pack,
};

/// A running job of a scan: the fraction of its dataset it still needs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Member {
    job: ScanJob,
    rem: f64,
}

/// One physical scan: a dataset and the jobs riding it, fewest blocks left first (so oldest
/// first under cyclic piggybacking, digest §2.2). CIRCUMFLEX has one per dataset, FLEX one per
/// job, BATCH one per batch.
#[derive(Debug, Clone, PartialEq)]
struct Scan {
    id: u64,
    dataset: usize,
    members: Vec<Member>,
}

/// A subjob as the planner sees it: a scan's next `fraction` of the dataset, relevant to
/// `relevant` jobs, finishing `completes`.
#[derive(Debug, Clone, PartialEq)]
struct Subjob {
    scan: usize,
    k: usize,
    fraction: f64,
    relevant: usize,
    completes: Vec<ScanJob>,
    min: u32,
    max: u32,
}

/// A decision: give `slots` map slots to subjob `subjob` (1-based, the last arrival's
/// numbering, §2.2) of `dataset`'s scan `scan`, each block read serving `jobs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Allocation {
    pub scan: u64,
    pub dataset: usize,
    pub subjob: usize,
    pub jobs: Vec<u64>,
    pub slots: u32,
}

/// What a planner has done so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScanStats {
    /// Slot-seconds of map work done.
    pub work_s: f64,
    /// Bytes read from the datasets.
    pub bytes_read: f64,
    /// Per dataset, the most jobs one scan served at once (CIRCUMFLEX: concurrent subjobs;
    /// BATCH: jobs batched together; §4).
    pub max_sharing: Vec<usize>,
    /// Schedules computed.
    pub replans: u64,
}

/// The planner's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlannerConfig {
    /// `S`, the map slots (§4: 100).
    pub slots: u32,
    pub metric: Metric,
    pub policy: Policy,
    /// `f`, the fraction of map work that is the scan (§4: 1).
    pub scan_fraction: f64,
}

/// One interval of the followed schedule: its end, the slots per scan id, and the jobs whose
/// subjob finishes at its end.
type PlanStep = (f64, Vec<(u64, u32)>, Vec<u64>);

/// A map-slot allocation planner for jobs scanning datasets: CIRCUMFLEX, FLEX or BATCH as
/// `config.policy` says. Deterministic: the same events give the same decisions.
#[derive(Debug, Clone)]
pub struct Planner {
    config: PlannerConfig,
    datasets: Vec<Dataset>,
    scans: Vec<Scan>,
    /// BATCH: per dataset, the window end and the jobs waiting for it.
    pending: Vec<Option<(f64, Vec<ScanJob>)>>,
    /// The malleable schedule being followed, in scan ids; its first interval is now's.
    /// Per interval: its end, the slots per scan, and the jobs whose subjob finishes then.
    plan: Vec<PlanStep>,
    plan_at: usize,
    now: f64,
    next_scan: u64,
    stats: ScanStats,
}

impl Planner {
    /// A planner at time 0 for `datasets` (index = dataset id).
    pub fn new(config: PlannerConfig, datasets: Vec<Dataset>) -> Result<Planner, String> {
        if config.slots == 0 {
            return Err("a planner needs at least one map slot".into());
        }
        if !(0.0..=1.0).contains(&config.scan_fraction) {
            return Err(format!(
                "the scan fraction f is {}: it must be in [0, 1]",
                config.scan_fraction
            ));
        }
        if let Policy::Batch { window_s } = config.policy
            && !(window_s.is_finite() && window_s > 0.0)
        {
            return Err(format!(
                "BATCH's window is {window_s} s: it must be positive"
            ));
        }
        if let Some((d, _)) = datasets
            .iter()
            .enumerate()
            .find(|(_, d)| !(d.scan_s.is_finite() && d.scan_s >= 0.0 && d.bytes >= 0.0))
        {
            return Err(format!(
                "dataset {d}: its scan time and bytes must be finite and ≥ 0"
            ));
        }
        let n = datasets.len();
        Ok(Planner {
            config,
            datasets,
            scans: Vec::new(),
            pending: vec![None; n],
            plan: Vec::new(),
            plan_at: 0,
            now: 0.0,
            next_scan: 0,
            stats: ScanStats {
                max_sharing: vec![0; n],
                ..ScanStats::default()
            },
        })
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    pub fn stats(&self) -> &ScanStats {
        &self.stats
    }

    /// Jobs not finished (running or, under BATCH, waiting for their window).
    pub fn active(&self) -> usize {
        self.scans.iter().map(|s| s.members.len()).sum::<usize>()
            + self
                .pending
                .iter()
                .flatten()
                .map(|(_, j)| j.len())
                .sum::<usize>()
    }

    /// A job arrives (at `job.arrival_s`, not before now): time advances to it — returning the
    /// jobs that finished meanwhile — and the schedule is recomputed (an epoch, App. A.4).
    pub fn arrive(&mut self, job: ScanJob) -> Result<Vec<Completion>, String> {
        if job.dataset >= self.datasets.len() {
            return Err(format!(
                "job {} scans dataset {}, but there are {} datasets",
                job.id,
                job.dataset,
                self.datasets.len()
            ));
        }
        if !(job.arrival_s.is_finite()
            && job.weight.is_finite()
            && job.weight > 0.0
            && job.deadline_s.is_none_or(f64::is_finite))
        {
            return Err(format!(
                "job {}: its arrival, weight and deadline must be finite, the weight positive",
                job.id
            ));
        }
        let mut done = self.advance(job.arrival_s.max(self.now));
        if job.deadline_s.is_some_and(|d| d <= self.now) {
            // Due already: it answers at once, from nothing.
            done.push(Completion::of(&job, self.now, 0.0));
            return Ok(done);
        }
        let d = job.dataset;
        match self.config.policy {
            Policy::Circumflex | Policy::CircumflexEdf => {
                let member = Member { job, rem: 1.0 };
                match self.scans.iter_mut().find(|s| s.dataset == d) {
                    // Needs every block: the most of any job of the scan, so last (§2.2).
                    Some(scan) => scan.members.push(member),
                    None => {
                        let id = self.new_scan_id();
                        self.scans.push(Scan {
                            id,
                            dataset: d,
                            members: vec![member],
                        });
                    }
                }
                let n = self
                    .scans
                    .iter()
                    .find(|s| s.dataset == d)
                    .map_or(0, |s| s.members.len());
                self.stats.max_sharing[d] = self.stats.max_sharing[d].max(n);
                self.replan();
            }
            Policy::Flex => {
                let id = self.new_scan_id();
                self.scans.push(Scan {
                    id,
                    dataset: d,
                    members: vec![Member { job, rem: 1.0 }],
                });
                self.stats.max_sharing[d] = self.stats.max_sharing[d].max(1);
                self.replan();
            }
            Policy::Batch { window_s } => {
                // Windows of dataset d start at d·W/D + kW; a job joins the window it arrives in
                // and starts at its end (§4).
                let offset = d as f64 * window_s / self.datasets.len() as f64;
                let k = ((self.now - offset) / window_s).floor();
                let end = offset + (k + 1.0) * window_s;
                let slot = &mut self.pending[d];
                match slot {
                    Some((_, jobs)) => jobs.push(job),
                    None => *slot = Some((end, vec![job])),
                }
            }
        }
        Ok(done)
    }

    fn new_scan_id(&mut self) -> u64 {
        self.next_scan += 1;
        self.next_scan
    }

    /// When something next happens by itself: a subjob or job finishes, a BATCH window closes
    /// or a deadline comes. `None` when idle.
    pub fn next_event(&self) -> Option<f64> {
        [
            self.plan.get(self.plan_at).map(|(end, _, _)| *end),
            self.next_window(),
            self.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min_by(f64::total_cmp)
    }

    /// The earliest deadline of a job not finished.
    fn next_deadline(&self) -> Option<f64> {
        let running = self
            .scans
            .iter()
            .flat_map(|s| s.members.iter().map(|m| &m.job));
        let waiting = self.pending.iter().flatten().flat_map(|(_, jobs)| jobs);
        running
            .chain(waiting)
            .filter_map(|j| j.deadline_s)
            .min_by(f64::total_cmp)
    }

    fn next_window(&self) -> Option<f64> {
        self.pending
            .iter()
            .flatten()
            .map(|(t, _)| *t)
            .min_by(f64::total_cmp)
    }

    /// Time passes to `to`, the schedule followed exactly; returns the jobs that finished.
    pub fn advance(&mut self, to: f64) -> Vec<Completion> {
        let mut done = Vec::new();
        loop {
            let plan_end = self.plan.get(self.plan_at).map(|(end, _, _)| *end);
            let window = self.next_window();
            let deadline = self.next_deadline();
            let Some(next) = self.next_event().filter(|&t| t <= to) else {
                self.progress(to);
                break;
            };
            self.progress(next);
            if plan_end == Some(next) {
                let finishing = std::mem::take(&mut self.plan[self.plan_at].2);
                self.plan_at += 1;
                self.finish(&finishing, &mut done);
            }
            if window == Some(next) {
                self.release_batches();
                self.replan();
            }
            // After the subjob that ends now: a job finishing at its deadline is on time.
            if deadline == Some(next) && self.expire(&mut done) {
                self.replan();
            }
        }
        done
    }

    /// Progress the current interval's allocations from now to `to`.
    fn progress(&mut self, to: f64) {
        let dt = to - self.now;
        if dt > 0.0
            && let Some((_, alloc, _)) = self.plan.get(self.plan_at)
        {
            let f = self.config.scan_fraction;
            for &(id, slots) in alloc {
                let Some(scan) = self.scans.iter_mut().find(|s| s.id == id) else {
                    continue;
                };
                let Some(head) = scan.members.first().map(|m| m.rem) else {
                    continue;
                };
                let ds = self.datasets[scan.dataset];
                let c = scan.members.len() as f64;
                let per_fraction = ds.scan_s * (f + (1.0 - f) * c);
                let mut step = match per_fraction > 0.0 {
                    true => f64::from(slots) * dt / per_fraction,
                    false => head,
                };
                step = step.min(head);
                for m in &mut scan.members {
                    m.rem -= step;
                }
                self.stats.work_s += step * per_fraction;
                self.stats.bytes_read += step * ds.bytes;
            }
        }
        self.now = self.now.max(to);
    }

    /// A subjob is done: the jobs it completes (and any other at dust) finish. By job, not by
    /// scan head: two subjobs of one scan may finish at the same instant.
    fn finish(&mut self, jobs: &[u64], done: &mut Vec<Completion>) {
        let now = self.now;
        for scan in &mut self.scans {
            scan.members.retain(|m| {
                let finished = m.rem <= EPS || jobs.contains(&m.job.id);
                if finished {
                    done.push(Completion::of(&m.job, now, 1.0));
                }
                !finished
            });
        }
        self.scans.retain(|s| !s.members.is_empty());
    }

    /// Dart: the jobs whose deadline has come answer from the fraction scanned for them and
    /// leave, freeing their share. Returns whether a running job left (the schedule is stale).
    fn expire(&mut self, done: &mut Vec<Completion>) -> bool {
        let now = self.now;
        let due = |j: &ScanJob| j.deadline_s.is_some_and(|d| d <= now);
        let mut left = false;
        for scan in &mut self.scans {
            scan.members.retain(|m| {
                let go = due(&m.job);
                if go {
                    done.push(Completion::of(&m.job, now, 1.0 - m.rem));
                    left = true;
                }
                !go
            });
        }
        self.scans.retain(|s| !s.members.is_empty());
        for slot in &mut self.pending {
            if let Some((_, jobs)) = slot {
                jobs.retain(|j| {
                    if due(j) {
                        done.push(Completion::of(j, now, 0.0));
                    }
                    !due(j)
                });
                if jobs.is_empty() {
                    *slot = None;
                }
            }
        }
        left
    }

    /// BATCH: the windows closing now become scans.
    fn release_batches(&mut self) {
        let now = self.now;
        for d in 0..self.pending.len() {
            if self.pending[d].as_ref().is_some_and(|(t, _)| *t <= now) {
                let (_, jobs) = self.pending[d].take().expect("checked");
                self.stats.max_sharing[d] = self.stats.max_sharing[d].max(jobs.len());
                let id = self.new_scan_id();
                self.scans.push(Scan {
                    id,
                    dataset: d,
                    members: jobs
                        .into_iter()
                        .map(|job| Member { job, rem: 1.0 })
                        .collect(),
                });
            }
        }
    }

    /// The subjobs of every scan, chain by chain (§3.1): members grouped by the fraction they
    /// still need; a group's subjob is relevant to it and every member after it.
    fn subjobs(&self) -> Vec<Vec<Subjob>> {
        self.scans
            .iter()
            .enumerate()
            .map(|(si, scan)| {
                let mut chain: Vec<Subjob> = Vec::new();
                let mut prev = 0.0;
                let n = scan.members.len();
                let mut i = 0;
                while i < n {
                    let level = scan.members[i].rem;
                    let mut end = i + 1;
                    while end < n && scan.members[end].rem <= level + EPS {
                        end += 1;
                    }
                    let relevant = &scan.members[i..];
                    chain.push(Subjob {
                        scan: si,
                        k: chain.len() + 1,
                        fraction: (level - prev).max(0.0),
                        relevant: relevant.len(),
                        completes: scan.members[i..end].iter().map(|m| m.job).collect(),
                        // §3.1 / App. A.1: the max of the relevant jobs' minima, the min of
                        // their maxima.
                        min: relevant.iter().map(|m| m.job.min_slots).max().unwrap_or(0),
                        max: relevant.iter().map(|m| m.job.max_slots).min().unwrap_or(0),
                    });
                    prev = level;
                    i = end;
                }
                chain
            })
            .collect()
    }

    /// An epoch (App. A.4): a priority order by the metric's rule, packed onto the slots.
    fn replan(&mut self) {
        self.stats.replans += 1;
        let chains = self.subjobs();
        let s = self.config.slots;
        let f = self.config.scan_fraction;
        let flat: Vec<&Subjob> = chains.iter().flatten().collect();
        let work: Vec<f64> = flat
            .iter()
            .map(|sj| {
                let ds = self.datasets[self.scans[sj.scan].dataset];
                sj.fraction * ds.scan_s * (f + (1.0 - f) * sj.relevant as f64)
            })
            .collect();
        // Chain precedence: each subjob after the one before it in its scan.
        let mut preds = Vec::with_capacity(flat.len());
        let mut first = 0;
        for chain in &chains {
            for i in 0..chain.len() {
                preds.push(match i {
                    0 => vec![],
                    _ => vec![first + i - 1],
                });
            }
            first += chain.len();
        }
        // The interim single-machine schedule's times: work over all the slots (digest §2.3).
        let p: Vec<f64> = work.iter().map(|w| w / f64::from(s)).collect();
        let iso = |j: &ScanJob| isolated_s(j, &self.datasets[j.dataset], s).max(EPS);
        let metric = self.config.metric;
        let now = self.now;
        let priority: Vec<usize> = match metric {
            Metric::AvgResponse | Metric::AvgStretch => {
                let mut idx = 0;
                let weighted: Vec<Vec<(f64, f64)>> = chains
                    .iter()
                    .map(|chain| {
                        chain
                            .iter()
                            .map(|sj| {
                                let w: f64 = sj
                                    .completes
                                    .iter()
                                    .map(|j| match metric {
                                        Metric::AvgStretch => j.weight / iso(j),
                                        _ => j.weight,
                                    })
                                    .sum();
                                idx += 1;
                                (p[idx - 1], w)
                            })
                            .collect()
                    })
                    .collect();
                let offsets: Vec<usize> = chains
                    .iter()
                    .scan(0, |acc, c| {
                        let o = *acc;
                        *acc += c.len();
                        Some(o)
                    })
                    .collect();
                generalized_smith(&weighted)
                    .into_iter()
                    .map(|(d, i)| offsets[d] + i)
                    .collect()
            }
            Metric::MaxStretch | Metric::MaxResponse => backwards_dp(&p, &preds, |i, total| {
                let c = now + total;
                flat[i]
                    .completes
                    .iter()
                    .map(|j| match metric {
                        Metric::MaxStretch => (c - j.arrival_s) / iso(j),
                        _ => j.weight * (c - j.arrival_s),
                    })
                    .fold(f64::NEG_INFINITY, f64::max)
            }),
        };
        let jobs: Vec<PackJob> = flat
            .iter()
            .zip(&work)
            .zip(preds)
            .map(|((sj, &work), preds)| PackJob {
                work,
                min: sj.min,
                max: sj.max.max(1),
                preds,
            })
            .collect();
        let priority = match self.config.policy {
            Policy::CircumflexEdf => {
                let due: Vec<(usize, f64)> = flat
                    .iter()
                    .enumerate()
                    .flat_map(|(i, sj)| {
                        sj.completes
                            .iter()
                            .filter_map(move |j| Some((i, j.deadline_s? - now)))
                    })
                    .collect();
                deadline_first(s, &jobs, &due, priority)
            }
            _ => priority,
        };
        let intervals = pack(s, &jobs, &priority);
        let id = |i: usize| self.scans[flat[i].scan].id;
        self.plan = intervals
            .iter()
            .map(|iv| {
                let alloc = iv
                    .alloc
                    .iter()
                    .filter(|(_, a)| *a > 0)
                    .map(|&(i, a)| (id(i), a))
                    .collect();
                let finishing = flat[iv.finishes].completes.iter().map(|j| j.id).collect();
                (now + iv.end, alloc, finishing)
            })
            .collect();
        self.plan_at = 0;
    }

    /// The decisions now: which dataset's scan, which subjob, riding which jobs, gets how many
    /// map slots (the first interval of the schedule, App. A.4).
    pub fn allocations(&self) -> Vec<Allocation> {
        let Some((_, alloc, _)) = self.plan.get(self.plan_at) else {
            return Vec::new();
        };
        alloc
            .iter()
            .filter_map(|&(id, slots)| {
                let scan = self.scans.iter().find(|s| s.id == id)?;
                // The head subjob in the last arrival's numbering is (d, 1) (§2.2).
                Some(Allocation {
                    scan: id,
                    dataset: scan.dataset,
                    subjob: 1,
                    jobs: scan.members.iter().map(|m| m.job.id).collect(),
                    slots,
                })
            })
            .collect()
    }

    /// The assignment layer (App. A.1): `free` slots were freed while `running[i]` slots work
    /// for `allocations()[i]`; give each freed slot to the most relatively under-allocated
    /// allocation (running / target smallest, ties to the earlier). Returns, per freed slot,
    /// an index into `allocations()`; fewer than `free` when every target is met.
    pub fn slots_freed(&self, running: &[u32], free: u32) -> Vec<usize> {
        let targets = self.allocations();
        let mut run: Vec<u32> = (0..targets.len())
            .map(|i| running.get(i).copied().unwrap_or(0))
            .collect();
        let mut out = Vec::new();
        for _ in 0..free {
            let pick = (0..targets.len())
                .filter(|&i| run[i] < targets[i].slots)
                .min_by(|&a, &b| {
                    let ra = f64::from(run[a]) / f64::from(targets[a].slots);
                    let rb = f64::from(run[b]) / f64::from(targets[b].slots);
                    ra.total_cmp(&rb)
                });
            let Some(i) = pick else { break };
            run[i] += 1;
            out.push(i);
        }
        out
    }
}
