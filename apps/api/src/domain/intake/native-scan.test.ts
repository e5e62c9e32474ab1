import { isUtf8 } from 'node:buffer';
import { SEND_NESTING_LIMIT } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../../../tests/support/random.ts';
import { bindNativeScan, jsonCheckImplementation, NATIVE_SCAN_LIBRARY, nativeScanArray } from './native-scan.ts';
import { scanBatch, scanBatchInJs } from './scan.ts';

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
function body(next: () => number): string {
  const elements = Array.from({ length: Math.floor(next() * 40) }, () =>
    next() < 0.8 ? value(next, 0).replace(/^[^{].*$/s, (v) => `{"v":${v}}`) : value(next, 0),
  );
  const blank = () => pick(next, BLANKS);
  return `${blank()}[${elements.map((e) => `${blank()}${e}${blank()}`).join(',')}]${blank()}`;
}

/** The same text with a few bytes changed, dropped, added or cut off at the end. */
function mutate(next: () => number, text: Buffer): Buffer {
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

/** Without AVX2 whatever the CPU: both paths are held to scanBatch. */
const baseline = bindNativeScan('tm_scan_array_baseline');

/** The C check (both paths) against the JavaScript one on one body: it takes exactly the bodies the other does, with the same result, and leaves the others untouched. */
function agree(input: Buffer, limit: number, label: string): 'taken' | 'refused' {
  const answer = agreeWith(nativeScanArray, input, limit, label);
  expect(agreeWith(baseline!, input, limit, `${label} (without AVX2)`)).toBe(answer);
  return answer;
}

function agreeWith(check: typeof nativeScanArray, input: Buffer, limit: number, label: string): 'taken' | 'refused' {
  const reference = scanBatchInJs(Buffer.from(input), limit);
  const copy = Buffer.from(input);
  const native = isUtf8(copy) ? check(copy, limit) : undefined;
  if (!reference.ok) {
    expect(native, `${label}: the C check took a body the JavaScript one refuses (${reference.error.detail})`).toBeUndefined();
    expect(copy.equals(input), `${label}: a refused body was changed`).toBe(true);
    return 'refused';
  }
  expect(native, `${label}: the C check refused a body the JavaScript one takes`).toBeDefined();
  expect(native!.ndjson.toString('latin1'), label).toBe(reference.batch.ndjson.toString('latin1'));
  expect({ ...native!, ndjson: undefined }, label).toEqual({ ...reference.batch, ndjson: undefined });
  return 'taken';
}

describe('the C check of array bodies', () => {
  it('is built and loaded here (scripts/ensure-install.mjs builds it where there is a C compiler)', () => {
    expect(jsonCheckImplementation, `no ${NATIVE_SCAN_LIBRARY}, or it did not load`).toBe('native');
    expect(baseline).toBeDefined();
  });

  it('agrees with the JavaScript check on 20,000 generated bodies and their mutations', () => {
    const tally = { taken: 0, refused: 0 };
    for (let seed = 1; seed <= 10_000; seed++) {
      const next = mulberry32(seed);
      const text = Buffer.from(body(next));
      const limit = pick(next, [0, 1, 3, 1000]);
      tally[agree(text, limit, `seed ${seed}`)]++;
      tally[agree(mutate(next, text), limit, `seed ${seed}, mutated`)]++;
    }
    // Both kinds of answer in numbers: the comparison was not one-sided.
    expect(tally.taken).toBeGreaterThan(10_000);
    expect(tally.refused).toBeGreaterThan(3_000);
  });

  it('agrees where the 64-byte blocks split escapes, strings, numbers and literals', () => {
    const cases = ['"\\\\"', '"\\""', '"\\\\\\""', '"\\u00e9"', '"\\u00g9"', '"\\x"', '"ab', '12.5e-3', '-', '1.', 'true', 'tru', 'nul', '"\\', '"\t"'];
    for (const piece of cases) {
      for (let pad = 40; pad <= 70; pad++) {
        const text = `[{"p":"${'x'.repeat(pad)}","v":${piece}},{"w":${piece}}]`;
        agree(Buffer.from(text), 1000, `${piece} after ${pad}`);
        agree(Buffer.from(text.slice(0, text.length - 3)), 1000, `${piece} after ${pad}, cut`);
      }
    }
  });

  it('leaves a body of more than 2^20 elements to scanBatch, which takes it', () => {
    const elements = 2 ** 20;
    const body = Buffer.from(`[${'1,'.repeat(elements)}1]`);
    expect(nativeScanArray(Buffer.from(body), 10)).toBeUndefined();
    const fewer = Buffer.from(`[${'1,'.repeat(elements - 1)}1]`);
    expect(nativeScanArray(fewer, 10)).toMatchObject({ objects: 0, nonObjects: elements, nonObjectIndexes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
    const taken = scanBatch(body, 10);
    expect(taken.ok && taken.batch.nonObjects).toBe(elements + 1);
  });

  it('agrees at the nesting limit, on empty and odd bodies, and past the reasons limit', () => {
    const nested = (levels: number) => `[{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}]`;
    const bodies = [
      nested(SEND_NESTING_LIMIT),
      nested(SEND_NESTING_LIMIT + 1),
      '[]',
      ' [ ] ',
      '',
      ' ',
      '{}',
      '"a"',
      '[1] 2',
      '[1,]',
      '[,1]',
      '[{"a":1}}',
      '[{"a" 1}]',
      '[{1:1}]',
      '[{"a":1,}]',
      `[${Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? '{}' : String(i))).join(',')}]`,
      '[\r\n  {\r\n    "a": [1,\n 2]\r\n  },\n  "x"\n]',
      // Strings longer than many blocks, plain and all escapes.
      `[{"long":"${'y'.repeat(9000)}"},{"escapes":"${'\\n\\"'.repeat(3000)}"}]`,
      `[{"long":"${'y'.repeat(9000)}`,
    ];
    for (const text of bodies) for (const limit of [0, 2, 1000]) agree(Buffer.from(text), limit, JSON.stringify(text.slice(0, 40)));
  });
});
