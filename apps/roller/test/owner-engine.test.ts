import type { CreatedSink } from '@tablemere/contracts';
import { applyTransform, bindPartitionSpec, branchHead, currentSchema, defaultPartitionSpec, schemaFromJson, type TableMetadata } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, getSink, listSinks, send, updateSink } from './support/api.ts';
import { readBoth, rejectsOf } from './support/expect.ts';
import { ownerCreates, partitioning, spark, type Row } from './support/readers.ts';
import { logLines, runCli, startRoller, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { liveDataFiles } from './support/upkeep-harness.ts';

/**
 * The owner's engine owns the table: after the owner partitions a sink's table (here with
 * PyIceberg: identity, bucket[16], truncate[4] and day of the arrival stamp), rolls go on, one
 * data file per partition value, and every engine reads every row once with files pruned by
 * partition. Java (Spark, Iceberg's reference runtime) reads the partition tuple of every row's
 * file as the values say, and Iceberg's Java generic reader gives the Java class the spec maps
 * each type to, for every column type a table created through the API can have. A format v3
 * table the owner made rolls with row lineage Java reads, and rows holding a type this writer
 * cannot write (geometry) are rejected while the rest of their batch commits; upkeep on it
 * compacts its files and expires snapshots, and every row keeps its id and sequence number.
 * A sink given a partition at create commits the spec with `__ingest_ts` at its first roll, so
 * its first files are already partitioned, as Java reads them (rows' and files' partition tuples).
 */
let stack: TestStack;
let ns: string;
let sink: CreatedSink;
const PARTITIONED = 'readings';
const LINEAGE = 'lineage';
let lineageSink: CreatedSink;
/** The `_row_id` of each row of the v3 table by its x, as its roll's commit assigned it. */
let lineageIds: Map<number, number>;
/** The `_last_updated_sequence_number` of each row of the v3 table by its x: its roll's sequence number. */
let lineageSequences: Map<number, number>;
const TYPED = 'every_type';
/** A table the sink partitions from its first roll: by day of arrival, a bucket and a nested field. */
const FIRST = 'first_roll_parted';
const FIRST_PARTITION = ['day(__ingest_ts)', 'bucket[4](x)', 'identity(meta.kind)'];
/** The rows the first roll of that sink committed. */
const firstRows = Array.from({ length: 12 }, (_, i) => ({ x: i, ...(i % 3 === 2 ? {} : { meta: { kind: i % 2 === 0 ? 'a' : 'b' } }) }));
let batches = 0;
const sent: number[] = [];

const row = (x: number) => ({ x, device: `dev-${x % 5}`, zone: x % 3 });

beforeAll(async () => {
  stack = await startTestStack();
  ns = `owner_${suffix()}`;
  await createTable(stack, ns, PARTITIONED, [
    { name: 'x', type: 'long', required: true },
    { name: 'device', type: 'string' },
    { name: 'zone', type: 'int' },
  ]);
  sink = await createSink(stack, `owner_${suffix()}`, `${ns}.${PARTITIONED}`);
}, 120_000);

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** One batch of `xs` sent and rolled through the operator command; answers the roll's summary. */
async function sendAndRoll(target: CreatedSink, rows: object[]): Promise<Record<string, unknown>> {
  await send(stack, target, `b-${++batches}`, rows);
  const run = await runCli(['roll', target.id], stack.rollerEnv());
  expect(run.code, run.stderr).toBe(0);
  return summaries(run)[0]!;
}

async function rollRows(xs: number[]): Promise<Record<string, unknown>> {
  sent.push(...xs);
  return sendAndRoll(sink, xs.map(row));
}

const xsOf = (rows: Row[]) => rows.map((r) => Number(r.x)).sort((a, b) => a - b);

describe('a sink on a table its owner partitions', () => {
  it('rolls on after the owner adds identity, bucket[16], truncate[4] and day(__ingest_ts) fields', async () => {
    expect(await rollRows([1, 2, 3])).toMatchObject({ outcome: 'committed', rows: 3 });
    const added = await partitioning(['partition', ns, PARTITIONED, 'zone:identity', 'x:bucket[16]', 'device:truncate[4]', '__ingest_ts:day']);
    expect(added.spec_id).toBe(1);

    const xs = Array.from({ length: 40 }, (_, i) => 100 + i);
    expect(await rollRows(xs)).toMatchObject({ outcome: 'committed', rows: 40 });
    expect(await rollRows([200, 201, 202])).toMatchObject({ outcome: 'committed', rows: 3 });

    expect(xsOf(await readBoth(stack, ns, PARTITIONED))).toEqual([...sent].sort((a, b) => a - b));
    // One file per partition value: the 40 rows spread over many (zone × bucket of x × day).
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: PARTITIONED });
    expect(Number(branchHead(loaded.metadata)!.summary['added-data-files'])).toBeGreaterThan(1);
    expect(Number(branchHead(loaded.metadata)!.summary['total-data-files'])).toBeGreaterThan(10);
  }, 240_000);

  it('lets PyIceberg prune by partition, and the filtered scans find the right rows', async () => {
    for (const [column, value, expected] of [
      ['zone', 1, sent.filter((x) => x % 3 === 1)],
      ['x', 117, [117]],
      ['device', 'dev-2', sent.filter((x) => x % 5 === 2)],
    ] as const) {
      const plan = await partitioning(['plan', ns, PARTITIONED, column, JSON.stringify(value)]);
      expect({ column, xs: xsOf(plan.rows as Row[]) }).toEqual({ column, xs: [...expected].sort((a, b) => a - b) });
      expect(plan.planned as number).toBeLessThan(plan.files as number);
    }
  }, 120_000);

  it('upkeep compacts the partitioned table per partition and expires its snapshots', async () => {
    await updateSink(stack, sink.id, { keep_snapshots: 1, min_snapshot_age_seconds: 0 });
    const run = await runCli(['upkeep', sink.id], stack.rollerEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ outcome: 'done' });
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: PARTITIONED });
    expect(loaded.metadata.snapshots).toHaveLength(1);
    // Small files of one partition became one (upkeep rewrites two or more); the one file of the
    // spec before the owner's is left as it is (a group of one), as Java's rewrite leaves it.
    const files = (await liveDataFiles(loaded)).filter((f) => f.specId === loaded.metadata['default-spec-id']);
    expect(new Set(files.map((f) => JSON.stringify(f.partition))).size).toBe(files.length);
    expect(xsOf(await readBoth(stack, ns, PARTITIONED))).toEqual([...sent].sort((a, b) => a - b));
  }, 120_000);
});

