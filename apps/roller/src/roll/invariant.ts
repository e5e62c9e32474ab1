import type { RollIntent } from '@tablemere/contracts';
import {
  branchHead,
  CLOCK_MARGIN_MS,
  ENTRY_STATUS,
  findInAncestry,
  historyCovers,
  isIcebergError,
  isInAncestry,
  landed,
  metadataLog,
  parseJson,
  readManifestEntries,
  readManifestList,
  type Snapshot,
  snapshotById,
  type TableMetadata,
} from '@tablemere/iceberg';
import { rollFileKey } from '@tablemere/store';
import { RollError, toRollError } from '../errors.ts';
import { apiFailure } from './commit.ts';
import { checkpoint, type RollContext } from './context.ts';
import { deleteBatches } from './delete.ts';
import type { Listed } from './policy.ts';
import type { IntakeObject } from './read-batches.ts';
import type { TenantTable } from './reload.ts';
import { sendReport } from './report.ts';
import { resolveBatchLists } from './sidecar.ts';
import { type BatchCount, SUMMARY_KEYS, summaryBatchCounts, summaryBatchIds, summarySegmentIds } from './summary.ts';

/**
 * A batch is consumed by a commit only if the intake stored it before that commit (give or
 * take this margin). A later object under the same id is a new batch: the intake accepts a
 * reused id again once its ledger row was pruned, 7 days after the commit.
 */
const CONSUMED_WINDOW_MS = 60 * 60_000;

/** Files read at once while gathering evidence. */
const READS_AT_ONCE = 8;

/**
 * What settled an intent: main's ancestry now (rules 1 and 4), a live entry of the head's
 * manifests (rule 2), the earlier metadata files of `metadata-log` (rules 3 and 4), or an
 * intent without a snapshot.
 */
export type Proof = 'ancestry' | 'manifest_entry' | 'metadata_log' | 'no_snapshot';

export type Judgement = { verdict: 'committed' | 'abandoned'; by: Proof } | { verdict: 'unresolved' };

/** What the catalog can still show about the table's past. */
export interface Evidence {
  /** The table as loaded now. */
  metadata: TableMetadata;
  /** Snapshot ids of live data file entries in the head's manifests (at least those asked about). */
  liveEntrySnapshots: ReadonlySet<bigint>;
  /** The earlier metadata files of `metadata-log` still readable, by location; a missing one is gone. */
  earlier: ReadonlyMap<string, TableMetadata>;
}

/** The evidence of the loaded table alone, before any file is read. */
export function bareEvidence(metadata: TableMetadata): Evidence {
  return { metadata, liveEntrySnapshots: new Set(), earlier: new Map() };
}

/**
 * Whether the versions of the metadata still readable show every commit on main since `since`
 * (clock margin and `historyCovers` as @tablemere/iceberg's `landed` uses them).
 * Walking back from the current version through `metadata-log` while each version is readable
 * (a commit of the snapshot would have made it main's head in the version it wrote): the walk
 * covers `since` once a version's own ancestry does, or once the version before it was written
 * before `since`, so that every commit since is one of those walked. A version that is gone
 * ends the walk: it may be the one that committed.
 */
export function keptHistoryCovers(evidence: Evidence, since: number): boolean {
  const log = metadataLog(evidence.metadata);
  const versions = [...log.map((e) => evidence.earlier.get(e['metadata-file'])), evidence.metadata];
  for (let i = versions.length - 1; i >= 0; i--) {
    const version = versions[i];
    if (version === undefined) return false;
    if (historyCovers(version, since)) return true;
    const before = log[i - 1];
    if (before !== undefined && before['timestamp-ms'] <= since - CLOCK_MARGIN_MS) return true;
  }
  return false;
}

/**
 * What became of a roll intent, from the evidence at hand:
 *   1. its snapshot on main now: `committed`;
 *   2. a live entry of the head's manifests comes from it: `committed` (the snapshot expired;
 *      merged and rewritten manifests keep each entry's snapshot id);
 *   3. an earlier metadata file has it on main: `committed` (expired since, e.g. after a compaction);
 *   4. the history kept covers the time since the intent and none of the above found it:
 *      `abandoned` (never committed, or rolled back). Main's ancestry now is looked at right
 *      after rule 1, as it needs no file; then the versions of `metadata-log` still readable;
 *   5. otherwise `unresolved`.
 * Nothing answers `abandoned` without a history that covers the intent's time, so a missing
 * or short `metadata-log` can only leave an intent unresolved, never roll its batches twice.
 */
