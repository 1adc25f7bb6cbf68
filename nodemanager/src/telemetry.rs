//! Samples the node's load for the heartbeat: rates are over the time since the previous
//! sample, which the caller measures and passes in.
//!
//! - **The host** (with `sysinfo`): CPU in use, load averages, logical CPUs, memory and swap,
//!   disk and network bytes per second, and the disk rate measured at start ([`crate::disk`]).
//! - **Process trees** (from `/proc`, [`crate::procfs`]): each container's — its process,
//!   everything it starts, and whatever stays in its process group — and the nodemanager's own
//!   (itself, its containers and all their descendants): CPU (percent of one core), resident
//!   and virtual memory, disk bytes read and written per second (`/proc/<pid>/io`), process
//!   count. Several nodemanagers on one host share its CPU and disks, so the host's numbers
//!   say how busy the host is, the own tree's how much of it this nodemanager's work is.
//!   A tree's rates are the difference of its counters to the previous sample; a container
//!   new since then counts from zero, and the very first sample's own tree reports no rates.
//!   The whole of `/proc` is listed at every sample to find the trees (what `ps` does): a few
//!   milliseconds on a host with thousands of processes.
//! - Where there is no `/proc` (not Linux): each container's root process alone, from
//!   `sysinfo`, and the nodemanager's process alone as its own tree; disk IO is reported as 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sysinfo::{Disks, Networks, Pid, ProcessesToUpdate, System};
use yard_wire::telemetry::{ContainerUsage, NodeTelemetry, ProcessTreeUsage};

use crate::procfs::{self, Table, TreeCounters};

/// Keeps the previous readings that rates are measured against.
pub struct Sampler {
    system: System,
    disks: Disks,
    networks: Networks,
    procs: Procs,
    /// The node's disk rate, bytes per second (0: unknown).
    disk_rate: f64,
}

/// Where process trees are read from, and their counters at the previous sample.
struct Procs {
    root: PathBuf,
    /// The nodemanager's own process: its tree's root.
    own_pid: u32,
    ticks_per_s: f64,
    page_bytes: u64,
    /// The own tree's counters at the previous sample (`None` before the first).
    own: Option<TreeCounters>,
    /// Each running container's counters at the previous sample.
    containers: BTreeMap<String, TreeCounters>,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new()
    }
}

