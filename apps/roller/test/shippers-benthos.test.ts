import { CONTENT_BATCH_ID_PREFIX, type CreatedSink } from '@tablemere/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSink, createTable } from './support/api.ts';
import { pyicebergRows } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startSendFaults, type SendFaultProxy } from './support/send-faults.ts';
import { runShipper, shipperBinary } from './support/shippers.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Issue 39: Benthos, configured as its users do (static headers only, ~50 messages archived into
 * a JSON array, several sends in flight, retries with backoff), into a `batch_ids: content` sink
 * through a network that refuses some sends (503) and loses the answer to others after the API
 * stored them. Benthos resends the same body each time, the API answers the lost ones as replays,
 * and every row is in the table exactly once.
 */

const ROWS = 20_000;
const BATCH = 50;

let stack: TestStack;
let binary: string;
let proxy: SendFaultProxy | undefined;
const ns = `benthos_${suffix()}`;

beforeAll(async () => {
  [stack, binary] = await Promise.all([startTestStack(), shipperBinary('benthos')]);
}, 600_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** Benthos's config: `ROWS` generated rows, each with its own `seq` (1..ROWS), POSTed `BATCH` to a JSON array. */
function benthosConfig(url: string, sink: CreatedSink): Record<string, unknown> {
  return {
    http: { enabled: false },
    logger: { level: 'WARN', format: 'logfmt' },
    input: {
      generate: {
        count: ROWS,
        interval: '',
        mapping: [
          'let n = counter()',
          'root.seq = $n',
          'root.device = "dev-" + ($n % 16).string()',
          'root.ts = now().ts_format("2006-01-02T15:04:05.000000Z07:00", "UTC")',
        ].join('\n'),
      },
    },
    output: {
      http_client: {
        url,
        verb: 'POST',
        headers: { Authorization: `Bearer ${sink.send_key}`, 'Content-Type': 'application/json' },
        max_in_flight: 16,
        timeout: '30s',
        retry_period: '100ms',
        max_retry_backoff: '1s',
        // Past its retries Benthos hands the batch back to the input, which sends its messages
        // again in new batches: other bodies, so other ids, and a cut batch's rows twice (with
        // retries: 0 here, 440 batches stored of 400). Enough retries keep a batch one body.
        retries: 50,
        backoff_on: [429, 503],
        batching: { count: BATCH, processors: [{ archive: { format: 'json_array' } }] },
      },
    },
  };
}

it('Benthos through refused and cut sends: every row in the table exactly once', async () => {
  const started = performance.now();
  await createTable(stack, ns, 'events', [
    { name: 'seq', type: 'long', required: true },
    { name: 'device', type: 'string' },
    { name: 'ts', type: 'timestamptz' },
  ]);
  const sink = await createSink(stack, `benthos_${suffix()}`, `${ns}.events`, { batch_ids: 'content' });
  proxy = await startSendFaults(stack.apiUrl, { refuseEvery: 7, cutEvery: 11 });

  const config = stringify(benthosConfig(`${proxy.url}/v1/sinks/${sink.id}`, sink));
  const run = await runShipper({ binary, args: ['-c', 'config.yaml'], files: { 'config.yaml': config }, deadlineMs: 120_000 });
  expect(run.code, run.stderr).toBe(0);
  const shipped = performance.now();

  const { stats } = proxy;
  const batches = ROWS / BATCH;
  // Each batch stored once (202), the API's other answers replays (200); both faults happened.
  expect(stats.errors).toEqual([]);
  expect(Object.keys(stats.apiStatuses).sort()).toEqual(['200', '202']);
  expect(stats.apiStatuses[202]).toBe(batches);
  expect(stats.refused).toBeGreaterThan(0);
  expect(stats.cut).toBeGreaterThan(0);
  // Every cut send was named by its body, sent again, and that answer, a replay, reached Benthos.
  expect(stats.cutBatchIds.filter((id) => !id.startsWith(CONTENT_BATCH_ID_PREFIX))).toEqual([]);
  const replayed = new Set(stats.replayedBatchIds);
  expect(stats.cutBatchIds.filter((id) => !replayed.has(id))).toEqual([]);

  const roll = await runCli(['roll', sink.id], stack.rollerEnv());
  expect(roll.code, roll.stderr).toBe(0);
  expect(summaries(roll)[0]).toMatchObject({ outcome: 'committed', batches, rows: ROWS });

  const rows = await pyicebergRows(ns, 'events', stack.env);
  const seqs = rows.map((r) => Number(r.seq));
  expect(rows.length).toBe(ROWS);
  expect(new Set(seqs).size).toBe(ROWS);
  expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
  expect(rows.every((r) => r.device !== null && r.ts !== null)).toBe(true);

  console.log(
    `benthos: ${ROWS} rows in ${batches} batches; ${stats.requests} sends, ${stats.refused} refused (503), ${stats.cut} cut after the API's answer, ` +
      `${stats.replayedBatchIds.length} replays received; API answers ${JSON.stringify(stats.apiStatuses)}; ` +
      `shipping ${((shipped - started) / 1000).toFixed(1)} s, roll and read ${((performance.now() - shipped) / 1000).toFixed(1)} s`,
  );
}, 240_000);
