import { describe, expect, it } from 'vitest';
import { runFuzz } from './support/native-fuzz.ts';

const SECONDS = 30;

// The C check is built and loaded on x86_64 only; elsewhere scanBatch checks every body.
describe.skipIf(process.arch !== 'x64')(`the C check under AddressSanitizer and UBSan (x86_64 only; here ${process.arch})`, () => {
  it(`survives ${SECONDS} s of the seed corpus and its mutations with no sanitizer report`, async () => {
    const run = await runFuzz({ seconds: SECONDS });
    console.log(run.stdout.trim());
    const report = /ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|^fuzz: (?!\d+ runs)/m.exec(run.stderr);
    expect(report, `a sanitizer report or a failed check:\n${run.stderr.slice(0, 4000)}`).toBeNull();
    expect(run.status, run.stderr.slice(0, 4000)).toBe(0);
    // The whole corpus ran, and mutations after it.
    expect(run.summary?.runs).toBeGreaterThan(20_002);
  }, (SECONDS + 90) * 1000);
});