/// `sysconf(_SC_CLK_TCK)` and the page size; Linux's usual values if the system does not say.
fn clock_and_page() -> (f64, u64) {
    use nix::unistd::{SysconfVar, sysconf};
    let ticks = sysconf(SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|t| *t > 0)
        .unwrap_or(100);
    let page = sysconf(SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .filter(|p| *p > 0)
        .unwrap_or(4096);
    (ticks as f64, page as u64)
}

fn rate(now: u64, before: u64, elapsed_s: f64) -> f64 {
    if elapsed_s > 0.0 {
        now.saturating_sub(before) as f64 / elapsed_s
    } else {
        0.0
    }
}

impl Procs {
    /// The tree's usage since `before` (no rates without it).
    fn usage(
        &self,
        now: TreeCounters,
        before: Option<TreeCounters>,
        elapsed_s: f64,
    ) -> ProcessTreeUsage {
        let before = before.unwrap_or(now);
        ProcessTreeUsage {
            cpu_percent: rate(now.cpu_ticks, before.cpu_ticks, elapsed_s) / self.ticks_per_s
                * 100.0,
            rss_bytes: now.rss_pages.saturating_mul(self.page_bytes),
            read_bytes_per_s: rate(now.read_bytes, before.read_bytes, elapsed_s),
            write_bytes_per_s: rate(now.write_bytes, before.write_bytes, elapsed_s),
            processes: now.processes,
        }
    }

    /// The own tree's and each container's usage from `/proc`; `None` where there is none.
    fn sample(
        &mut self,
        elapsed_s: f64,
        containers: &[(String, u32)],
    ) -> Option<(ProcessTreeUsage, Vec<ContainerUsage>)> {
        let table = Table::read(&self.root)?;
        let mut io_cache = BTreeMap::new();
        let root = self.root.clone();
        let mut io = |pid: u32| {
            *io_cache
                .entry(pid)
                .or_insert_with(|| procfs::read_io(&root, pid))
        };
        let mut own_members = table.tree(self.own_pid, false);
        let mut now_containers = BTreeMap::new();
        let mut usages = Vec::new();
        for (id, pid) in containers {
            let members = table.tree(*pid, true);
            if members.is_empty() {
                continue; // it ended since it was listed
            }
            let now = table.counters(&members, &mut io);
            // New since the last sample: all it did, it did since then.
            let before = self.containers.get(id).copied().unwrap_or_default();
            let u = self.usage(now, Some(before), elapsed_s);
            usages.push(ContainerUsage {
                container_id: id.clone(),
                cpu_percent: u.cpu_percent,
                rss_bytes: u.rss_bytes,
                read_bytes_per_s: u.read_bytes_per_s,
                write_bytes_per_s: u.write_bytes_per_s,
                virtual_bytes: now.vsize_bytes,
            });
            now_containers.insert(id.clone(), now);
            own_members.extend(members);
        }
        let own_now = table.counters(&own_members, &mut io);
        let own = self.usage(own_now, self.own, elapsed_s);
        self.own = Some(own_now);
        self.containers = now_containers;
        Some((own, usages))
    }
}

impl Sampler {
    pub fn new() -> Self {
        Sampler::reading(Path::new("/proc"), std::process::id())
    }

    /// A sampler reading process trees from `proc_root` (a made-up one in tests), with
    /// `own_pid` as the nodemanager's process.
    pub fn reading(proc_root: &Path, own_pid: u32) -> Self {
        let mut system = System::new();
        system.refresh_cpu_usage();
        let (ticks_per_s, page_bytes) = clock_and_page();
        Sampler {
            system,
            disks: Disks::new_with_refreshed_list(),
            networks: Networks::new_with_refreshed_list(),
            procs: Procs {
                root: proc_root.to_owned(),
                own_pid,
                ticks_per_s,
                page_bytes,
                own: None,
                containers: BTreeMap::new(),
            },
            disk_rate: 0.0,
        }
    }

    /// The node's disk rate, reported in every sample from now on.
    pub fn set_disk_rate(&mut self, bytes_per_s: f64) {
        self.disk_rate = bytes_per_s;
    }

    /// Without `/proc`: each container's root process, and the nodemanager's own process, from
    /// `sysinfo`; no disk IO.
    fn sample_without_proc(
        &mut self,
        containers: &[(String, u32)],
    ) -> (ProcessTreeUsage, Vec<ContainerUsage>) {
        let own_pid = Pid::from_u32(self.procs.own_pid);
        let mut pids: Vec<Pid> = containers
            .iter()
            .map(|(_, pid)| Pid::from_u32(*pid))
            .collect();
        pids.push(own_pid);
        self.system
            .refresh_processes(ProcessesToUpdate::Some(&pids), true);
        let usages: Vec<ContainerUsage> = containers
            .iter()
            .filter_map(|(id, pid)| {
                let p = self.system.process(Pid::from_u32(*pid))?;
                Some(ContainerUsage {
                    container_id: id.clone(),
                    cpu_percent: f64::from(p.cpu_usage()),
                    rss_bytes: p.memory(),
                    virtual_bytes: p.virtual_memory(),
                    ..ContainerUsage::default()
                })
            })
            .collect();
        let own = self
            .system
            .process(own_pid)
            .map(|p| ProcessTreeUsage {
                cpu_percent: f64::from(p.cpu_usage()),
                rss_bytes: p.memory(),
                processes: 1,
                ..ProcessTreeUsage::default()
            })
            .unwrap_or_default();
        (own, usages)
    }

    /// The node's load since the last sample (`elapsed_s` ago), the nodemanager's own process
    /// tree's, and each running container's, given as (container id, process id). Every number
    /// is within the range the rm accepts.
    pub fn sample(&mut self, elapsed_s: f64, containers: &[(String, u32)]) -> NodeTelemetry {
        let per_s = |bytes: u64| {
            if elapsed_s > 0.0 {
                bytes as f64 / elapsed_s
            } else {
                0.0
            }
        };
        self.system.refresh_cpu_usage();
        self.system.refresh_memory();
        self.disks.refresh(true);
        self.networks.refresh(true);
        let load = System::load_average();
        let (read, written) =
            self.disks
                .list()
                .iter()
                .map(|d| d.usage())
                .fold((0u64, 0u64), |(r, w), u| {
                    (
                        r.saturating_add(u.read_bytes),
                        w.saturating_add(u.written_bytes),
                    )
                });
        let (rx, tx) = self.networks.values().fold((0u64, 0u64), |(r, t), n| {
            (
                r.saturating_add(n.received()),
                t.saturating_add(n.transmitted()),
            )
        });
        let (own, usages) = match self.procs.sample(elapsed_s, containers) {
            Some(trees) => trees,
            None => self.sample_without_proc(containers),
        };
        NodeTelemetry {
            cpu_percent: f64::from(self.system.global_cpu_usage()),
            load_1m: load.one,
            load_5m: load.five,
            load_15m: load.fifteen,
            memory_total_bytes: self.system.total_memory(),
            memory_used_bytes: self.system.used_memory(),
            disk_read_bytes_per_s: per_s(read),
            disk_write_bytes_per_s: per_s(written),
            net_rx_bytes_per_s: per_s(rx),
            net_tx_bytes_per_s: per_s(tx),
            containers: usages,
            cores: u32::try_from(self.system.cpus().len()).unwrap_or(u32::MAX),
            swap_used_bytes: self.system.used_swap(),
            disk_io_rate_bytes_per_s: self.disk_rate,
            own,
        }
        .clamped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The own tree's members as a made-up `/proc` shows them.
    fn own_members(root: &Path, own_pid: u32) -> std::collections::BTreeSet<u32> {
        Table::read(root).unwrap().tree(own_pid, false)
    }

    #[test]
    fn a_sample_describes_this_node_and_a_running_process() {
        let mut s = Sampler::new();
        s.set_disk_rate(123e6);
        let me = std::process::id();
        let t = s.sample(
            1.0,
            &[("c_self".into(), me), ("c_gone".into(), u32::MAX - 1)],
        );
        assert!(
            t.memory_total_bytes > 0 && t.memory_used_bytes <= t.memory_total_bytes,
            "{t:?}"
        );
        assert!((0.0..=100.0).contains(&t.cpu_percent), "{t:?}");
        assert!(t.load_1m >= 0.0 && t.disk_read_bytes_per_s >= 0.0 && t.net_rx_bytes_per_s >= 0.0);
        assert!(t.cores >= 1, "{t:?}");
        assert_eq!(t.disk_io_rate_bytes_per_s, 123e6);
        // Only the process that exists is reported, with its resident memory.
        assert_eq!(t.containers.len(), 1, "{:?}", t.containers);
        assert_eq!(t.containers[0].container_id, "c_self");
        assert!(t.containers[0].rss_bytes > 0 && t.containers[0].virtual_bytes > 0);
        assert!(t.own.processes >= 1 && t.own.rss_bytes > 0, "{:?}", t.own);
        assert!(t.check("telemetry").is_ok(), "{t:?}");
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains("\"cpuPercent\"") && json.contains("\"rssBytes\""),
            "{json}"
        );
    }

    /// A made-up `/proc` whose counters the test sets: the rates are exact differences.
    struct FakeProc {
        dir: tempfile::TempDir,
    }

    impl FakeProc {
        fn put(
            &self,
            pid: u32,
            ppid: u32,
            pgrp: u32,
            ticks: u64,
            rss: u64,
            io: Option<(u64, u64)>,
        ) {
            let d = self.dir.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("stat"),
                format!(
                    "{pid} (p {pid}) S {ppid} {pgrp} {pgrp} 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 \
                     0 1 {} {rss} 0",
                    rss * 8192
                ),
            )
            .unwrap();
            match io {
                Some((r, w)) => std::fs::write(
                    d.join("io"),
                    format!("rchar: 1\nread_bytes: {r}\nwrite_bytes: {w}\n"),
                )
                .unwrap(),
                None => {
                    let _ = std::fs::remove_file(d.join("io"));
                }
            }
        }

        fn gone(&self, pid: u32) {
            std::fs::remove_dir_all(self.dir.path().join(pid.to_string())).unwrap();
        }
    }

    #[test]
    fn tree_rates_are_differences_between_samples() {
        let p = FakeProc {
            dir: tempfile::tempdir().unwrap(),
        };
        // 10: the nodemanager; 20: a container with child 21; 30: a process of someone else.
        p.put(1, 0, 1, 0, 0, None);
        p.put(10, 1, 10, 1_000, 100, Some((0, 0)));
        p.put(20, 10, 20, 50, 10, Some((1_000, 2_000)));
        p.put(21, 20, 20, 50, 10, Some((0, 0)));
        p.put(30, 1, 30, 7_000, 10, Some((1 << 30, 1 << 30)));
        let mut s = Sampler::reading(p.dir.path(), 10);
        let ticks = s.procs.ticks_per_s;
        let page = s.procs.page_bytes;
        let running = [("c1".to_owned(), 20)];
        let first = s.sample(2.0, &running);
        // The container is new: everything it did counts, over the 2 s.
        let c = &first.containers[0];
        assert_eq!(c.container_id, "c1");
        assert_eq!(c.cpu_percent, 100.0 / ticks / 2.0 * 100.0);
        assert_eq!((c.read_bytes_per_s, c.write_bytes_per_s), (500.0, 1_000.0));
        assert_eq!(c.rss_bytes, 20 * page);
        // The own tree has no previous sample yet: no rates, but its size.
        assert_eq!(first.own.cpu_percent, 0.0);
        assert_eq!(first.own.processes, 3);
        assert_eq!(first.own.rss_bytes, 120 * page);
        assert_eq!(own_members(p.dir.path(), 10).len(), 3);

        // One second later: child 21 was reaped by 20 (its ticks and bytes folded into its
        // parent's), a grandchild 22 appeared, the nodemanager worked a little.
        p.gone(21);
        p.put(
            20,
            10,
            20,
            50 + 50 + 2 * ticks as u64,
            10,
            Some((1_000 + 4_000, 2_000)),
        );
        p.put(22, 20, 20, 0, 5, None); // its io is not readable: left out
        p.put(10, 1, 10, 1_000 + ticks as u64 / 2, 100, Some((0, 300)));
        let second = s.sample(1.0, &running);
        let c = &second.containers[0];
        assert!((c.cpu_percent - 200.0).abs() < 1e-9, "{c:?}");
        assert_eq!((c.read_bytes_per_s, c.write_bytes_per_s), (4_000.0, 0.0));
        assert!(
            (second.own.cpu_percent - 250.0).abs() < 1e-9,
            "{:?}",
            second.own
        );
        assert_eq!(
            (second.own.read_bytes_per_s, second.own.write_bytes_per_s),
            (4_000.0, 300.0)
        );
        assert_eq!(second.own.processes, 3);
        // The other user's process never counts.
        assert!(second.own.read_bytes_per_s < f64::from(1u32 << 30));

        // The container ended: it is not reported; a vanished root is no error.
        p.gone(20);
        p.gone(22);
        let third = s.sample(1.0, &running);
        assert!(third.containers.is_empty());
        assert_eq!(third.own.processes, 1);
        assert!(third.check("telemetry").is_ok());
    }
}
