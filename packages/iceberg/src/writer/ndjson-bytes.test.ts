import { type Table, tableToIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { type Schema, schemaFromJson } from '../spec/schema.ts';
import { compileRowConverter, type NdjsonReject } from './row-converter.ts';

/** Every row shape the byte reader takes, and every one it hands to `appendJson`. */
export const SCHEMA: Schema = schemaFromJson({
  type: 'struct',
  'schema-id': 1,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'at', required: false, type: 'timestamptz' },
    { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': true } },
    {
      id: 6,
      name: 'address',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 7, name: 'zip', required: true, type: 'int' },
          { id: 8, name: 'lines', required: false, type: { type: 'list', 'element-id': 9, element: 'string', 'element-required': false } },
        ],
      },
    },
    { id: 10, name: 'attrs', required: false, type: { type: 'map', 'key-id': 11, key: 'string', 'value-id': 12, value: 'double', 'value-required': false } },
    { id: 13, name: 'counts', required: false, type: { type: 'map', 'key-id': 14, key: 'int', 'value-id': 15, value: 'long', 'value-required': true } },
    { id: 16, name: 'amount', required: false, type: 'decimal(38, 9)' },
    { id: 17, name: 'shape', required: false, type: 'geometry(srid:4326)' },
    { id: 18, name: 'uid', required: false, type: 'uuid' },
    { id: 19, name: 'day', required: false, type: 'date' },
    { id: 20, name: 'clock', required: false, type: 'time' },
    { id: 21, name: 'local', required: false, type: 'timestamp' },
    { id: 22, name: 'ok', required: false, type: 'boolean' },
    { id: 23, name: 'ratio', required: false, type: 'float' },
    { id: 24, name: 'score', required: false, type: 'double' },
    { id: 25, name: 'blob', required: false, type: 'binary' },
    { id: 26, name: 'hash', required: false, type: 'fixed[4]' },
    { id: 27, name: 'small', required: false, type: 'int' },
    { id: 28, name: 'ingested', required: false, type: 'timestamptz' },
    { id: 29, name: 'café', required: false, type: 'string' },
  ],
});

