import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IcebergError, RestCatalog, S3FileIO, s3FileIOForTable, type LoadTableResult } from '../src/index.ts';
import { catalogOptions, stack, storeOptions, uniqueName } from './support.ts';

async function failure(promise: Promise<unknown>): Promise<IcebergError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IcebergError);
  return error as IcebergError;
}

describe('S3 file IO in a table bucket', () => {
  const namespace = uniqueName('it_io');
  let catalog: RestCatalog;
  let table: LoadTableResult;
  let io: S3FileIO;

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions());
    await catalog.createNamespace(namespace);
    table = await catalog.createTable(namespace, 'files', {
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'long' }] },
    });
    io = new S3FileIO(storeOptions());
  });

  afterAll(async () => {
    io.close();
    await catalog.dropTable({ namespace, name: 'files' }, { purge: true });
    await catalog.dropNamespace(namespace);
  });

  it('puts, reads, checks and deletes a data file with single PUTs', async () => {
    const location = `${table.metadata.location}/data/${randomUUID()}.parquet`;
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
    expect(await io.exists(location)).toBe(false);
    await io.put(location, bytes);
    expect(await io.exists(location)).toBe(true);
    expect(Buffer.from(await io.get(location)).equals(Buffer.from(bytes))).toBe(true);
    await io.delete(location);
    expect(await io.exists(location)).toBe(false);
    expect((await failure(io.get(location))).kind).toBe('not_found');
    await io.delete(location);
  });

  it('writes flat metadata files', async () => {
    const location = `${table.metadata.location}/metadata/${randomUUID()}-m0.avro`;
    await io.put(location, new Uint8Array([1, 2, 3]));
    expect([...(await io.get(location))]).toEqual([1, 2, 3]);
    await io.delete(location);
  });

  it('reports a key the table bucket refuses as forbidden', async () => {
    const error = await failure(io.put(`${table.metadata.location}/elsewhere/${randomUUID()}.txt`, new Uint8Array([1])));
    expect(error.kind).toBe('forbidden');
    expect(error.status).toBe(403);
  });

  it('uses credentials vended in LoadTable config over the configured ones', async () => {
    const location = `${table.metadata.location}/data/${randomUUID()}.parquet`;
    const s = stack();
    const vended: LoadTableResult = {
      ...table,
      config: { 's3.access-key-id': s.accessKeyId, 's3.secret-access-key': 'not-the-secret' },
    };
    const withVended = s3FileIOForTable(vended, storeOptions());
    const withConfigured = s3FileIOForTable({ ...table, config: {} }, storeOptions());
    try {
      expect((await failure(withVended.put(location, new Uint8Array([1])))).kind).toBe('forbidden');
      await withConfigured.put(location, new Uint8Array([1]));
      expect(await withConfigured.exists(location)).toBe(true);
      await withConfigured.delete(location);
    } finally {
      withVended.close();
      withConfigured.close();
    }
  });

  it('answers unavailable when the store does not listen', async () => {
    const dead = new S3FileIO({ ...storeOptions(), endpoint: 'http://127.0.0.1:9', timeoutMs: 2_000 });
    try {
      expect((await failure(dead.get(`${table.metadata.location}/data/x.parquet`))).kind).toBe('unavailable');
    } finally {
      dead.close();
    }
  });
});
