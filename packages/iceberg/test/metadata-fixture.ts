import type { Snapshot, TableMetadata } from '../src/spec/metadata.ts';
import type { ManifestFile } from '../src/writer/manifest-list.ts';

/**
 * A table's metadata reduced to what history questions read (unit tests of landed checks and
 * of the roll invariant): its snapshots, main's head (none: no `main` ref) and the earlier
 * versions its `metadata-log` lists, oldest first.
 */
export function metadataFixture(snapshots: Snapshot[], head: bigint | null, updatedMs: number, log: Array<[at: number, file: string]> = []): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': 'u',
    location: 's3://w/t',
    'last-updated-ms': updatedMs,
    'last-column-id': 1,
    schemas: [],
    'current-schema-id': 0,
    'partition-specs': [],
    'default-spec-id': 0,
    snapshots,
    ...(head === null ? {} : { refs: { main: { 'snapshot-id': head, type: 'branch' } } }),
    ...(log.length === 0 ? {} : { 'metadata-log': log.map(([at, file]) => ({ 'timestamp-ms': at, 'metadata-file': file })) }),
  };
}

/** A manifest list entry of `length` bytes with one live file unless told otherwise. */
export function manifestFileFixture(path: string, length: number, more: Partial<ManifestFile> = {}): ManifestFile {
  return {
    manifest_path: path,
    manifest_length: BigInt(length),
    partition_spec_id: 0,
    content: 0,
    sequence_number: 1n,
    min_sequence_number: 1n,
    added_snapshot_id: 1n,
    added_files_count: 1,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 1n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: [],
    key_metadata: null,
    ...more,
  };
}
