//! yard-profiles: the SQLite job-profile store (sqlx, WAL). Per job kind it keeps what the Dart
//! profiler and task sampler measure (§5.1), the fit of reduce time vs input (eq. 9), and the
//! kind's type (seed 002 eq. 1–2: its map and reduce part CPU- or IO-bound, as its probes
//! measured them; `yard_appmaster::typing`).
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

use sqlx::migrate::MigrateError;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{Row, Sqlite, SqlitePool};
use yard_appmaster::apps::MAX_KIND_CHARS;
use yard_appmaster::policy::{PowerLaw, Profile, Profiler, RunRecord};
use yard_appmaster::typing::{KindType, Part, PartType, Probe, RateSource};
use yard_cluster::ids::Bound;

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A migration that fails (another process applying it at the same moment) is tried this many
/// times in all, this long apart.
const MIGRATE_TRIES: u32 = 20;
const MIGRATE_RETRY: Duration = Duration::from_millis(50);

/// SQLITE_BUSY or one of its extended codes (the primary code is the low byte).
fn is_busy(e: &dyn sqlx::error::DatabaseError) -> bool {
    e.code()
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| code & 0xff == 5)
}

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
    /// Masters fit their kinds to the limit (`AppSpec::job_kind`): this is the backstop.
    #[error("job kind {0:?}: name it with 1 to {max} printable characters", max = MAX_KIND_CHARS)]
    BadKind(String),
    #[error("a reduce sample needs finite, non-negative bytes and seconds, not ({0}, {1})")]
    BadSample(f64, f64),
    #[error("a job type needs finite, non-negative measurements and a positive disk rate: {0}")]
    BadType(String),
    #[error("cluster {0:?}: name it with 1 to 500 printable characters")]
    BadCluster(String),
    #[error("a live cost needs finite, non-negative seconds, not {0}")]
    BadCost(f64),
    #[error("job kind {kind:?}: the stored {part} type is unreadable ({why})")]
    BadStoredType {
        kind: String,
        part: &'static str,
        why: String,
    },
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
    /// The kind's type, each part once a probe typed it ([`ProfileStore::record_type`]): a
    /// master starts from it, so a kind typed before is typed from its first task on.
    pub job_type: KindType,
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

/// How many of the most recent samples of each live cost a cluster keeps: older ones go.
pub const LIVE_COST_SAMPLES: usize = 200;

/// A cost a live master measures on its cluster (`live_costs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LiveCost {
    /// The policy's `Finish` to the rm accepting the result.
    Answer,
    /// A launch decision to the task's process first reporting.
    Launch,
    /// Asking for a container (the wanted count rising) to its runner being ready.
    Grant,
    /// A reduce told to answer from what it has (`CutReduce`) to its report.
    Cut,
}

impl LiveCost {
    pub const ALL: [LiveCost; 4] = [
        LiveCost::Answer,
        LiveCost::Launch,
        LiveCost::Grant,
        LiveCost::Cut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LiveCost::Answer => "answer",
            LiveCost::Launch => "launch",
            LiveCost::Grant => "grant",
            LiveCost::Cut => "cut",
        }
    }
}

/// A cluster's recent live-cost samples, seconds, oldest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CostSamples {
    pub answer: Vec<f64>,
    pub launch: Vec<f64>,
    pub grant: Vec<f64>,
    pub cut: Vec<f64>,
}

impl CostSamples {
    pub fn of(&self, cost: LiveCost) -> &[f64] {
        match cost {
            LiveCost::Answer => &self.answer,
            LiveCost::Launch => &self.launch,
            LiveCost::Grant => &self.grant,
            LiveCost::Cut => &self.cut,
        }
    }

    pub fn of_mut(&mut self, cost: LiveCost) -> &mut Vec<f64> {
        match cost {
            LiveCost::Answer => &mut self.answer,
            LiveCost::Launch => &mut self.launch,
            LiveCost::Grant => &mut self.grant,
            LiveCost::Cut => &mut self.cut,
        }
    }
}

fn check_cluster(cluster: &str) -> Result<(), ProfileError> {
    let ok = !cluster.is_empty()
        && cluster.chars().count() <= 500
        && !cluster.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(ProfileError::BadCluster(cluster.into()))
    }
}

