import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../errors.ts';
import { RETRY_BUDGET_SECONDS, sendRows } from './send-rows.ts';

// The intake's answers in a scripted order (429 with Retry-After on demand); the real route
// is driven end to end through `tablemere mcp` in test/mcp.test.ts.
let answers: Array<(res: ServerResponse) => void> = [];
const received: Array<{ key: string; body: string }> = [];
let server: Server;
let ingestUrl: string;

const stored = (res: ServerResponse) =>
  res.writeHead(202, { 'content-type': 'application/json' }).end(
    JSON.stringify({ accepted: 1, rejected: 0, reasons: [], batch_id: received.at(-1)!.key, batch_id_from: 'key', bytes: 9, received_at: '2026-12-02T09:00:00.000001Z', state: 'pending' }),
  );
const refused = (status: number, code: string, retryAfter?: number) => (res: ServerResponse) =>
  res
    .writeHead(status, { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) })
    .end(JSON.stringify({ error: { code, message: `${code} says the intake` } }));

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ key: String(req.headers['idempotency-key']), body });
      (answers.shift() ?? refused(500, 'script_exhausted'))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ingestUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/sinks/snk_0123456789ab`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  answers = [];
  received.length = 0;
});

const target = () => ({ ingestUrl, sendKey: `tm_send_0123456789ab_${'A'.repeat(43)}` });
const rows = [{ x: 1, pad: 'aaaaaaaaaa' }, { x: 2, pad: 'bbbbbbbbbb' }, { x: 3, pad: 'cccccccccc' }];
const waits: number[] = [];
/** Each row is 26 bytes: a 40-byte limit puts one row in each batch, as 16 MiB does for large ones. */
const options = { note: () => {}, maxBatchBytes: 40, sleep: async (ms: number) => void waits.push(ms / 1000) };

describe('sendRows', () => {
  it('splits rows above the limit into batches named by their content, the same on every call', async () => {
    answers = [stored, stored, stored, stored, stored, stored];
    const first = await sendRows(target(), { rows }, options);
    expect(received.map((r) => r.body)).toEqual(rows.map((row) => `[${JSON.stringify(row)}]`));
    expect(first).toMatchObject({ sink_id: 'snk_0123456789ab', accepted: 3, rejected: 0, replayed: 0 });
    const keys = received.map((r) => r.key);
    expect(keys).toEqual([expect.stringMatching(/^[0-9a-f]{24}-1$/), expect.stringMatching(/^[0-9a-f]{24}-2$/), expect.stringMatching(/^[0-9a-f]{24}-3$/)]);
    await sendRows(target(), { rows }, options);
    expect(received.slice(3).map((r) => r.key)).toEqual(keys);
  });

  it("names the batches after the agent's batch_id when given", async () => {
    answers = [stored, stored, stored];
    const sent = await sendRows(target(), { rows, batch_id: 'agent-7' }, options);
    expect(sent.batches.map((b) => b.batch_id)).toEqual(['agent-7', 'agent-7-2', 'agent-7-3']);
  });

  it("waits Retry-After within the budget; a longer one is handed back with the API's code, and a refusal stops at once", async () => {
    waits.length = 0;
    answers = [refused(429, 'backlog_full', 3), stored];
    expect((await sendRows(target(), { rows: rows.slice(0, 1) }, options)).accepted).toBe(1);
    expect(waits).toEqual([3]);

    answers = [stored, refused(429, 'backlog_full', RETRY_BUDGET_SECONDS + 90)];
    const later = await sendRows(target(), { rows: rows.slice(0, 2) }, options).catch((error: unknown) => error);
    expect(later).toBeInstanceOf(CliError);
    expect((later as CliError).detail).toEqual({
      code: 'backlog_full',
      message: expect.stringMatching(/-2 \(rows 2 to 2\): backlog_full says the intake; retry in 120 s; 1 earlier batch of this call was stored; call send_rows again with the same rows: stored batches are replayed/),
    });
    expect(waits).toEqual([3]);

    answers = [refused(401, 'invalid_send_key')];
    const stop = await sendRows(target(), { rows: rows.slice(0, 1) }, options).catch((error: unknown) => error);
    expect((stop as CliError).detail).toEqual({ code: 'invalid_send_key', message: expect.stringMatching(/: invalid_send_key says the intake; nothing was stored$/) });
  });
});
