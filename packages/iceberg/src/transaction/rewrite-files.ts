import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent } from '../catalog/rest/types.ts';
import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { branchHead, defaultPartitionSpec, type TableMetadata } from '../spec/metadata.ts';
import type { DataFile } from '../writer/data-file.ts';
import type { ManifestDataFile } from '../writer/index.ts';
import { replaceInManifests, writeAddedManifest } from './replace-manifests.ts';
import { listEntry, type WrittenManifest } from './written-manifest.ts';
import { rewriteBin } from './rewrite-bin.ts';
import type { InheritedLineage } from './row-lineage.ts';
import { changedPartitions, type PartitionedBin, packPartitionBins } from './rewrite-partitions.ts';
import { type KeptFiles, readableFiles, smallFiles } from './rewrite-plan.ts';
import { commitWithRetries, DATA_FORMAT_VERSIONS, passedOn } from './commit-driver.ts';
import type { RetryPolicy } from './retry.ts';
import { writeSnapshotAttempt } from './snapshot-commit.ts';
import { newSnapshotId } from './snapshot-id.ts';
import { type AppendedFiles, replaceSummary } from './summary.ts';
import { type HeadContents, type ManifestCache, readHeadContents } from './table-contents.ts';

/** Iceberg's default `write.target-file-size-bytes`. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * 1024 * 1024;
/** Java's default `min-input-files` of its rewrite action. */
export const DEFAULT_MIN_INPUT_FILES = 5;

export interface RewriteDataFilesOptions {
  catalog: RestCatalog;
  table: TableIdent;
  io: FileIO;
  /** Files smaller than this are rewritten into files of about this size. Default: the table's `write.target-file-size-bytes`, else 512 MiB. */
  targetFileSizeBytes?: number;
  /** Fewer small files in a partition than this: they are left as they are. Default 5. */
  minInputFiles?: number;
  /** The table as last loaded; loaded when omitted. */
  base?: LoadTableResult;
  retry?: Partial<RetryPolicy>;
  /** Called with the base of every commit attempt (e.g. a lease check); throw to stop the rewrite. */
  validateBase?: (metadata: TableMetadata) => void | Promise<void>;
  /** Extra snapshot summary properties (strings). */
  summary?: Record<string, string>;
}

export type RewriteSkipped = 'delete_files' | 'too_few_files';

export interface RewriteDataFilesResult {
  /** The replace snapshot on `main`; null when there was nothing to do. */
  snapshotId: bigint | null;
  skipped?: RewriteSkipped;
  rewritten: { files: number; bytes: bigint; rows: bigint };
  added: { files: number; bytes: bigint };
  /** Live data files before and after, on the head the snapshot was committed on. */
  dataFilesBefore: number;
  dataFilesAfter: number;
  /** The table after the rewrite (or as loaded, when skipped). */
  metadata: TableMetadata;
  /** Commit attempts made. */
  attempts: number;
}

/** What an attempt planned and wrote, committed by every attempt after it on the same schema and spec. */
interface Rewrite {
  snapshotId: bigint;
  /** The table's current schema and default spec the files were written under. */
  schemaId: number;
  specId: number;
  replacedPaths: ReadonlySet<string>;
  dataFiles: DataFile[];
  added: WrittenManifest;
  removed: AppendedFiles;
  addedTotals: AppendedFiles;
  /** Rewritten manifests by the manifests they replace (see `replaceInManifests`). */
  rewritten: Map<string, WrittenManifest>;
  /** Partitions the replaced and the new files are in (the summary's `changed-partition-count`). */
  changedPartitions: number;
}

/**
 * Compacts a format v2 or v3 table: live data files smaller than the target are read and written
 * again, their rows unchanged, as few larger files, committed as one `replace` snapshot on
 * `main`. Every file is read through the table's current schema by field id, whatever schema
 * it was written with (see `readableFiles`), and written under it, grouped by partition (see
 * `packPartitionBins`: a partition's small files become files of that partition; files of an
 * older spec are written again under the current one); a table with delete files is left
 * alone. On a v3 table every row keeps its `_row_id` and `_last_updated_sequence_number`,
 * written into the new files (see row-lineage.ts).
 *
 * Committed through the commit driver (commit-driver.ts), asserting the schema and spec the
 * files were written under: a lost race (409) reloads and, if the schema and spec are the same,
 * every replaced file is still live and no delete file appeared, commits the same files again
 * on the new head; after a schema or spec change it plans and writes again; otherwise it fails
 * with `validation_failed` and what it wrote is deleted. A lost answer (5xx) is settled by
 * reloading and looking for the snapshot on `main`.
 */
