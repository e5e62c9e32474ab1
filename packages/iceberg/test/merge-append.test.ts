import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RestCatalog,
  S3FileIO,
  appendDataFiles,
  branchAncestry,
  branchHead,
  parseObjectLocation,
  readManifest,
  readManifestList,
  type LoadTableResult,
  type ManifestFile,
  type TableIdent,
  type TableMetadata,
} from '../src/index.ts';
import { duckdbRows, pyicebergRows, type Row } from './readers.ts';
import { closeTestNamespace, jsonRowsToDataFile, openTestNamespace, storeOptions, uniqueName } from './support.ts';

/** One required long: each append adds one row, its id. */
const schema = { type: 'struct' as const, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };

/**
 * The head's manifest count after each of `appends` appends of one small manifest each, by
 * the merge rule: all fit one bin (8 MiB), which holds the new manifest, so it is merged into
 * one manifest when it reaches `minCount` manifests, and grows by one per append otherwise.
 */
function expectedCounts(appends: number, minCount: number): number[] {
  const counts: number[] = [];
  for (let n = 0; n < appends; n++) {
    const candidates = (counts.at(-1) ?? 0) + 1;
    counts.push(candidates >= minCount ? 1 : candidates);
  }
  return counts;
}

interface Appended {
  snapshotId: bigint;
  sequenceNumber: bigint;
  filePath: string;
}

