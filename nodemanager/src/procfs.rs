//! Process trees and their counters from Linux's `/proc`: each process's parent, process group,
//! CPU ticks and memory (`/proc/<pid>/stat`) and the bytes it made the disks read and write
//! (`/proc/<pid>/io`). The parsers take the files' text, so they are tested without a machine;
//! [`Table::read`] takes the directory, so tests can hand it a made-up one.
//!
//! A tree's counters are sums over the processes alive in it now. The kernel folds a child's
//! CPU time (`cutime`, `cstime`) and disk bytes into its parent when the parent reaps it, so a
//! sum over the live tree only grows while processes come and go inside it: the difference
//! between two samples is what the tree did in between, short-lived children included. What a
//! process did in its last interval is lost only if it leaves the tree first (orphaned and
//! reaped by init), or if its files cannot be read (another user's, or it vanished mid-read):
//! it is then left out, never an error.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What the sampler reads of one process's `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    pub ppid: u32,
    pub pgrp: u32,
    /// `utime + stime + cutime + cstime`: its own CPU time and its reaped children's, in clock
    /// ticks (`sysconf(_SC_CLK_TCK)` per second).
    pub cpu_ticks: u64,
    /// Virtual memory size, bytes.
    pub vsize_bytes: u64,
    /// Resident set size, pages.
    pub rss_pages: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted from the last `)`. `None` for text that
/// is not such a line.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    // Field 3 (state) onwards.
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let num = |i: usize| rest.get(i).and_then(|s| s.parse::<u64>().ok());
    // cutime and cstime are signed in the kernel's format ("long").
    let signed = |i: usize| {
        rest.get(i)
            .and_then(|s| s.parse::<i64>().ok())
            .map(|v| v.max(0) as u64)
    };
    let cpu_ticks = num(11)?
        .saturating_add(num(12)?)
        .saturating_add(signed(13)?)
        .saturating_add(signed(14)?);
    Some(ProcStat {
        pid,
        ppid: u32::try_from(num(1)?).ok()?,
        pgrp: u32::try_from(signed(2)?).ok()?,
        cpu_ticks,
        vsize_bytes: num(20)?,
        rss_pages: signed(21)?,
    })
}

/// What the sampler reads of `/proc/<pid>/io`: bytes the process (and the children it reaped)
/// caused to be fetched from, or sent to, the storage layer — not the page cache's hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// Parses `/proc/<pid>/io` (`key: value` lines); `None` unless both `read_bytes` and
/// `write_bytes` are there.
pub fn parse_io(text: &str) -> Option<ProcIo> {
    let mut read = None;
    let mut write = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().parse::<u64>().ok();
        match key.trim() {
            "read_bytes" => read = value,
            "write_bytes" => write = value,
            _ => {}
        }
    }
    Some(ProcIo {
        read_bytes: read?,
        write_bytes: write?,
    })
}

/// Every process readable in a `/proc`, with the children of each.
#[derive(Debug, Default)]
pub struct Table {
    pub stats: BTreeMap<u32, ProcStat>,
    children: BTreeMap<u32, Vec<u32>>,
}

/// A process tree's counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeCounters {
    pub cpu_ticks: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub rss_pages: u64,
    pub vsize_bytes: u64,
    pub processes: u32,
}

impl Table {
    /// Builds the table from processes' stat lines.
    pub fn from_stats(stats: impl IntoIterator<Item = ProcStat>) -> Table {
        let mut table = Table::default();
        for s in stats {
            table.stats.insert(s.pid, s);
        }
        for s in table.stats.values() {
            if s.ppid != s.pid {
                table.children.entry(s.ppid).or_default().push(s.pid);
            }
        }
        table
    }

