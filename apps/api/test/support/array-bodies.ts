import { mulberry32 } from '../../../../tests/support/random.ts';

/**
 * Generated send bodies for the C check's tests: its differential test against the JavaScript
 * check (native-scan.test.ts) and the seed corpus of its fuzz driver (native-fuzz.ts). Every
 * body comes from a seed (mulberry32), so a failure replays.
 */

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
const BLANKS = ['', '', '', ' ', '\n', '\r\n', '\t', '  \n  '];
const STRING_PARTS = ['a', 'dev-12', ' ', 'é', '日本', '😀', '\\"', '\\\\', '\\/', '\\n', '\\u00e9', '\\uD83D\\uDE00', '{', '}', '[', ']', ',', ':', 'true', '\u007f'];
const NUMBERS = ['0', '-0', '1', '-12', '3.25', '-0.5e+3', '1E9', '12345678901234567890123', '1e-7', '0.000'];

function string(next: () => number): string {
  let s = '"';
  const parts = Math.floor(next() * 8);
  for (let i = 0; i < parts; i++) s += pick(next, STRING_PARTS);
  return `${s}"`;
}

/** A JSON value as text, whitespace and escapes of every kind included. */
function value(next: () => number, depth: number): string {
  const blank = () => pick(next, BLANKS);
  const kind = depth > 3 ? Math.floor(next() * 3) : Math.floor(next() * 6);
  switch (kind) {
    case 0:
      return string(next);
    case 1:
      return pick(next, NUMBERS);
    case 2:
      return pick(next, ['true', 'false', 'null']);
    case 3:
    case 4: {
      const members = Array.from({ length: Math.floor(next() * 5) }, () => `${blank()}${string(next)}${blank()}:${blank()}${value(next, depth + 1)}${blank()}`);
      return `{${members.join(',')}${members.length === 0 ? blank() : ''}}`;
    }
    default: {
      const items = Array.from({ length: Math.floor(next() * 5) }, () => `${blank()}${value(next, depth + 1)}${blank()}`);
      return `[${items.join(',')}${items.length === 0 ? blank() : ''}]`;
    }
  }
}

/** A batch body: mostly objects, some other elements, blanks between. */
export function arrayBody(next: () => number): string {
  const elements = Array.from({ length: Math.floor(next() * 40) }, () =>
    next() < 0.8 ? value(next, 0).replace(/^[^{].*$/s, (v) => `{"v":${v}}`) : value(next, 0),
  );
  const blank = () => pick(next, BLANKS);
  return `${blank()}[${elements.map((e) => `${blank()}${e}${blank()}`).join(',')}]${blank()}`;
}

/** The same text with a few bytes changed, dropped, added or cut off at the end. */
export function mutateBody(next: () => number, text: Buffer): Buffer {
  const bytes = [...text];
  const edits = 1 + Math.floor(next() * 3);
  for (let i = 0; i < edits && bytes.length > 0; i++) {
    const at = Math.floor(next() * bytes.length);
    const byte = pick(next, [...'"\\{}[]:,0-.eEtfnu \n\t'].map((c) => c.charCodeAt(0)).concat([0x01, 0x1f, 0x7f, 0xc3]));
    const op = Math.floor(next() * 4);
    if (op === 0) bytes[at] = byte;
    else if (op === 1) bytes.splice(at, 1);
    else if (op === 2) bytes.splice(at, 0, byte);
    else bytes.length = at;
  }
  return Buffer.from(bytes);
}

/**
 * The differential test's 20,000 bodies, in its order: for seeds 1..count, the body, its
 * mutation, and the reasons limit both are checked with.
 */
export function* generatedBodies(count: number): Generator<{ seed: number; body: Buffer; mutant: Buffer; limit: number }> {
  for (let seed = 1; seed <= count; seed++) {
    const next = mulberry32(seed);
    const body = Buffer.from(arrayBody(next));
    const limit = pick(next, [0, 1, 3, 1000]);
    yield { seed, body, mutant: mutateBody(next, body), limit };
  }
}
