import type { Data } from 'apache-arrow';

/**
 * Column statistics for manifest metrics, computed from the finished Arrow data (never from
 * rejected rows). Bounds use Iceberg's single-value binary serialisation (spec Appendix D).
 */
export interface ColumnStats {
  lower?: Uint8Array;
  upper?: Uint8Array;
  nanCount?: number;
}

export type StatsFunction = (chunks: readonly Data[]) => ColumnStats;

/** Strings are truncated to this many code points in bounds (Iceberg's default `truncate(16)`). */
const STRING_BOUND_LENGTH = 16;

/** The validity bitmap of `data`, or null when it has no nulls (read once per chunk: `nullCount` is a getter with work in it). */
function validity(data: Data): Uint8Array | null {
  return data.nullCount === 0 ? null : (data.nullBitmap as Uint8Array);
}

/** Whether slot `at` (offset included) is valid. */
function isValid(bitmap: Uint8Array | null, at: number): boolean {
  return bitmap === null || (((bitmap[at >> 3] as number) >> (at & 7)) & 1) === 1;
}

/**
 * Values per call of a block function. Each column's values are taken a block per call: a loop
 * run once per file over all of them would run unoptimised until V8 replaces it in flight (and
 * back again whenever a rare branch is first taken), while a function called many times is
 * optimised whole, early in a process's first file. Running totals travel in a small array.
 */
const BLOCK = 4096;

/** Calls `block(from, to)` for each run of at most BLOCK slots of `data`. */
function inBlocks(data: Data, block: (from: number, to: number) => void): void {
  const end = data.offset + data.length;
  for (let from = data.offset; from < end; from += BLOCK) block(from, Math.min(from + BLOCK, end));
}

function littleEndian(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const bytes = new Uint8Array(size);
  write(new DataView(bytes.buffer));
  return bytes;
}

/** int and date: 4-byte little-endian. */
export const int32Stats: StatsFunction = (chunks) => {
  const found = Float64Array.of(Infinity, -Infinity);
  for (const data of chunks) {
    const values = data.values as Int32Array;
    const bitmap = validity(data);
    inBlocks(data, (from, to) => int32Block(values, bitmap, from, to, found));
  }
  const min = found[0] as number;
  const max = found[1] as number;
  if (min > max) return {};
  return {
    lower: littleEndian(4, (view) => view.setInt32(0, min, true)),
    upper: littleEndian(4, (view) => view.setInt32(0, max, true)),
  };
};

/** [min, max] of the valid values of slots [from, to). */
function int32Block(values: Int32Array, bitmap: Uint8Array | null, from: number, to: number, found: Float64Array): void {
  let min = found[0] as number;
  let max = found[1] as number;
  for (let at = from; at < to; at++) {
    if (!isValid(bitmap, at)) continue;
    const v = values[at] as number;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  found[0] = min;
  found[1] = max;
}

/** long, time, timestamp, timestamptz: 8-byte little-endian. */
export const int64Stats: StatsFunction = (chunks) => {
  // Compared as (signed high word, unsigned low word) to avoid a bigint per value.
  const found = Float64Array.of(Infinity, 0, -Infinity, 0);
  for (const data of chunks) {
    const values = data.values as BigInt64Array;
    const words = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
    const bitmap = validity(data);
    inBlocks(data, (from, to) => int64Block(words, bitmap, from, to, found));
  }
  const minHi = found[0] as number;
  const minLo = found[1] as number;
  const maxHi = found[2] as number;
  const maxLo = found[3] as number;
  if (minHi === Infinity) return {};
  return { lower: int64Bytes(minHi, minLo), upper: int64Bytes(maxHi, maxLo) };
};

/** [minHi, minLo, maxHi, maxLo] of the valid values of slots [from, to), as 32-bit words. */
function int64Block(words: Uint32Array, bitmap: Uint8Array | null, from: number, to: number, found: Float64Array): void {
  let minHi = found[0] as number;
  let minLo = found[1] as number;
  let maxHi = found[2] as number;
  let maxLo = found[3] as number;
  for (let at = from; at < to; at++) {
    if (!isValid(bitmap, at)) continue;
    const hi = (words[2 * at + 1] as number) | 0;
    const lo = words[2 * at] as number;
    if (hi < minHi || (hi === minHi && lo < minLo)) {
      minHi = hi;
      minLo = lo;
    }
    if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
      maxHi = hi;
      maxLo = lo;
    }
  }
  found[0] = minHi;
  found[1] = minLo;
  found[2] = maxHi;
  found[3] = maxLo;
}

