import { query, type Queryable } from '@tablemere/db';

export interface AuditEvent {
  projectId: string;
  /** The API key that acted; null for the platform itself (bootstrap). */
  actorKeyId: string | null;
  /** Dotted verb, e.g. `key.create`, `warehouse.create`, `table.create`. */
  event: string;
  /** What it acted on: a key id, a warehouse name, `<warehouse>/<ns>.<table>`. */
  subject: string;
  /** Never a secret. */
  details?: Record<string, unknown>;
}

export async function recordAudit(db: Queryable, event: AuditEvent): Promise<void> {
  await query(db, 'INSERT INTO audit_events (project_id, actor_key_id, event, subject, details) VALUES ($1, $2, $3, $4, $5)', [
    event.projectId,
    event.actorKeyId,
    event.event,
    event.subject,
    JSON.stringify(event.details ?? {}),
  ]);
}
