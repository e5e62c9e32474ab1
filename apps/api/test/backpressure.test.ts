import { Lease, RollIntent, type CreatedSink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import { ObjectStore } from '@tablemere/store';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKLOG_RETRY_AFTER, DRAIN_WINDOW_SECONDS } from '../src/domain/intake/drain.ts';
import { dropNamespace, stackS3, suffix, type Answer } from './support/harness.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { clearSinkObjects, createSink, createTable, otherApp, send } from './support/sinks.ts';

/** The cap of the capped app: this many batches waiting fill a sink's backlog. */
const CAP = 3;

let api: InternalTestApi;
let capped: Awaited<ReturnType<typeof otherApp>>;
const ns = `api_backpressure_${suffix()}`;
const sinks: CreatedSink[] = [];

beforeAll(async () => {
  api = await startInternalTestApi();
  capped = await otherApp(api, { sinkBacklog: { maxPendingBatches: CAP, maxPendingBytes: 1 << 30 } });
});
afterAll(async () => {
  await capped?.close();
  if (api) {
    const intake = new ObjectStore(stackS3(api.env), api.env.TABLEMERE_INTAKE_BUCKET!);
    for (const sink of sinks) await clearSinkObjects(intake, sink.id);
    await dropNamespace(api.env, ns);
  }
  await api?.close();
});

async function newSink(name: string): Promise<CreatedSink> {
  await createTable(api, ns, name);
  const sink = await createSink(api.app, api.adminKey, { name: `${name}_${suffix()}`, table: `${ns}.${name}` });
  sinks.push(sink);
  return sink;
}

/** Sends `count` one-row batches through `app`, each answered 202; their ids. */
async function fill(app: FastifyInstance, sink: CreatedSink, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const batchId = `bp-${suffix()}-${i}`;
    const res = await send(app, sink, `[{"x": ${i}}]`, { batchId });
    expect(res.status, res.text).toBe(202);
    ids.push(batchId);
  }
  return ids;
}

/** One committed roll of `ids` through the roller's own routes (lease, intent, report, release). */
async function roll(sink: CreatedSink, ids: string[], snapshot: string, startedAt: Date): Promise<void> {
  const lease = await api.callInternal('POST', `/internal/sinks/${sink.id}/lease`, { roller_id: 'bp-roller', ttl_seconds: 60 });
  expect(lease.status, lease.text).toBe(200);
  const { lease_id } = Lease.parse(lease.body);
  const intent = await api.callInternal('POST', `/internal/sinks/${sink.id}/rolls`, { lease_id, snapshot_id: snapshot, batch_ids: ids });
  expect(intent.status, intent.text).toBe(201);
  const report = await api.callInternal('POST', `/internal/sinks/${sink.id}/roll`, {
    lease_id,
    roll_id: RollIntent.parse(intent.body).roll_id,
    snapshot_id: snapshot,
    batches: ids.map((batch_id) => ({ batch_id, rows: 1, rejected_rows: 0 })),
    rows: ids.length,
    rejected_rows: 0,
    seconds: 1,
    attempts: 1,
    started_at: startedAt.toISOString(),
    outcome: 'committed',
  });
  expect(report.status, report.text).toBe(200);
  expect(report.body.ledger).toEqual({ committed: ids.length, already_committed: 0, unknown: 0 });
  expect((await api.callInternal('DELETE', `/internal/sinks/${sink.id}/lease/${lease_id}`)).status).toBe(200);
}

/**
 * Drain history: `batches` sent, then rolled in `rolls` rolls, their rows then dated so that
 * the first began `spanSeconds` ago: the sink's drain rate is `batches / spanSeconds`.
 */
async function drained(sink: CreatedSink, batches: number, rolls: number, spanSeconds: number): Promise<void> {
  const ids = await fill(api.app, sink, batches);
  const per = Math.ceil(batches / rolls);
  for (let r = 0; r < rolls; r++) await roll(sink, ids.slice(r * per, (r + 1) * per), String(1000 + r), new Date(Date.now() - (rolls - r) * 1000));
  // Evenly over the span, the first beginning `spanSeconds` ago, the last closed a second ago.
  await query(
    api.pool,
    `UPDATE sink_rolls r SET created_at = now() - make_interval(secs => $2 * (1 - o.i::float8 / $3)),
                             closed_at = now() - make_interval(secs => greatest($2 * (1 - (o.i + 1)::float8 / $3), 1))
       FROM (SELECT id, row_number() OVER (ORDER BY created_at) - 1 AS i FROM sink_rolls WHERE sink_id = $1) o
      WHERE r.id = o.id`,
    [sink.id, spanSeconds, rolls],
  );
}

