import { isLosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { longLiterals, parseJsonRow } from './json-row.ts';

describe('parseJsonRow', () => {
  it('keeps integers beyond 2^53 and long decimals exact', () => {
    const row = parseJsonRow('{"id": 8333333333333333333, "amount": 0.12345678901234567890, "n": 1.5, "s": "x"}') as Record<string, unknown>;
    expect(isLosslessNumber(row.id) && row.id.value).toBe('8333333333333333333');
    expect(isLosslessNumber(row.amount) && row.amount.value).toBe('0.12345678901234567890');
    expect(row.n).toBe(1.5);
    expect(row.s).toBe('x');
  });

  it('gives plain numbers for literals of up to 15 significant digits, also on the slow path', () => {
    const row = parseJsonRow('{"a": 123456789012345, "b": 1e300, "c": 100000000000000000000, "d": "1234567890123456"}') as Record<string, unknown>;
    expect(row).toEqual({ a: 123456789012345, b: 1e300, c: 1e20, d: '1234567890123456' });
  });

  it('parses like JSON.parse otherwise, last duplicate key winning on both paths', () => {
    expect(parseJsonRow('{"a": [1, {"b": null}], "a": true}')).toEqual({ a: true });
    expect(parseJsonRow('{"a": 12345678901234567, "a": 2}')).toEqual({ a: 2 });
    expect(() => parseJsonRow('{"a": ')).toThrow(SyntaxError);
    expect(() => parseJsonRow('{"a": 12345678901234567')).toThrow(SyntaxError);
  });
});

describe('longLiterals', () => {
  it('finds nothing in text whose numbers JSON.parse keeps exactly', () => {
    expect(longLiterals('{"id": 123456789012345, "at": "2024-05-01T10:00:00.123456Z", "x": 1.5}')).toBeNull();
  });

  it('lists the doubles of long literals, and only those that may round to an integer for integer columns', () => {
    const literals = longLiterals('{"lat": -52.84173604397888, "id": 9007199254740993, "a": 5.0000000000000001, "b": 4503599627370496.3, "c": 1.2345678901234567e3, "d": 0.99999999999999999}');
    expect(literals?.doubles()).toEqual([-52.84173604397888, 9007199254740992, 5, 4503599627370496, 1234.5678901234567, 1]);
    expect(literals?.integerDoubles()).toEqual([9007199254740992, 5, 4503599627370496, 1234.5678901234567, 1]);
  });
});
