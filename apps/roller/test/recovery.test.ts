import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { BatchStatus, type CreatedSink, type RollIntent } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../tests/support/stack.ts';
import { createSink, createTable, send } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { type Finished, logLines, runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Recovery without history: a roll dies around its commit, then the table's owner compacts
 * and expires snapshots with another engine before the sink rolls again. The next roll must
 * settle the open intent by itself from what the catalog still shows (the head's manifest
 * entries, the earlier metadata files of metadata-log), and every accepted row must be in the
 * table exactly once.
 */
const run = promisify(execFile);
let stack: TestStack;
let ns: string;

beforeAll(async () => {
  stack = await startTestStack();
  ns = `recovery_${suffix()}`;
});

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** One sink on a table of its own, and the x of every row it accepted. */
interface Scenario {
  table: string;
  sink: CreatedSink;
  accepted: number[];
}

let nextX = 0;

async function scenario(table: string): Promise<Scenario> {
  await createTable(stack, ns, table, [
    { name: 'x', type: 'long', required: true },
    { name: 'who', type: 'string' },
  ]);
  return { table, sink: await createSink(stack, `${table}_${suffix()}`, `${ns}.${table}`), accepted: [] };
}

/** Sends `batches` batches of `rows` rows each with fresh x values, and one row the schema refuses. */
async function sendBatches(s: Scenario, tag: string, batches: number, rows = 3): Promise<string[]> {
  const ids: string[] = [];
  for (let b = 0; b < batches; b++) {
    const xs = Array.from({ length: rows }, () => nextX++);
    await send(stack, s.sink, `${tag}-${b}`, [...xs.map((x) => ({ x, who: tag })), { who: 'no x: rejected' }]);
    s.accepted.push(...xs);
    ids.push(`${tag}-${b}`);
  }
  return ids;
}

async function rollClean(s: Scenario): Promise<Finished> {
  const done = await runCli(['roll', s.sink.id], stack.rollerEnv());
  expect(done.code, done.stderr).toBe(0);
  expect(summaries(done)[0]).toMatchObject({ status: 'rolled', outcome: 'committed' });
  return done;
}

/** The operator command killed at `point`, then its lease run out as the TTL would. */
async function rollKilledAt(s: Scenario, point: 'after-commit' | 'after-intent'): Promise<RollIntent> {
  const crashed = await runCli(['roll', s.sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: point }));
  expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
  await stack.pool.query(`UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [s.sink.id]);
  const open = await rolls(s, 'open');
  expect(open).toHaveLength(1);
  return open[0]!;
}

async function rolls(s: Scenario, state: string): Promise<RollIntent[]> {
  const { rows } = await stack.pool.query<{ roll_id: string; snapshot_id: string | null }>(
    `SELECT id AS roll_id, snapshot_id FROM sink_rolls WHERE sink_id = $1 AND state = $2 ORDER BY created_at`,
    [s.sink.id, state],
  );
  return rows as unknown as RollIntent[];
}

/** The owner's upkeep with PyIceberg (tests/readers/owner_upkeep.py). */
async function ownerUpkeep(s: Scenario, ...steps: string[]): Promise<{ snapshots: string[]; owner_rows: number[] }> {
  const { stdout } = await run(path.join(repoRoot, '.venv', 'bin', 'python'), [path.join(repoRoot, 'tests', 'readers', 'owner_upkeep.py'), ns, s.table, ...steps], {
    env: { ...process.env, ...stack.env },
    cwd: path.join(repoRoot, 'tests', 'readers'),
  });
  return JSON.parse(stdout) as { snapshots: string[]; owner_rows: number[] };
}

async function batchStatus(s: Scenario, batchId: string): Promise<BatchStatus> {
  const res = await fetch(`${stack.apiUrl}/v1/sinks/${s.sink.id}/batches/${batchId}`, { headers: { authorization: `Bearer ${stack.adminKey}` } });
  expect(res.status).toBe(200);
  return BatchStatus.parse(await res.json());
}

const tally = (xs: readonly number[]) => ({ count: xs.length, sum: xs.reduce((a, b) => a + b, 0), distinct: new Set(xs).size });

/** Both readers see every accepted row (and the owner's) exactly once, and nothing waits. */
async function expectExactlyOnce(s: Scenario, ownerRows: readonly number[] = []): Promise<void> {
  const xs = (await readBoth(stack, ns, s.table)).map((r) => Number(r.x));
  const expected = [...s.accepted, ...ownerRows].sort((a, b) => a - b);
  expect(tally(xs)).toEqual(tally(expected));
  expect(xs).toEqual(expected);
  expect(await intakeBatches(stack, s.sink.id)).toEqual([]);
  expect(await rolls(s, 'open')).toEqual([]);
}

/** What the recovering roll logged about the intent it settled. */
function settledBy(done: Finished, message: string): unknown[] {
  return logLines(done.stderr)
    .filter((l) => l.msg === message)
    .map((l) => l.by);
}

describe('recovery without history', () => {
  it('settles a roll killed after its commit from metadata-log once the owner compacted and expired', async () => {
    const s = await scenario('compacted');
    await sendBatches(s, 'before', 2);
    await rollClean(s);
    const [first] = await sendBatches(s, 'crashed', 3);
    const intent = await rollKilledAt(s, 'after-commit');
    expect((await batchStatus(s, first!)).state).toBe('pending');

    const upkeep = await ownerUpkeep(s, 'compact', 'expire');
    // Only the compaction's snapshot is left: the roll's commit is in no ancestry and no manifest.
    expect(upkeep.snapshots).toHaveLength(1);
    expect(upkeep.snapshots).not.toContain(intent.snapshot_id);

    await sendBatches(s, 'later', 2, 50);
    const done = await rollClean(s);
    expect(summaries(done)[0]).toMatchObject({ settled: 1, abandoned: 0, batches: 2, rows: 100 });
    expect(settledBy(done, 'settled a roll committed earlier')).toEqual(['metadata_log']);
    await expectExactlyOnce(s);
    expect((await rolls(s, 'committed')).map((r) => r.roll_id)).toContain(intent.roll_id);
    // The counts reported come from the roll's snapshot summary, read from an earlier metadata file.
    expect(await batchStatus(s, first!)).toMatchObject({ state: 'committed', snapshot_id: intent.snapshot_id, rejected_rows: 1 });
  });

  it('settles a roll killed after its commit from the head\'s manifest entries once the owner merged manifests and expired', async () => {
    const s = await scenario('expired');
    await sendBatches(s, 'before', 2);
    await rollClean(s);
    const [first] = await sendBatches(s, 'crashed', 3);
    const intent = await rollKilledAt(s, 'after-commit');

    // The owner's append merges the roll's manifest into its own (the entries become EXISTING,
    // keeping their snapshot id); expiry then leaves only that append.
    const upkeep = await ownerUpkeep(s, 'merge-append', 'expire');
    expect(upkeep.snapshots).toHaveLength(1);
    expect(upkeep.snapshots).not.toContain(intent.snapshot_id);

    await sendBatches(s, 'later', 2, 50);
    const done = await rollClean(s);
    expect(summaries(done)[0]).toMatchObject({ settled: 1, abandoned: 0, rows: 100 });
    expect(settledBy(done, 'settled a roll committed earlier')).toEqual(['manifest_entry']);
    await expectExactlyOnce(s, upkeep.owner_rows);
    expect(await batchStatus(s, first!)).toMatchObject({ state: 'committed', snapshot_id: intent.snapshot_id });
  });

  it('abandons a roll killed after its intent once the owner expired, and rolls its batches once', async () => {
    const s = await scenario('abandoned');
    await sendBatches(s, 'before', 1);
    await rollClean(s);
    await sendBatches(s, 'second', 1);
    await rollClean(s);
    const [first] = await sendBatches(s, 'crashed', 3);
    const intent = await rollKilledAt(s, 'after-intent');

    const upkeep = await ownerUpkeep(s, 'expire');
    expect(upkeep.snapshots).toHaveLength(1);

    await sendBatches(s, 'later', 1);
    const done = await rollClean(s);
    expect(summaries(done)[0]).toMatchObject({ settled: 0, abandoned: 1, batches: 4 });
    expect(settledBy(done, 'closed a roll that never committed')).toEqual(['metadata_log']);
    await expectExactlyOnce(s);
    expect((await rolls(s, 'failed')).map((r) => r.roll_id)).toContain(intent.roll_id);
    const status = await batchStatus(s, first!);
    expect(status.state).toBe('committed');
    expect(status.snapshot_id).not.toBe(intent.snapshot_id);
  });
});
