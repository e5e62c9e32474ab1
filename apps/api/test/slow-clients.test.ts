import net from 'node:net';
import type { CreatedSink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../src/http/lingering-close.ts';
import { ApiMetrics } from '../src/http/metrics.ts';
import { dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink, createTable, otherApp } from './support/sinks.ts';

/**
 * Slow and vanishing clients over a real socket (inject() has none): the listener's timeouts,
 * the cap on sends in flight, and how a client that hangs up mid-body is logged and counted.
 */

const timeouts = { headersMs: 600, requestMs: 2_000, idleMs: 1_000, keepAliveMs: 500 };
/** Node checks the headers and request deadlines once a second (capped at headersMs here). */
const SLACK_MS = 1_200;

let api: TestApi;
let server: { app: FastifyInstance; rawLogs: string[]; close(): Promise<void> };
let metrics: ApiMetrics;
let port: number;
let sink: CreatedSink;
let namespace: string;

beforeAll(async () => {
  api = await startTestApi();
  namespace = `slow_${suffix()}`;
  await createTable(api, namespace, 'events');
  sink = await createSink(api.app, api.adminKey, { name: 'slow_in', table: `${namespace}.events` });
  metrics = new ApiMetrics();
  server = await otherApp(api, { timeouts, sendInFlight: { processBytes: 4 * 1024 * 1024, sinkBytes: 256 * 1024 }, metrics });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as net.AddressInfo).port;
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (namespace) await dropNamespace(api.env, namespace).catch(() => undefined);
  await api?.close();
});

interface Outcome {
  /** When the server closed the connection, in ms after connecting; undefined if it did not within `waitMs`. */
  closedAfterMs: number | undefined;
  answer: string;
}

/** Writes `parts` (a string is sent at once; a number waits that many ms), then waits for the server to close, up to `waitMs`. */
function converse(parts: Array<string | number>, waitMs: number, options: { hangUp?: boolean } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let answer = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ closedAfterMs: closed ? Date.now() - started : undefined, answer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      for (const part of parts) {
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else if (!socket.destroyed) socket.write(part);
      }
      if (options.hangUp) {
        socket.destroy();
        finish(false);
      }
    });
  });
}

const sendHead = (length: number, batchId: string) =>
  `POST /v1/sinks/${sink.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sink.send_key}\r\nIdempotency-Key: ${batchId}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
const keysHead = (length: number) => `POST /v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.adminKey}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
const drip = (text: string, everyMs: number, count: number) => Array.from({ length: count }, (_, i) => [everyMs, text[i % text.length]!]).flat();

describe('slow clients', () => {
  it('closes a connection whose headers do not arrive within the headers timeout', async () => {
    const outcome = await converse(['POST /v1/keys HTTP/1.1\r\nHost: x\r\n', ...drip('X-Slow: 1\r\n', 200, 40)], 10_000);
    expect(outcome.closedAfterMs).toBeDefined();
    expect(outcome.closedAfterMs!).toBeLessThanOrEqual(timeouts.headersMs + SLACK_MS);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a request whose body trickles in past the request timeout', async () => {
    const outcome = await converse([keysHead(1000), ...drip('{"name": "slow"', 300, 40)], 15_000);
    expect(outcome.closedAfterMs).toBeDefined();
    expect(outcome.closedAfterMs!).toBeGreaterThanOrEqual(timeouts.requestMs - 100);
    expect(outcome.closedAfterMs!).toBeLessThanOrEqual(timeouts.requestMs + SLACK_MS);
  });

  it('closes a send that stalls mid-body after the idle timeout, and frees its place', async () => {
    const outcome = await converse([sendHead(250_000, `stall-${suffix()}`), '[{"x": 1}, '.repeat(1000)], 10_000);
    expect(outcome.closedAfterMs).toBeDefined();
    expect(outcome.closedAfterMs!).toBeLessThanOrEqual(timeouts.idleMs + SLACK_MS);
    // The stalled send took the sink's whole share: it is free again.
    const next = await converse([sendHead(10, `after-${suffix()}`), '[{"x": 2}]'], 5_000);
    expect(next.answer).toMatch(/^HTTP\/1\.1 202/);
  });
});

