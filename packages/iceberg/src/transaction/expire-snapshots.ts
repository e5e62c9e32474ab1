import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement } from '../catalog/rest/types.ts';
import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { branchAncestry, branchHeadId, MAIN_BRANCH, snapshotById, type Snapshot, type TableMetadata } from '../spec/metadata.ts';
import { ENTRY_STATUS, readManifest, readManifestList, type ManifestFile } from '../writer/index.ts';
import { IO_WIDTH, mapBounded } from './bounded.ts';
import { commitWithRetries } from './commit-driver.ts';
import type { RetryPolicy } from './retry.ts';

export interface ExpireSnapshotsOptions {
  catalog: RestCatalog;
  table: TableIdent;
  io: FileIO;
  /**
   * Newest snapshots of `main`'s ancestry always kept (default 20, at least 1). The table
   * property `history.expire.min-snapshots-to-keep` and the `main` ref's `min-snapshots-to-keep`
   * raise it when larger.
   */
  retainLast?: number;
  /**
   * Snapshots younger than this are never expired: a reader may be planning on them (default
   * 10 minutes). The table property `history.expire.max-snapshot-age-ms` and the `main` ref's
   * `max-snapshot-age-ms` raise it when larger.
   */
  minAgeMs?: number;
  /** The clock snapshot ages are measured against (epoch ms); fixed for the whole run. */
  now?: number;
  retry?: Partial<RetryPolicy>;
  /** The table as last loaded; loaded when omitted. */
  base?: LoadTableResult;
  /** Called with the metadata each commit attempt was planned on, just before it; throw to stop. */
  validateBase?: (metadata: TableMetadata) => void | Promise<void>;
}

export interface ExpireSnapshotsResult {
  /** Snapshot ids this run removed from the table (empty when there was nothing to expire). */
  expired: bigint[];
  /** Snapshots the table holds after the run. */
  kept: number;
  /** Files deleted after the commit: only files no kept snapshot reaches. */
  deletedFiles: { manifestLists: number; manifests: number; dataFiles: number };
  /**
   * False when a file could not be read or deleted: some unreachable files may remain (they
   * cost storage only; an orphan-file sweep of the table location finds them).
   */
  cleanupComplete: boolean;
  /** The table metadata after the run. */
  metadata: TableMetadata;
  /** Commit attempts made (0 when there was nothing to expire). */
  attempts: number;
}

export const DEFAULT_RETAIN_LAST = 20;
export const DEFAULT_MIN_AGE_MS = 10 * 60 * 1000;


/**
 * Expires old snapshots of a table and deletes the files only they reached, as Java's
 * `RemoveSnapshots` with its reachable-file cleanup does (see `planExpiry` for what is kept).
 *
 * The removal commits as one REST `remove-snapshots` update guarded by the table uuid and the
 * snapshot every ref pointed at when planned. A lost race (409) reloads and plans again on the
 * new head. An unknown outcome reloads and counts as landed only when every planned snapshot
 * is gone. Files are deleted only once the commit surely landed, best effort.
 */
