use super::*;
use crate::config::ClusterConfig;
use crate::engine::Outcome;
use crate::engine::{alone, simulate};

/// `maps` maps of `seconds` each (node-local on node 0), `reduces` reduces, a profile
/// whose maps take 10 s (every test's maps do).
fn job(id: &str, submit: Seconds, maps: usize, seconds: f64, reduces: u32) -> SimJob {
    SimJob::scripted(id, submit, &vec![seconds; maps], reduces)
}

fn cluster(nodes: u32, per_node: u32) -> Experiment {
    Experiment {
        cluster: ClusterConfig {
            nodes,
            containers_per_node: per_node,
            nodes_per_rack: 1,
            heartbeat: 1.0,
            ..ClusterConfig::default()
        },
        ..Experiment::default()
    }
}

fn with_deadline(job: SimJob, exp: &Experiment, deadline: Seconds) -> SharedJob {
    let alone = alone(&job, exp, 0);
    SharedJob {
        arrival: job.submit,
        alone,
        deadline,
        job,
    }
}

fn by_id<'r>(results: &'r [SharedResult], id: &str) -> &'r SharedResult {
    results
        .iter()
        .find(|r| r.result.job == id)
        .expect("the job")
}

#[test]
fn a_master_waits_for_room_within_the_masters_share_its_deadline_running() {
    // Three containers, masters at most a third: one master at a time. `a` (3 maps of
    // 10 s) holds it until it answers; `b` and `c`, arriving at 1, wait for it.
    let mut exp = cluster(1, 3);
    exp.cluster.master_share = Some(0.34);
    let a = with_deadline(job("a", 0.0, 3, 10.0, 1), &exp, 1000.0);
    let b = with_deadline(job("b", 1.0, 1, 10.0, 1), &exp, 1000.0);
    let (day, _) = simulate_day(
        &[a.clone(), b.clone()],
        RmPolicy::Fifo,
        PolicyKind::Full,
        &exp,
    );
    let (ra, rb) = (&by_id(&day, "a").result, &by_id(&day, "b").result);
    assert_eq!((ra.k, rb.k), (3, 1));
    // `a`'s tasks had two containers (its master holds the third): two waves of maps.
    assert!(ra.completion > a.alone, "{ra:?} vs alone {}", a.alone);
    // `b` started when `a` answered, and took from there what it takes alone.
    let b_from_a_end = {
        let mut later = b.clone();
        later.arrival = ra.completion;
        let (r, _) = simulate_day(&[later], RmPolicy::Fifo, PolicyKind::Full, &exp);
        r[0].result.completion
    };
    let waited = ra.completion - 1.0;
    assert!(
        (rb.completion - (waited + b_from_a_end)).abs() < 1e-3,
        "b: {} = waited {waited} + {b_from_a_end}",
        rb.completion
    );
    assert_eq!(
        rb.deadline, 1000.0,
        "reported against the deadline drawn for it"
    );
    // Without masters' containers `b` starts on arrival.
    let mut free = exp.clone();
    free.cluster.master_share = None;
    let (day, _) = simulate_day(&[a.clone(), b], RmPolicy::Fifo, PolicyKind::Full, &free);
    assert!(by_id(&day, "b").result.completion < waited);
    // A Dart master that starts past its deadline answers at once, from nothing: missed.
    let c = with_deadline(job("c", 1.0, 1, 10.0, 1), &exp, 2.0);
    let (day, _) = simulate_day(&[a, c], RmPolicy::Fifo, PolicyKind::Dart, &exp);
    let rc = &by_id(&day, "c").result;
    assert_eq!((rc.outcome(), rc.k), (Outcome::Missed, 0), "{rc:?}");
    // (Its reduce, of no input, still takes the reduce law's fixed second.)
    assert!(
        rc.completion >= waited && rc.completion <= waited + 1.0 + 1e-6,
        "{rc:?}"
    );
}

