use super::*;
use crate::config::ClusterConfig;
use crate::engine::Outcome;

const OFF: Hog = Hog {
    on: false,
    next: f64::INFINITY,
};

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

fn shared(job: SimJob, deadline: Seconds) -> SharedJob {
    SharedJob {
        arrival: job.submit,
        alone: job.task_seconds(),
        deadline,
        job,
    }
}

fn setup(
    containers: u32,
    classifier: Option<ClassifierConfig>,
    hogs: Option<Vec<[Hog; 2]>>,
    jobs: usize,
) -> LoadSetup {
    LoadSetup {
        load: LoadConfig::for_containers(containers),
        rule: OverloadRule::default(),
        classifier,
        placement: Placement::Pack,
        reduce_output_ratio: vec![1.0; jobs],
        scripted_hogs: hogs,
    }
}

#[test]
fn a_running_task_is_re_rated_when_a_hog_switches_under_it() {
    // One core, one container: a 10 s CPU-bound map. The CPU hog (one thread) comes on at
    // 4 s: the map has done 4 s of work, and shares the core for the other 6: 12 s more.
    let exp = cluster(1, 1);
    let job = [shared(SimJob::scripted("a", 0.0, &[10.0], 0), 1000.0)];
    let run = |hog: Hog| {
        let s = setup(1, None, Some(vec![[hog, OFF]]), 1);
        simulate_loaded_day(&job, RmPolicy::Fifo, PolicyKind::Full, &exp, &s)
    };
    let (r, _, stats) = run(Hog {
        on: false,
        next: 4.0,
    });
    assert!(
        (r[0].result.completion - 16.0).abs() < 1e-5,
        "{:?}",
        r[0].result
    );
    let slowdown = stats.mean_task_slowdown().unwrap();
    assert!((slowdown - 1.6).abs() < 1e-5, "{slowdown}");
    assert_eq!((stats.tasks_begun, stats.tasks_done), (1, 1));
    assert_eq!(stats.began_on_hogged, 0);
    // On from the start and off at 4 s: 2 s of work by then, 8 s after: done at 12 s.
    let (r, _, stats) = run(Hog {
        on: true,
        next: 4.0,
    });
    assert!(
        (r[0].result.completion - 12.0).abs() < 1e-5,
        "{:?}",
        r[0].result
    );
    assert!((stats.mean_task_slowdown().unwrap() - 1.2).abs() < 1e-5);
    assert_eq!(stats.began_on_hogged, 1);
    // No hog: the engine's own 10 s, as without the load model.
    let (r, _, stats) = run(OFF);
    assert!((r[0].result.completion - 10.0).abs() < 1e-5);
    assert_eq!(stats.mean_task_slowdown(), Some(1.0));
    assert_eq!(stats.overloaded_node_seconds, 0.0);
    let (plain, _) = crate::shared::simulate_day(&job, RmPolicy::Fifo, PolicyKind::Full, &exp);
    assert_eq!(plain[0].result.completion, r[0].result.completion);
}

#[test]
fn an_overloaded_node_counts_its_seconds_and_its_first_map_types_the_job() {
    // One core: a 60 s map with the CPU hog on throughout: two runnable on one core, the
    // load average climbs past 1 within a tick and stays there while the map runs (120 s).
    let exp = cluster(1, 1);
    let job = [shared(SimJob::scripted("a", 0.0, &[60.0], 0), 1000.0)];
    let hog = Hog {
        on: true,
        next: f64::INFINITY,
    };
    let s = setup(1, None, Some(vec![[hog, OFF]]), 1);
    let (r, _, stats) = simulate_loaded_day(&job, RmPolicy::Fifo, PolicyKind::Full, &exp, &s);
    assert!((r[0].result.completion - 120.0).abs() < 1e-5);
    assert_eq!(r[0].result.outcome(), Outcome::Met);
    assert!(
        (115.0..=120.0).contains(&stats.overloaded_node_seconds),
        "{}",
        stats.overloaded_node_seconds
    );
    assert_eq!(
        stats.overloaded_placed_on_hog,
        stats.overloaded_node_seconds
    );
    assert_eq!(stats.hogged_node_seconds, 120.0);
    // 1,100 bytes in 120 s against a 100 MB/s disk: a CPU-bound map part, no reduce.
    assert_eq!(stats.typed, [[1, 0], [0, 0]]);
}

