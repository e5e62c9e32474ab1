-- A rotated send key: the sink's old key keeps working beside the new one until
-- previous_key_stops_at (the overlap), digests only, like send_key_sha256. The old key's
-- columns are cleared when it is retired (at the overlap's end by the maintenance sweep, at
-- once by a finished rotation, or by the next rotation), so a sink holds at most two keys.
ALTER TABLE sinks
  ADD COLUMN previous_key_sha256   bytea CHECK (octet_length(previous_key_sha256) = 32),
  ADD COLUMN previous_key_stops_at timestamptz,
  ADD COLUMN key_rotated_at        timestamptz,
  ADD CONSTRAINT sinks_previous_key CHECK ((previous_key_sha256 IS NULL) = (previous_key_stops_at IS NULL));

-- The sweep finds the old keys whose overlap ended without visiting every sink.
CREATE INDEX sinks_previous_key_stops ON sinks (previous_key_stops_at) WHERE previous_key_sha256 IS NOT NULL;
