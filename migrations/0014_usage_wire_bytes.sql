-- The bytes that came over the wire for the month's batches, beside `bytes` (the stored, decoded
-- rows): compressed bodies make the two differ. Months counted before this migration had no
-- compressed bodies, so their stored bytes stand in (an array body is those plus its brackets
-- and separators).
ALTER TABLE usage_ingest ADD COLUMN wire_bytes bigint;
UPDATE usage_ingest SET wire_bytes = bytes;
ALTER TABLE usage_ingest ALTER COLUMN wire_bytes SET NOT NULL, ALTER COLUMN wire_bytes SET DEFAULT 0;
