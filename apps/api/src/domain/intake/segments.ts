import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { query, type Pool } from '@tablemere/db';
import {
  BATCH_METADATA,
  batchKey,
  encodeSegment,
  isStoreError,
  newSegmentId,
  type ObjectStore,
  RECEIVED_STAMP,
  SEGMENT_CONTENT_TYPE,
  SEGMENT_FORMAT,
  SEGMENT_METADATA,
  segmentKey,
} from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { apiError } from '../../errors.ts';
import { type Aftercare, unavailable } from './aftercare.ts';
import type { Claim, Claims, StoredCheck } from './claim.ts';
import { intakeUnavailable, throughDatabase } from './unavailable.ts';
import type { ClaimRequest, LedgerWrites } from './writes.ts';

/**
 * Group commit at the intake (issue 34): the sends to one sink that arrive while that sink's
 * previous segment is being written go together into the next one, one object in one PUT.
 * A send waits for nothing when the sink is idle (it is written alone, at once), unless the
 * sink's `linger_ms` asks for a wait to gather more. Every send is answered once its segment is
 * durable and its ledger row pending. Per segment, in the order that loses nothing:
 *   1. each batch claimed in the ledger as 'storing' in this segment (one grouped statement);
 *   2. one PUT of the segment holding the claimed batches, never over an existing object;
 *   3. each row settled 'pending' with where its bytes are (one grouped statement).
 * A PUT the store refused releases the claims; one whose outcome is unknown leaves them
 * 'storing' in this segment, and a replay of such a claim, once stale, looks in the store:
 * found, the batch is settled where it is; not found, it is written again. So a batch id is in
 * one segment at most, however its writes failed.
 */

/**
 * Most bytes of one segment: the send route's own limit, so a segment holds no more than one
 * large send does (what one request may make the process hold anyway), and a roll, whose bytes
 * are at least 32 MiB, always takes a whole one. A batch alone is never split.
 */
export const SEGMENT_MAX_BYTES = SEND_BODY_LIMIT;
/** Most batches of one segment: its header then stays ~100 KB, read whole before any batch. */
export const SEGMENT_MAX_BATCHES = 1_000;
/**
 * Segments of one sink written at once by one process. More than one only while a full
 * segment's worth waits (large sends), so large sends are not written one after the other.
 */
const SEGMENTS_IN_FLIGHT = 4;
/**
 * How long after a segment of n batches was written a send may wait for the others of its
 * producers to come back, when fewer than n wait: a fleet then keeps one cohort per segment
 * instead of splitting into two that take turns (halving the objects it costs; research/49). A
 * lone producer never waits: its segment held one batch, and its next send makes the one.
 */
const COHORT_WAIT_MS = 5;

/**
 * A test-only fault hook (TABLEMERE_API_CRASH_AT): the process SIGKILLs itself the first time a
 * segment reaches the point, so tests can show a send is safe to die anywhere around its PUT.
 */
export const INTAKE_CRASH_POINTS = [
  /** The segment's batches claimed, its PUT not sent. */
  'before-segment-put',
  /** The segment stored, no batch of it settled. */
  'after-segment-put',
] as const;
export type IntakeCrashPoint = (typeof INTAKE_CRASH_POINTS)[number];

/** A checked batch to store: its claim (without a segment yet) and its NDJSON bytes. */
export interface SegmentItem {
  claim: Omit<ClaimRequest, 'segmentId'>;
  ndjson: Buffer;
  /** For the settlement. */
  projectId: string;
  wireBytes: number;
}

export type Written =
  /** Durable and pending: answer 202 with this received time. */
  | { kind: 'settled'; receivedAt: string }
  /**
   * Durable, but settling changed nothing: the sink was deleted meanwhile, or a replay took the
   * claim over. `key` is the object holding the batch.
   */
  | { kind: 'unsettled'; receivedAt: string; key: string }
  /** The ledger already knew the id (or the sink is gone): nothing was written. */
  | { kind: 'known'; claim: Exclude<Claim, { kind: 'claimed' | 'stored' }> };

