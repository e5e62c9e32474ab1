import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent } from '../catalog/rest/types.ts';
import { IcebergError, isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { branchHead, defaultPartitionSpec, isInAncestry, type TableMetadata } from '../spec/metadata.ts';
import type { DataFile } from '../writer/data-file.ts';
import { type ManifestDataFile, writeManifestList } from '../writer/index.ts';
import { manifestListLocation } from './locations.ts';
import { listEntry, replaceInManifests, writeAddedManifest, type WrittenManifest } from './replace-manifests.ts';
import { rewriteBin } from './rewrite-bin.ts';
import { groupBySchema, type KeptFiles, packBins, smallFiles, type RewriteBin } from './rewrite-plan.ts';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, type RetryPolicy } from './retry.ts';
import { mainSnapshotCommit } from './snapshot-commit.ts';
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
  /** Fewer small files of one schema than this: they are left as they are. Default 5. */
  minInputFiles?: number;
  /** The table as last loaded; loaded when omitted. */
  base?: LoadTableResult;
  retry?: Partial<RetryPolicy>;
  /** Called with the base of every commit attempt (e.g. a lease check); throw to stop the rewrite. */
  validateBase?: (metadata: TableMetadata) => void | Promise<void>;
  /** Extra snapshot summary properties (strings). */
  summary?: Record<string, string>;
}

/** `row_lineage`: a v3 table's rewritten rows would have to carry their row ids, which this rewrite does not write. */
export type RewriteSkipped = 'partitioned' | 'row_lineage' | 'delete_files' | 'too_few_files';

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

/** Everything the rewrite wrote, so that a definite failure can take it back. */
interface Written {
  dataFiles: DataFile[];
  added: WrittenManifest | undefined;
  /** Rewritten manifests by the path of the manifest they replace. */
  rewritten: Map<string, WrittenManifest>;
  lists: string[];
  sawUnknownOutcome: boolean;
}

/**
 * Compacts an unpartitioned format v2 table: live data files smaller than the target are read
 * and written again, their rows unchanged, as few larger files, committed as one `replace`
 * snapshot on `main`. Files are grouped by the table schema they were written with (see
 * `groupBySchema`); a partitioned table, a v3 table (row lineage) or one with delete files is
 * left alone.
 *
 * A lost race (409) reloads and, if every replaced file is still live and no delete file
 * appeared, commits the same files again on the new head; otherwise it fails with
 * `validation_failed` and deletes what it wrote. An unknown outcome (5xx) is settled by
 * reloading and looking for the snapshot id on `main`; nothing is deleted after one.
 */
export async function rewriteDataFiles(options: RewriteDataFilesOptions): Promise<RewriteDataFilesResult> {
  const { catalog, table, io } = options;
  const metadata = (options.base ?? (await catalog.loadTable(table))).metadata;
  // v3 is read (and skipped below) so upkeep can go on to expire its snapshots.
  if (metadata['format-version'] !== 2 && metadata['format-version'] !== 3) {
    throw new IcebergError('unsupported', `table format version ${metadata['format-version']} is not supported for rewrites; only version 2 and 3 tables (v3 is skipped as row_lineage)`);
  }
  const cache: ManifestCache = new Map();
  const contents = await readHeadContents(io, metadata, cache);
  const skip = (skipped: RewriteSkipped): RewriteDataFilesResult => ({
    snapshotId: null,
    skipped,
    rewritten: { files: 0, bytes: 0n, rows: 0n },
    added: { files: 0, bytes: 0n },
    dataFilesBefore: contents.live.size,
    dataFilesAfter: contents.live.size,
    metadata,
    attempts: 0,
  });
  if (defaultPartitionSpec(metadata).fields.length > 0) return skip('partitioned');
  if (metadata['format-version'] >= 3) return skip('row_lineage');
  if (contents.deleteFiles > 0) return skip('delete_files');

  const target = BigInt(options.targetFileSizeBytes ?? tableTargetSize(metadata));
  const minInputFiles = options.minInputFiles ?? DEFAULT_MIN_INPUT_FILES;
  const small = smallFiles(contents, metadata, target);
  if (small.length < minInputFiles) return skip('too_few_files');
  const kept: KeptFiles = new Map();
  const bins = (await groupBySchema(io, metadata, small, kept)).flatMap((group) => packBins(group, target, minInputFiles));
  if (bins.length === 0) return skip('too_few_files');

  const written: Written = { dataFiles: [], added: undefined, rewritten: new Map(), lists: [], sawUnknownOutcome: false };
  try {
    return await writeAndCommit(options, metadata, contents, cache, bins, kept, written);
  } catch (error) {
    // Nothing refers to these files unless some commit's outcome was unknown.
    if (!written.sawUnknownOutcome) await deleteQuietly(io, allLocations(written));
    throw error;
  }
}

/** The table's `write.target-file-size-bytes` when it is a positive integer, else Iceberg's default. */
function tableTargetSize(metadata: TableMetadata): number {
  const value = Number(metadata.properties?.['write.target-file-size-bytes']);
  return Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_TARGET_FILE_SIZE_BYTES;
}

