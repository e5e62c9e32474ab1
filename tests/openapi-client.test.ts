import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable } from '../apps/roller/test/support/api.ts';
import { micros, readBoth, receivedOf } from '../apps/roller/test/support/expect.ts';
import { runCli, summaries } from '../apps/roller/test/support/roller.ts';
import { startTestStack, suffix, type TestStack } from '../apps/roller/test/support/stack.ts';
import { repoRoot } from './support/stack.ts';

/**
 * A producer's client written by a common generator (openapi-python-client, pinned in
 * requirements.txt) from the document the API serves, sending a batch with a real send key;
 * the batch is then rolled and read back from the table by PyIceberg and DuckDB.
 */

const run = promisify(execFile);
const venvBin = path.join(repoRoot, '.venv', 'bin');

let stack: TestStack;
let workDir: string;
const namespace = `openapi_${suffix()}`;

beforeAll(async () => {
  stack = await startTestStack();
  workDir = mkdtempSync(path.join(tmpdir(), 'tablemere-openapi-client-'));
});

afterAll(async () => {
  await stack?.dropNamespaces([namespace]);
  await stack?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('a client generated from the served OpenAPI document', () => {
  it('sends a batch with a send key; the batch is stored, replayed as such, rolled and read back', async () => {
    // The generator reads the document over HTTP, as a producer would; it formats with ruff, from the venv too.
    const generated = await run(
      path.join(venvBin, 'openapi-python-client'),
      ['generate', '--url', `${stack.apiUrl}/openapi.json`, '--meta', 'none', '--output-path', path.join(workDir, 'tablemere_client')],
      { env: { ...process.env, PATH: `${venvBin}:${process.env.PATH ?? ''}` } },
    );
    // Any warning means a part of the document the generator could not turn into code, but
    // one: it has no NDJSON type, so it warns about the send route's NDJSON bodies and makes
    // the route for its JSON body (used below).
    const output = `${generated.stdout}${generated.stderr}`;
    const ndjson = /WARNING parsing POST \/v1\/sinks\/\{sink\} within send\.\s+Unsupported content type application\/(x-ndjson|jsonl)\s/g;
    expect([...output.matchAll(ndjson)].map((m) => m[1]).sort()).toEqual(['jsonl', 'x-ndjson']);
    const others = output.replace(ndjson, '').replace('Warning(s) encountered while generating. Client was generated, but some pieces may be missing', '');
    expect(others).not.toMatch(/warning|error|unsupported/i);

    await createTable(stack, namespace, 'events', [{ name: 'x', type: 'long', required: true }, { name: 'who', type: 'string' }]);
    const sink = await createSink(stack, `events_${suffix()}`, `${namespace}.events`);
    const rows = [{ x: 1, who: 'north' }, { x: 2 }];
    const { stdout } = await run(
      path.join(venvBin, 'python'),
      [path.join(repoRoot, 'tests', 'clients', 'send_batch.py'), workDir, stack.apiUrl, sink.id, sink.send_key, stack.adminKey, 'generated-0001', JSON.stringify(rows)],
      { cwd: workDir },
    );
    const answers = JSON.parse(stdout) as Record<'first' | 'again' | 'state', { status: number; replayed: string | null; type: string; body: Record<string, unknown> }>;
    expect(answers.first).toMatchObject({ status: 202, replayed: null, type: 'SendResult', body: { accepted: 2, rejected: 0, batch_id: 'generated-0001', state: 'pending' } });
    expect(answers.again).toMatchObject({ status: 200, replayed: 'true', type: 'SendResult', body: answers.first.body });
    expect(answers.state).toMatchObject({ status: 200, type: 'BatchStatus', body: { sink_id: sink.id, batch_id: 'generated-0001', state: 'pending', rows: 2 } });
    const received = await receivedOf(stack, sink.id, 'generated-0001');
    expect(received).toBe(micros(answers.first.body.received_at as string));

    const roll = await runCli(['roll', sink.id], stack.rollerEnv());
    expect(roll.code, roll.stderr).toBe(0);
    expect(summaries(roll)[0]).toMatchObject({ outcome: 'committed', batches: 1, rows: 2, rejected_rows: 0 });
    const read = await readBoth(stack, namespace, 'events');
    expect(read.map((row) => ({ x: Number(row.x), who: row.who }))).toEqual([{ x: 1, who: 'north' }, { x: 2, who: null }]);
    expect(new Set(read.map((row) => String(row.__ingest_ts)))).toEqual(new Set([received]));
  }, 180_000);
});
