import { isUtf8 } from 'node:buffer';
import { type Data, type DataType, Field, List, Map_, RecordBatch, Schema as ArrowSchema, Struct, Table } from 'apache-arrow';
import { isLosslessNumber } from 'lossless-json';
import type { Schema } from '../spec/schema.ts';
import { type IcebergType, containsUnsupported, describeType } from '../spec/types.ts';
import { type Column, type Failure, FloatColumn, Int32Column, Int64Column, isTextColumn, type RejectReason, VarBytesColumn } from './columns.ts';
import { isJsonObject, ListColumn, MapColumn, StructColumn, type StructSlot, UnsupportedColumn, structSlot } from './nested-columns.ts';
import { longLiterals, parseJsonLossless } from './json-row.ts';
import { type ByteField, ByteRowReader, plainKey } from './ndjson-bytes.ts';
import { PARQUET_FIELD_ID, ruleFor } from './type-table.ts';
import { checkingRounded, POSSIBLY_ROUNDED } from './values.ts';

export type { RejectReason } from './columns.ts';

/** Why one row was not taken. The row's other values are not written either. */
export interface RowReject {
  reason: RejectReason;
  /** Dotted path of the offending field (`address.zip`, `tags[3]`, `attrs.color`); "" for the whole row. */
  field: string;
  /** What the field takes, in words (type_mismatch). */
  expected?: string;
  /** A short rendering of the value that was there (absent when it was missing). */
  got?: string;
  message: string;
}

/** A row of an NDJSON chunk that was not taken. */
export interface NdjsonReject {
  /** 0-based index of the line in the chunk (blank lines counted). */
  line: number;
  /** The line as it was (without its newline). */
  text: string;
  reject: RowReject;
}

/** Why a whole NDJSON chunk was not taken. */
export interface NdjsonChunkError {
  kind: 'not_utf8' | 'not_json';
  /** 0-based index of the first offending line. */
  line: number;
  /** What the JSON parser said about the line (not_json). */
  detail?: string;
  message: string;
}

/** The error of a chunk whose line `line` (0-based) is not UTF-8 or not JSON. */
export function ndjsonChunkError(kind: NdjsonChunkError['kind'], line: number, detail?: string): NdjsonChunkError {
  if (kind === 'not_utf8') return { kind, line, message: `line ${line + 1} is not UTF-8 text` };
  return { kind, line, detail, message: `line ${line + 1} is not JSON (${detail})` };
}

/**
 * The outcome of one NDJSON chunk: its rows taken one by one (`rows` taken, `rejects` not, of
 * `lines` lines, blank ones included), or none when it is unreadable.
 */
export type NdjsonChunkResult = { ok: true; rows: number; lines: number; rejects: NdjsonReject[] } | { ok: false; error: NdjsonChunkError };

export interface RowConverterOptions {
  /**
   * Top-level columns the writer fills once per batch with `setInjected` (e.g. an ingest
   * timestamp). Rows must not carry them.
   */
  injected?: readonly string[];
  /**
   * A key the (struct's) schema lacks whose value is null: `reject` the row as unknown_field
   * (the default), or `skip` the key, which then carries no data (for a writer that adds
   * columns for new fields, which cannot type a null).
   */
  unknownNulls?: 'reject' | 'skip';
}

