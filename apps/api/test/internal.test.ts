import { InternalSinkList, Lease, RollIntent, RollReportResult, Sink, SinkList, UpkeepReportResult } from '@tablemere/contracts';
import { query, queryOne } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, suffix } from './support/harness.ts';
import { injectJson, insertBatches, insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';

let api: InternalTestApi;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await api?.close();
});

const MiB = 1024 * 1024;

async function dueIds(): Promise<Map<string, string[]>> {
  const res = await api.callInternal('GET', '/internal/sinks?due=true');
  expect(res.status, res.text).toBe(200);
  const list = InternalSinkList.parse(res.body);
  return new Map(list.sinks.map((s) => [s.id, s.due_reasons]));
}

async function lease(sinkId: string, rollerId: string, extra: Record<string, unknown> = {}) {
  return api.callInternal('POST', `/internal/sinks/${sinkId}/lease`, { roller_id: rollerId, ttl_seconds: 60, ...extra });
}

describe('internal auth and listener', () => {
  it('refuses a missing or wrong bootstrap secret, even on unknown paths', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer not-the-secret' }, { authorization: `Bearer ${api.secret}x` }, { authorization: api.secret }];
    for (const headers of attempts) {
      for (const url of ['/internal/sinks', '/internal/nothing-here']) {
        const res = await injectJson(api.internal, 'GET', url, headers);
        expect(res.status, url).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    }
    expect((await api.callInternal('GET', '/internal/nothing-here')).status).toBe(404);
  });

  it('is not served by the public app, secret or not', async () => {
    const sinkId = await insertSink(api.pool, api);
    for (const [method, url] of [
      ['GET', '/internal/sinks'],
      ['GET', '/internal/sinks?due=true'],
      ['POST', `/internal/sinks/${sinkId}/lease`],
      ['POST', `/internal/sinks/${sinkId}/roll`],
    ] as const) {
      for (const key of [api.secret, api.adminKey]) {
        const res = await call(api.app, method, url, { key, ...(method === 'POST' ? { body: { roller_id: 'r', ttl_seconds: 30 } } : {}) });
        expect(res.status, `${method} ${url}`).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    // The public app has no /metrics for internal routes either: nothing of the roller's API shows there.
    const metrics = await call(api.app, 'GET', '/metrics');
    expect(metrics.text).not.toContain('/internal');
    expect((await api.callInternal('GET', '/metrics')).status).toBe(404);
  });
});

describe('GET /internal/sinks', () => {
  it('lists live sinks with policy, pending aggregates and the warehouse access in clear', async () => {
    const sinkId = await insertSink(api.pool, api, { roll_seconds: 120, inactivity_seconds: 45 });
    const deleted = await insertSink(api.pool, api, { state: 'deleted' });
    await insertBatches(api.pool, sinkId, [
      { batch_id: 'a', age_seconds: 30, bytes: 1000 },
      { batch_id: 'b', age_seconds: 10, bytes: 500 },
      { batch_id: 'c', age_seconds: 90, bytes: 7, state: 'committed' },
    ]);
    const res = await api.callInternal('GET', '/internal/sinks');
    expect(res.status, res.text).toBe(200);
    const list = InternalSinkList.parse(res.body);
    expect(list.enabled).toBe(true);
    expect(list.sinks.some((s) => s.id === deleted)).toBe(false);
    const sink = list.sinks.find((s) => s.id === sinkId)!;
    expect(sink).toMatchObject({
      project_id: api.projectId,
      state: 'active',
      namespace: 'ns',
      policy: { roll_seconds: 120, roll_bytes: 64 * MiB, inactivity_seconds: 45, max_batches: 1000 },
      pending: { batches: 2, bytes: 1500 },
      due: false,
      due_reasons: [],
      last_roll_at: null,
      lease: null,
      intake: { bucket: api.env.TABLEMERE_INTAKE_BUCKET, identity: 'platform', prefix: `_sink/${sinkId}/`, rejects_prefix: `_sink/${sinkId}/rejects/` },
      warehouse: {
        id: api.warehouseId,
        rest_uri: api.env.ICEBERG_REST_URI,
        warehouse: api.env.ICEBERG_WAREHOUSE,
        auth: { type: 'oauth2', client_id: api.env.AWS_ACCESS_KEY_ID, client_secret: api.env.AWS_SECRET_ACCESS_KEY },
        s3: { endpoint: api.env.AWS_ENDPOINT_URL, access_key_id: api.env.AWS_ACCESS_KEY_ID, secret_access_key: api.env.AWS_SECRET_ACCESS_KEY, path_style: true },
      },
    });
    const now = Date.parse(list.as_of);
    expect(now - Date.parse(sink.pending.oldest_received_at!)).toBeGreaterThanOrEqual(29_000);
    expect(now - Date.parse(sink.pending.newest_received_at!)).toBeLessThan(12_000);
    // Nothing of those credentials reaches the logs.
    expect(api.rawLogs.join('\n')).not.toContain(api.env.AWS_SECRET_ACCESS_KEY!);
  });

  it('decides due-ness in Postgres, one policy rule at a time', async () => {
    const byAge = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, byAge, [{ batch_id: 'old', age_seconds: 61 }, { batch_id: 'new', age_seconds: 1 }]);
    const young = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, young, [{ batch_id: 'x', age_seconds: 50 }]);

    const byBytes = await insertSink(api.pool, api, { roll_bytes: 32 * MiB });
    await insertBatches(api.pool, byBytes, [{ batch_id: 'p1', bytes: 16 * MiB }, { batch_id: 'p2', bytes: 16 * MiB }]);
    const fewBytes = await insertSink(api.pool, api, { roll_bytes: 32 * MiB });
    await insertBatches(api.pool, fewBytes, [{ batch_id: 'p1', bytes: 16 * MiB }, { batch_id: 'p2', bytes: 16 * MiB - 1 }]);

    const byCount = await insertSink(api.pool, api);
    const almost = await insertSink(api.pool, api);
    for (const [sinkId, count] of [[byCount, 1000], [almost, 999]] as const) {
      await query(
        api.pool,
        `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state)
         SELECT (SELECT day FROM sink_ledger_today), $1, 'b' || i, substring(sha256(i::text::bytea) FOR 16), 10, 1, 0, now(), 'pending' FROM generate_series(1, $2) AS i`,
        [sinkId, count],
      );
    }

    // Every rule at once: named in the contract's order.
    const everything = await insertSink(api.pool, api, { roll_seconds: 60, inactivity_seconds: 30 });
    await query(
      api.pool,
      `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state)
       SELECT (SELECT day FROM sink_ledger_today), $1, 'b' || i, substring(sha256(i::text::bytea) FOR 16), $2, 1, 0, now() - interval '60 seconds', 'pending' FROM generate_series(1, 1000) AS i`,
      [everything, MiB],
    );

    const quiet = await insertSink(api.pool, api, { inactivity_seconds: 30 });
    await insertBatches(api.pool, quiet, [{ batch_id: 'q1', age_seconds: 40 }, { batch_id: 'q2', age_seconds: 31 }]);
    const chatty = await insertSink(api.pool, api, { inactivity_seconds: 30 });
    await insertBatches(api.pool, chatty, [{ batch_id: 'q1', age_seconds: 40 }, { batch_id: 'q2', age_seconds: 5 }]);
    const noInactivity = await insertSink(api.pool, api);
    await insertBatches(api.pool, noInactivity, [{ batch_id: 'q1', age_seconds: 200 }]);

    const missing = await insertSink(api.pool, api, { roll_seconds: 60, state: 'table_missing' });
    await insertBatches(api.pool, missing, [{ batch_id: 'old', age_seconds: 3600 }]);
    const settledOnly = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, settledOnly, [
      { batch_id: 'c', age_seconds: 3600, state: 'committed' },
      { batch_id: 'd', age_seconds: 3600, state: 'discarded' },
    ]);
    const empty = await insertSink(api.pool, api, { roll_seconds: 60, inactivity_seconds: 10 });

    const due = await dueIds();
    expect(due.get(byAge)).toEqual(['roll_seconds']);
    expect(due.get(byBytes)).toEqual(['roll_bytes']);
    expect(due.get(byCount)).toEqual(['max_batches']);
    expect(due.get(quiet)).toEqual(['inactivity']);
    expect(due.get(everything)).toEqual(['roll_seconds', 'roll_bytes', 'max_batches', 'inactivity']);
    for (const notDue of [young, fewBytes, almost, chatty, noInactivity, missing, settledOnly, empty]) expect(due.has(notDue)).toBe(false);

    // The unfiltered list has them all, table_missing included, with due=false.
    const all = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks')).body);
    expect(all.sinks.find((s) => s.id === missing)).toMatchObject({ state: 'table_missing', due: false, pending: { batches: 1 } });
    expect(all.sinks.find((s) => s.id === almost)).toMatchObject({ due: false, pending: { batches: 999, bytes: 9990 } });

    // Most overdue first, and a limit.
    const first = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks?due=true&limit=1')).body);
    expect(first.sinks).toHaveLength(1);
    expect(first.sinks[0]!.id).toBe(byAge);
    expect((await api.callInternal('GET', '/internal/sinks?due=maybe')).status).toBe(400);

    // One sink: is it due now (the roller asks after each roll), and as listed whether due or not.
    const one = async (search: string) => InternalSinkList.parse((await api.callInternal('GET', `/internal/sinks?${search}`)).body).sinks;
    expect(await one(`due=true&sink=${byAge}`)).toEqual([expect.objectContaining({ id: byAge, due: true, due_reasons: ['roll_seconds'], pending: expect.objectContaining({ batches: 2 }) })]);
    expect(await one(`due=true&sink=${young}`)).toEqual([]);
    expect(await one(`sink=${young}`)).toEqual([expect.objectContaining({ id: young, due: false, due_reasons: [] })]);
    expect(await one(`sink=${empty}`)).toEqual([expect.objectContaining({ id: empty, due: false, pending: expect.objectContaining({ batches: 0 }) })]);
    const deleted = await insertSink(api.pool, api, { state: 'deleted' });
    for (const gone of [deleted, 'snk_000000000000']) expect(await one(`sink=${gone}`)).toEqual([]);
    expect((await api.callInternal('GET', '/internal/sinks?sink=nope')).status).toBe(400);
  });
});

