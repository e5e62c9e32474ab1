import type { RollReport, RollReportResult } from '@tablemere/contracts';
import { query, queryOne, type Pool, type PoolClient } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { countIngestSql } from '../usage.ts';
import { recordAudit } from '../audit.ts';
import { millisText, recordReport } from './reports.ts';
import { rollConflict, type RollRow } from './intents.ts';

/** The roll row a report closes: its intent, or one recorded by an earlier identical report. */
async function findRoll(client: PoolClient, sinkId: string, report: RollReport): Promise<RollRow | undefined> {
  if (report.roll_id !== undefined) {
    const row = await queryOne<RollRow>(client, 'SELECT * FROM sink_rolls WHERE id = $1 AND sink_id = $2 FOR UPDATE', [report.roll_id, sinkId]);
    if (!row) throw apiError('roll_not_found', { details: { sink: sinkId, roll_id: report.roll_id } });
    return row;
  }
  if (report.snapshot_id !== null) {
    return queryOne<RollRow>(client, 'SELECT * FROM sink_rolls WHERE sink_id = $1 AND snapshot_id = $2 FOR UPDATE', [sinkId, report.snapshot_id]);
  }
  return queryOne<RollRow>(client, 'SELECT * FROM sink_rolls WHERE sink_id = $1 AND started_at = $2 FOR UPDATE', [sinkId, report.started_at]);
}

/** A report must say what its open intent said: the same snapshot, only batches it named. */
function checkAgainstIntent(sinkId: string, intent: RollRow, report: RollReport): void {
  if (report.outcome === 'committed' && intent.snapshot_id !== report.snapshot_id) {
    throw rollConflict(sinkId, intent, `The intent was for snapshot ${intent.snapshot_id}; the report names ${report.snapshot_id}.`);
  }
  const named = new Set(intent.batch_ids);
  const strangers = report.batches.filter((b) => !named.has(b.batch_id)).map((b) => b.batch_id);
  if (strangers.length > 0) {
    throw rollConflict(sinkId, intent, `The report names batches the intent did not: ${strangers.slice(0, 5).join(', ')}.`);
  }
}

interface LedgerEffect {
  committed: number;
  alreadyCommitted: number;
  rejectedRows: number;
  batchesWithRejects: number;
}

/**
 * Moves the consumed batches' ledger rows to committed. Only pending and storing rows move, so
 * whatever a row says now, counting what moved is exact and a second report moves nothing.
 * A storing row is a batch whose object landed but whose request never settled (a client that
 * timed out, an API that died): the roll consumed it all the same, and left storing, a replay
 * of its id would be taken as a crashed claim and stored again. Its replays get the answer its
 * request would have had (answers are rebuilt from the claim's columns, the refused elements'
 * positions included), and, since only a settle counts a batch, it is added to its month's
 * ingest counters here.
 * No settle can run meanwhile: it share-locks the sink row this transaction holds for update.
 */
async function settleLedger(client: PoolClient, sinkId: string, projectId: string, report: RollReport): Promise<LedgerEffect> {
  const ids = report.batches.map((b) => b.batch_id);
  // Thousands of ids against a partition whose statistics still say it is nearly empty (a busy
  // sink's new day): a nested loop over the sink's open rows for each id took seconds per report
  // (research/49). Hash joins cost one pass whatever the statistics say; this transaction only.
  await query(client, 'SET LOCAL enable_nestloop = off');
  const moved = await query<{ rejected_rows: number }>(
    client,
    `WITH v AS (SELECT * FROM unnest($3::text[], $4::int[]) AS v (batch_id, rejected_rows)),
     moving AS (
       SELECT v.batch_id, m.was FROM v CROSS JOIN LATERAL (
         SELECT b.state AS was FROM sink_batches b WHERE b.sink_id = $1 AND b.batch_id = v.batch_id AND b.state IN ('pending', 'storing')) m),
     moved AS (
       UPDATE sink_batches b
       SET state = 'committed', snapshot_id = $2, committed_at = now(), rejected_rows = v.rejected_rows
       FROM v JOIN moving m USING (batch_id)
       WHERE b.sink_id = $1 AND b.batch_id = v.batch_id AND b.state IN ('pending', 'storing')
       RETURNING $5::uuid AS project_id, b.sink_id, m.was, v.rejected_rows, b.bytes, b.rows, b.rejected, b.received_at),
     -- Counted by its roll, a batch whose answer was lost has no wire figure: its stored bytes stand in.
     never_settled AS (SELECT *, bytes AS wire_bytes FROM moved WHERE was = 'storing'),
     counted AS (${countIngestSql('never_settled')}
       RETURNING 1)
     SELECT rejected_rows FROM moved`,
    [sinkId, report.snapshot_id, ids, report.batches.map((b) => b.rejected_rows), projectId],
  );
  const already = await queryOne<{ count: number }>(
    client,
    `SELECT count(*)::int AS count FROM sink_batches WHERE sink_id = $1 AND batch_id = ANY($2::text[]) AND state = 'committed'`,
    [sinkId, ids],
  );
  return {
    committed: moved.length,
    alreadyCommitted: already!.count - moved.length,
    rejectedRows: moved.reduce((sum, row) => sum + row.rejected_rows, 0),
    batchesWithRejects: moved.filter((row) => row.rejected_rows > 0).length,
  };
}

