import { queryOne, type Pool } from '@tablemere/db';
import type { ClaimRequest, LedgerWrites } from './writes.ts';
import { sameBody } from './body-digest.ts';
import { ledgerEntry, receivedText, storedAnswer, type AnswerColumns, type StoredAnswer } from './ledger.ts';

/**
 * A claim older than this is a leftover of a process that died between claim and answer (or
 * whose write's outcome it could not tell); a replay takes it over. Longer than any store write
 * can last (connect 5 s + 2 attempts of at most 30 s), so the write it claimed for has landed
 * by then or never will.
 */
export const STALE_CLAIM_SECONDS = 120;

/**
 * Whether the batch of a stale claim is in the store where its row says it was being written:
 * undefined when not, else the received time the stored batch carries (undefined inside it when
 * that is the row's own, as a segment's header is).
 */
export type StoredCheck = (claim: { batchId: string; segmentId: string | null }) => Promise<{ receivedAt: string | undefined } | undefined>;

export type Claim =
  | { kind: 'claimed'; receivedAt: string; day: string }
  /**
   * A stale claim whose write did land (in `segmentId`, or as a batch object when null): the
   * batch is durable and is settled where it is, never written a second time.
   */
  | { kind: 'stored'; receivedAt: string; day: string; segmentId: string | null }
  | { kind: 'replay'; response: StoredAnswer }
  | { kind: 'conflict' }
  | { kind: 'in_progress' }
  /** The id's row holds a SHA-256 (before migration 0018) and the send was not hashed so. */
  | { kind: 'unknown' }
  /** The sink was deleted (its key may still be in a process's cache): nothing is accepted. */
  | { kind: 'sink_gone' };

/**
 * Step 1 of the intake: the ledger row for (sink, batch) as 'storing', or what an earlier
 * row with this id says. New claims, by far the common case, are inserted in groups, together
 * with the settlements that arrived meanwhile (writes.ts).
 * An id already in the ledger is then looked at on its own. Only a live sink gets a claim,
 * whatever the key check before it saw.
 */
export class Claims {
  constructor(
    private readonly pool: Pool,
    private readonly writes: LedgerWrites,
    /** STALE_CLAIM_SECONDS, shorter only where a test makes a process die on purpose. */
    private readonly staleSeconds = STALE_CLAIM_SECONDS,
  ) {}

  async claim(request: ClaimRequest, stored: StoredCheck): Promise<Claim> {
    // Twice at most: a row seen in the first round may be gone (released) before the second.
    for (let round = 0; round < 2; round++) {
      const claimed = await this.writes.claim(request);
      if (claimed !== undefined) return { kind: 'claimed', ...claimed };
      const existing = await ledgerEntry(this.pool, request.sinkId, request.batchId);
      if (!existing?.live) return { kind: 'sink_gone' };
      if (!existing.body_digest || existing.age_seconds === null) continue;
      const same = sameBody(existing.body_digest, request.hashes);
      if (same === 'unknown') return { kind: 'unknown' };
      if (!same) return { kind: 'conflict' };
      if (existing.state !== 'storing') return { kind: 'replay', response: storedAnswer(existing as AnswerColumns) };
      if (existing.age_seconds < this.staleSeconds) return { kind: 'in_progress' };
      const found = await stored({ batchId: request.batchId, segmentId: existing.segment_id });
      if (found) return { kind: 'stored', receivedAt: found.receivedAt ?? existing.received_text!, day: existing.day!, segmentId: existing.segment_id };
      return this.takeOver(request, existing.day!, existing.received_text!);
    }
    return { kind: 'in_progress' };
  }

  /** A dead request's claim: take it over, unless another replay just did. */
  private async takeOver(request: ClaimRequest, day: string, claimedAt: string): Promise<Claim> {
    const taken = await queryOne<{ received_text: string }>(
      this.pool,
      `UPDATE sink_batches SET received_at = clock_timestamp(), bytes = $5, rows = $6, rejected = $7, reasons = $8, segment_id = $9
        WHERE ledger_day = $1 AND sink_id = $2 AND batch_id = $3 AND state = 'storing' AND received_at = $4::timestamptz
        RETURNING ${receivedText()} AS received_text`,
      [day, request.sinkId, request.batchId, claimedAt, request.bytes, request.rows, request.rejected, request.reasons.length > 0 ? request.reasons : null, request.segmentId],
    );
    return taken ? { kind: 'claimed', receivedAt: taken.received_text, day } : { kind: 'in_progress' };
  }
}
