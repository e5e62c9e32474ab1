-- The intake ledger partitioned by day, so that pruning a day of batches is dropping its
-- partition rather than deleting its rows one by one (research/39).
--
-- A partitioned table's unique index must hold the partition key, so (sink_id, batch_id) is
-- unique per day only; across days a claim keeps it unique by looking for the id in the
-- whole ledger before it inserts. Two claims of one id could still both find nothing if
-- their snapshots were taken before the other committed, one on each side of a day change.
-- That cannot happen because the day is not the clock's: new claims go to the day in
-- sink_ledger_today, which the API's maintenance moves forward under an ACCESS EXCLUSIVE
-- lock on that table. Every claim reads it, so holds a lock on it from before its statement's
-- snapshot until commit: the move waits for every claim of the old day to commit, and a claim
-- of the new day takes its snapshot after the move, so it sees them all.
--
-- The answer a send got is no longer stored whole: it is rebuilt from the row's columns, with
-- the positions of the elements that are not objects in `reasons` (NULL when there are none).

-- One row per partition. quiet_since: when maintenance first found the day, after new claims
-- had moved to a later day, with no batch storing or pending; no row of it can settle later,
-- so seven days after that the whole day is past the replay window and is dropped.
CREATE TABLE sink_ledger_days (
  day         date PRIMARY KEY,
  quiet_since timestamptz
);

-- The day new claims are written to (one row; its partition exists, sink_ledger_days says so).
CREATE TABLE sink_ledger_today (day date NOT NULL REFERENCES sink_ledger_days (day));
CREATE UNIQUE INDEX sink_ledger_today_one ON sink_ledger_today ((true));

-- The old table moves aside with its indexes and constraints, so the new one takes their names.
CREATE SCHEMA ledger_0012;
ALTER TABLE sink_batches SET SCHEMA ledger_0012;

-- Fixed-width columns first, so the row carries no padding.
CREATE TABLE sink_batches (
  ledger_day    date NOT NULL,
  rows          integer NOT NULL CHECK (rows >= 0),
  bytes         bigint NOT NULL CHECK (bytes >= 0),
  received_at   timestamptz NOT NULL,
  rejected      integer NOT NULL CHECK (rejected >= 0),
  rejected_rows integer CHECK (rejected_rows >= 0),
  committed_at  timestamptz,
  discarded_at  timestamptz,
  sink_id       text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  batch_id      text NOT NULL CHECK (batch_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  body_sha256   bytea NOT NULL CHECK (octet_length(body_sha256) = 32),
  state         text NOT NULL CHECK (state IN ('storing', 'pending', 'committed', 'discarded')),
  snapshot_id   text,
  reasons       integer[] CHECK (cardinality(reasons) > 0),
  PRIMARY KEY (sink_id, batch_id, ledger_day),
  CONSTRAINT sink_batches_committed CHECK ((state = 'committed') = (committed_at IS NOT NULL)),
  CONSTRAINT sink_batches_discarded CHECK ((state = 'discarded') = (discarded_at IS NOT NULL))
) PARTITION BY RANGE (ledger_day);

-- The batches not yet rolled, the only ones anything reads by sink rather than by id: the
-- roller's view, lag, peek and the backlog cap, all from the index alone. Settled rows leave
-- it, so it stays as small as the backlog whatever the ledger holds.
CREATE INDEX sink_batches_open ON sink_batches (sink_id, state) INCLUDE (bytes, received_at) WHERE state IN ('storing', 'pending');

-- Creates the day's partition (a table attached to sink_batches, which locks the ledger less
-- than CREATE TABLE ... PARTITION OF) and its sink_ledger_days row; nothing when it exists.
CREATE FUNCTION sink_ledger_add_day(d date) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  part text := 'sink_batches_' || to_char(d, 'YYYYMMDD');
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('sink_ledger_add_day'));
  IF EXISTS (SELECT 1 FROM sink_ledger_days WHERE day = d) THEN
    RETURN;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE sink_batches INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
  EXECUTE format('ALTER TABLE sink_batches ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, d, d + 1);
  INSERT INTO sink_ledger_days (day) VALUES (d);
END $$;

-- Drops the day's partition and its sink_ledger_days row (the caller has checked it is quiet).
CREATE FUNCTION sink_ledger_drop_day(d date) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TABLE %I', 'sink_batches_' || to_char(d, 'YYYYMMDD'));
  DELETE FROM sink_ledger_days WHERE day = d;
END $$;

-- Today (UTC) and two days ahead, and a day for each day the existing rows were received on.
SELECT sink_ledger_add_day(d)
  FROM (SELECT (now() AT TIME ZONE 'UTC')::date + n AS d FROM generate_series(0, 2) AS n
        UNION
        SELECT DISTINCT (received_at AT TIME ZONE 'UTC')::date FROM ledger_0012.sink_batches) AS days
 ORDER BY d;
INSERT INTO sink_ledger_today (day) VALUES ((now() AT TIME ZONE 'UTC')::date);

INSERT INTO sink_batches (ledger_day, rows, bytes, received_at, rejected, rejected_rows, committed_at, discarded_at,
                          sink_id, batch_id, body_sha256, state, snapshot_id, reasons)
SELECT (received_at AT TIME ZONE 'UTC')::date, rows, bytes, received_at, rejected, rejected_rows, committed_at, discarded_at,
       sink_id, batch_id, body_sha256, state, snapshot_id,
       nullif(ARRAY(SELECT (r->>'index')::integer FROM jsonb_array_elements(response->'reasons') AS r), '{}')
  FROM ledger_0012.sink_batches;

-- The days before today holding no open batch: quiet since their last settlement, which is
-- known now and would take a scan later.
UPDATE sink_ledger_days d SET quiet_since = settled.last
  FROM (SELECT ledger_day, max(coalesce(committed_at, discarded_at)) AS last
          FROM sink_batches GROUP BY ledger_day
        HAVING bool_and(state IN ('committed', 'discarded'))) AS settled
 WHERE d.day = settled.ledger_day AND d.day < (SELECT day FROM sink_ledger_today);

DROP SCHEMA ledger_0012 CASCADE;
