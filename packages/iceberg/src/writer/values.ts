import { isLosslessNumber } from 'lossless-json';
import type { LongLiterals } from './json-row.ts';

/**
 * Exact JSON value parsers: each returns the stored value or `undefined` when the input does
 * not denote a value of the type exactly (nothing is ever rounded, clamped or guessed).
 * Integer-valued results are numbers while they are safe integers and bigints beyond that.
 */

const TWO_31 = 2 ** 31;
const TWO_63 = 2n ** 63n;

/**
 * Thrown by the exact parsers when a plain number may be a rounded long literal (see
 * `checkingRounded`); the caller re-parses the row losslessly and converts it again.
 */
export const POSSIBLY_ROUNDED = Symbol('possibly rounded number');

/** The long literals of the row being converted after `JSON.parse`, if it has any. */
let pending: LongLiterals | null = null;

/** Runs `convert` with integer and decimal parsers refusing doubles that may stand for `literals`. */
export function checkingRounded<T>(literals: LongLiterals | null, convert: () => T): T {
  pending = literals;
  try {
    return convert();
  } finally {
    pending = null;
  }
}

/** An integer column's number, unless a long literal may have rounded to it. */
function exactInteger(n: number): number {
  if (pending !== null && Number.isInteger(n) && pending.integerDoubles().includes(n)) throw POSSIBLY_ROUNDED;
  return n;
}

/** A decimal column's number, unless it may be a rounded long literal. */
function exactDecimal(n: number): number {
  if (pending !== null && pending.doubles().includes(n)) throw POSSIBLY_ROUNDED;
  return n;
}

/** A decimal literal split as (-1)^negative × digits × 10^exponent, digits without leading zeros. */
interface DecimalLiteral {
  negative: boolean;
  digits: string;
  exponent: number;
}

/** JSON number grammar; decimal strings may also carry a leading `+`, leading zeros, or omit a side of the point. */
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const DECIMAL_STRING = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function splitLiteral(text: string, grammar: RegExp): DecimalLiteral | undefined {
  const m = grammar.exec(text);
  if (m === null) return undefined;
  const whole = m[2] ?? '';
  const fraction = m[3] ?? '';
  if (whole === '' && fraction === '') return undefined;
  let digits = (whole + fraction).replace(/^0+/, '');
  let exponent = (m[4] === undefined ? 0 : Number(m[4])) - fraction.length;
  const trailing = /0+$/.exec(digits);
  if (trailing !== null) {
    digits = digits.slice(0, trailing.index);
    exponent += trailing[0].length;
  }
  if (!Number.isSafeInteger(exponent)) return undefined;
  return { negative: m[1] === '-', digits, exponent: digits === '' ? 0 : exponent };
}

/**
 * The literal × 10^scale as an integer with at most `maxDigits` digits, or undefined when it
 * has a fractional part or is too long.
 */
function scaledInteger(literal: DecimalLiteral, scale: number, maxDigits: number): bigint | undefined {
  if (literal.digits === '') return 0n;
  const shift = literal.exponent + scale;
  if (shift < 0 || literal.digits.length + shift > maxDigits) return undefined;
  const magnitude = BigInt(literal.digits) * 10n ** BigInt(shift);
  return literal.negative ? -magnitude : magnitude;
}

/** The decimal literal of a number: a LosslessNumber keeps its text, a double gives its shortest round-trip form. */
function numberLiteral(value: unknown): DecimalLiteral | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? splitLiteral(String(value), JSON_NUMBER) : undefined;
  if (typeof value === 'bigint') return splitLiteral(value.toString(), JSON_NUMBER);
  if (isLosslessNumber(value)) return splitLiteral(value.value, JSON_NUMBER);
  return undefined;
}

/** int: a JSON integer (any notation whose value is integral, e.g. 7, 7.0, 7e0) in [-2^31, 2^31). */
export function toInt32(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(exactInteger(value)) && value >= -TWO_31 && value < TWO_31 ? value + 0 : undefined;
  const n = toInt64(value);
  return typeof n === 'number' && n >= -TWO_31 && n < TWO_31 ? n : undefined;
}

/** long: a JSON integer in [-2^63, 2^63). */
export function toInt64(value: unknown): number | bigint | undefined {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(exactInteger(value))) return value + 0;
    if (!Number.isInteger(value)) return undefined;
  }
  const literal = numberLiteral(value);
  if (literal === undefined) return undefined;
  const n = scaledInteger(literal, 0, 19);
  return n === undefined ? undefined : inInt64(n);
}

