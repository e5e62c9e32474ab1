import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { SEND_BODY_LIMIT, SendResult, type CreatedSink } from '@tablemere/contracts';
import { query, queryOne } from '@tablemere/db';
import { BATCH_CONTENT_TYPE, batchKey, ObjectStore, SEGMENT_CONTENT_TYPE, SEGMENT_FORMAT } from '@tablemere/store';
import { storedBatch, storedBatches } from '../../../tests/support/intake.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropNamespace, stackS3, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { clearSinkObjects, createSink, createTable, newBatchId, otherApp, send } from './support/sinks.ts';
import { bodyDigest, LegacyDigests, legacySha256 } from '../src/domain/intake/body-digest.ts';

let api: TestApi;
let s3: S3Client;
let intake: ObjectStore;
let sink: CreatedSink;
let second: CreatedSink;
/** A sink with batch_ids: content. */
let shipped: CreatedSink;
const ns = `api_send_${suffix()}`;

beforeAll(async () => {
  api = await startTestApi();
  s3 = stackS3(api.env);
  intake = new ObjectStore(s3, api.env.TABLEMERE_INTAKE_BUCKET!);
  await createTable(api, ns, 'events');
  await createTable(api, ns, 'other');
  await createTable(api, ns, 'shipped');
  sink = await createSink(api.app, api.adminKey, { name: 'events_in', table: `${ns}.events` });
  second = await createSink(api.app, api.adminKey, { name: 'other_in', table: `${ns}.other` });
  shipped = await createSink(api.app, api.adminKey, { name: 'shipped_in', table: `${ns}.shipped`, batch_ids: 'content' });
});
afterAll(async () => {
  for (const s of [sink, second, shipped]) {
    if (!s) continue;
    await clearSinkObjects(intake, s.id);
  }
  s3?.destroy();
  await dropNamespace(api.env, ns);
  await api?.close();
});

const stored = (sinkId: string, batchId: string) => storedBatch(intake, sinkId, batchId);
const inIntake = async (sinkId: string, batchId: string) => (await storedBatches(intake, sinkId)).some((b) => b.id === batchId);

const ledgerRow = (sinkId: string, batchId: string) =>
  queryOne<{ state: string; bytes: string; rows: number; rejected: number }>(api.pool, 'SELECT state, bytes, rows, rejected FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [
    sinkId,
    batchId,
  ]);

