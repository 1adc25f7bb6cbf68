use super::*;

/// Digest §2.2: 8 good and 4 bad samples over F1 = job CPU (0 low, 1 high) and F2 = node
/// load (0 low, 1 high), with the digest's conditional probabilities, unsmoothed.
fn digest_model() -> NaiveBayes {
    let mut m = NaiveBayes::new(&[2, 2], 0.0);
    // Good: F1 high in 2 of 8, F2 high in 1 of 8.
    let good = [
        [1, 1],
        [1, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [0, 0],
    ];
    // Bad: F1 high in 3 of 4, F2 high in 3 of 4.
    let bad = [[1, 1], [1, 1], [1, 0], [0, 1]];
    good.iter().for_each(|f| m.learn(f, true));
    bad.iter().for_each(|f| m.learn(f, false));
    m
}

#[test]
fn the_digests_worked_example_picks_b_by_eq3_not_a_by_eq4s_numerator() {
    let m = digest_model();
    let (a, b, c): (&[u8], &[u8], &[u8]) = (&[0, 0], &[1, 0], &[1, 1]);
    let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
    assert!(close(m.p_good(a).unwrap(), 21.0 / 22.0));
    assert!(close(m.p_good(b).unwrap(), 7.0 / 10.0));
    assert!(close(m.p_good(c).unwrap(), 1.0 / 10.0), "C is bad");
    let jobs = [(a, 1.0), (b, 2.0), (c, 5.0)];
    assert_eq!(
        pick(&m, &jobs, 0.5),
        Some(1),
        "eq. 3, normalised: B (E.U. 1.4)"
    );
    let by_numerator = (0..3)
        .filter(|&i| m.p_good(jobs[i].0).unwrap() >= 0.5)
        .max_by(|&i, &j| {
            m.eq4_numerator(jobs[i].0, jobs[i].1)
                .total_cmp(&m.eq4_numerator(jobs[j].0, jobs[j].1))
        });
    assert_eq!(by_numerator, Some(0), "eq. 4's numerator would pick A");
    assert!(close(m.eq4_numerator(a, 1.0), 7.0 / 16.0));
    assert_eq!(
        pick(&m, &[(c, 5.0)], 0.5),
        None,
        "every job bad: nothing placed"
    );
}

#[test]
fn the_digests_feedback_update() {
    // §2.3: B placed, the next heartbeat overloaded: bad = 5 of 13, P(F1 high | bad) = 4/5.
    let mut m = digest_model();
    m.learn(&[1, 0], false);
    assert_eq!(m.class_counts(), [8, 5]);
    assert_eq!(m.value_counts(0, 1), [2, 4]);
}

#[test]
fn laplace_smoothing_keeps_an_unseen_value_possible() {
    let mut m = NaiveBayes::new(&[2], 0.0);
    m.learn(&[0], true);
    m.learn(&[1], false);
    assert_eq!(m.p_good(&[1]), Some(0.0), "unsmoothed: never good again");
    let mut s = NaiveBayes::new(&[2], 1.0);
    s.learn(&[0], true);
    s.learn(&[1], false);
    let p = s.p_good(&[1]).unwrap();
    assert!(p > 0.0 && p < 0.5, "{p}");
    // Nothing learned: even odds.
    assert_eq!(NaiveBayes::new(&[3, 4], 1.0).p_good(&[2, 3]), Some(0.5));
}

#[test]
fn the_default_rule_is_load_above_the_cores_or_memory_below_a_tenth() {
    let rule = OverloadRule::default();
    let l = |load_1m, memory_free| NodeLoad {
        cores: 4,
        load_1m,
        cpu: 0.5,
        memory_free,
        disk: 0.99,
    };
    assert!(
        !rule.overloaded(&l(4.0, 0.10)),
        "at the thresholds: not over"
    );
    assert!(rule.overloaded(&l(4.01, 0.5)));
    assert!(rule.overloaded(&l(1.0, 0.09)));
    let disks = OverloadRule {
        max_disk: Some(0.9),
        ..rule
    };
    assert!(disks.overloaded(&l(1.0, 0.5)));
    assert!(
        rule.describe().contains("free memory < 10 %"),
        "{}",
        rule.describe()
    );
}

#[test]
fn features_are_levels_relative_to_the_rule() {
    let rule = OverloadRule::default();
    let job = JobFeatures {
        stage: Stage::Reduce,
        bound: Some(Bound::Io),
    };
    let idle = NodeLoad {
        cores: 4,
        load_1m: 0.0,
        cpu: 0.0,
        memory_free: 1.0,
        disk: 0.0,
    };
    let seven = |f: Features| f.encode()[..7].to_vec();
    assert_eq!(seven(features(&rule, job, &idle, 0)), [2, 1, 0, 0, 0, 0, 0]);
    let busy = NodeLoad {
        cores: 4,
        load_1m: 4.0,
        cpu: 0.8,
        memory_free: 0.05,
        disk: 0.6,
    };
    assert_eq!(seven(features(&rule, job, &busy, 4)), [2, 1, 3, 3, 3, 2, 3]);
    let half = NodeLoad {
        load_1m: 2.9,
        memory_free: 0.25,
        ..busy
    };
    assert_eq!(seven(features(&rule, job, &half, 1))[2..], [1, 3, 1, 2, 1]);
    for (i, f) in seven(features(&rule, job, &busy, 100)).iter().enumerate() {
        assert!(*f < FEATURES[i].1, "feature {i} within its levels");
    }
}

/// The one encoding puts each named feature where the names tables (what the API shows,
/// and the levels the model counts) have it.
#[test]
fn the_encoding_follows_the_named_tables() {
    let f = Features {
        job_type: 1,
        job_stage: 2,
        load: 3,
        cpu_busy: 4,
        memory_free: 5,
        disk_busy: 6,
        same_type_here: 7,
        fill_with_it: Some(8),
    };
    let by_name = |name: &str| match name {
        "job type" => f.job_type,
        "job stage" => f.job_stage,
        "load per core" | "projected load" => f.load,
        "cpu busy" => f.cpu_busy,
        "memory free" => f.memory_free,
        "disk busy" => f.disk_busy,
        "same type here" => f.same_type_here,
        "fill with it" => f.fill_with_it.unwrap(),
        other => panic!("a feature without a field: {other}"),
    };
    for table in [&FEATURES[..], &YARD_FEATURES[..]] {
        for (i, (name, _)) in table.iter().enumerate() {
            assert_eq!(f.encode()[i], by_name(name), "{name}");
        }
    }
    let node: Vec<_> = FEATURES[NODE_FEATURES].iter().map(|(n, _)| *n).collect();
    assert_eq!(
        node,
        ["load per core", "cpu busy", "memory free", "disk busy"]
    );
    assert_eq!(
        Features {
            fill_with_it: None,
            ..f
        }
        .encode()[7],
        0
    );
}

fn load(load_1m: f64) -> NodeLoad {
    NodeLoad {
        cores: 2,
        load_1m,
        cpu: (load_1m / 2.0).min(1.0),
        memory_free: 0.5,
        disk: 0.1,
    }
}

const JOB: JobFeatures = JobFeatures {
    stage: Stage::Map,
    bound: Some(Bound::Cpu),
};

/// Trains `c` with placements on a calm node 1 (labelled good) and a hogged node 2
/// (labelled bad), `n` of each.
fn train(c: &mut Classifier, n: usize) -> i64 {
    let (calm, hot) = (NodeId(1), NodeId(2));
    let mut t = 0;
    for _ in 0..n {
        c.observe(t, calm, load(0.2));
        c.observe(t, hot, load(3.0));
        let f = c.features(calm, JOB, 0);
        c.assigned(t, calm, f, false);
        let f = c.features(hot, JOB, 0);
        c.assigned(t, hot, f, false);
        t += c.config().settle_ms;
    }
    c.observe(t, calm, load(0.2));
    c.observe(t, hot, load(3.0));
    t
}

#[test]
fn placements_are_labelled_by_the_rule_once_settled_and_a_hot_node_is_refused() {
    let mut c = Classifier::new(ClassifierConfig::default());
    let (calm, hot) = (NodeId(1), NodeId(2));
    assert_eq!(c.judge(0, calm, JOB, 0), Judgement::Unknown, "no load yet");
    c.observe(0, hot, load(3.0));
    let f = c.features(hot, JOB, 0);
    c.assigned(0, hot, f, false);
    assert_eq!(c.observe(1, hot, load(3.0)), 0, "not settled: no label yet");
    assert_eq!(c.node(hot).model.pending, 1);
    assert_eq!(c.observe(5_000, hot, load(3.0)), 1);
    assert_eq!(c.node(hot).model.labelled_bad, 1);
    assert_eq!(
        c.judge(5_000, hot, JOB, 0),
        Judgement::Unknown,
        "too few samples"
    );

    let t = train(&mut c, 20);
    assert!(matches!(c.judge(t, calm, JOB, 0), Judgement::Good { .. }));
    let j = c.judge(t, hot, JOB, 0);
    assert!(
        matches!(j, Judgement::Bad { p_good } if p_good < 0.1),
        "{j:?}"
    );
    assert!(!j.allows());
    assert_eq!(c.node(hot).verdict, Verdict::Bad);
    assert_eq!(c.node(calm).verdict, Verdict::Good);
    assert_eq!(
        c.node(NodeId(9)).verdict,
        Verdict::Unknown,
        "never heard of"
    );
    let n = c.node(hot);
    assert_eq!(
        (
            n.model.labelled_good,
            n.model.labelled_bad,
            n.model.overloaded
        ),
        (0, 21, Some(true))
    );
    assert_eq!(n.model.features.len(), 4);
    assert!(
        n.model
            .features
            .iter()
            .any(|f| f.name == "load per core" && f.level == 3 && f.bad == 21)
    );
    // The hot node calms down: its features change, and so does its verdict.
    c.observe(t + 1, hot, load(0.2));
    assert!(matches!(
        c.judge(t + 1, hot, JOB, 0),
        Judgement::Good { .. }
    ));
}

#[test]
fn a_node_refused_for_the_exploration_time_gets_one_probe() {
    let mut c = Classifier::new(ClassifierConfig::default());
    let t = train(&mut c, 20);
    let hot = NodeId(2);
    let explore = c.config().explore_after_ms;
    c.refused(t, hot);
    c.refused(t + 10, hot);
    assert!(matches!(
        c.judge(t + explore - 1, hot, JOB, 0),
        Judgement::Bad { .. }
    ));
    let j = c.judge(t + explore, hot, JOB, 0);
    assert!(
        matches!(j, Judgement::Explore { .. }) && j.allows(),
        "{j:?}"
    );
    let f = c.features(hot, JOB, 0);
    c.assigned(t + explore, hot, f, true);
    assert_eq!(c.node(hot).model.probes, 1);
    assert!(
        matches!(c.judge(t + explore + 1, hot, JOB, 0), Judgement::Bad { .. }),
        "after a probe, the model's verdict again"
    );
}

#[test]
fn settings_out_of_range_say_which_flag_to_fix() {
    assert_eq!(ClassifierConfig::default().validate(), Ok(()));
    let with_rule = |rule| ClassifierConfig {
        rule,
        ..ClassifierConfig::default()
    };
    let base = OverloadRule::default();
    for (config, flag) in [
        (
            with_rule(OverloadRule {
                max_load_per_core: 0.0,
                ..base
            }),
            "max-load-per-core",
        ),
        (
            with_rule(OverloadRule {
                max_load_per_core: f64::NAN,
                ..base
            }),
            "max-load-per-core",
        ),
        (
            with_rule(OverloadRule {
                min_free_memory: 1.0,
                ..base
            }),
            "min-free-memory",
        ),
        (
            with_rule(OverloadRule {
                max_disk: Some(-1.0),
                ..base
            }),
            "max-disk",
        ),
        (
            ClassifierConfig {
                settle_ms: -1,
                ..ClassifierConfig::default()
            },
            "settle-ms",
        ),
        (
            ClassifierConfig {
                explore_after_ms: 0,
                ..ClassifierConfig::default()
            },
            "explore",
        ),
    ] {
        let e = config.validate().unwrap_err();
        assert!(e.contains(flag), "{e}");
    }
    assert_eq!(LoadSource::parse("own"), Ok(LoadSource::Own));
    assert!(LoadSource::parse("guest").unwrap_err().contains("host"));
}

fn four_cores(load_1m: f64) -> NodeLoad {
    NodeLoad {
        cores: 4,
        load_1m,
        cpu: (load_1m / 4.0).min(1.0),
        memory_free: 0.5,
        disk: 0.1,
    }
}

fn here(containers: u32) -> NodeContainers {
    NodeContainers {
        same_type: 0,
        containers,
    }
}

#[test]
fn yards_load_level_tells_at_the_maximum_from_above_it() {
    let rule = OverloadRule::default();
    let f = |load, at_sample, now| {
        yard_features(&rule, JOB, &four_cores(load), at_sample, here(now)).encode()
    };
    // A full node that just freed a slot still reads 4.00: the paper's top level, as if
    // overloaded; yard's: nothing outside the rm's 4 containers, this task brings it back
    // to 4 — at the maximum, not above it.
    assert_eq!(features(&rule, JOB, &four_cores(4.0), 0).load, 3);
    assert_eq!(f(4.0, 4, 3)[2], 2, "at max");
    // The same sample with a CPU hog's 2 threads beside the 4 containers: above.
    assert_eq!(f(6.0, 4, 3)[2], 3, "above max");
    // Idle: 1 with the task; 2 tasks and this one: 3 = max − 1 (room for one more after).
    assert_eq!(f(0.0, 0, 0)[2], 0);
    assert_eq!(f(2.0, 2, 2)[2], 1);
    // The outside load is never below 0 (a load average still rising under new tasks).
    assert_eq!(f(0.5, 3, 1)[2], 0);
    // Fill with the task: ≤ ½, < 1, full.
    assert_eq!(
        [f(0.0, 0, 1)[7], f(0.0, 0, 2)[7], f(0.0, 0, 3)[7]],
        [0, 1, 2]
    );
    for (i, v) in f(9.0, 0, 9).iter().enumerate() {
        assert!(*v < YARD_FEATURES[i].1, "feature {i} within its levels");
    }
    // The rest are the paper's.
    let p = features(&rule, JOB, &four_cores(6.0), 1);
    let y = yard_features(
        &rule,
        JOB,
        &four_cores(6.0),
        4,
        NodeContainers {
            same_type: 1,
            containers: 3,
        },
    );
    assert_eq!(
        Features {
            load: p.load,
            fill_with_it: None,
            ..y
        },
        p
    );
}

#[test]
fn yards_features_see_this_passs_placements_before_the_next_sample() {
    let yard = ClassifierConfig {
        variant: Variant::Yard,
        ..ClassifierConfig::default()
    };
    let mut c = Classifier::new(yard);
    let n = NodeId(1);
    c.observe_with(0, n, four_cores(0.0), 0);
    // Three tasks placed in one pass: the load sample is the same, the level climbs.
    let levels: Vec<u8> = (0..4)
        .map(|k| c.features(n, JOB, here(k)).unwrap().load)
        .collect();
    assert_eq!(levels, [0, 0, 1, 2]);
    // The paper's reads the sample alone: the same level for all four.
    let p = Classifier::new(ClassifierConfig::default());
    let mut p = p;
    p.observe(0, n, four_cores(0.0));
    let levels: Vec<u8> = (0..4)
        .map(|k| p.features(n, JOB, here(k)).unwrap().load)
        .collect();
    assert_eq!(levels, [0; 4]);
    assert_eq!(
        p.features(n, JOB, 0).unwrap().fill_with_it,
        None,
        "the paper's has no eighth"
    );
}

#[test]
fn yards_classifier_learns_above_max_bad_and_lets_at_max_through() {
    let yard = ClassifierConfig {
        variant: Variant::Yard,
        ..ClassifierConfig::default()
    };
    let mut c = Classifier::new(yard);
    let (calm, hot) = (NodeId(1), NodeId(2));
    // Node 1 runs 3 of the rm's containers and nothing else (load 3); node 2 runs 3 and a
    // CPU hog (load 5, overloaded). Each gets a 4th task, again and again.
    let mut t = 0;
    for _ in 0..25 {
        c.observe_with(t, calm, four_cores(3.0), 3);
        c.observe_with(t, hot, four_cores(5.0), 3);
        for n in [calm, hot] {
            let f = c.features(n, JOB, here(3));
            c.assigned(t, n, f, false);
        }
        t += YARD_LABEL_WINDOW_MS;
    }
    c.observe_with(t, calm, four_cores(3.0), 3);
    c.observe_with(t, hot, four_cores(5.0), 3);
    assert_eq!(c.node(calm).model.labelled_good, 25);
    assert_eq!(c.node(hot).model.labelled_bad, 25);
    assert!(matches!(
        c.judge(t, calm, JOB, here(3)),
        Judgement::Good { .. }
    ));
    assert!(matches!(
        c.judge(t, hot, JOB, here(3)),
        Judgement::Bad { .. }
    ));
    // The hog's node with two slots freed under it: 1 container, outside load still 2:
    // the task brings it to 4, at the maximum, which was learned good.
    assert!(matches!(
        c.judge(t, hot, JOB, here(1)),
        Judgement::Good { .. }
    ));
}

#[test]
fn yards_labels_watch_the_minute_after_a_placement() {
    let n = NodeId(1);
    let run = |variant| {
        let mut c = Classifier::new(ClassifierConfig {
            variant,
            ..ClassifierConfig::default()
        });
        c.observe_with(0, n, four_cores(3.0), 3);
        let f = c.features(n, JOB, here(3));
        c.assigned(0, n, f, false);
        // Calm at 5 s, overloaded at 30 s (the task's share of the average showing).
        let at_5s = c.observe_with(5_000, n, four_cores(3.5), 4);
        let node = c.node(n);
        let first = (at_5s, node.model.labelled_good, node.model.labelled_bad);
        c.observe_with(30_000, n, four_cores(4.2), 4);
        let node = c.node(n);
        (first, (node.model.labelled_good, node.model.labelled_bad))
    };
    assert_eq!(
        run(Variant::Paper),
        ((1, 1, 0), (1, 0)),
        "the first sample: good"
    );
    assert_eq!(
        run(Variant::Yard),
        ((0, 0, 0), (0, 1)),
        "within the minute: bad"
    );
    // Good only once the minute passed calm.
    let mut c = Classifier::new(ClassifierConfig {
        variant: Variant::Yard,
        ..ClassifierConfig::default()
    });
    c.observe_with(0, n, four_cores(1.0), 1);
    let f = c.features(n, JOB, here(1));
    c.assigned(0, n, f, false);
    assert_eq!(c.observe_with(59_999, n, four_cores(2.0), 2), 0);
    assert_eq!(c.observe_with(60_000, n, four_cores(2.0), 2), 1);
    assert_eq!(c.node(n).model.labelled_good, 1);
}

#[test]
fn variants_by_name_and_a_bad_one_says_which_there_are() {
    assert_eq!(Variant::parse("paper"), Ok(Variant::Paper));
    assert_eq!(Variant::parse("yard"), Ok(Variant::Yard));
    assert_eq!(ClassifierConfig::default().variant, Variant::Paper);
    let e = Variant::parse("bayes").unwrap_err();
    assert!(
        e.contains("bayes") && e.contains("paper") && e.contains("yard"),
        "{e}"
    );
    assert_eq!(Variant::Yard.features().len(), 8);
    assert_eq!(Variant::Paper.features(), &FEATURES[..]);
}

#[test]
fn utilities_as_the_paper_defines_them_and_bad_names_are_refused() {
    assert_eq!(Utility::parse("policy"), Ok(Utility::Policy));
    assert_eq!(Utility::parse("fcfs"), Ok(Utility::Fcfs { epsilon_s: 1.0 }));
    assert_eq!(
        Utility::parse("map-first:0.2"),
        Ok(Utility::MapFirst { reduce: 0.2 })
    );
    for bad in ["fifo", "fcfs:-1", "map-first:2", "map-first:x", "policy:1"] {
        let e = Utility::parse(bad).unwrap_err();
        assert!(e.contains(bad.split(':').next().unwrap()), "{e}");
    }
    let fcfs = Utility::Fcfs { epsilon_s: 0.5 };
    assert_eq!(
        fcfs.value(0.0, Stage::Map),
        0.5,
        "a new job is worth ε, not 0"
    );
    assert_eq!(fcfs.value(10.0, Stage::Map), 10.5);
    let mf = Utility::MapFirst { reduce: 0.25 };
    assert_eq!(
        (mf.value(3.0, Stage::Map), mf.value(3.0, Stage::Reduce)),
        (1.0, 0.25)
    );
}
