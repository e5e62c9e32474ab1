import { BatchParams, BatchStatus, REPLAY_WINDOW_DAYS } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { batchStatus } from '../../domain/intake/batch-status.ts';
import { findSink } from '../../domain/sinks/list.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** GET /v1/sinks/{id|name}/batches/{batch_id}: did a batch land? */
export function getBatch(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks/:sink/batches/:batch_id', {
    config: {
      openapi: {
        id: 'getBatch', tag: 'sinks', summary: 'Did a batch land?',
        description: `\`pending\` (stored, waiting for a roll), \`committed\` (in the table: \`snapshot_id\`), \`rejected\` (rolled, every row refused), \`discarded\` (the sink was deleted first), \`unknown\` (never accepted, still being stored, or pruned ${REPLAY_WINDOW_DAYS} days after its roll: send it again under the same id).`,
        params: BatchParams,
        paramDescriptions: { sink: "The sink's id or name", batch_id: 'The Idempotency-Key the batch was sent with' },
        answers: { 200: { description: "The batch's state", schema: BatchStatus } },
        errors: ['sink_not_found'],
      },
    },
  }, async (request): Promise<BatchStatus> => {
    const params = parse(BatchParams, request.params, 'params');
    const sink = await findSink(deps.pool, principalOf(request).projectId, params.sink);
    return batchStatus(deps.pool, sink.id, params.batch_id);
  });
}
