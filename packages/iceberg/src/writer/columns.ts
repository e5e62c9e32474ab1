import { type Data, type DataType, makeData } from 'apache-arrow';
import { toFloat32, toFloat64 } from './values.ts';

/**
 * Column builders that fill Arrow buffers directly, one value per `append`. Building the
 * buffers ourselves keeps 64-bit values exact (apache-arrow's timestamp builders take
 * milliseconds) and lets a rejected row be undone by truncating back to a length.
 *
 * Contract for every column: a failed `append` leaves the column exactly as it was; values
 * past `length` are garbage that the next append overwrites.
 */

export type RejectReason = 'missing_required' | 'unknown_field' | 'type_mismatch' | 'unsupported_type' | 'not_an_object';

/** Why a value did not fit, with the path below the column that failed (built up by parents). */
export interface Failure {
  reason: RejectReason;
  path: Array<string | number>;
  expected?: string;
  /** The offending value; absent when the value was missing. */
  got?: unknown;
  /** The column is filled by the writer, not by rows (unknown_field only). */
  injected?: boolean;
}

export interface Column {
  readonly length: number;
  /** Appends one JSON value (null or undefined for null). */
  append(value: unknown): Failure | null;
  /** Appends a placeholder slot under a null parent: null when nullable, else a default value. */
  appendEmpty(): void;
  truncate(length: number): void;
  /** Makes room for `values` values in all (a hint that spares growing step by step; contents unchanged). */
  reserve(values: number): void;
  /** The Arrow data of everything appended; the column starts over empty. */
  finish(): Data;
}

/** What every leaf column is told about itself by the type table. */
export interface LeafSpec {
  readonly type: DataType;
  /** What a row must hold, for reject messages. */
  readonly expected: string;
  readonly nullable: boolean;
}

const INITIAL_CAPACITY = 1024;
const TWO_32 = 4294967296;

function grown(length: number, needed: number): number {
  let capacity = Math.max(length, INITIAL_CAPACITY);
  while (capacity < needed) capacity *= 2;
  return capacity;
}

function resizeBits(bits: Uint8Array, slots: number): Uint8Array {
  const next = new Uint8Array((slots + 7) >> 3);
  next.set(bits.subarray(0, Math.min(bits.length, next.length)));
  return next;
}

export function setBit(bits: Uint8Array, i: number): void {
  const at = i >> 3;
  bits[at] = (bits[at] as number) | (1 << (i & 7));
}

export function clearBit(bits: Uint8Array, i: number): void {
  const at = i >> 3;
  bits[at] = (bits[at] as number) & ~(1 << (i & 7));
}

const POPCOUNT = new Uint8Array(256).map((_, i) => {
  let n = 0;
  for (let v = i; v !== 0; v >>= 1) n += v & 1;
  return n;
});

/** The number of clear bits among the first `length` bits. */
export function countNulls(validity: Uint8Array, length: number): number {
  let set = 0;
  const whole = length >> 3;
  for (let i = 0; i < whole; i++) set += POPCOUNT[validity[i] as number] as number;
  for (let i = whole << 3; i < length; i++) set += ((validity[i >> 3] as number) >> (i & 7)) & 1;
  return length - set;
}

interface LeafDataProps {
  type: DataType;
  length: number;
  nullCount: number;
  nullBitmap: Uint8Array | undefined;
  data: ArrayBufferView;
  valueOffsets?: Int32Array;
}

/** makeData's overloads want a concrete type; a leaf column only knows its type at run time. */
function leafData(props: LeafDataProps): Data {
  return makeData(props);
}

export abstract class LeafColumn implements Column {
  length = 0;
  protected capacity = 0;
  private validity: Uint8Array | null;

  constructor(protected readonly spec: LeafSpec) {
    this.validity = spec.nullable ? new Uint8Array(0) : null;
  }

  append(value: unknown): Failure | null {
    const i = this.nextSlot();
    if (value === null || value === undefined) {
      if (this.validity === null) return { reason: 'missing_required', path: [], got: value };
      this.writeEmpty(i);
      clearBit(this.validity, i);
      this.length = i + 1;
    } else {
      if (!this.write(value, i)) return { reason: 'type_mismatch', path: [], expected: this.spec.expected, got: value };
      this.taken(i);
    }
    return null;
  }

  /** The next slot, with room made for it. */
  protected nextSlot(): number {
    const i = this.length;
    if (i === this.capacity) this.grow(i + 1);
    return i;
  }

  /** Marks slot `i` (just written, non-null) valid and counts it. */
  protected taken(i: number): void {
    if (this.validity !== null) setBit(this.validity, i);
    this.length = i + 1;
  }

