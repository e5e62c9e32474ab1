import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ColumnInput } from '@tablemere/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../../../tests/support/stack.ts';
import { createSink, createTable } from './support/api.ts';
import { pyicebergRows } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { runShipper, shipperBinary } from './support/shippers.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Issue 39: Telegraf v1.37.2 running docs/shippers.md's `[[outputs.http]]` block as the page
 * shows it (only its URL replaced; the send key from the environment, as the recipe reads it)
 * into a `batch_ids: content` sink: `METRICS` metrics of two measurements read from a line
 * protocol file, sent `BATCH` a request, every metric a row in the table exactly once.
 */

const METRICS = 400;
const BATCH = 100;
const T0 = 1_790_000_000;

let stack: TestStack;
let binary: string;
const ns = `telegraf_${suffix()}`;

beforeAll(async () => {
  [stack, binary] = await Promise.all([startTestStack(), shipperBinary('telegraf')]);
}, 600_000);

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** Metric `i` as the row the recipe makes of it: cpu and mem in turn, one second apart. */
function metric(i: number): Record<string, string | number> {
  const head = { timestamp: T0 + i, host: `web-${i % 3}` };
  if (i % 2 === 0) return { name: 'cpu', ...head, cpu: `cpu${i % 4}`, usage_idle: 90 + (i % 40) * 0.25, usage_user: (i % 40) * 0.25 };
  return { name: 'mem', ...head, used_percent: 30 + (i % 20) * 0.5, available: 1_000_000 + i };
}

/** The same metric in line protocol, nanosecond timestamps (the influx parser's default). */
function line(i: number): string {
  const { name, timestamp, host, cpu, available, ...fields } = metric(i);
  const tags = cpu === undefined ? `host=${host}` : `cpu=${cpu},host=${host}`;
  const values = Object.entries(fields).map(([key, value]) => `${key}=${value}`);
  if (available !== undefined) values.push(`available=${available}i`);
  return `${name},${tags} ${values.join(',')} ${timestamp}000000000`;
}

/** The recipe's TOML block, as the page shows it. */
function recipe(): string {
  const page = readFileSync(path.join(repoRoot, 'docs', 'shippers.md'), 'utf8');
  const block = /\n## Telegraf\n[\s\S]*?```toml\n([\s\S]*?)```/.exec(page)?.[1];
  if (!block) throw new Error("docs/shippers.md has no TOML block under '## Telegraf'");
  return block;
}

it("Telegraf runs the recipe's outputs.http: every metric a row, its tags and fields in columns", async () => {
  const started = performance.now();
  const columns: ColumnInput[] = [
    { name: 'name', type: 'string', required: true },
    { name: 'timestamp', type: 'long', required: true },
    ...['host', 'cpu'].map((name) => ({ name, type: 'string' }) as ColumnInput),
    ...['usage_idle', 'usage_user', 'used_percent'].map((name) => ({ name, type: 'double' }) as ColumnInput),
    { name: 'available', type: 'long' },
  ];
  await createTable(stack, ns, 'metrics', columns);
  const sink = await createSink(stack, `telegraf_${suffix()}`, `${ns}.metrics`, { batch_ids: 'content' });

  const example = 'https://tablemere.example.com/v1/sinks/snk_0123456789ab';
  const output = recipe();
  expect(output).toContain(`url = "${example}"`);
  const config = [
    '[agent]',
    '  omit_hostname = true',
    `  metric_batch_size = ${BATCH}`,
    '[[inputs.file]]',
    '  files = ["metrics.lp"]',
    '  data_format = "influx"',
    output.replace(example, `${stack.apiUrl}/v1/sinks/${sink.id}`),
  ].join('\n');
  const lines = Array.from({ length: METRICS }, (_, i) => line(i)).join('\n');
  const run = await runShipper({
    binary,
    args: ['--config', 'telegraf.conf', '--once'],
    files: { 'telegraf.conf': config, 'metrics.lp': `${lines}\n` },
    env: { TABLEMERE_SEND_KEY: sink.send_key },
    deadlineMs: 60_000,
  });
  // --once exits non-zero when a metric is left unsent.
  expect(run.code, run.stderr).toBe(0);
  const shipped = performance.now();

  const roll = await runCli(['roll', sink.id], stack.rollerEnv());
  expect(roll.code, roll.stderr).toBe(0);
  const summary = summaries(roll)[0]!;
  expect(summary).toMatchObject({ outcome: 'committed', batches: METRICS / BATCH, rows: METRICS, rejected_rows: 0 });

  const rows = (await pyicebergRows(ns, 'metrics', stack.env)).map(({ __ingest_ts: _, ...row }) => row);
  rows.sort((a, b) => Number(a.timestamp) - Number(b.timestamp));
  const nulls = Object.fromEntries(columns.map(({ name }) => [name, null]));
  expect(rows).toEqual(Array.from({ length: METRICS }, (_, i) => ({ ...nulls, ...metric(i) })));

  console.log(
    `telegraf: ${METRICS} metrics in ${summary.batches} sends, ${rows.length} rows read back; ` +
      `shipping ${((shipped - started) / 1000).toFixed(1)} s, roll and read ${((performance.now() - shipped) / 1000).toFixed(1)} s`,
  );
}, 240_000);
