import type { Snapshot, TableMetadata } from '../src/spec/metadata.ts';

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
