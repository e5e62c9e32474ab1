import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreatedSink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import type { RestCatalog } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackCatalog } from '../../../tests/support/stack.ts';
import { otherWriter } from '../../roller/test/support/readers.ts';
import { waitFor } from '../../roller/test/support/roller.ts';
import { call, dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink } from './support/sinks.ts';

/** POST /v1/sinks with create_table, on the real catalog and database. */

let api: TestApi;
let catalog: RestCatalog;
const ns = `api_sink_table_${suffix()}`;
/** A namespace only the failing create makes, to see it dropped with its table. */
const lonelyNs = `api_sink_table_lonely_${suffix()}`;

beforeAll(async () => {
  api = await startTestApi();
  catalog = await stackCatalog(api.env);
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await dropNamespace(api.env, lonelyNs);
  await api?.close();
});

const createWithTable = (name: string, table: string, createTable: unknown) =>
  call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: { name, table, warehouse: 'garden', create_table: createTable } });

/** The audit events one request wrote, oldest first. */
async function auditOf(requestId: unknown): Promise<Array<{ event: string; subject: string; details: Record<string, unknown> }>> {
  return query(api.pool, `SELECT event, subject, details FROM audit_events WHERE details->>'request_id' = $1 ORDER BY id`, [String(requestId)]);
}

/**
 * Another create of a sink named `name`, caught between its insert and its commit: the row is
 * written in an open transaction, so a request inserting the same name waits on the unique
 * index and fails with sink_exists once `commit` runs, after its table was created.
 */
