/**
 * The NDJSON converter of this checkout against another checkout's (e.g. a git worktree of
 * main, with its dependencies installed), on the append benchmark's rows, in one process:
 *
 *   npx tsx scripts/bench/convert-ab.ts <other checkout> [--injected] [--rounds 6] [--mib 64] [--chunk-mib 2]
 *
 * Both converters take the same chunks of NDJSON in turns, the order swapped every chunk, so
 * that a machine whose speed drifts (a shared VM's does, by a third within seconds) weighs on
 * both alike. Prints each side's CPU per file and their ratio. `--injected` adds `__ingest_ts`
 * as the roller does (an injected column, set per chunk). Two copies of the same code came out
 * at ratios of 0.87–1.04 on the 2-core VM (each process optimises each copy its own way), so
 * run it several times and trust only a difference larger than that.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as ours from '@tablemere/iceberg';
import { SENSOR_SCHEMA, sensorRows } from './sensor-rows.ts';

type Iceberg = typeof ours;

const MIB = 1024 * 1024;
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    injected: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '6' },
    mib: { type: 'string', default: '64' },
    'chunk-mib': { type: 'string', default: '2' },
  },
});
const other = positionals[0];
if (other === undefined) throw new Error('usage: convert-ab.ts <other checkout> [--injected] [--rounds N] [--mib N] [--chunk-mib N]');
const theirs = (await import(path.resolve(other, 'packages/iceberg/src/index.ts'))) as Iceberg;

const fields = [...SENSOR_SCHEMA.fields, ...(args.injected ? [{ id: 9, name: '__ingest_ts', required: false, type: 'timestamptz' }] : [])];
const options = args.injected ? { injected: ['__ingest_ts'] } : {};
const converters = [ours, theirs].map((lib) => lib.compileRowConverter(lib.schemaFromJson({ type: 'struct', 'schema-id': 0, fields }), options));

/** The rows as chunks of whole lines of about `--chunk-mib` each. */
const chunks: Buffer[] = [];
let pieces: string[] = [];
let size = 0;
for (const piece of sensorRows(42, Number(args.mib) * MIB)) {
  pieces.push(piece.text);
  size += piece.text.length;
  if (size >= Number(args['chunk-mib']) * MIB) {
    chunks.push(Buffer.from(pieces.join('')));
    pieces = [];
    size = 0;
  }
}
if (pieces.length > 0) chunks.push(Buffer.from(pieces.join('')));

const cpuMicros = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const rounds = Number(args.rounds);
const totals = [0, 0];
// Round -1 warms both up and is not counted.
for (let round = -1; round < rounds; round++) {
  chunks.forEach((chunk, i) => {
    for (const side of (i + round) % 2 === 0 ? [0, 1] : [1, 0]) {
      const converter = converters[side]!;
      if (args.injected) converter.setInjected('__ingest_ts', `2026-12-01T10:00:${String(i % 60).padStart(2, '0')}.123456Z`);
      const started = cpuMicros();
      const result = converter.appendNdjson(chunk);
      if (round >= 0) totals[side]! += cpuMicros() - started;
      if (!result.ok || result.rejects.length > 0) throw new Error(`side ${side} did not take chunk ${i}: ${JSON.stringify(result).slice(0, 300)}`);
    }
  });
  for (const converter of converters) converter.finish();
}
const mib = chunks.reduce((sum, chunk) => sum + chunk.length, 0) / MIB;
const [mine, their] = totals.map((micros) => micros / rounds / 1000) as [number, number];
console.log(`${mib.toFixed(1)} MiB in ${chunks.length} chunks, ${rounds} rounds${args.injected ? ', with an injected column' : ''}`);
console.log(`this checkout:  ${mine.toFixed(0)} ms of CPU per file`);
console.log(`${other}: ${their.toFixed(0)} ms of CPU per file`);
console.log(`ratio (this / other): ${(mine / their).toFixed(3)}`);
