-- A sink is the single committer of one Iceberg table, fed over HTTP with a send key. The row
-- is the key: only the SHA-256 of `al_send_<id hex>_<secret>` is kept, and deleting the sink
-- (deleted_at) revokes it. Deleted rows stay for history; names and tables are unique only
-- among the live ones, so a table can get a new sink after the old one is deleted.
CREATE TABLE sinks (
  id                 text PRIMARY KEY CHECK (id ~ '^snk_[0-9a-f]{12}$'),
  project_id         uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  warehouse_id       uuid NOT NULL REFERENCES warehouses (id) ON DELETE CASCADE,
  name               text NOT NULL,
  namespace          text NOT NULL,
  table_name         text NOT NULL,
  -- The table's uuid at create time: a table dropped and re-created under the same name is
  -- a different table, and the roller must not append to it as if it were the same.
  table_uuid         text NOT NULL,
  roll_seconds       integer NOT NULL DEFAULT 300 CHECK (roll_seconds >= 60),
  roll_bytes         bigint NOT NULL DEFAULT 67108864 CHECK (roll_bytes BETWEEN 33554432 AND 67108864),
  inactivity_seconds integer CHECK (inactivity_seconds > 0),
  send_key_sha256    bytea NOT NULL CHECK (octet_length(send_key_sha256) = 32),
  state              text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'table_missing', 'deleted')),
  -- {at, batches, rows, rejected_rows, snapshot_id (string: 64-bit), seconds} of the newest roll.
  last_roll          jsonb,
  rejects_rows_total bigint NOT NULL DEFAULT 0,
  rejects_batches    bigint NOT NULL DEFAULT 0,
  rejects_last_at    timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  deleted_at         timestamptz,
  CONSTRAINT sinks_deleted_state CHECK ((state = 'deleted') = (deleted_at IS NOT NULL))
);

CREATE UNIQUE INDEX sinks_live_name ON sinks (project_id, name) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX sinks_live_table ON sinks (warehouse_id, namespace, table_name) WHERE deleted_at IS NULL;
CREATE INDEX sinks_by_project ON sinks (project_id, created_at);

-- The intake ledger: one row per batch id a producer sent. 'storing' is a claim taken before
-- the object is written (removed again when the write fails), 'pending' means the object is
-- durable and the producer got its 202, 'committed' and 'discarded' are the two ends. The
-- original answer is kept so a replay with the same body gets it back; body_sha256 tells a
-- replay from a different batch under the same id.
CREATE TABLE sink_batches (
  sink_id       text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  batch_id      text NOT NULL CHECK (batch_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  body_sha256   bytea NOT NULL CHECK (octet_length(body_sha256) = 32),
  bytes         bigint NOT NULL CHECK (bytes >= 0),
  rows          integer NOT NULL CHECK (rows >= 0),
  rejected      integer NOT NULL CHECK (rejected >= 0),
  received_at   timestamptz NOT NULL,
  state         text NOT NULL CHECK (state IN ('storing', 'pending', 'committed', 'discarded')),
  response      jsonb,
  snapshot_id   text,
  committed_at  timestamptz,
  discarded_at  timestamptz,
  rejected_rows integer CHECK (rejected_rows >= 0),
  PRIMARY KEY (sink_id, batch_id),
  CONSTRAINT sink_batches_answered CHECK ((state = 'storing') = (response IS NULL)),
  CONSTRAINT sink_batches_committed CHECK ((state = 'committed') = (committed_at IS NOT NULL)),
  CONSTRAINT sink_batches_discarded CHECK ((state = 'discarded') = (discarded_at IS NOT NULL))
);

-- Lag (pending rows, oldest first, with their bytes) and the roller's view are read through
-- this index, without visiting the table.
CREATE INDEX sink_batches_lag ON sink_batches (sink_id, state, received_at) INCLUDE (bytes);
-- Pruning finds settled rows by age without scanning the pending ones.
CREATE INDEX sink_batches_settled ON sink_batches (coalesce(committed_at, discarded_at))
  WHERE state IN ('committed', 'discarded');

-- Ingest usage per project, sink and calendar month (UTC): bytes and batches accepted at the
-- intake, rows accepted there, rows rejected (at the intake and, reported later, by rolls),
-- and when the newest batch of the month arrived.
CREATE TABLE usage_ingest (
  project_id       uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  sink_id          text NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
  month            date NOT NULL CHECK (extract(day FROM month) = 1),
  bytes            bigint NOT NULL DEFAULT 0,
  batches          bigint NOT NULL DEFAULT 0,
  rows_accepted    bigint NOT NULL DEFAULT 0,
  rows_rejected    bigint NOT NULL DEFAULT 0,
  last_received_at timestamptz,
  PRIMARY KEY (project_id, sink_id, month)
);
