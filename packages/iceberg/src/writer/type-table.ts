/// <reference lib="es2024.string" />
import {
  Binary,
  Bool,
  type DataType,
  DateDay,
  Decimal,
  FixedSizeBinary,
  Float32,
  Float64,
  Int32,
  Int64,
  Time,
  TimeUnit,
  Timestamp,
  Utf8,
} from 'apache-arrow';
import type { PrimitiveType, SimpleType } from '../spec/types.ts';
import {
  BoolColumn,
  type Column,
  DecimalColumn,
  FixedBytesColumn,
  FloatColumn,
  Int32Column,
  Int64Column,
  type LeafSpec,
  type VarBytesEncoding,
  VarBytesColumn,
} from './columns.ts';
import {
  type BoundOrder,
  boolStats,
  bytesOrder,
  decimalOrder,
  decimalStats,
  float32Order,
  float64Order,
  int32Order,
  int64Order,
  float32Stats,
  float64Stats,
  int32Stats,
  int64Stats,
  type StatsFunction,
  stringStats,
  uuidStats,
} from './stats.ts';
import {
  base64Length,
  parseDate,
  parseDateBytes,
  parseTime,
  parseTimeBytes,
  parseTimestamp,
  parseTimestampBytes,
  parseTimestampNs,
  parseTimestampNsBytes,
  toDecimal,
  toInt32,
  toInt64,
  writeUuid,
  type ZonePolicy,
} from './values.ts';

/**
 * The one table of what each Iceberg primitive type means to this writer: which JSON values
 * it accepts (and how to say so in a reject), its Arrow type (one engines read: Utf8 not
 * LargeUtf8, microsecond timestamps, Decimal128, FixedSizeBinary(16) for uuid), the column
 * that builds it, and how its metrics bounds are computed.
 */
/** The Arrow field metadata key that parquet writers turn into the Parquet field id. */
export const PARQUET_FIELD_ID = 'PARQUET:field_id';

export interface TypeRule<T extends PrimitiveType> {
  expected(type: T): string;
  arrow(type: T): DataType;
  column(type: T, spec: LeafSpec): Column;
  /** Absent when the type has no bounds this writer computes (binary, fixed). */
  stats?: StatsFunction;
  /** How the bounds `stats` gives compare (present with `stats`). */
  boundOrder?: BoundOrder;
}

type Rules = { readonly [K in PrimitiveType['kind']]: TypeRule<Extract<PrimitiveType, { kind: K }>> };

/** Below this length a JavaScript loop copies ASCII faster than a call into Buffer.write. */
const SHORT_STRING = 32;

const UTF8: VarBytesEncoding = {
  maxLength: (value) => (typeof value === 'string' ? value.length * 3 : -1),
  write: (value, target, offset) => {
    const text = value as string;
    if (text.length < SHORT_STRING) {
      let i = 0;
      for (; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0x80) break;
        target[offset + i] = code;
      }
      if (i === text.length) return i;
    }
    // A lone surrogate has no UTF-8 form: reject rather than write U+FFFD.
    return text.isWellFormed() ? target.write(text, offset, 'utf8') : -1;
  },
};

const BASE64: VarBytesEncoding = {
  maxLength: base64Length,
  write: (value, target, offset) => target.write(value as string, offset, 'base64'),
};

function fixedBase64(length: number) {
  return (value: unknown, target: Uint8Array, offset: number): boolean => {
    if (base64Length(value) !== length) return false;
    Buffer.from(target.buffer, target.byteOffset, target.byteLength).write(value as string, offset, 'base64');
    return true;
  };
}

/**
 * The four timestamp types: microseconds or nanoseconds since the epoch, local (only a UTC
 * designator may follow) or with a zone (an offset required; stored as UTC).
 */
function timestampRule(name: string, unit: 'us' | 'ns', zone: ZonePolicy): TypeRule<SimpleType> {
  const format = `YYYY-MM-DDTHH:MM:SS[.${unit === 'us' ? 'ffffff' : 'fffffffff'}]`;
  const parse = unit === 'us' ? parseTimestamp : parseTimestampNs;
  const parseBytes = unit === 'us' ? parseTimestampBytes : parseTimestampNsBytes;
  return {
    expected: () =>
      zone === 'offset_required' ? `${name} (an RFC 3339 "${format}" string with Z or a ±HH:MM offset)` : `${name} (a "${format}" string, no offset other than Z or +00:00)`,
    arrow: () => new Timestamp(unit === 'us' ? TimeUnit.MICROSECOND : TimeUnit.NANOSECOND, zone === 'offset_required' ? 'UTC' : undefined),
    column: (_, spec) => new Int64Column(spec, (value) => parse(value, zone), (bytes, start, end) => parseBytes(bytes, start, end, zone)),
    stats: int64Stats,
    boundOrder: int64Order,
  };
}