describe('accepting a batch', () => {
  it('answers 202 and stores the objects byte for byte, one per line, in a segment that names the batch', async () => {
    const elements = [
      '{"x": 1, "who": "north"}',
      '{ "x" : 2 ,\t"who":"caf\\u00e9 \\"quoted\\" \\\\ \\/ \\b\\f\\n\\r\\t \\ud83d\\ude00"   }',
      '{"x":3,"who":"日本語 é 😀","big":123456789012345678901234567890,"f":-0.000e+00,"nested":{"a":[1,{"b":null}],"t":true}}',
      '{}',
    ];
    const body = `\r\n [ ${elements.join(' ,\n  ')}\t] \n`;
    const batchId = newBatchId();
    const res = await send(api.app, sink, body, { batchId });
    expect(res.status, res.text).toBe(202);
    const answer = SendResult.parse(res.body);
    const expected = Buffer.from(elements.join('\n'), 'utf8');
    expect(answer).toMatchObject({ accepted: 4, rejected: 0, reasons: [], batch_id: batchId, batch_id_from: 'key', bytes: expected.length, state: 'pending' });
    expect(answer.received_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const object = await stored(sink.id, batchId);
    expect(object.bytes.equals(expected)).toBe(true);
    expect(object.contentType).toBe(SEGMENT_CONTENT_TYPE);
    expect(object.metadata).toEqual({ format: SEGMENT_FORMAT, sink: sink.id, batches: '1' });
    expect({ received: object.received, lines: object.lines }).toEqual({ received: answer.received_at, lines: 4 });
    expect(await ledgerRow(sink.id, batchId)).toEqual({ state: 'pending', bytes: String(expected.length), rows: 4, rejected: 0 });
  });

  it('answers the example of the description: 2 accepted, 33 bytes', async () => {
    const res = await send(api.app, sink, '[{"x": 1, "who": "north"}, {"x": 2}]');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, rejected: 0, reasons: [], bytes: 33, state: 'pending' });
  });

  it('puts a pretty-printed object on one line (line breaks between tokens become spaces)', async () => {
    const batchId = newBatchId();
    const res = await send(api.app, sink, '[\n  {\n    "x": 5,\r\n    "who": "a\\nb"\n  }\n]', { batchId });
    expect(res.status).toBe(202);
    expect((await stored(sink.id, batchId)).bytes.toString()).toBe('{     "x": 5,      "who": "a\\nb"   }');
  });

  it('stores each large body as its own bytes when they follow each other (read into reused buffers)', async () => {
    const large = (rows: number, tag: string) => `[${Array.from({ length: rows }, (_, i) => `{"i":${i},"tag":"${tag}"}`).join(',')}]`;
    // A longer body first, then a shorter one into the same buffer, then a truncated (refused) one, then another.
    const bodies = [large(120_000, 'first'), large(70_000, 'second')];
    expect(bodies.map((b) => b.length > 1024 * 1024)).toEqual([true, true]);
    for (const [i, body] of bodies.entries()) {
      const batchId = newBatchId();
      const res = await send(api.app, sink, body, { batchId });
      expect(res.status, res.text).toBe(202);
      expect((await stored(sink.id, batchId)).bytes.equals(Buffer.from(body.slice(1, -1).replaceAll('},{', '}\n{')))).toBe(true);
      expect(res.body.accepted).toBe([120_000, 70_000][i]);
    }
    const cut = await send(api.app, sink, large(80_000, 'cut').slice(0, 1_500_000));
    expect(cut.status).toBe(400);
    const after = newBatchId();
    const body = large(60_000, 'after');
    expect((await send(api.app, sink, body, { batchId: after })).status).toBe(202);
    expect((await stored(sink.id, after)).bytes.toString()).toBe(body.slice(1, -1).replaceAll('},{', '}\n{'));
  });

  it('stores elements that are not objects too, line for line, and names them in reasons', async () => {
    const batchId = newBatchId();
    const res = await send(api.app, sink, '[1, {"x": 1}, "text", null, [{"x": 2}], {"x": 3}, true, 2.5]', { batchId });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      accepted: 2,
      rejected: 6,
      reasons: [0, 2, 3, 4, 6, 7].map((index) => ({ index, reason: 'not_an_object' })),
    });
    const object = await stored(sink.id, batchId);
    expect(object.bytes.toString()).toBe('1\n{"x": 1}\n"text"\nnull\n[{"x": 2}]\n{"x": 3}\ntrue\n2.5');
    expect(object.lines).toBe(8);
    expect(await ledgerRow(sink.id, batchId)).toMatchObject({ rows: 2, rejected: 6 });
  });

  it('accepts a batch with no object at all: a row is rejected by the roll, never a batch', async () => {
    const batchId = newBatchId();
    const res = await send(api.app, sink, '[1,"a"]', { batchId });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 0, rejected: 2, reasons: [{ index: 0, reason: 'not_an_object' }, { index: 1, reason: 'not_an_object' }] });
    expect((await stored(sink.id, batchId)).bytes.toString()).toBe('1\n"a"');
  });

  it('takes charset=utf-8 in the content type', async () => {
    const res = await send(api.app, sink, '[{"x": 1}]', { headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(res.status).toBe(202);
  });

  it('counts accepted batches in the month\'s usage, once per batch', async () => {
    const row = () =>
      queryOne<{ bytes: string; batches: string; rows_accepted: string; rows_rejected: string }>(
        api.pool,
        `SELECT bytes, batches, rows_accepted, rows_rejected FROM usage_ingest WHERE sink_id = $1 AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date`,
        [second.id],
      );
    const before = (await row()) ?? { bytes: '0', batches: '0', rows_accepted: '0', rows_rejected: '0' };
    const batchId = newBatchId();
    const body = '[{"x": 1}, 7, {"x": 2}]';
    expect((await send(api.app, second, body, { batchId })).status).toBe(202);
    expect((await send(api.app, second, body, { batchId })).status).toBe(200);
    const after = await row();
    expect(Number(after!.bytes) - Number(before.bytes)).toBe('{"x": 1}\n7\n{"x": 2}'.length);
    expect(Number(after!.batches) - Number(before.batches)).toBe(1);
    // Every element stored is accepted; rows are rejected (and counted) by the roll only.
    expect(Number(after!.rows_accepted) - Number(before.rows_accepted)).toBe(3);
    expect(Number(after!.rows_rejected) - Number(before.rows_rejected)).toBe(0);
  });
});

