import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { parseJsonRow } from './json-row.ts';
import { writeParquet } from './parquet.ts';
import { compileRowConverter } from './row-converter.ts';

const SCHEMA = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'at', required: false, type: 'timestamptz' },
    { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false } },
    { id: 6, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'zip', required: true, type: 'int' }] } },
    { id: 8, name: 'attrs', required: false, type: { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, value: 'long', 'value-required': false } },
    { id: 11, name: 'amount', required: false, type: 'decimal(20, 2)' },
    { id: 12, name: 'score', required: false, type: 'double' },
    { id: 13, name: 'uid', required: false, type: 'uuid' },
    { id: 14, name: 'ok', required: false, type: 'boolean' },
    { id: 15, name: 'blob', required: false, type: 'binary' },
  ],
});

const ROWS = [
  '{"id": 9223372036854775807, "name": "b", "at": "2024-05-01T10:00:00.000001Z", "tags": ["x", null], "address": {"zip": 1}, "attrs": {"k": 9007199254740993}, "amount": "-1234567.91", "score": 2.5, "uid": "ffffffff-0000-0000-0000-000000000000", "ok": true, "blob": "AAE="}',
  '{"id": -9223372036854775808, "name": "a", "at": "1969-12-31T23:59:59.999999Z", "score": "NaN", "uid": "00000000-0000-0000-0000-000000000001", "ok": false}',
  '{"id": 0, "name": null, "tags": [], "address": null, "attrs": {}, "amount": 0.5, "score": -0.0}',
];

function written(options: Parameters<typeof writeParquet>[1] = { schema: SCHEMA }) {
  const converter = compileRowConverter(SCHEMA);
  for (const row of ROWS) expect(converter.append(parseJsonRow(row))).toBeNull();
  return writeParquet(converter.finish(), options);
}

const le64 = (n: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, n, true);
  return b;
};

