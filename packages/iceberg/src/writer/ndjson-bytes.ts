import { parseJsonRow } from './json-row.ts';
import type { StructColumn, StructSlot } from './nested-columns.ts';
import type { FloatColumn, Int32Column, Int64Column, TextColumn, VarBytesColumn } from './columns.ts';

/**
 * Rows of NDJSON read straight from UTF-8 bytes into the columns, without building a JSON
 * object per row: keys are matched as bytes, numbers computed from their digits, strings of a
 * string column copied as bytes. It takes only the plain case (an object of top-level fields,
 * strings without escapes, numbers whose double is exact to compute) and hands every other row
 * back untouched, for the converter's `appendJson` to take: the values stored and the rejects
 * are always those of `appendJson`.
 */

/** A top-level field as the reader sees it. */
export interface ByteField {
  readonly slot: StructSlot;
  /**
   * The field name in UTF-8; null for a name JSON can only spell with escapes (a quote, a
   * backslash or a control character), whose rows take the general path.
   */
  readonly key: Uint8Array | null;
  /** The column of a string field, fed the value's bytes as they are; null for other types. */
  readonly strings: VarBytesColumn | null;
  /** The column of a date, time or timestamp field, which parses its text from bytes; null for other types. */
  readonly text: TextColumn | null;
  /**
   * The column of an int, long, float or double field, which takes a number straight (each
   * call site sees one class, so V8 inlines it); null for other types, whose numbers go
   * through the column's `append`.
   */
  readonly int32: Int32Column | null;
  readonly int64: Int64Column | null;
  readonly floats: FloatColumn | null;
  /**
   * The type holds int, long or decimal values (nested ones included): a number of more than
   * 15 digits needs the exact (lossless) path. Other types take `JSON.parse`'s doubles.
   */
  readonly exact: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const POINT = 0x2e;
const ZERO = 0x30;

/** 1 for the bytes a JSON string holds as they are: not a quote, a backslash or a control character. */
const PLAIN = Uint8Array.from({ length: 256 }, (_, c) => (c >= 0x20 && c !== QUOTE && c !== BACKSLASH ? 1 : 0));

const NEWLINE = 0x0a;

/** A double holds every integer of up to 15 digits; 10^22 is the largest exact power of ten. */
const MAX_DIGITS = 15;
const TWO_31 = 2147483648;
const POW10: readonly number[] = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * JSON whitespace within a line: a newline ends the row instead, so that no scan of a row
 * reaches past its line (the reader finds the line end as it goes, with no pass of its own).
 */
function isSpace(code: number | undefined): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d;
}

function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** The digit at `i` (0-9), or -1. */
function digitAt(b: Uint8Array, i: number, end: number): number {
  const d = i < end ? (b[i] as number) - ZERO : -1;
  return d >= 0 && d <= 9 ? d : -1;
}

