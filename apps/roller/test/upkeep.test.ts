import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { branchHead, type LoadTableResult } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPKEEP_CRASH_POINTS } from '../src/crash.ts';
import { getSink } from './support/api.ts';
import { expireLease } from './support/expect.ts';
import { otherWriter } from './support/readers.ts';
import { logLines, startRoller, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { UpkeepTable } from './support/upkeep-harness.ts';

/**
 * Table upkeep through the operator command and the service: small files compacted into one
 * `replace` snapshot, snapshots beyond the kept few expired and the files only they reached
 * deleted, every row read back exactly once by PyIceberg and DuckDB after every run, after a
 * kill at every step of a run, and beside another writer.
 */
let stack: TestStack;
let t: UpkeepTable;
const KEEP = 5;

beforeAll(async () => {
  stack = await startTestStack();
  t = await UpkeepTable.create(stack, `upkeep_${suffix()}`, 'events', KEEP);
});

afterAll(async () => {
  t?.close();
  await stack?.dropNamespaces([t?.ns].filter((n) => n !== undefined));
  await stack?.stop();
});

const roll = (count: number) => t.roll(count);
const upkeep = (extra?: Record<string, string>) => t.upkeep(extra);
const expectExactlyOnce = () => t.expectExactlyOnce();
const load = () => t.load();
const liveDataFiles = async (loaded: LoadTableResult) => (await t.liveDataFiles(loaded)).map((f) => f.path);
const exists = (loaded: LoadTableResult, location: string) => t.exists(loaded, location);

// Each roll and upkeep is a process of its own (the operator command): minutes under load.
const SLOW = { timeout: 300_000 };

describe('upkeep through the operator command', SLOW, () => {
  it('compacts the small files, expires old snapshots, and keeps every row once', async () => {
    await roll(8);
    const before = await load();
    const smallFiles = await liveDataFiles(before);
    expect(smallFiles).toHaveLength(8);

    const run = await upkeep();
    expect(run.code, run.stderr).toBe(0);
    const [summary] = summaries(run);
    expect(summary).toMatchObject({ status: 'upkept', outcome: 'done', data_files_before: 8, data_files_after: 1, rewritten_files: 8, rewritten_rows: 16 });
    const after = await load();
    expect(after.metadata.snapshots).toHaveLength(KEEP);
    expect(branchHead(after.metadata)!.summary.operation).toBe('replace');
    expect(await liveDataFiles(after)).toHaveLength(1);
    await expectExactlyOnce();

    // The kept snapshots still reach the small files; the next run's expiry deletes them.
    expect(await exists(after, smallFiles[0]!)).toBe(true);
    await roll(KEEP);
    const second = await upkeep();
    expect(second.code, second.stderr).toBe(0);
    expect(summaries(second)[0]).toMatchObject({ outcome: 'done', data_files_before: 1 + KEEP, data_files_after: 1 });
    const later = await load();
    for (const file of smallFiles) expect(await exists(later, file)).toBe(false);
    for (const file of await liveDataFiles(later)) expect(await exists(later, file)).toBe(true);
    await expectExactlyOnce();

    const shown = await getSink(stack, t.sink.id);
    expect(shown.upkeep.last_run).toMatchObject({ outcome: 'done', files_before: 1 + KEEP, files_after: 1, snapshots_kept: KEEP, error: null });
    const audit = await stack.pool.query(`SELECT count(*)::int AS n FROM audit_events WHERE event = 'sink.upkeep' AND subject = $1`, [t.sink.id]);
    expect(audit.rows[0].n).toBe(2);
  });

  it('commits nothing when the table needs nothing', async () => {
    const before = await load();
    const run = await upkeep();
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ outcome: 'nothing', data_files_after: 1, expired_snapshots: 0 });
    const after = await load();
    expect(branchHead(after.metadata)!['snapshot-id']).toBe(branchHead(before.metadata)!['snapshot-id']);
    expect(after.metadata.snapshots).toHaveLength(before.metadata.snapshots!.length);
  });

  it('the sink rolls on after upkeep, and the next upkeep takes the new files in', async () => {
    await roll(3);
    const run = await upkeep();
    expect(summaries(run)[0]).toMatchObject({ outcome: 'done', data_files_before: 4, data_files_after: 1 });
    await expectExactlyOnce();
  });
});

