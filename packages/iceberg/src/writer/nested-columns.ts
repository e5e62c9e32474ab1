import { isLosslessNumber, LosslessNumber } from 'lossless-json';
import { type Data, type List, type Map_, makeData, type Struct } from 'apache-arrow';
import { type Column, type Failure, clearBit, countNulls, setBit } from './columns.ts';

/**
 * Struct, list and map columns over child columns, plus the placeholder for fields this
 * writer cannot fill. Each keeps the column contract: a failed append changes nothing.
 */

/** A JSON object (not an array, not a lossless number); runs once per struct value, so kept cheap. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof LosslessNumber);
}

/** Validity bits and length shared by the nested columns. */
class Slots {
  length = 0;
  capacity = 0;
  validity: Uint8Array | null;

  constructor(nullable: boolean) {
    this.validity = nullable ? new Uint8Array(0) : null;
  }

  /** Makes room for one more slot; returns true when the capacity changed. */
  reserve(): boolean {
    if (this.length < this.capacity) return false;
    this.setCapacity(Math.max(1024, this.capacity * 2));
    return true;
  }

  /** Makes room for `slots` slots in all; returns true when the capacity changed. */
  reserveTo(slots: number): boolean {
    if (slots <= this.capacity) return false;
    // A multiple of 8 keeps whole validity bytes.
    this.setCapacity(Math.ceil(slots / 8) * 8);
    return true;
  }

  private setCapacity(capacity: number): void {
    this.capacity = capacity;
    if (this.validity !== null) {
      const next = new Uint8Array(capacity >> 3);
      next.set(this.validity);
      this.validity = next;
    }
  }

  push(valid: boolean): void {
    if (this.validity !== null) {
      if (valid) setBit(this.validity, this.length);
      else clearBit(this.validity, this.length);
    }
    this.length++;
  }

  /** Null count and bitmap of what was pushed, then starts over. */
  finish(): { length: number; nullCount: number; nullBitmap: Uint8Array | undefined } {
    const length = this.length;
    const nullCount = this.validity === null ? 0 : countNulls(this.validity, length);
    const nullBitmap = nullCount === 0 || this.validity === null ? undefined : this.validity.subarray(0, (length + 7) >> 3);
    this.length = 0;
    this.capacity = 0;
    if (this.validity !== null) this.validity = new Uint8Array(0);
    return { length, nullCount, nullBitmap };
  }
}

function requiredNull(value: unknown): Failure {
  return value === undefined ? { reason: 'missing_required', path: [] } : { reason: 'missing_required', path: [], got: value };
}

/** One struct field: where its values go and what a row may say about it. */
export interface StructSlot {
  readonly name: string;
  /** Holds the field's values and knows whether null is allowed. */
  readonly column: Column;
  /** Set by the writer once per batch (`RowConverter.setInjected`), never by rows. */
  readonly injected: boolean;
  injectedValue: unknown;
  /** The fill pass that last saw this field. */
  seen: number;
}

export function structSlot(name: string, column: Column, injected = false): StructSlot {
  return { name, column, injected, injectedValue: null, seen: 0 };
}

/**
 * A struct (also the row itself): a JSON object whose keys are the field names. `type` has a
 * child for every field with Arrow data (unsupported fields have none).
 */
export class StructColumn implements Column {
  private readonly slots: Slots;
  private readonly byName = new Map<string, StructSlot>();
  private readonly written: readonly StructSlot[];
  private pass = 0;

  constructor(
    private readonly type: Struct,
    private readonly fields: readonly StructSlot[],
    nullable: boolean,
    private readonly expected: string,
    /** A null under a key the struct lacks is passed over (RowConverterOptions.unknownNulls). */
    private readonly skipUnknownNulls = false,
  ) {
    this.slots = new Slots(nullable);
    for (const field of fields) this.byName.set(field.name, field);
    this.written = fields.filter((field) => !(field.column instanceof UnsupportedColumn));
  }

  get length(): number {
    return this.slots.length;
  }

  append(value: unknown): Failure | null {
    if (value === null || value === undefined) {
      if (this.slots.validity === null) return requiredNull(value);
      this.appendEmpty();
      return null;
    }
    if (!isJsonObject(value)) return { reason: 'type_mismatch', path: [], expected: this.expected, got: value };
    const failure = this.fill(value);
    if (failure !== null) {
      this.truncate(this.slots.length);
      return failure;
    }
    this.pushValid();
    return null;
  }

  private pushValid(): void {
    this.slots.reserve();
    this.slots.push(true);
  }

  /**
   * Starts a value filled field by field by a caller that reads the fields itself (the NDJSON
   * byte reader): it appends to each field's column and sets the field's `seen` to the pass
   * returned here, then calls `endRow`. The fields are `fields` as given to the constructor.
   */
  beginRow(): number {
    return ++this.pass;
  }