async function concurrentSinkNamed(name: string): Promise<{ commit(): Promise<void> }> {
  const client = await api.pool.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO sinks (id, project_id, warehouse_id, name, namespace, table_name, table_uuid, send_key_sha256)
     SELECT $1, project_id, id, $2, $3, $2 || '_elsewhere', 'none', $4 FROM warehouses WHERE name = 'garden'`,
    [`snk_${randomBytes(6).toString('hex')}`, name, ns, randomBytes(32)],
  );
  return {
    async commit() {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/** Sends the create, waits until its table exists in the catalog (the request then waits on the held insert), runs `meanwhile`, then lets the insert fail. */
async function createThatFailsAfterItsTable(sinkName: string, table: string, meanwhile: () => Promise<void>) {
  const held = await concurrentSinkNamed(sinkName);
  const answer = createWithTable(sinkName, `${ns}.${table}`, { columns: [{ name: 'x', type: 'long' }, { name: 'who', type: 'string' }] });
  await waitFor(`table ${table} created`, () => catalog.tableExists({ namespace: ns, name: table }), 30_000);
  await meanwhile();
  await held.commit();
  return answer;
}

describe('POST /v1/sinks with create_table', () => {
  it('creates the table with the columns given as the table route takes them, then the sink on it, audited as one request', async () => {
    const res = await createWithTable('given_in', `${ns}.given`, { columns: [{ name: 'x', type: 'long', required: true }, { name: 'price', type: 'Decimal(10, 2)' }] });
    expect(res.status, res.text).toBe(201);
    const sink = CreatedSink.parse(res.body);
    const loaded = await catalog.loadTable({ namespace: ns, name: 'given' });
    expect(sink.table_uuid).toBe(loaded.metadata['table-uuid']);
    expect(loaded.metadata['format-version']).toBe(2);
    expect(sink.created_table).toMatchObject({
      table: `${ns}.given`,
      inferred: false,
      schema: { fields: [{ name: 'x', type: 'long', required: true }, { name: 'price', type: 'decimal(10,2)', required: false }] },
    });

    const events = await auditOf(res.headers['x-request-id']);
    expect(events.map((e) => [e.event, e.subject])).toEqual([
      ['table.create', `garden/${ns}.given`],
      ['sink.create', sink.id],
    ]);
    expect(events[0]!.details).toMatchObject({ table_uuid: sink.table_uuid, inferred: false, columns: 2, for_sink: 'given_in' });
    expect(events[1]!.details).toMatchObject({ table_uuid: sink.table_uuid, table_created: true });
  });

  it('infers the columns from sample rows, nested ones too, and sends none of the rows to the table', async () => {
    const res = await createWithTable('inferred_in', `${ns}.inferred`, {
      infer_from: [
        { device: 'a1', temp_c: 21, at: '2026-12-02T11:30:00Z', tags: ['east'], pos: { lat: 52.1, lon: 4 } },
        { device: 'a2', temp_c: 21.5, at: '2026-12-02 11:31:00.25+01:00', ok: true, pos: { lat: null, lon: 4.5, alt: 3 } },
      ],
    });
    expect(res.status, res.text).toBe(201);
    const sink = CreatedSink.parse(res.body);
    const { metadata } = await catalog.loadTable({ namespace: ns, name: 'inferred' });
    const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])!;
    const shape = (type: any): unknown =>
      typeof type === 'string' ? type
      : type.type === 'struct' ? Object.fromEntries(type.fields.map((f: any) => [f.name, [shape(f.type), f.required]]))
      : [`list`, shape(type.element), type['element-required']];
    expect(Object.fromEntries(schema.fields.map((f) => [f.name, [shape(f.type), f.required]]))).toEqual({
      device: ['string', false],
      temp_c: ['double', false],
      at: ['timestamptz', false],
      tags: [['list', 'string', false], false],
      pos: [{ lat: ['double', false], lon: ['double', false], alt: ['long', false] }, false],
      ok: ['boolean', false],
    });
    expect(sink.created_table?.inferred).toBe(true);
    expect(metadata.snapshots ?? []).toEqual([]);
    expect(sink.received.batches).toBe(0);
  });

  it('takes a partition with the table it creates, checked on that table: a bad one drops the table again', async () => {
    const body = (name: string, table: string, partition: string[]) => ({
      name, table, warehouse: 'garden', partition, create_table: { infer_from: [{ device: 'a1', temp_c: 21.5 }] },
    });
    const ok = await call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: body('parted_in', `${ns}.parted`, ['day(__ingest_ts)', 'bucket[8](device)']) });
    expect(ok.status, ok.text).toBe(201);
    expect(CreatedSink.parse(ok.body).partition).toEqual(['day(__ingest_ts)', 'bucket[8](device)']);
    // The spec is the first roll's to add, with __ingest_ts: the new table is unpartitioned until then.
    expect((await catalog.loadTable({ namespace: ns, name: 'parted' })).metadata['default-spec-id']).toBe(0);

    const bad = await call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: body('unparted_in', `${ns}.unparted`, ['day(temp_c)']) });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'partition_transform_invalid', created_table: { table: `${ns}.unparted`, dropped: true } });
    expect(await catalog.tableExists({ namespace: ns, name: 'unparted' })).toBe(false);
    expect(await query(api.pool, `SELECT 1 FROM sinks WHERE name = 'unparted_in'`)).toEqual([]);
  });

  it('refuses a sample it cannot type, naming every field, and creates nothing', async () => {
    const res = await createWithTable('refused_in', `${ns}.refused`, {
      infer_from: [
        { id: 1, mixed: 1, gone: null, deep: { list: [] }, __ingest_ts: '2026-12-02T11:30:00Z' },
        { id: 2, mixed: 'one', 'bad name': true },
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('schema_not_inferred');
    expect(res.body.error.fields).toEqual([
      { path: '__ingest_ts', reason: `"__ingest_ts" is filled by the roller with each batch's received time` },
      { path: 'mixed', reason: 'holds numbers and strings; one type is needed' },
      { path: 'gone', reason: 'holds only null; give its type' },
      { path: 'deep.list', reason: 'holds only empty arrays; give its type' },
      { path: 'bad name', reason: '"bad name" cannot be a column name: use at most 255 letters, digits and underscores, starting with a letter or underscore' },
    ]);
    expect(res.body.error.message).toMatch(/^The sample rows in create_table.infer_from cannot give the table's columns: __ingest_ts \(.*\); mixed \(holds numbers and strings; one type is needed\); gone/);
    expect(await catalog.tableExists({ namespace: ns, name: 'refused' })).toBe(false);
    expect(await query(api.pool, `SELECT 1 FROM sinks WHERE name = 'refused_in'`)).toEqual([]);
  });

  it('refuses columns and infer_from together, and an existing table with the 409 of the table route', async () => {
    const both = await createWithTable('both_in', `${ns}.both`, { columns: [{ name: 'x', type: 'long' }], infer_from: [{ x: 1 }] });
    expect([both.status, both.body.error.code]).toEqual([400, 'invalid_request']);
    const exists = await createWithTable('exists_in', `${ns}.given`, { columns: [{ name: 'x', type: 'long' }] });
    expect([exists.status, exists.body.error.code, exists.body.error.table]).toEqual([409, 'table_exists', `${ns}.given`]);
    expect(await query(api.pool, `SELECT 1 FROM sinks WHERE name = 'exists_in'`)).toEqual([]);
  });

  it('drops the table and the namespace it created when the sink then fails (its name is taken), and says so', async () => {
    await createSink(api.app, api.adminKey, { name: 'taken', table: `${ns}.given_other`, create_table: { columns: [{ name: 'x', type: 'long' }] } });
    const res = await createWithTable('taken', `${lonelyNs}.orphan`, { infer_from: [{ x: 1 }] });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'sink_exists',
      conflict: 'name',
      created_table: { table: `${lonelyNs}.orphan`, dropped: true },
    });
    expect(res.body.error.message).toBe(
      `A sink named taken already exists in this project; pick another name. Table ${lonelyNs}.orphan, created by this request, was dropped again (with its namespace, also created by this request).`,
    );
    expect(await catalog.tableExists({ namespace: lonelyNs, name: 'orphan' })).toBe(false);
    expect(await catalog.namespaceExists(lonelyNs)).toBe(false);
    // The table existed: its uuid is the one the audit trail recorded for its creation and its drop.
    const events = await auditOf(res.headers['x-request-id']);
    expect(events.map((e) => e.event)).toEqual(['table.create', 'table.drop']);
    expect(events[1]!.details).toMatchObject({ table_uuid: res.body.error.created_table.table_uuid, namespace_dropped: true });
    expect(events[0]!.details.table_uuid).toBe(res.body.error.created_table.table_uuid);
  });

  it('keeps a namespace it did not create when it drops the table', async () => {
    const res = await createWithTable('taken', `${ns}.orphan`, { columns: [{ name: 'x', type: 'long' }] });
    expect(res.body.error).toMatchObject({ code: 'sink_exists', created_table: { table: `${ns}.orphan`, dropped: true } });
    expect(await catalog.tableExists({ namespace: ns, name: 'orphan' })).toBe(false);
    expect(await catalog.tableExists({ namespace: ns, name: 'given' })).toBe(true);
  });

  it('leaves the table, and says so, when someone wrote to it before the sink failed', async () => {
    const stopFile = path.join(mkdtempSync(path.join(tmpdir(), 'sink-table-')), 'stop');
    const res = await createThatFailsAfterItsTable('raced_write', 'written', async () => {
      expect(await otherWriter(ns, 'written', stopFile, 0, { most: 1 }).done).toMatchObject({ appends: 1 });
    });
    expect(res.status, res.text).toBe(409);
    const { metadata } = await catalog.loadTable({ namespace: ns, name: 'written' });
    expect(res.body.error).toMatchObject({
      code: 'sink_exists',
      conflict: 'name',
      created_table: { table: `${ns}.written`, table_uuid: metadata['table-uuid'], dropped: false, left: 'it holds snapshots now, written by someone else' },
    });
    expect(res.body.error.message).toMatch(
      new RegExp(`Table ${ns}.written \\(uuid ${metadata['table-uuid']}\\), created by this request, is left in the catalog: it holds snapshots now, written by someone else. Drop it, or create the sink on it without create_table.$`),
    );
    expect((await auditOf(res.headers['x-request-id'])).map((e) => e.event)).toEqual(['table.create']);
  });

  it('leaves a table of the same name that is not the one it created', async () => {
    let replacement = '';
    const res = await createThatFailsAfterItsTable('raced_replace', 'replaced', async () => {
      await catalog.dropTable({ namespace: ns, name: 'replaced' }, { purge: true });
      const created = await catalog.createTable(ns, 'replaced', { schema: { type: 'struct', fields: [{ id: 1, name: 'y', type: 'string', required: false }] } });
      replacement = created.metadata['table-uuid'];
    });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.created_table).toMatchObject({ dropped: false, left: `the table there now is another one (uuid ${replacement})` });
    expect(res.body.error.created_table.table_uuid).not.toBe(replacement);
    expect((await catalog.loadTable({ namespace: ns, name: 'replaced' })).metadata['table-uuid']).toBe(replacement);
  });
});
