import { ENTRY_STATUS, type ManifestEntry } from '../writer/manifest.ts';
import type { FieldSummary, ManifestFile } from '../writer/manifest-list.ts';

export type ManifestCounts = Pick<
  ManifestFile,
  'added_files_count' | 'existing_files_count' | 'deleted_files_count' | 'added_rows_count' | 'existing_rows_count' | 'deleted_rows_count'
>;

/** A data manifest a commit wrote, with what its manifest list entry says about it. */
export interface WrittenManifest {
  location: string;
  length: bigint;
  specId: number;
  /** The least data sequence number its entries carry; null when every entry inherits the commit's. */
  minSequenceNumber: bigint | null;
  counts: ManifestCounts;
  /** Null when they cannot be computed (readers then never skip the manifest). */
  partitions: FieldSummary[] | null;
}

/** The file and row counts of a manifest's entries, and the least sequence number they carry. */
export function tally(entries: readonly Pick<ManifestEntry, 'status' | 'sequenceNumber' | 'dataFile'>[]): Pick<WrittenManifest, 'counts' | 'minSequenceNumber'> {
  const counts: ManifestCounts = { added_files_count: 0, existing_files_count: 0, deleted_files_count: 0, added_rows_count: 0n, existing_rows_count: 0n, deleted_rows_count: 0n };
  let minSequenceNumber: bigint | null = null;
  for (const entry of entries) {
    const rows = entry.dataFile.record_count;
    if (entry.status === ENTRY_STATUS.ADDED) {
      counts.added_files_count += 1;
      counts.added_rows_count += rows;
    } else if (entry.status === ENTRY_STATUS.EXISTING) {
      counts.existing_files_count += 1;
      counts.existing_rows_count += rows;
    } else {
      counts.deleted_files_count += 1;
      counts.deleted_rows_count += rows;
    }
    const sequence = entry.sequenceNumber;
    if (sequence !== null && (minSequenceNumber === null || sequence < minSequenceNumber)) minSequenceNumber = sequence;
  }
  return { counts, minSequenceNumber };
}

/** The manifest list entry of a manifest written for snapshot `snapshotId` (the one place such an entry is made). */
export function listEntry(manifest: WrittenManifest, snapshotId: bigint, sequenceNumber: bigint): ManifestFile {
  return {
    manifest_path: manifest.location,
    manifest_length: manifest.length,
    partition_spec_id: manifest.specId,
    content: 0,
    sequence_number: sequenceNumber,
    // Entries without one inherit the commit's, so theirs is at most that.
    min_sequence_number: manifest.minSequenceNumber ?? sequenceNumber,
    added_snapshot_id: snapshotId,
    ...manifest.counts,
    partitions: manifest.partitions,
    key_metadata: null,
  };
}
