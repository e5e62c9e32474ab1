import { CreatedSink, Sink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import type { RestCatalog } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackCatalog } from '../../../tests/support/stack.ts';
import { call, dropNamespace, suffix } from './support/harness.ts';
import { type InternalTestApi, startInternalTestApi } from './support/internal-harness.ts';

/**
 * A sink's `partition` at create: checked on the table's columns (nested too) and on
 * `__ingest_ts`, stored, answered by GET and handed to the roller; a table its owner
 * partitioned takes a sink (v2: the 409 partitioned_table_unsupported is gone), and a partition
 * beside the owner's spec must be the same one. Nothing is committed to the table at create.
 */
let api: InternalTestApi;
let catalog: RestCatalog;
let key = '';
const ns = `api_part_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
  catalog = await stackCatalog(api.env);
  await catalog.createNamespace(ns);
  key = (await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'write', level: 'write' } })).body.key;
  const schema = {
    type: 'struct' as const,
    fields: [
      { id: 1, name: 'x', type: 'long', required: true },
      { id: 2, name: 'device', type: 'string', required: false },
      { id: 3, name: 'meta', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'kind', type: 'string', required: false }] } },
      { id: 5, name: 'ok', type: 'boolean', required: false },
    ],
  };
  for (const name of ['plain', 'conflict']) await catalog.createTable(ns, name, { schema, properties: { 'format-version': '2' } });
  // The owner's engine partitioned these before any sink (field names as its engine chose them).
  for (const name of ['owned', 'same']) {
    await catalog.createTable(ns, name, {
      schema,
      partitionSpec: { fields: [{ 'source-id': 2, 'field-id': 1000, name: 'dev', transform: 'bucket[8]' }] },
      properties: { 'format-version': '2' },
    });
  }
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

const create = (table: string, partition?: unknown) =>
  call(api.app, 'POST', '/v1/sinks', { key, body: { name: `p_${suffix()}`, table: `${ns}.${table}`, warehouse: 'garden', ...(partition === undefined ? {} : { partition }) } });
const errorOf = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.error?.code, field: res.body?.error?.field });

describe('POST /v1/sinks with a partition', () => {
  it('refuses an unknown column, a transform the type does not take, a repeat and bad syntax, naming the field', async () => {
    const unknown = await create('plain', ['day(__ingest_ts)', 'identity(meta.nope)']);
    expect(errorOf(unknown)).toEqual({ status: 400, code: 'partition_field_unknown', field: 'identity(meta.nope)' });
    expect(unknown.body.error.columns).toEqual(['x', 'device', 'meta', 'meta.kind', 'ok', '__ingest_ts']);
    expect(errorOf(await create('plain', ['day(x)']))).toEqual({ status: 400, code: 'partition_transform_invalid', field: 'day(x)' });
    expect(errorOf(await create('plain', ['bucket[4](ok)']))).toEqual({ status: 400, code: 'partition_transform_invalid', field: 'bucket[4](ok)' });
    expect(errorOf(await create('plain', ['hour(__ingest_ts)', 'hour(__ingest_ts)']))).toEqual({ status: 400, code: 'partition_invalid', field: 'hour(__ingest_ts)' });
    for (const bad of [['week(x)'], [], ['day(__ingest_ts)', 'a', 'b', 'c', 'd'], 'day(__ingest_ts)']) {
      expect(errorOf(await create('plain', bad)).code, JSON.stringify(bad)).toBe('invalid_request');
    }
    expect((await query(api.pool, 'SELECT 1 FROM sinks')).length).toBe(0);
  });

  it('stores the partition in its canonical form, answers it on GET and to the roller, and commits nothing to the table', async () => {
    const before = (await catalog.loadTable({ namespace: ns, name: 'plain' })).metadataLocation;
    const res = await create('plain', ['day( __ingest_ts )', 'bucket[16](device)', 'identity(meta.kind)']);
    expect(res.status, res.text).toBe(201);
    const sink = CreatedSink.parse(res.body);
    const partition = ['day(__ingest_ts)', 'bucket[16](device)', 'identity(meta.kind)'];
    expect(sink.partition).toEqual(partition);
    expect(Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key })).body).partition).toEqual(partition);
    const internal = await api.callInternal('GET', `/internal/sinks?sink=${sink.id}`);
    expect(internal.status, internal.text).toBe(200);
    expect(internal.body.sinks[0].partition).toEqual(partition);
    expect((await catalog.loadTable({ namespace: ns, name: 'plain' })).metadataLocation).toBe(before);
    const audit = await query<{ details: Record<string, unknown> }>(api.pool, "SELECT details FROM audit_events WHERE event = 'sink.create' AND subject = $1", [sink.id]);
    expect(audit[0]!.details.partition).toEqual(partition);
  });

  it("takes a table its owner partitioned, with no partition or the same fields, and refuses other fields (409 partition_conflict)", async () => {
    const owned = await create('owned');
    expect(owned.status, owned.text).toBe(201);
    expect(owned.body.partition).toEqual([]);
    const other = await create('conflict', ['identity(x)']);
    expect(other.status, other.text).toBe(201);
    const conflict = await call(api.app, 'POST', '/v1/sinks', { key, body: { name: `p_${suffix()}`, table: `${ns}.same`, warehouse: 'garden', partition: ['bucket[16](device)'] } });
    expect(errorOf(conflict)).toMatchObject({ status: 409, code: 'partition_conflict' });
    expect(conflict.body.error.table_partition).toEqual(['bucket[8](device)']);
    const same = await create('same', ['bucket[8](device)']);
    expect(same.status, same.text).toBe(201);
    expect(same.body.partition).toEqual(['bucket[8](device)']);
  });
});
