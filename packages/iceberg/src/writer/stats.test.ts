import { Utf8, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { minimalTwosComplement, stringStats, truncatedUpperBound } from './stats.ts';

describe('bound serialisation', () => {
  it('writes decimals in the fewest big-endian two\'s complement bytes', () => {
    expect([...minimalTwosComplement(0n)]).toEqual([0]);
    expect([...minimalTwosComplement(127n)]).toEqual([0x7f]);
    expect([...minimalTwosComplement(128n)]).toEqual([0x00, 0x80]);
    expect([...minimalTwosComplement(-128n)]).toEqual([0x80]);
    expect([...minimalTwosComplement(-129n)]).toEqual([0xff, 0x7f]);
    expect([...minimalTwosComplement(-1n)]).toEqual([0xff]);
  });

  it('truncates string upper bounds to 16 code points and keeps them above every value', () => {
    expect(truncatedUpperBound('short')).toBe('short');
    expect(truncatedUpperBound('abcdefghijklmnopqrstuvwxyz')).toBe('abcdefghijklmnoq');
    expect(truncatedUpperBound('😀'.repeat(20))).toBe(`${'😀'.repeat(15)}😁`);
    expect(truncatedUpperBound(`${'a'.repeat(15)}\u{d7ff}zz`)).toBe(`${'a'.repeat(15)}\u{e000}`);
    expect(truncatedUpperBound(`${'a'.repeat(14)}b\u{10ffff}zz`)).toBe(`${'a'.repeat(14)}c`);
    expect(truncatedUpperBound('\u{10ffff}'.repeat(17))).toBeUndefined();
  });

  it('finds string bounds in any block of values, nulls skipped', () => {
    // Blocks of 4,096 values: the extremes sit in later blocks, and a chunk of their own.
    const values = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? null : `m${i % 500}`));
    values[9_001] = 'a';
    values[5_000] = 'zz';
    const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString();
    const one = stringStats(vectorFromArray(values, new Utf8()).data);
    expect([text(one.lower), text(one.upper)]).toEqual(['a', 'zz']);
    const split = stringStats([...vectorFromArray(values.slice(0, 6_000), new Utf8()).data, ...vectorFromArray(values.slice(6_000), new Utf8()).data]);
    expect([text(split.lower), text(split.upper)]).toEqual(['a', 'zz']);
  });
});
