import type { ListedFile, ListingFileIO } from '../io/file-io.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { IO_WIDTH, mapBounded } from '../transaction/bounded.ts';
import { compareFiles } from './compare.ts';
import { referencedFiles } from './reachable.ts';

/** Java's `DeleteOrphanFiles` default: files younger than 3 days may belong to a commit in progress. */
export const DEFAULT_ORPHAN_AGE_MS = 3 * 24 * 3600 * 1000;

export interface DeleteOrphanFilesOptions {
  io: ListingFileIO;
  /** The table as just loaded: its current metadata file and that file's metadata. */
  metadataLocation: string | undefined;
  metadata: TableMetadata;
  /** Files last modified at or after this instant (epoch ms) stay; default now less 3 days. */
  olderThan?: number;
  /** Locations under the table's where nothing is touched. */
  excludedPrefixes?: readonly string[];
  /** Only find the orphans: delete nothing. */
  dryRun?: boolean;
  /** Called once the orphans are known, before the first delete; throw to stop. */
  beforeDelete?: (orphans: readonly ListedFile[]) => void | Promise<void>;
}

/** Why nothing was deleted although the run ended: the safety rules held it back. */
export type OrphanSkipped = 'no_metadata_location' | 'references_unreadable' | 'listing_failed' | 'prefix_mismatch';

export interface DeleteOrphanFilesResult {
  /** Orphans found (older than the cutoff, referenced by no metadata). */
  found: number;
  /** Of them, deleted (0 on a dry run or when skipped). */
  deleted: number;
  /** Bytes of the deleted files. */
  deletedBytes: number;
  /** Unreferenced files left because they are younger than the cutoff. */
  young: number;
  /** Deletes that failed: those files stay for the next run. */
  failed: number;
  /** Set when the run deleted nothing for safety; `detail` says what. */
  skipped: OrphanSkipped | null;
  detail: string | null;
  /** Up to 20 of the orphans found, for logs. */
  sample: string[];
}

/**
 * Deletes the files under a table's location that no metadata references and that are older
 * than the cutoff (Java's `DeleteOrphanFiles`: files a writer wrote and never committed, e.g.
 * after being killed). Nothing is deleted unless both the listing and the reference set were
 * read completely and no referenced path appears under another scheme or bucket; then the
 * result says why (`skipped`) instead of throwing, as the table itself is fine.
 */
export async function deleteOrphanFiles(options: DeleteOrphanFilesOptions): Promise<DeleteOrphanFilesResult> {
  const { io, metadata, metadataLocation } = options;
  const olderThan = options.olderThan ?? Date.now() - DEFAULT_ORPHAN_AGE_MS;
  if (metadataLocation === undefined) return skipped('no_metadata_location', 'the catalog did not say which metadata file is current');
  let referenced: Set<string>;
  try {
    referenced = await referencedFiles(io, metadataLocation, metadata);
  } catch (error) {
    return skipped('references_unreadable', describe(error));
  }
  const listed: ListedFile[] = [];
  try {
    for await (const file of io.list(`${metadata.location.replace(/\/+$/, '')}/`)) listed.push(file);
  } catch (error) {
    return skipped('listing_failed', describe(error));
  }
  const partitionNames = [...new Set(metadata['partition-specs'].flatMap((spec) => spec.fields.map((f) => f.name)))];
  const comparison = compareFiles(listed, referenced, {
    tableLocation: metadata.location,
    olderThan,
    partitionNames,
    ...(options.excludedPrefixes ? { excludedPrefixes: options.excludedPrefixes } : {}),
  });
  const { orphans, young } = comparison;
  const base = { found: orphans.length, young, sample: orphans.slice(0, 20).map((f) => f.location) };
  if (comparison.conflicts.length > 0) {
    const first = comparison.conflicts[0]!;
    return { ...skipped('prefix_mismatch', `${first.listed} is referenced as ${first.referenced} (${comparison.conflicts.length} such)`), ...base };
  }
  if (options.dryRun || orphans.length === 0) return { ...base, deleted: 0, deletedBytes: 0, failed: 0, skipped: null, detail: null };
  await options.beforeDelete?.(orphans);
  const done = await mapBounded(orphans, { width: IO_WIDTH }, async (file) => {
    // A delete of a missing file succeeds; a failed one leaves the file for the next run.
    try {
      await io.delete(file.location);
      return true;
    } catch {
      return false;
    }
  });
  const deleted = orphans.filter((_, i) => done[i]);
  return {
    ...base,
    deleted: deleted.length,
    deletedBytes: deleted.reduce((sum, f) => sum + f.size, 0),
    failed: orphans.length - deleted.length,
    skipped: null,
    detail: null,
  };
}

function skipped(reason: OrphanSkipped, detail: string): DeleteOrphanFilesResult {
  return { found: 0, deleted: 0, deletedBytes: 0, young: 0, failed: 0, skipped: reason, detail, sample: [] };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
