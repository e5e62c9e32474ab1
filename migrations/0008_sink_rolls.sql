-- One roller at a time per sink: a lease with an expiry, taken and renewed atomically (an
-- expired lease can be taken over). Times are the database's clock, never a roller's.
CREATE TABLE sink_leases (
  sink_id     text PRIMARY KEY REFERENCES sinks (id) ON DELETE CASCADE,
  lease_id    uuid NOT NULL,
  roller_id   text NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- Rolls: an intent (snapshot id and batch ids) recorded before the roller commits, closed by
-- its report. Recovery reads the open ones, so it works even after the snapshot itself was
-- expired from the table. A report without an intent (an empty or failed roll) gets a row
-- too, keyed by its start time, so the same report twice is recognised.
CREATE TABLE sink_rolls (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  sink_id     text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  state       text NOT NULL CHECK (state IN ('open', 'committed', 'empty', 'failed')),
  snapshot_id text CHECK (snapshot_id ~ '^[1-9][0-9]{0,18}$'),
  batch_ids   text[] NOT NULL,
  lease_id    uuid NOT NULL,
  roller_id   text NOT NULL,
  -- From the report: when the roll started (the roller's clock), what it said, what we answered.
  started_at  timestamptz,
  report      jsonb,
  result      jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  closed_at   timestamptz,
  CONSTRAINT sink_rolls_closed CHECK ((state = 'open') = (closed_at IS NULL)),
  CONSTRAINT sink_rolls_committed_snapshot CHECK (state <> 'committed' OR snapshot_id IS NOT NULL)
);

CREATE UNIQUE INDEX sink_rolls_snapshot ON sink_rolls (sink_id, snapshot_id) WHERE snapshot_id IS NOT NULL;
CREATE UNIQUE INDEX sink_rolls_started ON sink_rolls (sink_id, started_at) WHERE started_at IS NOT NULL;
CREATE INDEX sink_rolls_by_sink ON sink_rolls (sink_id, created_at DESC);
CREATE INDEX sink_rolls_settled ON sink_rolls (closed_at) WHERE state <> 'open';

-- The roller's view aggregates pending batches only; this index holds exactly those, so
-- 10,000 idle sinks cost an empty index scan, not 10,000 probes.
CREATE INDEX sink_batches_pending ON sink_batches (sink_id) INCLUDE (bytes, received_at) WHERE state = 'pending';