describe('replays', () => {
  it('answers a replay with the same body 200 with the first answer, and stores nothing again', async () => {
    const batchId = newBatchId();
    const first = await send(api.app, sink, '[{"x": 10}]', { batchId });
    expect(first.status).toBe(202);
    const again = await send(api.app, sink, '[{"x": 10}]', { batchId });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    const rows = await query(api.pool, 'SELECT 1 FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sink.id, batchId]);
    expect(rows).toHaveLength(1);
  });

  it('answers the first answer even after the batch was rolled', async () => {
    const batchId = newBatchId();
    const first = await send(api.app, sink, '[{"x": 11}]', { batchId });
    await query(api.pool, `UPDATE sink_batches SET state = 'committed', committed_at = now(), snapshot_id = '42', rejected_rows = 0 WHERE sink_id = $1 AND batch_id = $2`, [
      sink.id,
      batchId,
    ]);
    const again = await send(api.app, sink, '[{"x": 11}]', { batchId });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
  });

  it('refuses the same batch id with another body (409 batch_id_conflict) and keeps the first object', async () => {
    const batchId = newBatchId();
    expect((await send(api.app, sink, '[{"x": 12}]', { batchId })).status).toBe(202);
    const res = await send(api.app, sink, '[{"x": 13}]', { batchId });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'batch_id_conflict', batch_id: batchId });
    expect((await stored(sink.id, batchId)).bytes.toString()).toBe('{"x": 12}');
    // Even whitespace makes another body: the hash is of the bytes sent.
    expect((await send(api.app, sink, '[{"x": 12} ]', { batchId })).status).toBe(409);
  });

  it('keeps the XXH3-128 of the body as sent in the ledger', async () => {
    const batchId = newBatchId();
    expect((await send(api.app, sink, '[ {"x": 15} ]', { batchId })).status).toBe(202);
    const row = await queryOne<{ body_digest: Buffer }>(api.pool, 'SELECT body_digest FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sink.id, batchId]);
    expect(row!.body_digest.toString('hex')).toBe(bodyDigest(Buffer.from('[ {"x": 15} ]'), 'array').toString('hex'));
  });

  it('recognises a replay of a batch whose row holds the SHA-256 of before migration 0018, and a conflict with it', async () => {
    // As an API of before 0018 claimed them: the SHA-256 of the body (for NDJSON, after a tag).
    const rows = [
      { batchId: newBatchId(), body: '[{"x": 16}]', format: 'array' as const, contentType: 'application/json' },
      { batchId: newBatchId(), body: '{"x": 17}\n', format: 'ndjson' as const, contentType: 'application/x-ndjson' },
    ];
    for (const { batchId, body, format } of rows) {
      await query(
        api.pool,
        `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state, committed_at, snapshot_id, rejected_rows)
         VALUES ((SELECT day FROM sink_ledger_today), $1, $2, $3, 9, 1, 0, clock_timestamp() - interval '1 minute', 'committed', now(), '7', 0)`,
        [sink.id, batchId, legacySha256(format).update(body).digest()],
      );
    }
    for (const { batchId, body, contentType } of rows) {
      const headers = { 'content-type': contentType };
      // A process that last found no such row hashes sends one way only: it meets the row
      // unhashed, asks for the send again (503), and from then on hashes both ways.
      const other = await otherApp(api, { legacyDigests: new LegacyDigests(api.pool, false) });
      try {
        const first = await send(other.app, sink, body, { batchId, headers });
        expect(first.status, first.text).toBe(503);
        expect(first.body.error.code).toBe('intake_unavailable');
        expect(first.body.error.message).toContain('earlier version of the intake');
        const again = await send(other.app, sink, body, { batchId, headers });
        expect(again.status, again.text).toBe(200);
        expect(again.body).toMatchObject({ batch_id: batchId, accepted: 1, bytes: 9 });
        const conflict = await send(other.app, sink, body.replace('1', '2'), { batchId, headers });
        expect(conflict.status, conflict.text).toBe(409);
        expect(conflict.body.error.code).toBe('batch_id_conflict');
      } finally {
        await other.close();
      }
    }
  });

  it('lets the same batch id through on another sink', async () => {
    const batchId = newBatchId();
    expect((await send(api.app, sink, '[{"x": 1}]', { batchId })).status).toBe(202);
    expect((await send(api.app, second, '[{"x": 2}]', { batchId })).status).toBe(202);
  });

  it('takes many sends at once, and of racing sends of one id stores exactly one', async () => {
    // Concurrent claims are written in groups (one statement for many): each must still get its own answer.
    const ids = Array.from({ length: 40 }, () => newBatchId());
    const racing = newBatchId();
    const racingObjects = [...Array.from({ length: 6 }, () => '{"x": "same"}'), ...Array.from({ length: 3 }, (_, i) => `{"x": "other ${i}"}`)];
    const answers = await Promise.all([
      ...ids.map((batchId, i) => send(api.app, i % 2 ? sink : second, `[{"x": ${i}}]`, { batchId })),
      ...racingObjects.map((object) => send(api.app, sink, `[${object}]`, { batchId: racing })),
    ]);
    for (const [i, answer] of answers.slice(0, ids.length).entries()) {
      expect(answer.status, answer.text).toBe(202);
      expect(answer.body).toMatchObject({ batch_id: ids[i], accepted: 1 });
      expect((await stored(i % 2 ? sink.id : second.id, ids[i]!)).bytes.toString()).toBe(`{"x": ${i}}`);
    }
    const race = answers.slice(ids.length);
    const outcomes = race.map((a) => (a.status === 202 ? 'stored' : a.status === 200 ? 'replayed' : a.body.error.code));
    expect(outcomes.filter((o) => o === 'stored'), outcomes.join()).toHaveLength(1);
    expect(outcomes.every((o) => ['stored', 'replayed', 'batch_in_progress', 'batch_id_conflict'].includes(o)), outcomes.join()).toBe(true);
    const winner = racingObjects[race.findIndex((a) => a.status === 202)]!;
    expect((await stored(sink.id, racing)).bytes.toString()).toBe(winner);
    expect(await ledgerRow(sink.id, racing)).toMatchObject({ state: 'pending', rows: 1 });
  });

  const claimOf = (sinkId: string, batchId: string, body: string, age: string) =>
    query(
      api.pool,
      `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state)
       VALUES ((SELECT day FROM sink_ledger_today), $1, $2, $3, 0, 0, 0, clock_timestamp() - $4::interval, 'storing')`,
      [sinkId, batchId, bodyDigest(Buffer.from(body), 'array'), age],
    );

  it('answers 409 batch_in_progress while another request holds a fresh claim on the batch id', async () => {
    const batchId = newBatchId();
    await claimOf(sink.id, batchId, '[{"x": 14}]', '1 second');
    const res = await send(api.app, sink, '[{"x": 14}]', { batchId });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('batch_in_progress');
    expect(res.headers['retry-after']).toBe('5');
  });

  it('takes over a claim a crashed request left, storing the batch', async () => {
    const batchId = newBatchId();
    await claimOf(sink.id, batchId, '[{"x": 15}]', '10 minutes');
    const res = await send(api.app, sink, '[{"x": 15}]', { batchId });
    expect(res.status).toBe(202);
    expect((await stored(sink.id, batchId)).bytes.toString()).toBe('{"x": 15}');
    expect(await ledgerRow(sink.id, batchId)).toMatchObject({ state: 'pending', rows: 1 });
  });

  it('keeps the object a crashed request had already stored, with its received time', async () => {
    const batchId = newBatchId();
    await claimOf(sink.id, batchId, '[{"x": 16}]', '10 minutes');
    const earlier = '2026-01-02T03:04:05.678901Z';
    await intake.put(batchKey(sink.id, batchId), Buffer.from('{"x": 16}'), {
      contentType: BATCH_CONTENT_TYPE,
      metadata: { received: earlier, rows: '1', sink: sink.id },
    });
    const res = await send(api.app, sink, '[{"x": 16}]', { batchId });
    expect(res.status).toBe(202);
    expect(res.body.received_at).toBe(earlier);
    const row = await queryOne<{ received: string }>(
      api.pool,
      `SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS received FROM sink_batches WHERE sink_id = $1 AND batch_id = $2`,
      [sink.id, batchId],
    );
    expect(row!.received).toBe(earlier);
  });

  it('keeps a stray batch object of the one-object layout apart from a new send under its id', async () => {
    // An object the ledger does not know (an old write whose claim was released): the send
    // under that id is a new batch, stored in a segment; the stray is left for the roll, which
    // takes one copy of an id (roller tests).
    const batchId = newBatchId();
    await intake.put(batchKey(sink.id, batchId), Buffer.from('{"x": "earlier"}'), { contentType: BATCH_CONTENT_TYPE });
    const res = await send(api.app, sink, '[{"x": 17}]', { batchId });
    expect(res.status).toBe(202);
    const copies = (await storedBatches(intake, sink.id)).filter((b) => b.id === batchId);
    expect(copies.map((c) => [c.segment === undefined ? 'object' : 'segment', c.bytes.toString()]).sort()).toEqual([
      ['object', '{"x": "earlier"}'],
      ['segment', '{"x": 17}'],
    ]);
    expect(await ledgerRow(sink.id, batchId)).toMatchObject({ state: 'pending' });
  });
});