export interface RowConverter {
  /** The Arrow schema of the tables `finish` returns: field ids on every field. */
  readonly arrowSchema: ArrowSchema;
  /** Rows taken since the last `finish`. */
  readonly rowCount: number;
  /** Converts one parsed JSON row; null when taken, else why not (and nothing of it is kept). */
  append(row: unknown): RowReject | null;
  /**
   * Parses and converts one row of JSON text, exactly and faster than `append(parseJsonRow(text))`:
   * `JSON.parse` first, and a lossless re-parse only when a long literal may have reached an
   * integer or decimal column. Throws SyntaxError when the text is not JSON.
   */
  appendJson(text: string): RowReject | null;
  /**
   * Converts a chunk of NDJSON (UTF-8 bytes, one row per line, blank lines skipped) with the
   * values and rejects of `appendJson`, reading plain rows straight from the bytes (several
   * times faster). All or nothing on syntax: when the chunk is not UTF-8 or a line is not JSON,
   * none of its rows are kept.
   */
  appendNdjson(bytes: Uint8Array): NdjsonChunkResult;
  /** Drops the rows taken after the first `rowCount` (e.g. a batch that turned out unreadable). */
  truncate(rowCount: number): void;
  /** Sets the value of an injected column for the rows appended from now on. */
  setInjected(name: string, value: unknown): void;
  /** The taken rows as one Arrow table; the converter starts over empty. */
  finish(): Table;
}

/** A column and its Arrow field; `field` is null when the type cannot be written. */
interface Built {
  column: Column;
  field: Field | null;
}

/**
 * Compiles a converter for one schema. Compile once per schema and reuse: the per-row work
 * is one pass over the row's keys into preallocated Arrow buffers.
 */
export function compileRowConverter(schema: Schema, options: RowConverterOptions = {}): RowConverter {
  const injected = new Set(options.injected ?? []);
  const skipUnknownNulls = options.unknownNulls === 'skip';
  for (const name of injected) {
    if (!schema.fields.some((field) => field.name === name)) throw new TypeError(`injected column ${name} is not a top-level field of the schema`);
  }
  const slots: StructSlot[] = [];
  const fields: Field[] = [];
  for (const field of schema.fields) {
    const built = build(field.name, field.id, field.type, field.required, skipUnknownNulls);
    slots.push(structSlot(field.name, built.column, injected.has(field.name)));
    if (built.field !== null) fields.push(built.field);
  }
  const root = new StructColumn(new Struct(fields), slots, false, 'a JSON object', skipUnknownNulls);
  const byteFields = schema.fields.map((field, i): ByteField => {
    const slot = slots[i] as StructSlot;
    return {
      slot,
      key: plainKey(field.name),
      strings: field.type.kind === 'string' && slot.column instanceof VarBytesColumn ? slot.column : null,
      text: isTextColumn(slot.column) ? slot.column : null,
      exact: holdsExactNumbers(field.type),
      int32: field.type.kind === 'int' && slot.column instanceof Int32Column ? slot.column : null,
      int64: field.type.kind === 'long' && slot.column instanceof Int64Column ? slot.column : null,
      floats: (field.type.kind === 'float' || field.type.kind === 'double') && slot.column instanceof FloatColumn ? slot.column : null,
    };
  });
  const reader = new ByteRowReader(root, byteFields);
  return new Converter(new ArrowSchema(fields), root, slots, reader, schema.fields.some((field) => holdsExactNumbers(field.type)));
}

/** Whether JSON.parse rounding could change a value of this type (integers and decimals). */
function holdsExactNumbers(type: IcebergType): boolean {
  switch (type.kind) {
    case 'int':
    case 'long':
    case 'decimal':
      return true;
    case 'struct':
      return type.fields.some((field) => holdsExactNumbers(field.type));
    case 'list':
      return holdsExactNumbers(type.element);
    case 'map':
      return holdsExactNumbers(type.key) || holdsExactNumbers(type.value);
    default:
      return false;
  }
}

class Converter implements RowConverter {
  private readonly unset: Set<string>;

  constructor(
    readonly arrowSchema: ArrowSchema,
    private readonly root: StructColumn,
    private readonly slots: readonly StructSlot[],
    private readonly reader: ByteRowReader,
    private readonly exactNumbers: boolean,
  ) {
    this.unset = new Set(slots.filter((slot) => slot.injected).map((slot) => slot.name));
  }

  get rowCount(): number {
    return this.root.length;
  }

  private checkInjected(): void {
    if (this.unset.size > 0) throw new TypeError(`set the injected columns first: ${[...this.unset].join(', ')}`);
  }

