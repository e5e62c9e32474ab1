import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readAvroFile } from './avro.ts';
import { type ManifestFile, readManifestList, writeManifestList } from './manifest-list.ts';

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));

const OURS: ManifestFile = {
  manifest_path: 's3://warehouse/ns/t/metadata/m0.avro',
  manifest_length: 4321n,
  partition_spec_id: 0,
  content: 0,
  sequence_number: 7n,
  min_sequence_number: 7n,
  added_snapshot_id: 9223372036854775807n,
  added_files_count: 1,
  existing_files_count: 0,
  deleted_files_count: 0,
  added_rows_count: 500000n,
  existing_rows_count: 0n,
  deleted_rows_count: 0n,
  partitions: [],
  key_metadata: null,
  first_row_id: null,
};

describe('manifest lists', () => {
  it('round-trip with exact 63-bit ids and the v2 file metadata', () => {
    const bytes = writeManifestList({ snapshotId: 8333333333333333333n, parentSnapshotId: null, sequenceNumber: 7n, manifests: [OURS] });
    const file = readAvroFile(bytes);
    expect(file.metadata).toMatchObject({ 'snapshot-id': '8333333333333333333', 'parent-snapshot-id': 'null', 'sequence-number': '7', 'format-version': '2' });
    expect((file.schema as { name: string }).name).toBe('manifest_file');
    expect(file.metadata['avro.schema']).toContain('"element-id":508');
    expect(readManifestList(bytes)).toEqual([OURS]);
  });

  it('carries a list written by PyIceberg over verbatim', () => {
    const theirs = readManifestList(fixture('pyiceberg-manifest-list.avro'));
    expect(theirs.map((m) => m.added_snapshot_id)).toEqual([1116803133977799927n, 2719096572041824425n]);
    expect(theirs[0]).toMatchObject({ content: 0, sequence_number: 2n, min_sequence_number: 2n, added_rows_count: 1n, partitions: [], key_metadata: null });

    const bytes = writeManifestList({ snapshotId: 5n, parentSnapshotId: 1116803133977799927n, sequenceNumber: 3n, manifests: [OURS, ...theirs] });
    expect(readAvroFile(bytes).metadata['parent-snapshot-id']).toBe('1116803133977799927');
    expect(readManifestList(bytes)).toEqual([OURS, ...theirs]);
  });

  it('keeps partition summaries and key metadata bytes', () => {
    const manifest: ManifestFile = {
      ...OURS,
      partitions: [{ contains_null: true, contains_nan: null, lower_bound: new Uint8Array([1, 2]), upper_bound: null }],
      key_metadata: new Uint8Array([9]),
    };
    const [back] = readManifestList(writeManifestList({ snapshotId: 1n, parentSnapshotId: null, sequenceNumber: 1n, manifests: [manifest] }));
    expect(back?.partitions?.[0]?.contains_null).toBe(true);
    expect([...(back?.partitions?.[0]?.lower_bound ?? [])]).toEqual([1, 2]);
    expect([...(back?.key_metadata ?? [])]).toEqual([9]);
  });
});
