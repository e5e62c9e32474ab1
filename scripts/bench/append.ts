/**
 * Append benchmark: ~64 MiB of NDJSON (about 500k rows, 8 columns) appended to an Iceberg
 * table through @tablemere/iceberg, then the same file appended by PyIceberg to a twin table.
 * Needs the local stack (`npm start`). Prints both timings, the ratio and a line for STATE.md.
 *
 *   npm run bench:append [-- --mib 64 --keep]
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { promisify } from 'node:util';
import {
  RestCatalog,
  S3FileIO,
  appendDataFiles,
  branchHead,
  compileRowConverter,
  currentSchema,
  parseJsonRow,
  schemaFromJson,
  writeDataFile,
} from '@tablemere/iceberg';
import { repoRoot, stackEnv } from '../../tests/support/stack.ts';

const MIB = 1024 * 1024;

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'seq', required: true, type: 'long' },
    { id: 2, name: 'device', required: true, type: 'string' },
    { id: 3, name: 'ts', required: true, type: 'timestamptz' },
    { id: 4, name: 'temperature', required: false, type: 'double' },
    { id: 5, name: 'humidity', required: false, type: 'float' },
    { id: 6, name: 'battery', required: false, type: 'int' },
    { id: 7, name: 'status', required: false, type: 'string' },
    { id: 8, name: 'note', required: false, type: 'string' },
  ],
};

const STATUSES = ['ok', 'ok', 'ok', 'degraded', 'offline'];
const NOTES = ['', 'door open', 'fan high', 'calibrated', 'restarted', 'low signal'];

/** Deterministic pseudo-random numbers (mulberry32), so every run appends the same data. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes sensor-like NDJSON until the file reaches `bytes`; returns the row count. */
async function generate(file: string, bytes: number): Promise<number> {
  const random = prng(42);
  const out = createWriteStream(file);
  const start = Date.UTC(2026, 0, 1);
  let written = 0;
  let rows = 0;
  while (written < bytes) {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++, rows++) {
      const micros = String(Math.floor(random() * 1e6)).padStart(6, '0');
      const ts = new Date(start + rows * 60_000).toISOString().replace(/\.\d{3}Z$/, `.${micros}Z`);
      const row: Record<string, unknown> = {
        seq: rows,
        device: `dev-${String(Math.floor(random() * 5000)).padStart(5, '0')}`,
        ts,
        temperature: Math.round((random() * 60 - 20) * 100) / 100,
        humidity: Math.round(random() * 1000) / 10,
        battery: Math.floor(random() * 101),
        status: STATUSES[Math.floor(random() * STATUSES.length)],
        note: random() < 0.5 ? null : NOTES[Math.floor(random() * NOTES.length)],
      };
      lines.push(JSON.stringify(row));
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return rows;
}

/** Non-empty lines of a file, read in chunks (readline costs more than the split). */
async function* ndjsonLines(file: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MIB })) {
    const text = rest + decoder.write(chunk as Buffer);
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      if (end > start) yield text.slice(start, end);
      start = end + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest.length > 0) yield rest;
}

interface Run {
  rows: number;
  seconds: number;
  peakRssBytes: number;
  /** Seconds per phase, where the runner reports them. */
  phases?: Record<string, number>;
}

async function appendOurs(catalog: RestCatalog, io: S3FileIO, namespace: string, name: string, file: string): Promise<Run> {
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
  const converter = compileRowConverter(schema);
  for await (const line of ndjsonLines(file)) {
    const reject = converter.append(parseJsonRow(line));
    if (reject) throw new Error(`benchmark row rejected: ${reject.message}`);
  }
  const rows = converter.rowCount;
  const arrowTable = converter.finish();
  phase('read+convert');
  const dataFile = await writeDataFile({ io, tableLocation: base.metadata.location, table: arrowTable, parquet: { schema } });
  phase('parquet+put');
  await appendDataFiles({ catalog, table, io, base, dataFiles: [dataFile], summary: { 'bench.source': path.basename(file) } });
  phase('commit');
  const seconds = (performance.now() - started) / 1000;
  return { rows, seconds, peakRssBytes: process.resourceUsage().maxRSS * 1024, phases };
}

