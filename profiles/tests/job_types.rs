//! Job types in the profile store (seed 002 eq. 1–2): a new kind is untyped, each part is
//! recorded once and kept, and the type comes back with the kind's profile.

use yard_appmaster::typing::{KindType, Part, PartType, Probe, RateSource};
use yard_cluster::ids::Bound;
use yard_profiles::{ProfileError, ProfileStore};

const MB: f64 = 1e6;

fn typed(input_mb: f64, output_mb: f64, seconds: f64, rate: Option<f64>, at: i64) -> PartType {
    let probe = Probe {
        input_bytes: input_mb * MB,
        output_bytes: output_mb * MB,
        seconds,
    };
    PartType::of(probe, rate, at).expect("a probe that measured something")
}

#[tokio::test]
async fn a_kind_is_typed_part_by_part_once_and_keeps_its_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.db");
    let store = ProfileStore::open(&path).await.unwrap();
    assert_eq!(
        store.load_type("wordcount@text").await.unwrap(),
        KindType::default(),
        "a new kind is untyped"
    );

    // The map's probe: 64 + 64 MB in 2 s against a 50 MB/s disk is IO-bound.
    let map = typed(64.0, 64.0, 2.0, Some(50.0 * MB), 1_000);
    assert!(
        store
            .record_type("wordcount@text", Part::Map, &map)
            .await
            .unwrap()
    );
    let after_map = store.load_type("wordcount@text").await.unwrap();
    assert_eq!(
        after_map,
        KindType {
            map: Some(map),
            reduce: None
        }
    );
    // The reduce's, typed against the default rate (its node did not say).
    let reduce = typed(64.0, 32.0, 8.0, None, 2_000);
    assert_eq!(
        (reduce.bound, reduce.rate_source),
        (Bound::Cpu, RateSource::Default)
    );
    assert!(
        store
            .record_type("wordcount@text", Part::Reduce, &reduce)
            .await
            .unwrap()
    );

    // A second record of either part (another master's probe, a run on another node) does
    // not overwrite it.
    let other = typed(1.0, 0.0, 100.0, Some(500.0 * MB), 3_000);
    for part in [Part::Map, Part::Reduce] {
        assert!(
            !store
                .record_type("wordcount@text", part, &other)
                .await
                .unwrap(),
            "{part:?}"
        );
    }
    // Another kind is its own.
    assert!(
        store
            .record_type("grep", Part::Reduce, &other)
            .await
            .unwrap()
    );
    drop(store);

    // Reopened: the type comes back alone and with the kind's profile, every column intact.
    let store = ProfileStore::open(&path).await.unwrap();
    let both = KindType {
        map: Some(map),
        reduce: Some(reduce),
    };
    assert_eq!(store.load_type("wordcount@text").await.unwrap(), both);
    assert_eq!(store.load("wordcount@text").await.unwrap().job_type, both);
    assert_eq!(
        store.load("grep").await.unwrap().job_type,
        KindType {
            map: None,
            reduce: Some(other)
        }
    );
    assert_eq!(
        store.load("never-seen").await.unwrap().job_type,
        KindType::default()
    );
}

#[tokio::test]
async fn concurrent_probes_of_one_kind_store_one_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.db");
    let store = ProfileStore::open(&path).await.unwrap();
    let mut writers = Vec::new();
    for i in 0..8 {
        let store = ProfileStore::open(&path).await.unwrap();
        writers.push(tokio::spawn(async move {
            let t = typed(f64::from(i + 1), 0.0, 1.0, Some(MB), i64::from(i));
            store.record_type("k", Part::Map, &t).await.unwrap()
        }));
    }
    let mut stored = 0;
    for w in writers {
        stored += usize::from(w.await.unwrap());
    }
    assert_eq!(stored, 1, "exactly one probe's record is the kind's");
    assert!(store.load_type("k").await.unwrap().map.is_some());
}

#[tokio::test]
async fn a_type_that_measured_nonsense_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::open(&dir.path().join("p.db")).await.unwrap();
    let mut bad = typed(1.0, 1.0, 1.0, Some(MB), 0);
    bad.disk_rate = 0.0;
    let err = store.record_type("k", Part::Map, &bad).await.unwrap_err();
    assert!(matches!(err, ProfileError::BadType(_)), "{err}");
    let mut bad = typed(1.0, 1.0, 1.0, Some(MB), 0);
    bad.probe.seconds = f64::NAN;
    assert!(store.record_type("k", Part::Map, &bad).await.is_err());
    assert!(
        store
            .record_type("", Part::Map, &typed(1.0, 1.0, 1.0, None, 0))
            .await
            .is_err()
    );
    assert_eq!(store.load_type("k").await.unwrap(), KindType::default());
}