  append(row: unknown): RowReject | null {
    this.checkInjected();
    if (!isJsonObject(row)) return toReject({ reason: 'not_an_object', path: [], got: row });
    const failure = this.root.append(row);
    return failure === null ? null : toReject(failure);
  }

  appendJson(text: string): RowReject | null {
    const literals = this.exactNumbers ? longLiterals(text) : null;
    if (literals === null) return this.append(JSON.parse(text));
    try {
      return checkingRounded(literals, () => this.append(JSON.parse(text)));
    } catch (error) {
      if (error !== POSSIBLY_ROUNDED) throw error;
      // The throw left partial values behind: cut every column back to the rows taken.
      this.root.truncate(this.root.length);
      return this.append(parseJsonLossless(text));
    }
  }

  appendNdjson(bytes: Uint8Array): NdjsonChunkResult {
    this.checkInjected();
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (!isUtf8(b)) {
      const line = lineSpans(b).findIndex(([start, end]) => !isUtf8(b.subarray(start, end)));
      return { ok: false, error: ndjsonChunkError('not_utf8', line) };
    }
    const before = this.root.length;
    const rejects: NdjsonReject[] = [];
    let line = 0;
    for (let start = 0; start < b.length; line++) {
      // The reader finds the end of a line it takes; only the others are looked for.
      let end = this.reader.read(b, start, b.length);
      if (end < 0) {
        const newline = b.indexOf(NEWLINE, start);
        end = newline < 0 ? b.length : newline;
        if (!isBlank(b, start, end)) {
          const text = b.toString('utf8', start, end);
          let reject: RowReject | null;
          try {
            reject = this.appendJson(text);
          } catch (error) {
            if (!(error instanceof SyntaxError)) throw error;
            this.root.truncate(before);
            return { ok: false, error: ndjsonChunkError('not_json', line, error.message) };
          }
          if (reject !== null) rejects.push({ line, text, reject });
        }
      }
      start = end + 1;
      if (line === SIZING_LINES) this.reserveFor(b.length - start, start, this.root.length - before);
    }
    return { ok: true, rows: this.root.length - before, lines: line, rejects };
  }

  /**
   * Makes room for the rows `remaining` bytes will likely hold, at the rate of the first ones
   * (`rows` in `read` bytes), so that a big chunk's columns grow once rather than by doubling:
   * every doubling is a copy, and garbage that makes the collector run.
   */
  private reserveFor(remaining: number, read: number, rows: number): void {
    if (remaining < read) return;
    this.root.reserve(this.root.length + Math.ceil(((rows / read) * remaining) * 1.05));
  }

  truncate(rowCount: number): void {
    if (!Number.isInteger(rowCount) || rowCount < 0 || rowCount > this.root.length) {
      throw new RangeError(`cannot truncate ${this.root.length} rows to ${rowCount}`);
    }
    this.root.truncate(rowCount);
  }

  setInjected(name: string, value: unknown): void {
    const slot = this.slots.find((s) => s.name === name && s.injected);
    if (slot === undefined) throw new TypeError(`${name} is not an injected column`);
    const before = slot.column.length;
    const failure = slot.column.append(value);
    if (failure !== null) throw new TypeError(`invalid value for injected column ${name}: ${toReject({ ...failure, path: [name, ...failure.path] }).message}`);
    slot.column.truncate(before);
    slot.injectedValue = value;
    this.unset.delete(name);
  }

  finish(): Table {
    return new Table([new RecordBatch(this.arrowSchema, this.root.finish() as Data<Struct>)]);
  }
}

const NEWLINE = 0x0a;
/** Lines read before sizing the columns for the rest of a chunk. */
const SIZING_LINES = 1000;

/** A line of nothing but JSON whitespace (spaces, tabs, a carriage return). */
function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** [start, end) of each line. */
function lineSpans(b: Buffer): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (let start = 0; start < b.length; ) {
    const newline = b.indexOf(NEWLINE, start);
    const end = newline < 0 ? b.length : newline;
    spans.push([start, end]);
    start = end + 1;
  }
  return spans;
}

