//! A recurring job learns from its earlier runs (Dart §5.1, the job profiler; §5.3: `T_m^a` is
//! initialised from the previous execution): what a run measured, summed up by the
//! `RunObserver` as the live master's state does, goes through the store, and the next run's
//! profile carries it — map time, map spread, shuffle bandwidth and reduce points — while the
//! means follow only the kind's `RECENT_RUNS` most recent runs. No clock: times come with the
//! events.

mod support;
use support::defaults;
use yard_appmaster::policy::profiler::RECENT_RUNS;
use yard_appmaster::policy::{
    AttemptId, ContainerId, Decision, Event, JobSpec, Locality, MapId, PreviousRun, Progress,
    ReduceId, RunObserver, RunRecord,
};
use yard_profiles::ProfileStore;

const KIND: &str = "wordcount@demo";

/// The reduce law every run below measures: f(d) = 0.002·d^0.5 (eq. 9).
fn law(d: f64) -> f64 {
    0.002 * d.sqrt()
}

/// One run as the live master's `RunObserver` sees it: three node-local maps of
/// `scale`·(1, e^w, e^2w) s (σ of ln-times `w`), two reduces of 10⁴ and 10⁶ bytes on [`law`],
/// and `bytes` of map output fetched by the reduces in 1 s.
fn observed_run(scale: f64, w: f64, bytes: u64) -> RunRecord {
    let mut o = RunObserver::new();
    o.event(
        0.0,
        &Event::JobStarted(JobSpec {
            deadline: None,
            maps: Vec::new(),
            reduces: 2,
            profile: defaults(),
            allotment: None,
            recovered: Vec::new(),
        }),
    );
    for (a, t) in [0.0, w, 2.0 * w].into_iter().enumerate() {
        let a = a as u32;
        o.decisions(
            0.0,
            &[Decision::LaunchMap {
                attempt: AttemptId(a),
                map: MapId(a),
                container: ContainerId(u64::from(a)),
                locality: Locality::NodeLocal,
                speculative: false,
            }],
        );
        o.event(
            scale * t.exp(),
            &Event::TaskFinished {
                attempt: AttemptId(a),
                output_bytes: 2_000,
            },
        );
    }
    o.fetched(99.0, bytes, 1.0);
    let ready = 100.0;
    for (r, d) in [1e4, 1e6].into_iter().enumerate() {
        let attempt = AttemptId(10 + r as u32);
        o.decisions(
            ready,
            &[Decision::LaunchReduce {
                attempt,
                reduce: ReduceId(r as u32),
                container: ContainerId(0),
            }],
        );
        o.event(
            ready,
            &Event::ReduceInputReady {
                reduce: ReduceId(r as u32),
                bytes: d as u64,
            },
        );
        o.event(
            ready + law(d),
            &Event::TaskFinished {
                attempt,
                output_bytes: 0,
            },
        );
    }
    o.decisions(
        ready + 3.0,
        &[Decision::Finish(Progress {
            k: 3,
            ..Progress::default()
        })],
    );
    o.record()
}

fn close(x: f64, y: f64, tolerance: f64) -> bool {
    (x - y).abs() <= tolerance * y.abs().max(1.0)
}

#[tokio::test]
async fn the_next_run_of_a_kind_starts_from_what_the_last_one_measured() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::open(&dir.path().join("profiles.db"))
        .await
        .unwrap();
    // A kind never seen: the next run starts from the defaults.
    let profile = store
        .load(KIND)
        .await
        .unwrap()
        .profiler(defaults())
        .profile();
    assert_eq!(profile, defaults());

    let first = observed_run(0.5, 0.2, 600);
    // The observer measured what the run did.
    let mean = 0.5 * (1.0 + 0.2f64.exp() + 0.4f64.exp()) / 3.0;
    assert!(close(first.map_local.unwrap(), mean, 1e-12), "{first:?}");
    assert!(close(first.map_spread.unwrap(), 0.2, 1e-9), "{first:?}");
    assert_eq!(first.shuffle_bandwidth, Some(600.0));
    assert_eq!(first.reduce_samples.len(), 2);
    store.add_run(KIND, 1, &first).await.unwrap();

    // The next run's profile, as the master builds it (`Stored::profiler`), is that run's.
    let stored = store.load(KIND).await.unwrap();
    assert_eq!(
        stored.runs,
        std::slice::from_ref(&first),
        "stored as measured"
    );
    let next = stored.profiler(defaults()).profile();
    assert_eq!(next.map_local, first.map_local.unwrap());
    assert_eq!(next.map_shortest, first.map_shortest);
    // Pooled by the runs' maps: one run's, to the last bit or so.
    assert!(close(
        next.map_spread.unwrap(),
        first.map_spread.unwrap(),
        1e-12
    ));
    assert_eq!(next.partition_bytes, first.partition_bytes.unwrap());
    assert_eq!(next.shuffle_bandwidth, 600.0);
    // Its two reduces are the model's points: f(d) fitted to them, not the default.
    assert!(
        close(next.reduce_time.a, 0.002, 1e-6) && close(next.reduce_time.b, 0.5, 1e-6),
        "{:?}",
        next.reduce_time
    );
    assert_eq!(
        next.previous_runs,
        [PreviousRun {
            k: 3,
            max_reduce_input: 1e6
        }]
    );

    // RECENT_RUNS more runs, each slower, wider and with a faster shuffle than the one before:
    // the first drops out of the means, while the reduce model and eq. 13's (k, d) keep it.
    let mut all = vec![first];
    for i in 1..=RECENT_RUNS {
        let i = i as f64;
        let run = observed_run(0.5 * (1.0 + i), 0.2 * (1.0 + i), 600 * (1 + i as u64));
        store.add_run(KIND, 1 + i as i64, &run).await.unwrap();
        all.push(run);
    }
    let stored = store.load(KIND).await.unwrap();
    assert_eq!(stored.runs, all);
    let profile = stored.profiler(defaults()).profile();
    let mean_of = |runs: &[RunRecord], f: fn(&RunRecord) -> Option<f64>| {
        runs.iter().filter_map(f).sum::<f64>() / runs.len() as f64
    };
    let recent = &all[1..];
    assert_eq!(recent.len(), RECENT_RUNS);
    for (what, got, f) in [
        (
            "map time",
            profile.map_local,
            (|r: &RunRecord| r.map_local) as fn(&RunRecord) -> Option<f64>,
        ),
        ("map spread", profile.map_spread.unwrap(), |r| r.map_spread),
        ("shuffle bandwidth", profile.shuffle_bandwidth, |r| {
            r.shuffle_bandwidth
        }),
    ] {
        let (want, with_oldest) = (mean_of(recent, f), mean_of(&all, f));
        assert!(close(got, want, 1e-12), "{what}: {got} against {want}");
        assert!(
            !close(got, with_oldest, 1e-3),
            "{what}: the oldest run still counts ({got} = {with_oldest})"
        );
    }
    // The shortest map of the recent runs, not the oldest run's.
    assert_eq!(profile.map_shortest, all[1].map_shortest);
    assert!(profile.map_shortest > all[0].map_shortest);
    // Every run's reduces stay points of f(d), and every run's (k, d_max) stays for eq. 13.
    let points: usize = stored.runs.iter().map(|r| r.reduce_samples.len()).sum();
    assert_eq!(points, 2 * (RECENT_RUNS + 1));
    assert!(close(profile.reduce_time.b, 0.5, 1e-6), "{profile:?}");
    assert_eq!(profile.previous_runs.len(), RECENT_RUNS + 1);
}
