-- Snapshot retention per sink: upkeep's expiry keeps the newest keep_snapshots of the table's
-- main and never a snapshot younger than min_snapshot_age_seconds. The defaults are what the
-- roller's one global setting was for every sink before (20 snapshots, 10 minutes).
ALTER TABLE sinks
  ADD COLUMN keep_snapshots           integer NOT NULL DEFAULT 20 CHECK (keep_snapshots BETWEEN 1 AND 1000),
  ADD COLUMN min_snapshot_age_seconds integer NOT NULL DEFAULT 600 CHECK (min_snapshot_age_seconds BETWEEN 0 AND 31536000);
