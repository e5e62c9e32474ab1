import { REPLAY_WINDOW_DAYS, type RollIntent, type RollIntentRequest, type RollsQuery } from '@tablemere/contracts';
import { query, queryOne, transaction, type Pool, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { requireLease, requireLiveSink } from './leases.ts';

export interface RollRow {
  id: string;
  sink_id: string;
  state: RollIntent['state'];
  snapshot_id: string | null;
  batch_ids: string[];
  segment_ids: string[] | null;
  lease_id: string;
  roller_id: string;
  started_at: Date | null;
  report: unknown;
  result: unknown;
  created_at: Date;
  closed_at: Date | null;
}

export function toRollIntent(row: RollRow): RollIntent {
  return {
    roll_id: row.id,
    sink_id: row.sink_id,
    snapshot_id: row.snapshot_id,
    batch_ids: row.batch_ids,
    segment_ids: row.segment_ids ?? [],
    state: row.state,
    roller_id: row.roller_id,
    created_at: row.created_at.toISOString(),
    closed_at: row.closed_at?.toISOString() ?? null,
  };
}

const sameIds = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

export function rollConflict(sinkId: string, existing: RollRow, message: string) {
  return apiError('roll_conflict', { message, details: { sink: sinkId, roll: toRollIntent(existing) } });
}

/**
 * Records what the roller is about to commit, under an unexpired lease. Posting the same
 * intent again (a retry after a lost answer) returns the recorded one; another intent for
 * the same snapshot id is 409 roll_conflict. `created` tells the two apart.
 */
export async function createRollIntent(pool: Pool, sinkId: string, request: RollIntentRequest): Promise<{ intent: RollIntent; created: boolean }> {
  return transaction(pool, async (client) => {
    await requireLiveSink(client, sinkId, true);
    const { roller_id } = await requireLease(client, sinkId, request.lease_id, true);
    const row = await queryOne<RollRow>(
      client,
      `INSERT INTO sink_rolls (sink_id, state, snapshot_id, batch_ids, segment_ids, lease_id, roller_id)
       VALUES ($1, 'open', $2, $3, $4, $5, $6)
       ON CONFLICT (sink_id, snapshot_id) WHERE snapshot_id IS NOT NULL DO NOTHING
       RETURNING *`,
      [sinkId, request.snapshot_id, request.batch_ids, request.segment_ids, request.lease_id, roller_id],
    );
    if (row) return { intent: toRollIntent(row), created: true };
    const existing = (await queryOne<RollRow>(client, 'SELECT * FROM sink_rolls WHERE sink_id = $1 AND snapshot_id = $2', [sinkId, request.snapshot_id]))!;
    if (existing.state !== 'open' || !sameIds(existing.batch_ids, request.batch_ids) || !sameIds(existing.segment_ids ?? [], request.segment_ids)) {
      throw rollConflict(sinkId, existing, `Snapshot ${request.snapshot_id} already has a ${existing.state} roll intent with other batches or state; use a new snapshot id.`);
    }
    return { intent: toRollIntent(existing), created: false };
  });
}

/** The sink's rolls, newest first, optionally only those in `state` (`open`: unfinished intents). */
export async function listRolls(db: Queryable, sinkId: string, options: RollsQuery): Promise<RollIntent[]> {
  await requireLiveSink(db, sinkId);
  const rows = await query<RollRow>(
    db,
    `SELECT * FROM sink_rolls WHERE sink_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY created_at DESC, id LIMIT $3`,
    [sinkId, options.state ?? null, options.limit],
  );
  return rows.map(toRollIntent);
}

/**
 * Deletes rolls closed more than `days` ago, and failed rolls' records as old; open intents stay
 * until a report closes them.
 */
export async function pruneRolls(db: Queryable, days = REPLAY_WINDOW_DAYS): Promise<number> {
  const rows = await query(db, `DELETE FROM sink_rolls WHERE state <> 'open' AND closed_at < now() - make_interval(days => $1) RETURNING 1`, [days]);
  await query(db, 'DELETE FROM sink_roll_failures WHERE failed_at < now() - make_interval(days => $1)', [days]);
  return rows.length;
}
