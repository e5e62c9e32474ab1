import { IcebergError } from '../errors.ts';
import { type IcebergType, isPrimitive, type PrimitiveType } from '../spec/types.ts';
import { minimalTwosComplement } from '../writer/stats.ts';
import { murmur3_32 } from './murmur3.ts';

/**
 * A value as partitioning sees it, in Iceberg's own units: int and date (days) as number;
 * long, time and timestamps (microseconds) as bigint; decimal as its unscaled bigint; uuid,
 * fixed and binary as bytes.
 */
export type PartitionValue = number | bigint | string | boolean | Uint8Array | null;

export type Transform =
  | { kind: 'identity' | 'year' | 'month' | 'day' | 'hour' | 'void' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number };

const PARAMETRIC = /^(bucket|truncate)\[(\d+)\]$/;

export function parseTransform(text: string): Transform {
  const match = PARAMETRIC.exec(text);
  if (match) {
    const size = Number(match[2]);
    if (!Number.isSafeInteger(size) || size <= 0) throw new IcebergError('unsupported', `partition transform ${text} needs a positive size`);
    return match[1] === 'bucket' ? { kind: 'bucket', n: size } : { kind: 'truncate', width: size };
  }
  if (text === 'identity' || text === 'year' || text === 'month' || text === 'day' || text === 'hour' || text === 'void') return { kind: text };
  throw new IcebergError('unsupported', `partition transform ${text} is not known to this writer`);
}

const TEMPORAL_SOURCES: Readonly<Record<string, readonly string[]>> = {
  year: ['date', 'timestamp', 'timestamptz'],
  month: ['date', 'timestamp', 'timestamptz'],
  day: ['date', 'timestamp', 'timestamptz'],
  hour: ['timestamp', 'timestamptz'],
};
const BUCKET_SOURCES = ['int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'string', 'uuid', 'fixed', 'binary'];
const TRUNCATE_SOURCES = ['int', 'long', 'decimal', 'string', 'binary'];

/** The type a transform gives for a source type (spec "Partition Transforms"); throws when it does not apply. */
export function resultType(transform: Transform, source: IcebergType): PrimitiveType {
  if (!isPrimitive(source)) throw new IcebergError('unsupported', `a ${source.kind} column cannot be a partition source`);
  const allowed =
    transform.kind === 'bucket' ? BUCKET_SOURCES : transform.kind === 'truncate' ? TRUNCATE_SOURCES : TEMPORAL_SOURCES[transform.kind];
  if (allowed !== undefined && !allowed.includes(source.kind)) {
    throw new IcebergError('unsupported', `partition transform ${transformString(transform)} does not apply to ${source.kind}`);
  }
  switch (transform.kind) {
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return { kind: 'int' };
    case 'day':
      return { kind: 'date' };
    default:
      return source;
  }
}

export function transformString(transform: Transform): string {
  if (transform.kind === 'bucket') return `bucket[${transform.n}]`;
  if (transform.kind === 'truncate') return `truncate[${transform.width}]`;
  return transform.kind;
}

const MICROS_PER_HOUR = 3_600_000_000n;
const MICROS_PER_DAY = 24n * MICROS_PER_HOUR;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Days since 1970-01-01 of a date (days) or timestamp (microseconds) source value. */
function epochDays(value: number | bigint): number {
  return typeof value === 'number' ? value : Number(floorDiv(value, MICROS_PER_DAY));
}

function civil(days: number): { year: number; month: number; day: number } {
  const d = new Date(days * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The 8-byte little-endian form Iceberg hashes int, long, date, time and timestamps as. */
function longBytes(value: number | bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigInt64(0, BigInt(value), true);
  return bytes;
}

/** The bytes the bucket transform hashes for a value of `source` (spec Appendix B). */
export function bucketHashBytes(source: PrimitiveType, value: Exclude<PartitionValue, null>): Uint8Array {
  switch (source.kind) {
    case 'int':
    case 'long':
    case 'date':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return longBytes(value as number | bigint);
    case 'decimal':
      return minimalTwosComplement(value as bigint);
    case 'string':
      return Buffer.from(value as string, 'utf8');
    case 'uuid':
    case 'fixed':
    case 'binary':
      return value as Uint8Array;
    default:
      throw new IcebergError('unsupported', `bucket does not apply to ${source.kind}`);
  }
}

/** The first `width` code points of a string (not UTF-16 units: a pair is one code point). */
function truncateString(text: string, width: number): string {
  let out = '';
  let count = 0;
  for (const point of text) {
    if (count++ === width) break;
    out += point;
  }
  return out;
}

/** Applies a transform to one source value; null stays null (and void gives null always). */
export function applyTransform(transform: Transform, source: PrimitiveType, value: PartitionValue): PartitionValue {
  if (value === null || transform.kind === 'void') return null;
  switch (transform.kind) {
    case 'identity':
      return value;
    case 'bucket':
      return (murmur3_32(bucketHashBytes(source, value)) & 0x7fffffff) % transform.n;
    case 'truncate': {
      const w = transform.width;
      if (typeof value === 'number') return value - (((value % w) + w) % w);
      if (typeof value === 'bigint') return value - (((value % BigInt(w)) + BigInt(w)) % BigInt(w));
      if (typeof value === 'string') return truncateString(value, w);
      return (value as Uint8Array).subarray(0, w);
    }
    case 'year':
      return civil(epochDays(value as number | bigint)).year - 1970;
    case 'month': {
      const { year, month } = civil(epochDays(value as number | bigint));
      return (year - 1970) * 12 + month - 1;
    }
    case 'day':
      return epochDays(value as number | bigint);
    case 'hour':
      return Number(floorDiv(value as bigint, MICROS_PER_HOUR));
  }
}
