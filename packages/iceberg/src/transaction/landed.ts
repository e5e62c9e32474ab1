import type { FileIO } from '../io/file-io.ts';
import { ancestryCovers, branchHead, isInAncestry, snapshotById, type TableMetadata } from '../spec/metadata.ts';
import { readManifestList } from '../writer/manifest-list.ts';

/**
 * Clock skew allowed between this process, the catalog and other writers (snapshot times,
 * metadata times, the times a caller recorded) when reading whether main's history is long enough.
 */
export const CLOCK_MARGIN_MS = 10 * 60_000;

/** What the table shows about a commit whose answer was lost. */
export type Landed = 'landed' | 'not_landed' | 'unknown';

/**
 * Whether `main`'s history as the metadata keeps it reaches back before `since` (less the clock
 * margin): then any snapshot committed on main since then is still reachable from its head, or
 * was rolled back.
 */
export function historyCovers(metadata: TableMetadata, since: number): boolean {
  return ancestryCovers(metadata, since - CLOCK_MARGIN_MS);
}

/**
 * Whether snapshot `snapshotId`, which cannot have been committed before `since`, is on main:
 * `landed` when main's ancestry has it; `not_landed` when it does not and the history kept
 * covers `since`; else `unknown` (expiry cut the history, or the catalog keeps the head alone).
 * The one decision for a commit whose answer was lost, and for any record of a commit made
 * before it (an intent) that must be settled later.
 */
export function landed(metadata: TableMetadata, snapshotId: bigint, since: number): Landed {
  if (isInAncestry(metadata, snapshotId)) return 'landed';
  return historyCovers(metadata, since) ? 'not_landed' : 'unknown';
}

/**
 * Whether one commit attempt of snapshot `snapshotId` with manifest list `manifestList` landed.
 * Attempts of one operation share the snapshot id, so the list tells them apart. When the
 * history is cut, the head's list still names a manifest the snapshot added unless a merge or a
 * rewrite folded it away: then the snapshot landed, though not which attempt of it.
 */
export async function snapshotAttemptLanded(
  io: FileIO,
  metadata: TableMetadata,
  attempt: { snapshotId: bigint; manifestList: string },
  since: number,
): Promise<Landed> {
  const verdict = landed(metadata, attempt.snapshotId, since);
  if (verdict === 'landed') return snapshotById(metadata, attempt.snapshotId)?.['manifest-list'] === attempt.manifestList ? 'landed' : 'not_landed';
  if (verdict === 'not_landed') return verdict;
  const head = branchHead(metadata);
  if (head && readManifestList(await io.get(head['manifest-list'])).some((m) => m.added_snapshot_id === attempt.snapshotId)) return 'landed';
  return 'unknown';
}