#[test]
fn start_up_costs_delay_a_job_past_a_deadline_it_meets_without_them() {
    // One map of 1 s and one reduce of 1 s (its 1000 B cross in 1 s), alone. A master
    // starting up in 0.5 s and tasks in 0.25 s each put its answer 1 s later: the map and
    // the reduce each pay their launch, the reduce's input waiting for the map.
    let mut exp = cluster(1, 3);
    exp.cluster.master_share = Some(0.34);
    // Due 0.5 s after its time alone on `exp`, or after `alone`.
    let day = |exp: &Experiment, alone: Option<Seconds>| {
        let mut j = prepare(
            vec![job("a", 0.0, 1, 1.0, 1)],
            exp,
            DeadlineFactor::ARIA,
            1.0,
        );
        j[0].deadline = alone.unwrap_or(j[0].alone) + 0.5;
        simulate_day(&j, RmPolicy::Fifo, PolicyKind::Full, exp).0[0].clone()
    };
    let fast = day(&exp, None);
    exp.cluster.master_startup_s = 0.5;
    exp.cluster.task_startup_s = 0.25;
    let slow = day(&exp, None);
    assert_eq!(fast.result.outcome(), Outcome::Met, "{fast:?}");
    assert!(
        (slow.result.completion - fast.result.completion - 1.0).abs() < 1e-5,
        "{slow:?} vs {fast:?}"
    );
    // Its master waited for no container: its start-up is not a wait.
    assert_eq!((fast.master_wait, slow.master_wait), (0.0, 0.0));
    // Its time alone counts the costs too, so a deadline drawn on it is met ...
    assert!((slow.alone - fast.alone - 1.0).abs() < 1e-5, "{slow:?}");
    assert_eq!(slow.result.outcome(), Outcome::Met, "{slow:?}");
    // ... and one drawn without them, as `yard replay` draws its live jobs', is not.
    let late = day(&exp, Some(fast.alone));
    assert_eq!(late.result.outcome(), Outcome::Missed, "{late:?}");
}

#[test]
fn a_job_alone_on_the_shared_cluster_takes_its_time_alone() {
    // One container: maps end at 10, 20, 30; the outputs cross by 31; the reduce takes 3 s.
    let exp = cluster(1, 1);
    let j = with_deadline(job("a", 5.0, 3, 10.0, 1), &exp, 100.0);
    assert!((j.alone - 34.0).abs() < 1e-6, "{}", j.alone);
    let isolated = simulate(
        &j.job,
        &Plan::whole_cluster(&exp),
        PolicyKind::Full,
        &exp,
        0,
    );
    for rm in RmPolicy::ALL {
        let (results, stats) = simulate_day(std::slice::from_ref(&j), rm, PolicyKind::Full, &exp);
        let r = &results[0].result;
        assert!((r.completion - 34.0).abs() < 1e-6, "{rm}: {r:?}");
        assert_eq!((r.k, r.processed_fraction), (3, 1.0), "{rm}");
        assert_eq!(r.completion, isolated.completion, "{rm}");
        assert!((stats.span - 39.0).abs() < 1e-6, "{rm}: {stats:?}");
    }
}

#[test]
fn under_edf_a_freed_container_goes_to_the_earlier_deadline_and_under_fifo_to_the_earlier_arrival()
{
    // One container, which `first` holds until it answers at 10 (a master keeps its
    // containers across tasks). `loose` (2 maps of 10 s, due in 1000 s) arrives at 1,
    // `tight` (1 map of 10 s, due 25 s after it arrives) at 2. FIFO hands the container
    // to loose at 10: tight runs 30–40 and misses. EDF hands it to tight: 10–20, met.
    let exp = cluster(1, 1);
    let jobs = [
        with_deadline(job("first", 0.0, 1, 10.0, 0), &exp, 1000.0),
        with_deadline(job("loose", 1.0, 2, 10.0, 0), &exp, 1000.0),
        with_deadline(job("tight", 2.0, 1, 10.0, 0), &exp, 25.0),
    ];
    let (fifo, _) = simulate_day(&jobs, RmPolicy::Fifo, PolicyKind::Full, &exp);
    let (edf, _) = simulate_day(&jobs, RmPolicy::Edf, PolicyKind::Full, &exp);
    let tight = |r: &[SharedResult]| by_id(r, "tight").result.clone();
    assert_eq!(
        tight(&fifo).outcome(),
        Outcome::Missed,
        "{:?}",
        tight(&fifo)
    );
    assert!(
        (tight(&fifo).completion - 38.0).abs() < 1e-6,
        "{:?}",
        tight(&fifo)
    );
    assert_eq!(tight(&edf).outcome(), Outcome::Met, "{:?}", tight(&edf));
    assert!(
        (tight(&edf).completion - 18.0).abs() < 1e-6,
        "{:?}",
        tight(&edf)
    );
    // Loose reads both maps either way, later under EDF.
    assert_eq!(by_id(&edf, "loose").result.k, 2);
    assert!(by_id(&edf, "loose").result.completion > by_id(&fifo, "loose").result.completion);
}

