-- A node's last load sample (yard_wire::telemetry::NodeTelemetry as JSON) and when the rm
-- received it (ms since the epoch): after a restart the rm shows each node's last known load
-- until its next heartbeat. NULL: no sample yet.
ALTER TABLE nodes ADD COLUMN telemetry_json TEXT;
ALTER TABLE nodes ADD COLUMN telemetry_ms INTEGER;
