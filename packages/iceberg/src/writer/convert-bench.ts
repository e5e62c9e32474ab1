/**
 * Throughput of NDJSON rows -> Arrow -> Parquet for a 64 MiB roll of event-like rows.
 *
 *   npx tsx packages/iceberg/src/writer/convert-bench.ts [MiB]
 *
 * Prints wall and CPU time per phase, rows/s and peak RSS. The rows carry 17-digit doubles
 * (what JSON.stringify makes of coordinates), so the exactness checks are exercised.
 */
import { schemaFromJson } from '../spec/schema.ts';
import { writeParquet } from './parquet.ts';
import { compileRowConverter } from './row-converter.ts';

const SCHEMA = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'device_id', required: true, type: 'long' },
    { id: 2, name: 'seq', required: true, type: 'long' },
    { id: 3, name: 'who', required: false, type: 'string' },
    { id: 4, name: 'at', required: true, type: 'timestamptz' },
    { id: 5, name: 'temp', required: false, type: 'double' },
    { id: 6, name: 'ok', required: false, type: 'boolean' },
    { id: 7, name: 'tags', required: false, type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': false } },
    {
      id: 9,
      name: 'loc',
      required: false,
      type: { type: 'struct', fields: [{ id: 10, name: 'lat', required: true, type: 'double' }, { id: 11, name: 'lon', required: true, type: 'double' }] },
    },
    { id: 12, name: 'note', required: false, type: 'string' },
    { id: 13, name: 'amount', required: false, type: 'decimal(12, 2)' },
    { id: 14, name: '__ingest_ts', required: false, type: 'timestamptz' },
  ],
});

/** A small deterministic generator (mulberry32), so runs compare. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function ndjson(bytes: number): string[] {
  const next = random(7);
  const names = ['north', 'south', 'east', 'west', 'center'];
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const micros = String(Math.floor(next() * 1e6)).padStart(6, '0');
    const line = JSON.stringify({
      device_id: 100000 + Math.floor(next() * 5000),
      seq: n,
      who: names[n % 5],
      at: `${new Date(1714557600000 + n * 37).toISOString().slice(0, 19)}.${micros}Z`,
      temp: Math.round(next() * 4000) / 100,
      ok: next() < 0.9,
      tags: [`a${n % 10}`, `b${n % 7}`],
      loc: { lat: 52 + next(), lon: 13 + next() },
      note: next() < 0.3 ? null : `reading ${Math.floor(next() * 1e6)}`,
      amount: (Math.floor(next() * 1e6) / 100).toFixed(2),
    });
    lines.push(line);
    size += line.length + 1;
  }
  return lines;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return Math.round((used.user + used.system) / 1000);
}

const mib = Number(process.argv[2] ?? 64);
const lines = ndjson(mib * 2 ** 20);
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);

// A long-lived writer has compiled the wasm module already.
const warm = compileRowConverter(SCHEMA, { injected: ['__ingest_ts'] });
warm.setInjected('__ingest_ts', '2026-01-01T00:00:00Z');
warm.appendJson(lines[0] as string);
writeParquet(warm.finish(), { schema: SCHEMA });

const converter = compileRowConverter(SCHEMA, { injected: ['__ingest_ts'] });
converter.setInjected('__ingest_ts', '2026-01-01T00:00:00Z');
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let rejected = 0;
for (const line of lines) if (converter.appendJson(line) !== null) rejected++;
const table = converter.finish();
const t1 = performance.now();
const cpu1 = cpuMs(cpu0);
const written = writeParquet(table, { schema: SCHEMA });
const t2 = performance.now();
const cpu2 = cpuMs(cpu0);
clearInterval(sample);
peak = Math.max(peak, process.memoryUsage.rss());

const rate = (ms: number) => Math.round(lines.length / (ms / 1000));
console.log(
  [
    `${lines.length} rows (${mib} MiB NDJSON), ${rejected} rejected`,
    `parse+convert ${Math.round(t1 - t0)} ms wall / ${cpu1} ms cpu (${rate(t1 - t0)} rows/s)`,
    `parquet+metrics ${Math.round(t2 - t1)} ms wall / ${cpu2 - cpu1} ms cpu -> ${(written.bytes.length / 2 ** 20).toFixed(1)} MiB zstd`,
    `total ${Math.round(t2 - t0)} ms wall (${rate(t2 - t0)} rows/s), ${cpu2} ms cpu (${rate(cpu2)} rows per cpu-second)`,
    `peak RSS ${Math.round(peak / 2 ** 20)} MiB (the NDJSON text included)`,
  ].join('\n'),
);