describe('a sink on a format v3 table', () => {
  it('rolls with row lineage, rejecting the rows with a geometry value and committing the rest of their batch', async () => {
    await ownerCreates(ns, LINEAGE, 3, ['x:long', 'note:string']);
    // A v3 type only the owner's engine writes, added as that engine would.
    await setShapeColumn(true);
    lineageSink = await createSink(stack, `v3_${suffix()}`, `${ns}.${LINEAGE}`);

    const first = await sendAndRoll(lineageSink, [{ x: 1, note: 'a' }, { x: 2, shape: 'POINT (1 2)' }, { x: 3, note: 'c', shape: null }]);
    expect(first).toMatchObject({ outcome: 'committed', rows: 2, rejected_rows: 1, reasons: { unsupported_type: 1 } });
    const rejected = await rejectsOf(stack, lineageSink.id, `b-${batches}`);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ reason: 'unsupported_type', row: { x: 2, shape: 'POINT (1 2)' } });
    expect(await sendAndRoll(lineageSink, [{ x: 4 }, { x: 5, note: 'e' }])).toMatchObject({ outcome: 'committed', rows: 2 });

    const loaded = await stack.catalog.loadTable({ namespace: ns, name: LINEAGE });
    expect(loaded.metadata['format-version']).toBe(3);
    const head = branchHead(loaded.metadata)!;
    // The first roll's snapshot took ids 0-1 (and its schema change none); the second 2-3.
    expect(Number(head['first-row-id'])).toBeGreaterThanOrEqual(2);
    expect(Number(loaded.metadata['next-row-id'])).toBe(Number(head['first-row-id']) + Number(head['added-rows']));
    expect((await readBoth(stack, ns, LINEAGE)).map((r) => Number(r.x))).toEqual([1, 3, 4, 5]);
    // Spark 3.5 has no geometry type and cannot load the table while it has one: the owner
    // drops the column (read by Spark below), and the sink rolls on.
    await setShapeColumn(false);
    expect(await sendAndRoll(lineageSink, [{ x: 6 }])).toMatchObject({ outcome: 'committed', rows: 1 });
  }, 240_000);

  it('upkeep compacts the v3 table, every row keeping its lineage, and expires snapshots down to the keep', async () => {
    expect(await sendAndRoll(lineageSink, [{ x: 7 }])).toMatchObject({ outcome: 'committed', rows: 1 });
    const before = (await stack.catalog.loadTable({ namespace: ns, name: LINEAGE })).metadata;
    const rolled = [...before.snapshots!].sort((a, b) => Number(a['sequence-number']) - Number(b['sequence-number']));
    expect(rolled).toHaveLength(4);
    // Each roll's rows took its snapshot's ids in the order sent, and its sequence number;
    // Spark reads both after the compaction moved every row into one file.
    const firstId = (roll: number) => Number(rolled[roll]!['first-row-id']);
    lineageIds = new Map([[1, firstId(0)], [3, firstId(0) + 1], [4, firstId(1)], [5, firstId(1) + 1], [6, firstId(2)], [7, firstId(3)]]);
    const sequence = (roll: number) => Number(rolled[roll]!['sequence-number']);
    lineageSequences = new Map([[1, sequence(0)], [3, sequence(0)], [4, sequence(1)], [5, sequence(1)], [6, sequence(2)], [7, sequence(3)]]);

    await updateSink(stack, lineageSink.id, { keep_snapshots: 2, min_snapshot_age_seconds: 0 });
    const run = await runCli(['upkeep', lineageSink.id], stack.rollerEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({
      outcome: 'done',
      compaction_skipped: null,
      data_files_before: 4,
      rewritten_files: 4,
      rewritten_rows: 6,
      data_files_after: 1,
      expired_snapshots: 3,
      snapshots_kept: 2,
    });
    const after = (await stack.catalog.loadTable({ namespace: ns, name: LINEAGE })).metadata;
    expect(after['format-version']).toBe(3);
    const compaction = branchHead(after)!;
    expect(compaction.summary.operation).toBe('replace');
    // The replace took ids for its new file's 6 rows (Java's manifest list writer does the same); its rows keep theirs.
    expect(compaction['first-row-id']).toBe(before['next-row-id']);
    expect(Number(after['next-row-id'])).toBe(Number(before['next-row-id']) + 6);
    expect(after.snapshots!.map((s) => s['snapshot-id'])).toEqual([rolled[3]!['snapshot-id'], compaction['snapshot-id']]);
    expect((await readBoth(stack, ns, LINEAGE)).map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual([1, 3, 4, 5, 6, 7]);
  }, 120_000);
});

