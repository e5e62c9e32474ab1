import { randomUUID } from 'node:crypto';

/**
 * File locations under a table's `location`. Data files go in `data/`, manifests and
 * manifest lists flat in `metadata/` (some catalogs, SeaweedFS table buckets among them,
 * accept nothing else).
 */
function base(tableLocation: string): string {
  return tableLocation.replace(/\/+$/, '');
}

/** `data/<uuid>.parquet`, or under the partition's directory (`data/day=2026-12-01/…`). */
export function dataFileLocation(tableLocation: string, partitionPath?: string): string {
  return `${base(tableLocation)}/data/${partitionPath ? `${partitionPath}/` : ''}${randomUUID()}.parquet`;
}

export function manifestLocation(tableLocation: string): string {
  return `${base(tableLocation)}/metadata/${randomUUID()}-m0.avro`;
}

/** `snap-<snapshot id>-<attempt>-<uuid>.avro`, the name Java and PyIceberg give manifest lists. */
export function manifestListLocation(tableLocation: string, snapshotId: bigint, attempt: number): string {
  return `${base(tableLocation)}/metadata/snap-${snapshotId}-${attempt}-${randomUUID()}.avro`;
}