function int64Bytes(hi: number, lo: number): Uint8Array {
  return littleEndian(8, (view) => {
    view.setUint32(0, lo, true);
    view.setInt32(4, hi, true);
  });
}

/** float and double: little-endian IEEE 754; NaN never a bound, counted instead; ±0 widened. */
function floatStats(size: 4 | 8): StatsFunction {
  return (chunks) => {
    const found = Float64Array.of(Infinity, -Infinity, 0, 0);
    for (const data of chunks) {
      const values = data.values as Float32Array | Float64Array;
      const bitmap = validity(data);
      inBlocks(data, (from, to) => floatBlock(values, bitmap, from, to, found));
    }
    const min = found[0] as number;
    const max = found[1] as number;
    const nanCount = found[2] as number;
    const numbers = found[3] as number;
    if (numbers === 0) return { nanCount };
    // -0 and +0 compare equal here; a lower bound of -0 and an upper of +0 hold either way.
    const lower = min === 0 ? -0 : min;
    const upper = max === 0 ? 0 : max;
    const write = (value: number) =>
      littleEndian(size, (view) => (size === 4 ? view.setFloat32(0, value, true) : view.setFloat64(0, value, true)));
    return { lower: write(lower), upper: write(upper), nanCount };
  };
}

/** [min, max, NaN count, count of the others] of the valid values of slots [from, to). */
function floatBlock(values: Float32Array | Float64Array, bitmap: Uint8Array | null, from: number, to: number, found: Float64Array): void {
  let min = found[0] as number;
  let max = found[1] as number;
  let nans = 0;
  let numbers = 0;
  for (let at = from; at < to; at++) {
    if (!isValid(bitmap, at)) continue;
    const v = values[at] as number;
    if (v !== v) {
      nans++;
      continue;
    }
    numbers++;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  found[0] = min;
  found[1] = max;
  found[2] = (found[2] as number) + nans;
  found[3] = (found[3] as number) + numbers;
}

export const float32Stats = floatStats(4);
export const float64Stats = floatStats(8);

/** boolean: one byte, 0 or 1. */
export const boolStats: StatsFunction = (chunks) => {
  let sawFalse = false;
  let sawTrue = false;
  for (const data of chunks) {
    const bits = data.values as Uint8Array;
    const bitmap = validity(data);
    for (let at = data.offset; at < data.offset + data.length; at++) {
      if (!isValid(bitmap, at)) continue;
      if ((((bits[at >> 3] as number) >> (at & 7)) & 1) === 1) sawTrue = true;
      else sawFalse = true;
    }
  }
  if (!sawFalse && !sawTrue) return {};
  return { lower: Uint8Array.of(sawFalse ? 0 : 1), upper: Uint8Array.of(sawTrue ? 1 : 0) };
}

/** Compares two signed 128-bit values stored as four little-endian 32-bit words. */
function compare128(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  const hiA = (a[i + 3] as number) | 0;
  const hiB = (b[j + 3] as number) | 0;
  if (hiA !== hiB) return hiA < hiB ? -1 : 1;
  for (let w = 2; w >= 0; w--) {
    const x = a[i + w] as number;
    const y = b[j + w] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The signed 128-bit value at word `at` (four little-endian 32-bit words, as Decimal128 stores it). */
export function read128(words: Uint32Array, at: number): bigint {
  let u = 0n;
  for (let w = 3; w >= 0; w--) u = (u << 32n) | BigInt(words[at + w] as number);
  return BigInt.asIntN(128, u);
}

/** decimal: the unscaled value, big-endian two's complement in as few bytes as it needs. */
export const decimalStats: StatsFunction = (chunks) => {
  let min: { words: Uint32Array; at: number } | undefined;
  let max: { words: Uint32Array; at: number } | undefined;
  for (const data of chunks) {
    const words = data.values as Uint32Array;
    const bitmap = validity(data);
    for (let slot = data.offset; slot < data.offset + data.length; slot++) {
      if (!isValid(bitmap, slot)) continue;
      const at = 4 * slot;
      if (min === undefined || compare128(words, at, min.words, min.at) < 0) min = { words, at };
      if (max === undefined || compare128(words, at, max.words, max.at) > 0) max = { words, at };
    }
  }
  if (min === undefined || max === undefined) return {};
  return { lower: minimalTwosComplement(read128(min.words, min.at)), upper: minimalTwosComplement(read128(max.words, max.at)) };
};

export function minimalTwosComplement(value: bigint): Uint8Array {
  let length = 1;
  while (BigInt.asIntN(8 * length, value) !== value) length++;
  const bytes = new Uint8Array(length);
  let rest = BigInt.asUintN(8 * length, value);
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytes;
}

/** Compares two byte ranges as unsigned bytes, shorter-is-smaller on a common prefix. */
function compareBytes(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let k = 0; k < length; k++) {
    const x = a[aStart + k] as number;
    const y = b[bStart + k] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return aEnd - aStart - (bEnd - bStart);
}

interface ByteRange {
  bytes: Uint8Array;
  start: number;
  end: number;
}

/** Smallest and largest of variable- or fixed-width byte values, compared as unsigned bytes (a block per call, see `BLOCK`). */
function byteExtremes(chunks: readonly Data[], width: number | undefined): { min: Buffer; max: Buffer } | undefined {
  let min: ByteRange | undefined;
  let max: ByteRange | undefined;
  // The extremes of the chunk at hand as [minStart, minEnd, maxStart, maxEnd]; -1 for none yet.
  const found = new Int32Array(4);
  for (const data of chunks) {
    const bytes = data.values as Uint8Array;
    // Fixed-width values have no offsets (null): the block loop places them by `width`.
    const offsets = width === undefined ? (data.valueOffsets as Int32Array) : null;
    const bitmap = validity(data);
    found.fill(-1);
    inBlocks(data, (from, to) => blockExtremes(bytes, offsets, width ?? 0, bitmap, from, to, found));
    const minStart = found[0] as number;
    const minEnd = found[1] as number;
    const maxStart = found[2] as number;
    const maxEnd = found[3] as number;
    if (minStart < 0) continue;
    if (min === undefined || compareBytes(bytes, minStart, minEnd, min.bytes, min.start, min.end) < 0) min = { bytes, start: minStart, end: minEnd };
    if (max === undefined || compareBytes(bytes, maxStart, maxEnd, max.bytes, max.start, max.end) > 0) max = { bytes, start: maxStart, end: maxEnd };
  }
  if (min === undefined || max === undefined) return undefined;
  const copy = (range: ByteRange) => Buffer.from(range.bytes.subarray(range.start, range.end));
  return { min: copy(min), max: copy(max) };
}

/** Updates `found` (see `byteExtremes`) with the valid values of slots [from, to). */
function blockExtremes(
  bytes: Uint8Array,
  offsets: Int32Array | null,
  width: number,
  bitmap: Uint8Array | null,
  from: number,
  to: number,
  found: Int32Array,
): void {
  let minStart = found[0] as number;
  let minEnd = found[1] as number;
  let maxStart = found[2] as number;
  let maxEnd = found[3] as number;
  for (let at = from; at < to; at++) {
    if (!isValid(bitmap, at)) continue;
    const start = offsets === null ? at * width : (offsets[at] as number);
    const end = offsets === null ? start + width : (offsets[at + 1] as number);
    // A value below the least so far cannot be above the greatest: one comparison for most values.
    if (minStart < 0) {
      minStart = maxStart = start;
      minEnd = maxEnd = end;
    } else if (compareBytes(bytes, start, end, bytes, minStart, minEnd) < 0) {
      minStart = start;
      minEnd = end;
    } else if (compareBytes(bytes, start, end, bytes, maxStart, maxEnd) > 0) {
      maxStart = start;
      maxEnd = end;
    }
  }
  found[0] = minStart;
  found[1] = minEnd;
  found[2] = maxStart;
  found[3] = maxEnd;
}

/** uuid: 16 bytes, big-endian, compared unsigned. */
export const uuidStats: StatsFunction = (chunks) => {
  const extremes = byteExtremes(chunks, 16);
  return extremes === undefined ? {} : { lower: Uint8Array.from(extremes.min), upper: Uint8Array.from(extremes.max) };
};

/**
 * string: UTF-8, compared bytewise (which orders by code point). Bounds are cut to 16 code
 * points: the lower bound is a prefix; the upper bound's last code point is incremented so it
 * still exceeds every value (none when that is impossible).
 */
export const stringStats: StatsFunction = (chunks) => {
  const extremes = byteExtremes(chunks, undefined);
  if (extremes === undefined) return {};
  const lower = Array.from(extremes.min.toString('utf8')).slice(0, STRING_BOUND_LENGTH).join('');
  const upper = truncatedUpperBound(extremes.max.toString('utf8'));
  return upper === undefined ? { lower: utf8(lower) } : { lower: utf8(lower), upper: utf8(upper) };
};

function utf8(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'utf8'));
}

export function truncatedUpperBound(value: string): string | undefined {
  const codePoints = Array.from(value, (c) => c.codePointAt(0) as number);
  if (codePoints.length <= STRING_BOUND_LENGTH) return value;
  const kept = codePoints.slice(0, STRING_BOUND_LENGTH);
  for (let i = kept.length - 1; i >= 0; i--) {
    let next = (kept[i] as number) + 1;
    if (next === 0xd800) next = 0xe000;
    if (next <= 0x10ffff) {
      return String.fromCodePoint(...kept.slice(0, i), next);
    }
  }
  return undefined;
}

/**
 * How two bounds of one type compare, in their serialised form: what merging the metrics of
 * parts written apart needs (the lower bound of the whole is the least of the parts' lower
 * bounds, the upper the greatest; truncated string bounds keep this, as truncation keeps order).
 */
export type BoundOrder = (a: Uint8Array, b: Uint8Array) => number;

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function sign(n: number | bigint): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

export const int32Order: BoundOrder = (a, b) => sign(view(a).getInt32(0, true) - view(b).getInt32(0, true));
export const int64Order: BoundOrder = (a, b) => sign(view(a).getBigInt64(0, true) - view(b).getBigInt64(0, true));
export const float32Order: BoundOrder = (a, b) => sign(view(a).getFloat32(0, true) - view(b).getFloat32(0, true));
export const float64Order: BoundOrder = (a, b) => sign(view(a).getFloat64(0, true) - view(b).getFloat64(0, true));
/** Booleans, strings (UTF-8 orders by code point) and uuids: unsigned bytes. */
export const bytesOrder: BoundOrder = (a, b) => compareBytes(a, 0, a.length, b, 0, b.length);

function fromTwosComplement(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return BigInt.asIntN(8 * bytes.length, value);
}

export const decimalOrder: BoundOrder = (a, b) => sign(fromTwosComplement(a) - fromTwosComplement(b));
