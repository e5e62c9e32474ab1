import { randomBytes } from 'node:crypto';
import { CreatedKey } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { createLogger } from '../src/logger.ts';
import { call, stackS3, startTestApi, type TestApi } from './support/harness.ts';

let api: TestApi;
const secrets: string[] = [];

beforeAll(async () => {
  api = await startTestApi();
  secrets.push(api.adminKey, api.env.AWS_SECRET_ACCESS_KEY!, api.secretKey);
});
afterAll(async () => {
  await api?.close();
});

describe('logs', () => {
  it('carry a request id on every line and no key, secret or Authorization header', async () => {
    const created = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'logged', level: 'write' } });
    const newKey = CreatedKey.parse(created.body).key;
    secrets.push(newKey);
    const clientSecret = `client-secret-${randomBytes(8).toString('hex')}`;
    const s3Secret = `s3-secret-${randomBytes(8).toString('hex')}`;
    const token = `token-${randomBytes(8).toString('hex')}`;
    secrets.push(clientSecret, s3Secret, token);
    const register = (name: string, auth: Record<string, unknown>) =>
      call(api.app, 'POST', '/v1/warehouses', {
        key: api.adminKey,
        body: {
          name,
          rest_uri: api.env.ICEBERG_REST_URI,
          warehouse: api.env.ICEBERG_WAREHOUSE,
          auth,
          s3: { endpoint: api.env.AWS_ENDPOINT_URL, region: api.env.AWS_REGION, access_key_id: 'logged-id', secret_access_key: s3Secret },
        },
      });
    expect((await register('logged-oauth2', { type: 'oauth2', client_id: 'someone', client_secret: clientSecret })).status).toBe(201);
    expect((await register('logged-bearer', { type: 'bearer', token })).status).toBe(201);
    // Refused by the catalog (bad credentials), refused by us (bad key, bad body), and fine.
    expect((await call(api.app, 'GET', '/v1/warehouses/logged-oauth2/tables', { key: newKey })).status).toBe(502);
    expect((await call(api.app, 'GET', '/v1/warehouses/logged-bearer/tables', { key: newKey })).status).toBe(502);
    const wrongKey = `${newKey.slice(0, -4)}AAAA`;
    secrets.push(wrongKey);
    expect((await call(api.app, 'GET', '/v1/warehouses', { key: wrongKey })).status).toBe(401);
    expect((await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, payload: `{"name":"${newKey}"`, headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await call(api.app, 'GET', '/v1/connection', { key: newKey })).status).toBe(200);
    expect((await call(api.app, 'GET', '/readyz')).status).toBe(200);

    expect(api.logs.length).toBeGreaterThan(20);
    const text = api.rawLogs.join('');
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/bearer\s+[A-Za-z0-9._~+/-]{16,}/i);
    expect(text.toLowerCase()).not.toContain('"authorization"');
    for (const line of api.logs) expect(line.request_id, JSON.stringify(line)).toEqual(expect.any(String));
    // The catalog refusal is logged with its code, so an operator can see why.
    expect(api.logs.some((line) => line.code === 'catalog_error')).toBe(true);
  });

  it('hide an unexpected failure behind internal_error with a request id, and log it', async () => {
    // The same database opened with another secret key: warehouse secrets no longer open.
    const lines: Array<Record<string, unknown>> = [];
    const s3 = stackS3(api.env);
    const app = buildApp({
      logger: createLogger({ destination: { write: (line: string) => void lines.push(JSON.parse(line)) } }),
      pool: api.pool,
      s3,
      secrets: SecretBox.fromBase64(randomBytes(32).toString('base64')),
      intakeBucket: api.env.TABLEMERE_INTAKE_BUCKET!,
      publicUrl: 'http://api.test',
    });
    try {
      const res = await call(app, 'GET', '/v1/warehouses/garden/tables', { key: api.adminKey, headers: { 'x-request-id': 'trace-123' } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal_error', message: expect.stringMatching(/request_id/), request_id: 'trace-123' } });
      expect(res.headers['x-request-id']).toBe('trace-123');
      const failure = lines.find((line) => line.msg === 'request failed');
      expect(failure).toMatchObject({ request_id: 'trace-123', code: 'internal_error', err: { type: 'SecretBoxError' } });
    } finally {
      await app.close();
      s3.destroy();
    }
  });
});
