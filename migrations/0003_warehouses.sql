-- A warehouse is a catalog registration. Catalog auth settings and S3 credentials are sealed
-- with AES-256-GCM by the API (key from TABLEMERE_SECRET_KEY); the database never sees them
-- in clear. Sealed values are bound to the row id, so they cannot be moved between rows.
CREATE TABLE warehouses (
  id             uuid PRIMARY KEY,
  project_id     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name           text NOT NULL,
  rest_uri       text NOT NULL,
  warehouse      text NOT NULL,
  auth_type      text NOT NULL CHECK (auth_type IN ('oauth2', 'sigv4', 'bearer', 'none')),
  auth_sealed    bytea,
  s3_endpoint    text NOT NULL,
  s3_region      text NOT NULL,
  s3_sealed      bytea,
  created_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT warehouses_name_per_project UNIQUE (project_id, name),
  CONSTRAINT warehouses_auth_sealed_unless_none CHECK ((auth_type = 'none') = (auth_sealed IS NULL))
);
