import { type Field, type Table, Type } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { type Schema, schemaFromJson } from '../spec/schema.ts';
import { parseJsonRow } from './json-row.ts';
import { compileRowConverter, type RowReject } from './row-converter.ts';

const SCHEMA: Schema = schemaFromJson({
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
  ],
});

function converter() {
  const c = compileRowConverter(SCHEMA, { injected: ['ingested'] });
  c.setInjected('ingested', '2024-01-01T00:00:00Z');
  return c;
}

function json(table: Table): unknown[] {
  return JSON.parse(JSON.stringify(table.toArray().map((row) => row.toJSON()), (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

function reject(row: string): RowReject | null {
  return converter().append(parseJsonRow(row));
}

describe('compileRowConverter: Arrow schema', () => {
  const schema = compileRowConverter(SCHEMA).arrowSchema;
  // A map's entries struct is Arrow plumbing, not an Iceberg field: it has no id.
  const visit = (field: Field, seen: Field[], entries = false): void => {
    if (!entries) seen.push(field);
    for (const child of field.type.children ?? []) visit(child, seen, field.type.typeId === Type.Map);
  };
  const all: Field[] = [];
  for (const field of schema.fields) visit(field, all);

  it('puts a field id on every field, nested ones included', () => {
    const ids = all.map((f) => Number(f.metadata.get('PARQUET:field_id')));
    expect(ids.sort((a, b) => a - b)).toEqual([...Array.from({ length: 16 }, (_, i) => i + 1), ...Array.from({ length: 11 }, (_, i) => i + 18)]);
  });

  it('leaves unsupported columns out and maps nullability from required', () => {
    expect(schema.fields.map((f) => f.name)).not.toContain('shape');
    expect(schema.fields.find((f) => f.name === 'id')?.nullable).toBe(false);
    expect(schema.fields.find((f) => f.name === 'name')?.nullable).toBe(true);
    const tags = schema.fields.find((f) => f.name === 'tags');
    expect(tags?.type.children[0]?.nullable).toBe(false);
  });

  it('uses the Arrow types engines read', () => {
    const type = (name: string) => schema.fields.find((f) => f.name === name)?.type;
    expect(String(type('name'))).toBe('Utf8');
    expect(type('name')?.typeId).toBe(Type.Utf8);
    expect(String(type('at'))).toBe('Timestamp<MICROSECOND, UTC>');
    expect(String(type('local'))).toBe('Timestamp<MICROSECOND>');
    expect(String(type('clock'))).toBe('Time64<MICROSECOND>');
    expect(String(type('day'))).toBe('Date32<DAY>');
    expect(String(type('uid'))).toBe('FixedSizeBinary[16]');
    expect(String(type('hash'))).toBe('FixedSizeBinary[4]');
    expect(String(type('blob'))).toBe('Binary');
    expect(type('amount')).toMatchObject({ scale: 9, precision: 38, bitWidth: 128 });
  });
});

describe('compileRowConverter: values', () => {
  it('converts a full row exactly', () => {
    const c = converter();
    const row =
      '{"id": 9223372036854775807, "name": "zoë", "at": "2024-05-01T12:00:00.123456+02:00", "tags": ["a"],' +
      ' "address": {"zip": 12345, "lines": ["x", null]}, "attrs": {"k": 1.5}, "counts": [{"key": 1, "value": 9007199254740993}],' +
      ' "amount": "12345678901234567890.123456789", "shape": null, "uid": "00112233-4455-6677-8899-aabbccddeeff",' +
      ' "day": "2024-02-29", "clock": "23:59:59.999999", "local": "2024-05-01T10:00:00", "ok": true, "ratio": 0.5,' +
      ' "score": "NaN", "blob": "AAEC", "hash": "3q2+7w==", "small": -7}';
    expect(c.append(parseJsonRow(row))).toBeNull();
    expect(c.rowCount).toBe(1);
    const table = c.finish();
    expect(c.rowCount).toBe(0);
    const [r] = table.toArray();
    expect(r.id).toBe(9223372036854775807n);
    expect(r.name).toBe('zoë');
    expect(table.getChild('at')?.data[0]?.values[0]).toBe(1714557600123456n);
    expect(table.getChild('local')?.data[0]?.values[0]).toBe(1714557600000000n);
    expect(table.getChild('clock')?.data[0]?.values[0]).toBe(86399999999n);
    expect(table.getChild('ingested')?.data[0]?.values[0]).toBe(1704067200000000n);
    expect(r.day).toBe(Date.UTC(2024, 1, 29));
    expect([...r.tags]).toEqual(['a']);
    expect(r.address.zip).toBe(12345);
    expect([...r.address.lines]).toEqual(['x', null]);
    expect(r.attrs.toJSON()).toEqual({ k: 1.5 });
    expect(r.counts.toJSON()).toEqual({ 1: 9007199254740993n });
    expect([...r.uid]).toEqual([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
    expect([...r.blob]).toEqual([0, 1, 2]);
    expect([...r.hash]).toEqual([0xde, 0xad, 0xbe, 0xef]);
    expect(r.ok).toBe(true);
    expect(r.ratio).toBe(0.5);
    expect(r.score).toBeNaN();
    expect(r.small).toBe(-7);
    const words = table.getChild('amount')?.data[0]?.values as Uint32Array;
    const unscaled = BigInt.asIntN(128, [...words.subarray(0, 4)].reduceRight((acc, w) => (acc << 32n) | BigInt(w), 0n));
    expect(unscaled).toBe(12345678901234567890123456789n);
  });

  it('gives null to missing optional fields', () => {
    const c = converter();
    expect(c.append({ id: 1 })).toBeNull();
    const [row] = json(c.finish()) as Array<Record<string, unknown>>;
    expect(row).toMatchObject({ id: '1', name: null, tags: null, address: null, attrs: null, ingested: 1704067200000 });
  });
});

describe('compileRowConverter: rejects', () => {
  it('names each reason with the field path', () => {
    expect(reject('[1, 2]')).toMatchObject({ reason: 'not_an_object', field: '', got: 'an array' });
    expect(reject('"x"')).toMatchObject({ reason: 'not_an_object' });
    expect(reject('{"name": "x"}')).toMatchObject({ reason: 'missing_required', field: 'id', message: 'id is required but missing' });
    expect(reject('{"id": null}')).toMatchObject({ reason: 'missing_required', field: 'id', got: 'null' });
    expect(reject('{"id": 1, "nope": 1}')).toMatchObject({ reason: 'unknown_field', field: 'nope' });
    expect(reject('{"id": 1, "address": {"zip": 1, "nope": 2}}')).toMatchObject({ reason: 'unknown_field', field: 'address.nope' });
    expect(reject('{"id": 1.5}')).toMatchObject({ reason: 'type_mismatch', field: 'id', got: '1.5' });
    expect(reject('{"id": "1"}')?.expected).toMatch(/^long/);
    expect(reject('{"id": 1, "address": {"zip": "x"}}')).toMatchObject({ reason: 'type_mismatch', field: 'address.zip' });
    expect(reject('{"id": 1, "address": {}}')).toMatchObject({ reason: 'missing_required', field: 'address.zip' });
    expect(reject('{"id": 1, "tags": ["a", "b", 3]}')).toMatchObject({ reason: 'type_mismatch', field: 'tags[2]' });
    expect(reject('{"id": 1, "tags": ["a", null]}')).toMatchObject({ reason: 'missing_required', field: 'tags[1]' });
    expect(reject('{"id": 1, "address": {"zip": 1, "lines": [1]}}')).toMatchObject({ reason: 'type_mismatch', field: 'address.lines[0]' });
    expect(reject('{"id": 1, "attrs": {"color": "red"}}')).toMatchObject({ reason: 'type_mismatch', field: 'attrs.color' });
    expect(reject('{"id": 1, "counts": {"1": 2}}')).toMatchObject({ reason: 'type_mismatch', field: 'counts' });
    expect(reject('{"id": 1, "counts": [{"key": "x", "value": 1}]}')).toMatchObject({ reason: 'type_mismatch', field: 'counts[0].key' });
    expect(reject('{"id": 1, "counts": [{"key": 1, "value": null}]}')).toMatchObject({ reason: 'missing_required', field: 'counts[0].value' });
    expect(reject('{"id": 1, "counts": [{"key": 1, "value": 1}, {"key": 1, "value": 2}]}')).toMatchObject({ reason: 'type_mismatch', field: 'counts[1].key' });
    expect(reject('{"id": 1, "counts": [{"key": 1, "value": 1, "x": 0}]}')).toMatchObject({ reason: 'unknown_field', field: 'counts[0].x' });
    expect(reject('{"id": 1, "shape": "POINT (1 2)"}')).toMatchObject({ reason: 'unsupported_type', field: 'shape' });
    expect(reject('{"id": 1, "shape": null}')).toBeNull();
    expect(reject('{"id": 1, "amount": 1.0000000001}')).toMatchObject({ reason: 'type_mismatch', field: 'amount' });
    expect(reject('{"id": 1, "hash": "AAE="}')).toMatchObject({ reason: 'type_mismatch', field: 'hash' });
    expect(reject('{"id": 1, "name": "\\ud800"}')).toMatchObject({ reason: 'type_mismatch', field: 'name' });
  });

  it('passes over a null under an unknown key when told to (unknownNulls: skip), at any depth, and nothing else', () => {
    const c = compileRowConverter(SCHEMA, { injected: ['ingested'], unknownNulls: 'skip' });
    c.setInjected('ingested', '2024-01-01T00:00:00Z');
    expect(c.appendJson('{"id": 1, "nope": null, "address": {"zip": 1, "also": null}}')).toBeNull();
    expect(c.appendJson('{"id": 2, "nope": 0}')).toMatchObject({ reason: 'unknown_field', field: 'nope' });
    expect(c.appendJson('{"id": 3, "ingested": null}')).toMatchObject({ reason: 'unknown_field', field: 'ingested' });
    expect(c.appendNdjson(Buffer.from('{"id": 4, "nope": null}\n{"id": 5, "nope": []}\n'))).toMatchObject({ ok: true, rows: 1, rejects: [{ line: 1 }] });
    expect(json(c.finish()).map((row) => (row as { id: unknown }).id)).toEqual(['1', '4']);
    expect(reject('{"id": 1, "nope": null}')).toMatchObject({ reason: 'unknown_field', field: 'nope' });
  });

  it('rejects rows that carry an injected column, saying the writer sets it', () => {
    const r = reject('{"id": 1, "ingested": "2024-01-01T00:00:00Z"}');
    expect(r).toMatchObject({ reason: 'unknown_field', field: 'ingested' });
    expect(r?.message).toMatch(/set by the writer/);
  });

  it('leaves nothing of a rejected row behind, at any depth', () => {
    const c = converter();
    const rows = [
      '{"id": 1, "name": "a", "tags": ["x"], "address": {"zip": 1, "lines": ["l1"]}, "attrs": {"k": 1}}',
      '{"name": "b", "tags": ["y", "z"], "address": {"zip": 2, "lines": ["l2", "l3"]}, "attrs": {"k": 2}, "id": "bad"}',
      '{"id": 3, "name": "c", "tags": ["w", "v"], "address": {"zip": 3, "lines": ["l4", 5]}}',
      '{"id": 4, "name": "d", "attrs": {"a": 1, "b": "x"}, "counts": [{"key": 1, "value": 1}]}',
      '{"id": 5, "tags": [], "address": {"zip": 5, "lines": null}, "attrs": {}}',
    ];
    const outcomes = rows.map((row) => c.append(parseJsonRow(row))?.reason ?? 'ok');
    expect(outcomes).toEqual(['ok', 'type_mismatch', 'type_mismatch', 'type_mismatch', 'ok']);
    expect(json(c.finish())).toMatchObject([
      { id: '1', name: 'a', tags: ['x'], address: { zip: 1, lines: ['l1'] }, attrs: { k: 1 }, counts: null },
      { id: '5', name: null, tags: [], address: { zip: 5, lines: null }, attrs: {}, counts: null },
    ]);
  });

  it('refuses to run with an injected column unset, and checks injected values', () => {
    const c = compileRowConverter(SCHEMA, { injected: ['ingested'] });
    expect(() => c.append({ id: 1 })).toThrow(/ingested/);
    expect(() => c.setInjected('ingested', 'yesterday')).toThrow(/timestamptz/);
    expect(() => c.setInjected('name', 'x')).toThrow(/not an injected column/);
    expect(() => compileRowConverter(SCHEMA, { injected: ['nope'] })).toThrow(/not a top-level field/);
  });

  it('drops the rows after a given count on truncate', () => {
    const c = converter();
    for (let id = 1; id <= 5; id++) c.append({ id, tags: [String(id)], attrs: { k: id } });
    c.truncate(2);
    expect(c.rowCount).toBe(2);
    c.append({ id: 6, tags: ['6'] });
    expect((json(c.finish()) as Array<{ id: string; tags: string[] }>).map((r) => [r.id, r.tags])).toEqual([['1', ['1']], ['2', ['2']], ['6', ['6']]]);
    expect(() => c.truncate(1)).toThrow(RangeError);
  });

  it('changes the injected value between batches', () => {
    const c = converter();
    c.append({ id: 1 });
    c.setInjected('ingested', '2024-01-02T00:00:00Z');
    c.append({ id: 2 });
    expect((json(c.finish()) as Array<{ ingested: number }>).map((r) => r.ingested)).toEqual([1704067200000, 1704153600000]);
  });
});

describe('compileRowConverter: appendJson', () => {
  const exactSchema = schemaFromJson({
    type: 'struct',
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'lat', required: false, type: 'double' },
      { id: 3, name: 'amount', required: false, type: 'decimal(38, 20)' },
      { id: 4, name: 'n', required: false, type: 'int' },
    ],
  });

  const take = (text: string) => {
    const c = compileRowConverter(exactSchema);
    const reject = c.appendJson(text);
    return { reject, rows: reject === null ? (json(c.finish()) as Array<Record<string, unknown>>) : [] };
  };

  it('takes long literals exactly, whichever column they are in', () => {
    expect(take('{"id": 8333333333333333333, "lat": 52.84173604397888}').rows[0]).toMatchObject({ id: '8333333333333333333', lat: 52.84173604397888 });
    expect(take('{"id": 9007199254740993}').rows[0]?.id).toBe('9007199254740993');
    expect(take('{"id": -1e18}').rows[0]?.id).toBe('-1000000000000000000');
    const c = compileRowConverter(exactSchema);
    expect(c.appendJson('{"id": 1, "amount": 0.12345678901234567891}')).toBeNull();
    const words = c.finish().getChild('amount')?.data[0]?.values as Uint32Array;
    expect([...words.subarray(0, 4)].reduceRight((acc, w) => (acc << 32n) | BigInt(w), 0n)).toBe(12345678901234567891n);
  });

  it('rejects what rounding would have hidden', () => {
    expect(take('{"id": 5.0000000000000001}').reject).toMatchObject({ reason: 'type_mismatch', field: 'id', got: '5.0000000000000001' });
    expect(take('{"id": 9223372036854775808}').reject).toMatchObject({ reason: 'type_mismatch', field: 'id' });
    expect(take('{"id": 1, "n": 2147483647.00000000001}').reject).toMatchObject({ reason: 'type_mismatch', field: 'n' });
    expect(take('{"id": 1, "amount": 1.000000000000000000001}').reject).toMatchObject({ reason: 'type_mismatch', field: 'amount' });
  });

  it('keeps columns aligned when it re-parses a row', () => {
    const c = compileRowConverter(exactSchema);
    expect(c.appendJson('{"id": 1, "lat": 1.5}')).toBeNull();
    expect(c.appendJson('{"lat": 2.5, "id": 12345678901234567, "amount": "1"}')).toBeNull();
    expect(c.appendJson('{"lat": 3.5, "id": 1.0000000000000001}')?.reason).toBe('type_mismatch');
    expect(json(c.finish())).toMatchObject([
      { id: '1', lat: 1.5, amount: null },
      { id: '12345678901234567', lat: 2.5 },
    ]);
  });

  it('throws SyntaxError on text that is not JSON', () => {
    expect(() => compileRowConverter(exactSchema).appendJson('{"id": ')).toThrow(SyntaxError);
  });
});
