import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { BatchStatus, CreatedSink, DeletedSink, Sink, SinkList } from '@tablemere/contracts';
import { query, queryOne, transaction } from '@tablemere/db';
import type { RestCatalog } from '@tablemere/iceberg';
import { batchKey, ObjectStore, rejectsKey } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/domain/api-keys.ts';
import { pruneLedger } from '../src/domain/intake/ledger-days.ts';
import { call, dropNamespace, stackS3, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink, createTable, newBatchId, otherApp, send } from './support/sinks.ts';
import { stackCatalog } from '../../../tests/support/stack.ts';
import { storeIdentities } from '../../../tests/support/store-iam.ts';

let api: TestApi;
let s3: S3Client;
let intake: ObjectStore;
let catalog: RestCatalog;
const keys = { read: '', write: '' };
const ns = `api_sinks_${suffix()}`;
const bucket = () => api.env.TABLEMERE_INTAKE_BUCKET!;

beforeAll(async () => {
  api = await startTestApi();
  s3 = stackS3(api.env);
  intake = new ObjectStore(s3, bucket());
  catalog = await stackCatalog(api.env);
  for (const level of ['read', 'write'] as const) {
    const res = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: level, level } });
    keys[level] = res.body.key;
  }
  for (const table of ['events', 'second', 'deleted', 'batches', 'listing', 'pruned', 'older_key']) await createTable(api, ns, table);
  // A partitioned table, made through the catalog (sink-partition.test.ts creates sinks on such tables).
  await catalog.createTable(ns, 'parted', {
    schema: { type: 'struct', fields: [{ id: 1, name: 'x', type: 'long', required: true }] },
    partitionSpec: { fields: [{ 'source-id': 1, 'field-id': 1000, name: 'x', transform: 'identity' }] },
    properties: { 'format-version': '2' },
  });
  await catalog.createTable(ns, 'version_one', {
    schema: { type: 'struct', fields: [{ id: 1, name: 'x', type: 'long', required: true }] },
    properties: { 'format-version': '1' },
  });
});
afterAll(async () => {
  const keysLeft: string[] = [];
  for await (const page of intake.list('_sink/')) keysLeft.push(...page.objects.map((o) => o.key));
  const ours = await query<{ id: string }>(api.pool, 'SELECT id FROM sinks');
  await intake.deleteMany(keysLeft.filter((key) => ours.some((s) => key.startsWith(`_sink/${s.id}/`))));
  s3?.destroy();
  await dropNamespace(api.env, ns);
  await api?.close();
});

const errorOf = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.error?.code });
const tableState = async (name: string) => {
  const loaded = await catalog.loadTable({ namespace: ns, name });
  return { location: loaded.metadataLocation, snapshots: loaded.metadata.snapshots?.length ?? 0, properties: loaded.metadata.properties ?? {} };
};

