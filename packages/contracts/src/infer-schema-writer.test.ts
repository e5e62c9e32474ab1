import { compileRowConverter, parseJsonRow, schemaFromJson } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { formatInferredType, inferredFieldsJson, inferSchema, isTimestamptzText } from './infer-schema.ts';
import { mulberry32 } from '../../../tests/support/random.ts';

/**
 * The promise of inference, checked against the writer the roller validates rows with: a
 * schema inferred from sample rows takes every one of them, whether the rows were parsed
 * exactly (as the roller does) or with JSON.parse (as a request body is).
 */

/** JSON literals of each family, spelled as producers spell them. */
const LITERALS: Record<string, readonly string[]> = {
  integer: ['0', '-0', '7', '7.0', '1e2', '-42', '1200e-2', '9007199254740992', '9007199254740993', '9223372036854775807', '-9223372036854775808'],
  fraction: ['1.5', '-0.25', '3.141592653589793238', '1e-7', '9223372036854775808', '1e300', '52.84173604397888'],
  string: ['""', '"a"', '"soon"', '"2026-12-02"', '"2026-12-02T11:30:00.123456789Z"', '"2026-12-02T23:59:60Z"', '"\\u00e9t\\u00e9"'],
  timestamp: ['"2026-12-02T11:30:00Z"', '"2026-12-02 11:30:00.5+02:00"', '"1970-01-01t00:00:00.000000000z"', '"2024-02-29T23:59:59.999999-12:00"'],
  boolean: ['true', 'false'],
};
const FAMILIES = Object.keys(LITERALS);

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

type Shape = 'scalar' | { list: Shape } | { struct: Shape };

function shape(next: () => number, depth: number): Shape {
  const roll = next();
  if (depth === 0 || roll < 0.6) return 'scalar';
  return roll < 0.8 ? { list: shape(next, depth - 1) } : { struct: shape(next, depth - 1) };
}

/** A value of the field's shape and family (of any family or shape, now and then). */
function value(next: () => number, family: string, of: Shape): string {
  const roll = next();
  if (roll < 0.1) return 'null';
  if (roll < 0.12) return pick(next, LITERALS[pick(next, FAMILIES)] as readonly string[]);
  if (of === 'scalar') return pick(next, LITERALS[roll < 0.14 ? pick(next, FAMILIES) : family] as readonly string[]);
  if ('list' in of) return `[${Array.from({ length: Math.floor(next() * 3) }, () => value(next, family, of.list)).join(',')}]`;
  return `{"n":${value(next, family, of.struct)},"m":${value(next, 'boolean', 'scalar')}}`;
}

function sample(seed: number): string[] {
  const next = mulberry32(seed);
  const fields = ['a', 'b', 'c', 'd'].map(() => ({ family: pick(next, FAMILIES), shape: shape(next, 2) }));
  return Array.from({ length: 1 + Math.floor(next() * 6) }, () => {
    const members = fields.flatMap((field, i) => (next() < 0.8 ? [`"f${i}":${value(next, field.family, field.shape)}`] : []));
    return `{${members.join(',')}}`;
  });
}

/** The rows the writer refuses, with why, when the table has the inferred schema. */
function refusedByWriter(lines: readonly string[], parse: (text: string) => unknown): string[] | undefined {
  const inferred = inferSchema(lines.map(parse));
  if (!inferred.ok) return undefined;
  const schema = schemaFromJson({ type: 'struct', 'schema-id': 0, fields: inferredFieldsJson(inferred.fields, 1).fields });
  const result = compileRowConverter(schema).appendNdjson(Buffer.from(lines.join('\n')));
  if (!result.ok) throw new Error(result.error.message);
  const types = inferred.fields.map((f) => `${f.name}: ${formatInferredType(f.type)}`).join(', ');
  return result.rejects.map((r) => `${r.text} → ${r.reject.message} (schema ${types})`);
}

describe('an inferred schema takes the rows it was inferred from', () => {
  it('for 400 generated samples, parsed exactly and with JSON.parse', () => {
    let inferred = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const lines = sample(seed);
      for (const parse of [parseJsonRow, JSON.parse]) {
        const refused = refusedByWriter(lines, parse);
        if (refused !== undefined) inferred++;
        expect(refused ?? [], `seed ${seed}`).toEqual([]);
      }
    }
    // Not a test of refusals alone: most samples must have been typed.
    expect(inferred).toBeGreaterThan(300);
  });

  it('for the edge cases written down', () => {
    const lines = [
      '{"n":7.0,"w":9223372036854775807,"h":9223372036854775808,"x":1,"t":"2026-12-02T11:30:00.123456000Z","s":"2026-12-02T11:30:00.1234567Z"}',
      '{"n":1200e-2,"w":-9223372036854775808,"h":1.5,"x":2.5,"t":null,"s":"2026-12-02T11:30:00Z","l":[[],[1]],"o":{"a":{}},"e":[]}',
      '{"o":{"a":{"b":true}},"e":[{"k":"v"}]}',
    ];
    expect(refusedByWriter(lines, parseJsonRow)).toEqual([]);
    const inferred = inferSchema(lines.map(parseJsonRow));
    expect(inferred.ok && inferred.fields.map((f) => `${f.name}: ${formatInferredType(f.type)}`)).toEqual([
      'n: long',
      'w: long',
      'h: double',
      'x: double',
      't: timestamptz',
      's: string',
      'l: list<list<long>>',
      'o: struct<a: struct<b: boolean>>',
      'e: list<struct<k: string>>',
    ]);
  });
});

describe('isTimestamptzText agrees with the timestamptz column', () => {
  const column = compileRowConverter(schemaFromJson({ type: 'struct', fields: [{ id: 1, name: 't', required: false, type: 'timestamptz' }] }));
  const texts = [
    ...LITERALS.timestamp!.map((t) => JSON.parse(t) as string),
    ...LITERALS.string!.map((t) => JSON.parse(t) as string),
    '2026-13-01T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '2026-12-02T24:00:00Z',
    '2026-12-02T11:60:00Z',
    '2026-12-02T11:30:00+23:59',
    '2026-12-02T11:30:00+00:60',
    '2026-12-02T11:30:00+0200',
    '2026-12-02T11:30:00.Z',
    '2026-12-02T11:30:00.1234560Z',
    '2026-12-02T11:30:00.1234561Z',
    ' 2026-12-02T11:30:00Z',
    '2026-12-02X11:30:00Z',
    '+2026-12-02T11:30:00Z',
    '0000-01-01T00:00:00Z',
  ];
  it.each(texts)('%s', (text) => {
    expect(isTimestamptzText(text)).toBe(column.appendJson(JSON.stringify({ t: text })) === null);
  });
});