function inInt64(n: bigint): number | bigint | undefined {
  if (n < -TWO_63 || n >= TWO_63) return undefined;
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

/** The values JSON cannot spell, taken as these strings. */
function nonFinite(text: string): number | undefined {
  switch (text) {
    case 'NaN':
      return NaN;
    case 'Infinity':
      return Infinity;
    case '-Infinity':
      return -Infinity;
    default:
      return undefined;
  }
}

/**
 * double: any JSON number (nearest double, as every JSON reader does); the strings "NaN",
 * "Infinity" and "-Infinity" for the values JSON cannot spell. A literal beyond the double
 * range is rejected, not turned into Infinity.
 */
export function toFloat64(value: unknown): number | undefined {
  let n: number | undefined;
  if (typeof value === 'number') n = value;
  else if (isLosslessNumber(value)) n = Number(value.value);
  else if (typeof value === 'string') return nonFinite(value);
  else if (typeof value === 'bigint') n = Number(value);
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

/** float: as double, rounded to the nearest float; a finite value beyond the float range is rejected. */
export function toFloat32(value: unknown): number | undefined {
  const n = toFloat64(value);
  if (n === undefined || !Number.isFinite(n)) return n;
  const f = Math.fround(n);
  return Number.isFinite(f) ? f : undefined;
}

const POW10: readonly number[] = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * decimal(P,S): a JSON number or a decimal string with at most S fraction digits (trailing
 * zeros aside) and at most P digits in all. Returns the unscaled integer.
 */
export function toDecimal(value: unknown, precision: number, scale: number): number | bigint | undefined {
  if (typeof value === 'number' && Number.isFinite(exactDecimal(value)) && scale <= 15) {
    // Fast path: the double is the nearest to a literal of at most 15 significant digits
    // (exact parsing guarantees that), so when a small unscaled integer maps back to exactly
    // this double it is that literal.
    const factor = POW10[scale] as number;
    const unscaled = Math.round(value * factor);
    if (Math.abs(unscaled) < 1e15 && unscaled / factor === value) {
      return precision >= 16 || Math.abs(unscaled) < (POW10[precision] as number) ? unscaled + 0 : undefined;
    }
  }
  if (typeof value === 'string' && value.length <= 16) {
    const unscaled = shortDecimal(value, scale);
    if (unscaled !== undefined) return precision >= 16 || Math.abs(unscaled) < (POW10[precision] as number) ? unscaled : undefined;
  }
  const literal = typeof value === 'string' ? splitLiteral(value, DECIMAL_STRING) : numberLiteral(value);
  if (literal === undefined) return undefined;
  const n = scaledInteger(literal, scale, precision);
  if (n === undefined) return undefined;
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

/**
 * The common decimal string (`-123.45`: sign, digits, point, at most `scale` fraction digits,
 * under 10^15 unscaled) as a number; undefined sends every other form to the general path.
 */
function shortDecimal(text: string, scale: number): number | undefined {
  let i = 0;
  const sign = text.charCodeAt(0);
  if (sign === 45 || sign === 43) i = 1;
  let unscaled = 0;
  let digits = 0;
  let fraction = -1;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46 && fraction < 0) {
      fraction = 0;
      continue;
    }
    if (code < 48 || code > 57) return undefined;
    unscaled = unscaled * 10 + (code - 48);
    digits++;
    if (fraction >= 0) fraction++;
  }
  if (digits === 0 || fraction > scale || scale > 15) return undefined;
  unscaled *= POW10[scale - Math.max(fraction, 0)] as number;
  if (!(unscaled < 1e15)) return undefined;
  return sign === 45 ? -unscaled + 0 : unscaled;
}

// ---- dates and times -------------------------------------------------------------------------
//
// The parsers read bytes (ASCII), so rows read straight from NDJSON bytes need no string; a
// string value is first copied into a scratch buffer (every valid spelling is ASCII).

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

let scratch = new Uint8Array(64);

/** Copies ASCII `text` into `scratch`; its length, or -1 when it holds any other character. */
function toScratch(text: string): number {
  if (text.length > scratch.length) scratch = new Uint8Array(2 * text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return -1;
    scratch[i] = code;
  }
  return text.length;
}

// The fixed-width parts are read without bounds checks: each parser first checks the text is
// long enough for them (a read past the end would give NaN, which passes for a digit).

/** Two decimal digits at `i` (both before the end), or -1. */
function twoDigits(b: Uint8Array, i: number): number {
  const tens = (b[i] as number) - 48;
  const ones = (b[i + 1] as number) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** `YYYY-MM-DD` at `i` (10 bytes before the end); days since the epoch or -1e9 when invalid. */
function dateAt(b: Uint8Array, i: number): number {
  const century = twoDigits(b, i);
  const yearOfCentury = twoDigits(b, i + 2);
  const year = century * 100 + yearOfCentury;
  const month = twoDigits(b, i + 5);
  const day = twoDigits(b, i + 8);
  if (century < 0 || yearOfCentury < 0 || b[i + 4] !== 45 || b[i + 7] !== 45) return -1e9;
  if (month < 1 || month > 12 || day < 1) return -1e9;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (DAYS_IN_MONTH[month] as number) + (leap ? 1 : 0)) return -1e9;
  return daysFromCivil(year, month, day);
}

/** date: `YYYY-MM-DD`, days since 1970-01-01. */
export function parseDate(value: unknown): number | undefined {
  return typeof value === 'string' ? parseDateBytes(scratch, 0, toScratch(value)) : undefined;
}

/** `parseDate` of the text in `b[start, end)`. */
export function parseDateBytes(b: Uint8Array, start: number, end: number): number | undefined {
  if (end - start !== 10) return undefined;
  const days = dateAt(b, start);
  return days === -1e9 ? undefined : days;
}

/**
 * Where the last `timeAt` stopped and the fraction it read (in its unit): module-level results
 * keep the hot path free of allocations.
 */
let timeEnd = 0;
let timeFraction = 0;

/**
 * `HH:MM:SS[.fraction]` at `i` (8 bytes or more before `end`): whole seconds since midnight,
 * the fraction in `timeFraction` in units of 10^-`digits` s (microseconds or nanoseconds), or
 * -1 when invalid. Fraction digits beyond the unit's must be zeros (never rounded). Seconds and
 * fraction are kept apart, as small integers: splitting a day of microseconds (over 2^31)
 * again would take a double modulo.
 */
function timeAt(b: Uint8Array, i: number, end: number, digits: 6 | 9): number {
  const hour = twoDigits(b, i);
  const minute = twoDigits(b, i + 3);
  const second = twoDigits(b, i + 6);
  if (b[i + 2] !== 58 || b[i + 5] !== 58) return -1;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return -1;
  let fraction = 0;
  let read = 0;
  let at = i + 8;
  if (at < end && b[at] === 46) {
    for (at++; at < end; at++) {
      const d = (b[at] as number) - 48;
      if (d < 0 || d > 9) break;
      if (read < digits) fraction = fraction * 10 + d;
      else if (d !== 0) return -1;
      read++;
    }
    if (read === 0) return -1;
  }
  timeEnd = at;
  timeFraction = read < digits ? fraction * (POW10[digits - read] as number) : fraction;
  return (hour * 60 + minute) * 60 + second;
}

/** time: `HH:MM:SS[.ffffff]`, microseconds since midnight. */
export function parseTime(value: unknown): number | undefined {
  return typeof value === 'string' ? parseTimeBytes(scratch, 0, toScratch(value)) : undefined;
}

/** `parseTime` of the text in `b[start, end)`. */
export function parseTimeBytes(b: Uint8Array, start: number, end: number): number | undefined {
  if (end - start < 8) return undefined;
  const seconds = timeAt(b, start, end, 6);
  return seconds < 0 || timeEnd !== end ? undefined : seconds * 1_000_000 + timeFraction;
}

/** How a timestamp string's zone designator is treated. */
export type ZonePolicy =
  /** timestamptz: an offset (`Z` or `±HH:MM`) is required; the instant is stored in UTC. */
  | 'offset_required'
  /** timestamp: a local date-time; only a UTC designator (`Z`, `+00:00`, `-00:00`) may follow. */
  | 'utc_or_none';

/**
 * RFC 3339 date-time `YYYY-MM-DD(T|t| )HH:MM:SS[.ffffff](Z|z|±HH:MM)`: microseconds since the
 * epoch (UTC for timestamptz).
 */
export function parseTimestamp(value: unknown, zone: ZonePolicy): number | bigint | undefined {
  return typeof value === 'string' ? parseTimestampBytes(scratch, 0, toScratch(value), zone) : undefined;
}

/** `parseTimestamp` with up to nine fraction digits: nanoseconds since the epoch (timestamp_ns, timestamptz_ns). */
export function parseTimestampNs(value: unknown, zone: ZonePolicy): bigint | undefined {
  return typeof value === 'string' ? parseTimestampNsBytes(scratch, 0, toScratch(value), zone) : undefined;
}

/** `parseTimestampNs` of the text in `b[start, end)`. */
export function parseTimestampNsBytes(b: Uint8Array, start: number, end: number, zone: ZonePolicy): bigint | undefined {
  const seconds = dateTimeAt(b, start, end, zone, 9);
  return seconds !== seconds ? undefined : BigInt(seconds) * 1_000_000_000n + BigInt(timeFraction);
}

/** `parseTimestamp` of the text in `b[start, end)`. */
export function parseTimestampBytes(b: Uint8Array, start: number, end: number, zone: ZonePolicy): number | bigint | undefined {
  const seconds = dateTimeAt(b, start, end, zone, 6);
  if (seconds !== seconds) return undefined;
  // Microseconds stay exact as doubles up to 2^53 (about year 2255); beyond, use bigint.
  if (Math.abs(seconds) < 9_000_000_000) return seconds * 1_000_000 + timeFraction;
  return BigInt(seconds) * 1_000_000n + BigInt(timeFraction);
}

/**
 * An RFC 3339 date-time: whole seconds since the epoch (UTC), the fraction in `timeFraction` in
 * the unit of `digits`; NaN when invalid (a number, not an object, so nothing is allocated).
 */
function dateTimeAt(b: Uint8Array, start: number, end: number, zone: ZonePolicy, digits: 6 | 9): number {
  if (end - start < 19) return NaN;
  const days = dateAt(b, start);
  const separator = b[start + 10];
  if (days === -1e9 || (separator !== 84 && separator !== 116 && separator !== 32)) return NaN;
  const sinceMidnight = timeAt(b, start + 11, end, digits);
  if (sinceMidnight < 0) return NaN;
  let offsetMinutes = 0;
  const at = timeEnd;
  const designator = at < end ? b[at] : -1;
  if (at === end) {
    if (zone === 'offset_required') return NaN;
  } else if (designator === 90 || designator === 122) {
    if (at + 1 !== end) return NaN;
  } else if (designator === 43 || designator === 45) {
    if (at + 6 !== end || b[at + 3] !== 58) return NaN;
    const hours = twoDigits(b, at + 1);
    const minutes = twoDigits(b, at + 4);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return NaN;
    offsetMinutes = (designator === 45 ? -1 : 1) * (hours * 60 + minutes);
    if (zone === 'utc_or_none' && offsetMinutes !== 0) return NaN;
  } else {
    return NaN;
  }
  return days * 86_400 + sinceMidnight - offsetMinutes * 60;
}

// ---- uuid and base64 -------------------------------------------------------------------------

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}

function hexDigit(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c < 128 ? (HEX[c] as number) : -1;
}

/**
 * uuid: the canonical 8-4-4-4-12 hex form (either case), written as 16 big-endian bytes into
 * `target` at `offset`. False when the text is not a uuid.
 */
export function writeUuid(value: unknown, target: Uint8Array, offset: number): boolean {
  if (typeof value !== 'string' || value.length !== 36) return false;
  let at = 0;
  for (let b = 0; b < 16; b++) {
    if (at === 8 || at === 13 || at === 18 || at === 23) {
      if (value.charCodeAt(at) !== 45) return false;
      at++;
    }
    const hi = hexDigit(value, at);
    const lo = hexDigit(value, at + 1);
    if (hi < 0 || lo < 0) return false;
    target[offset + b] = (hi << 4) | lo;
    at += 2;
  }
  return true;
}

/** Standard base64 (RFC 4648 §4), padding optional. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The decoded length of a base64 string, or -1 when it is not base64. */
export function base64Length(value: unknown): number {
  if (typeof value !== 'string' || !BASE64.test(value)) return -1;
  let length = value.length;
  while (length > 0 && value.charCodeAt(length - 1) === 61) length--;
  return Math.floor((length * 3) / 4);
}