function fieldMetadata(id: number): Map<string, string> {
  return new Map([[PARQUET_FIELD_ID, String(id)]]);
}

function build(name: string, id: number, type: IcebergType, required: boolean, skipUnknownNulls: boolean): Built {
  if (type.kind !== 'struct' && containsUnsupported(type)) {
    return { column: new UnsupportedColumn(required, describeType(type)), field: null };
  }
  const nullable = !required;
  const arrowField = (arrowType: DataType) => new Field(name, arrowType, nullable, fieldMetadata(id));
  switch (type.kind) {
    case 'struct': {
      const slots: StructSlot[] = [];
      const children: Field[] = [];
      for (const child of type.fields) {
        const built = build(child.name, child.id, child.type, child.required, skipUnknownNulls);
        slots.push(structSlot(child.name, built.column));
        if (built.field !== null) children.push(built.field);
      }
      // Parquet has no empty groups: a struct with nothing writable is unsupported as a whole.
      if (children.length === 0) return { column: new UnsupportedColumn(required, describeType(type)), field: null };
      const struct = new Struct(children);
      return { column: new StructColumn(struct, slots, nullable, 'struct (a JSON object)', skipUnknownNulls), field: arrowField(struct) };
    }
    case 'list': {
      const element = build('element', type.elementId, type.element, type.elementRequired, skipUnknownNulls);
      const list = new List(element.field as Field);
      return { column: new ListColumn(list, element.column, nullable, `${describeType(type)} (a JSON array)`), field: arrowField(list) };
    }
    case 'map': {
      const key = build('key', type.keyId, type.key, true, skipUnknownNulls);
      const value = build('value', type.valueId, type.value, type.valueRequired, skipUnknownNulls);
      const entries = new Struct([key.field as Field, value.field as Field]);
      const map = new Map_(new Field('key_value', entries, false));
      const stringKeys = type.key.kind === 'string';
      const expected = `${describeType(type)} (${stringKeys ? 'a JSON object or ' : ''}an array of {"key": ..., "value": ...} objects)`;
      return { column: new MapColumn(map, entries, key.column, value.column, stringKeys, nullable, expected), field: arrowField(map) };
    }
    case 'unsupported':
      return { column: new UnsupportedColumn(required, type.name), field: null };
    default: {
      const rule = ruleFor(type);
      const arrowType = rule.arrow(type);
      return { column: rule.column(type, { type: arrowType, expected: rule.expected(type), nullable }), field: arrowField(arrowType) };
    }
  }
}

/** `address.zip`, `tags[3]`, `attrs.color`. */
function formatPath(path: ReadonlyArray<string | number>): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

const GOT_LIMIT = 64;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > GOT_LIMIT ? `${value.slice(0, GOT_LIMIT)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (isLosslessNumber(value)) return value.value;
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

function toReject(failure: Failure): RowReject {
  const field = formatPath(failure.path);
  const got = failure.got === undefined ? undefined : describeValue(failure.got);
  const reject: RowReject = { reason: failure.reason, field, message: '' };
  switch (failure.reason) {
    case 'missing_required':
      reject.message = `${field} is required but ${got === undefined ? 'missing' : 'null'}`;
      break;
    case 'unknown_field':
      reject.message = failure.injected
        ? `${field} is set by the writer, not by rows; remove it from the row`
        : `${field} is not a field of the table schema`;
      break;
    case 'type_mismatch':
      reject.expected = failure.expected;
      reject.message = `${field}: expected ${failure.expected}, got ${got}`;
      break;
    case 'unsupported_type':
      reject.message = `${field} has type ${failure.expected}, which this writer cannot write; send null or leave it out`;
      break;
    case 'not_an_object':
      reject.message = `a row must be a JSON object, got ${got}`;
      break;
  }
  if (got !== undefined) reject.got = got;
  return reject;
}
