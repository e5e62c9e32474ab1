import type { DueReason, InternalSink } from '@tablemere/contracts';

/**
 * The roll policy. A sink with pending batches is due when any rule holds: its oldest batch
 * has waited roll_seconds, the pending bytes reach roll_bytes, the pending batches reach the
 * fixed cap (1,000), or, with inactivity_seconds set, nothing new arrived for that long.
 *
 * The API answers `?due=true` with the same rules evaluated in Postgres from the intake
 * ledger, so idle sinks cost neither a store listing nor a row scan; the roller applies this
 * function to what it was given, against the listing's own clock (`as_of`).
 */
export function dueReasons(policy: InternalSink['policy'], pending: InternalSink['pending'], now: Date): DueReason[] {
  if (pending.batches === 0) return [];
  const reasons: DueReason[] = [];
  const waited = (since: string | null, seconds: number) => since !== null && now.getTime() - Date.parse(since) >= seconds * 1000;
  if (waited(pending.oldest_received_at, policy.roll_seconds)) reasons.push('roll_seconds');
  if (pending.bytes >= policy.roll_bytes) reasons.push('roll_bytes');
  if (pending.batches >= policy.max_batches) reasons.push('max_batches');
  if (policy.inactivity_seconds !== null && waited(pending.newest_received_at, policy.inactivity_seconds)) reasons.push('inactivity');
  return reasons;
}

export interface Listed {
  key: string;
  size: number;
  lastModified: Date | undefined;
}

/**
 * The batches one roll takes from a listing: oldest first (by the store's time, then key),
 * no more bytes than `maxBytes` — except that a single batch larger than that is still taken
 * on its own, or it would never roll — and at most `maxBatches`, a sanity cap on the ids one
 * roll carries (not the 1,000 that make a sink due).
 */
export function selectBatches<T extends Listed>(listed: readonly T[], limits: { maxBatches: number; maxBytes: number }): T[] {
  const ordered = [...listed].sort((a, b) => (a.lastModified?.getTime() ?? 0) - (b.lastModified?.getTime() ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const taken: T[] = [];
  let bytes = 0;
  for (const object of ordered) {
    if (taken.length >= limits.maxBatches) break;
    if (taken.length > 0 && bytes + object.size > limits.maxBytes) break;
    taken.push(object);
    bytes += object.size;
  }
  return taken;
}
