import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { StorageMeasurement, Usage } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepStorage } from '../src/domain/meter.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { call, stackS3, startTestApi, suffix, type TestApi } from './support/harness.ts';

let api: TestApi;
let s3: S3Client;
const bucket = `meter-${suffix()}`;
const emptyBucket = `meter-empty-${suffix()}`;

/** Objects counted as storage, and objects under `_sink/` that must not be. */
const counted: Record<string, number> = {
  'root.txt': 7,
  'garden/events/data/00000-a.parquet': 1200,
  'garden/events/metadata/00001-b.metadata.json': 300,
  '_sinkish/not-intake.bin': 11,
  'deep/a/b/c/d.bin': 5,
};
const intake: Record<string, number> = {
  '_sink/snk_000000000001/batch-1.ndjson': 4000,
  '_sink/snk_000000000001/batch-2.ndjson': 3000,
  '_sink/snk_000000000001/rejects/batch-1.ndjson': 900,
};
const countedBytes = Object.values(counted).reduce((a, b) => a + b, 0);

function registration(name: string, overrides: Record<string, unknown> = {}) {
  return {
    name,
    rest_uri: api.env.ICEBERG_REST_URI!,
    warehouse: `s3://${bucket}`,
    auth: { type: 'none' },
    s3: { endpoint: api.env.AWS_ENDPOINT_URL!, region: api.env.AWS_REGION!, access_key_id: api.env.AWS_ACCESS_KEY_ID!, secret_access_key: api.env.AWS_SECRET_ACCESS_KEY! },
    ...overrides,
  };
}

async function register(name: string, overrides: Record<string, unknown> = {}) {
  const res = await call(api.app, 'POST', '/v1/warehouses', { key: api.adminKey, body: registration(name, overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function emptyAndDrop(name: string) {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: name }));
  const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
  if (keys.length) await s3.send(new DeleteObjectsCommand({ Bucket: name, Delete: { Objects: keys } }));
  await s3.send(new DeleteBucketCommand({ Bucket: name }));
}

beforeAll(async () => {
  api = await startTestApi();
  s3 = stackS3(api.env);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new CreateBucketCommand({ Bucket: emptyBucket }));
  for (const [key, size] of Object.entries({ ...counted, ...intake })) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.alloc(size, 1) }));
  }
});
afterAll(async () => {
  await emptyAndDrop(bucket).catch(() => undefined);
  await emptyAndDrop(emptyBucket).catch(() => undefined);
  s3?.destroy();
  await api?.close();
});

