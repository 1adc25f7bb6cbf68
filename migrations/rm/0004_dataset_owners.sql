-- Who put each dataset: only that user (or an admin) may replace it. Datasets put before
-- authentication have no owner ('' ): only an admin may replace those.
ALTER TABLE datasets ADD COLUMN owner TEXT NOT NULL DEFAULT '';
