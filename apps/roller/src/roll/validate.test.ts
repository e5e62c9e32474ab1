import type { SchemaJson } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import type { IntakeBatch } from './read-batches.ts';
import { validateBatches } from './validate.ts';

const schema = (withStamp: boolean): SchemaJson => ({
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'x', required: true, type: 'long' },
    { id: 2, name: 'who', required: false, type: 'string' },
    ...(withStamp ? [{ id: 3, name: '__ingest_ts', required: false, type: 'timestamptz' }] : []),
  ],
});

const batch = (id: string, text: string | Buffer, received = '2026-09-21T12:00:00.123456Z'): IntakeBatch => {
  const body = typeof text === 'string' ? Buffer.from(text) : text;
  return { id, key: `_sink/snk_0123456789ab/${id}.ndjson`, size: body.length, received, body };
};

const parse = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('validateBatches', () => {
  it('takes fitting rows, stamps each batch with its received time, and rejects the rest row by row', () => {
    const result = validateBatches(schema(true), [
      batch('b1', '{"x": 1, "who": "north"}\n{"x": "two"}\n{"who": "nobody"}\n', '2026-09-21T12:00:00.000001Z'),
      batch('b2', '{"x": 9007199254740993}\r\n[1]\n{"x": 3, "extra": true}\n{"x": 4, "__ingest_ts": "2020-01-01T00:00:00Z"}', '2026-09-21T12:00:01.5Z'),
    ]);
    expect(result.schemaId).toBe(3);
    expect(result.rows).toBe(2);
    expect(result.rejected).toBe(5);
    expect(result.batches.map((b) => [b.id, b.rows, b.rejected])).toEqual([
      ['b1', 1, 2],
      ['b2', 1, 3],
    ]);
    const table = result.table!;
    expect(table.numRows).toBe(2);
    expect(table.getChild('x')!.toArray()).toEqual(new BigInt64Array([1n, 9007199254740993n]));
    // Microseconds since the epoch, exactly as received.
    const micros = BigInt(Date.parse('2026-09-21T12:00:00Z')) * 1000n;
    expect([...table.getChild('__ingest_ts')!.toArray()]).toEqual([micros + 1n, micros + 1_500_000n]);

    const b1 = parse(result.batches[0]!.rejectLines);
    expect(b1.map((r) => [r.reason, r.field])).toEqual([
      ['type_mismatch', 'x'],
      ['missing_required', 'x'],
    ]);
    expect(b1[0]).toMatchObject({ batch_id: 'b1', row: { x: 'two' }, expected: expect.any(String), got: '"two"', message: expect.any(String) });
    const b2 = parse(result.batches[1]!.rejectLines);
    expect(b2.map((r) => [r.reason, r.field])).toEqual([
      ['not_an_object', ''],
      ['unknown_field', 'extra'],
      ['unknown_field', '__ingest_ts'],
    ]);
    expect(result.batches[1]!.reasons).toEqual({ not_an_object: 1, unknown_field: 2 });
  });

  it('keeps the original row bytes in the rejects line', () => {
    const original = '{"x":   12345678901234567890123, "who":"\\u00e9t\\u00e9"}';
    const result = validateBatches(schema(false), [batch('b', original)]);
    const line = result.batches[0]!.rejectLines[0]!;
    expect(line).toContain(`"row":${original},`);
  });

  it('rejects a batch that does not parse whole, keeping the rows of the other batches', () => {
    const result = validateBatches(schema(true), [
      batch('good1', '{"x": 1}\n{"x": 2}'),
      batch('broken', '{"x": 3}\n{"x": 4\n{"x": 5}'),
      batch('good2', '{"x": 6}'),
    ]);
    expect(result.batches.map((b) => [b.id, b.rows, b.rejected])).toEqual([
      ['good1', 2, 0],
      ['broken', 0, 3],
      ['good2', 1, 0],
    ]);
    expect(result.table!.getChild('x')!.toArray()).toEqual(new BigInt64Array([1n, 2n, 6n]));
    const rejects = parse(result.batches[1]!.rejectLines);
    expect(rejects.map((r) => r.row)).toEqual(['{"x": 3}', '{"x": 4', '{"x": 5}']);
    expect(rejects.every((r) => r.reason === 'batch_unreadable' && r.batch_id === 'broken')).toBe(true);
    expect(String(rejects[0]!.message)).toContain('line 2');
  });

  it('rejects bytes that are not UTF-8 as one base64 line', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const result = validateBatches(schema(false), [batch('bin', bytes)]);
    expect(result.table).toBeUndefined();
    const [reject] = parse(result.batches[0]!.rejectLines);
    expect(reject).toMatchObject({ reason: 'batch_unreadable', row: null, row_base64: bytes.toString('base64') });
  });

  it('has no table when every row is rejected', () => {
    const result = validateBatches(schema(false), [batch('b', '{"who": "a"}\n{"who": "b"}')]);
    expect(result.table).toBeUndefined();
    expect(result.rows).toBe(0);
    expect(result.rejected).toBe(2);
  });
});
