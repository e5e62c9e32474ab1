-- Every failed roll with its reason (issue 35). sink_rolls holds only the rolls that reached
-- their intent, so a roll that failed before it (the store or the catalog out of reach) was
-- counted nowhere but in the sink's run of failures. Pruned with the roll records.
CREATE TABLE sink_roll_failures (
  sink_id   text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  failed_at timestamptz NOT NULL DEFAULT now(),
  code      text NOT NULL
);
CREATE INDEX sink_roll_failures_by_sink ON sink_roll_failures (sink_id, failed_at);