  appendEmpty(): void {
    const i = this.nextSlot();
    this.writeEmpty(i);
    if (this.validity !== null) clearBit(this.validity, i);
    this.length = i + 1;
  }

  truncate(length: number): void {
    this.length = length;
  }

  finish(): Data {
    const length = this.length;
    const nullCount = this.validity === null ? 0 : countNulls(this.validity, length);
    const nullBitmap = nullCount === 0 || this.validity === null ? undefined : this.validity.subarray(0, (length + 7) >> 3);
    const data = this.data(length, nullCount, nullBitmap);
    this.length = 0;
    this.capacity = 0;
    this.validity = this.validity === null ? null : new Uint8Array(0);
    this.reset();
    return data;
  }

  reserve(values: number): void {
    if (values > this.capacity) this.setCapacity(values);
  }

  private grow(needed: number): void {
    this.setCapacity(grown(this.capacity, needed));
  }

  private setCapacity(capacity: number): void {
    this.capacity = capacity;
    if (this.validity !== null) this.validity = resizeBits(this.validity, capacity);
    this.resize(capacity);
  }

  /** Makes room for `capacity` slots, keeping what is there. */
  protected abstract resize(capacity: number): void;
  /** Writes a non-null value into slot `i`; false when the value does not fit the type. */
  protected abstract write(value: unknown, i: number): boolean;
  /** Writes the placeholder of a null slot `i`. */
  protected abstract writeEmpty(i: number): void;
  protected abstract data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data;
  /** Drops the buffers handed out by `finish`. */
  protected abstract reset(): void;
}

/** boolean, bit-packed. */
export class BoolColumn extends LeafColumn {
  private bits: Uint8Array = new Uint8Array(0);

  protected resize(capacity: number): void {
    this.bits = resizeBits(this.bits, capacity);
  }

  protected write(value: unknown, i: number): boolean {
    if (value === true) setBit(this.bits, i);
    else if (value === false) clearBit(this.bits, i);
    else return false;
    return true;
  }

  protected writeEmpty(i: number): void {
    clearBit(this.bits, i);
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: this.bits.subarray(0, (length + 7) >> 3) });
  }

  protected reset(): void {
    this.bits = new Uint8Array(0);
  }
}

/** Parses a value from the bytes of its text: the content of a JSON string without escapes. */
export type TextParser<T> = (bytes: Uint8Array, start: number, end: number) => T | undefined;

/** A column whose values are written as text (dates, times, timestamps), which it can read from bytes. */
export interface TextColumn extends Column {
  /** Appends the value of the text in `bytes[start, end)`; false (nothing appended) when it does not fit. */
  appendText(bytes: Uint8Array, start: number, end: number): boolean;
}

export function isTextColumn(column: Column): column is TextColumn {
  return (column instanceof Int32Column || column instanceof Int64Column) && column.readsText;
}

/** 32-bit integers (int, date). */
export class Int32Column extends LeafColumn {
  private values = new Int32Array(0);

  constructor(
    spec: LeafSpec,
    private readonly parse: (value: unknown) => number | undefined,
    private readonly parseText?: TextParser<number>,
  ) {
    super(spec);
  }

  get readsText(): boolean {
    return this.parseText !== undefined;
  }

  protected resize(capacity: number): void {
    const next = new Int32Array(capacity);
    next.set(this.values);
    this.values = next;
  }

  protected write(value: unknown, i: number): boolean {
    const n = this.parse(value);
    if (n === undefined) return false;
    this.values[i] = n;
    return true;
  }

  appendText(bytes: Uint8Array, start: number, end: number): boolean {
    const n = this.parseText?.(bytes, start, end);
    if (n === undefined) return false;
    this.appendInt32(n);
    return true;
  }

  /** Appends an integer the caller knows is in the 32-bit range (what `append` would store for it). */
  appendInt32(n: number): void {
    const i = this.nextSlot();
    this.values[i] = n;
    this.taken(i);
  }

  protected writeEmpty(i: number): void {
    this.values[i] = 0;
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: this.values.subarray(0, length) });
  }

  protected reset(): void {
    this.values = new Int32Array(0);
  }
}

/**
 * 64-bit integers (long, time, timestamp, timestamptz). Safe integers are written as two
 * 32-bit words (no bigint allocation on the hot path); larger values through a BigInt64Array
 * view of the same buffer.
 */
export class Int64Column extends LeafColumn {
  private big = new BigInt64Array(0);
  private words = new Uint32Array(0);
  /** The last text value parsed and its value (a text parses the same every time). */
  private lastText: string | undefined;
  private lastValue: number | bigint | undefined;

