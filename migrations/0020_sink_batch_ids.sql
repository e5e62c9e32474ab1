-- How a send without an Idempotency-Key is named (issue 39): 'key' refuses it
-- (idempotency_key_missing, as every sink did before); 'content' names it by its body's
-- digest, so a shipper that resends a whole batch with static headers gets a replay.
ALTER TABLE sinks
  ADD COLUMN batch_ids text NOT NULL DEFAULT 'key' CHECK (batch_ids IN ('key', 'content'));
