import { queryOne, type Queryable } from '@tablemere/db';

/** The project called `name`, created when missing. Returns its id and whether it was created. */
export async function ensureProject(db: Queryable, name: string): Promise<{ id: string; created: boolean }> {
  const inserted = await queryOne<{ id: string }>(db, 'INSERT INTO projects (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING id', [name]);
  if (inserted) return { id: inserted.id, created: true };
  const existing = await queryOne<{ id: string }>(db, 'SELECT id FROM projects WHERE name = $1', [name]);
  return { id: existing!.id, created: false };
}
