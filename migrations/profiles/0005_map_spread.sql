-- What each run measured of its node-local maps beyond their mean (issue 29): the shortest,
-- for `dart`'s lone_map, and the spread of ln(duration), for its forecast. NULL: not
-- measured (older runs, or fewer than three node-local maps for the spread).
ALTER TABLE runs ADD COLUMN map_shortest REAL;
ALTER TABLE runs ADD COLUMN map_spread REAL;