#[test]
fn with_a_container_per_task_edf_serves_the_earlier_deadline_at_every_task_end() {
    // One container. `early` (4 maps of 10 s, due in 1000 s) arrives first and holds it;
    // `late` (1 map of 10 s, due 25 s after its arrival at 1) waits. Reusing containers,
    // early keeps it for all four maps under any policy: late runs 40–50 and misses.
    // With a container per task, early gives it back at 10 and EDF hands it to late
    // (10–20, answered 19 s after it arrived), where FIFO hands it back to early.
    let mut exp = cluster(1, 1);
    let jobs = [
        with_deadline(job("early", 0.0, 4, 10.0, 0), &exp, 1000.0),
        with_deadline(job("late", 1.0, 1, 10.0, 0), &exp, 25.0),
    ];
    let late = |rm: RmPolicy, exp: &Experiment| {
        let (r, _) = simulate_day(&jobs, rm, PolicyKind::Full, exp);
        by_id(&r, "late").result.clone()
    };
    assert!((late(RmPolicy::Edf, &exp).completion - 49.0).abs() < 1e-6);
    exp.policy.one_task_per_container = true;
    let (edf, fifo) = (late(RmPolicy::Edf, &exp), late(RmPolicy::Fifo, &exp));
    assert_eq!(edf.outcome(), Outcome::Met, "{edf:?}");
    assert!((edf.completion - 19.0).abs() < 1e-6, "{edf:?}");
    assert_eq!(fifo.outcome(), Outcome::Missed, "{fifo:?}");
    for rm in [RmPolicy::Edf, RmPolicy::Fifo] {
        let (r, _) = simulate_day(&jobs, rm, PolicyKind::Full, &exp);
        assert_eq!(by_id(&r, "early").result.k, 4, "{rm}: every map still read");
    }
}

#[test]
fn every_policy_answers_with_a_container_per_task() {
    // 6 maps and 2 reduces on 2 × 2 containers, a loose deadline: each policy, handing
    // every container back as its task ends and asking anew, reads every map and answers.
    let mut exp = cluster(2, 2);
    exp.policy.one_task_per_container = true;
    let j = with_deadline(job("j", 0.0, 6, 10.0, 2), &exp, 500.0);
    for policy in PolicyKind::ALL {
        for rm in [RmPolicy::Fifo, RmPolicy::MinEdfWc] {
            let (r, _) = simulate_day(std::slice::from_ref(&j), rm, policy, &exp);
            let r = &r[0].result;
            assert_eq!(r.outcome(), Outcome::Met, "{policy} under {rm}: {r:?}");
            assert_eq!(r.k, 6, "{policy} under {rm}: {r:?}");
        }
    }
}

#[test]
fn minedf_wc_takes_back_spare_containers_for_a_deadline_and_the_killed_tasks_run_again() {
    // Four containers. `loose` arrives first, due far away: its quota is one container,
    // and MinEDF-WC lends it the other three. `tight` (6 maps of 10 s, due in 30 s) then
    // needs three by ARIA's bounds, and the releases the profiles predict (loose's maps
    // end at 10) come too late for them, so the rm takes three spare containers back at
    // once, killing loose's tasks on them: tight runs its maps 2–12 and 12–22 and
    // answers 20 s after it arrived. Loose still reads every map, the killed ones again.
    let exp = cluster(1, 4);
    let jobs = [
        with_deadline(job("loose", 0.0, 8, 10.0, 0), &exp, 10_000.0),
        with_deadline(job("tight", 2.0, 6, 10.0, 0), &exp, 30.0),
    ];
    let (r, stats) = simulate_day(&jobs, RmPolicy::MinEdfWc, PolicyKind::Full, &exp);
    let (loose, tight) = (by_id(&r, "loose"), by_id(&r, "tight"));
    assert!(
        loose.preempted > 0 && stats.spare_kills > 0,
        "{stats:?} {loose:?}"
    );
    assert!(stats.spare_allocations > 0, "{stats:?}");
    assert_eq!(tight.result.outcome(), Outcome::Met, "{tight:?}");
    assert!((tight.result.completion - 20.0).abs() < 1e-6, "{tight:?}");
    assert_eq!((loose.result.k, loose.result.processed_fraction), (8, 1.0));
    // EDF has no spare containers to take back: tight waits for loose to answer (20) and
    // runs 20–40.
    let (r, stats) = simulate_day(&jobs, RmPolicy::Edf, PolicyKind::Full, &exp);
    assert_eq!(stats.spare_kills, 0);
    assert_eq!(by_id(&r, "tight").result.outcome(), Outcome::Missed);
}

