import { Lease, RollIntent } from '@tablemere/contracts';
import { query, queryOne } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropNamespace, suffix } from './support/harness.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { createSink, createTable, send } from './support/sinks.ts';

let api: InternalTestApi;
const ns = `api_storing_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

describe('a batch whose request never settled', () => {
  it('is settled by the roll that consumed it, so a later replay stores nothing again', async () => {
    await createTable(api, ns, 'events');
    const sink = await createSink(api.app, api.adminKey, { name: 'storing', table: `${ns}.events` });
    const body = '[{"x": 1}, {"x": 2}, 3]';
    const first = await send(api.app, sink, body, { batchId: 'lost-answer' });
    expect(first.status, first.text).toBe(202);
    const counters = () =>
      queryOne<{ bytes: string; batches: string; rows_accepted: string; rows_rejected: string }>(
        api.pool,
        'SELECT bytes, batches, rows_accepted, rows_rejected FROM usage_ingest WHERE sink_id = $1',
        [sink.id],
      );
    const counted = await counters();
    // Every element stored counts as accepted; rows are rejected (and counted) by the roll.
    expect(counted).toEqual({ bytes: String(first.body.bytes), batches: '1', rows_accepted: '3', rows_rejected: '0' });
    // What a request that died after its PUT leaves behind: the object, a claim still storing, and nothing counted.
    await query(api.pool, `UPDATE sink_batches SET state = 'storing' WHERE sink_id = $1 AND batch_id = 'lost-answer'`, [sink.id]);
    await query(api.pool, `UPDATE usage_ingest SET bytes = 0, batches = 0, rows_accepted = 0, rows_rejected = 0 WHERE sink_id = $1`, [sink.id]);

    // The roller rolls what the store holds, this batch included, and reports it.
    const { lease_id } = Lease.parse((await api.callInternal('POST', `/internal/sinks/${sink.id}/lease`, { roller_id: 'r', ttl_seconds: 60 })).body);
    const intent = RollIntent.parse(
      (await api.callInternal('POST', `/internal/sinks/${sink.id}/rolls`, { lease_id, snapshot_id: '1234567890123456789', batch_ids: ['lost-answer'] })).body,
    );
    const report = await api.callInternal('POST', `/internal/sinks/${sink.id}/roll`, {
      lease_id,
      roll_id: intent.roll_id,
      snapshot_id: '1234567890123456789',
      batches: [{ batch_id: 'lost-answer', rows: 2, rejected_rows: 1 }],
      rows: 2,
      rejected_rows: 1,
      seconds: 0.1,
      attempts: 1,
      started_at: new Date().toISOString(),
      outcome: 'committed',
    });
    expect(report.status, report.text).toBe(200);
    expect(report.body).toMatchObject({ ledger: { committed: 1, unknown: 0 } });
    // The roll settled it, so it counts it: once, as its send would have, and the row it rejected.
    const settled = { ...counted, rows_rejected: '1' };
    expect(await counters()).toEqual(settled);

    const status = await call(api.app, 'GET', `/v1/sinks/${sink.id}/batches/lost-answer`, { key: api.adminKey });
    expect(status.body).toMatchObject({ state: 'committed', snapshot_id: '1234567890123456789' });

    // The producer retries with the same id and body: the first answer's figures, nothing stored.
    const replay = await send(api.app, sink, body, { batchId: 'lost-answer' });
    expect(replay.status, replay.text).toBe(200);
    // The first answer whole, the non-object's reason included (kept with the claim).
    expect(replay.body).toEqual(first.body);
    const row = await queryOne<{ state: string }>(api.pool, `SELECT state FROM sink_batches WHERE sink_id = $1 AND batch_id = 'lost-answer'`, [sink.id]);
    expect(row?.state).toBe('committed');
    expect(await counters()).toEqual(settled);
  });
});