/** Where one sink's sends wait for their segment. */
interface SinkQueue {
  sinkId: string;
  store: ObjectStore;
  lingerMs: number;
  waiting: Waiting[];
  bytes: number;
  writing: number;
  timer: NodeJS.Timeout | undefined;
  /** The sink's last segment: how many batches it held, and when its write ended. */
  last: { batches: number; endedAt: number } | undefined;
  /** Drops the queue of a sink gone quiet once its cohort wait is over. */
  idle: NodeJS.Timeout | undefined;
}

interface Waiting {
  item: SegmentItem;
  queuedAt: number;
  resolve: (written: Written) => void;
  reject: (error: unknown) => void;
}

export interface SegmentWriterDeps {
  pool: Pool;
  claims: Claims;
  settler: LedgerWrites;
  /** Settles or releases, once the database is back, the claims an outage left `storing`. */
  aftercare: Aftercare;
  log: FastifyBaseLogger;
  /** Told of every segment written: its batches and bytes (metrics). */
  written?: (batches: number, bytes: number) => void;
  crashAt?: IntakeCrashPoint | null;
}

export class SegmentWriter {
  private readonly queues = new Map<string, SinkQueue>();

  constructor(private readonly deps: SegmentWriterDeps) {}

  /** Stores one batch of the sink in a segment (see above); resolves once it is durable and settled, or known. */
  write(sink: { id: string; lingerMs: number }, store: ObjectStore, item: SegmentItem): Promise<Written> {
    let queue = this.queues.get(sink.id);
    if (!queue) {
      queue = { sinkId: sink.id, store, lingerMs: sink.lingerMs, waiting: [], bytes: 0, writing: 0, timer: undefined, last: undefined, idle: undefined };
      this.queues.set(sink.id, queue);
    }
    // The newest setting wins (a PATCH reaches the key cache within its freshness).
    queue.lingerMs = sink.lingerMs;
    clearTimeout(queue.idle);
    queue.idle = undefined;
    const q = queue;
    return new Promise((resolve, reject) => {
      q.waiting.push({ item, queuedAt: Date.now(), resolve, reject });
      q.bytes += item.ndjson.byteLength;
      this.schedule(q);
    });
  }

  /**
   * Starts the sink's next segment when it is time: at once when nothing is being written (but
   * see COHORT_WAIT_MS and linger_ms), else when a write ends or a full segment waits.
   */
  private schedule(q: SinkQueue): void {
    const now = Date.now();
    if (q.waiting.length === 0) {
      // An idle sink's queue goes once its last write is past the cohort wait.
      if (q.writing > 0 || q.timer !== undefined) return;
      const left = q.last === undefined ? 0 : COHORT_WAIT_MS - (now - q.last.endedAt);
      if (left < 0) this.queues.delete(q.sinkId);
      else q.idle ??= setTimeout(() => {
        q.idle = undefined;
        this.schedule(q);
      }, left + 1).unref();
      return;
    }
    const full = q.bytes >= SEGMENT_MAX_BYTES || q.waiting.length >= SEGMENT_MAX_BATCHES;
    if (q.timer !== undefined) {
      // A full segment's worth does not wait for the linger or the cohort any longer.
      if (!full) return;
      clearTimeout(q.timer);
      q.timer = undefined;
    }
    if (q.writing > 0 && !(full && q.writing < SEGMENTS_IN_FLIGHT)) return;
    const cohort = q.last !== undefined && q.writing === 0 && q.waiting.length < q.last.batches ? COHORT_WAIT_MS - (now - q.last.endedAt) : 0;
    const wait = Math.max(q.lingerMs - (now - q.waiting[0]!.queuedAt), cohort);
    if (wait > 0 && !full) {
      q.timer = setTimeout(() => {
        q.timer = undefined;
        this.schedule(q);
      }, wait);
      return;
    }
    const taken = take(q);
    q.writing++;
    void this.writeSegment(q, taken).finally(() => {
      q.writing--;
      q.last = { batches: taken.length, endedAt: Date.now() };
      this.schedule(q);
    });
    this.schedule(q);
  }