#[test]
fn a_day_is_the_same_day_whatever_ran_before_it() {
    let exp = cluster(2, 2);
    let jobs = prepare(
        (0..12)
            .map(|i| {
                job(
                    &format!("j{i}"),
                    f64::from(i) * 3.0,
                    1 + i as usize % 5,
                    7.0,
                    i % 3,
                )
            })
            .collect(),
        &exp,
        DeadlineFactor::ARIA,
        1.0,
    );
    let once = simulate_day(&jobs, RmPolicy::MinEdfWc, PolicyKind::Dart, &exp);
    let _ = simulate_day(&jobs, RmPolicy::Edf, PolicyKind::Full, &exp);
    let again = simulate_day(&jobs, RmPolicy::MinEdfWc, PolicyKind::Dart, &exp);
    let key = |d: &(Vec<SharedResult>, DayStats)| {
        d.0.iter()
            .map(|r| {
                (
                    r.result.job.clone(),
                    r.result.completion.to_bits(),
                    r.result.k,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&once), key(&again));
    assert_eq!(once.1, again.1);
    assert_eq!(once.0.len(), 12, "every job answers");
    for r in &once.0 {
        assert!(r.deadline_exceeded() >= 0.0);
        assert!(
            r.alone > 0.0 && r.result.deadline >= r.alone && r.result.deadline <= 2.0 * r.alone
        );
    }
}

#[test]
fn deadline_factors_parse_or_say_what_to_fix() {
    assert_eq!(DeadlineFactor::parse("1,2"), Ok(DeadlineFactor::ARIA));
    assert_eq!(
        DeadlineFactor::parse("1.5"),
        Ok(DeadlineFactor { lo: 1.5, hi: 1.5 })
    );
    for bad in ["2,1", "0,1", "x", "1,2,3", "-1,2", "inf"] {
        assert!(DeadlineFactor::parse(bad).is_err(), "{bad}");
    }
}

/// Capacity queues on the shared cluster: `a` (queue `a`) floods the one node; `b` (queue
/// `b`, arriving at 1 s) waits out the preemption wait, then takes back its guaranteed half,
/// and answers far sooner than behind `a` under one FIFO queue.
#[test]
fn a_queue_takes_its_guarantee_back_from_a_flood_after_the_wait() {
    use yard_cluster::queues::{PreemptionFile, QueueEntry, QueueFile};
    let plain = cluster(1, 4);
    let entry = |name: &str| QueueEntry {
        name: name.into(),
        capacity: 50.0,
        maximum_capacity: None,
        user_limit_factor: Some(2.0),
        acl_submit_applications: None,
        policy: None,
    };
    let mut queued = plain.clone();
    queued.cluster.queues = Some(QueueFile {
        preemption: PreemptionFile {
            max_wait_before_kill: Some(5_000),
        },
        queue: vec![entry("a"), entry("b")],
    });
    let day = |exp: &Experiment| {
        let a = with_deadline(job("a", 0.0, 20, 10.0, 1), exp, 1000.0);
        let b = with_deadline(job("b", 1.0, 4, 10.0, 1), exp, 1000.0);
        simulate_day(&[a, b], RmPolicy::Fifo, PolicyKind::Full, exp).0
    };
    let (alone, shared) = (day(&plain), day(&queued));
    let b_plain = by_id(&alone, "b");
    let (a_queued, b_queued) = (by_id(&shared, "a"), by_id(&shared, "b"));
    assert_eq!(b_plain.preempted, 0);
    assert!(a_queued.preempted >= 2, "{a_queued:?}");
    assert_eq!(b_queued.preempted, 0);
    assert!(
        b_queued.result.completion + 20.0 < b_plain.result.completion,
        "b: {} with queues, {} behind a's flood",
        b_queued.result.completion,
        b_plain.result.completion
    );
    // The report adds a row per queue, over its own job.
    let jobs = [
        with_deadline(job("a", 0.0, 20, 10.0, 1), &queued, 1000.0),
        with_deadline(job("b", 1.0, 4, 10.0, 1), &queued, 1000.0),
    ];
    let report = run_days(
        &jobs,
        &[RmPolicy::Fifo],
        &[PolicyKind::Full],
        &queued,
        DeadlineFactor::ARIA,
        1.0,
    );
    let per_queue: Vec<(&str, u64)> = report
        .rows
        .iter()
        .filter(|r| r.bin.starts_with("queue "))
        .map(|r| (r.bin.as_str(), r.preempted_containers))
        .collect();
    assert_eq!(per_queue.len(), 2, "{:?}", report.rows);
    assert_eq!(per_queue[0].0, "queue a");
    assert_eq!(per_queue[0].1, u64::from(a_queued.preempted));
    assert_eq!(per_queue[1], ("queue b", 0));
}
