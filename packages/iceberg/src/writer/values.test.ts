import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import {
  base64Length,
  parseDate,
  parseTime,
  parseTimestamp,
  toDecimal,
  toFloat32,
  toFloat64,
  toInt32,
  toInt64,
  writeUuid,
} from './values.ts';

const big = (text: string) => new LosslessNumber(text);

describe('integers', () => {
  it('take JSON integers in range, in any notation whose value is integral', () => {
    expect(toInt32(7)).toBe(7);
    expect(toInt32(7.0)).toBe(7);
    expect(toInt32(1e3)).toBe(1000);
    expect(toInt32(-2147483648)).toBe(-2147483648);
    expect(toInt32(-0)).toBe(0);
    expect(Object.is(toInt32(-0), -0)).toBe(false);
    expect(toInt32(big('2147483647'))).toBe(2147483647);
    expect(toInt32(5n)).toBe(5);
  });

  it('reject fractions, out-of-range values and non-numbers, never rounding', () => {
    for (const value of [1.5, 2147483648, -2147483649, '1', true, null, big('2147483647.0000000000001'), NaN, Infinity]) {
      expect(toInt32(value)).toBeUndefined();
    }
  });

  it('keeps longs exact beyond 2^53 (bigint) and within (number)', () => {
    expect(toInt64(big('9223372036854775807'))).toBe(9223372036854775807n);
    expect(toInt64(big('-9223372036854775808'))).toBe(-9223372036854775808n);
    expect(toInt64(big('9007199254740993'))).toBe(9007199254740993n);
    expect(toInt64(big('9007199254740991'))).toBe(9007199254740991);
    expect(toInt64(big('1.2e3'))).toBe(1200);
    expect(toInt64(9e18)).toBe(9000000000000000000n);
    expect(toInt64(123n)).toBe(123);
    expect(toInt64(-4)).toBe(-4);
  });

  it('rejects longs out of range or fractional', () => {
    for (const value of [big('9223372036854775808'), big('-9223372036854775809'), big('1.5'), 1e19, 2n ** 63n, big('1e400'), 0.5]) {
      expect(toInt64(value)).toBeUndefined();
    }
  });
});

describe('floating point', () => {
  it('takes any JSON number and the non-finite spellings as strings', () => {
    expect(toFloat64(0.1)).toBe(0.1);
    expect(toFloat64(big('3.14159265358979323846'))).toBe(3.141592653589793);
    expect(toFloat64('NaN')).toBeNaN();
    expect(toFloat64('-Infinity')).toBe(-Infinity);
    expect(toFloat64('1.5')).toBeUndefined();
    expect(toFloat64('toString')).toBeUndefined();
    expect(toFloat64(big('1e400'))).toBeUndefined();
    expect(toFloat64(Infinity)).toBeUndefined();
  });

  it('rounds to float but rejects values beyond its range', () => {
    expect(toFloat32(0.1)).toBe(Math.fround(0.1));
    expect(toFloat32(3.4e38)).toBe(Math.fround(3.4e38));
    expect(toFloat32(1e39)).toBeUndefined();
    expect(toFloat32('Infinity')).toBe(Infinity);
  });
});

describe('decimals', () => {
  it('take numbers and strings exactly, trailing zeros aside', () => {
    expect(toDecimal(12.3, 10, 2)).toBe(1230);
    expect(toDecimal('12.30', 10, 2)).toBe(1230);
    expect(toDecimal('-0.01', 10, 2)).toBe(-1);
    expect(toDecimal(0.1, 5, 1)).toBe(1);
    expect(toDecimal(1e2, 5, 0)).toBe(100);
    expect(toDecimal('1.2000', 5, 2)).toBe(120);
    expect(toDecimal('+7', 5, 2)).toBe(700);
    expect(toDecimal('.5', 5, 2)).toBe(50);
    expect(toDecimal(big('12345678901234567890.123456789012345678'), 38, 18)).toBe(12345678901234567890123456789012345678n);
    expect(toDecimal(big('99999999999999999999999999999999999999'), 38, 0)).toBe(99999999999999999999999999999999999999n);
    expect(toDecimal(-0, 5, 2)).toBe(0);
    expect(toDecimal('-0', 5, 2)).toBe(0);
    expect(toDecimal('1.', 5, 2)).toBe(100);
    expect(toDecimal('0012.5', 5, 2)).toBe(1250);
    expect(toDecimal('9999999999999999', 16, 0)).toBe(9999999999999999n);
    expect(toDecimal('999999999999999.9', 16, 1)).toBe(9999999999999999n);
  });

  it('rejects extra fraction digits and too many digits instead of rounding', () => {
    expect(toDecimal(1.234, 10, 2)).toBeUndefined();
    expect(toDecimal('1.005', 10, 2)).toBeUndefined();
    expect(toDecimal(0.125, 10, 2)).toBeUndefined();
    expect(toDecimal('123456', 5, 0)).toBeUndefined();
    expect(toDecimal(1000, 5, 2)).toBeUndefined();
    expect(toDecimal('100000000000000000000000000000000000000', 38, 0)).toBeUndefined();
    expect(toDecimal('1e-3', 5, 2)).toBeUndefined();
    expect(toDecimal('12345.6', 5, 1)).toBeUndefined();
    for (const value of ['', '.', '-', '1,5', ' 1', '1.2.3', '1-', 'NaN', true, null, [1]]) expect(toDecimal(value, 10, 2)).toBeUndefined();
  });
});

