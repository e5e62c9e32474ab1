import { Warehouse, WarehouseList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropNamespace, startTestApi, suffix, type Answer, type TestApi } from './support/harness.ts';

let api: TestApi;
const ns = `api_wh_${suffix()}`;
/** Every answer in this file, to prove none carries a secret. */
const answers: Answer[] = [];
const secrets: string[] = [];

async function send(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown): Promise<Answer> {
  const res = await call(api.app, method, url, { key: api.adminKey, ...(body === undefined ? {} : { body }) });
  answers.push(res);
  return res;
}

/** A real token from the catalog's OAuth2 endpoint, for the bearer method. */
async function catalogToken(): Promise<string> {
  const res = await fetch(`${api.env.ICEBERG_REST_URI}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: api.env.AWS_ACCESS_KEY_ID!,
      client_secret: api.env.AWS_SECRET_ACCESS_KEY!,
      scope: 'catalog',
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function registration(name: string, auth: Record<string, unknown>, restUri = api.env.ICEBERG_REST_URI!) {
  return {
    name,
    rest_uri: restUri,
    warehouse: api.env.ICEBERG_WAREHOUSE!,
    auth,
    s3: {
      endpoint: api.env.AWS_ENDPOINT_URL!,
      region: api.env.AWS_REGION!,
      access_key_id: api.env.AWS_ACCESS_KEY_ID!,
      secret_access_key: api.env.AWS_SECRET_ACCESS_KEY!,
    },
  };
}

beforeAll(async () => {
  api = await startTestApi();
  secrets.push(api.env.AWS_SECRET_ACCESS_KEY!, api.secretKey, api.adminKey);
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

describe('warehouse registration', () => {
  it('works end to end with each catalog auth method', async () => {
    const token = await catalogToken();
    secrets.push(token);
    const methods = {
      oauth2: { type: 'oauth2', client_id: api.env.AWS_ACCESS_KEY_ID, client_secret: api.env.AWS_SECRET_ACCESS_KEY, scope: 'catalog' },
      sigv4: { type: 'sigv4', access_key_id: api.env.AWS_ACCESS_KEY_ID, secret_access_key: api.env.AWS_SECRET_ACCESS_KEY, region: api.env.AWS_REGION, service: 's3' },
      bearer: { type: 'bearer', token },
    };
    for (const [type, auth] of Object.entries(methods)) {
      const name = `wh-${type}`;
      const created = await send('POST', '/v1/warehouses', registration(name, auth));
      expect(created.status, created.text).toBe(201);
      expect(Warehouse.parse(created.body)).toMatchObject({ name, auth: { type }, s3: { endpoint: api.env.AWS_ENDPOINT_URL, region: api.env.AWS_REGION } });

      const table = await send('POST', `/v1/warehouses/${name}/tables`, { namespace: ns, name: `via_${type}`, columns: [{ name: 'x', type: 'long' }] });
      expect(table.status, table.text).toBe(201);
      expect(table.body).toMatchObject({ warehouse: name, table: `${ns}.via_${type}` });
      const listed = await send('GET', `/v1/warehouses/${name}/tables?namespace=${ns}`);
      expect(listed.body.tables.map((t: { name: string }) => t.name)).toContain(`via_${type}`);
      const connection = await send('GET', `/v1/connection?warehouse=${name}`);
      expect(connection.body.warehouse).toMatchObject({ name, prefix: 'warehouse', auth: { type } });
    }
  });

  it('lists warehouses with the auth type only', async () => {
    const res = await send('GET', '/v1/warehouses');
    const { warehouses } = WarehouseList.parse(res.body);
    expect(warehouses.map((w) => [w.name, w.auth.type])).toEqual([
      ['garden', 'oauth2'],
      ['wh-oauth2', 'oauth2'],
      ['wh-sigv4', 'sigv4'],
      ['wh-bearer', 'bearer'],
    ]);
    for (const w of res.body.warehouses) expect(Object.keys(w.auth)).toEqual(['type']);
    for (const w of res.body.warehouses) expect(Object.keys(w.s3).sort()).toEqual(['endpoint', 'region', 'sink_bucket']);
  });

  it('answers one warehouse by name with the auth type only, 404 warehouse_not_found for another', async () => {
    const res = await send('GET', '/v1/warehouses/wh-sigv4');
    expect(res.status, res.text).toBe(200);
    const listed = WarehouseList.parse((await send('GET', '/v1/warehouses')).body).warehouses.find((w) => w.name === 'wh-sigv4');
    expect(Warehouse.parse(res.body)).toEqual(listed);
    expect(Object.keys(res.body.auth)).toEqual(['type']);
    expect(Object.keys(res.body.s3).sort()).toEqual(['endpoint', 'region', 'sink_bucket']);
    const unknown = await send('GET', '/v1/warehouses/nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('warehouse_not_found');
    expect((await send('GET', '/v1/warehouses/Bad%20Name')).status).toBe(400);
  });

  it('answers 409 warehouse_exists for a taken name', async () => {
    const res = await send('POST', '/v1/warehouses', registration('garden', { type: 'none' }));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'warehouse_exists', warehouse: 'garden' });
  });

  it('answers 502 catalog_error when the catalog refuses the credentials', async () => {
    const wrong = `wrong-${suffix()}`;
    secrets.push(wrong);
    await send('POST', '/v1/warehouses', registration('bad-oauth2', { type: 'oauth2', client_id: api.env.AWS_ACCESS_KEY_ID, client_secret: wrong }));
    await send('POST', '/v1/warehouses', registration('bad-bearer', { type: 'bearer', token: wrong }));
    for (const name of ['bad-oauth2', 'bad-bearer']) {
      const res = await send('GET', `/v1/warehouses/${name}/tables`);
      expect(res.status, name).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'catalog_error', catalog_error: 'unauthorized' });
    }
  });

  it('answers 503 catalog_unavailable with Retry-After when the catalog is unreachable', async () => {
    await send('POST', '/v1/warehouses', registration('closed', { type: 'none' }, 'http://127.0.0.1:9'));
    for (const [method, url] of [
      ['GET', '/v1/warehouses/closed/tables'],
      ['POST', '/v1/warehouses/closed/tables'],
      ['GET', '/v1/connection?warehouse=closed'],
    ] as const) {
      const res = await send(method, url, method === 'POST' ? { namespace: ns, name: 'never', columns: [{ name: 'x', type: 'int' }] } : undefined);
      expect(res.status, url).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.error.code).toBe('catalog_unavailable');
    }
  });

  it('moves a registration with PATCH: endpoints and credentials change, audited without secrets', async () => {
    // 'closed' points at a port nothing listens on (the test above): move it to the real catalog.
    const good = registration('closed', { type: 'oauth2', client_id: api.env.AWS_ACCESS_KEY_ID!, client_secret: api.env.AWS_SECRET_ACCESS_KEY! });
    const moved = await send('PATCH', '/v1/warehouses/closed', { rest_uri: good.rest_uri, auth: good.auth });
    expect(moved.status, moved.text).toBe(200);
    expect(Warehouse.parse(moved.body)).toMatchObject({ name: 'closed', rest_uri: good.rest_uri, auth: { type: 'oauth2' } });
    expect((await send('GET', '/v1/warehouses/closed/tables')).status).toBe(200);
    // The catalog client this process kept for it is not used once the registration moved again.
    expect((await send('PATCH', '/v1/warehouses/closed', { rest_uri: 'http://127.0.0.1:9' })).status).toBe(200);
    expect((await send('GET', '/v1/warehouses/closed/tables')).status).toBe(503);
    expect((await send('PATCH', '/v1/warehouses/closed', { rest_uri: good.rest_uri })).status).toBe(200);
    expect((await send('GET', '/v1/warehouses/closed/tables')).status).toBe(200);
    const keys = await send('PATCH', '/v1/warehouses/closed', { s3: { access_key_id: api.env.AWS_ACCESS_KEY_ID!, secret_access_key: api.env.AWS_SECRET_ACCESS_KEY! } });
    expect(keys.status, keys.text).toBe(200);

    const audits = await api.pool.query<{ details: { changes: Record<string, unknown> } }>(
      `SELECT details FROM audit_events WHERE event = 'warehouse.update' AND subject = 'closed' ORDER BY id`,
    );
    expect(audits.rows.map((r) => r.details.changes)).toEqual([
      { rest_uri: { from: 'http://127.0.0.1:9', to: good.rest_uri }, auth_type: { from: 'none', to: 'oauth2' }, auth_credentials: 'replaced' },
      { rest_uri: { from: good.rest_uri, to: 'http://127.0.0.1:9' } },
      { rest_uri: { from: 'http://127.0.0.1:9', to: good.rest_uri } },
      { s3_credentials: 'replaced' },
    ]);
    for (const secret of secrets) expect(JSON.stringify(audits.rows)).not.toContain(secret);

    const nothing = await send('PATCH', '/v1/warehouses/closed', { s3: {} });
    expect(nothing.status).toBe(400);
    expect(nothing.body.error).toMatchObject({ code: 'nothing_to_update', settings: expect.arrayContaining(['rest_uri', 'auth']) });
    // Its error names the missing field (secret_access_key), which the file-wide check below forbids in answers.
    expect((await call(api.app, 'PATCH', '/v1/warehouses/closed', { key: api.adminKey, body: { s3: { access_key_id: 'only-one' } } })).status).toBe(400);
    expect((await send('PATCH', '/v1/warehouses/closed', { name: 'renamed' })).status).toBe(400);
    expect((await send('PATCH', '/v1/warehouses/closed', { s3: { sink_bucket: 'elsewhere' } })).status).toBe(400);
    const unknown = await send('PATCH', '/v1/warehouses/nowhere', { warehouse: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('warehouse_not_found');
    const readKey = await send('POST', '/v1/keys', { name: 'wh-writer', level: 'write' });
    const belowAdmin = await call(api.app, 'PATCH', '/v1/warehouses/closed', { key: readKey.body.key, body: { warehouse: 'x' } });
    expect(belowAdmin.status).toBe(403);
  });

  it('seals secrets at rest and never answers them', async () => {
    const rows = await api.pool.query<{ dump: string }>(`SELECT string_agg(encode(convert_to(w::text, 'UTF8'), 'escape'), ' ') AS dump FROM warehouses w`);
    const sealed = await api.pool.query<{ auth_sealed: Buffer | null; s3_sealed: Buffer | null }>('SELECT auth_sealed, s3_sealed FROM warehouses');
    for (const secret of secrets) {
      expect(rows.rows[0]!.dump).not.toContain(secret);
      for (const row of sealed.rows) {
        for (const blob of [row.auth_sealed, row.s3_sealed]) {
          if (blob) expect(blob.includes(Buffer.from(secret))).toBe(false);
        }
      }
    }
    expect(answers.length).toBeGreaterThan(15);
    for (const answer of answers) {
      for (const secret of secrets) expect(answer.text).not.toContain(secret);
      expect(answer.text).not.toMatch(/client_secret|secret_access_key|"token"/);
    }
  });
});
