import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { zstdDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../tests/support/ports.ts';
import type { Batch } from './batches.ts';
import { CliError } from './errors.ts';
import { BACKLOG_PATIENCE_SECONDS, COMPRESS_ABOVE_BYTES, RETRY_LADDER_SECONDS, type RetryNotice, retryAfterSeconds, sendBatch } from './send-client.ts';

// A plain HTTP server playing the send route's answers in a scripted order: the retry rules
// need 429s, 503s and resets on demand, which the real intake gives only under load. The real
// route is exercised end to end in test/sink.test.ts.
type Answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
let script: Answer[] = [];
const seen: { headers: IncomingMessage['headers']; body: Buffer }[] = [];
let server: Server;
let url: string;

const result = (batchId: string) => ({
  accepted: 2,
  rejected: 1,
  reasons: [{ index: 1, reason: 'not_an_object' }],
  batch_id: batchId,
  batch_id_from: 'key',
  bytes: 14,
  received_at: '2026-09-21T12:00:00.000001Z',
  state: 'pending',
});
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_req, res) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: `${code} happened` } }, headers);

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ headers: req.headers, body });
      const answer = script.shift() ?? error(500, 'script_exhausted');
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/sinks/snk_0123456789ab`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen.length = 0;
});

const body = Buffer.from('[{"x":1},7,{"x":12345678901234567890}]');
const batch: Batch = { part: 1, id: 'abc-1', body, rows: 3, firstRow: 1 };
const key = `tm_send_0123456789ab_${'A'.repeat(43)}`;

function recorder() {
  const waits: number[] = [];
  const notices: RetryNotice[] = [];
  return {
    waits,
    notices,
    hooks: { sleep: async (ms: number) => void waits.push(ms / 1000), onRetry: (n: RetryNotice) => void notices.push(n) },
  };
}

describe('sendBatch', () => {
  it('posts the body unchanged with the send key, the batch id as Idempotency-Key and its length', async () => {
    script = [json(202, result('abc-1'))];
    const sent = await sendBatch({ ingestUrl: url, sendKey: key }, batch);
    expect(sent.replay).toBe(false);
    expect(sent.result.accepted).toBe(2);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.equals(body)).toBe(true);
    expect(seen[0]!.headers).toMatchObject({
      authorization: `Bearer ${key}`,
      'idempotency-key': 'abc-1',
      'content-type': 'application/json',
      'content-length': String(body.length),
    });
  });

  it('compresses a body of COMPRESS_ABOVE_BYTES or more with zstd, unless told not to; progress counts the batch\'s own bytes', async () => {
    const large = Buffer.from(JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ x: i, who: 'north' }))));
    expect(large.length).toBeGreaterThan(COMPRESS_ABOVE_BYTES);
    const big: Batch = { ...batch, body: large };
    script = [json(202, result('abc-1')), json(202, result('abc-1')), json(202, result('abc-1'))];
    const progress: number[] = [];
    await sendBatch({ ingestUrl: url, sendKey: key }, big, { onBytes: (_b, sent) => void progress.push(sent) });
    await sendBatch({ ingestUrl: url, sendKey: key, compress: false }, big);
    await sendBatch({ ingestUrl: url, sendKey: key }, batch);
    expect(seen[0]!.headers['content-encoding']).toBe('zstd');
    expect(seen[0]!.body.length).toBeLessThan(large.length / 5);
    expect(zstdDecompressSync(seen[0]!.body).equals(large)).toBe(true);
    expect(progress.at(-1)).toBe(large.length);
    expect(seen[1]!.headers['content-encoding']).toBeUndefined();
    expect(seen[1]!.body.equals(large)).toBe(true);
    expect(seen[2]!.headers['content-encoding']).toBeUndefined();
  });

  it('tells a replay (200) from a first send (202)', async () => {
    script = [json(200, result('abc-1'))];
    expect((await sendBatch({ ingestUrl: url, sendKey: key }, batch)).replay).toBe(true);
  });

  it('honours a positive Retry-After on 429 and 503, else climbs the ladder on 5xx', async () => {
    script = [
      error(429, 'backlog_full', { 'retry-after': '7' }),
      error(503, 'store_unavailable', { 'retry-after': '0' }),
      error(502, 'bad_gateway'),
      error(503, 'store_unavailable', { 'retry-after': '3' }),
      json(202, result('abc-1')),
    ];
    const { waits, notices, hooks } = recorder();
    const sent = await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks);
    expect(sent.result.batch_id).toBe('abc-1');
    expect(waits).toEqual([7, RETRY_LADDER_SECONDS[1], RETRY_LADDER_SECONDS[2], 3]);
    expect(notices.map((n) => [n.attempt, n.reason])).toEqual([
      [1, '429 backlog_full'],
      [2, '503 store_unavailable'],
      [3, '502 bad_gateway'],
      [4, '503 store_unavailable'],
    ]);
    // Every attempt carried the same batch id and the whole body.
    expect(new Set(seen.map((s) => s.headers['idempotency-key']))).toEqual(new Set(['abc-1']));
    for (const s of seen) expect(s.body.equals(body)).toBe(true);
  });

  it('gives up after the ladder with exit kind unavailable', async () => {
    script = Array.from({ length: RETRY_LADDER_SECONDS.length + 1 }, () => error(503, 'store_unavailable'));
    const { waits, hooks } = recorder();
    const failure = await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).kind).toBe('unavailable');
    expect((failure as CliError).message).toBe('store_unavailable: store_unavailable happened');
    expect(waits).toEqual(RETRY_LADDER_SECONDS);
    expect(seen).toHaveLength(RETRY_LADDER_SECONDS.length + 1);
  });

  it("retries a full backlog's short Retry-After past the ladder, until the waits add up to the patience", async () => {
    const refusals = BACKLOG_PATIENCE_SECONDS / 2 + 1;
    script = Array.from({ length: refusals }, () => error(429, 'backlog_full', { 'retry-after': '2' }));
    const { waits, hooks } = recorder();
    const failure = await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks).catch((e: unknown) => e);
    expect((failure as CliError).kind).toBe('unavailable');
    expect(waits).toEqual(Array(refusals - 1).fill(2));
    // Room made in time: stored after 20 refusals, past the ladder's 7 attempts.
    script = [...Array.from({ length: 20 }, () => error(429, 'backlog_full', { 'retry-after': '1' })), json(202, result('abc-1'))];
    expect((await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks)).result.batch_id).toBe('abc-1');
  });

  it('retries a batch another attempt is still storing (409 batch_in_progress)', async () => {
    script = [error(409, 'batch_in_progress', { 'retry-after': '1' }), json(200, result('abc-1'))];
    const { waits, hooks } = recorder();
    expect((await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks)).replay).toBe(true);
    expect(waits).toEqual([1]);
  });

  it('does not retry a refusal', async () => {
    script = [error(409, 'batch_conflict')];
    const { waits, hooks } = recorder();
    const failure = await sendBatch({ ingestUrl: url, sendKey: key }, batch, hooks).catch((e: unknown) => e);
    expect([(failure as CliError).kind, (failure as CliError).message]).toEqual(['refused', 'batch_conflict: batch_conflict happened']);
    expect(waits).toEqual([]);
  });

  it('retries when nobody answers, then reports the intake unreachable', async () => {
    const down = `http://127.0.0.1:${await freePort()}/v1/sinks/snk_0123456789ab`;
    const { waits, hooks } = recorder();
    const failure = await sendBatch({ ingestUrl: down, sendKey: key }, batch, hooks).catch((e: unknown) => e);
    expect((failure as CliError).kind).toBe('unavailable');
    expect((failure as CliError).message).toMatch(/cannot reach the intake at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
    expect(waits).toEqual(RETRY_LADDER_SECONDS);
  });
});

describe('retryAfterSeconds', () => {
  const now = new Date('2026-09-21T12:00:00Z');
  it('reads seconds and HTTP dates, and ignores what is not positive', () => {
    expect(retryAfterSeconds('12', now)).toBe(12);
    expect(retryAfterSeconds('Mon, 21 Sep 2026 12:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('0', now)).toBeUndefined();
    expect(retryAfterSeconds('Mon, 21 Sep 2026 11:59:00 GMT', now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });
});