export async function expireSnapshots(options: ExpireSnapshotsOptions): Promise<ExpireSnapshotsResult> {
  const { io } = options;
  const now = options.now ?? Date.now();
  return commitWithRetries<ExpireSnapshotsResult>({
    catalog: options.catalog,
    table: options.table,
    io,
    ...(options.base ? { base: options.base } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    operation: 'snapshot expiry',
    // Expiry writes no file, so it takes every version.
    formatVersions: [1, 2, 3],
    build: async ({ metadata, attempt }) => {
      const expiring = planExpiry(metadata, retention(metadata, options, now));
      if (expiring.length === 0) return { nothingToDo: nothingExpired(metadata, attempt - 1) };
      await options.validateBase?.(metadata);
      return {
        requirements: requirements(metadata),
        updates: [{ action: 'remove-snapshots', 'snapshot-ids': expiring.map((s) => s['snapshot-id']) }],
        // A lost answer landed when every planned snapshot is gone.
        landed: (reloaded) => (expiring.every((s) => !snapshotById(reloaded, s['snapshot-id'])) ? 'landed' : 'not_landed'),
        result: (after, attempts) => landed(io, expiring, after, attempts),
      };
    },
  });
}

export interface Retention {
  retainLast: number;
  minAgeMs: number;
  now: number;
}

/**
 * The snapshots to expire. Kept: the newest `retainLast` of `main`'s ancestry, every snapshot
 * a tag names, the whole ancestry of every other branch (as far as the metadata has it), and
 * every snapshot younger than `minAgeMs`. Everything else goes: older ancestors of `main` and
 * snapshots no ref reaches. Java keeps other branches by their own age and count settings;
 * keeping them whole is the cautious subset for a writer that never creates branches.
 */
export function planExpiry(metadata: TableMetadata, retention: Retention): Snapshot[] {
  const keep = new Set<bigint>();
  let counted = 0;
  for (const snapshot of branchAncestry(metadata)) {
    if (counted++ === retention.retainLast) break;
    keep.add(snapshot['snapshot-id']);
  }
  for (const [name, ref] of Object.entries(metadata.refs ?? {})) {
    if (ref.type === 'tag') keep.add(ref['snapshot-id']);
    else if (name !== MAIN_BRANCH) for (const snapshot of branchAncestry(metadata, name)) keep.add(snapshot['snapshot-id']);
  }
  const youngest = retention.now - retention.minAgeMs;
  return (metadata.snapshots ?? []).filter((s) => !keep.has(s['snapshot-id']) && s['timestamp-ms'] <= youngest);
}

/** The caller's limits, raised by the table's and `main` ref's own settings (Java's names). */
function retention(metadata: TableMetadata, options: ExpireSnapshotsOptions, now: number): Retention {
  const retainLast = options.retainLast ?? DEFAULT_RETAIN_LAST;
  const minAgeMs = options.minAgeMs ?? DEFAULT_MIN_AGE_MS;
  if (!Number.isInteger(retainLast) || retainLast < 1) throw new IcebergError('bad_request', `retainLast must be a whole number of at least 1, not ${retainLast}`);
  if (!(minAgeMs >= 0)) throw new IcebergError('bad_request', `minAgeMs must be at least 0, not ${minAgeMs}`);
  const main = metadata.refs?.[MAIN_BRANCH];
  return {
    retainLast: Math.max(retainLast, setting(metadata.properties?.['history.expire.min-snapshots-to-keep']), setting(main?.['min-snapshots-to-keep'])),
    minAgeMs: Math.max(minAgeMs, setting(metadata.properties?.['history.expire.max-snapshot-age-ms']), setting(main?.['max-snapshot-age-ms'])),
    now,
  };
}

/** A numeric setting from a property string or a ref field; 0 (no effect) when absent or malformed. */
function setting(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * The table it was planned on, and every ref where it was. A catalog applying
 * `remove-snapshots` drops a ref whose snapshot goes (Java's metadata builder does; SeaweedFS
 * does, see research/26), so a ref that moved since the plan must send us back to plan again.
 */
function requirements(metadata: TableMetadata): TableRequirement[] {
  const refs = Object.entries(metadata.refs ?? {}).filter(([name]) => name !== MAIN_BRANCH);
  return [
    { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, 'snapshot-id': branchHeadId(metadata) },
    ...refs.map(([name, ref]): TableRequirement => ({ type: 'assert-ref-snapshot-id', ref: name, 'snapshot-id': ref['snapshot-id'] })),
  ];
}

function nothingExpired(metadata: TableMetadata, attempts: number): ExpireSnapshotsResult {
  return {
    expired: [],
    kept: metadata.snapshots?.length ?? 0,
    deletedFiles: { manifestLists: 0, manifests: 0, dataFiles: 0 },
    cleanupComplete: true,
    metadata,
    attempts,
  };
}

async function landed(io: FileIO, expired: readonly Snapshot[], after: TableMetadata, attempts: number): Promise<ExpireSnapshotsResult> {
  const cleanup = await deleteUnreachableFiles(io, expired, after);
  return {
    expired: expired.map((s) => s['snapshot-id']),
    kept: after.snapshots?.length ?? 0,
    deletedFiles: cleanup.deleted,
    cleanupComplete: cleanup.complete,
    metadata: after,
    attempts,
  };
}

interface Cleanup {
  deleted: ExpireSnapshotsResult['deletedFiles'];
  complete: boolean;
}

/**
 * Deletes what only the expired snapshots reached, as Java's `ReachableFileCleanup`: their
 * manifest lists; the manifests those lists name that no kept snapshot's list names; and the
 * data and delete files of those manifests that no kept manifest lists as live. "Kept" is every
 * snapshot of the metadata after the commit, other branches and tags included.
 *
 * A file whose fate cannot be read is kept: a manifest that cannot be read keeps its files
 * (and itself), and a kept list or manifest that cannot be read keeps every candidate it
 * might reach. Nothing here touches a metadata.json.
 */
export async function deleteUnreachableFiles(io: FileIO, expired: readonly Snapshot[], after: TableMetadata): Promise<Cleanup> {
  const cleanup: Cleanup = { deleted: { manifestLists: 0, manifests: 0, dataFiles: 0 }, complete: true };
  const kept = after.snapshots ?? [];
  const keptLists = new Set(kept.map((s) => s['manifest-list']));
  const expiredLists = [...new Set(expired.map((s) => s['manifest-list']))].filter((list) => !keptLists.has(list));

  // Manifests named by an expired list and by no kept list.
  const candidates = new Set<string>();
  for (const manifests of await readAll(cleanup, expiredLists, async (list) => readManifestList(await io.get(list)))) {
    for (const m of manifests ?? []) candidates.add(m.manifest_path);
  }
  let keptManifests: ManifestFile[] = [];
  if (candidates.size > 0) {
    const lists = await readAll(cleanup, [...keptLists], async (list) => readManifestList(await io.get(list)));
    if (lists.includes(undefined)) candidates.clear();
    keptManifests = uniqueManifests(lists.flatMap((manifests) => manifests ?? []));
    for (const m of keptManifests) candidates.delete(m.manifest_path);
  }

  // Files of those manifests that no kept manifest lists as live.
  const removedManifests = [...candidates];
  const removedEntries = await readAll(cleanup, removedManifests, async (path) => entries(await io.get(path)));
  const unreadable = new Set(removedManifests.filter((_, i) => removedEntries[i] === undefined));
  const files = new Set(removedEntries.flatMap((e) => e ?? []).map((e) => e.path));
  if (files.size > 0) {
    // Manifests with no added or existing entries list nothing live.
    const live = keptManifests.filter((m) => m.added_files_count + m.existing_files_count > 0).map((m) => m.manifest_path);
    const keptEntries = await readAll(cleanup, live, async (path) => entries(await io.get(path)));
    if (keptEntries.includes(undefined)) files.clear();
    for (const e of keptEntries.flatMap((list) => list ?? [])) if (e.live) files.delete(e.path);
  }

  // Leaves first (Java's order), so an interrupted run leaves nothing pointing at a deleted file.
  cleanup.deleted.dataFiles = await deleteAll(cleanup, io, [...files]);
  cleanup.deleted.manifests = await deleteAll(cleanup, io, removedManifests.filter((path) => !unreadable.has(path)));
  cleanup.deleted.manifestLists = await deleteAll(cleanup, io, expiredLists);
  return cleanup;
}

interface EntryPath {
  path: string;
  /** EXISTING or ADDED: the file is part of the snapshots that list this manifest. */
  live: boolean;
}

/** The file paths of a manifest's entries, from the raw decoded records. */
function entries(bytes: Uint8Array): EntryPath[] {
  return readManifest(bytes).entries.map((record) => {
    const entry = record as { status?: unknown; data_file?: { file_path?: unknown } };
    const path = entry.data_file?.file_path;
    if (typeof path !== 'string' || typeof entry.status !== 'number') throw new IcebergError('unsupported', 'manifest entry without status or data_file.file_path');
    return { path, live: entry.status !== ENTRY_STATUS.DELETED };
  });
}

function uniqueManifests(manifests: readonly ManifestFile[]): ManifestFile[] {
  return [...new Map(manifests.map((m) => [m.manifest_path, m])).values()];
}

/** Reads every item; an item that fails reads as undefined and marks the cleanup incomplete. */
async function readAll<T>(cleanup: Cleanup, items: readonly string[], read: (item: string) => Promise<T>): Promise<Array<T | undefined>> {
  return mapBounded(items, { width: IO_WIDTH }, async (item) => {
    try {
      return await read(item);
    } catch {
      cleanup.complete = false;
      return undefined;
    }
  });
}

/** Deletes each file; returns how many were deleted. A failed delete costs storage, not correctness. */
async function deleteAll(cleanup: Cleanup, io: FileIO, locations: readonly string[]): Promise<number> {
  const done = await mapBounded(locations, { width: IO_WIDTH }, async (location) => {
    try {
      await io.delete(location);
      return true;
    } catch {
      cleanup.complete = false;
      return false;
    }
  });
  return done.filter(Boolean).length;
}
