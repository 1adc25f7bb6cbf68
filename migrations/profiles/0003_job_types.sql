-- Job typing (seed 002 §4.1, eq. 1-2; appmaster/src/typing.rs): per job kind, whether its map
-- part and its reduce part are CPU- or IO-bound, as the first map and the first reduce that
-- finished in a run of the kind while that part was untyped (its probes) measured them.
-- A part typed once keeps its type: a later record fills only a part still NULL. Each part's
-- columns are all NULL (not typed yet) or all set.

CREATE TABLE job_types (
    kind                    TEXT PRIMARY KEY NOT NULL,
    map_bound               TEXT CHECK (map_bound IN ('cpu', 'io')),
    map_input_bytes         REAL,     -- the probe's MID: bytes it read
    map_output_bytes        REAL,     -- MOD: bytes it wrote
    map_seconds             REAL,     -- MTCT: its run time
    map_demand              REAL,     -- q = (MID + MOD) / MTCT, bytes per second
    map_disk_rate           REAL,     -- the DiskIORate q was held against, bytes per second
    map_disk_rate_source    TEXT CHECK (map_disk_rate_source IN ('node', 'default')),
    map_recorded_ms         INTEGER,  -- ms since the Unix epoch
    reduce_bound            TEXT CHECK (reduce_bound IN ('cpu', 'io')),
    reduce_input_bytes      REAL,     -- the reduce's shuffle input
    reduce_output_bytes     REAL,     -- what it wrote (its partial answer)
    reduce_seconds          REAL,     -- its run time less its wait for map outputs
    reduce_demand           REAL,
    reduce_disk_rate        REAL,
    reduce_disk_rate_source TEXT CHECK (reduce_disk_rate_source IN ('node', 'default')),
    reduce_recorded_ms      INTEGER
);
