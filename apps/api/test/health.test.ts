import { createServer, type Server } from 'node:net';
import { Readiness } from '@tablemere/contracts';
import { createPool } from '@tablemere/db';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { createLogger } from '../src/logger.ts';
import { call, stackS3, startTestApi, type TestApi } from './support/harness.ts';
import { stackEnv, stackWarehouse } from '../../../tests/support/stack.ts';

const opened: TestApi[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const api of opened) await api.close();
  for (const server of servers) server.close();
});

async function open(options: Parameters<typeof startTestApi>[0] = {}): Promise<TestApi> {
  const api = await startTestApi(options);
  opened.push(api);
  return api;
}

async function readiness(api: { app: TestApi['app'] }): Promise<{ status: number; body: Readiness }> {
  const res = await call(api.app, 'GET', '/readyz');
  return { status: res.status, body: Readiness.parse(res.body) };
}

/** A TCP port that accepts connections and never answers. */
async function silentPort(): Promise<number> {
  const server = createServer(() => {});
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('probes', () => {
  it('GET /healthz answers ok without a key', async () => {
    const api = await open();
    const res = await call(api.app, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('GET /readyz is 200 when Postgres, the store and the catalog answer', async () => {
    const api = await open();
    const { status, body } = await readiness(api);
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    for (const check of Object.values(body.checks)) expect(check.status).toBe('ok');
  });

  it('GET /readyz is 503 when the first warehouse points at a closed port', async () => {
    const api = await open({ warehouse: { ...stackWarehouse(stackEnv()), restUri: 'http://127.0.0.1:9' } });
    const { status, body } = await readiness(api);
    expect(status).toBe(503);
    expect(body).toMatchObject({
      status: 'unavailable',
      checks: { postgres: { status: 'ok' }, store: { status: 'ok' }, catalog: { status: 'failed', reason: 'unreachable' } },
    });
  });

  it('GET /readyz is 503 with reason timeout when the catalog never answers', async () => {
    const port = await silentPort();
    const api = await open({ warehouse: { ...stackWarehouse(stackEnv()), restUri: `http://127.0.0.1:${port}` }, readinessTimeoutMs: 300 });
    const started = Date.now();
    const { status, body } = await readiness(api);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(status).toBe(503);
    expect(body.checks.catalog).toMatchObject({ status: 'failed', reason: 'timeout' });
  });

  it('GET /readyz is 503 when the intake bucket is missing', async () => {
    const api = await open({ intakeBucket: 'tablemere-no-such-bucket' });
    const { status, body } = await readiness(api);
    expect(status).toBe(503);
    expect(body.checks.store).toMatchObject({ status: 'failed', reason: 'error' });
    expect(body.checks.catalog.status).toBe('ok');
  });

  it('GET /readyz skips the catalog when no warehouse is registered', async () => {
    const api = await open();
    await api.pool.query('DELETE FROM audit_events; DELETE FROM warehouses');
    const { status, body } = await readiness(api);
    expect(status).toBe(200);
    expect(body.checks.catalog).toMatchObject({ status: 'skipped', reason: 'no_warehouse' });
  });

  it('GET /readyz is 503 when Postgres is unreachable, and /healthz still 200', async () => {
    const env = stackEnv();
    const pool = createPool('postgres://postgres:postgres@127.0.0.1:9/none', { connectionTimeoutMillis: 500 });
    const s3 = stackS3(env);
    const app = buildApp({
      logger: createLogger({ level: 'silent' }),
      pool,
      s3,
      secrets: SecretBox.fromBase64(Buffer.alloc(32, 1).toString('base64')),
      intakeBucket: env.TABLEMERE_INTAKE_BUCKET!,
      publicUrl: 'http://api.test',
    });
    try {
      const { status, body } = await readiness({ app });
      expect(status).toBe(503);
      expect(body.checks.postgres).toMatchObject({ status: 'failed', reason: 'unreachable' });
      expect((await call(app, 'GET', '/healthz')).status).toBe(200);
      // A route that needs the database says it is unavailable (retry), without detail.
      const res = await call(app, 'GET', '/v1/warehouses', { key: `al_key_000000000000_${'A'.repeat(43)}` });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'database_unavailable', retry_after: 5, request_id: expect.any(String) });
      expect(res.headers['retry-after']).toBe('5');
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/);
    } finally {
      await app.close();
      await pool.end();
      s3.destroy();
    }
  });
});
