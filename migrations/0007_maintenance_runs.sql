-- Periodic tasks shared by every API process: a task runs when its row is claimed, and a
-- claim succeeds only once per interval, so several processes never run a task twice over.
CREATE TABLE maintenance_runs (
  task        text PRIMARY KEY,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz,
  ok          boolean,
  details     jsonb NOT NULL DEFAULT '{}'::jsonb
);
