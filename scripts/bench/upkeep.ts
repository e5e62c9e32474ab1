/**
 * Upkeep benchmark, against the local stack (`npm start`), with an API of its own (fresh
 * database, both listeners) and the roller's pipeline in this process:
 *
 * A sink's table is rolled N times (default 1,440: a day at the 60 s floor; rolls forced one
 * after another, each of one batch of a few to a few thousand rows), with upkeep run as the
 * roller runs it at the floor: after every 60 rolls (an hour), keeping 20 snapshots, with no
 * minimum snapshot age (the day is compressed into minutes). A twin table gets the same rows
 * as the same number of fast appends, no manifest merging and no upkeep: the table as it was.
 *
 * At commits 20, 200, 720 and N it prints for both tables: PyIceberg load + full scan seconds
 * (and its planning alone), DuckDB iceberg_scan seconds, the last roll's (append's) commit time, manifests and data
 * files in the head, snapshots kept, metadata JSON bytes.
 *
 * With --partitioned both tables are partitioned by day(__ingest_ts) (the sink's `partition`,
 * applied by its first roll; the twin's spec set the same way before its first append, its
 * files split by it) and the rolls' received times are spread evenly over --days days (see
 * `restamp`); it also prints the data files per partition and, for one day, the files a scan
 * filtered on that day plans (PyIceberg plan_files) against the files the day holds.
 *
 * With --schema-changes N the owner changes both tables' schemas N times, evenly over the rolls
 * (see schema-changes.ts: columns added at the top and nested, a rename, int → long and float →
 * double, a drop), and the rows follow; at the end PyIceberg, DuckDB and Spark each read both
 * tables, every row checked by the rules and against the twin's, value for value.
 *
 *   npm run bench:upkeep [-- --rolls 1440 --every 60 --repeats 3 --rows 2,4,10,30,100,400,2000]
 *   npm run bench:upkeep -- --partitioned [--days 3 --rows 2,3,5,8] [--schema-changes 6]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CreatedSink, InternalSink } from '@tablemere/contracts';
import {
  appendDataFiles,
  bindPartitionSpec,
  commitSchemaChange,
  compileRowConverter,
  currentSchema,
  defaultPartitionSpec,
  type LoadTableResult,
  readManifestEntries,
  readManifestList,
  s3FileIOForTable,
  schemaFromJson,
  splitByPartition,
  type TableIdent,
  writeDataFile,
} from '@tablemere/iceberg';
import { BATCH_CONTENT_TYPE, BATCH_METADATA, encodeSegment, type ObjectStore, SEGMENT_CONTENT_TYPE } from '@tablemere/store';
import { createLogger } from '../../apps/roller/src/log.ts';
import { loadConfig } from '../../apps/roller/src/config.ts';
import { createRollDeps } from '../../apps/roller/src/deps.ts';
import { RollerMetrics } from '../../apps/roller/src/metrics.ts';
import { firstRollChange } from '../../apps/roller/src/roll/first-roll.ts';
import { INGEST_TS } from '../../apps/roller/src/roll/validate.ts';
import { rollSink, upkeepSink } from '../../apps/roller/src/run-sink.ts';
import { createSink, createTable, send } from '../../apps/roller/test/support/api.ts';
import { duckdbRows, pyicebergRows, type Row, spark } from '../../apps/roller/test/support/readers.ts';
import { startTestStack, suffix, type TestStack } from '../../apps/roller/test/support/stack.ts';
import { storeOptions } from '../../packages/iceberg/test/support.ts';
import { storedBatch, storedBatches } from '../../tests/support/intake.ts';
import { repoRoot } from '../../tests/support/stack.ts';
import { changeRolls, makeSchemaChange, ruleErrors, shapeRow } from './schema-changes.ts';
import { batchBody, COLUMNS } from './sensor-rows.ts';

const { values: args } = parseArgs({
  options: {
    rolls: { type: 'string', default: '1440' },
    every: { type: 'string', default: '60' },
    repeats: { type: 'string', default: '3' },
    /** Rows per roll, in turn (comma-separated). */
    rows: { type: 'string' },
    /** Both tables partitioned by day(__ingest_ts), received times spread over --days. */
    partitioned: { type: 'boolean', default: false },
    days: { type: 'string', default: '3' },
    /** The owner's schema changes, spread over the rolls (see schema-changes.ts). */
    'schema-changes': { type: 'string', default: '0' },
  },
});
const PARTITIONED = args.partitioned;
/** The sink's partition, and the twin's. */
const PARTITION = PARTITIONED ? ['day(__ingest_ts)'] : [];
const DAYS = Number(args.days);
const ROLLS = Number(args.rolls);
const EVERY = Number(args.every);
const CHECKPOINTS = [20, 200, 720, ROLLS].filter((n, i, all) => n <= ROLLS && all.indexOf(n) === i);
/** Rows per roll, in turn: by default a few to a few thousand, ~364 on average. */
/** After which rolls the schema changes are made. */
const CHANGE_ROLLS = changeRolls(Number(args['schema-changes']), ROLLS);
const ROWS = (args.rows ?? (PARTITIONED ? '2,3,5,8' : '2,4,10,30,100,400,2000')).split(',').map(Number);

