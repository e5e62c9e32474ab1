/**
 * Throughput of NDJSON rows -> Arrow -> Parquet for a 64 MiB roll of event-like rows, in one
 * process without storage: `appendJson` line by line, `appendNdjson` on the bytes, and the
 * converter pool (convert, and convert + Parquet on the workers).
 *
 *   npx tsx scripts/bench/convert.ts [MiB] [workers]
 *
 * Prints wall and CPU time per phase, rows/s and peak RSS. The rows carry 17-digit doubles
 * (what JSON.stringify makes of coordinates), so the exactness checks are exercised. Each
 * measurement follows a warm-up on the same rows, as in a long-running writer.
 */
import os from 'node:os';
import { compileRowConverter, convertNdjson, NdjsonConverterPool, schemaFromJson, writeParquet } from '@tablemere/iceberg';

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

interface Measured {
  wallMs: number;
  cpuMs: number;
}

/** Runs `work` twice (a warm-up, then the measured run); wall and CPU time (all threads) of the second. */
async function measure(work: () => unknown): Promise<Measured> {
  await work();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

const mib = Number(process.argv[2] ?? 64);
const workers = Number(process.argv[3] ?? os.availableParallelism());
const lines = ndjson(mib * 2 ** 20);
const text = `${lines.join('\n')}\n`;
const shared = new Uint8Array(new SharedArrayBuffer(Buffer.byteLength(text)));
shared.set(Buffer.from(text));
const options = { injected: ['__ingest_ts'] };
const chunks = [{ bytes: shared, injected: { __ingest_ts: '2026-01-01T00:00:00Z' } }];
const pool = await NdjsonConverterPool.start({ workers });

const results: Array<[string, Measured]> = [
  [
    'appendJson per line + writeParquet',
    await measure(() => {
      const converter = compileRowConverter(SCHEMA, options);
      converter.setInjected('__ingest_ts', '2026-01-01T00:00:00Z');
      for (const line of lines) converter.appendJson(line);
      return writeParquet(converter.finish(), { schema: SCHEMA });
    }),
  ],
  ['convertNdjson (bytes)', await measure(() => convertNdjson(SCHEMA, chunks, options))],
  ['convertNdjson + writeParquet', await measure(() => writeParquet(convertNdjson(SCHEMA, chunks, options).table, { schema: SCHEMA }))],
  [`pool.convert (${workers} workers)`, await measure(() => pool.convert(SCHEMA, chunks, options))],
  [`pool.writeParquet (${workers} workers)`, await measure(() => pool.writeParquet(SCHEMA, chunks, options))],
];
await pool.close();

const rate = (ms: number) => `${Math.round(lines.length / (ms / 1000) / 1000)}k rows/s`;
console.log(`${lines.length} rows (${mib} MiB NDJSON), ${os.availableParallelism()} cores, load ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
for (const [label, m] of results) {
  console.log(`${label.padEnd(40)} ${Math.round(m.wallMs).toString().padStart(6)} ms wall (${rate(m.wallMs)}), ${Math.round(m.cpuMs)} ms cpu`);
}
console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB (the NDJSON text and every path's data included)`);