export const TYPE_TABLE: Rules = {
  boolean: {
    expected: () => 'boolean (true or false)',
    arrow: () => new Bool(),
    column: (_, spec) => new BoolColumn(spec),
    stats: boolStats,
    boundOrder: bytesOrder,
  },
  int: {
    expected: () => 'int (a JSON integer from -2147483648 to 2147483647)',
    arrow: () => new Int32(),
    column: (_, spec) => new Int32Column(spec, toInt32),
    stats: int32Stats,
    boundOrder: int32Order,
  },
  long: {
    expected: () => 'long (a JSON integer from -9223372036854775808 to 9223372036854775807)',
    arrow: () => new Int64(),
    column: (_, spec) => new Int64Column(spec, toInt64),
    stats: int64Stats,
    boundOrder: int64Order,
  },
  float: {
    expected: () => 'float (a JSON number within the float range, or "NaN", "Infinity", "-Infinity")',
    arrow: () => new Float32(),
    column: (_, spec) => new FloatColumn(spec, 32),
    stats: float32Stats,
    boundOrder: float32Order,
  },
  double: {
    expected: () => 'double (a JSON number, or "NaN", "Infinity", "-Infinity")',
    arrow: () => new Float64(),
    column: (_, spec) => new FloatColumn(spec, 64),
    stats: float64Stats,
    boundOrder: float64Order,
  },
  decimal: {
    expected: (t) =>
      `decimal(${t.precision}, ${t.scale}) (a JSON number or decimal string with at most ${t.scale} fraction digits and ${t.precision} digits in all)`,
    arrow: (t) => new Decimal(t.scale, t.precision, 128),
    column: (t, spec) => new DecimalColumn(spec, (value) => toDecimal(value, t.precision, t.scale)),
    stats: decimalStats,
    boundOrder: decimalOrder,
  },
  date: {
    expected: () => 'date (a "YYYY-MM-DD" string)',
    arrow: () => new DateDay(),
    column: (_, spec) => new Int32Column(spec, parseDate, parseDateBytes),
    stats: int32Stats,
    boundOrder: int32Order,
  },
  time: {
    expected: () => 'time (a "HH:MM:SS[.ffffff]" string)',
    arrow: () => new Time(TimeUnit.MICROSECOND, 64),
    column: (_, spec) => new Int64Column(spec, parseTime, parseTimeBytes),
    stats: int64Stats,
    boundOrder: int64Order,
  },
  timestamp: timestampRule('timestamp', 'us', 'utc_or_none'),
  timestamptz: timestampRule('timestamptz', 'us', 'offset_required'),
  timestamp_ns: timestampRule('timestamp_ns', 'ns', 'utc_or_none'),
  timestamptz_ns: timestampRule('timestamptz_ns', 'ns', 'offset_required'),
  string: {
    expected: () => 'string (a JSON string of valid Unicode)',
    arrow: () => new Utf8(),
    column: (_, spec) => new VarBytesColumn(spec, UTF8),
    stats: stringStats,
    boundOrder: bytesOrder,
  },
  uuid: {
    expected: () => 'uuid (a "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" hex string)',
    arrow: () => new FixedSizeBinary(16),
    column: (_, spec) => new FixedBytesColumn(spec, 16, writeUuid),
    stats: uuidStats,
    boundOrder: bytesOrder,
  },
  fixed: {
    expected: (t) => `fixed[${t.length}] (a base64 string of exactly ${t.length} bytes)`,
    arrow: (t) => new FixedSizeBinary(t.length),
    column: (t, spec) => new FixedBytesColumn(spec, t.length, fixedBase64(t.length)),
  },
  binary: {
    expected: () => 'binary (a base64 string)',
    arrow: () => new Binary(),
    column: (_, spec) => new VarBytesColumn(spec, BASE64),
  },
};

export function ruleFor<T extends PrimitiveType>(type: T): TypeRule<T> {
  return TYPE_TABLE[type.kind] as unknown as TypeRule<T>;
}