describe('POST /v1/warehouses/{warehouse}/measure', () => {
  it('sums the bucket with the warehouse credentials, skipping every key under _sink/, and records it', async () => {
    const warehouse = await register('metered');
    const res = await call(api.app, 'POST', '/v1/warehouses/metered/measure', { key: api.adminKey });
    expect(res.status, res.text).toBe(200);
    const measured = StorageMeasurement.parse(res.body);
    expect(measured).toMatchObject({
      warehouse: 'metered',
      warehouse_id: warehouse.id,
      bucket,
      prefix: '',
      bytes: countedBytes,
      objects: Object.keys(counted).length,
      skipped_prefixes: ['_sink/'],
      trigger: 'request',
    });
    // By id too, and the stored row matches the answer.
    const byId = await call(api.app, 'POST', `/v1/warehouses/${warehouse.id}/measure`, { key: api.adminKey });
    expect(byId.status).toBe(200);
    expect(byId.body.bytes).toBe(countedBytes);
    const rows = await query<{ bytes: string; objects: string; trigger: string }>(api.pool, 'SELECT bytes, objects, trigger FROM storage_measurements WHERE warehouse_id = $1', [warehouse.id]);
    expect(rows).toEqual([
      { bytes: String(countedBytes), objects: '5', trigger: 'request' },
      { bytes: String(countedBytes), objects: '5', trigger: 'request' },
    ]);
    // Usage shows the newest measurement.
    const usage = Usage.parse((await call(api.app, 'GET', '/v1/usage', { key: api.adminKey })).body);
    expect(usage.storage.by_warehouse.find((w) => w.warehouse === 'metered')).toMatchObject({ bytes: countedBytes, objects: 5 });
  });

  it('measures only under the location path when the warehouse has one', async () => {
    await register('metered-path', { warehouse: `s3://${bucket}/garden/` });
    const res = await call(api.app, 'POST', '/v1/warehouses/metered-path/measure', { key: api.adminKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ prefix: 'garden/', bytes: 1500, objects: 2 });
  });

  it('measures an empty bucket as zero', async () => {
    await register('metered-empty', { warehouse: `s3://${emptyBucket}` });
    const res = await call(api.app, 'POST', '/v1/warehouses/metered-empty/measure', { key: api.adminKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ bytes: 0, objects: 0 });
  });

  it('says why a warehouse cannot be measured, and when listing fails', async () => {
    await register('not-s3', { warehouse: 'my_catalog' });
    const notS3 = await call(api.app, 'POST', '/v1/warehouses/not-s3/measure', { key: api.adminKey });
    expect(notS3.status).toBe(409);
    expect(notS3.body.error).toMatchObject({ code: 'warehouse_not_measurable', reason: 'not_s3_location' });

    await register('no-keys', { s3: { endpoint: api.env.AWS_ENDPOINT_URL!, region: api.env.AWS_REGION! } });
    const noKeys = await call(api.app, 'POST', '/v1/warehouses/no-keys/measure', { key: api.adminKey });
    expect(noKeys.status).toBe(409);
    expect(noKeys.body.error).toMatchObject({ code: 'warehouse_not_measurable', reason: 'no_s3_credentials' });

    await register('no-bucket', { warehouse: `s3://missing-${suffix()}` });
    const missing = await call(api.app, 'POST', '/v1/warehouses/no-bucket/measure', { key: api.adminKey });
    expect(missing.status, missing.text).toBe(502);
    expect(missing.body.error).toMatchObject({ code: 'measure_failed', store_status: 404 });
    expect(missing.text).not.toContain(api.env.AWS_SECRET_ACCESS_KEY!);

    const unknown = await call(api.app, 'POST', '/v1/warehouses/nope/measure', { key: api.adminKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('warehouse_not_found');
  });

  it('needs a write key', async () => {
    const readKey = (await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'reader', level: 'read' } })).body.key;
    const writeKey = (await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'writer', level: 'write' } })).body.key;
    expect((await call(api.app, 'POST', '/v1/warehouses/metered/measure')).status).toBe(401);
    const read = await call(api.app, 'POST', '/v1/warehouses/metered/measure', { key: readKey });
    expect(read.status).toBe(403);
    expect(read.body.error).toMatchObject({ code: 'forbidden', required_level: 'write' });
    expect((await call(api.app, 'POST', '/v1/warehouses/metered/measure', { key: writeKey })).status).toBe(200);
  });
});

describe('storage sweep', () => {
  it('measures every warehouse it can, recording failures without stopping', async () => {
    const before = await query<{ count: string }>(api.pool, `SELECT count(*) FROM storage_measurements WHERE trigger = 'sweep'`);
    expect(before[0]!.count).toBe('0');
    const result = await sweepStorage(api.pool, SecretBox.fromBase64(api.secretKey), api.app.log);
    const warehouses = await query<{ id: string; name: string }>(api.pool, 'SELECT id, name FROM warehouses');
    const name = (id: string) => warehouses.find((w) => w.id === id)!.name;
    expect(result.failed.map((f) => [name(f.warehouse_id), f.code]).sort()).toEqual([
      ['no-bucket', 'measure_failed'],
      ['no-keys', 'warehouse_not_measurable'],
      ['not-s3', 'warehouse_not_measurable'],
    ]);
    // The bootstrap warehouse (the stack's table bucket) and the three measurable ones.
    expect(result.measured).toBe(warehouses.length - 3);
    const swept = await query<{ warehouse_id: string; bytes: string }>(api.pool, `SELECT warehouse_id, bytes FROM storage_measurements WHERE trigger = 'sweep'`);
    expect(swept).toHaveLength(result.measured);
    expect(swept.find((row) => name(row.warehouse_id) === 'metered')!.bytes).toBe(String(countedBytes));
  });
});