async function appendPyIceberg(env: Record<string, string>, namespace: string, name: string, file: string): Promise<Run> {
  const { stdout } = await promisify(execFile)(
    path.join(repoRoot, '.venv', 'bin', 'python'),
    [path.join(repoRoot, 'scripts', 'bench', 'append_pyiceberg.py'), file, namespace, name],
    { env: { ...process.env, ...env }, maxBuffer: 16 * MIB },
  );
  const result = JSON.parse(stdout) as { rows: number; seconds: number; peak_rss_bytes: number };
  return { rows: result.rows, seconds: result.seconds, peakRssBytes: result.peak_rss_bytes };
}

async function committedRecords(catalog: RestCatalog, namespace: string, name: string): Promise<string | undefined> {
  return branchHead((await catalog.loadTable({ namespace, name })).metadata)?.summary['total-records'];
}

function describe(label: string, run: Run): string {
  const rate = Math.round(run.rows / run.seconds / 1000);
  const phases = run.phases ? ` [${Object.entries(run.phases).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}]` : '';
  return `${label.padEnd(10)} ${run.rows} rows in ${run.seconds.toFixed(2)} s (${rate}k rows/s), peak RSS ${Math.round(run.peakRssBytes / MIB)} MiB${phases}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const mibArg = args.indexOf('--mib');
  const mib = mibArg >= 0 ? Number(args[mibArg + 1]) : 64;
  const keep = args.includes('--keep');
  if (!Number.isFinite(mib) || mib <= 0) throw new Error('--mib takes a positive number');

  const env = stackEnv();
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`.stack/env lacks ${name}`);
    return value;
  };
  const catalog = await RestCatalog.connect({
    uri: need('ICEBERG_REST_URI'),
    warehouse: need('ICEBERG_WAREHOUSE'),
    auth: { type: 'oauth2', clientId: need('AWS_ACCESS_KEY_ID'), clientSecret: need('AWS_SECRET_ACCESS_KEY') },
  });
  const io = new S3FileIO({
    endpoint: need('AWS_ENDPOINT_URL'),
    region: need('AWS_REGION'),
    credentials: { accessKeyId: need('AWS_ACCESS_KEY_ID'), secretAccessKey: need('AWS_SECRET_ACCESS_KEY') },
  });

  const file = path.join(os.tmpdir(), `bench-append-${process.pid}.ndjson`);
  const namespace = `bench_${Date.now().toString(36)}`;
  try {
    const rows = await generate(file, mib * MIB);
    const size = (await stat(file)).size;
    console.log(`NDJSON: ${(size / MIB).toFixed(1)} MiB, ${rows} rows, ${SCHEMA.fields.length} columns (${file})`);
    await catalog.createNamespace(namespace);
    await catalog.createTable(namespace, 'ours', { schema: SCHEMA });
    await catalog.createTable(namespace, 'twin', { schema: SCHEMA });

    const ours = await appendOurs(catalog, io, namespace, 'ours', file);
    const twin = await appendPyIceberg(env, namespace, 'twin', file);
    for (const [name, run] of [['ours', ours], ['twin', twin]] as const) {
      const total = await committedRecords(catalog, namespace, name);
      if (total !== String(rows) || run.rows !== rows) throw new Error(`${name}: committed ${total} records, expected ${rows}`);
    }
    const ratio = ours.seconds / twin.seconds;
    console.log(describe('ours', ours));
    console.log(describe('pyiceberg', twin));
    console.log(`ratio      ours/pyiceberg time ${ratio.toFixed(2)}x`);
    const date = new Date().toISOString().slice(0, 10);
    console.log(
      `STATE: ${date} \`npm run bench:append\`: ${(size / MIB).toFixed(0)} MiB NDJSON, ${rows} rows x ${SCHEMA.fields.length} cols; ` +
        `ours ${ours.seconds.toFixed(1)} s (${Math.round(ours.rows / ours.seconds / 1000)}k rows/s, peak RSS ${Math.round(ours.peakRssBytes / MIB)} MiB); ` +
        `PyIceberg ${twin.seconds.toFixed(1)} s (${Math.round(twin.rows / twin.seconds / 1000)}k rows/s, peak RSS ${Math.round(twin.peakRssBytes / MIB)} MiB); ` +
        `time ratio ours/PyIceberg ${ratio.toFixed(2)}x`,
    );
  } finally {
    await rm(file, { force: true });
    if (!keep) {
      for (const t of await catalog.listTables(namespace).catch(() => [])) {
        await catalog.dropTable({ namespace, name: t.name }, { purge: true });
      }
      await catalog.dropNamespace(namespace).catch(() => undefined);
    }
    io.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