export function judgeIntent(intent: Pick<RollIntent, 'snapshot_id' | 'created_at'>, evidence: Evidence): Judgement {
  if (intent.snapshot_id === null) return { verdict: 'abandoned', by: 'no_snapshot' };
  const id = BigInt(intent.snapshot_id);
  const since = Date.parse(intent.created_at);
  const { metadata } = evidence;
  // The same decision as a commit whose answer was lost (@tablemere/iceberg's `landed`).
  const onMain = landed(metadata, id, since);
  if (onMain === 'landed') return { verdict: 'committed', by: 'ancestry' };
  if (onMain === 'not_landed') return { verdict: 'abandoned', by: 'ancestry' };
  if (evidence.liveEntrySnapshots.has(id)) return { verdict: 'committed', by: 'manifest_entry' };
  for (const earlier of evidence.earlier.values()) {
    if (isInAncestry(earlier, id)) return { verdict: 'committed', by: 'metadata_log' };
  }
  return keptHistoryCovers(evidence, since) ? { verdict: 'abandoned', by: 'metadata_log' } : { verdict: 'unresolved' };
}

/** The snapshot as the current metadata, or else the newest earlier version that has it, shows it. */
export function snapshotIn(evidence: Evidence, id: bigint): Snapshot | undefined {
  const earlier = metadataLog(evidence.metadata).reverse().map((e) => evidence.earlier.get(e['metadata-file']));
  for (const version of [evidence.metadata, ...earlier]) {
    const snapshot = version && snapshotById(version, id);
    if (snapshot) return snapshot;
  }
  return undefined;
}

/** A commit whose batches must be out of the intake before anything new is committed. */
interface ConsumedRoll {
  snapshotId: bigint;
  batchIds: readonly string[];
  segmentIds: readonly string[];
  /** Objects stored after this (store clock) are new batches under a reused id. */
  notAfter: number;
  intent: RollIntent | undefined;
  /** What showed the intent committed. */
  by?: Proof;
  counts: BatchCount[] | undefined;
}

/**
 * The batch ids the commits found by the invariant consumed, each with the latest store time an
 * object holding it can have to be one they consumed: a copy of such a batch in a segment still
 * pending (a write whose outcome was unknown, retried) is passed over, not appended again.
 */
export class Consumed {
  constructor(private readonly notAfter: ReadonlyMap<string, number> = new Map()) {}

  has(batchId: string, object: Listed): boolean {
    const notAfter = this.notAfter.get(batchId);
    return notAfter !== undefined && (object.lastModified?.getTime() ?? 0) <= notAfter;
  }
}

export interface InvariantResult {
  /** The listing without the objects found consumed (now deleted). */
  pending: IntakeObject[];
  /** What the commits found consumed, for the batches inside the objects still pending. */
  consumed: Consumed;
  /** Intents found committed and reported now. */
  settled: number;
  /** Intents found never committed and closed as failed; their batches are pending again. */
  abandoned: number;
  /** Consumed batches deleted from the intake now. */
  deleted: number;
  /** Sidecar keys the sweep keeps: the newest sink snapshot's and every open intent's (may name a batch still in intake). */
  named: ReadonlySet<string>;
}

/**
 * Gathers what the table's files can still show about the snapshots `wanted`: the live entries
 * of the head's manifests and the earlier metadata files of `metadata-log`.
 */
async function gatherEvidence(table: TenantTable, wanted: ReadonlySet<bigint>): Promise<Evidence> {
  const { metadata } = table.loaded;
  try {
    const [liveEntrySnapshots, earlier] = await Promise.all([liveEntriesFrom(table, wanted), earlierVersions(table)]);
    return { metadata, liveEntrySnapshots, earlier };
  } catch (error) {
    throw toRollError(error, 'table_storage');
  }
}

/**
 * Which of `wanted` have a live (added or existing) data file entry in the head's manifests,
 * with Iceberg's inheritance (an entry without a snapshot id has its manifest's). Only
 * manifests that can hold such an entry are read: those a wanted snapshot added, and those
 * carrying existing entries (merged or rewritten manifests keep each entry's snapshot id).
 */
async function liveEntriesFrom(table: TenantTable, wanted: ReadonlySet<bigint>): Promise<Set<bigint>> {
  const found = new Set<bigint>();
  const head = branchHead(table.loaded.metadata);
  if (head === undefined) return found;
  const manifests = readManifestList(await table.io.get(head['manifest-list'])).filter(
    (m) => m.content === 0 && (wanted.has(m.added_snapshot_id) || m.existing_files_count > 0),
  );
  await inTurns(manifests, async (manifest) => {
    for (const entry of readManifestEntries(await table.io.get(manifest.manifest_path), manifest)) {
      if (entry.status !== ENTRY_STATUS.DELETED && entry.snapshotId !== null && wanted.has(entry.snapshotId)) found.add(entry.snapshotId);
    }
  });
  return found;
}

