//! The node load model of the overload experiment (issue 17 item 5; seed 002): what each node of
//! the shared cluster is doing besides the tasks the rm placed there, how busy that makes it as
//! the overload classifier's [`NodeLoad`] reads it, and how much slower its tasks run.
//!
//! Sans-IO and deterministic, like the rest of the simulator: the caller passes the time, and
//! each node draws its background hogs from a ChaCha8 stream of its own that the caller seeds
//! ([`Node::new`]). A node's hogs depend on nothing but that stream, so two runs of one seed
//! (with and without the classifier) meet the very same hogs whatever they place.
//!
//! **A node** has `cores`, `memory_gib` and a disk rate (bytes/s, the paper's DiskIORate).
//! Two background hogs switch on and off on it, each alternating exponential on and off periods
//! ([`LoadConfig::hog_on_mean`], [`LoadConfig::hog_off_mean`]; at t = 0 each is on with its
//! stationary probability, so the day starts in the middle of the hogs' lives):
//! - a **CPU hog** (`stress --cpu N`): `cpu_hog_threads` threads spinning, a core each;
//! - an **IO hog** (`stress --hdd 1`, `dd`): one process streaming to the disk, asking for
//!   the whole disk rate, in uninterruptible disk wait most of the time (a little CPU).
//!
//! Both together keep at most as many processes runnable as the node has cores (`cores / 2`
//! threads and one IO process), so the hogs alone never overload a node under the default rule
//! (load > cores): every overload the experiment counts needs tasks placed on a hogged node,
//! which the scheduler could have avoided.
//!
//! **A task** running on the node (a map from launch to end, a reduce while it runs its function
//! on the input it has — not while it waits for its shuffle, which is network) brings its demand
//! ([`Demand::of`]). Its disk demand is `q = (input + output) / nominal seconds` (seed 002 eq. 2:
//! the bytes it reads and writes over its run time alone on an idle node); it is IO-bound when
//! `q` reaches the disk rate ([`Probe::bound`], the same code that types a job from its probe),
//! else CPU-bound. A CPU-bound task keeps a core busy and uses `q` of the disk; an IO-bound task
//! uses the whole disk rate (it cannot get more) and `io_task_cpu` of a core.
//!
//! **Contention.** CPU: when the demands on a node (tasks and hogs) exceed its cores, every
//! consumer gets `cores / demand` of what it asks (a proportional share: Linux's CFS gives small
//! consumers all they ask and the rest a little more than this — the simplification is the same
//! in both runs). Disk: likewise over the disk rate. A CPU-bound task runs at its CPU share, an
//! IO-bound one at its disk share (each is bound by the one resource). Tasks are re-rated
//! whenever their node's demand changes — a task or a hog starts or stops — so a task's
//! remaining work always runs at the node's current speed (`engine::Run::rerate`).
//!
//! **Load average** as Linux computes it (`kernel/sched/loadavg.c`, `calc_load`), in its 11-bit
//! fixed point: every 5 s, `load = (load·EXP_1 + n·(2048 − EXP_1)) / 2048` with
//! `EXP_1 = 1884` (`1/exp(5 s / 1 min)`), rounded up while rising and down while falling, where
//! `n` (×2048) is the processes runnable *or in uninterruptible (disk) sleep* at that instant:
//! each CPU hog thread, the IO hog, and every running task (a task is either on a CPU or waiting
//! for its disk; a reduce fetching its shuffle over the network sleeps interruptibly and counts
//! 0). A node reports it as `/proc/loadavg` prints it — to two decimals, rounded — which is
//! what the live nodemanager reads (`sysinfo`'s `load_average`). The fixed point matters to the
//! rule `load > cores`: on a node as busy as its cores after a hog stops, the average falls back
//! to exactly the cores (in about 6 minutes, to the printed 2 decimals) where a real-valued
//! average would stay a hair above them, overloaded, for half an hour. At t = 0 the average
//! stands at the hogs' count, as if they had been running for long.
//!
//! **Memory**: the OS takes `os_memory_gib`, every running task its container's 1 GiB, every hog
//! that is on `hog_memory_gib`; with the default 2 GiB per container beside the OS's the rule's
//! 10 % of free memory is never reached (a full 4-core node with both hogs keeps 39 % free, a
//! 1-core one 17 %): memory is reported, and never what overloads a node here.