describe('batch ids by content (a batch_ids: content sink)', () => {
  const batchCount = async (sinkId: string) => (await query(api.pool, 'SELECT 1 FROM sink_batches WHERE sink_id = $1', [sinkId])).length;

  it('names a send without Idempotency-Key by its body: a resend, compressed or not, is a replay; another body is a new batch', async () => {
    const before = await batchCount(shipped.id);
    const body = `[{"x": 1, "run": "${suffix()}"}, {"x": 2}]`;
    const first = await send(api.app, shipped, body, { batchId: undefined });
    expect(first.status, first.text).toBe(202);
    const answer = SendResult.parse(first.body);
    expect(answer).toMatchObject({ accepted: 2, batch_id: `content-${bodyDigest(Buffer.from(body), 'array').toString('hex')}`, batch_id_from: 'content' });
    expect(answer.batch_id).toMatch(/^content-[0-9a-f]{32}$/);
    expect((await stored(shipped.id, answer.batch_id)).bytes.toString()).toBe(body.slice(1, -1).replace('}, {', '}\n{'));

    for (const again of [
      await send(api.app, shipped, body, { batchId: undefined }),
      await send(api.app, shipped, gzipSync(body), { batchId: undefined, headers: { 'content-encoding': 'gzip' } }),
    ]) {
      expect(again.status, again.text).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    }
    const other = await send(api.app, shipped, `[{"x": 3, "run": "${suffix()}"}]`, { batchId: undefined });
    expect(other.status, other.text).toBe(202);
    expect(other.body.batch_id_from).toBe('content');
    expect(other.body.batch_id).not.toBe(answer.batch_id);
    expect(await batchCount(shipped.id)).toBe(before + 2);
  });

  it('names a send with a key by its key, replays included; a key sink still needs one', async () => {
    const batchId = newBatchId();
    const keyed = await send(api.app, shipped, '[{"x": 4}]', { batchId });
    expect(keyed.status, keyed.text).toBe(202);
    expect(keyed.body).toMatchObject({ batch_id: batchId, batch_id_from: 'key' });
    const again = await send(api.app, shipped, '[{"x": 4}]', { batchId });
    expect(again.status).toBe(200);
    expect(again.text).toBe(keyed.text);
    const keyless = await send(api.app, sink, '[{"x": 4}]', { batchId: undefined });
    expect({ status: keyless.status, code: keyless.body.error.code }).toEqual({ status: 400, code: 'idempotency_key_missing' });
    expect(keyless.body.error.message).toContain('batch_ids to content');
  });
});

