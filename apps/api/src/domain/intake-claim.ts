import type { SendResult } from '@tablemere/contracts';
import { prepared, queryOne, type Pool } from '@tablemere/db';
import { ledgerEntry, receivedText, storedAnswer } from './ledger.ts';
import { WriteGroups } from './write-groups.ts';

/**
 * A claim older than this is a leftover of a process that died between claim and answer;
 * a replay takes it over. Longer than any store write can last (connect 5 s + 2 attempts of
 * at most 30 s).
 */
export const STALE_CLAIM_SECONDS = 120;

/** Claims inserted by one statement at most. */
const MAX_GROUP = 500;

export type Claim =
  | { kind: 'claimed'; receivedAt: string }
  | { kind: 'replay'; response: SendResult }
  | { kind: 'conflict' }
  | { kind: 'in_progress' }
  /** The sink was deleted (its key may still be in a process's cache): nothing is accepted. */
  | { kind: 'sink_gone' };

export interface ClaimRequest {
  sinkId: string;
  batchId: string;
  /** SHA-256 of the body as sent: tells a replay from a conflict. */
  digest: Buffer;
  /** Of the NDJSON object: its bytes, its lines, and the elements refused. */
  bytes: number;
  rows: number;
  rejected: number;
}

/**
 * Step 1 of the intake: the ledger row for (sink, batch) as 'storing', or what an earlier
 * row with this id says. New claims, by far the common case, are inserted in groups
 * (write-groups.ts): one statement and one commit for every send that arrived meanwhile.
 * An id already in the ledger is then looked at on its own. Only a live sink gets a claim,
 * whatever the key check before it saw.
 */
export class Claims {
  private readonly inserts: WriteGroups<ClaimRequest, string | undefined>;

  constructor(private readonly pool: Pool) {
    this.inserts = new WriteGroups((requests) => insertClaims(pool, requests), MAX_GROUP);
  }

  async claim(request: ClaimRequest): Promise<Claim> {
    // Twice at most: a row seen in the first round may be gone (released) before the second.
    for (let round = 0; round < 2; round++) {
      const receivedAt = await this.inserts.submit(request);
      if (receivedAt !== undefined) return { kind: 'claimed', receivedAt };
      const existing = await ledgerEntry(this.pool, request.sinkId, request.batchId);
      if (!existing?.live) return { kind: 'sink_gone' };
      if (!existing.body_sha256 || existing.age_seconds === null) continue;
      if (!existing.body_sha256.equals(request.digest)) return { kind: 'conflict' };
      if (existing.state !== 'storing') return { kind: 'replay', response: storedAnswer(existing.response!) };
      if (existing.age_seconds < STALE_CLAIM_SECONDS) return { kind: 'in_progress' };
      return this.takeOver(request, existing.received_text!);
    }
    return { kind: 'in_progress' };
  }

  /** A dead request's claim: take it over, unless another replay just did. */
  private async takeOver(request: ClaimRequest, claimedAt: string): Promise<Claim> {
    const taken = await queryOne<{ received_text: string }>(
      this.pool,
      `UPDATE sink_batches SET received_at = clock_timestamp(), bytes = $4, rows = $5, rejected = $6
        WHERE sink_id = $1 AND batch_id = $2 AND state = 'storing' AND received_at = $3::timestamptz
        RETURNING ${receivedText()} AS received_text`,
      [request.sinkId, request.batchId, claimedAt, request.bytes, request.rows, request.rejected],
    );
    return taken ? { kind: 'claimed', receivedAt: taken.received_text } : { kind: 'in_progress' };
  }
}

/** New claims of live sinks, as 'storing'; an id already in the ledger is left as it is. */
const CLAIM_SQL = `
  INSERT INTO sink_batches (sink_id, batch_id, body_sha256, bytes, rows, rejected, received_at, state)
  SELECT v.sink_id, v.batch_id, v.body_sha256, v.bytes, v.rows, v.rejected, clock_timestamp(), 'storing'
    FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bigint[], $5::int[], $6::int[])
      AS v (sink_id, batch_id, body_sha256, bytes, rows, rejected)
   WHERE EXISTS (SELECT 1 FROM sinks WHERE id = v.sink_id AND deleted_at IS NULL)
  ON CONFLICT (sink_id, batch_id) DO NOTHING
  RETURNING sink_id, batch_id, ${receivedText()} AS received_text`;

/**
 * Inserts the claims whose (sink, batch) is new and whose sink is live; answers each one's
 * received time, or undefined where nothing was inserted. Within one group only the first
 * claim of an id is offered: a second one of the same id sees the first's row afterwards.
 */
async function insertClaims(pool: Pool, requests: ClaimRequest[]): Promise<Array<string | undefined>> {
  const idOf = (r: ClaimRequest) => `${r.sinkId}/${r.batchId}`;
  const firsts = new Map<string, ClaimRequest>();
  for (const request of requests) if (!firsts.has(idOf(request))) firsts.set(idOf(request), request);
  // One order for every group in every process, so two groups never wait on each other's rows.
  const offered = [...firsts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, request]) => request);
  const rows = await prepared<{ sink_id: string; batch_id: string; received_text: string }>(
    pool,
    'intake-claim',
    CLAIM_SQL,
    [
      offered.map((r) => r.sinkId),
      offered.map((r) => r.batchId),
      offered.map((r) => r.digest),
      offered.map((r) => r.bytes),
      offered.map((r) => r.rows),
      offered.map((r) => r.rejected),
    ],
  );
  const inserted = new Map(rows.map((row) => [`${row.sink_id}/${row.batch_id}`, row.received_text]));
  return requests.map((request) => (firsts.get(idOf(request)) === request ? inserted.get(idOf(request)) : undefined));
}
