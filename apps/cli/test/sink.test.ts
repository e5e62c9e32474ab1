import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { BatchStatus, DeletedSink, PendingRows, RejectedRow, Sink, SinkList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import { InternalApi } from '../../roller/src/internal-api.ts';
import { KeyFile } from '../src/key-file.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { freePort } from '../../../tests/support/ports.ts';
import { rollOnce } from './support/roller.ts';
import { type CliRun, runCli } from './support/run-cli.ts';

const namespace = `cli_sink_${randomBytes(4).toString('hex')}`;
const work = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-sink-'));
let api: TestApi;

const userEnv = (overrides: Record<string, string> = {}) => ({ TABLEMERE_API_URL: api.url, TABLEMERE_API_KEY: api.adminKey, ...overrides });
const tablemere = (args: string[], env: Record<string, string> = userEnv()) => runCli(args, { env });
/** A user without the API key, holding only what a producer has. */
const producer = (args: string[], env: Record<string, string> = {}) => runCli(args, { env });

function ok(result: CliRun): CliRun {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return result;
}

/** A failure: one final `error:` line on stderr, this exit code. */
function failed(result: CliRun, code: number, line: RegExp): void {
  expect(result.code).toBe(code);
  const last = result.stderr.trimEnd().split('\n').at(-1) ?? '';
  expect(last).toMatch(line);
}

async function sinkJson(name: string): Promise<Sink> {
  return Sink.parse(JSON.parse(ok(await tablemere(['sink', 'get', name, '--json'])).stdout));
}

const python = path.join(repoRoot, '.venv', 'bin', 'python');
const runPython = promisify(execFile);

/** Rows in the table and the sum of x, read by PyIceberg. */
async function tableRows(table: string): Promise<{ rows: number; sum_x: number }> {
  const env = stackEnv();
  const script = `
import json, sys
import pyarrow.compute as pc
from pyiceberg.catalog import load_catalog
c = load_catalog("c", type="rest", uri=${JSON.stringify(env.ICEBERG_REST_URI)}, warehouse=${JSON.stringify(env.ICEBERG_WAREHOUSE)},
  **{"credential": ${JSON.stringify(`${env.AWS_ACCESS_KEY_ID}:${env.AWS_SECRET_ACCESS_KEY}`)}, "s3.endpoint": ${JSON.stringify(env.AWS_ENDPOINT_URL)},
     "s3.access-key-id": ${JSON.stringify(env.AWS_ACCESS_KEY_ID)}, "s3.secret-access-key": ${JSON.stringify(env.AWS_SECRET_ACCESS_KEY)}, "s3.region": "us-east-1"})
t = c.load_table(sys.argv[1]).scan(selected_fields=("x",)).to_arrow()
print(json.dumps({"rows": t.num_rows, "sum_x": pc.sum(t.column("x")).as_py() or 0}))
`;
  const { stdout } = await runPython(python, ['-c', script, table], { timeout: 120_000, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { rows: number; sum_x: number };
}

/** An NDJSON file of rows `{"x": i, "who": "..."}` of at least `bytes` bytes; its row count and sum of x. */
async function writeNdjson(file: string, bytes: number): Promise<{ rows: number; sumX: number }> {
  const out = createWriteStream(file);
  let written = 0;
  let rows = 0;
  let sumX = 0;
  while (written < bytes) {
    const lines: string[] = [];
    for (let i = 0; i < 10_000; i++, rows++) {
      lines.push(`{"x":${rows},"who":"producer-${rows % 7} ${'lorem ipsum dolor sit amet '.repeat(3)}"}`);
      sumX += rows;
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return { rows, sumX };
}

beforeAll(async () => {
  api = await startTestApi();
  for (const name of ['events', 'other', 'gone', 'parted']) {
    ok(await tablemere(['table', 'create', api.warehouse, '--namespace', namespace, '--name', name, '--column', 'x:long:required', '--column', 'who:string']));
  }
});
afterAll(async () => {
  await api?.stop();
  await dropNamespace(namespace);
});

const keyFile = path.join(work, 'events-sink.json');
let sinkId: string;

describe('tablemere sink create', () => {
  it('stops before calling the API when the key has nowhere to go', async () => {
    // Nothing listens at this URL: had the API been called, the exit code would be 3.
    const down = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    const result = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'events_in'], down);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: say where the send key goes: --save FILE (written mode 0600) or --show-key (printed once); nothing was created\n',
    });
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--roll-seconds', '30', '--show-key'], down), 2, /^error: --roll-seconds: at least 60/);
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--roll-bytes', '16MiB', '--show-key'], down), 2, /^error: --roll-bytes: from 32\.0 MiB/);
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--unknown-fields', 'drop', '--show-key'], down), 2, /--unknown-fields.*reject, add_columns/);
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--batch-ids', 'body', '--show-key'], down), 2, /--batch-ids.*key, content/);
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--keep-snapshots', '0', '--show-key'], down), 2, /^error: --keep-snapshots: keep_snapshots is 1 to 1000/);
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'x', '--min-snapshot-age', '10', '--show-key'], down), 2, /^error: duration '10': write a number and a unit/);
  });

  it('--save writes the key file with mode 0600 and prints no key', async () => {
    const result = ok(
      await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'events_in', '--roll-seconds', '600', '--keep-snapshots', '3', '--min-snapshot-age', '1h', '--save', keyFile]),
    );
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const saved = KeyFile.parse(JSON.parse(readFileSync(keyFile, 'utf8')));
    sinkId = saved.sink_id;
    expect(saved).toMatchObject({ sink_name: 'events_in', warehouse: api.warehouse, table: `${namespace}.events`, ingest_url: `${api.url}/v1/sinks/${sinkId}` });
    expect(result.stdout).not.toContain(saved.send_key);
    expect(result.stdout).not.toMatch(/(tm|al)_send_/);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`created sink events_in (${sinkId}) for ${namespace}.events in warehouse ${api.warehouse}`);
    expect(lines[1]).toMatch(new RegExp(`^\\s+ingest URL\\s+${api.url}/v1/sinks/${sinkId}$`));
    expect(lines[2]).toMatch(/^\s+roll\s+every 10 min, or once 64\.0 MiB wait, or at 1,000 batches$/);
    expect(lines[3]).toMatch(/^\s+snapshots\s+keep 3, none younger than 1 h$/);
    expect(lines[4]).toContain(`saved to ${keyFile} (mode 0600)`);
    // No stray temporary file beside it.
    expect(readdir(work)).toEqual(['events-sink.json']);
  });

  it('refuses to overwrite a key file, before calling the API', async () => {
    const down = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    const result = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.other`, '--name', 'other_in', '--save', keyFile], down);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: --save ${keyFile}: the file exists; pass --force to replace it\n`);
  });

  it('--show-key prints the key once; the API refusing leaves no key file behind', async () => {
    const shown = ok(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.other`, '--name', 'other_in', '--unknown-fields', 'add_columns', '--batch-ids', 'content', '--show-key']));
    expect(shown.stdout).toMatch(/\n\s+new fields\s+added to the table as optional columns \(add_columns\)\n/);
    expect(shown.stdout).toMatch(/\n\s+batch ids\s+by Idempotency-Key, else by the body's content \(content\)\n/);
    expect((await sinkJson('other_in')).batch_ids).toBe('content');
    expect(shown.stdout).toMatch(/send key\s+tm_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n/);
    expect(shown.stdout.match(/tm_send_/g)).toHaveLength(1);

    // A second sink on the same table: 409 sink_exists, and the claimed file is removed.
    const refusedFile = path.join(work, 'refused.json');
    const refused = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.other`, '--name', 'other_again', '--save', refusedFile]);
    failed(refused, 1, /^error: sink_exists: /);
    expect(existsSync(refusedFile)).toBe(false);
    expect(readdir(work)).toEqual(['events-sink.json']);
  });
});

