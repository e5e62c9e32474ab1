/**
 * A restarted or failed-over Postgres ends every connection the API holds (issue 35). The pool's
 * idle connections then fail outside any request: with no listener, Node would turn that 'error'
 * event into an uncaught exception and the process would exit. Here every idle backend of the
 * test API's database is terminated, as a restart does: the process lives on (an uncaught error
 * would fail this run), the failure is reported once per connection, and the next send is a 202.
 */
import pg from 'pg';
import { createPool, endPool } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, dropNamespace, startTestApi, type Answer, type TestApi } from './support/harness.ts';
import { createSink, createTable, send } from './support/sinks.ts';

/** Ends every idle backend of `database` from a connection of its own; answers how many. */
async function terminateIdle(databaseUrl: string, database: string, applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: string }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity
        WHERE datname = $1 AND application_name = $2 AND state = 'idle' AND pid <> pg_backend_pid()`,
      [database, applicationName],
    );
    return Number(rows[0]!.n);
  } finally {
    await admin.end();
  }
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a pool whose idle connections are terminated', () => {
  it("reports each one to onIdleError, drops it and connects again on the next query", async () => {
    const api = await startTestApi();
    const applicationName = `pool-test-${process.pid}`;
    const failures: Error[] = [];
    const pool = createPool(api.databaseUrl, { applicationName, onIdleError: (error) => failures.push(error) });
    try {
      // Three connections at once, so three sit idle afterwards.
      await Promise.all([1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.05)')));
      expect(pool.idleCount).toBe(3);
      const database = new URL(api.databaseUrl).pathname.slice(1);
      expect(await terminateIdle(api.databaseUrl, database, applicationName)).toBe(3);
      await until(() => failures.length === 3, 5_000, 'three idle errors');
      expect(failures.every((error) => /terminat/i.test(error.message))).toBe(true);
      expect(pool.totalCount).toBe(0);
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      await endPool(pool);
      await api.close();
    }
  });

  it('without onIdleError writes one line to stderr per connection, and the process lives on', async () => {
    const api = await startTestApi();
    const applicationName = `pool-default-${process.pid}`;
    const pool = createPool(api.databaseUrl, { applicationName });
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await pool.query('SELECT 1');
      const database = new URL(api.databaseUrl).pathname.slice(1);
      expect(await terminateIdle(api.databaseUrl, database, applicationName)).toBe(1);
      await until(() => lines.some((line) => line.startsWith('postgres: an idle connection failed')), 5_000, 'the stderr line');
      write.mockRestore();
      expect(lines.filter((line) => line.startsWith('postgres:'))).toHaveLength(1);
      expect((await pool.query('SELECT 1')).rowCount).toBe(1);
    } finally {
      write.mockRestore();
      await endPool(pool);
      await api.close();
    }
  });
});

describe('the API when Postgres ends its idle connections', () => {
  let api: TestApi;
  const namespace = `pgconn_${process.pid}_${Date.now()}`;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    if (!api) return;
    await dropNamespace(api.env, namespace);
    await api.close();
  });

  it('answers the next send 202', async () => {
    await createTable(api, namespace, 'events');
    const sink = await createSink(api.app, api.adminKey, { name: `${namespace}_in`, table: `${namespace}.events` });
    expect((await send(api.app, sink, '[{"x": 1}]')).status).toBe(202);
    const database = new URL(api.databaseUrl).pathname.slice(1);
    // The harness's pool is `api-test`; every idle connection of it goes, as in a restart.
    expect(await terminateIdle(api.databaseUrl, database, 'api-test')).toBeGreaterThan(0);
    await until(() => api.pool.idleCount === 0, 5_000, 'the pool to drop its dead connections');
    const answer = await send(api.app, sink, '[{"x": 2}]');
    expect(answer.status, answer.text).toBe(202);
  });
});

describe('a request whose statement Postgres does not answer in time', () => {
  let api: TestApi;
  const namespace = `pgwait_${process.pid}_${Date.now()}`;
  beforeAll(async () => {
    api = await startTestApi({ dbTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    if (!api) return;
    await dropNamespace(api.env, namespace);
    await api.close();
  });

  /** Holds `table` locked from another session while `during` runs, as a Postgres that stopped answering would. */
  async function whileLocked(table: string, during: () => Promise<Answer>): Promise<Answer> {
    const holder = new pg.Client({ connectionString: api.databaseUrl });
    await holder.connect();
    try {
      await holder.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await during();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }

  it('answers 503 database_unavailable with Retry-After within the bound, and serves again once it answers', async () => {
    const started = Date.now();
    const refused = await whileLocked('api_keys', () => call(api.app, 'GET', '/v1/sinks', { key: api.adminKey }));
    const took = Date.now() - started;
    expect(refused.status, refused.text).toBe(503);
    expect(refused.body.error.code).toBe('database_unavailable');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(took).toBeGreaterThanOrEqual(1_000);
    expect(took).toBeLessThan(5_000);
    expect((await call(api.app, 'GET', '/v1/sinks', { key: api.adminKey })).status).toBe(200);
  });

  it('answers a send 503 intake_unavailable within the bound, stores nothing, and takes the same batch afterwards', async () => {
    await createTable(api, namespace, 'events');
    const sink = await createSink(api.app, api.adminKey, { name: `${namespace}_in`, table: `${namespace}.events` });
    // The send key is now in this process's cache; the ledger is what the send waits on.
    const started = Date.now();
    const refused = await whileLocked('sink_batches', () => send(api.app, sink, '[{"x": 1}]', { batchId: 'held-1' }));
    expect(refused.status, refused.text).toBe(503);
    expect(refused.body.error.code).toBe('intake_unavailable');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(Date.now() - started).toBeLessThan(5_000);
    const accepted = await send(api.app, sink, '[{"x": 1}]', { batchId: 'held-1' });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toMatchObject({ batch_id: 'held-1', accepted: 1 });
  });
});