    /// Reads every `<root>/<pid>/stat`. `None` when `root` cannot be listed (no `/proc`: not
    /// Linux); a process that vanished or whose file does not parse is left out.
    pub fn read(root: &Path) -> Option<Table> {
        let entries = std::fs::read_dir(root).ok()?;
        let stats = entries.filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name();
            let name = name.to_str()?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
            parse_stat(&text)
        });
        Some(Table::from_stats(stats))
    }

    /// The processes of the tree rooted at `root`: it and all its descendants, and, with
    /// `group`, every process in the process group `root` leads (a container's: a child that
    /// was orphaned and adopted by init stays in its group). Empty when `root` is gone.
    pub fn tree(&self, root: u32, group: bool) -> BTreeSet<u32> {
        let mut members = BTreeSet::new();
        let mut queue: Vec<u32> = Vec::new();
        if self.stats.contains_key(&root) {
            queue.push(root);
        }
        if group {
            queue.extend(
                self.stats
                    .values()
                    .filter(|s| s.pgrp == root)
                    .map(|s| s.pid),
            );
        }
        while let Some(pid) = queue.pop() {
            if members.insert(pid) {
                queue.extend(self.children.get(&pid).into_iter().flatten().copied());
            }
        }
        members
    }

    /// The sums over `members`; `io` gives a process's disk counters, `None` when they cannot
    /// be read (left out).
    pub fn counters(
        &self,
        members: &BTreeSet<u32>,
        mut io: impl FnMut(u32) -> Option<ProcIo>,
    ) -> TreeCounters {
        let mut c = TreeCounters::default();
        for pid in members {
            let Some(s) = self.stats.get(pid) else {
                continue;
            };
            c.cpu_ticks = c.cpu_ticks.saturating_add(s.cpu_ticks);
            c.rss_pages = c.rss_pages.saturating_add(s.rss_pages);
            c.vsize_bytes = c.vsize_bytes.saturating_add(s.vsize_bytes);
            c.processes = c.processes.saturating_add(1);
            if let Some(i) = io(*pid) {
                c.read_bytes = c.read_bytes.saturating_add(i.read_bytes);
                c.write_bytes = c.write_bytes.saturating_add(i.write_bytes);
            }
        }
        c
    }
}