  /** One segment, steps 1-3; answers every waiting send, never throws. */
  private async writeSegment(q: SinkQueue, taken: Waiting[]): Promise<void> {
    const segmentId = newSegmentId();
    const key = segmentKey(q.sinkId, segmentId);
    const stored = storedCheck(q);
    const claims = await Promise.allSettled(taken.map((w) => throughDatabase(() => this.deps.claims.claim({ ...w.item.claim, segmentId }, stored))));
    const claimed: Array<{ w: Waiting; receivedAt: string; day: string }> = [];
    const unclaimed: string[] = [];
    for (const [i, outcome] of claims.entries()) {
      const w = taken[i]!;
      if (outcome.status === 'rejected') {
        // A claim the database did not confirm may still commit: it names this segment, which will never hold its batch.
        if (unavailable(outcome.reason)) unclaimed.push(w.item.claim.batchId);
        w.reject(outcome.reason);
      } else if (outcome.value.kind === 'claimed') claimed.push({ w, receivedAt: outcome.value.receivedAt, day: outcome.value.day });
      else if (outcome.value.kind === 'stored') {
        const { receivedAt, day, segmentId: where } = outcome.value;
        void this.settle(q, w, { day, receivedAt, segmentId: where, offset: null, key: where === null ? batchKey(q.sinkId, w.item.claim.batchId) : segmentKey(q.sinkId, where) });
      } else w.resolve({ kind: 'known', claim: outcome.value });
    }
    if (unclaimed.length > 0) this.releaseLater(q.sinkId, segmentId, unclaimed);
    if (claimed.length === 0) return;

    const segment = encodeSegment(
      q.sinkId,
      segmentId,
      claimed.map(({ w, receivedAt }) => ({ id: w.item.claim.batchId, ndjson: w.item.ndjson, lines: w.item.claim.rows + w.item.claim.rejected, received: receivedAt })),
    );
    this.reached('before-segment-put');
    try {
      await q.store.put(key, segment.parts, {
        contentType: SEGMENT_CONTENT_TYPE,
        metadata: { [SEGMENT_METADATA.format]: SEGMENT_FORMAT, [SEGMENT_METADATA.sink]: q.sinkId, [SEGMENT_METADATA.batches]: String(claimed.length) },
        ifAbsent: true,
      });
    } catch (error) {
      if (!(await this.landedAnyway(q, key, error))) {
        const refusal = await this.failed(q, segmentId, claimed, error);
        for (const { w } of claimed) w.reject(refusal);
        return;
      }
    }
    this.reached('after-segment-put');
    this.deps.written?.(claimed.length, segment.size);
    await Promise.all(claimed.map(({ w, receivedAt, day }, i) => this.settle(q, w, { day, receivedAt, segmentId, offset: segment.objectOffsets[i]!, key })));
  }

  private reached(point: IntakeCrashPoint): void {
    if (this.deps.crashAt === point) process.kill(process.pid, 'SIGKILL');
  }

  /** Step 3 for one batch, and its answer. */
  private async settle(q: SinkQueue, w: Waiting, at: { day: string; receivedAt: string; segmentId: string | null; offset: number | null; key: string }): Promise<void> {
    const { claim, projectId, wireBytes } = w.item;
    const settle = () =>
      this.deps.settler.settle({ sinkId: q.sinkId, projectId, batchId: claim.batchId, day: at.day, receivedAt: at.receivedAt, wireBytes, segmentId: at.segmentId, segmentOffset: at.offset });
    try {
      const settled = await throughDatabase(settle);
      w.resolve(settled ? { kind: 'settled', receivedAt: at.receivedAt } : { kind: 'unsettled', receivedAt: at.receivedAt, key: at.key });
    } catch (error) {
      // The batch is durable: settled as soon as the database answers, so the producer's retry is a replay.
      if (unavailable(error)) this.deps.aftercare.later(`settle ${q.sinkId}/${claim.batchId}`, settle);
      w.reject(error);
    }
  }

