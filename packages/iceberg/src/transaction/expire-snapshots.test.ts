import { describe, expect, it } from 'vitest';
import type { RestCatalog } from '../catalog/rest/client.ts';
import type { CommitTableRequest, LoadTableResult } from '../catalog/rest/types.ts';
import { isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import type { Snapshot, SnapshotRef, TableMetadata } from '../spec/metadata.ts';
import { writeAvroFile } from '../writer/avro.ts';
import { readManifest, writeManifest } from '../writer/manifest.ts';
import { writeManifestList, type ManifestFile } from '../writer/manifest-list.ts';
import { MANIFEST_ENTRY_V2_SCHEMA } from '../writer/manifest-schemas.ts';
import { deleteUnreachableFiles, expireSnapshots, planExpiry } from './expire-snapshots.ts';

const LOCATION = 's3://warehouse/ns/t';

function snapshot(id: number, parent: number | null, timestampMs: number): Snapshot {
  return {
    'snapshot-id': BigInt(id),
    ...(parent === null ? {} : { 'parent-snapshot-id': BigInt(parent) }),
    'timestamp-ms': timestampMs,
    'manifest-list': `${LOCATION}/metadata/snap-${id}.avro`,
    summary: { operation: 'append' },
  };
}

function metadata(snapshots: Snapshot[], refs: Record<string, SnapshotRef>, properties: Record<string, string> = {}): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': 'u',
    location: LOCATION,
    'last-updated-ms': 0,
    'last-column-id': 1,
    schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }],
    'current-schema-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-spec-id': 0,
    properties,
    snapshots,
    refs,
  };
}

const branch = (id: number): SnapshotRef => ({ 'snapshot-id': BigInt(id), type: 'branch' });
const tag = (id: number): SnapshotRef => ({ 'snapshot-id': BigInt(id), type: 'tag' });
const ids = (snapshots: Snapshot[]): number[] => snapshots.map((s) => Number(s['snapshot-id'])).sort((a, b) => a - b);

/** Main: 1 ← 2 ← … ← 10, snapshot n at n seconds. */
const mainChain = Array.from({ length: 10 }, (_, i) => snapshot(i + 1, i === 0 ? null : i, (i + 1) * 1000));
const old = { minAgeMs: 0, now: 1_000_000 };

