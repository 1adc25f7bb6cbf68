use yard_wire::protocol::ContainerEnd;

use super::super::state::tests::{ended, granted};
use super::*;
use crate::{BlockRef, Done, Order, TaskSpec, Work};

const TEXT: &[u8] = b"the cat and the dog\n";

fn scan(blocks: usize) -> Scan {
    let maps: Vec<MapInput> = (0..blocks)
        .map(|i| MapInput {
            split: Split {
                index: i as u32,
                bytes: TEXT.len() as u64,
            },
            block: Some(BlockRef {
                dataset: "d".into(),
                block: format!("b{i}"),
                replicas: vec!["n1:1".into()],
                sha256: None,
            }),
            at: Vec::new(),
            nodes: vec!["n1".into()],
        })
        .collect();
    let mut scan = Scan::new(
        "http://master".into(),
        "application_1_0001",
        maps,
        (0..blocks).rev().collect(),
    );
    scan.max_containers = 1;
    scan
}

fn rider(name: &str, deadline_ms: Option<i64>) -> Attach {
    Attach {
        application: name.into(),
        app: AppSpec::Wordcount { top: 3 },
        reduces: 1,
        deadline_ms: deadline_ms.map(Deadline::from_epoch_ms),
        guard_seconds: 1.0,
    }
}

/// Hands container `c` its next task and finishes it as a task process would.
fn run_next(s: &mut Scan, c: &str) -> Option<TaskSpec> {
    let Some(Order::Run { task }) = s.next_order(c) else {
        return None;
    };
    let done = match &task.work {
        Work::ScanMap { split, riders, .. } => Done {
            output_bytes: 1,
            stats: None,
            partial: None,
            riders: riders
                .iter()
                .map(|r| r.app.map(*split, TEXT, r.reduces).unwrap().stats)
                .collect(),
            measured: Some(crate::Measured {
                input_bytes: TEXT.len() as u64,
                output_bytes: 1,
                seconds: 0.5,
                disk_rate_env: None,
                tail: None,
            }),
        },
        Work::Reduce { population, .. } => Done {
            output_bytes: 0,
            stats: None,
            partial: Some(task.app.reduce(*population, &[]).unwrap()),
            riders: Vec::new(),
            measured: None,
        },
        Work::Map { .. } => unreachable!("a scan hands out no plain map"),
    };
    assert!(!s.done(&task.attempt, done).kill);
    Some(*task)
}

#[test]
fn a_read_lost_with_its_container_is_read_again_and_a_late_rider_gets_every_block() {
    let mut s = scan(3);
    s.attach(rider("a", None));
    s.allocated(AllocateReply {
        allocated: vec![granted("c1", "n1")],
        completed: Vec::new(),
        deadline: None,
    });
    let Some(Order::Run { task }) = s.next_order("c1") else {
        panic!("a read")
    };
    assert!(matches!(task.work, Work::ScanMap { ref riders, .. } if riders.len() == 1));
    // A second job joins while the first read is in flight; then the container is lost.
    s.attach(rider("b", None));
    s.allocated(ended("c1", ContainerEnd::Lost, None));
    assert_eq!(s.read_failures.values().sum::<u32>(), 1);
    s.allocated(AllocateReply {
        allocated: vec![granted("c2", "n1")],
        completed: Vec::new(),
        deadline: None,
    });
    while run_next(&mut s, "c2").is_some() {}
    assert!(s.all_answered() && s.idle());
    // The lost read counted for nobody: each block read once, for both jobs.
    assert_eq!(s.reads, [1, 1, 1]);
    for r in &s.riders {
        let mut read = r.read.clone();
        read.sort_unstable();
        assert_eq!(read, [0, 1, 2], "{}", r.application);
        let answer = r.outcome.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(answer["words"]["observed"], 15, "{answer}");
    }
    // Nothing left: the container goes back.
    assert!(matches!(s.next_order("c2"), Some(Order::Exit)));
    assert_eq!(s.releases, ["c2"]);
}

#[test]
fn a_rider_stops_riding_when_its_deadline_nears_and_later_reads_skip_it() {
    let mut s = scan(4);
    let now = 1_000_000;
    s.attach(rider("a", None));
    s.attach(rider("b", Some(now + 10_000)));
    s.allocated(AllocateReply {
        allocated: vec![granted("c1", "n1")],
        completed: Vec::new(),
        deadline: None,
    });
    // A read in flight rides both.
    let Some(Order::Run { task: first }) = s.next_order("c1") else {
        panic!("a read")
    };
    // 10 s left against a 1 s guard and two 1 s reads: it rides on; at 2 s left it stops.
    assert!(!s.cut_due(now));
    assert!(s.cut_due(now + 8_000));
    assert!(!s.cut_due(now + 8_100), "once");
    assert_eq!(s.riders[1].to_reduce, [0]);
    // The read that was in flight when it stopped does not count for it.
    let Work::ScanMap { split, riders, .. } = &first.work else {
        panic!("a read")
    };
    let stats = riders
        .iter()
        .map(|r| r.app.map(*split, TEXT, 1).unwrap().stats)
        .collect();
    let done = Done {
        output_bytes: 1,
        stats: None,
        partial: None,
        riders: stats,
        measured: None,
    };
    s.done(&first.attempt, done);
    assert!(s.riders[1].read.is_empty());
    // Its reduce runs before any further read, from no block: an empty answer.
    let reduce = run_next(&mut s, "c1").unwrap();
    assert!(matches!(reduce.work, Work::Reduce { .. }));
    assert!(s.riders[1].outcome.is_some());
    assert_eq!(s.rider_view(1)["processedFraction"], 0.0);
    // The other rides every block.
    while run_next(&mut s, "c1").is_some() {}
    assert_eq!(s.riders[0].read.len(), 4);
    assert_eq!(s.reads, [1, 1, 1, 1]);
}

#[test]
fn a_deadline_given_while_a_job_rides_stops_it_in_time_and_one_that_stopped_keeps_its_own() {
    let mut s = scan(4);
    let now = 1_000_000;
    s.attach(rider("a", None));
    s.attach(rider("b", Some(now + 10_000)));
    // Without a deadline "a" rides on.
    assert!(!s.cut_due(now));
    // Given one 2 s away (under its 1 s guard and two 1 s reads): it stops at once.
    let soon = Deadline::from_epoch_ms(now + 2_000);
    assert!(s.move_deadline(0, soon));
    assert!(!s.move_deadline(0, soon), "the same deadline is no move");
    assert!(s.cut_due(now));
    assert!(s.riders[0].cut && !s.riders[1].cut);
    assert_eq!(s.status()["jobs"][0]["deadlineMs"], now + 2_000);
    // A job that stopped riding keeps the deadline it stopped by; "b" moved later rides on
    // past its old one; a rider the host does not know is no move.
    assert!(!s.move_deadline(0, Deadline::from_epoch_ms(now + 60_000)));
    assert!(s.move_deadline(1, Deadline::from_epoch_ms(now + 60_000)));
    assert!(!s.cut_due(now + 8_000));
    assert!(!s.move_deadline(7, soon));
}
