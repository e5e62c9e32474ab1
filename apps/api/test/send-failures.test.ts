import type { S3Client } from '@aws-sdk/client-s3';
import { createPool, query } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeedMini, type WeedMini } from '../../../packages/store/test/support/weed-mini.ts';
import { dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';
import { createSink, createTable, newBatchId, otherApp, send } from './support/sinks.ts';

/**
 * The send route when what it writes to fails: a store of its own (a throwaway weed mini)
 * that is stopped or refuses writes, and a database that cannot be reached. Nothing may be
 * answered 202, and no ledger row may claim a batch that is not stored.
 */
let api: TestApi;
let weed: WeedMini;
const ns = `api_sendfail_${suffix()}`;

beforeAll(async () => {
  [api, weed] = await Promise.all([startTestApi(), startWeedMini()]);
  for (const table of ['quota', 'down', 'nodb']) await createTable(api, ns, table);
});
afterAll(async () => {
  await weed?.stop();
  await dropNamespace(api.env, ns);
  await api?.close();
});

const ledgerRows = (sinkId: string, batchId: string) => query(api.pool, 'SELECT state FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sinkId, batchId]);

describe('the send route when the store or the database fails', () => {
  it('answers 409 quota_exceeded when the intake bucket refuses writes but can be read, and keeps no claim', async () => {
    await weed.shell([`s3.configure -user=reader -access_key=readerkey -secret_key=readersecret -actions=Read,List -buckets=${weed.intakeBucket} -apply`]);
    const readerClient: S3Client = weed.client({ accessKeyId: 'readerkey', secretAccessKey: 'readersecret' });
    const reading = await otherApp(api, { s3: readerClient, intakeBucket: weed.intakeBucket });
    try {
      const sink = await createSink(api.app, api.adminKey, { name: `quota_${suffix()}`, table: `${ns}.quota` });
      // The identity takes a moment to reach the S3 gateway: until then its key is unknown (503).
      let res = await send(reading.app, sink, '[{"x": 1}]');
      for (let i = 0; i < 50 && res.status === 503; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        res = await send(reading.app, sink, '[{"x": 1}]', { batchId: newBatchId() });
      }
      expect(res.status, res.text).toBe(409);
      expect(res.body.error.code).toBe('quota_exceeded');
      expect(await query(api.pool, 'SELECT batch_id FROM sink_batches WHERE sink_id = $1', [sink.id])).toEqual([]);
    } finally {
      await reading.close();
      readerClient.destroy();
    }
  });

  it('answers 503 with Retry-After when the store is stopped during a send, and no ledger row claims the batch', async () => {
    const client = weed.client();
    const ownStore = await otherApp(api, { s3: client, intakeBucket: weed.intakeBucket });
    try {
      const sink = await createSink(api.app, api.adminKey, { name: `down_${suffix()}`, table: `${ns}.down` });
      const before = newBatchId();
      expect((await send(ownStore.app, sink, '[{"x": 1}]', { batchId: before })).status).toBe(202);

      await weed.kill();
      const batchId = newBatchId();
      const res = await send(ownStore.app, sink, '[{"x": 2}, {"x": 3}]', { batchId });
      expect(res.status, res.text).toBe(503);
      expect(res.body.error.code).toBe('intake_unavailable');
      expect(res.headers['retry-after']).toBe('5');
      expect(await ledgerRows(sink.id, batchId)).toEqual([]);
      // The batch accepted before is untouched, and lag counts only it.
      expect(await ledgerRows(sink.id, before)).toEqual([{ state: 'pending' }]);
      const view = await api.app.inject({ method: 'GET', url: `/v1/sinks/${sink.id}`, headers: { authorization: `Bearer ${api.adminKey}` } });
      expect(view.json().lag).toMatchObject({ batches_waiting: 1, bytes_waiting: '{"x": 1}'.length });
      // The producer's retry meets the same answer, never a 202.
      expect((await send(ownStore.app, sink, '[{"x": 2}, {"x": 3}]', { batchId })).status).toBe(503);
      expect(await ledgerRows(sink.id, batchId)).toEqual([]);
      expect(ownStore.rawLogs.join('\n')).not.toContain(sink.send_key);
    } finally {
      await ownStore.close();
      client.destroy();
    }
  });

  it('answers 503 with Retry-After when the database cannot be reached', async () => {
    const sink = await createSink(api.app, api.adminKey, { name: `nodb_${suffix()}`, table: `${ns}.nodb` });
    const unreachable = createPool('postgres://postgres:postgres@127.0.0.1:1/nothing', { connectionTimeoutMillis: 1_000 });
    const noDatabase = await otherApp(api, { pool: unreachable });
    try {
      const res = await send(noDatabase.app, sink, '[{"x": 1}]');
      expect(res.status, res.text).toBe(503);
      expect(res.body.error.code).toBe('intake_unavailable');
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await noDatabase.close();
      await unreachable.end();
    }
  });
});
