import { describe, expect, it } from 'vitest';
import { minimalTwosComplement, truncatedUpperBound } from './stats.ts';

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
});
