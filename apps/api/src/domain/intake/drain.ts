import { queryOne, type Queryable } from '@tablemere/db';
import { SinkCache } from './sink-cache.ts';

/** Bounds of a backlog_full refusal's Retry-After, in seconds. */
export const BACKLOG_RETRY_AFTER = Object.freeze({
  min: 1,
  /** However slow the drain, a producer looks again within a minute (a roller back from a stall). */
  max: 60,
  /**
   * A sink with no roll in the window: spread from the minimum to one roller tick (by then a
   * roll may have freed room), with no pause before the first returns.
   */
  unknown: 10,
});

/** The rolls that count for a sink's drain rate: those that closed this recently. */
export const DRAIN_WINDOW_SECONDS = 60;
/** How long a sink's drain rate is reused before it is read again. */
const FRESH_MS = 5_000;

/** What a full backlog looks like to the refusal: its figures and its caps. */
export interface FullBacklog {
  batches: number;
  bytes: number;
  maxPendingBatches: number;
  maxPendingBytes: number;
}

export interface RetryAdvice {
  /** Whole seconds for Retry-After. */
  seconds: number;
  /** Batches/s the sink's rolls consumed over the window; null when none closed in it. */
  drainPerSecond: number | null;
}

interface Entry {
  readAt: number;
  /** Batches per second, 0 when no roll closed in the window. */
  rate: number;
  /** When (epoch ms) the next refused producer of this process is asked back. */
  nextSlot: number;
}

/**
 * Retry-After for a sink whose backlog is full, from how fast its roller drains it. Room
 * appears at the drain rate, so the refused producers are asked back one drain interval
 * apart, as a queue: each refusal takes the next slot after the last one given, no sooner
 * than the backlog is expected back below its cap. A fleet then returns at about the rate
 * the roller makes room, neither all at once nor after the room has sat unused. Slots past
 * the maximum start the queue over; seconds are rounded at random up or down, so producers
 * refused together do not come back together. Each API process keeps its own queue: with
 * several, the fleet returns that many times faster, which costs refusals, never idle room.
 */
export class DrainSchedule {
  private readonly rates: SinkCache<Entry>;

  constructor(private readonly db: Queryable) {
    this.rates = new SinkCache(FRESH_MS, (sinkId, previous) => this.read(sinkId, previous?.nextSlot ?? 0));
  }

  async retryAfter(sinkId: string, backlog: FullBacklog): Promise<RetryAdvice> {
    const entry = await this.rates.get(sinkId);
    if (entry.rate === 0) {
      const seconds = BACKLOG_RETRY_AFTER.min + Math.floor(Math.random() * (BACKLOG_RETRY_AFTER.unknown - BACKLOG_RETRY_AFTER.min + 1));
      return { seconds, drainPerSecond: null };
    }
    const now = Date.now();
    const perBatch = backlog.bytes / Math.max(backlog.batches, 1);
    // Batches to drain before either cap has room for one more.
    const excess = Math.max(backlog.batches - backlog.maxPendingBatches + 1, perBatch > 0 ? (backlog.bytes - backlog.maxPendingBytes + 1) / perBatch : 0, 1);
    const earliest = now + (excess / entry.rate) * 1000;
    let slot = Math.max(earliest, entry.nextSlot);
    if (slot - now > BACKLOG_RETRY_AFTER.max * 1000) slot = earliest;
    entry.nextSlot = slot + 1000 / entry.rate;
    const seconds = Math.floor((slot - now) / 1000 + Math.random());
    return { seconds: Math.min(Math.max(seconds, BACKLOG_RETRY_AFTER.min), BACKLOG_RETRY_AFTER.max), drainPerSecond: entry.rate };
  }

  /**
   * Batches the sink's rolls consumed (committed, or rejected whole: either empties the
   * backlog) over the rolls that closed in the window, per second since the first of them
   * began. Reads roll rows, never the intake ledger.
   */
  private async read(sinkId: string, nextSlot: number): Promise<Entry> {
    const row = await queryOne<{ batches: number; seconds: number | null }>(
      this.db,
      `SELECT coalesce(sum((result->'ledger'->>'committed')::int), 0)::int AS batches,
              extract(epoch FROM now() - min(created_at))::float8 AS seconds
         FROM sink_rolls
        WHERE sink_id = $1 AND state IN ('committed', 'empty')
          AND closed_at > now() - make_interval(secs => $2)
          AND created_at > now() - make_interval(secs => $3)`,
      // A roll's intent is recorded at most a lease (an hour at the longest) before it closes.
      [sinkId, DRAIN_WINDOW_SECONDS, DRAIN_WINDOW_SECONDS + 3600],
    );
    const batches = row?.batches ?? 0;
    const rate = batches > 0 ? batches / Math.max(row?.seconds ?? 0, 1) : 0;
    return { readAt: Date.now(), rate, nextSlot };
  }
}