interface Shape {
  scanPyiceberg: number;
  /** PyIceberg's load + scan planning alone: what the table's metadata costs a reader. */
  planPyiceberg: number;
  scanDuckdb: number;
  rows: number;
  commitMs: number;
  manifests: number;
  dataFiles: number;
  snapshots: number;
  metadataBytes: number;
}

const stack = await startTestStack();
const ns = `bench_upkeep_${suffix()}`;
const today = new Date().toISOString().slice(0, 10);
const lines: string[] = [];
/** Both tables' shapes by checkpoint, for the scan-time ratio at the end. */
const shapes = new Map<number, { ours: Shape; twin: Shape }>();
/** The sink's intake, opened once (--partitioned). */
let intakeStore: ObjectStore | undefined;
try {
  await run(stack);
} finally {
  await stack.dropNamespaces([ns]);
  await stack.stop();
}
console.log('\nFor STATE.md:');
for (const line of lines) console.log(`- ${line}`);

async function run(stack: TestStack): Promise<void> {
  await createTable(stack, ns, 'upkept', [...COLUMNS]);
  await createTable(stack, ns, 'twin', [...COLUMNS]);
  const sink = await createSink(stack, `bench_${suffix()}`, `${ns}.upkept`, { keep_snapshots: 20, min_snapshot_age_seconds: 0, ...(PARTITIONED ? { partition: PARTITION } : {}) });
  const config = loadConfig(stack.rollerEnv({ LOG_LEVEL: 'warn' }));
  const deps = createRollDeps(config, createLogger({ level: 'warn' }), new RollerMetrics({ processMetrics: false }));
  const twin = await prepareTwin(stack, { namespace: ns, name: 'twin' });
  const options = { rollerId: 'bench-upkeep', leaseSeconds: config.leaseSeconds, stop: new AbortController().signal };
  const commitMs: number[] = [];
  const twinCommitMs: number[] = [];
  /** Each upkeep's orphan-file step (reference set, listing, deletes), ms. */
  const orphanMs: number[] = [];
  let seq = 0;
  let sinceUpkeep = 0;
  /** The schema changes made before each row (by seq) was sent. */
  const appliedBySeq = new Map<number, number>();
  const started = Date.now();
  try {
    for (let roll = 1; roll <= ROLLS; roll++) {
      const rows = ROWS[roll % ROWS.length]!;
      const applied = CHANGE_ROLLS.filter((r) => r < roll).length;
      const body = JSON.stringify((JSON.parse(batchBody(seq, rows * 200 + 200).body) as Array<Record<string, unknown>>).map((row) => shapeRow(row, applied)));
      const sent = await send(stack, sink, `b-${roll}`, body);
      for (let i = 0; i < sent.accepted; i++) appliedBySeq.set(seq + i, applied);
      seq += sent.accepted;
      const receivedAt = PARTITIONED ? await restamp(deps, sink, `b-${roll}`, spreadReceived(roll)) : sent.received_at;
      const summary = await rollSink(deps, await internalSink(deps, sink), options);
      if (summary.status !== 'rolled' || summary.outcome !== 'committed') throw new Error(`roll ${roll} did not commit: ${JSON.stringify(summary)}`);
      commitMs.push(summary.phases.commit ?? NaN);
      twinCommitMs.push(await twin.append(body, receivedAt));
      sinceUpkeep++;
      for (const [k, at] of CHANGE_ROLLS.entries()) {
        if (at !== roll) continue;
        makeSchemaChange(k, [`${ns}.upkept`, `${ns}.twin`], stack.env);
        await twin.reload();
      }
      if (roll % EVERY === 0) {
        const upkept = await upkeepSink(deps, await internalSink(deps, sink), options);
        if (upkept.status !== 'upkept') throw new Error(`upkeep after roll ${roll} failed: ${JSON.stringify(upkept)}`);
        orphanMs.push(upkept.phases.orphans ?? NaN);
        sinceUpkeep = 0;
      }
      if (CHECKPOINTS.includes(roll)) {
        const [ours, theirs] = await Promise.all([shape(stack, { namespace: ns, name: 'upkept' }, commitMs), shape(stack, { namespace: ns, name: 'twin' }, twinCommitMs)]);
        const scans = scanTimes([ours.location, theirs.location]);
        report(roll, sinceUpkeep, { ...ours.shape, ...scans[0]! }, { ...theirs.shape, ...scans[1]! }, (Date.now() - started) / 1000);
        if (PARTITIONED) await reportPartitions(roll, [ours.loaded, theirs.loaded]);
      }
    }
  } finally {
    deps.close();
  }
  if (CHANGE_ROLLS.length > 0) await checkReaders(appliedBySeq);
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const first = p50(commitMs.slice(0, 50));
  const last = p50(commitMs.slice(-50));
  const twinFirst = p50(twinCommitMs.slice(0, 50));
  const twinLast = p50(twinCommitMs.slice(-50));
  console.log(`commit time p50: upkept first 50 ${first.toFixed(0)} ms, last 50 ${last.toFixed(0)} ms (${(last / first).toFixed(2)}×; goal ≤ 1.25×); twin ${twinFirst.toFixed(0)} → ${twinLast.toFixed(0)} ms (${(twinLast / twinFirst).toFixed(2)}×)`);
  if (orphanMs.length > 0) {
    const orphans = `orphan-file step of upkeep: p50 ${p50(orphanMs).toFixed(0)} ms, max ${Math.max(...orphanMs).toFixed(0)} ms over ${orphanMs.length} runs`;
    console.log(orphans);
    lines.push(`${today} bench:upkeep ${orphans}`);
  }
  const [atFirst, atLast] = [shapes.get(CHECKPOINTS[0]!), shapes.get(ROLLS)];
  if (atFirst && atLast) {
    const ratio = (key: 'scanPyiceberg' | 'scanDuckdb', s: 'ours' | 'twin') => (atLast[s][key] / atFirst[s][key]).toFixed(2);
    const line =
      `scan time at ${ROLLS} / at ${CHECKPOINTS[0]} commits: upkept PyIceberg ${ratio('scanPyiceberg', 'ours')}×, DuckDB ${ratio('scanDuckdb', 'ours')}× (goal ≤ 1.5×); ` +
      `twin PyIceberg ${ratio('scanPyiceberg', 'twin')}×, DuckDB ${ratio('scanDuckdb', 'twin')}×`;
    console.log(line);
    lines.push(`${today} bench:upkeep${PARTITIONED ? ' --partitioned' : ''} ${line}`);
  }
  lines.push(
    `${today} bench:upkeep commit time p50 over the first / last 50 of ${ROLLS} rolls: upkept ${first.toFixed(0)} / ${last.toFixed(0)} ms ` +
      `(${(last / first).toFixed(2)}×, goal ≤ 1.25×); twin ${twinFirst.toFixed(0)} / ${twinLast.toFixed(0)} ms (${(twinLast / twinFirst).toFixed(2)}×)`,
  );
}

