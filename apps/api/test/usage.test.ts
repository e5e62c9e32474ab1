import { gzipSync } from 'node:zlib';
import { InternalSinkList, Lease, RollIntent, Sink, Usage } from '@tablemere/contracts';
import { query, queryOne } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropNamespace, suffix } from './support/harness.ts';
import { insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { createSink, createTable, send } from './support/sinks.ts';

let api: InternalTestApi;
const ns = `api_usage_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

/** A usage_ingest row as the intake's upsert leaves it; `monthsAgo` 0 is this month (UTC). */
async function usageRow(projectId: string, sinkId: string, monthsAgo: number, figures: { bytes: number; batches: number; accepted: number; rejected: number }) {
  // Sent compressed to a fifth of the rows' bytes.
  await query(
    api.pool,
    `INSERT INTO usage_ingest (project_id, sink_id, month, bytes, wire_bytes, batches, rows_accepted, rows_rejected)
     VALUES ($1, $2, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $3))::date, $4::bigint, $4::bigint / 5, $5, $6, $7)`,
    [projectId, sinkId, monthsAgo, figures.bytes, figures.batches, figures.accepted, figures.rejected],
  );
}

describe('GET /v1/usage', () => {
  it("answers this month's ingest per sink for the key's project only, with measured storage", async () => {
    const empty = Usage.parse((await call(api.app, 'GET', '/v1/usage', { key: api.adminKey })).body);
    expect(empty).toMatchObject({
      ingest_bytes: { month_to_date: 0, wire_month_to_date: 0, batches: 0, rows_accepted: 0, rows_rejected: 0, by_sink: [] },
      storage: { bytes: 0, by_warehouse: [] },
      enforced: false,
    });
    const month = (await queryOne<{ m: string }>(api.pool, `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM') AS m`))!.m;
    expect(empty.month).toBe(month);

    const big = await insertSink(api.pool, api, { name: 'big' });
    const small = await insertSink(api.pool, api, { name: 'small' });
    const gone = await insertSink(api.pool, api, { name: 'gone', state: 'deleted' });
    await usageRow(api.projectId, big, 0, { bytes: 5_000_000, batches: 40, accepted: 9_000, rejected: 12 });
    await usageRow(api.projectId, small, 0, { bytes: 1_000, batches: 2, accepted: 20, rejected: 0 });
    await usageRow(api.projectId, gone, 0, { bytes: 300, batches: 1, accepted: 3, rejected: 1 });
    // Last month does not count toward month_to_date.
    await usageRow(api.projectId, big, 1, { bytes: 77_000_000, batches: 700, accepted: 1, rejected: 1 });

    // Another project's sink, in the same database, is never shown.
    const other = (await queryOne<{ id: string }>(api.pool, `INSERT INTO projects (name) VALUES ('other') RETURNING id`))!.id;
    const otherWarehouse = (await queryOne<{ id: string }>(
      api.pool,
      `INSERT INTO warehouses (id, project_id, name, rest_uri, warehouse, auth_type, s3_endpoint, s3_region)
       VALUES (gen_random_uuid(), $1, 'w', 'http://x', 's3://x', 'none', 'http://x', 'us-east-1') RETURNING id`,
      [other],
    ))!.id;
    const foreign = await insertSink(api.pool, { projectId: other, warehouseId: otherWarehouse }, { name: 'foreign' });
    await usageRow(other, foreign, 0, { bytes: 123_456, batches: 9, accepted: 9, rejected: 9 });
    await query(
      api.pool,
      `INSERT INTO storage_measurements (project_id, warehouse_id, bucket, prefix, bytes, objects, trigger, duration_ms, measured_at)
       VALUES ($1, $2, 'warehouse', '', 100, 1, 'sweep', 5, now() - interval '2 hours'),
              ($1, $2, 'warehouse', '', 2500, 4, 'sweep', 5, now() - interval '1 hour'),
              ($3, $4, 'x', '', 999999, 9, 'sweep', 5, now())`,
      [api.projectId, api.warehouseId, other, otherWarehouse],
    );

    const readKey = (await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'reader', level: 'read' } })).body.key;
    const res = await call(api.app, 'GET', '/v1/usage', { key: readKey });
    expect(res.status, res.text).toBe(200);
    const usage = Usage.parse(res.body);
    expect(usage.ingest_bytes).toEqual({
      month_to_date: 5_001_300,
      wire_month_to_date: 1_000_260,
      batches: 43,
      rows_accepted: 9_023,
      rows_rejected: 13,
      by_sink: [
        { sink_id: big, name: 'big', bytes: 5_000_000, wire_bytes: 1_000_000, batches: 40, rows_accepted: 9_000, rows_rejected: 12 },
        { sink_id: small, name: 'small', bytes: 1_000, wire_bytes: 200, batches: 2, rows_accepted: 20, rows_rejected: 0 },
        { sink_id: gone, name: 'gone', bytes: 300, wire_bytes: 60, batches: 1, rows_accepted: 3, rows_rejected: 1 },
      ],
    });
    expect(usage.storage).toMatchObject({ bytes: 2500, by_warehouse: [{ warehouse: 'garden', bytes: 2500, objects: 4 }] });
    expect(usage.enforced).toBe(false);
  });

  it('needs a key and takes no query parameters', async () => {
    expect((await call(api.app, 'GET', '/v1/usage')).status).toBe(401);
    const res = await call(api.app, 'GET', '/v1/usage?month=2020-01', { key: api.adminKey });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('follows a real send and its roll report: intake counts, then the rows the roll rejected', async () => {
    await createTable(api, ns, 'events');
    const sink = await createSink(api.app, api.adminKey, { name: 'flow', table: `${ns}.events` });
    const first = await send(api.app, sink, '[{"x": 1}, {"x": 2}, {"x": "three"}, "not an object"]', { batchId: 'flow-1' });
    const secondBody = gzipSync('[{"x": 4, "who": "south"}]');
    const second = await send(api.app, sink, secondBody, { batchId: 'flow-2', headers: { 'content-encoding': 'gzip' } });
    expect([first.status, second.status]).toEqual([202, 202]);

    const usageOf = async () => Usage.parse((await call(api.app, 'GET', '/v1/usage', { key: api.adminKey })).body).ingest_bytes.by_sink.find((u) => u.sink_id === sink.id)!;
    expect(await usageOf()).toEqual({
      sink_id: sink.id,
      name: 'flow',
      bytes: first.body.bytes + second.body.bytes,
      // The second went compressed: its wire bytes are the gzip stream's.
      wire_bytes: Buffer.byteLength('[{"x": 1}, {"x": 2}, {"x": "three"}, "not an object"]') + secondBody.length,
      batches: 2,
      // Every element stored, the one that is not an object too; nothing is rejected before the roll.
      rows_accepted: 5,
      rows_rejected: 0,
    });

    // The roller's view sees both batches pending; it rolls them, rejecting the row whose x is a
    // string and the element that is not an object.
    const view = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks')).body).sinks.find((s) => s.id === sink.id)!;
    expect(view.pending).toMatchObject({ batches: 2, bytes: first.body.bytes + second.body.bytes, oldest_received_at: first.body.received_at, newest_received_at: second.body.received_at });
    const { lease_id } = Lease.parse((await api.callInternal('POST', `/internal/sinks/${sink.id}/lease`, { roller_id: 'flow-roller', ttl_seconds: 60 })).body);
    const intent = RollIntent.parse(
      (await api.callInternal('POST', `/internal/sinks/${sink.id}/rolls`, { lease_id, snapshot_id: '4611686018427387904', batch_ids: ['flow-1', 'flow-2'] })).body,
    );
    const report = await api.callInternal('POST', `/internal/sinks/${sink.id}/roll`, {
      lease_id,
      roll_id: intent.roll_id,
      snapshot_id: '4611686018427387904',
      batches: [
        { batch_id: 'flow-1', rows: 2, rejected_rows: 2 },
        { batch_id: 'flow-2', rows: 1, rejected_rows: 0 },
      ],
      rows: 3,
      rejected_rows: 2,
      seconds: 0.8,
      attempts: 1,
      started_at: new Date().toISOString(),
      outcome: 'committed',
    });
    expect(report.status, report.text).toBe(200);

    expect(await usageOf()).toMatchObject({ batches: 2, rows_accepted: 5, rows_rejected: 2 });
    const got = await call(api.app, 'GET', `/v1/sinks/${sink.id}`, { key: api.adminKey });
    expect(got.status, got.text).toBe(200);
    const shown = Sink.parse(got.body);
    expect(shown.lag).toMatchObject({ batches_waiting: 0, bytes_waiting: 0 });
    expect(shown.last_roll).toMatchObject({ batches: 2, rows: 3, rejected_rows: 2, snapshot_id: '4611686018427387904', seconds: 0.8 });
    expect(shown.rejects).toMatchObject({ rows_total: 2, batches_with_rejects: 1 });
    expect(shown.rejects.last_at).not.toBeNull();
    const status = await call(api.app, 'GET', `/v1/sinks/${sink.id}/batches/flow-1`, { key: api.adminKey });
    expect(status.body).toMatchObject({ state: 'committed', snapshot_id: '4611686018427387904', rows: 4, rejected_rows: 2 });
    expect((await call(api.app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey })).status).toBe(202);
  });
});