use rand::RngExt;
use serde::Serialize;
use yard_appmaster::policy::{Rng, Seconds};
use yard_appmaster::typing::Probe;
use yard_cluster::classifier::NodeLoad;
use yard_cluster::ids::Bound;

/// Linux's load-average fixed point: `FSHIFT` bits, `FIXED_1 = 1 << FSHIFT`.
pub(crate) const FSHIFT: u32 = 11;
pub(crate) const FIXED_1: u64 = 1 << FSHIFT;
/// Linux's `EXP_1`: `1/exp(5 s / 60 s)` in that fixed point (`include/linux/sched/loadavg.h`).
pub(crate) const EXP_1: u64 = 1884;

/// Linux's `calc_load`: one 5-second step of a load average `load` (fixed point) towards
/// `active` runnable processes.
pub(crate) fn calc_load(load: u64, active: u64) -> u64 {
    let active = active * FIXED_1;
    let mut new = load * EXP_1 + active * (FIXED_1 - EXP_1);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// A fixed-point load average as `/proc/loadavg` prints it: two decimals, rounded
/// (`get_avenrun(avnrun, FIXED_1/200, 0)`, then `LOAD_INT` and `LOAD_FRAC`).
pub(crate) fn proc_loadavg(load: u64) -> f64 {
    let v = load + FIXED_1 / 200;
    let int = v >> FSHIFT;
    let frac = ((v & (FIXED_1 - 1)) * 100) >> FSHIFT;
    int as f64 + frac as f64 / 100.0
}

/// Linux updates its load averages every 5 s (`LOAD_FREQ`).
pub(crate) const LOAD_FREQ: Seconds = 5.0;

/// The load model's constants: chosen before the experiment was first run, from the reasoning
/// in their docs, and not tuned on its figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadConfig {
    /// Cores per node: one per container, as YARN gives a container a vcore.
    pub cores: u32,
    /// Memory per node, GiB: the OS's, and twice the containers' (Hadoop 1's rule of thumb,
    /// slots × child heap ≈ half the RAM).
    pub memory_gib: f64,
    /// What the OS and the daemons keep, GiB.
    pub os_memory_gib: f64,
    /// A running task's memory: its container's 1 GiB (the shared cluster's task size).
    pub task_memory_gib: f64,
    /// The node's disk rate, bytes/s: 100 MB/s, a 2009–2010 SATA disk's sequential rate.
    pub disk_rate: f64,
    /// Cores an IO-bound task keeps busy (it mostly waits for its disk).
    pub io_task_cpu: f64,
    /// Threads of the CPU hog: half the cores.
    pub cpu_hog_threads: u32,
    /// The IO hog's CPU (a streaming `dd` spends little).
    pub io_hog_cpu: f64,
    /// Memory of a hog that is on, GiB.
    pub hog_memory_gib: f64,
    /// Mean on and off periods of each hog, seconds (exponential): 5 and 15 minutes, so each
    /// hog is on a quarter of the time and a node has some hog 44 % of the time.
    pub hog_on_mean: Seconds,
    pub hog_off_mean: Seconds,
    /// How often each node sends its load to the rm (Hadoop 1's TaskTracker heartbeat; yard's
    /// live nodemanagers beat every second, and the load average they report moves every 5 s).
    pub heartbeat: Seconds,
}

impl LoadConfig {
    /// The defaults for nodes of `containers` containers.
    pub fn for_containers(containers: u32) -> LoadConfig {
        let cores = containers.max(1);
        LoadConfig {
            cores,
            memory_gib: 1.0 + 2.0 * f64::from(cores),
            os_memory_gib: 1.0,
            task_memory_gib: 1.0,
            disk_rate: 100e6,
            io_task_cpu: 0.25,
            cpu_hog_threads: (cores / 2).max(1),
            io_hog_cpu: 0.1,
            hog_memory_gib: 0.25,
            hog_on_mean: 300.0,
            hog_off_mean: 900.0,
            heartbeat: 3.0,
        }
    }

    /// The load model in one line, for a report's header.
    pub fn describe(&self) -> String {
        format!(
            "{} cores, {:.0} GiB, disk {:.0} MB/s per node; a CPU hog ({} threads) and an IO hog (the whole disk) per node, each on for Exp({:.0} s) and off for Exp({:.0} s); IO-bound tasks {} core; loads sent every {} s",
            self.cores,
            self.memory_gib,
            self.disk_rate / 1e6,
            self.cpu_hog_threads,
            self.hog_on_mean,
            self.hog_off_mean,
            self.io_task_cpu,
            self.heartbeat
        )
    }
}