/// Sixty jobs of two 20 s maps (whose input is nowhere in particular: no node-local asks,
/// so they run remote, 30 s), one every 20 s, on two nodes of four cores: three containers
/// busy on average, which the calm node could hold. Node 0 runs a CPU hog (2 threads) and
/// an IO hog throughout, so a second task there overloads it (2 + 1 + 2 > 4); node 1 is
/// calm. Without the classifier FIFO fills the first node with room, node 0.
fn hand_made(classifier: Option<ClassifierConfig>) -> LoadStats {
    let mut exp = cluster(2, 4);
    exp.policy.one_task_per_container = true;
    let jobs: Vec<SharedJob> = (0..60)
        .map(|i| {
            let mut j = SimJob::scripted(&format!("j{i}"), 20.0 * f64::from(i), &[20.0; 2], 0);
            j.truth.maps.iter_mut().for_each(|m| m.replicas.clear());
            shared(j, 10_000.0)
        })
        .collect();
    let on = Hog {
        on: true,
        next: f64::INFINITY,
    };
    let s = setup(4, classifier, Some(vec![[on, on], [OFF, OFF]]), jobs.len());
    let (r, _, stats) = simulate_loaded_day(&jobs, RmPolicy::Fifo, PolicyKind::Full, &exp, &s);
    assert_eq!(r.len(), 60);
    assert!(r.iter().all(|r| r.result.outcome() == Outcome::Met));
    stats
}

#[test]
fn with_the_classifier_the_hogged_node_takes_fewer_tasks_and_is_overloaded_less() {
    let off = hand_made(None);
    let on = hand_made(Some(ClassifierConfig::default()));
    assert_eq!((off.tasks_done, on.tasks_done), (120, 120));
    assert_eq!(off.labelled, [0, 0]);
    assert!(on.labelled[0] + on.labelled[1] >= 20, "{:?}", on.labelled);
    // Without it, FIFO fills node 0 first (node-local, and first with room).
    assert!(off.began_on_hogged >= 60, "{off:?}");
    // With it, after the first minutes' lessons, the calm node takes the tasks.
    assert!(
        on.began_on_hogged * 3 < off.began_on_hogged,
        "{} vs {}",
        on.began_on_hogged,
        off.began_on_hogged
    );
    assert!(
        on.overloaded_node_seconds * 3.0 < off.overloaded_node_seconds,
        "{} vs {}",
        on.overloaded_node_seconds,
        off.overloaded_node_seconds
    );
    assert!(on.mean_task_slowdown() < off.mean_task_slowdown());
}

