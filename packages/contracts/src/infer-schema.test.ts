import { describe, expect, it } from 'vitest';
import { formatInferredType, inferredFieldsJson, inferSchema, inferType, isTimestamptzText, type SchemaInference } from './infer-schema.ts';

/** The inferred schema as `name: type` lines, or the refusals as `path: reason`. */
function shown(result: SchemaInference): string[] {
  return result.ok ? result.fields.map((f) => `${f.name}: ${formatInferredType(f.type)}`) : result.refusals.map((r) => `${r.path}: ${r.reason}`);
}

const typeOf = (...values: unknown[]) => {
  const result = inferType(values);
  return result.ok ? formatInferredType(result.type) : result.refusals.map((r) => `${r.path}: ${r.reason}`).join('; ');
};

/** A lossless parser's number (lossless-json's LosslessNumber has this shape). */
const lossless = (value: string) => ({ isLosslessNumber: true, value });

describe('inferType: the rules', () => {
  it.each([
    [[1, 2, -3], 'long'],
    [[1.5, 2], 'double'],
    [[true, false], 'boolean'],
    [['a', ''], 'string'],
    [['2026-12-02T11:30:00Z', '2026-12-02 11:30:00.123456+02:00'], 'timestamptz'],
    [['2026-12-02T11:30:00Z', 'soon'], 'string'],
    [[{ a: 1 }, { b: 'x' }], 'struct<a: long, b: string>'],
    [[[1, 2], [3.5]], 'list<double>'],
    [[[[1]], [[], null]], 'list<list<long>>'],
    [[[{ id: 1 }, { id: null, tag: 'x' }]], 'list<struct<id: long, tag: string>>'],
    [[null, 1, undefined], 'long'],
  ])('%j → %s', (values, expected) => {
    expect(typeOf(...values)).toBe(expected);
  });

  it('judges numbers by value, as a long column validates them: 7.0 and 1200e-2 are integers', () => {
    expect(typeOf(lossless('7.0'), lossless('1200e-2'), lossless('-0'))).toBe('long');
    expect(typeOf(lossless('12.5e-1'))).toBe('double');
    expect(typeOf(lossless('9223372036854775807'), lossless('-9223372036854775808'))).toBe('long');
    expect(typeOf(2n ** 62n)).toBe('long');
  });

  it('types integers beyond the long range as double, as that column takes them', () => {
    expect(typeOf(lossless('9223372036854775808'))).toBe('double');
    expect(typeOf(1e20, 3)).toBe('double');
  });

  it('refuses integers beyond 2^53 together with numbers a long cannot hold', () => {
    expect(typeOf(lossless('9007199254740993'), 1.5)).toBe(': holds integers beyond 2^53, which a double would round, and numbers a long cannot hold; give its type');
    expect(typeOf(2 ** 60, 2 ** 64)).toMatch(/integers beyond 2\^53/);
    // At 2^53 a double is still exact.
    expect(typeOf(2 ** 53, 0.5)).toBe('double');
  });

  it('refuses numbers no double holds', () => {
    expect(typeOf(lossless('1e400'))).toBe(': holds a number beyond the double range');
    expect(typeOf(Infinity)).toBe(': holds a number beyond the double range');
  });

  it.each([
    [[1, 'a'], ': holds numbers and strings; one type is needed'],
    [[true, 0], ': holds booleans and numbers; one type is needed'],
    [[{ a: 1 }, [1]], ': holds objects and arrays; one type is needed'],
    [['2026-12-02T11:30:00Z', 5.5], ': holds numbers and strings; one type is needed'],
    [[null, null], ': holds only null; give its type'],
    [[[], []], ': holds only empty arrays; give its type'],
    [[[null], []], ': holds only null elements; give its type'],
    [[{}, null], ': holds only empty objects; give its type'],
    [[[1, 'x']], '[]: holds numbers and strings; one type is needed'],
    [[{ a: { b: null } }], 'a.b: holds only null; give its type'],
  ])('refuses %j', (values, expected) => {
    expect(typeOf(...values)).toBe(expected);
  });
});