describe('planExpiry', () => {
  it('keeps the newest retainLast of main and expires the older ancestors', () => {
    expect(ids(planExpiry(metadata(mainChain, { main: branch(10) }), { retainLast: 3, ...old }))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(planExpiry(metadata(mainChain, { main: branch(10) }), { retainLast: 10, ...old })).toEqual([]);
  });

  it('keeps tagged snapshots, the whole ancestry of other branches, and expires orphans', () => {
    // dev: 11 ← 12, forked from main at 4; 20 is no ref's ancestor.
    const snapshots = [...mainChain, snapshot(11, 4, 500), snapshot(12, 11, 600), snapshot(20, 99, 700)];
    const plan = planExpiry(metadata(snapshots, { main: branch(10), dev: branch(12), v1: tag(6) }), { retainLast: 2, ...old });
    expect(ids(plan)).toEqual([5, 7, 8, 20]);
  });

  it('never expires a snapshot younger than minAgeMs', () => {
    const plan = planExpiry(metadata(mainChain, { main: branch(10) }), { retainLast: 1, minAgeMs: 6_000, now: 11_000 });
    // 6..10 are younger than 6 s; 5 is exactly 6 s old and goes.
    expect(ids(plan)).toEqual([1, 2, 3, 4, 5]);
  });

  it('expires every snapshot of a table whose main has none', () => {
    expect(ids(planExpiry(metadata(mainChain.slice(0, 2), {}), { retainLast: 5, ...old }))).toEqual([1, 2]);
  });
});

/** An in-memory store whose reads and deletes can be made to fail for chosen locations. */
class MemoryIO implements FileIO {
  readonly files = new Map<string, Uint8Array>();
  readonly failReads = new Set<string>();
  readonly failDeletes = new Set<string>();
  async put(location: string, bytes: Uint8Array): Promise<void> {
    this.files.set(location, bytes);
  }
  async get(location: string): Promise<Uint8Array> {
    const bytes = this.files.get(location);
    if (!bytes || this.failReads.has(location)) throw new Error(`cannot read ${location}`);
    return bytes;
  }
  async delete(location: string): Promise<void> {
    if (this.failDeletes.has(location)) throw new Error(`cannot delete ${location}`);
    this.files.delete(location);
  }
  async exists(location: string): Promise<boolean> {
    return this.files.has(location);
  }
}

const data = (name: string) => `${LOCATION}/data/${name}.parquet`;
const manifestPath = (n: number) => `${LOCATION}/metadata/m${n}.avro`;

/** Entry status (spec "Manifests"). */
const EXISTING = 0;
const ADDED = 1;
const DELETED = 2;

/** A manifest of the named files, each with its status, stored in `io` with the files. */
function putManifest(io: MemoryIO, n: number, files: Array<[name: string, status: number]>): ManifestFile {
  const written = writeManifest({
    schema: metadata([], {}).schemas[0]!,
    partitionSpec: { 'spec-id': 0, fields: [] },
    snapshotId: BigInt(n),
    dataFiles: files.map(([name]) => ({ filePath: data(name), fileSizeInBytes: 1, recordCount: 1 })),
  });
  const { metadata: avroMetadata, entries } = readManifest(written);
  const bytes = writeAvroFile(MANIFEST_ENTRY_V2_SCHEMA, entries.map((e, i) => ({ ...(e as object), status: files[i]![1] })), { metadata: avroMetadata });
  io.files.set(manifestPath(n), bytes);
  for (const [name] of files) io.files.set(data(name), new Uint8Array(1));
  const count = (status: number) => files.filter(([, s]) => s === status).length;
  return {
    manifest_path: manifestPath(n),
    manifest_length: BigInt(bytes.byteLength),
    partition_spec_id: 0,
    content: 0,
    sequence_number: 1n,
    min_sequence_number: 1n,
    added_snapshot_id: BigInt(n),
    added_files_count: count(ADDED),
    existing_files_count: count(EXISTING),
    deleted_files_count: count(DELETED),
    added_rows_count: 0n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: [],
    key_metadata: null,
  };
}

function putList(io: MemoryIO, s: Snapshot, manifests: ManifestFile[]): void {
  io.files.set(s['manifest-list'], writeManifestList({ snapshotId: s['snapshot-id'], parentSnapshotId: null, sequenceNumber: 1n, manifests }));
}

/**
 * 1 appends a (m1); 2 appends b and e (m2); 3 compacts a and b into c: m3 adds c, m4 rewrites
 * m1 and m2 with a and b deleted and e existing; 4 appends d (m5) on top of m3 and m4.
 * Expiring 1–3 with 4 kept leaves a and b unreachable, and e live through m4.
 */
function compactedTable() {
  const io = new MemoryIO();
  const s = [snapshot(1, null, 1), snapshot(2, 1, 2), snapshot(3, 2, 3), snapshot(4, 3, 4)] as const;
  const m1 = putManifest(io, 1, [['a', ADDED]]);
  const m2 = putManifest(io, 2, [['b', ADDED], ['e', ADDED]]);
  const m3 = putManifest(io, 3, [['c', ADDED]]);
  const m4 = putManifest(io, 4, [['a', DELETED], ['b', DELETED], ['e', EXISTING]]);
  const m5 = putManifest(io, 5, [['d', ADDED]]);
  putList(io, s[0], [m1]);
  putList(io, s[1], [m2, m1]);
  putList(io, s[2], [m3, m4]);
  putList(io, s[3], [m5, m3, m4]);
  return { io, s };
}

describe('deleteUnreachableFiles', () => {
  it('deletes the lists, manifests and files only the expired snapshots reached', async () => {
    const { io, s } = compactedTable();
    const cleanup = await deleteUnreachableFiles(io, [s[0], s[1], s[2]], metadata([s[3]], { main: branch(4) }));
    expect(cleanup).toEqual({ deleted: { manifestLists: 3, manifests: 2, dataFiles: 2 }, complete: true });
    const left = [manifestPath(3), manifestPath(4), manifestPath(5), data('c'), data('d'), data('e'), s[3]['manifest-list']];
    expect([...io.files.keys()].sort()).toEqual(left.sort());
  });

  it('keeps what a kept snapshot still reaches, a tagged one included', async () => {
    const { io, s } = compactedTable();
    const cleanup = await deleteUnreachableFiles(io, [s[1], s[2]], metadata([s[0], s[3]], { main: branch(4), first: tag(1) }));
    // The tag keeps m1 and a; m2 goes, and of its files only b (e is live in m4).
    expect(cleanup).toEqual({ deleted: { manifestLists: 2, manifests: 1, dataFiles: 1 }, complete: true });
    expect(io.files.has(manifestPath(1))).toBe(true);
    expect(io.files.has(data('a'))).toBe(true);
    expect(io.files.has(data('e'))).toBe(true);
    expect(io.files.has(data('b'))).toBe(false);
  });

  it('deletes no data file when a kept manifest cannot be read', async () => {
    const { io, s } = compactedTable();
    io.failReads.add(manifestPath(3));
    const cleanup = await deleteUnreachableFiles(io, [s[0], s[1], s[2]], metadata([s[3]], { main: branch(4) }));
    expect(cleanup).toEqual({ deleted: { manifestLists: 3, manifests: 2, dataFiles: 0 }, complete: false });
    expect(io.files.has(data('a'))).toBe(true);
    expect(io.files.has(data('b'))).toBe(true);
  });

  it('deletes no manifest and no data file when a kept list cannot be read', async () => {
    const { io, s } = compactedTable();
    io.failReads.add(s[3]['manifest-list']);
    const cleanup = await deleteUnreachableFiles(io, [s[0], s[1], s[2]], metadata([s[3]], { main: branch(4) }));
    expect(cleanup).toEqual({ deleted: { manifestLists: 3, manifests: 0, dataFiles: 0 }, complete: false });
  });

  it('keeps a removed manifest it cannot read with its files, and counts only the deletes that worked', async () => {
    const { io, s } = compactedTable();
    io.failReads.add(manifestPath(2));
    io.failDeletes.add(data('a'));
    const cleanup = await deleteUnreachableFiles(io, [s[0], s[1], s[2]], metadata([s[3]], { main: branch(4) }));
    expect(cleanup).toEqual({ deleted: { manifestLists: 3, manifests: 1, dataFiles: 0 }, complete: false });
    expect(io.files.has(manifestPath(1))).toBe(false);
    expect(io.files.has(manifestPath(2))).toBe(true);
    expect(io.files.has(data('a'))).toBe(true);
    expect(io.files.has(data('b'))).toBe(true);
  });
});

/** A catalog that records commits and answers them with the given metadata. */
function recordingCatalog(after: TableMetadata) {
  const commits: CommitTableRequest[] = [];
  const catalog = {
    commitTable: async (_table: unknown, request: CommitTableRequest) => {
      commits.push(request);
      return { metadataLocation: `${LOCATION}/metadata/v2.metadata.json`, metadata: after };
    },
  } as unknown as RestCatalog;
  return { catalog, commits };
}

function base(table: TableMetadata): LoadTableResult {
  return { metadata: table, metadataLocation: undefined, config: {}, storageCredentials: [] };
}

describe('expireSnapshots commit', () => {
  const table = { namespace: 'ns', name: 't' };

  it('commits remove-snapshots guarded by the uuid and every ref, with the table property raising retainLast', async () => {
    const before = metadata(mainChain, { main: branch(10), v1: tag(9) }, { 'history.expire.min-snapshots-to-keep': '6' });
    const after = metadata(mainChain.slice(4), before.refs!);
    const { catalog, commits } = recordingCatalog(after);
    const result = await expireSnapshots({ catalog, table, io: new MemoryIO(), base: base(before), retainLast: 3, minAgeMs: 0 });
    expect(commits).toEqual([
      {
        requirements: [
          { type: 'assert-table-uuid', uuid: 'u' },
          { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 10n },
          { type: 'assert-ref-snapshot-id', ref: 'v1', 'snapshot-id': 9n },
        ],
        updates: [{ action: 'remove-snapshots', 'snapshot-ids': [1n, 2n, 3n, 4n] }],
      },
    ]);
    // Every manifest list is missing from the store: nothing could be read.
    expect(result).toMatchObject({ expired: [1n, 2n, 3n, 4n], kept: 6, attempts: 1, cleanupComplete: false });
  });

  it('commits nothing when nothing is old enough', async () => {
    const before = metadata(mainChain, { main: branch(10) });
    const { catalog, commits } = recordingCatalog(before);
    const result = await expireSnapshots({ catalog, table, io: new MemoryIO(), base: base(before), retainLast: 1, minAgeMs: 60_000, now: 20_000 });
    expect(commits).toEqual([]);
    expect(result).toMatchObject({ expired: [], kept: 10, attempts: 0, cleanupComplete: true });
  });

  it.each([[0], [1.5], [-1]])('refuses a retainLast of %s', async (retainLast) => {
    const before = metadata(mainChain, { main: branch(10) });
    const { catalog, commits } = recordingCatalog(before);
    const error = await expireSnapshots({ catalog, table, io: new MemoryIO(), base: base(before), retainLast }).catch((e: unknown) => e);
    expect(isIcebergError(error, 'bad_request')).toBe(true);
    expect(commits).toEqual([]);
  });
});
