-- What the deadline-aware cluster policies read of an application (rm/src/policy.rs): its
-- Hadoop application tags as submitted (JSON array; a `deadline=<epoch ms>` tag sets its
-- deadline), and what its master registered of its work (JSON: task counts and ARIA's profile)
-- so that its quota survives an rm restart.
ALTER TABLE applications ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE applications ADD COLUMN job_model TEXT;
