import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  /** Shown in pg_stat_activity, so an operator can tell the services apart. */
  applicationName?: string;
  max?: number;
  /** Fail fast when Postgres is unreachable instead of waiting on the OS timeout. */
  connectionTimeoutMillis?: number;
}

/** A connection pool for `databaseUrl`. The caller owns it and must `end()` it. */
export function createPool(databaseUrl: string, options: PoolOptions = {}): Pool {
  return new pg.Pool({
    connectionString: databaseUrl,
    application_name: options.applicationName ?? 'tablemere',
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
  });
}

/**
 * Ends the pool once its connections have closed: pool.end() resolves while they are still
 * closing, and dropping the database WITH (FORCE) under one makes it emit an error nobody listens for.
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
