-- What a warehouse's bucket holds, measured by listing it with the warehouse's own S3
-- credentials. Intake (`_sink/`) is transit, not storage, so it is never counted. One row per
-- measurement, kept as history; the newest per warehouse is the current figure.
CREATE TABLE storage_measurements (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  warehouse_id uuid NOT NULL REFERENCES warehouses (id) ON DELETE CASCADE,
  bucket       text NOT NULL,
  -- The key prefix measured ('' for the whole bucket).
  prefix       text NOT NULL,
  bytes        bigint NOT NULL CHECK (bytes >= 0),
  objects      bigint NOT NULL CHECK (objects >= 0),
  -- 'request' (POST /v1/warehouses/{id}/measure) or 'sweep' (the hourly maintenance).
  trigger      text NOT NULL CHECK (trigger IN ('request', 'sweep')),
  duration_ms  integer NOT NULL,
  measured_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX storage_measurements_latest ON storage_measurements (warehouse_id, measured_at DESC);