describe('POST /v1/sinks', () => {
  it('creates a sink with the default roll policy, shows the send key once, keeps only its digest and commits nothing', async () => {
    const before = await tableState('events');
    const identities = await storeIdentities(api.env);
    expect(identities.length).toBeGreaterThan(0);
    const res = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'events_in', table: `${ns}.events`, warehouse: 'garden' } });
    expect(res.status, res.text).toBe(201);
    const sink = CreatedSink.parse(res.body);
    expect(sink).toMatchObject({
      name: 'events_in',
      warehouse: 'garden',
      table: `${ns}.events`,
      state: 'active',
      ingest_url: `http://api.test:8787/v1/sinks/${sink.id}`,
      roll: { roll_seconds: 300, roll_bytes: 64 * 1024 * 1024, inactivity_seconds: null, max_batches: 1000 },
      unknown_fields: 'reject',
      lag: { batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 },
      received: { batches: 0, rows: 0, bytes: 0, last_at: null },
      last_roll: null,
      rejects: { rows_total: 0, batches_with_rejects: 0, last_at: null, prefix: `s3://${bucket()}/_sink/${sink.id}/rejects/` },
      deleted_at: null,
      iam_writes: [],
    });
    expect(sink.send_key).toMatch(new RegExp(`^tm_send_${sink.id.slice(4)}_[A-Za-z0-9_-]{43}$`));
    expect(sink.table_uuid).toBe((await catalog.loadTable({ namespace: ns, name: 'events' })).metadata['table-uuid']);
    // Nothing committed, no property changed, and the store's identities did not move.
    expect(await tableState('events')).toEqual(before);
    expect(await storeIdentities(api.env)).toEqual(identities);
    // Only the digest is stored, nowhere the key.
    const row = await queryOne<{ send_key_sha256: Buffer }>(api.pool, 'SELECT send_key_sha256 FROM sinks WHERE id = $1', [sink.id]);
    expect(row!.send_key_sha256.equals(createHash('sha256').update(sink.send_key).digest())).toBe(true);
    const dump = await query(api.pool, "SELECT s::text AS t FROM sinks s UNION ALL SELECT a::text FROM audit_events a");
    expect(JSON.stringify(dump)).not.toContain(sink.send_key.slice(-43));
    // The key is not shown again.
    expect(JSON.stringify((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: keys.read })).body)).not.toMatch(/(tm|al)_send_/);
    const audit = await query<{ event: string; subject: string; details: Record<string, unknown> }>(
      api.pool,
      "SELECT event, subject, details FROM audit_events WHERE event = 'sink.create' AND subject = $1",
      [sink.id],
    );
    expect(audit).toEqual([{ event: 'sink.create', subject: sink.id, details: expect.objectContaining({ name: 'events_in', table: `${ns}.events` }) }]);
  });

  it('takes a roll policy within its bounds and refuses one outside them', async () => {
    const sink = await createSink(api.app, keys.write, {
      name: 'second_in',
      table: `${ns}.second`,
      roll_seconds: 60,
      roll_bytes: 32 * 1024 * 1024,
      inactivity_seconds: 30,
      unknown_fields: 'add_columns',
    });
    expect(sink.roll).toEqual({ roll_seconds: 60, roll_bytes: 32 * 1024 * 1024, inactivity_seconds: 30, max_batches: 1000 });
    expect(sink.unknown_fields).toBe('add_columns');
    for (const bad of [
      { roll_seconds: 59 },
      { roll_bytes: 32 * 1024 * 1024 - 1 },
      { roll_bytes: 64 * 1024 * 1024 + 1 },
      { inactivity_seconds: 5 },
      { roll_seconds: 90.5 },
      { unknown_fields: 'drop' },
      { name: 'snk_0123456789ab' },
      { name: 'Upper' },
      { table: 'no_dot' },
      { extra: 1 },
    ]) {
      const res = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: `n_${suffix()}`, table: `${ns}.listing`, warehouse: 'garden', ...bad } });
      expect(errorOf(res), JSON.stringify(bad)).toEqual({ status: 400, code: 'invalid_request' });
    }
  });

  it('answers 409 sink_exists for a second sink on a table, or a name in use', async () => {
    const byTable = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'again', table: `${ns}.events`, warehouse: 'garden' } });
    expect(errorOf(byTable)).toEqual({ status: 409, code: 'sink_exists' });
    expect(byTable.body.error).toMatchObject({ conflict: 'table', sink: { name: 'events_in' } });
    const byName = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'events_in', table: `${ns}.listing`, warehouse: 'garden' } });
    expect(errorOf(byName)).toEqual({ status: 409, code: 'sink_exists' });
    expect(byName.body.error).toMatchObject({ conflict: 'name', sink: { name: 'events_in' } });
  });

  it('answers 404 table_not_found listing the namespace tables, 409 for a format v1 table, 404 for an unknown warehouse', async () => {
    const missing = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'x', table: `${ns}.nope`, warehouse: 'garden' } });
    expect(errorOf(missing)).toEqual({ status: 404, code: 'table_not_found' });
    expect(missing.body.error.tables).toEqual(expect.arrayContaining([`${ns}.events`, `${ns}.second`, `${ns}.parted`, `${ns}.version_one`]));
    const noNamespace = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'x', table: `nope_${suffix()}.t`, warehouse: 'garden' } });
    expect(errorOf(noNamespace)).toEqual({ status: 404, code: 'table_not_found' });
    expect(noNamespace.body.error.tables).toEqual([]);
    const v1 = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'x', table: `${ns}.version_one`, warehouse: 'garden' } });
    expect(errorOf(v1)).toEqual({ status: 409, code: 'table_format_unsupported' });
    expect(v1.body.error.message).toMatch(/format v1/);
    const noWarehouse = await call(api.app, 'POST', '/v1/sinks', { key: keys.write, body: { name: 'x', table: `${ns}.events`, warehouse: 'nowhere' } });
    expect(errorOf(noWarehouse)).toEqual({ status: 404, code: 'warehouse_not_found' });
  });

  it('needs a write key (403 for read)', async () => {
    const res = await call(api.app, 'POST', '/v1/sinks', { key: keys.read, body: { name: 'x', table: `${ns}.listing`, warehouse: 'garden' } });
    expect(errorOf(res)).toEqual({ status: 403, code: 'forbidden' });
  });
});

