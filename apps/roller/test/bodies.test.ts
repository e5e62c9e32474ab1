import { deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { SendResult } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable } from './support/api.ts';
import { readBoth } from './support/expect.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/** Issue 24: NDJSON and compressed send bodies, from the send route to rows both engines read. */

let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

async function sinkOnNewTable() {
  const ns = `bodies_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [
    { name: 'x', type: 'long', required: true },
    { name: 'who', type: 'string' },
    { name: 'at', type: 'timestamptz' },
  ]);
  return { ns, sink: await createSink(stack, `events_${suffix()}`, `${ns}.events`) };
}

async function post(sink: { id: string; send_key: string }, batchId: string, body: string | Buffer, headers: Record<string, string>): Promise<SendResult> {
  const res = await fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': batchId, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`send ${batchId}: ${res.status} ${text}`);
  return SendResult.parse(JSON.parse(text));
}

async function roll(sinkId: string) {
  const run = await runCli(['roll', sinkId], stack.rollerEnv());
  if (run.code !== 0) throw new Error(`roll exited ${run.code}: ${run.stdout}\n${run.stderr}`);
  return summaries(run)[0]!;
}

const withoutStamp = (rows: Array<Record<string, unknown>>) => rows.map(({ __ingest_ts: _, ...row }) => row);

/** Rows from `from`: odd spellings a scan must keep as sent (escapes, an integer past 2^53, microseconds). */
function elements(from: number): string[] {
  return [
    `{"x": ${from}, "who": "north", "at": "2026-09-21T12:00:00.123456Z"}`,
    `{"x":${from + 1},"who":"\\u00e9\\t日本"}`,
    `{ "x" : ${9007199254740993n + BigInt(from)} , "who" : null }`,
  ];
}

describe('NDJSON and compressed bodies, rolled', () => {
  it('rolls an NDJSON batch to the same rows as the same elements sent as an array; gzip, deflate and zstd batches roll exactly', async () => {
    const array = await sinkOnNewTable();
    const lines = await sinkOnNewTable();
    const rows = elements(1);
    const asArray = await post(array.sink, 'b-array', `[\n  ${rows.join(',\n  ')}\n]`, {});
    const asLines = await post(lines.sink, 'b-ndjson', `${rows.join('\r\n')}\n\n`, { 'content-type': 'application/x-ndjson' });
    expect(asLines.bytes).toBe(asArray.bytes);
    // The compressed batches go to the NDJSON sink, each with rows of its own.
    await post(lines.sink, 'b-gzip', gzipSync(`[${elements(100).join(',')}]`), { 'content-encoding': 'gzip' });
    await post(lines.sink, 'b-deflate', deflateSync(elements(200).join('\n')), { 'content-encoding': 'deflate', 'content-type': 'application/jsonl' });
    await post(lines.sink, 'b-zstd', zstdCompressSync(`[${elements(300).join(',')}]`), { 'content-encoding': 'zstd' });

    expect(await roll(array.sink.id)).toMatchObject({ outcome: 'committed', batches: 1, rows: 3, rejected_rows: 0 });
    expect(await roll(lines.sink.id)).toMatchObject({ outcome: 'committed', batches: 4, rows: 12, rejected_rows: 0 });
    const fromArray = withoutStamp(await readBoth(stack, array.ns, 'events'));
    const fromLines = withoutStamp(await readBoth(stack, lines.ns, 'events'));
    expect(fromArray).toEqual([
      { x: 1, who: 'north', at: '2026-09-21T12:00:00.123456Z' },
      { x: 2, who: 'é\t日本', at: null },
      { x: 9007199254740994n, who: null, at: null },
    ]);
    const expected = (from: number) => fromArray.map((row) => ({ ...row, x: typeof row.x === 'bigint' ? row.x + BigInt(from - 1) : (row.x as number) + from - 1 }));
    const big = (value: unknown) => (typeof value === 'bigint' ? value : BigInt(value as number));
    const sorted = (list: Array<Record<string, unknown>>) => [...list].sort((a, b) => (big(a.x) < big(b.x) ? -1 : 1));
    expect(sorted(fromLines)).toEqual(sorted([...expected(1), ...expected(100), ...expected(200), ...expected(300)]));
  }, 180_000);
});