  constructor(
    spec: LeafSpec,
    private readonly parse: (value: unknown) => number | bigint | undefined,
    private readonly parseText?: TextParser<number | bigint>,
  ) {
    super(spec);
  }

  get readsText(): boolean {
    return this.parseText !== undefined;
  }

  protected resize(capacity: number): void {
    const next = new BigInt64Array(capacity);
    next.set(this.big);
    this.big = next;
    this.words = new Uint32Array(next.buffer);
  }

  protected write(value: unknown, i: number): boolean {
    let n: number | bigint | undefined;
    if (typeof value === 'string') {
      // An injected column (the ingest time) appends one text to every row of a batch.
      if (value !== this.lastText) {
        this.lastText = value;
        this.lastValue = this.parse(value);
      }
      n = this.lastValue;
    } else {
      n = this.parse(value);
    }
    if (n === undefined) return false;
    this.store(n, i);
    return true;
  }

  appendText(bytes: Uint8Array, start: number, end: number): boolean {
    const n = this.parseText?.(bytes, start, end);
    if (n === undefined) return false;
    this.appendInteger(n);
    return true;
  }

  /** Appends an integer the caller knows is in the 64-bit range (what `append` would store for it). */
  appendInteger(n: number | bigint): void {
    const i = this.nextSlot();
    this.store(n, i);
    this.taken(i);
  }

  private store(n: number | bigint, i: number): void {
    if (typeof n === 'number') {
      const hi = Math.floor(n / TWO_32);
      this.words[2 * i] = n - hi * TWO_32;
      this.words[2 * i + 1] = hi;
    } else {
      this.big[i] = n;
    }
  }

  protected writeEmpty(i: number): void {
    this.words[2 * i] = 0;
    this.words[2 * i + 1] = 0;
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: this.big.subarray(0, length) });
  }

  protected reset(): void {
    this.big = new BigInt64Array(0);
    this.words = new Uint32Array(0);
  }
}

/** float and double. */
export class FloatColumn extends LeafColumn {
  private values: Float32Array | Float64Array;

  constructor(
    spec: LeafSpec,
    private readonly width: 32 | 64,
  ) {
    super(spec);
    this.values = this.allocate(0);
  }

  private allocate(capacity: number): Float32Array | Float64Array {
    return this.width === 32 ? new Float32Array(capacity) : new Float64Array(capacity);
  }

  protected resize(capacity: number): void {
    const next = this.allocate(capacity);
    next.set(this.values);
    this.values = next;
  }

  protected write(value: unknown, i: number): boolean {
    // Called directly, the parsers are inlined; a parser held in a field, one for float columns
    // and another for double ones, would be a call V8 does not inline, with the double boxed.
    const n = this.width === 32 ? toFloat32(value) : toFloat64(value);
    if (n === undefined) return false;
    this.values[i] = n;
    return true;
  }

  /** Appends a finite double; false (nothing appended) when it is beyond a float column's range. */
  appendFinite(n: number): boolean {
    const v = this.width === 32 ? Math.fround(n) : n;
    if (!Number.isFinite(v)) return false;
    const i = this.nextSlot();
    this.values[i] = v;
    this.taken(i);
    return true;
  }

  protected writeEmpty(i: number): void {
    this.values[i] = 0;
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: this.values.subarray(0, length) });
  }

  protected reset(): void {
    this.values = this.allocate(0);
  }
}

/** decimal as Decimal128: four little-endian 32-bit words of the unscaled two's complement value. */
export class DecimalColumn extends LeafColumn {
  private words = new Uint32Array(0);

  constructor(spec: LeafSpec, private readonly parse: (value: unknown) => number | bigint | undefined) {
    super(spec);
  }

  protected resize(capacity: number): void {
    const next = new Uint32Array(capacity * 4);
    next.set(this.words);
    this.words = next;
  }

  protected write(value: unknown, i: number): boolean {
    const n = this.parse(value);
    if (n === undefined) return false;
    const at = 4 * i;
    if (typeof n === 'number') {
      const hi = Math.floor(n / TWO_32);
      const sign = n < 0 ? 0xffffffff : 0;
      this.words[at] = n - hi * TWO_32;
      this.words[at + 1] = hi;
      this.words[at + 2] = sign;
      this.words[at + 3] = sign;
    } else {
      const u = BigInt.asUintN(128, n);
      for (let w = 0; w < 4; w++) this.words[at + w] = Number((u >> BigInt(32 * w)) & 0xffffffffn);
    }
    return true;
  }

