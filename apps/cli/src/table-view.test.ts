import { describe, expect, it } from 'vitest';
import { typeText } from './table-view.ts';

describe('typeText', () => {
  it('writes nested types out, as the catalog returns them', () => {
    expect(typeText('decimal(10,2)')).toBe('decimal(10,2)');
    expect(
      typeText({
        type: 'struct',
        fields: [
          { id: 2, name: 'tags', required: false, type: { type: 'list', 'element-id': 4, element: 'string', 'element-required': false } },
          { id: 3, name: 'attrs', required: false, type: { type: 'map', 'key-id': 5, key: 'string', 'value-id': 6, value: 'long', 'value-required': false } },
        ],
      }),
    ).toBe('struct<tags: list<string>, attrs: map<string, long>>');
  });
});
