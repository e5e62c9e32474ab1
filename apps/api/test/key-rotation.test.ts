import { setTimeout as sleep } from 'node:timers/promises';
import { CreatedKey, KEY_OVERLAP_SECONDS_DEFAULT, RotatedSendKey, Sink, type CreatedSink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retireEndedKeys } from '../src/domain/sinks/rotation.ts';
import { sendKeyDigest } from '../src/domain/sinks/send-keys.ts';
import { call, dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink, createTable, otherApp, send } from './support/sinks.ts';

let api: TestApi;
let readKey: string;
let writeKey: string;
let writeKeyId: string;
const ns = `api_rotation_${suffix()}`;
const sinks: CreatedSink[] = [];

beforeAll(async () => {
  api = await startTestApi();
  for (const level of ['read', 'write'] as const) {
    const res = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: `${level} key`, level } });
    expect(res.status).toBe(201);
    const created = CreatedKey.parse(res.body);
    if (level === 'read') readKey = created.key;
    else [writeKey, writeKeyId] = [created.key, created.id];
  }
});
afterAll(async () => {
  // Deleting a sink removes its batches from intake.
  for (const sink of sinks) await call(api.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey });
  await dropNamespace(api.env, ns);
  await api?.close();
});

async function newSink(): Promise<CreatedSink> {
  const table = `t_${suffix()}`;
  await createTable(api, ns, table);
  const sink = await createSink(api.app, api.adminKey, { name: `${table}_in`, table: `${ns}.${table}` });
  sinks.push(sink);
  return sink;
}

/** POST …/send-key/rotate with its options as the JSON body (none without options); the answer parsed when 200. */
async function rotate(app: typeof api.app, ref: string, options: { overlap?: number; finish?: boolean; key?: string } = {}) {
  const body = { overlap_seconds: options.overlap, finish: options.finish };
  const given = Object.values(body).some((value) => value !== undefined);
  const res = await call(app, 'POST', `/v1/sinks/${ref}/send-key/rotate`, { key: options.key ?? writeKey, ...(given ? { body } : {}) });
  return { res, rotated: res.status === 200 ? RotatedSendKey.parse(res.body) : undefined };
}

const sendWith = (app: typeof api.app, sink: CreatedSink, key: string) => send(app, sink, '[{"x": 1}]', { key });

const events = (sinkId: string) =>
  query<{ event: string; actor_key_id: string | null; details: Record<string, unknown> }>(
    api.pool,
    `SELECT event, actor_key_id, details FROM audit_events WHERE subject = $1 AND event LIKE 'sink.key_%' ORDER BY id`,
    [sinkId],
  );

const waitUntil = async (at: string) => sleep(Math.max(0, new Date(at).getTime() - Date.now() + 50));

