import { randomBytes } from 'node:crypto';
import { deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { SEND_BODY_LIMIT, SendResult, type CreatedSink } from '@tablemere/contracts';
import { createDatabase, dropDatabase, migrate } from '@tablemere/db';
import { ObjectStore } from '@tablemere/store';
import { storedBatch } from '../../../tests/support/intake.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api as call, rssBytes, startBenchApi } from '../../../scripts/bench/api-process.ts';
import { stackEnv, stackWarehouse } from '../../../tests/support/stack.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { dropNamespace, stackS3, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { clearSinkObjects, createSink, createTable, newBatchId, otherApp, send } from './support/sinks.ts';

/** The send route's other bodies (issue 24): NDJSON, and gzip, deflate and zstd, as the API answers them. */

let api: TestApi;
let intake: ObjectStore;
let sink: CreatedSink;
const ns = `api_bodies_${suffix()}`;
const MIB = 1024 * 1024;

beforeAll(async () => {
  api = await startTestApi();
  intake = new ObjectStore(stackS3(api.env), api.env.TABLEMERE_INTAKE_BUCKET!);
  await createTable(api, ns, 'events');
  sink = await createSink(api.app, api.adminKey, { name: 'bodies_in', table: `${ns}.events` });
});
afterAll(async () => {
  if (sink) await clearSinkObjects(intake, sink.id);
  await dropNamespace(api.env, ns);
  await api?.close();
});

async function stored(batchId: string): Promise<string> {
  return (await storedBatch(intake, sink.id, batchId)).bytes.toString('utf8');
}

const NDJSON = { 'content-type': 'application/x-ndjson' };
const errorOf = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.error?.code });
const ELEMENTS = ['{"x": 1, "who": "north"}', '{"x":2,"who":"日本"}', '{"x": 9007199254740993}'];

/** `count` copies of 1 MiB of zeros in one gzip body of that many members: a bomb of count MiB made in milliseconds. */
function zerosBomb(count: number): Buffer {
  const member = gzipSync(Buffer.alloc(MIB), { level: 9 });
  return Buffer.concat(Array.from({ length: count }, () => member));
}

describe('NDJSON bodies', () => {
  it('stores the lines exactly as an array of the same elements is stored, under either media type', async () => {
    const array = await send(api.app, sink, `[${ELEMENTS.join(', ')}]`);
    const lines = await send(api.app, sink, `\n${ELEMENTS.join('\r\n')}\n\n`, { headers: NDJSON });
    const jsonl = await send(api.app, sink, ELEMENTS.join('\n'), { headers: { 'content-type': 'application/jsonl; charset=utf-8' } });
    for (const res of [array, lines, jsonl]) expect(res.status, res.text).toBe(202);
    const batches = [array, lines, jsonl].map((res) => SendResult.parse(res.body));
    for (const batch of batches) expect(await stored(batch.batch_id)).toBe(ELEMENTS.join('\n'));
    const bytes = Buffer.byteLength(ELEMENTS.join('\n'));
    expect(batches.map((b) => [b.accepted, b.bytes])).toEqual([[3, bytes], [3, bytes], [3, bytes]]);
  });

  it('names the line of an element that is not an object, and of a line that is not JSON', async () => {
    const res = await send(api.app, sink, '{"x":1}\n\n"text"\n{"x":2}\n[1]\n', { headers: NDJSON });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, rejected: 2, reasons: [{ index: 1, line: 3, reason: 'not_an_object' }, { index: 3, line: 5, reason: 'not_an_object' }] });
    const bad = await send(api.app, sink, '{"x":1}\n{"x":2}\n{"x":3,}\n', { headers: NDJSON });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_json', line: 3, message: expect.stringMatching(/^Line 3 /) });
    expect(errorOf(await send(api.app, sink, '\n \n', { headers: NDJSON }))).toEqual({ status: 400, code: 'empty_batch' });
  });

  it('is never the same batch as an array under one Idempotency-Key (409); a compressed body is the same batch as its bytes uncompressed', async () => {
    const batchId = newBatchId();
    expect((await send(api.app, sink, ELEMENTS.join('\n'), { batchId, headers: NDJSON })).status).toBe(202);
    expect(errorOf(await send(api.app, sink, `[${ELEMENTS.join(',')}]`, { batchId }))).toEqual({ status: 409, code: 'batch_id_conflict' });
    const replay = await send(api.app, sink, gzipSync(ELEMENTS.join('\n')), { batchId, headers: { ...NDJSON, 'content-encoding': 'gzip' } });
    expect(replay.status).toBe(200);
    // The same bytes under either type: one object as an array, one row that is no object as NDJSON.
    const other = newBatchId();
    expect((await send(api.app, sink, '[{"x":1}]', { batchId: other })).status).toBe(202);
    expect(errorOf(await send(api.app, sink, '[{"x":1}]', { batchId: other, headers: NDJSON }))).toEqual({ status: 409, code: 'batch_id_conflict' });
  });
});

