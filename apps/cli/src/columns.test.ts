import { describe, expect, it } from 'vitest';
import { parseColumn } from './columns.ts';
import { CliError } from './errors.ts';

function usageMessage(spec: string): string {
  try {
    parseColumn(spec);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).kind).toBe('usage');
    return (error as CliError).message;
  }
  throw new Error(`expected ${spec} to be refused`);
}

describe('parseColumn', () => {
  it('reads name:type, optional by default', () => {
    expect(parseColumn('who:string')).toEqual({ name: 'who', type: 'string', required: false });
  });

  it('reads the :required suffix', () => {
    expect(parseColumn('x:long:required')).toEqual({ name: 'x', type: 'long', required: true });
    expect(parseColumn('x:long:REQUIRED').required).toBe(true);
  });

  it('keeps the comma of decimal(P,S) and normalises its spelling', () => {
    expect(parseColumn('price:decimal(10,2)')).toEqual({ name: 'price', type: 'decimal(10,2)', required: false });
    expect(parseColumn('price:DECIMAL( 38 , 0 ):required')).toEqual({ name: 'price', type: 'decimal(38,0)', required: true });
  });

  it('reads fixed[N]', () => {
    expect(parseColumn('digest:fixed[16]')).toEqual({ name: 'digest', type: 'fixed[16]', required: false });
  });

  it('accepts every primitive type', () => {
    const types = ['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'string', 'uuid', 'binary'];
    for (const type of types) expect(parseColumn(`c:${type}`).type).toBe(type);
  });

  it('refuses unknown types, naming the accepted ones', () => {
    const message = usageMessage('x:lng');
    expect(message).toContain(`--column 'x:lng'`);
    expect(message).toContain('unknown type "lng"');
    expect(message).toContain('decimal(P,S)');
    expect(usageMessage('x:struct')).toContain('unknown type');
    expect(usageMessage('x:timestamp_ns')).toContain('unknown type');
  });

  it('refuses decimals and fixed outside their bounds', () => {
    expect(usageMessage('p:decimal(39,2)')).toContain('precision must be 1 to 38');
    expect(usageMessage('p:decimal(0,0)')).toContain('precision must be 1 to 38');
    expect(usageMessage('p:decimal(4,5)')).toContain('scale must be 0 to the precision');
    expect(usageMessage('p:decimal(10)')).toContain('write decimal(P,S)');
    expect(usageMessage('p:decimal')).toContain('write decimal(P,S)');
    expect(usageMessage('d:fixed[0]')).toContain('fixed length must be at least 1');
    expect(usageMessage('d:fixed(16)')).toContain('write fixed[N]');
  });

  it('refuses malformed specs', () => {
    expect(usageMessage('x')).toContain('write name:type or name:type:required');
    expect(usageMessage(':long')).toContain("bad column name ''");
    expect(usageMessage('1x:long')).toContain("bad column name '1x'");
    expect(usageMessage('x:long:optional')).toContain("unknown suffix 'optional'");
    expect(usageMessage('x:long:required:extra')).toContain('write name:type or name:type:required');
  });
});