  /**
   * Completes a value begun with `beginRow` after `seen` fields were filled: nulls (or the
   * injected values) for the others, then the value's slot. On failure, the caller truncates.
   */
  endRow(pass: number, seen: number): Failure | null {
    const failure = this.fillMissing(pass, seen);
    if (failure === null) this.pushValid();
    return failure;
  }

  /**
   * Appends one value to every field from `object`: one pass over the object's keys (unknown
   * keys fail), then nulls for the fields it lacks. The caller truncates on failure.
   */
  private fill(object: Record<string, unknown>): Failure | null {
    const pass = ++this.pass;
    let seen = 0;
    for (const key in object) {
      const field = this.byName.get(key);
      if (field === undefined || field.injected) {
        if (field === undefined && this.skipUnknownNulls && object[key] === null) continue;
        return { reason: 'unknown_field', path: [key], injected: field !== undefined };
      }
      const failure = field.column.append(object[key]);
      if (failure !== null) {
        failure.path.unshift(key);
        return failure;
      }
      field.seen = pass;
      seen++;
    }
    return this.fillMissing(pass, seen);
  }

  /** Appends to the fields a value lacked (those not seen in `pass`). */
  private fillMissing(pass: number, seen: number): Failure | null {
    if (seen === this.fields.length) return null;
    for (const field of this.fields) {
      if (field.seen === pass) continue;
      const failure = field.column.append(field.injected ? field.injectedValue : undefined);
      if (failure !== null) {
        failure.path.unshift(field.name);
        return failure;
      }
    }
    return null;
  }

  appendEmpty(): void {
    for (const field of this.fields) field.column.appendEmpty();
    this.slots.reserve();
    this.slots.push(false);
  }

  truncate(length: number): void {
    this.slots.length = length;
    for (const field of this.fields) field.column.truncate(length);
  }

  reserve(values: number): void {
    this.slots.reserveTo(values);
    for (const field of this.fields) field.column.reserve(values);
  }

  finish(): Data {
    for (const field of this.fields) if (field.column instanceof UnsupportedColumn) field.column.truncate(0);
    const children = this.written.map((field) => field.column.finish());
    return makeData({ type: this.type, ...this.slots.finish(), children });
  }
}

/** A list: a JSON array. */
export class ListColumn implements Column {
  private readonly slots: Slots;
  private offsets: Int32Array = new Int32Array(1);

  constructor(
    private readonly type: List,
    private readonly element: Column,
    nullable: boolean,
    private readonly expected: string,
  ) {
    this.slots = new Slots(nullable);
  }

  get length(): number {
    return this.slots.length;
  }

  append(value: unknown): Failure | null {
    if (value === null || value === undefined) {
      if (this.slots.validity === null) return requiredNull(value);
      this.appendEmpty();
      return null;
    }
    if (!Array.isArray(value)) return { reason: 'type_mismatch', path: [], expected: this.expected, got: value };
    const start = this.element.length;
    for (let i = 0; i < value.length; i++) {
      const failure = this.element.append(value[i]);
      if (failure !== null) {
        this.element.truncate(start);
        failure.path.unshift(i);
        return failure;
      }
    }
    this.push(true);
    return null;
  }

  appendEmpty(): void {
    this.push(false);
  }

  private push(valid: boolean): void {
    if (this.slots.reserve()) this.offsets = growOffsets(this.offsets, this.slots.capacity);
    this.offsets[this.slots.length + 1] = this.element.length;
    this.slots.push(valid);
  }

  truncate(length: number): void {
    this.slots.length = length;
    this.element.truncate(this.offsets[length] as number);
  }

  /** Room for `values` lists (their elements grow as they come). */
  reserve(values: number): void {
    if (this.slots.reserveTo(values)) this.offsets = growOffsets(this.offsets, this.slots.capacity);
  }

  finish(): Data {
    const slots = this.slots.finish();
    const valueOffsets = this.offsets.subarray(0, slots.length + 1);
    this.offsets = new Int32Array(1);
    return makeData({ type: this.type, ...slots, valueOffsets, child: this.element.finish() });
  }
}

/**
 * A map: a JSON object when keys are strings, or (for any key type) an array of
 * `{"key": ..., "value": ...}` objects. Keys are never null; a key may appear once.
 */
export class MapColumn implements Column {
  private readonly slots: Slots;
  private offsets: Int32Array = new Int32Array(1);

  constructor(
    private readonly type: Map_,
    private readonly entries: Struct,
    private readonly keys: Column,
    private readonly values: Column,
    private readonly stringKeys: boolean,
    nullable: boolean,
    private readonly expected: string,
  ) {
    this.slots = new Slots(nullable);
  }

  get length(): number {
    return this.slots.length;
  }