describe('compressed bodies', () => {
  it('takes gzip, deflate, zstd and identity, storing the decoded rows', async () => {
    const body = `[${ELEMENTS.join(',')}]`;
    for (const [encoding, bytes] of [['gzip', gzipSync(body)], ['x-gzip', gzipSync(body)], ['deflate', deflateSync(body)], ['zstd', zstdCompressSync(body)], ['identity', Buffer.from(body)], ['GZIP ', gzipSync(body)]] as const) {
      const res = await send(api.app, sink, bytes, { headers: { 'content-encoding': encoding } });
      expect(res.status, `${encoding}: ${res.text}`).toBe(202);
      expect(await stored(res.body.batch_id), encoding).toBe(ELEMENTS.join('\n'));
    }
  });

  it('refuses an unknown coding and a coding inside another with 415 naming the supported ones, before reading the body', async () => {
    for (const encoding of ['br', 'compress', 'gzip, gzip', 'gzip, zstd']) {
      const res = await send(api.app, sink, '[{"x":1}]', { headers: { 'content-encoding': encoding } });
      expect(errorOf(res), encoding).toEqual({ status: 415, code: 'unsupported_encoding' });
      expect(res.body.error.supported).toEqual(['gzip', 'deflate', 'zstd', 'identity']);
    }
  });

  it('answers a corrupt or cut-short stream 400 invalid_compressed_body', async () => {
    const gz = gzipSync('[{"x":1},{"x":2}]');
    const zst = zstdCompressSync('[{"x":1},{"x":2}]');
    for (const [encoding, bytes] of [['gzip', gz.subarray(0, gz.length - 6)], ['zstd', zst.subarray(0, zst.length - 3)], ['deflate', gz], ['gzip', Buffer.from('[{"x":1}]')], ['zstd', Buffer.alloc(0)]] as const) {
      const res = await send(api.app, sink, bytes, { headers: { 'content-encoding': encoding } });
      expect(errorOf(res), `${encoding} ${bytes.length}`).toEqual({ status: 400, code: 'invalid_compressed_body' });
      expect(res.body.error.message).toMatch(new RegExp(`not a valid ${encoding} stream`));
    }
  });

  it('applies the 16 MiB limit to the decoded body: exactly 16 MiB is taken, one byte more is 413', async () => {
    const exact = Buffer.alloc(SEND_BODY_LIMIT, 0x20);
    exact.write('[{"x":1}]', 0);
    const taken = await send(api.app, sink, zstdCompressSync(exact), { headers: { 'content-encoding': 'zstd' } });
    expect(taken.status, taken.text).toBe(202);
    const over = Buffer.concat([exact, Buffer.from(' ')]);
    expect(errorOf(await send(api.app, sink, gzipSync(over), { headers: { 'content-encoding': 'gzip' } }))).toEqual({ status: 413, code: 'body_too_large' });
  });
});

