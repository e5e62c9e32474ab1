import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PendingRows, RejectsPage } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import type { RowReject } from '@tablemere/iceberg';
import { BATCH_CONTENT_TYPE, ObjectStore, rejectsKey, rejectsPrefix } from '@tablemere/store';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectLine } from '../../roller/src/roll/rejects.ts';
import { buildApp } from '../src/app.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { call, dropNamespace, startTestApi, stackS3, suffix, type Answer, type TestApi } from './support/harness.ts';
import { freePort } from '../../../tests/support/ports.ts';
import { storedBatches } from '../../../tests/support/intake.ts';

let api: TestApi;
let s3: S3Client;
const ns = `api_peek_${suffix()}`;
let sink: { id: string; send_key: string };
let other: { id: string; send_key: string };

const get = (url: string, key = api.adminKey) => call(api.app, 'GET', url, { key });

async function send(target: { id: string; send_key: string }, batchId: string, body: string): Promise<Answer> {
  const answer = await call(api.app, 'POST', `/v1/sinks/${target.id}`, {
    key: target.send_key,
    payload: body,
    headers: { 'content-type': 'application/json', 'idempotency-key': batchId },
  });
  expect(answer.status, answer.text).toBe(202);
  return answer;
}

async function createSink(name: string, table: string): Promise<{ id: string; send_key: string }> {
  const table_ = await call(api.app, 'POST', '/v1/warehouses/garden/tables', {
    key: api.adminKey,
    body: { namespace: ns, name: table, columns: [{ name: 'x', type: 'long', required: true }] },
  });
  expect(table_.status, table_.text).toBe(201);
  const created = await call(api.app, 'POST', '/v1/sinks', { key: api.adminKey, body: { name, table: `${ns}.${table}`, warehouse: 'garden' } });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; send_key: string };
}

/** A rejects file in the roller's own line format. */
async function putRejects(sinkId: string, batchId: string, rows: string[]): Promise<void> {
  const reject: RowReject = { reason: 'type_mismatch', field: 'x', expected: 'long', got: '"seven"', message: 'x: expected long, got "seven"' };
  const body = `${rows.map((row) => rejectLine(batchId, row, reject)).join('\n')}\n`;
  await s3.send(new PutObjectCommand({ Bucket: api.env.TABLEMERE_INTAKE_BUCKET!, Key: rejectsKey(sinkId, batchId), Body: body, ContentType: BATCH_CONTENT_TYPE }));
}

beforeAll(async () => {
  api = await startTestApi();
  s3 = stackS3(api.env);
  sink = await createSink('peek', 'events');
  other = await createSink('other', 'others');
  await send(sink, 'b1', '[{"x":1},{"x":2},{"x":3}]');
  await send(sink, 'b2', '[{"x":4,"big":12345678901234567890}, {"x": 5}]');
  await send(sink, 'b3', '[{"x":6}]');
  await putRejects(sink.id, 'r1', ['{"x":"a1"}', '{"x":"a2"}']);
  await putRejects(sink.id, 'r2', ['{"x":12345678901234567890}']);
  await putRejects(sink.id, 'r3', ['{"x":"c1"}', '{"x":"c2"}', '{"x":"c3"}']);
});
afterAll(async () => {
  s3?.destroy();
  await dropNamespace(api.env, ns);
  await api?.close();
});