describe('a killed upkeep run', SLOW, () => {
  it.each(UPKEEP_CRASH_POINTS)('killed at %s: the next run and the next roll leave every row once', async (point) => {
    await roll(2);
    const killed = await upkeep({ TABLEMERE_ROLLER_CRASH_AT: point });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    await expireLease(stack, t.sink.id);
    await expectExactlyOnce();

    const again = await upkeep();
    expect(again.code, again.stderr).toBe(0);
    await roll(1);
    await expectExactlyOnce();
    const loaded = await load();
    for (const file of await liveDataFiles(loaded)) expect(await exists(loaded, file)).toBe(true);
  });
});

describe('upkeep beside another writer', SLOW, () => {
  it('a compaction racing PyIceberg appends keeps both sides exactly once', async () => {
    await roll(3);
    const stopFile = path.join(tmpdir(), `upkeep-stop-${suffix()}`);
    // Back to back the rival commits every ~0.2 s on an idle machine, faster than a compaction
    // attempt (reload, read the new manifests, rewrite the touched ones, commit) can fit in.
    const writer = otherWriter(t.ns, 'events', stopFile, 0.5);
    try {
      // Let the other writer get going, then run upkeep twice while it commits back to back.
      await new Promise((r) => setTimeout(r, 1500));
      for (let i = 0; i < 2; i++) {
        const run = await upkeep();
        expect(run.code, run.stderr).toBe(0);
        await roll(2);
      }
    } finally {
      writeFileSync(stopFile, '');
    }
    const { appends } = await writer.stop();
    rmSync(stopFile, { force: true });
    expect(appends).toBeGreaterThan(0);
    t.otherRows += appends;
    await expectExactlyOnce();
  });
});

describe('upkeep in the service', SLOW, () => {
  it('runs by itself once the sink rolled, and the sink shows it', async () => {
    await roll(2);
    const before = (await getSink(stack, t.sink.id)).upkeep.last_run?.at;
    const roller = startRoller(
      t.env({
        TABLEMERE_ROLLER_PORT: '0',
        TABLEMERE_ROLLER_TICK_SECONDS: '0.5',
        TABLEMERE_ROLLER_SURVEY_SECONDS: '0.5',
        TABLEMERE_ROLLER_UPKEEP_SECONDS: '1',
      }),
    );
    try {
      // The run is reported to the API under the lease, and counted once the lease is let go:
      // wait for its log line, written after both.
      const logged = () => logLines(roller.output()).some((l) => l.msg === 'upkeep done');
      for (let i = 0; i < 60 && !logged(); i++) await new Promise((r) => setTimeout(r, 500));
      const shown = await getSink(stack, t.sink.id);
      expect(shown.upkeep.last_run?.at).not.toBe(before);
      expect(shown.upkeep.last_run).toMatchObject({ outcome: 'done', files_after: 1 });
      const address = logLines(roller.output()).find((l) => typeof l.address === 'string')!.address as string;
      const metrics = await (await fetch(`${address}/metrics`)).text();
      expect(metrics).toMatch(/^tablemere_roller_upkeeps_total\{outcome="done"\} 1$/m);
      expect(metrics).toContain(`tablemere_roller_table_files{sink="${t.sink.id}",kind="data"} 1`);
      expect(metrics).toMatch(/^tablemere_roller_upkeep_rewritten_files_total [1-9]/m);
      expect(metrics).toMatch(/^tablemere_roller_upkeep_duration_seconds_count 1$/m);
    } finally {
      roller.child.kill('SIGTERM');
      await roller.finished;
    }
    const lines = logLines(roller.output()).filter((l) => l.msg === 'upkeep done');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatchObject({ sink: t.sink.id, data_files_after: 1 });
    await expectExactlyOnce();
  });
});
