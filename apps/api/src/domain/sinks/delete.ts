import type { DeletedSink } from '@tablemere/contracts';
import { query, queryOne, transaction, type Pool } from '@tablemere/db';
import { batchIdOfKey, segmentIdOfKey, sinkPrefix } from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { apiError } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import type { IntakeStores } from '../intake/stores.ts';
import type { Principal } from '../principal.ts';
import { findSink } from './list.ts';
import type { SinkRow } from './view.ts';

export interface DeleteSinkDeps {
  pool: Pool;
  intakes: IntakeStores;
  log: FastifyBaseLogger;
}

/**
 * Deletes a live sink: its keys (a rotation's old key too) stop working when the transaction
 * commits (the send route reads deleted_at), its pending batches become 'discarded', claims
 * still being stored are dropped, then its batch objects are removed from intake. The table
 * is not touched, nor the rejects files (the producer may still read them).
 */
export async function deleteSink(deps: DeleteSinkDeps, principal: Principal, ref: string): Promise<DeletedSink> {
  const target = await findSink(deps.pool, principal.projectId, ref);
  if (target.deleted_at) throw apiError('sink_not_found', { message: `Sink ${ref} is already deleted.`, details: { sink: ref } });
  const { deletedAt, discarded } = await transaction(deps.pool, async (client) => {
    const deleted = await queryOne<{ deleted_at: Date }>(
      client,
      `UPDATE sinks SET state = 'deleted', deleted_at = now(), previous_key_sha256 = NULL, previous_key_stops_at = NULL
        WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at`,
      [target.id],
    );
    if (!deleted) throw apiError('sink_not_found', { message: `Sink ${ref} is already deleted.`, details: { sink: ref } });
    const pending = await query(
      client,
      `UPDATE sink_batches SET state = 'discarded', discarded_at = now() WHERE sink_id = $1 AND state = 'pending' RETURNING 1`,
      [target.id],
    );
    await query(client, `DELETE FROM sink_batches WHERE sink_id = $1 AND state = 'storing'`, [target.id]);
    await recordAudit(client, {
      projectId: principal.projectId,
      actorKeyId: principal.keyId,
      event: 'sink.delete',
      subject: target.id,
      details: { name: target.name, table: `${target.namespace}.${target.table_name}`, pending_batches_discarded: pending.length },
    });
    return { deletedAt: deleted.deleted_at, discarded: pending.length };
  });
  const cleared = await clearIntake(deps, target);
  return {
    id: target.id,
    name: target.name,
    state: 'deleted',
    deleted_at: deletedAt.toISOString(),
    pending_batches_discarded: discarded,
    intake_objects_removed: cleared.removed,
    intake_cleared: cleared.complete,
  };
}

/**
 * Removes a sink's intake objects (segments, and batch objects of the one-object layout). The store's listing is the truth (an object
 * can exist without a pending ledger row after an ambiguous write); rejects stay. A store
 * failure is logged and reported, never thrown: the sink is deleted either way.
 */
async function clearIntake(deps: DeleteSinkDeps, sink: SinkRow): Promise<{ removed: number; complete: boolean }> {
  const sinkId = sink.id;
  let removed = 0;
  try {
    const intake = await deps.intakes.of(sink.warehouse_id);
    for await (const page of intake.list(sinkPrefix(sinkId), { delimiter: '/' })) {
      const keys = page.objects.map((o) => o.key).filter((key) => segmentIdOfKey(sinkId, key) !== undefined || batchIdOfKey(sinkId, key) !== undefined);
      const result = await intake.deleteMany(keys);
      removed += result.deleted.length;
      if (result.failed.length > 0) {
        deps.log.warn({ sink_id: sinkId, failed: result.failed.slice(0, 10) }, 'some intake objects of a deleted sink were not removed');
        return { removed, complete: false };
      }
    }
    return { removed, complete: true };
  } catch (error) {
    deps.log.warn({ sink_id: sinkId, err: error }, 'intake objects of a deleted sink could not be removed');
    return { removed, complete: false };
  }
}
