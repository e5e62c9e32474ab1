import { isUtf8 } from 'node:buffer';
import { SEND_NESTING_LIMIT } from '@tablemere/contracts';
import { nativeScanArray } from './native-scan.ts';

/**
 * The send route's body check in one pass over the bytes, without building any JavaScript
 * value: validates the body as JSON (RFC 8259, UTF-8), requires a top-level array, and packs
 * its elements together in the same buffer, one per line: every element, objects or not (the
 * roll rejects a row that is not an object, never the batch). The elements' bytes are kept as sent (whitespace, escapes, number spellings), except that a
 * line break between tokens becomes a space so each object is one line: the roller and
 * the rejects files see what the producer sent. Nothing else is allocated, so a 16 MiB
 * body costs 16 MiB.
 */

export type ScanErrorKind =
  /** Not JSON: a syntax error, bytes that are not UTF-8, or nesting past SEND_NESTING_LIMIT. */
  | 'invalid_json'
  /** Valid JSON, but not an array. */
  | 'not_an_array';

export interface ScanError {
  kind: ScanErrorKind;
  /** Byte offset where the body stopped making sense (invalid_json). */
  offset: number;
  /** An NDJSON body's line (1-based) holding that offset. */
  line?: number;
  detail: string;
}

export interface ScannedBatch {
  /** The elements, one per line, joined by `\n` (no trailing newline): a view into the body buffer. */
  ndjson: Buffer;
  /** Elements that are objects. */
  objects: number;
  /** Elements that are not objects, all of them; `objects + nonObjects` are the lines of `ndjson`. */
  nonObjects: number;
  /** Array positions of elements that are not objects, in order, at most `reasonsLimit` of them. */
  nonObjectIndexes: number[];
  /** An NDJSON body's lines (1-based) of those elements, in the same order. */
  nonObjectLines?: number[];
}

export type ScanOutcome = { ok: true; batch: ScannedBatch } | { ok: false; error: ScanError };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const MINUS = 0x2d;