/** The sink as the roller's listing gives it (with its warehouse's credentials). */
async function internalSink(deps: ReturnType<typeof createRollDeps>, sink: CreatedSink): Promise<InternalSink> {
  const list = await deps.api.listSinks();
  const found = list.sinks.find((s) => s.id === sink.id);
  if (!found) throw new Error(`sink ${sink.id} is not listed`);
  return found;
}

/** When roll `roll` (from 1) was received, with --partitioned: evenly over the --days days before today. */
function spreadReceived(roll: number): Date {
  const start = Date.parse(`${today}T00:00:00Z`) - DAYS * 86_400_000;
  return new Date(start + Math.floor(((roll - 1) * DAYS * 86_400_000) / ROLLS));
}

/**
 * Stamps a batch the API stored as if the intake had received it at `at`: the object holding it
 * (a segment, or a batch object of the layout before segments) is written again, its bytes
 * unchanged, with `at` as the batch's received time, which is what the roll sets `__ingest_ts`
 * from (the API takes the time from its database's clock, which a bench cannot move). The ledger
 * row keeps the real time; a forced roll does not read it.
 */
async function restamp(deps: ReturnType<typeof createRollDeps>, sink: CreatedSink, batchId: string, at: Date): Promise<string> {
  intakeStore ??= deps.intake(await internalSink(deps, sink));
  const intake = intakeStore;
  const receivedAt = at.toISOString().replace('Z', '000Z');
  const found = await storedBatch(intake, sink.id, batchId);
  if (found.segment === undefined) {
    await intake.put(found.key, found.bytes, { contentType: BATCH_CONTENT_TYPE, metadata: { ...found.metadata, [BATCH_METADATA.received]: receivedAt } });
    return receivedAt;
  }
  const together = (await storedBatches(intake, sink.id)).filter((b) => b.key === found.key);
  const segment = encodeSegment(
    sink.id,
    found.segment,
    together.map((b) => ({ id: b.id, ndjson: b.bytes, lines: b.lines, received: b.id === batchId ? receivedAt : b.received })),
  );
  await intake.put(found.key, Buffer.concat(segment.parts), { contentType: SEGMENT_CONTENT_TYPE, metadata: found.metadata });
  return receivedAt;
}

