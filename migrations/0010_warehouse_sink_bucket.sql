-- Where a warehouse's sinks keep `_sink/` (pending batches and rejects). NULL: the platform's
-- own intake bucket, written with the platform's credentials (a table bucket takes Iceberg's
-- keys only). Set: that ordinary bucket, written with the warehouse's own S3 credentials, so
-- the bucket's quota and permissions stop the intake as the description says.
ALTER TABLE warehouses ADD COLUMN sink_bucket text;
ALTER TABLE warehouses ADD CONSTRAINT warehouses_sink_bucket_needs_credentials CHECK (sink_bucket IS NULL OR s3_sealed IS NOT NULL);
