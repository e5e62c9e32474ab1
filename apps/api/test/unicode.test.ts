import { ErrorBody, STORABLE_TEXT_MESSAGE } from '@tablemere/contracts';
import { query, queryOne, transaction } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/domain/api-keys.ts';
import { call, startTestApi, suffix, type Answer, type TestApi } from './support/harness.ts';

/**
 * Invalid Unicode (a lone surrogate, NUL) in a text field is a 400 naming the field, and
 * nothing is stored; a create and its audit event commit together or not at all.
 */

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const admin = (method: 'GET' | 'POST', url: string, body?: unknown) => call(api.app, method, url, { key: api.adminKey, ...(body === undefined ? {} : { body }) });
const count = async (sql: string, values: unknown[] = []) => Number((await queryOne<{ n: string }>(api.pool, sql, values))!.n);

function expectInvalidText(res: Answer, field: string): void {
  expect(res.status, res.text).toBe(400);
  const { error } = ErrorBody.parse(res.body);
  expect(error.code).toBe('invalid_request');
  expect(error.message).toContain(field);
  expect(error.message).toContain(STORABLE_TEXT_MESSAGE);
}

const warehouse = (overrides: Record<string, unknown>) => ({
  name: `wh-${suffix()}`,
  rest_uri: api.env.ICEBERG_REST_URI,
  warehouse: api.env.ICEBERG_WAREHOUSE,
  auth: { type: 'bearer', token: 't0ken' },
  s3: { endpoint: api.env.AWS_ENDPOINT_URL, region: api.env.AWS_REGION },
  ...overrides,
});

describe('invalid Unicode in a text field', () => {
  it('refuses a key name with a lone surrogate or NUL, and creates no key and no audit event', async () => {
    const keys = await count('SELECT count(*) AS n FROM api_keys');
    const events = await count('SELECT count(*) AS n FROM audit_events');
    for (const name of ['\ud800', 'a\udfffb', 'nul\u0000']) {
      for (let i = 0; i < 3; i++) expectInvalidText(await admin('POST', '/v1/keys', { name, level: 'read' }), 'body.name');
    }
    expect(await count('SELECT count(*) AS n FROM api_keys')).toBe(keys);
    expect(await count('SELECT count(*) AS n FROM audit_events')).toBe(events);
    // A paired surrogate (an emoji) is valid text.
    expect((await admin('POST', '/v1/keys', { name: 'rocket 🚀', level: 'read' })).status).toBe(201);
    expect((await admin('GET', '/v1/keys')).body.keys.map((k: { name: string }) => k.name)).toContain('rocket 🚀');
  });

  it('refuses a warehouse with invalid text in any field, creates nothing, and the same name is then free', async () => {
    const name = `wh-${suffix()}`;
    const before = await count('SELECT count(*) AS n FROM warehouses');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ rest_uri: 'http://127.0.0.1:9/\ud800' }, 'body.rest_uri'],
      [{ rest_uri: 'http://127.0.0.1:9/a\u0000' }, 'body.rest_uri'],
      [{ warehouse: 's3://warehouse/\udc00' }, 'body.warehouse'],
      [{ auth: { type: 'bearer', token: 'to\ud800ken' } }, 'body.auth.token'],
      [{ auth: { type: 'oauth2', client_id: 'id', client_secret: 's', scope: 'x\u0000' } }, 'body.auth.scope'],
      [{ s3: { endpoint: 'http://127.0.0.1:8333/\ud800', region: 'us-east-1' } }, 'body.s3.endpoint'],
      [{ s3: { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1', access_key_id: '\ud800', secret_access_key: 'x' } }, 'body.s3.access_key_id'],
    ];
    for (const [overrides, field] of cases) expectInvalidText(await admin('POST', '/v1/warehouses', warehouse({ name, ...overrides })), field);
    expect(await count('SELECT count(*) AS n FROM warehouses')).toBe(before);
    expect((await admin('POST', '/v1/warehouses', warehouse({ name }))).status).toBe(201);
  });

  it('refuses invalid text in paths, queries and the names of tables, namespaces and sinks', async () => {
    expectInvalidText(await admin('GET', '/v1/sinks/a%00b'), 'params.sink');
    expectInvalidText(await admin('GET', '/v1/warehouses/garden/tables?namespace=a%00'), 'query.namespace');
    expectInvalidText(await admin('POST', '/v1/warehouses/x%00/measure'), 'params.warehouse');
    const table = await admin('POST', '/v1/warehouses/garden/tables', { namespace: 'ok', name: 't\ud800', columns: [{ name: 'x', type: 'long' }] });
    expectInvalidText(table, 'body.name');
    const sink = await admin('POST', '/v1/sinks', { name: 's\u0000', table: 'ok.t', warehouse: 'garden' });
    expectInvalidText(sink, 'body.name');
    // A key of a JSON object is text too.
    expectInvalidText(await admin('POST', '/v1/keys', { name: 'k', level: 'read', ['\ud800']: 1 }), 'body.\ud800');
  });
});

describe('a create and its audit event', () => {
  it('commit together or not at all', async () => {
    const keys = await count('SELECT count(*) AS n FROM api_keys');
    // Past the schema (called directly), the audit event's JSON refuses the lone surrogate (22P02).
    const project = (await queryOne<{ id: string }>(api.pool, 'SELECT id FROM projects LIMIT 1'))!.id;
    await expect(transaction(api.pool, (client) => createApiKey(client, project, { name: '\ud800', level: 'read' }, null))).rejects.toMatchObject({ code: '22P02' });
    expect(await count('SELECT count(*) AS n FROM api_keys')).toBe(keys);
    const created = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'audited', level: 'read' } });
    const events = await query<{ event: string }>(api.pool, 'SELECT event FROM audit_events WHERE subject = $1', [created.body.id]);
    expect(events).toEqual([{ event: 'key.create' }]);
  });
});
