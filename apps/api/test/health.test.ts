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

  it('GET /readyz is 200 when Postgres and the store answer, with each warehouse\'s catalog beside', async () => {
    const api = await open();
    const { status, body } = await readiness(api);
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    for (const check of Object.values(body.checks)) expect(check.status).toBe('ok');
    expect(body.warehouses).toEqual([{ id: expect.any(String), status: 'ok', duration_ms: expect.any(Number) }]);
  });

  it('GET /readyz stays 200 when one warehouse\'s catalog is out of reach, and reports it by id beside one that answers', async () => {
    const api = await open({ warehouse: { ...stackWarehouse(stackEnv()), restUri: 'http://127.0.0.1:9' } });
    const good = stackWarehouse(stackEnv());
    const added = await call(api.app, 'POST', '/v1/warehouses', {
      key: api.adminKey,
      body: {
        name: 'reachable',
        rest_uri: good.restUri,
        warehouse: good.warehouse,
        auth: { type: 'oauth2', client_id: api.env.AWS_ACCESS_KEY_ID, client_secret: api.env.AWS_SECRET_ACCESS_KEY },
        s3: { endpoint: api.env.AWS_ENDPOINT_URL, region: api.env.AWS_REGION, access_key_id: api.env.AWS_ACCESS_KEY_ID, secret_access_key: api.env.AWS_SECRET_ACCESS_KEY },
      },
    });
    expect(added.status, added.text).toBe(201);
    const { status, body } = await readiness(api);
    expect(status).toBe(200);
    expect(body.checks).toMatchObject({ postgres: { status: 'ok' }, store: { status: 'ok' } });
    const byId = new Map(body.warehouses.map((w) => [w.id, w]));
    expect(byId.get(added.body.id)).toMatchObject({ status: 'ok' });
    expect(body.warehouses.filter((w) => w.id !== added.body.id)).toEqual([expect.objectContaining({ status: 'failed', reason: 'unreachable' })]);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|"reachable"|garden/);
  });

  it('GET /readyz reports a catalog that never answers as timeout, within the deadline, and reuses catalog results for a while', async () => {
    const port = await silentPort();
    const api = await open({ warehouse: { ...stackWarehouse(stackEnv()), restUri: `http://127.0.0.1:${port}` }, readinessTimeoutMs: 300 });
    const started = Date.now();
    const { status, body } = await readiness(api);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(status).toBe(200);
    expect(body.warehouses).toEqual([expect.objectContaining({ status: 'failed', reason: 'timeout' })]);
    const again = await readiness(api);
    expect(again.body.warehouses).toEqual(body.warehouses);
  });

  it('GET /readyz is 503 when the intake bucket is missing', async () => {
    const api = await open({ intakeBucket: 'tablemere-no-such-bucket' });
    const { status, body } = await readiness(api);
    expect(status).toBe(503);
    expect(body.checks.store).toMatchObject({ status: 'failed', reason: 'error' });
    expect(body.warehouses).toEqual([expect.objectContaining({ status: 'ok' })]);
  });

  it('GET /readyz lists no warehouse when none is registered', async () => {
    const api = await open();
    await api.pool.query('DELETE FROM audit_events; DELETE FROM warehouses');
    const { status, body } = await readiness(api);
    expect(status).toBe(200);
    expect(body.warehouses).toEqual([]);
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
      const res = await call(app, 'GET', '/v1/warehouses', { key: `tm_key_000000000000_${'A'.repeat(43)}` });
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
