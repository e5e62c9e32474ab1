-- Why the sink's rolls fail, while they do: {code, message, since, last_at, attempts}, set by
-- the roller after every failed roll and cleared by the next good one. Kept on the sink like
-- last_roll, so listing sinks (and the stalled ones) costs no join.
ALTER TABLE sinks ADD COLUMN roll_error jsonb;
CREATE INDEX sinks_stalled ON sinks (project_id) WHERE roll_error IS NOT NULL AND deleted_at IS NULL;
