-- Table upkeep (manifest merge, compaction, snapshot expiry), run by the roller under the
-- sink's lease: one row per reported run. A run is keyed by its start time (the roller's
-- clock), so the same report twice is recognised and answered the same. `report` holds the
-- figures as reported (the request body less lease_id and started_at, which have columns).
CREATE TABLE sink_upkeeps (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  sink_id    text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  lease_id   uuid NOT NULL,
  roller_id  text NOT NULL,
  started_at timestamptz NOT NULL,
  outcome    text NOT NULL CHECK (outcome IN ('done', 'nothing', 'failed')),
  report     jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT sink_upkeeps_started UNIQUE (sink_id, started_at)
);
-- Maintenance prunes runs by age.
CREATE INDEX sink_upkeeps_recorded ON sink_upkeeps (created_at);

-- The newest run in the public view's shape ({at, outcome, seconds, files_before, ...}), kept
-- on the sink like last_roll: the roller's view reads it on every tick for every live sink,
-- which must cost no join and no probe per sink.
ALTER TABLE sinks ADD COLUMN last_upkeep jsonb;
