//! The rm's state survives a restart: what the store wrote, a new cluster restores.

mod support;

use std::collections::BTreeMap;

use support::registration;
use yard_cluster::app::YarnApplicationState;
use yard_rm::cluster::{AppResult, Cluster, NewApp, NodeState, Settings};
use yard_rm::store::Store;
use yard_wire::auth::ClusterSecret;
use yard_wire::deadline::Deadline;

#[tokio::test]
async fn applications_and_nodes_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let store = Store::open(&path).await.unwrap();
    let mut before = Cluster::new(Settings::default(), ClusterSecret::new([1; 32]), 1_000);
    before.register_node(1_000, registration("n1:8042"));
    let running = before.new_application(1_500, "alice").unwrap();
    let mut new = NewApp::new(&running, "wordcount", "alice", "default");
    new.master_command = vec!["/bin/sh".into(), "-c".into(), "sleep 60".into()];
    before.submit(2_000, new).unwrap();
    before.master_registered(&running, None).unwrap();
    before
        .set_deadline(&running, Deadline::from_epoch_ms(60_000))
        .unwrap();
    let answer = AppResult {
        processed_fraction: 0.75,
        answer: serde_json::json!({"the": 412, "yard": 3}),
        answered_ms: 30_000,
    };
    before.report_result(&running, answer.clone()).unwrap();
    let kept = |v: &str| BTreeMap::from([("map-0".to_owned(), v.to_owned())]);
    before
        .put_recovery(&running, kept("{\"first\":1}"))
        .unwrap();
    let killed = before.new_application(1_500, "bob").unwrap();
    before
        .submit(2_100, NewApp::new(&killed, "grep", "bob", "etl"))
        .unwrap();
    before.put_recovery(&killed, kept("{}")).unwrap_err(); // not running: refused
    before.kill(&killed).unwrap();
    before
        .put_dataset(2_200, support::one_block_dataset("logs"), "carol")
        .unwrap();
    let changes = before.take_changes();
    assert_eq!(
        (
            changes.apps.len(),
            changes.nodes.len(),
            changes.datasets.len(),
            changes.recovery.len()
        ),
        (2, 1, 1, 1)
    );
    store.save_changes(&changes).await.unwrap();
    // Rewritten before the next save: the store keeps the last value only.
    before
        .put_recovery(&running, kept("{\"second\":2}"))
        .unwrap();
    store.save_changes(&before.take_changes()).await.unwrap();
    assert!(before.take_changes().is_empty(), "taken once");
    drop(store);

    // A new rm process: another epoch, the same file.
    let store = Store::open(&path).await.unwrap();
    let (apps, nodes) = store.load().await.unwrap();
    let mut after = Cluster::new(Settings::default(), ClusterSecret::new([2; 32]), 9_000);
    after.restore(apps, nodes);
    after.restore_datasets(store.load_datasets().await.unwrap());
    after.restore_recovery(store.load_recovery().await.unwrap());
    let recovered: Vec<_> = after.recovery(&running).collect();
    assert_eq!(
        recovered,
        [(&"map-0".to_owned(), &"{\"second\":2}".to_owned())]
    );
    let logs = after.dataset("logs").unwrap();
    assert_eq!((logs.created_ms, logs.blocks[0].bytes), (2_200, 7));
    assert_eq!(after.dataset_owner("logs"), Some("carol"));
    let app = after.app(&running).unwrap();
    assert_eq!(
        (app.lifecycle.state, app.user.as_str()),
        (YarnApplicationState::Running, "alice")
    );
    assert_eq!(app.master_command[2], "sleep 60");
    assert_eq!(
        (app.deadline, app.result.as_ref()),
        (Some(Deadline::from_epoch_ms(60_000)), Some(&answer))
    );
    assert_eq!(app.attempts.len(), 1, "the master attempt is remembered");
    assert_eq!(
        after.app(&killed).unwrap().lifecycle.state,
        YarnApplicationState::Killed
    );
    let n = after.nodes().next().unwrap();
    assert_eq!(
        (n.node_id.as_str(), n.state),
        ("n1:8042", NodeState::Lost),
        "until it registers again"
    );
    // The running master re-registers with the new rm; the node registers again.
    after.master_registered(&running, None).unwrap();
    after.register_node(9_500, registration("n1:8042"));
    assert_eq!(after.nodes().next().unwrap().state, NodeState::Running);
    // New ids do not collide with the old ones.
    assert_ne!(after.new_application(9_600, "alice").unwrap(), running);
    // The application ends: its recovery entries leave memory and the file.
    after.master_finished(40_000, &running, true, "").unwrap();
    assert_eq!(after.recovery(&running).count(), 0);
    store.save_changes(&after.take_changes()).await.unwrap();
    assert!(store.load_recovery().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_file_that_is_not_a_state_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    std::fs::write(&path, b"this is not SQLite, it is a note to self").unwrap();
    let err = Store::open(&path).await.err().expect("refused");
    let text = err.to_string();
    assert!(
        text.contains("rm.db") || text.contains("database"),
        "{text}"
    );
    // And the file is left as it was.
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"this is not SQLite, it is a note to self"
    );
}