/** Microseconds since the epoch of a row's `__ingest_ts` as the readers print it. */
function ingestMicros(row: Row): bigint {
  return BigInt(Date.parse(row.__ingest_ts as string)) * 1000n;
}

/**
 * A row's partition tuple under the table's default spec, as Spark prints `_partition` (days as
 * dates), from its source values by field id; `only` keeps some fields (by name).
 */
function expectedPartition(metadata: TableMetadata, source: Record<number, unknown>, only?: string[]): Row {
  const spec = bindPartitionSpec(defaultPartitionSpec(metadata), schemaFromJson(currentSchema(metadata)));
  const fields = spec.fields.filter((f) => only === undefined || only.includes(f.name));
  return Object.fromEntries(
    fields.map((f) => {
      const value = applyTransform(f.transform, f.source, (source[f.sourceId] ?? null) as never);
      return [f.name, f.transform.kind === 'day' && value !== null ? new Date((value as number) * 86_400_000).toISOString().slice(0, 10) : value];
    }),
  );
}

/** The owner's engine adds (or drops) a geometry column `shape` on the v3 table, as one schema change. */
async function setShapeColumn(present: boolean): Promise<void> {
  const base = (await stack.catalog.loadTable({ namespace: ns, name: LINEAGE })).metadata;
  const schema = currentSchema(base);
  const others = schema.fields.filter((f) => f.name !== 'shape');
  const fields = present ? [...others, { id: base['last-column-id'] + 1, name: 'shape', required: false, type: 'geometry' }] : others;
  await stack.catalog.commitTable(
    { namespace: ns, name: LINEAGE },
    {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] }],
      updates: [
        { action: 'add-schema', schema: { ...schema, 'schema-id': Math.max(...base.schemas.map((s) => s['schema-id'])) + 1, fields } },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    },
  );
}

