import type { CommitTableRequest } from '../catalog/rest/types.ts';
import { MAIN_BRANCH, type Snapshot, type SnapshotSummary, type TableMetadata } from '../spec/metadata.ts';

export interface NewSnapshot {
  snapshotId: bigint;
  sequenceNumber: bigint;
  manifestList: string;
  summary: SnapshotSummary;
  /** v3 row lineage: the snapshot's first row id (the table's next-row-id) and the ids it assigns. */
  firstRowId?: bigint;
  addedRows?: bigint;
}

/**
 * The commit of a snapshot built on `parent` (main's head in `metadata`) as main's new head,
 * guarded by the table's uuid and that head: if another writer moved main meanwhile, the
 * catalog answers 409 and nothing changes.
 */
export function mainSnapshotCommit(metadata: TableMetadata, parent: Snapshot | undefined, snapshot: NewSnapshot): CommitTableRequest {
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, 'snapshot-id': parent?.['snapshot-id'] ?? null },
    ],
    updates: [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': snapshot.snapshotId,
          ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
          'sequence-number': Number(snapshot.sequenceNumber),
          // Never behind the table's own clock, which catalogs check against.
          'timestamp-ms': Math.max(Date.now(), metadata['last-updated-ms']),
          'manifest-list': snapshot.manifestList,
          summary: snapshot.summary,
          'schema-id': metadata['current-schema-id'],
          ...(snapshot.firstRowId === undefined ? {} : { 'first-row-id': snapshot.firstRowId, 'added-rows': snapshot.addedRows ?? 0n }),
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': MAIN_BRANCH, type: 'branch', 'snapshot-id': snapshot.snapshotId },
    ],
  };
}
