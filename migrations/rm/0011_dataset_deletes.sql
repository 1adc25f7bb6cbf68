-- Deletions of datasets' blocks not yet told to their nodes (rm::cluster::datasets): a node and
-- a dataset whose directory it is to delete, told in its next heartbeat reply. Saved with the
-- removal that made it, gone once told, so an rm restarted in between still tells it.
CREATE TABLE dataset_deletes (
    node_id TEXT NOT NULL,
    dataset TEXT NOT NULL,
    PRIMARY KEY (node_id, dataset)
);
