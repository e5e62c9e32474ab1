/**
 * Append benchmark: ~64 MiB of NDJSON (about 450k rows, 8 columns) appended to an Iceberg
 * table through @tablemere/iceberg, and the same file appended by PyIceberg to a twin table.
 * Needs the local stack (`npm start`). Prints every run, min and median per side (wall and
 * CPU seconds), the ratios by wall time and per CPU-second, and a line for STATE.md.
 *
 *   npm run bench:append [-- --mib 64 --runs 3 --workers 2 --warm 16 --keep]
 *
 * Both sides run as their own process and are timed alike: from loading the table to the
 * committed snapshot (read the file, parse and convert, Parquet zstd, upload, commit). What a
 * long-lived writer has done before is outside the timing on both sides: imports and the
 * catalog client (PyIceberg); the converter pool's workers and a warm-up on other rows, so the
 * JIT and WebAssembly code is compiled as in a running roller (ours; `--warm 0` for a cold
 * start). `--workers 0` converts on the main thread alone. On a shared machine, compare the
 * CPU seconds too: they move less with the load than the wall time.
 */
import { execFile } from 'node:child_process';
import { closeSync, createWriteStream, fstatSync, openSync, readSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import {
  appendDataFiles,
  branchHead,
  convertNdjson,
  currentSchema,
  type NdjsonChunkResult,
  NdjsonConverterPool,
  putDataFile,
  RestCatalog,
  S3FileIO,
  schemaFromJson,
  type WrittenParquet,
  writeParquet,
} from '@tablemere/iceberg';
import { repoRoot, stackEnv } from '../../tests/support/stack.ts';
import { SENSOR_SCHEMA as SCHEMA, sensorRows } from './sensor-rows.ts';

const MIB = 1024 * 1024;
const SELF = fileURLToPath(import.meta.url);


/** Writes the benchmark's NDJSON file of about `bytes`; returns the row count. */
async function generate(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  let rows = 0;
  for (const piece of sensorRows(42, bytes)) {
    rows += piece.rows;
    if (!out.write(piece.text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return rows;
}

/** The file's bytes in shared memory, which the pool's workers read in place. */
function readShared(file: string): Uint8Array {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = new Uint8Array(new SharedArrayBuffer(size));
    for (let at = 0; at < size; ) {
      const read = readSync(fd, bytes, at, size - at, at);
      if (read === 0) throw new Error(`${file} ended early`);
      at += read;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

interface Run {
  rows: number;
  seconds: number;
  peak_rss_bytes: number;
  /** Seconds per phase. */
  phases: Record<string, number>;
  /** CPU seconds (all threads) in the timed part: what a busy machine cannot hide. */
  cpu_seconds: number;
  /** Seconds spent before the timing starts (pool start, warm-up), for the record. */
  setup?: number;
}

function connection(env: Record<string, string>): { catalog: () => Promise<RestCatalog>; io: () => S3FileIO } {
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`.stack/env lacks ${name}`);
    return value;
  };
  return {
    catalog: () =>
      RestCatalog.connect({
        uri: need('ICEBERG_REST_URI'),
        warehouse: need('ICEBERG_WAREHOUSE'),
        auth: { type: 'oauth2', clientId: need('AWS_ACCESS_KEY_ID'), clientSecret: need('AWS_SECRET_ACCESS_KEY') },
      }),
    io: () =>
      new S3FileIO({
        endpoint: need('AWS_ENDPOINT_URL'),
        region: need('AWS_REGION'),
        credentials: { accessKeyId: need('AWS_ACCESS_KEY_ID'), secretAccessKey: need('AWS_SECRET_ACCESS_KEY') },
      }),
  };
}

/**
 * Gets the writer to where a long-lived one is: compiled code for the conversion and the
 * Parquet writer in every thread that runs them (V8 optimises hot code as it runs, and
 * compiles WebAssembly lazily). `mib` of other rows than the measured ones, 0 for a cold start.
 */
async function warmUp(pool: NdjsonConverterPool | undefined, mib: number): Promise<void> {
  if (mib <= 0) return;
  const schema = schemaFromJson({ ...SCHEMA, 'schema-id': 0 });
  // One chunk in shared memory, as the measured run reads its file: no copies on the way.
  const pieces = [...sensorRows(7, mib * MIB)].map((piece) => piece.text);
  const bytes = new Uint8Array(new SharedArrayBuffer(pieces.reduce((sum, text) => sum + Buffer.byteLength(text), 0)));
  let at = 0;
  for (const text of pieces) at += Buffer.from(bytes.buffer, at).write(text);
  if (pool) await pool.writeParquet(schema, [{ bytes }]);
  else writeParquet(convertNdjson(schema, [{ bytes }]).table, { schema });
}

/** Our side, in its own process (`--child`): prints one Run as JSON. */
async function appendOurs(file: string, namespace: string, name: string, workers: number, warmMiB: number): Promise<Run> {
  const connect = connection(stackEnv());
  const catalog = await connect.catalog();
  const io = connect.io();
  const setupStarted = performance.now();
  const pool = workers > 0 ? await NdjsonConverterPool.start({ workers }) : undefined;
  await warmUp(pool, warmMiB);
  const setup = (performance.now() - setupStarted) / 1000;

  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  let mark = started;
  const phases: Record<string, number> = {};
  const phase = (label: string): void => {
    const now = performance.now();
    phases[label] = (now - mark) / 1000;
    mark = now;
  };
  const table = { namespace, name };
  const base = await catalog.loadTable(table);
  const schema = schemaFromJson(currentSchema(base.metadata));
  phase('load');
  const bytes = readShared(file);
  phase('read');
  const chunks = [{ bytes }];
  let written: WrittenParquet | undefined;
  let result: NdjsonChunkResult | undefined;
  if (pool) {
    // The workers convert and write row groups; the main thread joins them.
    ({ parquet: written, chunks: [result] } = await pool.writeParquet(schema, chunks));
    phase('convert+parquet');
  } else {
    const converted = convertNdjson(schema, chunks);
    result = converted.chunks[0];
    phase('convert');
    written = writeParquet(converted.table, { schema });
    phase('parquet');
  }
  if (!result?.ok || result.rejects.length > 0 || written === undefined) throw new Error(`benchmark rows rejected: ${JSON.stringify(result).slice(0, 500)}`);
  const dataFile = await putDataFile({ io, tableLocation: base.metadata.location, written });
  phase('put');
  await appendDataFiles({ catalog, table, io, base, dataFiles: [dataFile], summary: { 'bench.source': path.basename(file) } });
  phase('commit');
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  const peak = process.resourceUsage().maxRSS * 1024;
  await pool?.close();
  io.close();
  return { rows: Number(written.recordCount), seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, peak_rss_bytes: peak, phases, setup };
}

async function runChild(program: string, args: string[], env: Record<string, string>): Promise<Run> {
  const { stdout } = await promisify(execFile)(program, args, { env: { ...process.env, ...env }, maxBuffer: 16 * MIB });
  return JSON.parse(stdout) as Run;
}

function ours(file: string, namespace: string, name: string, workers: number, warm: number): Promise<Run> {
  return runChild(process.execPath, ['--import', 'tsx', SELF, '--child', file, namespace, name, '--workers', String(workers), '--warm', String(warm)], {});
}

function pyiceberg(env: Record<string, string>, file: string, namespace: string, name: string): Promise<Run> {
  return runChild(path.join(repoRoot, '.venv', 'bin', 'python'), [path.join(repoRoot, 'scripts', 'bench', 'append_pyiceberg.py'), file, namespace, name], env);
}

async function committedRecords(catalog: RestCatalog, namespace: string, name: string): Promise<string | undefined> {
  return branchHead((await catalog.loadTable({ namespace, name })).metadata)?.summary['total-records'];
}

function describe(label: string, run: Run, load: string): string {
  const rate = Math.round(run.rows / run.seconds / 1000);
  const phases = Object.entries(run.phases)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
  const setup = run.setup === undefined ? '' : `, setup ${run.setup.toFixed(2)} s untimed`;
  return `${label.padEnd(10)} ${run.seconds.toFixed(2)} s (${rate}k rows/s), cpu ${run.cpu_seconds.toFixed(2)} s, peak RSS ${Math.round(run.peak_rss_bytes / MIB)} MiB [${phases}]${setup}; load ${load}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      mib: { type: 'string', default: '64' },
      runs: { type: 'string', default: '3' },
      workers: { type: 'string', default: String(os.availableParallelism()) },
      warm: { type: 'string', default: '16' },
      keep: { type: 'boolean', default: false },
    },
  });
  const mib = Number(args.mib);
  const runs = Number(args.runs);
  const workers = Number(args.workers);
  const warm = Number(args.warm);
  if (!Number.isFinite(mib) || mib <= 0) throw new Error('--mib takes a positive number');
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a positive integer');
  if (!Number.isInteger(workers) || workers < 0) throw new Error('--workers takes 0 or more');
  if (!Number.isFinite(warm) || warm < 0) throw new Error('--warm takes 0 or more MiB');

  const env = stackEnv();
  const connect = connection(env);
  const catalog = await connect.catalog();
  const file = path.join(os.tmpdir(), `bench-append-${process.pid}.ndjson`);
  const namespace = `bench_${Date.now().toString(36)}`;
  try {
    const rows = await generate(file, mib * MIB);
    const size = (await stat(file)).size;
    console.log(
      `NDJSON: ${(size / MIB).toFixed(1)} MiB, ${rows} rows, ${SCHEMA.fields.length} columns; ours with ${workers} worker(s), ${warm} MiB warm-up; ${os.availableParallelism()} cores`,
    );
    await catalog.createNamespace(namespace);
    const results: { ours: Run[]; twin: Run[] } = { ours: [], twin: [] };
    for (let r = 1; r <= runs; r++) {
      await catalog.createTable(namespace, `ours_${r}`, { schema: SCHEMA });
      await catalog.createTable(namespace, `twin_${r}`, { schema: SCHEMA });
      // Alternate who goes first, so neither always meets a warmer (or busier) machine.
      const order = r % 2 === 1 ? (['ours', 'twin'] as const) : (['twin', 'ours'] as const);
      for (const side of order) {
        const load = loadAverage();
        const run = side === 'ours' ? await ours(file, namespace, `ours_${r}`, workers, warm) : await pyiceberg(env, file, namespace, `twin_${r}`);
        const total = await committedRecords(catalog, namespace, `${side}_${r}`);
        if (total !== String(rows) || run.rows !== rows) throw new Error(`${side} run ${r}: committed ${total} records, expected ${rows}`);
        results[side].push(run);
        console.log(describe(`${side === 'ours' ? 'ours' : 'pyiceberg'} #${r}`, run, load));
      }
    }
    const summary = (list: Run[]) => {
      const seconds = list.map((run) => run.seconds);
      const cpu = list.map((run) => run.cpu_seconds);
      return {
        min: Math.min(...seconds),
        median: median(seconds),
        cpuMin: Math.min(...cpu),
        cpuMax: Math.max(...cpu),
        cpuMedian: median(cpu),
        rss: Math.max(...list.map((run) => run.peak_rss_bytes)),
      };
    };
    const o = summary(results.ours);
    const t = summary(results.twin);
    const speed = (s: number) => `${Math.round(rows / s / 1000)}k rows/s`;
    const cpu = (s: ReturnType<typeof summary>) => `CPU ${s.cpuMin.toFixed(2)}-${s.cpuMax.toFixed(2)} s (median ${s.cpuMedian.toFixed(2)} s)`;
    console.log(`ours       min ${o.min.toFixed(2)} s, median ${o.median.toFixed(2)} s (${speed(o.median)}), ${cpu(o)}, peak RSS ${Math.round(o.rss / MIB)} MiB`);
    console.log(`pyiceberg  min ${t.min.toFixed(2)} s, median ${t.median.toFixed(2)} s (${speed(t.median)}), ${cpu(t)}, peak RSS ${Math.round(t.rss / MIB)} MiB`);
    console.log(`ratio      PyIceberg time / ours: ${(t.median / o.median).toFixed(2)}x by median, ${(t.min / o.min).toFixed(2)}x by min (goal >= 1.0x)`);
    // CPU seconds per side: what the roll costs a busy machine, and less moved by the load than wall time.
    const perCpu = t.cpuMedian / o.cpuMedian;
    console.log(`ratio      PyIceberg CPU-s / ours: ${perCpu.toFixed(2)}x by median, ${(t.cpuMin / o.cpuMin).toFixed(2)}x by min (goal >= 1.0x)`);
    const date = new Date().toISOString().slice(0, 10);
    console.log(
      `STATE: ${date} \`npm run bench:append\` (${runs} runs, ${workers} workers, ${warm} MiB warm-up, load ${loadAverage()}): ${(size / MIB).toFixed(0)} MiB NDJSON, ${rows} rows x ${SCHEMA.fields.length} cols; ` +
        `ours median ${o.median.toFixed(2)} s / min ${o.min.toFixed(2)} s (${speed(o.median)}, ${cpu(o)}, peak RSS ${Math.round(o.rss / MIB)} MiB); ` +
        `PyIceberg median ${t.median.toFixed(2)} s / min ${t.min.toFixed(2)} s (${speed(t.median)}, ${cpu(t)}, peak RSS ${Math.round(t.rss / MIB)} MiB); ` +
        `ratio ours/PyIceberg ${(t.median / o.median).toFixed(2)}x by median wall, ${perCpu.toFixed(2)}x per CPU-s (median)`,
    );
  } finally {
    await rm(file, { force: true });
    if (!args.keep) {
      for (const t of await catalog.listTables(namespace).catch(() => [])) {
        await catalog.dropTable({ namespace, name: t.name }, { purge: true });
      }
      await catalog.dropNamespace(namespace).catch(() => undefined);
    }
  }
}

async function child(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { child: { type: 'boolean' }, workers: { type: 'string', default: '0' }, warm: { type: 'string', default: '0' } },
    allowPositionals: true,
  });
  const [file, namespace, name] = positionals;
  if (!values.child || file === undefined || namespace === undefined || name === undefined) throw new Error('usage: --child <file> <namespace> <table>');
  process.stdout.write(JSON.stringify(await appendOurs(file, namespace, name, Number(values.workers), Number(values.warm))));
}

(process.argv.includes('--child') ? child() : main()).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
