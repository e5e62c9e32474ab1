import type { QueryResultRow } from 'pg';
import type { Pool, PoolClient } from './pool.ts';

/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<Pool | PoolClient, 'query'>;

/**
 * Postgres could not be reached or did not answer in time: no statement was judged, so the same
 * call may succeed later unchanged. Callers answer "unavailable, retry" (503) instead of a bug.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

/** SQLSTATE classes of a server that cannot serve now: connection (but a protocol violation), resources, shutdown, system. */
const UNAVAILABLE_SQLSTATE = /^(08(?!P01)|53|57|58)/;
/** Node's socket codes for a peer that is not there. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * node-postgres's own failures carry no code, only these messages (stable across its releases):
 * a connection that ended, a connect or query that timed out, a client left broken by either.
 */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/** Whether `error` says Postgres was unavailable rather than that the statement was wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return UNAVAILABLE_SQLSTATE.test(code) || NETWORK_CODES.has(code);
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message);
}

/** `error` as a DatabaseUnavailableError when it is one, else unchanged. */
function classified(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError || !isDatabaseUnavailable(error)) return error;
  return new DatabaseUnavailableError(`postgres unavailable: ${(error as Error).message}`, { cause: error });
}

/** Runs a parameterised statement and returns its rows typed as `Row`. */
export async function query<Row extends QueryResultRow>(
  db: Queryable,
  text: string,
  values: readonly unknown[] = [],
): Promise<Row[]> {
  try {
    const result = await db.query<Row>(text, values as unknown[]);
    return result.rows;
  } catch (error) {
    throw classified(error);
  }
}

/**
 * Runs a statement that runs often (every send) as a named, prepared one: parsed and
 * planned once per connection instead of on every call. `name` must be unique per text.
 */
export async function prepared<Row extends QueryResultRow>(db: Queryable, name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await db.query<Row>({ name, text, values: values as unknown[] })).rows;
  } catch (error) {
    throw classified(error);
  }
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
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw classified(error);
  }
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that failed or timed out is dropped, not rolled back and handed out again:
    // its ROLLBACK would wait behind the statement that never answered.
    if (isDatabaseUnavailable(error)) broken = error instanceof Error ? error : new Error(String(error));
    else await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError as Error));
    throw classified(error);
  } finally {
    client.release(broken);
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