#[tokio::test]
async fn a_second_rm_on_the_same_database_is_told_it_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    let first = Store::open(&path).await.unwrap();
    let second = Store::open(&path).await.err().expect("refused");
    assert!(second.to_string().contains("in use"), "{second}");
    drop(first);
    Store::open(&path).await.expect("free again");
}

/// YARN's rm epoch: 0 on a new state, one more at each start, so container ids of a restarted
/// rm never repeat an earlier one's.
#[tokio::test]
async fn each_start_on_the_same_state_is_a_new_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    for expected in 0..3 {
        let store = Store::open(&path).await.unwrap();
        assert_eq!(store.next_epoch().await.unwrap(), expected);
    }
    let other = Store::open(&dir.path().join("other.db")).await.unwrap();
    assert_eq!(
        other.next_epoch().await.unwrap(),
        0,
        "a new state starts at 0"
    );
}

/// An application the first version of the rm stored (only its columns: the deadline as
/// `deadline_ms`, epoch ms) reads back with its deadline, and one without a deadline with none.
#[tokio::test]
async fn an_application_stored_by_the_first_rm_reads_back_with_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rm.db");
    drop(Store::open(&path).await.unwrap());
    {
        let pool = sqlx::sqlite::SqlitePool::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        for (id, deadline) in [
            ("application_1000_0001", Some(90_000_i64)),
            ("application_1000_0002", None),
        ] {
            sqlx::query(
                "INSERT INTO applications (id, name, user_name, queue, state, final_status, \
                 attempts, max_attempts, diagnostics, progress, submitted_ms, master_command, \
                 master_env, deadline_ms) \
                 VALUES (?, 'old', 'alice', 'default', 'ACCEPTED', 'UNDEFINED', 0, 2, '', 0.0, \
                 1000, '[\"/bin/true\"]', '{}', ?)",
            )
            .bind(id)
            .bind(deadline)
            .execute(&pool)
            .await
            .unwrap();
        }
        pool.close().await;
    }
    let store = Store::open(&path).await.unwrap();
    let (apps, _) = store.load().await.unwrap();
    let deadlines: BTreeMap<&str, Option<Deadline>> =
        apps.iter().map(|a| (a.id.as_str(), a.deadline)).collect();
    assert_eq!(
        deadlines,
        BTreeMap::from([
            (
                "application_1000_0001",
                Some(Deadline::from_epoch_ms(90_000))
            ),
            ("application_1000_0002", None),
        ])
    );
    let mut after = Cluster::new(Settings::default(), ClusterSecret::new([1; 32]), 2_000);
    after.restore(apps, Vec::new());
    assert_eq!(
        after.app("application_1000_0001").unwrap().deadline,
        Some(Deadline::from_epoch_ms(90_000))
    );
}
