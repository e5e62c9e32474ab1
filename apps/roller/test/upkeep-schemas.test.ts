import { currentSchema } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPKEEP_CRASH_POINTS } from '../src/crash.ts';
import { readBoth } from './support/expect.ts';
import { ownerAddsColumn, type Row } from './support/readers.ts';
import { summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { UpkeepTable } from './support/upkeep-harness.ts';

/**
 * Upkeep on a partitioned table written under many schemas (issue 37): a sink on
 * `unknown_fields: add_columns` whose producers add top-level and nested fields, and an owner
 * adding a column with PyIceberg in between. Each partition's files of every schema become one
 * file, under the current schema, every row and value kept; a run killed at any step leaves
 * every row once for the next run and the next roll.
 */
let stack: TestStack;
let t: UpkeepTable;
const TABLE = 'evolving';

beforeAll(async () => {
  stack = await startTestStack();
  t = await UpkeepTable.create(stack, `upkeep_schemas_${suffix()}`, TABLE, 5, { partition: ['day(__ingest_ts)', 'identity(who)'], unknown_fields: 'add_columns' });
});

afterAll(async () => {
  t?.close();
  await stack?.dropNamespaces([t?.ns].filter((n) => n !== undefined));
  await stack?.stop();
});

/** The fields sent with row x once the producers send `battery_mv`, `pos.lat` and `pos.alt` (2 rolls of each step). */
const stepFields = [
  () => ({}),
  (x: number) => ({ battery_mv: x * 10 }),
  (x: number) => ({ battery_mv: x * 10, pos: { lat: x / 4 } }),
  (x: number) => ({ battery_mv: x * 10, pos: { lat: x / 4, alt: x + 0.5 }, fw: `v${x}` }),
];

const SLOW = { timeout: 300_000 };

describe('upkeep across schema versions', SLOW, () => {
  it('compacts the files of every schema of a partition into one file of the current schema, every value kept', async () => {
    for (const [step, fields] of stepFields.entries()) {
      // Between the producers' steps the owner adds `fw` with PyIceberg.
      if (step === 3) await ownerAddsColumn(t.ns, TABLE, 'fw', 'string', stack.env);
      await t.roll(2, fields);
    }
    const before = await t.load();
    expect(before.metadata.schemas.length).toBeGreaterThanOrEqual(5);
    expect(currentSchema(before.metadata).fields.map((f) => f.name)).toEqual(['x', 'who', '__ingest_ts', 'battery_mv', 'pos', 'fw']);

    const run = await t.upkeep();
    expect(run.code, run.stderr).toBe(0);
    // Two partitions (who = sink, who = null), each rolled once per roll: 16 files of 5 schemas become 2.
    expect(summaries(run)[0]).toMatchObject({ outcome: 'done', compaction_skipped: null, data_files_before: 16, data_files_after: 2, rewritten_files: 16, rewritten_rows: 16 });
    const after = await t.load();
    const files = await t.liveDataFiles(after);
    expect(files).toHaveLength(2);
    expect(new Set(files.map((f) => JSON.stringify(f.partition))).size).toBe(2);
    await t.expectExactlyOnce();

    // Every row as it was sent, read through the current schema: null where its schema had no column yet.
    const rows = await readBoth(stack, t.ns, TABLE);
    const expected = (x: number): Row => {
      const sent: Row = stepFields[Math.floor(x / 4)]!(x);
      const pos = sent['pos'] as Row | undefined;
      return { battery_mv: sent['battery_mv'] ?? null, pos: pos ? { lat: pos['lat'], alt: pos['alt'] ?? null } : null, fw: sent['fw'] ?? null };
    };
    expect(rows.map((r) => ({ battery_mv: r['battery_mv'] === null ? null : Number(r['battery_mv']), pos: r['pos'], fw: r['fw'] }))).toEqual(
      rows.map((r) => expected(Number(r['x']))),
    );
  });
});

describe('a killed upkeep run across schema versions', SLOW, () => {
  it.each(UPKEEP_CRASH_POINTS)('killed at %s: the next run and the next roll leave every row once', async (point) => {
    // A field no roll sent before: one more schema among the files to compact.
    await t.roll(2, (x) => ({ [`k_${point.replaceAll('-', '_')}`]: x }));
    await t.killUpkeepAndRecover(point);
  });
});