async function writeAndCommit(
  options: RewriteDataFilesOptions,
  start: TableMetadata,
  startContents: HeadContents,
  cache: ManifestCache,
  bins: readonly RewriteBin[],
  kept: KeptFiles,
  written: Written,
): Promise<RewriteDataFilesResult> {
  const { catalog, table, io } = options;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const replaced = bins.flatMap((bin) => bin.files);
  const replacedPaths = new Set(replaced.map((file) => file.file_path));
  for (const bin of bins) written.dataFiles.push(await rewriteBin(io, start.location, bin, kept));
  kept.clear();

  const snapshotId = newSnapshotId();
  const startHead = branchHead(start);
  const startingSequenceNumber = BigInt(startHead?.['sequence-number'] ?? start['last-sequence-number'] ?? 0);
  written.added = await writeAddedManifest(io, start, defaultPartitionSpec(start), snapshotId, startingSequenceNumber, written.dataFiles);
  const removed = counted(replaced.length, replaced);
  const added: AppendedFiles = {
    dataFiles: written.dataFiles.length,
    records: written.dataFiles.reduce((sum, f) => sum + BigInt(f.recordCount), 0n),
    filesSize: written.dataFiles.reduce((sum, f) => sum + BigInt(f.fileSizeInBytes), 0n),
  };
  if (added.records !== removed.records) {
    throw new IcebergError('validation_failed', `the rewrite read ${removed.records} rows but wrote ${added.records}`);
  }

  let metadata = start;
  let contents = startContents;
  let lastError: IcebergError | undefined;
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    if (attempt > 1) {
      await sleep(backoffMs(policy, attempt - 1));
      metadata = await reloadAfter(catalog, table, lastError as IcebergError);
      if (isInAncestry(metadata, snapshotId)) return result(metadata, contents, removed, added, snapshotId, attempt - 1, written);
      contents = await readHeadContents(io, metadata, cache);
    }
    assertStillReplaceable(contents, replacedPaths);
    await options.validateBase?.(metadata);

    const parent = branchHead(metadata);
    const sequenceNumber = BigInt((metadata['last-sequence-number'] ?? 0) + 1);
    const manifests = [
      listEntry(written.added, snapshotId, sequenceNumber),
      ...(await replaceInManifests(io, metadata, contents, replacedPaths, snapshotId, sequenceNumber, written.rewritten)),
    ];
    const listLocation = manifestListLocation(metadata.location, snapshotId, attempt);
    await io.put(listLocation, writeManifestList({ snapshotId, parentSnapshotId: parent?.['snapshot-id'] ?? null, sequenceNumber, manifests }));
    written.lists.push(listLocation);
    const summary = replaceSummary(parent?.summary, added, removed, liveTotals(contents), options.summary);
    try {
      const committed = await catalog.commitTable(table, mainSnapshotCommit(metadata, parent, { snapshotId, sequenceNumber, manifestList: listLocation, summary }));
      await deleteQuietly(io, unusedLocations(written, manifests, listLocation));
      return result(committed.metadata, contents, removed, added, snapshotId, attempt, written);
    } catch (error) {
      if (!isIcebergError(error) || (error.kind !== 'commit_conflict' && error.kind !== 'commit_state_unknown')) throw error;
      lastError = error;
      if (error.kind === 'commit_state_unknown') written.sawUnknownOutcome = true;
    }
  }
  // The last attempt's outcome may be unknown: a reload settles it.
  metadata = await reloadAfter(catalog, table, lastError as IcebergError);
  if (isInAncestry(metadata, snapshotId)) return result(metadata, contents, removed, added, snapshotId, policy.attempts, written);
  throw lastError as IcebergError;
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

/** Reloads after a failed attempt; without a reload an unknown outcome stays unknown, so that is what is reported. */
async function reloadAfter(catalog: RestCatalog, table: TableIdent, lastError: IcebergError): Promise<TableMetadata> {
  try {
    return (await catalog.loadTable(table)).metadata;
  } catch (error) {
    if (lastError.kind === 'commit_state_unknown') throw lastError;
    throw error;
  }
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

function result(
  metadata: TableMetadata,
  contents: HeadContents,
  removed: AppendedFiles,
  added: AppendedFiles,
  snapshotId: bigint,
  attempts: number,
  written: Written,
): RewriteDataFilesResult {
  return {
    snapshotId,
    rewritten: { files: removed.dataFiles, bytes: removed.filesSize, rows: removed.records },
    added: { files: written.dataFiles.length, bytes: added.filesSize },
    dataFilesBefore: contents.live.size,
    dataFilesAfter: contents.live.size - removed.dataFiles + added.dataFiles,
    metadata,
    attempts,
  };
}

function allLocations(written: Written): string[] {
  return [
    ...written.dataFiles.map((f) => f.filePath),
    ...(written.added ? [written.added.location] : []),
    ...[...written.rewritten.values()].map((m) => m.location),
    ...written.lists,
  ];
}

/**
 * Manifests and lists of attempts that lost, which the committed snapshot does not reference.
 * Once our snapshot is on `main`, no earlier attempt can land: each asserted an older head.
 */
function unusedLocations(written: Written, committed: readonly { manifest_path: string }[], committedList: string): string[] {
  const used = new Set(committed.map((m) => m.manifest_path));
  return [...[...written.rewritten.values()].map((m) => m.location).filter((l) => !used.has(l)), ...written.lists.filter((l) => l !== committedList)];
}

async function deleteQuietly(io: FileIO, locations: readonly string[]): Promise<void> {
  for (const location of locations) {
    try {
      await io.delete(location);
    } catch {
      // An orphaned file costs storage, not correctness.
    }
  }
}