/**
 * Records the roller's report in one transaction: the ledger rows committed, the intent
 * closed, the sink's last_roll and rejects figures, the month's rejected rows in usage, and
 * an audit event `sink.roll`. The lease must not have been taken over. Idempotent: a roll
 * already reported answers its first result with `replayed: true` and changes nothing; a
 * different report for it is 409 roll_conflict.
 */
export async function reportRoll(pool: Pool, sinkId: string, report: RollReport): Promise<RollReportResult> {
  return recordReport(pool, sinkId, report.lease_id, async ({ client, projectId, rollerId }) => {
    let roll = await findRoll(client, sinkId, report);
    if (roll && roll.state !== 'open') {
      const first = roll.result as RollReportResult;
      if (first.outcome === report.outcome && first.snapshot_id === report.snapshot_id) return { ...first, replayed: true };
      throw rollConflict(sinkId, roll, `This roll was already reported as ${roll.state}; a report cannot change it.`);
    }
    if (roll) checkAgainstIntent(sinkId, roll, report);
    roll ??= (await queryOne<RollRow>(
      client,
      `INSERT INTO sink_rolls (sink_id, state, snapshot_id, batch_ids, lease_id, roller_id) VALUES ($1, 'open', $2, $3, $4, $5) RETURNING *`,
      [sinkId, report.snapshot_id, report.batches.map((b) => b.batch_id), report.lease_id, rollerId],
    ))!;

    const effect = report.outcome === 'failed' ? { committed: 0, alreadyCommitted: 0, rejectedRows: 0, batchesWithRejects: 0 } : await settleLedger(client, sinkId, projectId, report);
    const result: RollReportResult = {
      roll_id: roll.id,
      sink_id: sinkId,
      outcome: report.outcome,
      snapshot_id: report.snapshot_id,
      ledger: {
        committed: effect.committed,
        already_committed: effect.alreadyCommitted,
        unknown: report.batches.length - effect.committed - effect.alreadyCommitted,
      },
      replayed: false,
    };

    const consumed = report.outcome !== 'failed' && report.batches.length > 0;
    await query(
      client,
      `UPDATE sinks SET
         last_roll = CASE WHEN $2 THEN jsonb_build_object('at', ${millisText('now()')}, 'batches', $3::int, 'rows', $4::bigint, 'rejected_rows', $5::bigint,
                                                        'snapshot_id', $6::text, 'seconds', $7::float8) ELSE last_roll END,
         rejects_rows_total = rejects_rows_total + $8,
         rejects_batches = rejects_batches + $9,
         rejects_last_at = CASE WHEN $8 > 0 THEN now() ELSE rejects_last_at END
       WHERE id = $1`,
      [sinkId, consumed, report.batches.length, report.rows, report.rejected_rows, report.snapshot_id, report.seconds, effect.rejectedRows, effect.batchesWithRejects],
    );
    if (effect.rejectedRows > 0) {
      await query(
        client,
        `INSERT INTO usage_ingest (project_id, sink_id, month, rows_rejected)
         VALUES ($1, $2, date_trunc('month', now() AT TIME ZONE 'UTC')::date, $3)
         ON CONFLICT (project_id, sink_id, month) DO UPDATE SET rows_rejected = usage_ingest.rows_rejected + EXCLUDED.rows_rejected`,
        [projectId, sinkId, effect.rejectedRows],
      );
    }
    const { replayed: _, ...stored } = result;
    await query(
      client,
      `UPDATE sink_rolls SET state = $2, closed_at = now(), started_at = $3, report = $4, result = $5 WHERE id = $1`,
      [roll.id, report.outcome, report.started_at, JSON.stringify(report), JSON.stringify(stored)],
    );
    await recordAudit(client, {
      projectId,
      actorKeyId: null,
      event: 'sink.roll',
      subject: sinkId,
      details: {
        roll_id: roll.id,
        roller_id: rollerId,
        outcome: report.outcome,
        snapshot_id: report.snapshot_id,
        batches: report.batches.length,
        rows: report.rows,
        rejected_rows: report.rejected_rows,
        seconds: report.seconds,
        attempts: report.attempts,
        started_at: report.started_at,
        ...(report.error ? { error: report.error } : {}),
      },
    });
    return result;
  });
}