/// What a running task asks of its node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    pub bound: Bound,
    /// Cores it keeps busy when not held back.
    pub cpu: f64,
    /// Disk bytes/s it moves when not held back.
    pub disk: f64,
}

impl Demand {
    /// A task reading `input` and writing `output` bytes in `nominal` seconds alone on an idle
    /// node: typed as a probe is (eq. 2 against the disk rate); a task of no time or no bytes is
    /// CPU-bound with no disk demand.
    pub fn of(cfg: &LoadConfig, input: f64, output: f64, nominal: Seconds) -> Demand {
        let probe = Probe {
            input_bytes: input,
            output_bytes: output,
            seconds: nominal,
        };
        let q = probe.disk_demand().unwrap_or(0.0);
        match probe.bound(cfg.disk_rate).unwrap_or(Bound::Cpu) {
            Bound::Cpu => Demand {
                bound: Bound::Cpu,
                cpu: 1.0,
                disk: q,
            },
            Bound::Io => Demand {
                bound: Bound::Io,
                cpu: cfg.io_task_cpu,
                disk: cfg.disk_rate,
            },
        }
    }
}

/// A background hog: on or off, and when it next switches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hog {
    pub on: bool,
    pub next: Seconds,
}

/// One node's state. `T` identifies a running task (the caller's key).
#[derive(Debug)]
pub struct Node<T> {
    cfg: LoadConfig,
    rng: Rng,
    pub cpu_hog: Hog,
    pub io_hog: Hog,
    /// When each hog (CPU, IO) last switched on; −∞ for one on since before the day.
    on_since: [Seconds; 2],
    tasks: Vec<(T, Demand)>,
    /// The 1-minute load average in Linux's fixed point.
    load_avg: u64,
    /// The hogs switch once each, when their `next` says, and then stay (a hand-made
    /// scenario: [`Node::scripted`]).
    scripted: bool,
}

