import { describe, expect, it } from 'vitest';
import type { Schema } from '../spec/schema.ts';
import { parsePartitionField, partitionFieldText, PartitionRequestError, resolvePartitionFields, sameFields } from './request.ts';

const schema: Schema = {
  schemaId: 0,
  identifierFieldIds: [],
  fields: [
    { id: 1, name: 'x', required: true, type: { kind: 'long' } },
    { id: 2, name: 'device', required: false, type: { kind: 'string' } },
    { id: 3, name: 'meta', required: false, type: { kind: 'struct', fields: [{ id: 4, name: 'kind', required: false, type: { kind: 'string' } }] } },
    { id: 5, name: 'tags', required: false, type: { kind: 'list', elementId: 6, element: { kind: 'string' }, elementRequired: false } },
    { id: 7, name: 'at', required: false, type: { kind: 'timestamptz' } },
    { id: 8, name: 'ok', required: false, type: { kind: 'boolean' } },
  ],
};

const problem = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof PartitionRequestError ? { problem: error.problem, field: error.field } : error;
  }
  return undefined;
};
const resolve = (...texts: string[]) => resolvePartitionFields(texts.map(parsePartitionField), schema, 999);

describe('partition requests', () => {
  it('parses transform(column) with spaces and canonicalises it', () => {
    expect(parsePartitionField(' bucket[ 16 ] ( device ) ')).toEqual({ transform: { kind: 'bucket', n: 16 }, source: 'device' });
    expect(partitionFieldText(parsePartitionField('truncate[4](meta.kind)'))).toBe('truncate[4](meta.kind)');
    for (const text of ['day', 'day()', 'week(at)', 'bucket[0](x)', 'day(a)(b)']) expect(problem(() => parsePartitionField(text))).toEqual({ problem: 'syntax', field: text });
  });

  it('resolves top-level and nested sources to spec fields named as Java names them, ids after the last', () => {
    expect(resolve('day(at)', 'bucket[16](x)', 'identity(meta.kind)', 'truncate[3](device)')).toEqual([
      { 'source-id': 7, 'field-id': 1000, name: 'at_day', transform: 'day' },
      { 'source-id': 1, 'field-id': 1001, name: 'x_bucket_16', transform: 'bucket[16]' },
      { 'source-id': 4, 'field-id': 1002, name: 'meta_kind', transform: 'identity' },
      { 'source-id': 2, 'field-id': 1003, name: 'device_trunc_3', transform: 'truncate[3]' },
    ]);
  });

  it('names the field that is unknown, inside a list, of the wrong type, or repeated', () => {
    expect(problem(() => resolve('day(at)', 'identity(nope)'))).toEqual({ problem: 'unknown_field', field: 'identity(nope)' });
    expect(problem(() => resolve('identity(tags.element)'))).toEqual({ problem: 'unknown_field', field: 'identity(tags.element)' });
    expect(problem(() => resolve('day(x)'))).toEqual({ problem: 'transform_invalid', field: 'day(x)' });
    expect(problem(() => resolve('bucket[4](ok)'))).toEqual({ problem: 'transform_invalid', field: 'bucket[4](ok)' });
    expect(problem(() => resolve('identity(meta)'))).toEqual({ problem: 'transform_invalid', field: 'identity(meta)' });
    expect(problem(() => resolve('day(at)', 'day(at)'))).toEqual({ problem: 'duplicate', field: 'day(at)' });
  });

  it('compares specs by sources and transforms in order', () => {
    const fields = resolve('day(at)', 'identity(x)');
    expect(sameFields({ fields: fields.map((f) => ({ ...f, name: 'other', 'field-id': 1 })) }, fields)).toBe(true);
    expect(sameFields({ fields: [...fields].reverse() }, fields)).toBe(false);
    expect(sameFields({ fields: fields.slice(0, 1) }, fields)).toBe(false);
  });
});