  append(value: unknown): Failure | null {
    if (value === null || value === undefined) {
      if (this.slots.validity === null) return requiredNull(value);
      this.appendEmpty();
      return null;
    }
    const start = this.keys.length;
    let failure: Failure | null;
    if (Array.isArray(value)) failure = this.appendEntries(value);
    else if (this.stringKeys && isJsonObject(value)) failure = this.appendObject(value);
    else return { reason: 'type_mismatch', path: [], expected: this.expected, got: value };
    if (failure !== null) {
      this.keys.truncate(start);
      this.values.truncate(start);
      return failure;
    }
    this.push(true);
    return null;
  }

  private appendObject(object: Record<string, unknown>): Failure | null {
    for (const key in object) {
      const failure = this.keys.append(key) ?? this.values.append(object[key]);
      if (failure !== null) {
        failure.path.unshift(key);
        return failure;
      }
    }
    return null;
  }

  private appendEntries(entries: readonly unknown[]): Failure | null {
    const seen = new Set<string>();
    for (let i = 0; i < entries.length; i++) {
      const failure = this.appendEntry(entries[i], seen);
      if (failure !== null) {
        failure.path.unshift(i);
        return failure;
      }
    }
    return null;
  }

  private appendEntry(entry: unknown, seen: Set<string>): Failure | null {
    if (!isJsonObject(entry)) return { reason: 'type_mismatch', path: [], expected: 'a {"key": ..., "value": ...} object', got: entry };
    for (const name in entry) {
      if (name !== 'key' && name !== 'value') return { reason: 'unknown_field', path: [name] };
    }
    const key = entry.key;
    const identity = keyIdentity(key);
    if (identity !== undefined && seen.has(identity)) {
      return { reason: 'type_mismatch', path: ['key'], expected: 'a key not already in the map', got: key };
    }
    const keyFailure = this.keys.append(key);
    if (keyFailure !== null) {
      keyFailure.path.unshift('key');
      return keyFailure;
    }
    const valueFailure = this.values.append(entry.value);
    if (valueFailure !== null) {
      valueFailure.path.unshift('value');
      return valueFailure;
    }
    if (identity !== undefined) seen.add(identity);
    return null;
  }

  appendEmpty(): void {
    this.push(false);
  }

  private push(valid: boolean): void {
    if (this.slots.reserve()) this.offsets = growOffsets(this.offsets, this.slots.capacity);
    this.offsets[this.slots.length + 1] = this.keys.length;
    this.slots.push(valid);
  }

  truncate(length: number): void {
    this.slots.length = length;
    const entries = this.offsets[length] as number;
    this.keys.truncate(entries);
    this.values.truncate(entries);
  }

  /** Room for `values` maps (their entries grow as they come). */
  reserve(values: number): void {
    if (this.slots.reserveTo(values)) this.offsets = growOffsets(this.offsets, this.slots.capacity);
  }

  finish(): Data {
    const slots = this.slots.finish();
    const valueOffsets = this.offsets.subarray(0, slots.length + 1);
    this.offsets = new Int32Array(1);
    const keys = this.keys.finish();
    const child = makeData({ type: this.entries, length: keys.length, nullCount: 0, children: [keys, this.values.finish()] });
    return makeData({ type: this.type, ...slots, valueOffsets, child });
  }
}

/** How duplicate keys are recognised: the same JSON spelling of a primitive key. */
function keyIdentity(key: unknown): string | undefined {
  if (typeof key === 'string') return `s${key}`;
  if (typeof key === 'number' || typeof key === 'bigint' || typeof key === 'boolean') return `p${String(key)}`;
  if (isLosslessNumber(key)) return `p${key.value}`;
  return undefined;
}

function growOffsets(offsets: Int32Array, capacity: number): Int32Array {
  const next = new Int32Array(capacity + 1);
  next.set(offsets);
  return next;
}

/**
 * A field whose type this writer cannot produce (geometry, geography, ...): null or absent
 * is fine (the Parquet file leaves the column out, which readers see as null), any other
 * value is rejected. It has no Arrow data.
 */
export class UnsupportedColumn implements Column {
  length = 0;

  constructor(
    private readonly required: boolean,
    private readonly typeName: string,
  ) {}

  append(value: unknown): Failure | null {
    if (value === null || value === undefined) {
      if (this.required) return requiredNull(value);
      this.length++;
      return null;
    }
    // v3's unknown type holds only nulls: a value is the producer's mistake, not a gap of this writer.
    if (this.typeName === 'unknown') return { reason: 'type_mismatch', path: [], expected: 'unknown (always null)', got: value };
    return { reason: 'unsupported_type', path: [], expected: this.typeName, got: value };
  }

  appendEmpty(): void {
    this.length++;
  }

  truncate(length: number): void {
    this.length = length;
  }

  reserve(): void {}

  finish(): Data {
    throw new TypeError('an unsupported column has no Arrow data');
  }
}