describe('GET /v1/sinks/{sink}/pending', () => {
  it('answers the newest rows, oldest of them first, bytes as sent, without consuming them', async () => {
    const answer = await get(`/v1/sinks/peek/pending?limit=4`);
    expect(answer.status, answer.text).toBe(200);
    const pending = PendingRows.parse(answer.body);
    expect(pending).toMatchObject({ sink_id: sink.id, batches_waiting: 3, rows_waiting: 6, truncated: true });
    expect(pending.rows.map((r) => [r.batch_id, r.line])).toEqual([
      ['b1', 3],
      ['b2', 1],
      ['b2', 2],
      ['b3', 1],
    ]);
    // Every digit of the 64-bit-plus integer, and the row's own spacing, as sent.
    expect(answer.text).toContain('"row":{"x":4,"big":12345678901234567890}');
    expect(answer.text).toContain('"row":{"x": 5}');

    // Nothing moved: the same answer again, the objects still there, the ledger still pending.
    expect((await get(`/v1/sinks/${sink.id}/pending?limit=4`)).text).toBe(answer.text);
    expect((await storedBatches(new ObjectStore(s3, api.env.TABLEMERE_INTAKE_BUCKET!), sink.id)).map((b) => b.id).sort()).toEqual(['b1', 'b2', 'b3']);
    const states = await query<{ state: string }>(api.pool, `SELECT state FROM sink_batches WHERE sink_id = $1`, [sink.id]);
    expect(states.map((s) => s.state)).toEqual(['pending', 'pending', 'pending']);
  });

  it('answers every row when the limit allows, 20 by default, nothing for a sink with nothing waiting', async () => {
    const all = PendingRows.parse((await get(`/v1/sinks/peek/pending?limit=1000`)).body);
    expect(all.rows.map((r) => (r.row as { x: number }).x)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(all.truncated).toBe(false);
    expect(PendingRows.parse((await get(`/v1/sinks/peek/pending`)).body).rows).toHaveLength(6);
    expect(PendingRows.parse((await get(`/v1/sinks/other/pending`)).body)).toEqual({
      sink_id: other.id,
      batches_waiting: 0,
      rows_waiting: 0,
      rows: [],
      truncated: false,
    });
  });

  it('refuses limits out of range', async () => {
    for (const limit of ['0', '1001', 'x']) expect((await get(`/v1/sinks/peek/pending?limit=${limit}`)).body.error.code).toBe('invalid_request');
  });
});

describe('GET /v1/sinks/{sink}/rejects', () => {
  const page = async (url: string) => {
    const answer = await get(url);
    expect(answer.status, answer.text).toBe(200);
    return { page: RejectsPage.parse(answer.body), text: answer.text };
  };

  it('pages through the rejects files in batch id order, rows in order, with a cursor', async () => {
    const seen: string[] = [];
    let url = `/v1/sinks/peek/rejects?limit=2`;
    const pages: number[] = [];
    for (;;) {
      const { page: p } = await page(url);
      pages.push(p.rejects.length);
      seen.push(...p.rejects.map((r) => `${r.batch_id}:${r.line}`));
      if (p.next_cursor === null) break;
      url = `/v1/sinks/peek/rejects?limit=2&cursor=${encodeURIComponent(p.next_cursor)}`;
    }
    expect(seen).toEqual(['r1:1', 'r1:2', 'r2:1', 'r3:1', 'r3:2', 'r3:3']);
    expect(pages).toEqual([2, 2, 2]);
  });

  it('answers each line as the roller wrote it, with where it sits and when it was written', async () => {
    const { page: p, text } = await page(`/v1/sinks/${sink.id}/rejects`);
    expect(p.prefix).toBe(`s3://${api.env.TABLEMERE_INTAKE_BUCKET}/${rejectsPrefix(sink.id)}`);
    expect(p.rejects[2]).toMatchObject({ batch_id: 'r2', line: 1, reason: 'type_mismatch', field: 'x', expected: 'long', got: '"seven"' });
    expect(Date.now() - Date.parse(p.rejects[2]!.written_at)).toBeLessThan(10 * 60_000);
    expect(text).toContain('"row":{"x":12345678901234567890}');
    expect(p.next_cursor).toBeNull();
  });

  it('keeps only files written since a time', async () => {
    expect((await page(`/v1/sinks/peek/rejects?since=2099-01-01T00:00:00Z`)).page).toMatchObject({ rejects: [], next_cursor: null });
    expect((await page(`/v1/sinks/peek/rejects?since=2000-01-01T00:00:00Z`)).page.rejects).toHaveLength(6);
  });

  it('answers an empty page for a sink without rejects', async () => {
    expect((await page(`/v1/sinks/other/rejects`)).page).toMatchObject({ sink_id: other.id, rejects: [], next_cursor: null });
  });

  it("refuses a cursor that is not one, or is another sink's", async () => {
    const first = (await page(`/v1/sinks/peek/rejects?limit=1`)).page.next_cursor!;
    for (const cursor of ['nope', Buffer.from('["x",1]').toString('base64url')]) {
      const answer = await get(`/v1/sinks/peek/rejects?cursor=${cursor}`);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_request']);
    }
    const foreign = await get(`/v1/sinks/other/rejects?cursor=${first}`);
    expect([foreign.status, foreign.body.error.message]).toEqual([400, 'query.cursor: not a cursor of this sink; pass next_cursor from the previous page as it was given']);
  });
});

describe('who may read', () => {
  it('a send key gets 403 send_only on both routes, even its own sink; no key 401; an unknown sink 404', async () => {
    for (const route of ['pending', 'rejects']) {
      const bySendKey = await get(`/v1/sinks/${sink.id}/${route}`, sink.send_key);
      expect([bySendKey.status, bySendKey.body.error.code]).toEqual([403, 'send_only']);
      const anonymous = await call(api.app, 'GET', `/v1/sinks/${sink.id}/${route}`);
      expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'unauthorized']);
      const unknown = await get(`/v1/sinks/nowhere/${route}`);
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'sink_not_found']);
    }
  });

  it('a read-level key may read', async () => {
    const created = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'reader', level: 'read' } });
    expect(created.status, created.text).toBe(201);
    expect((await get(`/v1/sinks/peek/pending`, created.body.key)).status).toBe(200);
    expect((await get(`/v1/sinks/peek/rejects`, created.body.key)).status).toBe(200);
  });
});


describe('when the store cannot be read', () => {
  let down: FastifyInstance;
  beforeAll(async () => {
    // The same database, and a store nobody answers for.
    const deadStore = new S3Client({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      region: 'us-east-1',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    down = buildApp({
      logger: api.app.log,
      pool: api.pool,
      s3: deadStore,
      secrets: SecretBox.fromBase64(api.secretKey),
      intakeBucket: api.env.TABLEMERE_INTAKE_BUCKET!,
      publicUrl: 'http://api.test:8787/',
    });
    await down.ready();
  });
  afterAll(async () => {
    await down?.close();
  });

  it('answers 503 intake_unavailable with Retry-After', async () => {
    for (const route of ['pending', 'rejects']) {
      const answer = await call(down, 'GET', `/v1/sinks/peek/${route}`, { key: api.adminKey });
      expect([answer.status, answer.body.error.code, answer.headers['retry-after']]).toEqual([503, 'intake_unavailable', '5']);
    }
  });
});
