import {
  appendDataFiles,
  bindPartitionSpec,
  compileRowConverter,
  currentSchema,
  defaultPartitionSpec,
  parseJsonRow,
  s3FileIOForTable,
  schemaFromJson,
  splitByPartition,
  writeDataFile,
} from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPKEEP_CRASH_POINTS } from '../src/crash.ts';
import { storeOptions } from '../../../packages/iceberg/test/support.ts';
import { partitioning, type Row } from './support/readers.ts';
import { summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { UpkeepTable } from './support/upkeep-harness.ts';

/**
 * Upkeep on a sink's partitioned table (day(__ingest_ts) and identity(who) from the first roll,
 * so every roll writes two files): small files are compacted per partition, each new file holding
 * one partition; a compaction racing another engine's appends keeps both sides once; files of
 * a spec the owner replaced are written again under the new one; and a run killed at any step
 * leaves every row once for the next run and the next roll.
 */
let stack: TestStack;
let t: UpkeepTable;
const KEEP = 5;
const TABLE = 'parted';

beforeAll(async () => {
  stack = await startTestStack();
  t = await UpkeepTable.create(stack, `upkeep_part_${suffix()}`, TABLE, KEEP, { partition: ['day(__ingest_ts)', 'identity(who)'] });
});

afterAll(async () => {
  t?.close();
  await stack?.dropNamespaces([t?.ns].filter((n) => n !== undefined));
  await stack?.stop();
});

/** Appends one row at a time (x < 0, no `__ingest_ts`) split by the table's spec, until told to stop; answers how many. */
async function otherAppends(stop: { done: boolean }): Promise<number> {
  let appends = 0;
  while (!stop.done) {
    const loaded = await t.load();
    const schema = schemaFromJson(currentSchema(loaded.metadata));
    const converter = compileRowConverter(schema);
    expect(converter.append(parseJsonRow(JSON.stringify({ x: -1 - appends, who: 'other writer' })))).toBeNull();
    const io = s3FileIOForTable(loaded, storeOptions());
    try {
      const parts = splitByPartition(converter.finish(), bindPartitionSpec(defaultPartitionSpec(loaded.metadata), schema));
      const dataFiles = await Promise.all(parts.map((part) => writeDataFile({ io, tableLocation: loaded.metadata.location, table: part.table, parquet: { schema }, partition: part })));
      await appendDataFiles({ catalog: stack.catalog, table: { namespace: t.ns, name: TABLE }, io, dataFiles, base: loaded });
      appends++;
    } finally {
      io.close();
    }
    // A writer that commits back to back can win every one of the upkeep's five attempts on a
    // loaded machine (the upkeep then gives up, as it should, and the test learns nothing); one
    // commit a second still lands inside every upkeep run.
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return appends;
}

/** The head's live files: each of the default spec, one per partition. */
async function expectOneFilePerPartition(partitions: number): Promise<void> {
  const loaded = await t.load();
  const files = await t.liveDataFiles(loaded);
  expect(files.map((f) => f.specId)).toEqual(files.map(() => loaded.metadata['default-spec-id']));
  expect(new Set(files.map((f) => JSON.stringify(f.partition))).size).toBe(files.length);
  expect(files).toHaveLength(partitions);
}

const SLOW = { timeout: 300_000 };

describe('upkeep on a partitioned table', SLOW, () => {
  it('compacts the small files of each partition into one file of that partition', async () => {
    await t.roll(4);
    const run = await t.upkeep();
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ outcome: 'done', compaction_skipped: null, data_files_before: 8, data_files_after: 2, rewritten_files: 8, rewritten_rows: 8 });
    await expectOneFilePerPartition(2);
    await t.expectExactlyOnce();
    // A scan for one partition plans its one file, and finds its rows.
    const plan = await partitioning(['plan', t.ns, TABLE, 'who', '"sink"']);
    expect(plan).toMatchObject({ planned: 1, files: 2 });
    expect((plan.rows as Row[]).map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual(t.sentX.filter((x) => x % 2 === 0));
  });

  it('a compaction racing another writer’s appends (into a partition of their own) keeps both sides exactly once', async () => {
    await t.roll(3);
    // PyIceberg cannot append to a day-partitioned table without pyiceberg-core (not in the
    // venv): the other writer is this package's append, in this process, beside the upkeep's.
    const stop = { done: false };
    const writer = otherAppends(stop);
    try {
      await new Promise((r) => setTimeout(r, 1000));
      for (let i = 0; i < 2; i++) {
        const run = await t.upkeep();
        expect(run.code, run.stderr).toBe(0);
        await t.roll(2);
      }
    } finally {
      stop.done = true;
    }
    const appends = await writer;
    expect(appends).toBeGreaterThan(0);
    t.otherRows += appends;
    await t.expectExactlyOnce();
  });

  it('writes the files of a spec the owner replaced again under the new spec, split by its partitions', async () => {
    const added = await partitioning(['partition', t.ns, TABLE, 'x:bucket[2]']);
    await t.roll(2);
    const before = await t.load();
    expect(before.metadata['default-spec-id']).toBe(added.spec_id);
    expect(new Set((await t.liveDataFiles(before)).map((f) => f.specId)).size).toBe(2);
    const run = await t.upkeep();
    expect(run.code, run.stderr).toBe(0);
    // The two files of the old spec at least; files of the new spec only where a partition has two.
    expect(summaries(run)[0]).toMatchObject({ outcome: 'done', compaction_skipped: null });
    expect(summaries(run)[0]!.rewritten_files as number).toBeGreaterThanOrEqual(2);
    const after = await t.load();
    expect(defaultPartitionSpec(after.metadata).fields.map((f) => f.name)).toEqual(['__ingest_ts_day', 'who', 'x_bucket_2']);
    const files = await t.liveDataFiles(after);
    expect(files.every((f) => f.specId === added.spec_id)).toBe(true);
    await t.expectExactlyOnce();
  });
});

describe('a killed upkeep run on a partitioned table', SLOW, () => {
  it.each(UPKEEP_CRASH_POINTS)('killed at %s: the next run and the next roll leave every row once', async (point) => {
    await t.roll(2);
    await t.killUpkeepAndRecover(point);
  });
});