describe('refused requests', () => {
  const errorOf = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.error?.code });

  it('needs an Idempotency-Key of 1-128 allowed characters', async () => {
    expect(errorOf(await send(api.app, sink, '[{"x": 1}]', { batchId: undefined }))).toEqual({ status: 400, code: 'idempotency_key_missing' });
    expect(errorOf(await send(api.app, sink, '[{"x": 1}]', { batchId: '' }))).toEqual({ status: 400, code: 'idempotency_key_missing' });
    for (const bad of ['a'.repeat(129), 'has space', 'slash/y', 'ünï', 'a*b', 'q?x', 'a%2Fb']) {
      expect(errorOf(await send(api.app, sink, '[{"x": 1}]', { batchId: bad })), bad).toEqual({ status: 400, code: 'idempotency_key_invalid' });
    }
    for (const good of ['a'.repeat(128), `A-Za.z0_9:-${suffix()}`, '2026-09-21T12:00:00Z-0001', '.']) {
      const res = await send(api.app, sink, '[{"x": 1}]', { batchId: good === '.' ? `.${suffix()}` : good });
      expect(res.status, good).toBe(202);
    }
  });

  it('needs Content-Type application/json, application/x-ndjson or application/jsonl (415)', async () => {
    for (const type of ['text/plain', 'application/ndjson', 'application/json; charset=latin1', 'application/x-ndjson; charset=latin1', 'application/jsonx']) {
      expect(errorOf(await send(api.app, sink, '[{"x": 1}]', { headers: { 'content-type': type } })), type).toEqual({ status: 415, code: 'unsupported_media_type' });
    }
    const res = await api.app.inject({
      method: 'POST',
      url: `/v1/sinks/${sink.id}`,
      headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': newBatchId() },
      payload: Buffer.from('[{"x": 1}]'),
    });
    expect(res.statusCode).toBe(415);
  });

  it('answers invalid_json, not_an_array and empty_batch (an empty array) for bodies that are no batch, storing nothing', async () => {
    const cases: Array<[string, string]> = [
      ['', 'invalid_json'],
      ['   ', 'invalid_json'],
      ['[{"x": 1},]', 'invalid_json'],
      ['[{"x": 1}', 'invalid_json'],
      ['{"x": 1} garbage', 'invalid_json'],
      ["[{'x': 1}]", 'invalid_json'],
      ['{"x": 1}', 'not_an_array'],
      ['"text"', 'not_an_array'],
      ['[]', 'empty_batch'],
      [' [ ] ', 'empty_batch'],
    ];
    for (const [body, code] of cases) {
      const batchId = newBatchId();
      const res = await send(api.app, sink, body, { batchId });
      expect(errorOf(res), JSON.stringify(body)).toEqual({ status: 400, code });
      expect(await ledgerRow(sink.id, batchId)).toBeUndefined();
    }
    const bad = await send(api.app, sink, '[{"x": 1},  ]');
    expect(bad.body.error.offset).toBe(12);
  });

  it('refuses bytes that are not UTF-8', async () => {
    const body = Buffer.concat([Buffer.from('[{"x": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]')]);
    expect(errorOf(await send(api.app, sink, body))).toEqual({ status: 400, code: 'invalid_json' });
  });

  /** A JSON array of objects of exactly `size` bytes. */
  function bodyOfSize(size: number): Buffer {
    const row = '{"x": 1, "who": "' + 'w'.repeat(1000) + '"}';
    const count = Math.floor((size - 2) / (row.length + 1));
    const rows = Array.from({ length: count }, () => row).join(',');
    const filler = size - 2 - rows.length - 1;
    return Buffer.from(`[${rows},{"x": 2, "who": "${'p'.repeat(filler - '{"x": 2, "who": ""}'.length)}"}]`);
  }

  it('takes a body of exactly 16 MiB and refuses 16 MiB + 1 byte (413), also without a Content-Length', async () => {
    const exact = bodyOfSize(SEND_BODY_LIMIT);
    expect(exact.length).toBe(SEND_BODY_LIMIT);
    const ok = await send(api.app, sink, exact);
    expect(ok.status, ok.text).toBe(202);
    expect(ok.body.accepted).toBeGreaterThan(16_000);

    const over = bodyOfSize(SEND_BODY_LIMIT + 1);
    expect(over.length).toBe(SEND_BODY_LIMIT + 1);
    const batchId = newBatchId();
    const res = await send(api.app, sink, over, { batchId });
    expect(errorOf(res)).toEqual({ status: 413, code: 'body_too_large' });
    expect(res.body.error.limit_bytes).toBe(SEND_BODY_LIMIT);

    // Streamed with no Content-Length (chunked): cut off as it passes the limit.
    const chunked = await api.app.inject({
      method: 'POST',
      url: `/v1/sinks/${sink.id}`,
      headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': batchId, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      payload: Readable.from((function* () {
        for (let at = 0; at < over.length; at += 1024 * 1024) yield over.subarray(at, at + 1024 * 1024);
      })()),
    });
    expect(chunked.statusCode).toBe(413);
    expect(chunked.headers['content-length']).toBeDefined();
    expect(await ledgerRow(sink.id, batchId)).toBeUndefined();
    expect(await inIntake(sink.id, batchId)).toBe(false);
  });

  it('caps the backlog: 429 backlog_full with Retry-After once the cap is reached, replays still answered', async () => {
    const capped = await otherApp(api, { sinkBacklog: { maxPendingBatches: 1_000_000, maxPendingBytes: 1 } });
    const byBatches = await otherApp(api, { sinkBacklog: { maxPendingBatches: 2, maxPendingBytes: 1 << 30 } });
    try {
      const options = { name: `capped_${suffix()}`, table: `${ns}.capped`, batch_ids: 'content' };
      const fresh = await createSink(api.app, api.adminKey, options).catch(async () => {
        await createTable(api, ns, 'capped');
        return createSink(api.app, api.adminKey, options);
      });
      const first = newBatchId();
      expect((await send(byBatches.app, fresh, '[{"x": 1}]', { batchId: first })).status).toBe(202);
      expect((await send(byBatches.app, fresh, '[{"x": 2}]', { batchId: undefined })).status).toBe(202);
      const full = await send(byBatches.app, fresh, '[{"x": 3}]');
      expect(errorOf(full)).toEqual({ status: 429, code: 'backlog_full' });
      // A sink that has never drained: up to one roller tick (backpressure.test.ts has the rest).
      expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(full.body.error).toMatchObject({ max_pending_batches: 2, pending_batches: 2, retry_after: Number(full.headers['retry-after']), drain_batches_per_second: null });
      expect((await send(byBatches.app, fresh, '[{"x": 1}]', { batchId: first })).status).toBe(200);
      // A send named by its content has no id before its body is read: refused, even when it would be a replay.
      expect(errorOf(await send(byBatches.app, fresh, '[{"x": 2}]', { batchId: undefined }))).toEqual({ status: 429, code: 'backlog_full' });
      // Any byte waiting fills a 1-byte cap.
      expect(errorOf(await send(capped.app, fresh, '[{"x": 4}]'))).toEqual({ status: 429, code: 'backlog_full' });
    } finally {
      await capped.close();
      await byBatches.close();
    }
  });
});