describe('send keys with the deprecated al_send_ prefix', () => {
  it('keep opening their sink forever; the same id and secret under tm_send_ is another key', async () => {
    const sink = await createSink(api.app, keys.write, { name: 'older_key_in', table: `${ns}.older_key` });
    // A sink made before tm_send_: its key as it was issued then, only its digest stored.
    const older = `al_send_${sink.send_key.slice('tm_send_'.length)}`;
    await api.pool.query('UPDATE sinks SET send_key_sha256 = $2 WHERE id = $1', [sink.id, createHash('sha256').update(older).digest()]);
    expect((await send(api.app, { id: sink.id, send_key: older }, '[{"x": 1}]')).status).toBe(202);
    expect(errorOf(await send(api.app, sink, '[{"x": 2}]'))).toEqual({ status: 401, code: 'unauthorized' });
    // Anywhere else it is a send key all the same: 403 send_only, not 401.
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks', { key: older }))).toEqual({ status: 403, code: 'send_only' });
  });
});

describe('GET /v1/sinks and /v1/sinks/{id|name}', () => {
  it('finds a sink by id or name and shows its lag and what it received', async () => {
    const sink = await createSink(api.app, keys.write, { name: 'listing_in', table: `${ns}.listing` });
    expect((await send(api.app, sink, '[{"x": 1}, {"x": 2}]')).status).toBe(202);
    expect((await send(api.app, sink, '[{"x": 3}, 4]')).status).toBe(202);
    const byName = await call(api.app, 'GET', '/v1/sinks/listing_in', { key: keys.read });
    expect(byName.status).toBe(200);
    const view = Sink.parse(byName.body);
    expect(view.lag).toMatchObject({ batches_waiting: 2, bytes_waiting: '{"x": 1}\n{"x": 2}'.length + '{"x": 3}\n4'.length });
    expect(view.lag.seconds_behind).toBeGreaterThanOrEqual(0);
    expect(Date.parse(view.lag.oldest_waiting_at!)).toBeLessThanOrEqual(Date.now());
    // Every element is stored, the one that is not an object too.
    expect(view.received).toMatchObject({ batches: 2, rows: 4, bytes: view.lag.bytes_waiting });
    expect(view.received.last_at).not.toBeNull();
    expect(view.upkeep).toEqual({ keep_snapshots: 20, min_snapshot_age_seconds: 600, last_run: null });
    const byId = await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: keys.read });
    expect(byId.body).toEqual(byName.body);
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks/no_such_sink', { key: keys.read }))).toEqual({ status: 404, code: 'sink_not_found' });
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks/snk_000000000000', { key: keys.read }))).toEqual({ status: 404, code: 'sink_not_found' });
  });

  it('shows the last roll and the rejects as the roller reported them', async () => {
    const row = await queryOne<{ id: string }>(api.pool, "SELECT id FROM sinks WHERE name = 'second_in'");
    const lastRoll = { at: '2026-09-21T12:00:00.000Z', batches: 3, rows: 40, rejected_rows: 2, snapshot_id: '9223372036854775807', seconds: 1.25 };
    await query(api.pool, 'UPDATE sinks SET last_roll = $2, rejects_rows_total = 7, rejects_batches = 2, rejects_last_at = $3 WHERE id = $1', [
      row!.id,
      JSON.stringify(lastRoll),
      '2026-09-21T12:00:00Z',
    ]);
    const view = Sink.parse((await call(api.app, 'GET', `/v1/sinks/${row!.id}`, { key: keys.read })).body);
    expect(view.last_roll).toEqual(lastRoll);
    expect(view.rejects).toEqual({ rows_total: 7, batches_with_rejects: 2, last_at: '2026-09-21T12:00:00.000Z', prefix: `s3://${bucket()}/_sink/${row!.id}/rejects/` });
  });

  it('lists the live sinks, by warehouse, with deleted ones on request; other projects see none of them', async () => {
    const list = SinkList.parse((await call(api.app, 'GET', '/v1/sinks', { key: keys.read })).body);
    expect(list.sinks.map((s) => s.name)).toEqual(expect.arrayContaining(['events_in', 'second_in', 'listing_in']));
    expect(list.sinks.every((s) => s.state !== 'deleted')).toBe(true);
    const inGarden = await call(api.app, 'GET', '/v1/sinks?warehouse=garden', { key: keys.read });
    expect(inGarden.body.sinks).toHaveLength(list.sinks.length);
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks?warehouse=nowhere', { key: keys.read }))).toEqual({ status: 404, code: 'warehouse_not_found' });
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks?include_deleted=yes', { key: keys.read }))).toEqual({ status: 400, code: 'invalid_request' });

    const project = await queryOne<{ id: string }>(api.pool, "INSERT INTO projects (name) VALUES ($1) RETURNING id", [`other_${suffix()}`]);
    const stranger = await transaction(api.pool, (client) => createApiKey(client, project!.id, { name: 'stranger', level: 'admin' }, null));
    expect((await call(api.app, 'GET', '/v1/sinks', { key: stranger.key })).body).toEqual({ sinks: [] });
    const theirs = list.sinks[0]!;
    expect(errorOf(await call(api.app, 'GET', `/v1/sinks/${theirs.id}`, { key: stranger.key }))).toEqual({ status: 404, code: 'sink_not_found' });
    expect(errorOf(await call(api.app, 'DELETE', `/v1/sinks/${theirs.id}`, { key: stranger.key }))).toEqual({ status: 404, code: 'sink_not_found' });
    expect(errorOf(await call(api.app, 'GET', `/v1/sinks/${theirs.id}/batches/x`, { key: stranger.key }))).toEqual({ status: 404, code: 'sink_not_found' });
  });
});

