-- The partition a sink's first roll gives its table, as given at create: one text per spec
-- field, `transform(source)` (`day(__ingest_ts)`, `bucket[16](device)`, ...); empty for none.
ALTER TABLE sinks ADD COLUMN partition_fields text[] NOT NULL DEFAULT '{}';