describe('merge append on the real catalog', () => {
  const namespace = uniqueName('it_merge');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let s3: S3Client;
  let tableCount = 0;

  beforeAll(async () => {
    ({ catalog, io } = await openTestNamespace(namespace));
    const store = storeOptions();
    s3 = new S3Client({ ...store, credentials: { ...store.credentials! }, forcePathStyle: true });
  });

  afterAll(async () => {
    s3.destroy();
    await closeTestNamespace({ catalog, io }, namespace);
  });

  async function newTable(properties: Record<string, string> = {}): Promise<{ table: TableIdent; created: LoadTableResult }> {
    tableCount += 1;
    const table = { namespace, name: `t${tableCount}` };
    return { table, created: await catalog.createTable(namespace, table.name, { schema, properties }) };
  }

  async function headManifests(metadata: TableMetadata): Promise<ManifestFile[]> {
    return readManifestList(await io.get(branchHead(metadata)!['manifest-list']));
  }

  /** Appends ids 1..`count`, one data file (of one row) per append, noting the head's manifest count after each. */
  async function appendEach(created: LoadTableResult, table: TableIdent, count: number) {
    let base = created;
    const appended: Appended[] = [];
    const counts: number[] = [];
    for (let id = 1; id <= count; id++) {
      const file = await jsonRowsToDataFile(io, created.metadata, [JSON.stringify({ id })]);
      const result = await appendDataFiles({ catalog, table, io, base, dataFiles: [file] });
      base = { ...base, metadata: result.metadata };
      const head = branchHead(result.metadata)!;
      appended.push({ snapshotId: result.snapshotId, sequenceNumber: BigInt(head['sequence-number']!), filePath: file.filePath });
      counts.push((await headManifests(result.metadata)).length);
    }
    return { metadata: base.metadata, appended, counts };
  }

  /** PyIceberg and DuckDB each read ids 1..`count`, every one once: the count and sum of ids. */
  async function expectIdsOnce(table: TableIdent, count: number): Promise<void> {
    const { metadataLocation } = await catalog.loadTable(table);
    const tally = (rows: Row[]) => ({ rows: rows.length, sum: rows.reduce((s, r) => s + Number(r['id']), 0) });
    const expected = { rows: count, sum: (count * (count + 1)) / 2 };
    expect([tally(await pyicebergRows(namespace, table.name)), tally(await duckdbRows(metadataLocation!))]).toEqual([expected, expected]);
  }

  /**
   * Checks every entry of the head's manifests as written (no inheritance applied): each
   * appended file exactly once, ADDED only in the manifest of the snapshot that added it (whose
   * sequence number it inherits), else EXISTING with the snapshot id and sequence numbers of
   * the append that added it, and list counts that match.
   */
  async function checkEntries(metadata: TableMetadata, appended: readonly Appended[]): Promise<void> {
    const head = branchHead(metadata)!;
    const byPath = new Map(appended.map((a) => [a.filePath, a]));
    const seen: string[] = [];
    for (const manifest of await headManifests(metadata)) {
      const entries = readManifest(await io.get(manifest.manifest_path)).entries as Array<Record<string, any>>;
      const added = entries.filter((e) => e.status === 1);
      const existing = entries.filter((e) => e.status === 0);
      expect(added.length + existing.length).toBe(entries.length);
      expect(manifest).toMatchObject({
        added_files_count: added.length,
        existing_files_count: existing.length,
        deleted_files_count: 0,
        added_rows_count: BigInt(added.length),
        existing_rows_count: BigInt(existing.length),
        deleted_rows_count: 0n,
      });
      const sequences: bigint[] = [];
      for (const entry of entries) {
        const path = entry.data_file.file_path as string;
        seen.push(path);
        const origin = byPath.get(path)!;
        sequences.push(origin.sequenceNumber);
        if (entry.status === 1) {
          expect([entry.snapshot_id, entry.sequence_number, entry.file_sequence_number]).toEqual([origin.snapshotId, null, null]);
          expect([manifest.added_snapshot_id, manifest.sequence_number]).toEqual([origin.snapshotId, origin.sequenceNumber]);
        } else {
          expect([entry.snapshot_id, entry.sequence_number, entry.file_sequence_number]).toEqual([origin.snapshotId, origin.sequenceNumber, origin.sequenceNumber]);
        }
      }
      expect(manifest.min_sequence_number).toBe(sequences.reduce((a, b) => (b < a ? b : a)));
      if (existing.length > 0) {
        // A merged manifest: written by the snapshot that merged it.
        expect(manifest.sequence_number).toBe(BigInt(snapshotOf(metadata, manifest.added_snapshot_id)['sequence-number']!));
      }
    }
    expect(seen.sort()).toEqual(appended.map((a) => a.filePath).sort());
    expect(head.summary['total-data-files']).toBe(String(appended.length));
  }

  function snapshotOf(metadata: TableMetadata, snapshotId: bigint) {
    return [...branchAncestry(metadata)].find((s) => s['snapshot-id'] === snapshotId)!;
  }

  /** The manifests and manifest lists under the table's metadata/ that no snapshot references. */
  async function orphans(metadata: TableMetadata): Promise<string[]> {
    const { bucket, key } = parseObjectLocation(`${metadata.location.replace(/\/+$/, '')}/metadata/`);
    const stored: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key!.endsWith('.avro')) stored.push(`s3://${bucket}/${o.Key}`);
      token = page.NextContinuationToken;
    } while (token);
    const referenced = new Set<string>();
    for (const snapshot of metadata.snapshots ?? []) {
      referenced.add(snapshot['manifest-list']);
      for (const m of readManifestList(await io.get(snapshot['manifest-list']))) referenced.add(m.manifest_path);
    }
    return stored.filter((location) => !referenced.has(location));
  }

  async function entryStatuses(location: string): Promise<unknown[][]> {
    return (readManifest(await io.get(location)).entries as Array<Record<string, any>>).map((e) => [e.data_file.file_path, e.status]);
  }

  it('merges the manifests of 130 appends once the new one\'s bin reaches commit.manifest.min-count-to-merge (10)', { timeout: 600_000 }, async () => {
    const { table, created } = await newTable({ 'commit.manifest.min-count-to-merge': '10' });
    expect(created.metadata.properties?.['commit.manifest.min-count-to-merge']).toBe('10');
    const { metadata, appended, counts } = await appendEach(created, table, 130);
    // 1..9, then merged into 1 at the 10th, then 2..9 and 1 again every 9 appends: 4 at the 130th.
    expect(counts).toEqual(expectedCounts(130, 10));
    expect(counts.slice(8, 12)).toEqual([9, 1, 2, 3]);
    expect(counts.at(-1)).toBe(4);
    await checkEntries(metadata, appended);
    // The 127th append merged its bin of ten (its own and nine, the oldest being the 118th's merge).
    const [newest, , , merged] = await headManifests(metadata);
    expect(newest).toMatchObject({ added_snapshot_id: appended[129]!.snapshotId, added_files_count: 1, existing_files_count: 0 });
    expect(merged).toMatchObject({
      added_snapshot_id: appended[126]!.snapshotId,
      sequence_number: appended[126]!.sequenceNumber,
      min_sequence_number: 1n,
      added_files_count: 1,
      existing_files_count: 126,
      existing_rows_count: 126n,
    });
    await expectIdsOnce(table, 130);
    expect(await orphans(metadata)).toEqual([]);
  });

  it('merges at 100 manifests by default', { timeout: 600_000 }, async () => {
    const { table, created } = await newTable();
    const { metadata, appended, counts } = await appendEach(created, table, 130);
    expect(counts).toEqual(expectedCounts(130, 100));
    expect(counts.slice(98, 101)).toEqual([99, 1, 2]);
    expect(counts.at(-1)).toBe(31);
    await checkEntries(metadata, appended);
    expect((await headManifests(metadata)).at(-1)).toMatchObject({
      added_snapshot_id: appended[99]!.snapshotId,
      added_files_count: 1,
      existing_files_count: 99,
      min_sequence_number: 1n,
    });
    await expectIdsOnce(table, 130);
  });

  it('merges nothing when commit.manifest-merge.enabled is false', { timeout: 300_000 }, async () => {
    const { table, created } = await newTable({ 'commit.manifest-merge.enabled': 'false', 'commit.manifest.min-count-to-merge': '2' });
    const { metadata, appended, counts } = await appendEach(created, table, 25);
    expect(counts).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    await checkEntries(metadata, appended);
    const manifests = await headManifests(metadata);
    expect(manifests.map((m) => m.added_snapshot_id)).toEqual(appended.map((a) => a.snapshotId).reverse());
    expect(manifests.every((m) => m.existing_files_count === 0)).toBe(true);
    await expectIdsOnce(table, 25);
  });

  it('packs no two manifests into a bin larger than commit.manifest.target-size-bytes', { timeout: 300_000 }, async () => {
    // At min-count 2 every append merges its bin of two; with a 1-byte target every manifest is
    // a bin of its own, and a bin of one is never merged.
    const merging = await newTable({ 'commit.manifest.min-count-to-merge': '2' });
    expect((await appendEach(merging.created, merging.table, 12)).counts).toEqual(Array.from({ length: 12 }, () => 1));
    const tiny = await newTable({ 'commit.manifest.min-count-to-merge': '2', 'commit.manifest.target-size-bytes': '1' });
    const { metadata, appended, counts } = await appendEach(tiny.created, tiny.table, 12);
    expect(counts).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    await checkEntries(metadata, appended);
    await expectIdsOnce(tiny.table, 12);
  });

  it('rebuilds a merge after a lost race and leaves no merged manifest behind', { timeout: 300_000 }, async () => {
    const { table, created } = await newTable({ 'commit.manifest.min-count-to-merge': '3' });
    const { metadata: base, appended } = await appendEach(created, table, 2);
    expect((await headManifests(base)).length).toBe(2);

    // Ours builds on two manifests: its bin of three is merged. A rival lands first, merging
    // the same two with its own, so ours loses the race and commits beside the rival's merge.
    let rival: Awaited<ReturnType<typeof appendDataFiles>> | undefined;
    let unreferencedAtRetry: Array<{ location: string; entries: unknown[][] }> = [];
    const rivalFile = await jsonRowsToDataFile(io, created.metadata, [JSON.stringify({ id: 3 })]);
    const ourFile = await jsonRowsToDataFile(io, created.metadata, [JSON.stringify({ id: 4 })]);
    const ours = await appendDataFiles({
      catalog,
      table,
      io,
      base: { ...created, metadata: base },
      dataFiles: [ourFile],
      retry: { attempts: 3, minBackoffMs: 10, maxBackoffMs: 20 },
      validateBase: async (reloaded) => {
        if (rival) unreferencedAtRetry = await Promise.all((await orphans(reloaded)).map(async (location) => ({ location, entries: await entryStatuses(location) })));
        rival ??= await appendDataFiles({ catalog, table, io, dataFiles: [rivalFile] });
      },
    });
    expect(ours.attempts).toBe(2);
    // Before the second attempt: our manifest and the lost attempt's merge of it with the two.
    expect(unreferencedAtRetry.sort((a, b) => a.entries.length - b.entries.length)).toEqual([
      { location: ours.manifestLocation, entries: [[ourFile.filePath, 1]] },
      {
        location: expect.stringMatching(/-m0\.avro$/),
        entries: [
          [ourFile.filePath, 1],
          [appended[1]!.filePath, 0],
          [appended[0]!.filePath, 0],
        ],
      },
    ]);
    const rivalHead = await headManifests(rival!.metadata);
    expect(rivalHead).toHaveLength(1);
    expect(rivalHead[0]).toMatchObject({ added_snapshot_id: rival!.snapshotId, added_files_count: 1, existing_files_count: 2 });

    const head = await headManifests(ours.metadata);
    expect(head.map((m) => m.manifest_path)).toEqual([ours.manifestLocation, rivalHead[0]!.manifest_path]);
    const sequence = (id: bigint) => BigInt(snapshotOf(ours.metadata, id)['sequence-number']!);
    appended.push(
      { snapshotId: rival!.snapshotId, sequenceNumber: sequence(rival!.snapshotId), filePath: rivalFile.filePath },
      { snapshotId: ours.snapshotId, sequenceNumber: sequence(ours.snapshotId), filePath: ourFile.filePath },
    );
    await checkEntries(ours.metadata, appended);
    // The merge of ours with the first two manifests, written for the lost attempt, is gone,
    // as are the rival's own manifest (merged) and the lost attempt's manifest list.
    expect(await orphans(ours.metadata)).toEqual([]);
    await expectIdsOnce(table, 4);
  });
});
