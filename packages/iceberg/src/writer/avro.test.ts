import { Readable } from 'node:stream';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { readAvroFile, writeAvroFile } from './avro.ts';

const SCHEMA = JSON.stringify({
  type: 'record',
  name: 'row',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'tags', type: ['null', { type: 'array', 'element-id': 3, items: 'string' }], default: null, 'field-id': 2 },
    {
      name: 'sizes',
      type: ['null', { type: 'array', logicalType: 'map', items: { type: 'record', name: 'k5_v6', fields: [{ name: 'key', type: 'int', 'field-id': 5 }, { name: 'value', type: 'bytes', 'field-id': 6 }] } }],
      default: null,
      'field-id': 4,
    },
  ],
});

/** avsc's own container decoder, with a bigint long of its own: independent of our reader. */
async function decodeWithAvsc(bytes: Uint8Array): Promise<{ header: Record<string, string>; records: unknown[] }> {
  const long = avro.types.LongType.__with({
    fromBuffer: (b: Buffer) => b.readBigInt64LE(),
    toBuffer: (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(n);
      return b;
    },
    fromJSON: BigInt,
    toJSON: String,
    isValid: (n: unknown) => typeof n === 'bigint',
    compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
  });
  const decoder = new avro.streams.BlockDecoder({ parseHook: (schema: unknown) => avro.Type.forSchema(schema as avro.Schema, { registry: { long } }) });
  const header: Record<string, string> = {};
  decoder.on('metadata', (_type: unknown, _codec: unknown, h: { meta: Record<string, Buffer> }) => {
    for (const [k, v] of Object.entries(h.meta)) header[k] = v.toString();
  });
  const records: unknown[] = [];
  Readable.from([Buffer.from(bytes)]).pipe(decoder);
  for await (const record of decoder) records.push(record);
  return { header, records };
}

const RECORDS = [
  { id: 8333333333333333333n, tags: ['a', 'b'], sizes: [{ key: 1, value: Buffer.from([1, 2, 3]) }] },
  { id: -9223372036854775808n, tags: null, sizes: null },
  { id: 0n, tags: [], sizes: [] },
];

describe('Avro object container files', () => {
  for (const codec of ['null', 'deflate'] as const) {
    it(`round-trips through avsc's decoder with codec ${codec}, keeping the header schema byte for byte`, async () => {
      const bytes = writeAvroFile(SCHEMA, RECORDS, { codec, metadata: { 'format-version': '2' } });
      const { header, records } = await decodeWithAvsc(bytes);
      expect(header['avro.schema']).toBe(SCHEMA);
      expect(header['avro.codec']).toBe(codec);
      expect(header['format-version']).toBe('2');
      expect(JSON.parse(JSON.stringify(records, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))).toEqual(
        JSON.parse(JSON.stringify(RECORDS, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))),
      );
      expect((records[0] as { id: bigint }).id).toBe(8333333333333333333n);
    });
  }

  it('reads its own files back with exact longs and the metadata', () => {
    const bytes = writeAvroFile(SCHEMA, RECORDS, { metadata: { 'snapshot-id': '1' } });
    const file = readAvroFile(bytes);
    expect(file.metadata['avro.schema']).toBe(SCHEMA);
    expect(file.metadata['snapshot-id']).toBe('1');
    expect((file.schema as { fields: Array<Record<string, unknown>> }).fields[0]?.['field-id']).toBe(1);
    expect(file.records.map((r) => (r as { id: bigint }).id)).toEqual(RECORDS.map((r) => r.id));
    expect(Buffer.from((file.records[0] as { sizes: Array<{ value: Buffer }> }).sizes[0]!.value)).toEqual(Buffer.from([1, 2, 3]));
  });

  it('reads files written by avsc with several blocks', async () => {
    const type = avro.Type.forSchema({ type: 'record', name: 'r', fields: [{ name: 'n', type: 'int' }] });
    const encoder = new avro.streams.BlockEncoder(type, { blockSize: 16, codec: 'deflate' });
    const chunks: Buffer[] = [];
    encoder.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise((resolve) => encoder.on('end', resolve));
    for (let n = 0; n < 100; n++) encoder.write({ n });
    encoder.end();
    await done;
    const file = readAvroFile(Buffer.concat(chunks));
    expect(file.records.map((r) => (r as { n: number }).n)).toEqual(Array.from({ length: 100 }, (_, n) => n));
  });

  it('refuses what is not a container file', () => {
    expect(() => readAvroFile(new Uint8Array([1, 2, 3, 4, 5]))).toThrow(/magic/);
  });
});
