-- What YARN's application report carries beyond yard's lifecycle (rm::cluster::YarnFields as
-- JSON: application type, master resource, finish time, memory- and vcore-seconds, lifetime).
-- NULL for applications stored before: they read as the defaults.
ALTER TABLE applications ADD COLUMN yarn_json TEXT;
