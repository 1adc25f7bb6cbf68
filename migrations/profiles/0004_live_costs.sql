-- Live costs (issue 29 item 5; appmaster/live/src/master/costs.rs): what a master measured on
-- a cluster of the time it takes to answer (the policy's Finish to the rm accepting the
-- result), to launch a task (the launch decision to its process first reporting) and to be
-- granted a container (asking for it to its runner being ready). Kept per cluster, not per job
-- kind: the next master on the same cluster takes its deadline margin from them. Only the
-- most recent samples of each cost and cluster are kept (`LIVE_COST_SAMPLES`).

CREATE TABLE live_costs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster      TEXT NOT NULL,     -- the rm's address, as masters are given it (YARD_RM)
    cost         TEXT NOT NULL CHECK (cost IN ('answer', 'launch', 'grant')),
    seconds      REAL NOT NULL CHECK (seconds >= 0),
    recorded_ms  INTEGER NOT NULL
);
CREATE INDEX live_costs_by_cluster ON live_costs (cluster, cost, id);