/**
 * The earlier metadata files of `metadata-log` that can still be read, as written (ids
 * lossless). One that is gone (deleted after commit), unreadable as metadata, or of another
 * table is left out: it shows nothing.
 */
async function earlierVersions(table: TenantTable): Promise<Map<string, TableMetadata>> {
  const { metadata } = table.loaded;
  const versions = new Map<string, TableMetadata>();
  await inTurns(metadataLog(metadata), async ({ 'metadata-file': location }) => {
    let bytes: Uint8Array;
    try {
      bytes = await table.io.get(location);
    } catch (error) {
      if (isIcebergError(error, 'not_found')) return;
      throw error;
    }
    let version: TableMetadata;
    try {
      version = parseJson(new TextDecoder().decode(bytes)) as TableMetadata;
    } catch {
      return;
    }
    if (version?.['table-uuid'] === metadata['table-uuid']) versions.set(location, version);
  });
  return versions;
}

/** Runs `work` on every item, `READS_AT_ONCE` at a time. */
async function inTurns<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, items.length) }, worker));
}

/**
 * Step 2, the invariant: batches a committed roll consumed are out of the intake before
 * anything new is committed. The newest snapshot on main naming this sink (its summary, or the
 * sidecar it names for a roll of more than 1,000 batches), and every open roll intent the API
 * recorded, say which batches those are. Each intent is judged from
 * what the table still shows (`judgeIntent`): intents found committed are reported now,
 * intents found never committed are closed as failed (their batches roll again). A delete that fails ends the roll, so a batch is never appended twice; an intent
 * that cannot be settled ends it too, for an operator to look at.
 */
