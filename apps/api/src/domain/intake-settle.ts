import type { SendResult } from '@tablemere/contracts';
import { prepared, type Pool } from '@tablemere/db';
import { countIngestSql } from './usage.ts';
import { WriteGroups } from './write-groups.ts';

/** One batch whose object is stored and whose claim should become pending. */
export interface Settlement {
  sinkId: string;
  projectId: string;
  batchId: string;
  /** The received time the object carries (RFC 3339, microseconds). */
  receivedAt: string;
  response: SendResult;
}

/** Settlements written by one statement at most. */
const MAX_GROUP = 500;

/**
 * Step 3 of the intake, in groups (write-groups.ts). Each settlement's ledger row becomes
 * 'pending' (with the answer kept for replays) in the same transaction that adds it to the
 * month's usage counters. The counters are one row per sink and month, and a row lock is
 * held until commit, so settling batch by batch would serialise every send of a sink on one
 * fsync; a group updates each sink's counters once.
 *
 * The sinks' rows are share-locked and must be live: a delete either waits for the group
 * and then discards its batches, or goes first and the group settles nothing of that sink.
 */
export class Settler {
  private readonly groups: WriteGroups<Settlement, boolean>;

  constructor(pool: Pool) {
    this.groups = new WriteGroups(async (items) => {
      const settled = await settleGroup(pool, items);
      return items.map((item) => settled.has(`${item.sinkId}/${item.batchId}`));
    }, MAX_GROUP);
  }

  /** Resolves true once the batch is pending (committed), false when its claim or sink was gone. */
  settle(item: Settlement): Promise<boolean> {
    return this.groups.submit(item);
  }
}

/** One group: the sinks share-locked and required live, the claims pending, the counters grown. */
const SETTLE_SQL = `
  WITH v AS (
    SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[])
      AS v (sink_id, project_id, batch_id, received_at, response)),
  live AS (
    SELECT id FROM sinks WHERE id IN (SELECT sink_id FROM v) AND deleted_at IS NULL ORDER BY id FOR SHARE),
  settled AS (
    UPDATE sink_batches b SET state = 'pending', received_at = v.received_at, response = v.response
      FROM v
     WHERE b.sink_id = v.sink_id AND b.batch_id = v.batch_id AND b.state = 'storing'
       AND v.sink_id IN (SELECT id FROM live)
     RETURNING b.sink_id, b.batch_id, v.project_id, b.bytes, b.rows, b.rejected, b.received_at),
  counted AS (${countIngestSql('settled')}
    RETURNING 1)
  SELECT sink_id, batch_id FROM settled`;

async function settleGroup(pool: Pool, items: Settlement[]): Promise<Set<string>> {
  const rows = await prepared<{ sink_id: string; batch_id: string }>(
    pool,
    'intake-settle',
    SETTLE_SQL,
    [
      items.map((i) => i.sinkId),
      items.map((i) => i.projectId),
      items.map((i) => i.batchId),
      items.map((i) => i.receivedAt),
      items.map((i) => JSON.stringify(i.response)),
    ],
  );
  return new Set(rows.map((r) => `${r.sink_id}/${r.batch_id}`));
}
