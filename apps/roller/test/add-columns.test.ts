import type { CreatedSink } from '@tablemere/contracts';
import { currentSchema, type SchemaJson } from '@tablemere/iceberg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultyProxy } from '../../../packages/iceberg/test/faulty-proxy.ts';
import { stackEnv } from '../../../tests/support/stack.ts';
import { createSink, getSink, send } from './support/api.ts';
import { expireLease, intakeBatches, readBoth, rejectsOf } from './support/expect.ts';
import { ownerAddsColumn, pyicebergSnapshots, spark } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startProxiedStack } from './support/proxied-stack.ts';
import { suffix, type TestStack } from './support/stack.ts';

/**
 * A sink with `unknown_fields: add_columns`: the roll adds the new fields of its rows as
 * optional columns with fresh ids in one schema commit before its append, and PyIceberg, DuckDB
 * and Spark read them. The catalog is reached through a proxy that lets the owner change the
 * schema right before the roll's schema commit.
 */
let stack: TestStack;
let proxy: FaultyProxy;
const namespaces: string[] = [];

beforeAll(async () => {
  ({ stack, proxy } = await startProxiedStack(stackEnv()));
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
  await proxy?.close();
});

const TABLE = 'readings';

/** A table with a struct and a list of structs, made through the catalog (the API creates flat tables only). */
async function table(): Promise<string> {
  const ns = `addcol_${suffix()}`;
  namespaces.push(ns);
  await stack.catalog.ensureNamespace(ns);
  await stack.catalog.createTable(ns, TABLE, {
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'x', required: true, type: 'long' },
        { id: 2, name: 'device', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'model', required: false, type: 'string' }] } },
        {
          id: 3,
          name: 'samples',
          required: false,
          type: { type: 'list', 'element-id': 5, 'element-required': false, element: { type: 'struct', fields: [{ id: 6, name: 'v', required: false, type: 'double' }] } },
        },
      ],
    },
    properties: { 'format-version': '2' },
  });
  return ns;
}

/**
 * A row as producers send it, with `samples: []` unless it has samples: PyIceberg 0.12 reads a
 * null list of structs as [] (its projection rebuilds the list without its validity), DuckDB
 * and Spark as null, so a null there would fail the readers' agreement, not the roll.
 */
const r = (row: Record<string, unknown>) => ({ samples: [], ...row });

async function sinkOn(ns: string, mode: 'reject' | 'add_columns' = 'add_columns'): Promise<CreatedSink> {
  return createSink(stack, `addcol_${suffix()}`, `${ns}.${TABLE}`, { unknown_fields: mode });
}

async function roll(sinkId: string, env: Record<string, string> = {}) {
  const run = await runCli(['roll', sinkId], stack.rollerEnv(env));
  return { run, summary: summaries(run)[0]! };
}

async function schemaOf(ns: string): Promise<{ schema: SchemaJson; lastColumnId: number; schemas: number }> {
  const { metadata } = await stack.catalog.loadTable({ namespace: ns, name: TABLE });
  return { schema: currentSchema(metadata), lastColumnId: metadata['last-column-id'], schemas: metadata.schemas.length };
}

/** The schema's fields as `path id type`, nested ones by their dotted path: ids are what readers match columns by. */
function fieldIds(schema: SchemaJson): string[] {
  const out: string[] = [];
  const visit = (fields: ReadonlyArray<Record<string, unknown>>, path: string) => {
    for (const f of fields) {
      const name = `${path}${f.name as string}`;
      let type = f.type as Record<string, unknown> | string;
      while (typeof type === 'object' && type.type === 'list') type = type.element as Record<string, unknown> | string;
      out.push(`${name} ${f.id as number} ${typeof type === 'string' ? type : (type.type as string)}`);
      if (typeof type === 'object' && type.type === 'struct') visit(type.fields as Array<Record<string, unknown>>, `${name}.`);
    }
  };
  visit(schema.fields, '');
  return out;
}

