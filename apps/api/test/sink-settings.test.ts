import { InternalSinkList, Sink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import { ObjectStore } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropNamespace, stackS3, suffix } from './support/harness.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { clearSinkObjects, createSink, createTable, send } from './support/sinks.ts';

/**
 * A sink's changeable settings (snapshot retention, unknown_fields, batch_ids): set at create, changed by
 * PATCH /v1/sinks/{id|name} with an audit event per change, shown by GET and handed to the
 * roller in its sink list.
 */
let api: InternalTestApi;
const ns = `api_settings_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
  for (const table of ['events', 'other', 'fields', 'named', 'shipped']) await createTable(api, ns, table);
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

const errorOf = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.error?.code, message: res.body?.error?.message });
const patch = (ref: string, body: unknown, key = api.adminKey) => call(api.app, 'PATCH', `/v1/sinks/${ref}`, { key, body });

/** The roller's view of one sink: what its upkeep will use. */
async function rollerRetention(sinkId: string) {
  const res = await api.callInternal('GET', `/internal/sinks?sink=${sinkId}`);
  expect(res.status, res.text).toBe(200);
  const { keep_snapshots, min_snapshot_age_seconds } = InternalSinkList.parse(res.body).sinks[0]!.upkeep;
  return { keep_snapshots, min_snapshot_age_seconds };
}

describe('snapshot retention per sink', () => {
  it('defaults to 20 snapshots and 10 minutes, as the roller kept for every sink before', async () => {
    const sink = await createSink(api.app, api.adminKey, { name: 'other_in', table: `${ns}.other` });
    expect(sink.upkeep).toEqual({ keep_snapshots: 20, min_snapshot_age_seconds: 600, last_run: null });
    expect(await rollerRetention(sink.id)).toEqual({ keep_snapshots: 20, min_snapshot_age_seconds: 600 });
  });

  it('is set at create, changed by PATCH (one setting or both), audited, and handed to the roller', async () => {
    const sink = await createSink(api.app, api.adminKey, { name: 'events_in', table: `${ns}.events`, keep_snapshots: 3, min_snapshot_age_seconds: 0 });
    expect(sink.upkeep).toMatchObject({ keep_snapshots: 3, min_snapshot_age_seconds: 0 });
    expect(await rollerRetention(sink.id)).toEqual({ keep_snapshots: 3, min_snapshot_age_seconds: 0 });

    const res = await patch('events_in', { keep_snapshots: 168 });
    expect(res.status, res.text).toBe(200);
    expect(Sink.parse(res.body).upkeep).toMatchObject({ keep_snapshots: 168, min_snapshot_age_seconds: 0 });
    const both = await patch(sink.id, { keep_snapshots: 5, min_snapshot_age_seconds: 3600 });
    expect(both.status, both.text).toBe(200);
    const got = await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: api.adminKey });
    expect(Sink.parse(got.body).upkeep).toMatchObject({ keep_snapshots: 5, min_snapshot_age_seconds: 3600 });
    expect(await rollerRetention(sink.id)).toEqual({ keep_snapshots: 5, min_snapshot_age_seconds: 3600 });
    // The same values again change nothing and record nothing.
    expect((await patch(sink.id, { keep_snapshots: 5 })).status).toBe(200);

    const events = await query<{ event: string; details: Record<string, unknown> }>(
      api.pool,
      `SELECT event, details FROM audit_events WHERE subject = $1 ORDER BY id`,
      [sink.id],
    );
    expect(events.map((e) => e.event)).toEqual(['sink.create', 'sink.update', 'sink.update']);
    expect(events[0]!.details).toMatchObject({ keep_snapshots: 3, min_snapshot_age_seconds: 0 });
    expect(events[1]!.details).toEqual({ name: 'events_in', changes: { keep_snapshots: { from: 3, to: 168 } } });
    expect(events[2]!.details).toEqual({
      name: 'events_in',
      changes: { keep_snapshots: { from: 168, to: 5 }, min_snapshot_age_seconds: { from: 0, to: 3600 } },
    });
  });

  it('switches unknown_fields both ways, audited, and the roller sees the mode', async () => {
    const sink = await createSink(api.app, api.adminKey, { name: 'fields_in', table: `${ns}.fields` });
    expect(sink.unknown_fields).toBe('reject');
    const rollerMode = async () => InternalSinkList.parse((await api.callInternal('GET', `/internal/sinks?sink=${sink.id}`)).body).sinks[0]!.unknown_fields;
    const on = await patch('fields_in', { unknown_fields: 'add_columns' });
    expect(on.status, on.text).toBe(200);
    expect(Sink.parse(on.body).unknown_fields).toBe('add_columns');
    expect(await rollerMode()).toBe('add_columns');
    expect((await patch(sink.id, { unknown_fields: 'reject' })).status).toBe(200);
    expect(await rollerMode()).toBe('reject');
    expect(errorOf(await patch(sink.id, { unknown_fields: 'drop' }))).toMatchObject({ status: 400, code: 'invalid_request' });
    const events = await query<{ details: Record<string, unknown> }>(api.pool, `SELECT details FROM audit_events WHERE subject = $1 AND event = 'sink.update' ORDER BY id`, [sink.id]);
    expect(events.map((e) => e.details['changes'])).toEqual([
      { unknown_fields: { from: 'reject', to: 'add_columns' } },
      { unknown_fields: { from: 'add_columns', to: 'reject' } },
    ]);
  });

  it('switches batch_ids key → content → key, audited, and the send route follows at once', async () => {
    const sink = await createSink(api.app, api.adminKey, { name: 'named_in', table: `${ns}.named` });
    expect(sink.batch_ids).toBe('key');
    const keyless = async () => {
      const res = await send(api.app, sink, `[{"x": 1, "at": "${suffix()}"}]`, { batchId: undefined });
      return res.status === 202 ? res.body.batch_id_from : res.body.error.code;
    };
    expect(await keyless()).toBe('idempotency_key_missing');
    const on = await patch('named_in', { batch_ids: 'content' });
    expect(on.status, on.text).toBe(200);
    expect(Sink.parse(on.body).batch_ids).toBe('content');
    expect(await keyless()).toBe('content');
    expect((await patch(sink.id, { batch_ids: 'key' })).status).toBe(200);
    expect(await keyless()).toBe('idempotency_key_missing');
    expect(Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: api.adminKey })).body).batch_ids).toBe('key');
    const s3 = stackS3(api.env);
    await clearSinkObjects(new ObjectStore(s3, api.env.TABLEMERE_INTAKE_BUCKET!), sink.id);
    s3.destroy();
    const events = await query<{ event: string; details: Record<string, unknown> }>(api.pool, `SELECT event, details FROM audit_events WHERE subject = $1 ORDER BY id`, [sink.id]);
    expect(events[0]).toMatchObject({ event: 'sink.create', details: { batch_ids: 'key' } });
    expect(events.slice(1).map((e) => e.details['changes'])).toEqual([{ batch_ids: { from: 'key', to: 'content' } }, { batch_ids: { from: 'content', to: 'key' } }]);

    const shipped = await createSink(api.app, api.adminKey, { name: 'shipped_in', table: `${ns}.shipped`, batch_ids: 'content' });
    expect(shipped.batch_ids).toBe('content');
    const created = await query<{ details: Record<string, unknown> }>(api.pool, `SELECT details FROM audit_events WHERE subject = $1 AND event = 'sink.create'`, [shipped.id]);
    expect(created[0]!.details).toMatchObject({ batch_ids: 'content' });
  });

  it('refuses bad values with 400 naming the field, an empty change, unknown settings, a read key and a deleted sink', async () => {
    for (const [body, field] of [
      [{ keep_snapshots: 0 }, 'keep_snapshots is 1 to 1000'],
      [{ keep_snapshots: 1001 }, 'keep_snapshots is 1 to 1000'],
      [{ keep_snapshots: 2.5 }, 'keep_snapshots is a whole number'],
      [{ min_snapshot_age_seconds: -1 }, 'min_snapshot_age_seconds is 0 to 31536000'],
      [{ min_snapshot_age_seconds: 'ten' }, 'min_snapshot_age_seconds'],
      [{ batch_ids: 'body' }, 'batch_ids'],
    ] as const) {
      const res = errorOf(await patch('events_in', body));
      expect(res).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(res.message).toContain(field);
    }
    expect(errorOf(await patch('events_in', {}))).toMatchObject({ status: 400, code: 'nothing_to_update' });
    expect(errorOf(await patch('events_in', { roll_seconds: 60 }))).toMatchObject({ status: 400, code: 'invalid_request' });
    const create = await call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: { name: 'bad_in', table: `${ns}.events`, warehouse: 'garden', keep_snapshots: 0 } });
    expect(errorOf(create)).toMatchObject({ status: 400, code: 'invalid_request' });
    const badMode = errorOf(await call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: { name: 'bad_in', table: `${ns}.events`, warehouse: 'garden', batch_ids: 'hash' } }));
    expect(badMode).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(badMode.message).toContain('batch_ids');

    const read = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'reader', level: 'read' } });
    expect(errorOf(await patch('events_in', { keep_snapshots: 7 }, read.body.key))).toMatchObject({ status: 403, code: 'forbidden' });

    const deleted = await call(api.app, 'DELETE', '/v1/sinks/other_in', { key: api.adminKey });
    expect(deleted.status).toBe(202);
    expect(errorOf(await patch(deleted.body.id, { keep_snapshots: 7 }))).toMatchObject({ status: 404, code: 'sink_not_found' });
    expect(errorOf(await patch('nobody_in', { keep_snapshots: 7 }))).toMatchObject({ status: 404, code: 'sink_not_found' });
  });
});
