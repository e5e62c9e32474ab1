import { describe, expect, it } from 'vitest';
import type { SchemaJson } from '../spec/metadata.ts';
import { addColumns, hasColumn } from './schema-fields.ts';

const schema: SchemaJson = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'zip', required: false, type: 'string' }] } },
    {
      id: 3,
      name: 'items',
      required: false,
      type: { type: 'list', 'element-id': 5, 'element-required': false, element: { type: 'struct', fields: [{ id: 6, name: 'sku', required: true, type: 'string' }] } },
    },
  ],
};

describe('addColumns', () => {
  it('adds top-level and nested optional columns with ids after the last, a struct level by level, leaving the rest as it was', () => {
    const { fields, lastColumnId } = addColumns(schema, 6, [
      { name: 'battery_mv', type: 'long' },
      { name: 'city', type: 'string', parent: ['address'] },
      { name: 'qty', type: { kind: 'double' }, parent: ['items'] },
      {
        name: 'gps',
        type: {
          kind: 'struct',
          fields: [
            { id: 0, name: 'lat', required: true, type: { kind: 'double' } },
            { id: 0, name: 'tags', required: false, type: { kind: 'list', elementId: 0, elementRequired: true, element: { kind: 'string' } } },
          ],
        },
      },
    ]);
    expect(lastColumnId).toBe(13);
    expect(fields).toEqual([
      schema.fields[0],
      { ...schema.fields[1], type: { type: 'struct', fields: [{ id: 4, name: 'zip', required: false, type: 'string' }, { id: 8, name: 'city', required: false, type: 'string' }] } },
      {
        ...schema.fields[2],
        type: {
          type: 'list',
          'element-id': 5,
          'element-required': false,
          element: { type: 'struct', fields: [{ id: 6, name: 'sku', required: true, type: 'string' }, { id: 9, name: 'qty', required: false, type: 'double' }] },
        },
      },
      { id: 7, name: 'battery_mv', required: false, type: 'long' },
      {
        id: 10,
        name: 'gps',
        required: false,
        type: {
          type: 'struct',
          fields: [
            { id: 11, name: 'lat', required: false, type: 'double' },
            { id: 12, name: 'tags', required: false, type: { type: 'list', 'element-id': 13, 'element-required': false, element: 'string' } },
          ],
        },
      },
    ]);
  });

  it('refuses a name the parent has and a parent that is no struct; the schema given is untouched', () => {
    const before = structuredClone(schema);
    expect(() => addColumns(schema, 6, [{ name: 'zip', type: 'long', parent: ['address'] }])).toThrow(expect.objectContaining({ kind: 'already_exists' }));
    expect(() => addColumns(schema, 6, [{ name: 'x', type: 'long', parent: ['id'] }])).toThrow(expect.objectContaining({ kind: 'not_found' }));
    expect(() => addColumns(schema, 6, [{ name: 'x', type: 'geometry' }])).toThrow(expect.objectContaining({ kind: 'unsupported' }));
    addColumns(schema, 6, [{ name: 'city', type: 'string', parent: ['address'] }]);
    expect(schema).toEqual(before);
  });

  it('finds columns in place by parent and name', () => {
    expect(hasColumn(schema, { name: 'sku', parent: ['items'] })).toBe(false); // required: not one a change added
    expect(hasColumn(schema, { name: 'zip', parent: ['address'] })).toBe(true);
    expect(hasColumn(schema, { name: 'zip' })).toBe(false);
  });
});