fn check_kind(kind: &str) -> Result<(), ProfileError> {
    let ok = !kind.is_empty()
        && kind.chars().count() <= MAX_KIND_CHARS
        && !kind.chars().any(char::is_control);
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
        // Several processes may open a new database at once (a fresh cluster's first masters
        // and its rm). Switching a new file to WAL can meet another opener's lock that SQLite
        // reports as busy at once, without waiting: the connection is tried again.
        let mut tries = 1;
        let pool = loop {
            match SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options.clone())
                .await
            {
                Ok(pool) => break pool,
                Err(sqlx::Error::Database(e)) if is_busy(&*e) && tries < MIGRATE_TRIES => {
                    tries += 1;
                    tokio::time::sleep(MIGRATE_RETRY).await;
                }
                Err(source) => return Err(open(source)),
            }
        };
        // Each opener reads which migrations are applied, then applies the rest, so one may
        // run into a table another has just created. A migration commits with its record, so
        // reading again a moment later finds it applied: a migration that fails is retried a
        // few times before the file is called another program's.
        let migrator = sqlx::migrate!("../migrations/profiles");
        let mut tries = 1;
        loop {
            match migrator.run(&pool).await {
                Ok(()) => break,
                Err(MigrateError::ExecuteMigration(..) | MigrateError::Execute(_))
                    if tries < MIGRATE_TRIES =>
                {
                    tries += 1;
                    tokio::time::sleep(MIGRATE_RETRY).await;
                }
                Err(source) => {
                    return Err(ProfileError::Migrate {
                        path: shown.clone(),
                        source,
                    });
                }
            }
        }
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
                "INSERT INTO runs (kind, recorded_ms, map_local, map_remote, map_shortest, map_spread, partition_bytes, shuffle_bandwidth, k, max_reduce_input) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            )
            .bind(kind)
            .bind(recorded_ms)
            .bind(run.map_local)
            .bind(run.map_remote)
            .bind(run.map_shortest)
            .bind(run.map_spread)
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
                map_shortest: row.try_get("map_shortest")?,
                map_spread: row.try_get("map_spread")?,
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
        let job_type = self.load_type(kind).await?;
        Ok(Stored {
            runs,
            sampled,
            fit,
            job_type,
        })
    }

    /// The type stored for `kind`: each part's, if a probe typed it (both `None` for a kind
    /// never typed).
    pub async fn load_type(&self, kind: &str) -> Result<KindType, ProfileError> {
        check_kind(kind)?;
        let Some(row) = sqlx::query("SELECT * FROM job_types WHERE kind = ?")
            .bind(kind)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(KindType::default());
        };
        Ok(KindType {
            map: part_from_row(&row, kind, Part::Map)?,
            reduce: part_from_row(&row, kind, Part::Reduce)?,
        })
    }

    /// Records `part` of `kind` as its probe typed it — unless that part is typed already: a
    /// kind typed once keeps its type, and recording again only fills a part still missing
    /// (another master's probe of the same kind, which finished later, or a later run on a
    /// node with another disk rate, overwrites nothing). Returns whether it was stored; a
    /// master whose record was not stored takes the stored type ([`Self::load_type`]).
    pub async fn record_type(
        &self,
        kind: &str,
        part: Part,
        typed: &PartType,
    ) -> Result<bool, ProfileError> {
        check_kind(kind)?;
        check_type(typed)?;
        let p = part.name();
        let mut conn = self.begin().await?;
        let result = async {
            sqlx::query("INSERT INTO job_types (kind) VALUES (?) ON CONFLICT (kind) DO NOTHING")
                .bind(kind)
                .execute(&mut *conn)
                .await?;
            // `p` is "map" or "reduce": the column names are ours, never input.
            let filled = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE job_types SET {p}_bound = ?, {p}_input_bytes = ?, {p}_output_bytes = ?, \
                 {p}_seconds = ?, {p}_demand = ?, {p}_disk_rate = ?, {p}_disk_rate_source = ?, \
                 {p}_recorded_ms = ? WHERE kind = ? AND {p}_bound IS NULL"
            )))
            .bind(typed.bound.name())
            .bind(typed.probe.input_bytes)
            .bind(typed.probe.output_bytes)
            .bind(typed.probe.seconds)
            .bind(typed.demand)
            .bind(typed.disk_rate)
            .bind(typed.rate_source.name())
            .bind(typed.recorded_ms)
            .bind(kind)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            Ok(filled == 1)
        }
        .await;
        end(conn, result).await
    }

    /// Records what a master measured on `cluster` (every sample of `samples`), keeping only
    /// the [`LIVE_COST_SAMPLES`] most recent of each cost.
    pub async fn add_costs(
        &self,
        cluster: &str,
        recorded_ms: i64,
        samples: &CostSamples,
    ) -> Result<(), ProfileError> {
        check_cluster(cluster)?;
        if let Some(&bad) = LiveCost::ALL
            .iter()
            .flat_map(|&c| samples.of(c))
            .find(|s| !(s.is_finite() && **s >= 0.0))
        {
            return Err(ProfileError::BadCost(bad));
        }
        let mut conn = self.begin().await?;
        let result = async {
            for cost in LiveCost::ALL {
                for &seconds in samples.of(cost) {
                    sqlx::query(
                        "INSERT INTO live_costs (cluster, cost, seconds, recorded_ms) VALUES (?, ?, ?, ?)",
                    )
                    .bind(cluster)
                    .bind(cost.name())
                    .bind(seconds)
                    .bind(recorded_ms)
                    .execute(&mut *conn)
                    .await?;
                }
                sqlx::query(
                    "DELETE FROM live_costs WHERE cluster = ? AND cost = ? AND id NOT IN \
                     (SELECT id FROM live_costs WHERE cluster = ? AND cost = ? ORDER BY id DESC LIMIT ?)",
                )
                .bind(cluster)
                .bind(cost.name())
                .bind(cluster)
                .bind(cost.name())
                .bind(LIVE_COST_SAMPLES as i64)
                .execute(&mut *conn)
                .await?;
            }
            Ok(())
        }
        .await;
        end(conn, result).await
    }

    /// The recent live-cost samples of `cluster`, oldest first (empty for a cluster never seen).
    pub async fn load_costs(&self, cluster: &str) -> Result<CostSamples, ProfileError> {
        check_cluster(cluster)?;
        let mut out = CostSamples::default();
        for cost in LiveCost::ALL {
            let rows = sqlx::query(
                "SELECT seconds FROM live_costs WHERE cluster = ? AND cost = ? ORDER BY id",
            )
            .bind(cluster)
            .bind(cost.name())
            .fetch_all(&self.pool)
            .await?;
            for row in rows {
                out.of_mut(cost).push(row.try_get("seconds")?);
            }
        }
        Ok(out)
    }

    /// A connection holding the writer lock (`BEGIN IMMEDIATE`); [`end`] commits or rolls back.
    async fn begin(&self) -> Result<PoolConnection<Sqlite>, ProfileError> {
        let mut conn = self.pool.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        Ok(conn)
    }
}