/**
 * The twin: the same columns and `__ingest_ts` (and with --partitioned the same spec), manifest
 * merging off, appended as fast appends of one file per partition.
 */
async function prepareTwin(stack: TestStack, ident: TableIdent): Promise<{ append(body: string, receivedAt: string): Promise<number>; reload(): Promise<void> }> {
  const catalog = stack.catalog;
  let loaded: LoadTableResult = await catalog.loadTable(ident);
  const change = firstRollChange(loaded.metadata, PARTITION)!;
  loaded = await commitSchemaChange(catalog, ident, loaded.metadata, { ...change, setProperties: { ...change.setProperties, 'commit.manifest-merge.enabled': 'false' } });
  const io = s3FileIOForTable(loaded, storeOptions());
  // Compiled again after each schema change (--schema-changes): the rows follow the new schema.
  const compile = () => {
    const schema = schemaFromJson(currentSchema(loaded.metadata));
    return { schema, spec: bindPartitionSpec(defaultPartitionSpec(loaded.metadata), schema), converter: compileRowConverter(schema, { injected: [INGEST_TS] }) };
  };
  let { schema, spec, converter } = compile();
  return {
    async reload() {
      loaded = await catalog.loadTable(ident);
      ({ schema, spec, converter } = compile());
    },
    async append(body, receivedAt) {
      converter.setInjected(INGEST_TS, receivedAt);
      for (const row of JSON.parse(body) as unknown[]) {
        const reject = converter.appendJson(JSON.stringify(row));
        if (reject) throw new Error(`twin row rejected: ${reject.message}`);
      }
      const rows = converter.finish();
      const parts = spec.fields.length === 0 ? [{ table: rows, partition: undefined }] : splitByPartition(rows, spec).map((p) => ({ table: p.table, partition: p }));
      const files = await Promise.all(
        parts.map((p) => writeDataFile({ io, tableLocation: loaded.metadata.location, table: p.table, parquet: { schema }, ...(p.partition ? { partition: p.partition } : {}) })),
      );
      const started = performance.now();
      await appendDataFiles({ catalog, table: ident, io, dataFiles: files });
      return performance.now() - started;
    },
  };
}

/** The table's head as readers meet it: manifests, data files, snapshots, metadata JSON size. */
async function shape(
  stack: TestStack,
  ident: TableIdent,
  commitMs: number[],
): Promise<{ location: string; loaded: LoadTableResult; shape: Omit<Shape, 'scanPyiceberg' | 'planPyiceberg' | 'scanDuckdb' | 'rows'> }> {
  const loaded = await stack.catalog.loadTable(ident);
  const io = s3FileIOForTable(loaded, storeOptions());
  try {
    const location = loaded.metadataLocation!;
    const headId = loaded.metadata['current-snapshot-id'];
    const head = loaded.metadata.snapshots?.find((s) => s['snapshot-id'] === headId);
    const manifests = head ? readManifestList(await io.get(head['manifest-list'])) : [];
    return {
      location,
      loaded,
      shape: {
        commitMs: commitMs.at(-1)!,
        manifests: manifests.length,
        dataFiles: manifests.filter((m) => m.content === 0).reduce((sum, m) => sum + m.added_files_count + m.existing_files_count, 0),
        snapshots: loaded.metadata.snapshots?.length ?? 0,
        metadataBytes: (await io.get(location)).byteLength,
      },
    };
  } finally {
    io.close();
  }
}

