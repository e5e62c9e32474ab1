import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SEND_KEY_PATTERN } from '@tablemere/contracts';
import { queryOne, type Queryable } from '@tablemere/db';
import { apiError, type ApiError } from '../errors.ts';

/**
 * Send keys: `al_send_<the sink id's 12 hex>_<32 random bytes, base64url>`. The sink row
 * keeps only the SHA-256 of the whole key; the key is not a principal and opens exactly one
 * route (POST /v1/sinks/{sink_id}) of exactly one sink.
 */

/** A new sink id and its send key. */
export function generateSinkCredentials(): { sinkId: string; sendKey: string } {
  const hex = randomBytes(6).toString('hex');
  return { sinkId: `snk_${hex}`, sendKey: `al_send_${hex}_${randomBytes(32).toString('base64url')}` };
}

export function sendKeyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Whether `presented` is the key whose digest is `stored`; constant-time in the digest. */
export function sendKeyMatches(presented: string, stored: Buffer): boolean {
  return timingSafeEqual(sendKeyDigest(presented), stored);
}

export function isSendKey(token: string): boolean {
  return SEND_KEY_PATTERN.test(token);
}

/**
 * The one answer for a send key that does not open the route's sink: another sink's key, a
 * deleted sink's, a wrong secret. One answer for all, so a key never confirms that another
 * sink exists.
 */
export function sendKeyRefused(): ApiError {
  return apiError('unauthorized', {
    message: 'This send key does not open this sink (wrong sink, deleted sink or wrong key); use the key sink create returned for this sink.',
  });
}

/** What checking a send key needs from the sink row. */
export interface SinkKeyRecord {
  projectId: string;
  /** Whose intake store takes the sink's batches. */
  warehouseId: string;
  digest: Buffer;
}

/** How long a sink's key digest is reused before it is read again. */
const KEY_FRESH_MS = 30_000;
const MAX_KEYS = 10_000;

/**
 * Live sinks' key digests, kept for a while so the send route does not read the sink row on
 * every batch. A sink's key never changes; the only change is the sink's deletion, and the
 * intake checks that itself when it claims a batch (only a live sink gets a claim), so a
 * digest kept here after a delete still lets nothing in. A miss (unknown or deleted sink)
 * is never kept.
 */
export class SendKeyCache {
  private readonly entries = new Map<string, SinkKeyRecord & { readAt: number }>();

  constructor(private readonly db: Queryable) {}

  async lookup(sinkId: string): Promise<SinkKeyRecord | undefined> {
    const cached = this.entries.get(sinkId);
    if (cached && Date.now() - cached.readAt < KEY_FRESH_MS) return cached;
    const row = await queryOne<{ project_id: string; warehouse_id: string; send_key_sha256: Buffer }>(
      this.db,
      'SELECT project_id, warehouse_id, send_key_sha256 FROM sinks WHERE id = $1 AND deleted_at IS NULL',
      [sinkId],
    );
    if (!row) {
      this.entries.delete(sinkId);
      return undefined;
    }
    if (this.entries.size >= MAX_KEYS) this.entries.clear();
    const record = { projectId: row.project_id, warehouseId: row.warehouse_id, digest: row.send_key_sha256, readAt: Date.now() };
    this.entries.set(sinkId, record);
    return record;
  }

  /** Drops a sink this process deleted, so its key is refused before the body is even read. */
  forget(sinkId: string): void {
    this.entries.delete(sinkId);
  }
}
