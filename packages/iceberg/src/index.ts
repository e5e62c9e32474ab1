export { IcebergError, isIcebergError, type IcebergErrorKind, type IcebergErrorOptions } from './errors.ts';
export { parseJson, stringifyJson } from './spec/json.ts';
export * from './spec/metadata.ts';
export * from './catalog/rest/index.ts';
export * from './io/index.ts';
export * from './spec/index.ts';
export { changeSchema, commitSchemaChange, type NewColumn, type SchemaChange, type SchemaChangeOptions, type SchemaChangeResult } from './transaction/schema-change.ts';
export { columnPath, hasColumn } from './transaction/schema-fields.ts';
export * from './writer/index.ts';
export { NdjsonConverterPool, type NdjsonParquet, type NdjsonParquetOptions, type NdjsonPoolOptions } from './parallel/ndjson-pool.ts';
export type { ParquetOptions } from './parallel/protocol.ts';
export { appendDataFiles, type AppendOptions, type AppendResult } from './transaction/append.ts';
export {
  DEFAULT_ORPHAN_AGE_MS,
  deleteOrphanFiles,
  type DeleteOrphanFilesOptions,
  type DeleteOrphanFilesResult,
  type OrphanSkipped,
} from './orphans/delete-orphans.ts';
export { compareFiles, fileUri, type CompareOptions, type OrphanComparison } from './orphans/compare.ts';
export { referencedFiles } from './orphans/reachable.ts';
export { DEFAULT_MIN_AGE_MS, DEFAULT_RETAIN_LAST, expireSnapshots, type ExpireSnapshotsOptions, type ExpireSnapshotsResult } from './transaction/expire-snapshots.ts';
export {
  DEFAULT_MANIFEST_MERGE_POLICY,
  MANIFEST_MERGE_ENABLED,
  MANIFEST_MIN_MERGE_COUNT,
  MANIFEST_TARGET_SIZE_BYTES,
  ManifestMerger,
  manifestMergePolicy,
  packEnd,
  planManifestMerge,
  type ManifestBin,
  type ManifestMergePolicy,
  type MergeRequest,
} from './transaction/merge-manifests.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './transaction/retry.ts';
export { mapBounded } from './transaction/bounded.ts';
export {
  commitWithRetries,
  passedOn,
  type CommitAttempt,
  type CommitContext,
  type CommitDriverOptions,
  DATA_FORMAT_VERSIONS,
  type NothingToDo,
  type PassedOn,
} from './transaction/commit-driver.ts';
export { CLOCK_MARGIN_MS, historyCovers, landed, type Landed, snapshotAttemptLanded } from './transaction/landed.ts';
export { type NewSnapshot, type SnapshotAttempt, writeSnapshotAttempt } from './transaction/snapshot-commit.ts';
export { listEntry, tally, type ManifestCounts, type WrittenManifest } from './transaction/written-manifest.ts';
export { newSnapshotId } from './transaction/snapshot-id.ts';
export { dataFileLocation, manifestListLocation, manifestLocation } from './transaction/locations.ts';
export { writeDataFile, type WriteDataFileOptions } from './transaction/write-data-file.ts';
export { putDataFile, type PutDataFileOptions } from './transaction/put-data-file.ts';
export {
  DEFAULT_MIN_INPUT_FILES,
  DEFAULT_TARGET_FILE_SIZE_BYTES,
  rewriteDataFiles,
  type RewriteDataFilesOptions,
  type RewriteDataFilesResult,
  type RewriteSkipped,
} from './transaction/rewrite-files.ts';
export { avroCompatibleName, bindPartitionSpec, type BoundPartitionField, type BoundPartitionSpec } from './partition/bound-spec.ts';
export { type PartitionedRows, splitByPartition } from './partition/split.ts';
export { applyTransform, parseTransform, type PartitionValue, type Transform } from './partition/transforms.ts';
export {
  type PartitionFieldRequest,
  partitionFieldText,
  type PartitionProblem,
  PartitionRequestError,
  parsePartitionField,
  resolvePartitionFields,
  sameFields,
} from './partition/request.ts';
