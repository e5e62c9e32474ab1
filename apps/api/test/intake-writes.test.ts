import type { CreatedSink } from '@tablemere/contracts';
import { queryOne, type Pool } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerWrites, type ClaimRequest } from '../src/domain/intake/writes.ts';
import { dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink, createTable, newBatchId } from './support/sinks.ts';
import { bodyDigest } from '../src/domain/intake/body-digest.ts';

let api: TestApi;
let sink: CreatedSink;
let projectId: string;
const ns = `api_writes_${suffix()}`;

beforeAll(async () => {
  api = await startTestApi();
  await createTable(api, ns, 'events');
  sink = await createSink(api.app, api.adminKey, { name: 'writes_in', table: `${ns}.events` });
  projectId = (await queryOne<{ project_id: string }>(api.pool, 'SELECT project_id FROM sinks WHERE id = $1', [sink.id]))!.project_id;
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

/** The test's pool, counting the ledger statements that go through it. */
function countingPool(pool: Pool): { pool: Pool; statements: () => number } {
  let statements = 0;
  const counting = {
    query: (config: { name?: string }, ...rest: unknown[]) => {
      if (config?.name === 'intake-write') statements++;
      return (pool.query as (...args: unknown[]) => unknown)(config, ...rest);
    },
  } as unknown as Pool;
  return { pool: counting, statements: () => statements };
}

const claimOf = (batchId: string): ClaimRequest => ({
  sinkId: sink.id,
  batchId,
  hashes: { digest: bodyDigest(Buffer.from(batchId), 'array') },
  bytes: 10,
  rows: 2,
  rejected: 1,
  reasons: [1],
  segmentId: '0000000aa-000000000000',
});

const row = (batchId: string) =>
  queryOne<{ state: string; reasons: number[] | null }>(api.pool, 'SELECT state, reasons FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sink.id, batchId]);
const claimed = { receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/), day: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) };
const counters = () =>
  queryOne<{ bytes: string; batches: string }>(api.pool, 'SELECT bytes, batches FROM usage_ingest WHERE sink_id = $1', [sink.id]);

describe('the intake ledger writes', () => {
  it('write the claims and settlements that arrive together in one statement, each with its own answer', async () => {
    const { pool, statements } = countingPool(api.pool);
    const writes = new LedgerWrites(pool);
    const [a, b, x] = [newBatchId(), newBatchId(), newBatchId()];
    const claimedA = await writes.claim(claimOf(a));
    expect(claimedA).toEqual(claimed);
    expect(statements()).toBe(1);
    const before = await counters();

    // Submitted together (as a segment's claims are): one statement for all of them.
    const pending = [
      writes.claim(claimOf(x)),
      writes.settle({ sinkId: sink.id, projectId, batchId: a, day: claimedA!.day, receivedAt: claimedA!.receivedAt, wireBytes: 12, segmentId: '0000000aa-000000000000', segmentOffset: 0 }),
      writes.claim(claimOf(b)),
      // The id just settled in the same statement: already in the ledger, so nothing is inserted.
      writes.claim(claimOf(a)),
      // A second claim of b in the same group: only the first is offered.
      writes.claim(claimOf(b)),
    ];
    const [claimedX, settledA, claimedB, againA, againB] = await Promise.all(pending);
    expect(statements()).toBe(2);
    expect(claimedX).toEqual(claimed);
    expect(settledA).toBe(true);
    expect(claimedB).toEqual(claimed);
    expect(againA).toBeUndefined();
    expect(againB).toBeUndefined();

    expect(await row(a)).toEqual({ state: 'pending', reasons: [1] });
    expect(await row(b)).toEqual({ state: 'storing', reasons: [1] });
    expect(await row(x)).toEqual({ state: 'storing', reasons: [1] });
    // The settlement counted once, in the same transaction.
    const after = await counters();
    expect(Number(after!.batches) - Number(before?.batches ?? 0)).toBe(1);
    expect(Number(after!.bytes) - Number(before?.bytes ?? 0)).toBe(10);
  });

  it('settle and claim nothing of a deleted sink, while the same statement writes a live one', async () => {
    await createTable(api, ns, 'gone');
    const gone = await createSink(api.app, api.adminKey, { name: 'gone_in', table: `${ns}.gone` });
    const { pool, statements } = countingPool(api.pool);
    const writes = new LedgerWrites(pool);
    const [c, d, e, y] = [newBatchId(), newBatchId(), newBatchId(), newBatchId()];
    const claimedC = await writes.claim({ ...claimOf(c), sinkId: gone.id });
    expect(claimedC).toEqual(claimed);
    await queryOne(api.pool, `UPDATE sinks SET deleted_at = now(), state = 'deleted' WHERE id = $1`, [gone.id]);

    const [claimedY, settledC, claimedD, claimedE] = await Promise.all([
      writes.claim(claimOf(y)),
      writes.settle({ sinkId: gone.id, projectId, batchId: c, day: claimedC!.day, receivedAt: claimedC!.receivedAt, wireBytes: 12, segmentId: '0000000aa-000000000000', segmentOffset: 0 }),
      writes.claim({ ...claimOf(d), sinkId: gone.id }),
      writes.claim(claimOf(e)),
    ]);
    expect(statements()).toBe(2);
    expect(claimedY).toEqual(claimed);
    expect(settledC).toBe(false);
    expect(claimedD).toBeUndefined();
    expect(claimedE).toEqual(claimed);
    const goneRow = await queryOne<{ state: string }>(api.pool, 'SELECT state FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [gone.id, c]);
    expect(goneRow).toEqual({ state: 'storing' });
    expect(await queryOne(api.pool, 'SELECT 1 FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [gone.id, d])).toBeUndefined();
    expect(await row(e)).toMatchObject({ state: 'storing' });
  });
});
