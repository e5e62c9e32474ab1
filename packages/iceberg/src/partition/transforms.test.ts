import { describe, expect, it } from 'vitest';
import type { PrimitiveType } from '../spec/types.ts';
import { parseDate, parseTime, parseTimestamp, toDecimal, writeUuid } from '../writer/values.ts';
import { murmur3_32 } from './murmur3.ts';
import { applyTransform, bucketHashBytes, parseTransform, resultType } from './transforms.ts';

const uuidBytes = (text: string) => {
  const bytes = new Uint8Array(16);
  expect(writeUuid(text, bytes, 0)).toBe(true);
  return bytes;
};
const micros = (text: string, mode: 'utc_or_none' | 'offset_required') => BigInt(parseTimestamp(text, mode) as number | bigint);

describe('bucket hashes (Iceberg spec, Appendix B)', () => {
  const cases: Array<[string, PrimitiveType, Parameters<typeof bucketHashBytes>[1], number]> = [
    ['int 34', { kind: 'int' }, 34, 2017239379],
    ['long 34', { kind: 'long' }, 34n, 2017239379],
    ['decimal(4,2) 14.20', { kind: 'decimal', precision: 4, scale: 2 }, BigInt(toDecimal('14.20', 4, 2) as number), -500754589],
    ['date 2017-11-16', { kind: 'date' }, parseDate('2017-11-16') as number, -653330422],
    ['time 22:31:08', { kind: 'time' }, BigInt(parseTime('22:31:08') as number), -662762989],
    ['timestamp 2017-11-16T22:31:08', { kind: 'timestamp' }, micros('2017-11-16T22:31:08', 'utc_or_none'), -2047944441],
    ['timestamptz 2017-11-16T14:31:08-08:00', { kind: 'timestamptz' }, micros('2017-11-16T14:31:08-08:00', 'offset_required'), -2047944441],
    ['string iceberg', { kind: 'string' }, 'iceberg', 1210000089],
    ['uuid', { kind: 'uuid' }, uuidBytes('f79c3e09-677c-4bbd-a479-3f349cb785e7'), 1488055340],
    ['fixed 00010203', { kind: 'fixed', length: 4 }, Uint8Array.of(0, 1, 2, 3), -188683207],
    ['binary 00010203', { kind: 'binary' }, Uint8Array.of(0, 1, 2, 3), -188683207],
  ];
  it.each(cases)('%s', (_, type, value, hash) => {
    expect(murmur3_32(bucketHashBytes(type, value))).toBe(hash);
  });

  it('buckets by the positive hash modulo N', () => {
    // 1210000089 % 16 = 9; a negative hash is masked to its low 31 bits first.
    expect(applyTransform(parseTransform('bucket[16]'), { kind: 'string' }, 'iceberg')).toBe(1210000089 % 16);
    expect(applyTransform(parseTransform('bucket[16]'), { kind: 'int' }, 34)).toBe(2017239379 % 16);
    expect(applyTransform(parseTransform('bucket[100]'), { kind: 'binary' }, Uint8Array.of(0, 1, 2, 3))).toBe((-188683207 & 0x7fffffff) % 100);
  });
});

describe('truncate (spec: "Truncate Transform Details")', () => {
  const t = parseTransform('truncate[10]');
  it('floors integers toward negative infinity', () => {
    expect(applyTransform(t, { kind: 'int' }, 1)).toBe(0);
    expect(applyTransform(t, { kind: 'int' }, -1)).toBe(-10);
    expect(applyTransform(t, { kind: 'long' }, -1n)).toBe(-10n);
    expect(applyTransform(t, { kind: 'long' }, 19n)).toBe(10n);
  });
  it('cuts decimals on the unscaled value, strings by code point, binary by byte', () => {
    expect(applyTransform(t, { kind: 'decimal', precision: 9, scale: 2 }, 1065n)).toBe(1060n);
    expect(applyTransform(t, { kind: 'decimal', precision: 9, scale: 2 }, -1065n)).toBe(-1070n);
    expect(applyTransform(parseTransform('truncate[3]'), { kind: 'string' }, 'iceberg')).toBe('ice');
    expect(applyTransform(parseTransform('truncate[2]'), { kind: 'string' }, '😀😁x')).toBe('😀😁');
    expect(applyTransform(parseTransform('truncate[2]'), { kind: 'binary' }, Uint8Array.of(1, 2, 3))).toEqual(Uint8Array.of(1, 2));
  });
});

describe('temporal transforms', () => {
  const ts = micros('2017-11-16T22:31:08Z', 'offset_required');
  const before = micros('1969-12-31T23:59:59.999999Z', 'offset_required');
  it('counts years, months, days and hours from 1970, flooring before it', () => {
    expect(applyTransform(parseTransform('year'), { kind: 'timestamptz' }, ts)).toBe(47);
    expect(applyTransform(parseTransform('month'), { kind: 'timestamptz' }, ts)).toBe(47 * 12 + 10);
    expect(applyTransform(parseTransform('day'), { kind: 'timestamptz' }, ts)).toBe(parseDate('2017-11-16'));
    expect(applyTransform(parseTransform('hour'), { kind: 'timestamptz' }, ts)).toBe(parseDate('2017-11-16')! * 24 + 22);
    expect(applyTransform(parseTransform('day'), { kind: 'timestamptz' }, before)).toBe(-1);
    expect(applyTransform(parseTransform('hour'), { kind: 'timestamptz' }, before)).toBe(-1);
    expect(applyTransform(parseTransform('month'), { kind: 'date' }, -1)).toBe(-1);
    expect(applyTransform(parseTransform('year'), { kind: 'date' }, -1)).toBe(-1);
  });
  it('gives null for null and void for anything', () => {
    expect(applyTransform(parseTransform('day'), { kind: 'timestamptz' }, null)).toBeNull();
    expect(applyTransform(parseTransform('void'), { kind: 'string' }, 'x')).toBeNull();
  });
});

describe('result types', () => {
  it('follows the spec table, and refuses what does not apply', () => {
    expect(resultType(parseTransform('day'), { kind: 'timestamptz' })).toEqual({ kind: 'date' });
    expect(resultType(parseTransform('bucket[4]'), { kind: 'string' })).toEqual({ kind: 'int' });
    expect(resultType(parseTransform('truncate[4]'), { kind: 'string' })).toEqual({ kind: 'string' });
    expect(() => resultType(parseTransform('hour'), { kind: 'date' })).toThrow(/does not apply/);
    expect(() => resultType(parseTransform('bucket[4]'), { kind: 'double' })).toThrow(/does not apply/);
    expect(() => parseTransform('zorder')).toThrow(/not known/);
  });
});