interface Refusal {
  seconds: number;
  details: Record<string, unknown>;
}

/** `count` sends refused 429 backlog_full by the capped app, one after another. */
async function refusals(sink: CreatedSink, count: number): Promise<Refusal[]> {
  const out: Refusal[] = [];
  for (let i = 0; i < count; i++) {
    const res: Answer = await send(capped.app, sink, '[{"x": 0}]');
    expect(res.status, res.text).toBe(429);
    expect(res.body.error.code).toBe('backlog_full');
    const seconds = Number(res.headers['retry-after']);
    expect(res.body.error.retry_after).toBe(seconds);
    out.push({ seconds, details: res.body.error });
  }
  return out;
}

describe("backlog_full's Retry-After", () => {
  it('follows the drain rate of the committed rolls: refused producers asked back one drain interval apart, within the bounds', async () => {
    const sink = await newSink('slow');
    // 6 batches rolled over 50 s: 0.12 batches/s, room for one batch every ~8.3 s.
    await drained(sink, 6, 3, 50);
    await fill(capped.app, sink, CAP);
    const answers = await refusals(sink, 9);
    const rate = answers[0]!.details.drain_batches_per_second as number;
    expect(rate).toBeCloseTo(6 / 50, 2);
    expect(answers[0]!.details).toMatchObject({ pending_batches: CAP, max_pending_batches: CAP, drain_window_seconds: DRAIN_WINDOW_SECONDS });
    const interval = 1 / rate;
    // The k-th refusal's turn is k + 1 intervals away (the first once the backlog is one batch
    // under its cap), rounded down or up at random; turns past the maximum start over.
    const perQueue = Math.floor(BACKLOG_RETRY_AFTER.max / interval);
    expect(perQueue).toBe(7);
    const turns = Array.from({ length: 9 }, (_, k) => ((k % perQueue) + 1) * interval);
    const seconds = answers.map((a) => a.seconds);
    seconds.forEach((s, k) => {
      expect(s, `refusal ${k}: ${seconds.join(', ')}`).toBeGreaterThanOrEqual(Math.floor(turns[k]!) - 1);
      expect(s, `refusal ${k}: ${seconds.join(', ')}`).toBeLessThanOrEqual(Math.ceil(turns[k]!) + 1);
      expect(s).toBeGreaterThanOrEqual(BACKLOG_RETRY_AFTER.min);
      expect(s).toBeLessThanOrEqual(BACKLOG_RETRY_AFTER.max);
    });
    // Spread: the first seven climb towards the maximum, then the queue starts over.
    for (let k = 1; k < 7; k++) expect(seconds[k]!, seconds.join(', ')).toBeGreaterThan(seconds[k - 1]!);
    expect(seconds[7]!).toBeLessThan(seconds[6]!);
  });

  it('is the minimum, 1 s, while the roller drains far faster than producers are refused', async () => {
    const sink = await newSink('fast');
    // 40 batches rolled over 2 s: 20 batches/s, a turn every 50 ms.
    await drained(sink, 40, 2, 2);
    await fill(capped.app, sink, CAP);
    const answers = await refusals(sink, 8);
    expect(answers[0]!.details.drain_batches_per_second).toBeGreaterThanOrEqual(10);
    expect(answers.map((a) => a.seconds)).toEqual(Array(8).fill(BACKLOG_RETRY_AFTER.min));
  });

  it('lets a send in as soon as a roll made room, not once the cached figures expire', async () => {
    const sink = await newSink('room');
    const ids = await fill(capped.app, sink, CAP);
    await refusals(sink, 1);
    await roll(sink, ids.slice(0, 2), '2000', new Date());
    // Within the second the figures are kept: the roll's report changed the sink's last_roll.
    await fill(capped.app, sink, 2);
    await refusals(sink, 1);
  });

  it('is the default, spread, for a sink that has never drained', async () => {
    const sink = await newSink('never');
    await fill(capped.app, sink, CAP);
    const answers = await refusals(sink, 16);
    const seconds = answers.map((a) => a.seconds);
    for (const s of seconds) {
      expect(s).toBeGreaterThanOrEqual(BACKLOG_RETRY_AFTER.min);
      expect(s).toBeLessThanOrEqual(BACKLOG_RETRY_AFTER.unknown);
    }
    // Spread over the range (16 draws from 10 values: at least 4 distinct but for one chance in ~10^6).
    expect(new Set(seconds).size, seconds.join(', ')).toBeGreaterThanOrEqual(4);
    expect(answers[0]!.details).toMatchObject({ drain_batches_per_second: null, pending_batches: CAP, max_pending_batches: CAP });
  });
});
