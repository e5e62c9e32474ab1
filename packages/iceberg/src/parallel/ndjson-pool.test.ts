import { type Table, tableFromIPC } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINES, SCHEMA } from '../writer/fixtures/ndjson-corpus.ts';
import { convertNdjson, type NdjsonChunk } from '../writer/ndjson-chunks.ts';
import { writeParquet } from '../writer/parquet.ts';
import { NdjsonConverterPool } from './ndjson-pool.ts';
import { planTasks } from './plan.ts';

const INJECTED = { injected: ['ingested'] };

/** The corpus `copies` times over (ids shifted), then `plain` rows that take the fast path, then `extra` lines. */
function corpus(copies: number, shift: number, plain = 0, extra: string[] = []): Uint8Array {
  const lines: string[] = [];
  for (let copy = 0; copy < copies; copy++) {
    for (const line of LINES) lines.push(line.replace(/"id":\s*(-?\d+)/, (_m, id: string) => `"id":${Number(id) + (shift + copy) * 1000}`));
  }
  for (let n = 0; n < plain; n++) lines.push(`{"id":${shift * 1000 + n},"name":"row ${n}","score":${n / 8},"at":"2024-05-01T10:00:${String(n % 60).padStart(2, '0')}.${n % 1000}Z"}`);
  return Buffer.from(`${[...lines, ...extra].join('\n')}\n`);
}

const at = (day: number) => ({ ingested: `2024-01-${String(day).padStart(2, '0')}T00:00:00Z` });

/** Chunks that make the pool cut the big ones into pieces on several workers, readable or not. */
const CHUNKS: NdjsonChunk[] = [
  { bytes: corpus(1, 0), injected: at(1) },
  { bytes: corpus(1, 1, 30_000), injected: at(2) },
  { bytes: corpus(2, 2000, 0, ['{"id": 1,']), injected: at(3) },
  { bytes: new Uint8Array(0), injected: at(4) },
  { bytes: corpus(1, 3000, 20_000, ['{"id": 2} trailing']), injected: at(5) },
  { bytes: Buffer.concat([corpus(1, 4000), Buffer.from([0xff, 0x0a])]), injected: at(6) },
  { bytes: corpus(3, 5000), injected: at(7) },
];

function rowsOf(table: Table): string {
  return JSON.stringify(table.toArray().map((row) => row.toJSON()), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

describe('NdjsonConverterPool', () => {
  let pool: NdjsonConverterPool;
  const single = convertNdjson(SCHEMA, CHUNKS, INJECTED);

  beforeAll(async () => {
    pool = await NdjsonConverterPool.start({ workers: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('cuts the chunks into tasks at line ends, covering every byte once', () => {
    const tasks = planTasks(CHUNKS, 2);
    expect(tasks.length).toBeGreaterThanOrEqual(4);
    const covered = CHUNKS.map(() => 0);
    for (const piece of tasks.flat()) {
      const bytes = (CHUNKS[piece.chunk] as NdjsonChunk).bytes;
      expect(piece.start).toBe(covered[piece.chunk]);
      expect(piece.end === bytes.length || bytes[piece.end - 1] === 0x0a).toBe(true);
      covered[piece.chunk] = piece.end;
    }
    expect(covered).toEqual(CHUNKS.map((chunk) => chunk.bytes.length));
    // Both big chunks are cut: the unreadable one's rows are then dropped from several tasks.
    for (const chunk of [1, 4]) expect(tasks.filter((task) => task.some((piece) => piece.chunk === chunk)).length).toBeGreaterThan(1);
  });

  it('converts to the rows and chunk results of convertNdjson', async () => {
    const parallel = await pool.convert(SCHEMA, CHUNKS, INJECTED);
    expect(parallel.chunks).toEqual(single.chunks);
    expect(parallel.rows).toBe(single.rows);
    expect(parallel.table.schema.fields.map((f) => f.name)).toEqual(single.table.schema.fields.map((f) => f.name));
    expect(rowsOf(parallel.table)).toBe(rowsOf(single.table));
    // The checks below mean something only if the chunks turned out as intended.
    expect(single.chunks.map((c) => (c.ok ? 'ok' : c.error.kind))).toEqual(['ok', 'ok', 'not_json', 'ok', 'not_json', 'not_utf8', 'ok']);
    expect(single.chunks[4]).toMatchObject({ error: { line: LINES.length + 20_000 } });
  });

  it('writes the Parquet file and metrics of writeParquet', async () => {
    const parallel = await pool.writeParquet(SCHEMA, CHUNKS, INJECTED);
    const whole = writeParquet(single.table, { schema: SCHEMA });
    expect(parallel.chunks).toEqual(single.chunks);
    expect(parallel.rows).toBe(single.rows);
    const written = parallel.parquet!;
    expect(written.recordCount).toBe(whole.recordCount);
    expect(parquetMetadata(written.bytes).row_groups.length).toBeGreaterThan(1);
    expect(rowsOf(tableFromIPC(readParquet(written.bytes).intoIPCStream()))).toBe(rowsOf(tableFromIPC(readParquet(whole.bytes).intoIPCStream())));
    const { columnSizes: _a, splitOffsets: _b, ...metrics } = written.metrics;
    const { columnSizes: _c, splitOffsets: _d, ...wholeMetrics } = whole.metrics;
    expect(metrics).toEqual(wholeMetrics);
  });

  it('gives no file when no row was taken', async () => {
    const none = await pool.writeParquet(SCHEMA, [{ bytes: Buffer.from('{"id":null}\n\n'), injected: at(1) }], INJECTED);
    expect(none.parquet).toBeUndefined();
    expect(none.rows).toBe(0);
    expect(none.chunks[0]).toMatchObject({ ok: true, rows: 0, rejects: [{ line: 0, reject: { reason: 'missing_required' } }] });
  });

  it('refuses chunks without their injected values before any work, and stays usable', async () => {
    await expect(pool.convert(SCHEMA, [{ bytes: Buffer.from('{"id":1}') }], INJECTED)).rejects.toThrow(TypeError);
    await expect(pool.convert(SCHEMA, [{ bytes: Buffer.from('{"id":1}'), injected: { ingested: 'yesterday' } }], INJECTED)).rejects.toThrow(TypeError);
    const again = await pool.convert(SCHEMA, [{ bytes: Buffer.from('{"id":1}'), injected: at(1) }], INJECTED);
    expect(again.rows).toBe(1);
  });
});
