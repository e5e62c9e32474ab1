import { isUtf8 } from 'node:buffer';
import { SEND_NESTING_LIMIT } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { generatedBodies } from '../../../test/support/array-bodies.ts';
import { NATIVE_SCAN_LIBRARY } from '../../runtime/native.ts';
import { bindNativeScan, jsonCheckImplementation, nativeScanArray } from './native-scan.ts';
import { scanBatch, scanBatchInJs } from './scan.ts';

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

// Built for x86_64 only: on other CPUs scanBatch checks every body and there is nothing to compare.
describe.skipIf(process.arch !== 'x64')(`the C check of array bodies (x86_64 only; here ${process.arch})`, () => {
  it('is built and loaded here (scripts/ensure-install.mjs builds it on x86_64 where there is a C compiler)', () => {
    expect(jsonCheckImplementation, `no ${NATIVE_SCAN_LIBRARY}, or it did not load`).toBe('native');
    expect(baseline).toBeDefined();
  });

  it('agrees with the JavaScript check on 20,000 generated bodies and their mutations', () => {
    const tally = { taken: 0, refused: 0 };
    for (const { seed, body, mutant, limit } of generatedBodies(10_000)) {
      tally[agree(body, limit, `seed ${seed}`)]++;
      tally[agree(mutant, limit, `seed ${seed}, mutated`)]++;
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
