-- How many times the rm has started on this state (YARN's rm epoch): the `e<N>` of container
-- ids, so a restarted rm never hands out a container id an earlier one did. One row.
CREATE TABLE rm_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    epoch INTEGER NOT NULL
);