  protected writeEmpty(i: number): void {
    this.words.fill(0, 4 * i, 4 * i + 4);
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: this.words.subarray(0, 4 * length) });
  }

  protected reset(): void {
    this.words = new Uint32Array(0);
  }
}

/** Fixed-width bytes (uuid, fixed[L]); `write` decodes a value into `width` bytes in place. */
export class FixedBytesColumn extends LeafColumn {
  private bytes: Uint8Array = new Uint8Array(0);

  constructor(
    spec: LeafSpec,
    private readonly width: number,
    private readonly decode: (value: unknown, target: Uint8Array, offset: number) => boolean,
  ) {
    super(spec);
  }

  protected resize(capacity: number): void {
    const next = Buffer.allocUnsafeSlow(capacity * this.width);
    next.set(this.bytes);
    this.bytes = next;
  }

  protected write(value: unknown, i: number): boolean {
    return this.decode(value, this.bytes, i * this.width);
  }

  protected writeEmpty(i: number): void {
    this.bytes.fill(0, i * this.width, (i + 1) * this.width);
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const bytes = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, length * this.width);
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, data: bytes });
  }

  protected reset(): void {
    this.bytes = new Uint8Array(0);
  }
}

/** How variable-width values become bytes. */
export interface VarBytesEncoding {
  /** An upper bound of the encoded length, or -1 when the value does not fit the type. */
  maxLength(value: unknown): number;
  /** Writes the value at `offset`; returns the bytes written, or -1 when the value does not fit the type. */
  write(value: unknown, target: Buffer, offset: number): number;
}

function checkOffset(end: number): void {
  if (end > 0x7fffffff) throw new RangeError('a column holds more than 2 GiB of bytes; write smaller batches');
}

/** Variable-width bytes (string as UTF-8, binary) with 32-bit offsets (Utf8/Binary, not Large*). */
export class VarBytesColumn extends LeafColumn {
  private offsets = new Int32Array(1);
  private bytes = Buffer.alloc(0);

  constructor(spec: LeafSpec, private readonly encoding: VarBytesEncoding) {
    super(spec);
  }

  protected resize(capacity: number): void {
    const next = new Int32Array(capacity + 1);
    next.set(this.offsets);
    this.offsets = next;
  }

  protected write(value: unknown, i: number): boolean {
    const max = this.encoding.maxLength(value);
    if (max < 0) return false;
    const start = this.offsets[i] as number;
    if (start + max > this.bytes.length) this.reserveBytes(start + max);
    const written = this.encoding.write(value, this.bytes, start);
    if (written < 0) return false;
    const end = start + written;
    checkOffset(end);
    this.offsets[i + 1] = end;
    return true;
  }

  /**
   * Appends bytes that are already the value's encoding, as they are: for a string column,
   * valid UTF-8 (the caller checked it), which is what `append` would write for its text.
   */
  appendEncoded(source: Uint8Array, start: number, end: number): void {
    const i = this.nextSlot();
    const at = this.offsets[i] as number;
    const stop = at + end - start;
    checkOffset(stop);
    if (stop > this.bytes.length) this.reserveBytes(stop);
    // Short values: a loop beats the call into native code.
    if (end - start < 32) for (let k = start; k < end; k++) this.bytes[at + k - start] = source[k] as number;
    else this.bytes.set(source.subarray(start, end), at);
    this.offsets[i + 1] = stop;
    this.taken(i);
  }

  /** Room for `values` values, and for their bytes at the average length so far. */
  override reserve(values: number): void {
    super.reserve(values);
    const length = this.length;
    if (length > 0) {
      const bytes = Math.ceil(((this.offsets[length] as number) / length) * values);
      if (bytes > this.bytes.length) this.setByteCapacity(Math.min(bytes, 0x7fffffff));
    }
  }

  private reserveBytes(needed: number): void {
    this.setByteCapacity(grown(this.bytes.length * 2, needed));
  }

  private setByteCapacity(capacity: number): void {
    const next = Buffer.allocUnsafeSlow(capacity);
    this.bytes.copy(next, 0, 0, this.offsets[this.length] as number);
    this.bytes = next;
  }

  protected writeEmpty(i: number): void {
    this.offsets[i + 1] = this.offsets[i] as number;
  }

  protected data(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const valueOffsets = this.offsets.subarray(0, length + 1);
    const bytes = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, valueOffsets[length] as number);
    return leafData({ type: this.spec.type, length, nullCount, nullBitmap, valueOffsets, data: bytes });
  }

  protected reset(): void {
    this.offsets = new Int32Array(1);
    this.bytes = Buffer.alloc(0);
  }
}
