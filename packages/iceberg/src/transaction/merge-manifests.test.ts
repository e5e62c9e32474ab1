import { describe, expect, it } from 'vitest';
import { isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { ENTRY_STATUS, readManifest, readManifestEntries, writeManifest, writeManifestEntries, type ManifestFile } from '../writer/index.ts';
import { manifestFileFixture } from '../../test/metadata-fixture.ts';
import { DEFAULT_MANIFEST_MERGE_POLICY, ManifestMerger, manifestMergePolicy, packEnd, planManifestMerge } from './merge-manifests.ts';

describe('packEnd (Java ListPacker.packEnd, lookback 1)', () => {
  const weight = (n: number) => n;

  it('packs from the end, so the first bin is the under-filled one, keeping every order', () => {
    const items = Array.from({ length: 10 }, (_, i) => i + 1);
    expect(packEnd(items, () => 1, 4)).toEqual([[1, 2], [3, 4, 5, 6], [7, 8, 9, 10]]);
    expect(packEnd([1, 2, 3, 4, 5], weight, 6)).toEqual([[1, 2, 3], [4], [5]]);
  });

  it('never looks back past the open bin', () => {
    // From the end: 7 closes [2]; 3 would fit beside 2, but only [7] is open.
    expect(packEnd([3, 7, 2], weight, 8)).toEqual([[3], [7], [2]]);
  });

  it('fills a bin up to the target exactly, and gives a heavier item a bin of its own', () => {
    expect(packEnd([2, 2, 4], weight, 8)).toEqual([[2, 2, 4]]);
    expect(packEnd([1, 9, 1, 1], weight, 4)).toEqual([[1], [9], [1, 1]]);
    expect(packEnd([], weight, 4)).toEqual([]);
  });
});

const listed = manifestFileFixture;

const paths = (bins: ReturnType<typeof planManifestMerge>) => bins.map((b) => ({ specId: b.specId, merge: b.merge, manifests: b.manifests.map((m) => m.manifest_path) }));
const unpartitioned = new Set([0]);

describe('planManifestMerge (Java ManifestMergeManager)', () => {
  const small = (count: number) => Array.from({ length: count }, (_, i) => listed(`p${i + 1}`, 100));

  it('keeps the bin of the new manifest while it has fewer than min-count-to-merge manifests', () => {
    const policy = { ...DEFAULT_MANIFEST_MERGE_POLICY, minCountToMerge: 10 };
    const nine = [listed('new', 100), ...small(8)];
    expect(paths(planManifestMerge(nine, policy, unpartitioned))).toEqual([{ specId: 0, merge: false, manifests: nine.map((m) => m.manifest_path) }]);
    const ten = [listed('new', 100), ...small(9)];
    expect(paths(planManifestMerge(ten, policy, unpartitioned))).toEqual([{ specId: 0, merge: true, manifests: ten.map((m) => m.manifest_path) }]);
    expect(paths(planManifestMerge(ten, DEFAULT_MANIFEST_MERGE_POLICY, unpartitioned))[0]?.merge).toBe(false);
  });

  it('merges other bins of two or more at any count, and never a bin of one', () => {
    const policy = { minCountToMerge: 100, targetSizeBytes: 1000 };
    // From the end: [p3 p4] fill 1000; new, p1, p2 share the first bin; p5 is too big to share.
    const manifests = [listed('new', 100), listed('p1', 100), listed('p2', 100), listed('p3', 500), listed('p4', 500), listed('p5', 1200)];
    expect(paths(planManifestMerge(manifests, policy, unpartitioned))).toEqual([
      { specId: 0, merge: false, manifests: ['new', 'p1', 'p2'] },
      { specId: 0, merge: true, manifests: ['p3', 'p4'] },
      { specId: 0, merge: false, manifests: ['p5'] },
    ]);
    expect(paths(planManifestMerge([listed('new', 100)], { minCountToMerge: 1, targetSizeBytes: 1000 }, unpartitioned))).toEqual([
      { specId: 0, merge: false, manifests: ['new'] },
    ]);
    expect(paths(planManifestMerge([listed('new', 100), listed('p1', 100)], { minCountToMerge: 2, targetSizeBytes: 1000 }, unpartitioned))[0]?.merge).toBe(true);
  });

  it('merges data manifests per spec (highest id first), leaves delete manifests and partitioned specs, drops manifests without live files', () => {
    const policy = { minCountToMerge: 2, targetSizeBytes: 1000 };
    const manifests = [
      listed('new', 100),
      listed('d1', 100, { content: 1 }),
      listed('p1', 100),
      listed('gone', 100, { added_files_count: 0, deleted_files_count: 3 }),
      listed('s1a', 100, { partition_spec_id: 1, added_files_count: 0, existing_files_count: 2 }),
      listed('part', 100, { partition_spec_id: 2 }),
      listed('d2', 100, { content: 1 }),
      listed('part2', 100, { partition_spec_id: 2 }),
      listed('s1b', 100, { partition_spec_id: 1 }),
    ];
    expect(paths(planManifestMerge(manifests, policy, new Set([0, 1])))).toEqual([
      { specId: 2, merge: false, manifests: ['part', 'part2'] },
      { specId: 1, merge: true, manifests: ['s1a', 's1b'] },
      { specId: 0, merge: true, manifests: ['new', 'p1'] },
      { specId: 0, merge: false, manifests: ['d1', 'd2'] },
    ]);
  });

  it('reads its settings from the table properties, with Java\'s defaults', () => {
    expect(manifestMergePolicy(undefined)).toEqual({ enabled: true, minCountToMerge: 100, targetSizeBytes: 8 * 1024 * 1024 });
    expect(
      manifestMergePolicy({ 'commit.manifest-merge.enabled': 'FALSE', 'commit.manifest.min-count-to-merge': '10', 'commit.manifest.target-size-bytes': '4096' }),
    ).toEqual({ enabled: false, minCountToMerge: 10, targetSizeBytes: 4096 });
    expect(manifestMergePolicy({ 'commit.manifest-merge.enabled': 'True' }).enabled).toBe(true);
    expect(manifestMergePolicy({ 'commit.manifest-merge.enabled': 'yes' }).enabled).toBe(false);
    const error = (() => {
      try {
        manifestMergePolicy({ 'commit.manifest.min-count-to-merge': 'ten' });
      } catch (e) {
        return e;
      }
    })();
    expect(isIcebergError(error, 'unsupported')).toBe(true);
  });
});

/** Whole files in memory, for the merge's reads and writes. */
class MemoryIO implements FileIO {
  readonly files = new Map<string, Uint8Array>();
  async put(location: string, bytes: Uint8Array) {
    this.files.set(location, bytes);
  }
  async get(location: string) {
    const bytes = this.files.get(location);
    if (!bytes) throw new Error(`no file ${location}`);
    return bytes;
  }
  async delete(location: string) {
    this.files.delete(location);
  }
  async exists(location: string) {
    return this.files.has(location);
  }
}

describe('ManifestMerger', () => {
  const schema = { type: 'struct' as const, 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
  const spec = { 'spec-id': 0, fields: [] };
  const metadata = {
    'format-version': 2,
    location: 's3://warehouse/ns/t',
    schemas: [schema],
    'current-schema-id': 0,
    'partition-specs': [spec],
    'default-spec-id': 0,
  } as unknown as TableMetadata;
  const file = (name: string, rows: number) => ({ filePath: `s3://warehouse/ns/t/data/${name}.parquet`, fileSizeInBytes: 100, recordCount: rows });
  const OURS = 99n;

  /** A parent of two files added by snapshot 11 (seq 1), one with an existing, an added and a deleted entry (snapshot 12, seq 2), and ours. */
  async function manifests(io: MemoryIO): Promise<ManifestFile[]> {
    const put = async (path: string, bytes: Uint8Array, entry: Partial<ManifestFile>) => {
      await io.put(path, bytes);
      return listed(path, bytes.byteLength, entry);
    };
    const entry = (status: 0 | 1 | 2, snapshotId: bigint | null, sequence: bigint | null, name: string, rows: number) => ({
      status,
      snapshotId,
      sequenceNumber: sequence,
      fileSequenceNumber: sequence,
      dataFile: readManifestEntries(writeManifest({ schema, partitionSpec: spec, snapshotId: 1n, dataFiles: [file(name, rows)] }))[0]!.dataFile,
    });
    return [
      await put('s3://m/ours.avro', writeManifest({ schema, partitionSpec: spec, snapshotId: OURS, dataFiles: [file('n', 5)] }), {
        added_snapshot_id: OURS,
        sequence_number: 3n,
        min_sequence_number: 3n,
        added_rows_count: 5n,
      }),
      await put('s3://m/a.avro', writeManifest({ schema, partitionSpec: spec, snapshotId: 11n, dataFiles: [file('a1', 1), file('a2', 2)] }), {
        added_snapshot_id: 11n,
        added_files_count: 2,
        added_rows_count: 3n,
      }),
      await put(
        's3://m/b.avro',
        writeManifestEntries({ schema, partitionSpec: spec, entries: [entry(0, 7n, 1n, 'b0', 10), entry(1, 12n, null, 'b1', 20), entry(2, 12n, 2n, 'b2', 40)] }),
        { added_snapshot_id: 12n, sequence_number: 2n, min_sequence_number: 1n, existing_files_count: 1, existing_rows_count: 10n, added_rows_count: 20n, deleted_files_count: 1, deleted_rows_count: 40n },
      ),
    ];
  }

  it('carries earlier entries as EXISTING with their snapshot ids and sequence numbers, ours as ADDED, and drops deletes', async () => {
    const io = new MemoryIO();
    const given = await manifests(io);
    const merger = new ManifestMerger(io, { enabled: true, minCountToMerge: 3, targetSizeBytes: 1 << 20 });
    const [merged, ...rest] = await merger.merge({ metadata, snapshotId: OURS, sequenceNumber: 3n, manifests: given });
    expect(rest).toEqual([]);
    expect(merger.written).toEqual([merged!.manifest_path]);
    expect(merged).toMatchObject({
      partition_spec_id: 0,
      content: 0,
      added_snapshot_id: OURS,
      sequence_number: 3n,
      min_sequence_number: 1n,
      added_files_count: 1,
      added_rows_count: 5n,
      existing_files_count: 4,
      existing_rows_count: 33n,
      deleted_files_count: 0,
      deleted_rows_count: 0n,
      manifest_length: BigInt(io.files.get(merged!.manifest_path)!.byteLength),
    });
    const raw = readManifest(io.files.get(merged!.manifest_path)!).entries as Array<Record<string, any>>;
    expect(raw.map((e) => [e.data_file.file_path.split('/').pop(), e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number])).toEqual([
      ['n.parquet', 1, OURS, null, null],
      ['a1.parquet', 0, 11n, 1n, 1n],
      ['a2.parquet', 0, 11n, 1n, 1n],
      ['b0.parquet', 0, 7n, 1n, 1n],
      ['b1.parquet', 0, 12n, 2n, 2n],
    ]);
  });

  it('reuses a merge on a later attempt, whose sequence number the added entries inherit', async () => {
    const io = new MemoryIO();
    const given = await manifests(io);
    const merger = new ManifestMerger(io, { enabled: true, minCountToMerge: 2, targetSizeBytes: 1 << 20 });
    const first = await merger.merge({ metadata, snapshotId: OURS, sequenceNumber: 3n, manifests: given });
    const again = await merger.merge({ metadata, snapshotId: OURS, sequenceNumber: 4n, manifests: given });
    expect(again[0]!.manifest_path).toBe(first[0]!.manifest_path);
    expect(again[0]).toMatchObject({ sequence_number: 4n, min_sequence_number: 1n });
    expect(merger.written).toHaveLength(1);
    const ours = readManifestEntries(io.files.get(again[0]!.manifest_path)!, again[0]).find((e) => e.status === ENTRY_STATUS.ADDED);
    expect(ours).toMatchObject({ snapshotId: OURS, sequenceNumber: 4n, fileSequenceNumber: 4n });

    // Other manifests make another bin, merged anew.
    const other = await merger.merge({ metadata, snapshotId: OURS, sequenceNumber: 4n, manifests: [given[0]!, given[2]!] });
    expect(other).toHaveLength(1);
    expect(merger.written).toEqual([first[0]!.manifest_path, other[0]!.manifest_path]);
    expect(other[0]).toMatchObject({ added_files_count: 1, existing_files_count: 2, existing_rows_count: 30n });
  });

  it('writes nothing when merging is off, and refuses an earlier entry without a sequence number', async () => {
    const io = new MemoryIO();
    const given = await manifests(io);
    const off = new ManifestMerger(io, { enabled: false, minCountToMerge: 1, targetSizeBytes: 1 << 20 });
    expect(await off.merge({ metadata, snapshotId: OURS, sequenceNumber: 3n, manifests: given })).toEqual(given);
    expect(io.files.size).toBe(3);

    const bad = writeManifestEntries({ schema, partitionSpec: spec, entries: [{ ...readManifestEntries(io.files.get('s3://m/a.avro')!)[0]!, status: 0, sequenceNumber: null }] });
    await io.put('s3://m/bad.avro', bad);
    const error = await new ManifestMerger(io, { enabled: true, minCountToMerge: 2, targetSizeBytes: 1 << 20 })
      .merge({ metadata, snapshotId: OURS, sequenceNumber: 3n, manifests: [given[0]!, listed('s3://m/bad.avro', bad.byteLength)] })
      .catch((e: unknown) => e);
    expect(isIcebergError(error, 'unsupported')).toBe(true);
  });
});