export async function rewriteDataFiles(options: RewriteDataFilesOptions): Promise<RewriteDataFilesResult> {
  const { io } = options;
  const cache: ManifestCache = new Map();
  let rewrite: Rewrite | undefined;
  return commitWithRetries<RewriteDataFilesResult>({
    ...passedOn(options),
    operation: 'rewrite',
    formatVersions: DATA_FORMAT_VERSIONS,
    build: async (context) => {
      const { metadata, wrote } = context;
      const contents = await readHeadContents(io, metadata, cache);
      // The table's schema or spec changed since the plan (an owner's change won the race): what
      // was written is not under today's, so plan again (the driver deletes the earlier files).
      if (rewrite !== undefined && !plannedUnder(rewrite, metadata)) rewrite = undefined;
      if (rewrite === undefined) {
        const planned = await plan(options, metadata, contents);
        if (!('bins' in planned)) return { nothingToDo: skipped(planned.skipped, metadata, contents) };
        rewrite = await writeRewrite(io, metadata, contents, planned.bins, planned.kept, wrote);
      }
      assertStillReplaceable(contents, rewrite.replacedPaths);
      await options.validateBase?.(metadata);
      const { snapshotId } = rewrite;
      const sequenceNumber = BigInt((metadata['last-sequence-number'] ?? 0) + 1);
      const listed = [
        listEntry(rewrite.added, snapshotId, sequenceNumber),
        ...(await replaceInManifests(io, metadata, contents, rewrite.replacedPaths, snapshotId, sequenceNumber, rewrite.rewritten)),
      ];
      for (const manifest of rewrite.rewritten.values()) wrote(manifest.location);
      const summary = replaceSummary(branchHead(metadata)?.summary, rewrite.addedTotals, rewrite.removed, liveTotals(contents), options.summary, rewrite.changedPartitions);
      // v3: the snapshot takes row ids for its new manifests as any other (Java's manifest list writer).
      const commit = await writeSnapshotAttempt(io, context, { snapshotId, sequenceNumber, manifests: listed, summary });
      const done = rewrite;
      return {
        ...commit,
        // Written under this schema and spec: a change to either must lose the commit (409), so the rewrite is planned again.
        requirements: [
          ...commit.requirements,
          { type: 'assert-current-schema-id', 'current-schema-id': done.schemaId },
          { type: 'assert-default-spec-id', 'default-spec-id': done.specId },
        ],
        references: [...commit.references!, ...done.dataFiles.map((f) => f.filePath)],
        result: (after, attempts) => result(after, contents, done, attempts),
      };
    },
  });
}

/** The bins to rewrite, or why the table is left as it is. */
async function plan(
  options: RewriteDataFilesOptions,
  metadata: TableMetadata,
  contents: HeadContents,
): Promise<{ bins: PartitionedBin[]; kept: KeptFiles } | { skipped: RewriteSkipped }> {
  if (contents.deleteFiles > 0) return { skipped: 'delete_files' };
  const target = BigInt(options.targetFileSizeBytes ?? tableTargetSize(metadata));
  const minInputFiles = options.minInputFiles ?? DEFAULT_MIN_INPUT_FILES;
  const small = smallFiles(contents, target);
  if (small.length < minInputFiles) return { skipped: 'too_few_files' };
  const kept: KeptFiles = new Map();
  const bins = packPartitionBins(await readableFiles(options.io, metadata, small, kept), metadata, contents, target, minInputFiles);
  return bins.length === 0 ? { skipped: 'too_few_files' } : { bins, kept };
}

function skipped(skipped: RewriteSkipped, metadata: TableMetadata, contents: HeadContents): RewriteDataFilesResult {
  return {
    snapshotId: null,
    skipped,
    rewritten: { files: 0, bytes: 0n, rows: 0n },
    added: { files: 0, bytes: 0n },
    dataFilesBefore: contents.live.size,
    dataFilesAfter: contents.live.size,
    metadata,
    attempts: 0,
  };
}

/**
 * Writes the bins' rows as new data files and their manifest, once for every attempt. The new
 * files' data sequence number is the one of the snapshot the rewrite started from.
 */