describe('leases', () => {
  it('lets one roller at a time hold a sink, with renewal, expiry, takeover and release', async () => {
    const sinkId = await insertSink(api.pool, api);
    const a = await lease(sinkId, 'roller-a');
    expect(a.status, a.text).toBe(200);
    const leaseA = Lease.parse(a.body);
    expect(leaseA).toMatchObject({ sink_id: sinkId, roller_id: 'roller-a' });
    expect(Date.parse(leaseA.expires_at) - Date.parse(leaseA.acquired_at)).toBe(60_000);

    const b = await lease(sinkId, 'roller-b');
    expect(b.status).toBe(409);
    expect(b.body.error).toMatchObject({ code: 'lease_held', holder: { roller_id: 'roller-a', expires_at: leaseA.expires_at } });

    // The view shows the holder.
    const view = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks')).body);
    expect(view.sinks.find((s) => s.id === sinkId)!.lease).toEqual({ roller_id: 'roller-a', expires_at: leaseA.expires_at });

    const renewed = await lease(sinkId, 'roller-a', { lease_id: leaseA.lease_id, ttl_seconds: 120 });
    expect(renewed.status).toBe(200);
    expect(renewed.body.lease_id).toBe(leaseA.lease_id);
    expect(Date.parse(renewed.body.expires_at)).toBeGreaterThan(Date.parse(leaseA.expires_at));
    const stranger = await lease(sinkId, 'roller-b', { lease_id: '00000000-0000-4000-8000-000000000000' });
    expect(stranger.status).toBe(409);
    expect(stranger.body.error.code).toBe('lease_lost');

    // Expired: another roller takes it over, and the old holder can no longer renew or release it.
    await query(api.pool, `UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [sinkId]);
    const takeover = await lease(sinkId, 'roller-b');
    expect(takeover.status, takeover.text).toBe(200);
    expect(takeover.body.lease_id).not.toBe(leaseA.lease_id);
    const late = await lease(sinkId, 'roller-a', { lease_id: leaseA.lease_id });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'lease_lost', holder: { roller_id: 'roller-b' } });
    expect((await api.callInternal('DELETE', `/internal/sinks/${sinkId}/lease/${leaseA.lease_id}`)).body).toEqual({ released: false });
    expect((await api.callInternal('DELETE', `/internal/sinks/${sinkId}/lease/${takeover.body.lease_id}`)).body).toEqual({ released: true });
    expect((await lease(sinkId, 'roller-a')).status).toBe(200);
  });

  it('an expired lease not taken over can still be renewed by its holder', async () => {
    const sinkId = await insertSink(api.pool, api);
    const first = Lease.parse((await lease(sinkId, 'roller-a')).body);
    await query(api.pool, `UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [sinkId]);
    const renewed = await lease(sinkId, 'roller-a', { lease_id: first.lease_id });
    expect(renewed.status).toBe(200);
    expect(Date.parse(renewed.body.expires_at)).toBeGreaterThan(Date.now() - 5_000);
  });

  it('gives the lease to exactly one of many concurrent rollers', async () => {
    const sinkId = await insertSink(api.pool, api);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => lease(sinkId, `roller-${i}`)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.error.code === 'lease_held')).toHaveLength(11);
  });

  it('refuses unknown or deleted sinks and bad bodies', async () => {
    const deleted = await insertSink(api.pool, api, { state: 'deleted' });
    for (const sinkId of ['snk_000000000000', deleted]) {
      const res = await lease(sinkId, 'r');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('sink_not_found');
    }
    expect((await lease('not-a-sink', 'r')).status).toBe(400);
    const sinkId = await insertSink(api.pool, api);
    for (const body of [{ roller_id: 'r' }, { roller_id: 'r', ttl_seconds: 1 }, { roller_id: 'has space', ttl_seconds: 30 }, { roller_id: 'r', ttl_seconds: 30, extra: 1 }]) {
      const res = await api.callInternal('POST', `/internal/sinks/${sinkId}/lease`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });
});

