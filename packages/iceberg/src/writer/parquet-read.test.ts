import { type RecordBatch, Table } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { conformerFor } from './arrow-conform.ts';
import { parseJsonRow } from './json-row.ts';
import { writeParquet } from './parquet.ts';
import { parquetArrowSchema, readParquetRowGroups } from './parquet-read.ts';
import { compileRowConverter } from './row-converter.ts';
import { PARQUET_FIELD_ID } from './type-table.ts';

/** Every type this package writes. */
const SCHEMA = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'b', required: false, type: 'boolean' },
    { id: 3, name: 'i', required: false, type: 'int' },
    { id: 4, name: 'f', required: false, type: 'float' },
    { id: 5, name: 'd', required: false, type: 'double' },
    { id: 6, name: 'dec', required: false, type: 'decimal(38, 10)' },
    { id: 7, name: 'dt', required: false, type: 'date' },
    { id: 8, name: 't', required: false, type: 'time' },
    { id: 9, name: 'ts', required: false, type: 'timestamp' },
    { id: 10, name: 'tstz', required: false, type: 'timestamptz' },
    { id: 11, name: 's', required: false, type: 'string' },
    { id: 12, name: 'u', required: false, type: 'uuid' },
    { id: 13, name: 'fx', required: false, type: 'fixed[4]' },
    { id: 14, name: 'bin', required: false, type: 'binary' },
    { id: 15, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 16, name: 'a', required: true, type: 'int' }] } },
    { id: 17, name: 'li', required: false, type: { type: 'list', 'element-id': 18, element: 'string', 'element-required': false } },
    { id: 19, name: 'm', required: false, type: { type: 'map', 'key-id': 20, key: 'string', 'value-id': 21, value: 'long', 'value-required': false } },
  ],
});

const ROWS = [
  '{"id": 9223372036854775807, "b": true, "i": -2147483648, "f": 1.5, "d": "NaN", "dec": "-9999999999999999999999999999.9999999999", "dt": "9999-12-31", "t": "23:59:59.999999", "ts": "2999-12-31T23:59:59.999999", "tstz": "1900-01-01T00:00:00.000001Z", "s": "h\\u00e9llo", "u": "ffffffff-0000-0000-0000-000000000001", "fx": "3q2+7w==", "bin": "AAE=", "st": {"a": 1}, "li": ["x", null], "m": {"k": -9007199254740993}}',
  '{"id": 0}',
  '{"id": -1, "s": "", "bin": "", "li": [], "m": {}, "st": null}',
];

/** A row as plain values, 64-bit integers and bytes included, to compare tables value by value. */
function plain(batch: RecordBatch): unknown[] {
  return new Table([batch]).toArray().map((row) =>
    JSON.parse(JSON.stringify(row.toJSON(), (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : ArrayBuffer.isView(v) ? [...(v as Uint8Array)].map(String) : v))),
  );
}

describe('reading our own Parquet files back', () => {
  const converter = compileRowConverter(SCHEMA);
  for (const row of ROWS) expect(converter.append(parseJsonRow(row))).toBeNull();
  const table = converter.finish();
  const bytes = writeParquet(table, { schema: SCHEMA, rowGroupSize: 2 }).bytes;

  it('gives the Arrow schema the writer produces, field ids on every field', () => {
    const read = parquetArrowSchema(bytes);
    const shape = (fields: readonly { name: string; type: { toString(): string; children?: unknown[] }; nullable: boolean; metadata: Map<string, string> }[]): unknown =>
      fields.map((f) => [f.name, String(f.type), f.nullable, f.metadata.get(PARQUET_FIELD_ID), shape((f.type.children ?? []) as never)]);
    expect(shape(read.fields)).toEqual(shape(converter.arrowSchema.fields));
    expect(conformerFor(read, converter.arrowSchema)).not.toBeNull();
  });

  it('reads every value back, one row group at a time', () => {
    const groups = [...readParquetRowGroups(bytes)];
    expect(groups.map((g) => g.reduce((n, b) => n + b.numRows, 0))).toEqual([2, 1]);
    const conformer = conformerFor(parquetArrowSchema(bytes), converter.arrowSchema)!;
    expect(groups.flat().flatMap((batch) => plain(conformer.conform(batch)))).toEqual(table.batches.flatMap(plain));
  });
});
