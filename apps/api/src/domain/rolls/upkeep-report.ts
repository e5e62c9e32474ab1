import { REPLAY_WINDOW_DAYS, type SinkUpkeepRun, type UpkeepReport, type UpkeepReportResult } from '@tablemere/contracts';
import { query, queryOne, type Pool, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import { receivedText } from '../intake/ledger.ts';
import { millisText, recordReport } from './reports.ts';

interface UpkeepRow {
  id: string;
  outcome: UpkeepReportResult['outcome'];
  started_text: string;
  recorded_text: string;
}

const RETURNED = `id, outcome, ${receivedText('started_at')} AS started_text, ${millisText('created_at')} AS recorded_text`;

function toResult(sinkId: string, row: UpkeepRow, replayed: boolean): UpkeepReportResult {
  return { upkeep_id: row.id, sink_id: sinkId, outcome: row.outcome, started_at: row.started_text, recorded_at: row.recorded_text, replayed };
}

/** The run as GET /v1/sinks shows it, less `at` (the database's clock, set when recorded). */
function lastRun(report: UpkeepReport): Omit<SinkUpkeepRun, 'at'> {
  return {
    outcome: report.outcome,
    seconds: report.seconds,
    files_before: report.files.data_before,
    files_after: report.files.data_after,
    manifests_before: report.files.manifests_before,
    manifests_after: report.files.manifests_after,
    expired_snapshots: report.expired_snapshots,
    rewritten_bytes: report.rewritten.bytes,
    snapshots_kept: report.snapshots_kept,
    orphan_files_deleted: report.orphan_files.deleted,
    error: report.error ?? null,
  };
}

/**
 * Records the roller's report of one upkeep in one transaction: its row in sink_upkeeps, the
 * sink's last_upkeep (unless a run that started later was recorded already) and an audit event
 * `sink.upkeep`. The lease must not have been taken over. Idempotent on (sink, started_at): the
 * same report again answers its first result with `replayed: true` and changes nothing; another
 * report with that start is 409 upkeep_conflict.
 */
export async function reportUpkeep(pool: Pool, sinkId: string, report: UpkeepReport): Promise<UpkeepReportResult> {
  const { lease_id, started_at, ...figures } = report;
  return recordReport(pool, sinkId, lease_id, async ({ client, projectId, rollerId }) => {
    // jsonb equality ignores key order and compares numbers as numbers, so a retried body matches.
    const earlier = await queryOne<UpkeepRow & { same: boolean }>(
      client,
      `SELECT ${RETURNED}, report = $3::jsonb AS same FROM sink_upkeeps WHERE sink_id = $1 AND started_at = $2`,
      [sinkId, started_at, JSON.stringify(figures)],
    );
    if (earlier?.same) return toResult(sinkId, earlier, true);
    if (earlier) {
      throw apiError('upkeep_conflict', {
        message: `The upkeep started at ${earlier.started_text} was already reported as ${earlier.outcome}, with other figures; a report cannot change it.`,
        details: { sink: sinkId, upkeep: toResult(sinkId, earlier, false) },
      });
    }
    const row = (await queryOne<UpkeepRow>(
      client,
      `INSERT INTO sink_upkeeps (sink_id, lease_id, roller_id, started_at, outcome, report) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${RETURNED}`,
      [sinkId, lease_id, rollerId, started_at, report.outcome, JSON.stringify(figures)],
    ))!;
    // A first report that arrives late, after a later run's, is recorded but is not the last run.
    await query(
      client,
      `UPDATE sinks SET last_upkeep = jsonb_build_object('at', ${millisText('now()')}) || $2::jsonb
        WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM sink_upkeeps WHERE sink_id = $1 AND started_at > $3)`,
      [sinkId, JSON.stringify(lastRun(report)), started_at],
    );
    await recordAudit(client, {
      projectId,
      actorKeyId: null,
      event: 'sink.upkeep',
      subject: sinkId,
      details: { upkeep_id: row.id, roller_id: rollerId, started_at, ...figures },
    });
    return toResult(sinkId, row, false);
  });
}

/** Deletes upkeep runs recorded more than `days` ago; each sink keeps its newest in last_upkeep. */
export async function pruneUpkeeps(db: Queryable, days = REPLAY_WINDOW_DAYS): Promise<number> {
  const rows = await query(db, 'DELETE FROM sink_upkeeps WHERE created_at < now() - make_interval(days => $1) RETURNING 1', [days]);
  return rows.length;
}