describe('rotating a send key', () => {
  it('answers a new key once; both work during the overlap, the old one is refused after it', async () => {
    const sink = await newSink();
    const before = Date.now();
    const { res, rotated } = await rotate(api.app, sink.name, { overlap: 2 });
    expect(res.status, res.text).toBe(200);
    expect(rotated!.send_key).not.toBe(sink.send_key);
    expect(rotated!.send_key.startsWith(`tm_send_${sink.id.slice(4)}_`)).toBe(true);
    const stops = new Date(rotated!.key_rotation.old_key_stops_at!).getTime();
    expect(stops - before).toBeGreaterThanOrEqual(1_500);
    expect(stops - before).toBeLessThan(4_000);

    // Digests only: the row holds the SHA-256 of both keys and neither key.
    const [row] = await query<Record<string, unknown>>(api.pool, 'SELECT * FROM sinks WHERE id = $1', [sink.id]);
    expect(row!.send_key_sha256).toEqual(sendKeyDigest(rotated!.send_key));
    expect(row!.previous_key_sha256).toEqual(sendKeyDigest(sink.send_key));
    expect(JSON.stringify(row)).not.toContain(sink.send_key.slice(-43));

    expect((await sendWith(api.app, sink, rotated!.send_key)).status).toBe(202);
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);
    const view = Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.name}`, { key: readKey })).body);
    expect(view.key_rotation).toEqual(rotated!.key_rotation);

    await waitUntil(rotated!.key_rotation.old_key_stops_at!);
    const refused = await sendWith(api.app, sink, sink.send_key);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
    expect((await sendWith(api.app, sink, rotated!.send_key)).status).toBe(202);
    expect(Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: readKey })).body).key_rotation).toEqual({
      rotated_at: rotated!.key_rotation.rotated_at,
      old_key_stops_at: null,
    });

    // The sweep retires it: digest cleared, sink.key_retired at the overlap's end.
    expect(await retireEndedKeys(api.pool)).toBeGreaterThanOrEqual(1);
    const [cleared] = await query<{ previous_key_sha256: Buffer | null }>(api.pool, 'SELECT previous_key_sha256 FROM sinks WHERE id = $1', [sink.id]);
    expect(cleared!.previous_key_sha256).toBeNull();
    const recorded = await events(sink.id);
    expect(recorded.map((e) => [e.event, e.details.reason ?? null])).toEqual([
      ['sink.key_rotated', null],
      ['sink.key_retired', 'overlap_ended'],
    ]);
    expect(recorded[0]!.details).toEqual({ name: sink.name, overlap_seconds: 2, old_key_stops_at: rotated!.key_rotation.old_key_stops_at, finished_earlier_rotation: false });
    expect(recorded[1]).toMatchObject({ actor_key_id: null, details: { stopped_at: rotated!.key_rotation.old_key_stops_at } });
    expect(recorded[0]!.actor_key_id).toBe(writeKeyId);
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(401);
  });

  it('keeps every scope rule of a send key for the new key', async () => {
    const sink = await newSink();
    const other = await newSink();
    const { rotated } = await rotate(api.app, sink.id, { overlap: 600 });
    const newKey = rotated!.send_key;
    // Another sink's key (new or old), an API key, any other token: refused on the send route.
    expect((await send(api.app, other, '[{"x": 1}]', { key: newKey })).status).toBe(401);
    expect((await send(api.app, { id: sink.name, send_key: newKey }, '[{"x": 1}]')).status).toBe(401);
    for (const key of [api.adminKey, writeKey, 'not-a-key']) {
      const res = await sendWith(api.app, sink, key);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 403, code: 'send_only' });
    }
    const wrongSecret = `${newKey.slice(0, -1)}${newKey.endsWith('A') ? 'B' : 'A'}`;
    expect((await sendWith(api.app, sink, wrongSecret)).status).toBe(401);
    // Both keys open nothing but the send route, the rotation itself included.
    for (const key of [newKey, sink.send_key]) {
      for (const [method, url] of [
        ['GET', `/v1/sinks/${sink.id}`],
        ['POST', `/v1/sinks/${sink.id}/send-key/rotate`],
        ['DELETE', `/v1/sinks/${sink.id}`],
        ['GET', '/v1/keys'],
      ] as const) {
        const res = await call(api.app, method, url, { key });
        expect({ url, status: res.status, code: res.body.error.code }).toEqual({ url, status: 403, code: 'send_only' });
      }
    }
    // A read key may not rotate; a write key may (as above), an admin key too.
    const byReader = await rotate(api.app, other.id, { key: readKey });
    expect({ status: byReader.res.status, code: byReader.res.body.error.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await rotate(api.app, other.id, { key: api.adminKey, overlap: 60 })).res.status).toBe(200);
  });

  it('refuses a second rotation during the overlap (409) until it is finished with finish: true', async () => {
    const sink = await newSink();
    const first = (await rotate(api.app, sink.name, { overlap: 3_600 })).rotated!;
    const again = await rotate(api.app, sink.name, { overlap: 60 });
    expect(again.res.status).toBe(409);
    expect(again.res.body.error).toMatchObject({ code: 'key_rotation_in_progress', sink: sink.id, old_key_stops_at: first.key_rotation.old_key_stops_at });
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);

    const second = (await rotate(api.app, sink.name, { overlap: 60, finish: true })).rotated!;
    // The key before the first rotation stops at once; the first rotation's key is now the old one.
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(401);
    expect((await sendWith(api.app, sink, first.send_key)).status).toBe(202);
    expect((await sendWith(api.app, sink, second.send_key)).status).toBe(202);
    expect(new Date(second.key_rotation.old_key_stops_at!).getTime() - Date.now()).toBeLessThanOrEqual(60_000);

    // An overlap of 0 stops the old key at once too.
    const third = (await rotate(api.app, sink.name, { overlap: 0, finish: true })).rotated!;
    expect(third.key_rotation.old_key_stops_at).toBeNull();
    for (const key of [first.send_key, second.send_key]) expect((await sendWith(api.app, sink, key)).status).toBe(401);
    expect((await sendWith(api.app, sink, third.send_key)).status).toBe(202);
    // Nothing in overlap now: no 409 without finish.
    expect((await rotate(api.app, sink.name, { overlap: 0 })).res.status).toBe(200);

    const recorded = await events(sink.id);
    expect(recorded.map((e) => [e.event, e.details.reason ?? e.details.finished_earlier_rotation])).toEqual([
      ['sink.key_rotated', false],
      ['sink.key_retired', 'finished'],
      ['sink.key_rotated', true],
      ['sink.key_retired', 'finished'],
      ['sink.key_rotated', true],
      ['sink.key_retired', 'no_overlap'],
      ['sink.key_rotated', false],
      ['sink.key_retired', 'no_overlap'],
    ]);
  });

  it('a leaked key: {"overlap_seconds": 0} as the body stops the old key at once; no body keeps the default overlap', async () => {
    const sink = await newSink();
    const leaked = await call(api.app, 'POST', `/v1/sinks/${sink.id}/send-key/rotate`, { key: writeKey, payload: '{"overlap_seconds": 0}', headers: { 'content-type': 'application/json' } });
    expect(leaked.status, leaked.text).toBe(200);
    const rotated = RotatedSendKey.parse(leaked.body);
    expect(rotated.key_rotation.old_key_stops_at).toBeNull();
    const refused = await sendWith(api.app, sink, sink.send_key);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
    expect((await sendWith(api.app, sink, rotated.send_key)).status).toBe(202);

    for (const options of [{}, { payload: '', headers: { 'content-type': 'application/json' } }, { body: {} }]) {
      const before = Date.now();
      const res = await call(api.app, 'POST', `/v1/sinks/${sink.id}/send-key/rotate`, { key: writeKey, ...options });
      expect(res.status, res.text).toBe(200);
      const stops = new Date(RotatedSendKey.parse(res.body).key_rotation.old_key_stops_at!).getTime();
      expect(stops - before).toBeGreaterThanOrEqual((KEY_OVERLAP_SECONDS_DEFAULT - 2) * 1000);
      expect(stops - before).toBeLessThan((KEY_OVERLAP_SECONDS_DEFAULT + 5) * 1000);
      expect((await rotate(api.app, sink.id, { overlap: 0, finish: true })).res.status).toBe(200);
    }
  });

  it('still reads the options from the query; the same value both ways is taken', async () => {
    const sink = await newSink();
    const res = await call(api.app, 'POST', `/v1/sinks/${sink.id}/send-key/rotate?overlap_seconds=0`, { key: writeKey });
    expect(res.status, res.text).toBe(200);
    expect(RotatedSendKey.parse(res.body).key_rotation.old_key_stops_at).toBeNull();
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(401);

    const first = await call(api.app, 'POST', `/v1/sinks/${sink.id}/send-key/rotate?overlap_seconds=3600`, { key: writeKey });
    expect(first.status, first.text).toBe(200);
    const both = await call(api.app, 'POST', `/v1/sinks/${sink.id}/send-key/rotate?overlap_seconds=60&finish=true`, { key: writeKey, body: { overlap_seconds: 60, finish: true } });
    expect(both.status, both.text).toBe(200);
    const stops = new Date(RotatedSendKey.parse(both.body).key_rotation.old_key_stops_at!).getTime();
    expect(stops - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('refuses an unknown field, a wrong type or an option given two ways, naming it, and rotates nothing', async () => {
    const sink = await newSink();
    const url = `/v1/sinks/${sink.id}/send-key/rotate`;
    const refusals: Array<{ search?: string; body?: unknown; names: string }> = [
      { body: { overlap_seconds: 0, overlap: 0 }, names: 'overlap' },
      { body: { overlap_seconds: '0' }, names: 'overlap_seconds' },
      { body: { overlap_seconds: 604_801 }, names: 'overlap_seconds' },
      { body: { overlap_seconds: -1 }, names: 'overlap_seconds' },
      { body: { overlap_seconds: 1.5 }, names: 'overlap_seconds' },
      { body: { finish: 'true' }, names: 'finish' },
      { body: null, names: 'body' },
      { body: [{ overlap_seconds: 0 }], names: 'body' },
      { search: 'overlap=0', names: 'overlap' },
      { search: 'overlap_seconds=0&other=1', names: 'other' },
      { search: 'overlap_seconds=604801', names: 'overlap_seconds' },
      { search: 'overlap_seconds=', names: 'overlap_seconds' },
      { search: 'overlap_seconds=1.5', names: 'overlap_seconds' },
      { search: 'finish=yes', names: 'finish' },
      { search: 'overlap_seconds=86400', body: { overlap_seconds: 0 }, names: 'overlap_seconds' },
      { search: 'finish=false', body: { finish: true }, names: 'finish' },
    ];
    for (const { search, body, names } of refusals) {
      const res = await call(api.app, 'POST', search === undefined ? url : `${url}?${search}`, { key: writeKey, ...(body === undefined ? {} : { body }) });
      const error = res.body.error;
      expect({ search, body, status: res.status, code: error.code }).toEqual({ search, body, status: 400, code: 'invalid_request' });
      expect(error.message, JSON.stringify({ search, body })).toContain(names);
    }
    // A JSON body sent as a form (curl -d without a content type) is refused, not ignored.
    const form = await call(api.app, 'POST', url, { key: writeKey, payload: '{"overlap_seconds": 0}', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect({ status: form.status, code: form.body.error.code }).toEqual({ status: 415, code: 'unsupported_media_type' });

    // Nothing rotated: the key sends, no event, no rotation on the sink.
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);
    expect(await events(sink.id)).toEqual([]);
    expect(Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: readKey })).body).key_rotation).toEqual({ rotated_at: null, old_key_stops_at: null });
  });

  it('refuses unknown and deleted sinks', async () => {
    const sink = await newSink();
    expect((await rotate(api.app, 'snk_000000000000')).res.status).toBe(404);
    expect((await call(api.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey })).status).toBe(202);
    const gone = await rotate(api.app, sink.id);
    expect({ status: gone.res.status, code: gone.res.body.error.code }).toEqual({ status: 404, code: 'sink_not_found' });
    expect(await events(sink.id)).toEqual([]);
  });

  it('deleting the sink stops both keys at once', async () => {
    const sink = await newSink();
    const { rotated } = await rotate(api.app, sink.id, { overlap: 3_600 });
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);
    expect((await call(api.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey })).status).toBe(202);
    for (const key of [sink.send_key, rotated!.send_key]) expect((await sendWith(api.app, sink, key)).status).toBe(401);
    const view = Sink.parse((await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: readKey })).body);
    expect(view.key_rotation.old_key_stops_at).toBeNull();
  });

  it('across API processes: a new key works at once, an old key stops at its overlap end in a process holding the old copy', async () => {
    const sink = await newSink();
    // This process has the sink's key cached.
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);
    const other = await otherApp(api, {});
    let rotated: RotatedSendKey;
    try {
      rotated = (await rotate(other.app, sink.id, { overlap: 2 })).rotated!;
    } finally {
      await other.close();
    }
    expect((await sendWith(api.app, sink, rotated.send_key)).status).toBe(202);
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(202);
    await waitUntil(rotated.key_rotation.old_key_stops_at!);
    expect((await sendWith(api.app, sink, sink.send_key)).status).toBe(401);

    // Not swept yet: the next rotation retires the old key as the sweep would have.
    expect((await rotate(api.app, sink.id, { overlap: 0 })).res.status).toBe(200);
    expect((await events(sink.id)).map((e) => [e.event, e.details.reason ?? null, e.actor_key_id])).toEqual([
      ['sink.key_rotated', null, writeKeyId],
      ['sink.key_retired', 'overlap_ended', null],
      ['sink.key_rotated', null, writeKeyId],
      ['sink.key_retired', 'no_overlap', writeKeyId],
    ]);
  });

  it('writes no key and no digest to the logs', async () => {
    const sink = await newSink();
    const { rotated } = await rotate(api.app, sink.id, { overlap: 60 });
    await sendWith(api.app, sink, rotated!.send_key);
    await rotate(api.app, sink.id, { overlap: 60 });
    const text = api.rawLogs.join('\n');
    for (const secret of [sink.send_key.slice(-43), rotated!.send_key.slice(-43), sendKeyDigest(rotated!.send_key).toString('hex'), sendKeyDigest(rotated!.send_key).toString('base64')]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/(tm|al)_send_/);
  });
});
