-- The cut's cost (issue 29): a reduce told to answer from what it has (`CutReduce`) to its
-- report, measured as the other live costs are; `dart`'s last_moment cuts its last reduces
-- this cost's p99 before the deadline. SQLite cannot widen a CHECK in place: the table is
-- rebuilt with its rows.
CREATE TABLE live_costs_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster      TEXT NOT NULL,
    cost         TEXT NOT NULL CHECK (cost IN ('answer', 'launch', 'grant', 'cut')),
    seconds      REAL NOT NULL CHECK (seconds >= 0),
    recorded_ms  INTEGER NOT NULL
);
INSERT INTO live_costs_new (id, cluster, cost, seconds, recorded_ms)
    SELECT id, cluster, cost, seconds, recorded_ms FROM live_costs;
DROP TABLE live_costs;
ALTER TABLE live_costs_new RENAME TO live_costs;
CREATE INDEX live_costs_by_cluster ON live_costs (cluster, cost, id);