describe('a sink partitioned from its first roll', () => {
  it('commits its spec with __ingest_ts, so the first roll already writes one file per partition of it', async () => {
    await stack.catalog.createTable(ns, FIRST, {
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'x', type: 'long', required: true },
          { id: 2, name: 'meta', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'kind', type: 'string', required: false }] } },
        ],
      },
      properties: { 'format-version': '2' },
    });
    const parted = await createSink(stack, `first_${suffix()}`, `${ns}.${FIRST}`, { partition: FIRST_PARTITION });
    expect(parted.partition).toEqual(FIRST_PARTITION);
    expect(await sendAndRoll(parted, firstRows)).toMatchObject({ outcome: 'committed', rows: firstRows.length });

    const { metadata } = await stack.catalog.loadTable({ namespace: ns, name: FIRST });
    const ingestTs = currentSchema(metadata).fields.find((f) => f.name === '__ingest_ts')!;
    expect(defaultPartitionSpec(metadata).fields).toEqual([
      { 'source-id': ingestTs.id, 'field-id': 1000, name: '__ingest_ts_day', transform: 'day' },
      { 'source-id': 1, 'field-id': 1001, name: 'x_bucket_4', transform: 'bucket[4]' },
      { 'source-id': 3, 'field-id': 1002, name: 'meta_kind', transform: 'identity' },
    ]);
    // One snapshot, the roll's: the spec came in the first roll's schema commit, before any file.
    expect(metadata.snapshots).toHaveLength(1);
    const tuples = new Set(firstRows.map((r) => JSON.stringify(expectedPartition(metadata, { 1: BigInt(r.x), 3: r.meta?.kind ?? null }, ['x_bucket_4', 'meta_kind']))));
    expect(Number(branchHead(metadata)!.summary['added-data-files'])).toBe(tuples.size);
    expect(xsOf(await readBoth(stack, ns, FIRST))).toEqual(firstRows.map((r) => r.x));
    // PyIceberg plans only the bucket's files for one x.
    const plan = await partitioning(['plan', ns, FIRST, 'x', '5']);
    expect(xsOf(plan.rows as Row[])).toEqual([5]);
    expect(plan.planned as number).toBeLessThan(plan.files as number);
  }, 120_000);
});

/** Every column type the API creates tables with, and a value of each. */
const TYPED_COLUMNS = [
  ['c_boolean', 'boolean', true],
  ['c_int', 'int', -7],
  ['c_long', 'long', 1234567890123],
  ['c_float', 'float', 1.5],
  ['c_double', 'double', 2.25],
  ['c_decimal', 'decimal(10,2)', '12.34'],
  ['c_date', 'date', '2026-12-01'],
  ['c_time', 'time', '22:31:08.000001'],
  ['c_timestamp', 'timestamp', '2026-12-01T08:00:00.000001'],
  ['c_timestamptz', 'timestamptz', '2026-12-01T08:00:00.000001Z'],
  ['c_string', 'string', 'é🌍'],
  ['c_uuid', 'uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'],
  ['c_fixed', 'fixed[3]', Buffer.from([1, 2, 3]).toString('base64')],
  ['c_binary', 'binary', Buffer.from([0, 255]).toString('base64')],
] as const;

