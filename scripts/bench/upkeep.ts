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
 *   npm run bench:upkeep [-- --rolls 1440 --every 60 --repeats 3 --rows 2,4,10,30,100,400,2000]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CreatedSink, InternalSink } from '@tablemere/contracts';
import {
  appendDataFiles,
  commitSchemaChange,
  compileRowConverter,
  currentSchema,
  type LoadTableResult,
  putDataFile,
  readManifestList,
  s3FileIOForTable,
  schemaFromJson,
  type TableIdent,
  writeParquet,
} from '@tablemere/iceberg';
import { createLogger } from '../../apps/roller/src/log.ts';
import { loadConfig } from '../../apps/roller/src/config.ts';
import { createRollDeps } from '../../apps/roller/src/deps.ts';
import { RollerMetrics } from '../../apps/roller/src/metrics.ts';
import { firstRollChange } from '../../apps/roller/src/roll/first-roll.ts';
import { INGEST_TS } from '../../apps/roller/src/roll/validate.ts';
import { rollSink, upkeepSink } from '../../apps/roller/src/run-sink.ts';
import { createSink, createTable, send } from '../../apps/roller/test/support/api.ts';
import { startTestStack, suffix, type TestStack } from '../../apps/roller/test/support/stack.ts';
import { storeOptions } from '../../packages/iceberg/test/support.ts';
import { repoRoot } from '../../tests/support/stack.ts';
import { batchBody, COLUMNS } from './sensor-rows.ts';

const { values: args } = parseArgs({
  options: {
    rolls: { type: 'string', default: '1440' },
    every: { type: 'string', default: '60' },
    repeats: { type: 'string', default: '3' },
    /** Rows per roll, in turn (comma-separated). */
    rows: { type: 'string', default: '2,4,10,30,100,400,2000' },
  },
});
const ROLLS = Number(args.rolls);
const EVERY = Number(args.every);
const CHECKPOINTS = [20, 200, 720, ROLLS].filter((n, i, all) => n <= ROLLS && all.indexOf(n) === i);
/** Rows per roll, in turn: by default a few to a few thousand, ~364 on average. */
const ROWS = args.rows.split(',').map(Number);

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
  const sink = await createSink(stack, `bench_${suffix()}`, `${ns}.upkept`, { keep_snapshots: 20, min_snapshot_age_seconds: 0 });
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
  const started = Date.now();
  try {
    for (let roll = 1; roll <= ROLLS; roll++) {
      const rows = ROWS[roll % ROWS.length]!;
      const { body } = batchBody(seq, rows * 200 + 200);
      const sent = await send(stack, sink, `b-${roll}`, body);
      seq += sent.accepted;
      const summary = await rollSink(deps, await internalSink(deps, sink), options);
      if (summary.status !== 'rolled' || summary.outcome !== 'committed') throw new Error(`roll ${roll} did not commit: ${JSON.stringify(summary)}`);
      commitMs.push(summary.phases.commit ?? NaN);
      twinCommitMs.push(await twin.append(body, sent.received_at));
      sinceUpkeep++;
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
      }
    }
  } finally {
    deps.close();
  }
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

/** The twin: the same columns and `__ingest_ts`, manifest merging off, appended as fast appends. */
async function prepareTwin(stack: TestStack, ident: TableIdent): Promise<{ append(body: string, receivedAt: string): Promise<number> }> {
  const catalog = stack.catalog;
  let loaded: LoadTableResult = await catalog.loadTable(ident);
  const change = firstRollChange(loaded.metadata)!;
  loaded = await commitSchemaChange(catalog, ident, loaded.metadata, { ...change, setProperties: { ...change.setProperties, 'commit.manifest-merge.enabled': 'false' } });
  const schema = schemaFromJson(currentSchema(loaded.metadata));
  const converter = compileRowConverter(schema, { injected: [INGEST_TS] });
  const io = s3FileIOForTable(loaded, storeOptions());
  return {
    async append(body, receivedAt) {
      converter.setInjected(INGEST_TS, receivedAt);
      for (const row of JSON.parse(body) as unknown[]) {
        const reject = converter.appendJson(JSON.stringify(row));
        if (reject) throw new Error(`twin row rejected: ${reject.message}`);
      }
      const file = await putDataFile({ io, tableLocation: loaded.metadata.location, written: writeParquet(converter.finish(), { schema }) });
      const started = performance.now();
      await appendDataFiles({ catalog, table: ident, io, dataFiles: [file] });
      return performance.now() - started;
    },
  };
}

/** The table's head as readers meet it: manifests, data files, snapshots, metadata JSON size. */
async function shape(stack: TestStack, ident: TableIdent, commitMs: number[]): Promise<{ location: string; shape: Omit<Shape, 'scanPyiceberg' | 'planPyiceberg' | 'scanDuckdb' | 'rows'> }> {
  const loaded = await stack.catalog.loadTable(ident);
  const io = s3FileIOForTable(loaded, storeOptions());
  try {
    const location = loaded.metadataLocation!;
    const headId = loaded.metadata['current-snapshot-id'];
    const head = loaded.metadata.snapshots?.find((s) => s['snapshot-id'] === headId);
    const manifests = head ? readManifestList(await io.get(head['manifest-list'])) : [];
    return {
      location,
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
  if (ours.rows !== twin.rows) throw new Error(`at ${roll} commits the tables differ: ${ours.rows} rows upkept, ${twin.rows} in the twin`);
  const one = (label: string, s: Shape) =>
    `${label}: PyIceberg ${s.scanPyiceberg.toFixed(2)} s (planning ${s.planPyiceberg.toFixed(2)} s), DuckDB ${s.scanDuckdb.toFixed(2)} s, commit ${s.commitMs.toFixed(0)} ms, ` +
    `${s.manifests} manifests, ${s.dataFiles} data files, ${s.snapshots} snapshots, metadata ${(s.metadataBytes / 1024).toFixed(0)} KiB`;
  console.log(`[${roll} commits, ${ours.rows} rows, ${sinceUpkeep} rolls since upkeep, ${elapsed.toFixed(0)} s] ${one('upkept', ours)} | ${one('twin', twin)}`);
  lines.push(`${today} bench:upkeep at ${roll} commits (${ours.rows} rows; ${sinceUpkeep} rolls since the last upkeep): ${one('upkept', ours)}; ${one('twin', twin)}`);
}
