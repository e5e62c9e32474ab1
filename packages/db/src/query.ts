import type { QueryResultRow } from 'pg';
import type { Pool, PoolClient } from './pool.ts';

/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<Pool | PoolClient, 'query'>;

/** Runs a parameterised statement and returns its rows typed as `Row`. */
export async function query<Row extends QueryResultRow>(
  db: Queryable,
  text: string,
  values: readonly unknown[] = [],
): Promise<Row[]> {
  const result = await db.query<Row>(text, values as unknown[]);
  return result.rows;
}

/**
 * Runs a statement that runs often (every send) as a named, prepared one: parsed and
 * planned once per connection instead of on every call. `name` must be unique per text.
 */
export async function prepared<Row extends QueryResultRow>(db: Queryable, name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  return (await db.query<Row>({ name, text, values: values as unknown[] })).rows;
}

/** The first row, or undefined when the statement returned none. */
export async function queryOne<Row extends QueryResultRow>(
  db: Queryable,
  text: string,
  values: readonly unknown[] = [],
): Promise<Row | undefined> {
  const rows = await query<Row>(db, text, values);
  return rows[0];
}

/** Runs `work` in one transaction on one client: committed when it resolves, rolled back when it throws. */
export async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Postgres SQLSTATE codes the code base reacts to. */
export const PgErrorCode = {
  uniqueViolation: '23505',
  duplicateDatabase: '42P04',
} as const;

/** Whether `error` is a Postgres error with SQLSTATE `code` (and, when given, on `constraint`). */
export function isPgError(error: unknown, code: string, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const fields = error as { code?: unknown; constraint?: unknown };
  return fields.code === code && (constraint === undefined || fields.constraint === constraint);
}