describe('tablemere sink create --partition', () => {
  it('sends the fields given (repeated or comma-separated), shows them, and says what the API refuses', async () => {
    const down = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    failed(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.parted`, '--name', 'p', '--partition', 'week(x)', '--show-key'], down), 2, /^error: --partition: a partition field is transform\(column\)/);
    failed(
      await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.parted`, '--name', 'parted_in', '--partition', 'identity(nope)', '--show-key']),
      1,
      /^error: partition_field_unknown: partition field identity\(nope\): the table has no column nope/,
    );
    const created = ok(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.parted`, '--name', 'parted_in', '--partition', 'day(__ingest_ts), bucket[4](x)', '--partition', 'identity(who)', '--show-key']));
    expect(created.stdout).toMatch(/^\s+partition\s+day\(__ingest_ts\), bucket\[4\]\(x\), identity\(who\) \(from the first roll\)$/m);
    expect((await sinkJson('parted_in')).partition).toEqual(['day(__ingest_ts)', 'bucket[4](x)', 'identity(who)']);
    expect(ok(await tablemere(['sink', 'get', 'parted_in'])).stdout).toContain('day(__ingest_ts), bucket[4](x), identity(who) (from the first roll)');
    // Out of the way of the listings below.
    ok(await tablemere(['sink', 'delete', 'parted_in']));
  });
});

const bigFile = path.join(work, 'big.ndjson');
let big: { rows: number; sumX: number };
let bigBatchIds: string[];

describe('tablemere sink send', () => {
  it('sends a 40 MiB NDJSON file in several batches of at most 16 MiB, every row accepted', async () => {
    big = await writeNdjson(bigFile, 40 * 1024 * 1024);
    const result = ok(await producer(['sink', 'send', 'events_in', bigFile, '--send-key-file', keyFile]));
    const lines = result.stdout.trimEnd().split('\n');
    const batchLines = lines.filter((line) => line.startsWith('batch '));
    expect(batchLines).toHaveLength(3);
    for (const line of batchLines) expect(line).toMatch(/^batch [0-9a-f]{24}-\d  \d+\.\d MiB  [\d,]+ accepted  stored$/);
    // Full batches first: 16 MiB less at most one row.
    expect(batchLines.slice(0, 2).every((line) => / 16\.0 MiB /.test(line))).toBe(true);
    bigBatchIds = batchLines.map((line) => line.split(' ')[1]!);
    expect(lines.at(-1)).toBe(`sent ${bigFile} to sink ${sinkId}: 3 batches, ${sizeOf(bigFile)}; ${big.rows.toLocaleString('en-US')} rows accepted, 0 refused`);

    const sink = await sinkJson('events_in');
    expect(sink.received).toMatchObject({ batches: 3, rows: big.rows });
    expect(sink.lag.batches_waiting).toBe(3);
  });

  it('sends the same file again without storing anything twice, uncompressed this time (--no-compress): the same batches', async () => {
    const result = ok(await producer(['sink', 'send', bigFile, '--send-key-file', keyFile, '--json', '--no-compress']));
    const answer = JSON.parse(result.stdout) as { batches: { batch_id: string; replay: boolean; accepted: number }[]; accepted: number };
    expect(answer.batches.map((b) => [b.batch_id, b.replay])).toEqual(bigBatchIds.map((id) => [id, true]));
    expect(answer.accepted).toBe(big.rows);
    expect((await sinkJson('events_in')).received).toMatchObject({ batches: 3, rows: big.rows });
  });

  it('reads standard input with $TABLEMERE_SEND_KEY; --batch-id ID names a one-batch send exactly ID', async () => {
    const key = KeyFile.parse(JSON.parse(readFileSync(keyFile, 'utf8'))).send_key;
    const result = await runCli(['sink', 'send', '-', '--batch-id', 'stdin.1'], {
      env: { TABLEMERE_API_URL: api.url, TABLEMERE_SEND_KEY: key },
      input: '[{"x": -1, "who": "stdin"}, {"x": -2}]',
    });
    ok(result);
    expect(result.stdout).toContain('batch stdin.1  ');
    expect(result.stdout).toContain('2 rows accepted, 0 refused');
    expect(BatchStatus.parse(JSON.parse(ok(await tablemere(['sink', 'status', 'events_in', '--batch', 'stdin.1', '--json'])).stdout)).state).toBe('pending');
  });

  it('--send-key K sends with the key itself; elements that are not objects are stored, named, and exit 5', async () => {
    const key = KeyFile.parse(JSON.parse(readFileSync(keyFile, 'utf8'))).send_key;
    const file = path.join(work, 'mixed.json');
    writeFileSync(file, '[{"x": 100}, 7, {"x": 101}, "text"]');
    const result = await producer(['sink', 'send', sinkId, file, '--send-key', key, '--batch-id', 'mixed'], { TABLEMERE_API_URL: api.url });
    expect(result.code).toBe(5);
    expect(result.stdout).toContain('batch mixed  ');
    expect(result.stdout).toContain('2 rows accepted, 2 refused');
    expect(result.stderr.split('\n').slice(0, 2)).toEqual(['row 2 (batch mixed, element 1): not_an_object', 'row 4 (batch mixed, element 3): not_an_object']);
    failed(result, 5, /^error: 2 rows are not a JSON object: stored, and the roll rejects them as not_an_object \(see: tablemere sink rejects\)$/);
    // A key of the wrong shape is refused before anything is sent.
    failed(await producer(['sink', 'send', file, '--send-key', 'tm_send_nope'], { TABLEMERE_API_URL: api.url }), 2, /^error: --send-key: not a send key/);
  });

  it('--batch-id ID on a send of several batches names them ID, ID-2, ... and says so', async () => {
    const file = path.join(work, 'two-batches.ndjson');
    const row = `{"x": 1, "who": "${'w'.repeat(1000)}"}`;
    writeFileSync(file, `${Array.from({ length: 17_000 }, () => row).join('\n')}\n`);
    const shown = ok(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.gone`, '--name', 'multi_in', '--show-key']));
    const key = /send key\s+(tm_send_\S+)\n/.exec(shown.stdout)![1]!;
    const result = ok(await producer(['sink', 'send', file, '--send-key', key, '--batch-id', 'multi'], { TABLEMERE_API_URL: api.url }));
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('batch ')).map((line) => line.split(' ')[1])).toEqual(['multi', 'multi-2']);
    expect(lines).toContain('--batch-id multi: 2 batches, named multi (the first) and multi-2, in input order');
    ok(await tablemere(['sink', 'delete', 'multi_in', '--discard-pending']));
  });

  it('refuses bad input before sending anything (exit 2)', async () => {
    const file = path.join(work, 'broken.ndjson');
    writeFileSync(file, '{"x": 1}\n{"x": 2,}\n');
    const before = (await sinkJson('events_in')).received.batches;
    const result = await producer(['sink', 'send', file, '--send-key-file', keyFile]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: ${file} line 2: row 2 is not valid JSON`));
    expect((await sinkJson('events_in')).received.batches).toBe(before);

    const huge = path.join(work, 'huge.ndjson');
    writeFileSync(huge, `{"x": 1}\n{"x": 2, "who": "${'a'.repeat(16 * 1024 * 1024)}"}\n`);
    failed(await producer(['sink', 'send', huge, '--send-key-file', keyFile]), 2, /^error: .*huge\.ndjson line 2: row 2 is over 16\.0 MiB, more than one request may carry; split it into smaller rows$/);
  });

  it('refuses a key that does not match the sink named, and a missing key', async () => {
    failed(await producer(['sink', 'send', 'other_in', bigFile, '--send-key-file', keyFile]), 2, /does not match .*events-sink\.json, which holds the key of sink events_in/);
    failed(await producer(['sink', 'send', bigFile]), 2, /^error: no send key: /);
    // A bare key names its sink; a sink name is checked with the API key.
    const key = KeyFile.parse(JSON.parse(readFileSync(keyFile, 'utf8'))).send_key;
    failed(
      await tablemere(['sink', 'send', 'other_in', bigFile], userEnv({ TABLEMERE_SEND_KEY: key })),
      2,
      new RegExp(`^error: sink 'other_in' is snk_[0-9a-f]{12}, but the send key in TABLEMERE_SEND_KEY belongs to sink ${sinkId}$`),
    );
    failed(await producer(['sink', 'send', bigFile], { TABLEMERE_SEND_KEY: 'tm_key_nope', TABLEMERE_API_URL: api.url }), 2, /^error: TABLEMERE_SEND_KEY: not a send key/);
  });
});

describe('watching a sink', () => {
  it('tail shows the newest pending rows, oldest first, without consuming them', async () => {
    const before = await sinkJson('events_in');
    const result = await tablemere(['sink', 'tail', 'events_in', '-n', '3']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`${(big.rows + 6).toLocaleString('en-US')} rows in 5 batches waiting; the newest 3, oldest first:\n`);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^mixed:2 {2}\((just now|\d+ s ago)\) {2}7$/);
    // The newest batch is the mixed one: every element was stored, objects or not.
    expect(lines.map((line) => line.split('  ').at(-1))).toEqual(['7', '{"x":101}', '"text"']);
    const json = PendingRows.parse(JSON.parse(ok(await tablemere(['sink', 'tail', 'events_in', '--json', '-n', '1000'])).stdout));
    expect(json.rows).toHaveLength(1000);
    expect(json.truncated).toBe(true);
    expect(await sinkJson('events_in')).toMatchObject({ lag: { batches_waiting: before.lag.batches_waiting } });
  });

  it('status tells a pending batch from an unknown one', async () => {
    const pending = ok(await tablemere(['sink', 'status', 'events_in', '--batch', bigBatchIds[0]!]));
    expect(pending.stdout).toMatch(new RegExp(`^batch ${bigBatchIds[0]}: pending\n  received .*\n  stored, waiting for the next roll\n$`));
    const unknown = BatchStatus.parse(JSON.parse(ok(await tablemere(['sink', 'status', 'events_in', '--batch', 'never-sent', '--json'])).stdout));
    expect(unknown.state).toBe('unknown');
  });

  it('get and list show lag, sizes and ages a person can read', async () => {
    const got = ok(await tablemere(['sink', 'get', 'events_in'])).stdout;
    expect(got).toContain(`sink events_in (${sinkId})\n`);
    expect(got).toMatch(new RegExp(`\\n  table\\s+${namespace}\\.events in warehouse ${api.warehouse}\\n`));
    expect(got).toMatch(/\n {2}waiting\s+5 batches \(4\d\.\d MiB\), \d+ (s|min)( \d+ s)? behind\n/);
    expect(got).toMatch(/\n {2}last roll\s+none yet\n/);
    expect(got).toMatch(/\n {2}last upkeep\s+none yet\n/);
    expect(got).toMatch(/\n {2}created\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \((just now|\d+ (s|min) ago)\)\n/);

    const list = ok(await tablemere(['sink', 'list', api.warehouse])).stdout.trimEnd().split('\n');
    expect(list[0]).toMatch(/^NAME\s+ID\s+WAREHOUSE\s+TABLE\s+STATE\s+WAITING\s+LAST ROLL$/);
    expect(list.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 5))).toEqual(
      expect.arrayContaining([['events_in', sinkId, api.warehouse, `${namespace}.events`, 'active']]),
    );
    expect(SinkList.parse(JSON.parse(ok(await tablemere(['sink', 'list', '--json'])).stdout)).sinks.map((s) => s.name).sort()).toEqual(['events_in', 'other_in']);
  });
});

describe('after the roll', () => {
  it('the rows are in the table; sending the same file again adds nothing', async () => {
    const summary = await rollOnce(api, sinkId);
    expect(summary).toMatchObject({ status: 'rolled', outcome: 'committed' });
    const expected = { rows: big.rows + 2 + 2, sum_x: big.sumX - 3 + 201 };
    expect(await tableRows(`${namespace}.events`)).toEqual(expected);

    const again = ok(await producer(['sink', 'send', bigFile, '--send-key-file', keyFile]));
    expect(again.stdout.match(/already stored \(replayed: nothing stored twice\)/g)).toHaveLength(3);
    expect((await sinkJson('events_in')).lag.batches_waiting).toBe(0);
    expect(await rollOnce(api, sinkId)).toMatchObject({ status: 'rolled', outcome: 'idle' });
    expect(await tableRows(`${namespace}.events`)).toEqual(expected);

    const committed = BatchStatus.parse(JSON.parse(ok(await tablemere(['sink', 'status', 'events_in', '--batch', bigBatchIds[1]!, '--json'])).stdout));
    expect(committed.state).toBe('committed');
    expect(committed.snapshot_id).toMatch(/^\d+$/);
    const sink = await sinkJson('events_in');
    expect(sink.last_roll).toMatchObject({ rows: big.rows + 4, rejected_rows: 2 });
    const got = ok(await tablemere(['sink', 'get', 'events_in'])).stdout;
    expect(got).toMatch(/\n {2}waiting\s+nothing\n/);
    expect(got).toMatch(new RegExp(`\\n {2}last roll\\s+(just now|\\d+ s ago): 5 batches, [\\d,]+ rows, 2 rows rejected, snapshot ${sink.last_roll!.snapshot_id}, took \\d+\\.\\d s\\n`));
  });

  it('rejects lists the rows the roll refused; --rows gives them back exactly, ready to send again', async () => {
    const file = path.join(work, 'bad.ndjson');
    const bad = ['{"x":"seven","who":"a"}', '{"who":"no x"}', '{"x":3,"color":"red"}', '{"x":12345678901234567890}'];
    writeFileSync(file, `{"x":1000}\n${bad.join('\n')}\n`);
    ok(await producer(['sink', 'send', file, '--send-key-file', keyFile, '--batch-id', 'bad']));
    expect(await rollOnce(api, sinkId)).toMatchObject({ status: 'rolled', outcome: 'committed' });

    // One file per roll, in the order of the rolls (named by each roll's first segment, whose id
    // starts with its time): `mixed` (rolled before, its elements that are not objects), then `bad`.
    const human = ok(await tablemere(['sink', 'rejects', 'events_in'])).stdout.trimEnd().split('\n');
    expect(human.filter((line) => !line.startsWith('  '))).toEqual([
      expect.stringMatching(/^mixed:1 {2}not_an_object: a row must be a JSON object/),
      expect.stringMatching(/^mixed:2 {2}not_an_object: /),
      expect.stringMatching(/^bad:1 {2}type_mismatch x: .* \(rolled (just now|\d+ s ago)\)$/),
      expect.stringMatching(/^bad:2 {2}missing_required x: /),
      expect.stringMatching(/^bad:3 {2}unknown_field color: /),
      expect.stringMatching(/^bad:4 {2}type_mismatch x: /),
    ]);
    const rows = ok(await tablemere(['sink', 'rejects', 'events_in', '--rows'])).stdout;
    expect(rows).toBe(`${['7', '"text"', ...bad].join('\n')}\n`);
    const json = ok(await tablemere(['sink', 'rejects', 'events_in', '--json', '--since', '10m'])).stdout.trimEnd().split('\n');
    expect(json.map((line) => RejectedRow.parse(JSON.parse(line)).reason)).toEqual(['not_an_object', 'not_an_object', 'type_mismatch', 'missing_required', 'unknown_field', 'type_mismatch']);
    expect(json[5]).toContain('"row":{"x":12345678901234567890}');

    const future = await tablemere(['sink', 'rejects', 'events_in', '--since', '2099-01-01T00:00:00Z']);
    expect([future.code, future.stdout, future.stderr]).toEqual([0, '', 'no rejects since 2099-01-01T00:00:00Z\n']);
    expect(ok(await tablemere(['sink', 'get', 'events_in'])).stdout).toMatch(/\n {2}rejects\s+6 rows in 2 batches, last .*; see: tablemere sink rejects events_in\n/);
  });
});

describe('tablemere sink update', () => {
  it('changes only the settings given, shows the sink, and refuses an empty or bad change', async () => {
    const updated = ok(await tablemere(['sink', 'update', 'events_in', '--min-snapshot-age', '0']));
    expect(updated.stdout).toMatch(/\n {2}snapshots\s+keep 3, no minimum age\n/);
    expect((await sinkJson('events_in')).upkeep).toMatchObject({ keep_snapshots: 3, min_snapshot_age_seconds: 0 });
    failed(await tablemere(['sink', 'update', 'events_in']), 2, /^error: sink update: give at least one setting/);
    failed(await tablemere(['sink', 'update', 'events_in', '--keep-snapshots', '1001']), 2, /^error: --keep-snapshots: keep_snapshots is 1 to 1000/);
  });

  it('sets linger_ms, shows it, and refuses one out of range before calling the API', async () => {
    const lingering = ok(await tablemere(['sink', 'update', 'events_in', '--linger-ms', '250']));
    expect(lingering.stdout).toMatch(/\n {2}intake\s+sends wait up to 250 ms to share an object\n/);
    expect((await sinkJson('events_in')).linger_ms).toBe(250);
    failed(await tablemere(['sink', 'update', 'events_in', '--linger-ms', '1001']), 2, /^error: --linger-ms: linger_ms is 0 to 1000/);
    expect(ok(await tablemere(['sink', 'update', 'events_in', '--linger-ms', '0'])).stdout).toMatch(/\n {2}intake\s+sends written at once/);
  });

  it('sets batch_ids both ways and shows it; refuses another mode before calling the API', async () => {
    expect(ok(await tablemere(['sink', 'get', 'events_in'])).stdout).toMatch(/\n {2}batch ids\s+by Idempotency-Key, required \(key\)\n/);
    const content = ok(await tablemere(['sink', 'update', 'events_in', '--batch-ids', 'content']));
    expect(content.stdout).toMatch(/\n {2}batch ids\s+by Idempotency-Key, else by the body's content \(content\)\n/);
    expect((await sinkJson('events_in')).batch_ids).toBe('content');
    failed(await tablemere(['sink', 'update', 'events_in', '--batch-ids', 'hash']), 2, /--batch-ids.*key, content/);
    expect(ok(await tablemere(['sink', 'update', 'events_in', '--batch-ids', 'key'])).stdout).toMatch(/\n {2}batch ids\s+by Idempotency-Key, required \(key\)\n/);
    expect((await sinkJson('events_in')).batch_ids).toBe('key');
  });
});

describe('after an upkeep', () => {
  it('get shows the last upkeep as the roller reported it, and --json has it', async () => {
    const internal = new InternalApi({ url: api.internalUrl, secret: api.bootstrapSecret });
    const { lease_id } = await internal.lease(sinkId, { roller_id: 'cli-test', ttl_seconds: 60 });
    const result = await internal.reportUpkeep(sinkId, {
      lease_id,
      started_at: new Date().toISOString(),
      seconds: 2.5,
      outcome: 'done',
      snapshot_ids: ['1234'],
      files: { data_before: 7, data_after: 1, manifests_before: 7, manifests_after: 1 },
      rewritten: { files: 7, bytes: 3 * 1024 * 1024, rows: 1000 },
      expired_snapshots: 2,
      deleted_files: { data: 0, manifests: 2, manifest_lists: 2 },
      snapshots_kept: 5,
      orphan_files: { deleted: 1, bytes: 2048 },
    });
    await internal.releaseLease(sinkId, lease_id);
    expect(result).toMatchObject({ sink_id: sinkId, outcome: 'done', replayed: false });

    const got = ok(await tablemere(['sink', 'get', 'events_in'])).stdout;
    expect(got).toMatch(/\n {2}last upkeep\s+(just now|\d+ s ago): done, data files 7 -> 1, manifests 7 -> 1, 3\.0 MiB rewritten, 2 snapshots expired, 5 kept, 1 orphan file deleted, took 2\.5 s\n/);
    expect((await sinkJson('events_in')).upkeep.last_run).toEqual({
      at: result.recorded_at,
      outcome: 'done',
      seconds: 2.5,
      files_before: 7,
      files_after: 1,
      manifests_before: 7,
      manifests_after: 1,
      expired_snapshots: 2,
      rewritten_bytes: 3 * 1024 * 1024,
      snapshots_kept: 5,
      orphan_files_deleted: 1,
      error: null,
    });
  });
});

describe('tablemere sink delete', () => {
  it('refuses while batches wait, deletes with --discard-pending; the key stops working', async () => {
    const small = path.join(work, 'small.json');
    writeFileSync(small, '[{"x": 1}]');
    ok(await producer(['sink', 'send', small, '--send-key-file', keyFile]));

    const refused = await tablemere(['sink', 'delete', 'events_in']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: pending_batches: sink events_in has 1 batch \(\d+ B\) waiting for the roll; .* --discard-pending/);
    expect((await sinkJson('events_in')).state).toBe('active');

    const deleted = ok(await tablemere(['sink', 'delete', 'events_in', '--discard-pending']));
    expect(deleted.stdout).toBe(`deleted sink events_in (${sinkId}); its send key no longer works, the table is untouched\ndiscarded 1 pending batch\n`);
    failed(await producer(['sink', 'send', small, '--send-key-file', keyFile]), 1, /^error: batch 1 of 1 \(.*\): \w+: /);
    failed(await tablemere(['sink', 'get', 'events_in']), 1, /^error: sink_not_found: /);
    const all = SinkList.parse(JSON.parse(ok(await tablemere(['sink', 'list', '--all', '--json'])).stdout));
    expect(all.sinks.find((s) => s.id === sinkId)?.state).toBe('deleted');
  });

  it('deletes a sink with nothing waiting straight away, and --json prints the answer', async () => {
    const answer = DeletedSink.parse(JSON.parse(ok(await tablemere(['sink', 'delete', 'other_in', '--json'])).stdout));
    expect(answer).toMatchObject({ name: 'other_in', pending_batches_discarded: 0 });
  });
});

describe('exit codes of sink commands', () => {
  it('1 for a sink that does not exist, 2 for a malformed name, 3 when the API is down', async () => {
    failed(await tablemere(['sink', 'get', 'nowhere']), 1, /^error: sink_not_found: /);
    failed(await tablemere(['sink', 'get', 'Bad Name']), 2, /^error: sink 'Bad Name': give its id/);
    const down = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    failed(await tablemere(['sink', 'list'], down), 3, /^error: cannot reach the API at /);
  });

  it('1 for a well-formed send key the intake does not know', async () => {
    const fakeKey = `tm_send_${sinkId.slice(4)}_${'A'.repeat(43)}`;
    failed(await producer(['sink', 'send', path.join(work, 'small.json')], { TABLEMERE_API_URL: api.url, TABLEMERE_SEND_KEY: fakeKey }), 1, /^error: batch 1 of 1 .*: \w+: /);
  });
});

function readdir(dir: string): string[] {
  return readdirSync(dir).sort();
}

function sizeOf(file: string): string {
  return `${(statSync(file).size / (1024 * 1024)).toFixed(1)} MiB`;
}
