import { BatchParams, type BatchStatus } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { batchStatus, findSink } from '../../domain/sinks.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** GET /v1/sinks/{id|name}/batches/{batch_id}: did a batch land? */
export function getBatch(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks/:sink/batches/:batch_id', async (request): Promise<BatchStatus> => {
    const params = parse(BatchParams, request.params, 'params');
    const sink = await findSink(deps.pool, principalOf(request).projectId, params.sink);
    return batchStatus(deps.pool, sink, params.batch_id);
  });
}