describe('roll intents and reports', () => {
  const snapshot = '9223372036854775807';

  async function counters(sinkId: string) {
    const sink = (await queryOne<{ last_roll: any; rejects_rows_total: string; rejects_batches: string; rejects_last_at: Date | null }>(
      api.pool,
      'SELECT last_roll, rejects_rows_total, rejects_batches, rejects_last_at FROM sinks WHERE id = $1',
      [sinkId],
    ))!;
    const usage = await queryOne<{ rows_rejected: string }>(api.pool, 'SELECT rows_rejected FROM usage_ingest WHERE sink_id = $1', [sinkId]);
    const audits = await query<{ details: any }>(api.pool, `SELECT details FROM audit_events WHERE event = 'sink.roll' AND subject = $1 ORDER BY id`, [sinkId]);
    const ledger = await query<{ batch_id: string; state: string; snapshot_id: string | null; rejected_rows: number | null; committed_at: Date | null }>(
      api.pool,
      'SELECT batch_id, state, snapshot_id, rejected_rows, committed_at FROM sink_batches WHERE sink_id = $1 ORDER BY batch_id',
      [sinkId],
    );
    return { sink, usage, audits, ledger };
  }

  it('records the intent, then the report settles ledger, last_roll, rejects, usage and audit; a replay changes nothing', async () => {
    const sinkId = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, sinkId, [
      { batch_id: 'b1', age_seconds: 120, rows: 10 },
      { batch_id: 'b2', age_seconds: 100, rows: 10 },
      { batch_id: 'b3', age_seconds: 90, rows: 5 },
      { batch_id: 'b4', age_seconds: 10, rows: 3 },
    ]);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);

    const created = await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: snapshot, batch_ids: ['b1', 'b2', 'b3'] });
    expect(created.status, created.text).toBe(201);
    const intent = RollIntent.parse(created.body);
    expect(intent).toMatchObject({ sink_id: sinkId, snapshot_id: snapshot, batch_ids: ['b1', 'b2', 'b3'], state: 'open', roller_id: 'roller-a', closed_at: null });
    // A retried POST of the same intent answers the recorded one; another intent for the snapshot is a conflict.
    const again = await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: snapshot, batch_ids: ['b3', 'b2', 'b1'] });
    expect(again.status).toBe(200);
    expect(again.body.roll_id).toBe(intent.roll_id);
    const other = await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: snapshot, batch_ids: ['b4'] });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('roll_conflict');

    const open = await api.callInternal('GET', `/internal/sinks/${sinkId}/rolls?state=open`);
    expect(open.body.rolls.map((r: RollIntent) => r.roll_id)).toEqual([intent.roll_id]);

    const report = {
      lease_id,
      roll_id: intent.roll_id,
      snapshot_id: snapshot,
      batches: [
        { batch_id: 'b1', rows: 10, rejected_rows: 0 },
        { batch_id: 'b2', rows: 8, rejected_rows: 2 },
        { batch_id: 'b3', rows: 0, rejected_rows: 5 },
      ],
      rows: 18,
      rejected_rows: 7,
      seconds: 1.25,
      attempts: 2,
      started_at: '2026-11-29T10:00:00.123456Z',
      outcome: 'committed',
    };
    const first = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, report);
    expect(first.status, first.text).toBe(200);
    expect(RollReportResult.parse(first.body)).toEqual({
      roll_id: intent.roll_id,
      sink_id: sinkId,
      outcome: 'committed',
      snapshot_id: snapshot,
      ledger: { committed: 3, already_committed: 0, unknown: 0 },
      replayed: false,
    });

    const after = await counters(sinkId);
    expect(after.ledger.map((b) => [b.batch_id, b.state, b.snapshot_id, b.rejected_rows])).toEqual([
      ['b1', 'committed', snapshot, 0],
      ['b2', 'committed', snapshot, 2],
      ['b3', 'committed', snapshot, 5],
      ['b4', 'pending', null, null],
    ]);
    expect(after.sink.last_roll).toMatchObject({ batches: 3, rows: 18, rejected_rows: 7, snapshot_id: snapshot, seconds: 1.25 });
    expect(typeof after.sink.last_roll.snapshot_id).toBe('string');
    expect(Date.now() - Date.parse(after.sink.last_roll.at)).toBeLessThan(60_000);
    expect(after.sink).toMatchObject({ rejects_rows_total: '7', rejects_batches: '2' });
    expect(after.sink.rejects_last_at).not.toBeNull();
    expect(after.usage).toEqual({ rows_rejected: '7' });
    expect(after.audits).toHaveLength(1);
    expect(after.audits[0]!.details).toMatchObject({ roll_id: intent.roll_id, outcome: 'committed', snapshot_id: snapshot, batches: 3, rows: 18, rejected_rows: 7, attempts: 2, roller_id: 'roller-a' });
    expect((await api.callInternal('GET', `/internal/sinks/${sinkId}/rolls?state=open`)).body.rolls).toEqual([]);
    const closed = (await api.callInternal('GET', `/internal/sinks/${sinkId}/rolls?state=committed`)).body.rolls;
    expect(closed).toHaveLength(1);
    expect(closed[0].closed_at).not.toBeNull();

    // The roller's view: b4 alone pending, last_roll_at set, no longer due.
    const view = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks')).body).sinks.find((s) => s.id === sinkId)!;
    expect(after.sink.last_roll.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(view).toMatchObject({ pending: { batches: 1 }, due: false, last_roll_at: after.sink.last_roll.at });

    // The same report again (a retry after a lost answer), with or without the roll id: nothing moves.
    for (const replay of [report, { ...report, roll_id: undefined }]) {
      const res = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, replay);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ ...first.body, replayed: true });
    }
    expect(await counters(sinkId)).toEqual(after);

    // A different report for the reported roll is refused.
    const changed = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, { ...report, snapshot_id: null, outcome: 'empty', rows: 0, batches: report.batches.map((b) => ({ ...b, rows: 0 })) });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('roll_conflict');
  });

  it('refuses reports that disagree with their intent, or come from a lease taken over', async () => {
    const sinkId = await insertSink(api.pool, api);
    await insertBatches(api.pool, sinkId, [{ batch_id: 'x1' }, { batch_id: 'x2' }]);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    const intent = RollIntent.parse((await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: '42', batch_ids: ['x1'] })).body);
    const base = { lease_id, roll_id: intent.roll_id, rows: 1, rejected_rows: 0, seconds: 1, attempts: 1, started_at: new Date().toISOString(), outcome: 'committed' };
    const wrongSnapshot = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, { ...base, snapshot_id: '43', batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] });
    expect(wrongSnapshot.status).toBe(409);
    expect(wrongSnapshot.body.error).toMatchObject({ code: 'roll_conflict', roll: { roll_id: intent.roll_id, snapshot_id: '42' } });
    const stranger = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, { ...base, snapshot_id: '42', batches: [{ batch_id: 'x2', rows: 1, rejected_rows: 0 }] });
    expect(stranger.status).toBe(409);
    const unknownRoll = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, {
      ...base,
      roll_id: '00000000-0000-4000-8000-000000000000',
      snapshot_id: '42',
      batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }],
    });
    expect(unknownRoll.status).toBe(404);
    expect(unknownRoll.body.error.code).toBe('roll_not_found');

    // Sums must add up, snapshot ids are 63-bit decimal strings, outcomes say what they name.
    for (const bad of [
      { ...base, snapshot_id: '42', batches: [{ batch_id: 'x1', rows: 2, rejected_rows: 0 }] },
      { ...base, snapshot_id: '9223372036854775808', batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] },
      { ...base, snapshot_id: 42, batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] },
      { ...base, snapshot_id: null, batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] },
      { ...base, outcome: 'failed', snapshot_id: null, batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] },
    ]) {
      const res = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }

    // The lease expires and another roller takes it: the old holder can neither record nor report.
    await query(api.pool, `UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [sinkId]);
    const expiredIntent = await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: '77', batch_ids: ['x2'] });
    expect(expiredIntent.status).toBe(409);
    expect(expiredIntent.body.error.code).toBe('lease_lost');
    expect((await lease(sinkId, 'roller-b')).status).toBe(200);
    const lost = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, { ...base, snapshot_id: '42', batches: [{ batch_id: 'x1', rows: 1, rejected_rows: 0 }] });
    expect(lost.status).toBe(409);
    expect(lost.body.error).toMatchObject({ code: 'lease_lost', holder: { roller_id: 'roller-b' } });
    expect((await queryOne<{ state: string }>(api.pool, `SELECT state FROM sink_batches WHERE sink_id = $1 AND batch_id = 'x1'`, [sinkId]))!.state).toBe('pending');
  });

  it('takes reports without an intent: committed, empty (all rejected) and failed, each idempotent', async () => {
    const sinkId = await insertSink(api.pool, api);
    await insertBatches(api.pool, sinkId, [{ batch_id: 'c1', rows: 4 }, { batch_id: 'e1', rows: 3 }, { batch_id: 'gone', state: 'committed' }]);
    const { lease_id } = Lease.parse((await lease(sinkId, `roller-${suffix()}`)).body);
    const base = { lease_id, seconds: 0.5, attempts: 1 };

    const committed = {
      ...base,
      snapshot_id: '1001',
      batches: [{ batch_id: 'c1', rows: 4, rejected_rows: 0 }, { batch_id: 'gone', rows: 1, rejected_rows: 0 }, { batch_id: 'never-seen', rows: 1, rejected_rows: 0 }],
      rows: 6,
      rejected_rows: 0,
      started_at: '2026-11-29T10:00:00Z',
      outcome: 'committed',
    };
    const c = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, committed);
    expect(c.status, c.text).toBe(200);
    expect(c.body).toMatchObject({ outcome: 'committed', ledger: { committed: 1, already_committed: 1, unknown: 1 }, replayed: false });
    expect((await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, committed)).body).toEqual({ ...c.body, replayed: true });

    const empty = {
      ...base,
      snapshot_id: null,
      batches: [{ batch_id: 'e1', rows: 0, rejected_rows: 3 }],
      rows: 0,
      rejected_rows: 3,
      started_at: '2026-11-29T10:01:00Z',
      outcome: 'empty',
    };
    const e = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, empty);
    expect(e.status, e.text).toBe(200);
    expect(e.body).toMatchObject({ outcome: 'empty', snapshot_id: null, ledger: { committed: 1 } });
    expect((await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, empty)).body).toEqual({ ...e.body, replayed: true });
    const e1 = (await queryOne<{ state: string; snapshot_id: string | null; rejected_rows: number }>(
      api.pool,
      `SELECT state, snapshot_id, rejected_rows FROM sink_batches WHERE sink_id = $1 AND batch_id = 'e1'`,
      [sinkId],
    ))!;
    expect(e1).toEqual({ state: 'committed', snapshot_id: null, rejected_rows: 3 });

    const failed = { ...base, snapshot_id: null, batches: [], rows: 0, rejected_rows: 0, started_at: '2026-11-29T10:02:00Z', outcome: 'failed', error: 'catalog unavailable' };
    const f = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, failed);
    expect(f.status, f.text).toBe(200);
    expect((await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, failed)).body.replayed).toBe(true);

    const sink = (await queryOne<{ last_roll: any; rejects_rows_total: string; rejects_batches: string }>(
      api.pool,
      'SELECT last_roll, rejects_rows_total, rejects_batches FROM sinks WHERE id = $1',
      [sinkId],
    ))!;
    // The failed roll left last_roll as the empty roll set it.
    expect(sink.last_roll).toMatchObject({ batches: 1, rows: 0, rejected_rows: 3, snapshot_id: null });
    expect(sink).toMatchObject({ rejects_rows_total: '3', rejects_batches: '1' });
    const audits = await query<{ details: any }>(api.pool, `SELECT details FROM audit_events WHERE event = 'sink.roll' AND subject = $1 ORDER BY id`, [sinkId]);
    expect(audits.map((a) => a.details.outcome)).toEqual(['committed', 'empty', 'failed']);
    expect(audits[2]!.details.error).toBe('catalog unavailable');
  });

  it('closes an intent as failed when the roller abandons it, leaving the ledger pending', async () => {
    const sinkId = await insertSink(api.pool, api);
    await insertBatches(api.pool, sinkId, [{ batch_id: 'z1' }]);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    const intent = RollIntent.parse((await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: '555', batch_ids: ['z1'] })).body);
    const res = await api.callInternal('POST', `/internal/sinks/${sinkId}/roll`, {
      lease_id,
      roll_id: intent.roll_id,
      snapshot_id: null,
      batches: [],
      rows: 0,
      rejected_rows: 0,
      seconds: 3,
      attempts: 5,
      started_at: new Date().toISOString(),
      outcome: 'failed',
      error: 'commit conflict after 5 attempts',
    });
    expect(res.status, res.text).toBe(200);
    const rolls = (await api.callInternal('GET', `/internal/sinks/${sinkId}/rolls`)).body.rolls;
    expect(rolls).toMatchObject([{ roll_id: intent.roll_id, state: 'failed', snapshot_id: '555' }]);
    expect((await queryOne<{ state: string }>(api.pool, 'SELECT state FROM sink_batches WHERE sink_id = $1', [sinkId]))!.state).toBe('pending');
    // Its snapshot id cannot be reused for another intent.
    const reuse = await api.callInternal('POST', `/internal/sinks/${sinkId}/rolls`, { lease_id, snapshot_id: '555', batch_ids: ['z1'] });
    expect(reuse.status).toBe(409);
  });
});

describe('PUT /internal/sinks/{id}/state', () => {
  it('moves a sink to table_missing (never due) and back, audited, under the lease', async () => {
    const sinkId = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, sinkId, [{ batch_id: 'old', age_seconds: 600 }]);
    expect((await dueIds()).has(sinkId)).toBe(true);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);

    const missing = await api.callInternal('PUT', `/internal/sinks/${sinkId}/state`, { lease_id, state: 'table_missing', reason: 'LoadTable answered 404' });
    expect(missing.status, missing.text).toBe(200);
    expect(missing.body).toEqual({ sink_id: sinkId, state: 'table_missing', previous_state: 'active' });
    expect((await dueIds()).has(sinkId)).toBe(false);
    expect((await api.callInternal('PUT', `/internal/sinks/${sinkId}/state`, { lease_id, state: 'table_missing' })).body.previous_state).toBe('table_missing');

    const back = await api.callInternal('PUT', `/internal/sinks/${sinkId}/state`, { lease_id, state: 'active' });
    expect(back.body).toEqual({ sink_id: sinkId, state: 'active', previous_state: 'table_missing' });
    expect((await dueIds()).has(sinkId)).toBe(true);

    const audits = await query<{ details: any }>(api.pool, `SELECT details FROM audit_events WHERE event = 'sink.state' AND subject = $1 ORDER BY id`, [sinkId]);
    expect(audits.map((a) => [a.details.from, a.details.to])).toEqual([
      ['active', 'table_missing'],
      ['table_missing', 'active'],
    ]);
    expect(audits[0]!.details.reason).toBe('LoadTable answered 404');

    for (const body of [{ lease_id, state: 'deleted' }, { lease_id: '00000000-0000-4000-8000-000000000000', state: 'active' }]) {
      const res = await api.callInternal('PUT', `/internal/sinks/${sinkId}/state`, body);
      expect(res.status).toBe(body.state === 'deleted' ? 400 : 409);
    }
  });
});

describe('PUT /internal/sinks/{id}/roll-error', () => {
  it('counts every failed roll by reason on the status page, intents or not, and a good roll ends the run', async () => {
    const sinkId = await insertSink(api.pool, api, { roll_seconds: 60 });
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    // Rolls that failed before any intent: the store, then the catalog out of reach.
    for (const code of ['store_unavailable', 'store_unavailable', 'catalog_unavailable']) {
      const res = await api.callInternal('PUT', `/internal/sinks/${sinkId}/roll-error`, { lease_id, error: { code, message: `${code} in a test` } });
      expect(res.status, res.text).toBe(200);
    }
    const lastDay = async () => {
      const res = await call(api.app, 'GET', '/v1/status', { key: api.adminKey });
      expect(res.status, res.text).toBe(200);
      return (res.body.sinks as Array<{ id: string; last_day: unknown; roll_error: unknown }>).find((s) => s.id === sinkId)!;
    };
    expect(await lastDay()).toMatchObject({
      last_day: { committed_rolls: 0, failed_rolls: 3, failure_reasons: { store_unavailable: 2, catalog_unavailable: 1 } },
      roll_error: { code: 'catalog_unavailable', attempts: 3 },
    });
    expect((await api.callInternal('PUT', `/internal/sinks/${sinkId}/roll-error`, { lease_id, error: null })).status).toBe(200);
    // The run of failures ends; the day's count of them stays.
    expect(await lastDay()).toMatchObject({ last_day: { failed_rolls: 3 }, roll_error: null });
  });
});

describe('POST /internal/sinks/{id}/upkeep', () => {
  const startedAt = '2026-11-30T10:00:00.123456Z';
  const done = {
    started_at: startedAt,
    seconds: 4.25,
    outcome: 'done',
    snapshot_ids: ['9223372036854775807'],
    files: { data_before: 120, data_after: 4, manifests_before: 30, manifests_after: 2 },
    rewritten: { files: 118, bytes: 12_582_912, rows: 1_000_000 },
    expired_snapshots: 5,
    deleted_files: { data: 3, manifests: 4, manifest_lists: 5 },
    snapshots_kept: 20,
    orphan_files: { deleted: 2, bytes: 4096 },
  };
  const failed = {
    ...done,
    started_at: '2026-11-30T11:00:00Z',
    outcome: 'failed',
    snapshot_ids: [],
    files: { data_before: 4, data_after: 4, manifests_before: 2, manifests_after: 2 },
    rewritten: { files: 0, bytes: 0, rows: 0 },
    expired_snapshots: 0,
    deleted_files: { data: 0, manifests: 0, manifest_lists: 0 },
    orphan_files: { deleted: 0, bytes: 0 },
    error: { code: 'catalog_unavailable', message: 'LoadTable answered 503' },
  };
  const post = (sinkId: string, body: unknown) => api.callInternal('POST', `/internal/sinks/${sinkId}/upkeep`, body);

  /** Everything a report may change: the runs, the sink's last upkeep, the audit events. */
  async function recorded(sinkId: string) {
    const runs = await query<{ id: string; lease_id: string; roller_id: string; started_at: Date; outcome: string; report: any }>(
      api.pool,
      'SELECT id, lease_id, roller_id, started_at, outcome, report FROM sink_upkeeps WHERE sink_id = $1 ORDER BY started_at',
      [sinkId],
    );
    const { last_upkeep } = (await queryOne<{ last_upkeep: any }>(api.pool, 'SELECT last_upkeep FROM sinks WHERE id = $1', [sinkId]))!;
    const audits = await query<{ details: any }>(api.pool, `SELECT details FROM audit_events WHERE event = 'sink.upkeep' AND subject = $1 ORDER BY id`, [sinkId]);
    return { runs, last_upkeep, audits };
  }

  async function views(sinkId: string) {
    const list = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks')).body);
    const got = await call(api.app, 'GET', `/v1/sinks/${sinkId}`, { key: api.adminKey });
    expect(got.status, got.text).toBe(200);
    return { asOf: list.as_of, roller: list.sinks.find((s) => s.id === sinkId)!, sink: Sink.parse(got.body) };
  }

  it('records the run, the last upkeep and an audit event; the roller and the public view show it; a replay changes nothing', async () => {
    const sinkId = await insertSink(api.pool, api);
    const before = await views(sinkId);
    expect(before.roller.upkeep).toEqual({ last_at: null, last_outcome: null, keep_snapshots: 20, min_snapshot_age_seconds: 600 });
    expect(before.sink.upkeep).toEqual({ keep_snapshots: 20, min_snapshot_age_seconds: 600, last_run: null });
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);

    const first = await post(sinkId, { lease_id, ...done });
    expect(first.status, first.text).toBe(200);
    const result = UpkeepReportResult.parse(first.body);
    expect(result).toMatchObject({ sink_id: sinkId, outcome: 'done', started_at: startedAt, replayed: false });

    const after = await recorded(sinkId);
    const { started_at: _, ...figures } = done;
    expect(after.runs).toHaveLength(1);
    expect(after.runs[0]).toMatchObject({ id: result.upkeep_id, lease_id, roller_id: 'roller-a', outcome: 'done', report: figures });
    expect(after.audits.map((a) => a.details)).toEqual([{ upkeep_id: result.upkeep_id, roller_id: 'roller-a', ...done }]);

    const { asOf, roller, sink } = await views(sinkId);
    expect(roller.upkeep).toEqual({ last_at: result.recorded_at, last_outcome: 'done', keep_snapshots: 20, min_snapshot_age_seconds: 600 });
    expect(Date.parse(asOf) - Date.parse(result.recorded_at)).toBeLessThan(60_000);
    expect(sink.upkeep.last_run).toEqual({
      at: result.recorded_at,
      outcome: 'done',
      seconds: 4.25,
      files_before: 120,
      files_after: 4,
      manifests_before: 30,
      manifests_after: 2,
      expired_snapshots: 5,
      rewritten_bytes: 12_582_912,
      snapshots_kept: 20,
      orphan_files_deleted: 2,
      error: null,
    });
    const listed = SinkList.parse((await call(api.app, 'GET', '/v1/sinks', { key: api.adminKey })).body).sinks.find((s) => s.id === sinkId)!;
    expect(listed.upkeep).toEqual(sink.upkeep);

    // The same report again (a retry after a lost answer), its keys in another order: the first answer.
    const reordered = Object.fromEntries(Object.entries({ lease_id, ...done }).reverse());
    for (const replay of [{ lease_id, ...done }, reordered]) {
      const res = await post(sinkId, replay);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ ...first.body, replayed: true });
    }
    // Other figures under the same start are refused.
    const changed = await post(sinkId, { lease_id, ...done, snapshots_kept: 19 });
    expect(changed.status).toBe(409);
    expect(changed.body.error).toMatchObject({ code: 'upkeep_conflict', upkeep: { upkeep_id: result.upkeep_id, outcome: 'done' } });
    expect(await recorded(sinkId)).toEqual(after);
  });

  it('keeps the run that started last as the last upkeep, failures included', async () => {
    const sinkId = await insertSink(api.pool, api);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    const fail = await post(sinkId, { lease_id, ...failed });
    expect(fail.status, fail.text).toBe(200);
    const { roller, sink } = await views(sinkId);
    expect(roller.upkeep).toMatchObject({ last_at: fail.body.recorded_at, last_outcome: 'failed' });
    expect(sink.upkeep.last_run).toMatchObject({ outcome: 'failed', files_before: 4, files_after: 4, error: failed.error });

    // The first report of a run that started earlier, arriving late: recorded and audited, not the last.
    const late = await post(sinkId, { lease_id, ...done });
    expect(late.status, late.text).toBe(200);
    const state = await recorded(sinkId);
    expect(state.runs.map((r) => r.outcome)).toEqual(['done', 'failed']);
    expect(state.audits.map((a) => a.details.outcome)).toEqual(['failed', 'done']);
    expect((await views(sinkId)).sink.upkeep.last_run).toEqual(sink.upkeep.last_run);
  });

  it("refuses a lease that is not the caller's, an unknown sink and bad bodies, recording nothing", async () => {
    const sinkId = await insertSink(api.pool, api);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    const stranger = await post(sinkId, { ...done, lease_id: '00000000-0000-4000-8000-000000000000' });
    expect(stranger.status).toBe(409);
    expect(stranger.body.error).toMatchObject({ code: 'lease_lost', holder: { roller_id: 'roller-a' } });

    // The lease expires and another roller takes it: the old holder's report is refused.
    await query(api.pool, `UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [sinkId]);
    expect((await lease(sinkId, 'roller-b')).status).toBe(200);
    const lost = await post(sinkId, { lease_id, ...done });
    expect(lost.status).toBe(409);
    expect(lost.body.error).toMatchObject({ code: 'lease_lost', holder: { roller_id: 'roller-b' } });

    const unknown = await post('snk_000000000000', { lease_id, ...done });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('sink_not_found');
    for (const bad of [
      { lease_id, ...done, outcome: 'nothing' },
      // Orphan files deleted make a run done, never nothing.
      { lease_id, ...failed, outcome: 'nothing', error: undefined, orphan_files: { deleted: 1, bytes: 1 } },
      { lease_id, ...failed, error: undefined },
      { lease_id, ...done, snapshot_ids: [42] },
      { lease_id, ...done, roll_id: '00000000-0000-4000-8000-000000000000' },
      { ...done },
    ]) {
      const res = await post(sinkId, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect(await recorded(sinkId)).toEqual({ runs: [], last_upkeep: null, audits: [] });
  });

  it('writes the run and its audit event in one transaction: neither without the other', async () => {
    const sinkId = await insertSink(api.pool, api);
    const { lease_id } = Lease.parse((await lease(sinkId, 'roller-a')).body);
    const refuse = `refuse_${suffix()}`;
    await query(api.pool, `CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    try {
      for (const [table, column] of [['audit_events', 'subject'], ['sink_upkeeps', 'sink_id']] as const) {
        await query(api.pool, `CREATE TRIGGER ${refuse} BEFORE INSERT ON ${table} FOR EACH ROW WHEN (NEW.${column} = '${sinkId}') EXECUTE FUNCTION ${refuse}()`);
        try {
          const res = await post(sinkId, { lease_id, ...done });
          expect(res.status, table).toBe(500);
          expect(res.body.error.code).toBe('internal_error');
        } finally {
          await query(api.pool, `DROP TRIGGER ${refuse} ON ${table}`);
        }
        expect(await recorded(sinkId), table).toEqual({ runs: [], last_upkeep: null, audits: [] });
      }
    } finally {
      await query(api.pool, `DROP FUNCTION ${refuse}()`);
    }
    // Once the database takes it, the same report is recorded as new.
    const res = await post(sinkId, { lease_id, ...done });
    expect(res.status, res.text).toBe(200);
    expect(res.body.replayed).toBe(false);
    expect((await recorded(sinkId)).audits).toHaveLength(1);
  });
});
