import { Field, LargeList, LargeUtf8, makeData, RecordBatch, Schema, Struct, Table, Timestamp, TimeUnit, Int64 } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { conformerFor } from './arrow-conform.ts';
import { compileRowConverter } from './row-converter.ts';
import { PARQUET_FIELD_ID } from './type-table.ts';

const iceberg = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 's', required: false, type: 'string' },
    { id: 2, name: 'li', required: false, type: { type: 'list', 'element-id': 3, element: 'long', 'element-required': true } },
    { id: 4, name: 'ts', required: true, type: 'timestamptz' },
  ],
});
const target = compileRowConverter(iceberg).arrowSchema;

const id = (n: number) => new Map([[PARQUET_FIELD_ID, String(n)]]);

/** What PyIceberg writes for the same schema: 64-bit offsets, another spelling of UTC, columns in another order. */
function otherWriter(options: { elementId?: number; tsNullable?: boolean } = {}): RecordBatch {
  const fields = [
    new Field('ts', new Timestamp(TimeUnit.MICROSECOND, '+00:00'), options.tsNullable ?? false, id(4)),
    new Field('s', new LargeUtf8(), true, id(1)),
    new Field('li', new LargeList(new Field('element', new Int64(), false, id(options.elementId ?? 3))), true, id(2)),
  ];
  const ts = makeData({ type: fields[0]!.type as Timestamp, length: 2, data: new BigInt64Array([1n, 2n]) });
  const s = makeData({
    type: new LargeUtf8(),
    length: 2,
    nullCount: 1,
    nullBitmap: new Uint8Array([0b01]),
    valueOffsets: new BigInt64Array([0n, 3n, 3n]),
    data: new Uint8Array(Buffer.from('abc')),
  });
  const li = makeData({
    type: fields[2]!.type as LargeList<Int64>,
    length: 2,
    valueOffsets: new BigInt64Array([0n, 2n, 3n]),
    child: makeData({ type: new Int64(), length: 3, data: new BigInt64Array([7n, -8n, 2n ** 62n]) }),
  });
  const schema = new Schema(fields);
  return new RecordBatch(schema, makeData({ type: new Struct(fields), length: 2, children: [ts, s, li] }));
}

describe('conformerFor', () => {
  it('re-encodes another writer\'s representation into the target schema, value for value', () => {
    const batch = otherWriter();
    const conformer = conformerFor(batch.schema, target);
    expect(conformer).not.toBeNull();
    const conformed = conformer!.conform(batch);
    const shape = (schema: Schema) => schema.fields.map((f) => [f.name, String(f.type), f.nullable, f.metadata.get(PARQUET_FIELD_ID)]);
    expect(shape(conformed.schema)).toEqual(shape(target));
    expect(String(conformed.data.type)).toBe(String(new Struct(target.fields)));
    const table = new Table([conformed]);
    expect(table.toArray().map((row) => row.toJSON())).toEqual([
      { s: 'abc', li: expect.anything(), ts: 0.001 },
      { s: null, li: expect.anything(), ts: 0.002 },
    ]);
    expect(table.getChild('li')!.toArray().map((v: Iterable<bigint>) => [...v])).toEqual([[7n, -8n], [2n ** 62n]]);
    expect(table.getChild('ts')!.data[0]!.values).toEqual(new BigInt64Array([1n, 2n]));
  });

  it('refuses a file it cannot read through the target: another list element id, an optional field now required, a required field missing', () => {
    expect(conformerFor(otherWriter({ elementId: 9 }).schema, target)).toBeNull();
    expect(conformerFor(otherWriter({ tsNullable: true }).schema, target)).toBeNull();
    expect(conformerFor(new Schema(otherWriter().schema.fields.slice(1)), target)).toBeNull();
  });

  it('reads a missing optional field as null, unless the target gives it an initial default', () => {
    const batch = otherWriter();
    const withoutList = new RecordBatch(new Schema(batch.schema.fields.slice(0, 2)), makeData({ type: new Struct(batch.schema.fields.slice(0, 2)), length: 2, children: batch.data.children.slice(0, 2) }));
    const conformer = conformerFor(withoutList.schema, target)!;
    expect(new Table([conformer.conform(withoutList)]).getChild('li')!.toArray()).toEqual([null, null]);
    expect(conformerFor(withoutList.schema, target, new Set(['2']))).toBeNull();
  });

  it('leaves out the file fields the target dropped', () => {
    const empty = compileRowConverter(schemaFromJson({ type: 'struct', fields: [] })).arrowSchema;
    expect(conformerFor(otherWriter().schema, empty)!.conform(otherWriter()).numCols).toBe(0);
  });
});
