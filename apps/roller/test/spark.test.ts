import type { CreatedSink } from '@tablemere/contracts';
import { branchHead } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, send } from './support/api.ts';
import { micros, readBoth } from './support/expect.ts';
import { spark, type Row, type SparkOutput } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * The Java reference on a sink's table: Spark, through Iceberg's own Java runtime, reads exactly
 * the rows PyIceberg and DuckDB read, with the types the Iceberg spec maps to Spark's, after
 * rolls and the roller's upkeep; and the owner's own Spark maintenance between rolls
 * (rewrite_data_files, then expire_snapshots down to one snapshot) breaks neither the next roll
 * nor the roller's next upkeep. Spark starts twice in the whole file (each start tens of seconds).
 */
let stack: TestStack;
let ns: string;
let sink: CreatedSink;
const TABLE = 'kinds';
let nextX = 0;
let batches = 0;
const sentX: number[] = [];

/** Every kind of column a producer's JSON fills, nested ones included. Ids are the catalog's. */
const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'x', required: true, type: 'long' },
    { id: 2, name: 'i', required: false, type: 'int' },
    { id: 3, name: 's', required: false, type: 'string' },
    { id: 4, name: 'd', required: false, type: 'double' },
    { id: 5, name: 'f', required: false, type: 'float' },
    { id: 6, name: 'b', required: false, type: 'boolean' },
    { id: 7, name: 'dec', required: false, type: 'decimal(10, 2)' },
    { id: 8, name: 'day', required: false, type: 'date' },
    { id: 9, name: 'at', required: false, type: 'timestamptz' },
    { id: 10, name: 'local', required: false, type: 'timestamp' },
    { id: 11, name: 'u', required: false, type: 'uuid' },
    { id: 12, name: 'bin', required: false, type: 'binary' },
    {
      id: 13,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 14, name: 'a', required: false, type: 'int' },
          { id: 15, name: 'tag', required: false, type: 'string' },
        ],
      },
    },
    { id: 16, name: 'li', required: false, type: { type: 'list', 'element-id': 17, element: 'long', 'element-required': false } },
  ],
};

/** The Spark type of each column as the Iceberg spec maps it (Iceberg's TypeToSparkType). */
const sparkTypes = {
  x: 'long',
  i: 'integer',
  s: 'string',
  d: 'double',
  f: 'float',
  b: 'boolean',
  dec: 'decimal(10,2)',
  day: 'date',
  at: 'timestamp',
  local: 'timestamp_ntz',
  u: 'string',
  bin: 'binary',
  st: {
    type: 'struct',
    fields: [
      { name: 'a', type: 'integer', nullable: true, metadata: {} },
      { name: 'tag', type: 'string', nullable: true, metadata: {} },
    ],
  },
  li: { type: 'array', elementType: 'long', containsNull: true },
  __ingest_ts: 'timestamp',
};

/** One producer row for `x`; every fifth row leaves every optional column out. */
function rowFor(x: number): Record<string, unknown> {
  if (x % 5 === 4) return { x };
  return {
    x,
    i: x * 7 - 1000,
    s: `row ${x} \u00e9\u{1f30d}`,
    d: x + 0.1,
    f: x + 0.5,
    b: x % 2 === 0,
    dec: `${x - 50}.${String(x % 100).padStart(2, '0')}`,
    day: `2026-0${1 + (x % 9)}-1${x % 10}`,
    at: `2026-09-21T12:00:00.${String(x).padStart(6, '0')}+02:00`,
    local: `2026-09-21T08:30:${String(x % 60).padStart(2, '0')}.25`,
    u: `00000000-0000-4000-8000-${x.toString(16).padStart(12, '0')}`,
    bin: Buffer.from([x & 255, 0, 255]).toString('base64'),
    st: { a: x, tag: x % 3 === 0 ? null : `t${x}` },
    li: [x, null, -x],
  };
}