describe('sends in flight', () => {
  it('answers 503 intake_busy with Retry-After past the sink\'s share of bytes in flight, reading nothing', async () => {
    // 200 kB and (at least) 64 KiB are more than the sink's 256 KiB.
    const holding = converse([sendHead(200_000, `hold-${suffix()}`), '[{"x": 1}', 800], 3_000, { hangUp: true });
    await new Promise((r) => setTimeout(r, 300));
    const busy = await converse([sendHead(10, `busy-${suffix()}`), '[{"x": 3}]'], 3_000);
    expect(busy.answer).toMatch(/^HTTP\/1\.1 503/);
    expect(busy.answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(busy.answer).toContain('"code":"intake_busy"');
    await holding;
    await new Promise((r) => setTimeout(r, 100));
    const after = await converse([sendHead(10, `free-${suffix()}`), '[{"x": 4}]'], 5_000);
    expect(after.answer).toMatch(/^HTTP\/1\.1 202/);
  });

  it('gives a send\'s share back when it is answered, over keep-alive and through inject()', async () => {
    // 64 KiB each against the sink's 256 KiB: a share never given back would refuse the fifth.
    const headers = { authorization: `Bearer ${sink.send_key}`, 'content-type': 'application/json' };
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/sinks/${sink.id}`, { method: 'POST', headers: { ...headers, 'idempotency-key': `ka-${suffix()}` }, body: '[{"x": 5}]' });
      expect(res.status, await res.text()).toBe(202);
      const injected = await server.app.inject({ method: 'POST', url: `/v1/sinks/${sink.id}`, headers: { ...headers, 'idempotency-key': `in-${suffix()}` }, payload: '[{"x": 6}]' });
      expect(injected.statusCode, injected.body).toBe(202);
    }
  });
});

describe('a client that hangs up mid-body', () => {
  it('is logged as client_aborted at info, on a control route and on the send route, and never counted as a 5xx', async () => {
    const count = async (status: number) => Number(new RegExp(`tablemere_intake_requests_total\\{status="${status}"\\} (\\d+)`).exec(await metrics.registry.metrics())?.[1] ?? 0);
    const [aborted, failed] = [await count(499), await count(500)];
    const before = server.rawLogs.length;
    await converse([keysHead(100), '{"name":', 300], 3_000, { hangUp: true });
    await converse([sendHead(100, `gone-${suffix()}`), '[{"x": 1', 300], 3_000, { hangUp: true });
    await new Promise((r) => setTimeout(r, 300));
    const lines = server.rawLogs.slice(before).map((line) => JSON.parse(line) as { level: number; code?: string });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.filter((line) => line.code === 'client_aborted').map((line) => line.level)).toEqual([30, 30]);
    expect(await count(499)).toBe(aborted + 1);
    expect([failed, await count(500)]).toEqual([0, 0]);
  });
});

/**
 * Headers, then the answer awaited, then `body` written in 64 KiB pieces `everyMs` apart: what
 * came back, whether any write failed or the connection was reset, and when it closed.
 */
function writeAfterAnswer(head: string, body: Buffer, everyMs: number, waitMs: number): Promise<{ answer: string; failed: string | undefined; ended: boolean; closedAfterAnswerMs: number | undefined }> {
  return new Promise((resolve) => {
    // Half-open allowed: the client goes on writing after the server's end, as one that sends its whole body before reading does.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let answeredAt = 0;
    let failed: string | undefined;
    let ended = false;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ answer, failed, ended, closedAfterAnswerMs: closed && answeredAt ? Date.now() - answeredAt : undefined });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('error', (error: NodeJS.ErrnoException) => (failed ??= error.code ?? error.message));
    socket.on('end', () => {
      ended = true;
    });
    socket.on('close', () => finish(true));
    socket.once('data', async (chunk: Buffer) => {
      answeredAt = Date.now();
      answer += chunk.toString('latin1');
      for (let at = 0; at < body.length && !socket.destroyed; at += 65_536) {
        socket.write(body.subarray(at, at + 65_536));
        if (everyMs) await new Promise((r) => setTimeout(r, everyMs));
      }
      if (!socket.destroyed) socket.end();
    });
    socket.on('connect', () => socket.write(head));
  });
}

describe('an answer given before the body', () => {
  // Over the control routes' 1 MiB: 413 from the Content-Length, before a byte of the body is read.
  const large = Buffer.alloc(1_500_000, 0x20);

  it('reaches a client that goes on sending its body: the rest is read and dropped, then the connection ends cleanly', async () => {
    const withoutKey = `POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${large.length}\r\n\r\n`;
    for (const [head, status] of [[keysHead(large.length), 413], [withoutKey, 401]] as const) {
      const outcome = await writeAfterAnswer(head, large, 0, 10_000);
      expect(outcome.answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(outcome.answer).toMatch(/\r\nconnection: close\r\n/i);
      // Closed at once, the server's unread bytes make its kernel reset the connection: this
      // client's writes after the answer fail (EPIPE or ECONNRESET) and it never reads the end.
      expect(outcome.failed).toBeUndefined();
      expect(outcome.ended).toBe(true);
    }
  });

  it('reads the rest of a body for at most LINGER_MS', async () => {
    // 1.5 MB at 64 KiB every 100 ms would take ~2.3 s: the server stops listening first.
    const outcome = await writeAfterAnswer(keysHead(large.length), large, 100, 10_000);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413/);
    expect(outcome.closedAfterAnswerMs).toBeDefined();
    expect(outcome.closedAfterAnswerMs!).toBeGreaterThanOrEqual(LINGER_MS - 100);
    expect(outcome.closedAfterAnswerMs!).toBeLessThanOrEqual(LINGER_MS + SLACK_MS);
  });
});