describe('compressed bodies in flight', () => {
  it('count their Content-Length, then their decoded bytes as they grow: many small ones at once pass, a large one past the cap beside another is 503', async () => {
    const capped = await otherApp(api, { sendInFlight: { processBytes: 64 * MIB, sinkBytes: 4 * MIB } });
    try {
      const small = gzipSync(`[${ELEMENTS.join(',')}]`);
      // 40 small compressed sends at once: far past 4 MiB if each counted as the whole limit.
      const answers = await Promise.all(Array.from({ length: 40 }, () => send(capped.app, sink, small, { headers: { 'content-encoding': 'gzip' } })));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
      // Alone, a body that decodes past the cap is let in, as an uncompressed one is.
      const large = Buffer.alloc(8 * MIB, 0x20);
      large.write('[{"x":1}]', 0);
      const alone = await send(capped.app, sink, gzipSync(large), { headers: { 'content-encoding': 'gzip' } });
      expect(alone.status, alone.text).toBe(202);
    } finally {
      await capped.close();
    }
  });
});

describe('a decompression bomb against the API as its own process', () => {
  it('is refused with 413 in under a second, the RSS within 64 MiB of its start', async () => {
    const env = stackEnv();
    const url = new URL(env.DATABASE_URL!);
    url.pathname = `/api_bomb_${suffix()}`;
    const databaseUrl = url.toString();
    const secretKey = randomBytes(32).toString('base64');
    await createDatabase(databaseUrl);
    await migrate(databaseUrl);
    const { adminKey } = await bootstrap(databaseUrl, { secretKey, warehouse: stackWarehouse(env) });
    const server = await startBenchApi(`bomb-${suffix()}`, databaseUrl, secretKey);
    const namespace = `api_bomb_${suffix()}`;
    try {
      await call(server.url, 'POST', '/v1/warehouses/garden/tables', adminKey!, { namespace, name: 'events', columns: [{ name: 'x', type: 'long' }] });
      const bombSink = (await call(server.url, 'POST', '/v1/sinks', adminKey!, { name: 'bomb_in', table: `${namespace}.events`, warehouse: 'garden' })) as CreatedSink;
      const post = (body: Buffer, encoding: string) =>
        fetch(`${server.url}/v1/sinks/${bombSink.id}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bombSink.send_key}`, 'idempotency-key': newBatchId(), 'content-type': 'application/json', 'content-encoding': encoding },
          body,
        });
      // Warm: the route and zlib loaded, as they would be in a running API.
      expect((await post(gzipSync('[{"x":1}]'), 'gzip')).status).toBe(202);
      const before = rssBytes(server.child.pid!, 'VmRSS');
      const gzipBomb = zerosBomb(1024);
      expect(gzipBomb.length).toBeLessThan(2 * MIB);
      const zstdBomb = zstdCompressSync(Buffer.alloc(256 * MIB));
      for (const [encoding, bomb] of [['gzip', gzipBomb], ['zstd', zstdBomb]] as const) {
        const started = performance.now();
        const res = await post(bomb, encoding);
        const ms = performance.now() - started;
        expect(res.status, encoding).toBe(413);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
        expect(ms, `${encoding} refused after ${ms.toFixed(0)} ms`).toBeLessThan(1_000);
      }
      const peak = rssBytes(server.child.pid!, 'VmHWM');
      const after = rssBytes(server.child.pid!, 'VmRSS');
      console.log(`bomb: API RSS before ${(before / MIB).toFixed(0)} MiB, peak ${(peak / MIB).toFixed(0)} MiB, after ${(after / MIB).toFixed(0)} MiB`);
      expect(after - before).toBeLessThan(64 * MIB);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
      await dropNamespace(env, namespace).catch(() => undefined);
      await dropDatabase(databaseUrl);
    }
  }, 120_000);
});