describe('a sink adding columns for new fields', () => {
  it('adds new top-level and nested fields as optional columns with fresh ids in one schema commit, read by PyIceberg, DuckDB and Spark; a row not fitting them is rejected', async () => {
    const ns = await table();
    const sink = await sinkOn(ns);
    expect(sink.unknown_fields).toBe('add_columns');
    expect((await getSink(stack, sink.id)).unknown_fields).toBe('add_columns');
    await send(stack, sink, 'b-1', [
      r({ x: 1, battery_mv: 3700, device: { model: 'a', fw: '2.1' } }),
      // battery_mv is a long by the first row: "low" does not fit the column this roll added.
      r({ x: 2, battery_mv: 'low' }),
      { x: 3, gps: { lat: 52.5, lon: 13.25, fix: null }, samples: [{ v: 1.5, unit: 'C' }, { v: 2 }] },
      // A null carries no data: taken, and no column for it.
      r({ x: 4, battery_mv: 3650.5, gone: null }),
    ]);
    await send(stack, sink, 'b-2', [
      // [] gives no type: rejected unknown_field, as null-only fields stay unknown.
      r({ x: 5, empty: [] }),
      r({ x: 6, at: '2026-12-02T10:00:00.5Z', ok: true, tags: ['a', 'b'] }),
    ]);
    const before = await schemaOf(ns);

    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stderr).toBe(0);
    expect(summary).toMatchObject({ outcome: 'committed', batches: 2, rows: 4, rejected_rows: 2, reasons: { type_mismatch: 1, unknown_field: 1 } });

    // One schema for the first roll's __ingest_ts, one for every new field; nothing existing changed.
    const after = await schemaOf(ns);
    expect(after.schemas).toBe(before.schemas + 2);
    const ingest = before.lastColumnId + 1;
    // Ids in the order the rows first carry the fields, a new struct's fields right after it
    // (as Iceberg's Java UpdateSchema assigns them); tags' element takes the last.
    const existing = fieldIds(before.schema);
    expect(fieldIds(after.schema).filter((f) => existing.includes(f))).toEqual(existing);
    expect(fieldIds(after.schema).filter((f) => !existing.includes(f))).toEqual([
      `device.fw ${ingest + 2} string`,
      `samples.unit ${ingest + 6} string`,
      `__ingest_ts ${ingest} timestamptz`,
      // battery_mv: 3700 and 3650.5 make a double; "low" is left out as the later, other kind.
      `battery_mv ${ingest + 1} double`,
      `gps ${ingest + 3} struct`,
      `gps.lat ${ingest + 4} double`,
      `gps.lon ${ingest + 5} double`,
      `at ${ingest + 7} timestamptz`,
      `ok ${ingest + 8} boolean`,
      `tags ${ingest + 9} string`,
    ]);
    expect(after.lastColumnId).toBe(ingest + 10);
    expect(after.schema.fields.every((f) => !f.required || f.name === 'x')).toBe(true);

    const rows = await readBoth(stack, ns, TABLE);
    const plain = rows.map(({ __ingest_ts, ...rest }) => rest);
    expect(plain).toEqual([
      { x: 1, device: { model: 'a', fw: '2.1' }, samples: [], battery_mv: 3700, gps: null, at: null, ok: null, tags: null },
      { x: 3, device: null, samples: [{ v: 1.5, unit: 'C' }, { v: 2, unit: null }], battery_mv: null, gps: { lat: 52.5, lon: 13.25 }, at: null, ok: null, tags: null },
      { x: 4, device: null, samples: [], battery_mv: 3650.5, gps: null, at: null, ok: null, tags: null },
      { x: 6, device: null, samples: [], battery_mv: null, gps: null, at: '2026-12-02T10:00:00.500000Z', ok: true, tags: ['a', 'b'] },
    ]);

    const rejects = [...(await rejectsOf(stack, sink.id, 'b-1')), ...(await rejectsOf(stack, sink.id, 'b-2'))];
    expect(rejects).toEqual([
      expect.objectContaining({ row: r({ x: 2, battery_mv: 'low' }), reason: 'type_mismatch', field: 'battery_mv', message: expect.stringContaining('this roll added battery_mv as double') }),
      expect.objectContaining({ row: r({ x: 5, empty: [] }), reason: 'unknown_field', field: 'empty', message: expect.stringContaining('add_columns adds a field once') }),
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    const [head] = await pyicebergSnapshots(ns, TABLE);
    expect(head!.summary).toMatchObject({ operation: 'append', 'tablemere.sink.rows': '4', 'tablemere.sink.rejected_rows': '2' });

    // Spark, through Iceberg's Java runtime, reads the same rows with the columns' types.
    const [types, read] = await spark((['types', 'rows'] as const).map((mode) => ({ mode, namespace: ns, table: TABLE })));
    const sparkType = (name: string) => types!.spark!.fields.find((f) => f.name === name)?.type;
    expect(sparkType('battery_mv')).toBe('double');
    expect(sparkType('at')).toBe('timestamp');
    expect(sparkType('gps')).toEqual({
      type: 'struct',
      fields: [
        { name: 'lat', type: 'double', nullable: true, metadata: {} },
        { name: 'lon', type: 'double', nullable: true, metadata: {} },
      ],
    });
    const byX = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.x) - Number(b.x);
    expect([...read!.rows!].sort(byX)).toEqual(rows);
  });

  it('killed after its schema commit, the next roll adds no column twice and takes every row once', async () => {
    const ns = await table();
    const sink = await sinkOn(ns);
    await send(stack, sink, 'b-1', [r({ x: 1, battery_mv: 3700 }), r({ x: 2, device: { fw: '2.1' } })]);
    const crashed = await roll(sink.id, { TABLEMERE_ROLLER_CRASH_AT: 'after-schema-commit' });
    expect(crashed.run.signal, crashed.run.stderr).toBe('SIGKILL');
    const added = await schemaOf(ns);
    expect(fieldIds(added.schema).filter((f) => /battery_mv|fw/.test(f))).toHaveLength(2);
    expect(await intakeBatches(stack, sink.id)).toEqual(['b-1']);

    await expireLease(stack, sink.id);
    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stderr).toBe(0);
    expect(summary).toMatchObject({ outcome: 'committed', rows: 2, rejected_rows: 0 });
    const after = await schemaOf(ns);
    expect({ schemas: after.schemas, lastColumnId: after.lastColumnId }).toEqual({ schemas: added.schemas, lastColumnId: added.lastColumnId });
    expect((await readBoth(stack, ns, TABLE)).map((r) => [r.x, r.battery_mv, (r.device as { fw?: string } | null)?.fw ?? null])).toEqual([
      [1, 3700, null],
      [2, null, '2.1'],
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });

  it("loses its schema commit to the owner's change (409), decides again and validates against the owner's column, every row once", async () => {
    const ns = await table();
    const sink = await sinkOn(ns);
    // The first roll's own schema commit first, so that the next commit is the new fields'.
    await send(stack, sink, 'b-0', [r({ x: 0 })]);
    expect((await roll(sink.id)).summary).toMatchObject({ outcome: 'committed', rows: 1 });

    await send(stack, sink, 'b-1', [r({ x: 1, battery_mv: 3700 }), r({ x: 2, battery_mv: 'low' }), r({ x: 3, battery_mv: 3650 }), r({ x: 4, device: { fw: '2.1' } })]);
    let ownerColumn: { field_id: number } | undefined;
    // Between the roll's load and its schema commit, the owner adds battery_mv as a string.
    proxy.beforeNextCommit(async () => {
      ownerColumn = await ownerAddsColumn(ns, TABLE, 'battery_mv', 'string');
    });
    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('the table schema changed before the new columns were added; deciding again');
    // Rows are checked against the owner's string column: the numbers do not fit it.
    expect(summary).toMatchObject({ outcome: 'committed', batches: 1, rows: 2, rejected_rows: 2, reasons: { type_mismatch: 2 } });

    const { schema } = await schemaOf(ns);
    const ids = fieldIds(schema);
    expect(ids).toContain(`battery_mv ${ownerColumn!.field_id} string`);
    expect(ids.filter((f) => f.startsWith('battery_mv '))).toHaveLength(1);
    const fw = ids.find((f) => f.startsWith('device.fw '))!;
    expect(Number(fw.split(' ')[1])).toBeGreaterThan(ownerColumn!.field_id);

    expect((await readBoth(stack, ns, TABLE)).map((r) => [r.x, r.battery_mv, (r.device as { fw?: string } | null)?.fw ?? null])).toEqual([
      [0, null, null],
      [2, 'low', null],
      [4, null, '2.1'],
    ]);
    expect((await rejectsOf(stack, sink.id, 'b-1')).map((r) => [(r.row as { x: number }).x, r.reason, r.field])).toEqual([
      [1, 'type_mismatch', 'battery_mv'],
      [3, 'type_mismatch', 'battery_mv'],
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });

  it('by default still rejects every unknown field, a null one too, and changes no schema', async () => {
    const ns = await table();
    const sink = await createSink(stack, `addcol_${suffix()}`, `${ns}.${TABLE}`);
    expect(sink.unknown_fields).toBe('reject');
    await send(stack, sink, 'b-1', [r({ x: 1 }), r({ x: 2, battery_mv: 3700 }), r({ x: 3, gone: null }), r({ x: 4, device: { fw: '2.1' } })]);
    const { summary } = await roll(sink.id);
    expect(summary).toMatchObject({ outcome: 'committed', rows: 1, rejected_rows: 3, reasons: { unknown_field: 3 } });
    expect(fieldIds((await schemaOf(ns)).schema).map((f) => f.split(' ')[0])).toEqual(['x', 'device', 'device.model', 'samples', 'samples.v', '__ingest_ts']);
    expect((await rejectsOf(stack, sink.id, 'b-1')).map((r) => [r.field, r.message])).toEqual([
      ['battery_mv', expect.not.stringContaining('add_columns')],
      ['gone', expect.any(String)],
      ['device.fw', expect.any(String)],
    ]);
  });
});
