import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROLL_MAX_BATCH_IDS, ROLL_MAX_BATCHES } from '@tablemere/contracts';
import { findInAncestry } from '@tablemere/iceberg';
import { rollFileKey, rollsPrefix } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIDECAR_CRASH_POINTS } from '../src/crash.ts';
import { InternalApi } from '../src/internal-api.ts';
import { SUMMARY_KEYS } from '../src/roll/summary.ts';
import { repoRoot } from '../../../tests/support/stack.ts';
import { batchStatus, createSink, createTable, getSink, updateSink } from './support/api.ts';
import { expireLease, intakeBatches, readBoth } from './support/expect.ts';
import { runCli, summaries } from './support/roller.ts';
import { suffix, type TestStack } from './support/stack.ts';
import { startXSink, stopXSink, type XSink } from './support/x-sink.ts';

/**
 * Rolls of more than 1,000 batches, whose ids go to a sidecar file the snapshot summary names:
 * killed at the sidecar's own step and around the commit, with the owner's compaction and
 * expiry in between, recovered by reading the sidecar; every row exactly once.
 */
const run = promisify(execFile);
const BATCHES = ROLL_MAX_BATCHES + 50;
let stack: TestStack;
let x: XSink;

beforeAll(async () => ({ stack, x } = await startXSink('sidecar')));
afterAll(async () => stopXSink(stack, x));

/** Sends `count` batches, 25 at a time; returns their ids. */
async function sendBatches(tag: string, count = BATCHES): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  for (let i = 0; i < count; i += 25) await Promise.all(ids.slice(i, i + 25).map((id) => x.send(stack, id, tag)));
  return ids;
}

async function rollClean(env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const done = await runCli(['roll', x.sink.id], stack.rollerEnv(env));
  expect(done.code, done.stderr).toBe(0);
  const [summary] = summaries(done);
  expect(summary).toMatchObject({ status: 'rolled' });
  return summary!;
}

async function rollKilledAt(point: string): Promise<string> {
  const crashed = await runCli(['roll', x.sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: point }));
  expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
  await expireLease(stack, x.sink.id);
  const { rows } = await stack.pool.query<{ snapshot_id: string }>(`SELECT snapshot_id FROM sink_rolls WHERE sink_id = $1 AND state = 'open'`, [x.sink.id]);
  return rows[0]?.snapshot_id ?? '';
}

/** Every x sent is in the table exactly once (PyIceberg and DuckDB agree), nothing waits, each rejected row counted once. */
async function expectExactlyOnce(): Promise<void> {
  const xs = (await readBoth(stack, x.ns, 'events')).map((r) => Number(r.x));
  expect(xs.length).toBe(x.sentX.length);
  expect(xs).toEqual([...x.sentX].sort((a, b) => a - b));
  expect(await intakeBatches(stack, x.sink.id)).toEqual([]);
  const view = await getSink(stack, x.sink.id);
  expect(view.lag.batches_waiting).toBe(0);
  expect(view.rejects).toMatchObject({ rows_total: x.batchesSent, batches_with_rejects: x.batchesSent });
}

async function rollFiles(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of stack.intake.list(rollsPrefix(x.sink.id))) keys.push(...page.objects.map((o) => o.key));
  return keys.sort();
}

/** The summary of the newest snapshot on main naming the sink. */
async function newestSummary(): Promise<Record<string, string | undefined> & { snapshotId: string }> {
  const { metadata } = await stack.catalog.loadTable({ namespace: x.ns, name: 'events' });
  const snapshot = findInAncestry(metadata, SUMMARY_KEYS.id, x.sink.id)!;
  return { ...snapshot.summary, snapshotId: snapshot['snapshot-id'].toString() };
}

