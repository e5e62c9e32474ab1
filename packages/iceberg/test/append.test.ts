import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IcebergError,
  RestCatalog,
  S3FileIO,
  appendDataFiles,
  branchAncestry,
  branchHead,
  findInAncestry,
  readManifestList,
  type AppendOptions,
  type LoadTableResult,
  type TableIdent,
} from '../src/index.ts';
import { startFaultyProxy } from './faulty-proxy.ts';
import { pyicebergRows, pyicebergSnapshots } from './readers.ts';
import { catalogOptions, closeTestNamespace, jsonRowsToDataFile, openTestNamespace, uniqueName } from './support.ts';

const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'writer', required: false, type: 'string' },
  ],
};

/** Short waits so lost races retry quickly in tests; the policy's shape is what is tested. */
const fastRetry = { attempts: 8, minBackoffMs: 20, maxBackoffMs: 400 };

describe('append transaction on the real catalog', () => {
  const namespace = uniqueName('it_append');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let tableCount = 0;

  async function newTable(properties: Record<string, string> = {}): Promise<{ table: TableIdent; created: LoadTableResult }> {
    tableCount += 1;
    const table = { namespace, name: `t${tableCount}` };
    const created = await catalog.createTable(namespace, table.name, { schema, properties });
    return { table, created };
  }

  async function rows(base: LoadTableResult, ids: number[], writer: string) {
    return jsonRowsToDataFile(
      io,
      base.metadata,
      ids.map((id) => JSON.stringify({ id, writer })),
    );
  }

  async function readIds(table: TableIdent): Promise<number[]> {
    const read = await pyicebergRows(namespace, table.name);
    return read.map((r) => Number(r['id'])).sort((a, b) => a - b);
  }

  beforeAll(async () => ({ catalog, io } = await openTestNamespace(namespace)));
  afterAll(() => closeTestNamespace({ catalog, io }, namespace));

  it('rebuilds on the new head after a lost race, carrying the parent manifests unchanged', async () => {
    const { table, created } = await newTable();
    const first = await appendDataFiles({ catalog, table, io, base: created, dataFiles: [await rows(created, [1, 2], 'a')] });
    expect(first.attempts).toBe(1);
    // A second writer that still holds the empty table loses the race once, then lands on top.
    const second = await appendDataFiles({ catalog, table, io, base: created, dataFiles: [await rows(created, [3], 'b')], retry: fastRetry });
    expect(second.attempts).toBe(2);
    expect(branchHead(second.metadata)?.['parent-snapshot-id']).toBe(first.snapshotId);

    const parentList = readManifestList(await io.get(branchHead(first.metadata)!['manifest-list']));
    const ourList = readManifestList(await io.get(branchHead(second.metadata)!['manifest-list']));
    expect(ourList).toHaveLength(2);
    expect(ourList[0]).toMatchObject({ added_snapshot_id: second.snapshotId, added_files_count: 1, added_rows_count: 1n, sequence_number: 2n });
    expect(ourList.slice(1)).toEqual(parentList);

    expect(branchHead(second.metadata)?.summary).toMatchObject({
      operation: 'append',
      'added-records': '1',
      'total-records': '3',
      'total-data-files': '2',
      'total-delete-files': '0',
    });
    expect(await readIds(table)).toEqual([1, 2, 3]);
  });

  it('lands every commit of two concurrent writers exactly once', async () => {
    const { table, created } = await newTable();
    const perWriter = 4;
    const writers = ['w1', 'w2'];
    const clients = await Promise.all(writers.map(() => RestCatalog.connect(catalogOptions())));
    const results = await Promise.all(
      writers.map(async (writer, w) => {
        const out = [];
        for (let n = 0; n < perWriter; n++) {
          const base = await clients[w]!.loadTable(table);
          const ids = [w * 1000 + n * 10, w * 1000 + n * 10 + 1];
          out.push(
            await appendDataFiles({
              catalog: clients[w]!,
              table,
              io,
              base,
              dataFiles: [await rows(created, ids, writer)],
              summary: { 'app.writer': writer, 'app.batch': String(n) },
              retry: fastRetry,
            }),
          );
        }
        return out;
      }),
    );
    const ids = writers.flatMap((_, w) => Array.from({ length: perWriter }, (__, n) => [w * 1000 + n * 10, w * 1000 + n * 10 + 1]).flat());
    expect(await readIds(table)).toEqual(ids.sort((a, b) => a - b));

    const snapshots = await pyicebergSnapshots(namespace, table.name);
    expect(snapshots).toHaveLength(writers.length * perWriter);
    const committed = results.flat().map((r) => String(r.snapshotId));
    expect(new Set(snapshots.map((s) => s['snapshot-id']))).toEqual(new Set(committed));
    for (const writer of writers) {
      const batches = snapshots.filter((s) => s.summary['app.writer'] === writer).map((s) => s.summary['app.batch']);
      expect(batches.sort()).toEqual(['0', '1', '2', '3']);
    }
    expect(snapshots[0]?.summary['total-records']).toBe(String(ids.length));
  });

  it('finds a snapshot by its summary keys after another writer committed on top', async () => {
    const { table, created } = await newTable();
    const ours = await appendDataFiles({
      catalog,
      table,
      io,
      base: created,
      dataFiles: [await rows(created, [1], 'ours')],
      summary: { 'app.source': 'feed-7', 'app.batches': 'b1,b2' },
    });
    const theirs = await appendDataFiles({ catalog, table, io, dataFiles: [await rows(created, [2], 'theirs')] });
    const latest = (await catalog.loadTable(table)).metadata;
    expect(branchHead(latest)?.['snapshot-id']).toBe(theirs.snapshotId);
    expect(branchHead(latest)?.summary['app.source']).toBeUndefined();
    const found = findInAncestry(latest, 'app.source', 'feed-7');
    expect(found?.['snapshot-id']).toBe(ours.snapshotId);
    expect(found?.summary['app.batches']).toBe('b1,b2');
    expect(findInAncestry(latest, 'app.source', 'feed-8')).toBeUndefined();
    expect([...branchAncestry(latest)].map((s) => s['snapshot-id'])).toEqual([theirs.snapshotId, ours.snapshotId]);

    const read = await pyicebergSnapshots(namespace, table.name);
    expect(read.map((s) => s['snapshot-id'])).toEqual([String(theirs.snapshotId), String(ours.snapshotId)]);
    expect(read[1]?.summary['app.source']).toBe('feed-7');
  });

  it('does not commit twice when the answer to a landed commit is lost (502 after forwarding)', async () => {
    const { table, created } = await newTable();
    const proxy = await startFaultyProxy(catalogOptions().uri, { dropAnswers: 1, forward: true });
    try {
      const flaky = await RestCatalog.connect({ ...catalogOptions(), uri: proxy.uri });
      const result = await appendDataFiles({ catalog: flaky, table, io, base: created, dataFiles: [await rows(created, [1, 2, 3], 'x')], retry: fastRetry });
      expect(result.foundInAncestry).toBe(true);
      expect(proxy.stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
    } finally {
      await proxy.close();
    }
    expect(await readIds(table)).toEqual([1, 2, 3]);
    expect(await pyicebergSnapshots(namespace, table.name)).toHaveLength(1);
  });

  it('retries with the same snapshot id when a commit with a lost answer never landed', async () => {
    const { table, created } = await newTable();
    const proxy = await startFaultyProxy(catalogOptions().uri, { dropAnswers: 1, forward: false });
    try {
      const flaky = await RestCatalog.connect({ ...catalogOptions(), uri: proxy.uri });
      const result = await appendDataFiles({ catalog: flaky, table, io, base: created, dataFiles: [await rows(created, [5], 'y')], retry: fastRetry });
      expect(result.foundInAncestry).toBe(false);
      expect(result.attempts).toBe(2);
      expect(proxy.stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
      expect(branchHead(result.metadata)?.['snapshot-id']).toBe(result.snapshotId);
    } finally {
      await proxy.close();
    }
    expect(await readIds(table)).toEqual([5]);
  });

  it('writes nothing again for a snapshot id already on main', async () => {
    const { table, created } = await newTable();
    const dataFiles = [await rows(created, [9], 'z')];
    const first = await appendDataFiles({ catalog, table, io, base: created, dataFiles });
    const again = await appendDataFiles({ catalog, table, io, dataFiles, snapshotId: first.snapshotId });
    expect(again).toMatchObject({ attempts: 0, foundInAncestry: true, snapshotId: first.snapshotId });
    expect(await readIds(table)).toEqual([9]);
  });

  it('gives up after the configured attempts with commit_conflict', async () => {
    const { table, created } = await newTable();
    const dataFiles = [await rows(created, [1], 'a')];
    // Every reload shows a head that moves before the commit: another writer wins each time.
    let rival = 0;
    const options: AppendOptions = {
      catalog,
      table,
      io,
      base: created,
      dataFiles,
      retry: { attempts: 3, minBackoffMs: 1, maxBackoffMs: 2 },
      validateBase: async () => {
        rival += 1;
        await appendDataFiles({ catalog, table, io, dataFiles: [await rows(created, [100 + rival], 'rival')] });
      },
    };
    const error = await appendDataFiles(options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('commit_conflict');
    expect(rival).toBe(3);
    expect(await readIds(table)).toEqual([101, 102, 103]);
  });

  // Version 3 is written (v3-append.test.ts); version 1 has no sequence numbers to inherit.
  it('refuses a format version 1 table', async () => {
    const version = '1';
    const { table, created } = await newTable({ 'format-version': version });
    expect(created.metadata['format-version']).toBe(Number(version));
    const error = await appendDataFiles({ catalog, table, io, base: created, dataFiles: [{ filePath: `${created.metadata.location}/data/none.parquet`, fileSizeInBytes: 1, recordCount: 1 }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('unsupported');
    expect((error as IcebergError).message).toContain(`format version ${version}`);
  });
});
