import { queryOne, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';

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

/** A producer refused for a full backlog should wait about one roller tick and a roll. */
export const BACKLOG_RETRY_AFTER_SECONDS = 30;

/** How long a sink's backlog figures are reused before they are read again. */
const FRESH_MS = 1_000;
/** Past this many sinks the cache starts over, so it cannot grow without bound. */
const MAX_ENTRIES = 10_000;

interface Entry {
  readAt: number;
  batches: number;
  bytes: number;
}

/**
 * The cap on a sink's backlog (batches stored or being stored, not yet rolled), so a dead
 * roller cannot fill the store without bound. Reading the backlog costs a scan of the
 * sink's pending ledger rows, so the figures are read at most once a second per sink and
 * process, and batches this process accepts in between are added as they go. Across API
 * processes the cap can therefore be overrun by what the others accept within a second:
 * it is a safety net, not an exact quota.
 */
export class BacklogGauge {
  private readonly entries = new Map<string, Entry | Promise<Entry>>();

  constructor(
    private readonly db: Queryable,
    readonly limits: Readonly<BacklogLimits>,
  ) {}

  /** Whether the sink's backlog has reached either cap. */
  async isFull(sinkId: string): Promise<boolean> {
    const entry = await this.current(sinkId);
    return entry.batches >= this.limits.maxPendingBatches || entry.bytes >= this.limits.maxPendingBytes;
  }

  /** A batch of `bytes` was accepted for the sink by this process. */
  added(sinkId: string, bytes: number): void {
    const entry = this.entries.get(sinkId);
    if (entry && !(entry instanceof Promise)) {
      entry.batches += 1;
      entry.bytes += bytes;
    }
  }

  private async current(sinkId: string): Promise<Entry> {
    const cached = this.entries.get(sinkId);
    if (cached instanceof Promise) return cached;
    if (cached && Date.now() - cached.readAt < FRESH_MS) return cached;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    // Concurrent requests of one sink share one read.
    const reading = this.read(sinkId);
    this.entries.set(sinkId, reading);
    try {
      const entry = await reading;
      this.entries.set(sinkId, entry);
      return entry;
    } catch (error) {
      this.entries.delete(sinkId);
      throw error;
    }
  }

  private async read(sinkId: string): Promise<Entry> {
    const row = await queryOne<{ batches: number; bytes: string }>(
      this.db,
      `SELECT count(*)::int AS batches, coalesce(sum(bytes), 0)::text AS bytes
         FROM sink_batches WHERE sink_id = $1 AND state IN ('storing', 'pending')`,
      [sinkId],
    );
    return { readAt: Date.now(), batches: row?.batches ?? 0, bytes: Number(row?.bytes ?? 0) };
  }
}

export function backlogFull(sinkId: string, limits: Readonly<BacklogLimits>) {
  return apiError('backlog_full', {
    message: `Sink ${sinkId} has reached its backlog cap (${limits.maxPendingBatches} batches or ${limits.maxPendingBytes} bytes waiting for a roll); retry after Retry-After seconds.`,
    headers: { 'retry-after': String(BACKLOG_RETRY_AFTER_SECONDS) },
    details: { retry_after: BACKLOG_RETRY_AFTER_SECONDS, max_pending_batches: limits.maxPendingBatches, max_pending_bytes: limits.maxPendingBytes },
  });
}
