import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SendResult, type ColumnInput, type CreatedSink } from '@tablemere/contracts';
import jsonata from 'jsonata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../tests/support/stack.ts';
import { createSink, createTable } from './support/api.ts';
import { pyicebergRows, type Row } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Issue 39: the bodies log and metric shippers send, byte for byte as their documented options
 * produce them, under the Content-Type each sends (or the recipe in docs/shippers.md sets),
 * from the send route to columns PyIceberg reads.
 */

let stack: TestStack;
const ns = `shippers_${suffix()}`;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

let batches = 0;

/** POSTs a body as the shipper does. The route still asks every batch for an Idempotency-Key, so each gets one here. */
async function post(sink: CreatedSink, body: string, contentType: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': `shipper-${++batches}`, 'content-type': contentType },
    body,
  });
  return { status: res.status, body: await res.json() };
}

async function accepted(sink: CreatedSink, body: string, contentType: string, rows: number): Promise<void> {
  const res = await post(sink, body, contentType);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(SendResult.parse(res.body)).toMatchObject({ accepted: rows, rejected: 0 });
}

async function sinkOn(table: string, columns: ColumnInput[]): Promise<CreatedSink> {
  await createTable(stack, ns, table, columns);
  return createSink(stack, `${table}_${suffix()}`, `${ns}.${table}`);
}

async function roll(sinkId: string) {
  const run = await runCli(['roll', sinkId], stack.rollerEnv());
  if (run.code !== 0) throw new Error(`roll exited ${run.code}: ${run.stdout}\n${run.stderr}`);
  return summaries(run)[0]!;
}

/** The table's rows without the ingest stamp, sorted by `key`. */
async function rowsOf(table: string, key: string): Promise<Row[]> {
  const rows = (await pyicebergRows(ns, table, stack.env)).map(({ __ingest_ts: _, ...row }) => row);
  return rows.sort((a, b) => String(a[key]).localeCompare(String(b[key])));
}

const optional = (spec: Record<string, string>): ColumnInput[] => Object.entries(spec).map(([name, type]) => ({ name, type }) as ColumnInput);

describe('Vector http sink, encoding.codec = "json"', () => {
  // Vector's json serializer writes a log event's fields in key order, compact. The recipe's
  // remap writes `timestamp` with 6 fraction digits: Vector's own has up to 9 (nanoseconds),
  // which a timestamptz column refuses unless the extra digits are zeros.
  const event = (n: number) => `{"host":"web-1","message":"GET /item/${n} 200","source_type":"file","timestamp":"2026-09-21T12:00:0${n}.123456Z"}`;

  it('takes the default framing (a JSON array, application/json) and newline_delimited (NDJSON, application/x-ndjson); the rows land as columns', async () => {
    const sink = await sinkOn('vector_logs', optional({ host: 'string', message: 'string', source_type: 'string', timestamp: 'timestamptz' }));
    // Default framing for json on the http sink: the events joined by commas inside [ ].
    await accepted(sink, `[${event(1)},${event(2)}]`, 'application/json', 2);
    // framing.method = "newline_delimited": one event a line, the last line break dropped.
    await accepted(sink, `${event(3)}\n${event(4)}`, 'application/x-ndjson', 2);
    // Without the remap: nanoseconds, filed as a reject by the roll, never the batch.
    await accepted(sink, '[{"host":"web-1","message":"GET /item/5 200","source_type":"file","timestamp":"2026-09-21T12:00:05.123456789Z"}]', 'application/json', 1);

    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', batches: 3, rows: 4, rejected_rows: 1 });
    expect(await rowsOf('vector_logs', 'message')).toEqual(
      [1, 2, 3, 4].map((n) => ({ host: 'web-1', message: `GET /item/${n} 200`, source_type: 'file', timestamp: `2026-09-21T12:00:0${n}.123456Z` })),
    );
  }, 120_000);
});

