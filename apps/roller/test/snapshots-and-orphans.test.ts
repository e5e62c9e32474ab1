import type { CreatedSink } from '@tablemere/contracts';
import { type ListedFile, type LoadTableResult, s3FileIOForTable, type S3FileIO } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeOptions } from '../../../packages/iceberg/test/support.ts';
import { loadConfig } from '../src/config.ts';
import { createRollDeps } from '../src/deps.ts';
import { createLogger } from '../src/log.ts';
import { RollerMetrics } from '../src/metrics.ts';
import { rollSink, type SinkUpkeepSummary, upkeepSink } from '../src/run-sink.ts';
import { createSink, createTable, getSink, send, updateSink } from './support/api.ts';
import { expireLease, readBoth } from './support/expect.ts';
import { runCli } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Upkeep by the sink's own settings: exactly its `keep_snapshots` newest snapshots stay
 * (none younger than its minimum age goes), a PATCH changes what the next run keeps; and
 * upkeep removes orphan files: the Parquet of a roll killed before its commit goes once past
 * the safety age, while a younger stray and every file the table references stay.
 */
let stack: TestStack;
let ns: string;
let sink: CreatedSink;
let nextX = 0;
const sentX: number[] = [];
let batches = 0;
const options = { rollerId: 'settings-test', leaseSeconds: 300, stop: new AbortController().signal };

beforeAll(async () => {
  stack = await startTestStack();
  ns = `retention_${suffix()}`;
  await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
  sink = await createSink(stack, `retention_${suffix()}`, `${ns}.events`, { keep_snapshots: 3, min_snapshot_age_seconds: 0 });
});

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** The roller's deps, its upkeep's orphan safety age given (the production default unless told). */
function rollerDeps(orphanAgeMs?: number) {
  const config = loadConfig(stack.rollerEnv());
  const settings = orphanAgeMs === undefined ? config : { ...config, upkeep: { ...config.upkeep, orphanAgeMs } };
  return createRollDeps(settings, createLogger({ level: 'warn' }), new RollerMetrics({ processMetrics: false }));
}

async function listed() {
  const deps = rollerDeps();
  try {
    return (await deps.api.listSinks({ sink: sink.id })).sinks[0]!;
  } finally {
    deps.close();
  }
}

/** Sends one batch of two rows; `roll` rolls it in this process, as the service does. */
async function sendBatch(): Promise<void> {
  const rows = [{ x: nextX++ }, { x: nextX++ }];
  sentX.push(...rows.map((r) => r.x));
  await send(stack, sink, `b-${++batches}`, rows);
}

async function roll(count: number): Promise<void> {
  const deps = rollerDeps();
  try {
    for (let i = 0; i < count; i++) {
      await sendBatch();
      expect(await rollSink(deps, await listed(), options)).toMatchObject({ status: 'rolled', outcome: 'committed' });
    }
  } finally {
    deps.close();
  }
}

async function upkeep(orphanAgeMs?: number): Promise<Extract<SinkUpkeepSummary, { status: 'upkept' }>> {
  const deps = rollerDeps(orphanAgeMs);
  try {
    const summary = await upkeepSink(deps, await listed(), options);
    if (summary.status !== 'upkept') throw new Error(`upkeep ${JSON.stringify(summary)}`);
    return summary;
  } finally {
    deps.close();
  }
}

async function load(): Promise<LoadTableResult> {
  return stack.catalog.loadTable({ namespace: ns, name: 'events' });
}

async function withIo<T>(run: (io: S3FileIO, loaded: LoadTableResult) => Promise<T>): Promise<T> {
  const loaded = await load();
  const io = s3FileIOForTable(loaded, storeOptions());
  try {
    return await run(io, loaded);
  } finally {
    io.close();
  }
}

/** Every object under the table's location. */
function tableFiles(): Promise<ListedFile[]> {
  return withIo(async (io, loaded) => {
    const files: ListedFile[] = [];
    for await (const file of io.list(`${loaded.metadata.location}/`)) files.push(file);
    return files;
  });
}

/** Metadata files neither current nor in the current metadata's log: SeaweedFS leaves them behind. */
async function metadataOutOfLog(): Promise<string[]> {
  const loaded = await load();
  const named = new Set([loaded.metadataLocation, ...((loaded.metadata['metadata-log'] ?? []) as Array<{ 'metadata-file': string }>).map((e) => e['metadata-file'])]);
  return (await tableFiles()).map((f) => f.location).filter((location) => location.endsWith('.metadata.json') && !named.has(location));
}

const snapshotIds = (loaded: LoadTableResult) =>
  [...(loaded.metadata.snapshots ?? [])].sort((a, b) => Number(a['sequence-number']) - Number(b['sequence-number'])).map((s) => s['snapshot-id'].toString());

async function expectEveryRowOnce(): Promise<void> {
  const xs = (await readBoth(stack, ns, 'events')).map((r) => Number(r.x));
  expect(xs).toEqual([...sentX].sort((a, b) => a - b));
}

