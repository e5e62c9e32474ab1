import { randomBytes } from 'node:crypto';
import { text } from 'node:stream/consumers';
import type { Readable } from 'node:stream';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import { createS3Client, DELETE_BATCH_LIMIT, isStoreError, md5Hex, ObjectStore, type StoreErrorKind } from '../src/index.ts';
import { startWeedMini, type WeedMini } from './support/weed-mini.ts';

const env = stackEnv();
const stackClient = (credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! }) =>
  createS3Client({ endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, credentials });

async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
    if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
  });
}

/** The kind of the StoreError `promise` rejects with. */
async function failureKind(promise: Promise<unknown>): Promise<StoreErrorKind> {
  try {
    await promise;
  } catch (error) {
    if (isStoreError(error)) return error.kind;
    throw error;
  }
  throw new Error('expected a StoreError, but the call succeeded');
}

describe('ObjectStore on the stack', () => {
  const client = stackClient();
  const store = new ObjectStore(client, env.TABLEMERE_INTAKE_BUCKET!);
  const prefix = `store-test/${randomBytes(4).toString('hex')}/`;

  beforeAll(() => ensureBucket(client, store.bucket));
  afterAll(async () => {
    const keys: string[] = [];
    for await (const page of store.list(prefix)) keys.push(...page.objects.map((o) => o.key));
    await store.deleteMany(keys);
    client.destroy();
  });

  it('puts one object with its content type and metadata, and reads it back byte for byte', async () => {
    const body = Buffer.from('{"a": "\\u00e9"}\n{"b":\t[1, 2]}', 'utf8');
    const key = `${prefix}one.ndjson`;
    const { etag } = await store.put(key, body, {
      contentType: 'application/x-ndjson',
      metadata: { received: '2026-09-21T12:00:00.123456Z', rows: '2', sink: 'snk_000000000000' },
      ifAbsent: true,
    });
    expect(etag).toBe(md5Hex(body));
    const head = await store.head(key);
    expect(head).toMatchObject({ key, size: body.length, contentType: 'application/x-ndjson', etag: md5Hex(body) });
    expect(head.metadata).toEqual({ received: '2026-09-21T12:00:00.123456Z', rows: '2', sink: 'snk_000000000000' });
    const got = await store.get(key);
    expect(got.head).toEqual({ ...head, lastModified: expect.any(Date) });
    expect(Math.abs(got.head.lastModified!.getTime() - head.lastModified!.getTime())).toBeLessThan(1000);
    const chunks: Buffer[] = [];
    for await (const chunk of got.body as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
  });

  it('signs keys with characters that need escaping', async () => {
    for (const name of ['2026-09-21T12:00:00Z-0001.ndjson', "a b+c(d)!'*~é.ndjson", 'x%2Fy.ndjson']) {
      const key = `${prefix}escape/${name}`;
      await store.put(key, Buffer.from(name), { contentType: 'text/plain', metadata: { rows: '1' } });
      expect(await text((await store.get(key)).body as Readable)).toBe(name);
    }
    const listed = (await store.listPage(`${prefix}escape/`)).objects.map((o) => o.key.slice(`${prefix}escape/`.length));
    expect(listed.sort()).toEqual(['2026-09-21T12:00:00Z-0001.ndjson', "a b+c(d)!'*~é.ndjson", 'x%2Fy.ndjson'].sort());
  });

  it('never replaces an object written with ifAbsent: the second put is precondition_failed', async () => {
    const key = `${prefix}once.ndjson`;
    await store.put(key, Buffer.from('first'), { contentType: 'text/plain', ifAbsent: true });
    expect(await failureKind(store.put(key, Buffer.from('second'), { contentType: 'text/plain', ifAbsent: true }))).toBe('precondition_failed');
    expect(await text((await store.get(key)).body as Readable)).toBe('first');
  });

  it('gives up a read when its signal aborts: unavailable, nothing left open', async () => {
    const key = `${prefix}abort.bin`;
    const body = randomBytes(64 * 1024);
    await store.put(key, body, { contentType: 'application/octet-stream' });
    expect(await failureKind(store.get(key, { abortSignal: AbortSignal.abort() }))).toBe('unavailable');
    const chunks: Buffer[] = [];
    for await (const chunk of (await store.get(key)).body as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
  });

  it('answers not_found for a missing object or bucket', async () => {
    expect(await failureKind(store.head(`${prefix}missing`))).toBe('not_found');
    expect(await failureKind(store.get(`${prefix}missing`))).toBe('not_found');
    expect(await failureKind(new ObjectStore(client, `no-such-bucket-${randomBytes(4).toString('hex')}`).headBucket())).toBe('not_found');
    await store.headBucket();
  });

  it('answers denied for unknown credentials', async () => {
    const stranger = stackClient({ accessKeyId: 'nobody', secretAccessKey: 'nothing-at-all' });
    const denied = new ObjectStore(stranger, store.bucket);
    try {
      expect(await failureKind(denied.put(`${prefix}x`, Buffer.from('x'), { contentType: 'text/plain' }))).toBe('denied');
      expect(await failureKind(denied.listPage(prefix))).toBe('denied');
      expect(await failureKind(denied.get(`${prefix}one.ndjson`))).toBe('denied');
    } finally {
      stranger.destroy();
    }
  });

  it('lists a prefix page by page, and one folder level with a delimiter', async () => {
    const folder = `${prefix}list/`;
    const keys = Array.from({ length: 7 }, (_, i) => `${folder}k${i}`);
    for (const key of [...keys, `${folder}sub/a`, `${folder}sub/b`]) await store.put(key, Buffer.from(key), { contentType: 'text/plain' });
    const pages = [];
    for await (const page of store.list(folder, { pageSize: 3 })) pages.push(page);
    expect(pages.map((p) => p.objects.length)).toEqual([3, 3, 3]);
    expect(pages.flatMap((p) => p.objects.map((o) => o.key))).toEqual([...keys, `${folder}sub/a`, `${folder}sub/b`]);
    expect(pages.at(-1)!.nextToken).toBeUndefined();
    const level = await store.listPage(folder, { delimiter: '/' });
    expect(level.objects.map((o) => o.key)).toEqual(keys);
    expect(level.prefixes).toEqual([`${folder}sub/`]);
    expect(level.objects[0]!.size).toBe(keys[0]!.length);
  });

  it('deletes more keys than one DeleteObjects call takes, a missing key included', async () => {
    const folder = `${prefix}many/`;
    const keys = Array.from({ length: DELETE_BATCH_LIMIT + 5 }, (_, i) => `${folder}${String(i).padStart(5, '0')}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, Buffer.from('x'), { contentType: 'text/plain' })));
    }
    const result = await store.deleteMany([...keys, `${folder}never-written`]);
    expect(result.failed).toEqual([]);
    expect(result.deleted).toHaveLength(keys.length + 1);
    expect((await store.listPage(folder)).objects).toEqual([]);
  });

  it('reports the keys a delete refuses one by one and deletes the others', async () => {
    const key = `${prefix}refused/ok`;
    await store.put(key, Buffer.from('x'), { contentType: 'text/plain' });
    const result = await store.deleteMany([key, '../outside']);
    expect(result.deleted).toEqual([key]);
    expect(result.failed).toEqual([{ key: '../outside', kind: 'bad_request', code: 'InvalidRequest', message: expect.any(String) }]);
    expect(await failureKind(store.head(key))).toBe('not_found');
  });
});

describe('ObjectStore when the store refuses or goes away (own weed mini)', () => {
  let weed: WeedMini;
  let admin: S3Client;

  let readerClient: S3Client;

  beforeAll(async () => {
    weed = await startWeedMini();
    admin = weed.client();
    // An identity that may read and list the bucket but not write to it.
    await weed.shell([`s3.configure -user=reader -access_key=readerkey -secret_key=readersecret -actions=Read,List -buckets=${weed.intakeBucket} -apply`]);
    readerClient = weed.client({ accessKeyId: 'readerkey', secretAccessKey: 'readersecret' });
    const deadline = Date.now() + 10_000;
    while (!(await new ObjectStore(readerClient, weed.intakeBucket).headBucket().then(() => true, () => false))) {
      if (Date.now() > deadline) throw new Error('the reader identity was not active within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  afterAll(async () => {
    readerClient?.destroy();
    admin?.destroy();
    await weed?.stop();
  });

  it('calls a write refused on a readable bucket quota_exceeded (a read-only bucket answers 403 so)', async () => {
    const reader = new ObjectStore(readerClient, weed.intakeBucket);
    expect(await failureKind(reader.put('_sink/x.ndjson', Buffer.from('{}'), { contentType: 'application/x-ndjson', ifAbsent: true }))).toBe(
      'quota_exceeded',
    );
  });

  it('reports a delete refused to an identity without Write per key, and the object stays', async () => {
    const store = new ObjectStore(admin, weed.intakeBucket);
    await store.put('keep/a', Buffer.from('a'), { contentType: 'text/plain' });
    const result = await new ObjectStore(readerClient, weed.intakeBucket).deleteMany(['keep/a']);
    expect(result).toEqual({ deleted: [], failed: [{ key: 'keep/a', kind: 'denied', code: 'AccessDenied', message: expect.any(String) }] });
    expect((await store.head('keep/a')).size).toBe(1);
  });

  it('over its quota, this SeaweedFS release answers writes with 500: unavailable, never a success', async () => {
    const store = new ObjectStore(admin, weed.intakeBucket);
    await store.put('fill/a', randomBytes(2 * 1024 * 1024), { contentType: 'application/octet-stream' });
    await weed.shell([`s3.bucket.quota -name=${weed.intakeBucket} -op=set -sizeMB=1`]);
    // The master learns the bucket's size from volume heartbeats, a few seconds late.
    const deadline = Date.now() + 30_000;
    while (!/read only/i.test(await weed.shell(['s3.bucket.quota.enforce -apply']))) {
      if (Date.now() > deadline) throw new Error('the bucket did not go read-only within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const failure = await store.put('fill/b', Buffer.from('b'), { contentType: 'text/plain' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isStoreError(failure)).toBe(true);
    expect(failure).toMatchObject({ kind: 'unavailable', status: 500, code: 'InternalError', retryable: true });
    await weed.shell([`s3.bucket.quota -name=${weed.intakeBucket} -op=remove`, 's3.bucket.quota.enforce -apply']);
    await store.put('fill/c', Buffer.from('c'), { contentType: 'text/plain' });
  });

  it('answers unavailable once the store is gone', async () => {
    const store = new ObjectStore(admin, weed.intakeBucket);
    await weed.kill();
    expect(await failureKind(store.put('gone', Buffer.from('x'), { contentType: 'text/plain' }))).toBe('unavailable');
    expect(await failureKind(store.headBucket())).toBe('unavailable');
    expect(await failureKind(store.listPage(''))).toBe('unavailable');
    expect(await failureKind(store.get('keep/a'))).toBe('unavailable');
  });
});
