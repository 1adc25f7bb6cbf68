-- The resource manager's state: what must survive an rm restart. Written by rm/src/store.rs.

CREATE TABLE applications (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    user_name       TEXT NOT NULL,
    queue           TEXT NOT NULL,
    state           TEXT NOT NULL,    -- Hadoop's spelling: NEW, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
    final_status    TEXT NOT NULL,    -- UNDEFINED, SUCCEEDED, FAILED, KILLED
    attempts        INTEGER NOT NULL,
    max_attempts    INTEGER NOT NULL,
    diagnostics     TEXT NOT NULL,
    progress        REAL NOT NULL,
    submitted_ms    INTEGER NOT NULL,
    master_command  TEXT NOT NULL,    -- JSON array
    master_env      TEXT NOT NULL,    -- JSON object
    deadline_ms     INTEGER           -- for deadline-aware scheduling, when the client gives one
);

CREATE TABLE attempts (
    application_id  TEXT NOT NULL REFERENCES applications(id),
    attempt         INTEGER NOT NULL,
    container_id    TEXT NOT NULL,
    node_id         TEXT NOT NULL,
    started_ms      INTEGER NOT NULL,
    PRIMARY KEY (application_id, attempt)
);

CREATE TABLE nodes (
    node_id            TEXT PRIMARY KEY NOT NULL,
    rack               TEXT NOT NULL,
    memory_mb          INTEGER NOT NULL,
    vcores             INTEGER NOT NULL,
    state              TEXT NOT NULL,  -- RUNNING, LOST
    last_heartbeat_ms  INTEGER NOT NULL
);