/// Reads `<root>/<pid>/io`; `None` when it cannot be read or parsed.
pub fn read_io(root: &Path, pid: u32) -> Option<ProcIo> {
    let text = std::fs::read_to_string(root.join(pid.to_string()).join("io")).ok()?;
    parse_io(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `/proc/<pid>/stat` line as Linux writes it (52 fields).
    fn stat_line(pid: u32, comm: &str, ppid: u32, pgrp: u32, ticks: [i64; 4], rss: u64) -> String {
        format!(
            "{pid} ({comm}) S {ppid} {pgrp} {pgrp} 0 -1 4194560 120 0 0 0 {} {} {} {} 20 0 1 0 \
             5000 {} {rss} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 \
             0 0 0",
            ticks[0],
            ticks[1],
            ticks[2],
            ticks[3],
            rss * 4096 * 3,
        )
    }

    #[test]
    fn a_stat_line_with_a_hostile_command_name_parses() {
        let line = stat_line(42, "evil) S 1 1 (name", 7, 42, [10, 5, 3, 2], 100);
        let s = parse_stat(&line).unwrap();
        assert_eq!(
            s,
            ProcStat {
                pid: 42,
                ppid: 7,
                pgrp: 42,
                cpu_ticks: 20,
                vsize_bytes: 100 * 4096 * 3,
                rss_pages: 100,
            }
        );
        // A real line from a kernel thread: ppid 2, no memory.
        let kthread = "11 (rcu_sched) I 2 0 0 0 -1 2129984 0 0 0 0 0 79 0 0 20 0 1 0 9 0 0 \
                       18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 \
                       0 0 0 0 0 0";
        let k = parse_stat(kthread).unwrap();
        assert_eq!((k.pid, k.ppid, k.cpu_ticks, k.rss_pages), (11, 2, 79, 0));
        // Negative children's times count as none; nonsense is None, not a panic.
        let odd = stat_line(5, "x", 1, 5, [1, 1, -4, -4], 1);
        assert_eq!(parse_stat(&odd).unwrap().cpu_ticks, 2);
        for bad in [
            "",
            "12",
            "12 (x",
            "x (y) S 1 1",
            "12 (x) S 1 1 1 0 -1 0 0 0 0 0 zz",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
        assert_eq!(parse_stat(&line[..line.len() / 3]), None, "truncated");
    }

    #[test]
    fn an_io_file_parses_and_a_partial_one_does_not() {
        let io = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n\
                  read_bytes: 4096\nwrite_bytes: 323932160\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_io(io),
            Some(ProcIo {
                read_bytes: 4096,
                write_bytes: 323_932_160
            })
        );
        assert_eq!(parse_io("rchar: 1\nwchar: 2\n"), None);
        assert_eq!(parse_io("read_bytes: -1\nwrite_bytes: 2\n"), None);
        assert_eq!(parse_io(""), None);
    }

    fn proc(pid: u32, ppid: u32, pgrp: u32, ticks: u64) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            pgrp,
            cpu_ticks: ticks,
            vsize_bytes: 1000,
            rss_pages: 10,
        }
    }

    #[test]
    fn trees_follow_parents_and_a_containers_process_group() {
        // 1 init; 100 the nodemanager; 200 a container (its own group) with a child 201 and a
        // grandchild 202; 300 orphaned from 200's group, adopted by init; 400 someone else's.
        let t = Table::from_stats([
            proc(1, 0, 1, 0),
            proc(100, 1, 100, 50),
            proc(200, 100, 200, 10),
            proc(201, 200, 200, 20),
            proc(202, 201, 200, 30),
            proc(300, 1, 200, 40),
            proc(400, 1, 400, 99),
        ]);
        let ids = |s: BTreeSet<u32>| s.into_iter().collect::<Vec<_>>();
        assert_eq!(ids(t.tree(200, false)), [200, 201, 202]);
        assert_eq!(ids(t.tree(200, true)), [200, 201, 202, 300]);
        assert_eq!(ids(t.tree(100, false)), [100, 200, 201, 202]);
        assert!(t.tree(999, true).is_empty(), "a vanished root");
        // Counters: every member's ticks and memory; io only where readable.
        let c = t.counters(&t.tree(200, true), |pid| {
            (pid != 202).then_some(ProcIo {
                read_bytes: u64::from(pid),
                write_bytes: 1,
            })
        });
        assert_eq!(
            c,
            TreeCounters {
                cpu_ticks: 100,
                read_bytes: 200 + 201 + 300,
                write_bytes: 3,
                rss_pages: 40,
                vsize_bytes: 4000,
                processes: 4,
            }
        );
    }

    #[test]
    fn a_made_up_proc_directory_is_read_skipping_what_is_not_a_process() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("10/stat", &stat_line(10, "nm", 1, 10, [5, 5, 0, 0], 2));
        put("10/io", "read_bytes: 7\nwrite_bytes: 8\n");
        put("11/stat", &stat_line(11, "task", 10, 11, [1, 0, 0, 0], 1));
        put("12/stat", "garbage");
        put("self/stat", &stat_line(10, "nm", 1, 10, [5, 5, 0, 0], 2));
        std::fs::create_dir_all(dir.path().join("13")).unwrap(); // vanished: no stat
        put("cpuinfo", "processor: 0");
        let t = Table::read(dir.path()).unwrap();
        assert_eq!(t.stats.keys().copied().collect::<Vec<_>>(), [10, 11]);
        assert_eq!(
            read_io(dir.path(), 10),
            Some(ProcIo {
                read_bytes: 7,
                write_bytes: 8
            })
        );
        assert_eq!(read_io(dir.path(), 11), None);
        assert!(Table::read(&dir.path().join("absent")).is_none());
    }
}