describe('DELETE /v1/sinks/{id|name}', () => {
  it('discards the pending batches, removes them from intake, keeps rejects and the table, and frees the table for a new sink', async () => {
    const sink = await createSink(api.app, keys.write, { name: 'deleted_in', table: `${ns}.deleted` });
    const pending = [newBatchId(), newBatchId()];
    for (const batchId of pending) expect((await send(api.app, sink, '[{"x": 1}]', { batchId })).status).toBe(202);
    const rolled = newBatchId();
    expect((await send(api.app, sink, '[{"x": 2}]', { batchId: rolled })).status).toBe(202);
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now(), snapshot_id = '1', rejected_rows = 0 WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      rolled,
    ]);
    await intake.put(rejectsKey(sink.id, rolled), Buffer.from('{"row": {}, "reason": "x"}'), { contentType: 'application/x-ndjson' });
    // An object the ledger does not know (an ambiguous earlier write) goes too.
    await intake.put(batchKey(sink.id, 'stray'), Buffer.from('{"x": 9}'), { contentType: 'application/x-ndjson' });
    const before = await tableState('deleted');

    expect(errorOf(await call(api.app, 'DELETE', '/v1/sinks/deleted_in', { key: keys.read }))).toEqual({ status: 403, code: 'forbidden' });
    const res = await call(api.app, 'DELETE', '/v1/sinks/deleted_in', { key: keys.write });
    expect(res.status, res.text).toBe(202);
    expect(DeletedSink.parse(res.body)).toMatchObject({
      id: sink.id,
      name: 'deleted_in',
      state: 'deleted',
      pending_batches_discarded: 2,
      intake_objects_removed: 4,
      intake_cleared: true,
    });

    const left = [];
    for await (const page of intake.list(`_sink/${sink.id}/`)) left.push(...page.objects.map((o) => o.key));
    expect(left).toEqual([rejectsKey(sink.id, rolled)]);
    const states = await query<{ batch_id: string; state: string }>(api.pool, 'SELECT batch_id, state FROM sink_batches WHERE sink_id = $1 ORDER BY batch_id', [sink.id]);
    expect(states).toEqual(
      [...pending.map((batch_id) => ({ batch_id, state: 'discarded' })), { batch_id: rolled, state: 'committed' }].sort((a, b) => a.batch_id.localeCompare(b.batch_id)),
    );
    expect(await tableState('deleted')).toEqual(before);
    const audit = await query(api.pool, "SELECT details FROM audit_events WHERE event = 'sink.delete' AND subject = $1", [sink.id]);
    expect(audit).toEqual([{ details: expect.objectContaining({ pending_batches_discarded: 2 }) }]);

    expect(errorOf(await call(api.app, 'GET', '/v1/sinks/deleted_in', { key: keys.read }))).toEqual({ status: 404, code: 'sink_not_found' });
    const byId = Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: keys.read })).body);
    expect(byId).toMatchObject({ state: 'deleted', lag: { batches_waiting: 0 } });
    expect(byId.deleted_at).not.toBeNull();
    expect(errorOf(await call(api.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: keys.write }))).toEqual({ status: 404, code: 'sink_not_found' });
    const listed = (await call(api.app, 'GET', '/v1/sinks', { key: keys.read })).body.sinks.map((s: Sink) => s.id);
    expect(listed).not.toContain(sink.id);
    const all = (await call(api.app, 'GET', '/v1/sinks?include_deleted=true', { key: keys.read })).body.sinks.map((s: Sink) => s.id);
    expect(all).toContain(sink.id);
    const batch = BatchStatus.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}/batches/${pending[0]}`, { key: keys.read })).body);
    expect(batch.state).toBe('discarded');

    const again = await createSink(api.app, keys.write, { name: 'deleted_in', table: `${ns}.deleted` });
    expect(again.id).not.toBe(sink.id);
  });
});

describe('GET /v1/sinks/{id}/batches/{batch_id}', () => {
  it('answers pending, committed, rejected and unknown', async () => {
    const sink = await createSink(api.app, keys.write, { name: 'batches_in', table: `${ns}.batches` });
    const [pending, committed, rejected] = [newBatchId(), newBatchId(), newBatchId()];
    const answers: Record<string, any> = {};
    for (const batchId of [pending, committed, rejected]) {
      answers[batchId] = (await send(api.app, sink, '[{"x": 1}, {"x": 2}]', { batchId })).body;
    }
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now(), snapshot_id = '7', rejected_rows = 1 WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      committed,
    ]);
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now(), snapshot_id = NULL, rejected_rows = 2 WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      rejected,
    ]);
    const status = async (batchId: string) => BatchStatus.parse((await call(api.app, 'GET', `/v1/sinks/batches_in/batches/${batchId}`, { key: keys.read })).body);
    expect(await status(pending)).toEqual({
      sink_id: sink.id,
      batch_id: pending,
      state: 'pending',
      received_at: answers[pending].received_at,
      bytes: 17,
      rows: 2,
      rejected_rows: null,
      snapshot_id: null,
      committed_at: null,
    });
    expect(await status(committed)).toMatchObject({ state: 'committed', snapshot_id: '7', rejected_rows: 1 });
    expect(await status(rejected)).toMatchObject({ state: 'rejected', rejected_rows: 2 });
    expect(await status('never-sent')).toMatchObject({ state: 'unknown', received_at: null });
    expect(errorOf(await call(api.app, 'GET', '/v1/sinks/batches_in/batches/bad%20id', { key: keys.read }))).toEqual({ status: 400, code: 'invalid_request' });
  });

  it('forgets batches 7 days after their roll, and then takes the batch id again', async () => {
    const sink = await createSink(api.app, keys.write, { name: 'pruned_in', table: `${ns}.pruned` });
        const [old, recent, waiting] = [newBatchId(), newBatchId(), newBatchId()];
    for (const batchId of [old, recent, waiting]) expect((await send(api.app, sink, '[{"x": 1}]', { batchId })).status).toBe(202);
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now() - interval '8 days', snapshot_id = '3' WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      old,
    ]);
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now() - interval '6 days', snapshot_id = '4' WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      recent,
    ]);
    // Both claimed on a day ten days ago, which waiting (still pending) keeps: old's row goes alone.
    await query(api.pool, `SELECT sink_ledger_add_day(current_date - 10)`);
    await query(api.pool, `UPDATE sink_batches SET ledger_day = current_date - 10, received_at = now() - interval '10 days' WHERE sink_id = $1 AND batch_id = ANY($2)`, [
      sink.id,
      [old, waiting],
    ]);
    expect((await pruneLedger(api.pool)).batches).toBeGreaterThanOrEqual(1);
    const left = await query<{ batch_id: string }>(api.pool, 'SELECT batch_id FROM sink_batches WHERE sink_id = $1 AND batch_id = ANY($2) ORDER BY batch_id', [sink.id, [old, recent, waiting]]);
    expect(left.map((r) => r.batch_id).sort()).toEqual([recent, waiting].sort());
    expect((await send(api.app, sink, '[{"x": 1}]', { batchId: recent })).status).toBe(200);
    expect((await send(api.app, sink, '[{"x": 1}]', { batchId: old })).status).toBe(202);
  });
});

describe('TABLEMERE_SINKS_ENABLED=false', () => {
  it('answers 404 not_found on every /v1/sinks route, the send route included', async () => {
    const off = await otherApp(api, { sinksEnabled: false });
    try {
      const sink = (await call(api.app, 'GET', '/v1/sinks/events_in', { key: keys.read })).body as Sink;
      for (const [method, url] of [
        ['GET', '/v1/sinks'],
        ['POST', '/v1/sinks'],
        ['GET', `/v1/sinks/${sink.id}`],
        ['DELETE', `/v1/sinks/${sink.id}`],
        ['GET', `/v1/sinks/${sink.id}/batches/x`],
        ['POST', `/v1/sinks/${sink.id}`],
      ] as const) {
        const res = await call(off.app, method, url, { key: api.adminKey, body: method === 'POST' ? [{ x: 1 }] : undefined, headers: { 'idempotency-key': 'k' } });
        expect({ method, url, ...errorOf(res) }).toEqual({ method, url, status: 404, code: 'not_found' });
      }
    } finally {
      await off.close();
    }
  });
});