describe('Fluent Bit http output', () => {
  it('takes format json (an array, the `date` key a float epoch) and json_lines (NDJSON under application/x-ndjson); json_lines under application/json is refused', async () => {
    const sink = await sinkOn('fluentbit_epoch', optional({ date: 'double', log: 'string', stream: 'string' }));
    // format json, json_date_key date, json_date_format double (the defaults).
    await accepted(sink, '[{"date":1790000001.123456,"log":"GET /a 200","stream":"stdout"},{"date":1790000002.5,"log":"GET /b 404","stream":"stderr"}]', 'application/json', 2);
    // format json_lines: each record and a line break. Releases since 3.0 send it as
    // application/x-ndjson; older ones as application/json, which the recipe overrides.
    const lines = '{"date":1790000003.25,"log":"GET /c 200","stream":"stdout"}\n{"date":1790000004,"log":"GET /d 500","stream":"stderr"}\n';
    await accepted(sink, lines, 'application/x-ndjson', 2);
    const asJson = await post(sink, lines, 'application/json');
    expect([asJson.status, asJson.body.error.code]).toEqual([400, 'invalid_json']);

    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', batches: 2, rows: 4, rejected_rows: 0 });
    expect(await rowsOf('fluentbit_epoch', 'log')).toEqual([
      { date: 1790000001.123456, log: 'GET /a 200', stream: 'stdout' },
      { date: 1790000002.5, log: 'GET /b 404', stream: 'stderr' },
      { date: 1790000003.25, log: 'GET /c 200', stream: 'stdout' },
      { date: 1790000004, log: 'GET /d 500', stream: 'stderr' },
    ]);
  }, 120_000);

  it('takes format json with json_date_format iso8601: the `date` key lands in a timestamptz column', async () => {
    const sink = await sinkOn('fluentbit_iso', optional({ date: 'timestamptz', log: 'string' }));
    await accepted(sink, '[{"date":"2026-09-21T12:00:00.000681Z","log":"GET /a 200"}]', 'application/json', 1);
    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', rows: 1, rejected_rows: 0 });
    expect(await rowsOf('fluentbit_iso', 'log')).toEqual([{ date: '2026-09-21T12:00:00.000681Z', log: 'GET /a 200' }]);
  }, 120_000);
});

describe('Telegraf outputs.http, data_format = "json", use_batch_format = true', () => {
  // The recipe's json_transformation, read from the page so the test runs exactly what it shows.
  const recipe = readFileSync(path.join(repoRoot, 'docs', 'shippers.md'), 'utf8');
  const expression = /json_transformation = '''\n([\s\S]*?)\n\s*'''/.exec(recipe)?.[1]?.trim();
  // The json serializer's batch form: {"metrics": [...]}, each metric's keys in order, timestamp in json_timestamp_units (1s).
  const batch = (metrics: string[]) => `{"metrics":[${metrics.join(',')}]}`;
  const cpu = '{"fields":{"usage_idle":98.5,"usage_user":1.25},"name":"cpu","tags":{"cpu":"cpu-total","host":"web-1"},"timestamp":1790000000}';
  const mem = '{"fields":{"used_percent":41.5},"name":"mem","tags":{"host":"web-1"},"timestamp":1790000010}';

  it('is refused as it is (one object, not an array); the recipe turns it into flat rows, one metric too, that land as columns', async () => {
    expect(expression).toBeDefined();
    const sink = await sinkOn('telegraf_metrics', optional({ name: 'string', timestamp: 'long', host: 'string', cpu: 'string', usage_idle: 'double', usage_user: 'double', used_percent: 'double' }));
    const raw = await post(sink, batch([cpu, mem]), 'application/json');
    expect([raw.status, raw.body.error.code]).toEqual([400, 'not_an_array']);

    const transform = jsonata(expression!);
    const two = await transform.evaluate(JSON.parse(batch([cpu, mem])));
    const one = await transform.evaluate(JSON.parse(batch([cpu])));
    expect(one).toEqual([{ name: 'cpu', timestamp: 1790000000, cpu: 'cpu-total', host: 'web-1', usage_idle: 98.5, usage_user: 1.25 }]);
    await accepted(sink, JSON.stringify(two), 'application/json', 2);

    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', rows: 2, rejected_rows: 0 });
    expect(await rowsOf('telegraf_metrics', 'name')).toEqual([
      { name: 'cpu', timestamp: 1790000000, host: 'web-1', cpu: 'cpu-total', usage_idle: 98.5, usage_user: 1.25, used_percent: null },
      { name: 'mem', timestamp: 1790000010, host: 'web-1', cpu: null, usage_idle: null, usage_user: null, used_percent: 41.5 },
    ]);
  }, 120_000);
});

describe('Benthos http_client output, batching with archive: json_array', () => {
  it('takes the archived batch (a JSON array) under the Content-Type the recipe sets; application/octet-stream, the default of older releases, is refused', async () => {
    const sink = await sinkOn('benthos_events', optional({ id: 'string', level: 'string', msg: 'string' }));
    // json_array: each message of the batch parsed as JSON, the array written compact.
    const body = '[{"id":"e1","level":"info","msg":"started"},{"id":"e2","level":"warn","msg":"slow disk"}]';
    const octets = await post(sink, body, 'application/octet-stream');
    expect([octets.status, octets.body.error.code]).toEqual([415, 'unsupported_media_type']);
    await accepted(sink, body, 'application/json', 2);

    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', rows: 2, rejected_rows: 0 });
    expect(await rowsOf('benthos_events', 'id')).toEqual([
      { id: 'e1', level: 'info', msg: 'started' },
      { id: 'e2', level: 'warn', msg: 'slow disk' },
    ]);
  }, 120_000);
});