  /** Removes, once the database answers, claims naming a segment that will not hold their batches. */
  private releaseLater(sinkId: string, segmentId: string, batchIds: string[]): void {
    this.deps.aftercare.later(`release ${sinkId}/${segmentId}`, () => releaseClaims(this.deps.pool, sinkId, segmentId, batchIds));
  }

  /**
   * A PUT that failed without the store saying it refused (no answer, a reset, a timeout, a
   * 500) may have landed: the store is asked. Found, it is the segment as sent (its id is new).
   */
  private async landedAnyway(q: SinkQueue, key: string, error: unknown): Promise<boolean> {
    if (refused(error)) return false;
    try {
      await q.store.head(key);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The error each send of a segment that was not stored gets. A refusal releases the claims (a
   * send again is a new claim); a write of unknown outcome leaves them to go stale, so that a
   * replay decides from the store whether the segment landed.
   */
  private async failed(q: SinkQueue, segmentId: string, claimed: ReadonlyArray<{ w: Waiting; receivedAt: string; day: string }>, error: unknown): Promise<unknown> {
    if (refused(error)) {
      const batchIds = claimed.map((c) => c.w.item.claim.batchId);
      try {
        await releaseClaims(this.deps.pool, q.sinkId, segmentId, batchIds);
      } catch (releaseError) {
        if (unavailable(releaseError)) this.releaseLater(q.sinkId, segmentId, batchIds);
        else this.deps.log.warn({ err: releaseError, sink_id: q.sinkId, segment: segmentId }, 'could not release the claims of a segment the store refused; they will go stale');
      }
      if (isStoreError(error, 'quota_exceeded')) return apiError('quota_exceeded', { cause: error });
      if (isStoreError(error)) return intakeUnavailable('the store could not take it', error);
      return error;
    }
    this.deps.log.warn({ err: error, sink_id: q.sinkId, segment: segmentId, batches: claimed.length }, 'a segment write ended without an answer; its batches are claimed until a replay finds out whether it landed');
    return intakeUnavailable('the store did not say whether it took the batch');
  }
}

/** Drops the claims of batches that `segmentId` does not hold (it was refused, or never written). */
async function releaseClaims(pool: Pool, sinkId: string, segmentId: string, batchIds: readonly string[]): Promise<void> {
  await query(pool, `DELETE FROM sink_batches WHERE sink_id = $1 AND batch_id = ANY($3::text[]) AND state = 'storing' AND segment_id = $2`, [sinkId, segmentId, batchIds]);
}

/** The sends one segment takes from the front of the queue: whole batches, within the caps. */
function take(q: SinkQueue): Waiting[] {
  const taken: Waiting[] = [];
  let bytes = 0;
  while (q.waiting.length > 0 && taken.length < SEGMENT_MAX_BATCHES) {
    const size = q.waiting[0]!.item.ndjson.byteLength;
    if (taken.length > 0 && bytes + size > SEGMENT_MAX_BYTES) break;
    taken.push(q.waiting.shift()!);
    bytes += size;
  }
  q.bytes -= bytes;
  return taken;
}

/** Whether the store answered that it did not store the object (or the request never left). */
function refused(error: unknown): boolean {
  if (!isStoreError(error)) return false;
  if (error.status !== undefined) return error.status !== 500;
  return (error.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
}

/**
 * Whether a stale claim's batch is where its row says it was being written (claim.ts). A batch
 * object of the one-object layout carries its received time; a segment's is the row's.
 */
function storedCheck(q: SinkQueue): StoredCheck {
  return async ({ batchId, segmentId }) => {
    try {
      if (segmentId !== null) {
        await q.store.head(segmentKey(q.sinkId, segmentId));
        return { receivedAt: undefined };
      }
      const head = await q.store.head(batchKey(q.sinkId, batchId));
      const received = head.metadata[BATCH_METADATA.received];
      return { receivedAt: received !== undefined && RECEIVED_STAMP.test(received) ? received : undefined };
    } catch (error) {
      if (isStoreError(error, 'not_found')) return undefined;
      throw intakeUnavailable('the store could not be asked where an earlier attempt of this batch went', error);
    }
  };
}