/** Whether `b[i..]` spells `word` (ASCII). */
function spells(b: Uint8Array, i: number, end: number, word: string): boolean {
  if (i + word.length > end) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

/** The UTF-8 of a field name as JSON spells it without escapes; null when it needs escapes. */
export function plainKey(name: string): Uint8Array | null {
  const key = Buffer.from(name, 'utf8');
  return key.every((c) => PLAIN[c] === 1) ? key : null;
}

export class ByteRowReader {
  /** The double of the last number read (`readNumber`), kept out of the return value to stay allocation-free. */
  private number = 0;
  /** The last number read was an integer literal of at most 15 digits (no fraction, no exponent): a safe integer. */
  private integral = false;

  constructor(
    private readonly root: StructColumn,
    private readonly fields: readonly ByteField[],
  ) {}

  /**
   * Converts the row of the line starting at `b[start]` (the chunk ends at `end`). The line's
   * end (its newline, or `end`) when it was taken; -1 when it needs the general path, and then
   * nothing of it was kept.
   */
  read(b: Buffer, start: number, end: number): number {
    const root = this.root;
    const rows = root.length;
    let i = skipSpace(b, start, end);
    if (b[i] !== OPEN_OBJECT) return -1;
    const pass = root.beginRow();
    let seen = 0;
    let next = 0;
    i = skipSpace(b, i + 1, end);
    if (b[i] === CLOSE_OBJECT) {
      i++;
    } else {
      for (;;) {
        if (b[i] !== QUOTE) return this.undo(rows);
        const f = this.match(b, i + 1, end, next);
        if (f < 0) return this.undo(rows);
        const field = this.fields[f] as ByteField;
        if (field.slot.injected || field.slot.seen === pass) return this.undo(rows);
        i = skipSpace(b, i + (field.key as Uint8Array).length + 2, end);
        if (b[i] !== COLON) return this.undo(rows);
        i = this.value(field, b, skipSpace(b, i + 1, end), end);
        if (i < 0) return this.undo(rows);
        field.slot.seen = pass;
        seen++;
        next = f + 1;
        i = skipSpace(b, i, end);
        if (b[i] === COMMA) {
          i = skipSpace(b, i + 1, end);
          continue;
        }
        if (b[i] !== CLOSE_OBJECT) return this.undo(rows);
        i++;
        break;
      }
    }
    i = skipSpace(b, i, end);
    if ((i !== end && b[i] !== NEWLINE) || root.endRow(pass, seen) !== null) return this.undo(rows);
    return i;
  }

  private undo(rows: number): -1 {
    this.root.truncate(rows);
    return -1;
  }

  /**
   * The field whose name, then a closing quote, is spelled at `b[start..]`, trying `hint` (the
   * field after the last one) first; -1 if none (also for a name written with escapes).
   */
  private match(b: Uint8Array, start: number, end: number, hint: number): number {
    const count = this.fields.length;
    for (let t = 0; t < count; t++) {
      const f = hint + t < count ? hint + t : hint + t - count;
      const key = (this.fields[f] as ByteField).key;
      if (key === null) continue;
      const length = key.length;
      if (start + length >= end || b[start + length] !== QUOTE) continue;
      let k = 0;
      while (k < length && key[k] === b[start + k]) k++;
      if (k === length) return f;
    }
    return -1;
  }

  /**
   * Appends the value at `b[i..]` to the field's column; the position after it, or -1. Kept
   * small, with the rarer kinds of value in functions of their own, so that V8 inlines it
   * into `read`: a call per field costs more than most values take to read.
   */
  private value(field: ByteField, b: Buffer, i: number, end: number): number {
    const c = b[i] as number;
    if (c === QUOTE) {
      // Comparisons, not a lookup in PLAIN: V8 compiles them to fewer loads per byte.
      let k = i + 1;
      for (; k < end; k++) {
        const s = b[k] as number;
        if (s === QUOTE || s === BACKSLASH || s < 0x20) break;
      }
      // Escapes take the general path; a raw control character is not JSON.
      if (k >= end || b[k] !== QUOTE) return -1;
      if (field.strings !== null) {
        field.strings.appendEncoded(b, i + 1, k);
        return k + 1;
      }
      return this.text(field, b, i + 1, k) ? k + 1 : -1;
    }
    if (c === MINUS || (c >= ZERO && c <= ZERO + 9)) return this.numberValue(field, b, i, end);
    return this.otherValue(field, b, i, end);
  }

  /** Appends a string's content `b[start, end)` (without escapes) to a column other than a string column's. */
  private text(field: ByteField, b: Buffer, start: number, end: number): boolean {
    if (field.text !== null) return field.text.appendText(b, start, end);
    return field.slot.column.append(b.toString('utf8', start, end)) === null;
  }

  /** Appends the number at `b[i..]`; the position after it, or -1. */
  private numberValue(field: ByteField, b: Buffer, i: number, end: number): number {
    const after = this.readNumber(b, i, end, field.exact);
    if (after < 0) return -1;
    const n = this.number;
    if (field.floats !== null) return field.floats.appendFinite(n) ? after : -1;
    if (this.integral) {
      if (field.int64 !== null) {
        field.int64.appendInteger(n);
        return after;
      }
      if (field.int32 !== null && n >= -TWO_31 && n < TWO_31) {
        field.int32.appendInt32(n + 0);
        return after;
      }
    }
    return field.slot.column.append(n) !== null ? -1 : after;
  }

  /** Appends an object, an array, null, true or false at `b[i..]`; the position after it, or -1. */
  private otherValue(field: ByteField, b: Buffer, i: number, end: number): number {
    const column = field.slot.column;
    const c = b[i] as number;
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const after = nestedEnd(b, i, end);
      if (after < 0) return -1;
      let parsed: unknown;
      try {
        const text = b.toString('utf8', i, after);
        parsed = field.exact ? parseJsonRow(text) : JSON.parse(text);
      } catch {
        return -1;
      }
      return column.append(parsed) === null ? after : -1;
    }
    if (spells(b, i, end, 'null')) return column.append(null) === null ? i + 4 : -1;
    if (spells(b, i, end, 'true')) return column.append(true) === null ? i + 4 : -1;
    if (spells(b, i, end, 'false')) return column.append(false) === null ? i + 5 : -1;
    return -1;
  }

  /**
   * Reads the JSON number at `b[i..]` into `this.number`, the double `JSON.parse` gives for it;
   * returns the position after it, or -1 when it is not a JSON number or (`exact`) has more
   * than 15 significant digits. With at most 15 digits and a power of ten up to 10^22 both
   * factors are exact doubles, so one multiplication or division rounds correctly (Clinger's
   * fast path); otherwise the literal goes through `Number`.
   */
  private readNumber(b: Buffer, i: number, end: number, exact: boolean): number {
    const start = i;
    const negative = b[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let scale = 0;
    let d = digitAt(b, i, end);
    if (d < 0) return -1;
    if (d === 0) {
      i++;
    } else {
      for (; d >= 0; d = digitAt(b, ++i, end)) {
        if (++digits <= MAX_DIGITS) mantissa = mantissa * 10 + d;
      }
    }
    if (b[i] === POINT) {
      d = digitAt(b, ++i, end);
      if (d < 0) return -1;
      for (; d >= 0; d = digitAt(b, ++i, end)) {
        scale++;
        if (digits > 0 || d !== 0) {
          if (++digits <= MAX_DIGITS) mantissa = mantissa * 10 + d;
        }
      }
    }
    let exponent = 0;
    let wide = false;
    const e = b[i];
    if (e === 0x65 || e === 0x45) {
      const sign = b[++i];
      if (sign === MINUS || sign === PLUS) i++;
      d = digitAt(b, i, end);
      if (d < 0) return -1;
      for (; d >= 0; d = digitAt(b, ++i, end)) {
        exponent = exponent * 10 + d;
        if (exponent > 1e6) wide = true;
      }
      if (sign === MINUS) exponent = -exponent;
    }
    const power = exponent - scale;
    this.integral = power === 0 && scale === 0 && digits <= MAX_DIGITS && !wide;
    if (digits > MAX_DIGITS || wide || power < -22 || power > 22) {
      if (exact && digits > MAX_DIGITS) return -1;
      this.number = Number(b.toString('latin1', start, i));
      return i;
    }
    const magnitude = power >= 0 ? mantissa * (POW10[power] as number) : mantissa / (POW10[-power] as number);
    this.number = negative ? -magnitude : magnitude;
    return i;
  }
}

/**
 * The position after the object or array starting at `b[i]` (brackets matched outside
 * strings), or -1 when the line (its newline, or `end`) ends first: the newline is looked for
 * in the same pass. Its content is checked by the parser, not here.
 */
function nestedEnd(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  for (; i < end; i++) {
    const c = b[i];
    if (c === NEWLINE) return -1;
    if (c === QUOTE) {
      for (i++; i < end && b[i] !== QUOTE; i++) {
        if (b[i] === NEWLINE || (b[i] === BACKSLASH && b[++i] === NEWLINE)) return -1;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}