describe('dates and times', () => {
  it('parses dates as days since the epoch, checking the calendar', () => {
    expect(parseDate('1970-01-01')).toBe(0);
    expect(parseDate('2000-02-29')).toBe(11016);
    expect(parseDate('1969-12-31')).toBe(-1);
    expect(parseDate('0001-01-01')).toBe(-719162);
    for (const value of ['1900-02-29', '2023-02-29', '2024-13-01', '2024-00-10', '2024-04-31', '2024-1-01', '2024-01-01T00:00:00Z', '2x24-01-01', 20240101]) {
      expect(parseDate(value)).toBeUndefined();
    }
  });

  it('parses times to microseconds', () => {
    expect(parseTime('00:00:00')).toBe(0);
    expect(parseTime('23:59:59.999999')).toBe(86399999999);
    expect(parseTime('12:00:00.5')).toBe(43200500000);
    expect(parseTime('12:00:00.123456000')).toBe(43200123456);
    for (const value of ['24:00:00', '12:60:00', '12:00:60', '12:00', '12:00:00.1234567', '12:00:00.', '12:00:00Z']) {
      expect(parseTime(value)).toBeUndefined();
    }
  });

  it('normalises timestamptz to UTC microseconds, exact beyond 2^53', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z', 'offset_required')).toBe(0);
    expect(parseTimestamp('2024-05-01T12:00:00.123456+02:00', 'offset_required')).toBe(1714557600123456);
    expect(parseTimestamp('2024-05-01t10:00:00.123456z', 'offset_required')).toBe(1714557600123456);
    expect(parseTimestamp('2024-05-01 10:00:00-00:30', 'offset_required')).toBe(1714559400000000);
    expect(parseTimestamp('1969-12-31T23:59:59.999999Z', 'offset_required')).toBe(-1);
    expect(parseTimestamp('9999-12-31T23:59:59.999999Z', 'offset_required')).toBe(253402300799999999n);
    expect(parseTimestamp('0001-01-01T00:00:00Z', 'offset_required')).toBe(-62135596800000000n);
  });

  it('requires an offset for timestamptz and allows only UTC for timestamp', () => {
    expect(parseTimestamp('2024-05-01T10:00:00', 'offset_required')).toBeUndefined();
    expect(parseTimestamp('2024-05-01T10:00:00', 'utc_or_none')).toBe(1714557600000000);
    expect(parseTimestamp('2024-05-01T10:00:00Z', 'utc_or_none')).toBe(1714557600000000);
    expect(parseTimestamp('2024-05-01T10:00:00+00:00', 'utc_or_none')).toBe(1714557600000000);
    expect(parseTimestamp('2024-05-01T10:00:00+01:00', 'utc_or_none')).toBeUndefined();
  });

  it('rejects malformed timestamps', () => {
    for (const value of [
      '2024-05-01T10:00Z',
      '2024-05-01T10:00:00+0100',
      '2024-05-01T10:00:00+01',
      '2024-05-01T10:00:00+24:00',
      '2024-05-01T10:00:00.1234567Z',
      '2024-05-01X10:00:00Z',
      '2024-05-01T10:00:00ZZ',
      '2024-02-30T10:00:00Z',
      // One byte short of each fixed-width part, which is read without bounds checks.
      '2024-05-01T10:00:0',
      '2024-05-01T10:00:00.Z',
      '2024-05-01T10:00:00+01:0',
      1714557600,
    ]) {
      expect(parseTimestamp(value, 'offset_required')).toBeUndefined();
    }
    expect(parseTimestamp('2024-05-01T10:00:00.123456000Z', 'offset_required')).toBe(1714557600123456);
  });
});

describe('uuid and base64', () => {
  it('writes uuids as 16 big-endian bytes', () => {
    const target = new Uint8Array(18);
    expect(writeUuid('00112233-4455-6677-8899-AABBCCDDEEFF', target, 1)).toBe(true);
    expect([...target]).toEqual([0, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0]);
    for (const value of ['00112233445566778899aabbccddeeff', '00112233-4455-6677-8899-aabbccddeefg', '{00112233-4455-6677-8899-aabbccddeeff}', 5]) {
      expect(writeUuid(value, target, 0)).toBe(false);
    }
  });

  it('measures standard base64, padded or not, and refuses anything else', () => {
    expect(base64Length('')).toBe(0);
    expect(base64Length('AAEC')).toBe(3);
    expect(base64Length('AAE=')).toBe(2);
    expect(base64Length('AAE')).toBe(2);
    expect(base64Length('AA==')).toBe(1);
    for (const value of ['A', 'AA=', 'AAE==', 'AA-_', 'AA E', 'AAEC\n', 3]) expect(base64Length(value)).toBe(-1);
  });
});