#[test]
fn the_same_seed_gives_the_same_rows_and_another_seed_other_hogs() {
    let jobs: Vec<SharedJob> = (0..12)
        .map(|i| {
            let maps = vec![30.0 + f64::from(i); 1 + i as usize % 4];
            shared(
                SimJob::scripted(&format!("j{i}"), 20.0 * f64::from(i), &maps, i % 2),
                5_000.0,
            )
        })
        .collect();
    let report = |seed: u64| {
        let mut experiment = cluster(3, 2);
        experiment.seed = seed;
        experiment.policy.one_task_per_container = true;
        let mut load = LoadConfig::for_containers(2);
        // Hogs that switch often enough to meet a short day.
        load.hog_on_mean = 60.0;
        load.hog_off_mean = 60.0;
        let s = OverloadSetup {
            experiment,
            load,
            classifier: ClassifierConfig::default(),
            rm_policies: vec![RmPolicy::Fifo],
            policies: vec![PolicyKind::Dart, PolicyKind::Full],
            variants: vec![Variant::Paper],
        };
        run(&s, &jobs, &[1.0; 12], DeadlineFactor::ARIA, 1.0)
    };
    let (a, b) = (report(3), report(3));
    assert_eq!(a.rows, b.rows);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(a.rows.len(), 4);
    assert_eq!(a.goals.len(), 2);
    let flags: Vec<(String, bool)> = a
        .rows
        .iter()
        .map(|r| (r.policy.clone(), r.classifier))
        .collect();
    assert_eq!(
        flags,
        [
            ("dart".to_owned(), false),
            ("dart".to_owned(), true),
            ("full".to_owned(), false),
            ("full".to_owned(), true)
        ]
    );
    for r in &a.rows {
        let shares = r.missed_fraction + r.empty_fraction + r.met_fraction;
        assert!((shares - 1.0).abs() < 1e-9, "{r:?}");
        assert!(r.hogged_node_seconds > 0.0, "{r:?}");
    }
    let other = report(4);
    assert_ne!(
        a.rows[2].hogged_node_seconds, other.rows[2].hogged_node_seconds,
        "another seed, other hogs"
    );
}

#[test]
fn every_variant_runs_beside_the_reference_and_the_same_seed_repeats() {
    let jobs: Vec<SharedJob> = (0..10)
        .map(|i| {
            let maps = vec![40.0 + f64::from(i); 2 + i as usize % 3];
            shared(
                SimJob::scripted(&format!("j{i}"), 15.0 * f64::from(i), &maps, i % 2),
                5_000.0,
            )
        })
        .collect();
    let report = |seed: u64| {
        let mut experiment = cluster(4, 4);
        experiment.seed = seed;
        experiment.policy.one_task_per_container = true;
        let mut load = LoadConfig::for_containers(4);
        load.hog_on_mean = 60.0;
        load.hog_off_mean = 60.0;
        let s = OverloadSetup {
            experiment,
            load,
            classifier: ClassifierConfig {
                min_samples: 4,
                ..ClassifierConfig::default()
            },
            rm_policies: vec![RmPolicy::Fifo],
            policies: vec![PolicyKind::Full],
            variants: vec![
                Variant::Paper,
                Variant::Yard,
                Variant::Spread,
                Variant::Yard,
            ],
        };
        run(&s, &jobs, &[1.0; 10], DeadlineFactor::ARIA, 1.0)
    };
    let a = report(5);
    let named: Vec<(Variant, bool)> = a.rows.iter().map(|r| (r.variant, r.classifier)).collect();
    assert_eq!(
        named,
        [
            (Variant::Off, false),
            (Variant::Paper, true),
            (Variant::Yard, true),
            (Variant::Spread, false)
        ],
        "off first, each variant once"
    );
    let judged: Vec<Variant> = a.goals.iter().map(|g| g.variant).collect();
    assert_eq!(judged, [Variant::Paper, Variant::Yard, Variant::Spread]);
    assert!(
        a.rows[2].labelled_good + a.rows[2].labelled_bad > 0,
        "yard's learned"
    );
    assert_eq!(
        a.rows[3].labelled_good + a.rows[3].labelled_bad,
        0,
        "spread learns nothing"
    );
    for r in &a.rows {
        assert_eq!(r.tasks_done, a.rows[0].tasks_done, "{r:?}");
        assert!(
            r.unavoidable_node_seconds <= r.overloaded_node_seconds + 60.0,
            "{r:?}"
        );
    }
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["rows"][2]["variant"], "yard");
    assert_eq!(json["rows"][3]["variant"], "spread");
    assert_eq!(json["rows"][3]["classifier"], false);
    let b = report(5);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn the_unavoidable_overload_is_the_tasks_beyond_the_calm_cores() {
    let cfg = LoadConfig::for_containers(4);
    let node = |cpu: bool, io: bool, tasks: u32| {
        let hog = |on| Hog {
            on,
            next: f64::INFINITY,
        };
        let mut n: Node<u32> = Node::scripted(cfg, hog(cpu), hog(io));
        let demand = crate::load::Demand::of(&cfg, 0.0, 0.0, 1.0);
        (0..tasks).for_each(|t| n.add(t, demand));
        n
    };
    // 4 + 2 tasks; room without going over: 4 + (4 − 2) + (4 − 3) = 7: none need be over.
    let nodes = [
        node(false, false, 4),
        node(true, false, 2),
        node(true, true, 0),
    ];
    assert_eq!(unavoidable(&nodes), 0);
    // 12 tasks on 12 cores of which hogs keep 5: 5 beyond; the node with both hogs takes 3
    // of them, the CPU-hogged 2: two nodes over, whatever the placement.
    let nodes = [
        node(false, false, 4),
        node(true, false, 4),
        node(true, true, 4),
    ];
    assert_eq!(unavoidable(&nodes), 2);
    // One task beyond: the most hogged node takes it.
    let nodes = [
        node(false, false, 4),
        node(true, true, 1),
        node(false, false, 0),
    ];
    assert_eq!(unavoidable(&nodes), 0);
    let nodes = [
        node(false, false, 4),
        node(true, true, 2),
        node(false, false, 4),
    ];
    assert_eq!(unavoidable(&nodes), 1);
}

