import type { PrimitiveType } from '../spec/types.ts';
import { bytesOrder, minimalTwosComplement } from '../writer/stats.ts';
import type { BoundPartitionField } from './bound-spec.ts';
import type { PartitionValue } from './transforms.ts';

/** Bytes of a decimal of `precision` digits (Java TypeUtil.decimalRequiredBytes). */
function decimalBytes(precision: number): number {
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) <= 10n ** BigInt(precision)) bytes++;
  return bytes;
}

/** The Avro type of a partition value of `type` in a manifest's partition record. */
export function avroPartitionType(type: PrimitiveType, fieldId: number): unknown {
  switch (type.kind) {
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': type.kind === 'timestamptz' };
    case 'uuid':
      return { type: 'fixed', name: `uuid_fixed_${fieldId}`, size: 16, logicalType: 'uuid' };
    case 'fixed':
      return { type: 'fixed', name: `fixed_${fieldId}`, size: type.length };
    case 'binary':
      return 'bytes';
    case 'decimal':
      return { type: 'fixed', name: `decimal_${fieldId}`, size: decimalBytes(type.precision), logicalType: 'decimal', precision: type.precision, scale: type.scale };
    default:
      return type.kind;
  }
}

/** A partition value as the manifest's Avro record holds it (bytes as Buffer, decimals as fixed). */
export function toAvroValue(type: PrimitiveType, value: PartitionValue): unknown {
  if (value === null) return null;
  if (type.kind === 'decimal') {
    const size = decimalBytes(type.precision);
    const minimal = minimalTwosComplement(value as bigint);
    const out = Buffer.alloc(size, (value as bigint) < 0n ? 0xff : 0);
    out.set(minimal, size - minimal.length);
    return out;
  }
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/** The value back from its Avro form (as avsc decodes any writer's manifest). */
export function fromAvroValue(type: PrimitiveType, value: unknown): PartitionValue {
  if (value === null || value === undefined) return null;
  if (type.kind === 'decimal') {
    const bytes = value as Uint8Array;
    let n = 0n;
    for (const b of bytes) n = (n << 8n) | BigInt(b);
    return BigInt.asIntN(8 * bytes.length, n);
  }
  if (type.kind === 'long' || type.kind === 'time' || type.kind === 'timestamp' || type.kind === 'timestamptz') return BigInt(value as bigint);
  return value as PartitionValue;
}

/** Iceberg's single-value binary serialisation (spec Appendix D), for partition summaries. */
export function singleValueBytes(type: PrimitiveType, value: Exclude<PartitionValue, null>): Uint8Array {
  const fixed = (size: number, write: (view: DataView) => void) => {
    const bytes = new Uint8Array(size);
    write(new DataView(bytes.buffer));
    return bytes;
  };
  switch (type.kind) {
    case 'boolean':
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
    case 'date':
      return fixed(4, (v) => v.setInt32(0, value as number, true));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return fixed(8, (v) => v.setBigInt64(0, value as bigint, true));
    case 'float':
      return fixed(4, (v) => v.setFloat32(0, value as number, true));
    case 'double':
      return fixed(8, (v) => v.setFloat64(0, value as number, true));
    case 'string':
      return Buffer.from(value as string, 'utf8');
    case 'decimal':
      return minimalTwosComplement(value as bigint);
    default:
      return value as Uint8Array;
  }
}

/** Orders two non-null, non-NaN values of one type as Iceberg does (strings by UTF-8 bytes). */
export function compareValues(type: PrimitiveType, a: Exclude<PartitionValue, null>, b: Exclude<PartitionValue, null>): number {
  if (type.kind === 'string') return bytesOrder(Buffer.from(a as string, 'utf8'), Buffer.from(b as string, 'utf8'));
  if (a instanceof Uint8Array) return bytesOrder(a, b as Uint8Array);
  if (typeof a === 'boolean') return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/** `HH:MM:SS[.ffffff]` of microseconds into a day, or a timestamp's date-time without zone. */
function isoMicros(micros: bigint): string {
  const ms = Number((micros - (((micros % 1000n) + 1000n) % 1000n)) / 1000n);
  const fraction = Number(((micros % 1_000_000n) + 1_000_000n) % 1_000_000n);
  const text = new Date(ms).toISOString().slice(0, 19);
  return fraction === 0 ? text : `${text}.${pad(fraction, 6).replace(/0+$/, '')}`;
}

function uuidString(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function decimalString(unscaled: bigint, scale: number): string {
  if (scale === 0) return unscaled.toString();
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** A partition value as Java's `Transform.toHumanString` writes it, for data file paths. */
export function humanString(field: BoundPartitionField, value: PartitionValue): string {
  if (value === null) return 'null';
  const { transform, result } = field;
  switch (transform.kind) {
    case 'year':
      return String(1970 + (value as number));
    case 'month': {
      const months = value as number;
      const year = 1970 + Math.floor(months / 12);
      return `${year}-${pad(months - (year - 1970) * 12 + 1)}`;
    }
    case 'day':
      return isoDate(value as number);
    case 'hour': {
      const hours = value as number;
      return `${isoDate(Math.floor(hours / 24))}-${pad(((hours % 24) + 24) % 24)}`;
    }
    default:
      break;
  }
  switch (result.kind) {
    case 'date':
      return isoDate(value as number);
    case 'time':
      return isoMicros(value as bigint).slice(11);
    case 'timestamp':
      return isoMicros(value as bigint);
    case 'timestamptz':
      return `${isoMicros(value as bigint)}Z`;
    case 'uuid':
      return uuidString(value as Uint8Array);
    case 'fixed':
    case 'binary':
      return Buffer.from(value as Uint8Array).toString('base64');
    case 'decimal':
      return decimalString(value as bigint, result.scale);
    default:
      return String(value);
  }
}
