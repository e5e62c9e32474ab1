import { tableFromIPC, TimeUnit, type Timestamp } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { parseJsonRow } from './json-row.ts';
import { writeParquet } from './parquet.ts';
import { compileRowConverter } from './row-converter.ts';

/** The v3 types with a JSON form: nanosecond timestamps, and unknown (always null). */
const SCHEMA = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'at', required: false, type: 'timestamptz_ns' },
    { id: 3, name: 'local', required: false, type: 'timestamp_ns' },
    { id: 4, name: 'nothing', required: false, type: 'unknown' },
    { id: 5, name: 'doc', required: false, type: 'variant' },
  ],
});

describe('v3 types', () => {
  it('keeps nanoseconds exactly, as Parquet TIMESTAMP(NANOS)', () => {
    const converter = compileRowConverter(SCHEMA);
    expect(converter.append(parseJsonRow('{"id": 1, "at": "2026-12-01T08:00:00.123456789+01:00", "local": "1969-12-31T23:59:59.999999999", "nothing": null}'))).toBeNull();
    expect(converter.append(parseJsonRow('{"id": 2, "at": "2262-04-11T23:47:16.854775807Z"}'))).toBeNull();
    const table = converter.finish();
    expect((table.schema.fields[1]!.type as Timestamp).unit).toBe(TimeUnit.NANOSECOND);
    const { bytes } = writeParquet(table, { schema: SCHEMA });
    const columns = parquetMetadata(bytes).schema.slice(1);
    expect(columns.map((c) => c.name)).toEqual(['id', 'at', 'local']);
    expect(columns[1]!.logical_type).toEqual({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' });
    expect(columns[2]!.logical_type).toEqual({ type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' });
    const back = tableFromIPC(readParquet(bytes).intoIPCStream());
    const raw = (i: number, row: number) => (back.getChildAt(i)!.data[0]!.values as BigInt64Array)[row];
    expect(raw(1, 0)).toBe(BigInt(Date.parse('2026-12-01T07:00:00Z')) * 1_000_000n + 123_456_789n);
    expect(raw(2, 0)).toBe(-1n);
    expect(raw(1, 1)).toBe(9_223_372_036_854_775_807n);
  });

  it('refuses a tenth fraction digit, a value for unknown, and a variant value', () => {
    const converter = compileRowConverter(SCHEMA);
    expect(converter.append(parseJsonRow('{"id": 1, "at": "2026-12-01T08:00:00.1234567891Z"}'))).toMatchObject({ reason: 'type_mismatch', field: 'at' });
    expect(converter.append(parseJsonRow('{"id": 1, "nothing": 5}'))).toMatchObject({ reason: 'type_mismatch', field: 'nothing', expected: 'unknown (always null)' });
    expect(converter.append(parseJsonRow('{"id": 1, "doc": {"a": 1}}'))).toMatchObject({ reason: 'unsupported_type', field: 'doc' });
  });
});
