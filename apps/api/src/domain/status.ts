import type { OperatorStatus, SinkLastDay } from '@tablemere/contracts';
import { query, type Queryable } from '@tablemere/db';
import type { BacklogLimits } from './intake/backlog.ts';
import { listSinks } from './sinks/list.ts';
import type { SinkViewContext } from './sinks/view.ts';

interface LastDayRow extends SinkLastDay {
  sink_id: string;
}

const NO_ROLLS: SinkLastDay = { committed_rolls: 0, failed_rolls: 0, rejected_rows: 0 };

/**
 * Each sink's rolls of the last 24 hours, in one grouped query over the roll records (the
 * sink_rolls_by_sink index); the rejected rows are those the roll reports counted.
 */
async function lastDayOf(db: Queryable, sinkIds: string[]): Promise<Map<string, SinkLastDay>> {
  const rows = await query<LastDayRow>(
    db,
    `SELECT sink_id,
            count(*) FILTER (WHERE state = 'committed')::int AS committed_rolls,
            count(*) FILTER (WHERE state = 'failed')::int AS failed_rolls,
            coalesce(sum((report->>'rejected_rows')::bigint) FILTER (WHERE state = 'committed'), 0)::float8 AS rejected_rows
       FROM sink_rolls WHERE sink_id = ANY($1) AND created_at > now() - interval '1 day' GROUP BY sink_id`,
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
