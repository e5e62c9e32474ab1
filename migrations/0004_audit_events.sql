-- Who did what: one row per state-changing call. actor_key_id is null for the platform's own
-- actions (bootstrap).
CREATE TABLE audit_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  actor_key_id text REFERENCES api_keys (id),
  event        text NOT NULL,
  subject      text NOT NULL,
  details      jsonb NOT NULL DEFAULT '{}'::jsonb,
  at           timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX audit_events_by_project_at ON audit_events (project_id, at DESC);
