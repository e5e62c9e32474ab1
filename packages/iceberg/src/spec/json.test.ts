import { describe, expect, it } from 'vitest';
import { parseJson, stringifyJson } from './json.ts';

describe('catalog JSON', () => {
  it('keeps a 63-bit snapshot id exact through parse and stringify', () => {
    const text = '{"current-snapshot-id":8333333333333333333,"snapshots":[{"snapshot-id":8333333333333333333,"parent-snapshot-id":42}]}';
    const value = parseJson(text) as { 'current-snapshot-id': bigint; snapshots: Array<Record<string, unknown>> };
    expect(value['current-snapshot-id']).toBe(8333333333333333333n);
    expect(value.snapshots[0]!['snapshot-id']).toBe(8333333333333333333n);
    expect(stringifyJson(value)).toBe(text);
  });

  it('turns small snapshot ids into bigint and leaves other numbers alone', () => {
    const value = parseJson('{"snapshot-id":-1,"sequence-number":3,"timestamp-ms":1700000000000,"ratio":0.5}');
    expect(value).toEqual({ 'snapshot-id': -1n, 'sequence-number': 3, 'timestamp-ms': 1700000000000, ratio: 0.5 });
  });

  it('turns any integer beyond 2^53 into bigint', () => {
    expect(parseJson('[9007199254740993, -9223372036854775808, 9007199254740991]')).toEqual([
      9007199254740993n,
      -9223372036854775808n,
      9007199254740991,
    ]);
  });

  it('writes bigint exactly and strings unchanged', () => {
    expect(stringifyJson({ id: 9223372036854775807n, s: 'snapshot-id' })).toBe('{"id":9223372036854775807,"s":"snapshot-id"}');
  });
});
