import type { SinkStateRequest, SinkStateResult } from '@tablemere/contracts';
import { query, transaction, type Pool } from '@tablemere/db';
import { recordAudit } from './audit.ts';
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