export async function reestablishInvariant(ctx: RollContext, table: TenantTable, listed: readonly IntakeObject[]): Promise<InvariantResult> {
  checkpoint(ctx);
  const { metadata } = table.loaded;
  let open: RollIntent[];
  try {
    open = await ctx.deps.api.listRolls(ctx.sink.id, 'open');
  } catch (error) {
    throw apiFailure(error);
  }
  open.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));

  // The files behind the table are read only when the loaded metadata alone leaves an intent open.
  let evidence = bareEvidence(metadata);
  const undecided = open.filter((intent) => judgeIntent(intent, evidence).verdict === 'unresolved');
  if (undecided.length > 0) evidence = await gatherEvidence(table, new Set(undecided.map((intent) => BigInt(intent.snapshot_id!))));

  const consumed: ConsumedRoll[] = [];
  const abandoned: Array<{ intent: RollIntent; by: Proof }> = [];
  const unresolved: RollIntent[] = [];
  for (const intent of open) {
    const judgement = judgeIntent(intent, evidence);
    if (judgement.verdict === 'unresolved') {
      unresolved.push(intent);
    } else if (judgement.verdict === 'abandoned') {
      abandoned.push({ intent, by: judgement.by });
    } else {
      const id = BigInt(intent.snapshot_id!);
      const snapshot = snapshotIn(evidence, id);
      const counts = snapshot ? summaryBatchCounts(await resolveBatchLists(ctx, snapshot)) : undefined;
      consumed.push({
        snapshotId: id,
        batchIds: intent.batch_ids,
        segmentIds: intent.segment_ids,
        notAfter: (snapshot?.['timestamp-ms'] ?? Date.now()) + CONSUMED_WINDOW_MS,
        intent,
        by: judgement.by,
        counts: counts && sameIds(counts, intent.batch_ids) ? counts : undefined,
      });
    }
  }
  const latest = findInAncestry(metadata, SUMMARY_KEYS.id, ctx.sink.id);
  if (latest && !consumed.some((c) => c.snapshotId === latest['snapshot-id'])) {
    const notAfter = latest['timestamp-ms'] + CONSUMED_WINDOW_MS;
    // Only a batch stored before that commit can be one it consumed: with none listed, its
    // sidecar (if any) need not be read, nor exist (a rollback to a snapshot long since swept).
    const mayName = listed.some((o) => (o.lastModified?.getTime() ?? 0) <= notAfter);
    const lists = mayName ? await resolveBatchLists(ctx, latest) : {};
    consumed.push({
      snapshotId: latest['snapshot-id'],
      batchIds: summaryBatchIds(lists),
      segmentIds: summarySegmentIds(lists),
      notAfter,
      intent: undefined,
      counts: undefined,
    });
  }

  // Segment ids are never reused, so a segment named is consumed whenever it was written; a
  // batch id may come back as a new batch once its ledger row was pruned, hence the time bound.
  const batchObjects = new Map(listed.filter((o) => o.kind === 'batch').map((o) => [o.id, o]));
  const segments = new Map(listed.filter((o) => o.kind === 'segment').map((o) => [o.id, o]));
  const doomed = new Set<string>();
  const consumedIds = new Map<string, number>();
  for (const c of consumed) {
    for (const id of c.batchIds) {
      const object = batchObjects.get(id);
      if (object && (object.lastModified?.getTime() ?? 0) <= c.notAfter) doomed.add(object.key);
      consumedIds.set(id, Math.max(consumedIds.get(id) ?? 0, c.notAfter));
    }
    for (const id of c.segmentIds) {
      const object = segments.get(id);
      if (object) doomed.add(object.key);
    }
  }
  if (doomed.size > 0) ctx.log.info({ batches: doomed.size }, 'deleting batches an earlier roll committed');
  await deleteBatches(ctx, [...doomed]);

  let settled = 0;
  for (const c of consumed) {
    if (c.intent === undefined) continue;
    await sendReport(ctx, {
      outcome: 'committed',
      rollId: c.intent.roll_id,
      snapshotId: c.snapshotId,
      batches: c.counts ?? c.intent.batch_ids.map((batch_id) => ({ batch_id, rows: 0, rejected_rows: 0 })),
      attempts: 0,
      startedAt: new Date(c.intent.created_at),
      seconds: 0,
    });
    settled++;
    ctx.log.info(
      { roll_id: c.intent.roll_id, snapshot_id: c.snapshotId.toString(), batches: c.batchIds.length, counts_known: c.counts !== undefined, by: c.by },
      'settled a roll committed earlier',
    );
  }
  for (const { intent, by } of abandoned) {
    await sendReport(ctx, {
      outcome: 'failed',
      rollId: intent.roll_id,
      snapshotId: null,
      batches: [],
      attempts: 0,
      startedAt: new Date(intent.created_at),
      seconds: 0,
      error: `abandoned: snapshot ${intent.snapshot_id} is not on main, and the history kept (${by}) covers the time since the intent; its batches roll again`,
    });
    ctx.log.info({ roll_id: intent.roll_id, snapshot_id: intent.snapshot_id, batches: intent.batch_ids.length, by }, 'closed a roll that never committed');
  }
  if (unresolved.length > 0) throw new RollError('intent_unresolved', unresolvedMessage(ctx.sink.id, unresolved[0]!, evidence));
  const named = new Set(open.flatMap((intent) => (intent.snapshot_id === null ? [] : [rollFileKey(ctx.sink.id, intent.snapshot_id)])));
  if (latest) named.add(rollFileKey(ctx.sink.id, latest['snapshot-id']));
  return { pending: listed.filter((o) => !doomed.has(o.key)), consumed: new Consumed(consumedIds), settled, abandoned: abandoned.length, deleted: doomed.size, named };
}

/** What was looked at and what the operator can do, for an intent nothing settled. */
function unresolvedMessage(sinkId: string, intent: RollIntent, evidence: Evidence): string {
  const listed = metadataLog(evidence.metadata).length;
  return (
    `roll ${intent.roll_id} (snapshot ${intent.snapshot_id}, ${intent.batch_ids.length} batches, recorded ${intent.created_at}) is still open ` +
    'and the table no longer shows whether it committed: the snapshot is not on main, no live entry of the head\'s manifests comes from it, ' +
    `none of the ${evidence.earlier.size} of ${listed} earlier metadata files of metadata-log still readable has it on main, ` +
    'and the history they keep does not reach back to the intent. Check whether rows of its batches ' +
    `(${intent.batch_ids.slice(0, 3).join(', ')}${intent.batch_ids.length > 3 ? ', ...' : ''}) are in the table, then close it: ` +
    `POST /internal/sinks/${sinkId}/roll with its roll_id under the sink's lease, outcome committed with the snapshot id if they are, failed if not. ` +
    'The sink rolls again once no intent is open.'
  );
}

function sameIds(counts: readonly BatchCount[], ids: readonly string[]): boolean {
  return counts.length === ids.length && counts.every((c, i) => c.batch_id === ids[i]);
}