/** Thrown inside the scanner only; scanBatch turns it into a ScanError. */
class SyntaxFault {
  constructor(
    readonly offset: number,
    readonly detail: string,
  ) {}
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** Bytes allowed right after a backslash in a string: " \ / b f n r t (u is handled apart). */
const SIMPLE_ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPES[c.charCodeAt(0)] = 1;

function describe(b: Buffer, at: number): string {
  if (at >= b.length) return 'the body ends too early';
  const c = b[at]!;
  return c >= 0x20 && c < 0x7f ? `unexpected "${String.fromCharCode(c)}"` : `unexpected byte 0x${c.toString(16).padStart(2, '0')}`;
}

/**
 * Set when skipWhitespace passes a CR or LF; read and reset per element. Module state is
 * safe here: a scan is synchronous from start to end.
 */
let lineBreakSeen = false;

function skipWhitespace(b: Buffer, p: number): number {
  // Most tokens follow each other directly: one look and out.
  if (b[p]! > SPACE) return p;
  while (p < b.length && isWhitespace(b[p]!)) {
    if (b[p] === NEWLINE || b[p] === CARRIAGE_RETURN) lineBreakSeen = true;
    p++;
  }
  return p;
}

/** The digits 0-9. */
const DIGIT = new Uint8Array(256).fill(1, 0x30, 0x3a);

/** `p` is at a backslash inside a string: answers the offset after its escape sequence. */
function scanEscape(b: Buffer, p: number): number {
  const e = b[p + 1];
  if (e === undefined) throw new SyntaxFault(p, 'a string is not closed');
  if (SIMPLE_ESCAPES[e] === 1) return p + 2;
  if (e === 0x75 /* u */ && p + 5 < b.length && isHex(b[p + 2]!) && isHex(b[p + 3]!) && isHex(b[p + 4]!) && isHex(b[p + 5]!)) return p + 6;
  throw new SyntaxFault(p, 'invalid escape in a string');
}

/** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? from `start`; answers the offset after the number. */
function scanNumber(b: Buffer, start: number): number {
  let p = start;
  if (b[p] === MINUS) p++;
  if (b[p] === 0x30) {
    p++;
  } else if (DIGIT[b[p]!] === 1) {
    // Past the end b[p] is undefined and DIGIT[undefined] is too: no bounds check needed.
    while (DIGIT[b[p]!] === 1) p++;
  } else {
    throw new SyntaxFault(start, 'invalid number');
  }
  if (b[p] === 0x2e /* . */) {
    p++;
    if (DIGIT[b[p]!] !== 1) throw new SyntaxFault(start, 'invalid number');
    while (DIGIT[b[p]!] === 1) p++;
  }
  if (b[p] === 0x65 || b[p] === 0x45 /* e E */) {
    p++;
    if (b[p] === 0x2b || b[p] === MINUS) p++;
    if (DIGIT[b[p]!] !== 1) throw new SyntaxFault(start, 'invalid number');
    while (DIGIT[b[p]!] === 1) p++;
  }
  return p;
}

function scanLiteral(b: Buffer, p: number, word: string): number {
  for (let i = 0; i < word.length; i++) {
    if (b[p + i] !== word.charCodeAt(i)) throw new SyntaxFault(p, `expected ${word}`);
  }
  return p + word.length;
}

/**
 * Validates one JSON value starting at `p` (whitespace first allowed) and answers the offset
 * right after it. One loop with an explicit stack: depth costs no call frames, and strings
 * (the most bytes of a batch) and keys are scanned inline, in one place, instead of in calls
 * per token. `key` is set where an object member must start, so a key takes the string path
 * and then needs its `:`.
 */
function scanValue(b: Buffer, p: number, stack: Uint8Array): number {
  const n = b.length;
  let depth = 0;
  let key = false;
  for (;;) {
    let c = b[p]!;
    if (c <= SPACE) {
      p = skipWhitespace(b, p);
      c = b[p]!;
    }
    if (c === QUOTE) {
      p++;
      for (;;) {
        // Bytes that stand for themselves (all but `"`, `\` and controls) in one tight loop:
        // comparisons beat a table here, and past the end b[p] is undefined and the loop stops.
        let s = b[p]!;
        while (s > BACKSLASH || (s >= SPACE && s !== QUOTE && s !== BACKSLASH)) s = b[++p]!;
        if (s === QUOTE) break;
        if (p >= n) throw new SyntaxFault(p, 'a string is not closed');
        if (s !== BACKSLASH) throw new SyntaxFault(p, 'a control character inside a string must be escaped');
        p = scanEscape(b, p);
      }
      p++;
      if (key) {
        key = false;
        p = skipWhitespace(b, p);
        if (b[p] !== COLON) throw new SyntaxFault(p, `${describe(b, p)}: expected ":" after a key`);
        p++;
        continue;
      }
    } else if (key) {
      throw new SyntaxFault(p, `${describe(b, p)}: expected a key in quotes`);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === SEND_NESTING_LIMIT) throw new SyntaxFault(p, `nesting deeper than ${SEND_NESTING_LIMIT} levels`);
      stack[depth++] = c;
      p = skipWhitespace(b, p + 1);
      if (b[p] !== (c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        key = c === OPEN_BRACE;
        continue;
      }
      depth--;
      p++;
    } else if (DIGIT[c] === 1 || c === MINUS) {
      p = scanNumber(b, p);
    } else if (c === 0x74) {
      p = scanLiteral(b, p, 'true');
    } else if (c === 0x66) {
      p = scanLiteral(b, p, 'false');
    } else if (c === 0x6e) {
      p = scanLiteral(b, p, 'null');
    } else {
      throw new SyntaxFault(p, `${describe(b, p)}: expected a value`);
    }
    // A value ended at p: close containers until one needs another member.
    for (;;) {
      if (depth === 0) return p;
      let d = b[p]!;
      if (d <= SPACE) {
        p = skipWhitespace(b, p);
        d = b[p]!;
      }
      const container = stack[depth - 1];
      if (d === COMMA) {
        p++;
        key = container === OPEN_BRACE;
        break;
      }
      if ((d === CLOSE_BRACE && container === OPEN_BRACE) || (d === CLOSE_BRACKET && container === OPEN_BRACKET)) {
        depth--;
        p++;
        continue;
      }
      throw new SyntaxFault(p, `${describe(b, p)}: expected "," or "${container === OPEN_BRACE ? '}' : ']'}"`);
    }
  }
}

/**
 * Turns CR and LF inside one element into spaces, so a pretty-printed object stays on one
 * line. In valid JSON they can only be whitespace between tokens (inside a string they must
 * be escaped), so the value and the byte count do not change.
 */
function flattenLineBreaks(b: Buffer, from: number, to: number): void {
  for (let at = from; at < to; at++) {
    if (b[at] === NEWLINE || b[at] === CARRIAGE_RETURN) b[at] = SPACE;
  }
}

/** Moves the element at [start, end) to `write` (<= start) on one line; answers the offset after it. */
function moveElement(b: Buffer, write: number, start: number, end: number): number {
  if (write !== start) b.copyWithin(write, start, end);
  if (lineBreakSeen) flattenLineBreaks(b, write, write + (end - start));
  return write + (end - start);
}

/**
 * Checks `body` and compacts its elements in place (the buffer's content is changed: hash it
 * first). `reasonsLimit` caps how many positions of non-objects are listed. The C check
 * (native-scan.ts) answers for the bodies it takes; the rest, and every fault, are this
 * module's.
 */
export function scanBatch(body: Buffer, reasonsLimit: number): ScanOutcome {
  if (!isUtf8(body)) return NOT_UTF8;
  const native = nativeScanArray(body, reasonsLimit);
  return native ? { ok: true, batch: native } : scanUtf8Array(body, reasonsLimit);
}

/** scanBatch in JavaScript alone: the reference the C check is held to. */
export function scanBatchInJs(body: Buffer, reasonsLimit: number): ScanOutcome {
  return isUtf8(body) ? scanUtf8Array(body, reasonsLimit) : NOT_UTF8;
}

const NOT_UTF8: ScanOutcome = { ok: false, error: { kind: 'invalid_json', offset: 0, detail: 'the body is not UTF-8' } };

/** The JavaScript check of a body already known to be UTF-8. */
function scanUtf8Array(body: Buffer, reasonsLimit: number): ScanOutcome {
  const stack = new Uint8Array(SEND_NESTING_LIMIT);
  try {
    let p = skipWhitespace(body, 0);
    if (body[p] !== OPEN_BRACKET) {
      // Tell "some other JSON value" from "not JSON at all".
      const end = skipWhitespace(body, scanValue(body, p, stack));
      if (end !== body.length) throw new SyntaxFault(end, `${describe(body, end)} after the value`);
      return { ok: false, error: { kind: 'not_an_array', offset: p, detail: 'the body is JSON but not an array' } };
    }
    p = skipWhitespace(body, p + 1);
    // The NDJSON starts where the first element does, so in a compact body (`[{..},{..}]`)
    // every element is already in place and only each comma becomes a line break.
    let first = 0;
    let write = 0;
    let objects = 0;
    let nonObjects = 0;
    const nonObjectIndexes: number[] = [];
    if (body[p] === CLOSE_BRACKET) {
      p++;
    } else {
      for (let index = 0; ; index++) {
        const start = skipWhitespace(body, p);
        lineBreakSeen = false;
        const end = scanValue(body, start, stack);
        const isObject = body[start] === OPEN_BRACE;
        // write <= start always: each element moves left, over bytes already scanned.
        if (index > 0) body[write++] = NEWLINE;
        else first = write = start;
        write = moveElement(body, write, start, end);
        if (isObject) {
          objects++;
        } else {
          nonObjects++;
          if (nonObjectIndexes.length < reasonsLimit) nonObjectIndexes.push(index);
        }
        p = skipWhitespace(body, end);
        if (body[p] === COMMA) {
          p++;
          continue;
        }
        if (body[p] === CLOSE_BRACKET) {
          p++;
          break;
        }
        throw new SyntaxFault(p, `${describe(body, p)}: expected "," or "]"`);
      }
    }
    p = skipWhitespace(body, p);
    if (p !== body.length) throw new SyntaxFault(p, `${describe(body, p)} after the array`);
    return { ok: true, batch: { ndjson: body.subarray(first, write), objects, nonObjects, nonObjectIndexes } };
  } catch (error) {
    if (error instanceof SyntaxFault) return { ok: false, error: { kind: 'invalid_json', offset: error.offset, detail: error.detail } };
    throw error;
  }
}

/** Spaces, tabs and CRs, not LF: the blanks around a value on its line (CRLF line ends included). */
function skipBlanks(b: Buffer, p: number): number {
  while (b[p] === SPACE || b[p] === 0x09 || b[p] === CARRIAGE_RETURN) p++;
  return p;
}

/** How many LFs `b` holds in [from, to). */
function lineBreaks(b: Buffer, from: number, to: number): number {
  let count = 0;
  for (let at = b.indexOf(NEWLINE, from); at !== -1 && at < to; at = b.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * The NDJSON (JSON Lines) counterpart of scanBatch: one JSON value per line, blank lines and a
 * final line break allowed. Each value is kept as sent, without the blanks around it, and the
 * values are packed one per line exactly as an array's elements are, so the same elements
 * make the same object whichever way they came. A fault names its line.
 */
export function scanNdjson(body: Buffer, reasonsLimit: number): ScanOutcome {
  if (!isUtf8(body)) return { ok: false, error: { kind: 'invalid_json', offset: 0, line: 1, detail: 'the body is not UTF-8' } };
  const stack = new Uint8Array(SEND_NESTING_LIMIT);
  let line = 1;
  let lineStart = 0;
  let write = 0;
  let objects = 0;
  let nonObjects = 0;
  const nonObjectIndexes: number[] = [];
  const nonObjectLines: number[] = [];
  // Where the value being scanned starts: a fault past its line's end is that line's.
  let valueStart = -1;
  try {
    for (let p = skipBlanks(body, 0); p < body.length; p = skipBlanks(body, p)) {
      if (body[p] === NEWLINE) {
        lineStart = ++p;
        line++;
        continue;
      }
      lineBreakSeen = false;
      valueStart = p;
      const end = scanValue(body, p, stack);
      const broken = lineBreakSeen ? body.indexOf(NEWLINE, p) : -1;
      if (broken !== -1 && broken < end) throw new SyntaxFault(end, 'past its line'); // named by the catch below
      valueStart = -1;
      const index = objects + nonObjects;
      if (index > 0) body[write++] = NEWLINE;
      const isObject = body[p] === OPEN_BRACE;
      write = moveElement(body, write, p, end);
      if (isObject) {
        objects++;
      } else {
        nonObjects++;
        if (nonObjectIndexes.length < reasonsLimit) {
          nonObjectIndexes.push(index);
          nonObjectLines.push(line);
        }
      }
      p = skipBlanks(body, end);
      if (p < body.length && body[p] !== NEWLINE) throw new SyntaxFault(p, `${describe(body, p)} after the value (one value per line)`);
    }
    return { ok: true, batch: { ndjson: body.subarray(0, write), objects, nonObjects, nonObjectIndexes, nonObjectLines } };
  } catch (error) {
    if (!(error instanceof SyntaxFault)) throw error;
    const broken = valueStart === -1 ? -1 : body.indexOf(NEWLINE, valueStart);
    if (broken !== -1 && broken < error.offset) {
      return { ok: false, error: { kind: 'invalid_json', offset: broken, line, detail: 'the value is not complete at the end of its line (one value per line)' } };
    }
    return { ok: false, error: { kind: 'invalid_json', offset: error.offset, line: line + lineBreaks(body, lineStart, error.offset), detail: error.detail } };
  }
}
