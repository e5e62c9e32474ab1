import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type BatchIds, SEND_KEY_PATTERN, SEND_KEY_PREFIX } from '@tablemere/contracts';
import { queryOne, type Queryable } from '@tablemere/db';
import { apiError, type ApiError } from '../../errors.ts';

/**
 * Send keys: `tm_send_<the sink id's 12 hex>_<32 random bytes, base64url>` (older keys: the
 * deprecated `al_send_`, still accepted). The sink row
 * keeps only the SHA-256 of the whole key (and, for a while after a rotation, of the key
 * before it); the key is not a principal and opens exactly one route (POST
 * /v1/sinks/{sink_id}) of exactly one sink.
 */

/** A new send key for the sink `sinkId` (`snk_<hex>`). */
export function generateSendKey(sinkId: string): string {
  return `${SEND_KEY_PREFIX}${sinkId.slice('snk_'.length)}_${randomBytes(32).toString('base64url')}`;
}

/** A new sink id and its send key. */
export function generateSinkCredentials(): { sinkId: string; sendKey: string } {
  const sinkId = `snk_${randomBytes(6).toString('hex')}`;
  return { sinkId, sendKey: generateSendKey(sinkId) };
}

export function sendKeyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function isSendKey(token: string): boolean {
  return SEND_KEY_PATTERN.test(token);
}

/**
 * The one answer for a send key that does not open the route's sink: another sink's key, a
 * deleted sink's, a wrong secret, an old key past its overlap. One answer for all, so a key
 * never confirms that another sink exists (nor that it once was this sink's).
 */
export function sendKeyRefused(): ApiError {
  return apiError('unauthorized', {
    message: 'This send key does not open this sink (wrong sink, deleted sink, wrong key, or an old key past its rotation\'s overlap); use the key sink create or the newest rotation returned.',
  });
}

/** What checking a send key needs from the sink row. */
export interface SinkKeyRecord {
  projectId: string;
  /** Whose intake store takes the sink's batches. */
  warehouseId: string;
  /** The sink's linger_ms (segments.ts). */
  lingerMs: number;
  /** How the sink names a send without an Idempotency-Key (the send route). */
  batchIds: BatchIds;
  digest: Buffer;
  /** The key before the newest rotation while its overlap lasts: its digest and when it stops, on this process's clock. */
  previous: { digest: Buffer; stopsAt: number } | null;
}

/** Whether `digest` is the sink's key, or its old key before the overlap's end; constant-time in the digests. */
function opens(record: SinkKeyRecord, digest: Buffer): boolean {
  const current = timingSafeEqual(digest, record.digest);
  const previous = record.previous !== null && Date.now() < record.previous.stopsAt && timingSafeEqual(digest, record.previous.digest);
  return current || previous;
}

/** How long a sink's key digests are reused before they are read again. */
const KEY_FRESH_MS = 30_000;
const MAX_KEYS = 10_000;

/**
 * Live sinks' key digests, kept for a while so the send route does not read the sink row on
 * every batch. What holds across API processes, where a change is made in one and others
 * hold their copy:
 * - an old key stops at the end of its overlap in every process to the millisecond: the copy
 *   carries the moment (taken as time left by the database's clock, so no clock skew moves it);
 * - a new key works at once everywhere: a key the copy does not open is checked against the
 *   row again before it is refused (as an unknown sink's is, every time);
 * - an old key stopped early (a rotation with `finish` or an overlap of 0) stops at once in
 *   the process that did it (`forget`) and within KEY_FRESH_MS in the others;
 * - a deleted sink's keys let nothing in anywhere, whatever a copy says: the intake checks the
 *   sink is live when it claims a batch.
 * A miss (unknown or deleted sink) is never kept.
 */
export class SendKeyCache {
  private readonly entries = new Map<string, SinkKeyRecord & { readAt: number }>();

  constructor(private readonly db: Queryable) {}

  /** The sink `key` opens, or undefined: an unknown or deleted sink, a wrong key, an old key past its overlap. */
  async open(sinkId: string, key: string): Promise<SinkKeyRecord | undefined> {
    const digest = sendKeyDigest(key);
    const cached = this.entries.get(sinkId);
    if (cached && Date.now() - cached.readAt < KEY_FRESH_MS && opens(cached, digest)) return cached;
    const record = await this.read(sinkId);
    return record && opens(record, digest) ? record : undefined;
  }

  private async read(sinkId: string): Promise<SinkKeyRecord | undefined> {
    const askedAt = Date.now();
    const row = await queryOne<{ project_id: string; warehouse_id: string; linger_ms: number; batch_ids: BatchIds; send_key_sha256: Buffer; previous_key_sha256: Buffer | null; previous_ms_left: number | null }>(
      this.db,
      `SELECT project_id, warehouse_id, linger_ms, batch_ids, send_key_sha256, previous_key_sha256,
              (extract(epoch FROM previous_key_stops_at - now()) * 1000)::float8 AS previous_ms_left
         FROM sinks WHERE id = $1 AND deleted_at IS NULL`,
      [sinkId],
    );
    if (!row) {
      this.entries.delete(sinkId);
      return undefined;
    }
    if (this.entries.size >= MAX_KEYS) this.entries.clear();
    // Counted from before the question, so the copy's old key never outlives the row's.
    const previous =
      row.previous_key_sha256 !== null && row.previous_ms_left !== null && row.previous_ms_left > 0
        ? { digest: row.previous_key_sha256, stopsAt: askedAt + row.previous_ms_left }
        : null;
    const record = { projectId: row.project_id, warehouseId: row.warehouse_id, lingerMs: row.linger_ms, batchIds: row.batch_ids, digest: row.send_key_sha256, previous, readAt: Date.now() };
    this.entries.set(sinkId, record);
    return record;
  }

  /** Drops a sink this process deleted or rotated, so a stopped key is refused before the body is even read. */
  forget(sinkId: string): void {
    this.entries.delete(sinkId);
  }
}