describe('isTimestamptzText', () => {
  it.each([
    ['2026-12-02T11:30:00Z', true],
    ['2026-12-02t11:30:00z', true],
    ['2026-12-02 11:30:00-05:30', true],
    ['2024-02-29T00:00:00Z', true],
    ['2026-12-02T11:30:00.123456000Z', true],
    ['2026-12-02T11:30:00.123456789Z', false],
    ['2026-12-02T23:59:60Z', false],
    ['2023-02-29T00:00:00Z', false],
    ['2026-12-02T11:30:00', false],
    ['2026-12-02', false],
    ['2026-12-02T11:30Z', false],
    ['2026-12-02T11:30:00+24:00', false],
    ['2026-12-02T11:30:00.Z', false],
  ])('%s → %s', (text, expected) => {
    expect(isTimestamptzText(text)).toBe(expected);
  });
});

describe('inferSchema', () => {
  it('makes every field any row has an optional column, in the order first seen', () => {
    const result = inferSchema([{ device: 'a', temp: 21 }, { temp: 21.5, at: '2026-12-02T11:30:00Z', tags: ['x'] }, { device: null }]);
    expect(shown(result)).toEqual(['device: string', 'temp: double', 'at: timestamptz', 'tags: list<string>']);
  });

  it('names every refused field by its path, nested ones too', () => {
    const result = inferSchema([
      { ok: 1, mixed: 1, gone: null, nested: { deep: [[]], fine: true } },
      { mixed: 'one', nested: { deep: [[]] }, list: [{ x: 1 }, { x: 'y' }] },
    ]);
    expect(shown(result)).toEqual([
      'mixed: holds numbers and strings; one type is needed',
      'gone: holds only null; give its type',
      'nested.deep[]: holds only empty arrays; give its type',
      'list[].x: holds numbers and strings; one type is needed',
    ]);
  });

  it('refuses names a column cannot take, names differing only in case, and reserved names', () => {
    const result = inferSchema([{ 'bad-name': 1, '9lives': 1, Temp: 1, temp: 2, _FILE: 'x', __ingest_ts: 'now', s: { 'a b': 1, ['x'.repeat(256)]: 2 } }], {
      reserved: { __INGEST_TS: 'is filled by the platform' },
    });
    expect(shown(result)).toEqual([
      '_FILE: "_FILE" is the name of an Iceberg metadata column',
      '__ingest_ts: "__ingest_ts" is filled by the platform',
      'bad-name: "bad-name" cannot be a column name: use at most 255 letters, digits and underscores, starting with a letter or underscore',
      '9lives: "9lives" cannot be a column name: use at most 255 letters, digits and underscores, starting with a letter or underscore',
      'Temp: "Temp", "temp" differ only in case, which engines do not tell apart',
      'temp: "Temp", "temp" differ only in case, which engines do not tell apart',
      's.a b: "a b" cannot be a column name: use at most 255 letters, digits and underscores, starting with a letter or underscore',
      `s.${'x'.repeat(256)}: "${'x'.repeat(256)}" cannot be a column name: use at most 255 letters, digits and underscores, starting with a letter or underscore`,
    ]);
  });

  it('refuses an empty sample and rows that are not objects', () => {
    expect(shown(inferSchema([]))).toEqual([': no rows to infer from']);
    expect(shown(inferSchema([{ a: 1 }, [1], 3]))).toEqual([': row 2 is not a JSON object']);
    expect(shown(inferSchema([{ a: 1 }, lossless('1')]))).toEqual([': row 2 is not a JSON object']);
  });

  it('gives the catalog JSON with fresh ids, one level before its children', () => {
    const result = inferSchema([{ a: 1, s: { b: [true], c: 'x' }, l: [[1.5]] }]);
    if (!result.ok) throw new Error('inference refused');
    expect(inferredFieldsJson(result.fields, 5)).toEqual({
      nextId: 13,
      fields: [
        { id: 5, name: 'a', required: false, type: 'long' },
        {
          id: 6,
          name: 's',
          required: false,
          type: {
            type: 'struct',
            fields: [
              { id: 8, name: 'b', required: false, type: { type: 'list', 'element-id': 10, element: 'boolean', 'element-required': false } },
              { id: 9, name: 'c', required: false, type: 'string' },
            ],
          },
        },
        {
          id: 7,
          name: 'l',
          required: false,
          type: { type: 'list', 'element-id': 11, element: { type: 'list', 'element-id': 12, element: 'double', 'element-required': false }, 'element-required': false },
        },
      ],
    });
  });
});
