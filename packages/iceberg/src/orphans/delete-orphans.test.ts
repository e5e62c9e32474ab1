import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors.ts';
import type { ListedFile, ListingFileIO } from '../io/file-io.ts';
import { stringifyJson } from '../spec/json.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { deleteOrphanFiles } from './delete-orphans.ts';

const LOCATION = 's3://bucket/ns/events';
const OLD = 1_000;
const NOW = 10_000;

/** Files with modification times; a missing file is `not_found`, as S3FileIO says it. */
class ListedMemoryIO implements ListingFileIO {
  readonly files = new Map<string, { bytes: Uint8Array; lastModified: number }>();
  listingFails = false;
  unreadable = new Set<string>();
  async put(location: string, bytes: Uint8Array): Promise<void> {
    this.files.set(location, { bytes, lastModified: OLD });
  }
  putAt(location: string, bytes: Uint8Array, lastModified: number): void {
    this.files.set(location, { bytes, lastModified });
  }
  async get(location: string): Promise<Uint8Array> {
    if (this.unreadable.has(location)) throw new IcebergError('unavailable', `get ${location}: no response`);
    const file = this.files.get(location);
    if (!file) throw new IcebergError('not_found', `get ${location}: NoSuchKey`);
    return file.bytes;
  }
  async delete(location: string): Promise<void> {
    this.files.delete(location);
  }
  async exists(location: string): Promise<boolean> {
    return this.files.has(location);
  }
  async *list(prefix: string): AsyncIterable<ListedFile> {
    for (const [location, file] of this.files) {
      if (this.listingFails) throw new IcebergError('unavailable', `list ${prefix}: no response`);
      if (location.startsWith(prefix)) yield { location, lastModified: file.lastModified, size: file.bytes.byteLength };
    }
  }
}

function tableMetadata(extra: Partial<TableMetadata> = {}): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': '00000000-0000-0000-0000-000000000001',
    location: LOCATION,
    'last-updated-ms': OLD,
    'last-column-id': 1,
    schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: true, type: 'long' }] }],
    'current-schema-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-spec-id': 0,
    snapshots: [],
    ...extra,
  };
}

const v = (n: number) => `${LOCATION}/metadata/v${n}.metadata.json`;
const bytes = (text: string) => new TextEncoder().encode(text);

/** A table of three metadata versions (v2's log names v1; v3, the current one, names v2 only: v1 is out of the log) and two strays. */
async function table(): Promise<{ io: ListedMemoryIO; metadata: TableMetadata }> {
  const io = new ListedMemoryIO();
  await io.put(v(1), bytes(stringifyJson(tableMetadata())));
  await io.put(v(2), bytes(stringifyJson(tableMetadata({ 'metadata-log': [{ 'metadata-file': v(1), 'timestamp-ms': OLD }] }))));
  const metadata = tableMetadata({ 'metadata-log': [{ 'metadata-file': v(2), 'timestamp-ms': OLD }], statistics: [{ 'statistics-path': `${LOCATION}/metadata/s.puffin` }] });
  await io.put(v(3), bytes(stringifyJson(metadata)));
  await io.put(`${LOCATION}/metadata/s.puffin`, bytes('stats'));
  await io.put(`${LOCATION}/data/old-stray.parquet`, bytes('old'));
  io.putAt(`${LOCATION}/data/young-stray.parquet`, bytes('young'), NOW);
  return { io, metadata };
}

describe('deleteOrphanFiles', () => {
  it('deletes old unreferenced files only, a metadata file the log no longer names among them; statistics and young files stay', async () => {
    const { io, metadata } = await table();
    const dry = await deleteOrphanFiles({ io, metadataLocation: v(3), metadata, olderThan: NOW, dryRun: true });
    expect(dry).toMatchObject({ found: 2, deleted: 0, young: 1, skipped: null });
    expect(dry.sample.sort()).toEqual([`${LOCATION}/data/old-stray.parquet`, v(1)]);
    expect(io.files.size).toBe(6);
    const v1Bytes = io.files.get(v(1))!.bytes.byteLength;
    const run = await deleteOrphanFiles({ io, metadataLocation: v(3), metadata, olderThan: NOW });
    expect(run).toMatchObject({ found: 2, deleted: 2, deletedBytes: 3 + v1Bytes, young: 1, failed: 0, skipped: null });
    expect([...io.files.keys()].sort()).toEqual([`${LOCATION}/data/young-stray.parquet`, `${LOCATION}/metadata/s.puffin`, v(2), v(3)]);
  });

  it('forgives a metadata file the log names that is gone', async () => {
    const { io, metadata } = await table();
    await io.delete(v(2));
    expect(await deleteOrphanFiles({ io, metadataLocation: v(3), metadata, olderThan: NOW })).toMatchObject({ deleted: 2, skipped: null });
  });

  it('deletes nothing when a file the current metadata reaches cannot be read', async () => {
    const { io, metadata } = await table();
    const withSnapshot = tableMetadata({
      snapshots: [{ 'snapshot-id': 1n, 'timestamp-ms': OLD, 'manifest-list': `${LOCATION}/metadata/snap-1.avro`, summary: { operation: 'append' } }],
    });
    const missing = await deleteOrphanFiles({ io, metadataLocation: v(3), metadata: withSnapshot, olderThan: NOW });
    expect(missing).toMatchObject({ deleted: 0, skipped: 'references_unreadable' });
    io.unreadable.add(v(2));
    expect(await deleteOrphanFiles({ io, metadataLocation: v(3), metadata, olderThan: NOW })).toMatchObject({ deleted: 0, skipped: 'references_unreadable' });
    expect(io.files.has(`${LOCATION}/data/old-stray.parquet`)).toBe(true);
  });

  it('deletes nothing when the listing fails, or the current metadata file is not known', async () => {
    const { io, metadata } = await table();
    io.listingFails = true;
    expect(await deleteOrphanFiles({ io, metadataLocation: v(3), metadata, olderThan: NOW })).toMatchObject({ deleted: 0, skipped: 'listing_failed' });
    io.listingFails = false;
    expect(await deleteOrphanFiles({ io, metadataLocation: undefined, metadata, olderThan: NOW })).toMatchObject({ deleted: 0, skipped: 'no_metadata_location' });
    expect(io.files.size).toBe(6);
  });

  it('deletes nothing when a listed path is referenced under another bucket', async () => {
    const { io } = await table();
    const elsewhere = tableMetadata({ statistics: [{ 'statistics-path': 's3://other/ns/events/data/old-stray.parquet' }] });
    const run = await deleteOrphanFiles({ io, metadataLocation: v(3), metadata: elsewhere, olderThan: NOW });
    expect(run).toMatchObject({ deleted: 0, skipped: 'prefix_mismatch' });
    expect(run.detail).toContain('s3://other/ns/events/data/old-stray.parquet');
    expect(io.files.size).toBe(6);
  });
});
