import { describe, expect, it } from 'vitest';
import { IcebergPrimitiveType, parseIcebergPrimitive, PLAIN_PRIMITIVE_TYPES } from './iceberg-types.ts';

describe('Iceberg primitive type strings', () => {
  it('accepts every plain primitive as is', () => {
    for (const type of PLAIN_PRIMITIVE_TYPES) expect(IcebergPrimitiveType.parse(type)).toBe(type);
  });

  it('normalises case and spacing to the canonical form', () => {
    expect(IcebergPrimitiveType.parse(' LONG ')).toBe('long');
    expect(IcebergPrimitiveType.parse('Decimal( 10 , 2 )')).toBe('decimal(10,2)');
    expect(IcebergPrimitiveType.parse('fixed[ 16 ]')).toBe('fixed[16]');
    expect(IcebergPrimitiveType.parse('decimal(38,38)')).toBe('decimal(38,38)');
  });

  it.each([
    ['decimal(0,0)', /precision must be 1 to 38/],
    ['decimal(39,2)', /precision must be 1 to 38/],
    ['decimal(5,6)', /scale must be 0 to the precision/],
    ['decimal', /write decimal\(P,S\)/],
    ['decimal(10)', /write decimal\(P,S\)/],
    ['fixed[0]', /fixed length must be at least 1/],
    ['fixed(16)', /write fixed\[N\]/],
    ['integer', /unknown type "integer"; types: boolean int long/],
    ['struct<a:int>', /unknown type/],
    ['', /unknown type/],
  ])('rejects %s with a reason', (text, reason) => {
    const parsed = parseIcebergPrimitive(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
    const result = IcebergPrimitiveType.safeParse(text);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(reason);
  });
});
