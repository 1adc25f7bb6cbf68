-- Datasets' block maps: which nodes hold each block's replicas (the bytes live on the
-- nodemanagers' data directories). Written by rm/src/store.rs.

CREATE TABLE datasets (
    name        TEXT PRIMARY KEY NOT NULL,
    created_ms  INTEGER NOT NULL,
    blocks      TEXT NOT NULL       -- JSON array of {block, bytes, nodes}
);
