import { ErrorBody } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type Answer, type CallOptions, type TestApi } from './support/harness.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ bodyLimit: 64 * 1024 });
});
afterAll(async () => {
  await api?.close();
});

function expectError(res: Answer, status: number, code: string): Record<string, any> {
  expect(res.status, res.text).toBe(status);
  const { error } = ErrorBody.parse(res.body);
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(10);
  expect(error.request_id).toEqual(expect.any(String));
  return error;
}

const send = (method: 'GET' | 'POST' | 'DELETE', url: string, options: CallOptions = {}) =>
  call(api.app, method, url, { key: api.adminKey, ...options });

const validTable = { namespace: 'garden', name: 'bad_requests', columns: [{ name: 'x', type: 'long' }] };
const validWarehouse = {
  name: 'other',
  rest_uri: 'http://127.0.0.1:8181',
  warehouse: 's3://warehouse',
  auth: { type: 'bearer', token: 't0ken' },
  s3: { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1' },
};

/** The routes that take a JSON body. */
const bodyRoutes = [
  { url: '/v1/keys', valid: { name: 'k', level: 'read' } },
  { url: '/v1/warehouses', valid: validWarehouse },
  { url: '/v1/warehouses/garden/tables', valid: validTable },
] as const;

describe.each(bodyRoutes)('POST $url with a bad body', ({ url, valid }) => {
  it('answers 400 invalid_json for a body that is not JSON', async () => {
    for (const payload of ['{"name":', 'not json', '{"a":1}}', '{"__proto__":{"x":1}}']) {
      expectError(await send('POST', url, { payload, headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    }
  });

  it('answers 415 unsupported_media_type for a body that is not declared JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      expectError(await send('POST', url, { payload: JSON.stringify(valid), headers: { 'content-type': type } }), 415, 'unsupported_media_type');
    }
  });

  it('answers 400 invalid_request for a missing, empty or non-object body', async () => {
    expectError(await send('POST', url), 400, 'invalid_request');
    expectError(await send('POST', url, { payload: '', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
    for (const body of [null, [], [valid], 'text', 42, true]) {
      expectError(await send('POST', url, { body }), 400, 'invalid_request');
    }
  });

  it('answers 400 invalid_request naming each missing field', async () => {
    for (const field of Object.keys(valid)) {
      const { [field]: _, ...rest } = valid as Record<string, unknown>;
      const error = expectError(await send('POST', url, { body: rest }), 400, 'invalid_request');
      expect(error.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['body', field] })]));
    }
  });

  it('answers 400 invalid_request for wrong types and unknown fields', async () => {
    for (const field of Object.keys(valid)) {
      expectError(await send('POST', url, { body: { ...valid, [field]: 12345 } }), 400, 'invalid_request');
    }
    const error = expectError(await send('POST', url, { body: { ...valid, surprise: true } }), 400, 'invalid_request');
    expect(error.message).toMatch(/surprise/);
  });

  it('answers 413 body_too_large for a body over the limit', async () => {
    const payload = JSON.stringify({ ...valid, padding: 'x'.repeat(70 * 1024) });
    expectError(await send('POST', url, { payload, headers: { 'content-type': 'application/json' } }), 413, 'body_too_large');
  });
});

describe('field rules', () => {
  it('explains unknown and malformed column types', async () => {
    for (const [type, reason] of [
      ['integer', /unknown type "integer"; types: boolean int long/],
      ['varchar', /unknown type/],
      ['decimal(50,2)', /precision must be 1 to 38/],
      ['decimal(5,6)', /scale/],
      ['decimal', /decimal\(P,S\)/],
      ['fixed[0]', /fixed length/],
      ['list<int>', /unknown type/],
      ['', /unknown type/],
    ] as const) {
      const error = expectError(await send('POST', '/v1/warehouses/garden/tables', { body: { ...validTable, columns: [{ name: 'x', type }] } }), 400, 'invalid_request');
      expect(error.message, type).toMatch(reason);
      expect(error.issues[0].path).toEqual(['body', 'columns', 0, 'type']);
    }
  });

  it('refuses bad names, empty and duplicate columns', async () => {
    for (const body of [
      { ...validTable, namespace: 'Garden' },
      { ...validTable, namespace: '_hidden' },
      { ...validTable, name: 'has-dash' },
      { ...validTable, name: 'a.b' },
      { ...validTable, columns: [] },
      { ...validTable, columns: [{ name: 'a b', type: 'int' }] },
      { ...validTable, columns: [{ name: 'x', type: 'int', required: 'yes' }] },
      { ...validTable, columns: [{ name: 'x', type: 'int', nullable: true }] },
      { ...validTable, columns: [{ name: 'x', type: 'int' }, { name: 'X', type: 'long' }] },
    ]) {
      expectError(await send('POST', '/v1/warehouses/garden/tables', { body }), 400, 'invalid_request');
    }
  });

  it('refuses bad warehouse registrations', async () => {
    for (const body of [
      { ...validWarehouse, name: 'Has Space' },
      { ...validWarehouse, rest_uri: 'not a url' },
      { ...validWarehouse, rest_uri: 'file:///etc/passwd' },
      { ...validWarehouse, auth: { type: 'kerberos' } },
      { ...validWarehouse, auth: { type: 'oauth2', client_id: 'a' } },
      { ...validWarehouse, auth: { type: 'sigv4', access_key_id: 'a', secret_access_key: 'b' } },
      { ...validWarehouse, auth: { type: 'bearer', token: '' } },
      { ...validWarehouse, auth: { type: 'none', token: 'x' } },
      { ...validWarehouse, s3: { endpoint: 'http://x', region: 'us-east-1', access_key_id: 'only-half' } },
      { ...validWarehouse, s3: { region: 'us-east-1' } },
    ]) {
      expectError(await send('POST', '/v1/warehouses', { body }), 400, 'invalid_request');
    }
  });

  it('refuses bad key requests', async () => {
    for (const body of [{ name: 'k', level: 'owner' }, { name: '', level: 'read' }, { name: 'x'.repeat(101), level: 'read' }, { level: 'read' }]) {
      expectError(await send('POST', '/v1/keys', { body }), 400, 'invalid_request');
    }
  });
});

describe('bad paths and queries', () => {
  it('answers 400 invalid_request for malformed path parameters', async () => {
    expectError(await send('DELETE', '/v1/keys/not-an-id'), 400, 'invalid_request');
    expectError(await send('DELETE', '/v1/keys/ABCDEF012345'), 400, 'invalid_request');
    expectError(await send('GET', '/v1/warehouses/Bad%20Name/tables'), 400, 'invalid_request');
    expectError(await send('POST', '/v1/warehouses/Bad%20Name/tables', { body: validTable }), 400, 'invalid_request');
    const error = expectError(await send('GET', '/v1/warehouses/garden/tables/no_namespace'), 400, 'invalid_request');
    expect(error.message).toMatch(/<namespace>\.<name>/);
    expectError(await send('GET', '/v1/warehouses/garden/tables/a.b.c'), 400, 'invalid_request');
    expectError(await send('GET', '/v1/warehouses/garden/tables/%E0%A4%A'), 400, 'invalid_request');
  });

  it('answers 400 invalid_request for malformed or unknown query parameters', async () => {
    expectError(await send('GET', '/v1/warehouses/garden/tables?namespace=Bad'), 400, 'invalid_request');
    expectError(await send('GET', '/v1/warehouses/garden/tables?namespace=a&namespace=b'), 400, 'invalid_request');
    expectError(await send('GET', '/v1/warehouses/garden/tables?nmespace=a'), 400, 'invalid_request');
    expectError(await send('GET', '/v1/connection?warehouse=Bad!'), 400, 'invalid_request');
  });

  it('answers 404 not_found for unknown routes and methods', async () => {
    expectError(await send('GET', '/v1/nothing'), 404, 'not_found');
    expectError(await send('DELETE', '/v1/warehouses'), 404, 'not_found');
    expectError(await call(api.app, 'GET', '/'), 404, 'not_found');
  });

  it('accepts a DELETE sent with a JSON content type and no body', async () => {
    const res = await send('DELETE', '/v1/keys/000000000000', { headers: { 'content-type': 'application/json' } });
    expectError(res, 404, 'key_not_found');
  });
});
