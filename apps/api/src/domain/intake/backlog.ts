import { queryOne, type Queryable } from '@tablemere/db';
import { apiError, type ApiError } from '../../errors.ts';
import { DRAIN_WINDOW_SECONDS, DrainSchedule } from './drain.ts';
import { SinkCache } from './sink-cache.ts';

export interface BacklogLimits {
  /** Refuse new batches once this many bytes wait for a roll (TABLEMERE_SINK_MAX_PENDING_BYTES). */
  maxPendingBytes: number;
  /** Refuse new batches once this many batches wait (TABLEMERE_SINK_MAX_PENDING_BATCHES). */
  maxPendingBatches: number;
}

export const DEFAULT_BACKLOG_LIMITS: Readonly<BacklogLimits> = Object.freeze({
  maxPendingBytes: 1024 * 1024 * 1024,
  maxPendingBatches: 10_000,
});

/** How long a sink's backlog figures are reused before they are read again. */
const FRESH_MS = 1_000;

interface Entry {
  /** When the read began (epoch ms): batches claimed earlier were counted, as being stored. */
  readAt: number;
  batches: number;
  bytes: number;
  /** The sink's last_roll.at as the figures saw it: a roll since is a changed value. */
  lastRoll: string | null;
}

/**
 * The cap on a sink's backlog (batches stored or being stored, not yet rolled), so a dead
 * roller cannot fill the store without bound. Reading the backlog costs a scan of the
 * sink's pending ledger rows, so the figures are read at most once a second per sink and
 * process, and batches this process accepts in between are added as they go (those checked
 * after the read began, so claimed after it: the others were counted already, as being
 * stored). Across API processes the cap can therefore be overrun by what the others accept
 * within a second: it is a safety net, not an exact quota. A full backlog empties only by a roll, whose report
 * sets the sink's last_roll: while full, each send looks that up (a key lookup) and the
 * figures are read again once it changed, so the room a roll made is taken at once.
 */
export class BacklogGauge {
  private readonly figures: SinkCache<Entry>;
  private readonly drain: DrainSchedule;

  constructor(
    private readonly db: Queryable,
    readonly limits: Readonly<BacklogLimits>,
  ) {
    this.figures = new SinkCache(FRESH_MS, (sinkId) => this.read(sinkId));
    this.drain = new DrainSchedule(db);
  }

  /** Whether the sink's backlog has reached either cap. */
  async isFull(sinkId: string): Promise<boolean> {
    const entry = await this.figures.get(sinkId);
    if (!this.full(entry)) return false;
    const row = await queryOne<{ at: string | null }>(this.db, `SELECT last_roll->>'at' AS at FROM sinks WHERE id = $1`, [sinkId]);
    if ((row?.at ?? null) === entry.lastRoll) return true;
    this.figures.forget(sinkId, entry);
    return this.full(await this.figures.get(sinkId));
  }

  private full(entry: Entry): boolean {
    return entry.batches >= this.limits.maxPendingBatches || entry.bytes >= this.limits.maxPendingBytes;
  }

  /** 429 backlog_full for the sink, its Retry-After from the sink's drain rate (drain.ts). */
  async refusal(sinkId: string): Promise<ApiError> {
    const { batches, bytes } = await this.figures.get(sinkId);
    const { maxPendingBatches, maxPendingBytes } = this.limits;
    const advice = await this.drain.retryAfter(sinkId, { batches, bytes, maxPendingBatches, maxPendingBytes });
    return apiError('backlog_full', {
      message: `Sink ${sinkId} has reached its backlog cap (${maxPendingBatches} batches or ${maxPendingBytes} bytes waiting for a roll); retry after Retry-After seconds.`,
      headers: { 'retry-after': String(advice.seconds) },
      details: {
        retry_after: advice.seconds,
        pending_batches: batches,
        pending_bytes: bytes,
        max_pending_batches: maxPendingBatches,
        max_pending_bytes: maxPendingBytes,
        drain_batches_per_second: advice.drainPerSecond === null ? null : Math.round(advice.drainPerSecond * 100) / 100,
        drain_window_seconds: DRAIN_WINDOW_SECONDS,
      },
    });
  }

  /** A batch of `bytes` was accepted for the sink by this process, its send's isFull answered at `checkedAt` (epoch ms). */
  added(sinkId: string, bytes: number, checkedAt: number): void {
    const entry = this.figures.peek(sinkId);
    if (entry && checkedAt >= entry.readAt) {
      entry.batches += 1;
      entry.bytes += bytes;
    }
  }

  private async read(sinkId: string): Promise<Entry> {
    const readAt = Date.now();
    // One statement, so the figures and last_roll are of one snapshot: a roll the count missed has not set it yet.
    const row = await queryOne<{ batches: number; bytes: string; last_roll: string | null }>(
      this.db,
      `SELECT count(*)::int AS batches, coalesce(sum(bytes), 0)::text AS bytes,
              (SELECT last_roll->>'at' FROM sinks WHERE id = $1) AS last_roll
         FROM sink_batches WHERE sink_id = $1 AND state IN ('storing', 'pending')`,
      [sinkId],
    );
    return { readAt, batches: row?.batches ?? 0, bytes: Number(row?.bytes ?? 0), lastRoll: row?.last_roll ?? null };
  }
}
