//! The rm's state store: SQLite through sqlx, in WAL mode, with the schema of the top-level
//! `migrations/rm/` applied at open. It keeps what must survive a restart — applications with
//! their master attempts, and nodes — as [`AppRecord`]s and [`NodeInfo`]s; the daemon writes
//! what changed (`Cluster::take_dirty`) and restores all of it at start.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sqlx::Row;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqliteLockingMode, SqlitePool,
    SqlitePoolOptions, SqliteSynchronous,
};
use yard_wire::deadline::Deadline;
use yard_wire::protocol::{Dataset, Resource};
use yard_wire::telemetry::NodeTelemetry;

use crate::cluster::{AppRecord, AppResult, AttemptInfo, Changes, NodeInfo, NodeState, YarnFields};
use yard_cluster::app::{FinalApplicationStatus, Lifecycle, YarnApplicationState};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the state database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error(
        "the state database {0} is in use by another process (another rm?): stop it, or give this rm a --state-db of its own"
    )]
    InUse(String),
    #[error(
        "the state database {path} cannot be written; the rm keeps every change there before it answers: give it a writable --state-db (the file is left as it is)"
    )]
    NotWritable {
        path: String,
        source: std::io::Error,
    },
    #[error("the state database's schema cannot be brought up to date: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("the state database: {0}")]
    Query(#[from] sqlx::Error),
    #[error(
        "the state database holds a row yard cannot read ({what}): is it another program's file?"
    )]
    Corrupt { what: String },
}

pub struct Store {
    /// One connection (the exclusive lock allows no second), opened again after a failed
    /// write.
    pool: SqlitePool,
    /// Whether [`Store::refuse_writes`] is on, kept for the connections opened after a failure.
    refusing: Arc<AtomicBool>,
}

/// A stored state, exactly as [`YarnApplicationState::name`] wrote it.
fn parse_state(s: &str) -> Option<YarnApplicationState> {
    YarnApplicationState::ALL
        .iter()
        .copied()
        .find(|x| x.name() == s)
}

fn parse_final(s: &str) -> Option<FinalApplicationStatus> {
    FinalApplicationStatus::ALL
        .iter()
        .copied()
        .find(|x| x.name() == s)
}

