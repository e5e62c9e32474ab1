-- API keys: the 12-hex id is the public lookup part of `al_key_<id>_<secret>`; only the
-- SHA-256 of the whole key is kept, so a database dump cannot be replayed as a key.
CREATE TABLE api_keys (
  id         text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name       text NOT NULL,
  level      text NOT NULL CHECK (level IN ('read', 'write', 'admin')),
  key_sha256 bytea NOT NULL CHECK (octet_length(key_sha256) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE INDEX api_keys_active_by_project ON api_keys (project_id) WHERE revoked_at IS NULL;