describe('Java engines on the sink’s tables', () => {
  it('Spark reads each row’s partition tuple as the values give it, and the Java generic reader returns the spec’s Java classes', async () => {
    await createTable(stack, ns, TYPED, TYPED_COLUMNS.map(([name, type]) => ({ name, type })));
    const typed = await createSink(stack, `typed_${suffix()}`, `${ns}.${TYPED}`);
    expect(await sendAndRoll(typed, [Object.fromEntries(TYPED_COLUMNS.map(([name, , value]) => [name, value]))])).toMatchObject({ outcome: 'committed', rows: 1 });

    const [partitionRows, javaTypes, lineage, firstRollRows, firstRollFiles] = await spark([
      { mode: 'partition_rows', namespace: ns, table: PARTITIONED },
      { mode: 'java_types', namespace: ns, table: TYPED },
      { mode: 'lineage', namespace: ns, table: LINEAGE },
      { mode: 'partition_rows', namespace: ns, table: FIRST },
      { mode: 'partition_files', namespace: ns, table: FIRST },
    ]);

    // Row lineage as Java reads it: every row of the v3 table has the id and the sequence number
    // its roll's commit gave it, not changed by the upkeep that compacted the rolls' files into
    // one and expired their snapshots.
    const lineageRows = lineage!.rows!;
    expect(lineageRows.map((r) => Number(r.x)).sort()).toEqual([1, 3, 4, 5, 6, 7]);
    expect(new Map(lineageRows.map((r) => [Number(r.x), Number(r._row_id)]))).toEqual(lineageIds);
    expect(new Map(lineageRows.map((r) => [Number(r.x), Number(r._last_updated_sequence_number)]))).toEqual(lineageSequences);

    // Java's view of each row's partition against the transforms applied to the row's values.
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: PARTITIONED });
    const partitioned = partitionRows!.rows!.filter((r) => !sent.slice(0, 3).includes(Number(r.x)));
    expect(xsOf(partitioned)).toEqual(sent.slice(3).sort((a, b) => a - b));
    for (const r of partitioned) {
      const expected = expectedPartition(loaded.metadata, { 1: BigInt(r.x as number), 2: r.device, 3: r.zone, 4: ingestMicros(r) });
      expect({ x: r.x, partition: r._partition }).toEqual({ x: r.x, partition: expected });
    }

    // The sink partitioned from its first roll: every row's tuple as Java reads it, and every
    // file's, one file per tuple holding that tuple's rows, all of the spec the first roll added.
    const first = (await stack.catalog.loadTable({ namespace: ns, name: FIRST })).metadata;
    const ingestTsId = currentSchema(first).fields.find((f) => f.name === '__ingest_ts')!.id;
    expect(xsOf(firstRollRows!.rows!)).toEqual(firstRows.map((r) => r.x));
    const perTuple = new Map<string, number>();
    for (const r of firstRollRows!.rows!) {
      const expected = expectedPartition(first, { 1: BigInt(r.x as number), 3: (r.meta as Row | null)?.kind ?? null, [ingestTsId]: ingestMicros(r) });
      expect({ x: r.x, partition: r._partition }).toEqual({ x: r.x, partition: expected });
      perTuple.set(JSON.stringify(expected), (perTuple.get(JSON.stringify(expected)) ?? 0) + 1);
    }
    const files = firstRollFiles!.partition_files!;
    expect(files.every((f) => f.spec_id === first['default-spec-id'])).toBe(true);
    expect(new Map(files.map((f) => [JSON.stringify(f.partition), Number(f.record_count)]))).toEqual(perTuple);
    expect(files).toHaveLength(perTuple.size);

    const classes = javaTypes!.java_types!;
    expect(Object.keys(classes).sort()).toEqual([...TYPED_COLUMNS.map(([name]) => name as string), '__ingest_ts'].sort());
    for (const [column, seen] of Object.entries(classes)) expect({ column, ...seen }).toEqual({ column, ...seen, ok: true });
  }, 420_000);
});

