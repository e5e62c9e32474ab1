import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { writeParquet } from '../writer/parquet.ts';
import { compileRowConverter } from '../writer/row-converter.ts';
import { bindPartitionSpec } from './bound-spec.ts';
import { splitByPartition } from './split.ts';
import { partitionSummaries } from './summary.ts';

const SCHEMA = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'device', required: false, type: 'string' },
    { id: 3, name: 'at', required: false, type: 'timestamptz' },
    { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false } },
    { id: 6, name: 'site', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'zone', required: false, type: 'int' }] } },
    { id: 8, name: 'amount', required: false, type: 'decimal(9, 2)' },
    { id: 9, name: 'ok', required: false, type: 'boolean' },
  ],
});

const SPEC = {
  'spec-id': 1,
  fields: [
    { 'source-id': 3, 'field-id': 1000, name: 'at_day', transform: 'day' },
    { 'source-id': 2, 'field-id': 1001, name: 'device_trunc', transform: 'truncate[4]' },
    { 'source-id': 7, 'field-id': 1002, name: 'site.zone', transform: 'identity' },
  ],
};

const ROWS = [
  { id: 1, device: 'sensor-a', at: '2026-12-01T10:00:00.000001Z', tags: ['x'], site: { zone: 3 }, amount: '1.50', ok: true },
  { id: 2, device: 'sensor-b', at: '2026-12-02T00:00:00Z', tags: [], site: { zone: 3 }, amount: null, ok: false },
  { id: 3, device: 'sens', at: '2026-12-01T23:59:59.999999Z', tags: ['y', null, 'z'], site: { zone: 3 }, amount: '-2.25', ok: null },
  { id: 4, device: null, at: '2026-12-01T01:00:00Z', site: null },
  { id: 5, device: 'sensor-c', at: '2026-12-02T05:00:00Z', tags: ['w'], site: { zone: 3 }, amount: '0.01', ok: true },
];

function table() {
  const converter = compileRowConverter(SCHEMA);
  for (const row of ROWS) expect(converter.append(row)).toBeNull();
  return converter.finish();
}

/** Rows back from a Parquet file, as plain JSON-able objects. */
function readBack(bytes: Uint8Array) {
  return tableFromIPC(readParquet(bytes).intoIPCStream()).toArray().map((r) => JSON.parse(JSON.stringify(r.toJSON(), (_, v) => (typeof v === 'bigint' ? String(v) : v))));
}

describe('splitByPartition', () => {
  const bound = bindPartitionSpec(SPEC, SCHEMA);
  const parts = splitByPartition(table(), bound);

  it('groups rows by their partition tuple, keeping their order', () => {
    const byPath = Object.fromEntries(parts.map((p) => [p.path, readBack(writeParquet(p.table, { schema: SCHEMA }).bytes).map((r) => Number(r.id))]));
    expect(byPath).toEqual({
      'at_day=2026-12-01/device_trunc=sens/site.zone=3': [1, 3],
      'at_day=2026-12-02/device_trunc=sens/site.zone=3': [2, 5],
      'at_day=2026-12-01/device_trunc=null/site.zone=null': [4],
    });
  });

  it('copies every column exactly, nested ones and microseconds included', () => {
    const first = parts.find((p) => p.path.startsWith('at_day=2026-12-01/device_trunc=sens'))!;
    const rows = readBack(writeParquet(first.table, { schema: SCHEMA }).bytes);
    expect(rows[1]).toMatchObject({ id: '3', device: 'sens', tags: ['y', null, 'z'], site: { zone: 3 }, ok: null });
    const whole = writeParquet(table(), { schema: SCHEMA });
    const split = writeParquet(first.table, { schema: SCHEMA });
    // The same microsecond bounds come out of the split rows as the whole table holds for them.
    const upper = split.metrics.upperBounds?.get(3);
    expect(upper && Buffer.from(upper).readBigInt64LE()).toBe(BigInt(Date.parse('2026-12-01T23:59:59.999Z')) * 1000n + 999n);
    expect(whole.recordCount).toBe(5);
  });

  it('gives the manifest record in Avro names and forms, and summaries over files', () => {
    const first = parts[0]!;
    expect(first.record).toEqual({ at_day: 20788, device_trunc: 'sens', site_x2Ezone: 3 });
    const [day, device, zone] = partitionSummaries(bound, parts.map((p) => p.record));
    expect(day).toMatchObject({ contains_null: false, contains_nan: null });
    expect(Buffer.from(day!.lower_bound!).readInt32LE()).toBe(20788);
    expect(Buffer.from(day!.upper_bound!).readInt32LE()).toBe(20789);
    expect(device!.contains_null).toBe(true);
    expect(Buffer.from(device!.lower_bound!).toString()).toBe('sens');
    expect(zone!.contains_null).toBe(true);
  });

  it('hands back the table itself when every row is in one partition', () => {
    const t = table();
    const byOk = splitByPartition(t, bindPartitionSpec({ 'spec-id': 2, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'b', transform: 'bucket[1]' }] }, SCHEMA));
    expect(byOk).toHaveLength(1);
    expect(byOk[0]!.table).toBe(t);
  });
});
