import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  /** Shown in pg_stat_activity, so an operator can tell the services apart. */
  applicationName?: string;
  max?: number;
  /** Fail fast when Postgres is unreachable instead of waiting on the OS timeout. */
  connectionTimeoutMillis?: number;
  /**
   * A statement without an answer after this long fails (pg's client-side `query_timeout`), and
   * its connection is dropped: a frozen or partitioned Postgres holds no caller longer. Unset:
   * no bound, for work that is not a request (migrations, the hourly maintenance, benches).
   */
  queryTimeoutMillis?: number;
  /**
   * Told when an idle connection fails (Postgres restarted, a failover, the backend terminated).
   * The pool has already dropped that connection and opens a new one when next asked.
   */
  onIdleError?: (error: Error) => void;
}

/**
 * The default for `onIdleError`: one line on stderr. Without any listener, Node turns the pool's
 * 'error' event into an uncaught exception and the process exits.
 */
function reportIdleError(error: Error): void {
  process.stderr.write(`postgres: an idle connection failed and was dropped: ${error.message}\n`);
}

/** A connection pool for `databaseUrl`. The caller owns it and must `end()` it. */
export function createPool(databaseUrl: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    application_name: options.applicationName ?? 'tablemere',
    max: options.max ?? 10,
    // A connection is bounded like a statement (a frozen server accepts TCP and never answers).
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? Math.min(5_000, options.queryTimeoutMillis ?? 5_000),
    ...(options.queryTimeoutMillis ? { query_timeout: options.queryTimeoutMillis } : {}),
  });
  pool.on('error', options.onIdleError ?? reportIdleError);
  return pool;
}

/**
 * Ends the pool once its connections have closed: pool.end() resolves while they are still
 * closing, and dropping the database WITH (FORCE) under one would report a failed connection.
 */
export async function endPool(pool: Pool): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on('remove', () => {
      if (--open === 0) resolve();
    });
  });
  await pool.end();
  await closed;
}

/** The host (and port) of a Postgres URL, for start-up lines: never the password. */
export function databaseHost(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}
