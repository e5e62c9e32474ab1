-- Segments (issue 34): the batches a sink's sends bring together go into one intake object,
-- `_sink/<sink_id>/<segment_id>.seg`, and the ledger says where each batch is.
--   segment_id      the segment a claim is being written to ('storing'), or was written to;
--                   NULL for a batch of the one-object-per-batch layout (`<batch_id>.ndjson`)
--   segment_offset  where the batch's bytes start in the segment object, once settled (NULL
--                   when a replay found the batch in a segment a process died writing)
ALTER TABLE sink_batches ADD COLUMN segment_id text, ADD COLUMN segment_offset bigint CHECK (segment_offset >= 0);

-- How long a send may wait for others to share its segment (0: written at once, or with
-- those that arrived while the sink's previous segment was being written).
ALTER TABLE sinks ADD COLUMN linger_ms integer NOT NULL DEFAULT 0 CHECK (linger_ms BETWEEN 0 AND 1000);

-- The segments a roll takes, recorded with its batch ids before the commit.
ALTER TABLE sink_rolls ADD COLUMN segment_ids text[];
