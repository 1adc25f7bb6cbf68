-- What a deadline-bound job answered (yard's own fields, reported by its master): the fraction
-- of its input it processed and its answer, as the master's JSON.

ALTER TABLE applications ADD COLUMN processed_fraction REAL;
ALTER TABLE applications ADD COLUMN answer TEXT;
