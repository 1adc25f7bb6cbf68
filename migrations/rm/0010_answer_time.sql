-- When the rm received a job's answer (ms since the epoch, its own clock): the time its deadline
-- outcome counts (rm::cluster::deadline_outcome). NULL for answers stored before: they read as
-- received when their application ended.
ALTER TABLE applications ADD COLUMN answered_ms INTEGER;
