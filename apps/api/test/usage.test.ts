import { Usage } from '@tablemere/contracts';
import { query, queryOne } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/harness.ts';
import { insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';

let api: InternalTestApi;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await api?.close();
});

/** A usage_ingest row as the intake's upsert leaves it; `monthsAgo` 0 is this month (UTC). */
async function usageRow(projectId: string, sinkId: string, monthsAgo: number, figures: { bytes: number; batches: number; accepted: number; rejected: number }) {
  await query(
    api.pool,
    `INSERT INTO usage_ingest (project_id, sink_id, month, bytes, batches, rows_accepted, rows_rejected)
     VALUES ($1, $2, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $3))::date, $4, $5, $6, $7)`,
    [projectId, sinkId, monthsAgo, figures.bytes, figures.batches, figures.accepted, figures.rejected],
  );
}

describe('GET /v1/usage', () => {
  it("answers this month's ingest per sink for the key's project only, with measured storage", async () => {
    const empty = Usage.parse((await call(api.app, 'GET', '/v1/usage', { key: api.adminKey })).body);
    expect(empty).toMatchObject({
      ingest_bytes: { month_to_date: 0, batches: 0, rows_accepted: 0, rows_rejected: 0, by_sink: [] },
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
      batches: 43,
      rows_accepted: 9_023,
      rows_rejected: 13,
      by_sink: [
        { sink_id: big, name: 'big', bytes: 5_000_000, batches: 40, rows_accepted: 9_000, rows_rejected: 12 },
        { sink_id: small, name: 'small', bytes: 1_000, batches: 2, rows_accepted: 20, rows_rejected: 0 },
        { sink_id: gone, name: 'gone', bytes: 300, batches: 1, rows_accepted: 3, rows_rejected: 1 },
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
});
