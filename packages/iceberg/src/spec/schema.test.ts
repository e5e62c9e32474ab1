import { describe, expect, it } from 'vitest';
import { highestFieldId, indexById, schemaFromJson, schemaToJson } from './schema.ts';
import { containsUnsupported, parseTypeString, typeString } from './types.ts';

const JSON_SCHEMA = {
  type: 'struct',
  'schema-id': 4,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long', doc: 'the key' },
    { id: 2, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 3, name: 'hash', required: false, type: 'fixed[16]' },
    { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': true } },
    {
      id: 6,
      name: 'attrs',
      required: false,
      type: { type: 'map', 'key-id': 7, key: 'string', 'value-id': 8, value: { type: 'struct', fields: [{ id: 9, name: 'v', required: false, type: 'timestamptz' }] }, 'value-required': false },
    },
    { id: 10, name: 'shape', required: false, type: 'geometry(srid:4326)' },
    { id: 11, name: 'area', required: false, type: 'geography(OGC:CRS84, spherical)' },
    { id: 12, name: 'later', required: false, type: 'timestamp_ns', 'initial-default': null, 'write-default': 'x' },
  ],
};

describe('schema JSON', () => {
  it('parses every type and serialises back to the same JSON', () => {
    const schema = schemaFromJson(JSON_SCHEMA);
    expect(schema.schemaId).toBe(4);
    expect(schema.identifierFieldIds).toEqual([1]);
    expect(schema.fields[1]?.type).toEqual({ kind: 'decimal', precision: 10, scale: 2 });
    expect(schema.fields[2]?.type).toEqual({ kind: 'fixed', length: 16 });
    expect(schema.fields[5]?.type).toMatchObject({ kind: 'unsupported', name: 'geometry' });
    expect(schema.fields[6]?.type).toMatchObject({ kind: 'unsupported', name: 'geography' });
    expect(schemaToJson(schema)).toEqual(JSON_SCHEMA);
  });

  it('accepts ids as bigint (lossless parsers) and indexes nested ids', () => {
    const schema = schemaFromJson({ ...JSON_SCHEMA, 'schema-id': 4n, fields: [{ id: 1n, name: 'id', required: true, type: 'long' }] });
    expect(schema.fields[0]?.id).toBe(1);
    const full = schemaFromJson(JSON_SCHEMA);
    expect([...indexById(full).keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(indexById(full).get(9)?.name).toBe('v');
    expect(highestFieldId(full)).toBe(12);
  });

  it('refuses malformed schemas with the place that is wrong', () => {
    expect(() => schemaFromJson({ type: 'struct', fields: [{ id: 1, name: 'x', required: true, type: 'varchar' }] })).toThrow(/schema\.x/);
    expect(() => schemaFromJson({ type: 'struct', fields: [{ id: 'a', name: 'x', required: true, type: 'int' }] })).toThrow(/x\.id/);
    expect(() => schemaFromJson({ type: 'struct', fields: [{ id: 1, name: 'x', type: 'int' }] })).toThrow(/required/);
    expect(() => schemaFromJson([])).toThrow(/object/);
  });
});

describe('type strings', () => {
  it('parses primitives, decimals and fixed, and prints them as Iceberg does', () => {
    expect(parseTypeString('decimal(10,2)')).toEqual({ kind: 'decimal', precision: 10, scale: 2 });
    expect(typeString(parseTypeString('decimal(10,2)') as never)).toBe('decimal(10, 2)');
    expect(parseTypeString('fixed[4]')).toEqual({ kind: 'fixed', length: 4 });
    expect(parseTypeString('timestamptz')).toEqual({ kind: 'timestamptz' });
    expect(() => parseTypeString('decimal(39, 2)')).toThrow();
    expect(() => parseTypeString('decimal(5, 6)')).toThrow();
    expect(() => parseTypeString('fixed[0]')).toThrow();
  });

  it('writes the v3 nanosecond timestamps; recognises the other v3 types as unsupported, also inside nested types', () => {
    for (const text of ['geometry', 'geometry(srid:3857)', 'geography(OGC:CRS84, karney)', 'variant', 'unknown']) {
      expect(parseTypeString(text).kind).toBe('unsupported');
    }
    expect(parseTypeString('timestamptz_ns')).toEqual({ kind: 'timestamptz_ns' });
    expect(parseTypeString('timestamp_ns')).toEqual({ kind: 'timestamp_ns' });
    const list = schemaFromJson({ type: 'struct', fields: [{ id: 1, name: 'l', required: false, type: { type: 'list', 'element-id': 2, element: 'geometry', 'element-required': false } }] });
    expect(containsUnsupported(list.fields[0]!.type)).toBe(true);
  });
});