impl Store {
    /// Opens (creating if missing) the database at `path` and applies the migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        // A read-only disk or file is said plainly, before SQLite reports it as an I/O error
        // on a lock. Opening for writing changes nothing in an existing file.
        if let Err(source) = std::fs::OpenOptions::new()
            .write(true)
            .create(!path.exists())
            .truncate(false)
            .open(path)
        {
            return Err(StoreError::NotWritable {
                path: shown,
                source,
            });
        }
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{shown}"))
            .map_err(|source| StoreError::Open {
                path: shown.clone(),
                source,
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // Only this rm uses the file: an exclusive lock keeps a second rm out, and with it
            // WAL needs no shared-memory index, whose mmap turns a full or read-only disk into
            // SIGBUS instead of an error.
            .locking_mode(SqliteLockingMode::Exclusive)
            // A reply says a change is saved: it must survive power loss, not only a crash.
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true);
        let refusing = Arc::new(AtomicBool::new(false));
        let refusing_at_connect = refusing.clone();
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .after_connect(move |conn, _| {
                let refusing = refusing_at_connect.load(Ordering::Relaxed);
                Box::pin(async move {
                    if refusing {
                        set_query_only(conn, true).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|source| {
                // SQLITE_BUSY at open: another connection holds the exclusive lock.
                let busy = source
                    .as_database_error()
                    .and_then(|e| e.code())
                    .is_some_and(|c| c == "5");
                if busy {
                    StoreError::InUse(shown.clone())
                } else {
                    StoreError::Open {
                        path: shown.clone(),
                        source,
                    }
                }
            })?;
        sqlx::migrate!("../migrations/rm").run(&pool).await?;
        Ok(Store { pool, refusing })
    }

    /// While `on`, every write fails as on a read-only disk (SQLite's `query_only`), on this
    /// connection and on those opened after a failure: for tests of what the rm does when it
    /// cannot write (the real faults, a full and a read-only disk, are in
    /// `tests/storage_faults_e2e.rs`).
    #[doc(hidden)]
    pub async fn refuse_writes(&self, on: bool) -> Result<(), StoreError> {
        self.refusing.store(on, Ordering::Relaxed);
        let mut conn = self.pool.acquire().await?;
        set_query_only(&mut conn, on).await?;
        Ok(())
    }

    /// Datasets' block maps with their owners.
    pub async fn load_datasets(&self) -> Result<Vec<(Dataset, String)>, StoreError> {
        let mut out = Vec::new();
        for row in sqlx::query("SELECT name, created_ms, blocks, owner FROM datasets ORDER BY name")
            .fetch_all(&self.pool)
            .await?
        {
            let blocks: String = row.try_get("blocks")?;
            let dataset = Dataset {
                name: row.try_get("name")?,
                created_ms: row.try_get("created_ms")?,
                blocks: serde_json::from_str(&blocks).map_err(|_| StoreError::Corrupt {
                    what: "dataset blocks".into(),
                })?,
            };
            out.push((dataset, row.try_get("owner")?));
        }
        Ok(out)
    }

    /// Deletions of datasets' blocks not yet told: (node, dataset).
    pub async fn load_deletes(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT node_id, dataset FROM dataset_deletes ORDER BY node_id, dataset",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }

    /// Writes applications, nodes and datasets (inserting or replacing), in one transaction;
    /// with nothing to write, writes the database's header again (the journal's probe of a
    /// failing disk: it needs the room and write access a change does).
    ///
    /// The transaction is SQLite's own (`BEGIN IMMEDIATE` … `COMMIT`), not sqlx's: when COMMIT
    /// fails on a full or read-only disk SQLite may already have rolled back, and sqlx 0.9 then
    /// still counts a transaction open, so every later `begin()` became a savepoint inside it
    /// and every "commit" a RELEASE that wrote nothing (issue 28). After any failure the
    /// connection, its state in doubt, is closed; the next write opens a fresh one.
    pub async fn save_changes(&self, changes: &Changes) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let written = async {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
            write_changes(&mut conn, changes).await?;
            sqlx::query("COMMIT").execute(&mut *conn).await?;
            Ok::<_, sqlx::Error>(())
        }
        .await;
        if let Err(e) = written {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            let _ = conn.close().await;
            return Err(e.into());
        }
        Ok(())
    }

    /// Every recovery entry kept: (application, key, value).
    pub async fn load_recovery(&self) -> Result<Vec<(String, String, String)>, StoreError> {
        let mut out = Vec::new();
        for row in sqlx::query(
            "SELECT application_id, key, value FROM app_recovery ORDER BY application_id, key",
        )
        .fetch_all(&self.pool)
        .await?
        {
            out.push((
                row.try_get("application_id")?,
                row.try_get("key")?,
                row.try_get("value")?,
            ));
        }
        Ok(out)
    }

    /// This start's rm epoch: 0 on a new state, one more at each start after (committed
    /// before the rm hands out any container id).
    pub async fn next_epoch(&self) -> Result<u64, StoreError> {
        let epoch: i64 = sqlx::query_scalar(
            "INSERT INTO rm_epoch (id, epoch) VALUES (0, 0) \
             ON CONFLICT (id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(epoch.max(0) as u64)
    }

    /// Everything stored, applications in submission order.
    pub async fn load(&self) -> Result<(Vec<AppRecord>, Vec<NodeInfo>), StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt {
            what: what.to_owned(),
        };
        let mut attempts: BTreeMap<String, Vec<AttemptInfo>> = BTreeMap::new();
        for row in sqlx::query("SELECT application_id, attempt, container_id, node_id, started_ms FROM attempts ORDER BY attempt")
            .fetch_all(&self.pool)
            .await?
        {
            attempts.entry(row.try_get("application_id")?).or_default().push(AttemptInfo {
                attempt: u32::try_from(row.try_get::<i64, _>("attempt")?).map_err(|_| corrupt("attempt number"))?,
                container_id: row.try_get("container_id")?,
                node_id: row.try_get("node_id")?,
                started_ms: row.try_get("started_ms")?,
            });
        }
        let mut apps = Vec::new();
        for row in sqlx::query("SELECT * FROM applications ORDER BY submitted_ms, id")
            .fetch_all(&self.pool)
            .await?
        {
            let id: String = row.try_get("id")?;
            let state = parse_state(&row.try_get::<String, _>("state")?)
                .ok_or_else(|| corrupt("application state"))?;
            let final_status = parse_final(&row.try_get::<String, _>("final_status")?)
                .ok_or_else(|| corrupt("final status"))?;
            let lifecycle = Lifecycle {
                state,
                final_status,
                attempts: u32::try_from(row.try_get::<i64, _>("attempts")?)
                    .map_err(|_| corrupt("attempts"))?,
                max_attempts: u32::try_from(row.try_get::<i64, _>("max_attempts")?)
                    .map_err(|_| corrupt("max attempts"))?,
                diagnostics: row.try_get("diagnostics")?,
            };
            let command: String = row.try_get("master_command")?;
            let env: String = row.try_get("master_env")?;
            let fraction: Option<f64> = row.try_get("processed_fraction")?;
            let answer: Option<String> = row.try_get("answer")?;
            let tags: String = row.try_get("tags")?;
            let model: Option<String> = row.try_get("job_model")?;
            let yarn: Option<String> = row.try_get("yarn_json")?;
            let yarn: YarnFields = match yarn {
                Some(y) => serde_json::from_str(&y).map_err(|_| corrupt("YARN report fields"))?,
                None => YarnFields::default(),
            };
            let answered_ms: Option<i64> = row.try_get("answered_ms")?;
            let result = match (fraction, answer) {
                (Some(processed_fraction), Some(answer)) => Some(AppResult {
                    processed_fraction,
                    answer: serde_json::from_str(&answer).map_err(|_| corrupt("answer"))?,
                    // Stored before the rm kept the time: a master answers just before it
                    // ends; an answer of unknown time from a job still running is not
                    // credited as in time.
                    answered_ms: answered_ms.or(yarn.finished_ms).unwrap_or(i64::MAX),
                }),
                _ => None,
            };
            apps.push(AppRecord {
                deadline: row
                    .try_get::<Option<i64>, _>("deadline_ms")?
                    .map(Deadline::from_epoch_ms),
                result,
                attempts: attempts.remove(&id).unwrap_or_default(),
                id,
                name: row.try_get("name")?,
                user: row.try_get("user_name")?,
                queue: row.try_get("queue")?,
                lifecycle,
                progress: row.try_get("progress")?,
                submitted_ms: row.try_get("submitted_ms")?,
                master_command: serde_json::from_str(&command)
                    .map_err(|_| corrupt("master command"))?,
                master_env: serde_json::from_str(&env)
                    .map_err(|_| corrupt("master environment"))?,
                tags: serde_json::from_str(&tags).map_err(|_| corrupt("application tags"))?,
                model: model
                    .map(|m| serde_json::from_str(&m))
                    .transpose()
                    .map_err(|_| corrupt("job model"))?,
                yarn,
            });
        }
        let mut nodes = Vec::new();
        for row in sqlx::query("SELECT * FROM nodes ORDER BY node_id")
            .fetch_all(&self.pool)
            .await?
        {
            let state = match row.try_get::<String, _>("state")?.as_str() {
                "RUNNING" => NodeState::Running,
                "LOST" => NodeState::Lost,
                _ => return Err(corrupt("node state")),
            };
            let node_id: String = row.try_get("node_id")?;
            // Only a node's last known load: one that cannot be read (written by another
            // version) is dropped with a warning rather than keep the rm from starting.
            let sample: Option<String> = row.try_get("telemetry_json")?;
            let at: Option<i64> = row.try_get("telemetry_ms")?;
            let (telemetry, telemetry_ms) = match (sample, at) {
                (Some(json), Some(at)) => match serde_json::from_str::<NodeTelemetry>(&json) {
                    Ok(t) => (t, Some(at)),
                    Err(e) => {
                        tracing::warn!(node = %node_id, error = %e, "the stored load sample cannot be read; dropped");
                        (NodeTelemetry::default(), None)
                    }
                },
                _ => (NodeTelemetry::default(), None),
            };
            nodes.push(NodeInfo {
                node_id,
                rack: row.try_get("rack")?,
                capability: Resource {
                    memory_mb: u64::try_from(row.try_get::<i64, _>("memory_mb")?)
                        .map_err(|_| corrupt("node memory"))?,
                    vcores: u32::try_from(row.try_get::<i64, _>("vcores")?)
                        .map_err(|_| corrupt("node vcores"))?,
                },
                state,
                last_heartbeat_ms: row.try_get("last_heartbeat_ms")?,
                telemetry,
                telemetry_ms,
                lost_ms: None,
            });
        }
        Ok((apps, nodes))
    }
}

async fn set_query_only(conn: &mut SqliteConnection, on: bool) -> Result<(), sqlx::Error> {
    let statement = if on {
        "PRAGMA query_only = ON"
    } else {
        "PRAGMA query_only = OFF"
    };
    sqlx::query(statement).execute(conn).await?;
    Ok(())
}

/// The statements of [`Store::save_changes`], inside its transaction.
async fn write_changes(conn: &mut SqliteConnection, changes: &Changes) -> Result<(), sqlx::Error> {
    let Changes {
        apps,
        nodes,
        removed_nodes,
        datasets,
        removed_datasets,
        recovery,
        deletes,
    } = changes;
    if changes.is_empty() {
        // Page 1 written again, unchanged.
        let (version,): (i64,) = sqlx::query_as("PRAGMA user_version")
            .fetch_one(&mut *conn)
            .await?;
        let statement = format!("PRAGMA user_version = {version}");
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *conn)
            .await?;
        return Ok(());
    }
    for (app, key, value) in recovery {
        sqlx::query(
            "INSERT OR REPLACE INTO app_recovery (application_id, key, value) VALUES (?, ?, ?)",
        )
        .bind(app)
        .bind(key)
        .bind(value)
        .execute(&mut *conn)
        .await?;
    }
    for (d, owner) in datasets {
        sqlx::query(
            "INSERT OR REPLACE INTO datasets (name, created_ms, blocks, owner) VALUES (?, ?, ?, ?)",
        )
        .bind(&d.name)
        .bind(d.created_ms)
        .bind(serde_json::to_string(&d.blocks).unwrap_or_default())
        .bind(owner)
        .execute(&mut *conn)
        .await?;
    }
    for node in removed_nodes {
        sqlx::query("DELETE FROM nodes WHERE node_id = ?")
            .bind(node)
            .execute(&mut *conn)
            .await?;
    }
    for name in removed_datasets {
        sqlx::query("DELETE FROM datasets WHERE name = ?")
            .bind(name)
            .execute(&mut *conn)
            .await?;
    }
    for (node, dataset, pending) in deletes {
        let statement = match pending {
            true => "INSERT OR IGNORE INTO dataset_deletes (node_id, dataset) VALUES (?, ?)",
            false => "DELETE FROM dataset_deletes WHERE node_id = ? AND dataset = ?",
        };
        sqlx::query(statement)
            .bind(node)
            .bind(dataset)
            .execute(&mut *conn)
            .await?;
    }
    for a in apps {
        sqlx::query(
                "INSERT INTO applications (id, name, user_name, queue, state, final_status, attempts, max_attempts, \
                 diagnostics, progress, submitted_ms, master_command, master_env, deadline_ms, processed_fraction, answer, \
                 tags, job_model, yarn_json, answered_ms) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT(id) DO UPDATE SET state = excluded.state, final_status = excluded.final_status, \
                 attempts = excluded.attempts, diagnostics = excluded.diagnostics, progress = excluded.progress, \
                 deadline_ms = excluded.deadline_ms, processed_fraction = excluded.processed_fraction, \
                 answer = excluded.answer, job_model = excluded.job_model, yarn_json = excluded.yarn_json, \
                 answered_ms = excluded.answered_ms",
            )
            .bind(&a.id)
            .bind(&a.name)
            .bind(&a.user)
            .bind(&a.queue)
            .bind(a.lifecycle.state.name())
            .bind(a.lifecycle.final_status.name())
            .bind(i64::from(a.lifecycle.attempts))
            .bind(i64::from(a.lifecycle.max_attempts))
            .bind(&a.lifecycle.diagnostics)
            .bind(a.progress)
            .bind(a.submitted_ms)
            .bind(serde_json::to_string(&a.master_command).unwrap_or_default())
            .bind(serde_json::to_string(&a.master_env).unwrap_or_default())
            .bind(a.deadline.map(Deadline::epoch_ms))
            .bind(a.result.as_ref().map(|r| r.processed_fraction))
            .bind(a.result.as_ref().map(|r| r.answer.to_string()))
            .bind(serde_json::to_string(&a.tags).unwrap_or_else(|_| "[]".into()))
            .bind(a.model.and_then(|m| serde_json::to_string(&m).ok()))
            .bind(serde_json::to_string(&a.yarn).ok())
            .bind(a.result.as_ref().map(|r| r.answered_ms))
            .execute(&mut *conn)
            .await?;
        for t in &a.attempts {
            sqlx::query(
                    "INSERT OR REPLACE INTO attempts (application_id, attempt, container_id, node_id, started_ms) VALUES (?, ?, ?, ?, ?)",
                )
                .bind(&a.id)
                .bind(i64::from(t.attempt))
                .bind(&t.container_id)
                .bind(&t.node_id)
                .bind(t.started_ms)
                .execute(&mut *conn)
                .await?;
        }
        if a.lifecycle.state.is_final() {
            // Kept for a next master attempt; an ended application has none.
            sqlx::query("DELETE FROM app_recovery WHERE application_id = ?")
                .bind(&a.id)
                .execute(&mut *conn)
                .await?;
        }
    }
    for n in nodes {
        // The last load sample; none before the node's first heartbeat.
        let telemetry = n
            .telemetry_ms
            .and_then(|_| serde_json::to_string(&n.telemetry).ok());
        sqlx::query(
                "INSERT OR REPLACE INTO nodes (node_id, rack, memory_mb, vcores, state, last_heartbeat_ms, \
                 telemetry_json, telemetry_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&n.node_id)
            .bind(&n.rack)
            .bind(n.capability.memory_mb as i64)
            .bind(i64::from(n.capability.vcores))
            .bind(match n.state {
                NodeState::Running => "RUNNING",
                NodeState::Lost => "LOST",
            })
            .bind(n.last_heartbeat_ms)
            .bind(telemetry)
            .bind(n.telemetry_ms)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
