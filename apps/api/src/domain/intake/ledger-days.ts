import { REPLAY_WINDOW_DAYS } from '@tablemere/contracts';
import { isPgError, query, queryOne, transaction, type Pool, type PoolClient } from '@tablemere/db';

/**
 * The ledger's days: `sink_batches` has one partition per ledger day (migrations/0012_ledger_days.sql).
 * Maintenance creates the coming days' partitions ahead, moves new claims to today, and prunes:
 * a day whose batches all settled more than the replay window ago is dropped whole; a day
 * still holding a batch that waits (a stalled sink) is kept, and only its old settled rows
 * are deleted, as the whole ledger's were before it was partitioned.
 */

/** Partitions exist this many days ahead of today, so a late maintenance run never finds a day missing. */
const DAYS_AHEAD = 2;

/** How long a day change or a drop waits for the ledger's lock before it gives up until the next run. */
const LOCK_TIMEOUT = '2s';

/** SQLSTATE lock_not_available: a lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Heap pages of a kept day visited per delete statement, so pruning it never holds long locks. */
const PRUNE_PAGES = 1_000;

/** The UTC date, as Postgres writes it. */
const TODAY_SQL = `(now() AT TIME ZONE 'UTC')::date`;

/**
 * Creates the partitions of `day` (default today, UTC) and the days after it, then moves new
 * claims to `day` if they go to an earlier one. The move locks sink_ledger_today: it waits for
 * the claims in flight and new claims wait for it, which is what keeps a batch id unique across
 * days. Answers the day claims go to afterwards.
 */
export async function advanceLedgerDay(pool: Pool, day?: string): Promise<string> {
  const target = day ?? (await queryOne<{ day: string }>(pool, `SELECT ${TODAY_SQL}::text AS day`))!.day;
  await query(pool, 'SELECT sink_ledger_add_day($1::date + n) FROM generate_series(0, $2::int) AS n', [target, DAYS_AHEAD]);
  const current = (await queryOne<{ day: string }>(pool, 'SELECT day::text AS day FROM sink_ledger_today'))!.day;
  if (current >= target) return current;
  const moved = await underLockTimeout(pool, async (client) => {
    await query(client, 'LOCK TABLE sink_ledger_today IN ACCESS EXCLUSIVE MODE');
    return (await queryOne<{ day: string }>(client, 'UPDATE sink_ledger_today SET day = greatest(day, $1::date) RETURNING day::text AS day', [target]))!.day;
  });
  return moved ?? current;
}

/** Runs `work` in a transaction whose locks wait LOCK_TIMEOUT at most; undefined when one did not come (the next run tries again). */
async function underLockTimeout<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T | undefined> {
  try {
    return await transaction(pool, async (client) => {
      await query(client, `SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      return work(client);
    });
  } catch (error) {
    if (isPgError(error, LOCK_NOT_AVAILABLE)) return undefined;
    throw error;
  }
}

export interface LedgerPrune {
  /** Settled rows deleted from days that were kept. */
  batches: number;
  /** Days dropped whole. */
  days_dropped: number;
  /** Days past the window kept for a batch still waiting. */
  days_kept: number;
}

/**
 * Prunes the ledger to its replay window of `windowDays` after each batch settled (a batch id
 * replayed after that is accepted again). Never loses a batch that waits: a day is dropped
 * only when it had no batch storing or pending for `windowDays`.
 */
export async function pruneLedgerDays(pool: Pool, windowDays: number): Promise<LedgerPrune> {
  // A day before the claims' day cannot gain rows, so once nothing in it waits, nothing in it
  // settles later either: its quiet_since bounds every settlement in it.
  await query(
    pool,
    `UPDATE sink_ledger_days d SET quiet_since = clock_timestamp()
      WHERE quiet_since IS NULL AND day < (SELECT day FROM sink_ledger_today)
        AND NOT EXISTS (SELECT 1 FROM sink_batches b WHERE b.ledger_day = d.day AND b.state IN ('storing', 'pending'))`,
  );
  const quiet = await query<{ day: string }>(
    pool,
    `SELECT day::text AS day FROM sink_ledger_days WHERE quiet_since < now() - make_interval(days => $1) ORDER BY day`,
    [windowDays],
  );
  let dropped = 0;
  for (const { day } of quiet) {
    // Dropping a partition locks the whole ledger for a moment: claims wait, LOCK_TIMEOUT at most.
    if (await underLockTimeout(pool, (client) => query(client, 'SELECT sink_ledger_drop_day($1)', [day]))) dropped++;
  }
  // Days past the window still holding a batch that waits: only their old settled rows go.
  const kept = await query<{ day: string; pages: string }>(
    pool,
    `SELECT day::text AS day, pg_relation_size(format('sink_batches_%s', to_char(day, 'YYYYMMDD'))::regclass) / current_setting('block_size')::int AS pages
       FROM sink_ledger_days WHERE quiet_since IS NULL AND day < ${TODAY_SQL} - $1::int ORDER BY day`,
    [windowDays],
  );
  let batches = 0;
  for (const { day, pages } of kept) {
    // By ranges of heap pages: each statement reads its own pages once, so a large day costs one pass.
    for (let page = 0; page < Number(pages); page += PRUNE_PAGES) {
      const deleted = await pool.query(
        `DELETE FROM sink_batches
          WHERE ledger_day = $1 AND ctid >= format('(%s,0)', $2::int)::tid AND ctid < format('(%s,0)', $2::int + $3::int)::tid
            AND state IN ('committed', 'discarded') AND coalesce(committed_at, discarded_at) < now() - make_interval(days => $4)`,
        [day, page, PRUNE_PAGES, windowDays],
      );
      batches += deleted.rowCount ?? 0;
    }
  }
  return { batches, days_dropped: dropped, days_kept: kept.length };
}

/** The ledger's daily upkeep: the coming days' partitions, new claims moved to today, and the days past the replay window pruned. */
export async function pruneLedger(pool: Pool, days = REPLAY_WINDOW_DAYS): Promise<LedgerPrune & { day: string }> {
  const day = await advanceLedgerDay(pool);
  return { day, ...(await pruneLedgerDays(pool, days)) };
}