describe('a stalled sink', () => {
  it('shows why its rolls fail within one tick, in the sink, the stalled list, a metric and a log line, and clears on the next good roll', async () => {
    await createTable(stack, ns, 'stalls', [{ name: 'x', type: 'long', required: true }]);
    const stalling = await createSink(stack, `stalls_${suffix()}`, `${ns}.stalls`, { roll_seconds: 60 });
    const ident = { namespace: ns, name: 'stalls' };
    const setMergeCount = (value: string) =>
      stack.catalog.commitTable(ident, { requirements: [], updates: [{ action: 'set-properties', updates: { 'commit.manifest.min-count-to-merge': value } }] });
    // The owner's engine sets a property the append cannot read: every roll fails.
    await setMergeCount('many');
    await send(stack, stalling, `s-${++batches}`, [{ x: 1 }]);
    expect((await getSink(stack, stalling.id)).roll_error).toBeNull();

    const roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_PORT: '0', TABLEMERE_ROLLER_TICK_SECONDS: '0.5', TABLEMERE_ROLLER_SURVEY_SECONDS: '0.5' }));
    try {
      // Not due for 60 s by age: the operator's roll-now makes the first attempt, the service the next.
      const first = await runCli(['roll', stalling.id], stack.rollerEnv());
      expect(summaries(first)[0]).toMatchObject({ status: 'failed', reason: 'table_unsupported' });
      let shown = await getSink(stack, stalling.id);
      expect(shown.roll_error).toMatchObject({ code: 'table_unsupported', attempts: 1 });
      expect(shown.roll_error!.message).toMatch(/commit.manifest.min-count-to-merge must be an integer/);
      const since = shown.roll_error!.since;
      const second = await runCli(['roll', stalling.id], stack.rollerEnv());
      expect(summaries(second)[0]).toMatchObject({ status: 'failed' });
      shown = await getSink(stack, stalling.id);
      expect(shown.roll_error).toMatchObject({ attempts: 2, since });
      expect(shown.state).toBe('active');
      expect(shown.lag.batches_waiting).toBe(1);

      const stalled = await listSinks(stack, { stalled: 'true' });
      expect(stalled.map((s) => s.id)).toEqual([stalling.id]);
      const third = await runCli(['roll', stalling.id], stack.rollerEnv());
      expect(third.code).toBe(1);
      const said = logLines(third.stdout + third.stderr).find((l) => String(l.msg).startsWith('sink stalled'));
      expect(said).toMatchObject({ sink: stalling.id, reason: 'table_unsupported', failed_rolls: 3, since });

      const address = () => logLines(roller.output()).find((l) => typeof l.address === 'string')?.address as string | undefined;
      for (let i = 0; i < 40 && address() === undefined; i++) await new Promise((r) => setTimeout(r, 250));
      let metrics = '';
      for (let i = 0; i < 40 && !metrics.includes(`tablemere_roller_sink_failing_rolls{sink="${stalling.id}"} 3`); i++) {
        await new Promise((r) => setTimeout(r, 250));
        metrics = await (await fetch(`${address()}/metrics`)).text();
      }
      expect(metrics).toContain(`tablemere_roller_sink_failing_rolls{sink="${stalling.id}"} 3`);
      expect(metrics).not.toContain(`tablemere_roller_sink_failing_rolls{sink="${sink.id}"}`);

      // The owner fixes the property: the next roll goes through and the sink says so.
      await setMergeCount('100');
      const fixed = await runCli(['roll', stalling.id], stack.rollerEnv());
      expect(summaries(fixed)[0]).toMatchObject({ status: 'rolled', outcome: 'committed', rows: 1 });
      shown = await getSink(stack, stalling.id);
      expect(shown.roll_error).toBeNull();
      expect(await listSinks(stack, { stalled: 'true' })).toEqual([]);
    } finally {
      roller.child.kill('SIGTERM');
      await roller.finished;
    }
  }, 240_000);
});
