import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';

/**
 * Avro object container files, written and read here rather than through avsc's encoders:
 * avsc rewrites the header schema without Iceberg's `field-id` / `element-id` / `key-id` /
 * `value-id` attributes, and its default long cannot hold 63-bit snapshot ids. Records are
 * still encoded by an avsc Type, whose `long` is bigint-backed.
 */

export type AvroCodec = 'null' | 'deflate';

export interface AvroWriteOptions {
  codec?: AvroCodec;
  /** File metadata (`avro.schema` and `avro.codec` are added). */
  metadata?: Readonly<Record<string, string>>;
}

export interface AvroFile {
  /** The writer schema as the header stores it (parsed JSON, attributes included). */
  schema: unknown;
  /** File metadata as text, `avro.schema` and `avro.codec` included. */
  metadata: Record<string, string>;
  records: unknown[];
}

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]);
const SYNC_LENGTH = 16;
/** Records per block: blocks keep memory bounded while reading; manifests are small anyway. */
const BLOCK_RECORDS = 4096;

/** Avro `long` as bigint, exact over the whole signed 64-bit range. */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (buffer: Buffer) => buffer.readBigInt64LE(),
  toBuffer: (value: bigint) => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigInt64LE(value);
    return buffer;
  },
  fromJSON: (value: unknown) => BigInt(value as string | number | bigint),
  toJSON: (value: bigint) => value.toString(),
  isValid: (value: unknown) => typeof value === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/** An avsc Type for a schema whose longs are bigints; extra attributes (field ids) are ignored by avsc. */
export function avroType(schema: unknown): avro.Type {
  return avro.Type.forSchema(schema as avro.Schema, { registry: { long: BIGINT_LONG } });
}

/** Writes an object container file whose header carries `schemaJson` byte for byte. */
export function writeAvroFile(schemaJson: string, records: readonly unknown[], options: AvroWriteOptions = {}): Uint8Array {
  const codec = options.codec ?? 'deflate';
  const type = avroType(JSON.parse(schemaJson));
  const sync = randomBytes(SYNC_LENGTH);
  const metadata: Record<string, string> = { ...options.metadata, 'avro.schema': schemaJson, 'avro.codec': codec };
  const parts: Buffer[] = [MAGIC, encodeMetadata(metadata), sync];
  for (let start = 0; start < records.length; start += BLOCK_RECORDS) {
    const block = records.slice(start, start + BLOCK_RECORDS);
    const raw = Buffer.concat(block.map((record) => type.toBuffer(record)));
    const body = codec === 'deflate' ? deflateRawSync(raw) : raw;
    parts.push(encodeLong(block.length), encodeLong(body.length), body, sync);
  }
  const file = Buffer.concat(parts);
  return new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
}

/** Reads any object container file (codec null or deflate), longs as bigint. */
export function readAvroFile(bytes: Uint8Array): AvroFile {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < MAGIC.length || !buffer.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new TypeError('not an Avro object container file (bad magic)');
  }
  const cursor = { buffer, at: MAGIC.length };
  const metadata = decodeMetadata(cursor);
  const schemaJson = metadata['avro.schema'];
  if (schemaJson === undefined) throw new TypeError('Avro file has no avro.schema');
  const codec = metadata['avro.codec'] ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') throw new TypeError(`unsupported Avro codec ${codec}`);
  const schema: unknown = JSON.parse(schemaJson);
  const type = avroType(schema);
  const sync = take(cursor, SYNC_LENGTH);
  const records: unknown[] = [];
  while (cursor.at < buffer.length) {
    const count = Number(decodeLong(cursor));
    const size = Number(decodeLong(cursor));
    const body = take(cursor, size);
    const raw = codec === 'deflate' ? inflateRawSync(body) : body;
    let at = 0;
    for (let i = 0; i < count; i++) {
      const { value, offset } = type.decode(raw, at);
      if (offset < 0) throw new TypeError('truncated Avro block');
      records.push(value);
      at = offset;
    }
    if (!take(cursor, SYNC_LENGTH).equals(sync)) throw new TypeError('Avro block sync marker mismatch');
  }
  return { schema, metadata, records };
}

interface Cursor {
  buffer: Buffer;
  at: number;
}

function take(cursor: Cursor, length: number): Buffer {
  if (length < 0 || cursor.at + length > cursor.buffer.length) throw new TypeError('truncated Avro file');
  const slice = cursor.buffer.subarray(cursor.at, cursor.at + length);
  cursor.at += length;
  return slice;
}

/** Zig-zag varint, as Avro encodes int and long. */
function encodeLong(value: number): Buffer {
  let n = BigInt(value);
  n = n >= 0n ? n << 1n : (-n << 1n) - 1n;
  const bytes: number[] = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (n !== 0n);
  return Buffer.from(bytes);
}

function decodeLong(cursor: Cursor): bigint {
  let n = 0n;
  let shift = 0n;
  for (;;) {
    const byte = take(cursor, 1)[0] as number;
    n |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
    shift += 7n;
    if (shift > 63n) throw new TypeError('malformed Avro varint');
  }
  return (n >> 1n) ^ -(n & 1n);
}

function encodeBytes(bytes: Buffer): Buffer[] {
  return [encodeLong(bytes.length), bytes];
}

/** The header's `map<bytes>`: one block of entries, then the empty block. */
function encodeMetadata(metadata: Record<string, string>): Buffer {
  const entries = Object.entries(metadata);
  const parts: Buffer[] = [encodeLong(entries.length)];
  for (const [key, value] of entries) parts.push(...encodeBytes(Buffer.from(key, 'utf8')), ...encodeBytes(Buffer.from(value, 'utf8')));
  parts.push(encodeLong(0));
  return Buffer.concat(parts);
}

function decodeMetadata(cursor: Cursor): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (;;) {
    let count = decodeLong(cursor);
    if (count === 0n) return metadata;
    if (count < 0n) {
      // A negative count is followed by the block's byte size, which we do not need.
      count = -count;
      decodeLong(cursor);
    }
    for (let i = 0n; i < count; i++) {
      const key = take(cursor, Number(decodeLong(cursor))).toString('utf8');
      metadata[key] = take(cursor, Number(decodeLong(cursor))).toString('utf8');
    }
  }
}
