import type { SendResult } from '@tablemere/contracts';
import { prepared, type Pool } from '@tablemere/db';
import { receivedText } from './ledger.ts';
import { countIngestSql } from '../usage.ts';
import { WriteGroups } from './write-groups.ts';

/** A new batch to claim as 'storing' (step 1 of the intake). */
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

/** One batch whose object is stored and whose claim should become pending (step 3). */
export interface Settlement {
  sinkId: string;
  projectId: string;
  batchId: string;
  /** The received time the object carries (RFC 3339, microseconds). */
  receivedAt: string;
  response: SendResult;
  /** The body's bytes as they came over the wire, for the usage counters. */
  wireBytes: number;
}

type LedgerWrite = { claim: ClaimRequest; settle?: never } | { settle: Settlement; claim?: never };

/** Claims and settlements written by one statement at most. */
const MAX_GROUP = 500;

/**
 * The send route's two ledger writes, claims (step 1) and settlements (step 3), grouped
 * (write-groups.ts): the claims and settlements that arrived while the last statement ran go
 * together into the next one, one statement and one commit for both kinds. Postgres spends
 * ~0.4 ms of CPU per such statement whatever it holds and ~0.14 ms per batch (research/36),
 * so at a few sends per group the statements, not the rows, are most of its work.
 *
 * A claim inserts the ledger row of a new (sink, batch) of a live sink as 'storing'; an id
 * already in the ledger is left as it is and answered undefined (claim.ts looks at
 * it). A settlement turns its claim 'pending', keeping the answer for replays, and adds it to
 * the month's usage counters in the same transaction. The counters are one row per sink and
 * month, held locked until commit, so settling batch by batch would serialise every send of
 * a sink on one fsync; a group updates each sink's counters once. The sinks of the
 * settlements are share-locked and must be live: a delete either waits for the group and
 * then discards its batches, or goes first and the group settles nothing of that sink.
 *
 * A claim and a settlement of the same id never meet in one statement to their harm: a
 * settlement's claim was committed by an earlier statement, so a claim of that id in the
 * same statement finds the row and is answered undefined, as it would be a moment later.
 */
export class LedgerWrites {
  private readonly groups: WriteGroups<LedgerWrite, string | boolean | undefined>;

  constructor(pool: Pool) {
    this.groups = new WriteGroups((writes) => writeGroup(pool, writes), MAX_GROUP);
  }

  /** The claim's received time, or undefined when nothing was inserted (the id is known, or the sink is gone). */
  claim(request: ClaimRequest): Promise<string | undefined> {
    return this.groups.submit({ claim: request }) as Promise<string | undefined>;
  }

  /** Resolves true once the batch is pending (committed), false when its claim or sink was gone. */
  settle(settlement: Settlement): Promise<boolean> {
    return this.groups.submit({ settle: settlement }) as Promise<boolean>;
  }
}

const WRITE_SQL = `
  WITH c AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bigint[], $5::int[], $6::int[])
      AS c (sink_id, batch_id, body_sha256, bytes, rows, rejected)),
  claimed AS (
    INSERT INTO sink_batches (sink_id, batch_id, body_sha256, bytes, rows, rejected, received_at, state)
    SELECT c.sink_id, c.batch_id, c.body_sha256, c.bytes, c.rows, c.rejected, clock_timestamp(), 'storing'
      FROM c
     WHERE EXISTS (SELECT 1 FROM sinks WHERE id = c.sink_id AND deleted_at IS NULL)
    ON CONFLICT (sink_id, batch_id) DO NOTHING
    RETURNING sink_id, batch_id, ${receivedText()} AS received_text),
  v AS (
    SELECT * FROM unnest($7::text[], $8::uuid[], $9::text[], $10::timestamptz[], $11::jsonb[], $12::bigint[])
      AS v (sink_id, project_id, batch_id, received_at, response, wire_bytes)),
  live AS (
    SELECT id FROM sinks WHERE id IN (SELECT sink_id FROM v) AND deleted_at IS NULL ORDER BY id FOR SHARE),
  settled AS (
    UPDATE sink_batches b SET state = 'pending', received_at = v.received_at, response = v.response
      FROM v
     WHERE b.sink_id = v.sink_id AND b.batch_id = v.batch_id AND b.state = 'storing'
       AND v.sink_id IN (SELECT id FROM live)
     RETURNING b.sink_id, b.batch_id, v.project_id, b.bytes, v.wire_bytes, b.rows, b.rejected, b.received_at),
  counted AS (${countIngestSql('settled')}
    RETURNING 1)
  SELECT true AS claimed, sink_id, batch_id, received_text FROM claimed
  UNION ALL
  SELECT false, sink_id, batch_id, NULL FROM settled`;

/** One group's statement; answers each write in its order. */
async function writeGroup(pool: Pool, writes: LedgerWrite[]): Promise<Array<string | boolean | undefined>> {
  const ids = writes.map(({ claim, settle }) => {
    const { sinkId, batchId } = claim ?? settle;
    return `${sinkId}/${batchId}`;
  });
  // Within one group only the first claim of an id is offered: a second one of the same id
  // sees the first's row afterwards.
  const firstClaims = new Map<string, ClaimRequest>();
  const settlements: Settlement[] = [];
  for (const [i, write] of writes.entries()) {
    if (write.settle) settlements.push(write.settle);
    else if (!firstClaims.has(ids[i]!)) firstClaims.set(ids[i]!, write.claim);
  }
  // One order for every group in every process, so two groups never wait on each other's rows.
  const offered = [...firstClaims.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, request]) => request);
  const rows = await prepared<{ claimed: boolean; sink_id: string; batch_id: string; received_text: string | null }>(pool, 'intake-write', WRITE_SQL, [
    offered.map((r) => r.sinkId),
    offered.map((r) => r.batchId),
    offered.map((r) => r.digest),
    offered.map((r) => r.bytes),
    offered.map((r) => r.rows),
    offered.map((r) => r.rejected),
    settlements.map((s) => s.sinkId),
    settlements.map((s) => s.projectId),
    settlements.map((s) => s.batchId),
    settlements.map((s) => s.receivedAt),
    settlements.map((s) => JSON.stringify(s.response)),
    settlements.map((s) => s.wireBytes),
  ]);
  const inserted = new Map<string, string>();
  const settled = new Set<string>();
  for (const row of rows) {
    const id = `${row.sink_id}/${row.batch_id}`;
    if (row.claimed) inserted.set(id, row.received_text!);
    else settled.add(id);
  }
  return writes.map(({ claim }, i) => (claim ? (firstClaims.get(ids[i]!) === claim ? inserted.get(ids[i]!) : undefined) : settled.has(ids[i]!)));
}
