import type { OperatorStatus, SinkLastDay } from '@tablemere/contracts';
import { query, type Queryable } from '@tablemere/db';
import type { BacklogLimits } from './intake/backlog.ts';
import { listSinks } from './sinks/list.ts';
import type { SinkViewContext } from './sinks/view.ts';

interface LastDayRow extends SinkLastDay {
  sink_id: string;
}

const NO_ROLLS: SinkLastDay = { committed_rolls: 0, failed_rolls: 0, failure_reasons: {}, rejected_rows: 0 };

/**
 * Each sink's rolls of the last 24 hours, in one grouped query: committed rolls and their
 * rejected rows from the roll records (the sink_rolls_by_sink index), failed rolls by reason from
 * the failures the rollers reported (sink_roll_failures_by_sink), whether or not they reached
 * their intent.
 */
async function lastDayOf(db: Queryable, sinkIds: string[]): Promise<Map<string, SinkLastDay>> {
  const rows = await query<LastDayRow>(
    db,
    `WITH committed AS (
       SELECT sink_id, count(*)::int AS committed_rolls, coalesce(sum((report->>'rejected_rows')::bigint), 0)::float8 AS rejected_rows
         FROM sink_rolls WHERE sink_id = ANY($1) AND state = 'committed' AND created_at > now() - interval '1 day' GROUP BY sink_id),
     failed AS (
       SELECT sink_id, sum(n)::int AS failed_rolls, jsonb_object_agg(code, n) AS failure_reasons
         FROM (SELECT sink_id, code, count(*)::int AS n FROM sink_roll_failures
                WHERE sink_id = ANY($1) AND failed_at > now() - interval '1 day' GROUP BY sink_id, code) AS by_code
        GROUP BY sink_id)
     SELECT sink_id, coalesce(c.committed_rolls, 0) AS committed_rolls, coalesce(f.failed_rolls, 0) AS failed_rolls,
            coalesce(f.failure_reasons, '{}'::jsonb) AS failure_reasons, coalesce(c.rejected_rows, 0) AS rejected_rows
       FROM committed c FULL JOIN failed f USING (sink_id)`,
    [sinkIds],
  );
  return new Map(rows.map(({ sink_id, ...figures }) => [sink_id, figures]));
}

/** What the operator's status page shows: every live sink of the project, as GET /v1/sinks does, with its last day. */
export async function operatorStatus(db: Queryable, context: SinkViewContext, limits: Readonly<BacklogLimits>, projectId: string): Promise<OperatorStatus> {
  const generatedAt = new Date().toISOString();
  const sinks = await listSinks(db, context, projectId, { include_deleted: false, stalled: false });
  const lastDay = await lastDayOf(db, sinks.map((sink) => sink.id));
  return {
    generated_at: generatedAt,
    backlog_limits: { max_pending_bytes: limits.maxPendingBytes, max_pending_batches: limits.maxPendingBatches },
    sinks: sinks.map((sink) => ({ ...sink, last_day: lastDay.get(sink.id) ?? NO_ROLLS })),
  };
}
