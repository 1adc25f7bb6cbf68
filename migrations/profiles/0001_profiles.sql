-- The job-profile store (profiles/src/lib.rs): what earlier runs of each recurring job kind
-- measured (Dart §5.1), the task sampler's reduce samples, and the fitted f(d) = a·d^b (eq. 9).

CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    kind               TEXT NOT NULL,     -- the application and its parameters, e.g. "wordcount"
    recorded_ms        INTEGER NOT NULL,
    map_local          REAL,              -- seconds, mean of node-local maps
    map_remote         REAL,              -- seconds, mean of the others
    partition_bytes    REAL,              -- mean bytes one map sent to one reducer
    shuffle_bandwidth  REAL,              -- bytes per second
    k                  INTEGER NOT NULL,  -- map outputs in the answer (eq. 13's k_i)
    max_reduce_input   INTEGER NOT NULL   -- the largest reduce input, bytes (d_{k_i})
);
CREATE INDEX runs_by_kind ON runs (kind, id);

CREATE TABLE reduce_samples (
    kind     TEXT NOT NULL,
    bytes    REAL NOT NULL,               -- d: a reduce's input
    seconds  REAL NOT NULL,               -- f(d): its time
    run_id   INTEGER REFERENCES runs(id)  -- NULL for the task sampler's samples
);
CREATE INDEX reduce_samples_by_kind ON reduce_samples (kind);

CREATE TABLE fits (
    kind     TEXT PRIMARY KEY NOT NULL,
    a        REAL NOT NULL,
    b        REAL NOT NULL,
    samples  INTEGER NOT NULL             -- how many samples the fit is over
);