describe('writeParquet', () => {
  it('puts the Iceberg field id on every Parquet field, nested ones included', () => {
    const { bytes } = written();
    const schema = parquetMetadata(bytes).schema;
    const ids = Object.fromEntries(schema.slice(1).map((e) => [e.name, e.field_id]));
    expect(ids).toMatchObject({ id: 1, name: 2, at: 3, tags: 4, element: 5, address: 6, zip: 7, attrs: 8, key: 9, value: 10, amount: 11, score: 12, uid: 13, ok: 14, blob: 15 });
    // Only the repeated wrapper groups of lists and maps (which Iceberg does not number) lack ids.
    const withoutId = schema.slice(1).filter((e) => e.field_id === undefined);
    expect(withoutId.every((e) => e.repetition_type === 'REPEATED')).toBe(true);
    expect(schema.find((e) => e.name === 'id')?.repetition_type).toBe('REQUIRED');
    expect(schema.find((e) => e.name === 'name')?.repetition_type).toBe('OPTIONAL');
    expect(schema.find((e) => e.name === 'at')?.logical_type).toEqual({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' });
    // The spec maps uuid to fixed_len_byte_array(16) with the UUID logical type.
    expect(schema.find((e) => e.name === 'uid')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } });
  });

  it('stores the values exactly, as an independent reader sees them', async () => {
    // hyparquet reads snappy but not zstd without an add-on.
    const { bytes, recordCount } = written({ schema: SCHEMA, compression: 'snappy' });
    expect(recordCount).toBe(3);
    const rows = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      parsers: { timestampFromMicroseconds: (micros: bigint) => micros } as never,
    });
    expect(rows.map((r) => r.id)).toEqual([9223372036854775807n, -9223372036854775808n, 0n]);
    expect(rows.map((r) => r.at)).toEqual([1714557600000001n, -1n, null]);
    expect(rows[0]?.tags).toEqual(['x', null]);
    expect(rows[0]?.attrs).toEqual({ k: 9007199254740993n });
    expect(rows[0]?.address).toEqual({ zip: 1 });
    expect(rows[2]?.address).toBeNull();
    expect(rows.map((r) => r.amount)).toEqual([-1234567.91, null, 0.5]);
    expect(rows[1]?.score).toBeNaN();
    expect(rows.map((r) => r.uid)).toEqual(['ffffffff-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000001', null]);
  });

  it('reports exact counts and bounds for top-level primitive columns', () => {
    const { metrics, bytes } = written();
    expect(metrics.valueCounts?.get(1)).toBe(3n);
    expect(metrics.nullValueCounts?.get(1)).toBe(0n);
    expect(metrics.nullValueCounts?.get(2)).toBe(1n);
    expect(metrics.nullValueCounts?.get(11)).toBe(1n);
    expect(metrics.nanValueCounts?.get(12)).toBe(1n);
    expect(metrics.lowerBounds?.get(1)).toEqual(le64(-9223372036854775808n));
    expect(metrics.upperBounds?.get(1)).toEqual(le64(9223372036854775807n));
    expect(metrics.lowerBounds?.get(3)).toEqual(le64(-1n));
    expect(Buffer.from(metrics.lowerBounds?.get(2) ?? []).toString()).toBe('a');
    expect(Buffer.from(metrics.upperBounds?.get(2) ?? []).toString()).toBe('b');
    // -0.0 is the lower bound (widened from 0), 2.5 the upper; NaN is never a bound.
    expect(new DataView(metrics.lowerBounds!.get(12)!.buffer).getFloat64(0, true)).toBe(-0);
    expect(new DataView(metrics.upperBounds!.get(12)!.buffer).getFloat64(0, true)).toBe(2.5);
    expect([...(metrics.lowerBounds?.get(13) ?? [])]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect([...(metrics.lowerBounds?.get(14) ?? [])]).toEqual([0]);
    expect([...(metrics.upperBounds?.get(14) ?? [])]).toEqual([1]);
    // decimal: unscaled -123456791 and 50, minimal big-endian two's complement.
    expect(Buffer.from(metrics.lowerBounds!.get(11)!).toString('hex')).toBe('f8a432e9');
    expect([...(metrics.upperBounds?.get(11) ?? [])]).toEqual([50]);
    // Nested fields and binary get no counts or bounds; column sizes cover every leaf.
    for (const id of [4, 5, 6, 7, 8, 9, 10]) expect(metrics.valueCounts?.has(id)).toBe(false);
    expect(metrics.lowerBounds?.has(15)).toBe(false);
    expect([...(metrics.columnSizes?.keys() ?? [])].sort((a, b) => a - b)).toEqual([1, 2, 3, 5, 7, 9, 10, 11, 12, 13, 14, 15]);
    const footer = parquetMetadata(bytes);
    expect(metrics.splitOffsets).toEqual([footer.row_groups[0]?.columns[0]?.meta_data?.dictionary_page_offset ?? footer.row_groups[0]?.columns[0]?.meta_data?.data_page_offset]);
  });

  it('leaves the dictionary out of columns whose values are all different', () => {
    const schema = schemaFromJson({
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'kind', required: false, type: 'string' },
        { id: 3, name: 'at', required: false, type: 'timestamptz' },
        { id: 4, name: 'shard', required: false, type: 'int' },
      ],
    });
    const converter = compileRowConverter(schema);
    const base = Date.parse('2024-05-01T00:00:00Z');
    for (let n = 0; n < 3000; n++) {
      converter.append({ id: n, kind: ['a', 'b', 'c'][n % 3], at: new Date(base + n * 1000).toISOString(), shard: (n * 7919) % 500 });
    }
    const encodings = (parquetMetadata(writeParquet(converter.finish(), { schema }).bytes).row_groups[0]?.columns ?? []).map((c) => c.meta_data?.encodings ?? []);
    const dictionary = encodings.map((list) => list.includes('RLE_DICTIONARY'));
    // Ids and instants never repeat; 500 shards do, within the first 1,024 values.
    expect(dictionary).toEqual([false, true, false, true]);
  });

  it('writes the requested codec, and only counts without a schema', () => {
    const { bytes, metrics } = written({ compression: 'snappy' });
    expect(parquetMetadata(bytes).row_groups[0]?.columns[0]?.meta_data?.codec).toBe('SNAPPY');
    expect(metrics.nullValueCounts?.get(2)).toBe(1n);
    expect(metrics.lowerBounds?.size).toBe(0);
    expect(parquetMetadata(written().bytes).row_groups[0]?.columns[0]?.meta_data?.codec).toBe('ZSTD');
  });
});