#[test]
fn goals_are_judged_against_the_run_without_the_classifier() {
    let row = |classifier, ons: f64, thr: f64, missed: f64, met: f64| OverloadRow {
        rm_policy: "fifo".into(),
        policy: "dart".into(),
        classifier,
        variant: if classifier {
            Variant::Paper
        } else {
            Variant::Off
        },
        jobs: 10,
        overloaded_node_seconds: ons,
        overloaded_placed_on_hog: 0.0,
        placement_avoidable_share: None,
        unavoidable_node_seconds: 0.0,
        mean_task_slowdown: Some(1.0),
        relaunched_tasks: 0,
        missed_fraction: missed,
        empty_fraction: 1.0 - missed - met,
        met_fraction: met,
        throughput_tasks_per_s: thr,
        killed_tasks: 0,
        tasks_done: 0,
        span_s: 0.0,
        mean_completion_s: None,
        unanswered: 0,
        busy_fraction: 0.0,
        hogged_node_seconds: 0.0,
        began_on_hogged_fraction: 0.0,
        io_bound_fraction: 0.0,
        io_typed_maps: 0,
        cpu_typed_maps: 0,
        io_typed_reduces: 0,
        cpu_typed_reduces: 0,
        labelled_good: 0,
        labelled_bad: 0,
        overloaded_per_minute: Vec::new(),
    };
    let g = judge(
        &row(false, 100.0, 2.0, 0.1, 0.8),
        &row(true, 40.0, 1.92, 0.1, 0.8),
    );
    assert!((g.overload_cut.unwrap() - 0.6).abs() < 1e-12);
    assert!((g.throughput_loss - 0.04).abs() < 1e-12);
    assert_eq!(
        (g.overload_cut_holds, g.throughput_holds, g.deadlines_hold),
        (Some(true), true, true)
    );
    // Fewer met (more empty), though none more missed: the deadline goal fails.
    let g = judge(
        &row(false, 100.0, 2.0, 0.0, 0.8),
        &row(true, 60.0, 1.8, 0.0, 0.7),
    );
    assert_eq!(
        (g.overload_cut_holds, g.throughput_holds, g.deadlines_hold),
        (Some(false), false, false)
    );
    assert_eq!(g.missed_change, 0.0);
    // Nothing overloaded without it: no cut to judge.
    let g = judge(
        &row(false, 0.0, 2.0, 0.0, 1.0),
        &row(true, 0.0, 2.0, 0.0, 1.0),
    );
    assert_eq!((g.overload_cut, g.overload_cut_holds), (None, None));
}
