import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MANIFEST_ENTRY_V2_SCHEMA,
  RestCatalog,
  S3FileIO,
  appendDataFiles,
  branchAncestry,
  branchHead,
  currentSchema,
  defaultPartitionSpec,
  expireSnapshots,
  manifestListLocation,
  manifestLocation,
  newSnapshotId,
  readManifest,
  readManifestList,
  writeAvroFile,
  writeManifest,
  writeManifestList,
  type AppendResult,
  type DataFile,
  type ManifestFile,
  type TableIdent,
  type TableMetadata,
} from '../src/index.ts';
import { startFaultyProxy } from './faulty-proxy.ts';
import { duckdbRows, pyicebergRows } from './readers.ts';
import { catalogOptions, closeTestNamespace, jsonRowsToDataFile, openTestNamespace, uniqueName } from './support.ts';

const schema = {
  type: 'struct' as const,
  fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
};

const fastRetry = { attempts: 6, minBackoffMs: 20, maxBackoffMs: 200 };
/** Manifest entry status (spec "Manifests"). */
const EXISTING = 0;
const DELETED = 2;

interface Appended {
  result: AppendResult;
  file: DataFile;
  ids: number[];
}

describe('snapshot expiry on the real catalog', () => {
  const namespace = uniqueName('it_expire');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let tableCount = 0;

  async function newTable(): Promise<TableIdent> {
    tableCount += 1;
    const table = { namespace, name: `t${tableCount}` };
    await catalog.createTable(namespace, table.name, { schema });
    return table;
  }

  /** Appends `count` snapshots of two rows each, ids continuing from `firstId`. */
  async function appendMany(table: TableIdent, count: number, firstId = 0): Promise<Appended[]> {
    const out: Appended[] = [];
    let base = await catalog.loadTable(table);
    for (let n = 0; n < count; n++) {
      const ids = [firstId + 2 * n, firstId + 2 * n + 1];
      const file = await jsonRowsToDataFile(io, base.metadata, ids.map((id) => JSON.stringify({ id })));
      const result = await appendDataFiles({ catalog, table, io, base, dataFiles: [file] });
      out.push({ result, file, ids });
      base = { ...base, metadata: result.metadata };
    }
    return out;
  }

  /**
   * Commits a `replace` snapshot as Java's rewrite does: the files of `replaced` rewritten as
   * one file of the same rows, and their manifests and those of `carried` rewritten as one
   * manifest where the replaced files are DELETED and the carried ones EXISTING.
   */
  async function compact(table: TableIdent, replaced: readonly Appended[], carried: readonly Appended[]): Promise<{ snapshotId: bigint; file: DataFile }> {
    const { metadata } = await catalog.loadTable(table);
    const parent = branchHead(metadata)!;
    const snapshotId = newSnapshotId();
    const seq = BigInt((metadata['last-sequence-number'] ?? 0) + 1);
    const ids = replaced.flatMap((a) => a.ids);
    const file = await jsonRowsToDataFile(io, metadata, ids.map((id) => JSON.stringify({ id })));
    const parentManifests = readManifestList(await io.get(parent['manifest-list']));
    const rewrite = async (appended: readonly Appended[], status: number) => {
      const paths = new Set(appended.map((a) => a.result.manifestLocation));
      const manifests = parentManifests.filter((m) => paths.has(m.manifest_path));
      expect(manifests).toHaveLength(appended.length);
      const entries = [];
      for (const m of manifests) {
        const read = readManifest(await io.get(m.manifest_path));
        // Rewritten entries keep the sequence numbers they were added with.
        for (const e of read.entries) entries.push({ ...(e as object), status, sequence_number: m.sequence_number, file_sequence_number: m.sequence_number, ...(status === DELETED ? { snapshot_id: snapshotId } : {}) });
      }
      return { manifests, entries };
    };
    const gone = await rewrite(replaced, DELETED);
    const kept = await rewrite(carried, EXISTING);

    const addedBytes = writeManifest({ schema: currentSchema(metadata), partitionSpec: defaultPartitionSpec(metadata), snapshotId, dataFiles: [file] });
    const addedPath = manifestLocation(metadata.location);
    await io.put(addedPath, addedBytes);
    const avroMetadata = readManifest(addedBytes).metadata;
    const rewrittenBytes = writeAvroFile(MANIFEST_ENTRY_V2_SCHEMA, [...gone.entries, ...kept.entries], { metadata: avroMetadata });
    const rewrittenPath = manifestLocation(metadata.location);
    await io.put(rewrittenPath, rewrittenBytes);

    const entry = (path: string, length: number): ManifestFile => ({
      manifest_path: path,
      manifest_length: BigInt(length),
      partition_spec_id: metadata['default-spec-id'],
      content: 0,
      sequence_number: seq,
      min_sequence_number: seq,
      added_snapshot_id: snapshotId,
      added_files_count: 0,
      existing_files_count: 0,
      deleted_files_count: 0,
      added_rows_count: 0n,
      existing_rows_count: 0n,
      deleted_rows_count: 0n,
      partitions: [],
      key_metadata: null,
    });
    const rows = (appended: readonly Appended[]) => BigInt(appended.flatMap((a) => a.ids).length);
    const rewritten = [...gone.manifests, ...kept.manifests];
    const manifests = [
      { ...entry(addedPath, addedBytes.byteLength), added_files_count: 1, added_rows_count: rows(replaced) },
      {
        ...entry(rewrittenPath, rewrittenBytes.byteLength),
        min_sequence_number: rewritten.reduce((min, m) => (m.sequence_number < min ? m.sequence_number : min), seq),
        existing_files_count: carried.length,
        existing_rows_count: rows(carried),
        deleted_files_count: replaced.length,
        deleted_rows_count: rows(replaced),
      },
      ...parentManifests.filter((m) => !rewritten.includes(m)),
    ];
    const listPath = manifestListLocation(metadata.location, snapshotId, 1);
    await io.put(listPath, writeManifestList({ snapshotId, parentSnapshotId: parent['snapshot-id'], sequenceNumber: seq, manifests }));
    await catalog.commitTable(table, {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent['snapshot-id'] }],
      updates: [
        {
          action: 'add-snapshot',
          snapshot: {
            'snapshot-id': snapshotId,
            'parent-snapshot-id': parent['snapshot-id'],
            'sequence-number': Number(seq),
            'timestamp-ms': Math.max(Date.now(), metadata['last-updated-ms']),
            'manifest-list': listPath,
            summary: {
              operation: 'replace',
              'added-data-files': '1',
              'deleted-data-files': String(replaced.length),
              'added-records': String(rows(replaced)),
              'deleted-records': String(rows(replaced)),
            },
            'schema-id': metadata['current-schema-id'],
          },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
      ],
    });
    return { snapshotId, file };
  }

  async function tag(table: TableIdent, name: string, snapshotId: bigint): Promise<void> {
    await catalog.commitTable(table, {
      requirements: [],
      updates: [{ action: 'set-snapshot-ref', 'ref-name': name, type: 'tag', 'snapshot-id': snapshotId }],
    });
  }

  /** Every file a snapshot of the metadata reaches: manifest lists, manifests, live data files. */
  async function reachable(metadata: TableMetadata): Promise<Set<string>> {
    const files = new Set<string>();
    for (const snapshot of metadata.snapshots ?? []) {
      files.add(snapshot['manifest-list']);
      for (const m of readManifestList(await io.get(snapshot['manifest-list']))) {
        // Manifests are immutable and shared by many lists: read each once.
        if (files.has(m.manifest_path)) continue;
        files.add(m.manifest_path);
        for (const e of readManifest(await io.get(m.manifest_path)).entries as Array<{ status: number; data_file: { file_path: string } }>) {
          if (e.status !== DELETED) files.add(e.data_file.file_path);
        }
      }
    }
    return files;
  }

  async function missing(locations: Iterable<string>): Promise<string[]> {
    const out: string[] = [];
    for (const location of locations) if (!(await io.exists(location))) out.push(location);
    return out;
  }

  /** Row count and sum of ids as PyIceberg and DuckDB read the table now. */
  async function readBack(table: TableIdent): Promise<{ pyiceberg: [number, number]; duckdb: [number, number] }> {
    const location = (await catalog.loadTable(table)).metadataLocation!;
    const tally = (rows: Array<Record<string, unknown>>): [number, number] => [rows.length, rows.reduce((sum, r) => sum + Number(r['id']), 0)];
    return { pyiceberg: tally(await pyicebergRows(namespace, table.name)), duckdb: tally(await duckdbRows(location)) };
  }

  const idsOf = (appended: readonly Appended[]) => appended.flatMap((a) => a.ids);
  const tallyOf = (ids: readonly number[]): [number, number] => [ids.length, ids.reduce((a, b) => a + b, 0)];
  const snapshotIdOf = (a: Appended) => a.result.snapshotId;

  beforeAll(async () => ({ catalog, io } = await openTestNamespace(namespace)));
  afterAll(() => closeTestNamespace({ catalog, io }, namespace));

  it('keeps the newest 5 of main and a tagged snapshot, and deletes only what nothing kept reaches', async () => {
    const table = await newTable();
    // 20 appends, a compaction of the first 10 files (the 11th carried in its rewritten
    // manifest), 9 more appends: 30 snapshots.
    const first = await appendMany(table, 20);
    const compaction = await compact(table, first.slice(0, 10), first.slice(10, 11));
    const later = await appendMany(table, 9, 1000);
    const tagged = first[2]!;
    await tag(table, 'audit', snapshotIdOf(tagged));
    const before = (await catalog.loadTable(table)).metadata;
    expect(before.snapshots).toHaveLength(30);
    const reachableBefore = await reachable(before);

    const result = await expireSnapshots({ catalog, table, io, retainLast: 5, minAgeMs: 0 });

    const newest = later.slice(-5).map(snapshotIdOf).reverse();
    const all = [...first.map(snapshotIdOf), compaction.snapshotId, ...later.map(snapshotIdOf)];
    const expired = all.filter((id) => !newest.includes(id) && id !== snapshotIdOf(tagged));
    expect(result.attempts).toBe(1);
    expect(new Set(result.expired)).toEqual(new Set(expired));
    expect(result.expired).toHaveLength(24);
    expect(result.kept).toBe(6);
    expect(result.cleanupComplete).toBe(true);

    const after = (await catalog.loadTable(table)).metadata;
    expect([...branchAncestry(after)].map((s) => s['snapshot-id'])).toEqual(newest);
    expect(new Set(after.snapshots?.map((s) => s['snapshot-id']))).toEqual(new Set([...newest, snapshotIdOf(tagged)]));
    expect(after.refs?.['audit']).toMatchObject({ type: 'tag', 'snapshot-id': snapshotIdOf(tagged) });

    // Files of expired snapshots alone: 24 manifest lists, the manifests of appends 4–11 (the
    // compaction rewrote them; the tag keeps those of 1–3), and the data files of 4–10 (the
    // 11th is live in the rewritten manifest).
    const reachableAfter = await reachable(after);
    const gone = [...reachableBefore].filter((f) => !reachableAfter.has(f));
    expect(result.deletedFiles).toEqual({ manifestLists: 24, manifests: 8, dataFiles: 7 });
    expect(gone).toHaveLength(24 + 8 + 7);
    expect(new Set(gone)).toEqual(
      new Set([
        ...before.snapshots!.filter((s) => expired.includes(s['snapshot-id'])).map((s) => s['manifest-list']),
        ...first.slice(3, 11).map((a) => a.result.manifestLocation!),
        ...first.slice(3, 10).map((a) => a.file.filePath),
      ]),
    );
    expect(await missing(gone)).toEqual(gone);
    expect(await missing(reachableAfter)).toEqual([]);
    for (const a of first.slice(0, 3)) expect(reachableAfter.has(a.file.filePath)).toBe(true);

    // The catalog trims the snapshot log to the snapshots left.
    const logged = (after['snapshot-log'] as Array<{ 'snapshot-id': bigint }>).map((e) => e['snapshot-id']);
    expect(logged.every((id) => !expired.includes(id))).toBe(true);

    const ids = [...idsOf(first), ...idsOf(later)];
    expect(await readBack(table)).toEqual({ pyiceberg: tallyOf(ids), duckdb: tallyOf(ids) });

    // A second run finds nothing to expire and commits nothing.
    const location = (await catalog.loadTable(table)).metadataLocation;
    const again = await expireSnapshots({ catalog, table, io, retainLast: 5, minAgeMs: 0 });
    expect(again).toMatchObject({ expired: [], attempts: 0, kept: 6, deletedFiles: { manifestLists: 0, manifests: 0, dataFiles: 0 } });
    expect((await catalog.loadTable(table)).metadataLocation).toBe(location);
  }, 180_000);

  it('never expires a snapshot younger than minAgeMs', async () => {
    const table = await newTable();
    const older = await appendMany(table, 4);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const younger = await appendMany(table, 4, 100);
    const { metadata } = await catalog.loadTable(table);
    const firstYoung = metadata.snapshots!.find((s) => s['snapshot-id'] === snapshotIdOf(younger[0]!))!;
    // Measured when the first young snapshot is 999 ms old: every young one is younger than
    // 1 s, every older one (1.5 s before it) is older.
    const result = await expireSnapshots({ catalog, table, io, retainLast: 1, minAgeMs: 1000, now: firstYoung['timestamp-ms'] + 999 });
    expect(new Set(result.expired)).toEqual(new Set(older.map(snapshotIdOf)));
    expect(result.kept).toBe(4);
    expect([...branchAncestry(result.metadata)]).toHaveLength(4);
    expect(await readBack(table)).toEqual({ pyiceberg: tallyOf([...idsOf(older), ...idsOf(younger)]), duckdb: tallyOf([...idsOf(older), ...idsOf(younger)]) });
  });

  it('plans again on the new head after losing a race, and deletes nothing still referenced', async () => {
    const table = await newTable();
    const appended = await appendMany(table, 8);
    const heads: Array<bigint | undefined> = [];
    let rival: Appended[] = [];
    const result = await expireSnapshots({
      catalog,
      table,
      io,
      retainLast: 3,
      minAgeMs: 0,
      retry: fastRetry,
      // Another writer commits between the plan and the first commit.
      validateBase: async (metadata) => {
        heads.push(branchHead(metadata)?.['snapshot-id']);
        if (rival.length === 0) rival = await appendMany(table, 1, 500);
      },
    });
    expect(result.attempts).toBe(2);
    expect(heads).toEqual([snapshotIdOf(appended[7]!), snapshotIdOf(rival[0]!)]);
    // Planned on the new head: 9 snapshots, the newest 3 kept.
    expect(new Set(result.expired)).toEqual(new Set(appended.slice(0, 6).map(snapshotIdOf)));
    expect([...branchAncestry(result.metadata)].map((s) => s['snapshot-id'])).toEqual([rival[0]!, appended[7]!, appended[6]!].map(snapshotIdOf));
    expect(await missing(await reachable(result.metadata))).toEqual([]);
    const ids = [...idsOf(appended), ...idsOf(rival)];
    expect(await readBack(table)).toEqual({ pyiceberg: tallyOf(ids), duckdb: tallyOf(ids) });
  });

  it('finds by reloading that a commit whose answer was lost had landed, and then cleans up', async () => {
    const table = await newTable();
    const appended = await appendMany(table, 4);
    const proxy = await startFaultyProxy(catalogOptions().uri, { dropAnswers: 1, forward: true });
    try {
      const flaky = await RestCatalog.connect({ ...catalogOptions(), uri: proxy.uri });
      const result = await expireSnapshots({ catalog: flaky, table, io, retainLast: 2, minAgeMs: 0, retry: fastRetry });
      expect(proxy.stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
      expect(result).toMatchObject({ attempts: 1, kept: 2, deletedFiles: { manifestLists: 2, manifests: 0, dataFiles: 0 } });
      expect(new Set(result.expired)).toEqual(new Set(appended.slice(0, 2).map(snapshotIdOf)));
    } finally {
      await proxy.close();
    }
    expect(await missing(appended.map((a) => a.file.filePath))).toEqual([]);
    expect(await readBack(table)).toEqual({ pyiceberg: tallyOf(idsOf(appended)), duckdb: tallyOf(idsOf(appended)) });
  });
});