describe('send keys', () => {
  it('opens only its own live sink; every other credential is refused', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['no Authorization', {}, 401, 'unauthorized'],
      ['an API key', { authorization: `Bearer ${api.adminKey}` }, 403, 'send_only'],
      ['any other token', { authorization: 'Bearer not-a-key-at-all' }, 403, 'send_only'],
      ['Basic auth', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 401, 'unauthorized'],
      ["another sink's key", { authorization: `Bearer ${second.send_key}` }, 401, 'unauthorized'],
      ['a wrong secret', { authorization: `Bearer ${sink.send_key.slice(0, -1)}${sink.send_key.endsWith('A') ? 'B' : 'A'}` }, 401, 'unauthorized'],
      ['a made-up key for this sink', { authorization: `Bearer tm_send_${sink.id.slice(4)}_${'A'.repeat(43)}` }, 401, 'unauthorized'],
      ['a made-up key for this sink, deprecated prefix', { authorization: `Bearer al_send_${sink.id.slice(4)}_${'A'.repeat(43)}` }, 401, 'unauthorized'],
    ];
    for (const [what, headers, status, code] of cases) {
      const batchId = newBatchId();
      const res = await api.app.inject({
        method: 'POST',
        url: `/v1/sinks/${sink.id}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': batchId, ...headers },
        payload: '[{"x": 1}]',
      });
      expect({ what, status: res.statusCode, code: (res.json() as any).error.code }).toEqual({ what, status, code });
      expect(await ledgerRow(sink.id, batchId)).toBeUndefined();
    }
    // A send key on a path that is not its sink (a name, another id) opens nothing either.
    const byName = await send(api.app, { id: 'events_in', send_key: sink.send_key }, '[{"x": 1}]');
    expect(byName.status).toBe(401);
  });

  it('is refused everywhere else with 403 send_only', async () => {
    const routes: Array<['GET' | 'POST' | 'DELETE', string, unknown?]> = [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys', { name: 'k', level: 'read' }],
      ['DELETE', '/v1/keys/000000000000'],
      ['GET', '/v1/warehouses'],
      ['POST', '/v1/warehouses', { name: 'w' }],
      ['GET', '/v1/warehouses/garden/tables'],
      ['GET', `/v1/warehouses/garden/tables/${ns}.events`],
      ['POST', '/v1/warehouses/garden/tables', { namespace: ns, name: 'nope', columns: [{ name: 'x', type: 'long' }] }],
      ['POST', '/v1/warehouses/garden/measure'],
      ['GET', '/v1/connection'],
      ['GET', '/v1/usage'],
      ['GET', '/v1/sinks'],
      ['POST', '/v1/sinks', { name: 'n', table: `${ns}.events`, warehouse: 'garden' }],
      ['GET', `/v1/sinks/${sink.id}`],
      ['GET', `/v1/sinks/${sink.id}/batches/x`],
      ['DELETE', `/v1/sinks/${sink.id}`],
    ];
    for (const [method, url, body] of routes) {
      const res = await call(api.app, method, url, { key: sink.send_key, body });
      expect({ method, url, status: res.status, code: res.body?.error?.code }).toEqual({ method, url, status: 403, code: 'send_only' });
    }
    // The sink survived the DELETE attempt.
    expect((await send(api.app, sink, '[{"x": 1}]')).status).toBe(202);
  });

  it("stops working the moment its sink is deleted (401)", async () => {
    await createTable(api, ns, 'doomed');
    const doomed = await createSink(api.app, api.adminKey, { name: `doomed_${suffix()}`, table: `${ns}.doomed` });
    expect((await send(api.app, doomed, '[{"x": 1}]')).status).toBe(202);
    expect((await call(api.app, 'DELETE', `/v1/sinks/${doomed.id}`, { key: api.adminKey })).status).toBe(202);
    const res = await send(api.app, doomed, '[{"x": 1}]');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('lets nothing in once another API process deleted the sink, even with the key still cached here', async () => {
    await createTable(api, ns, 'elsewhere');
    const sink = await createSink(api.app, api.adminKey, { name: `elsewhere_${suffix()}`, table: `${ns}.elsewhere` });
    expect((await send(api.app, sink, '[{"x": 1}]')).status).toBe(202);
    const other = await otherApp(api, {});
    try {
      expect((await call(other.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey })).status).toBe(202);
    } finally {
      await other.close();
    }
    const batchId = newBatchId();
    const res = await send(api.app, sink, '[{"x": 2}]', { batchId });
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
    expect(await ledgerRow(sink.id, batchId)).toBeUndefined();
    expect(await inIntake(sink.id, batchId)).toBe(false);
  });

  it('never writes a send key or an Authorization header to the logs', async () => {
    await send(api.app, sink, '[{"x": 1}]');
    await send(api.app, sink, 'not json');
    await send(api.app, second, '[{"x": 1}]', { key: sink.send_key });
    await call(api.app, 'GET', '/v1/sinks', { key: sink.send_key });
    const created = await call(api.app, 'GET', '/v1/sinks', { key: api.adminKey });
    expect(created.status).toBe(200);
    const text = api.rawLogs.join('\n');
    expect(api.rawLogs.length).toBeGreaterThan(10);
    // The secret part alone is the last 43 characters (base64url, which may itself hold `_`).
    for (const secret of [sink.send_key, second.send_key, sink.send_key.slice(-43), api.adminKey]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/(tm|al)_send_/);
    expect(text).not.toMatch(/bearer /i);
  });

  it('logs a refused send once, with its code, and an accepted one not at all (the metrics count it)', async () => {
    const good = await send(api.app, sink, '[{"x": 1}]');
    expect(good.status).toBe(202);
    const bad = await send(api.app, sink, '[{"x": 1}');
    expect(bad.status).toBe(400);
    const linesOf = (answer: { headers: Record<string, unknown> }) => api.logs.filter((line) => line.request_id === answer.headers['x-request-id']);
    expect(linesOf(good)).toEqual([]);
    expect(linesOf(bad).map((line) => [line.msg, line.code])).toEqual([['request refused', 'invalid_json']]);
    // Other routes keep their access lines.
    const listed = await call(api.app, 'GET', '/v1/sinks', { key: api.adminKey });
    expect(linesOf(listed).map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
  });
});