/** PyIceberg and DuckDB full scans of each table, medians of --repeats runs. */
function scanTimes(locations: string[]): Array<Pick<Shape, 'scanPyiceberg' | 'planPyiceberg' | 'scanDuckdb' | 'rows'>> {
  const names = [`${ns}.upkept`, `${ns}.twin`];
  const run = spawnSync(
    path.join(repoRoot, '.venv/bin/python'),
    [path.join(repoRoot, 'scripts/bench/scan_time.py'), String(args.repeats), ...names.map((name, i) => `${name}=${locations[i]}`)],
    { env: { ...process.env, ...stack.env }, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`scan_time.py failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as Record<string, { pyiceberg_s: number; plan_s: number; duckdb_s: number; pyiceberg_rows: number; duckdb_rows: number }>;
  return names.map((name) => {
    const r = result[name]!;
    if (r.pyiceberg_rows !== r.duckdb_rows) throw new Error(`${name}: PyIceberg read ${r.pyiceberg_rows} rows, DuckDB ${r.duckdb_rows}`);
    return { scanPyiceberg: r.pyiceberg_s, planPyiceberg: r.plan_s, scanDuckdb: r.duckdb_s, rows: r.pyiceberg_rows };
  });
}

function report(roll: number, sinceUpkeep: number, ours: Shape, twin: Shape, elapsed: number): void {
  shapes.set(roll, { ours, twin });
  if (ours.rows !== twin.rows) throw new Error(`at ${roll} commits the tables differ: ${ours.rows} rows upkept, ${twin.rows} in the twin`);
  const one = (label: string, s: Shape) =>
    `${label}: PyIceberg ${s.scanPyiceberg.toFixed(2)} s (planning ${s.planPyiceberg.toFixed(2)} s), DuckDB ${s.scanDuckdb.toFixed(2)} s, commit ${s.commitMs.toFixed(0)} ms, ` +
    `${s.manifests} manifests, ${s.dataFiles} data files, ${s.snapshots} snapshots, metadata ${(s.metadataBytes / 1024).toFixed(0)} KiB`;
  console.log(`[${roll} commits, ${ours.rows} rows, ${sinceUpkeep} rolls since upkeep, ${elapsed.toFixed(0)} s] ${one('upkept', ours)} | ${one('twin', twin)}`);
  lines.push(`${today} bench:upkeep${PARTITIONED ? ' --partitioned' : ''} at ${roll} commits (${ours.rows} rows; ${sinceUpkeep} rolls since the last upkeep): ${one('upkept', ours)}; ${one('twin', twin)}`);
}

/**
 * Files per day partition of both tables, and a scan filtered on one day (the middle one, or the
 * newest one the rolls reached): the files PyIceberg plans for it against the files that day holds.
 */
async function reportPartitions(roll: number, loaded: LoadTableResult[]): Promise<void> {
  const days = [...new Set(Array.from({ length: roll }, (_, i) => spreadReceived(i + 1).toISOString().slice(0, 10)))];
  const day = days[Math.min(days.length - 1, Math.floor(DAYS / 2))]!;
  const [ours, twin] = await Promise.all(loaded.map(filesPerDay));
  const plans = dayPlans(day);
  const one = (label: string, perDay: Map<string, number>, plan: DayPlan) =>
    `${label}: files per day ${[...perDay].map(([d, n]) => `${d} ${n}`).join(', ')} (at most ${Math.max(...perDay.values())}); a scan of ${day} plans ${plan.planned} of ${plan.files} files ` +
    `(the day holds ${perDay.get(day) ?? 0}), ${plan.rows} rows, ${plan.seconds.toFixed(2)} s`;
  if (plans[0]!.rows !== plans[1]!.rows) throw new Error(`the scans of ${day} differ: ${plans[0]!.rows} rows upkept, ${plans[1]!.rows} in the twin`);
  const line = `[${roll} commits] ${one('upkept', ours!, plans[0]!)} | ${one('twin', twin!, plans[1]!)}`;
  console.log(line);
  lines.push(`${today} bench:upkeep --partitioned ${line}`);
}

/** Live data files by the day of their `__ingest_ts_day` partition. */
async function filesPerDay(loaded: LoadTableResult): Promise<Map<string, number>> {
  const io = s3FileIOForTable(loaded, storeOptions());
  try {
    const head = loaded.metadata.snapshots?.find((s) => s['snapshot-id'] === loaded.metadata['current-snapshot-id']);
    const perDay = new Map<string, number>();
    for (const manifest of head ? readManifestList(await io.get(head['manifest-list'])) : []) {
      for (const entry of readManifestEntries(await io.get(manifest.manifest_path), manifest)) {
        if (entry.status === 2) continue;
        const days = entry.dataFile.partition.__ingest_ts_day as number | null | undefined;
        const key = typeof days === 'number' ? new Date(days * 86_400_000).toISOString().slice(0, 10) : 'none';
        perDay.set(key, (perDay.get(key) ?? 0) + 1);
      }
    }
    return new Map([...perDay].sort());
  } finally {
    io.close();
  }
}

interface DayPlan {
  planned: number;
  files: number;
  rows: number;
  seconds: number;
}

/** scripts/bench/day_plan.py on both tables: a scan filtered on `day` of __ingest_ts. */
function dayPlans(day: string): DayPlan[] {
  const names = [`${ns}.upkept`, `${ns}.twin`];
  const run = spawnSync(path.join(repoRoot, '.venv/bin/python'), [path.join(repoRoot, 'scripts/bench/day_plan.py'), day, ...names], { env: { ...process.env, ...stack.env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`day_plan.py failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as Record<string, DayPlan>;
  return names.map((name) => result[name]!);
}

/**
 * --schema-changes: PyIceberg, DuckDB and Spark each read both tables whole; every row of the
 * upkept table must hold by the rules (see `ruleErrors`) and equal the twin's row of its seq,
 * value for value, and no row may be missing or doubled.
 */
async function checkReaders(appliedBySeq: Map<number, number>): Promise<void> {
  const upkept = await stack.catalog.loadTable({ namespace: ns, name: 'upkept' });
  const twinTable = await stack.catalog.loadTable({ namespace: ns, name: 'twin' });
  const sparked = await spark([
    { mode: 'rows', namespace: ns, table: 'upkept' },
    { mode: 'rows', namespace: ns, table: 'twin' },
  ], stack.env);
  const readers: Array<[string, Row[], Row[]]> = [
    ['PyIceberg', await pyicebergRows(ns, 'upkept', stack.env), await pyicebergRows(ns, 'twin', stack.env)],
    ['DuckDB', await duckdbRows(upkept.metadataLocation!, stack.env), await duckdbRows(twinTable.metadataLocation!, stack.env)],
    ['Spark', sparked[0]!.rows!, sparked[1]!.rows!],
  ];
  const changes = CHANGE_ROLLS.length;
  const text = (row: Row) => JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  const results: string[] = [];
  for (const [reader, ours, theirs] of readers) {
    const bySeq = (rows: Row[]) => new Map(rows.map((row) => [Number(row['seq']), row]));
    const [mine, twins] = [bySeq(ours), bySeq(theirs)];
    const errors: string[] = [];
    if (ours.length !== appliedBySeq.size || mine.size !== appliedBySeq.size) errors.push(`${ours.length} rows (${mine.size} seqs), ${appliedBySeq.size} sent`);
    for (const [seq, applied] of appliedBySeq) {
      const row = mine.get(seq);
      if (row === undefined) {
        errors.push(`seq ${seq} missing`);
        continue;
      }
      errors.push(...ruleErrors(row, applied, changes));
      if (text(row) !== text(twins.get(seq) ?? {})) errors.push(`seq ${seq} differs from the twin: ${text(row)} vs ${text(twins.get(seq) ?? {})}`);
    }
    if (errors.length > 0) throw new Error(`${reader} read the tables wrong (${errors.length} errors): ${errors.slice(0, 5).join('; ')}`);
    results.push(`${reader} ${ours.length}`);
  }
  const line = `after ${changes} schema changes (at rolls ${CHANGE_ROLLS.join(', ')}), every row and value read exactly and as the twin's: ${results.join(', ')} rows`;
  console.log(line);
  lines.push(`${today} bench:upkeep${PARTITIONED ? ' --partitioned' : ''} --schema-changes ${changes} ${line}`);
}
