import type { CommitTableRequest } from '../catalog/rest/types.ts';
import type { FileIO } from '../io/file-io.ts';
import { branchHead as branchHeadOf, MAIN_BRANCH, type Snapshot, type SnapshotSummary, type TableMetadata } from '../spec/metadata.ts';
import { type ManifestFile, writeManifestList } from '../writer/manifest-list.ts';
import type { CommitAttempt, CommitContext } from './commit-driver.ts';
import { snapshotAttemptLanded } from './landed.ts';
import { manifestListLocation } from './locations.ts';
import { snapshotRowIds } from './row-lineage.ts';

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

/** One commit attempt of a snapshot on main, less its result; and the manifests its list holds. */
export type SnapshotAttempt = Omit<CommitAttempt<never>, 'result'> & { manifests: ManifestFile[]; manifestList: string };

/**
 * Writes the manifest list of snapshot `snapshotId` built on main's head in `context.metadata`
 * (format v3: row ids assigned from the table's next-row-id, reread on every attempt), records
 * it with the driver, and answers the attempt that commits it as main's head: the list and
 * its manifests referenced, the list the attempt's own, a lost answer settled by
 * `snapshotAttemptLanded`.
 */
export async function writeSnapshotAttempt(
  io: FileIO,
  context: CommitContext,
  snapshot: { snapshotId: bigint; sequenceNumber: bigint; manifests: readonly ManifestFile[]; summary: SnapshotSummary },
): Promise<SnapshotAttempt> {
  const { metadata, attempt, startedAt } = context;
  const { snapshotId, sequenceNumber } = snapshot;
  const parent = branchHeadOf(metadata);
  const lineage = metadata['format-version'] >= 3 ? snapshotRowIds(metadata, snapshot.manifests) : undefined;
  const manifests = lineage?.manifests ?? [...snapshot.manifests];
  const manifestList = manifestListLocation(metadata.location, snapshotId, attempt);
  context.wrote(manifestList);
  await io.put(
    manifestList,
    writeManifestList({
      snapshotId,
      parentSnapshotId: parent?.['snapshot-id'] ?? null,
      sequenceNumber,
      manifests,
      ...(lineage ? { formatVersion: 3, firstRowId: lineage.firstRowId } : {}),
    }),
  );
  return {
    ...mainSnapshotCommit(metadata, parent, {
      snapshotId,
      sequenceNumber,
      manifestList,
      summary: snapshot.summary,
      ...(lineage ? { firstRowId: lineage.firstRowId, addedRows: lineage.addedRows } : {}),
    }),
    references: [manifestList, ...manifests.map((m) => m.manifest_path)],
    ownFiles: [manifestList],
    landed: (reloaded) => snapshotAttemptLanded(io, reloaded, { snapshotId, manifestList }, startedAt),
    manifests,
    manifestList,
  };
}