async function writeRewrite(
  io: FileIO,
  start: TableMetadata,
  contents: HeadContents,
  bins: readonly PartitionedBin[],
  kept: KeptFiles,
  wrote: (location: string) => void,
): Promise<Rewrite> {
  const replaced = bins.flatMap((bin) => bin.files);
  const dataFiles: DataFile[] = [];
  const lineage = start['format-version'] >= 3 ? (file: ManifestDataFile) => inheritedLineage(contents, file) : undefined;
  for (const bin of bins) {
    for (const file of await rewriteBin(io, start.location, bin, kept, lineage, bin.output)) {
      wrote(file.filePath);
      dataFiles.push(file);
    }
  }
  kept.clear();
  const snapshotId = newSnapshotId();
  const startingSequenceNumber = BigInt(branchHead(start)?.['sequence-number'] ?? start['last-sequence-number'] ?? 0);
  const spec = defaultPartitionSpec(start);
  const added = await writeAddedManifest(io, start, spec, snapshotId, startingSequenceNumber, dataFiles);
  wrote(added.location);
  const removed = counted(replaced.length, replaced);
  const addedTotals: AppendedFiles = {
    dataFiles: dataFiles.length,
    records: dataFiles.reduce((sum, f) => sum + BigInt(f.recordCount), 0n),
    filesSize: dataFiles.reduce((sum, f) => sum + BigInt(f.fileSizeInBytes), 0n),
  };
  if (addedTotals.records !== removed.records) {
    throw new IcebergError('validation_failed', `the rewrite read ${removed.records} rows but wrote ${addedTotals.records}`);
  }
  return {
    snapshotId,
    schemaId: start['current-schema-id'],
    specId: spec['spec-id'],
    replacedPaths: new Set(replaced.map((file) => file.file_path)),
    dataFiles,
    added,
    removed,
    addedTotals,
    rewritten: new Map(),
    changedPartitions: changedPartitions(contents, replaced, spec['spec-id'], dataFiles),
  };
}

/** What a live data file's rows inherit: its first row id (as its entry was read, inheritance applied) and its data sequence number. */
function inheritedLineage(contents: HeadContents, file: ManifestDataFile): InheritedLineage {
  const sequenceNumber = contents.live.get(file.file_path)?.entry.sequenceNumber;
  if (sequenceNumber === undefined || sequenceNumber === null) throw new IcebergError('unsupported', `data file ${file.file_path} has no data sequence number to carry`);
  return { firstRowId: typeof file.first_row_id === 'bigint' ? file.first_row_id : null, sequenceNumber };
}

function plannedUnder(rewrite: Rewrite, metadata: TableMetadata): boolean {
  return rewrite.schemaId === metadata['current-schema-id'] && rewrite.specId === metadata['default-spec-id'];
}

/** The table's `write.target-file-size-bytes` when it is a positive integer, else Iceberg's default. */
function tableTargetSize(metadata: TableMetadata): number {
  const value = Number(metadata.properties?.['write.target-file-size-bytes']);
  return Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_TARGET_FILE_SIZE_BYTES;
}

/**
 * The rewrite may only replace files that are still live: if another writer deleted or rewrote
 * one of them, committing would bring its rows back (Java: "Missing required files to delete").
 * Delete files that appeared meanwhile would have to be applied to the rows rewritten.
 */
function assertStillReplaceable(contents: HeadContents, replaced: ReadonlySet<string>): void {
  const gone = [...replaced].filter((path) => !contents.live.has(path));
  if (gone.length > 0) {
    throw new IcebergError('validation_failed', `another writer removed ${gone.length} of the files being rewritten (e.g. ${gone[0]}); plan the rewrite again`);
  }
  if (contents.deleteFiles > 0) throw new IcebergError('validation_failed', 'delete files were committed meanwhile; plan the rewrite again');
}

function counted(files: number, dataFiles: readonly ManifestDataFile[]): AppendedFiles {
  return {
    dataFiles: files,
    records: dataFiles.reduce((sum, f) => sum + f.record_count, 0n),
    filesSize: dataFiles.reduce((sum, f) => sum + f.file_size_in_bytes, 0n),
  };
}

/** The parent's totals as its live entries count them, for a parent whose summary lacks them. */
function liveTotals(contents: HeadContents) {
  const live = counted(contents.live.size, [...contents.live.values()].map((l) => l.entry.dataFile));
  return { dataFiles: BigInt(live.dataFiles), records: live.records, filesSize: live.filesSize, deleteFiles: BigInt(contents.deleteFiles) };
}

function result(metadata: TableMetadata, contents: HeadContents, rewrite: Rewrite, attempts: number): RewriteDataFilesResult {
  return {
    snapshotId: rewrite.snapshotId,
    rewritten: { files: rewrite.removed.dataFiles, bytes: rewrite.removed.filesSize, rows: rewrite.removed.records },
    added: { files: rewrite.dataFiles.length, bytes: rewrite.addedTotals.filesSize },
    dataFilesBefore: contents.live.size,
    dataFilesAfter: contents.live.size - rewrite.removed.dataFiles + rewrite.addedTotals.dataFiles,
    metadata,
    attempts,
  };
}