/** The Parquet file a roll killed after writing it left in the table's data folder. */
let killedFile: ListedFile;

describe('snapshot retention per sink', { timeout: 240_000 }, () => {
  it('a roll killed after writing its Parquet file leaves it unreferenced', async () => {
    const before = new Set((await tableFiles()).map((f) => f.location));
    await sendBatch();
    const crashed = await runCli(['roll', sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: 'after-write' }));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    await expireLease(stack, sink.id);
    // The first roll also commits the schema's __ingest_ts column: a new metadata file.
    const left = (await tableFiles()).filter((f) => !before.has(f.location) && f.location.endsWith('.parquet'));
    expect(left.map((f) => f.location)).toEqual([expect.stringMatching(/\/data\/[^/]+\.parquet$/)]);
    killedFile = left[0]!;
  });

  it('keeps exactly the newest keep_snapshots, and the production safety age leaves the orphan alone', async () => {
    await roll(5);
    const rolled = snapshotIds(await load());
    expect(rolled).toHaveLength(5);
    const run = await upkeep();
    expect(run).toMatchObject({ outcome: 'done', snapshotsKept: 3, expiredSnapshots: 3, orphans: { deleted: 0, skipped: null } });
    // The killed roll's file is 3 days from old enough (the killed batch was rolled with the
    // others), as are the metadata files the catalog left once out of the log.
    expect(run.orphans.found).toBe(0);
    expect(run.orphans.young).toBe(1 + (await metadataOutOfLog()).length);
    const compaction = run.compactionSnapshotId!.toString();
    expect(snapshotIds(await load())).toEqual([...rolled.slice(-2), compaction]);
    expect((await tableFiles()).map((f) => f.location)).toContain(killedFile.location);
    await expectEveryRowOnce();
  });

  it('never expires a snapshot younger than the minimum age; a PATCH is followed by the next run', async () => {
    await updateSink(stack, sink.id, { keep_snapshots: 1, min_snapshot_age_seconds: 3600 });
    await roll(1);
    const young = await upkeep();
    expect(young).toMatchObject({ expiredSnapshots: 0, snapshotsKept: 5 });
    expect((await getSink(stack, sink.id)).upkeep).toMatchObject({ keep_snapshots: 1, min_snapshot_age_seconds: 3600, last_run: { expired_snapshots: 0 } });

    await updateSink(stack, sink.id, { min_snapshot_age_seconds: 0 });
    const run = await upkeep();
    expect(run).toMatchObject({ expiredSnapshots: 4, snapshotsKept: 1 });
    expect(snapshotIds(await load())).toHaveLength(1);
    await expectEveryRowOnce();
  });
});

describe('orphan files', { timeout: 240_000 }, () => {
  it('removes the killed roll\'s file once past the safety age, never a younger stray or a referenced file', async () => {
    // Nothing else for this run to do: one data file, and every snapshot kept.
    await updateSink(stack, sink.id, { keep_snapshots: 1000 });
    // 12 s between the two files, so a safety age between their ages leaves each side 6 s
    // for this run to reach its orphan step (the store keeps whole seconds).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedFile.lastModified + 12_000 - Date.now())));
    const stray = await withIo(async (io, loaded) => {
      const location = `${loaded.metadata.location}/data/00000-stray-${suffix()}.parquet`;
      await io.put(location, new TextEncoder().encode('written by a writer that has not committed yet'));
      return location;
    });
    const before = await tableFiles();
    const strayFile = before.find((f) => f.location === stray)!;
    // A safety age between the two files' ages: the killed roll's is past it, the stray's not.
    const age = Date.now() - (killedFile.lastModified + strayFile.lastModified) / 2;
    expect(strayFile.lastModified - killedFile.lastModified).toBeGreaterThanOrEqual(11_000);

    const cutoff = Date.now() - age;
    const outOfLog = new Set(await metadataOutOfLog());
    const run = await upkeep(age);
    expect(run).toMatchObject({ outcome: 'done', compactionSnapshotId: null, expiredSnapshots: 0, orphans: { failed: 0, skipped: null } });
    const after = new Set((await tableFiles()).map((f) => f.location));
    const deleted = before.filter((f) => !after.has(f.location));
    // Gone: the killed roll's file, and the metadata files out of the log from before the cutoff.
    // Everything else stays: the young stray, and every file the table references.
    const expected = before.filter((f) => f.location === killedFile.location || (outOfLog.has(f.location) && f.lastModified < cutoff));
    expect(deleted.map((f) => f.location).sort()).toEqual(expected.map((f) => f.location).sort());
    expect(deleted.map((f) => f.location)).toContain(killedFile.location);
    expect(after.has(stray)).toBe(true);
    expect(run.orphans).toMatchObject({ found: deleted.length, deleted: deleted.length, bytes: deleted.reduce((sum, f) => sum + f.size, 0) });
    expect((await getSink(stack, sink.id)).upkeep.last_run).toMatchObject({ outcome: 'done', orphan_files_deleted: deleted.length });
    await expectEveryRowOnce();
  });
});
