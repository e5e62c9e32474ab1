import { tableToIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { type Schema, schemaFromJson } from '../spec/schema.ts';
import { LINES, SCHEMA, viaAppendJson } from './fixtures/ndjson-corpus.ts';
import { compileRowConverter } from './row-converter.ts';

function viaBytes(schema: Schema, text: string, injected?: Record<string, unknown>) {
  const converter = compileRowConverter(schema, { injected: Object.keys(injected ?? {}) });
  for (const [name, value] of Object.entries(injected ?? {})) converter.setInjected(name, value);
  const result = converter.appendNdjson(Buffer.from(text));
  return { result, table: converter.finish() };
}

function expectSame(text: string): void {
  const injected = { ingested: '2024-01-01T00:00:00Z' };
  const expected = viaAppendJson(SCHEMA, text, injected);
  const actual = viaBytes(SCHEMA, text, injected);
  // Compared as JSON: deep equality of thousands of rejects is slow in the matcher.
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  expect(JSON.stringify(actual.result)).toBe(JSON.stringify({ ok: true, rows: expected.table.numRows, lines, rejects: expected.rejects }));
  expect(Buffer.from(tableToIPC(actual.table)).equals(Buffer.from(tableToIPC(expected.table)))).toBe(true);
}

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random JSON number literal: up to 22 digits, maybe a fraction, maybe an exponent. */
function numberLiteral(next: () => number): string {
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 10)).join('');
  const whole = next() < 0.3 ? '0' : `${1 + Math.floor(next() * 9)}${digits(Math.floor(next() * 18))}`;
  const fraction = next() < 0.5 ? `.${digits(1 + Math.floor(next() * 20))}` : '';
  const exponent = next() < 0.3 ? `${next() < 0.5 ? 'e' : 'E'}${['', '+', '-'][Math.floor(next() * 3)]}${Math.floor(next() * 40)}` : '';
  return `${next() < 0.3 ? '-' : ''}${whole}${fraction}${exponent}`;
}

describe('appendNdjson', () => {
  it('stores and rejects exactly what appendJson does, line by line', () => {
    expectSame(LINES.join('\n'));
    expectSame(`${LINES.join('\r\n')}\n`);
  });

  it('gives every JSON number the double JSON.parse gives, and the exact path to long literals', () => {
    const next = random(11);
    const lines: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const column = ['id', 'small', 'score', 'ratio', 'amount'][i % 5];
      lines.push(`{"id":${i},"${column}":${numberLiteral(next)}}`.replace(`{"id":${i},"id":`, '{"id":'));
    }
    expectSame(lines.join('\n'));
  });

  it('takes integers at the edges of int and long, and floats at the edge of float, as appendJson does', () => {
    const literals = ['2147483647', '-2147483648', '2147483648', '-2147483649', '999999999999999', '-999999999999999', '1000000000000000', '9007199254740993', '-0', '0', '7e0', '7.0', '1E2'];
    const floats = ['3.4028234e38', '3.4028236e38', '-3.5e38', '1e-46', '1e308', '1e309', '-1e309'];
    const lines = literals.flatMap((n, i) => [`{"id":${i},"small":${n}}`, `{"id":${n}}`]);
    lines.push(...floats.flatMap((n, i) => [`{"id":${i},"ratio":${n}}`, `{"id":${i},"score":${n}}`]));
    expectSame(lines.join('\n'));
  });

  it('takes no row of a chunk with a line that is not JSON, and says which line', () => {
    const converter = compileRowConverter(SCHEMA);
    expect(converter.appendNdjson(Buffer.from('{"id":1}\n'))).toEqual({ ok: true, rows: 1, lines: 1, rejects: [] });
    // The last ones are rows cut over two lines: each line is read on its own.
    const cut = ['{"id":2,\n"name":"a"}', '{"id":2,"name":"a\n"}', '{"id":2,"tags":[\n"a"]}', '{"id":2,"tags":["\n"]}', '{"id":2\n}'];
    for (const bad of ['{"id":2', '{"id":2,}', '{"id":02}', '{"id":2} x', '{"id":2,"name":"a\tb"}', '{"id":2.}', '{"id":-}', 'nul', ...cut]) {
      const result = converter.appendNdjson(Buffer.from(`{"id":3}\n\n${bad}\n{"id":4}\n`));
      expect(result).toMatchObject({ ok: false, error: { kind: 'not_json', line: 2 } });
      expect(converter.rowCount).toBe(1);
    }
    // At the chunk's end too, where no next line stops a reader that reads on.
    for (const bad of cut) expect(converter.appendNdjson(Buffer.from(`{"id":3}\n${bad}`))).toMatchObject({ ok: false, error: { kind: 'not_json', line: 1 } });
    expect(converter.appendNdjson(Buffer.from('{"id":5}'))).toEqual({ ok: true, rows: 1, lines: 1, rejects: [] });
    expect(converter.finish().getChild('id')?.toArray()).toEqual(new BigInt64Array([1n, 5n]));
  });

  it('matches a field name that needs escapes only as JSON spells it', () => {
    const schema = schemaFromJson({ type: 'struct', fields: [{ id: 1, name: 'a"b', required: false, type: 'long' }] });
    const converter = compileRowConverter(schema);
    expect(converter.appendNdjson(Buffer.from('{"a"b":1}\n'))).toMatchObject({ ok: false, error: { kind: 'not_json', line: 0 } });
    expect(converter.appendNdjson(Buffer.from('{"a\\"b":2}\n'))).toEqual({ ok: true, rows: 1, lines: 1, rejects: [] });
    expect(converter.finish().getChildAt(0)?.toArray()).toEqual(new BigInt64Array([2n]));
  });

  it('takes no row of a chunk that is not UTF-8, and says which line', () => {
    const converter = compileRowConverter(SCHEMA);
    const bytes = Buffer.concat([Buffer.from('{"id":1}\n{"id":2,"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    expect(converter.appendNdjson(bytes)).toEqual({ ok: false, error: { kind: 'not_utf8', line: 1, message: 'line 2 is not UTF-8 text' } });
    expect(converter.rowCount).toBe(0);
  });

  it('keeps columns aligned across nulls and absent fields', () => {
    const rows = '{"id":1,"name":null,"score":null}\n{"id":2,"name":"b","score":2.5}\n{"id":3}\n{"id":4,"name":"d","score":-1}\n';
    for (const table of [viaBytes(SCHEMA, rows).table, viaAppendJson(SCHEMA, rows).table]) {
      expect(table.getChild('name')?.toArray()).toEqual([null, 'b', null, 'd']);
      expect([...(table.getChild('score') ?? [])]).toEqual([null, 2.5, null, -1]);
    }
  });

  it('fills injected columns with the values set for the chunk', () => {
    const converter = compileRowConverter(SCHEMA, { injected: ['ingested'] });
    expect(() => converter.appendNdjson(Buffer.from('{"id":1}'))).toThrow(TypeError);
    converter.setInjected('ingested', '2024-01-01T00:00:00Z');
    converter.appendNdjson(Buffer.from('{"id":1}\n'));
    converter.setInjected('ingested', '2024-01-02T00:00:00Z');
    converter.appendNdjson(Buffer.from('{"id":2}\n'));
    expect(converter.finish().getChild('ingested')?.toArray()).toEqual(new BigInt64Array([1704067200000000n, 1704153600000000n]));
  });
});
