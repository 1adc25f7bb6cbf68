-- What a running application's master keeps for its next attempt (Hadoop's MapReduce
-- recovery): opaque JSON values by key, e.g. one per finished map with where its output is.
-- Rows go when the application ends.
CREATE TABLE app_recovery (
    application_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (application_id, key)
) WITHOUT ROWID;
