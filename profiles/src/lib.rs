//! yard-profiles: the SQLite job-profile store (sqlx, WAL). Per job kind it keeps what the Dart
//! profiler and task sampler measure (§5.1), and the fit of reduce time vs input (eq. 9).
//!
//! Several masters (processes) write one database at once: every write is a single
//! `BEGIN IMMEDIATE` transaction (the writer lock is taken up front, so two writers never
//! deadlock upgrading a read lock) and waits up to [`BUSY_TIMEOUT`] for the lock. The fit is
//! refreshed in the same transaction as the samples it covers, so it never lags them.
//! Turning records into the next run's [`Profile`] is the appmaster's [`Profiler`]; this
//! crate only stores and loads.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{Row, Sqlite, SqlitePool};
use yard_appmaster::policy::{PowerLaw, Profile, Profiler, RunRecord};

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("the profile database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error(
        "the profile database {path} cannot be brought up to date ({source}): is it another program's file?"
    )]
    Migrate {
        path: String,
        source: sqlx::migrate::MigrateError,
    },
    #[error("the profile database: {0}")]
    Query(#[from] sqlx::Error),
    #[error("job kind {0:?}: name it with 1 to 200 printable characters")]
    BadKind(String),
    #[error("a reduce sample needs finite, non-negative bytes and seconds, not ({0}, {1})")]
    BadSample(f64, f64),
}

/// The store of one database file.
#[derive(Debug, Clone)]
pub struct ProfileStore {
    pool: SqlitePool,
}

/// Everything stored for a job kind.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stored {
    /// Earlier runs, oldest first (reduce samples included).
    pub runs: Vec<RunRecord>,
    /// The task sampler's samples, not tied to a run.
    pub sampled: Vec<(f64, f64)>,
    /// f(d) = a·d^b over every sample, when two distinct sizes allow a fit.
    pub fit: Option<PowerLaw>,
}

impl Stored {
    /// The appmaster's profiler over what is stored, falling back on `defaults`.
    pub fn profiler(&self, defaults: Profile) -> Profiler {
        let mut p = Profiler::new(defaults);
        p.reduce_samples.extend(self.sampled.iter().copied());
        for run in &self.runs {
            p.add_run(run.clone());
        }
        p
    }
}

fn check_kind(kind: &str) -> Result<(), ProfileError> {
    let ok = !kind.is_empty() && kind.chars().count() <= 200 && !kind.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(ProfileError::BadKind(kind.into()))
    }
}

fn check_samples(samples: &[(f64, f64)]) -> Result<(), ProfileError> {
    match samples
        .iter()
        .find(|(d, t)| !(d.is_finite() && t.is_finite() && *d >= 0.0 && *t >= 0.0))
    {
        Some(&(d, t)) => Err(ProfileError::BadSample(d, t)),
        None => Ok(()),
    }
}

impl ProfileStore {
    /// Opens (creating if missing) the database at `path` and applies the migrations.
    pub async fn open(path: &Path) -> Result<ProfileStore, ProfileError> {
        let shown = path.display().to_string();
        let open = |source| ProfileError::Open {
            path: shown.clone(),
            source,
        };
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{shown}"))
            .map_err(open)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(open)?;
        sqlx::migrate!("../migrations/profiles")
            .run(&pool)
            .await
            .map_err(|source| ProfileError::Migrate {
                path: shown.clone(),
                source,
            })?;
        Ok(ProfileStore { pool })
    }

