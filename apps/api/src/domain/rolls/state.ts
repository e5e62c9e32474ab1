import type { RollErrorRequest, RollErrorResult, SinkStateRequest, SinkStateResult } from '@tablemere/contracts';
import { query, transaction, type Pool } from '@tablemere/db';
import { recordAudit } from '../audit.ts';
import { requireLease, requireLiveSink } from './leases.ts';

/**
 * The roller's verdict on a sink's table: `table_missing` when it is gone (the sink stops
 * being due instead of failing every tick), `active` again when it is back. Needs the lease
 * (not taken over); a change is audited as `sink.state`.
 */
export async function setSinkState(pool: Pool, sinkId: string, request: SinkStateRequest): Promise<SinkStateResult> {
  return transaction(pool, async (client) => {
    const sink = await requireLiveSink(client, sinkId, true);
    const { roller_id } = await requireLease(client, sinkId, request.lease_id, false);
    if (sink.state !== request.state) {
      await query(client, 'UPDATE sinks SET state = $2 WHERE id = $1', [sinkId, request.state]);
      await recordAudit(client, {
        projectId: sink.project_id,
        actorKeyId: null,
        event: 'sink.state',
        subject: sinkId,
        details: { from: sink.state, to: request.state, roller_id, ...(request.reason ? { reason: request.reason } : {}) },
      });
    }
    return { sink_id: sinkId, state: request.state, previous_state: sink.state };
  });
}

/**
 * The roller's word after a roll: a failure counts into the sink's run of failures (`since`
 * stays the run's first) and is kept with its reason for the status page's counts (whether or
 * not the roll reached its intent), a good roll ends the run. Needs the lease. A sink entering or
 * leaving the stalled condition is audited as `sink.stalled` / `sink.recovered`.
 */
export async function setRollError(pool: Pool, sinkId: string, request: RollErrorRequest): Promise<RollErrorResult> {
  return transaction(pool, async (client) => {
    const sink = await requireLiveSink(client, sinkId, true);
    const { roller_id } = await requireLease(client, sinkId, request.lease_id, false);
    const [row] = await query<{ before: RollErrorResult['roll_error']; after: RollErrorResult['roll_error'] }>(
      client,
      `WITH old AS (SELECT roll_error FROM sinks WHERE id = $1)
       UPDATE sinks SET roll_error = CASE WHEN $2::text IS NULL THEN NULL ELSE jsonb_build_object(
           'code', $2::text, 'message', $3::text,
           'since', coalesce(old.roll_error->>'since', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
           'last_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'attempts', coalesce((old.roll_error->>'attempts')::int, 0) + 1) END
         FROM old WHERE sinks.id = $1
       RETURNING old.roll_error AS before, sinks.roll_error AS after`,
      [sinkId, request.error?.code ?? null, request.error?.message ?? null],
    );
    const { before, after } = row!;
    if (request.error) await query(client, 'INSERT INTO sink_roll_failures (sink_id, code) VALUES ($1, $2)', [sinkId, request.error.code]);
    if ((before === null) !== (after === null)) {
      await recordAudit(client, {
        projectId: sink.project_id,
        actorKeyId: null,
        event: after === null ? 'sink.recovered' : 'sink.stalled',
        subject: sinkId,
        details: { roller_id, ...(after === null ? { failed_rolls: before?.attempts, since: before?.since } : { code: after.code }) },
      });
    }
    return { sink_id: sinkId, roll_error: after };
  });
}
