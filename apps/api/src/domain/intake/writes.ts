import { prepared, type Pool } from '@tablemere/db';
import type { BodyHashes } from './body-digest.ts';
import { receivedText } from './ledger.ts';
import { countIngestSql } from '../usage.ts';
import { WriteGroups } from './write-groups.ts';

/** A new batch to claim as 'storing' (step 1 of the intake). */
export interface ClaimRequest {
  sinkId: string;
  batchId: string;
  /** The body's hashes (body-digest.ts): the ledger keeps the digest; they tell a replay from a conflict. */
  hashes: BodyHashes;
  /** Of the NDJSON object: its bytes, its lines, and the elements refused. */
  bytes: number;
  rows: number;
  rejected: number;
  /** Positions of the elements that are not objects (the first SEND_REASONS_LIMIT): the answer's reasons. */
  reasons: number[];
  /** The segment the batch is about to be written to. */
  segmentId: string;
}

/** A claim taken: the received time it wrote and the ledger day (partition) its row is in. */
export interface Claimed {
  receivedAt: string;
  day: string;
}

/** One batch whose object is stored and whose claim should become pending (step 3). */
export interface Settlement {
  sinkId: string;
  projectId: string;
  batchId: string;
  /** The claim's ledger day. */
  day: string;
  /** The received time the object carries (RFC 3339, microseconds). */
  receivedAt: string;
  /** The body's bytes as they came over the wire, for the usage counters. */
  wireBytes: number;
  /**
   * The segment holding the batch (null: a batch object of the one-object-per-batch layout),
   * and where its bytes start there (null when not known: a segment a process died writing).
   */
  segmentId: string | null;
  segmentOffset: number | null;
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
 * A claim inserts the ledger row of a new (sink, batch) of a live sink as 'storing', in the
 * ledger's current day (its partition); an id already in the ledger, on any day, is left as it
 * is and answered undefined (claim.ts looks at it). The day is read under a lock that keeps
 * each id unique across days (migrations/0012_ledger_days.sql). A settlement turns its claim
 * 'pending' (replays rebuild the answer from the row) and adds it to
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
  private readonly groups: WriteGroups<LedgerWrite, Claimed | boolean | undefined>;

  constructor(pool: Pool) {
    this.groups = new WriteGroups((writes) => writeGroup(pool, writes), MAX_GROUP);
  }

  /** The claim taken, or undefined when nothing was inserted (the id is known, or the sink is gone). */
  claim(request: ClaimRequest): Promise<Claimed | undefined> {
    return this.groups.submit({ claim: request }) as Promise<Claimed | undefined>;
  }

  /** Resolves true once the batch is pending (committed), false when its claim or sink was gone. */
  settle(settlement: Settlement): Promise<boolean> {
    return this.groups.submit({ settle: settlement }) as Promise<boolean>;
  }
}

const WRITE_SQL = `
  WITH today AS (SELECT day FROM sink_ledger_today),
  c AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bigint[], $5::int[], $6::int[], $7::text[], $15::text[])
      AS c (sink_id, batch_id, body_digest, bytes, rows, rejected, reasons, segment_id)),
  claimed AS (
    INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, reasons, received_at, state, segment_id)
    SELECT today.day, c.sink_id, c.batch_id, c.body_digest, c.bytes, c.rows, c.rejected, c.reasons::int[], clock_timestamp(), 'storing', c.segment_id
      FROM c CROSS JOIN today
     WHERE EXISTS (SELECT 1 FROM sinks WHERE id = c.sink_id AND deleted_at IS NULL)
       AND NOT EXISTS (SELECT 1 FROM sink_batches b WHERE b.sink_id = c.sink_id AND b.batch_id = c.batch_id)
    ON CONFLICT DO NOTHING
    RETURNING sink_id, batch_id, ledger_day::text AS day, ${receivedText()} AS received_text),
  v AS (
    SELECT * FROM unnest($8::text[], $9::uuid[], $10::text[], $11::timestamptz[], $12::bigint[], $16::text[], $17::bigint[])
      AS v (sink_id, project_id, batch_id, received_at, wire_bytes, segment_id, segment_offset)),
  live AS (
    SELECT id FROM sinks WHERE id IN (SELECT sink_id FROM v) AND deleted_at IS NULL ORDER BY id FOR SHARE),
  settled AS (
    UPDATE sink_batches b SET state = 'pending', received_at = v.received_at, segment_id = v.segment_id, segment_offset = v.segment_offset
      FROM v
     WHERE b.ledger_day BETWEEN $13::date AND $14::date AND b.sink_id = v.sink_id AND b.batch_id = v.batch_id AND b.state = 'storing'
       AND v.sink_id IN (SELECT id FROM live)
     RETURNING b.sink_id, b.batch_id, v.project_id, b.bytes, v.wire_bytes, b.rows, b.rejected, b.received_at),
  counted AS (${countIngestSql('settled')}
    RETURNING 1)
  SELECT true AS claimed, sink_id, batch_id, day, received_text FROM claimed
  UNION ALL
  SELECT false, sink_id, batch_id, NULL, NULL FROM settled`;

/** One group's statement; answers each write in its order. */
async function writeGroup(pool: Pool, writes: LedgerWrite[]): Promise<Array<Claimed | boolean | undefined>> {
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
  const rows = await prepared<{ claimed: boolean; sink_id: string; batch_id: string; day: string | null; received_text: string | null }>(pool, 'intake-write', WRITE_SQL, [
    offered.map((r) => r.sinkId),
    offered.map((r) => r.batchId),
    offered.map((r) => r.hashes.digest),
    offered.map((r) => r.bytes),
    offered.map((r) => r.rows),
    offered.map((r) => r.rejected),
    offered.map((r) => (r.reasons.length > 0 ? `{${r.reasons.join(',')}}` : null)),
    settlements.map((s) => s.sinkId),
    settlements.map((s) => s.projectId),
    settlements.map((s) => s.batchId),
    settlements.map((s) => s.receivedAt),
    settlements.map((s) => s.wireBytes),
    // The settlements' first and last day (almost always today's): the statement then opens
    // only those days' partitions for the update (pruned when it starts), not every day's. The
    // update does not also join on each row's day: a batch id is unique across days already,
    // and a join on the partition key makes Postgres prune again for every settlement row,
    // which crashed Postgres 18.4 under bench:fanin (research/49).
    settlements.reduce<string | null>((min, s) => (min === null || s.day < min ? s.day : min), null),
    settlements.reduce<string | null>((max, s) => (max === null || s.day > max ? s.day : max), null),
    offered.map((r) => r.segmentId),
    settlements.map((s) => s.segmentId),
    settlements.map((s) => s.segmentOffset),
  ]);
  const inserted = new Map<string, Claimed>();
  const settled = new Set<string>();
  for (const row of rows) {
    const id = `${row.sink_id}/${row.batch_id}`;
    if (row.claimed) inserted.set(id, { receivedAt: row.received_text!, day: row.day! });
    else settled.add(id);
  }
  return writes.map(({ claim }, i) => (claim ? (firstClaims.get(ids[i]!) === claim ? inserted.get(ids[i]!) : undefined) : settled.has(ids[i]!)));
}