beforeAll(async () => {
  stack = await startTestStack();
  ns = `spark_${suffix()}`;
  await stack.catalog.ensureNamespace(ns);
  // Through the catalog: the API creates only flat tables.
  await stack.catalog.createTable(ns, TABLE, { schema, properties: { 'format-version': '2' } });
  sink = await createSink(stack, `spark_${suffix()}`, `${ns}.${TABLE}`, { keep_snapshots: 5, min_snapshot_age_seconds: 0 });
});

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** `count` rolls of one batch of 5 rows each, through the operator command. */
async function roll(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const rows = Array.from({ length: 5 }, () => rowFor(nextX++));
    sentX.push(...rows.map((r) => r.x as number));
    await send(stack, sink, `b-${++batches}`, rows);
    const run = await runCli(['roll', sink.id], stack.rollerEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ outcome: 'committed', rows: 5, rejected_rows: 0 });
  }
}

/** The roller's upkeep as a sink at the floor gets it, with time compressed (the sink keeps 5 snapshots, no minimum age). */
async function upkeep(): Promise<Record<string, unknown>> {
  const run = await runCli(['upkeep', sink.id], stack.rollerEnv());
  expect(run.code, run.stderr).toBe(0);
  return summaries(run)[0]!;
}

const byX = (a: Row, b: Row) => Number(a.x) - Number(b.x);
const text = (rows: Row[]) => JSON.stringify([...rows].sort(byX), (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

/** PyIceberg and DuckDB agree, every sent row is there once, and Spark read the very same rows. */
async function expectSameRowsEverywhere(sparkRead: SparkOutput): Promise<Row[]> {
  const rows = await readBoth(stack, ns, TABLE);
  expect(rows.map((r) => Number(r.x))).toEqual([...sentX].sort((a, b) => a - b));
  expect(sparkRead.rows).toHaveLength(rows.length);
  expect(text(sparkRead.rows!)).toBe(text(rows));
  return rows;
}

/** Iceberg's order of the values of one column, in the plain form the readers print. */
function order(column: string): (a: unknown, b: unknown) => number {
  if (column === 'dec') return (a, b) => Number(a) - Number(b);
  return (a, b) => ((a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0);
}

/**
 * Columns whose metrics the test checks: every ordered primitive but the uuid (Iceberg 1.10's
 * readable_metrics cannot show its bounds), nested ones by their dotted name.
 */
const bounded = ['x', 'i', 's', 'd', 'f', 'dec', 'day', 'at', 'local', 'st.a', 'st.tag'];
/** Every leaf column has metrics, the uuid apart (left out of the read). */
const metricsColumns = ['__ingest_ts', 'at', 'b', 'bin', 'd', 'day', 'dec', 'f', 'i', 'li.element', 'local', 's', 'st.a', 'st.tag', 'x'];
const valueOf = (row: Row, column: string): unknown => column.split('.').reduce<unknown>((v, part) => (v == null ? null : (v as Row)[part]), row);

/**
 * The data files' metrics as Java decodes them agree with the rows: value and null counts add
 * up, and the smallest lower and largest upper bound are the column's smallest and largest
 * value. Java engines prune files by these bounds, so a wrong one loses rows from filtered reads.
 */
function expectMetricsOf(files: SparkOutput, rows: Row[]): void {
  expect(files.files!.reduce((n, f) => n + Number(f.record_count), 0)).toBe(rows.length);
  for (const file of files.files!) expect(Object.keys(file.readable_metrics).sort()).toEqual(metricsColumns);
  for (const column of bounded) {
    const metrics = files.files!.map((f) => f.readable_metrics[column]!);
    const values = rows.map((r) => valueOf(r, column));
    const present = values.filter((v) => v !== null).sort(order(column));
    // Metrics of nested fields are optional (a missing one only costs pruning on it):
    // packages/iceberg writes them for top-level columns only, Java and PyIceberg for every
    // leaf. Present ones must be right.
    if (column.includes('.') && metrics.every((m) => m.value_count === null && m.lower_bound === null && m.upper_bound === null)) continue;
    const count = (key: 'value_count' | 'null_value_count') => metrics.reduce((n, m) => n + Number(m[key]), 0);
    expect({ column, values: count('value_count'), nulls: count('null_value_count') }).toEqual({ column, values: rows.length, nulls: rows.length - present.length });
    const lowers = metrics.map((m) => m.lower_bound).filter((v) => v !== null).sort(order(column));
    const uppers = metrics.map((m) => m.upper_bound).filter((v) => v !== null).sort(order(column));
    expect({ column, lower: lowers[0], upper: uppers.at(-1) }).toEqual({ column, lower: present[0], upper: present.at(-1) });
  }
}

describe('Spark on a table the sink rolled and the roller upkept', () => {
  let maintained: SparkOutput;

  it('reads the rows PyIceberg and DuckDB read, with the Java types the spec maps; the owner compacts and expires', async () => {
    await roll(3);
    expect(await upkeep()).toMatchObject({ outcome: 'done', data_files_before: 3, data_files_after: 1 });
    await roll(1);

    const [types, read, files, maintain] = await spark(
      (['types', 'rows', 'files', 'maintain'] as const).map((mode) => ({ mode, namespace: ns, table: TABLE })),
    );

    const fields = types!.spark!.fields;
    expect(Object.fromEntries(fields.map((f) => [f.name, f.type]))).toEqual(sparkTypes);
    expect(fields.find((f) => f.name === 'x')!.nullable).toBe(false);
    // Java's view of the same schema: the field ids the sink wrote by.
    expect(types!.iceberg).toContain('1: x: required long');
    expect(types!.iceberg).toContain('7: dec: optional decimal(10, 2)');
    expect(types!.iceberg).toContain('11: u: optional uuid');
    expect(types!.iceberg).toMatch(/\d+: __ingest_ts: optional timestamptz/);

    const rows = await expectSameRowsEverywhere(read!);
    expect(files!.files).toHaveLength(2);
    expectMetricsOf(files!, rows);
    // What a producer sent is what every engine reads, value for value.
    expect(rows[3]).toMatchObject({
      x: 3,
      i: -979,
      s: 'row 3 \u00e9\u{1f30d}',
      d: 3.1,
      f: 3.5,
      b: false,
      dec: '-47.03',
      day: '2026-04-13',
      at: micros('2026-09-21T10:00:00.000003Z'),
      local: '2026-09-21T08:30:03.250000Z',
      u: '00000000-0000-4000-8000-000000000003',
      bin: Buffer.from([3, 0, 255]).toString('base64'),
      st: { a: 3, tag: null },
      li: [3, null, -3],
    });
    expect(rows[4]).toMatchObject({ x: 4, i: null, s: null, dec: null, u: null, bin: null, st: null, li: null });

    // The owner's maintenance: the compacted file and the one rolled since become one; every
    // snapshot but the newest goes, with the files only they reached.
    maintained = maintain!;
    expect(maintained.rewrite_data_files).toEqual([expect.objectContaining({ rewritten_data_files_count: 2, added_data_files_count: 1, failed_data_files_count: 0 })]);
    expect(maintained.expire_snapshots![0]!.deleted_data_files_count).toBeGreaterThan(0);
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: TABLE });
    expect(loaded.metadata.snapshots).toHaveLength(1);
    expect(branchHead(loaded.metadata)!.summary.operation).toBe('replace');
  }, 420_000);

  it('after the owner’s maintenance the sink rolls on, the roller’s upkeep still runs, and every engine reads every row once', async () => {
    expect(maintained, 'the first test ran the maintenance').toBeDefined();
    // Spark's file and the rolled ones: the roller's compaction reads a file Java wrote.
    await roll(2);
    await readBoth(stack, ns, TABLE);
    expect(await upkeep()).toMatchObject({ outcome: 'done', data_files_before: 3, data_files_after: 1 });
    await roll(1);
    const [read, files] = await spark((['rows', 'files'] as const).map((mode) => ({ mode, namespace: ns, table: TABLE })));
    expectMetricsOf(files!, await expectSameRowsEverywhere(read!));
  }, 300_000);
});
