//! The job-profile store: what goes in comes back, the fit follows the samples, concurrent
//! writers lose nothing, and a bad file or bad input is a clear error.

mod support;
use support::defaults;
use yard_appmaster::policy::{PowerLaw, RunRecord};
use yard_profiles::{ProfileError, ProfileStore};

fn run(k: u32, samples: Vec<(f64, f64)>) -> RunRecord {
    RunRecord {
        map_local: Some(10.0 + f64::from(k)),
        map_remote: None,
        map_shortest: Some(5.0 + f64::from(k)),
        map_spread: (k % 2 == 1).then_some(0.25),
        partition_bytes: Some(4096.0),
        shuffle_bandwidth: Some(1e8),
        k,
        max_reduce_input: 1 << 20,
        reduce_samples: samples,
    }
}

/// f(d) = 2·d^0.5, exactly.
fn law(d: f64) -> (f64, f64) {
    (d, 2.0 * d.sqrt())
}

#[tokio::test]
async fn runs_and_samples_come_back_and_the_fit_follows_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.db");
    let store = ProfileStore::open(&path).await.unwrap();
    assert_eq!(
        store.load("wordcount").await.unwrap().fit,
        None,
        "nothing yet"
    );
    store.add_samples("wordcount", &[law(1e4)]).await.unwrap();
    assert_eq!(
        store.load("wordcount").await.unwrap().fit,
        None,
        "one size fits no line"
    );
    store
        .add_samples("wordcount", &[law(1e6), law(1e8)])
        .await
        .unwrap();
    let first = run(7, vec![law(4e6)]);
    store.add_run("wordcount", 1_000, &first).await.unwrap();
    store
        .add_run("grep", 2_000, &run(3, vec![(1.0, 1.0), (10.0, 1.0)]))
        .await
        .unwrap();
    drop(store);

    let stored = ProfileStore::open(&path)
        .await
        .unwrap()
        .load("wordcount")
        .await
        .unwrap();
    assert_eq!(stored.runs, [first]);
    assert_eq!(stored.sampled, [law(1e4), law(1e6), law(1e8)]);
    let fit = stored.fit.unwrap();
    assert!(
        (fit.a - 2.0).abs() < 1e-9 && (fit.b - 0.5).abs() < 1e-9,
        "{fit:?}"
    );
    let profile = stored.profiler(defaults()).profile();
    assert_eq!(
        (profile.map_local, profile.map_remote),
        (17.0, 2.0),
        "measured, else the default"
    );
    assert!((profile.reduce_time.b - 0.5).abs() < 1e-9);
    assert_eq!(profile.previous_runs.len(), 1);
}

#[tokio::test]
async fn the_fit_keeps_the_spread_of_its_samples() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::open(&dir.path().join("profiles.db"))
        .await
        .unwrap();
    // Around f(d) = 2·d^0.5, each sample 10 % over or under.
    let samples: Vec<(f64, f64)> = (1..=6)
        .map(|i| {
            let (d, f) = law(10f64.powi(i));
            (d, f * if i % 2 == 0 { 1.1 } else { 0.9 })
        })
        .collect();
    store.add_samples("sort", &samples).await.unwrap();
    let fit = store.load("sort").await.unwrap().fit.unwrap();
    let want = PowerLaw::fit(&samples).unwrap();
    assert!(fit.spread > 0.05, "{fit:?}");
    assert_eq!(fit, want, "stored as fitted");
}

/// A database written before the fit had a spread (migration 0001 only) opens, keeps its fit
/// and samples, and reads the old fit's spread as 0.
#[tokio::test]
async fn a_database_from_before_the_spread_is_brought_up_to_date() {
    use sqlx::sqlite::SqliteConnectOptions;
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old-migrations");
    std::fs::create_dir(&old).unwrap();
    let first = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../migrations/profiles/0001_profiles.sql"
    );
    std::fs::copy(first, old.join("0001_profiles.sql")).unwrap();
    let path = dir.path().join("profiles.db");
    {
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        let migrator = sqlx::migrate::Migrator::new(old.as_path()).await.unwrap();
        migrator.run(&pool).await.unwrap();
        sqlx::query("INSERT INTO fits (kind, a, b, samples) VALUES ('sort', 2.0, 0.5, 3)")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO reduce_samples (kind, bytes, seconds) VALUES ('sort', 4, 4)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    let stored = ProfileStore::open(&path)
        .await
        .unwrap()
        .load("sort")
        .await
        .unwrap();
    assert_eq!(
        stored.fit,
        Some(PowerLaw {
            a: 2.0,
            b: 0.5,
            spread: 0.0
        })
    );
    assert_eq!(stored.sampled, [(4.0, 4.0)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.db");
    ProfileStore::open(&path).await.unwrap();
    // Four masters, each with its own connection pool (as separate processes would be).
    let mut writers = Vec::new();
    for w in 0..4u32 {
        let store = ProfileStore::open(&path).await.unwrap();
        writers.push(tokio::spawn(async move {
            for i in 0..25u32 {
                let d = f64::from(w * 100 + i + 1);
                store
                    .add_run("etl", i64::from(i), &run(w, vec![law(d), law(d * 1000.0)]))
                    .await
                    .unwrap();
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let stored = ProfileStore::open(&path)
        .await
        .unwrap()
        .load("etl")
        .await
        .unwrap();
    assert_eq!(stored.runs.len(), 100);
    assert_eq!(
        stored
            .runs
            .iter()
            .map(|r| r.reduce_samples.len())
            .sum::<usize>(),
        200
    );
    let fit = stored.fit.unwrap();
    assert!(
        (fit.b - 0.5).abs() < 1e-9,
        "the fit covers every writer's samples: {fit:?}"
    );
}

#[tokio::test]
async fn a_bad_file_or_bad_input_is_a_clear_error_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "not a database, just notes\n".repeat(200)).unwrap();
    let err = ProfileStore::open(&path).await.unwrap_err();
    assert!(
        matches!(
            err,
            ProfileError::Open { .. } | ProfileError::Migrate { .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("notes.txt"), "{err}");
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("not a database"),
        "left as it was"
    );

    let store = ProfileStore::open(&dir.path().join("p.db")).await.unwrap();
    assert!(matches!(
        store.add_samples("", &[law(1.0)]).await,
        Err(ProfileError::BadKind(_))
    ));
    assert!(matches!(
        store.add_samples("k\n", &[law(1.0)]).await,
        Err(ProfileError::BadKind(_))
    ));
    let err = store
        .add_samples("k", &[law(1.0), (f64::NAN, 1.0)])
        .await
        .unwrap_err();
    assert!(matches!(err, ProfileError::BadSample(..)), "{err}");
    let err = store
        .add_run("k", 0, &run(1, vec![(1.0, -1.0)]))
        .await
        .unwrap_err();
    assert!(matches!(err, ProfileError::BadSample(..)), "{err}");
    let stored = store.load("k").await.unwrap();
    assert!(
        stored.runs.is_empty() && stored.sampled.is_empty(),
        "nothing half-written"
    );
}

/// A fresh cluster's first masters and its rm open a new database at once: each must find
/// it brought up to date, none a table another has just created.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_opening_a_new_database_at_once_all_open_it() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.db");
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                tokio::spawn(async move { ProfileStore::open(&path).await })
            })
            .collect();
        for open in opens {
            let store = open.await.unwrap();
            assert!(store.is_ok(), "round {round}: {:?}", store.err());
        }
    }
}