describe('rolls of more than 1,000 batches', () => {
  it('name their ids in a sidecar, and a roll killed at each sidecar step loses and duplicates nothing', async () => {
    for (const point of SIDECAR_CRASH_POINTS) {
      await sendBatches(point);
      const before = await rollFiles();
      await rollKilledAt(point);
      const written = (await rollFiles()).filter((key) => !before.includes(key));
      expect(written).toHaveLength(1);
      expect(await rollClean()).toMatchObject({ outcome: 'committed', batches: BATCHES, rows: 2 * BATCHES, rejected_rows: BATCHES });
      // The killed roll's file is named by nothing: the roll that followed committed under a new snapshot id.
      expect((await newestSummary())[SUMMARY_KEYS.batchesFile]).not.toBe(stack.intake.uri(written[0]!));
    }
    const summary = await newestSummary();
    expect(summary).toMatchObject({ [SUMMARY_KEYS.batchesFile]: stack.intake.uri(rollFileKey(x.sink.id, summary.snapshotId)), [SUMMARY_KEYS.batchCount]: String(BATCHES) });
    expect(summary[SUMMARY_KEYS.batches]).toBeUndefined();
    await expectExactlyOnce();
  }, 120_000);

  it('settles a roll killed after its commit from its sidecar once the owner compacted and expired', async () => {
    const [first] = await sendBatches('committed');
    const killed = await rollKilledAt('after-commit');
    const upkeep = await run(path.join(repoRoot, '.venv', 'bin', 'python'), [path.join(repoRoot, 'tests', 'readers', 'owner_upkeep.py'), x.ns, 'events', 'compact', 'expire'], {
      env: { ...process.env, ...stack.env },
      cwd: path.join(repoRoot, 'tests', 'readers'),
    });
    // Only the compaction's snapshot is left: the roll's commit shows in an earlier metadata file only.
    expect((JSON.parse(upkeep.stdout) as { snapshots: string[] }).snapshots).not.toContain(killed);
    expect(await rollClean()).toMatchObject({ settled: 1, outcome: 'idle' });
    // The counts reported on recovery are the sidecar's.
    expect(await batchStatus(stack, x.sink.id, first!)).toMatchObject({ state: 'committed', snapshot_id: killed, rejected_rows: 1 });
    await expectExactlyOnce();
  }, 120_000);

  it("settles a roll killed mid-delete in the project's own upkeep, which then compacts and expires its snapshot", async () => {
    const [first] = await sendBatches('upkept');
    const killed = await rollKilledAt('mid-delete');
    await updateSink(stack, x.sink.id, { keep_snapshots: 1, min_snapshot_age_seconds: 0 });
    const upkept = await runCli(['upkeep', x.sink.id], stack.rollerEnv());
    expect(upkept.code, upkept.stderr).toBe(0);
    expect(summaries(upkept)[0]).toMatchObject({ status: 'upkept', settled: 1, compaction_skipped: null });
    const { metadata } = await stack.catalog.loadTable({ namespace: x.ns, name: 'events' });
    expect(metadata.snapshots?.map((snapshot) => snapshot['snapshot-id'].toString())).not.toContain(killed);
    expect(await rollClean()).toMatchObject({ outcome: 'idle', settled: 0 });
    expect(await batchStatus(stack, x.sink.id, first!)).toMatchObject({ state: 'committed', snapshot_id: killed, rejected_rows: 1 });
    await expectExactlyOnce();
  }, 120_000);

  it('deletes what a committed roll left in intake by its sidecar alone, and stops when the sidecar is gone', async () => {
    await sendBatches('half');
    const killed = await rollKilledAt('mid-delete');
    expect((await intakeBatches(stack, x.sink.id)).length).toBeLessThan(BATCHES);
    // An operator closes the intent by hand (as the intent_unresolved message tells): now only
    // the newest snapshot's sidecar says which batches the roll consumed.
    await stack.pool.query(`UPDATE sink_rolls SET state = 'committed', closed_at = now() WHERE sink_id = $1 AND snapshot_id = $2`, [x.sink.id, killed]);
    await sendBatches('after', 2);
    expect(await rollClean()).toMatchObject({ outcome: 'committed', batches: 2 });
    expect(await intakeBatches(stack, x.sink.id)).toEqual([]);
    const xs = (await readBoth(stack, x.ns, 'events')).map((r) => Number(r.x));
    expect(xs).toEqual([...x.sentX].sort((a, b) => a - b));

    // With the newest sidecar gone, which batches it named cannot be told: nothing rolls.
    await sendBatches('big', BATCHES);
    expect(await rollClean()).toMatchObject({ outcome: 'committed', batches: BATCHES });
    const newest = await newestSummary();
    const key = rollFileKey(x.sink.id, newest.snapshotId);
    const { body } = await stack.intake.get(key);
    const saved: Buffer[] = [];
    for await (const chunk of body) saved.push(chunk as Buffer);
    await stack.intake.deleteMany([key]);
    await sendBatches('blocked', 1);
    const stopped = await runCli(['roll', x.sink.id], stack.rollerEnv());
    expect(summaries(stopped)[0]).toMatchObject({ status: 'failed', reason: 'sidecar_missing' });
    expect((await newestSummary()).snapshotId).toBe(newest.snapshotId);
    // Restored, the sink rolls again; with a retention of a second the sweep removes every roll file
    // but the newest snapshot's.
    await stack.intake.put(key, Buffer.concat(saved), { contentType: 'application/json' });
    expect(await rollClean({ TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS: '1' })).toMatchObject({ outcome: 'committed', batches: 1 });
    expect(await rollFiles()).toEqual([key]);
  }, 180_000);

  it('the internal API takes an intent and its report naming the most batches a roll takes, with the longest ids', async () => {
    await createTable(stack, x.ns, 'ids', [{ name: 'x', type: 'long' }]);
    const other = await createSink(stack, `ids_${suffix()}`, `${x.ns}.ids`);
    const api = new InternalApi({ url: stack.internalUrl, secret: stack.bootstrapSecret });
    const { lease_id } = await api.lease(other.id, { roller_id: 'sidecar-test', ttl_seconds: 120 });
    const ids = Array.from({ length: ROLL_MAX_BATCH_IDS }, (_, i) => `${String(i).padStart(6, '0')}${'x'.repeat(122)}`);
    const intent = await api.recordIntent(other.id, { lease_id, snapshot_id: '1234567', batch_ids: ids, segment_ids: [] });
    expect(intent.batch_ids).toEqual(ids);
    expect((await api.listRolls(other.id, 'open')).map((r) => r.batch_ids.length)).toEqual([ROLL_MAX_BATCH_IDS]);
    const batches = ids.map((batch_id) => ({ batch_id, rows: 2, rejected_rows: 1 }));
    const report = { lease_id, roll_id: intent.roll_id, snapshot_id: '1234567', batches, rows: 2 * ids.length, rejected_rows: ids.length, seconds: 1, attempts: 1, started_at: new Date().toISOString(), outcome: 'committed' as const };
    // No ledger row has these ids: the report closes the intent and counts every batch unknown.
    expect(await api.report(other.id, report)).toMatchObject({ outcome: 'committed', ledger: { committed: 0, already_committed: 0, unknown: ROLL_MAX_BATCH_IDS }, replayed: false });
    await expect(api.recordIntent(other.id, { lease_id, snapshot_id: '7654321', batch_ids: [...ids, 'one-more'], segment_ids: [] })).rejects.toThrow(/batch_ids/);
  }, 60_000);
});
