import { commitSchemaChange, currentSchema, findInAncestry } from '@tablemere/iceberg';
import { SendResult } from '@tablemere/contracts';
import { encodeSegment, SEGMENT_CONTENT_TYPE } from '@tablemere/store';
import { storedBatch } from '../../../tests/support/intake.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchStatus, connection, createSink, createTable, getSink, send } from './support/api.ts';
import { columnNames, intakeBatches, micros, readBoth, receivedOf, rejectsOf } from './support/expect.ts';
import { pyicebergSnapshots, rejectsByRecipe } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

async function table(columns = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
  { name: 'ok', type: 'boolean' },
  { name: 'at', type: 'timestamptz' },
]) {
  const ns = `roll_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', columns);
  return ns;
}

async function roll(sinkId: string) {
  const run = await runCli(['roll', sinkId], stack.rollerEnv());
  if (run.code !== 0) throw new Error(`roll exited ${run.code}: ${run.stdout}\n${run.stderr}`);
  return summaries(run)[0]!;
}

describe('a roll, end to end', () => {
  it('turns batches sent over HTTP into rows both engines read exactly, with __ingest_ts from the intake', async () => {
    const ns = await table();
    const sink = await createSink(stack, `events_${suffix()}`, `${ns}.events`);
    const sent = [
      await send(stack, sink, 'b-001', [{ x: 1, who: 'north', ok: true, at: '2026-09-21T12:00:00.123456Z' }, { x: 2 }]),
      await send(stack, sink, 'b-002', [{ x: 3, who: 'south' }, { x: 'four' }, { who: 'nobody' }, { x: 5, colour: 'red' }, { x: 6, ok: false }]),
      // Beyond 2^53: exact, never rounded.
      await send(stack, sink, 'b-003', '[{"x": 9007199254740993, "who": "big"}]'),
    ];
    const received = new Map<string, string>();
    for (const s of sent) received.set(s.batch_id, await receivedOf(stack, sink.id, s.batch_id));
    for (const s of sent) expect(received.get(s.batch_id)).toBe(micros(s.received_at));

    const summary = await roll(sink.id);
    expect(summary).toMatchObject({ status: 'rolled', outcome: 'committed', batches: 3, rows: 5, rejected_rows: 3, reasons: { type_mismatch: 1, missing_required: 1, unknown_field: 1 } });

    expect(await columnNames(stack, ns, 'events')).toEqual(['x', 'who', 'ok', 'at', '__ingest_ts']);
    const rows = await readBoth(stack, ns, 'events');
    const stamp = (batch: string) => received.get(batch)!;
    expect(rows).toEqual([
      { x: 1, who: 'north', ok: true, at: '2026-09-21T12:00:00.123456Z', __ingest_ts: stamp('b-001') },
      { x: 2, who: null, ok: null, at: null, __ingest_ts: stamp('b-001') },
      { x: 3, who: 'south', ok: null, at: null, __ingest_ts: stamp('b-002') },
      { x: 6, who: null, ok: false, at: null, __ingest_ts: stamp('b-002') },
      { x: 9007199254740993n, who: 'big', ok: null, at: null, __ingest_ts: stamp('b-003') },
    ].sort((a, b) => (BigInt(a.x) < BigInt(b.x) ? -1 : 1)));
    expect(rows).toHaveLength(5);

    // Every rejected row, with the original row and its reason.
    const rejects = await rejectsOf(stack, sink.id, 'b-002');
    expect(rejects).toEqual([
      expect.objectContaining({ batch_id: 'b-002', row: { x: 'four' }, reason: 'type_mismatch', field: 'x', expected: expect.any(String), got: '"four"' }),
      expect.objectContaining({ batch_id: 'b-002', row: { who: 'nobody' }, reason: 'missing_required', field: 'x' }),
      expect.objectContaining({ batch_id: 'b-002', row: { x: 5, colour: 'red' }, reason: 'unknown_field', field: 'colour' }),
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);

    // The snapshot names the sink and what it consumed.
    const [head] = await pyicebergSnapshots(ns, 'events');
    expect(head!['snapshot-id']).toBe(summary.snapshot_id);
    expect(head!.summary).toMatchObject({
      operation: 'append',
      'tablemere.sink.id': sink.id,
      'tablemere.sink.batches': 'b-001,b-002,b-003',
      'tablemere.sink.batch_rows': '2:0,2:3,1:0',
      'tablemere.sink.rows': '5',
      'tablemere.sink.rejected_rows': '3',
      'tablemere.sink.rolled_at': expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
    });

    // The API's view matches.
    const view = await getSink(stack, sink.id);
    expect(view.lag).toMatchObject({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 });
    expect(view.last_roll).toMatchObject({ batches: 3, rows: 5, rejected_rows: 3, snapshot_id: summary.snapshot_id });
    expect(view.rejects).toMatchObject({ rows_total: 3, batches_with_rejects: 1, last_at: expect.any(String), prefix: expect.stringContaining(`_sink/${sink.id}/rejects/`) });

    // The first roll's table changes happened once, in their own commit before the append.
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: 'events' });
    expect(loaded.metadata.properties).toMatchObject({ 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' });
    expect(currentSchema(loaded.metadata).fields.find((f) => f.name === '__ingest_ts')).toMatchObject({ required: false, type: 'timestamptz' });

    // Nothing pending: a second roll commits nothing and changes nothing.
    const schemas = loaded.metadata.schemas.length;
    expect(await roll(sink.id)).toMatchObject({ outcome: 'idle', batches: 0 });
    const after = await stack.catalog.loadTable({ namespace: ns, name: 'events' });
    expect(after.metadata.schemas.length).toBe(schemas);
    expect(after.metadata.snapshots?.length).toBe(loaded.metadata.snapshots?.length);
  });

  it('rolls a batch named by its content (a batch_ids: content sink) as any other; its resend after the roll is a replay', async () => {
    const ns = await table();
    const sink = await createSink(stack, `shipped_${suffix()}`, `${ns}.events`, { batch_ids: 'content' });
    // As a shipper with fixed headers sends: no Idempotency-Key.
    const post = () =>
      fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sink.send_key}`, 'content-type': 'application/json' },
        body: '[{"x": 1, "who": "shipped"}, {"x": 2}]',
      });
    const first = await post();
    const firstText = await first.text();
    expect(first.status, firstText).toBe(202);
    const sent = SendResult.parse(JSON.parse(firstText));
    expect(sent).toMatchObject({ batch_id: expect.stringMatching(/^content-[0-9a-f]{32}$/), batch_id_from: 'content' });

    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', batches: 1, rows: 2, rejected_rows: 0 });
    expect(await readBoth(stack, ns, 'events')).toEqual([
      { x: 1, who: 'shipped', ok: null, at: null, __ingest_ts: micros(sent.received_at) },
      { x: 2, who: null, ok: null, at: null, __ingest_ts: micros(sent.received_at) },
    ]);
    expect(await batchStatus(stack, sink.id, sent.batch_id)).toMatchObject({ state: 'committed', rows: 2 });
    const again = await post();
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstText);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });

  it('commits nothing when every row is rejected, but writes the rejects, consumes the batch and reports', async () => {
    const ns = await table();
    const sink = await createSink(stack, `empty_${suffix()}`, `${ns}.events`);
    await send(stack, sink, 'all-bad', [{ who: 'a' }, { x: 'b' }]);
    const summary = await roll(sink.id);
    expect(summary).toMatchObject({ outcome: 'empty', snapshot_id: null, batches: 1, rows: 0, rejected_rows: 2 });
    const loaded = await stack.catalog.loadTable({ namespace: ns, name: 'events' });
    expect(findInAncestry(loaded.metadata, 'tablemere.sink.id', sink.id)).toBeUndefined();
    expect(await readBoth(stack, ns, 'events')).toEqual([]);
    expect((await rejectsOf(stack, sink.id, 'all-bad')).map((r) => r.reason)).toEqual(['missing_required', 'type_mismatch']);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    const view = await getSink(stack, sink.id);
    expect(view.lag.batches_waiting).toBe(0);
    expect(view.rejects).toMatchObject({ rows_total: 2, batches_with_rejects: 1 });
    expect(view.last_roll).toMatchObject({ batches: 1, rows: 0, rejected_rows: 2, snapshot_id: null });
  });

  it('rejects elements that are not objects row by row (not_an_object), where the read recipe of GET /v1/connection finds them', async () => {
    const ns = await table([{ name: 'x', type: 'long', required: true }]);
    const sink = await createSink(stack, `mixed_${suffix()}`, `${ns}.events`);
    expect(await send(stack, sink, 'mixed', '[{"x": 1}, 7, "a", {"x": "two"}, [{"x": 3}]]')).toMatchObject({ accepted: 2, rejected: 3 });
    // No object at all is still a batch: stored, its rows rejected by the roll.
    expect(await send(stack, sink, 'none', '[1,"a"]')).toMatchObject({ accepted: 0, rejected: 2 });

    const summary = await roll(sink.id);
    expect(summary).toMatchObject({ outcome: 'committed', batches: 2, rows: 1, rejected_rows: 6, reasons: { not_an_object: 5, type_mismatch: 1 } });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1]);
    expect((await getSink(stack, sink.id)).rejects).toMatchObject({ rows_total: 6, batches_with_rejects: 2 });
    expect(await batchStatus(stack, sink.id, 'none')).toMatchObject({ state: 'rejected', rows: 2, rejected_rows: 2 });
    expect(await batchStatus(stack, sink.id, 'mixed')).toMatchObject({ state: 'committed', rows: 5, rejected_rows: 4 });

    const recipe = (await connection(stack)).sink_rejects!;
    expect(recipe).toMatchObject({ location: `s3://${stack.env.TABLEMERE_INTAKE_BUCKET}/_sink/{sink_id}/rejects/*.ndjson`, credentials: 'platform' });
    const expected = [
      { batch_id: 'mixed', row: 7, reason: 'not_an_object', field: '' },
      { batch_id: 'mixed', row: 'a', reason: 'not_an_object', field: '' },
      { batch_id: 'mixed', row: { x: 'two' }, reason: 'type_mismatch', field: 'x' },
      { batch_id: 'mixed', row: [{ x: 3 }], reason: 'not_an_object', field: '' },
      { batch_id: 'none', row: 1, reason: 'not_an_object', field: '' },
      { batch_id: 'none', row: 'a', reason: 'not_an_object', field: '' },
    ];
    expect(await rejectsByRecipe(recipe, sink.id, stack.env)).toEqual({ duckdb: expected, python: expected });
  });

  it('leaves the metadata-retention properties an owner already set as they are, and a table with both and the column untouched', async () => {
    const owner = { 'write.metadata.delete-after-commit.enabled': 'false', 'write.metadata.previous-versions-max': '50' };
    const prepared = await table([{ name: 'x', type: 'long', required: true }]);
    const bare = await table([{ name: 'x', type: 'long', required: true }]);
    const ident = (namespace: string) => ({ namespace, name: 'events' });
    const base = async (namespace: string) => (await stack.catalog.loadTable(ident(namespace))).metadata;
    await commitSchemaChange(stack.catalog, ident(prepared), await base(prepared), {
      addColumns: [{ name: '__ingest_ts', type: 'timestamptz' }],
      setProperties: owner,
    });
    await commitSchemaChange(stack.catalog, ident(bare), await base(bare), { setProperties: owner });

    // The column and both properties already there: the roll's append is the only commit.
    const before = await base(prepared);
    const sink = await createSink(stack, `prepared_${suffix()}`, `${prepared}.events`);
    await send(stack, sink, 'p-1', [{ x: 1 }]);
    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', rows: 1 });
    const after = await base(prepared);
    expect(after.properties).toMatchObject(owner);
    expect(after.schemas).toEqual(before.schemas);
    expect(after['current-schema-id']).toBe(before['current-schema-id']);
    expect(before.snapshots ?? []).toEqual([]);
    expect(after.snapshots!.map((s) => s.summary.operation)).toEqual(['append']);

    // Both properties, no column: the column is added, the properties keep the owner's values.
    const other = await createSink(stack, `bare_${suffix()}`, `${bare}.events`);
    await send(stack, other, 'b-1', [{ x: 2 }]);
    expect(await roll(other.id)).toMatchObject({ outcome: 'committed', rows: 1 });
    expect((await base(bare)).properties).toMatchObject(owner);
    expect(await columnNames(stack, bare, 'events')).toEqual(['x', '__ingest_ts']);
    expect((await readBoth(stack, bare, 'events')).map((r) => r.x)).toEqual([2]);
  });

  it('rejects a batch it cannot parse whole as batch_unreadable, and the roll goes on with the others', async () => {
    const ns = await table([{ name: 'x', type: 'long', required: true }]);
    const sink = await createSink(stack, `unreadable_${suffix()}`, `${ns}.events`);
    await send(stack, sink, 'garbled', [{ x: 1 }, { x: 2 }]);
    await send(stack, sink, 'not-text', [{ x: 3 }]);
    await send(stack, sink, 'fine', [{ x: 4 }]);
    // What the store holds no longer parses (a damaged or replaced segment): every line goes to rejects.
    const replace = async (batchId: string, body: Buffer) => {
      const { key, segment, received, lines } = await storedBatch(stack.intake, sink.id, batchId);
      const { parts } = encodeSegment(sink.id, segment!, [{ id: batchId, ndjson: body, lines, received }]);
      await stack.intake.put(key, parts, { contentType: SEGMENT_CONTENT_TYPE });
    };
    await replace('garbled', Buffer.from('{"x": 1}\n{"x": 2\n'));
    const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    await replace('not-text', binary);

    const summary = await roll(sink.id);
    expect(summary).toMatchObject({ outcome: 'committed', batches: 3, rows: 1, rejected_rows: 3, reasons: { batch_unreadable: 3 } });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([4]);
    expect(await rejectsOf(stack, sink.id, 'garbled')).toEqual([
      expect.objectContaining({ batch_id: 'garbled', row: '{"x": 1}', reason: 'batch_unreadable' }),
      expect.objectContaining({ batch_id: 'garbled', row: '{"x": 2', reason: 'batch_unreadable' }),
    ]);
    expect(await rejectsOf(stack, sink.id, 'not-text')).toEqual([
      expect.objectContaining({ batch_id: 'not-text', row: null, row_base64: binary.toString('base64'), reason: 'batch_unreadable' }),
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect((await getSink(stack, sink.id)).rejects).toMatchObject({ rows_total: 3, batches_with_rejects: 2 });
    expect(await batchStatus(stack, sink.id, 'garbled')).toMatchObject({ state: 'rejected' });
  });

  it("honours the table's schema as it is at roll time, not at intake", async () => {
    const ns = await table([
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ]);
    const sink = await createSink(stack, `schema_${suffix()}`, `${ns}.events`);
    // `colour` is not a column when the batch arrives; the owner adds it before the roll.
    await send(stack, sink, 'with-colour', [{ x: 1, colour: 'red' }, { x: 2, who: 'w' }]);
    const ident = { namespace: ns, name: 'events' };
    await commitSchemaChange(stack.catalog, ident, (await stack.catalog.loadTable(ident)).metadata, { addColumns: [{ name: 'colour', type: 'string' }] });
    const summary = await roll(sink.id);
    expect(summary).toMatchObject({ outcome: 'committed', rows: 2, rejected_rows: 0 });
    const rows = await readBoth(stack, ns, 'events');
    expect(rows.map(({ __ingest_ts: _, ...r }) => r)).toEqual([
      { x: 1, who: null, colour: 'red' },
      { x: 2, who: 'w', colour: null },
    ]);
  });

  it('marks the sink table_missing when its table is dropped, keeps the batches, and resumes when it is back', async () => {
    const ns = await table([{ name: 'x', type: 'long', required: true }]);
    const sink = await createSink(stack, `dropped_${suffix()}`, `${ns}.events`);
    await send(stack, sink, 'before-drop', [{ x: 1 }]);
    await stack.catalog.dropTable({ namespace: ns, name: 'events' }, { purge: true });

    for (let i = 0; i < 2; i++) {
      const run = await runCli(['roll', sink.id], stack.rollerEnv());
      expect(run.code).toBe(1);
      expect(summaries(run)[0]).toMatchObject({ status: 'failed', reason: 'table_missing' });
    }
    let view = await getSink(stack, sink.id);
    expect(view.state).toBe('table_missing');
    expect(view.lag.batches_waiting).toBe(1);
    expect(await intakeBatches(stack, sink.id)).toHaveLength(1);

    await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
    expect(await roll(sink.id)).toMatchObject({ outcome: 'committed', rows: 1 });
    view = await getSink(stack, sink.id);
    expect(view.state).toBe('active');
    expect(view.lag.batches_waiting).toBe(0);
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1]);
  });
});