fn exponential(rng: &mut Rng, mean: Seconds) -> Seconds {
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

impl<T: PartialEq + Copy> Node<T> {
    /// A node whose hogs draw from `rng` (seeded by the caller: the same seed, the same hogs).
    /// Each hog starts on with its stationary probability, for an exponential time (the
    /// residual of an exponential period is exponential with the same mean).
    pub fn new(cfg: LoadConfig, mut rng: Rng) -> Node<T> {
        let on_share = cfg.hog_on_mean / (cfg.hog_on_mean + cfg.hog_off_mean);
        let hog = |rng: &mut Rng| {
            let u: f64 = rng.random();
            let on = u < on_share;
            let mean = if on {
                cfg.hog_on_mean
            } else {
                cfg.hog_off_mean
            };
            Hog {
                on,
                next: exponential(rng, mean),
            }
        };
        let cpu_hog = hog(&mut rng);
        let io_hog = hog(&mut rng);
        let mut node = Node {
            cfg,
            rng,
            cpu_hog,
            io_hog,
            on_since: [f64::NEG_INFINITY; 2],
            tasks: Vec::new(),
            load_avg: 0,
            scripted: false,
        };
        node.load_avg = node.runnable() * FIXED_1;
        node
    }

    /// A node whose hogs are as given and switch at most once each, at their `next` (infinite:
    /// never), drawing nothing: for hand-made scenarios.
    pub fn scripted(cfg: LoadConfig, cpu_hog: Hog, io_hog: Hog) -> Node<T> {
        use rand::SeedableRng;
        let mut node = Node {
            cfg,
            rng: Rng::seed_from_u64(0),
            cpu_hog,
            io_hog,
            on_since: [f64::NEG_INFINITY; 2],
            tasks: Vec::new(),
            load_avg: 0,
            scripted: true,
        };
        node.load_avg = node.runnable() * FIXED_1;
        node
    }

    pub fn config(&self) -> &LoadConfig {
        &self.cfg
    }

    /// When a hog next switches.
    pub fn next_switch(&self) -> Seconds {
        self.cpu_hog.next.min(self.io_hog.next)
    }

    /// Switches every hog due at `now` (on to off or off to on) and draws its next period.
    /// Returns whether anything switched.
    pub fn switch_hogs(&mut self, now: Seconds) -> bool {
        let cfg = self.cfg;
        let mut switched = false;
        for which in 0..2 {
            let hog = match which {
                0 => &mut self.cpu_hog,
                _ => &mut self.io_hog,
            };
            if hog.next <= now {
                hog.on = !hog.on;
                if hog.on {
                    self.on_since[which] = now;
                }
                let mean = if hog.on {
                    cfg.hog_on_mean
                } else {
                    cfg.hog_off_mean
                };
                hog.next = match self.scripted {
                    true => f64::INFINITY,
                    false => now + exponential(&mut self.rng, mean),
                };
                switched = true;
            }
        }
        switched
    }

    /// Since when a hog that is on now has been on (the earliest of them), if one is.
    pub fn hog_on_since(&self) -> Option<Seconds> {
        [self.cpu_hog.on, self.io_hog.on]
            .iter()
            .zip(self.on_since)
            .filter(|(on, _)| **on)
            .map(|(_, since)| since)
            .reduce(f64::min)
    }

    /// A task starts running here.
    pub fn add(&mut self, task: T, demand: Demand) {
        self.tasks.push((task, demand));
    }

    /// A task stops running here; its demand, if it was here.
    pub fn remove(&mut self, task: T) -> Option<Demand> {
        let i = self.tasks.iter().position(|(t, _)| *t == task)?;
        Some(self.tasks.swap_remove(i).1)
    }

    pub fn tasks(&self) -> impl Iterator<Item = &(T, Demand)> {
        self.tasks.iter()
    }

    /// Processes runnable or in disk wait now: what the load average averages.
    pub fn runnable(&self) -> u64 {
        let cpu = match self.cpu_hog.on {
            true => u64::from(self.cfg.cpu_hog_threads),
            false => 0,
        };
        cpu + u64::from(self.io_hog.on) + self.tasks.len() as u64
    }

    /// Cores asked for now.
    pub fn cpu_demand(&self) -> f64 {
        let mut d: f64 = self.tasks.iter().map(|(_, t)| t.cpu).sum();
        if self.cpu_hog.on {
            d += f64::from(self.cfg.cpu_hog_threads);
        }
        if self.io_hog.on {
            d += self.cfg.io_hog_cpu;
        }
        d
    }

    /// Disk bytes/s asked for now.
    pub fn disk_demand(&self) -> f64 {
        let mut d: f64 = self.tasks.iter().map(|(_, t)| t.disk).sum();
        if self.io_hog.on {
            d += self.cfg.disk_rate;
        }
        d
    }

    /// The speed (0–1 of its speed alone on an idle node) a task bound by `bound` runs at now.
    pub fn speed(&self, bound: Bound) -> f64 {
        let share = |capacity: f64, demand: f64| match demand > capacity {
            true => capacity / demand,
            false => 1.0,
        };
        match bound {
            Bound::Cpu => share(f64::from(self.cfg.cores), self.cpu_demand()),
            Bound::Io => share(self.cfg.disk_rate, self.disk_demand()),
        }
    }

    /// Linux's 5-second update of the 1-minute load average.
    pub fn tick_load_average(&mut self) {
        self.load_avg = calc_load(self.load_avg, self.runnable());
    }

    /// The 1-minute load average as `/proc/loadavg` prints it.
    pub fn load_average(&self) -> f64 {
        proc_loadavg(self.load_avg)
    }

    /// The node's load now, as its nodemanager would report it.
    pub fn sample(&self) -> NodeLoad {
        let c = &self.cfg;
        let hogs_on = u8::from(self.cpu_hog.on) + u8::from(self.io_hog.on);
        let used = c.os_memory_gib
            + c.task_memory_gib * self.tasks.len() as f64
            + c.hog_memory_gib * f64::from(hogs_on);
        NodeLoad {
            cores: c.cores,
            load_1m: self.load_average(),
            cpu: (self.cpu_demand() / f64::from(c.cores.max(1))).min(1.0),
            memory_free: (1.0 - used / c.memory_gib).clamp(0.0, 1.0),
            disk: (self.disk_demand() / c.disk_rate).min(1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use yard_cluster::classifier::OverloadRule;

    fn node(seed: u64) -> Node<u32> {
        Node::new(LoadConfig::for_containers(4), Rng::seed_from_u64(seed))
    }

    /// The hogs' switch times over `until` seconds.
    fn switches(n: &mut Node<u32>, until: Seconds) -> Vec<(u64, bool, bool)> {
        let mut out = Vec::new();
        while n.next_switch() < until {
            let t = n.next_switch();
            n.switch_hogs(t);
            out.push(((t * 1e6) as u64, n.cpu_hog.on, n.io_hog.on));
        }
        out
    }

    #[test]
    fn hogs_switch_on_and_off_with_the_seed_and_are_on_a_quarter_of_the_time() {
        let day = 200_000.0;
        let (mut a, mut b, mut c) = (node(7), node(7), node(8));
        let sa = switches(&mut a, day);
        assert_eq!(sa, switches(&mut b, day), "the same seed, the same hogs");
        assert_ne!(sa, switches(&mut c, day), "another seed, other hogs");
        assert!(sa.len() > 100, "{} switches", sa.len());
        // Since when a hog that is on has been on: the time it last switched on.
        let mut d = node(7);
        d.cpu_hog = Hog {
            on: false,
            next: 10.0,
        };
        d.io_hog = Hog {
            on: false,
            next: 30.0,
        };
        assert_eq!(d.hog_on_since(), None);
        d.switch_hogs(10.0);
        assert_eq!(d.hog_on_since(), Some(10.0));
        d.switch_hogs(30.0);
        assert_eq!(d.hog_on_since(), Some(10.0), "the earlier of the two");
        let hogged_at_start = node(7);
        if hogged_at_start.cpu_hog.on || hogged_at_start.io_hog.on {
            assert_eq!(hogged_at_start.hog_on_since(), Some(f64::NEG_INFINITY));
        }
        // Each switch flips a hog; time on over the day near on / (on + off) = 1/4.
        let mut n = node(11);
        let (mut t, mut on_cpu, mut on_io) = (0.0, 0.0, 0.0);
        while t < day {
            let next = n.next_switch().min(day);
            on_cpu += f64::from(u8::from(n.cpu_hog.on)) * (next - t);
            on_io += f64::from(u8::from(n.io_hog.on)) * (next - t);
            t = next;
            n.switch_hogs(t);
        }
        for share in [on_cpu / day, on_io / day] {
            assert!((share - 0.25).abs() < 0.06, "{share}");
        }
    }

    #[test]
    fn a_task_s_demand_shows_in_the_node_s_load() {
        let cfg = LoadConfig::for_containers(4);
        let mut n = node(1);
        n.cpu_hog.on = false;
        n.io_hog.on = false;
        let idle = n.sample();
        assert_eq!((idle.cpu, idle.disk), (0.0, 0.0));
        // A 64 MB map writing 16 MB in 8 s: 10 MB/s, CPU-bound: a core and 10 % of the disk.
        let cpu = Demand::of(&cfg, 64e6, 16e6, 8.0);
        assert_eq!(cpu.bound, Bound::Cpu);
        assert!((cpu.disk - 10e6).abs() < 1e-6);
        n.add(1, cpu);
        let s = n.sample();
        assert_eq!(s.cpu, 0.25);
        assert!((s.disk - 0.1).abs() < 1e-12);
        assert!((s.memory_free - (1.0 - 2.0 / 9.0)).abs() < 1e-12);
        assert_eq!(n.runnable(), 1);
        // The same bytes in 0.5 s: 160 MB/s ≥ the disk's 100: IO-bound, the whole disk.
        let io = Demand::of(&cfg, 64e6, 16e6, 0.5);
        assert_eq!((io.bound, io.disk, io.cpu), (Bound::Io, 100e6, 0.25));
        n.add(2, io);
        let s = n.sample();
        assert_eq!(s.disk, 1.0);
        assert!((s.cpu - 1.25 / 4.0).abs() < 1e-12);
        assert_eq!(n.runnable(), 2);
        assert_eq!(n.remove(1), Some(cpu));
        assert_eq!(n.remove(1), None);
        assert_eq!(n.runnable(), 1);
        // Nothing measured: CPU-bound, no disk.
        assert_eq!(Demand::of(&cfg, 0.0, 0.0, 0.0).disk, 0.0);
    }

    #[test]
    fn the_load_average_is_linux_s_damped_mean_every_five_seconds() {
        // Linux's own arithmetic: from 0 towards 1 runnable, the first step is
        // (0 + 2048·164 + 2047) / 2048 = 164 (0.08), as /proc/loadavg shows it.
        assert_eq!(calc_load(0, 1), 164);
        assert_eq!(proc_loadavg(164), 0.08);
        assert_eq!(proc_loadavg(4 * FIXED_1), 4.0);
        assert_eq!(
            proc_loadavg(4 * FIXED_1 + 11),
            4.01,
            "rounded: 4.0054 prints 4.01"
        );
        assert_eq!(
            proc_loadavg(4 * FIXED_1 + 10),
            4.0,
            "and 4.0049 prints 4.00"
        );
        let mut n = node(1);
        n.cpu_hog.on = false;
        n.io_hog.on = false;
        n.load_avg = 0;
        let cfg = *n.config();
        for t in 0..4 {
            n.add(t, Demand::of(&cfg, 0.0, 0.0, 1.0));
        }
        // Four runnable from 0: after a minute (12 ticks) 1 − 1/e of the way, as the
        // real-valued 4·(1 − e^(−1)) = 2.53 (the fixed point rounds up while rising).
        for _ in 0..12 {
            n.tick_load_average();
        }
        let minute = 4.0 * (1.0 - (-1.0f64).exp());
        assert!(
            (n.load_average() - minute).abs() < 0.02,
            "{}",
            n.load_average()
        );
        // It reaches the count it averages and stays there: four tasks on four cores never
        // break the rule.
        for _ in 0..1000 {
            n.tick_load_average();
        }
        assert_eq!(n.load_average(), 4.0);
        assert!(!OverloadRule::default().overloaded(&n.sample()));
        // A CPU hog (2 threads) on top: the average climbs past the cores within a tick.
        n.cpu_hog.on = true;
        n.tick_load_average();
        assert!(n.load_average() > 4.0);
        assert!(OverloadRule::default().overloaded(&n.sample()));
        // Back to four after a long hog: it falls to exactly 4.00 again, by EXP_1 a tick
        // (rounded down), printed 4.00 within six minutes.
        for _ in 0..1000 {
            n.tick_load_average();
        }
        assert_eq!(n.load_average(), 6.0);
        n.cpu_hog.on = false;
        let mut ticks = 0;
        while OverloadRule::default().overloaded(&n.sample()) {
            let before = n.load_avg;
            n.tick_load_average();
            assert_eq!(
                n.load_avg,
                (before * EXP_1 + 4 * FIXED_1 * (FIXED_1 - EXP_1)) / FIXED_1
            );
            ticks += 1;
        }
        assert!((60..=75).contains(&ticks), "{ticks} ticks");
    }

    #[test]
    fn tasks_slow_down_by_their_share_of_the_resource_that_binds_them() {
        let mut n = node(1);
        n.cpu_hog.on = false;
        n.io_hog.on = false;
        let cfg = *n.config();
        let cpu = Demand::of(&cfg, 0.0, 0.0, 1.0);
        let io = Demand::of(&cfg, 1e9, 0.0, 1.0);
        for t in 0..4 {
            n.add(t, cpu);
        }
        assert_eq!(n.speed(Bound::Cpu), 1.0, "four tasks on four cores");
        n.cpu_hog.on = true;
        assert!(
            (n.speed(Bound::Cpu) - 4.0 / 6.0).abs() < 1e-12,
            "2 hog threads"
        );
        assert_eq!(n.speed(Bound::Io), 1.0, "the disk is idle");
        n.add(9, io);
        assert!((n.speed(Bound::Cpu) - 4.0 / 6.25).abs() < 1e-12);
        assert_eq!(n.speed(Bound::Io), 1.0, "alone on the disk");
        n.io_hog.on = true;
        assert!(
            (n.speed(Bound::Io) - 0.5).abs() < 1e-12,
            "shares it with the IO hog"
        );
        // The hogs alone never overload a node: 2 threads and the IO hog on 4 cores.
        let mut quiet = node(1);
        quiet.cpu_hog.on = true;
        quiet.io_hog.on = true;
        for _ in 0..1000 {
            quiet.tick_load_average();
        }
        assert!(!OverloadRule::default().overloaded(&quiet.sample()));
        // With both hogs and all four containers busy, 39 % of memory is free.
        for t in 0..4 {
            quiet.add(t, cpu);
        }
        assert!((quiet.sample().memory_free - (1.0 - 5.5 / 9.0)).abs() < 1e-12);
        assert!(!OverloadRule::default().overloaded(&quiet.sample()));
    }
}
