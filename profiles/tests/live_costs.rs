//! Live costs per cluster: what a master stores comes back for its cluster only, the most
//! recent samples are kept, and bad input is a clear error.

use yard_profiles::{CostSamples, LIVE_COST_SAMPLES, ProfileError, ProfileStore};

#[tokio::test]
async fn costs_come_back_per_cluster_most_recent_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::open(&dir.path().join("p.db")).await.unwrap();
    assert_eq!(
        store.load_costs("http://a:8088").await.unwrap(),
        CostSamples::default()
    );
    let first = CostSamples {
        answer: vec![0.02, 0.03],
        launch: vec![0.1],
        grant: vec![0.2, 0.25, 0.3],
        // The cut's cost came in with migration 0006: it is stored like the others.
        cut: vec![0.04, 0.06],
    };
    store.add_costs("http://a:8088", 1, &first).await.unwrap();
    store
        .add_costs(
            "http://b:8088",
            2,
            &CostSamples {
                answer: vec![9.0],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(store.load_costs("http://a:8088").await.unwrap(), first);
    // Past the limit, the oldest go.
    let many = CostSamples {
        launch: (0..LIVE_COST_SAMPLES + 5).map(|i| i as f64).collect(),
        ..Default::default()
    };
    store.add_costs("http://a:8088", 3, &many).await.unwrap();
    let back = store.load_costs("http://a:8088").await.unwrap();
    assert_eq!(back.answer, first.answer);
    assert_eq!(back.launch.len(), LIVE_COST_SAMPLES);
    assert_eq!(back.launch[0], 5.0);
    assert_eq!(
        store.load_costs("http://b:8088").await.unwrap().answer,
        [9.0]
    );
}

#[tokio::test]
async fn a_bad_cost_or_cluster_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::open(&dir.path().join("p.db")).await.unwrap();
    let bad = CostSamples {
        grant: vec![f64::NAN],
        ..Default::default()
    };
    assert!(matches!(
        store.add_costs("http://a", 1, &bad).await,
        Err(ProfileError::BadCost(_))
    ));
    assert!(matches!(
        store.load_costs("").await,
        Err(ProfileError::BadCluster(_))
    ));
    assert_eq!(
        store.load_costs("http://a").await.unwrap(),
        CostSamples::default()
    );
}