/** Lines that are all JSON; many are rejected, several take the general path. */
export const LINES = [
  '{"id": 1, "name": "plain", "at": "2024-05-01T10:00:00Z"}',
  '{"id":2,"name":"caf\\u00e9 \\"quoted\\"","at":"2024-05-01T10:00:00.123456+02:00"}',
  '{"id":3,"name":"café ünïcödé 😀","amount":"12.30","café":"é"}',
  '{"id":9007199254740993,"name":"a long literal"}',
  '{"id":4,"score":1.0000000000000002,"ratio":0.1}',
  '{"id":5,"score":-0,"ratio":3.4028235e38}',
  '{"id":6,"score":1e400}',
  '{"id":7,"small":2147483648}',
  '{"id":8,"small":7.0,"ratio":1e-7}',
  '{"id":9,"tags":["a","b"],"address":{"zip":12345,"lines":["x",null]}}',
  '{"id":10,"attrs":{"k":1.5,"q":null},"counts":[{"key":1,"value":9223372036854775807}]}',
  '{"id":11,"name":"dup","name":"dup2"}',
  '{"id":12,"unknown":1}',
  '{"id":13,"ingested":"2024-01-01T00:00:00Z"}',
  '{"name":"no id"}',
  '{"id":null}',
  '[1,2]',
  '"a string"',
  '{"id":14,"uid":"0123456789ABCDEF0123456789abcdef"}',
  '{"id":15,"uid":"01234567-89AB-cdef-0123-456789abcdef","day":"2024-02-29","clock":"23:59:59.999999","local":"2024-05-01 10:00:00"}',
  '{"id":16,"day":"2023-02-29"}',
  '{"id":17,"shape":null}',
  '{"id":18,"shape":"POINT(1 2)"}',
  '{"id":19,"amount":1234567890123456789.123456789}',
  '{"id":20,"amount":0.1}',
  '{"id":21,"blob":"AAE=","hash":"AAECAw=="}',
  '{"id":22,"ok":true,"ratio":"NaN","score":"-Infinity"}',
  '   {"id" : 23 , "name" : "spaces"\t}   \r',
  '',
  '  \t ',
  '{"id":24,"at":"2024-05-01T10:00:00"}',
  '{"id":-0,"small":-0}',
  '{"id":25,"score":123456789012345678}',
  '{"id":26,"score":0.30000000000000004,"ratio":1.17549435e-38}',
  '{"id":27,"name":""}',
  '{"id":28,"amount":"-0.000000001"}',
  '{"id":29,"amount":1E+2}',
  '{"id":30,"score":2.5e-324}',
  '{"id":31,"score":1.7976931348623157e308}',
  '{"id":32,"small":1e1,"ok":false}',
  '{}',
  '{"id":33,"at":"2024-05-01T10:00:00.1234567Z"}',
  '{"id":34,"at":"2024-05-01T10:00:00.1234560Z","clock":"24:00:00"}',
  '{"id":35,"id":36}',
  '{"id":37,"name":"x","ok":null,"score":null,"at":null}',
  '{"id":38,"tags":["a",null]}',
  '{"id":39,"address":{"zip":1,"zip":2}}',
  '{"id":40,"caf\\u00e9":"escaped key"}',
  '{"id":41,"score":12345678901234567890e-10,"small":-2147483648}',
  '{"id":42,"score":0.000001,"ratio":100000000000000000000000}',
  '{"id":43,"name":12}',
  '{"id":44,"at":1714557600}',
  '{"id":45,"amount":"1e-9"}',
  '{"id":46,"amount":0.0000000001}',
  '{"id":47,"local":"2024-05-01T10:00:00+01:00"}',
  '{"id":48,"day":"2024-13-01","name":"bad month"}',
  '{"id":"49"}',
];

/** The reference: each non-blank line through `appendJson`, as before the byte reader existed. */
export function viaAppendJson(schema: Schema, text: string, injected?: Record<string, unknown>): { table: Table; rejects: NdjsonReject[] } {
  const converter = compileRowConverter(schema, { injected: Object.keys(injected ?? {}) });
  for (const [name, value] of Object.entries(injected ?? {})) converter.setInjected(name, value);
  const rejects: NdjsonReject[] = [];
  text.split('\n').forEach((line, index) => {
    if (/^[ \t\r]*$/.test(line)) return;
    const reject = converter.appendJson(line);
    if (reject !== null) rejects.push({ line: index, text: line, reject });
  });
  return { table: converter.finish(), rejects };
}

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
  expect(JSON.stringify(actual.result)).toBe(JSON.stringify({ ok: true, rows: expected.table.numRows, rejects: expected.rejects }));
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

  it('takes no row of a chunk with a line that is not JSON, and says which line', () => {
    const converter = compileRowConverter(SCHEMA);
    expect(converter.appendNdjson(Buffer.from('{"id":1}\n'))).toEqual({ ok: true, rows: 1, rejects: [] });
    for (const bad of ['{"id":2', '{"id":2,}', '{"id":02}', '{"id":2} x', '{"id":2,"name":"a\tb"}', '{"id":2.}', '{"id":-}', 'nul']) {
      const result = converter.appendNdjson(Buffer.from(`{"id":3}\n\n${bad}\n{"id":4}\n`));
      expect(result).toMatchObject({ ok: false, error: { kind: 'not_json', line: 2 } });
      expect(converter.rowCount).toBe(1);
    }
    expect(converter.appendNdjson(Buffer.from('{"id":5}'))).toEqual({ ok: true, rows: 1, rejects: [] });
    expect(converter.finish().getChild('id')?.toArray()).toEqual(new BigInt64Array([1n, 5n]));
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
