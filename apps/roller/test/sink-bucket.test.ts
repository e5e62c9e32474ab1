import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client, ObjectStore, sinkPrefix } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connection, createSink, createTable, createWarehouse, deleteSink, getSink, pendingRows, send } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { startPrivateStore, type PrivateStore } from './support/private-store.ts';
import { rejectsByRecipe } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { storedBatches } from '../../../tests/support/intake.ts';

/**
 * A warehouse whose `_sink/` lives in an ordinary bucket of its own (`s3.sink_bucket`), written
 * as the warehouse's identity: the batches and rejects land there, never in the platform's
 * intake bucket, and a bucket that takes no writes from that identity (read-only, or over its
 * quota) stops the intake with 409 quota_exceeded. A store of this test's own, so that an
 * identity without write rights exists without touching the shared stack's.
 */
let store: PrivateStore;
let stack: TestStack;
let sinks: ObjectStore;
const SINK_BUCKET = 'tenant-sinks';
const namespaces: string[] = [];

beforeAll(async () => {
  store = await startPrivateStore();
  stack = await startTestStack({ env: store.env });
  const client = createS3Client({
    endpoint: store.env.AWS_ENDPOINT_URL!,
    region: store.env.AWS_REGION!,
    credentials: { accessKeyId: store.env.AWS_ACCESS_KEY_ID!, secretAccessKey: store.env.AWS_SECRET_ACCESS_KEY! },
  });
  await client.send(new CreateBucketCommand({ Bucket: SINK_BUCKET }));
  sinks = new ObjectStore(client, SINK_BUCKET);
}, 120_000);

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
  await store?.stop();
});

/** The stack's catalog registered again under `name`, with these S3 keys and a sink_bucket. */
function warehouse(name: string, keys: { accessKeyId: string; secretAccessKey: string }) {
  const env = store.env;
  return {
    name,
    rest_uri: env.ICEBERG_REST_URI,
    warehouse: env.ICEBERG_WAREHOUSE,
    auth: { type: 'oauth2', client_id: env.AWS_ACCESS_KEY_ID, client_secret: env.AWS_SECRET_ACCESS_KEY },
    s3: { endpoint: env.AWS_ENDPOINT_URL, region: env.AWS_REGION, access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey, sink_bucket: SINK_BUCKET },
  };
}

async function tableIn(warehouseName: string): Promise<string> {
  const ns = `sb_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }], warehouseName);
  return ns;
}

const SEGMENT_KEY = /\/([0-9a-z]{9}-[0-9a-f]{12})\.seg$/;

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of sinks.list(prefix)) keys.push(...page.objects.map((o) => o.key));
  return keys.sort();
}

describe("a warehouse's own sink bucket", () => {
  it('holds the batches and rejects, written and rolled as the warehouse, never the platform', async () => {
    const admin = { accessKeyId: store.env.AWS_ACCESS_KEY_ID!, secretAccessKey: store.env.AWS_SECRET_ACCESS_KEY! };
    await createWarehouse(stack, warehouse('tenant', admin));
    const ns = await tableIn('tenant');
    const sink = await createSink(stack, `tenant_${suffix()}`, `${ns}.events`, {}, 'tenant');
    expect(sink.rejects.prefix).toBe(`s3://${SINK_BUCKET}/_sink/${sink.id}/rejects/`);
    await send(stack, sink, 'one', '[{"x": 1}, {"x": "two"}, 3]');
    await send(stack, sink, 'two', [{ x: 4 }]);
    // One segment each (sent one after the other), in the sink bucket; nothing in the platform's.
    const segments = await keysUnder(sinkPrefix(sink.id));
    expect(segments).toEqual([expect.stringMatching(SEGMENT_KEY), expect.stringMatching(SEGMENT_KEY)]);
    expect((await storedBatches(sinks, sink.id)).map((b) => b.id)).toEqual(['one', 'two']);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    // The roll's rejects file is named by its first segment.
    const rejectsFile = `_sink/${sink.id}/rejects/${SEGMENT_KEY.exec(segments[0]!)![1]}.ndjson`;

    // The roller's own store identity may only read: the sink bucket is reached as the warehouse.
    const platformReadOnly = stack.rollerEnv({ AWS_ACCESS_KEY_ID: store.reader.accessKeyId, AWS_SECRET_ACCESS_KEY: store.reader.secretAccessKey });
    const run = await runCli(['roll', sink.id], platformReadOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ status: 'rolled', outcome: 'committed', batches: 2, rows: 2, rejected_rows: 2 });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 4]);
    expect(await keysUnder(sinkPrefix(sink.id))).toEqual([rejectsFile]);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(0);

    const recipe = (await connection(stack, 'tenant')).sink_rejects!;
    expect(recipe).toMatchObject({ location: `s3://${SINK_BUCKET}/_sink/{sink_id}/rejects/*.ndjson`, credentials: 'warehouse' });
    const expected = [
      { batch_id: 'one', row: { x: 'two' }, reason: 'type_mismatch', field: 'x' },
      { batch_id: 'one', row: 3, reason: 'not_an_object', field: '' },
    ];
    expect(await rejectsByRecipe(recipe, sink.id, store.env)).toEqual({ duckdb: expected, python: expected });

    // The owner's views and the delete read and clear the same bucket.
    await send(stack, sink, 'three', [{ x: 5 }]);
    expect((await pendingRows(stack, sink.id)).rows).toEqual([expect.objectContaining({ batch_id: 'three', row: { x: 5 } })]);
    expect(await deleteSink(stack, sink.id)).toMatchObject({ pending_batches_discarded: 1, intake_objects_removed: 1, intake_cleared: true });
    expect(await keysUnder(sinkPrefix(sink.id))).toEqual([rejectsFile]);
  }, 120_000);

  it('answers 409 quota_exceeded when the bucket takes no writes from the warehouse, and keeps nothing', async () => {
    await createWarehouse(stack, warehouse('readonly', store.reader));
    const ns = await tableIn('readonly');
    const sink = await createSink(stack, `ro_${suffix()}`, `${ns}.events`, {}, 'readonly');
    const res = await fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': 'refused', 'content-type': 'application/json' },
      body: '[{"x": 1}]',
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('quota_exceeded');
    expect(await keysUnder(sinkPrefix(sink.id))).toEqual([]);
    const view = await getSink(stack, sink.id);
    expect(view.lag.batches_waiting).toBe(0);
    expect(view.received.batches).toBe(0);
  }, 60_000);
});
