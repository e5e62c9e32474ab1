import type { RollIntent } from '@tablemere/contracts';
import {
  branchAncestry,
  branchHead,
  findInAncestry,
  isInAncestry,
  readManifestList,
  snapshotById,
  type TableMetadata,
} from '@tablemere/iceberg';
import { RollError, toRollError } from '../errors.ts';
import { apiFailure } from './commit.ts';
import { checkpoint, type RollContext } from './context.ts';
import { deleteBatches } from './delete.ts';
import type { IntakeObject } from './read-batches.ts';
import type { TenantTable } from './reload.ts';
import { sendReport } from './report.ts';
import { type BatchCount, SUMMARY_KEYS, summaryBatchCounts, summaryBatchIds } from './summary.ts';

/**
 * Clock skew allowed between the database (intent times), the store (object times) and
 * writers (snapshot times) when deciding whether the table's history is long enough.
 */
const CLOCK_MARGIN_MS = 10 * 60_000;

/**
 * A batch is consumed by a commit only if the intake stored it before that commit (give or
 * take this margin). A later object under the same id is a new batch: the intake accepts a
 * reused id again once its ledger row was pruned, 7 days after the commit.
 */
const CONSUMED_WINDOW_MS = 60 * 60_000;

export type IntentVerdict = 'committed' | 'abandoned' | 'unresolved';

/**
 * Whether `main`'s history as the metadata keeps it reaches back before `since`: then any
 * snapshot committed on main since then is still reachable from the head (or was rolled back).
 */
export function historyCovers(metadata: TableMetadata, since: number): boolean {
  let oldest;
  for (const snapshot of branchAncestry(metadata)) oldest = snapshot;
  if (oldest === undefined) return true;
  const parent = oldest['parent-snapshot-id'];
  if (parent === undefined || parent === null) return true;
  return oldest['timestamp-ms'] <= since - CLOCK_MARGIN_MS;
}

/**
 * What became of a roll intent: `committed` when its snapshot is on main, or its manifest is
 * still listed by the head (the snapshot itself expired); `abandoned` when the history kept
 * covers the time since the intent and the snapshot is not in it; otherwise `unresolved`.
 */
export function judgeIntent(metadata: TableMetadata, intent: Pick<RollIntent, 'snapshot_id' | 'created_at'>, headAddedBy: ReadonlySet<bigint>): IntentVerdict {
  if (intent.snapshot_id === null) return 'abandoned';
  const id = BigInt(intent.snapshot_id);
  if (isInAncestry(metadata, id) || headAddedBy.has(id)) return 'committed';
  return historyCovers(metadata, Date.parse(intent.created_at)) ? 'abandoned' : 'unresolved';
}

/** A commit whose batches must be out of the intake before anything new is committed. */
interface Consumed {
  snapshotId: bigint;
  batchIds: readonly string[];
  /** Objects stored after this (store clock) are new batches under a reused id. */
  notAfter: number;
  intent: RollIntent | undefined;
  counts: BatchCount[] | undefined;
}

export interface InvariantResult {
  /** The listing without the batches found consumed (now deleted). */
  pending: IntakeObject[];
  /** Intents found committed and reported now. */
  settled: number;
  /** Intents found never committed and closed as failed; their batches are pending again. */
  abandoned: number;
  /** Consumed batches deleted from the intake now. */
  deleted: number;
}

/** The snapshot ids the head's manifest list says added each manifest: survives expiry of the snapshots. */
async function headAddedBy(table: TenantTable): Promise<Set<bigint>> {
  const head = branchHead(table.loaded.metadata);
  if (head === undefined) return new Set();
  try {
    return new Set(readManifestList(await table.io.get(head['manifest-list'])).map((m) => m.added_snapshot_id));
  } catch (error) {
    throw toRollError(error, 'table_storage');
  }
}

/**
 * Step 2, the invariant: batches a committed roll consumed are out of the intake before
 * anything new is committed. The newest snapshot on main naming this sink, and every open
 * roll intent the API recorded, say which batches those are; intents found committed are
 * reported now, intents found never committed are closed as failed (their batches roll
 * again). A delete that fails ends the roll, so a batch is never appended twice; an intent
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

  const consumed: Consumed[] = [];
  const abandoned: RollIntent[] = [];
  const unresolved: RollIntent[] = [];
  let added: Set<bigint> | undefined;
  for (const intent of open) {
    const id = intent.snapshot_id === null ? undefined : BigInt(intent.snapshot_id);
    if (id !== undefined && !isInAncestry(metadata, id)) added ??= await headAddedBy(table);
    const verdict = judgeIntent(metadata, intent, added ?? new Set());
    if (verdict === 'abandoned') abandoned.push(intent);
    else if (verdict === 'unresolved') unresolved.push(intent);
    else {
      const snapshot = snapshotById(metadata, id!);
      const counts = snapshot ? summaryBatchCounts(snapshot.summary) : undefined;
      consumed.push({
        snapshotId: id!,
        batchIds: intent.batch_ids,
        notAfter: (snapshot?.['timestamp-ms'] ?? Date.now()) + CONSUMED_WINDOW_MS,
        intent,
        counts: counts && sameIds(counts, intent.batch_ids) ? counts : undefined,
      });
    }
  }
  const latest = findInAncestry(metadata, SUMMARY_KEYS.id, ctx.sink.id);
  if (latest && !consumed.some((c) => c.snapshotId === latest['snapshot-id'])) {
    consumed.push({
      snapshotId: latest['snapshot-id'],
      batchIds: summaryBatchIds(latest.summary),
      notAfter: latest['timestamp-ms'] + CONSUMED_WINDOW_MS,
      intent: undefined,
      counts: undefined,
    });
  }

  const byId = new Map(listed.map((o) => [o.batchId, o]));
  const doomed = new Set<string>();
  for (const c of consumed) {
    for (const id of c.batchIds) {
      const object = byId.get(id);
      if (object && (object.lastModified?.getTime() ?? 0) <= c.notAfter) doomed.add(object.key);
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
    ctx.log.info({ roll_id: c.intent.roll_id, snapshot_id: c.snapshotId.toString(), batches: c.batchIds.length, counts_known: c.counts !== undefined }, 'settled a roll committed earlier');
  }
  for (const intent of abandoned) {
    await sendReport(ctx, {
      outcome: 'failed',
      rollId: intent.roll_id,
      snapshotId: null,
      batches: [],
      attempts: 0,
      startedAt: new Date(intent.created_at),
      seconds: 0,
      error: `abandoned: snapshot ${intent.snapshot_id} is not on main; its batches roll again`,
    });
    ctx.log.info({ roll_id: intent.roll_id, snapshot_id: intent.snapshot_id, batches: intent.batch_ids.length }, 'closed a roll that never committed');
  }
  if (unresolved.length > 0) {
    const first = unresolved[0]!;
    throw new RollError(
      'intent_unresolved',
      `roll ${first.roll_id} (snapshot ${first.snapshot_id}) is open, but the table's history no longer reaches back to it: ` +
        'check whether its batches are in the table, then close it through the internal API',
    );
  }
  return { pending: listed.filter((o) => !doomed.has(o.key)), settled, abandoned: abandoned.length, deleted: doomed.size };
}

function sameIds(counts: readonly BatchCount[], ids: readonly string[]): boolean {
  return counts.length === ids.length && counts.every((c, i) => c.batch_id === ids[i]);
}
