import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { CreatedTable, ErrorBody, TableList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../tests/support/stack.ts';
import { call, dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';

let api: TestApi;
const ns = `api_tables_${suffix()}`;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

const columns = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
  { name: 'ok', type: 'boolean' },
  { name: 'n', type: 'int', required: true },
  { name: 'f', type: 'float' },
  { name: 'd', type: 'double' },
  { name: 'amount', type: 'Decimal(10, 2)' },
  { name: 'day', type: 'date' },
  { name: 't', type: 'time' },
  { name: 'ts', type: 'timestamp' },
  { name: 'at', type: 'timestamptz', required: true },
  { name: 'id', type: 'uuid' },
  { name: 'hash', type: 'fixed[16]' },
  { name: 'raw', type: 'binary' },
];

/** What PyIceberg, an independent reader, sees of the table. */
function pyicebergSchema(env: Record<string, string>, namespace: string, name: string): Array<{ id: number; name: string; type: string; required: boolean; format: number }> {
  const script = `
import json, sys
from pyiceberg.catalog import load_catalog
uri, warehouse, endpoint, key, secret, region, ident = sys.argv[1:]
catalog = load_catalog("c", type="rest", uri=uri, warehouse=warehouse, credential=f"{key}:{secret}",
    **{"s3.endpoint": endpoint, "s3.access-key-id": key, "s3.secret-access-key": secret, "s3.region": region})
table = catalog.load_table(ident)
print(json.dumps([{"id": f.field_id, "name": f.name, "type": str(f.field_type), "required": f.required,
    "format": table.metadata.format_version} for f in table.schema().fields]))
`;
  const result = spawnSync(
    path.join(repoRoot, '.venv/bin/python'),
    ['-c', script, env.ICEBERG_REST_URI!, env.ICEBERG_WAREHOUSE!, env.AWS_ENDPOINT_URL!, env.AWS_ACCESS_KEY_ID!, env.AWS_SECRET_ACCESS_KEY!, env.AWS_REGION!, `${namespace}.${name}`],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (result.status !== 0) throw new Error(`pyiceberg failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

describe('tables through the real catalog', () => {
  it('creates a table in a new namespace, answering the schema the catalog kept', async () => {
    const res = await call(api.app, 'POST', '/v1/warehouses/garden/tables', {
      key: api.adminKey,
      body: { namespace: ns, name: 'events', columns },
    });
    expect(res.status).toBe(201);
    const table = CreatedTable.parse(res.body);
    expect(table).toMatchObject({ warehouse: 'garden', namespace: ns, name: 'events', table: `${ns}.events`, format_version: 2 });
    expect(table.location).toMatch(new RegExp(`^s3://warehouse/.*${ns}.*events`));
    expect(table.schema.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['x', 'long', true],
      ['who', 'string', false],
      ['ok', 'boolean', false],
      ['n', 'int', true],
      ['f', 'float', false],
      ['d', 'double', false],
      ['amount', 'decimal(10,2)', false],
      ['day', 'date', false],
      ['t', 'time', false],
      ['ts', 'timestamp', false],
      ['at', 'timestamptz', true],
      ['id', 'uuid', false],
      ['hash', 'fixed[16]', false],
      ['raw', 'binary', false],
    ]);
    expect(new Set(table.schema.fields.map((f) => f.id)).size).toBe(columns.length);
  });

  it('is loadable by PyIceberg with the same ids, types and required flags', async () => {
    const created = CreatedTable.parse((await call(api.app, 'GET', `/v1/warehouses/garden/tables/${ns}.events`, { key: api.adminKey })).body);
    const seen = pyicebergSchema(api.env, ns, 'events');
    expect(seen.every((f) => f.format === 2)).toBe(true);
    // PyIceberg writes decimal(P, S) with a space; everything else matches the spec strings.
    expect(seen.map((f) => ({ id: f.id, name: f.name, type: f.type.replace(', ', ','), required: f.required }))).toEqual(
      created.schema.fields,
    );
  });

  it('answers 409 table_exists for a second create', async () => {
    const res = await call(api.app, 'POST', '/v1/warehouses/garden/tables', {
      key: api.adminKey,
      body: { namespace: ns, name: 'events', columns: [{ name: 'y', type: 'int' }] },
    });
    expect(res.status).toBe(409);
    expect(ErrorBody.parse(res.body).error).toMatchObject({ code: 'table_exists', table: `${ns}.events` });
  });

  it('lists tables, of one namespace or of all', async () => {
    await call(api.app, 'POST', '/v1/warehouses/garden/tables', {
      key: api.adminKey,
      body: { namespace: ns, name: 'clicks', columns: [{ name: 'id', type: 'long' }] },
    });
    const one = TableList.parse((await call(api.app, 'GET', `/v1/warehouses/garden/tables?namespace=${ns}`, { key: api.adminKey })).body);
    expect(one.tables).toEqual([
      { namespace: ns, name: 'clicks', table: `${ns}.clicks` },
      { namespace: ns, name: 'events', table: `${ns}.events` },
    ]);
    const all = TableList.parse((await call(api.app, 'GET', '/v1/warehouses/garden/tables', { key: api.adminKey })).body);
    expect(all.tables).toEqual(expect.arrayContaining(one.tables));
    const none = await call(api.app, 'GET', `/v1/warehouses/garden/tables?namespace=missing_${suffix()}`, { key: api.adminKey });
    expect(none.body).toEqual({ tables: [] });
  });

  it('answers 404 table_not_found with the namespace tables listed', async () => {
    const res = await call(api.app, 'GET', `/v1/warehouses/garden/tables/${ns}.nope`, { key: api.adminKey });
    expect(res.status).toBe(404);
    expect(ErrorBody.parse(res.body).error).toMatchObject({
      code: 'table_not_found',
      table: `${ns}.nope`,
      tables: [`${ns}.clicks`, `${ns}.events`],
    });
    const missingNs = await call(api.app, 'GET', `/v1/warehouses/garden/tables/missing_${suffix()}.nope`, { key: api.adminKey });
    expect(missingNs.status).toBe(404);
    expect(missingNs.body.error).toMatchObject({ code: 'table_not_found', tables: [] });
  });

  it('answers 404 warehouse_not_found for an unknown warehouse', async () => {
    for (const [method, url] of [
      ['GET', '/v1/warehouses/nowhere/tables'],
      ['GET', `/v1/warehouses/nowhere/tables/${ns}.events`],
      ['POST', '/v1/warehouses/nowhere/tables'],
    ] as const) {
      const res = await call(api.app, method, url, {
        key: api.adminKey,
        ...(method === 'POST' ? { body: { namespace: ns, name: 'x', columns: [{ name: 'a', type: 'int' }] } } : {}),
      });
      expect(res.status, url).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'warehouse_not_found', warehouse: 'nowhere' });
    }
  });

  it('tells an engine how to connect, without secrets', async () => {
    const res = await call(api.app, 'GET', '/v1/connection', { key: api.adminKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api_url: 'http://api.test:8787',
      warehouse: {
        name: 'garden',
        rest_uri: api.env.ICEBERG_REST_URI,
        warehouse: api.env.ICEBERG_WAREHOUSE,
        prefix: 'warehouse',
        auth: { type: 'oauth2' },
        s3: { endpoint: api.env.AWS_ENDPOINT_URL, region: api.env.AWS_REGION, path_style: true },
      },
      // Sinks are on by default.
      sinks_note: expect.any(String),
      ingest_url: 'http://api.test:8787/v1/sinks/{sink_id}',
      // The rejects files' read recipe; its engines run it in apps/roller/test (roll, sink-bucket).
      sink_rejects: {
        location: `s3://${api.env.TABLEMERE_INTAKE_BUCKET}/_sink/{sink_id}/rejects/*.ndjson`,
        credentials: 'platform',
        duckdb: expect.stringContaining(`read_json('s3://${api.env.TABLEMERE_INTAKE_BUCKET}/_sink/{sink_id}/rejects/*.ndjson'`),
        python: expect.stringContaining('fs.S3FileSystem('),
      },
    });
    expect((await call(api.app, 'GET', '/v1/connection?warehouse=garden', { key: api.adminKey })).body).toEqual(res.body);
    const missing = await call(api.app, 'GET', '/v1/connection?warehouse=nowhere', { key: api.adminKey });
    expect(missing.body.error.code).toBe('warehouse_not_found');
  });
});
