import type { SchemaJson } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { planNewColumns } from './new-fields.ts';
import { validateBatches } from './validate.ts';

const schema: SchemaJson = {
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'x', required: true, type: 'long' },
    { id: 2, name: 'device', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'model', required: false, type: 'string' }] } },
    {
      id: 3,
      name: 'readings',
      required: false,
      type: { type: 'list', 'element-id': 5, 'element-required': false, element: { type: 'struct', fields: [{ id: 6, name: 'v', required: false, type: 'double' }] } },
    },
  ],
};

const plan = (...rows: unknown[]) => planNewColumns(schema, rows.map((r) => JSON.stringify(r)));

describe('planNewColumns', () => {
  it('finds new fields at the top, in structs and in lists of structs, typed by the rules, in the order rows carry them', () => {
    expect(
      plan(
        { x: 1, battery_mv: 3700, device: { model: 'a', fw: '2.1' }, readings: [{ v: 1, unit: 'C' }] },
        { x: 2, at: '2026-12-02T10:00:00.5Z', ok: true, gps: { lat: 1.5, lon: 2 }, tags: ['a'] },
      ),
    ).toEqual([
      { parent: [], name: 'battery_mv', type: { kind: 'long' } },
      { parent: ['device'], name: 'fw', type: { kind: 'string' } },
      { parent: ['readings'], name: 'unit', type: { kind: 'string' } },
      { parent: [], name: 'at', type: { kind: 'timestamptz' } },
      { parent: [], name: 'ok', type: { kind: 'boolean' } },
      {
        parent: [],
        name: 'gps',
        type: {
          kind: 'struct',
          fields: [
            { id: 0, name: 'lat', required: false, type: { kind: 'double' } },
            { id: 0, name: 'lon', required: false, type: { kind: 'long' } },
          ],
        },
      },
      { parent: [], name: 'tags', type: { kind: 'list', elementId: 0, elementRequired: false, element: { kind: 'string' } } },
    ]);
  });

  it('types a field from all its values: long with double is double, structs take every field; on a conflict the first wins', () => {
    expect(plan({ x: 1, n: 1 }, { x: 2, n: 2.5 })).toEqual([{ parent: [], name: 'n', type: { kind: 'double' } }]);
    expect(plan({ x: 1, c: 'red' }, { x: 2, c: 7 })).toEqual([{ parent: [], name: 'c', type: { kind: 'string' } }]);
    expect(plan({ x: 1, c: 7 }, { x: 2, c: 'red' })).toEqual([{ parent: [], name: 'c', type: { kind: 'long' } }]);
    expect(plan({ x: 1, g: { a: 1 } }, { x: 2, g: { a: 'x' } })[0]!.type).toMatchObject({ kind: 'struct', fields: [{ name: 'a', type: { kind: 'long' } }] });
    expect(plan({ x: 1, g: { a: 1 } }, { x: 2, g: { b: true } })[0]!.type).toMatchObject({ kind: 'struct', fields: [{ name: 'a' }, { name: 'b' }] });
  });

  it('adds no field a column cannot be named after: bad names, metadata column names, names differing only in case', () => {
    expect(plan({ x: 1, 'bad-name': 1, _FILE: 'f', X: 2, device: { MODEL: 'm', Fw: 1 } }, { x: 2, device: { fw: 2 } }).map((c) => [...c.parent!, c.name].join('.'))).toEqual([]);
    expect(plan({ x: 1, _file_name: 'f' }).map((c) => c.name)).toEqual(['_file_name']);
  });

  it('types integers beyond 2^53 exactly, and keeps the first kind where a later one cannot join it', () => {
    expect(planNewColumns(schema, ['{"x": 1, "big": 9007199254740993}', '{"x": 2, "big": 1.5}'])).toEqual([{ parent: [], name: 'big', type: { kind: 'long' } }]);
    expect(plan({ x: 1, v: 5 }, { x: 2, v: 'five' }, { x: 3, v: 2.5 })).toEqual([{ parent: [], name: 'v', type: { kind: 'double' } }]);
  });

  it('leaves out the null members of a new struct, and adds nothing for fields whose values give no type (null, [], {}), nor for known fields', () => {
    expect(plan({ x: 1, gps: { lat: 1.5, fix: null } })[0]!.type).toEqual({ kind: 'struct', fields: [{ id: 0, name: 'lat', required: false, type: { kind: 'double' } }] });
    expect(plan({ x: 1, n: null, e: [], o: {}, l: [null] }, { x: 2, device: { model: 'b' } })).toEqual([]);
    expect(plan({ x: 1, n: null }, { x: 2, n: 5 })).toEqual([{ parent: [], name: 'n', type: { kind: 'long' } }]);
  });
});

describe('validateBatches for a sink adding columns', () => {
  const batch = (id: string, rows: unknown[]) => {
    const body = Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'));
    return { id, key: `_sink/snk_0123456789ab/${id}.ndjson`, size: body.length, received: '2026-12-02T10:00:00Z', body };
  };

  it('takes nulls under unknown keys, keeps the unknown rows for planning and says why a row does not fit a column the roll added', () => {
    const evolved: SchemaJson = { ...schema, 'schema-id': 4, fields: [...schema.fields, { id: 7, name: 'n', required: false, type: 'long' }] };
    const rows = [{ x: 1, gone: null, device: { also: null } }, { x: 2, n: 'seven' }, { x: 3, e: [] }];
    const result = validateBatches(evolved, [batch('b', rows)], { added: [{ path: 'n', type: 'long' }] });
    expect(result.rows).toBe(1);
    expect(result.unknownRows).toEqual(['{"x":3,"e":[]}']);
    const lines = result.batches[0]!.rejectLines.map((l) => JSON.parse(l) as { reason: string; field: string; message: string });
    expect(lines).toEqual([
      expect.objectContaining({ reason: 'type_mismatch', field: 'n', message: expect.stringContaining('this roll added n as long') }),
      expect.objectContaining({ reason: 'unknown_field', field: 'e', message: expect.stringContaining('null, [] or {} alone do not') }),
    ]);
    // A sink that rejects unknown fields rejects the null too, as before.
    expect(validateBatches(evolved, [batch('b', rows)]).batches[0]!.reasons).toEqual({ unknown_field: 2, type_mismatch: 1 });
  });
});