    /// Records a finished run of `kind` (with its reduces as samples) and refreshes the fit.
    pub async fn add_run(
        &self,
        kind: &str,
        recorded_ms: i64,
        run: &RunRecord,
    ) -> Result<(), ProfileError> {
        check_kind(kind)?;
        check_samples(&run.reduce_samples)?;
        let mut conn = self.begin().await?;
        let result = async {
            let id: i64 = sqlx::query(
                "INSERT INTO runs (kind, recorded_ms, map_local, map_remote, partition_bytes, shuffle_bandwidth, k, max_reduce_input) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            )
            .bind(kind)
            .bind(recorded_ms)
            .bind(run.map_local)
            .bind(run.map_remote)
            .bind(run.partition_bytes)
            .bind(run.shuffle_bandwidth)
            .bind(i64::from(run.k))
            .bind(i64::try_from(run.max_reduce_input).unwrap_or(i64::MAX))
            .fetch_one(&mut *conn)
            .await?
            .try_get("id")?;
            insert_samples(&mut conn, kind, &run.reduce_samples, Some(id)).await?;
            refit(&mut conn, kind).await
        }
        .await;
        end(conn, result).await
    }

    /// Records the task sampler's reduce samples `(bytes, seconds)` and refreshes the fit.
    pub async fn add_samples(
        &self,
        kind: &str,
        samples: &[(f64, f64)],
    ) -> Result<(), ProfileError> {
        check_kind(kind)?;
        check_samples(samples)?;
        let mut conn = self.begin().await?;
        let result = async {
            insert_samples(&mut conn, kind, samples, None).await?;
            refit(&mut conn, kind).await
        }
        .await;
        end(conn, result).await
    }

    /// Everything stored for `kind` (empty for a kind never seen).
    pub async fn load(&self, kind: &str) -> Result<Stored, ProfileError> {
        check_kind(kind)?;
        let mut runs = Vec::new();
        let mut ids = Vec::new();
        for row in sqlx::query("SELECT * FROM runs WHERE kind = ? ORDER BY id")
            .bind(kind)
            .fetch_all(&self.pool)
            .await?
        {
            ids.push(row.try_get::<i64, _>("id")?);
            runs.push(RunRecord {
                map_local: row.try_get("map_local")?,
                map_remote: row.try_get("map_remote")?,
                partition_bytes: row.try_get("partition_bytes")?,
                shuffle_bandwidth: row.try_get("shuffle_bandwidth")?,
                k: u32::try_from(row.try_get::<i64, _>("k")?).unwrap_or(0),
                max_reduce_input: u64::try_from(row.try_get::<i64, _>("max_reduce_input")?)
                    .unwrap_or(0),
                reduce_samples: Vec::new(),
            });
        }
        let mut sampled = Vec::new();
        for row in sqlx::query(
            "SELECT bytes, seconds, run_id FROM reduce_samples WHERE kind = ? ORDER BY rowid",
        )
        .bind(kind)
        .fetch_all(&self.pool)
        .await?
        {
            let sample = (row.try_get("bytes")?, row.try_get("seconds")?);
            match row
                .try_get::<Option<i64>, _>("run_id")?
                .and_then(|id| ids.iter().position(|&i| i == id))
            {
                Some(i) => runs[i].reduce_samples.push(sample),
                None => sampled.push(sample),
            }
        }
        let fit = sqlx::query("SELECT a, b, spread FROM fits WHERE kind = ?")
            .bind(kind)
            .fetch_optional(&self.pool)
            .await?
            .map(|row| {
                Ok::<_, sqlx::Error>(PowerLaw {
                    a: row.try_get("a")?,
                    b: row.try_get("b")?,
                    spread: row.try_get("spread")?,
                })
            })
            .transpose()?;
        Ok(Stored { runs, sampled, fit })
    }

    /// A connection holding the writer lock (`BEGIN IMMEDIATE`); [`end`] commits or rolls back.
    async fn begin(&self) -> Result<PoolConnection<Sqlite>, ProfileError> {
        let mut conn = self.pool.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        Ok(conn)
    }
}

async fn end(
    mut conn: PoolConnection<Sqlite>,
    result: Result<(), ProfileError>,
) -> Result<(), ProfileError> {
    match result {
        Ok(()) => {
            sqlx::query("COMMIT").execute(&mut *conn).await?;
            Ok(())
        }
        Err(e) => {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            Err(e)
        }
    }
}

async fn insert_samples(
    conn: &mut sqlx::SqliteConnection,
    kind: &str,
    samples: &[(f64, f64)],
    run: Option<i64>,
) -> Result<(), ProfileError> {
    for &(bytes, seconds) in samples {
        sqlx::query(
            "INSERT INTO reduce_samples (kind, bytes, seconds, run_id) VALUES (?, ?, ?, ?)",
        )
        .bind(kind)
        .bind(bytes)
        .bind(seconds)
        .bind(run)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Eq. (9) refitted over every sample of `kind`, in the writer's transaction.
async fn refit(conn: &mut sqlx::SqliteConnection, kind: &str) -> Result<(), ProfileError> {
    let samples: Vec<(f64, f64)> =
        sqlx::query("SELECT bytes, seconds FROM reduce_samples WHERE kind = ?")
            .bind(kind)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|row| Ok((row.try_get("bytes")?, row.try_get("seconds")?)))
            .collect::<Result<_, sqlx::Error>>()?;
    if let Some(fit) = PowerLaw::fit(&samples) {
        sqlx::query(
            "INSERT OR REPLACE INTO fits (kind, a, b, spread, samples) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(kind)
        .bind(fit.a)
        .bind(fit.b)
        .bind(fit.spread)
        .bind(samples.len() as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