async fn end<T>(
    mut conn: PoolConnection<Sqlite>,
    result: Result<T, ProfileError>,
) -> Result<T, ProfileError> {
    match result {
        Ok(value) => {
            sqlx::query("COMMIT").execute(&mut *conn).await?;
            Ok(value)
        }
        Err(e) => {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            Err(e)
        }
    }
}

fn check_type(t: &PartType) -> Result<(), ProfileError> {
    let measured = |x: f64| x.is_finite() && x >= 0.0;
    let Probe {
        input_bytes,
        output_bytes,
        seconds,
    } = t.probe;
    let ok = [input_bytes, output_bytes, seconds, t.demand]
        .into_iter()
        .all(measured)
        && t.disk_rate.is_finite()
        && t.disk_rate > 0.0;
    if ok {
        Ok(())
    } else {
        Err(ProfileError::BadType(format!("{t:?}")))
    }
}

/// `part`'s columns of a `job_types` row: `None` while its bound is NULL (not typed yet).
fn part_from_row(
    row: &sqlx::sqlite::SqliteRow,
    kind: &str,
    part: Part,
) -> Result<Option<PartType>, ProfileError> {
    let p = part.name();
    let col = |name: &str| format!("{p}_{name}");
    let Some(bound) = row.try_get::<Option<String>, _>(col("bound").as_str())? else {
        return Ok(None);
    };
    let bad = |why: String| ProfileError::BadStoredType {
        kind: kind.to_owned(),
        part: p,
        why,
    };
    let real = |name: &str| -> Result<f64, ProfileError> {
        row.try_get::<Option<f64>, _>(col(name).as_str())?
            .ok_or_else(|| bad(format!("{} is NULL", col(name))))
    };
    let source: Option<String> = row.try_get(col("disk_rate_source").as_str())?;
    Ok(Some(PartType {
        bound: Bound::parse(&bound).ok_or_else(|| bad(format!("bound {bound:?}")))?,
        probe: Probe {
            input_bytes: real("input_bytes")?,
            output_bytes: real("output_bytes")?,
            seconds: real("seconds")?,
        },
        demand: real("demand")?,
        disk_rate: real("disk_rate")?,
        rate_source: source
            .as_deref()
            .and_then(RateSource::parse)
            .ok_or_else(|| bad(format!("disk rate source {source:?}")))?,
        recorded_ms: row
            .try_get::<Option<i64>, _>(col("recorded_ms").as_str())?
            .ok_or_else(|| bad(format!("{} is NULL", col("recorded_ms"))))?,
    }))
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
