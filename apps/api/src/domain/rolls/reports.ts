import { queryOne, transaction, type Pool, type PoolClient } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { requireLease } from './leases.ts';

/**
 * What the roller's reports (of a roll, of an upkeep) share: each is recorded in one
 * transaction that holds the sink row, under a lease that was not taken over.
 */

/** SQL for a timestamp as a sink's last_roll and last_upkeep keep it: RFC 3339, UTC, milliseconds. */
export const millisText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export interface ReportScope {
  client: PoolClient;
  projectId: string;
  /** The roller holding the lease the report was made under. */
  rollerId: string;
}

/**
 * Runs `record` in one transaction, with the sink row locked and the report's lease checked:
 * 404 sink_not_found for a sink that never existed, 409 lease_lost when the lease was taken
 * over. The sink row is the per-sink lock for intents and reports, so two reports of one sink
 * never interleave. A sink deleted mid-run still takes the report of what was committed.
 */
export async function recordReport<T>(pool: Pool, sinkId: string, leaseId: string, record: (scope: ReportScope) => Promise<T>): Promise<T> {
  return transaction(pool, async (client) => {
    const sink = await queryOne<{ project_id: string }>(client, 'SELECT project_id FROM sinks WHERE id = $1 FOR UPDATE', [sinkId]);
    if (!sink) throw apiError('sink_not_found', { message: `No sink has id ${sinkId}.`, details: { sink: sinkId } });
    const { roller_id } = await requireLease(client, sinkId, leaseId, false);
    return record({ client, projectId: sink.project_id, rollerId: roller_id });
  });
}
